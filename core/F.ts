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
import { expressionError } from "./functions/RuntimeErrors.ts"
import { toExternal, toInternal } from "./Row.ts"
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
 * `from_json(json, schema, options?)`: parses a JSON string column (a Kafka value cast to a
 * string, say) into a struct of `schema` — a DDL string (`"a INT, b STRING"`) or a `StructType`
 * — as Spark's `from_json`; every field of the result is nullable. Options: `mode`
 * `PERMISSIVE` (default: a malformed record reads as a struct of nulls, fields that converted
 * kept, the record in the `_corrupt_record` field — or `columnNameOfCorruptRecord` — when the
 * schema has one) or `FAILFAST` (it fails the query with Spark's
 * `MALFORMED_RECORD_IN_PARSING`); `DROPMALFORMED` is refused, as in Spark; and the `json`
 * format's parser options (`allowComments`, `allowSingleQuotes`, …). Blank text and a null
 * input give null.
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const events = F.from_json(F.col("value").cast("string"), "id INT, name STRING", { mode: "FAILFAST" }).as("event")
 * ```
 * @since 0.6.0
 */
export const from_json = <const C extends ColumnOrName>(
  json: C,
  schema: string | T.StructType,
  options?: Readonly<Record<string, string>>
): Column<unknown, `from_json(${NameOf<C>})`> => {
  const ddl = typeof schema === "string" ? schema : T.simpleString(schema)
  const args: Array<E.Expression> = [toColumnExpr(json), lit(ddl).expr]
  if (options !== undefined && Object.keys(options).length > 0) {
    // the map literal Spark Connect sends (pyspark's `_options_to_col`)
    const kv = Object.entries(options).flatMap(([k, v]) => [lit(k).expr, lit(String(v)).expr])
    args.push({ _tag: "ScalarFunction", name: "map", args: kv, dataType: undefined })
  }
  return new Column({ _tag: "ScalarFunction", name: "from_json", args, dataType: undefined })
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

// ---------------------------------------------------------------------------------------------
// Window functions (Spark's functions.row_number … nth_value): used with `.over(window)`
// ---------------------------------------------------------------------------------------------

const windowFn = <A, N extends string>(
  name: E.WindowFunctionName,
  args: ReadonlyArray<E.Expression> = [],
  ignoreNulls = false
): Column<A, N> => new Column({ _tag: "WindowFunction", name, args, ignoreNulls, dataType: undefined })

/**
 * A sequential number per row of a window partition, from 1, in the window's order.
 *
 * @example
 * ```ts
 * import { F, Window } from "tributary-streaming"
 * const rn = F.row_number().over(Window.partitionBy("k").orderBy("v")).as("rn")
 * ```
 * @since 0.7.0
 */
export const row_number = (): Column<number, "row_number()"> => windowFn("row_number")

/** The rank of each row in its partition, with gaps after ties (Spark's `rank`). @since 0.7.0 */
export const rank = (): Column<number, "RANK()"> => windowFn("rank")

/** The rank of each row in its partition, without gaps after ties. @since 0.7.0 */
export const dense_rank = (): Column<number, "DENSE_RANK()"> => windowFn("dense_rank")

/** `(rank - 1) / (rows in the partition - 1)`, a double; 0 for a one-row partition. @since 0.7.0 */
export const percent_rank = (): Column<number, "PERCENT_RANK()"> => windowFn("percent_rank")

/** The fraction of the partition's rows ordered before or with the current row (its peers included). @since 0.7.0 */
export const cume_dist = (): Column<number, "cume_dist()"> => windowFn("cume_dist")

/**
 * The bucket (1 to `n`) of each row when its partition is split into `n` buckets whose sizes
 * differ by at most one, the larger ones first.
 *
 * @since 0.7.0
 */
export const ntile = (n: number): Column<number, `ntile(${number})`> => windowFn("ntile", [lit(n).expr])

const offsetDefault = (d: ColumnOrValue | undefined): E.Expression => (d === undefined ? lit(null).expr : toExpr(d))

/**
 * The value of `c` `offset` rows before the current row in the window (`default`, itself a
 * value or a column of the current row, when there is no such row). With `ignoreNulls`, rows
 * whose value is null are not counted.
 *
 * @example
 * ```ts
 * import { F, Window } from "tributary-streaming"
 * const previous = F.lag("price", 1, 0).over(Window.partitionBy("item").orderBy("ts")).as("previous")
 * ```
 * @since 0.7.0
 */
export const lag = <const C extends ColumnOrName>(
  c: C,
  offset = 1,
  defaultValue?: ColumnOrValue,
  ignoreNulls = false
): Column<ValueOf<C>, `lag(${NameOf<C>}, ${number}, ${string})`> =>
  windowFn("lag", [toColumnExpr(c), lit(offset).expr, offsetDefault(defaultValue)], ignoreNulls)

/** The value of `c` `offset` rows after the current row in the window; see {@link lag}. @since 0.7.0 */
export const lead = <const C extends ColumnOrName>(
  c: C,
  offset = 1,
  defaultValue?: ColumnOrValue,
  ignoreNulls = false
): Column<ValueOf<C>, `lead(${NameOf<C>}, ${number}, ${string})`> =>
  windowFn("lead", [toColumnExpr(c), lit(offset).expr, offsetDefault(defaultValue)], ignoreNulls)

/**
 * The value of `c` at the `offset`-th row (from 1) of the window frame, null when the frame has
 * fewer rows; with `ignoreNulls`, the `offset`-th non-null value.
 *
 * @since 0.7.0
 */
export const nth_value = <const C extends ColumnOrName>(
  c: C,
  offset: number,
  ignoreNulls = false
): Column<ValueOf<C>, `nth_value(${NameOf<C>}, ${number})`> =>
  windowFn("nth_value", [toColumnExpr(c), lit(offset).expr], ignoreNulls)

// ---------------------------------------------------------------------------------------------
// Statistical aggregates and percentiles (issue #21)
// ---------------------------------------------------------------------------------------------

/**
 * The sample standard deviation of the non-null values, as Spark's `stddev` (an alias of
 * `stddev_samp`, named `stddev(x)`): a double, null over no values and over a single value (NaN
 * with `spark.sql.legacy.statisticalAggregate=true`).
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const spread = [F.stddev("amount"), F.stddev_pop("amount"), F.variance("amount")]
 * ```
 * @since 0.6.0
 */
export const stddev = <const C extends ColumnOrName>(c: C): Column<number | null, `stddev(${NameOf<C>})`> =>
  aggregate("stddev", [toColumnExpr(c)])

/** Spark's `std`: `stddev_samp` named `std(x)`. */
export const std = <const C extends ColumnOrName>(c: C): Column<number | null, `std(${NameOf<C>})`> =>
  aggregate("std", [toColumnExpr(c)])

/** The sample standard deviation (divides by n - 1); see `stddev`. */
export const stddev_samp = <const C extends ColumnOrName>(c: C): Column<number | null, `stddev_samp(${NameOf<C>})`> =>
  aggregate("stddev_samp", [toColumnExpr(c)])

/** The population standard deviation (divides by n); null over no values, 0 over one. */
export const stddev_pop = <const C extends ColumnOrName>(c: C): Column<number | null, `stddev_pop(${NameOf<C>})`> =>
  aggregate("stddev_pop", [toColumnExpr(c)])

/** Spark's `variance`: `var_samp` named `variance(x)`. */
export const variance = <const C extends ColumnOrName>(c: C): Column<number | null, `variance(${NameOf<C>})`> =>
  aggregate("variance", [toColumnExpr(c)])

/** The sample variance (divides by n - 1); null over one value, as `stddev_samp`. */
export const var_samp = <const C extends ColumnOrName>(c: C): Column<number | null, `var_samp(${NameOf<C>})`> =>
  aggregate("var_samp", [toColumnExpr(c)])

/** The population variance (divides by n). */
export const var_pop = <const C extends ColumnOrName>(c: C): Column<number | null, `var_pop(${NameOf<C>})`> =>
  aggregate("var_pop", [toColumnExpr(c)])

/**
 * The skewness of the non-null values, as Spark's `skewness`: `sqrt(n) * m3 / m2^1.5`; null over
 * no values and over constant values (NaN with `spark.sql.legacy.statisticalAggregate=true`).
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const shape = [F.skewness("latency"), F.kurtosis("latency")]
 * ```
 * @since 0.6.0
 */
export const skewness = <const C extends ColumnOrName>(c: C): Column<number | null, `skewness(${NameOf<C>})`> =>
  aggregate("skewness", [toColumnExpr(c)])

/** The excess kurtosis of the non-null values, as Spark's `kurtosis`: `n * m4 / m2^2 - 3`; see `skewness`. */
export const kurtosis = <const C extends ColumnOrName>(c: C): Column<number | null, `kurtosis(${NameOf<C>})`> =>
  aggregate("kurtosis", [toColumnExpr(c)])

/**
 * Pearson's correlation coefficient of two columns over the rows where both are non-null, as
 * Spark's `corr`: null over no pairs and over one pair; NaN when a column is constant.
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const stats = [F.corr("x", "y"), F.covar_samp("x", "y"), F.covar_pop("x", "y")]
 * ```
 * @since 0.6.0
 */
export const corr = <const A extends ColumnOrName, const B extends ColumnOrName>(
  a: A,
  b: B
): Column<number | null, `corr(${NameOf<A>}, ${NameOf<B>})`> => aggregate("corr", [toColumnExpr(a), toColumnExpr(b)])

/** The population covariance of two columns (pairs with a null are skipped). */
export const covar_pop = <const A extends ColumnOrName, const B extends ColumnOrName>(
  a: A,
  b: B
): Column<number | null, `covar_pop(${NameOf<A>}, ${NameOf<B>})`> =>
  aggregate("covar_pop", [toColumnExpr(a), toColumnExpr(b)])

/** The sample covariance of two columns; null over one pair. */
export const covar_samp = <const A extends ColumnOrName, const B extends ColumnOrName>(
  a: A,
  b: B
): Column<number | null, `covar_samp(${NameOf<A>}, ${NameOf<B>})`> =>
  aggregate("covar_samp", [toColumnExpr(a), toColumnExpr(b)])

/**
 * The value of `e` on the row with the largest `ord`, as Spark's `max_by`: rows whose `ord` is
 * null are skipped; on a tie the later row wins (Spark documents the choice as unspecified).
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const latest = F.max_by("status", "updatedAt").as("latestStatus")
 * ```
 * @since 0.6.0
 */
export const max_by = <const E extends ColumnOrName, const O extends ColumnOrName>(
  e: E,
  ord: O
): Column<ValueOf<E>, `max_by(${NameOf<E>}, ${NameOf<O>})`> => aggregate("max_by", [toColumnExpr(e), toColumnExpr(ord)])

/** The value of `e` on the row with the smallest `ord`; see `max_by`. */
export const min_by = <const E extends ColumnOrName, const O extends ColumnOrName>(
  e: E,
  ord: O
): Column<ValueOf<E>, `min_by(${NameOf<E>}, ${NameOf<O>})`> => aggregate("min_by", [toColumnExpr(e), toColumnExpr(ord)])

/** The exact median of a numeric column (Spark's `median`, `percentile(x, 0.5)`): a double. */
export const median = <const C extends ColumnOrName>(c: C): Column<number | null, `median(${NameOf<C>})`> =>
  aggregate("median", [toColumnExpr(c)])

/** A percentage: a number in [0.0, 1.0], an array of them, or a constant column. */
type Percentage = number | ReadonlyArray<number> | Column<unknown, string>

/** A percentage argument: a number is a double literal, an array is `array(...)` of them (as pyspark's `lit(list)`). */
const percentageExpr = (p: Percentage): E.Expression => {
  const double = (v: number): E.Expression => ({ _tag: "Literal", value: v, dataType: T.DoubleType })
  if (p instanceof Column) return p.expr
  if (typeof p === "number") return double(p)
  return { _tag: "ScalarFunction", name: "array", args: p.map(double), dataType: undefined }
}

type PercentileResult<P> = P extends ReadonlyArray<number> ? Array<number> : number

/**
 * The exact percentile(s) of a numeric column, as Spark's `percentile`: `percentage` in
 * [0.0, 1.0], or an array of them (the result is then an array); values between two ranks are
 * interpolated linearly. `frequency` weighs each row by a positive integral column. Named as
 * Spark names it: `percentile(x, 0.5, 1)`.
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const quartiles = F.percentile("latency", [0.25, 0.5, 0.75]).as("quartiles")
 * ```
 * @since 0.6.0
 */
export const percentile = <const C extends ColumnOrName, const P extends Percentage>(
  c: C,
  percentage: P,
  frequency?: ColumnOrName
): Column<PercentileResult<P> | null, `percentile(${NameOf<C>}, ${string})`> =>
  aggregate("percentile", [
    toColumnExpr(c),
    percentageExpr(percentage),
    frequency === undefined ? { _tag: "Literal", value: 1, dataType: T.LongType } : toColumnExpr(frequency)
  ])

/**
 * The approximate percentile(s) of a numeric, date or timestamp column, as Spark's
 * `percentile_approx`: the smallest value whose rank reaches `percentage` of the count, within
 * `1 / accuracy` of it (Greenwald–Khanna, as Spark's `QuantileSummaries`; exact while the group
 * has fewer values than `accuracy`). The result has the column's type (an array of it for an
 * array of percentages). Named `percentile_approx(x, 0.5, 10000)`.
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const p99 = F.percentile_approx("latency", 0.99, 1000).as("p99")
 * ```
 * @since 0.6.0
 */
export const percentile_approx = <const C extends ColumnOrName, const P extends Percentage>(
  c: C,
  percentage: P,
  accuracy: number = DEFAULT_ACCURACY
): Column<
  (P extends ReadonlyArray<number> ? Array<ValueOf<C>> : ValueOf<C>) | null,
  `percentile_approx(${NameOf<C>}, ${string})`
> => aggregate("percentile_approx", [toColumnExpr(c), percentageExpr(percentage), lit(accuracy).expr])

/** Spark's `approx_percentile`: `percentile_approx` under its other name. */
export const approx_percentile = <const C extends ColumnOrName, const P extends Percentage>(
  c: C,
  percentage: P,
  accuracy: number = DEFAULT_ACCURACY
): Column<
  (P extends ReadonlyArray<number> ? Array<ValueOf<C>> : ValueOf<C>) | null,
  `approx_percentile(${NameOf<C>}, ${string})`
> => aggregate("approx_percentile", [toColumnExpr(c), percentageExpr(percentage), lit(accuracy).expr])

/** Spark's `ApproximatePercentile.DEFAULT_PERCENTILE_ACCURACY`. */
const DEFAULT_ACCURACY = 10000

// ---------------------------------------------------------------------------------------------
// User-defined functions (issue #21)
// ---------------------------------------------------------------------------------------------

/**
 * A JavaScript function usable as a column expression: call it with columns (or column names)
 * to get a `Column`. Made by `F.udf`. As Spark's `UserDefinedFunction`, `withName` names its
 * calls (`UDF(a)` otherwise), `asNondeterministic` keeps the optimizer from merging or moving
 * its calls, and `asNonNullable` declares that it never returns null.
 *
 * @since 0.6.0
 */
export interface UserDefinedFunction<Args extends ReadonlyArray<unknown>, R> {
  (...columns: { readonly [K in keyof Args]: ColumnOrName }): Column<R, string>
  readonly returnType: T.DataType | undefined
  readonly name: string
  readonly deterministic: boolean
  readonly nullable: boolean
  withName(name: string): UserDefinedFunction<Args, R>
  asNondeterministic(): UserDefinedFunction<Args, R>
  asNonNullable(): UserDefinedFunction<Args, R>
}

let nextUdfId = 1

const makeUdf = <Args extends ReadonlyArray<unknown>, R>(
  f: (...args: Args) => R,
  returnType: T.DataType | undefined,
  typeName: string,
  name: string,
  deterministic: boolean,
  nullable: boolean
): UserDefinedFunction<Args, R> => {
  const id = nextUdfId++
  const def: E.UserDefinedFunctionDef = {
    id,
    name,
    deterministic,
    resolve: (argTypes, args) =>
      returnType === undefined
        ? { _tag: "Invalid", message: `F.udf: ${JSON.stringify(typeName)} is not a Spark type name.` }
        : argTypes.length !== f.length && f.length > 0
          ? {
              _tag: "Invalid",
              message: `[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The \`${name}\` requires ${f.length} parameters but the actual number is ${args.length}.`
            }
          : { _tag: "Resolved", resultType: returnType, nullable, castArgsTo: args.map(() => undefined) },
    compile: (args, argTypes, resultType) => {
      // The function sees external values (a Date for a timestamp, an object for a struct) and
      // returns one; undefined is null.
      const toJs = argTypes.map(toExternal)
      const fromJs = toInternal(resultType)
      const n = args.length
      const call = f as unknown as (...xs: Array<unknown>) => unknown
      // A throw from the function fails the query with Spark's FAILED_EXECUTE_UDF
      // (QueryExecutionErrors.failedExecuteUserDefinedFunctionError, as ScalaUDF wraps it).
      const signature = argTypes.map(T.simpleString).join(", ")
      // Spark's toSQLId quoting of the name (a backquote doubled)
      const quotedName = name.replaceAll("\u0060", "\u0060\u0060")
      const failed = (e: unknown) =>
        expressionError(
          "FAILED_EXECUTE_UDF",
          "39000",
          `User defined function (\`${quotedName}\`: (${signature}) => ${T.simpleString(resultType)}) failed due to: ${String(e)}.`,
          e
        )
      return (row) => {
        const xs = new Array<unknown>(n)
        for (let i = 0; i < n; i++) xs[i] = toJs[i](args[i](row))
        let r: unknown
        try {
          r = call(...xs)
        } catch (e) {
          throw failed(e)
        }
        return r === undefined || r === null ? null : fromJs(r)
      }
    }
  }
  const apply = (...columns: ReadonlyArray<ColumnOrName>): Column<R, string> =>
    new Column({ _tag: "ScalarFunction", name, args: columns.map(toColumnExpr), dataType: undefined, udf: def })
  return Object.assign(apply, {
    returnType,
    deterministic,
    nullable,
    withName: (n: string) => makeUdf(f, returnType, typeName, n, deterministic, nullable),
    asNondeterministic: () => makeUdf(f, returnType, typeName, name, false, nullable),
    asNonNullable: () => makeUdf(f, returnType, typeName, name, deterministic, false)
  }) as unknown as UserDefinedFunction<Args, R>
}

/**
 * A user-defined function from a typed JavaScript function and its Spark return type (a
 * `DataType` or a type name such as `"int"` or `"array<string>"`), as pyspark's
 * `udf(f, returnType)`. Its calls are named `UDF(a)` (or by `withName`). The function gets each
 * argument as a JavaScript value (null stays null, timestamps are `Date`s, structs objects); it
 * runs in the local engine only: over Spark Connect the query is refused with an `AnalysisError`
 * (JavaScript cannot run on the JVM).
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const initials = F.udf((name: string | null) => (name === null ? null : name.slice(0, 1)), "string")
 * const columns = [initials("name").as("initial"), initials.withName("first")(F.col("name"))]
 * ```
 * @since 0.6.0
 */
// biome-ignore lint/suspicious/noExplicitAny: the parameters of any function type must be accepted
export const udf = <const Args extends ReadonlyArray<any>, R>(
  f: (...args: Args) => R,
  returnType: T.DataType | string
): UserDefinedFunction<Args, R> =>
  makeUdf(
    f,
    typeof returnType === "string" ? T.parseTypeString(returnType) : returnType,
    typeof returnType === "string" ? returnType : T.simpleString(returnType),
    "UDF",
    true,
    true
  )

// ---------------------------------------------------------------------------------------------
// monotonically_increasing_id and arrays_zip (issue #21)
// ---------------------------------------------------------------------------------------------

/**
 * Spark's `monotonically_increasing_id()`: a unique, increasing bigint per row, the partition
 * index shifted left by 33 bits plus the row's position in its partition. The local engine runs
 * a batch as a single partition, so the ids are 0, 1, 2, … in row order (Spark's differ when it
 * splits the input). Not allowed in streaming queries, as in Spark.
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const withId = F.monotonically_increasing_id().as("id")
 * ```
 * @since 0.6.0
 */
export const monotonically_increasing_id = (): Column<number, "monotonically_increasing_id()"> =>
  new Column({ _tag: "ScalarFunction", name: "monotonically_increasing_id", args: [], dataType: undefined })

/**
 * Spark's `arrays_zip(a, b, …)`: an array of structs whose i-th struct holds the i-th elements
 * of the arrays (null past the end of a shorter one); null when any array is null. The struct's
 * fields are named after the argument columns (`arrays_zip("xs", "ys")` has fields `xs` and
 * `ys`), by position (`"0"`, `"1"`) for other expressions.
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const pairs = F.explode(F.arrays_zip("names", "scores")).as("pair")
 * ```
 * @since 0.6.0
 */
export const arrays_zip = (...columns: ReadonlyArray<ColumnOrName>): Column<Array<Record<string, unknown>>, string> =>
  new Column({ _tag: "ScalarFunction", name: "arrays_zip", args: columns.map(toColumnExpr), dataType: undefined })
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
