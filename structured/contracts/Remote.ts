/**
 * The remote backend contract: what a session made with `Session.layer({ remote: "sc://…" })`
 * runs its actions and streaming queries through instead of the local engine. The Spark Connect
 * backend (`connect/`) implements it and the composition root (`mod.ts`) registers it, so
 * `structured/` never imports the protocol code.
 *
 * DataFrames of a remote session keep building the same logical plans; the backend translates a
 * plan when an action runs, and refuses (with an `AnalysisError` naming the operator) before
 * anything is sent when the plan holds something that cannot cross the wire.
 *
 * @since 0.3.0
 */
import { Effect, type Scope } from "effect"
import type * as T from "../../core/DataType.ts"
import type { AnalysisError, ConnectorError, StreamingQueryError } from "../../core/Errors.ts"
import type { SaveMode } from "../../core/Formats.ts"
import type { LogicalPlan } from "../../core/LogicalPlan.ts"
import type { InternalRow } from "../../core/Row.ts"
import type { Trigger } from "../../core/Trigger.ts"
import type { StreamingQuery } from "./StreamingQuery.ts"
import type { StreamingQueryListener } from "./StreamingQueryListener.ts"

/** What `writeStream…start()` asks the remote to run. */
export interface RemoteWriteSpec {
  readonly format: string | undefined
  readonly outputMode: string
  readonly trigger: Trigger
  readonly queryName: string | undefined
  /** Sink options, `checkpointLocation` and `path` included. */
  readonly options: Readonly<Record<string, string>>
  readonly partitionColumns: ReadonlyArray<string>
  /** Set when the writer has a JavaScript `foreachBatch` / `foreach`: these cannot cross. */
  readonly hasForeachBatch: boolean
  readonly hasForeach: boolean
}

/** What `df.write…save(path?)` asks the remote to run (Spark Connect's `WriteOperation`). */
export interface RemoteBatchWriteSpec {
  /** The format (`source`); `undefined` leaves it to Spark's `spark.sql.sources.default`. */
  readonly format: string | undefined
  readonly mode: SaveMode
  /** The output path; `undefined` when only the options (or nothing) give it. */
  readonly path: string | undefined
  readonly options: Readonly<Record<string, string>>
  readonly partitionColumns: ReadonlyArray<string>
}

/** A batch result: Spark's schema and the rows in tributary's internal representation. */
export interface RemoteResult {
  readonly schema: T.StructType
  readonly rows: ReadonlyArray<InternalRow>
}

export type RemoteError = AnalysisError | ConnectorError

/** `spark.streams` on the remote (Spark's `StreamingQueryManager` through `StreamingQueryManagerCommand`). */
export interface RemoteStreams {
  readonly active: () => Effect.Effect<ReadonlyArray<StreamingQuery>, RemoteError>
  readonly get: (id: string) => Effect.Effect<StreamingQuery | undefined, RemoteError>
  readonly awaitAnyTermination: (timeoutMs?: number) => Effect.Effect<boolean, StreamingQueryError | RemoteError>
  readonly resetTerminated: () => Effect.Effect<void, RemoteError>
}

export interface RemoteBackend {
  /** The `sc://` address the session talks to (without its token). */
  readonly address: string
  /** Runs a batch plan (an `ExecutePlan` of its relation) and decodes the Arrow result. */
  readonly execute: (plan: LogicalPlan) => Effect.Effect<RemoteResult, RemoteError>
  /** The plan's schema as Spark analyses it (`AnalyzePlan`). */
  readonly schema: (plan: LogicalPlan) => Effect.Effect<T.StructType, RemoteError>
  /** Spark's `explain` text (`AnalyzePlan` explain; `extended` gives all four plans). */
  readonly explain: (plan: LogicalPlan, extended: boolean) => Effect.Effect<string, RemoteError>
  /** Runs a batch write (`WriteOperation`) of the plan's rows on Spark. */
  readonly write: (plan: LogicalPlan, spec: RemoteBatchWriteSpec) => Effect.Effect<void, RemoteError>
  /** Starts a streaming query (`WriteStreamOperationStart`) and returns its handle. */
  readonly startQuery: (plan: LogicalPlan, spec: RemoteWriteSpec) => Effect.Effect<StreamingQuery, RemoteError>
  readonly streams: RemoteStreams
  /** Spark's runtime conf on the remote session (`Config`). */
  readonly conf: {
    readonly get: (key: string) => Effect.Effect<string | undefined, RemoteError>
    readonly set: (key: string, value: string) => Effect.Effect<void, RemoteError>
    readonly unset: (key: string) => Effect.Effect<void, RemoteError>
    readonly getAll: () => Effect.Effect<Readonly<Record<string, string>>, RemoteError>
  }
  /** Spark's version string (`AnalyzePlan` spark_version). */
  readonly version: () => Effect.Effect<string, RemoteError>
  /**
   * `spark.sql(query, args)` on Spark (Spark Connect's `SqlCommand`): runs now, as Spark does
   * (a DDL or DML statement takes effect at once), and returns the plan of its result, a relation
   * that only this backend can send (format `REMOTE_RELATION_FORMAT`).
   */
  readonly sql: (query: string, args: ReadonlyArray<unknown>) => Effect.Effect<LogicalPlan, RemoteError>
  /** Called after `spark.streams` added or removed a listener: the backend follows Spark's events while there are any. */
  readonly listenersChanged: () => Effect.Effect<void>
}

/**
 * For the session members with no error channel (`spark.conf`, `spark.streams`): a failed remote
 * call is logged as `what` failing and reads as `fallback`.
 */
export const orLogged = <A>(what: string, effect: Effect.Effect<A, RemoteError>, fallback: A): Effect.Effect<A> =>
  Effect.catch(effect, (e) => Effect.as(Effect.logWarning(`${what} on the remote session failed: ${e.message}`), fallback))

/** The format of a relation Spark handed back (`spark.sql` on a remote session): its id is in option `id`. */
export const REMOTE_RELATION_FORMAT = "__tributary_remote_relation"

/**
 * Opens a backend for `address`; what it opens (channel, keep-alive, remote session) closes with
 * the scope. It does not fail: an address that cannot be used gives a backend whose every call
 * fails with the typed error, so the first action reports it.
 */
export type RemoteFactory = (
  address: string,
  conf: Readonly<Record<string, string>>,
  session: RemoteSessionView
) => Effect.Effect<RemoteBackend, never, Scope.Scope>

/** What the backend needs to know of the local session. */
export interface RemoteSessionView {
  /** In-process streaming sources (`MemoryStream`) by `sourceKey`: these cannot cross. */
  readonly memorySources: { readonly has: (sourceKey: string) => boolean }
  /** The format of relations that read a session table by name. */
  readonly tableFormat: string
  /** The session's streaming query listeners (`spark.streams.addListener`), as they are now. */
  readonly listeners: () => ReadonlyArray<StreamingQueryListener>
}

let factory: RemoteFactory | undefined

/** Called by the composition root (`mod.ts`) with the Spark Connect backend. */
export const registerRemoteBackend = (f: RemoteFactory): void => {
  factory = f
}

/** The registered backend factory, or `undefined` when no composition root registered one. */
export const remoteFactory = (): RemoteFactory | undefined => factory
