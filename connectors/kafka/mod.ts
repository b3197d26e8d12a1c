/**
 * The Kafka connector: the `kafka` streaming source, batch format and sink, on kafkajs, with
 * Spark's option names (`kafka.bootstrap.servers`, `subscribe`, `startingOffsets`, …). Importing
 * this module registers nothing; the composition root calls `registerKafka()`.
 *
 * @example
 * ```ts
 * import { registerKafka } from "./connectors/kafka/mod.ts"
 * registerKafka()
 * // spark.readStream.format("kafka"), spark.read.format("kafka") and
 * // writeStream.format("kafka") now resolve
 * ```
 * @since 0.1.0
 */
import { registerBatchFormat } from "../../core/Formats.ts"
import { registerSinkFormat, registerSourceFormat } from "../../core/Streaming.ts"
import { KafkaBatchFormat } from "./KafkaBatch.ts"
import { KafkaContinuousSourceFormat } from "./KafkaContinuousSource.ts"
import { KafkaSinkFormat } from "./KafkaSink.ts"

export { KafkaBatchFormat } from "./KafkaBatch.ts"
export { KafkaContinuousSourceFormat } from "./KafkaContinuousSource.ts"
export { type KafkaReader, makeReader, type OffsetMap, type RetryPolicy } from "./KafkaClient.ts"
export {
  type ConsumerStrategy,
  HeadersType,
  type KafkaReadOptions,
  type KafkaWriteOptions,
  kafkaSchema,
  type OffsetRangeLimit,
  parseBatchOptions,
  parseOffsetsWithTopics,
  parsePartitionOffsets,
  parseStreamOptions,
  parseWriteOptions,
  type TopicPartition
} from "./KafkaOptions.ts"
export { DEFAULT_MARKER_TOPIC, KafkaSinkFormat, projectionFor } from "./KafkaSink.ts"
export { KafkaSourceFormat, makeKafkaSource, offsetsBehindLatestMetrics, rateLimit } from "./KafkaSource.ts"
export {
  compareOffsets,
  type CompareResult,
  decodeKafkaSourceOffset,
  type KafkaSourceOffset,
  KafkaSourceOffsetSchema
} from "./KafkaSourceOffset.ts"

/**
 * Registers the `kafka` source (micro-batch and continuous reads), batch format and sink
 * (`core/Streaming.ts`, `core/Formats.ts`).
 */
export const registerKafka = (): void => {
  registerSourceFormat(KafkaContinuousSourceFormat)
  registerBatchFormat(KafkaBatchFormat)
  registerSinkFormat(KafkaSinkFormat)
}
