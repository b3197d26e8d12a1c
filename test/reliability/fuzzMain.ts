/**
 * Runs the corrupted-checkpoint fuzzer (`checkpointFuzz.ts`) for a big count:
 *
 * ```
 * npm run fuzz:checkpoint -- --cases 5000 --seed 1 [--restart-share 0.05] [--verbose]
 * ```
 *
 * Prints one line per finding and a summary; exits 1 when there is a finding.
 */
import { Effect } from "effect"
import { fuzz } from "./checkpointFuzz.ts"

const args = process.argv.slice(2)
const arg = (name: string, dflt: string): string => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : dflt
}
const cases = Number(arg("cases", "500"))
const seed = Number(arg("seed", "1"))
const restartShare = Number(arg("restart-share", "0.05"))
const verbose = args.includes("--verbose")

const report = await Effect.runPromise(
  fuzz({
    cases,
    seed,
    restartShare,
    onCase: (n, scenario, target, mutation, result) => {
      if (verbose || result.verdict === "FINDING") {
        process.stdout.write(`${n} ${scenario} ${target.rel} ${mutation}: ${result.verdict} (${result.oracle}) ${result.detail}\n`)
      } else if (n % 250 === 0) process.stderr.write(`${n} cases\n`)
    }
  })
)
process.stdout.write(`${JSON.stringify({ ...report, findings: report.findings.length }, null, 2)}\n`)
for (const f of report.findings) process.stdout.write(`FINDING ${f}\n`)
process.stdout.write(`${report.cases - report.findings.length} passed, ${report.findings.length} failed\n`)
process.exit(report.findings.length > 0 ? 1 : 0)
