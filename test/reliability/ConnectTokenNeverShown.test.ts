/**
 * The Spark Connect token never appears in errors, logs or progress (issue #20 item 6). A remote
 * session is opened with `sc://…/;token=<secret>` against a port where nothing listens: every
 * error a batch action, a streaming start and the conf calls give, and everything Effect's logger
 * receives (messages and causes, printed in depth) must not contain the secret. The client is
 * also run over an in-memory transport to a fake Spark Connect service whose every answer is an
 * error that echoes the request's `authorization` header back (a server or proxy that quotes the
 * request in its message — the worst case a client can meet): the errors of every call must hide
 * it. An address that does not parse (a bad `%` escape in the token) must fail typed, without
 * the secret.
 */
import * as net from "node:net"
import { inspect } from "node:util"
import { create } from "@bufbuild/protobuf"
import { Code, ConnectError, createRouterTransport, type HandlerContext } from "@connectrpc/connect"
import { describe, expect, it } from "vitest"
import { Effect, Layer, Logger, Schema } from "effect"
import * as Client from "../../connect/Client.ts"
import { PlanSchema, SparkConnectService } from "../../connect/gen/spark/connect/base_pb.ts"
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

/**
 * A transport to a fake Spark Connect service answering every call with `code` and a message
 * quoting the request's authorization header (in memory, through the client's interceptors).
 */
const echoingTransport = (code: Code, seen: Array<string>) =>
  Layer.succeed(Client.SparkConnectTransport, {
    make: (_address, interceptors) =>
      createRouterTransport(
        (router) => {
          const refuse = (ctx: HandlerContext): never => {
            const auth = ctx.requestHeader.get("authorization") ?? ""
            seen.push(auth)
            throw new ConnectError(`request refused; it carried authorization: ${auth}`, code, { "x-echo": auth })
          }
          router.service(SparkConnectService, {
            // biome-ignore lint/correctness/useYield: the stream fails before its first response
            executePlan: async function* (_req, ctx) {
              refuse(ctx)
            },
            analyzePlan: (_req, ctx) => refuse(ctx),
            config: (_req, ctx) => refuse(ctx),
            releaseSession: (_req, ctx) => refuse(ctx)
          })
        },
        { transport: { interceptors: [...interceptors] } }
      )
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
    // a port that was free a moment ago
    const port = await new Promise<number>((resolve) => {
      const server = net.createServer()
      server.listen(0, "127.0.0.1", () => {
        const p = (server.address() as net.AddressInfo).port
        server.close(() => resolve(p))
      })
    })
    const { texts, errors } = await exercise(`sc://127.0.0.1:${port}/;token=${SECRET};user_id=ann`)
    expect(errors).toBeGreaterThanOrEqual(3)
    expectNoSecret(texts)
  })

  for (const code of [Code.Internal, Code.Unauthenticated, Code.Unavailable, Code.InvalidArgument]) {
    it(`a server answering ${Code[code]} with the authorization header in its message: no token in any error`, async () => {
      const seen: Array<string> = []
      const address = Client.parseAddress(`sc://spark.example:15002/;token=${SECRET};user_id=ann`)
      if (address._tag !== "Success") throw new Error("the address should parse")
      const texts = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const client = yield* Client.make(address.success)
            const out: Array<string> = []
            const calls = [
              client.execute(create(PlanSchema, {})),
              client.executeEach(create(PlanSchema, {}), async () => undefined),
              client.analyze({ case: "sparkVersion", value: {} }),
              client.config({ case: "getAll", value: {} })
            ] as ReadonlyArray<Effect.Effect<unknown, unknown>>
            for (const call of calls) {
              const e = (yield* Effect.flip(call)) as Error
              out.push(String(e), e.message, inspect(e, { depth: 20 }), JSON.stringify(e) ?? "")
            }
            return out
          })
        ).pipe(Effect.provide(echoingTransport(code, seen)))
      )
      // the token did reach the server, as a bearer token, and the server did quote it
      expect(seen).toContain(`Bearer ${SECRET}`)
      expect(texts.some((t) => t.includes("request refused; it carried authorization: Bearer ***"))).toBe(true)
      expectNoSecret(texts)
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
