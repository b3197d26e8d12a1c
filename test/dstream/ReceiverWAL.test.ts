/**
 * The receiver write-ahead log in one process: Spark's error without a checkpoint directory,
 * the log's layout and fsync'd blocks, recovery through `getOrCreate` of the records that no
 * completed batch consumed, and the cleanup of consumed log files.
 */
import { crc32 } from "../../core/Checksum.ts"
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit } from "effect"
import { TestClock } from "effect/testing"
import { Receiver, StreamingContext } from "../../dstream/mod.ts"
import { ReceivedBlockLog } from "../../dstream/ReceivedBlockLog.ts"
import { Session } from "../../mod.ts"
import { batchDone, removeDir, sessionLayer, tempDir } from "./DStreamTestKit.ts"

class Manual extends Receiver<{ readonly n: number }> {
  onStart(): void {}
  onStop(): void {}
}

const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

const logFiles = (dir: string) => {
  const d = path.join(dir, "receivedData", "0")
  return fs.existsSync(d) ? fs.readdirSync(d).sort() : []
}

describe("receiver write-ahead log", () => {
  it.effect("needs a checkpoint directory (Spark's error)", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.streaming.receiver.writeAheadLog.enable", true)
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      ssc.receiverStream(new Manual()).foreachRDD(() => {})
      const exit = yield* Effect.exit(ssc.start())
      assert.isTrue(Exit.isFailure(exit))
      assert.include(
        String(Exit.isFailure(exit) ? exit.cause : ""),
        "Cannot enable receiver write-ahead log without checkpoint directory set."
      )
      yield* ssc.stop()
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("replays stored records no completed batch consumed, then removes consumed log files", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.streaming.receiver.writeAheadLog.enable", true)
      yield* spark.conf.set("spark.streaming.receiver.maxRate", 2)
      const dir = tempDir("wal")
      const run = (receiver: Manual, batches: Array<Array<number>>) =>
        StreamingContext.getOrCreate(dir, () =>
          Effect.gen(function* () {
            const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
            ssc.receiverStream(receiver).foreachRDD((rdd) => {
              batches.push(rdd.collect().map((r) => r.n))
            })
            return ssc
          })
        )
      // First run: five records stored in two blocks; one batch (two records) completes.
      const first: Array<Array<number>> = []
      const r1 = new Manual()
      const ssc1 = yield* run(r1, first)
      yield* ssc1.start()
      yield* settle
      r1.storeAll([{ n: 0 }, { n: 1 }, { n: 2 }])
      r1.store({ n: 3 })
      r1.storeAll([{ n: 4 }])
      assert.deepStrictEqual(logFiles(dir), ["log-0"])
      const lines = fs.readFileSync(path.join(dir, "receivedData", "0", "log-0"), "utf8")
      // one line per block: the block's CRC-32 (8 hex digits), a tab, the block as JSON
      const crc = (json: string) => crc32(new TextEncoder().encode(json)).toString(16).padStart(8, "0")
      const blocks = ['[{"n":0},{"n":1},{"n":2}]', '[{"n":3}]', '[{"n":4}]']
      assert.strictEqual(lines, blocks.map((b) => `${crc(b)}\t${b}\n`).join(""))
      const done1 = yield* batchDone(ssc1, 1000)
      yield* TestClock.adjust(1000)
      yield* Deferred.await(done1)
      yield* ssc1.stop()
      assert.deepStrictEqual(first, [[0, 1]])
      // The in-memory buffer (records 2..4) is gone with the context; the log still has them.
      const meta = JSON.parse(fs.readFileSync(path.join(dir, "dstream-checkpoint"), "utf8"))
      assert.deepStrictEqual(meta.receivedRecords, { "0": 2 })
      // Restart: a new receiver that stores one more record after the replayed ones.
      const second: Array<Array<number>> = []
      const r2 = new Manual()
      const ssc2 = yield* run(r2, second)
      yield* ssc2.start()
      yield* settle
      r2.store({ n: 5 })
      assert.deepStrictEqual(logFiles(dir), ["log-0", "log-5"])
      const done2 = yield* batchDone(ssc2, 4000)
      yield* TestClock.adjust(3000)
      yield* Deferred.await(done2)
      yield* ssc2.stop()
      assert.deepStrictEqual(second, [[2, 3], [4, 5], []])
      // Every record was consumed by a completed batch: every log file is gone.
      assert.deepStrictEqual(logFiles(dir), [])
      yield* removeDir(dir)
    }).pipe(Effect.provide(sessionLayer))
  )

  it("skips a last line cut short by a crash and counts records across files", () => {
    const dir = tempDir("wal-log")
    const log = new ReceivedBlockLog(dir)
    log.reset()
    log.append([1, 2])
    log.close()
    log.append([3])
    fs.appendFileSync(path.join(dir, "log-2"), "[4,")
    const again = new ReceivedBlockLog(dir)
    assert.deepStrictEqual(again.recover(1), [2, 3])
    assert.strictEqual(again.count, 3)
    assert.deepStrictEqual(again.clean(2), ["log-0"])
    assert.deepStrictEqual(fs.readdirSync(dir).sort(), ["log-2"])
    fs.rmSync(dir, { recursive: true, force: true })
  })
})
