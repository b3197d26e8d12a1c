/**
 * Spark's `EventTimeWatermarkSuite` (sql/core/src/test/scala/org/apache/spark/sql/streaming/)
 * as `testStream` scripts, with Spark's inputs and expected outputs. Spark's `MemoryStream[Int]`
 * is a `MemoryStream` of `Schema.Int` (one column `value`); Spark's `(Long, Long)` results are rows
 * `{ start, count }`.
 *
 * Where a Spark script reaches into the engine (`q.commitLog.purge`, `MemorySink.clear`,
 * `lastExecution`), the port does the same through the checkpoint folder or the progress, and
 * says so.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as Analyzer from "../../../core/Analyzer.ts"
import { F, MemoryStream, Session, Trigger } from "../../../mod.ts"
import {
  AddData,
  AdvanceClock,
  AssertOnQuery,
  CheckAnswer,
  CheckLastBatch,
  CheckNewAnswer,
  Execute,
  ExpectFailure,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"
import {
  assertEventStats,
  assertEventStatsSeconds,
  assertNumRowsDroppedByWatermark,
  assertNumStateRowsTotal,
  commitIds,
  iso,
  providers,
  purgeCommits,
  removeDir,
  tempDir
} from "./StreamingTestKit.ts"

const Ints = Schema.Int

/** `(window.start as long, count)` rows. */
const w = (start: number, count: number) => ({ start, count })

/** Spark's windowed count of the suite: 5-second windows over `timestamp_seconds(value)`, delay 10 s. */
const windowedCount = (input: MemoryStream<number>, delay = "10 seconds") =>
  input
    .toDF()
    .withColumn("eventTime", F.timestamp_seconds("value"))
    .withWatermark("eventTime", delay)
    .groupBy(F.window("eventTime", "5 seconds").as("window"))
    .agg(F.count("*").as("count"))
    .select(F.col("window").getField("start").cast("long").as("start"), F.col("count"))

/** `dfWithMultipleWatermarks`: two streams with delays 10 s and 15 s, unioned, `eventTime` as int. */
const dfWithMultipleWatermarks = (input1: MemoryStream<number>, input2: MemoryStream<number>) => {
  const df1 = input1
    .toDF()
    .withColumn("eventTime", F.timestamp_seconds("value"))
    .withWatermark("eventTime", "10 seconds")
  const df2 = input2
    .toDF()
    .withColumn("eventTime", F.timestamp_seconds("value"))
    .withWatermark("eventTime", "15 seconds")
  return df1.union(df2).select(F.col("eventTime").cast("int").as("eventTime"))
}

/** `checkWatermark(input, seconds)`: add 1 to `input`, then the last progress reports the watermark. */
const checkWatermark = (input: MemoryStream<number>, seconds: number) =>
  Execute((q) =>
    Effect.gen(function* () {
      yield* input.addData([1])
      yield* q!.processAllAvailable()
      const p = yield* q!.lastProgress()
      assert.strictEqual(p?.eventTime.watermark, iso(seconds))
    })
  )

const e = (...xs: ReadonlyArray<number>) => xs.map((eventTime) => ({ eventTime }))

describe("EventTimeWatermarkSuite", () => {
  it.effect("error on bad column", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Ints)
      const df = input.toDF().withWatermark("badColumn" as never, "1 minute")
      const error = yield* Effect.flip(df.writeStream.format("noop").start())
      assert.strictEqual(error._tag, "AnalysisError")
      assert.include(error.message, "badColumn")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("error on wrong type", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Ints)
      const error = yield* Effect.flip(
        input.toDF().withWatermark("value", "1 minute").writeStream.format("noop").start()
      )
      assert.strictEqual(error._tag, "AnalysisError")
      // Spark 4: `The event time `value` has the invalid type "INT", but expected "TIMESTAMP".`;
      // `Schema.Int` is a Spark long here, so the type named is "BIGINT".
      assert.include(error.message, "`value`")
      assert.include(error.message, '"BIGINT"')
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("event time and watermark metrics", () =>
    Effect.gen(function* () {
      // No event time metrics when there is no watermarking
      const input1 = yield* MemoryStream.make(Ints)
      const aggWithoutWatermark = input1
        .toDF()
        .withColumn("eventTime", F.timestamp_seconds("value"))
        .groupBy(F.window("eventTime", "5 seconds").as("window"))
        .agg(F.count("*").as("count"))
        .select(F.col("window").getField("start").cast("long").as("start"), F.col("count"))
      yield* testStream(aggWithoutWatermark, "complete", [
        AddData(input1, 15),
        CheckAnswer(w(15, 1)),
        assertEventStats((e) => Object.keys(e).length === 0, "no event-time stats"),
        AddData(input1, 10, 12, 14),
        CheckAnswer(w(10, 3), w(15, 1)),
        assertEventStats((e) => Object.keys(e).length === 0, "no event-time stats")
      ])

      // All event time metrics where watermarking is set
      const input2 = yield* MemoryStream.make(Ints)
      yield* testStream(windowedCount(input2), "append", [
        AddData(input2, 15),
        CheckAnswer(),
        assertEventStatsSeconds(15, 15, 15, 0),
        AddData(input2, 10, 12, 14),
        CheckAnswer(),
        assertEventStatsSeconds(10, 14, 12, 5),
        AddData(input2, 25),
        CheckAnswer(w(10, 3)),
        assertEventStatsSeconds(25, 25, 25, 5)
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("event time metrics: the first watermark node with rows, average truncated", () =>
    Effect.gen(function* () {
      // Spark's ProgressReporter takes the stats of the first EventTimeWatermarkExec (in the
      // plan's pre-order) that saw rows, and formats `stats.avg.toLong`.
      const input1 = yield* MemoryStream.make(Ints)
      const input2 = yield* MemoryStream.make(Ints)
      const millis = yield* MemoryStream.make(Ints)
      const byMillis = millis
        .toDF()
        .withColumn("eventTime", F.timestamp_millis("value"))
        .withWatermark("eventTime", "10 seconds")
        .select("value")
      yield* testStream(dfWithMultipleWatermarks(input1, input2), "append", [
        StopStream,
        AddData(input1, 20),
        AddData(input2, 30),
        StartStream(),
        CheckLastBatch(...e(20, 30)),
        assertEventStatsSeconds(20, 20, 20, 0), // the first stream's node only
        AddData(input2, 40),
        CheckLastBatch(...e(40)),
        assertEventStatsSeconds(40, 40, 40, 10) // the first node saw nothing: the second's
      ])
      yield* testStream(byMillis, "append", [
        AddData(millis, 10_000, 10_001),
        CheckAnswer({ value: 10_000 }, { value: 10_001 }),
        assertEventStats(
          (e) => e.avg === "1970-01-01T00:00:10.000Z" && e.max === "1970-01-01T00:00:10.001Z",
          "avg 10000.5 ms is reported as 10.000"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("event time and watermark metrics with Trigger.Once (SPARK-24699)", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Ints)
      const awaitTermination = Execute((q) => q!.awaitTermination())
      // Trigger.Once runs one batch per start and no no-data batch: the answer the new
      // watermark allows only comes with the next start.
      yield* testStream(windowedCount(input), "append", [
        StartStream({ trigger: Trigger.Once() }),
        awaitTermination,

        AddData(input, 15),
        StartStream({ trigger: Trigger.Once() }),
        awaitTermination,
        CheckNewAnswer(),
        assertEventStatsSeconds(15, 15, 15, 0),

        AddData(input, 10, 12, 14),
        StartStream({ trigger: Trigger.Once() }),
        awaitTermination,
        CheckNewAnswer(),
        assertEventStatsSeconds(10, 14, 12, 5),

        AddData(input, 25),
        StartStream({ trigger: Trigger.Once() }),
        awaitTermination,
        CheckNewAnswer(),
        assertEventStatsSeconds(25, 25, 25, 5),

        AddData(input, 50),
        StartStream({ trigger: Trigger.Once() }),
        awaitTermination,
        CheckNewAnswer(w(10, 3)), // watermark = 15 is used to generate this
        assertEventStatsSeconds(50, 50, 50, 15),

        AddData(input, 50),
        StartStream({ trigger: Trigger.Once() }),
        awaitTermination,
        CheckNewAnswer(w(15, 1), w(25, 1)), // watermark = 40 is used to generate this
        assertEventStatsSeconds(50, 50, 50, 40)
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("event time and watermark metrics with Trigger.AvailableNow", () =>
    Effect.gen(function* () {
      // Spark's SPARK-24699 recovery script with AvailableNow: it runs no-data batches too, so
      // the windows the new watermark closes come out in the same run.
      const input = yield* MemoryStream.make(Ints)
      const awaitTermination = Execute((q) => q!.awaitTermination())
      yield* testStream(windowedCount(input), "append", [
        AddData(input, 15),
        AddData(input, 10, 12, 14),
        StartStream({ trigger: Trigger.AvailableNow() }),
        awaitTermination,
        CheckNewAnswer(),
        AddData(input, 25),
        StartStream({ trigger: Trigger.AvailableNow() }),
        awaitTermination,
        CheckNewAnswer(w(10, 3)), // watermark should be updated to 25 - 10 = 15
        AddData(input, 50),
        StartStream({ trigger: Trigger.AvailableNow() }),
        awaitTermination,
        CheckNewAnswer(w(15, 1), w(25, 1)), // watermark should be updated to 50 - 10 = 40
        AddData(input, 50),
        StartStream({ trigger: Trigger.AvailableNow() }),
        awaitTermination,
        CheckNewAnswer()
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const provider of providers) {
    it.effect(`append mode (${provider.name})`, () =>
      Effect.gen(function* () {
        const input = yield* MemoryStream.make(Ints)
        yield* testStream(windowedCount(input), "append", [
          AddData(input, 10, 11, 12, 13, 14, 15),
          CheckNewAnswer(),
          AddData(input, 25), // Advance watermark to 15 seconds
          CheckNewAnswer(w(10, 5)),
          assertNumStateRowsTotal(2),
          assertNumRowsDroppedByWatermark(0),
          AddData(input, 10), // Should not emit anything as data less than watermark
          CheckNewAnswer(),
          assertNumStateRowsTotal(2),
          assertNumRowsDroppedByWatermark(1)
        ])
      }).pipe(Effect.provide(provider.layer()))
    )

    it.effect(`update mode (${provider.name})`, () =>
      Effect.gen(function* () {
        const spark = yield* Session
        yield* spark.conf.set("spark.sql.shuffle.partitions", "10")
        const input = yield* MemoryStream.make(Ints)
        yield* testStream(windowedCount(input), "update", [
          AddData(input, 10, 11, 12, 13, 14, 15),
          CheckNewAnswer(w(10, 5), w(15, 1)),
          AddData(input, 25), // Advance watermark to 15 seconds
          CheckNewAnswer(w(25, 1)),
          assertNumStateRowsTotal(2),
          assertNumRowsDroppedByWatermark(0),
          AddData(input, 10, 25), // Ignore 10 as its less than watermark
          CheckNewAnswer(w(25, 2)),
          assertNumStateRowsTotal(2),
          assertNumRowsDroppedByWatermark(1),
          AddData(input, 10), // Should not emit anything as data less than watermark
          CheckNewAnswer(),
          assertNumStateRowsTotal(2),
          assertNumRowsDroppedByWatermark(1)
        ])
      }).pipe(Effect.provide(provider.layer()))
    )
  }

  it.effect("delay in months and years handled correctly", () =>
    Effect.gen(function* () {
      // Spark uses the wall clock and checks the month difference is 29 or 30; on the test
      // clock the watermark is exact: 2 years 5 months = 29 months of 31 days.
      const nowMs = Date.UTC(2026, 5, 15, 12, 30, 45)
      yield* TestClock.setTime(nowMs)
      const input = yield* MemoryStream.make(Schema.Number)
      const seconds = Math.floor(nowMs / 1000)
      yield* testStream(windowedCount(input, "2 years 5 months"), "append", [
        AddData(input, seconds),
        CheckAnswer(),
        AddData(input, seconds),
        CheckAnswer(),
        assertEventStats(
          (e) =>
            e.max === iso(seconds) && e.watermark === new Date(seconds * 1000 - 29 * 31 * 86_400_000).toISOString(),
          "max is now and the watermark 29 * 31 days before"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const provider of providers) {
    it.effect(`recovery (${provider.name})`, () =>
      Effect.gen(function* () {
        const dir = yield* tempDir()
        const input = yield* MemoryStream.make(Ints)
        // Spark purges the commit log but its latest entry and clears the memory sink; here the
        // commits go from the checkpoint folder and the checks after the restart look at new rows.
        yield* testStream(windowedCount(input), "append", [
          StartStream({ checkpointLocation: dir }),
          AddData(input, 10, 11, 12, 13, 14, 15),
          CheckAnswer(),
          AddData(input, 25), // Advance watermark to 15 seconds
          CheckAnswer(w(10, 5)),
          StopStream,
          Execute(
            Effect.gen(function* () {
              const ids = yield* commitIds(dir)
              yield* purgeCommits(dir, ids[ids.length - 1])
              assert.strictEqual((yield* commitIds(dir)).length, 1)
            })
          ),
          StartStream({ checkpointLocation: dir }),
          AddData(input, 10, 27, 30), // Advance watermark to 20 seconds, 10 should be ignored
          CheckNewAnswer(w(15, 1)),
          StopStream,
          StartStream({ checkpointLocation: dir }),
          AddData(input, 17), // Watermark should still be 20 seconds, 17 should be ignored
          CheckNewAnswer(),
          AddData(input, 40), // Advance watermark to 30 seconds, emit first data 25
          CheckNewAnswer(w(25, 2))
        ]).pipe(Effect.ensuring(removeDir(dir)))
      }).pipe(Effect.provide(provider.layer()))
    )
  }

  it.effect("watermark with 2 streams", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const first = yield* MemoryStream.make(Ints)
      const second = yield* MemoryStream.make(Ints)
      const firstDf = first
        .toDF()
        .withColumn("eventTime", F.timestamp_seconds("value"))
        .withWatermark("eventTime", "10 seconds")
        .select("value")
      const secondDf = second
        .toDF()
        .withColumn("eventTime", F.timestamp_seconds("value"))
        .withWatermark("eventTime", "5 seconds")
        .select("value")
      const writer = firstDf
        .union(secondDf)
        .agg(F.sum("value"))
        .writeStream.option("checkpointLocation", dir)
        .format("memory")
        .outputMode("complete")
        .queryName("test")

      let query = yield* writer.start()
      // Spark reads `lastExecution.offsetSeqMetadata.batchWatermarkMs` after a dummy batch; the
      // dummy batch's progress reports the same watermark.
      const watermarkAfterData = (firstData: ReadonlyArray<number> = [], secondData: ReadonlyArray<number> = []) =>
        Effect.gen(function* () {
          if (firstData.length > 0) yield* first.addData(firstData)
          if (secondData.length > 0) yield* second.addData(secondData)
          yield* query.processAllAvailable()
          yield* first.addData([0])
          yield* query.processAllAvailable()
          const p = yield* query.lastProgress()
          return Date.parse(p!.eventTime.watermark)
        })

      // Global watermark starts at 0 until we get data from both sides
      assert.strictEqual(yield* watermarkAfterData([11]), 0)
      assert.strictEqual(yield* watermarkAfterData([], [6]), 1000)
      // Global watermark stays at left watermark 1 when right watermark moves to 2
      assert.strictEqual(yield* watermarkAfterData([], [8]), 1000)
      // Global watermark switches to right side value 2 when left watermark goes higher
      assert.strictEqual(yield* watermarkAfterData([21]), 3000)
      // Global watermark goes back to left
      assert.strictEqual(yield* watermarkAfterData([], [17, 28, 39]), 11000)
      // Global watermark stays on left as long as it's below right
      assert.strictEqual(yield* watermarkAfterData([31]), 21000)
      assert.strictEqual(yield* watermarkAfterData([41]), 31000)
      // Global watermark switches back to right again
      assert.strictEqual(yield* watermarkAfterData([51]), 34000)

      // Global watermark is updated correctly with simultaneous data from both sides
      assert.strictEqual(yield* watermarkAfterData([100], [100]), 90000)
      assert.strictEqual(yield* watermarkAfterData([120], [110]), 105000)
      assert.strictEqual(yield* watermarkAfterData([130], [125]), 120000)

      // Global watermark doesn't decrement with simultaneous data
      assert.strictEqual(yield* watermarkAfterData([100], [100]), 120000)
      assert.strictEqual(yield* watermarkAfterData([140], [100]), 120000)
      assert.strictEqual(yield* watermarkAfterData([100], [135]), 130000)

      // Global watermark recovers after restart, but left side watermark ahead of it does not.
      assert.strictEqual(yield* watermarkAfterData([200], [190]), 185000)
      yield* query.stop()
      query = yield* writer.start()
      assert.strictEqual(yield* watermarkAfterData(), 185000)
      // Even though the left side was ahead of 185000 in the last execution, the watermark won't
      // increment until it gets past it in this execution.
      assert.strictEqual(yield* watermarkAfterData([], [200]), 185000)
      assert.strictEqual(yield* watermarkAfterData([200]), 190000)
      yield* query.stop()
      const rows = yield* spark.table("test").collect()
      assert.strictEqual(rows.length, 1)
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("complete mode", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Ints)
      // No eviction when asked to compute complete results.
      yield* testStream(windowedCount(input), "complete", [
        AddData(input, 10, 11, 12),
        CheckAnswer(w(10, 3)),
        AddData(input, 25),
        CheckAnswer(w(10, 3), w(25, 1)),
        AddData(input, 25),
        CheckAnswer(w(10, 3), w(25, 2)),
        AddData(input, 10),
        CheckAnswer(w(10, 4), w(25, 2)),
        AddData(input, 25),
        CheckAnswer(w(10, 4), w(25, 3))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("group by on raw timestamp", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Ints)
      const df = input
        .toDF()
        .withColumn("eventTime", F.timestamp_seconds("value"))
        .withWatermark("eventTime", "10 seconds")
        .groupBy("eventTime")
        .agg(F.count("*").as("count"))
        .select(F.col("eventTime").cast("long").as("eventTime"), F.col("count"))
      yield* testStream(df, "append", [
        AddData(input, 10),
        CheckAnswer(),
        AddData(input, 25), // Advance watermark to 15 seconds
        CheckAnswer({ eventTime: 10, count: 1 })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("delay threshold should not be negative", () =>
    Effect.gen(function* () {
      // Spark throws at `withWatermark`; tributary's builders never throw, so `start()` fails.
      const input = yield* MemoryStream.make(Ints)
      const df = input.toDF().withColumn("eventTime", F.timestamp_seconds("value"))
      for (const delay of ["-1 year", "1 year -13 months", "1 month -40 days", "-10 seconds"]) {
        const error = yield* Effect.flip(df.withWatermark("eventTime", delay).writeStream.format("noop").start())
        assert.strictEqual(error._tag, "AnalysisError", delay)
        assert.include(error.message, "should not be negative.", delay)
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-27340 Alias on TimeWindow expression cause watermark metadata lost", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Ints)
      const aliasWindow = input
        .toDF()
        .withColumn("eventTime", F.timestamp_seconds("value"))
        .withWatermark("eventTime", "10 seconds")
        .select(F.window("eventTime", "5 seconds").as("aliasWindow"))
      const windowedAggregation = aliasWindow
        .groupBy("aliasWindow")
        .agg(F.count("*").as("count"))
        .select(F.col("aliasWindow").getField("start").cast("long").as("start"), F.col("count"))
      yield* testStream(windowedAggregation, "append", [
        AddData(input, 10, 11, 12, 13, 14, 15),
        CheckNewAnswer(),
        AddData(input, 25), // Advance watermark to 15 seconds
        CheckNewAnswer(w(10, 5)),
        assertNumStateRowsTotal(2),
        AddData(input, 10), // Should not emit anything as data less than watermark
        CheckNewAnswer(),
        assertNumStateRowsTotal(2)
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("test no-data flag", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const key = "spark.sql.streaming.noDataMicroBatches.enabled"
      const before = yield* spark.conf.get(key)
      // Spark's testWithFlag(true) then testWithFlag(false), in one session: StartStream's
      // additionalConfs hold for one script only.
      for (const flag of [true, false]) {
        const input = yield* MemoryStream.make(Ints)
        yield* testStream(windowedCount(input), "append", [
          StartStream({ additionalConfs: { [key]: String(flag) } }),
          AddData(input, 10, 11, 12, 13, 14, 15),
          CheckNewAnswer(),
          AddData(input, 25), // Advance watermark to 15 seconds
          // Check if there is new answer if flag is set, no new answer otherwise
          flag ? CheckNewAnswer(w(10, 5)) : CheckNewAnswer()
        ])
        assert.strictEqual(yield* spark.conf.get(key), before, "the conf is back after the script")
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("MultipleWatermarkPolicy: max", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(Ints)
      const input2 = yield* MemoryStream.make(Ints)
      yield* testStream(dfWithMultipleWatermarks(input1, input2), "append", [
        StopStream,
        AddData(input1, 20),
        AddData(input2, 30), // Spark's MultiAddData: both in one batch
        StartStream(),
        CheckLastBatch(...e(20, 30)),
        checkWatermark(input1, 15), // max(20 - 10, 30 - 15) = 15
        StopStream,
        StartStream(),
        checkWatermark(input1, 15), // watermark recovered correctly
        StopStream,
        AddData(input1, 120),
        AddData(input2, 130),
        StartStream(),
        CheckLastBatch(...e(120, 130)),
        checkWatermark(input1, 115), // max(120 - 10, 130 - 15) = 115, policy recovered correctly
        AddData(input1, 150),
        CheckLastBatch(...e(150)),
        checkWatermark(input1, 140) // should advance even if one of the input has data
      ])
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.multipleWatermarkPolicy": "max" } })))
  )

  it.effect("MultipleWatermarkPolicy: min", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(Ints)
      const input2 = yield* MemoryStream.make(Ints)
      yield* testStream(dfWithMultipleWatermarks(input1, input2), "append", [
        StopStream,
        AddData(input1, 20),
        AddData(input2, 30),
        StartStream(),
        CheckLastBatch(...e(20, 30)),
        checkWatermark(input1, 10), // min(20 - 10, 30 - 15) = 10
        StopStream,
        StartStream(),
        checkWatermark(input1, 10), // watermark recovered correctly
        StopStream,
        AddData(input1, 120),
        AddData(input2, 130),
        StartStream(),
        CheckLastBatch(...e(120, 130)),
        checkWatermark(input2, 110), // min(120 - 10, 130 - 15) = 110, policy recovered correctly
        AddData(input2, 150),
        CheckLastBatch(...e(150)),
        checkWatermark(input2, 110) // does not advance when only one of the input has data
      ])
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.multipleWatermarkPolicy": "min" } })))
  )

  it.effect("MultipleWatermarkPolicy: recovery from checkpoints ignores session conf", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const input1 = yield* MemoryStream.make(Ints)
      const input2 = yield* MemoryStream.make(Ints)
      yield* spark.conf.set("spark.sql.streaming.multipleWatermarkPolicy", "max")
      yield* testStream(dfWithMultipleWatermarks(input1, input2), "append", [
        AddData(input1, 20),
        AddData(input2, 30),
        StartStream({ checkpointLocation: dir }),
        CheckLastBatch(...e(20, 30)),
        checkWatermark(input1, 15) // max(20 - 10, 30 - 15) = 15
      ])
      yield* spark.conf.set("spark.sql.streaming.multipleWatermarkPolicy", "min")
      yield* testStream(dfWithMultipleWatermarks(input1, input2), "append", [
        StartStream({ checkpointLocation: dir }),
        checkWatermark(input1, 15), // watermark recovered correctly
        StopStream,
        AddData(input1, 120),
        AddData(input2, 130),
        StartStream({ checkpointLocation: dir }),
        CheckLastBatch(...e(120, 130)),
        checkWatermark(input1, 115), // max(120 - 10, 130 - 15) = 115, policy recovered correctly
        AddData(input1, 150),
        CheckLastBatch(...e(150)),
        checkWatermark(input1, 140) // should advance even if one of the input has data
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-35815: delay thresholds (a month is 31 days)", () =>
    Effect.gen(function* () {
      const DAY = 86_400_000
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, number]> = [
        [["3 days", "Interval 3 day", "inTerval '3' day"], 3 * DAY],
        [[" 5 hours", "INTERVAL 5 hour", "interval '5' hour"], 5 * 3_600_000],
        [["\t8 minutes", "interval 8 minute", "interval '8' minute"], 8 * 60_000],
        [["10 seconds", "interval 10 second", "interval '10' second"], 10_000],
        [["1 years", "interval 1 year", "interval '1' year"], 12 * 31 * DAY],
        [["1 months", "interval 1 month", "interval '1' month"], 31 * DAY],
        [
          ["1 day 2 hours 3 minutes 4 seconds", " interval 1 day 2 hours 3 minutes 4 seconds"],
          DAY + 2 * 3_600_000 + 3 * 60_000 + 4_000
        ],
        [[" 1 year 2 months", "interval 1 year 2 month", "interval '1' year '2' month"], (12 * 31 + 2 * 31) * DAY]
      ]
      const input = yield* MemoryStream.make(Ints)
      for (const [variants, expectedMs] of cases) {
        for (const delay of variants) {
          // The delay is what the watermark trails the max event time by.
          const df = input
            .toDF()
            .withColumn("eventTime", F.timestamp_seconds("value"))
            .withWatermark("eventTime", delay)
          const plan = df.analyzed()
          assert.strictEqual(plan._tag, "Success", delay)
          if (plan._tag !== "Success") continue
          const attr = Analyzer.output(plan.success).find((a) => a.name === "eventTime")
          assert.strictEqual(attr?.eventTimeDelayMs, expectedMs, delay)
        }
      }
      for (const delay of ["1 foo", "interva 2 day", "intrval '3' day", "interval 4 foo", "interval '5' foo"]) {
        const df = input.toDF().withColumn("eventTime", F.timestamp_seconds("value")).withWatermark("eventTime", delay)
        const error = yield* Effect.flip(df.writeStream.format("noop").start())
        assert.strictEqual(error._tag, "AnalysisError", delay)
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("EventTime watermark should be ignored in batch query", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const keys = Array.from({ length: 100 }, (_, i) => ({ key: i + 1 }))
      const df = spark
        .createDataFrame(keys, Schema.Struct({ key: Schema.Int }))
        .withColumn("eventTime", F.timestamp_seconds("key"))
        .withWatermark("eventTime", "1 minute")
        .select(F.col("eventTime").cast("long").as("t"))
      const rows = yield* df.collect()
      assert.deepStrictEqual(
        rows.map((r) => r.t),
        keys.map((k) => k.key)
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a no-data batch emits a closed window under Trigger.ProcessingTime on the test clock", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Ints)
      const batchIds = (expected: ReadonlyArray<number>) =>
        AssertOnQuery(
          (q) =>
            Effect.map(q.recentProgress(), (ps) => {
              const ids = ps.filter((p) => p.durationMs.addBatch !== undefined).map((p) => p.batchId)
              return ids.length === expected.length && ids.every((id, i) => id === expected[i])
            }),
          `batches ${expected}`
        )
      yield* testStream(windowedCount(input), "append", [
        StartStream({ trigger: Trigger.ProcessingTime("1 second") }),
        AddData(input, 15),
        AdvanceClock("1 second"), // batch 0, watermark 0 -> 5
        CheckNewAnswer(),
        batchIds([0]),
        AdvanceClock("1 second"), // batch 1 without data, watermark 5: nothing closes
        CheckNewAnswer(),
        batchIds([0, 1]),
        AddData(input, 10, 12, 14),
        AdvanceClock("1 second"), // batch 2, watermark 5
        CheckNewAnswer(),
        AddData(input, 25),
        AdvanceClock("1 second"), // batch 3, watermark 5 -> 15
        CheckNewAnswer(),
        batchIds([0, 1, 2, 3]),
        AdvanceClock("1 second"), // batch 4 without data, watermark 15 closes [10, 15)
        CheckNewAnswer(w(10, 3)),
        batchIds([0, 1, 2, 3, 4]),
        AssertOnQuery(
          (q) =>
            Effect.map(
              q.lastProgress(),
              (p) => p?.numInputRows === 0 && p.sink.numOutputRows === 1 && p.stateOperators[0]?.numRowsTotal === 2
            ),
          "the no-data batch read nothing, wrote the window and left two windows in state"
        ),
        AdvanceClock("1 second"), // nothing more to do: no batch
        CheckNewAnswer(),
        batchIds([0, 1, 2, 3, 4]),
        // 10 seconds after the last batch an idle trigger is recorded (Spark's
        // noDataProgressEventInterval); as Spark's, it repeats the last batch's state operators
        // with nothing updated, and reports the watermark only.
        AdvanceClock("10 seconds"),
        CheckNewAnswer(),
        AssertOnQuery(
          (q) =>
            Effect.map(q.lastProgress(), (p) => {
              const op = p?.stateOperators[0]
              return (
                p !== null &&
                p.batchId === 5 &&
                p.durationMs.addBatch === undefined &&
                p.numInputRows === 0 &&
                JSON.stringify(p.eventTime) === JSON.stringify({ watermark: iso(15) }) &&
                p.stateOperators.length === 1 &&
                op?.operatorName === "stateStoreSave" &&
                op.numRowsTotal === 2 &&
                op.numRowsUpdated === 0 &&
                op.numRowsDroppedByWatermark === 0
              )
            }),
          "the idle progress repeats the state operators with nothing updated"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("overriding watermark should not be allowed by default", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ _1: Schema.Number, _2: Schema.Number }))
      const df = input
        .toDF()
        .withColumn("first", F.timestamp_seconds("_1"))
        .withColumn("second", F.timestamp_seconds("_2"))
        .withWatermark("first", "1 minute")
        .select("*")
        .withWatermark("second", "2 minutes")
        .groupBy(F.window("second", "1 minute"))
        .count()
      yield* testStream(df, "append", [
        AddData(input, { _1: 100, _2: 200 }),
        ExpectFailure("AnalysisError", "Redefining watermark is disallowed."),
        Execute((q) =>
          Effect.flatMap(q!.exception(), (e) =>
            Effect.sync(() => assert.include(String(e?.message), "spark.sql.streaming.statefulOperator.allowMultiple"))
          )
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("overriding watermark should not fail in compatibility mode", () =>
    Effect.gen(function* () {
      // Spark 4 refuses a second `withWatermark` downstream of another ("Redefining watermark
      // is disallowed.", above) unless `spark.sql.streaming.statefulOperator.allowMultiple` is
      // false, the compatibility mode tested here.
      const input = yield* MemoryStream.make(Schema.Struct({ _1: Schema.Number, _2: Schema.Number }))
      const df = input
        .toDF()
        .withColumn("first", F.timestamp_seconds("_1"))
        .withColumn("second", F.timestamp_seconds("_2"))
        .withWatermark("first", "1 minute")
        .select("*")
        .withWatermark("second", "2 minutes")
        .groupBy(F.window("second", "1 minute"))
        .count()
      yield* testStream(df, "append", [
        StartStream({ additionalConfs: { "spark.sql.streaming.statefulOperator.allowMultiple": "false" } }),
        AddData(input, { _1: 100, _2: 200 }),
        CheckAnswer(),
        // - watermark from first definition = 100 - 60 = 40
        // - watermark from second definition = 200 - 120 = 80
        // - global watermark = min(40, 80) = 40
        AssertOnQuery(
          (q) => Effect.map(q.lastProgress(), (p) => p?.eventTime.watermark === iso(40)),
          "the global watermark is 40 seconds"
        ),
        // The aggregation's event time is the window over "second", with its 2 minutes delay:
        // the window [180 s, 240 s) stays open at watermark 40 s, and is emitted at 240 s.
        AddData(input, { _1: 400, _2: 400 }), // watermark min(340, 280) = 280
        CheckNewAnswer({ window: { start: new Date(180_000), end: new Date(240_000) }, count: 1 })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})
