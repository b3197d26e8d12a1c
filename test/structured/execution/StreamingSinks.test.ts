/**
 * Sinks end to end through `writeStream.start()`: the memory sink (Spark's `MemorySinkSuite`
 * "registering as a table" cases and its errors), the console sink through Effect's `Console`,
 * `foreachBatch`, `foreach`, `noop`, and options that `start()` refuses.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { TestConsole } from "effect/testing"
import { ConnectorError, F, MemoryStream, Session, StreamingQueryError, Trigger } from "../../../mod.ts"

const Value = Schema.Struct({ value: Schema.Int })
const v = (...xs: ReadonlyArray<number>) => xs.map((value) => ({ value }))

const DASHES = "-------------------------------------------"

describe("the memory sink", () => {
  it.effect("registering as a table in Append output mode", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Value)
      const query = yield* input.toDF().writeStream.format("memory").outputMode("append").queryName("memStream").start()
      yield* input.addData(v(1, 2, 3))
      yield* query.processAllAvailable()
      assert.deepStrictEqual(yield* spark.table("memStream").collect(), v(1, 2, 3))
      yield* input.addData(v(4, 5, 6))
      yield* query.processAllAvailable()
      assert.deepStrictEqual(yield* spark.table("memStream").collect(), v(1, 2, 3, 4, 5, 6))
      yield* query.stop()
      // the table outlives the query
      assert.deepStrictEqual(yield* spark.table("memStream").collect(), v(1, 2, 3, 4, 5, 6))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("registering as a table in Complete output mode", () =>
    Effect.gen(function* () {
      // Only the first batch: later batches of a complete-mode aggregation need the streaming
      // aggregation's state, which this suite does not cover.
      const spark = yield* Session
      const input = yield* MemoryStream.make(Value)
      const query = yield* input
        .toDF()
        .groupBy("value")
        .count()
        .writeStream.format("memory")
        .outputMode("complete")
        .queryName("memStream")
        .start()
      yield* input.addData(v(1, 2, 3, 1))
      yield* query.processAllAvailable()
      assert.deepStrictEqual(yield* spark.table("memStream").orderBy("value").collect(), [
        { value: 1, count: 2 },
        { value: 2, count: 1 },
        { value: 3, count: 1 }
      ])
      yield* query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("registering as a table in Update output mode", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Value)
      const query = yield* input.toDF().writeStream.format("memory").outputMode("update").queryName("memStream").start()
      yield* input.addData(v(1, 2, 3))
      yield* query.processAllAvailable()
      assert.deepStrictEqual(yield* spark.table("memStream").collect(), v(1, 2, 3))
      yield* input.addData(v(4, 5, 6))
      yield* query.processAllAvailable()
      assert.deepStrictEqual(yield* spark.table("memStream").collect(), v(1, 2, 3, 4, 5, 6))
      yield* query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("error when no name is specified; memory does not support partitioning", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Value)
      const e1 = yield* input.toDF().writeStream.format("memory").start().pipe(Effect.flip)
      assert.strictEqual(e1._tag, "AnalysisError")
      assert.strictEqual(e1.message, "queryName must be specified for memory sink.")
      const e2 = yield* input
        .toDF()
        .writeStream.format("memory")
        .queryName("p")
        .partitionBy("value")
        .start()
        .pipe(Effect.flip)
      assert.strictEqual(e2.message, "'memory' does not support partitioning.")
      assert.deepStrictEqual(yield* spark.streams.active(), [])
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("the console sink", () => {
  it.effect("prints every batch under a Batch: N header through Console", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const query = yield* input.toDF().writeStream.format("console").start()
      yield* input.addData(v(1, 2))
      yield* query.processAllAvailable()
      yield* input.addData(v(3))
      yield* query.processAllAvailable()
      yield* query.stop()
      assert.deepStrictEqual(yield* TestConsole.logLines, [
        `${DASHES}\nBatch: 0\n${DASHES}\n+-----+\n|value|\n+-----+\n|    1|\n|    2|\n+-----+\n`,
        `${DASHES}\nBatch: 1\n${DASHES}\n+-----+\n|value|\n+-----+\n|    3|\n+-----+\n`
      ])
      const p = yield* query.lastProgress()
      assert.strictEqual(p?.sink.description, "ConsoleWriter[numRows=20, truncate=true]")
    }).pipe(Effect.provide(Session.layer()), Effect.provide(TestConsole.layer))
  )

  it.effect("numRows and truncate; complete mode prints the whole result", () =>
    Effect.gen(function* () {
      const Word = Schema.Struct({ word: Schema.String })
      const input = yield* MemoryStream.make(Word)
      const query = yield* input
        .toDF()
        .groupBy("word")
        .count()
        .writeStream.format("console")
        .outputMode("complete")
        .option("numRows", 1)
        .option("truncate", false)
        .start()
      const long = "a".repeat(25)
      yield* input.addData([{ word: long }])
      yield* query.processAllAvailable()
      yield* input.addData([{ word: long }, { word: "b" }])
      yield* query.processAllAvailable()
      yield* query.stop()
      const lines = (yield* TestConsole.logLines) as ReadonlyArray<string>
      const bar = `+${"-".repeat(25)}+-----+`
      assert.strictEqual(lines.length, 2)
      assert.strictEqual(
        lines[0],
        `${DASHES}\nBatch: 0\n${DASHES}\n${bar}\n|word${" ".repeat(21)}|count|\n${bar}\n|${long}|1    |\n${bar}\n`
      )
      assert.isTrue(lines[1].startsWith(`${DASHES}\nBatch: 1\n${DASHES}\n`))
      assert.isTrue(lines[1].endsWith("only showing top 1 row\n"))
    }).pipe(Effect.provide(Session.layer()), Effect.provide(TestConsole.layer))
  )

  it.effect("invalid options fail start()", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const e1 = yield* input.toDF().writeStream.format("console").option("numRows", "abc").start().pipe(Effect.flip)
      assert.strictEqual(e1._tag, "AnalysisError")
      assert.strictEqual(e1.message, 'For input string: "abc"')
      const e2 = yield* input.toDF().writeStream.format("console").option("truncate", "maybe").start().pipe(Effect.flip)
      assert.strictEqual(e2.message, "maybe is not a boolean string.")
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("foreachBatch", () => {
  it.effect("the function may return an Effect, a Promise or nothing; it gets batch DataFrames and ids", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const seen: Array<readonly [string, number, ReadonlyArray<unknown>, boolean]> = []
      const df = input.toDF().withColumn("double", F.col("value").multiply(2))
      const viaEffect = yield* df.writeStream
        .foreachBatch((batch, id) =>
          Effect.map(batch.collect(), (rows) => {
            seen.push(["effect", id, rows, batch.isStreaming])
          })
        )
        .start()
      const viaPromise = yield* df.writeStream
        .foreachBatch(async (batch, id) => {
          const rows = await Effect.runPromise(batch.collect())
          seen.push(["promise", id, rows, batch.isStreaming])
        })
        .start()
      const plain = yield* df.writeStream
        .foreachBatch((batch, id) => {
          seen.push(["plain", id, [], batch.isStreaming])
        })
        .start()
      for (const xs of [[1], [2, 3]]) {
        yield* input.addData(v(...xs))
        yield* viaEffect.processAllAvailable()
        yield* viaPromise.processAllAvailable()
        yield* plain.processAllAvailable()
      }
      const of = (kind: string) =>
        seen.filter((s) => s[0] === kind).map(([, id, rows, streaming]) => [id, rows, streaming])
      assert.deepStrictEqual(of("effect"), [
        [0, [{ value: 1, double: 2 }], false],
        [
          1,
          [
            { value: 2, double: 4 },
            { value: 3, double: 6 }
          ],
          false
        ]
      ])
      assert.deepStrictEqual(of("promise"), of("effect"))
      assert.deepStrictEqual(
        of("plain").map(([id]) => id),
        [0, 1]
      )
      assert.strictEqual((yield* viaEffect.lastProgress())?.sink.description, "ForeachBatchSink")
      yield* viaEffect.stop()
      yield* viaPromise.stop()
      yield* plain.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a function that fails, rejects or throws fails the query with the batch id", () =>
    Effect.gen(function* () {
      const failures = [
        () => Effect.fail(new Error("effect failed")),
        () => Promise.reject(new Error("promise rejected")),
        () => {
          throw new Error("thrown")
        }
      ]
      const messages = ["effect failed", "promise rejected", "thrown"]
      for (let i = 0; i < failures.length; i++) {
        const input = yield* MemoryStream.make(Value)
        const fail = failures[i]
        const query = yield* input
          .toDF()
          .writeStream.foreachBatch((_batch, id) => (id === 1 ? fail() : undefined))
          .start()
        yield* input.addData(v(1))
        yield* query.processAllAvailable()
        yield* input.addData(v(2))
        const error = yield* query.awaitTermination().pipe(Effect.flip)
        assert.instanceOf(error, StreamingQueryError)
        assert.strictEqual(error.batchId, 1)
        assert.include(error.message, messages[i])
        assert.instanceOf(error.cause, ConnectorError)
        if (error.cause instanceof ConnectorError) {
          assert.strictEqual(error.cause.connector, "foreachBatch")
          assert.strictEqual(error.cause.domain, "user")
        }
      }
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.forceDeleteTempCheckpointLocation": true } })))
  )
})

describe("foreach", () => {
  it.effect("open, process per row, close for every batch", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const calls: Array<string> = []
      const query = yield* input
        .toDF()
        .writeStream.foreach({
          open: (partitionId, epochId) => {
            calls.push(`open(${partitionId}, ${epochId})`)
            return true
          },
          process: (row) => {
            calls.push(`process(${row.value})`)
          },
          close: (error) => {
            calls.push(`close(${error === null ? "null" : String(error)})`)
          }
        })
        .start()
      yield* input.addData(v(1, 2))
      yield* query.processAllAvailable()
      yield* input.addData(v(3))
      yield* query.processAllAvailable()
      yield* query.stop()
      assert.deepStrictEqual(calls, [
        "open(0, 0)",
        "process(1)",
        "process(2)",
        "close(null)",
        "open(0, 1)",
        "process(3)",
        "close(null)"
      ])
      assert.strictEqual((yield* query.lastProgress())?.sink.description, "ForeachWriterSink")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("open returning false skips the rows but still closes; a failing process closes with the error", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const calls: Array<string> = []
      const query = yield* input
        .toDF()
        .writeStream.foreach({
          open: async (_p, epochId) => epochId !== 0,
          process: (row) => {
            if (row.value === 0) throw new Error("cannot write 0")
            calls.push(`process(${row.value})`)
          },
          close: (error) => {
            calls.push(`close(${error instanceof Error ? error.message : String(error)})`)
          }
        })
        .start()
      yield* input.addData(v(1))
      yield* query.processAllAvailable()
      yield* input.addData(v(2, 0, 3))
      const error = yield* query.awaitTermination().pipe(Effect.flip)
      assert.deepStrictEqual(calls, ["close(null)", "process(2)", "close(cannot write 0)"])
      assert.strictEqual(error.batchId, 1)
      assert.include(error.message, "cannot write 0")
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.forceDeleteTempCheckpointLocation": true } })))
  )
})

describe("noop and invalid sinks", () => {
  it.effect("noop runs the query and keeps nothing", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      let evaluated = 0
      const query = yield* input
        .toDF()
        .map((r) => {
          evaluated++
          return r
        }, Value)
        .writeStream.format("noop")
        .start()
      yield* input.addData(v(1, 2, 3))
      yield* query.processAllAvailable()
      assert.strictEqual(evaluated, 3)
      const p = yield* query.lastProgress()
      assert.strictEqual(p?.numInputRows, 3)
      assert.strictEqual(p?.sink.numOutputRows, 3)
      yield* query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect(
    "start() refuses an unknown sink, an unknown output mode, a mode the query cannot use, and bad triggers",
    () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const input = yield* MemoryStream.make(Value)
        const df = input.toDF()
        const unknown = yield* df.writeStream.format("nowhere").start().pipe(Effect.flip)
        assert.strictEqual(unknown._tag, "AnalysisError")
        assert.isTrue(unknown.message.startsWith("[DATA_SOURCE_NOT_FOUND] Failed to find the data source: nowhere."))
        // @ts-expect-error not an output mode: the types reject it, and so does the run time
        const mode = yield* df.writeStream.format("noop").outputMode("bogus").start().pipe(Effect.flip)
        assert.strictEqual(
          mode.message,
          "[STREAMING_OUTPUT_MODE.INVALID] Invalid streaming output mode: bogus. Accepted output modes are 'Append', 'Complete', 'Update'. (Unknown output mode bogus.)"
        )
        const complete = yield* df.writeStream.format("noop").outputMode("complete").start().pipe(Effect.flip)
        assert.strictEqual(complete._tag, "AnalysisError")
        assert.include(complete.message, "Invalid streaming output mode: complete. This output mode is not supported for no streaming aggregations")
        // a continuous trigger over an operator continuous processing cannot run
        const continuous = yield* df
          .dropDuplicates()
          .writeStream.format("noop")
          .trigger(Trigger.Continuous("1 second"))
          .start()
          .pipe(Effect.flip)
        assert.strictEqual(continuous._tag, "AnalysisError")
        const negative = yield* df.writeStream
          .format("noop")
          .trigger(Trigger.ProcessingTime(-1))
          .start()
          .pipe(Effect.flip)
        assert.strictEqual(negative._tag, "AnalysisError")
        const garbage = yield* df.writeStream
          .format("noop")
          // @ts-expect-error not an interval: the types reject it, and so does the run time
          .trigger(Trigger.ProcessingTime("soon"))
          .start()
          .pipe(Effect.flip)
        assert.strictEqual(garbage._tag, "AnalysisError")
        assert.deepStrictEqual(yield* spark.streams.active(), [])
      }).pipe(Effect.provide(Session.layer()))
  )
})
