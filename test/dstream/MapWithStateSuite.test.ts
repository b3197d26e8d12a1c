/**
 * Spark's `MapWithStateSuite` (streaming/src/test/.../MapWithStateSuite.scala): the `State`
 * handle's rules, and `mapWithState` outputs and state snapshots for the suite's inputs.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import {
  type DStream,
  type MapWithStateDStream,
  RDD,
  type State,
  StateSpec,
  StreamingContext
} from "../../dstream/mod.ts"
import { StateImpl } from "../../dstream/State.ts"
import { Session } from "../../mod.ts"
import {
  asSets,
  batchDone,
  removeDir,
  runBatches,
  sessionLayer,
  tempDir,
  testInputStream,
  timeIndexed
} from "./DStreamTestKit.ts"

/** One batch's elements as a set, in a canonical text form. */
const canonicalSet = (batch: ReadonlyArray<unknown>): string => JSON.stringify(asSets([batch])[0])

/** Spark's suite `assert`: as many batches as expected, each equal as a set. */
const assertBatches = (
  collected: ReadonlyArray<ReadonlyArray<unknown>>,
  expected: ReadonlyArray<ReadonlyArray<unknown>>
) => {
  assert.strictEqual(collected.length, expected.length, "number of collected batches")
  assert.deepStrictEqual(asSets(collected), asSets(expected))
}

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
    const stream = testInputStream(ssc, input, 2).map((k) => [k, 1] as const)
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
  it("state - get, exists, update, remove, ", () => {
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

  it.effect("mapWithState - states as mapped data (simple API)", () =>
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

  it.effect("mapWithState - initial states (simple API)", () =>
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

  it.effect("mapWithState - state removing (simple API)", () =>
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

  it.effect("mapWithState - state timing out (simple API)", () =>
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
  // ---- Spark's cases with the full mapping function `(time, key, value, state) => Option` ----

  it.effect("mapWithState - basic operations with advanced API", () =>
    Effect.gen(function* () {
      // state maintains running count, key string doubled and returned
      const spec = StateSpec.function(
        (_batchTime: number, key: string, value: number | undefined, state: State<number>) => {
          const sum = (value ?? 0) + (state.getOption() ?? 0)
          state.update(sum)
          return key.repeat(2)
        }
      )
      const { outputs, snapshots } = yield* getOperationOutput(basicInput, spec)
      assertBatches(outputs, [[], ["aa"], ["aa", "bb"], ["aa", "bb", "cc"], ["aa", "bb"], ["aa"], []])
      assertBatches(snapshots, basicState)
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapWithState - states as mapped data", () =>
    Effect.gen(function* () {
      const spec = StateSpec.function((_time: number, key: string, value: number | undefined, state: State<number>) => {
        const sum = (value ?? 0) + (state.getOption() ?? 0)
        const output = [key, sum] as const
        state.update(sum)
        return output
      })
      const { outputs, snapshots } = yield* getOperationOutput(basicInput, spec)
      assertBatches(outputs, [
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
      assertBatches(snapshots, basicState)
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapWithState - initial states, with nothing returned as from mapping function", () =>
    Effect.gen(function* () {
      const spec = StateSpec.function(
        (_time: number, _key: string, value: number | undefined, state: State<number>) => {
          const sum = (value ?? 0) + (state.getOption() ?? 0)
          state.update(sum)
          return undefined as number | undefined
        }
      ).initialState(RDD.parallelize([["a", 5] as const, ["b", 10] as const, ["c", -20] as const, ["d", 0] as const]))
      const { outputs, snapshots } = yield* getOperationOutput(basicInput, spec)
      assertBatches(
        outputs,
        basicInput.map(() => [])
      )
      assertBatches(snapshots, [
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
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapWithState - state removing", () =>
    Effect.gen(function* () {
      const input = [
        [],
        ["a"],
        ["a", "b"], // a will be removed
        ["a", "b", "c"], // b will be removed
        ["a", "b", "c"], // a and c will be removed
        ["a", "b"], // b will be removed
        ["a"], // a will be removed
        []
      ]
      const spec = StateSpec.function((_time: number, key: string, value: number | undefined, state: State<number>) => {
        if (state.exists()) {
          state.remove()
          return key
        }
        state.update(value as number)
        return undefined
      }).numPartitions(1)
      const { outputs, snapshots } = yield* getOperationOutput(input, spec)
      // States that were removed
      assertBatches(outputs, [[], [], ["a"], ["b"], ["a", "c"], ["b"], ["a"], []])
      assertBatches(snapshots, [
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
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapWithState - state timing out", () =>
    Effect.gen(function* () {
      const input = [
        ["a", "b", "c"],
        ["a", "b"],
        ["a"],
        [], // c will time out
        [], // b will time out
        ["a"], // a will not time out
        ...Array.from({ length: 20 }, () => ["a"]) // a will continue to stay active
      ]
      const spec = StateSpec.function((_time: number, key: string, value: number | undefined, state: State<number>) => {
        if (value !== undefined) state.update(1)
        return state.isTimingOut() ? key : undefined
      }).timeout("3 seconds")
      const { outputs, snapshots } = yield* getOperationOutput(input, spec, 20)
      // b and c should be returned once each, when they were marked as expired
      assert.deepStrictEqual(outputs.flat().sort(), ["b", "c"])
      // States for a, b, c should be defined at one point of time
      const abc = canonicalSet([
        ["a", 1],
        ["b", 1],
        ["c", 1]
      ])
      assert.isTrue(snapshots.some((s) => canonicalSet(s) === abc))
      // Finally state should be defined only for a
      assert.strictEqual(canonicalSet(snapshots[snapshots.length - 1]), canonicalSet([["a", 1]]))
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapWithState - the full function gets the batch time", () =>
    Effect.gen(function* () {
      const spec = StateSpec.function((time: number, key: string, _value: number | undefined, _state: State<number>) =>
        key === "a" ? time : undefined
      )
      const { outputs } = yield* getOperationOutput([["a", "b"], ["b"], ["a"]], spec)
      assert.deepStrictEqual(outputs, [[1000], [], [3000]])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapWithState - driver failure recovery", () =>
    Effect.gen(function* () {
      const inputData = [[], ["a"], ["a", "b"], ["a", "b", "c"], ["a", "b"], ["a"], []]
      const stateData = basicState
      const numBatchesBeforeRestart = Math.floor(inputData.length / 2)
      const dir = tempDir("mws-recovery")
      const outputs: Array<Array<readonly [string, number]>> = []
      const create = () =>
        Effect.gen(function* () {
          const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
          // Set interval make sure there is one RDD checkpointing
          const checkpointDuration = 1000 * Math.floor(stateData.length / 2)
          const runningCount = (_key: string, value: number | undefined, state: State<number>) => {
            state.update((state.getOption() ?? 0) + (value ?? 0))
            return state.get()
          }
          const mapWithStateStream = testInputStream(ssc, inputData, 2)
            .map((k) => [k, 1] as const)
            .mapWithState(StateSpec.function(runningCount))
          mapWithStateStream.checkpoint(checkpointDuration)
          mapWithStateStream.stateSnapshots().foreachRDD((rdd) => {
            outputs.push(rdd.collect())
          })
          return ssc
        })
      /** One run in its own session: getOrCreate, start, run through batch `lastBatch` ms, stop. */
      const run = (lastBatch: number) =>
        Effect.scoped(
          Effect.gen(function* () {
            const ctx = yield* Layer.build(Session.layer({ stateStore: "memory" }))
            yield* Effect.gen(function* () {
              const ssc = yield* StreamingContext.getOrCreate(dir, create)
              const done = yield* batchDone(ssc, lastBatch)
              yield* ssc.start()
              const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
              yield* TestClock.adjust(lastBatch - now)
              yield* Deferred.await(done)
              yield* ssc.stop()
            }).pipe(Effect.provideContext(ctx))
          })
        )
      // Do the computation for initial number of batches, create checkpoint file and quit
      yield* run(1000 * numBatchesBeforeRestart)
      assertBatches(outputs, stateData.slice(0, numBatchesBeforeRestart))
      // Restart and complete the computation from checkpoint file
      outputs.length = 0
      yield* run(1000 * inputData.length)
      assertBatches(outputs, stateData.slice(numBatchesBeforeRestart))
      yield* removeDir(dir)
    })
  )

  it.effect(
    "mapWithState - keys time out only when updated strictly before batch time minus timeout (StateMap.getByTime)",
    () =>
      Effect.gen(function* () {
        // StateMapSuite: getByTime(t) returns the entries updated before t, never at t; with a full
        // scan every batch (checkpoint interval = batch), a key last touched at 1000 ms with a 3 s
        // timeout is still kept at 4000 ms (threshold 1000) and times out at 5000 ms.
        const seen: Array<readonly [number, string]> = []
        const spec = StateSpec.function(
          (time: number, key: string, value: number | undefined, state: State<number>) => {
            if (value !== undefined) state.update(value)
            if (state.isTimingOut()) seen.push([time, key])
            return undefined
          }
        ).timeout("3 seconds")
        const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
        const dir = tempDir("mws-getbytime")
        ssc.checkpoint(dir)
        const mapped = testInputStream(ssc, [["a"], ["b"]], 2)
          .map((k) => [k, 1] as const)
          .mapWithState(spec)
        mapped.checkpoint("1 second")
        const snapshots: Array<Array<readonly [string, number]>> = []
        mapped.stateSnapshots().foreachRDD((rdd) => {
          snapshots.push(rdd.collect())
        })
        yield* runBatches(ssc, 7)
        yield* ssc.stop()
        yield* removeDir(dir)
        assert.deepStrictEqual(seen, [
          [5000, "a"],
          [6000, "b"]
        ])
        assert.deepStrictEqual(asSets(snapshots), [
          ...asSets([[["a", 1]]]),
          ...asSets([
            [
              ["a", 1],
              ["b", 1]
            ]
          ]),
          ...asSets([
            [
              ["a", 1],
              ["b", 1]
            ]
          ]),
          ...asSets([
            [
              ["a", 1],
              ["b", 1]
            ]
          ]),
          ...asSets([[["b", 1]]]),
          [],
          []
        ])
      }).pipe(Effect.provide(sessionLayer))
  )
  it.effect("mapWithState - type inferencing and class tags (as static types)", () =>
    Effect.gen(function* () {
      // Spark checks the ClassTags of key, value, state and mapped types; here the types are
      // static: each assignment below fails to compile if inference goes wrong.
      const simpleFunc = (_key: string, _value: number | undefined, _state: State<number>) => 0
      const advancedFunc = (_time: number, _key: string, _value: number | undefined, _state: State<number>) =>
        0 as number | undefined
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const inputStream = testInputStream<readonly [string, number]>(ssc, [], 2)
      const simpleFunctionStateStream1: MapWithStateDStream<string, number, number, number> = inputStream.mapWithState(
        StateSpec.function(simpleFunc).numPartitions(1)
      )
      const simpleFuncSpec: StateSpec<string, number, number, number> = StateSpec.function(simpleFunc)
      const simpleFunctionStateStream2: MapWithStateDStream<string, number, number, number> =
        inputStream.mapWithState(simpleFuncSpec)
      const advFuncSpec1: StateSpec<string, number, number, number> = StateSpec.function(advancedFunc)
      const advFunctionStateStream1: MapWithStateDStream<string, number, number, number> =
        inputStream.mapWithState(advFuncSpec1)
      const snapshots: DStream<readonly [string, number]> = advFunctionStateStream1.stateSnapshots()
      for (const s of [simpleFunctionStateStream1, simpleFunctionStateStream2, advFunctionStateStream1, snapshots]) {
        assert.isUndefined(s.buildError)
      }
      assert.isFalse(simpleFuncSpec.timed)
      assert.isTrue(advFuncSpec1.timed)
      yield* ssc.stop()
    }).pipe(Effect.provide(sessionLayer))
  )
})
