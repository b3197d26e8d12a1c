/**
 * What the streaming engine needs to know about a plan's stateful operators without knowing the
 * operators: their ids, names and stores (to open and check the stores' schemas before the first
 * batch), and whether a new watermark calls for a batch without data (Spark's
 * `StateStoreWriter.shouldRunAnotherBatch`).
 *
 * Operator ids come from one fixed walk, Spark's (`IncrementalExecution` numbers operators in a
 * top-down `transform`): parents before children, left child before right (pre-order), numbered
 * 0, 1, 2, … — the same plan gets the same ids after a restart.
 *
 * @since 0.1.0
 */
import type { OutputMode } from "../../../core/Streaming.ts"
import * as P from "../SparkPlan.ts"
import { aggregateStateSchema, operatorName as aggregateName } from "./StatefulAggregateExec.ts"
import type { OperatorStateSchema } from "./StatefulContext.ts"
import { DEFAULT_STORE_NAME } from "./OperatorState.ts"
import { dedupStateSchema, operatorName as dedupName } from "./StreamingDeduplicateExec.ts"
import {
  flatMapGroupsWithStateSchema,
  groupsWithStateShouldRunAnotherBatch,
  operatorName as groupsWithStateName
} from "./FlatMapGroupsWithStateExec.ts"
import { operatorName as TWS_NAME, transformWithStateStores } from "./TransformWithStateDeclarations.ts"
import { multipleEventTimeColumnsError } from "./WatermarkSupport.ts"
import { inputWatermark } from "./WatermarkPropagator.ts"
import {
  joinShouldRunAnotherBatch,
  joinStateStores,
  operatorName as joinName
} from "./StreamingSymmetricHashJoinExec.ts"

/**
 * A stateful physical operator.
 *
 * @since 0.1.0
 */
export type StatefulOperator =
  | P.StatefulAggregateExec
  | P.StreamingDeduplicateExec
  | P.StreamingSymmetricHashJoinExec
  | P.TransformWithStateExec
  | P.FlatMapGroupsWithStateExec

/**
 * One store of a stateful operator: its name (`"default"` for an operator's only store) and the
 * key and value schemas it is opened with.
 *
 * @since 0.1.0
 */
export interface StatefulStore {
  readonly storeName: string
  readonly schema: OperatorStateSchema
  /**
   * The store may first appear at a restart (a transformWithState variable or timers that the
   * earlier runs did not have): one with no committed version at all is not opened before the
   * first batch, which checks the operator's properties first (Spark's `validateNewMetadata`).
   */
  readonly mayBeNew?: boolean
}

/**
 * A stateful operator as the engine sees it.
 *
 * @since 0.1.0
 */
export interface StatefulOperatorInfo {
  readonly operatorId: number
  /** Spark's `shortName` (`stateStoreSave`, `sessionWindowStateStoreSaveExec`, `dedupe`, `dedupeWithinWatermark`). */
  readonly name: string
  readonly stores: ReadonlyArray<StatefulStore>
  readonly node: StatefulOperator
}

/**
 * True for the stateful operators.
 *
 * @since 0.1.0
 */
export const isStatefulOperator = (p: P.SparkPlan): p is StatefulOperator =>
  p._tag === "StatefulAggregateExec" ||
  p._tag === "StreamingDeduplicateExec" ||
  p._tag === "StreamingSymmetricHashJoinExec" ||
  p._tag === "TransformWithStateExec" ||
  // over a batch input it is Spark's MapGroupsExec: no state
  (p._tag === "FlatMapGroupsWithStateExec" && p.isStreaming)

const walkPostOrder = (p: P.SparkPlan, f: (p: P.SparkPlan) => void): void => {
  for (const c of P.children(p)) walkPostOrder(c, f)
  f(p)
}

/**
 * Numbers the stateful operators 0, 1, 2, … in pre-order (the topmost first, left before right),
 * as Spark does.
 * The planner calls it once per streaming plan.
 *
 * @since 0.1.0
 */
export const assignOperatorIds = (plan: P.SparkPlan): P.SparkPlan => {
  let next = 0
  const assign = (p: P.SparkPlan): P.SparkPlan => {
    const self = isStatefulOperator(p) ? { ...p, operatorId: next++ } : p
    const cs = P.children(self)
    return cs.length === 0 ? self : P.withChildren(self, cs.map(assign))
  }
  return assign(plan)
}

/**
 * The stateful operators of a plan in operator-id order, with the stores each one opens.
 *
 * @example
 * ```ts
 * import { statefulOperators } from "./StatefulOperators.ts"
 * // for `input.groupBy("k").count()` planned with { streaming: true }:
 * // [{ operatorId: 0, name: "stateStoreSave", stores: [{ storeName: "default", schema: … }], node: … }]
 * ```
 * @since 0.1.0
 */
export const statefulOperators = (plan: P.SparkPlan): ReadonlyArray<StatefulOperatorInfo> => {
  const out: Array<StatefulOperatorInfo> = []
  walkPostOrder(plan, (p) => {
    switch (p._tag) {
      case "StatefulAggregateExec":
        out.push({
          operatorId: p.operatorId,
          name: aggregateName(p),
          stores: [{ storeName: DEFAULT_STORE_NAME, schema: aggregateStateSchema(p) }],
          node: p
        })
        return
      case "StreamingDeduplicateExec":
        out.push({
          operatorId: p.operatorId,
          name: dedupName(p),
          stores: [{ storeName: DEFAULT_STORE_NAME, schema: dedupStateSchema(p) }],
          node: p
        })
        return
      case "StreamingSymmetricHashJoinExec":
        // Spark's four stores: `left-keyToNumValues`, `left-keyWithIndexToValue`, `right-…`.
        out.push({ operatorId: p.operatorId, name: joinName, stores: joinStateStores(p), node: p })
        return
      case "FlatMapGroupsWithStateExec":
        if (p.isStreaming) {
          const stores = [{ storeName: DEFAULT_STORE_NAME, schema: flatMapGroupsWithStateSchema(p) }]
          out.push({ operatorId: p.operatorId, name: groupsWithStateName, stores, node: p })
        }
        return
      case "TransformWithStateExec":
        // One store per state variable (named by the variable), plus the timers' store.
        out.push({ operatorId: p.operatorId, name: TWS_NAME, stores: transformWithStateStores(p), node: p })
        return
      default:
        return
    }
  })
  return out.sort((a, b) => a.operatorId - b.operatorId)
}

/**
 * Spark's `WatermarkSupport.findEventTimeColumn(child.output, allowMultipleEventTimeColumns =
 * false)`, which every stateful operator but the stream-stream join runs when a batch executes
 * (unless `spark.sql.streaming.statefulOperator.allowMultiple` is false): the first operator
 * whose input carries more than one distinct event-time column, with Spark's message
 * (`_LEGACY_ERROR_TEMP_3077`); `undefined` when none does.
 *
 * @since 0.1.0
 */
export const multipleEventTimeColumns = (ops: ReadonlyArray<StatefulOperatorInfo>): string | undefined => {
  for (const { node } of ops) {
    const input =
      node._tag === "StatefulAggregateExec"
        ? node.groupingAttributes
        : node._tag === "StreamingSymmetricHashJoinExec"
          ? []
          : node.child.output
    const error = multipleEventTimeColumnsError(input)
    if (error !== undefined) return error
  }
  return undefined
}

const isStateful = (p: P.SparkPlan): boolean =>
  p._tag === "StatefulAggregateExec" ||
  p._tag === "StreamingDeduplicateExec" ||
  p._tag === "StreamingSymmetricHashJoinExec" ||
  p._tag === "FlatMapGroupsWithStateExec" ||
  p._tag === "TransformWithStateExec"

/**
 * Whether the engine should run a batch without new data because the watermark moved: Spark's
 * `IncrementalExecution.shouldRunAnotherBatch` over every stateful operator's
 * `StateStoreWriter.shouldRunAnotherBatch`. An aggregation (session windows included) asks for
 * one in `append` and `update` mode when `newWatermarkMs` is past the eviction watermark the last
 * batch ran with (its state can now be emitted or evicted); a deduplication asks for one on the
 * same condition in every mode; a stream-stream join asks for one on the same condition when it
 * removes state by the watermark (Spark's `StreamingSymmetricHashJoinExec.shouldRunAnotherBatch`).
 * Without a watermark (`currentEvictionWatermarkMs` undefined)
 * nothing asks. `outputMode` omitted counts as `append`. Each operator compares the watermarks
 * propagated to its input (`propagate`, Spark's default; `false` compares the global ones, as
 * Spark does with `spark.sql.streaming.statefulOperator.allowMultiple` = false).
 *
 * @example
 * ```ts
 * import { shouldRunAnotherBatch } from "./StatefulOperators.ts"
 * // a windowed count in append mode that ran with watermark 5 s; the new watermark is 15 s:
 * // shouldRunAnotherBatch(plan, 15_000, 5_000) === true   (the window [10 s, 15 s) can close)
 * ```
 * @since 0.1.0
 */
export const shouldRunAnotherBatch = (
  plan: P.SparkPlan,
  newWatermarkMs: number,
  currentEvictionWatermarkMs: number | undefined,
  outputMode: OutputMode = "append",
  propagate = true
): boolean => {
  if (currentEvictionWatermarkMs === undefined) return false
  let found = false
  walkPostOrder(plan, (p) => {
    // Spark's `IncrementalExecution.shouldRunAnotherBatch` asks each operator with its own
    // input watermark for the new global one (WatermarkPropagator.ts) against the one it ran with.
    if (found || !isStateful(p)) return
    const newWm = propagate ? inputWatermark(p, newWatermarkMs) : newWatermarkMs
    const currentWm = propagate ? inputWatermark(p, currentEvictionWatermarkMs) : currentEvictionWatermarkMs
    const advanced = newWm > currentWm
    switch (p._tag) {
      case "StatefulAggregateExec":
        if (advanced && outputMode !== "complete") found = true
        return
      case "StreamingDeduplicateExec":
        if (advanced) found = true
        return
      case "StreamingSymmetricHashJoinExec":
        if (joinShouldRunAnotherBatch(p, newWm, currentWm)) found = true
        return
      case "FlatMapGroupsWithStateExec":
        // Spark's FlatMapGroupsWithStateExec: an event-time timeout may fire once the watermark
        // moves. For a processing-time timeout Spark always asks; here the operator asks for a
        // batch when its earliest timeout can fire instead (`StatefulContext.requestBatchAt`).
        if (groupsWithStateShouldRunAnotherBatch(p, newWm, currentWm)) found = true
        return
      case "TransformWithStateExec":
        // Spark's TransformWithStateExecBase: event-time timers can fire once the watermark moves.
        // In ProcessingTime mode Spark always asks; here the operator asks for a batch at its
        // next timer or TTL expiry instead (`StatefulContext.requestBatchAt`).
        if (p.timeMode !== "ProcessingTime" && advanced) found = true
        return
      default:
        return
    }
  })
  return found
}

/**
 * The operators that may owe a batch at a processing time the engine cannot know after a
 * restart (a `transformWithState` in `TimeMode.ProcessingTime`: its timers and TTL expiries are
 * in its stores): the engine runs one batch, with or without data, at the first trigger after a
 * restart, and the operator then asks for the next one (`StatefulContext.requestBatchAt`).
 *
 * @since 0.1.0
 */
export const processingTimeOperators = (plan: P.SparkPlan): ReadonlyArray<number> => {
  const out: Array<number> = []
  walkPostOrder(plan, (p) => {
    if (p._tag === "TransformWithStateExec" && p.timeMode === "ProcessingTime") out.push(p.operatorId)
    if (p._tag === "FlatMapGroupsWithStateExec" && p.isStreaming && p.timeout === "ProcessingTimeTimeout") {
      out.push(p.operatorId)
    }
  })
  return out
}
