/**
 * Spark's `KafkaUtils.createDirectStream`: a direct stream over the registered `kafka` source
 * (`StreamingContext.directStream("kafka", options)`; `dstream/` does not import the
 * connector, the session's registry supplies it). The options are the Kafka source's:
 * `kafka.bootstrap.servers`, one of `subscribe`/`subscribePattern`/`assign`,
 * `startingOffsets` (default `latest`), `maxOffsetsPerTrigger`, … Each batch reads the offset
 * ranges after the previous batch's, and a context recovered through
 * `StreamingContext.getOrCreate` re-reads exactly the ranges of batches that did not complete.
 *
 * @example
 * ```ts
 * import { KafkaUtils, type StreamingContext } from "tributary-streaming/dstream"
 * declare const ssc: StreamingContext
 * const records = KafkaUtils.createDirectStream(ssc, {
 *   "kafka.bootstrap.servers": "localhost:9092",
 *   subscribe: "events",
 *   startingOffsets: "earliest"
 * })
 * records.map((r) => new TextDecoder().decode(r.value ?? new Uint8Array())).print()
 * ```
 * @since 0.1.0
 */
import type { DStream } from "./DStream.ts"
import type { StreamingContext } from "./StreamingContext.ts"

/** One Kafka record (Spark's `ConsumerRecord` without deserializers: key and value are bytes). */
export interface ConsumerRecord {
  readonly key: Uint8Array | null
  readonly value: Uint8Array | null
  readonly topic: string
  readonly partition: number
  readonly offset: number
  readonly timestamp: Date
}

interface KafkaRow {
  readonly key: Uint8Array | null
  readonly value: Uint8Array | null
  readonly topic: string
  readonly partition: number
  readonly offset: number
  readonly timestamp: Date
}

/**
 * Spark's `KafkaUtils` for DStreams.
 *
 * @since 0.1.0
 */
export const KafkaUtils = {
  /** A direct stream of the records of the subscribed topics. */
  createDirectStream: (
    ssc: StreamingContext,
    options: Readonly<Record<string, string | number | boolean>>
  ): DStream<ConsumerRecord> =>
    ssc
      .directStream<KafkaRow>("kafka", options)
      .map((r): ConsumerRecord => ({
        key: r.key,
        value: r.value,
        topic: r.topic,
        partition: r.partition,
        offset: r.offset,
        timestamp: r.timestamp
      }))
}
