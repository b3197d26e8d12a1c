/**
 * The Arrow codec of the Spark Connect backend: Spark's result batches to tributary's internal
 * rows, and internal rows to the Arrow IPC stream a `LocalRelation` carries.
 *
 * Spark Connect sends each `ExecutePlanResponse.arrow_batch.data` as a complete Arrow IPC stream
 * (a schema and record batches) written by Spark's `ArrowConverters`, with the types of Spark's
 * `ArrowUtils.toArrowType` (`bigint` as Int64, `timestamp` as Timestamp(MICROSECOND, session
 * time zone), `date` as Date(DAY), `decimal(p,s)` as Decimal128, maps as Map<entries<key,
 * value>>). Decoding reads each Arrow column's buffers once, in plain loops, and fills positional
 * rows with tributary's internal values (`core/Row.ts`):
 *
 * - `bigint` → a JS number when it lies within ±(2^53−1), else a `bigint` (no silent rounding);
 * - `timestamp`/`timestamp_ntz` → epoch milliseconds, the micros floor-divided by 1000 (so
 *   `1969-12-31 23:59:59.999999` is -1, as Spark's `Math.floorDiv` gives);
 * - `date` → days since the epoch; `decimal` → the nearest double; `float` → its exact double;
 * - intervals → `{ months, days, micros }` (core/Durations.ts `CalendarInterval`); a day-time
 *   interval is split into whole days and the remaining micros, so any Spark value fits exactly;
 * - structs → positional arrays; arrays → arrays; maps → `Map`; binary → `Uint8Array`.
 *
 * @since 0.4.0
 */
import * as arrow from "apache-arrow"
import { Result } from "effect"
import * as T from "../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../core/Errors.ts"
import type { CalendarInterval } from "../core/Durations.ts"
import type { InternalRow } from "../core/Row.ts"
import * as Types from "./Types.ts"

const TWO_32 = 4294967296
/** hi word bound under which `hi * 2^32 + lo` is an exact double. */
const HI_SAFE = 2097152
const MICROS_PER_DAY = 86_400_000_000
const MICROS_PER_DAY_BIG = 86_400_000_000n

/** The decoded result of a query: its schema and its rows in tributary's internal form. */
export interface Decoded {
  readonly schema: T.StructType
  readonly rows: Array<InternalRow>
}

// ---------------------------------------------------------------------------------------------
// decoding
// ---------------------------------------------------------------------------------------------

/** Whether slot `i` of `data` is valid (not null). */
const validity = (data: arrow.Data): ((i: number) => boolean) => {
  const bitmap = data.nullBitmap
  if (data.nullCount === 0 || bitmap === undefined || bitmap.length === 0) return () => true
  const off = data.offset
  return (i) => {
    const j = off + i
    return ((bitmap[j >> 3] >> (j & 7)) & 1) === 1
  }
}

/** Low (unsigned) and high (signed) 32-bit words of an Int64-like buffer. */
const words = (values: BigInt64Array): { readonly lo: Uint32Array; readonly hi: Int32Array } => ({
  lo: new Uint32Array(values.buffer, values.byteOffset, values.length * 2),
  hi: new Int32Array(values.buffer, values.byteOffset, values.length * 2)
})

/** A 64-bit integer as a number when it is a safe integer, else as a `bigint`. */
const longValue = (lo: number, hi: number, big: BigInt64Array, i: number): number | bigint => {
  if (hi >= -HI_SAFE && hi < HI_SAFE) {
    const v = hi * TWO_32 + lo
    if (v !== -9007199254740992) return v
  }
  return big[i]
}

/** `Math.floorDiv(micros, 1000)` of a 64-bit value given by its words. */
const microsToMillis = (lo: number, hi: number, big: BigInt64Array, i: number): number => {
  if (hi >= -HI_SAFE && hi < HI_SAFE) {
    const v = hi * TWO_32 + lo
    const r = v % 1000
    // v - r is an exact multiple of 1000, so the division is exact; r < 0 means v was below it.
    return (v - r) / 1000 - (r < 0 ? 1 : 0)
  }
  const b = big[i]
  const q = b / 1000n
  return Number(b % 1000n < 0n ? q - 1n : q)
}

const dayTimeInterval = (lo: number, hi: number, big: BigInt64Array, i: number): CalendarInterval => {
  if (hi >= -HI_SAFE && hi < HI_SAFE) {
    const v = hi * TWO_32 + lo
    // Exact truncating division: the remainder takes the dividend's sign, as Java's `%`.
    const micros = v % MICROS_PER_DAY
    return { months: 0, days: (v - micros) / MICROS_PER_DAY, micros: micros === 0 ? 0 : micros }
  }
  const b = big[i]
  const days = b / MICROS_PER_DAY_BIG
  return { months: 0, days: Number(days), micros: Number(b - days * MICROS_PER_DAY_BIG) }
}

const POW10: ReadonlyArray<number> = Array.from({ length: 23 }, (_, i) => 10 ** i)

/** A Decimal128/256 value (little-endian 32-bit words) as the nearest double. */
const decimalValue = (w: Uint32Array, base: number, stride: number, scale: number): number => {
  const w0 = w[base]
  const w1 = w[base + 1]
  let upperZero = true
  let upperOnes = true
  for (let k = 2; k < stride; k++) {
    const x = w[base + k]
    if (x !== 0) upperZero = false
    if (x !== 0xffffffff) upperOnes = false
  }
  // Fast path: the unscaled value is an exact double and 10^scale is too, so one division gives
  // the correctly rounded result, as Java's BigDecimal.doubleValue does.
  if (scale <= 22 && scale >= 0) {
    if (upperZero && w1 < HI_SAFE) return (w1 * TWO_32 + w0) / POW10[scale]
    if (upperOnes && w1 >= 0xffe00000) return ((w1 | 0) * TWO_32 + w0) / POW10[scale]
  }
  let big = 0n
  for (let k = stride - 1; k >= 0; k--) big = (big << 32n) | BigInt(w[base + k])
  const bits = BigInt(stride * 32)
  if ((w[base + stride - 1] & 0x80000000) !== 0) big -= 1n << bits
  if (scale <= 0) return Number(big * 10n ** BigInt(-scale))
  const neg = big < 0n
  const digits = (neg ? -big : big).toString().padStart(scale + 1, "0")
  return Number(`${neg ? "-" : ""}${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`)
}

const utf8 = new TextDecoder("utf-8")

/** Reads an Arrow string column: one decode of the whole buffer when it is ASCII. */
const decodeStrings = (
  values: Uint8Array,
  offsetAt: (i: number) => number,
  length: number,
  valid: (i: number) => boolean
): Array<unknown> => {
  const out = new Array<unknown>(length)
  if (length === 0) return out
  const start = offsetAt(0)
  const end = offsetAt(length)
  let ascii = true
  for (let k = start; k < end; k++) {
    if (values[k] > 0x7f) {
      ascii = false
      break
    }
  }
  if (ascii) {
    // Byte offsets equal UTF-16 offsets in ASCII text.
    const all = utf8.decode(values.subarray(start, end))
    for (let i = 0; i < length; i++) out[i] = valid(i) ? all.slice(offsetAt(i) - start, offsetAt(i + 1) - start) : null
  } else {
    for (let i = 0; i < length; i++)
      out[i] = valid(i) ? utf8.decode(values.subarray(offsetAt(i), offsetAt(i + 1))) : null
  }
  return out
}

const offsetReader = (offsets: Int32Array | BigInt64Array): ((i: number) => number) =>
  offsets instanceof BigInt64Array ? (i) => Number(offsets[i]) : (i) => offsets[i]

/**
 * A row maker over decoded columns: `rowAt(i)` is row `i`. Array literals for the common widths,
 * which V8 builds several times faster than a filled `new Array(m)` (row building dominates
 * decoding).
 */
const rowMaker = (cols: ReadonlyArray<ReadonlyArray<unknown>>): ((i: number) => Array<unknown>) => {
  const [c0, c1, c2, c3, c4, c5, c6, c7] = cols
  switch (cols.length) {
    case 0:
      return () => []
    case 1:
      return (i) => [c0[i]]
    case 2:
      return (i) => [c0[i], c1[i]]
    case 3:
      return (i) => [c0[i], c1[i], c2[i]]
    case 4:
      return (i) => [c0[i], c1[i], c2[i], c3[i]]
    case 5:
      return (i) => [c0[i], c1[i], c2[i], c3[i], c4[i]]
    case 6:
      return (i) => [c0[i], c1[i], c2[i], c3[i], c4[i], c5[i]]
    case 7:
      return (i) => [c0[i], c1[i], c2[i], c3[i], c4[i], c5[i], c6[i]]
    case 8:
      return (i) => [c0[i], c1[i], c2[i], c3[i], c4[i], c5[i], c6[i], c7[i]]
    default: {
      const m = cols.length
      return (i) => {
        const row = new Array<unknown>(m)
        for (let k = 0; k < m; k++) row[k] = cols[k][i]
        return row
      }
    }
  }
}

/** Decodes one Arrow column (a `Data`) into tributary's internal values, one per slot. */
const decodeData = (field: arrow.Field, data: arrow.Data, path: string): Array<unknown> => {
  const n = data.length
  const valid = validity(data)
  const out = new Array<unknown>(n)
  const type = data.type
  switch (type.typeId) {
    case arrow.Type.Null:
      out.fill(null)
      return out
    case arrow.Type.Bool: {
      const bits = data.values as Uint8Array
      const off = data.offset
      for (let i = 0; i < n; i++) {
        const j = off + i
        out[i] = valid(i) ? ((bits[j >> 3] >> (j & 7)) & 1) === 1 : null
      }
      return out
    }
    case arrow.Type.Int: {
      const it = type as arrow.Int
      if (it.bitWidth === 64) {
        const big = data.values as BigInt64Array
        const { lo, hi } = words(big)
        for (let i = 0; i < n; i++) out[i] = valid(i) ? longValue(lo[2 * i], hi[2 * i + 1], big, i) : null
      } else {
        const v = data.values as Int8Array | Int16Array | Int32Array
        for (let i = 0; i < n; i++) out[i] = valid(i) ? v[i] : null
      }
      return out
    }
    case arrow.Type.Float: {
      const v = data.values as Float32Array | Float64Array
      for (let i = 0; i < n; i++) out[i] = valid(i) ? v[i] : null
      return out
    }
    case arrow.Type.Decimal: {
      const dt = type as arrow.Decimal
      const w = data.values as Uint32Array
      const stride = dt.bitWidth / 32
      for (let i = 0; i < n; i++) out[i] = valid(i) ? decimalValue(w, i * stride, stride, dt.scale) : null
      return out
    }
    case arrow.Type.Utf8:
    case arrow.Type.LargeUtf8:
      return decodeStrings(
        data.values as Uint8Array,
        offsetReader(data.valueOffsets as Int32Array | BigInt64Array),
        n,
        valid
      )
    case arrow.Type.Binary:
    case arrow.Type.LargeBinary: {
      const v = data.values as Uint8Array
      const at = offsetReader(data.valueOffsets as Int32Array | BigInt64Array)
      for (let i = 0; i < n; i++) out[i] = valid(i) ? v.slice(at(i), at(i + 1)) : null
      return out
    }
    case arrow.Type.Date: {
      if ((type as arrow.Date_).unit === arrow.DateUnit.DAY) {
        const v = data.values as Int32Array
        for (let i = 0; i < n; i++) out[i] = valid(i) ? v[i] : null
      } else {
        const big = data.values as BigInt64Array
        for (let i = 0; i < n; i++) out[i] = valid(i) ? Math.floor(Number(big[i]) / 86_400_000) : null
      }
      return out
    }
    case arrow.Type.Timestamp: {
      const big = data.values as BigInt64Array
      const { lo, hi } = words(big)
      for (let i = 0; i < n; i++) out[i] = valid(i) ? microsToMillis(lo[2 * i], hi[2 * i + 1], big, i) : null
      return out
    }
    case arrow.Type.Duration: {
      const big = data.values as BigInt64Array
      const { lo, hi } = words(big)
      for (let i = 0; i < n; i++) out[i] = valid(i) ? dayTimeInterval(lo[2 * i], hi[2 * i + 1], big, i) : null
      return out
    }
    case arrow.Type.Interval: {
      const v = data.values as Int32Array
      if ((type as arrow.Interval).unit === arrow.IntervalUnit.YEAR_MONTH) {
        for (let i = 0; i < n; i++)
          out[i] = valid(i) ? ({ months: v[i], days: 0, micros: 0 } satisfies CalendarInterval) : null
      } else {
        // MONTH_DAY_NANO: months, days (int32), nanos (int64); Spark keeps micros (nanos / 1000).
        const u = new Uint32Array(v.buffer, v.byteOffset, v.length)
        for (let i = 0; i < n; i++) {
          if (!valid(i)) {
            out[i] = null
            continue
          }
          const b = 4 * i
          const hi = v[b + 3]
          const lo = u[b + 2]
          let micros: number
          if (hi >= -HI_SAFE && hi < HI_SAFE) {
            // Java's truncating long division; v - r is an exact multiple of 1000.
            const v = hi * TWO_32 + lo
            micros = (v - (v % 1000)) / 1000
          } else micros = Number(((BigInt(hi) << 32n) | BigInt(lo)) / 1000n)
          out[i] = { months: v[b], days: v[b + 1], micros } satisfies CalendarInterval
        }
      }
      return out
    }
    case arrow.Type.List: {
      const offsets = data.valueOffsets as Int32Array
      const childField = (type as arrow.List).children[0]
      const child = decodeData(childField, data.children[0], `${path}.element`)
      for (let i = 0; i < n; i++) out[i] = valid(i) ? child.slice(offsets[i], offsets[i + 1]) : null
      return out
    }
    case arrow.Type.Struct: {
      const fields = (type as arrow.Struct).children
      const rowAt = rowMaker(fields.map((f, k) => decodeData(f, data.children[k], `${path}.${f.name}`)))
      for (let i = 0; i < n; i++) out[i] = valid(i) ? rowAt(i) : null
      return out
    }
    case arrow.Type.Map: {
      const offsets = data.valueOffsets as Int32Array
      const entries = data.children[0]
      const [kf, vf] = (type as arrow.Map_).children[0].type.children
      const keys = decodeData(kf, entries.children[0], `${path}.key`)
      const vals = decodeData(vf, entries.children[1], `${path}.value`)
      for (let i = 0; i < n; i++) {
        if (!valid(i)) {
          out[i] = null
          continue
        }
        const m = new Map<unknown, unknown>()
        for (let k = offsets[i]; k < offsets[i + 1]; k++) m.set(keys[k], vals[k])
        out[i] = m
      }
      return out
    }
    default:
      // fromArrowSchema has already refused every other type; reaching here is a bug.
      throw new Error(`tributary: no Arrow decoder for ${String(type)} at ${path} (${field.name})`)
  }
}

/**
 * Decodes Spark Connect's Arrow result chunks (`ExecutePlanResponse.arrow_batch.data`, each a
 * whole Arrow IPC stream) into internal rows, column by column. `schema` is the result schema
 * when the caller has it (from `ExecutePlanResponse.schema` through `Types.fromSparkSchema`);
 * without it the schema is read from the first chunk's Arrow schema. No chunks give no rows.
 *
 * Fails with an `AnalysisError` (naming the column) on a type tributary cannot hold, and with a
 * `ConnectorError` on bytes that are not a readable Arrow stream.
 *
 * @example
 * ```ts
 * const chunks: Array<Uint8Array> = [] // arrowBatch.data of each response
 * const decoded = decodeBatches(chunks, undefined)
 * // Result.succeed({ schema: struct([]), rows: [] })
 * ```
 * @since 0.4.0
 */
export const decodeBatches = (
  batches: ReadonlyArray<Uint8Array>,
  schema: T.StructType | undefined
): Result.Result<Decoded, AnalysisError | ConnectorError> => {
  let resultSchema = schema
  const rows: Array<InternalRow> = []
  for (let b = 0; b < batches.length; b++) {
    let table: arrow.Table
    try {
      table = arrow.tableFromIPC(batches[b])
    } catch (cause) {
      return Result.fail(
        new ConnectorError({
          connector: "spark-connect",
          domain: "external",
          retryable: false,
          message: `Spark Connect sent an Arrow batch tributary cannot read (chunk ${b}): ${String(cause)}`,
          cause
        })
      )
    }
    // Checks every column's Arrow type (variant, time, ... are refused with the column's name).
    const arrowSchema = Types.fromArrowSchema(table.schema)
    if (Result.isFailure(arrowSchema)) return Result.fail(arrowSchema.failure)
    if (resultSchema === undefined) resultSchema = arrowSchema.success
    const fields = table.schema.fields
    const m = fields.length
    if (m !== resultSchema.fields.length)
      return Result.fail(
        new AnalysisError({
          reason: "InvalidPlan",
          message: `Spark Connect sent ${m} columns where the result schema has ${resultSchema.fields.length} (${T.simpleString(resultSchema)})`
        })
      )
    for (const batch of table.batches) {
      const n = batch.numRows
      if (n === 0) continue
      const cols = new Array<Array<unknown>>(m)
      for (let k = 0; k < m; k++) cols[k] = decodeData(fields[k], batch.data.children[k], fields[k].name)
      const rowAt = rowMaker(cols)
      for (let i = 0; i < n; i++) rows.push(rowAt(i))
    }
  }
  return Result.succeed({ schema: resultSchema ?? T.struct([]), rows })
}

// ---------------------------------------------------------------------------------------------
// encoding
// ---------------------------------------------------------------------------------------------

/**
 * The Arrow type Spark's `ArrowUtils.toArrowType` gives a tributary type (time zone UTC, the
 * session's). Nested fields are named as Spark names them: `element`, `entries`, `key`, `value`.
 */
export const toArrowType = (t: T.DataType): arrow.DataType => {
  switch (t._tag) {
    case "null":
      return new arrow.Null()
    case "boolean":
      return new arrow.Bool()
    case "integer":
      return new arrow.Int32()
    case "long":
      return new arrow.Int64()
    case "double":
      return new arrow.Float64()
    case "string":
      return new arrow.Utf8()
    case "binary":
      return new arrow.Binary()
    case "timestamp":
      return new arrow.TimestampMicrosecond("UTC")
    case "date":
      return new arrow.DateDay()
    case "calendarInterval":
      return new arrow.IntervalMonthDayNano()
    case "struct":
      return new arrow.Struct(t.fields.map((f) => new arrow.Field(f.name, toArrowType(f.dataType), f.nullable)))
    case "array":
      return new arrow.List(new arrow.Field("element", toArrowType(t.elementType), t.containsNull))
    case "map":
      return new arrow.Map_(
        new arrow.Field(
          "entries",
          new arrow.Struct<{ key: arrow.DataType; value: arrow.DataType }>([
            new arrow.Field("key", toArrowType(t.keyType), false),
            new arrow.Field("value", toArrowType(t.valueType), t.valueContainsNull)
          ]) as arrow.Struct<{ key: never; value: never }>,
          false
        ),
        false
      )
  }
}

/** Null bitmap of `values` (`undefined` when none is null) and the null count. */
const nullBitmap = (
  values: ReadonlyArray<unknown>
): { readonly bitmap: Uint8Array | undefined; readonly nulls: number } => {
  const n = values.length
  let nulls = 0
  for (let i = 0; i < n; i++) if (values[i] === null || values[i] === undefined) nulls++
  if (nulls === 0) return { bitmap: undefined, nulls }
  const bitmap = new Uint8Array((n + 7) >> 3)
  for (let i = 0; i < n; i++) {
    const v = values[i]
    if (v !== null && v !== undefined) bitmap[i >> 3] |= 1 << (i & 7)
  }
  return { bitmap, nulls }
}

const isNull = (v: unknown): boolean => v === null || v === undefined

/** Writes a 64-bit integer given as a number or a bigint at slot `i`. */
const putLong = (lo: Uint32Array, hi: Int32Array, big: BigInt64Array, i: number, v: unknown): void => {
  if (typeof v === "bigint") {
    big[i] = BigInt.asIntN(64, v)
    return
  }
  const x = Math.trunc(Number(v))
  if (x > -9007199254740992 && x < 9007199254740992) {
    const h = Math.floor(x / TWO_32)
    hi[2 * i + 1] = h
    lo[2 * i] = x - h * TWO_32
  } else big[i] = Number.isFinite(x) ? BigInt.asIntN(64, BigInt(x)) : 0n
}

const utf8Encoder = new TextEncoder()

/** Encodes one column of internal values as Arrow `Data` of the type `toArrowType(t)` gives. */
const encodeData = (t: T.DataType, type: arrow.DataType, values: ReadonlyArray<unknown>): arrow.Data => {
  const n = values.length
  if (t._tag === "null") return arrow.makeData({ type: type as arrow.Null, length: n })
  const { bitmap, nulls } = nullBitmap(values)
  const base = { length: n, nullCount: nulls, nullBitmap: bitmap }
  switch (t._tag) {
    case "boolean": {
      const bits = new Uint8Array((n + 7) >> 3)
      for (let i = 0; i < n; i++) if (values[i] === true) bits[i >> 3] |= 1 << (i & 7)
      return arrow.makeData({ ...base, type: type as arrow.Bool, data: bits })
    }
    case "integer":
    case "date": {
      const v = new Int32Array(n)
      for (let i = 0; i < n; i++) if (!isNull(values[i])) v[i] = Number(values[i]) | 0
      return t._tag === "integer"
        ? arrow.makeData({ ...base, type: type as arrow.Int32, data: v })
        : arrow.makeData({ ...base, type: type as arrow.DateDay, data: v })
    }
    case "double": {
      const v = new Float64Array(n)
      for (let i = 0; i < n; i++) if (!isNull(values[i])) v[i] = Number(values[i])
      return arrow.makeData({ ...base, type: type as arrow.Float64, data: v })
    }
    case "long":
    case "timestamp": {
      const big = new BigInt64Array(n)
      const { lo, hi } = words(big)
      const ts = t._tag === "timestamp"
      for (let i = 0; i < n; i++) {
        const v = values[i]
        if (isNull(v)) continue
        if (!ts) putLong(lo, hi, big, i, v)
        else {
          // Internal timestamps are epoch millis; Spark's Arrow timestamps are micros.
          const ms = Number(v)
          const us = Number.isInteger(ms) ? ms * 1000 : Math.round(ms * 1000)
          if (Number.isSafeInteger(us)) putLong(lo, hi, big, i, us)
          else big[i] = BigInt(Math.trunc(ms)) * 1000n + BigInt(Math.round((ms - Math.trunc(ms)) * 1000))
        }
      }
      return ts
        ? arrow.makeData({ ...base, type: type as arrow.TimestampMicrosecond, data: big })
        : arrow.makeData({ ...base, type: type as arrow.Int64, data: big })
    }
    case "string":
    case "binary": {
      const offsets = new Int32Array(n + 1)
      let bytes: Uint8Array
      if (t._tag === "string") {
        let cap = 0
        for (let i = 0; i < n; i++) {
          const v = values[i]
          if (!isNull(v)) cap += String(v).length * 3
        }
        bytes = new Uint8Array(cap)
        let pos = 0
        for (let i = 0; i < n; i++) {
          const v = values[i]
          if (!isNull(v)) pos += utf8Encoder.encodeInto(String(v), bytes.subarray(pos)).written
          offsets[i + 1] = pos
        }
        bytes = bytes.subarray(0, pos)
      } else {
        let size = 0
        for (let i = 0; i < n; i++) {
          const v = values[i]
          if (!isNull(v)) size += (v as Uint8Array).length
        }
        bytes = new Uint8Array(size)
        let pos = 0
        for (let i = 0; i < n; i++) {
          const v = values[i]
          if (!isNull(v)) {
            bytes.set(v as Uint8Array, pos)
            pos += (v as Uint8Array).length
          }
          offsets[i + 1] = pos
        }
      }
      return t._tag === "string"
        ? arrow.makeData({ ...base, type: type as arrow.Utf8, data: bytes, valueOffsets: offsets })
        : arrow.makeData({ ...base, type: type as arrow.Binary, data: bytes, valueOffsets: offsets })
    }
    case "calendarInterval": {
      // MONTH_DAY_NANO: months and days as int32, then nanoseconds as int64 (Spark: micros * 1000).
      const v = new Int32Array(4 * n)
      const view = new DataView(v.buffer)
      for (let i = 0; i < n; i++) {
        const x = values[i] as CalendarInterval | null | undefined
        if (x === null || x === undefined) continue
        v[4 * i] = x.months
        v[4 * i + 1] = x.days
        view.setBigInt64(16 * i + 8, BigInt(Math.trunc(x.micros)) * 1000n, true)
      }
      return arrow.makeData({ ...base, type: type as arrow.IntervalMonthDayNano, data: v })
    }
    case "struct": {
      const st = type as arrow.Struct
      const children = t.fields.map((f, k) => {
        const col = new Array<unknown>(n)
        for (let i = 0; i < n; i++) {
          const v = values[i] as InternalRow | null | undefined
          col[i] = v === null || v === undefined ? null : v[k]
        }
        return encodeData(f.dataType, st.children[k].type, col)
      })
      return arrow.makeData({ ...base, type: st, children })
    }
    case "array": {
      const lt = type as arrow.List
      const offsets = new Int32Array(n + 1)
      const flat: Array<unknown> = []
      for (let i = 0; i < n; i++) {
        const v = values[i] as ReadonlyArray<unknown> | null | undefined
        if (v !== null && v !== undefined) for (let k = 0; k < v.length; k++) flat.push(v[k])
        offsets[i + 1] = flat.length
      }
      const child = encodeData(t.elementType, lt.children[0].type, flat)
      return arrow.makeData({ ...base, type: lt, valueOffsets: offsets, child })
    }
    case "map": {
      const mt = type as arrow.Map_
      const entriesType = mt.children[0].type
      const offsets = new Int32Array(n + 1)
      const keys: Array<unknown> = []
      const vals: Array<unknown> = []
      for (let i = 0; i < n; i++) {
        const v = values[i] as ReadonlyMap<unknown, unknown> | null | undefined
        if (v !== null && v !== undefined)
          for (const [k, x] of v) {
            keys.push(k)
            vals.push(x)
          }
        offsets[i + 1] = keys.length
      }
      const child = arrow.makeData({
        type: entriesType,
        length: keys.length,
        nullCount: 0,
        children: [
          encodeData(t.keyType, entriesType.children[0].type, keys),
          encodeData(t.valueType, entriesType.children[1].type, vals)
        ]
      })
      return arrow.makeData({ ...base, type: mt, valueOffsets: offsets, child })
    }
  }
}

/**
 * Encodes internal rows as one Arrow IPC stream (a schema and one record batch) for Spark
 * Connect's `LocalRelation.data` — what `createDataFrame` sends to a remote session. The Arrow
 * types are those Spark's `ArrowUtils` expects for the schema (`long` as Int64, `integer` as
 * Int32, `double` as Float64, `timestamp` as Timestamp(MICROSECOND, "UTC"), `date` as Date(DAY),
 * `calendarInterval` as Interval(MONTH_DAY_NANO), nested struct/list/map), and fields carry the
 * schema's nullability. Send it with `LocalRelation.schema = toDDL(schema)`.
 *
 * @example
 * ```ts
 * import * as T from "../core/DataType.ts"
 * const schema = T.struct([T.field("id", T.LongType), T.field("name", T.StringType)])
 * const data = encodeRows(schema, [[1, "a"], [2, null]])
 * // create(LocalRelationSchema, { data, schema: toDDL(schema) })
 * ```
 * @since 0.4.0
 */
export const encodeRows = (schema: T.StructType, rows: ReadonlyArray<InternalRow>): Uint8Array => {
  const n = rows.length
  const fields = schema.fields.map((f) => new arrow.Field(f.name, toArrowType(f.dataType), f.nullable))
  const children = schema.fields.map((f, k) => {
    const col = new Array<unknown>(n)
    for (let i = 0; i < n; i++) col[i] = rows[i][k]
    return encodeData(f.dataType, fields[k].type, col)
  })
  const arrowSchema = new arrow.Schema(fields)
  const data = arrow.makeData({ type: new arrow.Struct(fields), length: n, nullCount: 0, children })
  const batch = new arrow.RecordBatch(arrowSchema, data)
  return arrow.tableToIPC(new arrow.Table(arrowSchema, [batch]), "stream")
}
