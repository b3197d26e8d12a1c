/**
 * Spark's `BasicOperationsSuite` (streaming/src/test/.../BasicOperationsSuite.scala): the same
 * inputs and expected batches, run on the test clock.
 */
import { readdir, readFile } from "node:fs/promises"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Console, Effect } from "effect"
import { TestClock } from "effect/testing"
import { type DStream, RDD, StreamingContext } from "../../dstream/mod.ts"
import { F } from "../../mod.ts"
import {
  asSets,
  removeDir,
  runBatches,
  sessionLayer,
  tempDir,
  testInputStream,
  testOperation,
  testOperation2
} from "./DStreamTestKit.ts"

const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i)
const input = [range(1, 4), range(5, 8), range(9, 12)]

describe("BasicOperationsSuite", () => {
  it.effect("map", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(input, (r: DStream<number>) => r.map(String))
      assert.deepStrictEqual(
        out,
        input.map((b) => b.map(String))
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("flatMap", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(input, (r: DStream<number>) => r.flatMap((x) => [x, x * 2]))
      assert.deepStrictEqual(
        out,
        input.map((b) => b.flatMap((x) => [x, x * 2]))
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("filter", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(input, (r: DStream<number>) => r.filter((x) => x % 2 === 0))
      assert.deepStrictEqual(
        out,
        input.map((b) => b.filter((x) => x % 2 === 0))
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("glom", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(input, (r: DStream<number>) => r.glom())
      assert.deepStrictEqual(out, [
        [
          [1, 2],
          [3, 4]
        ],
        [
          [5, 6],
          [7, 8]
        ],
        [
          [9, 10],
          [11, 12]
        ]
      ])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapPartitions", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(input, (r: DStream<number>) =>
        r.mapPartitions((p) => [p.reduce((a, b) => a + b, 0)])
      )
      assert.deepStrictEqual(out, [
        [3, 7],
        [11, 15],
        [19, 23]
      ])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("repartition (more and fewer partitions)", () =>
    Effect.gen(function* () {
      const big = [range(1, 100), range(101, 200), range(201, 300)]
      const parts: Array<number> = []
      const out = yield* testOperation(big, (r: DStream<number>) =>
        r.repartition(5).transform((rdd) => {
          parts.push(rdd.getNumPartitions())
          return rdd
        })
      )
      assert.deepStrictEqual(parts, [5, 5, 5])
      assert.deepStrictEqual(
        out.map((b) => [...b].sort((x, y) => x - y)),
        big
      )
      const fewer: Array<number> = []
      yield* testOperation(
        big,
        (r: DStream<number>) =>
          r.repartition(2).transform((rdd) => {
            fewer.push(rdd.getNumPartitions())
            return rdd
          }),
        3,
        { partitions: 5 }
      )
      assert.deepStrictEqual(fewer, [2, 2, 2])
    }).pipe(Effect.provide(sessionLayer))
  )

  const words = [["a", "a", "b"], ["", ""], []]

  it.effect("groupByKey", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(words, (s: DStream<string>) => s.map((x) => [x, 1] as const).groupByKey())
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            ["a", [1, 1]],
            ["b", [1]]
          ],
          [["", [1, 1]]],
          []
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("reduceByKey", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(words, (s: DStream<string>) =>
        s.map((x) => [x, 1] as const).reduceByKey((a, b) => a + b)
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            ["a", 2],
            ["b", 1]
          ],
          [["", 2]],
          []
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("reduce", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(input, (s: DStream<number>) => s.reduce((a, b) => a + b))
      assert.deepStrictEqual(out, [[10], [26], [42]])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("count", () =>
    Effect.gen(function* () {
      const out = yield* testOperation([[], range(1, 1), range(1, 2), range(1, 3), range(1, 4)], (s: DStream<number>) =>
        s.count()
      )
      assert.deepStrictEqual(out, [[0], [1], [2], [3], [4]])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("countByValue", () =>
    Effect.gen(function* () {
      const out = yield* testOperation([[1], [1, 1, 1], [1, 2], [1, 1, 2, 2]], (s: DStream<number>) => s.countByValue())
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [[1, 1]],
          [[1, 3]],
          [
            [1, 1],
            [2, 1]
          ],
          [
            [2, 2],
            [1, 2]
          ]
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("mapValues", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(words, (s: DStream<string>) =>
        s
          .map((x) => [x, 1] as const)
          .reduceByKey((a, b) => a + b)
          .mapValues((v) => v + 10)
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            ["a", 12],
            ["b", 11]
          ],
          [["", 12]],
          []
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("flatMapValues", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(words, (s: DStream<string>) =>
        s
          .map((x) => [x, 1] as const)
          .reduceByKey((a, b) => a + b)
          .flatMapValues((x) => [x, x + 10])
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            ["a", 2],
            ["a", 12],
            ["b", 1],
            ["b", 11]
          ],
          [
            ["", 2],
            ["", 12]
          ],
          []
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("union", () =>
    Effect.gen(function* () {
      const inp = [range(1, 4), range(101, 104), range(201, 204)]
      const out = yield* testOperation(inp, (s: DStream<number>) => s.union(s.map((x) => x + 4)))
      assert.deepStrictEqual(out, [range(1, 8), range(101, 108), range(201, 208)])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("StreamingContext.union", () =>
    Effect.gen(function* () {
      const inp = [range(1, 4), range(101, 104), range(201, 204)]
      const out = yield* testOperation(inp, (s: DStream<number>) =>
        s.context.union([s, s.map((x) => x + 4), s.map((x) => x + 8)])
      )
      assert.deepStrictEqual(out, [range(1, 12), range(101, 112), range(201, 212)])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("transform", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(input, (r: DStream<number>) => r.transform((rdd) => rdd.map(String)))
      assert.deepStrictEqual(
        out,
        input.map((b) => b.map(String))
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  const in1 = [["a", "b"], ["a", ""], [""], []]
  const in2 = [["a", "b"], ["b", ""], [], [""]]

  it.effect("transformWith", () =>
    Effect.gen(function* () {
      const out = yield* testOperation2(in1, in2, (s1: DStream<string>, s2: DStream<string>) =>
        s1
          .map((x) => [x, 1] as const)
          .transformWith(
            s2.map((x) => [x, "x"] as const),
            (r1, r2) => r1.join(r2)
          )
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            ["a", [1, "x"]],
            ["b", [1, "x"]]
          ],
          [["", [1, "x"]]],
          [],
          []
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("transform with NULL fails the batch, and awaitTermination reports it", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      ssc
        .queueStream([[1, 2, 3, 4]])
        .transform(() => null as unknown as RDD<number>)
        .foreachRDD(() => {})
      yield* ssc.start()
      yield* TestClock.adjust("1 second")
      const error = yield* Effect.flip(ssc.awaitTermination())
      assert.strictEqual(error._tag, "StreamingQueryError")
      assert.include(error.message, "Error generating jobs for time 1000 ms")
      assert.include(error.message, "Transform function must not return null.")
      yield* ssc.stop()
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("union of streams with different slide durations is refused", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const s = ssc.queueStream([[1, 2]])
      const u = s.window("2 seconds", "2 seconds").union(s)
      assert.strictEqual(u.buildError?.message, "Some of the DStreams have different slide durations")
      u.print()
      const error = yield* Effect.flip(ssc.start())
      assert.strictEqual(error.message, "Some of the DStreams have different slide durations")
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("StreamingContext.transform", () =>
    Effect.gen(function* () {
      const inp = [range(1, 4), range(101, 104), range(201, 204)]
      const out = yield* testOperation(inp, (s: DStream<number>) =>
        s.context.transform([s, s.map((x) => x + 4), s.map((x) => x + 8)], (rdds) =>
          rdds.reduce((a: RDD<number>, b: RDD<number>) => a.union(b))
        )
      )
      assert.deepStrictEqual(out, [range(1, 12), range(101, 112), range(201, 212)])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("cogroup", () =>
    Effect.gen(function* () {
      const out = yield* testOperation2(
        [["a", "a", "b"], ["a", ""], [""], []],
        [["a", "a", "b"], ["b", ""], [], []],
        (s1: DStream<string>, s2: DStream<string>) =>
          s1.map((x) => [x, 1] as const).cogroup(s2.map((x) => [x, "x"] as const))
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            [
              "a",
              [
                [1, 1],
                ["x", "x"]
              ]
            ],
            ["b", [[1], ["x"]]]
          ],
          [
            ["a", [[1], []]],
            ["b", [[], ["x"]]],
            ["", [[1], ["x"]]]
          ],
          [["", [[1], []]]],
          []
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("join", () =>
    Effect.gen(function* () {
      const out = yield* testOperation2(in1, in2, (s1: DStream<string>, s2: DStream<string>) =>
        s1.map((x) => [x, 1] as const).join(s2.map((x) => [x, "x"] as const))
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            ["a", [1, "x"]],
            ["b", [1, "x"]]
          ],
          [["", [1, "x"]]],
          [],
          []
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("leftOuterJoin", () =>
    Effect.gen(function* () {
      const out = yield* testOperation2(in1, in2, (s1: DStream<string>, s2: DStream<string>) =>
        s1.map((x) => [x, 1] as const).leftOuterJoin(s2.map((x) => [x, "x"] as const))
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            ["a", [1, "x"]],
            ["b", [1, "x"]]
          ],
          [
            ["", [1, "x"]],
            ["a", [1, undefined]]
          ],
          [["", [1, undefined]]],
          []
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("rightOuterJoin", () =>
    Effect.gen(function* () {
      const out = yield* testOperation2(in1, in2, (s1: DStream<string>, s2: DStream<string>) =>
        s1.map((x) => [x, 1] as const).rightOuterJoin(s2.map((x) => [x, "x"] as const))
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            ["a", [1, "x"]],
            ["b", [1, "x"]]
          ],
          [
            ["", [1, "x"]],
            ["b", [undefined, "x"]]
          ],
          [],
          [["", [undefined, "x"]]]
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("fullOuterJoin", () =>
    Effect.gen(function* () {
      const out = yield* testOperation2(in1, in2, (s1: DStream<string>, s2: DStream<string>) =>
        s1.map((x) => [x, 1] as const).fullOuterJoin(s2.map((x) => [x, "x"] as const))
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            ["a", [1, "x"]],
            ["b", [1, "x"]]
          ],
          [
            ["", [1, "x"]],
            ["a", [1, undefined]],
            ["b", [undefined, "x"]]
          ],
          [["", [1, undefined]]],
          [["", [undefined, "x"]]]
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  const stateInput = [["a"], ["a", "b"], ["a", "b", "c"], ["a", "b"], ["a"], []]

  it.effect("updateStateByKey", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(stateInput, (s: DStream<string>) =>
        s
          .map((x) => [x, 1] as const)
          .updateStateByKey(
            (values: Array<number>, state: number | undefined) => values.reduce((a, b) => a + b, 0) + (state ?? 0)
          )
      )
      assert.deepStrictEqual(
        asSets(out),
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
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("updateStateByKey - simple with initial value RDD", () =>
    Effect.gen(function* () {
      const out = yield* testOperation(stateInput, (s: DStream<string>) =>
        s
          .map((x) => [x, 1] as const)
          .updateStateByKey(
            (values: Array<number>, state: number | undefined) => values.reduce((a, b) => a + b, 0) + (state ?? 0),
            { initialRDD: RDD.parallelize([["a", 1] as const, ["c", 2] as const]) }
          )
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            ["a", 2],
            ["c", 2]
          ],
          [
            ["a", 3],
            ["b", 1],
            ["c", 2]
          ],
          [
            ["a", 4],
            ["b", 2],
            ["c", 3]
          ],
          [
            ["a", 5],
            ["b", 3],
            ["c", 3]
          ],
          [
            ["a", 6],
            ["b", 3],
            ["c", 3]
          ],
          [
            ["a", 6],
            ["b", 3],
            ["c", 3]
          ]
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("updateStateByKey - a key whose function returns undefined loses its state", () =>
    Effect.gen(function* () {
      // Spark's "updateStateByKey - object lifecycle" idea: state removed when the function says None.
      const out = yield* testOperation([["a", "b"], ["a"], [], ["b"]], (s: DStream<string>) =>
        s
          .map((x) => [x, 1] as const)
          .updateStateByKey((values: Array<number>, state: number | undefined) =>
            values.length === 0 ? undefined : values.length + (state ?? 0)
          )
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            ["a", 1],
            ["b", 1]
          ],
          [["a", 2]],
          [],
          [["b", 1]]
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("updateStateByKey without a checkpoint directory fails start with Spark's message", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      ssc
        .queueStream([["a"]])
        .map((x) => [x, 1] as const)
        .updateStateByKey((vs: Array<number>, s: number | undefined) => vs.length + (s ?? 0))
        .print()
      const error = yield* Effect.flip(ssc.start())
      assert.strictEqual(error._tag, "IllegalStateError")
      assert.strictEqual(
        error.message,
        "requirement failed: The checkpoint directory has not been set. Please set it by StreamingContext.checkpoint()."
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("slice - of batches remembered after they ran", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const stream = ssc.queueStream([[1], [2], [3], [4]])
      stream.foreachRDD(() => {})
      const before = yield* Effect.flip(stream.slice(0, 1000))
      assert.strictEqual(before.message, "QueueInputDStream has not been initialized")
      ssc.remember("10 seconds")
      yield* runBatches(ssc, 4)
      const values = (from: number, to: number) =>
        Effect.map(stream.slice(from, to), (rdds) => rdds.map((r) => r.collect()))
      assert.deepStrictEqual(yield* values(1000, 1000), [[1]])
      assert.deepStrictEqual(yield* values(1000, 4000), [[1], [2], [3], [4]])
      assert.deepStrictEqual(yield* values(2000, 3500), [[2], [3]])
      assert.deepStrictEqual(yield* values(0, 0), [])
      yield* ssc.stop()
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("print writes Spark's format through Console", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      ssc.queueStream<unknown>([range(1, 12), [["a", 1]]]).print()
      yield* runBatches(ssc, 2).pipe(Effect.provideService(Console.Console, capture(lines)))
      yield* ssc.stop()
      assert.deepStrictEqual(lines, [
        "-------------------------------------------",
        "Time: 1000 ms",
        "-------------------------------------------",
        ...range(1, 10).map(String),
        "...",
        "",
        "-------------------------------------------",
        "Time: 2000 ms",
        "-------------------------------------------",
        "(a,1)",
        ""
      ])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("the API.md word count", () =>
    Effect.gen(function* () {
      const lines: Array<string> = []
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const text = ssc.queueStream([["a b", "a"], ["b"]])
      text
        .flatMap((l) => l.split(" "))
        .map((w) => [w, 1] as const)
        .reduceByKey((a, b) => a + b)
        .print()
      yield* runBatches(ssc, 2).pipe(Effect.provideService(Console.Console, capture(lines)))
      yield* ssc.stop()
      assert.deepStrictEqual(
        lines.filter((l) => l.startsWith("(")),
        ["(a,2)", "(b,1)", "(b,1)"]
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("saveAsTextFiles writes prefix-<time>.suffix folders of part files", () =>
    Effect.gen(function* () {
      const dir = tempDir("save")
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      ssc
        .queueStream([RDD.parallelize([["a", 1] as const, ["b", 2] as const], 2)])
        .saveAsTextFiles(join(dir, "out"), "txt")
      yield* runBatches(ssc, 1)
      yield* ssc.stop()
      const folder = join(dir, "out-1000.txt")
      const files = yield* Effect.promise(() => readdir(folder))
      assert.deepStrictEqual(files.sort(), ["_SUCCESS", "part-00000", "part-00001"])
      assert.strictEqual(yield* Effect.promise(() => readFile(join(folder, "part-00000"), "utf8")), "(a,1)\n")
      assert.strictEqual(yield* Effect.promise(() => readFile(join(folder, "part-00001"), "utf8")), "(b,2)\n")
      yield* removeDir(dir)
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("rdd.toDF bridges a batch into a DataFrame", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const seen: Array<unknown> = []
      ssc
        .queueStream([
          [
            { word: "a", n: 1 },
            { word: "b", n: 2 }
          ]
        ])
        .foreachRDD((rdd) =>
          Effect.gen(function* () {
            const rows = yield* rdd.toDF("word STRING, n INT").where(F.col("n").gt(1)).collect()
            seen.push(...rows)
          })
        )
      yield* runBatches(ssc, 1)
      yield* ssc.stop()
      assert.deepStrictEqual(seen, [{ word: "b", n: 2 }])
    }).pipe(Effect.provide(sessionLayer))
  )
  // ---- the remaining cases of Spark's suite, with Spark's names ----

  it.effect("repartition (more partitions)", () =>
    Effect.gen(function* () {
      const big = [range(1, 100), range(101, 200), range(201, 300)]
      const out = yield* testOperation(big, (r: DStream<number>) => r.repartition(5).glom(), 3, { partitions: 2 })
      assert.strictEqual(out.length, 3)
      for (let i = 0; i < 3; i++) {
        // runStreamsWithPartitions: each batch as its partitions.
        assert.strictEqual(out[i].length, 5)
        assert.deepStrictEqual(
          out[i].flat().sort((x, y) => x - y),
          big[i]
        )
      }
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("repartition (fewer partitions)", () =>
    Effect.gen(function* () {
      const big = [range(1, 100), range(101, 200), range(201, 300)]
      const out = yield* testOperation(big, (r: DStream<number>) => r.repartition(2).glom(), 3, { partitions: 5 })
      assert.strictEqual(out.length, 3)
      for (let i = 0; i < 3; i++) {
        assert.strictEqual(out[i].length, 2)
        assert.deepStrictEqual(
          out[i].flat().sort((x, y) => x - y),
          big[i]
        )
      }
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("union with input stream return None", () =>
    Effect.gen(function* () {
      const inp = [range(1, 4), range(101, 104), range(201, 204), null]
      const error = yield* Effect.flip(
        testOperation(inp, (s: DStream<number>) => s.union(s.map((x) => x + 4)), inp.length, { checkpoint: false })
      )
      assert.strictEqual(error._tag, "StreamingQueryError")
      assert.include(error.message, "Error generating jobs for time 4000 ms")
      assert.include(error.message, "Could not generate RDD from a parent for unifying at time 4000 ms")
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("transform with NULL", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        testOperation([range(1, 4)], (r: DStream<number>) => r.transform(() => null as unknown as RDD<number>), 1, {
          checkpoint: false
        })
      )
      assert.strictEqual(error._tag, "StreamingQueryError")
      assert.include(error.message, "Transform function must not return null.")
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("transform with input stream return None", () =>
    Effect.gen(function* () {
      const inp = [range(1, 4), range(5, 8), null]
      const error = yield* Effect.flip(
        testOperation(inp, (r: DStream<number>) => r.transform((rdd) => rdd.map(String)), inp.length, {
          checkpoint: false
        })
      )
      assert.strictEqual(error._tag, "StreamingQueryError")
      assert.include(error.message, "Couldn't generate RDD from parent at time 3000 ms")
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("transformWith with input stream return None", () =>
    Effect.gen(function* () {
      const inputData1 = [["a", "b"], ["a", ""], [""], null]
      const inputData2 = [["a", "b"], ["b", ""], [], null]
      const error = yield* Effect.flip(
        testOperation2(inputData1, inputData2, (s1: DStream<string>, s2: DStream<string>) =>
          s1.transformWith(s2, (rdd1, rdd2) => rdd1.union(rdd2))
        )
      )
      assert.strictEqual(error._tag, "StreamingQueryError")
      assert.include(error.message, "Couldn't generate RDD from parent at time 4000 ms")
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("StreamingContext.transform with input stream return None", () =>
    Effect.gen(function* () {
      const inp = [range(1, 4), range(101, 104), range(201, 204), null]
      const error = yield* Effect.flip(
        testOperation(
          inp,
          (s: DStream<number>) =>
            s.context.transform([s, s.map((x) => x + 4), s.map((x) => x + 8)], (rdds) =>
              rdds.reduce((a: RDD<number>, b: RDD<number>) => a.union(b))
            ),
          inp.length,
          { checkpoint: false }
        )
      )
      assert.strictEqual(error._tag, "StreamingQueryError")
      assert.include(error.message, "Couldn't generate RDD from parent at time 4000 ms")
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("updateStateByKey - testing time stamps as input", () =>
    Effect.gen(function* () {
      // a -> 1000, 3000, 6000, 10000, 15000, 15000
      // b -> 0, 2000, 5000, 9000, 9000, 9000
      // c -> 1000, 1000, 3000, 3000, 3000, 3000
      const out = yield* testOperation(stateInput, (s: DStream<string>) =>
        s
          .map((x) => [x, 1] as const)
          .updateStateByKey(
            // Update only if we receive values for this key during the batch.
            (time: number, _key: string, values: Array<number>, state: number | undefined) =>
              values.length > 0 ? time + (state ?? 0) : (state ?? 0),
            {
              numPartitions: 2,
              rememberPartitioner: false,
              initialRDD: RDD.parallelize([["a", 0] as const, ["c", 0] as const])
            }
          )
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            ["a", 1000],
            ["c", 0]
          ],
          [
            ["a", 3000],
            ["b", 2000],
            ["c", 0]
          ],
          [
            ["a", 6000],
            ["b", 5000],
            ["c", 3000]
          ],
          [
            ["a", 10000],
            ["b", 9000],
            ["c", 3000]
          ],
          [
            ["a", 15000],
            ["b", 9000],
            ["c", 3000]
          ],
          [
            ["a", 15000],
            ["b", 9000],
            ["c", 3000]
          ]
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("updateStateByKey - with initial value RDD", () =>
    Effect.gen(function* () {
      const updateFunc = (values: Array<number>, state: number | undefined): number | undefined =>
        values.reduce((a, b) => a + b, 0) + (state ?? 0)
      const out = yield* testOperation(stateInput, (s: DStream<string>) =>
        s
          .map((x) => [x, 1] as const)
          .updateStateByKey(
            function* (iterator: IterableIterator<readonly [string, Array<number>, number | undefined]>) {
              for (const [k, vs, st] of iterator) {
                const next = updateFunc(vs, st)
                if (next !== undefined) yield [k, next] as const
              }
            },
            {
              numPartitions: 2,
              rememberPartitioner: true,
              initialRDD: RDD.parallelize([["a", 1] as const, ["c", 2] as const])
            }
          )
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            ["a", 2],
            ["c", 2]
          ],
          [
            ["a", 3],
            ["b", 1],
            ["c", 2]
          ],
          [
            ["a", 4],
            ["b", 2],
            ["c", 3]
          ],
          [
            ["a", 5],
            ["b", 3],
            ["c", 3]
          ],
          [
            ["a", 6],
            ["b", 3],
            ["c", 3]
          ],
          [
            ["a", 6],
            ["b", 3],
            ["c", 3]
          ]
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("updateStateByKey - object lifecycle", () =>
    Effect.gen(function* () {
      // Spark's StateObject, mutated in place by the update function.
      class StateObject {
        counter = 0
        expireCounter = 0
      }
      const out = yield* testOperation([["a", "b"], null, ["a", "c", "a"], ["c"], null, null], (s: DStream<string>) =>
        s
          .map((x) => [x, 1] as const)
          // updateFunc clears a state when a StateObject is seen without new values twice in a row
          .updateStateByKey((values: Array<number>, state: StateObject | undefined) => {
            const stateObj = state ?? new StateObject()
            const n = values.reduce((a, b) => a + b, 0)
            if (n === 0) stateObj.expireCounter += 1
            else {
              stateObj.counter += n
              stateObj.expireCounter = 0
            }
            return stateObj.expireCounter === 2 ? undefined : stateObj
          })
          .mapValues((o) => o.counter)
      )
      assert.deepStrictEqual(
        asSets(out),
        asSets([
          [
            ["a", 1],
            ["b", 1]
          ],
          [
            ["a", 1],
            ["b", 1]
          ],
          [
            ["a", 3],
            ["c", 1]
          ],
          [
            ["a", 3],
            ["c", 2]
          ],
          [["c", 2]],
          []
        ])
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("slice", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const stream = testInputStream(ssc, [[1], [2], [3], [4]], 2)
      stream.foreachRDD(() => {}) // Dummy output stream
      // Spark starts the context on its manual clock and slices without running a batch: the
      // input computes the RDDs of the sliced times on demand.
      yield* ssc.start()
      const getInputFromSlice = (fromMillis: number, toMillis: number) =>
        Effect.map(stream.slice(fromMillis, toMillis), (rdds) => [...new Set(rdds.flatMap((r) => r.collect()))].sort())
      assert.deepStrictEqual(yield* getInputFromSlice(0, 1000), [1])
      assert.deepStrictEqual(yield* getInputFromSlice(0, 2000), [1, 2])
      assert.deepStrictEqual(yield* getInputFromSlice(1000, 2000), [1, 2])
      assert.deepStrictEqual(yield* getInputFromSlice(2000, 4000), [2, 3, 4])
      yield* ssc.stop()
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("slice - has not been initialized", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const stream = testInputStream(ssc, [[1], [2], [3], [4]], 2)
      const thrown = yield* Effect.flip(stream.slice(0, 1000))
      assert.include(thrown.message, "has not been initialized")
      yield* ssc.stop()
    }).pipe(Effect.provide(sessionLayer))
  )

  const cleanupTestInput = Array.from({ length: 10 }, (_, x) => [x, x + 1])

  /**
   * Spark's `runCleanupTest`: runs the cleanup input for 10 batches (the clock ends at 10 s) and
   * returns the operated stream's node (the output's dependency) with the outputs.
   */
  const runCleanupTest = <O>(operation: (s: DStream<number>) => DStream<O>, rememberMs?: number) =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const dir = tempDir("cleanup")
      ssc.checkpoint(dir)
      const operated = operation(testInputStream(ssc, cleanupTestInput, 2))
      const outputs: Array<Array<O>> = []
      operated.foreachRDD((rdd) => {
        outputs.push(rdd.collect())
      })
      if (rememberMs !== undefined) ssc.remember(rememberMs)
      yield* runBatches(ssc, cleanupTestInput.length)
      const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
      assert.strictEqual(now, 10_000)
      yield* ssc.stop()
      yield* removeDir(dir)
      return { operatedStream: operated, outputs }
    })

  it.effect("rdd cleanup - map and window", () =>
    Effect.gen(function* () {
      const rememberDuration = 3000
      const { operatedStream: windowedStream2, outputs } = yield* runCleanupTest(
        (s) =>
          s
            .map((x) => [x % 10, 1] as const)
            .window("2 seconds", "1 second")
            .window("4 seconds", "2 seconds"),
        rememberDuration
      )
      assert.strictEqual(outputs.length, cleanupTestInput.length / 2)
      const windowedStream1 = windowedStream2.dependencies[0]
      const mappedStream = windowedStream1.dependencies[0]
      const window2 = windowedStream2.windowDuration as number
      const window1 = windowedStream1.windowDuration as number
      assert.deepStrictEqual([window2, window1], [4000, 2000])

      // Checkpoint remember durations
      assert.strictEqual(windowedStream2.rememberDuration, rememberDuration)
      assert.strictEqual(windowedStream1.rememberDuration, rememberDuration + window2)
      assert.strictEqual(mappedStream.rememberDuration, rememberDuration + window2 + window1)

      // WindowedStream2 should remember till 7 seconds: 10, 9, 8, 7
      // WindowedStream1 should remember till 4 seconds: 10, 9, 8, 7, 6, 5, 4
      // MappedStream should remember till 2 seconds:    10, 9, 8, 7, 6, 5, 4, 3, 2

      // WindowedStream2
      assert.isTrue(windowedStream2.generatedRDDs.has(10000))
      assert.isTrue(windowedStream2.generatedRDDs.has(8000))
      assert.isFalse(windowedStream2.generatedRDDs.has(6000))

      // WindowedStream1
      assert.isTrue(windowedStream1.generatedRDDs.has(10000))
      assert.isTrue(windowedStream1.generatedRDDs.has(4000))
      assert.isFalse(windowedStream1.generatedRDDs.has(3000))

      // MappedStream
      assert.isTrue(mappedStream.generatedRDDs.has(10000))
      assert.isTrue(mappedStream.generatedRDDs.has(2000))
      assert.isFalse(mappedStream.generatedRDDs.has(1000))
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("rdd cleanup - updateStateByKey", () =>
    Effect.gen(function* () {
      const { operatedStream: stateStream, outputs } = yield* runCleanupTest((s) =>
        s
          .map((x) => [x, 1] as const)
          .updateStateByKey(
            (values: Array<number>, state: number | undefined) => values.reduce((a, b) => a + b, 0) + (state ?? 0)
          )
          .checkpoint("3 seconds")
      )
      assert.strictEqual(outputs.length, cleanupTestInput.length)
      assert.strictEqual(stateStream.checkpointDuration, 3000)
      assert.strictEqual(stateStream.rememberDuration, (stateStream.checkpointDuration as number) * 2)
      assert.isTrue(stateStream.generatedRDDs.has(10000))
      assert.isFalse(stateStream.generatedRDDs.has(4000))
    }).pipe(Effect.provide(sessionLayer))
  )
})

/** A Console whose `log` appends to `lines`. */
const capture = (lines: Array<string>): Console.Console => {
  const log = (...args: ReadonlyArray<unknown>) => {
    lines.push(args.map(String).join(" "))
  }
  return { ...globalThis.console, log } as unknown as Console.Console
}
