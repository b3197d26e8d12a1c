/**
 * The crash test's child program: one streaming query from a file of JSON lines to a sink that
 * writes one file per batch, run with `Trigger.AvailableNow()` until the input is done (exit 0),
 * or killed by its own `SIGKILL` at a named point of the commit protocol.
 *
 * ```
 * node test/crash/child.ts <input.jsonl> <linesPerBatch> <workDir> [point:batchId[:afterRows]]
 * ```
 *
 * - The source (format `crash-lines`, registered here) reads the input file; its offset is a line
 *   count, each batch reads at most `linesPerBatch` new lines, and `getBatch(start, end)` gives
 *   exactly lines `[start, end)` every time, so a restart replays a logged batch exactly.
 * - The query is stateless: a filter, two derived columns and a projection. Nothing in it depends
 *   on the clock (no `current_timestamp()`), so every run computes the same rows.
 * - The sink (`foreachBatch`) is idempotent per batch id: it writes batch `k` to a temporary file
 *   and renames it to `out/<k>.json`; a batch whose file exists is skipped (after checking that the
 *   replayed rows equal the written ones; a difference is recorded as `out/conflict-<k>.json`).
 *   Every call is logged to `calls.log` first, so the test can check which batches ran again.
 * - The checkpoint file system is `NodeCheckpointFileSystem` wrapped to kill the process right
 *   after `offsets/<k>` or `commits/<k>` is written.
 *
 * Node 24 runs this file directly (type stripping); it imports the library's `.ts` files, not
 * `mod.ts`, to start fast.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect } from "effect"
import type { CheckpointFileSystem } from "../../core/CheckpointFileSystem.ts"
import * as T from "../../core/DataType.ts"
import { ConnectorError } from "../../core/Errors.ts"
import * as F from "../../core/F.ts"
import type { InternalRow } from "../../core/Row.ts"
import { type MicroBatchSource, type ReadLimit, registerSourceFormat } from "../../core/Streaming.ts"
import { Trigger } from "../../core/Trigger.ts"
import { NodeCheckpointFileSystem } from "../../state/NodeCheckpointFileSystem.ts"
import { Session } from "../../structured/api/Session.ts"
import {
  batchFileName,
  conflictFileName,
  type KillPoint,
  type KillSpec,
  layout,
  type OutRow,
  parseKill,
  serializeBatch
} from "./protocol.ts"

const [inputPath, linesPerBatchArg, workDir, killArg] = process.argv.slice(2)
if (inputPath === undefined || linesPerBatchArg === undefined || workDir === undefined) {
  process.stderr.write("usage: child.ts <input.jsonl> <linesPerBatch> <workDir> [point:batchId[:afterRows]]\n")
  process.exit(2)
}
const kill: KillSpec | undefined = killArg === undefined ? undefined : parseKill(killArg)
const files = layout(path.resolve(workDir))

/** Dies at once, as a power cut or `kill -9` would: no finalizers, no flushing of user-space buffers. */
const die = (): never => {
  process.kill(process.pid, "SIGKILL")
  // Not reached: SIGKILL to oneself is delivered before the call returns to JavaScript.
  return process.abort()
}

const killsAt = (point: KillPoint, batchId: number): boolean =>
  kill !== undefined && kill.point === point && kill.batchId === batchId

// ---- the source -------------------------------------------------------------------------

const inputSchema = T.struct([
  T.field("id", T.LongType, false),
  T.field("word", T.StringType, true),
  T.field("n", T.IntegerType, true)
])

/** The complete lines of the file (a line counts once its newline is written). */
const readLines = (file: string): ReadonlyArray<string> => {
  const parts = fs.readFileSync(file, "utf8").split("\n")
  parts.pop()
  return parts
}

const connectorError = (message: string, cause?: unknown) =>
  new ConnectorError({ connector: "crash-lines", domain: "user", retryable: false, message, cause })

const lineSource = (file: string, maxLines: number): MicroBatchSource => {
  let availableNowEnd: number | undefined
  const available = (): number => availableNowEnd ?? readLines(file).length
  return {
    description: `CrashLines[${file}]`,
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
              const o = JSON.parse(line) as { id: number; word: string | null; n: number | null }
              return [o.id, o.word, o.n]
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
  name: "crash-lines",
  schema: () => inputSchema,
  create: (ctx) => {
    const file = ctx.options.path
    const max = Number(ctx.options.maxLinesPerBatch)
    if (file === undefined || !(max > 0))
      return Effect.fail(connectorError("options path and maxLinesPerBatch are required"))
    return Effect.succeed(lineSource(file, max))
  }
})

// ---- the sink ---------------------------------------------------------------------------

/**
 * Writes batch `batchId` once: to a temporary file row by row (the text of `serializeBatch`),
 * then renamed into place, so `out/<k>.json` is either absent or complete.
 */
const writeBatch = (batchId: number, rows: ReadonlyArray<OutRow>): void => {
  fs.mkdirSync(files.out, { recursive: true })
  const final = path.join(files.out, batchFileName(batchId))
  if (fs.existsSync(final)) {
    // Already written by an earlier run: skip, but check the replay gave the same rows.
    const replay = serializeBatch(batchId, rows)
    if (fs.readFileSync(final, "utf8") !== replay)
      fs.writeFileSync(path.join(files.out, conflictFileName(batchId)), replay)
  } else {
    const tmp = path.join(files.out, `.${batchId}.json.tmp`)
    const fd = fs.openSync(tmp, "w")
    fs.writeSync(fd, `{"batchId":${batchId},"rows":[\n`)
    for (let i = 0; i < rows.length; i++) {
      if (killsAt("insideSink", batchId) && kill!.afterRows === i) die()
      fs.writeSync(fd, `${JSON.stringify(rows[i])}${i < rows.length - 1 ? ",\n" : "\n"}`)
    }
    if (killsAt("insideSink", batchId)) die()
    fs.writeSync(fd, "]}\n")
    fs.fsyncSync(fd)
    fs.closeSync(fd)
    fs.renameSync(tmp, final)
  }
  if (killsAt("afterSink", batchId)) die()
}

// ---- the checkpoint file system ---------------------------------------------------------

const crashingFileSystem = (checkpoint: string): CheckpointFileSystem => ({
  ...NodeCheckpointFileSystem,
  writeAtomic: (p, text, overwrite) =>
    Effect.tap(NodeCheckpointFileSystem.writeAtomic(p, text, overwrite), () =>
      Effect.sync(() => {
        const dir = path.dirname(p)
        const batchId = Number(path.basename(p))
        if (dir === path.join(checkpoint, "offsets") && killsAt("afterOffsetWrite", batchId)) die()
        if (dir === path.join(checkpoint, "commits") && killsAt("afterCommit", batchId)) die()
      })
    )
})

// ---- the query --------------------------------------------------------------------------

const program = Effect.gen(function* () {
  const spark = yield* Session
  const query = yield* spark.readStream
    .format("crash-lines")
    .option("path", path.resolve(inputPath))
    .option("maxLinesPerBatch", linesPerBatchArg)
    .load()
    .filter(F.col("n").mod(3).neq(0))
    .withColumn("label", F.upper(F.concat(F.col("word"), F.lit("-"), F.col("n").cast("string"))))
    .withColumn("n10", F.col("n").multiply(10))
    .select("id", "label", "n10")
    .writeStream.option("checkpointLocation", files.checkpoint)
    .trigger(Trigger.AvailableNow())
    .foreachBatch((df, batchId) =>
      Effect.gen(function* () {
        fs.appendFileSync(files.calls, `${batchId}\n`)
        const rows = yield* df.collect()
        writeBatch(
          batchId,
          rows.map((r) => ({ id: r.id as number, label: r.label as string | null, n10: r.n10 as number }))
        )
      })
    )
    .start()
  yield* query.awaitTermination()
})

Effect.runPromise(
  program.pipe(Effect.provide(Session.layer({ checkpointFileSystem: crashingFileSystem(files.checkpoint) })))
).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  }
)
