/**
 * Spark's `TextSocketStreamSuite` (sql/core/src/test/scala/org/apache/spark/sql/execution/
 * streaming/sources/TextSocketStreamSuite.scala) against a netcat-like server: it accepts only
 * its first client (Spark's `ServerThread`, SPARK-24466) and writes the lines it is given.
 */
import * as net from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as T from "../../../core/DataType.ts"
import { AnalysisError } from "../../../core/Errors.ts"
import { lookupSourceFormat } from "../../../core/Streaming.ts"
import { registerSocket, SOCKET_LEGACY_NAME, SocketSource } from "../../../connectors/socket/mod.ts"
import { Session, StreamingQueryError } from "../../../mod.ts"

interface ServerThread {
  readonly port: number
  readonly enqueue: (line: string) => Effect.Effect<void>
  readonly close: () => Effect.Effect<void>
}

/** Spark's `ServerThread`: the first connection is kept, the listening socket closed at once. */
const serverThread: Effect.Effect<ServerThread> = Effect.promise(
  () =>
    new Promise<ServerThread>((resolve) => {
      let client: net.Socket | undefined
      let connected: () => void = () => {}
      const first = new Promise<void>((r) => {
        connected = r
      })
      const s = net.createServer((c) => {
        c.on("error", () => {})
        client = c
        // Close the server socket immediately to deny any further connection, as netcat does.
        s.close()
        connected()
      })
      s.listen(0, "127.0.0.1", () => {
        resolve({
          port: (s.address() as net.AddressInfo).port,
          enqueue: (line) =>
            Effect.promise(async () => {
              await first
              await new Promise<void>((r) => client!.write(`${line}\n`, () => r()))
            }),
          close: () =>
            Effect.sync(() => {
              client?.destroy()
              s.close()
            })
        })
      })
    })
)

const pause = Effect.promise(() => new Promise((r) => setTimeout(r, 10)))

/** Runs batches until the memory table has `n` rows (lines arrive asynchronously). */
const awaitRows = (
  spark: Session["Service"],
  table: string,
  n: number,
  q: { readonly processAllAvailable: () => Effect.Effect<void, unknown> }
) =>
  Effect.gen(function* () {
    for (let i = 0; i < 500; i++) {
      yield* q.processAllAvailable()
      const rows = yield* Effect.orElseSucceed(spark.table(table).collect(), () => [])
      if (rows.length >= n) return rows as ReadonlyArray<Record<string, unknown>>
      yield* pause
    }
    return yield* Effect.die(new Error(`the table ${table} never reached ${n} rows`))
  })

const errorOf = (r: T.StructType | AnalysisError): AnalysisError => {
  if (!(r instanceof AnalysisError)) throw new Error(`expected an AnalysisError, got ${JSON.stringify(r)}`)
  return r
}

describe("TextSocketStreamSuite", () => {
  it("backward compatibility with old path", () => {
    registerSocket()
    const ds = lookupSourceFormat(SOCKET_LEGACY_NAME)
    assert.isDefined(ds, "Could not find socket source")
    assert.strictEqual(SOCKET_LEGACY_NAME, "org.apache.spark.sql.execution.streaming.TextSocketSourceProvider")
    assert.strictEqual(ds!.create, SocketSource.create)
  })

  it.effect("basic usage", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const server = yield* serverThread
      const socket = spark.readStream
        .format("socket")
        .options({ host: "127.0.0.1", port: String(server.port) })
        .load()
      assert.deepStrictEqual(socket.schema, T.struct([T.field("value", T.StringType)]))
      const q = yield* socket.writeStream.format("memory").queryName("basic").start()
      yield* server.enqueue("hello")
      assert.deepStrictEqual(yield* awaitRows(spark, "basic", 1, q), [{ value: "hello" }])
      yield* server.enqueue("world")
      assert.deepStrictEqual(yield* awaitRows(spark, "basic", 2, q), [{ value: "hello" }, { value: "world" }])
      // CheckLastBatch("world")
      const last = yield* q.lastProgress()
      assert.strictEqual(last?.numInputRows, 1)
      yield* q.stop()
      yield* server.close()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("timestamped usage", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const server = yield* serverThread
      const socket = spark.readStream
        .format("socket")
        .options({ host: "127.0.0.1", port: String(server.port), includeTimestamp: "true" })
        .load()
      assert.deepStrictEqual(
        socket.schema,
        T.struct([T.field("value", T.StringType), T.field("timestamp", T.TimestampType)])
      )
      const q = yield* socket.writeStream.format("memory").queryName("stamped").start()
      yield* server.enqueue("hello")
      const first = yield* awaitRows(spark, "stamped", 1, q)
      assert.strictEqual(first[0].value, "hello")
      const batch1Stamp = first[0].timestamp as Date
      yield* server.enqueue("world")
      const both = yield* awaitRows(spark, "stamped", 2, q)
      assert.strictEqual(both[1].value, "world")
      const batch2Stamp = both[1].timestamp as Date
      assert.instanceOf(batch1Stamp, Date)
      assert.isFalse(batch2Stamp.getTime() < batch1Stamp.getTime())
      yield* q.stop()
      yield* server.close()
    }).pipe(Effect.provide(Session.layer()))
  )

  it("params not given", () => {
    for (const params of [{}, { host: "localhost" }, { port: "1234" }] as ReadonlyArray<Record<string, string>>) {
      const e = errorOf(SocketSource.schema(undefined, params))
      assert.strictEqual(e._tag, "AnalysisError")
    }
    assert.strictEqual(
      errorOf(SocketSource.schema(undefined, { port: "1234" })).message,
      'Set a host to read from with option("host", ...).'
    )
    assert.strictEqual(
      errorOf(SocketSource.schema(undefined, { host: "localhost" })).message,
      'Set a port to read from with option("port", ...).'
    )
  })

  it("non-boolean includeTimestamp", () => {
    const e = errorOf(SocketSource.schema(undefined, { host: "localhost", port: "1234", includeTimestamp: "fasle" }))
    assert.strictEqual(e._tag, "AnalysisError")
    assert.strictEqual(e.message, 'includeTimestamp must be set to either "true" or "false".')
  })

  it.effect("user-specified schema given", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const userSpecifiedSchema = T.struct([T.field("name", T.StringType), T.field("area", T.StringType)])
      const df = spark.readStream
        .schema(userSpecifiedSchema)
        .format("socket")
        .options({ host: "localhost", port: "1234" })
        .load()
      assert.isDefined(df.buildError)
      assert.include(df.buildError!.message, "TextSocketSourceProvider source does not support user-specified schema")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("input row metrics", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const server = yield* serverThread
      const socket = spark.readStream
        .format("socket")
        .options({ host: "127.0.0.1", port: String(server.port) })
        .load()
      const q = yield* socket.writeStream.format("memory").queryName("metrics").start()
      yield* server.enqueue("hello")
      assert.deepStrictEqual(yield* awaitRows(spark, "metrics", 1, q), [{ value: "hello" }])
      // Spark reads the scan's numOutputRows metric; here the batch's numInputRows.
      const withRows = (yield* q.recentProgress()).filter((p) => p.numInputRows > 0)
      assert.deepStrictEqual(
        withRows.map((p) => p.numInputRows),
        [1]
      )
      yield* q.stop()
      yield* server.close()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("verify ServerThread only accepts the first connection", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const server = yield* serverThread
      const load = () =>
        spark.readStream
          .format("socket")
          .options({ host: "127.0.0.1", port: String(server.port) })
          .load()
      const q = yield* load().writeStream.format("memory").queryName("first").start()
      yield* server.enqueue("hello")
      assert.deepStrictEqual(yield* awaitRows(spark, "first", 1, q), [{ value: "hello" }])
      yield* server.enqueue("world")
      assert.deepStrictEqual(yield* awaitRows(spark, "first", 2, q), [{ value: "hello" }, { value: "world" }])
      yield* q.stop()
      // we are trying to connect to the server once again which should fail: the query fails
      // (Spark's StreamingQueryException caused by a SocketException)
      const q2 = yield* load().writeStream.format("memory").queryName("second").start()
      const e = yield* Effect.flip(q2.awaitTermination())
      assert.instanceOf(e, StreamingQueryError)
      assert.strictEqual((e.cause as { _tag?: string })._tag, "ConnectorError")
      assert.include(e.message, `Cannot connect to 127.0.0.1:${server.port}`)
      yield* server.close()
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.forceDeleteTempCheckpointLocation": true } })))
  )
})
