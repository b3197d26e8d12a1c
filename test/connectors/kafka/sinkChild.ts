/**
 * The child program of the transactional-sink crash test: one streaming query from a Kafka topic
 * to another through the transactional sink (`kafka.transactional.exactlyOnce`), run with
 * `Trigger.AvailableNow()` until the input is done (exit 0), or killed.
 *
 * ```
 * node test/connectors/kafka/sinkChild.ts <bootstrap> <inTopic> <outTopic> <workDir> [beforeCommit:<k> | afterOffsets:<k>]
 * ```
 *
 * The kill points are on the checkpoint file system: `beforeCommit:k` dies just before
 * `commits/k` is written (batch k's Kafka transaction is committed, the checkpoint does not know
 * it), `afterOffsets:k` right after `offsets/k` is written (before the sink runs). The parent
 * also kills children at moments of its own choosing (SIGKILL while transactions are open).
 */
import * as path from "node:path"
import { Effect } from "effect"
import type { CheckpointFileSystem } from "../../../core/CheckpointFileSystem.ts"
import * as F from "../../../core/F.ts"
import { Trigger } from "../../../core/Trigger.ts"
import { registerKafka } from "../../../connectors/kafka/mod.ts"
import { NodeCheckpointFileSystem } from "../../../state/NodeCheckpointFileSystem.ts"
import { Session } from "../../../structured/api/Session.ts"

const [bootstrap, inTopic, outTopic, workDir, killArg] = process.argv.slice(2)
if (bootstrap === undefined || inTopic === undefined || outTopic === undefined || workDir === undefined) {
  process.stderr.write("usage: sinkChild.ts <bootstrap> <inTopic> <outTopic> <workDir> [point:k]\n")
  process.exit(2)
}
registerKafka()
const checkpoint = path.join(path.resolve(workDir), "checkpoint")
const [killPoint, killBatch] =
  killArg === undefined ? [undefined, -1] : [killArg.split(":")[0], Number(killArg.split(":")[1])]

const die = (): never => {
  process.kill(process.pid, "SIGKILL")
  return process.abort()
}

const crashingFileSystem: CheckpointFileSystem = {
  ...NodeCheckpointFileSystem,
  writeAtomic: (p, text, overwrite) => {
    const dir = path.dirname(p)
    const batchId = Number(path.basename(p))
    if (killPoint === "beforeCommit" && dir === path.join(checkpoint, "commits") && batchId === killBatch) die()
    return Effect.tap(NodeCheckpointFileSystem.writeAtomic(p, text, overwrite), () =>
      Effect.sync(() => {
        if (killPoint === "afterOffsets" && dir === path.join(checkpoint, "offsets") && batchId === killBatch) die()
      })
    )
  }
}

const program = Effect.gen(function* () {
  const spark = yield* Session
  const query = yield* spark.readStream
    .format("kafka")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("subscribe", inTopic)
    .option("startingOffsets", "earliest")
    .option("maxOffsetsPerTrigger", "7")
    .load()
    .select(F.col("key"), F.col("value"))
    .writeStream.format("kafka")
    .option("kafka.bootstrap.servers", bootstrap)
    .option("topic", outTopic)
    .option("kafka.transactional.exactlyOnce", "true")
    .option("checkpointLocation", checkpoint)
    .trigger(Trigger.AvailableNow())
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
