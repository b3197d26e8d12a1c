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
import { ConnectorError } from "../../core/Errors.ts"
import { record, schema } from "./malformedCsvRecords.ts"
import { firstDifference, short, writeLines } from "./rowDiff.ts"

const decoder = new TextDecoder("utf-8")

const root = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-malformed-csv-"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

const read = (file: string, mode: string) =>
  Effect.runPromise(Effect.result(CsvFormat.read([file], schema, { mode })))

describe("malformed CSV records, fuzzed (10,000 records in three modes)", () => {
  it("PERMISSIVE, DROPMALFORMED and FAILFAST give Spark's rows and errors", { timeout: 300_000 }, async () => {
    let records = 0
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 500, maxLength: 500 }), fc.boolean(), async (recs, crlf) => {
        records += recs.length
        const file = writeLines(root, "csv", recs, crlf)
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
