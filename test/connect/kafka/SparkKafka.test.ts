/**
 * Spark reads from and writes to the test Kafka broker (`inject("kafkaBootstrap")`, started by
 * test/kafka/globalSetup.ts) in queries built with tributary on a remote session: the Kafka
 * source and sink options cross Spark Connect as Spark's own (`kafka.bootstrap.servers`,
 * `subscribe`, `startingOffsets`, `topic`), batch and streaming.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { F, type OpenSession, Session, Trigger } from "../../../mod.ts"
import { connect, type TestKafka, uniqueTopic } from "../../connectors/kafka/helpers.ts"
import { remoteAddress } from "../remote.ts"

let kafka: TestKafka
let spark: OpenSession
let dir: string

beforeAll(async () => {
  kafka = await connect()
  spark = await Session.open({ remote: remoteAddress() })
  dir = await mkdtemp(join(tmpdir(), "spark-kafka-"))
})

afterAll(async () => {
  await spark?.close()
  await kafka?.close()
  await rm(dir, { recursive: true, force: true })
})

describe("Kafka on Spark through Spark Connect", () => {
  it("a streaming query reads every record of a topic; another writes a topic; a batch read sees them", async () => {
    const input = uniqueTopic("spark-in")
    const output = uniqueTopic("spark-out")
    await kafka.createTopic(input, 2)
    await kafka.createTopic(output, 1)
    await kafka.send(input, 0, ["a", "b", "c"])
    await kafka.send(input, 1, ["d", "e"])

    const records = spark.readStream
      .format("kafka")
      .option("kafka.bootstrap.servers", kafka.brokers)
      .option("subscribe", input)
      .option("startingOffsets", "earliest")
      .load()

    // Source → memory sink: the records with Spark's Kafka columns.
    const copied = await spark.run(
      Effect.gen(function* () {
        const q = yield* records
          .select(F.col("value").cast("string").as("value"), "partition", "offset")
          .writeStream.format("memory")
          .queryName(`kafka_in_${input.replaceAll("-", "_")}`)
          .trigger(Trigger.AvailableNow())
          .option("checkpointLocation", join(dir, "cp-in"))
          .start()
        yield* q.awaitTermination()
        const progress = yield* q.recentProgress()
        const rows = yield* spark
          .table(`kafka_in_${input.replaceAll("-", "_")}`)
          .orderBy("partition", "offset")
          .collect()
        return { rows, read: progress.reduce((n, p) => n + p.numInputRows, 0) }
      })
    )
    expect(copied.rows).toEqual([
      { value: "a", partition: 0, offset: 0 },
      { value: "b", partition: 0, offset: 1 },
      { value: "c", partition: 0, offset: 2 },
      { value: "d", partition: 1, offset: 0 },
      { value: "e", partition: 1, offset: 1 }
    ])
    expect(copied.read).toBe(5)

    // Source → Kafka sink: Spark's producer writes the upper-cased values.
    await spark.run(
      Effect.gen(function* () {
        const q = yield* records
          .select(F.upper(F.col("value").cast("string")).as("value"))
          .writeStream.format("kafka")
          .option("kafka.bootstrap.servers", kafka.brokers)
          .option("topic", output)
          .trigger(Trigger.AvailableNow())
          .option("checkpointLocation", join(dir, "cp-out"))
          .start()
        yield* q.awaitTermination()
      })
    )
    const written = await kafka.readAll(output)
    expect(written.map((r) => r.value).sort()).toEqual(["A", "B", "C", "D", "E"])

    // A batch read of the output topic on Spark.
    const batch = await spark.run(
      Effect.gen(function* () {
        const df = yield* spark.read
          .format("kafka")
          .option("kafka.bootstrap.servers", kafka.brokers)
          .option("subscribe", output)
          .option("startingOffsets", "earliest")
          .option("endingOffsets", "latest")
          .load()
        return yield* df.select(F.col("value").cast("string").as("value")).orderBy("value").collect()
      })
    )
    expect(batch).toEqual([{ value: "A" }, { value: "B" }, { value: "C" }, { value: "D" }, { value: "E" }])
  })
})
