/**
 * Spark's `PropagateWatermarkSimulator` (`WatermarkPropagator.scala`, the propagator used while
 * `spark.sql.streaming.statefulOperator.allowMultiple` is true): the watermark each stateful
 * operator runs with is not the query's global watermark but the one its input carries after the
 * operators below it.
 *
 * The plan is walked children first:
 * - an `EventTimeWatermarkExec` outputs the global ("origin") watermark;
 * - a stateful operator's input watermark is the minimum of its children's output watermarks
 *   (children without one are skipped), and its output is `produceOutputWatermark(input)`;
 * - any other node passes the minimum of its children's watermarks on (a union takes the lower).
 *
 * An operator's watermark for eviction is its input watermark for this batch's global
 * watermark; its watermark for late events is its input watermark for the previous batch's
 * global watermark. Spark clamps both at 0 (an operator with no input watermark uses 0) and
 * skips the simulation when the global watermark is 0 (every operator then uses 0).
 *
 * @since 0.1.0
 */
import type * as P from "../SparkPlan.ts"
import { children } from "../SparkPlan.ts"
import type { StatefulContext } from "./StatefulContext.ts"
import { stateWatermarkPredicates } from "./StreamingSymmetricHashJoinHelper.ts"

/**
 * Spark's `StateStoreWriter.produceOutputWatermark` of a stateful operator for its input
 * watermark `inputMs` (`undefined`: the operator gives its output no watermark).
 *
 * - aggregation, session window, deduplication: the input watermark (Spark's default: a window
 *   is only emitted once the watermark passes its end, so nothing it emits is late downstream);
 * - stream-stream join: the minimum of the input watermark and the two sides' state watermarks
 *   (a row waiting in state for a partner, e.g. `l.t BETWEEN r.t - 40 s AND …`, may still come
 *   out that much later; the state value watermark carries Spark's `- 1 ms`);
 * - `flatMapGroupsWithState`: none (the user function's output has no event-time guarantee);
 * - `transformWithState`: none in `ProcessingTime` mode, the input watermark otherwise.
 *
 * @example
 * ```ts
 * import { produceOutputWatermark } from "./WatermarkPropagator.ts"
 * // join on `leftTime BETWEEN rightTime AND rightTime + interval 40 seconds`, input watermark 0:
 * // produceOutputWatermark(join, 0) === -40001
 * ```
 * @since 0.1.0
 */
export const produceOutputWatermark = (p: P.SparkPlan, inputMs: number): number | undefined => {
  switch (p._tag) {
    case "StreamingSymmetricHashJoinExec": {
      const predicates = stateWatermarkPredicates(
        p.left.output,
        p.right.output,
        p.leftKeys,
        p.rightKeys,
        p.condition.full,
        inputMs
      )
      let out = inputMs
      if (predicates.left !== undefined) out = Math.min(out, predicates.left.watermarkMs)
      if (predicates.right !== undefined) out = Math.min(out, predicates.right.watermarkMs)
      return out
    }
    case "FlatMapGroupsWithStateExec":
      return p.isStreaming ? undefined : inputMs
    case "TransformWithStateExec":
      return p.timeMode === "ProcessingTime" ? undefined : inputMs
    default:
      return inputMs
  }
}

const isStatefulOperator = (p: P.SparkPlan): boolean => {
  switch (p._tag) {
    case "StatefulAggregateExec":
    case "StreamingDeduplicateExec":
    case "StreamingSymmetricHashJoinExec":
    case "TransformWithStateExec":
      return true
    case "FlatMapGroupsWithStateExec":
      return p.isStreaming
    default:
      return false
  }
}

/**
 * A node's output watermark: a number, `null` when the watermark below is cut off by an
 * operator that produces none (Spark's `None` past a `flatMapGroupsWithState`), `undefined` when
 * no watermark node is below at all.
 */
type Propagated = number | null | undefined

/** The minimum of the children's output watermarks that exist (Spark skips the `None`s). */
const minOfChildren = (p: P.SparkPlan, originMs: number): Propagated => {
  let min: number | undefined
  let cut = false
  for (const c of children(p)) {
    const w = outputWatermark(c, originMs)
    if (w === null) cut = true
    else if (w !== undefined && (min === undefined || w < min)) min = w
  }
  return min !== undefined ? min : cut ? null : undefined
}

/** The output watermark of a node for the global watermark `originMs`, children first. */
const outputWatermark = (p: P.SparkPlan, originMs: number): Propagated => {
  if (p._tag === "EventTimeWatermarkExec") return originMs
  const input = minOfChildren(p, originMs)
  if (!isStatefulOperator(p) || input === null || input === undefined) return input
  return produceOutputWatermark(p, input) ?? null
}

/**
 * Spark's `PropagateWatermarkSimulator.getInputWatermark`: the input watermark of the stateful
 * operator `operator` when the query's global watermark is `originMs` (0 when the global
 * watermark is 0, and never below 0; 0 when an operator below gives no output watermark).
 * An operator without any watermark node below keeps the global watermark: in a query it has
 * no event-time column to compare, and a plan built by hand for a test (no watermark node,
 * as Spark's operator suites set `eventTimeWatermarkForEviction` directly) keeps its meaning.
 *
 * @example
 * ```ts
 * import { inputWatermark } from "./WatermarkPropagator.ts"
 * // an aggregation over a join on `l.t BETWEEN r.t - interval 1 hour AND r.t + interval 1 hour`,
 * // global watermark 2023-01-01 01:00:20:
 * // inputWatermark(aggregate, Date.parse("2023-01-01T01:00:20Z")) === Date.parse("2023-01-01T00:00:20Z") - 1
 * ```
 * @since 0.1.0
 */
export const inputWatermark = (operator: P.SparkPlan, originMs: number): number => {
  if (originMs === 0) return 0
  const input = minOfChildren(operator, originMs)
  if (input === undefined) return originMs
  return Math.max(input ?? 0, 0)
}

/**
 * The input watermarks of every stateful operator of `plan` by operator id, for the global
 * watermark `originMs` (Spark's `inputWatermarks(batchId)`).
 *
 * @since 0.1.0
 */
export const operatorInputWatermarks = (plan: P.SparkPlan, originMs: number): ReadonlyMap<number, number> => {
  const out = new Map<number, number>()
  const walk = (p: P.SparkPlan): void => {
    for (const c of children(p)) walk(c)
    if (isStatefulOperator(p) && "operatorId" in p) out.set(p.operatorId, inputWatermark(p, originMs))
  }
  walk(plan)
  return out
}

/**
 * The two watermarks the stateful operator `operator` runs with in a batch (Spark's
 * `eventTimeWatermarkForLateEvents` / `eventTimeWatermarkForEviction` as
 * `IncrementalExecution` sets them from the propagator): the batch's global watermarks
 * propagated through the operators below; both `undefined` when the query has no watermark.
 * With `ctx.propagateWatermarks === false` (Spark's `UseSingleWatermarkPropagator`, when
 * `spark.sql.streaming.statefulOperator.allowMultiple` is false) the global ones.
 *
 * @since 0.1.0
 */
export const operatorWatermarks = (
  operator: P.SparkPlan,
  ctx: StatefulContext
): { readonly lateEventsMs: number | undefined; readonly evictionMs: number | undefined } => {
  const late = ctx.watermarkForLateEventsMs
  const evict = ctx.watermarkForEvictionMs
  if (ctx.propagateWatermarks === false) return { lateEventsMs: late, evictionMs: evict }
  return {
    lateEventsMs: late === undefined ? undefined : inputWatermark(operator, late),
    evictionMs: evict === undefined ? undefined : inputWatermark(operator, evict)
  }
}
