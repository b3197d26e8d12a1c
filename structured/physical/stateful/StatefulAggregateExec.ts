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
import type { CompileContext } from "../../../core/Compile.ts"
import * as T from "../../../core/DataType.ts"
import type { StateStoreError } from "../../../core/Errors.ts"
import type { InternalRow } from "../../../core/Row.ts"
import { groupingKey } from "../HashKeys.ts"
import type * as P from "../SparkPlan.ts"
import {
  aggregateFields,
  asArray,
  buffersFromJSON,
  buffersToJSON,
  type CompiledAggregation,
  compileAggregation,
  evaluateBuffers,
  initBuffers,
  mergeBuffers
} from "./AggregationBuffers.ts"
import { CorruptState, decodingState, guardDecode, timed, withOperatorStore } from "./OperatorState.ts"
import { executeSessionWindowAggregate, sessionWindowStateSchema } from "./SessionWindowStateStoreSaveExec.ts"
import type { OperatorStateSchema, StatefulContext } from "./StatefulContext.ts"
import { atOrBelow, eventTimeOf, stateKey } from "./WatermarkSupport.ts"

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

/** Spark's partial aggregation: the batch's rows grouped (first-seen order) and folded. */
const groupBatch = (
  p: P.StatefulAggregateExec,
  c: CompiledAggregation,
  rows: ReadonlyArray<InternalRow>
): Array<Group> => {
  const nG = p.groupingExpressions.length
  const nA = c.impls.length
  const n = rows.length
  if (nG === 0) {
    // A global aggregation has exactly one group, even over no input (Spark's aggregate without
    // keys always yields a row; StateStoreRestoreExec merges it with the stored one).
    const bufs = initBuffers(c.impls)
    for (let i = 0; i < n; i++) for (let j = 0; j < nA; j++) bufs[j] = c.impls[j].update(bufs[j], rows[i])
    return [{ key: "", values: [], bufs }]
  }
  const batchKey = groupingKey(c.groupingEvals, c.groupingTypes)
  const toStateKey = stateKey(c.groupingTypes)
  const index = new Map<unknown, Group>()
  const groups: Array<Group> = []
  for (let i = 0; i < n; i++) {
    const row = rows[i]
    const k = batchKey(row)
    let g = index.get(k)
    if (g === undefined) {
      const values = new Array<unknown>(nG)
      for (let col = 0; col < nG; col++) {
        const v = c.groupingEvals[col](row)
        const norm = c.groupingNorms[col]
        values[col] = norm === undefined ? (v === undefined ? null : v) : norm(v)
      }
      g = { key: toStateKey(values), values, bufs: initBuffers(c.impls) }
      index.set(k, g)
      groups.push(g)
    }
    const bufs = g.bufs
    for (let j = 0; j < nA; j++) bufs[j] = c.impls[j].update(bufs[j], row)
  }
  return groups
}

const encodeGroup = (c: CompiledAggregation, values: ReadonlyArray<unknown>, bufs: ReadonlyArray<unknown>): unknown => {
  const nG = values.length
  const out = new Array<unknown>(nG + c.impls.length)
  for (let col = 0; col < nG; col++) out[col] = c.encodeGrouping[col](values[col])
  const b = buffersToJSON(c.impls, bufs)
  for (let j = 0; j < b.length; j++) out[nG + j] = b[j]
  return out
}

const decodeGroup = (
  c: CompiledAggregation,
  json: unknown
): { readonly values: Array<unknown>; readonly bufs: Array<unknown> } => {
  const a = asArray(json, "an aggregation state value")
  const nG = c.groupingTypes.length
  if (a.length !== nG + c.impls.length) {
    throw new CorruptState(`expected ${nG + c.impls.length} fields in an aggregation state value, found ${a.length}`)
  }
  const values = new Array<unknown>(nG)
  for (let col = 0; col < nG; col++) values[col] = guardDecode(`grouping value ${col}`, c.decodeGrouping[col])(a[col])
  return { values, bufs: buffersFromJSON(c.impls, a, nG) }
}

const outputRow = (
  c: CompiledAggregation,
  values: ReadonlyArray<unknown>,
  bufs: ReadonlyArray<unknown>
): InternalRow => {
  const results = evaluateBuffers(c.impls, bufs)
  const inter = new Array<unknown>(values.length + results.length)
  for (let i = 0; i < values.length; i++) inter[i] = values[i]
  for (let j = 0; j < results.length; j++) inter[values.length + j] = results[j]
  return c.result(inter)
}

/**
 * Runs the operator over its child's rows for the batch `ctx` describes, commits its store and
 * reports its progress; returns the rows to emit, ordered like `p.output`.
 *
 * @since 0.1.0
 */
export const executeStatefulAggregate = (
  p: P.StatefulAggregateExec,
  rows: ReadonlyArray<InternalRow>,
  ctx: StatefulContext,
  cctx: CompileContext
): Effect.Effect<ReadonlyArray<InternalRow>, StateStoreError> =>
  p.sessionWindow !== undefined
    ? executeSessionWindowAggregate(p, p.sessionWindow, rows, ctx, cctx)
    : Effect.suspend(() => keyedAggregate(p, rows, ctx, cctx))

const keyedAggregate = (
  p: P.StatefulAggregateExec,
  rows: ReadonlyArray<InternalRow>,
  ctx: StatefulContext,
  cctx: CompileContext
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
  const c = compileAggregation(p, cctx)
  const groups = groupBatch(p, c, rows)
  // Complete mode neither drops late rows nor evicts (Spark's StateStoreSaveExec, Complete).
  const lateWm = mode === "complete" || etOf === undefined ? undefined : ctx.watermarkForLateEventsMs
  const evictWm = mode === "complete" || etOf === undefined ? undefined : ctx.watermarkForEvictionMs
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
            if (stored !== undefined) g.bufs = mergeBuffers(c.impls, decodeGroup(c, stored).bufs, g.bufs)
            store.put(g.key, encodeGroup(c, g.values, g.bufs))
          }
        })
      )
      const out: Array<InternalRow> = []
      if (mode === "update") for (const g of live) out.push(outputRow(c, g.values, g.bufs))
      let removed = 0
      let removalsMs = 0
      if (mode === "complete" || evictWm !== undefined) {
        const [, ms] = yield* timed(
          Effect.flatMap(store.scan(), (entries) =>
            decodingState(p.operatorId, () => {
              const merged = new Map<string, Group>()
              for (const g of live) merged.set(g.key, g)
              const toRemove: Array<string> = []
              const decodeTime = guardDecode("the event-time key", c.decodeGrouping[etIndex] ?? ((j: unknown) => j))
              for (const [key, value] of entries) {
                const g = merged.get(key)
                if (mode === "complete") {
                  const d = g ?? decodeGroup(c, value)
                  out.push(outputRow(c, d.values, d.bufs))
                  continue
                }
                // Only the event-time key is decoded to test a key; buffers only for output.
                const time =
                  g !== undefined
                    ? g.values[etIndex]
                    : decodeTime(asArray(value, "an aggregation state value")[etIndex])
                if (etOf !== undefined && atOrBelow(etOf(time), evictWm)) {
                  toRemove.push(key)
                  if (mode === "append") {
                    const d = g ?? decodeGroup(c, value)
                    out.push(outputRow(c, d.values, d.bufs))
                  }
                }
              }
              // Removed after the scan, so the scan never sees its own removals.
              for (const key of toRemove) store.remove(key)
              removed = toRemove.length
            })
          )
        )
        removalsMs = ms
      }
      const [metrics, commitMs] = yield* timed(store.commit())
      ctx.reportProgress(p.operatorId, {
        operatorName: operatorName(p),
        numRowsTotal: metrics.numRowsTotal,
        numRowsUpdated: live.length,
        allUpdatesTimeMs: updatesMs,
        numRowsRemoved: removed,
        allRemovalsTimeMs: removalsMs,
        commitTimeMs: commitMs,
        memoryUsedBytes: metrics.memoryUsedBytes,
        numRowsDroppedByWatermark: droppedByWatermark,
        customMetrics: {}
      })
      return out
    })
  )
}
