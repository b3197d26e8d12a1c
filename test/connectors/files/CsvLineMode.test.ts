/**
 * The CSV reader's line-mode fast path (unquoted fields read in place, `FieldParsers.ts`)
 * against the tokenizer path that multiLine reads take: over random files of single-line
 * records — quoted and unquoted fields, null values, short and long records, numbers beyond
 * the int range, ISO and other timestamps, blank and comment lines, `\n`, `\r\n` and `\r` — both
 * must return the same rows in every mode (no value left open: a multiLine read would take the
 * next line into it).
 */
import { Effect } from "effect"
import * as fc from "fast-check"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CsvFormat } from "../../../connectors/files/CsvFormat.ts"
import * as T from "../../../core/DataType.ts"
import type { Options } from "../../../core/Formats.ts"
import { removeDir, tempDir, writeFiles } from "./helpers.ts"

let dir = ""
beforeAll(async () => {
  dir = await tempDir()
})
afterAll(() => removeDir(dir))

const schema = T.struct([
  T.field("user", T.StringType, true),
  T.field("amount", T.IntegerType, true),
  T.field("big", T.LongType, true),
  T.field("ts", T.TimestampType, true),
  T.field("_corrupt_record", T.StringType, true)
])

const field = fc.oneof(
  fc.constantFrom("", "NA", "u1", "u2", "x y", '"q,uo"', '"a""b"', '""', '"NA"', 'a"b', " 7", "7 "),
  fc.constantFrom("1", "-0", "+5", "2147483647", "2147483648", "12345678901234567", "99999999999999999999", "1.5"),
  fc.constantFrom(
    "2020-01-01T10:00:00.123Z",
    "2020-02-30T00:00:00Z",
    "2020-01-01 10:00:00",
    "2020-01-01T10:00:00+01:00",
    "2020-01-01",
    "2020-01-01T25:00:00Z"
  ),
  fc.stringMatching(/^[a-z0-9,;]{0,6}$/)
)
const line = fc.oneof(
  { weight: 8, arbitrary: fc.array(field, { minLength: 1, maxLength: 6 }).map((fs) => fs.join(",")) },
  { weight: 1, arbitrary: fc.constantFrom("", "   ", "#comment,1,2", " #not a comment") }
)
const file = fc.record({
  lines: fc.array(line, { minLength: 1, maxLength: 30 }),
  eol: fc.constantFrom("\n", "\r\n", "\r"),
  trailing: fc.boolean()
})

let n = 0
const read = (p: string, options: Options) => Effect.runPromise(CsvFormat.read([p], schema, options))

describe("csv line mode", () => {
  it("reads what the tokenizer path reads, in every mode", async () => {
    await fc.assert(
      fc.asyncProperty(
        file,
        fc.constantFrom("PERMISSIVE", "DROPMALFORMED"),
        fc.boolean(),
        async ({ lines, eol, trailing }, mode, nullNA) => {
          const name = `f${n++}.csv`
          await writeFiles(dir, { [name]: lines.join(eol) + (trailing ? eol : "") })
          const p = path.join(dir, name)
          const options: Options = { mode, comment: "#", ...(nullNA ? { nullValue: "NA" } : {}) }
          const fast = await read(p, options)
          const tokenized = await read(p, { ...options, multiLine: "true" })
          expect(fast).toEqual(tokenized)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("fails FAILFAST reads on the same record as the tokenizer path", async () => {
    await writeFiles(dir, { "ff.csv": "u1,1,2,2020-01-01T00:00:00Z\nu2,x,3,2020-01-01T00:00:00Z\n" })
    const p = path.join(dir, "ff.csv")
    const fast = await Effect.runPromise(Effect.flip(CsvFormat.read([p], schema, { mode: "FAILFAST" })))
    const tokenized = await Effect.runPromise(
      Effect.flip(CsvFormat.read([p], schema, { mode: "FAILFAST", multiLine: "true" }))
    )
    expect(fast.message).toContain("u2,x,3,2020-01-01T00:00:00Z")
    expect(fast.message).toBe(tokenized.message)
  })

  it("converts unquoted ints, longs, ISO timestamps and repeated strings in place", async () => {
    await writeFiles(dir, {
      "plain.csv":
        "u1,7,1234567890123456,2024-02-29T23:59:58.5Z\nu1,-3,,2024-03-01 00:00:00\nu2,2147483648,1,2024-01-01T00:00:00Z\n"
    })
    const rows = await read(path.join(dir, "plain.csv"), {})
    expect(rows).toEqual([
      ["u1", 7, 1234567890123456, Date.parse("2024-02-29T23:59:58.500Z"), null],
      ["u1", -3, null, Date.parse("2024-03-01T00:00:00Z"), null],
      ["u2", null, 1, Date.parse("2024-01-01T00:00:00Z"), "u2,2147483648,1,2024-01-01T00:00:00Z"]
    ])
  })
})
