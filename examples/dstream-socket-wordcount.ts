/**
 * Spark's `NetworkWordCount` on the DStream API (`node examples/dstream-socket-wordcount.ts`).
 *
 * Starts its own TCP server (node:net) that writes a few lines of text, one every 300 ms, to
 * whoever connects — the part `nc -lk 9999` plays in Spark's example. A `StreamingContext`
 * with 1-second batches reads the lines through `socketTextStream`, counts the words of each
 * batch with `flatMap` / `map` / `reduceByKey`, and prints every batch in Spark's `print()`
 * format. It stops (gracefully, running the lines already received) after a few seconds.
 */
import { createServer, type Socket } from "node:net"
import { Effect } from "effect"
import { StreamingContext } from "../dstream/mod.ts"
import { Session } from "../mod.ts"

const LINES = [
  "to be or not to be",
  "that is the question",
  "whether tis nobler in the mind to suffer",
  "the slings and arrows of outrageous fortune",
  "or to take arms against a sea of troubles",
  "and by opposing end them",
  "to die to sleep",
  "no more"
]

/** A server on a free port that writes LINES, one every 300 ms, to each client. */
const startServer = Effect.acquireRelease(
  Effect.callback<{ readonly port: number; readonly close: () => void }>((resume) => {
    const sockets = new Set<Socket>()
    const timers = new Set<ReturnType<typeof setInterval>>()
    const server = createServer((socket) => {
      sockets.add(socket)
      let i = 0
      const timer = setInterval(() => {
        if (i < LINES.length) socket.write(`${LINES[i++]}\n`)
        else clearInterval(timer)
      }, 300)
      timers.add(timer)
      socket.on("error", () => {})
      socket.on("close", () => {
        clearInterval(timer)
        sockets.delete(socket)
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resume(
        Effect.succeed({
          port,
          close: () => {
            for (const t of timers) clearInterval(t)
            for (const s of sockets) s.destroy()
            server.close()
          }
        })
      )
    })
  }),
  (server) => Effect.sync(() => server.close())
)

const program = Effect.gen(function* () {
  const { port } = yield* startServer
  const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
  const lines = ssc.socketTextStream("127.0.0.1", port)
  const words = lines.flatMap((line) => line.split(" ").filter((w) => w.length > 0))
  const wordCounts = words.map((w) => [w, 1] as const).reduceByKey((a, b) => a + b)
  wordCounts.print()
  yield* ssc.start()
  yield* ssc.awaitTerminationOrTimeout(3_500)
  yield* ssc.stop({ stopGracefully: true })
})

await Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(Session.layer({ stateStore: "memory" }))))
