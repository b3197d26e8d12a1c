/**
 * The DuckDB provider's hot-key cache against DuckDB itself: the same random batches (loads,
 * gets, puts, removes; commits and aborts; restarts) through a provider whose cache holds the
 * whole state, one whose cache holds a few keys (least recently used evicted) and one without a
 * cache must read exactly what a plain model says; the small cache stays within its budget, and
 * keys the previous batch touched are read from memory, not DuckDB.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as DuckDBStateStoreProvider from "../../state/DuckDBStateStoreProvider.ts"
import { entryBytes } from "../../state/KeyCache.ts"
import type { StateStoreProvider } from "../../state/StateStore.ts"
import { tempCheckpoint, wordSchema } from "./StateStoreContract.ts"

const spec = (checkpoint: string, version: number) => ({
  checkpoint,
  operatorId: 0,
  storeName: "default",
  schema: wordSchema,
  version,
  minBatchesToRetain: 100
})

/** Room for about 12 entries of this test's size (`k<nn>` → `{"count":<n>}`). */
const SMALL = 12 * entryBytes("k00", '{"count":1000}')

const configs = [
  { name: "whole state", cacheMaxBytes: undefined },
  { name: "small LRU", cacheMaxBytes: SMALL },
  { name: "no cache", cacheMaxBytes: 0 }
] as const

describe("DuckDB hot-key cache", () => {
  it.effect(
    "cached reads equal uncached reads across commits, aborts and restarts; the small cache stays bounded",
    () =>
      Effect.gen(function* () {
        const cps = yield* Effect.forEach(configs, () => tempCheckpoint())
        const make = (i: number) =>
          DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 4, cacheMaxBytes: configs[i].cacheMaxBytes })
        const providers: Array<StateStoreProvider> = []
        for (let i = 0; i < configs.length; i++) providers.push(yield* make(i))
        /** The committed state, as a plain map. */
        const model = new Map<string, number>()
        let version = -1
        let seed = 20261130
        const random = (n: number) => {
          seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff
          return seed % n
        }
        let previousKeys: Array<string> = []
        for (let batch = 0; batch < 10; batch++) {
          // Half the keys again from the previous batch (hot), half from a space of 60 keys.
          const keys = [
            ...previousKeys.slice(0, 4),
            ...Array.from({ length: 4 }, () => `k${String(random(60)).padStart(2, "0")}`)
          ]
          const commit = random(5) !== 0
          const ops = keys.map((k) => ({ key: k, remove: random(4) === 0, value: random(1000) }))
          const next = new Map(model)
          for (const op of ops) {
            if (op.remove) next.delete(op.key)
            else next.set(op.key, op.value)
          }
          for (let i = 0; i < providers.length; i++) {
            const store = yield* providers[i].open(spec(cps[i], version))
            yield* store.load(keys)
            const local = new Map(model)
            for (const op of ops) {
              const expected = local.get(op.key)
              assert.deepStrictEqual(
                store.get(op.key),
                expected === undefined ? undefined : { count: expected },
                `${configs[i].name}, batch ${batch}: get(${op.key})`
              )
              if (op.remove) {
                store.remove(op.key)
                local.delete(op.key)
              } else {
                store.put(op.key, { count: op.value })
                local.set(op.key, op.value)
              }
            }
            if (!commit) {
              yield* store.abort()
              continue
            }
            const m = yield* store.commit()
            assert.strictEqual(m.numRowsTotal, local.size, `${configs[i].name}, batch ${batch}: rows`)
            if (configs[i].cacheMaxBytes === SMALL) assert.isAtMost(m.memoryUsedBytes, SMALL)
            if (configs[i].cacheMaxBytes === 0) assert.strictEqual(m.memoryUsedBytes, 0)
          }
          if (commit) {
            model.clear()
            for (const [k, v] of next) model.set(k, v)
            version++
            previousKeys = keys
          }
          // Every few versions: each reads the same through every provider, whole (scan).
          if (batch % 3 === 2) {
            for (let i = 0; i < providers.length; i++) {
              const store = yield* providers[i].open(spec(cps[i], version))
              const scanned = new Map([...(yield* store.scan())].map(([k, v]) => [k, (v as { count: number }).count]))
              assert.deepStrictEqual(scanned, model, `${configs[i].name}, batch ${batch}: scan`)
              yield* store.abort()
            }
          }
          // A restart: a new provider over the same files (its cache starts empty).
          if (batch === 5) {
            for (let i = 0; i < providers.length; i++) {
              yield* providers[i].close()
              providers[i] = yield* make(i)
            }
          }
        }
        assert.isAbove(version, 4, "most batches committed")
      }),
    60_000
  )

  it.effect("keys the previous batches touched are read from memory; misses beyond the budget go to DuckDB", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0, cacheMaxBytes: SMALL })
      // 40 keys do not fit: the cache keeps the most recently written ones.
      const s0 = yield* p.open(spec(cp, -1))
      for (let i = 0; i < 40; i++) s0.put(`k${String(i).padStart(2, "0")}`, { count: i })
      const m0 = yield* s0.commit()
      assert.strictEqual(m0.customMetrics.cacheComplete, 0)
      // The last keys written are hits; old ones are misses, read once and then cached.
      const s1 = yield* p.open(spec(cp, 0))
      yield* s1.load(["k39", "k38", "k00", "k01"])
      assert.deepStrictEqual([s1.get("k39"), s1.get("k00")], [{ count: 39 }, { count: 0 }])
      s1.put("k00", { count: 100 })
      const m1 = yield* s1.commit()
      assert.deepStrictEqual([m1.customMetrics.cacheHitCount, m1.customMetrics.cacheMissCount], [2, 2])
      // Batch 2 touches what batch 1 touched: all hits, nothing read from DuckDB.
      const s2 = yield* p.open(spec(cp, 1))
      yield* s2.load(["k39", "k38", "k00", "k01"])
      assert.deepStrictEqual(s2.get("k00"), { count: 100 })
      assert.deepStrictEqual(s2.get("k01"), { count: 1 })
      const m2 = yield* s2.commit()
      assert.deepStrictEqual([m2.customMetrics.cacheHitCount, m2.customMetrics.cacheMissCount], [4, 0])
      assert.isAtMost(m2.memoryUsedBytes, SMALL)
    })
  )
})
