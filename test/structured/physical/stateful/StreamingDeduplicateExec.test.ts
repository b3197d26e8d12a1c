/**
 * Streaming deduplication (`StreamingDeduplicateExec`, Spark's StreamingDeduplicateExec and
 * StreamingDeduplicateWithinWatermarkExec) driven batch by batch: the per-batch expectations and
 * metrics of Spark's `StreamingDeduplicationSuite` and `StreamingDeduplicationWithinWatermarkSuite`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../../mod.ts"
import { timestamp_seconds } from "../../../../core/functions/ScalarFunctions.ts"
import { planStreaming, sinceLastAdd, sorted, StreamDriver } from "./StreamDriver.ts"

const Str = Schema.Struct({ value: Schema.String })
const Pair = Schema.Struct({ _1: Schema.String, _2: Schema.Int })
const Value = Schema.Struct({ value: Schema.Int })
const IntPair = Schema.Struct({ _1: Schema.Int, _2: Schema.Int })

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)
const v = (...xs: ReadonlyArray<number>) => xs.map((x) => [x])

/** `(total, updated, droppedByWatermark, removed)` of operator `id` as Spark's `assertNumStateRows` sees them. */
const metrics = (d: StreamDriver, id = 0) => {
  const m = sinceLastAdd(d, id)
  return [m.total, m.updated, m.droppedByWatermark, m.removed]
}

/** Spark's `assertStateOperatorCustomMetric("numDroppedDuplicateRows", _)`. */
const dups = (d: StreamDriver, id = 0) => sinceLastAdd(d, id).custom("numDroppedDuplicateRows")

/** Spark's dedup-with-watermark query: `eventTime` (seconds, as long) after `dropDuplicates()`. */
const dedupWithWatermark = (input: MemoryStream<{ readonly value: number }>) =>
  input
    .toDF()
    .withColumn("eventTime", timestamp_seconds("value"))
    .withWatermark("eventTime", "10 seconds")
    .dropDuplicates()
    .select(F.col("eventTime").cast("long"))

describe("StreamingDeduplicateExec: StreamingDeduplicationSuite", () => {
  it.effect("deduplicate with all columns", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Str)
      const d = new StreamDriver(planStreaming(input.toDF().dropDuplicates()), "append")
      assert.deepStrictEqual(yield* d.addData([["a"]]), [["a"]])
      assert.deepStrictEqual(metrics(d), [1, 1, 0, 0])
      assert.deepStrictEqual(yield* d.addData([["a"]]), [])
      assert.deepStrictEqual(metrics(d), [1, 0, 0, 0])
      assert.deepStrictEqual(yield* d.addData([["b"]]), [["b"]])
      assert.deepStrictEqual(metrics(d), [2, 1, 0, 0])
      assert.strictEqual(d.progressOf()?.operatorName, "dedupe")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("distinct() on a stream is dropDuplicates()", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Str)
      const d = new StreamDriver(planStreaming(input.toDF().distinct()), "append")
      assert.deepStrictEqual(yield* d.addData([["a"], ["b"], ["a"]]), [["a"], ["b"]])
      assert.deepStrictEqual(yield* d.addData([["b"], ["c"]]), [["c"]])
      assert.strictEqual(dups(d), 1)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("deduplicate with some columns", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Pair)
      const d = new StreamDriver(planStreaming(input.toDF().dropDuplicates(["_1"])), "append")
      assert.deepStrictEqual(yield* d.addData([["a", 1]]), [["a", 1]])
      assert.deepStrictEqual(metrics(d), [1, 1, 0, 0])
      assert.deepStrictEqual(yield* d.addData([["a", 2]]), [])
      assert.deepStrictEqual(metrics(d), [1, 0, 0, 0])
      assert.deepStrictEqual(yield* d.addData([["b", 1]]), [["b", 1]])
      assert.deepStrictEqual(metrics(d), [2, 1, 0, 0])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("multiple deduplicates: operator ids follow the plan top-down (Spark)", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Pair)
      const d = new StreamDriver(planStreaming(input.toDF().dropDuplicates().dropDuplicates(["_1"])), "append")
      assert.deepStrictEqual(yield* d.addData([["a", 1]]), [["a", 1]])
      assert.deepStrictEqual(
        [metrics(d, 1), metrics(d, 0)],
        [
          [1, 1, 0, 0],
          [1, 1, 0, 0]
        ]
      )
      // Dropped by the second dropDuplicates (the topmost: operator 0).
      assert.deepStrictEqual(yield* d.addData([["a", 2]]), [])
      assert.deepStrictEqual([metrics(d, 1)[0], metrics(d, 0)[0]], [2, 1])
      assert.deepStrictEqual([metrics(d, 1)[1], metrics(d, 0)[1]], [1, 0])
      assert.deepStrictEqual(yield* d.addData([["b", 1]]), [["b", 1]])
      assert.deepStrictEqual([metrics(d, 1)[0], metrics(d, 0)[0]], [3, 2])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-35896: metrics in StateOperatorProgress", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const d = new StreamDriver(planStreaming(dedupWithWatermark(input)), "append")
      const data = range(1, 5).flatMap(() => range(10, 15))
      assert.deepStrictEqual(sorted(yield* d.addData(v(...data))), sorted(v(...range(10, 15))))
      assert.deepStrictEqual(metrics(d), [6, 6, 0, 0])
      // Watermark 15: the no-data batch evicts 10..15.
      assert.deepStrictEqual(yield* d.addData(v(25)), [[25]])
      assert.deepStrictEqual(metrics(d), [1, 1, 0, 6])
      assert.deepStrictEqual(yield* d.addData(v(10)), [])
      assert.deepStrictEqual(metrics(d), [1, 0, 1, 0])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("deduplicate with watermark", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const d = new StreamDriver(planStreaming(dedupWithWatermark(input)), "append")
      const data = range(1, 5).flatMap(() => range(10, 15))
      assert.deepStrictEqual(sorted(yield* d.addData(v(...data))), sorted(v(...range(10, 15))))
      assert.deepStrictEqual(yield* d.addData(v(25)), [[25]])
      assert.strictEqual(d.progressOf()?.numRowsTotal, 1)
      assert.deepStrictEqual(yield* d.addData(v(10)), [])
      assert.deepStrictEqual(metrics(d).slice(0, 3), [1, 0, 1])
      // Watermark 35: the no-data batch evicts 25.
      assert.deepStrictEqual(yield* d.addData(v(45)), [[45]])
      assert.strictEqual(d.progressOf()?.numRowsTotal, 1)
      assert.deepStrictEqual([...d.provider.entries(0).values()], [[45_000]])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("deduplicate with aggregate - append mode (two stateful operators)", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const df = input
        .toDF()
        .withColumn("eventTime", timestamp_seconds("value"))
        .withWatermark("eventTime", "10 seconds")
        .dropDuplicates()
        .groupBy(F.window("eventTime", "5 seconds").as("window"))
        .agg(F.count("*").as("count"))
        .select(F.col("window").getField("start").cast("long"), F.col("count"))
      const d = new StreamDriver(planStreaming(df), "append")
      // Operator 0 is the aggregation (the topmost), 1 the deduplication below it.
      assert.deepStrictEqual(yield* d.addData(v(...range(1, 5).flatMap(() => range(10, 15)))), [])
      assert.deepStrictEqual([d.progressOf(0)?.numRowsTotal, d.progressOf(1)?.numRowsTotal], [2, 6])
      assert.deepStrictEqual(yield* d.addData(v(25)), [[10, 5]])
      assert.deepStrictEqual([d.progressOf(0)?.numRowsTotal, d.progressOf(1)?.numRowsTotal], [2, 1])
      assert.deepStrictEqual(yield* d.addData(v(10)), [])
      assert.deepStrictEqual(
        [d.progressOf(0)?.numRowsDroppedByWatermark, d.progressOf(1)?.numRowsDroppedByWatermark],
        [0, 1]
      )
      assert.deepStrictEqual(
        sorted(yield* d.addData(v(40))),
        sorted([
          [15, 1],
          [25, 1]
        ])
      )
      assert.deepStrictEqual([d.progressOf(0)?.numRowsTotal, d.progressOf(1)?.numRowsTotal], [1, 1])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("deduplicate with aggregate - update and complete mode", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Pair)
      const df = input
        .toDF()
        .select(F.col("_1").as("str"), F.col("_2").as("num"))
        .dropDuplicates()
        .groupBy("str")
        .agg(F.sum("num"))
      const u = new StreamDriver(planStreaming(df), "update")
      assert.deepStrictEqual(yield* u.addData([["a", 1]]), [["a", 1]])
      assert.deepStrictEqual(yield* u.addData([["a", 1]]), [])
      assert.deepStrictEqual([u.progressOf(0)?.numRowsUpdated, u.progressOf(1)?.numRowsUpdated], [0, 0])
      assert.deepStrictEqual(yield* u.addData([["a", 2]]), [["a", 3]])
      assert.deepStrictEqual(yield* u.addData([["b", 1]]), [["b", 1]])
      assert.deepStrictEqual([u.progressOf(0)?.numRowsTotal, u.progressOf(1)?.numRowsTotal], [2, 3])

      const c = new StreamDriver(planStreaming(df), "complete")
      assert.deepStrictEqual(yield* c.addData([["a", 1]]), [["a", 1]])
      assert.deepStrictEqual(yield* c.addData([["a", 1]]), [["a", 1]])
      assert.deepStrictEqual(yield* c.addData([["a", 2]]), [["a", 3]])
      assert.deepStrictEqual(
        sorted(yield* c.addData([["b", 1]])),
        sorted([
          ["a", 3],
          ["b", 1]
        ])
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-19841: the watermark predicate filters on the keys' event time", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(IntPair)
      const df = input
        .toDF()
        .select(timestamp_seconds("_1").as("time"), F.col("_2").as("id"))
        .withWatermark("time", "1 second")
        .dropDuplicates(["id", "time"])
        .select("id")
      const d = new StreamDriver(planStreaming(df), "append")
      assert.deepStrictEqual(
        sorted(
          yield* d.addData([
            [1, 1],
            [1, 1],
            [1, 2]
          ])
        ),
        [[1], [2]]
      )
      assert.deepStrictEqual(
        sorted(
          yield* d.addData([
            [1, 1],
            [2, 3],
            [2, 4]
          ])
        ),
        [[3], [4]]
      )
      // (1, 0) and (1, 1) are at or below the watermark 1.
      assert.deepStrictEqual(
        sorted(
          yield* d.addData([
            [1, 0],
            [1, 1],
            [3, 5],
            [3, 6]
          ])
        ),
        [[5], [6]]
      )
      assert.deepStrictEqual(
        yield* d.addData([
          [1, 0],
          [4, 7]
        ]),
        [[7]]
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-21546: dropDuplicates keyed without the event time keeps its keys", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(IntPair)
      const df = input
        .toDF()
        .select(F.col("_1").as("id"), timestamp_seconds("_2").as("time"))
        .withWatermark("time", "1 second")
        .dropDuplicates(["id"])
        .select(F.col("id"), F.col("time").cast("long"))
      const d = new StreamDriver(planStreaming(df), "append")
      assert.deepStrictEqual(
        yield* d.addData([
          [1, 1],
          [1, 2],
          [2, 2]
        ]),
        [
          [1, 1],
          [2, 2]
        ]
      )
      // The watermark moved to 1 s: keys are not evicted (the event time is not a key), so 1 stays a duplicate.
      assert.deepStrictEqual(yield* d.addData([[1, 30]]), [])
      assert.strictEqual(d.progressOf()?.numRowsTotal, 2)
      // Spark filters late rows on the input's event-time column even when it is not a key.
      assert.deepStrictEqual(yield* d.addData([[3, 5]]), [])
      assert.strictEqual(d.progressOf()?.numRowsDroppedByWatermark, 1)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-35880: custom metric numDroppedDuplicateRows", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Pair)
      const d = new StreamDriver(planStreaming(input.toDF().dropDuplicates(["_1"])), "append")
      assert.deepStrictEqual(yield* d.addData([["a", 1]]), [["a", 1]])
      assert.strictEqual(dups(d), 0)
      assert.deepStrictEqual(
        yield* d.addData([
          ["a", 2],
          ["b", 3]
        ]),
        [["b", 3]]
      )
      assert.strictEqual(dups(d), 1)
      assert.deepStrictEqual(
        yield* d.addData([
          ["a", 5],
          ["b", 2],
          ["c", 9]
        ]),
        [["c", 9]]
      )
      assert.strictEqual(dups(d), 2)

      const wm = yield* MemoryStream.make(Value)
      const w = new StreamDriver(planStreaming(dedupWithWatermark(wm)), "append")
      assert.deepStrictEqual((yield* w.addData(v(...range(1, 5).flatMap(() => range(10, 15))))).length, 6)
      assert.strictEqual(dups(w), 24)
      assert.deepStrictEqual(yield* w.addData(v(14)), [])
      assert.strictEqual(dups(w), 1)
      assert.deepStrictEqual(yield* w.addData(v(25)), [[25]])
      assert.strictEqual(dups(w), 0)
      assert.deepStrictEqual(yield* w.addData(v(10)), [])
      assert.strictEqual(dups(w), 0)
      assert.deepStrictEqual(yield* w.addData(v(26, 26)), [[26]])
      assert.strictEqual(dups(w), 1)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("StreamingDeduplicateExec: StreamingDeduplicationWithinWatermarkSuite", () => {
  it.effect("deduplicate with all columns with event time column", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const df = input
        .toDF()
        .withColumn("eventTime", timestamp_seconds("value"))
        .withWatermark("eventTime", "10 seconds")
        .dropDuplicatesWithinWatermark()
        .select(F.col("eventTime").cast("long"))
      const d = new StreamDriver(planStreaming(df), "append")
      // Watermark 5: nothing expires (expiry = time + 10).
      assert.deepStrictEqual(
        sorted(yield* d.addData(v(...range(1, 5).flatMap(() => range(10, 15))))),
        sorted(v(...range(10, 15)))
      )
      assert.deepStrictEqual(metrics(d).slice(0, 2), [6, 6])
      assert.strictEqual(d.progressOf()?.operatorName, "dedupeWithinWatermark")
      // 13..15 are duplicates; watermark 7.
      assert.deepStrictEqual(sorted(yield* d.addData(v(13, 14, 15, 16, 17))), [[16], [17]])
      assert.deepStrictEqual(metrics(d).slice(0, 2), [8, 2])
      assert.deepStrictEqual(yield* d.addData(v(5)), [])
      assert.deepStrictEqual(metrics(d).slice(0, 3), [8, 0, 1])
      // Watermark 25 evicts the expiries <= 25 (10..15 expire at 20..25).
      assert.deepStrictEqual(yield* d.addData(v(35)), [[35]])
      assert.deepStrictEqual(metrics(d), [3, 1, 0, 6])
      assert.deepStrictEqual(yield* d.addData(v(55)), [[55]])
      assert.deepStrictEqual(metrics(d).slice(0, 2), [1, 1])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("deduplicate with subset of columns which event time column is not in subset", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Pair)
      const df = input
        .toDF()
        .withColumn("eventTime", timestamp_seconds("_2"))
        .withWatermark("eventTime", "2 seconds")
        .dropDuplicatesWithinWatermark(["_1"])
        .select(F.col("_1"), F.col("eventTime").cast("long"))
      const d = new StreamDriver(planStreaming(df), "append")
      assert.deepStrictEqual(yield* d.addData([["a", 17]]), [["a", 17]])
      assert.deepStrictEqual([...d.provider.entries(0).values()], [[19_000]])
      assert.strictEqual(d.progressOf()?.numRowsTotal, 1)
      assert.deepStrictEqual(yield* d.addData([["a", 16]]), [])
      assert.deepStrictEqual(metrics(d).slice(0, 2), [1, 0])
      assert.deepStrictEqual(yield* d.addData([["a", 13]]), [])
      assert.deepStrictEqual(metrics(d).slice(0, 3), [1, 0, 1])
      // Watermark 20: the no-data batch drops ("a", 19).
      assert.deepStrictEqual(
        sorted(
          yield* d.addData([
            ["b", 22],
            ["c", 21]
          ])
        ),
        sorted([
          ["b", 22],
          ["c", 21]
        ])
      )
      assert.deepStrictEqual(metrics(d), [2, 2, 0, 1])
      assert.deepStrictEqual(yield* d.addData([["a", 21]]), [["a", 21]])
      assert.deepStrictEqual(metrics(d).slice(0, 2), [3, 1])
      // Watermark 23: drops ("a", 23) and ("c", 23).
      assert.deepStrictEqual(yield* d.addData([["d", 25]]), [["d", 25]])
      assert.deepStrictEqual(metrics(d), [2, 1, 0, 2])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a key stays a duplicate until it is evicted, even past its expiry", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Pair)
      const df = input
        .toDF()
        .withColumn("eventTime", timestamp_seconds("_2"))
        .withWatermark("eventTime", "2 seconds")
        .dropDuplicatesWithinWatermark(["_1"])
        .select(F.col("_1"), F.col("eventTime").cast("long"))
      const d = new StreamDriver(planStreaming(df), "append", { noDataBatches: false })
      assert.deepStrictEqual(yield* d.addData([["a", 17]]), [["a", 17]])
      // Batch 1 runs with eviction watermark 15; "a" expires at 19 and is a duplicate.
      assert.deepStrictEqual(yield* d.addData([["x", 30]]), [["x", 30]])
      // Batch 2 runs with eviction watermark 28 > 19: "a" is still stored when the row arrives,
      // so it is a duplicate; the key is evicted at the end of the batch.
      assert.deepStrictEqual(yield* d.addData([["a", 29]]), [])
      assert.strictEqual(d.progressOf()?.numRowsRemoved, 1)
      assert.deepStrictEqual(yield* d.addData([["a", 29]]), [["a", 29]])
    }).pipe(Effect.provide(Session.layer()))
  )
})
