/**
 * Ports of Spark's KafkaSinkMicroBatchStreamingSuite (KafkaSinkStreamingSuiteBase) against the
 * real broker of test/kafka/globalSetup.ts: a `MemoryStream[String]` written to Kafka and read
 * back with a batch read (`startingOffsets` earliest, `endingOffsets` latest). Each `it` keeps
 * Spark's test name; Spark's `selectExpr` strings are written as columns.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { type Column, F, MemoryStream, Session } from "../../../mod.ts"
import { connect, type TestKafka, uniqueTopic } from "./helpers.ts"

let k: TestKafka
beforeAll(async () => {
  k = await connect()
})
afterAll(async () => {
  await k?.close()
})

const live = <A, E>(effect: Effect.Effect<A, E, Session>) => effect.pipe(Effect.provide(Session.layer()))
const promise = <A>(f: () => Promise<A>) => Effect.promise(f)

/** Spark's `createKafkaReader(topic)` mapped to the `value`s as ints. */
const readValues = (topic: string) =>
  Effect.gen(function* () {
    const spark = yield* Session
    const df = yield* spark.read
      .format("kafka")
      .options({
        "kafka.bootstrap.servers": k.brokers,
        startingOffsets: "earliest",
        endingOffsets: "latest",
        subscribe: topic
      })
      .load()
    const rows = yield* df
      .select(F.col("key").cast("string").cast("int").as("key"), F.col("value").cast("string").cast("int").as("value"))
      .collect()
    return rows.map((r) => r.value as number).sort((a, b) => a - b)
  })

/** Spark's `createKafkaWriter(input.toDF(), withTopic, withOutputMode, withOptions)(withSelectExpr*)`. */
const createKafkaWriter = (
  input: MemoryStream<{ readonly value: string }>,
  options: {
    readonly topic?: string
    readonly outputMode?: "append" | "update"
    readonly extra?: Record<string, string>
    readonly select?: ReadonlyArray<Column<any>>
  }
) => {
  let df = input.toDF()
  if (options.select !== undefined) df = df.select(...options.select) as never
  let writer = df.writeStream
    .format("kafka")
    .option("kafka.bootstrap.servers", k.brokers)
    .option("kafka.max.block.ms", "5000")
    .queryName(`kafkaStream-${uniqueTopic("q")}`)
  if (options.topic !== undefined) writer = writer.option("topic", options.topic)
  if (options.outputMode !== undefined) writer = writer.outputMode(options.outputMode)
  for (const [key, v] of Object.entries(options.extra ?? {})) writer = writer.option(key, v)
  return writer.start()
}

/** Spark's `runAndVerifyValues`: 1-5, then 6-10, each read back after processAllAvailable. */
const runAndVerifyValues = (
  input: MemoryStream<{ readonly value: string }>,
  topic: string,
  start: ReturnType<typeof createKafkaWriter>
) =>
  Effect.gen(function* () {
    const writer = yield* start
    yield* input.addData(["1", "2", "3", "4", "5"].map((value) => ({ value })))
    yield* writer.processAllAvailable()
    expect(yield* readValues(topic)).toEqual([1, 2, 3, 4, 5])
    yield* input.addData(["6", "7", "8", "9", "10"].map((value) => ({ value })))
    yield* writer.processAllAvailable()
    expect(yield* readValues(topic)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    yield* writer.stop()
  })

/** Spark's `runAndVerifyException`: starting, adding data and processing fail with `expected`. */
const runAndVerifyException = (
  input: MemoryStream<{ readonly value: string }>,
  expected: string,
  start: ReturnType<typeof createKafkaWriter>
) =>
  Effect.gen(function* () {
    const failure = yield* Effect.flip(
      Effect.gen(function* () {
        const writer = yield* start
        yield* input.addData(["1", "2", "3", "4", "5"].map((value) => ({ value })))
        yield* Effect.ensuring(writer.processAllAvailable(), writer.stop())
      })
    )
    expect(failure.message.toLowerCase()).toContain(expected.toLowerCase())
  })

const memoryStream = () => MemoryStream.make(Schema.Struct({ value: Schema.String }))

describe("KafkaSinkMicroBatchStreamingSuite (Spark)", () => {
  it.live("streaming - write to kafka with topic field", () =>
    live(
      Effect.gen(function* () {
        const input = yield* memoryStream()
        const topic = uniqueTopic("sink-field")
        yield* promise(() => k.createTopic(topic, 1))
        yield* runAndVerifyValues(
          input,
          topic,
          createKafkaWriter(input, { outputMode: "append", select: [F.lit(topic).as("topic"), F.col("value")] })
        )
      })
    )
  )

  it.live("streaming - write w/o topic field, with topic option", () =>
    live(
      Effect.gen(function* () {
        const input = yield* memoryStream()
        const topic = uniqueTopic("sink-option")
        yield* promise(() => k.createTopic(topic, 1))
        yield* runAndVerifyValues(input, topic, createKafkaWriter(input, { topic, outputMode: "append" }))
      })
    )
  )

  it.live("streaming - topic field and topic option", () =>
    live(
      Effect.gen(function* () {
        const input = yield* memoryStream()
        const topic = uniqueTopic("sink-both")
        yield* promise(() => k.createTopic(topic, 1))
        yield* runAndVerifyValues(
          input,
          topic,
          createKafkaWriter(input, { topic, outputMode: "append", select: [F.lit("foo").as("topic"), F.col("value")] })
        )
      })
    )
  )

  it.live("streaming - write data with bad schema", () =>
    live(
      Effect.gen(function* () {
        const input = yield* memoryStream()
        const topic = uniqueTopic("sink-bad")
        yield* promise(() => k.createTopic(topic, 1))
        yield* runAndVerifyException(
          input,
          "topic option required when no 'topic' attribute is present",
          createKafkaWriter(input, { select: [F.col("value").as("key"), F.col("value")] })
        )
        yield* runAndVerifyException(
          input,
          "required attribute 'value' not found",
          createKafkaWriter(input, { select: [F.lit(topic).as("topic"), F.col("value").as("key")] })
        )
      })
    )
  )

  it.live("streaming - write data with valid schema but wrong types", () =>
    live(
      Effect.gen(function* () {
        const input = yield* memoryStream()
        const topic = uniqueTopic("sink-types")
        yield* promise(() => k.createTopic(topic, 1))
        yield* runAndVerifyException(
          input,
          "topic must be a(n) string",
          createKafkaWriter(input, { select: [F.lit("1").cast("int").as("topic"), F.col("value")] })
        )
        yield* runAndVerifyException(
          input,
          "value must be a(n) string or binary",
          createKafkaWriter(input, { select: [F.lit(topic).as("topic"), F.col("value").cast("int").as("value")] })
        )
        yield* runAndVerifyException(
          input,
          "key must be a(n) string or binary",
          createKafkaWriter(input, {
            select: [F.lit(topic).as("topic"), F.col("value").cast("int").as("key"), F.col("value")]
          })
        )
        yield* runAndVerifyException(
          input,
          "partition must be a(n) int",
          createKafkaWriter(input, {
            select: [F.lit(topic).as("topic"), F.col("value"), F.col("value").as("partition")]
          })
        )
      })
    )
  )

  it.live("streaming - exception on config serializer", () =>
    live(
      Effect.gen(function* () {
        const input = yield* memoryStream()
        yield* runAndVerifyException(
          input,
          "kafka option 'key.serializer' is not supported",
          createKafkaWriter(input, { extra: { "kafka.key.serializer": "foo" } })
        )
        yield* runAndVerifyException(
          input,
          "kafka option 'value.serializer' is not supported",
          createKafkaWriter(input, { extra: { "kafka.value.serializer": "foo" } })
        )
      })
    )
  )

  it.live("streaming - sink progress is produced", () =>
    live(
      Effect.gen(function* () {
        const input = yield* memoryStream()
        const topic = uniqueTopic("sink-progress")
        yield* promise(() => k.createTopic(topic, 1))
        const writer = yield* createKafkaWriter(input, { topic, outputMode: "update" })
        yield* input.addData(["1", "2", "3"].map((value) => ({ value })))
        yield* writer.processAllAvailable()
        const progress = yield* writer.recentProgress()
        yield* writer.stop()
        expect(progress.some((p) => p.sink.numOutputRows === 3)).toBe(true)
      })
    )
  )
})
