/**
 * Spark's `CompactibleFileStreamLog` (`CompactibleFileStreamLogSuite`, `FileStreamSinkLogSuite`):
 * batch file names, compaction, the interval derived from existing `.compact` files, expired log
 * deletion, and the URI strings of logged paths.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  allValidBatches,
  CompactibleFileStreamLog,
  defaultLogSettings,
  deriveCompactInterval,
  fromUrlPath,
  isCompactionBatch,
  type SinkFileStatus,
  sinkStatusCodec,
  type SourceFileEntry,
  sourceEntryCodec,
  toUrlPath,
  validBatchesBeforeCompaction
} from "../../../connectors/files/FileStreamLog.ts"
import { escapePathName } from "../../../connectors/files/FileStreamSink.ts"
import { tempDir } from "./streamHelpers.ts"

const entry = (batchId: number): SourceFileEntry => ({ path: `file:/in/${batchId}.json`, timestamp: batchId, batchId })

describe("CompactibleFileStreamLog", () => {
  it("batch arithmetic as Spark's companion object", () => {
    assert.deepStrictEqual(
      [0, 1, 2, 5, 8].map((b) => isCompactionBatch(b, 3)),
      [false, false, true, true, true]
    )
    assert.deepStrictEqual(validBatchesBeforeCompaction(5, 3), [2, 3, 4])
    assert.deepStrictEqual(validBatchesBeforeCompaction(2, 3), [0, 1])
    assert.deepStrictEqual(allValidBatches(4, 3), [2, 3, 4])
    assert.deepStrictEqual(allValidBatches(5, 3), [5])
    assert.deepStrictEqual(allValidBatches(1, 3), [0, 1])
    // SPARK-18187: 11.compact written with another interval; default 5 becomes 6
    assert.strictEqual(deriveCompactInterval(5, 11), 6)
    assert.strictEqual(deriveCompactInterval(10, 5), 6)
    assert.strictEqual(deriveCompactInterval(4, 6), 7)
    assert.strictEqual(deriveCompactInterval(2, 5), 2)
  })

  it.effect("compacts every interval, never overwrites, reads all entries back", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const settings = { ...defaultLogSettings("json"), defaultCompactInterval: 3, deleteExpired: false }
      const log = new CompactibleFileStreamLog(dir, settings, sourceEntryCodec)
      for (let b = 0; b < 5; b++) assert.isTrue(yield* log.add(b, [entry(b)]))
      assert.isFalse(yield* log.add(4, [entry(40)]))
      assert.deepStrictEqual(fs.readdirSync(dir).sort(), [".0.crc", ".1.crc", ".2.compact.crc", ".3.crc", ".4.crc", "0", "1", "2.compact", "3", "4"])
      assert.deepStrictEqual(
        fs.readFileSync(path.join(dir, "2.compact"), "utf8"),
        ["v1", ...[0, 1, 2].map((b) => JSON.stringify(entry(b)))].join("\n")
      )
      assert.deepStrictEqual(yield* log.allEntries(), [0, 1, 2, 3, 4].map(entry))
      assert.strictEqual(yield* log.latestBatchId(), 4)
      // a new log over the same folder keeps the interval its files were written with
      const reopened = new CompactibleFileStreamLog(dir, { ...settings, defaultCompactInterval: 10 }, sourceEntryCodec)
      assert.strictEqual(yield* reopened.compactInterval(), 3)
      assert.isTrue(yield* reopened.add(5, [entry(5)]))
      assert.isTrue(fs.existsSync(path.join(dir, "5.compact")))
    })
  )

  it.effect(
    "deletes files before the compaction that keeps minBatchesToRetain, once older than the cleanup delay",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir()
        const settings = {
          ...defaultLogSettings("json"),
          defaultCompactInterval: 3,
          minBatchesToRetain: 2,
          // the test clock stands at 0: a delay far below it makes every file old enough
          cleanupDelayMs: -1e15
        }
        const log = new CompactibleFileStreamLog(dir, settings, sourceEntryCodec)
        for (let b = 0; b < 9; b++) yield* log.add(b, [entry(b)])
        // after batch 8: min batch 7, so the compaction 5 stays and everything before it goes
        assert.deepStrictEqual(
          fs.readdirSync(dir).filter((n) => !n.endsWith(".crc")).sort(),
          ["5.compact", "6", "7", "8.compact"]
        )
        assert.deepStrictEqual(yield* log.allEntries(), [0, 1, 2, 3, 4, 5, 6, 7, 8].map(entry))
      })
  )

  it.effect("retention (the sink's option) drops old entries at compaction and from allEntries", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const status = (name: string, modificationTime: number): SinkFileStatus => ({
        path: `file:/out/${name}`,
        size: 1,
        isDir: false,
        modificationTime,
        blockReplication: 1,
        blockSize: 33554432,
        action: "add"
      })
      const log = new CompactibleFileStreamLog(
        dir,
        {
          ...defaultLogSettings("json"),
          defaultCompactInterval: 2,
          deleteExpired: false,
          // the test clock stands at 0
          retain: (modified, now) => now - modified <= 1000
        },
        sinkStatusCodec
      )
      yield* log.add(0, [status("old", -5000), status("new", -500)])
      assert.deepStrictEqual(
        (yield* log.allEntries()).map((s) => s.path),
        ["file:/out/new"]
      )
      yield* log.add(1, [status("older", -2000), status("newer", 0)])
      const compact = fs.readFileSync(path.join(dir, "1.compact"), "utf8").split("\n")
      assert.deepStrictEqual(
        compact.slice(1).map((l) => (JSON.parse(l) as SinkFileStatus).path),
        ["file:/out/new", "file:/out/newer"]
      )
    })
  )

  it.effect("refuses a newer log version and corrupt lines", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const log = new CompactibleFileStreamLog(dir, defaultLogSettings("json"), sourceEntryCodec)
      fs.writeFileSync(path.join(dir, "0"), 'v2\n{"path":"a","timestamp":1,"batchId":0}')
      const e1 = yield* Effect.flip(log.get(0))
      assert.include(e1.message, "has log version v2, but the maximum supported log version is v1")
      fs.writeFileSync(path.join(dir, "0"), "v1\nnot json")
      const e2 = yield* Effect.flip(log.get(0))
      assert.include(e2.message, "is corrupt: line 2 is not JSON")
    })
  )

  it("paths as Spark's URI strings, partition folder names escaped as Hive does", () => {
    assert.strictEqual(toUrlPath("/tmp/a b/x%y#z.json"), "file:/tmp/a%20b/x%25y%23z.json")
    assert.strictEqual(toUrlPath("/tmp/é/k=v/ok.json"), "file:/tmp/é/k=v/ok.json")
    assert.strictEqual(fromUrlPath("file:/tmp/a%20b/x%25y%23z.json"), "/tmp/a b/x%y#z.json")
    assert.strictEqual(fromUrlPath("file:///tmp/x.json"), "/tmp/x.json")
    assert.strictEqual(escapePathName("a/b:c=d%e f"), "a%2Fb%3Ac%3Dd%25e f")
    assert.strictEqual(escapePathName("2020-01-01 00:00:00"), "2020-01-01 00%3A00%3A00")
  })
})
