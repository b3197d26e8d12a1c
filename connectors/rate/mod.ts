/**
 * The rate sources: `rate` (rows per second of clock time) and `rate-micro-batch` (rows per
 * micro-batch). Importing this module registers nothing; the composition root calls
 * `registerRate()`.
 *
 * @example
 * ```ts
 * import { registerRate } from "./connectors/rate/mod.ts"
 * registerRate()
 * // spark.readStream.format("rate") and .format("rate-micro-batch") now resolve
 * ```
 * @since 0.1.0
 */
import { registerSourceFormat, type SourceFormat } from "../../core/Streaming.ts"
import { createRateContinuousSource } from "./RateContinuousSource.ts"
import { RatePerMicroBatchSource } from "./RatePerMicroBatchSource.ts"
import { RateSource as RateMicroBatchSource } from "./RateSource.ts"

export {
  DEFAULT_NUM_PARTITIONS,
  parseRateOptions,
  parseRatePerMicroBatchOptions,
  type RateOptions,
  type RatePerMicroBatchOptions,
  RateSchema,
  timeStringAsSec
} from "./RateOptions.ts"
export {
  type RatePerMicroBatchOffset,
  RatePerMicroBatchSource,
  ratePerMicroBatchRows
} from "./RatePerMicroBatchSource.ts"
export { rateBatchRows, valueAtSecond } from "./RateSource.ts"
export {
  createRateContinuousSource,
  initialRateOffset,
  makeRateContinuousSource,
  type RateContinuousOffset,
  type RatePartitionOffset,
  rateReader,
  readTimeIncrementMs
} from "./RateContinuousSource.ts"

/**
 * The `rate` format: micro-batches (`RateSource.ts`) and `Trigger.Continuous`
 * (`RateContinuousSource.ts`, Spark's `RateStreamContinuousStream`).
 */
export const RateSource: SourceFormat = { ...RateMicroBatchSource, continuous: createRateContinuousSource }

/**
 * The class name Spark 2.x knew the rate source by: Spark's `DataSource.backwardCompatibilityMap`
 * still resolves it to `RateStreamProvider` (RateStreamProviderSuite's "compatible with old path
 * in registry").
 */
export const RATE_LEGACY_NAME = "org.apache.spark.sql.execution.streaming.RateSourceProvider"

/** Registers `rate` and `rate-micro-batch` in the streaming source registry (`core/Streaming.ts`). */
export const registerRate = (): void => {
  registerSourceFormat(RateSource)
  registerSourceFormat({ ...RateSource, name: RATE_LEGACY_NAME })
  registerSourceFormat(RatePerMicroBatchSource)
}
