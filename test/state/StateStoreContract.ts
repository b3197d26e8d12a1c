/**
 * The contract every state store provider passes (`stateStoreContract(harness)`), after Spark's
 * `StateStoreSuiteBase`: versions are batch ids; commit is atomic (a failed commit leaves the
 * previous version intact); abort discards; a store opens (and reads) at any retained version;
 * `rollbackTo` discards versions a restart found committed to the store but not to the commit
 * log; retention keeps `minBatchesToRetain` versions and purges older ones after maintenance;
 * key and value schemas are stored and checked (Spark's `StateSchemaCompatibilityChecker`);
 * damaged files are detected and named; metrics; and a fast-check property: random put/remove
 * sequences over commits, aborts and restarts equal a `Map` model.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, type Scope } from "effect"
import * as fc from "fast-check"
import * as T from "../../core/DataType.ts"
import { StateStoreError } from "../../core/Errors.ts"
import type { StateSchema, StateStore, StateStoreHooks, StateStoreProvider } from "../../state/StateStore.ts"

export interface ContractHarness {
  readonly name: string
  /**
   * A provider with maintenance only on `maintain()` (so tests decide when it runs), and the
   * most aggressive snapshot/compaction settings the provider has.
   */
  readonly make: (options?: {
    readonly hooks?: StateStoreHooks
  }) => Effect.Effect<StateStoreProvider, never, Scope.Scope>
  /** Ways to damage a closed checkpoint's state; each returns the path the error must name. */
  readonly damage: ReadonlyArray<{ readonly name: string; readonly run: (checkpoint: string) => Promise<string> }>
}

export const wordSchema: StateSchema = {
  keySchema: T.struct([T.field("word", T.StringType)]),
  valueSchema: T.struct([T.field("count", T.LongType, false)])
}

/** A fresh checkpoint folder for one test, removed afterwards. */
export const tempCheckpoint = (): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "tributary-state-"))),
    (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
  )

const spec = (
  checkpoint: string,
  version: number,
  extra: Partial<{
    operatorId: number
    storeName: string
    schema: StateSchema
    minBatchesToRetain: number
    checkSchema: boolean
  }> = {}
) => ({
  checkpoint,
  operatorId: extra.operatorId ?? 0,
  storeName: extra.storeName ?? "default",
  schema: extra.schema ?? wordSchema,
  version,
  minBatchesToRetain: extra.minBatchesToRetain ?? 100,
  checkSchema: extra.checkSchema
})

const id = (checkpoint: string, version: number, extra: Partial<{ operatorId: number; storeName: string }> = {}) => ({
  checkpoint,
  operatorId: extra.operatorId ?? 0,
  storeName: extra.storeName ?? "default",
  version
})

/** Every entry of a scan, sorted by key, as a plain object. */
const entries = (it: Iterable<readonly [string, unknown]>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of [...it].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) out[k] = v
  return out
}

/** Opens at `version`, applies `changes` (undefined: remove), commits. */
const commitBatch = (
  provider: StateStoreProvider,
  checkpoint: string,
  version: number,
  changes: Record<string, unknown>,
  extra: Parameters<typeof spec>[2] = {}
) =>
  Effect.gen(function* () {
    const store = yield* provider.open(spec(checkpoint, version, extra))
    yield* store.load(Object.keys(changes))
    for (const [k, v] of Object.entries(changes)) {
      if (v === undefined) store.remove(k)
      else store.put(k, v)
    }
    return yield* store.commit()
  })

const readAll = (
  provider: StateStoreProvider,
  checkpoint: string,
  version: number,
  extra: Partial<{ operatorId: number; storeName: string }> = {}
) => Effect.map(provider.read(id(checkpoint, version, extra)), entries)

const failure = <A>(self: Effect.Effect<A, StateStoreError>) =>
  Effect.map(Effect.exit(self), (exit) => {
    if (Exit.isSuccess(exit)) assert.fail("expected a StateStoreError, got success")
    const err = exit.cause.reasons.find((r) => r._tag === "Fail")
    if (err === undefined || !(err.error instanceof StateStoreError))
      assert.fail(`expected a StateStoreError, got ${String(exit.cause)}`)
    return err.error as StateStoreError
  })

export const stateStoreContract = (h: ContractHarness): void => {
  describe(`StateStore contract: ${h.name}`, () => {
    it.effect("versions are batch ids: -1 is empty, each commit writes version + 1", () =>
      Effect.gen(function* () {
        const cp = yield* tempCheckpoint()
        const provider = yield* h.make()
        assert.strictEqual(yield* provider.latestVersion(id(cp, -1)), -1)
        const s0 = yield* provider.open(spec(cp, -1))
        assert.strictEqual(s0.version, -1)
        assert.strictEqual(s0.operatorId, 0)
        assert.strictEqual(s0.storeName, "default")
        yield* s0.load(["a"])
        assert.strictEqual(s0.get("a"), undefined)
        s0.put("a", { count: 1 })
        s0.put("b", [1, "x", null])
        const m0 = yield* s0.commit()
        assert.strictEqual(m0.numRowsTotal, 2)
        assert.strictEqual(yield* provider.latestVersion(id(cp, -1)), 0)
        const s1 = yield* provider.open(spec(cp, 0))
        assert.strictEqual(s1.version, 0)
        yield* s1.load(["a", "b", "c"])
        assert.deepStrictEqual(s1.get("a"), { count: 1 })
        assert.deepStrictEqual(s1.get("b"), [1, "x", null])
        assert.strictEqual(s1.get("c"), undefined)
        s1.put("c", null)
        yield* s1.commit()
        assert.strictEqual(yield* provider.latestVersion(id(cp, -1)), 1)
        assert.deepStrictEqual(yield* readAll(provider, cp, 1), { a: { count: 1 }, b: [1, "x", null], c: null })
        assert.deepStrictEqual(yield* readAll(provider, cp, 0), { a: { count: 1 }, b: [1, "x", null] })
        assert.deepStrictEqual(yield* readAll(provider, cp, -1), {})
      })
    )

    it.effect("get sees this batch's changes and returns copies; scan merges committed and uncommitted", () =>
      Effect.gen(function* () {
        const cp = yield* tempCheckpoint()
        const provider = yield* h.make()
        yield* commitBatch(provider, cp, -1, { a: { n: 1 }, b: { n: 2 }, c: { n: 3 } })
        const s = yield* provider.open(spec(cp, 0))
        yield* s.load(["a", "b", "c", "d"])
        const a = s.get("a") as { n: number }
        a.n = 100
        assert.deepStrictEqual(s.get("a"), { n: 1 }, "changing what get returned does not change the store")
        const v = { n: 7 }
        s.put("d", v)
        v.n = 8
        assert.deepStrictEqual(s.get("d"), { n: 7 }, "put serialises at once")
        s.remove("b")
        assert.strictEqual(s.get("b"), undefined)
        s.put("c", { n: 33 })
        assert.deepStrictEqual(entries(yield* s.scan()), { a: { n: 1 }, c: { n: 33 }, d: { n: 7 } })
        yield* s.commit()
        assert.deepStrictEqual(yield* readAll(provider, cp, 1), { a: { n: 1 }, c: { n: 33 }, d: { n: 7 } })
      })
    )

    it.effect("abort discards the batch; the store stays at its version", () =>
      Effect.gen(function* () {
        const cp = yield* tempCheckpoint()
        const provider = yield* h.make()
        yield* commitBatch(provider, cp, -1, { a: 1 })
        const s = yield* provider.open(spec(cp, 0))
        yield* s.load(["a"])
        s.put("a", 2)
        s.put("b", 3)
        yield* s.abort()
        assert.strictEqual(yield* provider.latestVersion(id(cp, -1)), 0)
        const again = yield* provider.open(spec(cp, 0))
        yield* again.load(["a", "b"])
        assert.strictEqual(again.get("a"), 1)
        assert.strictEqual(again.get("b"), undefined)
        yield* again.abort()
        // A finished store refuses further use.
        assert.strictEqual((yield* failure(s.commit())).reason, "InvalidUsage")
        assert.throws(() => s.put("x", 1))
      })
    )

    it.effect("one writer per store: a second open before commit or abort is refused", () =>
      Effect.gen(function* () {
        const cp = yield* tempCheckpoint()
        const provider = yield* h.make()
        const s = yield* provider.open(spec(cp, -1))
        assert.strictEqual((yield* failure(provider.open(spec(cp, -1)))).reason, "InvalidUsage")
        // Other stores of the same operator and other operators are independent.
        const other = yield* provider.open(spec(cp, -1, { storeName: "left-keyToNumValues" }))
        const op1 = yield* provider.open(spec(cp, -1, { operatorId: 1 }))
        s.put("k", "default")
        other.put("k", "left")
        op1.put("k", "op1")
        yield* s.commit()
        yield* other.commit()
        yield* op1.commit()
        assert.deepStrictEqual(yield* readAll(provider, cp, 0), { k: "default" })
        assert.deepStrictEqual(yield* readAll(provider, cp, 0, { storeName: "left-keyToNumValues" }), { k: "left" })
        assert.deepStrictEqual(yield* readAll(provider, cp, 0, { operatorId: 1 }), { k: "op1" })
      })
    )

    it.effect("a failed commit leaves the previous version intact, also after a restart", () =>
      Effect.gen(function* () {
        const cp = yield* tempCheckpoint()
        let fail = false
        const hooks: StateStoreHooks = {
          beforeCommitPublish: () => (fail ? Effect.fail("injected failure") : Effect.void)
        }
        yield* Effect.scoped(
          Effect.gen(function* () {
            const provider = yield* h.make({ hooks })
            yield* commitBatch(provider, cp, -1, { a: 1, b: 2 })
            fail = true
            const err = yield* failure(commitBatch(provider, cp, 0, { a: 10, b: undefined, c: 3 }))
            assert.strictEqual(err.reason, "CommitFailed")
            assert.include(err.message, "injected failure")
            assert.strictEqual(yield* provider.latestVersion(id(cp, -1)), 0)
            assert.deepStrictEqual(yield* readAll(provider, cp, 0), { a: 1, b: 2 })
            // The store is free again, and the same batch can be committed.
            fail = false
            yield* commitBatch(provider, cp, 0, { a: 10 })
            fail = true
            yield* failure(commitBatch(provider, cp, 1, { z: 26 }))
          })
        )
        const provider = yield* h.make()
        assert.strictEqual(yield* provider.latestVersion(id(cp, -1)), 1)
        assert.deepStrictEqual(yield* readAll(provider, cp, 1), { a: 10, b: 2 })
        const s = yield* provider.open(spec(cp, 1))
        yield* s.load(["z"])
        assert.strictEqual(s.get("z"), undefined)
        yield* s.abort()
      })
    )

    it.effect("opens and reads any retained version; committing below the latest needs rollbackTo", () =>
      Effect.gen(function* () {
        const cp = yield* tempCheckpoint()
        const provider = yield* h.make()
        for (let v = -1; v < 5; v++) yield* commitBatch(provider, cp, v, { [`k${v + 1}`]: v + 1, shared: v + 1 })
        for (let v = 0; v <= 5; v++) {
          const expected: Record<string, unknown> = { shared: v }
          for (let i = 0; i <= v; i++) expected[`k${i}`] = i
          assert.deepStrictEqual(yield* readAll(provider, cp, v), expected, `version ${v}`)
        }
        const old = yield* provider.open(spec(cp, 2))
        yield* old.load(["shared", "k3"])
        assert.strictEqual(old.get("shared"), 2)
        assert.strictEqual(old.get("k3"), undefined)
        old.put("shared", 99)
        const err = yield* failure(old.commit())
        assert.strictEqual(err.reason, "InvalidUsage")
        assert.include(err.message, "rollbackTo(2)")
        assert.strictEqual((yield* failure(provider.open(spec(cp, 6)))).reason, "VersionNotFound")
        assert.strictEqual((yield* failure(provider.read(id(cp, 6)))).reason, "VersionNotFound")
      })
    )

    it.effect("rollbackTo discards versions committed to the store but not to the commit log, across a restart", () =>
      Effect.gen(function* () {
        const cp = yield* tempCheckpoint()
        yield* Effect.scoped(
          Effect.gen(function* () {
            const provider = yield* h.make()
            yield* commitBatch(provider, cp, -1, { a: 1 })
            yield* commitBatch(provider, cp, 0, { a: 2, b: 1 })
            yield* commitBatch(provider, cp, 1, { a: 3, b: undefined })
          })
        )
        // "Restart": the commit log ends at batch 0, so versions 1 and 2 must go.
        const provider = yield* h.make()
        assert.strictEqual(yield* provider.latestVersion(id(cp, -1)), 2)
        yield* provider.rollbackTo(id(cp, 0))
        assert.strictEqual(yield* provider.latestVersion(id(cp, -1)), 0)
        assert.strictEqual((yield* failure(provider.read(id(cp, 1)))).reason, "VersionNotFound")
        const m = yield* commitBatch(provider, cp, 0, { c: 5 })
        assert.strictEqual(m.numRowsTotal, 2)
        assert.deepStrictEqual(yield* readAll(provider, cp, 1), { a: 1, c: 5 })
        yield* provider.rollbackTo(id(cp, 1))
        assert.strictEqual((yield* failure(provider.rollbackTo(id(cp, 7)))).reason, "VersionNotFound")
        // rollbackTo(-1) empties the store.
        yield* provider.rollbackTo(id(cp, -1))
        assert.strictEqual(yield* provider.latestVersion(id(cp, -1)), -1)
        assert.deepStrictEqual(yield* readAll(provider, cp, -1), {})
        yield* commitBatch(provider, cp, -1, { fresh: true })
        assert.deepStrictEqual(yield* readAll(provider, cp, 0), { fresh: true })
      })
    )

    it.effect(
      "retention: after maintenance every version within minBatchesToRetain stays openable, older ones go",
      () =>
        Effect.gen(function* () {
          const cp = yield* tempCheckpoint()
          const retain = 3
          const provider = yield* h.make()
          const model = new Map<string, number>()
          /** states[v]: the state of version v. */
          const states: Array<Record<string, unknown>> = []
          for (let v = -1; v < 30; v++) {
            const changes: Record<string, unknown> = { [`k${(v + 1) % 7}`]: v + 1, [`r${v + 1}`]: 1 }
            if (v >= 0) changes[`r${v}`] = undefined
            yield* commitBatch(provider, cp, v, changes, { minBatchesToRetain: retain })
            for (const [k, x] of Object.entries(changes)) {
              if (x === undefined) model.delete(k)
              else model.set(k, x as number)
            }
            states.push(entries(model))
            yield* provider.maintain()
          }
          for (let v = 30 - retain; v <= 30; v++) {
            assert.deepStrictEqual(yield* readAll(provider, cp, v), states[v], `version ${v}`)
          }
          const s = yield* provider.open(spec(cp, 30 - retain, { minBatchesToRetain: retain }))
          yield* s.load(["k0", "r27"])
          assert.strictEqual(s.get("r27"), 1)
          yield* s.abort()
          assert.strictEqual((yield* failure(provider.read(id(cp, 5)))).reason, "VersionNotFound")
          assert.strictEqual((yield* failure(provider.open(spec(cp, 0)))).reason, "VersionNotFound")
          // The retained state survives a restart too.
          yield* provider.close()
          const again = yield* Effect.scoped(Effect.flatMap(h.make(), (p2) => readAll(p2, cp, 30 - retain)))
          assert.deepStrictEqual(again, states[30 - retain])
        })
    )

    it.effect("stores the schema on first open and checks it on restart (Spark's compatibility rules)", () =>
      Effect.gen(function* () {
        const cp = yield* tempCheckpoint()
        yield* Effect.scoped(
          Effect.flatMap(h.make(), (p) => commitBatch(p, cp, -1, { a: { count: 1 } }, { operatorId: 3 }))
        )
        const provider = yield* h.make()
        const open = (schema: StateSchema, checkSchema?: boolean) =>
          Effect.flatMap(provider.open(spec(cp, 0, { operatorId: 3, schema, checkSchema: checkSchema ?? true })), (s) =>
            s.abort()
          )

        const changedType = yield* failure(
          open({ ...wordSchema, valueSchema: T.struct([T.field("count", T.StringType, false)]) })
        )
        assert.strictEqual(changedType.reason, "SchemaIncompatible")
        assert.strictEqual(changedType.operatorId, 3)
        assert.include(changedType.message, "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE")
        assert.include(changedType.message, "operator 3")
        assert.include(changedType.message, "field 'count' changed type from bigint to string")

        const keyChanged = yield* failure(
          open({ ...wordSchema, keySchema: T.struct([T.field("word", T.IntegerType)]) })
        )
        assert.include(keyChanged.message, "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE")
        assert.include(keyChanged.message, "field 'word' changed type from string to int")

        const added = yield* failure(
          open({
            ...wordSchema,
            valueSchema: T.struct([T.field("count", T.LongType, false), T.field("extra", T.StringType, true)])
          })
        )
        assert.include(added.message, "added 'extra'")

        const nullable = yield* failure(
          open({ ...wordSchema, valueSchema: T.struct([T.field("count", T.LongType, true)]) })
        )
        assert.include(nullable.message, "field 'count' became nullable")

        // Compatible: a renamed field (Spark compares positions and types, not names), and
        // a nullable key field becoming non-nullable.
        yield* open({ ...wordSchema, valueSchema: T.struct([T.field("cnt", T.LongType, false)]) })
        yield* open({ ...wordSchema, keySchema: T.struct([T.field("word", T.StringType, false)]) })
        // spark.sql.streaming.stateStore.stateSchemaCheck=false skips the check.
        yield* open({ ...wordSchema, valueSchema: T.struct([T.field("count", T.StringType)]) }, false)
        // ... and is not remembered: with the check on, the same schema fails again.
        yield* failure(open({ ...wordSchema, valueSchema: T.struct([T.field("count", T.StringType)]) }))
        // The original still opens: the compatible schemas did not replace the stored one.
        yield* open(wordSchema)
        yield* failure(open({ ...wordSchema, valueSchema: T.struct([T.field("count", T.DoubleType, false)]) }))
      })
    )

    it.effect("metrics: rows total, updated, removed; no-op changes count nothing", () =>
      Effect.gen(function* () {
        const cp = yield* tempCheckpoint()
        const provider = yield* h.make()
        const m0 = yield* commitBatch(provider, cp, -1, { a: 1, b: 2, c: 3 })
        assert.deepStrictEqual([m0.numRowsTotal, m0.numRowsUpdated, m0.numRowsRemoved], [3, 3, 0])
        assert.isAtLeast(m0.commitTimeMs, 0)
        assert.isAbove(m0.memoryUsedBytes, 0)
        // Update one, remove one, remove an absent key, add then remove a new key.
        const s = yield* provider.open(spec(cp, 0))
        yield* s.load(["a", "b", "zz", "new"])
        s.put("a", 10)
        s.remove("b")
        s.remove("zz")
        s.put("new", 1)
        s.remove("new")
        const m1 = yield* s.commit()
        assert.deepStrictEqual([m1.numRowsTotal, m1.numRowsUpdated, m1.numRowsRemoved], [2, 1, 1])
        // Removing keys that were never loaded still counts only the ones that existed.
        const s2 = yield* provider.open(spec(cp, 1))
        s2.remove("a")
        s2.remove("nope")
        s2.put("d", 4)
        const m2 = yield* s2.commit()
        assert.deepStrictEqual([m2.numRowsTotal, m2.numRowsUpdated, m2.numRowsRemoved], [2, 1, 1])
        assert.deepStrictEqual(yield* readAll(provider, cp, 2), { c: 3, d: 4 })
        // An empty batch is a version too.
        const m3 = yield* commitBatch(provider, cp, 2, {})
        assert.deepStrictEqual([m3.numRowsTotal, m3.numRowsUpdated, m3.numRowsRemoved], [2, 0, 0])
        assert.strictEqual(yield* provider.latestVersion(id(cp, -1)), 3)
      })
    )

    for (const d of h.damage) {
      it.effect(`a damaged file is detected and named: ${d.name}`, () =>
        Effect.gen(function* () {
          const cp = yield* tempCheckpoint()
          yield* Effect.scoped(
            Effect.gen(function* () {
              const provider = yield* h.make()
              let v = -1
              for (let b = 0; b < 4; b++) {
                const changes: Record<string, unknown> = {}
                for (let i = 0; i < 500; i++) changes[`key-${b}-${i}`] = { count: i, pad: "x".repeat(40) }
                yield* commitBatch(provider, cp, v++, changes)
              }
            })
          )
          const damaged = yield* Effect.promise(() => d.run(cp))
          const provider = yield* h.make()
          const err = yield* failure(
            Effect.gen(function* () {
              const s = yield* provider.open(spec(cp, 3))
              yield* s.scan()
              yield* s.abort()
              yield* provider.read(id(cp, 3))
            })
          )
          assert.strictEqual(err.reason, "Corrupt", err.message)
          assert.include(err.message, damaged)
        })
      )
    }

    it("property: random put/remove sequences across commits, aborts and restarts equal a Map model", async () => {
      type Op =
        | { readonly _tag: "put"; readonly key: string; readonly value: number | string | null }
        | { readonly _tag: "remove"; readonly key: string }
      type Step =
        | { readonly _tag: "batch"; readonly ops: ReadonlyArray<Op>; readonly abort: boolean }
        | { readonly _tag: "restart" }
        | { readonly _tag: "maintain" }
      // "\u0000" is core/Ordering.ts keyString's null; keys embed it in composite keys too.
      const keys = ["a", "b", "c", "d", "e", "f", "g", 'q"uote', "tab\tkey", "üñí", "\u0000", "{\u0000,1}", "x\ny"]
      const key = fc.constantFrom(...keys)
      const op: fc.Arbitrary<Op> = fc.oneof(
        fc.record({
          _tag: fc.constant("put" as const),
          key,
          value: fc.oneof(fc.integer(), fc.string(), fc.constant(null))
        }),
        fc.record({ _tag: fc.constant("remove" as const), key })
      )
      const step: fc.Arbitrary<Step> = fc.oneof(
        {
          weight: 6,
          arbitrary: fc.record({
            _tag: fc.constant("batch" as const),
            ops: fc.array(op, { maxLength: 12 }),
            abort: fc.boolean()
          })
        },
        { weight: 1, arbitrary: fc.constant({ _tag: "restart" as const }) },
        { weight: 1, arbitrary: fc.constant({ _tag: "maintain" as const }) }
      )
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 14 }), (steps) =>
          Effect.runPromise(
            Effect.scoped(
              Effect.gen(function* () {
                const cp = yield* tempCheckpoint()
                const model = new Map<string, unknown>()
                const history: Array<Record<string, unknown>> = [{}]
                let version = -1
                let provider: StateStoreProvider | undefined
                const current = (): Effect.Effect<StateStoreProvider, never, Scope.Scope> =>
                  provider !== undefined ? Effect.succeed(provider) : Effect.map(h.make(), (p) => (provider = p))
                for (const s of steps) {
                  if (s._tag === "restart") {
                    if (provider !== undefined) yield* provider.close()
                    provider = undefined
                    continue
                  }
                  const p = yield* current()
                  if (s._tag === "maintain") {
                    yield* p.maintain()
                    continue
                  }
                  const store: StateStore = yield* p.open(spec(cp, version, { minBatchesToRetain: 2 }))
                  yield* store.load(s.ops.map((o) => o.key))
                  const next = new Map(model)
                  for (const o of s.ops) {
                    if (o._tag === "put") {
                      store.put(o.key, o.value)
                      next.set(o.key, o.value)
                    } else {
                      store.remove(o.key)
                      next.delete(o.key)
                    }
                    const expected = next.get(o.key)
                    if (JSON.stringify(store.get(o.key)) !== JSON.stringify(expected)) {
                      return yield* Effect.die(`get(${o.key}) during the batch`)
                    }
                  }
                  assert.deepStrictEqual(entries(yield* store.scan()), entries(next))
                  if (s.abort) {
                    yield* store.abort()
                    continue
                  }
                  const m = yield* store.commit()
                  assert.strictEqual(m.numRowsTotal, next.size)
                  model.clear()
                  for (const [k, v] of next) model.set(k, v)
                  version++
                  history.push(entries(model))
                }
                const p = yield* current()
                assert.strictEqual(yield* p.latestVersion(id(cp, -1)), version)
                assert.deepStrictEqual(yield* readAll(p, cp, version), entries(model))
                // The retained versions read back as they were committed.
                for (let v = Math.max(-1, version - 2); v <= version; v++) {
                  assert.deepStrictEqual(yield* readAll(p, cp, v), history[v + 1], `version ${v}`)
                }
                const last = yield* p.open(spec(cp, version, { minBatchesToRetain: 2 }))
                yield* last.load(keys)
                for (const k of keys) assert.deepStrictEqual(last.get(k), model.get(k), k)
                yield* last.abort()
              })
            )
          )
        ),
        { numRuns: 30 }
      )
    })
  })
}
