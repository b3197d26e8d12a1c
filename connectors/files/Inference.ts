/**
 * Schema inference for the text-based file formats, following Spark's `JsonInferSchema` and
 * `CSVInferSchema`, plus the Java number parsers whose exact acceptance those rules depend on
 * (`Integer.parseInt`, `Long.parseLong`, `Double.parseDouble`, Scala's `toBoolean`).
 *
 * tributary has no decimal type: where Spark infers `decimal(p, 0)` (integers beyond the long
 * range) these rules infer `double`, which is also what Spark widens such a decimal to whenever
 * it meets a double, so the final types agree except for that one case.
 *
 * @since 0.1.0
 */
import * as T from "../../core/DataType.ts"
import * as Long from "../../core/Long.ts"
import { javaTrim } from "../OptionParsing.ts"

// ---------------------------------------------------------------------------------------------
// Java/Scala parsers
// ---------------------------------------------------------------------------------------------

const INT_MIN = -2147483648
const INT_MAX = 2147483647
const integerRe = /^[+-]?\d+$/

/** Java's `Integer.parseInt` (ASCII digits): `null` when it would throw. */
export const javaParseInt = (s: string): number | null => {
  if (!integerRe.test(s)) return null
  // + 0: "-0" is the integer 0 (Number("-0") is -0)
  const n = Number(s) + 0
  return n < INT_MIN || n > INT_MAX ? null : n
}

/** Java's `Long.parseLong` (ASCII digits): `null` when it would throw. */
export const javaParseLong = (s: string): Long.Long | null => {
  if (!integerRe.test(s)) return null
  // exact: a number while safe, a bigint beyond (core/Long.ts)
  return Long.parseDigits(s)
}

const decimalDoubleRe = /^[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?)$/
const hexDoubleRe = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?[pP]([+-]?\d+)[fFdD]?$/

/**
 * Java's `Double.parseDouble`: trimmed; decimal (`1`, `1.`, `.5`, `1e3`), `NaN`, `Infinity`,
 * hexadecimal (`0x1p3`), an optional `f`/`d` suffix. `null` when it would throw.
 */
export const javaParseDouble = (text: string): number | null => {
  const s = javaTrim(text)
  if (decimalDoubleRe.test(s)) {
    const last = s.charCodeAt(s.length - 1)
    // f, F, d, D suffixes
    const body = last === 102 || last === 70 || last === 100 || last === 68 ? s.slice(0, -1) : s
    return Number(body)
  }
  const m = hexDoubleRe.exec(s)
  if (m !== null && (m[2].length > 0 || (m[3] ?? "").length > 0)) {
    const frac = m[3] ?? ""
    const mantissa = Number.parseInt(`${m[2]}${frac}` || "0", 16)
    const v = mantissa * 2 ** (Number(m[4]) - 4 * frac.length)
    return m[1] === "-" ? -v : v
  }
  return null
}

/** Scala's `StringOps.toBoolean`: `true`/`false` in any case, `null` otherwise. */
export const scalaToBoolean = (s: string): boolean | null => {
  const l = s.toLowerCase()
  return l === "true" ? true : l === "false" ? false : null
}

// ---------------------------------------------------------------------------------------------
// Type widening
// ---------------------------------------------------------------------------------------------

const numericRank = (t: T.DataType): number =>
  t._tag === "integer" ? 1 : t._tag === "long" ? 2 : t._tag === "double" ? 3 : 0

/**
 * Spark's `TypeCoercion.findTightestCommonType` for the types inference produces: equal types,
 * null with anything, numeric widening, date with timestamp; `undefined` otherwise.
 */
export const tightestCommonType = (a: T.DataType, b: T.DataType): T.DataType | undefined => {
  if (T.sameType(a, b)) return a
  if (a._tag === "null") return b
  if (b._tag === "null") return a
  const ra = numericRank(a)
  const rb = numericRank(b)
  if (ra > 0 && rb > 0) return ra >= rb ? a : b
  if (T.isDatetime(a) && T.isDatetime(b)) return T.TimestampType
  return undefined
}

// ---------------------------------------------------------------------------------------------
// JSON (JsonInferSchema)
// ---------------------------------------------------------------------------------------------

const byName = (x: T.StructField, y: T.StructField): number => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0)

/** Sorts struct fields by name, as `JsonInferSchema.inferField` does for every object. */
export const sortFields = (fields: Array<T.StructField>): Array<T.StructField> => fields.sort(byName)

/**
 * Spark's `JsonInferSchema.compatibleType`: the tightest common type, else merged structs
 * (fields sorted by name), merged arrays, and `string` for anything else.
 */
export const jsonCompatibleType = (a: T.DataType, b: T.DataType): T.DataType => {
  if (a === b) return a
  if (a._tag === "struct" && b._tag === "struct") return mergeStructs(a, b)
  if (a._tag === "array" && b._tag === "array") {
    const e = jsonCompatibleType(a.elementType, b.elementType)
    const containsNull = a.containsNull || b.containsNull
    return e === a.elementType && containsNull === a.containsNull ? a : T.array(e, containsNull)
  }
  return tightestCommonType(a, b) ?? T.StringType
}

const mergeStructs = (a: T.StructType, b: T.StructType): T.StructType => {
  // both are sorted by name: merge the two lists; `a` itself when `b` adds nothing, so that
  // folding many records of one shape allocates nothing
  const out: Array<T.StructField> = []
  let changed = false
  let i = 0
  let j = 0
  while (i < a.fields.length && j < b.fields.length) {
    const fa = a.fields[i]
    const fb = b.fields[j]
    if (fa.name === fb.name) {
      const t = jsonCompatibleType(fa.dataType, fb.dataType)
      if (t === fa.dataType && fa.nullable) out.push(fa)
      else {
        out.push(T.field(fa.name, t, true))
        changed = true
      }
      i++
      j++
    } else if (fa.name < fb.name) {
      out.push(fa)
      i++
    } else {
      out.push(fb)
      changed = true
      j++
    }
  }
  while (i < a.fields.length) out.push(a.fields[i++])
  if (j < b.fields.length) changed = true
  while (j < b.fields.length) out.push(b.fields[j++])
  return changed ? T.struct(out) : a
}

/** What the root merge does with a record that is not an object (`withCorruptField`). */
export type CorruptRootHandling = "addCorruptField" | "ignore" | "fail"

/** Thrown by `jsonCompatibleRootType` in FAILFAST mode when a record is not an object. */
export class NonObjectRecord {
  readonly type: T.DataType
  constructor(type: T.DataType) {
    this.type = type
  }
}

/**
 * Spark's `JsonInferSchema.compatibleRootType`: top-level arrays are unwrapped, empty records
 * dropped, and a record that is not an object adds the corrupt-record column (PERMISSIVE), is
 * ignored (DROPMALFORMED) or fails (FAILFAST, throws `NonObjectRecord`).
 */
export const jsonCompatibleRootType = (
  a: T.DataType,
  b: T.DataType,
  corruptColumn: string,
  handling: CorruptRootHandling
): T.DataType => {
  if (a._tag === "array") return jsonCompatibleRootType(a.elementType, b, corruptColumn, handling)
  if (b._tag === "array") return jsonCompatibleRootType(a, b.elementType, corruptColumn, handling)
  if (a._tag === "struct" && b._tag === "null") return a
  if (a._tag === "null" && b._tag === "struct") return b
  if (a._tag === "struct" && b._tag !== "struct") return withCorruptField(a, b, corruptColumn, handling)
  if (b._tag === "struct" && a._tag !== "struct") return withCorruptField(b, a, corruptColumn, handling)
  return jsonCompatibleType(a, b)
}

const withCorruptField = (
  s: T.StructType,
  other: T.DataType,
  corruptColumn: string,
  handling: CorruptRootHandling
): T.StructType => {
  switch (handling) {
    case "addCorruptField":
      if (s.fields.some((f) => f.name === corruptColumn)) return s
      return T.struct(sortFields([T.field(corruptColumn, T.StringType, true), ...s.fields]))
    case "ignore":
      return s
    case "fail":
      throw new NonObjectRecord(other)
  }
}

/**
 * Spark's `JsonInferSchema.canonicalizeType`: fields with empty names and empty structs are
 * removed, `null` becomes `string` (or the field is dropped with `dropFieldIfAllNull`).
 * `undefined` means "drop".
 */
export const canonicalizeJsonType = (t: T.DataType, dropFieldIfAllNull: boolean): T.DataType | undefined => {
  switch (t._tag) {
    case "array": {
      const e = canonicalizeJsonType(t.elementType, dropFieldIfAllNull)
      return e === undefined ? undefined : T.array(e, t.containsNull)
    }
    case "struct": {
      const fields: Array<T.StructField> = []
      for (const f of t.fields) {
        if (f.name.length === 0) continue
        const ft = canonicalizeJsonType(f.dataType, dropFieldIfAllNull)
        if (ft !== undefined) fields.push(T.field(f.name, ft, f.nullable))
      }
      return fields.length === 0 ? undefined : T.struct(fields)
    }
    case "null":
      return dropFieldIfAllNull ? undefined : T.StringType
    default:
      return t
  }
}

// ---------------------------------------------------------------------------------------------
// CSV (CSVInferSchema)
// ---------------------------------------------------------------------------------------------

/** What CSV inference needs from the options. */
export interface CsvInferOptions {
  readonly nullValue: string
  readonly nanValue: string
  readonly positiveInf: string
  readonly negativeInf: string
  /** `preferDate` (Spark default true): try `date` before `timestamp`. */
  readonly preferDate: boolean
  readonly isDate: (s: string) => boolean
  readonly isTimestamp: (s: string) => boolean
  /**
   * Whether a column mixing dates and timestamps becomes `timestamp` (no `timestampFormat`
   * and a date format the lenient timestamp parser reads) rather than `string`.
   */
  readonly datesWidenToTimestamp: boolean
}

/**
 * Spark's `CSVInferSchema.inferField`: the type of a column after seeing one more value. Starts
 * from `null`; tries int, long, double, date, timestamp, boolean and string in that order,
 * beginning at the type seen so far.
 */
export const csvInferField = (o: CsvInferOptions, typeSoFar: T.DataType, field: string | null): T.DataType => {
  if (field === null || field.length === 0 || field === o.nullValue) return typeSoFar
  let t: T.DataType
  switch (typeSoFar._tag) {
    case "null":
    case "integer":
      t = tryInteger(o, field)
      break
    case "long":
      t = tryLong(o, field)
      break
    case "double":
      t = tryDouble(o, field)
      break
    case "date":
      t = tryDate(o, field)
      break
    case "timestamp":
      t = tryTimestamp(o, field)
      break
    case "boolean":
      t = tryBoolean(field)
      break
    default:
      return T.StringType
  }
  return csvCompatibleType(o, typeSoFar, t) ?? T.StringType
}

const tryInteger = (o: CsvInferOptions, f: string): T.DataType =>
  javaParseInt(f) !== null ? T.IntegerType : tryLong(o, f)

// Spark tries `decimal` between long and double; every string it accepts there is also a
// double here (tributary reads decimals as doubles), so the step folds into `tryDouble`.
const tryLong = (o: CsvInferOptions, f: string): T.DataType =>
  javaParseLong(f) !== null ? T.LongType : tryDouble(o, f)

const tryDouble = (o: CsvInferOptions, f: string): T.DataType => {
  if (javaParseDouble(f) !== null || f === o.nanValue || f === o.negativeInf || f === o.positiveInf) {
    return T.DoubleType
  }
  return o.preferDate ? tryDate(o, f) : tryTimestamp(o, f)
}

const tryDate = (o: CsvInferOptions, f: string): T.DataType => (o.isDate(f) ? T.DateType : tryTimestamp(o, f))

const tryTimestamp = (o: CsvInferOptions, f: string): T.DataType => (o.isTimestamp(f) ? T.TimestampType : tryBoolean(f))

const tryBoolean = (f: string): T.DataType => (scalaToBoolean(f) !== null ? T.BooleanType : T.StringType)

/** Spark's `CSVInferSchema.compatibleType`. */
export const csvCompatibleType = (o: CsvInferOptions, a: T.DataType, b: T.DataType): T.DataType | undefined => {
  if ((a._tag === "date" && b._tag === "timestamp") || (a._tag === "timestamp" && b._tag === "date")) {
    return o.datesWidenToTimestamp ? T.TimestampType : T.StringType
  }
  const tight = tightestCommonType(a, b)
  if (tight !== undefined) return tight
  if (a._tag === "string" || b._tag === "string") return T.StringType
  return undefined
}
