/**
 * The `kafka` source and sink under `Trigger.Continuous`, against a real broker (started by
 * test/kafka/globalSetup.ts): Kafka to Kafka and Kafka to memory, a restart from the last
 * committed epoch, and Spark's offset JSON in the offset log.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { F, Session, Trigger } from "../../../mod.ts"
import type { StreamingQuery } from "../../../structured/contracts/StreamingQuery.ts"
import { connect, type TestKafka, uniqueTopic } from "./helpers.ts"

let k: TestKafka
beforeAll(async () => {
  k = await connect()
})
afterAll(async () => {
  await k?.close()
})

const live = <A, E>(effect: Effect.Effect<A, E, Session>) => effect.pipe(Effect.provide(Session.layer()))

/** Ends epochs until `done` holds (a reader fetches from the broker on its own schedule). */
const until = <E>(q: StreamingQuery, done: Effect.Effect<boolean, E>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 100; i++) {
      yield* q.processAllAvailable()
      if (yield* done) return
      yield* Effect.sleep("100 millis")
    }
    throw new Error("timed out waiting for the continuous query")
  })

describe("kafka continuous", () => {
  it.live(
    "Kafka to Kafka: every record reaches the output topic; a restart resumes after the last committed epoch",
    () =>
      live(
        Effect.gen(function* () {
          const spark = yield* Session
          const input = uniqueTopic("cont-in")
          const output = uniqueTopic("cont-out")
          yield* Effect.promise(() => k.createTopic(input, 2))
          yield* Effect.promise(() => k.createTopic(output, 1))
          yield* Effect.promise(() => k.send(input, 0, ["a", "b"]))
          yield* Effect.promise(() => k.send(input, 1, ["c"]))
          const dir = yield* Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "tributary-kafka-cont-")))
          const start = () =>
            spark.readStream
              .format("kafka")
              .options({ "kafka.bootstrap.servers": k.brokers, subscribe: input, startingOffsets: "earliest" })
              .load()
              .select(F.upper(F.col("value").cast("string")).as("value"))
              .writeStream.format("kafka")
              .options({ "kafka.bootstrap.servers": k.brokers, topic: output, checkpointLocation: dir })
              .trigger(Trigger.Continuous("1 hour"))
              .start()
          const outputValues = Effect.promise(() => k.readAll(output)).pipe(
            Effect.map((rows) => rows.map((r) => r.value).sort())
          )
          const q1 = yield* start()
          yield* until(
            q1,
            Effect.map(outputValues, (v) => v.length >= 3)
          )
          expect(yield* outputValues).toEqual(["A", "B", "C"])
          const progress = yield* q1.lastProgress()
          expect(progress?.sources[0].endOffset).toEqual({ [input]: { "0": 2, "1": 1 } })
          yield* q1.stop()
          yield* Effect.promise(() => k.send(input, 1, ["d"]))
          const q2 = yield* start()
          yield* until(
            q2,
            Effect.map(outputValues, (v) => v.length >= 4)
          )
          expect(yield* outputValues).toEqual(["A", "B", "C", "D"])
          yield* q2.stop()
        })
      ),
    120_000
  )

  it.live(
    "Kafka to memory with short epochs: records written while the query runs arrive once each",
    () =>
      live(
        Effect.gen(function* () {
          const spark = yield* Session
          const input = uniqueTopic("cont-mem")
          yield* Effect.promise(() => k.createTopic(input, 3))
          const q = yield* spark.readStream
            .format("kafka")
            .options({
              "kafka.bootstrap.servers": k.brokers,
              subscribe: input,
              startingOffsets: "earliest",
              pollTimeoutMs: "20"
            })
            .load()
            .select(F.col("value").cast("string").as("value"), F.col("partition"))
            .writeStream.format("memory")
            .queryName("kafkamem")
            .trigger(Trigger.Continuous("200 millis"))
            .start()
          const sent: Array<string> = []
          for (let i = 0; i < 30; i++) {
            const v = `v${i}`
            sent.push(v)
            yield* Effect.promise(() => k.send(input, i % 3, [v]))
            if (i % 10 === 9) yield* Effect.sleep("150 millis")
          }
          const table = Effect.map(spark.table("kafkamem").collect(), (rows) =>
            (rows as ReadonlyArray<{ value: string }>).map((r) => r.value).sort()
          )
          yield* until(
            q,
            Effect.map(table, (v) => v.length >= 30)
          )
          expect(yield* table).toEqual([...sent].sort())
          const progress = yield* q.recentProgress()
          expect(progress.length).toBeGreaterThan(1)
          yield* q.stop()
        })
      ),
    120_000
  )
})
