/**
 * Spark's `MemorySinkSuite` (sql/core/src/test/scala/org/apache/spark/sql/execution/streaming/
 * MemorySinkSuite.scala): batches written straight into the sink in each output mode (a batch id
 * already seen is ignored), and the sink registered as a table by a running query.
 *
 * Spark's `sink.allData` is the session table here and `sink.latestBatchId` the largest batch id
 * the table has received; `latestBatchData` has no counterpart (the table keeps only all rows).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as T from "../../../core/DataType.ts"
import type { InternalRow } from "../../../core/Row.ts"
import type { OutputMode, SessionTables } from "../../../core/Streaming.ts"
import { MemorySink } from "../../../connectors/memory/mod.ts"
import { F, MemoryStream, Session, Trigger } from "../../../mod.ts"

const schema = T.struct([T.field("value", T.IntegerType)])

const fakeTables = () => {
  const rows = new Map<string, Array<InternalRow>>()
  const seen = new Map<string, Set<number>>()
  const tables: SessionTables = {
    write: (name, _schema, batch, replace) => {
      rows.set(name, replace ? [...batch] : [...(rows.get(name) ?? []), ...batch])
    },
    seenBatches: (name) => {
      let s = seen.get(name)
      if (s === undefined) {
        s = new Set()
        seen.set(name, s)
      }
      return s
    }
  }
  return {
    tables,
    allData: () => (rows.get("memStream") ?? []).map((r) => r[0]),
    latestBatchId: () => {
      const s = seen.get("memStream")
      return s === undefined || s.size === 0 ? undefined : Math.max(...s)
    }
  }
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

/** Spark's `addBatchFunc`: `sink.write(batchId, needTruncate, rows)`. */
const directly = (outputMode: OutputMode) =>
  Effect.gen(function* () {
    const t = fakeTables()
    const sink = yield* MemorySink.create({
      options: {},
      schema,
      outputMode,
      queryName: "memStream",
      queryId: "id",
      partitionColumns: [],
      checkpointPath: "/tmp/unused",
      tables: t.tables
    })
    const addBatch = (batchId: number, vals: ReadonlyArray<number>) =>
      sink.addBatch({ batchId, schema, rows: vals.map((x) => [x]), outputMode })
    return { ...t, addBatch }
  })

describe("MemorySinkSuite", () => {
  for (const [title, mode] of [
    ["directly add data in Append output mode", "append"],
    ["directly add data in Update output mode", "update"]
  ] as const) {
    it.effect(title, () =>
      Effect.gen(function* () {
        const { addBatch, allData, latestBatchId } = yield* directly(mode)
        // Before adding data, check output
        assert.isUndefined(latestBatchId())
        assert.deepStrictEqual(allData(), [])
        // Add batch 0 and check outputs
        yield* addBatch(0, range(1, 3))
        assert.strictEqual(latestBatchId(), 0)
        assert.deepStrictEqual(allData(), range(1, 3))
        // Add batch 1 and check outputs: new data should get appended to old data
        yield* addBatch(1, range(4, 6))
        assert.strictEqual(latestBatchId(), 1)
        assert.deepStrictEqual(allData(), range(1, 6))
        // Re-add batch 1 with different data, should not be added and outputs should not be changed
        yield* addBatch(1, range(7, 9))
        assert.strictEqual(latestBatchId(), 1)
        assert.deepStrictEqual(allData(), range(1, 6))
        // Add batch 2 and check outputs
        yield* addBatch(2, range(7, 9))
        assert.strictEqual(latestBatchId(), 2)
        assert.deepStrictEqual(allData(), range(1, 9))
      })
    )
  }

  it.effect("directly add data in Complete output mode", () =>
    Effect.gen(function* () {
      const { addBatch, allData, latestBatchId } = yield* directly("complete")
      assert.isUndefined(latestBatchId())
      assert.deepStrictEqual(allData(), [])
      yield* addBatch(0, range(1, 3))
      assert.strictEqual(latestBatchId(), 0)
      assert.deepStrictEqual(allData(), range(1, 3))
      // new data should replace old data
      yield* addBatch(1, range(4, 6))
      assert.strictEqual(latestBatchId(), 1)
      assert.deepStrictEqual(allData(), range(4, 6))
      // Re-add batch 1 with different data, should not be added and outputs should not be changed
      yield* addBatch(1, range(7, 9))
      assert.strictEqual(latestBatchId(), 1)
      assert.deepStrictEqual(allData(), range(4, 6))
      yield* addBatch(2, range(7, 9))
      assert.strictEqual(latestBatchId(), 2)
      assert.deepStrictEqual(allData(), range(7, 9))
    })
  )

  it.effect("registering as a table in Complete output mode", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))
      const query = yield* input
        .toDF()
        .groupBy("value")
        .count()
        .writeStream.format("memory")
        .outputMode("complete")
        .queryName("memStream")
        .start()
      yield* input.addData([1, 2, 3].map((value) => ({ value })))
      yield* query.processAllAvailable()
      // checkDatasetUnorderly
      assert.sameDeepMembers(
        [...(yield* spark.table("memStream").collect())],
        [1, 2, 3].map((value) => ({ value, count: 1 }))
      )
      yield* input.addData([4, 5, 6].map((value) => ({ value })))
      yield* query.processAllAvailable()
      assert.sameDeepMembers(
        [...(yield* spark.table("memStream").collect())],
        [1, 2, 3, 4, 5, 6].map((value) => ({ value, count: 1 }))
      )
      yield* query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  // Spark's DataStreamWriter.startInternal: `resultDf.createOrReplaceTempView(query.name)` right
  // after the query starts, over a MemoryPlan with the query's output attributes (issue #21).
  for (const [title, trigger] of [
    ["micro-batch", undefined],
    ["continuous", Trigger.Continuous("1 hour")]
  ] as const) {
    it.effect(`registering as a table: the table exists at start, empty, with the query's schema (${title})`, () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const input = yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))
        const writer = input
          .toDF()
          .select(F.col("value"), F.col("value").cast("string").as("s"))
          .writeStream.format("memory")
          .queryName("memStream")
        const query = yield* (trigger === undefined ? writer : writer.trigger(trigger)).start()
        // Resolved before any data: a DataFrame over the table made now sees later rows.
        const table = spark.table("memStream")
        assert.deepStrictEqual(
          table.schema.fields.map((f) => [f.name, f.dataType]),
          [
            ["value", T.LongType],
            ["s", T.StringType]
          ]
        )
        assert.deepStrictEqual([...(yield* table.collect())], [])
        yield* input.addData([1, 2].map((value) => ({ value })))
        yield* query.processAllAvailable()
        assert.sameDeepMembers(
          [...(yield* table.collect())],
          [
            { value: 1, s: "1" },
            { value: 2, s: "2" }
          ]
        )
        yield* query.stop()
      }).pipe(Effect.provide(Session.layer()))
    )
  }

  it.effect("no table is registered when the sink refuses to start", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))
      yield* input.toDF().writeStream.format("memory").partitionBy("value").queryName("refused").start().pipe(Effect.flip)
      const error = yield* spark.table("refused").collect().pipe(Effect.flip)
      assert.include(error.message, "TABLE_OR_VIEW_NOT_FOUND")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("error when no name is specified", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))
      const error = yield* input.toDF().writeStream.format("memory").start().pipe(Effect.flip)
      assert.strictEqual(error._tag, "AnalysisError")
      assert.include(error.message, "queryName must be specified")
    }).pipe(Effect.provide(Session.layer()))
  )
})
