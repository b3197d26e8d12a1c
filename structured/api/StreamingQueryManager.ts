/**
 * `spark.streams`: Spark's `StreamingQueryManager` — the session's active queries, waiting for
 * any of them to end, and listeners of every query's lifecycle.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { type StreamingQueryError, StreamingQueryError as StreamingQueryErrorClass } from "../../core/Errors.ts"
import { orLogged, type RemoteError } from "../contracts/Remote.ts"
import type { SessionState } from "../contracts/SessionState.ts"
import type { StreamingQuery } from "../contracts/StreamingQuery.ts"
import type { StreamingQueryListener } from "../contracts/StreamingQueryListener.ts"

export interface StreamingQueryManager {
  /** The active queries. */
  readonly active: () => Effect.Effect<ReadonlyArray<StreamingQuery>>
  /** The active query with this id (or run id), or `undefined`. */
  readonly get: (id: string) => Effect.Effect<StreamingQuery | undefined>
  /**
   * Waits until any query ends (returns at once if one ended since the last `resetTerminated`).
   * Fails with that query's error if it failed; with a timeout, `false` when none ended in time.
   */
  readonly awaitAnyTermination: (timeoutMs?: number) => Effect.Effect<boolean, StreamingQueryError>
  /** Forgets ended queries, so `awaitAnyTermination` waits for a new one. */
  readonly resetTerminated: () => Effect.Effect<void>
  readonly addListener: (listener: StreamingQueryListener) => Effect.Effect<void>
  readonly removeListener: (listener: StreamingQueryListener) => Effect.Effect<void>
  /** The registered listeners. */
  readonly listListeners: () => Effect.Effect<ReadonlyArray<StreamingQueryListener>>
}

export const make = (state: SessionState): StreamingQueryManager => {
  const local = makeLocal(state)
  const remote = state.remote
  if (remote === undefined) return local
  // A remote session's queries live on Spark; listeners hear them through Spark Connect's
  // listener bus. The manager's methods have no error channel for transport failures: they are
  // logged and read as "no query", and `awaitAnyTermination` fails with them as a query error.
  const logged = <A>(effect: Effect.Effect<A, RemoteError>, fallback: A) => orLogged("spark.streams", effect, fallback)
  return {
    ...local,
    active: () => logged(remote.streams.active(), []),
    get: (id) => logged(remote.streams.get(id), undefined),
    awaitAnyTermination: (timeoutMs) =>
      Effect.catchIf(
        remote.streams.awaitAnyTermination(timeoutMs),
        (e): e is Exclude<typeof e, StreamingQueryError> => e._tag !== "StreamingQueryError",
        (e) =>
          Effect.fail(
            new StreamingQueryErrorClass({
              message: `awaitAnyTermination on the remote session failed: ${e.message}`,
              queryId: "",
              runId: "",
              batchId: undefined,
              cause: e
            })
          )
      ),
    resetTerminated: () => logged(remote.streams.resetTerminated(), undefined),
    // Listeners hear remote queries through Spark Connect's listener bus while there are any.
    addListener: (listener) => Effect.andThen(local.addListener(listener), remote.listenersChanged()),
    removeListener: (listener) => Effect.andThen(local.removeListener(listener), remote.listenersChanged())
  }
}


const makeLocal = (state: SessionState): StreamingQueryManager => {
  const registry = state.queries
  // Spark's `lastTerminatedQueryException`: once a query ended with an error, every later
  // `awaitAnyTermination` (until `resetTerminated`) fails with the latest such error, even when
  // an earlier query had stopped cleanly.
  const firstEnded = (): Effect.Effect<boolean, StreamingQueryError> =>
    Effect.flatMap(
      Effect.forEach(registry.terminated, (q) => q.exception()),
      (errors) => {
        const failed = errors.filter((e): e is StreamingQueryError => e !== null)
        return failed.length === 0 ? Effect.succeed(true) : Effect.fail(failed[failed.length - 1])
      }
    )
  return {
    active: () => Effect.sync(() => [...registry.active.values()]),
    get: (id) =>
      Effect.sync(() => {
        for (const q of registry.active.values()) if (q.id === id || q.runId === id) return q
        return undefined
      }),
    awaitAnyTermination: (timeoutMs) =>
      Effect.suspend(() => {
        if (registry.terminated.length > 0) return firstEnded()
        const wait = Effect.promise(() => registry.anyTerminated.promise)
        const waited =
          timeoutMs === undefined
            ? Effect.as(wait, true)
            : Effect.map(Effect.timeoutOption(wait, timeoutMs), (o) => o._tag === "Some")
        return Effect.flatMap(waited, (ended) => (ended ? firstEnded() : Effect.succeed(false)))
      }),
    resetTerminated: () =>
      Effect.sync(() => {
        registry.terminated.length = 0
      }),
    addListener: (listener) =>
      Effect.sync(() => {
        registry.listeners.push(listener)
      }),
    removeListener: (listener) =>
      Effect.sync(() => {
        const i = registry.listeners.indexOf(listener)
        if (i >= 0) registry.listeners.splice(i, 1)
      }),
    listListeners: () => Effect.sync(() => registry.listeners.slice())
  }
}
