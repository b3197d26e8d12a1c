/**
 * Joins in the analyzer: both sides resolved, a self-join's right side re-instantiated with new
 * expression ids (Spark's `DeduplicateRelations`), the condition resolved against both sides and
 * checked to be boolean, and a `USING` join turned into key equalities plus a projection with
 * one column per key (Spark's `ResolveNaturalAndUsingJoin`; a full outer join coalesces the keys).
 *
 * @since 0.1.0
 */
import * as E from "../Expression.ts"
import { lookup } from "../functions/mod.ts"
import * as P from "../LogicalPlan.ts"
import { output, withNullability } from "./PlanOutput.ts"
import { collect, hasAggregate, hasGenerator, isAggregateFn, isExplode, NOTHING, type Resolver } from "./Resolver.ts"
import { stableExprId } from "./StableIds.ts"
import {
  coerceBinary,
  coerceCaseWhen,
  dataTypeOf,
  failClass,
  toPrettySQL,
  toSQLExpr,
  toSQLId,
  toSQLType
} from "./TypeCoercion.ts"

export const resolveJoin = (r: Resolver, p: P.Join): P.LogicalPlan => {
  const left = r.resolve(p.left)
  const right = dedupRight(left, r.resolve(p.right), p)
  const lo = output(left)
  const ro = output(right)
  const scope = r.scopeOf([left, right])
  let condition: E.Expression | undefined
  if (p.condition !== undefined) {
    const c = r.resolveRefs(p.condition, scope)
    if (hasAggregate(c) || hasGenerator(c)) {
      return failClass(
        "InvalidPlan",
        "UNSUPPORTED_EXPR_FOR_OPERATOR",
        `A query operator contains one or more unsupported expressions.\nConsider to rewrite it to avoid window functions, aggregate functions, and generator functions in the WHERE clause.\nInvalid expressions: [${[...collect(c, isAggregateFn), ...collect(c, isExplode)].map(toPrettySQL).join(", ")}]`
      )
    }
    condition = r.typeExpr(c, NOTHING)
  }
  if (p.usingColumns === undefined) {
    if (condition !== undefined) checkJoinCondition(condition)
    return { ...p, left, right, condition }
  }
  // Spark's USING join: key equalities plus a projection with one column per key
  const find = (side: ReadonlyArray<E.AttributeReference>, plan: P.LogicalPlan, key: string, sideName: string) =>
    side.find((a) => r.eq(a.name, key)) ??
    failClass(
      "UnresolvedColumn",
      "UNRESOLVED_USING_COLUMN_FOR_JOIN",
      `USING column ${toSQLId(key)} cannot be resolved on the ${sideName} side of the join. The ${sideName}-side columns: [${output(
        plan
      )
        .map((a) => a.name)
        .sort()
        .map((n) => toSQLId(n))
        .join(", ")}].`
    )
  const leftKeys = p.usingColumns.map((k) => find(lo, left, k, "left"))
  const rightKeys = p.usingColumns.map((k) => find(ro, right, k, "right"))
  const equalities = leftKeys.map((l, i) =>
    coerceBinary({ _tag: "BinaryExpression", op: "=", left: l, right: rightKeys[i] })
  )
  const all = condition === undefined ? equalities : [condition, ...equalities]
  const joinCond = all.reduce((a, b) => ({ _tag: "BinaryExpression", op: "and", left: a, right: b }))
  checkJoinCondition(joinCond)
  const join: P.Join = { ...p, left, right, condition: joinCond, usingColumns: undefined }
  const lKeys = new Set(leftKeys.map((a) => a.exprId))
  const rKeys = new Set(rightKeys.map((a) => a.exprId))
  const lUnique = lo.filter((a) => !lKeys.has(a.exprId))
  const rUnique = ro.filter((a) => !rKeys.has(a.exprId))
  const nullable = (a: E.AttributeReference) => withNullability(a, true)
  let list: ReadonlyArray<E.Expression>
  switch (p.joinType) {
    case "inner":
    case "cross":
      list = [...leftKeys, ...lUnique, ...rUnique]
      break
    case "left_outer":
      list = [...leftKeys, ...lUnique, ...rUnique.map(nullable)]
      break
    case "left_semi":
    case "left_anti":
      list = [...leftKeys, ...lUnique]
      break
    case "right_outer":
      list = [...rightKeys, ...lUnique.map(nullable), ...rUnique]
      break
    case "full_outer": {
      const keys = leftKeys.map((l, i): E.Expression => {
        const args = [nullable(l), nullable(rightKeys[i])]
        const call: E.ScalarFunction = { _tag: "ScalarFunction", name: "coalesce", args, dataType: undefined }
        const child: E.Expression =
          lookup("coalesce") !== undefined
            ? r.resolveScalar(call, args)
            : coerceCaseWhen({
                _tag: "CaseWhen",
                branches: [[{ _tag: "UnaryExpression", op: "isNotNull", child: args[0] }, args[0]]],
                otherwise: args[1]
              })
        return { _tag: "Alias", child, name: l.name, exprId: stableExprId(p, `using:${i}`) }
      })
      list = [...keys, ...lUnique.map(nullable), ...rUnique.map(nullable)]
      break
    }
  }
  return { _tag: "Project", planId: p.planId, projectList: list, child: join }
}

const checkJoinCondition = (c: E.Expression): void => {
  const t = dataTypeOf(c)
  if (t._tag !== "boolean") {
    failClass(
      "DataTypeMismatch",
      "JOIN_CONDITION_IS_NOT_BOOLEAN_TYPE",
      `The join condition ${toSQLExpr(c)} has the invalid type ${toSQLType(t)}, expected "BOOLEAN".`
    )
  }
}

/**
 * Spark's `DeduplicateRelations`: when both sides of a join produce the same attributes (a
 * self-join), the right side is re-instantiated with new expression ids.
 */
const dedupRight = (left: P.LogicalPlan, right: P.LogicalPlan, owner: object): P.LogicalPlan => {
  const leftIds = new Set(output(left).map((a) => a.exprId))
  if (!output(right).some((a) => leftIds.has(a.exprId))) return right
  const map = new Map<number, number>()
  const fresh = (id: number): number => {
    let n = map.get(id)
    if (n === undefined) {
      n = stableExprId(owner, `dedup:${id}`)
      map.set(id, n)
    }
    return n
  }
  const renew = (a: E.AttributeReference): E.AttributeReference => ({ ...a, exprId: fresh(a.exprId) })
  const rewrite = (e: E.Expression): E.Expression =>
    E.transformUp(e, (x) => {
      if (x._tag === "AttributeReference") {
        const n = map.get(x.exprId)
        return n === undefined ? x : { ...x, exprId: n }
      }
      return x
    })
  const renewAliases = (list: ReadonlyArray<E.Expression>): ReadonlyArray<E.Expression> =>
    list.map((e) => {
      const r = rewrite(e)
      return r._tag === "Alias" ? { ...r, exprId: fresh(r.exprId) } : r
    })
  return P.transformUp(right, (p): P.LogicalPlan => {
    switch (p._tag) {
      case "LocalRelation":
      case "DataSourceRelation":
      case "StreamingRelation":
        return { ...p, output: p.output.map(renew) }
      case "MapElements":
      case "TransformWithState":
      case "FlatMapGroupsWithState":
        return { ...p, output: p.output.map(renew) }
      case "Generate":
        return { ...p, generator: rewrite(p.generator), generatorOutput: p.generatorOutput.map(renew) }
      case "Project":
        return { ...p, projectList: renewAliases(p.projectList) }
      case "Aggregate":
        return {
          ...p,
          groupingExpressions: p.groupingExpressions.map(rewrite),
          aggregateExpressions: renewAliases(p.aggregateExpressions)
        }
      case "Filter":
        return { ...p, condition: rewrite(p.condition) }
      case "Join":
        return { ...p, condition: p.condition === undefined ? undefined : rewrite(p.condition) }
      case "Sort":
        return { ...p, order: p.order.map((o) => rewrite(o) as E.SortOrder) }
      case "Deduplicate":
        return {
          ...p,
          keys: p.keys === undefined ? undefined : p.keys.map((k) => rewrite(k) as E.AttributeReference)
        }
      case "EventTimeWatermark":
        return { ...p, eventTime: rewrite(p.eventTime) }
      case "Window":
        return {
          ...p,
          windowExpressions: renewAliases(p.windowExpressions),
          partitionSpec: p.partitionSpec.map(rewrite),
          orderSpec: p.orderSpec.map(rewrite)
        }
      case "Limit":
      case "Distinct":
      case "Union":
      case "Intersect":
      case "Except":
      case "TypedFilter":
      case "SubqueryAlias":
      case "WithColumns":
      case "WithColumnsRenamed":
      case "Drop":
        return p
    }
  })
}
