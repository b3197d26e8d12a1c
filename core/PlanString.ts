/**
 * Logical plans as Spark's `explain(true)` prints them (Catalyst's `TreeNode.treeString`): one
 * line per operator, children below with `:- ` (not the last child) and `+- ` (the last one),
 * unresolved operators and columns marked with `'`, resolved columns as `name#exprId` (`L` after a
 * `bigint`, `-T<delay>ms` after a watermarked event-time column), expressions in their `toString`
 * form (`(a#1 + 1)`, `cast(a#1 as bigint)`, `sum(x#2L) AS sum(x)#5L`).
 *
 * The explain headings (`== Parsed Logical Plan ==`, the analyzed plan's schema line) belong to
 * the caller; this module renders the trees.
 *
 * @since 0.1.0
 */
import * as T from "./DataType.ts"
import * as E from "./Expression.ts"
import { formatDate, formatDouble, formatTimestamp } from "./ExpressionName.ts"
import * as P from "./LogicalPlan.ts"

/** Which plan of `explain(true)` is printed. */
export type Mode = "parsed" | "analyzed" | "optimized"

const attributeName = (parts: ReadonlyArray<string>): string =>
  parts.map((p) => (p.includes(".") ? `\`${p}\`` : p)).join(".")

/** Spark's `CalendarInterval.toString` of a duration in milliseconds (`10 seconds`, `1 minutes 30 seconds`). */
export const intervalString = (ms: number): string => {
  let micros = Math.round(ms * 1000)
  if (micros === 0) return "0 seconds"
  const parts: Array<string> = []
  const negative = micros < 0
  const sign = negative ? -1 : 1
  micros = Math.abs(micros)
  const hours = Math.floor(micros / 3_600_000_000)
  micros -= hours * 3_600_000_000
  const minutes = Math.floor(micros / 60_000_000)
  micros -= minutes * 60_000_000
  if (hours !== 0) parts.push(`${sign * hours} hours`)
  if (minutes !== 0) parts.push(`${sign * minutes} minutes`)
  if (micros !== 0) {
    const secs = (sign * micros) / 1_000_000
    parts.push(`${Number.isInteger(secs) ? String(secs) : secs.toFixed(6).replace(/0+$/, "")} seconds`)
  }
  return parts.join(" ")
}

const hex = (b: Uint8Array): string =>
  Array.from(b)
    .map((x) => x.toString(16).padStart(2, "0").toUpperCase())
    .join("")

/** Spark's `Literal.toString` of an internal value. */
const literalString = (v: unknown, t: T.DataType): string => {
  if (v === null || v === undefined) return "null"
  switch (t._tag) {
    case "double":
      return formatDouble(v as number)
    case "timestamp":
      return formatTimestamp(v as number)
    case "date":
      return formatDate(v as number)
    case "binary":
      return `0x${hex(v as Uint8Array)}`
    case "array":
      return `[${(v as ReadonlyArray<unknown>).map((x) => literalString(x, t.elementType)).join(",")}]`
    case "map":
      return `map(${[...(v as Map<unknown, unknown>)].map(([k, x]) => `${literalString(k, t.keyType)} -> ${literalString(x, t.valueType)}`).join(", ")})`
    case "struct":
      return `[${(v as ReadonlyArray<unknown>).map((x, i) => literalString(x, t.fields[i]?.dataType ?? T.StringType)).join(",")}]`
    case "calendarInterval":
      return typeof v === "number" ? intervalString(v) : String(v)
    default:
      return String(v)
  }
}

const safeType = (e: E.Expression): T.DataType | undefined => {
  switch (e._tag) {
    case "AttributeReference":
    case "Literal":
      return e.dataType
    case "Alias":
      return E.isResolved(e.child) ? safeType(e.child) : undefined
    case "Cast":
      return e.to
    case "ScalarFunction":
    case "AggregateFunction":
    case "WindowFunction":
      return e.dataType
    case "WindowExpression":
      return safeType(e.function)
    case "BinaryExpression": {
      if (e.op === "/") return T.DoubleType
      if (e.op === "+" || e.op === "-" || e.op === "*" || e.op === "%") return safeType(e.left)
      return T.BooleanType
    }
    case "UnaryExpression":
      return e.op === "negate" ? safeType(e.child) : T.BooleanType
    case "CaseWhen": {
      for (const [, v] of e.branches) {
        const t = safeType(v)
        if (t !== undefined && t._tag !== "null") return t
      }
      return e.otherwise === undefined ? undefined : safeType(e.otherwise)
    }
    case "GetField": {
      const t = safeType(e.child)
      return t?._tag === "struct" && e.ordinal !== undefined ? t.fields[e.ordinal]?.dataType : undefined
    }
    case "CurrentTimestamp":
      return T.TimestampType
    default:
      return undefined
  }
}

const typeSuffix = (e: E.Expression): string => (safeType(e)?._tag === "long" ? "L" : "")
const delaySuffix = (delay: number | undefined): string => (delay === undefined ? "" : `-T${delay}ms`)

const binarySymbol = (op: E.BinaryOp): string => (op === "and" ? "AND" : op === "or" ? "OR" : op)

const aggregateString = (e: E.AggregateFunction): string => {
  const args = e.args.map(expressionString)
  const resolved = e.dataType !== undefined
  const distinct = e.distinct ? "distinct " : ""
  if (!resolved) return `'${e.name}(${distinct}${args.join(", ")})`
  switch (e.name) {
    case "first":
    case "last":
      return `${e.name}(${distinct}${[...args, String(e.options.ignoreNulls ?? false)].join(", ")})`
    case "collect_list":
    case "collect_set":
      return `${e.name}(${distinct}${[...args, "0", "0"].join(", ")})`
    case "approx_count_distinct":
      return `${e.name}(${distinct}${[...args, formatDouble(e.options.rsd ?? 0.05), "0", "0"].join(", ")})`
    default:
      return `${e.name}(${distinct}${args.join(", ")})`
  }
}

/**
 * Spark's `Expression.toString` for an expression inside a plan line.
 *
 * @example
 * ```ts
 * import * as T from "./DataType.ts"
 * const a = { _tag: "AttributeReference", name: "a", dataType: T.LongType, nullable: true, exprId: 3, qualifier: [] } as const
 * expressionString({ _tag: "BinaryExpression", op: "+", left: a, right: { _tag: "Literal", value: 1, dataType: T.LongType } }) // "(a#3L + 1)"
 * ```
 * @since 0.1.0
 */
export const expressionString = (e: E.Expression): string => {
  switch (e._tag) {
    case "UnresolvedAttribute":
      return `'${attributeName(e.nameParts)}`
    case "UnresolvedStar":
      return e.target === undefined ? "*" : `${e.target.join(".")}.*`
    case "AttributeReference":
      return `${e.name}#${e.exprId}${e.dataType._tag === "long" ? "L" : ""}${delaySuffix(e.eventTimeDelayMs)}`
    case "Literal":
      return literalString(e.value, e.dataType)
    case "Alias": {
      const delay = e.child._tag === "AttributeReference" ? e.child.eventTimeDelayMs : undefined
      return `${expressionString(e.child)} AS ${e.name}#${e.exprId}${typeSuffix(e)}${delaySuffix(delay)}`
    }
    case "UnaryExpression":
      switch (e.op) {
        case "negate":
          return `-${expressionString(e.child)}`
        case "not":
          return `NOT ${expressionString(e.child)}`
        case "isNull":
          return `isnull(${expressionString(e.child)})`
        case "isNotNull":
          return `isnotnull(${expressionString(e.child)})`
      }
    case "BinaryExpression":
      // Spark has no `!=`: `a != b` is `NOT (a = b)`
      return e.op === "!="
        ? `NOT (${expressionString(e.left)} = ${expressionString(e.right)})`
        : `(${expressionString(e.left)} ${binarySymbol(e.op)} ${expressionString(e.right)})`
    case "In":
      return `${expressionString(e.child)} IN (${e.list.map(expressionString).join(",")})`
    case "Cast":
      return `cast(${expressionString(e.child)} as ${T.simpleString(e.to)})`
    case "CaseWhen":
      return `CASE${e.branches.map(([c, v]) => ` WHEN ${expressionString(c)} THEN ${expressionString(v)}`).join("")}${
        e.otherwise === undefined ? "" : ` ELSE ${expressionString(e.otherwise)}`
      } END`
    case "GetField":
      return e.ordinal === undefined
        ? `${expressionString(e.child)}[${e.field}]`
        : `${expressionString(e.child)}.${e.field}`
    case "ScalarFunction":
      return `${e.dataType === undefined ? "'" : ""}${e.name}(${e.args.map(expressionString).join(", ")})`
    case "AggregateFunction":
      return aggregateString(e)
    case "TimeWindow":
      return `window(${expressionString(e.timeColumn)}, ${e.windowMs * 1000}, ${e.slideMs * 1000}, ${e.startMs * 1000})`
    case "SessionWindow": {
      const gap =
        e.gap._tag === "Literal" && typeof e.gap.value === "number" && T.isNumeric(e.gap.dataType)
          ? intervalString(e.gap.value)
          : expressionString(e.gap)
      return `session_window(${expressionString(e.timeColumn)}, ${gap})`
    }
    case "Explode": {
      const g = `${e.position ? "posexplode" : "explode"}(${expressionString(e.child)})`
      return e.outer ? `generatorouter(${g})` : g
    }
    case "CurrentTimestamp":
      return "current_timestamp()"
    case "SortOrder":
      return `${expressionString(e.child)} ${e.direction === "asc" ? "ASC" : "DESC"} ${e.nullOrdering === "nullsFirst" ? "NULLS FIRST" : "NULLS LAST"}`
    case "InvalidExpression":
      return `'invalid(${e.message})`
    case "WindowFunction":
      return windowFunctionString(e)
    case "WindowExpression": {
      const fn =
        e.function._tag === "WindowFunction"
          ? windowFunctionString(e.function, e.orderSpec)
          : expressionString(e.function)
      const spec = [...e.partitionSpec, ...e.orderSpec].map(expressionString)
      if (e.frame !== undefined) spec.push(frameString(e.frame))
      else spec.push("unspecifiedframe$()")
      return `${fn} windowspecdefinition(${spec.join(", ")})`
    }
  }
}

const boundaryString = (b: E.FrameBoundary): string => {
  switch (b._tag) {
    case "UnboundedPreceding":
      return "unboundedpreceding$()"
    case "UnboundedFollowing":
      return "unboundedfollowing$()"
    case "CurrentRow":
      return "currentrow$()"
    case "Offset":
      return String(b.value)
  }
}

/**
 * Spark's `SpecifiedWindowFrame.toString`, as plans and frame errors print it:
 * `specifiedwindowframe(RowFrame, unboundedpreceding$(), currentrow$())`.
 *
 * @since 0.1.0
 */
export const frameString = (f: E.WindowFrame): string =>
  `specifiedwindowframe(${f.frameType === "rows" ? "RowFrame" : "RangeFrame"}, ${boundaryString(f.lower)}, ${boundaryString(f.upper)})`

/**
 * Spark's `toString` of a window function: `row_number()`, `rank(v#2)` (a ranking function's
 * children are the window's order keys), `lag(v#2, -1, null)` (lag keeps the negated offset),
 * `nth_value(v#2, 2, false)`.
 *
 * @since 0.1.0
 */
export const windowFunctionString = (
  e: E.WindowFunction,
  orderSpec: ReadonlyArray<E.Expression> = [],
  print: (e: E.Expression) => string = expressionString
): string => {
  const args = e.args.map(print)
  switch (e.name) {
    case "rank":
    case "dense_rank":
    case "percent_rank":
      return `${e.name}(${orderSpec.map((o) => print(o._tag === "SortOrder" ? o.child : o)).join(", ")})`
    case "lag": {
      const off = e.args[1]
      const neg = off?._tag === "Literal" && typeof off.value === "number" ? String(-off.value) : args[1]
      return `lag(${[args[0], neg, args[2]].join(", ")})`
    }
    case "nth_value":
      return `nth_value(${[...args, String(e.ignoreNulls)].join(", ")})`
    default:
      return `${e.name}(${args.join(", ")})`
  }
}

/** A named-list item of an unresolved operator: Spark wraps an unnamed expression in `unresolvedalias`. */
const listItem = (e: E.Expression, parsed: boolean): string => {
  if (
    parsed &&
    e._tag !== "Alias" &&
    e._tag !== "AttributeReference" &&
    e._tag !== "UnresolvedAttribute" &&
    e._tag !== "UnresolvedStar"
  ) {
    return `unresolvedalias(${expressionString(e)})`
  }
  return expressionString(e)
}

const list = (es: ReadonlyArray<E.Expression>, parsed = false): string =>
  `[${es.map((e) => listItem(e, parsed)).join(", ")}]`

/** Whether an operator is resolved (Spark's `LogicalPlan.resolved`): its expressions and children are. */
export const isPlanResolved = (p: P.LogicalPlan): boolean => {
  switch (p._tag) {
    case "WithColumns":
    case "WithColumnsRenamed":
    case "Drop":
      return false
    case "Join":
      if (p.usingColumns !== undefined) return false
      break
    case "Deduplicate":
      if (p.keys === undefined) return false
      break
    default:
      break
  }
  return P.expressions(p).every(E.isResolved) && P.children(p).every(isPlanResolved)
}

/** Spark's `AttributeReference.simpleString`: `ts#3: timestamp`. */
const attributeSimpleString = (e: E.Expression): string =>
  e._tag === "AttributeReference" ? `${e.name}#${e.exprId}: ${T.simpleString(e.dataType)}` : expressionString(e)

/** Spark's `argString`: the arguments joined by `, `, an empty list left out. */
const args = (name: string, ...parts: ReadonlyArray<string | undefined>): string => {
  const present = parts.filter((x): x is string => x !== undefined && x !== "[]")
  return present.length === 0 ? name : `${name} ${present.join(", ")}`
}

/** The text of one operator line, without the `'` of an unresolved operator. */
const nodeText = (p: P.LogicalPlan, parsed: boolean): string => {
  switch (p._tag) {
    case "LocalRelation": {
      const out = `[${p.output.map(expressionString).join(", ")}]`
      return p.rows.length === 0 ? `LocalRelation <empty>, ${out}` : `LocalRelation ${out}`
    }
    case "DataSourceRelation":
      return `Relation [${p.output.map(expressionString).join(",")}] ${p.format}`
    case "StreamingRelation":
      return `StreamingRelation ${p.format}, [${p.output.map(expressionString).join(", ")}]`
    case "Project":
      return args("Project", list(p.projectList, parsed))
    case "Filter":
      return `Filter ${expressionString(p.condition)}`
    case "Aggregate":
      return args("Aggregate", list(p.groupingExpressions), list(p.aggregateExpressions, parsed))
    case "Join": {
      const type =
        p.usingColumns === undefined
          ? P.joinTypeName(p.joinType)
          : `UsingJoin(${P.joinTypeName(p.joinType)}, [${p.usingColumns.join(", ")}])`
      return p.condition === undefined ? `Join ${type}` : `Join ${type}, ${expressionString(p.condition)}`
    }
    case "Sort":
      return `Sort ${list(p.order)}, ${p.global}`
    case "Limit":
      return `GlobalLimit ${p.n}`
    case "Distinct":
      return "Distinct"
    case "Deduplicate": {
      const keys = p.keys === undefined ? `[${(p.columnNames ?? []).join(", ")}]` : list(p.keys)
      return args(p.withinWatermark ? "DeduplicateWithinWatermark" : "Deduplicate", keys)
    }
    case "Union":
      return `Union ${p.byName}, ${p.allowMissingColumns}`
    case "Intersect":
    case "Except":
      // Spark's `nodeName` (`IntersectAll` when isAll) and `argString` (isAll)
      return `${p._tag}${p.isAll ? "All" : ""} ${p.isAll}`
    case "Generate": {
      const g = p.generator
      const outer = g._tag === "Explode" && g.outer
      const gen = g._tag === "Explode" ? expressionString({ ...g, outer: false }) : expressionString(g)
      return `Generate ${gen}, ${outer}, ${list(p.generatorOutput)}`
    }
    case "Window":
      // Spark's Window node: window expressions, partition keys, order keys
      return `Window ${list(p.windowExpressions)}, ${list(p.partitionSpec)}, ${list(p.orderSpec)}`
    case "WithColumns":
      return `WithColumns [${p.columns.map((c, i) => `${expressionString(c._tag === "Alias" ? c.child : c)} AS ${p.names[i]}`).join(", ")}]`
    case "WithColumnsRenamed":
      return `WithColumnsRenamed [${p.renames.map(([a, b]) => `${a} -> ${b}`).join(", ")}]`
    case "Drop":
      return args("Drop", list(p.columns))
    case "TypedFilter":
      return "TypedFilter <function1>"
    case "MapElements":
      return `${p.flat ? "MapPartitions" : "MapElements"} <function1>, ${list(p.output)}`
    case "FlatMapGroupsWithState":
      // Spark's FlatMapGroupsWithState node string: function, modes, whether map-only, timeout
      return `FlatMapGroupsWithState <function3>, ${p.outputMode === "append" ? "Append" : "Update"}, ${p.isMapGroupsWithState}, ${p.timeout}, ${p.initialState !== undefined}, ${list(p.output)}`
    case "TransformWithState":
      return `TransformWithState <function1>, ${p.timeMode}, ${p.outputMode === "append" ? "Append" : "Update"}, ${list(p.output)}`
    case "EventTimeWatermark":
      return `EventTimeWatermark ${attributeSimpleString(p.eventTime)}, ${intervalString(p.delayMs)}`
    case "SubqueryAlias":
      return `SubqueryAlias ${p.alias}`
  }
}

interface Display {
  readonly text: string
  readonly children: ReadonlyArray<Display>
}

const display = (p: P.LogicalPlan, mode: Mode): Display => {
  const resolved = isPlanResolved(p)
  const mark = resolved ? "" : "'"
  const parsed = mode === "parsed" && !resolved
  const children = P.children(p).map((c) => display(c, mode))
  if (p._tag === "Limit") {
    // Spark's `Limit(n, child)` is `GlobalLimit(n, LocalLimit(n, child))`
    return { text: `${mark}GlobalLimit ${p.n}`, children: [{ text: `${mark}LocalLimit ${p.n}`, children }] }
  }
  return { text: `${mark}${nodeText(p, parsed)}`, children }
}

/**
 * Spark's `treeString` of a logical plan: one line per operator, each ending in a newline.
 *
 * @example
 * ```ts
 * // Project [a#1, (b#2L + 1) AS (b + 1)#3L]
 * // +- Filter (a#1 > 0)
 * //    +- LocalRelation [a#1, b#2L]
 * ```
 * @since 0.1.0
 */
export const treeString = (plan: P.LogicalPlan, mode: Mode): string => {
  const lines: Array<string> = []
  const render = (d: Display, lastChildren: ReadonlyArray<boolean>): void => {
    let prefix = ""
    if (lastChildren.length > 0) {
      for (let i = 0; i < lastChildren.length - 1; i++) prefix += lastChildren[i] ? "   " : ":  "
      prefix += lastChildren[lastChildren.length - 1] ? "+- " : ":- "
    }
    lines.push(prefix + d.text)
    for (let i = 0; i < d.children.length; i++) render(d.children[i], [...lastChildren, i === d.children.length - 1])
  }
  render(display(plan, mode), [])
  return `${lines.join("\n")}\n`
}
