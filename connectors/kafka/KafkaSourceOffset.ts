/**
 * Spark's `KafkaSourceOffset`: the next offset to read of every topic partition, serialized as
 * `{"topic":{"0":23,"1":42}}` (topics sorted, partitions in numeric order), which is what the
 * offset log holds for a Kafka source. The same data always serializes to the same text, so
 * the engine can compare offsets by JSON.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import { ConnectorError } from "../../core/Errors.ts"
import { parseTpKey, type OffsetMap } from "./KafkaClient.ts"
import { tpString } from "./KafkaOptions.ts"

/** The offset as JSON: topic, then partition number as text, then the next offset. */
export type KafkaSourceOffset = Readonly<Record<string, Readonly<Record<string, number>>>>

/**
 * The schema of a logged offset: an object of objects of non-negative integers.
 *
 * @since 0.1.0
 */
export const KafkaSourceOffsetSchema = Schema.Record(
  Schema.String,
  Schema.Record(Schema.String, Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0)))
)

/**
 * Offsets by `topic-partition` to the logged JSON form (topics sorted; JavaScript orders the
 * integer partition keys numerically).
 *
 * @example
 * ```ts
 * import { toJson } from "./KafkaSourceOffset.ts"
 * JSON.stringify(toJson(new Map([["b-0", 3], ["a-1", 7], ["a-0", 5]])))
 * // {"a":{"0":5,"1":7},"b":{"0":3}}
 * ```
 * @since 0.1.0
 */
export const toJson = (offsets: OffsetMap): KafkaSourceOffset => {
  const byTopic = new Map<string, Array<[number, number]>>()
  for (const [key, offset] of offsets) {
    const tp = parseTpKey(key)
    const list = byTopic.get(tp.topic) ?? []
    list.push([tp.partition, offset])
    byTopic.set(tp.topic, list)
  }
  const out: Record<string, Record<string, number>> = {}
  for (const topic of [...byTopic.keys()].sort()) {
    const parts: Record<string, number> = {}
    for (const [p, o] of (byTopic.get(topic) ?? []).sort((a, b) => a[0] - b[0])) parts[String(p)] = o
    out[topic] = parts
  }
  return out
}

/** The logged JSON form back to offsets by `topic-partition`. */
export const fromJson = (json: KafkaSourceOffset): Map<string, number> => {
  const m = new Map<string, number>()
  for (const [topic, parts] of Object.entries(json)) {
    for (const [p, o] of Object.entries(parts)) m.set(tpString({ topic, partition: Number(p) }), o)
  }
  return m
}

/**
 * Checks an offset read back from the offset log (`MicroBatchSource.decodeOffset`).
 *
 * @since 0.1.0
 */
export const decodeKafkaSourceOffset = (json: unknown): Effect.Effect<KafkaSourceOffset, ConnectorError> =>
  Schema.decodeUnknownEffect(KafkaSourceOffsetSchema)(json).pipe(
    Effect.mapError(
      (e) =>
        new ConnectorError({
          connector: "kafka",
          domain: "external",
          retryable: false,
          message: `Invalid Kafka source offset ${JSON.stringify(json)} in the offset log: expected e.g. {"topicA":{"0":23,"1":-1}} (${e.message})`,
          cause: e
        })
    )
  )

/**
 * Spark's `ComparableOffset.CompareResult` of two Kafka offsets.
 *
 * @since 0.1.0
 */
export type CompareResult = "EQUAL" | "LESS" | "GREATER" | "UNDETERMINED" | "NOT_COMPARABLE"

const isKafkaSourceOffset = (o: unknown): o is KafkaSourceOffset =>
  o !== null &&
  typeof o === "object" &&
  !Array.isArray(o) &&
  Object.values(o).every(
    (parts) =>
      parts !== null &&
      typeof parts === "object" &&
      !Array.isArray(parts) &&
      Object.values(parts).every((x) => typeof x === "number")
  )

/**
 * Spark's `KafkaSourceOffset.compareTo`: compares only the topic partitions both offsets have;
 * `EQUAL` when they all match, `LESS` / `GREATER` when some differ all the same way,
 * `UNDETERMINED` when some are less and others greater, and `NOT_COMPARABLE` against an offset
 * that is not a Kafka offset (e.g. a `LongOffset`).
 *
 * @example
 * ```ts
 * import { compareOffsets } from "./KafkaSourceOffset.ts"
 * compareOffsets({ t: { "0": 1, "1": 2 } }, { t: { "0": 2, "1": 2 } }) // "LESS"
 * compareOffsets({ t: { "0": 2 } }, { t: { "0": 1 } }) // "GREATER"
 * compareOffsets({ t: { "0": 1 } }, 1) // "NOT_COMPARABLE"
 * ```
 * @since 0.1.0
 */
export const compareOffsets = (self: unknown, that: unknown): CompareResult => {
  if (!isKafkaSourceOffset(self) || !isKafkaSourceOffset(that)) return "NOT_COMPARABLE"
  const mine = fromJson(self)
  const theirs = fromJson(that)
  let less = false
  let greater = false
  for (const [tp, offset] of mine) {
    const other = theirs.get(tp)
    if (other === undefined) continue
    if (offset < other) less = true
    else if (offset > other) greater = true
  }
  return less && greater ? "UNDETERMINED" : less ? "LESS" : greater ? "GREATER" : "EQUAL"
}
