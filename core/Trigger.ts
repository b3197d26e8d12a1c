/**
 * Triggers: when a streaming query runs its next micro-batch (Spark's `Trigger`).
 *
 * - no trigger (`Trigger.Default`): the next batch as soon as new data is there;
 * - `Trigger.ProcessingTime(interval)`: batches on a fixed grid of `interval`; a batch that
 *   runs late starts the next one at once, then the grid realigns (Spark's `ProcessingTimeExecutor`);
 * - `Trigger.Once()`: one batch of everything available, then stop (deprecated in Spark 3.4);
 * - `Trigger.AvailableNow()`: everything available at start, in several batches that respect
 *   the sources' read limits, then stop;
 * - `Trigger.Continuous(checkpointInterval)`: continuous processing with epochs.
 *
 * @example
 * ```ts
 * import { Trigger } from "tributary-streaming"
 * const every = Trigger.ProcessingTime("10 seconds")
 * ```
 * @since 0.1.0
 */
import type { Duration } from "effect"
import { type IntervalString, parseDurationMs } from "./Durations.ts"

export type Trigger =
  | { readonly _tag: "ProcessingTime"; readonly intervalMs: number }
  | { readonly _tag: "Once" }
  | { readonly _tag: "AvailableNow" }
  | { readonly _tag: "Continuous"; readonly intervalMs: number }

/**
 * What `Trigger.ProcessingTime` and `Trigger.Continuous` take: milliseconds, an Effect
 * `Duration` (or any non-string `Duration.Input`: a `DurationObject`, nanoseconds as a bigint,
 * `[seconds, nanos]`), or a Spark interval string checked by {@link IntervalString}
 * (`"1 second"`, `"10 seconds"`, `"interval 5 minutes"`); a misspelled literal is a compile error.
 * Effect's `"Infinity"` passes, so that any `Duration.Input` does, and fails when the query starts.
 *
 * @since 0.6.0
 */
export type TriggerInterval<I> = I extends "Infinity" | "-Infinity" ? I : I extends string ? IntervalString<I> : I

const intervalOf = (interval: Duration.Input | string | number): number => {
  const ms = parseDurationMs(interval)
  // An invalid interval is kept as NaN and rejected by `start()` (builders never throw).
  return ms === undefined ? Number.NaN : ms
}

export const Trigger = {
  /** Micro-batches every `interval` (`"1 second"`, `1000`, an Effect duration). `0` means as fast as data comes. */
  ProcessingTime: <const I extends Duration.Input | string>(interval: TriggerInterval<I>): Trigger => ({
    _tag: "ProcessingTime",
    intervalMs: intervalOf(interval)
  }),
  /** One micro-batch of everything available, then stop. */
  Once: (): Trigger => ({ _tag: "Once" }),
  /** Everything available at start, in batches that respect read limits, then stop. */
  AvailableNow: (): Trigger => ({ _tag: "AvailableNow" }),
  /** Continuous processing; `checkpointInterval` is how often epochs are committed. */
  Continuous: <const I extends Duration.Input | string>(checkpointInterval: TriggerInterval<I>): Trigger => ({
    _tag: "Continuous",
    intervalMs: intervalOf(checkpointInterval)
  }),
  /** The default: no trigger, next batch as soon as data is there (`ProcessingTime(0)`). */
  Default: { _tag: "ProcessingTime", intervalMs: 0 } as Trigger
}

/** Spark's `ProcessingTimeExecutor.nextBatchTime`: the next grid point strictly after `now`. */
export const nextBatchTime = (nowMs: number, intervalMs: number): number =>
  intervalMs === 0 ? nowMs : Math.floor(nowMs / intervalMs) * intervalMs + intervalMs

/** Spark's description of a trigger, as `toString` gives it. */
export const describe = (t: Trigger): string => {
  switch (t._tag) {
    case "ProcessingTime":
      return `ProcessingTimeTrigger(${t.intervalMs})`
    case "Once":
      return "OneTimeTrigger"
    case "AvailableNow":
      return "AvailableNowTrigger"
    case "Continuous":
      return `ContinuousTrigger(${t.intervalMs})`
  }
}
