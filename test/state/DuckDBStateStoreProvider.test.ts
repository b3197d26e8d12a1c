/**
 * The DuckDB provider: the shared contract, then what is particular to it: one database file per
 * checkpoint, the bounded hot-key cache (reads of keys not loaded are defects, misses are read
 * in one query), compaction into the base table within the retention, background compaction.
 */
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { DuckDBInstance } from "@duckdb/node-api"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as DuckDBStateStoreProvider from "../../state/DuckDBStateStoreProvider.ts"
import { stateStoreContract, tempCheckpoint, wordSchema } from "./StateStoreContract.ts"

const dbFile = (checkpoint: string) => path.join(checkpoint, "state", "state.duckdb")

stateStoreContract({
  name: "DuckDB",
  make: (options) => DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0, hooks: options?.hooks }),
  damage: [
    {
      name: "every block checksum of state.duckdb overwritten",
      run: async (cp) => {
        const file = dbFile(cp)
        const handle = await fs.open(file, "r+")
        try {
          const { size } = await handle.stat()
          // Three 4 KiB headers, then 256 KiB blocks, each starting with its 8-byte checksum.
          for (let at = 3 * 4096; at < size; at += 256 * 1024) await handle.write(Buffer.alloc(8, 0xa5), 0, 8, at)
        } finally {
          await handle.close()
        }
        return file
      }
    },
    {
      name: "state.duckdb truncated to half",
      run: async (cp) => {
        const file = dbFile(cp)
        const { size } = await fs.stat(file)
        await fs.truncate(file, Math.floor(size / 2))
        return file
      }
    }
  ]
})

const spec = (checkpoint: string, version: number) => ({
  checkpoint,
  operatorId: 0,
  storeName: "default",
  schema: wordSchema,
  version,
  minBatchesToRetain: 2
})

/** Rows of a query on the closed database, for checking what the provider wrote. */
const inspect = (file: string, sql: string) =>
  Effect.promise(async () => {
    const db = await DuckDBInstance.create(file)
    const c = await db.connect()
    try {
      return (await c.runAndReadAll(sql)).getRowsJS()
    } finally {
      c.closeSync()
      db.closeSync()
    }
  })

describe("DuckDBStateStoreProvider", () => {
  it.effect("keeps every operator's stores in one file, <checkpoint>/state/state.duckdb", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      yield* Effect.scoped(
        Effect.gen(function* () {
          const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0 })
          for (const [operatorId, storeName] of [
            [0, "default"],
            [1, "left-keyToNumValues"],
            [1, "right-keyToNumValues"]
          ] as const) {
            const s = yield* p.open({ ...spec(cp, -1), operatorId, storeName })
            s.put("k", storeName)
            yield* s.commit()
          }
        })
      )
      assert.deepStrictEqual(yield* Effect.promise(() => fs.readdir(path.join(cp, "state"))), ["state.duckdb"])
      const stores = yield* inspect(
        dbFile(cp),
        "SELECT operator_id, store_name, base_version FROM tributary_state_stores ORDER BY store_id"
      )
      assert.deepStrictEqual(stores, [
        [0, "default", -1n],
        [1, "left-keyToNumValues", -1n],
        [1, "right-keyToNumValues", -1n]
      ])
      // The log holds (version, key, value JSON); removals are NULL values.
      assert.deepStrictEqual(yield* inspect(dbFile(cp), "SELECT version, key, value FROM state_2_log"), [
        [0n, "k", '"left-keyToNumValues"']
      ])
    })
  )

  it.effect("with a small cache, get of a key not loaded is a defect; load reads misses in one query", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0, cacheMaxBytes: 2_000 })
      const s0 = yield* p.open(spec(cp, -1))
      for (let i = 0; i < 200; i++) s0.put(`k${i}`, i)
      const m0 = yield* s0.commit()
      assert.strictEqual(m0.numRowsTotal, 200)
      assert.strictEqual(m0.customMetrics.cacheComplete, 0, "200 entries do not fit 2,000 bytes")
      assert.isAtMost(m0.memoryUsedBytes, 2_000)
      const s1 = yield* p.open(spec(cp, 0))
      yield* s1.load(["k1", "k150", "nope"])
      assert.strictEqual(s1.get("k1"), 1)
      assert.strictEqual(s1.get("k150"), 150)
      assert.strictEqual(s1.get("nope"), undefined)
      assert.throws(() => s1.get("k2"), /not loaded/)
      // Removing keys that were not loaded: commit reads them to count the removals.
      s1.remove("k3")
      s1.remove("k4")
      s1.remove("absent")
      const m1 = yield* s1.commit()
      assert.deepStrictEqual([m1.numRowsTotal, m1.numRowsRemoved], [198, 2])
      assert.strictEqual(m1.customMetrics.cacheMissCount >= 3, true)
      const s2 = yield* p.open(spec(cp, 1))
      assert.strictEqual([...(yield* s2.scan())].length, 198)
      yield* s2.load(["k3", "k5"])
      assert.strictEqual(s2.get("k3"), undefined)
      assert.strictEqual(s2.get("k5"), 5)
      yield* s2.abort()
    })
  )

  it.effect("a version that fits the cache is loaded whole at open; later batches read nothing from DuckDB", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      yield* Effect.scoped(
        Effect.gen(function* () {
          const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0 })
          const s = yield* p.open(spec(cp, -1))
          for (let i = 0; i < 1000; i++) s.put(`k${i}`, { count: i })
          yield* s.commit()
        })
      )
      const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0 })
      const s1 = yield* p.open(spec(cp, 0))
      yield* s1.load(["k7", "zzz"])
      assert.deepStrictEqual(s1.get("k7"), { count: 7 })
      s1.put("zzz", { count: -1 })
      const m1 = yield* s1.commit()
      assert.strictEqual(m1.numRowsLoaded, 1000, "the restart loaded version 0 once")
      assert.strictEqual(m1.customMetrics.cacheComplete, 1)
      const s2 = yield* p.open(spec(cp, 1))
      yield* s2.load(["k8", "zzz", "new"])
      assert.deepStrictEqual(s2.get("zzz"), { count: -1 })
      const m2 = yield* s2.commit()
      assert.strictEqual(m2.numRowsLoaded, 0)
      assert.strictEqual(m2.customMetrics.cacheMissCount, 0)
    })
  )

  it.effect("compaction folds the log into the base table, keeping minBatchesToRetain versions", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      yield* Effect.scoped(
        Effect.gen(function* () {
          const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0, cacheMaxBytes: 0 })
          for (let v = -1; v < 9; v++) {
            const s = yield* p.open(spec(cp, v))
            s.put("counter", v + 1)
            s.put(`only${v + 1}`, true)
            if (v >= 0) s.remove(`only${v}`)
            yield* s.commit()
          }
          yield* p.maintain()
          // Version 9 is the latest; minBatchesToRetain = 2 keeps 7, 8 and 9.
          const r7 = yield* p.read({ checkpoint: cp, operatorId: 0, storeName: "default", version: 7 })
          assert.deepStrictEqual(Object.fromEntries(r7), { counter: 7, only7: true })
          const old = yield* Effect.exit(p.read({ checkpoint: cp, operatorId: 0, storeName: "default", version: 6 }))
          assert.isTrue(Exit.isFailure(old))
        })
      )
      const file = dbFile(cp)
      assert.deepStrictEqual(yield* inspect(file, "SELECT base_version FROM tributary_state_stores"), [[7n]])
      assert.deepStrictEqual(yield* inspect(file, "SELECT key, value FROM state_1_base ORDER BY key"), [
        ["counter", "7"],
        ["only7", "true"]
      ])
      assert.deepStrictEqual(yield* inspect(file, "SELECT DISTINCT version FROM state_1_log ORDER BY version"), [
        [8n],
        [9n]
      ])
      assert.deepStrictEqual(yield* inspect(file, "SELECT version FROM tributary_state_versions ORDER BY version"), [
        [7n],
        [8n],
        [9n]
      ])
    })
  )

  it.effect("compaction never passes a version an open store is using", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0, cacheMaxBytes: 0 })
      for (let v = -1; v < 5; v++) {
        const s = yield* p.open(spec(cp, v))
        s.put(`k${v + 1}`, v + 1)
        yield* s.commit()
      }
      const reader = yield* p.open(spec(cp, 1))
      yield* p.maintain()
      yield* reader.load(["k0", "k1", "k2"])
      assert.deepStrictEqual([reader.get("k0"), reader.get("k1"), reader.get("k2")], [0, 1, undefined])
      yield* reader.abort()
      yield* p.maintain()
      const gone = yield* Effect.exit(p.read({ checkpoint: cp, operatorId: 0, storeName: "default", version: 1 }))
      assert.isTrue(Exit.isFailure(gone))
    })
  )

  it.effect("compacts in the background every maintenanceEveryCommits commits", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      yield* Effect.scoped(
        Effect.gen(function* () {
          const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 5 })
          for (let v = -1; v < 12; v++) {
            const s = yield* p.open(spec(cp, v))
            s.put("k", v + 1)
            yield* s.commit()
          }
        })
      )
      // The first background run started after the 5th commit (latest 4 - retain 2 = 2); closing
      // waited for whatever run was still going. (A run is skipped while another is running.)
      const [[base]] = (yield* inspect(dbFile(cp), "SELECT base_version FROM tributary_state_stores")) as Array<
        [bigint]
      >
      assert.isAtLeast(Number(base), 2)
      const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0 })
      assert.deepStrictEqual(yield* p.read({ checkpoint: cp, operatorId: 0, storeName: "default", version: 12 }), [
        ["k", 12]
      ])
      assert.deepStrictEqual(yield* p.read({ checkpoint: cp, operatorId: 0, storeName: "default", version: 10 }), [
        ["k", 10]
      ])
    })
  )
})

describe("DuckDBStateStoreProvider, one writer per database file", () => {
  it.effect("a second provider of this process cannot open a checkpoint's state while the first holds it", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      const first = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0 })
      const s = yield* first.open(spec(cp, -1))
      s.put("a", 1)
      yield* s.commit()
      const second = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0 })
      const err = yield* Effect.flip(second.open(spec(cp, 0)))
      assert.strictEqual(err.reason, "InvalidUsage")
      assert.include(err.message, "in use by another query or process")
      yield* first.close()
      assert.deepStrictEqual(yield* second.read({ checkpoint: cp, operatorId: 0, storeName: "default", version: 0 }), [
        ["a", 1]
      ])
    })
  )
})
