/**
 * Malformed JSON records, fuzzed (issue #20 item 3): fast-check generates JSON lines — valid
 * ones with quotes, escapes, huge strings and deeply nested values, and broken ones (truncated,
 * an unbalanced quote, invalid UTF-8, numbers out of range, values of the wrong type) — and the
 * JSON reader must give Spark's answer in each mode, stated here as Spark's rules (Spark's
 * `JacksonParser` and `FailureSafeParser`), not taken from the implementation:
 *
 * - a line that does not parse (syntax, invalid UTF-8 before the end of its value): PERMISSIVE
 *   gives all fields null and `_corrupt_record` the line (invalid bytes decoded as U+FFFD, as
 *   `Text.toString`); invalid UTF-8 after the value is not read (Jackson stops there);
 * - a root field that does not convert (an int out of `IntegerType`'s range, a string, a
 *   float, a boolean or an object for an `INT`; an array element of the wrong type): the other
 *   fields are kept (partial results), the field is null, `_corrupt_record` is the line;
 * - a non-string value for a `STRING` field is its JSON text (`[[1]]`, `true`, `12`), not an error;
 * - DROPMALFORMED drops exactly the lines of the two first kinds; FAILFAST fails with a user
 *   `ConnectorError` naming the file and the first such line.
 *
 * 10,000 records: 20 runs of 500 lines, each read in the three modes.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { JsonFormat } from "../../connectors/files/JsonFormat.ts"
import * as T from "../../core/DataType.ts"
import { ConnectorError } from "../../core/Errors.ts"

const schema = T.struct([
  T.field("a", T.IntegerType, true),
  T.field("b", T.StringType, true),
  T.field("c", T.array(T.IntegerType), true),
  T.field("_corrupt_record", T.StringType, true)
])

type Cell = { readonly json: string | undefined; readonly value: unknown; readonly bad: boolean }

/** One generated record: its bytes, and what Spark makes of it. */
interface Rec {
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

const record: fc.Arbitrary<Rec> = fc
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

const root = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-malformed-json-"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

let fileNo = 0
const writeLines = (recs: ReadonlyArray<Rec>): string => {
  const file = path.join(root, `records-${fileNo++}.json`)
  const newline = new Uint8Array([0x0a])
  fs.writeFileSync(file, Buffer.concat(recs.flatMap((r) => [r.bytes, newline])))
  return file
}

const short = (v: unknown): string => {
  const t = JSON.stringify(v) ?? String(v)
  return t.length > 300 ? `${t.slice(0, 300)}…(${t.length} chars)` : t
}

/** The first row that differs from Spark's, described briefly (records can be 200 KB long). */
const firstDifference = (
  mode: string,
  actual: ReadonlyArray<unknown>,
  expected: ReadonlyArray<unknown>
): string | undefined => {
  for (let i = 0; i < Math.max(actual.length, expected.length); i++) {
    if (JSON.stringify(actual[i]) !== JSON.stringify(expected[i])) {
      return `${mode} row ${i} of ${expected.length} (got ${actual.length}): expected ${short(expected[i])}, got ${short(actual[i])}`
    }
  }
  return undefined
}

const read = (file: string, mode: string) =>
  Effect.runPromise(Effect.result(JsonFormat.read([file], schema, { mode })))

describe("malformed JSON records, fuzzed (10,000 records in three modes)", () => {
  it("PERMISSIVE, DROPMALFORMED and FAILFAST give Spark's rows and errors", { timeout: 300_000 }, async () => {
    let records = 0
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 500, maxLength: 500 }), async (recs) => {
        records += recs.length
        const file = writeLines(recs)
        const permissive = await read(file, "PERMISSIVE")
        if (permissive._tag === "Failure") throw new Error(`PERMISSIVE failed: ${short(String(permissive.failure))}`)
        if (permissive._tag === "Success") {
          expect(firstDifference("PERMISSIVE", permissive.success, recs.map((r) => r.row))).toBeUndefined()
        }
        const drop = await read(file, "DROPMALFORMED")
        expect(drop._tag).toBe("Success")
        if (drop._tag === "Success") {
          const kept = recs.filter((r) => r.kind === "ok").map((r) => r.row)
          expect(firstDifference("DROPMALFORMED", drop.success, kept)).toBeUndefined()
        }
        const failfast = await read(file, "FAILFAST")
        const firstBad = recs.find((r) => r.kind !== "ok")
        if (firstBad === undefined) expect(failfast._tag).toBe("Success")
        else {
          expect(failfast._tag).toBe("Failure")
          if (failfast._tag === "Failure") {
            const e = failfast.failure as ConnectorError
            expect(e).toBeInstanceOf(ConnectorError)
            expect(e.domain).toBe("user")
            expect(e.message).toContain(file)
            expect(e.message).toContain("MALFORMED_RECORD_IN_PARSING")
            expect(e.message).toContain(decoder.decode(firstBad.bytes).slice(0, 60))
          }
        }
        fs.rmSync(file)
      }),
      { numRuns: 20, seed: 20, endOnFailure: true }
    )
    expect(records).toBe(10_000)
  })
})
