/**
 * Spark's `MultiStatefulOperatorsSuite` (Spark 4: chains of stateful operators with the
 * watermark propagated between them, `WatermarkPropagator`) as `testStream` scripts, with
 * Spark's inputs, expected outputs and the suite's own metric checks: `assertNumStateRows` reads
 * `numRowsTotal` of every state operator from the last progress, `assertNumRowsDroppedByWatermark`
 * reads `numRowsDroppedByWatermark` from the last progress of a batch that had input rows. The
 * scripts without joins run with both state store providers.
 *
 * Differences from Spark's scripts:
 * - `MultiAddData(a, …)(b, …)` (both sources in one batch) is an `Execute` that adds to both
 *   streams in one synchronous step, so no batch can run in between;
 * - tributary has no interval arithmetic on timestamps, so Spark's range conditions
 *   (`s1.timestamp1 BETWEEN s2.timestamp2 - INTERVAL 1 hour AND …`) are written on the epoch
 *   seconds, `cast(timestamp1 as long)`: the same rows match, and the state watermark solver
 *   reads `cast(ts AS long)` in seconds as Spark's does;
 * - Spark's `Timestamp.valueOf` reads the JVM zone; the zone does not change which rows join or
 *   which windows they fall in, so the scripts use UTC instants (the session zone is UTC, as the
 *   scripts that cast windows to strings set it);
 * - Spark's `Execute` checks of `lastExecution.executedPlan`'s `eventTimeWatermarkForLateEvents`
 *   / `…ForEviction` compute the operators' watermarks from the running query's physical plan
 *   and the global watermarks of its last two batches (`WatermarkPropagator.ts`), and the output
 *   watermark script calls `produceOutputWatermark(join, 0)` on the running plan as Spark does;
 * - timestamps are milliseconds (docs/architecture.md), so `window_time(window)` is `end - 1 ms` and its
 *   `unix_micros` ends in `999000` where Spark's ends in `999999`.
 *
 * Also kept: the two left outer join scripts of Spark 3.5's version of the suite (run there with
 * `spark.sql.streaming.unsupportedOperationCheck=false`). Not ported: Spark 3.5's "join on time
 * interval -> window agg, append mode, should fail" (Spark 4 removed the check it tested: the
 * watermark propagation makes that query correct, and Spark 4 runs it).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../mod.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import type { StreamingQuery } from "../../../structured/contracts/StreamingQuery.ts"
import type { StreamingQueryProgress } from "../../../structured/contracts/StreamingQueryProgress.ts"
import type { SparkPlan } from "../../../structured/physical/SparkPlan.ts"
import { children } from "../../../structured/physical/SparkPlan.ts"
import type { StatefulContext } from "../../../structured/physical/stateful/StatefulContext.ts"
import {
  operatorWatermarks,
  produceOutputWatermark
} from "../../../structured/physical/stateful/WatermarkPropagator.ts"
import {
  AddData,
  AssertOnQuery,
  CheckAnswer,
  CheckNewAnswer,
  Execute,
  StartStream,
  type StreamAction,
  testStream
} from "../../../structured/testing.ts"
import { providers } from "./StreamingTestKit.ts"

const Ints = Schema.Int

/** Spark's `MultiAddData`: rows for several streams in the same batch. */
const MultiAddData = (...pairs: ReadonlyArray<readonly [MemoryStream<any>, ReadonlyArray<unknown>]>): StreamAction =>
  Execute(
    Effect.sync(() => {
      for (const [source, rows] of pairs) Effect.runSync(source.addData(rows))
    })
  )

/** The progresses of the triggers that ran a batch (Spark's `recentProgress` has no others in these scripts). */
const executed = (q: StreamingQuery): Effect.Effect<ReadonlyArray<StreamingQueryProgress>, unknown> =>
  Effect.flatMap(q.processAllAvailable(), () =>
    Effect.map(q.recentProgress(), (ps) => ps.filter((p) => p.durationMs.addBatch !== undefined))
  )

const fail = (message: string): Effect.Effect<never, Error> => Effect.fail(new Error(message))

/** The suite's private `assertNumStateRows`: `numRowsTotal` of every state operator in the last progress. */
const assertNumStateRows = (expected: ReadonlyArray<number>): StreamAction =>
  AssertOnQuery(
    (q) =>
      Effect.gen(function* () {
        const last = (yield* executed(q)).at(-1)
        const actual = last?.stateOperators.map((o) => o.numRowsTotal) ?? []
        if (actual.join() !== expected.join()) return yield* fail(`numRowsTotal ${actual} != ${expected}`)
        return true
      }).pipe(Effect.tapError((e) => Effect.logError(String(e)))),
    `numRowsTotal = ${expected}`
  )

/**
 * The suite's private `assertNumRowsDroppedByWatermark`: `numRowsDroppedByWatermark` of every
 * state operator in the last progress with input rows (no-data batches are skipped).
 */
const assertNumRowsDroppedByWatermark = (expected: ReadonlyArray<number>): StreamAction =>
  AssertOnQuery(
    (q) =>
      Effect.gen(function* () {
        const last = (yield* executed(q)).filter((p) => p.numInputRows !== 0).at(-1)
        const actual = last?.stateOperators.map((o) => o.numRowsDroppedByWatermark) ?? []
        if (actual.join() !== expected.join()) return yield* fail(`numRowsDroppedByWatermark ${actual} != ${expected}`)
        return true
      }).pipe(Effect.tapError((e) => Effect.logError(String(e)))),
    `numRowsDroppedByWatermark = ${expected}`
  )

const IdTime = Schema.Struct({ _1: Schema.String, _2: Schema.Date })

/** `Timestamp.valueOf(s).getTime` in UTC. */
const ms = (s: string) => Date.parse(`${s.replace(" ", "T")}Z`)

/** The running query's physical plan (Spark's `query.lastExecution.executedPlan`). */
const physicalPlan = (q: StreamingQuery): SparkPlan => (q as unknown as { readonly physical: SparkPlan }).physical

/** The first node of `plan` (children first) with tag `tag`. */
const findNode = <Tag extends SparkPlan["_tag"]>(plan: SparkPlan, tag: Tag): Extract<SparkPlan, { _tag: Tag }> => {
  const search = (p: SparkPlan): Extract<SparkPlan, { _tag: Tag }> | undefined => {
    for (const c of children(p)) {
      const found = search(c)
      if (found !== undefined) return found
    }
    return p._tag === tag ? (p as Extract<SparkPlan, { _tag: Tag }>) : undefined
  }
  const found = search(plan)
  if (found === undefined) throw new Error(`no ${tag} in the plan`)
  return found
}

/**
 * Spark's `Execute { query => … }` checks of `eventTimeWatermarkForLateEvents` and
 * `eventTimeWatermarkForEviction` of the join and the aggregation in `lastExecution`: the
 * watermarks the operators ran with in the last batch, propagated from the global watermarks of
 * the last batch (eviction) and the one before it (late events), as the operators compute them.
 */
const assertOperatorWatermarks = (expected: {
  readonly join: readonly [number, number]
  readonly aggregate: readonly [number, number]
}): StreamAction =>
  Execute((q) =>
    Effect.gen(function* () {
      const ps = yield* executed(q!)
      const global = (p: StreamingQueryProgress | undefined) =>
        p === undefined || p.eventTime.watermark === undefined ? 0 : Date.parse(p.eventTime.watermark)
      const ctx = {
        watermarkForLateEventsMs: global(ps.at(-2)),
        watermarkForEvictionMs: global(ps.at(-1))
      } as StatefulContext
      const plan = physicalPlan(q!)
      const of = (node: SparkPlan) => {
        const w = operatorWatermarks(node, ctx)
        return [w.lateEventsMs, w.evictionMs]
      }
      assert.deepStrictEqual(
        {
          join: of(findNode(plan, "StreamingSymmetricHashJoinExec")),
          aggregate: of(findNode(plan, "StatefulAggregateExec"))
        },
        { join: [...expected.join], aggregate: [...expected.aggregate] }
      )
    })
  )

/** `timestamp_seconds(value)` as `eventTime`, with a watermark of `delay`. */
const withEventTime = (input: MemoryStream<number>, delay: string): DataFrame<any> =>
  (input.toDF() as DataFrame<any>)
    .withColumn("eventTime", F.timestamp_seconds("value"))
    .withWatermark("eventTime", delay)

const start = (c: string) => F.col(c).getField("start").cast("long")
const end = (c: string) => F.col(c).getField("end").cast("long")

/** Spark's `Timestamp.valueOf("yyyy-MM-dd HH:mm:ss[.SSS]")`, read as UTC. */
const ts = (s: string) => new Date(`${s.replace(" ", "T")}Z`)

const windowAggThenWindowAgg = (input: MemoryStream<number>) =>
  withEventTime(input, "0 seconds")
    .groupBy(F.window("eventTime", "5 seconds").as("window"))
    .agg(F.count("*").as("count"))
    .groupBy(F.window("window", "10 seconds"))
    .agg(F.count("*").as("count"), F.sum("count").as("sum"))
    .select(start("window").as("start"), F.col("count"), F.col("sum"))

describe("MultiStatefulOperatorsSuite", () => {
  for (const provider of providers) {
    describe(provider.name, () => {
      // `window(window, …)` and `window(window_time(window), …)` keep the window column's
      // watermark: Spark's `ResolveWindowTime` (TimeWindowResolution.buildWindowTimeRewrite)
      // makes `window_time` an attribute carrying the window column's metadata, so the second
      // window is watermarked and append mode is allowed.
      it.effect("window agg -> window agg, append mode", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Ints)
          const r = (start: number, count: number, sum: number) => ({ start, count, sum })
          yield* testStream(windowAggThenWindowAgg(input), "append", [
            AddData(input, ...range(10, 21)),
            // op1 emits [10, 15) 5 and [15, 20) 5 in the no-data batch at watermark 21; op2
            // (input watermark 0 -> 21) aggregates them into [10, 20) and emits it.
            CheckNewAnswer(r(10, 2, 10)),
            assertNumStateRows([0, 1]),
            assertNumRowsDroppedByWatermark([0, 0]),

            AddData(input, ...range(10, 29)),
            // op1 (late-events watermark 21) drops [10, 15) and [15, 20): two rows of its
            // partial aggregate, counted as dropped by watermark.
            CheckNewAnswer(),
            assertNumStateRows([1, 1]),
            assertNumRowsDroppedByWatermark([0, 2]),

            // Move the watermark.
            AddData(input, 30, 31),
            CheckNewAnswer(r(20, 2, 12)),
            assertNumStateRows([0, 1]),
            assertNumRowsDroppedByWatermark([0, 0])
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      // As "window agg -> window agg": a window over `window_time(window)` keeps the watermark.
      it.effect("agg -> agg -> agg, append mode", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Ints)
          const stream = withEventTime(input, "0 seconds")
            .groupBy(F.window("eventTime", "5 seconds").as("window"))
            .agg(F.count("*").as("count"))
            .groupBy(F.window(F.window_time("window"), "10 seconds"))
            .agg(F.count("*").as("count"), F.sum("count").as("sum"))
            .groupBy(F.window(F.window_time("window"), "20 seconds"))
            .agg(F.count("*").as("count"), F.sum("sum").as("sum"))
            .select(start("window").as("start"), end("window").as("end"), F.col("count"), F.col("sum"))
          const r = (start: number, end: number, count: number, sum: number) => ({ start, end, count, sum })
          yield* testStream(stream, "append", [
            AddData(input, ...range(0, 37)),
            CheckNewAnswer(r(0, 20, 2, 20)),
            assertNumStateRows([1, 1, 1]),
            assertNumRowsDroppedByWatermark([0, 0, 0]),

            AddData(input, ...range(30, 60)),
            // op1 (late-events watermark 37) drops [30, 35), one row of its partial aggregate;
            // 35, 36, 37 are still in effect.
            CheckNewAnswer(r(20, 40, 2, 23), r(40, 60, 2, 20)),
            assertNumStateRows([0, 0, 1]),
            assertNumRowsDroppedByWatermark([0, 0, 1])
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("stream deduplication -> aggregation, append mode", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Ints)
          const deduplication = withEventTime(input, "10 seconds").dropDuplicates(["value", "eventTime"])
          const windowedAggregation = deduplication
            .groupBy(F.window("eventTime", "5 seconds").as("window"))
            .agg(F.count("*").as("count"), F.sum("value").as("sum"))
            .select(start("window").as("start"), F.col("count"))
          yield* testStream(windowedAggregation, "append", [
            AddData(input, ...range(1, 15)),
            CheckNewAnswer({ start: 0, count: 4 }),
            assertNumStateRows([3, 10]),
            assertNumRowsDroppedByWatermark([0, 0])
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("join -> window agg, append mode", () =>
        Effect.gen(function* () {
          const input1 = yield* MemoryStream.make(Ints)
          const input2 = yield* MemoryStream.make(Ints)
          const df1 = (input1.toDF() as DataFrame<any>)
            .withColumnRenamed("value", "value1")
            .withColumn("eventTime1", F.timestamp_seconds("value1"))
            .withWatermark("eventTime1", "0 seconds")
          const df2 = (input2.toDF() as DataFrame<any>)
            .withColumnRenamed("value", "value2")
            .withColumn("eventTime2", F.timestamp_seconds("value2"))
            .withWatermark("eventTime2", "0 seconds")
          const stream = df1
            .join(df2, F.col("eventTime1").eq(F.col("eventTime2")), "inner")
            .groupBy(F.window("eventTime1", "5 seconds").as("window"))
            .agg(F.count("*").as("count"))
            .select(start("window").as("start"), F.col("count"))
          yield* testStream(stream, "append", [
            MultiAddData([input1, range(1, 4)], [input2, range(1, 4)]),
            CheckNewAnswer(),
            assertNumStateRows([1, 0]),
            assertNumRowsDroppedByWatermark([0, 0]),

            // Move the watermark
            MultiAddData([input1, [5]], [input2, [5]]),
            CheckNewAnswer({ start: 0, count: 4 }),
            assertNumStateRows([1, 0]),
            assertNumRowsDroppedByWatermark([0, 0])
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      // Spark's `MemoryStream.commit` trims the committed batches, so the second query over the
      // same stream reads only the rows added after the first query ended; and
      // `withColumn("windowTime", window_time(window))` keeps the window column's watermark
      // (Spark's `ResolveWindowTime`), so the dedup state is trimmed: numRowsTotal (0, 1).
      it.effect("aggregation -> stream deduplication, append mode", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Ints)
          const aggStream = withEventTime(input, "0 seconds")
            .groupBy(F.window("eventTime", "5 seconds").as("window"))
            .agg(F.count("*").as("count"))
            .withColumn("windowEnd", F.col("window.end"))

          // dropDuplicates from aggStream without event time column for dropDuplicates - the
          // state does not get trimmed due to watermark advancement.
          const dedupNoEventTime = aggStream
            .dropDuplicates(["count", "windowEnd"])
            .select(F.col("windowEnd").cast("long").as("windowEnd"), F.col("count"))
          yield* testStream(dedupNoEventTime, "append", [
            AddData(input, 1, 5, 10, 15),
            CheckNewAnswer({ windowEnd: 5, count: 1 }, { windowEnd: 10, count: 1 }, { windowEnd: 15, count: 1 }),
            assertNumStateRows([3, 1]),
            assertNumRowsDroppedByWatermark([0, 0])
          ])

          // Similar to the above but add event time. The dedup state will get trimmed.
          const dedupWithEventTime = aggStream
            .withColumn("windowTime", F.window_time("window"))
            .withColumn("windowTimeMicros", F.unix_micros("windowTime"))
            .dropDuplicates(["count", "windowEnd", "windowTime"])
            .select(
              F.col("windowEnd").cast("long").as("windowEnd"),
              F.col("windowTimeMicros").cast("long").as("windowTimeMicros"),
              F.col("count")
            )
          const r = (windowEnd: number, windowTimeMicros: number, count: number) => ({
            windowEnd,
            windowTimeMicros,
            count
          })
          yield* testStream(dedupWithEventTime, "append", [
            AddData(input, 1, 5, 10, 15),
            // Spark: (5, 4999999, 1), (10, 9999999, 1), (15, 14999999, 1) at microsecond precision
            CheckNewAnswer(r(5, 4_999_000, 1), r(10, 9_999_000, 1), r(15, 14_999_000, 1)),
            assertNumStateRows([0, 1]),
            assertNumRowsDroppedByWatermark([0, 0])
          ])
        }).pipe(Effect.provide(provider.layer()))
      )
    })
  }

  it.effect("join with range join on non-time intervals -> window agg, append mode, shouldn't fail", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(Ints)
      const input2 = yield* MemoryStream.make(Schema.Struct({ _1: Schema.Int, _2: Schema.Int }))
      const df1 = (input1.toDF() as DataFrame<any>)
        .withColumnRenamed("value", "value1")
        .withColumn("eventTime1", F.timestamp_seconds("value1"))
        .withColumn("v1", F.timestamp_seconds("value1"))
        .withWatermark("eventTime1", "0 seconds")
      const df2 = (input2.toDF() as DataFrame<any>)
        .toDF("start", "end")
        .withColumn("eventTime2Start", F.timestamp_seconds("start"))
        .withColumn("start2", F.timestamp_seconds("start"))
        .withColumn("end2", F.timestamp_seconds("end"))
        .withWatermark("eventTime2Start", "0 seconds")
      const stream = df1
        .join(
          df2,
          F.col("v1")
            .geq(F.col("start2"))
            .and(F.col("v1").lt(F.col("end2")))
            .and(F.col("eventTime1").eq(F.col("start2"))),
          "inner"
        )
        .groupBy(F.window("eventTime1", "5 seconds").as("window"))
        .agg(F.count("*").as("count"))
        .select(start("window").as("start"), F.col("count"))
      const p = (_1: number, _2: number) => ({ _1, _2 })
      yield* testStream(stream, "append", [
        AddData(input1, 1, 2, 3, 4),
        AddData(input2, p(1, 2), p(2, 3), p(3, 4), p(4, 5)),
        CheckNewAnswer(),
        assertNumStateRows([1, 0]),
        assertNumRowsDroppedByWatermark([0, 0])
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const side of ["left", "right"] as const) {
    // The right outer script swaps the inputs and groups by the right side's event time: both
    // sides' event-time columns stay usable after the join.
    it.effect(`stream-stream time interval ${side} outer join -> aggregation, append mode`, () =>
      Effect.gen(function* () {
        const input1 = yield* MemoryStream.make(IdTime)
        const input2 = yield* MemoryStream.make(IdTime)
        const s1 = (input1.toDF() as DataFrame<any>).toDF("id1", "timestamp1").withWatermark("timestamp1", "0 seconds")
        const s2 = (input2.toDF() as DataFrame<any>).toDF("id2", "timestamp2").withWatermark("timestamp2", "0 seconds")
        // s1.timestamp1 BETWEEN s2.timestamp2 - INTERVAL 1 hour AND s2.timestamp2 + INTERVAL 1 hour
        const t1 = F.col("timestamp1").cast("long")
        const t2 = F.col("timestamp2").cast("long")
        const s3 = s1.as("s1").join(
          s2.as("s2"),
          F.col("id1")
            .eq(F.col("id2"))
            .and(t1.geq(t2.minus(3600)))
            .and(t1.leq(t2.plus(3600))),
          side === "left" ? "left_outer" : "right_outer"
        )
        const agg = s3
          .groupBy(F.window(side === "left" ? "timestamp1" : "timestamp2", "10 minutes"))
          .agg(F.count("*").as("cnt"))
          .select(
            F.col("window.start").cast("string").as("window_start"),
            F.col("window.end").cast("string").as("window_end"),
            F.col("cnt")
          )
        const [outer, inner] = side === "left" ? [input1, input2] : [input2, input1]
        const it = (id: string, t: string) => ({ _1: id, _2: ts(t) })
        yield* testStream(agg, "append", [
          MultiAddData(
            [outer, [it("1", "2023-01-01 01:00:10"), it("2", "2023-01-01 01:00:30")]],
            [inner, [it("1", "2023-01-01 01:00:20")]]
          ),
          // no-data batch: global watermark 01:00:20; the join's output watermark is one hour
          // (and 1 ms) earlier, which the aggregation evicts with.
          CheckAnswer(),
          assertOperatorWatermarks({
            join: [0, ms("2023-01-01 01:00:20")],
            aggregate: [0, ms("2023-01-01 00:00:20") - 1]
          }),

          MultiAddData([outer, [it("5", "2023-01-01 01:15:00")]], [inner, [it("6", "2023-01-01 01:15:00")]]),
          CheckAnswer(),
          assertOperatorWatermarks({
            join: [ms("2023-01-01 01:00:20"), ms("2023-01-01 01:15:00")],
            aggregate: [ms("2023-01-01 00:00:20") - 1, ms("2023-01-01 00:15:00") - 1]
          }),

          MultiAddData([outer, [it("5", "2023-01-01 02:16:00")]], [inner, [it("6", "2023-01-01 02:16:00")]]),
          // the join evicts the unmatched (2, 01:00:30) and (5, 01:15:00) with null partners;
          // the aggregation (late-events watermark 00:14:59.999) keeps both, closes [01:00, 01:10)
          CheckAnswer({ window_start: "2023-01-01 01:00:00", window_end: "2023-01-01 01:10:00", cnt: 2 }),
          assertOperatorWatermarks({
            join: [ms("2023-01-01 01:15:00"), ms("2023-01-01 02:16:00")],
            aggregate: [ms("2023-01-01 00:15:00") - 1, ms("2023-01-01 01:16:00") - 1]
          })
        ])
      }).pipe(Effect.provide(Session.layer()))
    )
  }

  it.effect("stream-stream time interval join - output watermark for various intervals", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(IdTime)
      const df1 = (input1.toDF() as DataFrame<any>)
        .select(F.col("_1").as("leftId"), F.col("_2").as("leftEventTime"))
        .withWatermark("leftEventTime", "5 minutes")
      const input2 = yield* MemoryStream.make(IdTime)
      const df2 = (input2.toDF() as DataFrame<any>)
        .select(F.col("_1").as("rightId"), F.col("_2").as("rightEventTime"))
        .withWatermark("rightEventTime", "10 minutes")
      const lt = F.col("leftEventTime").cast("long")
      const rt = F.col("rightEventTime").cast("long")
      const ids = F.col("leftId").eq(F.col("rightId"))

      const testOutputWatermarkInJoin = (df: DataFrame<any>, expectedOutputWatermark: number) =>
        testStream(df, "append", [
          // dummy row to trigger execution
          AddData(input1, { _1: "1", _2: ts("2023-01-01 01:00:10") }),
          CheckAnswer(),
          Execute((q) =>
            Effect.sync(() => {
              const join = findNode(physicalPlan(q!), "StreamingSymmetricHashJoinExec")
              assert.strictEqual(produceOutputWatermark(join, 0), expectedOutputWatermark)
            })
          )
        ])

      // leftEventTime BETWEEN rightEventTime AND rightEventTime + INTERVAL 40 seconds:
      // right row should wait for additional 40 seconds (+ 1 ms) to be matched with left rows
      yield* testOutputWatermarkInJoin(df1.join(df2, ids.and(lt.geq(rt)).and(lt.leq(rt.plus(40)))), -40 * 1000 - 1)
      // leftEventTime BETWEEN rightEventTime - INTERVAL 30 seconds AND rightEventTime:
      // left row should wait for additional 30 seconds (+ 1 ms) to be matched with right rows
      yield* testOutputWatermarkInJoin(df1.join(df2, ids.and(lt.geq(rt.minus(30))).and(lt.leq(rt))), -30 * 1000 - 1)
      // BETWEEN rightEventTime - INTERVAL 30 seconds AND rightEventTime + INTERVAL 40 seconds:
      // the minimum of both criteria - 40 seconds (+ 1 ms)
      yield* testOutputWatermarkInJoin(
        df1.join(df2, ids.and(lt.geq(rt.minus(30))).and(lt.leq(rt.plus(40)))),
        -40 * 1000 - 1
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-49829 time window agg per each source followed by stream-stream join", () =>
    Effect.gen(function* () {
      const inputStream1 = yield* MemoryStream.make(Ints)
      const inputStream2 = yield* MemoryStream.make(Ints)
      const windowed = (input: MemoryStream<number>, sum: string) =>
        (input.toDF() as DataFrame<any>)
          .select(F.col("value"), F.timestamp_seconds("value").as("ts"))
          .withWatermark("ts", "5 seconds")
          .groupBy(F.window("ts", "10 seconds"))
          .agg(F.sum("value").as(sum))
      const joined = windowed(inputStream1, "sum_df1")
        .join(windowed(inputStream2, "sum_df2"), ["window"], "inner")
        .select(F.col("window.end").cast("long").as("window_end"), F.col("sum_df1"), F.col("sum_df2"))
      const r = (window_end: number, sum_df1: number, sum_df2: number) => ({ window_end, sum_df1, sum_df2 })
      // Both sides emit a window when it closes, which is the batch the join evicts it in too
      // (the equality on the window does not delay the join's state watermark): the join must
      // still match the two sides' rows of this batch before evicting them.
      yield* testStream(joined, "append", [
        MultiAddData([inputStream1, [1, 2, 3, 4, 5]], [inputStream2, [5, 6, 7, 8, 9]]),
        // watermark: 5 - 5 = 0
        CheckNewAnswer(),
        MultiAddData([inputStream1, [11, 12, 13, 14, 15]], [inputStream2, [15, 16, 17, 18, 19]]),
        // watermark: 15 - 5 = 10 (windows for [0, 10) are completed)
        CheckNewAnswer(r(10, 15, 35)),
        MultiAddData([inputStream1, [100]], [inputStream2, [101]]),
        // watermark: 100 - 5 = 95 (windows for [0, 20) are completed)
        CheckNewAnswer(r(20, 65, 85))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("stream-stream time interval left outer join -> aggregation, append mode (Spark 3.5's script)", () =>
    Effect.gen(function* () {
      const Event = Schema.Struct({ _1: Schema.Date, _2: Schema.String, _3: Schema.String })
      const input1 = yield* MemoryStream.make(Event)
      const input2 = yield* MemoryStream.make(Event)
      const df1 = (input1.toDF() as DataFrame<any>)
        .select(F.col("_1").as("eventTime"), F.col("_2").as("id"), F.col("_3").as("comment"))
        .withWatermark("eventTime", "2 minutes")
      const df2 = (input2.toDF() as DataFrame<any>)
        .select(F.col("_1").as("eventTime"), F.col("_2").as("id"), F.col("_3").as("name"))
        .withWatermark("eventTime", "4 minutes")
      const lt = F.col("left.eventTime").cast("long")
      const rt = F.col("right.eventTime").cast("long")
      const joined = df1.as("left").join(
        df2.as("right"),
        F.col("left.id")
          .eq(F.col("right.id"))
          .and(lt.geq(rt.minus(40)))
          .and(lt.leq(rt.plus(30))),
        "left_outer"
      )
      const windowAggregation = joined
        .groupBy(F.window("left.eventTime", "30 seconds"))
        .agg(F.count("*").as("cnt"))
        .select(F.col("window.start").as("window_start"), F.col("window.end").as("window_end"), F.col("cnt"))
      const e = (t: string, id: string, text: string) => ({ _1: ts(t), _2: id, _3: text })
      const r = (s: string, en: string, cnt: number) => ({ window_start: ts(s), window_end: ts(en), cnt })
      yield* testStream(windowAggregation, "append", [
        StartStream({ additionalConfs: { "spark.sql.streaming.unsupportedOperationCheck": "false" } }),
        MultiAddData(
          [
            input1,
            [
              e("2020-01-01 00:00:00", "abc", "has no join partner"),
              e("2020-01-02 00:00:00", "abc", "joined with A"),
              e("2020-01-02 01:00:00", "abc", "joined with B")
            ]
          ],
          [
            input2,
            [
              e("2020-01-02 00:00:10", "abc", "A"),
              e("2020-01-02 00:59:59", "abc", "B"),
              e("2020-01-02 02:00:00", "abc", "C")
            ]
          ]
        ),
        // The join's output watermark in the no-data batch is 00:57:20 (the input watermark
        // 00:58:00 minus the 40 seconds the condition lets a left row precede its partner):
        // the unmatched left row is evicted and the aggregation closes the windows below it.
        CheckNewAnswer(
          r("2020-01-01 00:00:00", "2020-01-01 00:00:30", 1),
          r("2020-01-02 00:00:00", "2020-01-02 00:00:30", 1)
        ),

        MultiAddData(
          [input1, [e("2020-01-05 00:00:00", "abc", "joined with D")]],
          [input2, [e("2020-01-05 00:00:10", "abc", "D")]]
        ),
        CheckNewAnswer(r("2020-01-02 01:00:00", "2020-01-02 01:00:30", 1))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect(
    "stream-stream time interval left outer join (left side condition) -> time window aggregation (Spark 3.5's script)",
    () =>
      Effect.gen(function* () {
        const RecordClass = Schema.Struct({ id: Schema.Int, ts: Schema.Date })
        const adImprStream = yield* MemoryStream.make(RecordClass)
        const adClickStream = yield* MemoryStream.make(RecordClass)
        const adImpr = (adImprStream.toDF() as DataFrame<any>).withWatermark("ts", "1 hour")
        const adClick = (adClickStream.toDF() as DataFrame<any>).withWatermark("ts", "1 hour")
        // `tb1.ts + interval 5 minutes > tb2.ts` on epoch seconds
        const stream = adImpr
          .as("tb1")
          .join(
            adClick.as("tb2"),
            F.col("tb1.id")
              .eq(F.col("tb2.id"))
              .and(F.col("tb1.ts").cast("long").plus(300).gt(F.col("tb2.ts").cast("long"))),
            "left_outer"
          )
          .groupBy(F.window("tb1.ts", "5 minutes"))
          .count()
          .select(F.col("window.start").as("start"), F.col("window.end").as("end"), F.col("count"))
        const rc = (id: number, t: string) => ({ id, ts: ts(t) })
        const r = (s: string, en: string, count: number) => ({ start: ts(s), end: ts(en), count })
        yield* testStream(stream, "append", [
          StartStream({ additionalConfs: { "spark.sql.streaming.unsupportedOperationCheck": "false" } }),
          MultiAddData(
            [
              adImprStream,
              [rc(1, "2022-01-01 01:30:55.888"), rc(2, "2022-01-01 03:30:55.888"), rc(4, "2022-01-01 05:30:55.888")]
            ],
            [
              adClickStream,
              [rc(1, "2022-01-01 01:31:55.888"), rc(3, "2022-01-01 02:40:55.888"), rc(6, "2022-01-01 05:30:55.888")]
            ]
          ),
          CheckNewAnswer(
            r("2022-01-01 01:30:00", "2022-01-01 01:35:00", 1),
            r("2022-01-01 03:30:00", "2022-01-01 03:35:00", 1)
          )
        ])
      }).pipe(Effect.provide(Session.layer()))
  )
})

/** `from to to` (Spark's `from to to: _*`), inclusive. */
function range(from: number, to: number): Array<number> {
  const out: Array<number> = []
  for (let i = from; i <= to; i++) out.push(i)
  return out
}
