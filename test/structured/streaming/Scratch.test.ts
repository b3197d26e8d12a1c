import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../mod.ts"
import { AddData, AssertOnQuery, CheckNewAnswer, Execute, testStream } from "../../../structured/testing.ts"

describe("scratch", () => {
  it.effect("append mode", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Int)
      const df = input
        .toDF()
        .withColumn("eventTime", F.timestamp_seconds("value"))
        .withWatermark("eventTime", "10 seconds")
        .groupBy(F.window("eventTime", "5 seconds").as("window"))
        .agg(F.count("*").as("count"))
        .select(F.col("window").getField("start").cast("long").as("start"), F.col("count"))
      yield* testStream(df, "append", [
        AddData(input, 10, 11, 12, 13, 14, 15),
        CheckNewAnswer(),
        AddData(input, 25),
        CheckNewAnswer({ start: 10, count: 5 }),
        Execute((q) => Effect.flatMap(q!.recentProgress(), (ps) => Effect.sync(() => console.log(JSON.stringify(ps.map(p => [p.batchId, p.numInputRows, p.eventTime, p.stateOperators]), null, 0))))),
        AddData(input, 10),
        CheckNewAnswer()
      ])
    }).pipe(Effect.provide(Session.layer())))
})
