/**
 * What a stateful physical operator gets from the streaming engine for one micro-batch: the
 * batch id (its state version), the two watermarks Spark distinguishes, the output mode, a way
 * to open its state stores, and where to report its progress.
 *
 * Spark (`WatermarkSupport`): late input is filtered against the PREVIOUS batch's watermark
 * (`eventTimeWatermarkForLateEvents`), state is closed and evicted against THIS batch's
 * watermark (`eventTimeWatermarkForEviction`); both are `undefined` when the plan has no
 * watermark.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { StructType } from "../../../core/DataType.ts"
import type { StateStoreError } from "../../../core/Errors.ts"
import type { OutputMode } from "../../../core/Streaming.ts"

/**
 * The state an operator reads and writes in one batch. Keys are strings derived from key
 * columns (core/Ordering.ts `keyString`); values are JSON-safe. `get` is synchronous for keys
 * made readable with `load` (one batched read), so operators run in plain loops.
 */
export interface OperatorStateStore {
  /** The committed version this store was opened at (the previous batch id, -1 for none). */
  readonly version: number
  readonly load: (keys: Iterable<string>) => Effect.Effect<void, StateStoreError>
  readonly get: (key: string) => unknown | undefined
  readonly put: (key: string, value: unknown) => void
  readonly remove: (key: string) => void
  /** Every entry as of this version plus this batch's uncommitted changes. */
  readonly scan: () => Effect.Effect<Iterable<readonly [string, unknown]>, StateStoreError>
  /** Writes version `version + 1` atomically and returns the store's metrics. */
  readonly commit: () => Effect.Effect<OperatorStoreMetrics, StateStoreError>
  readonly abort: () => Effect.Effect<void>
}

export interface OperatorStoreMetrics {
  readonly numRowsTotal: number
  readonly numRowsUpdated: number
  readonly numRowsRemoved: number
  readonly commitTimeMs: number
  readonly memoryUsedBytes: number
}

/** Key and value schemas stored with the state and checked on restart. */
export interface OperatorStateSchema {
  readonly keySchema: StructType
  readonly valueSchema: StructType
  /** Values stored by field name: the value schema may gain nullable fields (state/StateStore.ts `StateSchema`). */
  readonly valueSchemaEvolution?: boolean | undefined
}

/** Spark's `StateOperatorProgress` fields an operator reports for a batch. */
export interface OperatorProgress {
  readonly operatorName: string
  readonly numRowsTotal: number
  readonly numRowsUpdated: number
  readonly allUpdatesTimeMs: number
  readonly numRowsRemoved: number
  readonly allRemovalsTimeMs: number
  readonly commitTimeMs: number
  readonly memoryUsedBytes: number
  readonly numRowsDroppedByWatermark: number
  readonly customMetrics: Readonly<Record<string, number>>
}

export interface StatefulContext {
  readonly batchId: number
  readonly outputMode: OutputMode
  /** The previous batch's watermark: input at or below it is late and dropped. */
  readonly watermarkForLateEventsMs: number | undefined
  /** This batch's watermark: state at or below it is emitted (append) and evicted. */
  readonly watermarkForEvictionMs: number | undefined
  /**
   * Whether each operator propagates the two global watermarks above through the operators
   * below it (Spark's `PropagateWatermarkSimulator`, `WatermarkPropagator.ts`); `false` is
   * Spark's `UseSingleWatermarkPropagator` (`spark.sql.streaming.statefulOperator.allowMultiple`
   * = false): every operator uses the global ones. Omitted means `true`, Spark's default.
   */
  readonly propagateWatermarks?: boolean | undefined
  /** Opens the store `storeName` ("default" for one store) of operator `operatorId` at this batch's start. */
  readonly openStore: (
    operatorId: number,
    storeName: string,
    schema: OperatorStateSchema
  ) => Effect.Effect<OperatorStateStore, StateStoreError>
  /** Records an operator's progress for the batch (`progress.stateOperators`, by operator id). */
  readonly reportProgress: (operatorId: number, progress: OperatorProgress) => void
  /** The batch's timestamp (Spark's `batchTimestampMs`): processing-time timers and TTL compare with it. */
  readonly batchTimestampMs?: number
  /**
   * Asks for a batch (with or without data) once the clock reaches `timestampMs` (`undefined`:
   * nothing is due): an operator's next processing-time timer or TTL expiry.
   */
  readonly requestBatchAt?: (operatorId: number, timestampMs: number | undefined) => void
}

/**
 * The state of a batch query (Spark's `generateSparkPlanForBatchQueries`: a throwaway store):
 * batch 0 at `batchTimestampMs`, no watermark, stores in memory that vanish with the run.
 *
 * @since 0.1.0
 */
export const batchStatefulContext = (batchTimestampMs: number): StatefulContext => ({
  batchId: 0,
  outputMode: "update",
  watermarkForLateEventsMs: undefined,
  watermarkForEvictionMs: undefined,
  batchTimestampMs,
  reportProgress: () => {},
  openStore: () =>
    Effect.sync((): OperatorStateStore => {
      const entries = new Map<string, string>()
      return {
        version: -1,
        load: () => Effect.void,
        get: (key) => {
          const text = entries.get(key)
          return text === undefined ? undefined : JSON.parse(text)
        },
        put: (key, value) => {
          entries.set(key, JSON.stringify(value))
        },
        remove: (key) => {
          entries.delete(key)
        },
        scan: () => Effect.sync(() => [...entries].map(([k, v]) => [k, JSON.parse(v)] as const)),
        commit: () =>
          Effect.succeed({
            numRowsTotal: entries.size,
            numRowsUpdated: 0,
            numRowsRemoved: 0,
            commitTimeMs: 0,
            memoryUsedBytes: 0
          }),
        abort: () => Effect.void
      }
    })
})
