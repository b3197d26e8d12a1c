/**
 * What a streaming query reports about itself (Spark's `ProgressReporter`): its status (the
 * message and the two flags of `query.status()`), the buffer behind `lastProgress` and
 * `recentProgress`, and the `eventTime` part of a progress record. `StreamExecution` holds one
 * per query; both engines report through it.
 *
 * @since 0.1.0
 */
import type { EventTimeStats } from "../physical/Execute.ts"
import type { EventTimeWatermarkExec } from "../physical/SparkPlan.ts"
import {
  type StreamingQueryProgress,
  type StreamingQueryStatus,
  withJsonToString
} from "../contracts/StreamingQueryProgress.ts"

/** An instant as progress writes it: ISO 8601 in UTC. */
export const iso = (ms: number): string => new Date(ms).toISOString()

export class ProgressReporter {
  /** Spark's `updateStatusMessage`: what `status().message` says now. */
  statusMessage = "Initializing sources"
  isDataAvailable = false
  isTriggerActive = false
  readonly #buffer: Array<StreamingQueryProgress> = []
  /** `spark.sql.streaming.numRecentProgressUpdates`, read when a progress is added. */
  readonly #retention: () => number

  constructor(retention: () => number) {
    this.#retention = retention
  }

  /** A snapshot of the status (`toString` is Spark's JSON). */
  status(): StreamingQueryStatus {
    return withJsonToString({
      message: this.statusMessage,
      isDataAvailable: this.isDataAvailable,
      isTriggerActive: this.isTriggerActive
    })
  }

  /**
   * Adds to `recentProgress`. As Spark's `ProgressReporter.addNewProgress`, the buffer is
   * trimmed while it holds `spark.sql.streaming.numRecentProgressUpdates` or more entries, so
   * it keeps at most that number minus one (99 by default).
   */
  add(progress: StreamingQueryProgress): void {
    const limit = this.#retention()
    this.#buffer.push(progress)
    while (this.#buffer.length > 0 && this.#buffer.length >= limit) this.#buffer.shift()
  }

  last(): StreamingQueryProgress | null {
    return this.#buffer[this.#buffer.length - 1] ?? null
  }

  recent(): ReadonlyArray<StreamingQueryProgress> {
    return this.#buffer.slice()
  }
}

/**
 * Spark's `eventTime` progress (`ProgressReporter.extractExecutionStats`): the batch's
 * watermark, and avg/max/min of the event times of the FIRST watermark node (in a pre-order
 * walk of the plan, Spark's `executedPlan.collect { … }.headOption`) that saw rows in this
 * batch — not a merge over all nodes; the average is truncated (`stats.avg.toLong`). Empty
 * for a plan without watermark nodes.
 *
 * @since 0.1.0
 */
export const eventTimeProgress = (
  nodesPreOrder: ReadonlyArray<EventTimeWatermarkExec>,
  stats: ReadonlyMap<EventTimeWatermarkExec, EventTimeStats>,
  watermarkMs: number
): Readonly<Record<string, string>> => {
  if (nodesPreOrder.length === 0) return {}
  for (const node of nodesPreOrder) {
    const s = stats.get(node)
    if (s === undefined || s.count === 0) continue
    return { avg: iso(Math.trunc(s.sum / s.count)), max: iso(s.max), min: iso(s.min), watermark: iso(watermarkMs) }
  }
  return { watermark: iso(watermarkMs) }
}
