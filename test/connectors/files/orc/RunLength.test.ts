/**
 * ORC's run-length encodings: the worked examples of the ORC v1 specification as golden bytes
 * (decoded and, where the specification's writer choices are this encoder's, encoded), and
 * round trips of every sub-encoding, including values beyond 2^53 given as bigints.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ByteReader, ByteWriter } from "../../../../connectors/files/orc/Bytes.ts"
import {
  readBooleans,
  readByteRle,
  readIntRleV1,
  readIntRleV2,
  writeBooleans,
  writeByteRle,
  writeIntRleV1,
  writeIntRleV2
} from "../../../../connectors/files/orc/RunLength.ts"

const bytes = (...xs: ReadonlyArray<number>) => Uint8Array.from(xs)

const decodeV2 = (b: Uint8Array, n: number, signed = false): Array<number> => {
  const out = new Float64Array(n)
  const r = new ByteReader(b, "test")
  readIntRleV2(r, n, signed, out)
  expect(r.atEnd()).toBe(true)
  return [...out]
}

const decodeV1 = (b: Uint8Array, n: number, signed = false): Array<number> => {
  const out = new Float64Array(n)
  const r = new ByteReader(b, "test")
  readIntRleV1(r, n, signed, out)
  expect(r.atEnd()).toBe(true)
  return [...out]
}

const encodeV2 = (values: ReadonlyArray<number | bigint>, signed = false): Uint8Array => {
  const w = new ByteWriter()
  writeIntRleV2(w, values, values.length, signed)
  return w.finish()
}

const encodeV1 = (values: ReadonlyArray<number | bigint>, signed = false): Uint8Array => {
  const w = new ByteWriter()
  writeIntRleV1(w, values, values.length, signed)
  return w.finish()
}

const PATCHED = [
  2030, 2000, 2020, 1000000, 2040, 2050, 2060, 2070, 2080, 2090, 2100, 2110, 2120, 2130, 2140, 2150, 2160, 2170, 2180,
  2190
]
const PATCHED_BYTES = bytes(
  0x8e,
  0x13,
  0x2b,
  0x21,
  0x07,
  0xd0,
  0x1e,
  0x00,
  0x14,
  0x70,
  0x28,
  0x32,
  0x3c,
  0x46,
  0x50,
  0x5a,
  0x64,
  0x6e,
  0x78,
  0x82,
  0x8c,
  0x96,
  0xa0,
  0xaa,
  0xb4,
  0xbe,
  0xfc,
  0xe8
)

describe("the specification's examples", () => {
  it("byte RLE: a hundred zeros and two literals", () => {
    const w = new ByteWriter()
    writeByteRle(w, new Uint8Array(100), 100)
    expect([...w.finish()]).toEqual([0x61, 0x00])
    const w2 = new ByteWriter()
    writeByteRle(w2, [0x44, 0x45], 2)
    expect([...w2.finish()]).toEqual([0xfe, 0x44, 0x45])
    const out = new Uint8Array(102)
    const r = new ByteReader(bytes(0x61, 0x00, 0xfe, 0x44, 0x45), "test")
    readByteRle(r, 102, out)
    expect([...out.subarray(98)]).toEqual([0, 0, 0x44, 0x45])
  })

  it("booleans: [0xff, 0x80] is one true and seven false", () => {
    const out = new Uint8Array(8)
    readBooleans(new ByteReader(bytes(0xff, 0x80), "test"), 8, out)
    expect([...out]).toEqual([1, 0, 0, 0, 0, 0, 0, 0])
    const w = new ByteWriter()
    writeBooleans(w, [1, 0, 0, 0, 0, 0, 0, 0], 8)
    expect([...w.finish()]).toEqual([0xff, 0x80])
  })

  it("RLE v1: a run, a descending run and literals", () => {
    expect(decodeV1(bytes(0x61, 0x00, 0x07), 100)).toEqual(new Array(100).fill(7))
    expect(decodeV1(bytes(0x61, 0xff, 0x64), 100)).toEqual(Array.from({ length: 100 }, (_, i) => 100 - i))
    expect(decodeV1(bytes(0xfb, 0x02, 0x03, 0x06, 0x07, 0x0b), 5)).toEqual([2, 3, 6, 7, 11])
    expect([...encodeV1(new Array(100).fill(7))]).toEqual([0x61, 0x00, 0x07])
    expect([...encodeV1(Array.from({ length: 100 }, (_, i) => 100 - i))]).toEqual([0x61, 0xff, 0x64])
    expect([...encodeV1([2, 3, 6, 7, 11])]).toEqual([0xfb, 0x02, 0x03, 0x06, 0x07, 0x0b])
  })

  it("RLE v2 short repeat: five times 10000", () => {
    expect(decodeV2(bytes(0x0a, 0x27, 0x10), 5)).toEqual([10000, 10000, 10000, 10000, 10000])
    expect([...encodeV2([10000, 10000, 10000, 10000, 10000])]).toEqual([0x0a, 0x27, 0x10])
  })

  it("RLE v2 direct: four 16-bit values", () => {
    const b = bytes(0x5e, 0x03, 0x5c, 0xa1, 0xab, 0x1e, 0xde, 0xad, 0xbe, 0xef)
    expect(decodeV2(b, 4)).toEqual([23713, 43806, 57005, 48879])
    expect([...encodeV2([23713, 43806, 57005, 48879])]).toEqual([...b])
  })

  it("RLE v2 patched base: twenty values with one outlier", () => {
    expect(decodeV2(PATCHED_BYTES, 20)).toEqual(PATCHED)
    expect([...encodeV2(PATCHED)]).toEqual([...PATCHED_BYTES])
  })

  it("RLE v2 delta: the first primes", () => {
    const b = bytes(0xc6, 0x09, 0x02, 0x02, 0x22, 0x42, 0x42, 0x46)
    expect(decodeV2(b, 10)).toEqual([2, 3, 5, 7, 11, 13, 17, 19, 23, 29])
    expect([...encodeV2([2, 3, 5, 7, 11, 13, 17, 19, 23, 29])]).toEqual([...b])
  })
})

describe("round trips", () => {
  const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
  const uint64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })
  const asInput = (v: bigint): number | bigint => (v >= -(2n ** 52n) && v <= 2n ** 52n ? Number(v) : v)
  /** Arrays shaped to hit every sub-encoding: repeats, monotonic runs, outliers, random values. */
  const shaped = (value: fc.Arbitrary<bigint>) =>
    fc.array(
      fc.oneof(
        fc.tuple(value, fc.integer({ min: 1, max: 700 })).map(([v, n]) => new Array<bigint>(n).fill(v)),
        fc
          .tuple(value, fc.bigInt({ min: -1000n, max: 1000n }), fc.integer({ min: 2, max: 600 }))
          .map(([v, d, n]) => Array.from({ length: n }, (_, i) => v + d * BigInt(i))),
        fc
          .tuple(fc.array(fc.bigInt({ min: 0n, max: 300n }), { minLength: 20, maxLength: 600 }), value)
          .map(([xs, outlier]) => xs.map((x, i) => (i % 37 === 5 ? outlier : x))),
        fc.array(value, { maxLength: 600 })
      ),
      { maxLength: 6 }
    )

  const clamp = (v: bigint, signed: boolean): bigint => {
    const min = signed ? -(2n ** 63n) : 0n
    const max = signed ? 2n ** 63n - 1n : 2n ** 64n - 1n
    return v < min ? min : v > max ? max : v
  }

  for (const signed of [true, false]) {
    for (const [name, encode, decode] of [
      ["v2", encodeV2, decodeV2],
      ["v1", encodeV1, decodeV1]
    ] as const) {
      it(`RLE ${name} ${signed ? "signed" : "unsigned"}: decode(encode(xs)) is xs, as the nearest doubles`, () => {
        fc.assert(
          fc.property(shaped(signed ? int64 : uint64), (parts) => {
            const xs = parts.flat().map((v) => clamp(v, signed))
            // RLE v1 runs and literals are varints of at most 64 bits: unsigned values too
            const encoded = encode(xs.map(asInput), signed)
            expect(decode(encoded, xs.length, signed)).toEqual(xs.map((v) => Number(v)))
          }),
          { numRuns: 150 }
        )
      })
    }
  }

  it("byte RLE and booleans", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constant(7)), { maxLength: 2000 }), (xs) => {
        const w = new ByteWriter()
        writeByteRle(w, xs, xs.length)
        const out = new Uint8Array(xs.length)
        readByteRle(new ByteReader(w.finish(), "t"), xs.length, out)
        expect([...out]).toEqual(xs)
        const bits = xs.map((x) => x & 1)
        const wb = new ByteWriter()
        writeBooleans(wb, bits, bits.length)
        const outBits = new Uint8Array(bits.length)
        readBooleans(new ByteReader(wb.finish(), "t"), bits.length, outBits)
        expect([...outBits]).toEqual(bits)
      })
    )
  })

  it("a run longer than the values wanted is corruption, not an overrun", () => {
    const out = new Float64Array(3)
    expect(() => readIntRleV2(new ByteReader(bytes(0x0a, 0x27, 0x10), "col 1 DATA"), 3, false, out)).toThrow(
      /col 1 DATA: an RLEv2 run of 5 overruns/
    )
    expect(() =>
      readIntRleV2(new ByteReader(bytes(0x5e, 0x03, 0x5c), "col 1 DATA"), 4, false, new Float64Array(4))
    ).toThrow(/run past the end/)
  })
})
