/**
 * The `memory` sink with a fake `SessionTables`: append and update add rows, complete replaces
 * the table, a batch id already seen is ignored (also by a restarted sink in the same session),
 * and Spark's errors for a missing query name and for partitioning.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as T from "../../../core/DataType.ts"
import type { Options } from "../../../core/Formats.ts"
import type { InternalRow } from "../../../core/Row.ts"
import { lookupSinkFormat, type OutputMode, type SessionTables } from "../../../core/Streaming.ts"
import { MemorySink, registerMemorySink } from "../../../connectors/memory/mod.ts"

/** Session tables as the session keeps them: rows in insertion order and the batch ids seen. */
const fakeTables = () => {
  const rows = new Map<string, Array<InternalRow>>()
  const schemas = new Map<string, T.StructType>()
  const seen = new Map<string, Set<number>>()
  const tables: SessionTables = {
    write: (name, schema, batch, replace) => {
      schemas.set(name, schema)
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
  return { tables, rows, schemas, seen }
}

const schema = T.struct([T.field("word", T.StringType), T.field("count", T.LongType, false)])

const create = (
  tables: SessionTables,
  outputMode: OutputMode,
  queryName: string | null = "counts",
  options: Options = {},
  partitionColumns: ReadonlyArray<string> = []
) =>
  MemorySink.create({
    options,
    schema,
    outputMode,
    queryName: queryName ?? undefined,
    queryId: "id",
    partitionColumns,
    checkpointPath: "/tmp/unused",
    tables
  })

describe("memory sink", () => {
  it("registers under `memory` for every output mode", () => {
    registerMemorySink()
    assert.strictEqual(lookupSinkFormat("memory"), MemorySink)
    assert.deepStrictEqual(MemorySink.supportedOutputModes, ["append", "update", "complete"])
  })

  it.effect("append adds each batch's rows in order; a batch id already seen is ignored", () =>
    Effect.gen(function* () {
      const t = fakeTables()
      const sink = yield* create(t.tables, "append")
      assert.strictEqual(sink.description, "MemorySink")
      yield* sink.addBatch({ batchId: 0, schema, rows: [["a", 1]], outputMode: "append" })
      yield* sink.addBatch({
        batchId: 1,
        schema,
        rows: [
          ["b", 1],
          ["c", 2]
        ],
        outputMode: "append"
      })
      yield* sink.addBatch({
        batchId: 1,
        schema,
        rows: [
          ["b", 1],
          ["c", 2]
        ],
        outputMode: "append"
      })
      assert.deepStrictEqual(t.rows.get("counts"), [
        ["a", 1],
        ["b", 1],
        ["c", 2]
      ])
      assert.deepStrictEqual(t.schemas.get("counts"), schema)
      assert.deepStrictEqual([...t.seen.get("counts")!], [0, 1])
    })
  )

  it.effect("update mode adds the updated rows (Spark's update-as-append)", () =>
    Effect.gen(function* () {
      const t = fakeTables()
      const sink = yield* create(t.tables, "update")
      yield* sink.addBatch({ batchId: 0, schema, rows: [["a", 1]], outputMode: "update" })
      yield* sink.addBatch({ batchId: 1, schema, rows: [["a", 2]], outputMode: "update" })
      assert.deepStrictEqual(t.rows.get("counts"), [
        ["a", 1],
        ["a", 2]
      ])
    })
  )

  it.effect("complete mode replaces the table with each batch", () =>
    Effect.gen(function* () {
      const t = fakeTables()
      const sink = yield* create(t.tables, "complete")
      yield* sink.addBatch({ batchId: 0, schema, rows: [["a", 1]], outputMode: "complete" })
      yield* sink.addBatch({
        batchId: 1,
        schema,
        rows: [
          ["a", 2],
          ["b", 1]
        ],
        outputMode: "complete"
      })
      assert.deepStrictEqual(t.rows.get("counts"), [
        ["a", 2],
        ["b", 1]
      ])
      // A replay of an old batch does not bring its result back.
      yield* sink.addBatch({ batchId: 0, schema, rows: [["a", 1]], outputMode: "complete" })
      assert.deepStrictEqual(t.rows.get("counts"), [
        ["a", 2],
        ["b", 1]
      ])
    })
  )

  it.effect("a restart in the same session continues the same table without duplicates", () =>
    Effect.gen(function* () {
      const t = fakeTables()
      const first = yield* create(t.tables, "append")
      yield* first.addBatch({ batchId: 0, schema, rows: [["a", 1]], outputMode: "append" })
      yield* first.addBatch({ batchId: 1, schema, rows: [["b", 1]], outputMode: "append" })
      yield* first.stop()
      const second = yield* create(t.tables, "append")
      // The engine replays batch 1 (offsets logged, commit missing), then runs batch 2.
      yield* second.addBatch({ batchId: 1, schema, rows: [["b", 1]], outputMode: "append" })
      yield* second.addBatch({ batchId: 2, schema, rows: [["c", 1]], outputMode: "append" })
      assert.deepStrictEqual(t.rows.get("counts"), [
        ["a", 1],
        ["b", 1],
        ["c", 1]
      ])
      // Another query name is another table.
      const other = yield* create(t.tables, "append", "other")
      yield* other.addBatch({ batchId: 1, schema, rows: [["z", 9]], outputMode: "append" })
      assert.deepStrictEqual(t.rows.get("other"), [["z", 9]])
    })
  )

  it.effect("the query name may also come from the queryName option", () =>
    Effect.gen(function* () {
      const t = fakeTables()
      const sink = yield* create(t.tables, "append", null, { QUERYNAME: "fromOption" })
      yield* sink.addBatch({ batchId: 0, schema, rows: [["a", 1]], outputMode: "append" })
      assert.deepStrictEqual(t.rows.get("fromOption"), [["a", 1]])
    })
  )

  it.effect("without a query name, or with partitionBy, create fails as Spark's DataStreamWriter.start", () =>
    Effect.gen(function* () {
      const t = fakeTables()
      const missing = yield* Effect.flip(create(t.tables, "append", null))
      assert.strictEqual(missing._tag, "AnalysisError")
      assert.strictEqual(missing.message, "queryName must be specified for memory sink.")
      const partitioned = yield* Effect.flip(create(t.tables, "append", "counts", {}, ["word"]))
      assert.strictEqual(partitioned.message, "'memory' does not support partitioning.")
    })
  )
})
