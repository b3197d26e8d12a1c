/**
 * Listener events of streaming queries (Spark's `StreamingQueryListener` and its events) and
 * how the engine calls a listener: every execution and the Spark Connect listener bus post
 * through `runListenerCallback`, so a listener that throws, rejects or fails is logged and
 * never affects a query.
 *
 * @since 0.1.0
 */
import { Cause, Effect } from "effect"
import type { StreamingQueryProgress } from "./StreamingQueryProgress.ts"

export interface QueryStartedEvent {
  readonly id: string
  readonly runId: string
  readonly name: string | null
  readonly timestamp: string
}

export interface QueryProgressEvent {
  readonly progress: StreamingQueryProgress
}

export interface QueryIdleEvent {
  readonly id: string
  readonly runId: string
  readonly timestamp: string
}

export interface QueryTerminatedEvent {
  readonly id: string
  readonly runId: string
  /** The failure's message, or `null` when the query stopped normally. */
  readonly exception: string | null
  readonly errorClassOnException: string | null
}

type Callback<E> = (event: E) => void | Promise<void> | Effect.Effect<void, unknown>

/**
 * A listener of every query of a session (`spark.streams.addListener`). Callbacks may return
 * nothing, a Promise or an Effect; a failing callback is logged and does not affect queries.
 */
export interface StreamingQueryListener {
  readonly onQueryStarted?: Callback<QueryStartedEvent>
  readonly onQueryProgress?: Callback<QueryProgressEvent>
  readonly onQueryIdle?: Callback<QueryIdleEvent>
  readonly onQueryTerminated?: Callback<QueryTerminatedEvent>
}

/**
 * Runs a listener callback that may return nothing, a Promise or an Effect; its failures (a
 * throw, a rejection, a failed Effect) are logged, not raised.
 *
 * @since 0.1.0
 */
export const runListenerCallback = (f: () => unknown): Effect.Effect<void> =>
  Effect.suspend(() => {
    const r = f()
    if (Effect.isEffect(r)) return Effect.asVoid(r as Effect.Effect<unknown, unknown>)
    if (r instanceof Promise) return Effect.asVoid(Effect.tryPromise(() => r))
    return Effect.void
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("A streaming query listener failed", Cause.pretty(cause))))
