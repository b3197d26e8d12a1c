/**
 * The Kinesis connector: the `kinesis` streaming source on the AWS SDK v3 Kinesis client, with
 * the option names of Spark's Kinesis connectors (`streamName`, `region`, `endpointUrl`,
 * `initialPosition`, `maxRecordsPerFetch`, …). Importing this module registers nothing; the
 * composition root calls `registerKinesis()`.
 *
 * @example
 * ```ts
 * import { registerKinesis } from "./connectors/kinesis/mod.ts"
 * registerKinesis()
 * // spark.readStream.format("kinesis") now resolves
 * ```
 * @since 0.1.0
 */
import { registerSourceFormat } from "../../core/Streaming.ts"
import { KinesisSourceFormat } from "./KinesisSource.ts"

export {
  awsError,
  type ClientSettings,
  type IteratorStart,
  type KinesisApi,
  type KinesisRecord,
  makeKinesisApi,
  type RecordsPage,
  type ShardDescription
} from "./KinesisClient.ts"
export {
  type InitialPosition,
  type KinesisReadOptions,
  kinesisSchema,
  parseInitialPosition,
  parseKinesisOptions,
  parseTimestamp
} from "./KinesisOptions.ts"
export { KinesisSourceFormat, makeKinesisSource, readNew, readRange } from "./KinesisSource.ts"
export {
  decodeKinesisSourceOffset,
  type IteratorType,
  type KinesisSourceOffset,
  KinesisSourceOffsetSchema,
  type ShardPosition
} from "./KinesisSourceOffset.ts"

/** Registers the `kinesis` source (`core/Streaming.ts`). */
export const registerKinesis = (): void => {
  registerSourceFormat(KinesisSourceFormat)
}
