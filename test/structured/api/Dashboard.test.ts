/**
 * The live dashboard over real HTTP: the page, `/api/queries` (active and finished queries with
 * Spark UI's table columns, their progress and error with its batch), `/api/streaming-contexts`
 * (DStream contexts with their batches, receivers and error), server-sent events as batches run,
 * the server closing with the session, and its security: localhost by default, a token on every
 * request (the event stream and the JSON endpoints included) when it listens beyond localhost,
 * and the token never in the logs.
 */
import * as http from "node:http"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Schema, Scope } from "effect"
import { StreamingContext } from "../../../dstream/mod.ts"
import { MemoryStream, Session } from "../../../mod.ts"
import { PAGE } from "../../../structured/api/Dashboard.ts"
import { runBatches } from "../../dstream/DStreamTestKit.ts"

const get = (url: string, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const res = await fetch(url, { headers })
    // An event stream never ends: read its first frame only.
    if (res.headers.get("content-type") === "text/event-stream") {
      const reader = res.body!.getReader()
      const first = new TextDecoder().decode((await reader.read()).value)
      await reader.cancel()
      return {
        status: res.status,
        type: res.headers.get("content-type"),
        body: first,
        cookie: res.headers.get("set-cookie")
      }
    }
    return {
      status: res.status,
      type: res.headers.get("content-type"),
      body: await res.text(),
      cookie: res.headers.get("set-cookie")
    }
  })

/** A raw request with its own Host header (fetch does not let a page set one). */
const getWithHost = (url: string, host: string) =>
  Effect.promise(
    () =>
      new Promise<number>((resolve, reject) => {
        const req = http.get(url, { headers: { host } }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        req.on("error", reject)
      })
  )

/** Copies everything written to the console and to stdout / stderr into `into`; returns the undo. */
const capture = (into: Array<string>): (() => void) => {
  const methods = ["log", "info", "warn", "error", "debug", "trace"] as const
  const saved = methods.map((m) => console[m])
  for (const m of methods) console[m] = (...args: Array<unknown>) => void into.push(args.map(String).join(" "))
  const out = process.stdout.write.bind(process.stdout)
  const err = process.stderr.write.bind(process.stderr)
  const tee =
    (write: typeof process.stdout.write): typeof process.stdout.write =>
    (chunk: string | Uint8Array, ...rest: Array<never>) => {
      into.push(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk))
      return write(chunk, ...rest)
    }
  process.stdout.write = tee(out)
  process.stderr.write = tee(err)
  return () => {
    methods.forEach((m, i) => {
      console[m] = saved[i]!
    })
    process.stdout.write = out
    process.stderr.write = err
  }
}

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

/** The token checks of a dashboard bound beyond localhost; returns the token. */
const secured = (written: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const spark = yield* Session
    const url = (yield* spark.uiWebUrl())!
    assert.match(url, /^http:\/\/0\.0\.0\.0:\d+\/\?token=[0-9a-f]{64}$/)
    const token = new URL(url).searchParams.get("token")!
    const base = `http://127.0.0.1:${new URL(url).port}/`
    for (const path of ["", "api/queries", "api/streaming-contexts", "api/events", "nope"]) {
      const refused = yield* get(`${base}${path}`)
      assert.strictEqual(refused.status, 401, path)
      assert.notInclude(refused.body, token)
      assert.strictEqual((yield* get(`${base}${path}?token=${"0".repeat(64)}`)).status, 401, path)
      assert.strictEqual(
        (yield* get(`${base}${path}`, { authorization: `Bearer ${token.slice(1)}` })).status,
        401,
        path
      )
    }
    // The address's token opens the page and sets the cookie the page's requests then carry.
    const page = yield* get(`${base}?token=${token}`)
    assert.strictEqual(page.status, 200)
    assert.match(page.cookie ?? "", new RegExp(`^tributary_ui_token=${token}; HttpOnly; SameSite=Strict; Path=/$`))
    assert.notInclude(page.body, token)
    const cookie = { cookie: `tributary_ui_token=${token}` }
    assert.strictEqual((yield* get(`${base}api/queries`, cookie)).status, 200)
    const events = yield* get(`${base}api/events`, cookie)
    assert.deepStrictEqual([events.status, events.body], [200, ": connected\n\n"])
    assert.strictEqual((yield* get(`${base}api/streaming-contexts`, { authorization: `Bearer ${token}` })).status, 200)
    // A failing query writes its error to the log: the token is not in it.
    const input = yield* MemoryStream.make(Schema.Struct({ n: Schema.Int }))
    const q = yield* input
      .toDF()
      .map(
        (r) => {
          if (r.n < 0) throw new Error("negative")
          return r
        },
        Schema.Struct({ n: Schema.Int })
      )
      .writeStream.format("noop")
      .start()
    yield* input.addData([{ n: -1 }])
    yield* Effect.exit(q.awaitTermination())
    assert.isAbove(written.join("").length, 0)
    return token
  })

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
        assert.deepStrictEqual(JSON.parse((yield* get(`${url}api/streaming-contexts`)).body), [])

        const sse = subscribe(url!)
        yield* Effect.promise(() => sse.ready)
        const input = yield* MemoryStream.make(Schema.Struct({ word: Schema.String }))
        const q = yield* input
          .toDF()
          .groupBy("word")
          .count()
          .writeStream.format("noop")
          .queryName("words")
          .outputMode("update")
          .start()
        yield* input.addData([{ word: "a" }, { word: "b" }])
        yield* q.processAllAvailable()
        yield* input.addData([{ word: "a" }])
        yield* q.processAllAvailable()
        const listed = JSON.parse((yield* get(`${url}api/queries`)).body)
        assert.strictEqual(listed.length, 1)
        assert.strictEqual(listed[0].name, "words")
        assert.strictEqual(listed[0].active, true)
        // Spark UI's query table: start time, duration, average rates, latest batch.
        assert.match(listed[0].startTime, /^\d{4}-\d\d-\d\dT/)
        assert.isAtLeast(listed[0].durationMs, 0)
        assert.strictEqual(listed[0].endTime, null)
        assert.strictEqual(listed[0].latestBatchId, 1)
        assert.strictEqual(
          listed[0].avgInputRowsPerSecond,
          (listed[0].recentProgress[0].inputRowsPerSecond ?? 0) / 2 +
            (listed[0].recentProgress[1].inputRowsPerSecond ?? 0) / 2
        )
        assert.strictEqual(listed[0].exceptionBatchId, null)
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
          sse.events.map((e) => e.event).filter((e) => e !== "idle" && e !== "status"),
          ["started", "progress", "progress", "terminated"]
        )
        assert.strictEqual((sse.events.find((e) => e.event === "progress")!.data as any).runId, q.runId)
        // After each batch, the query's status message (the table's status column) without a refetch.
        const statuses = sse.events.filter((e) => e.event === "status").map((e) => e.data as any)
        assert.isAtLeast(statuses.length, 1)
        for (const st of statuses) {
          assert.strictEqual(st.runId, q.runId)
          assert.include(["Processing new data", "Waiting for data to arrive", "Waiting for next trigger"], st.message)
        }
        const after = JSON.parse((yield* get(`${url}api/queries`)).body)
        assert.deepStrictEqual([after[0].active, after[0].status, after[0].exception], [false, "Stopped", null])
        assert.match(after[0].endTime, /^\d{4}-\d\d-\d\dT/)
        assert.strictEqual((yield* get(`${url}nope`)).status, 404)
        return url!
      })
      const url = yield* program.pipe(Effect.provide(context))
      yield* Scope.close(scope, Exit.void)
      const closed = yield* Effect.promise(() =>
        fetch(url).then(
          () => "open",
          () => "closed"
        )
      )
      assert.strictEqual(closed, "closed")
    })
  )

  it.effect("a failed query's error names its batch", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const url = (yield* spark.uiWebUrl())!
      const Reading = Schema.Struct({ n: Schema.Int })
      const input = yield* MemoryStream.make(Reading)
      const q = yield* input
        .toDF()
        .map((r) => {
          if (r.n < 0) throw new Error(`negative reading ${r.n}`)
          return r
        }, Reading)
        .writeStream.format("noop")
        .queryName("readings")
        .start()
      yield* input.addData([{ n: 1 }])
      yield* q.processAllAvailable()
      yield* input.addData([{ n: -2 }])
      yield* Effect.exit(q.awaitTermination())
      const [failed] = JSON.parse((yield* get(`${url}api/queries`)).body)
      assert.deepStrictEqual(
        [failed.name, failed.active, failed.exceptionBatchId, failed.latestBatchId],
        ["readings", false, 1, 0]
      )
      assert.include(failed.exception, "negative reading -2")
    }).pipe(Effect.provide(Session.layer({ ui: { port: 0 } })))
  )

  it.effect("shows DStream StreamingContexts: batches, delays, receivers, a failed batch, live events", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const url = (yield* spark.uiWebUrl())!
      const sse = subscribe(url)
      yield* Effect.promise(() => sse.ready)
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      ssc.queueStream([[1, 2, 3], [4], [5, 6], [7], [8]]).foreachRDD(() => {})
      yield* runBatches(ssc, 5)
      yield* ssc.stop()
      const failing = yield* StreamingContext.make({ batchDuration: "1 second" })
      failing.queueStream([[1], [2]]).foreachRDD((rdd) => {
        if (rdd.collect()[0] === 2) throw new Error("bad record 2")
      })
      yield* Effect.exit(runBatches(failing, 2))
      const contexts = JSON.parse((yield* get(`${url}api/streaming-contexts`)).body)
      // Newest first.
      assert.deepStrictEqual(
        contexts.map((c: any) => c.id),
        [failing.id, ssc.id]
      )
      const [bad, good] = contexts
      assert.deepStrictEqual(
        [good.state, good.batchDurationMs, good.completedBatches, good.error],
        ["STOPPED", 1000, 5, null]
      )
      assert.deepStrictEqual(
        good.batches.map((b: any) => [b.numRecords, b.status, b.outputOperations.length]),
        [
          [3, "completed", 1],
          [1, "completed", 1],
          [2, "completed", 1],
          [1, "completed", 1],
          [1, "completed", 1]
        ]
      )
      // The test clock stands still inside a batch: no delays, and rates of records per batch interval.
      assert.deepStrictEqual(
        [good.avgSchedulingDelay, good.avgProcessingTime, good.avgTotalDelay, good.avgInputRate],
        [0, 0, 0, 1.6]
      )
      assert.deepStrictEqual(good.receivers, [])
      assert.strictEqual(bad.completedBatches, 1)
      assert.include(bad.error.message, "bad record 2")
      assert.strictEqual(bad.error.batchTime, bad.batches[1].batchTime)
      assert.strictEqual(bad.batches[1].status, "failed")
      assert.include(bad.batches[1].outputOperations[0].failureReason, "bad record 2")
      assert.strictEqual(bad.state, "ACTIVE")
      yield* failing.stop()
      const stopped = JSON.parse((yield* get(`${url}api/streaming-contexts`)).body)
      assert.strictEqual(stopped[0].state, "STOPPED")
      // The events carry each change, the stops included.
      for (
        let i = 0;
        i < 200 && sse.events.filter((e) => e.event === "dstream" && (e.data as any).state === "STOPPED").length < 2;
        i++
      ) {
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
      }
      sse.close()
      const live = sse.events.filter((e) => e.event === "dstream").map((e) => e.data as any)
      assert.isAbove(live.filter((c) => c.id === ssc.id && c.completedBatches === 5).length, 0)
      // Each event carries the latest batches only, not every batch kept.
      assert.isAtMost(Math.max(...live.map((c) => c.batches.length)), 3)
      assert.deepStrictEqual(
        live.filter((c) => c.state === "STOPPED").map((c) => c.id),
        [ssc.id, failing.id]
      )
    }).pipe(Effect.provide(Session.layer({ ui: { port: 0 }, stateStore: "memory" })))
  )

  it.effect("on localhost without a token, a request naming another host is refused (DNS rebinding)", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const url = (yield* spark.uiWebUrl())!
      assert.strictEqual(yield* getWithHost(`${url}api/queries`, "evil.example:80"), 403)
      assert.strictEqual(yield* getWithHost(`${url}api/queries`, new URL(url).host), 200)
      assert.strictEqual(yield* getWithHost(`${url}api/queries`, `localhost:${new URL(url).port}`), 200)
    }).pipe(Effect.provide(Session.layer({ ui: { port: 0 } })))
  )

  // A plain test, not it.effect: the session logs through the real console here, as a user's would.
  it("beyond localhost every request needs the generated token, which no log shows", async () => {
    const written: Array<string> = []
    const restore = capture(written)
    let token = ""
    try {
      const spark = await Session.open({ ui: { port: 0, host: "0.0.0.0" } })
      try {
        token = await spark.run(secured(written))
      } finally {
        await spark.close()
      }
    } finally {
      restore()
    }
    assert.match(token, /^[0-9a-f]{64}$/)
    assert.notInclude(written.join(""), token)
  })

  it.effect("a given token is required on localhost too; a short one is refused", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const url = (yield* spark.uiWebUrl())!
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=s3cret-token$/)
      const base = url.replace(/\?.*$/, "")
      assert.strictEqual((yield* get(`${base}api/queries`)).status, 401)
      assert.strictEqual((yield* get(`${base}api/queries`, { authorization: "Bearer s3cret-token" })).status, 200)
      const short = yield* Effect.exit(
        Layer.build(Session.layer({ ui: { port: 0, token: "short" } })).pipe(Effect.scoped)
      )
      assert.isTrue(Exit.isFailure(short))
      assert.include(String(Exit.isFailure(short) ? Cause.squash(short.cause) : ""), "at least 8 characters")
    }).pipe(Effect.provide(Session.layer({ ui: { port: 0, token: "s3cret-token" } })))
  )

  it("the page's script parses, and inserts values as text only", () => {
    const script = /<script>([\s\S]*)<\/script>/.exec(PAGE)?.[1] ?? ""
    assert.doesNotThrow(() => new Function(script))
    assert.notMatch(script, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/)
    assert.notMatch(PAGE, /<script[^>]+src=|<link[^>]+stylesheet|https?:\/\/(?!www\.w3\.org)/)
  })

  it.effect("without ui there is no address", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      assert.strictEqual(yield* spark.uiWebUrl(), undefined)
    }).pipe(Effect.provide(Session.layer()))
  )
})
