/**
 * Random differential tests (issue #21): generated batch and streaming queries
 * (test/connect/randomQueries.ts) run on the local engine and on Spark 4.2 through Spark Connect;
 * the results must agree (for streams: the memory table, the micro-batches and each batch's
 * output row count). Both engines refusing a generated query counts as agreement.
 *
 * CI runs a bounded number with a fixed seed. A long run:
 *
 *   DIFF_SEED=7 DIFF_CASES=1500 DIFF_STREAMING_CASES=500 npx vitest run test/connect/DifferentialRandom.test.ts
 *
 * One case again: `DIFF_BATCH_SEEDS=<case seed>,…` (or `DIFF_STREAM_SEEDS=`), with `DIFF_STREAMING_CASES=0`
 * or `DIFF_CASES=0` to skip the other kind.
 *
 * `DIFF_ENABLE=longsBeyond53,subMillisecond,regexpGroupRefs,dateAddOverflow` turns on the
 * domains the generator leaves out by default (randomQueries.ts, `Switches`); `DIFF_REPORT=file`
 * writes a JSON summary. A failure prints the seed and the shrunk case as code.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { names } from "../../core/functions/Registry.ts"
import { type Case, compareResults, useEngines } from "./differential.ts"
import {
  type BatchCase,
  batchCode,
  batchHarnessCase,
  buildStream,
  caseSeed,
  FUNCTIONS,
  genBatch,
  genStream,
  NOT_GENERATED,
  shrinkBatch,
  shrinkStream,
  type StreamCase,
  streamCode,
  streamOptions,
  switchesFromEnv,
  writeStreamFiles
} from "./randomQueries.ts"
import { remoteAddress } from "./remote.ts"

const SEED = Number(process.env.DIFF_SEED ?? 20261202)
const BATCH_CASES = Number(process.env.DIFF_CASES ?? 40)
const STREAMING_CASES = Number(process.env.DIFF_STREAMING_CASES ?? 4)
const SWITCHES = switchesFromEnv(process.env.DIFF_ENABLE)
/** The budget of re-runs to shrink one failing case. */
const SHRINK_RUNS = Number(process.env.DIFF_SHRINK_RUNS ?? 40)
/** How many cases run at once. */
const LOOKAHEAD = Number(process.env.DIFF_CONCURRENCY ?? 3)
/** `DIFF_BATCH_SEEDS=4044622617,…` / `DIFF_STREAM_SEEDS=…` re-run just those case seeds (from a report or a failure message). */
const seedList = (value: string | undefined): ReadonlyArray<number> | undefined =>
  value === undefined || value.trim() === "" ? undefined : value.split(",").map((s) => Number(s.trim()))
const CASE_SEEDS: Record<"batch" | "streaming", ReadonlyArray<number> | undefined> = {
  batch: seedList(process.env.DIFF_BATCH_SEEDS),
  streaming: seedList(process.env.DIFF_STREAM_SEEDS)
}

const { engines, runCaseSettled } = useEngines(async () => ({}), { concurrency: 3, remote: remoteAddress })

type Verdict = { readonly kind: "agree" | "bothFailed" } | { readonly kind: "differ"; readonly problem: string }

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** Runs a case on both engines: agreement, both refusing, or the difference. */
const check = async (c: Case<unknown>): Promise<Verdict> => {
  const [local, remote] = await runCaseSettled(c)
  if (local.status === "rejected" && remote.status === "rejected") return { kind: "bothFailed" }
  if (local.status === "rejected" || remote.status === "rejected") {
    const describe = (r: PromiseSettledResult<{ readonly rows: ReadonlyArray<unknown> }>) =>
      r.status === "fulfilled" ? `succeeded with ${r.value.rows.length} rows` : `failed: ${messageOf(r.reason)}`
    return { kind: "differ", problem: `[${c.name}] only one engine failed\n  local ${describe(local)}\n  spark ${describe(remote)}` }
  }
  const problem = compareResults(c.name, local.value, remote.value, { ...c.opts, ...c.stream })
  return problem === undefined ? { kind: "agree" } : { kind: "differ", problem }
}

/** Shrinks a failing case: adopts the first smaller variant that still disagrees, until none does or the budget is spent. */
const shrink = async <C,>(
  first: C,
  variants: (c: C) => Array<C>,
  toCase: (c: C) => Case<unknown>
): Promise<{ readonly smallest: C; readonly problem: string; readonly runs: number }> => {
  let current = first
  let problem = ""
  let runs = 0
  let progress = true
  while (progress && runs < SHRINK_RUNS) {
    progress = false
    for (const v of variants(current)) {
      if (runs++ >= SHRINK_RUNS) break
      const verdict = await check(toCase(v)).catch((e: unknown) => ({ kind: "differ" as const, problem: messageOf(e) }))
      if (verdict.kind === "differ") {
        current = v
        problem = verdict.problem
        progress = true
        break
      }
    }
  }
  return { smallest: current, problem, runs }
}

const tally = { agree: 0, bothFailed: 0, differ: 0, batch: 0, streaming: 0 }
const failures: Array<{ readonly seed: number; readonly kind: string; readonly code: string; readonly problem: string }> = []
const startedAt = Date.now()

/** Writes the summary so far to `DIFF_REPORT` (after every case, so a long run cut short still reports). */
const report = (): string => {
  const summary = { seed: SEED, batchCases: BATCH_CASES, streamingCases: STREAMING_CASES, ...tally, seconds: Math.round((Date.now() - startedAt) / 1000), failures }
  if (process.env.DIFF_REPORT !== undefined) fs.writeFileSync(process.env.DIFF_REPORT, JSON.stringify(summary, null, 2))
  return JSON.stringify({ ...summary, failures: failures.map((f) => f.seed) })
}

afterAll(() => {
  console.log(`differential random: ${report()}`)
})

const streamDir = (c: StreamCase): string => path.join(path.dirname(engines().dataSet.root), `stream-${c.seed}-${c.files.length}-${c.files.flat().length}`)

const streamHarnessCase = (c: StreamCase): Case<unknown> => ({
  name: `stream seed ${c.seed}`,
  build: (spark) => buildStream(spark, c, writeStreamFiles(streamDir(c), c)),
  stream: streamOptions(c)
})

/** Registers one test per generated case, each starting the next few so that Spark's fixed per-query cost overlaps. */
const register = <C extends BatchCase | StreamCase,>(
  kind: "batch" | "streaming",
  count: number,
  generate: (seed: number) => C,
  toCase: (c: C) => Case<unknown>,
  variants: (c: C) => Array<C>,
  code: (c: C) => string,
  offset: number
) => {
  const seeds = CASE_SEEDS[kind] ?? Array.from({ length: count }, (_, i) => caseSeed(SEED, offset + i))
  const started = new Map<number, Promise<Verdict>>()
  const start = (seed: number): Promise<Verdict> => {
    let run = started.get(seed)
    if (run === undefined) {
      run = check(toCase(generate(seed)))
      run.catch(() => undefined)
      started.set(seed, run)
    }
    return run
  }
  seeds.forEach((seed, index) => {
    it(`${kind} case ${index} (seed ${seed})`, async () => {
      const own = start(seed)
      for (const next of seeds.slice(index + 1, index + LOOKAHEAD)) start(next)
      const verdict = await own
      started.delete(seed)
      tally[kind === "batch" ? "batch" : "streaming"]++
      if (verdict.kind !== "differ") {
        tally[verdict.kind]++
        report()
        return
      }
      tally.differ++
      const generated = generate(seed)
      const { smallest, problem, runs } = await shrink(generated, variants, toCase)
      const text = `${code(smallest)}`
      failures.push({ seed, kind, code: text, problem: problem || verdict.problem })
      report()
      throw new Error(
        `the engines disagree on generated ${kind} case seed ${seed} (run seed ${SEED}, case ${index}); shrunk in ${runs} runs to:\n${text}\n\n${problem || verdict.problem}`
      )
    }, 600_000)
  })
}

describe("the generator covers the registry", () => {
  it("every registry function is generated or named as left out, with the reason", () => {
    const generated = new Set(FUNCTIONS.flatMap((s) => s.names))
    const missing = names().filter((n) => !generated.has(n) && NOT_GENERATED[n] === undefined)
    expect(missing).toEqual([])
  })
  it("a seed gives the same case every time", () => {
    expect(batchCode(genBatch(caseSeed(SEED, 3), SWITCHES))).toBe(batchCode(genBatch(caseSeed(SEED, 3), SWITCHES)))
    expect(streamCode(genStream(caseSeed(SEED, 4), SWITCHES))).toBe(streamCode(genStream(caseSeed(SEED, 4), SWITCHES)))
  })
})

describe(`differential: random batch queries (seed ${SEED})`, () => {
  register(
    "batch",
    BATCH_CASES,
    (seed) => genBatch(seed, SWITCHES),
    batchHarnessCase,
    shrinkBatch,
    batchCode,
    0
  )
})

describe(`differential: random streaming queries (seed ${SEED})`, () => {
  register(
    "streaming",
    STREAMING_CASES,
    (seed) => genStream(seed, SWITCHES),
    streamHarnessCase,
    shrinkStream,
    streamCode,
    1_000_000
  )
})
