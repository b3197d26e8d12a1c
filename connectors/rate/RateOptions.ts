/**
 * The options of the `rate` and `rate-micro-batch` sources, parsed and checked the way Spark's
 * `RateStreamProvider.getTable` and `RatePerMicroBatchProvider.getTable` do: numbers with Java's
 * `Long.parseLong` / `Integer.parseInt` (through `CaseInsensitiveStringMap.getLong`/`getInt`),
 * `rampUpTime` with `JavaUtils.timeStringAsSec`, and Spark's own messages for bad values.
 *
 * Both sources share one schema, `timestamp: timestamp, value: long`. As in Spark
 * (`StructField` defaults to nullable), both columns are nullable even though no row carries a
 * null; `printSchema()` on a rate stream shows `(nullable = true)`.
 *
 * @since 0.1.0
 */
import * as T from "../../core/DataType.ts"
import { AnalysisError } from "../../core/Errors.ts"
import { type Options, option } from "../../core/Formats.ts"
import { forInputString, javaInt, javaLong, parseTimeString, type TimeSuffix } from "../OptionParsing.ts"

/** Java's `Long.MAX_VALUE`. */
export const LONG_MAX = 9_223_372_036_854_775_807n
const LONG_MIN = -9_223_372_036_854_775_808n

/**
 * The schema of both rate sources (Spark's `RateStreamProvider.SCHEMA` and
 * `RatePerMicroBatchProvider.SCHEMA`).
 *
 * @example
 * ```ts
 * import { RateSchema } from "./RateOptions.ts"
 * RateSchema.fields.map((f) => f.name) // ["timestamp", "value"]
 * ```
 * @since 0.1.0
 */
export const RateSchema: T.StructType = T.struct([T.field("timestamp", T.TimestampType), T.field("value", T.LongType)])

const invalid = (message: string): AnalysisError => new AnalysisError({ reason: "InvalidArgument", message })

/**
 * Java's `Long.parseLong(s)` (radix 10): an optional sign and ASCII digits, within the range of
 * a long; anything else fails with Java's message.
 */
export const parseJavaLong = (s: string): bigint | AnalysisError => javaLong(s) ?? invalid(forInputString(s))

/** Java's `Integer.parseInt(s)` (radix 10). */
export const parseJavaInt = (s: string): number | AnalysisError => javaInt(s) ?? invalid(forInputString(s))

/** Spark's `CaseInsensitiveStringMap.getLong(key, default)`. */
const getLong = (options: Options, key: string, dflt: bigint): bigint | AnalysisError => {
  const v = option(options, key)
  return v === undefined ? dflt : parseJavaLong(v)
}

/** Spark's `CaseInsensitiveStringMap.getInt(key, default)`. */
const getInt = (options: Options, key: string, dflt: number): number | AnalysisError => {
  const v = option(options, key)
  return v === undefined ? dflt : parseJavaInt(v)
}

/** Seconds per unit of `JavaUtils.timeSuffixes`, as a fraction `[numerator, denominator]`. */
const TIME_SUFFIXES: Readonly<Record<TimeSuffix, readonly [bigint, bigint]>> = {
  us: [1n, 1_000_000n],
  ms: [1n, 1_000n],
  s: [1n, 1n],
  m: [60n, 1n],
  min: [60n, 1n],
  h: [3_600n, 1n],
  d: [86_400n, 1n]
}

/**
 * Spark's `JavaUtils.timeStringAsSec`: `"5s"`, `"500ms"`, `"2min"`, or a bare number of seconds.
 * Finer units truncate toward zero (`"1500ms"` is 1) and coarser ones saturate at the long range,
 * as Java's `TimeUnit.convert` does.
 *
 * @example
 * ```ts
 * import { timeStringAsSec } from "./RateOptions.ts"
 * timeStringAsSec("5s") // 5n
 * timeStringAsSec("2m") // 120n
 * ```
 * @since 0.1.0
 */
export const timeStringAsSec = (str: string): bigint | AnalysisError => {
  const parsed = parseTimeString(str)
  if (typeof parsed === "string") return invalid(parsed)
  const { value, suffix } = parsed
  if (suffix === undefined) return value
  const unit = TIME_SUFFIXES[suffix]
  const seconds = (value * unit[0]) / unit[1]
  return seconds > LONG_MAX ? LONG_MAX : seconds < LONG_MIN ? LONG_MIN : seconds
}

/** The options of the `rate` source. */
export interface RateOptions {
  readonly rowsPerSecond: bigint
  readonly rampUpTimeSeconds: bigint
  readonly numPartitions: number
  /**
   * `numPartitions` as the user wrote it, or `undefined`; the source's description shows it
   * (or `default`), as Spark's `RateStreamMicroBatchStream.toString` does.
   */
  readonly numPartitionsOption: string | undefined
}

/**
 * The partition count when `numPartitions` is not given. Spark uses the SparkContext's default
 * parallelism (the number of cores in local mode); a batch here is read in one process, so
 * partitions only decide the order of the rows, and one partition keeps the values in order.
 */
export const DEFAULT_NUM_PARTITIONS = 1

/**
 * Parses and checks the `rate` options (`rowsPerSecond` > 0, `rampUpTime` ≥ 0,
 * `numPartitions` > 0) with Spark's messages, e.g.
 * `Invalid value '-1'. The option 'rowsPerSecond' must be positive`.
 *
 * @example
 * ```ts
 * import { parseRateOptions } from "./RateOptions.ts"
 * parseRateOptions({ rowsPerSecond: "10", rampUpTime: "4s" })
 * // { rowsPerSecond: 10n, rampUpTimeSeconds: 4n, numPartitions: 1, numPartitionsOption: undefined }
 * ```
 * @since 0.1.0
 */
export const parseRateOptions = (options: Options): RateOptions | AnalysisError => {
  const rowsPerSecond = getLong(options, "rowsPerSecond", 1n)
  if (rowsPerSecond instanceof AnalysisError) return rowsPerSecond
  if (rowsPerSecond <= 0n)
    return invalid(`Invalid value '${rowsPerSecond}'. The option 'rowsPerSecond' must be positive`)
  const rampUpText = option(options, "rampUpTime")
  const rampUpTimeSeconds = rampUpText === undefined ? 0n : timeStringAsSec(rampUpText)
  if (rampUpTimeSeconds instanceof AnalysisError) return rampUpTimeSeconds
  if (rampUpTimeSeconds < 0n) {
    return invalid(`Invalid value '${rampUpTimeSeconds}'. The option 'rampUpTime' must not be negative`)
  }
  const numPartitions = getInt(options, "numPartitions", DEFAULT_NUM_PARTITIONS)
  if (numPartitions instanceof AnalysisError) return numPartitions
  if (numPartitions <= 0)
    return invalid(`Invalid value '${numPartitions}'. The option 'numPartitions' must be positive`)
  return { rowsPerSecond, rampUpTimeSeconds, numPartitions, numPartitionsOption: option(options, "numPartitions") }
}

/**
 * The largest offset (in seconds) whose end value fits in a long: `Long.MAX_VALUE / rowsPerSecond`
 * (Spark's `maxSeconds`).
 */
export const maxSeconds = (rowsPerSecond: bigint): bigint => LONG_MAX / rowsPerSecond

/**
 * Spark's `INCORRECT_RAMP_UP_RATE` check: the ramp-up must end before the values overflow a long.
 */
export const checkRampUp = (o: RateOptions): AnalysisError | undefined => {
  const max = maxSeconds(o.rowsPerSecond)
  if (o.rampUpTimeSeconds <= max) return undefined
  return new AnalysisError({
    reason: "InvalidArgument",
    errorClass: "INCORRECT_RAMP_UP_RATE",
    message: `[INCORRECT_RAMP_UP_RATE] Max offset with ${o.rowsPerSecond} rowsPerSecond is ${max}, but 'rampUpTimeSeconds' is ${o.rampUpTimeSeconds}.`
  })
}

/** The options of the `rate-micro-batch` source. */
export interface RatePerMicroBatchOptions {
  readonly rowsPerBatch: number
  readonly numPartitions: number
  /** Epoch milliseconds of batch 0's rows. */
  readonly startTimestamp: number
  readonly advanceMillisPerBatch: number
}

/**
 * Parses and checks the `rate-micro-batch` options as Spark's `RatePerMicroBatchProvider` does:
 * `rowsPerBatch` has no usable default (0, which must be positive, so it is required),
 * `numPartitions` > 0, `startTimestamp` ≥ 0 (default 0), `advanceMillisPerBatch` ≥ 0 (an int,
 * default 1000).
 *
 * @example
 * ```ts
 * import { parseRatePerMicroBatchOptions } from "./RateOptions.ts"
 * parseRatePerMicroBatchOptions({ rowsPerBatch: "10" })
 * // { rowsPerBatch: 10, numPartitions: 1, startTimestamp: 0, advanceMillisPerBatch: 1000 }
 * ```
 * @since 0.1.0
 */
export const parseRatePerMicroBatchOptions = (options: Options): RatePerMicroBatchOptions | AnalysisError => {
  const rowsPerBatch = getLong(options, "rowsPerBatch", 0n)
  if (rowsPerBatch instanceof AnalysisError) return rowsPerBatch
  if (rowsPerBatch <= 0n) return invalid(`Invalid value '${rowsPerBatch}'. The option 'rowsPerBatch' must be positive`)
  const numPartitions = getInt(options, "numPartitions", DEFAULT_NUM_PARTITIONS)
  if (numPartitions instanceof AnalysisError) return numPartitions
  if (numPartitions <= 0)
    return invalid(`Invalid value '${numPartitions}'. The option 'numPartitions' must be positive`)
  const startTimestamp = getLong(options, "startTimestamp", 0n)
  if (startTimestamp instanceof AnalysisError) return startTimestamp
  if (startTimestamp < 0n) {
    return invalid(`Invalid value '${startTimestamp}'. The option 'startTimestamp' must be non-negative`)
  }
  const advanceMillisPerBatch = getInt(options, "advanceMillisPerBatch", 1000)
  if (advanceMillisPerBatch instanceof AnalysisError) return advanceMillisPerBatch
  if (advanceMillisPerBatch < 0) {
    return invalid(`Invalid value '${advanceMillisPerBatch}'. The option 'advanceMillisPerBatch' must be non-negative`)
  }
  return {
    rowsPerBatch: Number(rowsPerBatch),
    numPartitions,
    startTimestamp: Number(startTimestamp),
    advanceMillisPerBatch
  }
}

/**
 * Spark's `_LEGACY_ERROR_TEMP_2242`: a source with a fixed schema refuses a user-specified one
 * (`spark.readStream.format("rate").schema(...)`).
 */
export const userSchemaUnsupported = (provider: string): AnalysisError =>
  new AnalysisError({
    reason: "UnsupportedOperation",
    errorClass: "_LEGACY_ERROR_TEMP_2242",
    message: `${provider} source does not support user-specified schema.`
  })
