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
import { registerSourceFormat } from "../../core/Streaming.ts"
import { RatePerMicroBatchSource } from "./RatePerMicroBatchSource.ts"
import { RateSource } from "./RateSource.ts"

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
export { RateSource, rateBatchRows, valueAtSecond } from "./RateSource.ts"

/** Registers `rate` and `rate-micro-batch` in the streaming source registry (`core/Streaming.ts`). */
export const registerRate = (): void => {
  registerSourceFormat(RateSource)
  registerSourceFormat(RatePerMicroBatchSource)
}
