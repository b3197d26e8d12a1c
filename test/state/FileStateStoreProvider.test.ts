/**
 * The file provider (`"memory"`, Spark's HDFSBackedStateStoreProvider): the shared contract,
 * then its layout on disk (delta per commit, snapshots and cleanup by maintenance, the schema
 * file) and I/O failures through an injected file system.
 */
import * as fs from "node:fs/promises"
import { createHash } from "node:crypto"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { CheckpointError } from "../../core/Errors.ts"
import * as FileStateStoreProvider from "../../state/FileStateStoreProvider.ts"
import { NodeCheckpointFileSystem } from "../../state/NodeCheckpointFileSystem.ts"
import { BinaryValueCodec } from "../../state/StateCodec.ts"
import { applyStateFile, encodeDelta, encodeSnapshot, frame } from "../../state/StateFileFormat.ts"
import { encodeSchema } from "../../state/StateSchemaCompatibility.ts"
import { stateStoreContract, tempCheckpoint, wordSchema } from "./StateStoreContract.ts"

const storeDir = (checkpoint: string) => path.join(checkpoint, "state", "0", "0")

stateStoreContract({
  name: "files",
  make: (options) =>
    FileStateStoreProvider.make({ maintenanceEveryCommits: 0, minDeltasForSnapshot: 2, hooks: options?.hooks }),
  damage: [
    {
      name: "a byte of the latest delta file changed",
      run: async (cp) => {
        const file = path.join(storeDir(cp), "3.delta")
        const bytes = await fs.readFile(file)
        bytes[Math.floor(bytes.length / 2)] ^= 0x01
        await fs.writeFile(file, bytes)
        return file
      }
    },
    {
      name: "the latest delta file truncated",
      run: async (cp) => {
        const file = path.join(storeDir(cp), "3.delta")
        const { size } = await fs.stat(file)
        await fs.truncate(file, Math.floor(size / 2))
        return file
      }
    },
    {
      name: "the schema file truncated",
      run: async (cp) => {
        const file = path.join(storeDir(cp), "_metadata", "schema")
        await fs.truncate(file, 20)
        return file
      }
    }
  ]
})

const spec = (checkpoint: string, version: number, storeName = "default") => ({
  checkpoint,
  operatorId: 0,
  storeName,
  schema: wordSchema,
  version,
  minBatchesToRetain: 3
})

/** A folder's names without the checksum files beside each (`.<name>.crc`, NodeCheckpointFileSystem). */
const list = (dir: string) =>
  Effect.promise(async () => (await fs.readdir(dir)).filter((n) => !n.endsWith(".crc")).sort())

describe("FileStateStoreProvider", () => {
  it.effect("writes one delta file per commit, snapshots and cleans up in maintenance (Spark's layout)", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      const p = yield* FileStateStoreProvider.make({ maintenanceEveryCommits: 0, minDeltasForSnapshot: 4 })
      for (let v = -1; v < 5; v++) {
        const s = yield* p.open(spec(cp, v))
        s.put("k", v + 1)
        yield* s.commit()
      }
      assert.deepStrictEqual(yield* list(storeDir(cp)), [
        "0.delta",
        "1.delta",
        "2.delta",
        "3.delta",
        "4.delta",
        "5.delta",
        "_metadata"
      ])
      assert.deepStrictEqual(yield* list(path.join(storeDir(cp), "_metadata")), ["schema"])
      // Format 2, Spark's delta layout: key size, key, value size, value (the codec's bytes of 5:
      // tag 3, zig-zag varint 10), -1 for the end; then the entry count and a SHA-256.
      const delta = yield* Effect.promise(() => fs.readFile(path.join(storeDir(cp), "5.delta")))
      const body = Buffer.concat([
        Buffer.from("tributary-state delta 2\n"),
        Buffer.from([0, 0, 0, 1]),
        Buffer.from("k"),
        Buffer.from([0, 0, 0, 2, 3, 10]),
        Buffer.from([0xff, 0xff, 0xff, 0xff])
      ])
      assert.deepStrictEqual(delta.subarray(0, body.length), body)
      assert.deepStrictEqual(delta.subarray(body.length, body.length + 4), Buffer.from([0, 0, 0, 1]))
      assert.deepStrictEqual(delta.subarray(body.length + 4), createHash("sha256").update(body).digest())
      yield* p.maintain()
      assert.include(yield* list(storeDir(cp)), "5.snapshot")
      for (let v = 5; v < 12; v++) {
        const s = yield* p.open(spec(cp, v))
        s.put("k", v + 1)
        yield* s.commit()
      }
      yield* p.maintain()
      // Latest 12, retain 3: version 9 must stay rebuildable, from snapshot 5 and deltas 6..9;
      // everything older than snapshot 5 goes. A snapshot of 12 was written too.
      assert.deepStrictEqual(yield* list(storeDir(cp)), [
        "10.delta",
        "11.delta",
        "12.delta",
        "12.snapshot",
        "5.delta",
        "5.snapshot",
        "6.delta",
        "7.delta",
        "8.delta",
        "9.delta",
        "_metadata"
      ])
      yield* p.close()
      const again = yield* FileStateStoreProvider.make({ maintenanceEveryCommits: 0 })
      const r9 = yield* again.read({ checkpoint: cp, operatorId: 0, storeName: "default", version: 9 })
      assert.deepStrictEqual(r9, [["k", 9]])
    })
  )

  it.effect("other stores live in a folder named after the store", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      const p = yield* FileStateStoreProvider.make({ maintenanceEveryCommits: 0 })
      const s = yield* p.open(spec(cp, -1, "left-keyWithIndexToValue"))
      s.put("k", 1)
      yield* s.commit()
      assert.deepStrictEqual(yield* list(path.join(storeDir(cp), "left-keyWithIndexToValue")), ["0.delta", "_metadata"])
    })
  )

  it.effect("snapshots in the background every maintenanceEveryCommits commits", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      yield* Effect.scoped(
        Effect.gen(function* () {
          const p = yield* FileStateStoreProvider.make({ maintenanceEveryCommits: 3, minDeltasForSnapshot: 3 })
          for (let v = -1; v < 3; v++) {
            const s = yield* p.open(spec(cp, v))
            s.put("k", v)
            yield* s.commit()
          }
        })
      )
      // The third commit (version 2) starts the background run; it snapshots the version that is
      // latest when it runs: 2, or 3 when the fourth commit got there first.
      const files = yield* list(storeDir(cp))
      assert.isTrue(files.includes("2.snapshot") || files.includes("3.snapshot"), files.join(", "))
    })
  )

  it.effect("a snapshot built while commits change the map holds exactly the snapshot's version", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      // One entry per step, so the commits below run while the snapshot walks the map.
      const p = yield* FileStateStoreProvider.make({
        maintenanceEveryCommits: 0,
        minDeltasForSnapshot: 1,
        snapshotChunkSize: 1
      })
      const N = 3000
      const model = new Map<string, number>()
      const history: Array<Map<string, number>> = []
      const s0 = yield* p.open(spec(cp, -1))
      for (let i = 0; i < N; i++) {
        s0.put(`k${i}`, i)
        model.set(`k${i}`, i)
      }
      yield* s0.commit()
      history.push(new Map(model))
      const events: Array<string> = []
      const fiber = yield* Effect.forkChild(Effect.tap(p.maintain(), () => Effect.sync(() => events.push("snapshot"))))
      for (let v = 0; v < 6; v++) {
        // Keys late in the map's order (updated, removed) and new ones (appended to it).
        const s = yield* p.open(spec(cp, v))
        s.put(`k${N - 1 - 2 * v}`, -v)
        s.remove(`k${N - 2 - 2 * v}`)
        s.put(`new${v}`, v)
        yield* s.commit()
        model.set(`k${N - 1 - 2 * v}`, -v)
        model.delete(`k${N - 2 - 2 * v}`)
        model.set(`new${v}`, v)
        history.push(new Map(model))
        events.push(`commit ${v + 1}`)
      }
      yield* Fiber.join(fiber)
      assert.isAbove(events.indexOf("snapshot"), 0, `commits ran while the snapshot was built: ${events.join(", ")}`)
      const snapshots = (yield* list(storeDir(cp))).filter((f) => f.endsWith(".snapshot"))
      assert.strictEqual(snapshots.length, 1)
      const version = Number(snapshots[0].split(".")[0])
      const file = path.join(storeDir(cp), snapshots[0])
      const loaded = new Map<string, string>()
      applyStateFile("snapshot", yield* Effect.promise(() => fs.readFile(file)), file, loaded, () => "")
      const expected = new Map([...history[version]].map(([k, v]) => [k, BinaryValueCodec.encode(v)!] as const))
      assert.deepStrictEqual(loaded, expected)
    })
  )

  it.effect("a failing disk fails the commit with CommitFailed and the version stays", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      let failWrites = false
      const flaky = {
        ...NodeCheckpointFileSystem,
        writeAtomic: (p: string, text: string, overwrite: boolean) =>
          failWrites
            ? Effect.fail(new CheckpointError({ reason: "Io", path: p, message: `disk full writing ${p}` }))
            : NodeCheckpointFileSystem.writeAtomic(p, text, overwrite),
        writeAtomicBytes: (p: string, data: Uint8Array, overwrite: boolean) =>
          failWrites
            ? Effect.fail(new CheckpointError({ reason: "Io", path: p, message: `disk full writing ${p}` }))
            : NodeCheckpointFileSystem.writeAtomicBytes!(p, data, overwrite)
      }
      const p = yield* FileStateStoreProvider.make({ maintenanceEveryCommits: 0, fs: flaky })
      const s0 = yield* p.open(spec(cp, -1))
      s0.put("a", 1)
      yield* s0.commit()
      failWrites = true
      const s1 = yield* p.open(spec(cp, 0))
      s1.put("a", 2)
      const err = yield* Effect.flip(s1.commit())
      assert.strictEqual(err.reason, "CommitFailed")
      assert.include(err.message, "disk full")
      failWrites = false
      assert.deepStrictEqual(yield* p.read({ checkpoint: cp, operatorId: 0, storeName: "default", version: 0 }), [
        ["a", 1]
      ])
      const s2 = yield* p.open(spec(cp, 0))
      yield* s2.load(["a"])
      assert.strictEqual(s2.get("a"), 1)
      yield* s2.abort()
    })
  )
})

describe("FileStateStoreProvider: state files of format 1 (text, written before the binary format)", () => {
  it.effect("a checkpoint written in format 1 is read, and its next commit writes format 2", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      const dir = storeDir(cp)
      const write = (name: string, text: string) =>
        NodeCheckpointFileSystem.writeAtomic(path.join(dir, name), text, true)
      // What a previous version wrote: the schema, a snapshot of version 1 and the delta of 2.
      yield* write(path.join("_metadata", "schema"), frame("schema", [encodeSchema(wordSchema)]))
      yield* write("0.delta", encodeDelta([["a", "1"]]))
      yield* write("1.delta", encodeDelta([["b", '{"x":[1,"é",null]}']]))
      yield* write(
        "1.snapshot",
        encodeSnapshot([
          ["a", "1"],
          ["b", '{"x":[1,"é",null]}']
        ])
      )
      yield* write(
        "2.delta",
        encodeDelta([
          ["a", null],
          ["c", "-2.5"]
        ])
      )
      const p = yield* FileStateStoreProvider.make({ maintenanceEveryCommits: 0 })
      const rows = yield* p.read({ checkpoint: cp, operatorId: 0, storeName: "default", version: 2 })
      assert.deepStrictEqual(
        new Map(rows),
        new Map<string, unknown>([
          ["b", { x: [1, "é", null] }],
          ["c", -2.5]
        ])
      )
      const s = yield* p.open(spec(cp, 2))
      assert.deepStrictEqual(s.get("b"), { x: [1, "é", null] })
      s.put("c", (s.get("c") as number) + 1)
      yield* s.commit()
      const delta = yield* Effect.promise(() => fs.readFile(path.join(dir, "3.delta")))
      assert.strictEqual(delta.subarray(0, 24).toString(), "tributary-state delta 2\n")
      // A fresh provider rebuilds version 3 from the format-1 snapshot and deltas plus the new one.
      const q = yield* FileStateStoreProvider.make({ maintenanceEveryCommits: 0 })
      const again = yield* q.read({ checkpoint: cp, operatorId: 0, storeName: "default", version: 3 })
      assert.deepStrictEqual(
        new Map(again),
        new Map<string, unknown>([
          ["b", { x: [1, "é", null] }],
          ["c", -1.5]
        ])
      )
    })
  )

  it.effect("a state file of a later format fails the open with Corrupt naming it", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      const p = yield* FileStateStoreProvider.make({ maintenanceEveryCommits: 0 })
      const s = yield* p.open(spec(cp, -1))
      s.put("a", 1)
      yield* s.commit()
      const file = path.join(storeDir(cp), "0.delta")
      const bytes = yield* Effect.promise(() => fs.readFile(file))
      yield* NodeCheckpointFileSystem.writeAtomicBytes!(
        file,
        Buffer.concat([Buffer.from("tributary-state delta 7\n"), bytes.subarray(24)]),
        true
      )
      const q = yield* FileStateStoreProvider.make({ maintenanceEveryCommits: 0 })
      const err = yield* Effect.flip(q.open(spec(cp, 0)))
      assert.strictEqual(err.reason, "Corrupt")
      assert.include(err.message, file)
      assert.match(err.message, /format 7.*later version/)
    })
  )
})
