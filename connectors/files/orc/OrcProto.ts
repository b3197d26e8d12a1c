/**
 * The messages of ORC's `orc_proto.proto` that a reader and writer of ORC v1 files need —
 * `PostScript`, `Footer`, `StripeInformation`, `Type`, `UserMetadataItem`, `ColumnStatistics`,
 * `StripeFooter`, `Stream`, `ColumnEncoding`, `Metadata` — as plain interfaces, each with a
 * hand-written decoder (unknown fields skipped, as protobuf requires) and encoder. Field numbers
 * are the specification's.
 *
 * @since 0.1.0
 */
import { ProtoReader, ProtoWriter } from "./Protobuf.ts"

/** `CompressionKind`. */
export const Compression = { NONE: 0, ZLIB: 1, SNAPPY: 2, LZO: 3, LZ4: 4, ZSTD: 5, BROTLI: 6 } as const

/** `Type.Kind`. */
export const Kind = {
  BOOLEAN: 0,
  BYTE: 1,
  SHORT: 2,
  INT: 3,
  LONG: 4,
  FLOAT: 5,
  DOUBLE: 6,
  STRING: 7,
  BINARY: 8,
  TIMESTAMP: 9,
  LIST: 10,
  MAP: 11,
  STRUCT: 12,
  UNION: 13,
  DECIMAL: 14,
  DATE: 15,
  VARCHAR: 16,
  CHAR: 17,
  TIMESTAMP_INSTANT: 18,
  GEOMETRY: 19
} as const

/** `Stream.Kind`. */
export const StreamKind = {
  PRESENT: 0,
  DATA: 1,
  LENGTH: 2,
  DICTIONARY_DATA: 3,
  DICTIONARY_COUNT: 4,
  SECONDARY: 5,
  ROW_INDEX: 6,
  BLOOM_FILTER: 7,
  BLOOM_FILTER_UTF8: 8,
  ENCRYPTED_INDEX: 9,
  ENCRYPTED_DATA: 10
} as const

/** `ColumnEncoding.Kind`. */
export const Encoding = { DIRECT: 0, DICTIONARY: 1, DIRECT_V2: 2, DICTIONARY_V2: 3 } as const

export interface PostScript {
  readonly footerLength: number
  readonly compression: number
  readonly compressionBlockSize: number
  readonly version: ReadonlyArray<number>
  readonly metadataLength: number
  readonly writerVersion: number
  readonly stripeStatisticsLength: number
  readonly magic: string
}

export interface StripeInformation {
  readonly offset: number
  readonly indexLength: number
  readonly dataLength: number
  readonly footerLength: number
  readonly numberOfRows: number
}

export interface Type {
  readonly kind: number
  readonly subtypes: ReadonlyArray<number>
  readonly fieldNames: ReadonlyArray<string>
  readonly maximumLength?: number
  readonly precision?: number
  readonly scale?: number
  readonly attributes: ReadonlyArray<readonly [string, string]>
}

export interface UserMetadataItem {
  readonly name: string
  readonly value: Uint8Array
}

/** The statistics this writer records for a column: the counts (no min/max/sum). */
export interface ColumnStatistics {
  readonly numberOfValues: number
  readonly hasNull: boolean
}

export interface Footer {
  readonly headerLength: number
  readonly contentLength: number
  readonly stripes: ReadonlyArray<StripeInformation>
  readonly types: ReadonlyArray<Type>
  readonly metadata: ReadonlyArray<UserMetadataItem>
  readonly numberOfRows: number
  /** Only the counts are decoded (the reader reads no other statistics). */
  readonly statistics: ReadonlyArray<ColumnStatistics>
  readonly rowIndexStride: number
  readonly writer?: number
  readonly encrypted: boolean
  readonly calendar?: number
  readonly softwareVersion?: string
}

export interface Stream {
  readonly kind: number
  readonly column: number
  readonly length: number
}

export interface ColumnEncoding {
  readonly kind: number
  readonly dictionarySize: number
}

export interface StripeFooter {
  readonly streams: ReadonlyArray<Stream>
  readonly columns: ReadonlyArray<ColumnEncoding>
  readonly writerTimezone?: string
  readonly encrypted: boolean
}

// ---- decoders --------------------------------------------------------------------------------

export const decodePostScript = (buf: Uint8Array): PostScript => {
  const p = new ProtoReader(buf, "postscript")
  let footerLength = 0
  let compression = 0
  let compressionBlockSize = 256 * 1024
  const version: Array<number> = []
  let metadataLength = 0
  let writerVersion = 0
  let stripeStatisticsLength = 0
  let magic = ""
  for (let f = p.next(); f !== undefined; f = p.next()) {
    const [field, wire] = f
    switch (field) {
      case 1:
        footerLength = p.uint(wire)
        break
      case 2:
        compression = p.uint(wire)
        break
      case 3:
        compressionBlockSize = p.uint(wire)
        break
      case 4:
        p.uints(wire, version)
        break
      case 5:
        metadataLength = p.uint(wire)
        break
      case 6:
        writerVersion = p.uint(wire)
        break
      case 7:
        stripeStatisticsLength = p.uint(wire)
        break
      case 8000:
        magic = p.string(wire)
        break
      default:
        p.skip(wire)
    }
  }
  return {
    footerLength,
    compression,
    compressionBlockSize,
    version,
    metadataLength,
    writerVersion,
    stripeStatisticsLength,
    magic
  }
}

const decodeStripe = (p: ProtoReader): StripeInformation => {
  let offset = 0
  let indexLength = 0
  let dataLength = 0
  let footerLength = 0
  let numberOfRows = 0
  for (let f = p.next(); f !== undefined; f = p.next()) {
    const [field, wire] = f
    if (field === 1) offset = p.uint(wire)
    else if (field === 2) indexLength = p.uint(wire)
    else if (field === 3) dataLength = p.uint(wire)
    else if (field === 4) footerLength = p.uint(wire)
    else if (field === 5) numberOfRows = p.uint(wire)
    else p.skip(wire)
  }
  return { offset, indexLength, dataLength, footerLength, numberOfRows }
}

const decodeType = (p: ProtoReader): Type => {
  let kind = -1
  const subtypes: Array<number> = []
  const fieldNames: Array<string> = []
  let maximumLength: number | undefined
  let precision: number | undefined
  let scale: number | undefined
  const attributes: Array<readonly [string, string]> = []
  for (let f = p.next(); f !== undefined; f = p.next()) {
    const [field, wire] = f
    switch (field) {
      case 1:
        kind = p.uint(wire)
        break
      case 2:
        p.uints(wire, subtypes)
        break
      case 3:
        fieldNames.push(p.string(wire))
        break
      case 4:
        maximumLength = p.uint(wire)
        break
      case 5:
        precision = p.uint(wire)
        break
      case 6:
        scale = p.uint(wire)
        break
      case 7: {
        const a = p.message(wire, "type attribute")
        let key = ""
        let value = ""
        for (let g = a.next(); g !== undefined; g = a.next()) {
          if (g[0] === 1) key = a.string(g[1])
          else if (g[0] === 2) value = a.string(g[1])
          else a.skip(g[1])
        }
        attributes.push([key, value])
        break
      }
      default:
        p.skip(wire)
    }
  }
  return { kind, subtypes, fieldNames, maximumLength, precision, scale, attributes }
}

const decodeStatistics = (p: ProtoReader): ColumnStatistics => {
  let numberOfValues = 0
  let hasNull = false
  for (let f = p.next(); f !== undefined; f = p.next()) {
    const [field, wire] = f
    if (field === 1) numberOfValues = p.uint(wire)
    else if (field === 10) hasNull = p.bool(wire)
    else p.skip(wire)
  }
  return { numberOfValues, hasNull }
}

export const decodeFooter = (buf: Uint8Array): Footer => {
  const p = new ProtoReader(buf, "footer")
  let headerLength = 0
  let contentLength = 0
  const stripes: Array<StripeInformation> = []
  const types: Array<Type> = []
  const metadata: Array<UserMetadataItem> = []
  let numberOfRows = 0
  const statistics: Array<ColumnStatistics> = []
  let rowIndexStride = 0
  let writer: number | undefined
  let encrypted = false
  let calendar: number | undefined
  let softwareVersion: string | undefined
  for (let f = p.next(); f !== undefined; f = p.next()) {
    const [field, wire] = f
    switch (field) {
      case 1:
        headerLength = p.uint(wire)
        break
      case 2:
        contentLength = p.uint(wire)
        break
      case 3:
        stripes.push(decodeStripe(p.message(wire, "stripe information")))
        break
      case 4:
        types.push(decodeType(p.message(wire, "type")))
        break
      case 5: {
        const m = p.message(wire, "user metadata")
        let name = ""
        let value: Uint8Array = new Uint8Array(0)
        for (let g = m.next(); g !== undefined; g = m.next()) {
          if (g[0] === 1) name = m.string(g[1])
          else if (g[0] === 2) value = m.bytes(g[1])
          else m.skip(g[1])
        }
        metadata.push({ name, value })
        break
      }
      case 6:
        numberOfRows = p.uint(wire)
        break
      case 7:
        statistics.push(decodeStatistics(p.message(wire, "column statistics")))
        break
      case 8:
        rowIndexStride = p.uint(wire)
        break
      case 9:
        writer = p.uint(wire)
        break
      case 10:
        p.skip(wire)
        encrypted = true
        break
      case 11:
        calendar = p.uint(wire)
        break
      case 12:
        softwareVersion = p.string(wire)
        break
      default:
        p.skip(wire)
    }
  }
  return {
    headerLength,
    contentLength,
    stripes,
    types,
    metadata,
    numberOfRows,
    statistics,
    rowIndexStride,
    writer,
    encrypted,
    calendar,
    softwareVersion
  }
}

export const decodeStripeFooter = (buf: Uint8Array): StripeFooter => {
  const p = new ProtoReader(buf, "stripe footer")
  const streams: Array<Stream> = []
  const columns: Array<ColumnEncoding> = []
  let writerTimezone: string | undefined
  let encrypted = false
  for (let f = p.next(); f !== undefined; f = p.next()) {
    const [field, wire] = f
    switch (field) {
      case 1: {
        const s = p.message(wire, "stream")
        let kind = -1
        let column = 0
        let length = 0
        for (let g = s.next(); g !== undefined; g = s.next()) {
          if (g[0] === 1) kind = s.uint(g[1])
          else if (g[0] === 2) column = s.uint(g[1])
          else if (g[0] === 3) length = s.uint(g[1])
          else s.skip(g[1])
        }
        streams.push({ kind, column, length })
        break
      }
      case 2: {
        const e = p.message(wire, "column encoding")
        let kind = 0
        let dictionarySize = 0
        for (let g = e.next(); g !== undefined; g = e.next()) {
          if (g[0] === 1) kind = e.uint(g[1])
          else if (g[0] === 2) dictionarySize = e.uint(g[1])
          else e.skip(g[1])
        }
        columns.push({ kind, dictionarySize })
        break
      }
      case 3:
        writerTimezone = p.string(wire)
        break
      case 4:
        p.skip(wire)
        encrypted = true
        break
      default:
        p.skip(wire)
    }
  }
  return { streams, columns, writerTimezone, encrypted }
}

// ---- encoders --------------------------------------------------------------------------------

export const encodePostScript = (ps: Omit<PostScript, "magic" | "stripeStatisticsLength">): Uint8Array =>
  new ProtoWriter()
    .uint(1, ps.footerLength)
    .uint(2, ps.compression)
    .uint(3, ps.compressionBlockSize)
    .packed(4, ps.version)
    .uint(5, ps.metadataLength)
    .uint(6, ps.writerVersion)
    .string(8000, "ORC")
    .finish()

const writeStatistics = (w: ProtoWriter, s: ColumnStatistics): void => {
  w.uint(1, s.numberOfValues).bool(10, s.hasNull)
}

export const encodeFooter = (f: Footer): Uint8Array => {
  const w = new ProtoWriter().uint(1, f.headerLength).uint(2, f.contentLength)
  for (const s of f.stripes) {
    w.message(3, (m) =>
      m.uint(1, s.offset).uint(2, s.indexLength).uint(3, s.dataLength).uint(4, s.footerLength).uint(5, s.numberOfRows)
    )
  }
  for (const t of f.types) {
    w.message(4, (m) => {
      m.uint(1, t.kind).packed(2, t.subtypes)
      for (const n of t.fieldNames) m.string(3, n)
      m.uint(4, t.maximumLength).uint(5, t.precision).uint(6, t.scale)
      for (const [key, value] of t.attributes) m.message(7, (a) => a.string(1, key).string(2, value))
    })
  }
  for (const item of f.metadata) w.message(5, (m) => m.string(1, item.name).bytes(2, item.value))
  w.uint(6, f.numberOfRows)
  for (const s of f.statistics) w.message(7, (m) => writeStatistics(m, s))
  w.uint(8, f.rowIndexStride).uint(9, f.writer).uint(11, f.calendar).string(12, f.softwareVersion)
  return w.finish()
}

export const encodeStripeFooter = (f: StripeFooter): Uint8Array => {
  const w = new ProtoWriter()
  for (const s of f.streams) w.message(1, (m) => m.uint(1, s.kind).uint(2, s.column).uint(3, s.length))
  for (const c of f.columns) {
    w.message(2, (m) => {
      m.uint(1, c.kind)
      if (c.kind === Encoding.DICTIONARY || c.kind === Encoding.DICTIONARY_V2) m.uint(2, c.dictionarySize)
    })
  }
  w.string(3, f.writerTimezone)
  return w.finish()
}

/** `Metadata`: the statistics of each stripe. */
export const encodeMetadata = (stripes: ReadonlyArray<ReadonlyArray<ColumnStatistics>>): Uint8Array => {
  const w = new ProtoWriter()
  for (const cols of stripes) {
    w.message(1, (m) => {
      for (const s of cols) m.message(1, (c) => writeStatistics(c, s))
    })
  }
  return w.finish()
}
