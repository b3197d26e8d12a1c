/**
 * What the dashboard serves as JSON: one summary per streaming query (Spark UI's query table
 * plus the recent progress its charts draw) and one per DStream StreamingContext (Spark UI's
 * Streaming tab).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { SessionState, StreamingContextView } from "../../contracts/SessionState.ts"
import type { StreamingQuery } from "../../contracts/StreamingQuery.ts"
import type { StreamingQueryProgress } from "../../contracts/StreamingQueryProgress.ts"

/** One query as `/api/queries` reports it. */
export interface QuerySummary {
  readonly id: string
  readonly runId: string
  readonly name: string | null
  readonly active: boolean
  readonly status: string
  /** The error the query failed with, or `null`. */
  readonly exception: string | null
  /** The batch the query failed in (`StreamingQueryError.batchId`), or `null`. */
  readonly exceptionBatchId: number | null
  /** When it started (ISO 8601), or `null` when the dashboard did not see it start. */
  readonly startTime: string | null
  /** When it ended (ISO 8601), or `null` while it runs. */
  readonly endTime: string | null
  /** Milliseconds from start to end (or to now, while it runs). */
  readonly durationMs: number | null
  /** Spark UI's "Avg Input /sec": the mean of the recent batches' input rates, or `null` before the first batch. */
  readonly avgInputRowsPerSecond: number | null
  /** Spark UI's "Avg Process /sec". */
  readonly avgProcessedRowsPerSecond: number | null
  /** The id of the latest batch, or `null` before the first. */
  readonly latestBatchId: number | null
  readonly recentProgress: ReadonlyArray<StreamingQueryProgress>
}

/** One DStream StreamingContext as `/api/streaming-contexts` reports it. */
export interface StreamingContextSummary {
  readonly id: string
  readonly state: "INITIALIZED" | "ACTIVE" | "STOPPED"
  readonly batchDurationMs: number
  readonly startTime: number
  readonly completedBatches: number
  /** Means over the completed batches kept, in milliseconds (`null` before the first). */
  readonly avgSchedulingDelay: number | null
  readonly avgProcessingTime: number | null
  readonly avgTotalDelay: number | null
  /** Records per second over the completed batches kept (records / batch interval). */
  readonly avgInputRate: number | null
  readonly error: { readonly message: string; readonly batchTime: number | undefined } | null
  readonly batches: ReadonlyArray<ReturnType<StreamingContextView["batches"]>[number]>
  readonly receivers: ReturnType<StreamingContextView["receivers"]>
}

/** Start and end times the dashboard saw, by run id. */
export type QueryTimes = Map<string, { start: number; end: number | undefined }>

const mean = (xs: ReadonlyArray<number>): number | null =>
  xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length

/** Spark's StreamingQueryStatisticsPage averages a rate over the batches whose rate is a number. */
const meanRate = (
  ps: ReadonlyArray<StreamingQueryProgress>,
  f: (p: StreamingQueryProgress) => number
): number | null =>
  ps.length === 0 ? null : ps.reduce((n, p) => n + (Number.isFinite(f(p)) ? f(p) : 0), 0) / ps.length

const summarize = (q: StreamingQuery, active: boolean, times: QueryTimes, now: number): Effect.Effect<QuerySummary> =>
  Effect.gen(function* () {
    const status = yield* q.status()
    const error = yield* q.exception()
    const recentProgress = yield* q.recentProgress()
    const first = recentProgress[0]
    const seen = times.get(q.runId)
    const start = seen?.start ?? (first === undefined ? undefined : Date.parse(first.timestamp))
    const end = active ? undefined : seen?.end
    return {
      id: q.id,
      runId: q.runId,
      name: q.name,
      active,
      status: status.message,
      exception: error?.message ?? null,
      exceptionBatchId: error?.batchId ?? null,
      startTime: start === undefined ? null : new Date(start).toISOString(),
      endTime: end === undefined ? null : new Date(end).toISOString(),
      durationMs: start === undefined ? null : Math.max(0, (end ?? now) - start),
      avgInputRowsPerSecond: meanRate(recentProgress, (p) => p.inputRowsPerSecond),
      avgProcessedRowsPerSecond: meanRate(recentProgress, (p) => p.processedRowsPerSecond),
      latestBatchId: recentProgress.at(-1)?.batchId ?? null,
      recentProgress
    }
  })

/** Every query of the session: the active ones, then the finished ones (newest first). */
export const querySummaries = (
  state: SessionState,
  times: QueryTimes = new Map()
): Effect.Effect<ReadonlyArray<QuerySummary>> =>
  Effect.gen(function* () {
    const now = Date.now()
    const out: Array<QuerySummary> = []
    const seen = new Set<string>()
    for (const q of state.queries.active.values()) {
      seen.add(q.runId)
      out.push(yield* summarize(q, yield* q.isActive(), times, now))
    }
    for (const q of [...state.queries.terminated].reverse()) {
      if (seen.has(q.runId)) continue
      seen.add(q.runId)
      out.push(yield* summarize(q, false, times, now))
    }
    return out
  })

/** A StreamingContext's summary (Spark's StreamingPage: delays averaged over completed batches). */
export const streamingContextSummary = (view: StreamingContextView): StreamingContextSummary => {
  const batches = view.batches()
  const done = batches.filter((b) => b.status === "completed")
  const defined = (xs: ReadonlyArray<number | undefined>) => xs.filter((x): x is number => x !== undefined)
  return {
    id: view.id,
    state: view.state(),
    batchDurationMs: view.batchDurationMs,
    startTime: view.startTime,
    completedBatches: done.length,
    avgSchedulingDelay: mean(defined(done.map((b) => b.schedulingDelay))),
    avgProcessingTime: mean(defined(done.map((b) => b.processingDelay))),
    avgTotalDelay: mean(defined(done.map((b) => b.totalDelay))),
    avgInputRate: mean(done.map((b) => (b.numRecords * 1000) / view.batchDurationMs)),
    error: view.error() ?? null,
    batches,
    receivers: view.receivers()
  }
}

/** Every StreamingContext started in the session, newest first. */
export const streamingContextSummaries = (state: SessionState): ReadonlyArray<StreamingContextSummary> =>
  [...state.streamingContextViews].reverse().map(streamingContextSummary)
