/**
 * Deno smoke suite for `tributary/dstream` (`deno task test`): a DStream word count on the test
 * clock with `print()` captured through Effect's Console, `updateStateByKey` on the state store
 * with a checkpoint restart, and `socketTextStream` over `node:net`.
 */
import assert from "node:assert/strict"
import { mkdtemp, rm } from "node:fs/promises"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Console, Deferred, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { StreamingContext } from "../../dstream/mod.ts"
import { Session } from "../../mod.ts"

const run = <A, E>(effect: Effect.Effect<A, E, Session>): Promise<A> =>
  Effect.runPromise(
    effect.pipe(Effect.provide(Layer.mergeAll(Session.layer({ stateStore: "memory" }), TestClock.layer())))
  )

/** Collects what `Console.log` prints. */
const capture = (lines: Array<string>): Console.Console => {
  const log = (...args: ReadonlyArray<unknown>) => {
    lines.push(args.map(String).join(" "))
  }
  return { ...globalThis.console, log } as unknown as Console.Console
}

const untilBatch = (ssc: StreamingContext, time: number) =>
  Effect.gen(function* () {
    const done = yield* Deferred.make<void>()
    ssc.addStreamingListener({
      onBatchCompleted: ({ batchInfo }) => {
        if (batchInfo.batchTime >= time) Deferred.doneUnsafe(done, Effect.void)
      }
    })
    return done
  })

Deno.test("a DStream word count prints Spark's batches", async () => {
  const lines: Array<string> = []
  await run(
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      const text = ssc.queueStream([["a b", "a"], ["b"]])
      text
        .flatMap((l) => l.split(" "))
        .map((w) => [w, 1] as const)
        .reduceByKey((a, b) => a + b)
        .print()
      const done = yield* untilBatch(ssc, 2000)
      yield* ssc.start()
      yield* TestClock.adjust("2 seconds")
      yield* Deferred.await(done)
      yield* ssc.stop()
    }).pipe(Effect.provideService(Console.Console, capture(lines)))
  )
  assert.deepEqual(lines, [
    "-------------------------------------------",
    "Time: 1000 ms",
    "-------------------------------------------",
    "(a,2)",
    "(b,1)",
    "",
    "-------------------------------------------",
    "Time: 2000 ms",
    "-------------------------------------------",
    "(b,1)",
    ""
  ])
})

Deno.test("updateStateByKey continues after a restart from the checkpoint", async () => {
  const dir = await mkdtemp(join(tmpdir(), "tributary-deno-dstream-"))
  try {
    const totals: Array<Array<readonly [string, number]>> = []
    const once = (queue: Array<Array<string>>, until: number) =>
      Effect.gen(function* () {
        const ssc = yield* StreamingContext.getOrCreate(dir, () =>
          Effect.map(StreamingContext.make({ batchDuration: "1 second" }), (ssc) => {
            ssc
              .queueStream(queue)
              .map((w) => [w, 1] as const)
              .updateStateByKey((vs: Array<number>, s: number | undefined) => vs.length + (s ?? 0))
              .foreachRDD((rdd) => {
                totals.push(rdd.collect().sort())
              })
            return ssc
          })
        )
        const done = yield* untilBatch(ssc, until)
        yield* ssc.start()
        yield* TestClock.adjust("2 seconds")
        yield* Deferred.await(done)
        yield* ssc.stop()
      })
    await run(
      Effect.gen(function* () {
        yield* once([["a"], ["a", "b"]], 2000)
      })
    )
    // A new session (and a new test clock at 0): the grid continues after batch 2000.
    await run(
      Effect.gen(function* () {
        yield* TestClock.adjust("2 seconds")
        yield* once([["b"], []], 4000)
      })
    )
    assert.deepEqual(totals, [
      [["a", 1]],
      [
        ["a", 2],
        ["b", 1]
      ],
      [
        ["a", 2],
        ["b", 2]
      ],
      [
        ["a", 2],
        ["b", 2]
      ]
    ])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

Deno.test("socketTextStream reads lines over node:net", async () => {
  const server = createServer((socket) => socket.end("x y\nx\n"))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  try {
    const counts = await run(
      Effect.gen(function* () {
        const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
        const stopped = yield* Deferred.make<void>()
        ssc.addStreamingListener({ onReceiverStopped: () => Deferred.doneUnsafe(stopped, Effect.void) })
        const out: Array<Array<readonly [string, number]>> = []
        ssc
          .socketTextStream("127.0.0.1", port)
          .flatMap((l) => l.split(" "))
          .countByValue()
          .foreachRDD((rdd) => {
            out.push(rdd.collect())
          })
        yield* ssc.start()
        yield* Deferred.await(stopped)
        const done = yield* untilBatch(ssc, 1000)
        yield* TestClock.adjust("1 second")
        yield* Deferred.await(done)
        yield* ssc.stop()
        return out
      })
    )
    assert.deepEqual(counts, [
      [
        ["x", 2],
        ["y", 1]
      ]
    ])
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
})
