/**
 * The chaos harness's child program: one streaming query of a trial (`chaos.ts` draws it from a
 * seed), run until its input is done, then — when it ends normally — its output and its state
 * (through the state reader) written to `result.json` for the harness to compare.
 *
 * ```
 * node test/reliability/chaosChild.ts <spec.json> <workDir> [hook:n]
 * ```
 *
 * The harness kills it with `SIGKILL` after a random delay; `hook:n` makes it also kill itself at
 * the `n`-th occurrence (counted from 0 in this run) of one of these moments:
 *
 * - `checkpointWrite`: inside a checkpoint file write — half of the text is in the temporary
 *   file, nothing renamed;
 * - `stateCommit`: inside a state store commit, before its changes become visible (the DuckDB
 *   provider: in the commit's transaction; the file provider: before the delta file);
 * - `snapshotWrite`: inside the file provider's background maintenance, half of a snapshot file
 *   written;
 * - `sinkWrite`: inside the idempotent `foreachBatch` sink, half of a batch's rows written to its
 *   temporary file.
 *
 * Processing time is deterministic: the clock reads `BASE_MS + 20 s × (committed batches)`, so a
 * batch's timestamp (and so TTL expiry and processing-time timeouts) depends on its batch id only
 * — a replayed batch takes its timestamp from the offset log, as in Spark.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Clock, Effect, Layer, Schema } from "effect"
import { registerFileFormats } from "../../connectors/files/mod.ts"
import { registerRate } from "../../connectors/rate/mod.ts"
import type { CheckpointFileSystem } from "../../core/CheckpointFileSystem.ts"
import * as T from "../../core/DataType.ts"
import { ConnectorError } from "../../core/Errors.ts"
import * as F from "../../core/F.ts"
import type { InternalRow } from "../../core/Row.ts"
import { type MicroBatchSource, type ReadLimit, registerSourceFormat } from "../../core/Streaming.ts"
import { Trigger } from "../../core/Trigger.ts"
import * as DuckDBStateStoreProvider from "../../state/DuckDBStateStoreProvider.ts"
import * as FileStateStoreProvider from "../../state/FileStateStoreProvider.ts"
import { NodeCheckpointFileSystem } from "../../state/NodeCheckpointFileSystem.ts"
import type { StateStoreHooks } from "../../state/StateStore.ts"
import { StateStoreProviderService } from "../../state/StateStore.ts"
import { GroupStateTimeout } from "../../structured/contracts/GroupState.ts"
import {
  StatefulProcessor,
  type StatefulProcessorHandle,
  TimeMode,
  TTLConfig,
  type ValueState
} from "../../structured/contracts/StatefulProcessor.ts"
import type { DataFrame } from "../../structured/api/DataFrame.ts"
import { Session, type SessionShape } from "../../structured/api/Session.ts"
import { BASE_MS, type Hook, type TrialSpec } from "./chaosSpec.ts"

if (process.env.CHAOS_TRACE) process.stderr.write(`loaded ${performance.now()}\n`)
registerFileFormats()
registerRate()

const [specPath, workDir, hookArg] = process.argv.slice(2)
if (specPath === undefined || workDir === undefined) {
  process.stderr.write("usage: chaosChild.ts <spec.json> <workDir> [hook:n]\n")
  process.exit(2)
}
const spec = JSON.parse(fs.readFileSync(specPath, "utf8")) as TrialSpec
const dir = path.resolve(workDir)
const checkpoint = path.join(dir, "checkpoint")
const out = path.join(dir, "out")
const [hookName, hookNth] = hookArg === undefined ? [undefined, -1] : [hookArg.split(":")[0] as Hook, Number(hookArg.split(":")[1])]
const hookCounts = new Map<Hook, number>()

const die = (): never => {
  process.kill(process.pid, "SIGKILL")
  return process.abort()
}
/** Whether this occurrence of `hook` is the one to die at. */
const hookHere = (hook: Hook): boolean => {
  if (hook !== hookName) return false
  const n = hookCounts.get(hook) ?? 0
  hookCounts.set(hook, n + 1)
  return n === hookNth
}
/** Writes the first half of `text` to a temporary file beside `p` (as an atomic write does first), then dies. */
const dieMidWrite = (p: string, text: string): never => {
  fs.mkdirSync(path.dirname(p), { recursive: true })
  fs.writeFileSync(path.join(path.dirname(p), `.${path.basename(p)}.chaos.tmp`), text.slice(0, Math.floor(text.length / 2)))
  return die()
}

// ---- the deterministic clock ---------------------------------------------------------------

const committedBatches = (): number => {
  try {
    return fs.readdirSync(path.join(checkpoint, "commits")).filter((n) => /^\d+$/.test(n)).length
  } catch {
    return 0
  }
}
const chaosClock = (real: Clock.Clock): Clock.Clock => ({
  currentTimeMillisUnsafe: () => BASE_MS + 20_000 * committedBatches(),
  currentTimeMillis: Effect.sync(() => BASE_MS + 20_000 * committedBatches()),
  currentTimeNanosUnsafe: () => real.currentTimeNanosUnsafe(),
  currentTimeNanos: real.currentTimeNanos,
  monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
  monotonicTimeNanos: real.monotonicTimeNanos,
  sleep: (d) => real.sleep(d)
})

// ---- the sources ---------------------------------------------------------------------------

/** The input columns every source gives (`tsec`: event time in seconds). */
const inputSchema = T.struct([
  T.field("id", T.LongType, false),
  T.field("key", T.StringType, true),
  T.field("tsec", T.LongType, true),
  T.field("v", T.IntegerType, true)
])

const readLines = (file: string): ReadonlyArray<string> => {
  const parts = fs.readFileSync(file, "utf8").split("\n")
  parts.pop()
  return parts
}
const connectorError = (message: string, cause?: unknown) =>
  new ConnectorError({ connector: "chaos-lines", domain: "user", retryable: false, message, cause })

/** A replayable memory-like source over a file of JSON lines: offsets are line counts. */
const lineSource = (file: string, maxLines: number): MicroBatchSource => {
  let availableNowEnd: number | undefined
  const available = (): number => availableNowEnd ?? readLines(file).length
  return {
    description: `ChaosLines[${file}]`,
    schema: inputSchema,
    initialOffset: () => Effect.succeed(0),
    defaultReadLimit: () => ({ _tag: "MaxRows", maxRows: maxLines }),
    latestOffset: (start, limit: ReadLimit) =>
      Effect.sync(() => {
        const total = available()
        return limit._tag === "MaxRows" ? Math.min((start as number) + limit.maxRows, total) : total
      }),
    getBatch: (start, end) =>
      Effect.try({
        try: () =>
          readLines(file)
            .slice(start as number, end as number)
            .map((line): InternalRow => {
              const o = JSON.parse(line) as { id: number; key: string; tsec: number; v: number }
              return [o.id, o.key, o.tsec, o.v]
            }),
        catch: (e) => connectorError(`could not read ${file}`, e)
      }),
    commit: () => Effect.void,
    decodeOffset: (json) =>
      typeof json === "number" && Number.isInteger(json) && json >= 0
        ? Effect.succeed(json)
        : Effect.fail(connectorError(`not a line count: ${JSON.stringify(json)}`)),
    prepareForTriggerAvailableNow: () =>
      Effect.sync(() => {
        availableNowEnd = readLines(file).length
      }),
    stop: () => Effect.void
  }
}

registerSourceFormat({
  name: "chaos-lines",
  schema: () => inputSchema,
  create: (ctx) => {
    const file = ctx.options.path
    const max = Number(ctx.options.maxLinesPerBatch)
    if (file === undefined || !(max > 0)) return Effect.fail(connectorError("options path and maxLinesPerBatch are required"))
    return Effect.succeed(lineSource(file, max))
  }
})

/** One input stream of the trial's source; `side` tells the two inputs of a join apart. */
const inputStream = (spark: SessionShape, side: 0 | 1): DataFrame<any> => {
  const input = path.join(path.dirname(path.resolve(specPath)), "input")
  let df: DataFrame<any>
  if (spec.source === "lines") {
    df = spark.readStream
      .format("chaos-lines")
      .option("path", `${input}.jsonl`)
      .option("maxLinesPerBatch", spec.rowsPerBatch)
      .load()
  } else if (spec.source === "files") {
    df = spark.readStream.schema("id LONG, key STRING, tsec LONG, v INT").option("maxFilesPerTrigger", 1).json(input)
  } else {
    // rate-micro-batch: deterministic by batch id; only the first `batches` batches carry rows.
    df = spark.readStream
      .format("rate-micro-batch")
      .option("rowsPerBatch", spec.rowsPerBatch)
      .option("startTimestamp", BASE_MS)
      .option("advanceMillisPerBatch", 10_000)
      .load()
      .filter(F.col("value").lt(spec.batches * spec.rowsPerBatch))
      .select(
        F.col("value").as("id"),
        F.concat(F.lit("k"), F.col("value").multiply(7).mod(spec.keys).cast("string")).as("key"),
        F.col("timestamp").cast("long").plus(F.col("value").multiply(13).mod(15)).minus(3).as("tsec"),
        F.col("value").multiply(11).mod(20).cast("int").as("v")
      )
  }
  const withTs = df.withColumn("ts", F.timestamp_seconds(F.col("tsec")))
  return side === 0 ? withTs : withTs.select(F.col("key").as("rkey"), F.col("ts").as("rts"), F.col("v").as("rv"))
}

// ---- the queries ---------------------------------------------------------------------------

const RunningCount = Schema.Struct({ count: Schema.Int, sum: Schema.Int })
const KeyTotals = Schema.Struct({ key: Schema.String, count: Schema.Int, sum: Schema.Int })
const KeyCount = Schema.Struct({ key: Schema.String, count: Schema.Number, last: Schema.Number })

/** transformWithState with a TTL'd value state: a running count per key that expires a minute after its last update. */
class TtlCounter extends StatefulProcessor<string, any, typeof KeyCount.Type> {
  readonly outputSchema = KeyCount
  private state!: ValueState<number>
  init(handle: StatefulProcessorHandle): void {
    this.state = handle.getValueState("count", Schema.Number, TTLConfig.of("1 minute"))
  }
  handleInputRows(key: string, rows: ReadonlyArray<any>): Iterable<typeof KeyCount.Type> {
    const n = (this.state.get() ?? 0) + rows.length
    this.state.update(n)
    return [{ key, count: n, last: Math.max(...rows.map((r) => Number(r.v))) }]
  }
}

const buildQuery = (spark: SessionShape): { readonly df: DataFrame<any>; readonly mode: "append" | "update" } => {
  const df = inputStream(spark, 0)
  switch (spec.query) {
    case "stateless":
      return {
        mode: "append",
        df: df
          .filter(F.col("v").mod(3).neq(0))
          .select(F.col("id"), F.upper(F.concat(F.col("key"), F.lit("-"), F.col("v").cast("string"))).as("label"), F.col("v").multiply(10).as("v10"))
      }
    case "windowAppend":
    case "windowUpdate":
      return {
        mode: spec.query === "windowAppend" ? "append" : "update",
        df: df
          .withWatermark("ts", "5 seconds")
          .groupBy(F.window(F.col("ts"), "10 seconds"), F.col("key"))
          .agg(F.count(F.lit(1)).as("n"), F.sum("v").as("total"))
      }
    case "session":
      return {
        mode: "append",
        df: df.withWatermark("ts", "5 seconds").groupBy(F.session_window(F.col("ts"), "4 seconds"), F.col("key")).agg(F.count(F.lit(1)).as("n"), F.sum("v").as("total"))
      }
    case "dedup":
      return { mode: "append", df: df.withWatermark("ts", "10 seconds").dropDuplicates(["key", "v"]).select("id", "key", "v") }
    case "join": {
      const left = df.filter(F.col("v").mod(2).eq(0)).withWatermark("ts", "10 seconds")
      const right = inputStream(spark, 1).filter(F.col("rv").mod(2).eq(1)).withWatermark("rts", "10 seconds")
      return {
        mode: "append",
        df: left
          .join(
            right,
            F.col("key")
              .eq(F.col("rkey"))
              .and(F.col("rts").cast("long").between(F.col("ts").cast("long").minus(5), F.col("ts").cast("long").plus(5))),
            "inner"
          )
          .select(F.col("id"), F.col("key"), F.col("v"), F.col("rv"))
      }
    }
    case "flatMapGroupsWithState":
      return {
        mode: "update",
        df: df
          .groupByKey((r: any) => r.key as string, Schema.String)
          .flatMapGroupsWithState(
            { outputMode: "update", timeout: GroupStateTimeout.NoTimeout, stateSchema: RunningCount, outputSchema: KeyTotals },
            (key, rows, state) => {
              const old = state.getOption() ?? { count: 0, sum: 0 }
              const next = { count: old.count + rows.length, sum: old.sum + rows.reduce((s, r: any) => s + Number(r.v), 0) }
              if (next.count > 12) {
                state.remove()
                return [{ key, ...next }]
              }
              state.update(next)
              return [{ key, ...next }]
            }
          ) as unknown as DataFrame<any>
      }
    case "transformWithState":
      return {
        mode: "append",
        df: df
          .groupByKey((r: any) => r.key as string, Schema.String)
          .transformWithState(new TtlCounter(), { timeMode: TimeMode.ProcessingTime, outputMode: "append" }) as unknown as DataFrame<any>
      }
  }
}

// ---- the sink, the checkpoint file system, the provider ------------------------------------

/** Writes batch `batchId` once, as JSON lines under a temporary name renamed into place; a replay must equal it. */
const writeBatch = (batchId: number, rows: ReadonlyArray<string>): void => {
  fs.mkdirSync(out, { recursive: true })
  const final = path.join(out, `${batchId}.json`)
  const text = rows.map((r) => `${r}\n`).join("")
  if (fs.existsSync(final)) {
    if (fs.readFileSync(final, "utf8") !== text) fs.writeFileSync(path.join(out, `conflict-${batchId}.json`), text)
    return
  }
  const tmp = path.join(out, `.${batchId}.json.tmp`)
  if (hookHere("sinkWrite")) {
    fs.writeFileSync(tmp, text.slice(0, Math.floor(text.length / 2)))
    die()
  }
  fs.writeFileSync(tmp, text)
  fs.renameSync(tmp, final)
}

const chaosFileSystem: CheckpointFileSystem = {
  ...NodeCheckpointFileSystem,
  writeAtomic: (p, text, overwrite) =>
    Effect.suspend(() => {
      if (p.endsWith(".snapshot") && hookHere("snapshotWrite")) dieMidWrite(p, text)
      if (hookHere("checkpointWrite")) dieMidWrite(p, text)
      return NodeCheckpointFileSystem.writeAtomic(p, text, overwrite)
    })
}

const hooks: StateStoreHooks = {
  beforeCommitPublish: () =>
    Effect.sync(() => {
      if (hookHere("stateCommit")) die()
    })
}

const providerLayer = Layer.effect(
  StateStoreProviderService,
  spec.provider === "duckdb"
    ? DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 2, hooks })
    : FileStateStoreProvider.make({ fs: chaosFileSystem, minDeltasForSnapshot: 2, maintenanceEveryCommits: 2, hooks })
)

// ---- canonical rows --------------------------------------------------------------------------

const canon = (v: unknown): unknown => {
  if (v instanceof Date) return v.toISOString()
  if (typeof v === "bigint") return v.toString()
  if (Array.isArray(v)) return v.map(canon)
  if (v !== null && typeof v === "object") {
    const o: Record<string, unknown> = {}
    for (const k of Object.keys(v).sort()) o[k] = canon((v as Record<string, unknown>)[k])
    return o
  }
  return v
}
const canonical = (row: unknown): string => JSON.stringify(canon(row))

// ---- the run -------------------------------------------------------------------------------

const program = Effect.gen(function* () {
  const spark = yield* Session
  const { df, mode } = buildQuery(spark)
  const writer = df.writeStream
    .outputMode(mode)
    .option("checkpointLocation", checkpoint)
    .trigger(spec.source === "rate" ? Trigger.ProcessingTime(0) : Trigger.AvailableNow())
  const query =
    spec.sink === "files"
      ? yield* writer.format("json").start(out)
      : yield* writer
          .foreachBatch((batch, batchId) =>
            Effect.gen(function* () {
              const rows = yield* batch.collect()
              writeBatch(batchId, rows.map(canonical).sort())
            })
          )
          .start()
  process.stdout.write("started\n")
  if (process.env.CHAOS_TRACE) process.stderr.write(`started ${performance.now()}\n`)
  if (spec.source === "rate") {
    // The rate source never ends: stop once the last batch with rows is committed.
    const last = path.join(checkpoint, "commits", String(spec.batches - 1))
    while (!fs.existsSync(last)) yield* Effect.sleep(10)
    yield* query.stop()
  } else yield* query.awaitTermination()

  // The result: the output (batches 0 .. batches-1 of a rate query) and the state at that batch.
  // CHAOS_STATE_BATCH: the batch to read the state and foreachBatch output at (the reference's last).
  const lastBatch =
    process.env.CHAOS_STATE_BATCH !== undefined
      ? Math.min(Number(process.env.CHAOS_STATE_BATCH), committedBatches() - 1)
      : spec.source === "rate"
        ? spec.batches - 1
        : committedBatches() - 1
  let output: Array<string>
  if (spec.sink === "files") {
    output = fs.existsSync(path.join(out, "_spark_metadata")) ? (yield* (yield* spark.read.json(out)).collect()).map(canonical) : []
  } else {
    output = []
    for (const n of fs.existsSync(out) ? fs.readdirSync(out) : []) {
      const m = /^(\d+)\.json$/.exec(n)
      if (m !== null && Number(m[1]) <= lastBatch) for (const line of readLines(path.join(out, n))) output.push(`${m[1]} ${line}`)
    }
  }
  const conflicts = fs.existsSync(out) ? fs.readdirSync(out).filter((n) => n.startsWith("conflict-")) : []
  // The state at the last batch; for transformWithState at every batch (see `chaos.ts`).
  const state: Record<string, Array<string>> = {}
  const stateBatches = spec.query === "transformWithState" ? Array.from({ length: lastBatch + 1 }, (_, i) => i) : [lastBatch]
  const stores = spec.query === "stateless" || lastBatch < 0 ? [] : yield* (yield* spark.read.format("state-metadata").load(checkpoint)).collect()
  for (const b of stateBatches) {
    for (const s of stores as ReadonlyArray<any>) {
      const rows = yield* (yield* spark.read
        .format("statestore")
        .option("batchId", b)
        .option("operatorId", Number(s.operatorId))
        .option("storeName", s.stateStoreName)
        .load(checkpoint)).collect()
      state[`${b}/${s.operatorId}/${s.stateStoreName}`] = rows.map(canonical).sort()
    }
  }
  fs.writeFileSync(path.join(dir, "result.json"), JSON.stringify({ lastBatch, committed: committedBatches(), output: output.sort(), state, conflicts }))
  if (process.env.CHAOS_TRACE) process.stderr.write(`result ${performance.now()}\n`)
})

// `layerWithProvider` is the session over a given provider (here one with hooks and frequent maintenance).
const sessionLayer = Session["layerWithProvider"]({ checkpointFileSystem: chaosFileSystem }).pipe(Layer.provide(providerLayer))
Effect.runPromise(
  Clock.clockWith((real) =>
    program.pipe(Effect.provide(sessionLayer), process.env.CHAOS_REAL_CLOCK ? (x) => x : Effect.provideService(Clock.Clock, chaosClock(real)))
  )
).then(
  () => {
    if (process.env.CHAOS_TRACE) process.stderr.write(`done ${performance.now()}\n`)
    process.exit(0)
  },
  (error: unknown) => {
    process.stderr.write(`child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  }
)
