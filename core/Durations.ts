/**
 * Spark's interval strings (`"10 seconds"`, `"1 hour 30 minutes"`, `"interval 2 days"`) and
 * Effect durations, as milliseconds.
 *
 * Spark keeps months apart from days and microseconds (`CalendarInterval`); where a single
 * length is needed (watermark delays) a month counts as 31 days, as Spark's
 * `EventTimeWatermark.getDelayMs` does.
 *
 * @since 0.1.0
 */
import { Duration } from "effect"

export interface CalendarInterval {
  readonly months: number
  readonly days: number
  readonly micros: number
}

const MICROS: Record<string, number> = {
  microsecond: 1,
  millisecond: 1_000,
  second: 1_000_000,
  minute: 60_000_000,
  hour: 3_600_000_000
}

/** Abbreviations, matched before a plural "s" is stripped (so "ms" is not read as "m" + "s"). */
const ABBREVIATIONS: Record<string, string> = {
  ms: "millisecond",
  msec: "millisecond",
  msecs: "millisecond",
  us: "microsecond",
  s: "second",
  sec: "second",
  secs: "second",
  m: "minute",
  min: "minute",
  mins: "minute",
  h: "hour",
  hr: "hour",
  hrs: "hour",
  d: "day"
}

const unitOf = (word: string): string | undefined => {
  const w = word.toLowerCase()
  const abbreviated = ABBREVIATIONS[w]
  if (abbreviated !== undefined) return abbreviated
  const base = w.endsWith("s") ? w.slice(0, -1) : w
  switch (base) {
    case "year":
    case "month":
    case "week":
    case "day":
    case "hour":
    case "minute":
    case "second":
    case "millisecond":
    case "microsecond":
      return base
    case "min":
      return "minute"
    case "sec":
      return "second"
    case "ms":
    case "milli":
      return "millisecond"
    case "us":
    case "micro":
      return "microsecond"
    default:
      return undefined
  }
}

/** The fields of an ANSI interval qualifier, from the largest. */
const ANSI_FIELDS = ["year", "month", "day", "hour", "minute", "second"] as const

type AnsiField = (typeof ANSI_FIELDS)[number]

/**
 * The pattern of an ANSI interval literal's string for `from TO to` (Spark's
 * `IntervalUtils.fromYearMonthString` / `fromDayTimeString`): `'1-2' YEAR TO MONTH`,
 * `'1 2:3:4' DAY TO SECOND`, `'2:3' HOUR TO MINUTE`, ... Seconds may carry a fraction.
 */
const ANSI_PATTERNS: Partial<Record<`${AnsiField}-${AnsiField}`, RegExp>> = {
  "year-month": /^([+-])?(\d+)-(\d+)$/,
  "day-hour": /^([+-])?(\d+) (\d+)$/,
  "day-minute": /^([+-])?(\d+) (\d+):(\d+)$/,
  "day-second": /^([+-])?(\d+) (\d+):(\d+):(\d+(?:\.\d{0,9})?)$/,
  "hour-minute": /^([+-])?(\d+):(\d+)$/,
  "hour-second": /^([+-])?(\d+):(\d+):(\d+(?:\.\d{0,9})?)$/,
  "minute-second": /^([+-])?(\d+):(\d+(?:\.\d{0,9})?)$/
}

/**
 * An ANSI interval literal `'<value>' <from> TO <to>` (the `interval` keyword already removed);
 * `undefined` when the qualifier is not one Spark accepts or the value does not match its
 * pattern (Spark fails `interval '1 2:3:4' day to hour` and `interval '1 2' year to month`).
 */
const parseAnsiInterval = (s: string): CalendarInterval | undefined => {
  const m = /^'([^']*)'\s+([a-z]+)\s+to\s+([a-z]+)$/i.exec(s)
  if (m === null) return undefined
  const from = m[2].toLowerCase() as AnsiField
  const to = m[3].toLowerCase() as AnsiField
  const pattern = ANSI_PATTERNS[`${from}-${to}`]
  if (pattern === undefined) return undefined
  const v = pattern.exec(m[1].trim())
  if (v === null) return undefined
  const sign = v[1] === "-" ? -1 : 1
  const parts = v.slice(2).map(Number)
  if (from === "year") {
    if (parts[1] > 11) return undefined
    return { months: sign * (parts[0] * 12 + parts[1]), days: 0, micros: 0 }
  }
  // Day-time fields below the first are bounded as in Spark (hour 0-23, minute and second 0-59).
  const start = ANSI_FIELDS.indexOf(from)
  let days = 0
  let micros = 0
  for (let i = 0; i < parts.length; i++) {
    const field = ANSI_FIELDS[start + i]
    const n = parts[i]
    if (i > 0 && ((field === "hour" && n > 23) || ((field === "minute" || field === "second") && n >= 60))) {
      return undefined
    }
    if (field === "day") days += n
    else micros += Math.round(n * MICROS[field])
  }
  return { months: 0, days: sign * days, micros: sign * micros }
}

/** Parses a Spark interval string; `undefined` when it is not one. */
export const parseInterval = (text: string): CalendarInterval | undefined => {
  let s = text.trim()
  if (/^interval\s/i.test(s)) s = s.slice(8).trim()
  if (/\sto\s/i.test(s)) return parseAnsiInterval(s)
  const tokens = s.split(/\s+/)
  if (tokens.length === 0 || tokens.length % 2 !== 0) return undefined
  let months = 0
  let days = 0
  let micros = 0
  for (let i = 0; i < tokens.length; i += 2) {
    const raw = tokens[i].replace(/^'|'$/g, "")
    if (!/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(raw)) return undefined
    const n = Number(raw)
    const unit = unitOf(tokens[i + 1])
    if (unit === undefined) return undefined
    const fractional = !Number.isInteger(n)
    switch (unit) {
      case "year":
        if (fractional) return undefined
        months += 12 * n
        break
      case "month":
        if (fractional) return undefined
        months += n
        break
      case "week":
        if (fractional) return undefined
        days += 7 * n
        break
      case "day":
        if (fractional) return undefined
        days += n
        break
      default:
        micros += Math.round(n * MICROS[unit])
    }
  }
  return { months, days, micros }
}

/** Milliseconds of an interval, a month counting `daysPerMonth` days (31, as Spark's watermark). */
export const intervalToMs = (i: CalendarInterval, daysPerMonth = 31): number =>
  i.months * daysPerMonth * 86_400_000 + i.days * 86_400_000 + Math.floor(i.micros / 1000)

/**
 * Milliseconds of a Spark interval string or an Effect duration input; `undefined` when the
 * input is not a duration. Numbers are milliseconds.
 */
export const parseDurationMs = (input: unknown): number | undefined => {
  if (typeof input === "number") return Number.isFinite(input) ? input : undefined
  if (typeof input === "string") {
    const interval = parseInterval(input)
    if (interval !== undefined) return intervalToMs(interval)
    return undefined
  }
  if (Duration.isDuration(input)) return Duration.toMillis(input)
  const d = Duration.fromInput(input as Duration.Input)
  return d._tag === "Some" ? Duration.toMillis(d.value) : undefined
}

/**
 * The unit words of a Spark interval string that `parseInterval` reads, in lower case (any
 * letter case is read, as in Spark): Spark's `year`, `month`, `week`, `day`, `hour`, `minute`,
 * `second`, `millisecond`, `microsecond` (singular or plural), Effect's `millis` and `micros`,
 * and the abbreviations `ms`, `msec`, `us`, `s`, `sec`, `m`, `min`, `h`, `hr`, `d`.
 *
 * @since 0.6.0
 */
export type IntervalUnit =
  | "year"
  | "years"
  | "month"
  | "months"
  | "week"
  | "weeks"
  | "day"
  | "days"
  | "hour"
  | "hours"
  | "minute"
  | "minutes"
  | "second"
  | "seconds"
  | "millisecond"
  | "milliseconds"
  | "microsecond"
  | "microseconds"
  | "milli"
  | "millis"
  | "micro"
  | "micros"
  | "ms"
  | "msec"
  | "msecs"
  | "us"
  | "s"
  | "sec"
  | "secs"
  | "m"
  | "min"
  | "mins"
  | "h"
  | "hr"
  | "hrs"
  | "d"

/** `<number> <unit>` parts separated by single spaces (the number may be quoted, `'10' seconds`). */
type IsIntervalParts<S extends string> = S extends `${infer N} ${infer U} ${infer Rest}`
  ? N extends `${number}` | `'${number}'`
    ? U extends IntervalUnit
      ? IsIntervalParts<Rest>
      : false
    : false
  : S extends `${infer N} ${infer U}`
    ? N extends `${number}` | `'${number}'`
      ? U extends IntervalUnit
        ? true
        : false
      : false
    : false

/** An ANSI interval literal's string and qualifier, `'1 2:3:4' day to second` (its value is checked at run time). */
type IsAnsiInterval<S extends string> = S extends `'${string}' ${infer From} to ${infer To}`
  ? From extends "year" | "month" | "day" | "hour" | "minute" | "second"
    ? To extends "year" | "month" | "day" | "hour" | "minute" | "second"
      ? true
      : false
    : false
  : false

/** A lower-cased interval string, with or without Spark's `interval ` prefix. */
type IsInterval<S extends string> = S extends `interval ${infer Rest}`
  ? IsIntervalParts<Rest> | IsAnsiInterval<Rest>
  : IsIntervalParts<S> | IsAnsiInterval<S>

/**
 * `S` when it is a Spark interval string, otherwise a message type, so that a misspelled literal
 * does not compile: `"10 seconds"`, `"1 hour 30 minutes"`, `"interval 5 minutes"`, `"100 ms"`,
 * `"INTERVAL 1 DAY"` and `"interval '1 2:3:4' day to second"` pass, `"1 secnod"`, `"soon"` and
 * `"10 nanos"` (which the parser does not read either) do not. Units are any
 * {@link IntervalUnit} in any letter case, parts are separated by single spaces. A `string` that
 * is not a literal (read from a configuration, say) passes: it is checked when the query starts.
 *
 * @example
 * ```ts
 * import type { IntervalString } from "tributary-streaming"
 * const delay = <const S extends string>(s: IntervalString<S>): string => s
 * delay("10 seconds")
 * // @ts-expect-error misspelled unit
 * delay("10 secnods")
 * ```
 * @since 0.6.0
 */
export type IntervalString<S extends string> = S extends string
  ? Record<never, never> extends Record<S, 1>
    ? S
    : true extends IsInterval<Lowercase<S>>
      ? S
      : `Not a Spark interval: "${S}". Write <number> <unit> parts such as "10 seconds" or "1 hour 30 minutes".`
  : never
