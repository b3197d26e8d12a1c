/**
 * `StreamingContext.directStream` over a registered replayable source (`rate-micro-batch`):
 * each batch reads the next offset range; a batch that did not complete is re-read through
 * `getOrCreate` with exactly its recorded range (even when the source would now give another),
 * and completed ranges are not read again.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit } from "effect"
import { TestClock } from "effect/testing"
import { type DirectInputDStream, StreamingContext } from "../../dstream/mod.ts"
import { batchDone, removeDir, runBatches, sessionLayer, tempDir } from "./DStreamTestKit.ts"

interface RateRow {
  readonly timestamp: Date
  readonly value: number
}

describe("directStream", () => {
  it.effect("reads one offset range per batch, as external rows", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const stream = ssc.directStream<RateRow>("rate-micro-batch", { rowsPerBatch: 3, advanceMillisPerBatch: 100 })
      const node = stream.node as DirectInputDStream<RateRow>
      const batches: Array<Array<readonly [number, number]>> = []
      const ranges: Array<unknown> = []
      stream.foreachRDD((rdd, time) => {
        batches.push(rdd.collect().map((r) => [r.value, r.timestamp.getTime()] as const))
        ranges.push(node.offsetRange(time))
      })
      yield* runBatches(ssc, 2)
      yield* ssc.stop()
      assert.deepStrictEqual(batches, [
        [
          [0, 0],
          [1, 0],
          [2, 0]
        ],
        [
          [3, 100],
          [4, 100],
          [5, 100]
        ]
      ])
      assert.deepStrictEqual(ranges, [
        { start: { offset: 0, timestamp: 0 }, end: { offset: 3, timestamp: 100 } },
        { start: { offset: 3, timestamp: 100 }, end: { offset: 6, timestamp: 200 } }
      ])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("an unknown format fails start with DATA_SOURCE_NOT_FOUND", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      ssc.directStream("no-such-format").foreachRDD(() => {})
      const exit = yield* Effect.exit(ssc.start())
      assert.isTrue(Exit.isFailure(exit))
      assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "[DATA_SOURCE_NOT_FOUND]")
      yield* ssc.stop()
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("a restart via getOrCreate re-reads exactly the offsets of the batch that did not complete", () =>
    Effect.gen(function* () {
      const dir = tempDir("direct")
      const run = (rowsPerBatch: number, failAt: number | undefined, out: Array<Array<number>>) =>
        StreamingContext.getOrCreate(dir, () =>
          Effect.gen(function* () {
            const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
            ssc.directStream<RateRow>("rate-micro-batch", { rowsPerBatch }).foreachRDD((rdd, time) => {
              out.push(rdd.collect().map((r) => r.value))
              if (time === failAt) throw new Error("output failed")
            })
            return ssc
          })
        )
      const first: Array<Array<number>> = []
      const ssc1 = yield* run(3, 2000, first)
      yield* ssc1.start()
      yield* TestClock.adjust(2000)
      const failed = yield* Effect.exit(ssc1.awaitTermination())
      assert.isTrue(Exit.isFailure(failed))
      yield* ssc1.stop()
      assert.deepStrictEqual(first, [
        [0, 1, 2],
        [3, 4, 5]
      ])
      // Batch 2000 did not complete: its range is on disk, the checkpoint has batch 1000's end.
      assert.deepStrictEqual(fs.readdirSync(path.join(dir, "directOffsets", "0")).sort(), [".2000.crc", "2000"])
      const meta = JSON.parse(fs.readFileSync(path.join(dir, "dstream-checkpoint"), "utf8"))
      assert.deepStrictEqual(meta.directOffsets, { "0": { offset: 3, timestamp: 1000 } })
      // Restart with 5 rows per batch: batch 2000 re-reads its recorded 3 rows, later batches read 5.
      const second: Array<Array<number>> = []
      const ssc2 = yield* run(5, undefined, second)
      const done = yield* batchDone(ssc2, 3000)
      yield* ssc2.start()
      yield* TestClock.adjust(1000)
      yield* Deferred.await(done)
      yield* ssc2.stop()
      assert.deepStrictEqual(second, [
        [3, 4, 5],
        [6, 7, 8, 9, 10]
      ])
      assert.deepStrictEqual(fs.readdirSync(path.join(dir, "directOffsets", "0")), [])
      yield* removeDir(dir)
    }).pipe(Effect.provide(sessionLayer))
  )
})
