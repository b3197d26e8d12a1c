/**
 * The state store contract: versioned key-value state for stateful streaming operators
 * (Spark's `StateStore` and `StateStoreProvider`, `sql/core/.../execution/streaming/state/StateStore.scala`).
 *
 * A store belongs to one operator (`operatorId`, from a fixed walk of the plan) and has a name
 * (`"default"`, or e.g. `"left-keyToNumValues"` for a join's four stores). Its versions are batch
 * ids: a store opened at version `v` (the last committed batch id, `-1` for none) reads that
 * version's state, collects one batch's changes in memory and commits them as version `v + 1`,
 * atomically. Keys are strings the operator derives from its key columns (`core/Ordering.ts`
 * `keyString`); values are JSON-safe values.
 *
 * Operators process a batch in plain synchronous loops, so reading is split in two: `load`
 * makes a batch's keys readable with one batched read, then `get` is a synchronous lookup.
 *
 * Two providers implement the contract: `DuckDBStateStoreProvider` (the default: one embedded
 * DuckDB file per checkpoint) and `FileStateStoreProvider` (`"memory"`: Spark's
 * `HDFSBackedStateStoreProvider` design, in-memory maps with delta and snapshot files). Both pass
 * the contract suite in `test/state/StateStoreContract.ts`.
 *
 * @since 0.1.0
 */
import { Context, Effect } from "effect"
import type { StructType } from "../core/DataType.ts"
import { StateStoreError } from "../core/Errors.ts"

/**
 * One operator's store for one batch.
 *
 * Methods must not be called concurrently (one operator drives it), and nothing may be called
 * after `commit` or `abort` finished it (the synchronous ones throw a defect, the effects fail
 * with `InvalidUsage`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import type { StateStore } from "../state/mod.ts" // inside the repository: state/ is not a package entry point
 * // a running count per word, for one batch of words
 * const countWords = (store: StateStore, words: ReadonlyArray<string>) =>
 *   Effect.gen(function* () {
 *     yield* store.load(new Set(words))            // one batched read
 *     for (const w of words) store.put(w, ((store.get(w) as number | undefined) ?? 0) + 1)
 *     return yield* store.commit()                  // version store.version + 1
 *   })
 * ```
 * @since 0.1.0
 */
export interface StateStore {
  readonly operatorId: number
  /** `"default"`, or e.g. `"left-keyToNumValues"` for joins. */
  readonly storeName: string
  /** The version this store was opened at (the last committed batch id, or -1 for none); commit writes version + 1. */
  readonly version: number
  /** Makes these keys readable with `get` (one batched read from storage for the ones not in memory). */
  readonly load: (keys: Iterable<string>) => Effect.Effect<void, StateStoreError>
  /**
   * Synchronous: the value of a loaded (or put) key, `undefined` when absent. Every call returns
   * a fresh copy of a committed value, so callers may modify what they get. Calling it for a key
   * not loaded is a defect (it throws).
   */
  readonly get: (key: string) => unknown | undefined
  /**
   * Sets a key's value for this batch. The value is serialised (JSON) immediately, so later
   * changes to the object do not reach the store. A value JSON cannot represent is a defect.
   */
  readonly put: (key: string, value: unknown) => void
  /** Removes a key in this batch (a key need not be loaded to be removed). */
  readonly remove: (key: string) => void
  /** Every entry as of this version plus this batch's uncommitted changes (complete mode, watermark eviction). */
  readonly scan: () => Effect.Effect<Iterable<readonly [string, unknown]>, StateStoreError>
  /** Makes the changes version `version + 1`, atomically: either all of them land or none. */
  readonly commit: () => Effect.Effect<StateStoreMetrics, StateStoreError>
  /** Discards this batch's changes; the store stays at `version`. */
  readonly abort: () => Effect.Effect<void>
}

/**
 * What one store reports for one commit. The first five fields have the names of Spark's
 * `StateOperatorProgress` (`progress.stateOperators`); `combineMetrics` adds up an operator's
 * stores and `stateOperatorProgress` builds the progress entry.
 *
 * @since 0.1.0
 */
export interface StateStoreMetrics {
  /** Live keys in the committed version. */
  readonly numRowsTotal: number
  /** Keys written (`put`) in this batch. */
  readonly numRowsUpdated: number
  /** Keys that existed and were removed in this batch. */
  readonly numRowsRemoved: number
  /** Time spent in `commit`. */
  readonly commitTimeMs: number
  /** Estimated memory this store keeps: cached or loaded state plus the batch's changes. */
  readonly memoryUsedBytes: number
  /** Keys read from storage (cache misses, or a whole version) while this store was open. */
  readonly numRowsLoaded: number
  /** Provider-specific numbers (e.g. `cacheHitCount`, `loadedMapCacheHitCount`). */
  readonly customMetrics: Readonly<Record<string, number>>
}

/**
 * The key and value schemas of a store, stored with the state on first open and checked on every
 * later open (Spark's `StateSchemaCompatibilityChecker`, see `StateSchemaCompatibility.ts`).
 *
 * @since 0.1.0
 */
export interface StateSchema {
  readonly keySchema: StructType
  readonly valueSchema: StructType
  /**
   * The values are stored by field name (`transformWithState` state variables, Spark's Avro
   * encoding): a value schema may then evolve, gaining nullable fields or losing fields
   * (`StateSchemaCompatibility.evolutionIncompatibility`). Not stored; the opener says it.
   */
  readonly valueSchemaEvolution?: boolean | undefined
}

/**
 * Where a store lives: the query's checkpoint folder, the operator id and the store name. State
 * goes under `<checkpoint>/state/`.
 *
 * @since 0.1.0
 */
export interface StateStoreId {
  readonly checkpoint: string
  readonly operatorId: number
  readonly storeName: string
}

/**
 * Arguments of `StateStoreProvider.open`.
 *
 * @since 0.1.0
 */
export interface OpenSpec extends StateStoreId {
  readonly schema: StateSchema
  /** A committed batch id, or -1 for a store with no state yet. */
  readonly version: number
  /** `spark.sql.streaming.minBatchesToRetain`: versions `latest - minBatchesToRetain` .. `latest` stay openable. */
  readonly minBatchesToRetain: number
  /** `spark.sql.streaming.stateStore.stateSchemaCheck` (default true): false skips the compatibility check. */
  readonly checkSchema?: boolean | undefined
}

/**
 * A store and one of its versions (`rollbackTo`, `read`).
 *
 * @since 0.1.0
 */
export interface VersionSpec extends StateStoreId {
  readonly version: number
}

/**
 * Opens state stores and manages their versions. One provider serves every query and operator
 * of a session; `close` (or closing the scope it was made in) releases its files and connections.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import * as T from "../core/DataType.ts"
 * import { DuckDBStateStoreProvider } from "../state/mod.ts" // inside the repository: state/ is not a package entry point
 * const program = Effect.scoped(Effect.gen(function* () {
 *   const provider = yield* DuckDBStateStoreProvider.make()
 *   const schema = { keySchema: T.struct([T.field("word", T.StringType)]), valueSchema: T.struct([T.field("count", T.LongType)]) }
 *   const store = yield* provider.open({ checkpoint: "/tmp/cp", operatorId: 0, storeName: "default", schema, version: -1, minBatchesToRetain: 100 })
 *   store.put("\"a\"", [1])
 *   return yield* store.commit()   // version 0; numRowsTotal 1
 * }))
 * ```
 * @since 0.1.0
 */
export interface StateStoreProvider {
  /** `"duckdb"` or `"memory"` (the file provider). */
  readonly name: string
  /**
   * Opens operator `operatorId`'s store `storeName` at `version` (a committed batch id, or -1).
   * Checks the schema against the one stored (the first open stores it). Fails with
   * `VersionNotFound` for a version that was never committed or is no longer retained,
   * `SchemaIncompatible`, `Corrupt`, or `InvalidUsage` when the store is already open.
   * A store opened below its latest version can be read; its commit fails until `rollbackTo`
   * discards the later versions.
   */
  readonly open: (spec: OpenSpec) => Effect.Effect<StateStore, StateStoreError>
  /** Drops versions above `version` (a restart found them committed to the store but not to the commit log). */
  readonly rollbackTo: (spec: VersionSpec) => Effect.Effect<void, StateStoreError>
  /** Reads a committed version without opening it for writing (the state reader). */
  readonly read: (spec: VersionSpec) => Effect.Effect<ReadonlyArray<readonly [string, unknown]>, StateStoreError>
  /** The latest committed version of a store (-1 when it has none). */
  readonly latestVersion: (id: StateStoreId) => Effect.Effect<number, StateStoreError>
  /**
   * Maintenance for every store this provider has opened: compaction (DuckDB) or snapshots
   * (files), and removal of versions older than the retention. Runs apart from commits: the
   * providers fork it in the background every few commits, and the engine may call it too.
   */
  readonly maintain: () => Effect.Effect<void, StateStoreError>
  /**
   * Deletes all state this provider keeps for `checkpoint` (every operator and store), whether
   * its files can be read or not. The engine calls it only for a checkpoint whose commit log has
   * no entry: no committed batch refers to that state, so it is disposable (a run killed while
   * the first batch, or the state database itself, was being written leaves such state, possibly
   * half written). Fails with `InvalidUsage` while a store of the checkpoint is open.
   */
  readonly discard: (checkpoint: string) => Effect.Effect<void, StateStoreError>
  /**
   * Ends the background work on `checkpoint`'s stores until one of them is opened again: a
   * maintenance run or a DuckDB fold under way finishes, and no new one starts (DuckDB's
   * committed changelogs not folded yet stay beside its database; a read, a close or the next
   * start folds them). The engine calls it when a query stops, so nothing writes into a
   * stopped query's checkpoint afterwards (which its owner may then copy or delete).
   */
  readonly settle: (checkpoint: string) => Effect.Effect<void>
  /** Waits for background maintenance, then closes files and connections. Idempotent. */
  readonly close: () => Effect.Effect<void>
}

/**
 * The session's state store provider, as an Effect service. `DuckDBStateStoreProvider.layer()`
 * and `FileStateStoreProvider.layer()` provide it.
 *
 * @since 0.1.0
 */
export class StateStoreProviderService extends Context.Service<StateStoreProviderService, StateStoreProvider>()(
  "tributary/state/StateStoreProvider"
) {}

/**
 * Test and crash-test hooks: named points of the commit protocol where a failure (or a process
 * kill) can be injected. A failing hook fails the commit with `CommitFailed` before the batch's
 * changes become visible, so the previous version stays intact.
 *
 * @since 0.1.0
 */
export interface StateStoreHooks {
  /**
   * Runs inside a commit just before its changes become visible: both providers run it before
   * the batch's file is written (DuckDB's changelog, the file provider's delta).
   */
  readonly beforeCommitPublish?: (info: {
    readonly operatorId: number
    readonly storeName: string
    readonly version: number
  }) => Effect.Effect<void, unknown>
}

/**
 * Adds up the metrics of an operator's stores (Spark sums its store instances' metrics); commit
 * times add up too, as the stores commit one after the other.
 *
 * @since 0.1.0
 */
export const combineMetrics = (metrics: ReadonlyArray<StateStoreMetrics>): StateStoreMetrics => {
  let numRowsTotal = 0
  let numRowsUpdated = 0
  let numRowsRemoved = 0
  let commitTimeMs = 0
  let memoryUsedBytes = 0
  let numRowsLoaded = 0
  const customMetrics: Record<string, number> = {}
  for (const m of metrics) {
    numRowsTotal += m.numRowsTotal
    numRowsUpdated += m.numRowsUpdated
    numRowsRemoved += m.numRowsRemoved
    commitTimeMs += m.commitTimeMs
    memoryUsedBytes += m.memoryUsedBytes
    numRowsLoaded += m.numRowsLoaded
    for (const [k, v] of Object.entries(m.customMetrics)) customMetrics[k] = (customMetrics[k] ?? 0) + v
  }
  return { numRowsTotal, numRowsUpdated, numRowsRemoved, commitTimeMs, memoryUsedBytes, numRowsLoaded, customMetrics }
}

/**
 * The `progress.stateOperators` entry (Spark's `StateOperatorProgress`) for one operator's
 * combined store metrics; the operator supplies what only it knows (its name, update and
 * removal times, rows dropped by the watermark).
 *
 * @since 0.1.0
 */
export const stateOperatorProgress = (
  operatorName: string,
  metrics: StateStoreMetrics,
  extra: {
    readonly allUpdatesTimeMs?: number
    readonly allRemovalsTimeMs?: number
    readonly numRowsDroppedByWatermark?: number
    readonly numStateStoreInstances?: number
  } = {}
) => ({
  operatorName,
  numRowsTotal: metrics.numRowsTotal,
  numRowsUpdated: metrics.numRowsUpdated,
  allUpdatesTimeMs: extra.allUpdatesTimeMs ?? 0,
  numRowsRemoved: metrics.numRowsRemoved,
  allRemovalsTimeMs: extra.allRemovalsTimeMs ?? 0,
  commitTimeMs: metrics.commitTimeMs,
  memoryUsedBytes: metrics.memoryUsedBytes,
  numRowsDroppedByWatermark: extra.numRowsDroppedByWatermark ?? 0,
  // One partition: tributary runs each operator as a single task.
  numShufflePartitions: 1,
  numStateStoreInstances: extra.numStateStoreInstances ?? 1,
  customMetrics: { ...metrics.customMetrics, numRowsLoaded: metrics.numRowsLoaded }
})

/** `operator 3 store 'default'`, for messages. */
export const describeStore = (id: { readonly operatorId: number; readonly storeName: string }): string =>
  `operator ${id.operatorId} store '${id.storeName}'`

/**
 * Checks the parts of a spec every provider relies on: a non-negative integer operator id, a
 * store name usable as a folder name, an integer version >= -1 and a retention >= 1.
 */
export const validateSpec = (spec: {
  readonly checkpoint: string
  readonly operatorId: number
  readonly storeName: string
  readonly version: number
  readonly minBatchesToRetain?: number
}): StateStoreError | undefined => {
  const bad = (message: string) => new StateStoreError({ reason: "InvalidUsage", message, operatorId: spec.operatorId })
  if (spec.checkpoint === "") return bad("The checkpoint location is empty: give the query a checkpointLocation.")
  if (!Number.isSafeInteger(spec.operatorId) || spec.operatorId < 0) {
    return bad(`Operator id ${spec.operatorId} is not a non-negative integer.`)
  }
  // A folder name for the file provider: no separators, nothing hidden, not `_metadata`, and no
  // dot, so it cannot look like a `<version>.delta` file beside the default store's files.
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(spec.storeName)) {
    return bad(
      `Store name '${spec.storeName}' is not usable: use letters, digits and '-' (e.g. 'default', 'left-keyToNumValues').`
    )
  }
  if (!Number.isSafeInteger(spec.version) || spec.version < -1) {
    return bad(`State version ${spec.version} is not a batch id (an integer >= -1).`)
  }
  if (
    spec.minBatchesToRetain !== undefined &&
    (!Number.isSafeInteger(spec.minBatchesToRetain) || spec.minBatchesToRetain < 1)
  ) {
    return bad(`spark.sql.streaming.minBatchesToRetain must be a positive integer, got ${spec.minBatchesToRetain}.`)
  }
  return undefined
}

/**
 * The start every provider's `open` shares: the spec is checked (`validateSpec`), the provider
 * must not be closed (`closedError`), and the store (`handle` finds or registers it) must not be
 * open already; it is then marked as open for writing until the session commits or aborts.
 *
 * @since 0.1.0
 */
export const beginOpen = <H extends { writer: boolean; readonly operatorId: number; readonly storeName: string }, E>(
  spec: OpenSpec,
  closed: boolean,
  closedError: (id: { readonly operatorId: number }) => StateStoreError,
  handle: () => Effect.Effect<H, E>
): Effect.Effect<H, StateStoreError | E> =>
  Effect.gen(function* () {
    const invalid = validateSpec(spec)
    if (invalid !== undefined) return yield* invalid
    if (closed) return yield* closedError(spec)
    const h = yield* handle()
    if (h.writer) {
      return yield* new StateStoreError({
        reason: "InvalidUsage",
        operatorId: h.operatorId,
        message: `${describeStore(h)} is already open: commit or abort it before opening it again.`
      })
    }
    h.writer = true
    return h
  })
