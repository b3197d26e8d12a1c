/**
 * Spark's `StreamingSessionWindowSuite` (and the session-window scripts of
 * `EventTimeWatermarkSuite`) as `testStream` scripts, with Spark's inputs and expected outputs.
 * Spark runs each script with both of its state store providers; here with both of tributary's.
 *
 * `sessionWindowQuery` is Spark's: lines of words at an event time (seconds), one session per
 * word, a 10 seconds gap and a 30 seconds watermark delay; a row is
 * `(sessionId, start, end, durationMs, numEvents)` with times in seconds as Spark's casts give.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../mod.ts"
import type { Column } from "../../../core/Column.ts"
import {
  AddData,
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

  it.effect("update mode - session window is not supported", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Lines)
      const error = yield* Effect.flip(
        sessionWindowQuery(input).writeStream.outputMode("update").format("noop").start()
      )
      assert.strictEqual(error._tag, "AnalysisError")
      for (const m of ["update output mode", "not supported", "for session window"]) {
        assert.include(error.message.toLowerCase(), m)
      }
      const ints = yield* MemoryStream.make(Schema.Int)
      const error2 = yield* Effect.flip(
        sessionWindowQueryOnGlobalKey(ints).writeStream.outputMode("update").format("noop").start()
      )
      assert.include(error2.message.toLowerCase(), "for session window")
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const mode of ["append", "complete"] as const) {
    it.effect(`${mode} mode - session window - no key`, () =>
      Effect.gen(function* () {
        const input = yield* MemoryStream.make(Schema.Int)
        yield* testStream(sessionWindowQueryOnGlobalKey(input), mode, [
          AddData(input, 40),
          ExpectFailure(undefined, "Global aggregation with session window in streaming query is not supported")
        ])
      }).pipe(Effect.provide(Session.layer()))
    )
  }
})
