/**
 * No user data is spliced into SQL text (issue #20 item 6): keys, values, column names, view,
 * store and file names full of quotes, semicolons, comments, `DROP TABLE`, backslashes, glob
 * characters, newlines, NUL and non-ASCII characters go through every path that reaches DuckDB —
 * the DuckDB state store (and the file one, for comparison), the state reader over both,
 * `spark.sql` over temporary views with parameters, and Parquet writes and reads — and come back
 * byte-exact, with nothing else happening (the views, tables and files around them untouched).
 *
 * Where DuckDB sees user text (tributary's code, checked here): state keys, values and store
 * names are parameters (`$1`, `unnest($1)`); the state tables are named by numeric ids; the
 * DuckDB database path is the `DuckDBInstance.create` argument, not SQL; `spark.sql` puts views
 * in DuckDB with identifiers quoted (`"` doubled) and their rows through the appender; Parquet
 * paths are the `read_parquet(?)` and `COPY … TO ?` parameters, with DuckDB's glob characters
 * bracketed; column names are quoted identifiers.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../mod.ts"

/** Text built to break SQL that splices it. */
const NASTY = [
  "'",
  "''",
  '"',
  "'; DROP TABLE t; --",
  '"; DROP TABLE "__tributary_stores"; --',
  "a;b",
  "-- comment",
  "/* open",
  "\\",
  "\\'",
  "line\nbreak",
  "tab\there",
  "nul\u0000byte",
  "é ü 中文 😀",
  "$1",
  "?",
  "*[x]?",
  "%_",
  ")); SELECT 1; --",
  ""
]

const root = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-no-splice-"))
/**
 * A folder with quotes, a semicolon, a comment, a newline and non-ASCII in its name — and a
 * backslash unless `glob`: a path a read takes is a Hadoop glob pattern (as in Spark), where
 * `\`, `*`, `?`, `[` and `{` are pattern characters, so those stay out of read paths.
 */
const nastyDir = (tag: string, glob = false): string => {
  const d = path.join(root, `${tag} it's "q"; DROP TABLE t; --${glob ? "" : " \\"} é\nnl`)
  fs.mkdirSync(d, { recursive: true })
  return d
}

const Event = Schema.Struct({ key: Schema.String })

for (const provider of ["duckdb", "memory"] as const) {
  describe(`state keys and paths are never SQL text (${provider} provider)`, () => {
    it.effect("a word count over nasty keys in a nasty checkpoint path: restarts and the state reader give them back byte-exact", () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const checkpoint = path.join(nastyDir(`state-${provider}`), "checkpoint")
        const run = (batches: ReadonlyArray<ReadonlyArray<string>>) =>
          Effect.gen(function* () {
            const input = yield* MemoryStream.make(Event)
            const q = yield* input
              .toDF()
              .groupBy("key")
              .count()
              .writeStream.format("memory")
              .queryName(`counts_${provider}`)
              .outputMode("complete")
              .option("checkpointLocation", checkpoint)
              .start()
            for (const keys of batches) yield* input.addData(keys.map((key) => ({ key })))
            yield* q.processAllAvailable()
            yield* q.stop()
            return (yield* spark.table(`counts_${provider}`).collect()) as ReadonlyArray<{ key: string; count: number }>
          })
        yield* run([NASTY])
        // the restart reads every key back from the state store: each count goes to 2 (a new
        // MemoryStream starts at offset 0, so the keys are added twice; the checkpoint skips the first)
        const second = yield* run([NASTY, NASTY])
        const counts = new Map(second.map((r) => [r.key, Number(r.count)]))
        assert.strictEqual(counts.size, NASTY.length)
        for (const k of NASTY) assert.strictEqual(counts.get(k), 2, `count of ${JSON.stringify(k)}`)
        const state = (yield* (yield* spark.read.format("statestore").load(checkpoint)).collect()) as ReadonlyArray<{
          key: { key: string }
          value: { count: number }
        }>
        assert.deepStrictEqual(state.map((r) => r.key.key).sort(), [...NASTY].sort())
        for (const r of state) assert.strictEqual(Number(r.value.count), 2)
      }).pipe(Effect.provide(Session.layer({ stateStore: provider })))
    )
  })
}

describe("a '?' in the checkpoint path (DuckDB provider)", () => {
  it.effect("fails the query with a StateStoreError naming the path before a database is written", () =>
    Effect.gen(function* () {
      const checkpoint = path.join(root, "what?now", "checkpoint")
      const input = yield* MemoryStream.make(Event)
      const q = yield* input
        .toDF()
        .groupBy("key")
        .count()
        .writeStream.format("noop")
        .outputMode("complete")
        .option("checkpointLocation", checkpoint)
        .start()
      yield* input.addData([{ key: "a" }])
      const e = yield* Effect.flip(q.processAllAvailable())
      const cause = (e as { cause?: unknown }).cause as { _tag?: string; message?: string; reason?: string }
      assert.strictEqual(cause._tag, "StateStoreError")
      assert.strictEqual(cause.reason, "InvalidUsage")
      assert.include(cause.message, path.join(checkpoint, "state", "state.duckdb"))
      assert.include(cause.message, "does not accept a '?'")
      assert.isFalse(fs.existsSync(path.join(checkpoint, "state", "state.duckdb")))
    }).pipe(Effect.provide(Session.layer({ stateStore: "duckdb" })))
  )
})

describe("spark.sql and Parquet never splice user data", () => {
  it.effect("spark.sql over a nasty view with nasty columns and parameters returns the data exactly", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const col = 'c"ol; DROP TABLE t; --'
      const rows = NASTY.map((s, i) => ({ id: i, [col]: s }))
      const df = spark.createDataFrame(rows, Schema.Struct({ id: Schema.Int, [col]: Schema.String }))
      const view = "v'iew\"; DROP TABLE keep; --"
      yield* df.createOrReplaceTempView(view)
      yield* spark.createDataFrame([{ x: 1 }], Schema.Struct({ x: Schema.Int })).createOrReplaceTempView("keep")
      const quotedView = `"${view.replaceAll('"', '""')}"`
      const quotedCol = `"${col.replaceAll('"', '""')}"`
      const all = yield* (yield* spark.sql(`SELECT id, ${quotedCol} AS s FROM ${quotedView} ORDER BY id`)).collect()
      assert.deepStrictEqual(
        all,
        NASTY.map((s, i) => ({ id: i, s }))
      )
      // every nasty value as a parameter finds exactly its row
      for (const [i, s] of NASTY.entries()) {
        const hit = yield* (yield* spark.sql(`SELECT id FROM ${quotedView} WHERE ${quotedCol} = ?`, [s])).collect()
        assert.deepStrictEqual(hit, [{ id: i }], `parameter ${JSON.stringify(s)}`)
      }
      // nothing else happened: the other view is still there
      assert.deepStrictEqual(yield* (yield* spark.sql("SELECT x FROM keep")).collect(), [{ x: 1 }])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("Parquet: nasty column names and values under a nasty path write and read back exactly", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = nastyDir("parquet", true)
      const neighbour = path.join(dir, "..", "neighbour.txt")
      fs.writeFileSync(neighbour, "untouched")
      const col = "v'al\"; DROP TABLE batch; --"
      const rows = NASTY.map((s, i) => ({ id: i, [col]: s }))
      const df = spark.createDataFrame(rows, Schema.Struct({ id: Schema.Int, [col]: Schema.String }))
      const out = path.join(dir, "out")
      yield* df.write.mode("overwrite").parquet(out)
      const back = yield* spark.read.parquet(out)
      assert.deepStrictEqual(back.columns, ["id", col])
      const got = (yield* back.orderBy("id").collect()) as ReadonlyArray<Record<string, unknown>>
      assert.deepStrictEqual(
        got.map((r) => [r.id, r[col]]),
        NASTY.map((s, i) => [i, s])
      )
      // a filter on the nasty column goes through the same path
      const one = yield* back.filter(F.col(col).eq(NASTY[3])).select("id").collect()
      assert.deepStrictEqual(one, [{ id: 3 }])
      assert.strictEqual(fs.readFileSync(neighbour, "utf8"), "untouched")
    }).pipe(Effect.provide(Session.layer()))
  )
})
