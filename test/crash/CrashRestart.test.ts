/**
 * Crash tests of the micro-batch exactly-once protocol (docs/architecture.md, "Tests": crash
 * tests kill a real child process at named points of the commit protocol and restart it; the
 * output must equal an uninterrupted run).
 *
 * `child.ts` runs a stateless query from a file of JSON lines (a replayable source whose offsets
 * are line counts, a few lines per batch) to an idempotent file-per-batch sink, with
 * `Trigger.AvailableNow()`. Each scenario starts it with a kill point — after the offset log
 * write, inside the sink, after the sink before the commit, after the commit — checks that it
 * died by SIGKILL and left exactly the checkpoint and output the protocol says, restarts it
 * without a kill point, and compares the output with an uninterrupted run of the same input:
 * the same batches, the same rows, each batch exactly once.
 *
 * The kill points are drawn with a seeded PRNG; the seed is printed, and `CRASH_SEED=<n>` reruns
 * a failing draw. Children run two at a time. Nothing here depends on wall time: each child
 * runs to completion or to its kill, and the test waits for its exit.
 */
import { spawn } from "node:child_process"
import { randomInt } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  conflictFileName,
  formatKill,
  KILL_POINTS,
  type KillSpec,
  layout,
  logIds,
  type OutBatch,
  type OutRow,
  readCalls,
  readOutput,
  serializeBatch
} from "./protocol.ts"

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), "child.ts")

/** Single-kill scenarios drawn at random (the issue asks for at least 50 in CI). */
const SINGLE_KILLS = 50
/** Scenarios that kill twice in a row at different points before the clean restart. */
const DOUBLE_KILLS = 2
/** Children running at once (CI has 2 cores). */
const PARALLEL = 2

const SEED = process.env.CRASH_SEED !== undefined ? Number(process.env.CRASH_SEED) : randomInt(2 ** 31)
console.log(`crash tests: seed ${SEED} (rerun with CRASH_SEED=${SEED})`)

/** mulberry32: a small seeded PRNG, so a seed reproduces the inputs and the kill points. */
const prng = (seed: number) => {
  let a = seed >>> 0
  return (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const random = prng(SEED)
const below = (n: number): number => Math.floor(random() * n)

// ---- inputs and what the query must make of them ----------------------------------------

interface InputLine {
  readonly id: number
  readonly word: string | null
  readonly n: number | null
}

interface Input {
  readonly name: string
  readonly linesPerBatch: number
  readonly lines: ReadonlyArray<InputLine>
  /** The batches an uninterrupted run must write, computed here from the query's definition. */
  readonly expected: ReadonlyArray<OutBatch>
}

/**
 * The query of `child.ts` in plain JavaScript: `n % 3 != 0` (null drops the row),
 * `label = upper(concat(word, "-", cast(n as string)))` (null when `word` is), `n10 = n * 10`.
 */
const queryRow = (l: InputLine): OutRow | undefined =>
  l.n === null || l.n % 3 === 0
    ? undefined
    : { id: l.id, label: l.word === null ? null : `${l.word}-${l.n}`.toUpperCase(), n10: l.n * 10 }

const makeInput = (name: string, count: number, linesPerBatch: number): Input => {
  const words = ["kafka", "spark", "delta", "flink", null]
  const lines: Array<InputLine> = []
  for (let id = 0; id < count; id++) {
    // Batch 2 keeps no row at all, so the sink also sees (and may die in) an empty batch.
    const emptyBatch = Math.floor(id / linesPerBatch) === 2
    const n = emptyBatch ? 3 * below(30) : random() < 0.05 ? null : below(100)
    lines.push({ id, word: words[below(words.length)], n })
  }
  const expected: Array<OutBatch> = []
  for (let start = 0, batchId = 0; start < count; start += linesPerBatch, batchId++) {
    const rows: Array<OutRow> = []
    for (const l of lines.slice(start, start + linesPerBatch)) {
      const r = queryRow(l)
      if (r !== undefined) rows.push(r)
    }
    expected.push({ batchId, rows })
  }
  return { name, linesPerBatch, lines, expected }
}

const INPUTS: ReadonlyArray<Input> = [makeInput("a", 50 + below(13), 7), makeInput("b", 25 + below(11), 4)]

// ---- the protocol as a model: what each run must leave behind -----------------------------

/** What a checkpoint and the sink hold between runs. */
interface ModelState {
  /** Batches `0 .. committed-1` are in the commit log. */
  readonly committed: number
  /** `offsets/<committed>` is written but not committed: the restart replays it. */
  readonly pending: boolean
  /** Batch ids whose output file is in place. */
  readonly written: ReadonlySet<number>
}

interface ModelRun {
  readonly died: boolean
  /** The sink calls of the run, in order. */
  readonly calls: ReadonlyArray<number>
  readonly after: ModelState
}

const initialState: ModelState = { committed: 0, pending: false, written: new Set() }

/**
 * One run of the child from `state` under the exactly-once protocol of `MicroBatchExecution`:
 * a pending batch is replayed without a new offset write; every other batch writes its offsets,
 * calls the sink (which skips a batch already written), then commits.
 */
const simulate = (state: ModelState, batches: number, kill: KillSpec | undefined): ModelRun => {
  const at = (point: KillSpec["point"], b: number) => kill !== undefined && kill.point === point && kill.batchId === b
  const written = new Set(state.written)
  const calls: Array<number> = []
  let pending = state.pending
  for (let b = state.committed; b < batches; b++) {
    if (!pending && at("afterOffsetWrite", b))
      return { died: true, calls, after: { committed: b, pending: true, written } }
    calls.push(b)
    if (!written.has(b)) {
      if (at("insideSink", b)) return { died: true, calls, after: { committed: b, pending: true, written } }
      written.add(b)
    }
    if (at("afterSink", b)) return { died: true, calls, after: { committed: b, pending: true, written } }
    if (at("afterCommit", b)) return { died: true, calls, after: { committed: b + 1, pending: false, written } }
    pending = false
  }
  return { died: false, calls, after: { committed: batches, pending: false, written } }
}

// ---- scenarios --------------------------------------------------------------------------

interface Scenario {
  readonly name: string
  readonly input: Input
  readonly kills: ReadonlyArray<KillSpec>
}

const drawKill = (input: Input, point: KillSpec["point"], batchId: number): KillSpec => ({
  point,
  batchId,
  afterRows: point === "insideSink" ? below(input.expected[batchId].rows.length + 1) : 0
})

const makeScenarios = (): ReadonlyArray<Scenario> => {
  // Single kills: (input, point, batch) drawn without replacement, so the draws spread over
  // every point and batch (there are more combinations than scenarios).
  const combos: Array<{ input: Input; point: KillSpec["point"]; batchId: number }> = []
  for (const input of INPUTS) {
    for (const point of KILL_POINTS) {
      for (let b = 0; b < input.expected.length; b++) combos.push({ input, point, batchId: b })
    }
  }
  const scenarios: Array<Scenario> = []
  for (let i = 0; i < SINGLE_KILLS && combos.length > 0; i++) {
    const [c] = combos.splice(below(combos.length), 1)
    const kill = drawKill(c.input, c.point, c.batchId)
    scenarios.push({
      name: `input ${c.input.name}: kill ${formatKill(kill)}, restart`,
      input: c.input,
      kills: [kill]
    })
  }
  // Double kills: a second kill point that the restarted run reaches (the model says it dies there).
  for (let i = 0; i < DOUBLE_KILLS; i++) {
    const input = INPUTS[i % INPUTS.length]
    const batches = input.expected.length
    for (;;) {
      const first = drawKill(input, KILL_POINTS[below(KILL_POINTS.length)], below(batches))
      const second = drawKill(input, KILL_POINTS[below(KILL_POINTS.length)], below(batches))
      if (second.point === first.point) continue
      const run1 = simulate(initialState, batches, first)
      if (!run1.died || !simulate(run1.after, batches, second).died) continue
      scenarios.push({
        name: `input ${input.name}: kill ${formatKill(first)}, kill ${formatKill(second)}, restart`,
        input,
        kills: [first, second]
      })
      break
    }
  }
  return scenarios
}

const SCENARIOS = makeScenarios()

// ---- running children -------------------------------------------------------------------

let root = ""
const inputPath = (input: Input) => path.join(root, `input-${input.name}.jsonl`)

interface ChildExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
}

/** At most `PARALLEL` children at once. */
let running = 0
const queue: Array<() => void> = []
const withSlot = async <A>(f: () => Promise<A>): Promise<A> => {
  if (running >= PARALLEL) await new Promise<void>((resolve) => queue.push(resolve))
  else running++
  try {
    return await f()
  } finally {
    const next = queue.shift()
    if (next !== undefined) next()
    else running--
  }
}

const runChild = (input: Input, workDir: string, kill?: KillSpec): Promise<ChildExit> =>
  new Promise((resolve, reject) => {
    const args = [CHILD, inputPath(input), String(input.linesPerBatch), workDir]
    if (kill !== undefined) args.push(formatKill(kill))
    // Node 24 (the project's pinned Node, which runs vitest) strips the types of child.ts itself.
    const child = spawn(process.execPath, args, {
      stdio: ["ignore", "ignore", "pipe"],
      // V8's code cache for the library's modules, so each child starts in well under a second.
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

const range = (n: number): ReadonlyArray<number> => Array.from({ length: n }, (_, i) => i)

/** The batches whose replay gave rows different from those first written (the child records them). */
const conflicts = (outDir: string, batches: number): ReadonlyArray<number> =>
  range(batches).filter((k) => fs.existsSync(path.join(outDir, conflictFileName(k))))

// ---- the tests --------------------------------------------------------------------------

describe(`crash and restart at the points of the commit protocol (seed ${SEED})`, () => {
  const references = new Map<string, ReadonlyArray<OutBatch>>()
  let failed = false

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-crash-"))
    for (const input of INPUTS) {
      fs.writeFileSync(inputPath(input), input.lines.map((l) => `${JSON.stringify(l)}\n`).join(""))
    }
    // The reference: one uninterrupted run per input.
    await Promise.all(
      INPUTS.map((input) =>
        withSlot(async () => {
          const dir = path.join(root, `reference-${input.name}`)
          const exit = await runChild(input, dir)
          if (exit.code !== 0)
            throw new Error(
              `the reference run of input ${input.name} failed (${exit.code ?? exit.signal}):\n${exit.stderr}`
            )
          references.set(input.name, readOutput(layout(dir).out))
        })
      )
    )
  }, 120_000)

  afterAll(() => {
    if (root === "") return
    if (failed) console.log(`crash tests: the folders of failed scenarios are kept under ${root}`)
    else fs.rmSync(root, { recursive: true, force: true })
  })

  it("draws at least 50 single-kill scenarios and a scenario that kills twice", () => {
    expect(SCENARIOS.filter((s) => s.kills.length === 1).length).toBeGreaterThanOrEqual(50)
    expect(SCENARIOS.filter((s) => s.kills.length === 2).length).toBeGreaterThanOrEqual(1)
  })

  it("an uninterrupted run writes every batch once, with the query's rows and the source's batch boundaries", () => {
    for (const input of INPUTS) {
      const dir = path.join(root, `reference-${input.name}`)
      const files = layout(dir)
      expect(references.get(input.name)).toEqual(input.expected)
      expect(input.expected.length).toBe(Math.ceil(input.lines.length / input.linesPerBatch))
      expect(input.expected[2].rows).toEqual([])
      expect(readCalls(files.calls)).toEqual(range(input.expected.length))
      expect(logIds(files.checkpoint, "offsets")).toEqual(range(input.expected.length))
      expect(logIds(files.checkpoint, "commits")).toEqual(range(input.expected.length))
      expect(conflicts(files.out, input.expected.length)).toEqual([])
    }
  })

  for (const [index, scenario] of SCENARIOS.entries()) {
    it.concurrent(scenario.name, async ({ expect }) => {
      const { input, kills } = scenario
      const batches = input.expected.length
      const dir = path.join(root, `scenario-${index}`)
      const files = layout(dir)
      let state = initialState
      const allCalls: Array<number> = []
      try {
        for (const kill of kills) {
          const model = simulate(state, batches, kill)
          const callsBefore = readCalls(files.calls).length
          const exit = await withSlot(() => runChild(input, dir, kill))
          expect(exit.stderr).toBe("")
          expect(exit.signal, `the child must die by SIGKILL at ${formatKill(kill)}`).toBe("SIGKILL")
          // The checkpoint and the output hold exactly what the protocol wrote before the kill.
          expect(readCalls(files.calls).slice(callsBefore)).toEqual(model.calls)
          expect(logIds(files.checkpoint, "offsets")).toEqual(
            range(model.after.committed + (model.after.pending ? 1 : 0))
          )
          expect(logIds(files.checkpoint, "commits")).toEqual(range(model.after.committed))
          expect(readOutput(files.out).map((b) => b.batchId)).toEqual([...model.after.written].sort((a, b) => a - b))
          if (kill.point === "insideSink") {
            // The partial write is really there: a prefix of the batch with `afterRows` rows.
            const rows = input.expected[kill.batchId].rows
            const partial = fs.readFileSync(path.join(files.out, `.${kill.batchId}.json.tmp`), "utf8")
            expect(serializeBatch(kill.batchId, rows).startsWith(partial)).toBe(true)
            expect(partial.split("\n").length - 2).toBe(Math.min(kill.afterRows, rows.length))
          }
          allCalls.push(...model.calls)
          state = model.after
        }
        const model = simulate(state, batches, undefined)
        const exit = await withSlot(() => runChild(input, dir))
        expect(exit.stderr).toBe("")
        expect(exit.code).toBe(0)
        expect(exit.signal).toBe(null)
        allCalls.push(...model.calls)
        // Exactly the uninterrupted run: the same batches, the same rows, each batch once.
        expect(readOutput(files.out)).toEqual(references.get(input.name))
        expect(readOutput(files.out)).toEqual(input.expected)
        // A replayed batch was handed exactly the rows written the first time.
        expect(conflicts(files.out, batches)).toEqual([])
        expect(readCalls(files.calls)).toEqual(allCalls)
        expect(logIds(files.checkpoint, "offsets")).toEqual(range(batches))
        expect(logIds(files.checkpoint, "commits")).toEqual(range(batches))
        fs.rmSync(dir, { recursive: true, force: true })
      } catch (e) {
        failed = true
        // What the checkpoint and the sink held when the scenario failed, for the bug report.
        const show = (f: () => ReadonlyArray<number>): string => {
          try {
            return `[${f().join(", ")}]`
          } catch (error) {
            return `unreadable: ${String(error)}`
          }
        }
        console.log(
          [
            `crash tests: seed ${SEED}, scenario "${scenario.name}" failed; its folder is ${dir}`,
            `  offsets: ${show(() => logIds(files.checkpoint, "offsets"))}`,
            `  commits: ${show(() => logIds(files.checkpoint, "commits"))}`,
            `  output batches: ${show(() => readOutput(files.out).map((b) => b.batchId))}`,
            `  sink calls: ${show(() => readCalls(files.calls))}`
          ].join("\n")
        )
        throw e
      }
    }, 120_000)
  }
})
