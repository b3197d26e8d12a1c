/**
 * The streaming file sink (Spark's `FileStreamSink`, `FileStreamSinkSuite`): Spark's file names
 * and `_spark_metadata` log, exactly once across replays, compaction, `partitionBy`, the output
 * formats, and batch reads of a sink folder through its log (`MetadataLogFileIndex`).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { MemoryStream, Session } from "../../../mod.ts"
import type { AnalysisError } from "../../../core/Errors.ts"
import { type Batches, listTree, put, readText, startRecording, tempDir } from "./streamHelpers.ts"

const Event = Schema.Struct({ id: Schema.Int, name: Schema.NullOr(Schema.String), ts: Schema.NullOr(Schema.Date) })

const PART = /^part-00000-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-c000\.json$/

const dataFiles = (dir: string, ext = ".json"): Array<string> =>
  listTree(dir).filter((p) => !p.startsWith("_spark_metadata") && p.endsWith(ext))

describe("FileStreamSink", () => {
  it.effect("writes one part file per batch and logs it in _spark_metadata in Spark's format", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = yield* tempDir()
      const chk = yield* tempDir()
      const input = yield* MemoryStream.make(Event)
      const q = yield* input.toDF().writeStream.format("json").option("checkpointLocation", chk).start(out)
      yield* input.addData([
        { id: 1, name: "a", ts: new Date(Date.UTC(2020, 0, 1)) },
        { id: 2, name: null, ts: null }
      ])
      yield* q.processAllAvailable()
      yield* input.addData([{ id: 3, name: 'q"uote', ts: new Date(1234) }])
      yield* q.processAllAvailable()
      yield* q.stop()

      assert.deepStrictEqual(fs.readdirSync(path.join(out, "_spark_metadata")).sort(), [".0.crc", ".1.crc", "0", "1"])
      const log0 = readText(path.join(out, "_spark_metadata", "0")).split("\n")
      assert.strictEqual(log0[0], "v1")
      assert.strictEqual(log0.length, 2)
      const status = JSON.parse(log0[1]) as Record<string, unknown>
      assert.deepStrictEqual(Object.keys(status), [
        "path",
        "size",
        "isDir",
        "modificationTime",
        "blockReplication",
        "blockSize",
        "action"
      ])
      const file0 = String(status.path)
      assert.isTrue(file0.startsWith(`file:${out}/`))
      assert.match(path.basename(file0), PART)
      assert.strictEqual(status.isDir, false)
      assert.strictEqual(status.action, "add")
      assert.strictEqual(status.blockReplication, 1)
      const local = file0.slice("file:".length)
      assert.strictEqual(status.size, fs.statSync(local).size)
      // JacksonGenerator: null fields left out, timestamps with millis and the zone
      assert.strictEqual(readText(local), '{"id":1,"name":"a","ts":"2020-01-01T00:00:00.000Z"}\n{"id":2}\n')
      assert.strictEqual(dataFiles(out).length, 2)

      const back = yield* spark.read.schema("id INT, name STRING, ts TIMESTAMP").json(out)
      const rows = (yield* back.collect()) as ReadonlyArray<{ id: number; name: string | null; ts: Date | null }>
      assert.deepStrictEqual(
        [...rows].sort((a, b) => a.id - b.id).map((r) => [r.id, r.name, r.ts?.toISOString() ?? null]),
        [
          [1, "a", "2020-01-01T00:00:00.000Z"],
          [2, null, null],
          [3, 'q"uote', "1970-01-01T00:00:01.234Z"]
        ]
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("append mode only, with Spark's message", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ k: Schema.String }))
      const out = yield* tempDir()
      for (const [format, mode] of [
        ["json", "update"],
        ["parquet", "complete"]
      ] as const) {
        const error = yield* Effect.flip(
          input
            .toDF()
            .groupBy("k")
            .count()
            .writeStream.format(format)
            .outputMode(mode)
            .option("checkpointLocation", yield* tempDir())
            .start(out)
        )
        assert.strictEqual(
          (error as AnalysisError).message,
          `[STREAMING_OUTPUT_MODE.UNSUPPORTED_DATASOURCE] Invalid streaming output mode: ${mode}. This output mode is not supported in Data Source ${format}.`
        )
      }
      const noPath = yield* Effect.flip(
        input
          .toDF()
          .writeStream.format("csv")
          .option("checkpointLocation", yield* tempDir())
          .start()
      )
      assert.strictEqual((noPath as AnalysisError).message, "'path' is not specified")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a replayed batch is skipped, files outside the log are never read", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = yield* tempDir()
      const chk = yield* tempDir()
      const input = yield* MemoryStream.make(Schema.Struct({ id: Schema.Int }))
      const df = input.toDF()
      const start = df.writeStream.format("json").option("checkpointLocation", chk).start(out)
      const q = yield* start
      yield* input.addData([{ id: 1 }, { id: 2 }])
      yield* q.processAllAvailable()
      yield* q.stop()
      const before = dataFiles(out)
      // the process "died" after the sink wrote batch 0 but before the commit log did
      fs.rmSync(path.join(chk, "commits", "0"))
      // and a batch that failed before its log entry left a file behind
      yield* put(out, "part-00000-00000000-0000-0000-0000-000000000000.c000.json", '{"id":99}\n', 10)
      const q2 = yield* start
      yield* q2.processAllAvailable()
      yield* input.addData([{ id: 3 }])
      yield* q2.processAllAvailable()
      yield* q2.stop()
      assert.deepStrictEqual(fs.readdirSync(path.join(out, "_spark_metadata")).sort(), [".0.crc", ".1.crc", "0", "1"])
      assert.strictEqual(dataFiles(out).length, before.length + 2)
      const back = yield* spark.read.schema("id INT").json(out)
      const ids = ((yield* back.collect()) as ReadonlyArray<{ id: number }>).map((r) => r.id).sort()
      assert.deepStrictEqual(ids, [1, 2, 3])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("compacts the log every 10 batches into <id>.compact and reads all files back", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = yield* tempDir()
      const input = yield* MemoryStream.make(Schema.Struct({ id: Schema.Int }))
      const q = yield* input
        .toDF()
        .writeStream.format("json")
        .option("checkpointLocation", yield* tempDir())
        .start(out)
      for (let i = 0; i < 12; i++) {
        yield* input.addData([{ id: i }])
        yield* q.processAllAvailable()
      }
      yield* q.stop()
      const log = fs
        .readdirSync(path.join(out, "_spark_metadata"))
        .filter((n) => !n.endsWith(".crc"))
        .sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10))
      assert.deepStrictEqual(log, ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9.compact", "10", "11"])
      const compact = readText(path.join(out, "_spark_metadata", "9.compact")).split("\n")
      assert.strictEqual(compact[0], "v1")
      assert.strictEqual(compact.length, 11)
      const back = yield* spark.read.schema("id INT").json(out)
      const ids = ((yield* back.collect()) as ReadonlyArray<{ id: number }>).map((r) => r.id).sort((a, b) => a - b)
      assert.deepStrictEqual(ids, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("partitionBy writes key=value folders (nulls in __HIVE_DEFAULT_PARTITION__), read back as columns", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = yield* tempDir()
      const input = yield* MemoryStream.make(Schema.Struct({ id: Schema.Int, k: Schema.NullOr(Schema.String) }))
      const q = yield* input
        .toDF()
        .writeStream.format("json")
        .partitionBy("k")
        .option("checkpointLocation", yield* tempDir())
        .start(out)
      yield* input.addData([
        { id: 1, k: "a" },
        { id: 2, k: "b/c" },
        { id: 3, k: "a" },
        { id: 4, k: null }
      ])
      yield* q.processAllAvailable()
      yield* q.stop()
      const files = dataFiles(out)
      assert.deepStrictEqual(
        files.map((f) => path.dirname(f)),
        ["k=__HIVE_DEFAULT_PARTITION__", "k=a", "k=b%2Fc"]
      )
      assert.strictEqual(readText(path.join(out, files[1])), '{"id":1}\n{"id":3}\n')
      const back = yield* spark.read.json(out)
      assert.deepStrictEqual(back.columns, ["id", "k"])
      const rows = (yield* back.collect()) as ReadonlyArray<{ id: number; k: string | null }>
      assert.deepStrictEqual(
        [...rows].sort((a, b) => a.id - b.id),
        [
          { id: 1, k: "a" },
          { id: 2, k: "b/c" },
          { id: 3, k: "a" },
          { id: 4, k: null }
        ]
      )
      const bad = yield* Effect.flip(
        input
          .toDF()
          .writeStream.format("json")
          .partitionBy("nope")
          .option("checkpointLocation", yield* tempDir())
          .start(out)
      )
      assert.strictEqual((bad as AnalysisError).message, "Partition column nope not found in existing columns (id, k)")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("csv, text and parquet output", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      // one stream per query: a MemoryStream drops the batches a query committed (Spark's commit)
      const Row = Schema.Struct({ id: Schema.Int, s: Schema.NullOr(Schema.String) })
      const inputs = [yield* MemoryStream.make(Row), yield* MemoryStream.make(Row), yield* MemoryStream.make(Row)]
      const input = inputs[2]
      const csvOut = yield* tempDir()
      const q1 = yield* inputs[0]
        .toDF()
        .writeStream.format("csv")
        .option("header", "true")
        .option("checkpointLocation", yield* tempDir())
        .start(csvOut)
      const pqOut = yield* tempDir()
      const q2 = yield* inputs[1]
        .toDF()
        .writeStream.format("parquet")
        .option("checkpointLocation", yield* tempDir())
        .start(pqOut)
      const textOut = yield* tempDir()
      const q3 = yield* input
        .toDF()
        .select("s")
        .writeStream.format("text")
        .option("checkpointLocation", yield* tempDir())
        .start(textOut)
      for (const i of inputs) {
        yield* i.addData([
          { id: 1, s: "plain" },
          { id: 2, s: "a,b" },
          { id: 3, s: 'say "hi"' },
          { id: 4, s: "" },
          { id: 5, s: null },
          { id: 6, s: "  padded " }
        ])
      }
      for (const q of [q1, q2, q3]) {
        yield* q.processAllAvailable()
        yield* q.stop()
      }
      const [csvFile] = dataFiles(csvOut, ".csv")
      assert.strictEqual(
        readText(path.join(csvOut, csvFile)),
        'id,s\n1,plain\n2,"a,b"\n3,"say \\"hi\\""\n4,""\n5,\n6,padded\n'
      )
      const [textFile] = dataFiles(textOut, ".txt")
      assert.strictEqual(readText(path.join(textOut, textFile)), 'plain\na,b\nsay "hi"\n\n\n  padded \n')
      const [pqFile] = dataFiles(pqOut, ".snappy.parquet")
      assert.match(pqFile, /^part-00000-.*[.-]c000\.snappy\.parquet$/)
      const back = yield* spark.read.parquet(pqOut)
      const rows = (yield* back.collect()) as ReadonlyArray<{ id: number; s: string | null }>
      assert.deepStrictEqual(
        [...rows].sort((a, b) => a.id - b.id).map((r) => r.s),
        ["plain", "a,b", 'say "hi"', "", null, "  padded "]
      )
      const csvBack = yield* spark.read.option("header", "true").schema("id INT, s STRING").csv(csvOut)
      const csvRows = (yield* csvBack.collect()) as ReadonlyArray<{ id: number; s: string | null }>
      assert.deepStrictEqual(
        [...csvRows].sort((a, b) => a.id - b.id).map((r) => r.s),
        // Spark reads the quoted empty string back as null (it equals the default nullValue)
        ["plain", "a,b", 'say "hi"', null, null, "padded"]
      )
      // Spark checks the text sink's single column when it writes a batch (prepareWrite), so
      // start() succeeds and the first batch fails the query
      const textQuery = yield* input
        .toDF()
        .writeStream.format("text")
        .option("checkpointLocation", yield* tempDir())
        .start(yield* tempDir())
      yield* input.addData([{ id: 7, s: "x" }])
      const textError = yield* Effect.flip(textQuery.processAllAvailable())
      assert.strictEqual(textError._tag, "StreamingQueryError")
      assert.include(textError.message, "Text data source supports only a single column, and you have 2 columns.")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("nested and temporal values round-trip through parquet and json", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const Nested = Schema.Struct({
        id: Schema.Int,
        x: Schema.NullOr(Schema.Number),
        ts: Schema.Date,
        arr: Schema.Array(Schema.NullOr(Schema.Int)),
        st: Schema.Struct({ a: Schema.String, n: Schema.NullOr(Schema.Int) })
      })
      const row = {
        id: 1,
        x: 1e20,
        ts: new Date(Date.UTC(2021, 5, 7, 8, 9, 10, 11)),
        arr: [1, null, 3],
        st: { a: "s", n: null }
      }
      for (const format of ["parquet", "json"] as const) {
        const input = yield* MemoryStream.make(Nested)
        const schema = input.toDF().schema
        const out = yield* tempDir()
        const q = yield* input
          .toDF()
          .writeStream.format(format)
          .option("checkpointLocation", yield* tempDir())
          .start(out)
        yield* input.addData([row])
        yield* q.processAllAvailable()
        yield* q.stop()
        if (format === "json") {
          const [file] = dataFiles(out)
          assert.strictEqual(
            readText(path.join(out, file)),
            '{"id":1,"x":1.0E20,"ts":"2021-06-07T08:09:10.011Z","arr":[1,null,3],"st":{"a":"s"}}\n'
          )
        }
        const reader = format === "parquet" ? spark.read : spark.read.schema(schema)
        const back = yield* format === "parquet" ? reader.parquet(out) : reader.json(out)
        assert.deepStrictEqual(yield* back.collect(), [row])
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("maxRecordsPerFile splits a batch into c000, c001, … files", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = yield* tempDir()
      const input = yield* MemoryStream.make(Schema.Struct({ id: Schema.Int }))
      const q = yield* input
        .toDF()
        .writeStream.format("json")
        .option("maxRecordsPerFile", 2)
        .option("checkpointLocation", yield* tempDir())
        .start(out)
      yield* input.addData([{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }, { id: 5 }])
      yield* q.processAllAvailable()
      yield* q.stop()
      const files = dataFiles(out)
      assert.deepStrictEqual(files.map((f) => f.slice(-9)).sort(), ["c000.json", "c001.json", "c002.json"])
      const log = readText(path.join(out, "_spark_metadata", "0")).split("\n")
      assert.strictEqual(log.length, 4)
      const back = yield* spark.read.schema("id INT").json(out)
      assert.strictEqual(yield* back.count(), 5)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a sink folder read as a stream goes through its log", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = yield* tempDir()
      const input = yield* MemoryStream.make(Schema.Struct({ id: Schema.Int }))
      const q = yield* input
        .toDF()
        .writeStream.format("json")
        .option("checkpointLocation", yield* tempDir())
        .start(out)
      yield* input.addData([{ id: 1 }])
      yield* q.processAllAvailable()
      yield* put(out, "orphan.json", '{"id":99}\n', 10)
      const batches: Batches = []
      const reader = yield* startRecording(spark.readStream.schema("id INT").json(out), yield* tempDir(), batches)
      yield* reader.processAllAvailable()
      yield* input.addData([{ id: 2 }])
      yield* q.processAllAvailable()
      yield* reader.processAllAvailable()
      yield* q.stop()
      yield* reader.stop()
      assert.deepStrictEqual(batches, [
        [0, [{ id: 1 }]],
        [1, [{ id: 2 }]]
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})
