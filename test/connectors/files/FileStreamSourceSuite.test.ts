/**
 * Ports of Apache Spark's `FileStreamSourceSuite` (sql/core/src/test/scala/org/apache/spark/sql/
 * streaming/FileStreamSourceSuite.scala), each under Spark's test name. Spark's `AddTextFileData`
 * becomes an `Execute` that writes a file with the next modification time (the source orders
 * files by it); ORC cases are left out (tributary has no ORC format).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session, Trigger } from "../../../mod.ts"
import { parseFileStreamOptions } from "../../../connectors/files/FileStreamOptions.ts"
import {
  CompactibleFileStreamLog,
  defaultLogSettings,
  fromUrlPath,
  sourceEntryCodec
} from "../../../connectors/files/FileStreamLog.ts"
import { fileStreamSourceFormat, SeenFilesMap } from "../../../connectors/files/FileStreamSource.ts"
import { TextFormat, textSchema } from "../../../connectors/files/TextFormat.ts"
import type { AnalysisError } from "../../../core/Errors.ts"
import type * as T from "../../../core/DataType.ts"
import * as DuckDB from "../../../state/DuckDB.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import {
  AdvanceClock,
  AssertOnQuery,
  CheckAnswer,
  CheckLastBatch,
  CheckNewAnswer,
  Execute,
  ExpectFailure,
  StartStream,
  StopStream,
  type StreamAction,
  testStream
} from "../../../structured/testing.ts"
import { type Batches, put, startRecording, tempDir } from "./streamHelpers.ts"

/** Modification times in seconds, increasing with every file written. */
let clock = 1_000
let counter = 0

/** Spark's `AddTextFileData(content, src, tmp, tmpFilePrefix)`: a new file `<prefix>.<n>` in `src`. */
const AddTextFileData = (content: string, src: string, prefix = "text"): StreamAction =>
  Execute(() => put(src, `${prefix}.${counter++}`, content, clock++))

/** Writes a parquet file of one string column `value` (Spark's `AddParquetFileData`). */
const writeParquet = (dir: string, columns: string, values: string): Effect.Effect<void> =>
  Effect.gen(function* () {
    fs.mkdirSync(dir, { recursive: true })
    // As Spark's AddParquetFileData: written elsewhere, then moved in whole, so a running query
    // never lists a file DuckDB (on its own thread) is still writing.
    const name = `part-${counter++}.parquet`
    const staging = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-parquet-"))
    const written = path.join(staging, name)
    yield* DuckDB.withMemory((c) =>
      c.execute(`COPY (SELECT * FROM (VALUES ${values}) t(${columns})) TO ? (FORMAT parquet)`, [written])
    ).pipe(Effect.orDie)
    fs.utimesSync(written, clock, clock)
    clock++
    fs.renameSync(written, path.join(dir, name))
    fs.rmSync(staging, { recursive: true, force: true })
  })

const AddParquetFileData = (dir: string, columns: string, values: string): StreamAction =>
  Execute(() => writeParquet(dir, columns, values))

const values = (...vs: ReadonlyArray<string | null>) => vs.map((value) => ({ value }))

const keep = <R>(df: DataFrame<R>) => df.filter(F.col("value").contains("keep"))

const schemaOf = (df: { readonly schema: T.StructType }): Array<string> =>
  df.schema.fields.map((f) => `${f.name}: ${f.dataType._tag}${f.nullable ? "" : " not null"}`)

/** The failure of a query over `df` that starts and then fails (Spark's StreamingQueryException). */
const runError = <R>(df: DataFrame<R>) =>
  Effect.gen(function* () {
    const q = yield* df.writeStream.format("noop").option("checkpointLocation", yield* tempDir()).start()
    return yield* Effect.flip(q.processAllAvailable().pipe(Effect.ensuring(q.stop())))
  })

/** The error of a DataFrame whose definition failed (Spark throws it from `load()`), met at `start()`. */
const startError = <R>(df: DataFrame<R>) =>
  Effect.gen(function* () {
    const chk = yield* tempDir()
    return (yield* Effect.flip(df.writeStream.format("noop").option("checkpointLocation", chk).start())) as AnalysisError
  })

describe("FileStreamSourceSuite", () => {
  // ============= Basic parameter exists tests ================

  it.effect("FileStreamSource schema: no path", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      for (const inference of ["false", "true"]) {
        yield* spark.conf.set("spark.sql.streaming.schemaInference", inference)
        const e = yield* startError(spark.readStream.load())
        assert.include(e.message, "path") // reason is path, not schema
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("FileStreamSource schema: path doesn't exist (without schema) should throw exception", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const e = yield* startError(spark.readStream.load(path.join(dir, "1")))
      assert.strictEqual(e._tag, "AnalysisError")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("FileStreamSource schema: path doesn't exist (with schema) should throw exception", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const e = yield* startError(spark.readStream.schema("value INT").load(path.join(dir, "1")))
      assert.strictEqual(e._tag, "AnalysisError")
    }).pipe(Effect.provide(Session.layer()))
  )

  // =============== Text file stream schema tests ================

  it.effect("FileStreamSource schema: text, no existing files, no schema", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      assert.deepStrictEqual(schemaOf(spark.readStream.format("text").load(src)), ["value: string"])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("FileStreamSource schema: text, existing files, no schema", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      yield* put(src, "1", "a\nb\nc", 10)
      assert.deepStrictEqual(schemaOf(spark.readStream.format("text").load(src)), ["value: string"])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("FileStreamSource schema: text, existing files, schema", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      yield* put(src, "1", "a\nb\nc", 10)
      assert.deepStrictEqual(schemaOf(spark.readStream.format("text").schema("userColumn STRING").load(src)), [
        "userColumn: string"
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  // =============== Parquet file stream schema tests ================

  it.effect("FileStreamSource schema: parquet, existing files, no schema", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      yield* writeParquet(src, "value", "('a'), ('b'), ('c')")
      yield* spark.conf.set("spark.sql.streaming.schemaInference", "false")
      const e = yield* startError(spark.readStream.format("parquet").load(src))
      assert.include(e.message, "Schema must be specified when creating a streaming source DataFrame.")
      yield* spark.conf.set("spark.sql.streaming.schemaInference", "true")
      assert.deepStrictEqual(schemaOf(spark.readStream.format("parquet").load(src)), ["value: string"])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("FileStreamSource schema: parquet, existing files, schema", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      yield* writeParquet(path.join(src, "1"), "oldUserColumn", "('a'), ('b'), ('c')")
      assert.deepStrictEqual(schemaOf(spark.readStream.format("parquet").schema("userColumn STRING").load(src)), [
        "userColumn: string"
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  // =============== JSON file stream schema tests ================

  it.effect("FileStreamSource schema: json, no existing files, no schema", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      yield* spark.conf.set("spark.sql.streaming.schemaInference", "true")
      const e = yield* startError(spark.readStream.format("json").load(src))
      assert.strictEqual(e.errorClass, "UNABLE_TO_INFER_SCHEMA")
      assert.strictEqual(
        e.message,
        "[UNABLE_TO_INFER_SCHEMA] Unable to infer schema for JSON. It must be specified manually."
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("FileStreamSource schema: json, existing files, no schema", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      yield* spark.conf.set("spark.sql.streaming.schemaInference", "false")
      const e = yield* startError(spark.readStream.format("json").load(src))
      assert.include(e.message, "Schema must be specified")
      yield* spark.conf.set("spark.sql.streaming.schemaInference", "true")
      yield* put(src, "1", "{'c': '1'}\n{'c': '2'}\n{'c': '3'}", 10)
      assert.deepStrictEqual(schemaOf(spark.readStream.format("json").load(src)), ["c: string"])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("FileStreamSource schema: json, existing files, schema", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      yield* put(src, "1", "{'c': '1'}\n{'c': '2'}\n{'c', '3'}", 10)
      assert.deepStrictEqual(schemaOf(spark.readStream.format("json").schema("userColumn STRING").load(src)), [
        "userColumn: string"
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  // =============== Text file stream tests ================

  it.effect("read from text files", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      yield* testStream(keep(spark.readStream.format("text").load(src)), "append", [
        AddTextFileData("drop1\nkeep2\nkeep3", src),
        CheckAnswer(...values("keep2", "keep3")),
        StopStream,
        AddTextFileData("drop4\nkeep5\nkeep6", src),
        StartStream(),
        CheckAnswer(...values("keep2", "keep3", "keep5", "keep6")),
        AddTextFileData("drop7\nkeep8\nkeep9", src),
        CheckAnswer(...values("keep2", "keep3", "keep5", "keep6", "keep8", "keep9"))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-21996/SPARK-43343 read from text files -- file name has special chars", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      for (const special of [" ", "[", "[123]"]) {
        const src = yield* tempDir()
        yield* testStream(keep(spark.readStream.format("text").load(src)), "append", [
          AddTextFileData("drop1\nkeep2\nkeep3", src, `text${special}text`),
          CheckAnswer(...values("keep2", "keep3"))
        ])
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-21996/SPARK-43343 read from text files generated by file sink --file name has special chars", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      for (const special of [" ", "[", "[123]"]) {
        const src = yield* tempDir()
        const output = path.join(src, `text${special}text`)
        const input = yield* MemoryStream.make(Schema.Struct({ value: Schema.String }))
        const q = yield* input
          .toDF()
          .writeStream.option("checkpointLocation", yield* tempDir())
          .format("text")
          .start(output)
        yield* input.addData([{ value: "foo" }])
        yield* q.processAllAvailable()
        yield* q.stop()
        // '[' and ']' are escaped: otherwise they would be a glob pattern that does not match the folder
        const inputPath = output.replace(/\[/g, "\\[").replace(/\]/g, "\\]")
        const q2 = yield* spark.readStream
          .format("text")
          .load(inputPath)
          .writeStream.format("memory")
          .queryName("FileStreamSourceTest")
          .option("checkpointLocation", yield* tempDir())
          .start()
        yield* q2.processAllAvailable()
        yield* q2.stop()
        assert.deepStrictEqual(yield* spark.table("FileStreamSourceTest").collect(), values("foo"))
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("Option pathGlobFilter", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const output = yield* tempDir()
      yield* put(output, "part-00000.txt", "foo\n", 10)
      // Spark adds an ORC file; any file whose name does not match the filter does
      yield* writeParquet(output, "value", "('bar')")
      const q = yield* spark.readStream
        .option("pathGlobFilter", "*.txt")
        .format("text")
        .load(output)
        .writeStream.format("memory")
        .queryName("FileStreamSourceTest")
        .option("checkpointLocation", yield* tempDir())
        .start()
      yield* q.processAllAvailable()
      yield* q.stop()
      assert.deepStrictEqual(yield* spark.table("FileStreamSourceTest").collect(), values("foo"))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-17165 should not track the list of seen files indefinitely", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      // Spark sleeps a second between the files; here the second file is a second newer
      yield* testStream(
        spark.readStream.format("text").option("maxFileAge", "5ms").load(src),
        "append",
        [
          AddTextFileData("a\nb", src),
          CheckAnswer(...values("a", "b")),
          Execute(() => Effect.sync(() => (clock += 1))),
          AddTextFileData("c\nd", src),
          CheckAnswer(...values("a", "b", "c", "d")),
          // Spark asserts `seenFiles.size == 1`; what shows outside is that the first file, now
          // older than the newest by more than maxFileAge, is never read again after a restart
          StopStream,
          StartStream(),
          CheckNewAnswer()
        ]
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  // =============== JSON file stream tests ================

  it.effect("read from json files", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      yield* testStream(keep(spark.readStream.format("json").schema("value STRING").load(src)), "append", [
        AddTextFileData("{'value': 'drop1'}\n{'value': 'keep2'}\n{'value': 'keep3'}", src),
        CheckAnswer(...values("keep2", "keep3")),
        StopStream,
        AddTextFileData("{'value': 'drop4'}\n{'value': 'keep5'}\n{'value': 'keep6'}", src),
        StartStream(),
        CheckAnswer(...values("keep2", "keep3", "keep5", "keep6")),
        AddTextFileData("{'value': 'drop7'}\n{'value': 'keep8'}\n{'value': 'keep9'}", src),
        CheckAnswer(...values("keep2", "keep3", "keep5", "keep6", "keep8", "keep9"))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("read from json files with inferring schema", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.sql.streaming.schemaInference", "true")
      const src = yield* tempDir()
      yield* put(src, "existing", "{'c': 'drop1'}\n{'c': 'keep2'}\n{'c': 'keep3'}", clock++)
      const fileStream = spark.readStream.format("json").load(src)
      assert.deepStrictEqual(schemaOf(fileStream), ["c: string"])
      yield* testStream(fileStream.filter(F.col("c").contains("keep")), "append", [
        AddTextFileData("{'c': 'drop4'}\n{'c': 'keep5'}\n{'c': 'keep6'}", src),
        CheckAnswer({ c: "keep2" }, { c: "keep3" }, { c: "keep5" }, { c: "keep6" })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("reading from json files inside partitioned directory", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.sql.streaming.schemaInference", "true")
      const src = path.join(yield* tempDir(), "type=X")
      yield* put(src, "existing", "{'c': 'drop1'}\n{'c': 'keep2'}\n{'c': 'keep3'}", clock++)
      const fileStream = spark.readStream.format("json").load(src)
      yield* testStream(fileStream.filter(F.col("c").contains("keep")), "append", [
        AddTextFileData("{'c': 'drop4'}\n{'c': 'keep5'}\n{'c': 'keep6'}", src),
        CheckAnswer({ c: "keep2" }, { c: "keep3" }, { c: "keep5" }, { c: "keep6" })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("reading from json files with changing schema", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.sql.streaming.schemaInference", "true")
      const src = yield* tempDir()
      yield* put(src, "existing", "{'k': 'value0'}", clock++)
      const fileStream = spark.readStream.format("json").load(src)
      assert.deepStrictEqual(schemaOf(fileStream), ["k: string"])
      // added after the DataFrame was defined: does not change the inferred schema
      yield* put(src, "existing2", "{'k': 'value1', 'v': 'new'}", clock++)
      const k = (...vs: ReadonlyArray<string | null>) => vs.map((v) => ({ k: v }))
      yield* testStream(fileStream, "append", [
        AddTextFileData("{'k': 'value2'}", src),
        CheckAnswer(...k("value0", "value1", "value2")),
        AddTextFileData("{'k': 'value3', 'v': 'new'}", src),
        CheckAnswer(...k("value0", "value1", "value2", "value3")),
        AddTextFileData("{'v': 'value4'}", src),
        CheckAnswer(...k("value0", "value1", "value2", "value3", null))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  // =============== Parquet file stream tests ================

  it.effect("read from parquet files", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      yield* testStream(keep(spark.readStream.format("parquet").schema("value STRING").load(src)), "append", [
        AddParquetFileData(src, "value", "('drop1'), ('keep2'), ('keep3')"),
        CheckAnswer(...values("keep2", "keep3")),
        StopStream,
        AddParquetFileData(src, "value", "('drop4'), ('keep5'), ('keep6')"),
        StartStream(),
        CheckAnswer(...values("keep2", "keep3", "keep5", "keep6")),
        AddParquetFileData(src, "value", "('drop7'), ('keep8'), ('keep9')"),
        CheckAnswer(...values("keep2", "keep3", "keep5", "keep6", "keep8", "keep9"))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("read from parquet files with changing schema", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.sql.streaming.schemaInference", "true")
      const src = yield* tempDir()
      yield* writeParquet(src, "k", "('value0')")
      const fileStream = spark.readStream.format("parquet").load(src)
      assert.deepStrictEqual(schemaOf(fileStream), ["k: string"])
      yield* writeParquet(src, "k, v", "('value1', 0)")
      const k = (...vs: ReadonlyArray<string | null>) => vs.map((v) => ({ k: v }))
      yield* testStream(fileStream, "append", [
        AddParquetFileData(src, "k", "('value2')"),
        CheckAnswer(...k("value0", "value1", "value2")),
        AddParquetFileData(src, "k, v", "('value3', 1)"),
        CheckAnswer(...k("value0", "value1", "value2", "value3")),
        AddParquetFileData(src, "v", "('value5')"),
        CheckAnswer(...k("value0", "value1", "value2", "value3", null))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  // =============== file stream globbing tests ================

  it.effect("read new files in nested directories with globbing", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const subDir = path.join(dir, "subdir")
      const subSubDir = path.join(subDir, "subsubdir")
      const subSubSubDir = path.join(subSubDir, "subsubsubdir")
      yield* testStream(keep(spark.readStream.format("text").load(`${dir}/*/*`)), "append", [
        AddTextFileData("drop1\nkeep2", subDir),
        CheckAnswer(...values("keep2")),
        AddTextFileData("keep3", subDir),
        CheckAnswer(...values("keep2", "keep3")),
        AddTextFileData("keep4", subSubDir),
        CheckAnswer(...values("keep2", "keep3", "keep4")),
        AddTextFileData("keep5", subSubDir),
        CheckAnswer(...values("keep2", "keep3", "keep4", "keep5")),
        AddTextFileData("keep6", dir),
        AddTextFileData("keep7", subSubSubDir),
        AddTextFileData("keep8", subDir),
        CheckAnswer(...values("keep2", "keep3", "keep4", "keep5", "keep8"))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("read new files in partitioned table with globbing, should not read partition data", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const foo = path.join(dir, "partition=foo")
      const bar = path.join(dir, "partition=bar")
      const df = keep(spark.readStream.format("json").schema("value STRING, partition STRING").load(`${dir}/*/*`))
      const r = (value: string) => ({ value, partition: null })
      yield* testStream(df, "append", [
        AddTextFileData("{'value': 'drop1'}\n{'value': 'keep2'}", foo),
        CheckAnswer(r("keep2")),
        AddTextFileData("{'value': 'keep3'}", foo),
        CheckAnswer(r("keep2"), r("keep3")),
        AddTextFileData("{'value': 'keep4'}", bar),
        CheckAnswer(r("keep2"), r("keep3"), r("keep4")),
        AddTextFileData("{'value': 'keep5'}", bar),
        CheckAnswer(r("keep2"), r("keep3"), r("keep4"), r("keep5"))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  // =============== other tests ================

  it.effect("read new files in partitioned table without globbing, should read partition data", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const foo = path.join(dir, "partition=foo")
      const bar = path.join(dir, "partition=bar")
      const df = keep(spark.readStream.format("json").schema("value STRING, partition STRING").load(dir))
      const r = (value: string, partition: string) => ({ value, partition })
      yield* testStream(df, "append", [
        AddTextFileData("{'value': 'drop1'}\n{'value': 'keep2'}", foo),
        CheckAnswer(r("keep2", "foo")),
        AddTextFileData("{'value': 'keep3'}", foo),
        CheckAnswer(r("keep2", "foo"), r("keep3", "foo")),
        AddTextFileData("{'value': 'keep4'}", bar),
        CheckAnswer(r("keep2", "foo"), r("keep3", "foo"), r("keep4", "bar")),
        AddTextFileData("{'value': 'keep5'}", bar),
        CheckAnswer(r("keep2", "foo"), r("keep3", "foo"), r("keep4", "bar"), r("keep5", "bar"))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  // The file sink reads spark.sql.streaming.fileSink.log.compactInterval (3 here: 2.compact).
  it.effect("read data from outputs of another streaming query", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.sql.streaming.fileSink.log.compactInterval", "3")
      const outputDir = yield* tempDir()
      const q1Source = yield* MemoryStream.make(Schema.Struct({ value: Schema.String }))
      const q1 = yield* q1Source
        .toDF()
        .writeStream.option("checkpointLocation", yield* tempDir())
        .format("text")
        .start(outputDir)
      const q1AddData = (...data: ReadonlyArray<string>) =>
        Execute(() =>
          Effect.gen(function* () {
            yield* q1Source.addData(data.map((value) => ({ value })))
            yield* q1.processAllAvailable()
          })
        )
      yield* testStream(keep(spark.readStream.format("text").load(outputDir)), "append", [
        q1AddData("drop1", "keep2"),
        CheckAnswer(...values("keep2")),
        // a file that is not in q1's sink log: never read, though it holds "keep"
        Execute(() => put(outputDir, "should_not_keep.txt", "should_not_keep!!!", clock++)),
        q1AddData("keep3"),
        CheckAnswer(...values("keep2", "keep3")),
        q1AddData("keep4"),
        AssertOnQuery(() => fs.existsSync(path.join(outputDir, "_spark_metadata", "2.compact")), "2.compact exists"),
        CheckAnswer(...values("keep2", "keep3", "keep4")),
        Execute(() => q1.stop())
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  // The file sink reads spark.sql.streaming.fileSink.log.compactInterval (3 here: 2.compact).
  it.effect("SPARK-35565: read data from outputs of another streaming query but ignore its metadata", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.sql.streaming.fileSink.log.compactInterval", "3")
      yield* spark.conf.set("spark.sql.streaming.fileStreamSink.ignoreMetadata", "true")
      const outputDir = yield* tempDir()
      const q0Source = yield* MemoryStream.make(Schema.Struct({ value: Schema.String }))
      const q0 = yield* q0Source
        .toDF()
        .writeStream.option("checkpointLocation", yield* tempDir())
        .format("text")
        .start(outputDir)
      yield* q0Source.addData([{ value: "keep0" }])
      yield* q0.processAllAvailable()
      yield* q0.stop()
      fs.rmSync(path.join(outputDir, "_spark_metadata"), { recursive: true })
      const q1Source = yield* MemoryStream.make(Schema.Struct({ value: Schema.String }))
      const q1 = yield* q1Source
        .toDF()
        .writeStream.option("checkpointLocation", yield* tempDir())
        .format("text")
        .start(outputDir)
      const q1AddData = (...data: ReadonlyArray<string>) =>
        Execute(() =>
          Effect.gen(function* () {
            yield* q1Source.addData(data.map((value) => ({ value })))
            yield* q1.processAllAvailable()
          })
        )
      yield* testStream(keep(spark.readStream.format("text").load(outputDir)), "append", [
        q1AddData("drop1", "keep2"),
        CheckAnswer(...values("keep0", "keep2")),
        q1AddData("keep3"),
        CheckAnswer(...values("keep0", "keep2", "keep3")),
        q1AddData("keep4"),
        AssertOnQuery(() => fs.existsSync(path.join(outputDir, "_spark_metadata", "2.compact")), "2.compact exists"),
        CheckAnswer(...values("keep0", "keep2", "keep3", "keep4")),
        Execute(() => q1.stop())
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("start before another streaming query, and read its output", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const outputDir = yield* tempDir()
      const q1Source = yield* MemoryStream.make(Schema.Struct({ value: Schema.String }))
      const q1Write = q1Source.toDF().writeStream.option("checkpointLocation", yield* tempDir()).format("text")
      let q1: { stop: () => Effect.Effect<void> } | undefined
      yield* testStream(keep(spark.readStream.format("text").load(outputDir)), "append", [
        CheckAnswer(),
        Execute(() =>
          Effect.gen(function* () {
            const q = yield* q1Write.start(outputDir)
            q1 = q
            yield* q1Source.addData([{ value: "drop1" }, { value: "keep2" }])
            yield* q.processAllAvailable()
          })
        ),
        // a file outside q1's log: once q1 has written its log, the source reads through it
        Execute(() => put(outputDir, "should_not_keep.txt", "should_not_keep!!!", clock++)),
        CheckAnswer(...values("keep2")),
        Execute(() => q1!.stop())
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("when schema inference is turned on, should read partition data", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.sql.streaming.schemaInference", "true")
      const dir = yield* tempDir()
      const foo = path.join(dir, "partition=foo")
      const bar = path.join(dir, "partition=bar")
      yield* put(foo, "existing", "{'value': 'drop0'}", clock++)
      const df = keep(spark.readStream.format("json").load(dir))
      const r = (value: string, partition: string) => ({ value, partition })
      yield* testStream(df, "append", [
        AddTextFileData("{'value': 'drop1'}\n{'value': 'keep2'}", foo),
        CheckAnswer(r("keep2", "foo")),
        AddTextFileData("{'value': 'keep3'}", foo),
        CheckAnswer(r("keep2", "foo"), r("keep3", "foo")),
        AddTextFileData("{'value': 'keep4'}", bar),
        CheckAnswer(r("keep2", "foo"), r("keep3", "foo"), r("keep4", "bar")),
        AddTextFileData("{'value': 'keep5'}", bar),
        CheckAnswer(r("keep2", "foo"), r("keep3", "foo"), r("keep4", "bar"), r("keep5", "bar")),
        AddTextFileData("{'value': 'keep6'}", bar),
        CheckAnswer(r("keep2", "foo"), r("keep3", "foo"), r("keep4", "bar"), r("keep5", "bar"), r("keep6", "bar"))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("fault tolerance", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      yield* testStream(keep(spark.readStream.format("text").load(src)), "append", [
        AddTextFileData("drop1\nkeep2\nkeep3", src),
        CheckAnswer(...values("keep2", "keep3")),
        StopStream,
        AddTextFileData("drop4\nkeep5\nkeep6", src),
        StartStream(),
        CheckAnswer(...values("keep2", "keep3", "keep5", "keep6")),
        AddTextFileData("drop7\nkeep8\nkeep9", src),
        CheckAnswer(...values("keep2", "keep3", "keep5", "keep6", "keep8", "keep9"))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("max files per trigger", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      const createFile = (data: number) => put(src, `${data}.txt`, String(data), 100 + data)
      yield* createFile(1)
      yield* createFile(2)
      yield* createFile(3)
      const batches: Batches = []
      const q = yield* startRecording(
        spark.readStream.option("maxFilesPerTrigger", 2).text(src),
        yield* tempDir(),
        batches
      )
      yield* q.processAllAvailable()
      const last = () => batches[batches.length - 1][1].map((r) => r.value)
      const all = () => batches.flatMap(([, rows]) => rows.map((r) => r.value)).sort()
      const range = (a: number, b: number) =>
        Array.from({ length: b - a + 1 }, (_, i) => String(a + i)).sort()
      assert.deepStrictEqual(last(), ["3"]) // (1 and 2) in batch 0, (3) in batch 1 (last)
      assert.deepStrictEqual(all(), range(1, 3))
      let lastBatchId = batches[batches.length - 1][0]
      const checkNumBatchesSinceLastCheck = (n: number) => {
        assert.strictEqual(batches[batches.length - 1][0], lastBatchId + n)
        lastBatchId = batches[batches.length - 1][0]
      }
      for (const i of [4, 5, 6, 7]) yield* createFile(i)
      yield* q.processAllAvailable()
      checkNumBatchesSinceLastCheck(2)
      assert.deepStrictEqual(last(), ["6", "7"])
      assert.deepStrictEqual(all(), range(1, 7))
      for (const i of [8, 9, 10, 11, 12]) yield* createFile(i)
      yield* q.processAllAvailable()
      checkNumBatchesSinceLastCheck(3)
      assert.deepStrictEqual(last(), ["12"])
      assert.deepStrictEqual(all(), range(1, 12))
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  // Spark checks maxFilesPerTrigger when the stream thread creates the source: start() succeeds
  // and the query fails with a StreamingQueryException (FileStreamOptions' require).
  it.effect("max files per trigger - incorrect values", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      for (const value of ["not-a-integer", "-1", "0", "10.1"]) {
        const df = spark.readStream.option("maxFilesPerTrigger", value).text(src)
        const e = yield* Effect.flip(
          Effect.gen(function* () {
            const q = yield* df.writeStream
              .format("memory")
              .queryName("maxFilesPerTrigger_test")
              .option("checkpointLocation", yield* tempDir())
              .start()
            yield* q.processAllAvailable().pipe(Effect.ensuring(q.stop()))
          })
        )
        assert.strictEqual((e as { _tag: string })._tag, "StreamingQueryError")
        for (const s of ["maxFilesPerTrigger", value, "positive integer"]) {
          assert.include((e as AnalysisError).message, s)
        }
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  // Spark ignores a source's read limit under Trigger.Once (MicroBatchExecution's logicalPlan:
  // `trigger == OneTimeTrigger && limit != ReadLimit.allAvailable()` -> allAvailable).
  it.effect("SPARK-30669: maxFilesPerTrigger - ignored when using Trigger.Once", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      const target = yield* tempDir()
      const checkpoint = path.join(target, "chk")
      const targetDir = path.join(target, "data")
      const createFile = (data: number) => put(src, `${data}.txt`, String(data), 100 + data)
      for (const i of [1, 2, 3]) yield* createFile(i)
      const df = spark.readStream.option("maxFilesPerTrigger", 1).text(src)
      const startQuery = () =>
        df.writeStream.format("parquet").trigger(Trigger.Once()).option("checkpointLocation", checkpoint).start(targetDir)
      const read = () =>
        Effect.gen(function* () {
          const rows = yield* (yield* spark.read.parquet(targetDir)).collect()
          return rows.map((r) => (r as { value: string }).value).sort()
        })
      const q = yield* startQuery()
      yield* q.awaitTermination()
      assert.strictEqual((yield* q.recentProgress()).filter((p) => p.numInputRows !== 0).length, 1)
      assert.deepStrictEqual(yield* read(), ["1", "2", "3"])
      yield* createFile(4)
      yield* createFile(5)
      const q2 = yield* startQuery()
      yield* q2.awaitTermination()
      assert.strictEqual((yield* q2.recentProgress()).filter((p) => p.numInputRows !== 0).length, 1)
      assert.deepStrictEqual(yield* read(), ["1", "2", "3", "4", "5"])
    }).pipe(Effect.provide(Session.layer()))
  )

  // Spark ignores a source's read limit under Trigger.Once (MicroBatchExecution's logicalPlan:
  // `trigger == OneTimeTrigger && limit != ReadLimit.allAvailable()` -> allAvailable).
  it.effect("SPARK-36533: Trigger.AvailableNow - multiple queries with checkpoint", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      const checkpoint = path.join(yield* tempDir(), "chk")
      const createFile = (data: number) => put(src, `${data}.txt`, String(data), 100 + data)
      for (const i of [1, 2, 3]) yield* createFile(i)
      const df = spark.readStream.option("maxFilesPerTrigger", 1).text(src)
      const q = yield* df.writeStream
        .foreachBatch(() => Effect.void)
        .trigger(Trigger.Once())
        .option("checkpointLocation", checkpoint)
        .start()
      yield* q.awaitTermination()
      // with AvailableNow maxFilesPerTrigger holds: one row, one micro-batch
      let index = 3
      const seen: Array<ReadonlyArray<unknown>> = []
      const startAvailableNow = () =>
        df.writeStream
          .foreachBatch((batch) =>
            Effect.map(batch.collect(), (rows) => {
              index += 1
              seen.push(rows)
              assert.deepStrictEqual(rows, [{ value: String(index) }])
            })
          )
          .trigger(Trigger.AvailableNow())
          .option("checkpointLocation", checkpoint)
          .start()
      yield* createFile(4)
      yield* createFile(5)
      const q2 = yield* startAvailableNow()
      yield* q2.awaitTermination()
      assert.strictEqual(index, 5)
      yield* createFile(6)
      yield* createFile(7)
      const q3 = yield* startAvailableNow()
      yield* q3.awaitTermination()
      assert.strictEqual(index, 7)
      assert.deepStrictEqual(seen, [values("4"), values("5"), values("6"), values("7")])
    }).pipe(Effect.provide(Session.layer()))
  )

  // Deviation: Spark's StreamExecution.explainInternal answers "No physical plan. Waiting for
  // data." until the first batch ran, and names the file scan "FileScan text ... Format: Text";
  // tributary's StreamingQuery.explain (structured/execution/MicroBatchExecution.ts) shows the
  // planned query before the first batch, and its scan as "MicroBatchScan[...] text".
  it.effect.fails("explain", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      const df = spark.readStream
        .format("text")
        .load(src)
        .map((r) => ({ value: `${r.value}-x` }), Schema.Struct({ value: Schema.String }))
      yield* df.explain()
      const q = yield* df.writeStream
        .queryName("file_explain")
        .format("memory")
        .option("checkpointLocation", yield* tempDir())
        .start()
      assert.strictEqual(yield* q.explain(false), "No physical plan. Waiting for data.")
      assert.strictEqual(yield* q.explain(true), "No physical plan. Waiting for data.")
      yield* put(src, "text.x", "foo", clock++)
      yield* q.processAllAvailable()
      const count = (re: RegExp, text: string) => (text.match(re) ?? []).length
      const plain = yield* q.explain(false)
      assert.strictEqual(count(/Relation.*text/g, plain), 0)
      assert.strictEqual(count(/: Text/g, plain), 1)
      const extended = yield* q.explain(true)
      assert.strictEqual(count(/Relation.*text/g, extended), 3)
      assert.strictEqual(count(/: Text/g, extended), 1)
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-17372 - write file names to WAL as Array[String]", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const root = yield* tempDir()
      const src = path.join(root, "a=1")
      // Spark writes 10 000 files; 1 000 keep the test quick and still exercise a large log entry
      const numFiles = 1000
      fs.mkdirSync(src)
      for (let i = 1; i <= numFiles; i++) fs.writeFileSync(path.join(src, `text.${i}`), String(i))
      const files = spark.readStream.text(root)
      const df = files.filter(F.lit(1).eq(0)).groupBy().count()
      yield* testStream(df, "complete", [AddTextFileData("0", src), CheckAnswer({ count: 0 })])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("compact interval metadata log", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.sql.streaming.fileSource.log.compactInterval", "2")
      const src = yield* tempDir()
      const chk = yield* tempDir()
      const log = path.join(chk, "sources", "0")
      /** Spark's `verify`: compaction batches end in .compact and hold every entry so far. */
      const verify = (batchId: number, expectedBatches: number) =>
        AssertOnQuery(
          () =>
            Effect.sync(() => {
              const isCompact = (batchId + 1) % 2 === 0
              const name = isCompact ? `${batchId}.compact` : String(batchId)
              const lines = fs.readFileSync(path.join(log, name), "utf8").split("\n").slice(1)
              const entries = lines.map((l) => JSON.parse(l) as { batchId: number })
              if (isCompact) {
                return (
                  entries.length === expectedBatches &&
                  entries.map((e) => e.batchId).join() === Array.from({ length: batchId + 1 }, (_, i) => i).join()
                )
              }
              return entries.length === 1 && entries[0].batchId === batchId
            }),
          `log batch ${batchId}`
        )
      yield* testStream(keep(spark.readStream.format("text").load(src)), "append", [
        StartStream({ checkpointLocation: chk }),
        AddTextFileData("drop1\nkeep2\nkeep3", src),
        CheckAnswer(...values("keep2", "keep3")),
        verify(0, 1),
        AddTextFileData("drop4\nkeep5\nkeep6", src),
        CheckAnswer(...values("keep2", "keep3", "keep5", "keep6")),
        verify(1, 2),
        AddTextFileData("drop7\nkeep8\nkeep9", src),
        CheckAnswer(...values("keep2", "keep3", "keep5", "keep6", "keep8", "keep9")),
        verify(2, 3),
        StopStream,
        // the interval of an existing log wins over a new conf (Spark's deriveCompactInterval)
        StartStream({
          checkpointLocation: chk,
          additionalConfs: { "spark.sql.streaming.fileSource.log.compactInterval": "5" }
        }),
        verify(2, 3),
        AddTextFileData("drop10\nkeep11", src),
        CheckAnswer(...values("keep2", "keep3", "keep5", "keep6", "keep8", "keep9", "keep11")),
        verify(3, 4),
        AddTextFileData("drop12\nkeep13", src),
        CheckAnswer(...values("keep2", "keep3", "keep5", "keep6", "keep8", "keep9", "keep11", "keep13")),
        verify(4, 5),
        AssertOnQuery(
          () => fs.readdirSync(log).includes("3.compact") && !fs.readdirSync(log).includes("4.compact"),
          "3.compact, not 4.compact"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("input row metrics", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      yield* testStream(spark.readStream.format("text").load(src), "append", [
        AddTextFileData("100", src),
        CheckAnswer(...values("100")),
        AssertOnQuery(
          (q) =>
            Effect.map(q.recentProgress(), (ps) => {
              const p = ps.find((x) => x.numInputRows > 0)
              return p !== undefined && p.numInputRows === 1 && p.sources[0].processedRowsPerSecond > 0
            }),
          "numInputRows 1, processedRowsPerSecond > 0"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it("SPARK-18433: Improve DataSource option keys to be more case-insensitive", () => {
    const options = parseFileStreamOptions({ maxfilespertrigger: "1" })
    assert.strictEqual((options as { maxFilesPerTrigger?: number }).maxFilesPerTrigger, 1)
  })

  const runTwoBatchesAndVerifyResults = (
    src: string,
    latestFirst: boolean,
    firstBatch: string,
    secondBatch: string,
    maxFileAge?: string
  ) =>
    Effect.gen(function* () {
      const spark = yield* Session
      let reader = spark.readStream
        .option("latestFirst", String(latestFirst))
        .option("maxFilesPerTrigger", "1")
        .option("cleanSource", "OFF")
      if (maxFileAge !== undefined) reader = reader.option("maxFileAge", maxFileAge)
      yield* testStream(reader.format("text").load(src), "append", [
        StartStream({ trigger: Trigger.ProcessingTime(10) }),
        CheckLastBatch(...values(firstBatch)),
        AdvanceClock(10),
        CheckLastBatch(...values(secondBatch))
      ])
    })

  it.effect("FileStreamSource - latestFirst", () =>
    Effect.gen(function* () {
      const src = yield* tempDir()
      yield* put(src, "1.txt", "1", 1000)
      yield* put(src, "2.txt", "2", 1001)
      yield* runTwoBatchesAndVerifyResults(src, false, "1", "2")
      yield* runTwoBatchesAndVerifyResults(src, true, "2", "1")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-19813: Ignore maxFileAge when maxFilesPerTrigger and latestFirst is used", () =>
    Effect.gen(function* () {
      const src = yield* tempDir()
      yield* put(src, "1.txt", "1", 1000)
      yield* put(src, "2.txt", "2", 1000 + 3600) // 1 hour later
      yield* runTwoBatchesAndVerifyResults(src, true, "2", "1", "1m")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-26629: multiple file sources work with restarts when a source does not have data", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const sourceDir1 = path.join(dir, "source1")
      const sourceDir2 = path.join(dir, "source2")
      fs.mkdirSync(sourceDir1)
      fs.mkdirSync(sourceDir2)
      const unioned = spark.readStream.format("text").load(sourceDir1).union(spark.readStream.format("text").load(sourceDir2))
      const addMulti = (c1: string | null, c2: string | null) =>
        Execute(() =>
          Effect.gen(function* () {
            if (c1 !== null) yield* put(sourceDir1, `text.${counter++}`, c1, clock++)
            if (c2 !== null) yield* put(sourceDir2, `text.${counter++}`, c2, clock++)
          })
        )
      yield* testStream(unioned, "append", [
        StartStream(),
        addMulti("source1_0", "source2_0"),
        CheckNewAnswer(...values("source1_0", "source2_0")),
        StopStream,
        StartStream(),
        addMulti("source1_1", null),
        CheckNewAnswer(...values("source1_1")),
        StopStream,
        StartStream(),
        addMulti(null, "source2_2"),
        CheckNewAnswer(...values("source2_2")),
        StopStream,
        StartStream(),
        addMulti("source1_3", "source2_3"),
        CheckNewAnswer(...values("source1_3", "source2_3")),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-28651: force streaming file source to be nullable", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const temp = yield* tempDir()
      const schema: T.StructType = {
        _tag: "struct",
        fields: [{ name: "foo", dataType: { _tag: "long" } as T.DataType, nullable: false }]
      }
      const streaming = spark.readStream.schema(schema).json(temp)
      assert.deepStrictEqual(schemaOf(streaming), ["foo: long"])
      const batch = yield* spark.read.schema(schema).json(temp)
      assert.deepStrictEqual(schemaOf(batch), schemaOf(streaming))
    }).pipe(Effect.provide(Session.layer()))
  )

  const removed = (dir: string, prefix: string) => !fs.readdirSync(dir).some((n) => n.startsWith(prefix))

  it.effect("remove completed files when remove option is enabled", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.sql.streaming.fileSource.log.compactInterval", "2")
      yield* spark.conf.set("spark.sql.streaming.fileSource.log.cleanupDelay", "1")
      const src = yield* tempDir()
      const df = keep(
        spark.readStream
          .options({ latestFirst: "false", maxFilesPerTrigger: "1", cleanSource: "delete" })
          .format("text")
          .load(src)
      )
      yield* testStream(df, "append", [
        AddTextFileData("keep1", src, "keep1"),
        CheckAnswer(...values("keep1")),
        // Spark cleans a batch's files when the next batch commits its source offset
        AssertOnQuery(() => !removed(src, "keep1"), "keep1 not removed yet"),
        AddTextFileData("keep2", src, "ke ep2 %"),
        CheckAnswer(...values("keep1", "keep2")),
        AssertOnQuery(() => removed(src, "keep1") && !removed(src, "ke ep2 %"), "keep1 removed, ke ep2 % not"),
        AddTextFileData("keep3", src, "keep3"),
        CheckAnswer(...values("keep1", "keep2", "keep3")),
        AssertOnQuery(() => removed(src, "ke ep2 %") && !removed(src, "keep3"), "ke ep2 % removed, keep3 not")
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("move completed files to archive directory when archive option is enabled", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.sql.streaming.fileSource.log.compactInterval", "2")
      yield* spark.conf.set("spark.sql.streaming.fileSource.log.cleanupDelay", "1")
      const src = yield* tempDir()
      const archiveDir = yield* tempDir()
      const df = keep(
        spark.readStream
          .options({
            latestFirst: "false",
            maxFilesPerTrigger: "1",
            cleanSource: "archive",
            sourceArchiveDir: archiveDir
          })
          .format("text")
          .load(`${src}/*/*`)
      )
      const dirForKeep1 = path.join(src, "k %1")
      const dirForKeep2 = path.join(dirForKeep1, "k 2")
      const dirForKeep3 = path.join(src, "k3")
      const moved = (d: string) => path.join(archiveDir, d)
      const isMoved = (d: string, prefix: string) =>
        fs.existsSync(d) &&
        removed(d, prefix) &&
        fs.existsSync(moved(d)) &&
        fs.readdirSync(moved(d)).some((n) => n.startsWith(prefix))
      const isNotMoved = (d: string, prefix: string) =>
        fs.existsSync(d) && !removed(d, prefix) && (!fs.existsSync(moved(d)) || removed(moved(d), prefix))
      yield* testStream(df, "append", [
        AddTextFileData("keep1", dirForKeep1, "keep1"),
        CheckAnswer(...values("keep1")),
        AssertOnQuery(() => isNotMoved(dirForKeep1, "keep1"), "keep1 not moved"),
        AddTextFileData("keep2", dirForKeep2, "keep2 %"),
        CheckAnswer(...values("keep1", "keep2")),
        AssertOnQuery(
          () => isMoved(dirForKeep1, "keep1") && isNotMoved(dirForKeep2, "keep2 %"),
          "keep1 moved, keep2 % not"
        ),
        AddTextFileData("keep3", dirForKeep3, "keep3"),
        CheckAnswer(...values("keep1", "keep2", "keep3")),
        AssertOnQuery(
          () => isMoved(dirForKeep2, "keep2 %") && isNotMoved(dirForKeep3, "keep3"),
          "keep2 % moved, keep3 not"
        ),
        AddTextFileData("keep4", dirForKeep3, "keep4"),
        CheckAnswer(...values("keep1", "keep2", "keep3", "keep4")),
        AssertOnQuery(() => isMoved(dirForKeep3, "keep3") && isNotMoved(dirForKeep3, "keep4"), "keep3 moved, keep4 not")
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const cleanOption of ["delete", "archive"]) {
    it.effect(
      `Throw UnsupportedOperationException on configuring ${cleanOption} when source path refers the output dir of FileStreamSink`,
      () =>
        Effect.gen(function* () {
          const spark = yield* Session
          yield* spark.conf.set("spark.sql.streaming.fileSource.log.compactInterval", "2")
          yield* spark.conf.set("spark.sql.streaming.fileSource.log.cleanupDelay", "1")
          const src = yield* tempDir()
          const archiveDir = yield* tempDir()
          const df = keep(
            spark.readStream
              .options({
                latestFirst: "false",
                maxFilesPerTrigger: "1",
                cleanSource: cleanOption,
                sourceArchiveDir: archiveDir
              })
              .format("text")
              .load(src)
          )
          yield* testStream(df, "append", [
            AddTextFileData("keep1", src, "keep1"),
            // Spark's AddFilesToFileStreamSinkLog: a sink log under the source folder lists the file
            Execute(() =>
              Effect.sync(() => {
                const name = fs.readdirSync(src).find((n) => n.startsWith("keep1"))!
                const st = fs.statSync(path.join(src, name))
                fs.mkdirSync(path.join(src, "_spark_metadata"))
                fs.writeFileSync(
                  path.join(src, "_spark_metadata", "0"),
                  `v1\n${JSON.stringify({
                    path: `file:${path.join(src, name)}`,
                    size: st.size,
                    isDir: false,
                    modificationTime: Math.floor(st.mtimeMs),
                    blockReplication: 1,
                    blockSize: 33554432,
                    action: "add"
                  })}`
                )
              })
            ),
            ExpectFailure(undefined, "Clean up source files is not supported")
          ])
        }).pipe(Effect.provide(Session.layer()))
    )
  }

  it.effect("SourceFileArchiver - fail when base archive path matches source pattern", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const cases = [
        // 1) prefix of base archive path matches source pattern (baseArchiveDirPath has more depths)
        ["/hello*/spar?", "/hello/spark/structured/streaming"],
        // 2) prefix of source pattern matches base archive path (source pattern has more depths)
        ["/hello*/spar?/structured/streaming", "/hello/spark/structured"],
        // 3) source pattern matches base archive path (both have same depth)
        ["/hello*/spar?/structured/*", "/hello/spark/structured/streaming"]
      ]
      for (const [sourcePattern, archive] of cases) {
        // Spark fails SourceFileArchiver's constructor, when the stream thread creates the source
        const e = yield* runError(
          spark.readStream
            .schema("value STRING")
            .options({ cleanSource: "archive", sourceArchiveDir: archive })
            .format("text")
            .load(sourcePattern)
        )
        assert.include(e.message, "Base archive path cannot be set to the path where archived path can possibly match")
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-31962: file stream source shouldn't allow modifiedBefore/modifiedAfter", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const future = "2100-01-01T00:00:00"
      const past = "2000-01-01T00:00:00"
      for (const options of [
        { modifiedBefore: future } as Record<string, string>,
        { modifiedAfter: past },
        { modifiedBefore: future, modifiedAfter: past }
      ]) {
        const df = spark.readStream.format("csv").option("timeZone", "UTC").schema("a STRING").options(options).load(dir)
        yield* testStream(df, "append", [ExpectFailure(undefined, "is not allowed in file stream source")])
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-35320: Reading JSON with key type different to String in a map should fail", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      for (const type of [
        "MAP<INT, STRING>",
        "STRUCT<test: MAP<INT, STRING>>",
        "ARRAY<MAP<INT, STRING>>",
        "MAP<STRING, MAP<INT, STRING>>"
      ]) {
        const dir = yield* tempDir()
        const e = yield* startError(spark.readStream.schema(`col ${type}`).json(dir))
        assert.include(e.message, "can only contain STRING as a key type for a MAP")
      }
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("FileStreamSourceStressTestSuite", () => {
  // Spark's runStressTest: random batches of data with random stops and restarts; every value
  // comes out exactly once. A fixed seed keeps the script the same on every run.
  it.effect("file source stress test", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      let seed = 42
      const random = (n: number) => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
        return seed % n
      }
      const ds = spark.readStream
        .format("text")
        .load(src)
        .select(F.col("value").cast("int").plus(1).as("value"))
      const actions: Array<StreamAction> = []
      const expected: Array<{ value: number }> = []
      let running = true
      let next = 0
      for (let step = 0; step < 30; step++) {
        const r = random(10)
        if (r < 2 && running) {
          actions.push(StopStream)
          running = false
        } else if (r < 4 && !running) {
          actions.push(StartStream())
          running = true
        } else {
          const data = Array.from({ length: 1 + random(5) }, () => next++)
          for (const d of data) expected.push({ value: d + 1 })
          actions.push(AddTextFileData(data.join("\n"), src))
          if (running && random(2) === 0) actions.push(CheckAnswer(...expected))
        }
      }
      if (!running) actions.push(StartStream())
      actions.push(CheckAnswer(...expected))
      yield* testStream(ds, "append", actions)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("FileStreamSourceSuite (source internals)", () => {
  const source = (dir: string) =>
    fileStreamSourceFormat(TextFormat).create({
      options: { path: dir },
      schema: textSchema,
      metadataPath: path.join(dir, "_meta"),
      conf: new Map()
    })

  it.effect("FileStreamSource offset - read Spark 2.1.0 offset json format", () =>
    Effect.gen(function* () {
      const s = yield* source(yield* tempDir())
      // Spark's resource file-source-offset-version-2.1.0-json.txt
      assert.deepStrictEqual(yield* s.decodeOffset(JSON.parse('{"logOffset":345}')), { logOffset: 345 })
    })
  )

  it.effect("FileStreamSource offset - read Spark 2.1.0 offset long format", () =>
    Effect.gen(function* () {
      const s = yield* source(yield* tempDir())
      // Spark's resource file-source-offset-version-2.1.0-long.txt
      assert.deepStrictEqual(yield* s.decodeOffset(JSON.parse("345")), { logOffset: 345 })
    })
  )

  it.effect("FileStreamSourceLog - read Spark 2.1.0 log format", () =>
    Effect.gen(function* () {
      // Spark's resource folder file-source-log-version-2.1.0: 2.compact, 3 and 4
      const dir = yield* tempDir()
      const line = (p: string, t: number, b: number) => `{"path":"${p}","timestamp":${t},"batchId":${b}}`
      fs.writeFileSync(
        path.join(dir, "2.compact"),
        ["v1", line("/a/b/0", 1480730949000, 0), line("/a/b/1", 1480730950000, 1), line("/a/b/2", 1480730950000, 2)].join(
          "\n"
        )
      )
      fs.writeFileSync(path.join(dir, "3"), ["v1", line("/a/b/3", 1480730950000, 3)].join("\n"))
      fs.writeFileSync(path.join(dir, "4"), ["v1", line("/a/b/4", 1480730951000, 4)].join("\n"))
      const log = new CompactibleFileStreamLog(dir, defaultLogSettings("text"), sourceEntryCodec)
      assert.deepStrictEqual(yield* log.allEntries(), [
        { path: "/a/b/0", timestamp: 1480730949000, batchId: 0 },
        { path: "/a/b/1", timestamp: 1480730950000, batchId: 1 },
        { path: "/a/b/2", timestamp: 1480730950000, batchId: 2 },
        { path: "/a/b/3", timestamp: 1480730950000, batchId: 3 },
        { path: "/a/b/4", timestamp: 1480730951000, batchId: 4 }
      ])
    })
  )

  it.effect("get arbitrary batch from FileStreamSource", () =>
    Effect.gen(function* () {
      const src = yield* tempDir()
      const s = yield* fileStreamSourceFormat(TextFormat).create({
        options: { path: src },
        schema: textSchema,
        metadataPath: path.join(yield* tempDir(), "sources", "0"),
        conf: new Map([
          ["spark.sql.streaming.fileSource.log.compactInterval", "2"],
          // force deleting the old logs
          ["spark.sql.streaming.fileSource.log.cleanupDelay", "1"]
        ])
      })
      let end: unknown = yield* s.initialOffset()
      for (const k of [1, 2, 3]) {
        yield* put(src, `keep${k}`, `keep${k}`, clock++)
        end = yield* s.latestOffset(end, { _tag: "AllAvailable" })
        yield* s.commit(end)
      }
      assert.deepStrictEqual(end, { logOffset: 2 })
      const verify = (startId: number | undefined, endId: number, ...expected: ReadonlyArray<string>) =>
        Effect.gen(function* () {
          const rows = yield* s.getBatch(
            startId === undefined ? { logOffset: -1 } : { logOffset: startId },
            { logOffset: endId }
          )
          assert.deepStrictEqual(
            rows.map((r) => r[0]),
            [...expected]
          )
        })
      yield* verify(undefined, 2, "keep1", "keep2", "keep3")
      yield* verify(0, 1, "keep2")
      yield* verify(0, 2, "keep2", "keep3")
      yield* verify(1, 2, "keep3")
    })
  )

  // Spark also counts the folder listings (1 for the first four batches, then 2, then 3); the
  // listing is not observable here, the batches it yields are.
  it.effect("Caches and leverages unread files", () =>
    Effect.gen(function* () {
      const src = yield* tempDir()
      const meta = yield* tempDir()
      const s = yield* fileStreamSourceFormat(TextFormat).create({
        options: { path: `${src}/*/*`, latestFirst: "false", maxFilesPerTrigger: "10" },
        schema: textSchema,
        metadataPath: meta,
        conf: new Map()
      })
      const log = new CompactibleFileStreamLog(meta, defaultLogSettings("text"), sourceEntryCodec)
      // 41 files with sequential modification times
      const inputFiles: Array<string> = []
      for (let idx = 0; idx <= 40; idx++) inputFiles.push(yield* put(path.join(src, String(idx)), "text.x", String(idx), idx * 10))
      const limit = { _tag: "MaxFiles", maxFiles: 10 } as const
      const verifyBatch = (offset: unknown, expectedBatchId: number) =>
        Effect.gen(function* () {
          assert.deepStrictEqual(offset, { logOffset: expectedBatchId })
          const files = (yield* log.get(expectedBatchId)) ?? []
          assert.isTrue(files.every((f) => f.batchId === expectedBatchId))
          assert.deepStrictEqual(
            files.map((f) => fromUrlPath(f.path)),
            inputFiles.slice(expectedBatchId * 10, expectedBatchId * 10 + 10)
          )
        })
      // 4 batches of 10 for the first 40 files
      for (let batchId = 0; batchId <= 3; batchId++) {
        yield* verifyBatch(yield* s.latestOffset({ logOffset: -1 }, limit), batchId)
      }
      // the one file left over is fewer than discardCachedInputRatio of the limit: it is listed
      // again, and makes batch 4
      yield* verifyBatch(yield* s.latestOffset({ logOffset: -1 }, limit), 4)
      // nothing new: the offset of the previous batch
      assert.deepStrictEqual(yield* s.latestOffset({ logOffset: -1 }, limit), { logOffset: 4 })
    })
  )

  it("SeenFilesMap", () => {
    const map = new SeenFilesMap(10, false)
    map.add("a", 5)
    assert.strictEqual(map.size, 1)
    map.purge()
    assert.strictEqual(map.size, 1)
    // a new entry, and purge is a no-op: the gap is exactly 10 ms
    map.add("b", 15)
    assert.strictEqual(map.size, 2)
    map.purge()
    assert.strictEqual(map.size, 2)
    // more than 10 ms after the first entry: purge removes it
    map.add("c", 16)
    assert.strictEqual(map.size, 3)
    map.purge()
    assert.strictEqual(map.size, 2)
    // overriding an entry does not change the size
    map.add("c", 25)
    assert.strictEqual(map.size, 2)
    assert.isFalse(map.isNewFile("c", 20)) // seen before
    assert.isFalse(map.isNewFile("d", 5)) // too old
    assert.isTrue(map.isNewFile("e", 20)) // never seen and not too old
  })

  it("SeenFilesMap with fileNameOnly = true", () => {
    const map = new SeenFilesMap(10, true)
    map.add("file:///a/b/c/d", 5)
    map.add("file:///a/b/c/e", 5)
    assert.strictEqual(map.size, 2)
    assert.isFalse(map.isNewFile("d", 5))
    assert.isFalse(map.isNewFile("file:///d", 5))
    assert.isFalse(map.isNewFile("file:///x/d", 5))
    assert.isFalse(map.isNewFile("file:///x/y/d", 5))
    map.add("s3:///bucket/d", 5)
    map.add("s3n:///bucket/d", 5)
    map.add("s3a:///bucket/d", 5)
    assert.strictEqual(map.size, 2)
  })

  it("SeenFilesMap should only consider a file old if it is earlier than last purge time", () => {
    const map = new SeenFilesMap(10, false)
    map.add("a", 20)
    assert.strictEqual(map.size, 1)
    // the purge time is still 0: b is new
    assert.isTrue(map.isNewFile("b", 9))
    assert.isTrue(map.isNewFile("b", 10))
    // after a purge the threshold is 10: older files are not new
    map.purge()
    assert.isFalse(map.isNewFile("b", 9))
    assert.isTrue(map.isNewFile("b", 10))
  })
})
