/**
 * Hash keys for grouping, joins and deduplication, built once per operator.
 *
 * A single key of a primitive type is used as a `Map` key directly: JavaScript's `Map` compares
 * with SameValueZero, so NaN equals NaN and -0 equals 0, exactly as Spark's grouping sees doubles
 * after `NormalizeFloatingNumbers`. Composite and nested keys become one string from
 * `Ordering.keyString` per part (its encodings never contain the separator used here).
 *
 * @since 0.1.0
 */
import type { DataType } from "../../core/DataType.ts"
import { keyString } from "../../core/Ordering.ts"
import type { InternalRow } from "../../core/Row.ts"

/** A compiled expression: one internal row in, one internal value out. */
export type Evaluator = (row: InternalRow) => unknown

/** What a join key function returns for a row that cannot match (a null in a `=` key). */
export const NO_KEY: unique symbol = Symbol.for("tributary/physical/NoKey")

const isPrimitiveKeyType = (t: DataType): boolean => {
  switch (t._tag) {
    case "integer":
    case "long":
    case "double":
    case "timestamp":
    case "date":
    case "string":
    case "boolean":
    case "null":
      return true
    default:
      return false
  }
}

/** True when keys of these types can be used as `Map` keys directly (one primitive key). */
export const isDirectKey = (types: ReadonlyArray<DataType>): boolean =>
  types.length === 1 && isPrimitiveKeyType(types[0])

/**
 * The `Map` key of one grouping value of type `t`, for grouping with one nested `Map` per
 * grouping column (no composite key built per row): a primitive value is its own key (null for
 * null; `Map`'s SameValueZero puts NaN with NaN and -0.0 with 0.0, as Spark's grouping does), any
 * other value its `Ordering.keyString`.
 */
export const partKey = (t: DataType): ((v: unknown) => unknown) => {
  if (isPrimitiveKeyType(t)) return (v) => (v === undefined ? null : v)
  return keyString(t)
}

const SEP = "\u0001"

/**
 * The grouping key of a row: equal for rows that Spark groups together (nulls form their own
 * group, NaN with NaN, -0.0 with 0.0), different otherwise.
 */
export const groupingKey = (evals: ReadonlyArray<Evaluator>, types: ReadonlyArray<DataType>): Evaluator => {
  if (evals.length === 0) return () => ""
  if (isDirectKey(types)) {
    const e = evals[0]
    return (row) => {
      const v = e(row)
      return v === undefined ? null : v
    }
  }
  const ks = types.map(keyString)
  const n = evals.length
  return (row) => {
    let s = ks[0](evals[0](row))
    for (let i = 1; i < n; i++) s += SEP + ks[i](evals[i](row))
    return s
  }
}

/**
 * The join key of a row, or `NO_KEY` when a part compared with `=` is null (null never equals
 * anything with `=`, but does equal null with `<=>`). `types` must be the same on both sides of
 * a join (the analyzer casts them), and `direct` must be decided once for both sides.
 */
export const joinKey = (
  evals: ReadonlyArray<Evaluator>,
  types: ReadonlyArray<DataType>,
  nullSafe: ReadonlyArray<boolean>,
  direct: boolean
): ((row: InternalRow) => unknown) => {
  if (direct) {
    const e = evals[0]
    const safe = nullSafe[0]
    return (row) => {
      const v = e(row)
      if (v === null || v === undefined) return safe ? null : NO_KEY
      return v
    }
  }
  const ks = types.map(keyString)
  const n = evals.length
  return (row) => {
    let s = ""
    for (let i = 0; i < n; i++) {
      const v = evals[i](row)
      if ((v === null || v === undefined) && !nullSafe[i]) return NO_KEY
      s += i === 0 ? ks[i](v) : SEP + ks[i](v)
    }
    return s
  }
}

/**
 * Spark normalizes grouping values (`NormalizeFloatingNumbers`): -0.0 becomes 0.0, also inside
 * structs and arrays. Returns `undefined` when values of `t` need no normalization.
 */
export const normalizer = (t: DataType): ((v: unknown) => unknown) | undefined => {
  switch (t._tag) {
    case "integer":
    case "long":
    case "double":
      return (v) => (v === 0 ? 0 : v === undefined ? null : v)
    case "array": {
      const inner = normalizer(t.elementType)
      if (inner === undefined) return undefined
      return (v) => (v === null || v === undefined ? null : (v as ReadonlyArray<unknown>).map(inner))
    }
    case "struct": {
      const fs = t.fields.map((f) => normalizer(f.dataType))
      if (fs.every((f) => f === undefined)) return undefined
      return (v) => {
        if (v === null || v === undefined) return null
        const a = v as ReadonlyArray<unknown>
        const out = new Array<unknown>(a.length)
        for (let i = 0; i < a.length; i++) {
          const f = fs[i]
          out[i] = f === undefined ? a[i] : f(a[i])
        }
        return out
      }
    }
    default:
      return undefined
  }
}
