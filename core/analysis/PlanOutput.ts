/**
 * The output of a resolved logical plan (Spark's `LogicalPlan.output`), in one place for the
 * analyzer, the optimizer, the checker, the planner and the engine: the attributes a node
 * produces, in order, with Spark's nullability (outer joins make the padded side nullable; a
 * union's column is nullable when any child's is) and watermark markers (an event-time column
 * carries its delay; a newer watermark drops an older one on another column).
 *
 * @since 0.1.0
 */
import * as T from "../DataType.ts"
import * as E from "../Expression.ts"
import { prettyName } from "../ExpressionName.ts"
import type * as P from "../LogicalPlan.ts"
import { stableExprId } from "./StableIds.ts"
import { dataTypeOf, nullableOf } from "./TypeCoercion.ts"

const attrOfExprCache = new WeakMap<object, E.AttributeReference>()

/**
 * The watermark delay an expression's value carries: an event-time column's, and (Spark's
 * `ResolveWindowTime`) `window_time` of a watermarked window column's.
 *
 * @since 0.1.0
 */
export const eventTimeDelayOf = (e: E.Expression): number | undefined => {
  if (e._tag === "AttributeReference") return e.eventTimeDelayMs
  if (e._tag === "ScalarFunction" && e.name === "window_time" && e.args.length === 1) {
    const a = e.args[0]
    return a._tag === "AttributeReference" ? a.eventTimeDelayMs : undefined
  }
  return undefined
}

/**
 * The attribute a named expression of a resolved project or aggregate list produces: an
 * attribute is itself, an alias becomes an attribute with the alias's name and `exprId`. An alias
 * of an attribute (or of `window_time` of a window column) keeps its event-time watermark delay,
 * as Spark's `Alias.metadata` does.
 *
 * @since 0.1.0
 */
export const toAttribute = (e: E.Expression): E.AttributeReference => {
  if (e._tag === "AttributeReference") return e
  const cached = attrOfExprCache.get(e)
  if (cached !== undefined) return cached
  let a: E.AttributeReference
  if (e._tag === "Alias") {
    const delay = eventTimeDelayOf(e.child)
    a = {
      _tag: "AttributeReference",
      name: e.name,
      dataType: safeType(e.child),
      nullable: safeNullable(e.child),
      exprId: e.exprId,
      qualifier: [],
      ...(delay === undefined ? {} : { eventTimeDelayMs: delay })
    }
  } else {
    // Not expected in a resolved plan; give it a stable identity rather than failing.
    a = {
      _tag: "AttributeReference",
      name: prettyName(e),
      dataType: safeType(e),
      nullable: true,
      exprId: stableExprId(e, "attr"),
      qualifier: []
    }
  }
  attrOfExprCache.set(e, a)
  return a
}

const safeType = (e: E.Expression): T.DataType => {
  try {
    return dataTypeOf(e)
  } catch {
    return T.NullType
  }
}

const safeNullable = (e: E.Expression): boolean => {
  try {
    return nullableOf(e)
  } catch {
    return true
  }
}

/**
 * The attribute with the given nullability (itself when it already has it).
 *
 * @since 0.1.0
 */
export const withNullability = (a: E.AttributeReference, nullable: boolean): E.AttributeReference =>
  a.nullable === nullable ? a : { ...a, nullable }

const outputCache = new WeakMap<P.LogicalPlan, ReadonlyArray<E.AttributeReference>>()

/**
 * The output attributes of a resolved plan, in order (Spark's `LogicalPlan.output`).
 *
 * @example
 * ```ts
 * import * as T from "../DataType.ts"
 * import { attribute } from "../Expression.ts"
 * const a = attribute("a", T.IntegerType)
 * output({ _tag: "LocalRelation", planId: 1, output: [a], rows: [], isStreaming: false }) // [a]
 * ```
 * @since 0.1.0
 */
export const output = (plan: P.LogicalPlan): ReadonlyArray<E.AttributeReference> => {
  const cached = outputCache.get(plan)
  if (cached !== undefined) return cached
  const out = computeOutput(plan)
  outputCache.set(plan, out)
  return out
}

const computeOutput = (p: P.LogicalPlan): ReadonlyArray<E.AttributeReference> => {
  switch (p._tag) {
    case "LocalRelation":
    case "DataSourceRelation":
    case "StreamingRelation":
    case "MapElements":
    case "TransformWithState":
    case "FlatMapGroupsWithState":
      return p.output
    case "Project":
      return p.projectList.map(toAttribute)
    case "Aggregate":
      return p.aggregateExpressions.map(toAttribute)
    case "Filter":
    case "Sort":
    case "Limit":
    case "Distinct":
    case "Deduplicate":
    case "TypedFilter":
    case "WithColumns":
    case "WithColumnsRenamed":
    case "Drop":
      return output(p.child)
    case "Generate":
      return [...output(p.child), ...p.generatorOutput]
    case "Window":
      // Spark's Window.output: the child's columns, then one per window expression
      return [
        ...output(p.child),
        ...p.windowExpressions.map((e): E.AttributeReference => {
          const a = e as E.Alias
          return {
            _tag: "AttributeReference",
            name: a.name,
            dataType: dataTypeOf(a.child),
            nullable: nullableOf(a.child),
            exprId: a.exprId,
            qualifier: []
          }
        })
      ]
    case "EventTimeWatermark": {
      // Spark's EventTimeWatermark.output: the event-time column carries the delay; any older
      // watermark on another column is dropped
      const id = p.eventTime._tag === "AttributeReference" ? p.eventTime.exprId : undefined
      return output(p.child).map((a) => {
        if (a.exprId === id) return a.eventTimeDelayMs === p.delayMs ? a : { ...a, eventTimeDelayMs: p.delayMs }
        if (a.eventTimeDelayMs !== undefined) {
          const { eventTimeDelayMs: _, ...rest } = a
          return rest
        }
        return a
      })
    }
    case "SubqueryAlias":
      return output(p.child).map((a) => ({ ...a, qualifier: [p.alias] }))
    case "Join": {
      const l = output(p.left)
      const r = output(p.right)
      switch (p.joinType) {
        case "inner":
        case "cross":
          return [...l, ...r]
        case "left_outer":
          return [...l, ...r.map((a) => withNullability(a, true))]
        case "right_outer":
          return [...l.map((a) => withNullability(a, true)), ...r]
        case "full_outer":
          return [...l.map((a) => withNullability(a, true)), ...r.map((a) => withNullability(a, true))]
        case "left_semi":
        case "left_anti":
          return l
      }
    }
    case "Intersect": {
      // Spark's Intersect.output: a column is nullable only when it is on both sides
      const r = output(p.right)
      return output(p.left).map((a, i) => withNullability(a, a.nullable && r[i]?.nullable === true))
    }
    case "Except":
      // Spark's Except.output: the left side's (the right's rows are only removed)
      return output(p.left)
    case "Union": {
      const outs = p.children.map(output)
      const first = outs[0] ?? []
      return first.map((a, i) =>
        withNullability(
          a,
          outs.some((o) => o[i]?.nullable === true)
        )
      )
    }
  }
}

/**
 * The schema of a resolved plan.
 *
 * @since 0.1.0
 */
export const schemaOf = (plan: P.LogicalPlan): T.StructType =>
  T.struct(output(plan).map((a) => T.field(a.name, a.dataType, a.nullable)))
