/**
 * The child program of the file sink crash test: a streaming query from a folder of JSON files
 * (the file source, one file per batch) to the JSON file sink partitioned by a column, run with
 * `Trigger.AvailableNow()` until the input is done (exit 0), or killed by its own `SIGKILL` at a
 * named point of the sink's commit protocol.
 *
 * ```
 * node test/crash/fileSinkChild.ts <inputDir> <workDir> [point:batchId]
 * ```
 *
 * Kill points (`FILE_SINK_KILL_POINTS`):
 * - `beforeSinkLog`: batch `k`'s data files are written, `_spark_metadata/k` is not;
 * - `afterSinkLog`: `_spark_metadata/k` is written, the checkpoint's `commits/k` is not.
 *
 * The sink is the library's file sink (`fileStreamSinkFormat(JsonWriterFormat)`) registered as
 * `json-crash`, with its metadata log's file operations wrapped to die at those points.
 */
import * as path from "node:path"
import { Effect } from "effect"
import { fileStreamSinkFormat } from "../../connectors/files/FileStreamSink.ts"
import { NodeLogFiles } from "../../connectors/files/FileStreamLog.ts"
import { JsonWriterFormat } from "../../connectors/files/FileWriters.ts"
import { registerFileFormats } from "../../connectors/files/mod.ts"
import * as F from "../../core/F.ts"
import { registerSinkFormat } from "../../core/Streaming.ts"
import { Trigger } from "../../core/Trigger.ts"
import { Session } from "../../structured/api/Session.ts"

/** Where the child kills itself, in the order a batch passes them. */
export const FILE_SINK_KILL_POINTS = ["beforeSinkLog", "afterSinkLog"] as const

const [inputDir, workDir, killArg] = process.argv.slice(2)
if (inputDir === undefined || workDir === undefined) {
  process.stderr.write("usage: fileSinkChild.ts <inputDir> <workDir> [point:batchId]\n")
  process.exit(2)
}
const [killPoint, killBatch] = killArg === undefined ? [undefined, undefined] : killArg.split(":")
if (killPoint !== undefined && !(FILE_SINK_KILL_POINTS as ReadonlyArray<string>).includes(killPoint)) {
  process.stderr.write(`unknown kill point ${killPoint}\n`)
  process.exit(2)
}
const out = path.join(workDir, "out")
const checkpoint = path.join(workDir, "checkpoint")

const die = (): never => {
  process.kill(process.pid, "SIGKILL")
  return process.abort()
}

/** The sink log's batch id of a path like `…/_spark_metadata/9.compact`. */
const logBatch = (p: string): number | undefined =>
  path.basename(path.dirname(p)) === "_spark_metadata" ? Number.parseInt(path.basename(p), 10) : undefined

registerFileFormats()
registerSinkFormat({
  ...fileStreamSinkFormat(JsonWriterFormat, {
    logFiles: {
      ...NodeLogFiles,
      writeNew: (p, text) => {
        const batch = logBatch(p)
        const here = batch !== undefined && String(batch) === killBatch
        if (here && killPoint === "beforeSinkLog") die()
        const added = NodeLogFiles.writeNew(p, text)
        if (here && killPoint === "afterSinkLog") die()
        return added
      }
    }
  }),
  name: "json-crash"
})

const program = Effect.gen(function* () {
  const spark = yield* Session
  const query = yield* spark.readStream
    .schema("id INT, word STRING")
    .option("maxFilesPerTrigger", 1)
    .json(inputDir)
    .filter(F.col("id").mod(4).neq(0))
    .withColumn("bucket", F.col("id").mod(3))
    .withColumn("label", F.upper(F.col("word")))
    .writeStream.format("json-crash")
    .partitionBy("bucket")
    .option("checkpointLocation", checkpoint)
    .trigger(Trigger.AvailableNow())
    .start(out)
  yield* query.awaitTermination()
})

Effect.runPromise(program.pipe(Effect.provide(Session.layer()))).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  }
)
