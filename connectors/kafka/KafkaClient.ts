/**
 * The Kafka client behind the `kafka` source and batch reader, on kafkajs: partition discovery
 * for a consumer strategy, earliest / latest / by-timestamp offsets, exact offset-range reads,
 * and consumer-group offset commits.
 *
 * Reads are by assignment, never through a consumer group (as Spark's executors read: an
 * offset range of one partition, no group membership, no rebalances). kafkajs exposes no
 * `assign()`, so the reader sends Fetch requests itself on kafkajs's cluster object (the one its
 * consumer uses; kafkajs 2.2.4 is pinned) and filters aborted and control records as Kafka's
 * `read_committed` consumer does.
 *
 * Every broker call runs with retries and exponential backoff (Spark's `fetchOffset.numRetries`
 * and `fetchOffset.retryIntervalMs`); between attempts the connections are dropped and made
 * anew, as Spark's `KafkaOffsetReaderAdmin.resetAdmin` does, so a broker that restarts is found
 * again. When the attempts run out the call fails with a retryable `ConnectorError` (domain
 * `external`) that says the broker could not be reached.
 *
 * @since 0.1.0
 */
import type { Buffer } from "node:buffer"
import { Duration, Effect, Schedule } from "effect"
import { type Admin, Kafka, logLevel } from "kafkajs"
import { ConnectorError } from "../../core/Errors.ts"
import { type ConsumerStrategy, type TopicPartition, tpString } from "./KafkaOptions.ts"

/** A record as kafkajs decodes it. */
export interface RawMessage {
  readonly offset: string
  readonly timestamp: string
  readonly key: Buffer | null
  readonly value: Buffer | null
  readonly headers: Readonly<Record<string, Buffer | ReadonlyArray<Buffer>>>
  readonly isControlRecord?: boolean
  readonly batchContext?: {
    readonly timestampType?: number
    readonly producerId?: string
    readonly inTransaction?: boolean
  }
}

/** One partition of a Fetch response, as kafkajs decodes it. */
interface PartitionData {
  readonly highWatermark: string
  readonly abortedTransactions?: ReadonlyArray<{ readonly producerId: string; readonly firstOffset: string }>
  readonly messages: ReadonlyArray<RawMessage>
}

/** The records of one fetch: all at or after the fetch offset, and the visible ones. */
interface FetchedBatch {
  readonly messagesWithinOffset: ReadonlyArray<RawMessage>
  readonly messages: ReadonlyArray<RawMessage>
  readonly highWatermark: string
}

/** Kafka's abort marker key (a control record of type ABORT). */
const isAbortMarker = (m: RawMessage): boolean =>
  m.key !== null && m.key.length === 4 && m.key[0] === 0 && m.key[1] === 0 && m.key[2] === 0 && m.key[3] === 0

/**
 * The visible records of a fetch (Kafka's `read_committed` consumer): records at or after the
 * fetch offset, without control records and without the records of aborted transactions
 * (from an aborted transaction's first offset to its abort marker, per producer).
 */
const visible = (fetchOffset: number, part: PartitionData): FetchedBatch => {
  const within = part.messages.filter((m) => Number(m.offset) >= fetchOffset)
  const aborted = [...(part.abortedTransactions ?? [])].sort((a, b) => Number(a.firstOffset) - Number(b.firstOffset))
  const active = new Set<string>()
  let next = 0
  const messages: Array<RawMessage> = []
  for (const m of within) {
    const offset = Number(m.offset)
    while (next < aborted.length && offset >= Number(aborted[next].firstOffset)) active.add(aborted[next++].producerId)
    const producerId = m.batchContext?.producerId ?? ""
    if (m.isControlRecord === true) {
      if (isAbortMarker(m)) active.delete(producerId)
      continue
    }
    if (m.batchContext?.inTransaction === true && active.has(producerId)) continue
    messages.push(m)
  }
  return { messagesWithinOffset: within, messages, highWatermark: part.highWatermark }
}

/** The parts of kafkajs's internal `Cluster` and `Broker` the reader uses. */
interface InternalBroker {
  fetch(request: {
    replicaId?: number
    isolationLevel: number
    maxWaitTime: number
    minBytes: number
    maxBytes: number
    topics: ReadonlyArray<{
      topic: string
      partitions: ReadonlyArray<{ partition: number; fetchOffset: string; maxBytes: number }>
    }>
  }): Promise<{
    responses: ReadonlyArray<{ topicName: string; partitions: ReadonlyArray<{ partition: number }> }>
  }>
}

interface InternalCluster {
  connect(): Promise<void>
  disconnect(): Promise<void>
  addMultipleTargetTopics(topics: ReadonlyArray<string>): Promise<void>
  refreshMetadata(): Promise<void>
  findLeaderForPartitions(topic: string, partitions: ReadonlyArray<number>): Record<string, ReadonlyArray<number>>
  findBroker(q: { nodeId: string }): Promise<InternalBroker>
  findGroupCoordinator(q: { groupId: string }): Promise<{
    offsetCommit(request: {
      groupId: string
      groupGenerationId: number
      memberId: string
      topics: ReadonlyArray<{ topic: string; partitions: ReadonlyArray<{ partition: number; offset: string }> }>
    }): Promise<unknown>
  }>
  fetchTopicsOffset(
    topics: ReadonlyArray<{
      topic: string
      partitions: ReadonlyArray<{ partition: number }>
      fromBeginning?: boolean
      fromTimestamp?: number
    }>
  ): Promise<ReadonlyArray<{ topic: string; partitions: ReadonlyArray<{ partition: number; offset: string }> }>>
}

/** Offsets keyed by `topic-partition` text (`tpString`). */
export type OffsetMap = ReadonlyMap<string, number>

/** How a failing call is retried. */
export interface RetryPolicy {
  readonly retries: number
  readonly intervalMs: number
}

/** What the reader needs to know to connect. */
export interface ClientConfig {
  readonly bootstrapServers: ReadonlyArray<string>
  readonly kafkaParams: ReadonlyMap<string, string>
  readonly clientId: string
  readonly readCommitted: boolean
  readonly retry: RetryPolicy
}

/** A read failure that retrying cannot fix (data loss, a bad request). */
export class NonRetryable extends Error {
  readonly error: ConnectorError
  constructor(error: ConnectorError) {
    super(error.message)
    this.error = error
  }
}

const CONNECTOR = "kafka"

/** The longest wait between two attempts. */
const MAX_BACKOFF_MS = 5000

const READ_UNCOMMITTED = 0
const READ_COMMITTED = 1

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** kafkajs settings from the `kafka.*` options it understands (ms values as numbers). */
export const kafkajsConfig = (config: {
  readonly bootstrapServers: ReadonlyArray<string>
  readonly kafkaParams: ReadonlyMap<string, string>
  readonly clientId: string
}) => {
  const num = (k: string): number | undefined => {
    const v = config.kafkaParams.get(k)
    return v === undefined || !/^\d+$/.test(v) ? undefined : Number(v)
  }
  return {
    clientId: config.kafkaParams.get("client.id") ?? config.clientId,
    brokers: [...config.bootstrapServers],
    connectionTimeout: num("socket.connection.setup.timeout.ms") ?? 3000,
    requestTimeout: num("request.timeout.ms") ?? 30000,
    logLevel: logLevel.NOTHING,
    // The retries here are ours (with a reconnect between attempts); kafkajs's own are short.
    retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 1000 }
  }
}

/**
 * Runs `attempt` with `policy`'s retries and exponential backoff, calling `reset` after each
 * failure; `NonRetryable` failures stop at once. The last failure becomes a `ConnectorError`
 * naming `what` and the brokers.
 */
export const withRetries = <A>(
  what: string,
  brokers: ReadonlyArray<string>,
  policy: RetryPolicy,
  attempt: () => Promise<A>,
  reset: () => Promise<void>
): Effect.Effect<A, ConnectorError> => {
  const once = Effect.tryPromise({ try: attempt, catch: (e) => e }).pipe(
    Effect.tapError((e) => (e instanceof NonRetryable ? Effect.void : Effect.promise(() => reset().catch(() => {}))))
  )
  return once.pipe(
    Effect.retry({
      // Exponential from the interval, each wait capped at max(interval, 5 s).
      schedule: Schedule.min([
        Schedule.exponential(Duration.millis(Math.max(1, policy.intervalMs))),
        Schedule.spaced(Duration.millis(Math.max(policy.intervalMs, MAX_BACKOFF_MS)))
      ]),
      times: Math.max(0, policy.retries),
      while: (e) => !(e instanceof NonRetryable)
    }),
    Effect.mapError((e) =>
      e instanceof NonRetryable
        ? e.error
        : new ConnectorError({
            connector: CONNECTOR,
            domain: "external",
            retryable: true,
            message: `Kafka ${what} failed after ${policy.retries + 1} attempts with exponential backoff from ${policy.intervalMs} ms: the broker(s) ${brokers.join(",")} could not be reached or answered with an error (${errorText(e)}). The query can be restarted from its checkpoint once the brokers are back; nothing is lost.`,
            cause: e
          })
    )
  )
}

/** The Kafka calls the source and the batch reader make. */
export interface KafkaReader {
  /** The partitions the strategy reads now, sorted by topic then partition. */
  readonly partitions: (strategy: ConsumerStrategy) => Effect.Effect<ReadonlyArray<TopicPartition>, ConnectorError>
  readonly earliest: (tps: ReadonlyArray<TopicPartition>) => Effect.Effect<OffsetMap, ConnectorError>
  /** The end offsets (the last stable offset under `read_committed`). */
  readonly latest: (tps: ReadonlyArray<TopicPartition>) => Effect.Effect<OffsetMap, ConnectorError>
  /** The first offset with a timestamp ≥ the partition's timestamp, or -1 where there is none. */
  readonly byTimestamp: (
    timestamps: ReadonlyArray<readonly [TopicPartition, number]>
  ) => Effect.Effect<OffsetMap, ConnectorError>
  /**
   * The visible records of `tp` in `[from, until)`, in offset order. `onMissing(from, to)` is
   * called for offsets that are gone (deleted or aged out); it throws `NonRetryable` to fail.
   */
  readonly read: (
    tp: TopicPartition,
    from: number,
    until: number,
    onMissing: (from: number, to: number) => void
  ) => Effect.Effect<ReadonlyArray<RawMessage>, ConnectorError>
  /** Sets `group`'s committed offsets (for lag tools); the group must have no active members. */
  readonly commitGroup: (group: string, offsets: OffsetMap) => Effect.Effect<void, ConnectorError>
  readonly close: () => Effect.Effect<void>
}

interface Connection {
  readonly kafka: Kafka
  readonly admin: Admin
  readonly cluster: InternalCluster
}

/** Finds kafkajs's private cluster factory on a `Kafka` instance (see the module doc). */
const createCluster = (kafka: Kafka, readCommitted: boolean): InternalCluster => {
  const symbol = Object.getOwnPropertySymbols(kafka).find((s) => s.description === "private:Kafka:createCluster")
  if (symbol === undefined) throw new Error("kafkajs internals changed: no createCluster (kafkajs 2.2.4 is required)")
  const factory = (kafka as unknown as Record<symbol, (o: unknown) => InternalCluster>)[symbol]
  return factory({
    metadataMaxAge: 30_000,
    allowAutoTopicCreation: false,
    isolationLevel: readCommitted ? READ_COMMITTED : READ_UNCOMMITTED
  })
}

/** Splits `topic-partition` keys back (the partition is after the last dash). */
export const parseTpKey = (key: string): TopicPartition => {
  const i = key.lastIndexOf("-")
  return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) }
}

const byTopic = (tps: ReadonlyArray<TopicPartition>): Map<string, Array<number>> => {
  const m = new Map<string, Array<number>>()
  for (const tp of tps) {
    const ps = m.get(tp.topic)
    if (ps === undefined) m.set(tp.topic, [tp.partition])
    else ps.push(tp.partition)
  }
  return m
}

/**
 * Refreshes the cluster's metadata when it does not know a leader of some partition yet: a
 * partition added to a topic after the metadata was loaded (Spark's consumer sees it at its
 * next metadata refresh; KafkaSourceSuiteBase's "Add partitions" steps read it in the next batch).
 */
const ensurePartitionsKnown = async (c: Connection, groups: ReadonlyMap<string, ReadonlyArray<number>>) => {
  for (const [topic, ps] of groups) {
    const leaders = c.cluster.findLeaderForPartitions(topic, ps)
    let known = 0
    for (const node of Object.keys(leaders)) known += leaders[node].length
    if (known < ps.length) {
      await c.cluster.refreshMetadata()
      return
    }
  }
}

/** kafkajs's error for a topic or partition the broker does not host (deleted, or being deleted). */
const isUnknownTopic = (e: unknown): boolean => {
  const x = e as { type?: string; name?: string; message?: string } | null
  return (
    x?.type === "UNKNOWN_TOPIC_OR_PARTITION" ||
    (typeof x?.message === "string" && x.message.includes("does not host this topic-partition"))
  )
}

/** Drops a topic from kafkajs's metadata targets (its private `targetTopics` set). */
const forgetTopic = (c: Connection, topic: string): void => {
  const targets = (c.cluster as unknown as { targetTopics?: Set<string> }).targetTopics
  if (targets instanceof Set) targets.delete(topic)
}

/** Max bytes of one fetch per partition. */
const FETCH_MAX_BYTES = 8 * 1024 * 1024

/**
 * Makes a reader. Connections are opened on first use and again after a failure.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { makeReader } from "./KafkaClient.ts"
 * const program = Effect.gen(function* () {
 *   const reader = makeReader({ bootstrapServers: ["localhost:9092"], kafkaParams: new Map(),
 *     clientId: "tributary", readCommitted: false, retry: { retries: 3, intervalMs: 1000 } })
 *   const tps = yield* reader.partitions({ _tag: "Subscribe", topics: ["events"] })
 *   const latest = yield* reader.latest(tps) // Map { "events-0" => 42 }
 *   yield* reader.close()
 * })
 * ```
 * @since 0.1.0
 */
export const makeReader = (config: ClientConfig): KafkaReader => {
  let conn: Connection | undefined
  const brokers = config.bootstrapServers

  const connect = async (): Promise<Connection> => {
    if (conn !== undefined) return conn
    const kafka = new Kafka(kafkajsConfig(config))
    const admin = kafka.admin({ retry: { retries: 1, initialRetryTime: 100 } })
    const cluster = createCluster(kafka, config.readCommitted)
    try {
      await admin.connect()
      await cluster.connect()
    } catch (e) {
      await admin.disconnect().catch(() => {})
      await cluster.disconnect().catch(() => {})
      throw e
    }
    conn = { kafka, admin, cluster }
    return conn
  }

  const reset = async (): Promise<void> => {
    const c = conn
    conn = undefined
    if (c !== undefined) {
      await c.admin.disconnect().catch(() => {})
      await c.cluster.disconnect().catch(() => {})
    }
  }

  const run = <A>(what: string, f: (c: Connection) => Promise<A>): Effect.Effect<A, ConnectorError> =>
    withRetries(what, brokers, config.retry, async () => f(await connect()), reset)

  const listOffsets = async (
    c: Connection,
    tps: ReadonlyArray<TopicPartition>,
    spec: { fromBeginning?: boolean; timestamps?: ReadonlyMap<string, number> }
  ): Promise<Map<string, number>> => {
    const out = new Map<string, number>()
    if (tps.length === 0) return out
    const groups = byTopic(tps)
    if (spec.timestamps === undefined) {
      const request = (entries: ReadonlyArray<readonly [string, ReadonlyArray<number>]>) =>
        c.cluster.fetchTopicsOffset(
          entries.map(([topic, ps]) => ({
            topic,
            partitions: ps.map((partition) => ({ partition })),
            fromBeginning: spec.fromBeginning === true
          }))
        )
      const collect = (res: Awaited<ReturnType<typeof request>>) => {
        for (const t of res)
          for (const p of t.partitions) out.set(tpString({ topic: t.topic, partition: p.partition }), Number(p.offset))
      }
      try {
        // Refreshes the metadata only when a topic is new to this cluster object.
        await c.cluster.addMultipleTargetTopics([...groups.keys()])
        await ensurePartitionsKnown(c, groups)
        collect(await request([...groups]))
      } catch (e) {
        if (!isUnknownTopic(e)) throw e
        // A topic deleted since partition discovery (Spark's admin reader lists only existing
        // topics): its partitions get no offset, which the source reports as deleted partitions
        // (data loss, failing or skipped by `failOnDataLoss`) — Spark's "subscribing topic by
        // pattern with topic deletions". The deleted topic leaves the cluster's metadata
        // targets, or every later metadata refresh would fail on it.
        for (const topic of groups.keys()) forgetTopic(c, topic)
        for (const entry of groups) {
          try {
            await c.cluster.addMultipleTargetTopics([entry[0]])
            await ensurePartitionsKnown(c, new Map([entry]))
            collect(await request([entry]))
          } catch (e2) {
            if (!isUnknownTopic(e2)) throw e2
            forgetTopic(c, entry[0])
          }
        }
      }
      return out
    }
    await c.cluster.addMultipleTargetTopics([...groups.keys()])
    await ensurePartitionsKnown(c, groups)
    // One request per distinct timestamp: kafkajs asks one timestamp per topic.
    for (const tp of tps) {
      // A timestamp beyond 2^53 (Spark's tests use Long.MaxValue) is not exact as a JavaScript
      // number and kafkajs would send it mangled; no record has a timestamp that far, so the
      // largest exact integer finds the same nothing (Spark: "No offset matched").
      const ts = Math.min(spec.timestamps.get(tpString(tp)) as number, Number.MAX_SAFE_INTEGER)
      const res = await c.cluster.fetchTopicsOffset([
        { topic: tp.topic, partitions: [{ partition: tp.partition }], fromTimestamp: ts }
      ])
      for (const t of res)
        for (const p of t.partitions) out.set(tpString({ topic: t.topic, partition: p.partition }), Number(p.offset))
    }
    return out
  }

  const fetchOnce = async (c: Connection, tp: TopicPartition, offset: number): Promise<FetchedBatch> => {
    await ensurePartitionsKnown(c, new Map([[tp.topic, [tp.partition]]]))
    const leaders = c.cluster.findLeaderForPartitions(tp.topic, [tp.partition])
    const nodeId = Object.keys(leaders)[0]
    if (nodeId === undefined) throw new Error(`no leader for ${tpString(tp)}`)
    const broker = await c.cluster.findBroker({ nodeId })
    const res = await broker.fetch({
      replicaId: -1,
      isolationLevel: config.readCommitted ? READ_COMMITTED : READ_UNCOMMITTED,
      maxWaitTime: 500,
      minBytes: 1,
      maxBytes: FETCH_MAX_BYTES,
      topics: [
        {
          topic: tp.topic,
          partitions: [{ partition: tp.partition, fetchOffset: String(offset), maxBytes: FETCH_MAX_BYTES }]
        }
      ]
    })
    const part = res.responses[0]?.partitions[0]
    if (part === undefined) throw new Error(`empty fetch response for ${tpString(tp)}`)
    return visible(offset, part as unknown as PartitionData)
  }

  return {
    partitions: (strategy) =>
      run("partition discovery", async (c) => {
        let tps: Array<TopicPartition>
        switch (strategy._tag) {
          case "Assign":
            tps = [...strategy.partitions]
            break
          case "Subscribe":
          case "SubscribePattern": {
            let topics: ReadonlyArray<string>
            if (strategy._tag === "Subscribe") {
              const existing = new Set(await c.admin.listTopics())
              topics = strategy.topics.filter((t) => existing.has(t))
            } else {
              const re = new RegExp(strategy.pattern)
              // Java's `Pattern.matcher(topic).matches()`: the whole name must match.
              topics = (await c.admin.listTopics()).filter((t) => {
                const m = re.exec(t)
                return m !== null && m.index === 0 && m[0].length === t.length
              })
            }
            tps = []
            if (topics.length > 0) {
              const meta = await c.admin.fetchTopicMetadata({ topics: [...topics] })
              for (const t of meta.topics)
                for (const p of t.partitions) tps.push({ topic: t.name, partition: p.partitionId })
            }
            break
          }
        }
        return tps.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition))
      }),
    earliest: (tps) => run("earliest offsets", (c) => listOffsets(c, tps, { fromBeginning: true })),
    latest: (tps) => run("latest offsets", (c) => listOffsets(c, tps, { fromBeginning: false })),
    byTimestamp: (timestamps) =>
      run("offsets by timestamp", (c) =>
        listOffsets(
          c,
          timestamps.map(([tp]) => tp),
          { timestamps: new Map(timestamps.map(([tp, ts]) => [tpString(tp), ts])) }
        )
      ),
    read: (tp, from, until, onMissing) =>
      run(`read of ${tpString(tp)} [${from}, ${until})`, async (c) => {
        const out: Array<RawMessage> = []
        if (from >= until) return out
        await c.cluster.addMultipleTargetTopics([tp.topic])
        let next = from
        while (next < until) {
          let batch: FetchedBatch
          try {
            batch = await fetchOnce(c, tp, next)
          } catch (e) {
            if ((e as { name?: string }).name !== "KafkaJSOffsetOutOfRange") throw e
            // Spark's `KafkaDataConsumer.get`: the offset is gone; report it (failOnDataLoss
            // throws) and go on from the earliest offset still there.
            const earliest = (await listOffsets(c, [tp], { fromBeginning: true })).get(tpString(tp)) ?? until
            const resume = Math.min(Math.max(earliest, next), until)
            if (earliest <= next) {
              // Out of range above the end: the partition was truncated or recreated.
              onMissing(next, until)
              break
            }
            onMissing(next, resume)
            next = resume
            continue
          }
          const within = batch.messagesWithinOffset
          if (within.length === 0) {
            // Nothing at `next`: below the high watermark that is transient (an open
            // transaction under read_committed; retried), at or above it the data went away.
            const hw = Number(batch.highWatermark)
            if (hw <= next) {
              onMissing(next, until)
              break
            }
            throw new Error(`no records returned at offset ${next} of ${tpString(tp)} (high watermark ${hw})`)
          }
          const first = Number(within[0].offset)
          if (first > next) {
            // Records in [next, first) are gone (compaction or retention between polls).
            const earliest = (await listOffsets(c, [tp], { fromBeginning: true })).get(tpString(tp)) ?? first
            if (earliest > next) onMissing(next, Math.min(first, until))
          }
          for (const m of batch.messages) {
            const o = Number(m.offset)
            if (o >= until) break
            out.push(m)
          }
          next = Number(within[within.length - 1].offset) + 1
        }
        return out
      }),
    commitGroup: (group, offsets) =>
      run(`offset commit of group ${group}`, async (c) => {
        const perTopic = new Map<string, Array<{ partition: number; offset: string }>>()
        for (const [key, offset] of offsets) {
          const tp = parseTpKey(key)
          const list = perTopic.get(tp.topic) ?? []
          list.push({ partition: tp.partition, offset: String(offset) })
          perTopic.set(tp.topic, list)
        }
        // A standalone commit (generation -1, no member id), as Kafka's `commitSync` of a
        // consumer with assigned partitions: no group join, so it takes one round trip.
        const coordinator = await c.cluster.findGroupCoordinator({ groupId: group })
        await coordinator.offsetCommit({
          groupId: group,
          groupGenerationId: -1,
          memberId: "",
          topics: [...perTopic].map(([topic, partitions]) => ({ topic, partitions }))
        })
      }),
    close: () => Effect.promise(() => reset())
  }
}
