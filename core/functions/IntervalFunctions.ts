/**
 * Timestamp and interval arithmetic: Spark's `timestampadd(unit, n, ts)` and
 * `timestampdiff(unit, start, end)` (`DateTimeUtils.timestampAdd` / `timestampDiff`, UTC), and
 * the expressions Spark's analyzer puts behind `ts + INTERVAL …`, `ts - INTERVAL …`,
 * `date + INTERVAL …` (`TimeAdd`, `DatetimeSub`, `DateAddInterval`) and `interval + interval`.
 * Also `get(array, i)` (0-based, null outside the array; of a map, the key's value) and
 * `subscript`, the same for `a[i]` / `m[key]` of expression text, named as Spark names
 * `GetArrayItem` / `GetMapValue` (`a[0]`).
 *
 * Timestamps are milliseconds here (Spark: microseconds), so an interval's microseconds are
 * added rounded down to the millisecond, and `timestampadd(MICROSECOND, n, ts)` moves by
 * `floor(n / 1000)` ms.
 *
 * @since 0.7.0
 */
import * as T from "../DataType.ts"
import type { CalendarInterval } from "../Durations.ts"
import type { Expression } from "../Expression.ts"
import { prettyName } from "../ExpressionName.ts"
import * as L from "../Long.ts"
import type { Long } from "../Long.ts"
import { define, invalid } from "./Define.ts"
import * as DT from "./DateTimeUtils.ts"
import { register } from "./Registry.ts"
import * as O from "../Ordering.ts"

const TS = T.TimestampType
const DATE = T.DateType
const IV = T.CalendarIntervalType

/** The registry names of the analyzer's interval expressions; expression text cannot call them. */
export const INTERNAL_NAMES: ReadonlySet<string> = new Set([
  "time_add",
  "time_sub",
  "date_add_interval",
  "date_sub_interval",
  "interval_add",
  "interval_subtract",
  "subscript",
  "bitwise_and",
  "bitwise_or",
  "bitwise_xor",
  "bitwise_not",
  "shift_left",
  "shift_right",
  "shift_right_unsigned"
])

const parts = new Int32Array(3)

/** `LocalDateTime.plusMonths` in UTC: the day clamped to the new month's length, the time kept. */
const plusMonths = (ms: number, months: number): number => {
  if (months === 0) return ms
  const days = DT.msToDays(ms)
  return DT.addMonths(days, months) * DT.MS_PER_DAY + (ms - days * DT.MS_PER_DAY)
}

/** Spark's `timestampAddInterval` (UTC): months, then days, then microseconds. */
export const timestampAddInterval = (ms: number, iv: CalendarInterval): number =>
  plusMonths(ms, iv.months) + iv.days * DT.MS_PER_DAY + Math.floor(iv.micros / 1000)

const negate = (iv: CalendarInterval): CalendarInterval => ({
  months: -iv.months + 0,
  days: -iv.days + 0,
  micros: -iv.micros + 0
})

/** Spark's `dateAddInterval` (non-ANSI): with microseconds, through a timestamp, rounded down to the day. */
export const dateAddInterval = (days: number, iv: CalendarInterval): number =>
  iv.micros === 0
    ? DT.addMonths(days, iv.months) + iv.days
    : DT.msToDays(timestampAddInterval(days * DT.MS_PER_DAY, iv))

const UNITS = "YEAR, QUARTER, MONTH, WEEK, DAY, DAYOFYEAR, HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND"

const unitError = (fn: string, unit: string) =>
  invalid(
    `[INVALID_PARAMETER_VALUE.DATETIME_UNIT] The value of parameter(s) \`unit\` in \`${fn}\` is invalid: expects one of the units without quotes ${UNITS}, but got the string literal '${unit}'.`
  )

const unitOf = (e: unknown): string | undefined => {
  const x = e as { readonly _tag?: string; readonly value?: unknown } | undefined
  return x?._tag === "Literal" && typeof x.value === "string" ? x.value.toUpperCase() : undefined
}

/** Spark's `DateTimeUtils.timestampAdd` (UTC). */
const timestampAdd = (unit: string, n: number, ms: number): number => {
  switch (unit) {
    case "MICROSECOND":
      return ms + Math.floor(n / 1000)
    case "MILLISECOND":
      return ms + n
    case "SECOND":
      return ms + n * 1000
    case "MINUTE":
      return ms + n * DT.MS_PER_MINUTE
    case "HOUR":
      return ms + n * DT.MS_PER_HOUR
    case "DAY":
    case "DAYOFYEAR":
      return ms + n * DT.MS_PER_DAY
    case "WEEK":
      return ms + 7 * n * DT.MS_PER_DAY
    case "MONTH":
      return plusMonths(ms, n)
    case "QUARTER":
      return plusMonths(ms, 3 * n)
    default:
      return plusMonths(ms, 12 * n)
  }
}

/** `LocalDate.until(end, MONTHS)`: whole months, toward zero, by (month, day of month). */
const monthsUntil = (startDays: number, endDays: number): number => {
  DT.civilFromDays(startDays, parts)
  const p1 = (parts[0] * 12 + parts[1] - 1) * 32 + parts[2]
  DT.civilFromDays(endDays, parts)
  const p2 = (parts[0] * 12 + parts[1] - 1) * 32 + parts[2]
  // `+ 0`: a long 0, not the -0 of truncating a negative fraction
  return Math.trunc((p2 - p1) / 32) + 0
}

/** Spark's `DateTimeUtils.timestampDiff` (UTC): `ChronoUnit.<unit>.between` of the local date-times. */
const timestampDiff = (unit: string, start: number, end: number): number => {
  const timeBased = (unitMs: number) => Math.trunc((end - start) / unitMs) + 0
  switch (unit) {
    case "MICROSECOND":
      return (end - start) * 1000
    case "MILLISECOND":
      return end - start
    case "SECOND":
      return timeBased(1000)
    case "MINUTE":
      return timeBased(DT.MS_PER_MINUTE)
    case "HOUR":
      return timeBased(DT.MS_PER_HOUR)
    default: {
      // LocalDateTime.until for date-based units: the end date moves a day when its time of day
      // has not reached the start's
      const sd = DT.msToDays(start)
      let ed = DT.msToDays(end)
      const st = start - sd * DT.MS_PER_DAY
      const et = end - ed * DT.MS_PER_DAY
      if (ed > sd && et < st) ed--
      else if (ed < sd && et > st) ed++
      switch (unit) {
        case "DAY":
          return ed - sd
        case "WEEK":
          return Math.trunc((ed - sd) / 7) + 0
        case "MONTH":
          return monthsUntil(sd, ed)
        case "QUARTER":
          return Math.trunc(monthsUntil(sd, ed) / 3) + 0
        default:
          return Math.trunc(monthsUntil(sd, ed) / 12) + 0
      }
    }
  }
}

const DIFF_UNITS = new Set([
  "MICROSECOND",
  "MILLISECOND",
  "SECOND",
  "MINUTE",
  "HOUR",
  "DAY",
  "WEEK",
  "MONTH",
  "QUARTER",
  "YEAR"
])
const ADD_UNITS = new Set([...DIFF_UNITS, "DAYOFYEAR"])

register(
  define({
    name: "timestampadd",
    inputs: (_, args) => {
      const unit = unitOf(args[0])
      if (unit === undefined || !ADD_UNITS.has(unit)) return unitError("timestampadd", String(unit))
      return [T.StringType, T.LongType, TS]
    },
    minArgs: 3,
    maxArgs: 3,
    result: TS,
    strict: (info) => {
      const unit = unitOf(info.argExprs[0]) ?? "SECOND"
      return (_: string, n: number, ms: number) => timestampAdd(unit, n, ms)
    }
  }),
  define({
    name: "timestampdiff",
    inputs: (_, args) => {
      const unit = unitOf(args[0])
      if (unit === undefined || !DIFF_UNITS.has(unit)) return unitError("timestampdiff", String(unit))
      return [T.StringType, TS, TS]
    },
    minArgs: 3,
    maxArgs: 3,
    result: T.LongType,
    strict: (info) => {
      const unit = unitOf(info.argExprs[0]) ?? "SECOND"
      return (_: string, start: number, end: number) => timestampDiff(unit, start, end)
    }
  }),
  define({ name: "time_add", inputs: [TS, IV], result: TS, strict: () => timestampAddInterval }),
  define({
    name: "time_sub",
    inputs: [TS, IV],
    result: TS,
    strict: () => (ms: number, iv: CalendarInterval) => timestampAddInterval(ms, negate(iv))
  }),
  define({ name: "date_add_interval", inputs: [DATE, IV], result: DATE, strict: () => dateAddInterval }),
  define({
    name: "date_sub_interval",
    inputs: [DATE, IV],
    result: DATE,
    strict: () => (d: number, iv: CalendarInterval) => dateAddInterval(d, negate(iv))
  }),
  define({
    name: "interval_add",
    inputs: [IV, IV],
    result: IV,
    strict: () => (a: CalendarInterval, b: CalendarInterval) => ({
      months: a.months + b.months,
      days: a.days + b.days,
      micros: a.micros + b.micros
    })
  }),
  define({
    name: "interval_subtract",
    inputs: [IV, IV],
    result: IV,
    strict: () => (a: CalendarInterval, b: CalendarInterval) => ({
      months: a.months - b.months + 0,
      days: a.days - b.days + 0,
      micros: a.micros - b.micros + 0
    })
  }),
  define({
    name: "get",
    inputs: (argTypes) =>
      argTypes[0]._tag === "map" ? ["map", (argTypes[0] as T.MapType).keyType] : ["array", T.IntegerType],
    minArgs: 2,
    maxArgs: 2,
    result: (types) => {
      const t = types[0]
      return t._tag === "array" ? t.elementType : t._tag === "map" ? t.valueType : T.NullType
    },
    nullable: "always",
    strict: (info) => {
      const t = info.argTypes[0]
      if (t._tag === "map") {
        const eq = O.equality(t.keyType)
        return (m: Map<unknown, unknown>, k: unknown) => {
          for (const [mk, mv] of m) if (eq(mk, k)) return mv ?? null
          return null
        }
      }
      // Spark's GetArrayItem (non-ANSI): null outside the array
      return (a: ReadonlyArray<unknown>, i: number) => (i < 0 || i >= a.length ? null : (a[i] ?? null))
    }
  }),
  define({
    name: "subscript",
    inputs: (argTypes) =>
      argTypes[0]._tag === "map" ? ["map", (argTypes[0] as T.MapType).keyType] : ["array", T.IntegerType],
    minArgs: 2,
    maxArgs: 2,
    result: (types) => {
      const t = types[0]
      return t._tag === "array" ? t.elementType : t._tag === "map" ? t.valueType : T.NullType
    },
    nullable: "always",
    strict: (info) => {
      const t = info.argTypes[0]
      if (t._tag === "map") {
        const eq = O.equality(t.keyType)
        return (m: Map<unknown, unknown>, k: unknown) => {
          for (const [mk, mv] of m) if (eq(mk, k)) return mv ?? null
          return null
        }
      }
      // Spark's GetArrayItem (non-ANSI): null outside the array
      return (a: ReadonlyArray<unknown>, i: number) => (i < 0 || i >= a.length ? null : (a[i] ?? null))
    }
  })
)

/** Spark's integral operators take int or bigint; both sides meet at the wider one. */
const integralInputs = (sym: string) => (argTypes: ReadonlyArray<T.DataType>, args: ReadonlyArray<Expression>) => {
  const bad = argTypes.findIndex((t) => !(T.isIntegral(t) || t._tag === "null"))
  if (bad >= 0) {
    const shown =
      args.length === 1 ? `${sym}${prettyName(args[0])}` : `(${prettyName(args[0])} ${sym} ${prettyName(args[1])})`
    return invalid(
      `[DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE] Cannot resolve "${shown}" due to data type mismatch: the binary operator requires the input type "INTEGRAL", not "${T.simpleString(argTypes[bad]).toUpperCase()}".`
    )
  }
  const t = argTypes.some((x) => x._tag === "long") ? T.LongType : T.IntegerType
  return argTypes.map(() => t)
}

const bitwise = (name: string, sym: string, int: (a: number, b: number) => number, long: (a: Long, b: Long) => Long) =>
  define({
    name,
    inputs: integralInputs(sym),
    minArgs: 2,
    maxArgs: 2,
    result: (types) => types[0],
    strict: (info) => (info.resultType._tag === "long" ? long : int)
  })

register(
  bitwise("bitwise_and", "&", (a, b) => a & b, L.and),
  bitwise("bitwise_or", "|", (a, b) => a | b, L.or),
  bitwise("bitwise_xor", "^", (a, b) => a ^ b, L.xor),
  define({
    name: "bitwise_not",
    inputs: integralInputs("~"),
    minArgs: 1,
    maxArgs: 1,
    result: (types) => types[0],
    strict: (info) => (info.resultType._tag === "long" ? L.not : (a: number) => ~a)
  }),
  // Spark's IntegralDivide (non-ANSI): bigint, toward zero, null for a zero divisor
  define({
    name: "div",
    inputs: [T.LongType, T.LongType],
    result: T.LongType,
    nullable: "always",
    strict: () => (a: Long, b: Long) => (b === 0 ? null : L.divide(a, b))
  })
)

/** Java's shifts: an int by the amount's low 5 bits, a bigint by its low 6 (Spark's ShiftLeft, …). */
const shift = (name: string, sym: string, int: (a: number, n: number) => number, long: (a: Long, n: number) => Long) =>
  define({
    name,
    inputs: (argTypes, args) => {
      const t = argTypes[0]
      if (!(T.isIntegral(t) || t._tag === "null") || !(T.isIntegral(argTypes[1]) || argTypes[1]._tag === "null")) {
        const bad = T.isIntegral(t) || t._tag === "null" ? argTypes[1] : t
        return invalid(
          `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve "(${prettyName(args[0])} ${sym} ${prettyName(args[1])})" due to data type mismatch: the shift requires the "INTEGRAL" type, not "${T.simpleString(bad).toUpperCase()}".`
        )
      }
      return [t._tag === "long" ? T.LongType : T.IntegerType, T.IntegerType]
    },
    minArgs: 2,
    maxArgs: 2,
    result: (types) => types[0],
    strict: (info) => (info.resultType._tag === "long" ? long : (a: number, n: number) => int(a, n & 31))
  })

register(
  shift("shift_left", "<<", (a, n) => a << n, L.shiftLeft),
  shift("shift_right", ">>", (a, n) => a >> n, L.shiftRight),
  shift("shift_right_unsigned", ">>>", (a, n) => (a >>> n) | 0, L.shiftRightUnsigned)
)
