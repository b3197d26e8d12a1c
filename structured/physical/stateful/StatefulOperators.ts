/**
 * What the streaming engine needs to know about a plan's stateful operators without knowing the
 * operators: their ids, names and stores (to open and check the stores' schemas before the first
 * batch), and whether a new watermark calls for a batch without data (Spark's
 * `StateStoreWriter.shouldRunAnotherBatch`).
 *
 * Operator ids come from one fixed walk: children before parents, left child before right
 * (post-order), numbered 0, 1, 2, … — the same plan gets the same ids after a restart.
 *
 * @since 0.1.0
 */
import type { OutputMode } from "../../../core/Streaming.ts"
import * as P from "../SparkPlan.ts"
import { aggregateStateSchema, operatorName as aggregateName } from "./StatefulAggregateExec.ts"
import type { OperatorStateSchema } from "./StatefulContext.ts"
import { DEFAULT_STORE_NAME } from "./OperatorState.ts"
import { dedupStateSchema, operatorName as dedupName } from "./StreamingDeduplicateExec.ts"

/**
 * A stateful physical operator.
 *
 * @since 0.1.0
 */
export type StatefulOperator = P.StatefulAggregateExec | P.StreamingDeduplicateExec

/**
 * One store of a stateful operator: its name (`"default"` for an operator's only store) and the
 * key and value schemas it is opened with.
 *
 * @since 0.1.0
 */
export interface StatefulStore {
  readonly storeName: string
  readonly schema: OperatorStateSchema
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
  p._tag === "StatefulAggregateExec" || p._tag === "StreamingDeduplicateExec"

const walkPostOrder = (p: P.SparkPlan, f: (p: P.SparkPlan) => void): void => {
  for (const c of P.children(p)) walkPostOrder(c, f)
  f(p)
}

/**
 * Numbers the stateful operators 0, 1, 2, … in post-order (children first, left before right).
 * The planner calls it once per streaming plan.
 *
 * @since 0.1.0
 */
export const assignOperatorIds = (plan: P.SparkPlan): P.SparkPlan => {
  let next = 0
  return P.transformUp(plan, (p) => (isStatefulOperator(p) ? { ...p, operatorId: next++ } : p))
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
      default:
        return
    }
  })
  return out.sort((a, b) => a.operatorId - b.operatorId)
}

/**
 * Whether the engine should run a batch without new data because the watermark moved: Spark's
 * `IncrementalExecution.shouldRunAnotherBatch` over every stateful operator's
 * `StateStoreWriter.shouldRunAnotherBatch`. An aggregation (session windows included) asks for
 * one in `append` and `update` mode when `newWatermarkMs` is past the eviction watermark the last
 * batch ran with (its state can now be emitted or evicted); a deduplication asks for one on the
 * same condition in every mode. Without a watermark (`currentEvictionWatermarkMs` undefined)
 * nothing asks. `outputMode` omitted counts as `append`.
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
  outputMode: OutputMode = "append"
): boolean => {
  if (currentEvictionWatermarkMs === undefined) return false
  const advanced = newWatermarkMs > currentEvictionWatermarkMs
  let found = false
  walkPostOrder(plan, (p) => {
    switch (p._tag) {
      case "StatefulAggregateExec":
        if (advanced && outputMode !== "complete") found = true
        return
      case "StreamingDeduplicateExec":
        if (advanced) found = true
        return
      default:
        return
    }
  })
  return found
}
