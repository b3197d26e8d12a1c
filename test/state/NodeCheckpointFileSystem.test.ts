/**
 * The `node:fs` checkpoint file system, flushed (`fsync: true`) and not (the default, as Spark on a
 * local file system): atomic writes into folders made on demand, `overwrite: false` never
 * replacing an existing entry, no temporary file left behind, and the reads, listings and
 * removals the metadata logs use.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { commitLog, offsetLog } from "../../core/MetadataLog.ts"
import {
  DurableNodeCheckpointFileSystem,
  makeNodeCheckpointFileSystem,
  NodeCheckpointFileSystem
} from "../../state/NodeCheckpointFileSystem.ts"

let dir = ""
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "tributary-ncfs-"))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const run = <A, E>(e: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(e)

for (const [name, fs] of [
  ["default (no fsync)", NodeCheckpointFileSystem],
  ["durable (fsync)", DurableNodeCheckpointFileSystem],
  ["made with fsync: false", makeNodeCheckpointFileSystem({ fsync: false })]
] as const) {
  describe(`NodeCheckpointFileSystem, ${name}`, () => {
    // Small files (log entries) and large ones (state deltas, snapshots) take different paths.
    for (const [size, pad] of [
      ["small", ""],
      ["large", "x".repeat(100_000)]
    ] as const) {
      it(`writes a ${size} file into a folder it creates, and never overwrites without overwrite`, async () => {
        const p = join(dir, "a", "b", "offsets", "0")
        expect(await run(fs.writeAtomic(p, `v1\nfirst${pad}`, false))).toBe(true)
        expect(await readFile(p, "utf8")).toBe(`v1\nfirst${pad}`)
        // A second writer of the same batch id loses and the first content stays (Spark's HDFSMetadataLog.add).
        expect(await run(fs.writeAtomic(p, `v1\nsecond${pad}`, false))).toBe(false)
        expect(await run(fs.readText(p))).toBe(`v1\nfirst${pad}`)
        // No temporary file is left in the folder either way.
        expect((await readdir(join(dir, "a", "b", "offsets"))).sort()).toStrictEqual([".0.crc", "0"])
      })

      it(`overwrites a ${size} file with overwrite: true, atomically by rename`, async () => {
        const p = join(dir, "metadata")
        expect(await run(fs.writeAtomic(p, `one${pad}`, true))).toBe(true)
        expect(await run(fs.writeAtomic(p, `two${pad}`, true))).toBe(true)
        expect(await run(fs.readText(p))).toBe(`two${pad}`)
        expect((await readdir(dir)).sort()).toStrictEqual([".metadata.crc", "metadata"])
      })
    }

    it("fails with a CheckpointError naming the file when the folder cannot be made", async () => {
      const blocker = join(dir, "file")
      expect(await run(fs.writeAtomic(blocker, "plain file", true))).toBe(true)
      const p = join(blocker, "offsets", "0")
      const error = await Effect.runPromise(Effect.flip(fs.writeAtomic(p, "v1", false)))
      expect(error._tag).toBe("CheckpointError")
      expect(error.message).toContain(p)
    })

    it("serves the metadata logs: add, get, latest, purge", async () => {
      const offsets = offsetLog(fs, join(dir, "q"))
      const commits = commitLog(fs, join(dir, "q"))
      for (let b = 0; b < 3; b++) {
        expect(
          await run(
            offsets.add(b, { metadata: { batchWatermarkMs: b, batchTimestampMs: 7, conf: {} }, offsets: [b, undefined] })
          )
        ).toBe(true)
        expect(await run(commits.add(b, { nextBatchWatermarkMs: b + 1 }))).toBe(true)
      }
      expect(await run(offsets.get(1))).toStrictEqual({
        metadata: { batchWatermarkMs: 1, batchTimestampMs: 7, conf: {} },
        offsets: [1, undefined]
      })
      expect(await run(commits.getLatest())).toStrictEqual([2, { nextBatchWatermarkMs: 3 }])
      await run(offsets.purge(2))
      expect(await run(offsets.batchIds())).toStrictEqual([2])
      expect(await run(fs.readText(join(dir, "q", "offsets", "0")))).toBeUndefined()
      expect(await run(fs.list(join(dir, "missing")))).toStrictEqual([])
      expect(await run(fs.exists(join(dir, "q", "commits", "2")))).toBe(true)
    })
  })
}
