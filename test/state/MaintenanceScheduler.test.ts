/** The maintenance scheduler both state store providers share: when a run starts, one at a time, failures logged. */
import { it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { assert, describe } from "vitest"
import { StateStoreError } from "../../core/Errors.ts"
import * as MaintenanceScheduler from "../../state/MaintenanceScheduler.ts"

const store = () => ({
  operatorId: 0,
  storeName: "default",
  commitsSinceMaintenance: 0,
  maintenance: undefined as Fiber.Fiber<void, never> | undefined
})

describe("MaintenanceScheduler", () => {
  it.effect("runs after everyCommits commits, one run per store at a time, never once closed", () =>
    Effect.gen(function* () {
      const scope = yield* Effect.scope
      let runs = 0
      let closed = false
      const release = yield* Deferred.make<void>()
      const scheduler = MaintenanceScheduler.make<ReturnType<typeof store>>({
        everyCommits: 2,
        scope,
        isClosed: () => closed,
        what: "maintenance",
        run: (h) =>
          Effect.gen(function* () {
            runs++
            h.commitsSinceMaintenance = 0
            yield* Deferred.await(release)
          })
      })
      const h = store()
      h.commitsSinceMaintenance = 1
      yield* scheduler.schedule(h)
      assert.strictEqual(h.maintenance, undefined, "not due after one commit")
      h.commitsSinceMaintenance = 2
      yield* scheduler.schedule(h)
      assert.isDefined(h.maintenance)
      assert.deepStrictEqual(scheduler.running([h, store()]), [h.maintenance])
      h.commitsSinceMaintenance = 5
      yield* scheduler.schedule(h)
      yield* Effect.yieldNow
      assert.strictEqual(runs, 1, "a store runs one maintenance at a time")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.awaitAll(scheduler.running([h]))
      assert.strictEqual(h.maintenance, undefined)
      closed = true
      h.commitsSinceMaintenance = 2
      yield* scheduler.schedule(h)
      assert.strictEqual(h.maintenance, undefined, "nothing starts once the provider closed")
      assert.strictEqual(runs, 1)
    }).pipe(Effect.scoped)
  )

  it.effect("a failing run is logged and cleared, so the next one can start; everyCommits 0 never runs", () =>
    Effect.gen(function* () {
      const scope = yield* Effect.scope
      let runs = 0
      const failing = MaintenanceScheduler.make<ReturnType<typeof store>>({
        everyCommits: 1,
        scope,
        isClosed: () => false,
        what: "compaction",
        run: () =>
          Effect.suspend(() => {
            runs++
            return Effect.fail(new StateStoreError({ reason: "Io", message: "disk full" }))
          })
      })
      const h = store()
      h.commitsSinceMaintenance = 1
      yield* failing.schedule(h)
      yield* Fiber.awaitAll(failing.running([h]))
      assert.strictEqual(h.maintenance, undefined)
      yield* failing.schedule(h)
      yield* Fiber.awaitAll(failing.running([h]))
      assert.strictEqual(runs, 2)
      const never = MaintenanceScheduler.make<ReturnType<typeof store>>({
        everyCommits: 0,
        scope,
        isClosed: () => false,
        what: "maintenance",
        run: () => Effect.sync(() => void runs++)
      })
      h.commitsSinceMaintenance = 100
      yield* never.schedule(h)
      assert.strictEqual(h.maintenance, undefined)
      assert.strictEqual(runs, 2)
    }).pipe(Effect.scoped)
  )
})
