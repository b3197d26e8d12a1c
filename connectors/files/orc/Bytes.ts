/**
 * Byte-level reading and writing for the ORC codec: a bounds-checked cursor over a byte array
 * and a growable output buffer, with the base-128 varints ORC and Protocol Buffers share.
 *
 * Integers are JavaScript numbers while they are exact (|v| ≤ 2^53); the varint readers say when a
 * value is beyond that so the caller can redo the run with `bigint`s (see `RunLengthInteger.ts`).
 * Every read past the end throws `OrcCorruption`, which the file reader turns into a
 * `ConnectorError` that names the file: a truncated or bit-flipped file never reads garbage
 * silently and never crashes the process.
 *
 * @since 0.1.0
 */

/** A structural problem in an ORC file (thrown inside the codec, caught at its boundary). */
export class OrcCorruption extends Error {
  override readonly name = "OrcCorruption"
}

/** 2^53: the first integer a double cannot tell from its neighbour. */
export const TWO_53 = 9007199254740992
const TWO_32 = 4294967296

/** Reads bytes from `buf[pos, end)`; every read checks the bound. */
export class ByteReader {
  readonly buf: Uint8Array
  pos: number
  readonly end: number
  /** What the bytes are, for error messages (`column 3 DATA`). */
  readonly what: string

  constructor(buf: Uint8Array, what: string, pos = 0, end = buf.length) {
    this.buf = buf
    this.what = what
    this.pos = pos
    this.end = end
  }

  remaining(): number {
    return this.end - this.pos
  }

  atEnd(): boolean {
    return this.pos >= this.end
  }

  fail(detail: string): never {
    throw new OrcCorruption(`${this.what}: ${detail} at byte ${this.pos}`)
  }

  byte(): number {
    if (this.pos >= this.end) this.fail("unexpected end of stream")
    return this.buf[this.pos++]
  }

  /** `n` bytes as a view (no copy). */
  take(n: number): Uint8Array {
    if (n < 0 || this.pos + n > this.end) this.fail(`a length of ${n} bytes runs past the end`)
    const out = this.buf.subarray(this.pos, this.pos + n)
    this.pos += n
    return out
  }

  /**
   * An unsigned varint as a number; `-1` when it does not fit a double exactly (≥ 2^53): the
   * caller then re-reads it with `varintBig` from the position it saved.
   */
  varint(): number {
    let b = this.byte()
    if (b < 0x80) return b
    let value = b & 0x7f
    let mul = 128
    for (let i = 1; i < 10; i++) {
      b = this.byte()
      value += (b & 0x7f) * mul
      if (b < 0x80) return value < TWO_53 ? value : -1
      mul *= 128
    }
    return this.fail("a varint is longer than 10 bytes")
  }

  /** An unsigned varint of any length (decimals use unbounded ones). */
  varintBig(): bigint {
    let value = 0n
    let shift = 0n
    for (;;) {
      const b = this.byte()
      value |= BigInt(b & 0x7f) << shift
      if (b < 0x80) return value
      shift += 7n
      if (shift > 7n * 40n) this.fail("a varint is longer than 40 bytes")
    }
  }

  /** A zigzag-encoded signed varint as a number, or `undefined` beyond ±2^52 (re-read with `svarintBig`). */
  svarint(): number | undefined {
    const u = this.varint()
    if (u < 0) return undefined
    return unzigzag(u)
  }

  svarintBig(): bigint {
    return unzigzagBig(this.varintBig())
  }

  /** A big-endian unsigned integer of `n` bytes (n ≤ 6 is exact as a number). */
  bigEndian(n: number): number {
    let v = 0
    for (let i = 0; i < n; i++) v = v * 256 + this.byte()
    return v
  }

  bigEndianBig(n: number): bigint {
    let v = 0n
    for (let i = 0; i < n; i++) v = (v << 8n) | BigInt(this.byte())
    return v
  }
}

/** Zigzag decoding of an exact number (`(u >>> 1) ^ -(u & 1)` without 32-bit truncation). */
export const unzigzag = (u: number): number => (u % 2 === 0 ? u / 2 : -(u + 1) / 2)

export const unzigzagBig = (u: bigint): bigint => ((u & 1n) === 0n ? u >> 1n : -((u + 1n) >> 1n))

export const zigzag = (v: number): number => (v >= 0 ? v * 2 : -v * 2 - 1)

export const zigzagBig = (v: bigint): bigint => (v >= 0n ? v << 1n : (-v << 1n) - 1n)

/** A growable byte buffer. */
export class ByteWriter {
  buf: Uint8Array
  length = 0

  constructor(initial = 1024) {
    this.buf = new Uint8Array(initial)
  }

  private grow(extra: number): void {
    let size = this.buf.length * 2
    while (size < this.length + extra) size *= 2
    const next = new Uint8Array(size)
    next.set(this.buf.subarray(0, this.length))
    this.buf = next
  }

  byte(b: number): void {
    if (this.length === this.buf.length) this.grow(1)
    this.buf[this.length++] = b
  }

  bytes(b: Uint8Array): void {
    if (this.length + b.length > this.buf.length) this.grow(b.length)
    this.buf.set(b, this.length)
    this.length += b.length
  }

  /** An unsigned varint of an exact non-negative number. */
  varint(v: number): void {
    let x = v
    while (x >= 128) {
      this.byte((x % 128) | 0x80)
      x = Math.floor(x / 128)
    }
    this.byte(x)
  }

  varintBig(v: bigint): void {
    let x = v
    while (x >= 128n) {
      this.byte(Number(x & 0x7fn) | 0x80)
      x >>= 7n
    }
    this.byte(Number(x))
  }

  svarint(v: number): void {
    this.varint(zigzag(v))
  }

  /** `n` bytes of an exact non-negative number, big-endian. */
  bigEndian(v: number, n: number): void {
    for (let i = n - 1; i >= 0; i--) this.byte(Math.floor(v / 256 ** i) % 256)
  }

  bigEndianBig(v: bigint, n: number): void {
    for (let i = n - 1; i >= 0; i--) this.byte(Number((v >> BigInt(8 * i)) & 0xffn))
  }

  /** The bytes written so far (a view). */
  view(): Uint8Array {
    return this.buf.subarray(0, this.length)
  }

  /** A copy of the bytes written so far. */
  finish(): Uint8Array {
    return this.buf.slice(0, this.length)
  }
}

/** The high and low 32 bits of an exact non-negative number below 2^64. */
export const splitHiLo = (v: number): readonly [number, number] => {
  const hi = Math.floor(v / TWO_32)
  return [hi, v - hi * TWO_32]
}
