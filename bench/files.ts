/**
 * `npm run bench -- csv-source` / `json-source`: the CSV and JSON file sources into the `noop`
 * sink, against a hand-written loop over the same file bytes measured in the same run.
 *
 * Input: `BENCH_FILE_ROWS` (default 1 000 000) rows of three columns — a user id with repeated
 * values (`u0` … `u9999`), an int amount and an ISO-8601 timestamp (bench/connect.ts's rows) —
 * written as `BENCH_FILE_COUNT` (default 10) files into a temporary folder. The engine runs
 *
 *   readStream.schema("user STRING, amount INT, ts TIMESTAMP").csv(dir) (or .json(dir))
 *     .writeStream.format("noop").trigger(AvailableNow).start().awaitTermination()
 *
 * timed start to termination, best of `BENCH_RUNS` (default 3), each run a new query over a new
 * checkpoint, after one untimed warm-up run; the summed `getBatch` time (the file source's share:
 * reading, splitting and parsing) is printed too, and the process's CPU time over the run (the
 * rate per CPU second moves less than wall time on a busy machine; it includes the collector's
 * and libuv's threads).
 *
 * The baseline reads the same files and builds the same rows by hand: `readFileSync`, one
 * `TextDecoder`, `split("\n")`, then per line `split(",")` + `Number` + `Date.parse` (CSV) or
 * `JSON.parse` + `Date.parse` (JSON), one `[user, amount, ts]` array per row. It does none of
 * Spark's checks (malformed records, Java number syntax, Spark's timestamp grammar), so it is a
 * floor, not a target.
 *
 * @since 0.1.0
 */
import { readdirSync, readFileSync } from "node:fs"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { Session, Trigger } from "../mod.ts"

const N = Number(process.env.BENCH_FILE_ROWS ?? 1_000_000)
const FILES = Number(process.env.BENCH_FILE_COUNT ?? 10)
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const USERS = 10_000
const SCHEMA = "user STRING, amount INT, ts TIMESTAMP"

type Format = "csv" | "json"

const writeInput = async (dir: string, format: Format, n: number): Promise<void> => {
  const per = Math.ceil(n / FILES)
  let seed = 11
  let written = 0
  for (let f = 0; f < FILES; f++) {
    const count = Math.min(per, n - written)
    const lines = new Array<string>(count)
    for (let i = 0; i < count; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff
      const user = `u${(seed >>> 4) % USERS}`
      const amount = seed % 100
      const ts = new Date(f * 60_000 + (i % 60_000)).toISOString()
      lines[i] = format === "csv" ? `${user},${amount},${ts}` : `{"user":"${user}","amount":${amount},"ts":"${ts}"}`
    }
    written += count
    await writeFile(join(dir, `part-${String(f).padStart(5, "0")}.${format}`), `${lines.join("\n")}\n`)
  }
}

/** The hand-written baseline over the same bytes: the rows, built without any of Spark's checks. */
const handParse = (dir: string, format: Format): number => {
  const decoder = new TextDecoder()
  let rows = 0
  let checksum = 0
  for (const name of readdirSync(dir).sort()) {
    const text = decoder.decode(readFileSync(join(dir, name)))
    const lines = text.split("\n")
    const out: Array<ReadonlyArray<unknown>> = []
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]
      if (line.length === 0) continue
      if (format === "csv") {
        const f = line.split(",")
        out.push([f[0], Number(f[1]), Date.parse(f[2])])
      } else {
        const o = JSON.parse(line) as { user: string; amount: number; ts: string }
        out.push([o.user, o.amount, Date.parse(o.ts)])
      }
    }
    rows += out.length
    checksum += out[out.length - 1][1] as number
  }
  return rows + checksum * 0
}

interface Run {
  readonly ms: number
  readonly getBatchMs: number
  /** The process's CPU time (user + system, all threads) over the run. */
  readonly cpuMs: number
  readonly rows: number
}

const engineRun = (format: Format, input: string, checkpoint: string) =>
  Effect.gen(function* () {
    const spark = yield* Session
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    const reader = spark.readStream.schema(SCHEMA)
    const df = format === "csv" ? reader.csv(input) : reader.json(input)
    const query = yield* df.writeStream
      .format("noop")
      .trigger(Trigger.AvailableNow())
      .option("checkpointLocation", checkpoint)
      .start()
    yield* query.awaitTermination()
    const ms = performance.now() - t0
    const c = process.cpuUsage(c0)
    const progress = yield* query.recentProgress()
    return {
      ms,
      cpuMs: (c.user + c.system) / 1000,
      getBatchMs: progress.reduce((a, p) => a + (p.durationMs.getBatch ?? 0), 0),
      rows: progress.reduce((a, p) => a + p.numInputRows, 0)
    } satisfies Run
  })

const mrows = (rows: number, ms: number): string => `${(((rows / ms) * 1000) / 1e6).toFixed(2)} M rows/s`

/** Runs the file source benchmark of one format. */
export const runFileSourceBench = async (format: Format): Promise<void> => {
  const root = await mkdtemp(join(tmpdir(), "tributary-bench-files-"))
  try {
    const input = join(root, "in")
    const warm = join(root, "warm")
    await mkdir(input)
    await mkdir(warm)
    await writeInput(input, format, N)
    await writeInput(warm, format, Math.min(N, 10_000))
    const best = await Effect.runPromise(
      Effect.gen(function* () {
        yield* engineRun(format, warm, join(root, "cp-warm"))
        let best: Run | undefined
        for (let i = 0; i < RUNS; i++) {
          const r = yield* engineRun(format, input, join(root, `cp-${i}`))
          if (r.rows !== N) throw new Error(`the ${format} source read ${r.rows} rows, expected ${N}`)
          if (best === undefined || r.ms < best.ms) best = r
        }
        return best!
      }).pipe(Effect.provide(Session.layer()))
    )
    let handMs = Number.POSITIVE_INFINITY
    let handCpuMs = Number.POSITIVE_INFINITY
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now()
      const c0 = process.cpuUsage()
      const rows = handParse(input, format)
      handMs = Math.min(handMs, performance.now() - t0)
      const c = process.cpuUsage(c0)
      handCpuMs = Math.min(handCpuMs, (c.user + c.system) / 1000)
      if (rows !== N) throw new Error(`the hand loop read ${rows} rows, expected ${N}`)
    }
    console.log(
      `${format} file source → noop: ${N} rows (${SCHEMA}) in ${FILES} files, Trigger.AvailableNow (best of ${RUNS})`
    )
    console.log(
      `  tributary         ${best.ms.toFixed(1)} ms  ${mrows(N, best.ms)}  (getBatch ${best.getBatchMs.toFixed(0)} ms, CPU ${best.cpuMs.toFixed(0)} ms: ${mrows(N, best.cpuMs)} of CPU)`
    )
    console.log(
      `  hand-written loop ${handMs.toFixed(1)} ms  ${mrows(N, handMs)}  (CPU ${handCpuMs.toFixed(0)} ms: ${mrows(N, handCpuMs)} of CPU)`
    )
    console.log(`  ratio tributary / hand-written loop (throughput): ${(handMs / best.ms).toFixed(3)}`)
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const which = process.argv.slice(2)
  for (const f of ["csv", "json"] as const) if (which.length === 0 || which.includes(f)) await runFileSourceBench(f)
}
