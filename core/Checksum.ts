/**
 * Hadoop's checksum files, as Spark's checkpoints on a local file system have them: beside each
 * file `x` written through Hadoop's `ChecksumFileSystem` (the local file system Spark uses) sits
 * `.x.crc`, holding `crc\0`, the number of bytes per checksum (a 4-byte big-endian integer, 512)
 * and one CRC-32 (4 bytes, big-endian) of each chunk of that many bytes of `x`, the last chunk
 * possibly shorter.
 *
 * tributary writes the same files beside its checkpoint and metadata-log files, so a bit flip or
 * a truncation is detected when the file is read and never read as a different offset, commit
 * or file list — and a checkpoint moved between tributary and Spark keeps its checksums. Beyond
 * Hadoop, which checks only the chunks the file still has, the number of checksums must match
 * the file's length, so a file cut at a chunk boundary (or emptied) is detected too.
 *
 * @since 0.1.0
 */

/** Hadoop's `ChecksumFileSystem` default (`file.bytes-per-checksum`). */
export const BYTES_PER_CHECKSUM = 512

const HEADER = [0x63, 0x72, 0x63, 0x00] // "crc\0"

const TABLE = (() => {
  const t = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    t[n] = c >>> 0
  }
  return t
})()

/**
 * A CRC-32 of `bytes[from, to)`: `crc32` here, or a platform's native one giving the same values
 * (`node:zlib`'s, which the Node checkpoint file system passes where it exists).
 *
 * @since 0.1.0
 */
export type Crc32 = (bytes: Uint8Array, from: number, to: number) => number

/**
 * CRC-32 (ISO-HDLC, as `java.util.zip.CRC32` and zlib) of `bytes[from, to)`.
 *
 * @since 0.1.0
 */
export const crc32 = (bytes: Uint8Array, from = 0, to = bytes.length): number => {
  let c = 0xffffffff
  for (let i = from; i < to; i++) c = TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

/**
 * The name of the checksum file beside `name` (Hadoop's `getChecksumFile`): `.name.crc`.
 *
 * @since 0.1.0
 */
export const checksumFileName = (name: string): string => `.${name}.crc`

/**
 * Whether a file name is a checksum file (Hadoop's `isChecksumFile`).
 *
 * @since 0.1.0
 */
export const isChecksumFileName = (name: string): boolean => name.startsWith(".") && name.endsWith(".crc")

/**
 * The content of the checksum file of `data`, in Hadoop's format.
 *
 * @since 0.1.0
 */
export const checksumFile = (
  data: Uint8Array,
  bytesPerChecksum: number = BYTES_PER_CHECKSUM,
  crc: Crc32 = crc32
): Uint8Array => {
  const chunks = Math.ceil(data.length / bytesPerChecksum)
  const out = new Uint8Array(8 + 4 * chunks)
  const view = new DataView(out.buffer)
  out.set(HEADER, 0)
  view.setInt32(4, bytesPerChecksum)
  for (let i = 0; i < chunks; i++) {
    const from = i * bytesPerChecksum
    view.setUint32(8 + 4 * i, crc(data, from, Math.min(data.length, from + bytesPerChecksum)))
  }
  return out
}

/**
 * Checks `data` against its checksum file: `undefined` when they agree, else why not (a damaged
 * or foreign checksum file counts as a mismatch: the data cannot be trusted either way).
 *
 * @since 0.1.0
 */
export const verifyChecksumFile = (data: Uint8Array, crc: Uint8Array, sum: Crc32 = crc32): string | undefined => {
  if (crc.length < 8 || HEADER.some((b, i) => crc[i] !== b)) return "its checksum file has no Hadoop checksum header"
  const view = new DataView(crc.buffer, crc.byteOffset, crc.byteLength)
  const bytesPerChecksum = view.getInt32(4)
  if (bytesPerChecksum <= 0) return `its checksum file gives ${bytesPerChecksum} bytes per checksum`
  if ((crc.length - 8) % 4 !== 0) return "its checksum file ends inside a checksum"
  const sums = (crc.length - 8) / 4
  const chunks = Math.ceil(data.length / bytesPerChecksum)
  if (sums !== chunks) {
    return `it has ${data.length} bytes, but its checksum file covers ${sums} chunk(s) of ${bytesPerChecksum} bytes (it was truncated or extended)`
  }
  for (let i = 0; i < chunks; i++) {
    const from = i * bytesPerChecksum
    if (sum(data, from, Math.min(data.length, from + bytesPerChecksum)) !== view.getUint32(8 + 4 * i)) {
      return `the checksum of bytes ${from} to ${Math.min(data.length, from + bytesPerChecksum) - 1} does not match`
    }
  }
  return undefined
}
