/**
 * The Spark Connect backend is loaded when the first remote session opens (connect/mod.ts), so
 * the local engine loads without the generated protocol code. When loading fails, the session
 * still opens and each action fails with a typed `ConnectorError`: naming the command that
 * generates the code when that is what is missing, carrying the cause otherwise.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { GENERATE_PROTOCOL_COMMAND, lazyBackend } from "../../connect/mod.ts"
import { ConnectorError } from "../../core/Errors.ts"
import type { RemoteFactory, RemoteSessionView } from "../../structured/contracts/Remote.ts"

const view: RemoteSessionView = { memorySources: { has: () => false }, tableFormat: "table", listeners: () => [] }

const missingModule = () => {
  const e = new Error("Cannot find module '/app/connect/gen/spark/connect/base_pb.ts' imported from /app/connect/Client.ts") as Error & {
    code: string
  }
  e.code = "ERR_MODULE_NOT_FOUND"
  return Promise.reject(e)
}

const firstCall = (factory: RemoteFactory) =>
  Effect.scoped(
    Effect.gen(function* () {
      const backend = yield* factory("sc://example.com:15002/;token=secret", {}, view)
      const error = yield* Effect.flip(backend.version())
      return { backend, error }
    })
  )

describe("the lazily loaded Spark Connect backend", () => {
  it.effect("names the command that generates the protocol code when it is missing", () =>
    Effect.gen(function* () {
      const { backend, error } = yield* firstCall(lazyBackend(missingModule))
      assert.instanceOf(error, ConnectorError)
      assert.strictEqual(error.domain, "user")
      assert.strictEqual(error.retryable, false)
      assert.include(error.message, GENERATE_PROTOCOL_COMMAND)
      assert.include(error.message, "connect/gen/")
      // The address is shown without its token.
      assert.strictEqual(backend.address, "sc://example.com:15002/;token=***")
      const streams = yield* Effect.flip(backend.streams.active())
      assert.strictEqual(streams.message, error.message)
    })
  )

  it.effect("carries any other load failure as an internal error", () =>
    Effect.gen(function* () {
      const { error } = yield* firstCall(lazyBackend(() => Promise.reject(new SyntaxError("Unexpected token"))))
      assert.instanceOf(error, ConnectorError)
      assert.strictEqual((error as ConnectorError).domain, "internal")
      assert.include(error.message, "Unexpected token")
      assert.notInclude(error.message, GENERATE_PROTOCOL_COMMAND)
    })
  )

  it.effect("loads the module once and opens each session through it", () =>
    Effect.gen(function* () {
      let loads = 0
      let opens = 0
      const factory = lazyBackend(() => {
        loads++
        return Promise.resolve({
          open: ((address, conf, session) => {
            opens++
            return lazyBackend(missingModule)(address, conf, session)
          }) satisfies RemoteFactory
        })
      })
      yield* firstCall(factory)
      yield* firstCall(factory)
      assert.strictEqual(loads, 1)
      assert.strictEqual(opens, 2)
    })
  )

  it.effect("retries the load after a failure", () =>
    Effect.gen(function* () {
      let calls = 0
      const factory = lazyBackend(() => (++calls === 1 ? missingModule() : Promise.reject(new Error("second"))))
      const a = yield* firstCall(factory)
      const b = yield* firstCall(factory)
      assert.include(a.error.message, GENERATE_PROTOCOL_COMMAND)
      assert.include(b.error.message, "second")
      assert.strictEqual(calls, 2)
    })
  )
})

