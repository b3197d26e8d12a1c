/**
 * `socketTextStream` against a real `node:net` server in the test: lines go into the batch
 * after they arrive; when the server closes the connection the receiver restarts after the
 * delay and reconnects (Spark's `SocketReceiver`); a refused connection restarts too.
 */
import { createServer, type Server, type Socket } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { TestClock } from "effect/testing"
import { type ReceiverInfo, StreamingContext } from "../../dstream/mod.ts"
import { batchDone, sessionLayer } from "./DStreamTestKit.ts"

/** A server that answers the n-th connection with `replies[n]` (then closes, unless it is the last). */
const serve = (replies: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{ server: Server; port: number; sockets: Array<Socket> }>((resolve) => {
          const sockets: Array<Socket> = []
          let n = 0
          const server = createServer((socket) => {
            sockets.push(socket)
            const i = n++
            socket.write(replies[Math.min(i, replies.length - 1)])
            if (i < replies.length - 1) socket.end()
          })
          server.listen(0, "127.0.0.1", () => {
            const address = server.address()
            resolve({ server, port: typeof address === "object" && address !== null ? address.port : 0, sockets })
          })
        })
    ),
    ({ server, sockets }) =>
      Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            for (const s of sockets) s.destroy()
            server.close(() => resolve())
          })
      )
  )

describe("socketTextStream", () => {
  it.effect("counts words from a TCP server and reconnects after the server closes", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { port } = yield* serve(["hello world\nhello spark\r\npartial", "again\n", "third\n"])
        const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
        const stopped = yield* Deferred.make<ReceiverInfo>()
        const stoppedAgain = yield* Deferred.make<void>()
        let stops = 0
        ssc.addStreamingListener({
          onReceiverStopped: ({ receiverInfo }) => {
            if (++stops === 1) Deferred.doneUnsafe(stopped, Effect.succeed(receiverInfo))
            else Deferred.doneUnsafe(stoppedAgain, Effect.void)
          }
        })
        const batches: Array<readonly [number, Array<readonly [string, number]>]> = []
        ssc
          .socketTextStream("127.0.0.1", port)
          .flatMap((line) => line.split(" "))
          .map((w) => [w, 1] as const)
          .reduceByKey((a, b) => a + b)
          .foreachRDD((rdd, time) => {
            batches.push([time, rdd.collect()])
          })
        yield* ssc.start()
        // Everything the server sent is stored before the receiver sees the end of the stream.
        const info = yield* Deferred.await(stopped)
        assert.strictEqual(
          info.lastErrorMessage,
          "Restarting receiver with delay 2000ms: Socket data stream had no more data"
        )
        const first = yield* batchDone(ssc, 1000)
        yield* TestClock.adjust("1 second")
        yield* Deferred.await(first)
        assert.deepStrictEqual(batches, [
          [
            1000,
            [
              ["hello", 2],
              ["world", 1],
              ["spark", 1],
              ["partial", 1]
            ]
          ]
        ])
        // The restart delay (2 s from the stop, on Effect's clock) has passed at 2000 ms: the
        // receiver reconnects, gets "again" and sees the server close the connection again.
        yield* TestClock.adjust("1 second")
        yield* Deferred.await(stoppedAgain)
        // A graceful stop runs what was received as one more batch.
        yield* ssc.stop({ stopGracefully: true })
        assert.deepStrictEqual(batches.slice(1), [
          [2000, []],
          [3000, [["again", 1]]]
        ])
      })
    ).pipe(Effect.provide(sessionLayer))
  )

  it.effect("a refused connection restarts the receiver with Spark's message", () =>
    Effect.gen(function* () {
      // A port nobody listens on: bind, note the port, close.
      const port = yield* Effect.promise(
        () =>
          new Promise<number>((resolve) => {
            const s = createServer()
            s.listen(0, "127.0.0.1", () => {
              const a = s.address()
              s.close(() => resolve(typeof a === "object" && a !== null ? a.port : 0))
            })
          })
      )
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const stopped = yield* Deferred.make<ReceiverInfo>()
      ssc.addStreamingListener({
        onReceiverStopped: ({ receiverInfo }) => Deferred.doneUnsafe(stopped, Effect.succeed(receiverInfo))
      })
      ssc.socketTextStream("127.0.0.1", port).print()
      yield* ssc.start()
      const info = yield* Deferred.await(stopped)
      assert.strictEqual(
        info.lastErrorMessage,
        `Restarting receiver with delay 2000ms: Error connecting to 127.0.0.1:${port}`
      )
      assert.include(info.lastError, "ECONNREFUSED")
      yield* ssc.stop()
    }).pipe(Effect.provide(sessionLayer))
  )
})
