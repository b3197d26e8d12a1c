/**
 * Triggers on Effect's test clock: Spark's `ProcessingTimeExecutorSuite` (the grid, a late batch
 * that starts the next one at once, termination), the default trigger (a batch as soon as data
 * arrives, nothing logged while idle), `ProcessingTime` through a whole query (StreamSuite's
 * "minimize delay between batch construction and execution"), `Trigger.Once`
 * (StreamingQuerySuite's "OneTime trigger, commit log, and exception") and
 * `Trigger.AvailableNow` (TriggerAvailableNowSuite, RatePerMicroBatchProviderSuite).
 */
import { readdir, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber, Ref, Schema } from "effect"
import { TestClock, TestConsole } from "effect/testing"
import {
  ConnectorError,
  type DataFrame,
  type MicroBatchSource,
  MemoryStream,
  type ReadLimit,
  registerSourceFormat,
  Session,
  type StreamingQuery,
  Trigger
} from "../../../mod.ts"
import * as T from "../../../core/DataType.ts"
import { type StepResult, runTrigger } from "../../../core/Scheduler.ts"
import { nextBatchTime } from "../../../core/Trigger.ts"
import type { MicroBatchExecution } from "../../../structured/execution/MicroBatchExecution.ts"
import {
  AddData,
  AdvanceClock,
  AssertOnQuery,
  CheckAnswer,
  CheckLastBatch,
  Execute,
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

/** Lets forked fibers run until they block (on the clock, or on an adjustment of their own). */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

/** Waits until a processing-time query is blocked on its next trigger time (Spark's `isStreamWaitingAt`). */
const quiescent = (q: StreamingQuery) => (q as unknown as MicroBatchExecution).awaitQuiescent()

describe("ProcessingTimeExecutorSuite", () => {
  it("nextBatchTime", () => {
    assert.strictEqual(nextBatchTime(0, 100), 100)
    assert.strictEqual(nextBatchTime(1, 100), 100)
    assert.strictEqual(nextBatchTime(99, 100), 100)
    assert.strictEqual(nextBatchTime(100, 100), 200)
    assert.strictEqual(nextBatchTime(101, 100), 200)
    assert.strictEqual(nextBatchTime(150, 100), 200)
    // interval 0: the next batch is now
    assert.strictEqual(nextBatchTime(150, 0), 150)
  })

  it("calling nextBatchTime with the result of a previous call should return the next interval", () => {
    let t = 0
    for (let i = 1; i <= 10; i++) t = nextBatchTime(t, 100)
    assert.strictEqual(t, 1000)
  })

  it.effect("trigger timing", () =>
    Effect.gen(function* () {
      const triggerTimes = yield* Ref.make<ReadonlyArray<number>>([])
      let clockIncrementInTrigger = 0
      let continueExecuting = true
      const step = Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        yield* Ref.update(triggerTimes, (ts) => [...ts, now])
        const inc = clockIncrementInTrigger
        clockIncrementInTrigger = 0 // no runaway triggers
        if (inc > 0) yield* TestClock.adjust(inc)
        return (continueExecuting ? "ran" : "stop") as StepResult
      })
      const fiber = yield* Effect.forkChild(runTrigger(Trigger.ProcessingTime("1000 milliseconds"), step, Effect.void))
      yield* Effect.yieldNow
      // The first batch executes at once, then the executor waits for 1000.
      assert.deepStrictEqual(yield* Ref.get(triggerTimes), [0])

      // A trigger that takes less than the interval: the executor waits for the next grid point.
      clockIncrementInTrigger = 500
      yield* TestClock.adjust(1000)
      yield* settle
      assert.deepStrictEqual(yield* Ref.get(triggerTimes), [0, 1000])
      assert.strictEqual(yield* Clock.currentTimeMillis, 1500)

      // A trigger that takes longer than the interval: the next one runs at once (3500), then
      // the grid realigns (4000).
      clockIncrementInTrigger = 1500
      yield* TestClock.adjust(500)
      yield* settle
      assert.deepStrictEqual(yield* Ref.get(triggerTimes), [0, 1000, 2000, 3500])
      assert.strictEqual(yield* Clock.currentTimeMillis, 3500)
      yield* TestClock.adjust(499)
      yield* settle
      assert.deepStrictEqual(yield* Ref.get(triggerTimes), [0, 1000, 2000, 3500])
      yield* TestClock.adjust(1)
      yield* settle
      assert.deepStrictEqual(yield* Ref.get(triggerTimes), [0, 1000, 2000, 3500, 4000])

      continueExecuting = false
      yield* TestClock.adjust(1000)
      const exit = yield* Fiber.await(fiber)
      assert.strictEqual(exit._tag, "Success")
      assert.deepStrictEqual(yield* Ref.get(triggerTimes), [0, 1000, 2000, 3500, 4000, 5000])
    })
  )

  it.effect("batch termination", () =>
    Effect.gen(function* () {
      for (const interval of [0, 10]) {
        let batchCounts = 0
        const step = Effect.sync((): StepResult => {
          batchCounts += 1
          return batchCounts < 3 ? "ran" : "stop"
        })
        const fiber = yield* Effect.forkChild(runTrigger(Trigger.ProcessingTime(interval), step, Effect.void))
        yield* TestClock.adjust(100)
        yield* Fiber.join(fiber)
        assert.strictEqual(batchCounts, 3, `interval ${interval}`)
      }
    })
  )

  it.effect("Once runs one step; AvailableNow runs steps until one finds nothing to do", () =>
    Effect.gen(function* () {
      let once = 0
      const countOnce = Effect.sync((): StepResult => {
        once++
        return "ran"
      })
      yield* runTrigger(Trigger.Once(), countOnce, Effect.void)
      assert.strictEqual(once, 1)
      let n = 0
      yield* runTrigger(
        Trigger.AvailableNow(),
        Effect.sync((): StepResult => (++n < 4 ? "ran" : "idle")),
        Effect.void
      )
      assert.strictEqual(n, 4)
    })
  )
})

describe("the default trigger", () => {
  it.effect("runs the next batch as soon as data arrives, without the clock moving", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Value)
      const progressed = yield* Deferred.make<number>()
      yield* spark.streams.addListener({
        onQueryProgress: (e) => Deferred.succeed(progressed, e.progress.batchId).pipe(Effect.asVoid)
      })
      const query = yield* input.toDF().writeStream.format("memory").queryName("default_trigger").start()
      yield* input.addData(v(1, 2))
      // No processAllAvailable, no clock: the arrival of data wakes the query.
      assert.strictEqual(yield* Deferred.await(progressed), 0)
      assert.deepStrictEqual(yield* spark.table("default_trigger").collect(), v(1, 2))
      assert.strictEqual(yield* Clock.currentTimeMillis, 0)
      yield* query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("logs no batch while there is no new data", () =>
    Effect.gen(function* () {
      const dir = tempDir("idle")
      const input = yield* MemoryStream.make(Value)
      const query = yield* input.toDF().writeStream.format("noop").option("checkpointLocation", dir).start()
      yield* input.addData(v(1))
      yield* query.processAllAvailable()
      // The idle loop polls on the clock; many polls later nothing more is logged.
      yield* TestClock.adjust("10 seconds")
      yield* query.processAllAvailable()
      assert.deepStrictEqual(yield* logIds(join(dir, "offsets")), [0])
      assert.deepStrictEqual(yield* logIds(join(dir, "commits")), [0])
      yield* input.addData(v(2))
      yield* query.processAllAvailable()
      assert.deepStrictEqual(yield* logIds(join(dir, "offsets")), [0, 1])
      // Spark 3.5+ (`ProgressReporter.updateIdleness`): an idle trigger is recorded (no input,
      // the id of the batch it would have run) once the no-data interval (10 s) has passed since the last
      // batch; it is not a batch and not logged.
      const progress = yield* query.recentProgress()
      assert.deepStrictEqual(
        progress.map((p) => [p.batchId, p.numInputRows, p.timestamp]),
        [
          [0, 1, "1970-01-01T00:00:00.000Z"],
          [1, 0, "1970-01-01T00:00:10.000Z"],
          [1, 1, "1970-01-01T00:00:10.000Z"]
        ]
      )
      yield* query.stop()
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("Trigger.ProcessingTime through a query", () => {
  it.effect("minimize delay between batch construction and execution", () =>
    Effect.gen(function* () {
      const dir = tempDir("minimize-delay")
      const input = yield* MemoryStream.make(Value)
      const latest = (log: "offsets" | "commits") => Effect.map(logIds(join(dir, log)), (ids) => ids.at(-1) ?? -1)
      const logsAt = (n: number) =>
        AssertOnQuery(
          () => Effect.map(Effect.all([latest("offsets"), latest("commits")]), ([o, c]) => o === n && c === n),
          `offset and commit logs end at batch ${n}`
        )
      const withData = (q: StreamingQuery) =>
        Effect.map(q.recentProgress(), (ps) => ps.filter((p) => p.numInputRows > 0))
      const lastBatch = (n: number) =>
        AssertOnQuery((q) => Effect.map(withData(q), (ps) => ps.at(-1)?.batchId === n), `the last batch run is ${n}`)
      const trigger = Trigger.ProcessingTime("10 seconds")
      yield* testStream(input.toDF(), "append", [
        StartStream({ trigger, checkpointLocation: dir }),
        AddData(input, ...v(1, 2, 3)),
        AdvanceClock("10 seconds"),
        CheckAnswer(...v(1, 2, 3)),
        logsAt(0),
        lastBatch(0),
        AddData(input, ...v(4, 5, 6)),
        AdvanceClock("10 seconds"),
        CheckAnswer(...v(1, 2, 3, 4, 5, 6)),
        logsAt(1),
        lastBatch(1),
        // No new data: however often the clock fires, no batch id is logged.
        AdvanceClock("10 seconds"),
        AdvanceClock("10 seconds"),
        AdvanceClock("10 seconds"),
        CheckAnswer(...v(1, 2, 3, 4, 5, 6)),
        logsAt(1),
        lastBatch(1),
        StopStream,
        StartStream({ trigger, checkpointLocation: dir }),
        // Batch 1 is committed: the restart does not run it again.
        AdvanceClock("10 seconds"),
        CheckAnswer(...v(1, 2, 3, 4, 5, 6)),
        AssertOnQuery((q) => Effect.map(withData(q), (ps) => ps.length === 0), "no batch ran since the restart"),
        logsAt(1),
        AddData(input, ...v(7, 8, 9)),
        AdvanceClock("10 seconds"),
        CheckAnswer(...v(1, 2, 3, 4, 5, 6, 7, 8, 9)),
        logsAt(2),
        lastBatch(2)
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a batch that runs late starts the next one at once, then the grid realigns", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const starts: Array<readonly [number, number]> = []
      const query = yield* input
        .toDF()
        .writeStream.trigger(Trigger.ProcessingTime("1 second"))
        .foreachBatch((_df, batchId) =>
          Effect.gen(function* () {
            starts.push([batchId, yield* Clock.currentTimeMillis])
            if (batchId === 0) {
              // Batch 0 brings the data of batch 1, then takes 1.5 s.
              yield* input.addData(v(2))
              yield* TestClock.adjust("1500 millis")
            }
          })
        )
        .start()
      yield* quiescent(query) // the first trigger (t = 0) found nothing; waiting for 1000
      yield* input.addData(v(1))
      yield* TestClock.adjust("1 second")
      yield* quiescent(query)
      // Batch 0 at 1000 ended at 2500, past 2000: batch 1 started at once; the next trigger is 3000.
      assert.deepStrictEqual(starts, [
        [0, 1000],
        [1, 2500]
      ])
      assert.strictEqual(yield* Clock.currentTimeMillis, 2500)
      yield* input.addData(v(3))
      yield* TestClock.adjust("499 millis")
      yield* quiescent(query)
      assert.strictEqual(starts.length, 2)
      yield* TestClock.adjust("1 milli")
      yield* quiescent(query)
      assert.deepStrictEqual(starts, [
        [0, 1000],
        [1, 2500],
        [2, 3000]
      ])
      const progress = yield* query.recentProgress()
      assert.deepStrictEqual(
        progress.map((p) => [p.batchId, p.timestamp]),
        [
          [0, "1970-01-01T00:00:00.000Z"], // the idle first trigger
          [0, "1970-01-01T00:00:01.000Z"],
          [1, "1970-01-01T00:00:02.500Z"],
          [2, "1970-01-01T00:00:03.000Z"]
        ]
      )
      assert.strictEqual(progress[0].numInputRows, 0)
      assert.strictEqual(progress[1].durationMs.triggerExecution, 1500)
      yield* query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("Trigger.Once", () => {
  it.effect("OneTime trigger, commit log, and exception", () =>
    Effect.gen(function* () {
      const dir = tempDir("once")
      const input = yield* MemoryStream.make(Value)
      const mapped = input.toDF().map((r) => {
        if (r.value === 0) throw new Error("/ by zero")
        return { value: Math.trunc(6 / r.value) }
      }, Value)
      const once = { trigger: Trigger.Once(), checkpointLocation: dir }
      const ended = AssertOnQuery((q) => Effect.map(q.isActive(), (a) => !a), "the query has ended by itself")
      yield* testStream(mapped, "append", [
        AddData(input, ...v(1, 2)),
        StartStream(once),
        CheckAnswer(...v(6, 3)),
        ended,
        AssertOnQuery((q) => q.awaitTermination(), "awaitTermination returns true"),
        StopStream,
        Execute(
          Effect.map(Effect.all([logIds(join(dir, "offsets")), logIds(join(dir, "commits"))]), ([o, c]) =>
            assert.deepStrictEqual([o, c], [[0], [0]])
          )
        ),
        // Blow away the commit log: the next run falls back to the offset log and reprocesses batch 0.
        Execute(removeDir(join(dir, "commits"))),
        StartStream(once),
        CheckAnswer(...v(6, 3)),
        AssertOnQuery(
          (q) =>
            Effect.map(q.recentProgress(), (ps) => ps.length === 1 && ps[0].batchId === 0 && ps[0].numInputRows === 2),
          "batch 0 ran again, alone"
        ),
        StopStream,
        AddData(input, ...v(3)),
        StartStream(once),
        CheckLastBatch(...v(2)),
        AssertOnQuery((q) => Effect.map(q.lastProgress(), (p) => p?.batchId === 1), "the commit log is back in place"),
        StopStream,
        AddData(input, ...v(0)),
        StartStream(once),
        ExpectFailure(undefined, "/ by zero"),
        ended
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("one batch of everything available, then awaitTermination returns", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Value)
      yield* input.addData(v(1))
      yield* input.addData(v(2, 3))
      const query = yield* input.toDF().writeStream.format("memory").queryName("once").trigger(Trigger.Once()).start()
      assert.isTrue(yield* query.awaitTermination())
      assert.isFalse(yield* query.isActive())
      // processAllAvailable does not block on a query that has ended
      yield* query.processAllAvailable()
      assert.deepStrictEqual(yield* spark.table("once").collect(), v(1, 2, 3))
      const progress = yield* query.recentProgress()
      assert.deepStrictEqual(
        progress.map((p) => [p.batchId, p.numInputRows]),
        [[0, 3]]
      )
      assert.strictEqual((yield* query.status()).message, "Stopped")
      assert.deepStrictEqual(yield* spark.streams.active(), [])
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("processAllAvailable on a query that ends by itself", () => {
  it.effect("processAllAvailable should not block forever when a query is stopped (Once, AvailableNow)", () =>
    Effect.gen(function* () {
      for (const trigger of [Trigger.Once(), Trigger.AvailableNow()]) {
        const input = yield* MemoryStream.make(Value)
        yield* input.addData(v(1))
        const query = yield* input.toDF().writeStream.trigger(trigger).format("console").start()
        yield* query.processAllAvailable()
        assert.isTrue(yield* query.awaitTermination())
      }
      assert.strictEqual((yield* TestConsole.logLines).length, 2)
    }).pipe(Effect.provide(Session.layer()), Effect.provide(TestConsole.layer))
  )
})

describe("Trigger.AvailableNow", () => {
  it.effect("MemoryStream: everything available at start in one batch, then the query ends", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Value)
      const dir = tempDir("available-now")
      const run = () =>
        input
          .toDF()
          .writeStream.format("memory")
          .queryName("available_now")
          .trigger(Trigger.AvailableNow())
          .option("checkpointLocation", dir)
          .start()
      yield* input.addData(v(1))
      yield* input.addData(v(2))
      yield* input.addData(v(3))
      const q1 = yield* run()
      assert.isTrue(yield* q1.awaitTermination())
      assert.strictEqual((yield* q1.recentProgress()).filter((p) => p.numInputRows !== 0).length, 1)
      assert.deepStrictEqual(yield* spark.table("available_now").collect(), v(1, 2, 3))
      yield* input.addData(v(4))
      yield* input.addData(v(5, 6))
      const q2 = yield* run()
      assert.isTrue(yield* q2.awaitTermination())
      const p2 = yield* q2.recentProgress()
      assert.deepStrictEqual(
        p2.map((p) => [p.batchId, p.numInputRows]),
        [[1, 3]]
      )
      assert.deepStrictEqual(yield* spark.table("available_now").collect(), v(1, 2, 3, 4, 5, 6))
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect(
    "rate-micro-batch: Once and AvailableNow each read the next rowsPerBatch, between ProcessingTime runs",
    () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const input = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 10).load().select("value")
        const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => ({ value: a + i }))
        for (const trigger of [Trigger.Once(), Trigger.AvailableNow()]) {
          const dir = tempDir("rate-micro-batch")
          const tick = Trigger.ProcessingTime("10 millis")
          yield* testStream(input, "append", [
            StartStream({ trigger: tick, checkpointLocation: dir }),
            CheckLastBatch(...range(0, 10)),
            StopStream,
            StartStream({ trigger, checkpointLocation: dir }),
            CheckLastBatch(...range(10, 20)),
            AssertOnQuery((q) => Effect.map(q.recentProgress(), (ps) => ps.length === 1), "one batch"),
            AssertOnQuery((q) => q.awaitTermination(), "then it stops"),
            StopStream,
            StartStream({ trigger: tick, checkpointLocation: dir }),
            CheckLastBatch(...range(20, 30)),
            StopStream
          ])
          yield* removeDir(dir)
        }
      }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a source with a read limit is read in several batches, up to what was there at start", () =>
    Effect.gen(function* () {
      // A source with admission control (Spark's SupportsTriggerAvailableNow): `max` rows per
      // batch, and `prepareForTriggerAvailableNow` fixes the end offset.
      const CountingSchema = T.struct([T.field("value", T.LongType, false)])
      let available = 0
      let availableNowEnd: number | undefined
      const asNumber = (o: unknown) => o as number
      const source = (maxRows: number): MicroBatchSource => ({
        description: `Counting[max=${maxRows}]`,
        schema: CountingSchema,
        initialOffset: () => Effect.succeed(0),
        defaultReadLimit: (): ReadLimit => ({ _tag: "MaxRows", maxRows }),
        latestOffset: (start, limit) =>
          Effect.sync(() => {
            const end = availableNowEnd ?? available
            return limit._tag === "MaxRows" ? Math.min(end, asNumber(start) + limit.maxRows) : end
          }),
        getBatch: (start, end) =>
          Effect.sync(() =>
            Array.from({ length: asNumber(end) - asNumber(start) }, (_, i) => [asNumber(start) + i + 1])
          ),
        commit: () => Effect.void,
        decodeOffset: (json) =>
          typeof json === "number"
            ? Effect.succeed(json)
            : Effect.fail(
                new ConnectorError({
                  connector: "counting",
                  domain: "internal",
                  retryable: false,
                  message: "bad offset"
                })
              ),
        prepareForTriggerAvailableNow: () =>
          Effect.sync(() => {
            availableNowEnd = available
          }),
        stop: () => Effect.void
      })
      registerSourceFormat({
        name: "test-counting",
        schema: () => CountingSchema,
        create: (ctx) => Effect.succeed(source(Number(ctx.options.maxRows ?? "1")))
      })
      const spark = yield* Session
      const batches: Array<ReadonlyArray<unknown>> = []
      available = 5
      const df = spark.readStream.format("test-counting").option("maxRows", 2).load() as unknown as DataFrame<{
        value: number
      }>
      const query = yield* df.writeStream
        .trigger(Trigger.AvailableNow())
        .foreachBatch((batch, _id) =>
          Effect.gen(function* () {
            batches.push((yield* batch.collect()).map((r) => r.value))
            available = 100 // data that arrives after the start is not part of this run
          })
        )
        .start()
      assert.isTrue(yield* query.awaitTermination())
      assert.deepStrictEqual(batches, [[1, 2], [3, 4], [5]])
    }).pipe(Effect.provide(Session.layer()))
  )
})
