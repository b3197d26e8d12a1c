/**
 * Receiver write-ahead log recovery with a killed process (issue 7: "a restart loses nothing
 * that was stored"): `walChild.ts` stores 100 records through a receiver with the log on and
 * dies by `SIGKILL` inside the output operation of its third batch; a restart through
 * `getOrCreate` replays what no completed batch consumed. The output must hold every stored
 * record; only the records of the batch that was killed before its checkpoint appear twice
 * (Spark's receiver guarantee is at-least-once for outputs), and the consumed log files are gone.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), "walChild.ts")

const runChild = (workDir: string, mode: "kill" | "restart") =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, workDir, mode], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, NODE_COMPILE_CACHE: path.join(os.tmpdir(), "tributary-crash-compile-cache") }
    })
    let stderr = ""
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (c: string) => {
      stderr += c
    })
    child.on("error", reject)
    child.on("close", (code, signal) => resolve({ code, signal, stderr }))
  })

const batches = (file: string): Array<Array<number>> =>
  fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => (JSON.parse(l) as { ids: Array<number> }).ids)

describe("receiver write-ahead log across a killed process", () => {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-dstream-wal-"))
  afterAll(() => fs.rmSync(workDir, { recursive: true, force: true }))

  it("a restart via getOrCreate outputs every stored record", { timeout: 60_000 }, async () => {
    const first = await runChild(workDir, "kill")
    expect(first.stderr).toBe("")
    expect(first.signal).toBe("SIGKILL")
    expect(fs.readFileSync(path.join(workDir, "stored"), "utf8")).toBe("100")
    const out = path.join(workDir, "out.jsonl")
    const before = batches(out)
    const killed = before[before.length - 1]
    expect(before.flat().length).toBeGreaterThanOrEqual(30)
    const logDir = path.join(workDir, "checkpoint", "receivedData", "0")
    expect(fs.readdirSync(logDir).length).toBeGreaterThan(0)
    // The checkpoint counts the records of the completed batches only (not the killed one).
    const meta = JSON.parse(fs.readFileSync(path.join(workDir, "checkpoint", "dstream-checkpoint"), "utf8"))
    expect(meta.receivedRecords["0"]).toBe(before.flat().length - killed.length)

    const second = await runChild(workDir, "restart")
    expect(second.stderr).toBe("")
    expect(second.code).toBe(0)
    const all = batches(out).flat()
    expect([...new Set(all)].sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i))
    const counts = new Map<number, number>()
    for (const id of all) counts.set(id, (counts.get(id) ?? 0) + 1)
    const twice = [...counts].filter(([, n]) => n > 1).map(([id]) => id)
    expect(twice.sort((a, b) => a - b)).toEqual([...killed].sort((a, b) => a - b))
    expect(Math.max(...counts.values())).toBe(2)
    // Every record was consumed by a completed batch: the log files were cleaned.
    expect(fs.readdirSync(logDir)).toEqual([])
  })
})
