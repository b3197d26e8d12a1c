/**
 * `F`: Spark's `functions` object. Column constructors, aggregates, windows and generators
 * live here; the scalar string, math, date and collection functions come from
 * `functions/ScalarFunctions.ts` and are spread into the same object.
 *
 * Default names follow Spark: `F.sum("x")` is named `sum(x)`, `F.count("*")` is `count(1)`.
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const perWindow = [F.window("ts", "10 seconds"), F.col("user")]
 * const metrics = [F.count("*").as("n"), F.sum("amount"), F.avg(F.col("amount").multiply(2)).as("avg2")]
 * ```
 * @since 0.1.0
 */
import { Duration } from "effect"
import { Column, type ColumnOrName, type ColumnOrValue, col, lit, toColumnExpr, toExpr } from "./Column.ts"
import * as T from "./DataType.ts"
import type * as E from "./Expression.ts"
import { parseDurationMs } from "./Durations.ts"
import * as Scalar from "./functions/ScalarFunctions.ts"
import { expressionOf } from "./sql/ExpressionParser.ts"

type NameOf<C> = C extends string ? C : C extends Column<any, infer N> ? N : string
type ValueOf<C> = C extends Column<infer V, any> ? V : unknown

const aggregate = <A, N extends string>(
  name: E.AggregateName,
  args: ReadonlyArray<E.Expression>,
  distinct = false,
  options: E.AggregateFunction["options"] = {}
): Column<A, N> => new Column({ _tag: "AggregateFunction", name, args, distinct, options, dataType: undefined })

const star = (c: ColumnOrName): E.Expression => (c === "*" ? lit(1).expr : toColumnExpr(c))

/** `count(col)`: non-null values; `count("*")` counts rows and is named `count(1)`. */
export const count = <const C extends ColumnOrName>(
  c: C
): Column<number, C extends "*" ? "count(1)" : `count(${NameOf<C>})`> => aggregate("count", [star(c)])

/** `count(DISTINCT a, b)`. */
export const countDistinct = <const C extends ColumnOrName>(
  c: C,
  ...more: ReadonlyArray<ColumnOrName>
): Column<number, `count(DISTINCT ${NameOf<C>})`> => aggregate("count", [c, ...more].map(toColumnExpr), true)

export const count_distinct = countDistinct

export const sum = <const C extends ColumnOrName>(c: C): Column<number, `sum(${NameOf<C>})`> =>
  aggregate("sum", [toColumnExpr(c)])

export const sumDistinct = <const C extends ColumnOrName>(c: C): Column<number, `sum(DISTINCT ${NameOf<C>})`> =>
  aggregate("sum", [toColumnExpr(c)], true)

export const sum_distinct = sumDistinct

export const avg = <const C extends ColumnOrName>(c: C): Column<number, `avg(${NameOf<C>})`> =>
  aggregate("avg", [toColumnExpr(c)])

/** Spark's `mean` is `avg` (and is named `avg(x)`). */
export const mean = avg

export const min = <const C extends ColumnOrName>(c: C): Column<ValueOf<C>, `min(${NameOf<C>})`> =>
  aggregate("min", [toColumnExpr(c)])

export const max = <const C extends ColumnOrName>(c: C): Column<ValueOf<C>, `max(${NameOf<C>})`> =>
  aggregate("max", [toColumnExpr(c)])

export const first = <const C extends ColumnOrName>(
  c: C,
  ignoreNulls = false
): Column<ValueOf<C>, `first(${NameOf<C>})`> => aggregate("first", [toColumnExpr(c)], false, { ignoreNulls })

export const last = <const C extends ColumnOrName>(
  c: C,
  ignoreNulls = false
): Column<ValueOf<C>, `last(${NameOf<C>})`> => aggregate("last", [toColumnExpr(c)], false, { ignoreNulls })

export const collect_list = <const C extends ColumnOrName>(
  c: C
): Column<Array<ValueOf<C>>, `collect_list(${NameOf<C>})`> => aggregate("collect_list", [toColumnExpr(c)])

export const collect_set = <const C extends ColumnOrName>(
  c: C
): Column<Array<ValueOf<C>>, `collect_set(${NameOf<C>})`> => aggregate("collect_set", [toColumnExpr(c)])

/** HyperLogLog++ estimate of distinct values; `rsd` is the maximum relative standard deviation (default 0.05). */
export const approx_count_distinct = <const C extends ColumnOrName>(
  c: C,
  rsd = 0.05
): Column<number, `approx_count_distinct(${NameOf<C>})`> =>
  aggregate("approx_count_distinct", [toColumnExpr(c)], false, { rsd })

export const approxCountDistinct = approx_count_distinct

/** A window of event time: `{ start: Date, end: Date }`, the column named `window`. */
export interface Window {
  readonly start: Date
  readonly end: Date
}

const durationMs = (d: Duration.Input | string): number => {
  const ms = parseDurationMs(d)
  return ms === undefined ? Number.NaN : ms
}

/**
 * Tumbling (`slideDuration` omitted) or sliding time windows over `timeColumn`, as Spark's
 * `window`. Durations are Spark interval strings (`"10 seconds"`, `"1 minute"`) or Effect durations.
 * A window is `[start, end)`: an event at exactly `end` belongs to the next window.
 */
export const window = (
  timeColumn: ColumnOrName,
  windowDuration: Duration.Input | string,
  slideDuration?: Duration.Input | string,
  startTime?: Duration.Input | string
): Column<Window, "window"> => {
  const windowMs = durationMs(windowDuration)
  return new Column({
    _tag: "TimeWindow",
    timeColumn: toColumnExpr(timeColumn),
    windowMs,
    slideMs: slideDuration === undefined ? windowMs : durationMs(slideDuration),
    startMs: startTime === undefined ? 0 : durationMs(startTime)
  })
}

/**
 * Session windows over `timeColumn`: events closer than `gapDuration` form one session. The gap
 * is a duration, or a column giving a duration string per row (a gap of zero or less drops the row).
 */
export const session_window = (
  timeColumn: ColumnOrName,
  gapDuration: Duration.Input | string | Column<any, any>
): Column<Window, "session_window"> =>
  new Column({
    _tag: "SessionWindow",
    timeColumn: toColumnExpr(timeColumn),
    gap: gapDuration instanceof Column ? gapDuration.expr : lit(durationMs(gapDuration as string)).expr
  })

/** `window_time(window)`: the window's end minus one microsecond, as an event time. */
export const window_time = (windowColumn: ColumnOrName): Column<Date, "window_time(window)"> =>
  Scalar.callByName("window_time", [windowColumn]) as never

/** One output row per element of an array (or entry of a map); the new column is named `col`. */
export const explode = <const C extends ColumnOrName>(
  c: C
): Column<ValueOf<C> extends ReadonlyArray<infer X> ? X : unknown, "col"> =>
  new Column({ _tag: "Explode", child: toColumnExpr(c), outer: false, position: false })

/** Like `explode`, but a null or empty array gives one row with null. */
export const explode_outer = <const C extends ColumnOrName>(
  c: C
): Column<ValueOf<C> extends ReadonlyArray<infer X> ? X : unknown, "col"> =>
  new Column({ _tag: "Explode", child: toColumnExpr(c), outer: true, position: false })

/** `explode` with the element's position in a column `pos` before `col`. */
export const posexplode = <const C extends ColumnOrName>(c: C): Column<unknown, "col"> =>
  new Column({ _tag: "Explode", child: toColumnExpr(c), outer: false, position: true })

export const posexplode_outer = <const C extends ColumnOrName>(c: C): Column<unknown, "col"> =>
  new Column({ _tag: "Explode", child: toColumnExpr(c), outer: true, position: true })

/** The batch timestamp in a streaming query; the time the action started in a batch one. */
export const current_timestamp = (): Column<Date, "current_timestamp()"> => new Column({ _tag: "CurrentTimestamp" })

export const now = current_timestamp

/**
 * Starts a `CASE WHEN`: `F.when(cond, v).when(cond2, v2).otherwise(v3)`. Without `otherwise`,
 * rows no branch matches get null.
 */
export const when = (condition: Column<any, any>, value: ColumnOrValue): Column<unknown> =>
  new Column({ _tag: "CaseWhen", branches: [[condition.expr, toExpr(value)]], otherwise: undefined })

/** A sort order for `orderBy`. */
export const asc = (c: ColumnOrName): Column => (typeof c === "string" ? col(c) : c).asc()
export const desc = (c: ColumnOrName): Column => (typeof c === "string" ? col(c) : c).desc()
export const asc_nulls_last = (c: ColumnOrName): Column => (typeof c === "string" ? col(c) : c).asc_nulls_last()
export const desc_nulls_first = (c: ColumnOrName): Column => (typeof c === "string" ? col(c) : c).desc_nulls_first()

/** `expr` of a Spark type name, for `cast`. */
export const typeOf = (name: string): T.DataType | undefined => T.parseTypeString(name)

export { col, lit }
export const column = col

/**
 * `from_avro(data, jsonFormatSchema, options?)`: decodes the Avro binary value of a column (a
 * Kafka value, say) with the writer schema `jsonFormatSchema`, as Spark's `from_avro`. Options:
 * `mode` `FAILFAST` (default: a malformed value fails the query with Spark's error) or
 * `PERMISSIVE` (it reads as null); `avroSchema` (an evolved reader schema); `datetimeRebaseMode`.
 * The result type is Spark's for the schema (records as structs, unions of null and one type as
 * nullable, other unions as `struct<member0, …>`).
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const schema = JSON.stringify({ type: "record", name: "User", fields: [{ name: "name", type: "string" }] })
 * const users = F.from_avro("value", schema, { mode: "PERMISSIVE" }).as("user")
 * ```
 * @since 0.5.0
 */
export const from_avro = <const C extends ColumnOrName>(
  data: C,
  jsonFormatSchema: string,
  options?: Readonly<Record<string, string>>
): Column<unknown, `from_avro(${NameOf<C>})`> => {
  const args: Array<E.Expression> = [toColumnExpr(data), lit(jsonFormatSchema).expr]
  if (options !== undefined && Object.keys(options).length > 0) {
    // the map literal Spark Connect sends (pyspark's `_options_to_col`)
    const kv = Object.entries(options).flatMap(([k, v]) => [lit(k).expr, lit(String(v)).expr])
    args.push({ _tag: "ScalarFunction", name: "map", args: kv, dataType: undefined })
  }
  return new Column({ _tag: "ScalarFunction", name: "from_avro", args, dataType: undefined })
}

/**
 * `to_avro(data, jsonFormatSchema?)`: the Avro binary encoding of a column's values, with the
 * schema Spark derives from the column's type (a nullable column as the union `[type, "null"]`)
 * or the one given, as Spark's `to_avro`.
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const value = F.to_avro(F.struct("name", "age")).as("value")
 * ```
 * @since 0.5.0
 */
export const to_avro = <const C extends ColumnOrName>(
  data: C,
  jsonFormatSchema?: string
): Column<Uint8Array, `to_avro(${NameOf<C>})`> =>
  new Column({
    _tag: "ScalarFunction",
    name: "to_avro",
    args: jsonFormatSchema === undefined ? [toColumnExpr(data)] : [toColumnExpr(data), lit(jsonFormatSchema).expr],
    dataType: undefined
  })

/**
 * `expr(text)`: Spark SQL expression text parsed into a column, as Spark's `functions.expr` —
 * the same expression `F` builds (`F.expr("upper(name)")` is `F.upper("name")`), with Spark's
 * grammar: operators and their precedence, `CASE WHEN`, `CAST(x AS type)`, `IN`, `BETWEEN`,
 * `LIKE`, `IS [NOT] NULL`, typed literals (`DATE'2024-01-01'`), intervals
 * (`INTERVAL 10 SECONDS`, `INTERVAL '1 2:03' DAY TO MINUTE`), `count(*)`, aliases
 * (`"a + 1 AS b"`). Function names resolve case-insensitively. Text that does not parse gives a
 * column whose first action fails with Spark's `ParseException` (an `AnalysisError`), position
 * and caret included; an unknown function, `[UNRESOLVED_ROUTINE]`.
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const late = F.expr("ts + INTERVAL 10 SECONDS AS deadline")
 * const adult = F.expr("age >= 18 AND name IS NOT NULL")
 * ```
 * @since 0.7.0
 */
export const expr = (text: string): Column<unknown> => new Column(expressionOf(text))

export * from "./functions/ScalarFunctions.ts"
