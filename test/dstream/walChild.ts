/**
 * The child program of `ReceiverWALCrash.test.ts`: a DStream over a receiver with the
 * write-ahead log on (checkpoint in `<workDir>/checkpoint`, 200 ms batches, 50 records per
 * second = 10 per batch), whose output operation appends each batch's ids as a JSON line to
 * `<workDir>/out.jsonl`.
 *
 * - `kill` mode: the receiver stores ids 0..99 in ten blocks at start and writes
 *   `<workDir>/stored` once all are stored; the output operation kills the process with
 *   `SIGKILL` right after writing the batch that brings the output to 30 records or more
 *   (before that batch is checkpointed).
 * - `restart` mode: the receiver stores nothing; the context recovers through `getOrCreate`
 *   and stops once the output holds all 100 ids (exit 0; exit 1 after 20 s without).
 *
 * Node 24 runs this file directly (type stripping).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Deferred, Effect } from "effect"
import { Receiver, StreamingContext } from "../../dstream/mod.ts"
import { Session } from "../../structured/api/Session.ts"

const [workDir, mode] = process.argv.slice(2)
if (workDir === undefined || (mode !== "kill" && mode !== "restart")) {
  process.stderr.write("usage: walChild.ts <workDir> kill|restart\n")
  process.exit(2)
}
const checkpoint = path.join(workDir, "checkpoint")
const out = path.join(workDir, "out.jsonl")

class Ids extends Receiver<{ readonly id: number }> {
  onStart(): void {
    if (mode !== "kill") return
    for (let b = 0; b < 10; b++) this.storeAll(Array.from({ length: 10 }, (_, i) => ({ id: b * 10 + i })))
    fs.writeFileSync(path.join(workDir as string, "stored"), "100")
  }
  onStop(): void {}
}

const outputIds = (): Array<number> =>
  fs.existsSync(out)
    ? fs
        .readFileSync(out, "utf8")
        .split("\n")
        .filter((l) => l.length > 0)
        .flatMap((l) => (JSON.parse(l) as { ids: Array<number> }).ids)
    : []

const program = Effect.gen(function* () {
  const done = yield* Deferred.make<void>()
  const ssc = yield* StreamingContext.getOrCreate(checkpoint, () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: 200 })
      ssc.receiverStream(new Ids()).foreachRDD((rdd, time) => {
        const ids = rdd.collect().map((r) => r.id)
        if (ids.length === 0) return
        fs.appendFileSync(out, `${JSON.stringify({ time, ids })}\n`)
        if (mode === "kill" && outputIds().length >= 30) process.kill(process.pid, "SIGKILL")
      })
      return ssc
    })
  )
  ssc.addStreamingListener({
    onBatchCompleted: () => {
      if (mode === "restart" && new Set(outputIds()).size === 100) Deferred.doneUnsafe(done, Effect.void)
    }
  })
  yield* ssc.start()
  yield* Deferred.await(done).pipe(Effect.timeout(20_000))
  yield* ssc.stop()
})

Effect.runPromise(
  program.pipe(
    Effect.provide(
      Session.layer({
        stateStore: "memory",
        conf: {
          "spark.streaming.receiver.writeAheadLog.enable": true,
          "spark.streaming.receiver.maxRate": 50
        }
      })
    )
  )
).then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`${String(e)}\n`)
    process.exit(1)
  }
)
