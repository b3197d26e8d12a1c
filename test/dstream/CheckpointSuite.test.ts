/**
 * Restart from a checkpoint, after Spark's `CheckpointSuite` ("recovery with updateStateByKey
 * operation", "recovery with invertible reduceByKeyAndWindow operation", mapWithState's
 * "driver failure recovery"): a context stopped after some batches and recreated with
 * `StreamingContext.getOrCreate` in a NEW session continues the same state and batch grid.
 * `create` runs again to rebuild the graph (closures cannot be serialized); the state comes from
 * the session's state store under the checkpoint directory.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { type State, StateSpec, StreamingContext } from "../../dstream/mod.ts"
import { Session } from "../../mod.ts"
import { asSets, batchDone, removeDir, tempDir } from "./DStreamTestKit.ts"

type Outputs = {
  readonly times: Array<number>
  readonly totals: Array<Array<readonly [string, number]>>
  readonly windows: Array<Array<readonly [string, number]>>
  readonly snapshots: Array<Array<readonly [string, number]>>
}

/** The graph both runs build: running totals, a 3 s incremental window, mapWithState counts. */
const create = (queue: Array<Array<string>>, out: Outputs, calls: { n: number }) => () =>
  Effect.gen(function* () {
    calls.n++
    const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
    const pairs = ssc.queueStream(queue).map((w) => [w, 1] as const)
    pairs.foreachRDD((_rdd, time) => {
      out.times.push(time)
    })
    pairs
      .updateStateByKey((values: Array<number>, state: number | undefined) => values.length + (state ?? 0))
      .foreachRDD((rdd) => {
        out.totals.push(rdd.collect())
      })
    pairs
      .reduceByKeyAndWindow(
        (a, b) => a + b,
        (a, b) => a - b,
        "3 seconds",
        "1 second"
      )
      .foreachRDD((rdd) => {
        out.windows.push(rdd.collect())
      })
    pairs
      .mapWithState(
        StateSpec.function((_k: string, v: number | undefined, state: State<number>) => {
          state.update((state.getOption() ?? 0) + (v ?? 0))
          return state.get()
        })
      )
      .stateSnapshots()
      .foreachRDD((rdd) => {
        out.snapshots.push(rdd.collect())
      })
    return ssc
  })

const emptyOutputs = (): Outputs => ({ times: [], totals: [], windows: [], snapshots: [] })

/** One run in its own session: getOrCreate, start, run until `lastBatch`, stop. */
const run = (
  stateStore: "duckdb" | "memory",
  dir: string,
  queue: Array<Array<string>>,
  out: Outputs,
  calls: { n: number },
  advanceMs: number,
  lastBatch: number
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const ctx = yield* Layer.build(Session.layer({ stateStore }))
      yield* Effect.gen(function* () {
        const ssc = yield* StreamingContext.getOrCreate(dir, create(queue, out, calls))
        const done = yield* batchDone(ssc, lastBatch)
        yield* ssc.start()
        yield* TestClock.adjust(advanceMs)
        yield* Deferred.await(done)
        yield* ssc.stop()
      }).pipe(Effect.provideContext(ctx))
    })
  )

for (const stateStore of ["memory", "duckdb"] as const) {
  describe(`CheckpointSuite (${stateStore} state store)`, () => {
    it.effect("a restarted context continues updateStateByKey, windows and mapWithState", () =>
      Effect.gen(function* () {
        const dir = tempDir(`restart-${stateStore}`)
        const calls = { n: 0 }
        const first = emptyOutputs()
        yield* run(stateStore, dir, [["a"], ["a", "b"], ["a", "b", "c"]], first, calls, 3000, 3000)
        assert.deepStrictEqual(first.times, [1000, 2000, 3000])
        assert.deepStrictEqual(
          asSets(first.totals),
          asSets([
            [["a", 1]],
            [
              ["a", 2],
              ["b", 1]
            ],
            [
              ["a", 3],
              ["b", 2],
              ["c", 1]
            ]
          ])
        )

        const second = emptyOutputs()
        yield* run(stateStore, dir, [["a", "b"], ["a"], []], second, calls, 3000, 6000)
        // getOrCreate called `create` again to rebuild the graph.
        assert.strictEqual(calls.n, 2)
        // The batch grid goes on after the last checkpointed batch.
        assert.deepStrictEqual(second.times, [4000, 5000, 6000])
        assert.deepStrictEqual(
          asSets(second.totals),
          asSets([
            [
              ["a", 4],
              ["b", 3],
              ["c", 1]
            ],
            [
              ["a", 5],
              ["b", 3],
              ["c", 1]
            ],
            [
              ["a", 5],
              ["b", 3],
              ["c", 1]
            ]
          ])
        )
        // The 3 s window over batches 2000..4000, 3000..5000, 4000..6000 (keys stay at 0).
        assert.deepStrictEqual(
          asSets(second.windows),
          asSets([
            [
              ["a", 3],
              ["b", 3],
              ["c", 1]
            ],
            [
              ["a", 3],
              ["b", 2],
              ["c", 1]
            ],
            [
              ["a", 2],
              ["b", 1],
              ["c", 0]
            ]
          ])
        )
        assert.deepStrictEqual(asSets(second.snapshots), asSets(second.totals))
        yield* removeDir(dir)
      })
    )
  })
}

describe("CheckpointSuite", () => {
  it.effect("batches missed while the context was down run first (Spark's down times)", () =>
    Effect.gen(function* () {
      const dir = tempDir("downtime")
      const calls = { n: 0 }
      const first = emptyOutputs()
      yield* run("memory", dir, [["a"], ["a"]], first, calls, 2000, 2000)
      // Down from 2000 to 4500: batches 3000 and 4000 were missed.
      yield* TestClock.adjust(2500)
      const second = emptyOutputs()
      yield* run("memory", dir, [["b"], ["b"], ["c"]], second, calls, 500, 5000)
      assert.deepStrictEqual(second.times, [3000, 4000, 5000])
      assert.deepStrictEqual(
        asSets(second.totals).at(-1),
        asSets([
          [
            ["a", 2],
            ["b", 2],
            ["c", 1]
          ]
        ])[0]
      )
      yield* removeDir(dir)
    })
  )

  it.effect("a context made with make() on a used checkpoint directory starts from empty state", () =>
    Effect.gen(function* () {
      for (const stateStore of ["memory", "duckdb"] as const) {
        const dir = tempDir(`reuse-${stateStore}`)
        yield* run(stateStore, dir, [["a"], ["a"]], emptyOutputs(), { n: 0 }, 2000, 2000)
        const out = emptyOutputs()
        yield* Effect.scoped(
          Effect.gen(function* () {
            const ctx = yield* Layer.build(Session.layer({ stateStore }))
            yield* Effect.gen(function* () {
              const ssc = yield* create([["a"]], out, { n: 0 })()
              ssc.checkpoint(dir)
              const done = yield* batchDone(ssc, 3000)
              yield* ssc.start()
              yield* TestClock.adjust(1000)
              yield* Deferred.await(done)
              yield* ssc.stop()
            }).pipe(Effect.provideContext(ctx))
          })
        )
        assert.deepStrictEqual(out.totals, [[["a", 1]]])
        yield* removeDir(dir)
      }
    })
  )

  it.effect("getOrCreate without a checkpoint creates a fresh context", () =>
    Effect.gen(function* () {
      const dir = tempDir("fresh")
      const calls = { n: 0 }
      const out = emptyOutputs()
      yield* run("memory", dir, [["x"]], out, calls, 1000, 1000)
      assert.strictEqual(calls.n, 1)
      assert.deepStrictEqual(out.totals, [[["x", 1]]])
      yield* removeDir(dir)
    })
  )

  it.effect("a checkpoint of another batch duration is refused", () =>
    Effect.gen(function* () {
      const dir = tempDir("otherbatch")
      yield* run("memory", dir, [["x"]], emptyOutputs(), { n: 0 }, 1000, 1000)
      const error = yield* Effect.scoped(
        Effect.gen(function* () {
          const ctx = yield* Layer.build(Session.layer({ stateStore: "memory" }))
          return yield* Effect.flip(
            StreamingContext.getOrCreate(dir, () => StreamingContext.make({ batchDuration: "2 seconds" })).pipe(
              Effect.provideContext(ctx)
            )
          )
        })
      )
      assert.strictEqual(error._tag, "CheckpointError")
      assert.include(error.message, "batch duration of 1000 ms, but the context has 2000 ms")
      yield* removeDir(dir)
    })
  )
})
