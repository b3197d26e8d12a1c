/**
 * Ports of Spark's KafkaMicroBatchSourceSuite (KafkaMicroBatchV2SourceSuite and
 * KafkaSourceSuiteBase) against the real broker of test/kafka/globalSetup.ts. Each `it` keeps
 * Spark's test name; the inputs and expected answers are Spark's. Spark's `AddKafkaData` sends to
 * the topic with the default partitioner; here the values go round-robin over the partitions
 * (which also gives Spark's `ensureDataInMultiplePartition`).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { F, type Row, Session, Trigger } from "../../../mod.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import {
  AdvanceClock,
  AssertOnQuery,
  CheckAnswer,
  CheckNewAnswer,
  Execute,
  ExpectFailure,
  StartStream,
  type StreamAction,
  StopStream,
  testStream
} from "../../../structured/testing.ts"
import { Partitioners } from "kafkajs"
import {
  KafkaSourceFormat,
  kafkaSchema,
  offsetsBehindLatestMetrics,
  parseBatchOptions,
  parseStreamOptions
} from "../../../connectors/kafka/mod.ts"
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

const load = (options: Record<string, string>) =>
  Effect.gen(function* () {
    const spark = yield* Session
    return spark.readStream
      .format("kafka")
      .options({ "kafka.bootstrap.servers": k.brokers, "kafka.metadata.max.age.ms": "1", ...options })
      .load()
  })

/** Spark's `.selectExpr("CAST(key AS STRING)", "CAST(value AS STRING)").map(kv => kv._2.toInt + plus)`. */
const ints = (df: DataFrame<Row>, plus = 0) =>
  df.select(F.col("value").cast("string").cast("int").plus(plus).as("value"))

const rows = (...values: ReadonlyArray<number>) => values.map((value) => ({ value }))

/** Sends `values` round-robin over the topic's current partitions. */
const sendSpread = async (topic: string, values: ReadonlyArray<number>) => {
  const meta = await k.admin.fetchTopicMetadata({ topics: [topic] })
  const n = meta.topics[0].partitions.length
  const byPartition = new Map<number, Array<string>>()
  values.forEach((v, i) => {
    const p = i % n
    byPartition.set(p, [...(byPartition.get(p) ?? []), String(v)])
  })
  // A fresh producer: kafkajs's producer drops records for partitions its cached metadata does
  // not know yet (the partitions added by the "Add partitions" steps).
  const producer = kafkaFor(k.brokers).producer({ createPartitioner: Partitioners.DefaultPartitioner })
  await producer.connect()
  try {
    for (const [p, vs] of byPartition) {
      await producer.send({ topic, acks: -1, messages: vs.map((value) => ({ value, partition: p })) })
    }
  } finally {
    await producer.disconnect()
  }
}

/** Spark's `testUtils.waitUntilOffsetAppears`: the partition's end offset reached `offset`. */
const waitUntilOffsetAppears = async (topic: string, partition: number, offset: number) => {
  for (let i = 0; i < 300; i++) {
    const offsets = await k.admin.fetchTopicOffsets(topic)
    if (Number(offsets.find((o) => o.partition === partition)?.high ?? -1) >= offset) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`offset ${offset} of ${topic}-${partition} did not appear`)
}

/** Spark's `AddKafkaData(Set(topic), values*)`. */
const AddKafkaData = (topic: string, ...values: ReadonlyArray<number>): StreamAction =>
  Execute(promise(() => sendSpread(topic, values)))

/** Spark's `makeSureGetOffsetCalled`: the query has resolved its initial offsets. */
const makeSureGetOffsetCalled = AssertOnQuery((q) => Effect.as(q.processAllAvailable(), true))

/**
 * Spark's `setTopicPartitions(topic, 10)`; then waits out the source's partition-discovery cache
 * (500 ms) so the next trigger sees the new partitions, as Spark's `kafka.metadata.max.age.ms=1`.
 */
const AddPartitions = (topic: string, count: number): StreamAction =>
  Execute(
    promise(async () => {
      await k.admin.createPartitions({ topicPartitions: [{ topic, count }] })
      for (;;) {
        const m = await k.admin.fetchTopicMetadata({ topics: [topic] })
        if (m.topics[0].partitions.length === count && m.topics[0].partitions.every((p) => p.leader >= 0)) break
        await new Promise((r) => setTimeout(r, 100))
      }
      await new Promise((r) => setTimeout(r, 600))
    })
  )

const sendAt = (topic: string, partition: number, ts: number, ...values: ReadonlyArray<number>) =>
  k.send(
    topic,
    partition,
    values.map((v) => ({ value: String(v), timestamp: String(ts) }))
  )

/** Spark's `setupTestMessagesForTestOnTimestampOffsets`. */
const setupTimestampMessages = async (topic: string, first: number, second: number) => {
  await sendAt(topic, 0, first, -20)
  await sendAt(topic, 1, first, -10)
  await sendAt(topic, 2, first, 0, 1)
  await sendAt(topic, 3, first, 10, 11)
  await sendAt(topic, 4, first, 20, 21, 22)
  await sendAt(topic, 0, second, -21, -22)
  await sendAt(topic, 1, second, -11, -12)
  await sendAt(topic, 2, second, 2)
  await sendAt(topic, 3, second, 12)
}

type Strategy = "assign" | "subscribe" | "subscribePattern"

/** The topic and the strategy option of one of Spark's `assign` / `subscribe` / `subscribePattern` variants. */
const strategyFor = (strategy: Strategy): { topic: string; options: Record<string, string> } => {
  switch (strategy) {
    case "assign": {
      const topic = uniqueTopic("assign")
      return { topic, options: { assign: JSON.stringify({ [topic]: [0, 1, 2, 3, 4] }) } }
    }
    case "subscribe": {
      const topic = uniqueTopic("subscribe")
      return { topic, options: { subscribe: topic } }
    }
    case "subscribePattern": {
      const prefix = uniqueTopic("pattern")
      return { topic: `${prefix}-suffix`, options: { subscribePattern: `${prefix}-.*` } }
    }
  }
}

const strategyName: Record<Strategy, string> = {
  assign: "assign",
  subscribe: "subscribing topic by name",
  subscribePattern: "subscribing topic by pattern"
}

/** Spark's `testFromLatestOffsets`. */
const testFromLatestOffsets = (strategy: Strategy, failOnDataLoss: boolean) =>
  live(
    Effect.gen(function* () {
      const { topic, options } = strategyFor(strategy)
      const addPartitions = strategy !== "assign"
      yield* promise(() => k.createTopic(topic, 5))
      yield* promise(() => k.send(topic, 0, ["-1"]))
      const df = yield* load({ startingOffsets: "latest", failOnDataLoss: String(failOnDataLoss), ...options })
      yield* testStream(ints(df, 1), "append", [
        makeSureGetOffsetCalled,
        AddKafkaData(topic, 1, 2, 3),
        CheckAnswer(...rows(2, 3, 4)),
        StopStream,
        StartStream(),
        CheckAnswer(...rows(2, 3, 4)),
        StopStream,
        AddKafkaData(topic, 4, 5, 6),
        StartStream(),
        CheckAnswer(...rows(2, 3, 4, 5, 6, 7)),
        AddKafkaData(topic, 7, 8),
        CheckAnswer(...rows(2, 3, 4, 5, 6, 7, 8, 9)),
        ...(addPartitions ? [AddPartitions(topic, 10)] : []),
        AddKafkaData(topic, 9, 10, 11, 12, 13, 14, 15, 16),
        CheckAnswer(...rows(2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17))
      ])
    })
  )

/** Spark's `testFromEarliestOffsets`. */
const testFromEarliestOffsets = (strategy: Strategy, failOnDataLoss: boolean) =>
  live(
    Effect.gen(function* () {
      const { topic, options } = strategyFor(strategy)
      const addPartitions = strategy !== "assign"
      yield* promise(() => k.createTopic(topic, 5))
      yield* promise(() => sendSpread(topic, [1, 2, 3]))
      const df = yield* load({ startingOffsets: "earliest", failOnDataLoss: String(failOnDataLoss), ...options })
      yield* testStream(ints(df, 1), "append", [
        AddKafkaData(topic, 4, 5, 6),
        CheckAnswer(...rows(2, 3, 4, 5, 6, 7)),
        StopStream,
        StartStream(),
        CheckAnswer(...rows(2, 3, 4, 5, 6, 7)),
        StopStream,
        AddKafkaData(topic, 7, 8),
        StartStream(),
        CheckAnswer(...rows(2, 3, 4, 5, 6, 7, 8, 9)),
        ...(addPartitions ? [AddPartitions(topic, 10)] : []),
        AddKafkaData(topic, 9, 10, 11, 12, 13, 14, 15, 16),
        CheckAnswer(...rows(2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17))
      ])
    })
  )

/** Spark's `testFromSpecificOffsets`. */
const testFromSpecificOffsets = (strategy: Strategy, failOnDataLoss: boolean) =>
  live(
    Effect.gen(function* () {
      const { topic, options } = strategyFor(strategy)
      const startingOffsets = JSON.stringify({ [topic]: { 0: -2, 1: -1, 2: 0, 3: 1, 4: 2 } })
      yield* promise(() => k.createTopic(topic, 5))
      yield* promise(() => k.send(topic, 0, ["-20", "-21", "-22"]))
      yield* promise(() => k.send(topic, 1, ["-10", "-11", "-12"]))
      yield* promise(() => k.send(topic, 2, ["0", "1", "2"]))
      yield* promise(() => k.send(topic, 3, ["10", "11", "12"]))
      yield* promise(() => k.send(topic, 4, ["20", "21", "22"]))
      const df = yield* load({ startingOffsets, failOnDataLoss: String(failOnDataLoss), ...options })
      yield* testStream(ints(df), "append", [
        makeSureGetOffsetCalled,
        CheckAnswer(...rows(-20, -21, -22, 0, 1, 2, 11, 12, 22)),
        StopStream,
        StartStream(),
        CheckAnswer(...rows(-20, -21, -22, 0, 1, 2, 11, 12, 22)),
        AddKafkaData(topic, 30, 31, 32, 33, 34),
        CheckAnswer(...rows(-20, -21, -22, 0, 1, 2, 11, 12, 22, 30, 31, 32, 33, 34)),
        StopStream
      ])
    })
  )

/** Spark's `testFromSpecificTimestamps`. */
const testFromSpecificTimestamps = (strategy: Strategy, failOnDataLoss: boolean) =>
  live(
    Effect.gen(function* () {
      const { topic, options } = strategyFor(strategy)
      const addPartitions = strategy !== "assign"
      yield* promise(() => k.createTopic(topic, 5))
      const first = Date.now() - 5000
      const second = first + 1000
      yield* promise(() => setupTimestampMessages(topic, first, second))
      const startingOffsetsByTimestamp = JSON.stringify({
        [topic]: { 0: second, 1: second, 2: second, 3: second, 4: first }
      })
      const df = yield* load({ startingOffsetsByTimestamp, failOnDataLoss: String(failOnDataLoss), ...options })
      yield* testStream(ints(df), "append", [
        makeSureGetOffsetCalled,
        CheckAnswer(...rows(-21, -22, -11, -12, 2, 12, 20, 21, 22)),
        StopStream,
        StartStream(),
        CheckAnswer(...rows(-21, -22, -11, -12, 2, 12, 20, 21, 22)),
        StopStream,
        AddKafkaData(topic, 30, 31, 32),
        StartStream(),
        CheckAnswer(...rows(-21, -22, -11, -12, 2, 12, 20, 21, 22, 30, 31, 32)),
        ...(addPartitions ? [AddPartitions(topic, 10)] : []),
        AddKafkaData(topic, 40, 41, 42, 43, 44),
        CheckAnswer(...rows(-21, -22, -11, -12, 2, 12, 20, 21, 22, 30, 31, 32, 40, 41, 42, 43, 44)),
        StopStream
      ])
    })
  )

/** Spark's `testFromGlobalTimestamp`. */
const testFromGlobalTimestamp = (strategy: Strategy, failOnDataLoss: boolean) =>
  live(
    Effect.gen(function* () {
      const { topic, options } = strategyFor(strategy)
      const addPartitions = strategy !== "assign"
      yield* promise(() => k.createTopic(topic, 5))
      const first = Date.now() - 5000
      const second = first + 1000
      yield* promise(() => setupTimestampMessages(topic, first, second))
      yield* promise(() => sendAt(topic, 4, second, 23, 24))
      const df = yield* load({ startingTimestamp: String(second), failOnDataLoss: String(failOnDataLoss), ...options })
      yield* testStream(ints(df), "append", [
        makeSureGetOffsetCalled,
        CheckAnswer(...rows(-21, -22, -11, -12, 2, 12, 23, 24)),
        StopStream,
        StartStream(),
        CheckAnswer(...rows(-21, -22, -11, -12, 2, 12, 23, 24)),
        StopStream,
        AddKafkaData(topic, 30, 31, 32),
        StartStream(),
        CheckAnswer(...rows(-21, -22, -11, -12, 2, 12, 23, 24, 30, 31, 32)),
        ...(addPartitions ? [AddPartitions(topic, 10)] : []),
        AddKafkaData(topic, 40, 41, 42, 43, 44),
        CheckAnswer(...rows(-21, -22, -11, -12, 2, 12, 23, 24, 30, 31, 32, 40, 41, 42, 43, 44)),
        StopStream
      ])
    })
  )

/**
 * Spark's `testFromSpecificTimestampsWithNoMatchingStartingOffset` and
 * `testFromGlobalTimestampWithNoMatchingStartingOffset`: partition 4 has no record at the second
 * timestamp, so strategy `error` (the default) fails and `latest` starts it at its end.
 */
const testNoMatchingStartingOffset = (strategy: Strategy, global: boolean) =>
  live(
    Effect.gen(function* () {
      const { topic, options } = strategyFor(strategy)
      yield* promise(() => k.createTopic(topic, 5))
      const first = Date.now() - 5000
      const second = first + 1000
      yield* promise(() => setupTimestampMessages(topic, first, second))
      const start: Record<string, string> = global
        ? { startingTimestamp: String(second) }
        : {
            startingOffsetsByTimestamp: JSON.stringify({
              [topic]: { 0: second, 1: second, 2: second, 3: second, 4: second }
            })
          }
      const extras: ReadonlyArray<Record<string, string>> = [{}, { startingoffsetsbytimestampstrategy: "error" }]
      for (const extra of extras) {
        const failing = yield* load({ ...start, failOnDataLoss: "true", ...options, ...extra })
        yield* testStream(ints(failing), "append", [
          StartStream(),
          ExpectFailure(undefined, `No offset matched from request of topic-partition ${topic}-4 and timestamp ${second}.`)
        ])
      }
      const df = yield* load({
        ...start,
        failOnDataLoss: "true",
        ...options,
        startingoffsetsbytimestampstrategy: "latest"
      })
      yield* testStream(ints(df), "append", [
        makeSureGetOffsetCalled,
        CheckAnswer(...rows(-21, -22, -11, -12, 2, 12)),
        Execute(promise(() => sendAt(topic, 4, second, 23, 24, 25))),
        CheckAnswer(...rows(-21, -22, -11, -12, 2, 12, 23, 24, 25))
      ])
    })
  )

describe("KafkaSourceSuiteBase (Spark)", () => {
  for (const failOnDataLoss of [true, false]) {
    for (const strategy of ["assign", "subscribe", "subscribePattern"] as const) {
      const name = strategyName[strategy]
      it.live(`${name} from latest offsets (failOnDataLoss: ${failOnDataLoss})`, () =>
        testFromLatestOffsets(strategy, failOnDataLoss)
      )
      it.live(`${name} from earliest offsets (failOnDataLoss: ${failOnDataLoss})`, () =>
        testFromEarliestOffsets(strategy, failOnDataLoss)
      )
      it.live(`${name} from specific offsets (failOnDataLoss: ${failOnDataLoss})`, () =>
        testFromSpecificOffsets(strategy, failOnDataLoss)
      )
      it.live(`${name} from specific timestamps (failOnDataLoss: ${failOnDataLoss})`, () =>
        testFromSpecificTimestamps(strategy, failOnDataLoss)
      )
      it.live(`${name} from global timestamp per topic (failOnDataLoss: ${failOnDataLoss})`, () =>
        testFromGlobalTimestamp(strategy, failOnDataLoss)
      )
    }
  }

  it.live("subscribing topic by name from specific timestamps with non-matching starting offset", () =>
    testNoMatchingStartingOffset("subscribe", false)
  )
  it.live("subscribing topic by name from global timestamp per topic with non-matching starting offset", () =>
    testNoMatchingStartingOffset("subscribe", true)
  )
  it.live("subscribing topic by pattern from specific timestamps with non-matching starting offset", () =>
    testNoMatchingStartingOffset("subscribePattern", false)
  )
  it.live("subscribing topic by pattern from global timestamp per topic with non-matching starting offset", () =>
    testNoMatchingStartingOffset("subscribePattern", true)
  )

  it.live("cannot stop Kafka stream", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("stop")
        yield* promise(() => k.createTopic(topic, 5))
        yield* promise(() => sendSpread(topic, [101, 102, 103, 104, 105]))
        const df = yield* load({ subscribePattern: `${topic}.*` })
        yield* testStream(ints(df, 1), "append", [makeSureGetOffsetCalled, StopStream])
      })
    )
  )

  it.live("Kafka column types", () =>
    live(
      Effect.gen(function* () {
        const now = Date.now()
        const topic = uniqueTopic("types")
        yield* promise(() => k.createTopic(topic, 1))
        yield* promise(() => k.send(topic, 0, [{ value: "1", headers: { a: "b", c: "d" } }]))
        const df = yield* load({ startingOffsets: "earliest", subscribe: topic, includeHeaders: "true" })
        const got: Array<Record<string, unknown>> = []
        const query = yield* df.writeStream
          .foreachBatch((batch) =>
            Effect.map(batch.collect(), (rs) => {
              got.push(...(rs as ReadonlyArray<Record<string, unknown>>))
            })
          )
          .start()
        yield* query.processAllAvailable()
        yield* query.stop()
        expect(got.length).toBe(1)
        const row = got[0]
        expect(row.key).toBeNull()
        expect(Array.from(row.value as Uint8Array)).toEqual(Array.from(new TextEncoder().encode("1")))
        expect(row.topic).toBe(topic)
        expect(row.partition).toBe(0)
        expect(row.offset).toBe(0)
        expect((row.timestamp as Date).getTime()).toBeGreaterThanOrEqual(now)
        expect(row.timestampType).toBe(0)
        expect(
          (row.headers as ReadonlyArray<{ key: string; value: Uint8Array }>).map((h) => [h.key, Array.from(h.value)])
        ).toEqual([
          ["a", [98]],
          ["c", [100]]
        ])
      })
    )
  )

  it.live("bad source options", () =>
    live(
      Effect.gen(function* () {
        const spark = yield* Session
        const bad = (options: Record<string, string>, ...expected: ReadonlyArray<string>) =>
          Effect.gen(function* () {
            const df = spark.readStream.format("kafka").options(options).load()
            const failed = yield* Effect.flip(testStream(df, "append", [makeSureGetOffsetCalled]))
            for (const m of expected) expect(failed.message.toLowerCase()).toContain(m.toLowerCase())
          })
        yield* bad({ endingOffsets: "latest" }, "Ending offset not valid in streaming queries")
        yield* bad(
          { subscribe: "t", endingOffsetsByTimestamp: `{"t": {"0": 1000}}` },
          "Ending timestamp not valid in streaming queries"
        )
        yield* bad({}, "options must be specified", "subscribe", "subscribePattern")
        yield* bad({ subscribe: "t", subscribePattern: "t.*" }, "only one", "options can be specified")
        yield* bad({ subscribe: "t", assign: `{"a":[0]}` }, "only one", "options can be specified")
        yield* bad({ assign: "" }, "no topicpartitions to assign")
        yield* bad({ subscribe: "" }, "no topics to subscribe")
        yield* bad({ subscribePattern: "" }, "pattern to subscribe is empty")
        yield* bad(
          {
            "kafka.bootstrap.servers": "fake",
            subscribe: "t",
            minOffsetsPerTrigger: "20",
            maxOffsetsPerTrigger: "15"
          },
          "value of minOffsetPerTrigger(20) is higher than the maxOffsetsPerTrigger(15)"
        )
      })
    )
  )

  it.live("unsupported kafka configs", () =>
    live(
      Effect.gen(function* () {
        const spark = yield* Session
        const unsupported = (key: string, value = "someValue") =>
          Effect.gen(function* () {
            const df = spark.readStream
              .format("kafka")
              .option("subscribe", "topic")
              .option("kafka.bootstrap.servers", "somehost")
              .option(key, value)
              .load()
            const failed = yield* Effect.flip(testStream(df, "append", [makeSureGetOffsetCalled]))
            expect(failed.message.toLowerCase()).toContain("not supported")
          })
        yield* unsupported("kafka.auto.offset.reset")
        yield* unsupported("kafka.enable.auto.commit")
        yield* unsupported("kafka.interceptor.classes")
        yield* unsupported("kafka.key.deserializer")
        yield* unsupported("kafka.value.deserializer")
        yield* unsupported("kafka.auto.offset.reset", "none")
        yield* unsupported("kafka.auto.offset.reset", "someValue")
        yield* unsupported("kafka.auto.offset.reset", "earliest")
        yield* unsupported("kafka.auto.offset.reset", "latest")
      })
    )
  )
})

describe("KafkaMicroBatchSourceSuiteBase (Spark)", () => {
  it.live("(de)serialization of initial offsets", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("init")
        yield* promise(() => k.createTopic(topic, 5))
        const df = yield* load({ subscribe: topic })
        yield* testStream(df, "append", [makeSureGetOffsetCalled, StopStream, StartStream(), StopStream])
      })
    )
  )

  it.live("SPARK-26718 Rate limit set to Long.Max should not overflow integer during end offset calculation", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("longmax")
        yield* promise(() => k.createTopic(topic, 1))
        yield* promise(() => k.send(topic, 0, ["0", "1", "2", "3", "4"]))
        const df = yield* load({
          startingOffsets: JSON.stringify({ [topic]: { 0: 5 } }),
          maxOffsetsPerTrigger: "9223372036854775807",
          subscribe: topic
        })
        yield* testStream(ints(df), "append", [
          makeSureGetOffsetCalled,
          AddKafkaData(topic, 30, 31, 32, 33, 34),
          CheckAnswer(...rows(30, 31, 32, 33, 34)),
          StopStream
        ])
      })
    )
  )

  it.live("Trigger.AvailableNow", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("availnow")
        yield* promise(() => k.createTopic(topic, 5))
        yield* promise(() => k.send(topic, 0, Array.from({ length: 15 }, (_, i) => `foo-${i}`)))
        const df = yield* load({ maxOffsetsPerTrigger: "5", subscribe: topic, startingOffsets: "earliest" })
        let index = 0
        const query = yield* df.writeStream
          .foreachBatch(() =>
            Effect.sync(() => {
              index += 1
            })
          )
          .trigger(Trigger.AvailableNow())
          .start()
        yield* query.awaitTermination()
        // 15 / 5 = 3 batches.
        expect(index).toBe(3)
      })
    )
  )

  it.live("input row metrics", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("metrics")
        yield* promise(() => k.createTopic(topic, 5))
        yield* promise(() => k.send(topic, 0, ["-1"]))
        const df = yield* load({ subscribe: topic })
        yield* testStream(ints(df, 1), "append", [
          StartStream({ trigger: Trigger.ProcessingTime(1) }),
          makeSureGetOffsetCalled,
          AddKafkaData(topic, 1, 2, 3),
          CheckAnswer(...rows(2, 3, 4)),
          AssertOnQuery((q) =>
            Effect.map(q.recentProgress(), (ps) => ps.reduce((n, p) => n + p.numInputRows, 0) === 3)
          )
        ])
      })
    )
  )

  it.live("SPARK-22956: currentPartitionOffsets should be set when no new data comes in", () =>
    live(
      Effect.gen(function* () {
        const specific = (values: ReadonlyArray<number>) =>
          Effect.gen(function* () {
            const topic = uniqueTopic("spark22956")
            yield* promise(() => k.createTopic(topic, 1))
            yield* promise(() => k.send(topic, 0, values.map(String)))
            return ints(yield* load({ maxOffsetsPerTrigger: "5", subscribe: topic, startingOffsets: "earliest" }))
          })
        const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i)
        const df1 = yield* specific(range(0, 9))
        const df2 = yield* specific(range(100, 199))
        // Spark drives each batch with a manual clock; here each batch is checked by reading
        // the batches one by one through a foreachBatch sink.
        const batches: Array<ReadonlyArray<number>> = []
        const start = () =>
          df1
            .union(df2)
            .writeStream.option("checkpointLocation", checkpoint)
            .foreachBatch((b) =>
              Effect.map(b.collect(), (rs) => {
                batches.push(rs.map((r) => r.value as number).sort((x, y) => x - y))
              })
            )
            .start()
        const checkpoint = `/tmp/tributary-kafka-22956-${crypto.randomUUID()}`
        // Three batches, a restart, two more: Spark's CheckLastBatch steps.
        const q1 = yield* start()
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
        yield* q1.processAllAvailable()
        yield* q1.stop()
        const q2 = yield* start()
        yield* q2.processAllAvailable()
        yield* q2.stop()
        expect(batches.slice(0, 5)).toEqual([
          [...range(0, 4), ...range(100, 104)],
          [...range(5, 9), ...range(105, 109)],
          range(110, 114),
          range(115, 119),
          range(120, 124)
        ])
      })
    )
  )

  it.live("KafkaSource with watermark", () =>
    live(
      Effect.gen(function* () {
        const now = Date.now()
        const topic = uniqueTopic("watermark")
        yield* promise(() => k.createTopic(topic, 1))
        yield* promise(() => k.send(topic, 0, ["1"]))
        const df = yield* load({ startingOffsets: "earliest", subscribe: topic })
        const agg = df
          .withWatermark("timestamp", "10 seconds")
          .groupBy(F.window(F.col("timestamp"), "5 seconds").as("window"))
          .agg(F.count("*").as("count"))
          .select(F.col("window").getField("start").as("window"), F.col("count"))
        let last: ReadonlyArray<Row> = []
        const query = yield* agg.writeStream
          .outputMode("complete")
          .foreachBatch((b) =>
            Effect.map(b.collect(), (rs) => {
              last = rs
            })
          )
          .start()
        yield* query.processAllAvailable()
        yield* query.stop()
        expect(last.length).toBe(1)
        expect((last[0].window as Date).getTime()).toBeGreaterThanOrEqual(now - 5000)
        expect(last[0].count).toBe(1)
      })
    )
  )

  it.live("SPARK-27494: read kafka record containing null key/values.", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("nulls")
        yield* promise(() => k.createTopic(topic, 1))
        const df = yield* load({
          "kafka.isolation.level": "read_committed",
          startingOffsets: "earliest",
          subscribe: topic
        })
        const kv = df.select(F.col("key").cast("string").as("key"), F.col("value").cast("string").as("value"))
        const expected: Array<{ key: string | null; value: string | null }> = []
        const messages: Array<{ key: string | null; value: string | null }> = []
        for (let i = 0; i < 5; i++) messages.push({ key: null, value: null })
        for (let i = 1; i <= 5; i++) messages.push({ key: String(i), value: null })
        for (let i = 6; i <= 10; i++) messages.push({ key: null, value: String(i) })
        expected.push(...messages)
        // Spark runs this with Trigger.ProcessingTime(100) and polls the memory table until the
        // rows are there; the default trigger with CheckAnswer waits for them the same way.
        yield* testStream(kv, "append", [
          StartStream(),
          Execute(
            promise(async () => {
              const producer = kafkaFor(k.brokers).producer({
                transactionalId: `tx-${topic}`,
                maxInFlightRequests: 1,
                idempotent: true
              })
              await producer.connect()
              const tx = await producer.transaction()
              await tx.send({ topic, messages: messages.map((m) => ({ ...m, partition: 0 })) })
              await tx.commit()
              await producer.disconnect()
              // The commit marker is written after commit() returns: wait for it (offset 15),
              // as Spark's test waits (`eventually`) for the rows.
              await waitUntilOffsetAppears(topic, 0, 16)
            })
          ),
          CheckAnswer(...expected)
        ])
      })
    )
  )

  it.live("subscribing topic by pattern with topic deletions", () =>
    live(
      Effect.gen(function* () {
        const prefix = uniqueTopic("deletions")
        const topic = `${prefix}-seems`
        const topic2 = `${prefix}-bad`
        yield* promise(() => k.createTopic(topic, 5))
        yield* promise(() => k.send(topic, 0, ["-1"]))
        const df = yield* load({ subscribePattern: `${prefix}-.*`, failOnDataLoss: "false" })
        yield* testStream(ints(df, 1), "append", [
          makeSureGetOffsetCalled,
          AddKafkaData(topic, 1, 2, 3),
          CheckAnswer(...rows(2, 3, 4)),
          Execute(
            promise(async () => {
              await k.admin.deleteTopics({ topics: [topic] })
              await k.createTopic(topic2, 5)
              await new Promise((r) => setTimeout(r, 600))
            })
          ),
          makeSureGetOffsetCalled,
          AddKafkaData(topic2, 4, 5, 6),
          CheckAnswer(...rows(2, 3, 4, 5, 6, 7))
        ])
      })
    )
  )

  it.live("subscribe topic by pattern with topic recreation between batches", () =>
    live(
      Effect.gen(function* () {
        const prefix = uniqueTopic("recreate")
        const topic = `${prefix}-good`
        const topic2 = `${prefix}-bad`
        yield* promise(() => k.createTopic(topic, 1))
        yield* promise(() => k.send(topic, 0, ["1", "3"]))
        yield* promise(() => k.createTopic(topic2, 1))
        yield* promise(() => k.send(topic2, 0, ["2", "4"]))
        const df = yield* load({ startingOffsets: "earliest", subscribePattern: `${prefix}-.*` })
        yield* testStream(ints(df), "append", [
          StartStream(),
          makeSureGetOffsetCalled,
          CheckAnswer(...rows(1, 2, 3, 4)),
          StopStream,
          Execute(
            promise(async () => {
              await k.admin.deleteTopics({ topics: [topic2] })
              // Topic deletion completes asynchronously in the broker.
              for (let i = 0; i < 100; i++) {
                const topics = await k.admin.listTopics()
                if (!topics.includes(topic2)) break
                await new Promise((r) => setTimeout(r, 100))
              }
              await k.createTopic(topic2, 1)
              await k.send(topic2, 0, ["6"])
            })
          ),
          StartStream(),
          // The offset of topic2 went from 2 to 1.
          ExpectFailure(undefined, "was changed from 2 to 1")
        ])
      })
    )
  )

  it.live("ensure stream-stream self-join generates only one offset in log and correct metrics", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("selfjoin")
        const joined = (...ts: ReadonlyArray<readonly [number, number, number]>) =>
          ts.map(([key, value, value2]) => ({ key, value, value2 }))
        yield* promise(() => k.createTopic(topic, 2))
        const df = yield* load({ subscribe: topic })
        const values = df.select(
          F.col("value").cast("string").cast("int").as("value"),
          F.col("value").cast("string").cast("int").mod(5).as("key")
        )
        const join = values.join(values.withColumnRenamed("value", "value2"), "key")
        let inputRows = -1
        yield* testStream(join, "append", [
          makeSureGetOffsetCalled,
          AddKafkaData(topic, 1, 2),
          CheckAnswer(...joined([1, 1, 1], [2, 2, 2])),
          AddKafkaData(topic, 6, 3),
          CheckAnswer(...joined([1, 1, 1], [2, 2, 2], [3, 3, 3], [1, 6, 1], [1, 1, 6], [1, 6, 6])),
          // One source in every batch's progress, and 8 input rows in all: Spark's count with
          // exchange reuse off (the source is scanned on both sides of the self-join).
          AssertOnQuery((q) =>
            Effect.map(q.recentProgress(), (ps) => {
              inputRows = ps.reduce((n, p) => n + p.numInputRows, 0)
              return ps.every((p) => p.sources.length === 1)
            })
          )
        ])
        expect(inputRows).toBe(8)
      })
    )
  )
})

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i)
const sendTo = (topic: string, partition: number, values: ReadonlyArray<number>) =>
  k.send(topic, partition, values.map(String))

/**
 * Spark's "When Trigger.Once() is used, the read limit should be ignored" tail of the
 * rate-limit tests: one Trigger.Once run reads everything, a restart reads what was added.
 */
const onceIgnoresReadLimit = (topic: string, df: DataFrame<Row>, allData: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const dir = `/tmp/tributary-kafka-once-${crypto.randomUUID()}`
    const added = range(1000, 1010)
    yield* testStream(ints(df), "append", [
      StartStream({ trigger: Trigger.Once(), checkpointLocation: dir }),
      makeSureGetOffsetCalled,
      CheckAnswer(...rows(...allData)),
      StopStream,
      Execute(promise(() => sendSpread(topic, added))),
      StartStream({ trigger: Trigger.Once(), checkpointLocation: dir }),
      makeSureGetOffsetCalled,
      CheckAnswer(...rows(...allData, ...added))
    ])
  })

// These run on the test clock: Spark's StreamManualClock drives the ProcessingTime(100) trigger,
// and maxTriggerDelay is measured on the same clock (Spark sleeps 5 s of wall-clock time, or
// mocks the system clock in compositeReadLimit).
describe("KafkaMicroBatchSourceSuiteBase (Spark), rate limits on the test clock", () => {
  it.effect("maxOffsetsPerTrigger", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("maxoffsets")
        yield* promise(() => k.createTopic(topic, 3))
        yield* promise(() => sendTo(topic, 0, range(100, 200)))
        yield* promise(() => sendTo(topic, 1, range(10, 20)))
        yield* promise(() => sendTo(topic, 2, [1]))
        const df = yield* load({ maxOffsetsPerTrigger: "10", subscribe: topic, startingOffsets: "earliest" })
        const b1 = [1, 10, ...range(100, 107)]
        const b2 = [11, ...range(108, 116)]
        const b3 = [12, ...range(117, 125)]
        const b4 = [13, ...range(126, 134)]
        yield* testStream(ints(df), "append", [
          StartStream({ trigger: Trigger.ProcessingTime(100) }),
          // 1 from smallest, 1 from middle, 8 from biggest
          CheckAnswer(...rows(...b1)),
          AdvanceClock(100),
          // smallest now empty, 1 more from middle, 9 more from biggest
          CheckAnswer(...rows(...b1, ...b2)),
          StopStream,
          StartStream({ trigger: Trigger.ProcessingTime(100) }),
          CheckAnswer(...rows(...b1, ...b2, ...b3)),
          AdvanceClock(100),
          CheckAnswer(...rows(...b1, ...b2, ...b3, ...b4))
        ])
      })
    )
  )

  it.effect("minOffsetsPerTrigger", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("minoffsets")
        yield* promise(() => k.createTopic(topic, 3))
        yield* promise(() => sendTo(topic, 0, range(100, 109)))
        yield* promise(() => sendTo(topic, 1, range(10, 14)))
        yield* promise(() => sendTo(topic, 2, [1]))
        const df = yield* load({
          minOffsetsPerTrigger: "15",
          maxTriggerDelay: "5s",
          subscribe: topic,
          startingOffsets: "earliest"
        })
        yield* testStream(ints(df), "append", [
          StartStream({ trigger: Trigger.ProcessingTime(100) }),
          // First Batch is always processed
          CheckAnswer(...rows(1, 10, ...range(100, 109), 11, 12, 13, 14)),
          // Adding more data but less than minOffsetsPerTrigger
          Execute(promise(() => sendTo(topic, 1, range(15, 20)))),
          // No data is processed for next batch as data is less than minOffsetsPerTrigger
          // and maxTriggerDelay is not expired
          AdvanceClock(100),
          CheckNewAnswer(),
          Execute(
            promise(async () => {
              await sendTo(topic, 0, range(110, 120))
              await sendTo(topic, 2, [2])
            })
          ),
          AdvanceClock(100),
          // Running batch now as number of records is greater than minOffsetsPerTrigger
          CheckAnswer(...rows(1, 2, ...range(10, 20), ...range(100, 120))),
          // Testing maxTriggerDelay: adding more data but less than minOffsetsPerTrigger
          Execute(
            promise(async () => {
              await sendTo(topic, 0, range(121, 125))
              await sendTo(topic, 1, range(21, 25))
            })
          ),
          AdvanceClock(100),
          CheckNewAnswer(),
          // Spark sleeps 5 s to let maxTriggerDelay expire.
          AdvanceClock("5 seconds"),
          CheckAnswer(...rows(1, 2, ...range(10, 25), ...range(100, 125)))
        ])
      })
    )
  )

  it.effect("compositeReadLimit", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("composite")
        yield* promise(() => k.createTopic(topic, 3))
        yield* promise(() => sendTo(topic, 0, range(100, 120)))
        yield* promise(() => sendTo(topic, 1, range(10, 20)))
        yield* promise(() => sendTo(topic, 2, [1]))
        const df = yield* load({
          minOffsetsPerTrigger: "15",
          maxTriggerDelay: "5s",
          maxOffsetsPerTrigger: "20",
          subscribe: topic,
          startingOffsets: "earliest"
        })
        yield* testStream(ints(df), "append", [
          StartStream({ trigger: Trigger.ProcessingTime(100) }),
          // First Batch is always processed but it will process only 20
          CheckAnswer(...rows(1, 10, ...range(100, 111), 11, 12, 13, 14, 15)),
          // Pending data is less than minOffsetsPerTrigger
          AdvanceClock(100),
          CheckNewAnswer(),
          Execute(
            promise(async () => {
              await sendTo(topic, 0, range(121, 128))
              await sendTo(topic, 1, range(21, 30))
              await sendTo(topic, 2, [2])
            })
          ),
          AdvanceClock(100),
          // Running batch now as number of new records is greater than minOffsetsPerTrigger
          // but reading limited data as per maxOffsetsPerTrigger
          CheckAnswer(...rows(1, 2, ...range(10, 24), ...range(100, 121))),
          // Testing maxTriggerDelay
          AdvanceClock(100),
          CheckNewAnswer(),
          AdvanceClock("5 seconds"),
          CheckAnswer(...rows(1, 2, ...range(10, 30), ...range(100, 128)))
        ])
      })
    )
  )

  // Spark's tail of the three rate-limit tests: "When Trigger.Once() is used, the read limit
  // should be ignored" (Spark's MicroBatchExecution gives a SupportsAdmissionControl source
  // `ReadLimit.allAvailable()` under Trigger.Once).
  it.effect("maxOffsetsPerTrigger: Trigger.Once ignores the read limit", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("maxoffsets-once")
        yield* promise(() => k.createTopic(topic, 3))
        yield* promise(() => sendTo(topic, 0, range(100, 200)))
        yield* promise(() => sendTo(topic, 1, range(10, 20)))
        yield* promise(() => sendTo(topic, 2, [1]))
        const df = yield* load({ maxOffsetsPerTrigger: "10", subscribe: topic, startingOffsets: "earliest" })
        yield* onceIgnoresReadLimit(topic, df, [1, ...range(10, 20), ...range(100, 200)])
      })
    )
  )

  it.effect("minOffsetsPerTrigger: Trigger.Once ignores the read limit", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("minoffsets-once")
        yield* promise(() => k.createTopic(topic, 3))
        yield* promise(() => sendTo(topic, 0, range(100, 125)))
        yield* promise(() => sendTo(topic, 1, range(10, 25)))
        yield* promise(() => sendTo(topic, 2, [1, 2]))
        const df = yield* load({
          minOffsetsPerTrigger: "15",
          maxTriggerDelay: "5s",
          subscribe: topic,
          startingOffsets: "earliest"
        })
        yield* onceIgnoresReadLimit(topic, df, [1, 2, ...range(10, 25), ...range(100, 125)])
      })
    )
  )

  it.effect("compositeReadLimit: Trigger.Once ignores the read limit", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("composite-once")
        yield* promise(() => k.createTopic(topic, 3))
        yield* promise(() => sendTo(topic, 0, range(100, 128)))
        yield* promise(() => sendTo(topic, 1, range(10, 30)))
        yield* promise(() => sendTo(topic, 2, [1, 2]))
        const df = yield* load({
          minOffsetsPerTrigger: "15",
          maxTriggerDelay: "5s",
          maxOffsetsPerTrigger: "20",
          subscribe: topic,
          startingOffsets: "earliest"
        })
        yield* onceIgnoresReadLimit(topic, df, [1, 2, ...range(10, 30), ...range(100, 128)])
      })
    )
  )
})

describe("KafkaMicroBatchV2SourceSuite (Spark): custom metrics", () => {
  it("test custom metrics - corner cases", () => {
    const tp1 = uniqueTopic("m1")
    const tp2 = uniqueTopic("m2")
    const latest = new Map([
      [`${tp1}-0`, 3],
      [`${tp2}-0`, 6]
    ])
    // test empty offset.
    expect(offsetsBehindLatestMetrics(undefined, latest)).toEqual({})
    // test valid offsetsBehindLatest
    const offset = { [tp1]: { "0": 1 }, [tp2]: { "0": 2 } }
    expect(offsetsBehindLatestMetrics(offset, latest)).toEqual({
      minOffsetsBehindLatest: "2",
      maxOffsetsBehindLatest: "4",
      avgOffsetsBehindLatest: "3.0"
    })
    // test null latestAvailablePartitionOffsets
    expect(offsetsBehindLatestMetrics(offset, undefined)).toEqual({})
  })

  it.live("SPARK-57438: metrics should not NPE when latestPartitionOffsets is null", () =>
    Effect.gen(function* () {
      const topic = uniqueTopic("spark57438")
      const source = yield* KafkaSourceFormat.create({
        options: { "kafka.bootstrap.servers": k.brokers, subscribe: topic },
        schema: kafkaSchema(false),
        metadataPath: `/tmp/tributary-kafka-test-${topic}`,
        conf: new Map()
      })
      // latestOffset was never called: no latest offsets, no metrics.
      expect(source.metrics?.({ [topic]: { "0": 0 } })).toEqual({})
      yield* source.stop()
    })
  )

  /** Spark's two "test custom metrics" queries: 10 records over 2 partitions. */
  const customMetrics = (maxOffsetsPerTrigger: string | undefined) =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("custom-metrics")
        yield* promise(() => k.createTopic(topic, 2))
        yield* promise(() => sendTo(topic, 0, range(1, 5)))
        yield* promise(() => sendTo(topic, 1, range(6, 10)))
        const df = yield* load({
          subscribe: topic,
          startingOffsets: "earliest",
          ...(maxOffsetsPerTrigger === undefined ? {} : { maxOffsetsPerTrigger })
        })
        let metrics: ReadonlyArray<Readonly<Record<string, string>>> = []
        yield* testStream(ints(df), "append", [
          StartStream(),
          makeSureGetOffsetCalled,
          CheckAnswer(...rows(...range(1, 10))),
          Execute((q) =>
            Effect.map(q!.recentProgress(), (ps) => {
              metrics = ps.map((p) => p.sources[0].metrics)
            })
          )
        ])
        return metrics
      })
    )

  // The progress asks each source for its metrics (Spark's
  // `ReportsSourceMetrics.metrics(latestConsumedOffset)`, ProgressReporter.extractSourceProgress);
  // the Kafka source gives them through `MicroBatchSource.metrics`.
  it.live("test custom metrics - with rate limit", () =>
    Effect.gen(function* () {
      const metrics = yield* customMetrics("1")
      // The rate limit is 1, so there must be some delay in offsets per partition.
      const delayed = metrics.findLast((m) => Object.keys(m).length > 0 && Number(m.avgOffsetsBehindLatest) > 0)
      expect(delayed).toBeDefined()
      expect(Object.keys(delayed!).sort()).toEqual([
        "avgOffsetsBehindLatest",
        "maxOffsetsBehindLatest",
        "minOffsetsBehindLatest"
      ])
      expect(Number(delayed!.minOffsetsBehindLatest)).toBeGreaterThan(0)
      expect(Number(delayed!.maxOffsetsBehindLatest)).toBeGreaterThan(0)
      expect(Number(delayed!.avgOffsetsBehindLatest)).toBeGreaterThan(0)
    })
  )

  it.live("test custom metrics - no rate limit", () =>
    Effect.gen(function* () {
      const metrics = yield* customMetrics(undefined)
      // When there is no rate limit, there shouldn't be any delay in the current stream.
      expect(metrics.at(-1)).toEqual({
        minOffsetsBehindLatest: "0",
        maxOffsetsBehindLatest: "0",
        avgOffsetsBehindLatest: "0.0"
      })
    })
  )
})

/** Deletes `topic`, waits until the broker forgot it, creates it again with `partitions`. */
const recreateTopic = async (topic: string, partitions: number) => {
  await k.admin.deleteTopics({ topics: [topic] })
  for (let i = 0; i < 200; i++) {
    if (!(await k.admin.listTopics()).includes(topic)) break
    await new Promise((r) => setTimeout(r, 100))
  }
  for (let i = 0; ; i++) {
    try {
      await k.createTopic(topic, partitions)
      return
    } catch (e) {
      // "Topic is marked for deletion" until the deletion completes.
      if (i > 100) throw e
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}

describe("KafkaMicroBatchSourceSuiteBase (Spark): Trigger.AvailableNow checks", () => {
  const availableNowWithRecreation = (partitions: number, records: number) =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("availnow-lost")
        yield* promise(() => k.createTopic(topic, 5))
        yield* promise(() => k.send(topic, 0, Array.from({ length: 15 }, (_, i) => `foo-${i}`)))
        const df = yield* load({
          "kafka.metadata.max.age.ms": "500",
          maxOffsetsPerTrigger: "5",
          subscribe: topic,
          startingOffsets: "earliest",
          // the query should fail regardless of this option
          failOnDataLoss: "true"
        })
        const query = yield* df.writeStream
          .foreachBatch(() =>
            promise(async () => {
              await recreateTopic(topic, partitions)
              await k.send(
                topic,
                0,
                Array.from({ length: records }, (_, i) => `foo-${i}`)
              )
            })
          )
          .trigger(Trigger.AvailableNow())
          .start()
        const failed = yield* Effect.flip(query.awaitTermination())
        return failed.message
      })
    )

  it.live(
    "Query with Trigger.AvailableNow should throw error when topic partitions got unavailable during subsequent batches",
    () =>
      Effect.gen(function* () {
        // create partitions less than the kafka data source figured out as an end state
        const message = yield* availableNowWithRecreation(3, 15)
        expect(message).toContain(
          "Some of partitions in Kafka topic(s) have been lost during running query with Trigger.AvailableNow."
        )
        expect(message).toContain("topic-partitions for latest offset: ")
        expect(message).toContain("topic-partitions for end offset: ")
      }),
    120_000
  )

  it.live(
    "Query with Trigger.AvailableNow should throw error when offset(s) in planned topic partitions got unavailable during subsequent batches",
    () =>
      Effect.gen(function* () {
        // the number of available records will change to lower than the end state
        const message = yield* availableNowWithRecreation(5, 10)
        expect(message).toContain(
          "Some of partitions in Kafka topic(s) report available offset which is less than end offset during running query with Trigger.AvailableNow."
        )
        expect(message).toContain("latest offset: ")
        expect(message).toContain("end offset: ")
      }),
    120_000
  )
})

/**
 * Spark's "read Kafka transactional messages" streaming tests (maxOffsetsPerTrigger 3, values
 * equal to their offsets, `*` marks an offset without a visible record: a commit or abort
 * marker, or an aborted record under read_committed). Spark's `WithOffsetSync` waits for the
 * partition's end offset; kafkajs's admin reads the read_committed end, so a step that leaves a
 * transaction open (its records acknowledged by the broker) has nothing to wait for.
 */
const transactionalRead = (isolation: "read_committed" | "read_uncommitted") =>
  live(
    Effect.gen(function* () {
      const topic = uniqueTopic(`tx-${isolation}`)
      yield* promise(() => k.createTopic(topic, 1))
      const df = yield* load({
        "kafka.isolation.level": isolation,
        maxOffsetsPerTrigger: "3",
        subscribe: topic,
        startingOffsets: "earliest",
        "kafkaConsumer.pollTimeoutMs": "5000"
      })
      const producer = kafkaFor(k.brokers).producer({
        transactionalId: `tx-${topic}`,
        maxInFlightRequests: 1,
        idempotent: true
      })
      yield* promise(() => producer.connect())
      let open: Awaited<ReturnType<typeof producer.transaction>> | undefined
      const begin = (xs: ReadonlyArray<number>) =>
        promise(async () => {
          open = await producer.transaction()
          await open.send({ topic, messages: xs.map((x) => ({ value: String(x), partition: 0 })) })
        })
      const commit = (expectedOffset: number) =>
        Execute(
          promise(async () => {
            await open!.commit()
            await waitUntilOffsetAppears(topic, 0, expectedOffset)
          })
        )
      const committed = (...xs: ReadonlyArray<number>) => rows(...xs)
      const uncommitted = isolation === "read_uncommitted"
      yield* testStream(ints(df), "append", [
        StartStream({ trigger: Trigger.ProcessingTime(100) }),
        CheckAnswer(),
        // Send 5 messages. They should be visible only after being committed.
        Execute(begin(range(0, 4))),
        AdvanceClock(100),
        // Should not see any uncommitted messages (read_uncommitted sees them)
        uncommitted ? CheckNewAnswer(...committed(0, 1, 2)) : CheckNewAnswer(),
        commit(6),
        AdvanceClock(100),
        uncommitted ? CheckNewAnswer(...committed(3, 4)) : CheckNewAnswer(...committed(0, 1, 2)),
        ...(uncommitted ? [] : [AdvanceClock(100), CheckNewAnswer(...committed(3, 4))]), // offset: 3, 4, 5*
        // Send 5 messages and abort the transaction. They should not be read.
        Execute(
          promise(async () => {
            const tx = await producer.transaction()
            await tx.send({ topic, messages: range(6, 10).map((x) => ({ value: String(x), partition: 0 })) })
            await tx.abort()
            await waitUntilOffsetAppears(topic, 0, 12)
          })
        ),
        AdvanceClock(100),
        uncommitted ? CheckNewAnswer(...committed(6, 7, 8)) : CheckNewAnswer(), // offset: 6*, 7*, 8*
        AdvanceClock(100),
        uncommitted ? CheckNewAnswer(...committed(9, 10)) : CheckNewAnswer(), // offset: 9*, 10*, 11*
        // Send 5 messages again. The consumer should skip the above aborted messages and read them.
        Execute(
          promise(async () => {
            const tx = await producer.transaction()
            await tx.send({ topic, messages: range(12, 16).map((x) => ({ value: String(x), partition: 0 })) })
            await tx.commit()
            await waitUntilOffsetAppears(topic, 0, 18)
          })
        ),
        AdvanceClock(100),
        CheckNewAnswer(...committed(12, 13, 14)), // offset: 12, 13, 14
        AdvanceClock(100),
        CheckNewAnswer(...committed(15, 16)), // offset: 15, 16, 17*
        Execute(
          promise(async () => {
            for (const xs of [[18], [20], [22, 23]]) {
              const tx = await producer.transaction()
              await tx.send({ topic, messages: xs.map((x) => ({ value: String(x), partition: 0 })) })
              await tx.commit()
            }
            await waitUntilOffsetAppears(topic, 0, 25)
          })
        ),
        AdvanceClock(100),
        CheckNewAnswer(...committed(18, 20)), // offset: 18, 19*, 20
        AdvanceClock(100),
        CheckNewAnswer(...committed(22, 23)), // offset: 21*, 22, 23
        AdvanceClock(100),
        CheckNewAnswer() // offset: 24*
      ])
      yield* promise(() => producer.disconnect())
    })
  )

describe("KafkaMicroBatchSourceSuiteBase (Spark): transactions on the test clock", () => {
  it.effect("read Kafka transactional messages: read_committed", () => transactionalRead("read_committed"))
  it.effect("read Kafka transactional messages: read_uncommitted", () => transactionalRead("read_uncommitted"))
})

describe("KafkaSourceSuiteBase (Spark): topic-level offsets", () => {
  it.live("subscribing topics from topic-level offsets", () =>
    live(
      Effect.gen(function* () {
        const topic1 = uniqueTopic("topic-level-1")
        const topic2 = uniqueTopic("topic-level-2")
        yield* promise(() => k.createTopic(topic1, 3))
        yield* promise(() => k.createTopic(topic2, 2))
        yield* promise(() => sendTo(topic1, 0, [1, 2, 3]))
        yield* promise(() => sendTo(topic2, 0, [11]))
        // topic1 is read from its beginning while topic2 only contributes the records added
        // after the query started.
        const df = yield* load({
          subscribe: `${topic1},${topic2}`,
          startingOffsets: JSON.stringify({ [topic1]: "earliest", [topic2]: "latest" })
        })
        yield* testStream(ints(df), "append", [
          makeSureGetOffsetCalled,
          Execute(promise(() => sendTo(topic2, 0, [12]))),
          AddKafkaData(topic1, 4),
          CheckAnswer(...rows(1, 2, 3, 12, 4)),
          StopStream,
          StartStream(),
          CheckAnswer(...rows(1, 2, 3, 12, 4)) // Should get the data back on recovery
        ])
      })
    )
  )

  it.live("topic-level offsets tolerate a new topic matching subscribePattern after the start", () =>
    live(
      Effect.gen(function* () {
        const prefix = uniqueTopic("topic-level-pattern")
        const topic = `${prefix}-a`
        const topic2 = `${prefix}-b`
        yield* promise(() => k.createTopic(topic, 1))
        yield* promise(() => sendTo(topic, 0, [1]))
        // The starting offsets only name the topic that exists when the query starts
        const df = yield* load({
          subscribePattern: `${prefix}-.*`,
          startingOffsets: JSON.stringify({ [topic]: "earliest" })
        })
        yield* testStream(ints(df), "append", [
          StartStream(),
          makeSureGetOffsetCalled,
          CheckAnswer(...rows(1)),
          // A topic created after the initial offsets were resolved is picked up as a new
          // partition, starting at earliest
          Execute(
            promise(async () => {
              await k.createTopic(topic2, 1)
              await sendTo(topic2, 0, [2])
              await new Promise((r) => setTimeout(r, 600))
            })
          ),
          makeSureGetOffsetCalled,
          CheckAnswer(...rows(1, 2))
        ])
      })
    )
  )

  it("get offsets from case insensitive parameters", () => {
    const base = { "kafka.bootstrap.servers": "b:1", subscribe: "dummy" }
    const starting = (v: string) => {
      const o = parseStreamOptions({ ...base, startingOffsets: v })
      if (o instanceof AnalysisError) throw o
      return o.startingOffsets
    }
    expect(starting("earLiEst")).toEqual({ _tag: "Earliest" })
    const ending = parseBatchOptions({ ...base, endingOffsets: "laTest" })
    if (ending instanceof AnalysisError) throw ending
    expect(ending.endingOffsets).toEqual({ _tag: "Latest" })
    expect(starting(`{"topic-A":{"0":23}}`)).toEqual({
      _tag: "SpecificOffsets",
      offsets: new Map([["topic-A", new Map([[0, 23]])]])
    })
    expect(starting(`{"topic-A":"eArLiEst","topic-B":{"0":23}}`)).toEqual({
      _tag: "SpecificOffsets",
      offsets: new Map([["topic-B", new Map([[0, 23]])]]),
      topicOffsets: new Map([["topic-A", -2]])
    })
    // Without the options: earliest for starting (batch), latest for ending.
    const dflt = parseBatchOptions(base)
    if (dflt instanceof AnalysisError) throw dflt
    expect([dflt.startingOffsets, dflt.endingOffsets]).toEqual([{ _tag: "Earliest" }, { _tag: "Latest" }])
  })
})

describe("KafkaMicroBatchSourceSuiteBase (Spark): more", () => {
  it.live("SPARK-56243: malformed record timestamp throws detailed error", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("malformed-ts")
        // The test broker refuses timestamps far in the future by default (Kafka's
        // message.timestamp.after.max.ms); Spark's test broker takes them.
        yield* promise(async () => {
          await k.admin.createTopics({
            topics: [
              {
                topic,
                numPartitions: 1,
                configEntries: [{ name: "message.timestamp.after.max.ms", value: "9223372036854775807" }]
              }
            ]
          })
          await waitUntilOffsetAppears(topic, 0, 0)
        })
        // Nanosecond-precision timestamp that overflows millis-to-micros conversion
        const nanoTimestamp = "1712345678123456789"
        yield* promise(() => k.send(topic, 0, [{ value: "value", timestamp: nanoTimestamp }]))
        const df = yield* load({ subscribe: topic, startingOffsets: "earliest" })
        let message = ""
        yield* testStream(df, "append", [
          StartStream(),
          ExpectFailure(undefined, "[KAFKA_MALFORMED_RECORD_TIMESTAMP]"),
          Execute((q) =>
            Effect.map(q!.exception(), (e) => {
              message = e?.message ?? ""
            })
          )
        ])
        expect(message).toContain(topic)
        expect(message).toContain(nanoTimestamp)
        expect(message).toContain("22008")
      })
    )
  )

  it.live("SPARK-25495: FetchedData.reset should reset all fields", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("spark25495")
        yield* promise(() => k.createTopic(topic, 1))
        const df = yield* load({
          "kafka.isolation.level": "read_committed",
          subscribe: topic,
          startingOffsets: "earliest"
        })
        const sendCommitted = (xs: ReadonlyArray<number>) =>
          promise(async () => {
            const producer = kafkaFor(k.brokers).producer({
              transactionalId: `tx-${topic}`,
              maxInFlightRequests: 1,
              idempotent: true
            })
            await producer.connect()
            const tx = await producer.transaction()
            await tx.send({ topic, messages: xs.map((x) => ({ value: String(x), partition: 0 })) })
            await tx.commit()
            await producer.disconnect()
          })
        yield* sendCommitted(range(0, 3))
        yield* promise(() => waitUntilOffsetAppears(topic, 0, 5))
        const batches = new Map<number, ReadonlyArray<string>>()
        const query = yield* df
          .select(F.col("value").cast("string").as("value"))
          .writeStream.foreachBatch((batch, epochId) =>
            Effect.gen(function* () {
              if (epochId === 0) {
                // Send more message before the tasks of the current batch start reading the
                // current batch data.
                yield* sendCommitted(range(4, 7))
                yield* promise(() => waitUntilOffsetAppears(topic, 0, 10))
              }
              const rs = yield* batch.collect()
              batches.set(epochId, rs.map((r) => r.value as string).sort())
            })
          )
          .start()
        yield* query.processAllAvailable()
        yield* query.stop()
        expect(batches.get(0)).toEqual(["0", "1", "2", "3"])
        expect(batches.get(1)).toEqual(["4", "5", "6", "7"])
      })
    )
  )

  it.live("SPARK-41375: empty partitions should not record to latest offset", () =>
    live(
      Effect.gen(function* () {
        const prefix = uniqueTopic("spark41375")
        const topic = `${prefix}-good`
        yield* promise(() => k.createTopic(topic, 5))
        yield* promise(() => k.send(topic, 0, ["-1"]))
        const df = yield* load({ subscribePattern: `${prefix}-.*`, failOnDataLoss: "false" })
        yield* testStream(ints(df, 1), "append", [
          makeSureGetOffsetCalled,
          AddKafkaData(topic, 1, 2, 3),
          CheckAnswer(...rows(2, 3, 4)),
          Execute(
            promise(async () => {
              await k.admin.deleteTopics({ topics: [topic] })
              await new Promise((r) => setTimeout(r, 600))
            })
          ),
          makeSureGetOffsetCalled,
          // No batch was planned with an empty offset (`{}`) for the source.
          AssertOnQuery((q) =>
            Effect.map(q.recentProgress(), (ps) =>
              ps.every((p) => p.sources.every((s) => JSON.stringify(s.endOffset) !== "{}"))
            )
          )
        ])
      })
    )
  )

  it.live("delete a topic when a Spark job is running", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("delete-running")
        yield* promise(() => k.createTopic(topic, 1))
        yield* promise(() => sendTo(topic, 0, range(1, 10)))
        const df = yield* load({
          "kafka.request.timeout.ms": "3000",
          "kafka.default.api.timeout.ms": "3000",
          subscribe: topic,
          "kafkaConsumer.pollTimeoutMs": "1000",
          startingOffsets: "earliest",
          failOnDataLoss: "false"
        })
        // The writer deletes (and re-creates) the topic before the batch's records are read.
        const query = yield* ints(df)
          .writeStream.foreachBatch((batch) =>
            Effect.gen(function* () {
              yield* promise(() => recreateTopic(topic, 1))
              yield* batch.collect()
            })
          )
          .start()
        yield* query.processAllAvailable()
        yield* query.stop()
        // `failOnDataLoss` is `false`, we should not fail the query
        expect(yield* query.exception()).toBeNull()
      })
    )
  )
})

describe("KafkaSourceSuiteBase (Spark): AvailableNow retry", () => {
  it.live("SPARK-53560: no crash looping during uncommitted batch retry in AvailableNow trigger", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("spark53560")
        yield* promise(() => k.createTopic(topic, 1))
        yield* promise(() => sendTo(topic, 0, range(1, 7)))
        const df = yield* load({ subscribe: topic, startingOffsets: "earliest" })
        const dir = `/tmp/tributary-kafka-53560-${crypto.randomUUID()}`
        // Spark's `udfFailOn7` in a map; here the batch function fails on the record 7.
        const run = () =>
          Effect.gen(function* () {
            const query = yield* ints(df)
              .writeStream.option("checkpointLocation", dir)
              .foreachBatch((batch) =>
                Effect.flatMap(batch.collect(), (rs) =>
                  rs.some((r) => r.value === 7) ? Effect.fail(new Error("error for 7")) : Effect.void
                )
              )
              .trigger(Trigger.AvailableNow())
              .start()
            return yield* Effect.flip(query.awaitTermination())
          })
        expect((yield* run()).message).toContain("error for 7")
        yield* promise(() => k.admin.createPartitions({ topicPartitions: [{ topic, count: 2 }] }))
        yield* promise(() => new Promise((r) => setTimeout(r, 600)))
        // Getting this error means the query has passed the planning stage, so
        // verifyEndOffsetForTriggerAvailableNow succeeds.
        expect((yield* run()).message).toContain("error for 7")
      })
    )
  )
})
