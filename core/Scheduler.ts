/**
 * The trigger loop every streaming query (and later every StreamingContext) runs on, driven by
 * Effect's `Clock` so that the test clock controls it.
 *
 * `ProcessingTime(interval)` follows Spark's `ProcessingTimeExecutor`: a trigger that starts at
 * `t` schedules the next one at the first grid point after `t`; a batch that runs past that
 * point starts the next one at once, after which the grid realigns. The default trigger runs
 * the next batch as soon as data is there. Each query is its own fiber and yields between
 * batches, so many queries share the process without one starving the others.
 *
 * @since 0.1.0
 */
import { Clock, Effect } from "effect"
import { nextBatchTime, type Trigger } from "./Trigger.ts"

/** What one trigger did: ran a batch, found nothing to do, or asks the loop to end. */
export type StepResult = "ran" | "idle" | "stop"

/**
 * Runs `step` under `trigger` until it returns `"stop"` (or, for `Once`/`AvailableNow`, until
 * their end). `waitForData` is awaited between idle steps of the default trigger; it should
 * resolve when a source may have new data or a poll interval has passed.
 */
export const runTrigger = <E, R>(
  trigger: Trigger,
  step: Effect.Effect<StepResult, E, R>,
  waitForData: Effect.Effect<void, never, R>,
  /** How the loop waits for the next trigger time (the engine wraps it to report "waiting"). */
  sleep: (ms: number) => Effect.Effect<void, never, R> = (ms) => Effect.sleep(ms)
): Effect.Effect<void, E, R> => {
  switch (trigger._tag) {
    case "Once":
      return Effect.asVoid(step)
    case "AvailableNow":
      return Effect.gen(function* () {
        for (;;) {
          const r = yield* step
          if (r !== "ran") return
          yield* Effect.yieldNow
        }
      })
    case "ProcessingTime":
    case "Continuous": {
      const interval = trigger.intervalMs
      return Effect.gen(function* () {
        for (;;) {
          const start = yield* Clock.currentTimeMillis
          const r = yield* step
          if (r === "stop") return
          if (interval <= 0) {
            if (r === "idle") yield* waitForData
            else yield* Effect.yieldNow
            continue
          }
          const now = yield* Clock.currentTimeMillis
          const next = nextBatchTime(start, interval)
          if (now < next) yield* sleep(next - now)
          else yield* Effect.yieldNow
        }
      })
    }
  }
}
