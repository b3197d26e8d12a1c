/**
 * Spark's `WindowOperationsSuite` (streaming/src/test/.../WindowOperationsSuite.scala): the same
 * inputs and expected windows, with 1 s batches. The incremental forms (inverse function,
 * `countByWindow`) keep state in the session's state store, so they run with a checkpoint
 * directory as in Spark's `TestSuiteBase`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type DStream, StreamingContext } from "../../dstream/mod.ts"
import { asSets, sessionLayer, testInputStream, testOperation } from "./DStreamTestKit.ts"

type KV = readonly [string, number]

const largerSlideInput: ReadonlyArray<ReadonlyArray<KV>> = [
  [["a", 1]],
  [["a", 2]],
  [["a", 3]],
  [["a", 4]],
  [["a", 5]],
  [["a", 6]],
  [],
  []
]
const largerSlideReduceOutput = [[["a", 3]], [["a", 10]], [["a", 18]], [["a", 11]]]

const bigInput: ReadonlyArray<ReadonlyArray<KV>> = [
  [["a", 1]],
  [
    ["a", 1],
    ["b", 1]
  ],
  [
    ["a", 1],
    ["b", 1],
    ["c", 1]
  ],
  [
    ["a", 1],
    ["b", 1]
  ],
  [["a", 1]],
  [],
  [["a", 1]],
  [
    ["a", 1],
    ["b", 1]
  ],
  [
    ["a", 1],
    ["b", 1],
    ["c", 1]
  ],
  [
    ["a", 1],
    ["b", 1]
  ],
  [["a", 1]],
  []
]

const bigGroupByOutput = [
  [["a", [1]]],
  [
    ["a", [1, 1]],
    ["b", [1]]
  ],
  [
    ["a", [1, 1]],
    ["b", [1, 1]],
    ["c", [1]]
  ],
  [
    ["a", [1, 1]],
    ["b", [1, 1]],
    ["c", [1]]
  ],
  [
    ["a", [1, 1]],
    ["b", [1]]
  ],
  [["a", [1]]],
  [["a", [1]]],
  [
    ["a", [1, 1]],
    ["b", [1]]
  ],
  [
    ["a", [1, 1]],
    ["b", [1, 1]],
    ["c", [1]]
  ],
  [
    ["a", [1, 1]],
    ["b", [1, 1]],
    ["c", [1]]
  ],
  [
    ["a", [1, 1]],
    ["b", [1]]
  ],
  [["a", [1]]]
]

const bigReduceOutput = [
  [["a", 1]],
  [
    ["a", 2],
    ["b", 1]
  ],
  [
    ["a", 2],
    ["b", 2],
    ["c", 1]
  ],
  [
    ["a", 2],
    ["b", 2],
    ["c", 1]
  ],
  [
    ["a", 2],
    ["b", 1]
  ],
  [["a", 1]],
  [["a", 1]],
  [
    ["a", 2],
    ["b", 1]
  ],
  [
    ["a", 2],
    ["b", 2],
    ["c", 1]
  ],
  [
    ["a", 2],
    ["b", 2],
    ["c", 1]
  ],
  [
    ["a", 2],
    ["b", 1]
  ],
  [["a", 1]]
]

// Without a filter, keys stay in the incremental window at 0 (Spark's comment in the suite).
const bigReduceInvOutput = [
  [["a", 1]],
  [
    ["a", 2],
    ["b", 1]
  ],
  [
    ["a", 2],
    ["b", 2],
    ["c", 1]
  ],
  [
    ["a", 2],
    ["b", 2],
    ["c", 1]
  ],
  [
    ["a", 2],
    ["b", 1],
    ["c", 0]
  ],
  [
    ["a", 1],
    ["b", 0],
    ["c", 0]
  ],
  [
    ["a", 1],
    ["b", 0],
    ["c", 0]
  ],
  [
    ["a", 2],
    ["b", 1],
    ["c", 0]
  ],
  [
    ["a", 2],
    ["b", 2],
    ["c", 1]
  ],
  [
    ["a", 2],
    ["b", 2],
    ["c", 1]
  ],
  [
    ["a", 2],
    ["b", 1],
    ["c", 0]
  ],
  [
    ["a", 1],
    ["b", 0],
    ["c", 0]
  ]
]

const numBatchesFor = (expected: ReadonlyArray<unknown>, slideSeconds: number) => expected.length * slideSeconds

const testWindow = (
  name: string,
  input: ReadonlyArray<ReadonlyArray<number>>,
  expected: ReadonlyArray<ReadonlyArray<number>>,
  window = 2,
  slide = 1
) =>
  it.effect(`window - ${name}`, () =>
    Effect.gen(function* () {
      const out = yield* testOperation(
        input,
        (s: DStream<number>) => s.window(`${window} seconds`, `${slide} seconds`),
        numBatchesFor(expected, slide)
      )
      assert.deepStrictEqual(asSets(out), asSets(expected))
    }).pipe(Effect.provide(sessionLayer))
  )

const testReduceByKeyAndWindow = (
  name: string,
  input: ReadonlyArray<ReadonlyArray<KV>>,
  expected: ReadonlyArray<ReadonlyArray<unknown>>,
  window = 2,
  slide = 1
) =>
  it.effect(`reduceByKeyAndWindow - ${name}`, () =>
    Effect.gen(function* () {
      const out = yield* testOperation(
        input,
        (s: DStream<KV>) => s.reduceByKeyAndWindow((x, y) => x + y, `${window} seconds`, `${slide} seconds`),
        numBatchesFor(expected, slide)
      )
      assert.deepStrictEqual(asSets(out), asSets(expected))
    }).pipe(Effect.provide(sessionLayer))
  )

const testReduceByKeyAndWindowWithInverse = (
  name: string,
  input: ReadonlyArray<ReadonlyArray<KV>>,
  expected: ReadonlyArray<ReadonlyArray<unknown>>,
  window = 2,
  slide = 1
) =>
  it.effect(`reduceByKeyAndWindow with inverse function - ${name}`, () =>
    Effect.gen(function* () {
      const out = yield* testOperation(
        input,
        (s: DStream<KV>) =>
          s
            .reduceByKeyAndWindow(
              (x, y) => x + y,
              (x, y) => x - y,
              `${window} seconds`,
              `${slide} seconds`
            )
            .checkpoint("100 seconds"),
        numBatchesFor(expected, slide)
      )
      assert.deepStrictEqual(asSets(out), asSets(expected))
    }).pipe(Effect.provide(sessionLayer))
  )

describe("WindowOperationsSuite", () => {
  testWindow("basic window", [[0], [1], [2], [3], [4], [5]], [[0], [0, 1], [1, 2], [2, 3], [3, 4], [4, 5]])
  testWindow(
    "tumbling window",
    [[0], [1], [2], [3], [4], [5]],
    [
      [0, 1],
      [2, 3],
      [4, 5]
    ],
    2,
    2
  )
  testWindow(
    "larger window",
    [[0], [1], [2], [3], [4], [5]],
    [
      [0, 1],
      [0, 1, 2, 3],
      [2, 3, 4, 5],
      [4, 5]
    ],
    4,
    2
  )
  testWindow(
    "non-overlapping window",
    [[0], [1], [2], [3], [4], [5]],
    [
      [1, 2],
      [4, 5]
    ],
    2,
    3
  )

  it.effect("window - persistence level", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const inputStream = testInputStream(ssc, [[0], [1], [2], [3], [4], [5]], 1)
      const windowStream1 = inputStream.window("2 seconds")
      assert.strictEqual(windowStream1.storageLevel, "NONE")
      assert.strictEqual(inputStream.storageLevel, "MEMORY_ONLY_SER")
      windowStream1.persist("MEMORY_ONLY")
      assert.strictEqual(windowStream1.storageLevel, "NONE")
      assert.strictEqual(inputStream.storageLevel, "MEMORY_ONLY")
      yield* ssc.stop()
    }).pipe(Effect.provide(sessionLayer))
  )

  testReduceByKeyAndWindow(
    "basic reduction",
    [
      [
        ["a", 1],
        ["a", 3]
      ]
    ],
    [[["a", 4]]]
  )
  testReduceByKeyAndWindow(
    "key already in window and new value added into window",
    [[["a", 1]], [["a", 1]]],
    [[["a", 1]], [["a", 2]]]
  )
  testReduceByKeyAndWindow(
    "new key added into window",
    [
      [["a", 1]],
      [
        ["a", 1],
        ["b", 1]
      ]
    ],
    [
      [["a", 1]],
      [
        ["a", 2],
        ["b", 1]
      ]
    ]
  )
  testReduceByKeyAndWindow(
    "key removed from window",
    [[["a", 1]], [["a", 1]], [], []],
    [[["a", 1]], [["a", 2]], [["a", 1]], []]
  )
  testReduceByKeyAndWindow("larger slide time", largerSlideInput, largerSlideReduceOutput, 4, 2)
  testReduceByKeyAndWindow("big test", bigInput, bigReduceOutput)

  testReduceByKeyAndWindowWithInverse(
    "basic reduction",
    [
      [
        ["a", 1],
        ["a", 3]
      ]
    ],
    [[["a", 4]]]
  )
  testReduceByKeyAndWindowWithInverse(
    "key already in window and new value added into window",
    [[["a", 1]], [["a", 1]]],
    [[["a", 1]], [["a", 2]]]
  )
  testReduceByKeyAndWindowWithInverse(
    "new key added into window",
    [
      [["a", 1]],
      [
        ["a", 1],
        ["b", 1]
      ]
    ],
    [
      [["a", 1]],
      [
        ["a", 2],
        ["b", 1]
      ]
    ]
  )
  testReduceByKeyAndWindowWithInverse(
    "key removed from window",
    [[["a", 1]], [["a", 1]], [], []],
    [[["a", 1]], [["a", 2]], [["a", 1]], [["a", 0]]]
  )
  testReduceByKeyAndWindowWithInverse("larger slide time", largerSlideInput, largerSlideReduceOutput, 4, 2)
  testReduceByKeyAndWindowWithInverse("big test", bigInput, bigReduceInvOutput)

  it.effect("reduceByKeyAndWindow with inverse and filter functions - big test", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(
        bigInput,
        (s: DStream<KV>) =>
          s
            .reduceByKeyAndWindow(
              (x, y) => x + y,
              (x, y) => x - y,
              "2 seconds",
              "1 second",
              ([, v]) => v !== 0
            )
            .persist()
            .checkpoint("100 seconds"),
        bigReduceOutput.length
      )
      assert.deepStrictEqual(asSets(out), asSets(bigReduceOutput))
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("groupByKeyAndWindow", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(
        bigInput,
        (s: DStream<KV>) => s.groupByKeyAndWindow("2 seconds", "1 second"),
        bigGroupByOutput.length
      )
      assert.deepStrictEqual(asSets(out), asSets(bigGroupByOutput))
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("countByWindow", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(
        [[1], [1], [1, 2], [0], [], []],
        (s: DStream<number>) => s.countByWindow("2 seconds", "1 second"),
        6
      )
      assert.deepStrictEqual(out, [[1], [2], [3], [3], [1], [0]])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("countByValueAndWindow", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(
        [["a"], ["b", "b"], ["a", "b"]],
        (s: DStream<string>) => s.countByValueAndWindow("2 seconds", "1 second"),
        3
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [["a", 1]],
          [
            ["a", 1],
            ["b", 2]
          ],
          [
            ["a", 1],
            ["b", 3]
          ]
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("reduceByWindow with and without an inverse function", () =>
    Effect.gen(function* () {
      const input = [[1, 2], [3], [4, 5], []]
      const plain = yield* testOperation(input, (s: DStream<number>) =>
        s.reduceByWindow((a, b) => a + b, "2 seconds", "1 second")
      )
      assert.deepStrictEqual(plain, [[3], [6], [12], [9]])
      const inverse = yield* testOperation(input, (s: DStream<number>) =>
        s.reduceByWindow(
          (a, b) => a + b,
          (a, b) => a - b,
          "2 seconds",
          "1 second"
        )
      )
      assert.deepStrictEqual(inverse, [[3], [6], [12], [9]])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("window and slide durations must be multiples of the parent's slide (Spark's messages)", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const s = ssc.queueStream<number>([])
      const w = s.window("1500 milliseconds", "1 second")
      assert.strictEqual(
        w.buildError?.message,
        "The window duration of windowed DStream (1500 ms) must be a multiple of the slide duration of parent DStream (1000 ms)"
      )
      const sl = s.window("2 seconds", "500 milliseconds")
      assert.strictEqual(
        sl.buildError?.message,
        "The slide duration of windowed DStream (500 ms) must be a multiple of the slide duration of parent DStream (1000 ms)"
      )
      const r = s
        .map((x) => [x, x] as const)
        .reduceByKeyAndWindow(
          (a, b) => a + b,
          (a, b) => a - b,
          "2500 milliseconds",
          "1 second"
        )
      assert.strictEqual(
        r.buildError?.message,
        "The window duration of ReducedWindowedDStream (2500 ms) must be multiple of the slide duration of parent DStream (1000 ms)"
      )
      w.print()
      const error = yield* Effect.flip(ssc.start())
      assert.strictEqual(error._tag, "IllegalStateError")
      assert.strictEqual(error.message, w.buildError?.message)
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("incremental windows need a checkpoint directory", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      ssc.queueStream<number>([]).countByWindow("2 seconds", "1 second").print()
      const error = yield* Effect.flip(ssc.start())
      assert.strictEqual(
        error.message,
        "requirement failed: The checkpoint directory has not been set. Please set it by StreamingContext.checkpoint()."
      )
    }).pipe(Effect.provide(sessionLayer))
  )
})
