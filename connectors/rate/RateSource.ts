/**
 * The `rate` source (Spark's `RateStreamProvider` with `RateStreamMicroBatchStream`): rows of
 * `(timestamp, value)` with `value` counting up from 0 at `rowsPerSecond`, optionally ramping up
 * to that speed over `rampUpTime`.
 *
 * Offsets are the whole seconds since the source was first started, as a JSON number. The start
 * time comes from Effect's `Clock` and is kept in the source's metadata folder
 * (`<checkpoint>/sources/<i>/0`, written once, as Spark's metadata log does: `v1`, a newline and
 * the epoch milliseconds), so a restarted query replays exactly the same values and timestamps.
 * The engine polls on its clock: this source has no `awaitData`.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Clock, Effect } from "effect"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import type { InternalRow } from "../../core/Row.ts"
import type { MicroBatchSource, Offset, ReadLimit, SourceFormat } from "../../core/Streaming.ts"
import {
  checkRampUp,
  maxSeconds,
  parseRateOptions,
  type RateOptions,
  RateSchema,
  userSchemaUnsupported
} from "./RateOptions.ts"

/**
 * The value reached at `seconds` after the start (Spark's `RateStreamProvider.valueAtSecond`):
 * during the ramp-up the speed grows by `rowsPerSecond / (rampUpTimeSeconds + 1)` each second
 * (integer division), afterwards it is `rowsPerSecond`.
 *
 * @example
 * ```ts
 * import { valueAtSecond } from "./RateSource.ts"
 * // rampUpTime 4s, 10 rows/s: speeds 0 2 4 6 8 10 -> end values 0 2 6 12 20 30
 * valueAtSecond(3n, 10n, 4n) // 12n
 * ```
 * @since 0.1.0
 */
export const valueAtSecond = (seconds: bigint, rowsPerSecond: bigint, rampUpTimeSeconds: bigint): bigint => {
  const speedDeltaPerSecond = rowsPerSecond / (rampUpTimeSeconds + 1n)
  // Exact in BigInt: one of seconds and seconds + 1 is even, so the halving never truncates.
  if (seconds <= rampUpTimeSeconds) return (speedDeltaPerSecond * seconds * (seconds + 1n)) / 2n
  const rampUpPart = (speedDeltaPerSecond * rampUpTimeSeconds * (rampUpTimeSeconds + 1n)) / 2n
  return rampUpPart + (seconds - rampUpTimeSeconds) * rowsPerSecond
}

/**
 * The rows of the batch `(startSeconds, endSeconds]`, as Spark's `RateStreamMicroBatchStream`
 * plans and reads them: the values `[valueAtSecond(start), valueAtSecond(end))` are dealt to
 * `numPartitions` partitions (`rangeStart + p`, step `numPartitions`) and read partition after
 * partition; each value's timestamp spreads the batch's values evenly over its seconds:
 * `creationTimeMs + start * 1000 + round((value - rangeStart) * msPerValue)`.
 *
 * @example
 * ```ts
 * import { rateBatchRows } from "./RateSource.ts"
 * const o = { rowsPerSecond: 4n, rampUpTimeSeconds: 0n, numPartitions: 2, numPartitionsOption: "2" }
 * rateBatchRows(o, 0, 0, 1) // [[0, 0], [500, 2], [250, 1], [750, 3]]
 * ```
 * @since 0.1.0
 */
export const rateBatchRows = (
  options: RateOptions,
  creationTimeMs: number,
  startSeconds: number,
  endSeconds: number
): ReadonlyArray<InternalRow> => {
  const rangeStart = Number(valueAtSecond(BigInt(startSeconds), options.rowsPerSecond, options.rampUpTimeSeconds))
  const rangeEnd = Number(valueAtSecond(BigInt(endSeconds), options.rowsPerSecond, options.rampUpTimeSeconds))
  if (rangeStart === rangeEnd) return []
  const localStartTimeMs = creationTimeMs + startSeconds * 1000
  const relativeMsPerValue = ((endSeconds - startSeconds) * 1000) / (rangeEnd - rangeStart)
  const n = options.numPartitions
  const rows = new Array<InternalRow>(rangeEnd - rangeStart)
  let i = 0
  for (let p = 0; p < n; p++) {
    for (let v = rangeStart + p; v < rangeEnd; v += n) {
      rows[i++] = [localStartTimeMs + Math.round((v - rangeStart) * relativeMsPerValue), v]
    }
  }
  return rows
}

const CONNECTOR = "rate"

/** The most rows one materialized batch can hold (a JavaScript array's length limit). */
const MAX_BATCH_ROWS = 4_294_967_295n

/** The version line of the start-time file (Spark's `RateStreamProvider.VERSION`). */
const VERSION = 1

const ioError = (what: string, file: string) => (cause: unknown) =>
  new ConnectorError({
    connector: CONNECTOR,
    domain: "external",
    retryable: true,
    message: `Could not ${what} the rate source's start time file ${file}: ${cause instanceof Error ? cause.message : String(cause)}`,
    cause
  })

const corrupt = (file: string, why: string): ConnectorError =>
  new ConnectorError({
    connector: CONNECTOR,
    domain: "external",
    retryable: false,
    message: `The rate source's start time file ${file} is malformed: ${why}. Delete the checkpoint folder to start over, or point the query at another checkpointLocation.`
  })

/** Parses `v1\n<epoch ms>` (Spark's `HDFSMetadataLog` entry for `LongOffset(creationTimeMs)`). */
const parseStartTime = (file: string, text: string): Effect.Effect<number, ConnectorError> => {
  const nl = text.indexOf("\n")
  if (!text.startsWith("v") || nl <= 0) {
    return Effect.fail(corrupt(file, "failed to detect the log file version line"))
  }
  const version = text.slice(1, nl)
  if (!/^\d+$/.test(version)) return Effect.fail(corrupt(file, `invalid log file version line "${text.slice(0, nl)}"`))
  if (Number(version) > VERSION) {
    return Effect.fail(
      new ConnectorError({
        connector: CONNECTOR,
        domain: "external",
        retryable: false,
        message: `The rate source's start time file ${file} has log version v${version}, but this version of tributary supports up to v${VERSION}. Upgrade tributary to read it.`
      })
    )
  }
  const body = text.slice(nl + 1).trim()
  if (!/^-?\d+$/.test(body) || !Number.isSafeInteger(Number(body))) {
    return Effect.fail(
      corrupt(file, `expected the start time in epoch milliseconds, found ${JSON.stringify(body.slice(0, 40))}`)
    )
  }
  return Effect.succeed(Number(body))
}

/**
 * The source's start time: read from `<dir>/0`, or taken from the clock and written there
 * (to a temporary file first, then renamed into place, so a crash never leaves half a file).
 */
const readOrCreateStartTime = (dir: string): Effect.Effect<number, ConnectorError> => {
  const file = path.join(dir, "0")
  return Effect.gen(function* () {
    const existing = yield* Effect.tryPromise({
      try: async () => {
        try {
          return await fs.readFile(file, "utf8")
        } catch (e) {
          if ((e as { code?: string } | null)?.code === "ENOENT") return undefined
          throw e
        }
      },
      catch: ioError("read", file)
    })
    if (existing !== undefined) return yield* parseStartTime(file, existing)
    const now = yield* Clock.currentTimeMillis
    yield* Effect.tryPromise({
      try: async () => {
        await fs.mkdir(dir, { recursive: true })
        const tmp = path.join(dir, `.0.${randomUUID()}.tmp`)
        const handle = await fs.open(tmp, "w")
        try {
          await handle.writeFile(`v${VERSION}\n${now}`, "utf8")
          await handle.sync()
        } finally {
          await handle.close()
        }
        await fs.rename(tmp, file)
      },
      catch: ioError("write", file)
    })
    return now
  })
}

const offsetError = (message: string): ConnectorError =>
  new ConnectorError({ connector: CONNECTOR, domain: "internal", retryable: false, message })

/** An offset of this source: a whole, non-negative number of seconds. */
const asSeconds = (o: Offset): number | undefined =>
  typeof o === "number" && Number.isSafeInteger(o) && o >= 0 ? o : undefined

const makeSource = (options: RateOptions, creationTimeMs: number): MicroBatchSource => {
  const max = Number(maxSeconds(options.rowsPerSecond))
  // Spark's `lastTimeMs`: never moves back, so offsets never shrink even if the clock does.
  let lastTimeMs = creationTimeMs
  // Trigger.AvailableNow: the end fixed by `prepareForTriggerAvailableNow` (what Spark's
  // `AvailableNowMicroBatchStreamWrapper` does for sources without admission control).
  let availableNowEnd: number | undefined
  const elapsedSeconds = Effect.map(Clock.currentTimeMillis, (now) => {
    if (lastTimeMs < now) lastTimeMs = now
    return Math.floor((lastTimeMs - creationTimeMs) / 1000)
  })
  return {
    // Spark's `RateStreamMicroBatchStream.toString`, missing closing bracket included.
    description: `RateStreamV2[rowsPerSecond=${options.rowsPerSecond}, rampUpTimeSeconds=${options.rampUpTimeSeconds}, numPartitions=${options.numPartitionsOption ?? "default"}`,
    schema: RateSchema,
    initialOffset: () => Effect.succeed(0),
    defaultReadLimit: (): ReadLimit => ({ _tag: "AllAvailable" }),
    latestOffset: (start) =>
      Effect.gen(function* () {
        const from = asSeconds(start)
        if (from === undefined) return yield* offsetError(`Invalid rate source offset ${JSON.stringify(start)}`)
        const latest = availableNowEnd ?? (yield* elapsedSeconds)
        return Math.max(from, latest)
      }),
    getBatch: (start, end) =>
      Effect.suspend(() => {
        // Spark's `INCORRECT_END_OFFSET` (RateStreamProviderSuite's "microbatch - end offset
        // error" and "overflow"), checked first so that an end past 2^53 still gets it.
        if (typeof end === "number" && Number.isInteger(end) && end > max) {
          return Effect.fail(
            new ConnectorError({
              connector: CONNECTOR,
              domain: "user",
              retryable: false,
              errorClass: "INCORRECT_END_OFFSET",
              message: `[INCORRECT_END_OFFSET] Max offset with ${options.rowsPerSecond} rowsPerSecond is ${maxSeconds(options.rowsPerSecond)}, but it's ${BigInt(end)} now.`
            })
          )
        }
        const startSeconds = asSeconds(start)
        const endSeconds = asSeconds(end)
        if (startSeconds === undefined || endSeconds === undefined) {
          return Effect.fail(
            offsetError(`Invalid rate source offsets ${JSON.stringify(start)} to ${JSON.stringify(end)}`)
          )
        }
        if (startSeconds > endSeconds) {
          return Effect.fail(offsetError(`startSeconds(${startSeconds}) > endSeconds(${endSeconds})`))
        }
        // A batch is materialized as one array: more values than an array holds fails typed,
        // not with a RangeError (Spark would stream them from its range iterator).
        const count =
          valueAtSecond(BigInt(endSeconds), options.rowsPerSecond, options.rampUpTimeSeconds) -
          valueAtSecond(BigInt(startSeconds), options.rowsPerSecond, options.rampUpTimeSeconds)
        if (count > MAX_BATCH_ROWS) {
          return Effect.fail(
            new ConnectorError({
              connector: CONNECTOR,
              domain: "user",
              retryable: false,
              message: `The rate source cannot produce ${count} rows in one micro-batch (at most ${MAX_BATCH_ROWS}): lower rowsPerSecond or trigger more often.`
            })
          )
        }
        // Spark: "Fix lastTimeMs for recovery", so a replayed batch's end is never revisited.
        const endMs = creationTimeMs + endSeconds * 1000
        if (lastTimeMs < endMs) lastTimeMs = endMs
        return Effect.succeed(rateBatchRows(options, creationTimeMs, startSeconds, endSeconds))
      }),
    commit: () => Effect.void,
    decodeOffset: (json) => {
      const s = asSeconds(json)
      return s === undefined
        ? Effect.fail(
            new ConnectorError({
              connector: CONNECTOR,
              domain: "external",
              retryable: false,
              message: `Invalid rate source offset ${JSON.stringify(json)} in the offset log: expected a whole number of seconds.`
            })
          )
        : Effect.succeed(s)
    },
    prepareForTriggerAvailableNow: () =>
      Effect.map(elapsedSeconds, (s) => {
        availableNowEnd = s
      }),
    stop: () => Effect.void
  }
}

/**
 * The `rate` source format: `spark.readStream.format("rate")` with the options `rowsPerSecond`
 * (default 1), `rampUpTime` (default `0s`) and `numPartitions` (default 1 here; Spark uses its
 * default parallelism). It refuses a user-specified schema, as Spark does.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { RateSource } from "./RateSource.ts"
 * const program = Effect.gen(function* () {
 *   const source = yield* RateSource.create({
 *     options: { rowsPerSecond: "10" }, schema: RateSource.schema(undefined, {}) as never,
 *     metadataPath: "/tmp/chk/sources/0", conf: new Map()
 *   })
 *   return yield* source.getBatch(0, 1) // ten rows, 100 ms apart
 * })
 * ```
 * @since 0.1.0
 */
export const RateSource: SourceFormat = {
  name: "rate",
  schema: (userSchema, options) => {
    if (userSchema !== undefined) return userSchemaUnsupported("RateStreamProvider")
    const parsed = parseRateOptions(options)
    if (parsed instanceof AnalysisError) return parsed
    return checkRampUp(parsed) ?? RateSchema
  },
  create: (ctx) =>
    Effect.gen(function* () {
      const parsed = parseRateOptions(ctx.options)
      if (parsed instanceof AnalysisError) return yield* parsed
      const rampUpError = checkRampUp(parsed)
      if (rampUpError !== undefined) return yield* rampUpError
      const creationTimeMs = yield* readOrCreateStartTime(ctx.metadataPath)
      return makeSource(parsed, creationTimeMs)
    })
}
