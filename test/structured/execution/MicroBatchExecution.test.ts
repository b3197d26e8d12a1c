import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session, Trigger } from "../../../mod.ts"
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

const Word = Schema.Struct({ word: Schema.String, n: Schema.Int })

describe("MicroBatchExecution through testStream", () => {
  it.effect("runs a stateless query batch by batch", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Word)
      const df = input.toDF().where(F.col("n").gt(1)).select("word", F.col("n").multiply(10).as("n10"))
      yield* testStream(df, "append", [
        AddData(input, { word: "a", n: 1 }, { word: "b", n: 2 }),
        CheckAnswer({ word: "b", n10: 20 }),
        AddData(input, { word: "c", n: 3 }),
        CheckNewAnswer({ word: "c", n10: 30 }),
        CheckAnswer({ word: "b", n10: 20 }, { word: "c", n10: 30 }),
        CheckLastBatch({ word: "c", n10: 30 })
      ])
    }).pipe(Effect.provide(Session.layer())))

  it.effect("restarts from the checkpoint without reprocessing", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Word)
      yield* testStream(input.toDF(), "append", [
        AddData(input, { word: "a", n: 1 }),
        CheckAnswer({ word: "a", n: 1 }),
        StopStream,
        AddData(input, { word: "b", n: 2 }),
        StartStream(),
        CheckNewAnswer({ word: "b", n: 2 }),
        AssertOnQuery((q) => Effect.map(q.lastProgress(), (p) => p?.batchId === 1), "the restart continues at batch 1")
      ])
    }).pipe(Effect.provide(Session.layer())))

  it.effect("a processing-time trigger runs on the clock's grid", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Word)
      yield* testStream(input.toDF(), "append", [
        StartStream({ trigger: Trigger.ProcessingTime("10 seconds") }),
        AddData(input, { word: "a", n: 1 }),
        AdvanceClock("10 seconds"),
        CheckAnswer({ word: "a", n: 1 }),
        AddData(input, { word: "b", n: 2 }),
        AdvanceClock("5 seconds"),
        CheckAnswer({ word: "a", n: 1 }),
        AdvanceClock("5 seconds"),
        CheckAnswer({ word: "a", n: 1 }, { word: "b", n: 2 })
      ])
    }).pipe(Effect.provide(Session.layer())))

  it.effect("a failing batch stops the query with a StreamingQueryError", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Word)
      const df = input.toDF().map((r) => {
        if (r.n < 0) throw new Error("negative")
        return r
      }, Word)
      yield* testStream(df, "append", [
        AddData(input, { word: "a", n: -1 }),
        ExpectFailure(undefined, "negative")
      ])
    }).pipe(Effect.provide(Session.layer())))

  it.effect("the memory sink keeps its table across restarts in the same session", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Word)
      const dir = `/tmp/tributary-mbe-${Math.random().toString(36).slice(2)}`
      const start = input.toDF().writeStream.format("memory").queryName("t").option("checkpointLocation", dir).start()
      const q1 = yield* start
      yield* input.addData([{ word: "a", n: 1 }])
      yield* q1.processAllAvailable()
      yield* q1.stop()
      yield* input.addData([{ word: "b", n: 2 }])
      const q2 = yield* start
      assert.strictEqual(q2.id, q1.id)
      assert.notStrictEqual(q2.runId, q1.runId)
      yield* q2.processAllAvailable()
      const rows = yield* spark.table("t").collect()
      assert.deepStrictEqual(rows, [{ word: "a", n: 1 }, { word: "b", n: 2 }])
      yield* q2.stop()
    }).pipe(Effect.provide(Session.layer())))
})
