/**
 * The `kafka` source against a real broker (started by test/kafka/globalSetup.ts), after
 * Spark's KafkaMicroBatchSourceSuite: Spark's row schema and offsets, replay after a restart,
 * maxOffsetsPerTrigger, minOffsetsPerTrigger, startingOffsets variants, failOnDataLoss on deleted
 * records, includeHeaders, subscribePattern and assign, and committing offsets to a group.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { F, type Row, Session } from "../../../mod.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import {
  CheckAnswer,
  Execute,
  ExpectFailure,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"
import type { MicroBatchSource } from "../../../core/Streaming.ts"
import { KafkaSourceFormat, kafkaSchema } from "../../../connectors/kafka/mod.ts"
import { connect, type TestKafka, uniqueTopic } from "./helpers.ts"

let k: TestKafka
beforeAll(async () => {
  k = await connect()
})
afterAll(async () => {
  await k?.close()
})

const send = (topic: string, partition: number, ...values: ReadonlyArray<string>) =>
  Execute(Effect.promise(() => k.send(topic, partition, values)))

/** `value` as a string with partition and offset: the usual projection of these tests. */
const values = (df: DataFrame<Row>) =>
  df.select(F.col("value").cast("string").as("value"), F.col("partition"), F.col("offset"))

const stream = (options: Record<string, string>) =>
  Effect.gen(function* () {
    const spark = yield* Session
    return spark.readStream
      .format("kafka")
      .options({ "kafka.bootstrap.servers": k.brokers, ...options })
      .load()
  })

const live = <A, E>(effect: Effect.Effect<A, E, Session>) => effect.pipe(Effect.provide(Session.layer()))

describe("kafka source", () => {
  it("has Spark's schema, with headers only when includeHeaders is true", () => {
    expect(KafkaSourceFormat.schema(undefined, { "kafka.bootstrap.servers": "b:1", subscribe: "t" })).toEqual(
      kafkaSchema(false)
    )
    expect(kafkaSchema(false).fields.map((f) => `${f.name}:${f.dataType._tag}`)).toEqual([
      "key:binary",
      "value:binary",
      "topic:string",
      "partition:integer",
      "offset:long",
      "timestamp:timestamp",
      "timestampType:integer"
    ])
    expect(
      kafkaSchema(true)
        .fields.map((f) => f.name)
        .at(-1)
    ).toBe("headers")
  })

  it.live("reads new records batch by batch and replays exactly after a restart", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("src-restart")
        yield* Effect.promise(() => k.createTopic(topic, 2))
        yield* Effect.promise(() => k.send(topic, 0, ["before"]))
        const df = yield* stream({ subscribe: topic, startingOffsets: "earliest" })
        yield* testStream(values(df), "append", [
          StartStream(),
          CheckAnswer({ value: "before", partition: 0, offset: 0 }),
          send(topic, 0, "a", "b"),
          send(topic, 1, "c"),
          CheckAnswer(
            { value: "before", partition: 0, offset: 0 },
            { value: "a", partition: 0, offset: 1 },
            { value: "b", partition: 0, offset: 2 },
            { value: "c", partition: 1, offset: 0 }
          ),
          StopStream,
          send(topic, 1, "d"),
          send(topic, 0, "e"),
          StartStream(),
          CheckAnswer(
            { value: "before", partition: 0, offset: 0 },
            { value: "a", partition: 0, offset: 1 },
            { value: "b", partition: 0, offset: 2 },
            { value: "c", partition: 1, offset: 0 },
            { value: "d", partition: 1, offset: 1 },
            { value: "e", partition: 0, offset: 3 }
          )
        ])
      })
    )
  )

  it.live("logs Spark's offset JSON and gives the same rows for a logged range every time", () =>
    Effect.gen(function* () {
      const topic = uniqueTopic("src-offsets")
      yield* Effect.promise(() => k.createTopic(topic, 2))
      yield* Effect.promise(() => k.send(topic, 0, ["x", "y"]))
      yield* Effect.promise(() => k.send(topic, 1, ["z"]))
      const source: MicroBatchSource = yield* KafkaSourceFormat.create({
        options: { "kafka.bootstrap.servers": k.brokers, subscribe: topic, startingOffsets: "earliest" },
        schema: kafkaSchema(false),
        metadataPath: `/tmp/tributary-kafka-test-${topic}`,
        conf: new Map()
      })
      const start = yield* source.initialOffset()
      expect(JSON.stringify(start)).toBe(`{"${topic}":{"0":0,"1":0}}`)
      expect(source.reportLatestOffset?.()).toBeUndefined()
      const end = yield* source.latestOffset(start, source.defaultReadLimit())
      expect(JSON.stringify(end)).toBe(`{"${topic}":{"0":2,"1":1}}`)
      // Spark's reportLatestOffset: the partitions' latest offsets, whatever the read limit.
      yield* source.latestOffset(start, { _tag: "MaxRows", maxRows: 1 })
      expect(JSON.stringify(source.reportLatestOffset?.())).toBe(`{"${topic}":{"0":2,"1":1}}`)
      // No new data: the same offset back.
      expect(JSON.stringify(yield* source.latestOffset(end, source.defaultReadLimit()))).toBe(JSON.stringify(end))
      const decoded = yield* source.decodeOffset(JSON.parse(JSON.stringify(end)))
      const rows1 = yield* source.getBatch(start, decoded)
      yield* Effect.promise(() => k.send(topic, 0, ["later"]))
      const rows2 = yield* source.getBatch(start, decoded)
      expect(rows2).toEqual(rows1)
      expect(rows1.map((r) => [Buffer.from(r[1] as Uint8Array).toString(), r[2], r[3], r[4], r[6]])).toEqual([
        ["x", topic, 0, 0, 0],
        ["y", topic, 0, 1, 0],
        ["z", topic, 1, 0, 0]
      ])
      expect(typeof rows1[0][5]).toBe("number")
      yield* source.stop()
    })
  )

  it.live("maxOffsetsPerTrigger spreads the limit over partitions by backlog", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("src-max")
        yield* Effect.promise(() => k.createTopic(topic, 2))
        yield* Effect.promise(() => k.send(topic, 0, ["1", "2", "3", "4", "5", "6"]))
        yield* Effect.promise(() => k.send(topic, 1, ["7", "8"]))
        const df = yield* stream({ subscribe: topic, startingOffsets: "earliest", maxOffsetsPerTrigger: "4" })
        const batches: Array<ReadonlyArray<string>> = []
        const query = yield* values(df)
          .writeStream.foreachBatch((batch) =>
            Effect.map(batch.collect(), (rows) => {
              batches.push(rows.map((r) => `${r.partition}:${r.value}`))
            })
          )
          .start()
        yield* query.processAllAvailable()
        // Progress reports the partitions' latest offsets as `latestOffset`, beyond the batch end.
        const first = (yield* query.recentProgress())[0]
        expect(JSON.stringify(first.sources[0].endOffset)).toBe(`{"${topic}":{"0":3,"1":1}}`)
        expect(JSON.stringify(first.sources[0].latestOffset)).toBe(`{"${topic}":{"0":6,"1":2}}`)
        yield* query.stop()
        // Spark's rateLimit: 4 * 6/8 = 3 from partition 0 and 4 * 2/8 = 1 from partition 1, then
        // 4 * 3/4 = 3 and 4 * 1/4 = 1 of what is left.
        expect(batches).toEqual([
          ["0:1", "0:2", "0:3", "1:7"],
          ["0:4", "0:5", "0:6", "1:8"]
        ])
      })
    )
  )

  it.live("minOffsetsPerTrigger holds a batch back until enough records are there", () =>
    Effect.gen(function* () {
      const topic = uniqueTopic("src-min")
      yield* Effect.promise(() => k.createTopic(topic, 1))
      const source = yield* KafkaSourceFormat.create({
        options: {
          "kafka.bootstrap.servers": k.brokers,
          subscribe: topic,
          startingOffsets: "earliest",
          minOffsetsPerTrigger: "3",
          maxTriggerDelay: "1h"
        },
        schema: kafkaSchema(false),
        metadataPath: `/tmp/tributary-kafka-test-${topic}`,
        conf: new Map()
      })
      expect(source.defaultReadLimit()).toEqual({ _tag: "MinRows", minRows: 3, maxTriggerDelayMs: 3_600_000 })
      const start = yield* source.initialOffset()
      const next = () => Effect.map(source.latestOffset(start, source.defaultReadLimit()), (o) => JSON.stringify(o))
      // Spark's first trigger is never delayed (the last trigger time starts at 0).
      yield* Effect.promise(() => k.send(topic, 0, ["1"]))
      expect(yield* next()).toBe(`{"${topic}":{"0":1}}`)
      // Now 1 record is fewer than 3 and the delay has not passed: the batch waits.
      expect(yield* next()).toBe(JSON.stringify(start))
      yield* Effect.promise(() => k.send(topic, 0, ["2", "3"]))
      expect(yield* next()).toBe(`{"${topic}":{"0":3}}`)
      yield* source.stop()
    })
  )

  it.live("startingOffsets: latest (default), per-partition JSON with -2 and -1, and by timestamp", () =>
    Effect.gen(function* () {
      const topic = uniqueTopic("src-start")
      yield* Effect.promise(() => k.createTopic(topic, 2))
      yield* Effect.promise(() => k.send(topic, 0, ["a", "b", "c"]))
      yield* Effect.promise(() => k.send(topic, 1, ["d", "e"]))
      const initial = (options: Record<string, string>) =>
        Effect.gen(function* () {
          const source = yield* KafkaSourceFormat.create({
            options: { "kafka.bootstrap.servers": k.brokers, subscribe: topic, ...options },
            schema: kafkaSchema(false),
            metadataPath: `/tmp/tributary-kafka-test-${topic}-${Math.random()}`,
            conf: new Map()
          })
          const o = yield* source.initialOffset()
          yield* source.stop()
          return JSON.stringify(o)
        })
      expect(yield* initial({})).toBe(`{"${topic}":{"0":3,"1":2}}`)
      expect(yield* initial({ startingOffsets: `{"${topic}":{"0":1,"1":-2}}` })).toBe(`{"${topic}":{"0":1,"1":0}}`)
      expect(yield* initial({ startingOffsets: `{"${topic}":{"0":-1,"1":1}}` })).toBe(`{"${topic}":{"0":3,"1":1}}`)
      expect(yield* initial({ startingTimestamp: "0" })).toBe(`{"${topic}":{"0":0,"1":0}}`)
      const far = String(Date.now() + 3_600_000)
      const failed = yield* Effect.flip(initial({ startingTimestamp: far }))
      expect(failed.message).toContain("No offset matched")
      expect(yield* initial({ startingTimestamp: far, startingOffsetsByTimestampStrategy: "latest" })).toBe(
        `{"${topic}":{"0":3,"1":2}}`
      )
      const mismatch = yield* Effect.flip(initial({ startingOffsets: `{"${topic}":{"0":1}}` }))
      expect(mismatch.message).toContain("[KAFKA_START_OFFSET_DOES_NOT_MATCH_ASSIGNED]")
    })
  )

  it.live("failOnDataLoss: deleted records fail the query, or are skipped when false", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("src-loss")
        yield* Effect.promise(() => k.createTopic(topic, 1))
        const df = yield* stream({ subscribe: topic, startingOffsets: "earliest" })
        const deleteUpTo = (offset: number) => Execute(Effect.promise(() => k.deleteRecords(topic, 0, offset)))
        yield* testStream(values(df), "append", [
          StartStream(),
          send(topic, 0, "a"),
          CheckAnswer({ value: "a", partition: 0, offset: 0 }),
          StopStream,
          send(topic, 0, "b", "c", "d"),
          deleteUpTo(3),
          StartStream(),
          ExpectFailure(undefined, "[KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE]")
        ])
        const topic2 = uniqueTopic("src-loss2")
        yield* Effect.promise(() => k.createTopic(topic2, 1))
        const lenient2 = yield* stream({ subscribe: topic2, startingOffsets: "earliest", failOnDataLoss: "false" })
        yield* testStream(values(lenient2), "append", [
          StartStream(),
          send(topic2, 0, "a"),
          CheckAnswer({ value: "a", partition: 0, offset: 0 }),
          StopStream,
          send(topic2, 0, "b", "c", "d"),
          Execute(Effect.promise(() => k.deleteRecords(topic2, 0, 3))),
          StartStream(),
          CheckAnswer({ value: "a", partition: 0, offset: 0 }, { value: "d", partition: 0, offset: 3 })
        ])
      })
    )
  )

  it.live("includeHeaders gives headers as array<struct<key, value>>", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("src-headers")
        yield* Effect.promise(() => k.createTopic(topic, 1))
        yield* Effect.promise(() =>
          k.send(topic, 0, [
            { value: "h1", key: "k1", headers: { a: "1", b: "2" } },
            { value: "h2", key: null }
          ])
        )
        const df = yield* stream({ subscribe: topic, startingOffsets: "earliest", includeHeaders: "true" })
        const rows: Array<unknown> = []
        const query = yield* df
          .select(F.col("key").cast("string").as("key"), F.col("value").cast("string").as("value"), F.col("headers"))
          .writeStream.foreachBatch((batch) =>
            Effect.map(batch.collect(), (rs) => {
              rows.push(...rs)
            })
          )
          .start()
        yield* query.processAllAvailable()
        yield* query.stop()
        const text = (v: unknown) => Buffer.from(v as Uint8Array).toString()
        expect(
          (
            rows as ReadonlyArray<{
              key: string | null
              value: string
              headers: ReadonlyArray<{ key: string; value: Uint8Array }> | null
            }>
          ).map((r) => ({ key: r.key, value: r.value, headers: r.headers?.map((h) => [h.key, text(h.value)]) ?? null }))
        ).toEqual([
          {
            key: "k1",
            value: "h1",
            headers: [
              ["a", "1"],
              ["b", "2"]
            ]
          },
          // Spark gives null headers to a record without any.
          { key: null, value: "h2", headers: null }
        ])
      })
    )
  )

  it.live("subscribePattern and assign choose the partitions", () =>
    Effect.gen(function* () {
      const base = uniqueTopic("src-pattern")
      yield* Effect.promise(() => k.createTopic(`${base}-x`, 1))
      yield* Effect.promise(() => k.createTopic(`${base}-y`, 2))
      yield* Effect.promise(() => k.send(`${base}-x`, 0, ["x"]))
      yield* Effect.promise(() => k.send(`${base}-y`, 1, ["y"]))
      const make = (options: Record<string, string>) =>
        KafkaSourceFormat.create({
          options: { "kafka.bootstrap.servers": k.brokers, startingOffsets: "earliest", ...options },
          schema: kafkaSchema(false),
          metadataPath: `/tmp/tributary-kafka-test-${base}-${Math.random()}`,
          conf: new Map()
        })
      const pattern = yield* make({ subscribePattern: `${base}-.*` })
      expect(JSON.stringify(yield* pattern.initialOffset())).toBe(`{"${base}-x":{"0":0},"${base}-y":{"0":0,"1":0}}`)
      expect(pattern.description).toBe(`KafkaV2[SubscribePattern[${base}-.*]]`)
      const assign = yield* make({ assign: `{"${base}-y":[1]}` })
      const start = yield* assign.initialOffset()
      const end = yield* assign.latestOffset(start, assign.defaultReadLimit())
      const rows = yield* assign.getBatch(start, end)
      expect(rows.map((r) => [r[2], r[3], Buffer.from(r[1] as Uint8Array).toString()])).toEqual([[`${base}-y`, 1, "y"]])
      yield* pattern.stop()
      yield* assign.stop()
    })
  )

  it.live("commitOffsetsToGroup commits each batch's end offsets to the group", () =>
    live(
      Effect.gen(function* () {
        const topic = uniqueTopic("src-group")
        const group = `lag-${topic}`
        yield* Effect.promise(() => k.createTopic(topic, 1))
        yield* Effect.promise(() => k.send(topic, 0, ["1", "2", "3"]))
        const df = yield* stream({ subscribe: topic, startingOffsets: "earliest", commitOffsetsToGroup: group })
        const query = yield* values(df)
          .writeStream.foreachBatch(() => Effect.void)
          .start()
        yield* query.processAllAvailable()
        yield* Effect.promise(() => k.send(topic, 0, ["4"]))
        // processAllAvailable covers what the broker reported when it was called: until the new
        // record is reported, run again (a real broker, on real time).
        for (let attempt = 0; attempt < 100; attempt++) {
          yield* query.processAllAvailable()
          const end = (yield* query.lastProgress())?.sources[0]?.endOffset as Record<string, Record<string, number>> | null
          if (end?.[topic]?.["0"] === 4) break
          yield* Effect.sleep("100 millis")
        }
        yield* query.stop()
        const committed = yield* Effect.promise(() => k.admin.fetchOffsets({ groupId: group, topics: [topic] }))
        expect(committed[0].partitions.map((p) => [p.partition, p.offset])).toEqual([[0, "4"]])
      })
    )
  )
})
