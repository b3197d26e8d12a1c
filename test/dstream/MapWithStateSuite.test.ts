/**
 * Spark's `MapWithStateSuite` (streaming/src/test/.../MapWithStateSuite.scala): the `State`
 * handle's rules, and `mapWithState` outputs and state snapshots for the suite's inputs.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type State, StateSpec, StreamingContext } from "../../dstream/mod.ts"
import { StateImpl } from "../../dstream/State.ts"
import { asSets, removeDir, runBatches, sessionLayer, tempDir, timeIndexed } from "./DStreamTestKit.ts"

/** Spark's `getOperationOutput`: the mapped batches and the state snapshots, per batch. */
const getOperationOutput = <S, U>(
  input: ReadonlyArray<ReadonlyArray<string>>,
  spec: StateSpec<string, number, S, U>,
  numBatches = input.length
) =>
  Effect.gen(function* () {
    const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
    const dir = tempDir("mws")
    ssc.checkpoint(dir)
    const zero = Math.floor((yield* Effect.clockWith((c) => c.currentTimeMillis)) / 1000) * 1000
    const stream = timeIndexed(ssc, input, 2, zero).map((k) => [k, 1] as const)
    const mapped = stream.mapWithState(spec)
    const outputs: Array<Array<U>> = []
    const snapshots: Array<Array<readonly [string, S]>> = []
    mapped.foreachRDD((rdd) => {
      outputs.push(rdd.collect())
    })
    mapped.stateSnapshots().foreachRDD((rdd) => {
      snapshots.push(rdd.collect())
    })
    yield* runBatches(ssc, numBatches)
    yield* ssc.stop()
    yield* removeDir(dir)
    return { outputs, snapshots }
  })

const basicInput = [[], ["a"], ["a", "b"], ["a", "b", "c"], ["a", "b"], ["a"], []]
const basicState = [
  [],
  [["a", 1]],
  [
    ["a", 2],
    ["b", 1]
  ],
  [
    ["a", 3],
    ["b", 2],
    ["c", 1]
  ],
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
]

describe("MapWithStateSuite", () => {
  it("state - get, exists, update, remove", () => {
    const check = (
      state: StateImpl<number>,
      expected: number | undefined,
      flags: { updated?: boolean; removed?: boolean; timingOut?: boolean } = {}
    ) => {
      if (expected !== undefined) {
        assert.isTrue(state.exists())
        assert.strictEqual(state.get(), expected)
        assert.strictEqual(state.getOption(), expected)
      } else {
        assert.isFalse(state.exists())
        assert.throws(() => state.get(), "State is not set")
        assert.isUndefined(state.getOption())
      }
      assert.strictEqual(state.isTimingOut(), flags.timingOut === true)
      if (flags.timingOut === true) {
        assert.throws(() => state.remove(), "Cannot remove the state that is timing out")
        assert.throws(() => state.update(-1), "Cannot update the state that is timing out")
      }
      assert.strictEqual(state.isUpdated(), flags.updated === true)
      assert.strictEqual(state.isRemoved(), flags.removed === true)
      if (flags.removed === true) {
        assert.throws(() => state.remove(), "Cannot remove the state that has already been removed")
        assert.throws(() => state.update(-1), "Cannot update the state after it has been removed")
      }
    }
    let state = new StateImpl<number>()
    check(state, undefined)
    state.wrap(undefined)
    check(state, undefined)
    state.wrap({ s: 1 })
    check(state, 1)
    state.update(2)
    check(state, 2, { updated: true })
    state = new StateImpl<number>()
    state.update(2)
    check(state, 2, { updated: true })
    state.remove()
    check(state, undefined, { removed: true })
    state.wrapTimingOutState(3)
    check(state, 3, { timingOut: true })
  })

  it.effect("mapWithState - basic operations with simple API", () =>
    Effect.gen(function* () {
      const spec = StateSpec.function((_key: string, value: number | undefined, state: State<number>) => {
        const sum = (value ?? 0) + (state.getOption() ?? 0)
        state.update(sum)
        return sum
      })
      const { outputs, snapshots } = yield* getOperationOutput(basicInput, spec)
      assert.deepStrictEqual(asSets(outputs), asSets([[], [1], [2, 1], [3, 2, 1], [4, 3], [5], []]))
      assert.deepStrictEqual(asSets(snapshots), asSets(basicState))
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapWithState - states as mapped data", () =>
    Effect.gen(function* () {
      const spec = StateSpec.function((key: string, value: number | undefined, state: State<number>) => {
        const sum = (value ?? 0) + (state.getOption() ?? 0)
        state.update(sum)
        return [key, sum] as const
      })
      const { outputs, snapshots } = yield* getOperationOutput(basicInput, spec)
      assert.deepStrictEqual(
        asSets(outputs),
        asSets([
          [],
          [["a", 1]],
          [
            ["a", 2],
            ["b", 1]
          ],
          [
            ["a", 3],
            ["b", 2],
            ["c", 1]
          ],
          [
            ["a", 4],
            ["b", 3]
          ],
          [["a", 5]],
          []
        ])
      )
      assert.deepStrictEqual(asSets(snapshots), asSets(basicState))
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapWithState - initial states", () =>
    Effect.gen(function* () {
      const spec = StateSpec.function((_key: string, value: number | undefined, state: State<number>) => {
        state.update((value ?? 0) + (state.getOption() ?? 0))
        return undefined
      }).initialState([
        ["a", 5],
        ["b", 10],
        ["c", -20],
        ["d", 0]
      ])
      const { outputs, snapshots } = yield* getOperationOutput(basicInput, spec)
      assert.deepStrictEqual(
        outputs.map((b) => b.filter((x) => x !== undefined)),
        basicInput.map(() => [])
      )
      assert.deepStrictEqual(
        asSets(snapshots),
        asSets([
          [
            ["a", 5],
            ["b", 10],
            ["c", -20],
            ["d", 0]
          ],
          [
            ["a", 6],
            ["b", 10],
            ["c", -20],
            ["d", 0]
          ],
          [
            ["a", 7],
            ["b", 11],
            ["c", -20],
            ["d", 0]
          ],
          [
            ["a", 8],
            ["b", 12],
            ["c", -19],
            ["d", 0]
          ],
          [
            ["a", 9],
            ["b", 13],
            ["c", -19],
            ["d", 0]
          ],
          [
            ["a", 10],
            ["b", 13],
            ["c", -19],
            ["d", 0]
          ],
          [
            ["a", 10],
            ["b", 13],
            ["c", -19],
            ["d", 0]
          ]
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapWithState - state removing", () =>
    Effect.gen(function* () {
      const input = [[], ["a"], ["a", "b"], ["a", "b", "c"], ["a", "b", "c"], ["a", "b"], ["a"], []]
      const spec = StateSpec.function((key: string, value: number | undefined, state: State<number>) => {
        if (state.exists()) {
          state.remove()
          return key
        }
        state.update(value as number)
        return undefined
      }).numPartitions(1)
      const { outputs, snapshots } = yield* getOperationOutput(input, spec)
      assert.deepStrictEqual(
        asSets(outputs.map((b) => b.filter((x) => x !== undefined))),
        asSets([[], [], ["a"], ["b"], ["a", "c"], ["b"], ["a"], []])
      )
      assert.deepStrictEqual(
        asSets(snapshots),
        asSets([
          [],
          [["a", 1]],
          [["b", 1]],
          [
            ["a", 1],
            ["c", 1]
          ],
          [["b", 1]],
          [["a", 1]],
          [],
          []
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapWithState - state timing out", () =>
    Effect.gen(function* () {
      const input = [["a", "b", "c"], ["a", "b"], ["a"], [], [], ["a"], ...Array.from({ length: 20 }, () => ["a"])]
      const spec = StateSpec.function((key: string, value: number | undefined, state: State<number>) => {
        if (value !== undefined) state.update(1)
        return state.isTimingOut() ? key : undefined
      }).timeout("3 seconds")
      const { outputs, snapshots } = yield* getOperationOutput(input, spec, 20)
      // b and c are returned once each, when they time out.
      assert.deepStrictEqual(
        outputs
          .flat()
          .filter((x) => x !== undefined)
          .sort(),
        ["b", "c"]
      )
      assert.isTrue(
        snapshots.some(
          (s) =>
            asSets([s])[0].join() ===
            asSets([
              [
                ["a", 1],
                ["b", 1],
                ["c", 1]
              ]
            ])[0].join()
        )
      )
      assert.deepStrictEqual(snapshots[snapshots.length - 1], [["a", 1]])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapWithState - timeouts are found at the checkpoint interval (10 batches by default)", () =>
    Effect.gen(function* () {
      const input = [["a", "b"], ["a"]]
      const seen: Array<[number, string]> = []
      let batchTime = 0
      const spec = StateSpec.function((key: string, value: number | undefined, state: State<number>) => {
        if (value !== undefined) state.update(1)
        if (state.isTimingOut()) seen.push([batchTime, key])
        return undefined
      }).timeout("3 seconds")
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const dir = tempDir("mws-cp")
      ssc.checkpoint(dir)
      const stream = timeIndexed(ssc, input, 1, 0)
        .map((k) => [k, 1] as const)
        .transform((rdd, time) => {
          batchTime = time
          return rdd
        })
      stream.mapWithState(spec).foreachRDD(() => {})
      yield* runBatches(ssc, 12)
      yield* ssc.stop()
      yield* removeDir(dir)
      // b (last seen at 1000) and a (at 2000) both time out at 10000 ms, the first full scan.
      assert.deepStrictEqual(seen.sort(), [
        [10000, "a"],
        [10000, "b"]
      ])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapWithState - checkpoint durations", () =>
    Effect.gen(function* () {
      const check = (batch: number, expected: number, explicit?: number) =>
        Effect.gen(function* () {
          const ssc = yield* StreamingContext.make({ batchDuration: batch })
          const dir = tempDir("mws-durations")
          ssc.checkpoint(dir)
          const mapped = ssc
            .queueStream<number>([])
            .map((x) => [x, 1] as const)
            .mapWithState(StateSpec.function((_k: number, _v: number | undefined, _s: State<number>) => 0))
          if (explicit !== undefined) mapped.checkpoint(explicit)
          mapped.foreachRDD(() => {})
          yield* ssc.start()
          const internal = (mapped as unknown as { stateNode: { checkpointMs: number } }).stateNode
          assert.strictEqual(internal.checkpointMs, expected)
          assert.strictEqual(mapped.node.checkpointMs, undefined)
          yield* ssc.stop()
          yield* removeDir(dir)
        })
      yield* check(100, 1000)
      yield* check(1000, 10_000)
      yield* check(10_000, 100_000)
      yield* check(100, 2000, 2000)
      yield* check(1000, 2000, 2000)
      yield* check(10_000, 20_000, 20_000)
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapWithState needs a checkpoint directory", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      ssc
        .queueStream<readonly [string, number]>([])
        .mapWithState(StateSpec.function((_k: string, _v: number | undefined, _s: State<number>) => 0))
        .print()
      const error = yield* Effect.flip(ssc.start())
      assert.strictEqual(
        error.message,
        "requirement failed: The checkpoint directory has not been set. Please set it by StreamingContext.checkpoint()."
      )
    }).pipe(Effect.provide(sessionLayer))
  )
})
