/**
 * Writes rows as an ORC v1 file (format version 0.12, as ORC's Java writer and so Spark write):
 * stripes of at most `stripeRows` rows, each column as PRESENT (only when it has nulls) plus its
 * data streams, RLE v2 (`DIRECT_V2`, strings `DICTIONARY_V2` when at most 80% of their values
 * are distinct, like the Java writer's `orc.dictionary.key.threshold`), or RLE v1 (`DIRECT` /
 * `DICTIONARY`, the 0.11 format) when asked. Each stream is compressed on its own in chunks of
 * `blockSize`. No row indexes are written (`rowIndexStride` 0, which every ORC reader accepts);
 * the footer and the metadata section carry each column's value count and whether it has nulls.
 *
 * Values are tributary's internal ones (see `OrcReader.ts`); bigints are accepted for bigint
 * columns, and a number beyond 2^63 is clamped to the 64-bit range. Timestamps are written in UTC
 * (the stripe footer's writer time zone), dates with the proleptic Gregorian calendar (the
 * footer says so).
 *
 * @since 0.1.0
 */
import { ByteWriter } from "./Bytes.ts"
import { compress } from "./Compression.ts"
import {
  type ColumnStatistics,
  Compression,
  Encoding,
  encodeFooter,
  encodeMetadata,
  encodePostScript,
  encodeStripeFooter,
  type Stream,
  StreamKind,
  type StripeInformation
} from "./OrcProto.ts"
import { columnsOf, type OrcColumn, type OrcType, typesToProto } from "./OrcType.ts"
import { writeBooleans, writeByteRle, writeIntRleV1, writeIntRleV2 } from "./RunLength.ts"

/** How a file is written. */
export interface OrcWriteOptions {
  /** A `CompressionKind` (`Compression.ZSTD`, …); NONE by default. */
  readonly compression?: number
  /** The compression chunk size (ORC's `orc.compress.size`, 256 KiB by default). */
  readonly blockSize?: number
  /** Rows per stripe (131,072 by default). */
  readonly stripeRows?: number
  /** `0.12` (RLE v2, the default) or `0.11` (RLE v1), ORC's `orc.write.format`. */
  readonly format?: "0.11" | "0.12"
  /** Use a dictionary for a string column when distinct / non-null values is at most this (0.8). */
  readonly dictionaryKeyThreshold?: number
  /** User metadata (Spark writes `org.apache.spark.version`). */
  readonly metadata?: ReadonlyArray<readonly [string, Uint8Array]>
}

/** This writer's `Footer.writer` code and `PostScript.writerVersion` (new writers start at 6). */
export const WRITER_ID = 1000
export const WRITER_VERSION = 6
/** `CalendarKind.PROLEPTIC_GREGORIAN`: tributary's dates are proleptic Gregorian days. */
const PROLEPTIC_GREGORIAN = 2
const BASE_UTC = 1420070400

const encoder = new TextEncoder()

interface ColumnOut {
  readonly streams: Array<readonly [number, Uint8Array]>
  encoding: number
  dictionarySize: number
  values: number
  hasNull: boolean
}

const INT64_MAX = 2n ** 63n - 1n
const INT64_MIN = -(2n ** 63n)

/** An integer value for the RLE encoders: an exact number, or a bigint beyond ±2^52. */
const integer = (v: unknown): number | bigint => {
  if (typeof v === "bigint") return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : v
  const n = Math.trunc(v as number)
  if (n <= 4503599627370496 && n >= -4503599627370496) return n
  if (!Number.isFinite(n)) return n > 0 ? INT64_MAX : INT64_MIN
  const b = BigInt(n)
  return b > INT64_MAX ? INT64_MAX : b < INT64_MIN ? INT64_MIN : b
}

/** ORC's trailing-zero encoding of nanoseconds (the Java writer's `formatNanos`). */
const formatNanos = (nanos: number): number => {
  if (nanos === 0) return 0
  if (nanos % 100 !== 0) return nanos * 8
  let n = nanos / 100
  let zeros = 1
  while (n % 10 === 0 && zeros < 7) {
    n /= 10
    zeros++
  }
  return n * 8 + zeros
}

/** A decimal value (number, decimal text or unscaled bigint) as its unscaled value at `scale`, rounded half up. */
const unscaled = (v: unknown, scale: number): bigint => {
  if (typeof v === "bigint") return v
  const n = typeof v === "number" ? v : Number.NaN
  // `toFixed` is the exact decimal expansion of a double, rounded half away from zero
  const text =
    typeof v === "string" ? v.trim() : Math.abs(n) < 1e21 ? n.toFixed(scale) : BigInt(Math.round(n)).toString()
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text)
  if (m === null || (m[2] === "" && (m[3] ?? "") === "")) return 0n
  const whole = m[2]
  const digits = whole + (m[3] ?? "")
  const want = whole.length + (m[4] === undefined ? 0 : Number(m[4])) + scale
  if (want <= 0) return 0n
  const kept = digits.length >= want ? digits.slice(0, want) : digits.padEnd(want, "0")
  let u = BigInt(kept)
  const next = digits.charCodeAt(want)
  if (next >= 0x35 && next <= 0x39) u += 1n
  return m[1] === "-" ? -u : u
}

/** Encodes one column's `n` values (nulls included) and its children, appending to `out` by column id. */
const encodeColumn = (
  col: OrcColumn,
  values: ReadonlyArray<unknown>,
  out: Array<ColumnOut>,
  v2: boolean,
  threshold: number
): void => {
  const n = values.length
  const c: ColumnOut = out[col.id]
  const nonNull: Array<unknown> = []
  const present = new Uint8Array(n)
  for (let i = 0; i < n; i++) {
    const v = values[i]
    if (v !== null && v !== undefined) {
      present[i] = 1
      nonNull.push(v)
    }
  }
  const k = nonNull.length
  c.values += k
  if (k < n) {
    c.hasNull = true
    const w = new ByteWriter(Math.ceil(n / 8) + 8)
    writeBooleans(w, present, n)
    c.streams.push([StreamKind.PRESENT, w.finish()])
  }
  const ints = (xs: ArrayLike<number | bigint>, count: number, signed: boolean): Uint8Array => {
    const w = new ByteWriter(count * 2 + 16)
    if (v2) writeIntRleV2(w, xs, count, signed)
    else writeIntRleV1(w, xs, count, signed)
    return w.finish()
  }
  const direct = v2 ? Encoding.DIRECT_V2 : Encoding.DIRECT
  const t: OrcType = col.type
  switch (t.kind) {
    case "boolean": {
      const bits = new Uint8Array(k)
      for (let i = 0; i < k; i++) bits[i] = nonNull[i] === true ? 1 : 0
      const w = new ByteWriter(Math.ceil(k / 8) + 8)
      writeBooleans(w, bits, k)
      c.streams.push([StreamKind.DATA, w.finish()])
      c.encoding = Encoding.DIRECT
      return
    }
    case "tinyint": {
      const bytes = new Uint8Array(k)
      for (let i = 0; i < k; i++) bytes[i] = Math.trunc(nonNull[i] as number) & 0xff
      const w = new ByteWriter(k + 8)
      writeByteRle(w, bytes, k)
      c.streams.push([StreamKind.DATA, w.finish()])
      c.encoding = Encoding.DIRECT
      return
    }
    case "smallint":
    case "int":
    case "bigint":
    case "date": {
      const xs = new Array<number | bigint>(k)
      for (let i = 0; i < k; i++) xs[i] = integer(nonNull[i])
      c.streams.push([StreamKind.DATA, ints(xs, k, true)])
      c.encoding = direct
      return
    }
    case "float":
    case "double": {
      const width = t.kind === "float" ? 4 : 8
      const bytes = new Uint8Array(k * width)
      const view = new DataView(bytes.buffer)
      if (width === 4) for (let i = 0; i < k; i++) view.setFloat32(i * 4, nonNull[i] as number, true)
      else for (let i = 0; i < k; i++) view.setFloat64(i * 8, nonNull[i] as number, true)
      c.streams.push([StreamKind.DATA, bytes])
      c.encoding = Encoding.DIRECT
      return
    }
    case "string":
    case "char":
    case "varchar":
    case "binary": {
      const encoded = new Array<Uint8Array>(k)
      for (let i = 0; i < k; i++) {
        const v = nonNull[i]
        encoded[i] = v instanceof Uint8Array ? v : encoder.encode(String(v))
      }
      if (t.kind !== "binary" && k > 0) {
        const ids = new Map<string, number>()
        const refs = new Float64Array(k)
        const keys: Array<string> = []
        for (let i = 0; i < k; i++) {
          const s = String(nonNull[i])
          let id = ids.get(s)
          if (id === undefined) {
            id = keys.length
            ids.set(s, id)
            keys.push(s)
          }
          refs[i] = id
        }
        if (keys.length <= threshold * k) {
          // the specification's dictionary is sorted by the values' UTF-8 bytes
          const bytesOf = keys.map((s) => encoder.encode(s))
          const order = keys.map((_, i) => i).sort((a, b) => compareBytes(bytesOf[a], bytesOf[b]))
          const rank = new Float64Array(keys.length)
          order.forEach((old, i) => {
            rank[old] = i
          })
          for (let i = 0; i < k; i++) refs[i] = rank[refs[i]]
          const blob = new ByteWriter(64)
          const lengths = new Float64Array(keys.length)
          order.forEach((old, i) => {
            blob.bytes(bytesOf[old])
            lengths[i] = bytesOf[old].length
          })
          c.streams.push([StreamKind.DATA, ints(refs, k, false)])
          c.streams.push([StreamKind.LENGTH, ints(lengths, keys.length, false)])
          c.streams.push([StreamKind.DICTIONARY_DATA, blob.finish()])
          c.encoding = v2 ? Encoding.DICTIONARY_V2 : Encoding.DICTIONARY
          c.dictionarySize = keys.length
          return
        }
      }
      const blob = new ByteWriter(64)
      const lengths = new Float64Array(k)
      for (let i = 0; i < k; i++) {
        blob.bytes(encoded[i])
        lengths[i] = encoded[i].length
      }
      c.streams.push([StreamKind.DATA, blob.finish()])
      c.streams.push([StreamKind.LENGTH, ints(lengths, k, false)])
      c.encoding = direct
      return
    }
    case "decimal": {
      const w = new ByteWriter(k * 4 + 8)
      for (let i = 0; i < k; i++) {
        const u = unscaled(nonNull[i], t.scale)
        w.varintBig(u >= 0n ? u << 1n : (-u << 1n) - 1n)
      }
      const scales = new Float64Array(k).fill(t.scale)
      c.streams.push([StreamKind.DATA, w.finish()])
      c.streams.push([StreamKind.SECONDARY, ints(scales, k, true)])
      c.encoding = direct
      return
    }
    case "timestamp":
    case "timestamp with local time zone": {
      const secs = new Float64Array(k)
      const nanos = new Float64Array(k)
      for (let i = 0; i < k; i++) {
        const ms = Math.floor(nonNull[i] as number)
        const floorSec = Math.floor(ms / 1000)
        // Java's writer: seconds truncated toward zero, nanos the non-negative fraction
        secs[i] = Math.trunc(ms / 1000) - BASE_UTC
        nanos[i] = formatNanos((ms - floorSec * 1000) * 1_000_000)
      }
      c.streams.push([StreamKind.DATA, ints(secs, k, true)])
      c.streams.push([StreamKind.SECONDARY, ints(nanos, k, false)])
      c.encoding = direct
      return
    }
    case "struct": {
      c.encoding = Encoding.DIRECT
      col.children.forEach((child, f) => {
        const xs = new Array<unknown>(k)
        for (let i = 0; i < k; i++) xs[i] = (nonNull[i] as ReadonlyArray<unknown>)[f]
        encodeColumn(child, xs, out, v2, threshold)
      })
      return
    }
    case "array": {
      const lengths = new Float64Array(k)
      const elems: Array<unknown> = []
      for (let i = 0; i < k; i++) {
        const a = nonNull[i] as ReadonlyArray<unknown>
        lengths[i] = a.length
        for (const e of a) elems.push(e)
      }
      c.streams.push([StreamKind.LENGTH, ints(lengths, k, false)])
      c.encoding = direct
      encodeColumn(col.children[0], elems, out, v2, threshold)
      return
    }
    case "map": {
      const lengths = new Float64Array(k)
      const keys: Array<unknown> = []
      const vals: Array<unknown> = []
      for (let i = 0; i < k; i++) {
        const m = nonNull[i] as ReadonlyMap<unknown, unknown>
        lengths[i] = m.size
        for (const [kk, vv] of m) {
          keys.push(kk)
          vals.push(vv)
        }
      }
      c.streams.push([StreamKind.LENGTH, ints(lengths, k, false)])
      c.encoding = direct
      encodeColumn(col.children[0], keys, out, v2, threshold)
      encodeColumn(col.children[1], vals, out, v2, threshold)
      return
    }
    case "uniontype":
      throw new Error("tributary does not write uniontype columns")
  }
}

const compareBytes = (a: Uint8Array, b: Uint8Array): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i]
  return a.length - b.length
}

const STREAM_ORDER = [
  StreamKind.PRESENT,
  StreamKind.DATA,
  StreamKind.LENGTH,
  StreamKind.DICTIONARY_DATA,
  StreamKind.SECONDARY
]

/**
 * The bytes of an ORC file holding `rows` (each a positional array of the root struct's fields)
 * of type `root` (a struct).
 */
export const writeOrc = (
  root: OrcType,
  rows: ReadonlyArray<ReadonlyArray<unknown>>,
  options: OrcWriteOptions = {}
): Uint8Array => {
  if (root.kind !== "struct") throw new Error("an ORC file's root type must be a struct")
  const kind = options.compression ?? Compression.NONE
  const blockSize = options.blockSize ?? 256 * 1024
  const stripeRows = Math.max(1, options.stripeRows ?? 131_072)
  const v2 = (options.format ?? "0.12") !== "0.11"
  const threshold = options.dictionaryKeyThreshold ?? 0.8
  const tree = columnsOf(root)
  const types = typesToProto(root)
  const file = new ByteWriter(64 * 1024)
  file.bytes(encoder.encode("ORC"))
  const stripes: Array<StripeInformation> = []
  const stripeStats: Array<Array<ColumnStatistics>> = []
  const fileStats = types.map(() => ({ values: 0, hasNull: false }))
  for (let start = 0; start < rows.length; start += stripeRows) {
    const part = rows.slice(start, start + stripeRows)
    const cols: Array<ColumnOut> = types.map(() => ({
      streams: [],
      encoding: Encoding.DIRECT,
      dictionarySize: 0,
      values: 0,
      hasNull: false
    }))
    cols[0].values = part.length
    tree.children.forEach((child, f) => {
      const xs = new Array<unknown>(part.length)
      for (let i = 0; i < part.length; i++) xs[i] = part[i][f]
      encodeColumn(child, xs, cols, v2, threshold)
    })
    const offset = file.length
    const streams: Array<Stream> = []
    for (let id = 0; id < cols.length; id++) {
      const byKind = new Map(cols[id].streams)
      for (const sk of STREAM_ORDER) {
        const bytes = byKind.get(sk)
        if (bytes === undefined) continue
        const packed = compress(kind, bytes, blockSize)
        file.bytes(packed)
        streams.push({ kind: sk, column: id, length: packed.length })
      }
    }
    const dataLength = file.length - offset
    const footer = compress(
      kind,
      encodeStripeFooter({
        streams,
        columns: cols.map((c) => ({ kind: c.encoding, dictionarySize: c.dictionarySize })),
        writerTimezone: "UTC",
        encrypted: false
      }),
      blockSize
    )
    file.bytes(footer)
    stripes.push({ offset, indexLength: 0, dataLength, footerLength: footer.length, numberOfRows: part.length })
    stripeStats.push(cols.map((c) => ({ numberOfValues: c.values, hasNull: c.hasNull })))
    cols.forEach((c, id) => {
      fileStats[id].values += c.values
      fileStats[id].hasNull ||= c.hasNull
    })
  }
  const contentLength = file.length
  const metadata = compress(kind, encodeMetadata(stripeStats), blockSize)
  file.bytes(metadata)
  const footer = compress(
    kind,
    encodeFooter({
      headerLength: 3,
      contentLength,
      stripes,
      types,
      metadata: (options.metadata ?? []).map(([name, value]) => ({ name, value })),
      numberOfRows: rows.length,
      statistics: fileStats.map((s) => ({ numberOfValues: s.values, hasNull: s.hasNull })),
      rowIndexStride: 0,
      writer: WRITER_ID,
      encrypted: false,
      calendar: PROLEPTIC_GREGORIAN,
      softwareVersion: "tributary"
    }),
    blockSize
  )
  file.bytes(footer)
  const ps = encodePostScript({
    footerLength: footer.length,
    compression: kind,
    compressionBlockSize: blockSize,
    version: [0, v2 ? 12 : 11],
    metadataLength: metadata.length,
    writerVersion: WRITER_VERSION
  })
  file.bytes(ps)
  file.byte(ps.length)
  return file.finish()
}
