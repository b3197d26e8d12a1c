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
import { readdir, readFile, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as PlanOutput from "../../../core/analysis/PlanOutput.ts"
import {
  findEventTimeColumn,
  multipleEventTimeColumnsError
} from "../../../structured/physical/stateful/WatermarkSupport.ts"
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

/** Rewrites every entry of a checkpoint log folder (`offsets`, `commits`) through `f`. */
const rewriteLog = (dir: string, log: "offsets" | "commits", f: (text: string) => string) =>
  Effect.promise(async () => {
    const folder = join(dir, log)
    for (const name of await readdir(folder)) {
      if (!/^\d+$/.test(name)) continue
      const path = join(folder, name)
      await writeFile(path, f(await readFile(path, "utf8")))
      // a file edited by hand loses its checksum file, or it reads as damaged
      await rm(join(folder, `.${name}.crc`), { force: true })
    }
  })

/** The delay (ms) an analyzed DataFrame's output column carries, `undefined` without one. */
const delayOf = (df: { readonly analyzed: () => unknown }, name: string): number | undefined => {
  const plan = df.analyzed() as { readonly _tag: string; readonly success?: Parameters<typeof PlanOutput.output>[0] }
  if (plan._tag !== "Success" || plan.success === undefined) return undefined
  return PlanOutput.output(plan.success).find((a) => a.name === name)?.eventTimeDelayMs
}

/**
 * `buildTestQueryForMultiEventTimeColumns`: a stream-stream join whose output keeps both event
 * times (`ts1` with 1 minute, `ts2` with 2 minutes), deduplicated. Spark's join condition
 * `ts1 = ts2 + INTERVAL 10 SECONDS` is written on epoch seconds (tributary has no interval
 * arithmetic on timestamps); the same rows match.
 */
const joinWithTwoEventTimes = (input1: MemoryStream<IdTime>, input2: MemoryStream<IdTime>) => {
  const df1 = input1
    .toDF()
    .select(F.col("_1").as("id1"), F.timestamp_seconds("_2").as("ts1"))
    .withWatermark("ts1", "1 minute")
  const df2 = input2
    .toDF()
    .select(F.col("_1").as("id2"), F.timestamp_seconds("_2").as("ts2"))
    .withWatermark("ts2", "2 minutes")
  const joined = df1
    .join(
      df2,
      F.col("id1")
        .eq(F.col("id2"))
        .and(F.col("ts1").cast("long").eq(F.col("ts2").cast("long").plus(10))),
      "inner"
    )
    .select(F.col("id1"), F.col("ts1"), F.col("ts2"))
  return joined
}

const multiEventTimeColumns = (input1: MemoryStream<IdTime>, input2: MemoryStream<IdTime>) =>
  // the output of join contains both ts1 and ts2
  joinWithTwoEventTimes(input1, input2)
    .dropDuplicates()
    .select(F.col("id1"), F.col("ts1").cast("long").as("ts1"), F.col("ts2").cast("long").as("ts2"))

const IdTime = Schema.Struct({ _1: Schema.String, _2: Schema.Number })
type IdTime = typeof IdTime.Type

/** Spark's `MultiAddData((input1, rows1), (input2, rows2))`: both in one synchronous step. */
const multiAddData = <A, B>(a: MemoryStream<A>, rowsA: ReadonlyArray<A>, b: MemoryStream<B>, rowsB: ReadonlyArray<B>) =>
  Execute(
    Effect.sync(() => {
      Effect.runSync(a.addData(rowsA))
      Effect.runSync(b.addData(rowsB))
    })
  )

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

  for (const legacyIntervalEnabled of ["true", "false"]) {
    it.effect(
      `SPARK-35815: Support ANSI intervals for delay threshold (spark.sql.legacy.interval.enabled=${legacyIntervalEnabled})`,
      () =>
        Effect.gen(function* () {
          // A month is 31 days. tributary has no legacy interval type; the conf is set as Spark's
          // test sets it, and the results are the same either way, as in Spark.
          const spark = yield* Session
          yield* spark.conf.set("spark.sql.legacy.interval.enabled", legacyIntervalEnabled)
          const DAY = 86_400_000
          const cases: ReadonlyArray<readonly [ReadonlyArray<string>, number]> = [
            [["3 days", "Interval 3 day", "inTerval '3' day"], 3 * DAY],
            [[" 5 hours", "INTERVAL 5 hour", "interval '5' hour"], 5 * 3_600_000],
            [["\t8 minutes", "interval 8 minute", "interval '8' minute"], 8 * 60_000],
            [["10 seconds", "interval 10 second", "interval '10' second"], 10_000],
            [["1 years", "interval 1 year", "interval '1' year"], 12 * 31 * DAY],
            [["1 months", "interval 1 month", "interval '1' month"], 31 * DAY],
            [
              [
                "1 day 2 hours 3 minutes 4 seconds",
                " interval 1 day 2 hours 3 minutes 4 seconds",
                "\tinterval '1' day '2' hours '3' minutes '4' seconds",
                "interval '1 2:3:4' day to second"
              ],
              DAY + 2 * 3_600_000 + 3 * 60_000 + 4_000
            ],
            [
              [
                " 1 year 2 months",
                "interval 1 year 2 month",
                "interval '1' year '2' month",
                "\tinterval '1-2' year to month"
              ],
              (12 * 31 + 2 * 31) * DAY
            ]
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
              const attr = PlanOutput.output(plan.success).find((a) => a.name === "eventTime")
              assert.strictEqual(attr?.eventTimeDelayMs, expectedMs, delay)
            }
          }
          for (const delay of [
            "1 foo",
            "interva 2 day",
            "intrval '3' day",
            "interval 4 foo",
            "interval '5' foo",
            "interval '1 2:3:4' day to hour",
            "interval '1 2' year to month"
          ]) {
            const df = input
              .toDF()
              .withColumn("eventTime", F.timestamp_seconds("value"))
              .withWatermark("eventTime", delay)
            const error = yield* Effect.flip(df.writeStream.format("noop").start())
            assert.strictEqual(error._tag, "AnalysisError", delay)
          }
        }).pipe(Effect.provide(Session.layer()))
    )
  }

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

  it.effect("recovery from Spark ver 2.3.1 commit log without commit metadata (SPARK-24699)", () =>
    Effect.gen(function* () {
      // Spark copies a checkpoint written by Spark 2.3.1 (batches of 15 and of 10, 12, 14; offset
      // log watermark 5; commit entries without `nextBatchWatermarkMs`). Here the same
      // checkpoint is written by a first run, then its commit entries lose their metadata.
      // On restart Spark keeps the offset log's watermark when the commit has none
      // (`MicroBatchExecution.populateStartOffsets`: max(current, nextBatchWatermarkMs)).
      const dir = yield* tempDir()
      const input = yield* MemoryStream.make(Ints)
      const awaitTermination = Execute((q) => q!.awaitTermination())
      yield* testStream(windowedCount(input), "append", [
        StartStream({ checkpointLocation: dir }),
        AddData(input, 15), // watermark should be updated to 15 - 10 = 5
        CheckNewAnswer(),
        AddData(input, 10, 12, 14), // watermark should stay at 5
        CheckNewAnswer(),
        StopStream,
        Execute(rewriteLog(dir, "commits", (text) => `${text.split("\n")[0]}\n{}`)),

        AddData(input, 25),
        StartStream({ trigger: Trigger.AvailableNow(), checkpointLocation: dir }),
        awaitTermination,
        CheckNewAnswer(w(10, 3)), // watermark should be updated to 25 - 10 = 15

        AddData(input, 50),
        StartStream({ trigger: Trigger.AvailableNow(), checkpointLocation: dir }),
        awaitTermination,
        CheckNewAnswer(w(15, 1), w(25, 1)), // watermark should be updated to 50 - 10 = 40

        AddData(input, 50),
        StartStream({ trigger: Trigger.AvailableNow(), checkpointLocation: dir }),
        awaitTermination,
        CheckNewAnswer()
      ]).pipe(Effect.ensuring(removeDir(dir)))
    }).pipe(Effect.provide(Session.layer()))
  )

  // Deviation: on restart tributary takes the watermark from the last commit entry alone
  // (structured/execution/MicroBatchExecution.ts, `#watermarkMs = lastCommit[1].nextBatchWatermarkMs`
  // in the restore of a committed batch), so a commit without metadata restarts at watermark 0
  // (reported 0 instead of 5). Spark's `populateStartOffsets` first sets the watermark from the
  // offset log's `batchWatermarkMs` and then takes max(current, nextBatchWatermarkMs).
  it.effect("recovery from a commit log without commit metadata keeps the offset log's watermark", () =>
    Effect.gen(function* () {
      // The same checkpoint as above, and the Trigger.Once run of Spark's SPARK-24699 test (the
      // suite's version before Trigger.AvailableNow): the first run after the restart still
      // uses the offset log's watermark 5 (a commit without metadata reads as 0, and Spark
      // takes the max of the two).
      const dir = yield* tempDir()
      const input = yield* MemoryStream.make(Ints)
      const awaitTermination = Execute((q) => q!.awaitTermination())
      yield* testStream(windowedCount(input), "append", [
        StartStream({ checkpointLocation: dir }),
        AddData(input, 15),
        CheckNewAnswer(),
        AddData(input, 10, 12, 14),
        CheckNewAnswer(),
        StopStream,
        Execute(rewriteLog(dir, "commits", (text) => `${text.split("\n")[0]}\n{}`)),
        AddData(input, 25),
        StartStream({ trigger: Trigger.Once(), checkpointLocation: dir }),
        awaitTermination,
        CheckNewAnswer(),
        assertEventStatsSeconds(25, 25, 25, 5),
        AddData(input, 50),
        StartStream({ trigger: Trigger.Once(), checkpointLocation: dir }),
        awaitTermination,
        CheckNewAnswer(w(10, 3)), // watermark = 15 is used to generate this
        assertEventStatsSeconds(50, 50, 50, 15)
      ]).pipe(Effect.ensuring(removeDir(dir)))
    }).pipe(Effect.provide(Session.layer()))
  )

  // Deviation: tributary picks the first event-time column whatever the conf; Spark's
  // `WatermarkSupport.findEventTimeColumn(attrs, allowMultipleEventTimeColumns = false)` (used by
  // `StreamingDeduplicateExec` and the other stateful operators when
  // `spark.sql.streaming.statefulOperator.allowMultiple` is true) fails when the input carries
  // more than one distinct event-time attribute. WatermarkSupport.ts now exports
  // `multipleEventTimeColumnsError` for the operators to call; the dedup operator
  // (structured/physical/stateful/StreamingDeduplicateExec.ts) does not call it yet.
  it.effect("multiple event time columns in an input DataFrame for stateful operator is not allowed", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(IdTime)
      const input2 = yield* MemoryStream.make(IdTime)
      // Spark: `WatermarkSupport.findEventTimeColumn` with allowMultipleEventTimeColumns = false
      // (the default, `spark.sql.streaming.statefulOperator.allowMultiple` = true) fails the
      // dedup with _LEGACY_ERROR_TEMP_3077 when the batch runs (Spark's `ExpectFailure` after
      // `MultiAddData`). Written without `testStream` so that a failure at `start()` counts
      // too, and so that a query that does not fail ends the test instead of waiting forever.
      const started = yield* Effect.exit(
        multiEventTimeColumns(input1, input2).writeStream.format("noop").outputMode("append").start()
      )
      let message = ""
      if (Exit.isFailure(started)) {
        message = Cause.pretty(started.cause)
      } else {
        const q = started.value
        Effect.runSync(
          input1.addData([
            { _1: "A", _2: 200 },
            { _1: "B", _2: 300 }
          ])
        )
        Effect.runSync(
          input2.addData([
            { _1: "A", _2: 190 },
            { _1: "C", _2: 350 }
          ])
        )
        const run = yield* Effect.exit(q.processAllAvailable())
        const error = yield* q.exception()
        yield* Effect.ignore(q.stop())
        assert.isTrue(Exit.isFailure(run), "the query fails")
        message = `${Exit.isFailure(run) ? Cause.pretty(run.cause) : ""}\n${String(error?.message)}`
      }
      assert.include(message, "More than one event time columns are available.")
      assert.include(message, "Please ensure there is at most one event time column per stream.")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("multiple event time columns: the check of Spark's findEventTimeColumn", () =>
    Effect.gen(function* () {
      // What the stateful operator over the join sees: ts1 (1 minute) and ts2 (2 minutes).
      const input1 = yield* MemoryStream.make(IdTime)
      const input2 = yield* MemoryStream.make(IdTime)
      const joined = joinWithTwoEventTimes(input1, input2)
      assert.strictEqual(delayOf(joined, "ts1"), 60_000)
      assert.strictEqual(delayOf(joined, "ts2"), 120_000)
      const plan = joined.analyzed()
      assert.strictEqual(plan._tag, "Success")
      if (plan._tag !== "Success") return
      const attrs = PlanOutput.output(plan.success)
      const message = multipleEventTimeColumnsError(attrs)
      assert.include(message, "More than one event time columns are available.")
      assert.include(message, "Please ensure there is at most one event time column per stream.")
      // compatibility mode: the first occurrence wins
      assert.strictEqual(findEventTimeColumn(attrs)?.name, "ts1")
      // the same attribute twice (a projection repeating it) is not "more than one"
      const ts1 = attrs.find((a) => a.name === "ts1")!
      assert.isUndefined(multipleEventTimeColumnsError([ts1, ts1]))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect(
    "stateful operator should pick the first occurrence of event time column if there is multiple event time columns in compatibility mode",
    () =>
      Effect.gen(function* () {
        const input1 = yield* MemoryStream.make(IdTime)
        const input2 = yield* MemoryStream.make(IdTime)
        yield* testStream(multiEventTimeColumns(input1, input2), "append", [
          StartStream({ additionalConfs: { "spark.sql.streaming.statefulOperator.allowMultiple": "false" } }),
          multiAddData(
            input1,
            [
              { _1: "A", _2: 200 },
              { _1: "B", _2: 300 }
            ],
            input2,
            [
              { _1: "A", _2: 190 },
              { _1: "C", _2: 350 }
            ]
          ),
          CheckAnswer({ id1: "A", ts1: 200, ts2: 190 })
        ])
      }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-21565: watermark operator accepts attributes from replacement", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      // Spark writes `Seq(("a", 100.0, new Timestamp(100L)))` with `df.write.json`.
      yield* Effect.promise(() =>
        writeFile(
          join(dir, "part-00000.json"),
          `${JSON.stringify({ symbol: "a", price: 100.0, eventTime: "1970-01-01T00:00:00.100Z" })}\n`
        )
      )
      const input = spark.readStream.schema("symbol STRING, price DOUBLE, eventTime TIMESTAMP").json(dir)
      const groupEvents = input
        .withWatermark("eventTime", "2 seconds")
        .groupBy("symbol", "eventTime")
        .agg(F.count("price").as("count"))
        .select("symbol", "eventTime", "count")
      const q = yield* groupEvents.writeStream.outputMode("append").format("console").start()
      yield* q.processAllAvailable().pipe(Effect.ensuring(Effect.ignore(q.stop())))
      assert.isNull(yield* q.exception())
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-27340 Alias on TimeWindow expression keeps the eventTime metadata in the top level alias", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Ints)
      const aliasWindow = input
        .toDF()
        .withColumn("eventTime", F.timestamp_seconds("value"))
        .withWatermark("eventTime", "10 seconds")
        .select(F.window("eventTime", "5 seconds").as("aliasWindow"))
      // Check the eventTime metadata is kept in the top level alias.
      assert.strictEqual(delayOf(aliasWindow, "aliasWindow"), 10_000)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("overriding watermark in compatibility mode: the aggregate's event time is the window with 2 minutes", () =>
    Effect.gen(function* () {
      // Spark's check of the StateStoreSaveExec's key expressions: exactly one event-time
      // column, `window`, with the second definition's delay (120 s).
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
      assert.strictEqual(delayOf(df, "window"), 120_000)
      assert.strictEqual(delayOf(df, "count"), undefined)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("MultipleWatermarkPolicy: recovery from Spark ver 2.3.1 checkpoints ensures min policy", () =>
    Effect.gen(function* () {
      // Spark's 2.3.1 checkpoint (input1 20, input2 30, input1 10) has no
      // multipleWatermarkPolicy in its offset log conf; here a first run writes the same
      // checkpoint and the key is then removed from every offsets entry.
      const spark = yield* Session
      const key = "spark.sql.streaming.multipleWatermarkPolicy"
      const dir = yield* tempDir()
      const input1 = yield* MemoryStream.make(Ints)
      const input2 = yield* MemoryStream.make(Ints)
      yield* testStream(dfWithMultipleWatermarks(input1, input2), "append", [
        StartStream({ checkpointLocation: dir }),
        AddData(input1, 20),
        CheckNewAnswer(...e(20)),
        AddData(input2, 30),
        CheckNewAnswer(...e(30)),
        AddData(input1, 10),
        CheckNewAnswer(...e(10))
      ])
      yield* rewriteLog(dir, "offsets", (text) => {
        const lines = text.split("\n")
        const meta = JSON.parse(lines[1]) as { conf: Record<string, string> }
        assert.isDefined(meta.conf[key])
        delete meta.conf[key]
        lines[1] = JSON.stringify(meta)
        return lines.join("\n")
      })
      yield* spark.conf.set(key, "max")
      yield* testStream(dfWithMultipleWatermarks(input1, input2), "append", [
        StartStream({ checkpointLocation: dir }),
        Execute((q) => q!.processAllAvailable()),
        multiAddData(input1, [120], input2, [130]),
        CheckLastBatch(...e(120, 130)),
        checkWatermark(input2, 110), // should calculate 'min' even if session conf has 'max' policy
        AddData(input2, 150),
        CheckLastBatch(...e(150)),
        checkWatermark(input2, 110)
      ]).pipe(Effect.ensuring(removeDir(dir)))
    }).pipe(Effect.provide(Session.layer()))
  )

  // Spark's `SQLConf.STREAMING_MULTIPLE_WATERMARK_POLICY` has a `checkValue`, so `spark.conf.set`
  // fails (IllegalArgumentException there, AnalysisError here) with "Valid values are 'min' and 'max'".
  it("MultipleWatermarkPolicy: fail on incorrect conf values", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const spark = yield* Session
        for (const value of ["", "random"]) {
          const exit = yield* Effect.exit(spark.conf.set("spark.sql.streaming.multipleWatermarkPolicy", value))
          assert.isTrue(Exit.isFailure(exit), `"${value}" is refused`)
          if (Exit.isFailure(exit)) {
            assert.include(Cause.pretty(exit.cause).toLowerCase(), "valid values are 'min' and 'max'")
          }
        }
        // A refused value leaves the conf as it was; a valid one is stored lower-cased.
        assert.strictEqual(yield* spark.conf.get("spark.sql.streaming.multipleWatermarkPolicy"), "min")
        yield* spark.conf.set("spark.sql.streaming.multipleWatermarkPolicy", "MAX")
        assert.strictEqual(yield* spark.conf.get("spark.sql.streaming.multipleWatermarkPolicy"), "max")
        const notInt = yield* Effect.flip(spark.conf.set("spark.sql.shuffle.partitions", "abc"))
        assert.strictEqual(notInt.message, "spark.sql.shuffle.partitions should be int, but was abc")
      }).pipe(Effect.provide(Session.layer()))
    ))
})
