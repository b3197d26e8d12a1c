/**
 * Spark's date and time functions over the internal forms (timestamps in epoch ms, dates in days
 * since the epoch), in a UTC session: field extraction (`year`, `month`, `hour`, …), date
 * arithmetic (`date_add`, `datediff`, `add_months`, `months_between`), parsing and formatting
 * with Spark datetime patterns (`to_date`, `to_timestamp`, `unix_timestamp`, `from_unixtime`,
 * `date_format`), truncation (`date_trunc`, `trunc`), and `window_time`.
 *
 * Arguments are cast as Spark's `ImplicitCastInputTypes` do: date functions take a date (a
 * timestamp or a string is cast to date), time functions a timestamp (a date or string is cast).
 *
 * @since 0.1.0
 */
import { nullableOf } from "../Compile.ts"
import * as T from "../DataType.ts"
import type { Expression } from "../Expression.ts"
import * as Long from "../Long.ts"
import { callName, define, invalid, literalValue, memoizeLast } from "./Define.ts"
import * as DT from "./DateTimeUtils.ts"
import { register, type Resolution, type ScalarFunctionDef } from "./Registry.ts"

const DATE = T.DateType
const TS = T.TimestampType
const S = T.StringType
const I = T.IntegerType
const L = T.LongType

/** Spark's default pattern of `unix_timestamp` and `from_unixtime`. */
export const DEFAULT_FORMAT = "yyyy-MM-dd HH:mm:ss"

const parts = new Int32Array(3)

const dateField = (name: string, f: (days: number) => number): ScalarFunctionDef =>
  define({ name, inputs: [DATE], result: I, strict: () => f })

const timeField = (name: string, f: (ms: number) => number): ScalarFunctionDef =>
  define({ name, inputs: [TS], result: I, strict: () => f })

const msOfDay = (ms: number): number => DT.floorMod(ms, DT.MS_PER_DAY)

/** Checks a literal datetime pattern at analysis time. */
const checkPattern = (name: string, args: ReadonlyArray<Expression>, i: number): Resolution | undefined => {
  const lit = literalValue(args[i])
  if (lit === undefined || typeof lit.value !== "string") return undefined
  if (DT.timestampParser(lit.value) === undefined) {
    return invalid(
      `[INVALID_DATETIME_PATTERN.ILLEGAL_CHARACTER] Unrecognized datetime pattern: ${lit.value} (in ${callName(name, args)}). Spark 3+ supports the patterns of https://spark.apache.org/docs/latest/sql-ref-datetime-pattern.html; week-based letters (Y, w, u, W, e, c) are not supported.`
    )
  }
  return undefined
}

const withPatternCheck = (def: ScalarFunctionDef, i: number): ScalarFunctionDef => ({
  ...def,
  resolve: (argTypes, args) => {
    const r = def.resolve(argTypes, args)
    if (r._tag === "Invalid") return r
    return checkPattern(def.name, args, i) ?? r
  }
})

const parserCache = () => memoizeLast((p: string) => DT.timestampParser(p))
const formatterCache = () => memoizeLast((p: string) => DT.timestampFormatter(p))

/**
 * The epoch ms of a string/date/timestamp value, parsing strings with `pattern`
 * (Spark's `GetTimestamp` / `ToTimestamp`); null when it does not parse.
 */
const toMillis = (t: T.DataType): ((v: unknown, pattern: string | undefined) => number | null) => {
  switch (t._tag) {
    case "timestamp":
      return (v) => v as number
    case "date":
      return (v) => (v as number) * DT.MS_PER_DAY
    default: {
      const cache = parserCache()
      return (v, pattern) => {
        if (pattern === undefined) return DT.stringToTimestamp(v as string)
        const p = cache(pattern)
        return p === undefined ? null : p(v as string)
      }
    }
  }
}

/** Spark's `DateTimeUtils.monthsBetween` (UTC), rounded to 8 digits unless `roundOff` is false. */
export const monthsBetween = (ms1: number, ms2: number, roundOff: boolean): number => {
  const d1 = DT.msToDays(ms1)
  const d2 = DT.msToDays(ms2)
  DT.civilFromDays(d1, parts)
  const y1 = parts[0]
  const m1 = parts[1]
  const day1 = parts[2]
  const end1 = DT.daysInMonth(y1, m1) === day1
  DT.civilFromDays(d2, parts)
  const y2 = parts[0]
  const m2 = parts[1]
  const day2 = parts[2]
  const end2 = DT.daysInMonth(y2, m2) === day2
  const monthDiff = y1 * 12 + m1 - (y2 * 12 + m2)
  if (day1 === day2 || (end1 && end2)) return monthDiff
  // Hive's rule, kept by Spark: seconds, with 31-day months
  const sec1 = Math.floor((ms1 - d1 * DT.MS_PER_DAY) / 1000)
  const sec2 = Math.floor((ms2 - d2 * DT.MS_PER_DAY) / 1000)
  const secondsDiff = (day1 - day2) * 86400 + sec1 - sec2
  const diff = monthDiff + secondsDiff / (31 * 86400)
  return roundOff ? Math.round(diff * 1e8) / 1e8 : diff
}

type TruncLevel =
  | "MICROSECOND"
  | "MILLISECOND"
  | "SECOND"
  | "MINUTE"
  | "HOUR"
  | "DAY"
  | "WEEK"
  | "MONTH"
  | "QUARTER"
  | "YEAR"

/** Spark's `DateTimeUtils.parseTruncLevel`. */
const truncLevel = (fmt: string): TruncLevel | undefined => {
  switch (fmt.toUpperCase()) {
    case "MICROSECOND":
      return "MICROSECOND"
    case "MILLISECOND":
      return "MILLISECOND"
    case "SECOND":
      return "SECOND"
    case "MINUTE":
      return "MINUTE"
    case "HOUR":
      return "HOUR"
    case "DAY":
    case "DD":
      return "DAY"
    case "WEEK":
      return "WEEK"
    case "MON":
    case "MONTH":
    case "MM":
      return "MONTH"
    case "QUARTER":
      return "QUARTER"
    case "YEAR":
    case "YYYY":
    case "YY":
      return "YEAR"
    default:
      return undefined
  }
}

const truncDays = (days: number, level: TruncLevel): number => {
  switch (level) {
    case "WEEK":
      return days - DT.isoDayOfWeek(days) + 1
    case "MONTH":
      DT.civilFromDays(days, parts)
      return DT.daysFromCivil(parts[0], parts[1], 1)
    case "QUARTER":
      DT.civilFromDays(days, parts)
      return DT.daysFromCivil(parts[0], Math.floor((parts[1] - 1) / 3) * 3 + 1, 1)
    case "YEAR":
      DT.civilFromDays(days, parts)
      return DT.daysFromCivil(parts[0], 1, 1)
    default:
      return days
  }
}

const truncTimestamp = (ms: number, level: TruncLevel): number => {
  switch (level) {
    case "MICROSECOND":
    case "MILLISECOND":
      return ms
    case "SECOND":
      return Math.floor(ms / 1000) * 1000
    case "MINUTE":
      return Math.floor(ms / DT.MS_PER_MINUTE) * DT.MS_PER_MINUTE
    case "HOUR":
      return Math.floor(ms / DT.MS_PER_HOUR) * DT.MS_PER_HOUR
    default:
      return truncDays(DT.msToDays(ms), level) * DT.MS_PER_DAY
  }
}

const DAY_NAMES: Record<string, number> = {
  MO: 1,
  MON: 1,
  MONDAY: 1,
  TU: 2,
  TUE: 2,
  TUESDAY: 2,
  WE: 3,
  WED: 3,
  WEDNESDAY: 3,
  TH: 4,
  THU: 4,
  THURSDAY: 4,
  FR: 5,
  FRI: 5,
  FRIDAY: 5,
  SA: 6,
  SAT: 6,
  SATURDAY: 6,
  SU: 7,
  SUN: 7,
  SUNDAY: 7
}

const SHORT_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
const SHORT_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

const zoneCache = () => memoizeLast((z: string) => DT.zoneOffsetFunction(z))

/** `window_time(window)`: Spark returns `window.end - 1` microsecond; at millisecond precision, `end - 1 ms`. */
const windowTime = define({
  name: "window_time",
  inputs: (argTypes, args) => {
    const t = argTypes[0]
    const ok =
      t._tag === "struct" &&
      t.fields.length === 2 &&
      t.fields.every((f) => f.dataType._tag === "timestamp") &&
      t.fields[1].name === "end"
    if (!ok) {
      return invalid(
        `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve "${callName("window_time", args)}" due to data type mismatch: The first parameter requires the "STRUCT<start: TIMESTAMP, end: TIMESTAMP>" type (a window column), however it has the type "${T.simpleString(t).toUpperCase()}".`
      )
    }
    return ["struct"]
  },
  minArgs: 1,
  maxArgs: 1,
  result: TS,
  nullable: "always",
  strict: () => (w: ReadonlyArray<unknown>) => {
    const end = w[1]
    return end == null ? null : (end as number) - 1
  }
})

register(
  dateField("year", DT.yearOfDays),
  dateField("month", DT.monthOfDays),
  dateField("dayofmonth", DT.dayOfMonthOfDays),
  dateField("day", DT.dayOfMonthOfDays),
  dateField("quarter", (d) => Math.floor((DT.monthOfDays(d) - 1) / 3) + 1),
  // Spark: 1 = Sunday … 7 = Saturday
  dateField("dayofweek", (d) => (DT.isoDayOfWeek(d) % 7) + 1),
  // Spark: 0 = Monday … 6 = Sunday
  dateField("weekday", (d) => DT.isoDayOfWeek(d) - 1),
  dateField("dayofyear", DT.dayOfYearOfDays),
  dateField("weekofyear", DT.isoWeekOfYear),
  define({
    name: "dayname",
    inputs: [DATE],
    result: S,
    strict: () => (d: number) => SHORT_DAYS[DT.isoDayOfWeek(d) - 1]
  }),
  define({
    name: "monthname",
    inputs: [DATE],
    result: S,
    strict: () => (d: number) => SHORT_MONTHS[DT.monthOfDays(d) - 1]
  }),
  timeField("hour", (ms) => Math.floor(msOfDay(ms) / DT.MS_PER_HOUR)),
  timeField("minute", (ms) => Math.floor(msOfDay(ms) / DT.MS_PER_MINUTE) % 60),
  timeField("second", (ms) => Math.floor(msOfDay(ms) / 1000) % 60),
  define({ name: "date_add", inputs: [DATE, I], result: DATE, strict: () => (d: number, n: number) => d + n }),
  define({ name: "dateadd", inputs: [DATE, I], result: DATE, strict: () => (d: number, n: number) => d + n }),
  define({ name: "date_sub", inputs: [DATE, I], result: DATE, strict: () => (d: number, n: number) => d - n }),
  define({
    name: "datediff",
    inputs: [DATE, DATE],
    result: I,
    strict: () => (end: number, start: number) => end - start
  }),
  define({
    name: "date_diff",
    inputs: [DATE, DATE],
    result: I,
    strict: () => (end: number, start: number) => end - start
  }),
  define({ name: "add_months", inputs: [DATE, I], result: DATE, strict: () => DT.addMonths }),
  define({
    name: "months_between",
    inputs: [TS, TS, T.BooleanType],
    minArgs: 2,
    result: T.DoubleType,
    strict:
      () =>
      (a: number, b: number, roundOff = true) =>
        monthsBetween(a, b, roundOff)
  }),
  define({
    name: "last_day",
    inputs: [DATE],
    result: DATE,
    strict: () => (d: number) => {
      DT.civilFromDays(d, parts)
      return DT.daysFromCivil(parts[0], parts[1], DT.daysInMonth(parts[0], parts[1]))
    }
  }),
  define({
    name: "next_day",
    inputs: [DATE, S],
    result: DATE,
    nullable: "always",
    strict: () => (d: number, dow: string) => {
      const target = DAY_NAMES[dow.trim().toUpperCase()]
      if (target === undefined) return null
      const delta = (target - DT.isoDayOfWeek(d) + 7) % 7
      return d + (delta === 0 ? 7 : delta)
    }
  }),
  define({
    name: "make_date",
    inputs: [I, I, I],
    result: DATE,
    nullable: "always",
    strict: () => (y: number, m: number, d: number) =>
      m < 1 || m > 12 || d < 1 || d > DT.daysInMonth(y, m) ? null : DT.daysFromCivil(y, m, d)
  }),
  withPatternCheck(
    define({
      name: "to_date",
      inputs: [[S, DATE, TS], S],
      minArgs: 1,
      result: DATE,
      nullable: "always",
      strict: (info) => {
        const t = info.argTypes[0]
        if (info.argTypes.length === 1) {
          if (t._tag === "date") return (d: number) => d
          if (t._tag === "timestamp") return (ms: number) => DT.msToDays(ms)
          return (s: string) => DT.stringToDate(s)
        }
        const ms = toMillis(t)
        return (v: unknown, fmt: string) => {
          const m = ms(v, fmt)
          return m === null ? null : DT.msToDays(m)
        }
      }
    }),
    1
  ),
  withPatternCheck(
    define({
      name: "to_timestamp",
      inputs: [[S, DATE, TS], S],
      minArgs: 1,
      result: TS,
      nullable: "always",
      strict: (info) => {
        const ms = toMillis(info.argTypes[0])
        return info.argTypes.length === 1 ? (v: unknown) => ms(v, undefined) : (v: unknown, fmt: string) => ms(v, fmt)
      }
    }),
    1
  ),
  ...["unix_timestamp", "to_unix_timestamp"].map((name) =>
    withPatternCheck(
      define({
        name,
        inputs: [[S, DATE, TS], S],
        minArgs: 1,
        result: L,
        nullable: "always",
        strict: (info) => {
          const ms = toMillis(info.argTypes[0])
          // Spark's ToTimestamp divides toward zero (`micros / MICROS_PER_SECOND`):
          // 1969-12-31T23:59:59.999Z is 0 (issue #21, deviation 4)
          const toSeconds = (m: number | null) => (m === null ? null : Math.trunc(m / 1000) + 0)
          return info.argTypes.length === 1
            ? (v: unknown) => toSeconds(ms(v, DEFAULT_FORMAT))
            : (v: unknown, fmt: string) => toSeconds(ms(v, fmt))
        }
      }),
      1
    )
  ),
  withPatternCheck(
    define({
      name: "from_unixtime",
      inputs: [L, S],
      minArgs: 1,
      result: S,
      nullable: "always",
      strict: () => {
        const cache = formatterCache()
        return (secs: number, fmt = DEFAULT_FORMAT) => {
          const f = cache(fmt)
          return f === undefined ? null : f(secs * 1000)
        }
      }
    }),
    1
  ),
  withPatternCheck(
    define({
      name: "date_format",
      inputs: [TS, S],
      result: S,
      nullable: "always",
      strict: () => {
        const cache = formatterCache()
        return (ms: number, fmt: string) => {
          const f = cache(fmt)
          return f === undefined ? null : f(ms)
        }
      }
    }),
    1
  ),
  define({
    name: "date_trunc",
    inputs: [S, TS],
    result: TS,
    nullable: "always",
    strict: () => (fmt: string, ms: number) => {
      const level = truncLevel(fmt)
      return level === undefined ? null : truncTimestamp(ms, level)
    }
  }),
  define({
    name: "trunc",
    inputs: [DATE, S],
    result: DATE,
    nullable: "always",
    strict: () => (d: number, fmt: string) => {
      const level = truncLevel(fmt)
      // trunc accepts only levels of a week or more
      if (level === undefined || (level !== "WEEK" && level !== "MONTH" && level !== "QUARTER" && level !== "YEAR"))
        return null
      return truncDays(d, level)
    }
  }),
  define({
    name: "timestamp_seconds",
    inputs: ["numeric"],
    result: TS,
    // Spark's SecondsToTimestamp: NaN and infinite doubles give null
    nullable: (args, types) => types[0]._tag === "double" || nullableOf(args[0]),
    strict: (info) =>
      info.argTypes[0]._tag === "double"
        ? (d: number) => (Number.isFinite(d) ? Math.floor(Math.trunc(d * 1_000_000) / 1000) : null)
        : (n: Long.Long) => Long.toDouble(n) * 1000
  }),
  define({ name: "timestamp_millis", inputs: [L], result: TS, strict: () => (n: Long.Long) => Long.toDouble(n) }),
  define({
    name: "timestamp_micros",
    inputs: [L],
    result: TS,
    strict: () => (n: Long.Long) => Math.floor(Long.toDouble(n) / 1000)
  }),
  define({ name: "unix_seconds", inputs: [TS], result: L, strict: () => (ms: number) => Math.floor(ms / 1000) }),
  define({ name: "unix_millis", inputs: [TS], result: L, strict: () => (ms: number) => ms }),
  define({ name: "unix_micros", inputs: [TS], result: L, strict: () => (ms: number) => Long.multiply(ms, 1000) }),
  define({ name: "unix_date", inputs: [DATE], result: I, strict: () => (d: number) => d }),
  define({ name: "date_from_unix_date", inputs: [I], result: DATE, strict: () => (d: number) => d }),
  define({
    name: "from_utc_timestamp",
    inputs: [TS, S],
    result: TS,
    nullable: "always",
    strict: () => {
      const cache = zoneCache()
      return (ms: number, zone: string) => {
        const f = cache(zone)
        return f === undefined ? null : ms + f(ms)
      }
    }
  }),
  define({
    name: "to_utc_timestamp",
    inputs: [TS, S],
    result: TS,
    nullable: "always",
    strict: () => {
      const cache = zoneCache()
      return (ms: number, zone: string) => {
        const f = cache(zone)
        return f === undefined ? null : DT.localToUtc(ms, f)
      }
    }
  }),
  windowTime
)
