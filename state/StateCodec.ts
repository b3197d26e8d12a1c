/**
 * The binary codec of state values: what an operator hands `StateStore.put` (a JSON-safe value:
 * `null`, booleans, numbers, strings, arrays and plain objects of them, the forms the operators'
 * `toJSON` helpers produce) as bytes, without JSON text on the way.
 *
 * An encoded value is a "binary string": one character per byte (code units 0..255, Node's
 * `latin1`). That form is what the stores keep in memory: V8 holds it in one byte per
 * character, `===` compares two values byte for byte (a put of an unchanged value is found
 * without decoding), it is a cheap `Map` value, and a delta file takes its bytes with one
 * `latin1` write. Keys stay the strings the operators derive from their key columns
 * (`core/Ordering.ts` `keyString`): they already are a canonical form usable as a `Map` key, and
 * the files hold their UTF-8 bytes.
 *
 * Layout: one tag byte per value, then its payload.
 *
 * ```
 * 0 null   1 false   2 true
 * 3 integer (|n| < 2^52): zig-zag varint       4 float64 (8 bytes, big-endian; NaN, ±Infinity, -0 kept)
 * 5 ASCII string: varint length, the bytes      6 other string: varint UTF-8 length, the UTF-8 bytes
 * 7 array: varint count, the items              8 object: varint count, then (key as 5/6 without tag, value)
 * 9 bigint: its decimal digits as an ASCII string (5 without tag)
 * 10 bytes (Uint8Array): varint length, the bytes
 * ```
 *
 * What JSON would do is kept where the store's contract relies on it: `undefined` in an array is
 * `null`, `undefined` and function properties of an object are left out, a value with a
 * `toJSON` method (a `Date`) is stored as its `toJSON()` result. Beyond JSON, `NaN`, `±Infinity`
 * and `-0` keep their value (JSON turns them into `null` and `0`), and `bigint` and `Uint8Array`
 * values are stored as such. A value the codec cannot represent (a function, a symbol, or
 * `undefined` at the top) is refused with `undefined` from `encode`.
 *
 * @since 0.1.0
 */
import { Buffer } from "node:buffer"

const TAG_NULL = 0
const TAG_FALSE = 1
const TAG_TRUE = 2
const TAG_INT = 3
const TAG_F64 = 4
const TAG_ASCII = 5
const TAG_UTF8 = 6
const TAG_ARRAY = 7
const TAG_OBJECT = 8
const TAG_BIGINT = 9
const TAG_BYTES = 10

const f64 = new Float64Array(1)
const f64Bytes = new Uint8Array(f64.buffer)
/** Float64Array's bytes are in the platform's order; the file's are big-endian. */
const LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/** Integers below this magnitude are varints (their zig-zag form stays a safe integer). */
const MAX_INT = 2 ** 52

/** The most nested arrays/objects a value may have (JSON.stringify's own limit is the stack). */
const MAX_DEPTH = 1000

/**
 * A growable byte buffer the encoder writes into; one is reused for every value of a store.
 *
 * @since 0.1.0
 */
class Writer {
  buf: Buffer = Buffer.allocUnsafe(256)
  pos = 0

  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return
    let size = this.buf.length * 2
    while (size < this.pos + n) size *= 2
    const next = Buffer.allocUnsafe(size)
    this.buf.copy(next, 0, 0, this.pos)
    this.buf = next
  }

  /** A non-negative safe integer, 7 bits a byte, low bits first. */
  varint(n: number): void {
    this.ensure(8)
    const b = this.buf
    while (n >= 0x80000000) {
      b[this.pos++] = (n % 128) | 0x80
      n = Math.floor(n / 128)
    }
    while (n >= 0x80) {
      b[this.pos++] = (n & 0x7f) | 0x80
      n >>>= 7
    }
    b[this.pos++] = n
  }

  /** A string without tag: ASCII or UTF-8 (the caller wrote the tag saying which). */
  string(s: string, ascii: boolean): void {
    if (ascii) {
      this.varint(s.length)
      this.ensure(s.length)
      const b = this.buf
      let p = this.pos
      for (let i = 0; i < s.length; i++) b[p++] = s.charCodeAt(i)
      this.pos = p
    } else {
      const n = Buffer.byteLength(s, "utf8")
      this.varint(n)
      this.ensure(n)
      this.buf.write(s, this.pos, n, "utf8")
      this.pos += n
    }
  }
}

const isAscii = (s: string): boolean => {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0x80) return false
  return true
}

/** Writes `v`; false when it cannot be represented. */
const write = (w: Writer, v: unknown, depth: number): boolean => {
  switch (typeof v) {
    case "number": {
      if (Number.isInteger(v) && v < MAX_INT && v > -MAX_INT && !Object.is(v, -0)) {
        w.ensure(9)
        w.buf[w.pos++] = TAG_INT
        w.varint(v >= 0 ? v * 2 : -v * 2 - 1)
        return true
      }
      w.ensure(9)
      const b = w.buf
      b[w.pos++] = TAG_F64
      f64[0] = v
      if (LITTLE) for (let i = 7; i >= 0; i--) b[w.pos++] = f64Bytes[i]
      else for (let i = 0; i < 8; i++) b[w.pos++] = f64Bytes[i]
      return true
    }
    case "string": {
      const ascii = isAscii(v)
      w.ensure(1)
      w.buf[w.pos++] = ascii ? TAG_ASCII : TAG_UTF8
      w.string(v, ascii)
      return true
    }
    case "boolean":
      w.ensure(1)
      w.buf[w.pos++] = v ? TAG_TRUE : TAG_FALSE
      return true
    case "bigint":
      w.ensure(1)
      w.buf[w.pos++] = TAG_BIGINT
      w.string(v.toString(), true)
      return true
    case "object": {
      if (v === null) {
        w.ensure(1)
        w.buf[w.pos++] = TAG_NULL
        return true
      }
      if (depth >= MAX_DEPTH) return false
      if (Array.isArray(v)) {
        w.ensure(1)
        w.buf[w.pos++] = TAG_ARRAY
        w.varint(v.length)
        for (let i = 0; i < v.length; i++) {
          const item: unknown = v[i]
          if (item === undefined || typeof item === "function" || typeof item === "symbol") {
            // JSON: an unrepresentable array item is null.
            w.ensure(1)
            w.buf[w.pos++] = TAG_NULL
          } else if (!write(w, item, depth + 1)) return false
        }
        return true
      }
      if (v instanceof Uint8Array) {
        w.ensure(1)
        w.buf[w.pos++] = TAG_BYTES
        w.varint(v.length)
        w.ensure(v.length)
        w.buf.set(v, w.pos)
        w.pos += v.length
        return true
      }
      const toJSON = (v as { toJSON?: unknown }).toJSON
      if (typeof toJSON === "function") return write(w, toJSON.call(v), depth + 1)
      const keys = Object.keys(v)
      let n = 0
      for (const k of keys) {
        const x = (v as Record<string, unknown>)[k]
        if (x !== undefined && typeof x !== "function" && typeof x !== "symbol") n++
      }
      w.ensure(1)
      w.buf[w.pos++] = TAG_OBJECT
      w.varint(n)
      for (const k of keys) {
        const x = (v as Record<string, unknown>)[k]
        if (x === undefined || typeof x === "function" || typeof x === "symbol") continue
        const ascii = isAscii(k)
        w.ensure(1)
        w.buf[w.pos++] = ascii ? TAG_ASCII : TAG_UTF8
        w.string(k, ascii)
        if (!write(w, x, depth + 1)) return false
      }
      return true
    }
    default:
      return false
  }
}

/**
 * Thrown by `decode` for bytes that are not an encoded value (a damaged file that passed its
 * checksum cannot produce them; a caller that built the bytes by hand can).
 *
 * @since 0.1.0
 */
export class MalformedValue extends Error {
  override readonly name = "MalformedValue"
}

/** A decoder over one binary string. */
class Reader {
  pos = 0
  readonly s: string
  constructor(s: string) {
    this.s = s
  }

  byte(): number {
    if (this.pos >= this.s.length) throw new MalformedValue("the value ends early")
    return this.s.charCodeAt(this.pos++)
  }

  varint(): number {
    let n = 0
    let shift = 0
    for (;;) {
      const b = this.byte()
      n += (b & 0x7f) * 2 ** shift
      if (b < 0x80) return n
      shift += 7
      if (shift > 49) throw new MalformedValue("a length or integer is too long")
    }
  }

  take(n: number): string {
    const end = this.pos + n
    if (end > this.s.length) throw new MalformedValue("the value ends early")
    const out = this.s.slice(this.pos, end)
    this.pos = end
    return out
  }

  string(tag: number): string {
    const n = this.varint()
    if (tag === TAG_ASCII) return this.take(n)
    if (tag === TAG_UTF8) return Buffer.from(this.take(n), "latin1").toString("utf8")
    throw new MalformedValue(`tag ${tag} is not a string`)
  }

  value(depth: number): unknown {
    const tag = this.byte()
    switch (tag) {
      case TAG_NULL:
        return null
      case TAG_FALSE:
        return false
      case TAG_TRUE:
        return true
      case TAG_INT: {
        const z = this.varint()
        return z % 2 === 0 ? z / 2 : -(z + 1) / 2
      }
      case TAG_F64: {
        if (this.pos + 8 > this.s.length) throw new MalformedValue("the value ends early")
        const s = this.s
        let p = this.pos
        if (LITTLE) for (let i = 7; i >= 0; i--) f64Bytes[i] = s.charCodeAt(p++)
        else for (let i = 0; i < 8; i++) f64Bytes[i] = s.charCodeAt(p++)
        this.pos = p
        return f64[0]
      }
      case TAG_ASCII:
      case TAG_UTF8:
        return this.string(tag)
      case TAG_ARRAY: {
        if (depth >= MAX_DEPTH) throw new MalformedValue("the value is nested too deeply")
        const n = this.varint()
        if (n > this.s.length - this.pos) throw new MalformedValue("an array is longer than the value")
        const out = new Array<unknown>(n)
        for (let i = 0; i < n; i++) out[i] = this.value(depth + 1)
        return out
      }
      case TAG_OBJECT: {
        if (depth >= MAX_DEPTH) throw new MalformedValue("the value is nested too deeply")
        const n = this.varint()
        const out: Record<string, unknown> = {}
        for (let i = 0; i < n; i++) {
          const k = this.string(this.byte())
          const x = this.value(depth + 1)
          // `__proto__` as an own property, as JSON.parse makes it.
          if (k === "__proto__")
            Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true })
          else out[k] = x
        }
        return out
      }
      case TAG_BIGINT: {
        const digits = this.string(TAG_ASCII)
        if (!/^-?\d+$/.test(digits)) throw new MalformedValue("a bigint has no digits")
        return BigInt(digits)
      }
      case TAG_BYTES: {
        const n = this.varint()
        return new Uint8Array(Buffer.from(this.take(n), "latin1"))
      }
      default:
        throw new MalformedValue(`unknown tag ${tag}`)
    }
  }
}

/**
 * Encodes and decodes values; `encode` reuses one buffer, so a codec serves one caller at a time
 * (each store session makes its own, or shares the module's: JavaScript runs one at a time).
 *
 * @since 0.1.0
 */
export interface ValueCodec {
  /** The value's bytes as a binary string, or `undefined` when it cannot be represented. */
  readonly encode: (value: unknown) => string | undefined
  /** The value of a binary string `encode` made; throws `MalformedValue` for anything else. */
  readonly decode: (bytes: string) => unknown
}

const shared = new Writer()

/**
 * The binary value codec.
 *
 * @example
 * ```ts
 * import { BinaryValueCodec } from "../state/StateCodec.ts"
 * const bytes = BinaryValueCodec.encode([["u1", 1700000000000], 3, [12.5, 1, null]])!
 * BinaryValueCodec.decode(bytes) // [["u1", 1700000000000], 3, [12.5, 1, null]]
 * ```
 * @since 0.1.0
 */
export const BinaryValueCodec: ValueCodec = {
  encode: (value) => {
    const w = shared
    w.pos = 0
    if (value === undefined || !write(w, value, 0)) return undefined
    // Long values would pin the grown buffer: start small again after them.
    const out = w.buf.toString("latin1", 0, w.pos)
    if (w.buf.length > 1 << 20) w.buf = Buffer.allocUnsafe(256)
    return out
  },
  decode: (bytes) => {
    const r = new Reader(bytes)
    const v = r.value(0)
    if (r.pos !== bytes.length) throw new MalformedValue(`${bytes.length - r.pos} bytes follow the value`)
    return v
  }
}

/**
 * JSON text as the value form (the DuckDB provider's tables hold JSON text).
 *
 * @since 0.1.0
 */
export const JsonValueCodec: ValueCodec = {
  encode: (value) => JSON.stringify(value),
  decode: (text) => JSON.parse(text)
}
