/**
 * Spark's ordering of internal values, per data type, and the equality that grouping and joins
 * use. Built once per type; the returned comparators run in the hot loops.
 *
 * Numbers order numerically with NaN above every other value and NaN equal to NaN (Spark's
 * `SQLOrderingUtil.compareDoubles`); strings by code point; `false < true`; arrays and structs
 * element by element; binary by unsigned bytes. Nulls are not handled here: a `SortOrder` says
 * where they go, and callers check them first.
 *
 * @since 0.1.0
 */
import type { DataType } from "./DataType.ts"

export type Comparator = (a: unknown, b: unknown) => number

const compareNumbers: Comparator = (a, b) => {
  const x = a as number
  const y = b as number
  if (x < y) return -1
  if (x > y) return 1
  if (x === y) return 0
  const xn = Number.isNaN(x)
  const yn = Number.isNaN(y)
  return xn && yn ? 0 : xn ? 1 : -1
}

// Spark compares strings by their UTF-8 bytes, which is code point order. JavaScript's `<`
// compares UTF-16 code units, which agrees except where one string has a surrogate (half of a code
// point above U+FFFF, like an emoji) and the other a unit in U+E000–U+FFFF (like "！"): there
// the surrogate's code point is the larger one.
const compareStrings: Comparator = (a, b) => {
  const x = a as string
  const y = b as string
  if (x === y) return 0
  const n = Math.min(x.length, y.length)
  for (let i = 0; i < n; i++) {
    const cx = x.charCodeAt(i)
    const cy = y.charCodeAt(i)
    if (cx !== cy) {
      const sx = cx >= 0xd800 && cx <= 0xdfff
      const sy = cy >= 0xd800 && cy <= 0xdfff
      if (sx !== sy) return sx ? 1 : -1
      return cx < cy ? -1 : 1
    }
  }
  return x.length < y.length ? -1 : x.length > y.length ? 1 : 0
}

const compareBooleans: Comparator = (a, b) => (a === b ? 0 : a ? 1 : -1)

const compareBinary: Comparator = (a, b) => {
  const x = a as Uint8Array
  const y = b as Uint8Array
  const n = Math.min(x.length, y.length)
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i] - y[i]
  return x.length - y.length
}

/** Nulls first: the default for nested values (Spark orders null below any value inside arrays and structs). */
const nullsFirst =
  (c: Comparator): Comparator =>
  (a, b) => {
    if (a === null || a === undefined) return b === null || b === undefined ? 0 : -1
    if (b === null || b === undefined) return 1
    return c(a, b)
  }

/** The comparator for non-null internal values of `t`. */
export const comparator = (t: DataType): Comparator => {
  switch (t._tag) {
    case "integer":
    case "long":
    case "double":
    case "timestamp":
    case "date":
      return compareNumbers
    case "string":
      return compareStrings
    case "boolean":
      return compareBooleans
    case "binary":
      return compareBinary
    case "null":
    case "calendarInterval":
    case "map":
      return () => 0
    case "array": {
      const elem = nullsFirst(comparator(t.elementType))
      return (a, b) => {
        const x = a as ReadonlyArray<unknown>
        const y = b as ReadonlyArray<unknown>
        const n = Math.min(x.length, y.length)
        for (let i = 0; i < n; i++) {
          const c = elem(x[i], y[i])
          if (c !== 0) return c
        }
        return x.length - y.length
      }
    }
    case "struct": {
      const fields = t.fields.map((f) => nullsFirst(comparator(f.dataType)))
      return (a, b) => {
        const x = a as ReadonlyArray<unknown>
        const y = b as ReadonlyArray<unknown>
        for (let i = 0; i < fields.length; i++) {
          const c = fields[i](x[i], y[i])
          if (c !== 0) return c
        }
        return 0
      }
    }
  }
}

/**
 * Equality of internal values of `t` as grouping, joins and `=` see it: numbers by value with
 * NaN equal to NaN and 0 equal to -0 (Spark normalizes both for grouping), arrays, structs and
 * binary element-wise, null equal to null (callers decide whether null keys match).
 */
export const equality = (t: DataType): ((a: unknown, b: unknown) => boolean) => {
  switch (t._tag) {
    case "integer":
    case "long":
    case "double":
    case "timestamp":
    case "date":
      return (a, b) => a === b || (Number.isNaN(a as number) && Number.isNaN(b as number))
    case "string":
    case "boolean":
    case "null":
      return (a, b) => a === b
    default: {
      const c = comparator(t)
      return (a, b) => {
        if (a === null || a === undefined || b === null || b === undefined) {
          return (a === null || a === undefined) && (b === null || b === undefined)
        }
        return c(a, b) === 0
      }
    }
  }
}

/**
 * A string that is equal for equal values of `t` and different otherwise: the key grouping,
 * joins and dedup use for composite or nested values. Primitive single keys should be used as
 * Map keys directly instead (faster).
 */
export const keyString = (t: DataType): ((v: unknown) => string) => {
  switch (t._tag) {
    case "integer":
    case "long":
    case "double":
    case "timestamp":
    case "date":
      return (v) => (v === null || v === undefined ? "\u0000" : Object.is(v, -0) ? "0" : String(v))
    case "string":
      return (v) => (v === null || v === undefined ? "\u0000" : JSON.stringify(v))
    case "boolean":
      return (v) => (v === null || v === undefined ? "\u0000" : v ? "t" : "f")
    case "binary":
      return (v) => (v === null || v === undefined ? "\u0000" : `b${Array.from(v as Uint8Array).join(",")}`)
    case "null":
    case "calendarInterval":
      return (v) => (v === null || v === undefined ? "\u0000" : JSON.stringify(v))
    case "array": {
      const elem = keyString(t.elementType)
      return (v) => (v === null || v === undefined ? "\u0000" : `[${(v as ReadonlyArray<unknown>).map(elem).join(",")}]`)
    }
    case "struct": {
      const fields = t.fields.map((f) => keyString(f.dataType))
      return (v) => {
        if (v === null || v === undefined) return "\u0000"
        const a = v as ReadonlyArray<unknown>
        let s = "{"
        for (let i = 0; i < fields.length; i++) s += `${i > 0 ? "," : ""}${fields[i](a[i])}`
        return `${s}}`
      }
    }
    case "map": {
      const k = keyString(t.keyType)
      const val = keyString(t.valueType)
      return (v) => {
        if (v === null || v === undefined) return "\u0000"
        const parts = [...(v as Map<unknown, unknown>)].map(([a, b]) => `${k(a)}:${val(b)}`).sort()
        return `m{${parts.join(",")}}`
      }
    }
  }
}
