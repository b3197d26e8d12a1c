/**
 * The `kinesis` streaming source: reads the shards of one or more Kinesis streams by sequence
 * number, one micro-batch per range, with spark-sql-kinesis' row schema.
 *
 * - Offsets are per shard (`KinesisSourceOffset.ts`): the last sequence number read, logged by
 *   the engine before each batch, so a restart replays a logged batch exactly (the records after
 *   the start position up to and including the end's sequence number) and the next batch starts
 *   after it: with an idempotent sink (the file sink), every record is written exactly once.
 * - Kinesis cannot say how far a shard reaches without reading it, so `latestOffset` reads the
 *   new records (at most `kinesis.executor.maxFetchRecordsPerShard` per shard, in GetRecords
 *   calls of `maxRecordsPerFetch`) and keeps them for `getBatch`; a replay after a restart reads
 *   them again.
 * - Resharding: the shards are listed again every `shardFetchInterval`. A shard that appears
 *   (a child of a split or a merge) starts at `TRIM_HORIZON`, and is read only once each of its
 *   parents the offset holds is at `SHARD_END` in the batch's start, so a parent's records all
 *   come in earlier batches than its children's and every key keeps its order.
 * - The initial offset (`initialPosition`; `latest` is the time the query first starts, as
 *   spark-sql-kinesis resolves it) is written to the source's metadata folder the first time, so
 *   a query restarted before its first batch starts where it first meant to.
 * - `Trigger.AvailableNow` reads the records that arrived (by Kinesis' arrival time) before the
 *   query started, in as many batches as the limits and the shards' lineage need.
 * - A shard in the offset that is no longer listed before its end was read (it aged out of the
 *   stream's retention) fails the query when `failOnDataLoss` is true (the default), and is
 *   dropped otherwise.
 *
 * @since 0.1.0
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Clock, Effect } from "effect"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import type { InternalRow } from "../../core/Row.ts"
import type { MicroBatchSource, Offset, ReadLimit, SourceFormat } from "../../core/Streaming.ts"
import {
  type IteratorStart,
  type KinesisApi,
  type KinesisRecord,
  makeKinesisApi,
  type ShardDescription
} from "./KinesisClient.ts"
import { type KinesisReadOptions, kinesisSchema, parseKinesisOptions, userSchemaRefused } from "./KinesisOptions.ts"
import {
  afterSequenceNumber,
  atTimestamp,
  decodeKinesisSourceOffset,
  fromJson,
  type KinesisSourceOffset,
  parseShardKey,
  type ShardPosition,
  samePosition,
  shardEnd,
  shardKey,
  toJson,
  trimHorizon
} from "./KinesisSourceOffset.ts"

const CONNECTOR = "kinesis"

/**
 * GetRecords answers with no records a read of new data tolerates before it takes the shard as
 * caught up although Kinesis says it is behind (Kinesis can answer empty pages over gaps).
 */
const MAX_EMPTY_PAGES = 5

/** The same for a replay, which knows the records are there. */
const MAX_EMPTY_PAGES_REPLAY = 1000

const dataLoss = (message: string): ConnectorError =>
  new ConnectorError({
    connector: CONNECTOR,
    domain: "external",
    retryable: false,
    message: `${message} Some data may have been lost because it is not available in Kinesis any more (the stream's retention period passed, or the stream was deleted). If you don't want your streaming query to fail on such cases, set the source option failOnDataLoss to false.`
  })

/** GetShardIterator's start for a position that is not `SHARD_END`. */
const iteratorStart = (p: ShardPosition): IteratorStart => {
  switch (p.iteratorType) {
    case "TRIM_HORIZON":
      return { type: "TRIM_HORIZON" }
    case "AT_TIMESTAMP":
      return { type: "AT_TIMESTAMP", timestampMs: Number(p.iteratorPosition) }
    case "AFTER_SEQUENCE_NUMBER":
      return { type: "AFTER_SEQUENCE_NUMBER", sequenceNumber: p.iteratorPosition }
    case "SHARD_END":
      throw new Error("a shard at SHARD_END has nothing to read")
  }
}

/** What one read of a shard got: its records in order and the position after them. */
interface ShardRead {
  readonly records: ReadonlyArray<KinesisRecord>
  readonly end: ShardPosition
}

/**
 * Reads the new records of a shard after `from`, at most `max`, stopping when the shard is
 * caught up (an empty page with nothing behind) or closed and read to its end (`SHARD_END`).
 */
export const readNew = (
  api: KinesisApi,
  stream: string,
  shardId: string,
  from: ShardPosition,
  max: number,
  perFetch: number,
  /** `Trigger.AvailableNow`: records that arrived after this time (ms) are left for later. */
  cutoffMs: number = Number.POSITIVE_INFINITY
): Effect.Effect<ShardRead, ConnectorError> =>
  Effect.gen(function* () {
    const first = yield* api.shardIterator(stream, shardId, iteratorStart(from))
    if (first === undefined) return { records: [], end: from }
    let iterator = first
    const records: Array<KinesisRecord> = []
    let empty = 0
    while (records.length < max) {
      const page = yield* api.getRecords(iterator, Math.min(perFetch, max - records.length))
      const kept = page.records.findIndex((r) => r.approximateArrivalTimestamp > cutoffMs)
      for (const r of kept < 0 ? page.records : page.records.slice(0, kept)) records.push(r)
      if (kept >= 0) break
      if (page.nextIterator === undefined) return { records, end: shardEnd }
      iterator = page.nextIterator
      if (page.records.length === 0 && (page.millisBehindLatest === 0 || ++empty >= MAX_EMPTY_PAGES)) break
    }
    const last = records.at(-1)
    return { records, end: last === undefined ? from : afterSequenceNumber(last.sequenceNumber) }
  })

/**
 * Reads a logged range of a shard again: the records after `from` up to and including the
 * sequence number of `end` (`AFTER_SEQUENCE_NUMBER`), or to the shard's end (`SHARD_END`).
 */
export const readRange = (
  api: KinesisApi,
  stream: string,
  shardId: string,
  from: ShardPosition,
  end: ShardPosition,
  perFetch: number,
  failOnDataLoss: boolean
): Effect.Effect<ReadonlyArray<KinesisRecord>, ConnectorError> =>
  Effect.gen(function* () {
    if (end.iteratorType !== "AFTER_SEQUENCE_NUMBER" && end.iteratorType !== "SHARD_END") return []
    const until = end.iteratorType === "AFTER_SEQUENCE_NUMBER" ? BigInt(end.iteratorPosition) : undefined
    const first = yield* api.shardIterator(stream, shardId, iteratorStart(from))
    let iterator = first ?? ""
    const records: Array<KinesisRecord> = []
    let empty = 0
    while (first !== undefined) {
      const page = yield* api.getRecords(iterator, perFetch)
      for (const r of page.records) {
        // Sequence numbers grow within a shard; the ones past the logged end belong to later batches.
        if (until !== undefined && BigInt(r.sequenceNumber) > until) return records
        records.push(r)
        if (until !== undefined && BigInt(r.sequenceNumber) === until) return records
      }
      if (page.nextIterator === undefined) {
        if (until === undefined) return records
        break
      }
      iterator = page.nextIterator
      if (page.records.length === 0 && ++empty >= MAX_EMPTY_PAGES_REPLAY) break
      if (page.records.length > 0) empty = 0
    }
    const message = `Cannot read the records of ${stream}/${shardId} from ${from.iteratorType} ${from.iteratorPosition} up to sequence number ${end.iteratorPosition} again.`
    if (failOnDataLoss) return yield* dataLoss(message)
    return records
  })

/** A record as a row of the source's schema. */
const toRow = (stream: string, r: KinesisRecord): InternalRow => [
  r.data,
  stream,
  r.partitionKey,
  r.sequenceNumber,
  r.approximateArrivalTimestamp
]

const INITIAL_OFFSETS_FILE = "initialOffsets.json"

/** The initial offset, written once to the source's metadata folder (as the Kafka source does). */
const initialOffsetsStore = (metadataPath: string) => ({
  read: (): Effect.Effect<KinesisSourceOffset | undefined, ConnectorError> =>
    Effect.tryPromise({
      try: () => readFile(join(metadataPath, INITIAL_OFFSETS_FILE), "utf8"),
      catch: (e) => e
    }).pipe(
      Effect.flatMap((text) =>
        Effect.flatMap(
          Effect.try({ try: () => JSON.parse(text) as unknown, catch: (e) => e }),
          decodeKinesisSourceOffset
        )
      ),
      Effect.catch((e) =>
        (e as { code?: string }).code === "ENOENT"
          ? Effect.succeed(undefined)
          : Effect.fail(
              e instanceof ConnectorError
                ? e
                : new ConnectorError({
                    connector: CONNECTOR,
                    domain: "external",
                    retryable: false,
                    message: `Cannot read the Kinesis source's initial offsets at ${join(metadataPath, INITIAL_OFFSETS_FILE)}`,
                    cause: e
                  })
            )
      )
    ),
  write: (offset: KinesisSourceOffset): Effect.Effect<void, ConnectorError> =>
    Effect.tryPromise({
      try: async () => {
        await mkdir(metadataPath, { recursive: true })
        const tmp = join(metadataPath, `.${INITIAL_OFFSETS_FILE}.${crypto.randomUUID()}.tmp`)
        await writeFile(tmp, JSON.stringify(offset))
        await rename(tmp, join(metadataPath, INITIAL_OFFSETS_FILE))
      },
      catch: (e) =>
        new ConnectorError({
          connector: CONNECTOR,
          domain: "external",
          retryable: true,
          message: `Cannot write the Kinesis source's initial offsets to ${metadataPath}`,
          cause: e
        })
    })
})

/** The most rows a read limit allows in one batch. */
const maxRowsOf = (limit: ReadLimit): number => {
  switch (limit._tag) {
    case "MaxRows":
      return limit.maxRows
    case "Composite":
      return Math.min(...limit.limits.map(maxRowsOf))
    default:
      return Number.POSITIVE_INFINITY
  }
}

/**
 * Builds the micro-batch source for parsed options on a Kinesis client.
 *
 * @since 0.1.0
 */
export const makeKinesisSource = (
  options: KinesisReadOptions,
  metadataPath: string,
  api: KinesisApi
): MicroBatchSource => {
  const store = initialOffsetsStore(metadataPath)
  let listing: { at: number; shards: ReadonlyMap<string, ShardDescription> } | undefined
  /** What the last `latestOffset` read, by shard key, for the `getBatch` that follows it. */
  let prefetched = new Map<string, { readonly start: ShardPosition; readonly read: ShardRead }>()
  /** `Trigger.AvailableNow`: the time the query started; later records are not read. */
  let availableNowCutoffMs = Number.POSITIVE_INFINITY

  /** Every shard of every stream by shard key, listed again after `shardFetchInterval`. */
  const shards = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    if (listing !== undefined && now - listing.at < options.shardFetchIntervalMs) return listing.shards
    const all = new Map<string, ShardDescription>()
    for (const stream of options.streamNames) {
      for (const s of yield* api.listShards(stream)) all.set(shardKey(stream, s.shardId), s)
    }
    listing = { at: now, shards: all }
    return all
  })

  const asPositions = (o: Offset): Map<string, ShardPosition> => fromJson(o as KinesisSourceOffset)

  return {
    description: `KinesisSource[${options.streamNames.join(",")}]`,
    schema: kinesisSchema,
    initialOffset: () =>
      Effect.gen(function* () {
        const stored = yield* store.read()
        if (stored !== undefined) return stored
        const all = yield* shards
        const now = yield* Clock.currentTimeMillis
        const positions = new Map<string, ShardPosition>()
        for (const [key, s] of all) {
          const p = options.initialPosition
          positions.set(
            key,
            p._tag === "TrimHorizon"
              ? trimHorizon
              : p._tag === "AtTimestamp"
                ? atTimestamp(p.timestampMs)
                : // `latest`: the open shards from now on; closed ones hold nothing newer.
                  s.closed
                  ? shardEnd
                  : atTimestamp(now)
          )
        }
        const json = toJson(positions)
        yield* store.write(json)
        return json
      }),
    defaultReadLimit: () => ({ _tag: "AllAvailable" }),
    latestOffset: (start, limit) =>
      Effect.gen(function* () {
        const from = asPositions(start)
        const all = yield* shards
        const positions = new Map(from)
        for (const key of all.keys()) if (!positions.has(key)) positions.set(key, trimHorizon)
        for (const [key, p] of from) {
          if (all.has(key)) continue
          if (p.iteratorType !== "SHARD_END" && options.failOnDataLoss) {
            return yield* dataLoss(
              `Shard ${key} at ${p.iteratorType} ${p.iteratorPosition} is no longer in the stream.`
            )
          }
          positions.delete(key)
        }
        const reads = new Map<string, { readonly start: ShardPosition; readonly read: ShardRead }>()
        let budget = maxRowsOf(limit)
        for (const key of [...positions.keys()].sort()) {
          if (budget <= 0) break
          const p = positions.get(key) as ShardPosition
          if (p.iteratorType === "SHARD_END") continue
          const { stream, shardId } = parseShardKey(key)
          const parents = all.get(key)?.parents ?? []
          // A child waits until every parent the offset holds was read to its end in an earlier batch.
          const blocked = parents.some((parent) => {
            const pk = shardKey(stream, parent)
            return positions.has(pk) && from.get(pk)?.iteratorType !== "SHARD_END"
          })
          if (blocked) continue
          const read = yield* readNew(
            api,
            stream,
            shardId,
            p,
            Math.min(options.maxFetchRecordsPerShard, budget),
            options.maxRecordsPerFetch,
            availableNowCutoffMs
          )
          budget -= read.records.length
          positions.set(key, read.end)
          if (read.records.length > 0) reads.set(key, { start: p, read })
        }
        prefetched = reads
        return toJson(positions)
      }),
    getBatch: (start, end) =>
      Effect.gen(function* () {
        const from = asPositions(start)
        const rows: Array<InternalRow> = []
        for (const [key, e] of [...asPositions(end)].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
          const s = from.get(key) ?? trimHorizon
          if (samePosition(s, e) || s.iteratorType === "SHARD_END") continue
          const { stream, shardId } = parseShardKey(key)
          const cached = prefetched.get(key)
          const records =
            cached !== undefined && samePosition(cached.start, s) && samePosition(cached.read.end, e)
              ? cached.read.records
              : yield* readRange(api, stream, shardId, s, e, options.maxRecordsPerFetch, options.failOnDataLoss)
          for (const r of records) rows.push(toRow(stream, r))
        }
        return rows
      }),
    commit: () =>
      Effect.sync(() => {
        prefetched = new Map()
      }),
    decodeOffset: (json) => decodeKinesisSourceOffset(json),
    // Spark's `SupportsTriggerAvailableNow`: what is there now is what arrived before the query
    // started. Batches keep their limits and follow the shards' children (parents first) until
    // no shard has a record that arrived by then.
    prepareForTriggerAvailableNow: () =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        availableNowCutoffMs = now
      }),
    stop: () => api.close()
  }
}

/**
 * The `kinesis` source format: `spark.readStream.format("kinesis")` with `streamName` and the
 * region or endpoint of the stream.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { F, Session } from "tributary-streaming"
 * const program = Effect.gen(function* () {
 *   const spark = yield* Session
 *   const events = spark.readStream.format("kinesis")
 *     .option("streamName", "events")
 *     .option("region", "us-east-1")
 *     .option("initialPosition", "trim_horizon")
 *     .load()
 *     .select(F.col("data").cast("string").as("data"), "partitionKey", "sequenceNumber")
 *   const query = yield* events.writeStream.format("console").start()
 *   yield* query.awaitTermination()
 * })
 * ```
 * @since 0.1.0
 */
export const KinesisSourceFormat: SourceFormat = {
  name: "kinesis",
  schema: (userSchema, options) => {
    if (userSchema !== undefined) return userSchemaRefused()
    const parsed = parseKinesisOptions(options)
    return parsed instanceof AnalysisError ? parsed : kinesisSchema
  },
  create: (ctx) =>
    Effect.gen(function* () {
      const parsed = parseKinesisOptions(ctx.options)
      if (parsed instanceof AnalysisError) return yield* parsed
      const api = makeKinesisApi(parsed)
      return makeKinesisSource(parsed, ctx.metadataPath, api)
    })
}
