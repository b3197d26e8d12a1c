/**
 * Snappy's raw block format (Google's `format_description.txt`): what ORC's SNAPPY codec puts in
 * each compression chunk. No maintained pure-JavaScript package fits (the npm ones are native
 * bindings or unmaintained), so this is a small codec of its own: a greedy compressor with a
 * 4-byte hash table (copies within 64 KiB, as the reference compressor's fragments) and a
 * decompressor that checks every length and offset.
 *
 * @since 0.1.0
 */
import { ByteReader, ByteWriter, OrcCorruption } from "./Bytes.ts"

/** Decompresses one Snappy block, refusing one that would exceed `maxLength` bytes. */
export const snappyDecompress = (input: Uint8Array, maxLength: number, what: string): Uint8Array => {
  const r = new ByteReader(input, what)
  const length = r.varint()
  if (length < 0 || length > maxLength) {
    throw new OrcCorruption(`${what}: a snappy block of ${length} bytes exceeds the ${maxLength}-byte chunk size`)
  }
  const out = new Uint8Array(length)
  let o = 0
  while (!r.atEnd()) {
    const tag = r.byte()
    const type = tag & 3
    if (type === 0) {
      let len = tag >>> 2
      if (len >= 60) {
        const extra = len - 59
        len = 0
        for (let k = 0; k < extra; k++) len += r.byte() * 2 ** (8 * k)
      }
      len += 1
      if (o + len > length) r.fail("a snappy literal runs past the block's length")
      out.set(r.take(len), o)
      o += len
      continue
    }
    let len: number
    let offset: number
    if (type === 1) {
      len = ((tag >>> 2) & 7) + 4
      offset = ((tag >>> 5) << 8) | r.byte()
    } else if (type === 2) {
      len = (tag >>> 2) + 1
      offset = r.byte() | (r.byte() << 8)
    } else {
      len = (tag >>> 2) + 1
      offset = (r.byte() | (r.byte() << 8) | (r.byte() << 16)) + r.byte() * 16777216
    }
    if (offset === 0 || offset > o) r.fail(`a snappy copy reaches back ${offset} bytes from byte ${o}`)
    if (o + len > length) r.fail("a snappy copy runs past the block's length")
    // copies may overlap their own output (a run): byte by byte
    let from = o - offset
    for (let k = 0; k < len; k++) out[o++] = out[from++]
  }
  if (o !== length) throw new OrcCorruption(`${what}: a snappy block holds ${o} of its ${length} bytes`)
  return out
}

const HASH_BITS = 14

const load32 = (b: Uint8Array, i: number): number => b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)

const hash = (v: number): number => Math.imul(v, 0x1e35a7bd) >>> (32 - HASH_BITS)

const literal = (w: ByteWriter, input: Uint8Array, from: number, to: number): void => {
  const len = to - from
  if (len === 0) return
  const n = len - 1
  if (n < 60) w.byte(n << 2)
  else if (n < 0x100) {
    w.byte(60 << 2)
    w.byte(n)
  } else if (n < 0x10000) {
    w.byte(61 << 2)
    w.byte(n & 0xff)
    w.byte(n >>> 8)
  } else if (n < 0x1000000) {
    w.byte(62 << 2)
    w.byte(n & 0xff)
    w.byte((n >>> 8) & 0xff)
    w.byte(n >>> 16)
  } else {
    w.byte(63 << 2)
    w.byte(n & 0xff)
    w.byte((n >>> 8) & 0xff)
    w.byte((n >>> 16) & 0xff)
    w.byte(n >>> 24)
  }
  w.bytes(input.subarray(from, to))
}

const copy2 = (w: ByteWriter, offset: number, len: number): void => {
  w.byte(2 | ((len - 1) << 2))
  w.byte(offset & 0xff)
  w.byte(offset >>> 8)
}

const copy = (w: ByteWriter, offset: number, length: number): void => {
  let len = length
  while (len >= 68) {
    copy2(w, offset, 64)
    len -= 64
  }
  if (len > 64) {
    copy2(w, offset, 60)
    len -= 60
  }
  if (len < 12 && offset < 2048) {
    w.byte(1 | ((len - 4) << 2) | ((offset >>> 8) << 5))
    w.byte(offset & 0xff)
  } else copy2(w, offset, len)
}

/** Compresses bytes into one Snappy block. */
export const snappyCompress = (input: Uint8Array): Uint8Array => {
  const n = input.length
  const w = new ByteWriter(Math.max(64, n + Math.ceil(n / 6) + 16))
  w.varint(n)
  const table = new Int32Array(1 << HASH_BITS).fill(-1)
  let lit = 0
  let i = 0
  let misses = 32
  while (i + 4 <= n) {
    const v = load32(input, i)
    const h = hash(v)
    const cand = table[h]
    table[h] = i
    if (cand >= 0 && i - cand < 0x10000 && load32(input, cand) === v) {
      let len = 4
      while (i + len < n && input[cand + len] === input[i + len]) len++
      literal(w, input, lit, i)
      copy(w, i - cand, len)
      i += len
      lit = i
      misses = 32
      if (i - 1 + 4 <= n) table[hash(load32(input, i - 1))] = i - 1
    } else {
      // the reference compressor's skipping: the longer nothing matches, the bigger the steps
      i += misses++ >>> 5
    }
  }
  literal(w, input, lit, n)
  return w.finish()
}
