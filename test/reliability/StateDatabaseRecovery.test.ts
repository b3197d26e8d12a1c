/**
 * Issue #20, bugs 1 and 5: state the commit log does not refer to is disposable, state it does
 * refer to is never discarded, and every state error names the file and what to do. Each run
 * of a query has its own session (a fresh state store provider), as a restarted process has;
 * the input is a folder of JSON files.
 *
 * A run killed while DuckDB was creating `state/state.duckdb` leaves a file of 0 or 4096 bytes
 * (or a write-ahead log) before any batch is logged; every restart used to fail. A restart now
 * deletes state that no committed batch refers to and runs from nothing. A damaged database that
 * a committed batch refers to fails before the first batch, naming the file, and stays on disk.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { F, Session, StreamingQueryError } from "../../mod.ts"

const tempDir = () =>
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "tributary-staterec-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

type Counts = Map<string, number>

/** The checkpoint and the input folder (one JSON file of words per batch) of a test. */
interface Work {
  readonly checkpoint: string
  readonly input: string
}

const work = () =>
  Effect.map(tempDir(), (dir): Work => {
    const w = { checkpoint: path.join(dir, "chk"), input: path.join(dir, "in") }
    fs.mkdirSync(w.input)
    return w
  })

let fileNo = 0
/** Adds one input file (the next batch's words). */
const addWords = (w: Work, words: ReadonlyArray<string>): void => {
  const p = path.join(w.input, `${String(fileNo++).padStart(6, "0")}.json`)
  fs.writeFileSync(p, words.map((word) => JSON.stringify({ word })).join("\n"))
}

/** A word count over the input folder, in a session of its own (a restarted process). */
const countQuery = <A, E>(
  w: Work,
  stateStore: "duckdb" | "memory",
  sink: (df: ReturnType<typeof counted>) => Effect.Effect<A, E, Session>
) =>
  Effect.gen(function* () {
    const spark = yield* Session
    return yield* sink(counted(spark, w))
  }).pipe(Effect.provide(Session.layer({ stateStore })))

const counted = (spark: Session["Service"], w: Work) =>
  spark.readStream.schema("word STRING").option("maxFilesPerTrigger", "1").json(w.input).groupBy("word").agg(F.count("*").as("n"))

/** Runs the word count into `counts` (update mode, idempotent per key) until the input is processed. */
const runCount = (w: Work, counts: Counts, stateStore: "duckdb" | "memory" = "duckdb") =>
  countQuery(w, stateStore, (df) =>
    Effect.gen(function* () {
      const q = yield* df.writeStream
        .outputMode("update")
        .option("checkpointLocation", w.checkpoint)
        .foreachBatch((batch) =>
          Effect.map(batch.collect(), (rows) => {
            for (const r of rows) counts.set(r.word as string, r.n as number)
          })
        )
        .start()
      yield* q.processAllAvailable()
      yield* q.stop()
    })
  )

/** Restarts the word count and returns the error it fails with. */
const failureOf = (w: Work, stateStore: "duckdb" | "memory" = "duckdb") =>
  countQuery(w, stateStore, (df) =>
    Effect.gen(function* () {
      const q = yield* df.writeStream.outputMode("update").option("checkpointLocation", w.checkpoint).format("noop").start()
      const exit = yield* Effect.exit(q.awaitTermination())
      assert.strictEqual(exit._tag, "Failure")
      const e = yield* q.exception()
      assert.instanceOf(e, StreamingQueryError)
      return e!
    })
  )

const damaged: ReadonlyArray<readonly [string, (dir: string) => void]> = [
  ["an empty state.duckdb", (d) => fs.writeFileSync(path.join(d, "state.duckdb"), "")],
  ["a 4096-byte state.duckdb of zeros", (d) => fs.writeFileSync(path.join(d, "state.duckdb"), Buffer.alloc(4096))],
  [
    "a 4096-byte state.duckdb of noise and a write-ahead log",
    (d) => {
      fs.writeFileSync(path.join(d, "state.duckdb"), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 37) % 256)))
      fs.writeFileSync(path.join(d, "state.duckdb.wal"), Buffer.alloc(100, 7))
    }
  ],
  ["a stray write-ahead log", (d) => fs.writeFileSync(path.join(d, "state.duckdb.wal"), Buffer.alloc(512, 1))]
]

describe("state no committed batch refers to (issue #20, bug 1)", () => {
  for (const [name, damage] of damaged) {
    it.effect(`a restart over ${name} left before any batch was logged runs from nothing`, () =>
      Effect.gen(function* () {
        const w = yield* work()
        fs.mkdirSync(path.join(w.checkpoint, "state"), { recursive: true })
        damage(path.join(w.checkpoint, "state"))
        addWords(w, ["a", "b", "a"])
        const counts: Counts = new Map()
        yield* runCount(w, counts)
        assert.deepStrictEqual(Object.fromEntries(counts), { a: 2, b: 1 })
        // and the recreated database carries on across a normal restart
        addWords(w, ["a"])
        yield* runCount(w, counts)
        assert.deepStrictEqual(Object.fromEntries(counts), { a: 3, b: 1 })
      })
    )
  }

  it.effect("a batch logged but never committed: its half-written state is discarded too", () =>
    Effect.gen(function* () {
      const w = yield* work()
      addWords(w, ["a"])
      const counts: Counts = new Map()
      yield* runCount(w, counts)
      // as if killed after the state commit of batch 0, before its commit log entry
      fs.rmSync(path.join(w.checkpoint, "commits"), { recursive: true, force: true })
      fs.writeFileSync(path.join(w.checkpoint, "state", "state.duckdb"), Buffer.alloc(4096))
      fs.rmSync(path.join(w.checkpoint, "state", "state.duckdb.wal"), { force: true })
      counts.clear()
      yield* runCount(w, counts)
      assert.deepStrictEqual(Object.fromEntries(counts), { a: 1 })
    })
  )

  for (const provider of ["duckdb", "memory"] as const) {
    it.effect(`${provider}: state a committed batch refers to is never discarded; the error names the file`, () =>
      Effect.gen(function* () {
        const w = yield* work()
        const counts: Counts = new Map()
        addWords(w, ["a"])
        yield* runCount(w, counts, provider)
        addWords(w, ["b"])
        yield* runCount(w, counts, provider)
        let damagedFile: string
        if (provider === "duckdb") {
          damagedFile = path.join(w.checkpoint, "state", "state.duckdb")
          fs.writeFileSync(damagedFile, Buffer.alloc(4096))
          fs.rmSync(`${damagedFile}.wal`, { force: true })
        } else {
          damagedFile = path.join(w.checkpoint, "state", "0", "0", "1.delta")
          fs.rmSync(damagedFile)
        }
        const e = yield* failureOf(w, provider)
        assert.include(e.message, damagedFile)
        assert.match(e.message, /restore|backup|new checkpoint/i)
        if (provider === "duckdb") assert.strictEqual(fs.statSync(damagedFile).size, 4096)
        // before the first batch of the restart
        assert.strictEqual(e.batchId, 2)
      })
    )
  }
})

describe("state errors name the file (issue #20, bug 5)", () => {
  it.effect("duckdb: a lost write-ahead log (versions missing) names the database and its log", () =>
    Effect.gen(function* () {
      const w = yield* work()
      const counts: Counts = new Map()
      for (const word of ["a", "b", "c"]) {
        addWords(w, [word])
        yield* runCount(w, counts)
      }
      // the database is gone, as if it (and its write-ahead log) were lost
      const db = path.join(w.checkpoint, "state", "state.duckdb")
      fs.rmSync(db)
      fs.rmSync(`${db}.wal`, { force: true })
      const e = yield* failureOf(w)
      assert.include(e.message, db)
      assert.include(e.message, "state.duckdb.wal")
      assert.match(e.message, /restore|backup|new checkpoint/i)
    })
  )

  it.effect("memory provider: a missing latest delta names the file", () =>
    Effect.gen(function* () {
      const w = yield* work()
      const counts: Counts = new Map()
      for (const word of ["a", "b", "c"]) {
        addWords(w, [word])
        yield* runCount(w, counts, "memory")
      }
      const delta = path.join(w.checkpoint, "state", "0", "0", "2.delta")
      fs.rmSync(delta)
      const e = yield* failureOf(w, "memory")
      assert.include(e.message, delta)
      assert.match(e.message, /restore|backup|new checkpoint/i)
    })
  )
})
