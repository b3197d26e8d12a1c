/**
 * The Spark Connect token never appears in errors, logs or progress (issue #20 item 6). A remote
 * session is opened with `sc://…/;token=<secret>` against a port where nothing listens, and
 * against a fake gRPC server whose every answer is an error that echoes the request's
 * `authorization` header back (a server or proxy that quotes the request in its message — the
 * worst case a client can meet). Every error a batch action, a streaming start and the conf calls
 * give, everything Effect's logger receives (messages and causes, printed in depth), and the
 * address the session shows must not contain the secret. An address that does not parse (a bad
 * `%` escape in the token) must fail typed, without the secret.
 */
import * as http2 from "node:http2"
import type { AddressInfo } from "node:net"
import { inspect } from "node:util"
import { describe, expect, it } from "vitest"
import { Effect, Logger, Schema } from "effect"
import * as Client from "../../connect/Client.ts"
import { Session } from "../../mod.ts"

const SECRET = "s3cr3t-T0KEN-4f1c"

/** Everything Effect's logger is given, as text: the messages and the causes, in depth. */
const capture = (lines: Array<string>) =>
  Logger.layer([
    Logger.make((options) => {
      const parts = Array.isArray(options.message) ? options.message : [options.message]
      lines.push(`${options.logLevel} ${parts.map((p) => (typeof p === "string" ? p : inspect(p, { depth: 20 }))).join(" ")} ${inspect(options.cause, { depth: 20 })}`)
    })
  ])

/** A gRPC server answering every call with `status` and a message quoting the authorization header. */
const fakeServer = (status: number) =>
  new Promise<{ readonly port: number; readonly close: () => Promise<void>; readonly seen: Array<string> }>((resolve) => {
    const seen: Array<string> = []
    const server = http2.createServer()
    server.on("stream", (stream, headers) => {
      const auth = String(headers.authorization ?? "")
      seen.push(auth)
      stream.respond(
        {
          ":status": 200,
          "content-type": "application/grpc+proto",
          "grpc-status": String(status),
          "grpc-message": encodeURIComponent(`request refused; it carried authorization: ${auth}`)
        },
        { endStream: true }
      )
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resolve({
        port,
        seen,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done())
          })
      })
    })
  })

/** Runs the actions a user would on a remote session; answers every error and log line as text. */
const exercise = async (address: string): Promise<{ readonly texts: ReadonlyArray<string>; readonly errors: number }> => {
  const lines: Array<string> = []
  const texts: Array<string> = []
  let errors = 0
  const record = (r: { _tag: string; failure?: unknown }) => {
    if (r._tag === "Failure") {
      errors++
      const e = r.failure as Error
      texts.push(String(e), e.message, inspect(e, { depth: 20 }), JSON.stringify(e) ?? "")
    }
  }
  await Effect.runPromise(
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame([{ a: 1 }], Schema.Struct({ a: Schema.Int }))
      record(yield* Effect.result(df.collect()))
      record(yield* Effect.result(spark.range(3).count()))
      record(yield* Effect.result(spark.conf.get("spark.sql.shuffle.partitions")))
      const started = yield* Effect.result(spark.readStream.format("rate").load().writeStream.format("noop").start())
      record(started)
      if (started._tag === "Success") {
        const q = started.success
        texts.push(JSON.stringify(yield* Effect.result(q.lastProgress())) ?? "", JSON.stringify(yield* Effect.result(q.status())) ?? "")
        record(yield* Effect.result(q.stop()))
      }
      record(yield* Effect.result(spark.streams.active()))
    }).pipe(Effect.provide(Session.layer({ remote: address })), Effect.provide(capture(lines))) as Effect.Effect<void>
  )
  return { texts: [...texts, ...lines], errors }
}

const expectNoSecret = (texts: ReadonlyArray<string>) => {
  for (const t of texts) expect(t.includes(SECRET), `leaked in: ${t.slice(0, 400)}`).toBe(false)
}

describe("the Spark Connect token is never shown", () => {
  it("a server that is not there: errors and logs hold no token", { timeout: 60_000 }, async () => {
    const closed = await fakeServer(0)
    await closed.close()
    const { texts, errors } = await exercise(`sc://127.0.0.1:${closed.port}/;token=${SECRET};user_id=ann`)
    expect(errors).toBeGreaterThanOrEqual(3)
    expectNoSecret(texts)
  })

  for (const [name, status] of [
    ["INTERNAL", 13],
    ["UNAUTHENTICATED", 16],
    ["UNAVAILABLE", 14]
  ] as const) {
    it(`a server answering ${name} with the authorization header in its message: no token anywhere`, { timeout: 60_000 }, async () => {
      const server = await fakeServer(status)
      try {
        const { texts, errors } = await exercise(`sc://127.0.0.1:${server.port}/;token=${SECRET}`)
        // the token did reach the server, as a bearer token, and the server did quote it
        expect(server.seen).toContain(`Bearer ${SECRET}`)
        expect(errors).toBeGreaterThanOrEqual(3)
        expect(texts.some((t) => t.includes("request refused; it carried authorization: Bearer ***"))).toBe(true)
        expectNoSecret(texts)
      } finally {
        await server.close()
      }
    })
  }

  it("an address that does not parse fails typed, without the token", () => {
    for (const address of [`sc://h:1/;token=${SECRET}%zz`, `sc://h:1/;token=${SECRET};use_ssl=maybe`, `sc://h:1/;TOKEN=${SECRET};x`]) {
      const r = Client.parseAddress(address)
      expect(r._tag, address).toBe("Failure")
      if (r._tag === "Failure") {
        expect(r.failure._tag).toBe("ConnectorError")
        expectNoSecret([r.failure.message, inspect(r.failure, { depth: 20 })])
      }
    }
    expect(Client.redact(`sc://h:1/;Token=${SECRET};user_id=a`)).toBe("sc://h:1/;token=***;user_id=a")
  })
})
