/**
 * `npm run bench:kafka`: the Kafka connector against a real broker, which the bench starts with
 * `scripts/kafka.sh start bench-<pid>` (or uses `TRIBUTARY_KAFKA_BOOTSTRAP=host:port`).
 *
 * Workload 1 — source throughput: N records (100-byte values, 4 partitions) already in a topic,
 * read to the end by (a) a tributary query, `readStream.format("kafka")` with
 * `startingOffsets=earliest` and `Trigger.AvailableNow` into the `noop` sink, and (b) a plain
 * kafkajs consumer (its own group, `fromBeginning`, `eachBatch` counting) on the same broker.
 * Records per second, best of `BENCH_RUNS` (default 3) alternating runs after a warm-up of each,
 * each from connect to the last record (for tributary: session, query start, checkpoint, batch).
 *
 * Workload 2 — end-to-end latency: a producer sends `BENCH_KAFKA_RATE` records per second
 * (default 500) for `BENCH_KAFKA_SECONDS` (default 10), each carrying its send time; a tributary
 * query copies them (`kafka` source → `kafka` sink, default trigger) to another topic, where a
 * kafkajs consumer notes the arrival time. Latency percentiles, for the plain sink and for the
 * transactional one (`kafka.transactional.exactlyOnce`, read with `read_committed`).
 */
import { execFile } from "node:child_process"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { Kafka, logLevel, Partitioners } from "kafkajs"
import { F, Session } from "../mod.ts"
import { Trigger } from "../core/Trigger.ts"

const N = Number(process.env.BENCH_KAFKA_RECORDS ?? 200_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const RATE = Number(process.env.BENCH_KAFKA_RATE ?? 500)
const SECONDS = Number(process.env.BENCH_KAFKA_SECONDS ?? 10)
const PARTITIONS = 4

const SCRIPT = resolve(dirname(fileURLToPath(import.meta.url)), "../scripts/kafka.sh")
const kafkaSh = (...args: ReadonlyArray<string>): Promise<string> =>
  new Promise((ok, fail) =>
    execFile("bash", [SCRIPT, ...args], (e, stdout, stderr) =>
      e !== null ? fail(new Error(`kafka.sh ${args.join(" ")}: ${stderr}`)) : ok(stdout.trim().split("\n").pop() ?? "")
    )
  )

const given = process.env.TRIBUTARY_KAFKA_BOOTSTRAP
const brokerName = `bench-${process.pid}`
const brokers = given !== undefined && given !== "" ? given : await kafkaSh("start", brokerName)
const kafka = new Kafka({ clientId: "bench", brokers: [brokers], logLevel: logLevel.NOTHING })
const admin = kafka.admin()
await admin.connect()

const createTopic = async (topic: string, partitions: number) => {
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: false })
  for (;;) {
    const m = await admin.fetchTopicMetadata({ topics: [topic] }).catch(() => undefined)
    if (
      m !== undefined &&
      m.topics[0]?.partitions.length === partitions &&
      m.topics[0].partitions.every((p) => p.leader >= 0)
    )
      return
    await new Promise((r) => setTimeout(r, 100))
  }
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US")

// ---- workload 1: source throughput ---------------------------------------------------------

const topic = `bench-in-${process.pid}`
await createTopic(topic, PARTITIONS)
{
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
  await producer.connect()
  const value = "x".repeat(100)
  const started = performance.now()
  for (let i = 0; i < N; i += 5000) {
    const messages = []
    for (let j = i; j < Math.min(N, i + 5000); j++) messages.push({ value, partition: j % PARTITIONS })
    await producer.send({ topic, acks: 1, messages })
  }
  await producer.disconnect()
  console.log(`produced ${fmt(N)} records to ${topic} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
}

const tributaryRead = async (): Promise<number> => {
  const checkpoint = await mkdtemp(join(tmpdir(), "bench-kafka-"))
  const started = performance.now()
  let rows = 0
  await Effect.runPromise(
    Effect.gen(function* () {
      const spark = yield* Session
      const query = yield* spark.readStream
        .format("kafka")
        .option("kafka.bootstrap.servers", brokers)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", checkpoint)
        .trigger(Trigger.AvailableNow())
        .start()
      yield* query.awaitTermination()
      for (const p of yield* query.recentProgress()) rows += p.numInputRows
    }).pipe(Effect.provide(Session.layer()))
  )
  const ms = performance.now() - started
  await rm(checkpoint, { recursive: true, force: true })
  if (rows !== N) throw new Error(`tributary read ${rows} rows, expected ${N}`)
  return ms
}

const kafkajsRead = async (): Promise<number> => {
  const started = performance.now()
  const consumer = kafka.consumer({ groupId: `bench-${Math.random()}`, maxBytes: 64 * 1024 * 1024 })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  let count = 0
  await new Promise<void>((done) => {
    void consumer.run({
      eachBatchAutoResolve: true,
      eachBatch: async ({ batch }) => {
        count += batch.messages.length
        if (count >= N) done()
      }
    })
  })
  const ms = performance.now() - started
  await consumer.disconnect()
  return ms
}

// Runs alternate (tributary, kafkajs, tributary, …) after one warm-up of each, so that neither
// side gets the JIT-compiled kafkajs decoder or a quieter moment of the machine for itself.
await tributaryRead()
await kafkajsRead()
let tMs = Number.POSITIVE_INFINITY
let kMs = Number.POSITIVE_INFINITY
for (let i = 0; i < RUNS; i++) {
  tMs = Math.min(tMs, await tributaryRead())
  kMs = Math.min(kMs, await kafkajsRead())
}
console.log(`\nWorkload 1 — source throughput, ${fmt(N)} records, best of ${RUNS} after a warm-up`)
console.log(
  `  tributary kafka source (AvailableNow → noop): ${fmt((N / tMs) * 1000)} records/s (${(tMs / 1000).toFixed(2)} s)`
)
console.log(
  `  plain kafkajs consumer (eachBatch count):      ${fmt((N / kMs) * 1000)} records/s (${(kMs / 1000).toFixed(2)} s)`
)
console.log(`  ratio tributary / kafkajs: ${(kMs / tMs).toFixed(2)}`)

// ---- workload 2: end-to-end latency -----------------------------------------------------------

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]

const latency = async (transactional: boolean) => {
  const inTopic = `bench-lat-in-${transactional ? "tx" : "plain"}-${process.pid}`
  const outTopic = `bench-lat-out-${transactional ? "tx" : "plain"}-${process.pid}`
  await createTopic(inTopic, 1)
  await createTopic(outTopic, 1)
  const total = RATE * SECONDS
  const latencies: Array<number> = []
  const consumer = kafka.consumer({
    groupId: `bench-lat-${Math.random()}`,
    readUncommitted: false,
    maxWaitTimeInMs: 100
  })
  await consumer.connect()
  await consumer.subscribe({ topic: outTopic, fromBeginning: true })
  let resolveAll = () => {}
  const all = new Promise<void>((r) => {
    resolveAll = r
  })
  void consumer.run({
    eachBatch: async ({ batch }) => {
      const now = Date.now()
      for (const m of batch.messages) latencies.push(now - Number(m.value?.toString()))
      if (latencies.length >= total) resolveAll()
    }
  })
  const checkpoint = await mkdtemp(join(tmpdir(), "bench-kafka-lat-"))
  await Effect.runPromise(
    Effect.gen(function* () {
      const spark = yield* Session
      let writer = spark.readStream
        .format("kafka")
        .option("kafka.bootstrap.servers", brokers)
        .option("subscribe", inTopic)
        .option("startingOffsets", "earliest")
        .load()
        .select(F.col("value"))
        .writeStream.format("kafka")
        .option("kafka.bootstrap.servers", brokers)
        .option("topic", outTopic)
        .option("checkpointLocation", checkpoint)
      if (transactional) writer = writer.option("kafka.transactional.exactlyOnce", "true")
      const query = yield* writer.start()
      // A fixed rate: every 10 ms, the records due by now, each stamped with its send time.
      const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
      yield* Effect.promise(() => producer.connect())
      const started = Date.now()
      let sent = 0
      while (sent < total) {
        const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * RATE))
        if (due > sent) {
          const now = String(Date.now())
          const messages = Array.from({ length: due - sent }, () => ({ value: now }))
          yield* Effect.promise(() => producer.send({ topic: inTopic, acks: 1, messages }))
          sent = due
        }
        yield* Effect.sleep("10 millis")
      }
      yield* Effect.promise(() => producer.disconnect())
      yield* Effect.promise(() => Promise.race([all, new Promise((r) => setTimeout(r, 30_000))]))
      yield* query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )
  await consumer.disconnect()
  await rm(checkpoint, { recursive: true, force: true })
  const sorted = [...latencies].sort((a, b) => a - b)
  const label = transactional ? "transactional sink (read_committed)" : "plain sink"
  console.log(
    `  ${label}: ${fmt(sorted.length)}/${fmt(total)} records, p50 ${percentile(sorted, 50)} ms, p95 ${percentile(sorted, 95)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted[sorted.length - 1]} ms`
  )
}

console.log(
  `\nWorkload 2 — end-to-end latency, produce → kafka source → kafka sink → consumer, ${RATE} records/s for ${SECONDS} s`
)
await latency(false)
await latency(true)

await admin.disconnect()
if (given === undefined || given === "") await kafkaSh("stop", brokerName)
process.exit(0)
