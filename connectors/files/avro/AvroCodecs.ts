/// <reference path="./snappyjs.d.ts" />
/**
 * The block codecs of Avro object container files, by the names Avro writes in `avro.codec`:
 * `null`, `deflate` (raw DEFLATE, `node:zlib`), `snappy` (a raw Snappy block from `snappyjs`
 * followed by the big-endian CRC-32 of the uncompressed block, as Avro's `SnappyCodec` frames
 * it; the checksum is verified on read) and `zstandard` (`node:zlib`'s Zstandard). Avro's `bzip2`
 * and `xz` have no maintained JavaScript implementation here: a file using them fails to read
 * with a message naming the codec, and `compression` refuses them.
 *
 * And Spark's `compression` option (Spark's `AvroCompressionCodec` names, default
 * `spark.sql.avro.compression.codec`, itself `snappy` by default) and its levels
 * (`spark.sql.avro.deflate.level`, `spark.sql.avro.zstandard.level`).
 *
 * @since 0.5.0
 */
import * as zlib from "node:zlib"
import snappy from "snappyjs"

/** One codec's whole-block functions (they throw on corrupt input). */
export interface BlockCodec {
  readonly compress: (block: Buffer) => Buffer
  readonly decompress: (block: Buffer) => Buffer
}

const snappyCodec: BlockCodec = {
  compress: (block) => {
    const body = snappy.compress(block)
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(zlib.crc32(block) >>> 0)
    return Buffer.concat([body, crc])
  },
  decompress: (block) => {
    if (block.length < 4) throw new Error("snappy block too short for its checksum")
    const body = snappy.uncompress(block.subarray(0, block.length - 4))
    const expected = block.readUInt32BE(block.length - 4)
    if ((zlib.crc32(body) >>> 0) !== expected) throw new Error("Checksum failure")
    return Buffer.from(body)
  }
}

/** The codecs for `codec` names, with levels for the compressing side. */
export const blockCodecs = (levels: { readonly deflate: number; readonly zstandard: number }): Readonly<Record<string, BlockCodec>> => ({
  null: { compress: (b) => b, decompress: (b) => b },
  deflate: {
    compress: (b) => zlib.deflateRawSync(b, { level: levels.deflate }),
    decompress: (b) => zlib.inflateRawSync(b)
  },
  snappy: snappyCodec,
  zstandard: {
    compress: (b) => zlib.zstdCompressSync(b, { params: { [zlib.constants.ZSTD_c_compressionLevel]: levels.zstandard } }),
    decompress: (b) => zlib.zstdDecompressSync(b)
  }
})

/** The same codecs in `avsc`'s callback form, for its block encoder and decoder. */
export const avscCodecs = (
  codecs: Readonly<Record<string, BlockCodec>>,
  side: "compress" | "decompress"
): Record<string, (buf: Buffer, cb: (err: unknown, out?: Buffer) => void) => void> =>
  Object.fromEntries(
    Object.entries(codecs).map(([name, c]) => [
      name,
      (buf: Buffer, cb: (err: unknown, out?: Buffer) => void) => {
        let out: Buffer
        try {
          out = c[side](buf)
        } catch (e) {
          cb(e)
          return
        }
        cb(null, out)
      }
    ])
  )

/** Spark's `AvroCompressionCodec` names and the Avro codec each writes. */
export const COMPRESSION_CODECS: Readonly<Record<string, string | undefined>> = {
  uncompressed: "null",
  deflate: "deflate",
  snappy: "snappy",
  zstandard: "zstandard",
  // Spark's, without a JavaScript implementation here
  bzip2: undefined,
  xz: undefined
}
