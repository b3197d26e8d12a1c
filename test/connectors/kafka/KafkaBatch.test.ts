/**
 * `spark.read.format("kafka")` against a real broker: earliest to latest by default, per-partition
 * starting and ending offsets, includeHeaders, and Spark's option errors at `load()`.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { F, Session } from "../../../mod.ts"
import { connect, type TestKafka, uniqueTopic } from "./helpers.ts"

let k: TestKafka
beforeAll(async () => {
  k = await connect()
})
afterAll(async () => {
  await k?.close()
})

const read = (options: Record<string, string>) =>
  Effect.gen(function* () {
    const spark = yield* Session
    return yield* spark.read
      .format("kafka")
      .options({ "kafka.bootstrap.servers": k.brokers, ...options })
      .load()
  })

describe("kafka batch reads", () => {
  it.live("reads earliest to latest, or between per-partition offsets", () =>
    Effect.gen(function* () {
      const topic = uniqueTopic("batch")
      yield* Effect.promise(() => k.createTopic(topic, 2))
      yield* Effect.promise(() => k.send(topic, 0, ["a", "b", "c", "d"]))
      yield* Effect.promise(() => k.send(topic, 1, [{ value: "e", key: "k", headers: { h: "1" } }]))
      const all = yield* read({ subscribe: topic })
      const rows = yield* all
        .select(
          F.col("value").cast("string").as("value"),
          F.col("partition"),
          F.col("offset"),
          F.col("key").cast("string").as("key")
        )
        .collect()
      expect(rows).toEqual([
        { value: "a", partition: 0, offset: 0, key: null },
        { value: "b", partition: 0, offset: 1, key: null },
        { value: "c", partition: 0, offset: 2, key: null },
        { value: "d", partition: 0, offset: 3, key: null },
        { value: "e", partition: 1, offset: 0, key: "k" }
      ])
      const some = yield* read({
        subscribe: topic,
        startingOffsets: `{"${topic}":{"0":1,"1":-2}}`,
        endingOffsets: `{"${topic}":{"0":3,"1":-1}}`,
        includeHeaders: "true"
      })
      expect(some.columns).toContain("headers")
      const part = yield* some.select(F.col("value").cast("string").as("value")).collect()
      expect(part.map((r) => r.value)).toEqual(["b", "c", "e"])
      const late = yield* Effect.flip(read({ subscribe: topic, startingOffsets: "latest" }))
      expect(late.message).toBe("starting offset can't be latest for batch queries on Kafka")
    }).pipe(Effect.provide(Session.layer()))
  )
})
