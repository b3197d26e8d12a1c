/** The provider registry: every name makes the provider of that name, and a session is built on it. */
import { it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { assert, describe } from "vitest"
import { StateStoreProviderService } from "../../state/StateStore.ts"
import * as StateStoreProviders from "../../state/StateStoreProviders.ts"
import { Session } from "../../structured/api/Session.ts"

describe("StateStoreProviders", () => {
  it("knows duckdb (the default) and memory, and nothing else", () => {
    assert.deepStrictEqual(StateStoreProviders.providerNames(), ["duckdb", "memory"])
    assert.strictEqual(StateStoreProviders.DEFAULT_PROVIDER, "duckdb")
    assert.isTrue(StateStoreProviders.isProviderName("memory"))
    for (const name of ["rocksdb", "", "toString", "hasOwnProperty", undefined, 1]) {
      assert.isFalse(StateStoreProviders.isProviderName(name), String(name))
    }
  })

  it.effect("each name makes the provider that reports that name (what a checkpoint records)", () =>
    Effect.gen(function* () {
      for (const name of StateStoreProviders.providerNames()) {
        const provider = yield* Effect.scoped(StateStoreProviders.make(name))
        assert.strictEqual(provider.name, name)
        const service = yield* Effect.gen(function* () {
          return yield* StateStoreProviderService
        }).pipe(Effect.provide(StateStoreProviders.layer(name)))
        assert.strictEqual(service.name, name)
      }
    })
  )

  it.effect("Session.layer({ stateStore }) runs its queries on the named provider, the default without one", () =>
    Effect.gen(function* () {
      const nameIn = (layer: Layer.Layer<Session>) =>
        Effect.gen(function* () {
          const spark = yield* Session
          return spark.state.stateStoreProvider?.name
        }).pipe(Effect.provide(layer))
      assert.strictEqual(yield* nameIn(Session.layer()), "duckdb")
      assert.strictEqual(yield* nameIn(Session.layer({ stateStore: "memory" })), "memory")
      assert.strictEqual(yield* nameIn(Session.layer({ stateStore: "duckdb" })), "duckdb")
    })
  )
})
