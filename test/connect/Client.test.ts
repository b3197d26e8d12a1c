import { create } from "@bufbuild/protobuf"
import { it } from "@effect/vitest"
import { createGrpcTransport } from "@connectrpc/connect-node"
import { Effect, Layer, Result } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import * as Client from "../../connect/Client.ts"
import { PlanSchema } from "../../connect/gen/spark/connect/base_pb.ts"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import { remoteAddress, withToken } from "./remote.ts"

const sqlPlan = (query: string) =>
  create(PlanSchema, { opType: { case: "root", value: { relType: { case: "sql", value: { query } } } } })

const withClient = <A, E>(address: string, f: (c: Client.SparkConnectClient) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    const parsed = Client.parseAddress(address)
    if (Result.isFailure(parsed)) return yield* parsed.failure
    const client = yield* Client.make(parsed.success)
    return yield* f(client)
  }).pipe(Effect.provide(Client.SparkConnectTransport.node), Effect.scoped)

describe("parseAddress", () => {
  it("reads host, port and Spark's parameters", () => {
    const a = Client.parseAddress("sc://spark.example.com:443/;token=abc;user_id=ann;use_ssl=true")
    expect(Result.isSuccess(a) && a.success).toMatchObject({
      host: "spark.example.com",
      port: 443,
      token: "abc",
      userId: "ann",
      useSsl: true
    })
  })

  it("defaults the port to 15002 and the user to tributary", () => {
    const a = Client.parseAddress("sc://localhost")
    expect(Result.isSuccess(a) && a.success).toMatchObject({ host: "localhost", port: 15002, userId: "tributary", useSsl: false })
  })

  it("keeps a given session id (a UUID) and refuses one that is not", () => {
    const id = "9f2a7a0e-5c1b-4c1e-9b57-1a2b3c4d5e6f"
    const ok = Client.parseAddress(`sc://h:1/;session_id=${id}`)
    expect(Result.isSuccess(ok) && ok.success.sessionId).toBe(id)
    const bad = Client.parseAddress("sc://h:1/;session_id=nope")
    expect(Result.isFailure(bad) && bad.failure.message).toContain("session_id must be a UUID")
  })

  it.each([
    ["http://h:1", "must start with sc://"],
    ["sc://", "the host is missing"],
    ["sc://h:99999", "is not a port"],
    ["sc://h:1/path", "a path is not allowed"],
    ["sc://h:1/;token", "is not key=value"],
    ["sc://h:1/;use_ssl=yes", "use_ssl must be true or false"]
  ])("refuses %s", (address, why) => {
    const r = Client.parseAddress(address)
    expect(Result.isFailure(r)).toBe(true)
    if (Result.isFailure(r)) {
      expect(r.failure).toBeInstanceOf(ConnectorError)
      expect(r.failure.domain).toBe("user")
      expect(r.failure.message).toContain(why)
    }
  })

  it("never shows the token in messages", () => {
    const r = Client.parseAddress("sc://h:1/;token=s3cret;use_ssl=maybe")
    expect(Result.isFailure(r) && r.failure.message).not.toContain("s3cret")
    expect(Client.redact("sc://h:1/;token=s3cret;user_id=a")).toBe("sc://h:1/;token=***;user_id=a")
  })
})

describe("SparkConnectClient against a real Spark", () => {
  it.effect("runs ExecutePlan and reports Spark's version", () =>
    withClient(remoteAddress(), (c) =>
      Effect.gen(function* () {
        const responses = yield* c.execute(sqlPlan("select 1 as one"))
        expect(responses.some((r) => r.responseType.case === "arrowBatch")).toBe(true)
        const v = yield* c.analyze({ case: "sparkVersion", value: {} })
        expect(v.result.case === "sparkVersion" && v.result.value.version).toMatch(/^4\.2\./)
      })
    )
  )

  it.effect("sets and reads conf on its own remote session", () =>
    withClient(remoteAddress(), (c) =>
      Effect.gen(function* () {
        yield* c.config({ case: "set", value: { pairs: [{ key: "spark.sql.shuffle.partitions", value: "3" }] } })
        const r = yield* c.config({ case: "get", value: { keys: ["spark.sql.shuffle.partitions"] } })
        expect(r.pairs.map((p) => [p.key, p.value])).toEqual([["spark.sql.shuffle.partitions", "3"]])
      })
    )
  )

  it.effect("turns Spark's AnalysisException into an AnalysisError with its error class", () =>
    withClient(remoteAddress(), (c) =>
      Effect.gen(function* () {
        const e = yield* Effect.flip(c.execute(sqlPlan("select nope from range(1)")))
        expect(e).toBeInstanceOf(AnalysisError)
        if (e instanceof AnalysisError) {
          expect(e.reason).toBe("UnresolvedColumn")
          expect(e.errorClass).toBe("UNRESOLVED_COLUMN.WITH_SUGGESTION")
          expect(e.message).toContain("`nope`")
        }
        const parse = yield* Effect.flip(c.execute(sqlPlan("selec 1")))
        expect(parse).toBeInstanceOf(AnalysisError)
        expect(parse instanceof AnalysisError && parse.errorClass).toBe("PARSE_SYNTAX_ERROR")
      })
    )
  )

  it.effect("turns a failure while running into a ConnectorError with Spark's error class", () =>
    withClient(remoteAddress(), (c) =>
      Effect.gen(function* () {
        const e = yield* Effect.flip(c.execute(sqlPlan("select assert_true(id < 0) from range(2)")))
        expect(e).toBeInstanceOf(ConnectorError)
        if (e instanceof ConnectorError) {
          expect(e.connector).toBe("spark-connect")
          expect(e.retryable).toBe(false)
          expect(e.message).toContain("id < 0")
        }
      })
    )
  )

  it.effect("a server that is not there is a retryable ConnectorError", () =>
    withClient("sc://127.0.0.1:1", (c) =>
      Effect.gen(function* () {
        const e = yield* Effect.flip(c.execute(sqlPlan("select 1")))
        expect(e).toBeInstanceOf(ConnectorError)
        expect(e instanceof ConnectorError && e.retryable).toBe(true)
        expect(e.message).toContain("not reachable")
      })
    )
  )

  it.effect("sends the bearer token; a wrong or missing one is refused", () => {
    const address = remoteAddress()
    const token = /token=([^;]+)/.exec(address)?.[1]
    return Effect.gen(function* () {
      if (token === undefined) {
        // A server without authentication accepts any token: the header must not break the call.
        yield* withClient(withToken(address, "anything"), (c) => c.execute(sqlPlan("select 1")))
        return
      }
      const wrong = yield* Effect.flip(withClient(withToken(address, "wrong"), (c) => c.execute(sqlPlan("select 1"))))
      expect(wrong).toBeInstanceOf(ConnectorError)
      expect(wrong.message).toContain("check the token")
      expect(wrong.message).not.toContain(token)
      const none = yield* Effect.flip(withClient(withToken(address, undefined), (c) => c.execute(sqlPlan("select 1"))))
      expect(none).toBeInstanceOf(ConnectorError)
    })
  })

  it.effect("keeps an idle session alive on the Clock, through a transport the layer provides", () =>
    Effect.gen(function* () {
      const calls: Array<string> = []
      // A transport of our own (the service is the seam): the real gRPC one, recording each call.
      const recording = Layer.succeed(Client.SparkConnectTransport, {
        make: (address, interceptors) =>
          createGrpcTransport({
            baseUrl: `http://${address.host}:${address.port}`,
            interceptors: [
              ...interceptors,
              (next) => (req) => {
                calls.push(req.method.name)
                return next(req)
              }
            ]
          })
      })
      const parsed = Client.parseAddress(remoteAddress())
      if (Result.isFailure(parsed)) return yield* parsed.failure
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* Client.make(parsed.success, { keepAliveInterval: "1 minute" })
          yield* TestClock.adjust("59 seconds")
          expect(calls).toEqual([])
          yield* TestClock.adjust("1 second")
          // The keep-alive call runs on its own fiber: wait for it to reach the server.
          while (calls.length === 0) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
          expect(calls).toEqual(["AnalyzePlan"])
        })
      ).pipe(Effect.provide(recording))
      // Closing the scope releases the remote session.
      expect(calls).toEqual(["AnalyzePlan", "ReleaseSession"])
    })
  )
})
