/**
 * Runs a physical plan over one batch of rows.
 *
 * Effect orchestrates, loops compute: reading the sources is an Effect (the session reads files
 * through DuckDB, the streaming engine supplies a micro-batch's rows), and every operator above
 * them is one synchronous loop over an array of positional rows. Expressions are compiled into
 * closures, never interpreted per row: the stateless operators (`StatelessOperators.ts`) and the
 * stateful aggregation once per query (per plan node), the others once per `execute`.
 *
 * A user function (`filter(f)`, `map(f)`, `flatMap(f)`) that throws is a bug in the user's code:
 * the batch dies with the thrown value (`Effect.die`), which the streaming layer wraps in a
 * `StreamingQueryError`.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { type CompileContext, compile, compilePredicate, compileProjection, dataTypeOf } from "../../core/Compile.ts"
import { type CalendarInterval, parseInterval } from "../../core/Durations.ts"
import { ConnectorError, type StateStoreError } from "../../core/Errors.ts"
import type * as E from "../../core/Expression.ts"
import { type AggregateImpl, makeAggregate } from "../../core/functions/Aggregates.ts"
import { windowRows } from "./WindowExec.ts"
import type { DataSourceRelation, JoinType, StreamingRelation } from "../../core/LogicalPlan.ts"
import { isDeterministic } from "../../core/optimizer/Optimizer.ts"
import { comparator } from "../../core/Ordering.ts"
import type { InternalRow } from "../../core/Row.ts"
import { NO_KEY, groupingKey, isDirectKey, joinKey, normalizer } from "./HashKeys.ts"
import { setOperationRows } from "./SetOperationExec.ts"
import type * as P from "./SparkPlan.ts"
import { cachedChain } from "./StatelessOperators.ts"
import { executeStatefulAggregate } from "./stateful/StatefulAggregateExec.ts"
import { fusedWindow } from "./stateful/FusedWindow.ts"
import { batchStatefulContext, type StatefulContext } from "./stateful/StatefulContext.ts"
import { executeStreamingDeduplicate } from "./stateful/StreamingDeduplicateExec.ts"
import { executeBatchGroupsWithState, executeFlatMapGroupsWithState } from "./stateful/FlatMapGroupsWithStateExec.ts"
import { executeTransformWithState } from "./stateful/TransformWithStateExec.ts"
import { executeStreamingSymmetricHashJoin } from "./stateful/StreamingSymmetricHashJoinExec.ts"

/**
 * What a physical plan needs from its surroundings.
 *
 * @since 0.1.0
 */
export interface ExecContext {
  /** The time `current_timestamp()` returns: the batch timestamp, or the action's start. */
  readonly currentTimestampMs: number
  /** Reads a bounded file source; supplied by the session (DuckDB). */
  readonly readRelation: (rel: DataSourceRelation) => Effect.Effect<ReadonlyArray<InternalRow>, ConnectorError>
  /** The rows of a streaming source for the current micro-batch (supplied by the streaming engine later); for batch plans it fails. */
  readonly streamingRows?: (rel: StreamingRelation) => Effect.Effect<ReadonlyArray<InternalRow>, ConnectorError>
  /**
   * Streaming only: told the event-time statistics of the rows that passed each watermark node
   * in this batch (Spark's `EventTimeStats`: the watermark of the next batch is computed from
   * `max`; progress reports `min`, `max`, `avg`).
   */
  readonly onEventTime?: (node: P.EventTimeWatermarkExec, stats: EventTimeStats) => void
  /**
   * Streaming only: the batch's state (batch id, output mode, watermarks, state stores, progress)
   * for the stateful operators (`StatefulAggregateExec`, `StreamingDeduplicateExec`). A plan with
   * stateful operators run without it dies: it is a streaming plan run outside a streaming query.
   */
  readonly stateful?: StatefulContext
}

/** Spark's `EventTimeStats` of one batch at one watermark node (times in ms; `count` of non-null times). */
export interface EventTimeStats {
  readonly max: number
  readonly min: number
  readonly sum: number
  readonly count: number
}

/**
 * Runs `plan` and returns its rows, positional and ordered like `plan.output`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { plan } from "./Planner.ts"
 * import { execute } from "./Execute.ts"
 * // `analyzed`: an analyzed and optimized logical plan
 * const rows = await Effect.runPromise(execute(plan(analyzed), {
 *   currentTimestampMs: Date.now(),
 *   readRelation: () => Effect.succeed([])
 * }))
 * ```
 * @since 0.1.0
 */
export const execute: {
  /** With a `StatefulContext`, stateful operators read and write state and can fail with `StateStoreError`. */
  (
    plan: P.SparkPlan,
    ctx: ExecContext & { readonly stateful: StatefulContext }
  ): Effect.Effect<ReadonlyArray<InternalRow>, ConnectorError | StateStoreError>
  /** Without one (a batch plan), no state store is touched and no `StateStoreError` can arise. */
  (
    plan: P.SparkPlan,
    ctx: ExecContext & { readonly stateful?: undefined }
  ): Effect.Effect<ReadonlyArray<InternalRow>, ConnectorError>
  (plan: P.SparkPlan, ctx: ExecContext): Effect.Effect<ReadonlyArray<InternalRow>, ConnectorError | StateStoreError>
} = (plan: P.SparkPlan, ctx: ExecContext): Effect.Effect<ReadonlyArray<InternalRow>, never> =>
  run(plan, ctx, { currentTimestampMs: ctx.currentTimestampMs }).pipe(
    // An expression that fails on bad input (`from_avro` in FAILFAST mode) throws a typed
    // `ConnectorError` from inside an operator's loop: it fails the batch, it is not a defect.
    Effect.catchDefect((d) => (d instanceof ConnectorError ? Effect.fail(d) : Effect.die(d)))
  ) as Effect.Effect<ReadonlyArray<InternalRow>, never>

/** A stateful operator reached without a `StatefulContext`: a bug in the caller. */
const noStatefulContext = (
  p:
    | P.StatefulAggregateExec
    | P.StreamingDeduplicateExec
    | P.StreamingSymmetricHashJoinExec
    | P.TransformWithStateExec
    | P.FlatMapGroupsWithStateExec
) =>
  Effect.die(
    new Error(
      `${p._tag} (operator ${p.operatorId}) needs a StatefulContext: plans built with { streaming: true } run only inside a streaming query`
    )
  )

const run = (
  p: P.SparkPlan,
  ctx: ExecContext,
  cctx: CompileContext
): Effect.Effect<ReadonlyArray<InternalRow>, ConnectorError | StateStoreError> => {
  const unary = (child: P.SparkPlan, f: (rows: ReadonlyArray<InternalRow>) => ReadonlyArray<InternalRow>) =>
    Effect.flatMap(run(child, ctx, cctx), (rows) => Effect.sync(() => f(rows)))
  const binary = (
    left: P.SparkPlan,
    right: P.SparkPlan,
    f: (l: ReadonlyArray<InternalRow>, r: ReadonlyArray<InternalRow>) => ReadonlyArray<InternalRow>
  ) => Effect.flatMap(Effect.all([run(left, ctx, cctx), run(right, ctx, cctx)]), ([l, r]) => Effect.sync(() => f(l, r)))
  switch (p._tag) {
    case "LocalTableScanExec":
      return Effect.succeed(p.rows)
    case "DataSourceScanExec":
      return ctx.readRelation(p.relation)
    case "StreamingScanExec":
      return ctx.streamingRows === undefined
        ? Effect.fail(
            new ConnectorError({
              connector: p.relation.format,
              domain: "internal",
              retryable: false,
              message: `The streaming source '${p.relation.sourceKey}' (${p.relation.format}) has no rows outside a streaming query: queries with streaming sources must be executed with writeStream.start().`
            })
          )
        : ctx.streamingRows(p.relation)
    case "ProjectExec":
    case "FilterExec":
    case "GenerateExec":
    case "MapElementsExec": {
      // The chain of stateless operators from here down runs as one compiled function
      // (StatelessOperators.ts, shared with continuous execution), compiled once per query.
      const chain = cachedChain(p, cctx)
      return Effect.flatMap(run(chain.input, ctx, cctx), (rows) => Effect.sync(() => chain.fn(rows)))
    }
    case "HashAggregateExec":
      return unary(p.child, (rows) => aggregateRows(p, rows, cctx))
    case "BroadcastHashJoinExec":
    case "ShuffledHashJoinExec":
      return binary(p.left, p.right, (l, r) => hashJoin(p, l, r, cctx))
    case "BroadcastNestedLoopJoinExec":
      return binary(p.left, p.right, (l, r) => nestedLoopJoin(p, l, r, cctx))
    case "SortExec":
      return unary(p.child, (rows) => sortRows(p.sortOrder, p.child.output, rows, cctx))
    case "LimitExec":
      return unary(p.child, (rows) => (rows.length <= p.n ? rows : rows.slice(0, Math.max(0, p.n))))
    case "TakeOrderedAndProjectExec":
      return unary(p.child, (rows) => takeOrdered(p, rows, cctx))
    case "DeduplicateExec":
      return unary(p.child, (rows) => deduplicate(p, rows, cctx))
    case "WindowExec":
      return unary(p.child, (rows) => windowRows(p, rows, cctx))
    case "UnionExec":
      return Effect.map(
        Effect.forEach(p.children, (c) => run(c, ctx, cctx)),
        (parts) => ([] as Array<InternalRow>).concat(...parts)
      )
    case "SetOperationExec":
      return binary(p.left, p.right, (l, r) => setOperationRows(p, l, r))
    case "StatefulAggregateExec": {
      const stateful = ctx.stateful
      if (stateful === undefined) return noStatefulContext(p)
      // A time window only this aggregate reads is assigned inside it, not materialised as rows.
      const fused = fusedWindow(p)
      return Effect.flatMap(run(fused?.source ?? p.child, ctx, cctx), (rows) =>
        executeStatefulAggregate(p, rows, stateful, cctx, fused)
      )
    }
    case "StreamingSymmetricHashJoinExec": {
      const stateful = ctx.stateful
      if (stateful === undefined) return noStatefulContext(p)
      return Effect.flatMap(Effect.all([run(p.left, ctx, cctx), run(p.right, ctx, cctx)]), ([l, r]) =>
        executeStreamingSymmetricHashJoin(p, l, r, stateful, cctx)
      )
    }
    case "StreamingDeduplicateExec": {
      const stateful = ctx.stateful
      if (stateful === undefined) return noStatefulContext(p)
      return Effect.flatMap(run(p.child, ctx, cctx), (rows) => executeStreamingDeduplicate(p, rows, stateful, cctx))
    }
    case "FlatMapGroupsWithStateExec": {
      const initialState = p.initialState
      if (!p.isStreaming) {
        // Spark's MapGroupsExec / CoGroupExec: no state store, the initial state every run.
        const initial = initialState === undefined ? Effect.succeed(undefined) : run(initialState, ctx, cctx)
        return Effect.flatMap(Effect.all([run(p.child, ctx, cctx), initial]), ([rows, initialRows]) =>
          Effect.sync(() => executeBatchGroupsWithState(p, rows, initialRows, ctx.currentTimestampMs))
        )
      }
      const stateful = ctx.stateful
      if (stateful === undefined) return noStatefulContext(p)
      // Spark applies the initial state in the first batch only (store version 0).
      const initial =
        initialState !== undefined && stateful.batchId === 0 ? run(initialState, ctx, cctx) : Effect.succeed(undefined)
      return Effect.flatMap(Effect.all([run(p.child, ctx, cctx), initial]), ([rows, initialRows]) =>
        executeFlatMapGroupsWithState(p, rows, initialRows, stateful, ctx.currentTimestampMs)
      )
    }
    case "TransformWithStateExec": {
      // A batch query runs the processor once over throwaway state (Spark's
      // generateSparkPlanForBatchQueries); a misuse there is a defect, batch actions have no
      // StateStoreError in their type.
      const batch = ctx.stateful === undefined
      const stateful = ctx.stateful ?? batchStatefulContext(ctx.currentTimestampMs)
      // Spark applies the initial state in batch 0 only, so its plan runs only then.
      const initial =
        p.initialState !== undefined && stateful.batchId === 0
          ? run(p.initialState, ctx, cctx)
          : Effect.succeed(undefined)
      return Effect.flatMap(Effect.all([run(p.child, ctx, cctx), initial]), ([rows, initialRows]) => {
        const exec = executeTransformWithState(p, rows, initialRows, stateful)
        return batch ? Effect.orDie(exec) : exec
      })
    }
    case "EventTimeWatermarkExec": {
      // Rows pass through; a streaming run also collects the event-time statistics the next
      // batch's watermark is computed from (Spark's EventTimeWatermarkExec accumulator).
      const onEventTime = ctx.onEventTime
      if (onEventTime === undefined) return run(p.child, ctx, cctx)
      return Effect.map(run(p.child, ctx, cctx), (rows) => {
        const time = eventTimeOf(p, cctx)
        let max = Number.NEGATIVE_INFINITY
        let min = Number.POSITIVE_INFINITY
        let sum = 0
        let count = 0
        for (let i = 0; i < rows.length; i++) {
          const t = time(rows[i])
          if (typeof t !== "number") continue
          if (t > max) max = t
          if (t < min) min = t
          sum += t
          count++
        }
        onEventTime(p, { max, min, sum, count })
        return rows
      })
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const eventTimes = new WeakMap<P.EventTimeWatermarkExec, (row: InternalRow) => unknown>()

/** The watermark node's event-time column, compiled once per plan node (it is deterministic). */
const eventTimeOf = (p: P.EventTimeWatermarkExec, cctx: CompileContext): ((row: InternalRow) => unknown) => {
  const known = eventTimes.get(p)
  if (known !== undefined) return known
  const time = compile(p.eventTime, p.child.output, cctx)
  if (isDeterministic(p.eventTime)) eventTimes.set(p, time)
  return time
}

const stripAlias = (e: E.Expression): E.Expression => (e._tag === "Alias" ? stripAlias(e.child) : e)

const concatRows = (a: InternalRow, b: InternalRow): InternalRow => {
  const la = a.length
  const lb = b.length
  const out = new Array<unknown>(la + lb)
  for (let i = 0; i < la; i++) out[i] = a[i]
  for (let i = 0; i < lb; i++) out[la + i] = b[i]
  return out
}

const nulls = (n: number): InternalRow => new Array<unknown>(n).fill(null)

// ---------------------------------------------------------------------------------------------
// Aggregation
// ---------------------------------------------------------------------------------------------

const aggregateRows = (
  p: P.HashAggregateExec,
  rows: ReadonlyArray<InternalRow>,
  cctx: CompileContext
): ReadonlyArray<InternalRow> => {
  const input = p.child.output
  const impls: ReadonlyArray<AggregateImpl> = p.aggregateFunctions.map((f) =>
    makeAggregate(
      f,
      f.args.map((a) => compile(a, input, cctx)),
      f.args.map((a) => dataTypeOf(a))
    )
  )
  const result = compileProjection(p.resultExpressions, [...p.groupingAttributes, ...p.aggregateAttributes], cctx)
  if (p.sessionWindow !== undefined) return sessionAggregate(p, p.sessionWindow, impls, result, rows, cctx)
  const nG = p.groupingExpressions.length
  const nA = impls.length
  const n = rows.length

  if (nG === 0) {
    // A global aggregate yields exactly one row, even over no input (count 0, the others null).
    const bufs = impls.map((im) => im.init())
    for (let i = 0; i < n; i++) {
      const row = rows[i]
      for (let j = 0; j < nA; j++) bufs[j] = impls[j].update(bufs[j], row)
    }
    const inter = new Array<unknown>(nA)
    for (let j = 0; j < nA; j++) inter[j] = impls[j].evaluate(bufs[j])
    return [result(inter)]
  }

  const gEvals = p.groupingExpressions.map((g) => compile(stripAlias(g), input, cctx))
  const gTypes = p.groupingAttributes.map((a) => a.dataType)
  const norms = gTypes.map(normalizer)
  const key = groupingKey(gEvals, gTypes)
  const index = new Map<unknown, number>()
  const groups: Array<Array<unknown>> = []
  const buffers: Array<unknown> = []
  for (let i = 0; i < n; i++) {
    const row = rows[i]
    const k = key(row)
    let g = index.get(k)
    if (g === undefined) {
      g = groups.length
      index.set(k, g)
      const vals = new Array<unknown>(nG + nA)
      for (let c = 0; c < nG; c++) {
        const v = gEvals[c](row)
        const norm = norms[c]
        vals[c] = norm === undefined ? (v === undefined ? null : v) : norm(v)
      }
      groups.push(vals)
      for (let j = 0; j < nA; j++) buffers.push(impls[j].init())
    }
    const base = g * nA
    for (let j = 0; j < nA; j++) buffers[base + j] = impls[j].update(buffers[base + j], row)
  }
  // Groups come out in the order their first row arrived.
  const out = new Array<InternalRow>(groups.length)
  for (let g = 0; g < groups.length; g++) {
    const vals = groups[g]
    const base = g * nA
    for (let j = 0; j < nA; j++) vals[nG + j] = impls[j].evaluate(buffers[base + j])
    out[g] = result(vals)
  }
  return out
}

const MS_PER_DAY = 86_400_000

const daysInMonth = (year: number, month: number): number => new Date(Date.UTC(year, month + 1, 0)).getUTCDate()

/**
 * `ts + interval` as Spark's `TimeAdd` (UTC): months move the calendar date (clamping the day to
 * the month's end, as `LocalDateTime.plusMonths`), then days and microseconds are added.
 */
const addInterval = (ts: number, iv: CalendarInterval): number => {
  let t = ts
  if (iv.months !== 0) {
    const d = new Date(t)
    const total = d.getUTCFullYear() * 12 + d.getUTCMonth() + iv.months
    const year = Math.floor(total / 12)
    const month = total - year * 12
    const day = Math.min(d.getUTCDate(), daysInMonth(year, month))
    const dayStart = Date.UTC(year, month, day)
    const msOfDay = t - Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate())
    t = dayStart + msOfDay
  }
  return t + iv.days * MS_PER_DAY + Math.floor(iv.micros / 1000)
}

/**
 * The end of the session an event at `ts` opens: `ts + gap`. A gap is milliseconds (a duration
 * literal), an interval string (a per-row gap column, cast as Spark casts string to interval) or
 * an interval value; `null` when it is null or not an interval.
 */
const sessionEnd = (ts: number, gap: unknown): number | null => {
  if (gap === null || gap === undefined) return null
  if (typeof gap === "number") return Number.isFinite(gap) ? ts + gap : null
  if (typeof gap === "string") {
    const iv = parseInterval(gap)
    return iv === undefined ? null : addInterval(ts, iv)
  }
  if (typeof gap === "object" && "months" in gap && "days" in gap && "micros" in gap) {
    return addInterval(ts, gap as CalendarInterval)
  }
  return null
}

/**
 * Session windows (Spark's `SessionWindowing` rule plus `MergingSessionsExec`): every event spans
 * `[t, t + gap)`; events with a null time, or a gap that is null or not positive, are dropped.
 * Within each group of the other grouping keys the events are sorted by time and a span that
 * starts at or before the current session's end extends it (`start <= end`, so spans that just
 * touch merge). Groups come out in first-seen order, sessions by start within a group.
 */
const sessionAggregate = (
  p: P.HashAggregateExec,
  spec: P.SessionWindowSpec,
  impls: ReadonlyArray<AggregateImpl>,
  result: (row: InternalRow) => InternalRow,
  rows: ReadonlyArray<InternalRow>,
  cctx: CompileContext
): ReadonlyArray<InternalRow> => {
  const input = p.child.output
  const timeEval = compile(spec.window.timeColumn, input, cctx)
  const timeIsDate = dataTypeOf(spec.window.timeColumn)._tag === "date"
  const gapEval = compile(spec.window.gap, input, cctx)
  const nG = p.groupingExpressions.length
  const nA = impls.length
  const others: Array<number> = []
  for (let c = 0; c < nG; c++) if (c !== spec.index) others.push(c)
  const oEvals = others.map((c) => compile(stripAlias(p.groupingExpressions[c]), input, cctx))
  const oTypes = others.map((c) => p.groupingAttributes[c].dataType)
  const oNorms = oTypes.map(normalizer)
  const key = groupingKey(oEvals, oTypes)

  const index = new Map<unknown, number>()
  const groupValues: Array<Array<unknown>> = []
  const groupRows: Array<Array<number>> = []
  const groupStarts: Array<Array<number>> = []
  const groupEnds: Array<Array<number>> = []
  const n = rows.length
  for (let i = 0; i < n; i++) {
    const row = rows[i]
    const raw = timeEval(row)
    if (raw === null || raw === undefined) continue
    const ts = timeIsDate ? (raw as number) * MS_PER_DAY : (raw as number)
    const end = sessionEnd(ts, gapEval(row))
    if (end === null || !(end > ts)) continue
    const k = key(row)
    let g = index.get(k)
    if (g === undefined) {
      g = groupValues.length
      index.set(k, g)
      const vals = new Array<unknown>(others.length)
      for (let c = 0; c < others.length; c++) {
        const v = oEvals[c](row)
        const norm = oNorms[c]
        vals[c] = norm === undefined ? (v === undefined ? null : v) : norm(v)
      }
      groupValues.push(vals)
      groupRows.push([])
      groupStarts.push([])
      groupEnds.push([])
    }
    groupRows[g].push(i)
    groupStarts[g].push(ts)
    groupEnds[g].push(end)
  }

  const out: Array<InternalRow> = []
  for (let g = 0; g < groupValues.length; g++) {
    const starts = groupStarts[g]
    const ends = groupEnds[g]
    const members = groupRows[g]
    const m = members.length
    // Sorted by start; equal starts keep arrival order, so first/last/collect_list are deterministic.
    const order = new Array<number>(m)
    for (let e = 0; e < m; e++) order[e] = e
    order.sort((a, b) => starts[a] - starts[b] || a - b)
    let bufs = impls.map((im) => im.init())
    let curStart = starts[order[0]]
    let curEnd = ends[order[0]]
    const emit = (): void => {
      const vals = new Array<unknown>(nG + nA)
      for (let c = 0; c < others.length; c++) vals[others[c]] = groupValues[g][c]
      vals[spec.index] = [curStart, curEnd]
      for (let j = 0; j < nA; j++) vals[nG + j] = impls[j].evaluate(bufs[j])
      out.push(result(vals))
    }
    for (let o = 0; o < m; o++) {
      const e = order[o]
      if (o > 0) {
        if (starts[e] <= curEnd) {
          if (ends[e] > curEnd) curEnd = ends[e]
        } else {
          emit()
          bufs = impls.map((im) => im.init())
          curStart = starts[e]
          curEnd = ends[e]
        }
      }
      const row = rows[members[e]]
      for (let j = 0; j < nA; j++) bufs[j] = impls[j].update(bufs[j], row)
    }
    emit()
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Joins
// ---------------------------------------------------------------------------------------------

/**
 * The join loop shared by hash and nested-loop joins. The stream side is walked in order and
 * each row's candidates (`matchesOf`, indexes into the build side, in build order) are tested
 * with the residual condition on the joined row; so an inner or left join emits left rows in
 * order with their matches in right-side order.
 */
const joinLoop = (
  joinType: JoinType,
  buildSide: P.BuildSide,
  leftRows: ReadonlyArray<InternalRow>,
  rightRows: ReadonlyArray<InternalRow>,
  leftWidth: number,
  rightWidth: number,
  matchesOf: (streamRow: InternalRow) => ReadonlyArray<number> | undefined,
  condition: ((row: InternalRow) => boolean) | undefined
): ReadonlyArray<InternalRow> => {
  const streamIsLeft = buildSide === "BuildRight"
  const stream = streamIsLeft ? leftRows : rightRows
  const build = streamIsLeft ? rightRows : leftRows
  const streamWidth = streamIsLeft ? leftWidth : rightWidth
  const buildWidth = streamIsLeft ? rightWidth : leftWidth
  const streamOffset = streamIsLeft ? 0 : leftWidth
  const buildOffset = streamIsLeft ? leftWidth : 0
  const join = (s: InternalRow, b: InternalRow): InternalRow => (streamIsLeft ? concatRows(s, b) : concatRows(b, s))
  const semi = joinType === "left_semi"
  const anti = joinType === "left_anti"
  const existence = semi || anti
  const padStream =
    joinType === "full_outer" ||
    (joinType === "left_outer" && streamIsLeft) ||
    (joinType === "right_outer" && !streamIsLeft)
  const padBuild =
    joinType === "full_outer" ||
    (joinType === "left_outer" && !streamIsLeft) ||
    (joinType === "right_outer" && streamIsLeft)
  const buildMatched = padBuild ? new Uint8Array(build.length) : undefined
  const streamNulls = nulls(buildWidth)
  const scratch = new Array<unknown>(leftWidth + rightWidth)
  const out: Array<InternalRow> = []
  const ns = stream.length
  for (let i = 0; i < ns; i++) {
    const s = stream[i]
    const candidates = matchesOf(s)
    let matched = false
    if (candidates !== undefined && candidates.length > 0) {
      if (condition !== undefined) for (let c = 0; c < streamWidth; c++) scratch[streamOffset + c] = s[c]
      const nc = candidates.length
      for (let m = 0; m < nc; m++) {
        const bi = candidates[m]
        const b = build[bi]
        if (condition !== undefined) {
          for (let c = 0; c < buildWidth; c++) scratch[buildOffset + c] = b[c]
          if (!condition(scratch)) continue
        }
        matched = true
        if (existence) break
        if (buildMatched !== undefined) buildMatched[bi] = 1
        out.push(join(s, b))
      }
    }
    if (existence) {
      if (matched === semi) out.push(s)
    } else if (!matched && padStream) {
      out.push(streamIsLeft ? concatRows(s, streamNulls) : concatRows(streamNulls, s))
    }
  }
  if (buildMatched !== undefined) {
    // Full outer: the build rows nothing matched come last, in build order, padded with nulls.
    const pad = nulls(streamWidth)
    for (let bi = 0; bi < build.length; bi++) {
      if (buildMatched[bi] === 0) out.push(streamIsLeft ? concatRows(pad, build[bi]) : concatRows(build[bi], pad))
    }
  }
  return out
}

const joinCondition = (
  condition: E.Expression | undefined,
  left: P.SparkPlan,
  right: P.SparkPlan,
  cctx: CompileContext
): ((row: InternalRow) => boolean) | undefined =>
  condition === undefined ? undefined : compilePredicate(condition, [...left.output, ...right.output], cctx)

const hashJoin = (
  p: P.HashJoinExec,
  leftRows: ReadonlyArray<InternalRow>,
  rightRows: ReadonlyArray<InternalRow>,
  cctx: CompileContext
): ReadonlyArray<InternalRow> => {
  const leftTypes = p.leftKeys.map((k) => dataTypeOf(k))
  const rightTypes = p.rightKeys.map((k) => dataTypeOf(k))
  const direct = isDirectKey(leftTypes) && isDirectKey(rightTypes)
  const leftKey = joinKey(
    p.leftKeys.map((k) => compile(k, p.left.output, cctx)),
    leftTypes,
    p.nullSafe,
    direct
  )
  const rightKey = joinKey(
    p.rightKeys.map((k) => compile(k, p.right.output, cctx)),
    rightTypes,
    p.nullSafe,
    direct
  )
  const buildIsRight = p.buildSide === "BuildRight"
  const build = buildIsRight ? rightRows : leftRows
  const buildKey = buildIsRight ? rightKey : leftKey
  const streamKey = buildIsRight ? leftKey : rightKey
  const table = new Map<unknown, Array<number>>()
  for (let i = 0; i < build.length; i++) {
    const k = buildKey(build[i])
    if (k === NO_KEY) continue
    const bucket = table.get(k)
    if (bucket === undefined) table.set(k, [i])
    else bucket.push(i)
  }
  return joinLoop(
    p.joinType,
    p.buildSide,
    leftRows,
    rightRows,
    p.left.output.length,
    p.right.output.length,
    (s) => {
      const k = streamKey(s)
      return k === NO_KEY ? undefined : table.get(k)
    },
    joinCondition(p.condition, p.left, p.right, cctx)
  )
}

const nestedLoopJoin = (
  p: P.BroadcastNestedLoopJoinExec,
  leftRows: ReadonlyArray<InternalRow>,
  rightRows: ReadonlyArray<InternalRow>,
  cctx: CompileContext
): ReadonlyArray<InternalRow> => {
  const buildCount = p.buildSide === "BuildRight" ? rightRows.length : leftRows.length
  const all = new Array<number>(buildCount)
  for (let i = 0; i < buildCount; i++) all[i] = i
  return joinLoop(
    p.joinType,
    p.buildSide,
    leftRows,
    rightRows,
    p.left.output.length,
    p.right.output.length,
    () => all,
    joinCondition(p.condition, p.left, p.right, cctx)
  )
}

// ---------------------------------------------------------------------------------------------
// Sort, top-k
// ---------------------------------------------------------------------------------------------

/**
 * A total order over row indexes: the sort keys (evaluated once per row), then the index, so
 * that sorting is stable and a top-k picks exactly the rows a stable sort would put first.
 */
const rowOrdering = (
  order: ReadonlyArray<E.SortOrder>,
  input: ReadonlyArray<E.AttributeReference>,
  rows: ReadonlyArray<InternalRow>,
  cctx: CompileContext
): ((i: number, j: number) => number) => {
  const k = order.length
  const evals = order.map((o) => compile(o.child, input, cctx))
  const cmps = order.map((o) => comparator(dataTypeOf(o.child)))
  const desc = order.map((o) => o.direction === "desc")
  const nullsFirst = order.map((o) => o.nullOrdering === "nullsFirst")
  const n = rows.length
  const keys = new Array<unknown>(n * k)
  for (let i = 0; i < n; i++) {
    const row = rows[i]
    for (let c = 0; c < k; c++) keys[i * k + c] = evals[c](row)
  }
  return (i, j) => {
    for (let c = 0; c < k; c++) {
      const a = keys[i * k + c]
      const b = keys[j * k + c]
      const aNull = a === null || a === undefined
      const bNull = b === null || b === undefined
      if (aNull || bNull) {
        if (aNull && bNull) continue
        // Where nulls go does not depend on the direction (Spark's NullOrdering).
        const r = aNull ? -1 : 1
        return nullsFirst[c] ? r : -r
      }
      const r = cmps[c](a, b)
      if (r !== 0) return desc[c] ? -r : r
    }
    return i - j
  }
}

const sortRows = (
  order: ReadonlyArray<E.SortOrder>,
  input: ReadonlyArray<E.AttributeReference>,
  rows: ReadonlyArray<InternalRow>,
  cctx: CompileContext
): ReadonlyArray<InternalRow> => {
  const cmp = rowOrdering(order, input, rows, cctx)
  const n = rows.length
  const idx = new Uint32Array(n)
  for (let i = 0; i < n; i++) idx[i] = i
  idx.sort(cmp)
  const out = new Array<InternalRow>(n)
  for (let i = 0; i < n; i++) out[i] = rows[idx[i]]
  return out
}

/** The `k` smallest indexes under `cmp`, in order: a bounded max-heap, then a sort of the heap. */
const topK = (n: number, k: number, cmp: (i: number, j: number) => number): ReadonlyArray<number> => {
  if (k <= 0 || n === 0) return []
  if (k >= n) {
    const all = new Array<number>(n)
    for (let i = 0; i < n; i++) all[i] = i
    return all.sort(cmp)
  }
  const heap: Array<number> = []
  const siftUp = (pos: number): void => {
    const x = heap[pos]
    while (pos > 0) {
      const parent = (pos - 1) >> 1
      if (cmp(heap[parent], x) >= 0) break
      heap[pos] = heap[parent]
      pos = parent
    }
    heap[pos] = x
  }
  const siftDown = (pos: number): void => {
    const size = heap.length
    const x = heap[pos]
    for (;;) {
      let child = 2 * pos + 1
      if (child >= size) break
      if (child + 1 < size && cmp(heap[child + 1], heap[child]) > 0) child++
      if (cmp(heap[child], x) <= 0) break
      heap[pos] = heap[child]
      pos = child
    }
    heap[pos] = x
  }
  for (let i = 0; i < n; i++) {
    if (heap.length < k) {
      heap.push(i)
      siftUp(heap.length - 1)
    } else if (cmp(i, heap[0]) < 0) {
      heap[0] = i
      siftDown(0)
    }
  }
  return heap.sort(cmp)
}

const takeOrdered = (
  p: P.TakeOrderedAndProjectExec,
  rows: ReadonlyArray<InternalRow>,
  cctx: CompileContext
): ReadonlyArray<InternalRow> => {
  const cmp = rowOrdering(p.sortOrder, p.child.output, rows, cctx)
  const picked = topK(rows.length, p.limit, cmp)
  const project = compileProjection(p.projectList, p.child.output, cctx)
  const out = new Array<InternalRow>(picked.length)
  for (let i = 0; i < picked.length; i++) out[i] = project(rows[picked[i]])
  return out
}

// ---------------------------------------------------------------------------------------------
// Deduplicate
// ---------------------------------------------------------------------------------------------

const deduplicate = (
  p: P.DeduplicateExec,
  rows: ReadonlyArray<InternalRow>,
  cctx: CompileContext
): ReadonlyArray<InternalRow> => {
  const input = p.child.output
  const key = groupingKey(
    p.keys.map((k) => compile(k, input, cctx)),
    p.keys.map((k) => k.dataType)
  )
  const seen = new Set<unknown>()
  const out: Array<InternalRow> = []
  const normalize = normalizedKeyColumns(p)
  for (let i = 0; i < rows.length; i++) {
    const k = key(rows[i])
    if (seen.has(k)) continue
    seen.add(k)
    out.push(normalize === undefined ? rows[i] : normalize(rows[i]))
  }
  return out
}

/**
 * Spark plans a batch `dropDuplicates` as an aggregate grouped by the keys
 * (ReplaceDeduplicateWithAggregate), whose keys come out normalized: a -0.0 key is 0.0
 * (issue #21, deviation 6). `undefined` when no key column needs it.
 */
const normalizedKeyColumns = (p: P.DeduplicateExec): ((row: InternalRow) => InternalRow) | undefined => {
  const parts: Array<[number, (v: unknown) => unknown]> = []
  for (const k of p.keys) {
    const f = normalizer(k.dataType)
    const i = p.child.output.findIndex((a) => a.exprId === k.exprId)
    if (f !== undefined && i >= 0 && k.dataType._tag !== "integer" && k.dataType._tag !== "long") parts.push([i, f])
  }
  if (parts.length === 0) return undefined
  return (row) => {
    const out = row.slice()
    for (const [i, f] of parts) out[i] = f(out[i])
    return out
  }
}
