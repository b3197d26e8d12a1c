/**
 * `npm run bench`: tributary against baselines measured in the same process, reported as
 * ratios (these machines are shared and noisy; absolute numbers move, ratios much less).
 *
 * Workload 1 — batch group-by: N rows of { user, amount } over 10 000 users; count and sum of
 * amount per user, three ways: tributary's batch engine, a hand-written JavaScript loop
 * (one Map), and DuckDB SQL over the same rows already inside DuckDB.
 *
 * Workload 2 — tiny micro-batches: one row per batch, MemoryStream → noop, batches per second,
 * against the floor of the protocol itself (the same two atomic checkpoint writes per batch,
 * offsets and commit, done by hand).
 *
 * Workload 3 — a stateless streaming pipeline (filter, withColumn, select) over 1 M rows in
 * 10 micro-batches, MemoryStream → noop, against a hand-written loop doing the same work.
 *
 * Workload 4 — windowed streaming aggregation: 1 M events of 10 000 users in 10 micro-batches,
 * 10-second tumbling windows, count and sum, update mode, state in DuckDB (and again in the file
 * provider), against a hand-written nested-Map loop (user → window → count, sum) over the same
 * batches. Best of `RUNS` for both, each engine run a new query over a new checkpoint; the engine's
 * time is also split by phase (progress `durationMs` and the state operator's metrics), with the
 * garbage-collection pauses that fell anywhere in it.
 *
 * Workload 5 — the stream-stream windowed join (`bench/join.ts`); workload 6 — state store commit
 * time per batch at 100 K, 1 M and 10 M keys for each provider (`bench/state.ts`).
 *
 * Workload 7 — the CSV and JSON file sources into the noop sink, 1 M rows of three columns in 10
 * files, against a hand-written parse of the same bytes (`bench/files.ts`).
 *
 * `node bench/run.ts windowed-duckdb` (any prefix of `groupby`, `tiny`, `stateless`,
 * `windowed-duckdb`, `windowed-memory`, `join`, `statestore`, `csv-source`, `json-source`) runs
 * only those workloads.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../mod.ts"
import type { StreamingQueryProgress } from "../structured/contracts/StreamingQueryProgress.ts"
import { NodeCheckpointFileSystem } from "../state/NodeCheckpointFileSystem.ts"
import * as DuckDB from "../state/DuckDB.ts"
import * as T from "../core/DataType.ts"

const N = Number(process.env.BENCH_ROWS ?? 1_000_000)
const USERS = 10_000
const RUNS = Number(process.env.BENCH_RUNS ?? 3)

interface Sale {
  readonly user: string
  readonly amount: number
}

const makeRows = (): Array<Sale> => {
  const rows = new Array<Sale>(N)
  let seed = 42
  for (let i = 0; i < N; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff
    rows[i] = { user: `u${(seed >>> 4) % USERS}`, amount: seed % 100 }
  }
  return rows
}

/** Best of `RUNS` wall-clock timings, in ms. */
const best = async (f: () => Promise<unknown> | unknown): Promise<number> => {
  let min = Number.POSITIVE_INFINITY
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now()
    await f()
    min = Math.min(min, performance.now() - t0)
  }
  return min
}

const handWritten = (rows: ReadonlyArray<Sale>): number => {
  const groups = new Map<string, { count: number; sum: number }>()
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]
    const g = groups.get(r.user)
    if (g === undefined) groups.set(r.user, { count: 1, sum: r.amount })
    else {
      g.count++
      g.sum += r.amount
    }
  }
  return groups.size
}

const rate = (ms: number): string => `${((N / ms) * 1000 / 1e6).toFixed(2)} M rows/s`

const batchGroupBy = Effect.gen(function* () {
  const spark = yield* Session
  const rows = makeRows()
  const df = spark.createDataFrame(rows, Schema.Struct({ user: Schema.String, amount: Schema.Int }))
  const query = df.groupBy("user").agg(F.count("*").as("n"), F.sum("amount").as("total"))

  const tributaryMs = yield* Effect.promise(() => best(() => Effect.runPromise(query.count())))
  const loopMs = yield* Effect.promise(() => best(() => handWritten(rows)))
  const duckMs = yield* DuckDB.withMemory((c) =>
    Effect.gen(function* () {
      const schema = T.struct([T.field("user", T.StringType), T.field("amount", T.IntegerType)])
      yield* DuckDB.createTable(c, "sales", schema, rows.map((r) => [r.user, r.amount]))
      return yield* Effect.promise(() =>
        best(() => Effect.runPromise(c.query('SELECT "user", count(*), sum(amount) FROM sales GROUP BY "user"')))
      )
    })
  )
  const groups = yield* query.count()
  console.log(`batch group-by: ${N} rows, ${groups} groups (best of ${RUNS})`)
  console.log(`  tributary         ${tributaryMs.toFixed(1)} ms  ${rate(tributaryMs)}`)
  console.log(`  hand-written loop ${loopMs.toFixed(1)} ms  ${rate(loopMs)}`)
  console.log(`  DuckDB SQL        ${duckMs.toFixed(1)} ms  ${rate(duckMs)}`)
  console.log(`  ratio tributary / hand-written loop (throughput): ${(loopMs / tributaryMs).toFixed(3)}`)
  console.log(`  ratio tributary / DuckDB SQL (throughput):        ${(duckMs / tributaryMs).toFixed(3)}`)
})

const TINY_BATCHES = Number(process.env.BENCH_TINY_BATCHES ?? 200)

const tinyBatches = Effect.gen(function* () {
  const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-bench-")))
  const input = yield* MemoryStream.make(Schema.Struct({ n: Schema.Int }))
  const query = yield* input.toDF().writeStream.format("noop").option("checkpointLocation", join(dir, "q")).start()
  const t0 = performance.now()
  for (let i = 0; i < TINY_BATCHES; i++) {
    yield* input.addData([{ n: i }])
    yield* query.processAllAvailable()
  }
  const engineMs = performance.now() - t0
  yield* query.stop()
  const fs = NodeCheckpointFileSystem
  const t1 = performance.now()
  for (let i = 0; i < TINY_BATCHES; i++) {
    yield* fs.writeAtomic(join(dir, "floor", "offsets", String(i)), `v1\n{"batchWatermarkMs":0}\n${i}`, false)
    yield* fs.writeAtomic(join(dir, "floor", "commits", String(i)), `v1\n{"nextBatchWatermarkMs":0}`, false)
  }
  const floorMs = performance.now() - t1
  yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
  const perSec = (ms: number) => (TINY_BATCHES * 1000) / ms
  console.log(`tiny micro-batches: ${TINY_BATCHES} batches of 1 row, MemoryStream → noop`)
  console.log(`  tributary                 ${perSec(engineMs).toFixed(0)} batches/s`)
  console.log(`  protocol floor (2 writes) ${perSec(floorMs).toFixed(0)} batches/s`)
  console.log(`  ratio tributary / floor: ${(floorMs / engineMs).toFixed(3)}`)
})

const STREAM_ROWS = Number(process.env.BENCH_STREAM_ROWS ?? 1_000_000)
const STREAM_BATCHES = 10

interface Event {
  readonly user: string
  readonly amount: number
}

const handStateless = (batches: ReadonlyArray<ReadonlyArray<Event>>): number => {
  let out = 0
  for (const batch of batches) {
    const rows: Array<{ user: string; doubled: number }> = []
    for (let i = 0; i < batch.length; i++) {
      const r = batch[i]
      if (r.amount > 10) rows.push({ user: r.user, doubled: r.amount * 2 })
    }
    out += rows.length
  }
  return out
}

const stateless = Effect.gen(function* () {
  const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-bench-")))
  const per = STREAM_ROWS / STREAM_BATCHES
  const batches: Array<Array<Event>> = []
  let seed = 7
  for (let b = 0; b < STREAM_BATCHES; b++) {
    const rows = new Array<Event>(per)
    for (let i = 0; i < per; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff
      rows[i] = { user: `u${seed % 1000}`, amount: seed % 100 }
    }
    batches.push(rows)
  }
  const input = yield* MemoryStream.make(Schema.Struct({ user: Schema.String, amount: Schema.Int }))
  const df = input
    .toDF()
    .where(F.col("amount").gt(10))
    .withColumn("doubled", F.col("amount").multiply(2))
    .select("user", "doubled")
  const query = yield* df.writeStream.format("noop").option("checkpointLocation", join(dir, "q")).start()
  const t0 = performance.now()
  for (const b of batches) {
    yield* input.addData(b)
    yield* query.processAllAvailable()
  }
  const engineMs = performance.now() - t0
  yield* query.stop()
  const handMs = yield* Effect.promise(() => best(() => handStateless(batches)))
  yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
  const rate = (ms: number) => `${((STREAM_ROWS / ms) * 1000 / 1e6).toFixed(2)} M rows/s`
  console.log(`stateless streaming pipeline: ${STREAM_ROWS} rows in ${STREAM_BATCHES} micro-batches (filter, withColumn, select → noop)`)
  console.log(`  tributary         ${engineMs.toFixed(1)} ms  ${rate(engineMs)}`)
  console.log(`  hand-written loop ${handMs.toFixed(1)} ms  ${rate(handMs)}`)
  console.log(`  ratio tributary / hand-written loop (throughput): ${(handMs / engineMs).toFixed(3)}`)
})

const WINDOW_EVENTS = Number(process.env.BENCH_WINDOW_EVENTS ?? 1_000_000)

interface Click {
  readonly user: string
  readonly amount: number
  readonly ts: Date
}

const clickBatches = (): Array<Array<Click>> => {
  const per = WINDOW_EVENTS / STREAM_BATCHES
  const out: Array<Array<Click>> = []
  let seed = 11
  for (let b = 0; b < STREAM_BATCHES; b++) {
    const rows = new Array<Click>(per)
    for (let i = 0; i < per; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff
      // Event times advance with the batches (about one minute of events per batch).
      rows[i] = { user: `u${(seed >>> 4) % USERS}`, amount: seed % 100, ts: new Date(b * 60_000 + (i % 60_000)) }
    }
    out.push(rows)
  }
  return out
}

const handWindowed = (batches: ReadonlyArray<ReadonlyArray<Click>>): number => {
  const state = new Map<string, Map<number, { count: number; sum: number }>>()
  let updated = 0
  for (const batch of batches) {
    for (let i = 0; i < batch.length; i++) {
      const r = batch[i]
      const t = r.ts.getTime()
      const start = t - (t % 10_000)
      let perUser = state.get(r.user)
      if (perUser === undefined) {
        perUser = new Map()
        state.set(r.user, perUser)
      }
      const w = perUser.get(start)
      if (w === undefined) perUser.set(start, { count: 1, sum: r.amount })
      else {
        w.count++
        w.sum += r.amount
      }
    }
    updated += state.size
  }
  return updated
}

/**
 * The hand-written loop that also persists each batch's changed groups as a state store commit
 * must: one DuckDB transaction per batch appending (version, key, value) text rows, or one delta
 * file per batch. No engine code: the floor of the issue's own design (a commit writes the
 * batch's changes), measured to show how much of the engine's time the commits alone take.
 */
const handWindowedPersisted = async (
  batches: ReadonlyArray<ReadonlyArray<Click>>,
  provider: "duckdb" | "memory",
  dir: string
): Promise<number> => {
  const state = new Map<string, Map<number, { count: number; sum: number }>>()
  const { DuckDBInstance } = await import("@duckdb/node-api")
  const { writeFile, mkdir } = await import("node:fs/promises")
  await mkdir(dir, { recursive: true })
  const instance = provider === "duckdb" ? await DuckDBInstance.create(join(dir, "state.duckdb")) : undefined
  const conn = instance === undefined ? undefined : await instance.connect()
  await conn?.run("CREATE TABLE log (version BIGINT, key VARCHAR, value VARCHAR)")
  let written = 0
  for (let b = 0; b < batches.length; b++) {
    const batch = batches[b]
    const changed = new Set<{ count: number; sum: number }>()
    const keys: Array<string> = []
    const values: Array<{ count: number; sum: number }> = []
    for (let i = 0; i < batch.length; i++) {
      const r = batch[i]
      const t = r.ts.getTime()
      const start = t - (t % 10_000)
      let perUser = state.get(r.user)
      if (perUser === undefined) {
        perUser = new Map()
        state.set(r.user, perUser)
      }
      let w = perUser.get(start)
      if (w === undefined) {
        w = { count: 0, sum: 0 }
        perUser.set(start, w)
      }
      w.count++
      w.sum += r.amount
      if (!changed.has(w)) {
        changed.add(w)
        keys.push(`${JSON.stringify(r.user)}\u0001${start}`)
        values.push(w)
      }
    }
    const text = (i: number) => `[[${keys[i]}],${values[i].count},[${values[i].sum},1,null]]`
    if (conn !== undefined) {
      await conn.run("BEGIN TRANSACTION")
      const appender = await conn.createAppender("log")
      const version = BigInt(b)
      for (let i = 0; i < keys.length; i++) {
        appender.appendBigInt(version)
        appender.appendVarchar(keys[i])
        appender.appendVarchar(text(i))
        appender.endRow()
      }
      appender.flushSync()
      appender.closeSync()
      await conn.run("COMMIT")
    } else {
      const lines = new Array<string>(keys.length)
      for (let i = 0; i < keys.length; i++) lines[i] = `+${keys[i]}\t${text(i)}`
      await writeFile(join(dir, `${b + 1}.delta`), `${lines.join("\n")}\n`)
    }
    written += keys.length
  }
  conn?.closeSync()
  instance?.closeSync()
  return written
}

interface WindowedRun {
  readonly engineMs: number
  readonly addDataMs: number
  /** Garbage-collection pauses of the main thread during the run (they land in every phase). */
  readonly gcMs: number
  /** CPU time of the main thread during the run (less sensitive than wall time to a busy machine). */
  readonly cpuMs: number
  readonly progress: ReadonlyArray<StreamingQueryProgress>
}

/** CPU milliseconds of the calling thread so far (`process.threadCpuUsage`, Node 23.9+; 0 elsewhere). */
const threadCpuMs = (): number => {
  const usage = (process as { threadCpuUsage?: () => { user: number; system: number } }).threadCpuUsage?.()
  return usage === undefined ? 0 : (usage.user + usage.system) / 1000
}

/**
 * Milliseconds of GC pauses between `start()` and `stop()`: Node's `gc` performance entries (0
 * where the runtime has none).
 */
const gcPauses = () => {
  let ms = 0
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) ms += e.duration
  })
  return {
    start: () => {
      if (PerformanceObserver.supportedEntryTypes.includes("gc")) observer.observe({ entryTypes: ["gc"] })
    },
    stop: async (): Promise<number> => {
      // Entries are delivered asynchronously: let the last ones arrive.
      await new Promise((resolve) => setTimeout(resolve, 0))
      observer.disconnect()
      return ms
    }
  }
}

/** One run of the windowed query over `batches`, from a new checkpoint. */
const windowedRun = (batches: ReadonlyArray<ReadonlyArray<Click>>, dir: string) =>
  Effect.gen(function* () {
    const input = yield* MemoryStream.make(Schema.Struct({ user: Schema.String, amount: Schema.Int, ts: Schema.Date }))
    const df = input
      .toDF()
      .groupBy(F.window("ts", "10 seconds"), "user")
      .agg(F.count("*").as("n"), F.sum("amount").as("total"))
    const query = yield* df.writeStream
      .format("noop")
      .outputMode("update")
      .option("checkpointLocation", join(dir, "q"))
      .start()
    const gc = gcPauses()
    gc.start()
    const cpu0 = threadCpuMs()
    const t0 = performance.now()
    let addDataMs = 0
    for (const b of batches) {
      const a0 = performance.now()
      yield* input.addData(b)
      addDataMs += performance.now() - a0
      yield* query.processAllAvailable()
    }
    const engineMs = performance.now() - t0
    const cpuMs = threadCpuMs() - cpu0
    const gcMs = yield* Effect.promise(() => gc.stop())
    const progress = yield* query.recentProgress()
    yield* query.stop()
    return { engineMs, addDataMs, gcMs, cpuMs, progress } satisfies WindowedRun
  })

const windowed = (provider: "duckdb" | "memory", root: string) =>
  Effect.gen(function* () {
    const batches = clickBatches()
    // Best of RUNS, each run a new query over a new checkpoint (as the other workloads).
    let run: WindowedRun | undefined
    for (let i = 0; i < RUNS; i++) {
      const r = yield* windowedRun(batches, join(root, `run${i}`))
      if (run === undefined || r.engineMs < run.engineMs) run = r
    }
    const { engineMs, addDataMs, gcMs, cpuMs, progress } = run!
    const handMs = yield* Effect.promise(() => best(() => handWindowed(batches)))
    // The same ratio by main-thread CPU time (the hand loop is synchronous), which a busy machine
    // distorts less than wall time: best of RUNS.
    let handCpuMs = Number.POSITIVE_INFINITY
    for (let i = 0; i < RUNS; i++) {
      const c0 = threadCpuMs()
      handWindowed(batches)
      handCpuMs = Math.min(handCpuMs, threadCpuMs() - c0)
    }
    let floorRun = 0
    const floorMs = yield* Effect.promise(() =>
      best(() => handWindowedPersisted(batches, provider, join(root, `floor${floorRun++}`)))
    )
    const commits = progress.flatMap((p) => p.stateOperators.map((s) => s.commitTimeMs))
    // Where the engine's time went, summed over the batches (progress.durationMs and the state
    // operator's metrics; `updates` is the operator's merge of the batch's groups into the store).
    const total = (f: (p: StreamingQueryProgress) => number) => progress.reduce((acc, p) => acc + f(p), 0)
    const op = (f: (s: StreamingQueryProgress["stateOperators"][number]) => number) =>
      total((p) => p.stateOperators.reduce((acc, s) => acc + f(s), 0))
    const breakdown = [
      `addData ${addDataMs.toFixed(0)}`,
      `walCommit ${total((p) => p.durationMs.walCommit ?? 0).toFixed(0)}`,
      `addBatch ${total((p) => p.durationMs.addBatch ?? 0).toFixed(0)}`,
      `(state updates ${op((s) => s.allUpdatesTimeMs).toFixed(0)}`,
      `state commit ${op((s) => s.commitTimeMs).toFixed(0)})`,
      `commitOffsets ${total((p) => p.durationMs.commitOffsets ?? 0).toFixed(0)}`,
      `triggerExecution ${total((p) => p.durationMs.triggerExecution ?? 0).toFixed(0)}`,
      `(GC pauses in all phases ${gcMs.toFixed(0)})`
    ]
    const stateRows = progress[progress.length - 1]?.stateOperators[0]?.numRowsTotal ?? 0
    const rate = (ms: number) => `${((WINDOW_EVENTS / ms) * 1000 / 1e6).toFixed(2)} M rows/s`
    console.log(
      `windowed aggregation (${provider} state): ${WINDOW_EVENTS} events, ${USERS} users, 10 s windows, update mode, ${STREAM_BATCHES} batches, ${stateRows} state rows at the end (best of ${RUNS})`
    )
    console.log(`  tributary         ${engineMs.toFixed(1)} ms  ${rate(engineMs)}  (main thread CPU ${cpuMs.toFixed(0)} ms)`)
    console.log(`  hand-written loop ${handMs.toFixed(1)} ms  ${rate(handMs)}`)
    console.log(`  ratio tributary / hand-written loop (throughput): ${(handMs / engineMs).toFixed(3)}`)
    if (cpuMs > 0) {
      console.log(
        `  ratio by main-thread CPU time: hand-written loop ${handCpuMs.toFixed(0)} ms / tributary ${cpuMs.toFixed(0)} ms = ${(handCpuMs / cpuMs).toFixed(3)}`
      )
    }
    console.log(
      `  hand-written loop + one ${provider === "duckdb" ? "DuckDB append transaction" : "delta file"} per batch of its changed groups ${floorMs.toFixed(1)} ms  ${rate(floorMs)}`
    )
    console.log(`    ratio of that loop / hand-written loop (throughput): ${(handMs / floorMs).toFixed(3)}`)
    console.log(`    ratio tributary / that loop (throughput): ${(floorMs / engineMs).toFixed(3)}`)
    console.log(`  state commit per batch: ${commits.map((c) => c.toFixed(0)).join(", ")} ms`)
    console.log(`  engine time by phase (ms, all batches): ${breakdown.join(", ")}`)
  }).pipe(Effect.provide(Session.layer({ stateStore: provider })))

// `npm run bench -- windowed` (or `groupby`, `tiny`, `stateless`, `windowed-duckdb`,
// `windowed-memory`, `join`, `statestore`, `csv-source`, `json-source`, several separated by spaces) runs only the workloads whose name starts with one
// of the arguments; no argument runs them all.
const selected = process.argv.slice(2)
const wanted = (name: string): boolean => selected.length === 0 || selected.some((s) => name.startsWith(s))

await Effect.runPromise(
  Effect.gen(function* () {
    if (wanted("groupby")) yield* batchGroupBy
    if (wanted("tiny")) yield* tinyBatches
    if (wanted("stateless")) yield* stateless
  }).pipe(Effect.provide(Session.layer()))
)
for (const provider of ["duckdb", "memory"] as const) {
  if (!wanted(`windowed-${provider}`)) continue
  const dir = await mkdtemp(join(tmpdir(), "tributary-bench-"))
  // The session (and its state store's background maintenance) ends before the folder goes.
  await Effect.runPromise(windowed(provider, dir))
  await rm(dir, { recursive: true, force: true })
}
// Workload 5, the stream-stream windowed join (Nexmark q8 shape): bench/join.ts.
if (wanted("join")) await (await import("./join.ts")).runJoinBench()
// Workload 6, state store commit time per batch at 100 K, 1 M and 10 M keys: bench/state.ts.
if (wanted("statestore")) await (await import("./state.ts")).runStateBench()
// Workload 7, the CSV and JSON file sources into the noop sink: bench/files.ts.
for (const format of ["csv", "json"] as const) {
  if (wanted(`${format}-source`)) await (await import("./files.ts")).runFileSourceBench(format)
}
