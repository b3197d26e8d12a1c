/**
 * Helpers of the Kafka tests: the broker the global setup started (`inject("kafkaBootstrap")`),
 * unique topics, a plain kafkajs producer and a `read_committed` reader of a whole topic.
 */
import { randomUUID } from "node:crypto"
import { type Admin, Kafka, logLevel, type Message, Partitioners, type Producer } from "kafkajs"
import { inject } from "vitest"

/** The broker address; fails loudly when the global setup started none. */
export const bootstrap = (): string => {
  const b = inject("kafkaBootstrap")
  if (b === undefined || b === "") {
    throw new Error(
      "No Kafka broker: test/kafka/globalSetup.ts starts one for runs that include a Kafka test (scripts/kafka.sh start)."
    )
  }
  return b
}

export const kafkaFor = (brokers: string): Kafka =>
  new Kafka({
    clientId: "tributary-test",
    brokers: [brokers],
    logLevel: logLevel.NOTHING,
    retry: { retries: 8, initialRetryTime: 100 }
  })

/** A topic name nobody else uses. */
export const uniqueTopic = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`

export interface TestKafka {
  readonly brokers: string
  readonly admin: Admin
  readonly producer: Producer
  readonly createTopic: (topic: string, partitions?: number) => Promise<void>
  /** Sends to one partition; values as strings. */
  readonly send: (topic: string, partition: number, values: ReadonlyArray<string | Message>) => Promise<void>
  /** Every visible record of the topic, read_committed, as `partition:value` strings in offset order. */
  readonly readAll: (
    topic: string,
    readCommitted?: boolean
  ) => Promise<
    ReadonlyArray<{
      partition: number
      offset: number
      key: string | null
      value: string | null
      headers: Record<string, string>
    }>
  >
  /** Deletes the records of a partition below `offset` (Kafka's DeleteRecords). */
  readonly deleteRecords: (topic: string, partition: number, offset: number) => Promise<void>
  readonly close: () => Promise<void>
}

export const connect = async (brokers: string = bootstrap()): Promise<TestKafka> => {
  const kafka = kafkaFor(brokers)
  const admin = kafka.admin()
  await admin.connect()
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
  await producer.connect()
  return {
    brokers,
    admin,
    producer,
    createTopic: async (topic, partitions = 1) => {
      await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: false })
      // kafkajs's own wait gives up early on a loaded machine: wait for the leaders here.
      const deadline = Date.now() + 30_000
      for (;;) {
        const ready = await admin
          .fetchTopicMetadata({ topics: [topic] })
          .then(
            (m) => m.topics[0]?.partitions.length === partitions && m.topics[0].partitions.every((p) => p.leader >= 0)
          )
          .catch(() => false)
        if (ready) return
        if (Date.now() > deadline) throw new Error(`topic ${topic} has no leaders after 30 s`)
        await new Promise((r) => setTimeout(r, 100))
      }
    },
    send: async (topic, partition, values) => {
      await producer.send({
        topic,
        acks: -1,
        messages: values.map((v) => (typeof v === "string" ? { value: v, partition } : { partition, ...v }))
      })
    },
    readAll: async (topic, readCommitted = true) => {
      const offsets = await admin.fetchTopicOffsets(topic)
      const want = new Map(offsets.map((o) => [o.partition, Number(o.high)]))
      const out: Array<{
        partition: number
        offset: number
        key: string | null
        value: string | null
        headers: Record<string, string>
      }> = []
      if ([...want.values()].every((h) => h === 0)) return out
      const consumer = kafka.consumer({ groupId: `reader-${randomUUID()}`, readUncommitted: !readCommitted })
      await consumer.connect()
      await consumer.subscribe({ topic, fromBeginning: true })
      const seen = new Map<number, number>()
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`reading ${topic} timed out; got ${out.length} records`)),
          20_000
        )
        const done = () => [...want].every(([p, h]) => h === 0 || (seen.get(p) ?? -1) >= h - 1)
        consumer
          .run({
            eachBatch: async ({ batch }) => {
              for (const m of batch.messages) {
                const headers: Record<string, string> = {}
                for (const [k, v] of Object.entries(m.headers ?? {})) headers[k] = String(v)
                out.push({
                  partition: batch.partition,
                  offset: Number(m.offset),
                  key: m.key === null ? null : m.key.toString(),
                  value: m.value === null ? null : m.value.toString(),
                  headers
                })
              }
              // Markers and aborted records are not delivered: the batch's last offset counts.
              seen.set(batch.partition, Math.max(seen.get(batch.partition) ?? -1, Number(batch.lastOffset())))
              if (done()) {
                clearTimeout(timer)
                resolve()
              }
            }
          })
          .catch(reject)
      })
      await consumer.disconnect()
      return out.sort((a, b) => a.partition - b.partition || a.offset - b.offset)
    },
    deleteRecords: async (topic, partition, offset) => {
      // kafkajs finds the partition leader only for topics its metadata already has.
      await admin.fetchTopicOffsets(topic)
      await admin.deleteTopicRecords({ topic, partitions: [{ partition, offset: String(offset) }] })
    },
    close: async () => {
      await producer.disconnect()
      await admin.disconnect()
    }
  }
}
