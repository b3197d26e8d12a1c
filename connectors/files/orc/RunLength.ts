/**
 * ORC's run-length encodings (ORC v1 specification, "Run Length Encoding"): byte RLE, boolean
 * bit streams on top of it, and integer RLE versions 1 and 2 (short repeat, direct, patched base
 * and delta), signed (zigzag) and unsigned, both directions.
 *
 * Decoders write into preallocated arrays and check every run against the space left, so a
 * corrupt stream fails with `OrcCorruption` instead of overrunning. Integers decode into a
 * `Float64Array`: exact for |v| ≤ 2^53, and the nearest double beyond (a run whose values or
 * intermediate sums leave that range is decoded again with `bigint`s, so even then each value is
 * the correctly rounded 64-bit value, never an accumulated error).
 *
 * Encoders take exact integers (numbers, or `bigint`s for values beyond 2^53) and choose the
 * sub-encoding per run the way the specification describes: repeats as short repeat or fixed
 * delta, monotonic runs as delta, values with a few outliers as patched base, the rest direct.
 *
 * @since 0.1.0
 */
import { type ByteReader, type ByteWriter, TWO_53, unzigzag, unzigzagBig, zigzag, zigzagBig } from "./Bytes.ts"

// ---- byte RLE --------------------------------------------------------------------------------

/** Decodes `n` bytes of byte RLE into `out[off, off + n)`. */
export const readByteRle = (r: ByteReader, n: number, out: Uint8Array, off = 0): void => {
  let i = off
  const end = off + n
  while (i < end) {
    const h = r.byte()
    if (h < 0x80) {
      const count = h + 3
      if (i + count > end) r.fail(`a byte run of ${count} overruns the ${n} values wanted`)
      const v = r.byte()
      out.fill(v, i, i + count)
      i += count
    } else {
      const count = 0x100 - h
      if (i + count > end) r.fail(`${count} literal bytes overrun the ${n} values wanted`)
      const src = r.take(count)
      out.set(src, i)
      i += count
    }
  }
}

/** Encodes `values[0, n)` (bytes 0..255) with byte RLE. */
export const writeByteRle = (w: ByteWriter, values: ArrayLike<number>, n: number): void => {
  let i = 0
  while (i < n) {
    let run = 1
    while (i + run < n && run < 130 && values[i + run] === values[i]) run++
    if (run >= 3) {
      w.byte(run - 3)
      w.byte(values[i] & 0xff)
      i += run
      continue
    }
    // literals until the next run of three or 128 values
    let j = i
    while (j < n && j - i < 128) {
      if (j + 2 < n && values[j] === values[j + 1] && values[j] === values[j + 2]) break
      j++
    }
    w.byte(0x100 - (j - i))
    for (let k = i; k < j; k++) w.byte(values[k] & 0xff)
    i = j
  }
}

// ---- booleans --------------------------------------------------------------------------------

/** Decodes `n` booleans (bits, most significant first, over byte RLE) as 0/1 into `out`. */
export const readBooleans = (r: ByteReader, n: number, out: Uint8Array, off = 0): void => {
  const bytes = new Uint8Array(Math.ceil(n / 8))
  readByteRle(r, bytes.length, bytes)
  for (let i = 0; i < n; i++) out[off + i] = (bytes[i >>> 3] >>> (7 - (i & 7))) & 1
}

/** Encodes `bits[0, n)` (0/1) as a boolean stream. */
export const writeBooleans = (w: ByteWriter, bits: ArrayLike<number>, n: number): void => {
  const bytes = new Uint8Array(Math.ceil(n / 8))
  for (let i = 0; i < n; i++) if (bits[i] !== 0) bytes[i >>> 3] |= 0x80 >>> (i & 7)
  writeByteRle(w, bytes, bytes.length)
}

// ---- integer RLE v1 --------------------------------------------------------------------------

/** Decodes `n` integers of RLE v1 into `out[off, off + n)`. */
export const readIntRleV1 = (r: ByteReader, n: number, signed: boolean, out: Float64Array, off = 0): void => {
  let i = off
  const end = off + n
  while (i < end) {
    const h = r.byte()
    if (h < 0x80) {
      const count = h + 3
      if (i + count > end) r.fail(`an RLEv1 run of ${count} overruns the ${n} values wanted`)
      const d = r.byte()
      const delta = d < 0x80 ? d : d - 0x100
      const start = r.pos
      const u = r.varint()
      let base = u < 0 ? Number.NaN : signed ? unzigzag(u) : u
      const last = base + (count - 1) * delta
      if (Number.isNaN(base) || Math.abs(last) > TWO_53) {
        r.pos = start
        const b = signed ? r.svarintBig() : r.varintBig()
        for (let k = 0; k < count; k++) out[i + k] = Number(b + BigInt(k * delta))
      } else {
        for (let k = 0; k < count; k++) {
          out[i + k] = base
          base += delta
        }
      }
      i += count
    } else {
      const count = 0x100 - h
      if (i + count > end) r.fail(`${count} RLEv1 literals overrun the ${n} values wanted`)
      for (let k = 0; k < count; k++) {
        const start = r.pos
        const u = r.varint()
        if (u >= 0) out[i + k] = signed ? unzigzag(u) : u
        else {
          r.pos = start
          out[i + k] = Number(signed ? r.svarintBig() : r.varintBig())
        }
      }
      i += count
    }
  }
}

/** An exact integer of an encoder's input, as a bigint. */
const big = (v: number | bigint): bigint => (typeof v === "bigint" ? v : BigInt(v))

/** Whether an encoder's input value is an exact number (its arithmetic can stay in doubles). */
const safe = (v: number | bigint): v is number => typeof v === "number" && v <= TWO_53 / 2 && v >= -TWO_53 / 2

/** Encodes `values[0, n)` with RLE v1 (runs of 3..130 with a delta in -128..127, literals up to 128). */
export const writeIntRleV1 = (w: ByteWriter, values: ArrayLike<number | bigint>, n: number, signed: boolean): void => {
  const put = (v: number | bigint): void => {
    if (safe(v)) w.varint(signed ? zigzag(v) : v)
    else w.varintBig(signed ? zigzagBig(big(v)) : big(v))
  }
  let i = 0
  while (i < n) {
    // a run: at least three values with one small delta
    if (i + 2 < n && safe(values[i]) && safe(values[i + 1]) && safe(values[i + 2])) {
      const a = values[i] as number
      const delta = (values[i + 1] as number) - a
      if (delta >= -128 && delta <= 127 && (values[i + 2] as number) - (values[i + 1] as number) === delta) {
        let run = 3
        while (
          i + run < n &&
          run < 130 &&
          safe(values[i + run]) &&
          (values[i + run] as number) - (values[i + run - 1] as number) === delta
        )
          run++
        w.byte(run - 3)
        w.byte(delta & 0xff)
        put(a)
        i += run
        continue
      }
    }
    let j = i
    while (j < n && j - i < 128) {
      if (j + 2 < n && safe(values[j]) && safe(values[j + 1]) && safe(values[j + 2])) {
        const d = (values[j + 1] as number) - (values[j] as number)
        if (d >= -128 && d <= 127 && (values[j + 2] as number) - (values[j + 1] as number) === d) break
      }
      j++
    }
    w.byte(0x100 - (j - i))
    for (let k = i; k < j; k++) put(values[k])
    i = j
  }
}

// ---- integer RLE v2 --------------------------------------------------------------------------

/** The 5-bit width code of RLE v2 to a bit width (non-delta: code 0 is one bit). */
const decodeWidth = (code: number): number => {
  if (code <= 23) return code + 1
  switch (code) {
    case 24:
      return 26
    case 25:
      return 28
    case 26:
      return 30
    case 27:
      return 32
    case 28:
      return 40
    case 29:
      return 48
    case 30:
      return 56
    default:
      return 64
  }
}

/** A bit width (one of the aligned ones, or 1..24) to its 5-bit code. */
const encodeWidth = (bits: number): number => {
  if (bits <= 24) return bits - 1
  if (bits <= 26) return 24
  if (bits <= 28) return 25
  if (bits <= 30) return 26
  if (bits <= 32) return 27
  if (bits <= 40) return 28
  if (bits <= 48) return 29
  if (bits <= 56) return 30
  return 31
}

/** The specification's `closestFixedBits` for a patch entry's gap + patch width. */
const closestFixedBits = (n: number): number => {
  if (n === 0) return 1
  if (n <= 24) return n
  if (n <= 26) return 26
  if (n <= 28) return 28
  if (n <= 30) return 30
  if (n <= 32) return 32
  if (n <= 40) return 40
  if (n <= 48) return 48
  if (n <= 56) return 56
  return 64
}

/** The widths this encoder writes: the aligned ones (the others are deprecated for writers). */
const alignedWidth = (bits: number): number => {
  if (bits <= 1) return 1
  if (bits <= 2) return 2
  if (bits <= 4) return 4
  if (bits <= 8) return 8
  if (bits <= 16) return 16
  if (bits <= 24) return 24
  if (bits <= 32) return 32
  if (bits <= 40) return 40
  if (bits <= 48) return 48
  if (bits <= 56) return 56
  return 64
}

/** The number of bits of a non-negative exact number (0 for 0). */
const bitsOf = (v: number): number => {
  if (v < 4294967296) return 32 - Math.clz32(v)
  let b = 32
  let x = Math.floor(v / 4294967296)
  while (x > 0) {
    b++
    x = Math.floor(x / 2)
  }
  return b
}

const bitsOfBig = (v: bigint): number => (v === 0n ? 0 : v.toString(2).length)

/** Unpacks `n` big-endian values of `w` ≤ 53 bits into `out[off, off + n)` (exact). */
const unpack = (r: ByteReader, n: number, w: number, out: Float64Array, off: number): void => {
  if (r.remaining() * 8 < n * w) r.fail(`${n} values of ${w} bits run past the end`)
  const buf = r.buf
  let pos = r.pos
  if (w === 8) {
    for (let i = 0; i < n; i++) out[off + i] = buf[pos++]
  } else if (w === 16) {
    for (let i = 0; i < n; i++) {
      out[off + i] = (buf[pos] << 8) | buf[pos + 1]
      pos += 2
    }
  } else if (w === 32) {
    for (let i = 0; i < n; i++) {
      out[off + i] = ((buf[pos] << 24) >>> 0) + ((buf[pos + 1] << 16) | (buf[pos + 2] << 8) | buf[pos + 3])
      pos += 4
    }
  } else if (w <= 24) {
    // at most 24 + 7 bits are ever pending, so `cur` stays a 31-bit integer
    let cur = 0
    let bits = 0
    const mask = (1 << w) - 1
    for (let i = 0; i < n; i++) {
      while (bits < w) {
        cur = ((cur & ((1 << bits) - 1)) << 8) | buf[pos++]
        bits += 8
      }
      bits -= w
      out[off + i] = (cur >>> bits) & mask
    }
  } else {
    r.pos = pos
    unpackSlow(r, n, w, out, off)
    return
  }
  r.pos = pos
}

/** Bit-by-byte unpacking of any width ≤ 53 (exact in doubles). */
const unpackSlow = (r: ByteReader, n: number, w: number, out: Float64Array, off: number): void => {
  const buf = r.buf
  let pos = r.pos
  let cur = 0
  let bits = 0
  for (let i = 0; i < n; i++) {
    let v = 0
    let need = w
    while (need > 0) {
      if (bits === 0) {
        cur = buf[pos++]
        bits = 8
      }
      const take = need < bits ? need : bits
      v = v * (1 << take) + ((cur >>> (bits - take)) & ((1 << take) - 1))
      bits -= take
      cur &= (1 << bits) - 1
      need -= take
    }
    out[off + i] = v
  }
  r.pos = pos
}

/** Unpacks `n` values of any width (up to 64 bits) as bigints. */
const unpackBig = (r: ByteReader, n: number, w: number): Array<bigint> => {
  if (r.remaining() * 8 < n * w) r.fail(`${n} values of ${w} bits run past the end`)
  const out = new Array<bigint>(n)
  let cur = 0
  let bits = 0
  for (let i = 0; i < n; i++) {
    let v = 0n
    let need = w
    while (need > 0) {
      if (bits === 0) {
        cur = r.byte()
        bits = 8
      }
      const take = need < bits ? need : bits
      v = (v << BigInt(take)) | BigInt((cur >>> (bits - take)) & ((1 << take) - 1))
      bits -= take
      cur &= (1 << bits) - 1
      need -= take
    }
    out[i] = v
  }
  return out
}

/** The base value of a patched-base run: big-endian with the sign in the top bit. */
const patchedBase = (r: ByteReader, bw: number): bigint => {
  const raw = r.bigEndianBig(bw)
  const sign = 1n << BigInt(bw * 8 - 1)
  return (raw & sign) !== 0n ? -(raw & (sign - 1n)) : raw
}

/**
 * Decodes one RLE v2 run starting at `r.pos` with bigints (the exact path) into `out[i, …)`;
 * returns how many values it wrote.
 */
const runV2Big = (r: ByteReader, signed: boolean, out: Float64Array, i: number, end: number): number => {
  const h = r.byte()
  const kind = h >>> 6
  const room = (count: number): void => {
    if (i + count > end) r.fail(`an RLEv2 run of ${count} overruns the values wanted`)
  }
  switch (kind) {
    case 0: {
      const width = ((h >>> 3) & 7) + 1
      const count = (h & 7) + 3
      room(count)
      const raw = r.bigEndianBig(width)
      const v = Number(signed ? unzigzagBig(raw) : raw)
      out.fill(v, i, i + count)
      return count
    }
    case 1: {
      const w = decodeWidth((h >>> 1) & 0x1f)
      const count = (((h & 1) << 8) | r.byte()) + 1
      room(count)
      const vals = unpackBig(r, count, w)
      for (let k = 0; k < count; k++) out[i + k] = Number(signed ? unzigzagBig(vals[k]) : vals[k])
      return count
    }
    case 2: {
      const w = decodeWidth((h >>> 1) & 0x1f)
      const count = (((h & 1) << 8) | r.byte()) + 1
      room(count)
      const b2 = r.byte()
      const bw = ((b2 >>> 5) & 7) + 1
      const pw = decodeWidth(b2 & 0x1f)
      const b3 = r.byte()
      const pgw = ((b3 >>> 5) & 7) + 1
      const pll = b3 & 0x1f
      if (pgw + pw > 64) r.fail(`a patch of ${pgw} + ${pw} bits is wider than 64 bits`)
      const base = patchedBase(r, bw)
      const data = unpackBig(r, count, w)
      const patches = unpackBig(r, pll, closestFixedBits(pgw + pw))
      applyPatches(r, data, patches, pw, w)
      for (let k = 0; k < count; k++) out[i + k] = Number(base + data[k])
      return count
    }
    default: {
      const code = (h >>> 1) & 0x1f
      const w = code === 0 ? 0 : decodeWidth(code)
      const count = (((h & 1) << 8) | r.byte()) + 1
      room(count)
      const first = signed ? r.svarintBig() : r.varintBig()
      const delta = r.svarintBig()
      let prev = first
      out[i] = Number(first)
      if (w === 0) {
        for (let k = 1; k < count; k++) {
          prev += delta
          out[i + k] = Number(prev)
        }
        return count
      }
      if (count < 2) r.fail("a delta run with delta bits has fewer than two values")
      prev = first + delta
      out[i + 1] = Number(prev)
      const deltas = unpackBig(r, count - 2, w)
      for (let k = 0; k < count - 2; k++) {
        prev = delta < 0n ? prev - deltas[k] : prev + deltas[k]
        out[i + 2 + k] = Number(prev)
      }
      return count
    }
  }
}

/** ORs the patch list into the unpacked values (gaps of 255 with a zero patch only move on). */
const applyPatches = (
  r: ByteReader,
  data: Array<bigint>,
  patches: ReadonlyArray<bigint>,
  pw: number,
  w: number
): void => {
  const mask = (1n << BigInt(pw)) - 1n
  let index = 0
  for (const entry of patches) {
    const gap = Number(entry >> BigInt(pw))
    const patch = entry & mask
    index += gap
    if (patch === 0n && gap === 255) continue
    if (index >= data.length) r.fail(`a patch at ${index} is past the ${data.length} values of its run`)
    data[index] |= patch << BigInt(w)
  }
}

/**
 * Decodes one RLE v2 run with doubles; returns the number of values written, or -1 when a value
 * or an intermediate sum is beyond 2^53 (the caller rewinds and takes `runV2Big`).
 */
const runV2 = (r: ByteReader, signed: boolean, out: Float64Array, i: number, end: number): number => {
  const h = r.byte()
  const kind = h >>> 6
  switch (kind) {
    case 0: {
      const width = ((h >>> 3) & 7) + 1
      if (width > 6) return -1
      const count = (h & 7) + 3
      if (i + count > end) r.fail(`an RLEv2 run of ${count} overruns the values wanted`)
      const raw = r.bigEndian(width)
      out.fill(signed ? unzigzag(raw) : raw, i, i + count)
      return count
    }
    case 1: {
      const w = decodeWidth((h >>> 1) & 0x1f)
      if (w > 53) return -1
      const count = (((h & 1) << 8) | r.byte()) + 1
      if (i + count > end) r.fail(`an RLEv2 run of ${count} overruns the values wanted`)
      unpack(r, count, w, out, i)
      if (signed) for (let k = i; k < i + count; k++) out[k] = unzigzag(out[k])
      return count
    }
    case 2:
      // patched base runs are rare (a few outliers in 512 values): the exact path is fast enough
      return -1
    default: {
      const code = (h >>> 1) & 0x1f
      const w = code === 0 ? 0 : decodeWidth(code)
      if (w > 53) return -1
      const count = (((h & 1) << 8) | r.byte()) + 1
      if (i + count > end) r.fail(`an RLEv2 run of ${count} overruns the values wanted`)
      const u = r.varint()
      if (u < 0) return -1
      const first = signed ? unzigzag(u) : u
      const d = r.svarint()
      if (d === undefined) return -1
      if (w === 0) {
        if (Math.abs(first) + Math.abs(d) * count >= TWO_53) return -1
        let v = first
        for (let k = 0; k < count; k++) {
          out[i + k] = v
          v += d
        }
        return count
      }
      if (count < 2) r.fail("a delta run with delta bits has fewer than two values")
      let prev = first + d
      if (Math.abs(prev) >= TWO_53) return -1
      out[i] = first
      out[i + 1] = prev
      unpack(r, count - 2, w, out, i + 2)
      for (let k = i + 2; k < i + count; k++) {
        prev = d < 0 ? prev - out[k] : prev + out[k]
        if (prev >= TWO_53 || prev <= -TWO_53) return -1
        out[k] = prev
      }
      return count
    }
  }
}

/** Decodes `n` integers of RLE v2 into `out[off, off + n)`. */
export const readIntRleV2 = (r: ByteReader, n: number, signed: boolean, out: Float64Array, off = 0): void => {
  let i = off
  const end = off + n
  while (i < end) {
    const start = r.pos
    let count = runV2(r, signed, out, i, end)
    if (count < 0) {
      r.pos = start
      count = runV2Big(r, signed, out, i, end)
    }
    i += count
  }
}

// ---- RLE v2 encoder --------------------------------------------------------------------------

const MAX_RUN = 512

/** Packs `n` values (exact, < 2^w) big-endian with `w` bits each. */
const pack = (out: ByteWriter, values: ArrayLike<number>, start: number, n: number, w: number): void => {
  let cur = 0
  let bits = 0
  for (let k = 0; k < n; k++) {
    const v = values[start + k]
    let left = w
    while (left > 0) {
      const room = 8 - bits
      const take = left < room ? left : room
      // the top `take` bits of the `left` remaining bits of v
      const div = 2 ** (left - take)
      const part = Math.floor(v / div) % (1 << take)
      cur = (cur << take) | part
      bits += take
      left -= take
      if (bits === 8) {
        out.byte(cur)
        cur = 0
        bits = 0
      }
    }
  }
  if (bits > 0) out.byte(cur << (8 - bits))
}

const packBig = (out: ByteWriter, values: ReadonlyArray<bigint>, w: number): void => {
  let cur = 0
  let bits = 0
  for (const v of values) {
    let left = w
    while (left > 0) {
      const room = 8 - bits
      const take = left < room ? left : room
      const part = Number((v >> BigInt(left - take)) & ((1n << BigInt(take)) - 1n))
      cur = (cur << take) | part
      bits += take
      left -= take
      if (bits === 8) {
        out.byte(cur)
        cur = 0
        bits = 0
      }
    }
  }
  if (bits > 0) out.byte(cur << (8 - bits))
}

/** Short repeat (3..10 copies of one value whose encoding fits 8 bytes). */
const writeShortRepeat = (w: ByteWriter, v: number | bigint, count: number, signed: boolean): void => {
  const u = safe(v) ? big(signed ? zigzag(v) : v) : signed ? zigzagBig(big(v)) : big(v)
  const bytes = Math.max(1, Math.ceil(bitsOfBig(u) / 8))
  w.byte(((bytes - 1) << 3) | (count - 3))
  w.bigEndianBig(u, bytes)
}

/** Direct: `n` values at one fixed width. */
const writeDirect = (
  w: ByteWriter,
  values: ArrayLike<number | bigint>,
  start: number,
  n: number,
  signed: boolean
): void => {
  let allSafe = true
  for (let k = 0; k < n; k++) if (!safe(values[start + k])) allSafe = false
  if (allSafe) {
    const us = new Float64Array(n)
    let max = 0
    for (let k = 0; k < n; k++) {
      const v = values[start + k] as number
      const u = signed ? zigzag(v) : v
      us[k] = u
      if (u > max) max = u
    }
    const width = alignedWidth(bitsOf(max))
    const code = encodeWidth(width)
    w.byte(0x40 | (code << 1) | ((n - 1) >>> 8))
    w.byte((n - 1) & 0xff)
    pack(w, us, 0, n, width)
    return
  }
  const us: Array<bigint> = []
  let maxBits = 0
  for (let k = 0; k < n; k++) {
    const b = big(values[start + k])
    const u = signed ? zigzagBig(b) : b
    us.push(u)
    maxBits = Math.max(maxBits, bitsOfBig(u))
  }
  const width = alignedWidth(maxBits)
  w.byte(0x40 | (encodeWidth(width) << 1) | ((n - 1) >>> 8))
  w.byte((n - 1) & 0xff)
  packBig(w, us, width)
}

/** Delta: a monotonic run of safe values (`deltas[0]` gives the direction). */
const writeDelta = (
  w: ByteWriter,
  values: ArrayLike<number | bigint>,
  start: number,
  n: number,
  signed: boolean
): void => {
  const first = values[start] as number
  const d0 = n > 1 ? (values[start + 1] as number) - first : 0
  let fixed = true
  let maxDelta = 0
  for (let k = 2; k < n; k++) {
    const d = (values[start + k] as number) - (values[start + k - 1] as number)
    if (d !== d0) fixed = false
    const m = Math.abs(d)
    if (m > maxDelta) maxDelta = m
  }
  const width = fixed ? 0 : Math.max(2, alignedWidth(bitsOf(maxDelta)))
  const code = width === 0 ? 0 : encodeWidth(width)
  w.byte(0xc0 | (code << 1) | ((n - 1) >>> 8))
  w.byte((n - 1) & 0xff)
  w.varint(signed ? zigzag(first) : first)
  w.svarint(d0)
  if (width !== 0) {
    const ds = new Float64Array(n - 2)
    for (let k = 2; k < n; k++) ds[k - 2] = Math.abs((values[start + k] as number) - (values[start + k - 1] as number))
    pack(w, ds, 0, n - 2, width)
  }
}

/**
 * Patched base for a run of safe values, when it is smaller than direct: the minimum as the base,
 * the 95th-percentile width for the values and a patch list for the rest. Returns false (and
 * writes nothing) when the run does not suit it.
 */
const tryPatchedBase = (
  w: ByteWriter,
  values: ArrayLike<number | bigint>,
  start: number,
  n: number,
  signed: boolean
): boolean => {
  if (n < 8) return false
  let min = Number.POSITIVE_INFINITY
  let maxZig = 0
  for (let k = 0; k < n; k++) {
    const v = values[start + k] as number
    if (v < min) min = v
    const z = signed ? zigzag(v) : v
    if (z > maxZig) maxZig = z
  }
  const adjusted = new Float64Array(n)
  const widths = new Array<number>(n)
  for (let k = 0; k < n; k++) {
    adjusted[k] = (values[start + k] as number) - min
    widths[k] = bitsOf(adjusted[k])
  }
  const sorted = [...widths].sort((a, b) => a - b)
  // the width that leaves out the widest 5% (floor(n * 0.05) values)
  const p95 = sorted[n - 1 - Math.floor(n * 0.05)]
  const maxWidth = sorted[n - 1]
  const dataWidth = alignedWidth(Math.max(1, p95))
  if (maxWidth <= dataWidth) return false
  const patchWidth = closestFixedBits(maxWidth - dataWidth)
  // patches and their gaps (a gap over 255 takes filler entries of gap 255, patch 0)
  const entries: Array<readonly [number, number]> = []
  let last = 0
  let maxGap = 0
  for (let k = 0; k < n; k++) {
    if (widths[k] <= dataWidth) continue
    let gap = k - last
    while (gap > 255) {
      entries.push([255, 0])
      gap -= 255
    }
    entries.push([gap, Math.floor(adjusted[k] / 2 ** dataWidth)])
    if (gap > maxGap) maxGap = gap
    last = k
  }
  if (entries.length > 31) return false
  const gapWidth = Math.max(1, bitsOf(Math.max(maxGap, entries.some((e) => e[1] === 0) ? 255 : 0)))
  if (gapWidth > 8 || gapWidth + patchWidth > 64) return false
  const baseBits = bitsOf(Math.abs(min)) + 1
  const baseBytes = Math.max(1, Math.ceil(baseBits / 8))
  if (baseBytes > 8) return false
  const directWidth = alignedWidth(bitsOf(maxZig))
  const entryBits = closestFixedBits(gapWidth + patchWidth)
  const pbSize = 4 + baseBytes + Math.ceil((n * dataWidth) / 8) + Math.ceil((entries.length * entryBits) / 8)
  const directSize = 2 + Math.ceil((n * directWidth) / 8)
  if (pbSize >= directSize) return false
  const mask = 2 ** dataWidth
  for (let k = 0; k < n; k++) adjusted[k] = adjusted[k] % mask
  w.byte(0x80 | (encodeWidth(dataWidth) << 1) | ((n - 1) >>> 8))
  w.byte((n - 1) & 0xff)
  w.byte(((baseBytes - 1) << 5) | encodeWidth(patchWidth))
  w.byte(((gapWidth - 1) << 5) | entries.length)
  const baseRaw = min < 0 ? BigInt(-min) | (1n << BigInt(baseBytes * 8 - 1)) : BigInt(min)
  w.bigEndianBig(baseRaw, baseBytes)
  pack(w, adjusted, 0, n, dataWidth)
  packBig(
    w,
    entries.map(([g, p]) => (BigInt(g) << BigInt(patchWidth)) | BigInt(p)),
    entryBits
  )
  return true
}

/** Encodes one literal block (no repeats of three inside) with the best sub-encoding. */
const writeLiterals = (
  w: ByteWriter,
  values: ArrayLike<number | bigint>,
  start: number,
  n: number,
  signed: boolean
): void => {
  let allSafe = true
  for (let k = 0; k < n; k++) if (!safe(values[start + k])) allSafe = false
  if (allSafe && n >= 3) {
    let up = true
    let down = true
    for (let k = 1; k < n; k++) {
      const d = (values[start + k] as number) - (values[start + k - 1] as number)
      if (d < 0) up = false
      if (d > 0) down = false
    }
    const d0 = (values[start + 1] as number) - (values[start] as number)
    // the first delta gives the direction, so a non-increasing run must start going down
    if (up || (down && d0 < 0)) {
      writeDelta(w, values, start, n, signed)
      return
    }
  }
  if (allSafe && tryPatchedBase(w, values, start, n, signed)) return
  writeDirect(w, values, start, n, signed)
}

const same = (a: number | bigint, b: number | bigint): boolean => (typeof a === typeof b ? a === b : big(a) === big(b))

/** Encodes `values[0, n)` (exact integers) with RLE v2. */
export const writeIntRleV2 = (w: ByteWriter, values: ArrayLike<number | bigint>, n: number, signed: boolean): void => {
  let i = 0
  while (i < n) {
    let run = 1
    while (i + run < n && run < MAX_RUN && same(values[i + run], values[i])) run++
    if (run >= 3) {
      if (run <= 10) writeShortRepeat(w, values[i], run, signed)
      else if (safe(values[i])) {
        // a fixed delta of zero
        w.byte(0xc0 | ((run - 1) >>> 8))
        w.byte((run - 1) & 0xff)
        const v = values[i] as number
        w.varint(signed ? zigzag(v) : v)
        w.svarint(0)
      } else {
        // an unsafe repeated value: short repeats of up to 10
        let left = run
        while (left > 0) {
          const c = left >= 13 || left <= 10 ? Math.min(10, left) : left - 3
          writeShortRepeat(w, values[i], c, signed)
          left -= c
        }
      }
      i += run
      continue
    }
    let j = i
    while (j < n && j - i < MAX_RUN) {
      if (j + 2 < n && same(values[j], values[j + 1]) && same(values[j], values[j + 2])) break
      j++
    }
    writeLiterals(w, values, i, j - i, signed)
    i = j
  }
}
