/**
 * The `kafka` source read continuously (Spark's `KafkaContinuousStream` and
 * `KafkaContinuousPartitionReader`), for `Trigger.Continuous`: one reader per topic partition
 * of the consumer strategy, each fetching the partition's new records as they are written and
 * handing them to its task at once.
 *
 * - Offsets are Spark's `KafkaSourceOffset` JSON (`{"topic":{"0":23}}`, the next offset to read
 *   per partition), merged from the partitions' positions at every epoch.
 * - A new query starts at `startingOffsets` (default `latest`), resolved when the query starts
 *   (Spark's continuous stream keeps no initial-offsets file either).
 * - Each partition has a fetcher fiber that asks the broker for the partition's end offset
 *   every `pollTimeoutMs` while idle (default 100 ms here; Spark's consumer polls for 512 ms),
 *   reads up to 1,024 records at a time and wakes the partition's task; `failOnDataLoss`
 *   applies to records that are gone. A failing fetch fails the task, and so the query.
 * - Partitions the strategy gains while the query runs are not picked up until it restarts
 *   (Spark reconfigures the query; not done here).
 *
 * @since 0.1.0
 */
import { type Cause, Clock, Deferred, Effect, Fiber } from "effect"
import { AnalysisError, type ConnectorError } from "../../core/Errors.ts"
import type { InternalRow } from "../../core/Row.ts"
import {
  type ContinuousPartitionReader,
  type ContinuousSource,
  type Offset,
  type PartitionOffset,
  type SourceContext,
  type SourceFormat
} from "../../core/Streaming.ts"
import { type KafkaReader, makeReader } from "./KafkaClient.ts"
import {
  type KafkaReadOptions,
  kafkaSchema,
  parseStreamOptions,
  strategyString,
  type TopicPartition
} from "./KafkaOptions.ts"
import { KafkaSourceFormat, readRanges, resolveLimit } from "./KafkaSource.ts"
import { decodeKafkaSourceOffset, fromJson, type KafkaSourceOffset, toJson } from "./KafkaSourceOffset.ts"

/** Records a reader fetches at once (Spark's `spark.sql.streaming.continuous.executorQueueSize`). */
const FETCH_MAX = 1024

/** How long an idle reader waits before asking the broker again. */
const DEFAULT_POLL_MS = 100

/** One partition's position: the next offset to read (Spark's `KafkaSourcePartitionOffset`). */
export interface KafkaPartitionOffset {
  readonly key: string
  readonly offset: number
}

/** The topic partition of a `topic-partition` key. */
const keyToTp = (key: string): TopicPartition => {
  const i = key.lastIndexOf("-")
  return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) }
}

/** The offset column of Spark's Kafka row (`key, value, topic, partition, offset, …`). */
const OFFSET_COLUMN = 4

const partitionReader = (
  reader: KafkaReader,
  options: KafkaReadOptions,
  key: string,
  start: number,
  pollMs: number,
  groupId: string
): ContinuousPartitionReader => {
  const tp = keyToTp(key)
  let position = start
  // Fetched but not yet polled. A background fiber fetches (so an epoch marker that wakes the
  // task never interrupts a broker call half way); the task only waits for its signal.
  let buffer: Array<InternalRow> = []
  let fetchedUntil = start
  let fetcher: Fiber.Fiber<void, never> | undefined
  let failure: Cause.Cause<unknown> | undefined
  let arrived = Deferred.makeUnsafe<void>()
  const wake = (): void => {
    const a = arrived
    arrived = Deferred.makeUnsafe<void>()
    Deferred.doneUnsafe(a, Effect.void)
  }
  const fetch = Effect.gen(function* () {
    const latest = (yield* reader.latest([tp])).get(key) ?? fetchedUntil
    if (latest <= fetchedUntil) return false
    const until = Math.min(latest, fetchedUntil + FETCH_MAX)
    const rows = yield* readRanges(reader, [{ tp, from: fetchedUntil, until }], {
      failOnDataLoss: options.failOnDataLoss,
      includeHeaders: options.includeHeaders,
      groupId
    })
    for (const r of rows) buffer.push(r)
    fetchedUntil = until
    return true
  })
  const loop = Effect.gen(function* () {
    for (;;) {
      // Keep at most a few fetches ahead of the task.
      if (buffer.length >= 4 * FETCH_MAX) {
        yield* Effect.sleep(pollMs)
        continue
      }
      if (yield* fetch) wake()
      else yield* Effect.sleep(pollMs)
    }
  }).pipe(
    Effect.catchCause((cause) =>
      Effect.sync(() => {
        failure = cause
        wake()
      })
    )
  )
  return {
    poll: (_now, max) => {
      if (buffer.length === 0) return []
      const out = buffer.length <= max ? buffer : buffer.slice(0, max)
      buffer = buffer.length <= max ? [] : buffer.slice(max)
      position = (out[out.length - 1][OFFSET_COLUMN] as number) + 1
      // Records the broker skipped (transaction markers, compaction) still move the position.
      if (buffer.length === 0) position = Math.max(position, fetchedUntil)
      return out
    },
    offset: (): PartitionOffset => ({ key, offset: position }) satisfies KafkaPartitionOffset,
    awaitData: () =>
      Effect.gen(function* () {
        if (buffer.length > 0) return
        if (failure !== undefined) return yield* Effect.failCause(failure).pipe(Effect.orDie)
        const signal = arrived
        if (fetcher === undefined) fetcher = yield* Effect.forkDetach(loop)
        yield* Deferred.await(signal)
        if (failure !== undefined && buffer.length === 0) return yield* Effect.failCause(failure).pipe(Effect.orDie)
      }),
    close: () => Effect.suspend(() => (fetcher === undefined ? Effect.void : Fiber.interrupt(fetcher)))
  }
}

/**
 * The continuous Kafka source for parsed options.
 *
 * @since 0.1.0
 */
export const makeKafkaContinuousSource = (
  options: KafkaReadOptions,
  reader: KafkaReader,
  pollMs: number,
  groupId: string
): ContinuousSource => ({
  description: `KafkaContinuousStream[${strategyString(options.strategy)}]`,
  schema: kafkaSchema(options.includeHeaders),
  initialOffset: () =>
    Effect.gen(function* () {
      const tps = yield* reader.partitions(options.strategy)
      return toJson(yield* resolveLimit(reader, tps, options.startingOffsets, "start"))
    }),
  createReaders: (start: Offset) =>
    Effect.map(decodeKafkaSourceOffset(start), (json) => {
      const offsets = fromJson(json)
      return [...offsets.keys()]
        .sort()
        .map((key) => partitionReader(reader, options, key, offsets.get(key) ?? 0, pollMs, groupId))
    }),
  mergeOffsets: (partitionOffsets) => {
    const m = new Map<string, number>()
    for (const o of partitionOffsets as ReadonlyArray<KafkaPartitionOffset>) m.set(o.key, o.offset)
    return toJson(m) satisfies KafkaSourceOffset
  },
  decodeOffset: (json) => decodeKafkaSourceOffset(json),
  commit: (end) =>
    options.commitOffsetsToGroup === undefined
      ? Effect.void
      : reader.commitGroup(options.commitOffsetsToGroup, fromJson(end as KafkaSourceOffset)).pipe(Effect.ignore),
  stop: () => reader.close()
})

/**
 * `SourceFormat.continuous` of `kafka`: the micro-batch source's options and messages, plus
 * `pollTimeoutMs` for how often an idle partition asks the broker again.
 *
 * @since 0.1.0
 */
export const createKafkaContinuousSource = (
  ctx: SourceContext
): Effect.Effect<ContinuousSource, AnalysisError | ConnectorError> =>
  Effect.gen(function* () {
    const parsed = parseStreamOptions(ctx.options)
    if (parsed instanceof AnalysisError) return yield* parsed
    const poll = Number(
      Object.entries(ctx.options).find(([k]) => k.toLowerCase() === "polltimeoutms")?.[1] ?? DEFAULT_POLL_MS
    )
    const reader = makeReader({
      bootstrapServers: parsed.bootstrapServers,
      kafkaParams: parsed.kafkaParams,
      clientId: "tributary-kafka-continuous-source",
      readCommitted: parsed.readCommitted,
      retry: { retries: parsed.fetchOffsetNumRetries, intervalMs: parsed.fetchOffsetRetryIntervalMs }
    })
    const now = yield* Clock.currentTimeMillis
    const groupId = `${parsed.groupIdPrefix}-continuous-${now}-executor`
    return makeKafkaContinuousSource(
      parsed,
      reader,
      Number.isFinite(poll) && poll > 0 ? poll : DEFAULT_POLL_MS,
      groupId
    )
  })

/**
 * The `kafka` format with continuous reads: the micro-batch format (`KafkaSource.ts`) plus
 * `continuous`. `registerKafka()` registers it.
 *
 * @since 0.1.0
 */
export const KafkaContinuousSourceFormat: SourceFormat = {
  ...KafkaSourceFormat,
  continuous: createKafkaContinuousSource
}
