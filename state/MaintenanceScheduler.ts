/**
 * Background maintenance of state stores, shared by the providers (the DuckDB provider's
 * compaction, the file provider's snapshots and cleanup): after every `everyCommits` commits of
 * a store, one maintenance run of that store is forked into the provider's scope, apart from the
 * commit path (a commit never waits for it); a store runs at most one at a time; a failure is
 * logged (the next run tries again); closing the provider waits for the runs under way.
 *
 * @since 0.1.0
 */
import { Effect, type Fiber, type Scope } from "effect"
import type { StateStoreError } from "../core/Errors.ts"
import { describeStore } from "./StateStore.ts"

/** What the scheduler keeps on a provider's store handle. */
export interface MaintainedStore {
  readonly operatorId: number
  readonly storeName: string
  /** Commits since the last maintenance run started; the provider counts them and resets it. */
  commitsSinceMaintenance: number
  /** The run under way, if any. */
  maintenance: Fiber.Fiber<void, never> | undefined
}

export interface MaintenanceScheduler<H extends MaintainedStore> {
  /** After a commit of `h`: starts a maintenance run in the background when one is due. */
  readonly schedule: (h: H) => Effect.Effect<void>
  /** The runs under way on these stores (closing the provider waits for them). */
  readonly running: (stores: Iterable<H>) => ReadonlyArray<Fiber.Fiber<void, never>>
}

/**
 * A scheduler running `run(h)` every `everyCommits` commits (0 or less: never on its own; a
 * provider's `maintain()` still runs it), not after the provider closed; `what` names the run in
 * the warning a failure logs ("State store compaction of operator 0 store 'default' failed: …").
 *
 * @since 0.1.0
 */
export const make = <H extends MaintainedStore>(options: {
  readonly everyCommits: number
  readonly scope: Scope.Scope
  readonly isClosed: () => boolean
  readonly what: string
  readonly run: (h: H) => Effect.Effect<void, StateStoreError>
}): MaintenanceScheduler<H> => ({
  schedule: (h) => {
    if (
      options.everyCommits <= 0 ||
      h.commitsSinceMaintenance < options.everyCommits ||
      h.maintenance !== undefined ||
      options.isClosed()
    ) {
      return Effect.void
    }
    const run = options.run(h).pipe(
      Effect.catch((e) => Effect.logWarning(`State store ${options.what} of ${describeStore(h)} failed: ${e.message}`)),
      Effect.ensuring(
        Effect.sync(() => {
          h.maintenance = undefined
        })
      )
    )
    return Effect.map(Effect.forkIn(run, options.scope, { uninterruptible: true }), (fiber) => {
      h.maintenance = fiber
    })
  },
  running: (stores) => {
    const out: Array<Fiber.Fiber<void, never>> = []
    for (const h of stores) if (h.maintenance !== undefined) out.push(h.maintenance)
    return out
  }
})
