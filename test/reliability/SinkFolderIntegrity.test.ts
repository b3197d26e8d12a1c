/**
 * Issue #20, bugs 3 and 6: reading a file sink's folder through its `_spark_metadata` log.
 *
 * - A copied or moved folder: the log keeps the absolute paths the sink wrote (Spark's
 *   `MetadataLogFileIndex` reads those). A copy reads them; a moved folder, whose logged files
 *   are gone, fails naming the missing file — never 0 rows.
 * - A damaged part file (another size than the log recorded) fails naming the file, on a read
 *   of the folder and when the query that writes it restarts (before its first batch).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { ConnectorError, Session } from "../../mod.ts"

const tempDir = () =>
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "tributary-sinkfolder-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

interface Folders {
  readonly input: string
  readonly out: string
  readonly checkpoint: string
}

const folders = () =>
  Effect.map(tempDir(), (root): Folders => {
    const f = { input: path.join(root, "in"), out: path.join(root, "out"), checkpoint: path.join(root, "chk") }
    fs.mkdirSync(f.input)
    return f
  })

let fileNo = 0
const addInput = (f: Folders, rows: ReadonlyArray<{ id: number; part: string }>) =>
  fs.writeFileSync(
    path.join(f.input, `${String(fileNo++).padStart(5, "0")}.json`),
    rows.map((r) => JSON.stringify(r)).join("\n")
  )

/** Streams the input folder into the JSON sink at `f.out` (optionally partitioned) until done. */
const runSink = (f: Folders, partitioned: boolean) =>
  Effect.gen(function* () {
    const spark = yield* Session
    const w = spark.readStream.schema("id INT, part STRING").json(f.input).writeStream.format("json")
    const q = yield* (partitioned ? w.partitionBy("part") : w).option("checkpointLocation", f.checkpoint).start(f.out)
    yield* q.processAllAvailable()
    yield* q.stop()
  })

const readFolder = (dir: string) =>
  Effect.gen(function* () {
    const spark = yield* Session
    const df = yield* spark.read.schema("id INT, part STRING").json(dir)
    const rows = (yield* df.collect()) as ReadonlyArray<{ id: number; part: string }>
    return [...rows].sort((a, b) => a.id - b.id)
  })

const rows = [
  { id: 1, part: "x" },
  { id: 2, part: "y" },
  { id: 3, part: "x" }
]

const partFiles = (dir: string): Array<string> =>
  (fs.readdirSync(dir, { recursive: true }) as Array<string>)
    .filter((p) => path.basename(p).startsWith("part-"))
    .map((p) => path.join(dir, p))

describe("a sink folder read through its log (issue #20, bugs 3 and 6)", () => {
  for (const partitioned of [false, true]) {
    const kind = partitioned ? "partitioned" : "unpartitioned"
    it.effect(`${kind}: a copied folder reads the logged files, the same rows`, () =>
      Effect.gen(function* () {
        const f = yield* folders()
        addInput(f, rows.slice(0, 2))
        yield* runSink(f, partitioned)
        addInput(f, rows.slice(2))
        yield* runSink(f, partitioned)
        assert.deepStrictEqual(yield* readFolder(f.out), rows)
        const copy = `${f.out}-copy`
        fs.cpSync(f.out, copy, { recursive: true })
        assert.deepStrictEqual(yield* readFolder(copy), rows)
      }).pipe(Effect.provide(Session.layer()))
    )

    it.effect(`${kind}: a moved folder fails naming the missing file, never 0 rows`, () =>
      Effect.gen(function* () {
        const f = yield* folders()
        addInput(f, rows)
        yield* runSink(f, partitioned)
        const moved = `${f.out}-moved`
        fs.renameSync(f.out, moved)
        const e = yield* Effect.flip(readFolder(moved))
        assert.instanceOf(e, ConnectorError)
        assert.include(e.message, f.out)
        assert.include(e.message, "does not exist")
        assert.include(e.message, "moved or copied")
        assert.include(e.message, path.join(moved, "*"))
        // the way out the message gives reads what the moved folder holds
        const spark = yield* Session
        const df = yield* spark.read.schema("id INT, part STRING").option("basePath", moved).json(path.join(moved, "*"))
        const all = (yield* df.collect()) as ReadonlyArray<{ id: number; part: string }>
        assert.deepStrictEqual([...all].sort((a, b) => a.id - b.id), rows)
      }).pipe(Effect.provide(Session.layer()))
    )
  }

  it.effect("a truncated part file fails the read and the restart of the query, naming the file", () =>
    Effect.gen(function* () {
      const f = yield* folders()
      addInput(f, rows)
      yield* runSink(f, false)
      const [file] = partFiles(f.out)
      fs.truncateSync(file, fs.statSync(file).size - 5)
      const e = yield* Effect.flip(readFolder(f.out))
      assert.instanceOf(e, ConnectorError)
      assert.include(e.message, file)
      assert.include(e.message, "recorded")
      // the query that writes the folder checks its own log when it starts
      addInput(f, [{ id: 4, part: "z" }])
      const restart = yield* Effect.flip(runSink(f, false))
      assert.include((restart as { message: string }).message, file)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a deleted part file fails the restart of the query before its first batch", () =>
    Effect.gen(function* () {
      const f = yield* folders()
      addInput(f, rows)
      yield* runSink(f, true)
      const [file] = partFiles(f.out)
      fs.rmSync(file)
      addInput(f, [{ id: 4, part: "z" }])
      const restart = yield* Effect.flip(runSink(f, true))
      assert.include((restart as { message: string }).message, file)
      assert.include((restart as { message: string }).message, "does not exist")
    }).pipe(Effect.provide(Session.layer()))
  )
})
