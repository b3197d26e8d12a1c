/**
 * The `socket` source (Spark's `TextSocketSourceProvider` / `TextSocketMicroBatchStream`): reads
 * UTF-8 text lines from a TCP server, one row per line, in a column `value` (plus `timestamp`,
 * the time the line arrived, with `includeTimestamp`).
 *
 * For demos and tests only, as in Spark: the lines live in memory until their batch commits and
 * the server cannot be asked for them again, so a restart cannot replay a batch that was in
 * flight and lines sent while no query was connected are lost. There is no exactly-once here.
 *
 * Offsets are Spark's `LongOffset`: the index of the last line received, `-1` before the first.
 * Timestamps come from Effect's `Clock` (the test clock drives them in tests).
 *
 * @example
 * ```ts
 * const lines = spark.readStream.format("socket").option("host", "localhost").option("port", 9999).load()
 * const counts = lines.select(F.explode(F.split(F.col("value"), " ")).as("word")).groupBy("word").count()
 * ```
 * @since 0.1.0
 */
import * as net from "node:net"
import { Clock, Effect } from "effect"
import * as T from "../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import { type Options, option } from "../../core/Formats.ts"
import type { InternalRow } from "../../core/Row.ts"
import type { MicroBatchSource, SourceFormat } from "../../core/Streaming.ts"

/** Spark's `TextSocketReader.SCHEMA_REGULAR` and `SCHEMA_TIMESTAMP`. */
export const socketSchema = (includeTimestamp: boolean): T.StructType =>
  T.struct([
    T.field("value", T.StringType, true),
    ...(includeTimestamp ? [T.field("timestamp", T.TimestampType, true)] : [])
  ])

/** The socket source's options, checked as Spark's `TextSocketSourceProvider.checkParameters`. */
export interface SocketOptions {
  readonly host: string
  readonly port: number
  readonly includeTimestamp: boolean
}

const invalid = (message: string) => new AnalysisError({ reason: "InvalidArgument", message })

/**
 * Parses and checks the options, with Spark's messages.
 *
 * @since 0.1.0
 */
export const parseSocketOptions = (options: Options): SocketOptions | AnalysisError => {
  const host = option(options, "host")
  if (host === undefined) return invalid('Set a host to read from with option("host", ...).')
  const rawPort = option(options, "port")
  if (rawPort === undefined) return invalid('Set a port to read from with option("port", ...).')
  const port = Number(rawPort.trim())
  if (rawPort.trim() === "" || !Number.isInteger(port) || port < 0 || port > 65535) {
    return invalid(`Invalid value '${rawPort}' for option 'port': a TCP port number (0 to 65535) is expected.`)
  }
  const rawTs = (option(options, "includeTimestamp") ?? "false").trim().toLowerCase()
  if (rawTs !== "true" && rawTs !== "false") return invalid('includeTimestamp must be set to either "true" or "false".')
  return { host, port, includeTimestamp: rawTs === "true" }
}

const decodeLongOffset = (json: unknown): Effect.Effect<number, ConnectorError> =>
  typeof json === "number" && Number.isSafeInteger(json) && json >= -1
    ? Effect.succeed(json)
    : Effect.fail(
        new ConnectorError({
          connector: "socket",
          domain: "internal",
          retryable: false,
          message: `The offset log holds ${JSON.stringify(json)} for a socket source, which is not a line index (an integer >= -1).`
        })
      )

/**
 * Buffers lines until they are committed. The connection is made when the query first asks the
 * source for an offset, in the query's own run, as Spark's `TextSocketMicroBatchStream` connects
 * when the query thread builds it: a server that is not there (or that accepts only one client,
 * like netcat) fails the query, not `start()` (TextSocketStreamSuite's "verify ServerThread only
 * accepts the first connection").
 */
const connect = (opts: SocketOptions): Effect.Effect<MicroBatchSource, ConnectorError> =>
  Effect.gen(function* () {
    const clock = yield* Clock.Clock
    // Lines after the last committed offset: lines[i] has index `committed + 1 + i`.
    let lines: Array<InternalRow> = []
    let committed = -1
    let current = -1
    let closedReason: string | undefined
    let waiters: Array<() => void> = []
    let socket: net.Socket | undefined
    let stopped = false
    // The one connection attempt, shared by every call that needs it.
    let connection: Promise<ConnectorError | undefined> | undefined
    const wake = () => {
      const ws = waiters
      waiters = []
      for (const w of ws) w()
    }
    let partial = ""
    const receive = (text: string) => {
      const parts = (partial + text).split("\n")
      partial = parts.pop() ?? ""
      for (const raw of parts) {
        // Java's BufferedReader.readLine ends a line at \n, \r or \r\n.
        const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw
        current++
        lines.push(opts.includeTimestamp ? [line, clock.currentTimeMillisUnsafe()] : [line])
      }
      if (parts.length > 0) wake()
    }
    const open = (): Promise<ConnectorError | undefined> =>
      new Promise((resolve) => {
        const s = net.createConnection({ host: opts.host, port: opts.port })
        const onError = (e: Error) => {
          closedReason = e.message
          wake()
          resolve(
            new ConnectorError({
              connector: "socket",
              domain: "external",
              retryable: true,
              message: `Cannot connect to ${opts.host}:${opts.port}: ${e.message}. Start the server before the query.`,
              cause: e
            })
          )
        }
        s.once("error", onError)
        s.once("connect", () => {
          s.off("error", onError)
          if (stopped) {
            s.destroy()
            resolve(undefined)
            return
          }
          socket = s
          s.setEncoding("utf8")
          s.on("data", receive)
          s.on("error", (e) => {
            closedReason = e.message
            wake()
          })
          s.on("close", () => {
            closedReason ??= "closed by the server"
            wake()
          })
          resolve(undefined)
        })
      })
    const connected: Effect.Effect<void, ConnectorError> = Effect.suspend(() => {
      connection ??= open()
      const c = connection
      return Effect.flatMap(
        Effect.promise(() => c),
        (e) => (e === undefined ? Effect.void : Effect.fail(e))
      )
    })
    const source: MicroBatchSource = {
      description: `TextSocketV2[host: ${opts.host}, port: ${opts.port}]`,
      schema: socketSchema(opts.includeTimestamp),
      initialOffset: () => Effect.as(connected, -1),
      defaultReadLimit: () => ({ _tag: "AllAvailable" }),
      latestOffset: () => Effect.flatMap(connected, () => Effect.sync(() => current)),
      getBatch: (start, end) =>
        Effect.suspend(() => {
          const from = (start as number) + 1
          const to = end as number
          if (from <= committed) {
            return Effect.fail(
              new ConnectorError({
                connector: "socket",
                domain: "user",
                retryable: false,
                message: `The socket source cannot replay lines ${from} to ${to}: they were received before this run and are gone (a socket cannot be read again). Use a replayable source, or start from a new checkpoint.`
              })
            )
          }
          return Effect.succeed(lines.slice(from - committed - 1, to - committed))
        }),
      commit: (end) =>
        Effect.sync(() => {
          const n = (end as number) - committed
          if (n > 0) {
            lines = lines.slice(n)
            committed = end as number
          }
        }),
      decodeOffset: (json) =>
        Effect.map(decodeLongOffset(json), (offset) => {
          // A restart: nothing before this offset can be had again, so count from there.
          if (offset > current) {
            current = offset
            committed = offset
            lines = []
          }
          return offset
        }),
      awaitData: () => {
        if (closedReason !== undefined) return Effect.never
        // Captured now (before the engine asks for the offset again), as the contract wants.
        const p = new Promise<void>((resolve) => waiters.push(resolve))
        return Effect.promise(() => p)
      },
      stop: () =>
        Effect.sync(() => {
          stopped = true
          if (socket !== undefined) {
            socket.removeAllListeners("data")
            socket.destroy()
          }
          wake()
        })
    }
    return source
  })

/**
 * The `socket` streaming source format.
 *
 * @since 0.1.0
 */
export const SocketSource: SourceFormat = {
  name: "socket",
  schema: (userSchema, options) => {
    // Spark's `_LEGACY_ERROR_TEMP_2242` from `TextSocketSourceProvider` (TextSocketStreamSuite's
    // "user-specified schema given"): the rows are always `value` (and `timestamp`).
    if (userSchema !== undefined) {
      return new AnalysisError({
        reason: "UnsupportedOperation",
        errorClass: "_LEGACY_ERROR_TEMP_2242",
        message: "TextSocketSourceProvider source does not support user-specified schema."
      })
    }
    const opts = parseSocketOptions(options)
    return opts instanceof AnalysisError ? opts : socketSchema(opts.includeTimestamp)
  },
  create: (ctx) => {
    const opts = parseSocketOptions(ctx.options)
    return opts instanceof AnalysisError ? Effect.fail(opts) : connect(opts)
  }
}
