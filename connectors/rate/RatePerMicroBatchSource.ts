/**
 * The `rate-micro-batch` source (Spark's `RatePerMicroBatchProvider` with
 * `RatePerMicroBatchStream`): exactly `rowsPerBatch` rows per micro-batch, whatever the trigger
 * or the clock — batch 0 holds values `0 … rowsPerBatch-1` stamped `startTimestamp`, batch 1 the
 * next `rowsPerBatch` values stamped `startTimestamp + advanceMillisPerBatch`, and so on.
 *
 * Offsets are Spark's `RatePerMicroBatchStreamOffset` JSON, `{"offset":20,"timestamp":2000}`:
 * the next value and the timestamp of the batch that starts there. The clock is never read, so
 * every run (and every restart) produces the same rows.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import type { InternalRow } from "../../core/Row.ts"
import type { MicroBatchSource, Offset, ReadLimit, SourceFormat } from "../../core/Streaming.ts"
import {
  parseRatePerMicroBatchOptions,
  type RatePerMicroBatchOptions,
  RateSchema,
  userSchemaUnsupported
} from "./RateOptions.ts"

/**
 * Spark's `RatePerMicroBatchStreamOffset`: the first value not yet produced and the timestamp
 * (epoch ms) of the rows of the batch that starts at it. Serialized with these two fields, in
 * this order.
 */
export interface RatePerMicroBatchOffset {
  readonly offset: number
  readonly timestamp: number
}

const CONNECTOR = "rate-micro-batch"

const isWhole = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n)

/** Reads an offset back; `undefined` when it is not one of this source's. */
const asOffset = (o: Offset): RatePerMicroBatchOffset | undefined => {
  if (o === null || typeof o !== "object") return undefined
  const { offset, timestamp } = o as { offset?: unknown; timestamp?: unknown }
  return isWhole(offset) && isWhole(timestamp) && offset >= 0 ? { offset, timestamp } : undefined
}

const offsetError = (message: string): ConnectorError =>
  new ConnectorError({ connector: CONNECTOR, domain: "internal", retryable: false, message })

/**
 * The rows of the batch `(start, end]` (Spark's `RatePerMicroBatchStreamPartitionReader`): the
 * values `[start.offset, end.offset)` dealt to `numPartitions` partitions (`start.offset + p`,
 * step `numPartitions`) and read partition after partition, every row stamped with
 * `start.timestamp`.
 *
 * @example
 * ```ts
 * import { ratePerMicroBatchRows } from "./RatePerMicroBatchSource.ts"
 * ratePerMicroBatchRows(2, { offset: 10, timestamp: 1050 }, { offset: 14, timestamp: 1100 })
 * // [[1050, 10], [1050, 12], [1050, 11], [1050, 13]]
 * ```
 * @since 0.1.0
 */
export const ratePerMicroBatchRows = (
  numPartitions: number,
  start: RatePerMicroBatchOffset,
  end: RatePerMicroBatchOffset
): ReadonlyArray<InternalRow> => {
  if (start.offset >= end.offset) return []
  const rows = new Array<InternalRow>(end.offset - start.offset)
  let i = 0
  for (let p = 0; p < numPartitions; p++) {
    for (let v = start.offset + p; v < end.offset; v += numPartitions) rows[i++] = [start.timestamp, v]
  }
  return rows
}

const makeSource = (o: RatePerMicroBatchOptions): MicroBatchSource => {
  // Trigger.AvailableNow (Spark's `SupportsTriggerAvailableNow`): the first batch asked for after
  // `prepareForTriggerAvailableNow` is the only one; later calls return the same end offset.
  let isTriggerAvailableNow = false
  let offsetForTriggerAvailableNow: RatePerMicroBatchOffset | undefined
  const next = (start: RatePerMicroBatchOffset): RatePerMicroBatchOffset => ({
    offset: start.offset + o.rowsPerBatch,
    timestamp: start.timestamp + o.advanceMillisPerBatch
  })
  return {
    description: `RatePerMicroBatchStream[rowsPerBatch=${o.rowsPerBatch}, numPartitions=${o.numPartitions}, startTimestamp=${o.startTimestamp}, advanceMsPerBatch=${o.advanceMillisPerBatch}]`,
    schema: RateSchema,
    initialOffset: () => Effect.succeed<RatePerMicroBatchOffset>({ offset: 0, timestamp: o.startTimestamp }),
    // Spark's `getDefaultReadLimit` is `maxRows(rowsPerBatch)`; like Spark, `latestOffset`
    // always advances by exactly `rowsPerBatch` whatever the limit says.
    defaultReadLimit: (): ReadLimit => ({ _tag: "MaxRows", maxRows: o.rowsPerBatch }),
    latestOffset: (start) =>
      Effect.suspend(() => {
        const from = asOffset(start)
        if (from === undefined)
          return Effect.fail(offsetError(`Invalid rate-micro-batch offset ${JSON.stringify(start)}`))
        if (!isTriggerAvailableNow) return Effect.succeed(next(from))
        if (offsetForTriggerAvailableNow === undefined) offsetForTriggerAvailableNow = next(from)
        return Effect.succeed(offsetForTriggerAvailableNow)
      }),
    getBatch: (start, end) =>
      Effect.suspend(() => {
        const s = asOffset(start)
        const e = asOffset(end)
        if (s === undefined || e === undefined) {
          return Effect.fail(
            offsetError(`Invalid rate-micro-batch offsets ${JSON.stringify(start)} to ${JSON.stringify(end)}`)
          )
        }
        if (s.offset > e.offset) return Effect.fail(offsetError(`startOffset(${s.offset}) > endOffset(${e.offset})`))
        if (s.timestamp > e.timestamp) {
          return Effect.fail(offsetError(`startTimestamp(${s.timestamp}) > endTimestamp(${e.timestamp})`))
        }
        return Effect.succeed(ratePerMicroBatchRows(o.numPartitions, s, e))
      }),
    commit: () => Effect.void,
    decodeOffset: (json) => {
      const decoded = asOffset(json)
      return decoded === undefined
        ? Effect.fail(
            new ConnectorError({
              connector: CONNECTOR,
              domain: "external",
              retryable: false,
              message: `Invalid rate-micro-batch offset ${JSON.stringify(json)} in the offset log: expected {"offset":<n>,"timestamp":<ms>}.`
            })
          )
        : Effect.succeed<RatePerMicroBatchOffset>(decoded)
    },
    prepareForTriggerAvailableNow: () =>
      Effect.sync(() => {
        isTriggerAvailableNow = true
      }),
    stop: () => Effect.void
  }
}

/**
 * The `rate-micro-batch` source format: `spark.readStream.format("rate-micro-batch")` with the
 * options `rowsPerBatch` (required, > 0), `numPartitions` (default 1 here; Spark uses its
 * default parallelism), `startTimestamp` (default 0) and `advanceMillisPerBatch` (default
 * 1000). It refuses a user-specified schema, as Spark does.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { RatePerMicroBatchSource } from "./RatePerMicroBatchSource.ts"
 * const program = Effect.gen(function* () {
 *   const source = yield* RatePerMicroBatchSource.create({
 *     options: { rowsPerBatch: "10", startTimestamp: "1000", advanceMillisPerBatch: "50" },
 *     schema: RatePerMicroBatchSource.schema(undefined, { rowsPerBatch: "10" }) as never,
 *     metadataPath: "/tmp/chk/sources/0", conf: new Map()
 *   })
 *   const start = yield* source.initialOffset()                            // {"offset":0,"timestamp":1000}
 *   const end = yield* source.latestOffset(start, source.defaultReadLimit()) // {"offset":10,"timestamp":1050}
 *   return yield* source.getBatch(start, end)                              // values 0..9 at 1000 ms
 * })
 * ```
 * @since 0.1.0
 */
export const RatePerMicroBatchSource: SourceFormat = {
  name: "rate-micro-batch",
  schema: (userSchema, options) => {
    if (userSchema !== undefined) return userSchemaUnsupported("RatePerMicroBatchProvider")
    const parsed = parseRatePerMicroBatchOptions(options)
    return parsed instanceof AnalysisError ? parsed : RateSchema
  },
  create: (ctx) =>
    Effect.gen(function* () {
      const parsed = parseRatePerMicroBatchOptions(ctx.options)
      if (parsed instanceof AnalysisError) return yield* parsed
      return makeSource(parsed)
    })
}
