/**
 * Progress, status and listener events of streaming queries, with Spark's JSON field names
 * (`StreamingQueryProgress`, `SourceProgress`, `SinkProgress`, `StateOperatorProgress`,
 * `StreamingQueryStatus`, `StreamingQueryListener` events).
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"

export interface SourceProgress {
  readonly description: string
  readonly startOffset: unknown
  readonly endOffset: unknown
  readonly latestOffset: unknown
  readonly numInputRows: number
  readonly inputRowsPerSecond: number
  readonly processedRowsPerSecond: number
  readonly metrics: Readonly<Record<string, string>>
}

export interface SinkProgress {
  readonly description: string
  readonly numOutputRows: number
  readonly metrics: Readonly<Record<string, string>>
}

export interface StateOperatorProgress {
  readonly operatorName: string
  readonly numRowsTotal: number
  readonly numRowsUpdated: number
  readonly allUpdatesTimeMs: number
  readonly numRowsRemoved: number
  readonly allRemovalsTimeMs: number
  readonly commitTimeMs: number
  readonly memoryUsedBytes: number
  readonly numRowsDroppedByWatermark: number
  readonly numShufflePartitions: number
  readonly numStateStoreInstances: number
  readonly customMetrics: Readonly<Record<string, number>>
}

export interface StreamingQueryProgress {
  readonly id: string
  readonly runId: string
  readonly name: string | null
  /** The trigger's start, ISO 8601 in UTC (`2026-01-01T00:00:00.000Z`). */
  readonly timestamp: string
  readonly batchId: number
  readonly batchDuration: number
  readonly numInputRows: number
  readonly inputRowsPerSecond: number
  readonly processedRowsPerSecond: number
  /** Phases in ms: `latestOffset`, `queryPlanning`, `walCommit`, `addBatch`, `commitOffsets`, `triggerExecution`, … */
  readonly durationMs: Readonly<Record<string, number>>
  /** `watermark` (ISO) and, for batches with event-time data, `max`, `min`, `avg`. */
  readonly eventTime: Readonly<Record<string, string>>
  readonly stateOperators: ReadonlyArray<StateOperatorProgress>
  readonly sources: ReadonlyArray<SourceProgress>
  readonly sink: SinkProgress
  readonly observedMetrics: Readonly<Record<string, unknown>>
}

export interface StreamingQueryStatus {
  /** Spark's messages: "Initializing sources", "Waiting for data to arrive", "Processing new data", "Waiting for next trigger", "Stopped". */
  readonly message: string
  readonly isDataAvailable: boolean
  readonly isTriggerActive: boolean
}

export interface QueryStartedEvent {
  readonly id: string
  readonly runId: string
  readonly name: string | null
  readonly timestamp: string
}

export interface QueryProgressEvent {
  readonly progress: StreamingQueryProgress
}

export interface QueryIdleEvent {
  readonly id: string
  readonly runId: string
  readonly timestamp: string
}

export interface QueryTerminatedEvent {
  readonly id: string
  readonly runId: string
  /** The failure's message, or `null` when the query stopped normally. */
  readonly exception: string | null
  readonly errorClassOnException: string | null
}

type Callback<E> = (event: E) => void | Promise<void> | Effect.Effect<void, unknown>

/**
 * A listener of every query of a session (`spark.streams.addListener`). Callbacks may return
 * nothing, a Promise or an Effect; a failing callback is logged and does not affect queries.
 */
export interface StreamingQueryListener {
  readonly onQueryStarted?: Callback<QueryStartedEvent>
  readonly onQueryProgress?: Callback<QueryProgressEvent>
  readonly onQueryIdle?: Callback<QueryIdleEvent>
  readonly onQueryTerminated?: Callback<QueryTerminatedEvent>
}

/** Spark's JSON form of a progress: non-finite rates are left out, as Spark's `safeDoubleToJValue` does. */
export const progressJson = (p: StreamingQueryProgress): string =>
  JSON.stringify(p, (_key, value) => (typeof value === "number" && !Number.isFinite(value) ? undefined : value), 2)
