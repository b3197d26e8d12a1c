/**
 * Malformed records, fuzzed, through the streaming file source (issue #20 item 3): the records
 * of MalformedCsv.test.ts and MalformedJson.test.ts (the same generators, the same statement of
 * Spark's rules per record), written as several files and read by `spark.readStream` with
 * `maxFilesPerTrigger` 1 and `Trigger.AvailableNow`, one file a batch. Spark's streaming source
 * reads each file with the batch reader's parser and `FailureSafeParser`, so:
 *
 * - PERMISSIVE: every batch holds its file's rows, `_corrupt_record` set on the malformed ones;
 * - DROPMALFORMED: every batch holds its file's well-formed rows (a batch can be empty);
 * - FAILFAST: the batches before the first file with a malformed record commit their rows; the
 *   query then fails with a `StreamingQueryError` whose cause is a user `ConnectorError` naming
 *   that file and `MALFORMED_RECORD_IN_PARSING`. Nothing is lost: the failed batch's offsets are
 *   logged and not committed, so the same query restarted on its checkpoint in PERMISSIVE mode
 *   re-runs that batch and delivers every remaining file's rows, each exactly once.
 *
 * Up to 3,600 records a format: 8 runs of 3 files of 150 generated records (a file is clean one
 * time in two: its malformed records left out), each run read in the three modes.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, type Scope } from "effect"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { Session, Trigger } from "../../mod.ts"
import type * as T from "../../core/DataType.ts"
import { ConnectorError, StreamingQueryError } from "../../core/Errors.ts"
import * as Csv from "./malformedCsvRecords.ts"
import * as Json from "./malformedJsonRecords.ts"
import { firstDifference, short, writeLines } from "./rowDiff.ts"

const FILES = 3
const PER_FILE = 150
const RUNS = 8

const root = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-malformed-stream-"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

const decoder = new TextDecoder("utf-8")
let runNo = 0

/** What a format's generator gives per record: its bytes, whether Spark drops it, its row. */
interface Generated {
  readonly bytes: Uint8Array
  readonly rowless: boolean
  readonly malformed: boolean
  readonly row: ReadonlyArray<unknown>
}

interface Format {
  readonly name: "csv" | "json"
  readonly schema: T.StructType
  readonly record: fc.Arbitrary<Generated>
}

const formats: ReadonlyArray<Format> = [
  {
    name: "csv",
    schema: Csv.schema,
    record: Csv.record.map((r) => ({ bytes: r.bytes, rowless: r.kind === "blank", malformed: r.kind === "bad", row: r.row }))
  },
  {
    name: "json",
    schema: Json.schema,
    record: Json.record.map((r) => ({ bytes: r.bytes, rowless: false, malformed: r.kind !== "ok", row: r.row }))
  }
]

type Batch = readonly [number, ReadonlyArray<ReadonlyArray<unknown>>]

/** Runs the stream over `src` in `mode` until it has read everything (or fails). */
const runStream = (
  format: Format,
  src: string,
  checkpoint: string,
  mode: string,
  batches: Array<Batch>
): Effect.Effect<StreamingQueryError | undefined, unknown, Session | Scope.Scope> =>
  Effect.gen(function* () {
    const spark = yield* Session
    const names = format.schema.fields.map((f) => f.name)
    const query = yield* spark.readStream
      .schema(format.schema)
      .option("mode", mode)
      .option("maxFilesPerTrigger", 1)
      .format(format.name)
      .load(src)
      .writeStream.option("checkpointLocation", checkpoint)
      .trigger(Trigger.AvailableNow())
      .foreachBatch((batch, id) =>
        Effect.map(batch.collect(), (rows) => {
          batches.push([id, (rows as ReadonlyArray<Record<string, unknown>>).map((r) => names.map((n) => r[n]))])
        })
      )
      .start()
    const ended = yield* Effect.result(query.awaitTermination())
    if (ended._tag === "Success") return undefined
    if (ended.failure instanceof StreamingQueryError) return ended.failure
    return yield* Effect.fail(ended.failure)
  })

const check = (format: Format, files: ReadonlyArray<ReadonlyArray<Generated>>) =>
  Effect.gen(function* () {
    const run = path.join(root, `${format.name}-${runNo++}`)
    const src = path.join(run, "in")
    fs.mkdirSync(src, { recursive: true })
    const written = files.map((recs, i) => {
      const file = writeLines(src, format.name, recs, i % 2 === 1)
      // the source orders files by modification time
      fs.utimesSync(file, 1_000 + i, 1_000 + i)
      return file
    })
    const rowsOf = (recs: ReadonlyArray<Generated>, keep: (r: Generated) => boolean) =>
      recs.filter((r) => !r.rowless && keep(r)).map((r) => r.row)

    const permissive: Array<Batch> = []
    expect(yield* runStream(format, src, path.join(run, "chk-p"), "PERMISSIVE", permissive)).toBeUndefined()
    expect(permissive.map(([id]) => id)).toEqual(files.map((_, i) => i))
    files.forEach((recs, i) => {
      expect(firstDifference(`PERMISSIVE batch ${i}`, permissive[i]?.[1] ?? [], rowsOf(recs, () => true))).toBeUndefined()
    })

    const dropped: Array<Batch> = []
    expect(yield* runStream(format, src, path.join(run, "chk-d"), "DROPMALFORMED", dropped)).toBeUndefined()
    expect(dropped.map(([id]) => id)).toEqual(files.map((_, i) => i))
    files.forEach((recs, i) => {
      const kept = rowsOf(recs, (r) => !r.malformed)
      expect(firstDifference(`DROPMALFORMED batch ${i}`, dropped[i]?.[1] ?? [], kept)).toBeUndefined()
    })

    const failfast: Array<Batch> = []
    const chk = path.join(run, "chk-f")
    const failure = yield* runStream(format, src, chk, "FAILFAST", failfast)
    const firstBadFile = files.findIndex((recs) => recs.some((r) => !r.rowless && r.malformed))
    if (firstBadFile < 0) {
      expect(failure).toBeUndefined()
      return
    }
    expect(failure).toBeInstanceOf(StreamingQueryError)
    expect(failure?.batchId).toBe(firstBadFile)
    const cause = failure?.cause
    expect(cause).toBeInstanceOf(ConnectorError)
    if (cause instanceof ConnectorError) {
      expect(cause.domain).toBe("user")
      expect(cause.message).toContain(written[firstBadFile])
      expect(cause.message).toContain("MALFORMED_RECORD_IN_PARSING")
      const firstBad = files[firstBadFile]?.find((r) => !r.rowless && r.malformed)
      expect(cause.message).toContain(decoder.decode(firstBad?.bytes).slice(0, 60))
    }
    // the batches before the failing file committed their rows, and nothing after it ran
    expect(failfast.map(([id]) => id)).toEqual(files.slice(0, firstBadFile).map((_, i) => i))
    files.slice(0, firstBadFile).forEach((recs, i) => {
      expect(firstDifference(`FAILFAST batch ${i}`, failfast[i]?.[1] ?? [], rowsOf(recs, () => true))).toBeUndefined()
    })
    // a restart in PERMISSIVE mode re-runs the failed batch and reads the rest, once each
    const resumed: Array<Batch> = []
    expect(yield* runStream(format, src, chk, "PERMISSIVE", resumed)).toBeUndefined()
    expect(resumed.map(([id]) => id)).toEqual(files.slice(firstBadFile).map((_, i) => firstBadFile + i))
    files.slice(firstBadFile).forEach((recs, i) => {
      const diff = firstDifference(`restarted batch ${firstBadFile + i}`, resumed[i]?.[1] ?? [], rowsOf(recs, () => true))
      expect(diff).toBeUndefined()
    })
    fs.rmSync(run, { recursive: true, force: true })
  })

describe("malformed records, fuzzed, through the streaming file source", () => {
  for (const format of formats) {
    it(`${format.name}: PERMISSIVE, DROPMALFORMED and FAILFAST per batch, and a restart after FAILFAST loses nothing`, {
      timeout: 300_000
    }, async () => {
      let records = 0
      await fc.assert(
        fc.asyncProperty(
          // a file is clean (its malformed records left out) one time in two, so that FAILFAST
          // fails at a random batch, after others have committed
          fc.array(
            fc
              .tuple(fc.array(format.record, { minLength: PER_FILE, maxLength: PER_FILE }), fc.boolean())
              .map(([recs, clean]) => (clean ? recs.filter((r) => !r.malformed) : recs)),
            { minLength: FILES, maxLength: FILES }
          ),
          async (files) => {
            records += files.reduce((n, recs) => n + recs.length, 0)
            const result = await Effect.runPromise(
              Effect.result(Effect.scoped(check(format, files)).pipe(Effect.provide(Session.layer())))
            )
            if (result._tag === "Failure") throw new Error(`the query failed: ${short(String(result.failure))}`)
          }
        ),
        { numRuns: RUNS, seed: 2020, endOnFailure: true }
      )
      expect(records).toBeGreaterThan(RUNS * PER_FILE)
    })
  }
})
