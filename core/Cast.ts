/**
 * Spark's `Cast` on internal values, with `spark.sql.ansi.enabled=false` semantics: a value that
 * does not convert becomes null instead of failing the query, integral overflow wraps as in Java,
 * doubles cast to integral types truncate toward zero and saturate (NaN becomes 0).
 *
 * `castFunction` decides everything from the two types once and returns a closure that only
 * converts non-null values; null in gives null out.
 *
 * @since 0.1.0
 */
import * as T from "./DataType.ts"
import { formatDouble } from "./ExpressionName.ts"
import * as DT from "./functions/DateTimeUtils.ts"
import * as L from "./Long.ts"

/** Converts one internal value; null (or undefined) in, null out. */
export type CastFunction = (v: unknown) => unknown

const INT_MIN = -2147483648
const INT_MAX = 2147483647

/**
 * Whether Spark can cast `from` to `to` (Spark's `Cast.canCast` for the types tributary has).
 *
 * @example
 * ```ts
 * import * as T from "./DataType.ts"
 * canCast(T.StringType, T.IntegerType) // true
 * canCast(T.DateType, T.BinaryType)    // false
 * ```
 * @since 0.1.0
 */
export const canCast = (from: T.DataType, to: T.DataType): boolean => {
  if (T.sameType(from, to)) return true
  if (from._tag === "null") return true
  if (to._tag === "string") return true
  switch (to._tag) {
    case "binary":
      return from._tag === "string" || T.isIntegral(from)
    case "boolean":
      return from._tag === "string" || T.isDatetime(from) || T.isNumeric(from)
    case "timestamp":
      return from._tag === "string" || from._tag === "boolean" || from._tag === "date" || T.isNumeric(from)
    case "date":
      return from._tag === "string" || from._tag === "timestamp"
    case "calendarInterval":
      return from._tag === "string"
    case "integer":
    case "long":
    case "double":
      return from._tag === "string" || from._tag === "boolean" || T.isDatetime(from) || T.isNumeric(from)
    case "array":
      return from._tag === "array" && canCast(from.elementType, to.elementType)
    case "map":
      return from._tag === "map" && canCast(from.keyType, to.keyType) && canCast(from.valueType, to.valueType)
    case "struct":
      return (
        from._tag === "struct" &&
        from.fields.length === to.fields.length &&
        from.fields.every((f, i) => canCast(f.dataType, to.fields[i].dataType))
      )
    case "null":
      return false
  }
}

/**
 * Spark's `Cast.forceNullable`: whether casting a non-null value of `from` to `to` may give null.
 */
export const forceNullable = (from: T.DataType, to: T.DataType): boolean => {
  if (from._tag === "null" || T.sameType(from, to)) return false
  if (from._tag === "string") return to._tag !== "binary"
  if (to._tag === "string") return false
  if (from._tag === "timestamp" && to._tag === "integer") return true
  if (from._tag === "double" && to._tag === "timestamp") return true
  if (from._tag === "timestamp" && to._tag === "date") return false
  if (to._tag === "date") return true
  if (from._tag === "date" && to._tag === "timestamp") return false
  if (from._tag === "date") return true
  if (to._tag === "calendarInterval") return true
  if (from._tag === "array" && to._tag === "array") return forceNullable(from.elementType, to.elementType)
  if (from._tag === "struct" && to._tag === "struct")
    return from.fields.some((f, i) => forceNullable(f.dataType, to.fields[i]?.dataType ?? f.dataType))
  return false
}

/** Java's `(int)` of a double: truncation toward zero, saturating, NaN to 0. */
export const doubleToInt = (d: number): number => {
  if (d !== d) return 0
  if (d >= INT_MAX) return INT_MAX
  if (d <= INT_MIN) return INT_MIN
  return Math.trunc(d) | 0
}

/** Java's `(long)` of a double: truncation toward zero, saturating, NaN to 0 (an exact long). */
export const doubleToLong = (d: number): L.Long => L.fromDouble(d)

/** Java's `(int)` of a long: the low 32 bits. */
export const longToInt = (l: L.Long): number => {
  if (typeof l === "number" && l >= INT_MIN && l <= INT_MAX) return l
  if (typeof l === "number" && !Number.isSafeInteger(l)) return Number(BigInt.asIntN(32, BigInt(Math.trunc(l))))
  return L.toInt(l)
}

const isWs = (c: number): boolean => c <= 32

/**
 * Spark's `UTF8String.toLong`/`toInt` (non-ANSI): trimmed, an optional sign, digits, and an
 * optional `.` followed only by digits (the fraction is dropped: `'1.9'` is 1); null when
 * malformed or out of range.
 */
const parseIntegral = (s: string, min: number, max: number): number | null => {
  const r = parseIntegralDigits(s)
  if (r === null) return null
  if (typeof r === "bigint") return null
  return r < min || r > max ? null : r
}

/**
 * The trimmed, sign-and-digits part of `s` as Spark's `UTF8String.toLong` reads it (a fraction
 * after `.` is dropped), as an exact long; null when malformed or outside the long range.
 */
const parseIntegralDigits = (s: string): L.Long | null => {
  let a = 0
  let b = s.length
  while (a < b && isWs(s.charCodeAt(a))) a++
  while (b > a && isWs(s.charCodeAt(b - 1))) b--
  if (a === b) return null
  let i = a
  let negative = false
  const first = s.charCodeAt(i)
  if (first === 45 || first === 43) {
    negative = first === 45
    i++
    if (i === b) return null
  }
  const digitsStart = i
  let result = 0
  for (; i < b; i++) {
    const c = s.charCodeAt(i)
    if (c === 46) break
    if (c < 48 || c > 57) return null
    result = result * 10 + (c - 48)
  }
  const digitsEnd = i
  if (i < b) {
    // after the separator only digits may follow
    for (i = i + 1; i < b; i++) {
      const c = s.charCodeAt(i)
      if (c < 48 || c > 57) return null
    }
  }
  const v = negative ? -result : result
  if (Number.isSafeInteger(v)) return v + 0
  // Beyond 2^53 the digits were accumulated inexactly: settle the range of longs with BigInt
  const digits = s.slice(digitsStart, digitsEnd)
  return L.parseDigits(negative ? `-${digits}` : digits)
}

/** Spark's string to long (non-ANSI `UTF8String.toLong`): exact over Java's range, null outside it. */
export const parseLong = (s: string): L.Long | null => parseIntegralDigits(s)

const javaDoubleRe = /^[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?)$/

/**
 * Spark's string to double: Java's `Double.parseDouble` (trimmed; `1e3`, `1.5d`, `NaN`,
 * `Infinity`), then the case-insensitive special literals `inf`, `+inf`, `infinity`, `-inf`,
 * `-infinity`, `nan`; null otherwise.
 */
export const parseDouble = (s: string): number | null => {
  const t = s.trim()
  if (javaDoubleRe.test(t)) {
    const body = /[fFdD]$/.test(t) && !/Infinity$/.test(t) ? t.slice(0, -1) : t
    return Number(body)
  }
  switch (t.toLowerCase()) {
    case "inf":
    case "+inf":
    case "infinity":
    case "+infinity":
      return Infinity
    case "-inf":
    case "-infinity":
      return -Infinity
    case "nan":
      return NaN
    default:
      return null
  }
}

/** Spark's `StringUtils.isTrueString` / `isFalseString`: trimmed, case-insensitive. */
export const parseBoolean = (s: string): boolean | null => {
  switch (s.trim().toLowerCase()) {
    case "t":
    case "true":
    case "y":
    case "yes":
    case "1":
      return true
    case "f":
    case "false":
    case "n":
    case "no":
    case "0":
      return false
    default:
      return null
  }
}

const utf8Encoder = new TextEncoder()
const utf8Decoder = new TextDecoder("utf-8")

/** UTF-8 bytes of a string (Spark's `UTF8String.getBytes`). */
export const stringToBytes = (s: string): Uint8Array => utf8Encoder.encode(s)

/** A string from UTF-8 bytes (malformed sequences become U+FFFD, as Java's decoder does). */
export const bytesToString = (b: Uint8Array): string => utf8Decoder.decode(b)

/** Big-endian bytes of an integral value, as Spark's `NumberConverter.toBinary`. */
const integralToBinary =
  (width: 4 | 8): CastFunction =>
  (v) => {
    const out = new Uint8Array(width)
    const view = new DataView(out.buffer)
    if (width === 4) view.setInt32(0, v as number)
    else view.setBigInt64(0, L.toBigInt(v as L.Long))
    return out
  }

/** Spark's string form of a value of `t` (non-null), as `cast(x as string)` prints it. */
export const toStringFunction = (t: T.DataType): ((v: unknown) => string) => {
  switch (t._tag) {
    case "null":
      return () => "null"
    case "boolean":
      return (v) => (v ? "true" : "false")
    case "integer":
    case "long":
      return (v) => String(v)
    case "double":
      return (v) => (Object.is(v, -0) ? "-0.0" : formatDouble(v as number))
    case "string":
      return (v) => v as string
    case "binary":
      return (v) => bytesToString(v as Uint8Array)
    case "timestamp":
      return (v) => DT.formatTimestamp(v as number)
    case "date":
      return (v) => DT.formatDate(v as number)
    case "calendarInterval":
      return (v) => (typeof v === "string" ? v : JSON.stringify(v))
    case "array": {
      // Spark: [1, 2, null] (nulls printed as "null" since 3.0)
      const elem = toStringFunction(t.elementType)
      return (v) => {
        const a = v as ReadonlyArray<unknown>
        let s = "["
        for (let i = 0; i < a.length; i++) {
          if (i > 0) s += ", "
          const x = a[i]
          s += x === null || x === undefined ? "null" : elem(x)
        }
        return `${s}]`
      }
    }
    case "struct": {
      const fields = t.fields.map((f) => toStringFunction(f.dataType))
      return (v) => {
        const a = v as ReadonlyArray<unknown>
        let s = "{"
        for (let i = 0; i < fields.length; i++) {
          if (i > 0) s += ", "
          const x = a[i]
          s += x === null || x === undefined ? "null" : fields[i](x)
        }
        return `${s}}`
      }
    }
    case "map": {
      const k = toStringFunction(t.keyType)
      const val = toStringFunction(t.valueType)
      return (v) => {
        let s = "{"
        let first = true
        for (const [a, b] of v as Map<unknown, unknown>) {
          if (!first) s += ", "
          first = false
          s += `${k(a)} -> ${b === null || b === undefined ? "null" : val(b)}`
        }
        return `${s}}`
      }
    }
  }
}

const nullSafe =
  (f: CastFunction): CastFunction =>
  (v) =>
    v === null || v === undefined ? null : f(v)

const identity: CastFunction = (v) => (v === undefined ? null : v)
const alwaysNull: CastFunction = () => null

/** The conversion of non-null values; `undefined` when the cast is not supported. */
const convert = (from: T.DataType, to: T.DataType, nowMs: number | undefined): CastFunction | undefined => {
  if (T.sameType(from, to)) return identity
  if (from._tag === "null") return alwaysNull
  switch (to._tag) {
    case "string":
      return toStringFunction(from)
    case "binary":
      switch (from._tag) {
        case "string":
          return (v) => stringToBytes(v as string)
        case "integer":
          return integralToBinary(4)
        case "long":
          return integralToBinary(8)
        default:
          return undefined
      }
    case "boolean":
      switch (from._tag) {
        case "string":
          return (v) => parseBoolean(v as string)
        case "integer":
        case "long":
        case "timestamp":
          return (v) => v !== 0
        case "double":
          // NaN != 0 in Java, so NaN is true
          return (v) => v !== 0
        case "date":
          // Hive returns null when casting a date to boolean, and so does Spark
          return alwaysNull
        default:
          return undefined
      }
    case "integer":
      switch (from._tag) {
        case "string":
          return (v) => parseIntegral(v as string, INT_MIN, INT_MAX)
        case "boolean":
          return (v) => (v ? 1 : 0)
        case "long":
          return (v) => longToInt(v as number)
        case "double":
          return (v) => doubleToInt(v as number)
        case "timestamp":
          // Spark (non-ANSI): the seconds when they fit an int, else null (issue #21, deviation 3)
          return (v) => {
            const s = Math.floor((v as number) / 1000)
            return s >= INT_MIN && s <= INT_MAX ? s : null
          }
        case "date":
          return alwaysNull
        default:
          return undefined
      }
    case "long":
      switch (from._tag) {
        case "string":
          return (v) => parseIntegralDigits(v as string)
        case "boolean":
          return (v) => (v ? 1 : 0)
        case "integer":
          return identity
        case "double":
          return (v) => doubleToLong(v as number)
        case "timestamp":
          // Spark: Math.floorDiv(micros, MICROS_PER_SECOND)
          return (v) => Math.floor((v as number) / 1000)
        case "date":
          return alwaysNull
        default:
          return undefined
      }
    case "double":
      switch (from._tag) {
        case "string":
          return (v) => parseDouble(v as string)
        case "boolean":
          return (v) => (v ? 1 : 0)
        case "integer":
          return identity
        case "long":
          return (v) => L.toDouble(v as L.Long)
        case "timestamp":
          return (v) => (v as number) / 1000
        case "date":
          return alwaysNull
        default:
          return undefined
      }
    case "timestamp":
      switch (from._tag) {
        case "string": {
          // A time-only string ("10:00:00", "T10:00:00") is today at that time in Spark
          // (issue #21, deviation 8): today is the day of `nowMs`, the query's current time
          const today = nowMs === undefined ? undefined : Math.floor(nowMs / DT.MS_PER_DAY)
          return (v) => DT.stringToTimestamp(v as string, today)
        }
        case "boolean":
          // Spark: true is 1 microsecond after the epoch; at millisecond precision that is the epoch
          return () => 0
        case "integer":
          return (v) => (v as number) * 1000
        case "long":
          return (v) => L.toDouble(v as L.Long) * 1000
        case "double":
          // Spark: (d * MICROS_PER_SECOND).toLong; kept at millisecond precision (floor)
          return (v) => {
            const d = v as number
            if (!Number.isFinite(d)) return null
            return Math.floor(L.toDouble(doubleToLong(d * 1_000_000)) / 1000)
          }
        case "date":
          return (v) => (v as number) * DT.MS_PER_DAY
        default:
          return undefined
      }
    case "date":
      switch (from._tag) {
        case "string":
          return (v) => DT.stringToDate(v as string)
        case "timestamp":
          return (v) => DT.msToDays(v as number)
        default:
          return undefined
      }
    case "calendarInterval":
      return undefined
    case "array": {
      if (from._tag !== "array") return undefined
      const elem = castFunctionOrUndefined(from.elementType, to.elementType, nowMs)
      if (elem === undefined) return undefined
      return (v) => {
        const a = v as ReadonlyArray<unknown>
        const out = new Array<unknown>(a.length)
        for (let i = 0; i < a.length; i++) out[i] = elem(a[i])
        return out
      }
    }
    case "map": {
      if (from._tag !== "map") return undefined
      const k = castFunctionOrUndefined(from.keyType, to.keyType, nowMs)
      const val = castFunctionOrUndefined(from.valueType, to.valueType, nowMs)
      if (k === undefined || val === undefined) return undefined
      return (v) => {
        const out = new Map<unknown, unknown>()
        for (const [a, b] of v as Map<unknown, unknown>) out.set(k(a), val(b))
        return out
      }
    }
    case "struct": {
      if (from._tag !== "struct" || from.fields.length !== to.fields.length) return undefined
      const fs: Array<CastFunction> = []
      for (let i = 0; i < from.fields.length; i++) {
        const f = castFunctionOrUndefined(from.fields[i].dataType, to.fields[i].dataType, nowMs)
        if (f === undefined) return undefined
        fs.push(f)
      }
      return (v) => {
        const a = v as ReadonlyArray<unknown>
        const out = new Array<unknown>(fs.length)
        for (let i = 0; i < fs.length; i++) out[i] = fs[i](a[i])
        return out
      }
    }
    case "null":
      return undefined
  }
}

const castFunctionOrUndefined = (
  from: T.DataType,
  to: T.DataType,
  nowMs: number | undefined
): CastFunction | undefined => {
  const f = convert(from, to, nowMs)
  if (f === undefined) return undefined
  return f === identity || f === alwaysNull ? f : nullSafe(f)
}

/**
 * The closure that casts internal values of `from` to `to`, Spark's non-ANSI `Cast`. Null in
 * gives null out. Throws (a defect: the analyzer checks `canCast` first) when the cast is not
 * supported.
 *
 * @example
 * ```ts
 * import * as T from "./DataType.ts"
 * const toInt = castFunction(T.StringType, T.IntegerType)
 * toInt(" 12 ")  // 12
 * toInt("1.9")   // 1
 * toInt("x")     // null
 * castFunction(T.DoubleType, T.StringType)(1e10) // "1.0E10"
 * ```
 * @since 0.1.0
 */
export const castFunction = (from: T.DataType, to: T.DataType, nowMs?: number): CastFunction => {
  const f = castFunctionOrUndefined(from, to, nowMs)
  if (f === undefined) {
    throw new Error(
      `Cast from ${T.simpleString(from)} to ${T.simpleString(to)} is not supported (the analyzer should have rejected it)`
    )
  }
  return f
}
