/**
 * Drives a streaming physical plan batch by batch the way Spark's `MicroBatchExecution` does,
 * without the engine: batch N runs with the watermark computed after batch N - 1 for eviction and
 * batch N - 1's own watermark for late events; after a batch the watermark is updated from the
 * event-time statistics (Spark's `WatermarkTracker`), and while `shouldRunAnotherBatch` says so a
 * batch without data runs (Spark's no-data batches). State lives in an `InMemoryStateStoreProvider`,
 * so a new driver over the same provider is a restart.
 */
import { Effect, Result } from "effect"
import { ConnectorError } from "../../../../core/Errors.ts"
import * as Optimizer from "../../../../core/optimizer/Optimizer.ts"
import type { InternalRow } from "../../../../core/Row.ts"
import type { OutputMode } from "../../../../core/Streaming.ts"
import type { DataFrame } from "../../../../structured/api/DataFrame.ts"
import { WatermarkTracker } from "../../../../structured/execution/WatermarkTracker.ts"
import { type EventTimeStats, execute } from "../../../../structured/physical/Execute.ts"
import { plan as planLogical } from "../../../../structured/physical/Planner.ts"
import * as P from "../../../../structured/physical/SparkPlan.ts"
import type { OperatorProgress } from "../../../../structured/physical/stateful/StatefulContext.ts"
import { shouldRunAnotherBatch } from "../../../../structured/physical/stateful/StatefulOperators.ts"
import { InMemoryStateStoreProvider } from "./InMemoryStateStore.ts"

/** The streaming physical plan of a DataFrame (analyzed, optimized, planned with `streaming: true`). */
export const planStreaming = (df: Pick<DataFrame, "analyzed">): P.SparkPlan => {
  const analyzed = df.analyzed()
  if (Result.isFailure(analyzed)) throw analyzed.failure
  return planLogical(Optimizer.optimize(analyzed.success), { streaming: true })
}

const watermarkNodes = (p: P.SparkPlan): Array<P.EventTimeWatermarkExec> => {
  const out: Array<P.EventTimeWatermarkExec> = []
  const walk = (x: P.SparkPlan): void => {
    if (x._tag === "EventTimeWatermarkExec") out.push(x)
    for (const c of P.children(x)) walk(c)
  }
  walk(p)
  return out
}

export interface DriverOptions {
  readonly provider?: InMemoryStateStoreProvider
  /** Where a restarted query resumes. */
  readonly batchId?: number
  readonly watermarkMs?: number
  readonly lastBatchWatermarkMs?: number
  readonly noDataBatches?: boolean
}

/** One executed batch: its id, the watermarks it ran with, its output and its operators' progress. */
export interface BatchRun {
  readonly batchId: number
  readonly lateMs: number | undefined
  readonly evictionMs: number | undefined
  readonly rows: ReadonlyArray<InternalRow>
  readonly progress: ReadonlyMap<number, OperatorProgress>
}

export class StreamDriver {
  readonly plan: P.SparkPlan
  readonly mode: OutputMode
  readonly provider: InMemoryStateStoreProvider
  readonly tracker = new WatermarkTracker("min")
  readonly batches: Array<BatchRun> = []
  /** The batches the last `addData` ran (its data batch and the no-data batches after it). */
  lastAdded: ReadonlyArray<BatchRun> = []
  readonly #nodes: Array<P.EventTimeWatermarkExec>
  readonly #noData: boolean
  batchId: number
  /** The watermark the last batch ran with (the next batch's late-events watermark). */
  lastBatchWatermarkMs: number

  constructor(plan: P.SparkPlan, mode: OutputMode, options: DriverOptions = {}) {
    this.plan = plan
    this.mode = mode
    this.provider = options.provider ?? new InMemoryStateStoreProvider()
    this.#nodes = watermarkNodes(plan)
    this.#noData = options.noDataBatches ?? true
    this.batchId = options.batchId ?? 0
    this.lastBatchWatermarkMs = options.lastBatchWatermarkMs ?? 0
    if (options.watermarkMs !== undefined) this.tracker.restore(options.watermarkMs)
  }

  get hasWatermark(): boolean {
    return this.#nodes.length > 0
  }

  /** The progress of the last batch that ran. */
  get lastProgress(): ReadonlyMap<number, OperatorProgress> {
    return this.batches[this.batches.length - 1]?.progress ?? new Map()
  }

  /** The progress of operator `id` in the last batch that had data (Spark's `assertNumStateRows` looks there). */
  progressOf(id = 0): OperatorProgress | undefined {
    return this.lastProgress.get(id)
  }

  /** Runs exactly one batch over `rows` (every streaming source gives these rows). */
  runBatch(rows: ReadonlyArray<InternalRow>): Effect.Effect<BatchRun, unknown> {
    return Effect.gen({ self: this }, function* () {
      const lateMs = this.hasWatermark ? this.lastBatchWatermarkMs : undefined
      const evictionMs = this.hasWatermark ? this.tracker.currentMs : undefined
      const progress = new Map<number, OperatorProgress>()
      const stats = new Map<P.EventTimeWatermarkExec, EventTimeStats>()
      const out = yield* execute(this.plan, {
        currentTimestampMs: 0,
        readRelation: (rel) =>
          Effect.fail(
            new ConnectorError({ connector: rel.format, domain: "user", retryable: false, message: "no files" })
          ),
        streamingRows: () => Effect.succeed(rows),
        onEventTime: (node, s) => {
          stats.set(node, s)
        },
        stateful: this.provider.context({
          batchId: this.batchId,
          outputMode: this.mode,
          watermarkForLateEventsMs: lateMs,
          watermarkForEvictionMs: evictionMs,
          progress
        })
      })
      this.tracker.update(
        this.#nodes.map((n) => stats.get(n)),
        this.#nodes.map((n) => n.delayMs)
      )
      if (evictionMs !== undefined) this.lastBatchWatermarkMs = evictionMs
      const run: BatchRun = { batchId: this.batchId, lateMs, evictionMs, rows: out, progress }
      this.batches.push(run)
      this.batchId++
      return run
    })
  }

  /**
   * Spark's `AddData` + process all available: a batch with `rows`, then batches without data
   * while the new watermark lets a stateful operator emit or evict. Returns every output row.
   */
  addData(rows: ReadonlyArray<InternalRow>): Effect.Effect<ReadonlyArray<InternalRow>, unknown> {
    return Effect.gen({ self: this }, function* () {
      const first = yield* this.runBatch(rows)
      const runs = [first]
      const out = [...first.rows]
      while (
        this.#noData &&
        this.hasWatermark &&
        shouldRunAnotherBatch(this.plan, this.tracker.currentMs, this.lastBatchWatermarkMs, this.mode)
      ) {
        const next = yield* this.runBatch([])
        runs.push(next)
        out.push(...next.rows)
      }
      this.lastAdded = runs
      return out
    })
  }

  /** The same query restarted from this one's state and watermark, with a (re)planned plan. */
  restart(plan: P.SparkPlan = this.plan): StreamDriver {
    return new StreamDriver(plan, this.mode, {
      provider: this.provider,
      batchId: this.batchId,
      watermarkMs: this.tracker.currentMs,
      lastBatchWatermarkMs: this.lastBatchWatermarkMs,
      noDataBatches: this.#noData
    })
  }
}

/**
 * Spark's `StateStoreMetricsTest` view of operator `id` after the last `addData`: the total of
 * the last batch, and updated, dropped-by-watermark and removed rows summed over the batches it
 * ran (no-data batches included).
 */
export const sinceLastAdd = (d: StreamDriver, id = 0) => {
  const ps = d.lastAdded.map((b) => b.progress.get(id))
  const sum = (f: (p: OperatorProgress) => number) => ps.reduce((n, p) => n + (p === undefined ? 0 : f(p)), 0)
  return {
    total: ps[ps.length - 1]?.numRowsTotal,
    updated: sum((p) => p.numRowsUpdated),
    droppedByWatermark: sum((p) => p.numRowsDroppedByWatermark),
    removed: sum((p) => p.numRowsRemoved),
    custom: (name: string) => sum((p) => p.customMetrics[name] ?? 0)
  }
}

/** Rows sorted for order-insensitive comparison (Spark's `CheckAnswer` / `CheckNewAnswer`). */
export const sorted = (rows: ReadonlyArray<InternalRow>): Array<InternalRow> =>
  [...rows].sort((a, b) => {
    const x = JSON.stringify(a)
    const y = JSON.stringify(b)
    return x < y ? -1 : x > y ? 1 : 0
  })
