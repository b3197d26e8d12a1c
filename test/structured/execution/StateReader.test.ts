/**
 * The state data sources (Spark's `StateDataSourceReadSuite` and `StateMetadataSourceSuite`):
 * `spark.read.format("statestore")` over the state of aggregations, windowed aggregations,
 * session windows and deduplications at chosen batches, with both providers; the change feed;
 * `format("state-metadata")`; Spark's option errors; `spark.sql` over state through a temp view;
 * and a checkpoint whose state was written by the other provider.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as T from "../../../core/DataType.ts"
import { F, MemoryStream, Session } from "../../../mod.ts"
import { keyParser } from "../../../structured/physical/stateful/StateReaderSpec.ts"

const Word = Schema.Struct({ word: Schema.String })
const Event = Schema.Struct({ word: Schema.String, ts: Schema.Date })
const w = (...xs: ReadonlyArray<string>) => xs.map((word) => ({ word }))
const at = (word: string, s: number) => ({ word, ts: new Date(s * 1000) })

const tempDir = (name: string) => Effect.promise(() => mkdtemp(join(tmpdir(), `tributary-state-reader-${name}-`)))
const removeDir = (dir: string) => Effect.promise(() => rm(dir, { recursive: true, force: true }))

const sortBy = <A>(rows: ReadonlyArray<A>, key: (a: A) => string): Array<A> =>
  [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))

/** Runs a word count over two batches; returns the checkpoint. */
const wordCount = Effect.gen(function* () {
  const dir = yield* tempDir("count")
  const input = yield* MemoryStream.make(Word)
  const q = yield* input
    .toDF()
    .groupBy("word")
    .count()
    .writeStream.format("noop")
    .outputMode("update")
    .option("checkpointLocation", dir)
    .start()
  yield* input.addData(w("a", "b", "a"))
  yield* q.processAllAvailable()
  yield* input.addData(w("a", "c"))
  yield* q.processAllAvailable()
  yield* q.stop()
  return dir
})

for (const provider of ["duckdb", "memory"] as const) {
  describe(`statestore with the ${provider} provider`, () => {
    it.effect("an aggregation's state at the last batch and at an earlier one", () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const dir = yield* wordCount
        const last = yield* spark.read.format("statestore").load(dir)
        assert.deepStrictEqual(last.columns, ["key", "value", "partition_id"])
        const rows = yield* last.collect()
        assert.deepStrictEqual(
          sortBy(rows, (r: any) => r.key.word),
          [
            { key: { word: "a" }, value: { count: 3 }, partition_id: 0 },
            { key: { word: "b" }, value: { count: 1 }, partition_id: 0 },
            { key: { word: "c" }, value: { count: 1 }, partition_id: 0 }
          ]
        )
        const first = yield* spark.read.format("statestore").option("batchId", 0).option("operatorId", 0).load(dir)
        const flat = yield* first.select(F.col("key.word").as("word"), F.col("value.count").as("n")).orderBy("word").collect()
        assert.deepStrictEqual(flat, [
          { word: "a", n: 2 },
          { word: "b", n: 1 }
        ])
        yield* removeDir(dir)
      }).pipe(Effect.provide(Session.layer({ stateStore: provider })))
    )

    it.effect("a windowed aggregation with several aggregates: the window in the key, results in the value", () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const dir = yield* tempDir("window")
        const input = yield* MemoryStream.make(Event)
        const q = yield* input
          .toDF()
          .withWatermark("ts", "10 seconds")
          .groupBy(F.window("ts", "10 seconds"), "word")
          .agg(F.count("*").as("n"), F.avg(F.col("ts").cast("long")).as("avgTs"))
          .writeStream.format("noop")
          .outputMode("update")
          .option("checkpointLocation", dir)
          .start()
        yield* input.addData([at("a", 1), at("a", 3), at("b", 12)])
        yield* q.processAllAvailable()
        yield* q.stop()
        const df = yield* spark.read.format("statestore").load(dir)
        const rows = yield* df
          .select(F.col("key.window.start").as("start"), F.col("key.word").as("word"), F.col("value.n").as("n"), F.col("value.avgTs").as("avgTs"))
          .orderBy("start")
          .collect()
        assert.deepStrictEqual(rows, [
          { start: new Date(0), word: "a", n: 2, avgTs: 2 },
          { start: new Date(10_000), word: "b", n: 1, avgTs: 12 }
        ])
        yield* removeDir(dir)
      }).pipe(Effect.provide(Session.layer({ stateStore: provider })))
    )
  })
}

describe("statestore over other operators", () => {
  it.effect("grouping keys keep their aliases, as Spark's reader shows them", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir("alias")
      const input = yield* MemoryStream.make(Schema.Struct({ n: Schema.Int }))
      const q = yield* input
        .toDF()
        .groupBy(F.col("n").mod(2).as("bucket"))
        .agg(F.sum("n").as("total"))
        .writeStream.format("noop")
        .outputMode("update")
        .option("checkpointLocation", dir)
        .start()
      yield* input.addData([{ n: 1 }, { n: 2 }, { n: 3 }])
      yield* q.processAllAvailable()
      yield* q.stop()
      const rows = yield* (yield* spark.read.format("statestore").load(dir))
        .select(F.col("key.bucket").as("bucket"), F.col("value.total").as("total"))
        .orderBy("bucket")
        .collect()
      assert.deepStrictEqual(rows, [
        { bucket: 0, total: 2 },
        { bucket: 1, total: 4 }
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("dropDuplicates: the key columns, Spark's dummy value", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir("dedup")
      const input = yield* MemoryStream.make(Schema.Struct({ word: Schema.String, n: Schema.Int }))
      const q = yield* input
        .toDF()
        .dropDuplicates(["word", "n"])
        .writeStream.format("noop")
        .option("checkpointLocation", dir)
        .start()
      yield* input.addData([
        { word: "a,}{\u0001", n: 1 },
        { word: "a,}{\u0001", n: 1 },
        { word: "b", n: 2 }
      ])
      yield* q.processAllAvailable()
      yield* q.stop()
      const rows = yield* (yield* spark.read.format("statestore").load(dir)).collect()
      assert.deepStrictEqual(
        sortBy(rows, (r: any) => r.key.word),
        [
          { key: { word: "a,}{\u0001", n: 1 }, value: { __dummy__: null }, partition_id: 0 },
          { key: { word: "b", n: 2 }, value: { __dummy__: null }, partition_id: 0 }
        ]
      )
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("dropDuplicatesWithinWatermark: expiresAtMicros as Spark", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir("within")
      const input = yield* MemoryStream.make(Event)
      const q = yield* input
        .toDF()
        .withWatermark("ts", "10 seconds")
        .dropDuplicatesWithinWatermark(["word"])
        .writeStream.format("noop")
        .option("checkpointLocation", dir)
        .start()
      yield* input.addData([at("a", 5)])
      yield* q.processAllAvailable()
      yield* q.stop()
      const rows = yield* (yield* spark.read.format("statestore").load(dir)).collect()
      // expires at event time + delay: 15 s
      assert.deepStrictEqual(rows, [{ key: { word: "a" }, value: { expiresAtMicros: 15_000_000 }, partition_id: 0 }])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("session windows: one row per session", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir("session")
      const input = yield* MemoryStream.make(Event)
      const q = yield* input
        .toDF()
        .withWatermark("ts", "10 seconds")
        .groupBy(F.session_window("ts", "5 seconds"), "word")
        .count()
        .writeStream.format("noop")
        .outputMode("append")
        .option("checkpointLocation", dir)
        .start()
      yield* input.addData([at("a", 1), at("a", 3), at("a", 20)])
      yield* q.processAllAvailable()
      yield* q.stop()
      // Batch 0 holds both sessions; its no-data batch (watermark 10 s) emits and evicts the first.
      assert.strictEqual(yield* (yield* spark.read.format("statestore").load(dir)).count(), 1)
      const df = yield* spark.read.format("statestore").option("batchId", 0).load(dir)
      const rows = yield* df
        .select(
          F.col("key.word").as("word"),
          F.col("key.session_window.start").as("start"),
          F.col("key.session_window.end").as("end"),
          F.col("value.count").as("count")
        )
        .orderBy("start")
        .collect()
      assert.deepStrictEqual(rows, [
        { word: "a", start: new Date(1000), end: new Date(8000), count: 2 },
        { word: "a", start: new Date(20_000), end: new Date(25_000), count: 1 }
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("operator ids follow Spark: the topmost stateful operator is 0", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir("two-ops")
      const input = yield* MemoryStream.make(Word)
      const q = yield* input
        .toDF()
        .dropDuplicates(["word"])
        .groupBy("word")
        .count()
        .writeStream.format("noop")
        .outputMode("update")
        .option("checkpointLocation", dir)
        .start()
      yield* input.addData(w("a", "a", "b"))
      yield* q.processAllAvailable()
      yield* q.stop()
      const meta = yield* (yield* spark.read.format("state-metadata").load(dir)).collect()
      assert.deepStrictEqual(meta, [
        {
          operatorId: 0,
          operatorName: "stateStoreSave",
          stateStoreName: "default",
          numPartitions: 1,
          minBatchId: 0,
          maxBatchId: 0,
          operatorProperties: ""
        },
        {
          operatorId: 1,
          operatorName: "dedupe",
          stateStoreName: "default",
          numPartitions: 1,
          minBatchId: 0,
          maxBatchId: 0,
          operatorProperties: ""
        }
      ])
      const dedup = yield* (yield* spark.read.format("statestore").option("operatorId", 1).load(dir)).count()
      assert.strictEqual(dedup, 2)
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("the change feed and SQL", () => {
  it.effect("readChangeFeed: each batch's updates and deletes", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir("feed")
      const input = yield* MemoryStream.make(Event)
      const q = yield* input
        .toDF()
        .withWatermark("ts", "0 seconds")
        .groupBy(F.window("ts", "10 seconds"))
        .count()
        .writeStream.format("noop")
        .outputMode("append")
        .option("checkpointLocation", dir)
        .start()
      yield* input.addData([at("a", 1)])
      yield* q.processAllAvailable()
      yield* input.addData([at("a", 15)])
      yield* q.processAllAvailable()
      yield* q.stop()
      const df = yield* spark.read
        .format("statestore")
        .option("readChangeFeed", true)
        .option("changeStartBatchId", 0)
        .load(dir)
      assert.deepStrictEqual(df.columns, ["batch_id", "change_type", "key", "value", "partition_id"])
      const rows = yield* df
        .select("batch_id", "change_type", F.col("key.window.start").as("start"), F.col("value.count").as("count"))
        .collect()
      // Batch 0 adds [0, 10); its no-data batch 1 (watermark 1 s) changes nothing; batch 2 adds
      // [10, 20); its no-data batch 3 (watermark 15 s) emits and evicts [0, 10).
      assert.deepStrictEqual(rows, [
        { batch_id: 0, change_type: "update", start: new Date(0), count: 1 },
        { batch_id: 2, change_type: "update", start: new Date(10_000), count: 1 },
        { batch_id: 3, change_type: "delete", start: new Date(0), count: null }
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("spark.sql over committed state through a temp view", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* wordCount
      const state = yield* spark.read.format("statestore").load(dir)
      yield* state.select(F.col("key.word").as("word"), F.col("value.count").as("n")).createOrReplaceTempView("word_state")
      const top = yield* (yield* spark.sql("SELECT word, n FROM word_state WHERE n > 1")).collect()
      assert.deepStrictEqual(top, [{ word: "a", n: 3 }])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("errors", () => {
  it.effect("Spark's option errors", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* wordCount
      const message = (options: Record<string, string | number>) =>
        spark.read
          .format("statestore")
          .options(options)
          .load(dir)
          .pipe(
            Effect.flip,
            Effect.map((e) => e.message)
          )
      assert.strictEqual(
        yield* message({ batchId: -1 }),
        "[STDS_INVALID_OPTION_VALUE.IS_NEGATIVE] Invalid value for source option 'batchId': must be zero or positive."
      )
      assert.strictEqual(
        yield* message({ operatorId: -1 }),
        "[STDS_INVALID_OPTION_VALUE.IS_NEGATIVE] Invalid value for source option 'operatorId': must be zero or positive."
      )
      assert.strictEqual(
        yield* message({ storeName: " " }),
        "[STDS_INVALID_OPTION_VALUE.IS_EMPTY] Invalid value for source option 'storeName': cannot be empty."
      )
      assert.strictEqual(
        yield* message({ readChangeFeed: "true", batchId: 0, changeStartBatchId: 0 }),
        "[STDS_CONFLICT_OPTIONS] The options ['batchId', 'readChangeFeed'] cannot be specified together. Please specify the one."
      )
      assert.strictEqual(
        yield* message({ readChangeFeed: "true" }),
        "[STDS_REQUIRED_OPTION_UNSPECIFIED] 'changeStartBatchId' must be specified."
      )
      assert.strictEqual(
        yield* message({ changeStartBatchId: 0 }),
        "[STDS_INVALID_OPTION_VALUE.WITH_MESSAGE] Invalid value for source option 'changeStartBatchId': Only specify this option when readChangeFeed is set to true."
      )
      assert.match(yield* message({ operatorId: 7 }), /^\[STDS_FAILED_TO_READ_OPERATOR_METADATA\]/)
      assert.match(yield* message({ storeName: "left-keyToNumValues" }), /operator 0 has no store 'left-keyToNumValues'/)
      assert.match(yield* message({ joinSide: "left" }), /operator 0 is not a stream-stream join/)
      assert.strictEqual(
        yield* message({ joinSide: "right", readChangeFeed: "true", changeStartBatchId: 0 }),
        "[STDS_CONFLICT_OPTIONS] The options ['joinSide', 'readChangeFeed'] cannot be specified together. Please specify the one."
      )
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("no committed batch", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir("empty")
      const e = yield* Effect.flip(spark.read.format("statestore").load(dir))
      assert.strictEqual(
        e.message,
        `[STDS_COMMITTED_BATCH_UNAVAILABLE] No committed batch found, checkpoint location: ${dir}. Ensure that the query has run and committed any microbatch before stopping.`
      )
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("state written by the other provider: the reader and a restart both say so", () =>
    Effect.gen(function* () {
      const dir = yield* wordCount.pipe(Effect.provide(Session.layer({ stateStore: "duckdb" })))
      const program = Effect.gen(function* () {
        const spark = yield* Session
        const e = yield* Effect.flip(spark.read.format("statestore").load(dir))
        assert.match(e.message, /written by the 'duckdb' state store provider, but this session uses 'memory'/)
        const input = yield* MemoryStream.make(Word)
        const q = yield* input
          .toDF()
          .groupBy("word")
          .count()
          .writeStream.format("noop")
          .outputMode("update")
          .option("checkpointLocation", dir)
          .start()
        const failure = yield* Effect.flip(q.awaitTermination())
        assert.match(String(failure.message), /written by the 'duckdb' state store provider, but this session uses 'memory'/)
      })
      yield* program.pipe(Effect.provide(Session.layer({ stateStore: "memory" })))
      yield* removeDir(dir)
    })
  )
})

describe("keyParser", () => {
  it("reads back every key type the operators write", () => {
    const parse = keyParser([
      T.StringType,
      T.LongType,
      T.struct([T.field("start", T.TimestampType), T.field("end", T.TimestampType)]),
      T.BooleanType,
      T.array(T.StringType),
      T.DoubleType
    ])
    assert.deepStrictEqual(parse(['"a,\\"}"', "-3", "{0,10000}", "t", '["x",\u0000,"]"]', "NaN"].join("\u0001")), [
      'a,"}',
      -3,
      [0, 10_000],
      true,
      ["x", null, "]"],
      Number.NaN
    ])
    assert.deepStrictEqual(keyParser([T.IntegerType])("\u0000"), [null])
    assert.deepStrictEqual(keyParser([T.BinaryType])("b1,2"), [Uint8Array.from([1, 2])])
    assert.throws(() => keyParser([T.IntegerType, T.IntegerType])("1"))
    assert.throws(() => keyParser([T.IntegerType])("x"))
  })
})
