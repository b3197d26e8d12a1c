/**
 * Notebook display: the MIME bundles of DataFrames (an escaped HTML table with the schema next
 * to `show()`'s text), streaming DataFrames and streaming queries (a card; live in Deno's
 * Jupyter kernel through display ids), and the `Session.open()` Promise facade.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../mod.ts"
import { JUPYTER_DISPLAY, type MimeBundle, queryCard } from "../../../structured/api/Display.ts"

const Person = Schema.Struct({ name: Schema.String, age: Schema.Int })

describe("DataFrame display", () => {
  it.effect("an HTML table with the schema and the row count, and show()'s text", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame(
        [
          { name: "<b>Ann</b>", age: 30 },
          { name: "Bo & Cy", age: 4 }
        ],
        Person
      )
      const bundle = yield* Effect.promise(() => df[JUPYTER_DISPLAY]())
      assert.strictEqual(bundle["text/plain"], yield* df.showString())
      const html = bundle["text/html"] ?? ""
      assert.include(html, "DataFrame[name: string, age: bigint] · 2 rows")
      assert.include(html, "<td>&lt;b&gt;Ann&lt;/b&gt;</td>")
      assert.include(html, "<td>Bo &amp; Cy</td>")
      assert.notInclude(html, "<b>Ann</b>")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("only the first 20 rows of a larger result", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const bundle = yield* Effect.promise(() => spark.range(0, 100).where(F.col("id").geq(0))[JUPYTER_DISPLAY]())
      const html = bundle["text/html"] ?? ""
      assert.include(html, "first 20 rows")
      assert.strictEqual((html.match(/<tr>/g) ?? []).length, 21)
      assert.include(bundle["text/plain"], "only showing top 20 rows")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a streaming DataFrame shows its schema; an invalid one its error", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Person)
      const s = yield* Effect.promise(() => input.toDF()[JUPYTER_DISPLAY]())
      assert.strictEqual(s["text/plain"], "Streaming DataFrame[name: string, age: bigint]")
      const bad = yield* Effect.promise(() => spark.createDataFrame([{ name: "a", age: 1 }], Person).select(F.col("nope" as string))[JUPYTER_DISPLAY]())
      assert.match(bad["text/plain"] ?? "", /^AnalysisError: .*nope/)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("StreamingQuery display", () => {
  it("a card with status, rates, watermark, state rows and the error", () => {
    const card = queryCard({ id: "q1", runId: "r1", name: "counts" }, false, "Stopped", null, "boom <x>")
    assert.strictEqual(
      card["text/plain"],
      [
        "StreamingQuery counts q1",
        "  status: failed",
        "  batch: –",
        "  input rate: –",
        "  processing rate: –",
        "  batch duration: –",
        "  watermark: –",
        "  state rows: –",
        "  error: boom <x>"
      ].join("\n")
    )
    assert.include(card["text/html"] ?? "", "boom &lt;x&gt;")
  })

  it.effect("a running query's snapshot, and live updates under Deno's kernel", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Person)
      const q = yield* input.toDF().groupBy("name").count().writeStream.format("noop").outputMode("update").start()
      yield* input.addData([{ name: "a", age: 1 }])
      yield* q.processAllAvailable()
      const snapshot = (yield* Effect.promise(() => (q as any)[JUPYTER_DISPLAY]())) as MimeBundle
      assert.include(snapshot["text/plain"], "  batch: 0")
      assert.include(snapshot["text/plain"], "  state rows: 1")
      // Under Deno's kernel: shown under a display id, then updated in place.
      const calls: Array<{ options: any; bundle: any }> = []
      ;(globalThis as any).Deno = {
        jupyter: { display: async (bundle: unknown, options: unknown) => void calls.push({ bundle, options }) }
      }
      try {
        const returned = yield* Effect.promise(() => (q as any)[JUPYTER_DISPLAY]())
        assert.deepStrictEqual(returned, {})
        assert.strictEqual(calls.length, 1)
        assert.deepStrictEqual(calls[0].options, { raw: true, display_id: `tributary-${q.runId}` })
        yield* q.stop()
        yield* Effect.promise(() => new Promise((r) => setTimeout(r, 1100)))
        const last = calls[calls.length - 1]
        assert.strictEqual(last.options.update, true)
        assert.include(last.bundle["text/plain"], "  status: stopped")
      } finally {
        delete (globalThis as any).Deno
      }
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("Session.open", () => {
  it("the Promise facade: the session's members, run and close", async () => {
    const spark = await Session.open()
    const df = spark.createDataFrame([{ name: "a", age: 1 }], Person)
    assert.deepStrictEqual(await spark.run(df.collect()), [{ name: "a", age: 1 }])
    await spark.run(spark.conf.set("spark.sql.shuffle.partitions", 4))
    assert.strictEqual(await spark.run(spark.conf.get("spark.sql.shuffle.partitions")), "4")
    const failure = await spark.run(df.select(F.col("nope" as string)).collect()).then(
      () => undefined,
      (e: unknown) => e as { _tag: string }
    )
    assert.strictEqual(failure?._tag, "AnalysisError")
    await spark.close()
  })

  it("spark.display: sent while the cell runs under Deno's kernel, printed as text elsewhere", async () => {
    const spark = await Session.open()
    const df = spark.createDataFrame([{ name: "a<b", age: 1 }], Person)
    const printed: Array<unknown> = []
    const log = console.log
    console.log = (...args: Array<unknown>) => void printed.push(...args)
    try {
      await spark.display(df)
    } finally {
      console.log = log
    }
    assert.strictEqual(printed.length, 1)
    assert.include(String(printed[0]), "| a<b|  1|")
    const calls: Array<{ options: any; bundle: any }> = []
    ;(globalThis as any).Deno = {
      jupyter: { display: async (bundle: unknown, options: unknown) => void calls.push({ bundle, options }) }
    }
    try {
      // A DataFrame: its bundle, raw, and the promise resolves once it was sent.
      await spark.display(df)
      assert.strictEqual(calls.length, 1)
      assert.deepStrictEqual(calls[0].options, { raw: true })
      assert.include(calls[0].bundle["text/html"], "<td>a&lt;b</td>")
      // A query: its live card under its display id, and nothing empty besides.
      const input = await spark.run(MemoryStream.make(Person))
      const q = await spark.run(input.toDF().writeStream.format("noop").start())
      await spark.display(q)
      assert.strictEqual(calls.length, 2)
      assert.deepStrictEqual(calls[1].options, { raw: true, display_id: `tributary-${q.runId}` })
      assert.include(calls[1].bundle["text/html"], "StreamingQuery")
      await spark.run(q.stop())
      // Anything else: as Deno formats it.
      await spark.display({ plain: 1 })
      assert.deepStrictEqual(calls[calls.length - 1], { bundle: { plain: 1 }, options: undefined })
    } finally {
      delete (globalThis as any).Deno
      await spark.close()
    }
  })
})
