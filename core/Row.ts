/**
 * Rows inside the engine and at its edges.
 *
 * Inside, a row is a positional array (`InternalRow`) ordered like its plan's output
 * attributes, and values use Spark's internal forms: timestamps are epoch milliseconds, dates
 * are days since the epoch, structs are positional arrays, maps are `Map`s, null is `null`.
 * At the edges (`createDataFrame`, `collect`, user functions) rows are plain objects with `Date`
 * timestamps and object structs. Converters are built once per schema, not per row.
 *
 * @since 0.1.0
 */
import type { DataType, StructType } from "./DataType.ts"
import { fromBigInt } from "./Long.ts"

export type InternalRow = ReadonlyArray<unknown>

const MS_PER_DAY = 86_400_000

/** External value to internal value, for one data type. */
export type ToInternal = (value: unknown) => unknown
/** Internal value to external value, for one data type. */
export type ToExternal = (value: unknown) => unknown

const identity = (v: unknown): unknown => (v === undefined ? null : v)

const timestampToInternal = (v: unknown): unknown => {
  if (v === null || v === undefined) return null
  if (v instanceof Date) return v.getTime()
  if (typeof v === "number") return v
  if (typeof v === "string") {
    const t = Date.parse(v)
    return Number.isNaN(t) ? null : t
  }
  return null
}

const dateToInternal = (v: unknown): unknown => {
  if (v === null || v === undefined) return null
  if (v instanceof Date) return Math.floor(v.getTime() / MS_PER_DAY)
  if (typeof v === "number") return v
  if (typeof v === "string") {
    const t = Date.parse(v)
    return Number.isNaN(t) ? null : Math.floor(t / MS_PER_DAY)
  }
  return null
}

// a user's bigint becomes the canonical long: a number when safe (core/Long.ts)
const longToInternal = (v: unknown): unknown => (v === undefined ? null : typeof v === "bigint" ? fromBigInt(v) : v)

/** Builds the converter from external values of `t` to internal ones. */
export const toInternal = (t: DataType): ToInternal => {
  switch (t._tag) {
    case "long":
      return longToInternal
    case "timestamp":
      return timestampToInternal
    case "date":
      return dateToInternal
    case "struct": {
      const names = t.fields.map((f) => f.name)
      const convs = t.fields.map((f) => toInternal(f.dataType))
      // Fields whose values are the same inside and out are copied without a call.
      const plain = convs.map((c) => c === identity)
      const n = names.length
      return (v) => {
        if (v === null || v === undefined) return null
        const o = v as Record<string, unknown>
        const out = new Array<unknown>(n)
        for (let i = 0; i < n; i++) {
          const x = o[names[i]]
          out[i] = plain[i] ? (x === undefined ? null : x) : convs[i](x)
        }
        return out
      }
    }
    case "array": {
      const conv = toInternal(t.elementType)
      return (v) => (v === null || v === undefined ? null : Array.from(v as Iterable<unknown>, conv))
    }
    case "map": {
      const kc = toInternal(t.keyType)
      const vc = toInternal(t.valueType)
      return (v) => {
        if (v === null || v === undefined) return null
        const entries = v instanceof Map ? v.entries() : Object.entries(v as object)
        const out = new Map<unknown, unknown>()
        for (const [k, x] of entries) out.set(kc(k), vc(x))
        return out
      }
    }
    default:
      return identity
  }
}

/** Builds the converter from internal values of `t` to external ones. */
export const toExternal = (t: DataType): ToExternal => {
  switch (t._tag) {
    case "timestamp":
      return (v) => (v === null || v === undefined ? null : new Date(v as number))
    case "date":
      return (v) => (v === null || v === undefined ? null : new Date((v as number) * MS_PER_DAY))
    case "struct": {
      const names = t.fields.map((f) => f.name)
      const convs = t.fields.map((f) => toExternal(f.dataType))
      return (v) => {
        if (v === null || v === undefined) return null
        const a = v as InternalRow
        const out: Record<string, unknown> = {}
        for (let i = 0; i < names.length; i++) out[names[i]] = convs[i](a[i])
        return out
      }
    }
    case "array": {
      const conv = toExternal(t.elementType)
      return (v) => (v === null || v === undefined ? null : (v as ReadonlyArray<unknown>).map(conv))
    }
    case "map": {
      const kc = toExternal(t.keyType)
      const vc = toExternal(t.valueType)
      return (v) => {
        if (v === null || v === undefined) return null
        const out = new Map<unknown, unknown>()
        for (const [k, x] of v as Map<unknown, unknown>) out.set(kc(k), vc(x))
        return out
      }
    }
    default:
      return identity
  }
}

/** Converts external row objects to internal rows of `schema`, in one loop. */
export const rowsToInternal = (schema: StructType, rows: Iterable<unknown>): Array<InternalRow> => {
  const conv = toInternal(schema) as (v: unknown) => InternalRow
  const out: Array<InternalRow> = []
  for (const r of rows) out.push(conv(r))
  return out
}

/** Converts internal rows of `schema` to external row objects, in one loop. */
export const rowsToExternal = <R = Record<string, unknown>>(
  schema: StructType,
  rows: ReadonlyArray<InternalRow>
): Array<R> => {
  const conv = toExternal(schema) as (v: unknown) => R
  const out = new Array<R>(rows.length)
  for (let i = 0; i < rows.length; i++) out[i] = conv(rows[i])
  return out
}
