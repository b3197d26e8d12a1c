#!/usr/bin/env node
/**
 * The `tributary` command-line tool (effect's cli module): looks inside checkpoints without
 * running anything.
 *
 * ```
 * tributary checkpoint inspect <dir>          query id, batches, offsets, watermarks, commits, state operators
 * tributary checkpoint check <dir> <module>   can the module's query continue from this checkpoint?
 * tributary state read <dir> [--operator N] [--batch N] [--store NAME] [--json]
 * tributary state metadata <dir>             the stateful operators and their stores
 * tributary run <module>                      runs the module's query until it ends or Ctrl-C, with a status line
 *                                             (and a progress bar through the backlog with Trigger.AvailableNow)
 * ```
 *
 * A pipeline module's default export is a function of the session that returns the query's
 * `DataStreamWriter` (or an Effect of one); it may export `sessionOptions` for `Session.layer`:
 *
 * ```ts
 * export const sessionOptions = { stateStore: "duckdb" }
 * export default (spark) => spark.readStream.format("rate").load()
 *   .withWatermark("timestamp", "5 seconds").groupBy(F.window("timestamp", "10 seconds")).count()
 *   .writeStream.format("console").outputMode("append").option("checkpointLocation", "/tmp/cp")
 * ```
 *
 * `state read` opens the checkpoint's state with the provider that wrote it (recorded in the
 * offset log). Errors (a folder that is not a checkpoint, a corrupt file, an unknown operator)
 * print one line naming what is wrong and exit with status 1.
 *
 * @since 0.1.0
 */
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { Console, Data, Deferred, Effect, FileSystem, Layer, Option, Path, Stdio, Terminal } from "effect"
import { Argument, CliError, Command, Flag } from "effect/cli"
import { ChildProcessSpawner } from "effect/process/ChildProcessSpawner"
import { type DataStreamWriter, Session, type SessionOptions, type SessionShape } from "../mod.ts"
import { checkAgainstCheckpoint } from "../structured/execution/CheckpointCheck.ts"
import {
  type CheckpointInspection,
  inspectCheckpoint,
  renderInspection
} from "../structured/execution/CheckpointInspect.ts"
import { NodeCheckpointFileSystem } from "../state/NodeCheckpointFileSystem.ts"
import { DEFAULT_PROVIDER, isProviderName } from "../state/StateStoreProviders.ts"

const VERSION = "0.1.0"

const dir = Argument.String("dir").pipe(Argument.withDescription("the query's checkpoint folder"))

class ModuleError extends Data.TaggedError("ModuleError")<{ readonly message: string }> {}

/** A checkpoint that cannot serve the command, said in one line. */
class CheckpointProblem extends Data.TaggedError("CheckpointProblem")<{ readonly message: string }> {}

const inspect = Command.make("inspect", { dir }, ({ dir }) =>
  Effect.gen(function* () {
    const r = yield* inspectCheckpoint(NodeCheckpointFileSystem, dir)
    yield* Console.log(renderInspection(r))
    if (r.unreadable.length > 0) {
      const [first] = r.unreadable
      return yield* new CheckpointProblem({
        message: `${r.unreadable.length === 1 ? "1 file" : `${r.unreadable.length} files`} of ${r.path} cannot be read (${first.path}${r.unreadable.length > 1 ? ", …" : ""}); everything else is shown above`
      })
    }
  })
).pipe(Command.withDescription("Shows a checkpoint: query id, batches with offsets, watermarks and timestamps, commits, state operators"))

/** What a pipeline module exports. */
interface PipelineModule {
  readonly default: (spark: SessionShape) => DataStreamWriter<any> | Effect.Effect<DataStreamWriter<any>, unknown, Session>
  readonly sessionOptions?: SessionOptions
}

const loadModule = (file: string) =>
  Effect.tryPromise({
    try: () => import(pathToFileURL(resolve(file)).href) as Promise<PipelineModule>,
    catch: (e) => new ModuleError({ message: `cannot load ${file}: ${e instanceof Error ? e.message : String(e)}` })
  }).pipe(
    Effect.flatMap((m) =>
      typeof m.default === "function"
        ? Effect.succeed(m)
        : Effect.fail(new ModuleError({ message: `${file} has no default export: export a function (spark) => df.writeStream…` }))
    )
  )

/** The module's writer, built in the current session. */
const writerOf = (m: PipelineModule) =>
  Effect.gen(function* () {
    const spark = yield* Session
    const made = m.default(spark)
    return Effect.isEffect(made) ? yield* (made as Effect.Effect<DataStreamWriter<any>, unknown, Session>) : made
  })

const moduleArg = Argument.String("module").pipe(Argument.withDescription("a pipeline module (default export: (spark) => writeStream)"))

const check = Command.make("check", { dir, module: moduleArg }, ({ dir, module }) =>
  Effect.gen(function* () {
    const m = yield* loadModule(module)
    const inspection = yield* inspectCheckpoint(NodeCheckpointFileSystem, dir)
    const options: SessionOptions = {
      ...m.sessionOptions,
      // The provider that wrote the checkpoint's state, else the module's (a checkpoint keeps its provider).
      stateStore: isProviderName(inspection.stateProvider)
        ? inspection.stateProvider
        : (m.sessionOptions?.stateStore ?? DEFAULT_PROVIDER)
    }
    const report = yield* Effect.gen(function* () {
      const writer = yield* writerOf(m)
      return yield* checkAgainstCheckpoint(NodeCheckpointFileSystem, dir, writer.df.analyzed())
    }).pipe(Effect.provide(Session.layer(options)))
    for (const line of report.lines) yield* Console.log(line)
    if (!report.compatible) return yield* new ModuleError({ message: `the query in ${module} cannot continue from ${dir}` })
    yield* Console.log(`compatible: the query in ${module} can continue from ${dir}`)
  })
).pipe(Command.withDescription("Says whether a pipeline module's query can continue from a checkpoint (state operators and schemas)"))

const checkpoint = Command.make("checkpoint").pipe(
  Command.withDescription("Looks inside a streaming query's checkpoint"),
  Command.withSubcommands([inspect, check])
)

/**
 * A source offset as one number, where its shape allows: a number (MemoryStream, LongOffset), or
 * an object of numbers (Kafka's `{"topic":{"0":n}}`, the file source's `{"logOffset":n}`)
 * summed; `undefined` for anything else or for time-like fields (a rate source's timestamp is
 * no position in a backlog).
 */
export const offsetPosition = (o: unknown): number | undefined => {
  if (typeof o === "number") return Number.isFinite(o) ? o : undefined
  if (o === null || typeof o !== "object" || Array.isArray(o)) return undefined
  let sum = 0
  for (const [k, v] of Object.entries(o)) {
    if (/time/i.test(k)) return undefined
    const p = offsetPosition(v)
    if (p === undefined) return undefined
    sum += p
  }
  return sum
}

/**
 * How far an AvailableNow run has come through its backlog: for every source, the distance
 * from where the run started to this batch's end over the distance to the end fixed at the
 * start (`latestOffset`); `undefined` when a source's offsets have no numeric position.
 */
export const backlogFraction = (
  first: ReadonlyArray<{ readonly startOffset: unknown }>,
  now: ReadonlyArray<{ readonly endOffset: unknown; readonly latestOffset: unknown }>
): number | undefined => {
  let done = 0
  let total = 0
  for (let i = 0; i < now.length; i++) {
    const start = first[i]?.startOffset === null || first[i] === undefined ? 0 : offsetPosition(first[i].startOffset)
    const end = offsetPosition(now[i].endOffset)
    const latest = offsetPosition(now[i].latestOffset)
    if (start === undefined || end === undefined || latest === undefined) return undefined
    done += Math.max(0, end - start)
    total += Math.max(0, latest - start)
  }
  return total === 0 ? 1 : Math.min(1, done / total)
}

const bar = (fraction: number): string => {
  const width = 24
  const full = Math.round(fraction * width)
  return `[${"#".repeat(full)}${".".repeat(width - full)}] ${Math.floor(fraction * 100)}%`
}

const statusLine = (p: { batchId: number; inputRowsPerSecond: number; processedRowsPerSecond: number; eventTime: Readonly<Record<string, string>>; stateOperators: ReadonlyArray<{ numRowsTotal: number }> }) =>
  `batch ${p.batchId} · input ${Number.isFinite(p.inputRowsPerSecond) ? p.inputRowsPerSecond.toFixed(1) : "–"} rows/s · ` +
  `processed ${Number.isFinite(p.processedRowsPerSecond) ? p.processedRowsPerSecond.toFixed(1) : "–"} rows/s` +
  (p.eventTime.watermark === undefined ? "" : ` · watermark ${p.eventTime.watermark}`) +
  (p.stateOperators.length === 0 ? "" : ` · state rows ${p.stateOperators.reduce((n, o) => n + o.numRowsTotal, 0)}`)

/**
 * The `run` command's status line on stderr. On a terminal (`live`) it is one line redrawn in
 * place; anything the query prints (the console sink, logs) first clears it and then draws it
 * again below, so the two never share a line. Elsewhere (a pipe, a file) each status is a line.
 */
export const makeStatusLine = (write: (text: string) => void, live: boolean) => {
  let last: string | undefined
  let shown = false
  return {
    show(text: string): void {
      if (!live) {
        write(`${text}\n`)
        return
      }
      last = text
      shown = true
      write(`\r${text}\u001b[K`)
    },
    /** Runs `print` (which writes whole lines) with the status line out of its way. */
    around(print: () => void): void {
      if (shown) write("\r\u001b[K")
      print()
      if (shown && last !== undefined) write(`\r${last}\u001b[K`)
    },
    /** Leaves the status line as the last line written. */
    end(): void {
      if (shown) write("\n")
      shown = false
    }
  }
}

/** `base` with every printing method routed around the status line. */
export const aroundStatusLine = (status: ReturnType<typeof makeStatusLine>, base: Console.Console): Console.Console => {
  const route =
    (f: (...args: ReadonlyArray<unknown>) => void) =>
    (...args: ReadonlyArray<unknown>) =>
      status.around(() => f.apply(base, [...args]))
  return Object.assign(Object.create(base) as Console.Console, {
    log: route(base.log),
    info: route(base.info),
    warn: route(base.warn),
    error: route(base.error),
    debug: route(base.debug),
    trace: route(base.trace),
    table: route(base.table as (...args: ReadonlyArray<unknown>) => void),
    dir: route(base.dir as (...args: ReadonlyArray<unknown>) => void)
  })
}

const runCommand = Command.make("run", { module: moduleArg }, ({ module }) =>
  Effect.gen(function* () {
    const m = yield* loadModule(module)
    const status = makeStatusLine((text) => void process.stderr.write(text), process.stderr.isTTY === true)
    yield* Effect.gen(function* () {
      const spark = yield* Session
      const writer = yield* writerOf(m)
      // With Trigger.AvailableNow, a progress bar through the backlog fixed at the start.
      const availableNow = writer.spec.trigger._tag === "AvailableNow"
      let first: ReadonlyArray<{ readonly startOffset: unknown }> | undefined
      yield* spark.streams.addListener({
        onQueryProgress: (e) => {
          first ??= e.progress.sources
          const fraction = availableNow ? backlogFraction(first, e.progress.sources) : undefined
          const prefix = fraction === undefined ? "" : `${bar(fraction)} · `
          status.show(`${prefix}${statusLine(e.progress)}`)
        }
      })
      const query = yield* writer.start()
      yield* Console.log(`started query ${query.name ?? ""} ${query.id} (run ${query.runId}); Ctrl-C stops it`)
      const interrupted = yield* Deferred.make<void>()
      const onSignal = () => Deferred.doneUnsafe(interrupted, Effect.void)
      process.once("SIGINT", onSignal)
      yield* Effect.raceFirst(Effect.asVoid(query.awaitTermination()), Deferred.await(interrupted))
      process.off("SIGINT", onSignal)
      status.end()
      yield* query.stop()
      const error = yield* query.exception()
      if (error !== null) return yield* error
      const last = yield* query.lastProgress()
      yield* Console.log(`stopped after ${last === null ? "no batch" : `batch ${last.batchId}`}`)
    }).pipe(
      Effect.provide(Session.layer(m.sessionOptions ?? {})),
      (program) => Console.consoleWith((base) => Effect.provideService(program, Console.Console, aroundStatusLine(status, base)))
    )
  })
).pipe(Command.withDescription("Runs a pipeline module's query until it ends or Ctrl-C, with a live status line"))

/** A session whose state provider is the one that wrote `dir` (the default one when it names none). */
const withCheckpointSession = <A, E>(dir: string, program: Effect.Effect<A, E, Session>) =>
  Effect.flatMap(inspectCheckpoint(NodeCheckpointFileSystem, dir), (r) =>
    program.pipe(
      Effect.provide(Session.layer({ stateStore: isProviderName(r.stateProvider) ? r.stateProvider : DEFAULT_PROVIDER }))
    )
  )

const listed = (ids: ReadonlyArray<string | number>): string => ids.join(", ")

/**
 * Checks a `state read` request against what the checkpoint holds, so that a wrong operator id,
 * store name or batch id is answered with the valid ones (the state data source's own errors are
 * Spark's, written for programs rather than for someone at a terminal).
 */
export const validStateRead = (
  r: CheckpointInspection,
  operator: number,
  store: string,
  batch: Option.Option<number>
): Effect.Effect<void, CheckpointProblem> => {
  const problem = (message: string) => Effect.fail(new CheckpointProblem({ message }))
  if (r.stores.length === 0) {
    return problem(`${r.path} holds no state: its query has no stateful operator (or has not committed a batch yet)`)
  }
  const operators = [...new Set(r.stores.map((s) => s.operatorId))].sort((a, b) => a - b)
  const mine = r.stores.filter((s) => s.operatorId === operator)
  if (mine.length === 0) {
    const described = operators.map((id) => `${id} (${r.stores.find((s) => s.operatorId === id)?.operatorName})`)
    return problem(`no stateful operator ${operator} in ${r.path}; its stateful operators are ${listed(described)}`)
  }
  const chosen = mine.find((s) => s.storeName === store)
  if (chosen === undefined) {
    return problem(
      `operator ${operator} (${mine[0].operatorName}) has no store '${store}'; its stores are ${listed(mine.map((s) => `'${s.storeName}'`))}`
    )
  }
  if (Option.isSome(batch)) {
    const b = batch.value
    const committed = new Set(r.batches.filter((x) => x.nextBatchWatermarkMs !== undefined).map((x) => x.batchId))
    if (b < chosen.minBatchId || b > chosen.maxBatchId || !committed.has(b)) {
      return problem(
        `batch ${b} has no state to read: operator ${operator} store '${store}' keeps state for the committed batches ${chosen.minBatchId} to ${chosen.maxBatchId}`
      )
    }
  }
  return Effect.void
}

const read = Command.make(
  "read",
  {
    dir,
    operator: Flag.Int("operator").pipe(Flag.withDescription("the operator id (default 0)"), Flag.withDefault(0)),
    batch: Flag.Int("batch").pipe(Flag.withDescription("a committed batch id (default: the last)"), Flag.optional),
    store: Flag.String("store").pipe(Flag.withDescription("the store name (default 'default')"), Flag.withDefault("default")),
    json: Flag.Boolean("json").pipe(Flag.withDescription("one JSON object per row instead of a table"), Flag.withDefault(false))
  },
  ({ dir, operator, batch, store, json }) =>
    withCheckpointSession(
      dir,
      Effect.gen(function* () {
        yield* validStateRead(yield* inspectCheckpoint(NodeCheckpointFileSystem, dir), operator, store, batch)
        const spark = yield* Session
        let reader = spark.read.format("statestore").option("operatorId", operator).option("storeName", store)
        if (Option.isSome(batch)) reader = reader.option("batchId", batch.value)
        const df = yield* reader.load(dir)
        if (!json) return yield* df.show(1_000_000, false)
        for (const row of yield* df.collect()) yield* Console.log(JSON.stringify(row))
      })
    )
).pipe(Command.withDescription("Prints one state store of a stateful operator at a committed batch"))

const metadata = Command.make("metadata", { dir }, ({ dir }) =>
  withCheckpointSession(
    dir,
    Effect.gen(function* () {
      const spark = yield* Session
      yield* (yield* spark.read.format("state-metadata").load(dir)).show(1000, false)
    })
  )
).pipe(Command.withDescription("Lists the stateful operators and their stores"))

const state = Command.make("state").pipe(
  Command.withDescription("Reads the state a streaming query keeps in its checkpoint"),
  Command.withSubcommands([read, metadata])
)

/** The root command. */
export const tributary = Command.make("tributary-streaming").pipe(
  Command.withDescription("Inspect tributary (Spark Structured Streaming) checkpoints and state"),
  Command.withSubcommands([checkpoint, state, runCommand])
)

const unsupported = (what: string) => Effect.die(new Error(`the tributary CLI does not use ${what}`))

/**
 * What effect's cli needs from the platform, from `node:` built-ins only (no platform package):
 * the arguments and output streams; the file system, terminal input and child processes are
 * never used by these commands.
 */
export const environment = (args: ReadonlyArray<string>) =>
  Layer.mergeAll(
    Stdio.layerTest({ args: Effect.succeed(args) }),
    Path.layer,
    FileSystem.layerNoop({}),
    Layer.succeed(Terminal.Terminal)(
      Terminal.make({
        columns: Effect.succeed(process.stdout.columns ?? 100),
        rows: Effect.succeed(process.stdout.rows ?? 40),
        size: unsupported("terminal resizing"),
        readInput: unsupported("terminal input"),
        readLine: unsupported("terminal input"),
        display: (text) => Effect.sync(() => void process.stdout.write(text))
      })
    ),
    Layer.succeed(ChildProcessSpawner)(ChildProcessSpawner.of({ spawn: () => unsupported("child processes") } as never))
  )

/** Runs the CLI on `args` (without the program name). */
export const main = (args: ReadonlyArray<string>) =>
  Command.runWith(tributary, { version: VERSION })(args).pipe(Effect.provide(environment(args)))

/**
 * Runs the CLI on `args` as a process does: a failure prints one `error:` line on stderr (the
 * cli's own usage errors print their usage instead) and sets exit status 1.
 */
export const runMain = (args: ReadonlyArray<string>): Promise<void> =>
  Effect.runPromiseExit(main(args)).then((exit) => {
    if (exit._tag === "Failure") {
      const e = exit.cause.reasons?.[0] as { error?: { message?: string; _tag?: string } } | undefined
      const error = e?.error
      // The cli's own errors (usage, `--help`) have printed the usage and what was wrong already.
      if (error?._tag !== undefined && !CliError.isCliError(error)) console.error(`error: ${error.message ?? error._tag}`)
      process.exitCode = 1
    }
  })

// `node bin/tributary.ts …` in a checkout; the installed command starts from bin/launch.ts.
if (import.meta.main === true || /[/\\]tributary\.[jt]s$/.test(process.argv[1] ?? "")) void runMain(process.argv.slice(2))
