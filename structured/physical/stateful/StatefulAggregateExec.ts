/**
 * A streaming aggregation over one micro-batch (Spark's `StateStoreRestoreExec` +
 * `StateStoreSaveExec` around the partial and final `HashAggregateExec`).
 *
 * Per batch: the batch's rows are grouped and folded into partial buffers; in `append` and
 * `update` mode the groups whose event-time key is at or below the late-events watermark are
 * dropped (`numRowsDroppedByWatermark`, one per group, as Spark filters the merged rows); the
 * others are merged with their stored buffers (stored rows first) and put back. Then, by output
 * mode (Spark's `StateStoreSaveExec`):
 *
 * - `complete`: every key in the store is output; nothing is evicted and the watermark is not used;
 * - `append`: every key whose event time is at or below the eviction watermark is output and
 *   removed (a window is compared by its `end`);
 * - `update`: the keys updated in this batch are output; then keys at or below the eviction
 *   watermark are removed without output.
 *
 * The state key is the grouping values' `keyString`; the state value is a positional row of the
 * grouping values (JSON) followed by each aggregate buffer's JSON, so evicted keys can be output
 * without input. A global aggregation (no grouping keys) keeps one row under the key `""` and
 * outputs it in every batch of `complete` and `update` mode, as Spark does. With a session window
 * the work is `SessionWindowStateStoreSaveExec.ts`'s.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { type CompileContext, compile, dataTypeOf } from "../../../core/Compile.ts"
import * as T from "../../../core/DataType.ts"
import type { StateStoreError } from "../../../core/Errors.ts"
import type * as E from "../../../core/Expression.ts"
import { isDeterministic } from "../../../core/optimizer/Optimizer.ts"
import type { InternalRow } from "../../../core/Row.ts"
import { partKey } from "../HashKeys.ts"
import type * as P from "../SparkPlan.ts"
import {
  aggregateFields,
  asArray,
  buffersFromJSON,
  type CompiledAggregation,
  compileAggregation,
  initBuffers,
  mergeBuffers
} from "./AggregationBuffers.ts"
import type { FusedWindow } from "./FusedWindow.ts"
import { commitAndReport, CorruptState, decodingState, guardDecode, timed, withOperatorStore } from "./OperatorState.ts"
import { executeSessionWindowAggregate, sessionWindowStateSchema } from "./SessionWindowStateStoreSaveExec.ts"
import type { OperatorStateSchema, StatefulContext } from "./StatefulContext.ts"
import { atOrBelow, eventTimeOf, stateKey } from "./WatermarkSupport.ts"
import { operatorWatermarks } from "./WatermarkPropagator.ts"

/**
 * Spark's `shortName` of the operator, reported as `stateOperators[].operatorName`.
 *
 * @since 0.1.0
 */
export const operatorName = (p: P.StatefulAggregateExec): string =>
  p.sessionWindow === undefined ? "stateStoreSave" : "sessionWindowStateStoreSaveExec"

/**
 * The key and value schemas of the operator's store: the grouping columns, and the grouping
 * columns followed by one field per aggregate (its buffer, described by its result).
 *
 * @since 0.1.0
 */
export const aggregateStateSchema = (p: P.StatefulAggregateExec): OperatorStateSchema => {
  if (p.sessionWindow !== undefined) return sessionWindowStateSchema(p, p.sessionWindow)
  const grouping = p.groupingAttributes.map((a) => T.field(a.name, a.dataType, a.nullable))
  return {
    keySchema: T.struct(grouping),
    valueSchema: T.struct([...grouping, ...aggregateFields(p)])
  }
}

/** One key of the batch: its state key, grouping values and buffers. */
interface Group {
  readonly key: string
  readonly values: Array<unknown>
  bufs: Array<unknown>
}

const MS_PER_DAY = 86_400_000

/**
 * What the grouping loops of one operator need, compiled once per plan node and reused by every
 * batch when nothing in it depends on the batch (no `current_timestamp()`, no nondeterministic
 * function): the same closures each batch keep the loops' call sites monomorphic, so the
 * optimizing compiler keeps its code instead of throwing it away at every batch.
 */
interface AggregatePlan {
  readonly c: CompiledAggregation
  readonly fused: FusedWindow | undefined
  readonly toStateKey: (values: ReadonlyArray<unknown>) => string
  /** The grouping columns other than a fused window, in order. */
  readonly others: ReadonlyArray<number>
  /**
   * The lookup goes window start first (when fused), then the other columns in order. Each
   * level has its own `Map.get` call site, so each site sees one key type (a site fed numbers
   * and strings alike runs several times slower); the middle levels, for three or more grouping
   * columns, share one. Groups keep their first-seen order whatever the nesting.
   */
  readonly middle: ReadonlyArray<(row: InternalRow) => unknown>
  readonly lastPart: ((row: InternalRow) => unknown) | undefined
  /** The fused window's event time. */
  readonly time: ((row: InternalRow) => unknown) | undefined
  readonly timeIsDate: boolean
}

const plans = new WeakMap<P.StatefulAggregateExec, AggregatePlan>()

const compiledPlan = (
  p: P.StatefulAggregateExec,
  cctx: CompileContext,
  fused: FusedWindow | undefined
): AggregatePlan => {
  const known = plans.get(p)
  if (known !== undefined && known.fused === fused) return known
  const c =
    fused === undefined
      ? compileAggregation(p, cctx)
      : compileAggregation(p, cctx, fused.source.output, fused.groupingIndex)
  const nG = c.groupingTypes.length
  const wCol = fused === undefined ? -1 : fused.groupingIndex
  const others: Array<number> = []
  for (let col = 0; col < nG; col++) if (col !== wCol) others.push(col)
  const parts = others.map((col) => {
    const key = partKey(c.groupingTypes[col])
    const ev = c.groupingEvals[col]
    return (row: InternalRow): unknown => key(ev(row))
  })
  const plan: AggregatePlan = {
    c,
    fused,
    toStateKey: stateKey(c.groupingTypes),
    others,
    middle: parts.slice(0, Math.max(0, parts.length - 1)),
    lastPart: parts.length === 0 ? undefined : parts[parts.length - 1],
    time: fused === undefined ? undefined : compile(fused.window.timeColumn, fused.source.output, cctx),
    timeIsDate: fused !== undefined && dataTypeOf(fused.window.timeColumn)._tag === "date"
  }
  const exprs: Array<E.Expression> = [...p.groupingExpressions, ...p.resultExpressions]
  for (const f of p.aggregateFunctions) exprs.push(...f.args)
  if (fused !== undefined) exprs.push(fused.window.timeColumn)
  if (exprs.every(isDeterministic)) plans.set(p, plan)
  return plan
}

/**
 * Spark's partial aggregation: the batch's rows grouped (first-seen order) and folded.
 *
 * Two passes. The first finds each row's group through one nested `Map` per grouping column
 * keyed by the column's value (`HashKeys.partKey`), so no key is built per row; a group's values
 * and its state key are made once, when the group is first seen. It records the folds (row,
 * group) in row order. With a fused window (`FusedWindow.ts`) `rows` are the window assignment's
 * input: each row's windows are computed here, exactly as Spark's `TimeWindowing` (and
 * `GenerateExec` here) assign them, latest first, and the row is folded into the group of each.
 * The second pass folds the aggregates, one at a time over the recorded folds: `count` and `sum`
 * of columns into typed per-group accumulators (`FastAggregate`), the others through `update`,
 * so every group sees its rows in row order either way.
 */
const groupBatch = (
  p: P.StatefulAggregateExec,
  plan: AggregatePlan,
  rows: ReadonlyArray<InternalRow>
): Array<Group> => {
  const c = plan.c
  const nG = p.groupingExpressions.length
  const impls = c.impls
  const nA = impls.length
  const n = rows.length
  if (nG === 0) {
    // A global aggregation has exactly one group, even over no input (Spark's aggregate without
    // keys always yields a row; StateStoreRestoreExec merges it with the stored one).
    const bufs = initBuffers(impls)
    for (let i = 0; i < n; i++) for (let j = 0; j < nA; j++) bufs[j] = impls[j].update(bufs[j], rows[i])
    return [{ key: "", values: [], bufs }]
  }
  const folds = assignGroups(plan, rows)
  const groups = folds.groups
  for (let j = 0; j < nA; j++) foldAggregate(c, j, rows, folds)
  return groups
}

/** The first pass of `groupBatch`: fold `k` adds row `foldRow[k]` to group `foldGroup[k]`. */
interface Folds {
  readonly groups: Array<Group>
  readonly foldRow: Int32Array
  readonly foldGroup: Int32Array
  readonly count: number
}

const assignGroups = (plan: AggregatePlan, rows: ReadonlyArray<InternalRow>): Folds => {
  const { c, fused, toStateKey, others, middle, lastPart } = plan
  const nG = c.groupingTypes.length
  const nA = c.impls.length
  const n = rows.length
  const wCol = fused === undefined ? -1 : fused.groupingIndex
  const windowMs = fused === undefined ? 0 : fused.window.windowMs
  const evals = c.groupingEvals
  const norms = c.groupingNorms
  const nO = others.length
  const groups: Array<Group> = []
  const newGroup = (row: InternalRow, start: number): number => {
    const values = new Array<unknown>(nG)
    for (let col = 0; col < nG; col++) {
      if (col === wCol) {
        values[col] = [start, start + windowMs]
        continue
      }
      const v = evals[col](row)
      const norm = norms[col]
      values[col] = norm === undefined ? (v === undefined ? null : v) : norm(v)
    }
    groups.push({ key: toStateKey(values), values, bufs: new Array<unknown>(nA) })
    return groups.length - 1
  }
  /** The group of `row` below `top` (the row's window's map, or the root without a window). */
  const below = (top: Map<unknown, unknown>, row: InternalRow, start: number): number => {
    let m = top
    for (let x = 0; x < middle.length; x++) {
      const k = middle[x](row)
      let next = m.get(k) as Map<unknown, unknown> | undefined
      if (next === undefined) {
        next = new Map()
        m.set(k, next)
      }
      m = next
    }
    const k = lastPart!(row)
    const found = m.get(k) as number | undefined
    if (found !== undefined) return found
    const g = newGroup(row, start)
    m.set(k, g)
    return g
  }
  if (fused === undefined) {
    const root = new Map<unknown, unknown>()
    const foldRow = new Int32Array(n)
    const foldGroup = new Int32Array(n)
    for (let i = 0; i < n; i++) {
      foldRow[i] = i
      foldGroup[i] = below(root, rows[i], 0)
    }
    return { groups, foldRow, foldGroup, count: n }
  }
  const { slideMs, startMs } = fused.window
  if (!(windowMs > 0) || !(slideMs > 0)) {
    throw new Error(`window(): the window (${windowMs} ms) and slide (${slideMs} ms) durations must be positive`)
  }
  const time = plan.time!
  const isDate = plan.timeIsDate
  const perRow = Math.ceil(windowMs / slideMs)
  const exact = windowMs % slideMs === 0
  const foldRow = new Int32Array(n * perRow)
  const foldGroup = new Int32Array(n * perRow)
  /** Window start → the map below it (or, with no other grouping column, the group index). */
  const windows = new Map<number, unknown>()
  // Rows in time order share a window: the last window's entry is kept at hand.
  let lastWindow = Number.NaN
  let lastEntry: unknown
  let count = 0
  for (let i = 0; i < n; i++) {
    const row = rows[i]
    const raw = time(row)
    // A null event time is in no window (Spark's TimeWindowing filters it out).
    if (raw === null || raw === undefined) continue
    const ts = isDate ? (raw as number) * MS_PER_DAY : (raw as number)
    // The last window starting at or before `ts`: a floor modulo, so times before startTime work.
    const rem = (ts - startMs) % slideMs
    const lastStart = ts - (rem < 0 ? rem + slideMs : rem)
    for (let w = 0; w < perRow; w++) {
      const start = lastStart - w * slideMs
      if (!exact && !(ts >= start && ts < start + windowMs)) continue
      let entry = lastEntry
      if (start !== lastWindow) {
        entry = windows.get(start)
        if (entry === undefined) {
          entry = nO === 0 ? newGroup(row, start) : new Map<unknown, unknown>()
          windows.set(start, entry)
        }
        lastWindow = start
        lastEntry = entry
      }
      foldRow[count] = i
      foldGroup[count] = nO === 0 ? (entry as number) : below(entry as Map<unknown, unknown>, row, start)
      count++
    }
  }
  return { groups, foldRow, foldGroup, count }
}

/** The second pass of `groupBatch` for aggregate `j`: each group's buffer, from its folds in order. */
const foldAggregate = (c: CompiledAggregation, j: number, rows: ReadonlyArray<InternalRow>, folds: Folds): void => {
  const impl = c.impls[j]
  const fast = c.fast[j]
  const { groups, foldRow, foldGroup, count } = folds
  const nGroups = groups.length
  if (fast !== undefined) {
    switch (fast._tag) {
      case "count": {
        const acc = new Float64Array(nGroups)
        const cols = fast.columns
        if (cols.length === 0) for (let k = 0; k < count; k++) acc[foldGroup[k]]++
        else if (cols.length === 1) {
          const col = cols[0]
          for (let k = 0; k < count; k++) {
            const v = rows[foldRow[k]][col]
            if (v !== null && v !== undefined) acc[foldGroup[k]]++
          }
        } else {
          for (let k = 0; k < count; k++) {
            const row = rows[foldRow[k]]
            let all = true
            for (let x = 0; x < cols.length; x++) {
              const v = row[cols[x]]
              if (v === null || v === undefined) {
                all = false
                break
              }
            }
            if (all) acc[foldGroup[k]]++
          }
        }
        for (let g = 0; g < nGroups; g++) groups[g].bufs[j] = impl.fromJSON(acc[g])
        return
      }
      case "longSum": {
        const acc = new Float64Array(nGroups)
        const has = new Uint8Array(nGroups)
        const col = fast.column
        let exact = true
        for (let k = 0; k < count; k++) {
          const v = rows[foldRow[k]][col]
          if (v === null || v === undefined) continue
          // A long beyond the safe integers is a bigint; past them Spark's long arithmetic
          // (exact, wrapping) takes over: `update` does it.
          if (typeof v !== "number") {
            exact = false
            break
          }
          const g = foldGroup[k]
          const s = acc[g] + v
          if (!Number.isSafeInteger(s)) {
            exact = false
            break
          }
          acc[g] = s
          has[g] = 1
        }
        if (exact) {
          for (let g = 0; g < nGroups; g++) groups[g].bufs[j] = impl.fromJSON([acc[g], has[g], null])
          return
        }
        break
      }
      case "doubleSum": {
        const acc = new Float64Array(nGroups)
        const has = new Uint8Array(nGroups)
        const col = fast.column
        for (let k = 0; k < count; k++) {
          const v = rows[foldRow[k]][col]
          if (v === null || v === undefined) continue
          const g = foldGroup[k]
          acc[g] += v as number
          has[g] = 1
        }
        for (let g = 0; g < nGroups; g++) groups[g].bufs[j] = impl.fromJSON([acc[g], has[g]])
        return
      }
    }
  }
  const bufs = new Array<unknown>(nGroups)
  for (let g = 0; g < nGroups; g++) bufs[g] = impl.init()
  for (let k = 0; k < count; k++) {
    const g = foldGroup[k]
    bufs[g] = impl.update(bufs[g], rows[foldRow[k]])
  }
  for (let g = 0; g < nGroups; g++) groups[g].bufs[j] = bufs[g]
}

/** The state value of a group: its grouping values' JSON, then each buffer's JSON, in one array. */
const encodeGroup = (c: CompiledAggregation, values: ReadonlyArray<unknown>, bufs: ReadonlyArray<unknown>): unknown => {
  const nG = values.length
  const impls = c.impls
  const out = new Array<unknown>(nG + impls.length)
  for (let col = 0; col < nG; col++) out[col] = c.encodeGrouping[col](values[col])
  for (let j = 0; j < impls.length; j++) out[nG + j] = impls[j].toJSON(bufs[j])
  return out
}

/** The stored value as an array of the expected length, or `CorruptState`. */
const storedFields = (c: CompiledAggregation, json: unknown): ReadonlyArray<unknown> => {
  const a = asArray(json, "an aggregation state value")
  const nG = c.groupingTypes.length
  if (a.length !== nG + c.impls.length) {
    throw new CorruptState(`expected ${nG + c.impls.length} fields in an aggregation state value, found ${a.length}`)
  }
  return a
}

/** A stored group's buffers (its grouping values are the batch group's own). */
const decodeBuffers = (c: CompiledAggregation, json: unknown): Array<unknown> =>
  buffersFromJSON(c.impls, storedFields(c, json), c.groupingTypes.length)

const decodeGroup = (
  c: CompiledAggregation,
  json: unknown
): { readonly values: Array<unknown>; readonly bufs: Array<unknown> } => {
  const a = storedFields(c, json)
  const nG = c.groupingTypes.length
  const values = new Array<unknown>(nG)
  for (let col = 0; col < nG; col++) values[col] = guardDecode(`grouping value ${col}`, c.decodeGrouping[col])(a[col])
  return { values, bufs: buffersFromJSON(c.impls, a, nG) }
}

const outputRow = (
  c: CompiledAggregation,
  values: ReadonlyArray<unknown>,
  bufs: ReadonlyArray<unknown>
): InternalRow => {
  const nG = values.length
  const impls = c.impls
  const inter = new Array<unknown>(nG + impls.length)
  for (let i = 0; i < nG; i++) inter[i] = values[i]
  for (let j = 0; j < impls.length; j++) inter[nG + j] = impls[j].evaluate(bufs[j])
  return c.result(inter)
}

/**
 * The keys of an operator's store by their event time (a window by its end), as of the committed
 * `version`: in `append` and `update` mode with a watermark, the keys to evict are read from here
 * instead of scanning and decoding the whole store every batch. Built by the first scan of a run
 * (or after any batch that did not commit the version the next one opens: a retry, a restart),
 * kept up to date with each batch's puts and removals, and trusted only for the version it
 * describes. Keys whose event time is null are never evicted and are not listed.
 */
interface EvictionIndex {
  readonly version: number
  readonly byTime: Map<number, Set<string>>
}

const indexes = new WeakMap<P.StatefulAggregateExec, EvictionIndex>()

const indexKey = (index: Map<number, Set<string>>, time: number | undefined, key: string): void => {
  if (time === undefined) return
  let keys = index.get(time)
  if (keys === undefined) {
    keys = new Set()
    index.set(time, keys)
  }
  keys.add(key)
}

/**
 * Runs the operator over its child's rows for the batch `ctx` describes, commits its store and
 * reports its progress; returns the rows to emit, ordered like `p.output`. With `fused`
 * (`FusedWindow.fusedWindow(p)`), `rows` are the rows of `fused.source` and the operator assigns
 * the windows itself.
 *
 * @since 0.1.0
 */
export const executeStatefulAggregate = (
  p: P.StatefulAggregateExec,
  rows: ReadonlyArray<InternalRow>,
  ctx: StatefulContext,
  cctx: CompileContext,
  fused?: FusedWindow
): Effect.Effect<ReadonlyArray<InternalRow>, StateStoreError> =>
  p.sessionWindow !== undefined
    ? executeSessionWindowAggregate(p, p.sessionWindow, rows, ctx, cctx)
    : Effect.suspend(() => keyedAggregate(p, rows, ctx, cctx, fused))

const keyedAggregate = (
  p: P.StatefulAggregateExec,
  rows: ReadonlyArray<InternalRow>,
  ctx: StatefulContext,
  cctx: CompileContext,
  fused: FusedWindow | undefined
): Effect.Effect<ReadonlyArray<InternalRow>, StateStoreError> => {
  const mode = ctx.outputMode
  const etIndex = p.groupingAttributes.findIndex((a) => a.eventTimeDelayMs !== undefined)
  const etOf = etIndex < 0 ? undefined : eventTimeOf(p.groupingAttributes[etIndex].dataType)
  if (mode === "append" && etOf === undefined) {
    // The unsupported-operation checker refuses this plan (Spark asserts the same).
    return Effect.die(
      new Error(
        `Stateful operator ${p.operatorId}: append output mode needs a watermark on a grouping key (a bug in the unsupported-operation checker if it gets here)`
      )
    )
  }
  const plan = compiledPlan(p, cctx, fused)
  const c = plan.c
  const groups = groupBatch(p, plan, rows)
  // Complete mode neither drops late rows nor evicts (Spark's StateStoreSaveExec, Complete).
  const lateWm = mode === "complete" || etOf === undefined ? undefined : operatorWatermarks(p, ctx).lateEventsMs
  const evictWm = mode === "complete" || etOf === undefined ? undefined : operatorWatermarks(p, ctx).evictionMs
  let droppedByWatermark = 0
  const live: Array<Group> = []
  for (const g of groups) {
    if (etOf !== undefined && atOrBelow(etOf(g.values[etIndex]), lateWm)) droppedByWatermark++
    else live.push(g)
  }
  return withOperatorStore(ctx, p.operatorId, aggregateStateSchema(p), (store) =>
    Effect.gen(function* () {
      yield* store.load(live.map((g) => g.key))
      // Merge with the stored buffers and put back (Spark: restore, merge, save).
      const [, updatesMs] = yield* timed(
        decodingState(p.operatorId, () => {
          for (const g of live) {
            const stored = store.get(g.key)
            if (stored !== undefined) g.bufs = mergeBuffers(c.impls, decodeBuffers(c, stored), g.bufs)
            store.put(g.key, encodeGroup(c, g.values, g.bufs))
          }
        })
      )
      const out: Array<InternalRow> = []
      if (mode === "update") for (const g of live) out.push(outputRow(c, g.values, g.bufs))
      let removed = 0
      let removalsMs = 0
      // The keys by event time, when the index describes the version this store was opened at
      // (it is dropped now and set again once this batch's commit succeeds).
      const tracked = mode !== "complete" && etOf !== undefined
      const known = tracked ? indexes.get(p) : undefined
      indexes.delete(p)
      let index = known !== undefined && known.version === store.version ? known.byTime : undefined
      if (index !== undefined) for (const g of live) indexKey(index, etOf!(g.values[etIndex]), g.key)
      if (index !== undefined && evictWm !== undefined) {
        // Only the keys at or below the watermark are read: no scan of the whole store.
        const byTime = index
        const [, ms] = yield* timed(
          Effect.gen(function* () {
            const merged = new Map<string, Group>()
            for (const g of live) merged.set(g.key, g)
            const times: Array<number> = []
            for (const t of byTime.keys()) if (t <= evictWm) times.push(t)
            times.sort((a, b) => a - b)
            const toRemove: Array<string> = []
            for (const t of times) for (const key of byTime.get(t)!) toRemove.push(key)
            if (mode === "append") {
              yield* store.load(toRemove.filter((key) => !merged.has(key)))
              yield* decodingState(p.operatorId, () => {
                for (const key of toRemove) {
                  const g = merged.get(key)
                  let d: { readonly values: ReadonlyArray<unknown>; readonly bufs: ReadonlyArray<unknown> } | undefined = g
                  if (d === undefined) {
                    const stored = store.get(key)
                    if (stored === undefined) throw new CorruptState(`the event-time index names ${key}, absent from the store`)
                    d = decodeGroup(c, stored)
                  }
                  out.push(outputRow(c, d.values, d.bufs))
                }
              })
            }
            for (const key of toRemove) store.remove(key)
            for (const t of times) byTime.delete(t)
            removed = toRemove.length
          })
        )
        removalsMs = ms
      } else if (mode === "complete" || evictWm !== undefined) {
        const [, ms] = yield* timed(
          Effect.flatMap(store.scan(), (entries) =>
            decodingState(p.operatorId, () => {
              const merged = new Map<string, Group>()
              for (const g of live) merged.set(g.key, g)
              const toRemove: Array<string> = []
              const decodeTime = guardDecode("the event-time key", c.decodeGrouping[etIndex] ?? ((j: unknown) => j))
              // The scan rebuilds the event-time index for the next batches.
              const rebuilt = tracked ? new Map<number, Set<string>>() : undefined
              for (const [key, value] of entries) {
                const g = merged.get(key)
                if (mode === "complete") {
                  const d = g ?? decodeGroup(c, value)
                  out.push(outputRow(c, d.values, d.bufs))
                  continue
                }
                // Only the event-time key is decoded to test a key; buffers only for output.
                const time = etOf!(
                  g !== undefined ? g.values[etIndex] : decodeTime(asArray(value, "an aggregation state value")[etIndex])
                )
                if (atOrBelow(time, evictWm)) {
                  toRemove.push(key)
                  if (mode === "append") {
                    const d = g ?? decodeGroup(c, value)
                    out.push(outputRow(c, d.values, d.bufs))
                  }
                } else if (rebuilt !== undefined) indexKey(rebuilt, time, key)
              }
              // Removed after the scan, so the scan never sees its own removals.
              for (const key of toRemove) store.remove(key)
              removed = toRemove.length
              index = rebuilt
            })
          )
        )
        removalsMs = ms
      }
      yield* commitAndReport(ctx, p.operatorId, store, {
        operatorName: operatorName(p),
        numRowsUpdated: live.length,
        allUpdatesTimeMs: updatesMs,
        numRowsRemoved: removed,
        allRemovalsTimeMs: removalsMs,
        numRowsDroppedByWatermark: droppedByWatermark
      })
      if (index !== undefined) indexes.set(p, { version: store.version + 1, byTime: index })
      return out
    })
  )
}
