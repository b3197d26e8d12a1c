/**
 * Spark's `StreamSuite` (and the stateless parts of `StreamingQuerySuite`) on tributary's
 * micro-batch engine: stateless operators over MemoryStreams, unions of streams, the batch
 * timestamp behind `current_timestamp()`, stream-static joins and the unsupported-operation
 * checks that `start()` runs.
 */
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import { F, MemoryStream, Session } from "../../../mod.ts"
import {
  AddData,
  AdvanceClock,
  AssertOnQuery,
  CheckAnswer,
  CheckLastBatch,
  CheckNewAnswer,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"

const Value = Schema.Struct({ value: Schema.Int })
const Word = Schema.Struct({ word: Schema.String, n: Schema.Int })

const v = (...xs: ReadonlyArray<number>) => xs.map((value) => ({ value }))

const tempDir = (name: string) => join(tmpdir(), `tributary-${name}-${Math.random().toString(36).slice(2)}`)

const removeDir = (dir: string) => Effect.promise(() => rm(dir, { recursive: true, force: true }))

describe("StreamSuite: stateless operators", () => {
  it.effect("map with recovery", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const mapped = input.toDF().map((r) => ({ value: r.value + 1 }), Value)
      yield* testStream(mapped, "append", [
        AddData(input, ...v(1, 2, 3)),
        StartStream(),
        CheckAnswer(...v(2, 3, 4)),
        StopStream,
        AddData(input, ...v(4, 5, 6)),
        StartStream(),
        CheckAnswer(...v(2, 3, 4, 5, 6, 7))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("select, filter and withColumn run per batch", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Word)
      const df = input
        .toDF()
        .filter(F.col("n").geq(2))
        .withColumn("double", F.col("n").multiply(2))
        .select("word", "double")
      yield* testStream(df, "append", [
        AddData(input, { word: "a", n: 1 }, { word: "b", n: 2 }, { word: "c", n: 3 }),
        CheckAnswer({ word: "b", double: 4 }, { word: "c", double: 6 }),
        AddData(input, { word: "d", n: 0 }),
        CheckNewAnswer(),
        AddData(input, { word: "e", n: 5 }),
        CheckNewAnswer({ word: "e", double: 10 }),
        CheckAnswer({ word: "b", double: 4 }, { word: "c", double: 6 }, { word: "e", double: 10 })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a predicate filter over row objects", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      // Spark's StreamSuite "sql queries": the evens of the stream
      const evens = input.toDF().filter((r) => r.value % 2 === 0)
      yield* testStream(evens, "append", [AddData(input, ...v(1, 2, 3, 4)), CheckAnswer(...v(2, 4))])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("flatMap and explode", () =>
    Effect.gen(function* () {
      const Line = Schema.Struct({ line: Schema.String })
      const input = yield* MemoryStream.make(Line)
      const words = input
        .toDF()
        .flatMap((r) => r.line.split(" ").map((word) => ({ word })), Schema.Struct({ word: Schema.String }))
      yield* testStream(words, "append", [
        AddData(input, { line: "a b" }, { line: "c" }),
        CheckAnswer({ word: "a" }, { word: "b" }, { word: "c" }),
        AddData(input, { line: "d d" }),
        CheckLastBatch({ word: "d" }, { word: "d" })
      ])

      const Tags = Schema.Struct({ id: Schema.Int, tags: Schema.Array(Schema.String) })
      const tagged = yield* MemoryStream.make(Tags)
      const exploded = tagged.toDF().select("id", F.explode("tags").as("tag"))
      yield* testStream(exploded, "append", [
        AddData(tagged, { id: 1, tags: ["x", "y"] }, { id: 2, tags: [] }),
        CheckAnswer({ id: 1, tag: "x" }, { id: 1, tag: "y" }),
        AddData(tagged, { id: 3, tags: ["z"] }),
        CheckNewAnswer({ id: 3, tag: "z" })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("union two streams", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(Value)
      const input2 = yield* MemoryStream.make(Value)
      const unioned = input1.toDF().union(input2.toDF())
      yield* testStream(unioned, "append", [
        AddData(input1, ...v(1, 3, 5)),
        CheckAnswer(...v(1, 3, 5)),
        AddData(input2, ...v(2, 4, 6)),
        CheckAnswer(...v(1, 2, 3, 4, 5, 6)),
        StopStream,
        AddData(input1, ...v(7)),
        StartStream(),
        AddData(input2, ...v(8)),
        CheckAnswer(...v(1, 2, 3, 4, 5, 6, 7, 8))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("input rows per source when only one of two sources has data", () =>
    Effect.gen(function* () {
      // StreamingQuerySuite: "input row calculation with trigger having data for only one of two V2 sources"
      const input1 = yield* MemoryStream.make(Value)
      const input2 = yield* MemoryStream.make(Value)
      const lastWithData = (q: {
        recentProgress: () => Effect.Effect<
          ReadonlyArray<{ numInputRows: number; sources: ReadonlyArray<{ numInputRows: number }> }>
        >
      }) => Effect.map(q.recentProgress(), (ps) => ps.filter((p) => p.numInputRows > 0).at(-1))
      yield* testStream(input1.toDF().union(input2.toDF()), "append", [
        AddData(input1, ...v(1, 2, 3)),
        CheckLastBatch(...v(1, 2, 3)),
        AssertOnQuery(
          (q) =>
            Effect.map(
              lastWithData(q),
              (p) =>
                p?.numInputRows === 3 &&
                p.sources.length === 2 &&
                p.sources[0].numInputRows === 3 &&
                p.sources[1].numInputRows === 0
            ),
          "3 rows from the first source"
        ),
        AddData(input2, ...v(4, 5)),
        CheckLastBatch(...v(4, 5)),
        AssertOnQuery(
          (q) =>
            Effect.map(
              lastWithData(q),
              (p) => p?.numInputRows === 2 && p.sources[0].numInputRows === 0 && p.sources[1].numInputRows === 2
            ),
          "2 rows from the second source"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a self-union reads the source twice", () =>
    Effect.gen(function* () {
      // StreamingQuerySuite: "input row calculation with same V2 source used twice in self-union"
      const input = yield* MemoryStream.make(Value)
      yield* testStream(input.toDF().union(input.toDF()), "append", [
        AddData(input, ...v(1, 2, 3)),
        CheckAnswer(...v(1, 1, 2, 2, 3, 3)),
        AssertOnQuery((q) => Effect.map(q.lastProgress(), (p) => p?.sources.length === 1), "one source in progress")
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("StreamSuite: current_timestamp is the batch timestamp", () => {
  it.effect("each batch sees its trigger time", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust("1000 seconds")
      const input = yield* MemoryStream.make(Value)
      const df = input.toDF().withColumn("ts", F.current_timestamp())
      yield* testStream(df, "append", [
        AddData(input, ...v(1)),
        CheckLastBatch({ value: 1, ts: new Date(1_000_000) }),
        AdvanceClock("2 seconds"),
        AddData(input, ...v(2, 3)),
        CheckLastBatch({ value: 2, ts: new Date(1_002_000) }, { value: 3, ts: new Date(1_002_000) })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a re-run of an uncommitted batch reuses the logged timestamp", () =>
    Effect.gen(function* () {
      const dir = tempDir("current-ts")
      const input = yield* MemoryStream.make(Value)
      const df = input.toDF().withColumn("ts", F.current_timestamp())
      const runs: Array<readonly [number, ReadonlyArray<unknown>]> = []
      const start = () =>
        df.writeStream
          .option("checkpointLocation", dir)
          .foreachBatch((batch, batchId) =>
            Effect.map(batch.collect(), (rows) => {
              runs.push([batchId, rows])
            })
          )
          .start()
      yield* TestClock.adjust("5 seconds")
      const q1 = yield* start()
      yield* input.addData(v(1))
      yield* q1.processAllAvailable()
      yield* q1.stop()
      assert.deepStrictEqual(runs, [[0, [{ value: 1, ts: new Date(5000) }]]])
      // Batch 0 ran but, as far as the checkpoint knows, never committed.
      yield* removeDir(join(dir, "commits", "0"))
      yield* TestClock.adjust("1 minute")
      const q2 = yield* start()
      yield* q2.processAllAvailable()
      // The re-run reads the timestamp from offsets/0, not the clock (now 65 s).
      assert.deepStrictEqual(runs[1], [0, [{ value: 1, ts: new Date(5000) }]])
      yield* input.addData(v(2))
      yield* q2.processAllAvailable()
      assert.deepStrictEqual(runs.slice(2), [[1, [{ value: 2, ts: new Date(65_000) }]]])
      yield* q2.stop()
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("StreamSuite: stream-static joins", () => {
  it.effect("inner join with a static table", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const small = spark.createDataFrame(
        [
          { number: 1, word: "one" },
          { number: 2, word: "two" },
          { number: 4, word: "four" }
        ],
        Schema.Struct({ number: Schema.Int, word: Schema.String })
      )
      const input = yield* MemoryStream.make(Value)
      const joined = input.toDF().join(small, F.col("value").eq(F.col("number")))
      yield* testStream(joined, "append", [
        AddData(input, ...v(1, 2, 3)),
        CheckAnswer({ value: 1, number: 1, word: "one" }, { value: 2, number: 2, word: "two" }),
        AddData(input, ...v(4)),
        CheckAnswer(
          { value: 1, number: 1, word: "one" },
          { value: 2, number: 2, word: "two" },
          { value: 4, number: 4, word: "four" }
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("left outer join with the stream on the left", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const small = spark.createDataFrame(
        [
          { value: 1, word: "one" },
          { value: 2, word: "two" }
        ],
        Schema.Struct({ value: Schema.Int, word: Schema.String })
      )
      const input = yield* MemoryStream.make(Value)
      const joined = input.toDF().join(small, "value", "left_outer")
      yield* testStream(joined, "append", [
        AddData(input, ...v(1, 3)),
        CheckAnswer({ value: 1, word: "one" }, { value: 3, word: null }),
        AddData(input, ...v(2)),
        CheckNewAnswer({ value: 2, word: "two" })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect(
    "full outer and left outer with the stream on the right fail start() with the checker's AnalysisError",
    () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const small = spark.createDataFrame([{ value: 1 }], Value)
        const input = yield* MemoryStream.make(Value)
        const stream = input.toDF()
        const full = yield* stream
          .join(small, "value", "full_outer")
          .writeStream.format("noop")
          .start()
          .pipe(Effect.flip)
        assert.strictEqual(full._tag, "AnalysisError")
        assert.strictEqual(
          full.message,
          "FullOuter joins with streaming DataFrames/Datasets on the left and a static DataFrame/Dataset on the right is not supported"
        )
        const leftRight = yield* small
          .join(stream, "value", "left_outer")
          .writeStream.format("noop")
          .start()
          .pipe(Effect.flip)
        assert.strictEqual(leftRight._tag, "AnalysisError")
        assert.strictEqual(
          leftRight.message,
          "LeftOuter join with a streaming DataFrame/Dataset on the right and a static DataFrame/Dataset on the left is not supported"
        )
        assert.deepStrictEqual(yield* spark.streams.active(), [])
      }).pipe(Effect.provide(Session.layer()))
  )
})

describe("StreamSuite: unsupported queries", () => {
  it.effect("a streaming plan cannot run as a batch, a batch plan cannot start, a sort cannot stream", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Value)
      const asBatch = yield* input.toDF().count().pipe(Effect.flip)
      assert.include(asBatch.message, "start")
      const batch = spark.createDataFrame([{ value: 1 }], Value)
      const notStreaming = yield* batch.writeStream.format("noop").start().pipe(Effect.flip)
      assert.strictEqual(notStreaming._tag, "AnalysisError")
      assert.include(notStreaming.message, "writeStream")
      const sorted = yield* input.toDF().sort("value").writeStream.format("noop").start().pipe(Effect.flip)
      assert.strictEqual(sorted._tag, "AnalysisError")
      assert.include(sorted.message, "not supported")
      assert.include(sorted.message, "streaming")
    }).pipe(Effect.provide(Session.layer()))
  )
})
