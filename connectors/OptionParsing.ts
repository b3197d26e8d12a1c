/**
 * How connectors read option values the way Spark's JVM code does, shared by every connector
 * (the one module directly under `connectors/` they may all import): Java's `String.trim`,
 * `Long.parseLong` / `Integer.parseInt` and Spark's `JavaUtils.timeStringAs*`.
 *
 * The parsers return the value, or the message of the `NumberFormatException` Java would throw;
 * each connector wraps that message in its own `AnalysisError` (its error class, its wording
 * around it), so the same text reads the same in every connector.
 *
 * @example
 * ```ts
 * import { timeStringAsMs } from "./OptionParsing.ts"
 * timeStringAsMs("2min") // 120000
 * timeStringAsMs("2 hours") // "Time must be specified as seconds (s), … E.g. 50s, 100ms, or 250us.\nFailed to parse time string: 2 hours"
 * ```
 * @since 0.1.0
 */

/**
 * Java's `String.trim`: removes every char up to U+0020 at both ends (not the other Unicode
 * spaces `String.prototype.trim` removes).
 *
 * @since 0.1.0
 */
export const javaTrim = (s: string): string => {
  let from = 0
  let to = s.length
  while (from < to && s.charCodeAt(from) <= 0x20) from++
  while (to > from && s.charCodeAt(to - 1) <= 0x20) to--
  return from === 0 && to === s.length ? s : s.slice(from, to)
}

/**
 * Java's `NumberFormatException.forInputString` text.
 *
 * @since 0.1.0
 */
export const forInputString = (s: string): string => `For input string: "${s}"`

const LONG_MAX = 9_223_372_036_854_775_807n
const LONG_MIN = -9_223_372_036_854_775_808n

/**
 * Java's `Long.parseLong(s)` (radix 10): an optional sign and ASCII digits within the range of a
 * long; `undefined` where Java throws.
 *
 * @since 0.1.0
 */
export const javaLong = (s: string): bigint | undefined => {
  if (!/^[+-]?\d+$/.test(s)) return undefined
  const n = BigInt(s)
  return n < LONG_MIN || n > LONG_MAX ? undefined : n
}

/**
 * Java's `Integer.parseInt(s)` (radix 10); `undefined` where Java throws.
 *
 * @since 0.1.0
 */
export const javaInt = (s: string): number | undefined => {
  if (!/^[+-]?\d+$/.test(s)) return undefined
  const n = BigInt(s)
  return n < -2_147_483_648n || n > 2_147_483_647n ? undefined : Number(n)
}

/**
 * The head of every message of Spark's `JavaUtils.timeStringAs` failures.
 *
 * @since 0.1.0
 */
export const TIME_ERROR =
  "Time must be specified as seconds (s), milliseconds (ms), microseconds (us), minutes (m or min), hour (h), or day (d). E.g. 50s, 100ms, or 250us."

/** Spark's `JavaUtils.timeSuffixes`. */
export type TimeSuffix = "us" | "ms" | "s" | "m" | "min" | "h" | "d"

const MS_PER_UNIT: Readonly<Record<TimeSuffix, number>> = {
  us: 0.001,
  ms: 1,
  s: 1000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000
}

const isSuffix = (s: string): s is TimeSuffix => Object.hasOwn(MS_PER_UNIT, s)

/**
 * Spark's `JavaUtils.timeStringAs` up to the unit conversion: the number (a long) and its
 * suffix (`undefined`: the caller's default unit), or the failure's message (`TIME_ERROR`, a
 * newline, then what Java says: `Failed to parse time string: …`, `For input string: "…"`,
 * `Invalid suffix: "…"`).
 *
 * @since 0.1.0
 */
export const parseTimeString = (
  str: string
): { readonly value: bigint; readonly suffix: TimeSuffix | undefined } | string => {
  const m = /^(-?[0-9]+)([a-z]+)?$/.exec(javaTrim(str.toLowerCase()))
  if (m === null) return `${TIME_ERROR}\nFailed to parse time string: ${str}`
  const value = javaLong(m[1])
  if (value === undefined) return `${TIME_ERROR}\n${forInputString(m[1])}`
  const suffix = m[2]
  if (suffix === undefined) return { value, suffix: undefined }
  if (!isSuffix(suffix)) return `${TIME_ERROR}\nInvalid suffix: "${suffix}"`
  return { value, suffix }
}

/**
 * Spark's `JavaUtils.timeStringAsMs`: `"7d"`, `"500ms"`, `"2min"`, or a bare number of
 * milliseconds; microseconds truncate toward zero. A string is the failure's message.
 *
 * @since 0.1.0
 */
export const timeStringAsMs = (str: string): number | string => {
  const parsed = parseTimeString(str)
  if (typeof parsed === "string") return parsed
  return Math.trunc(Number(parsed.value) * (parsed.suffix === undefined ? 1 : MS_PER_UNIT[parsed.suffix]))
}
