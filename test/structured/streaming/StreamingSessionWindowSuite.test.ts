/**
 * Spark's `StreamingSessionWindowSuite` (and the session-window scripts of
 * `EventTimeWatermarkSuite`) as `testStream` scripts, with Spark's inputs and expected outputs.
 * Spark runs each script with both of its state store providers; here with both of tributary's.
 * Spark also runs each with `spark.sql.streaming.sessionWindow.merge.sessions.in.local.partition`
 * on and off; tributary has no such knob (it folds a batch's events per key and span, Spark's
 * "off" plan), and the answers are the same either way.
 *
 * `sessionWindowQuery` is Spark's: lines of words at an event time (seconds), one session per
 * word, a 10 seconds gap and a 30 seconds watermark delay; a row is
 * `(sessionId, start, end, durationMs, numEvents)` with times in seconds as Spark's casts give.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../mod.ts"
import type { Column } from "../../../core/Column.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import {
  AddData,
  CheckAnswer,
  CheckNewAnswer,
  ExpectFailure,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"
import { assertNumRowsDroppedByWatermark, providers } from "./StreamingTestKit.ts"

const Lines = Schema.Struct({ _1: Schema.String, _2: Schema.Int })

const sessionWindowQuery = (input: MemoryStream<{ _1: string; _2: number }>, gap?: (c: Column) => Column) => {
  const events = input
    .toDF()
    .select(F.col("_1").as("value"), F.col("_2").as("timestamp"))
    .withColumn("eventTime", F.col("timestamp").cast("timestamp"))
    .withWatermark("eventTime", "30 seconds")
    .select(F.explode(F.split(F.col("value"), " ")).as("sessionId"), F.col("eventTime"))
  const sessionWindow =
    gap === undefined
      ? F.session_window("eventTime", "10 seconds")
      : F.session_window("eventTime", gap(F.col("sessionId")))
  return events
    .groupBy(sessionWindow.as("session"), F.col("sessionId"))
    .agg(F.count("*").as("numEvents"))
    .select(
      F.col("sessionId"),
      F.col("session.start").cast("long").as("start"),
      F.col("session.end").cast("long").as("end"),
      F.col("session.end").cast("long").minus(F.col("session.start").cast("long")).as("durationMs"),
      F.col("numEvents")
    )
}

const s = (sessionId: string, start: number, end: number, durationMs: number, numEvents: number) => ({
  sessionId,
  start,
  end,
  durationMs,
  numEvents
})

const l = (line: string, time: number) => ({ _1: line, _2: time })

/**
 * The session windows aggregation of Spark's `sessionWindowQuery*` helpers over `events`
 * (`eventTime` plus the key columns), with a fixed 10 seconds gap or a per-row gap computed from
 * the key columns.
 */
const sessionAggregation = (
  events: DataFrame<any>,
  keys: ReadonlyArray<string>,
  gap?: (...cols: ReadonlyArray<Column>) => Column
) => {
  const sessionWindow =
    gap === undefined
      ? F.session_window("eventTime", "10 seconds")
      : F.session_window("eventTime", gap(...keys.map((k) => F.col(k))))
  return events
    .groupBy(sessionWindow.as("session"), ...keys.map((k) => F.col(k)))
    .agg(F.count("*").as("numEvents"))
    .select(
      ...keys.map((k) => F.col(k)),
      F.col("session.start").cast("long").as("start"),
      F.col("session.end").cast("long").as("end"),
      F.col("session.end").cast("long").minus(F.col("session.start").cast("long")).as("durationMs"),
      F.col("numEvents")
    )
}

/**
 * Spark's `sessionWindowQueryNestedKey`: every word becomes the nested tuple
 * `((word, word), word)` and that struct is the session key. Spark builds it with `arrays_zip`
 * before exploding; tributary has no `arrays_zip`, so the struct is built from the exploded word
 * (the same key values). Spark's tuple fields both carry the name `sessionIdSingle`; rows here are
 * objects, so the inner fields are `_1` and `_2`.
 */
const sessionWindowQueryNestedKey = (
  input: MemoryStream<{ _1: string; _2: number }>,
  gap?: (sessionId: Column) => Column
) => {
  const events = input
    .toDF()
    .select(F.col("_1").as("value"), F.col("_2").as("timestamp"))
    .withColumn("eventTime", F.col("timestamp").cast("timestamp"))
    .withWatermark("eventTime", "30 seconds")
    .select(F.explode(F.split(F.col("value"), " ")).as("word"), F.col("eventTime"))
    .select(nestedKeyOf(F.col("word")).as("sessionId"), F.col("eventTime"))
  return sessionAggregation(events, ["sessionId"], gap === undefined ? undefined : (c) => gap(c))
}

/** `((w, w), w)` as a struct column. */
const nestedKeyOf = (w: Column): Column =>
  F.struct(F.struct(w.as("_1"), w.as("_2")).as("sessionIdDouble"), w.as("sessionIdSingle"))

/**
 * Spark's `sessionWindowQueryMultiColKey`: every word becomes two key columns, `aggKeyDouble`
 * (the tuple `(word, word)`) and `aggKeySingle` (the word); the explode runs before the
 * watermark, as in Spark.
 */
const sessionWindowQueryMultiColKey = (
  input: MemoryStream<{ _1: string; _2: number }>,
  gap?: (aggKeyDouble: Column, aggKeySingle: Column) => Column
) => {
  const events = input
    .toDF()
    .select(F.col("_1").as("value"), F.col("_2").as("timestamp"))
    .withColumn("eventTime", F.col("timestamp").cast("timestamp"))
    .withColumn("word", F.explode(F.split(F.col("value"), " ")))
    .withWatermark("eventTime", "30 seconds")
    .select(
      F.struct(F.col("word").as("_1"), F.col("word").as("_2")).as("aggKeyDouble"),
      F.col("word").as("aggKeySingle"),
      F.col("eventTime")
    )
  return sessionAggregation(
    events,
    ["aggKeyDouble", "aggKeySingle"],
    gap === undefined ? undefined : (d, s1) => gap(d, s1)
  )
}

/** A row of the nested-key query: `(((w, w), w), start, end, durationMs, numEvents)`. */
const nk = (w: string, start: number, end: number, durationMs: number, numEvents: number) => ({
  sessionId: { sessionIdDouble: { _1: w, _2: w }, sessionIdSingle: w },
  start,
  end,
  durationMs,
  numEvents
})

/** A row of the multi-column-key query: `((w, w), w, start, end, durationMs, numEvents)`. */
const mk = (w: string, start: number, end: number, durationMs: number, numEvents: number) => ({
  aggKeyDouble: { _1: w, _2: w },
  aggKeySingle: w,
  start,
  end,
  durationMs,
  numEvents
})

/**
 * The complete-mode script of Spark's `complete mode - session window*` cases, with the row
 * builder of the query's key shape.
 */
const completeModeScript = <Row>(
  input: MemoryStream<{ _1: string; _2: number }>,
  r: (w: string, start: number, end: number, durationMs: number, numEvents: number) => Row
) => [
  AddData(input, l("hello world spark streaming", 40), l("world hello structured streaming", 41)),
  CheckNewAnswer(
    r("hello", 40, 51, 11, 2),
    r("world", 40, 51, 11, 2),
    r("streaming", 40, 51, 11, 2),
    r("spark", 40, 50, 10, 1),
    r("structured", 41, 51, 10, 1)
  ),
  // placing new sessions "before" previous sessions
  AddData(input, l("spark streaming", 25)),
  CheckNewAnswer(
    r("spark", 25, 35, 10, 1),
    r("streaming", 25, 35, 10, 1),
    r("hello", 40, 51, 11, 2),
    r("world", 40, 51, 11, 2),
    r("streaming", 40, 51, 11, 2),
    r("spark", 40, 50, 10, 1),
    r("structured", 41, 51, 10, 1)
  ),
  // concatenating multiple previous sessions into one
  AddData(input, l("spark streaming", 30)),
  CheckNewAnswer(
    r("spark", 25, 50, 25, 3),
    r("streaming", 25, 51, 26, 4),
    r("hello", 40, 51, 11, 2),
    r("world", 40, 51, 11, 2),
    r("structured", 41, 51, 10, 1)
  ),
  // placing new sessions after previous sessions
  AddData(input, l("hello apache spark", 60)),
  CheckNewAnswer(
    r("spark", 25, 50, 25, 3),
    r("streaming", 25, 51, 26, 4),
    r("hello", 40, 51, 11, 2),
    r("world", 40, 51, 11, 2),
    r("structured", 41, 51, 10, 1),
    r("hello", 60, 70, 10, 1),
    r("apache", 60, 70, 10, 1),
    r("spark", 60, 70, 10, 1)
  ),
  AddData(input, l("structured streaming", 90)),
  CheckNewAnswer(
    r("spark", 25, 50, 25, 3),
    r("streaming", 25, 51, 26, 4),
    r("hello", 40, 51, 11, 2),
    r("world", 40, 51, 11, 2),
    r("structured", 41, 51, 10, 1),
    r("hello", 60, 70, 10, 1),
    r("apache", 60, 70, 10, 1),
    r("spark", 60, 70, 10, 1),
    r("structured", 90, 100, 10, 1),
    r("streaming", 90, 100, 10, 1)
  )
]

/**
 * The append-mode script of Spark's `dynamic gap duration*` cases ("hello" has a 1 second gap,
 * "structured" and "world" a zero and a negative one, so their events are dropped).
 */
const dynamicGapScript = <Row>(
  input: MemoryStream<{ _1: string; _2: number }>,
  r: (w: string, start: number, end: number, durationMs: number, numEvents: number) => Row
) => [
  AddData(input, l("hello world spark streaming", 40), l("world hello structured streaming", 41)),
  CheckNewAnswer(),
  // placing new sessions "before" previous sessions
  AddData(input, l("spark streaming", 25)),
  CheckNewAnswer(),
  // late event which session's end 10 would be later than watermark 11: should be dropped
  AddData(input, l("spark streaming", 0)),
  CheckNewAnswer(),
  assertNumRowsDroppedByWatermark(2),
  // concatenating multiple previous sessions into one
  AddData(input, l("spark streaming", 30)),
  CheckNewAnswer(),
  // placing new sessions after previous sessions
  AddData(input, l("hello apache spark", 60)),
  CheckNewAnswer(),
  AddData(input, l("structured streaming", 90)),
  CheckNewAnswer(r("spark", 25, 50, 25, 3), r("streaming", 25, 51, 26, 4), r("hello", 40, 42, 2, 2))
]

/** Spark's gap UDF of the dynamic gap cases, as a `when` chain over `eq(word)`, "key is this word". */
const gapByWord = (eq: (word: string) => Column<boolean>): Column =>
  F.when(eq("hello"), F.lit("1 second"))
    .when(eq("structured"), F.lit("0 second"))
    .when(eq("world"), F.lit("-10 seconds"))
    .otherwise(F.lit("10 seconds"))

/** `((w, w), w)` as a struct literal, to compare with a nested key. */
const nestedKeyLit = (w: string): Column => nestedKeyOf(F.lit(w))

/** Spark's `sessionWindowQueryOnGlobalKey`: a session window without any other key. */
const sessionWindowQueryOnGlobalKey = (input: MemoryStream<number>) =>
  input
    .toDF()
    .withColumn("eventTime", F.col("value").cast("timestamp"))
    .withWatermark("eventTime", "10 seconds")
    .groupBy(F.session_window("eventTime", "5 seconds").as("session"))
    .agg(F.count("*").as("count"), F.sum("value").as("sum"))
    .select(
      F.col("session").getField("start").cast("long").as("start"),
      F.col("session").getField("end").cast("long").as("end"),
      F.col("count"),
      F.col("sum")
    )

describe("StreamingSessionWindowSuite", () => {
  for (const provider of providers) {
    describe(provider.name, () => {
      it.effect("complete mode - session window", () =>
        Effect.gen(function* () {
          // complete mode doesn't honor watermark: even it is specified, watermark will be
          // always Unix timestamp 0
          const input = yield* MemoryStream.make(Lines)
          yield* testStream(sessionWindowQuery(input), "complete", [
            AddData(input, l("hello world spark streaming", 40), l("world hello structured streaming", 41)),
            CheckNewAnswer(
              s("hello", 40, 51, 11, 2),
              s("world", 40, 51, 11, 2),
              s("streaming", 40, 51, 11, 2),
              s("spark", 40, 50, 10, 1),
              s("structured", 41, 51, 10, 1)
            ),
            // placing new sessions "before" previous sessions
            AddData(input, l("spark streaming", 25)),
            CheckNewAnswer(
              s("spark", 25, 35, 10, 1),
              s("streaming", 25, 35, 10, 1),
              s("hello", 40, 51, 11, 2),
              s("world", 40, 51, 11, 2),
              s("streaming", 40, 51, 11, 2),
              s("spark", 40, 50, 10, 1),
              s("structured", 41, 51, 10, 1)
            ),
            // concatenating multiple previous sessions into one
            AddData(input, l("spark streaming", 30)),
            CheckNewAnswer(
              s("spark", 25, 50, 25, 3),
              s("streaming", 25, 51, 26, 4),
              s("hello", 40, 51, 11, 2),
              s("world", 40, 51, 11, 2),
              s("structured", 41, 51, 10, 1)
            ),
            // placing new sessions after previous sessions
            AddData(input, l("hello apache spark", 60)),
            CheckNewAnswer(
              s("spark", 25, 50, 25, 3),
              s("streaming", 25, 51, 26, 4),
              s("hello", 40, 51, 11, 2),
              s("world", 40, 51, 11, 2),
              s("structured", 41, 51, 10, 1),
              s("hello", 60, 70, 10, 1),
              s("apache", 60, 70, 10, 1),
              s("spark", 60, 70, 10, 1)
            ),
            AddData(input, l("structured streaming", 90)),
            CheckNewAnswer(
              s("spark", 25, 50, 25, 3),
              s("streaming", 25, 51, 26, 4),
              s("hello", 40, 51, 11, 2),
              s("world", 40, 51, 11, 2),
              s("structured", 41, 51, 10, 1),
              s("hello", 60, 70, 10, 1),
              s("apache", 60, 70, 10, 1),
              s("spark", 60, 70, 10, 1),
              s("structured", 90, 100, 10, 1),
              s("streaming", 90, 100, 10, 1)
            )
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("append mode - session window", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Lines)
          yield* testStream(sessionWindowQuery(input), "append", [
            AddData(input, l("hello world spark streaming", 40), l("world hello structured streaming", 41)),
            // watermark: 11
            CheckNewAnswer(),
            // placing new sessions "before" previous sessions
            AddData(input, l("spark streaming", 25)),
            // watermark: 11
            CheckNewAnswer(),
            // late event which session's end 10 would be later than watermark 11: should be dropped
            AddData(input, l("spark streaming", 0)),
            // watermark: 11
            CheckNewAnswer(),
            assertNumRowsDroppedByWatermark(2),
            // concatenating multiple previous sessions into one
            AddData(input, l("spark streaming", 30)),
            // watermark: 11
            CheckNewAnswer(),
            // placing new sessions after previous sessions
            AddData(input, l("hello apache spark", 60)),
            // watermark: 30
            CheckNewAnswer(),
            AddData(input, l("structured streaming", 90)),
            // watermark: 60
            CheckNewAnswer(
              s("spark", 25, 50, 25, 3),
              s("streaming", 25, 51, 26, 4),
              s("hello", 40, 51, 11, 2),
              s("world", 40, 51, 11, 2),
              s("structured", 41, 51, 10, 1)
            )
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("append mode - session window, restarted between every batch", () =>
        Effect.gen(function* () {
          // Spark's script with a restart before every batch: the sessions come back from the
          // checkpoint and the same rows are emitted by the same batch.
          const input = yield* MemoryStream.make(Lines)
          yield* testStream(sessionWindowQuery(input), "append", [
            AddData(input, l("hello world spark streaming", 40), l("world hello structured streaming", 41)),
            CheckNewAnswer(),
            StopStream,
            StartStream(),
            AddData(input, l("spark streaming", 25)),
            CheckNewAnswer(),
            StopStream,
            StartStream(),
            AddData(input, l("spark streaming", 0)),
            CheckNewAnswer(),
            assertNumRowsDroppedByWatermark(2),
            StopStream,
            StartStream(),
            AddData(input, l("spark streaming", 30)),
            CheckNewAnswer(),
            StopStream,
            StartStream(),
            AddData(input, l("hello apache spark", 60)),
            CheckNewAnswer(),
            StopStream,
            StartStream(),
            AddData(input, l("structured streaming", 90)),
            CheckNewAnswer(
              s("spark", 25, 50, 25, 3),
              s("streaming", 25, 51, 26, 4),
              s("hello", 40, 51, 11, 2),
              s("world", 40, 51, 11, 2),
              s("structured", 41, 51, 10, 1)
            ),
            StopStream,
            AddData(input, l("spark", 200)), // watermark 170 closes every open session
            StartStream(),
            CheckNewAnswer(
              s("hello", 60, 70, 10, 1),
              s("apache", 60, 70, 10, 1),
              s("spark", 60, 70, 10, 1),
              s("structured", 90, 100, 10, 1),
              s("streaming", 90, 100, 10, 1)
            )
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("SPARK-36465: dynamic gap duration", () =>
        Effect.gen(function* () {
          // Spark's UDF: "hello" 1 second, "structured" 0 seconds and "world" -10 seconds (both
          // filtered out of the aggregation), everything else 10 seconds.
          const gap = (c: Column) =>
            F.when(c.eq("hello"), F.lit("1 second"))
              .when(c.eq("structured"), F.lit("0 second"))
              .when(c.eq("world"), F.lit("-10 seconds"))
              .otherwise(F.lit("10 seconds"))
          const input = yield* MemoryStream.make(Lines)
          yield* testStream(sessionWindowQuery(input, gap), "append", [
            AddData(input, l("hello world spark streaming", 40), l("world hello structured streaming", 41)),
            // watermark: 11
            // current sessions
            // ("hello", 40, 42, 2, 2),
            // ("streaming", 40, 51, 11, 2),
            // ("spark", 40, 50, 10, 1),
            CheckNewAnswer(),
            // placing new sessions "before" previous sessions
            AddData(input, l("spark streaming", 25)),
            CheckNewAnswer(),
            // late event which session's end 10 would be later than watermark 11: should be dropped
            AddData(input, l("spark streaming", 0)),
            CheckNewAnswer(),
            assertNumRowsDroppedByWatermark(2),
            // concatenating multiple previous sessions into one
            AddData(input, l("spark streaming", 30)),
            CheckNewAnswer(),
            // placing new sessions after previous sessions
            AddData(input, l("hello apache spark", 60)),
            // watermark: 30
            CheckNewAnswer(),
            AddData(input, l("structured streaming", 90)),
            // watermark: 60
            CheckNewAnswer(s("spark", 25, 50, 25, 3), s("streaming", 25, 51, 26, 4), s("hello", 40, 42, 2, 2))
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("complete mode - session window - nested tuple key", () =>
        Effect.gen(function* () {
          // Logic is the same as `complete mode - session window`, just with a more complex key
          const input = yield* MemoryStream.make(Lines)
          yield* testStream(sessionWindowQueryNestedKey(input), "complete", completeModeScript(input, nk))
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("complete mode - session window - multiple col key", () =>
        Effect.gen(function* () {
          // Logic is the same as `complete mode - session window`, just with a more complex key
          const input = yield* MemoryStream.make(Lines)
          yield* testStream(sessionWindowQueryMultiColKey(input), "complete", completeModeScript(input, mk))
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("append mode - session window - nested tuple key, restarted between every batch", () =>
        Effect.gen(function* () {
          // Not one of Spark's cases: Spark's append script over the nested tuple key with a
          // restart before every batch, so the struct-keyed sessions come back from the checkpoint.
          const input = yield* MemoryStream.make(Lines)
          yield* testStream(sessionWindowQueryNestedKey(input), "append", [
            AddData(input, l("hello world spark streaming", 40), l("world hello structured streaming", 41)),
            CheckNewAnswer(),
            StopStream,
            StartStream(),
            AddData(input, l("spark streaming", 25)),
            CheckNewAnswer(),
            StopStream,
            StartStream(),
            AddData(input, l("spark streaming", 0)),
            CheckNewAnswer(),
            assertNumRowsDroppedByWatermark(2),
            StopStream,
            StartStream(),
            AddData(input, l("spark streaming", 30)),
            CheckNewAnswer(),
            StopStream,
            StartStream(),
            AddData(input, l("hello apache spark", 60)),
            CheckNewAnswer(),
            StopStream,
            StartStream(),
            AddData(input, l("structured streaming", 90)),
            CheckNewAnswer(
              nk("spark", 25, 50, 25, 3),
              nk("streaming", 25, 51, 26, 4),
              nk("hello", 40, 51, 11, 2),
              nk("world", 40, 51, 11, 2),
              nk("structured", 41, 51, 10, 1)
            )
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("dynamic gap duration - nested tuple key", () =>
        Effect.gen(function* () {
          // Logic is the same as `SPARK-36465: dynamic gap duration`, just with a more complex
          // key: Spark's UDF compares the whole tuple ((w, w), w).
          const input = yield* MemoryStream.make(Lines)
          const gap = (sessionId: Column) => gapByWord((w) => sessionId.eq(nestedKeyLit(w)))
          yield* testStream(sessionWindowQueryNestedKey(input, gap), "append", dynamicGapScript(input, nk))
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("dynamic gap duration - multiple col key", () =>
        Effect.gen(function* () {
          // Logic is the same as `SPARK-36465: dynamic gap duration`, just with a more complex
          // key: Spark's UDF takes both key columns, `(w, w)` and `w`.
          const input = yield* MemoryStream.make(Lines)
          const gap = (aggKeyDouble: Column, aggKeySingle: Column) =>
            gapByWord((w) =>
              aggKeyDouble.eq(F.struct(F.lit(w).as("_1"), F.lit(w).as("_2"))).and(aggKeySingle.eq(w))
            )
          yield* testStream(sessionWindowQueryMultiColKey(input, gap), "append", dynamicGapScript(input, mk))
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("session window with first/last function", () =>
        Effect.gen(function* () {
          // Spark's `min_by(eventTime, eventTime)` / `max_by(eventTime, eventTime)` are
          // `min(eventTime)` / `max(eventTime)` (tributary has no min_by / max_by); first and last
          // are aggregated but, as in Spark, not selected (non-deterministic).
          const input = yield* MemoryStream.make(Lines)
          const df = input
            .toDF()
            .select(F.col("_1").as("value"), F.col("_2").as("timestamp"))
            .withColumn("eventTime", F.col("timestamp").cast("timestamp"))
            .withWatermark("eventTime", "30 seconds")
            .select(F.explode(F.split(F.col("value"), " ")).as("sessionId"), F.col("eventTime"))
            .groupBy(F.session_window("eventTime", "10 seconds").as("session"), F.col("sessionId"))
            .agg(
              F.first("eventTime").as("firstTime"),
              F.last("eventTime").as("lastTime"),
              F.min("eventTime").as("minTime"),
              F.max("eventTime").as("maxTime")
            )
            .select(
              F.col("sessionId"),
              F.col("session.start").cast("long").as("start"),
              F.col("session.end").cast("long").as("end"),
              F.col("minTime").cast("long").as("minTime"),
              F.col("maxTime").cast("long").as("maxTime")
            )
          yield* testStream(df, "append", [
            AddData(input, l("a", 41)),
            AddData(input, l("a", 42)),
            AddData(input, l("a", 40)),
            CheckAnswer(),
            AddData(input, l("b", 100)), // Move the watermark past the end of the session.
            AddData(input, l("b", 101)), // Trigger the session production.
            CheckAnswer({ sessionId: "a", start: 40, end: 52, minTime: 40, maxTime: 42 })
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("session window - with more aggregation functions and UDAFs", () =>
        Effect.gen(function* () {
          // Spark's script with the aggregates tributary has: `mean`, `first`/`last` of a nested
          // tuple (kept in the session state, not selected as in Spark), and `sum` for Spark's
          // `MySum` UDAF (a plain long sum). `median`, `stddev` and `variance` are left out:
          // tributary has none of them.
          const input = yield* MemoryStream.make(Lines)
          const df = input
            .toDF()
            .select(F.col("_1").as("value"), F.col("_2").as("timestamp"))
            .withColumn("eventTime", F.col("timestamp").cast("timestamp"))
            .withColumn("single", F.col("timestamp"))
            .withColumn("double", F.struct(F.col("single"), F.col("single")))
            .withColumn("triple", F.struct(F.col("double"), F.col("single")))
            .withWatermark("eventTime", "30 seconds")
            .select(
              F.explode(F.split(F.col("value"), " ")).as("sessionId"),
              F.col("eventTime"),
              F.col("single"),
              F.col("triple")
            )
            .groupBy(F.session_window("eventTime", "10 seconds").as("session"), F.col("sessionId"))
            .agg(
              F.mean("single").as("meanTime"),
              F.first("triple").as("firstTimeTriple"),
              F.last("triple").as("lastTimeTriple"),
              F.sum("single").as("mySumSingle")
            )
            .select(
              F.col("sessionId"),
              F.col("session.start").cast("long").as("start"),
              F.col("session.end").cast("long").as("end"),
              F.col("meanTime").cast("long").as("meanTime"),
              F.col("mySumSingle")
            )
          yield* testStream(df, "append", [
            AddData(input, l("a", 41)),
            AddData(input, l("a", 42)),
            AddData(input, l("a", 40)),
            CheckAnswer(),
            AddData(input, l("b", 100)), // Move the watermark past the end of the session.
            AddData(input, l("b", 101)), // Trigger the session production.
            CheckAnswer({ sessionId: "a", start: 40, end: 52, meanTime: 41, mySumSingle: 123 })
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("append mode - session (EventTimeWatermarkSuite)", () =>
        Effect.gen(function* () {
          // The session-window script of Spark 3.2's EventTimeWatermarkSuite: sessions of 5
          // seconds per value group (value / 10), delay 10 seconds.
          const input = yield* MemoryStream.make(Schema.Int)
          const df = input
            .toDF()
            .withColumn("valuegroup", F.col("value").divide(10).cast("int"))
            .withColumn("eventTime", F.col("value").cast("timestamp"))
            .withWatermark("eventTime", "10 seconds")
            .groupBy(F.session_window("eventTime", "5 seconds").as("session"), F.col("valuegroup"))
            .agg(F.count("*").as("count"), F.sum("value").as("sum"))
            .select(
              F.col("valuegroup"),
              F.col("session").getField("start").cast("long").as("start"),
              F.col("session").getField("end").cast("long").as("end"),
              F.col("count"),
              F.col("sum")
            )
          const r = (valuegroup: number, start: number, end: number, count: number, sum: number) => ({
            valuegroup,
            start,
            end,
            count,
            sum
          })
          yield* testStream(df, "append", [
            AddData(input, 10, 11), // sessions: key 1 => (10,16)
            CheckNewAnswer(),
            AddData(input, 17), // Advance watermark to 7 seconds
            CheckNewAnswer(),
            AddData(input, 25), // Advance watermark to 15 seconds
            CheckNewAnswer(),
            AddData(input, 35), // Advance watermark to 25 seconds, evicts key 1 => (10,16), (17,22)
            CheckNewAnswer(r(1, 10, 16, 2, 21), r(1, 17, 22, 1, 17)),
            AddData(input, 10), // Should not emit anything as data less than watermark
            CheckNewAnswer(),
            AddData(input, 40), // Advance watermark to 30 seconds, evicts key 2 => (25,30)
            CheckNewAnswer(r(2, 25, 30, 1, 25))
          ])
        }).pipe(Effect.provide(provider.layer()))
      )
    })
  }

  it.effect("update mode - session window", () =>
    Effect.gen(function* () {
      // Spark's UnsupportedOperationChecker refuses the query when it starts (AnalysisException).
      const input = yield* MemoryStream.make(Lines)
      const error = yield* Effect.flip(
        sessionWindowQuery(input).writeStream.outputMode("update").format("noop").start()
      )
      assert.strictEqual(error._tag, "AnalysisError")
      for (const m of ["Update output mode", "not supported", "for session window"]) {
        assert.include(error.message.toLowerCase(), m.toLowerCase())
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("update mode - session window - no key", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Int)
      const error = yield* Effect.flip(
        sessionWindowQueryOnGlobalKey(input).writeStream.outputMode("update").format("noop").start()
      )
      assert.strictEqual(error._tag, "AnalysisError")
      for (const m of ["Update output mode", "not supported", "for session window"]) {
        assert.include(error.message.toLowerCase(), m.toLowerCase())
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const mode of ["append", "complete"] as const) {
    it.effect(`${mode} mode - session window - no key`, () =>
      Effect.gen(function* () {
        const input = yield* MemoryStream.make(Schema.Int)
        yield* testStream(sessionWindowQueryOnGlobalKey(input), mode, [
          AddData(input, 40),
          // Spark: a StreamingQueryException whose message contains "Global aggregation with
          // session window" and "not supported".
          ExpectFailure("StreamingQueryError", "Global aggregation with session window in streaming query is not supported")
        ])
      }).pipe(Effect.provide(Session.layer()))
    )
  }
})
