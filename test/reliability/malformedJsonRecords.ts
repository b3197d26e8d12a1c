/**
 * Generated JSON records and what Spark makes of each (the oracle of the malformed-JSON fuzzers:
 * MalformedJson.test.ts states the rules; MalformedStreaming.test.ts reads the same records through
 * a streaming query).
 */
import fc from "fast-check"
import * as T from "../../core/DataType.ts"

export const schema = T.struct([
  T.field("a", T.IntegerType, true),
  T.field("b", T.StringType, true),
  T.field("c", T.array(T.IntegerType), true),
  T.field("_corrupt_record", T.StringType, true)
])

type Cell = { readonly json: string | undefined; readonly value: unknown; readonly bad: boolean }

/** One generated record: its bytes, and what Spark makes of it. */
export interface Rec {
  readonly bytes: Uint8Array
  /** `parse`: the line does not parse; `convert`: a field does not convert; `ok`: neither. */
  readonly kind: "ok" | "convert" | "parse"
  /** Spark's row in PERMISSIVE mode. */
  readonly row: ReadonlyArray<unknown>
}

/**
 * Byte sequences that are invalid UTF-8 for Jackson's `UTF8StreamJsonParser` (Spark's JSON
 * parser without an `encoding` option) and for a strict decoder alike: a lone continuation byte,
 * a byte that starts no sequence (F8–FF), a lead byte followed by a byte that does not continue
 * it, and a sequence cut short before the closing quote. (Overlong forms, encoded surrogates and
 * F5–F7 leads are left out: Jackson does not check them, a strict decoder rejects them.)
 */
const invalidUtf8: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.integer({ min: 0x80, max: 0xbf }).map((b) => new Uint8Array([b])),
  fc.integer({ min: 0xf8, max: 0xff }).map((b) => new Uint8Array([b])),
  fc.integer({ min: 0xc2, max: 0xdf }).map((b) => new Uint8Array([b, 0x78])),
  fc.constantFrom(new Uint8Array([0xe2, 0x82]), new Uint8Array([0xf0, 0x9f, 0x98]), new Uint8Array([0xe2]))
)

const INT_MIN = -2147483648
const INT_MAX = 2147483647

const aCell: fc.Arbitrary<Cell> = fc.oneof(
  fc.integer({ min: INT_MIN, max: INT_MAX }).map((n) => ({ json: String(n), value: n, bad: false })),
  fc.constant({ json: "null", value: null, bad: false }),
  fc.constant({ json: undefined, value: null, bad: false }),
  // out of IntegerType's range (Jackson's getIntValue fails)
  fc
    .oneof(fc.bigInt({ min: 2147483648n, max: 10n ** 30n }), fc.bigInt({ min: -(10n ** 30n), max: -2147483649n }))
    .map((n) => ({ json: String(n), value: null, bad: true })),
  // wrong types for an INT
  fc.oneof(
    fc.integer().map((n) => JSON.stringify(String(n))),
    fc.constantFrom("true", "false", "1.5", "-0.25", "{}", '{"x":1}', "[1]")
  ).map((json) => ({ json, value: null, bad: true }))
)

/** Nested arrays `depth` deep around an int: Spark gives a STRING field their compact JSON text. */
const nested = (depth: number, n: number): string => `${"[".repeat(depth)}${n}${"]".repeat(depth)}`

const bCell: fc.Arbitrary<Cell> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }).map((s) => ({ json: JSON.stringify(s), value: s, bad: false })),
  fc.string({ unit: fc.constantFrom('"', "\\", "'", ";", " ", "x", "é", "\u0000", "\t"), maxLength: 30 }).map((s) => ({
    json: JSON.stringify(s),
    value: s,
    bad: false
  })),
  // huge fields
  fc.integer({ min: 10_000, max: 200_000 }).map((n) => ({ json: JSON.stringify("x".repeat(n)), value: "x".repeat(n), bad: false })),
  // deep nesting, under Jackson's depth limit (1000)
  fc.tuple(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 0, max: 99 })).map(([d, n]) => ({ json: nested(d, n), value: nested(d, n), bad: false })),
  fc.integer({ min: -1000, max: 1000 }).map((n) => ({ json: String(n), value: String(n), bad: false })),
  fc.constantFrom("true", "false").map((s) => ({ json: s, value: s, bad: false })),
  fc.constant({ json: "null", value: null, bad: false }),
  fc.constant({ json: undefined, value: null, bad: false })
)

const cCell: fc.Arbitrary<Cell> = fc.oneof(
  fc.array(fc.integer({ min: INT_MIN, max: INT_MAX }), { maxLength: 5 }).map((xs) => ({ json: JSON.stringify(xs), value: xs, bad: false })),
  fc.constant({ json: undefined, value: null, bad: false }),
  // an element of the wrong type nulls the whole array and marks the record
  fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 3 }).map((xs) => ({ json: JSON.stringify([...xs, "x"]), value: null, bad: true })),
  fc.constantFrom("5", '"x"', "{}").map((json) => ({ json, value: null, bad: true }))
)

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8")

const objectText = (cells: ReadonlyArray<readonly [string, Cell]>): string =>
  `{${cells
    .filter(([, c]) => c.json !== undefined)
    .map(([k, c]) => `"${k}": ${c.json}`)
    .join(", ")}}`

export const record: fc.Arbitrary<Rec> = fc
  .tuple(aCell, bCell, cCell, fc.integer({ min: 0, max: 11 }), fc.nat(), invalidUtf8)
  .map(([a, b, c, damage, at, badBytes]): Rec => {
    const text = objectText([
      ["a", a],
      ["b", b],
      ["c", c]
    ])
    if (damage === 0 && text.length > 2) {
      // truncated: the closing brace is gone, so the object never ends
      const cut = text.slice(0, 1 + (at % (text.length - 1)))
      // (a cut inside a surrogate pair leaves a lone surrogate, which UTF-8 writes as U+FFFD)
      const bytes = encoder.encode(cut)
      return { bytes, kind: "parse", row: [null, null, null, decoder.decode(bytes)] }
    }
    if (damage === 1) {
      // an unbalanced quote: a string that never ends
      const line = `{"b": "unterminated${at % 100}}`
      return { bytes: encoder.encode(line), kind: "parse", row: [null, null, null, line] }
    }
    if (damage === 2 || damage === 3) {
      // invalid UTF-8 inside a string Jackson reads: a field of the schema (`b`) or one it skips
      // (`z`); either way the whole record is malformed, no partial results
      const head = encoder.encode(damage === 2 ? `{"a": 1, "b": "ab` : `{"a": 1, "z": "ab`)
      const tail = encoder.encode(`cd", "c": [1]}`)
      const bytes = Buffer.concat([head, badBytes, tail])
      return { bytes, kind: "parse", row: [null, null, null, decoder.decode(bytes)] }
    }
    const bad = a.bad || b.bad || c.bad
    if (damage === 4) {
      // invalid UTF-8 after the record's value: Jackson stops at the end of the value, so the
      // record is what it would be without it
      const bytes = Buffer.concat([encoder.encode(text), encoder.encode(" "), badBytes])
      return { bytes, kind: bad ? "convert" : "ok", row: [a.value, b.value, c.value, bad ? decoder.decode(bytes) : null] }
    }
    return {
      bytes: encoder.encode(text),
      kind: bad ? "convert" : "ok",
      row: [a.value, b.value, c.value, bad ? text : null]
    }
  })
