/**
 * Malformed CSV records, fuzzed (issue #20 item 3): fast-check generates CSV lines — valid ones
 * with quoted values holding delimiters and escaped quotes, quotes and backslashes inside
 * unquoted values, SQL-looking text, huge fields and invalid UTF-8, and broken ones (too few
 * tokens, too many, an unbalanced quote, ints out of range, values that are not numbers) — and
 * the CSV reader (`multiLine` off, a user schema `a INT, b STRING, c DOUBLE, _corrupt_record
 * STRING`) must give Spark's answer in each mode. The oracle is Spark's rules
 * (`UnivocityParser`, `FailureSafeParser`, univocity's parser with Spark's read settings), stated
 * here per generated value, not taken from the implementation:
 *
 * - tokens: `,` separates values; a value that starts with `"` is quoted, `\"` in it is a `"`, and
 *   a quote left open reads to the end of the line (the delimiters after it are data); a `"` or
 *   `\` inside an unquoted value is data; an empty value (quoted or not) is null;
 * - a line whose token count is not the schema's is malformed but keeps what converts (missing
 *   values null, extra ones dropped) — partial results, as a value that does not convert (null);
 * - `INT` is `Integer.parseInt` (a sign allowed, no spaces, in range); `DOUBLE` is `NaN`,
 *   `Inf`, `-Inf` or `Double.parseDouble` (which trims spaces);
 * - invalid UTF-8 is decoded as U+FFFD and is not malformed (Spark builds each line's `String`
 *   with the charset's replacing decoder); a blank line gives no row;
 * - PERMISSIVE puts the line in `_corrupt_record`; DROPMALFORMED drops exactly the malformed
 *   lines; FAILFAST fails with a user `ConnectorError` naming the file and the first such line.
 *
 * 10,000 records: 20 runs of 500 lines, each read in the three modes.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { CsvFormat } from "../../connectors/files/CsvFormat.ts"
import * as T from "../../core/DataType.ts"
import { ConnectorError } from "../../core/Errors.ts"

const schema = T.struct([
  T.field("a", T.IntegerType, true),
  T.field("b", T.StringType, true),
  T.field("c", T.DoubleType, true),
  T.field("_corrupt_record", T.StringType, true)
])

/** One value: its CSV bytes, and what Spark makes of it. */
type Cell = { readonly bytes: Uint8Array; readonly value: unknown; readonly bad: boolean }

interface Rec {
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

const record: fc.Arbitrary<Rec> = fc
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

const root = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-malformed-csv-"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

let fileNo = 0
const writeLines = (recs: ReadonlyArray<Rec>, crlf: boolean): string => {
  const file = path.join(root, `records-${fileNo++}.csv`)
  const newline = utf8(crlf ? "\r\n" : "\n")
  fs.writeFileSync(file, Buffer.concat(recs.flatMap((r) => [r.bytes, newline])))
  return file
}

/** JSON text that tells NaN, the infinities and -0 apart. */
const show = (v: unknown): string =>
  JSON.stringify(v, (_, x) => (typeof x === "number" && (!Number.isFinite(x) || Object.is(x, -0)) ? `num:${x}` : x)) ??
  String(v)

const short = (v: unknown): string => {
  const t = show(v)
  return t.length > 300 ? `${t.slice(0, 300)}…(${t.length} chars)` : t
}

const firstDifference = (
  mode: string,
  actual: ReadonlyArray<unknown>,
  expected: ReadonlyArray<unknown>
): string | undefined => {
  for (let i = 0; i < Math.max(actual.length, expected.length); i++) {
    if (show(actual[i]) !== show(expected[i])) {
      return `${mode} row ${i} of ${expected.length} (got ${actual.length}): expected ${short(expected[i])}, got ${short(actual[i])}`
    }
  }
  return undefined
}

const read = (file: string, mode: string) =>
  Effect.runPromise(Effect.result(CsvFormat.read([file], schema, { mode })))

describe("malformed CSV records, fuzzed (10,000 records in three modes)", () => {
  it("PERMISSIVE, DROPMALFORMED and FAILFAST give Spark's rows and errors", { timeout: 300_000 }, async () => {
    let records = 0
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 500, maxLength: 500 }), fc.boolean(), async (recs, crlf) => {
        records += recs.length
        const file = writeLines(recs, crlf)
        const rows = recs.filter((r) => r.kind !== "blank")
        const permissive = await read(file, "PERMISSIVE")
        if (permissive._tag === "Failure") throw new Error(`PERMISSIVE failed: ${short(String(permissive.failure))}`)
        expect(firstDifference("PERMISSIVE", permissive.success, rows.map((r) => r.row))).toBeUndefined()
        const drop = await read(file, "DROPMALFORMED")
        expect(drop._tag).toBe("Success")
        if (drop._tag === "Success") {
          const kept = rows.filter((r) => r.kind === "ok").map((r) => r.row)
          expect(firstDifference("DROPMALFORMED", drop.success, kept)).toBeUndefined()
        }
        const failfast = await read(file, "FAILFAST")
        const firstBad = rows.find((r) => r.kind === "bad")
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
