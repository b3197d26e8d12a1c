/**
 * The names Spark gives unaliased expressions (`toPrettySQL` / `usePrettyExpression`):
 * `(a + 1)`, `sum(x)`, `count(1)`, `CAST(x AS INT)`, `(a IS NULL)`, `CASE WHEN … END`.
 * These become column names, so they must match Spark exactly.
 *
 * @since 0.1.0
 */
import * as T from "./DataType.ts"
import type { Expression, FrameBoundary, Literal, WindowFrame, WindowFunction } from "./Expression.ts"

const MS_PER_DAY = 86_400_000

const pad = (n: number, w = 2): string => String(n).padStart(w, "0")

/** `2024-01-02 03:04:05` (UTC), with milliseconds only when non-zero, as Spark prints timestamps. */
export const formatTimestamp = (ms: number): string => {
  const d = new Date(ms)
  const base = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  const frac = d.getUTCMilliseconds()
  if (frac === 0) return base
  return `${base}.${pad(frac, 3).replace(/0+$/, "")}`
}

/** `2024-01-02`, from days since the epoch. */
export const formatDate = (days: number): string => {
  const d = new Date(days * MS_PER_DAY)
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`
}

/** Spark's string form of a double (`1.0`, `0.1`, `1.0E10`, `NaN`, `Infinity`). */
export const formatDouble = (v: number): string => {
  if (Number.isNaN(v)) return "NaN"
  if (v === Infinity) return "Infinity"
  if (v === -Infinity) return "-Infinity"
  if (Number.isInteger(v) && Math.abs(v) < 1e7) return `${v}.0`
  const abs = Math.abs(v)
  if (abs >= 1e-3 && abs < 1e7) return String(v)
  // Java prints 1.0E10, 1.234E-5
  let [mant, exp] = v.toExponential().split("e")
  // Java prints at least two significant digits, the two closest to the value:
  // Double.MIN_VALUE is 4.9E-324, not 5.0E-324 (issue #21, deviation 10)
  if (!mant.includes(".")) [mant, exp] = v.toExponential(1).split("e")
  const m = mant
  return `${m}E${exp.startsWith("+") ? exp.slice(1) : exp}`
}

const literalName = (e: Literal): string => {
  if (e.sql !== undefined) return e.sql
  const v = e.value
  if (v === null || v === undefined) return "NULL"
  switch (e.dataType._tag) {
    case "double":
      return formatDouble(v as number)
    case "timestamp":
      return `TIMESTAMP '${formatTimestamp(v as number)}'`
    case "date":
      return `DATE '${formatDate(v as number)}'`
    case "boolean":
      return v ? "true" : "false"
    case "calendarInterval":
      return `INTERVAL '${calendarIntervalString(v as { months: number; days: number; micros: number })}'`
    case "array":
      return `ARRAY(${(v as ReadonlyArray<unknown>)
        .map((x) => literalName({ _tag: "Literal", value: x, dataType: (e.dataType as T.ArrayType).elementType }))
        .join(", ")})`
    default:
      return String(v)
  }
}

/**
 * Spark's `CalendarInterval.toString`: `1 years 2 months 3 days 4 hours 5 minutes 6.5 seconds`,
 * zero parts left out, `0 seconds` for nothing.
 */
export const calendarIntervalString = (iv: {
  readonly months: number
  readonly days: number
  readonly micros: number
}): string => {
  if (iv.months === 0 && iv.days === 0 && iv.micros === 0) return "0 seconds"
  const parts: Array<string> = []
  const unit = (n: number, name: string) => {
    if (n !== 0) parts.push(`${n} ${name}`)
  }
  unit(Math.trunc(iv.months / 12), "years")
  unit(iv.months % 12, "months")
  unit(iv.days, "days")
  let rest = iv.micros
  const hours = Math.trunc(rest / 3_600_000_000)
  unit(hours, "hours")
  rest -= hours * 3_600_000_000
  const minutes = Math.trunc(rest / 60_000_000)
  unit(minutes, "minutes")
  rest -= minutes * 60_000_000
  if (rest !== 0) {
    const sign = rest < 0 ? "-" : ""
    const abs = Math.abs(rest)
    const frac = String(abs % 1_000_000)
      .padStart(6, "0")
      .replace(/0+$/, "")
    parts.push(`${sign}${Math.floor(abs / 1_000_000)}${frac === "" ? "" : `.${frac}`} seconds`)
  }
  return parts.join(" ")
}

/** The analyzer-internal functions of expression text that Spark prints as operators. */
const BINARY_FUNCTIONS: Readonly<Record<string, string>> = {
  bitwise_and: "&",
  bitwise_or: "|",
  bitwise_xor: "^",
  div: "div",
  shift_left: "<<",
  shift_right: ">>",
  shift_right_unsigned: ">>>"
}

const isIntervalLiteral = (e: Expression): boolean => e._tag === "Literal" && e.dataType._tag === "calendarInterval"

const opSymbol = (op: string): string => (op === "and" ? "AND" : op === "or" ? "OR" : op)

const boundarySql = (b: FrameBoundary): string => {
  switch (b._tag) {
    case "UnboundedPreceding":
      return "UNBOUNDED PRECEDING"
    case "UnboundedFollowing":
      return "UNBOUNDED FOLLOWING"
    case "CurrentRow":
      return "CURRENT ROW"
    case "Offset":
      // Spark keeps the literal: rowsBetween(-1, 1) is `-1 FOLLOWING AND 1 FOLLOWING`, and
      // `1 PRECEDING` in expression text is `UnaryMinus(1)`, named `1 PRECEDING`
      return b.preceding === true ? `${b.value === 0 ? 0 : -b.value} PRECEDING` : `${b.value} FOLLOWING`
  }
}

/** Spark's `SpecifiedWindowFrame.sql`: `ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`. */
export const frameSql = (f: WindowFrame): string =>
  `${f.frameType === "rows" ? "ROWS" : "RANGE"} BETWEEN ${boundarySql(f.lower)} AND ${boundarySql(f.upper)}`

/** Spark's `WindowSpecDefinition.sql` (pretty): `(PARTITION BY k ORDER BY v ASC NULLS FIRST <frame>)`. */
export const windowSpecSql = (
  partitionSpec: ReadonlyArray<Expression>,
  orderSpec: ReadonlyArray<Expression>,
  frame: WindowFrame | undefined,
  name: (e: Expression) => string = prettyName
): string => {
  const parts: Array<string> = []
  if (partitionSpec.length > 0) parts.push(`PARTITION BY ${partitionSpec.map(name).join(", ")}`)
  if (orderSpec.length > 0) parts.push(`ORDER BY ${orderSpec.map(name).join(", ")}`)
  if (frame !== undefined) parts.push(frameSql(frame))
  return `(${parts.join(" ")})`
}

/** Spark's SQL of a window function: `row_number()`, `RANK()`, `lag(v, 1, NULL)`, `nth_value(v, 2) ignore nulls`. */
export const windowFunctionSql = (e: WindowFunction, name: (e: Expression) => string = prettyName): string => {
  switch (e.name) {
    case "rank":
    case "dense_rank":
    case "percent_rank":
      // Spark's RankLike.sql
      return `${e.name.toUpperCase()}()`
    case "nth_value":
      return `nth_value(${e.args.map(name).join(", ")})${e.ignoreNulls ? " ignore nulls" : ""}`
    default:
      return `${e.name}(${e.args.map(name).join(", ")})`
  }
}

/** The column name of an unaliased expression, as Spark computes it. */
export const prettyName = (e: Expression): string => {
  switch (e._tag) {
    case "UnresolvedAttribute":
      return e.nameParts.join(".")
    case "UnresolvedStar":
      return e.target === undefined ? "*" : `${e.target.join(".")}.*`
    case "AttributeReference":
      return e.name
    case "Literal":
      return literalName(e)
    case "Alias":
      return e.name
    case "UnaryExpression":
      switch (e.op) {
        case "negate":
          return `(- ${prettyName(e.child)})`
        case "not":
          return `(NOT ${prettyName(e.child)})`
        case "isNull":
          return `(${prettyName(e.child)} IS NULL)`
        case "isNotNull":
          return `(${prettyName(e.child)} IS NOT NULL)`
      }
    case "BinaryExpression":
      // Spark's TimeAdd, DatetimeSub and DateAddInterval print `l + r` / `l - r` unparenthesised
      if ((e.op === "+" || e.op === "-") && (isIntervalLiteral(e.left) || isIntervalLiteral(e.right))) {
        return `${prettyName(e.left)} ${e.op} ${prettyName(e.right)}`
      }
      return `(${prettyName(e.left)} ${opSymbol(e.op)} ${prettyName(e.right)})`
    case "In":
      return `(${prettyName(e.child)} IN (${e.list.map(prettyName).join(", ")}))`
    case "Cast":
      return `CAST(${prettyName(e.child)} AS ${T.simpleString(e.to).toUpperCase()})`
    case "CaseWhen":
      return `CASE ${e.branches.map(([c, v]) => `WHEN ${prettyName(c)} THEN ${prettyName(v)}`).join(" ")}${
        e.otherwise === undefined ? "" : ` ELSE ${prettyName(e.otherwise)}`
      } END`
    case "GetField":
      return `${prettyName(e.child)}.${e.field}`
    case "ScalarFunction":
      // struct keeps its arguments' aliases (they name its fields); Spark shows them: struct(user AS u)
      if (e.name.toLowerCase() === "struct" || e.name.toLowerCase() === "arrays_zip") {
        return `${e.name}(${e.args.map((a) => (a._tag === "Alias" ? `${prettyName(a.child)} AS ${a.name}` : prettyName(a))).join(", ")})`
      }
      // Spark's BitwiseAnd/Or/Xor, BitwiseNot and IntegralDivide of expression text
      if (e.args.length === 2 && BINARY_FUNCTIONS[e.name] !== undefined) {
        return `(${prettyName(e.args[0])} ${BINARY_FUNCTIONS[e.name]} ${prettyName(e.args[1])})`
      }
      if (e.name === "bitwise_not" && e.args.length === 1) return `~${prettyName(e.args[0])}`
      // Spark's GetArrayItem / GetMapValue of `a[i]` in expression text
      if (e.name === "subscript" && e.args.length === 2) return `${prettyName(e.args[0])}[${prettyName(e.args[1])}]`
      // Spark's AvroDataToCatalyst / CatalystDataToAvro / JsonToStructs: the schema and options are not children
      if ((e.name === "from_avro" || e.name === "to_avro" || e.name === "from_json") && e.args.length > 0)
        return `${e.name}(${prettyName(e.args[0])})`
      return `${e.name}(${e.args.map(prettyName).join(", ")})`
    case "AggregateFunction": {
      const args = e.args.map(prettyName).join(", ")
      return `${e.name}(${e.distinct ? "DISTINCT " : ""}${args})`
    }
    case "TimeWindow":
      return "window"
    case "SessionWindow":
      return "session_window"
    case "Explode":
      return e.position ? "pos" : "col"
    case "CurrentTimestamp":
      return "current_timestamp()"
    case "InvalidExpression":
      return "<invalid>"
    case "WindowFunction":
      return windowFunctionSql(e)
    case "WindowExpression":
      return `${prettyName(e.function)} OVER ${windowSpecSql(e.partitionSpec, e.orderSpec, e.frame)}`
    case "SortOrder":
      return `${prettyName(e.child)} ${e.direction === "asc" ? "ASC" : "DESC"} ${e.nullOrdering === "nullsFirst" ? "NULLS FIRST" : "NULLS LAST"}`
  }
}
