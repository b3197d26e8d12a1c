/**
 * `textFileStream` over a real folder (Spark's `FileInputDStream`, `InputStreamsSuite` "file
 * input stream"): each batch reads the files that appeared since the last, by modification
 * time against the batch time of Effect's clock — files from before the start, hidden files,
 * files already read and files "from the future" are left out until their time comes.
 */
import { mkdir, utimes, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { TestClock } from "effect/testing"
import { StreamingContext } from "../../dstream/mod.ts"
import { batchDone, removeDir, sessionLayer, tempDir } from "./DStreamTestKit.ts"

/** Writes a file with a modification time of `mtimeMs` (on the test clock's scale). */
const put = (dir: string, name: string, text: string, mtimeMs: number) =>
  Effect.promise(async () => {
    const path = join(dir, name)
    await writeFile(path, text)
    await utimes(path, mtimeMs / 1000, mtimeMs / 1000)
  })

describe("textFileStream", () => {
  it.effect("reads the lines of new files, once, in the batch of their modification time", () =>
    Effect.gen(function* () {
      const dir = tempDir("files")
      yield* Effect.promise(() => mkdir(dir, { recursive: true }))
      yield* TestClock.adjust("10 seconds")
      yield* put(dir, "old.txt", "before start\n", 9_000)
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const batches: Array<readonly [number, Array<string>]> = []
      ssc.textFileStream(dir).foreachRDD((rdd, time) => {
        batches.push([time, rdd.collect()])
      })
      const step = (time: number) =>
        Effect.gen(function* () {
          const done = yield* batchDone(ssc, time)
          yield* TestClock.adjust("1 second")
          yield* Deferred.await(done)
        })
      yield* ssc.start()
      yield* put(dir, "a.txt", "a1\na2\n", 10_500)
      yield* put(dir, ".hidden", "no\n", 10_500)
      yield* put(dir, "future.txt", "f1", 13_000)
      yield* step(11_000)
      yield* put(dir, "b.txt", "b1\r\nb2", 11_200)
      yield* step(12_000)
      yield* step(13_000)
      yield* step(14_000)
      yield* ssc.stop()
      yield* removeDir(dir)
      assert.deepStrictEqual(batches, [
        [11_000, ["a1", "a2"]],
        [12_000, ["b1", "b2"]],
        [13_000, ["f1"]],
        [14_000, []]
      ])
    }).pipe(Effect.provide(sessionLayer))
  )
})
