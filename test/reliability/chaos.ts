/**
 * The chaos harness (issue #20): random trials of a streaming query killed with `SIGKILL` and
 * restarted, compared with an uninterrupted run of the same trial.
 *
 * Each trial (`drawTrial(seed)` in `chaosSpec.ts`) picks a query (stateless, windowed
 * aggregation in append and update mode, session windows, deduplication, a stream-stream join,
 * flatMapGroupsWithState, transformWithState with a TTL), a state provider (DuckDB, file), a
 * source (a replayable file-backed memory-like source, the file source, `rate-micro-batch`) and
 * an exactly-once sink (the file sink, or `foreachBatch` writing idempotently by batch id). The
 * harness runs the query once without a kill (the reference), then again in a fresh folder
 * killed 1–3 times — by `SIGKILL` after a random delay after the query started, or by the child
 * itself at a chosen moment (mid checkpoint-file write, inside a state commit, mid snapshot
 * write of the file provider's maintenance, mid sink write) — and restarted each time, then once
 * more without a kill. The last run of each writes its output (the file sink's through
 * `spark.read`) and its state (`spark.read.format("statestore")`, every operator and store of
 * `state-metadata`) to `result.json`; they must be equal: no row lost, none duplicated, the same
 * state, no replayed batch different from its first write.
 *
 * The child is spawned as the crash tests spawn theirs (`test/crash/CrashRestart.test.ts`): Node
 * runs the `.ts` file directly, with a shared compile cache so each child starts fast.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { drawTrial, type Kill, type Trial, writeInput } from "./chaosSpec.ts"

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), "chaosChild.ts")

interface ChildExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
  /** Milliseconds from the child's `started` line to its exit (undefined: it never started the query). */
  readonly queryMs: number | undefined
}

/** Runs the child once; `killAfterMs`: `SIGKILL` that long after the query started. */
const runChild = (
  dir: string,
  workDir: string,
  hook: string | undefined,
  killAfterMs: number | undefined,
  stateBatch?: number
): Promise<ChildExit> =>
  new Promise((resolve, reject) => {
    const args = [CHILD, path.join(dir, "spec.json"), workDir]
    if (hook !== undefined) args.push(hook)
    const child = spawn(process.execPath, args, {
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        NODE_COMPILE_CACHE: path.join(os.tmpdir(), "tributary-crash-compile-cache"),
        ...(stateBatch === undefined ? {} : { CHAOS_STATE_BATCH: String(stateBatch) })
      }
    })
    let stderr = ""
    let started: number | undefined
    let timer: NodeJS.Timeout | undefined
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk
    })
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      if (started === undefined && chunk.includes("started")) {
        started = performance.now()
        if (killAfterMs !== undefined) timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs)
      }
    })
    child.on("error", reject)
    child.on("close", (code, signal) => {
      if (timer !== undefined) clearTimeout(timer)
      resolve({ code, signal, stderr, queryMs: started === undefined ? undefined : performance.now() - started })
    })
  })

interface Result {
  readonly lastBatch: number
  readonly committed: number
  readonly output: ReadonlyArray<string>
  readonly state: Readonly<Record<string, ReadonlyArray<string>>>
  readonly conflicts: ReadonlyArray<string>
}

const readResult = (workDir: string): Result => JSON.parse(fs.readFileSync(path.join(workDir, "result.json"), "utf8")) as Result

const counts = (xs: ReadonlyArray<string>): Map<string, number> => {
  const m = new Map<string, number>()
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1)
  return m
}

/** Rows of `a` missing from `b`, as a multiset difference. */
const missing = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): number => {
  const mb = counts(b)
  let n = 0
  for (const [x, k] of counts(a)) n += Math.max(0, k - (mb.get(x) ?? 0))
  return n
}

export interface TrialReport {
  readonly seed: number
  readonly trial: Trial
  readonly lost: number
  readonly duplicated: number
  readonly stateMismatch: boolean
  readonly conflicts: number
  /** A run that did not end by its kill or normally (an error), or a reference run that failed. */
  readonly error: string | undefined
  /**
   * The restart planned other batches than the reference (a kill between the file source's log
   * and the offset log: the restart takes the logged files and the next ones as one batch, as
   * Spark's `FileStreamSource` does). Not compared: batch-dependent results may differ by Spark's rules.
   */
  readonly regrouped: boolean
  /** The chaos run's watermark lagged after a restart (Spark's; see `compareWatermarks`): the state was compared at this batch. */
  readonly laggedAt: number | undefined
  /** SIGKILLs delivered (by the harness or by the child at a hook). */
  readonly kills: number
  readonly ms: number
}

/** The source offsets of each logged batch (the offset log files without their metadata line). */
const offsetLog = (workDir: string): Map<string, string> => {
  const dir = path.join(workDir, "checkpoint", "offsets")
  const out = new Map<string, string>()
  for (const n of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    if (/^\d+$/.test(n)) out.set(n, fs.readFileSync(path.join(dir, n), "utf8").split("\n").slice(2).join("\n"))
  }
  return out
}

/** Whether a batch both runs logged has other source offsets in the chaos run. */
const regrouped = (ref: string, chaos: string): boolean => {
  const a = offsetLog(ref)
  const b = offsetLog(chaos)
  for (const [k, v] of a) if (b.has(k) && b.get(k) !== v) return true
  return false
}

/** One logged batch: its source offsets, the watermark it ran with, the watermark its commit gave the next batch. */
export interface LoggedBatch {
  readonly offsets: string
  readonly watermarkMs: number
  /** Undefined: the batch has no commit. */
  readonly nextWatermarkMs: number | undefined
}

/** The offset and commit logs of a run's checkpoint, by batch id. */
export const batchLog = (workDir: string): Map<number, LoggedBatch> => {
  const cp = path.join(workDir, "checkpoint")
  const out = new Map<number, LoggedBatch>()
  const commits = path.join(cp, "commits")
  for (const [n, offsets] of offsetLog(workDir)) {
    const header = fs.readFileSync(path.join(cp, "offsets", n), "utf8").split("\n")[1] ?? "{}"
    const commit = path.join(commits, n)
    const next = fs.existsSync(commit)
      ? (JSON.parse(fs.readFileSync(commit, "utf8").split("\n")[1] || "{}") as { nextBatchWatermarkMs?: number }).nextBatchWatermarkMs
      : undefined
    out.set(Number(n), {
      offsets,
      watermarkMs: (JSON.parse(header) as { batchWatermarkMs?: number }).batchWatermarkMs ?? 0,
      nextWatermarkMs: next
    })
  }
  return out
}

/**
 * How the chaos run's watermarks compare with the reference's, batch by batch (both logs hold
 * the same source offsets, else the trial is regrouped):
 *
 * - `same`: every batch both committed ran with, and gave the next batch, the same watermark;
 * - `lagged`: from batch `batch` on, the chaos run's watermark is lower. Spark keeps each
 *   watermark node's maximum event time in memory only (`WatermarkTracker.operatorToWatermarkMap`);
 *   a restart restores the global watermark alone (`setWatermark`), so when a query has two
 *   watermark nodes (a stream-stream join) and a batch re-run after a crash brings rows to one
 *   input only, the other counts as 0 again and the watermark the batch's commit gives the next
 *   batch can be lower than in an uninterrupted run. Batches up to `batch` ran with equal
 *   watermarks: their state must be equal;
 * - `unexplained`: a batch ran with another watermark before any commit lagged, or the chaos
 *   run's watermark is higher somewhere (a run that forgot node maxima can only stay at or
 *   below one that kept them) — no restart explains that.
 */
export type WatermarkComparison =
  | { readonly kind: "same" }
  | { readonly kind: "lagged"; readonly batch: number }
  | { readonly kind: "unexplained"; readonly batch: number }

export const compareWatermarks = (
  ref: ReadonlyMap<number, LoggedBatch>,
  chaos: ReadonlyMap<number, LoggedBatch>
): WatermarkComparison => {
  const ids = [...chaos.keys()].filter((b) => ref.has(b)).sort((a, b) => a - b)
  let lagged: number | undefined
  for (const b of ids) {
    const r = ref.get(b)!
    const c = chaos.get(b)!
    const rNext = r.nextWatermarkMs ?? Number.POSITIVE_INFINITY
    if (lagged === undefined) {
      // Before the first lagging commit both runs ran batch b with the same watermark.
      if (c.watermarkMs !== r.watermarkMs) return { kind: "unexplained", batch: b }
      if (c.nextWatermarkMs !== undefined && c.nextWatermarkMs > rNext) return { kind: "unexplained", batch: b }
      if (c.nextWatermarkMs !== undefined && c.nextWatermarkMs < rNext) lagged = b
    } else if (c.watermarkMs > r.watermarkMs || (c.nextWatermarkMs !== undefined && c.nextWatermarkMs > rNext)) {
      // A run that forgot node maxima can only stay at or below the one that kept them.
      return { kind: "unexplained", batch: b }
    }
  }
  return lagged === undefined ? { kind: "same" } : { kind: "lagged", batch: lagged }
}

/** A lagged trial is explained only when the query has several watermark nodes (see `compareWatermarks`). */
export const lagExplained = (t: Trial): boolean => t.spec.query === "join"

export const failed = (r: TrialReport): boolean =>
  r.lost > 0 || r.duplicated > 0 || r.stateMismatch || r.conflicts > 0 || r.error !== undefined

const describeKill = (k: Kill): string => ("hook" in k ? `${k.hook}:${k.nth}` : `delay ${Math.round(k.delayShare * 100)}%`)

export const describeTrial = (t: Trial): string =>
  `${t.spec.query} / ${t.spec.provider} / ${t.spec.source} → ${t.spec.sink}, ${t.spec.batches}×${t.spec.rowsPerBatch} rows, kills [${t.kills.map(describeKill).join(", ")}]`

/** Runs the trial of `seed` in a new folder under `root` (deleted afterwards unless it failed, or `keep`). */
export const runTrial = async (seed: number, root: string, keep = false): Promise<TrialReport> => {
  const t0 = performance.now()
  const trial = drawTrial(seed)
  const dir = path.join(root, `trial-${seed}`)
  fs.rmSync(dir, { recursive: true, force: true })
  writeInput(trial.spec, dir)
  const ref = path.join(dir, "reference")
  const chaos = path.join(dir, "chaos")
  const base = { seed, trial, lost: 0, duplicated: 0, stateMismatch: false, conflicts: 0, kills: 0, regrouped: false, laggedAt: undefined }
  const done = (r: Omit<TrialReport, "ms">): TrialReport => {
    const report = { ...r, ms: performance.now() - t0 }
    if (!failed(report) && !keep) fs.rmSync(dir, { recursive: true, force: true })
    return report
  }
  const clean = await runChild(dir, ref, undefined, undefined)
  if (clean.code !== 0) return done({ ...base, error: `reference run failed (${clean.code ?? clean.signal}): ${clean.stderr.slice(-2000)}` })
  const queryMs = clean.queryMs ?? 0
  let kills = 0
  for (const kill of trial.kills) {
    const run =
      "hook" in kill
        ? await runChild(dir, chaos, `${kill.hook}:${kill.nth}`, undefined)
        : await runChild(dir, chaos, undefined, kill.delayShare * queryMs)
    if (run.signal === "SIGKILL") kills++
    else if (run.code !== 0) {
      return done({ ...base, kills, error: `run after ${kills} kill(s) failed (${run.code ?? run.signal}): ${run.stderr.slice(-2000)}` })
    }
  }
  const expected = readResult(ref)
  // The state and the batch-keyed output are read at the reference's last batch: a restarted
  // processing-time query may run no-data batches (TTL expiry) that the reference run had not
  // reached yet when it ended; batches up to the reference's last one must be equal.
  const last = await runChild(dir, chaos, undefined, undefined, expected.lastBatch)
  if (last.code !== 0) {
    if (trial.spec.source === "files" && regrouped(ref, chaos)) return done({ ...base, kills, regrouped: true, error: undefined })
    return done({ ...base, kills, error: `final restart after ${kills} kill(s) failed (${last.code ?? last.signal}): ${last.stderr.slice(-2000)}` })
  }
  if (trial.spec.source === "files" && regrouped(ref, chaos)) return done({ ...base, kills, regrouped: true, error: undefined })
  let actual = readResult(chaos)
  // A lagging watermark after a restart (Spark's, see `compareWatermarks`): the state is compared
  // after the last batch both ran with the same watermark, and the reference's later batches the
  // chaos run did not make must be no-data batches (the eviction the lower watermark did not ask for).
  const refLog = batchLog(ref)
  const chaosLog = batchLog(chaos)
  const wm = compareWatermarks(refLog, chaosLog)
  let watermarkMismatch = wm.kind === "unexplained" || (wm.kind === "lagged" && !lagExplained(trial))
  let expectedState = expected.state
  if (wm.kind === "lagged" && !watermarkMismatch) {
    const chaosLast = Math.max(...chaosLog.keys())
    for (const [b, r] of refLog) if (b > chaosLast && r.offsets !== chaosLog.get(chaosLast)?.offsets) watermarkMismatch = true
    const refAt = await runChild(dir, ref, undefined, undefined, wm.batch)
    const chaosAt = await runChild(dir, chaos, undefined, undefined, wm.batch)
    if (refAt.code !== 0 || chaosAt.code !== 0) {
      return done({ ...base, kills, error: `state read at batch ${wm.batch} failed: ${refAt.stderr.slice(-1000)}${chaosAt.stderr.slice(-1000)}` })
    }
    expectedState = readResult(ref).state
    actual = { ...actual, state: readResult(chaos).state }
  }
  // transformWithState in processing time: how many no-data batches (TTL expiry) follow the last
  // data depends on when runs start; the batches both runs made must be equal.
  const tws = trial.spec.query === "transformWithState"
  const common = Math.min(expected.lastBatch, actual.lastBatch)
  const within = (state: Result["state"]) =>
    tws ? Object.keys(state).filter((k) => Number(k.split("/")[0]) <= common) : Object.keys(state)
  const batchOf = (row: string) => Number(row.split(" ")[0])
  const outputWithin = (rows: ReadonlyArray<string>) =>
    tws && trial.spec.sink === "foreachBatch" ? rows.filter((r) => batchOf(r) <= common) : rows
  const stateKeys = new Set([...within(expectedState), ...within(actual.state)])
  // Fewer batches than the reference, or more when nothing depends on processing time, is a
  // difference (a lagging watermark: checked above).
  let stateMismatch =
    watermarkMismatch ||
    (trial.spec.source === "rate"
      ? actual.committed < trial.spec.batches
      : !tws && wm.kind !== "lagged" && actual.committed !== expected.committed)
  for (const k of stateKeys) {
    if (JSON.stringify(expectedState[k] ?? null) !== JSON.stringify(actual.state[k] ?? null)) stateMismatch = true
  }
  return done({
    ...base,
    kills,
    lost: missing(outputWithin(expected.output), outputWithin(actual.output)),
    duplicated: missing(outputWithin(actual.output), outputWithin(expected.output)),
    stateMismatch,
    laggedAt: wm.kind === "lagged" ? wm.batch : undefined,
    conflicts: actual.conflicts.length,
    error: undefined
  })
}

export interface ChaosSummary {
  readonly trials: number
  readonly lost: number
  readonly duplicated: number
  readonly stateMismatches: number
  readonly conflicts: number
  readonly errors: number
  readonly kills: number
  readonly regrouped: number
  readonly lagged: number
  readonly failures: ReadonlyArray<TrialReport>
  readonly ms: number
}

/** `N trials, L lost, D duplicated, S state mismatches` (and the rest when not zero). */
export const formatSummary = (s: ChaosSummary): string =>
  `${s.trials} trials, ${s.lost} lost, ${s.duplicated} duplicated, ${s.stateMismatches} state mismatches` +
  `${s.conflicts > 0 ? `, ${s.conflicts} conflicting replays` : ""}${s.errors > 0 ? `, ${s.errors} failed runs` : ""}` +
  ` (${s.kills} SIGKILLs; ${s.regrouped} regrouped by a restart as Spark does, not compared; ${s.lagged} with a watermark lagging after a restart as Spark's, state compared before it; ${(s.ms / 1000).toFixed(1)} s)`

/**
 * Runs trials `seed, seed + 1, …` (`trials` of them, or until `untilMs` passes), `parallel` at a
 * time; `onTrial` sees each report.
 */
export const runTrials = async (options: {
  readonly seed: number
  readonly trials: number
  readonly parallel: number
  readonly root: string
  readonly untilMs?: number
  readonly onTrial?: (r: TrialReport) => void
}): Promise<ChaosSummary> => {
  const t0 = performance.now()
  fs.mkdirSync(options.root, { recursive: true })
  const reports: Array<TrialReport> = []
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < options.trials && (options.untilMs === undefined || performance.now() - t0 < options.untilMs)) {
      const seed = options.seed + next++
      const r = await runTrial(seed, options.root)
      reports.push(r)
      options.onTrial?.(r)
    }
  }
  await Promise.all(Array.from({ length: options.parallel }, worker))
  return {
    trials: reports.length,
    lost: reports.reduce((n, r) => n + r.lost, 0),
    duplicated: reports.reduce((n, r) => n + r.duplicated, 0),
    stateMismatches: reports.filter((r) => r.stateMismatch).length,
    conflicts: reports.reduce((n, r) => n + r.conflicts, 0),
    errors: reports.filter((r) => r.error !== undefined).length,
    kills: reports.reduce((n, r) => n + r.kills, 0),
    regrouped: reports.filter((r) => r.regrouped).length,
    lagged: reports.filter((r) => r.laggedAt !== undefined).length,
    failures: reports.filter(failed).sort((a, b) => a.seed - b.seed),
    ms: performance.now() - t0
  }
}
