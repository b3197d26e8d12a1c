/**
 * Ports of Apache Spark's `FileStreamSinkSuite` (sql/core/src/test/scala/org/apache/spark/sql/
 * streaming/FileStreamSinkSuite.scala), each under Spark's test name. ORC is left out (tributary
 * has no ORC format); Spark's `MemoryStream[Int]` is a stream of `{ value }` rows.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../mod.ts"
import { ancestorIsMetadataDirectory } from "../../../connectors/files/FileStreamLog.ts"
import type { AnalysisError } from "../../../core/Errors.ts"
import { listTree, put, tempDir } from "./streamHelpers.ts"

const IntValue = Schema.Struct({ value: Schema.Int })
const StringValue = Schema.Struct({ value: Schema.String })

const sortBy = <A>(rows: ReadonlyArray<A>, key: (a: A) => number): Array<A> =>
  [...rows].sort((a, b) => key(a) - key(b))

describe("FileStreamSinkSuite", () => {
  it.effect("unpartitioned writing and batch reading", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(IntValue)
      const outputDir = yield* tempDir()
      const query = yield* input
        .toDF()
        .writeStream.option("checkpointLocation", yield* tempDir())
        .format("parquet")
        .start(outputDir)
      yield* input.addData([{ value: 1 }, { value: 2 }, { value: 3 }])
      yield* query.processAllAvailable()
      yield* query.stop()
      const rows = (yield* (yield* spark.read.parquet(outputDir)).collect()) as ReadonlyArray<{ value: number }>
      assert.deepStrictEqual(sortBy(rows, (r) => r.value), [{ value: 1 }, { value: 2 }, { value: 3 }])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-21167: encode and decode path correctly", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(StringValue)
      const outputDir = yield* tempDir()
      const query = yield* input
        .toDF()
        .select(F.col("value"), F.length(F.col("value")).as("len"))
        .writeStream.partitionBy("value")
        .option("checkpointLocation", yield* tempDir())
        .format("parquet")
        .start(outputDir)
      // the output is partitioned by "value": the space appears in the folder name
      yield* input.addData([{ value: "hello world" }])
      yield* query.processAllAvailable()
      yield* query.stop()
      const rows = yield* (yield* spark.read.parquet(outputDir)).collect()
      assert.deepStrictEqual(rows, [{ len: "hello world".length, value: "hello world" }])
    }).pipe(Effect.provide(Session.layer()))
  )

  // Deviation: Spark reads a sink folder through MetadataLogFileIndex without `asNullable`
  // (DataSource.resolveRelation's FileStreamSink.hasMetadata branch), and its Parquet writer
  // marks `value`, written from non-null ints, REQUIRED, so it reads back `nullable = false`.
  // tributary keeps the schema of a sink folder as inferred too (connectors/files/FileSource.ts),
  // but its Parquet files come from DuckDB's COPY, which writes every column OPTIONAL (even a
  // NOT NULL one, DuckDB 1.5), so the inferred `value` is nullable.
  it.effect.fails("partitioned writing and batch reading", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(IntValue)
      const outputDir = yield* tempDir()
      const query = yield* input
        .toDF()
        // Spark's MemoryStream[Int] holds ints; tributary's Schema.Int is a long, hence the casts
        .select(F.col("value").cast("int").as("id"), F.col("value").cast("int").multiply(1000).as("value"))
        .writeStream.partitionBy("id")
        .option("checkpointLocation", yield* tempDir())
        .format("parquet")
        .start(outputDir)
      yield* input.addData([{ value: 1 }, { value: 2 }, { value: 3 }])
      yield* query.processAllAvailable()
      yield* query.stop()
      const outputDf = yield* spark.read.parquet(outputDir)
      const rows = (yield* outputDf.collect()) as ReadonlyArray<{ value: number; id: number }>
      assert.deepStrictEqual(
        sortBy(rows, (r) => r.id),
        [
          { value: 1000, id: 1 },
          { value: 2000, id: 2 },
          { value: 3000, id: 3 }
        ]
      )
      // one folder per distinct id (Spark's checkFileScanPartitions: 3 partition values)
      const dirs = new Set(
        listTree(outputDir)
          .filter((p) => p.endsWith(".parquet"))
          .map((p) => path.dirname(p))
      )
      assert.deepStrictEqual([...dirs].sort(), ["id=1", "id=2", "id=3"])
      assert.deepStrictEqual(
        outputDf.schema.fields.map((f) => [f.name, f.dataType._tag, f.nullable]),
        [
          ["value", "integer", false],
          ["id", "integer", true]
        ]
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  // DataSource.resolveRelation: the FileStreamSink.hasMetadata branch keeps the data schema as
  // given (or inferred); the plain-folder branch makes it `asNullable`
  it.effect("a sink folder keeps the nullability of the schema it is read with; a plain folder reads every column nullable", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(IntValue)
      const outputDir = yield* tempDir()
      const query = yield* input
        .toDF()
        .writeStream.option("checkpointLocation", yield* tempDir())
        .format("json")
        .start(outputDir)
      yield* input.addData([{ value: 1 }, { value: 2 }])
      yield* query.processAllAvailable()
      yield* query.stop()
      const nullability = (df: { readonly schema: { readonly fields: ReadonlyArray<{ readonly nullable: boolean }> } }) =>
        df.schema.fields.map((f) => f.nullable)
      const user = "value BIGINT NOT NULL, other STRING"
      assert.deepStrictEqual(nullability(yield* spark.read.schema(user).json(outputDir)), [false, true])
      // the same files outside a sink folder: a glob path lists them as any files
      assert.deepStrictEqual(nullability(yield* spark.read.schema(user).json(path.join(outputDir, "*.json"))), [true, true])
      const rows = yield* (yield* spark.read.schema(user).json(outputDir)).collect()
      assert.deepStrictEqual(
        rows.map((r) => r.value).sort(),
        [1, 2]
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("partitioned writing and batch reading with 'basePath'", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(IntValue)
      const outputPath = yield* tempDir()
      const query = yield* input
        .toDF()
        .select(
          F.col("value").as("id1"),
          F.col("value").multiply(-1).as("id2"),
          F.col("value").multiply(1000).as("value")
        )
        .writeStream.partitionBy("id1", "id2")
        .option("checkpointLocation", yield* tempDir())
        .format("parquet")
        .start(outputPath)
      yield* input.addData([{ value: 1 }, { value: 2 }, { value: 3 }])
      yield* query.processAllAvailable()
      yield* query.stop()
      const readIn = yield* spark.read.option("basePath", outputPath).parquet(`${outputPath}/*/*`)
      const rows = (yield* readIn.collect()) as ReadonlyArray<{ value: number; id1: number; id2: number }>
      assert.deepStrictEqual(
        sortBy(rows, (r) => r.id1),
        [
          { value: 1000, id1: 1, id2: -1 },
          { value: 2000, id1: 2, id2: -2 },
          { value: 3000, id1: 3, id2: -3 }
        ]
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("writing with aggregation", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Schema.Struct({ time: Schema.Int }))
      const outputDf = input
        .toDF()
        .select(F.col("time").cast("timestamp").as("timestamp"))
        .withWatermark("timestamp", "10 seconds")
        .groupBy(F.window("timestamp", "5 seconds"))
        .count()
        .select("window.start", "window.end", "count")
      const outputDir = yield* tempDir()
      const query = yield* outputDf.writeStream
        .option("checkpointLocation", yield* tempDir())
        .format("parquet")
        .start(outputDir)
      const addTimestamp = (...secs: ReadonlyArray<number>) =>
        Effect.gen(function* () {
          yield* input.addData(secs.map((time) => ({ time })))
          yield* query.processAllAvailable()
        })
      const check = (...expected: ReadonlyArray<readonly [number, number, number]>) =>
        Effect.gen(function* () {
          const files = listTree(outputDir).filter((p) => p.endsWith(".parquet"))
          if (files.length === 0 && expected.length === 0) return
          const rows = (yield* (yield* spark.read.parquet(outputDir)).collect()) as ReadonlyArray<{
            start: Date
            end: Date
            count: number
          }>
          assert.deepStrictEqual(
            rows.map((r) => [r.start.getTime() / 1000, r.end.getTime() / 1000, r.count]).sort((a, b) => a[0] - b[0]),
            expected.map((e) => [...e])
          )
        })
      yield* addTimestamp(100) // watermark = None before this, watermark = 100 - 10 = 90 after this
      yield* check() // nothing emitted yet
      yield* addTimestamp(104, 123) // watermark = 90 before this, watermark = 123 - 10 = 113 after this
      yield* check([100, 105, 2]) // the no-data batch emits 100-105
      yield* addTimestamp(140) // wm = 113 before this, wm = 130 after this
      yield* check([100, 105, 2], [120, 125, 1]) // the no-data batch emits 120-125
      yield* query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("Update and Complete output mode not supported", () =>
    Effect.gen(function* () {
      const df = (yield* MemoryStream.make(IntValue)).toDF().groupBy().count()
      const dir = yield* tempDir()
      for (const mode of ["update", "complete"] as const) {
        const e = (yield* Effect.flip(
          df.writeStream
            .format("parquet")
            .outputMode(mode)
            .option("checkpointLocation", yield* tempDir())
            .start(dir)
        )) as AnalysisError
        assert.strictEqual(e.errorClass, "STREAMING_OUTPUT_MODE.UNSUPPORTED_DATASOURCE")
        assert.strictEqual(
          e.message,
          `[STREAMING_OUTPUT_MODE.UNSUPPORTED_DATASOURCE] Invalid streaming output mode: ${mode}. This output mode is not supported in Data Source parquet.`
        )
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  /** Spark's `testFormat`: start and stop a sink of (id, value) in the format; no error. */
  const testFormat = (format: string | undefined) =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(IntValue)
      let writer = input
        .toDF()
        .select(F.col("value").as("id"), F.col("value").multiply(1000).as("value")).writeStream
      if (format !== undefined) writer = writer.format(format)
      const query = yield* writer.option("checkpointLocation", yield* tempDir()).start(yield* tempDir())
      yield* query.stop()
    })

  it.effect("parquet", () =>
    Effect.gen(function* () {
      yield* testFormat(undefined) // parquet is the default format
      yield* testFormat("parquet")
    }).pipe(Effect.provide(Session.layer()))
  )

  // Spark checks the text sink's single column when a batch is written (TextFileFormat.verifySchema
  // in prepareWrite), so starting and stopping a two-column text sink succeeds.
  it.effect("text", () => testFormat("text").pipe(Effect.provide(Session.layer())))

  it.effect("json", () => testFormat("json").pipe(Effect.provide(Session.layer())))

  it("FileStreamSink.ancestorIsMetadataDirectory()", () => {
    for (const p of [
      "/_spark_metadata",
      "/_spark_metadata/",
      "/a/_spark_metadata",
      "/a/_spark_metadata/",
      "/a/b/_spark_metadata/c",
      "/a/b/_spark_metadata/c/"
    ]) {
      assert.isTrue(ancestorIsMetadataDirectory(p), p)
    }
    assert.isFalse(ancestorIsMetadataDirectory("/a/b/c"))
    assert.isFalse(ancestorIsMetadataDirectory("/a/b/c/_spark_metadataextra"))
  })

  it.effect("SPARK-20460 Check name duplication in schema", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      for (const [c0, c1] of [
        ["a", "a"],
        ["aA", "Aa"]
      ]) {
        const input = yield* MemoryStream.make(Schema.Struct({ _1: Schema.Int, _2: Schema.Int }))
        const outputDir = yield* tempDir()
        const query = yield* input
          .toDF()
          .writeStream.option("checkpointLocation", yield* tempDir())
          .format("json")
          .start(outputDir)
        yield* input.addData([{ _1: 1, _2: 1 }])
        yield* query.processAllAvailable()
        yield* query.stop()
        const e = (yield* Effect.flip(
          Effect.flatMap(spark.read.schema(`${c0} INT, ${c1} INT`).json(outputDir), (df) => df.collect())
        )) as AnalysisError
        assert.strictEqual(e.errorClass, "COLUMN_ALREADY_EXISTS")
        assert.strictEqual(
          e.message,
          `[COLUMN_ALREADY_EXISTS] The column \`${c1.toLowerCase()}\` already exists. Choose another name or rename the existing column.`
        )
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("special characters in output path", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const tmp = yield* tempDir()
      const outputDir = path.join(tmp, "output @#output")
      const input = yield* MemoryStream.make(IntValue)
      yield* input.addData([{ value: 1 }, { value: 2 }, { value: 3 }])
      const q = yield* input
        .toDF()
        .writeStream.option("checkpointLocation", path.join(tmp, "chk"))
        .format("parquet")
        .start(outputDir)
      yield* q.processAllAvailable()
      yield* q.stop()
      // the "_spark_metadata" folder is in outputDir
      assert.include(fs.readdirSync(outputDir), "_spark_metadata")
      const rows = (yield* (yield* spark.read.parquet(outputDir)).collect()) as ReadonlyArray<{ value: number }>
      assert.deepStrictEqual(sortBy(rows, (r) => r.value), [{ value: 1 }, { value: 2 }, { value: 3 }])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("cleanup incomplete output for aborted task", () =>
    Effect.gen(function* () {
      const tmp = yield* tempDir()
      const outputDir = path.join(tmp, "output")
      const input = yield* MemoryStream.make(IntValue)
      yield* input.addData([{ value: 1 }, { value: 2 }, { value: 3 }])
      const q = yield* input
        .toDF()
        .map((r): { value: number } => {
          // Scala's `_ / 0` on an Int throws ArithmeticException
          throw new Error(`/ by zero (${r.value})`)
        }, IntValue)
        .writeStream.option("checkpointLocation", path.join(tmp, "chk"))
        .format("parquet")
        .start(outputDir)
      const e = yield* Effect.flip(q.processAllAvailable().pipe(Effect.ensuring(q.stop())))
      assert.strictEqual(e._tag, "StreamingQueryError")
      const outputFiles = fs.existsSync(outputDir) ? listTree(outputDir).filter((p) => p.endsWith(".parquet")) : []
      assert.deepStrictEqual(outputFiles, [], "Incomplete files should be cleaned up.")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("Handle FileStreamSink metadata correctly for empty partition", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      for (const format of ["parquet", "text", "json"]) {
        const input = yield* MemoryStream.make(StringValue)
        const outputDir = yield* tempDir()
        // repartition to more than the input to leave empty partitions
        const query = yield* input
          .toDF()
          .repartition(10)
          .writeStream.option("checkpointLocation", yield* tempDir())
          .format(format)
          .start(outputDir)
        yield* input.addData([{ value: "1" }, { value: "2" }, { value: "3" }])
        yield* input.addData([{ value: "4" }, { value: "5" }])
        yield* query.processAllAvailable()
        yield* query.stop()
        const logDir = path.join(outputDir, "_spark_metadata")
        const allFiles = fs
          .readdirSync(logDir)
          .filter((n) => !n.startsWith("."))
          .flatMap((n) => fs.readFileSync(path.join(logDir, n), "utf8").split("\n").slice(1))
          .map((l) => JSON.parse(l) as { path: string })
        // only files of non-empty partitions are logged
        assert.isBelow(allFiles.length, 10)
        assert.isTrue(allFiles.every((f) => fs.existsSync(f.path.slice("file:".length))))
        const back = yield* spark.read.format(format).load(outputDir)
        const rows = (yield* back.select(F.col("value").cast("int").as("value")).collect()) as ReadonlyArray<{
          value: number
        }>
        assert.deepStrictEqual(
          rows.map((r) => r.value).sort(),
          [1, 2, 3, 4, 5],
          format
        )
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  // spark.sql.streaming.fileStreamSink.ignoreMetadata=true makes a batch read of a sink folder
  // list it as any folder (FileStreamSink.hasMetadata returns false), so additional.txt is read too.
  it.effect("SPARK-35565: Ignore metadata directory when reading sink output", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      for (const ignoreMetadata of [true, false]) {
        yield* spark.conf.set("spark.sql.streaming.fileStreamSink.ignoreMetadata", String(ignoreMetadata))
        const input = yield* MemoryStream.make(StringValue)
        const outputDir = yield* tempDir()
        const query = yield* input
          .toDF()
          .writeStream.option("checkpointLocation", yield* tempDir())
          .format("text")
          .start(outputDir)
        yield* input.addData([{ value: "1" }, { value: "2" }, { value: "3" }])
        yield* input.addData([{ value: "4" }, { value: "5" }])
        yield* query.processAllAvailable()
        yield* query.stop()
        yield* put(outputDir, "additional.txt", "6", 10)
        const back = yield* spark.read.format("text").load(outputDir)
        const rows = (yield* back.select(F.col("value").cast("int").as("value")).collect()) as ReadonlyArray<{
          value: number
        }>
        assert.deepStrictEqual(
          rows.map((r) => r.value).sort(),
          ignoreMetadata ? [1, 2, 3, 4, 5, 6] : [1, 2, 3, 4, 5]
        )
      }
    }).pipe(Effect.provide(Session.layer()))
  )
})
