/**
 * The `kafka` sink (Spark's `KafkaSink` / `KafkaWriter`): writes each row as a Kafka record from
 * its `value` column (string or binary, required), `key` (string or binary, optional), `topic`
 * (a column, or the `topic` option, which wins), `partition` (int, optional), `headers`
 * (`array<struct<key: string, value: binary>>`, optional) and `timestamp` (optional). A missing
 * or mistyped column fails `start()` with Spark's message.
 *
 * Delivery, as in Spark, is at least once by default: a batch id already written by this run
 * is skipped, but a batch replayed after a restart is written again.
 *
 * **Exactly once** (beyond Spark) with `kafka.transactional.exactlyOnce=true`:
 * - The sink has one transactional id per query, `kafka.transactional.id` or
 *   `tributary-<queryId>` (the query id is kept in the checkpoint, so a restart has the same
 *   id). The query writes from one process, so one id per query is enough; Kafka fences any
 *   older producer with the same id when the restarted one registers, and aborts the
 *   transaction it left open.
 * - Each batch is one transaction holding the batch's records and one marker record in the
 *   marker topic (`kafka.transactional.markerTopic`, default `__tributary_sink_commits`, one
 *   partition, compacted) keyed by the transactional id with the batch id as value. The marker
 *   commits or aborts with the records.
 * - When the sink starts it reads the last committed marker of its id (`read_committed`): a
 *   batch id at or below it was committed by an earlier run (which died after the Kafka commit
 *   but before the checkpoint's commit log), so the replay is skipped. Anything else was
 *   aborted (by the fencing) and is written again. The same check runs before a batch is
 *   retried after a commit whose answer was lost (it may have committed). Readers using
 *   `isolation.level = read_committed` thus see every batch exactly once.
 *
 * A broker that goes away: the batch is retried with exponential backoff (`kafka.retries`,
 * default 5; `kafka.retry.backoff.ms`, default 500), reconnecting between attempts (in
 * transactional mode each attempt aborts and starts a new transaction), then the query fails
 * with a retryable `ConnectorError` saying the brokers could not be reached.
 *
 * @since 0.1.0
 */
import { Buffer } from "node:buffer"
import { Effect } from "effect"
import { type Admin, Kafka, type Message, Partitioners, type Producer, type TopicMessages } from "kafkajs"
import * as T from "../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import type { InternalRow } from "../../core/Row.ts"
import type { Sink, SinkBatch, SinkFormat } from "../../core/Streaming.ts"
import { kafkajsConfig, makeReader, NonRetryable, withRetries } from "./KafkaClient.ts"
import { HeadersType, type KafkaWriteOptions, parseWriteOptions } from "./KafkaOptions.ts"

const CONNECTOR = "kafka"

/** The default marker topic of the transactional sink. */
export const DEFAULT_MARKER_TOPIC = "__tributary_sink_commits"

/** Spark's `_LEGACY_ERROR_TEMP_3080` around a `KafkaWriter.validateQuery` message. */
const writerError = (message: string): AnalysisError =>
  new AnalysisError({ reason: "InvalidArgument", errorClass: "_LEGACY_ERROR_TEMP_3080", message })

/** Where each Kafka field comes from in the rows. */
interface Projection {
  readonly topic: number | string
  readonly key: number | undefined
  readonly value: number
  readonly headers: number | undefined
  readonly partition: number | undefined
  readonly timestamp: number | undefined
}

/**
 * Spark's `KafkaWriter.validateQuery` on a schema: the column positions, or Spark's error
 * (`Required attribute 'value' not found`, `key attribute unsupported type int. key must be a(n)
 * string or binary`, `topic option required when no 'topic' attribute is present. …`).
 *
 * @example
 * ```ts
 * import * as T from "../../core/DataType.ts"
 * import { projectionFor } from "./KafkaSink.ts"
 * projectionFor(T.struct([T.field("key", T.StringType)]), "out")
 * // AnalysisError: Required attribute 'value' not found
 * ```
 * @since 0.1.0
 */
export const projectionFor = (schema: T.StructType, topic: string | undefined): Projection | AnalysisError => {
  const find = (name: string) => schema.fields.findIndex((f) => f.name === name)
  const check = (name: string, desired: ReadonlyArray<T.DataType>, dflt: () => number | AnalysisError | undefined) => {
    const i = find(name)
    if (i < 0) return dflt()
    const t = schema.fields[i].dataType
    if (!desired.some((d) => T.sameType(d, t))) {
      return writerError(
        `${name} attribute unsupported type ${T.simpleString(t)}. ${name} must be a(n) ${desired.map(T.simpleString).join(" or ")}`
      )
    }
    return i
  }
  let topicPos: number | string
  if (topic !== undefined) topicPos = topic
  else {
    const t = check("topic", [T.StringType], () =>
      writerError(
        "topic option required when no 'topic' attribute is present. Use the topic option for setting a topic."
      )
    )
    if (t instanceof AnalysisError) return t
    topicPos = t as number
  }
  const key = check("key", [T.StringType, T.BinaryType], () => undefined)
  if (key instanceof AnalysisError) return key
  const value = check("value", [T.StringType, T.BinaryType], () => writerError("Required attribute 'value' not found"))
  if (value instanceof AnalysisError) return value
  const headers = check("headers", [HeadersType], () => undefined)
  if (headers instanceof AnalysisError) return headers
  const partition = check("partition", [T.IntegerType], () => undefined)
  if (partition instanceof AnalysisError) return partition
  const timestamp = check("timestamp", [T.DoubleType, T.TimestampType], () => undefined)
  if (timestamp instanceof AnalysisError) return timestamp
  return { topic: topicPos, key, value: value as number, headers, partition, timestamp }
}

const bytes = (v: unknown): Buffer | string | null => {
  if (v === null || v === undefined) return null
  if (typeof v === "string") return v
  const u = v as Uint8Array
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength)
}

/** The rows of a batch as kafkajs messages grouped by topic. */
export const toTopicMessages = (
  rows: ReadonlyArray<InternalRow>,
  p: Projection,
  timestampIsDouble: boolean
): Array<TopicMessages> | ConnectorError => {
  const byTopic = new Map<string, Array<Message>>()
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]
    const topic = typeof p.topic === "string" ? p.topic : (row[p.topic] as string | null)
    if (topic === null || topic === undefined) {
      return new ConnectorError({
        connector: CONNECTOR,
        domain: "user",
        retryable: false,
        message:
          "[KAFKA_NULL_TOPIC_IN_DATA] The Kafka message data sent to the producer contains a null topic. Use the `topic` option for setting a default topic."
      })
    }
    const m: { -readonly [K in keyof Message]: Message[K] } = {
      key: p.key === undefined ? null : bytes(row[p.key]),
      value: bytes(row[p.value])
    }
    if (p.partition !== undefined && row[p.partition] !== null) m.partition = row[p.partition] as number
    if (p.timestamp !== undefined && row[p.timestamp] !== null) {
      // Spark writes a double column as seconds (cast to timestamp); timestamps are ms here.
      const t = row[p.timestamp] as number
      m.timestamp = String(Math.trunc(timestampIsDouble ? t * 1000 : t))
    }
    if (p.headers !== undefined && row[p.headers] !== null) {
      const hs: Record<string, Buffer | Array<Buffer>> = {}
      for (const h of row[p.headers] as ReadonlyArray<InternalRow>) {
        const k = h[0] as string
        const v = h[1] === null ? Buffer.alloc(0) : (bytes(h[1]) as Buffer)
        const prev = hs[k]
        hs[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v]
      }
      m.headers = hs
    }
    const list = byTopic.get(topic)
    if (list === undefined) byTopic.set(topic, [m])
    else list.push(m)
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }))
}

const retryPolicy = (o: KafkaWriteOptions) => {
  const retries = o.kafkaParams.get("retries")
  const backoff = o.kafkaParams.get("retry.backoff.ms")
  return {
    retries: retries !== undefined && /^\d+$/.test(retries) ? Math.min(Number(retries), 30) : 5,
    intervalMs: backoff !== undefined && /^\d+$/.test(backoff) ? Number(backoff) : 500
  }
}

/** Reads the last batch id the transactional id committed, from the marker topic. */
const lastCommittedBatch = (
  o: KafkaWriteOptions,
  markerTopic: string,
  transactionalId: string
): Effect.Effect<number, ConnectorError> => {
  const reader = makeReader({
    bootstrapServers: o.bootstrapServers,
    kafkaParams: o.kafkaParams,
    clientId: "tributary-kafka-sink-markers",
    readCommitted: true,
    retry: retryPolicy(o)
  })
  const tp = { topic: markerTopic, partition: 0 }
  return Effect.gen(function* () {
    const earliest = (yield* reader.earliest([tp])).get(`${markerTopic}-0`) ?? 0
    const latest = (yield* reader.latest([tp])).get(`${markerTopic}-0`) ?? 0
    const records = yield* reader.read(tp, earliest, latest, () => {})
    let last = -1
    for (const r of records) {
      if (r.key !== null && r.key.toString("utf8") === transactionalId && r.value !== null) {
        const parsed = JSON.parse(r.value.toString("utf8")) as { batchId?: unknown }
        if (typeof parsed.batchId === "number") last = parsed.batchId
      }
    }
    return last
  }).pipe(Effect.ensuring(reader.close()))
}

const ensureMarkerTopic = (admin: Admin, topic: string): Promise<void> =>
  admin
    .createTopics({
      topics: [
        {
          topic,
          numPartitions: 1,
          configEntries: [{ name: "cleanup.policy", value: "compact" }]
        }
      ],
      waitForLeaders: true
    })
    .then(() => undefined)

const fenced = (e: unknown): boolean => {
  const t = (e as { type?: string; name?: string }).type
  return t === "INVALID_PRODUCER_EPOCH" || t === "PRODUCER_FENCED" || t === "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
}

const makeSink = (o: KafkaWriteOptions, projection: Projection, schema: T.StructType, queryId: string) =>
  Effect.gen(function* () {
    const policy = retryPolicy(o)
    const transactionalId = o.transactionalIdPrefix ?? `tributary-${queryId}`
    const markerTopic = o.kafkaParams.get("transactional.markertopic") ?? DEFAULT_MARKER_TOPIC
    const timestampIsDouble =
      projection.timestamp !== undefined && schema.fields[projection.timestamp].dataType._tag === "double"
    const kafka = new Kafka(kafkajsConfig({ ...o, clientId: "tributary-kafka-sink" }))
    let producer: Producer | undefined
    // Spark's `KafkaSink.latestBatchId`: replays within this run are skipped.
    let latestBatchId = -1

    const connect = async (): Promise<Producer> => {
      if (producer !== undefined) return producer
      const p = o.exactlyOnce
        ? kafka.producer({
            transactionalId,
            idempotent: true,
            maxInFlightRequests: 1,
            createPartitioner: Partitioners.DefaultPartitioner,
            retry: { retries: 2, initialRetryTime: 100 }
          })
        : kafka.producer({
            createPartitioner: Partitioners.DefaultPartitioner,
            retry: { retries: 2, initialRetryTime: 100 }
          })
      try {
        // For a transactional id this fences older producers and aborts their open transaction.
        await p.connect()
      } catch (e) {
        await p.disconnect().catch(() => {})
        throw e
      }
      producer = p
      return p
    }
    const reset = async () => {
      const p = producer
      producer = undefined
      if (p !== undefined) await p.disconnect().catch(() => {})
    }

    if (o.exactlyOnce) {
      const admin = kafka.admin()
      yield* withRetries(
        "marker topic setup",
        o.bootstrapServers,
        policy,
        async () => {
          await admin.connect()
          try {
            const topics = await admin.listTopics()
            if (!topics.includes(markerTopic)) await ensureMarkerTopic(admin, markerTopic)
          } finally {
            await admin.disconnect()
          }
        },
        async () => {}
      )
      yield* withRetries("transactional producer start", o.bootstrapServers, policy, () => connect(), reset)
      latestBatchId = yield* lastCommittedBatch(o, markerTopic, transactionalId)
    }

    // Set when a commit failed on our side: Kafka may have committed it all the same (the answer
    // was lost), so the next attempt asks the marker topic before writing again.
    let commitUncertain = false

    const writeOnce = async (batch: SinkBatch, messages: Array<TopicMessages>): Promise<void> => {
      const p = await connect()
      if (!o.exactlyOnce) {
        if (messages.length > 0) await p.sendBatch({ topicMessages: messages, acks: -1 })
        return
      }
      if (commitUncertain) {
        // `connect` registered the transactional id again, which completes the previous
        // transaction first, so the marker topic now says whether it committed.
        const last = await Effect.runPromise(lastCommittedBatch(o, markerTopic, transactionalId))
        commitUncertain = false
        if (last >= batch.batchId) return
      }
      const tx = await p.transaction()
      let committing = false
      try {
        await tx.sendBatch({
          topicMessages: [
            ...messages,
            {
              topic: markerTopic,
              messages: [
                {
                  key: transactionalId,
                  value: JSON.stringify({ batchId: batch.batchId, queryId }),
                  partition: 0
                }
              ]
            }
          ],
          acks: -1
        })
        committing = true
        await tx.commit()
      } catch (e) {
        if (committing) commitUncertain = true
        else await tx.abort().catch(() => {})
        if (fenced(e)) {
          throw new NonRetryable(
            new ConnectorError({
              connector: CONNECTOR,
              domain: "user",
              retryable: false,
              message: `The Kafka sink's transactional id ${transactionalId} was fenced: another run of this query (or another query with the same kafka.transactional.id) took it over.`,
              cause: e
            })
          )
        }
        throw e
      }
    }

    const sink: Sink = {
      description: o.exactlyOnce ? `KafkaSink[transactional ${transactionalId}]` : "KafkaSink",
      addBatch: (batch) =>
        Effect.suspend(() => {
          if (batch.batchId <= latestBatchId) return Effect.void
          const messages = toTopicMessages(batch.rows, projection, timestampIsDouble)
          if (messages instanceof ConnectorError) return Effect.fail(messages)
          return withRetries(
            `write of batch ${batch.batchId}`,
            o.bootstrapServers,
            policy,
            () => writeOnce(batch, messages),
            reset
          ).pipe(
            Effect.tap(() =>
              Effect.sync(() => {
                latestBatchId = batch.batchId
              })
            )
          )
        }),
      stop: () => Effect.promise(() => reset())
    }
    return sink
  })

/**
 * The `kafka` sink format: `writeStream.format("kafka")` with `kafka.bootstrap.servers`, and
 * `topic` unless the rows have a `topic` column. Append, update and complete modes are
 * accepted, as Spark's (each batch's rows are written).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { F, Session } from "tributary-streaming"
 * const program = Effect.gen(function* () {
 *   const spark = yield* Session
 *   const query = yield* spark.readStream.format("rate").load()
 *     .select(F.col("value").cast("string").as("value"))
 *     .writeStream.format("kafka")
 *     .option("kafka.bootstrap.servers", "localhost:9092")
 *     .option("topic", "numbers")
 *     .option("kafka.transactional.exactlyOnce", "true")
 *     .option("checkpointLocation", "/tmp/chk")
 *     .start()
 *   yield* query.awaitTermination()
 * })
 * ```
 * @since 0.1.0
 */
export const KafkaSinkFormat: SinkFormat = {
  name: "kafka",
  supportedOutputModes: ["append", "update", "complete"],
  // A DataSource V2 sink in Spark: `partitionBy` is passed through as given.
  batchIdAware: false,
  create: (ctx) =>
    Effect.gen(function* () {
      const parsed = parseWriteOptions(ctx.options)
      if (parsed instanceof AnalysisError) return yield* parsed
      const projection = projectionFor(ctx.schema, parsed.topic)
      if (projection instanceof AnalysisError) return yield* projection
      return yield* makeSink(parsed, projection, ctx.schema, ctx.queryId)
    })
}
