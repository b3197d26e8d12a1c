/**
 * Crash tests of the file sink's exactly-once protocol (Spark's `ManifestFileCommitProtocol`):
 * `fileSinkChild.ts` streams a folder of JSON files (one file per batch) into the partitioned
 * JSON file sink and kills itself with SIGKILL either after a batch's data files are written
 * but before `_spark_metadata/<k>` is, or after `_spark_metadata/<k>` but before the
 * checkpoint's commit. It is restarted without a kill; the folder read back with `spark.read`
 * must equal an uninterrupted run's, each batch logged once, and the files of the killed
 * attempt (written, never logged) must not be read.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Session } from "../../mod.ts"

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), "fileSinkChild.ts")
const BATCHES = 11

interface ChildExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
}

const runChild = (inputDir: string, workDir: string, kill?: string): Promise<ChildExit> =>
  new Promise((resolve, reject) => {
    const args = [CHILD, inputDir, workDir]
    if (kill !== undefined) args.push(kill)
    const child = spawn(process.execPath, args, {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, NODE_COMPILE_CACHE: path.join(os.tmpdir(), "tributary-crash-compile-cache") }
    })
    let stderr = ""
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk
    })
    child.on("error", reject)
    child.on("close", (code, signal) => resolve({ code, signal, stderr }))
  })

interface Row {
  readonly id: number
  readonly word: string | null
  readonly bucket: number
  readonly label: string | null
}

/** The sink folder read back as `spark.read.json(out)` does (through `_spark_metadata`). */
const readBack = (out: string): Promise<ReadonlyArray<Row>> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const spark = yield* Session
      const df = yield* spark.read.schema("id INT, word STRING, label STRING, bucket INT").json(out)
      const rows = (yield* df.collect()) as unknown as ReadonlyArray<Row>
      return [...rows].sort((a, b) => a.id - b.id)
    }).pipe(Effect.provide(Session.layer()))
  )

/** The data files in the folder (logged or not). */
const dataFiles = (out: string): Array<string> =>
  (fs.readdirSync(out, { recursive: true }) as Array<string>).filter((p) => /part-.*\.json$/.test(p)).sort()

/** The files the sink log lists, per log file. */
const loggedFiles = (out: string): Array<string> => {
  const dir = path.join(out, "_spark_metadata")
  if (!fs.existsSync(dir)) return []
  const names = fs.readdirSync(dir).filter((n) => /^\d+(\.compact)?$/.test(n))
  const latest = Math.max(...names.map((n) => Number.parseInt(n, 10)))
  const compact = names.filter((n) => n.endsWith(".compact")).map((n) => Number.parseInt(n, 10))
  const from = compact.length === 0 ? 0 : Math.max(...compact)
  const out2: Array<string> = []
  for (const n of names) {
    const id = Number.parseInt(n, 10)
    if (id < from || id > latest) continue
    for (const line of fs.readFileSync(path.join(dir, n), "utf8").split("\n").slice(1)) {
      if (line !== "") out2.push((JSON.parse(line) as { path: string }).path)
    }
  }
  return out2.sort()
}

let root: string
let inputDir: string
let expected: ReadonlyArray<Row>
let expectedFileCount: number

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-file-sink-crash-"))
  inputDir = path.join(root, "in")
  fs.mkdirSync(inputDir)
  const words = ["kafka", "spark", null, "delta"]
  let id = 0
  for (let b = 0; b < BATCHES; b++) {
    const lines: Array<string> = []
    for (let i = 0; i < 3 + (b % 3); i++, id++) {
      const word = words[(id * 7) % words.length]
      lines.push(JSON.stringify(word === null ? { id } : { id, word }))
    }
    const p = path.join(inputDir, `in-${String(b).padStart(2, "0")}.json`)
    fs.writeFileSync(p, `${lines.join("\n")}\n`)
    fs.utimesSync(p, 1000 + b, 1000 + b)
  }
  const clean = path.join(root, "clean")
  const exit = await runChild(inputDir, clean)
  expect(exit.stderr).toBe("")
  expect(exit.code).toBe(0)
  expected = await readBack(path.join(clean, "out"))
  expectedFileCount = loggedFiles(path.join(clean, "out")).length
  // the query's definition in plain JavaScript: every id not divisible by 4
  expect(expected.map((r) => r.id)).toEqual([...Array(id).keys()].filter((i) => i % 4 !== 0))
  expect(fs.readdirSync(path.join(clean, "out", "_spark_metadata"))).toContain("9.compact")
}, 120_000)

afterAll(() => {
  if (root !== undefined) fs.rmSync(root, { recursive: true, force: true })
})

describe("file sink crash", () => {
  const scenarios: ReadonlyArray<readonly [string, number]> = [
    // the first batch (no log yet), the compaction batch (9.compact), and the last batch
    ["beforeSinkLog", 0],
    ["beforeSinkLog", 9],
    ["afterSinkLog", 10]
  ]
  it.each(scenarios)(
    "killed %s of batch %i, restarted: the folder reads back like an uninterrupted run",
    async (point, batch) => {
      const work = path.join(root, `${point}-${batch}`)
      const killed = await runChild(inputDir, work, `${point}:${batch}`)
      expect(killed.signal).toBe("SIGKILL")
      const out = path.join(work, "out")
      const logDir = path.join(out, "_spark_metadata")
      const logged = (id: number) =>
        fs.existsSync(path.join(logDir, String(id))) || fs.existsSync(path.join(logDir, `${id}.compact`))
      expect(logged(batch)).toBe(point === "afterSinkLog")
      expect(fs.existsSync(path.join(work, "checkpoint", "commits", String(batch)))).toBe(false)
      const orphans =
        point === "beforeSinkLog" ? dataFiles(out).filter((f) => !loggedFiles(out).some((l) => l.endsWith(f))) : []
      if (point === "beforeSinkLog") {
        expect(orphans.length).toBeGreaterThan(0)
        // the killed attempt's files are not data (before the first log entry the folder is
        // not a sink folder yet, and a plain listing sees them, as in Spark)
        if (batch > 0) expect((await readBack(out)).length).toBeLessThan(expected.length)
      }

      const restarted = await runChild(inputDir, work)
      expect(restarted.stderr).toBe("")
      expect(restarted.code).toBe(0)
      expect(await readBack(out)).toEqual(expected)
      const files = loggedFiles(out)
      expect(files.length).toBe(expectedFileCount)
      expect(new Set(files).size).toBe(files.length)
      // the orphans stay on disk but outside the log
      for (const o of orphans) expect(files.some((l) => l.endsWith(o))).toBe(false)
    },
    120_000
  )
})
