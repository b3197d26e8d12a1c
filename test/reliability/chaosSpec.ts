/**
 * What the chaos harness (`chaos.ts`) and its child (`chaosChild.ts`) share: a trial's
 * description, drawn from a seed, and its input data.
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** Event and processing times start here (2023-11-14T22:13:20Z). */
export const BASE_MS = 1_700_000_000_000

export const QUERIES = [
  "stateless",
  "windowAppend",
  "windowUpdate",
  "session",
  "dedup",
  "join",
  "flatMapGroupsWithState",
  "transformWithState"
] as const
export const PROVIDERS = ["duckdb", "memory"] as const
export const SOURCES = ["lines", "files", "rate"] as const
export const SINKS = ["files", "foreachBatch"] as const
/** The moments the child can kill itself at (see `chaosChild.ts`). */
export const HOOKS = ["checkpointWrite", "stateCommit", "snapshotWrite", "sinkWrite"] as const

export type Query = (typeof QUERIES)[number]
export type Hook = (typeof HOOKS)[number]

export interface TrialSpec {
  readonly seed: number
  readonly query: Query
  readonly provider: (typeof PROVIDERS)[number]
  readonly source: (typeof SOURCES)[number]
  readonly sink: (typeof SINKS)[number]
  readonly batches: number
  readonly rowsPerBatch: number
  readonly keys: number
}

/** One killed run of a trial: a hook to die at, or a random delay (a share of the clean run's duration). */
export type Kill = { readonly hook: Hook; readonly nth: number } | { readonly delayShare: number }

export interface Trial {
  readonly spec: TrialSpec
  readonly kills: ReadonlyArray<Kill>
}

/** mulberry32: a small seeded PRNG. */
export const prng = (seed: number) => {
  let a = seed >>> 0
  return (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const pick = <A>(random: () => number, xs: ReadonlyArray<A>): A => xs[Math.floor(random() * xs.length)]

/** Output modes the file sink cannot take (Spark's file sink is append-only) go to `foreachBatch`. */
const isUpdateMode = (q: Query): boolean => q === "windowUpdate" || q === "flatMapGroupsWithState"

/**
 * The trial of `seed`: query, provider, source, sink, input size and 1–3 kills. A rate source
 * is stopped after its last batch with rows, so its output is compared by batch id: it goes to
 * the `foreachBatch` sink.
 */
export const drawTrial = (seed: number): Trial => {
  // Neighbouring seeds start mulberry32 at neighbouring states: mix the seed first.
  const random = prng(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ (seed >>> 16))
  random()
  const query = pick(random, QUERIES)
  const provider = pick(random, PROVIDERS)
  const source = pick(random, SOURCES)
  const sink = isUpdateMode(query) || source === "rate" ? "foreachBatch" : pick(random, SINKS)
  const spec: TrialSpec = {
    seed,
    query,
    provider,
    source,
    sink,
    batches: 3 + Math.floor(random() * 5),
    rowsPerBatch: 2 + Math.floor(random() * 7),
    keys: 2 + Math.floor(random() * 4)
  }
  const hooks: ReadonlyArray<Hook> = [
    "checkpointWrite",
    ...(query === "stateless" ? [] : (["stateCommit"] as const)),
    ...(provider === "memory" && query !== "stateless" ? (["snapshotWrite"] as const) : []),
    ...(sink === "foreachBatch" ? (["sinkWrite"] as const) : [])
  ]
  const kills: Array<Kill> = []
  const count = 1 + Math.floor(random() * 3)
  for (let i = 0; i < count; i++) {
    kills.push(
      random() < 0.5
        ? { delayShare: random() }
        : drawHook(random, pick(random, hooks), spec.batches)
    )
  }
  return { spec, kills }
}

/** A hook kill at an occurrence the run reaches: the occurrences per batch differ by hook. */
const drawHook = (random: () => number, hook: Hook, batches: number): Kill => {
  const perBatch = hook === "checkpointWrite" ? 3 : hook === "stateCommit" ? 2 : hook === "snapshotWrite" ? 0.5 : 1
  return { hook, nth: Math.floor(random() * Math.max(1, batches * perBatch)) }
}

/** Writes the trial's input beside `specFile`: `input.jsonl` (lines source) or `input/` (files source, one file per batch). */
export const writeInput = (spec: TrialSpec, dir: string): void => {
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, "spec.json"), JSON.stringify(spec))
  if (spec.source === "rate") return
  const random = prng(spec.seed ^ 0x5bd1e995)
  const batches: Array<Array<string>> = []
  let id = 0
  for (let b = 0; b < spec.batches; b++) {
    const lines: Array<string> = []
    for (let i = 0; i < spec.rowsPerBatch; i++) {
      // Event time moves 10 s a batch, with disorder (and some rows late for the watermark).
      const tsec = BASE_MS / 1000 + b * 10 + Math.floor(random() * 15) - 3
      const key = `k${Math.floor(random() * spec.keys)}`
      const v = Math.floor(random() * 20)
      lines.push(JSON.stringify({ id: id++, key, tsec, v }))
    }
    batches.push(lines)
  }
  if (spec.source === "lines") {
    fs.writeFileSync(path.join(dir, "input.jsonl"), batches.map((ls) => ls.map((l) => `${l}\n`).join("")).join(""))
  } else {
    const input = path.join(dir, "input")
    fs.mkdirSync(input, { recursive: true })
    batches.forEach((ls, b) => {
      const file = path.join(input, `part-${String(b).padStart(4, "0")}.json`)
      fs.writeFileSync(file, ls.map((l) => `${l}\n`).join(""))
      // Distinct modification times in batch order: the file source takes the oldest first.
      const t = new Date(BASE_MS + b * 1000)
      fs.utimesSync(file, t, t)
    })
  }
}
