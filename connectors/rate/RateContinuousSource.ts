/**
 * The `rate` source read continuously (Spark's `RateStreamContinuousStream` and
 * `RateStreamContinuousPartitionReader`), for `Trigger.Continuous`.
 *
 * With `N = numPartitions`, partition `p` emits the values `p, p + N, p + 2N, …`; each partition
 * runs at `rowsPerSecond / N` rows per second, one row every `floor(1000 / (rowsPerSecond / N))`
 * milliseconds of Effect's `Clock`, and a row's `timestamp` is the time it fell due. As in Spark:
 *
 * - the start is the clock's time when the source is created (not kept in the checkpoint: a
 *   restart resumes from the positions in the offset log, which carry their own times);
 * - `rampUpTime` is ignored (Spark's continuous reader has no ramp-up);
 * - above 1000 rows per second per partition the interval truncates to 0 ms and a partition
 *   emits as fast as it is read, every row stamped with the start time;
 * - `numPartitions` cannot change across restarts of one checkpoint.
 *
 * Offsets are Spark's `RateStreamOffset` JSON: per partition, the last value emitted and its
 * time, `{"0":{"value":-2,"runTimeMs":1000},"1":{"value":-1,"runTimeMs":1000}}` before any row.
 *
 * @since 0.1.0
 */
import { Clock, Effect } from "effect"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import type { InternalRow } from "../../core/Row.ts"
import type {
  ContinuousPartitionReader,
  ContinuousSource,
  Offset,
  PartitionOffset,
  SourceContext
} from "../../core/Streaming.ts"
import { parseRateOptions, RateSchema } from "./RateOptions.ts"

const CONNECTOR = "rate"

/** One partition's position (Spark's `RateStreamPartitionOffset`): the last value emitted and its time. */
export interface RatePartitionOffset {
  readonly partition: number
  readonly value: number
  readonly runTimeMs: number
}

/** The source's offset (Spark's `RateStreamOffset`): partition (as a string key) to `{ value, runTimeMs }`. */
export type RateContinuousOffset = Readonly<Record<string, { readonly value: number; readonly runTimeMs: number }>>

/**
 * Spark's `readTimeIncrement`: milliseconds between two rows of one partition, the per-partition
 * rate's period truncated to a whole millisecond (0 above 1000 rows per second per partition).
 *
 * @example
 * ```ts
 * import { readTimeIncrementMs } from "./RateContinuousSource.ts"
 * readTimeIncrementMs(5, 2) // 400 (2.5 rows per second per partition)
 * ```
 * @since 0.1.0
 */
export const readTimeIncrementMs = (rowsPerSecond: number, numPartitions: number): number =>
  Math.trunc(1000 / (rowsPerSecond / numPartitions))

/**
 * Spark's `createInitialOffset`: every partition starts one step before its first value, at
 * the creation time, so that partition `p`'s first row is `p`.
 *
 * @example
 * ```ts
 * import { initialRateOffset } from "./RateContinuousSource.ts"
 * initialRateOffset(2, 1000) // {"0":{"value":-2,"runTimeMs":1000},"1":{"value":-1,"runTimeMs":1000}}
 * ```
 * @since 0.1.0
 */
export const initialRateOffset = (numPartitions: number, creationTimeMs: number): RateContinuousOffset => {
  const o: Record<string, { value: number; runTimeMs: number }> = {}
  for (let i = 0; i < numPartitions; i++) o[String(i)] = { value: i - numPartitions, runTimeMs: creationTimeMs }
  return o
}

/**
 * A reader of one partition (Spark's `RateStreamContinuousPartitionReader`): each row adds
 * `increment` (the partition count) to the value and `readTimeIncrement` to the time, and is
 * handed out once the clock has reached its time.
 *
 * @example
 * ```ts
 * import { rateReader } from "./RateContinuousSource.ts"
 * const r = rateReader({ partition: 1, value: -1, runTimeMs: 0 }, 2, 500)
 * r.poll(1000, 10) // [[500, 1], [1000, 3]]
 * ```
 * @since 0.1.0
 */
export const rateReader = (
  start: RatePartitionOffset,
  increment: number,
  readTimeIncrement: number
): ContinuousPartitionReader => {
  let value = start.value
  let time = start.runTimeMs
  return {
    poll: (nowMs, max) => {
      const out: Array<InternalRow> = []
      while (out.length < max) {
        const next = time + readTimeIncrement
        if (next > nowMs) break
        value += increment
        time = next
        out.push([time, value])
      }
      return out
    },
    offset: (): PartitionOffset => ({ partition: start.partition, value, runTimeMs: time }),
    awaitData: (nowMs) => {
      const wait = time + readTimeIncrement - nowMs
      return wait <= 0 ? Effect.void : Effect.sleep(wait)
    },
    close: () => Effect.void
  }
}

const badOffset = (json: unknown): ConnectorError =>
  new ConnectorError({
    connector: CONNECTOR,
    domain: "external",
    retryable: false,
    message: `Invalid continuous rate source offset ${JSON.stringify(json)} in the offset log: expected {"<partition>":{"value":<long>,"runTimeMs":<long>},…}.`
  })

/** Checks a `RateStreamOffset` JSON value (Spark's `deserializeOffset`). */
const decodeRateOffset = (json: unknown): RateContinuousOffset | undefined => {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return undefined
  for (const [k, v] of Object.entries(json as Record<string, unknown>)) {
    if (!/^\d+$/.test(k)) return undefined
    const pair = v as { value?: unknown; runTimeMs?: unknown } | null
    if (pair === null || typeof pair !== "object") return undefined
    if (!Number.isSafeInteger(pair.value) || !Number.isSafeInteger(pair.runTimeMs)) return undefined
  }
  return json as RateContinuousOffset
}

/**
 * The continuous `rate` source for the given options, started at `creationTimeMs`.
 *
 * @since 0.1.0
 */
export const makeRateContinuousSource = (
  rowsPerSecond: number,
  numPartitions: number,
  creationTimeMs: number
): ContinuousSource => {
  const increment = readTimeIncrementMs(rowsPerSecond, numPartitions)
  return {
    description: `RateStreamContinuousStream[rowsPerSecond=${rowsPerSecond}, numPartitions=${numPartitions}]`,
    schema: RateSchema,
    initialOffset: () => Effect.succeed(initialRateOffset(numPartitions, creationTimeMs)),
    createReaders: (start: Offset) =>
      Effect.suspend(() => {
        const offset = decodeRateOffset(start)
        if (offset === undefined) return Effect.fail(badOffset(start))
        const keys = Object.keys(offset)
        if (keys.length !== numPartitions) {
          // Spark's `planInputPartitions` check, word for word.
          return Effect.fail(
            new ConnectorError({
              connector: CONNECTOR,
              domain: "user",
              retryable: false,
              message: `The previous run contained ${keys.length} partitions, but ${numPartitions} partitions are currently configured. The numPartitions option cannot be changed.`
            })
          )
        }
        const readers: Array<ContinuousPartitionReader> = []
        for (let p = 0; p < numPartitions; p++) {
          const s = offset[String(p)]
          if (s === undefined) return Effect.fail(badOffset(start))
          readers.push(rateReader({ partition: p, value: s.value, runTimeMs: s.runTimeMs }, numPartitions, increment))
        }
        return Effect.succeed(readers)
      }),
    mergeOffsets: (offsets) => {
      const merged: Record<string, { value: number; runTimeMs: number }> = {}
      for (const o of offsets as ReadonlyArray<RatePartitionOffset>) {
        merged[String(o.partition)] = { value: o.value, runTimeMs: o.runTimeMs }
      }
      return merged
    },
    decodeOffset: (json) => {
      const o = decodeRateOffset(json)
      return o === undefined ? Effect.fail(badOffset(json)) : Effect.succeed(o)
    },
    commit: () => Effect.void,
    stop: () => Effect.void
  }
}

/**
 * `SourceFormat.continuous` of `rate`: parses the options as the micro-batch source does (same
 * messages), takes the start time from the clock.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { createRateContinuousSource } from "./RateContinuousSource.ts"
 * const source = createRateContinuousSource({
 *   options: { rowsPerSecond: "10", numPartitions: "2" }, schema: { _tag: "struct", fields: [] },
 *   metadataPath: "/tmp/chk/sources/0", conf: new Map()
 * })
 * ```
 * @since 0.1.0
 */
export const createRateContinuousSource = (
  ctx: SourceContext
): Effect.Effect<ContinuousSource, AnalysisError | ConnectorError> =>
  Effect.gen(function* () {
    const parsed = parseRateOptions(ctx.options)
    if (parsed instanceof AnalysisError) return yield* parsed
    const creationTimeMs = yield* Clock.currentTimeMillis
    return makeRateContinuousSource(Number(parsed.rowsPerSecond), parsed.numPartitions, creationTimeMs)
  })
