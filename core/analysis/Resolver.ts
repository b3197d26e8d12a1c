/**
 * What the analyzer's resolution files (`WindowResolution.ts`, `JoinResolution.ts`,
 * `UnionResolution.ts`) share with the analyzer: the `Resolver` they call back into (to resolve
 * children and expressions), the scope names resolve against, and expression helpers
 * (collecting sub-expressions, Spark's `semanticEquals` as a key).
 *
 * @since 0.1.0
 */
import type { AnalyzerConf } from "../Catalog.ts"
import * as T from "../DataType.ts"
import * as E from "../Expression.ts"
import type * as P from "../LogicalPlan.ts"

/** The analyzer as its resolution files see it. */
export interface Resolver {
  readonly conf: AnalyzerConf
  /** Resolves a plan (the children of the node being resolved). */
  readonly resolve: (p: P.LogicalPlan) => P.LogicalPlan
  /** Resolves the names in `e` against `scope`. */
  readonly resolveRefs: (e: E.Expression, scope: Scope, aliasOwner?: { owner: object; key: string }) => E.Expression
  /** Types a resolved expression (functions, implicit casts) where `allow` says what it may contain. */
  readonly typeExpr: (e: E.Expression, allow: Allow, insideAggregate?: boolean) => E.Expression
  /** Resolves a call to a registered function over typed arguments. */
  readonly resolveScalar: (e: E.ScalarFunction, args: ReadonlyArray<E.Expression>) => E.Expression
  /** The scope of a node with these (resolved) children. */
  readonly scopeOf: (children: ReadonlyArray<P.LogicalPlan>) => Scope
  /** Whether two names are the same name (by `spark.sql.caseSensitive`). */
  readonly eq: (a: string, b: string) => boolean
}

export interface Scope {
  /** What names resolve against (the children's output). */
  readonly input: ReadonlyArray<E.AttributeReference>
  /** The resolved children, searched for Spark Connect plan ids. */
  readonly children: ReadonlyArray<P.LogicalPlan>
}

/** What a typed expression may contain where it stands. */
export interface Allow {
  readonly aggregates: boolean
  readonly sessionWindow: boolean
  /** Window expressions (`fn.over(w)`): only in a select list (Spark's ExtractWindowExpressions). */
  readonly windows?: boolean
}

export const NOTHING: Allow = { aggregates: false, sessionWindow: false }

const jsonValue = (v: unknown): string => {
  if (v === null || v === undefined) return "null"
  if (v instanceof Uint8Array) return `b[${Array.from(v).join(",")}]`
  if (v instanceof Map) return `m[${[...v].map(([k, x]) => `${jsonValue(k)}:${jsonValue(x)}`).join(",")}]`
  if (Array.isArray(v)) return `[${v.map(jsonValue).join(",")}]`
  if (typeof v === "number") return Object.is(v, -0) ? "-0" : String(v)
  return JSON.stringify(v) ?? String(v)
}

/**
 * A key equal for semantically equal resolved expressions (Spark's `semanticEquals`, without the
 * reordering of commutative operators): attributes by `exprId`, aliases by their child.
 */
export const semanticKey = (e: E.Expression): string => {
  switch (e._tag) {
    case "AttributeReference":
      return `#${e.exprId}`
    case "Alias":
      return semanticKey(e.child)
    case "Literal":
      return `lit(${T.simpleString(e.dataType)}:${jsonValue(e.value)})`
    case "Cast":
      return `cast(${semanticKey(e.child)} as ${T.simpleString(e.to)})`
    case "UnresolvedAttribute":
      return `'${e.nameParts.join(".")}@${e.planId ?? ""}`
    case "UnresolvedStar":
      return `*${(e.target ?? []).join(".")}`
    case "UnaryExpression":
      return `${e.op}(${semanticKey(e.child)})`
    case "BinaryExpression":
      return `(${semanticKey(e.left)} ${e.op} ${semanticKey(e.right)})`
    case "In":
      return `in(${semanticKey(e.child)};${e.list.map(semanticKey).join(",")})`
    case "CaseWhen":
      return `case(${e.branches.map(([c, v]) => `${semanticKey(c)}=>${semanticKey(v)}`).join(";")};${e.otherwise === undefined ? "" : semanticKey(e.otherwise)})`
    case "GetField":
      return `${semanticKey(e.child)}.${e.ordinal ?? e.field}`
    case "ScalarFunction":
      return `${e.name.toLowerCase()}(${e.args.map(semanticKey).join(",")})`
    case "AggregateFunction":
      return `agg:${e.name}(${e.distinct ? "distinct " : ""}${e.args.map(semanticKey).join(",")};${e.options.ignoreNulls ?? ""};${e.options.rsd ?? ""})`
    case "TimeWindow":
      return `window(${semanticKey(e.timeColumn)},${e.windowMs},${e.slideMs},${e.startMs})`
    case "SessionWindow":
      return `session_window(${semanticKey(e.timeColumn)},${semanticKey(e.gap)})`
    case "Explode":
      return `explode(${semanticKey(e.child)},${e.outer},${e.position})`
    case "CurrentTimestamp":
      return "current_timestamp()"
    case "SortOrder":
      return `${semanticKey(e.child)} ${e.direction} ${e.nullOrdering}`
    case "WindowFunction":
      return `win:${e.name}(${e.args.map(semanticKey).join(",")};${e.ignoreNulls})`
    case "WindowExpression":
      return `over(${semanticKey(e.function)};${e.partitionSpec.map(semanticKey).join(",")};${e.orderSpec.map(semanticKey).join(",")};${frameKey(e.frame)})`
    case "InvalidExpression":
      return `invalid(${e.message})`
  }
}

const boundaryKey = (b: E.FrameBoundary): string => (b._tag === "Offset" ? String(b.value) : b._tag)

const frameKey = (f: E.WindowFrame | undefined): string =>
  f === undefined ? "" : `${f.frameType}:${boundaryKey(f.lower)}:${boundaryKey(f.upper)}`

export const collect = <A extends E.Expression>(e: E.Expression, p: (x: E.Expression) => x is A): Array<A> => {
  const out: Array<A> = []
  const walk = (x: E.Expression): void => {
    if (p(x)) out.push(x)
    for (const c of E.children(x)) walk(c)
  }
  walk(e)
  return out
}

export const isTimeWindow = (e: E.Expression): e is E.TimeWindow => e._tag === "TimeWindow"
export const isSessionWindow = (e: E.Expression): e is E.SessionWindow => e._tag === "SessionWindow"
export const isAggregateFn = (e: E.Expression): e is E.AggregateFunction => e._tag === "AggregateFunction"
export const isExplode = (e: E.Expression): e is E.Explode => e._tag === "Explode"

/**
 * Spark's `containsAggregates`: an aggregate that is not the function of a window expression
 * (`sum(x).over(w)` is evaluated by the Window operator, `rank().over(orderBy(sum(x)))` still
 * aggregates).
 */
export const hasAggregate = (e: E.Expression): boolean => {
  if (e._tag === "AggregateFunction") return true
  if (e._tag === "WindowExpression") {
    const fnArgs = e.function._tag === "AggregateFunction" ? e.function.args : [e.function]
    return [...fnArgs, ...e.partitionSpec, ...e.orderSpec].some(hasAggregate)
  }
  return E.children(e).some(hasAggregate)
}
export const isWindowExpression = (e: E.Expression): e is E.WindowExpression => e._tag === "WindowExpression"
export const hasWindow = (e: E.Expression): boolean => E.exists(e, isWindowExpression)
export const hasGenerator = (e: E.Expression): boolean => E.exists(e, (x) => x._tag === "Explode")
