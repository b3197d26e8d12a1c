/**
 * `transformWithState`: Spark 4's arbitrary stateful processing API (`StatefulProcessor`,
 * `StatefulProcessorHandle`, `ValueState`, `ListState`, `MapState`, `TTLConfig`, `TimeMode`,
 * `TimerValues`, `ExpiredTimerInfo`).
 *
 * A processor is any object with an `outputSchema` and the methods `init(handle, timeMode)` and
 * `handleInputRows(key, rows, timerValues)`, optionally `handleExpiredTimer`,
 * `handleInitialState` and `close`; extending the `StatefulProcessor` base class is optional.
 * In `init` the handle creates the state variables (their values are Effect Schemas); they are
 * synchronous and scoped to the key being processed, like `GroupState`: the engine loads a batch's
 * keys before it calls you and writes the changes at commit. Each variable lives in its own state
 * store named by the variable; timers live in one more store.
 *
 * Time: processing-time timers and TTL compare with the batch timestamp (Effect's `Clock`, so the
 * test clock drives them); event-time timers with the watermark. A timer fires when its time is
 * at or below that threshold; a TTL value expires when the batch timestamp reaches its expiry.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { StatefulProcessor, TimeMode, TTLConfig, type StatefulProcessorHandle, type ValueState } from "tributary-streaming"
 *
 * class RunningCount extends StatefulProcessor<string, { word: string }, { word: string; n: number }> {
 *   readonly outputSchema = Schema.Struct({ word: Schema.String, n: Schema.Number })
 *   private count!: ValueState<number>
 *   init(handle: StatefulProcessorHandle) {
 *     this.count = handle.getValueState("count", Schema.Number, TTLConfig.of("1 hour"))
 *   }
 *   handleInputRows(word: string, rows: ReadonlyArray<{ word: string }>) {
 *     const n = (this.count.get() ?? 0) + rows.length
 *     this.count.update(n)
 *     return [{ word, n }]
 *   }
 * }
 * // df.groupByKey((r) => r.word, Schema.String)
 * //   .transformWithState(new RunningCount(), { timeMode: TimeMode.ProcessingTime, outputMode: "update" })
 * ```
 * @since 0.1.0
 */
import { Result, type Schema } from "effect"
import { parseDurationMs } from "../../core/Durations.ts"
import { AnalysisError } from "../../core/Errors.ts"
import * as E from "../../core/Expression.ts"
import * as L from "../../core/LogicalPlan.ts"
import { isStructSchema, structTypeOf } from "../../core/RowSchema.ts"

/**
 * Spark's `TimeMode`: what timers and TTL are measured in. `None` allows neither timers nor TTL;
 * `ProcessingTime` compares with the batch timestamp; `EventTime` with the watermark (the input
 * needs `withWatermark`).
 *
 * @since 0.1.0
 */
export const TimeMode = {
  None: "None",
  ProcessingTime: "ProcessingTime",
  EventTime: "EventTime"
} as const

/**
 * @since 0.1.0
 */
export type TimeMode = (typeof TimeMode)[keyof typeof TimeMode]

/**
 * Spark's `TTLConfig`: how long a state value lives after its last update (processing time). A
 * zero duration means no TTL (`TTLConfig.NONE`), as in Spark.
 *
 * @example
 * ```ts
 * import { TTLConfig } from "tributary-streaming"
 * TTLConfig.of("1 minute").ttlDurationMs // 60000
 * ```
 * @since 0.1.0
 */
export class TTLConfig {
  /** The duration in milliseconds (NaN when the input was not a duration). */
  readonly ttlDurationMs: number
  constructor(ttlDurationMs: number) {
    this.ttlDurationMs = ttlDurationMs
  }
  /** A TTL of `duration` (an Effect duration input or a Spark interval string: `"1 minute"`, `"10 seconds"`, ms). */
  static of(duration: unknown): TTLConfig {
    return new TTLConfig(parseDurationMs(duration) ?? Number.NaN)
  }
  /** No TTL. */
  static readonly NONE: TTLConfig = new TTLConfig(0)
}

/**
 * Spark's `ValueState`: one value per key.
 *
 * @since 0.1.0
 */
export interface ValueState<A> {
  /** Whether the key has a (non-expired) value. */
  readonly exists: () => boolean
  /** The value, `undefined` when there is none (Spark returns null). */
  readonly get: () => A | undefined
  /** Sets the value (null or undefined fails, Spark's `ILLEGAL_STATE_STORE_VALUE.NULL_VALUE`). */
  readonly update: (value: A) => void
  /** Removes the value. */
  readonly clear: () => void
}

/**
 * Spark's `ListState`: a list of values per key.
 *
 * @since 0.1.0
 */
export interface ListState<A> {
  readonly exists: () => boolean
  /** The (non-expired) values, in order; empty when there are none. */
  readonly get: () => ReadonlyArray<A>
  /** Replaces the list (an empty list fails, Spark's `ILLEGAL_STATE_STORE_VALUE.EMPTY_LIST_VALUE`). */
  readonly put: (values: ReadonlyArray<A>) => void
  readonly appendValue: (value: A) => void
  /** Appends values (an empty list fails, as in Spark). */
  readonly appendList: (values: ReadonlyArray<A>) => void
  readonly clear: () => void
}

/**
 * Spark's `MapState`: a map per key.
 *
 * @since 0.1.0
 */
export interface MapState<K, V> {
  readonly exists: () => boolean
  /** The value for `key`, `undefined` when absent or expired. */
  readonly getValue: (key: K) => V | undefined
  readonly containsKey: (key: K) => boolean
  readonly updateValue: (key: K, value: V) => void
  /** The entries, in insertion order. */
  readonly iterator: () => ReadonlyArray<readonly [K, V]>
  readonly keys: () => ReadonlyArray<K>
  readonly values: () => ReadonlyArray<V>
  readonly removeKey: (key: K) => void
  readonly clear: () => void
}

/**
 * Spark's `TimerValues`: the times of the current batch.
 *
 * @since 0.1.0
 */
export interface TimerValues {
  /** The batch timestamp (ms). */
  readonly getCurrentProcessingTimeInMs: () => number
  /** The watermark the batch evicts with (ms), -1 without a watermark. */
  readonly getCurrentWatermarkInMs: () => number
}

/**
 * Spark's `ExpiredTimerInfo`: the timer that fired.
 *
 * @since 0.1.0
 */
export interface ExpiredTimerInfo {
  readonly getExpiryTimeInMs: () => number
}

/**
 * Spark's `StatefulProcessorHandle`. State variables may be created only in `init`; timers may
 * be used while rows, initial state or expired timers are handled, never in `TimeMode.None`.
 *
 * @since 0.1.0
 */
export interface StatefulProcessorHandle {
  readonly getValueState: <S extends Schema.Top>(name: string, schema: S, ttl?: TTLConfig) => ValueState<S["Type"]>
  readonly getListState: <S extends Schema.Top>(name: string, schema: S, ttl?: TTLConfig) => ListState<S["Type"]>
  readonly getMapState: <KS extends Schema.Top, VS extends Schema.Top>(
    name: string,
    keySchema: KS,
    valueSchema: VS,
    ttl?: TTLConfig
  ) => MapState<KS["Type"], VS["Type"]>
  /**
   * Spark's `deleteIfExists`: drops the state variable `name` of an earlier run of the query (only
   * in `init`; counted in `numDeletedStateVars`). Its store is no longer opened, so its values are
   * never read again; declare the variable under a new name rather than reusing a dropped one.
   */
  readonly deleteIfExists: (name: string) => void
  /** Registers a timer for the current key (registering the same time twice keeps one). */
  readonly registerTimer: (expiryTimestampMs: number) => void
  readonly deleteTimer: (expiryTimestampMs: number) => void
  /** The current key's timers, ascending (a timer being handled is still listed). */
  readonly listTimers: () => ReadonlyArray<number>
}

/**
 * What `transformWithState` accepts as a processor: `K` the key, `I` the input rows, `O` the
 * output values (described by `outputSchema`), `S` the initial state values.
 *
 * @since 0.1.0
 */
export interface StatefulProcessorLike<K, I, O, S = never> {
  readonly outputSchema: Schema.Top & { readonly Type: O }
  init(handle: StatefulProcessorHandle, timeMode: TimeMode): void
  handleInputRows(key: K, rows: ReadonlyArray<I>, timerValues: TimerValues): Iterable<O>
  handleExpiredTimer?(key: K, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo): Iterable<O>
  handleInitialState?(key: K, initialState: S, timerValues: TimerValues): void
  close?(): void
}

/**
 * Spark's `StatefulProcessor` base class (optional): keeps the handle (`getHandle()`), and
 * defaults `handleExpiredTimer` to no output and `close` to nothing.
 *
 * @since 0.1.0
 */
export abstract class StatefulProcessor<K, I, O, S = never> {
  abstract readonly outputSchema: Schema.Top & { readonly Type: O }
  #handle: StatefulProcessorHandle | undefined
  /** @internal the engine gives the handle before it calls `init` (Spark's `setHandle`). */
  setHandle(handle: StatefulProcessorHandle | undefined): void {
    this.#handle = handle
  }
  /** The handle of the current batch. */
  getHandle(): StatefulProcessorHandle {
    // Spark's STATE_STORE_HANDLE_NOT_INITIALIZED (TransformWithStateSuite "Use statefulProcessor
    // without transformWithState - handle should be absent").
    if (this.#handle === undefined) {
      throw new Error(
        "[STATE_STORE_HANDLE_NOT_INITIALIZED] The handle has not been initialized for this StatefulProcessor. Please only use the StatefulProcessor within the transformWithState operator."
      )
    }
    return this.#handle
  }
  abstract init(handle: StatefulProcessorHandle, timeMode: TimeMode): void
  abstract handleInputRows(key: K, rows: ReadonlyArray<I>, timerValues: TimerValues): Iterable<O>
  handleExpiredTimer(_key: K, _timerValues: TimerValues, _expiredTimerInfo: ExpiredTimerInfo): Iterable<O> {
    return []
  }
  handleInitialState?(key: K, initialState: S, timerValues: TimerValues): void
  close(): void {}
}

/**
 * The rows that initialise the state in the first batch (Spark's `initialState:
 * KeyValueGroupedDataset[K, S]`): a batch plan and the key of each of its rows; each row is
 * given to `handleInitialState` as is.
 *
 * @since 0.1.0
 */
export interface InitialStateSource {
  readonly plan: L.LogicalPlan
  readonly keyFn: (row: any) => unknown
  readonly buildError?: AnalysisError | undefined
}

/**
 * Options of `transformWithState`.
 *
 * @since 0.1.0
 */
export interface TransformWithStateOptions {
  readonly timeMode: TimeMode
  readonly outputMode: "append" | "update"
  readonly initialState?: InitialStateSource | undefined
}

const invalid = (message: string): AnalysisError => new AnalysisError({ reason: "InvalidArgument", message })

/**
 * Builds the logical `TransformWithState` node over `child` (what
 * `KeyValueGroupedDataset.transformWithState` calls). Fails when the options or schemas are not
 * usable; the DataFrame reports that from its first action.
 *
 * @since 0.1.0
 */
export const transformWithState = (
  child: L.LogicalPlan,
  keyFn: (row: any) => unknown,
  keySchema: Schema.Top,
  processor: StatefulProcessorLike<any, any, any, any>,
  options: TransformWithStateOptions
): Result.Result<L.TransformWithState, AnalysisError> => {
  const timeMode = options.timeMode
  if (timeMode !== "None" && timeMode !== "ProcessingTime" && timeMode !== "EventTime") {
    return Result.fail(
      invalid(
        `Unknown time mode '${String(timeMode)}': use TimeMode.None, TimeMode.ProcessingTime or TimeMode.EventTime.`
      )
    )
  }
  const outputMode = options.outputMode
  if (outputMode !== "append" && outputMode !== "update") {
    return Result.fail(
      invalid(`transformWithState supports the output modes "append" and "update", not "${String(outputMode)}".`)
    )
  }
  if (typeof processor?.init !== "function" || typeof processor?.handleInputRows !== "function") {
    return Result.fail(
      invalid(
        "A stateful processor needs the methods init(handle, timeMode) and handleInputRows(key, rows, timerValues)."
      )
    )
  }
  if (structTypeOf(keySchema) === undefined) {
    return Result.fail(invalid("The key schema given to groupByKey has a part with no Spark type."))
  }
  const outputSchema = processor.outputSchema as Schema.Top | undefined
  const st = outputSchema === undefined ? undefined : structTypeOf(outputSchema)
  if (outputSchema === undefined || st === undefined) {
    return Result.fail(
      invalid(
        "The stateful processor's outputSchema is missing or has a part with no Spark type (functions, symbols, unions of different types)."
      )
    )
  }
  const initial = options.initialState
  if (initial?.buildError !== undefined) return Result.fail(initial.buildError)
  if (initial !== undefined && typeof processor.handleInitialState !== "function") {
    return Result.fail(
      invalid(
        "transformWithState with an initial state needs a processor with handleInitialState(key, initialState, timerValues)."
      )
    )
  }
  return Result.succeed({
    _tag: "TransformWithState",
    planId: L.newPlanId(),
    keyFn,
    keySchema,
    processor,
    timeMode,
    outputMode,
    schema: st,
    wrapValue: !isStructSchema(outputSchema),
    output: st.fields.map((f) => E.attribute(f.name, f.dataType, f.nullable)),
    child,
    initialState: initial?.plan,
    initialStateKeyFn: initial?.keyFn
  })
}
