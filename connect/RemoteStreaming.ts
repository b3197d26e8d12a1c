/**
 * Streaming queries on a remote Spark through Spark Connect: `writeStream…start()` sends a
 * `WriteStreamOperationStart` command, and the returned `StreamingQuery` handle and
 * `spark.streams` talk to the query through `StreamingQueryCommand` and
 * `StreamingQueryManagerCommand`, as pyspark's Connect client does
 * (`pyspark/sql/connect/streaming/query.py`, `readwriter.py`).
 *
 * - Progress reports arrive as Spark's JSON and are decoded (`connect/Progress.ts`) into the same
 *   `StreamingQueryProgress` the local engine reports.
 * - A failed query's error is Spark's: `awaitTermination`, `processAllAvailable` and
 *   `awaitAnyTermination` fail with a `StreamingQueryError` built from the query's `exception`
 *   (Spark's message without the Java type prefix, as pyspark shows it; its cause a
 *   `ConnectorError` carrying Spark's error class and the JVM stack trace).
 * - Long waits (`awaitTermination()` without timeout, `processAllAvailable`,
 *   `awaitAnyTermination()`) are single server calls; interrupting the fiber cancels the call.
 * - JavaScript `foreachBatch` / `foreach` functions cannot run on the server: `startQuery`
 *   refuses them (and an invalid trigger) before anything is sent.
 *
 * The `StreamingQuery` interface has no error channel for its reads (`isActive`, `status`,
 * `lastProgress`, `recentProgress`, `stop`, `exception`, `explain`): a failed call to the server
 * there is a defect carrying the `ConnectorError`/`AnalysisError`.
 *
 * @since 0.4.0
 */
import { create } from "@bufbuild/protobuf"
import { Effect, Result } from "effect"
import { AnalysisError, ConnectorError, StreamingQueryError } from "../core/Errors.ts"
import type { Trigger } from "../core/Trigger.ts"
import type { RemoteError, RemoteStreams, RemoteWriteSpec } from "../structured/contracts/Remote.ts"
import type { StreamingQuery } from "../structured/contracts/StreamingQuery.ts"
import type { QueryStartedEvent } from "../structured/contracts/StreamingQueryListener.ts"
import type { StreamingQueryProgress, StreamingQueryStatus } from "../structured/contracts/StreamingQueryProgress.ts"
import type { SparkConnectClient } from "./Client.ts"
import { type ExecutePlanResponse, type Plan, PlanSchema } from "./gen/spark/connect/base_pb.ts"
import {
  type Command,
  CommandSchema,
  type StreamingQueryCommand,
  StreamingQueryCommand_AwaitTerminationCommandSchema,
  StreamingQueryCommand_ExplainCommandSchema,
  type StreamingQueryCommandResult,
  StreamingQueryCommandSchema,
  type StreamingQueryCommandResult_ExceptionResult,
  type StreamingQueryManagerCommand,
  StreamingQueryManagerCommand_AwaitAnyTerminationCommandSchema,
  type StreamingQueryManagerCommandResult,
  type StreamingQueryManagerCommandResult_StreamingQueryInstance,
  StreamingQueryManagerCommandSchema,
  type WriteStreamOperationStart,
  type WriteStreamOperationStartResult,
  WriteStreamOperationStartSchema
} from "./gen/spark/connect/commands_pb.ts"
import type { Relation } from "./gen/spark/connect/relations_pb.ts"
import { decodeProgress } from "./Progress.ts"

/** Spark Connect's `StreamingQueryCommandResult.StatusResult`: the status and whether the query is active. */
export interface RemoteStreamingQueryStatus extends StreamingQueryStatus {
  readonly isActive: boolean
}

/** A `StreamingQuery` running on a Spark Connect server; its `status` also says whether it is active. */
export interface RemoteStreamingQuery extends StreamingQuery {
  readonly status: () => Effect.Effect<RemoteStreamingQueryStatus>
  /** Spark's `QueryStartedEvent` of this start (`query_started_event_json`), for the session's listeners. */
  readonly startedEvent?: QueryStartedEvent | undefined
}

/** Spark's `QueryStartedEvent` JSON (`{ id, runId, name, timestamp, … }`), or `undefined` when absent or unreadable. */
const startedEventOf = (json: string | undefined): QueryStartedEvent | undefined => {
  if (json === undefined || json === "") return undefined
  try {
    const o = JSON.parse(json) as { id?: unknown; runId?: unknown; name?: unknown; timestamp?: unknown }
    if (typeof o.id !== "string" || typeof o.runId !== "string") return undefined
    return {
      id: o.id,
      runId: o.runId,
      name: typeof o.name === "string" ? o.name : null,
      timestamp: typeof o.timestamp === "string" ? o.timestamp : ""
    }
  } catch {
    return undefined
  }
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

const commandPlan = (commandType: Command["commandType"]): Plan =>
  create(PlanSchema, { opType: { case: "command", value: create(CommandSchema, { commandType }) } })

const noResult = (what: string): ConnectorError =>
  new ConnectorError({
    connector: "spark-connect",
    domain: "external",
    retryable: false,
    message: `Spark Connect ${what}: the server's response carried no result.`
  })

/** The first response that `select` takes (a command's result of the kind asked for). */
const pick = <A>(
  responses: ReadonlyArray<ExecutePlanResponse>,
  select: (r: ExecutePlanResponse["responseType"]) => A | undefined,
  what: string
): Result.Result<A, ConnectorError> => {
  for (const r of responses) {
    const a = select(r.responseType)
    if (a !== undefined) return Result.succeed(a)
  }
  return Result.fail(noResult(what))
}

// ---------------------------------------------------------------------------------------------
// Starting a query
// ---------------------------------------------------------------------------------------------

const unsupported = (message: string): AnalysisError => new AnalysisError({ reason: "UnsupportedOperation", message })

/**
 * An interval as Spark's interval string: whole milliseconds as "N milliseconds", otherwise in
 * microseconds (Spark's `CalendarInterval` keeps microseconds).
 */
const intervalString = (ms: number): string =>
  Number.isInteger(ms) ? `${ms} milliseconds` : `${Math.round(ms * 1000)} microseconds`

/** The trigger oneof of `WriteStreamOperationStart`, as pyspark's `DataStreamWriter.trigger` sets it. */
const triggerOf = (trigger: Trigger): WriteStreamOperationStart["trigger"] => {
  switch (trigger._tag) {
    case "ProcessingTime":
      // Spark's default trigger is ProcessingTime(0): pyspark sends none, and so do we.
      return trigger.intervalMs === 0
        ? { case: undefined }
        : { case: "processingTimeInterval", value: intervalString(trigger.intervalMs) }
    case "Once":
      return { case: "once", value: true }
    case "AvailableNow":
      return { case: "availableNow", value: true }
    case "Continuous":
      return { case: "continuousCheckpointInterval", value: intervalString(trigger.intervalMs) }
  }
}

/** Why `spec` cannot be sent, checked before anything goes to the server. */
const refusal = (spec: RemoteWriteSpec): AnalysisError | undefined => {
  if (spec.hasForeachBatch) {
    return unsupported(
      "foreachBatch with a JavaScript function cannot run on a Spark Connect server: write the batches with a sink Spark has (parquet, json, kafka, memory, …), or run the query on a local session."
    )
  }
  if (spec.hasForeach) {
    return unsupported(
      "foreach with a JavaScript writer cannot run on a Spark Connect server: write the rows with a sink Spark has (parquet, json, kafka, memory, …), or run the query on a local session."
    )
  }
  const t = spec.trigger
  if ((t._tag === "ProcessingTime" || t._tag === "Continuous") && !(t.intervalMs >= 0 && t.intervalMs < Infinity)) {
    return new AnalysisError({
      reason: "InvalidArgument",
      message: 'The trigger interval cannot be negative or invalid: give a duration like "1 second".'
    })
  }
  return undefined
}

/** The `WriteStreamOperationStart` command for `input` and `spec` (pyspark's `DataStreamWriter._start_internal`). */
export const writeStreamCommand = (input: Relation, spec: RemoteWriteSpec): WriteStreamOperationStart => {
  const options: Record<string, string> = {}
  let path: string | undefined
  for (const [k, v] of Object.entries(spec.options)) {
    // pyspark's `start(path)` sets the `path` field, which the server passes to `start(path)`.
    if (k.toLowerCase() === "path") path = v
    else options[k] = v
  }
  return create(WriteStreamOperationStartSchema, {
    input,
    format: spec.format ?? "",
    options,
    partitioningColumnNames: [...spec.partitionColumns],
    trigger: triggerOf(spec.trigger),
    outputMode: spec.outputMode,
    queryName: spec.queryName ?? "",
    sinkDestination: path === undefined || path === "" ? { case: undefined } : { case: "path", value: path }
  })
}

/**
 * Starts a streaming query of `input` on the server (`WriteStreamOperationStart`) and returns
 * its handle. Refuses JavaScript `foreachBatch`/`foreach` and an invalid trigger interval with
 * an `AnalysisError` before anything is sent; Spark's own refusals (an unsupported output mode,
 * a memory sink without a query name, …) come back as Spark's `AnalysisError`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Trigger } from "../core/Trigger.ts"
 * import { startQuery } from "./RemoteStreaming.ts"
 * declare const client: import("./Client.ts").SparkConnectClient
 * declare const input: import("./gen/spark/connect/relations_pb.ts").Relation
 * const program = Effect.gen(function* () {
 *   const q = yield* startQuery(client, input, {
 *     format: "memory", outputMode: "append", trigger: Trigger.AvailableNow(), queryName: "out",
 *     options: {}, partitionColumns: [], hasForeachBatch: false, hasForeach: false
 *   })
 *   yield* q.awaitTermination()
 * })
 * ```
 * @since 0.4.0
 */
export const startQuery = (
  client: SparkConnectClient,
  input: Relation,
  spec: RemoteWriteSpec
): Effect.Effect<RemoteStreamingQuery, RemoteError> =>
  Effect.suspend(() => {
    const refused = refusal(spec)
    if (refused !== undefined) return Effect.fail(refused)
    const plan = commandPlan({ case: "writeStreamOperationStart", value: writeStreamCommand(input, spec) })
    return client.execute(plan).pipe(
      Effect.flatMap((responses) =>
        Effect.fromResult(
          pick(
            responses,
            (r) => (r.case === "writeStreamOperationStartResult" ? r.value : undefined),
            "WriteStreamOperationStart"
          )
        )
      ),
      Effect.flatMap((result: WriteStreamOperationStartResult) =>
        result.queryId === undefined
          ? Effect.fail(noResult("WriteStreamOperationStart"))
          : Effect.succeed(
              Object.assign(
                makeQuery(client, result.queryId.id, result.queryId.runId, result.name === "" ? null : result.name),
                { startedEvent: startedEventOf(result.queryStartedEventJson) }
              )
            )
      )
    )
  })

// ---------------------------------------------------------------------------------------------
// The query handle
// ---------------------------------------------------------------------------------------------

/** Drops the Java type of `Throwable.toString` ("org.…StreamingQueryException: msg"), as pyspark does. */
const withoutJavaType = (s: string): string => {
  const m = /^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+: /.exec(s)
  return m === null ? s : s.slice(m[0].length)
}

/** The query's failure from Spark's `ExceptionResult` (pyspark's `CapturedStreamingQueryException`). */
const errorFromException = (
  id: string,
  runId: string,
  e: StreamingQueryCommandResult_ExceptionResult
): StreamingQueryError | null => {
  if (e.exceptionMessage === undefined) return null
  // Spark's text (its failure, then the query's debug string: offsets, state, logical plan),
  // introduced as the local engine introduces a failure.
  const spark = withoutJavaType(e.exceptionMessage)
  const message = `Query [id = ${id}, runId = ${runId}] terminated with exception: ${spark}`
  const errorClass = e.errorClass === undefined || e.errorClass === "" ? undefined : e.errorClass
  return new StreamingQueryError({
    message,
    queryId: id,
    runId,
    // Spark's exception does not say which batch failed.
    batchId: undefined,
    cause: new ConnectorError({
      connector: "spark-connect",
      domain: "user",
      retryable: false,
      message: e.stackTrace === undefined ? spark : `${spark}\n\nJVM stacktrace:\n${e.stackTrace}`,
      ...(errorClass === undefined ? {} : { errorClass })
    })
  })
}

/** A failed wait when the query's own exception is not there: the call's error, as the query's. */
const errorFromCall = (id: string, runId: string, e: RemoteError): StreamingQueryError =>
  new StreamingQueryError({ message: e.message, queryId: id, runId, batchId: undefined, cause: e })

/** A timeout for Spark's `awaitTermination(timeoutMs)`, which wants a positive one. */
const timeoutOf = (timeoutMs: number | undefined): bigint | undefined => {
  if (timeoutMs === undefined || timeoutMs === Number.POSITIVE_INFINITY) return undefined
  const t = Number.isNaN(timeoutMs) ? 0 : Math.ceil(timeoutMs)
  // int64 on the wire; a longer wait than 2^53 ms is as good as none.
  return BigInt(Math.min(Number.MAX_SAFE_INTEGER, Math.max(1, t)))
}

const makeQuery = (
  client: SparkConnectClient,
  id: string,
  runId: string,
  name: string | null
): RemoteStreamingQuery => {
  const queryId = { id, runId }
  const run = (command: StreamingQueryCommand["command"]): Effect.Effect<StreamingQueryCommandResult, RemoteError> =>
    client
      .execute(
        commandPlan({
          case: "streamingQueryCommand",
          value: create(StreamingQueryCommandSchema, { queryId, command })
        })
      )
      .pipe(
        Effect.flatMap((responses) =>
          Effect.fromResult(
            pick(
              responses,
              (r) => (r.case === "streamingQueryCommandResult" ? r.value : undefined),
              `StreamingQueryCommand ${command.case}`
            )
          )
        )
      )

  const fetchException = run({ case: "exception", value: true }).pipe(
    Effect.map((r) => (r.resultType.case === "exception" ? errorFromException(id, runId, r.resultType.value) : null))
  )

  /** A wait that failed: the query's own error when it failed, else the call's. */
  const failedWait = (e: RemoteError): Effect.Effect<never, StreamingQueryError> =>
    fetchException.pipe(
      Effect.catch(() => Effect.succeed(null)),
      Effect.flatMap((q) => Effect.fail(q ?? errorFromCall(id, runId, e)))
    )

  const progress = (last: boolean): Effect.Effect<ReadonlyArray<StreamingQueryProgress>, RemoteError> =>
    run(last ? { case: "lastProgress", value: true } : { case: "recentProgress", value: true }).pipe(
      Effect.flatMap((r) => {
        const jsons = r.resultType.case === "recentProgress" ? r.resultType.value.recentProgressJson : []
        const out: Array<StreamingQueryProgress> = []
        for (const j of jsons) {
          const p = decodeProgress(j)
          if (Result.isFailure(p)) return Effect.fail(p.failure)
          out.push(p.success)
        }
        return Effect.succeed(out)
      })
    )

  const status = run({ case: "status", value: true }).pipe(
    Effect.flatMap((r) =>
      r.resultType.case === "status"
        ? Effect.succeed<RemoteStreamingQueryStatus>({
            message: r.resultType.value.statusMessage,
            isDataAvailable: r.resultType.value.isDataAvailable,
            isTriggerActive: r.resultType.value.isTriggerActive,
            isActive: r.resultType.value.isActive
          })
        : Effect.fail(noResult("StreamingQueryCommand status"))
    )
  )

  return {
    id,
    runId,
    name,
    isActive: () =>
      status.pipe(
        Effect.map((s) => s.isActive),
        Effect.orDie
      ),
    status: () => Effect.orDie(status),
    lastProgress: () =>
      progress(true).pipe(
        Effect.map((ps) => ps[ps.length - 1] ?? null),
        Effect.orDie
      ),
    recentProgress: () => Effect.orDie(progress(false)),
    processAllAvailable: () =>
      run({ case: "processAllAvailable", value: true }).pipe(Effect.asVoid, Effect.catch(failedWait)),
    awaitTermination: (timeoutMs?: number) => {
      const t = timeoutOf(timeoutMs)
      const value = create(StreamingQueryCommand_AwaitTerminationCommandSchema, t === undefined ? {} : { timeoutMs: t })
      return run({ case: "awaitTermination", value }).pipe(
        Effect.map((r) => (r.resultType.case === "awaitTermination" ? r.resultType.value.terminated : true)),
        Effect.catch(failedWait)
      )
    },
    stop: () => run({ case: "stop", value: true }).pipe(Effect.asVoid, Effect.orDie),
    exception: () => Effect.orDie(fetchException),
    explain: (extended = false) =>
      run({ case: "explain", value: create(StreamingQueryCommand_ExplainCommandSchema, { extended }) }).pipe(
        Effect.map((r) => (r.resultType.case === "explain" ? r.resultType.value.result : "")),
        Effect.orDie
      )
  }
}

// ---------------------------------------------------------------------------------------------
// spark.streams
// ---------------------------------------------------------------------------------------------

/** Spark's `StreamingQueryException` names its query: "Query [id = …, runId = …] terminated with exception". */
const QUERY_IDS = /\[id = ([0-9a-f-]{36}), runId = ([0-9a-f-]{36})\]/

/**
 * `spark.streams` of the remote session (`StreamingQueryManagerCommand`). Handles returned by
 * `active` and `get` are the same kind as `startQuery`'s.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { makeStreams } from "./RemoteStreaming.ts"
 * declare const client: import("./Client.ts").SparkConnectClient
 * const names = makeStreams(client).active().pipe(Effect.map((qs) => qs.map((q) => q.name)))
 * ```
 * @since 0.4.0
 */
export const makeStreams = (client: SparkConnectClient): RemoteStreams => {
  const run = (
    command: StreamingQueryManagerCommand["command"]
  ): Effect.Effect<StreamingQueryManagerCommandResult, RemoteError> =>
    client
      .execute(
        commandPlan({
          case: "streamingQueryManagerCommand",
          value: create(StreamingQueryManagerCommandSchema, { command })
        })
      )
      .pipe(
        Effect.flatMap((responses) =>
          Effect.fromResult(
            pick(
              responses,
              (r) => (r.case === "streamingQueryManagerCommandResult" ? r.value : undefined),
              `StreamingQueryManagerCommand ${command.case}`
            )
          )
        )
      )

  const handle = (q: StreamingQueryManagerCommandResult_StreamingQueryInstance): RemoteStreamingQuery | undefined =>
    q.id === undefined ? undefined : makeQuery(client, q.id.id, q.id.runId, q.name ?? null)

  /** `awaitAnyTermination` failed: the failed query's own error when the message names it. */
  const failedAny = (e: RemoteError): Effect.Effect<never, StreamingQueryError> => {
    const m = QUERY_IDS.exec(e.message)
    if (m === null) return Effect.fail(errorFromCall("", "", e))
    const [, id, runId] = m
    return makeQuery(client, id, runId, null)
      .exception()
      .pipe(
        Effect.catchCause(() => Effect.succeed(null)),
        Effect.flatMap((q) => Effect.fail(q ?? errorFromCall(id, runId, e)))
      )
  }

  return {
    active: () =>
      run({ case: "active", value: true }).pipe(
        Effect.map((r) => {
          if (r.resultType.case !== "active") return []
          const out: Array<RemoteStreamingQuery> = []
          for (const q of r.resultType.value.activeQueries) {
            const h = handle(q)
            if (h !== undefined) out.push(h)
          }
          return out
        })
      ),
    get: (id: string) =>
      run({ case: "getQuery", value: id }).pipe(
        Effect.map((r) => (r.resultType.case === "query" ? handle(r.resultType.value) : undefined))
      ),
    awaitAnyTermination: (timeoutMs?: number) => {
      const t = timeoutOf(timeoutMs)
      const value = create(
        StreamingQueryManagerCommand_AwaitAnyTerminationCommandSchema,
        t === undefined ? {} : { timeoutMs: t }
      )
      return run({ case: "awaitAnyTermination", value }).pipe(
        Effect.map((r) => (r.resultType.case === "awaitAnyTermination" ? r.resultType.value.terminated : true)),
        Effect.catch(failedAny)
      )
    },
    resetTerminated: () => run({ case: "resetTerminated", value: true }).pipe(Effect.asVoid)
  }
}
