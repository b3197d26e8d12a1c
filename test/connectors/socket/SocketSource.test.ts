/**
 * The `socket` source against a real TCP server (node:net): lines become rows in order, across
 * batches; `includeTimestamp` stamps lines with Effect's clock; Spark's option errors; a server
 * that is not there fails the query with a ConnectorError; offsets are Spark's LongOffset.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { Session } from "../../../mod.ts"
import { parseSocketOptions } from "../../../connectors/socket/mod.ts"

interface Server {
  readonly port: number
  readonly send: (text: string) => Effect.Effect<void>
  readonly close: () => Effect.Effect<void>
}

/** A TCP server that keeps its clients and writes to all of them. */
const server: Effect.Effect<Server> = Effect.promise(
  () =>
    new Promise<Server>((resolve) => {
      const clients: Array<net.Socket> = []
      let connected: () => void = () => {}
      const firstClient = new Promise<void>((r) => {
        connected = r
      })
      const s = net.createServer((c) => {
        // The source closes its end when the query stops; a reset here is expected.
        c.on("error", () => {})
        clients.push(c)
        connected()
      })
      s.listen(0, "127.0.0.1", () => {
        const port = (s.address() as net.AddressInfo).port
        resolve({
          port,
          send: (text) =>
            Effect.promise(async () => {
              await firstClient
              await Promise.all(clients.map((c) => new Promise<void>((r) => c.write(text, () => r()))))
            }),
          close: () =>
            Effect.promise(
              () =>
                new Promise<void>((r) => {
                  for (const c of clients) c.destroy()
                  s.close(() => r())
                })
            )
        })
      })
    })
)

const pause = Effect.promise(() => new Promise((r) => setTimeout(r, 10)))

/** Runs batches until the memory table has `n` rows (the lines arrive asynchronously). */
const awaitRows = (spark: Session["Service"], table: string, n: number, q: { processAllAvailable: () => Effect.Effect<void, unknown> }) =>
  Effect.gen(function* () {
    for (let i = 0; i < 500; i++) {
      yield* q.processAllAvailable()
      // The memory table exists once the first batch ran.
      const rows = yield* Effect.orElseSucceed(spark.table(table).collect(), () => [])
      if (rows.length >= n) return rows
      yield* pause
    }
    return yield* Effect.die(new Error(`the table ${table} never reached ${n} rows`))
  })

describe("socket source", () => {
  it.effect("reads lines in order across batches, with Spark's LongOffset in the offset log", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const srv = yield* server
      const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-socket-")))
      const lines = spark.readStream.format("socket").option("host", "127.0.0.1").option("port", srv.port).load()
      assert.deepStrictEqual(lines.columns, ["value"])
      const q = yield* lines.writeStream.format("memory").queryName("lines").option("checkpointLocation", dir).start()
      yield* srv.send("hello world\nsecond")
      yield* srv.send(" line\r\n")
      const first = yield* awaitRows(spark, "lines", 2, q)
      assert.deepStrictEqual(first, [{ value: "hello world" }, { value: "second line" }])
      yield* srv.send("third\n")
      const all = yield* awaitRows(spark, "lines", 3, q)
      assert.deepStrictEqual(all.map((r: any) => r.value), ["hello world", "second line", "third"])
      const progress = yield* q.lastProgress()
      assert.strictEqual(progress?.sources[0].description, `TextSocketV2[host: 127.0.0.1, port: ${srv.port}]`)
      yield* q.stop()
      const lastOffsets = yield* Effect.promise(async () => {
        const ids = (await import("node:fs/promises")).readdir(join(dir, "offsets"))
        // the log files, not the checksum files beside them
        const last = Math.max(...(await ids).filter((n) => /^\d+$/.test(n)).map(Number))
        return readFile(join(dir, "offsets", String(last)), "utf8")
      })
      assert.strictEqual(lastOffsets.split("\n").at(-1), "2")
      yield* srv.close()
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("includeTimestamp: the arrival time from Effect's clock", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const srv = yield* server
      yield* TestClock.adjust(5_000)
      const lines = spark.readStream
        .format("socket")
        .option("host", "127.0.0.1")
        .option("port", srv.port)
        .option("includeTimestamp", true)
        .load()
      assert.deepStrictEqual(lines.columns, ["value", "timestamp"])
      const q = yield* lines.writeStream.format("memory").queryName("stamped").start()
      yield* srv.send("a\n")
      const rows = yield* awaitRows(spark, "stamped", 1, q)
      assert.deepStrictEqual(rows, [{ value: "a", timestamp: new Date(5_000) }])
      yield* q.stop()
      yield* srv.close()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("no server: the query fails with a ConnectorError that says so", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const srv = yield* server
      const port = srv.port
      yield* srv.close()
      // The source connects in the query's run (as Spark's TextSocketMicroBatchStream does when
      // the query thread builds it), so start() succeeds and the query fails.
      const q = yield* spark.readStream
        .format("socket")
        .option("host", "127.0.0.1")
        .option("port", port)
        .load()
        .writeStream.format("noop")
        .start()
      const e = yield* Effect.flip(q.awaitTermination())
      assert.strictEqual(e._tag, "StreamingQueryError")
      assert.strictEqual((e.cause as { _tag?: string })._tag, "ConnectorError")
      assert.match(e.message, new RegExp(`Cannot connect to 127.0.0.1:${port}`))
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.forceDeleteTempCheckpointLocation": true } })))
  )

  it("Spark's option errors", () => {
    const message = (o: Record<string, string>) => {
      const r = parseSocketOptions(o)
      return "message" in r ? r.message : undefined
    }
    assert.strictEqual(message({ port: "1" }), 'Set a host to read from with option("host", ...).')
    assert.strictEqual(message({ host: "h" }), 'Set a port to read from with option("port", ...).')
    assert.strictEqual(message({ host: "h", port: "1", includeTimestamp: "yes" }), 'includeTimestamp must be set to either "true" or "false".')
    assert.match(message({ host: "h", port: "x" }) ?? "", /Invalid value 'x' for option 'port'/)
    assert.deepStrictEqual(parseSocketOptions({ HOST: "h", Port: "9", includetimestamp: "TRUE" }), {
      host: "h",
      port: 9,
      includeTimestamp: true
    })
  })
})
