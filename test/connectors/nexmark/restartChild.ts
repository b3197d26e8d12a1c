/**
 * The child program of `NexmarkRestart.test.ts`: a stateful streaming query over the `nexmark`
 * source (bids per auction in 5-second windows, append mode on a watermark) to an idempotent
 * file-per-batch sink, run with `Trigger.AvailableNow()` to the end of its events (exit 0), or
 * killed by its own `SIGKILL` at a point of the commit protocol.
 *
 * ```
 * node test/connectors/nexmark/restartChild.ts <workDir> [point:batchId]
 * ```
 *
 * Points: `afterOffsetWrite` (the offset log entry of the batch is written), `insideSink` (the
 * batch's rows are computed, nothing written), `afterSink` (the batch's file is written, the
 * commit is not), `afterCommit` (the commit log entry is written). The sink writes batch `k` to
 * `out/<k>.json` through a temporary file; a batch whose file exists is skipped after checking
 * that the replayed rows are the same (a difference goes to `out/conflict-<k>.json`).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect } from "effect"
import type { CheckpointFileSystem } from "../../../core/CheckpointFileSystem.ts"
import * as F from "../../../core/F.ts"
import { Trigger } from "../../../core/Trigger.ts"
import { registerNexmark } from "../../../connectors/nexmark/mod.ts"
import { NodeCheckpointFileSystem } from "../../../state/NodeCheckpointFileSystem.ts"
import { Session } from "../../../structured/api/Session.ts"

const [workDir, killArg] = process.argv.slice(2)
if (workDir === undefined) {
  process.stderr.write("usage: restartChild.ts <workDir> [point:batchId]\n")
  process.exit(2)
}
const [killPoint, killBatch] =
  killArg === undefined ? [undefined, undefined] : [killArg.split(":")[0], Number(killArg.split(":")[1])]
const checkpoint = path.join(workDir, "checkpoint")
const out = path.join(workDir, "out")

const die = (): never => {
  process.kill(process.pid, "SIGKILL")
  return process.abort()
}
const killsAt = (point: string, batchId: number): boolean => killPoint === point && killBatch === batchId

/** The options of the source: 6 000 events, 60 seconds of event time, 500 a batch. */
export const SOURCE_OPTIONS = { maxEvents: "6000", firstEventRate: "100", maxOffsetsPerTrigger: "500", seed: "11" }

const writeBatch = (batchId: number, text: string): void => {
  fs.mkdirSync(out, { recursive: true })
  const final = path.join(out, `${batchId}.json`)
  if (fs.existsSync(final)) {
    if (fs.readFileSync(final, "utf8") !== text) fs.writeFileSync(path.join(out, `conflict-${batchId}.json`), text)
    return
  }
  const tmp = path.join(out, `.${batchId}.json.tmp`)
  fs.writeFileSync(tmp, text)
  fs.renameSync(tmp, final)
}

const crashingFileSystem: CheckpointFileSystem = {
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
}

registerNexmark()

const program = Effect.gen(function* () {
  const spark = yield* Session
  const query = yield* spark.readStream
    .format("nexmark")
    .options(SOURCE_OPTIONS)
    .load()
    .withWatermark("dateTime", "4 seconds")
    .where(F.col("event_type").eq(2))
    .groupBy(F.col("bid.auction").as("auction"), F.window("dateTime", "5 seconds"))
    .agg(F.count("*").as("bids"), F.max("bid.price").as("top"), F.sum("bid.price").as("total"))
    .select(F.col("auction"), F.col("window.start").as("start"), F.col("bids"), F.col("top"), F.col("total"))
    .writeStream.option("checkpointLocation", checkpoint)
    .outputMode("append")
    .trigger(Trigger.AvailableNow())
    .foreachBatch((df, batchId) =>
      Effect.gen(function* () {
        const rows = (yield* df.collect()).map((r) => JSON.stringify(r)).sort()
        if (killsAt("insideSink", batchId)) die()
        writeBatch(batchId, `${rows.join("\n")}\n`)
        if (killsAt("afterSink", batchId)) die()
      })
    )
    .start()
  yield* query.awaitTermination()
})

Effect.runPromise(program.pipe(Effect.provide(Session.layer({ checkpointFileSystem: crashingFileSystem })))).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  }
)
