/**
 * Exactly once over a kill and a restart: `restartChild.ts` runs a stateful query over the
 * `nexmark` source into an idempotent file-per-batch sink; each scenario kills it (`SIGKILL`, no
 * finalizers) at a point of the commit protocol, restarts it on the same checkpoint, and checks
 * that the output equals an uninterrupted run's: the same batches with the same rows, no batch
 * replayed with other rows. The source regenerates a logged batch's events from its offsets alone,
 * so the re-run batch is the one that was cut short.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), "restartChild.ts")

interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
}

const run = (workDir: string, kill?: string): Promise<Exit> =>
  new Promise((resolve, reject) => {
    const args = [CHILD, workDir, ...(kill === undefined ? [] : [kill])]
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

/** `out/`: batch file name to its text. */
const output = (workDir: string): Map<string, string> => {
  const dir = path.join(workDir, "out")
  const m = new Map<string, string>()
  if (!fs.existsSync(dir)) return m
  for (const name of fs.readdirSync(dir).sort()) m.set(name, fs.readFileSync(path.join(dir, name), "utf8"))
  return m
}

/** The source's line of each offset log entry (the last line: the event count). */
const loggedOffsets = (workDir: string): Map<number, string> => {
  const dir = path.join(workDir, "checkpoint", "offsets")
  const m = new Map<number, string>()
  for (const name of fs.readdirSync(dir)) {
    if (!/^\d+$/.test(name)) continue
    const lines = fs.readFileSync(path.join(dir, name), "utf8").trimEnd().split("\n")
    m.set(Number(name), lines[lines.length - 1])
  }
  return m
}

let root: string
let reference: Map<string, string>
let referenceOffsets: Map<number, string>

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-nexmark-restart-"))
  const dir = path.join(root, "reference")
  const exit = await run(dir)
  expect(exit.code, exit.stderr).toBe(0)
  reference = output(dir)
  referenceOffsets = loggedOffsets(dir)
}, 120_000)

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true })
})

describe("nexmark source: exactly once over a kill and a restart", () => {
  it("the uninterrupted run emits closed windows over several batches", () => {
    // 6 000 events in batches of 500, then the batch the last watermark needs
    const ids = [...referenceOffsets.keys()].sort((a, b) => a - b)
    expect(ids.slice(0, 12).map((id) => referenceOffsets.get(id))).toEqual(
      Array.from({ length: 12 }, (_, i) => String((i + 1) * 500))
    )
    const rows = [...reference.values()].flatMap((t) => t.split("\n").filter((l) => l !== ""))
    expect(reference.size).toBeGreaterThan(5)
    expect(rows.length).toBeGreaterThan(500)
  })

  for (const kill of ["afterOffsetWrite:3", "insideSink:5", "afterSink:7", "afterCommit:2", "afterSink:0"]) {
    it(`killed at ${kill}, restarted: the output of an uninterrupted run`, async () => {
      const dir = path.join(root, kill.replace(":", "-"))
      const killed = await run(dir, kill)
      expect(killed.signal, killed.stderr).toBe("SIGKILL")
      const batchId = Number(kill.split(":")[1])
      const point = kill.split(":")[0]
      // what the protocol left: the offsets of the batch, its commit only after the commit point
      expect(loggedOffsets(dir).get(batchId)).toBe(referenceOffsets.get(batchId))
      expect(fs.existsSync(path.join(dir, "checkpoint", "commits", String(batchId)))).toBe(point === "afterCommit")
      expect(output(dir).has(`${batchId}.json`)).toBe(point === "afterSink" || point === "afterCommit")
      const restarted = await run(dir)
      expect(restarted.code, restarted.stderr).toBe(0)
      expect(output(dir)).toEqual(reference)
      expect(loggedOffsets(dir)).toEqual(referenceOffsets)
    }, 120_000)
  }
})
