/**
 * The live dashboard over real HTTP: the page, `/api/queries` (active and finished queries with
 * their progress and error), server-sent events as batches run, and the server closing with
 * the session.
 */
import * as http from "node:http"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Schema, Scope } from "effect"
import { MemoryStream, Session } from "../../../mod.ts"

const get = (url: string) =>
  Effect.promise(async () => {
    const res = await fetch(url)
    return { status: res.status, type: res.headers.get("content-type"), body: await res.text() }
  })

/** Collects the server-sent events of `/api/events` until `until` holds. */
const subscribe = (url: string) => {
  const events: Array<{ event: string; data: unknown }> = []
  let buffer = ""
  let request: http.ClientRequest | undefined
  const ready = new Promise<void>((resolve) => {
    request = http.get(`${url}api/events`, (res) => {
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => {
        buffer += chunk
        if (buffer.startsWith(": connected")) resolve()
        let i = buffer.indexOf("\n\n")
        while (i >= 0) {
          const frame = buffer.slice(0, i)
          buffer = buffer.slice(i + 2)
          const event = /^event: (.*)$/m.exec(frame)?.[1]
          const data = /^data: (.*)$/m.exec(frame)?.[1]
          if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) })
          i = buffer.indexOf("\n\n")
        }
      })
    })
  })
  return { events, ready, close: () => request?.destroy() }
}

describe("dashboard", () => {
  it.effect("serves the page, the queries and live events while the session lives", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(Session.layer({ ui: { port: 0 } }), scope)
      const program = Effect.gen(function* () {
        const spark = yield* Session
        const url = yield* spark.uiWebUrl()
        assert.match(url ?? "", /^http:\/\/127\.0\.0\.1:\d+\/$/)
        const page = yield* get(url!)
        assert.strictEqual(page.status, 200)
        assert.include(page.type, "text/html")
        assert.include(page.body, "<title>tributary · Structured Streaming</title>")
        // The page's script at least parses (a browser test is not part of this suite yet).
        const script = /<script>([\s\S]*)<\/script>/.exec(page.body)?.[1] ?? ""
        assert.isAbove(script.length, 1000)
        assert.doesNotThrow(() => new Function(script))
        assert.deepStrictEqual(JSON.parse((yield* get(`${url}api/queries`)).body), [])

        const sse = subscribe(url!)
        yield* Effect.promise(() => sse.ready)
        const input = yield* MemoryStream.make(Schema.Struct({ word: Schema.String }))
        const q = yield* input.toDF().groupBy("word").count().writeStream.format("noop").queryName("words").outputMode("update").start()
        yield* input.addData([{ word: "a" }, { word: "b" }])
        yield* q.processAllAvailable()
        yield* input.addData([{ word: "a" }])
        yield* q.processAllAvailable()
        const listed = JSON.parse((yield* get(`${url}api/queries`)).body)
        assert.strictEqual(listed.length, 1)
        assert.strictEqual(listed[0].name, "words")
        assert.strictEqual(listed[0].active, true)
        assert.deepStrictEqual(
          listed[0].recentProgress.map((p: any) => [p.batchId, p.numInputRows, p.stateOperators[0].numRowsTotal]),
          [
            [0, 2, 2],
            [1, 1, 2]
          ]
        )
        yield* q.stop()
        // The events arrive over the socket; wait for the terminated one.
        for (let i = 0; i < 200 && !sse.events.some((e) => e.event === "terminated"); i++) {
          yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
        }
        sse.close()
        assert.deepStrictEqual(
          sse.events.map((e) => e.event).filter((e) => e !== "idle"),
          ["started", "progress", "progress", "terminated"]
        )
        assert.strictEqual((sse.events[1].data as any).runId, q.runId)
        const after = JSON.parse((yield* get(`${url}api/queries`)).body)
        assert.deepStrictEqual([after[0].active, after[0].status, after[0].exception], [false, "Stopped", null])
        assert.strictEqual((yield* get(`${url}nope`)).status, 404)
        return url!
      })
      const url = yield* program.pipe(Effect.provide(context))
      yield* Scope.close(scope, Exit.void)
      const closed = yield* Effect.promise(() => fetch(url).then(() => "open", () => "closed"))
      assert.strictEqual(closed, "closed")
    })
  )

  it.effect("without ui there is no address", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      assert.strictEqual(yield* spark.uiWebUrl(), undefined)
    }).pipe(Effect.provide(Session.layer()))
  )
})
