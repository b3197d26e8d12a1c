/**
 * ORC's generic compression (ORC v1 specification, "Compression"): every stream and the file
 * tail except the postscript is cut into chunks of at most the compression block size, each with
 * a 3-byte little-endian header `length * 2 + isOriginal` and compressed on its own (a chunk that
 * would not shrink is stored as is). Codecs: ZLIB (raw deflate, `node:zlib`), SNAPPY and LZ4
 * (this folder's codecs), ZSTD and BROTLI (`node:zlib`, which has zstd since Node 22.15; Deno 2.9
 * has it too). LZO is not supported.
 *
 * @since 0.1.0
 */
import * as zlib from "node:zlib"
import { ByteWriter, OrcCorruption } from "./Bytes.ts"
import { lz4Compress, lz4Decompress } from "./Lz4.ts"
import { Compression } from "./OrcProto.ts"
import { snappyCompress, snappyDecompress } from "./Snappy.ts"

/** A codec the runtime or this reader does not have (thrown inside the codec, caught at its boundary). */
export class OrcUnsupported extends Error {
  override readonly name = "OrcUnsupported"
}

/** The name of a `CompressionKind`, as Spark's `compression` option spells it. */
export const codecName = (kind: number): string => {
  switch (kind) {
    case Compression.NONE:
      return "none"
    case Compression.ZLIB:
      return "zlib"
    case Compression.SNAPPY:
      return "snappy"
    case Compression.LZO:
      return "lzo"
    case Compression.LZ4:
      return "lz4"
    case Compression.ZSTD:
      return "zstd"
    case Compression.BROTLI:
      return "brotli"
    default:
      return `unknown codec ${kind}`
  }
}

interface ZstdZlib {
  readonly zstdCompressSync?: (b: Uint8Array) => Uint8Array
  readonly zstdDecompressSync?: (b: Uint8Array, o?: { maxOutputLength?: number }) => Uint8Array
}

const zstd = zlib as unknown as ZstdZlib

/** Whether this runtime's `node:zlib` has zstd (Node 22.15+, Deno 2.9). */
export const hasZstd = (): boolean =>
  typeof zstd.zstdCompressSync === "function" && typeof zstd.zstdDecompressSync === "function"

const noZstd = (): never => {
  throw new OrcUnsupported(
    "ZSTD needs node:zlib's zstd (Node 22.15 or later, Deno 2.9 or later); this runtime does not have it"
  )
}

/** Checks that this writer can compress with `kind`. */
export const checkCodec = (kind: number): void => {
  if (kind === Compression.ZSTD && !hasZstd()) noZstd()
  if (kind === Compression.LZO) throw new OrcUnsupported("tributary does not support the LZO codec")
  if (kind < 0 || kind > Compression.BROTLI) throw new OrcUnsupported(`unknown ORC compression kind ${kind}`)
}

const inflate = (kind: number, chunk: Uint8Array, max: number, what: string): Uint8Array => {
  try {
    switch (kind) {
      case Compression.ZLIB:
        return zlib.inflateRawSync(chunk, { maxOutputLength: max })
      case Compression.SNAPPY:
        return snappyDecompress(chunk, max, what)
      case Compression.LZ4:
        return lz4Decompress(chunk, max, what)
      case Compression.ZSTD:
        if (!hasZstd()) return noZstd()
        return zstd.zstdDecompressSync!(chunk, { maxOutputLength: max })
      case Compression.BROTLI:
        return zlib.brotliDecompressSync(chunk, { maxOutputLength: max })
      default:
        throw new OrcUnsupported(`the ${codecName(kind)} codec is not supported`)
    }
  } catch (e) {
    if (e instanceof OrcCorruption || e instanceof OrcUnsupported) throw e
    throw new OrcCorruption(`${what}: the ${codecName(kind)} chunk does not decompress (${(e as Error).message})`)
  }
}

/**
 * The decompressed bytes of a compressed region (a stream or a tail section). `blockSize` is
 * the postscript's; a chunk that claims more is corruption.
 */
export const decompress = (kind: number, bytes: Uint8Array, blockSize: number, what: string): Uint8Array => {
  if (kind === Compression.NONE) return bytes
  const parts: Array<Uint8Array> = []
  let total = 0
  let pos = 0
  // a little slack over the block size: some writers' chunks end slightly over it
  const max = Math.max(blockSize, 1) + 1024
  while (pos < bytes.length) {
    if (pos + 3 > bytes.length) throw new OrcCorruption(`${what}: a compression chunk header is cut short`)
    const header = bytes[pos] | (bytes[pos + 1] << 8) | (bytes[pos + 2] << 16)
    pos += 3
    const length = header >>> 1
    const original = (header & 1) === 1
    if (pos + length > bytes.length) {
      throw new OrcCorruption(`${what}: a compression chunk of ${length} bytes runs past the end of its section`)
    }
    const chunk = bytes.subarray(pos, pos + length)
    pos += length
    const inflated = original ? chunk : inflate(kind, chunk, max, what)
    // node:zlib gives Buffers: values read from them are plain Uint8Arrays, as everywhere else
    const out = new Uint8Array(inflated.buffer, inflated.byteOffset, inflated.byteLength)
    parts.push(out)
    total += out.length
  }
  if (parts.length === 1) return parts[0]
  const out = new Uint8Array(total)
  let o = 0
  for (const p of parts) {
    out.set(p, o)
    o += p.length
  }
  return out
}

const deflate = (kind: number, chunk: Uint8Array): Uint8Array => {
  switch (kind) {
    case Compression.ZLIB:
      return zlib.deflateRawSync(chunk)
    case Compression.SNAPPY:
      return snappyCompress(chunk)
    case Compression.LZ4:
      return lz4Compress(chunk)
    case Compression.ZSTD:
      if (!hasZstd()) return noZstd()
      return zstd.zstdCompressSync!(chunk)
    case Compression.BROTLI:
      return zlib.brotliCompressSync(chunk, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } })
    default:
      throw new OrcUnsupported(`the ${codecName(kind)} codec is not supported`)
  }
}

/** Compresses a region into headed chunks of at most `blockSize` bytes (as is for NONE). */
export const compress = (kind: number, bytes: Uint8Array, blockSize: number): Uint8Array => {
  if (kind === Compression.NONE) return bytes
  const w = new ByteWriter(Math.max(64, Math.ceil(bytes.length / 2)))
  for (let pos = 0; pos < bytes.length; pos += blockSize) {
    const chunk = bytes.subarray(pos, Math.min(bytes.length, pos + blockSize))
    const packed = deflate(kind, chunk)
    const original = packed.length >= chunk.length
    const body = original ? chunk : packed
    const header = body.length * 2 + (original ? 1 : 0)
    w.byte(header & 0xff)
    w.byte((header >>> 8) & 0xff)
    w.byte((header >>> 16) & 0xff)
    w.bytes(body)
  }
  return w.finish()
}
