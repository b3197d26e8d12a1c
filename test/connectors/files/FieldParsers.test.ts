import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Cast from "../../../core/Cast.ts"
import * as T from "../../../core/DataType.ts"
import {
  Interner,
  parseIntRange,
  parseIsoTimestampRange,
  parseLongRange,
  SLOW
} from "../../../connectors/files/FieldParsers.ts"
import { javaParseInt, javaParseLong } from "../../../connectors/files/Inference.ts"

const toTimestamp = Cast.castFunction(T.StringType, T.TimestampType)

/** The fast parser over `s` placed inside other text, or the exact parser where it answers SLOW. */
const viaRange = <A>(
  fast: (t: string, s: number, e: number) => A | typeof SLOW,
  exact: (s: string) => A,
  s: string
) => {
  const text = `x,${s},y`
  const v = fast(text, 2, 2 + s.length)
  return v === SLOW ? exact(s) : v
}

const numberLike = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String),
  fc.stringMatching(/^[+-]?[0-9]{0,20}$/),
  fc.constantFrom(
    "",
    "+",
    "-",
    "-0",
    "+0",
    "2147483647",
    "2147483648",
    "-2147483648",
    "-2147483649",
    "1e3",
    "1.0",
    " 1",
    "1 ",
    "0x10",
    "١"
  )
)

describe("parseIntRange / parseLongRange", () => {
  it("agree with Integer.parseInt and Long.parseLong", () => {
    fc.assert(
      fc.property(numberLike, (s) => {
        expect(viaRange(parseIntRange, javaParseInt, s)).toBe(javaParseInt(s))
        expect(viaRange(parseLongRange, javaParseLong, s)).toBe(javaParseLong(s))
      }),
      { numRuns: 3000 }
    )
  })

  it("decide short numbers themselves", () => {
    expect(parseIntRange("a,-42,b", 2, 5)).toBe(-42)
    expect(parseIntRange("2147483648", 0, 10)).toBe(null)
    expect(parseLongRange("123456789012345", 0, 15)).toBe(123456789012345)
    expect(parseLongRange("1234567890123456", 0, 16)).toBe(SLOW)
    expect(Object.is(parseIntRange("-0", 0, 2), 0)).toBe(true)
  })
})

const pad = (n: number, w: number) => String(n).padStart(w, "0")

/** ISO-like timestamps, valid and not: out-of-range fields, other separators, zones, fractions. */
const timestampLike = fc.oneof(
  fc
    .date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true })
    .map((d) => d.toISOString()),
  fc
    .record({
      y: fc.integer({ min: 0, max: 9999 }),
      mo: fc.integer({ min: 0, max: 13 }),
      d: fc.integer({ min: 0, max: 32 }),
      h: fc.integer({ min: 0, max: 25 }),
      mi: fc.integer({ min: 0, max: 61 }),
      s: fc.integer({ min: 0, max: 61 }),
      sep: fc.constantFrom("T", " ", "t", "_"),
      frac: fc.stringMatching(/^(\.[0-9]{0,11})?$/),
      zone: fc.constantFrom("", "Z", "z", " Z", "+01:00", "UTC", "Zx", " ")
    })
    .map(
      ({ y, mo, d, h, mi, s, sep, frac, zone }) =>
        `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}${sep}${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${frac}${zone}`
    ),
  fc.string({ maxLength: 30 })
)

describe("parseIsoTimestampRange", () => {
  it("agrees with cast(string as timestamp)", () => {
    fc.assert(
      fc.property(timestampLike, (s) => {
        expect(viaRange(parseIsoTimestampRange, (x) => toTimestamp(x) as number | null, s)).toBe(toTimestamp(s))
      }),
      { numRuns: 5000 }
    )
  })

  it("decides the ISO-8601 spelling itself", () => {
    const iso = "2024-02-29T23:59:58.123Z"
    expect(parseIsoTimestampRange(iso, 0, iso.length)).toBe(Date.parse(iso))
    expect(parseIsoTimestampRange("2023-02-29T00:00:00Z", 0, 20)).toBe(null)
    expect(parseIsoTimestampRange("2023-01-01 10:00:00", 0, 19)).toBe(Date.parse("2023-01-01T10:00:00Z"))
    expect(parseIsoTimestampRange("2023-01-01T10:00:00+01:00", 0, 25)).toBe(SLOW)
  })
})

describe("Interner", () => {
  it("returns each range's text, one string per distinct value", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 40 }), { maxLength: 200 }), (values) => {
        const interner = new Interner(32, 50)
        const text = values.join("|")
        let at = 0
        for (const v of values) {
          expect(interner.slice(text, at, at + v.length)).toBe(v)
          at += v.length + 1
        }
      })
    )
  })

  it("finds values again after its table grows, in another text", () => {
    const interner = new Interner()
    const text = Array.from({ length: 5000 }, (_, i) => `user${i}`).join(",")
    let at = 0
    for (let i = 0; i < 5000; i++) {
      const len = `user${i}`.length
      expect(interner.slice(text, at, at + len)).toBe(`user${i}`)
      at += len + 1
    }
    // the same values at other offsets of another text, and prefixes of them
    const again = `xx${text}`
    at = 2
    for (let i = 0; i < 5000; i++) {
      const len = `user${i}`.length
      expect(interner.slice(again, at, at + len)).toBe(`user${i}`)
      expect(interner.slice(again, at, at + len - 1)).toBe(`user${i}`.slice(0, -1))
      at += len + 1
    }
    expect(interner.slice("a-very-long-value-that-is-not-interned-at-all", 0, 45)).toBe(
      "a-very-long-value-that-is-not-interned-at-all"
    )
  })
})
