/**
 * The event-time watermark of a streaming query (Spark's `WatermarkTracker`).
 *
 * After each batch, every watermark node that saw data proposes `max event time - delay`; a
 * node's watermark only moves forward, and a node that has not seen data yet counts as 0. The
 * query's watermark is the minimum of the nodes' (policy `min`, the default) or their maximum
 * (policy `max`), and never moves back. The watermark computed at the end of batch N is the one
 * batch N + 1 runs with (it is logged in N + 1's offsets and in N's commit).
 *
 * @since 0.1.0
 */
import type { EventTimeStats } from "../physical/Execute.ts"

export type MultipleWatermarkPolicy = "min" | "max"

/** Spark's `MultipleWatermarkPolicy` conf value, case-insensitive; `undefined` when invalid. */
export const parsePolicy = (value: string | undefined): MultipleWatermarkPolicy | undefined => {
  const v = (value ?? "min").toLowerCase()
  return v === "min" || v === "max" ? v : undefined
}

export class WatermarkTracker {
  readonly policy: MultipleWatermarkPolicy
  #global: number
  readonly #perNode = new Map<number, number>()

  constructor(policy: MultipleWatermarkPolicy, initialMs = 0) {
    this.policy = policy
    this.#global = initialMs
  }

  /** The current global watermark in ms. */
  get currentMs(): number {
    return this.#global
  }

  /** Restores the watermark a checkpoint recorded (a restart). */
  restore(ms: number): void {
    this.#global = ms
  }

  /**
   * Folds one batch's statistics in; `stats[i]` is node i's (in a fixed walk of the plan),
   * `delays[i]` its delay. Returns whether the global watermark moved.
   */
  update(stats: ReadonlyArray<EventTimeStats | undefined>, delays: ReadonlyArray<number>): boolean {
    if (delays.length === 0) return false
    for (let i = 0; i < delays.length; i++) {
      const s = stats[i]
      if (s !== undefined && s.count > 0) {
        const proposed = s.max - delays[i]
        const prev = this.#perNode.get(i)
        if (prev === undefined || proposed > prev) this.#perNode.set(i, proposed)
      } else if (!this.#perNode.has(i)) {
        this.#perNode.set(i, 0)
      }
    }
    const values = [...this.#perNode.values()]
    const chosen = this.policy === "min" ? Math.min(...values) : Math.max(...values)
    if (chosen > this.#global) {
      this.#global = chosen
      return true
    }
    return false
  }
}
