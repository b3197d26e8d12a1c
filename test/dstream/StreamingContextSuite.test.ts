/**
 * Spark's `StreamingContextSuite` (state transitions, errors, awaitTermination) and
 * `StreamingListenerSuite` (BatchInfo), on the test clock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { type BatchInfo, type DStream, StreamingContext } from "../../dstream/mod.ts"
import { batchDone, removeDir, runBatches, sessionLayer, tempDir } from "./DStreamTestKit.ts"

const make = StreamingContext.make({ batchDuration: "1 second" })

const withOutput = (ssc: StreamingContext): DStream<number> => {
  const s = ssc.queueStream<number>([])
  s.foreachRDD(() => {})
  return s
}

const pairs = (ssc: StreamingContext) => ssc.queueStream<readonly [string, number]>([])

describe("StreamingContextSuite", () => {
  it.effect("state matching: INITIALIZED, ACTIVE, STOPPED", () =>
    Effect.gen(function* () {
      const ssc = yield* make
      withOutput(ssc)
      assert.strictEqual(yield* ssc.getState(), "INITIALIZED")
      yield* ssc.start()
      assert.strictEqual(yield* ssc.getState(), "ACTIVE")
      // starting an active context does nothing
      yield* ssc.start()
      assert.strictEqual(yield* ssc.getState(), "ACTIVE")
      yield* ssc.stop()
      assert.strictEqual(yield* ssc.getState(), "STOPPED")
      // stop is idempotent
      yield* ssc.stop()
      assert.strictEqual(yield* ssc.getState(), "STOPPED")
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("start after stop fails", () =>
    Effect.gen(function* () {
      const ssc = yield* make
      withOutput(ssc)
      yield* ssc.start()
      yield* ssc.stop()
      const error = yield* Effect.flip(ssc.start())
      assert.strictEqual(error._tag, "IllegalStateError")
      assert.strictEqual(error.message, "StreamingContext has already been stopped")
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("stop before start", () =>
    Effect.gen(function* () {
      const ssc = yield* make
      withOutput(ssc)
      yield* ssc.stop()
      assert.strictEqual(yield* ssc.getState(), "STOPPED")
      const error = yield* Effect.flip(ssc.start())
      assert.strictEqual(error.message, "StreamingContext has already been stopped")
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("start without output operations fails", () =>
    Effect.gen(function* () {
      const ssc = yield* make
      ssc.queueStream<number>([]).map((x) => x)
      const error = yield* Effect.flip(ssc.start())
      assert.strictEqual(error.message, "requirement failed: No output operations registered, so nothing to execute")
      assert.strictEqual(yield* ssc.getState(), "INITIALIZED")
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("adding inputs, transformations and outputs after start or stop is not supported", () =>
    Effect.gen(function* () {
      const ssc = yield* make
      const input = withOutput(ssc)
      yield* ssc.start()
      const mapped = input.map((x) => x + 1)
      assert.strictEqual(
        mapped.buildError?.message,
        "Adding new inputs, transformations, and output operations after starting a context is not supported"
      )
      const late = ssc.queueStream<number>([])
      assert.strictEqual(late.buildError?._tag, "IllegalStateError")
      const error = yield* Effect.flip(ssc.awaitTermination())
      assert.strictEqual(
        error.message,
        "Adding new inputs, transformations, and output operations after starting a context is not supported"
      )
      yield* ssc.stop()
      assert.strictEqual(
        input.filter(() => true).buildError?.message,
        "Adding new inputs, transformations, and output operations after stopping a context is not supported"
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("batches run on the batch grid of Effect's clock: 1000, 2000, 3000 ms", () =>
    Effect.gen(function* () {
      const ssc = yield* make
      const times: Array<number> = []
      ssc.queueStream<number>([]).foreachRDD((_rdd, time) => {
        times.push(time)
      })
      yield* runBatches(ssc, 3)
      yield* ssc.stop()
      assert.deepStrictEqual(times, [1000, 2000, 3000])
      // started at 3500: the next multiple of the batch duration is 4000
      const later = yield* make
      const times2: Array<number> = []
      later.queueStream<number>([]).foreachRDD((_rdd, time) => {
        times2.push(time)
      })
      yield* TestClock.adjust("500 millis")
      const done = yield* batchDone(later, 5000)
      yield* later.start()
      yield* TestClock.adjust("1500 millis")
      yield* Deferred.await(done)
      yield* later.stop()
      assert.deepStrictEqual(times2, [4000, 5000])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("output operations run in the order they were registered", () =>
    Effect.gen(function* () {
      const ssc = yield* make
      const order: Array<string> = []
      const s = ssc.queueStream([[1]])
      s.foreachRDD(() => {
        order.push("first")
      })
      s.map((x) => x).foreachRDD(() => Promise.resolve().then(() => order.push("second")))
      s.foreachRDD(() => Effect.sync(() => order.push("third")))
      yield* runBatches(ssc, 1)
      yield* ssc.stop()
      assert.deepStrictEqual(order, ["first", "second", "third"])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("awaitTerminationOrTimeout: false on timeout, true once stopped", () =>
    Effect.gen(function* () {
      const ssc = yield* make
      withOutput(ssc)
      yield* ssc.start()
      const waiting = yield* Effect.forkChild(ssc.awaitTerminationOrTimeout(2500))
      yield* TestClock.adjust("3 seconds")
      assert.isFalse(yield* Fiber.join(waiting))
      const waiting2 = yield* Effect.forkChild(ssc.awaitTerminationOrTimeout(10_000))
      yield* ssc.stop()
      assert.isTrue(yield* Fiber.join(waiting2))
      assert.isUndefined(yield* ssc.awaitTermination())
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("awaitTermination with an error in a job raises it", () =>
    Effect.gen(function* () {
      const ssc = yield* make
      ssc.queueStream([[1], [2]]).foreachRDD((rdd) => {
        if (rdd.collect()[0] === 2) throw new Error("Oops")
      })
      yield* ssc.start()
      const waiting = yield* Effect.forkChild(Effect.flip(ssc.awaitTerminationOrTimeout(10_000)))
      yield* TestClock.adjust("2 seconds")
      const error = yield* Fiber.join(waiting)
      assert.strictEqual(error._tag, "StreamingQueryError")
      assert.strictEqual(error.message, "Job failed for batch time 2000 ms: Error: Oops")
      if (error._tag === "StreamingQueryError") assert.strictEqual(error.batchId, 2000)
      yield* ssc.stop()
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("a failing Effect in foreachRDD fails the batch", () =>
    Effect.gen(function* () {
      const ssc = yield* make
      ssc.queueStream([[1]]).foreachRDD(() => Effect.fail("boom"))
      yield* ssc.start()
      yield* TestClock.adjust("1 second")
      const error = yield* Effect.flip(ssc.awaitTermination())
      assert.strictEqual(error.message, "Job failed for batch time 1000 ms: boom")
      yield* ssc.stop()
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("stop from inside an output operation ends the context after that batch", () =>
    Effect.gen(function* () {
      const ssc = yield* make
      const times: Array<number> = []
      ssc.queueStream([[1], [2], [3]]).foreachRDD((rdd, time) => {
        times.push(time)
        return rdd.collect()[0] === 2 ? ssc.stop() : undefined
      })
      yield* ssc.start()
      yield* TestClock.adjust("5 seconds")
      yield* ssc.awaitTermination()
      assert.strictEqual(yield* ssc.getState(), "STOPPED")
      assert.deepStrictEqual(times, [1000, 2000])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("remember can be set once", () =>
    Effect.gen(function* () {
      const ssc = yield* make
      withOutput(ssc)
      ssc.remember("10 seconds")
      ssc.remember("20 seconds")
      const error = yield* Effect.flip(ssc.start())
      assert.strictEqual(
        error.message,
        "requirement failed: Remember duration already set as 10000 ms. Cannot set it again."
      )
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("checkpoint interval checks (Spark's DStream.validateAtStart)", () =>
    Effect.gen(function* () {
      const dir = tempDir("cpint")
      const ssc = yield* make
      ssc.checkpoint(dir)
      pairs(ssc)
        .reduceByKeyAndWindow(
          (a, b) => a + b,
          (a, b) => a - b,
          "2 seconds",
          "1 second"
        )
        .checkpoint("500 millis")
        .print()
      const error = yield* Effect.flip(ssc.start())
      assert.strictEqual(
        error.message,
        "requirement failed: The checkpoint interval for ReducedWindowedDStream has been set to 500 ms which is lower than its slide time (1000 ms). Please set it to at least 1000 ms."
      )
      const ssc2 = yield* make
      ssc2.checkpoint(dir)
      pairs(ssc2)
        .reduceByKeyAndWindow(
          (a, b) => a + b,
          (a, b) => a - b,
          "2 seconds",
          "1 second"
        )
        .checkpoint("1500 millis")
        .print()
      const error2 = yield* Effect.flip(ssc2.start())
      assert.strictEqual(
        error2.message,
        "requirement failed: The checkpoint interval for ReducedWindowedDStream has been set to  1500 ms which not a multiple of its slide time (1000 ms). Please set it to a multiple of 1000 ms."
      )
      yield* removeDir(dir)
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("an invalid batch duration fails make", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(StreamingContext.make({ batchDuration: "soon" }))
      assert.strictEqual(error.message, "Invalid batch duration: soon")
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("listeners get Spark's BatchInfo", () =>
    Effect.gen(function* () {
      const ssc = yield* make
      const completed: Array<BatchInfo> = []
      const events: Array<string> = []
      ssc.addStreamingListener({
        onStreamingStarted: ({ time }) => events.push(`started ${time}`),
        onBatchSubmitted: ({ batchInfo }) => events.push(`submitted ${batchInfo.batchTime}`),
        onBatchStarted: ({ batchInfo }) => events.push(`started batch ${batchInfo.batchTime}`),
        onOutputOperationStarted: ({ outputOperationInfo }) => events.push(`op ${outputOperationInfo.id} started`),
        onOutputOperationCompleted: ({ outputOperationInfo }) => events.push(`op ${outputOperationInfo.id} completed`),
        onBatchCompleted: ({ batchInfo }) => {
          events.push(`completed ${batchInfo.batchTime}`)
          completed.push(batchInfo)
        }
      })
      const s = ssc.queueStream([[1, 2, 3], [4]])
      s.print(1)
      s.count().foreachRDD(() => {})
      yield* runBatches(ssc, 2)
      yield* ssc.stop()
      assert.deepStrictEqual(events.slice(0, 7), [
        "started 0",
        "submitted 1000",
        "started batch 1000",
        "op 0 started",
        "op 0 completed",
        "op 1 started",
        "op 1 completed"
      ])
      assert.deepStrictEqual(
        completed.map((b) => [
          b.batchTime,
          b.numRecords,
          b.schedulingDelay,
          b.processingDelay,
          b.totalDelay,
          b.outputOperationInfos.size
        ]),
        [
          [1000, 3, 0, 0, 0, 2],
          [2000, 1, 0, 0, 0, 2]
        ]
      )
      assert.strictEqual(completed[0].outputOperationInfos.get(0)?.description, "print")
      assert.strictEqual(completed[0].outputOperationInfos.get(1)?.failureReason, undefined)
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("releasing the session stops its StreamingContexts", () =>
    Effect.gen(function* () {
      let ssc: StreamingContext | undefined
      yield* Effect.scoped(
        Effect.gen(function* () {
          const ctx = yield* Layer.build(sessionLayer)
          ssc = yield* make.pipe(Effect.provideContext(ctx))
          withOutput(ssc)
          yield* ssc.start()
          assert.strictEqual(yield* ssc.getState(), "ACTIVE")
        })
      )
      assert.strictEqual(yield* (ssc as StreamingContext).getState(), "STOPPED")
    })
  )
})
