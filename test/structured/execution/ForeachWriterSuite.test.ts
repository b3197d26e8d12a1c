/**
 * Spark's `ForeachWriterSuite` (sql/core/src/test/scala/org/apache/spark/sql/execution/streaming/
 * sources/ForeachWriterSuite.scala): `writeStream.foreach(writer)` calls `open(partition, epoch)`,
 * `process` per row and `close(error)` for every partition of every batch, and a failing
 * `process` fails the query with `FOREACH_USER_FUNCTION_ERROR`.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session, StreamingQueryError } from "../../../mod.ts"
import type { ForeachWriter } from "../../../structured/api/DataStreamWriter.ts"

const Value = Schema.Struct({ value: Schema.Int })
const v = (...xs: ReadonlyArray<number>) => xs.map((value) => ({ value }))

type Event =
  | { readonly _tag: "Open"; readonly partition: number; readonly version: number }
  | { readonly _tag: "Process"; readonly value: number }
  | { readonly _tag: "Close"; readonly error: unknown }

const Open = (partition: number, version: number): Event => ({ _tag: "Open", partition, version })
const Process = (value: number): Event => ({ _tag: "Process", value })
const CloseNone: Event = { _tag: "Close", error: null }

/**
 * Spark's `TestForeachWriter`: records the events of one partition and hands them to the global
 * list when the partition closes (`ForeachWriterSuite.addEvents`).
 */
const testForeachWriter = (
  all: Array<ReadonlyArray<Event>>,
  onProcess?: (value: number) => void
): ForeachWriter<{ readonly value: number }> => {
  let events: Array<Event> = []
  return {
    open: (partition, version) => {
      events = [Open(partition, version)]
      return true
    },
    process: (row) => {
      events.push(Process(row.value))
      if (onProcess !== undefined) onProcess(row.value)
    },
    close: (error) => {
      events.push({ _tag: "Close", error })
      all.push(events)
    }
  }
}

const withTempDir = <A, E, R>(f: (dir: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-foreach-"))),
    f,
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

const forceDelete = Session.layer({ conf: { "spark.sql.streaming.forceDeleteTempCheckpointLocation": true } })

describe("ForeachWriterSuite", () => {
  // Deviation: Spark runs `repartition(2)` as two writer partitions, so each batch gives two
  // event sequences (Open(0, v) … Close and Open(1, v) … Close). tributary runs every batch as
  // one partition (`DataFrame.repartition` is a no-op, structured/api/DataFrame.ts `repartition`,
  // and `foreachSink` in structured/api/DataStreamWriter.ts opens partition 0 only).
  it.effect.fails("foreach() with `append` output mode", () =>
    Effect.gen(function* () {
      yield* withTempDir((dir) =>
        Effect.gen(function* () {
          const all: Array<ReadonlyArray<Event>> = []
          const input = yield* MemoryStream.make(Value)
          const query = yield* input
            .toDF()
            .repartition(2)
            .writeStream.option("checkpointLocation", dir)
            .outputMode("append")
            .foreach(testForeachWriter(all))
            .start()
          const verifyOutput = (expectedVersion: number, expectedData: ReadonlyArray<number>) => {
            assert.strictEqual(all.length, 2)
            assert.sameDeepMembers(
              all.map((e) => e[0]),
              [Open(0, expectedVersion), Open(1, expectedVersion)]
            )
            assert.sameDeepMembers(
              all.flatMap((e) => e.filter((x) => x._tag === "Process")),
              expectedData.map(Process)
            )
            assert.deepStrictEqual(
              all.map((e) => e[e.length - 1]),
              [CloseNone, CloseNone]
            )
          }
          yield* input.addData(v(1, 2, 3, 4))
          yield* query.processAllAvailable()
          verifyOutput(0, [1, 2, 3, 4])
          all.length = 0
          yield* input.addData(v(5, 6, 7, 8))
          yield* query.processAllAvailable()
          verifyOutput(1, [5, 6, 7, 8])
          yield* query.stop()
        })
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("foreach() with `complete` output mode", () =>
    Effect.gen(function* () {
      yield* withTempDir((dir) =>
        Effect.gen(function* () {
          const all: Array<ReadonlyArray<Event>> = []
          const input = yield* MemoryStream.make(Value)
          const query = yield* input
            .toDF()
            .groupBy()
            .count()
            .map((r) => ({ value: Number(r.count) }), Value)
            .writeStream.option("checkpointLocation", dir)
            .outputMode("complete")
            .foreach(testForeachWriter(all))
            .start()
          yield* input.addData(v(1, 2, 3, 4))
          yield* query.processAllAvailable()
          assert.deepStrictEqual(all, [[Open(0, 0), Process(4), CloseNone]])
          all.length = 0
          yield* input.addData(v(5, 6, 7, 8))
          yield* query.processAllAvailable()
          assert.deepStrictEqual(all, [[Open(0, 1), Process(8), CloseNone]])
          yield* query.stop()
        })
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("foreach with error", () =>
    Effect.gen(function* () {
      yield* withTempDir((dir) =>
        Effect.gen(function* () {
          const all: Array<ReadonlyArray<Event>> = []
          const funcEx = new Error("ForeachSinkSuite error")
          const input = yield* MemoryStream.make(Value)
          const query = yield* input
            .toDF()
            .repartition(1)
            .writeStream.option("checkpointLocation", dir)
            .foreach(
              testForeachWriter(all, () => {
                throw funcEx
              })
            )
            .start()
          yield* input.addData(v(1, 2, 3, 4))
          const e = yield* query.processAllAvailable().pipe(Effect.flip)
          assert.instanceOf(e, StreamingQueryError)
          const errClass = "FOREACH_USER_FUNCTION_ERROR"
          // verify that we classified the exception
          assert.include(e.message, errClass)
          assert.include(
            e.message,
            "[FOREACH_USER_FUNCTION_ERROR] An error occurred in the user provided function in foreach sink. Reason: ForeachSinkSuite error"
          )
          // Spark's StreamingQueryException.cause is the user's exception
          assert.strictEqual(e.cause, funcEx)
          assert.isFalse(yield* query.isActive())
          assert.strictEqual(all.length, 1)
          assert.deepStrictEqual(all[0][0], Open(0, 0))
          assert.deepStrictEqual(all[0][1], Process(1))
          // `close` is called with the error, and only once.
          const errorEvent = all[0][2]
          assert.strictEqual(errorEvent._tag, "Close")
          if (errorEvent._tag === "Close") {
            assert.instanceOf(errorEvent.error, Error)
            assert.strictEqual((errorEvent.error as Error).message, "ForeachSinkSuite error")
          }
          assert.strictEqual(all[0].length, 3)
        })
      )
    }).pipe(Effect.provide(forceDelete))
  )

  // Spark's `StreamExecution.runStream` unwraps a `ForeachUserFuncException`, so the
  // StreamingQueryException's `cause` is the user's exception itself (the "foreach with error"
  // assertion `e.cause.getMessage == funcEx.getMessage`).
  it.effect("foreach with error: the query error's cause is the user's exception", () =>
    Effect.gen(function* () {
      const funcEx = new Error("ForeachSinkSuite error")
      const input = yield* MemoryStream.make(Value)
      const query = yield* input
        .toDF()
        .writeStream.foreach(
          testForeachWriter([], () => {
            throw funcEx
          })
        )
        .start()
      yield* input.addData(v(1, 2, 3, 4))
      const e = yield* query.processAllAvailable().pipe(Effect.flip)
      assert.include(e.message, "FOREACH_USER_FUNCTION_ERROR")
      assert.strictEqual(e.cause, funcEx)
    }).pipe(Effect.provide(forceDelete))
  )

  it.effect("foreach with watermark: complete", () =>
    Effect.gen(function* () {
      const all: Array<ReadonlyArray<Event>> = []
      const inputData = yield* MemoryStream.make(Value)
      const windowedAggregation = inputData
        .toDF()
        .withColumn("eventTime", F.timestamp_seconds("value"))
        .withWatermark("eventTime", "10 seconds")
        .groupBy(F.window("eventTime", "5 seconds").as("window"))
        .agg(F.count("*").as("count"))
        .select("count")
        .map((r) => ({ value: Number(r.count) }), Value)
        .repartition(1)
      const query = yield* windowedAggregation.writeStream
        .outputMode("complete")
        .foreach(testForeachWriter(all))
        .start()
      yield* inputData.addData(v(10, 11, 12))
      yield* query.processAllAvailable()
      assert.deepStrictEqual(all, [[Open(0, 0), Process(3), CloseNone]])
      yield* query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("foreach with watermark: append", () =>
    Effect.gen(function* () {
      const all: Array<ReadonlyArray<Event>> = []
      const inputData = yield* MemoryStream.make(Value)
      const windowedAggregation = inputData
        .toDF()
        .withColumn("eventTime", F.timestamp_seconds("value"))
        .withWatermark("eventTime", "10 seconds")
        .groupBy(F.window("eventTime", "5 seconds").as("window"))
        .agg(F.count("*").as("count"))
        .select("count")
        .map((r) => ({ value: Number(r.count) }), Value)
        .repartition(1)
      const query = yield* windowedAggregation.writeStream
        .outputMode("append")
        .foreach(testForeachWriter(all))
        .start()
      yield* inputData.addData(v(10, 11, 12))
      yield* query.processAllAvailable()
      yield* inputData.addData(v(25)) // Evict items less than previous watermark
      yield* query.processAllAvailable()
      // There should be 4 batches (two of them no-data batches) and only the last one has a value.
      assert.deepStrictEqual(all, [
        [Open(0, 0), CloseNone],
        [Open(0, 1), CloseNone],
        [Open(0, 2), CloseNone],
        [Open(0, 3), Process(3), CloseNone]
      ])
      yield* query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("foreach sink should support metrics", () =>
    Effect.gen(function* () {
      const all: Array<ReadonlyArray<Event>> = []
      const inputData = yield* MemoryStream.make(Value)
      const query = yield* inputData.toDF().writeStream.foreach(testForeachWriter(all)).start()
      yield* inputData.addData(v(10, 11, 12))
      yield* query.processAllAvailable()
      const recent = (yield* query.recentProgress()).filter((p) => p.numInputRows !== 0)
      assert.isTrue(recent.length > 0)
      assert.strictEqual(recent[0].numInputRows, 3)
      yield* query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  // Deviation: Spark opens the writer when the task starts and, when computing the rows fails
  // (`map(_ / 0)`), aborts it: `close` gets a SparkException of class FOREACH_WRITER_ABORTED, so
  // the events are [Open(0, 0), Close(FOREACH_WRITER_ABORTED)] (Spark's
  // `ForeachDataWriter.abort`, sql/core/.../streaming/sources/ForeachWriterTable.scala). tributary
  // computes the whole batch before it calls the sink (structured/execution/MicroBatchExecution.ts,
  // `runBatch` before `sink.addBatch`), so the writer is never opened and no event is recorded.
  it.effect.fails("foreach with error not caused by ForeachWriter", () =>
    Effect.gen(function* () {
      yield* withTempDir((dir) =>
        Effect.gen(function* () {
          const all: Array<ReadonlyArray<Event>> = []
          const input = yield* MemoryStream.make(Value)
          const query = yield* input
            .toDF()
            .repartition(1)
            .map((r) => {
              // Scala's integer `_ / 0` throws ArithmeticException("/ by zero").
              if (r.value !== 0) throw new Error("/ by zero")
              return r
            }, Value)
            .writeStream.option("checkpointLocation", dir)
            .foreach(testForeachWriter(all))
            .start()
          yield* input.addData(v(1, 2, 3, 4))
          const e = yield* query.processAllAvailable().pipe(Effect.flip)
          assert.include(e.message, "/ by zero")
          assert.isFalse(yield* query.isActive())
          assert.strictEqual(all.length, 1)
          assert.deepStrictEqual(all[0][0], Open(0, 0))
          const errorEvent = all[0][1]
          assert.strictEqual(errorEvent._tag, "Close")
          if (errorEvent._tag === "Close") {
            assert.strictEqual((errorEvent.error as { errorClass?: string }).errorClass, "FOREACH_WRITER_ABORTED")
          }
        })
      )
    }).pipe(Effect.provide(forceDelete))
  )
})
