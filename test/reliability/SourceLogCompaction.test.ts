/**
 * Issue #20, bug 4: the latest compaction of the file source's log (`sources/0/N.compact`) is
 * deleted. The restart used to re-log the last batch's file under the same id, find "no new
 * data" and end an AvailableNow run early (the new file waited for the next start, the old one
 * was logged twice). The source log is written before the offset log, so a source log that no
 * longer reaches a logged offset is a damaged checkpoint: the restart fails before its first
 * batch with a CheckpointError naming the missing file.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { CheckpointError, Session, StreamingQueryError, Trigger } from "../../mod.ts"

const tempDir = () =>
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "tributary-srclog-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

const runAvailableNow = (input: string, checkpoint: string, seen: Array<number>) =>
  Effect.gen(function* () {
    const spark = yield* Session
    yield* spark.conf.set("spark.sql.streaming.fileSource.log.compactInterval", "3")
    const q = yield* spark.readStream
      .schema("id INT")
      .option("maxFilesPerTrigger", "1")
      .json(input)
      .writeStream.option("checkpointLocation", checkpoint)
      .trigger(Trigger.AvailableNow())
      .foreachBatch((batch) => Effect.map(batch.collect(), (rows) => void seen.push(...rows.map((r) => r.id as number))))
      .start()
    yield* Effect.exit(q.awaitTermination())
    return yield* q.exception()
  }).pipe(Effect.provide(Session.layer()))

describe("the file source log loses its latest compaction (issue #20, bug 4)", () => {
  it.effect("the restart fails before its first batch, naming the missing N.compact", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const input = path.join(dir, "in")
      const checkpoint = path.join(dir, "chk")
      fs.mkdirSync(input)
      for (let i = 0; i < 3; i++) {
        const p = path.join(input, `${i}.json`)
        fs.writeFileSync(p, JSON.stringify({ id: i }))
        fs.utimesSync(p, 1000 + i, 1000 + i)
      }
      const seen: Array<number> = []
      assert.isNull(yield* runAvailableNow(input, checkpoint, seen))
      assert.deepStrictEqual(seen, [0, 1, 2])
      const compact = path.join(checkpoint, "sources", "0", "2.compact")
      assert.isTrue(fs.existsSync(compact), fs.readdirSync(path.dirname(compact)).join(","))
      fs.rmSync(compact)
      const p = path.join(input, "3.json")
      fs.writeFileSync(p, JSON.stringify({ id: 3 }))
      fs.utimesSync(p, 1003, 1003)
      const e = yield* runAvailableNow(input, checkpoint, seen)
      assert.instanceOf(e, StreamingQueryError)
      assert.instanceOf(e!.cause, CheckpointError)
      assert.include(e!.message, compact)
      assert.match(e!.message, /Restore it from a backup/)
      // nothing ran, nothing was logged twice
      assert.deepStrictEqual(seen, [0, 1, 2])
      assert.isFalse(fs.existsSync(compact))
    })
  )
})
