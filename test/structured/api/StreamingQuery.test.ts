/**
 * The `StreamingQuery` handle, after Spark's `StreamingQuerySuite`: names and ids, `isActive`,
 * `exception` and `awaitTermination`, `status`, `lastProgress` and `recentProgress` (with a
 * source and a sink that take test-clock time, as Spark's suite does with its manual clock),
 * `stop`, and what a failing batch leaves behind.
 */
import { readdir, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as T from "../../../core/DataType.ts"
import {
  type MicroBatchSource,
  MemoryStream,
  registerSourceFormat,
  Session,
  type StreamingQuery,
  StreamingQueryError,
  type StreamingQueryStatus,
  Trigger
} from "../../../mod.ts"
import type { MicroBatchExecution } from "../../../structured/execution/MicroBatchExecution.ts"
import {
  AddData,
  AssertOnQuery,
  CheckAnswer,
  ExpectFailure,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"

const Value = Schema.Struct({ value: Schema.Int })
const v = (...xs: ReadonlyArray<number>) => xs.map((value) => ({ value }))

const tempDir = (name: string) => join(tmpdir(), `tributary-${name}-${Math.random().toString(36).slice(2)}`)
const removeDir = (dir: string) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
const logIds = (dir: string) =>
  Effect.promise(async () => {
    try {
      return (await readdir(dir))
        .filter((n) => /^\d+$/.test(n))
        .map(Number)
        .sort((a, b) => a - b)
    } catch {
      return []
    }
  })

const quiescent = (q: StreamingQuery) => (q as unknown as MicroBatchExecution).awaitQuiescent()

/** Lets forked fibers run until they block. */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

/** `6 / value`, failing on 0 as Spark's `6 / _` on an Int does. */
const sixDividedBy = (input: MemoryStream<{ value: number }>) =>
  input.toDF().map((r) => {
    if (r.value === 0) throw new Error("/ by zero")
    return { value: Math.trunc(6 / r.value) }
  }, Value)

describe("StreamingQuery: names and ids", () => {
  it.effect("name unique in active queries", () =>
    Effect.gen(function* () {
      const startQuery = (name?: string) =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Value)
          const writer = input.toDF().writeStream.foreach({ process: () => {} })
          return yield* (name === undefined ? writer : writer.queryName(name)).start()
        })
      // No name by default; several unnamed queries can be active
      const q1 = yield* startQuery()
      assert.isNull(q1.name)
      const q2 = yield* startQuery()
      assert.isNull(q2.name)
      const q3 = yield* startQuery("q3")
      assert.strictEqual(q3.name, "q3")
      const e = yield* startQuery("q3").pipe(Effect.flip)
      assert.strictEqual(e._tag, "AnalysisError")
      assert.include(e.message, "query with that name is already active")
      yield* q1.stop()
      yield* q2.stop()
      yield* q3.stop()
      // Once q3 has stopped its name is free again
      const q4 = yield* startQuery("q3")
      yield* q4.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("id unique in active queries + persists across restarts, runId unique across start/restarts", () =>
    Effect.gen(function* () {
      const root = tempDir("ids")
      let n = 0
      let cpDir = ""
      const startQuery = (restart: boolean) =>
        Effect.gen(function* () {
          if (!restart) cpDir = join(root, String(n++))
          const input = yield* MemoryStream.make(Value)
          return yield* input
            .toDF()
            .groupBy()
            .count()
            .writeStream.format("memory")
            .outputMode("complete")
            .queryName(`name${n}_${Math.random().toString(36).slice(2)}`)
            .option("checkpointLocation", cpDir)
            .start()
        })
      const q1 = yield* startQuery(false)
      const q2 = yield* startQuery(false)
      assert.notStrictEqual(q1.id, q2.id)
      assert.notStrictEqual(q1.runId, q2.runId)
      yield* q1.stop()
      yield* q2.stop()
      const q3 = yield* startQuery(false)
      yield* q3.stop()
      const q4 = yield* startQuery(true)
      yield* q4.stop()
      assert.strictEqual(q4.id, q3.id)
      assert.notStrictEqual(q4.runId, q3.runId)
      // Only one query with the same id can be active
      const q5 = yield* startQuery(false)
      const e = yield* startQuery(true).pipe(Effect.flip)
      assert.strictEqual(e._tag, "CheckpointError")
      assert.strictEqual((e as { reason?: string }).reason, "ConcurrentUse")
      yield* q5.stop()
      yield* removeDir(root)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("StreamingQuery: isActive, exception and awaitTermination", () => {
  it.effect("isActive, exception, and awaitTermination", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      /** Forks `awaitTermination` and tells whether it is still blocked after `ms` of test time. */
      const blockedFor = (q: StreamingQuery, ms: number) =>
        Effect.gen(function* () {
          const f = yield* Effect.forkChild(q.awaitTermination())
          yield* settle
          yield* TestClock.adjust(ms)
          yield* settle
          const blocked = f.pollUnsafe() === undefined
          yield* Fiber.interrupt(f)
          return blocked
        })
      /** `awaitTermination(timeout)`, with the test clock moved past the timeout. */
      const withTimeout = (q: StreamingQuery, timeoutMs: number) =>
        Effect.gen(function* () {
          const f = yield* Effect.forkChild(q.awaitTermination(timeoutMs))
          yield* settle
          yield* TestClock.adjust(timeoutMs)
          return yield* Fiber.await(f)
        })
      yield* testStream(sixDividedBy(input), "append", [
        AssertOnQuery((q) => q.isActive()),
        AssertOnQuery((q) => Effect.map(q.exception(), (e) => e === null)),
        AddData(input, ...v(1, 2)),
        CheckAnswer(...v(6, 3)),
        AssertOnQuery((q) => blockedFor(q, 2000), "awaitTermination() blocks while the query runs"),
        AssertOnQuery(
          (q) => Effect.map(withTimeout(q, 10), (exit) => Exit.isSuccess(exit) && exit.value === false),
          "awaitTermination(10) returns false"
        ),
        StopStream,
        AssertOnQuery((q) => Effect.map(q.isActive(), (a) => a === false)),
        AssertOnQuery((q) => Effect.map(q.exception(), (e) => e === null)),
        AssertOnQuery((q) => q.awaitTermination(), "awaitTermination() returns at once"),
        AssertOnQuery((q) => q.awaitTermination(2000), "awaitTermination(2000) returns true at once"),
        AssertOnQuery((q) => q.awaitTermination(10), "awaitTermination(10) returns true at once"),
        StartStream(),
        AssertOnQuery((q) => q.isActive()),
        AddData(input, ...v(0)),
        ExpectFailure(undefined, "/ by zero"),
        AssertOnQuery((q) => Effect.map(q.isActive(), (a) => a === false)),
        AssertOnQuery(
          (q) => Effect.map(Effect.exit(q.awaitTermination()), (exit) => Exit.isFailure(exit)),
          "awaitTermination() fails with the query's error"
        ),
        AssertOnQuery(
          (q) => Effect.map(Effect.exit(q.awaitTermination(2000)), (exit) => Exit.isFailure(exit)),
          "awaitTermination(2000) fails with the query's error"
        ),
        AssertOnQuery(
          (q) =>
            Effect.map(
              q.exception(),
              (e) => e instanceof StreamingQueryError && e.batchId === 1 && e.queryId === q.id && e.runId === q.runId
            ),
          "exception() names the batch and the query"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("stop is idempotent, also after a failure", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const q1 = yield* input.toDF().writeStream.format("noop").start()
      yield* q1.stop()
      yield* q1.stop()
      assert.isFalse(yield* q1.isActive())
      const q2 = yield* sixDividedBy(input).writeStream.format("noop").start()
      yield* input.addData(v(0))
      const error = yield* q2.awaitTermination().pipe(Effect.flip)
      yield* q2.stop()
      yield* q2.stop()
      assert.strictEqual(yield* q2.exception(), error)
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.forceDeleteTempCheckpointLocation": true } })))
  )

  it.effect("stop right after start, before the query ran at all", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Value)
      const q = yield* input.toDF().writeStream.format("noop").start()
      yield* q.stop()
      assert.isFalse(yield* q.isActive())
      assert.isTrue(yield* q.awaitTermination())
      assert.strictEqual((yield* q.status()).message, "Stopped")
      assert.deepStrictEqual(yield* spark.streams.active(), [])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a failing batch: StreamingQueryError with the batch id, nothing of that batch in the sink", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = tempDir("failing-batch")
      const input = yield* MemoryStream.make(Value)
      const q = yield* sixDividedBy(input)
        .writeStream.format("memory")
        .queryName("failing")
        .option("checkpointLocation", dir)
        .start()
      yield* input.addData(v(1, 2))
      yield* q.processAllAvailable()
      yield* input.addData(v(3, 0, 6))
      const error = yield* q.processAllAvailable().pipe(Effect.flip)
      assert.instanceOf(error, StreamingQueryError)
      assert.strictEqual(error.batchId, 1)
      assert.strictEqual(
        error.message,
        `Query failing [id = ${q.id}, runId = ${q.runId}] terminated with exception: / by zero`
      )
      assert.strictEqual((error.cause as Error).message, "/ by zero")
      assert.deepStrictEqual(yield* spark.table("failing").collect(), v(6, 3))
      // Batch 1 was planned (its offsets are logged) but never committed.
      assert.deepStrictEqual(yield* logIds(join(dir, "offsets")), [0, 1])
      assert.deepStrictEqual(yield* logIds(join(dir, "commits")), [0])
      const status = yield* q.status()
      assert.deepStrictEqual(status, {
        message: "Terminated with exception: / by zero",
        isDataAvailable: false,
        isTriggerActive: false
      })
      assert.strictEqual(yield* q.exception(), error)
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("the query name and ids in toString", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const named = yield* input.toDF().writeStream.format("memory").queryName("shown").start()
      assert.strictEqual(
        String(named),
        `Streaming Query shown [id = ${named.id}, runId = ${named.runId}] [state = ACTIVE]`
      )
      yield* named.stop()
      assert.strictEqual(
        String(named),
        `Streaming Query shown [id = ${named.id}, runId = ${named.runId}] [state = TERMINATED]`
      )
      const unnamed = yield* input.toDF().writeStream.format("noop").start()
      assert.strictEqual(
        String(unnamed),
        `Streaming Query [id = ${unnamed.id}, runId = ${unnamed.runId}] [state = ACTIVE]`
      )
      yield* unnamed.stop()
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("StreamingQuery: status, lastProgress and recentProgress", () => {
  it.effect("status, lastProgress, and recentProgress", () =>
    Effect.gen(function* () {
      // Spark's suite makes the first `latestOffset` after data take 50 ms, the first read of
      // the data 100 ms and the first batch's processing 350 ms of the manual clock. Here the
      // source and the foreachBatch function move the test clock by as much.
      const rows: Array<ReadonlyArray<number>> = []
      let latestOffsetWaited = false
      let getBatchWaited = false
      let sinkWaited = false
      let query: StreamingQuery | undefined
      const seen: Array<readonly [string, StreamingQueryStatus]> = []
      const record = (where: string) =>
        Effect.gen(function* () {
          if (query !== undefined) seen.push([where, yield* query.status()])
        })
      const source: MicroBatchSource = {
        description: "MemoryStream[value#0]",
        schema: T.struct([T.field("value", T.IntegerType, false)]),
        initialOffset: () => Effect.succeed(-1),
        defaultReadLimit: () => ({ _tag: "AllAvailable" }),
        latestOffset: () =>
          Effect.gen(function* () {
            if (rows.length > 0 && !latestOffsetWaited) {
              latestOffsetWaited = true
              yield* record("latestOffset")
              yield* TestClock.adjust(50)
            }
            return rows.length - 1
          }),
        getBatch: (start, end) =>
          Effect.gen(function* () {
            if (!getBatchWaited) {
              getBatchWaited = true
              yield* record("getBatch")
              yield* TestClock.adjust(100)
            }
            return rows
              .slice((start as number) + 1, (end as number) + 1)
              .flat()
              .map((x) => [x])
          }),
        commit: () => Effect.void,
        decodeOffset: (json) => Effect.succeed(json),
        stop: () => Effect.void
      }
      registerSourceFormat({
        name: "test-slow-memory",
        schema: () => source.schema,
        create: () => Effect.succeed(source)
      })
      const spark = yield* Session
      const df = spark.readStream.format("test-slow-memory").load()
      const mapped = df.map((r) => {
        const x = r.value as number
        if (x === 0) throw new Error("/ by zero")
        return { value: Math.trunc(10 / x) }
      }, Value)
      const start = () =>
        mapped.writeStream
          .trigger(Trigger.ProcessingTime(1000))
          .foreachBatch((_df, _id) =>
            Effect.gen(function* () {
              if (!sinkWaited) {
                sinkWaited = true
                yield* record("addBatch")
                yield* TestClock.adjust(350)
              }
            })
          )
          .start()
      const q = yield* start()
      query = q
      // The first trigger (t = 0) finds no data; the query waits for 1000.
      yield* quiescent(q)
      assert.deepStrictEqual(yield* q.status(), {
        message: "Waiting for next trigger",
        isDataAvailable: false,
        isTriggerActive: false
      })
      assert.strictEqual((yield* q.recentProgress()).filter((p) => p.numInputRows > 0).length, 0)

      rows.push([1, 2])
      yield* TestClock.adjust(1000) // t = 1000: a trigger; latestOffset takes 50, getBatch 100, the sink 350
      yield* quiescent(q)
      assert.deepStrictEqual(seen, [
        ["latestOffset", { message: "Getting offsets from sources", isDataAvailable: false, isTriggerActive: true }],
        ["getBatch", { message: "Processing new data", isDataAvailable: true, isTriggerActive: true }],
        ["addBatch", { message: "Processing new data", isDataAvailable: true, isTriggerActive: true }]
      ])
      assert.deepStrictEqual(yield* q.status(), {
        message: "Waiting for next trigger",
        isDataAvailable: true,
        isTriggerActive: false
      })
      const p0 = (yield* q.lastProgress())!
      const recent = yield* q.recentProgress()
      assert.strictEqual(recent.at(-1), p0)
      assert.strictEqual(p0.id, q.id)
      assert.strictEqual(p0.runId, q.runId)
      assert.strictEqual(p0.name, q.name)
      assert.strictEqual(p0.batchId, 0)
      assert.strictEqual(p0.timestamp, "1970-01-01T00:00:01.000Z")
      assert.strictEqual(p0.numInputRows, 2)
      assert.strictEqual(p0.processedRowsPerSecond, 4.0)
      assert.strictEqual(p0.batchDuration, 500)
      assert.deepStrictEqual(p0.durationMs, {
        latestOffset: 50,
        walCommit: 0,
        getBatch: 100,
        queryPlanning: 0,
        addBatch: 350,
        commitOffsets: 0,
        triggerExecution: 500
      })
      assert.strictEqual(p0.sources.length, 1)
      assert.include(p0.sources[0].description, "MemoryStream")
      assert.isNull(p0.sources[0].startOffset) // no prior offset
      assert.strictEqual(p0.sources[0].endOffset, 0)
      assert.strictEqual(p0.sources[0].numInputRows, 2)
      assert.strictEqual(p0.sources[0].processedRowsPerSecond, 4.0) // 2 rows processed in 500 ms
      assert.strictEqual(p0.sink.description, "ForeachBatchSink")
      assert.strictEqual(p0.sink.numOutputRows, 2)
      assert.deepStrictEqual(p0.stateOperators, [])
      assert.deepStrictEqual(p0.eventTime, {})

      // The input rate after a second batch: 2 rows since the trigger 1 s before.
      rows.push([1, 2])
      yield* TestClock.adjust(500) // t = 2000
      yield* quiescent(q)
      assert.deepStrictEqual(yield* q.status(), {
        message: "Waiting for next trigger",
        isDataAvailable: true,
        isTriggerActive: false
      })
      const p1 = (yield* q.lastProgress())!
      assert.strictEqual((yield* q.recentProgress()).at(-1), p1)
      assert.strictEqual(p1.batchId, 1)
      assert.strictEqual(p1.inputRowsPerSecond, 2.0)
      assert.strictEqual(p1.sources[0].inputRowsPerSecond, 2.0)
      assert.strictEqual(p1.sources[0].startOffset, 0)
      assert.strictEqual(p1.sources[0].endOffset, 1)
      // A batch that takes no time counts as 1 ms (SPARK-29973)
      assert.strictEqual(p1.processedRowsPerSecond, 2000)

      // A trigger without data
      yield* TestClock.adjust(1000) // t = 3000
      yield* quiescent(q)
      assert.deepStrictEqual(yield* q.status(), {
        message: "Waiting for next trigger",
        isDataAvailable: false,
        isTriggerActive: false
      })

      // After the query stopped
      const lastBeforeStop = yield* q.lastProgress()
      yield* q.stop()
      assert.strictEqual(yield* q.lastProgress(), lastBeforeStop)
      assert.deepStrictEqual(yield* q.status(), { message: "Stopped", isDataAvailable: false, isTriggerActive: false })

      // After the query failed
      const q2 = yield* start()
      query = q2
      yield* quiescent(q2)
      yield* TestClock.adjust(1000)
      yield* quiescent(q2)
      rows.push([0])
      yield* TestClock.adjust(1000)
      const error = yield* q2.awaitTermination().pipe(Effect.flip)
      assert.include(error.message, "/ by zero")
      const status = yield* q2.status()
      assert.isFalse(status.isDataAvailable)
      assert.isFalse(status.isTriggerActive)
      assert.isTrue(status.message.startsWith("Terminated with exception"))
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.forceDeleteTempCheckpointLocation": true } })))
  )

  it.effect("lastProgress is null before the first progress, and the first input rate is 0", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const q = yield* input.toDF().writeStream.format("noop").trigger(Trigger.ProcessingTime(1000)).start()
      assert.isNull(yield* q.lastProgress())
      assert.deepStrictEqual(yield* q.recentProgress(), [])
      yield* quiescent(q)
      // SPARK-29973: the first (idle) trigger is recorded with no input at 0 rows/s
      const idle = (yield* q.lastProgress())!
      assert.strictEqual(idle.numInputRows, 0)
      assert.strictEqual(idle.processedRowsPerSecond, 0)
      assert.strictEqual(idle.inputRowsPerSecond, 0)
      assert.strictEqual(idle.sink.numOutputRows, -1)
      yield* input.addData(v(1, 2))
      yield* TestClock.adjust(1000)
      yield* quiescent(q)
      const p = (yield* q.lastProgress())!
      assert.strictEqual(p.numInputRows, 2)
      assert.strictEqual(p.processedRowsPerSecond, 2000)
      assert.strictEqual(p.inputRowsPerSecond, 2)
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("numRecentProgressUpdates bounds recentProgress", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const q = yield* input.toDF().writeStream.format("noop").start()
      for (let i = 0; i < 5; i++) {
        yield* input.addData(v(i))
        yield* q.processAllAvailable()
      }
      const recent = yield* q.recentProgress()
      assert.deepStrictEqual(
        recent.map((p) => p.batchId),
        [3, 4]
      )
      assert.strictEqual((yield* q.lastProgress())?.batchId, 4)
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.numRecentProgressUpdates": 2 } })))
  )

  it.effect("progress names the sink and the sources, with offsets as JSON values", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const a = yield* MemoryStream.make(Value)
      const b = yield* MemoryStream.make(Value)
      const q = yield* a.toDF().union(b.toDF()).writeStream.format("memory").queryName("described").start()
      yield* a.addData(v(1))
      yield* a.addData(v(2))
      yield* q.processAllAvailable()
      yield* b.addData(v(3))
      yield* q.processAllAvailable()
      const p = (yield* q.lastProgress())!
      assert.strictEqual(p.name, "described")
      assert.strictEqual(p.sink.description, "MemorySink")
      assert.deepStrictEqual(
        p.sources.map((s) => [s.description, s.endOffset, s.numInputRows]),
        [
          [a.toString(), 1, 0],
          [b.toString(), 0, 1]
        ]
      )
      assert.strictEqual(p.sources[0].startOffset, 1)
      assert.deepStrictEqual(yield* spark.table("described").collect(), v(1, 2, 3))
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("StreamingQuery: explain and StreamExecution's source lifecycle", () => {
  it.effect("sources are stopped when the query stops and when it fails", () =>
    Effect.gen(function* () {
      let stops = 0
      const source: MicroBatchSource = {
        description: "Stoppable",
        schema: T.struct([T.field("value", T.IntegerType, false)]),
        initialOffset: () => Effect.succeed(0),
        defaultReadLimit: () => ({ _tag: "AllAvailable" }),
        latestOffset: () => Effect.succeed(1),
        getBatch: () => Effect.succeed([[0]]),
        commit: () => Effect.void,
        decodeOffset: (json) => Effect.succeed(json),
        stop: () =>
          Effect.sync(() => {
            stops++
          })
      }
      registerSourceFormat({
        name: "test-stoppable",
        schema: () => source.schema,
        create: () => Effect.succeed(source)
      })
      const spark = yield* Session
      const df = spark.readStream.format("test-stoppable").load()
      const q1 = yield* df.writeStream.format("noop").start()
      yield* q1.processAllAvailable()
      yield* q1.stop()
      assert.strictEqual(stops, 1)
      const failing = df.map((r) => {
        if (r.value === 0) throw new Error("boom")
        return { value: r.value as number }
      }, Value)
      const q2 = yield* failing.writeStream.format("noop").start()
      yield* q2.awaitTermination().pipe(Effect.flip)
      assert.strictEqual(stops, 2)
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.forceDeleteTempCheckpointLocation": true } })))
  )

  it.effect("explain shows the physical plan", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const q = yield* input
        .toDF()
        .where((r) => r.value > 1)
        .writeStream.format("noop")
        .start()
      const text = yield* q.explain()
      assert.isTrue(text.startsWith("== Physical Plan =="))
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer()))
  )
})
