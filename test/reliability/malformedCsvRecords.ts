/**
 * Generated CSV records and what Spark makes of each (the oracle of the malformed-CSV fuzzers:
 * MalformedCsv.test.ts states the rules; MalformedStreaming.test.ts reads the same records through
 * a streaming query).
 */
import fc from "fast-check"
import * as T from "../../core/DataType.ts"

export const schema = T.struct([
  T.field("a", T.IntegerType, true),
  T.field("b", T.StringType, true),
  T.field("c", T.DoubleType, true),
  T.field("_corrupt_record", T.StringType, true)
])

/** One value: its CSV bytes, and what Spark makes of it. */
type Cell = { readonly bytes: Uint8Array; readonly value: unknown; readonly bad: boolean }

export interface Rec {
  readonly bytes: Uint8Array
  /** `bad`: a malformed record; `blank`: no row at all. */
  readonly kind: "ok" | "bad" | "blank"
  /** Spark's row in PERMISSIVE mode. */
  readonly row: ReadonlyArray<unknown>
}

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8")
const utf8 = (s: string): Uint8Array => encoder.encode(s)
const cell = (text: string, value: unknown, bad: boolean): Cell => ({ bytes: utf8(text), value, bad })

const INT_MIN = -2147483648
const INT_MAX = 2147483647

const aCell: fc.Arbitrary<Cell> = fc.oneof(
  fc.integer({ min: INT_MIN, max: INT_MAX }).map((n) => cell(String(n), n, false)),
  fc.integer({ min: 0, max: 1000 }).map((n) => cell(`+${n}`, n, false)),
  fc.constant(cell("", null, false)),
  fc.constant(cell('""', null, false)),
  fc.integer({ min: -1000, max: 1000 }).map((n) => cell(`"${n}"`, n, false)),
  // out of IntegerType's range
  fc
    .oneof(fc.bigInt({ min: 2147483648n, max: 10n ** 30n }), fc.bigInt({ min: -(10n ** 30n), max: -2147483649n }))
    .map((n) => cell(String(n), null, true)),
  // not an int: Integer.parseInt takes no spaces, no fraction, no words
  fc.constantFrom("1.5", " 7", "7 ", "abc", "0x10", "1e3", "--1", "+", "-", "true").map((s) => cell(s, null, true))
)

/** Text without `,`, quotes at its start, or line breaks: an unquoted value. */
const plainChar = fc.constantFrom("x", "y", "Z", "0", " ", ";", "'", "é", "€", "😀", "-", "\\", '"', "\t", "=")
const plainText = fc
  .string({ unit: plainChar, minLength: 1, maxLength: 30 })
  .filter((s) => !s.startsWith('"') && s.trim().length > 0)

/** Text inside quotes: delimiters, single quotes, SQL; `"` written `\"`. */
const quotedUnit = fc.constantFrom("x", ",", " ", "'", ";", "--", "DROP TABLE t", "é", '"', "\t")

const bCell: fc.Arbitrary<Cell> = fc.oneof(
  plainText.map((s) => cell(s, s, false)),
  fc.string({ unit: quotedUnit, maxLength: 12 }).map((s) => cell(`"${s.replaceAll('"', '\\"')}"`, s === "" ? null : s, false)),
  fc.constant(cell("'; DROP TABLE users; --", "'; DROP TABLE users; --", false)),
  // huge fields, quoted or not
  fc.integer({ min: 10_000, max: 100_000 }).map((n) => cell("y".repeat(n), "y".repeat(n), false)),
  fc.integer({ min: 10_000, max: 100_000 }).map((n) => cell(`"${"a,".repeat(n / 2)}"`, "a,".repeat(n / 2), false)),
  fc.constant(cell("", null, false)),
  // invalid UTF-8 inside an unquoted value: one U+FFFD per invalid sequence, not malformed
  fc
    .tuple(
      fc.constantFrom([0x80], [0xbf], [0xfe], [0xff], [0xc3, 0x78], [0xe2, 0x82], [0xed, 0xa0, 0x80]),
      fc.constantFrom("ab", "z")
    )
    .map(([bad, s]) => {
      const bytes = Buffer.concat([utf8(s), new Uint8Array(bad), utf8("q")])
      return { bytes, value: decoder.decode(bytes), bad: false }
    })
)

const cCell: fc.Arbitrary<Cell> = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => cell(Object.is(d, -0) ? "-0.0" : String(d), d, false)),
  fc.integer({ min: -1000, max: 1000 }).map((n) => cell(` ${n}.25 `, n + (n < 0 ? -0.25 : 0.25), false)),
  fc.constantFrom(["NaN", Number.NaN], ["Inf", Number.POSITIVE_INFINITY], ["-Inf", Number.NEGATIVE_INFINITY], ["1e400", Number.POSITIVE_INFINITY], ["Infinity", Number.POSITIVE_INFINITY]).map(([s, v]) => cell(s as string, v, false)),
  fc.constant(cell("", null, false)),
  fc.constantFrom("abc", "1.2.3", "--1", "1,5", "nan", "inf", "e5", ".").map((s) => cell(s === "1,5" ? '"1,5"' : s, null, true))
)

const comma = utf8(",")
const join = (cells: ReadonlyArray<Uint8Array>): Uint8Array =>
  Buffer.concat(cells.flatMap((c, i) => (i === 0 ? [c] : [comma, c])))

export const record: fc.Arbitrary<Rec> = fc
  .tuple(aCell, bCell, cCell, fc.integer({ min: 0, max: 11 }), plainText, fc.constantFrom("", " ", "  \t"))
  .map(([a, b, c, damage, extra, blank]): Rec => {
    const va = a.bad ? null : a.value
    const vc = c.bad ? null : c.value
    if (damage === 0) {
      // too few tokens: c is missing; what is there converts
      const bytes = join([a.bytes, b.bytes])
      return { bytes, kind: "bad", row: [va, b.value, null, decoder.decode(bytes)] }
    }
    if (damage === 1) {
      // too many tokens: the extra one is dropped
      const bytes = join([a.bytes, b.bytes, c.bytes, utf8(extra)])
      return { bytes, kind: "bad", row: [va, b.value, vc, decoder.decode(bytes)] }
    }
    if (damage === 2) {
      // an unbalanced quote: b's value runs to the end of the line, c is missing
      const cText = decoder.decode(c.bytes).replaceAll('"', "")
      const rest = utf8(`${extra.replaceAll('"', "").replaceAll("\\", "") || "q"},${cText}`)
      const bytes = join([a.bytes, Buffer.concat([utf8('"'), rest])])
      return { bytes, kind: "bad", row: [va, decoder.decode(rest), null, decoder.decode(bytes)] }
    }
    if (damage === 3) return { bytes: utf8(blank), kind: "blank", row: [] }
    const bytes = join([a.bytes, b.bytes, c.bytes])
    const bad = a.bad || c.bad
    return { bytes, kind: bad ? "bad" : "ok", row: [va, b.value, vc, bad ? decoder.decode(bytes) : null] }
  })
