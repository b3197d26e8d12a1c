/**
 * State store benchmark: the cost of one micro-batch's state work as the state grows.
 *
 * For each state size (100 K, 1 M and 10 M existing keys; `BENCH_STATE_SIZES` overrides, e.g.
 * `100000,1000000`), a provider is filled with that many keys (500 K-key commits, then one
 * maintenance run that folds them into the base table, as after a long-running query), and then
 * runs `BENCH_STATE_BATCHES` (default 50) batches of 1,000 changed keys each: 900 updates of random
 * existing keys and 100 new keys; every batch opens the store, loads the keys, reads, writes and
 * commits. Reported per size: commit time (median, p90, max; the `commitTimeMs` metric), the
 * time of writing the same batch's changes as one binary changelog file alone (encode with
 * `StateCodec.ts`, `encodeBinaryDelta`, one atomic write with its checksum file: the floor of a
 * commit; issue #16's target is a commit within 2x of it, flat across sizes), load time
 * (median), and whether the hot-key cache held the whole state.
 *
 * Providers run with their default background maintenance (every 10 commits: a DuckDB checkpoint,
 * and compaction once half a retention can be folded) and `minBatchesToRetain` 100, Spark's
 * default (`BENCH_STATE_RETAIN` overrides: 10 makes compaction run every 5 batches).
 *
 * `BENCH_STATE_HOT` (default 0) is the fraction of the 900 updates drawn from the keys the previous
 * 10 batches changed (a hot set), the rest from all keys.
 *
 * Configurations (`BENCH_STATE_CONFIGS`, comma-separated):
 * - `duckdb`: the default provider (256 MiB hot-key cache per store).
 * - `duckdb-lru`: a 16 MiB hot-key cache (about 130 K entries here), so from 1 M keys the state
 *   does not fit and the cache keeps the most recently used keys; misses read DuckDB.
 * - `duckdb-nocache`: `cacheMaxBytes: 0`, so every load reads DuckDB (the cold-read cost).
 * - `memory`: the file provider (in-memory map + delta files), for comparison (sizes <= 1 M).
 *
 * Run: `npm run bench -- statestore` (also part of `npm run bench`), or `node_modules/.bin/node bench/state.ts`.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, type Scope } from "effect"
import * as T from "../core/DataType.ts"
import * as DuckDBStateStoreProvider from "../state/DuckDBStateStoreProvider.ts"
import * as FileStateStoreProvider from "../state/FileStateStoreProvider.ts"
import { NodeCheckpointFileSystem } from "../state/NodeCheckpointFileSystem.ts"
import { BinaryValueCodec } from "../state/StateCodec.ts"
import { encodeBinaryDelta } from "../state/StateFileFormat.ts"
import type { StateSchema, StateStoreProvider } from "../state/StateStore.ts"

const SIZES = (process.env.BENCH_STATE_SIZES ?? "100000,1000000,10000000").split(",").map(Number)
const BATCHES = Number(process.env.BENCH_STATE_BATCHES ?? 50)
const CHANGED = 1000
const FILL_BATCH = 500_000
const RETAIN = Number(process.env.BENCH_STATE_RETAIN ?? 100)
const CONFIGS = (process.env.BENCH_STATE_CONFIGS ?? "duckdb,duckdb-lru,duckdb-nocache,memory").split(",")
const HOT = Number(process.env.BENCH_STATE_HOT ?? 0)

const schema: StateSchema = {
  keySchema: T.struct([T.field("user", T.StringType)]),
  valueSchema: T.struct([T.field("count", T.LongType), T.field("sum", T.DoubleType)])
}

const keyOf = (i: number) => `"user-${i}"`

interface Result {
  readonly config: string
  readonly size: number
  readonly fillSeconds: number
  readonly commitMs: ReadonlyArray<number>
  /** The same batch's changes as one binary changelog file (encode + atomic write), alone: the floor of a commit. */
  readonly changelogMs: ReadonlyArray<number>
  readonly loadMs: ReadonlyArray<number>
  /** Loaded keys found in the hot-key cache, over all batches (DuckDB). */
  readonly hitRate: number | undefined
  readonly cacheComplete: boolean
  readonly memoryMB: number
}

const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}

const run = (
  config: string,
  size: number,
  make: () => Effect.Effect<StateStoreProvider, never, Scope.Scope>
): Effect.Effect<Result, unknown> =>
  Effect.scoped(
    Effect.gen(function* () {
      const checkpoint = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-bench-state-"))),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
      )
      const provider = yield* make()
      const spec = (version: number, minBatchesToRetain = RETAIN) => ({
        checkpoint,
        operatorId: 0,
        storeName: "default",
        schema,
        version,
        minBatchesToRetain
      })
      let version = -1
      const f0 = performance.now()
      // Fill, then fold everything into the base table (snapshot), as after a long-running query.
      for (let from = 0; from <= size; from += FILL_BATCH) {
        const store = yield* provider.open(spec(version, 1))
        const to = Math.min(size, from + FILL_BATCH)
        for (let i = from; i < to; i++) store.put(keyOf(i), [1, i])
        yield* store.commit()
        version++
      }
      yield* provider.maintain()
      const fillSeconds = (performance.now() - f0) / 1000
      let next = size
      let seed = 12345
      const random = () => {
        seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff
        return seed
      }
      const commitMs: Array<number> = []
      const changelogMs: Array<number> = []
      const writeChangelog = NodeCheckpointFileSystem.writeAtomicBytes!
      const loadMs: Array<number> = []
      const recent: Array<ReadonlyArray<string>> = []
      let hits = 0
      let lookups = 0
      let cacheComplete = false
      let memoryMB = 0
      for (let b = 0; b < BATCHES; b++) {
        const keys: Array<string> = []
        const hot = recent.flat()
        for (let i = 0; i < CHANGED - 100; i++) {
          const fromHot = HOT > 0 && hot.length > 0 && random() % 1000 < HOT * 1000
          keys.push(fromHot ? hot[random() % hot.length] : keyOf(random() % size))
        }
        for (let i = 0; i < 100; i++) keys.push(keyOf(next++))
        recent.push(keys)
        if (recent.length > 10) recent.shift()
        const store = yield* provider.open(spec(version))
        const l0 = performance.now()
        yield* store.load(keys)
        loadMs.push(performance.now() - l0)
        const changes = new Map<string, [number, number]>()
        for (const k of keys) {
          const old = store.get(k) as [number, number] | undefined
          const next: [number, number] = old === undefined ? [1, 1] : [old[0] + 1, old[1] + 1]
          store.put(k, next)
          changes.set(k, next)
        }
        const m = yield* store.commit()
        version++
        commitMs.push(m.commitTimeMs)
        // The floor: the batch's changes encoded and written as one binary changelog file.
        const c0 = performance.now()
        const encoded: Array<readonly [string, string]> = []
        for (const [k, v] of changes) encoded.push([k, BinaryValueCodec.encode(v)!])
        yield* writeChangelog(join(checkpoint, `changelog-${b}.bin`), encodeBinaryDelta(encoded), true)
        changelogMs.push(performance.now() - c0)
        hits += m.customMetrics.cacheHitCount ?? 0
        lookups += (m.customMetrics.cacheHitCount ?? 0) + (m.customMetrics.cacheMissCount ?? 0)
        cacheComplete = m.customMetrics.cacheComplete === 1 || config === "memory"
        memoryMB = m.memoryUsedBytes / 1024 / 1024
      }
      const hitRate = lookups === 0 ? undefined : hits / lookups
      return { config, size, fillSeconds, commitMs, changelogMs, loadMs, hitRate, cacheComplete, memoryMB }
    })
  )

const fmt = (n: number) => n.toFixed(1).padStart(7)

const report = (r: Result) =>
  console.log(
    `${r.config.padEnd(17)} ${String(r.size).padStart(9)} keys | commit ms median ${fmt(quantile(r.commitMs, 0.5))} p90 ${fmt(
      quantile(r.commitMs, 0.9)
    )} max ${fmt(Math.max(...r.commitMs))} | changelog write alone median ${fmt(quantile(r.changelogMs, 0.5))} ms, commit / that ${(
      quantile(r.commitMs, 0.5) / quantile(r.changelogMs, 0.5)
    ).toFixed(
      2
    )} | load ms median ${fmt(quantile(r.loadMs, 0.5))} | hits ${r.hitRate === undefined ? "   -" : `${(100 * r.hitRate).toFixed(0).padStart(3)}%`} | cache ${
      r.cacheComplete ? "complete" : "partial "
    } ${fmt(r.memoryMB)} MB | fill ${r.fillSeconds.toFixed(1)} s`
  )

const program = Effect.gen(function* () {
  console.log(
    `${BATCHES} batches of ${CHANGED} changed keys (900 updates, ${Math.round(HOT * 100)}% of them from the previous 10 batches' keys, 100 new) per state size; minBatchesToRetain ${RETAIN}, background maintenance every 10 commits`
  )
  for (const size of SIZES) {
    if (CONFIGS.includes("duckdb")) report(yield* run("duckdb", size, () => DuckDBStateStoreProvider.make()))
    if (CONFIGS.includes("duckdb-lru")) {
      report(
        yield* run("duckdb, 16 MiB", size, () => DuckDBStateStoreProvider.make({ cacheMaxBytes: 16 * 1024 * 1024 }))
      )
    }
    if (CONFIGS.includes("duckdb-nocache")) {
      report(yield* run("duckdb, no cache", size, () => DuckDBStateStoreProvider.make({ cacheMaxBytes: 0 })))
    }
    if (CONFIGS.includes("memory") && size <= 1_000_000)
      report(yield* run("memory", size, () => FileStateStoreProvider.make()))
  }
})

/** Runs the state store benchmark (`npm run bench -- state`, or `node bench/state.ts` alone). */
export const runStateBench = (): Promise<void> => Effect.runPromise(program)

if (import.meta.url === `file://${process.argv[1]}`) {
  await runStateBench().catch((e) => {
    console.error(e)
    process.exitCode = 1
  })
}
