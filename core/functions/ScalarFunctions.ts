/**
 * The scalar functions of `F` (string, math, date and time, collection, null handling), each a
 * thin, typed constructor of a `ScalarFunction` expression resolved through the registry, with
 * the signature of PySpark's `pyspark.sql.functions`: column arguments take a `Column` or a
 * column name, literal arguments (patterns, positions, formats) take plain values.
 *
 * Default column names follow Spark: `F.upper("name")` is `upper(name)`, `F.round("x")` is
 * `round(x, 0)` (Spark adds the default scale), `F.sqrt("x")` is `SQRT(x)` (Spark's math
 * expressions print upper-case names).
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const cleaned = [
 *   F.upper(F.trim("name")).as("name"),
 *   F.to_date("day", "yyyy-MM-dd").as("day"),
 *   F.round(F.col("amount").multiply(1.2), 2).as("gross"),
 *   F.coalesce("nickname", "name"),
 *   F.split("tags", ",")
 * ]
 * ```
 * @since 0.1.0
 */
import { Column, type ColumnOrName, type ColumnOrValue, callNamed, lit, toColumnExpr, toExpr } from "../Column.ts"
import * as T from "../DataType.ts"
import type * as E from "../Expression.ts"
import { newExprId } from "../Expression.ts"

/** A call of any registered function by name, with column (or column-name) arguments. */
export const callByName = <A = unknown>(name: string, columns: ReadonlyArray<ColumnOrName>): Column<A> =>
  callNamed<A>(name, columns)

/** An argument that is a column, a column name, or a number literal (PySpark's `Union[ColumnOrName, int]`). */
export type ColumnOrNumber = ColumnOrName | number

const c = (x: ColumnOrName): E.Expression => toColumnExpr(x)
const v = (x: ColumnOrValue): E.Expression => toExpr(x)
/** A column, a column name, or a number literal. */
const cn = (x: ColumnOrNumber): E.Expression => (typeof x === "number" ? lit(x).expr : toColumnExpr(x))
/** A value literal or a column (a string is a literal, as PySpark's `Any` parameters). */
const cv = (x: ColumnOrValue): E.Expression => toExpr(x)
const fn = <A>(name: string, args: ReadonlyArray<E.Expression>): Column<A> =>
  new Column({ _tag: "ScalarFunction", name, args, dataType: undefined })
const flat = (cols: ReadonlyArray<ColumnOrName | ReadonlyArray<ColumnOrName>>): ReadonlyArray<ColumnOrName> =>
  cols.flatMap((x) => (Array.isArray(x) ? (x as ReadonlyArray<ColumnOrName>) : [x as ColumnOrName]))
const doubleLit = (x: number): E.Expression => ({ _tag: "Literal", value: x, dataType: T.DoubleType })

// ---------------------------------------------------------------------------------------------
// Strings
// ---------------------------------------------------------------------------------------------

/** Upper case. */
export const upper = (col: ColumnOrName): Column<string> => fn("upper", [c(col)])
/** Lower case. */
export const lower = (col: ColumnOrName): Column<string> => fn("lower", [c(col)])
/** Each word's first letter upper case, the rest lower case (`initcap('sPark sql')` is `Spark Sql`). */
export const initcap = (col: ColumnOrName): Column<string> => fn("initcap", [c(col)])
/** Characters of a string (code points), bytes of a binary. */
export const length = (col: ColumnOrName): Column<number> => fn("length", [c(col)])
export const char_length = (col: ColumnOrName): Column<number> => fn("char_length", [c(col)])
export const character_length = (col: ColumnOrName): Column<number> => fn("character_length", [c(col)])
/** Bytes of the UTF-8 encoding. */
export const octet_length = (col: ColumnOrName): Column<number> => fn("octet_length", [c(col)])
export const bit_length = (col: ColumnOrName): Column<number> => fn("bit_length", [c(col)])
/** Removes spaces (or the characters of `trimStr`) from both ends. */
export const trim = (col: ColumnOrName, trimStr?: string | Column): Column<string> =>
  fn("trim", trimStr === undefined ? [c(col)] : [c(col), v(trimStr)])
export const btrim = (col: ColumnOrName, trimStr?: string | Column): Column<string> =>
  fn("btrim", trimStr === undefined ? [c(col)] : [c(col), v(trimStr)])
export const ltrim = (col: ColumnOrName, trimStr?: string | Column): Column<string> =>
  fn("ltrim", trimStr === undefined ? [c(col)] : [c(col), v(trimStr)])
export const rtrim = (col: ColumnOrName, trimStr?: string | Column): Column<string> =>
  fn("rtrim", trimStr === undefined ? [c(col)] : [c(col), v(trimStr)])
/** Left-pads to `len` characters with `pad` (truncates when longer). */
export const lpad = (col: ColumnOrName, len: number | Column, pad: string | Column): Column<string> =>
  fn("lpad", [c(col), v(len), v(pad)])
export const rpad = (col: ColumnOrName, len: number | Column, pad: string | Column): Column<string> =>
  fn("rpad", [c(col), v(len), v(pad)])
/** A string reversed, or an array in reverse order. */
export const reverse = <A = string>(col: ColumnOrName): Column<A> => fn("reverse", [c(col)])
/** 1-based position of `substr` in `str`, 0 when absent. */
export const instr = (str: ColumnOrName, substr: string | Column): Column<number> => fn("instr", [c(str), v(substr)])
/** 1-based position of `substr` in `str` at or after `pos`, 0 when absent. */
export const locate = (substr: string | Column, str: ColumnOrName, pos = 1): Column<number> =>
  fn("locate", [v(substr), c(str), lit(pos).expr])
export const repeat = (col: ColumnOrName, n: number | Column): Column<string> => fn("repeat", [c(col), v(n)])
/** Replaces each character of `matching` by the character at the same place in `replace` (deletes it when `replace` is shorter). */
export const translate = (srcCol: ColumnOrName, matching: string, replace: string): Column<string> =>
  fn("translate", [c(srcCol), v(matching), v(replace)])
/** Code point of the first character. */
export const ascii = (col: ColumnOrName): Column<number> => fn("ascii", [c(col)])
/** The character of a code (`n % 256`). */
export const char = (col: ColumnOrName): Column<string> => fn("char", [c(col)])
export const chr = (col: ColumnOrName): Column<string> => fn("chr", [c(col)])
export const base64 = (col: ColumnOrName): Column<string> => fn("base64", [c(col)])
export const unbase64 = (col: ColumnOrName): Column<Uint8Array> => fn("unbase64", [c(col)])
/** Hexadecimal of a number (two's complement), a string's UTF-8 bytes or a binary. */
export const hex = (col: ColumnOrName): Column<string> => fn("hex", [c(col)])
export const unhex = (col: ColumnOrName): Column<Uint8Array> => fn("unhex", [c(col)])
/** Concatenates strings (null when any is null), or arrays when all arguments are arrays. */
export const concat = <A = string>(...cols: ReadonlyArray<ColumnOrName>): Column<A> => fn("concat", cols.map(c))
/** Concatenates with a separator, skipping nulls; arguments may be strings or arrays of strings. */
export const concat_ws = (sep: string, ...cols: ReadonlyArray<ColumnOrName>): Column<string> =>
  fn("concat_ws", [lit(sep).expr, ...cols.map(c)])
/** Substring from 1-based `pos` (negative counts from the end) of `len` characters. */
export const substring = (str: ColumnOrName, pos: ColumnOrNumber, len: ColumnOrNumber): Column<string> =>
  fn("substring", [
    c(str),
    typeof pos === "number" ? lit(pos).expr : c(pos),
    typeof len === "number" ? lit(len).expr : c(len)
  ])
export const substr = (str: ColumnOrName, pos: ColumnOrNumber, len?: ColumnOrNumber): Column<string> =>
  fn("substr", len === undefined ? [c(str), cn(pos)] : [c(str), cn(pos), cn(len)])
/** The leftmost `len` characters. */
export const left = (str: ColumnOrName, len: ColumnOrNumber): Column<string> => fn("left", [c(str), cn(len)])
/** The rightmost `len` characters. */
export const right = (str: ColumnOrName, len: ColumnOrNumber): Column<string> => fn("right", [c(str), cn(len)])
/** The part before the `count`-th `delim` (after the `-count`-th from the end when negative). */
export const substring_index = (str: ColumnOrName, delim: string, count: number): Column<string> =>
  fn("substring_index", [c(str), v(delim), v(count)])
export const levenshtein = (l: ColumnOrName, r: ColumnOrName): Column<number> => fn("levenshtein", [c(l), c(r)])
/** Whether `str` starts with `prefix` (both columns, as in PySpark). */
export const startswith = (str: ColumnOrName, prefix: ColumnOrName): Column<boolean> =>
  fn("startswith", [c(str), c(prefix)])
export const endswith = (str: ColumnOrName, suffix: ColumnOrName): Column<boolean> =>
  fn("endswith", [c(str), c(suffix)])
export const contains = (left: ColumnOrName, right: ColumnOrName): Column<boolean> =>
  fn("contains", [c(left), c(right)])
/** Splits around matches of a Java regex; `limit > 0` caps the number of parts. */
export const split = (str: ColumnOrName, pattern: string, limit = -1): Column<Array<string>> =>
  fn("split", [c(str), v(pattern), lit(limit).expr])
/** Replaces every match of a Java regex; `$1` and `${name}` refer to groups. */
export const regexp_replace = (
  str: ColumnOrName,
  pattern: string | Column,
  replacement: string | Column
): Column<string> => fn("regexp_replace", [c(str), v(pattern), v(replacement), lit(1).expr])
/** Group `idx` of the first match of a Java regex; `""` when nothing matches. */
export const regexp_extract = (str: ColumnOrName, pattern: string, idx: number): Column<string> =>
  fn("regexp_extract", [c(str), v(pattern), v(idx)])
/** Group `idx` of every match. */
export const regexp_extract_all = (
  str: ColumnOrName,
  pattern: string | Column,
  idx: number | Column = 1
): Column<Array<string>> => fn("regexp_extract_all", [c(str), v(pattern), v(idx)])
/** Whether a Java regex matches somewhere in `str`. */
export const rlike = (str: ColumnOrName, pattern: string | Column): Column<boolean> => fn("rlike", [c(str), v(pattern)])
export const regexp = (str: ColumnOrName, pattern: string | Column): Column<boolean> =>
  fn("regexp", [c(str), v(pattern)])
export const regexp_like = (str: ColumnOrName, pattern: string | Column): Column<boolean> =>
  fn("regexp_like", [c(str), v(pattern)])
/** SQL LIKE: `_` one character, `%` any; `escapeChar` (default `\`) quotes them. */
export const like = (str: ColumnOrName, pattern: string | Column, escapeChar?: string): Column<boolean> =>
  fn("like", escapeChar === undefined ? [c(str), v(pattern)] : [c(str), v(pattern), v(escapeChar)])
/** Case-insensitive LIKE. */
export const ilike = (str: ColumnOrName, pattern: string | Column, escapeChar?: string): Column<boolean> =>
  fn("ilike", escapeChar === undefined ? [c(str), v(pattern)] : [c(str), v(pattern), v(escapeChar)])

// ---------------------------------------------------------------------------------------------
// Math
// ---------------------------------------------------------------------------------------------

const unaryMath =
  (name: string) =>
  (col: ColumnOrName): Column<number> =>
    fn(name, [c(col)])

/** Absolute value, same type as the input. */
export const abs: (col: ColumnOrName) => Column<number> = unaryMath("abs")
export const negative: (col: ColumnOrName) => Column<number> = unaryMath("negative")
export const positive: (col: ColumnOrName) => Column<number> = unaryMath("positive")
export const sqrt: (col: ColumnOrName) => Column<number> = unaryMath("SQRT")
export const cbrt: (col: ColumnOrName) => Column<number> = unaryMath("CBRT")
export const exp: (col: ColumnOrName) => Column<number> = unaryMath("EXP")
export const expm1: (col: ColumnOrName) => Column<number> = unaryMath("EXPM1")
/** Natural logarithm; null for values `<= 0`. */
export const ln: (col: ColumnOrName) => Column<number> = unaryMath("ln")
export const log10: (col: ColumnOrName) => Column<number> = unaryMath("LOG10")
export const log2: (col: ColumnOrName) => Column<number> = unaryMath("LOG2")
export const log1p: (col: ColumnOrName) => Column<number> = unaryMath("LOG1P")
export const sin: (col: ColumnOrName) => Column<number> = unaryMath("SIN")
export const cos: (col: ColumnOrName) => Column<number> = unaryMath("COS")
export const tan: (col: ColumnOrName) => Column<number> = unaryMath("TAN")
export const asin: (col: ColumnOrName) => Column<number> = unaryMath("ASIN")
export const acos: (col: ColumnOrName) => Column<number> = unaryMath("ACOS")
export const atan: (col: ColumnOrName) => Column<number> = unaryMath("ATAN")
export const sinh: (col: ColumnOrName) => Column<number> = unaryMath("SINH")
export const cosh: (col: ColumnOrName) => Column<number> = unaryMath("COSH")
export const tanh: (col: ColumnOrName) => Column<number> = unaryMath("TANH")
export const asinh: (col: ColumnOrName) => Column<number> = unaryMath("ASINH")
export const acosh: (col: ColumnOrName) => Column<number> = unaryMath("ACOSH")
export const atanh: (col: ColumnOrName) => Column<number> = unaryMath("ATANH")
export const cot: (col: ColumnOrName) => Column<number> = unaryMath("COT")
export const sec: (col: ColumnOrName) => Column<number> = unaryMath("SEC")
export const csc: (col: ColumnOrName) => Column<number> = unaryMath("CSC")
export const degrees: (col: ColumnOrName) => Column<number> = unaryMath("DEGREES")
export const radians: (col: ColumnOrName) => Column<number> = unaryMath("RADIANS")
export const signum: (col: ColumnOrName) => Column<number> = unaryMath("SIGNUM")
export const sign: (col: ColumnOrName) => Column<number> = unaryMath("sign")
export const rint: (col: ColumnOrName) => Column<number> = unaryMath("rint")
/** Rounds down to a bigint. */
export const floor: (col: ColumnOrName) => Column<number> = unaryMath("FLOOR")
/** Rounds up to a bigint. */
export const ceil: (col: ColumnOrName) => Column<number> = unaryMath("CEIL")
export const ceiling: (col: ColumnOrName) => Column<number> = unaryMath("ceiling")
export const factorial: (col: ColumnOrName) => Column<number> = unaryMath("factorial")
export const bin = (col: ColumnOrName): Column<string> => fn("bin", [c(col)])

/** `log(col)` is the natural logarithm (`ln`); `log(base, col)` the logarithm in `base`. */
export function log(col: ColumnOrName): Column<number>
export function log(base: number, col: ColumnOrName): Column<number>
export function log(arg1: ColumnOrName | number, arg2?: ColumnOrName): Column<number> {
  if (arg2 === undefined) return fn("ln", [c(arg1 as ColumnOrName)])
  return fn("LOG", [typeof arg1 === "number" ? doubleLit(arg1) : c(arg1), c(arg2)])
}

/** `col1` to the power `col2`, a double. */
export const pow = (col1: ColumnOrNumber, col2: ColumnOrNumber): Column<number> => fn("POWER", [cn(col1), cn(col2)])
export const power = pow
export const atan2 = (col1: ColumnOrNumber, col2: ColumnOrNumber): Column<number> => fn("ATAN2", [cn(col1), cn(col2)])
export const hypot = (col1: ColumnOrNumber, col2: ColumnOrNumber): Column<number> => fn("HYPOT", [cn(col1), cn(col2)])
/** Rounds to `scale` decimal places, half up; keeps the input type. */
export const round = (col: ColumnOrName, scale = 0): Column<number> => fn("round", [c(col), lit(scale).expr])
/** Rounds to `scale` decimal places, half even. */
export const bround = (col: ColumnOrName, scale = 0): Column<number> => fn("bround", [c(col), lit(scale).expr])
/** Positive remainder. */
export const pmod = (dividend: ColumnOrNumber, divisor: ColumnOrNumber): Column<number> =>
  fn("pmod", [cn(dividend), cn(divisor)])
/** Whether a double is NaN (false for null). */
export const isnan = (col: ColumnOrName): Column<boolean> => fn("isnan", [c(col)])
/** `col1` unless it is NaN, then `col2`. */
export const nanvl = (col1: ColumnOrName, col2: ColumnOrName): Column<number> => fn("nanvl", [c(col1), c(col2)])
/** The largest non-null argument. */
export const greatest = <A = unknown>(...cols: ReadonlyArray<ColumnOrName>): Column<A> => fn("greatest", cols.map(c))
/** The smallest non-null argument. */
export const least = <A = unknown>(...cols: ReadonlyArray<ColumnOrName>): Column<A> => fn("least", cols.map(c))
/** Euler's number. */
export const e = (): Column<number> => fn("E", [])
export const pi = (): Column<number> => fn("PI", [])

// ---------------------------------------------------------------------------------------------
// Date and time
// ---------------------------------------------------------------------------------------------

/**
 * Today's date (UTC) at the query's current timestamp: the batch timestamp in a streaming
 * query, as Spark's `current_date()`.
 */
export const current_date = (): Column<Date> =>
  new Column({
    _tag: "Alias",
    child: { _tag: "Cast", child: { _tag: "CurrentTimestamp" }, to: T.DateType },
    name: "current_date()",
    exprId: newExprId()
  })
export const curdate = current_date

const dateField =
  (name: string) =>
  (col: ColumnOrName): Column<number> =>
    fn(name, [c(col)])

export const year: (col: ColumnOrName) => Column<number> = dateField("year")
export const quarter: (col: ColumnOrName) => Column<number> = dateField("quarter")
export const month: (col: ColumnOrName) => Column<number> = dateField("month")
/** 1 = Sunday … 7 = Saturday. */
export const dayofweek: (col: ColumnOrName) => Column<number> = dateField("dayofweek")
export const dayofmonth: (col: ColumnOrName) => Column<number> = dateField("dayofmonth")
export const day: (col: ColumnOrName) => Column<number> = dateField("day")
export const dayofyear: (col: ColumnOrName) => Column<number> = dateField("dayofyear")
/** 0 = Monday … 6 = Sunday. */
export const weekday: (col: ColumnOrName) => Column<number> = dateField("weekday")
/** ISO-8601 week number. */
export const weekofyear: (col: ColumnOrName) => Column<number> = dateField("weekofyear")
export const hour: (col: ColumnOrName) => Column<number> = dateField("hour")
export const minute: (col: ColumnOrName) => Column<number> = dateField("minute")
export const second: (col: ColumnOrName) => Column<number> = dateField("second")
/** Three-letter day name (`Mon`). */
export const dayname = (col: ColumnOrName): Column<string> => fn("dayname", [c(col)])
/** Three-letter month name (`Jan`). */
export const monthname = (col: ColumnOrName): Column<string> => fn("monthname", [c(col)])

/** `days` days after `start`. */
export const date_add = (start: ColumnOrName, days: ColumnOrNumber): Column<Date> =>
  fn("date_add", [c(start), cn(days)])
export const dateadd = (start: ColumnOrName, days: ColumnOrNumber): Column<Date> => fn("dateadd", [c(start), cn(days)])
export const date_sub = (start: ColumnOrName, days: ColumnOrNumber): Column<Date> =>
  fn("date_sub", [c(start), cn(days)])
/** Days from `start` to `end`. */
export const datediff = (end: ColumnOrName, start: ColumnOrName): Column<number> => fn("datediff", [c(end), c(start)])
export const date_diff = (end: ColumnOrName, start: ColumnOrName): Column<number> => fn("date_diff", [c(end), c(start)])
/** `months` months after `start`, the day clamped to the month's length. */
export const add_months = (start: ColumnOrName, months: ColumnOrNumber): Column<Date> =>
  fn("add_months", [c(start), cn(months)])
/**
 * `timestampadd(unit, quantity, ts)`: `ts` moved by `quantity` units, as Spark's `timestampadd`
 * (`dateadd`): `YEAR`, `QUARTER`, `MONTH`, `WEEK`, `DAY`, `DAYOFYEAR`, `HOUR`, `MINUTE`,
 * `SECOND`, `MILLISECOND`, `MICROSECOND` (months clamp the day to the month's end).
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const due = F.timestampadd("HOUR", 2, "ts").as("due")
 * ```
 * @since 0.7.0
 */
export const timestampadd = (unit: DatetimeUnit, quantity: ColumnOrNumber, ts: ColumnOrName): Column<Date> =>
  fn("timestampadd", [lit(unit.toUpperCase()).expr, cn(quantity), c(ts)])
/**
 * `timestampdiff(unit, start, end)`: whole `unit`s from `start` to `end` (toward zero), as
 * Spark's `timestampdiff` (`datediff(unit, …)`).
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const minutes = F.timestampdiff("MINUTE", "opened", "closed").as("minutes")
 * ```
 * @since 0.7.0
 */
export const timestampdiff = (unit: DatetimeUnit, start: ColumnOrName, end: ColumnOrName): Column<number> =>
  fn("timestampdiff", [lit(unit.toUpperCase()).expr, c(start), c(end)])
/** The units of `timestampadd` and `timestampdiff` (`DAYOFYEAR` only for `timestampadd`), in any letter case. */
export type DatetimeUnit =
  | "YEAR"
  | "QUARTER"
  | "MONTH"
  | "WEEK"
  | "DAY"
  | "DAYOFYEAR"
  | "HOUR"
  | "MINUTE"
  | "SECOND"
  | "MILLISECOND"
  | "MICROSECOND"
  | Lowercase<
      | "YEAR"
      | "QUARTER"
      | "MONTH"
      | "WEEK"
      | "DAY"
      | "DAYOFYEAR"
      | "HOUR"
      | "MINUTE"
      | "SECOND"
      | "MILLISECOND"
      | "MICROSECOND"
    >
/** Months between two timestamps (31-day months for the fraction), rounded to 8 digits unless `roundOff` is false. */
export const months_between = (date1: ColumnOrName, date2: ColumnOrName, roundOff = true): Column<number> =>
  fn("months_between", [c(date1), c(date2), lit(roundOff).expr])
/** A date from a string (Spark's cast rules, or a datetime `format` such as `"dd/MM/yyyy"`). */
export const to_date = (col: ColumnOrName, format?: string): Column<Date> =>
  fn("to_date", format === undefined ? [c(col)] : [c(col), v(format)])
/** A timestamp from a string (Spark's cast rules, or a datetime `format`). */
export const to_timestamp = (col: ColumnOrName, format?: string): Column<Date> =>
  fn("to_timestamp", format === undefined ? [c(col)] : [c(col), v(format)])
/** Seconds since the epoch; without arguments, of the current timestamp. */
export const unix_timestamp = (timestamp?: ColumnOrName, format = "yyyy-MM-dd HH:mm:ss"): Column<number> =>
  fn("unix_timestamp", [timestamp === undefined ? { _tag: "CurrentTimestamp" } : c(timestamp), v(format)])
/** Seconds since the epoch as a string in `format`. */
export const from_unixtime = (timestamp: ColumnOrName, format = "yyyy-MM-dd HH:mm:ss"): Column<string> =>
  fn("from_unixtime", [c(timestamp), v(format)])
/** A timestamp formatted with a Spark datetime pattern. */
export const date_format = (date: ColumnOrName, format: string): Column<string> =>
  fn("date_format", [c(date), v(format)])
/** A timestamp truncated to `format` (`year`, `quarter`, `month`, `week`, `day`, `hour`, `minute`, `second`). */
export const date_trunc = (format: string, timestamp: ColumnOrName): Column<Date> =>
  fn("date_trunc", [v(format), c(timestamp)])
/** A date truncated to `format` (`year`, `quarter`, `month`, `week`). */
export const trunc = (date: ColumnOrName, format: string): Column<Date> => fn("trunc", [c(date), v(format)])
export const last_day = (date: ColumnOrName): Column<Date> => fn("last_day", [c(date)])
/** The first date after `date` that falls on `dayOfWeek` (`"Mon"`, `"Tuesday"`, …). */
export const next_day = (date: ColumnOrName, dayOfWeek: string): Column<Date> => fn("next_day", [c(date), v(dayOfWeek)])
export const make_date = (year: ColumnOrName, month: ColumnOrName, day: ColumnOrName): Column<Date> =>
  fn("make_date", [c(year), c(month), c(day)])
/** A timestamp from seconds since the epoch (fractions kept to the millisecond). */
export const timestamp_seconds = (col: ColumnOrName): Column<Date> => fn("timestamp_seconds", [c(col)])
export const timestamp_millis = (col: ColumnOrName): Column<Date> => fn("timestamp_millis", [c(col)])
export const timestamp_micros = (col: ColumnOrName): Column<Date> => fn("timestamp_micros", [c(col)])
export const unix_seconds = (col: ColumnOrName): Column<number> => fn("unix_seconds", [c(col)])
export const unix_millis = (col: ColumnOrName): Column<number> => fn("unix_millis", [c(col)])
export const unix_micros = (col: ColumnOrName): Column<number> => fn("unix_micros", [c(col)])
export const unix_date = (col: ColumnOrName): Column<number> => fn("unix_date", [c(col)])
export const date_from_unix_date = (col: ColumnOrName): Column<Date> => fn("date_from_unix_date", [c(col)])
/** Reads a UTC instant as wall-clock time in `tz`. */
export const from_utc_timestamp = (timestamp: ColumnOrName, tz: string | Column): Column<Date> =>
  fn("from_utc_timestamp", [c(timestamp), v(tz)])
/** Reads wall-clock time in `tz` as a UTC instant. */
export const to_utc_timestamp = (timestamp: ColumnOrName, tz: string | Column): Column<Date> =>
  fn("to_utc_timestamp", [c(timestamp), v(tz)])

// ---------------------------------------------------------------------------------------------
// Collections
// ---------------------------------------------------------------------------------------------

/** An array of the arguments (cast to their common type). */
export const array = <A = unknown>(
  ...cols: ReadonlyArray<ColumnOrName | ReadonlyArray<ColumnOrName>>
): Column<Array<A>> => fn("array", flat(cols).map(c))
/** A map from alternating keys and values (`create_map("k", "v")`); the column is named `map(k, v)`. */
export const create_map = <K = unknown, V = unknown>(
  ...cols: ReadonlyArray<ColumnOrName | ReadonlyArray<ColumnOrName>>
): Column<Map<K, V>> => fn("map", flat(cols).map(c))
/** A struct of the arguments, its fields named after them. */
export const struct = <A = Record<string, unknown>>(
  ...cols: ReadonlyArray<ColumnOrName | ReadonlyArray<ColumnOrName>>
): Column<A> => fn("struct", flat(cols).map(c))
/** A struct from alternating name literals and values. */
export const named_struct = <A = Record<string, unknown>>(...cols: ReadonlyArray<ColumnOrName>): Column<A> =>
  fn("named_struct", cols.map(c))
/** Elements of an array or entries of a map; -1 for null. */
export const size = (col: ColumnOrName): Column<number> => fn("size", [c(col)])
export const cardinality = (col: ColumnOrName): Column<number> => fn("cardinality", [c(col)])
/** Elements of an array; null for null. */
export const array_size = (col: ColumnOrName): Column<number> => fn("array_size", [c(col)])
/** Whether the array contains `value` (null when it does not but has a null). */
export const array_contains = (col: ColumnOrName, value: ColumnOrValue): Column<boolean> =>
  fn("array_contains", [c(col), cv(value)])
/** 1-based position of `value`, 0 when absent. */
export const array_position = (col: ColumnOrName, value: ColumnOrValue): Column<number> =>
  fn("array_position", [c(col), cv(value)])
export const array_remove = <A = unknown>(col: ColumnOrName, element: ColumnOrValue): Column<Array<A>> =>
  fn("array_remove", [c(col), cv(element)])
/** The element at a 1-based index (negative from the end) of an array, or the value of a map key. */
export const element_at = <A = unknown>(col: ColumnOrName, extraction: ColumnOrValue): Column<A> =>
  fn("element_at", [c(col), cv(extraction)])
/**
 * `get(array, index)`: the element at a 0-based index (null outside the array), what Spark reads
 * for `a[i]`; of a map, the value of a key (`m['k']`).
 *
 * @since 0.7.0
 */
export const get = <A = unknown>(col: ColumnOrName, index: ColumnOrValue): Column<A> => fn("get", [c(col), cv(index)])
/** Sorts an array; nulls first when ascending, last when descending. */
export const sort_array = <A = unknown>(col: ColumnOrName, asc = true): Column<Array<A>> =>
  fn("sort_array", [c(col), lit(asc).expr])
/** Sorts an array ascending, nulls last. */
export const array_sort = <A = unknown>(col: ColumnOrName): Column<Array<A>> => fn("array_sort", [c(col)])
export const array_distinct = <A = unknown>(col: ColumnOrName): Column<Array<A>> => fn("array_distinct", [c(col)])
export const array_union = <A = unknown>(col1: ColumnOrName, col2: ColumnOrName): Column<Array<A>> =>
  fn("array_union", [c(col1), c(col2)])
export const array_intersect = <A = unknown>(col1: ColumnOrName, col2: ColumnOrName): Column<Array<A>> =>
  fn("array_intersect", [c(col1), c(col2)])
export const array_except = <A = unknown>(col1: ColumnOrName, col2: ColumnOrName): Column<Array<A>> =>
  fn("array_except", [c(col1), c(col2)])
export const arrays_overlap = (a1: ColumnOrName, a2: ColumnOrName): Column<boolean> =>
  fn("arrays_overlap", [c(a1), c(a2)])
export const array_max = <A = unknown>(col: ColumnOrName): Column<A> => fn("array_max", [c(col)])
export const array_min = <A = unknown>(col: ColumnOrName): Column<A> => fn("array_min", [c(col)])
/** Joins an array of strings with `delimiter`, skipping nulls unless `nullReplacement` is given. */
export const array_join = (col: ColumnOrName, delimiter: string, nullReplacement?: string): Column<string> =>
  fn("array_join", nullReplacement === undefined ? [c(col), v(delimiter)] : [c(col), v(delimiter), v(nullReplacement)])
/** `length` elements from 1-based `start` (negative from the end). */
export const slice = <A = unknown>(x: ColumnOrName, start: ColumnOrNumber, length: ColumnOrNumber): Column<Array<A>> =>
  fn("slice", [c(x), cn(start), cn(length)])
export const flatten = <A = unknown>(col: ColumnOrName): Column<Array<A>> => fn("flatten", [c(col)])
/** Integers from `start` to `stop` (inclusive) by `step`. */
export const sequence = (start: ColumnOrName, stop: ColumnOrName, step?: ColumnOrName): Column<Array<number>> =>
  fn("sequence", step === undefined ? [c(start), c(stop)] : [c(start), c(stop), c(step)])
export const array_repeat = <A = unknown>(col: ColumnOrName, count: ColumnOrNumber): Column<Array<A>> =>
  fn("array_repeat", [c(col), cn(count)])
export const map_keys = <K = unknown>(col: ColumnOrName): Column<Array<K>> => fn("map_keys", [c(col)])
export const map_values = <V = unknown>(col: ColumnOrName): Column<Array<V>> => fn("map_values", [c(col)])
export const map_entries = <K = unknown, V = unknown>(col: ColumnOrName): Column<Array<{ key: K; value: V }>> =>
  fn("map_entries", [c(col)])
export const map_from_arrays = <K = unknown, V = unknown>(col1: ColumnOrName, col2: ColumnOrName): Column<Map<K, V>> =>
  fn("map_from_arrays", [c(col1), c(col2)])
export const map_contains_key = (col: ColumnOrName, value: ColumnOrValue): Column<boolean> =>
  fn("map_contains_key", [c(col), cv(value)])

// ---------------------------------------------------------------------------------------------
// Null handling, hashing
// ---------------------------------------------------------------------------------------------

/** The first non-null argument. */
export const coalesce = <A = unknown>(...cols: ReadonlyArray<ColumnOrName>): Column<A> => fn("coalesce", cols.map(c))
export const nvl = <A = unknown>(col1: ColumnOrName, col2: ColumnOrName): Column<A> => fn("nvl", [c(col1), c(col2)])
export const ifnull = <A = unknown>(col1: ColumnOrName, col2: ColumnOrName): Column<A> =>
  fn("ifnull", [c(col1), c(col2)])
/** `col2` when `col1` is not null, else `col3`. */
export const nvl2 = <A = unknown>(col1: ColumnOrName, col2: ColumnOrName, col3: ColumnOrName): Column<A> =>
  fn("nvl2", [c(col1), c(col2), c(col3)])
/** Null when `col1 = col2`, else `col1`. */
export const nullif = <A = unknown>(col1: ColumnOrName, col2: ColumnOrName): Column<A> =>
  fn("nullif", [c(col1), c(col2)])
/** `(col IS NULL)`. */
export const isnull = (col: ColumnOrName): Column<boolean> =>
  new Column({ _tag: "UnaryExpression", op: "isNull", child: c(col) })
/** `(col IS NOT NULL)`. */
export const isnotnull = (col: ColumnOrName): Column<boolean> =>
  new Column({ _tag: "UnaryExpression", op: "isNotNull", child: c(col) })
/** Spark's Murmur3 hash of the arguments (seed 42), an int; equal to Spark's `hash` for the same values. */
export const hash = (...cols: ReadonlyArray<ColumnOrName>): Column<number> => fn("hash", cols.map(c))
/** Spark's 64-bit xxHash of the arguments (seed 42), a bigint (rounded beyond 2^53 as a JS number). */
export const xxhash64 = (...cols: ReadonlyArray<ColumnOrName>): Column<number> => fn("xxhash64", cols.map(c))
/** CRC-32 of a binary (or of a string's UTF-8 bytes). */
export const crc32 = (col: ColumnOrName): Column<number> => fn("crc32", [c(col)])
