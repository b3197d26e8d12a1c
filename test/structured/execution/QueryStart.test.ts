/**
 * The query start in the engine (execution/QueryStart.ts) and what the writer adds on top: sinks
 * are checked by the capabilities they declare (never by name), both engines post
 * `onQueryStarted` before the query runs, and every local query — micro-batch and continuous —
 * gets the notebook display from the writer.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { MemoryStream, Session, Trigger } from "../../../mod.ts"
import { registerSinkFormat } from "../../../core/Streaming.ts"
import { JUPYTER_DISPLAY, type MimeBundle } from "../../../structured/api/Display.ts"
import type { QueryStartedEvent } from "../../../structured/contracts/StreamingQueryListener.ts"

const Row = Schema.Struct({ k: Schema.String, v: Schema.Int })

/** Partition columns each test sink received, by sink name. */
const received = new Map<string, ReadonlyArray<string>>()

const testSink = (name: string, capabilities: { readonly batchIdAware?: boolean; readonly continuous?: boolean }) =>
  registerSinkFormat({
    name,
    supportedOutputModes: ["append", "update", "complete"],
    ...capabilities,
    create: (ctx) =>
      Effect.sync(() => {
        received.set(name, ctx.partitionColumns)
        return { description: name, addBatch: () => Effect.void, stop: () => Effect.void }
      })
  })

testSink("capability-v1", {})
testSink("capability-v2", { batchIdAware: false })
testSink("capability-no-continuous", { continuous: false })

describe("QueryStart: sink capabilities", () => {
  it.effect("a batch-id aware sink (the default) gets partition columns resolved against the output", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Row)
      const q = yield* input.toDF().writeStream.format("capability-v1").partitionBy("K").start()
      assert.deepStrictEqual(received.get("capability-v1"), ["k"])
      yield* q.stop()
      const missing = yield* input
        .toDF()
        .writeStream.format("capability-v1")
        .partitionBy("nope")
        .start()
        .pipe(Effect.flip)
      assert.include(missing.message, "Partition column nope not found in existing columns (k, v)")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a sink that says batchIdAware: false gets them as given, as Spark's V2 sinks", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Row)
      const q = yield* input.toDF().writeStream.format("capability-v2").partitionBy("K", "nope").start()
      assert.deepStrictEqual(received.get("capability-v2"), ["K", "nope"])
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a sink that says continuous: false refuses Trigger.Continuous with Spark's message", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Row)
      const e = yield* input
        .toDF()
        .writeStream.format("capability-no-continuous")
        .trigger(Trigger.Continuous("1 second"))
        .start()
        .pipe(Effect.flip)
      assert.strictEqual(e.message, "Unknown type of trigger: ContinuousTrigger(1000)")
      // The same sink runs micro-batches.
      const q = yield* input.toDF().writeStream.format("capability-no-continuous").start()
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("QueryStart: the started event and the notebook display", () => {
  for (const engine of ["micro-batch", "continuous"] as const) {
    it.effect(`${engine}: onQueryStarted is posted before start() returns, and the handle has the display`, () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const started: Array<QueryStartedEvent> = []
        yield* spark.streams.addListener({ onQueryStarted: (e) => void started.push(e) })
        const input = yield* MemoryStream.make(Row)
        const writer = input
          .toDF()
          .writeStream.format("memory")
          .queryName(`display_${engine.replace("-", "_")}`)
        const q = yield* (engine === "continuous" ? writer.trigger(Trigger.Continuous("1 hour")) : writer).start()
        assert.deepStrictEqual(
          started.map((e) => [e.id, e.runId, e.name]),
          [[q.id, q.runId, q.name]]
        )
        yield* input.addData([{ k: "a", v: 1 }])
        yield* q.processAllAvailable()
        const display = (q as unknown as { readonly [JUPYTER_DISPLAY]?: () => Promise<MimeBundle> })[JUPYTER_DISPLAY]
        assert.isFunction(display)
        const bundle = yield* Effect.promise(() => display!())
        assert.include(bundle["text/plain"] ?? "", `StreamingQuery ${q.name} ${q.id}`)
        assert.include(bundle["text/plain"] ?? "", "  batch: 0")
        // Not an own enumerable property: the handle prints and compares as before.
        assert.strictEqual(Object.getOwnPropertyDescriptor(q, JUPYTER_DISPLAY)?.enumerable, false)
        yield* q.stop()
      }).pipe(Effect.provide(Session.layer()))
    )
  }
})
