/**
 * The `nexmark` source: the Nexmark benchmark's auction events (`NexmarkGenerator.ts`) as a
 * stream, `spark.readStream.format("nexmark")`, and as a batch, `spark.read.format("nexmark")`
 * with `maxEvents` (so a query's streaming answer can be checked against the batch engine over
 * the same events).
 *
 * Offsets are event counts, logged as a JSON number: the batch `(start, end]` holds events
 * `start … end - 1`. An event is a function of its number and the options alone, so a restart
 * regenerates exactly the events of a logged batch (exactly once, like the `rate` source).
 *
 * With `eventsPerSecond`, event `n` becomes available once Effect's `Clock` reaches
 * `start + n / eventsPerSecond` seconds, where `start` is the clock time of the query's first run,
 * kept in the source's metadata folder (`<checkpoint>/sources/<i>/0`: `v1`, a newline and the
 * epoch milliseconds, as the `rate` source keeps its start). Without it, all `maxEvents` are
 * available at once. `maxOffsetsPerTrigger` caps a micro-batch, `Trigger.AvailableNow` reads up
 * to what is available when the query starts, in batches of at most that many events.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Clock, Effect, Schema } from "effect"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import type { BatchFormat, Options } from "../../core/Formats.ts"
import type { MicroBatchSource, Offset, ReadLimit, SourceFormat } from "../../core/Streaming.ts"
import { NexmarkGenerator } from "./NexmarkGenerator.ts"
import { type NexmarkOptions, NexmarkSchema, parseNexmarkOptions, userSchemaUnsupported } from "./NexmarkOptions.ts"

const CONNECTOR = "nexmark"

/** The version line of the start-time file. */
const VERSION = 1

/** The most events one materialized batch may hold (a JavaScript array's length limit). */
const MAX_BATCH_EVENTS = 4_294_967_295

/**
 * A logged offset: the number of events before it, a non-negative whole number.
 *
 * @since 0.1.0
 */
export const NexmarkOffsetSchema = Schema.Number.check(Schema.isInt(), Schema.isGreaterThanOrEqualTo(0))

const decodeOffset = Schema.decodeUnknownExit(NexmarkOffsetSchema)

/** An offset of this source, or `undefined`. */
const asCount = (o: Offset): number | undefined => {
  const r = decodeOffset(o)
  return r._tag === "Success" && Number.isSafeInteger(r.value) ? r.value : undefined
}

const offsetError = (message: string): ConnectorError =>
  new ConnectorError({ connector: CONNECTOR, domain: "internal", retryable: false, message })

const ioError = (what: string, file: string) => (cause: unknown) =>
  new ConnectorError({
    connector: CONNECTOR,
    domain: "external",
    retryable: true,
    message: `Could not ${what} the nexmark source's start time file ${file}: ${cause instanceof Error ? cause.message : String(cause)}`,
    cause
  })

const corrupt = (file: string, why: string): ConnectorError =>
  new ConnectorError({
    connector: CONNECTOR,
    domain: "external",
    retryable: false,
    message: `The nexmark source's start time file ${file} is malformed: ${why}. Delete the checkpoint folder to start over, or point the query at another checkpointLocation.`
  })

/** Parses `v1\n<epoch ms>`. */
const parseStartTime = (file: string, text: string): Effect.Effect<number, ConnectorError> => {
  const nl = text.indexOf("\n")
  if (!text.startsWith("v") || nl <= 0) return Effect.fail(corrupt(file, "failed to detect the log file version line"))
  const version = text.slice(1, nl)
  if (!/^\d+$/.test(version)) return Effect.fail(corrupt(file, `invalid log file version line "${text.slice(0, nl)}"`))
  if (Number(version) > VERSION) {
    return Effect.fail(
      new ConnectorError({
        connector: CONNECTOR,
        domain: "external",
        retryable: false,
        message: `The nexmark source's start time file ${file} has log version v${version}, but this version of tributary supports up to v${VERSION}. Upgrade tributary to read it.`
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

/**
 * The number of events available `elapsedMs` after the start at `eventsPerSecond`, capped at
 * `maxEvents`: event `n` is due at `n / eventsPerSecond` seconds.
 *
 * @example
 * ```ts
 * import { availableEvents } from "./NexmarkSource.ts"
 * availableEvents(1500, 10, undefined) // 15
 * availableEvents(1500, 10, 12) // 12
 * ```
 * @since 0.1.0
 */
export const availableEvents = (elapsedMs: number, eventsPerSecond: number, maxEvents: number | undefined): number => {
  const due = elapsedMs <= 0 ? 0 : Math.floor((elapsedMs * eventsPerSecond) / 1000)
  const n = Math.min(due, Number.MAX_SAFE_INTEGER)
  return maxEvents === undefined ? n : Math.min(n, maxEvents)
}

/** The end of a batch from `start` under `limit`, given `available` events in all. */
const limitedEnd = (start: number, available: number, limit: ReadLimit): number => {
  const cap = maxRowsOf(limit)
  const end = cap === undefined ? available : Math.min(available, start + cap)
  return Math.max(start, end)
}

const maxRowsOf = (limit: ReadLimit): number | undefined => {
  switch (limit._tag) {
    case "MaxRows":
      return limit.maxRows
    case "Composite": {
      let cap: number | undefined
      for (const l of limit.limits) {
        const c = maxRowsOf(l)
        if (c !== undefined) cap = cap === undefined ? c : Math.min(cap, c)
      }
      return cap
    }
    case "AllAvailable":
    case "MaxFiles":
    case "MaxBytes":
    case "MinRows":
      return undefined
  }
}

const describe = (o: NexmarkOptions): string =>
  `NexmarkSource[eventsPerSecond=${o.eventsPerSecond ?? "unlimited"}, maxEvents=${o.maxEvents ?? "unbounded"}, seed=${o.generator.seed}, firstEventRate=${o.generator.firstEventRate}]`

const makeSource = (options: NexmarkOptions, startMs: number | undefined): MicroBatchSource => {
  const generator = new NexmarkGenerator(options.generator)
  const { eventsPerSecond, maxEvents } = options
  // The clock never moves the offsets back (the `rate` source's `lastTimeMs`).
  let lastTimeMs = startMs ?? 0
  let availableNowEnd: number | undefined
  const available: Effect.Effect<number> =
    eventsPerSecond === undefined || startMs === undefined
      ? Effect.succeed(maxEvents ?? 0)
      : Effect.map(Clock.currentTimeMillis, (now) => {
          if (lastTimeMs < now) lastTimeMs = now
          return availableEvents(lastTimeMs - startMs, eventsPerSecond, maxEvents)
        })
  const readLimit: ReadLimit =
    options.maxOffsetsPerTrigger === undefined
      ? { _tag: "AllAvailable" }
      : { _tag: "MaxRows", maxRows: options.maxOffsetsPerTrigger }
  return {
    description: describe(options),
    schema: NexmarkSchema,
    initialOffset: () => Effect.succeed(0),
    defaultReadLimit: () => readLimit,
    latestOffset: (start, limit) =>
      Effect.gen(function* () {
        const from = asCount(start)
        if (from === undefined) return yield* offsetError(`Invalid nexmark source offset ${JSON.stringify(start)}`)
        const upTo = availableNowEnd ?? (yield* available)
        return limitedEnd(from, upTo, limit)
      }),
    reportLatestOffset: () => availableNowEnd,
    getBatch: (start, end) =>
      Effect.suspend(() => {
        const from = asCount(start)
        const to = asCount(end)
        if (from === undefined || to === undefined) {
          return Effect.fail(
            offsetError(`Invalid nexmark source offsets ${JSON.stringify(start)} to ${JSON.stringify(end)}`)
          )
        }
        if (from > to) return Effect.fail(offsetError(`The nexmark batch starts at ${from}, after its end ${to}`))
        if (to - from > MAX_BATCH_EVENTS) {
          return Effect.fail(
            new ConnectorError({
              connector: CONNECTOR,
              domain: "user",
              retryable: false,
              message: `The nexmark source cannot produce ${to - from} events in one micro-batch (at most ${MAX_BATCH_EVENTS}): set maxOffsetsPerTrigger, or trigger more often.`
            })
          )
        }
        // A replayed batch's end is never offered again, whatever the clock says (the rate source's recovery fix).
        if (eventsPerSecond !== undefined && startMs !== undefined) {
          const endMs = startMs + Math.ceil((to * 1000) / eventsPerSecond)
          if (lastTimeMs < endMs) lastTimeMs = endMs
        }
        return Effect.succeed(generator.rows(from, to))
      }),
    commit: () => Effect.void,
    decodeOffset: (json) => {
      const n = asCount(json)
      return n === undefined
        ? Effect.fail(
            new ConnectorError({
              connector: CONNECTOR,
              domain: "external",
              retryable: false,
              message: `Invalid nexmark source offset ${JSON.stringify(json)} in the offset log: expected a whole number of events.`
            })
          )
        : Effect.succeed(n)
    },
    prepareForTriggerAvailableNow: () =>
      Effect.map(available, (n) => {
        availableNowEnd = n
      }),
    stop: () => Effect.void
  }
}

const parse = (options: Options): Effect.Effect<NexmarkOptions, AnalysisError> => {
  const parsed = parseNexmarkOptions(options)
  return parsed instanceof AnalysisError ? Effect.fail(parsed) : Effect.succeed(parsed)
}

/**
 * The `nexmark` streaming source format: `spark.readStream.format("nexmark")` with
 * `NexmarkOptions.ts`'s options. It refuses a user-specified schema, as the `rate` source does.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { F, Session, Trigger } from "tributary-streaming"
 *
 * const program = Effect.gen(function* () {
 *   const spark = yield* Session
 *   const bids = (yield* spark.readStream.format("nexmark").option("maxEvents", 10_000).load())
 *     .where(F.col("event_type").eq(2))
 *     .select(F.col("bid.auction").as("auction"), F.col("bid.price").as("price"))
 *   const query = yield* bids.writeStream.format("noop").trigger(Trigger.AvailableNow()).start()
 *   yield* query.awaitTermination()
 * })
 * ```
 * @since 0.1.0
 */
export const NexmarkSource: SourceFormat = {
  name: CONNECTOR,
  schema: (userSchema, options) => {
    if (userSchema !== undefined) return userSchemaUnsupported()
    const parsed = parseNexmarkOptions(options)
    return parsed instanceof AnalysisError ? parsed : NexmarkSchema
  },
  create: (ctx) =>
    Effect.gen(function* () {
      const options = yield* parse(ctx.options)
      const startMs = options.eventsPerSecond === undefined ? undefined : yield* readOrCreateStartTime(ctx.metadataPath)
      return makeSource(options, startMs)
    })
}

const batchNeedsMaxEvents = (): AnalysisError =>
  new AnalysisError({
    reason: "InvalidArgument",
    message:
      'The nexmark batch source needs the option maxEvents (how many events to generate), e.g. spark.read.format("nexmark").option("maxEvents", 100000).load().'
  })

/**
 * The `nexmark` batch format: `spark.read.format("nexmark").option("maxEvents", n).load()` gives
 * events `0 … n - 1`, the same events a stream with the same options produces.
 *
 * @since 0.1.0
 */
export const NexmarkBatch: BatchFormat = {
  name: CONNECTOR,
  resolveSchema: (paths, userSchema, options) =>
    Effect.gen(function* () {
      if (paths.length > 0) {
        return yield* new AnalysisError({
          reason: "InvalidArgument",
          message: `The nexmark source generates its events and reads no files, but load() was given ${paths.length === 1 ? "a path" : "paths"}: ${paths.join(", ")}.`
        })
      }
      if (userSchema !== undefined) return yield* userSchemaUnsupported()
      const parsed = yield* parse(options)
      if (parsed.maxEvents === undefined) return yield* batchNeedsMaxEvents()
      return NexmarkSchema
    }),
  read: (_paths, _schema, options) =>
    Effect.suspend(() => {
      const parsed = parseNexmarkOptions(options)
      if (parsed instanceof AnalysisError || parsed.maxEvents === undefined) {
        return Effect.fail(
          new ConnectorError({
            connector: CONNECTOR,
            domain: "user",
            retryable: false,
            message: parsed instanceof AnalysisError ? parsed.message : batchNeedsMaxEvents().message
          })
        )
      }
      if (parsed.maxEvents > MAX_BATCH_EVENTS) {
        return Effect.fail(
          new ConnectorError({
            connector: CONNECTOR,
            domain: "user",
            retryable: false,
            message: `The nexmark batch source cannot hold ${parsed.maxEvents} events (at most ${MAX_BATCH_EVENTS}).`
          })
        )
      }
      return Effect.succeed(new NexmarkGenerator(parsed.generator).rows(0, parsed.maxEvents))
    })
}
