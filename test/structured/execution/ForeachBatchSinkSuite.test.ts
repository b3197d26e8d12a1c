/**
 * Spark's `ForeachBatchSinkSuite` (sql/core/src/test/scala/org/apache/spark/sql/execution/
 * streaming/sources/ForeachBatchSinkSuite.scala): `foreachBatch` hands every micro-batch to the
 * user function as a batch DataFrame, for stateless and stateful queries, keeps the progress
 * metrics, and refuses a null function, a continuous trigger and partitioning.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { ConnectorError, F, MemoryStream, Session, StreamingQueryError, Trigger } from "../../../mod.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import type { OutputMode } from "../../../core/Streaming.ts"

const Value = Schema.Struct({ value: Schema.Int })
const v = (...xs: ReadonlyArray<number>) => xs.map((value) => ({ value }))

interface Check {
  readonly in: ReadonlyArray<number>
  readonly out: ReadonlyArray<unknown>
  /** Spark's `checkDataset` compares in order; `checkDatasetUnorderly` would not. */
  readonly ordered?: boolean
}

/**
 * Spark's `ForeachBatchTester.testWriter`: starts `ds.writeStream.foreachBatch(writer)`, then for
 * each check adds `in`, processes everything and compares what the writer recorded for the
 * expected batch id with `out`; `checkMetrics` asserts a progress with input rows.
 */
const testWriter = <R>(
  mem: MemoryStream<{ readonly value: number }>,
  ds: DataFrame<R>,
  toRecord: (batch: DataFrame<R>) => DataFrame<any>,
  checks: ReadonlyArray<Check | "checkMetrics">,
  outputMode: OutputMode = "append"
) =>
  Effect.gen(function* () {
    const recorded = new Map<number, ReadonlyArray<unknown>>()
    const query = yield* ds.writeStream
      .outputMode(outputMode)
      .foreachBatch((batch, batchId) =>
        Effect.map(toRecord(batch).collect(), (rows) => {
          recorded.set(batchId, rows)
        })
      )
      .start()
    let expectedBatchId = -1
    for (const check of checks) {
      if (check === "checkMetrics") {
        assert.isTrue((yield* query.recentProgress()).some((p) => p.numInputRows > 0))
        continue
      }
      expectedBatchId += 1
      yield* mem.addData(v(...check.in))
      yield* query.processAllAvailable()
      assert.isTrue(recorded.has(expectedBatchId), `batch ${expectedBatchId} was not recorded`)
      if (check.ordered === false) assert.sameDeepMembers([...recorded.get(expectedBatchId)!], [...check.out])
      else assert.deepStrictEqual(recorded.get(expectedBatchId), check.out)
    }
    yield* query.stop()
  })

const check = (input: ReadonlyArray<number>, out: ReadonlyArray<unknown>, ordered = true): Check => ({
  in: input,
  out,
  ordered
})
const kv = (key: number, value: number) => ({ key, value })

describe("ForeachBatchSinkSuite", () => {
  it.effect("foreachBatch with non-stateful query", () =>
    Effect.gen(function* () {
      const mem = yield* MemoryStream.make(Value)
      const ds = mem.toDF().map((r) => ({ value: r.value + 1 }), Value)
      yield* testWriter(mem, ds, (batch) => batch.map((r) => ({ value: r.value + 1 }), Value), [
        check([1, 2, 3], v(3, 4, 5)), // out = in + 2 (i.e. 1 in query, 1 in writer)
        check([5, 6, 7], v(7, 8, 9))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("foreachBatch with non-stateful query - untyped Dataset", () =>
    Effect.gen(function* () {
      const mem = yield* MemoryStream.make(Value)
      const ds = mem.toDF().select(F.col("value").plus(1).as("value"))
      yield* testWriter(mem, ds, (batch) => batch.select(F.col("value").plus(1)), [
        // out = in + 2 (i.e. 1 in query, 1 in writer); Spark names the column `(value + 1)`
        check([1, 2, 3], [{ "(value + 1)": 3 }, { "(value + 1)": 4 }, { "(value + 1)": 5 }]),
        check([5, 6, 7], [{ "(value + 1)": 7 }, { "(value + 1)": 8 }, { "(value + 1)": 9 }])
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("foreachBatch with stateful query in update mode", () =>
    Effect.gen(function* () {
      const mem = yield* MemoryStream.make(Value)
      const ds = mem
        .toDF()
        .select(F.col("value").mod(2).as("key"))
        .groupBy("key")
        .agg(F.count("*").as("value"))
      yield* testWriter(
        mem,
        ds,
        (batch) => batch,
        [check([0], [kv(0, 1)]), check([1], [kv(1, 1)]), check([2, 3], [kv(0, 2), kv(1, 2)], false)],
        "update"
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("foreachBatch with stateful query in complete mode", () =>
    Effect.gen(function* () {
      const mem = yield* MemoryStream.make(Value)
      const ds = mem
        .toDF()
        .select(F.col("value").mod(2).as("key"))
        .groupBy("key")
        .agg(F.count("*").as("value"))
      yield* testWriter(
        mem,
        ds,
        (batch) => batch,
        [
          check([0], [kv(0, 1)]),
          check([1], [kv(0, 1), kv(1, 1)], false),
          check([2], [kv(0, 2), kv(1, 1)], false)
        ],
        "complete"
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("foreachBatch with batch specific operations", () =>
    Effect.gen(function* () {
      const mem = yield* MemoryStream.make(Value)
      const ds = mem.toDF().map((r) => ({ value: r.value + 1 }), Value)
      const recorded = new Map<number, ReadonlyArray<unknown>>()
      const query = yield* ds.writeStream
        .foreachBatch((df, batchId) =>
          Effect.gen(function* () {
            const newDF = df
              .map((r) => ({ value: r.value + 1 }), Value)
              .repartition(1)
              .orderBy(F.col("value").desc())
            recorded.set(batchId, yield* newDF.collect())
            // just run another simple query against the same batch to confirm they don't conflict
            const curValues = yield* df.collect()
            const newValues = yield* df.map((r) => ({ value: r.value + 2 }), Value).collect()
            assert.deepStrictEqual(
              curValues.map((r) => r.value + 2),
              newValues.map((r) => r.value)
            )
          })
        )
        .start()
      yield* mem.addData(v(1, 2, 3))
      yield* query.processAllAvailable()
      // out = in + 2 (i.e. 1 in query, 1 in writer), sorted descending
      assert.deepStrictEqual(recorded.get(0), v(5, 4, 3))
      yield* mem.addData(v(5, 6, 7))
      yield* query.processAllAvailable()
      assert.deepStrictEqual(recorded.get(1), v(9, 8, 7))
      yield* query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("foreachBatchSink does not affect metric generation", () =>
    Effect.gen(function* () {
      const mem = yield* MemoryStream.make(Value)
      const ds = mem.toDF().map((r) => ({ value: r.value + 1 }), Value)
      yield* testWriter(mem, ds, (batch) => batch.map((r) => ({ value: r.value + 1 }), Value), [
        check([1, 2, 3], v(3, 4, 5)),
        "checkMetrics"
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("throws errors in invalid situations", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const ds = (yield* MemoryStream.make(Value)).toDF()
      const ex1 = yield* ds.writeStream.foreachBatch(null as never).start().pipe(Effect.flip)
      assert.include(ex1.message, "foreachBatch function cannot be null")
      const ex2 = yield* ds.writeStream
        .foreachBatch(() => {})
        .trigger(Trigger.Continuous("1 second"))
        .start()
        .pipe(Effect.flip)
      assert.strictEqual(ex2._tag, "AnalysisError")
      assert.include(ex2.message, "'foreachBatch' is not supported with continuous trigger")
      const ex3 = yield* ds.writeStream
        .foreachBatch(() => {})
        .partitionBy("value")
        .start()
        .pipe(Effect.flip)
      assert.strictEqual(ex3._tag, "AnalysisError")
      assert.include(ex3.message, "'foreachBatch' does not support partitioning")
      assert.deepStrictEqual(yield* spark.streams.active(), [])
    }).pipe(Effect.provide(Session.layer()))
  )

  // Spark's `ForeachBatchUserFuncException`: what the function throws is classified as
  // FOREACH_BATCH_USER_FUNCTION_ERROR (ForeachBatchSink.scala, `callBatchWriter`).
  it.effect("a failing function fails the query with FOREACH_BATCH_USER_FUNCTION_ERROR", () =>
    Effect.gen(function* () {
      const mem = yield* MemoryStream.make(Value)
      const boom = new Error("boom")
      const query = yield* mem
        .toDF()
        .writeStream.foreachBatch(() => {
          throw boom
        })
        .start()
      yield* mem.addData(v(1))
      const e = yield* query.awaitTermination().pipe(Effect.flip)
      assert.instanceOf(e, StreamingQueryError)
      assert.include(
        e.message,
        "[FOREACH_BATCH_USER_FUNCTION_ERROR] An error occurred in the user provided function in foreach batch sink. Reason: boom"
      )
      assert.instanceOf(e.cause, ConnectorError)
      if (e.cause instanceof ConnectorError) {
        assert.strictEqual(e.cause.errorClass, "FOREACH_BATCH_USER_FUNCTION_ERROR")
        assert.strictEqual(e.cause.cause, boom)
      }
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.forceDeleteTempCheckpointLocation": true } })))
  )
})
