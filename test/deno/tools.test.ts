/**
 * Deno: the stateful pieces around the engine — a windowed aggregation with DuckDB state, the
 * state reader over its checkpoint, the CLI's `checkpoint inspect`, `Session.open()`, the
 * dashboard over node:http, and the socket source over node:net.
 */
import assert from "node:assert/strict"
import { mkdtemp, rm } from "node:fs/promises"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Schema } from "effect"
import { inspectCheckpoint } from "../../structured/execution/CheckpointInspect.ts"
import { NodeCheckpointFileSystem } from "../../state/NodeCheckpointFileSystem.ts"
import { F, JUPYTER_DISPLAY, MemoryStream, Session } from "../../mod.ts"

Deno.test("statestore and state-metadata read a windowed aggregation's DuckDB state; the CLI inspects it", async () => {
  const dir = await mkdtemp(join(tmpdir(), "tributary-deno-state-"))
  const spark = await Session.open({ stateStore: "duckdb" })
  try {
    const input = await spark.run(MemoryStream.make(Schema.Struct({ word: Schema.String, ts: Schema.Date })))
    const query = await spark.run(
      input
        .toDF()
        .withWatermark("ts", "10 seconds")
        .groupBy(F.window("ts", "10 seconds"), "word")
        .count()
        .writeStream.format("noop")
        .outputMode("update")
        .option("checkpointLocation", dir)
        .start()
    )
    await spark.run(
      input.addData([
        { word: "a", ts: new Date(1000) },
        { word: "a", ts: new Date(2000) }
      ])
    )
    await spark.run(query.processAllAvailable())
    const state = await spark.run(spark.read.format("statestore").load(dir))
    const rows = await spark.run(state.select(F.col("key.word").as("word"), F.col("value.count").as("n")).collect())
    assert.deepEqual(rows, [{ word: "a", n: 2 }])
    const meta = await spark.run(Effect.flatMap(spark.read.format("state-metadata").load(dir), (df) => df.collect()))
    assert.equal(meta[0].operatorName, "stateStoreSave")
    const report = await Effect.runPromise(inspectCheckpoint(NodeCheckpointFileSystem, dir))
    assert.equal(report.queryId, query.id)
    assert.equal(report.stateProvider, "duckdb")
    const bundle = await state[JUPYTER_DISPLAY]()
    assert.match(bundle["text/html"] ?? "", /<table>/)
    await spark.run(query.stop())
  } finally {
    await spark.close()
    await rm(dir, { recursive: true, force: true })
  }
})

Deno.test("the dashboard serves its page and the queries over node:http", async () => {
  const spark = await Session.open({ ui: { port: 0 } })
  try {
    const url = await spark.run(spark.uiWebUrl())
    assert.ok(url !== undefined)
    const page = await (await fetch(url)).text()
    assert.match(page, /Structured Streaming/)
    assert.deepEqual(await (await fetch(`${url}api/queries`)).json(), [])
    assert.deepEqual(await (await fetch(`${url}api/streaming-contexts`)).json(), [])
  } finally {
    await spark.close()
  }
})

Deno.test("the dashboard beyond localhost refuses requests without its token, the event stream included", async () => {
  const spark = await Session.open({ ui: { port: 0, host: "0.0.0.0" } })
  try {
    const url = new URL((await spark.run(spark.uiWebUrl()))!)
    const token = url.searchParams.get("token")!
    assert.match(token, /^[0-9a-f]{64}$/)
    const base = `http://127.0.0.1:${url.port}/`
    for (const path of ["", "api/queries", "api/streaming-contexts", "api/events"]) {
      const refused = await fetch(`${base}${path}`)
      assert.equal(refused.status, 401, path)
      assert.ok(!(await refused.text()).includes(token))
    }
    const ok = await fetch(`${base}api/queries`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(ok.status, 200)
    assert.deepEqual(await ok.json(), [])
    const events = await fetch(`${base}api/events?token=${token}`)
    assert.equal(events.status, 200)
    const reader = events.body!.getReader()
    assert.equal(new TextDecoder().decode((await reader.read()).value), ": connected\n\n")
    await reader.cancel()
  } finally {
    await spark.close()
  }
})

Deno.test("the socket source reads lines over node:net", async () => {
  const clients: Array<net.Socket> = []
  const server = net.createServer((c) => {
    // The source closes its end when the query stops; a reset here is expected.
    c.on("error", () => {})
    clients.push(c)
    c.write("hello\nworld\n")
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  const port = (server.address() as net.AddressInfo).port
  const spark = await Session.open()
  try {
    const query = await spark.run(
      spark.readStream
        .format("socket")
        .option("host", "127.0.0.1")
        .option("port", port)
        .load()
        .writeStream.format("memory")
        .queryName("lines")
        .start()
    )
    let rows: ReadonlyArray<unknown> = []
    for (let i = 0; i < 300 && rows.length < 2; i++) {
      await spark.run(query.processAllAvailable())
      // The memory table exists once the first batch ran.
      rows = await spark.run(Effect.orElseSucceed(spark.table("lines").collect(), () => []))
      if (rows.length < 2) await new Promise((r) => setTimeout(r, 10))
    }
    assert.deepEqual(rows, [{ value: "hello" }, { value: "world" }])
    await spark.run(query.stop())
  } finally {
    await spark.close()
    for (const c of clients) c.destroy()
    await new Promise<void>((r) => server.close(() => r()))
  }
})
