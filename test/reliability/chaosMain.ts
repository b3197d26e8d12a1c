/**
 * Runs the chaos harness (`chaos.ts`):
 *
 * ```
 * npm run chaos -- --trials 1000 --seed 1 [--parallel 2] [--minutes 20] [--replay 17] [--verbose]
 * ```
 *
 * Trials use seeds `seed … seed + trials - 1`; `--minutes` stops starting trials after that
 * long; `--replay S` runs the one trial of seed `S` and keeps its folder. Prints each failing
 * trial with its seed, then `N trials, L lost, D duplicated, S state mismatches`; exits 1 on a
 * failure.
 */
import * as os from "node:os"
import * as path from "node:path"
import { describeTrial, failed, formatSummary, runTrial, runTrials, type TrialReport } from "./chaos.ts"

const args = process.argv.slice(2)
const arg = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : undefined
}
const root = arg("dir") ?? path.join(os.tmpdir(), "tributary-chaos")
const verbose = args.includes("--verbose")

const line = (r: TrialReport): string =>
  `seed ${r.seed}: ${describeTrial(r.trial)}: ${r.kills} kills, ${r.lost} lost, ${r.duplicated} duplicated, ` +
  `${r.regrouped ? "regrouped (not compared)" : r.stateMismatch ? "STATE MISMATCH" : "state equal"}${r.laggedAt !== undefined ? ` (watermark lagged after a restart: state at batch ${r.laggedAt})` : ""}${r.conflicts > 0 ? `, ${r.conflicts} conflicts` : ""}` +
  `${r.error !== undefined ? `\n  ${r.error}` : ""} (${Math.round(r.ms)} ms)`

const replay = arg("replay")
if (replay !== undefined) {
  const r = await runTrial(Number(replay), root, true)
  process.stdout.write(`${line(r)}\nfolder: ${path.join(root, `trial-${replay}`)}\n`)
  process.exit(failed(r) ? 1 : 0)
}

const minutes = arg("minutes")
const summary = await runTrials({
  seed: Number(arg("seed") ?? "1"),
  trials: Number(arg("trials") ?? "50"),
  parallel: Number(arg("parallel") ?? "2"),
  root,
  untilMs: minutes === undefined ? undefined : Number(minutes) * 60_000,
  onTrial: (r) => {
    if (failed(r)) process.stdout.write(`FAILED ${line(r)}\n  replay: npm run chaos -- --replay ${r.seed}\n`)
    else if (verbose) process.stdout.write(`${line(r)}\n`)
  }
})
process.stdout.write(`${formatSummary(summary)}\n`)
if (summary.failures.length > 0) process.stdout.write(`failing seeds: ${summary.failures.map((r) => r.seed).join(" ")}\n`)
process.exit(summary.failures.length > 0 ? 1 : 0)
