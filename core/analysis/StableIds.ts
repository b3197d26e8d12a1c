/**
 * Ids the analyzer creates (aliases, generator outputs, window columns, deduplicated relations),
 * derived from the plan node that needs them, so analyzing the same plan twice gives the same
 * ids (Spark gets the same from analyzing a plan once and caching it).
 *
 * @since 0.1.0
 */
import * as E from "../Expression.ts"
import * as P from "../LogicalPlan.ts"

const exprIdCache = new WeakMap<object, Map<string, number>>()
const planIdCache = new WeakMap<object, Map<string, number>>()

/**
 * An expression id owned by `owner` under `key`: the same on every analysis of the same plan.
 *
 * @since 0.1.0
 */
export const stableExprId = (owner: object, key: string): number => {
  let m = exprIdCache.get(owner)
  if (m === undefined) {
    m = new Map()
    exprIdCache.set(owner, m)
  }
  let id = m.get(key)
  if (id === undefined) {
    id = E.newExprId()
    m.set(key, id)
  }
  return id
}

/**
 * A plan id owned by `owner` under `key`, stable in the same way.
 *
 * @since 0.1.0
 */
export const stablePlanId = (owner: object, key: string): number => {
  let m = planIdCache.get(owner)
  if (m === undefined) {
    m = new Map()
    planIdCache.set(owner, m)
  }
  let id = m.get(key)
  if (id === undefined) {
    id = P.newPlanId()
    m.set(key, id)
  }
  return id
}
