/**
 * Runs the soak (`soak.ts`):
 *
 * ```
 * npm run soak -- --minutes 30 [--rate 20000] [--keys 1000] [--state-store duckdb|memory] [--warmup-minutes 1]
 * ```
 *
 * Prints a table row every minute (RSS, heap, state rows, batch duration), then each measure's
 * first and last third after the warm-up and the verdict; exits 1 when memory, state rows or
 * batch duration grew.
 */
import { formatVerdict, minuteRow, runSoak, TABLE_HEADER, verdict } from "./soak.ts"

const args = process.argv.slice(2)
const arg = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`)
  return i >= 0 ? args[i + 1] : undefined
}
const minutes = Number(arg("minutes") ?? "30")
const rowsPerSecond = Number(arg("rate") ?? "20000")
const keys = Number(arg("keys") ?? "1000")
const stateStore = (arg("state-store") ?? "duckdb") as "duckdb" | "memory"
const warmupMs = Number(arg("warmup-minutes") ?? "1") * 60_000

process.stdout.write(
  `soak: ${minutes} min, rate ${rowsPerSecond} rows/s, ${keys} keys per 5 s window, watermark 10 s, ${stateStore} state store, Node ${process.version}\n${TABLE_HEADER}\n`
)
const samples = await runSoak({
  durationMs: minutes * 60_000,
  rowsPerSecond,
  keys,
  stateStore,
  onMinute: (s, minute) => process.stdout.write(`${minuteRow(s, minute)}\n`)
})
const v = verdict(samples, warmupMs)
process.stdout.write(`${formatVerdict(v)}\n`)
process.exit(v.flat ? 0 : 1)
