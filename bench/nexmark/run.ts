/**
 * `npm run bench:nexmark`: the Nexmark queries of `bench/nexmark/` (q0 q1 q2 q3 q4 q5 q7 q8 q11
 * q12), each run as a streaming query to the `noop` sink with `Trigger.AvailableNow()` over the
 * same events three ways:
 *
 * - **tributary, generator**: `readStream.format("nexmark")` with `maxEvents` and
 *   `maxOffsetsPerTrigger` (the events made in the query's process, batch by batch);
 * - **tributary, files**: the same events written once as JSON lines (`NEXMARK_FORMAT=parquet`
 *   for Parquet), `readStream.schema(NEXMARK_DDL).format(…).option("maxFilesPerTrigger", 1)`;
 * - **Spark**: the same DataFrame program over the same files on Apache Spark 4.2 (`local[2]`)
 *   through Spark Connect (`Session.layer({ remote })`), the server `scripts/spark-connect.sh
 *   start` runs (`TRIBUTARY_SPARK_REMOTE` to use a running one).
 *
 * Every run is a new query over a new checkpoint, timed from `start()` to the end of
 * `awaitTermination()`; after `BENCH_WARMUP` untimed runs over a small input, the best of
 * `BENCH_RUNS`. A query's events per second is `NEXMARK_EVENTS` over that time. The machine is
 * shared: the ratios (measured in the same run, query by query) move less than the rates, and
 * the CPU columns (tributary's process CPU time, the Spark server's JVM CPU time, from
 * `/proc/<pid>/stat`) say how much of the machine each engine used.
 *
 * Environment: `NEXMARK_EVENTS` (default 1 000 000), `NEXMARK_BATCHES` (micro-batches and input
 * files, default 10), `NEXMARK_WARMUP_EVENTS` (default 50 000), `NEXMARK_RATE` (event-time rate,
 * `firstEventRate`, default 10 000 a second), `NEXMARK_FORMAT` (`json` | `parquet`),
 * `NEXMARK_QUERIES` (e.g. `q0,q5`), `BENCH_ENGINES` (a subset of `generator,files,spark`),
 * `BENCH_RUNS` (default 3), `BENCH_WARMUP` (default 1), `NEXMARK_TIMEOUT_S` (per run, default
 * 900), `NEXMARK_MARKDOWN` (a file to write the results table to, as in docs/performance.md).
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises"
import { availableParallelism, loadavg, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { DEFAULT_GENERATOR_CONFIG, NexmarkGenerator } from "../../connectors/nexmark/mod.ts"
import * as DuckDB from "../../state/DuckDB.ts"
import { Session, Trigger } from "../../mod.ts"
import { type Frame, NEXMARK_DDL, type NexmarkQuery } from "./Nexmark.ts"
import { QUERIES } from "./queries.ts"

const N = Number(process.env.NEXMARK_EVENTS ?? 1_000_000)
const BATCHES = Number(process.env.NEXMARK_BATCHES ?? 10)
const WARMUP_EVENTS = Number(process.env.NEXMARK_WARMUP_EVENTS ?? 50_000)
const RATE = Number(process.env.NEXMARK_RATE ?? 10_000)
const FORMAT = process.env.NEXMARK_FORMAT ?? "json"
const RUNS = Number(process.env.BENCH_RUNS ?? 3)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1)
const TIMEOUT_MS = Number(process.env.NEXMARK_TIMEOUT_S ?? 900) * 1000
const ENGINES = new Set((process.env.BENCH_ENGINES ?? "generator,files,spark").split(",").map((s) => s.trim()))
const SELECTED = process.env.NEXMARK_QUERIES?.split(",").map((s) => s.trim())

if (FORMAT !== "json" && FORMAT !== "parquet") throw new Error(`NEXMARK_FORMAT must be json or parquet, not ${FORMAT}`)
if (!Number.isInteger(N / BATCHES) || !Number.isInteger(WARMUP_EVENTS / BATCHES)) {
  throw new Error(`NEXMARK_EVENTS and NEXMARK_WARMUP_EVENTS must be multiples of NEXMARK_BATCHES (${BATCHES})`)
}
const queries = QUERIES.filter((q) => SELECTED === undefined || SELECTED.includes(q.name))
if (queries.length === 0) throw new Error(`no query matches NEXMARK_QUERIES=${process.env.NEXMARK_QUERIES}`)

// ---- the events as files -------------------------------------------------------------------

const iso = (ms: number): string => new Date(ms).toISOString()
const str = JSON.stringify

/** One event as a JSON line of the Nexmark table (timestamps as ISO-8601 text with `Z`). */
const jsonLine = (r: ReadonlyArray<unknown>): string => {
  const p = r[1] as ReadonlyArray<unknown> | null
  const a = r[2] as ReadonlyArray<unknown> | null
  const b = r[3] as ReadonlyArray<unknown> | null
  const person =
    p === null
      ? "null"
      : `{"id":${p[0]},"name":${str(p[1])},"emailAddress":${str(p[2])},"creditCard":${str(p[3])},"city":${str(p[4])},"state":${str(p[5])},"dateTime":"${iso(p[6] as number)}","extra":${str(p[7])}}`
  const auction =
    a === null
      ? "null"
      : `{"id":${a[0]},"itemName":${str(a[1])},"description":${str(a[2])},"initialBid":${a[3]},"reserve":${a[4]},"dateTime":"${iso(a[5] as number)}","expires":"${iso(a[6] as number)}","seller":${a[7]},"category":${a[8]},"extra":${str(a[9])}}`
  const bid =
    b === null
      ? "null"
      : `{"auction":${b[0]},"bidder":${b[1]},"price":${b[2]},"channel":${str(b[3])},"url":${str(b[4])},"dateTime":"${iso(b[5] as number)}","extra":${str(b[6])}}`
  return `{"event_type":${r[0]},"person":${person},"auction":${auction},"bid":${bid},"dateTime":"${iso(r[4] as number)}"}`
}

/** DuckDB's types for the Nexmark table, to write Parquet Spark reads as `NEXMARK_DDL`. */
const DUCKDB_COLUMNS =
  "{'event_type': 'INTEGER', " +
  "'person': 'STRUCT(id BIGINT, name VARCHAR, emailAddress VARCHAR, creditCard VARCHAR, city VARCHAR, state VARCHAR, dateTime TIMESTAMPTZ, extra VARCHAR)', " +
  "'auction': 'STRUCT(id BIGINT, itemName VARCHAR, description VARCHAR, initialBid BIGINT, reserve BIGINT, dateTime TIMESTAMPTZ, expires TIMESTAMPTZ, seller BIGINT, category BIGINT, extra VARCHAR)', " +
  "'bid': 'STRUCT(auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime TIMESTAMPTZ, extra VARCHAR)', " +
  "'dateTime': 'TIMESTAMPTZ'}"

/**
 * Events `[0, n)` as `BATCHES` files in `dir`, in order; the files' modification times are a
 * second apart, so both file sources (oldest first) read them in order with
 * `maxFilesPerTrigger` 1.
 */
const writeEvents = async (dir: string, n: number): Promise<void> => {
  await mkdir(dir, { recursive: true })
  const gen = new NexmarkGenerator({ ...DEFAULT_GENERATOR_CONFIG, firstEventRate: RATE })
  const per = n / BATCHES
  const base = Math.floor(Date.now() / 1000) - 3600
  for (let f = 0; f < BATCHES; f++) {
    const rows = gen.rows(f * per, (f + 1) * per)
    const lines = new Array<string>(rows.length)
    for (let i = 0; i < rows.length; i++) lines[i] = jsonLine(rows[i])
    const name = `part-${String(f).padStart(5, "0")}`
    const jsonFile = join(dir, `${name}.json`)
    if (FORMAT === "json") {
      await writeFile(jsonFile, `${lines.join("\n")}\n`)
      await utimes(jsonFile, base + f, base + f)
      continue
    }
    const staging = join(dir, "..", `.${name}.json`)
    await writeFile(staging, `${lines.join("\n")}\n`)
    const parquetFile = join(dir, `${name}.parquet`)
    await Effect.runPromise(
      DuckDB.withMemory((c) =>
        Effect.gen(function* () {
          yield* c.execute("SET TimeZone = 'UTC'")
          // file names are parameters; the column list is a constant of this file
          yield* c.execute(
            `COPY (SELECT * FROM read_json($1, columns = ${DUCKDB_COLUMNS}, format = 'newline_delimited')) TO '${parquetFile.replace(/'/g, "''")}' (FORMAT parquet)`,
            [staging]
          )
        })
      )
    )
    await rm(staging)
    await utimes(parquetFile, base + f, base + f)
  }
}

// ---- one run ---------------------------------------------------------------------------------

interface Run {
  readonly ms: number
  /** CPU time of tributary's process, or of the Spark server's JVM, during the run (ms). */
  readonly cpuMs: number | undefined
  readonly batches: number
  readonly inputRows: number
  /** Progress `durationMs` summed over the batches, by phase. */
  readonly phases: Readonly<Record<string, number>>
}

type Source = { readonly _tag: "generator"; readonly events: number } | { readonly _tag: "files"; readonly dir: string }

/** CPU milliseconds (user + system) of process `pid` so far, from `/proc`; `undefined` elsewhere. */
const procCpuMs = (pid: number): number | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    // utime and stime, fields 14 and 15 of proc(5), in clock ticks (100 a second on Linux)
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return undefined
  }
}

const selfCpuMs = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

class RunFailed extends Error {}

/** One run of `query` on the session in context, from a new checkpoint. */
const runOnce = (query: NexmarkQuery, source: Source, checkpoint: string, cpu: () => number | undefined) =>
  Effect.gen(function* () {
    const spark = yield* Session
    const events =
      source._tag === "generator"
        ? spark.readStream
            .format("nexmark")
            .option("maxEvents", source.events)
            .option("firstEventRate", RATE)
            .option("maxOffsetsPerTrigger", source.events / BATCHES)
            .load()
        : spark.readStream.schema(NEXMARK_DDL).format(FORMAT).option("maxFilesPerTrigger", 1).load(source.dir)
    const cpu0 = cpu()
    const t0 = performance.now()
    const handle = yield* query
      .build(events as Frame)
      .writeStream.format("noop")
      .outputMode(query.outputMode)
      .trigger(Trigger.AvailableNow())
      .option("checkpointLocation", checkpoint)
      .start()
    const done = yield* handle.awaitTermination(TIMEOUT_MS)
    const ms = performance.now() - t0
    const cpu1 = cpu()
    if (!done) {
      yield* handle.stop()
      return yield* Effect.die(new RunFailed(`timed out after ${TIMEOUT_MS / 1000} s`))
    }
    const progress = yield* handle.recentProgress()
    const phases: Record<string, number> = {}
    for (const p of progress) for (const [k, v] of Object.entries(p.durationMs)) phases[k] = (phases[k] ?? 0) + v
    return {
      phases,
      ms,
      cpuMs: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0,
      batches: progress.length,
      inputRows: progress.reduce((s, p) => s + p.numInputRows, 0)
    } satisfies Run
  })

interface Result {
  readonly best?: Run
  readonly all: ReadonlyArray<number>
  readonly error?: string
}

const message = (e: unknown): string => {
  const m =
    e instanceof Error
      ? e.message
      : typeof e === "object" && e !== null && "message" in e
        ? String(e.message)
        : String(e)
  return m.split("\n")[0].slice(0, 160)
}

/** `WARMUP` runs over the warm-up source, then the best of `RUNS`; a failure is reported, not thrown. */
const measure = (
  query: NexmarkQuery,
  name: string,
  warmup: Source,
  source: Source,
  root: string,
  cpu: () => number | undefined
) =>
  Effect.gen(function* () {
    for (let i = 0; i < WARMUP; i++) yield* runOnce(query, warmup, join(root, `${query.name}-${name}-warmup${i}`), cpu)
    let best: Run | undefined
    const all: Array<number> = []
    for (let i = 0; i < RUNS; i++) {
      const r = yield* runOnce(query, source, join(root, `${query.name}-${name}-run${i}`), cpu)
      // Spark counts the rows its file scan gives after the filters it pushes into it (JSON and
      // Parquet filter pushdown), once per scan of a self-join: its count is not the events'.
      if (name !== "spark" && r.inputRows < N)
        return yield* Effect.die(new RunFailed(`read ${r.inputRows} events, not ${N}`))
      all.push(r.ms)
      if (best === undefined || r.ms < best.ms) best = r
    }
    return { best, all } satisfies Result
  }).pipe(Effect.catchCause((cause) => Effect.succeed({ all: [], error: message(causeError(cause)) } satisfies Result)))

const causeError = (cause: { readonly reasons: ReadonlyArray<unknown> }): unknown => {
  const r = cause.reasons[0] as { readonly error?: unknown; readonly defect?: unknown } | undefined
  return r?.error ?? r?.defect ?? cause
}

// ---- Spark -----------------------------------------------------------------------------------

const here = dirname(fileURLToPath(import.meta.url))
const script = join(here, "..", "..", "scripts", "spark-connect.sh")

/** The Spark server: `TRIBUTARY_SPARK_REMOTE`, or one of our own (stopped by `stop`), and its JVM's pid. */
const sparkServer = (): { readonly address: string; readonly pid: number | undefined; readonly stop: () => void } => {
  const given = process.env.TRIBUTARY_SPARK_REMOTE
  if (given !== undefined && given !== "") return { address: given, pid: undefined, stop: () => {} }
  console.log("starting a Spark Connect server (scripts/spark-connect.sh start nexmark) …")
  const out = execFileSync("bash", [script, "start", "nexmark"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"]
  })
  const lines = out.trim().split("\n")
  const stateRoot = process.env.TRIBUTARY_SPARK_STATE ?? join(process.env.TMPDIR ?? "/tmp", "tributary-spark")
  let pid: number | undefined
  try {
    pid = Number(readFileSync(join(stateRoot, "nexmark", "pid"), "utf8").trim())
  } catch {
    pid = undefined
  }
  return {
    address: lines[lines.length - 1].trim(),
    pid,
    stop: () => execFileSync("bash", [script, "stop", "nexmark"], { stdio: ["ignore", "inherit", "inherit"] })
  }
}

// ---- the report ------------------------------------------------------------------------------

const eps = (ms: number): number => (N / ms) * 1000
const fmtRate = (r: Result | undefined): string => {
  if (r === undefined) return "—"
  if (r.best === undefined) return `fails: ${r.error}`
  const v = eps(r.best.ms)
  return v >= 1e6 ? `${(v / 1e6).toFixed(2)} M/s` : `${(v / 1e3).toFixed(0)} K/s`
}
const fmtRatio = (a: Result | undefined, b: Result | undefined): string =>
  a?.best !== undefined && b?.best !== undefined ? `${(b.best.ms / a.best.ms).toFixed(2)}×` : "—"
const fmtCpu = (r: Result | undefined): string =>
  r?.best?.cpuMs === undefined ? "—" : `${(((N / r.best.cpuMs) * 1000) / 1e3).toFixed(0)} K/CPU-s`

const load = (): string =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")

// ---- main ------------------------------------------------------------------------------------

const root = await mkdtemp(join(tmpdir(), "tributary-bench-nexmark-"))
const inputDir = join(root, "input")
const warmupDir = join(root, "warmup")

console.log(
  `Nexmark: ${N} events (event time ${RATE} a second, Beam's generator), ${BATCHES} micro-batches, Trigger.AvailableNow → noop; ` +
    `best of ${RUNS} after ${WARMUP} warm-up run(s) over ${WARMUP_EVENTS} events; time = start → awaitTermination`
)
console.log(`  load average (1, 5, 15 min) at the start: ${load()} on ${availableParallelism()} cores`)
if (ENGINES.has("files") || ENGINES.has("spark")) {
  const t0 = performance.now()
  await writeEvents(inputDir, N)
  await writeEvents(warmupDir, WARMUP_EVENTS)
  console.log(
    `  events written as ${BATCHES} ${FORMAT} files in ${(performance.now() - t0).toFixed(0)} ms to ${inputDir}`
  )
}

/** The generator alone (after the queries, so that a CPU profile of them starts with them). */
const generatorAlone = (): void => {
  const gen = new NexmarkGenerator({ ...DEFAULT_GENERATOR_CONFIG, firstEventRate: RATE })
  const t0 = performance.now()
  const cpu0 = selfCpuMs()
  const per = Math.min(N, 1_000_000) / BATCHES
  for (let b = 0; b < BATCHES; b++) gen.rows(b * per, (b + 1) * per)
  const ms = performance.now() - t0
  const cpuMs = selfCpuMs() - cpu0
  console.log(
    `  the generator alone: ${((per * BATCHES) / ms / 1000).toFixed(2)} M events/s, ${((per * BATCHES) / cpuMs / 1000).toFixed(2)} M events per CPU-second (${per * BATCHES} events in ${ms.toFixed(0)} ms)`
  )
}
const results = new Map<string, { generator?: Result; files?: Result; spark?: Result }>()
let server: ReturnType<typeof sparkServer> | undefined
try {
  if (ENGINES.has("spark")) server = sparkServer()
  for (const query of queries) {
    const row: { generator?: Result; files?: Result; spark?: Result } = {}
    if (ENGINES.has("generator")) {
      row.generator = await Effect.runPromise(
        measure(
          query,
          "generator",
          { _tag: "generator", events: WARMUP_EVENTS },
          { _tag: "generator", events: N },
          root,
          selfCpuMs
        ).pipe(Effect.provide(Session.layer()))
      )
    }
    if (ENGINES.has("files")) {
      row.files = await Effect.runPromise(
        measure(
          query,
          "files",
          { _tag: "files", dir: warmupDir },
          { _tag: "files", dir: inputDir },
          root,
          selfCpuMs
        ).pipe(Effect.provide(Session.layer()))
      )
    }
    if (server !== undefined) {
      const pid = server.pid
      row.spark = await Effect.runPromise(
        measure(query, "spark", { _tag: "files", dir: warmupDir }, { _tag: "files", dir: inputDir }, root, () =>
          pid === undefined ? undefined : procCpuMs(pid)
        ).pipe(Effect.provide(Session.layer({ remote: server.address })))
      )
    }
    results.set(query.name, row)
    const phaseLine = (label: string, r: Result | undefined) => {
      if (r?.best === undefined) return
      const order = [
        "latestOffset",
        "getBatch",
        "queryPlanning",
        "walCommit",
        "addBatch",
        "commitOffsets",
        "triggerExecution"
      ]
      const parts = order
        .filter((k) => r.best!.phases[k] !== undefined)
        .map((k) => `${k} ${r.best!.phases[k].toFixed(0)}`)
      console.log(`       ${label}: ${r.best.batches} batches; by phase (ms): ${parts.join(", ")}`)
    }
    const runs = (r: Result | undefined) =>
      r?.best === undefined ? "" : ` (runs ${r.all.map((x) => x.toFixed(0)).join(", ")} ms)`
    console.log(
      `  ${query.name.padEnd(4)} ${query.title}: generator ${fmtRate(row.generator)} (${fmtCpu(row.generator)})${runs(row.generator)}, ` +
        `files ${fmtRate(row.files)}${runs(row.files)}, Spark ${fmtRate(row.spark)}${runs(row.spark)}`
    )
    phaseLine("generator", row.generator)
    phaseLine("files", row.files)
    phaseLine("Spark", row.spark)
  }
} finally {
  server?.stop()
  await rm(root, { recursive: true, force: true })
}

const header =
  "| query | tributary, generator | tributary, files | Spark 4.2 `local[2]`, files | tributary / Spark (generator) | tributary / Spark (files) | CPU: tributary files / Spark |"
const lines = [header, "| --- | --- | --- | --- | --- | --- | --- |"]
for (const q of queries) {
  const r = results.get(q.name) ?? {}
  const cpuRatio =
    r.files?.best?.cpuMs !== undefined && r.spark?.best?.cpuMs !== undefined
      ? `${(r.spark.best.cpuMs / r.files.best.cpuMs).toFixed(2)}× (${fmtCpu(r.files)} vs ${fmtCpu(r.spark)})`
      : "—"
  lines.push(
    `| ${q.name} ${q.title} | ${fmtRate(r.generator)} | ${fmtRate(r.files)} | ${fmtRate(r.spark)} | ${fmtRatio(r.generator, r.spark)} | ${fmtRatio(r.files, r.spark)} | ${cpuRatio} |`
  )
}
generatorAlone()
console.log("")
console.log(lines.join("\n"))
console.log("")
console.log(`  load average (1, 5, 15 min) at the end: ${load()} on ${availableParallelism()} cores`)
if (process.env.NEXMARK_MARKDOWN !== undefined) await writeFile(process.env.NEXMARK_MARKDOWN, `${lines.join("\n")}\n`)
