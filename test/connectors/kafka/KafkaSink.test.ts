/**
 * The `kafka` sink against a real broker: Spark's columns (`key`, `value`, `topic`,
 * `partition`, `headers`), Spark's errors for a missing or mistyped column, and the
 * transactional exactly-once mode (`kafka.transactional.exactlyOnce`): a batch id committed by an
 * earlier run is skipped, a new run fences the old one, and `read_committed` readers see each
 * batch once.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as T from "../../../core/DataType.ts"
import { KafkaSinkFormat } from "../../../connectors/kafka/mod.ts"
import { F, MemoryStream, Session } from "../../../mod.ts"
import { connect, type TestKafka, uniqueTopic } from "./helpers.ts"

let k: TestKafka
beforeAll(async () => {
  k = await connect()
})
afterAll(async () => {
  await k?.close()
})

const live = <A, E>(effect: Effect.Effect<A, E, Session>) => effect.pipe(Effect.provide(Session.layer()))

const schema = T.struct([T.field("key", T.StringType), T.field("value", T.StringType)])

const sinkFor = (options: Record<string, string>, queryId: string, s: T.StructType = schema) =>
  KafkaSinkFormat.create({
    options: { "kafka.bootstrap.servers": k.brokers, ...options },
    schema: s,
    outputMode: "append",
    queryName: undefined,
    queryId,
    partitionColumns: [],
    checkpointPath: "/nonexistent",
    tables: { write: () => {}, seenBatches: () => new Set() }
  })

describe("kafka sink", () => {
  it.live("writes key, value, topic, partition and headers columns", () =>
    live(
      Effect.gen(function* () {
        const a = uniqueTopic("sink-a")
        const b = uniqueTopic("sink-b")
        yield* Effect.promise(() => k.createTopic(a, 2))
        yield* Effect.promise(() => k.createTopic(b, 1))
        const input = yield* MemoryStream.make(
          Schema.Struct({ topic: Schema.String, key: Schema.String, value: Schema.String, partition: Schema.Int })
        )
        yield* input.addData([
          { topic: a, key: "k1", value: "v1", partition: 1 },
          { topic: b, key: "k2", value: "v2", partition: 0 },
          { topic: a, key: "k3", value: "v3", partition: 0 }
        ])
        const query = yield* input
          .toDF()
          .withColumn("partition", F.col("partition").cast("int"))
          .withColumn(
            "headers",
            F.array(F.named_struct(F.lit("key"), F.lit("h"), F.lit("value"), F.col("key").cast("binary")))
          )
          .writeStream.format("kafka")
          .option("kafka.bootstrap.servers", k.brokers)
          .start()
        yield* query.processAllAvailable()
        yield* query.stop()
        expect(yield* Effect.promise(() => k.readAll(a))).toEqual([
          { partition: 0, offset: 0, key: "k3", value: "v3", headers: { h: "k3" } },
          { partition: 1, offset: 0, key: "k1", value: "v1", headers: { h: "k1" } }
        ])
        expect(yield* Effect.promise(() => k.readAll(b))).toEqual([
          { partition: 0, offset: 0, key: "k2", value: "v2", headers: { h: "k2" } }
        ])
      })
    )
  )

  it.live("the topic option wins over a topic column; binary values are written as they are", () =>
    live(
      Effect.gen(function* () {
        const out = uniqueTopic("sink-opt")
        yield* Effect.promise(() => k.createTopic(out, 1))
        const input = yield* MemoryStream.make(Schema.Struct({ topic: Schema.String, value: Schema.String }))
        yield* input.addData([{ topic: "ignored", value: "x" }])
        const query = yield* input
          .toDF()
          .select(F.col("topic"), F.col("value").cast("binary").as("value"))
          .writeStream.format("kafka")
          .option("kafka.bootstrap.servers", k.brokers)
          .option("topic", ` ${out} `)
          .start()
        yield* query.processAllAvailable()
        yield* query.stop()
        const rows = yield* Effect.promise(() => k.readAll(out))
        expect(rows.map((r) => [r.key, r.value])).toEqual([[null, "x"]])
      })
    )
  )

  it.effect("refuses a missing value column, a mistyped key and a missing topic with Spark's messages", () =>
    Effect.gen(function* () {
      const noValue = yield* Effect.flip(sinkFor({ topic: "t" }, "q", T.struct([T.field("key", T.StringType)])))
      expect(noValue.message).toBe("Required attribute 'value' not found")
      const intKey = yield* Effect.flip(
        sinkFor({ topic: "t" }, "q", T.struct([T.field("key", T.IntegerType), T.field("value", T.StringType)]))
      )
      expect(intKey.message).toBe("key attribute unsupported type int. key must be a(n) string or binary")
      const noTopic = yield* Effect.flip(sinkFor({}, "q"))
      expect(noTopic.message).toBe(
        "topic option required when no 'topic' attribute is present. Use the topic option for setting a topic."
      )
      const serializer = yield* Effect.flip(sinkFor({ topic: "t", "kafka.value.serializer": "x" }, "q"))
      expect(serializer.message).toBe(
        "Kafka option 'value.serializer' is not supported as value are serialized with ByteArraySerializer."
      )
    })
  )

  it.live("transactional: a batch id committed by an earlier run is skipped; the new run fences the old", () =>
    Effect.gen(function* () {
      const out = uniqueTopic("sink-tx")
      yield* Effect.promise(() => k.createTopic(out, 1))
      const queryId = `q-${out}`
      const options = { topic: out, "kafka.transactional.exactlyOnce": "true" }
      const rows = (...values: ReadonlyArray<string>) => values.map((v) => [null, v])
      const first = yield* sinkFor(options, queryId)
      yield* first.addBatch({ batchId: 0, schema, rows: rows("a", "b"), outputMode: "append" })
      yield* first.addBatch({ batchId: 1, schema, rows: rows("c"), outputMode: "append" })
      // A replay in the same run is skipped too.
      yield* first.addBatch({ batchId: 1, schema, rows: rows("c"), outputMode: "append" })
      // A new run of the same query: batch 1 was committed to Kafka (say the checkpoint's commit
      // log missed it), so its replay is skipped; batch 2 is new.
      const second = yield* sinkFor(options, queryId)
      yield* second.addBatch({ batchId: 1, schema, rows: rows("c"), outputMode: "append" })
      yield* second.addBatch({ batchId: 2, schema, rows: rows("d"), outputMode: "append" })
      // The first run is a zombie now: Kafka fenced it.
      const zombie = yield* Effect.flip(first.addBatch({ batchId: 3, schema, rows: rows("z"), outputMode: "append" }))
      expect(zombie.message).toContain("was fenced")
      yield* first.stop()
      yield* second.stop()
      const read = yield* Effect.promise(() => k.readAll(out, true))
      expect(read.map((r) => r.value)).toEqual(["a", "b", "c", "d"])
    })
  )
})
