/**
 * Avro object container files (a header with the writer's schema and codec, then blocks of
 * records) read and written with `avsc`'s block decoder and encoder, with this connector's
 * codecs (`AvroCodecs.ts`) and schema options (`AvroSchema.ts`).
 *
 * @since 0.5.0
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import avsc from "avsc"
import { avscCodecs, type BlockCodec } from "./AvroCodecs.ts"
import { type AvroType, parseSchema } from "./AvroSchema.ts"

/** What a container file holds. */
export interface ContainerContents {
  /** The writer's schema, parsed. */
  readonly writerType: AvroType
  /** The header's metadata (`avro.schema`, `avro.codec`, `org.apache.spark.version`, …) as text. */
  readonly meta: Readonly<Record<string, string>>
  /** The records, as values of the reader type (or of the writer type without one). */
  readonly records: ReadonlyArray<unknown>
}

/** The Avro specification's schema of a container file's header. */
const HEADER = avsc.Type.forSchema({
  type: "record",
  name: "org.apache.avro.file.Header",
  fields: [
    { name: "magic", type: { type: "fixed", name: "Magic", size: 4 } },
    { name: "meta", type: { type: "map", values: "bytes" } },
    { name: "sync", type: { type: "fixed", name: "Sync", size: 16 } }
  ]
}) as unknown as AvroType

const MAGIC = Buffer.from([0x4f, 0x62, 0x6a, 0x01])

/**
 * The header's metadata and writer schema, from the start of a file (read in growing chunks
 * until the header is complete, never past the end of the file).
 */
export const readHeader = (path: string): { readonly writerSchema: unknown; readonly meta: Readonly<Record<string, string>> } => {
  const fd = fs.openSync(path, "r")
  try {
    const size = fs.fstatSync(fd).size
    let length = Math.min(size, 4096)
    for (;;) {
      const buf = Buffer.alloc(length)
      const n = fs.readSync(fd, buf, 0, length, 0)
      if (n < 4 || !buf.subarray(0, 4).equals(MAGIC)) throw new Error("Not an Avro data file.")
      const { value, offset } = HEADER.decode(buf.subarray(0, n), 0)
      if (offset >= 0) {
        const meta: Record<string, string> = {}
        for (const [k, v] of Object.entries((value as { meta: Record<string, Buffer> }).meta)) {
          meta[k] = Buffer.from(v).toString("utf8")
        }
        return { writerSchema: JSON.parse(meta["avro.schema"] ?? "null"), meta }
      }
      if (length >= size) throw new Error("Not an Avro data file: the header is incomplete.")
      length = Math.min(size, length * 2)
    }
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Decodes a whole container file. With `readerType`, records are resolved to it (Avro's schema
 * resolution: fields by name with defaults, promotions, aliases), as Spark's
 * `GenericDatumReader(writer, reader)` does.
 */
export const decodeContainer = (
  bytes: Uint8Array,
  codecs: Readonly<Record<string, BlockCodec>>,
  readerType: AvroType | undefined
): Promise<ContainerContents> =>
  new Promise((resolve, reject) => {
    let writerType: AvroType | undefined
    let meta: Record<string, string> = {}
    const records: Array<unknown> = []
    const decoder = new avsc.streams.BlockDecoder({
      codecs: avscCodecs(codecs, "decompress") as never,
      parseHook: ((schema: unknown) => parseSchema(schema)) as never,
      ...(readerType === undefined ? {} : { readerSchema: readerType as never })
    })
    decoder.on("metadata", (type: AvroType, _codec: string, header: { meta: Record<string, Buffer> }) => {
      writerType = type
      meta = Object.fromEntries(Object.entries(header.meta).map(([k, v]) => [k, Buffer.from(v).toString("utf8")]))
    })
    decoder.on("data", (r: unknown) => records.push(r))
    decoder.on("error", (e: unknown) => {
      decoder.destroy()
      reject(e)
    })
    decoder.on("end", () => {
      if (writerType === undefined) reject(new Error("Not an Avro data file."))
      else resolve({ writerType, meta, records })
    })
    decoder.end(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
  })

/**
 * Encodes records as a container file: `schema` (its JSON goes into the header as given),
 * `codec` by its Avro name, extra header `meta`, a random sync marker.
 */
export const encodeContainer = (
  type: AvroType,
  schemaJson: string,
  records: ReadonlyArray<unknown>,
  codec: string,
  codecs: Readonly<Record<string, BlockCodec>>,
  meta: Readonly<Record<string, string>>
): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    const metadata: Record<string, Buffer> = { "avro.schema": Buffer.from(schemaJson, "utf8") }
    for (const [k, v] of Object.entries(meta)) metadata[k] = Buffer.from(v, "utf8")
    let encoder: InstanceType<typeof avsc.streams.BlockEncoder>
    try {
      encoder = new avsc.streams.BlockEncoder(type as never, {
        codec,
        codecs: avscCodecs(codecs, "compress") as never,
        writeHeader: "always" as never,
        syncMarker: randomBytes(16),
        metadata
      } as never)
    } catch (e) {
      reject(e)
      return
    }
    encoder.on("data", (c: Buffer) => chunks.push(c))
    encoder.on("error", (e: unknown) => reject(e))
    encoder.on("end", () => resolve(Buffer.concat(chunks)))
    try {
      for (const r of records) encoder.write(r)
      encoder.end()
    } catch (e) {
      reject(e)
    }
  })
