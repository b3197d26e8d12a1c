/**
 * `KafkaUtils.createDirectStream` on the test broker: batches read offset ranges of the
 * subscribed topic (no receiver); a context recovered through `getOrCreate` continues after the
 * last completed batch and re-reads exactly the range of a batch that failed — not the records
 * that arrived since, which come in the next batch. The broker address comes from the global
 * setup (`inject("kafkaBootstrap")`, through the Kafka helpers).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { KafkaUtils, StreamingContext } from "../../../dstream/mod.ts"
import { Session } from "../../../mod.ts"
import { connect, type TestKafka, uniqueTopic } from "../../connectors/kafka/helpers.ts"
import { removeDir, tempDir } from "../DStreamTestKit.ts"

let k: TestKafka
beforeAll(async () => {
  k = await connect()
})
afterAll(async () => {
  await k?.close()
})

const decode = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b))

/** Polls (real time) until `cond` holds, at most 30 s. */
const waitFor = (cond: () => boolean, what: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 300; i++) {
      if (cond()) return
      yield* Effect.sleep(100)
    }
    return yield* Effect.die(new Error(`timed out waiting for ${what}`))
  })

describe("KafkaUtils.createDirectStream", () => {
  it.live(
    "reads the topic's records once, and a restart re-reads exactly the failed batch's offsets",
    () =>
      Effect.gen(function* () {
        const topic = uniqueTopic("dstream-direct")
        yield* Effect.promise(() => k.createTopic(topic, 2))
        yield* Effect.promise(() => k.send(topic, 0, ["a", "b", "c"]))
        yield* Effect.promise(() => k.send(topic, 1, ["d", "e"]))
        const dir = tempDir("kafka-direct")
        const run = (batches: Array<Array<string>>, failOnData: boolean) =>
          StreamingContext.getOrCreate(dir, () =>
            Effect.gen(function* () {
              const ssc = yield* StreamingContext.make({ batchDuration: 200 })
              KafkaUtils.createDirectStream(ssc, {
                "kafka.bootstrap.servers": k.brokers,
                subscribe: topic,
                startingOffsets: "earliest"
              }).foreachRDD((rdd) => {
                const records = rdd.collect()
                if (records.length === 0) return
                for (const r of records) {
                  // Every record carries its coordinates and a Date timestamp.
                  if (r.topic !== topic || !(r.timestamp instanceof Date) || r.key !== null)
                    throw new Error(`bad record ${JSON.stringify(r)}`)
                }
                batches.push(records.map((r) => `${r.partition}:${r.offset}:${decode(r.value)}`).sort())
                if (failOnData) throw new Error("output failed")
              })
              return ssc
            })
          )

        // Run 1 reads the five records and stops cleanly.
        const first: Array<Array<string>> = []
        const ssc1 = yield* run(first, false)
        yield* ssc1.start()
        yield* waitFor(() => first.flat().length >= 5, "the first five records")
        yield* ssc1.stop()
        expect(first.flat().sort()).toEqual(["0:0:a", "0:1:b", "0:2:c", "1:0:d", "1:1:e"])

        // Run 2 gets the two new records in one batch whose output fails.
        yield* Effect.promise(() => k.send(topic, 0, ["f"]))
        yield* Effect.promise(() => k.send(topic, 1, ["g"]))
        const second: Array<Array<string>> = []
        const ssc2 = yield* run(second, true)
        yield* ssc2.start()
        const failed = yield* Effect.exit(ssc2.awaitTermination().pipe(Effect.timeout(30_000)))
        expect(Exit.isFailure(failed)).toBe(true)
        yield* ssc2.stop()
        expect(second).toEqual([["0:3:f", "1:2:g"]])

        // Run 3: the failed batch again with exactly its range, then the records sent meanwhile.
        yield* Effect.promise(() => k.send(topic, 0, ["h"]))
        yield* Effect.promise(() => k.send(topic, 1, ["i"]))
        const third: Array<Array<string>> = []
        const ssc3 = yield* run(third, false)
        yield* ssc3.start()
        yield* waitFor(() => third.flat().length >= 4, "the replayed and the new records")
        yield* ssc3.stop()
        expect(third).toEqual([
          ["0:3:f", "1:2:g"],
          ["0:4:h", "1:3:i"]
        ])
        yield* removeDir(dir)
      }).pipe(Effect.provide(Session.layer({ stateStore: "memory" }))),
    90_000
  )
})
