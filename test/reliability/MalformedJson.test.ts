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
import { ConnectorError } from "../../core/Errors.ts"
import { record, schema } from "./malformedJsonRecords.ts"
import { firstDifference, short, writeLines } from "./rowDiff.ts"

const root = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-malformed-json-"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

const decoder = new TextDecoder("utf-8")

const read = (file: string, mode: string) =>
  Effect.runPromise(Effect.result(JsonFormat.read([file], schema, { mode })))

describe("malformed JSON records, fuzzed (10,000 records in three modes)", () => {
  it("PERMISSIVE, DROPMALFORMED and FAILFAST give Spark's rows and errors", { timeout: 300_000 }, async () => {
    let records = 0
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 500, maxLength: 500 }), async (recs) => {
        records += recs.length
        const file = writeLines(root, "json", recs)
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
