/**
 * The logical optimizer: Catalyst's rules that matter for tributary's plans, applied to a fixed
 * point. Every rule is a pure function from a resolved plan to an equivalent one and returns the
 * same object when it changes nothing, so the fixed point is found by identity.
 *
 * Streaming safety (Spark's own guards): a predicate on a watermark's event-time column never
 * moves below the `EventTimeWatermark` (late rows must reach the watermark tracking), predicates
 * never cross user functions (`TypedFilter`, `MapElements`), and `current_timestamp()` is never
 * folded (it is set per batch).
 *
 * @since 0.1.0
 */
import { output } from "../analysis/PlanOutput.ts"
import { compile } from "../Compile.ts"
import * as T from "../DataType.ts"
import * as E from "../Expression.ts"
import { lookup } from "../functions/mod.ts"
import * as P from "../LogicalPlan.ts"
import { dataTypeOf, equalsType } from "../analysis/TypeCoercion.ts"

/** One optimizer rule. */
export interface Rule {
  readonly name: string
  readonly apply: (p: P.LogicalPlan) => P.LogicalPlan
}

// ---------------------------------------------------------------------------------------------
// Expression helpers
// ---------------------------------------------------------------------------------------------

/** Functions whose result is not a function of their arguments (Spark's `Nondeterministic`). */
const NONDETERMINISTIC = new Set([
  "rand",
  "randn",
  "random",
  "uuid",
  "shuffle",
  "monotonically_increasing_id",
  "spark_partition_id",
  "input_file_name"
])

/** Aggregates whose result depends on row order (Spark marks them non-deterministic). */
const ORDER_DEPENDENT_AGGREGATES = new Set<E.AggregateName>(["first", "last", "collect_list", "collect_set"])

/** Spark's `Expression.deterministic`. */
export const isDeterministic = (e: E.Expression): boolean =>
  !E.exists(
    e,
    (x) =>
      // The batch timestamp changes from micro-batch to micro-batch: a filter on it must stay
      // above a streaming aggregation (Spark's CurrentBatchTimestamp is Nondeterministic).
      x._tag === "CurrentTimestamp" ||
      (x._tag === "ScalarFunction" &&
        (x.udf !== undefined ? x.udf.deterministic === false : isNondeterministicFunction(x.name))) ||
      (x._tag === "AggregateFunction" && ORDER_DEPENDENT_AGGREGATES.has(x.name))
  )

const isNondeterministicFunction = (name: string): boolean =>
  NONDETERMINISTIC.has(name.toLowerCase()) || lookup(name)?.deterministic === false

/** Spark's `Expression.foldable`: computable without any input row, and not per-batch. */
export const isFoldable = (e: E.Expression): boolean => {
  switch (e._tag) {
    case "Literal":
      return true
    case "AttributeReference":
    case "UnresolvedAttribute":
    case "UnresolvedStar":
    case "InvalidExpression":
    case "AggregateFunction":
    case "CurrentTimestamp":
    case "TimeWindow":
    case "SessionWindow":
    case "Explode":
    case "SortOrder":
    case "Alias":
      return false
    case "ScalarFunction":
      // Spark's ScalaUDF is never foldable: a UDF runs per row.
      return (
        e.dataType !== undefined &&
        e.udf === undefined &&
        !isNondeterministicFunction(e.name) &&
        e.args.every(isFoldable)
      )
    default:
      return E.children(e).every(isFoldable)
  }
}

const TRUE: E.Literal = { _tag: "Literal", value: true, dataType: T.BooleanType }
const FALSE: E.Literal = { _tag: "Literal", value: false, dataType: T.BooleanType }

const isTrue = (e: E.Expression): boolean => e._tag === "Literal" && e.value === true
const isFalse = (e: E.Expression): boolean => e._tag === "Literal" && e.value === false
const isNullLiteral = (e: E.Expression): boolean => e._tag === "Literal" && (e.value === null || e.value === undefined)

/** Spark's `splitConjunctivePredicates`. */
export const splitConjuncts = (e: E.Expression): ReadonlyArray<E.Expression> =>
  e._tag === "BinaryExpression" && e.op === "and" ? [...splitConjuncts(e.left), ...splitConjuncts(e.right)] : [e]

const and = (left: E.Expression, right: E.Expression): E.Expression => ({
  _tag: "BinaryExpression",
  op: "and",
  left,
  right
})

const conjoin = (es: ReadonlyArray<E.Expression>): E.Expression | undefined =>
  es.length === 0 ? undefined : es.reduce((a, b) => and(a, b))

/** A key equal for semantically equal expressions (attributes by id, names ignored). */
const keyOf = (e: E.Expression): string => {
  switch (e._tag) {
    case "AttributeReference":
      return `#${e.exprId}`
    case "Literal":
      return `lit(${T.simpleString(e.dataType)}:${String(e.value)})`
    case "Alias":
      return keyOf(e.child)
    case "Cast":
      return `cast(${keyOf(e.child)} as ${T.simpleString(e.to)})`
    case "UnaryExpression":
      return `${e.op}(${keyOf(e.child)})`
    case "BinaryExpression":
      return `(${keyOf(e.left)} ${e.op} ${keyOf(e.right)})`
    case "GetField":
      return `${keyOf(e.child)}.${e.ordinal ?? e.field}`
    case "ScalarFunction":
      return `${e.udf === undefined ? e.name : `udf#${e.udf.id}`}(${e.args.map(keyOf).join(",")})`
    case "AggregateFunction":
      return `agg:${e.name}(${e.distinct};${e.args.map(keyOf).join(",")};${e.options.ignoreNulls ?? ""};${e.options.rsd ?? ""})`
    default:
      return `${e._tag}(${E.children(e).map(keyOf).join(",")}${e._tag === "TimeWindow" ? `;${e.windowMs};${e.slideMs};${e.startMs}` : ""}${
        e._tag === "SortOrder" ? `;${e.direction};${e.nullOrdering}` : ""
      }${e._tag === "Explode" ? `;${e.outer};${e.position}` : ""}${e._tag === "CaseWhen" ? `;${e.otherwise === undefined}` : ""})`
  }
}

const idSet = (attrs: ReadonlyArray<E.AttributeReference>): Set<number> => new Set(attrs.map((a) => a.exprId))

const refIds = (e: E.Expression): Set<number> => idSet(E.references(e))

const subsetOf = (ids: Set<number>, of: Set<number>): boolean => {
  for (const id of ids) if (!of.has(id)) return false
  return true
}

/** Rewrites every expression a node holds (not its children). Identity-preserving. */
const mapExpressions = (p: P.LogicalPlan, f: (e: E.Expression) => E.Expression): P.LogicalPlan => {
  const mapList = <A extends E.Expression>(xs: ReadonlyArray<A>): ReadonlyArray<A> => {
    let changed = false
    const out = xs.map((x) => {
      const y = f(x) as A
      if (y !== x) changed = true
      return y
    })
    return changed ? out : xs
  }
  switch (p._tag) {
    case "Project": {
      const l = mapList(p.projectList)
      return l === p.projectList ? p : { ...p, projectList: l }
    }
    case "Filter": {
      const c = f(p.condition)
      return c === p.condition ? p : { ...p, condition: c }
    }
    case "Aggregate": {
      const g = mapList(p.groupingExpressions)
      const a = mapList(p.aggregateExpressions)
      return g === p.groupingExpressions && a === p.aggregateExpressions
        ? p
        : { ...p, groupingExpressions: g, aggregateExpressions: a }
    }
    case "Join": {
      if (p.condition === undefined) return p
      const c = f(p.condition)
      return c === p.condition ? p : { ...p, condition: c }
    }
    case "Sort": {
      const o = mapList(p.order)
      return o === p.order ? p : { ...p, order: o }
    }
    case "Generate": {
      const g = f(p.generator)
      return g === p.generator ? p : { ...p, generator: g }
    }
    default:
      return p
  }
}

/** Applies `f` to every expression of every node, bottom-up within each expression. */
const transformAllExpressions = (plan: P.LogicalPlan, f: (e: E.Expression) => E.Expression): P.LogicalPlan =>
  P.transformUp(plan, (p) => mapExpressions(p, (e) => E.transformUp(e, f)))

/** Replaces references to the aliases of `list` by the aliased expressions (Spark's `replaceAlias`). */
const aliasMap = (list: ReadonlyArray<E.Expression>): Map<number, E.Expression> => {
  const m = new Map<number, E.Expression>()
  for (const e of list) if (e._tag === "Alias") m.set(e.exprId, e.child)
  return m
}

const replaceAlias = (e: E.Expression, aliases: Map<number, E.Expression>): E.Expression =>
  E.transformUp(e, (x) => (x._tag === "AttributeReference" ? (aliases.get(x.exprId) ?? x) : x))

const filter = (condition: E.Expression, child: P.LogicalPlan, planId = P.newPlanId()): P.Filter => ({
  _tag: "Filter",
  planId,
  condition,
  child
})

// ---------------------------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------------------------

/** Spark's `EliminateSubqueryAliases`: aliases matter only to analysis. */
const eliminateSubqueryAliases: Rule = {
  name: "EliminateSubqueryAliases",
  apply: (plan) => P.transformUp(plan, (p) => (p._tag === "SubqueryAlias" ? p.child : p))
}

/**
 * Spark's `EliminateEventTimeWatermark`: a watermark over a batch plan (an initial state, the
 * static side of a join) means nothing; without this it would hold the query's watermark back.
 */
const eliminateEventTimeWatermark: Rule = {
  name: "EliminateEventTimeWatermark",
  apply: (plan) =>
    P.transformUp(plan, (p) => (p._tag === "EventTimeWatermark" && !P.isStreaming(p.child) ? p.child : p))
}

const combine = (outer: P.Filter, inner: P.Filter): P.LogicalPlan => {
  if (!isDeterministic(outer.condition) || !isDeterministic(inner.condition)) return outer
  const have = new Set(splitConjuncts(inner.condition).map(keyOf))
  const rest = splitConjuncts(outer.condition).filter((c) => !have.has(keyOf(c)))
  const extra = conjoin(rest)
  return extra === undefined ? inner : { ...inner, condition: and(inner.condition, extra) }
}

/** Spark's `CombineFilters`: two adjacent deterministic filters become one (`inner AND outer`). */
const combineFilters: Rule = {
  name: "CombineFilters",
  apply: (plan) =>
    P.transformUp(plan, (p) => (p._tag === "Filter" && p.child._tag === "Filter" ? combine(p, p.child) : p))
}

/** Pushes `cond` (conjuncts) below `node`'s child when `canPush` allows, Spark's `pushDownPredicate`. */
const pushThroughUnary = (
  f: P.Filter,
  grandChild: P.LogicalPlan,
  canPush: (c: E.Expression) => boolean,
  rebuild: (below: P.LogicalPlan) => P.LogicalPlan
): P.LogicalPlan => {
  const conjuncts = splitConjuncts(f.condition)
  const down = conjuncts.filter(canPush)
  if (down.length === 0) return f
  const up = conjuncts.filter((c) => !canPush(c))
  const pushed = rebuild(filter(conjoin(down) as E.Expression, grandChild))
  const stay = conjoin(up)
  return stay === undefined ? pushed : { ...f, condition: stay, child: pushed }
}

type Side = "left" | "right"

/** Where a join lets predicates above it move (Spark's `PushPredicateThroughJoin`). */
const filterPushableSides = (t: P.JoinType): ReadonlyArray<Side> => {
  switch (t) {
    case "inner":
    case "cross":
      return ["left", "right"]
    case "left_outer":
    case "left_semi":
    case "left_anti":
      return ["left"]
    case "right_outer":
      return ["right"]
    case "full_outer":
      return []
  }
}

/** Where a join's own condition may move (Spark's `PushPredicateThroughJoin` on the join condition). */
const conditionPushableSides = (t: P.JoinType): ReadonlyArray<Side> => {
  switch (t) {
    case "inner":
    case "cross":
    case "left_semi":
      return ["left", "right"]
    case "right_outer":
      return ["left"]
    case "left_outer":
    case "left_anti":
      return ["right"]
    case "full_outer":
      return []
  }
}

const pushIntoJoin = (f: P.Filter, j: P.Join): P.LogicalPlan => {
  const sides = filterPushableSides(j.joinType)
  if (sides.length === 0) return f
  const leftIds = idSet(output(j.left))
  const rightIds = idSet(output(j.right))
  const conjuncts = splitConjuncts(f.condition)
  const leftConds: Array<E.Expression> = []
  const rightConds: Array<E.Expression> = []
  const rest: Array<E.Expression> = []
  for (const c of conjuncts) {
    const refs = refIds(c)
    if (!isDeterministic(c)) rest.push(c)
    else if (sides.includes("left") && subsetOf(refs, leftIds)) leftConds.push(c)
    else if (sides.includes("right") && subsetOf(refs, rightIds)) rightConds.push(c)
    else rest.push(c)
  }
  const inner = j.joinType === "inner" || j.joinType === "cross"
  // For inner joins the remaining deterministic conjuncts join the join condition
  const joinPart = inner ? rest.filter(isDeterministic) : []
  const stay = inner ? rest.filter((c) => !isDeterministic(c)) : rest
  if (leftConds.length === 0 && rightConds.length === 0 && joinPart.length === 0) return f
  const l = conjoin(leftConds)
  const r = conjoin(rightConds)
  const newCond = conjoin([...joinPart, ...(j.condition === undefined ? [] : [j.condition])])
  const joined: P.Join = {
    ...j,
    left: l === undefined ? j.left : filter(l, j.left),
    right: r === undefined ? j.right : filter(r, j.right),
    condition: inner ? newCond : j.condition
  }
  const up = conjoin(stay)
  return up === undefined ? joined : { ...f, condition: up, child: joined }
}

const pushJoinCondition = (j: P.Join): P.LogicalPlan => {
  if (j.condition === undefined) return j
  const sides = conditionPushableSides(j.joinType)
  if (sides.length === 0) return j
  const leftIds = idSet(output(j.left))
  const rightIds = idSet(output(j.right))
  const leftConds: Array<E.Expression> = []
  const rightConds: Array<E.Expression> = []
  const rest: Array<E.Expression> = []
  for (const c of splitConjuncts(j.condition)) {
    const refs = refIds(c)
    if (!isDeterministic(c)) rest.push(c)
    else if (sides.includes("left") && subsetOf(refs, leftIds)) leftConds.push(c)
    else if (sides.includes("right") && subsetOf(refs, rightIds)) rightConds.push(c)
    else rest.push(c)
  }
  if (leftConds.length === 0 && rightConds.length === 0) return j
  const l = conjoin(leftConds)
  const r = conjoin(rightConds)
  return {
    ...j,
    left: l === undefined ? j.left : filter(l, j.left),
    right: r === undefined ? j.right : filter(r, j.right),
    condition: conjoin(rest)
  }
}

/**
 * Spark's `PushDownPredicates`: filters move toward the sources — through projections (aliases
 * substituted), aggregates (predicates on grouping columns only), unions (into every child),
 * joins (into the sides the join type allows), generators, sorts and `distinct`, and below a
 * watermark only when they do not read its event-time column. Never through a `TypedFilter`,
 * `MapElements`, `Deduplicate` or `Limit`.
 */
const pushDownPredicates: Rule = {
  name: "PushDownPredicates",
  apply: (plan) =>
    P.transformDown(plan, (p) => {
      if (p._tag === "Join") return pushJoinCondition(p)
      if (p._tag !== "Filter") return p
      const c = p.child
      switch (c._tag) {
        case "Filter":
          return combine(p, c)
        case "Project": {
          if (!isDeterministic(p.condition) || !c.projectList.every(isDeterministic)) return p
          const aliases = aliasMap(c.projectList)
          if (
            E.references(p.condition).some((a) => {
              const target = aliases.get(a.exprId)
              return target !== undefined && E.exists(target, (x) => x._tag === "AggregateFunction")
            })
          )
            return p
          return { ...c, child: filter(replaceAlias(p.condition, aliases), c.child, p.planId) }
        }
        case "Aggregate": {
          // Spark: only predicates on grouping columns move below an aggregation
          if (c.groupingExpressions.length === 0 || !c.aggregateExpressions.every(isDeterministic)) return p
          const aliases = new Map<number, E.Expression>()
          for (const e of c.aggregateExpressions) {
            // aggregates, and session windows (evaluated only by the aggregation), stay above it
            if (
              e._tag === "Alias" &&
              !E.exists(e.child, (x) => x._tag === "AggregateFunction" || x._tag === "SessionWindow")
            ) {
              aliases.set(e.exprId, e.child)
            }
          }
          const childIds = idSet(output(c.child))
          const down: Array<E.Expression> = []
          const up: Array<E.Expression> = []
          for (const cond of splitConjuncts(p.condition)) {
            const replaced = replaceAlias(cond, aliases)
            if (isDeterministic(cond) && refIds(cond).size > 0 && subsetOf(refIds(replaced), childIds))
              down.push(replaced)
            else up.push(cond)
          }
          if (down.length === 0) return p
          const agg: P.Aggregate = { ...c, child: filter(conjoin(down) as E.Expression, c.child) }
          const stay = conjoin(up)
          return stay === undefined ? agg : { ...p, condition: stay, child: agg }
        }
        case "Union": {
          const conjuncts = splitConjuncts(p.condition)
          const down = conjuncts.filter(isDeterministic)
          if (down.length === 0) return p
          const up = conjuncts.filter((x) => !isDeterministic(x))
          const first = output(c.children[0])
          const cond = conjoin(down) as E.Expression
          const children = c.children.map((child, i) => {
            if (i === 0) return filter(cond, child)
            const out = output(child)
            const m = new Map<number, E.Expression>()
            first.forEach((a, k) => {
              if (out[k] !== undefined) m.set(a.exprId, out[k])
            })
            return filter(replaceAlias(cond, m), child)
          })
          const union: P.Union = { ...c, children }
          const stay = conjoin(up)
          return stay === undefined ? union : { ...p, condition: stay, child: union }
        }
        case "Join":
          return pushIntoJoin(p, c)
        case "EventTimeWatermark": {
          // Spark: a predicate on the event-time column stays above the watermark
          const eventId = c.eventTime._tag === "AttributeReference" ? c.eventTime.exprId : undefined
          return pushThroughUnary(
            p,
            c.child,
            (cond) => isDeterministic(cond) && !(eventId !== undefined && refIds(cond).has(eventId)),
            (below) => ({ ...c, child: below })
          )
        }
        case "Generate": {
          if (!isDeterministic(c.generator)) return p
          const childIds = idSet(output(c.child))
          return pushThroughUnary(
            p,
            c.child,
            (cond) => isDeterministic(cond) && subsetOf(refIds(cond), childIds),
            (below) => ({ ...c, child: below })
          )
        }
        case "Sort":
        case "Distinct":
          return pushThroughUnary(p, c.child, isDeterministic, (below) => ({ ...c, child: below }))
        default:
          return p
      }
    })
}

/** Whether an expression is cheap enough to duplicate (Spark's `CollapseProject.isCheap`). */
const isCheap = (e: E.Expression): boolean => {
  if (e._tag === "AttributeReference") return true
  if (isFoldable(e)) return true
  if (e._tag === "Alias" || e._tag === "GetField") return E.children(e).every(isCheap)
  return false
}

/** Spark's `canCollapseExpressions`: producers deterministic, and used once unless cheap. */
const canCollapse = (consumers: ReadonlyArray<E.Expression>, producers: ReadonlyArray<E.Expression>): boolean => {
  const byId = new Map<number, E.Expression>()
  for (const e of producers) if (e._tag === "Alias") byId.set(e.exprId, e.child)
  const counts = new Map<number, number>()
  for (const c of consumers) for (const a of E.references(c)) counts.set(a.exprId, (counts.get(a.exprId) ?? 0) + 1)
  for (const [id, n] of counts) {
    const producer = byId.get(id)
    if (producer === undefined) continue
    if (!isDeterministic(producer)) return false
    if (n > 1 && !isCheap(producer)) return false
  }
  return true
}

/** Spark's `buildCleanedProjectList`: upper items over lower aliases, upper names kept. */
const cleanedProjectList = (
  upper: ReadonlyArray<E.Expression>,
  lower: ReadonlyArray<E.Expression>
): ReadonlyArray<E.Expression> => {
  const aliases = new Map<number, E.Alias>()
  for (const e of lower) if (e._tag === "Alias") aliases.set(e.exprId, e)
  const substitute = (e: E.Expression): E.Expression =>
    E.transformUp(e, (x) => (x._tag === "AttributeReference" ? (aliases.get(x.exprId)?.child ?? x) : x))
  return upper.map((e) => {
    if (e._tag === "AttributeReference") {
      const a = aliases.get(e.exprId)
      return a === undefined ? e : a.name === e.name ? a : { ...a, name: e.name }
    }
    if (e._tag === "Alias") {
      const child = substitute(e.child)
      return child === e.child ? e : { ...e, child }
    }
    return substitute(e)
  })
}

const isRenameOnly = (list: ReadonlyArray<E.Expression>): boolean =>
  list.every((e) => e._tag === "AttributeReference" || (e._tag === "Alias" && e.child._tag === "AttributeReference"))

/**
 * Spark's `CollapseProject`: adjacent projections merge (unless that would compute a non-cheap
 * expression twice). A projection over an aggregate merges into it only when it renames,
 * reorders or drops columns.
 */
const collapseProject: Rule = {
  name: "CollapseProject",
  apply: (plan) =>
    P.transformUp(plan, (p) => {
      if (p._tag !== "Project") return p
      const c = p.child
      if (c._tag === "Project") {
        if (!canCollapse(p.projectList, c.projectList)) return p
        return { ...c, planId: p.planId, projectList: cleanedProjectList(p.projectList, c.projectList) }
      }
      if (c._tag === "Aggregate") {
        if (!isRenameOnly(p.projectList) || !canCollapse(p.projectList, c.aggregateExpressions)) return p
        return {
          ...c,
          planId: p.planId,
          aggregateExpressions: cleanedProjectList(p.projectList, c.aggregateExpressions)
        }
      }
      return p
    })
}

/** The attributes a node reads from its children (Spark's `references`). */
const nodeReferences = (p: P.LogicalPlan): Set<number> => {
  switch (p._tag) {
    case "Distinct":
    case "TypedFilter":
    case "MapElements":
    case "TransformWithState":
    case "FlatMapGroupsWithState":
    case "SubqueryAlias":
    case "Union":
    case "Intersect":
    case "Except":
      // they need every input column: set semantics, user functions over whole rows
      return new Set(P.children(p).flatMap((c) => output(c).map((a) => a.exprId)))
    case "EventTimeWatermark":
      return refIds(p.eventTime)
    case "Deduplicate": {
      const ids = idSet(p.keys ?? [])
      // SPARK-50492: dropDuplicatesWithinWatermark also needs its input's event-time columns
      // (its state expires by them), so pruning never removes them from below it.
      if (p.withinWatermark) for (const a of output(p.child)) if (a.eventTimeDelayMs !== undefined) ids.add(a.exprId)
      return ids
    }
    default: {
      const ids = new Set<number>()
      for (const e of P.expressions(p)) for (const a of E.references(e)) ids.add(a.exprId)
      return ids
    }
  }
}

/** Spark's `prunedChild`: a projection of the columns in `required`, when some are not. */
const prunedChild = (c: P.LogicalPlan, required: Set<number>): P.LogicalPlan => {
  const out = output(c)
  if (out.every((a) => required.has(a.exprId))) return c
  return { _tag: "Project", planId: P.newPlanId(), projectList: out.filter((a) => required.has(a.exprId)), child: c }
}

const projectReferences = (p: P.Project): Set<number> => {
  const ids = new Set<number>()
  for (const e of p.projectList) for (const a of E.references(e)) ids.add(a.exprId)
  return ids
}

const union = (a: Set<number>, b: Set<number>): Set<number> => new Set([...a, ...b])

/**
 * Spark's `ColumnPruning`: only the columns that are used flow up — unused items of a lower
 * projection or aggregate are dropped, and projections are inserted below aggregates, joins,
 * generators, sorts and the other operators that pass columns through.
 */
const columnPruning: Rule = {
  name: "ColumnPruning",
  apply: (plan) => {
    const pruned = P.transformDown(plan, (p) => {
      if (p._tag === "Aggregate") {
        const child = prunedChild(p.child, nodeReferences(p))
        return child === p.child ? p : { ...p, child }
      }
      if (p._tag === "Join" && (p.joinType === "left_semi" || p.joinType === "left_anti")) {
        const right = prunedChild(p.right, nodeReferences(p))
        return right === p.right ? p : { ...p, right }
      }
      if (p._tag !== "Project") return p
      const refs = projectReferences(p)
      const c = p.child
      switch (c._tag) {
        case "Project": {
          if (c.projectList.every((e) => refs.has(toAttrId(e)))) return p
          return { ...p, child: { ...c, projectList: c.projectList.filter((e) => refs.has(toAttrId(e))) } }
        }
        case "Aggregate": {
          if (c.aggregateExpressions.every((e) => refs.has(toAttrId(e)))) return p
          return {
            ...p,
            child: { ...c, aggregateExpressions: c.aggregateExpressions.filter((e) => refs.has(toAttrId(e))) }
          }
        }
        case "Union": {
          const first = output(c.children[0])
          if (first.every((a) => refs.has(a.exprId))) return p
          const keep = first.map((a) => refs.has(a.exprId))
          const children = c.children.map(
            (child): P.LogicalPlan => ({
              _tag: "Project",
              planId: P.newPlanId(),
              projectList: output(child).filter((_, i) => keep[i]),
              child
            })
          )
          return { ...p, child: { ...c, children } }
        }
        case "Generate": {
          const produced = idSet(c.generatorOutput)
          const required = new Set([...refs].filter((id) => !produced.has(id)))
          for (const id of refIds(c.generator)) required.add(id)
          const child = prunedChild(c.child, required)
          return child === c.child ? p : { ...p, child: { ...c, child } }
        }
        case "Filter":
          // Spark's removeProjectBeforeFilter: a projection under a filter fights with
          // PushDownPredicates, so none is inserted there
          return p
        case "LocalRelation":
        case "DataSourceRelation":
        case "StreamingRelation":
        case "Distinct":
        case "TypedFilter":
        case "MapElements":
        case "TransformWithState":
        case "FlatMapGroupsWithState":
        case "SubqueryAlias":
          return p
        default: {
          const required = union(nodeReferences(c), refs)
          const kids = P.children(c)
          const inputIds = kids.flatMap((k) => output(k).map((a) => a.exprId))
          if (inputIds.every((id) => required.has(id))) return p
          return {
            ...p,
            child: P.withChildren(
              c,
              kids.map((k) => prunedChild(k, required))
            )
          }
        }
      }
    })
    // Spark's removeProjectBeforeFilter: Project(Filter(Project(attributes only, x))) drops the lower one
    return P.transformUp(pruned, (p) => {
      if (p._tag !== "Project" || p.child._tag !== "Filter") return p
      const f = p.child
      const lower = f.child
      if (lower._tag !== "Project") return p
      if (!lower.projectList.every((e) => e._tag === "AttributeReference")) return p
      const below = idSet(output(lower.child))
      if (!lower.projectList.every((e) => below.has((e as E.AttributeReference).exprId))) return p
      return { ...p, child: { ...f, child: lower.child } }
    })
  }
}

const toAttrId = (e: E.Expression): number => (e._tag === "AttributeReference" || e._tag === "Alias" ? e.exprId : -1)

/**
 * Spark's `ConstantFolding`: a deterministic expression of literals is evaluated once (with the
 * expression compiler) and replaced by its value. `current_timestamp()` is not folded.
 */
const constantFolding: Rule = {
  name: "ConstantFolding",
  apply: (plan) => {
    const fold = (e: E.Expression): E.Expression => {
      if (e._tag === "Literal") return e
      if (isFoldable(e)) {
        try {
          const value = compile(e, [], { currentTimestampMs: 0 })([])
          return { _tag: "Literal", value: value === undefined ? null : value, dataType: dataTypeOf(e) }
        } catch {
          return e
        }
      }
      const cs = E.children(e)
      return cs.length === 0 ? e : E.withChildren(e, cs.map(fold))
    }
    return P.transformUp(plan, (p) => mapExpressions(p, fold))
  }
}

const not = (child: E.Expression): E.Expression => ({ _tag: "UnaryExpression", op: "not", child })

const negateComparison = (e: E.BinaryExpression): E.Expression | undefined => {
  switch (e.op) {
    case ">":
      return { ...e, op: "<=" }
    case ">=":
      return { ...e, op: "<" }
    case "<":
      return { ...e, op: ">=" }
    case "<=":
      return { ...e, op: ">" }
    default:
      return undefined
  }
}

const simplifyBoolean = (e: E.Expression): E.Expression => {
  if (e._tag === "BinaryExpression" && e.op === "and") {
    if (isTrue(e.left)) return e.right
    if (isTrue(e.right)) return e.left
    if (isFalse(e.left) || isFalse(e.right)) return FALSE
    if (isDeterministic(e.left) && keyOf(e.left) === keyOf(e.right)) return e.left
    return e
  }
  if (e._tag === "BinaryExpression" && e.op === "or") {
    if (isFalse(e.left)) return e.right
    if (isFalse(e.right)) return e.left
    if (isTrue(e.left) || isTrue(e.right)) return TRUE
    if (isDeterministic(e.left) && keyOf(e.left) === keyOf(e.right)) return e.left
    return e
  }
  if (e._tag === "UnaryExpression" && e.op === "not") {
    const c = e.child
    if (isTrue(c)) return FALSE
    if (isFalse(c)) return TRUE
    if (c._tag === "UnaryExpression") {
      if (c.op === "not") return c.child
      if (c.op === "isNull") return { ...c, op: "isNotNull" }
      if (c.op === "isNotNull") return { ...c, op: "isNull" }
    }
    if (c._tag === "BinaryExpression") {
      const neg = negateComparison(c)
      if (neg !== undefined) return neg
      // De Morgan; the new NOTs are simplified at once
      if (c.op === "or" || c.op === "and") {
        return simplifyBoolean({
          _tag: "BinaryExpression",
          op: c.op === "or" ? "and" : "or",
          left: simplifyBoolean(not(c.left)),
          right: simplifyBoolean(not(c.right))
        })
      }
    }
  }
  return e
}

/**
 * Spark's `BooleanSimplification`: `true AND x` is `x`, `false AND x` is `false`, `false OR x` is
 * `x`, `true OR x` is `true`, `x AND x` is `x`, `NOT NOT x` is `x`, `NOT (a > b)` is `a <= b`, and
 * De Morgan's laws push `NOT` inwards.
 */
const booleanSimplification: Rule = {
  name: "BooleanSimplification",
  apply: (plan) => transformAllExpressions(plan, simplifyBoolean)
}

/** Spark's `SimplifyCasts`: a cast to the type the value already has is dropped. */
const simplifyCasts: Rule = {
  name: "SimplifyCasts",
  apply: (plan) =>
    transformAllExpressions(plan, (e) => {
      if (e._tag !== "Cast") return e
      try {
        return equalsType(dataTypeOf(e.child), e.to) ? e.child : e
      } catch {
        return e
      }
    })
}

/**
 * Spark's `PruneFilters`: a filter that is always true disappears; one that is always false or
 * null becomes an empty relation with the same output (streaming-ness kept).
 */
const pruneFilters: Rule = {
  name: "PruneFilters",
  apply: (plan) =>
    P.transformUp(plan, (p) => {
      if (p._tag !== "Filter") return p
      if (isTrue(p.condition)) return p.child
      if (isFalse(p.condition) || isNullLiteral(p.condition)) {
        return {
          _tag: "LocalRelation",
          planId: p.planId,
          output: output(p.child),
          rows: [],
          isStreaming: P.isStreaming(p.child)
        }
      }
      return p
    })
}

/**
 * Spark's `RemoveNoopOperators`: a projection that outputs exactly its child's columns (same
 * ids, same names) is removed; when only names differ and the child is a projection or an
 * aggregate, the names move into the child.
 */
const removeNoopOperators: Rule = {
  name: "RemoveNoopOperators",
  apply: (plan) =>
    P.transformUp(plan, (p) => {
      if (p._tag !== "Project") return p
      const out = output(p.child)
      const list = p.projectList
      if (list.length !== out.length) return p
      if (!list.every((e, i) => e._tag === "AttributeReference" && e.exprId === out[i].exprId)) return p
      if (list.every((e, i) => (e as E.AttributeReference).name === out[i].name)) return p.child
      const rename = (items: ReadonlyArray<E.Expression>): ReadonlyArray<E.Expression> =>
        items.map((e, i) => {
          const name = (list[i] as E.AttributeReference).name
          return (e._tag === "Alias" || e._tag === "AttributeReference") && e.name !== name ? { ...e, name } : e
        })
      const c = p.child
      if (c._tag === "Project") return { ...c, projectList: rename(c.projectList) }
      if (c._tag === "Aggregate") return { ...c, aggregateExpressions: rename(c.aggregateExpressions) }
      return p
    })
}

/**
 * The rules, in the order one iteration applies them.
 *
 * @since 0.1.0
 */
export const rules: ReadonlyArray<Rule> = [
  eliminateSubqueryAliases,
  eliminateEventTimeWatermark,
  combineFilters,
  pushDownPredicates,
  columnPruning,
  collapseProject,
  constantFolding,
  booleanSimplification,
  simplifyCasts,
  pruneFilters,
  removeNoopOperators
]

const MAX_ITERATIONS = 100

/**
 * Applies the rules until the plan stops changing (or 100 iterations, Spark's default
 * `spark.sql.optimizer.maxIterations`). The input must be resolved; the result has the same
 * output attributes.
 *
 * @example
 * ```ts
 * // Filter (a#1 > 1) over Filter (b#2 < 3) over LocalRelation
 * //   becomes Filter ((b#2 < 3) AND (a#1 > 1)) over LocalRelation
 * ```
 * @since 0.1.0
 */
export const optimize = (plan: P.LogicalPlan): P.LogicalPlan => {
  let cur = plan
  for (let i = 0; i < MAX_ITERATIONS; i++) {
    let next = cur
    for (const r of rules) next = r.apply(next)
    if (next === cur) return cur
    cur = next
  }
  return cur
}
