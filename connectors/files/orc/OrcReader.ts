/**
 * Reads an ORC v1 file (the whole file's bytes) into rows of tributary's internal values:
 * the tail (postscript, footer), then each stripe's footer and the streams of the columns
 * asked for. Index streams (ROW_INDEX, bloom filters) are skipped by their lengths; every
 * encoding the Java writer produces is read (DIRECT and DICTIONARY, RLE v1 and v2), with the
 * codecs of `Compression.ts`.
 *
 * Values: booleans, numbers (tinyint to bigint; floats as their exact doubles; decimals as the
 * nearest double; bigints beyond 2^53 as the nearest double, as tributary's longs are numbers),
 * strings, `Uint8Array`s, dates as days since the epoch, timestamps as epoch milliseconds
 * (sub-millisecond digits dropped, as tributary's timestamps are milliseconds), structs as
 * positional arrays, lists as arrays, maps as `Map`s. Timestamps are read the way ORC's Java
 * reader reads them in a JVM whose time zone is UTC (tributary's session time zone): the
 * writer's time zone (the stripe footer's) sets the base second, and a `timestamp` (not an
 * instant) keeps its wall-clock reading. Dates and timestamps before 1582-10-15 in a file of the
 * hybrid Julian/Gregorian calendar (what Spark and Hive write) are rebased to the proleptic
 * Gregorian calendar, as Spark does.
 *
 * Every structural problem throws `OrcCorruption`; `OrcFile.ts` turns it into a typed error that
 * names the file.
 *
 * @since 0.1.0
 */
import { ByteReader, OrcCorruption, TWO_53 } from "./Bytes.ts"
import { decompress } from "./Compression.ts"
import {
  decodeFooter,
  decodePostScript,
  decodeStripeFooter,
  Encoding,
  type Footer,
  type PostScript,
  StreamKind,
  type StripeFooter
} from "./OrcProto.ts"
import { type OrcColumn, type OrcType, columnsFromProto, reinterpretation } from "./OrcType.ts"
import { readBooleans, readByteRle, readIntRleV1, readIntRleV2 } from "./RunLength.ts"

/** The file tail: postscript, footer and the type tree. */
export interface OrcTail {
  readonly postScript: PostScript
  readonly footer: Footer
  readonly root: OrcColumn
}

const MAGIC = [0x4f, 0x52, 0x43] // "ORC"

/** Reads and checks the tail of a file's bytes. */
export const readTail = (file: Uint8Array): OrcTail => {
  const size = file.length
  if (size < 4) throw new OrcCorruption(`the file is ${size} bytes long, too short for an ORC file`)
  const psLen = file[size - 1]
  if (psLen === 0 || psLen + 1 > size) throw new OrcCorruption(`the postscript length ${psLen} does not fit the file`)
  const psStart = size - 1 - psLen
  const postScript = decodePostScript(file.subarray(psStart, size - 1))
  if (postScript.magic !== "ORC") {
    // ORC 0.11 files put the magic only at the start; accept those, refuse the rest
    const head = file.subarray(0, 3)
    if (!(head.length === 3 && head.every((b, i) => b === MAGIC[i]) && postScript.magic === "")) {
      throw new OrcCorruption("the postscript does not carry the ORC magic (not an ORC file, or its end is cut off)")
    }
  }
  if (postScript.version.length > 0 && postScript.version[0] > 1) {
    throw new OrcCorruption(`the file's format version ${postScript.version.join(".")} is newer than ORC v1`)
  }
  const footerStart = psStart - postScript.footerLength
  const metadataStart = footerStart - postScript.metadataLength - postScript.stripeStatisticsLength
  if (footerStart < 0 || metadataStart < 0 || postScript.footerLength === 0) {
    throw new OrcCorruption(`the footer (${postScript.footerLength} bytes) does not fit before the postscript`)
  }
  const blockSize = postScript.compressionBlockSize
  const footerBytes = decompress(postScript.compression, file.subarray(footerStart, psStart), blockSize, "footer")
  const footer = decodeFooter(footerBytes)
  if (footer.encrypted) throw new OrcCorruption("the file has encrypted columns, which tributary cannot read")
  const root = columnsFromProto(footer.types)
  let rows = 0
  for (const s of footer.stripes) {
    const end = s.offset + s.indexLength + s.dataLength + s.footerLength
    if (s.offset < 3 || end > metadataStart || s.footerLength === 0) {
      throw new OrcCorruption(`a stripe at byte ${s.offset} (${end - s.offset} bytes) lies outside the file's body`)
    }
    rows += s.numberOfRows
  }
  if (rows !== footer.numberOfRows) {
    throw new OrcCorruption(`the stripes hold ${rows} rows but the footer says ${footer.numberOfRows}`)
  }
  return { postScript, footer, root }
}

/** A stripe's streams, located, decompressed on demand. */
class StripeStreams {
  private readonly located = new Map<string, readonly [number, number]>()
  readonly encodings: StripeFooter["columns"]
  readonly writerTimezone: string | undefined
  /** Whether dates and timestamps are in the hybrid Julian/Gregorian calendar (not PROLEPTIC_GREGORIAN). */
  readonly hybrid: boolean

  private readonly file: Uint8Array
  private readonly tail: OrcTail

  constructor(file: Uint8Array, tail: OrcTail, offset: number, footer: StripeFooter, bodyLength: number) {
    this.file = file
    this.tail = tail
    let pos = offset
    for (const s of footer.streams) {
      if (
        s.kind !== StreamKind.ROW_INDEX &&
        s.kind !== StreamKind.BLOOM_FILTER &&
        s.kind !== StreamKind.BLOOM_FILTER_UTF8
      ) {
        this.located.set(`${s.column}:${s.kind}`, [pos, s.length])
      }
      pos += s.length
    }
    if (pos - offset !== bodyLength) {
      throw new OrcCorruption(`the stripe at byte ${offset} lists ${pos - offset} bytes of streams for ${bodyLength}`)
    }
    this.encodings = footer.columns
    this.writerTimezone = footer.writerTimezone
    this.hybrid = tail.footer.calendar !== PROLEPTIC_GREGORIAN
  }

  /** The decompressed stream, or `undefined` when the stripe has none of that kind for the column. */
  get(column: number, kind: number, name: string): ByteReader | undefined {
    const at = this.located.get(`${column}:${kind}`)
    if (at === undefined) return undefined
    const what = `column ${column} ${name} stream`
    const ps = this.tail.postScript
    const bytes = decompress(ps.compression, this.file.subarray(at[0], at[0] + at[1]), ps.compressionBlockSize, what)
    return new ByteReader(bytes, what)
  }

  /** A stream that must be there when `count` values are wanted from it. */
  need(column: number, kind: number, name: string, count: number): ByteReader {
    const r = this.get(column, kind, name)
    if (r !== undefined) {
      // no encoding packs more than about 1,040 values into a byte (boolean runs): a count beyond
      // that is a corrupt row count, caught before anything is allocated for it
      if (count > (r.remaining() + 16) * 1100) {
        r.fail(`${count} values cannot be held in ${r.remaining()} bytes`)
      }
      return r
    }
    if (count === 0) return new ByteReader(new Uint8Array(0), `column ${column} ${name} stream`)
    throw new OrcCorruption(`column ${column}: the stripe has no ${name} stream for ${count} values`)
  }

  encoding(column: number): number {
    const e = this.encodings[column]
    if (e === undefined) throw new OrcCorruption(`column ${column}: the stripe footer has no encoding for it`)
    return e.kind
  }
}

const isV2 = (kind: number): boolean => kind === Encoding.DIRECT_V2 || kind === Encoding.DICTIONARY_V2

const readInts = (r: ByteReader, n: number, signed: boolean, v2: boolean): Float64Array => {
  const out = new Float64Array(n)
  if (v2) readIntRleV2(r, n, signed, out)
  else readIntRleV1(r, n, signed, out)
  return out
}

const utf8 = new TextDecoder("utf-8")

/** UTF-8 bytes as a string (ASCII without the decoder's call overhead). */
const decodeUtf8 = (buf: Uint8Array, start: number, end: number): string => {
  if (end - start <= 24) {
    let s = ""
    for (let i = start; i < end; i++) {
      const c = buf[i]
      if (c >= 0x80) return utf8.decode(buf.subarray(start, end))
      s += String.fromCharCode(c)
    }
    return s
  }
  return utf8.decode(buf.subarray(start, end))
}

const PROLEPTIC_GREGORIAN = 2
/** 1582-10-15, the first day of the Gregorian calendar, in days and in milliseconds since the epoch. */
const GREGORIAN_START_DAY = -141427
const GREGORIAN_START_MS = GREGORIAN_START_DAY * 86_400_000

/**
 * Spark's `rebaseJulianToGregorianDays`: a day number of the hybrid calendar (Julian before
 * 1582-10-15, which Spark and Hive write) as the proleptic Gregorian day of the same date.
 */
export const julianToGregorianDays = (days: number): number => {
  if (days >= GREGORIAN_START_DAY) return days
  // the Julian calendar date of the Julian day number (1970-01-01 is JDN 2440588)
  const c = days + 2440588 + 32082
  const d = Math.floor((4 * c + 3) / 1461)
  const e = c - Math.floor((1461 * d) / 4)
  const m = Math.floor((5 * e + 2) / 153)
  const day = e - Math.floor((153 * m + 2) / 5) + 1
  const month = m + 3 - 12 * Math.floor(m / 10)
  const year = d - 4800 + Math.floor(m / 10)
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  return Math.floor(date.getTime() / 86_400_000)
}

const rebaseMillis = (ms: number): number => {
  if (ms >= GREGORIAN_START_MS) return ms
  const day = Math.floor(ms / 86_400_000)
  return ms + (julianToGregorianDays(day) - day) * 86_400_000
}

/** The seconds of 2015-01-01 00:00:00 UTC: ORC's timestamp base. */
const BASE_UTC = 1420070400

/** Time zone names that are UTC (Java's `TimeZone.getTimeZone` of an unknown id is GMT, too). */
const isUtc = (tz: string | undefined): boolean =>
  tz === undefined ||
  tz === "" ||
  /^(utc|gmt|z|etc\/utc|etc\/gmt|etc\/uct|uct|universal|zulu|etc\/universal|etc\/zulu)$/i.test(tz)

const formatters = new Map<string, Intl.DateTimeFormat | null>()

/** The offset (ms) of a time zone from UTC at an instant, or 0 for a zone this runtime does not know. */
export const zoneOffset = (tz: string, ms: number): number => {
  let f = formatters.get(tz)
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat("en-US", {
        timeZone: tz,
        hourCycle: "h23",
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "numeric",
        minute: "numeric",
        second: "numeric"
      })
    } catch {
      f = null
    }
    formatters.set(tz, f)
  }
  if (f === null) return 0
  const parts = f.formatToParts(new Date(Math.floor(ms / 1000) * 1000))
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value ?? 0)
  const asUtc = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"))
  return asUtc - Math.floor(ms / 1000) * 1000
}

/** ORC's trailing-zero encoding of nanoseconds. */
const parseNanos = (v: number): number => {
  const zeros = v % 8
  const n = Math.floor(v / 8)
  return zeros === 0 ? n : n * 10 ** (zeros + 1)
}

/** A decimal's unscaled value and scale as the nearest double. */
const decimalToDouble = (unscaled: bigint, scale: number): number => {
  if (unscaled >= -9007199254740991n && unscaled <= 9007199254740991n && scale >= 0 && scale <= 22) {
    return Number(unscaled) / 10 ** scale
  }
  return Number(`${unscaled}e${-scale}`)
}

/**
 * Decodes the values of one column for `n` slots of its parent (children of a struct, list or map
 * have values only where the parent is not null). Nulls are `null`.
 */
const decodeColumn = (col: OrcColumn, n: number, s: StripeStreams): Array<unknown> => {
  const id = col.id
  const present = s.get(id, StreamKind.PRESENT, "PRESENT")
  let flags: Uint8Array | undefined
  let k = n
  if (present !== undefined) {
    if (n > (present.remaining() + 16) * 1100)
      present.fail(`${n} values cannot be held in ${present.remaining()} bytes`)
    flags = new Uint8Array(n)
    readBooleans(present, n, flags)
    k = 0
    for (let i = 0; i < n; i++) k += flags[i]
  }
  const values = decodeValues(col, k, s)
  if (flags === undefined) return values
  const out = new Array<unknown>(n)
  let j = 0
  for (let i = 0; i < n; i++) out[i] = flags[i] === 1 ? values[j++] : null
  return out
}

/** The `k` non-null values of a column. */
const decodeValues = (col: OrcColumn, k: number, s: StripeStreams): Array<unknown> => {
  const id = col.id
  const t = col.type
  const enc = s.encoding(id)
  const v2 = isV2(enc)
  const out = new Array<unknown>(k)
  switch (t.kind) {
    case "boolean": {
      const bits = new Uint8Array(k)
      readBooleans(s.need(id, StreamKind.DATA, "DATA", k), k, bits)
      for (let i = 0; i < k; i++) out[i] = bits[i] === 1
      return out
    }
    case "tinyint": {
      const bytes = new Uint8Array(k)
      readByteRle(s.need(id, StreamKind.DATA, "DATA", k), k, bytes)
      for (let i = 0; i < k; i++) out[i] = bytes[i] < 128 ? bytes[i] : bytes[i] - 256
      return out
    }
    case "smallint":
    case "int":
    case "bigint":
    case "date": {
      const ints = readInts(s.need(id, StreamKind.DATA, "DATA", k), k, true, v2)
      if (t.kind === "date" && s.hybrid) {
        for (let i = 0; i < k; i++) out[i] = julianToGregorianDays(ints[i])
        return out
      }
      switch (reinterpretation(t)) {
        case "timestamp_ntz":
          for (let i = 0; i < k; i++) out[i] = Math.floor(ints[i] / 1000)
          return out
        case "year_month_interval":
          for (let i = 0; i < k; i++) out[i] = { months: ints[i], days: 0, micros: 0 }
          return out
        case "day_time_interval":
          for (let i = 0; i < k; i++) {
            const days = Math.trunc(ints[i] / 86_400_000_000)
            out[i] = { months: 0, days, micros: ints[i] - days * 86_400_000_000 }
          }
          return out
        default:
          for (let i = 0; i < k; i++) out[i] = ints[i]
          return out
      }
    }
    case "float":
    case "double": {
      const width = t.kind === "float" ? 4 : 8
      const r = s.need(id, StreamKind.DATA, "DATA", k)
      const bytes = r.take(k * width)
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      if (width === 4) for (let i = 0; i < k; i++) out[i] = view.getFloat32(i * 4, true)
      else for (let i = 0; i < k; i++) out[i] = view.getFloat64(i * 8, true)
      return out
    }
    case "string":
    case "char":
    case "varchar":
    case "binary": {
      const binary = t.kind === "binary"
      if (enc === Encoding.DICTIONARY || enc === Encoding.DICTIONARY_V2) {
        const size = s.encodings[id].dictionarySize
        const lengths = readInts(s.need(id, StreamKind.LENGTH, "LENGTH", size), size, false, v2)
        const blob = s.need(id, StreamKind.DICTIONARY_DATA, "DICTIONARY_DATA", 0)
        const dict = new Array<unknown>(size)
        for (let i = 0; i < size; i++) {
          const bytes = blob.take(lengths[i])
          dict[i] = binary ? bytes.slice() : decodeUtf8(bytes, 0, bytes.length)
        }
        const refs = readInts(s.need(id, StreamKind.DATA, "DATA", k), k, false, v2)
        for (let i = 0; i < k; i++) {
          const ref = refs[i]
          if (ref >= size)
            throw new OrcCorruption(`column ${id}: a dictionary reference ${ref} is past its ${size} entries`)
          out[i] = dict[ref]
        }
        return out
      }
      const lengths = readInts(s.need(id, StreamKind.LENGTH, "LENGTH", k), k, false, v2)
      const data = s.need(id, StreamKind.DATA, "DATA", 0)
      for (let i = 0; i < k; i++) {
        const bytes = data.take(lengths[i])
        out[i] = binary ? bytes.slice() : decodeUtf8(bytes, 0, bytes.length)
      }
      return out
    }
    case "decimal": {
      const data = s.need(id, StreamKind.DATA, "DATA", 0)
      const scales = readInts(s.need(id, StreamKind.SECONDARY, "SECONDARY", k), k, true, v2)
      for (let i = 0; i < k; i++) out[i] = decimalToDouble(data.svarintBig(), scales[i])
      return out
    }
    case "timestamp":
    case "timestamp with local time zone": {
      const secs = readInts(s.need(id, StreamKind.DATA, "DATA", k), k, true, v2)
      const nanos = readInts(s.need(id, StreamKind.SECONDARY, "SECONDARY", k), k, false, v2)
      const instant = t.kind !== "timestamp"
      const tz = instant ? undefined : s.writerTimezone
      const utc = isUtc(tz)
      // Java's TimestampTreeReader: the base second is 2015-01-01 00:00:00 in the writer's zone
      const base = utc ? BASE_UTC : BASE_UTC - zoneOffset(tz!, BASE_UTC * 1000) / 1000
      for (let i = 0; i < k; i++) {
        const ns = parseNanos(nanos[i])
        let millis = (secs[i] + base) * 1000 + Math.floor(ns / 1_000_000)
        // the writer truncated the seconds toward zero (Java's long division)
        if (millis < 0 && ns > 999_999) millis -= 1000
        // a timestamp keeps its wall-clock reading in the reader's zone (UTC)
        if (!utc) millis += zoneOffset(tz!, millis)
        // Spark's `rebaseJulianToGregorianMicros` (in UTC): the same date and time of day
        out[i] = s.hybrid ? rebaseMillis(millis) : millis
      }
      return out
    }
    case "struct": {
      const fields = col.children.map((c) => decodeColumn(c, k, s))
      for (let i = 0; i < k; i++) {
        const row = new Array<unknown>(fields.length)
        for (let f = 0; f < fields.length; f++) row[f] = fields[f][i]
        out[i] = row
      }
      return out
    }
    case "array":
    case "map": {
      const lengths = readInts(s.need(id, StreamKind.LENGTH, "LENGTH", k), k, false, v2)
      let total = 0
      for (let i = 0; i < k; i++) total += lengths[i]
      if (total > TWO_53) throw new OrcCorruption(`column ${id}: the lengths add up past 2^53`)
      if (t.kind === "array") {
        const elems = decodeColumn(col.children[0], total, s)
        let j = 0
        for (let i = 0; i < k; i++) {
          const len = lengths[i]
          out[i] = elems.slice(j, j + len)
          j += len
        }
        return out
      }
      const keys = decodeColumn(col.children[0], total, s)
      const vals = decodeColumn(col.children[1], total, s)
      let j = 0
      for (let i = 0; i < k; i++) {
        const m = new Map<unknown, unknown>()
        for (let e = 0; e < lengths[i]; e++, j++) m.set(keys[j], vals[j])
        out[i] = m
      }
      return out
    }
    case "uniontype":
      throw new OrcCorruption(`column ${id}: uniontype columns are not supported`)
  }
}

/** The rows of a file: `fields` are the root struct's fields to read (by index), in that order. */
export interface OrcRead {
  readonly tail: OrcTail
  readonly rows: Array<Array<unknown>>
}

/**
 * Reads the rows of an ORC file. `include` lists the root struct's field indexes to read (all by
 * default); each row holds those fields in that order. A root that is not a struct is read as
 * one column.
 */
export const readOrc = (file: Uint8Array, include?: ReadonlyArray<number>): OrcRead => {
  const tail = readTail(file)
  const root = tail.root
  const structRoot = root.type.kind === "struct"
  const picked = structRoot ? (include ?? root.children.map((_, i) => i)) : [0]
  for (const i of picked) {
    if (structRoot && (i < 0 || i >= root.children.length)) throw new OrcCorruption(`there is no field ${i} to read`)
  }
  const rows: Array<Array<unknown>> = []
  const ps = tail.postScript
  for (const stripe of tail.footer.stripes) {
    const n = stripe.numberOfRows
    if (n === 0) continue
    const footerAt = stripe.offset + stripe.indexLength + stripe.dataLength
    const footerBytes = decompress(
      ps.compression,
      file.subarray(footerAt, footerAt + stripe.footerLength),
      ps.compressionBlockSize,
      "stripe footer"
    )
    const streams = new StripeStreams(
      file,
      tail,
      stripe.offset,
      decodeStripeFooter(footerBytes),
      stripe.indexLength + stripe.dataLength
    )
    let columns: Array<Array<unknown>>
    if (structRoot) {
      // the root's own PRESENT stream (a null row) is read too, though writers never write one
      const rootPresent = streams.get(root.id, StreamKind.PRESENT, "PRESENT")
      if (rootPresent !== undefined) {
        const values = decodeColumn({ ...root, children: picked.map((i) => root.children[i]) }, n, streams)
        for (const v of values) rows.push(v === null ? picked.map(() => null) : (v as Array<unknown>))
        continue
      }
      columns = picked.map((i) => decodeColumn(root.children[i], n, streams))
    } else columns = [decodeColumn(root, n, streams)]
    for (let r = 0; r < n; r++) {
      const row = new Array<unknown>(columns.length)
      for (let c = 0; c < columns.length; c++) row[c] = columns[c][r]
      rows.push(row)
    }
  }
  return { tail, rows }
}

/** The root struct's fields: names and types (none for a file without a struct root). */
export const rootFields = (tail: OrcTail): ReadonlyArray<{ readonly name: string; readonly type: OrcType }> =>
  tail.root.type.kind === "struct" ? tail.root.type.fields : []
