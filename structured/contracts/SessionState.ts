/**
 * The mutable state behind one `Session`: its conf, temp views and the memory tables that
 * memory sinks fill. DataFrames keep a reference to it so that actions can run without asking
 * for the `Session` service again.
 *
 * @since 0.1.0
 */
import type { Catalog } from "../../core/Catalog.ts"
import type * as T from "../../core/DataType.ts"
import type { AttributeReference } from "../../core/Expression.ts"
import * as Plan from "../../core/LogicalPlan.ts"
import type { InternalRow } from "../../core/Row.ts"
import type { BatchReadContext } from "../../core/Formats.ts"
import type { Effect, Scope } from "effect"
import type { CheckpointFileSystem } from "../../core/CheckpointFileSystem.ts"
import { NodeCheckpointFileSystem } from "../../state/NodeCheckpointFileSystem.ts"
import type { StateStoreProvider } from "../../state/StateStore.ts"
import type { MicroBatchSource, SessionTables } from "../../core/Streaming.ts"
import type { RemoteBackend } from "./Remote.ts"
import type { StreamingQuery } from "./StreamingQuery.ts"
import type { StreamingQueryListener } from "./StreamingQueryListener.ts"

/** The session's streaming queries (`spark.streams`). */
export interface QueryRegistry {
  readonly active: Map<string, StreamingQuery & { readonly checkpoint: string }>
  readonly listeners: Array<StreamingQueryListener>
  /** Queries that ended since the last `resetTerminated`, in order. */
  readonly terminated: Array<StreamingQuery>
  /** Resolved and replaced whenever a query ends (for `awaitAnyTermination`). */
  anyTerminated: { resolve: () => void; promise: Promise<void> }
  /** The session's scope: query fibers are forked into it, so releasing the session stops them. */
  scope: Scope.Scope | undefined
}

const signal = (): { resolve: () => void; promise: Promise<void> } => {
  let resolve: () => void = () => {}
  const promise = new Promise<void>((r) => {
    resolve = r
  })
  return { resolve, promise }
}

export const newSignal = signal

/** A table kept in the session: rows appended (or replaced) by a memory sink. */
export interface MemoryTable {
  readonly name: string
  schema: T.StructType
  rows: Array<InternalRow>
  /** Batch ids a memory sink already wrote here (a restart in the same session skips them). */
  readonly seenBatches: Set<number>
}

/** Spark's defaults for the conf keys tributary reads. */
export const defaultConf: Readonly<Record<string, string>> = {
  "spark.sql.caseSensitive": "false",
  "spark.sql.shuffle.partitions": "200",
  "spark.sql.session.timeZone": "UTC",
  "spark.sql.streaming.multipleWatermarkPolicy": "min",
  "spark.sql.streaming.minBatchesToRetain": "100",
  "spark.sql.streaming.numRecentProgressUpdates": "100",
  "spark.sql.streaming.noDataMicroBatches.enabled": "true",
  "spark.sql.streaming.schemaInference": "false",
  "spark.sql.streaming.stateStore.stateSchemaCheck": "true",
  "spark.sql.ansi.enabled": "false"
}

export interface SessionState {
  readonly conf: Map<string, string>
  readonly tempViews: Map<string, Plan.LogicalPlan>
  readonly tables: Map<string, MemoryTable>
  readonly catalog: Catalog
  /** The format name of relations that read a session table at execution time. */
  readonly tableFormat: string
  /** In-process sources (`MemoryStream`) by their `sourceKey`. */
  readonly memorySources: Map<string, MicroBatchSource>
  /** The tables view memory sinks write through. */
  readonly sessionTables: SessionTables
  /** Where queries without `checkpointLocation` keep checkpoints. */
  checkpointRoot: string | undefined
  readonly queries: QueryRegistry
  /** The file system checkpoints are written through (`node:fs` by default). */
  checkpointFileSystem: CheckpointFileSystem
  /** The state store provider of stateful streaming queries (set by `Session.layer`). */
  stateStoreProvider: StateStoreProvider | undefined
  /** Active DStream `StreamingContext`s: releasing the session stops them. */
  readonly streamingContexts: Set<{ readonly stop: () => Effect.Effect<void> }>
  /**
   * Every DStream `StreamingContext` started in this session, as the dashboard shows it, in
   * start order (`dstream/` registers them; `structured/` never imports `dstream/`).
   */
  readonly streamingContextViews: Array<StreamingContextView>
  /** Called with a context's id when its view changed (a batch, a receiver, a stop): the dashboard's live events. */
  readonly streamingContextWatchers: Array<(contextId: string) => void>
  /** The dashboard's address when `Session.layer({ ui })` started one. */
  uiWebUrl: string | undefined
  /** Set for `Session.layer({ remote })`: actions and streaming queries run on Spark through it. */
  remote: RemoteBackend | undefined
  /**
   * While `testStream`'s `AdvanceClock` moves the test clock: the time it moves to. A query
   * waiting for its next processing-time trigger sleeps on to this time, so the clock jumps as
   * Spark's `ManualClock.advance` does (one trigger at the new time, not one per interval passed).
   */
  clockJumpTargetMs: number | undefined
}

/** One batch of a DStream context as the dashboard shows it (Spark's `BatchInfo`, flattened). */
export interface StreamingContextBatchView {
  readonly batchTime: number
  readonly numRecords: number
  readonly submissionTime: number
  readonly processingStartTime: number | undefined
  readonly processingEndTime: number | undefined
  readonly schedulingDelay: number | undefined
  readonly processingDelay: number | undefined
  readonly totalDelay: number | undefined
  /** `queued` (submitted), `processing`, `completed`, or `failed` (an output operation failed). */
  readonly status: "queued" | "processing" | "completed" | "failed"
  readonly outputOperations: ReadonlyArray<{
    readonly id: number
    readonly name: string
    readonly duration: number | undefined
    readonly failureReason: string | undefined
  }>
}

/** One receiver of a DStream context (Spark's `ReceiverInfo`). */
export interface StreamingContextReceiverView {
  readonly streamId: number
  readonly name: string
  readonly active: boolean
  readonly location: string
  readonly lastErrorMessage: string
  readonly lastErrorTime: number
}

/** What the dashboard reads of a DStream `StreamingContext` (Spark UI's Streaming tab). */
export interface StreamingContextView {
  readonly id: string
  readonly batchDurationMs: number
  /** Clock milliseconds when it started. */
  readonly startTime: number
  readonly state: () => "INITIALIZED" | "ACTIVE" | "STOPPED"
  /** The recent batches, oldest first (at most `spark.streaming.ui.retainedBatches`). */
  readonly batches: () => ReadonlyArray<StreamingContextBatchView>
  readonly receivers: () => ReadonlyArray<StreamingContextReceiverView>
  /** The error that ended it, with the batch time it failed at. */
  readonly error: () => { readonly message: string; readonly batchTime: number | undefined } | undefined
}

export const TABLE_FORMAT = "__tributary_table"

const normalize = (name: string): string => name.toLowerCase()

export const make = (conf: Readonly<Record<string, string>> = {}): SessionState => {
  const tempViews = new Map<string, Plan.LogicalPlan>()
  const tables = new Map<string, MemoryTable>()
  const catalog: Catalog = {
    lookupTable: (name) => tempViews.get(normalize(name))
  }
  const sessionTables: SessionTables = {
    write: (name, schema, rows, replace) => {
      const key = normalize(name)
      const existing = tables.get(key)
      if (existing === undefined) {
        tables.set(key, { name, schema, rows: rows.slice(), seenBatches: new Set() })
        return
      }
      existing.schema = schema
      if (replace) existing.rows = rows.slice()
      else for (const r of rows) existing.rows.push(r)
    },
    seenBatches: (name) => {
      const key = normalize(name)
      const existing = tables.get(key)
      if (existing !== undefined) return existing.seenBatches
      const fresh: MemoryTable = { name, schema: { _tag: "struct", fields: [] }, rows: [], seenBatches: new Set() }
      tables.set(key, fresh)
      return fresh.seenBatches
    }
  }
  return {
    conf: new Map(Object.entries({ ...defaultConf, ...conf })),
    tempViews,
    tables,
    catalog,
    tableFormat: TABLE_FORMAT,
    memorySources: new Map(),
    sessionTables,
    checkpointRoot: undefined,
    queries: { active: new Map(), listeners: [], terminated: [], anyTerminated: signal(), scope: undefined },
    checkpointFileSystem: NodeCheckpointFileSystem,
    stateStoreProvider: undefined,
    clockJumpTargetMs: undefined,
    streamingContexts: new Set(),
    streamingContextViews: [],
    streamingContextWatchers: [],
    uiWebUrl: undefined,
    remote: undefined
  }
}

/** A relation reading the session table `name` when the plan runs (so it sees rows added later). */
export const tableRelation = (name: string, output: ReadonlyArray<AttributeReference>): Plan.LogicalPlan => ({
  _tag: "DataSourceRelation",
  planId: Plan.newPlanId(),
  format: TABLE_FORMAT,
  paths: [],
  options: { name: normalize(name) },
  output
})

export const lookupMemoryTable = (state: SessionState, name: string): MemoryTable | undefined =>
  state.tables.get(normalize(name))

export const putMemoryTable = (state: SessionState, table: MemoryTable): void => {
  state.tables.set(normalize(table.name), table)
}

export const confBool = (state: SessionState, key: string): boolean =>
  (state.conf.get(key) ?? defaultConf[key] ?? "false").toLowerCase() === "true"

/** What a batch read of a file format takes from the session's conf. */
export const batchReadContext = (state: SessionState): BatchReadContext => ({
  ignoreSinkMetadata: confBool(state, "spark.sql.streaming.fileStreamSink.ignoreMetadata")
})
