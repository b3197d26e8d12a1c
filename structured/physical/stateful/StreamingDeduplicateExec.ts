/**
 * Streaming deduplication over one micro-batch (Spark's `StreamingDeduplicateExec` and
 * `StreamingDeduplicateWithinWatermarkExec`, both `BaseStreamingDeduplicateExec`).
 *
 * Per batch:
 *
 * 1. when the input has an event-time column and a late-events watermark, rows whose event time
 *    is at or below it are dropped (`numRowsDroppedByWatermark`); Spark filters on the input's
 *    event-time column whether or not it is one of the keys;
 * 2. a row whose key is neither in the store nor seen earlier in the batch is output and its key
 *    stored (`numRowsUpdated`); any other row is a duplicate (`customMetrics.numDroppedDuplicateRows`);
 * 3. eviction against this batch's watermark (`numRowsRemoved`): `dropDuplicates` removes keys
 *    whose event time is at or below it, only when a key is an event-time column (the watermark
 *    bounds the state only then; the first such key, as Spark's `watermarkExpressionForKeys`,
 *    which after a stream-stream join need not be the input's first event-time column);
 *    `dropDuplicatesWithinWatermark` stores each key's expiry (event time + delay) and removes
 *    the keys whose expiry is at or below it. A key stays a duplicate until it is evicted,
 *    expired or not, as in Spark.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { type CompileContext, compile } from "../../../core/Compile.ts"
import * as T from "../../../core/DataType.ts"
import type { StateStoreError } from "../../../core/Errors.ts"
import type { InternalRow } from "../../../core/Row.ts"
import type * as P from "../SparkPlan.ts"
import { commitAndReport, CorruptState, decodingState, timed, withOperatorStore } from "./OperatorState.ts"
import type { OperatorStateSchema, StatefulContext } from "./StatefulContext.ts"
import { atOrBelow, eventTimeOf, findEventTimeColumn, stateKey } from "./WatermarkSupport.ts"
import { operatorWatermarks } from "./WatermarkPropagator.ts"

/**
 * Spark's `shortName` of the operator, reported as `stateOperators[].operatorName`.
 *
 * @since 0.1.0
 */
export const operatorName = (p: P.StreamingDeduplicateExec): string =>
  p.withinWatermark ? "dedupeWithinWatermark" : "dedupe"

/**
 * The event-time column of the input (what late rows are dropped by: Spark's
 * `watermarkExpressionForDataForLateEvents` over `child.output`), and the first key that is an
 * event-time column (what eviction compares: Spark's `watermarkExpressionForKeys` over
 * `keyExpressions`). They differ when the input has several event-time columns (after a
 * stream-stream join) and the keys hold another one than the first.
 */
const eventTimeInfo = (p: P.StreamingDeduplicateExec) => {
  const et = findEventTimeColumn(p.child.output)
  const byId = new Map(p.child.output.map((a) => [a.exprId, a] as const))
  const keyEt = findEventTimeColumn(p.keys.map((k) => byId.get(k.exprId) ?? k))
  return { et, keyEt, inKeys: keyEt !== undefined }
}

/**
 * The key and value schemas of the operator's store: the key columns, and as value the expiry
 * (`dropDuplicatesWithinWatermark`, Spark's `expiresAtMicros`, here in ms), the key's event time
 * when it is one of the keys (what eviction compares), or Spark's `__dummy__` null.
 *
 * @since 0.1.0
 */
export const dedupStateSchema = (p: P.StreamingDeduplicateExec): OperatorStateSchema => {
  const { inKeys } = eventTimeInfo(p)
  const value = p.withinWatermark
    ? T.field("expiresAtMs", T.LongType, false)
    : inKeys
      ? T.field("eventTimeMs", T.LongType, true)
      : T.field("__dummy__", T.NullType, true)
  return {
    keySchema: T.struct(p.keys.map((k) => T.field(k.name, k.dataType, k.nullable))),
    valueSchema: T.struct([value])
  }
}

const storedTime = (json: unknown): number | undefined => {
  if (!Array.isArray(json) || json.length !== 1) throw new CorruptState("a deduplication state value is not [time]")
  const t = json[0]
  if (t === null) return undefined
  if (typeof t !== "number") throw new CorruptState("a deduplication state time is not a number")
  return t
}

/**
 * Runs the operator over its child's rows for the batch `ctx` describes, commits its store and
 * reports its progress; returns the rows that pass, in input order.
 *
 * @since 0.1.0
 */
export const executeStreamingDeduplicate = (
  p: P.StreamingDeduplicateExec,
  rows: ReadonlyArray<InternalRow>,
  ctx: StatefulContext,
  cctx: CompileContext
): Effect.Effect<ReadonlyArray<InternalRow>, StateStoreError> =>
  Effect.suspend(() => {
    const input = p.child.output
    const { et, keyEt } = eventTimeInfo(p)
    if (p.withinWatermark && et === undefined) {
      // The unsupported-operation checker refuses this plan (Spark's lookup fails the same way).
      return Effect.die(
        new Error(
          `Stateful operator ${p.operatorId}: dropDuplicatesWithinWatermark needs an event-time column (a bug in the unsupported-operation checker if it gets here)`
        )
      )
    }
    const timeEval = et === undefined ? undefined : compile(et, input, cctx)
    const timeOf = et === undefined ? undefined : eventTimeOf(et.dataType)
    const delayMs = et?.eventTimeDelayMs ?? 0
    const keyTimeEval = keyEt === undefined ? undefined : compile(keyEt, input, cctx)
    const keyTimeOf = keyEt === undefined ? undefined : eventTimeOf(keyEt.dataType)
    const keyEvals = p.keys.map((k) => compile(k, input, cctx))
    const toKey = stateKey(p.keys.map((k) => k.dataType))
    const nK = keyEvals.length
    const scratch = new Array<unknown>(nK)

    // 1. Late rows, on the input's event-time column.
    const lateWm = operatorWatermarks(p, ctx).lateEventsMs
    let droppedByWatermark = 0
    const kept: Array<InternalRow> = []
    const keys: Array<string> = []
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]
      if (timeEval !== undefined && timeOf !== undefined && atOrBelow(timeOf(timeEval(row)), lateWm)) {
        droppedByWatermark++
        continue
      }
      for (let i = 0; i < nK; i++) scratch[i] = keyEvals[i](row)
      kept.push(row)
      keys.push(toKey(scratch))
    }
    const evictWm = operatorWatermarks(p, ctx).evictionMs

    return withOperatorStore(ctx, p.operatorId, dedupStateSchema(p), (store) =>
      Effect.gen(function* () {
        yield* store.load(new Set(keys))
        // 2. First occurrences pass and are remembered; the rest are duplicates.
        const out: Array<InternalRow> = []
        let duplicates = 0
        const [, updatesMs] = yield* timed(
          Effect.sync(() => {
            const seen = new Set<string>()
            for (let r = 0; r < kept.length; r++) {
              const k = keys[r]
              if (seen.has(k) || store.get(k) !== undefined) {
                duplicates++
                continue
              }
              seen.add(k)
              const row = kept[r]
              let value: unknown
              if (p.withinWatermark) {
                // Spark reads the event time as a long: a null time counts as 0.
                const t = timeOf !== undefined && timeEval !== undefined ? timeOf(timeEval(row)) : undefined
                value = [(t ?? 0) + delayMs]
              } else if (keyTimeOf !== undefined && keyTimeEval !== undefined) {
                value = [keyTimeOf(keyTimeEval(row)) ?? null]
              } else {
                value = [null]
              }
              store.put(k, value)
              out.push(row)
            }
          })
        )
        // 3. Eviction against this batch's watermark.
        let removed = 0
        let removalsMs = 0
        if (evictWm !== undefined && (p.withinWatermark || keyEt !== undefined)) {
          const [, ms] = yield* timed(
            Effect.flatMap(store.scan(), (entries) =>
              decodingState(p.operatorId, () => {
                const toRemove: Array<string> = []
                for (const [key, value] of entries) if (atOrBelow(storedTime(value), evictWm)) toRemove.push(key)
                for (const key of toRemove) store.remove(key)
                removed = toRemove.length
              })
            )
          )
          removalsMs = ms
        }
        yield* commitAndReport(ctx, p.operatorId, store, {
          operatorName: operatorName(p),
          numRowsUpdated: out.length,
          allUpdatesTimeMs: updatesMs,
          numRowsRemoved: removed,
          allRemovalsTimeMs: removalsMs,
          numRowsDroppedByWatermark: droppedByWatermark,
          customMetrics: { numDroppedDuplicateRows: duplicates }
        })
        return out
      })
    )
  })
