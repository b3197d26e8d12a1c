/**
 * Spark's `StreamingDeduplicationSuite` and `StreamingDeduplicationWithinWatermarkSuite` as
 * `testStream` scripts, with Spark's inputs, expected outputs and state metrics
 * (`StateStoreMetricsTest.assertNumStateRows`, `assertStateOperatorCustomMetric`). Spark runs
 * them with its HDFS and RocksDB providers; here with the DuckDB and the file provider.
 *
 * Spark's `MemoryStream[String]` is a `MemoryStream` of `Schema.String` (column `value`), a
 * `MemoryStream[(String, Int)]` one of `{ _1, _2 }`.
 */
import { describe, it, assert } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../mod.ts"
import {
  AddData,
  AdvanceClock,
  AssertOnQuery,
  CheckAnswer,
  CheckLastBatch,
  CheckNewAnswer,
  ExpectFailure,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"
import { providers, removeDir, stateMetrics, tempDir } from "./StreamingTestKit.ts"

const Pair = Schema.Struct({ _1: Schema.String, _2: Schema.Int })
const p = (_1: string, _2: number) => ({ _1, _2 })
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)
const times = (n: number, xs: ReadonlyArray<number>) => Array.from({ length: n }, () => xs).flat()

/** Spark's `withColumn("eventTime", timestamp_seconds($"value")).withWatermark("eventTime", "10 seconds")`. */
const withEventTime = (input: MemoryStream<number>) =>
  input.toDF().withColumn("eventTime", F.timestamp_seconds("value")).withWatermark("eventTime", "10 seconds")

const et = (...xs: ReadonlyArray<number>) => xs.map((eventTime) => ({ eventTime }))

describe("StreamingDeduplicationSuite", () => {
  for (const provider of providers) {
    describe(provider.name, () => {
      it.effect("deduplicate with all columns", () =>
        Effect.gen(function* () {
          const { assertNumStateRows } = stateMetrics()
          const input = yield* MemoryStream.make(Schema.String)
          yield* testStream(input.toDF().dropDuplicates(), "append", [
            AddData(input, "a"),
            CheckLastBatch({ value: "a" }),
            assertNumStateRows({ total: 1, updated: 1 }),
            AddData(input, "a"),
            CheckLastBatch(),
            assertNumStateRows({ total: 1, updated: 0 }),
            AddData(input, "b"),
            CheckLastBatch({ value: "b" }),
            assertNumStateRows({ total: 2, updated: 1 })
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("deduplicate with some columns", () =>
        Effect.gen(function* () {
          const { assertNumStateRows } = stateMetrics()
          const input = yield* MemoryStream.make(Pair)
          yield* testStream(input.toDF().dropDuplicates(["_1"]), "append", [
            AddData(input, p("a", 1)),
            CheckLastBatch(p("a", 1)),
            assertNumStateRows({ total: 1, updated: 1, droppedByWatermark: 0 }),
            AddData(input, p("a", 2)), // Dropped
            CheckLastBatch(),
            assertNumStateRows({ total: 1, updated: 0, droppedByWatermark: 0 }),
            AddData(input, p("b", 1)),
            CheckLastBatch(p("b", 1)),
            assertNumStateRows({ total: 2, updated: 1, droppedByWatermark: 0 })
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("multiple deduplicates", () =>
        Effect.gen(function* () {
          const { assertNumStateRows } = stateMetrics()
          const input = yield* MemoryStream.make(Pair)
          yield* testStream(input.toDF().dropDuplicates().dropDuplicates(["_1"]), "append", [
            AddData(input, p("a", 1)),
            CheckLastBatch(p("a", 1)),
            assertNumStateRows({ total: [1, 1], updated: [1, 1] }),
            AddData(input, p("a", 2)), // Dropped from the second `dropDuplicates`
            CheckLastBatch(),
            assertNumStateRows({ total: [1, 2], updated: [0, 1] }),
            AddData(input, p("b", 1)),
            CheckLastBatch(p("b", 1)),
            assertNumStateRows({ total: [2, 3], updated: [1, 1] })
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("SPARK-35896: metrics in StateOperatorProgress are output correctly", () =>
        Effect.gen(function* () {
          const { assertNumStateRows, assertStateOperatorProgressMetric } = stateMetrics()
          const input = yield* MemoryStream.make(Schema.Int)
          const result = withEventTime(input).dropDuplicates().select(F.col("eventTime").cast("long").as("eventTime"))
          yield* testStream(result, "append", [
            StartStream({ additionalConfs: { "spark.sql.shuffle.partitions": "2" } }),
            AddData(input, ...times(5, range(10, 15))),
            CheckAnswer(...et(...range(10, 15))),
            assertNumStateRows({ total: [6], updated: [6], droppedByWatermark: [0], removed: [0] }),
            AddData(input, 25), // Advance watermark to 15 secs, no-data-batch drops rows <= 15
            CheckNewAnswer(...et(25)),
            assertNumStateRows({ total: [1], updated: [1], droppedByWatermark: [0], removed: [6] }),
            AddData(input, 10), // Should not emit anything as data less than watermark
            CheckNewAnswer(),
            assertNumStateRows({ total: [1], updated: [0], droppedByWatermark: [1], removed: [0] }),
            AddData(input, 10),
            CheckNewAnswer(),
            assertStateOperatorProgressMetric("dedupe", 2, 2)
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("deduplicate with watermark", () =>
        Effect.gen(function* () {
          const { assertNumStateRows } = stateMetrics()
          const input = yield* MemoryStream.make(Schema.Int)
          const result = withEventTime(input).dropDuplicates().select(F.col("eventTime").cast("long").as("eventTime"))
          yield* testStream(result, "append", [
            AddData(input, ...times(5, range(10, 15))),
            CheckAnswer(...et(...range(10, 15))),
            assertNumStateRows({ total: 6, updated: 6 }),
            AddData(input, 25), // Advance watermark to 15 secs, no-data-batch drops rows <= 15
            CheckNewAnswer(...et(25)),
            assertNumStateRows({ total: 1, updated: 1 }),
            AddData(input, 10), // Should not emit anything as data less than watermark
            CheckNewAnswer(),
            assertNumStateRows({ total: 1, updated: 0, droppedByWatermark: 1 }),
            AddData(input, 45), // Advance watermark to 35 seconds, no-data-batch drops row 25
            CheckNewAnswer(...et(45)),
            assertNumStateRows({ total: 1, updated: 1 })
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("deduplicate with aggregate - append mode", () =>
        Effect.gen(function* () {
          const { assertNumStateRows } = stateMetrics()
          const input = yield* MemoryStream.make(Schema.Int)
          const windowedaggregate = withEventTime(input)
            .dropDuplicates()
            .groupBy(F.window("eventTime", "5 seconds").as("window"))
            .agg(F.count("*").as("count"))
            .select(F.col("window").getField("start").cast("long").as("start"), F.col("count"))
          const w = (start: number, count: number) => ({ start, count })
          yield* testStream(windowedaggregate, "append", [
            AddData(input, ...times(5, range(10, 15))),
            CheckLastBatch(),
            // states in aggregate in [10, 14), [15, 20) (2 windows)
            // states in deduplicate is 10 to 15
            assertNumStateRows({ total: [2, 6], updated: [2, 6] }),
            AddData(input, 25), // Advance watermark to 15 seconds
            CheckLastBatch(w(10, 5)), // 5 items (10 to 14) after deduplicate, emitted with no-data-batch
            // states in aggregate in [15, 20) and [25, 30); no-data-batch removed [10, 14)
            // states in deduplicate is 25, no-data-batch removed 10 to 14
            assertNumStateRows({ total: [2, 1], updated: [1, 1] }),
            AddData(input, 10), // Should not emit anything as data less than watermark
            CheckLastBatch(),
            assertNumStateRows({ total: [2, 1], updated: [0, 0], droppedByWatermark: [0, 1] }),
            AddData(input, 40), // Advance watermark to 30 seconds
            CheckLastBatch(w(15, 1), w(25, 1)),
            // states in aggregate is [40, 45); no-data-batch removed [15, 20) and [25, 30)
            // states in deduplicate is 40; no-data-batch removed 25
            assertNumStateRows({ total: [1, 1], updated: [1, 1] })
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      for (const mode of ["update", "complete"] as const) {
        it.effect(`deduplicate with aggregate - ${mode} mode`, () =>
          Effect.gen(function* () {
            const { assertNumStateRows } = stateMetrics()
            const input = yield* MemoryStream.make(Pair)
            const result = input
              .toDF()
              .select(F.col("_1").as("str"), F.col("_2").as("num"))
              .dropDuplicates()
              .groupBy("str")
              .agg(F.sum("num"))
            const r = (str: string, sum: number) => ({ str, "sum(num)": sum })
            yield* testStream(result, mode, [
              AddData(input, p("a", 1)),
              CheckLastBatch(r("a", 1)),
              assertNumStateRows({ total: [1, 1], updated: [1, 1] }),
              AddData(input, p("a", 1)), // Dropped
              mode === "update" ? CheckLastBatch() : CheckLastBatch(r("a", 1)),
              assertNumStateRows({ total: [1, 1], updated: [0, 0] }),
              AddData(input, p("a", 2)),
              CheckLastBatch(r("a", 3)),
              assertNumStateRows({ total: [1, 2], updated: [1, 1] }),
              AddData(input, p("b", 1)),
              mode === "update" ? CheckLastBatch(r("b", 1)) : CheckLastBatch(r("a", 3), r("b", 1)),
              assertNumStateRows({ total: [2, 3], updated: [1, 1] })
            ])
          }).pipe(Effect.provide(provider.layer()))
        )
      }

      it.effect("SPARK-19841: watermarkPredicate should filter based on keys", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Schema.Struct({ _1: Schema.Int, _2: Schema.Int }))
          const df = input
            .toDF()
            .toDF("time", "id")
            .withColumn("time", F.timestamp_seconds("time"))
            .withWatermark("time", "1 second")
            .dropDuplicates(["id", "time"]) // Change the column positions
            .select("id")
          const ids = (...xs: ReadonlyArray<number>) => xs.map((id) => ({ id }))
          const t = (time: number, id: number) => ({ _1: time, _2: id })
          yield* testStream(df, "append", [
            AddData(input, t(1, 1), t(1, 1), t(1, 2)),
            CheckAnswer(...ids(1, 2)),
            AddData(input, t(1, 1), t(2, 3), t(2, 4)),
            CheckNewAnswer(...ids(3, 4)),
            AddData(input, t(1, 0), t(1, 1), t(3, 5), t(3, 6)), // Drop (1 -> 0, 1 -> 1) due to watermark
            CheckNewAnswer(...ids(5, 6)),
            AddData(input, t(1, 0), t(4, 7)), // Drop (1 -> 0) due to watermark
            CheckNewAnswer(...ids(7))
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      for (const flag of [true, false]) {
        it.effect(`test no-data flag (${flag})`, () =>
          Effect.gen(function* () {
            const { assertNumStateRows } = stateMetrics()
            const input = yield* MemoryStream.make(Schema.Int)
            const result = withEventTime(input).dropDuplicates().select(F.col("eventTime").cast("long").as("eventTime"))
            yield* testStream(result, "append", [
              StartStream({ additionalConfs: { "spark.sql.streaming.noDataMicroBatches.enabled": String(flag) } }),
              AddData(input, 10, 11, 12, 13, 14, 15),
              CheckAnswer(...et(10, 11, 12, 13, 14, 15)),
              assertNumStateRows({ total: 6, updated: 6 }),
              AddData(input, 25), // Advance watermark to 15 seconds
              CheckNewAnswer(...et(25)),
              // State should have been cleaned if flag is set, otherwise should not have been cleaned
              flag ? assertNumStateRows({ total: 1, updated: 1 }) : assertNumStateRows({ total: 7, updated: 1 }),
              // Right after the batches: the no-data batch wrote nothing, the data batch one row.
              AssertOnQuery(
                (q) => Effect.map(q.lastProgress(), (pr) => pr?.sink.numOutputRows === (flag ? 0 : 1)),
                "the rows the last batch wrote"
              ),
              // Spark's `eventually(timeout(streamingTimeout)) { q.lastProgress.sink.numOutputRows
              // == 0 }`: holds for both flags once the idle query records a progress with no output
              // (`ProgressReporter.updateIdleness`, every `noDataProgressEventInterval` = 10 s).
              AdvanceClock("10 seconds"),
              AssertOnQuery(
                (q) => Effect.map(q.lastProgress(), (pr) => pr?.sink.numOutputRows === 0),
                "the idle progress wrote nothing"
              )
            ])
          }).pipe(Effect.provide(provider.layer()))
        )
      }

      it.effect("SPARK-35880: custom metric numDroppedDuplicateRows in state operator progress", () =>
        Effect.gen(function* () {
          const m1 = stateMetrics()
          const input = yield* MemoryStream.make(Pair)
          yield* testStream(input.toDF().dropDuplicates(["_1"]), "append", [
            AddData(input, p("a", 1)),
            CheckLastBatch(p("a", 1)),
            m1.assertStateOperatorCustomMetric("numDroppedDuplicateRows", 0),
            AddData(input, p("a", 2), p("b", 3)),
            CheckLastBatch(p("b", 3)),
            m1.assertStateOperatorCustomMetric("numDroppedDuplicateRows", 1),
            AddData(input, p("a", 5), p("b", 2), p("c", 9)),
            CheckLastBatch(p("c", 9)),
            m1.assertStateOperatorCustomMetric("numDroppedDuplicateRows", 2)
          ])

          // with watermark
          const m2 = stateMetrics()
          const ints = yield* MemoryStream.make(Schema.Int)
          const dedupeWithWatermark = withEventTime(ints)
            .dropDuplicates()
            .select(F.col("eventTime").cast("long").as("eventTime"))
          yield* testStream(dedupeWithWatermark, "append", [
            AddData(ints, ...times(5, range(10, 15))),
            CheckAnswer(...et(...range(10, 15))),
            m2.assertStateOperatorCustomMetric("numDroppedDuplicateRows", 24),
            AddData(ints, 14),
            CheckNewAnswer(),
            m2.assertStateOperatorCustomMetric("numDroppedDuplicateRows", 1),
            // Advance watermark to 15 secs, no-data-batch drops rows <= 15
            AddData(ints, 25),
            CheckNewAnswer(...et(25)),
            m2.assertStateOperatorCustomMetric("numDroppedDuplicateRows", 0),
            AddData(ints, 10), // Should not emit anything as data less than watermark
            CheckNewAnswer(),
            m2.assertStateOperatorCustomMetric("numDroppedDuplicateRows", 0),
            AddData(ints, 26, 26),
            CheckNewAnswer(...et(26)),
            m2.assertStateOperatorCustomMetric("numDroppedDuplicateRows", 1)
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("SPARK-39650: duplicate with specific keys should allow input to change schema", () =>
        Effect.gen(function* () {
          const dir = yield* tempDir()
          const input = yield* MemoryStream.make(Pair)
          yield* testStream(input.toDF().dropDuplicates(["_1"]), "append", [
            StartStream({ checkpointLocation: dir }),
            AddData(input, p("a", 1)),
            CheckLastBatch(p("a", 1)),
            AddData(input, p("a", 2), p("b", 3)),
            CheckLastBatch(p("b", 3))
          ])
          const Triple = Schema.Struct({ _1: Schema.String, _2: Schema.Int, _3: Schema.String })
          const input2 = yield* MemoryStream.make(Triple)
          // initialize new memory stream with previously executed batches
          yield* input2.addData([{ _1: "a", _2: 1, _3: "dummy" }])
          yield* input2.addData([
            { _1: "a", _2: 2, _3: "dummy" },
            { _1: "b", _2: 3, _3: "dummy" }
          ])
          yield* testStream(input2.toDF().dropDuplicates(["_1"]), "append", [
            StartStream({ checkpointLocation: dir }),
            AddData(input2, { _1: "a", _2: 5, _3: "a" }, { _1: "b", _2: 2, _3: "b" }, { _1: "c", _2: 9, _3: "c" }),
            CheckLastBatch({ _1: "c", _2: 9, _3: "c" })
          ]).pipe(Effect.ensuring(removeDir(dir)))
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("SPARK-39650: changes of the key schema on restart are not allowed", () =>
        Effect.gen(function* () {
          const dir = yield* tempDir()
          const input = yield* MemoryStream.make(Pair)
          yield* testStream(input.toDF().dropDuplicates(["_1"]), "append", [
            StartStream({ checkpointLocation: dir }),
            AddData(input, p("a", 1)),
            CheckLastBatch(p("a", 1))
          ])
          yield* testStream(input.toDF().dropDuplicates(["_1", "_2"]), "append", [
            StartStream({ checkpointLocation: dir }),
            AddData(input, p("b", 2)),
            AssertOnQuery(
              (q) =>
                Effect.gen(function* () {
                  yield* Effect.exit(q.awaitTermination())
                  const error = yield* q.exception()
                  const cause = error?.cause as { _tag?: string; message?: string } | undefined
                  return (
                    cause?._tag === "StateStoreError" &&
                    (cause.message ?? "").includes("STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE") &&
                    (yield* q.recentProgress()).length === 0
                  )
                }),
              "the key schema change fails the query before its first batch"
            )
          ]).pipe(Effect.ensuring(removeDir(dir)))
        }).pipe(Effect.provide(provider.layer()))
      )

      // Spark's `try_cast(StringType("UTF8_BINARY"))` is a cast to the default (binary) string
      // type; tributary has no collations, so the cast is to `string`. Bytes decide equality:
      // "ä" is a new key next to "a".
      it.effect("collation aware deduplication", () =>
        Effect.gen(function* () {
          const { assertNumStateRows } = stateMetrics()
          const input = yield* MemoryStream.make(Pair)
          const result = input
            .toDF()
            .select(F.col("_1").cast("string").as("str"), F.col("_2").as("int"))
            .dropDuplicates(["str"])
          const r = (str: string, int: number) => ({ str, int })
          yield* testStream(result, "append", [
            AddData(input, p("a", 1)),
            CheckLastBatch(r("a", 1)),
            assertNumStateRows({ total: 1, updated: 1, droppedByWatermark: 0 }),
            AddData(input, p("a", 2)), // Dropped
            CheckLastBatch(),
            assertNumStateRows({ total: 1, updated: 0, droppedByWatermark: 0 }),
            AddData(input, p("ä", 1)),
            CheckLastBatch(r("ä", 1)),
            assertNumStateRows({ total: 2, updated: 1, droppedByWatermark: 0 })
          ])
        }).pipe(Effect.provide(provider.layer()))
      )
    })
  }

  it.effect("SPARK-21546: dropDuplicates should ignore watermark when it's not a key", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ _1: Schema.Int, _2: Schema.Int }))
      const df = input
        .toDF()
        .toDF("id", "time")
        .withColumn("time", F.timestamp_seconds("time"))
        .withWatermark("time", "1 second")
        .dropDuplicates(["id"])
        .select(F.col("id"), F.col("time").cast("long").as("time"))
      yield* testStream(df, "append", [
        AddData(input, { _1: 1, _2: 1 }, { _1: 1, _2: 2 }, { _1: 2, _2: 2 }),
        CheckAnswer({ id: 1, time: 1 }, { id: 2, time: 2 })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-29438: ensure UNION doesn't lead streaming deduplication to use shifted partition IDs", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const construct = Effect.gen(function* () {
        const input1 = yield* MemoryStream.make(Schema.Int)
        const input2 = yield* MemoryStream.make(Schema.Int)
        return {
          input1,
          input2,
          union: input1
            .toDF()
            .select("value")
            .union(input2.toDF().dropDuplicates(["value"]))
        }
      })
      const v = (...xs: ReadonlyArray<number>) => xs.map((value) => ({ value }))
      const first = yield* construct
      yield* testStream(first.union, "append", [
        StartStream({ checkpointLocation: dir }),
        StopStream,
        AddData(first.input1, 11, 12),
        AddData(first.input2, 21, 22),
        StartStream({ checkpointLocation: dir }),
        CheckNewAnswer(...v(11, 12, 21, 22)),
        StopStream
      ])
      const second = yield* construct
      yield* second.input1.addData([11, 12])
      yield* second.input2.addData([21, 22])
      yield* testStream(second.union, "append", [
        StopStream,
        AddData(second.input1, 13, 14),
        AddData(second.input2, 22, 23),
        StartStream({ checkpointLocation: dir }),
        CheckNewAnswer(...v(13, 14, 23))
      ]).pipe(Effect.ensuring(removeDir(dir)))
    }).pipe(Effect.provide(Session.layer()))
  )

  // Not a case of Spark's suite: Spark's `StreamingDeduplicateExec` drops late rows by the
  // input's first event-time column (`watermarkExpressionForDataForLateEvents`) but evicts state
  // by the first key that is an event-time column (`watermarkExpressionForKeys`); after a
  // stream-stream join the two differ. Batch 0 joins (1, lt = 10, rt = 10) and stores the key
  // (1, rt = 10); the watermark moves to min(10, 10) = 10 and the no-data batch 1 evicts it.
  const dedupAfterJoin = Effect.gen(function* () {
    const S = Schema.Struct({ _1: Schema.Int, _2: Schema.Int })
    const input1 = yield* MemoryStream.make(S)
    const input2 = yield* MemoryStream.make(S)
    const side = (input: MemoryStream<{ readonly _1: number; readonly _2: number }>, time: string) =>
      input.toDF().select(F.col("_1").as("k"), F.timestamp_seconds("_2").as(time)).withWatermark(time, "0 seconds")
    const df = side(input1, "lt")
      .join(side(input2, "rt"), "k")
      .dropDuplicates(["k", "rt"])
      .select(F.col("k"), F.col("lt").cast("long").as("lt"), F.col("rt").cast("long").as("rt"))
    return { input1, input2, df }
  })

  // Spark's compatibility mode (spark.sql.streaming.statefulOperator.allowMultiple = false): the
  // dedupe's input may carry several event-time columns, and its state expires by the first key
  // that is one (`watermarkExpressionForKeys`).
  it.effect("dropDuplicates after a stream-stream join evicts by its event-time key (compatibility mode)", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { input1, input2, df } = yield* dedupAfterJoin
      yield* testStream(df, "append", [
        StartStream(),
        StopStream,
        AddData(input1, { _1: 1, _2: 10 }),
        AddData(input2, { _1: 1, _2: 10 }),
        StartStream(),
        CheckNewAnswer({ k: 1, lt: 10, rt: 10 }),
        // operators in Spark's order: the dedupe (removed the key in the no-data batch), the join
        assertNumStateRows({ total: [0, 2], updated: [1, 2], removed: [1, 0] })
      ])
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.statefulOperator.allowMultiple": false } })))
  )

  // By default Spark refuses a stateful operator over several event-time columns when the batch
  // runs (`WatermarkSupport.findEventTimeColumn`, _LEGACY_ERROR_TEMP_3077).
  it.effect("dropDuplicates after a stream-stream join: several event-time columns fail the batch", () =>
    Effect.gen(function* () {
      const { input1, input2, df } = yield* dedupAfterJoin
      yield* testStream(df, "append", [
        AddData(input1, { _1: 1, _2: 10 }),
        AddData(input2, { _1: 1, _2: 10 }),
        ExpectFailure("AnalysisError", "More than one event time columns are available.")
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("deduplicate with file sink", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const output = yield* tempDir()
      const checkpoint = yield* tempDir()
      const input = yield* MemoryStream.make(Schema.String)
      const q = yield* input
        .toDF()
        .dropDuplicates()
        .writeStream.format("parquet")
        .outputMode("append")
        .option("checkpointLocation", checkpoint)
        .start(output)
      const read = spark.read.parquet(output).pipe(
        Effect.flatMap((df) => df.collect()),
        Effect.map((rows) => rows.map((r) => r.value).sort())
      )
      yield* input.addData(["a"])
      yield* q.processAllAvailable()
      assert.deepStrictEqual(yield* read, ["a"])
      yield* input.addData(["a"]) // Dropped
      yield* q.processAllAvailable()
      assert.deepStrictEqual(yield* read, ["a"])
      yield* input.addData(["b"])
      yield* q.processAllAvailable()
      assert.deepStrictEqual(yield* read, ["a", "b"])
      yield* q.stop()
      yield* removeDir(output)
      yield* removeDir(checkpoint)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("StreamingDeduplicationWithinWatermarkSuite", () => {
  it.effect("deduplicate in batch DataFrame", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      for (const df of [
        spark.range(10).dropDuplicatesWithinWatermark(),
        spark.range(10).withColumn("newcol", F.col("id")).dropDuplicatesWithinWatermark(["newcol"])
      ]) {
        const error = yield* Effect.flip(df.collect())
        assert.strictEqual(error._tag, "AnalysisError")
        assert.include(error.message, "dropDuplicatesWithinWatermark is not supported")
        assert.include(error.message, "batch DataFrames/DataSets")
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("deduplicate without event time column should result in error", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.String)
      const input2 = yield* MemoryStream.make(Pair)
      const otherSideForJoin = input2
        .toDF()
        .select(F.col("_1").as("key"), F.timestamp_seconds("_2").as("time"))
        // Spark's "Time": resolved case-insensitively at run time (the typed name is "time")
        .withWatermark("Time" as string as "time", "10 seconds")
      const dfs = [
        input.toDF().dropDuplicatesWithinWatermark(),
        input.toDF().withColumn("newcol", F.col("value")).dropDuplicatesWithinWatermark(["newcol"]),
        // two streams, only the other one defines a watermark
        input.toDF().select(F.col("value").as("key")).dropDuplicatesWithinWatermark().join(otherSideForJoin, "key")
      ]
      for (const df of dfs) {
        const error = yield* Effect.flip((df as (typeof dfs)[0]).writeStream.format("noop").start())
        assert.strictEqual(error._tag, "AnalysisError")
        assert.include(error.message, "dropDuplicatesWithinWatermark is not supported")
        assert.include(error.message, "streaming DataFrames/DataSets without watermark")
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const provider of providers) {
    describe(provider.name, () => {
      it.effect("deduplicate with all columns with event time column in DataFrame", () =>
        Effect.gen(function* () {
          const { assertNumStateRows } = stateMetrics()
          const input = yield* MemoryStream.make(Schema.Int)
          const result = withEventTime(input)
            .dropDuplicatesWithinWatermark()
            .select(F.col("eventTime").cast("long").as("eventTime"))
          yield* testStream(result, "append", [
            // Advance watermark to 5 secs, no-data-batch does not drop state rows
            AddData(input, ...times(5, range(10, 15))),
            CheckAnswer(...et(...range(10, 15))),
            assertNumStateRows({ total: 6, updated: 6 }),
            // Advance watermark to 7 secs, no-data-batch does not drop state rows
            AddData(input, ...range(13, 17)),
            // 13 to 15 are duplicated
            CheckNewAnswer(...et(16, 17)),
            assertNumStateRows({ total: 8, updated: 2 }),
            AddData(input, 5), // Should not emit anything as data less than watermark
            CheckNewAnswer(),
            assertNumStateRows({ total: 8, updated: 0, droppedByWatermark: 1 }),
            // Advance watermark to 25 secs, no-data-batch drops state rows having expired time <= 25
            AddData(input, 35),
            CheckNewAnswer(...et(35)),
            assertNumStateRows({ total: 3, updated: 1 }),
            // Advance watermark to 45 seconds, no-data-batch drops state rows having expired time <= 45
            AddData(input, 55),
            CheckNewAnswer(...et(55)),
            assertNumStateRows({ total: 1, updated: 1 })
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("deduplicate with subset of columns which event time column is not in subset", () =>
        Effect.gen(function* () {
          const { assertNumStateRows } = stateMetrics()
          const input = yield* MemoryStream.make(Pair)
          const result = input
            .toDF()
            .withColumn("eventTime", F.timestamp_seconds("_2"))
            .withWatermark("eventTime", "2 seconds")
            .dropDuplicatesWithinWatermark(["_1"])
            .select(F.col("_1"), F.col("eventTime").cast("long").as("eventTime"))
          const r = (_1: string, eventTime: number) => ({ _1, eventTime })
          yield* testStream(result, "append", [
            // Advances watermark to 15
            AddData(input, p("a", 17)),
            CheckNewAnswer(r("a", 17)),
            // expired time is set to 19
            assertNumStateRows({ total: 1, updated: 1 }),
            // Watermark does not advance
            AddData(input, p("a", 16)),
            CheckNewAnswer(),
            assertNumStateRows({ total: 1, updated: 0 }),
            // Watermark does not advance
            // Should not emit anything as data less than watermark
            AddData(input, p("a", 13)),
            CheckNewAnswer(),
            assertNumStateRows({ total: 1, updated: 0, droppedByWatermark: 1 }),
            // Advances watermark to 20. no-data batch drops state row ("a" -> 19)
            AddData(input, p("b", 22), p("c", 21)),
            CheckNewAnswer(r("b", 22), r("c", 21)),
            // expired time is set to 24 and 23
            assertNumStateRows({ total: 2, updated: 2 }),
            // Watermark does not advance
            AddData(input, p("a", 21)),
            // "a" is identified as new event since previous batch dropped state row ("a" -> 19)
            CheckNewAnswer(r("a", 21)),
            // expired time is set to 23
            assertNumStateRows({ total: 3, updated: 1 }),
            // Advances watermark to 23. no-data batch drops state row ("a" -> 23), ("c" -> 23)
            AddData(input, p("d", 25)),
            CheckNewAnswer(r("d", 25)),
            assertNumStateRows({ total: 2, updated: 1 })
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("SPARK-39650: duplicate with specific keys should allow input to change schema", () =>
        Effect.gen(function* () {
          const dir = yield* tempDir()
          const input = yield* MemoryStream.make(Pair)
          const dedupe = input
            .toDF()
            .withColumn("eventTime", F.timestamp_seconds("_2"))
            .withWatermark("eventTime", "10 second")
            .dropDuplicatesWithinWatermark(["_1"])
            .select(F.col("_1"), F.col("eventTime").cast("long").as("eventTime"))
          yield* testStream(dedupe, "append", [
            StartStream({ checkpointLocation: dir }),
            AddData(input, p("a", 1)),
            CheckNewAnswer({ _1: "a", eventTime: 1 }),
            AddData(input, p("a", 2), p("b", 3)),
            CheckNewAnswer({ _1: "b", eventTime: 3 })
          ])
          const Triple = Schema.Struct({ _1: Schema.String, _2: Schema.Int, _3: Schema.String })
          const input2 = yield* MemoryStream.make(Triple)
          const dedupe2 = input2
            .toDF()
            .withColumn("eventTime", F.timestamp_seconds("_2"))
            .withWatermark("eventTime", "10 second")
            .dropDuplicatesWithinWatermark(["_1"])
            .select(F.col("_1"), F.col("eventTime").cast("long").as("eventTime"), F.col("_3"))
          // initialize new memory stream with previously executed batches
          yield* input2.addData([{ _1: "a", _2: 1, _3: "dummy" }])
          yield* input2.addData([
            { _1: "a", _2: 2, _3: "dummy" },
            { _1: "b", _2: 3, _3: "dummy" }
          ])
          yield* testStream(dedupe2, "append", [
            StartStream({ checkpointLocation: dir }),
            AddData(input2, { _1: "a", _2: 5, _3: "a" }, { _1: "b", _2: 2, _3: "b" }, { _1: "c", _2: 9, _3: "c" }),
            CheckNewAnswer({ _1: "c", eventTime: 9, _3: "c" })
          ]).pipe(Effect.ensuring(removeDir(dir)))
        }).pipe(Effect.provide(provider.layer()))
      )
    })
  }
  it.effect("SPARK-46676: canonicalization of StreamingDeduplicateWithinWatermarkExec should work", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const input = yield* MemoryStream.make(Pair)
      const dedupe = input
        .toDF()
        .withColumn("eventTime", F.timestamp_seconds("_2"))
        .withWatermark("eventTime", "10 second")
        .dropDuplicatesWithinWatermark(["_1"])
        .select(F.col("_1"), F.col("eventTime").cast("long").as("eventTime"))
      yield* testStream(dedupe, "append", [
        StartStream({ checkpointLocation: dir }),
        AddData(input, p("a", 1)),
        CheckNewAnswer({ _1: "a", eventTime: 1 }),
        // Spark canonicalizes `q.lastExecution.executedPlan` (which threw before SPARK-46676);
        // here the executed plan of the last batch is rendered, and must show the operator.
        AssertOnQuery(
          (q) => Effect.map(q.explain(true), (text) => /StreamingDeduplicateWithinWatermark \[_1#\d+\]/.test(text)),
          "the executed plan of the last batch renders the dedupe-within-watermark operator"
        )
      ]).pipe(Effect.ensuring(removeDir(dir)))
    }).pipe(Effect.provide(Session.layer()))
  )

  // DEVIATION (core/optimizer/Optimizer.ts, `nodeReferences`, case "Deduplicate"): ColumnPruning treats a
  // Deduplicate as reading only its keys, so the `select("_2")` above it prunes the event-time
  // column `first` from below it and the operator dies ("dropDuplicatesWithinWatermark needs an
  // event-time column"). Spark's `DeduplicateWithinWatermark.references` also includes the
  // child's event-time columns (SPARK-50492), so they are never pruned.
  it.effect("SPARK-50492: drop event time column after dropDuplicatesWithinWatermark", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ _1: Schema.Int, _2: Schema.Int }))
      const result = input
        .toDF()
        .withColumn("first", F.timestamp_seconds("_1"))
        .withWatermark("first", "10 seconds")
        .dropDuplicatesWithinWatermark(["_2"])
        .select("_2")
      yield* testStream(result, "append", [AddData(input, { _1: 1, _2: 2 }), CheckAnswer({ _2: 2 })])
    }).pipe(Effect.provide(Session.layer()))
  )
})
