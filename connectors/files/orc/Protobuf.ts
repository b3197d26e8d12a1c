/**
 * The few Protocol Buffers wire rules the ORC file tail needs (ORC stores its postscript,
 * footer, metadata and stripe footers as proto2 messages): varint, 64-bit, length-delimited and
 * 32-bit fields, packed repeated varints, and skipping unknown fields. Decoders are written per
 * message in `OrcProto.ts`; no generated code.
 *
 * @since 0.1.0
 */
import { ByteReader, ByteWriter } from "./Bytes.ts"

export const VARINT = 0
export const FIXED64 = 1
export const LENGTH_DELIMITED = 2
export const FIXED32 = 5

/** Reads the fields of one message: `for (const [field, wire] of fields(r)) …`. */
export class ProtoReader {
  readonly r: ByteReader

  constructor(buf: Uint8Array, what: string) {
    this.r = new ByteReader(buf, what)
  }

  /** The next field's number and wire type, or `undefined` at the end of the message. */
  next(): readonly [number, number] | undefined {
    if (this.r.atEnd()) return undefined
    const key = this.r.varint()
    if (key < 0) this.r.fail("a field key is out of range")
    const field = Math.floor(key / 8)
    const wire = key % 8
    if (field === 0) this.r.fail("a field number is 0")
    return [field, wire]
  }

  /** An unsigned varint (exact below 2^53; beyond, the value is not one ORC's tail uses as a size). */
  uint(wire: number): number {
    this.expect(wire, VARINT)
    const v = this.r.varint()
    return v < 0 ? Number.MAX_SAFE_INTEGER : v
  }

  bool(wire: number): boolean {
    return this.uint(wire) !== 0
  }

  bytes(wire: number): Uint8Array {
    this.expect(wire, LENGTH_DELIMITED)
    const n = this.r.varint()
    return this.r.take(n)
  }

  string(wire: number): string {
    return decoder.decode(this.bytes(wire))
  }

  /** A nested message's bytes, as a reader. */
  message(wire: number, what: string): ProtoReader {
    return new ProtoReader(this.bytes(wire), what)
  }

  /** Repeated varints: packed (one length-delimited field) or not (one value). */
  uints(wire: number, into: Array<number>): void {
    if (wire === LENGTH_DELIMITED) {
      const inner = new ByteReader(this.bytes(wire), this.r.what)
      while (!inner.atEnd()) {
        const v = inner.varint()
        into.push(v < 0 ? Number.MAX_SAFE_INTEGER : v)
      }
    } else into.push(this.uint(wire))
  }

  /** Skips a field this decoder does not read. */
  skip(wire: number): void {
    switch (wire) {
      case VARINT:
        this.r.varintBig()
        return
      case FIXED64:
        this.r.take(8)
        return
      case LENGTH_DELIMITED:
        this.r.take(this.r.varint())
        return
      case FIXED32:
        this.r.take(4)
        return
      default:
        this.r.fail(`unknown wire type ${wire}`)
    }
  }

  private expect(wire: number, want: number): void {
    if (wire !== want) this.r.fail(`wire type ${wire} where ${want} was expected`)
  }
}

const decoder = new TextDecoder("utf-8", { fatal: false })
const encoder = new TextEncoder()

/** Writes one message's fields in the order called. */
export class ProtoWriter {
  readonly w = new ByteWriter(256)

  private key(field: number, wire: number): void {
    this.w.varint(field * 8 + wire)
  }

  uint(field: number, value: number | undefined): this {
    if (value === undefined) return this
    this.key(field, VARINT)
    this.w.varint(value)
    return this
  }

  bool(field: number, value: boolean | undefined): this {
    return value === undefined ? this : this.uint(field, value ? 1 : 0)
  }

  /** A `sint64` field (zigzag). */
  sint(field: number, value: number | undefined): this {
    if (value === undefined) return this
    this.key(field, VARINT)
    this.w.svarint(value)
    return this
  }

  double(field: number, value: number | undefined): this {
    if (value === undefined) return this
    this.key(field, FIXED64)
    const b = new Uint8Array(8)
    new DataView(b.buffer).setFloat64(0, value, true)
    this.w.bytes(b)
    return this
  }

  bytes(field: number, value: Uint8Array | undefined): this {
    if (value === undefined) return this
    this.key(field, LENGTH_DELIMITED)
    this.w.varint(value.length)
    this.w.bytes(value)
    return this
  }

  string(field: number, value: string | undefined): this {
    return value === undefined ? this : this.bytes(field, encoder.encode(value))
  }

  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter()
    build(inner)
    return this.bytes(field, inner.finish())
  }

  packed(field: number, values: ReadonlyArray<number>): this {
    if (values.length === 0) return this
    const inner = new ByteWriter(values.length * 2)
    for (const v of values) inner.varint(v)
    return this.bytes(field, inner.finish())
  }

  finish(): Uint8Array {
    return this.w.finish()
  }
}
