/**
 * Ports of Spark's KafkaRelationSuite (batch reads, `spark.read.format("kafka")`) against the
 * real broker of test/kafka/globalSetup.ts. Each `it` keeps Spark's test name; inputs and
 * expected answers are Spark's. `checkAnswer` compares the values as a multiset.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { F, Session } from "../../../mod.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import { parseBatchOptions } from "../../../connectors/kafka/mod.ts"
import { AnalysisError } from "../../../core/Errors.ts"
import { connect, kafkaFor, type TestKafka, uniqueTopic } from "./helpers.ts"

let k: TestKafka
beforeAll(async () => {
  k = await connect()
})
afterAll(async () => {
  await k?.close()
})

const live = <A, E>(effect: Effect.Effect<A, E, Session>) => effect.pipe(Effect.provide(Session.layer()))
const promise = <A>(f: () => Promise<A>) => Effect.promise(f)
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i)
const strings = (xs: ReadonlyArray<number>) => xs.map(String)

/** Spark's `createDF`: `subscribe` to the topic, `CAST(value AS STRING)`. */
const createDF = (topic: string, options: Record<string, string> = {}) =>
  Effect.gen(function* () {
    const spark = yield* Session
    const df = yield* spark.read
      .format("kafka")
      .options({ "kafka.bootstrap.servers": k.brokers, subscribe: topic, ...options })
      .load()
    return df.select(F.col("value").cast("string").as("value"))
  })

/** The DataFrame's values, sorted (Spark's `checkAnswer` ignores order). */
const values = (df: DataFrame<any>) =>
  Effect.map(df.collect(), (rows) => rows.map((r) => r.value as string | null).sort())

const sorted = (xs: ReadonlyArray<string>) => [...xs].sort()

const sendTo = (topic: string, partition: number, xs: ReadonlyArray<number | string>) =>
  k.send(topic, partition, xs.map(String))

const threePartitions = (topic: string) =>
  promise(async () => {
    await k.createTopic(topic, 3)
    await sendTo(topic, 0, range(0, 9))
    await sendTo(topic, 1, range(10, 19))
    await sendTo(topic, 2, ["20"])
  })

/** Spark's `prepareTimestampRelatedUnitTest`: 0-9, 10-19, 20-29 at three timestamps 1 s apart. */
const prepareTimestamps = Effect.gen(function* () {
  const topic = uniqueTopic("relation-ts")
  yield* promise(() => k.createTopic(topic, 3))
  const first = Date.now() - 5000
  const stamps = [first, first + 1000, first + 2000, first + 3000]
  for (let i = 0; i < 3; i++) {
    for (let p = 0; p < 3; p++) {
      const xs = range(i * 10, i * 10 + 9).filter((x) => x % 3 === p)
      yield* promise(() =>
        k.send(
          topic,
          p,
          xs.map((x) => ({ value: String(x), timestamp: String(stamps[i]) }))
        )
      )
    }
  }
  return { topic, stamps }
})

/** `{"topic":{"0":x,"1":y,"2":z}}` */
const perPartition = (topic: string, xs: ReadonlyArray<number>) =>
  JSON.stringify({ [topic]: Object.fromEntries(xs.map((x, p) => [String(p), x])) })

/** Spark's `verifyTimestampRelatedQueryResult`. */
const verifyTimestamps = (topic: string, options: Record<string, string>, expected: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const df = yield* createDF(topic, options)
    expect(yield* values(df)).toEqual(sorted(strings(expected)))
  })

/** Spark's `testUtils.withTransactionalProducer`. */
const transactional = async (topic: string) => {
  const producer = kafkaFor(k.brokers).producer({
    transactionalId: `tx-${topic}`,
    maxInFlightRequests: 1,
    idempotent: true
  })
  await producer.connect()
  return producer
}

/** Spark's `waitUntilOffsetAppears`. */
const waitUntilOffsetAppears = async (topic: string, partition: number, offset: number) => {
  for (let i = 0; i < 300; i++) {
    const offsets = await k.admin.fetchTopicOffsets(topic)
    if (Number(offsets.find((o) => o.partition === partition)?.high ?? -1) >= offset) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`offset ${offset} of ${topic}-${partition} did not appear`)
}

describe("KafkaRelationSuite (Spark)", () => {
  it.live("explicit earliest to latest offsets", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("relation")
        yield* threePartitions(topic)
        const df = yield* createDF(topic, { startingOffsets: "earliest", endingOffsets: "latest" })
        expect(yield* values(df)).toEqual(sorted(strings(range(0, 20))))
        // "latest" should late bind to the current (latest) offset in the df
        yield* promise(() => sendTo(topic, 2, range(21, 29)))
        expect(yield* values(df)).toEqual(sorted(strings(range(0, 29))))
      })
    )
  )

  it.live("default starting and ending offsets", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("relation")
        yield* threePartitions(topic)
        expect(yield* values(yield* createDF(topic))).toEqual(sorted(strings(range(0, 20))))
      })
    )
  )

  it.live("explicit offsets", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("relation")
        yield* threePartitions(topic)
        const df = yield* createDF(topic, {
          // -2 => earliest, explicit earliest
          startingOffsets: perPartition(topic, [-2, -2, 0]),
          // -1 => latest, explicit offset happens to = the latest
          endingOffsets: perPartition(topic, [-1, -1, 1])
        })
        expect(yield* values(df)).toEqual(sorted(strings(range(0, 20))))
        // static offset partition 2, nothing should change
        yield* promise(() => sendTo(topic, 2, range(31, 39)))
        expect(yield* values(df)).toEqual(sorted(strings(range(0, 20))))
        // latest offset partition 1, should change
        yield* promise(() => sendTo(topic, 1, range(21, 30)))
        expect(yield* values(df)).toEqual(sorted(strings(range(0, 30))))
      })
    )
  )

  it.live("default starting and ending offsets with headers", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("relation-headers")
        yield* promise(() => k.createTopic(topic, 3))
        yield* promise(() => k.send(topic, 0, [{ value: "1" }]))
        yield* promise(() => k.send(topic, 1, [{ value: "2", headers: { a: "b", c: "d" } }]))
        // Spark's third record has two headers of key "e"; kafkajs takes a repeated key as an array.
        yield* promise(() => k.send(topic, 2, [{ value: "3", headers: { e: ["f", "g"] } }]))
        const spark = yield* Session
        const df = yield* spark.read
          .format("kafka")
          .options({ "kafka.bootstrap.servers": k.brokers, subscribe: topic, includeHeaders: "true" })
          .load()
        const rows = yield* df.select(F.col("value").cast("string").as("value"), F.col("headers")).collect()
        const text = (v: Uint8Array) => new TextDecoder().decode(v)
        expect(
          rows
            .map((r) => ({
              value: r.value as string,
              headers:
                (r.headers as ReadonlyArray<{ key: string; value: Uint8Array }> | null)?.map((h) => [
                  h.key,
                  text(h.value)
                ]) ?? null
            }))
            .sort((a, b) => a.value.localeCompare(b.value))
        ).toEqual([
          { value: "1", headers: null },
          {
            value: "2",
            headers: [
              ["a", "b"],
              ["c", "d"]
            ]
          },
          {
            value: "3",
            headers: [
              ["e", "f"],
              ["e", "g"]
            ]
          }
        ])
      })
    )
  )

  it.live("timestamp provided for starting and ending", () =>
    live(
      Effect.gen(function* () {
        const { topic, stamps } = yield* prepareTimestamps
        yield* verifyTimestamps(
          topic,
          {
            startingOffsetsByTimestamp: perPartition(topic, [stamps[1], stamps[1], stamps[1]]),
            endingOffsetsByTimestamp: perPartition(topic, [stamps[2], stamps[2], stamps[2]])
          },
          range(10, 19)
        )
      })
    )
  )

  it.live("timestamp provided for starting, offset provided for ending", () =>
    live(
      Effect.gen(function* () {
        const { topic, stamps } = yield* prepareTimestamps
        yield* verifyTimestamps(
          topic,
          {
            startingOffsetsByTimestamp: perPartition(topic, [stamps[0], stamps[0], stamps[0]]),
            endingOffsets: perPartition(topic, [-1, -1, 1])
          },
          [...range(0, 29).filter((x) => x % 3 !== 2), 2]
        )
      })
    )
  )

  it.live("timestamp provided for ending, offset provided for starting", () =>
    live(
      Effect.gen(function* () {
        const { topic, stamps } = yield* prepareTimestamps
        yield* verifyTimestamps(
          topic,
          {
            startingOffsets: perPartition(topic, [-2, -2, 0]),
            endingOffsetsByTimestamp: perPartition(topic, [stamps[2], stamps[2], stamps[2]])
          },
          range(0, 19)
        )
      })
    )
  )

  it.live("timestamp provided for starting, ending not provided", () =>
    live(
      Effect.gen(function* () {
        const { topic, stamps } = yield* prepareTimestamps
        yield* verifyTimestamps(
          topic,
          { startingOffsetsByTimestamp: perPartition(topic, [stamps[1], stamps[1], stamps[1]]) },
          range(10, 29)
        )
      })
    )
  )

  it.live("timestamp provided for ending, starting not provided", () =>
    live(
      Effect.gen(function* () {
        const { topic, stamps } = yield* prepareTimestamps
        yield* verifyTimestamps(
          topic,
          { endingOffsetsByTimestamp: perPartition(topic, [stamps[2], stamps[2], stamps[2]]) },
          range(0, 19)
        )
      })
    )
  )

  it.live("global timestamp provided for starting and ending", () =>
    live(
      Effect.gen(function* () {
        const { topic, stamps } = yield* prepareTimestamps
        yield* verifyTimestamps(
          topic,
          { startingTimestamp: String(stamps[1]), endingTimestamp: String(stamps[2]) },
          range(10, 19)
        )
      })
    )
  )

  it.live("no matched offset for timestamp - startingOffsets", () =>
    live(
      Effect.gen(function* () {
        const { topic, stamps } = yield* prepareTimestamps
        // partition 2 will make query fail
        const failed = yield* Effect.flip(
          verifyTimestamps(
            topic,
            {
              startingOffsetsByTimestamp: JSON.stringify({
                [topic]: { "0": stamps[1], "1": stamps[1], "2": "9223372036854775807" }
              }).replace(`"9223372036854775807"`, "9223372036854775807")
            },
            []
          )
        )
        expect(failed.message).toContain("No offset matched from request")
      })
    )
  )

  it.live("preferences on offset related options", () =>
    live(
      Effect.gen(function* () {
        const { topic, stamps } = yield* prepareTimestamps
        const startingTimestamps = perPartition(topic, [stamps[1], stamps[1], stamps[1]])
        // all options are specified: global timestamp
        yield* verifyTimestamps(
          topic,
          {
            startingTimestamp: String(stamps[2]),
            startingOffsetsByTimestamp: startingTimestamps,
            startingOffsets: "earliest"
          },
          range(20, 29)
        )
        // timestamp for partition and offsets are specified: timestamp for partition
        yield* verifyTimestamps(
          topic,
          { startingOffsetsByTimestamp: startingTimestamps, startingOffsets: "earliest" },
          range(10, 29)
        )
      })
    )
  )

  it.live("no matched offset for timestamp - endingOffsets", () =>
    live(
      Effect.gen(function* () {
        const { topic, stamps } = yield* prepareTimestamps
        // for partition 0 and 1, it only takes records between first and second timestamp
        // for partition 2, it will take all records
        yield* verifyTimestamps(
          topic,
          {
            endingOffsetsByTimestamp: JSON.stringify({
              [topic]: { "0": stamps[1], "1": stamps[1], "2": "9223372036854775807" }
            }).replace(`"9223372036854775807"`, "9223372036854775807")
          },
          [...range(0, 9), ...range(10, 29).filter((x) => x % 3 === 2)]
        )
      })
    )
  )

  it.live("reuse same dataframe in query", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("relation-reuse")
        yield* promise(() => k.createTopic(topic, 1))
        yield* promise(() => sendTo(topic, 0, range(0, 10)))
        const df = yield* createDF(topic, { startingOffsets: "earliest", endingOffsets: "latest" })
        expect(yield* values(df.union(df))).toEqual(sorted(strings([...range(0, 10), ...range(0, 10)])))
      })
    )
  )

  it.live("test late binding start offsets", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("relation-late")
        yield* promise(() => k.createTopic(topic, 1))
        yield* promise(() => sendTo(topic, 0, range(0, 9)))
        const df = yield* createDF(topic, { startingOffsets: "earliest", endingOffsets: "latest" })
        expect(yield* values(df)).toEqual(sorted(strings(range(0, 9))))
        // Blow away current set of messages (Spark's cleanupLogs with a retain-nothing broker;
        // here Kafka's DeleteRecords).
        yield* promise(() => k.deleteRecords(topic, 0, 10))
        yield* promise(() => sendTo(topic, 0, range(10, 19)))
        // Ensure that we late bind to the new starting position
        expect(yield* values(df)).toEqual(sorted(strings(range(10, 19))))
      })
    )
  )

  it.live("bad batch query options", () =>
    live(
      Effect.gen(function* () {
        const spark = yield* Session
        const bad = (options: Record<string, string>, ...expected: ReadonlyArray<string>) =>
          Effect.gen(function* () {
            const failed = yield* Effect.flip(
              Effect.flatMap(spark.read.format("kafka").options(options).load(), (df) => df.collect())
            )
            for (const m of expected) expect(failed.message.toLowerCase()).toContain(m.toLowerCase())
          })
        // Specifying an ending offset as the starting point
        yield* bad({ startingOffsets: "latest" }, "starting offset can't be latest for batch queries on Kafka")
        // Now do it with an explicit json start offset indicating latest
        yield* bad(
          { subscribe: "t", startingOffsets: `{"t":{"0":-1}}` },
          "startingOffsets for t-0 can't be latest for batch queries on Kafka"
        )
        // Make sure we catch ending offsets that indicate earliest
        yield* bad({ endingOffsets: "earliest" }, "ending offset can't be earliest for batch queries on Kafka")
        // Make sure we catch ending offsets that indicating earliest
        yield* bad(
          { subscribe: "t", endingOffsets: `{"t":{"0":-2}}` },
          "ending offset for t-0 can't be earliest for batch queries on Kafka"
        )
        // No strategy specified
        yield* bad({}, "options must be specified", "subscribe", "subscribePattern")
        // Multiple strategies specified
        yield* bad({ subscribe: "t", subscribePattern: "t.*" }, "only one", "options can be specified")
        yield* bad({ subscribe: "t", assign: `{"a":[0]}` }, "only one", "options can be specified")
        yield* bad({ assign: "" }, "no topicpartitions to assign")
        yield* bad({ subscribe: "" }, "no topics to subscribe")
        yield* bad({ subscribePattern: "" }, "pattern to subscribe is empty")
      })
    )
  )

  it.live("read Kafka transactional messages: read_committed", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("relation-committed")
        yield* promise(() => k.createTopic(topic, 1))
        const producer = yield* promise(() => transactional(topic))
        const df = yield* createDF(topic, { "kafka.isolation.level": "read_committed" })
        const send = (xs: ReadonlyArray<number>, end: "commit" | "abort" | "open") =>
          promise(async () => {
            const tx = await producer.transaction()
            await tx.send({ topic, messages: xs.map((x) => ({ value: String(x), partition: 0 })) })
            if (end === "commit") await tx.commit()
            if (end === "abort") await tx.abort()
            return tx
          })
        const open = yield* send(range(1, 5), "open")
        // Should not read any messages before they are committed
        expect(yield* values(df)).toEqual([])
        yield* promise(() => open.commit())
        // Should read all committed messages
        yield* promise(() => waitUntilOffsetAppears(topic, 0, 6))
        expect(yield* values(df)).toEqual(sorted(strings(range(1, 5))))
        yield* send(range(6, 10), "abort")
        // Should not read aborted messages
        yield* promise(() => waitUntilOffsetAppears(topic, 0, 12))
        expect(yield* values(df)).toEqual(sorted(strings(range(1, 5))))
        yield* send(range(11, 15), "commit")
        // Should skip aborted messages and read new committed ones.
        yield* promise(() => waitUntilOffsetAppears(topic, 0, 18))
        expect(yield* values(df)).toEqual(sorted(strings([...range(1, 5), ...range(11, 15)])))
        yield* promise(() => producer.disconnect())
      })
    )
  )

  it.live("read Kafka transactional messages: read_uncommitted", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("relation-uncommitted")
        yield* promise(() => k.createTopic(topic, 1))
        const producer = yield* promise(() => transactional(topic))
        const df = yield* createDF(topic, { "kafka.isolation.level": "read_uncommitted" })
        const send = (xs: ReadonlyArray<number>, end: "commit" | "abort" | "open") =>
          promise(async () => {
            const tx = await producer.transaction()
            await tx.send({ topic, messages: xs.map((x) => ({ value: String(x), partition: 0 })) })
            if (end === "commit") await tx.commit()
            if (end === "abort") await tx.abort()
            return tx
          })
        const open = yield* send(range(1, 5), "open")
        // "read_uncommitted" should see all messages including uncommitted ones (the sends were
        // acknowledged by the broker; kafkajs's admin reads the read_committed end offset, so
        // Spark's wait for offset 5 has no counterpart here)
        expect(yield* values(df)).toEqual(sorted(strings(range(1, 5))))
        yield* promise(() => open.commit())
        // Should read all committed messages
        yield* promise(() => waitUntilOffsetAppears(topic, 0, 6))
        expect(yield* values(df)).toEqual(sorted(strings(range(1, 5))))
        yield* send(range(6, 10), "abort")
        // "read_uncommitted" should see all messages including uncommitted or aborted ones
        yield* promise(() => waitUntilOffsetAppears(topic, 0, 12))
        expect(yield* values(df)).toEqual(sorted(strings(range(1, 10))))
        yield* send(range(11, 15), "commit")
        // Should read all messages
        yield* promise(() => waitUntilOffsetAppears(topic, 0, 18))
        expect(yield* values(df)).toEqual(sorted(strings(range(1, 15))))
        yield* promise(() => producer.disconnect())
      })
    )
  )

  it.live("topic-partition for start offset and end offset must match", () =>
    live(
      Effect.gen(function* () {
        const failed = yield* Effect.flip(
          Effect.flatMap(
            createDF("test", {
              startingOffsets: `{"test": {"0": 1, "1": 1, "2": 1}}`,
              endingOffsets: `{"test": {"0": 0, "1": 0}}`
            }),
            (df) => df.collect()
          )
        )
        expect(failed.message).toContain(
          "The specified start offset and end offset should have the same topic-partitions."
        )
      })
    )
  )

  it.live("unresolved start offset greater than end offset", () =>
    live(
      Effect.gen(function* () {
        const failed = yield* Effect.flip(
          Effect.flatMap(
            createDF("test", {
              startingOffsets: `{"test": {"0": 1, "1": 1, "2": 1}}`,
              endingOffsets: `{"test": {"0": 0, "1": 0, "2": 0}}`
            }),
            (df) => df.collect()
          )
        )
        expect(failed.message).toContain("The specified start offset 1 is greater than the end offset 0 for")
      })
    )
  )

  it.live("resolved start offset greater than end offset (without latest)", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("relation-resolved")
        yield* promise(() => k.createTopic(topic, 3))
        for (let p = 0; p < 3; p++) yield* promise(() => sendTo(topic, p, ["0", "0"]))
        // Spark takes each partition's second record's timestamp (its offset is 1) from the
        // producer's metadata; here from a batch read of the records.
        const spark = yield* Session
        const all = yield* spark.read
          .format("kafka")
          .options({ "kafka.bootstrap.servers": k.brokers, subscribe: topic })
          .load()
        const recs = yield* all.select(F.col("partition"), F.col("offset"), F.col("timestamp")).collect()
        const second = (p: number) =>
          (recs.find((r) => r.partition === p && r.offset === 1)?.timestamp as Date | undefined)?.getTime() ?? Number.NaN
        const df = yield* createDF(topic, {
          startingOffsets: perPartition(topic, [3, 3, 3]),
          endingOffsetsByTimestamp: perPartition(topic, [second(0), second(1), second(2)])
        })
        const failed = yield* Effect.flip(df.collect())
        expect(failed.message).toContain("The resolved start offset 3 is greater than the resolved end offset")
      })
    )
  )

  it.live("resolved start offset greater than end offset (with latest)", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("relation-resolved-latest")
        yield* promise(() => k.createTopic(topic, 3))
        const df = yield* createDF(topic, { startingOffsets: perPartition(topic, [1, 1, 1]) })
        const failed = yield* Effect.flip(df.collect())
        expect(failed.message).toContain("The resolved start offset 1 is greater than the resolved end offset 0 for")
      })
    )
  )
})

/** Ports of Spark's KafkaOffsetReaderSuite cases that define behaviour visible to a batch read. */
describe("KafkaOffsetReaderSuite (Spark)", () => {
  const isolation = (value: string | undefined) =>
    parseBatchOptions({
      "kafka.bootstrap.servers": "b:1",
      subscribe: "t",
      ...(value === undefined ? {} : { "kafka.isolation.level": value })
    })

  it("isolationLevel must give back default isolation level when not set", () => {
    const o = isolation(undefined)
    if (o instanceof AnalysisError) throw o
    // Kafka's consumer default: read_uncommitted.
    expect(o.readCommitted).toBe(false)
  })

  it("isolationLevel must give back READ_UNCOMMITTED when set", () => {
    const o = isolation("read_uncommitted")
    if (o instanceof AnalysisError) throw o
    expect(o.readCommitted).toBe(false)
  })

  it("isolationLevel must give back READ_COMMITTED when set", () => {
    const o = isolation("read_committed")
    if (o instanceof AnalysisError) throw o
    expect(o.readCommitted).toBe(true)
  })

  it("isolationLevel must throw exception when invalid isolation level set", () => {
    expect(isolation("intentionally_invalid")).toBeInstanceOf(AnalysisError)
  })

  it.live("SPARK-48383: START_OFFSET_DOES_NOT_MATCH_ASSIGNED error class", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("reader-start")
        yield* promise(() => k.createTopic(topic, 3))
        // There are three topic partitions, but we only include two in offsets.
        const failed = yield* Effect.flip(
          Effect.flatMap(
            createDF(topic, {
              startingOffsets: JSON.stringify({ [topic]: { "0": -2, "1": -2 } }),
              endingOffsets: JSON.stringify({ [topic]: { "0": -1, "1": 3 } })
            }),
            (df) => df.collect()
          )
        )
        expect(failed.message).toMatch(
          /^\[KAFKA_START_OFFSET_DOES_NOT_MATCH_ASSIGNED\][\s\S]*Specified: Set\(.*,.*\) Assigned: Set\(.*,.*,.*\)/
        )
      })
    )
  )

  for (const specified of [2, 4]) {
    it.live(
      `KAFKA_TIMESTAMP_OFFSET_DOES_NOT_MATCH_ASSIGNED error class - partitions assigned: 3, specified: ${specified}`,
      () =>
        live(
          Effect.gen(function* () {
            const topic = uniqueTopic("reader-ts")
            yield* promise(() => k.createTopic(topic, 3))
            const parts = (v: number) => JSON.stringify({ [topic]: Object.fromEntries(range(0, specified - 1).map((p) => [String(p), v])) })
            const failed = yield* Effect.flip(
              Effect.flatMap(
                createDF(topic, { startingOffsetsByTimestamp: parts(-2), endingOffsetsByTimestamp: parts(-1) }),
                (df) => df.collect()
              )
            )
            expect(failed.message).toContain("[KAFKA_TIMESTAMP_OFFSET_DOES_NOT_MATCH_ASSIGNED]")
            // Spark's parameter `position` is "start".
            expect(failed.message).toContain("Partitions specified for Kafka timestamp based start offsets")
            expect(failed.message).toMatch(/Specified: Set\(.*\) Assigned: Set\(.*,.*,.*\)/)
          })
        )
    )
  }
})
