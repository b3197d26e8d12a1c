/**
 * Shared helpers of the end-to-end streaming suites (ports of Spark's `StateStoreMetricsTest`
 * and the private helpers of `EventTimeWatermarkSuite`), as `testStream` actions.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { Session } from "../../../mod.ts"
import type { StreamingQuery } from "../../../structured/contracts/StreamingQuery.ts"
import type { StreamingQueryProgress } from "../../../structured/contracts/StreamingQueryProgress.ts"
import { AssertOnQuery, type StreamAction } from "../../../structured/testing.ts"

/** The two state store providers: every key script runs with both. */
export const providers = [
  { name: "DuckDB state store", layer: () => Session.layer() },
  { name: "file state store", layer: () => Session.layer({ stateStore: "memory" }) }
] as const

/** Spark's `formatTimestamp` of `EventTimeWatermarkSuite`: seconds as an ISO-8601 UTC string. */
export const iso = (seconds: number): string => new Date(seconds * 1000).toISOString()

/** A fresh temporary folder, and its removal. */
export const tempDir = (): Effect.Effect<string> => Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-e2e-")))

export const removeDir = (dir: string): Effect.Effect<void> =>
  Effect.promise(() => rm(dir, { recursive: true, force: true }))

/** The batch ids of a checkpoint's commit log. */
export const commitIds = (checkpoint: string): Effect.Effect<ReadonlyArray<number>> =>
  Effect.promise(async () => {
    const names = await readdir(join(checkpoint, "commits")).catch(() => [] as Array<string>)
    return names
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .sort((a, b) => a - b)
  })

/** Spark's `commitLog.purge(threshold)`: removes the commit entries below `threshold`. */
export const purgeCommits = (checkpoint: string, threshold: number): Effect.Effect<void> =>
  Effect.flatMap(commitIds(checkpoint), (ids) =>
    Effect.promise(async () => {
      for (const id of ids) if (id < threshold) await rm(join(checkpoint, "commits", String(id)), { force: true })
    })
  )

/**
 * Waits until the query's loop is idle (waiting for data or for its next trigger) with no batch
 * pending: after `AdvanceClock`, the batches the clock released have run.
 */
export const awaitQuiescent = (q: StreamingQuery): Effect.Effect<void, unknown> =>
  "awaitQuiescent" in q
    ? (q as unknown as { readonly awaitQuiescent: () => Effect.Effect<void, unknown> }).awaitQuiescent()
    : q.processAllAvailable()

const fail = (message: string): Effect.Effect<never, Error> => Effect.fail(new Error(message))

const progressOf = (q: StreamingQuery) => Effect.flatMap(q.processAllAvailable(), () => q.recentProgress())

const sum = (rows: ReadonlyArray<ReadonlyArray<number>>, n: number): Array<number> => {
  const out = new Array<number>(n).fill(0)
  for (const r of rows) for (let i = 0; i < n; i++) out[i] += r[i] ?? 0
  return out
}

const same = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) =>
  a.length === b.length && a.every((x, i) => x === b[i])

/**
 * Spark's `StateStoreMetricsTest`, one per script: `assertNumStateRows` checks the state rows of
 * the last batch and the updated / dropped / removed rows summed over the batches since the last
 * check (only progresses with the same number of state operators count, so idle triggers are
 * skipped), and `assertStateOperatorCustomMetric` sums a custom metric the same way. A restart
 * (a new run id) starts over, as Spark's check of `q.ne(lastQuery)`.
 */
export const stateMetrics = () => {
  let lastChecked = -1
  let lastRun: string | undefined

  const sinceLastCheck = (q: StreamingQuery, ps: ReadonlyArray<StreamingQueryProgress>) => {
    if (q.runId !== lastRun) lastChecked = -1
    lastRun = q.runId
    const withOps = ps.filter((p) => p.stateOperators.length > 0)
    const n = withOps.length === 0 ? 0 : withOps[withOps.length - 1].stateOperators.length
    const recent = ps.slice(lastChecked + 1).filter((p) => p.stateOperators.length === n && n > 0)
    return { recent, n, lastIndex: ps.length - 1 }
  }

  const assertNumStateRows = (expected: {
    readonly total: ReadonlyArray<number> | number
    readonly updated: ReadonlyArray<number> | number
    readonly droppedByWatermark?: ReadonlyArray<number> | number
    readonly removed?: ReadonlyArray<number> | number
  }): StreamAction => {
    const list = (v: ReadonlyArray<number> | number | undefined): ReadonlyArray<number> | undefined =>
      v === undefined ? undefined : typeof v === "number" ? [v] : v
    const total = list(expected.total) ?? []
    const updated = list(expected.updated) ?? []
    const dropped = list(expected.droppedByWatermark) ?? total.map(() => 0)
    const removed = list(expected.removed)
    return AssertOnQuery(
      (q) =>
        Effect.gen(function* () {
          const ps = yield* progressOf(q)
          const { recent, n, lastIndex } = sinceLastCheck(q, ps)
          if (recent.length === 0) return yield* fail("no progress with state operators since the last check")
          const debug = `\n${JSON.stringify(
            recent.map((p) => ({ batchId: p.batchId, stateOperators: p.stateOperators })),
            null,
            1
          )}`
          const last = recent[recent.length - 1]
          const actualTotal = last.stateOperators.map((o) => o.numRowsTotal)
          if (!same(actualTotal, total)) return yield* fail(`total ${actualTotal} != ${total}${debug}`)
          const actualUpdated = sum(
            recent.map((p) => p.stateOperators.map((o) => o.numRowsUpdated)),
            n
          )
          if (!same(actualUpdated, updated)) return yield* fail(`updated ${actualUpdated} != ${updated}${debug}`)
          const actualDropped = sum(
            recent.map((p) => p.stateOperators.map((o) => o.numRowsDroppedByWatermark)),
            n
          )
          if (!same(actualDropped, dropped)) return yield* fail(`dropped ${actualDropped} != ${dropped}${debug}`)
          if (removed !== undefined) {
            const actualRemoved = sum(
              recent.map((p) => p.stateOperators.map((o) => o.numRowsRemoved)),
              n
            )
            if (!same(actualRemoved, removed)) return yield* fail(`removed ${actualRemoved} != ${removed}${debug}`)
          }
          lastChecked = lastIndex
          return true
        }).pipe(Effect.tapError((e) => Effect.logError(e.message))),
      `state rows total=${total} updated=${updated} dropped=${dropped} removed=${removed ?? "-"}`
    )
  }

  const assertStateOperatorCustomMetric = (metric: string, expected: number, operatorIndex = 0): StreamAction =>
    AssertOnQuery(
      (q) =>
        Effect.gen(function* () {
          const ps = yield* progressOf(q)
          const { recent, lastIndex } = sinceLastCheck(q, ps)
          const values = recent.map((p) => p.stateOperators[operatorIndex]?.customMetrics[metric] ?? Number.NaN)
          const total = values.reduce((a, b) => a + b, 0)
          if (total !== expected) return yield* fail(`${metric}: ${values.join(" + ")} != ${expected}`)
          lastChecked = lastIndex
          return true
        }).pipe(Effect.tapError((e) => Effect.logError(e.message))),
      `custom metric ${metric} = ${expected}`
    )

  const assertStateOperatorProgressMetric = (
    operatorName: string,
    numShufflePartitions: number,
    numStateStoreInstances: number,
    operatorIndex = 0
  ): StreamAction =>
    AssertOnQuery(
      (q) =>
        Effect.gen(function* () {
          const ps = yield* progressOf(q)
          const { recent, lastIndex } = sinceLastCheck(q, ps)
          const op = recent[recent.length - 1]?.stateOperators[operatorIndex]
          lastChecked = lastIndex
          return (
            op !== undefined &&
            op.operatorName === operatorName &&
            op.numShufflePartitions === numShufflePartitions &&
            op.numStateStoreInstances === numStateStoreInstances
          )
        }),
      `operator ${operatorName}`
    )

  return { assertNumStateRows, assertStateOperatorCustomMetric, assertStateOperatorProgressMetric }
}

/**
 * `EventTimeWatermarkSuite.assertNumRowsDroppedByWatermark`: the last progress that read input
 * (Spark skips those with `inputRowsPerSecond == 0`; tributary's first trigger of a run reports
 * an input rate of 0, so the filter here is on `numInputRows`).
 */
export const assertNumRowsDroppedByWatermark = (expected: number): StreamAction =>
  AssertOnQuery(
    (q) =>
      Effect.map(progressOf(q), (ps) => {
        const withData = ps.filter((p) => p.numInputRows > 0)
        return withData[withData.length - 1]?.stateOperators[0]?.numRowsDroppedByWatermark === expected
      }),
    `numRowsDroppedByWatermark = ${expected}`
  )

/** `EventTimeWatermarkSuite.assertNumStateRows`: the state rows of the last progress. */
export const assertNumStateRowsTotal = (expected: number): StreamAction =>
  AssertOnQuery(
    (q) => Effect.map(progressOf(q), (ps) => ps[ps.length - 1]?.stateOperators[0]?.numRowsTotal === expected),
    `numRowsTotal = ${expected}`
  )

/** `EventTimeWatermarkSuite.assertEventStats`: the event-time stats of the last batch with input. */
export const assertEventStats = (
  check: (eventTime: Readonly<Record<string, string>>) => boolean,
  message = "event-time stats"
): StreamAction =>
  AssertOnQuery(
    (q) =>
      Effect.map(q.recentProgress(), (ps) => {
        const withData = ps.filter((p) => p.numInputRows > 0)
        const last = withData[withData.length - 1]
        return last !== undefined && check(last.eventTime)
      }),
    message
  )

/** `assertEventStats(min, max, avg, wtrmark)` in seconds. */
export const assertEventStatsSeconds = (min: number, max: number, avg: number, watermark: number): StreamAction =>
  assertEventStats(
    (e) => e.min === iso(min) && e.max === iso(max) && e.avg === iso(avg) && e.watermark === iso(watermark),
    `eventTime min=${min} max=${max} avg=${avg} watermark=${watermark}`
  )
