/**
 * The offset of the `kinesis` source: for every stream and every shard, where the next read
 * starts, in the `iteratorType` / `iteratorPosition` terms of spark-sql-kinesis' `ShardInfo`:
 *
 * ```json
 * {"events":{"shardId-000000000000":{"iteratorType":"AFTER_SEQUENCE_NUMBER","iteratorPosition":"4968..."},
 *            "shardId-000000000001":{"iteratorType":"SHARD_END","iteratorPosition":""},
 *            "shardId-000000000002":{"iteratorType":"TRIM_HORIZON","iteratorPosition":""}}}
 * ```
 *
 * - `TRIM_HORIZON`: nothing read yet; the shard is read from its oldest record.
 * - `AT_TIMESTAMP` (`iteratorPosition`: milliseconds since the epoch): nothing read yet; the shard
 *   is read from its first record that arrived at or after that time. `initialPosition` `latest`
 *   is logged this way, with the time the query first started (as spark-sql-kinesis does), so a
 *   replayed first batch reads the same records.
 * - `AFTER_SEQUENCE_NUMBER` (`iteratorPosition`: a sequence number): every record up to and
 *   including that one has been read.
 * - `SHARD_END`: the shard is closed (split or merged) and every record of it has been read; its
 *   children are read from then on.
 *
 * Streams and shards are sorted, so the same positions always serialize to the same text.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import { ConnectorError } from "../../core/Errors.ts"

/**
 * The kinds of position in a logged offset.
 *
 * @since 0.1.0
 */
export type IteratorType = "TRIM_HORIZON" | "AT_TIMESTAMP" | "AFTER_SEQUENCE_NUMBER" | "SHARD_END"

/**
 * Where the next read of one shard starts.
 *
 * @since 0.1.0
 */
export interface ShardPosition {
  readonly iteratorType: IteratorType
  /** The sequence number (`AFTER_SEQUENCE_NUMBER`), the time in ms (`AT_TIMESTAMP`), else `""`. */
  readonly iteratorPosition: string
}

/**
 * The logged offset: stream name, then shard id, then position.
 *
 * @since 0.1.0
 */
export type KinesisSourceOffset = Readonly<Record<string, Readonly<Record<string, ShardPosition>>>>

const ShardPositionSchema = Schema.Union([
  Schema.Struct({
    iteratorType: Schema.Literals(["TRIM_HORIZON", "SHARD_END"]),
    iteratorPosition: Schema.Literal("")
  }),
  Schema.Struct({
    iteratorType: Schema.Literals(["AT_TIMESTAMP", "AFTER_SEQUENCE_NUMBER"]),
    iteratorPosition: Schema.String.check(Schema.isPattern(/^\d+$/))
  })
])

/**
 * The schema of a logged offset.
 *
 * @since 0.1.0
 */
export const KinesisSourceOffsetSchema = Schema.Record(Schema.String, Schema.Record(Schema.String, ShardPositionSchema))

/** The position constructors. */
export const trimHorizon: ShardPosition = { iteratorType: "TRIM_HORIZON", iteratorPosition: "" }
export const shardEnd: ShardPosition = { iteratorType: "SHARD_END", iteratorPosition: "" }
export const atTimestamp = (ms: number): ShardPosition => ({
  iteratorType: "AT_TIMESTAMP",
  iteratorPosition: String(ms)
})
export const afterSequenceNumber = (sequenceNumber: string): ShardPosition => ({
  iteratorType: "AFTER_SEQUENCE_NUMBER",
  iteratorPosition: sequenceNumber
})

/** `stream/shardId`, the key of a shard across streams. */
export const shardKey = (stream: string, shardId: string): string => `${stream}/${shardId}`

/** Splits a `shardKey` (stream names cannot hold `/`). */
export const parseShardKey = (key: string): { readonly stream: string; readonly shardId: string } => {
  const i = key.indexOf("/")
  return { stream: key.slice(0, i), shardId: key.slice(i + 1) }
}

/**
 * Positions by `shardKey` to the logged JSON form (streams and shards sorted).
 *
 * @example
 * ```ts
 * import { toJson, trimHorizon, shardEnd } from "./KinesisSourceOffset.ts"
 * JSON.stringify(toJson(new Map([["s/shardId-1", trimHorizon], ["s/shardId-0", shardEnd]])))
 * // {"s":{"shardId-0":{"iteratorType":"SHARD_END","iteratorPosition":""},"shardId-1":{"iteratorType":"TRIM_HORIZON","iteratorPosition":""}}}
 * ```
 * @since 0.1.0
 */
export const toJson = (positions: ReadonlyMap<string, ShardPosition>): KinesisSourceOffset => {
  const out: Record<string, Record<string, ShardPosition>> = {}
  for (const key of [...positions.keys()].sort()) {
    const { stream, shardId } = parseShardKey(key)
    const p = positions.get(key) as ShardPosition
    const shards = out[stream] ?? {}
    shards[shardId] = { iteratorType: p.iteratorType, iteratorPosition: p.iteratorPosition }
    out[stream] = shards
  }
  return out
}

/** The logged JSON form back to positions by `shardKey`. */
export const fromJson = (json: KinesisSourceOffset): Map<string, ShardPosition> => {
  const m = new Map<string, ShardPosition>()
  for (const [stream, shards] of Object.entries(json)) {
    for (const [shardId, p] of Object.entries(shards)) m.set(shardKey(stream, shardId), p)
  }
  return m
}

/** Two positions are the same. */
export const samePosition = (a: ShardPosition | undefined, b: ShardPosition | undefined): boolean =>
  a !== undefined && b !== undefined && a.iteratorType === b.iteratorType && a.iteratorPosition === b.iteratorPosition

/**
 * Checks an offset read back from the offset log (`MicroBatchSource.decodeOffset`).
 *
 * @since 0.1.0
 */
export const decodeKinesisSourceOffset = (json: unknown): Effect.Effect<KinesisSourceOffset, ConnectorError> =>
  Schema.decodeUnknownEffect(KinesisSourceOffsetSchema)(json).pipe(
    Effect.mapError(
      (e) =>
        new ConnectorError({
          connector: "kinesis",
          domain: "external",
          retryable: false,
          message: `Invalid Kinesis source offset ${JSON.stringify(json)} in the offset log: expected e.g. {"stream":{"shardId-000000000000":{"iteratorType":"AFTER_SEQUENCE_NUMBER","iteratorPosition":"49590..."}}} (${e.message})`,
          cause: e
        })
    )
  )
