/**
 * `GroupState<S>`: the per-key state handle of `mapGroupsWithState` / `flatMapGroupsWithState`
 * (Spark's `GroupState` and its implementation `GroupStateImpl`), and `GroupStateTimeout`.
 *
 * The handle is synchronous: the engine loads the key's state before it calls the user
 * function and writes the changes when the function returns. Misuse (reading absent state,
 * a bad timeout) throws a `GroupStateError` out of the user function, as Spark throws; the
 * engine turns it into the query's failure (a `StreamingQueryError` whose `cause` is the
 * `GroupStateError`), or into a defect of a batch action.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { GroupStateTimeout } from "tributary-streaming"
 *
 * const counts = events.groupByKey((r) => r.user, Schema.String).flatMapGroupsWithState(
 *   { outputMode: "update", timeout: GroupStateTimeout.ProcessingTimeTimeout,
 *     stateSchema: Schema.Number, outputSchema: Schema.Struct({ user: Schema.String, n: Schema.Number }) },
 *   (user, rows, state) => {
 *     if (state.hasTimedOut) { state.remove(); return [] }
 *     const n = (state.getOption() ?? 0) + rows.length
 *     state.update(n)
 *     state.setTimeoutDuration("10 seconds")
 *     return [{ user, n }]
 *   })
 * ```
 * @since 0.1.0
 */
import { type Cause, Data, Duration } from "effect"
import { intervalToMs, parseInterval } from "../../core/Durations.ts"

/** The constructor `Data.TaggedError(tag)<A>` returns, written out (JSR wants explicit types). */
type TaggedErrorBase<Tag extends string, A> = new (
  args: A
) => Cause.YieldableError & { readonly _tag: Tag } & Readonly<A>

/**
 * How keys time out (Spark's `GroupStateTimeout`): never, on the batch clock
 * (`setTimeoutDuration`), or on the event-time watermark (`setTimeoutTimestamp`).
 *
 * @since 0.1.0
 */
export type GroupStateTimeout = "NoTimeout" | "ProcessingTimeTimeout" | "EventTimeTimeout"

/**
 * The three timeout kinds by name: `GroupStateTimeout.NoTimeout`,
 * `GroupStateTimeout.ProcessingTimeTimeout`, `GroupStateTimeout.EventTimeTimeout`.
 *
 * @since 0.1.0
 */
export const GroupStateTimeout = {
  NoTimeout: "NoTimeout",
  ProcessingTimeTimeout: "ProcessingTimeTimeout",
  EventTimeTimeout: "EventTimeTimeout"
} as const satisfies Record<GroupStateTimeout, GroupStateTimeout>

/** The fields of {@link GroupStateError}. */
interface GroupStateErrorFields {
  readonly reason: "NoSuchElement" | "IllegalArgument" | "UnsupportedOperation"
  readonly message: string
  /** Spark's error class, where Spark gives one (`_LEGACY_ERROR_TEMP_2203`, …). */
  readonly errorClass?: string
}
const GroupStateErrorBase: TaggedErrorBase<"GroupStateError", GroupStateErrorFields> =
  Data.TaggedError("GroupStateError")<GroupStateErrorFields>

/**
 * Thrown by a `GroupState` method used against Spark's rules. `reason` names the Java exception
 * Spark throws (`NoSuchElement` for `get()` on absent state, `IllegalArgument` for bad values,
 * `UnsupportedOperation` for a timeout call that the configured timeout does not allow); the
 * message is Spark's.
 *
 * @since 0.1.0
 */
export class GroupStateError extends GroupStateErrorBase {}

/** The fields of {@link FlatMapGroupsWithStateUserFuncError}. */
interface FlatMapGroupsWithStateUserFuncErrorFields {
  readonly message: string
  readonly errorClass: "FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR"
  readonly cause: unknown
}
const FlatMapGroupsWithStateUserFuncErrorBase: TaggedErrorBase<
  "FlatMapGroupsWithStateUserFuncError",
  FlatMapGroupsWithStateUserFuncErrorFields
> =
  Data.TaggedError("FlatMapGroupsWithStateUserFuncError")<FlatMapGroupsWithStateUserFuncErrorFields>

/**
 * What a streaming `[flat]MapGroupsWithState` fails with when the user function (or the
 * iterable it returns) throws something other than a typed tributary error: Spark's
 * `FlatMapGroupsWithStateUserFuncException`, error class
 * `FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR`, with the thrown value as `cause`. A
 * `GroupStateError` (or any other tagged error) is not wrapped, as Spark does not wrap a
 * `SparkThrowable`.
 *
 * @example
 * ```ts
 * // the query fails with a StreamingQueryError whose cause is this error:
 * // "[FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR] An error occurred in the user provided
 * //  function in flatMapGroupsWithState. Reason: boom"
 * ```
 * @since 0.1.0
 */
export class FlatMapGroupsWithStateUserFuncError extends FlatMapGroupsWithStateUserFuncErrorBase {
  /** Wraps what the user function threw (Spark's reason: the cause's message, or empty). */
  static wrap(cause: unknown): FlatMapGroupsWithStateUserFuncError {
    const reason =
      cause instanceof Error ? cause.message : cause === null || cause === undefined ? "" : String(cause)
    return new FlatMapGroupsWithStateUserFuncError({
      errorClass: "FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR",
      message: `[FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR] An error occurred in the user provided function in flatMapGroupsWithState. Reason: ${reason}`,
      cause
    })
  }
}

/**
 * The state of one key, as the user function sees it (Spark's `GroupState`).
 *
 * @since 0.1.0
 */
export interface GroupState<S> {
  /** Whether the key has state. */
  readonly exists: boolean
  /** The state; throws a `GroupStateError` (`NoSuchElement`) when there is none. */
  get(): S
  /** The state, or `undefined` when there is none. */
  getOption(): S | undefined
  /** Sets the state; `null`/`undefined` are refused (`IllegalArgument`). */
  update(newState: S): void
  /** Removes the state (a timeout set afterwards is still kept, as in Spark). */
  remove(): void
  /** True only in the call the engine makes because this key timed out. */
  readonly hasTimedOut: boolean
  /**
   * `ProcessingTimeTimeout` only: time the key out once the batch clock passes the current
   * batch timestamp plus `duration` (milliseconds, a Spark interval string such as
   * `"10 seconds"`, or an Effect `Duration`). Must be positive.
   */
  setTimeoutDuration(duration: number | string | Duration.Duration): void
  /**
   * `EventTimeTimeout` only: time the key out once the watermark passes `timestamp` (epoch ms
   * or a `Date`, plus an optional interval string). Must be positive and not below the
   * current watermark.
   */
  setTimeoutTimestamp(timestamp: number | Date, additionalDuration?: string): void
  /** The batch's event-time watermark (ms); throws when the query has no watermark. */
  getCurrentWatermarkMs(): number
  /** The batch timestamp (ms): the processing time of the batch. */
  getCurrentProcessingTimeMs(): number
}

/** Spark's `GroupStateImpl.NO_TIMESTAMP`. */
export const NO_TIMESTAMP = -1

const unsupported = (errorClass: string, message: string): GroupStateError =>
  new GroupStateError({ reason: "UnsupportedOperation", errorClass, message })

const illegal = (message: string): GroupStateError => new GroupStateError({ reason: "IllegalArgument", message })

/** Spark's `GroupStateImpl.parseDuration`: an interval, a month as 31 days; negative refused. */
const parseDuration = (duration: string): number => {
  const interval = parseInterval(duration)
  if (interval === undefined) {
    throw illegal(`Error parsing '${duration}' to interval, unrecognized number '${duration.trim().split(/\s+/)[0] ?? ""}'`)
  }
  const ms = intervalToMs(interval)
  if (ms < 0) throw illegal(`Provided duration (${duration}) is negative`)
  return ms
}

/**
 * Spark's `GroupStateImpl`: the handle the engine gives the user function, with the internal
 * flags the engine reads afterwards (`isUpdated`, `isRemoved`, `getTimeoutTimestampMs`).
 * `TestGroupState.create` builds one for unit-testing a state function.
 *
 * @since 0.1.0
 */
export class GroupStateImpl<S> implements GroupState<S> {
  readonly #batchProcessingTimeMs: number
  readonly #eventTimeWatermarkMs: number
  readonly #timeoutConf: GroupStateTimeout
  readonly #hasTimedOut: boolean
  readonly #watermarkPresent: boolean
  #value: S | undefined
  #defined: boolean
  #updated = false
  #removed = false
  #timeoutTimestamp = NO_TIMESTAMP

  private constructor(
    optionalValue: S | undefined,
    batchProcessingTimeMs: number,
    eventTimeWatermarkMs: number,
    timeoutConf: GroupStateTimeout,
    hasTimedOut: boolean,
    watermarkPresent: boolean
  ) {
    this.#value = optionalValue
    this.#defined = optionalValue !== undefined
    this.#batchProcessingTimeMs = batchProcessingTimeMs
    this.#eventTimeWatermarkMs = eventTimeWatermarkMs
    this.#timeoutConf = timeoutConf
    this.#hasTimedOut = hasTimedOut
    this.#watermarkPresent = watermarkPresent
  }

  /**
   * Spark's `GroupStateImpl.createForStreaming`: `optionalValue` undefined for no state,
   * `eventTimeWatermarkMs` -1 (`NO_TIMESTAMP`) when there is none.
   */
  static createForStreaming<S>(
    optionalValue: S | undefined,
    batchProcessingTimeMs: number,
    eventTimeWatermarkMs: number,
    timeoutConf: GroupStateTimeout,
    hasTimedOut: boolean,
    watermarkPresent: boolean
  ): GroupStateImpl<S> {
    if (batchProcessingTimeMs < 0) throw illegal("batchProcessingTimeMs must be 0 or positive")
    if (watermarkPresent && eventTimeWatermarkMs < 0) {
      throw illegal("eventTimeWatermarkMs must be 0 or positive if present")
    }
    if (hasTimedOut && timeoutConf === "NoTimeout") {
      throw unsupported(
        "MISSING_TIMEOUT_CONFIGURATION",
        "[MISSING_TIMEOUT_CONFIGURATION] The operation has timed out, but no timeout duration is configured. To set a processing time-based timeout, use 'GroupState.setTimeoutDuration()' in your 'mapGroupsWithState' or 'flatMapGroupsWithState' operation. For event-time based timeout, use 'GroupState.setTimeoutTimestamp()' and define a watermark using 'Dataset.withWatermark()'."
      )
    }
    return new GroupStateImpl(optionalValue, batchProcessingTimeMs, eventTimeWatermarkMs, timeoutConf, hasTimedOut, watermarkPresent)
  }

  /**
   * Spark's `GroupStateImpl.createForBatch`: never timed out, no watermark value; `nowMs` is the
   * action's processing time. `initialValue` is the key's initial state (Spark's `CoGroupExec`
   * path of a batch query with an initial state), none otherwise.
   */
  static createForBatch<S>(
    timeoutConf: GroupStateTimeout,
    watermarkPresent: boolean,
    nowMs: number,
    initialValue?: S
  ): GroupStateImpl<S> {
    return new GroupStateImpl<S>(initialValue, nowMs, NO_TIMESTAMP, timeoutConf, false, watermarkPresent)
  }

  get exists(): boolean {
    return this.#defined
  }

  get hasTimedOut(): boolean {
    return this.#hasTimedOut
  }

  get(): S {
    if (this.#defined) return this.#value as S
    throw new GroupStateError({
      reason: "NoSuchElement",
      message: "State is either not defined or has already been removed"
    })
  }

  getOption(): S | undefined {
    return this.#defined ? this.#value : undefined
  }

  update(newState: S): void {
    if (newState === null || newState === undefined) throw illegal("'null' is not a valid state value")
    this.#value = newState
    this.#defined = true
    this.#updated = true
    this.#removed = false
  }

  remove(): void {
    this.#defined = false
    this.#updated = false
    this.#removed = true
  }

  setTimeoutDuration(duration: number | string | Duration.Duration): void {
    // Spark's `setTimeoutDuration(String)` parses the interval before anything else, so a
    // negative or unreadable interval is an IllegalArgument whatever the timeout kind.
    if (typeof duration === "string") {
      this.setTimeoutDuration(parseDuration(duration))
      return
    }
    if (this.#timeoutConf !== "ProcessingTimeTimeout") {
      throw unsupported(
        "_LEGACY_ERROR_TEMP_2203",
        "Cannot set timeout duration without enabling processing time timeout in [map|flatMap]GroupsWithState"
      )
    }
    const ms = typeof duration === "number" ? duration : Duration.toMillis(duration)
    if (!(ms > 0)) throw illegal("Timeout duration must be positive")
    this.#timeoutTimestamp = ms + this.#batchProcessingTimeMs
  }

  setTimeoutTimestamp(timestamp: number | Date, additionalDuration?: string): void {
    this.checkTimeoutTimestampAllowed()
    const base = timestamp instanceof Date ? timestamp.getTime() : timestamp
    const ms = additionalDuration === undefined ? base : base + parseDuration(additionalDuration)
    if (!(ms > 0)) throw illegal("Timeout timestamp must be positive")
    if (this.#eventTimeWatermarkMs !== NO_TIMESTAMP && ms < this.#eventTimeWatermarkMs) {
      throw illegal(
        `Timeout timestamp (${ms}) cannot be earlier than the current watermark (${this.#eventTimeWatermarkMs})`
      )
    }
    this.#timeoutTimestamp = ms
  }

  getCurrentWatermarkMs(): number {
    if (!this.#watermarkPresent) {
      throw unsupported(
        "_LEGACY_ERROR_TEMP_2204",
        "Cannot get event time watermark timestamp without setting watermark before [map|flatMap]GroupsWithState"
      )
    }
    return this.#eventTimeWatermarkMs
  }

  getCurrentProcessingTimeMs(): number {
    return this.#batchProcessingTimeMs
  }

  /** Whether `update` was called (and not undone by a later `remove`). */
  get isUpdated(): boolean {
    return this.#updated
  }

  /** Whether `remove` was called (and not undone by a later `update`). */
  get isRemoved(): boolean {
    return this.#removed
  }

  /** The timeout set in this call, or `undefined`: a timeout not set again is cleared (Spark's reset rule). */
  getTimeoutTimestampMs(): number | undefined {
    return this.#timeoutTimestamp === NO_TIMESTAMP ? undefined : this.#timeoutTimestamp
  }

  toString(): string {
    return `GroupState(${this.#defined ? String(this.#value) : "<undefined>"})`
  }

  private checkTimeoutTimestampAllowed(): void {
    if (this.#timeoutConf !== "EventTimeTimeout") {
      throw unsupported(
        "_LEGACY_ERROR_TEMP_2205",
        "Cannot set timeout timestamp without enabling event time timeout in [map|flatMapGroupsWithState"
      )
    }
  }
}

/**
 * Spark's `TestGroupState`: a `GroupState` for unit-testing a state function, with the flags
 * the engine reads (`isUpdated`, `isRemoved`, `getTimeoutTimestampMs()`).
 *
 * @example
 * ```ts
 * import { TestGroupState } from "tributary-streaming"
 * const state = TestGroupState.create<number>(5, "ProcessingTimeTimeout", 1000, undefined, false)
 * state.setTimeoutDuration("10 seconds")
 * state.getTimeoutTimestampMs() // 11000
 * ```
 * @since 0.1.0
 */
export const TestGroupState = {
  create: <S>(
    optionalState: S | undefined,
    timeoutConf: GroupStateTimeout,
    batchProcessingTimeMs: number,
    eventTimeWatermarkMs: number | undefined,
    hasTimedOut: boolean
  ): GroupStateImpl<S> =>
    GroupStateImpl.createForStreaming(
      optionalState,
      batchProcessingTimeMs,
      eventTimeWatermarkMs ?? NO_TIMESTAMP,
      timeoutConf,
      hasTimedOut,
      eventTimeWatermarkMs !== undefined
    )
}
