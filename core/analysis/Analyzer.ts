/**
 * The analyzer: turns a plan as the builders made it (names, unresolved functions, `withColumn`
 * nodes) into a resolved plan — every column an `AttributeReference` with an `exprId`, every
 * function typed, implicit casts inserted — or fails with a typed `AnalysisError` worded as
 * Spark 4 words it.
 *
 * It does in one bottom-up pass what Catalyst's analyzer does in its rule batches:
 * `ResolveReferences` (names, qualifiers, struct fields, `*`, Spark Connect plan ids),
 * `ResolveFunctions`, `ResolveAliases`, `GlobalAggregates`, `ExtractGenerator`, `TimeWindowing`
 * (`WindowResolution.ts`), `ResolveUnion` and `WidenSetOperationTypes` (`UnionResolution.ts`),
 * `DeduplicateRelations` (self-joins) and natural/`USING` joins (`JoinResolution.ts`),
 * `ResolveMissingReferences` (sort by a dropped column), the type coercion rules of
 * `TypeCoercion.ts`, and the checks of `CheckAnalysis`. The output of a resolved plan is
 * `PlanOutput.ts`'s.
 *
 * Expression ids the analyzer creates (aliases, generator outputs, window columns) are derived
 * from the plan node that needs them (`StableIds.ts`), so analyzing the same plan twice gives
 * the same ids.
 *
 * @since 0.1.0
 */
import { Result } from "effect"
import type { AnalyzerConf, Catalog } from "../Catalog.ts"
import * as T from "../DataType.ts"
import { AnalysisError, suggestions } from "../Errors.ts"
import * as E from "../Expression.ts"
import { prettyName } from "../ExpressionName.ts"
import { resolveAggregate } from "../functions/Aggregates.ts"

/** Functions whose struct fields are named by their arguments' aliases (Spark's CreateStruct, ArraysZip). */
const NAMES_FIELDS_BY_ALIAS = new Set(["struct", "arrays_zip"])

/** The aggregates whose division by zero follows `spark.sql.legacy.statisticalAggregate`. */
const STATISTICAL_AGGREGATES = new Set<E.AggregateName>([
  "stddev",
  "std",
  "stddev_samp",
  "variance",
  "var_samp",
  "skewness",
  "kurtosis",
  "corr",
  "covar_samp"
])
import { lookup } from "../functions/mod.ts"
import * as P from "../LogicalPlan.ts"
import { resolveJoin } from "./JoinResolution.ts"
import { output } from "./PlanOutput.ts"
import {
  type Allow,
  collect,
  hasAggregate,
  hasGenerator,
  hasWindow,
  isAggregateFn,
  isExplode,
  NOTHING,
  type Resolver,
  type Scope,
  semanticKey
} from "./Resolver.ts"
import { stableExprId, stablePlanId } from "./StableIds.ts"
import { refuseMapColumns, resolveSetOperation, resolveUnion } from "./UnionResolution.ts"
import {
  extractWindowExpressions,
  failWindowHere,
  failWithoutOver,
  resolveWindowFrame,
  typeWindowExpression
} from "./WindowFunctionResolution.ts"
import { extractTimeWindow, typeSessionWindow } from "./WindowResolution.ts"
import {
  AnalysisFailure,
  checkCast,
  coerceBinary,
  coerceCaseWhen,
  coerceIn,
  coerceUnary,
  dataTypeOf,
  equalsType,
  fail,
  failClass,
  failMismatch,
  implicitCast,
  isOrderable,
  quoteIdentifier,
  sameName,
  toPrettySQL,
  toSQLExpr,
  toSQLId,
  toSQLType
} from "./TypeCoercion.ts"

// ---------------------------------------------------------------------------------------------
// Expression helpers
// ---------------------------------------------------------------------------------------------

/** Spark's `UnresolvedAttribute.name`: parts joined by dots, a part with a dot backquoted. */
const attributeName = (parts: ReadonlyArray<string>): string =>
  parts.map((p) => (p.includes(".") ? quoteIdentifier(p) : p)).join(".")

/**
 * Spark 4's `UNRESOLVED_COLUMN` error (error-conditions.json: "A column, variable, or function
 * parameter with name ... cannot be resolved."), with `Errors.suggestions`' did-you-mean order.
 */
const unresolvedColumnError = (name: string, candidates: ReadonlyArray<string>): AnalysisError => {
  const sugg = suggestions(name, candidates)
  const base = `A column, variable, or function parameter with name \`${name}\` cannot be resolved.`
  return sugg.length > 0
    ? new AnalysisError({
        reason: "UnresolvedColumn",
        errorClass: "UNRESOLVED_COLUMN.WITH_SUGGESTION",
        message: `[UNRESOLVED_COLUMN.WITH_SUGGESTION] ${base} Did you mean one of the following? [${sugg.map((x) => `\`${x}\``).join(", ")}].`,
        suggestions: sugg
      })
    : new AnalysisError({
        reason: "UnresolvedColumn",
        errorClass: "UNRESOLVED_COLUMN.WITHOUT_SUGGESTION",
        message: `[UNRESOLVED_COLUMN.WITHOUT_SUGGESTION] ${base}`,
        suggestions: sugg
      })
}

/** Names a node as Spark's `nodeName` does in messages. */
const nodeName = (p: P.LogicalPlan): string => {
  switch (p._tag) {
    case "Limit":
      return "GlobalLimit"
    case "DataSourceRelation":
      return "LogicalRelation"
    default:
      return p._tag
  }
}

// ---------------------------------------------------------------------------------------------
// The analyzer
// ---------------------------------------------------------------------------------------------

class Analyzer implements Resolver {
  readonly conf: AnalyzerConf

  constructor(conf: AnalyzerConf) {
    this.conf = conf
  }

  // ----- names -------------------------------------------------------------------------------

  eq(a: string, b: string): boolean {
    return sameName(a, b, this.conf.caseSensitive)
  }

  /** Spark's `AttributeSeq.resolve` candidates: `qualifier.name.fields` first, then `name.fields`. */
  private candidates(
    parts: ReadonlyArray<string>,
    input: ReadonlyArray<E.AttributeReference>
  ): { readonly attrs: ReadonlyArray<E.AttributeReference>; readonly nested: ReadonlyArray<string> } {
    const distinct = (xs: ReadonlyArray<E.AttributeReference>): ReadonlyArray<E.AttributeReference> => {
      const seen = new Set<number>()
      const out: Array<E.AttributeReference> = []
      for (const x of xs) {
        if (!seen.has(x.exprId)) {
          seen.add(x.exprId)
          out.push(x)
        }
      }
      return out
    }
    if (parts.length >= 3) {
      const [db, tbl, name] = parts
      const m = input.filter((a) => {
        const q = a.qualifier.length >= 2 ? a.qualifier.slice(-2) : undefined
        return q !== undefined && this.eq(q[0], db) && this.eq(q[1], tbl) && this.eq(a.name, name)
      })
      if (m.length > 0) return { attrs: distinct(m.map((a) => ({ ...a, name }))), nested: parts.slice(3) }
    }
    if (parts.length >= 2) {
      const [q, name] = parts
      const m = input.filter(
        (a) => a.qualifier.length > 0 && this.eq(a.qualifier[a.qualifier.length - 1], q) && this.eq(a.name, name)
      )
      if (m.length > 0) return { attrs: distinct(m.map((a) => ({ ...a, name }))), nested: parts.slice(2) }
    }
    const name = parts[0]
    const m = input.filter((a) => this.eq(a.name, name))
    return { attrs: distinct(m.map((a) => ({ ...a, name }))), nested: parts.slice(1) }
  }

  /** A struct field by name (Spark's `ExtractValue` on a struct); `field` keeps the user's spelling. */
  private extractField(child: E.Expression, field: string): E.GetField {
    const t = dataTypeOf(child)
    if (t._tag !== "struct") {
      return failClass(
        "DataTypeMismatch",
        "INVALID_EXTRACT_BASE_FIELD_TYPE",
        `Can't extract a value from ${toSQLExpr(child)}. Need a complex type [STRUCT, ARRAY, MAP] but got ${toSQLType(t)}.`
      )
    }
    const matches: Array<number> = []
    t.fields.forEach((f, i) => {
      if (this.eq(f.name, field)) matches.push(i)
    })
    if (matches.length === 0) {
      return failClass(
        "UnresolvedColumn",
        "FIELD_NOT_FOUND",
        `No such struct field ${toSQLId(field)} in ${t.fields.map((f) => toSQLId(f.name)).join(", ")}.`
      )
    }
    if (matches.length > 1) {
      return failClass(
        "AmbiguousReference",
        "AMBIGUOUS_REFERENCE_TO_FIELDS",
        `Ambiguous reference to the field ${toSQLId(field)}. It appears ${matches.length} times in the schema.`
      )
    }
    return { _tag: "GetField", child, field, ordinal: matches[0] }
  }

  /** Resolves a (possibly qualified, possibly nested) name against `input`; `undefined` when nothing matches. */
  private resolveName(
    parts: ReadonlyArray<string>,
    input: ReadonlyArray<E.AttributeReference>,
    aliasOwner: { readonly owner: object; readonly key: string } | undefined
  ): E.Expression | undefined {
    const { attrs, nested } = this.candidates(parts, input)
    if (attrs.length === 0) return undefined
    if (attrs.length > 1) {
      const refs = attrs.map((a) => toSQLId([...a.qualifier, a.name])).sort()
      return failClass(
        "AmbiguousReference",
        "AMBIGUOUS_REFERENCE",
        `Reference ${toSQLId(parts)} is ambiguous, could be: [${refs.join(", ")}].`
      )
    }
    let e: E.Expression = attrs[0]
    for (const f of nested) e = this.extractField(e, f)
    if (nested.length > 0 && aliasOwner !== undefined) {
      // Spark aliases a top-level struct field access with the last name part
      return {
        _tag: "Alias",
        child: e,
        name: nested[nested.length - 1],
        exprId: stableExprId(aliasOwner.owner, aliasOwner.key)
      }
    }
    return e
  }

  private unresolved(parts: ReadonlyArray<string>, input: ReadonlyArray<E.AttributeReference>): never {
    // Spark suggests column names for a one-part name and qualified names otherwise; the name
    // parts are backquoted one by one (`a`.`b`), which the joined form reproduces
    const cands = parts.length > 1 ? input.map((a) => [...a.qualifier, a.name].join("`.`")) : input.map((a) => a.name)
    throw new AnalysisFailure(unresolvedColumnError(parts.join("`.`"), cands))
  }

  /** Nodes with `planId` in `children`'s subtrees, nearest first (Spark Connect's plan id lookup). */
  private findPlanId(
    children: ReadonlyArray<P.LogicalPlan>,
    planId: number
  ): ReadonlyArray<{ readonly node: P.LogicalPlan; readonly depth: number }> {
    const found: Array<{ node: P.LogicalPlan; depth: number }> = []
    const walk = (p: P.LogicalPlan, depth: number): void => {
      if (p.planId === planId) {
        found.push({ node: p, depth })
        return
      }
      for (const c of P.children(p)) walk(c, depth + 1)
    }
    for (const c of children) walk(c, 0)
    if (found.length === 0) return found
    const min = Math.min(...found.map((f) => f.depth))
    return found.filter((f) => f.depth === min)
  }

  private resolveByPlanId(
    u: E.UnresolvedAttribute,
    scope: Scope,
    aliasOwner: { owner: object; key: string } | undefined
  ): E.Expression {
    const planId = u.planId as number
    const nodes = this.findPlanId(scope.children, planId)
    if (nodes.length === 0) {
      return failClass(
        "UnresolvedColumn",
        "CANNOT_RESOLVE_DATAFRAME_COLUMN",
        `Cannot resolve dataframe column ${toSQLExpr(u)}. It's probably because of illegal references like \`df1.select(df2.col("a"))\`.`
      )
    }
    const resolved: Array<E.Expression> = []
    for (const { node } of nodes) {
      const r = this.resolveName(u.nameParts, output(node), aliasOwner)
      if (r !== undefined) resolved.push(r)
    }
    if (resolved.length === 0) this.unresolved(u.nameParts, output(nodes[0].node))
    const keys = new Set(resolved.map(semanticKey))
    if (keys.size > 1) {
      return failClass(
        "AmbiguousReference",
        "AMBIGUOUS_COLUMN_REFERENCE",
        [
          `Column ${toSQLId(attributeName(u.nameParts))} is ambiguous. It's because you joined several DataFrame together, and some of these DataFrames are the same.`,
          "This column points to one of the DataFrames but Spark is unable to figure out which one.",
          "Please alias the DataFrames with different names via `DataFrame.alias` before joining them,",
          'and specify the column using qualified name, e.g. `df.alias("a").join(df.alias("b"), col("a.id") > col("b.id"))`.'
        ].join("\n")
      )
    }
    const r = resolved[0]
    // The column must still flow into this operator
    const ids = new Set(scope.input.map((a) => a.exprId))
    const missing = E.references(r).some((a) => !ids.has(a.exprId))
    if (missing) {
      return failClass(
        "UnresolvedColumn",
        "CANNOT_RESOLVE_DATAFRAME_COLUMN",
        `Cannot resolve dataframe column ${toSQLExpr(u)}. It's probably because of illegal references like \`df1.select(df2.col("a"))\`.`
      )
    }
    return this.refreshAttributes(r, scope.input)
  }

  /** Replaces attributes by the input's current version (nullability, watermark), keeping their names. */
  private refreshAttributes(e: E.Expression, input: ReadonlyArray<E.AttributeReference>): E.Expression {
    const byId = new Map(input.map((a) => [a.exprId, a] as const))
    return E.transformUp(e, (x) => {
      if (x._tag !== "AttributeReference") return x
      const cur = byId.get(x.exprId)
      if (cur === undefined) return x
      return cur.name === x.name ? cur : { ...cur, name: x.name }
    })
  }

  // ----- pass 1: references ------------------------------------------------------------------

  /**
   * Resolves column references (names, plan ids, struct fields) in `e`. At the top level of a
   * project or aggregate list (`aliasOwner` given) a struct field access gets Spark's alias.
   */
  resolveRefs(e: E.Expression, scope: Scope, aliasOwner?: { owner: object; key: string }): E.Expression {
    switch (e._tag) {
      case "UnresolvedAttribute": {
        if (e.planId !== undefined) return this.resolveByPlanId(e, scope, aliasOwner)
        const r = this.resolveName(e.nameParts, scope.input, aliasOwner)
        return r === undefined ? this.unresolved(e.nameParts, scope.input) : this.refreshAttributes(r, scope.input)
      }
      case "UnresolvedStar":
        return failClass("InvalidPlan", "INVALID_USAGE_OF_STAR_OR_REGEX", `Invalid usage of '*' in expression.`)
      case "AttributeReference": {
        const cur = scope.input.find((a) => a.exprId === e.exprId)
        if (cur === undefined) {
          return failClass(
            "InvalidPlan",
            "MISSING_ATTRIBUTES.RESOLVED_ATTRIBUTE_MISSING_FROM_INPUT",
            `Resolved attribute(s) ${e.name}#${e.exprId} missing from ${scope.input.map((a) => `${a.name}#${a.exprId}`).join(",")} in operator.`
          )
        }
        return cur.name === e.name ? cur : { ...cur, name: e.name }
      }
      case "InvalidExpression": {
        if (e.error !== undefined) throw new AnalysisFailure(e.error)
        const m = /^\[([A-Z0-9_.]+)\]/.exec(e.message)
        return fail("InvalidArgument", m === null ? undefined : m[1], e.message)
      }
      case "Literal":
      case "CurrentTimestamp":
        return e
      case "Alias": {
        const child = this.resolveRefs(e.child, scope)
        // Spark trims aliases below the top level (CleanupAliases); a top-level alias stays
        return aliasOwner === undefined ? child : child === e.child ? e : { ...e, child }
      }
      case "GetField": {
        const child = this.resolveRefs(e.child, scope)
        if (e.ordinal !== undefined && child === e.child) return e
        // a field of a function's result (`named_struct('y', c).y`): the type is known once pass 2
        // has resolved the function, which then extracts the field
        if (!E.isResolved(child)) return { ...e, child, ordinal: undefined }
        return this.extractField(child, e.field)
      }
      case "WindowExpression": {
        const next = E.withChildren(
          e,
          E.children(e).map((c) => this.resolveRefs(c, scope))
        ) as E.WindowExpression
        return resolveWindowFrame(next)
      }
      case "ScalarFunction":
      case "AggregateFunction": {
        const args = e.args.map((a) => {
          if (a._tag === "UnresolvedStar") {
            return failClass(
              "InvalidPlan",
              "INVALID_USAGE_OF_STAR_OR_REGEX",
              `Invalid usage of '*' in expression ${toSQLId(e.name)}.`
            )
          }
          // Spark's CreateStruct names its fields after aliased arguments before CleanupAliases
          // trims aliases: struct(a AS u) has a field `u`, so these aliases stay (ArraysZip too)
          if (a._tag === "Alias" && e._tag === "ScalarFunction" && NAMES_FIELDS_BY_ALIAS.has(e.name.toLowerCase())) {
            const child = this.resolveRefs(a.child, scope)
            return child === a.child ? a : { ...a, child }
          }
          return this.resolveRefs(a, scope)
        })
        return E.withChildren(e, args)
      }
      default:
        return E.withChildren(
          e,
          E.children(e).map((c) => this.resolveRefs(c, scope))
        )
    }
  }

  /** Expands `*` / `t.*` / `struct.*` in a project or aggregate list (Spark's `Star.expand`). */
  private expandStar(s: E.UnresolvedStar, scope: Scope, owner: object, key: string): ReadonlyArray<E.Expression> {
    let input = scope.input
    if (s.planId !== undefined) {
      const nodes = this.findPlanId(scope.children, s.planId)
      if (nodes.length === 0) {
        return failClass(
          "UnresolvedColumn",
          "CANNOT_RESOLVE_DATAFRAME_COLUMN",
          `Cannot resolve dataframe column "*". It's probably because of illegal references like \`df1.select(df2.col("a"))\`.`
        )
      }
      const ids = new Set(scope.input.map((a) => a.exprId))
      input = output(nodes[0].node).filter((a) => ids.has(a.exprId))
    }
    if (s.target === undefined) return input
    const target = s.target
    // `t.*`: the attributes qualified by t
    const byQualifier = input.filter((a) => {
      if (a.qualifier.length < target.length) return false
      const q = a.qualifier.slice(a.qualifier.length - target.length)
      return q.every((x, i) => this.eq(x, target[i]))
    })
    if (byQualifier.length > 0) return byQualifier
    // `struct.*`: the fields of a struct column
    const r = this.resolveName(target, input, undefined)
    if (r !== undefined) {
      const t = dataTypeOf(r)
      if (t._tag === "struct") {
        return t.fields.map((f, i) => ({
          _tag: "Alias" as const,
          child: { _tag: "GetField" as const, child: r, field: f.name, ordinal: i },
          name: f.name,
          exprId: stableExprId(owner, `${key}.${i}`)
        }))
      }
    }
    return failClass(
      "UnresolvedColumn",
      "CANNOT_RESOLVE_STAR_EXPAND",
      `Cannot resolve ${toSQLId(target)}.* given input columns ${input.map((a) => toSQLId(a.name)).join(", ")}. Please check that the specified table or struct exists and is accessible in the input columns.`
    )
  }

  /**
   * Resolves the references of a project or aggregate list: stars expanded, top-level names kept
   * (an unaliased non-attribute expression gets Spark's generated name, computed from the
   * resolved expression before type coercion as Spark's `ResolveAliases` does).
   */
  private resolveNamedList(
    list: ReadonlyArray<E.Expression>,
    scope: Scope,
    owner: object
  ): ReadonlyArray<E.Expression> {
    const out: Array<E.Expression> = []
    list.forEach((item, i) => {
      if (item._tag === "UnresolvedStar") {
        out.push(...this.expandStar(item, scope, owner, `star:${i}`))
        return
      }
      const r = this.resolveRefs(item, scope, { owner, key: `alias:${i}` })
      // a generator names its own columns (col, pos, key, value)
      if (r._tag === "Alias" || r._tag === "AttributeReference" || r._tag === "Explode") {
        out.push(r)
        return
      }
      // Spark's ResolveAliases: a cast of a named column keeps the column's name (`CAST(a AS INT)` is `a`)
      const name = r._tag === "Cast" && r.child._tag === "AttributeReference" ? r.child.name : prettyName(r)
      out.push({ _tag: "Alias", child: r, name, exprId: stableExprId(owner, `alias:${i}`) })
    })
    return out
  }

  // ----- pass 2: types -----------------------------------------------------------------------

  /** Types a reference-resolved expression bottom-up: functions, coercion, checks. */
  typeExpr(e: E.Expression, allow: Allow, insideAggregate = false): E.Expression {
    switch (e._tag) {
      case "AttributeReference":
      case "Literal":
      case "CurrentTimestamp":
        return e
      case "UnresolvedAttribute":
      case "UnresolvedStar":
      case "InvalidExpression":
        // pass 1 removed these
        return fail("InvalidPlan", undefined, `Unresolved expression ${prettyName(e)} after reference resolution`)
      case "Alias": {
        const child = this.typeExpr(e.child, allow, insideAggregate)
        return child === e.child ? e : { ...e, child }
      }
      case "SortOrder": {
        const child = this.typeExpr(e.child, allow, insideAggregate)
        return child === e.child ? e : { ...e, child }
      }
      case "UnaryExpression": {
        const child = this.typeExpr(e.child, allow, insideAggregate)
        const next = child === e.child ? e : { ...e, child }
        return coerceUnary(next, next)
      }
      case "BinaryExpression": {
        const left = this.typeExpr(e.left, allow, insideAggregate)
        const right = this.typeExpr(e.right, allow, insideAggregate)
        const next: E.BinaryExpression = left === e.left && right === e.right ? e : { ...e, left, right }
        return this.dateArithmetic(next) ?? coerceBinary(next, next)
      }
      case "In": {
        const child = this.typeExpr(e.child, allow, insideAggregate)
        const list = e.list.map((x) => this.typeExpr(x, allow, insideAggregate))
        const next = E.withChildren(e, [child, ...list]) as E.In
        return coerceIn(next, next)
      }
      case "Cast": {
        const child = this.typeExpr(e.child, allow, insideAggregate)
        const next = child === e.child ? e : { ...e, child }
        return checkCast(next, next)
      }
      case "CaseWhen": {
        const next = E.withChildren(
          e,
          E.children(e).map((c) => this.typeExpr(c, allow, insideAggregate))
        ) as E.CaseWhen
        return coerceCaseWhen(next, next)
      }
      case "GetField": {
        const child = this.typeExpr(e.child, allow, insideAggregate)
        if (e.ordinal === undefined) return this.extractField(child, e.field)
        return child === e.child ? e : { ...e, child }
      }
      case "ScalarFunction": {
        const args = e.args.map((a) => this.typeExpr(a, allow, insideAggregate))
        return this.resolveScalar(e, args)
      }
      case "AggregateFunction": {
        if (insideAggregate) {
          return failClass(
            "InvalidPlan",
            "NESTED_AGGREGATE_FUNCTION",
            "It is not allowed to use an aggregate function in the argument of another aggregate function. Please use the inner aggregate function in a sub-query."
          )
        }
        if (!allow.aggregates)
          return fail("InvalidPlan", undefined, `Aggregate function ${toSQLExpr(e)} is not allowed here`)
        const args = e.args.map((a) => this.typeExpr(a, allow, true))
        const argTypes = args.map(dataTypeOf)
        const r = resolveAggregate(e.name, argTypes, e.distinct, e.options, args)
        if (r._tag === "Invalid") return this.failInvalid(r.message)
        const cast = args.map((a, i) => {
          const to = r.castArgsTo[i]
          return to === undefined || equalsType(argTypes[i], to) ? a : implicitCast(a, to)
        })
        // Spark's statistical aggregates read spark.sql.legacy.statisticalAggregate when built.
        const options =
          this.conf.legacyStatisticalAggregate === true && STATISTICAL_AGGREGATES.has(e.name)
            ? { ...e.options, legacyStatisticalAggregate: true }
            : e.options
        return { ...e, args: cast, options, dataType: r.resultType }
      }
      case "TimeWindow":
        return fail(
          "UnsupportedOperation",
          undefined,
          `window(${toPrettySQL(e.timeColumn)}, ...) can only be used in a select, filter, sort or group by of a single-child operator.`
        )
      case "SessionWindow": {
        if (!allow.sessionWindow) {
          return fail(
            "UnsupportedOperation",
            undefined,
            "session_window is only supported as a grouping expression of an aggregation (groupBy(session_window(...)))."
          )
        }
        return typeSessionWindow(this, e)
      }
      case "WindowExpression":
        if (allow.windows !== true || insideAggregate) return failWindowHere(e)
        return typeWindowExpression(this, e)
      case "WindowFunction":
        return failWithoutOver(e)
      case "Explode": {
        const child = this.typeExpr(e.child, allow, insideAggregate)
        const t = dataTypeOf(child)
        const name = e.position ? "posexplode" : "explode"
        if (t._tag !== "array" && t._tag !== "map") {
          return failClass(
            "DataTypeMismatch",
            "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
            `Cannot resolve "${name}(${toPrettySQL(child)})" due to data type mismatch: The first parameter requires the ("ARRAY" or "MAP") type, however ${toSQLExpr(child)} has the type ${toSQLType(t)}.`
          )
        }
        return child === e.child ? e : { ...e, child }
      }
    }
  }

  /** Reports a function's `Invalid` resolution: the message carries Spark's `[CLASS]` prefix. */
  private failInvalid(message: string): never {
    const m = /^\[([A-Z0-9_.]+)\]/.exec(message)
    const cls = m === null ? undefined : m[1]
    const reason: AnalysisError["reason"] =
      cls === undefined
        ? "InvalidArgument"
        : cls.startsWith("DATATYPE_MISMATCH")
          ? "DataTypeMismatch"
          : "InvalidArgument"
    return fail(reason, cls, message)
  }

  resolveScalar(e: E.ScalarFunction, args: ReadonlyArray<E.Expression>): E.Expression {
    const def = e.udf ?? lookup(e.name)
    if (def === undefined) {
      return failClass(
        "InvalidPlan",
        "UNRESOLVED_ROUTINE",
        `Cannot resolve routine ${toSQLId(e.name)} on search path [\`system\`.\`builtin\`, \`system\`.\`session\`, \`spark_catalog\`.\`default\`].`
      )
    }
    const argTypes = args.map(dataTypeOf)
    const r = def.resolve(argTypes, args)
    if (r._tag === "Invalid") return this.failInvalid(r.message)
    const cast = args.map((a, i) => {
      const to = r.castArgsTo[i]
      return to === undefined || equalsType(argTypes[i], to) ? a : implicitCast(a, to)
    })
    return { ...e, args: cast, dataType: r.resultType }
  }

  /** Spark's `DateTimeOperations`: `date + n` is `date_add`, `date - n` is `date_sub`. */
  private dateArithmetic(e: E.BinaryExpression): E.Expression | undefined {
    if (e.op !== "+" && e.op !== "-") return undefined
    const lt = dataTypeOf(e.left)
    const rt = dataTypeOf(e.right)
    const integral = (t: T.DataType) => t._tag === "integer" || t._tag === "long"
    let call: E.ScalarFunction | undefined
    if (lt._tag === "date" && integral(rt)) {
      call = {
        _tag: "ScalarFunction",
        name: e.op === "+" ? "date_add" : "date_sub",
        args: [e.left, e.right],
        dataType: undefined
      }
    } else if (e.op === "+" && integral(lt) && rt._tag === "date") {
      call = { _tag: "ScalarFunction", name: "date_add", args: [e.right, e.left], dataType: undefined }
    }
    // Spark's BinaryArithmeticWithDatetimeResolver, for calendar intervals (issue #21): TimeAdd /
    // DatetimeSub on timestamps (a string is read as a timestamp and the result cast back),
    // DateAddInterval on dates — except that a day-time interval literal (no months, some time)
    // on a date gives a timestamp, as Spark 4's ANSI `INTERVAL n SECONDS` does
    else if (lt._tag === "calendarInterval" || rt._tag === "calendarInterval") {
      const sub = e.op === "-"
      const [dt, iv, dtType] = rt._tag === "calendarInterval" ? [e.left, e.right, lt] : [e.right, e.left, rt]
      if (sub && rt._tag !== "calendarInterval") return undefined
      const ivType = dataTypeOf(iv)
      const dayTimeLiteral =
        iv._tag === "Literal" &&
        iv.value !== null &&
        (iv.value as { months: number }).months === 0 &&
        (iv.value as { micros: number }).micros !== 0
      const timeCall = (x: E.Expression): E.ScalarFunction => ({
        _tag: "ScalarFunction",
        name: sub ? "time_sub" : "time_add",
        args: [x, iv],
        dataType: undefined
      })
      if (ivType._tag === "calendarInterval" && dtType._tag === "calendarInterval") {
        call = {
          _tag: "ScalarFunction",
          name: sub ? "interval_subtract" : "interval_add",
          args: [e.left, e.right],
          dataType: undefined
        }
      } else if (dtType._tag === "date" && !dayTimeLiteral) {
        call = {
          _tag: "ScalarFunction",
          name: sub ? "date_sub_interval" : "date_add_interval",
          args: [dt, iv],
          dataType: undefined
        }
      } else if (dtType._tag === "timestamp" || dtType._tag === "date") {
        call = timeCall(dtType._tag === "date" ? implicitCast(dt, T.TimestampType) : dt)
      } else if (dtType._tag === "string") {
        const r = this.resolveScalar(timeCall(implicitCast(dt, T.TimestampType)), [
          implicitCast(dt, T.TimestampType),
          iv
        ])
        return implicitCast(r, T.StringType)
      }
    }
    if (call === undefined || lookup(call.name) === undefined) return undefined
    return this.resolveScalar(call, call.args)
  }

  // ----- plans -------------------------------------------------------------------------------

  resolve(p: P.LogicalPlan): P.LogicalPlan {
    switch (p._tag) {
      case "LocalRelation":
      case "DataSourceRelation":
      case "StreamingRelation":
        return p
      case "Project":
        return this.resolveProject(p, this.resolve(p.child), p)
      case "Filter":
        return this.resolveFilter(p)
      case "Aggregate":
        return this.resolveAggregate(p, this.resolve(p.child), p)
      case "Join":
        return resolveJoin(this, p)
      case "Sort":
        return this.resolveSort(p)
      case "Limit": {
        const child = this.resolve(p.child)
        if (!Number.isInteger(p.n) || p.n > 2147483647 || p.n < -2147483648) {
          return failClass(
            "InvalidArgument",
            "INVALID_LIMIT_LIKE_EXPRESSION.DATA_TYPE",
            `The limit like expression "${p.n}" is invalid. The limit expression must be integer type, but got ${toSQLType(Number.isInteger(p.n) ? T.LongType : T.DoubleType)}.`
          )
        }
        if (p.n < 0) {
          return failClass(
            "InvalidArgument",
            "INVALID_LIMIT_LIKE_EXPRESSION.IS_NEGATIVE",
            `The limit like expression "${p.n}" is invalid. The limit expression must be equal to or greater than 0, but got ${p.n}.`
          )
        }
        return child === p.child ? p : { ...p, child }
      }
      case "Distinct": {
        const child = this.resolve(p.child)
        refuseMapColumns(output(child))
        return child === p.child ? p : { ...p, child }
      }
      case "TypedFilter":
      case "MapElements":
      case "SubqueryAlias": {
        const child = this.resolve(p.child)
        return child === p.child ? p : { ...p, child }
      }
      case "Deduplicate": {
        const resolved = this.resolveDeduplicate(p)
        if (resolved._tag === "Deduplicate") refuseMapColumns(resolved.keys ?? output(resolved.child))
        return resolved
      }
      case "TransformWithState":
      case "FlatMapGroupsWithState": {
        const child = this.resolve(p.child)
        const initialState = p.initialState === undefined ? undefined : this.resolve(p.initialState)
        return child === p.child && initialState === p.initialState ? p : { ...p, child, initialState }
      }
      case "Union":
        return resolveUnion(this, p)
      case "Intersect":
      case "Except":
        return resolveSetOperation(this, p)
      case "Generate":
        return this.resolveGenerate(p)
      case "Window": {
        // only the analyzer makes a Window: its expressions are resolved already
        const child = this.resolve(p.child)
        return child === p.child ? p : { ...p, child }
      }
      case "WithColumns":
        return this.resolveWithColumns(p)
      case "WithColumnsRenamed":
        return this.resolveWithColumnsRenamed(p)
      case "Drop":
        return this.resolveDrop(p)
      case "EventTimeWatermark":
        return this.resolveWatermark(p)
    }
  }

  scopeOf(children: ReadonlyArray<P.LogicalPlan>): Scope {
    return { input: children.flatMap(output), children }
  }

  /** Project, with `owner` the node that owns the ids created for it. */
  private resolveProject(p: P.Project, child: P.LogicalPlan, owner: object): P.LogicalPlan {
    const scope = this.scopeOf([child])
    const named = this.resolveNamedList(p.projectList, scope, owner)
    // Spark's GlobalAggregates: a select with aggregate functions is a global aggregation
    if (named.some(hasAggregate)) {
      const agg: P.Aggregate = {
        _tag: "Aggregate",
        planId: p.planId,
        groupingExpressions: [],
        aggregateExpressions: named,
        child: p.child
      }
      return this.resolveAggregateNamed(agg, child, owner, [], named)
    }
    // Spark's ExtractWindowExpressions: window expressions are computed by Window nodes below
    if (named.some(hasWindow)) {
      if (named.some(hasGenerator)) this.failGeneratorOutsideSelect(p)
      return extractWindowExpressions(this, p, named, child, owner)
    }
    // Generators: only at the top level of the list, one per select
    const generators: Array<number> = []
    named.forEach((e, i) => {
      const top = e._tag === "Alias" ? e.child : e
      if (top._tag === "Explode") {
        if (E.children(top).some(hasGenerator)) this.failNestedGenerator(top)
        generators.push(i)
      } else if (hasGenerator(e)) this.failNestedGenerator(e._tag === "Alias" ? e.child : e)
    })
    if (generators.length > 1) {
      return failClass(
        "InvalidPlan",
        "UNSUPPORTED_GENERATOR.MULTI_GENERATOR",
        `The generator is not supported: only one generator allowed per SELECT clause but found ${generators.length}: ${generators
          .map((i) => {
            const e = named[i]
            return toSQLExpr(e._tag === "Alias" ? e.child : e)
          })
          .join(", ")}.`
      )
    }
    const windowed = extractTimeWindow(this, named, child, owner)
    let below = windowed.child
    let items = windowed.exprs
    if (generators.length === 1) {
      const gi = generators[0]
      const item = items[gi]
      const explode = (item._tag === "Alias" ? item.child : item) as E.Explode
      const typed = this.typeExpr(explode, NOTHING) as E.Explode
      const names = item._tag === "Alias" ? [item.name] : undefined
      const outAttrs = this.generatorOutput(typed, names, owner)
      below = {
        _tag: "Generate",
        planId: stablePlanId(owner, "generate"),
        generator: typed,
        generatorOutput: outAttrs,
        child: below
      }
      items = [...items.slice(0, gi), ...outAttrs, ...items.slice(gi + 1)]
      const typedItems = items.map((e, i) => (i >= gi && i < gi + outAttrs.length ? e : this.typeNamed(e)))
      return { ...p, projectList: typedItems, child: below }
    }
    const typedItems = items.map((e) => this.typeNamed(e))
    return { ...p, projectList: typedItems, child: below }
  }

  /** Types a named list item; an alias whose child became an attribute of the same name is that attribute. */
  private typeNamed(e: E.Expression, allow: Allow = NOTHING): E.Expression {
    const typed = this.typeExpr(e, allow)
    return typed
  }

  private failNestedGenerator(e: E.Expression): never {
    return failClass(
      "InvalidPlan",
      "UNSUPPORTED_GENERATOR.NESTED_IN_EXPRESSIONS",
      `The generator is not supported: nested in expressions ${toSQLExpr(e)}.`
    )
  }

  private failGeneratorOutsideSelect(p: P.LogicalPlan): never {
    return failClass(
      "InvalidPlan",
      "UNSUPPORTED_GENERATOR.OUTSIDE_SELECT",
      `The generator is not supported: outside the SELECT clause, found: ${nodeName(p)}.`
    )
  }

  /** Spark's generator output columns: `col`; `pos, col`; `key, value`; `pos, key, value`. */
  private generatorOutput(
    g: E.Explode,
    names: ReadonlyArray<string> | undefined,
    owner: object
  ): ReadonlyArray<E.AttributeReference> {
    const t = dataTypeOf(g.child)
    const fields: Array<{ name: string; dataType: T.DataType; nullable: boolean }> = []
    if (g.position) fields.push({ name: "pos", dataType: T.IntegerType, nullable: false })
    if (t._tag === "array") fields.push({ name: "col", dataType: t.elementType, nullable: t.containsNull })
    else if (t._tag === "map") {
      fields.push({ name: "key", dataType: t.keyType, nullable: false })
      fields.push({ name: "value", dataType: t.valueType, nullable: t.valueContainsNull })
    }
    if (names !== undefined && names.length !== fields.length) {
      return failClass(
        "InvalidPlan",
        "UDTF_ALIAS_NUMBER_MISMATCH",
        `The number of aliases supplied in the AS clause does not match the number of columns output by the UDTF. Expected ${fields.length} aliases, but got ${names.join(", ")}.`
      )
    }
    return fields.map((f, i) => ({
      _tag: "AttributeReference" as const,
      name: names === undefined ? f.name : names[i],
      dataType: f.dataType,
      // Spark's Generate.nullableOutput: an outer generator can produce nulls in every column
      nullable: g.outer || f.nullable,
      exprId: stableExprId(owner, `generator:${i}`),
      qualifier: []
    }))
  }

  private resolveFilter(p: P.Filter): P.LogicalPlan {
    const child = this.resolve(p.child)
    const scope = this.scopeOf([child])
    const cond = this.resolveRefs(p.condition, scope)
    if (hasWindow(cond)) {
      return failClass(
        "InvalidPlan",
        "WINDOW_FUNCTION_NOT_ALLOWED_IN_CLAUSE",
        "It is not allowed to use window functions inside WHERE clause."
      )
    }
    if (hasAggregate(cond) || hasGenerator(cond)) {
      const invalid = [...collect(cond, isAggregateFn), ...collect(cond, isExplode)]
      return failClass(
        "InvalidPlan",
        "INVALID_WHERE_CONDITION",
        `The WHERE condition ${toSQLExpr(cond)} contains invalid expressions: ${invalid.map((x) => toPrettySQL(x)).join(", ")}.\nRewrite the query to avoid window functions, aggregate functions, and generator functions in the WHERE clause.`
      )
    }
    const windowed = extractTimeWindow(this, [cond], child, p)
    const typed = this.typeExpr(windowed.exprs[0], NOTHING)
    const t = dataTypeOf(typed)
    if (t._tag !== "boolean") {
      failMismatch(
        "FILTER_NOT_BOOLEAN",
        typed,
        `Filter expression ${toSQLExpr(typed)} of type ${toSQLType(t)} is not a boolean.`
      )
    }
    return { ...p, condition: typed, child: windowed.child }
  }

  private resolveAggregate(p: P.Aggregate, child: P.LogicalPlan, owner: object): P.LogicalPlan {
    const scope = this.scopeOf([child])
    // Spark's CleanupAliases: grouping expressions lose their aliases
    const grouping = p.groupingExpressions.map((g) => this.resolveRefs(g._tag === "Alias" ? g.child : g, scope))
    const named = this.resolveNamedList(p.aggregateExpressions, scope, owner)
    return this.resolveAggregateNamed(p, child, owner, grouping, named)
  }

  private resolveAggregateNamed(
    p: P.Aggregate,
    child: P.LogicalPlan,
    owner: object,
    grouping: ReadonlyArray<E.Expression>,
    named: ReadonlyArray<E.Expression>
  ): P.LogicalPlan {
    for (const e of [...grouping, ...named]) {
      if (hasGenerator(e)) this.failGeneratorOutsideSelect(p)
    }
    if (named.some(hasWindow)) return this.resolveWindowedAggregate(p, child, owner, grouping, named)
    for (const g of grouping) {
      if (hasAggregate(g)) {
        return failClass(
          "InvalidPlan",
          "GROUP_BY_AGGREGATE",
          `Aggregate functions are not allowed in GROUP BY, but found ${toPrettySQL(g)}.`
        )
      }
    }
    const windowed = extractTimeWindow(this, [...grouping, ...named], child, owner)
    const g2 = windowed.exprs.slice(0, grouping.length)
    const n2 = windowed.exprs.slice(grouping.length)
    const groupAllow: Allow = { aggregates: false, sessionWindow: true }
    const typedGrouping = g2.map((g) => this.typeExpr(g, groupAllow))
    for (const g of typedGrouping) {
      const t = dataTypeOf(g)
      if (!isOrderable(t) && t._tag === "map") {
        failClass(
          "DataTypeMismatch",
          "GROUP_EXPRESSION_TYPE_IS_NOT_ORDERABLE",
          `The expression ${toSQLExpr(g)} cannot be used as a grouping expression because its data type ${toSQLType(t)} is not an orderable data type.`
        )
      }
    }
    const outAllow: Allow = { aggregates: true, sessionWindow: true }
    const typedNamed = n2.map((e) => this.typeExpr(e, outAllow))
    const result: P.Aggregate = {
      _tag: "Aggregate",
      planId: p.planId,
      groupingExpressions: typedGrouping,
      aggregateExpressions: typedNamed,
      child: windowed.child
    }
    this.checkAggregation(result)
    return result
  }

  /**
   * Spark's `ExtractWindowExpressions` over an aggregation (`select(sum(x), rank().over(
   * orderBy(sum(x))))`, `groupBy(k).agg(sum(sum(x)).over(w))`): what the window expressions read
   * (their arguments, partition and order keys) is computed by the aggregation as extra columns,
   * the windows run over its output, and a select on top keeps the list's order and names.
   */
  private resolveWindowedAggregate(
    p: P.Aggregate,
    child: P.LogicalPlan,
    owner: object,
    grouping: ReadonlyArray<E.Expression>,
    named: ReadonlyArray<E.Expression>
  ): P.LogicalPlan {
    const extra: Array<E.Alias> = []
    const lift = (e: E.Expression): E.Expression => {
      if (e._tag === "Literal") return e
      if (e._tag === "SortOrder") return { ...e, child: lift(e.child) }
      const a: E.Alias = {
        _tag: "Alias",
        child: e,
        name: `_w${extra.length}`,
        exprId: stableExprId(owner, `window-input:${extra.length}`)
      }
      extra.push(a)
      return a
    }
    const rewritten = named.map((item) =>
      hasWindow(item)
        ? E.transformDown(item, (x) => {
            if (x._tag !== "WindowExpression") return x
            const fn = x.function
            const liftedFn =
              fn._tag === "AggregateFunction" || fn._tag === "WindowFunction" ? { ...fn, args: fn.args.map(lift) } : fn
            return {
              ...x,
              function: liftedFn,
              partitionSpec: x.partitionSpec.map(lift),
              orderSpec: x.orderSpec.map(lift)
            }
          })
        : item
    )
    const plain = named.filter((item) => !hasWindow(item))
    const aggregate = this.resolveAggregateNamed(
      { ...p, planId: stablePlanId(owner, "window-aggregate") },
      child,
      owner,
      grouping,
      [...plain, ...extra]
    )
    const out = output(aggregate)
    const byId = new Map(out.map((a) => [a.exprId, a] as const))
    const liftedIds = new Set(extra.map((a) => a.exprId))
    let k = 0
    const top = rewritten.map((item): E.Expression => {
      if (!hasWindow(item)) return out[k++]
      return E.transformDown(item, (x) =>
        x._tag === "Alias" && liftedIds.has(x.exprId) ? (byId.get(x.exprId) as E.AttributeReference) : x
      )
    })
    const project: P.Project = { _tag: "Project", planId: p.planId, projectList: top, child: aggregate }
    return extractWindowExpressions(this, project, top, aggregate, owner)
  }

  /** Spark's `ExprUtils.assertValidAggregation`. */
  private checkAggregation(a: P.Aggregate): void {
    const groupKeys = new Set(a.groupingExpressions.map(semanticKey))
    const check = (e: E.Expression): void => {
      if (e._tag === "AggregateFunction") return
      if (e._tag === "AttributeReference" && a.groupingExpressions.length === 0) {
        failClass(
          "InvalidPlan",
          "MISSING_GROUP_BY",
          "The query does not include a GROUP BY clause. Add GROUP BY or turn it into the window functions using OVER clauses."
        )
      }
      if (e._tag === "AttributeReference" && !groupKeys.has(semanticKey(e))) {
        failClass(
          "InvalidPlan",
          "MISSING_AGGREGATION",
          `The non-aggregating expression ${toSQLExpr(e)} is based on columns which are not participating in the GROUP BY clause.\nAdd the columns or the expression to the GROUP BY, aggregate the expression, or use "any_value(${toPrettySQL(e)})" if you do not care which of the values within a group is returned.`
        )
      }
      if (e._tag !== "Alias" && groupKeys.has(semanticKey(e))) return
      for (const c of E.children(e)) check(c)
    }
    for (const e of a.aggregateExpressions) check(e)
  }

  private resolveSort(p: P.Sort): P.LogicalPlan {
    const child = this.resolve(p.child)
    const scope = this.scopeOf([child])
    let orders: ReadonlyArray<E.Expression>
    let newChild = child
    let restore: ReadonlyArray<E.AttributeReference> | undefined
    try {
      orders = p.order.map((o) => this.resolveRefs(o, scope))
    } catch (err) {
      // Spark's ResolveMissingReferences: sort by a column the select below dropped
      if (!(err instanceof AnalysisFailure) || err.error.reason !== "UnresolvedColumn" || child._tag !== "Project")
        throw err
      const inner = this.scopeOf([child.child])
      let resolvedBelow: ReadonlyArray<E.Expression>
      try {
        resolvedBelow = p.order.map((o) => {
          try {
            return this.resolveRefs(o, scope)
          } catch {
            return this.resolveRefs(o, inner)
          }
        })
      } catch {
        throw err
      }
      const have = new Set(output(child).map((a) => a.exprId))
      const missing: Array<E.AttributeReference> = []
      for (const o of resolvedBelow) {
        for (const a of E.references(o)) {
          if (!have.has(a.exprId) && !missing.some((m) => m.exprId === a.exprId)) missing.push(a)
        }
      }
      if (missing.length === 0) throw err
      restore = output(child)
      newChild = { ...child, projectList: [...child.projectList, ...missing] }
      orders = resolvedBelow
    }
    for (const o of orders) {
      if (hasAggregate(o)) {
        return failClass(
          "InvalidPlan",
          "UNSUPPORTED_EXPR_FOR_OPERATOR",
          `A query operator contains one or more unsupported expressions.\nConsider to rewrite it to avoid window functions, aggregate functions, and generator functions in the WHERE clause.\nInvalid expressions: [${collect(o, isAggregateFn).map(toPrettySQL).join(", ")}]`
        )
      }
      if (hasGenerator(o)) this.failGeneratorOutsideSelect(p)
    }
    const windowed = extractTimeWindow(this, orders, newChild, p)
    const typed = windowed.exprs.map((o) => {
      const t = this.typeExpr(o, NOTHING)
      const so: E.SortOrder =
        t._tag === "SortOrder" ? t : { _tag: "SortOrder", child: t, direction: "asc", nullOrdering: "nullsFirst" }
      const dt = dataTypeOf(so.child)
      if (!isOrderable(dt)) {
        failMismatch(
          "INVALID_ORDERING_TYPE",
          so,
          `The ${toSQLId("sortorder")} does not support ordering on type ${toSQLType(dt)}.`
        )
      }
      return so
    })
    const sort: P.Sort = { ...p, order: typed, child: windowed.child }
    if (restore === undefined) return sort
    return { _tag: "Project", planId: stablePlanId(p, "restore"), projectList: restore, child: sort }
  }

  private resolveGenerate(p: P.Generate): P.LogicalPlan {
    const child = this.resolve(p.child)
    const scope = this.scopeOf([child])
    const g = this.resolveRefs(p.generator, scope)
    const typed = g._tag === "TimeWindow" ? g : this.typeExpr(g, NOTHING)
    return { ...p, generator: typed, child }
  }

  private resolveDeduplicate(p: P.Deduplicate): P.LogicalPlan {
    const child = this.resolve(p.child)
    const out = output(child)
    if (p.columnNames === undefined) {
      const keys =
        p.keys === undefined
          ? out
          : p.keys.map((k) => this.resolveRefs(k, this.scopeOf([child])) as E.AttributeReference)
      return { ...p, keys, child }
    }
    // Spark's dropDuplicates(colNames): every column with a matching name, names de-duplicated
    const names: Array<string> = []
    for (const n of p.columnNames) if (!names.includes(n)) names.push(n)
    const keys: Array<E.AttributeReference> = []
    for (const n of names) {
      const cols = out.filter((a) => this.eq(a.name, n))
      if (cols.length === 0) {
        return failClass(
          "UnresolvedColumn",
          "_LEGACY_ERROR_TEMP_1201",
          `Cannot resolve column name "${n}" among (${out.map((a) => a.name).join(", ")}).`
        )
      }
      for (const c of cols) if (!keys.some((k) => k.exprId === c.exprId)) keys.push(c)
    }
    return { ...p, keys, child }
  }

  private checkDuplicateNames(names: ReadonlyArray<string>): void {
    const seen = new Set<string>()
    for (const n of names) {
      const k = this.conf.caseSensitive ? n : n.toLowerCase()
      if (seen.has(k)) {
        failClass(
          "InvalidPlan",
          "COLUMN_ALREADY_EXISTS",
          `The column ${toSQLId(n)} already exists. Choose another name or rename the existing column.`
        )
      }
      seen.add(k)
    }
  }

  /** `withColumns`: a same-named column is replaced in place, a new one appended (Spark's `Dataset.withColumns`). */
  private resolveWithColumns(p: P.WithColumns): P.LogicalPlan {
    const child = this.resolve(p.child)
    this.checkDuplicateNames(p.names)
    const out = output(child)
    const aliased = p.names.map((name, i): E.Alias => {
      const col = p.columns[i]
      const inner = col._tag === "Alias" ? col.child : col
      return { _tag: "Alias", child: inner, name, exprId: stableExprId(p, `with:${i}`) }
    })
    const used = new Set<number>()
    const list: Array<E.Expression> = out.map((a) => {
      const i = p.names.findIndex((n) => this.eq(n, a.name))
      if (i < 0) return a
      used.add(i)
      return aliased[i]
    })
    aliased.forEach((al, i) => {
      if (!used.has(i)) list.push(al)
    })
    const project: P.Project = { _tag: "Project", planId: p.planId, projectList: list, child: p.child }
    return this.resolveProject(project, child, p)
  }

  /** `withColumnsRenamed`: renames applied in order; a missing column is a no-op (Spark). */
  private resolveWithColumnsRenamed(p: P.WithColumnsRenamed): P.LogicalPlan {
    const child = this.resolve(p.child)
    let list: Array<E.Expression> = [...output(child)]
    const nameOf = (e: E.Expression) => (e._tag === "Alias" || e._tag === "AttributeReference" ? e.name : prettyName(e))
    p.renames.forEach(([from, to], r) => {
      list = list.map((e, i) => {
        if (!this.eq(nameOf(e), from)) return e
        const base = e._tag === "Alias" ? e.child : e
        return { _tag: "Alias", child: base, name: to, exprId: stableExprId(p, `rename:${r}:${i}`) }
      })
    })
    this.checkDuplicateNames(list.map(nameOf))
    return { _tag: "Project", planId: p.planId, projectList: list, child }
  }

  /** `drop`: by name every matching column (a missing one is a no-op); by column reference that column. */
  private resolveDrop(p: P.Drop): P.LogicalPlan {
    const child = this.resolve(p.child)
    const out = output(child)
    const scope = this.scopeOf([child])
    const dropped = new Set<number>()
    for (const c of p.columns) {
      if (c._tag === "UnresolvedAttribute" && c.planId === undefined && c.nameParts.length === 1) {
        for (const a of out) if (this.eq(a.name, c.nameParts[0])) dropped.add(a.exprId)
        continue
      }
      let r: E.Expression | undefined
      try {
        r = this.resolveRefs(c, scope)
      } catch (err) {
        // Spark's ResolveDataFrameDropColumns: a column that does not resolve drops nothing
        if (err instanceof AnalysisFailure && err.error.reason === "UnresolvedColumn") continue
        throw err
      }
      if (r._tag === "AttributeReference") dropped.add(r.exprId)
    }
    return { _tag: "Project", planId: p.planId, projectList: out.filter((a) => !dropped.has(a.exprId)), child }
  }

  private resolveWatermark(p: P.EventTimeWatermark): P.LogicalPlan {
    const child = this.resolve(p.child)
    const scope = this.scopeOf([child])
    const r = this.resolveRefs(p.eventTime, scope)
    if (r._tag !== "AttributeReference") {
      return fail(
        "InvalidArgument",
        undefined,
        `withWatermark needs a top-level column as event time, but got ${toSQLExpr(r)}.`
      )
    }
    const t = r.dataType
    const ok =
      t._tag === "timestamp" ||
      (t._tag === "struct" && t.fields.some((f) => f.name === "end" && f.dataType._tag === "timestamp"))
    if (!ok) {
      return failClass(
        "DataTypeMismatch",
        "EVENT_TIME_IS_NOT_ON_TIMESTAMP_TYPE",
        `The event time ${toSQLId(r.name)} has the invalid type ${toSQLType(t)}, but expected "TIMESTAMP".`
      )
    }
    return { ...p, eventTime: r, child }
  }
}

/**
 * Resolves a plan: names to attributes, functions to typed calls, implicit casts, Spark's checks.
 * Pure and synchronous; fails with the `AnalysisError` Spark 4 would raise.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import * as T from "../DataType.ts"
 * import { attribute } from "../Expression.ts"
 * import { analyze } from "./Analyzer.ts"
 * import { output } from "./PlanOutput.ts"
 * import { emptyCatalog, defaultAnalyzerConf } from "../Catalog.ts"
 * const rel = { _tag: "LocalRelation" as const, planId: 1, output: [attribute("a", T.IntegerType)], rows: [], isStreaming: false }
 * const plan = { _tag: "Project" as const, planId: 2, projectList: [{ _tag: "UnresolvedAttribute" as const, nameParts: ["A"], planId: undefined }], child: rel }
 * const r = analyze(plan, emptyCatalog, defaultAnalyzerConf)
 * if (Result.isSuccess(r)) output(r.success).map((a) => a.name) // ["A"]
 * ```
 * @since 0.1.0
 */
export const analyze = (
  plan: P.LogicalPlan,
  _catalog: Catalog,
  conf: AnalyzerConf
): Result.Result<P.LogicalPlan, AnalysisError> => {
  try {
    return Result.succeed(new Analyzer(conf).resolve(plan))
  } catch (err) {
    if (err instanceof AnalysisFailure) return Result.fail(err.error)
    // A bug here must not escape as an exception: report it as an analysis failure
    const message = err instanceof Error ? err.message : String(err)
    return Result.fail(
      new AnalysisError({ reason: "InvalidPlan", errorClass: "INTERNAL_ERROR", message: `[INTERNAL_ERROR] ${message}` })
    )
  }
}
