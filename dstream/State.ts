/**
 * `State<S>` and `StateSpec`: the state handle and the specification of Spark's `mapWithState`
 * (`streaming/.../State.scala`, `StateSpec.scala`).
 *
 * @example
 * ```ts
 * import { StateSpec } from "tributary-streaming/dstream"
 * const spec = StateSpec.function((word: string, one: number | undefined, state) => {
 *   const sum = (one ?? 0) + (state.getOption() ?? 0)
 *   state.update(sum)
 *   return [word, sum] as const
 * }).timeout("30 seconds")
 * // pairs.mapWithState(spec) and .stateSnapshots()
 * ```
 * @since 0.1.0
 */
import type { RDD } from "./RDD.ts"
import { parseDurationMs } from "../core/Durations.ts"

/**
 * The state of one key inside a `mapWithState` function. Synchronous, like Spark's: the
 * function runs inside the batch's loop.
 *
 * @since 0.1.0
 */
export interface State<S> {
  /** Whether the key has state. */
  exists(): boolean
  /** The state; throws Spark's `NoSuchElementException("State is not set")` when there is none. */
  get(): S
  /** The state, or `undefined` when there is none. */
  getOption(): S | undefined
  /** Sets the state (not allowed after `remove()` or while the state is timing out). */
  update(newState: S): void
  /** Removes the state (not allowed twice, or while the state is timing out). */
  remove(): void
  /** True when the function is called because the key timed out (its value is then `undefined`). */
  isTimingOut(): boolean
}

/** @internal Spark's `StateImpl`: one instance re-wrapped for each key. */
export class StateImpl<S> implements State<S> {
  #state: S | undefined = undefined
  #defined = false
  #timingOut = false
  #updated = false
  #removed = false

  wrap(value: { readonly s: S } | undefined): void {
    this.#defined = value !== undefined
    this.#state = value?.s
    this.#timingOut = false
    this.#updated = false
    this.#removed = false
  }

  wrapTimingOutState(s: S): void {
    this.#state = s
    this.#defined = true
    this.#timingOut = true
    this.#updated = false
    this.#removed = false
  }

  exists(): boolean {
    return this.#defined
  }

  get(): S {
    if (!this.#defined) throw new Error("java.util.NoSuchElementException: State is not set")
    return this.#state as S
  }

  getOption(): S | undefined {
    return this.#defined ? this.#state : undefined
  }

  update(newState: S): void {
    if (this.#removed) throw new Error("requirement failed: Cannot update the state after it has been removed")
    if (this.#timingOut) throw new Error("requirement failed: Cannot update the state that is timing out")
    this.#state = newState
    this.#defined = true
    this.#updated = true
  }

  remove(): void {
    if (this.#timingOut) throw new Error("requirement failed: Cannot remove the state that is timing out")
    if (this.#removed) throw new Error("requirement failed: Cannot remove the state that has already been removed")
    this.#defined = false
    this.#state = undefined
    this.#updated = false
    this.#removed = true
  }

  isTimingOut(): boolean {
    return this.#timingOut
  }

  isUpdated(): boolean {
    return this.#updated
  }

  isRemoved(): boolean {
    return this.#removed
  }
}

/** The mapping function of `mapWithState`: `value` is `undefined` when the key is timing out. */
export type MappingFunction<K, V, S, U> = (key: K, value: V | undefined, state: State<S>) => U

/**
 * Spark's full mapping function: also gets the batch time (ms), and returns `undefined` (Scala's
 * `None`) for records that map to nothing.
 */
export type TimedMappingFunction<K, V, S, U> = (
  time: number,
  key: K,
  value: V | undefined,
  state: State<S>
) => U | undefined

/**
 * What `mapWithState` needs: the mapping function, and optionally a timeout (a key idle that
 * long is called once more with `isTimingOut()` and then dropped), initial state pairs and a
 * partition count. Immutable: each setter returns a new spec.
 *
 * @since 0.1.0
 */
export class StateSpec<K, V, S, U> {
  /**
   * The mapping function as Spark's full form: `undefined` results are dropped. A simple
   * function is wrapped so that every result is kept (Spark's `Some(mappingFunction(...))`).
   */
  readonly mappingFunction: TimedMappingFunction<K, V, S, U>
  /** Whether the function was given in the full form (results may be `undefined` = none). */
  readonly timed: boolean
  readonly timeoutMs: number | undefined
  readonly initialStatePairs: ReadonlyArray<readonly [K, S]> | undefined
  readonly partitions: number | undefined
  /** A timeout that is not a duration (reported when the stream starts). */
  readonly invalidTimeout: string | undefined

  private constructor(
    f: TimedMappingFunction<K, V, S, U>,
    timed: boolean,
    timeoutMs: number | undefined,
    initial: ReadonlyArray<readonly [K, S]> | undefined,
    partitions: number | undefined,
    invalidTimeout: string | undefined
  ) {
    this.mappingFunction = f
    this.timed = timed
    this.timeoutMs = timeoutMs
    this.initialStatePairs = initial
    this.partitions = partitions
    this.invalidTimeout = invalidTimeout
  }

  /**
   * A spec for `mapWithState` with this mapping function (Spark's `StateSpec.function`), in
   * either of Spark's forms: `(key, value, state) => mapped`, whose every result is emitted, or
   * — a function of four parameters — `(time, key, value, state) => mapped | undefined`, which
   * also gets the batch time and whose `undefined` results (Scala's `None`) are not emitted
   * (MapWithStateSuite "basic operations with advanced API", "state removing").
   */
  static function<K, V, S, U>(f: MappingFunction<K, V, S, U>): StateSpec<K, V, S, U>
  static function<K, V, S, U>(f: TimedMappingFunction<K, V, S, U>): StateSpec<K, V, S, U>
  static function<K, V, S, U>(f: (...args: Array<any>) => any): StateSpec<K, V, S, U> {
    if (f.length >= 4) return new StateSpec(f, true, undefined, undefined, undefined, undefined)
    const simple = f as MappingFunction<K, V, S, U>
    return new StateSpec(
      (_time, key, value, state) => simple(key, value, state),
      false,
      undefined,
      undefined,
      undefined,
      undefined
    )
  }

  /** Keys without data for this long time out (checked at the stream's checkpoint batches, as Spark). */
  timeout(idle: string | number | import("effect").Duration.Input): StateSpec<K, V, S, U> {
    const ms = parseDurationMs(idle)
    return new StateSpec(
      this.mappingFunction,
      this.timed,
      ms,
      this.initialStatePairs,
      this.partitions,
      ms === undefined ? String(idle) : undefined
    )
  }

  /** Initial state per key, as pairs or an RDD of pairs. */
  initialState(pairs: Iterable<readonly [K, S]> | RDD<readonly [K, S]>): StateSpec<K, V, S, U> {
    const list =
      "partitions" in (pairs as object)
        ? (pairs as RDD<readonly [K, S]>).collect()
        : Array.from(pairs as Iterable<readonly [K, S]>)
    return new StateSpec(this.mappingFunction, this.timed, this.timeoutMs, list, this.partitions, this.invalidTimeout)
  }

  /** Kept for Spark compatibility; batches here are one partition per key group. */
  numPartitions(n: number): StateSpec<K, V, S, U> {
    return new StateSpec(
      this.mappingFunction,
      this.timed,
      this.timeoutMs,
      this.initialStatePairs,
      n,
      this.invalidTimeout
    )
  }
}
