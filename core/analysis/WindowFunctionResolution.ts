/**
 * Window functions in the analyzer: Spark's `ResolveWindowFrame` and `ResolveWindowOrder` (the
 * frame a function needs or Spark's default, refusals of an unordered ranking function or a
 * frame other than the function's own), the type checks of `WindowSpecDefinition` and
 * `SpecifiedWindowFrame` (range frames over one numeric order key), `WindowFrameCoercion`, and
 * `ExtractWindowExpressions` (a select with window expressions becomes a `Project` over one
 * `Window` node per partitioning and ordering).
 *
 * (`WindowResolution.ts` is the other kind of window: `window(ts, "10 seconds")` time windows.)
 *
 * @since 0.7.0
 */
import * as T from "../DataType.ts"
import * as E from "../Expression.ts"
import { frameSql, windowFunctionSql, windowSpecSql } from "../ExpressionName.ts"
import type * as P from "../LogicalPlan.ts"
import { expressionString, frameString } from "../PlanString.ts"
import { NOTHING, type Resolver, semanticKey } from "./Resolver.ts"
import { stableExprId, stablePlanId } from "./StableIds.ts"
import {
  dataTypeOf,
  equalsType,
  fail,
  failClass,
  failMismatch,
  implicitCast,
  isOrderable,
  nullableOf,
  toPrettySQL,
  toSQLExpr,
  toSQLType
} from "./TypeCoercion.ts"

const UNBOUNDED_PRECEDING: E.FrameBoundary = { _tag: "UnboundedPreceding" }
const UNBOUNDED_FOLLOWING: E.FrameBoundary = { _tag: "UnboundedFollowing" }
const CURRENT_ROW: E.FrameBoundary = { _tag: "CurrentRow" }

const sameBoundary = (a: E.FrameBoundary, b: E.FrameBoundary): boolean =>
  a._tag === b._tag && (a._tag !== "Offset" || a.value === (b as { value: number }).value)

const sameFrame = (a: E.WindowFrame, b: E.WindowFrame): boolean =>
  a.frameType === b.frameType && sameBoundary(a.lower, b.lower) && sameBoundary(a.upper, b.upper)

const literalInt = (e: E.Expression | undefined): number | undefined =>
  e?._tag === "Literal" && typeof e.value === "number" ? Math.trunc(e.value) : undefined

/**
 * The frame a window function runs in (Spark's `WindowFunction.frame`), `undefined` for one that
 * takes the window's (`nth_value`).
 */
const requiredFrame = (fn: E.WindowFunction): E.WindowFrame | undefined => {
  switch (fn.name) {
    case "row_number":
    case "rank":
    case "dense_rank":
    case "percent_rank":
    case "ntile":
      return { frameType: "rows", lower: UNBOUNDED_PRECEDING, upper: CURRENT_ROW }
    case "cume_dist":
      // CUME_DIST gives peers the same value: a range frame
      return { frameType: "range", lower: UNBOUNDED_PRECEDING, upper: CURRENT_ROW }
    case "lag":
    case "lead": {
      // Spark's fakeFrame: ROWS BETWEEN offset AND offset, lag's offset negated
      const off = literalInt(fn.args[1]) ?? 1
      const b: E.FrameBoundary = { _tag: "Offset", value: fn.name === "lag" ? -off : off }
      return { frameType: "rows", lower: b, upper: b }
    }
    case "nth_value":
      return undefined
  }
}

/** Spark's `SpecifiedWindowFrame.defaultWindowFrame`. */
const defaultFrame = (ordered: boolean): E.WindowFrame =>
  ordered
    ? { frameType: "range", lower: UNBOUNDED_PRECEDING, upper: CURRENT_ROW }
    : { frameType: "rows", lower: UNBOUNDED_PRECEDING, upper: UNBOUNDED_FOLLOWING }

/**
 * Spark's `ResolveWindowOrder` and `ResolveWindowFrame` on a reference-resolved window
 * expression: order items become `SortOrder`s (ascending, nulls first), the frame is the
 * function's own or Spark's default. Runs before the column is named, as Spark names it after
 * these rules (`sum(v) OVER (ORDER BY v ASC NULLS FIRST RANGE BETWEEN ...)`).
 *
 * @since 0.7.0
 */
export const resolveWindowFrame = (e: E.WindowExpression): E.WindowExpression => {
  const orderSpec = e.orderSpec.map(
    (o): E.Expression =>
      o._tag === "SortOrder" ? o : { _tag: "SortOrder", child: o, direction: "asc", nullOrdering: "nullsFirst" }
  )
  const fn = e.function
  if (fn._tag === "AggregateFunction") {
    const resolved: E.WindowExpression = { ...e, orderSpec, frame: e.frame ?? defaultFrame(orderSpec.length > 0) }
    if (fn.distinct) {
      failClass(
        "InvalidPlan",
        "DISTINCT_WINDOW_FUNCTION_UNSUPPORTED",
        `Distinct window functions are not supported: ${toSQLExpr(resolved)}.`
      )
    }
    return resolved
  }
  if (fn._tag !== "WindowFunction") {
    return failClass(
      "InvalidPlan",
      "UNSUPPORTED_EXPR_FOR_WINDOW",
      `Expression ${toSQLExpr(fn)} not supported within a window function.`
    )
  }
  if (orderSpec.length === 0) {
    // Spark 4.2's words (Spark 4.0 had _LEGACY_ERROR_TEMP_1037 here)
    return failClass(
      "InvalidPlan",
      "WINDOW_FUNCTION_FRAME_NOT_ORDERED",
      `Window function ${fn.name} requires the window to be ordered. You need to add an ORDER BY clause. For example: SELECT ${windowFunctionSql(fn, toPrettySQL)} OVER (PARTITION BY window_partition ORDER BY window_ordering) FROM table.`
    )
  }
  const required = requiredFrame(fn)
  if (required !== undefined && e.frame !== undefined && !sameFrame(e.frame, required)) {
    if (fn.name === "lag" || fn.name === "lead") {
      return fail("InvalidPlan", "_LEGACY_ERROR_TEMP_1035", `Cannot specify window frame for ${fn.name} function.`)
    }
    return fail(
      "InvalidPlan",
      "_LEGACY_ERROR_TEMP_1036",
      `Window Frame ${frameString(e.frame)} must match the required frame ${frameString(required)}.`
    )
  }
  return { ...e, orderSpec, frame: e.frame ?? required ?? defaultFrame(true) }
}

const RANGE_EXPECTED = '("NUMERIC" or "INTERVAL DAY TO SECOND" or "INTERVAL YEAR TO MONTH" or "INTERVAL")'

/** Whether `Cast.canCast(BIGINT, t)` (WindowFrameCoercion casts a range offset to the order key's type). */
const longCastsTo = (t: T.DataType): boolean =>
  T.isNumeric(t) || t._tag === "string" || t._tag === "boolean" || t._tag === "binary"

/** Spark's `SpecifiedWindowFrame` and `WindowSpecDefinition` type checks, after WindowFrameCoercion. */
const checkFrame = (e: E.WindowExpression, frame: E.WindowFrame): void => {
  const order = e.orderSpec as ReadonlyArray<E.SortOrder>
  const hasValue = frame.lower._tag === "Offset" || frame.upper._tag === "Offset"
  const frameText = frameSql(frame)
  if (frame.frameType === "range" && hasValue) {
    // the offset literals are BIGINT; WindowFrameCoercion casts them to a single order key's type
    // (never to a date or timestamp)
    let boundType: T.DataType = T.LongType
    if (order.length === 1) {
      const ot = dataTypeOf(order[0].child)
      if (ot._tag !== "date" && ot._tag !== "timestamp" && longCastsTo(ot)) boundType = ot
    }
    if (!T.isNumeric(boundType)) {
      const location = frame.lower._tag === "Offset" ? "lower" : "upper"
      failClass(
        "DataTypeMismatch",
        "DATATYPE_MISMATCH.SPECIFIED_WINDOW_FRAME_UNACCEPTED_TYPE",
        `Cannot resolve "${frameText}" due to data type mismatch: The data type of the ${location} bound ${toSQLType(boundType)} does not match the expected data type ${RANGE_EXPECTED}.`
      )
    }
  }
  if (frame.lower._tag === "UnboundedFollowing" || frame.upper._tag === "UnboundedPreceding") {
    const show = (b: E.FrameBoundary): string =>
      b._tag === "Offset"
        ? `"${b.value}"`
        : `"${b._tag === "CurrentRow" ? "CURRENT ROW" : b._tag === "UnboundedPreceding" ? "UNBOUNDED PRECEDING" : "UNBOUNDED FOLLOWING"}"`
    failClass(
      "DataTypeMismatch",
      "DATATYPE_MISMATCH.SPECIFIED_WINDOW_FRAME_INVALID_BOUND",
      `Cannot resolve "${frameText}" due to data type mismatch: Window frame upper bound ${show(frame.upper)} does not follow the lower bound ${show(frame.lower)}.`
    )
  }
  if (frame.lower._tag === "Offset" && frame.upper._tag === "Offset" && frame.lower.value > frame.upper.value) {
    failClass(
      "DataTypeMismatch",
      "DATATYPE_MISMATCH.SPECIFIED_WINDOW_FRAME_WRONG_COMPARISON",
      `Cannot resolve "${frameText}" due to data type mismatch: The lower bound of a window frame must be less than or equal to the upper bound.`
    )
  }
  if (frame.frameType !== "range") return
  const specExpr = `"${windowSpecSql(e.partitionSpec, e.orderSpec, frame, toPrettySQL)}"`
  const unbounded = frame.lower._tag === "UnboundedPreceding" && frame.upper._tag === "UnboundedFollowing"
  if (!unbounded && order.length === 0) {
    failClass(
      "DataTypeMismatch",
      "DATATYPE_MISMATCH.RANGE_FRAME_WITHOUT_ORDER",
      `Cannot resolve ${specExpr} due to data type mismatch: A range window frame cannot be used in an unordered window specification.`
    )
  }
  if (hasValue && order.length > 1) {
    failClass(
      "DataTypeMismatch",
      "DATATYPE_MISMATCH.RANGE_FRAME_MULTI_ORDER",
      `Cannot resolve ${specExpr} due to data type mismatch: A range window frame with value boundaries cannot be used in a window specification with multiple order by expressions: ${order.map(expressionString).join(",")}.`
    )
  }
  if (hasValue && order.length === 1) {
    const ot = dataTypeOf(order[0].child)
    const boundType = ot._tag !== "date" && ot._tag !== "timestamp" && longCastsTo(ot) ? ot : T.LongType
    // Spark's isValidFrameType: the same type, or an int offset over a date
    const valid = equalsType(ot, boundType) || (ot._tag === "date" && boundType._tag === "integer")
    if (!valid) {
      failClass(
        "DataTypeMismatch",
        "DATATYPE_MISMATCH.RANGE_FRAME_INVALID_TYPE",
        `Cannot resolve ${specExpr} due to data type mismatch: The data type ${toSQLType(ot)} used in the order specification does not support the data type ${toSQLType(boundType)} which is used in the range frame.`
      )
    }
  }
}

const typeCheckFailure = (e: E.Expression, msg: string): never =>
  failMismatch("TYPE_CHECK_FAILURE_WITH_HINT", e, `${msg}.`)

/** Types a window-only function (Spark's result types and its argument checks). */
const typeWindowFunction = (r: Resolver, fn: E.WindowFunction): E.WindowFunction => {
  const args = fn.args.map((a) => r.typeExpr(a, NOTHING))
  const next = { ...fn, args }
  switch (fn.name) {
    case "row_number":
    case "rank":
    case "dense_rank":
      return { ...next, dataType: T.IntegerType }
    case "percent_rank":
    case "cume_dist":
      return { ...next, dataType: T.DoubleType }
    case "ntile": {
      const b = args[0]
      if (b?._tag !== "Literal")
        return typeCheckFailure(next, `Buckets expression must be foldable, but got ${toPrettySQL(b)}`)
      if (b.dataType._tag !== "integer") {
        return typeCheckFailure(next, `Buckets expression must be integer type, but got ${toPrettySQL(b)}`)
      }
      const n = b.value as number
      if (!(n > 0)) {
        return failMismatch(
          "VALUE_OUT_OF_RANGE",
          next,
          `The buckets must be between (0, 2147483647] (current value = ${n}).`
        )
      }
      return { ...next, dataType: T.IntegerType }
    }
    case "lag":
    case "lead": {
      const t = dataTypeOf(args[0])
      const d = args[2]
      const dt = dataTypeOf(d)
      // ImplicitCastInputTypes: the default is cast to the input's type (a null literal as well)
      const def =
        dt._tag === "null" || equalsType(dt, t) ? (dt._tag === "null" ? implicitCast(d, t) : d) : implicitCast(d, t)
      return { ...next, args: [args[0], args[1], def], dataType: t }
    }
    case "nth_value": {
      const k = literalInt(args[1])
      if (k === undefined)
        return typeCheckFailure(next, `Offset expression '${toPrettySQL(args[1])}' must be a literal`)
      if (k <= 0) {
        return failMismatch(
          "VALUE_OUT_OF_RANGE",
          next,
          `The offset must be between (0, 9223372036854775807] (current value = ${k}L).`
        )
      }
      return { ...next, dataType: dataTypeOf(args[0]) }
    }
  }
}

/**
 * Types a window expression: its function (an aggregate here is allowed), its partitioning and
 * ordering, then Spark's frame checks.
 *
 * @since 0.7.0
 */
export const typeWindowExpression = (r: Resolver, e: E.WindowExpression): E.WindowExpression => {
  const fn = e.function
  const typedFn =
    fn._tag === "AggregateFunction"
      ? r.typeExpr(fn, { aggregates: true, sessionWindow: false })
      : typeWindowFunction(r, fn as E.WindowFunction)
  const partitionSpec = e.partitionSpec.map((p) => r.typeExpr(p, NOTHING))
  const orderSpec = e.orderSpec.map((o) => {
    const so = r.typeExpr(o, NOTHING) as E.SortOrder
    const dt = dataTypeOf(so.child)
    if (!isOrderable(dt)) {
      failMismatch(
        "INVALID_ORDERING_TYPE",
        so,
        `The ${"`sortorder`"} does not support ordering on type ${toSQLType(dt)}.`
      )
    }
    return so
  })
  const typed: E.WindowExpression = { ...e, function: typedFn, partitionSpec, orderSpec }
  if (e.frame !== undefined) checkFrame(typed, e.frame)
  return typed
}

/**
 * Spark's `ExtractWindowExpressions` for a select list whose items hold window expressions:
 * the items are typed, every window expression becomes an attribute of a `Window` node (one per
 * partitioning and ordering, stacked over `child`), and the select reads those attributes.
 *
 * @since 0.7.0
 */
export const extractWindowExpressions = (
  r: Resolver,
  p: P.Project,
  named: ReadonlyArray<E.Expression>,
  child: P.LogicalPlan,
  owner: object
): P.LogicalPlan => {
  const typed = named.map((e) => r.typeExpr(e, { ...NOTHING, windows: true }))
  const groups = new Map<
    string,
    { partitionSpec: ReadonlyArray<E.Expression>; orderSpec: ReadonlyArray<E.Expression>; exprs: Array<E.Alias> }
  >()
  const add = (a: E.Alias): void => {
    const we = a.child as E.WindowExpression
    const key = `${we.partitionSpec.map(semanticKey).join(",")}|${we.orderSpec.map(semanticKey).join(",")}`
    let g = groups.get(key)
    if (g === undefined) {
      g = { partitionSpec: we.partitionSpec, orderSpec: we.orderSpec, exprs: [] }
      groups.set(key, g)
    }
    g.exprs.push(a)
  }
  const toAttribute = (a: E.Alias): E.AttributeReference => ({
    _tag: "AttributeReference",
    name: a.name,
    dataType: dataTypeOf(a.child),
    nullable: nullableOf(a.child),
    exprId: a.exprId,
    qualifier: []
  })
  let n = 0
  const projectList = typed.map((item) => {
    if (item._tag === "Alias" && item.child._tag === "WindowExpression") {
      add(item)
      return toAttribute(item)
    }
    return E.transformDown(item, (x) => {
      if (x._tag !== "WindowExpression") return x
      const a: E.Alias = { _tag: "Alias", child: x, name: `_we${n}`, exprId: stableExprId(owner, `window:${n}`) }
      n++
      add(a)
      return toAttribute(a)
    })
  })
  let below = child
  let i = 0
  for (const g of groups.values()) {
    below = {
      _tag: "Window",
      planId: stablePlanId(owner, `window:${i++}`),
      windowExpressions: g.exprs,
      partitionSpec: g.partitionSpec,
      orderSpec: g.orderSpec,
      child: below
    }
  }
  return { ...p, projectList, child: below }
}

/** A window expression where the analyzer does not take one (a filter, a sort, an aggregation). */
export const failWindowHere = (e: E.WindowExpression): never =>
  failClass(
    "InvalidPlan",
    "UNSUPPORTED_EXPR_FOR_OPERATOR",
    `A query operator contains one or more unsupported expressions.\nConsider to rewrite it to avoid window functions, aggregate functions, and generator functions in the WHERE clause.\nInvalid expressions: [${toPrettySQL(e)}]`
  )

/** A window function used without `.over(window)`: Spark's `WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE`. */
export const failWithoutOver = (e: E.WindowFunction): never =>
  failClass(
    "InvalidPlan",
    "WINDOW_FUNCTION_WITHOUT_OVER_CLAUSE",
    `Window function ${toSQLExpr(e)} requires an OVER clause.`
  )
