/**
 * Streaming session windows (`StatefulAggregateExec` with a session window; Spark's
 * SessionWindowStateStoreRestore / MergingSessions / SessionWindowStateStoreSave), driven batch by
 * batch: the per-batch expectations of Spark's `StreamingSessionWindowSuite` ("complete mode -
 * session window", "append mode - session window", "SPARK-36465: dynamic gap duration") and of
 * `EventTimeWatermarkSuite` ("append mode - session"), plus metrics and update mode.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../../mod.ts"
import type { Column } from "../../../../core/Column.ts"
import { timestamp_seconds } from "../../../../core/functions/ScalarFunctions.ts"
import { planStreaming, sorted, StreamDriver } from "./StreamDriver.ts"

const Line = Schema.Struct({ value: Schema.String, timestamp: Schema.Int })
const Value = Schema.Struct({ value: Schema.Int })

/** Spark's `sessionWindowQuery`: words are session ids, a 30 s watermark, a 10 s gap by default. */
const sessionWindowQuery = (
  input: MemoryStream<{ readonly value: string; readonly timestamp: number }>,
  gap?: Column
) => {
  const events = input
    .toDF()
    .withColumn("eventTime", timestamp_seconds("timestamp"))
    .withWatermark("eventTime", "30 seconds")
    .select(F.explode(F.split("value", " ")).as("sessionId"), F.col("eventTime"))
  return events
    .groupBy(F.session_window("eventTime", gap ?? "10 seconds").as("session"), F.col("sessionId"))
    .agg(F.count("*").as("numEvents"))
    .select(
      F.col("sessionId"),
      F.col("session").getField("start").cast("long").as("start"),
      F.col("session").getField("end").cast("long").as("end"),
      F.col("session")
        .getField("end")
        .cast("long")
        .minus(F.col("session").getField("start").cast("long"))
        .as("durationMs"),
      F.col("numEvents")
    )
}

describe("session windows: StreamingSessionWindowSuite", () => {
  it.effect("complete mode - session window", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Line)
      const d = new StreamDriver(planStreaming(sessionWindowQuery(input)), "complete")
      const out1 = yield* d.addData([
        ["hello world spark streaming", 40],
        ["world hello structured streaming", 41]
      ])
      assert.deepStrictEqual(
        sorted(out1),
        sorted([
          ["hello", 40, 51, 11, 2],
          ["world", 40, 51, 11, 2],
          ["streaming", 40, 51, 11, 2],
          ["spark", 40, 50, 10, 1],
          ["structured", 41, 51, 10, 1]
        ])
      )
      // Placing new sessions before the previous ones.
      assert.deepStrictEqual(
        sorted(yield* d.addData([["spark streaming", 25]])),
        sorted([
          ["spark", 25, 35, 10, 1],
          ["streaming", 25, 35, 10, 1],
          ["hello", 40, 51, 11, 2],
          ["world", 40, 51, 11, 2],
          ["streaming", 40, 51, 11, 2],
          ["spark", 40, 50, 10, 1],
          ["structured", 41, 51, 10, 1]
        ])
      )
      // Concatenating several previous sessions into one.
      assert.deepStrictEqual(
        sorted(yield* d.addData([["spark streaming", 30]])),
        sorted([
          ["spark", 25, 50, 25, 3],
          ["streaming", 25, 51, 26, 4],
          ["hello", 40, 51, 11, 2],
          ["world", 40, 51, 11, 2],
          ["structured", 41, 51, 10, 1]
        ])
      )
      // Metrics: the two merged keys put one session each and removed one old session each.
      assert.strictEqual(d.progressOf()?.numRowsUpdated, 2)
      assert.strictEqual(d.progressOf()?.numRowsRemoved, 2)
      assert.strictEqual(d.progressOf()?.numRowsTotal, 5)
      assert.strictEqual(d.progressOf()?.operatorName, "sessionWindowStateStoreSaveExec")
      // Placing new sessions after the previous ones.
      assert.deepStrictEqual(
        sorted(yield* d.addData([["hello apache spark", 60]])),
        sorted([
          ["spark", 25, 50, 25, 3],
          ["streaming", 25, 51, 26, 4],
          ["hello", 40, 51, 11, 2],
          ["world", 40, 51, 11, 2],
          ["structured", 41, 51, 10, 1],
          ["hello", 60, 70, 10, 1],
          ["apache", 60, 70, 10, 1],
          ["spark", 60, 70, 10, 1]
        ])
      )
      assert.deepStrictEqual(
        sorted(yield* d.addData([["structured streaming", 90]])),
        sorted([
          ["spark", 25, 50, 25, 3],
          ["streaming", 25, 51, 26, 4],
          ["hello", 40, 51, 11, 2],
          ["world", 40, 51, 11, 2],
          ["structured", 41, 51, 10, 1],
          ["hello", 60, 70, 10, 1],
          ["apache", 60, 70, 10, 1],
          ["spark", 60, 70, 10, 1],
          ["structured", 90, 100, 10, 1],
          ["streaming", 90, 100, 10, 1]
        ])
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("append mode - session window", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Line)
      const d = new StreamDriver(planStreaming(sessionWindowQuery(input)), "append")
      assert.deepStrictEqual(
        yield* d.addData([
          ["hello world spark streaming", 40],
          ["world hello structured streaming", 41]
        ]),
        []
      )
      assert.strictEqual(d.tracker.currentMs, 11_000)
      assert.deepStrictEqual(yield* d.addData([["spark streaming", 25]]), [])
      // A late event: its session would end at 10, below the watermark 11.
      assert.deepStrictEqual(yield* d.addData([["spark streaming", 0]]), [])
      assert.strictEqual(d.progressOf()?.numRowsDroppedByWatermark, 2)
      assert.deepStrictEqual(yield* d.addData([["spark streaming", 30]]), [])
      assert.deepStrictEqual(yield* d.addData([["hello apache spark", 60]]), [])
      assert.strictEqual(d.tracker.currentMs, 30_000)
      // Watermark 60: every session ending at or before 60 is emitted and removed.
      assert.deepStrictEqual(
        sorted(yield* d.addData([["structured streaming", 90]])),
        sorted([
          ["spark", 25, 50, 25, 3],
          ["streaming", 25, 51, 26, 4],
          ["hello", 40, 51, 11, 2],
          ["world", 40, 51, 11, 2],
          ["structured", 41, 51, 10, 1]
        ])
      )
      assert.strictEqual(d.progressOf()?.numRowsRemoved, 5)
      assert.strictEqual(d.progressOf()?.numRowsTotal, 5)
      // What is left: hello, apache, spark at 60 and structured, streaming at 90.
      assert.strictEqual(d.provider.entries(0).size, 5)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-36465: dynamic gap duration (zero and negative gaps drop the event)", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Line)
      const id = F.col("sessionId")
      const gap = F.when(id.eq("hello"), "1 second")
        .when(id.eq("structured"), "0 second")
        .when(id.eq("world"), "-10 seconds")
        .otherwise("10 seconds")
      const d = new StreamDriver(planStreaming(sessionWindowQuery(input, gap)), "append")
      assert.deepStrictEqual(
        yield* d.addData([
          ["hello world spark streaming", 40],
          ["world hello structured streaming", 41]
        ]),
        []
      )
      assert.deepStrictEqual(yield* d.addData([["spark streaming", 25]]), [])
      assert.deepStrictEqual(yield* d.addData([["spark streaming", 0]]), [])
      assert.strictEqual(d.progressOf()?.numRowsDroppedByWatermark, 2)
      assert.deepStrictEqual(yield* d.addData([["spark streaming", 30]]), [])
      assert.deepStrictEqual(yield* d.addData([["hello apache spark", 60]]), [])
      assert.deepStrictEqual(
        sorted(yield* d.addData([["structured streaming", 90]])),
        sorted([
          ["spark", 25, 50, 25, 3],
          ["streaming", 25, 51, 26, 4],
          ["hello", 40, 42, 2, 2]
        ])
      )
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("session windows: EventTimeWatermarkSuite", () => {
  const byValueGroup = (input: MemoryStream<{ readonly value: number }>, withKey: boolean) => {
    const events = input
      .toDF()
      .withColumn("valuegroup", F.col("value").divide(10).cast("int"))
      .withColumn("eventTime", timestamp_seconds("value"))
      .withWatermark("eventTime", "10 seconds")
    const session = F.session_window("eventTime", "5 seconds").as("session")
    const keys = withKey ? [session, F.col("valuegroup")] : [session]
    const agg = events.groupBy(...keys).agg(F.count("*").as("count"), F.sum("value").as("sum"))
    const times = [
      F.col("session").getField("start").cast("long"),
      F.col("session").getField("end").cast("long"),
      F.col("count"),
      F.col("sum")
    ]
    return withKey ? agg.select(F.col("valuegroup"), ...times) : agg.select(...times)
  }

  it.effect("append mode - session", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const d = new StreamDriver(planStreaming(byValueGroup(input, true)), "append")
      assert.deepStrictEqual(yield* d.addData([[10], [11]]), [])
      assert.deepStrictEqual(yield* d.addData([[17]]), [])
      assert.deepStrictEqual(yield* d.addData([[25]]), [])
      // Watermark 25: key 1's sessions (10, 16) and (17, 22) are emitted.
      assert.deepStrictEqual(
        sorted(yield* d.addData([[35]])),
        sorted([
          [1, 10, 16, 2, 21],
          [1, 17, 22, 1, 17]
        ])
      )
      assert.deepStrictEqual(yield* d.addData([[10]]), [])
      assert.strictEqual(d.progressOf()?.numRowsDroppedByWatermark, 1)
      assert.deepStrictEqual(yield* d.addData([[40]]), [[2, 25, 30, 1, 25]])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("append mode - session - no key (Spark 4 refuses it; here one state row holds the sessions)", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const d = new StreamDriver(planStreaming(byValueGroup(input, false)), "append")
      assert.deepStrictEqual(yield* d.addData([[10], [11]]), [])
      assert.deepStrictEqual(yield* d.addData([[17]]), [])
      assert.deepStrictEqual(yield* d.addData([[25]]), [])
      assert.deepStrictEqual(
        sorted(yield* d.addData([[35]])),
        sorted([
          [10, 16, 2, 21],
          [17, 22, 1, 17]
        ])
      )
      assert.deepStrictEqual(yield* d.addData([[10]]), [])
      assert.deepStrictEqual(yield* d.addData([[40]]), [[25, 30, 1, 25]])
      assert.deepStrictEqual([...d.provider.entries(0).keys()], [""])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("update mode (refused by Spark's checker): new or changed sessions, expired ones evicted", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const d = new StreamDriver(planStreaming(byValueGroup(input, true)), "update")
      assert.deepStrictEqual(yield* d.addData([[10], [11]]), [[1, 10, 16, 2, 21]])
      // (10, 16) is unchanged: only the new session is output.
      assert.deepStrictEqual(yield* d.addData([[17]]), [[1, 17, 22, 1, 17]])
      // 18 extends (17, 22) to (17, 23).
      assert.deepStrictEqual(yield* d.addData([[18]]), [[1, 17, 23, 2, 35]])
      assert.deepStrictEqual(yield* d.addData([[35]]), [[3, 35, 40, 1, 35]])
      // Watermark 25 evicted key 1's sessions without output.
      assert.strictEqual(d.progressOf()?.numRowsRemoved, 2)
      assert.strictEqual(d.progressOf()?.numRowsTotal, 1)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("late spans are dropped only when the session is over the watermarked column (complete mode too)", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const query = (timeColumn: string) =>
        input
          .toDF()
          .withColumn("eventTime", timestamp_seconds("value"))
          .withColumn("other", timestamp_seconds("value"))
          .withWatermark("eventTime", "10 seconds")
          .groupBy(F.session_window(timeColumn, "5 seconds").as("session"))
          .agg(F.count("*").as("count"))
          .select(F.col("session").getField("start").cast("long"), F.col("count"))
      // Over the watermarked column: once a batch has run with watermark 30, the restore operator
      // drops [0, 5) (end 5 <= 30) in the next one. (Complete mode runs no batch without data.)
      const marked = new StreamDriver(planStreaming(query("eventTime")), "complete")
      assert.deepStrictEqual(yield* marked.addData([[40]]), [[40, 1]])
      assert.deepStrictEqual(yield* marked.addData([[41]]), [[40, 2]])
      assert.deepStrictEqual(yield* marked.addData([[0]]), [[40, 2]])
      assert.strictEqual(marked.progressOf()?.numRowsDroppedByWatermark, 1)
      // Over another column: no event-time column, so nothing is late.
      const plain = new StreamDriver(planStreaming(query("other")), "complete")
      assert.deepStrictEqual(yield* plain.addData([[40]]), [[40, 1]])
      assert.deepStrictEqual(yield* plain.addData([[41]]), [[40, 2]])
      assert.deepStrictEqual(
        sorted(yield* plain.addData([[0]])),
        sorted([
          [0, 1],
          [40, 2]
        ])
      )
      assert.strictEqual(plain.progressOf()?.numRowsDroppedByWatermark, 0)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("restart: sessions continue from the stored state", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const d = new StreamDriver(planStreaming(byValueGroup(input, true)), "append")
      assert.deepStrictEqual(yield* d.addData([[10], [11]]), [])
      const d2 = d.restart(planStreaming(byValueGroup(input, true)))
      // 14 joins (10, 16) -> (10, 19); 30 moves the watermark to 20.
      assert.deepStrictEqual(yield* d2.addData([[14], [30]]), [[1, 10, 19, 3, 35]])
    }).pipe(Effect.provide(Session.layer()))
  )
})
