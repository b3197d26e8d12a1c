/**
 * Time-window assignment fused into a streaming aggregation.
 *
 * The analyzer rewrites `groupBy(window(ts, ...), ...)` as Spark's `TimeWindowing` does: a
 * `Generate` below the aggregate makes one row per input row and window, carrying the `window`
 * struct, and the aggregate groups by that column. Materialising those rows (and the `Project`
 * the optimizer puts over them) costs more than the aggregation itself, so when the aggregate is
 * the only reader of the window column, the stateful aggregate runs over the `Generate`'s input
 * instead and computes each row's windows arithmetically inside its grouping loop. Results are
 * the same rows in the same order; the physical plan (and `explain()`) does not change, the
 * fusion is decided when the plan runs.
 *
 * @since 0.1.0
 */
import type * as E from "../../../core/Expression.ts"
import { references } from "../../../core/Expression.ts"
import type * as P from "../SparkPlan.ts"

/**
 * A window assignment the aggregate does itself: it reads the rows of `source` (the
 * `Generate`'s child), and its grouping expression `groupingIndex` is the window of `window`.
 *
 * @since 0.1.0
 */
export interface FusedWindow {
  readonly source: P.SparkPlan
  readonly window: E.TimeWindow
  readonly groupingIndex: number
}

const stripAlias = (e: E.Expression): E.Expression => (e._tag === "Alias" ? stripAlias(e.child) : e)

const memo = new WeakMap<P.StatefulAggregateExec, FusedWindow | null>()

/**
 * The fused form of `p`, or `undefined` when its input must be computed as planned. Fused when,
 * below the aggregate, only `Project`s of plain columns lead to a `Generate` of a time window,
 * and the aggregate reads the window column only as one whole grouping expression (every other
 * grouping expression and every aggregate argument reads the `Generate`'s input columns).
 *
 * @since 0.1.0
 */
export const fusedWindow = (p: P.StatefulAggregateExec): FusedWindow | undefined => {
  const known = memo.get(p)
  if (known !== undefined) return known ?? undefined
  const found = find(p)
  memo.set(p, found ?? null)
  return found
}

const find = (p: P.StatefulAggregateExec): FusedWindow | undefined => {
  if (p.sessionWindow !== undefined) return undefined
  let node = p.child
  while (node._tag === "ProjectExec") {
    if (!node.projectList.every((e) => e._tag === "AttributeReference")) return undefined
    node = node.child
  }
  if (node._tag !== "GenerateExec" || node.generator._tag !== "TimeWindow") return undefined
  if (node.generatorOutput.length !== 1) return undefined
  const windowId = node.generatorOutput[0].exprId
  const sourceIds = new Set(node.child.output.map((a) => a.exprId))
  let groupingIndex = -1
  for (let i = 0; i < p.groupingExpressions.length; i++) {
    const g = stripAlias(p.groupingExpressions[i])
    if (g._tag === "AttributeReference" && g.exprId === windowId) {
      if (groupingIndex >= 0) return undefined
      groupingIndex = i
    } else if (!references(g).every((a) => sourceIds.has(a.exprId))) return undefined
  }
  if (groupingIndex < 0) return undefined
  for (const f of p.aggregateFunctions) {
    for (const a of f.args) if (!references(a).every((r) => sourceIds.has(r.exprId))) return undefined
  }
  return { source: node.child, window: node.generator, groupingIndex }
}
