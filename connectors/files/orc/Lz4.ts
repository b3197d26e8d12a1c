/**
 * LZ4's block format (`lz4_Block_format.md`): what ORC's LZ4 codec puts in each compression
 * chunk. A greedy compressor with a 4-byte hash table that keeps the format's end-of-block rules
 * (the last five bytes are literals, no match starts in the last twelve), and a decompressor that
 * checks every length and offset.
 *
 * @since 0.1.0
 */
import { ByteReader, ByteWriter } from "./Bytes.ts"

/** Decompresses one LZ4 block into at most `maxLength` bytes. */
export const lz4Decompress = (input: Uint8Array, maxLength: number, what: string): Uint8Array => {
  const r = new ByteReader(input, what)
  let out = new Uint8Array(Math.min(maxLength, Math.max(64, input.length * 4)))
  let o = 0
  const ensure = (extra: number): void => {
    if (o + extra > maxLength) r.fail(`an lz4 block expands past the ${maxLength}-byte chunk size`)
    if (o + extra <= out.length) return
    let size = out.length * 2
    while (size < o + extra) size *= 2
    const next = new Uint8Array(Math.min(size, maxLength))
    next.set(out.subarray(0, o))
    out = next
  }
  const length = (nibble: number): number => {
    let len = nibble
    if (nibble === 15) {
      for (;;) {
        const b = r.byte()
        len += b
        if (b !== 255) break
      }
    }
    return len
  }
  for (;;) {
    const token = r.byte()
    const lits = length(token >>> 4)
    ensure(lits)
    out.set(r.take(lits), o)
    o += lits
    if (r.atEnd()) break
    const offset = r.byte() | (r.byte() << 8)
    if (offset === 0 || offset > o) r.fail(`an lz4 match reaches back ${offset} bytes from byte ${o}`)
    const len = length(token & 15) + 4
    ensure(len)
    let from = o - offset
    for (let k = 0; k < len; k++) out[o++] = out[from++]
  }
  return out.slice(0, o)
}

const HASH_BITS = 14
const MIN_MATCH = 4
/** The format's end rules: the last 5 bytes are literals, the last match starts 12 bytes before the end. */
const LAST_LITERALS = 5
const MF_LIMIT = 12

const load32 = (b: Uint8Array, i: number): number => b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)
const hash = (v: number): number => Math.imul(v, 2654435761) >>> (32 - HASH_BITS)

const writeLength = (w: ByteWriter, len: number): void => {
  let left = len - 15
  while (left >= 255) {
    w.byte(255)
    left -= 255
  }
  w.byte(left)
}

const sequence = (w: ByteWriter, input: Uint8Array, litFrom: number, litTo: number, offset: number, match: number) => {
  const lits = litTo - litFrom
  const m = match - MIN_MATCH
  w.byte(((lits >= 15 ? 15 : lits) << 4) | (match === 0 ? 0 : m >= 15 ? 15 : m))
  if (lits >= 15) writeLength(w, lits)
  w.bytes(input.subarray(litFrom, litTo))
  if (match === 0) return
  w.byte(offset & 0xff)
  w.byte(offset >>> 8)
  if (m >= 15) writeLength(w, m)
}

/** Compresses bytes into one LZ4 block. */
export const lz4Compress = (input: Uint8Array): Uint8Array => {
  const n = input.length
  const w = new ByteWriter(Math.max(64, n + Math.ceil(n / 255) + 16))
  const table = new Int32Array(1 << HASH_BITS).fill(-1)
  let lit = 0
  let i = 0
  const limit = n - MF_LIMIT
  while (i < limit) {
    const v = load32(input, i)
    const h = hash(v)
    const cand = table[h]
    table[h] = i
    if (cand >= 0 && i - cand < 0x10000 && load32(input, cand) === v) {
      let len = MIN_MATCH
      while (i + len < n - LAST_LITERALS && input[cand + len] === input[i + len]) len++
      sequence(w, input, lit, i, i - cand, len)
      i += len
      lit = i
    } else i++
  }
  sequence(w, input, lit, n, 0, 0)
  return w.finish()
}
