/**
 * Expressions: the `_tag` union behind every `Column`.
 *
 * Builders produce unresolved expressions (`UnresolvedAttribute`, `UnresolvedFunction`, …); the
 * analyzer turns them into resolved ones (`AttributeReference` with an `exprId`, typed function
 * calls) and inserts casts so that the compiler (`Compile.ts`) can build a closure without
 * looking at types again. Every traversal is an exhaustive `switch` over `_tag`.
 *
 * @since 0.1.0
 */
import type { DataType } from "./DataType.ts"
import type { ScalarFunctionDef } from "./functions/Registry.ts"
import type { AnalysisError } from "./Errors.ts"

export type Expression =
  | UnresolvedAttribute
  | UnresolvedStar
  | AttributeReference
  | Literal
  | Alias
  | UnaryExpression
  | BinaryExpression
  | In
  | Cast
  | CaseWhen
  | GetField
  | ScalarFunction
  | AggregateFunction
  | TimeWindow
  | SessionWindow
  | Explode
  | CurrentTimestamp
  | SortOrder
  | WindowExpression
  | WindowFunction
  | InvalidExpression

/**
 * A column named by the user. `nameParts` is the dotted name split (`window.start` is
 * `["window", "start"]`, backquotes keep dots); `planId` ties `df.col("x")` to the DataFrame it
 * came from, the way Spark Connect resolves `df["x"]` in a self-join.
 */
export interface UnresolvedAttribute {
  readonly _tag: "UnresolvedAttribute"
  readonly nameParts: ReadonlyArray<string>
  readonly planId: number | undefined
}

/** `*` or `t.*`. */
export interface UnresolvedStar {
  readonly _tag: "UnresolvedStar"
  readonly target: ReadonlyArray<string> | undefined
  readonly planId: number | undefined
}

/** A resolved column: one output attribute of a plan node, identified by `exprId`. */
export interface AttributeReference {
  readonly _tag: "AttributeReference"
  readonly name: string
  readonly dataType: DataType
  readonly nullable: boolean
  readonly exprId: number
  /** Table aliases this attribute can be reached through (`df.alias("a")`, file names). */
  readonly qualifier: ReadonlyArray<string>
  /** Event-time delay in ms when this is the event-time column of a watermark. */
  readonly eventTimeDelayMs?: number | undefined
}

/** A constant, already in the internal representation of its type. */
export interface Literal {
  readonly _tag: "Literal"
  readonly value: unknown
  readonly dataType: DataType
  /**
   * How the literal prints in a generated column name when its value alone cannot say: an
   * interval literal of expression text keeps Spark 4's ANSI form (`INTERVAL '10' SECOND`), whose
   * fields come from the units written.
   */
  readonly sql?: string | undefined
}

export interface Alias {
  readonly _tag: "Alias"
  readonly child: Expression
  readonly name: string
  /** Assigned at construction so that an alias is a stable attribute for the plan above it. */
  readonly exprId: number
}

export type UnaryOp = "negate" | "not" | "isNull" | "isNotNull"

export interface UnaryExpression {
  readonly _tag: "UnaryExpression"
  readonly op: UnaryOp
  readonly child: Expression
}

export type ArithmeticOp = "+" | "-" | "*" | "/" | "%"
export type ComparisonOp = "=" | "!=" | "<" | "<=" | ">" | ">=" | "<=>"
export type LogicalOp = "and" | "or"
export type BinaryOp = ArithmeticOp | ComparisonOp | LogicalOp

export interface BinaryExpression {
  readonly _tag: "BinaryExpression"
  readonly op: BinaryOp
  readonly left: Expression
  readonly right: Expression
}

export interface In {
  readonly _tag: "In"
  readonly child: Expression
  readonly list: ReadonlyArray<Expression>
}

export interface Cast {
  readonly _tag: "Cast"
  readonly child: Expression
  readonly to: DataType
}

export interface CaseWhen {
  readonly _tag: "CaseWhen"
  readonly branches: ReadonlyArray<readonly [condition: Expression, value: Expression]>
  readonly otherwise: Expression | undefined
}

/** `col.getField("f")` / `window.start`; `ordinal` is filled in by the analyzer. */
export interface GetField {
  readonly _tag: "GetField"
  readonly child: Expression
  readonly field: string
  readonly ordinal: number | undefined
}

/**
 * A call of a scalar function from the function registry (`functions/Registry.ts`) by its Spark
 * name (`upper`, `concat`, `date_add`, …). `dataType` is set by the analyzer.
 */
export interface ScalarFunction {
  readonly _tag: "ScalarFunction"
  readonly name: string
  readonly args: ReadonlyArray<Expression>
  readonly dataType: DataType | undefined
  /**
   * A user-defined function (`F.udf`): its definition travels with the call instead of being
   * looked up by `name` (which is only its display name, `UDF` unless `withName` gave one).
   */
  readonly udf?: UserDefinedFunctionDef
}

/** The definition of a JavaScript UDF; `id` tells two UDFs of the same name apart. */
export interface UserDefinedFunctionDef extends ScalarFunctionDef {
  readonly id: number
}

export type AggregateName =
  | "count"
  | "sum"
  | "avg"
  | "min"
  | "max"
  | "first"
  | "last"
  | "collect_list"
  | "collect_set"
  | "approx_count_distinct"
  // statistics (Spark's CentralMomentAgg, Covariance, Corr): `stddev`, `std` and `variance` are
  // Spark's aliases, kept as names because Spark prints the name that was called
  | "stddev"
  | "std"
  | "stddev_samp"
  | "stddev_pop"
  | "variance"
  | "var_samp"
  | "var_pop"
  | "skewness"
  | "kurtosis"
  | "corr"
  | "covar_pop"
  | "covar_samp"
  | "max_by"
  | "min_by"
  // percentiles: `median(x)` is Spark's `percentile(x, 0.5)`; `approx_percentile` is an alias
  | "median"
  | "percentile"
  | "percentile_approx"
  | "approx_percentile"

/**
 * An aggregate call. `count(*)` is `count` over the literal 1, as Spark writes it.
 * `dataType` is set by the analyzer.
 */
export interface AggregateFunction {
  readonly _tag: "AggregateFunction"
  readonly name: AggregateName
  readonly args: ReadonlyArray<Expression>
  readonly distinct: boolean
  /**
   * `first`/`last` take `ignoreNulls`; `approx_count_distinct` takes `rsd`. The analyzer sets
   * `legacyStatisticalAggregate` on the statistical aggregates when Spark's
   * `spark.sql.legacy.statisticalAggregate` is on (a division by zero then gives NaN, not null).
   */
  readonly options: {
    readonly ignoreNulls?: boolean
    readonly rsd?: number
    readonly legacyStatisticalAggregate?: boolean
  }
  readonly dataType: DataType | undefined
}

/** `window(timeColumn, windowDuration, slideDuration, startTime)`, all durations in ms. */
export interface TimeWindow {
  readonly _tag: "TimeWindow"
  readonly timeColumn: Expression
  readonly windowMs: number
  readonly slideMs: number
  readonly startMs: number
}

/** `session_window(timeColumn, gap)`; `gap` is a duration literal (ms) or a per-row column of duration strings. */
export interface SessionWindow {
  readonly _tag: "SessionWindow"
  readonly timeColumn: Expression
  readonly gap: Expression
}

/** `explode` / `explode_outer` / `posexplode`: a generator, moved into a `Generate` node by the analyzer. */
export interface Explode {
  readonly _tag: "Explode"
  readonly child: Expression
  readonly outer: boolean
  readonly position: boolean
}

/** `current_timestamp()`: the batch timestamp in a streaming query, the query's start in a batch one. */
export interface CurrentTimestamp {
  readonly _tag: "CurrentTimestamp"
}

export interface SortOrder {
  readonly _tag: "SortOrder"
  readonly child: Expression
  readonly direction: "asc" | "desc"
  /** Spark's default: nulls first for ascending, nulls last for descending. */
  readonly nullOrdering: "nullsFirst" | "nullsLast"
}

/**
 * A window frame boundary (Spark's `SpecialFrameBoundary` or a literal offset). An `Offset` is
 * relative to the current row: negative values precede it (`rowsBetween(-1, 1)`), as Spark keeps
 * the literal `-1` (its SQL is `-1 FOLLOWING`).
 */
export type FrameBoundary =
  | { readonly _tag: "UnboundedPreceding" }
  | { readonly _tag: "UnboundedFollowing" }
  | { readonly _tag: "CurrentRow" }
  /**
   * `value` rows (or order-key units) after the current row; negative ones precede it.
   * `preceding`: written `n PRECEDING` in expression text (Spark's `UnaryMinus(n)` bound, named
   * `n PRECEDING`); the DataFrame API's `rowsBetween(-1, …)` is a negative literal, named
   * `-1 FOLLOWING` as Spark names it.
   */
  | { readonly _tag: "Offset"; readonly value: number; readonly preceding?: boolean }

/** Spark's `SpecifiedWindowFrame`: `ROWS` or `RANGE` `BETWEEN lower AND upper`. */
export interface WindowFrame {
  readonly frameType: "rows" | "range"
  readonly lower: FrameBoundary
  readonly upper: FrameBoundary
}

/**
 * `fn.over(window)` (Spark's `WindowExpression` with its `WindowSpecDefinition` inline):
 * `function` is an `AggregateFunction` or a `WindowFunction`; `frame` is `undefined` until the
 * analyzer fills in Spark's default (`ResolveWindowFrame`).
 */
export interface WindowExpression {
  readonly _tag: "WindowExpression"
  readonly function: Expression
  readonly partitionSpec: ReadonlyArray<Expression>
  /** `SortOrder`s once resolved. */
  readonly orderSpec: ReadonlyArray<Expression>
  readonly frame: WindowFrame | undefined
}

/** The window-only functions (Spark's `WindowFunction`s). */
export type WindowFunctionName =
  | "row_number"
  | "rank"
  | "dense_rank"
  | "percent_rank"
  | "cume_dist"
  | "ntile"
  | "lag"
  | "lead"
  | "nth_value"

/**
 * A window-only function. `args`: none for the ranking functions, `[buckets]` for `ntile`,
 * `[input, offset, default]` for `lag`/`lead`, `[input, offset]` for `nth_value` (offsets and
 * buckets are literals). `dataType` is set by the analyzer.
 */
export interface WindowFunction {
  readonly _tag: "WindowFunction"
  readonly name: WindowFunctionName
  readonly args: ReadonlyArray<Expression>
  readonly ignoreNulls: boolean
  readonly dataType: DataType | undefined
}

/**
 * A column the builder could not construct (an unknown type name in `cast`, `otherwise` without
 * `when`). Builders never throw; the analyzer reports this as an `AnalysisError` with `message`.
 */
export interface InvalidExpression {
  readonly _tag: "InvalidExpression"
  readonly message: string
  /** The typed error to report instead of a generic one (a `ParseException` from `F.expr`). */
  readonly error?: AnalysisError | undefined
}

let nextExprId = 1

/** A fresh expression id, unique in this process. */
export const newExprId = (): number => nextExprId++

export const literal = (value: unknown, dataType: DataType): Literal => ({ _tag: "Literal", value, dataType })

export const attribute = (
  name: string,
  dataType: DataType,
  nullable = true,
  qualifier: ReadonlyArray<string> = []
): AttributeReference => ({
  _tag: "AttributeReference",
  name,
  dataType,
  nullable,
  exprId: newExprId(),
  qualifier
})

/** The direct children of an expression, in a fixed order. */
export const children = (e: Expression): ReadonlyArray<Expression> => {
  switch (e._tag) {
    case "UnresolvedAttribute":
    case "UnresolvedStar":
    case "AttributeReference":
    case "Literal":
    case "CurrentTimestamp":
    case "InvalidExpression":
      return []
    case "Alias":
    case "UnaryExpression":
    case "Cast":
    case "GetField":
    case "Explode":
    case "SortOrder":
      return [e.child]
    case "BinaryExpression":
      return [e.left, e.right]
    case "In":
      return [e.child, ...e.list]
    case "CaseWhen":
      return e.otherwise === undefined
        ? e.branches.flatMap(([c, v]) => [c, v])
        : [...e.branches.flatMap(([c, v]) => [c, v]), e.otherwise]
    case "ScalarFunction":
    case "AggregateFunction":
    case "WindowFunction":
      return e.args
    case "WindowExpression":
      return [e.function, ...e.partitionSpec, ...e.orderSpec]
    case "TimeWindow":
      return [e.timeColumn]
    case "SessionWindow":
      return [e.timeColumn, e.gap]
  }
}

/**
 * Rebuilds `e` with new children (same order as `children`). Returns `e` itself when every
 * child is unchanged, so that rules can detect a fixed point by identity.
 */
export const withChildren = (e: Expression, next: ReadonlyArray<Expression>): Expression => {
  const old = children(e)
  if (old.length === next.length && old.every((c, i) => c === next[i])) return e
  switch (e._tag) {
    case "UnresolvedAttribute":
    case "UnresolvedStar":
    case "AttributeReference":
    case "Literal":
    case "CurrentTimestamp":
    case "InvalidExpression":
      return e
    case "Alias":
    case "UnaryExpression":
    case "Cast":
    case "GetField":
    case "Explode":
    case "SortOrder":
      return { ...e, child: next[0] }
    case "BinaryExpression":
      return { ...e, left: next[0], right: next[1] }
    case "In":
      return { ...e, child: next[0], list: next.slice(1) }
    case "CaseWhen": {
      const branches: Array<readonly [Expression, Expression]> = []
      for (let i = 0; i < e.branches.length; i++) branches.push([next[2 * i], next[2 * i + 1]])
      return { ...e, branches, otherwise: e.otherwise === undefined ? undefined : next[next.length - 1] }
    }
    case "ScalarFunction":
    case "AggregateFunction":
    case "WindowFunction":
      return { ...e, args: next }
    case "WindowExpression": {
      const np = e.partitionSpec.length
      return { ...e, function: next[0], partitionSpec: next.slice(1, 1 + np), orderSpec: next.slice(1 + np) }
    }
    case "TimeWindow":
      return { ...e, timeColumn: next[0] }
    case "SessionWindow":
      return { ...e, timeColumn: next[0], gap: next[1] }
  }
}

/** Bottom-up rewrite: children first, then `f` on the rebuilt node. Identity-preserving. */
export const transformUp = (e: Expression, f: (e: Expression) => Expression): Expression => {
  const cs = children(e)
  const next =
    cs.length === 0
      ? e
      : withChildren(
          e,
          cs.map((c) => transformUp(c, f))
        )
  return f(next)
}

/** Top-down rewrite: `f` first, then the children of what it returned. Identity-preserving. */
export const transformDown = (e: Expression, f: (e: Expression) => Expression): Expression => {
  const self = f(e)
  const cs = children(self)
  return cs.length === 0
    ? self
    : withChildren(
        self,
        cs.map((c) => transformDown(c, f))
      )
}

/** True when `p` holds for `e` or any expression below it. */
export const exists = (e: Expression, p: (e: Expression) => boolean): boolean =>
  p(e) || children(e).some((c) => exists(c, p))

/** Every `AttributeReference` in `e`. */
export const references = (e: Expression): ReadonlyArray<AttributeReference> => {
  const out: Array<AttributeReference> = []
  const walk = (x: Expression): void => {
    if (x._tag === "AttributeReference") out.push(x)
    else for (const c of children(x)) walk(c)
  }
  walk(e)
  return out
}

export const isAggregate = (e: Expression): boolean => exists(e, (x) => x._tag === "AggregateFunction")

/** True when `e` holds a window expression (`fn.over(w)`) anywhere. */
export const hasWindowExpression = (e: Expression): boolean => exists(e, (x) => x._tag === "WindowExpression")

export const isResolved = (e: Expression): boolean =>
  !exists(
    e,
    (x) =>
      x._tag === "UnresolvedAttribute" ||
      x._tag === "UnresolvedStar" ||
      x._tag === "InvalidExpression" ||
      (x._tag === "ScalarFunction" && x.dataType === undefined) ||
      (x._tag === "AggregateFunction" && x.dataType === undefined) ||
      (x._tag === "WindowFunction" && x.dataType === undefined) ||
      (x._tag === "WindowExpression" && x.frame === undefined) ||
      (x._tag === "GetField" && x.ordinal === undefined)
  )
