/**
 * Receivers (Spark's `ReceiverSuite` ideas): stored items go into the next batch; `restart`
 * stops the receiver and starts it again after `spark.streaming.receiverRestartDelay` (2 s on
 * Effect's clock); `stop` stops it for good; `reportError` reaches the listeners; a graceful
 * stop runs the data already stored; releasing the context stops the receiver.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { TestClock } from "effect/testing"
import { Receiver, type ReceiverInfo, StreamingContext } from "../../dstream/mod.ts"
import { Session } from "../../mod.ts"
import { batchDone, sessionLayer } from "./DStreamTestKit.ts"

class TestReceiver extends Receiver<number> {
  starts = 0
  stops = 0
  onStart(): void {
    this.starts++
  }
  onStop(): void {
    this.stops++
  }
}

/** Lets forked fibers (the receiver supervisor) run until they block. */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

const advanceTo = (ssc: StreamingContext, time: number, by: number) =>
  Effect.gen(function* () {
    const done = yield* batchDone(ssc, time)
    yield* TestClock.adjust(by)
    yield* Deferred.await(done)
  })

describe("Receiver", () => {
  it.effect("stores into the next batch, restarts after the delay, reports errors, stops gracefully", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const receiver = new TestReceiver()
      const batches: Array<readonly [number, Array<number>]> = []
      const events: Array<string> = []
      const infos: Array<ReceiverInfo> = []
      ssc.addStreamingListener({
        onReceiverStarted: ({ receiverInfo }) => events.push(`started ${receiverInfo.streamId} ${receiverInfo.name}`),
        onReceiverStopped: ({ receiverInfo }) => {
          events.push(`stopped: ${receiverInfo.lastErrorMessage}`)
          infos.push(receiverInfo)
        },
        onReceiverError: ({ receiverInfo }) => {
          events.push(`error: ${receiverInfo.lastErrorMessage} - ${receiverInfo.lastError}`)
          infos.push(receiverInfo)
        }
      })
      ssc.receiverStream(receiver).foreachRDD((rdd, time) => {
        batches.push([time, rdd.collect()])
      })
      yield* ssc.start()
      yield* settle
      assert.isTrue(receiver.isStarted())
      assert.strictEqual(receiver.streamId, 0)
      receiver.store(1)
      receiver.store(2)
      yield* advanceTo(ssc, 1000, 1000)
      receiver.storeAll([3])
      receiver.restart("test restart", new Error("boom"))
      yield* settle
      assert.isTrue(receiver.isStopped())
      assert.strictEqual(receiver.stops, 1)
      yield* advanceTo(ssc, 2000, 1000)
      assert.strictEqual(receiver.starts, 1)
      yield* advanceTo(ssc, 3000, 1000)
      yield* settle
      // restarted 2 s (of Effect's clock) after the restart request
      assert.strictEqual(receiver.starts, 2)
      assert.isTrue(receiver.isStarted())
      receiver.store(4)
      receiver.reportError("bad record", new Error("x"))
      yield* ssc.stop({ stopGracefully: true })
      assert.isTrue(receiver.isStopped())
      assert.deepStrictEqual(batches, [
        [1000, [1, 2]],
        [2000, [3]],
        [3000, []],
        [4000, [4]]
      ])
      assert.deepStrictEqual(events, [
        "started 0 TestReceiver",
        "stopped: Restarting receiver with delay 2000ms: test restart",
        "started 0 TestReceiver",
        "error: bad record - Error: x",
        "stopped: Stopped by driver"
      ])
      assert.strictEqual(infos[0].lastError, "Error: boom")
      assert.isFalse(infos[0].active)
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("spark.streaming.receiver.maxRate caps the records per batch", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.streaming.receiver.maxRate", 2)
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const receiver = new TestReceiver()
      const batches: Array<Array<number>> = []
      ssc.receiverStream(receiver).foreachRDD((rdd) => {
        batches.push(rdd.collect())
      })
      yield* ssc.start()
      yield* settle
      receiver.storeAll([1, 2, 3, 4, 5])
      yield* advanceTo(ssc, 3000, 3000)
      yield* ssc.stop()
      assert.deepStrictEqual(batches, [[1, 2], [3, 4], [5]])
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("a receiver that stops itself stays stopped while the context runs", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const receiver = new TestReceiver()
      ssc
        .receiverStream(receiver)
        .count()
        .foreachRDD(() => {})
      yield* ssc.start()
      yield* settle
      receiver.stop("done")
      yield* settle
      assert.isTrue(receiver.isStopped())
      yield* advanceTo(ssc, 3000, 3000)
      assert.strictEqual(receiver.starts, 1)
      assert.strictEqual(yield* ssc.getState(), "ACTIVE")
      yield* ssc.stop()
    }).pipe(Effect.provide(sessionLayer))
  )

  it.effect("a receiver whose onStart throws is stopped with the error", () =>
    Effect.gen(function* () {
      class Failing extends Receiver<string> {
        onStart(): void {
          throw new Error("cannot connect")
        }
        onStop(): void {}
      }
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const receiver = new Failing()
      const stopped: Array<ReceiverInfo> = []
      ssc.addStreamingListener({ onReceiverStopped: ({ receiverInfo }) => stopped.push(receiverInfo) })
      ssc.receiverStream(receiver).print()
      yield* ssc.start()
      yield* settle
      assert.isTrue(receiver.isStopped())
      assert.strictEqual(stopped[0]?.lastErrorMessage, "Error starting receiver")
      assert.strictEqual(stopped[0]?.lastError, "Error: cannot connect")
      yield* ssc.stop()
    }).pipe(Effect.provide(sessionLayer))
  )
})
