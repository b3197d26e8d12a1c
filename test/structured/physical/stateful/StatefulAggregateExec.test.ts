/**
 * Streaming aggregation (`StatefulAggregateExec`, Spark's StateStoreRestore/StateStoreSave) driven
 * batch by batch with an in-memory state store: the per-batch expectations of Spark's
 * `EventTimeWatermarkSuite` ("append mode", "update mode", "complete mode", "group by on raw
 * timestamp", "recovery") and `StreamingAggregationSuite` (simple counts, state metrics, sort
 * after aggregate, multiple keys, `last` across batches), plus sliding windows.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../../mod.ts"
import { timestamp_seconds } from "../../../../core/functions/ScalarFunctions.ts"
import { sorted, StreamDriver, planStreaming } from "./StreamDriver.ts"

const Value = Schema.Struct({ value: Schema.Int })
const v = (...xs: ReadonlyArray<number>) => xs.map((x) => [x])

/** Spark's windowed count: `(window.start as long, count)` with a 10 s watermark on `eventTime`. */
const windowedCount = (input: MemoryStream<{ readonly value: number }>, window = "5 seconds", slide?: string) =>
  input
    .toDF()
    .withColumn("eventTime", timestamp_seconds("value"))
    .withWatermark("eventTime", "10 seconds")
    .groupBy(F.window("eventTime", window, slide).as("window"))
    .agg(F.count("*").as("count"))
    .select(F.col("window").getField("start").cast("long"), F.col("count"))

describe("StatefulAggregateExec: EventTimeWatermarkSuite", () => {
  it.effect("append mode: windows are emitted once the watermark passes their end", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const d = new StreamDriver(planStreaming(windowedCount(input)), "append")
      assert.deepStrictEqual(yield* d.addData(v(10, 11, 12, 13, 14, 15)), [])
      // Advance watermark to 15 seconds: the no-data batch closes [10, 15).
      assert.deepStrictEqual(yield* d.addData(v(25)), [[10, 5]])
      assert.strictEqual(d.progressOf()?.numRowsTotal, 2)
      assert.strictEqual(d.progressOf()?.numRowsDroppedByWatermark, 0)
      // Data below the watermark emits nothing and is counted as dropped.
      assert.deepStrictEqual(yield* d.addData(v(10)), [])
      assert.strictEqual(d.progressOf()?.numRowsTotal, 2)
      assert.strictEqual(d.progressOf()?.numRowsDroppedByWatermark, 1)
      // The batches and the watermarks they ran with, as Spark's MicroBatchExecution runs them.
      assert.deepStrictEqual(
        d.batches.map((b) => [b.batchId, b.lateMs, b.evictionMs, b.rows.length]),
        [
          [0, 0, 0, 0],
          [1, 0, 5_000, 0],
          [2, 5_000, 5_000, 0],
          [3, 5_000, 15_000, 1],
          [4, 15_000, 15_000, 0]
        ]
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("update mode: updated windows each batch, late rows ignored, old windows evicted", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const d = new StreamDriver(planStreaming(windowedCount(input)), "update")
      assert.deepStrictEqual(
        sorted(yield* d.addData(v(10, 11, 12, 13, 14, 15))),
        sorted([
          [10, 5],
          [15, 1]
        ])
      )
      assert.deepStrictEqual(yield* d.addData(v(25)), [[25, 1]])
      assert.strictEqual(d.progressOf()?.numRowsTotal, 2)
      assert.strictEqual(d.progressOf()?.numRowsRemoved, 1)
      assert.strictEqual(d.progressOf()?.numRowsDroppedByWatermark, 0)
      // 10 is below the watermark (its window [10, 15) ends at 15 <= 15).
      assert.deepStrictEqual(yield* d.addData(v(10, 25)), [[25, 2]])
      assert.strictEqual(d.progressOf()?.numRowsTotal, 2)
      assert.strictEqual(d.progressOf()?.numRowsUpdated, 1)
      assert.strictEqual(d.progressOf()?.numRowsDroppedByWatermark, 1)
      assert.deepStrictEqual(yield* d.addData(v(10)), [])
      assert.strictEqual(d.progressOf()?.numRowsTotal, 2)
      assert.strictEqual(d.progressOf()?.numRowsDroppedByWatermark, 1)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("complete mode: no eviction, every window every batch", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const d = new StreamDriver(planStreaming(windowedCount(input)), "complete")
      assert.deepStrictEqual(yield* d.addData(v(10, 11, 12)), [[10, 3]])
      assert.deepStrictEqual(
        sorted(yield* d.addData(v(25))),
        sorted([
          [10, 3],
          [25, 1]
        ])
      )
      assert.deepStrictEqual(
        sorted(yield* d.addData(v(25))),
        sorted([
          [10, 3],
          [25, 2]
        ])
      )
      assert.deepStrictEqual(
        sorted(yield* d.addData(v(10))),
        sorted([
          [10, 4],
          [25, 2]
        ])
      )
      assert.deepStrictEqual(
        sorted(yield* d.addData(v(25))),
        sorted([
          [10, 4],
          [25, 3]
        ])
      )
      // Complete mode never asks for a no-data batch.
      assert.strictEqual(d.batches.length, 5)
      assert.strictEqual(d.progressOf()?.numRowsDroppedByWatermark, 0)
      assert.strictEqual(d.progressOf()?.numRowsRemoved, 0)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("group by on raw timestamp", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const df = input
        .toDF()
        .withColumn("eventTime", timestamp_seconds("value"))
        .withWatermark("eventTime", "10 seconds")
        .groupBy("eventTime")
        .agg(F.count("*").as("count"))
        .select(F.col("eventTime").cast("long"), F.col("count"))
      const d = new StreamDriver(planStreaming(df), "append")
      assert.deepStrictEqual(yield* d.addData(v(10)), [])
      assert.deepStrictEqual(yield* d.addData(v(25)), [[10, 1]])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("recovery: a re-run batch recomputes from the previous version; restarts keep state", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const plan = planStreaming(windowedCount(input))
      const d = new StreamDriver(plan, "append")
      assert.deepStrictEqual(yield* d.addData(v(10, 11, 12, 13, 14, 15)), [])
      assert.deepStrictEqual(yield* d.addData(v(25)), [[10, 5]])
      // Restart (a new plan over the same state and watermark).
      const d2 = d.restart(planStreaming(windowedCount(input)))
      // 10 is ignored; watermark moves to 20 and closes [15, 20).
      assert.deepStrictEqual(yield* d2.addData(v(10, 27, 30)), [[15, 1]])
      const d3 = d2.restart()
      assert.deepStrictEqual(yield* d3.addData(v(17)), [])
      assert.deepStrictEqual(yield* d3.addData(v(40)), [[25, 2]])
      // Re-running the last batch (its commit never reached the commit log) gives the same output.
      const last = d3.batches[d3.batches.length - 1]
      const rerun = new StreamDriver(plan, "append", {
        provider: d3.provider,
        batchId: last.batchId,
        watermarkMs: last.evictionMs,
        lastBatchWatermarkMs: last.lateMs,
        noDataBatches: false
      })
      const again = yield* rerun.runBatch([])
      assert.deepStrictEqual(again.rows, last.rows)
      assert.deepStrictEqual(d3.provider.entries(0, last.batchId), d3.provider.entries(0))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("sliding windows: each event counts in every window that contains it", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const d = new StreamDriver(planStreaming(windowedCount(input, "10 seconds", "5 seconds")), "append")
      // 12 is in [5, 15) and [10, 20); 17 in [10, 20) and [15, 25).
      assert.deepStrictEqual(yield* d.addData(v(12, 17)), [])
      assert.strictEqual(d.progressOf()?.numRowsTotal, 3)
      // Watermark 30 - 10 = 20 closes [5, 15) and [10, 20).
      assert.deepStrictEqual(
        sorted(yield* d.addData(v(30))),
        sorted([
          [5, 1],
          [10, 2]
        ])
      )
      // 14 is late for both its windows ([5, 15) and [10, 20) end at or below 20): two dropped rows.
      assert.deepStrictEqual(yield* d.addData(v(14)), [])
      assert.strictEqual(d.progressOf()?.numRowsDroppedByWatermark, 2)
      // 16 is late for [10, 20) but still counts in [15, 25).
      assert.deepStrictEqual(yield* d.addData(v(16)), [])
      assert.strictEqual(d.progressOf()?.numRowsDroppedByWatermark, 1)
      // Watermark 40 - 10 = 30 closes [15, 25) only ([25, 35) and [30, 40) end later).
      assert.deepStrictEqual(yield* d.addData(v(40)), [[15, 2]])
      assert.strictEqual(d.progressOf()?.numRowsTotal, 4)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("StatefulAggregateExec: StreamingAggregationSuite", () => {
  it.effect("simple count, update mode (with a restart)", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const df = input.toDF().groupBy("value").agg(F.count("*"))
      const d = new StreamDriver(planStreaming(df), "update")
      assert.deepStrictEqual(yield* d.addData(v(3)), [[3, 1]])
      assert.deepStrictEqual(
        sorted(yield* d.addData(v(3, 2))),
        sorted([
          [3, 2],
          [2, 1]
        ])
      )
      const d2 = d.restart(planStreaming(df))
      assert.deepStrictEqual(
        sorted(yield* d2.addData(v(3, 2, 1))),
        sorted([
          [3, 3],
          [2, 2],
          [1, 1]
        ])
      )
      assert.deepStrictEqual(yield* d2.addData(v(4, 4, 4, 4)), [[4, 4]])
      // No watermark: no batch without data, no eviction.
      assert.strictEqual(d2.batches.length, 2)
      assert.strictEqual(d2.progressOf()?.numRowsTotal, 4)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("simple count, complete mode (with a restart)", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const df = input.toDF().groupBy("value").agg(F.count("*"))
      const d = new StreamDriver(planStreaming(df), "complete")
      assert.deepStrictEqual(yield* d.addData(v(3)), [[3, 1]])
      assert.deepStrictEqual(
        sorted(yield* d.addData(v(2))),
        sorted([
          [3, 1],
          [2, 1]
        ])
      )
      const d2 = d.restart(planStreaming(df))
      assert.deepStrictEqual(
        sorted(yield* d2.addData(v(3, 2, 1))),
        sorted([
          [3, 2],
          [2, 2],
          [1, 1]
        ])
      )
      assert.deepStrictEqual(
        sorted(yield* d2.addData(v(4, 4, 4, 4))),
        sorted([
          [4, 4],
          [3, 2],
          [2, 2],
          [1, 1]
        ])
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("sort after aggregate in complete mode", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const df = input.toDF().groupBy("value").agg(F.count("*").as("count")).orderBy(F.col("count").desc())
      const d = new StreamDriver(planStreaming(df), "complete")
      assert.deepStrictEqual(yield* d.addData(v(3)), [[3, 1]])
      assert.deepStrictEqual(yield* d.addData(v(2, 3)), [
        [3, 2],
        [2, 1]
      ])
      assert.deepStrictEqual(yield* d.addData(v(3, 2, 1)), [
        [3, 3],
        [2, 2],
        [1, 1]
      ])
      assert.deepStrictEqual(yield* d.addData(v(4, 4, 4, 4)), [
        [4, 4],
        [3, 3],
        [2, 2],
        [1, 1]
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("state metrics: update and complete mode", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const df = input
        .toDF()
        .flatMap((r) => [{ value: r.value }, { value: r.value + 1 }], Value)
        .groupBy("value")
        .agg(F.count("*"))
      const u = new StreamDriver(planStreaming(df), "update")
      assert.deepStrictEqual(
        sorted(yield* u.addData(v(1))),
        sorted([
          [1, 1],
          [2, 1]
        ])
      )
      assert.strictEqual(u.progressOf()?.numRowsUpdated, 2)
      assert.strictEqual(u.progressOf()?.numRowsTotal, 2)
      assert.deepStrictEqual(
        sorted(yield* u.addData(v(2, 3))),
        sorted([
          [2, 2],
          [3, 2],
          [4, 1]
        ])
      )
      assert.strictEqual(u.progressOf()?.numRowsUpdated, 3)
      assert.strictEqual(u.progressOf()?.numRowsTotal, 4)
      assert.strictEqual(u.progressOf()?.operatorName, "stateStoreSave")

      const c = new StreamDriver(planStreaming(df), "complete")
      assert.deepStrictEqual(
        sorted(yield* c.addData(v(1))),
        sorted([
          [1, 1],
          [2, 1]
        ])
      )
      assert.strictEqual(c.progressOf()?.numRowsUpdated, 2)
      assert.strictEqual(c.progressOf()?.numRowsTotal, 2)
      const out = yield* c.addData(v(2, 3))
      assert.deepStrictEqual(
        sorted(out),
        sorted([
          [1, 1],
          [2, 2],
          [3, 2],
          [4, 1]
        ])
      )
      assert.strictEqual(c.progressOf()?.numRowsUpdated, 3)
      assert.strictEqual(c.progressOf()?.numRowsTotal, 4)
      assert.deepStrictEqual(c.progressOf()?.customMetrics, {})
      assert.strictEqual(c.progressOf()?.allUpdatesTimeMs, 0)
      assert.strictEqual(c.progressOf()?.commitTimeMs, 0)
      assert.isTrue((c.progressOf()?.memoryUsedBytes ?? 0) > 0)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("multiple keys", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const df = input.toDF().groupBy(F.col("value"), F.col("value").plus(1)).agg(F.count("*"))
      const d = new StreamDriver(planStreaming(df), "update")
      assert.deepStrictEqual(
        sorted(yield* d.addData(v(1, 2))),
        sorted([
          [1, 2, 1],
          [2, 3, 1]
        ])
      )
      assert.deepStrictEqual(
        sorted(yield* d.addData(v(1, 2))),
        sorted([
          [1, 2, 2],
          [2, 3, 2]
        ])
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-22230: last should change with new batches (a global aggregate)", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const df = input.toDF().agg(F.last("value"))
      const d = new StreamDriver(planStreaming(df), "complete")
      assert.deepStrictEqual(yield* d.addData(v(1, 2, 3)), [[3]])
      assert.deepStrictEqual(yield* d.addData(v(4, 5, 6)), [[6]])
      assert.deepStrictEqual(yield* d.addData([]), [[6]])
      assert.deepStrictEqual(yield* d.addData(v(0)), [[0]])
      // One state row under the empty key.
      assert.deepStrictEqual([...d.provider.entries(0).keys()], [""])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a global count over no data is 0 and then accumulates (update mode)", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const df = input.toDF().agg(F.count("*"), F.sum("value"), F.avg("value"))
      const d = new StreamDriver(planStreaming(df), "update")
      assert.deepStrictEqual(yield* d.addData([]), [[0, null, null]])
      assert.deepStrictEqual(yield* d.addData(v(1, 2)), [[2, 3, 1.5]])
      assert.deepStrictEqual(yield* d.addData(v(6)), [[3, 9, 3]])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("collect_list keeps arrival order across batches (stored rows before new ones)", () =>
    Effect.gen(function* () {
      const KV = Schema.Struct({ k: Schema.String, v: Schema.Int })
      const input = yield* MemoryStream.make(KV)
      const df = input.toDF().groupBy("k").agg(F.collect_list("v"), F.first("v"), F.max("v"))
      const d = new StreamDriver(planStreaming(df), "update")
      assert.deepStrictEqual(
        yield* d.addData([
          ["a", 3],
          ["a", 1]
        ]),
        [["a", [3, 1], 3, 3]]
      )
      assert.deepStrictEqual(
        yield* d.addData([
          ["a", 2],
          ["b", 9]
        ]),
        [
          ["a", [3, 1, 2], 3, 3],
          ["b", [9], 9, 9]
        ]
      )
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("StatefulAggregateExec: typed folds of count and sum", () => {
  const Row = Schema.Struct({
    k: Schema.String,
    g: Schema.NullOr(Schema.Int),
    h: Schema.String,
    x: Schema.NullOr(Schema.Int),
    d: Schema.NullOr(Schema.Number)
  })

  it.effect("count(*), count(col), long and double sums with nulls over three grouping columns", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Row)
      const df = input
        .toDF()
        .withColumn("x", F.col("x").cast("long"))
        .groupBy("k", "g", "h")
        .agg(F.count("*").as("n"), F.count("x").as("nx"), F.sum("x").as("sx"), F.sum("d").as("sd"))
      const d = new StreamDriver(planStreaming(df), "update")
      assert.deepStrictEqual(
        yield* d.addData([
          ["a", 1, "p", 5, 1.5],
          ["a", 1, "p", null, 2.25],
          ["a", null, "p", 7, null],
          ["b", 1, "q", null, null],
          ["a", 1, "q", -3, Number.NaN]
        ]),
        [
          ["a", 1, "p", 2, 1, 5, 3.75],
          ["a", null, "p", 1, 1, 7, null],
          ["b", 1, "q", 1, 0, null, null],
          ["a", 1, "q", 1, 1, -3, Number.NaN]
        ]
      )
      // The second batch merges with the stored buffers (stored rows first).
      assert.deepStrictEqual(
        yield* d.addData([
          ["b", 1, "q", 3, null],
          ["a", 1, "p", 10, 0.25]
        ]),
        [
          ["b", 1, "q", 2, 1, 3, null],
          ["a", 1, "p", 3, 2, 15, 4]
        ]
      )
      assert.strictEqual(d.progressOf()?.numRowsTotal, 4)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a long sum leaving the safe integers is exact, and wraps past 2^63 as Java's long", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ k: Schema.String, x: Schema.Number }))
      const df = input
        .toDF()
        .withColumn("x", F.col("x").cast("long"))
        .groupBy("k")
        .agg(F.count("*").as("n"), F.sum("x").as("s"))
      const d = new StreamDriver(planStreaming(df), "update")
      assert.deepStrictEqual(
        yield* d.addData([
          ["a", 2 ** 62],
          ["b", Number.MAX_SAFE_INTEGER],
          ["a", 2 ** 62],
          ["b", 1],
          ["c", 1]
        ]),
        [
          // exact longs: beyond the safe integers a long is a bigint
          ["a", 2, -(2n ** 63n)],
          ["b", 2, 2n ** 53n],
          ["c", 1, 1]
        ]
      )
      assert.deepStrictEqual(yield* d.addData([["c", 2]]), [["c", 2, 3]])
    }).pipe(Effect.provide(Session.layer()))
  )
})
