/**
 * Spark's `DataStreamReaderWriterSuite` (sql/core/src/test/scala/org/apache/spark/sql/streaming/
 * test/DataStreamReaderWriterSuite.scala): options reach sources and sinks (case-insensitive,
 * later wins), partition columns are normalized, `path` may not be given twice, query names are
 * unique, source metadata lives in `<checkpoint>/sources/<i>`, and where checkpoints go.
 *
 * Spark's dummy `DefaultSource` (a source and a sink that record what they get in `LastOptions`)
 * is registered here under Spark's name `org.apache.spark.sql.streaming.test`.
 */
import { mkdir, mkdtemp, readdir, realpath, rm, stat } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as T from "../../../core/DataType.ts"
import type { Options } from "../../../core/Formats.ts"
import { registerSinkFormat, registerSourceFormat } from "../../../core/Streaming.ts"
import { MemoryStream, Session, Trigger } from "../../../mod.ts"
import type { ForeachWriter } from "../../../structured/api/DataStreamWriter.ts"

const TEST_FORMAT = "org.apache.spark.sql.streaming.test"
const fakeSchema = T.struct([T.field("a", T.IntegerType)])

/** Spark's `LastOptions`: what the dummy source and sink were last given. */
const LastOptions = {
  parameters: undefined as Options | undefined,
  sinkParameters: undefined as Options | undefined,
  schema: undefined as T.StructType | undefined | null,
  partitionColumns: undefined as ReadonlyArray<string> | undefined,
  createSourceCalls: [] as Array<{ readonly metadataPath: string; readonly options: Options }>,
  clear() {
    this.parameters = undefined
    this.sinkParameters = undefined
    this.schema = null
    this.partitionColumns = undefined
    this.createSourceCalls = []
  }
}

beforeAll(() => {
  registerSourceFormat({
    name: TEST_FORMAT,
    schema: (user, options) => {
      LastOptions.parameters = options
      LastOptions.schema = user
      return fakeSchema
    },
    create: (ctx) =>
      Effect.sync(() => {
        LastOptions.parameters = ctx.options
        LastOptions.createSourceCalls.push({ metadataPath: ctx.metadataPath, options: ctx.options })
        return {
          description: "dummySource",
          schema: fakeSchema,
          initialOffset: () => Effect.succeed(0),
          defaultReadLimit: () => ({ _tag: "AllAvailable" }) as never,
          latestOffset: (start) => Effect.succeed(start),
          getBatch: () => Effect.succeed([]),
          commit: () => Effect.void,
          decodeOffset: (json) => Effect.succeed(json),
          stop: () => Effect.void
        }
      })
  })
  registerSinkFormat({
    name: TEST_FORMAT,
    supportedOutputModes: ["append", "update", "complete"],
    create: (ctx) =>
      Effect.sync(() => {
        LastOptions.sinkParameters = ctx.options
        LastOptions.partitionColumns = ctx.partitionColumns
        return { description: "dummySink", addBatch: () => Effect.void, stop: () => Effect.void }
      })
  })
})

const tempDir = (name = "streaming.metadata") =>
  Effect.promise(async () => realpath(await mkdtemp(join(tmpdir(), `tributary-${name}-`))))
const exists = (path: string) =>
  Effect.promise(() =>
    stat(path).then(
      () => true,
      () => false
    )
  )
const list = (dir: string) => Effect.promise(() => readdir(dir))
const removeDir = (dir: string) => Effect.promise(() => rm(dir, { recursive: true, force: true }))

/** The value of option `key`, case-insensitively, and how many keys spell it. */
const opt = (options: Options | undefined, key: string) => {
  const hits = Object.entries(options ?? {}).filter(([k]) => k.toLowerCase() === key.toLowerCase())
  return hits.length === 1 ? hits[0][1] : hits.length === 0 ? undefined : `ambiguous: ${JSON.stringify(hits)}`
}

describe("DataStreamReaderWriterSuite", () => {
  it.effect("options", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const newMetadataDir = yield* tempDir()
      const map = { opt3: "3" }
      const df = spark.readStream
        .format(TEST_FORMAT)
        .option("opt1", "1")
        .options({ opt2: "2" })
        .options(map)
        .load()
      assert.strictEqual(opt(LastOptions.parameters, "opt1"), "1")
      assert.strictEqual(opt(LastOptions.parameters, "opt2"), "2")
      assert.strictEqual(opt(LastOptions.parameters, "opt3"), "3")
      LastOptions.clear()
      const q = yield* df.writeStream
        .format(TEST_FORMAT)
        .option("opt1", "5")
        .options({ opt2: "4" })
        .options(map)
        .option("checkpointLocation", newMetadataDir)
        .start()
      yield* q.stop()
      assert.strictEqual(opt(LastOptions.sinkParameters, "opt1"), "5")
      assert.strictEqual(opt(LastOptions.sinkParameters, "opt2"), "4")
      assert.strictEqual(opt(LastOptions.sinkParameters, "opt3"), "3")
      assert.isDefined(opt(LastOptions.sinkParameters, "checkpointLocation"))
      yield* removeDir(newMetadataDir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-32832: later option should override earlier options for load()", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      spark.readStream
        .format(TEST_FORMAT)
        .option("paTh", "1")
        .option("PATH", "2")
        .option("Path", "3")
        .option("patH", "4")
        .option("path", "5")
        .load()
      assert.strictEqual(opt(LastOptions.parameters, "path"), "5")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-32832: later option should override earlier options for start()", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const newMetadataDir = yield* tempDir()
      const ds = spark.readStream.format(TEST_FORMAT).load()
      assert.deepStrictEqual(LastOptions.parameters, {})
      const q = yield* ds.writeStream
        .format(TEST_FORMAT)
        .option("checkpointLocation", newMetadataDir)
        .option("paTh", "1")
        .option("PATH", "2")
        .option("Path", "3")
        .option("patH", "4")
        .option("path", "5")
        .start()
      yield* q.stop()
      assert.strictEqual(opt(LastOptions.sinkParameters, "path"), "5")
      yield* removeDir(newMetadataDir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("partitioning", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dirs: Array<string> = []
      const newMetadataDir = Effect.tap(tempDir(), (d) => Effect.sync(() => dirs.push(d)))
      const df = spark.readStream.format(TEST_FORMAT).load()
      const q1 = yield* df.writeStream.format(TEST_FORMAT).option("checkpointLocation", yield* newMetadataDir).start()
      yield* q1.stop()
      assert.deepStrictEqual(LastOptions.partitionColumns, [])
      const q2 = yield* df.writeStream
        .format(TEST_FORMAT)
        .option("checkpointLocation", yield* newMetadataDir)
        .partitionBy("a")
        .start()
      yield* q2.stop()
      assert.deepStrictEqual(LastOptions.partitionColumns, ["a"])
      // spark.sql.caseSensitive is false by default
      const q3 = yield* df.writeStream
        .format(TEST_FORMAT)
        .option("checkpointLocation", yield* newMetadataDir)
        .partitionBy("A")
        .start()
      yield* q3.stop()
      assert.deepStrictEqual(LastOptions.partitionColumns, ["a"])
      const e = yield* df.writeStream
        .format(TEST_FORMAT)
        .option("checkpointLocation", yield* newMetadataDir)
        .partitionBy("b")
        .start()
        .pipe(Effect.flip)
      assert.strictEqual(e._tag, "AnalysisError")
      assert.strictEqual(e.message, "Partition column b not found in existing columns (a)")
      for (const d of dirs) yield* removeDir(d)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("stream paths", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const newMetadataDir = yield* tempDir()
      const df = spark.readStream.format(TEST_FORMAT).option("checkpointLocation", newMetadataDir).load("/test")
      assert.strictEqual(opt(LastOptions.parameters, "path"), "/test")
      LastOptions.clear()
      const q = yield* df.writeStream.format(TEST_FORMAT).option("checkpointLocation", newMetadataDir).start("/test")
      yield* q.stop()
      assert.strictEqual(opt(LastOptions.sinkParameters, "path"), "/test")
      yield* removeDir(newMetadataDir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("test different data types for options", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const newMetadataDir = yield* tempDir()
      const df = spark.readStream
        .format(TEST_FORMAT)
        .option("intOpt", 56)
        .option("boolOpt", false)
        .option("doubleOpt", 6.7)
        .load("/test")
      assert.strictEqual(opt(LastOptions.parameters, "intOpt"), "56")
      assert.strictEqual(opt(LastOptions.parameters, "boolOpt"), "false")
      assert.strictEqual(opt(LastOptions.parameters, "doubleOpt"), "6.7")
      LastOptions.clear()
      const q = yield* df.writeStream
        .format(TEST_FORMAT)
        .option("intOpt", 56)
        .option("boolOpt", false)
        .option("doubleOpt", 6.7)
        .option("checkpointLocation", newMetadataDir)
        .start("/test")
      yield* q.stop()
      assert.strictEqual(opt(LastOptions.sinkParameters, "intOpt"), "56")
      assert.strictEqual(opt(LastOptions.sinkParameters, "boolOpt"), "false")
      assert.strictEqual(opt(LastOptions.sinkParameters, "doubleOpt"), "6.7")
      yield* removeDir(newMetadataDir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("unique query names", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dirs: Array<string> = []
      const start = (name?: string) =>
        Effect.gen(function* () {
          const dir = yield* tempDir()
          dirs.push(dir)
          const w = spark.readStream
            .format(TEST_FORMAT)
            .load("/test")
            .writeStream.format(TEST_FORMAT)
            .option("checkpointLocation", dir)
          return yield* (name === undefined ? w : w.queryName(name)).start()
        })
      const activeStreamNames = Effect.gen(function* () {
        const streams = yield* spark.streams.active()
        const names = new Set(streams.map((q) => q.name))
        assert.strictEqual(streams.length, names.size, "names of active queries are not unique")
        return names
      })
      const q1 = yield* start("name")
      // Should not be able to start another query with the same name
      const e = yield* start("name").pipe(Effect.flip)
      assert.strictEqual(
        e.message,
        "Cannot start query with name name as a query with that name is already active in this SparkSession"
      )
      assert.deepStrictEqual(yield* activeStreamNames, new Set(["name"]))
      // Should be able to start queries with other names
      yield* start("another-name")
      assert.deepStrictEqual(yield* activeStreamNames, new Set(["name", "another-name"]))
      // Should be able to start queries without a name (Spark's name is then null)
      const q4 = yield* start()
      assert.isNull(q4.name)
      assert.isTrue((yield* activeStreamNames).has(q4.name))
      // Should be able to start query with that name after stopping the previous query
      yield* q1.stop()
      yield* start("name")
      assert.isTrue((yield* activeStreamNames).has("name"))
      for (const q of yield* spark.streams.active()) yield* q.stop()
      for (const d of dirs) yield* removeDir(d)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("trigger", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.readStream.format(TEST_FORMAT).load("/test")
      const dir1 = yield* tempDir()
      const q1 = yield* df.writeStream
        .format(TEST_FORMAT)
        .option("checkpointLocation", dir1)
        .trigger(Trigger.ProcessingTime("10 seconds"))
        .start()
      yield* q1.stop()
      assert.deepStrictEqual(Trigger.ProcessingTime("10 seconds"), Trigger.ProcessingTime(10000))
      const dir2 = yield* tempDir()
      const q2 = yield* df.writeStream
        .format(TEST_FORMAT)
        .option("checkpointLocation", dir2)
        .trigger(Trigger.ProcessingTime("100 seconds"))
        .start()
      yield* q2.stop()
      assert.deepStrictEqual(Trigger.ProcessingTime("100 seconds"), Trigger.ProcessingTime(100000))
      yield* removeDir(dir1)
      yield* removeDir(dir2)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("source metadataPath", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      LastOptions.clear()
      const checkpointLocation = yield* tempDir()
      const df1 = spark.readStream.format(TEST_FORMAT).load()
      const df2 = spark.readStream.format(TEST_FORMAT).load()
      const q = yield* df1
        .union(df2)
        .writeStream.format(TEST_FORMAT)
        .option("checkpointLocation", checkpointLocation)
        .trigger(Trigger.ProcessingTime("10 seconds"))
        .start()
      yield* q.processAllAvailable()
      yield* q.stop()
      assert.deepStrictEqual(LastOptions.createSourceCalls, [
        { metadataPath: `${checkpointLocation}/sources/0`, options: {} },
        { metadataPath: `${checkpointLocation}/sources/1`, options: {} }
      ])
      yield* removeDir(checkpointLocation)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("check foreach() catches null writers", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.readStream.format(TEST_FORMAT).load()
      // The builder never throws: start() fails instead of Spark's foreach(null).
      const e = yield* df.writeStream.foreach(null as never).start().pipe(Effect.flip)
      for (const s of ["foreach", "null"]) assert.include(e.message.toLowerCase(), s)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("check foreach() does not support partitioning", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.readStream.format(TEST_FORMAT).load()
      const foreachWriter: ForeachWriter<unknown> = {
        open: () => false,
        process: () => {},
        close: () => {}
      }
      const w = df.writeStream.partitionBy("value")
      const e = yield* w.foreach(foreachWriter).start().pipe(Effect.flip)
      assert.strictEqual(e._tag, "AnalysisError")
      for (const s of ["foreach", "partitioning"]) assert.include(e.message.toLowerCase(), s)
      assert.strictEqual(e.message, "'foreach' does not support partitioning.")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("prevent all column partitioning", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("all-columns")
      const input = yield* MemoryStream.make(Schema.Struct({ id: Schema.Int }))
      const e = yield* input
        .toDF()
        .writeStream.outputMode("append")
        .partitionBy("id")
        .format("parquet")
        .option("checkpointLocation", join(dir, "chk"))
        .start(join(dir, "out"))
        .pipe(Effect.flip)
      assert.strictEqual(e._tag, "AnalysisError")
      assert.strictEqual(e.message, "Cannot use all columns for partition columns")
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  /** Spark's `testMemorySinkCheckpointRecovery`, without its `DROP TABLE` (no SQL DDL here). */
  const testMemorySinkCheckpointRecovery = (chkLoc: string, provideInWriter: boolean) =>
    Effect.gen(function* () {
      const spark = yield* Session
      const ms = yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))
      const df = ms.toDF().toDF("a")
      const tableName = "test"
      const startQuery = () => {
        const writer = df.groupBy("a").count().writeStream.format("memory").queryName(tableName).outputMode("complete")
        return (provideInWriter ? writer.option("checkpointLocation", chkLoc) : writer).start()
      }
      // no exception here
      const q = yield* startQuery()
      yield* ms.addData([{ value: 0 }, { value: 1 }])
      yield* q.processAllAvailable()
      yield* q.stop()
      assert.sameDeepMembers([...(yield* spark.table(tableName).collect())], [
        { a: 0, count: 1 },
        { a: 1, count: 1 }
      ])
      const q2 = yield* startQuery()
      yield* ms.addData([{ value: 0 }])
      yield* q2.processAllAvailable()
      assert.sameDeepMembers([...(yield* spark.table(tableName).collect())], [
        { a: 0, count: 2 },
        { a: 1, count: 1 }
      ])
      yield* q2.stop()
    })

  it.effect("MemorySink can recover from a checkpoint in Complete Mode", () =>
    Effect.gen(function* () {
      const checkpointLoc = yield* tempDir()
      yield* Effect.promise(() => mkdir(join(checkpointLoc, "offsets"), { recursive: true }))
      assert.isTrue(yield* exists(join(checkpointLoc, "offsets")))
      yield* testMemorySinkCheckpointRecovery(checkpointLoc, true)
      yield* removeDir(checkpointLoc)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-18927: MemorySink can recover from a checkpoint provided in conf in Complete Mode", () =>
    Effect.gen(function* () {
      const checkpointLoc = yield* tempDir()
      yield* Effect.promise(() => mkdir(join(checkpointLoc, "offsets"), { recursive: true }))
      yield* testMemorySinkCheckpointRecovery(checkpointLoc, false).pipe(
        Effect.provide(Session.layer({ conf: { "spark.sql.streaming.checkpointLocation": checkpointLoc } }))
      )
      // the query's checkpoint is `<conf dir>/<query name>`
      assert.isTrue(yield* exists(join(checkpointLoc, "test", "offsets", "1")))
      yield* removeDir(checkpointLoc)
    })
  )

  it.effect("user specified checkpointLocation precedes SQLConf", () =>
    Effect.gen(function* () {
      const checkpointPath = yield* tempDir("conf")
      const base = yield* tempDir("user")
      const userCheckpointPath = join(base, "chk")
      assert.isFalse(yield* exists(userCheckpointPath))
      yield* Effect.gen(function* () {
        const ds = (yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))).toDF()
        const q = yield* ds.writeStream
          .format("memory")
          .queryName("test_query")
          .option("checkpointLocation", userCheckpointPath)
          .start()
        yield* q.stop()
      }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.checkpointLocation": checkpointPath } })))
      assert.deepStrictEqual(yield* list(checkpointPath), [], "SQLConf path is used even if user specified checkpointLoc")
      assert.isTrue(yield* exists(userCheckpointPath), "The user specified checkpointLoc is not created")
      yield* removeDir(checkpointPath)
      yield* removeDir(base)
    })
  )

  it.effect("use SQLConf checkpoint dir when checkpointLocation is not specified", () =>
    Effect.gen(function* () {
      const checkpointPath = yield* tempDir("conf")
      yield* Effect.gen(function* () {
        const ds = (yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))).toDF()
        const q = yield* ds.writeStream.format("memory").queryName("test_query").start()
        yield* q.stop()
      }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.checkpointLocation": checkpointPath } })))
      // Should use query name to create a folder in `checkpointPath`
      assert.isTrue(yield* exists(join(checkpointPath, "test_query")))
      assert.deepStrictEqual(yield* list(checkpointPath), ["test_query"])
      yield* removeDir(checkpointPath)
    })
  )

  it.effect("use SQLConf checkpoint dir when checkpointLocation is not specified without query name", () =>
    Effect.gen(function* () {
      const checkpointPath = yield* tempDir("conf")
      yield* Effect.gen(function* () {
        const ds = (yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))).toDF()
        const q = yield* ds.writeStream.format("console").start()
        yield* q.stop()
      }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.checkpointLocation": checkpointPath } })))
      // Should create a random folder in `checkpointPath`
      assert.strictEqual((yield* list(checkpointPath)).length, 1)
      yield* removeDir(checkpointPath)
    })
  )

  it.effect(
    "configured checkpoint dir should not be deleted if a query is stopped without errors and force temp checkpoint deletion enabled",
    () =>
      Effect.gen(function* () {
        const checkpointPath = yield* tempDir("conf")
        yield* Effect.gen(function* () {
          const ds = (yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))).toDF()
          const query = yield* ds.writeStream.format("console").start()
          assert.isTrue(yield* exists(checkpointPath))
          yield* query.stop()
          assert.isTrue(yield* exists(checkpointPath))
          assert.strictEqual((yield* list(checkpointPath)).length, 1)
        }).pipe(
          Effect.provide(
            Session.layer({
              conf: {
                "spark.sql.streaming.checkpointLocation": checkpointPath,
                "spark.sql.streaming.forceDeleteTempCheckpointLocation": true
              }
            })
          )
        )
        yield* removeDir(checkpointPath)
      })
  )

  it.effect("SPARK-20431: Specify a schema by using a DDL-formatted string", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      spark.readStream.format(TEST_FORMAT).schema("aa INT").load()
      assert.deepStrictEqual(LastOptions.schema, T.struct([T.field("aa", T.IntegerType)]))
      LastOptions.clear()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-32516: 'path' cannot coexist with load()'s path parameter", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const verifyLoadFails = (df: { readonly buildError?: { readonly message: string } | undefined }) => {
        assert.isDefined(df.buildError)
        assert.include(df.buildError!.message, "Either remove the path option, or call load() without the parameter")
      }
      verifyLoadFails(spark.readStream.option("path", "tmp1").parquet("tmp2"))
      verifyLoadFails(spark.readStream.option("path", "tmp1").parquet(""))
      verifyLoadFails(spark.readStream.option("path", "tmp1").format("parquet").load("tmp2"))
      verifyLoadFails(spark.readStream.option("path", "tmp1").format("parquet").load(""))
      // the error surfaces as an AnalysisError from start()
      const e = yield* spark.readStream
        .option("path", "tmp1")
        .format("parquet")
        .load("tmp2")
        .writeStream.format("noop")
        .start()
        .pipe(Effect.flip)
      assert.strictEqual(e._tag, "AnalysisError")
      assert.strictEqual(
        e.message,
        "There is a 'path' option set and load() is called with a path parameter. Either remove the path option, or call load() without the parameter. To ignore this check, set 'spark.sql.legacy.pathOptionBehavior.enabled' to 'true'."
      )
      // SPARK-32516: legacy behavior overwrites the path option.
      yield* Effect.gen(function* () {
        const legacy = yield* Session
        legacy.readStream.format(TEST_FORMAT).option("path", "tmp1").load("tmp2")
        assert.strictEqual(opt(LastOptions.parameters, "path"), "tmp2")
      }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.legacy.pathOptionBehavior.enabled": true } })))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-32516: 'path' cannot coexist with start()'s path parameter", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.readStream.format(TEST_FORMAT).load("tmp1")
      for (const path of ["tmp3", ""]) {
        const e = yield* df.writeStream.format(TEST_FORMAT).option("path", "tmp2").start(path).pipe(Effect.flip)
        assert.strictEqual(e._tag, "AnalysisError")
        assert.include(e.message, "Either remove the path option, or call start() without the parameter")
      }
      assert.deepStrictEqual(yield* spark.streams.active(), [])
      // SPARK-32516: legacy behavior overwrites the path option.
      const checkpointPath = yield* tempDir()
      yield* Effect.gen(function* () {
        const legacy = yield* Session
        const q = yield* legacy.readStream
          .format(TEST_FORMAT)
          .load("tmp1")
          .writeStream.format(TEST_FORMAT)
          .option("path", "tmp4")
          .start("tmp5")
        yield* q.stop()
        assert.strictEqual(opt(LastOptions.sinkParameters, "path"), "tmp5")
      }).pipe(
        Effect.provide(
          Session.layer({
            conf: {
              "spark.sql.legacy.pathOptionBehavior.enabled": true,
              "spark.sql.streaming.checkpointLocation": checkpointPath
            }
          })
        )
      )
      yield* removeDir(checkpointPath)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-32853: consecutive load/start calls should be allowed", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dfr = spark.readStream.format(TEST_FORMAT)
      let df = dfr.load("1")
      df = dfr.load("2")
      const checkpointPath = yield* tempDir()
      const dfw = df.writeStream.option("checkpointLocation", checkpointPath).format(TEST_FORMAT)
      let query = yield* dfw.start("1")
      yield* query.stop()
      query = yield* dfw.start("2")
      yield* query.stop()
      assert.strictEqual(opt(LastOptions.sinkParameters, "path"), "2")
      yield* removeDir(checkpointPath)
    }).pipe(Effect.provide(Session.layer()))
  )
})
