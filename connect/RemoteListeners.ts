/**
 * `spark.streams.addListener` on a remote session: Spark Connect's listener bus. While the
 * session has listeners, one long-running `ExecutePlan` of `StreamingQueryListenerBusCommand`
 * (`add_listener_bus_listener`) streams Spark's listener events of every query of the remote
 * session; each is decoded and handed to the listeners (the same events, with the same types, the
 * local engine gives). When the last listener goes, `remove_listener_bus_listener` ends the
 * stream. `QueryStartedEvent`s come with `writeStream.start()` itself, as in pyspark.
 *
 * @since 0.4.0
 */
import { create } from "@bufbuild/protobuf"
import { Effect, Fiber, Result, type Scope } from "effect"
import {
  type QueryIdleEvent,
  type QueryProgressEvent,
  type QueryStartedEvent,
  type QueryTerminatedEvent,
  runListenerCallback,
  type StreamingQueryListener
} from "../structured/contracts/StreamingQueryListener.ts"
import type { SparkConnectClient } from "./Client.ts"
import { PlanSchema } from "./gen/spark/connect/base_pb.ts"
import {
  CommandSchema,
  StreamingQueryEventType,
  type StreamingQueryListenerEvent
} from "./gen/spark/connect/commands_pb.ts"
import { decodeProgress } from "./Progress.ts"

/** One decoded listener event, ready for dispatch. */
export type ListenerEvent =
  | { readonly _tag: "progress"; readonly event: QueryProgressEvent }
  | { readonly _tag: "idle"; readonly event: QueryIdleEvent }
  | { readonly _tag: "terminated"; readonly event: QueryTerminatedEvent }

const str = (v: unknown): string | null => (typeof v === "string" ? v : null)

/**
 * Decodes one of Spark's listener events (`event_json` by `event_type`); `undefined` for an event
 * that cannot be read (it is logged and skipped, never fatal to the bus).
 */
export const decodeListenerEvent = (e: StreamingQueryListenerEvent): ListenerEvent | undefined => {
  let o: Record<string, unknown>
  try {
    o = JSON.parse(e.eventJson) as Record<string, unknown>
  } catch {
    return undefined
  }
  switch (e.eventType) {
    case StreamingQueryEventType.QUERY_PROGRESS_EVENT: {
      // Spark writes `{ "progress": { … } }`.
      const progress = decodeProgress(JSON.stringify(o.progress ?? o))
      return Result.isSuccess(progress) ? { _tag: "progress", event: { progress: progress.success } } : undefined
    }
    case StreamingQueryEventType.QUERY_IDLE_EVENT: {
      const id = str(o.id)
      const runId = str(o.runId)
      if (id === null || runId === null) return undefined
      return { _tag: "idle", event: { id, runId, timestamp: str(o.timestamp) ?? "" } }
    }
    case StreamingQueryEventType.QUERY_TERMINATED_EVENT: {
      const id = str(o.id)
      const runId = str(o.runId)
      if (id === null || runId === null) return undefined
      return {
        _tag: "terminated",
        event: { id, runId, exception: str(o.exception), errorClassOnException: str(o.errorClassOnException) }
      }
    }
    default:
      return undefined
  }
}

const dispatch = (listeners: ReadonlyArray<StreamingQueryListener>, e: ListenerEvent): Effect.Effect<void> =>
  Effect.forEach(
    listeners,
    (l) => {
      switch (e._tag) {
        case "progress":
          return l.onQueryProgress === undefined ? Effect.void : runListenerCallback(() => l.onQueryProgress!(e.event))
        case "idle":
          return l.onQueryIdle === undefined ? Effect.void : runListenerCallback(() => l.onQueryIdle!(e.event))
        case "terminated":
          return l.onQueryTerminated === undefined ? Effect.void : runListenerCallback(() => l.onQueryTerminated!(e.event))
      }
    },
    { discard: true }
  )

/** Tells the listeners a query started (its event comes with `writeStream.start()`). */
export const dispatchStarted = (
  listeners: ReadonlyArray<StreamingQueryListener>,
  event: QueryStartedEvent
): Effect.Effect<void> =>
  Effect.forEach(
    listeners,
    (l) => (l.onQueryStarted === undefined ? Effect.void : runListenerCallback(() => l.onQueryStarted!(event))),
    { discard: true }
  )

const busCommand = (add: boolean) =>
  create(PlanSchema, {
    opType: {
      case: "command",
      value: create(CommandSchema, {
        commandType: {
          case: "streamingQueryListenerBusCommand",
          value: {
            command: add ? { case: "addListenerBusListener", value: true } : { case: "removeListenerBusListener", value: true }
          }
        }
      })
    }
  })

/** The listener bus of one remote session. */
export interface ListenerBus {
  /** Starts or stops the bus to match whether the session has listeners now. */
  readonly sync: () => Effect.Effect<void>
}

/**
 * The bus over `client`; its fiber lives in `scope` (the session's), so releasing the session
 * ends it. `listeners` reads the session's current listeners at each event.
 */
export const makeListenerBus = (
  client: SparkConnectClient,
  scope: Scope.Scope,
  listeners: () => ReadonlyArray<StreamingQueryListener>
): ListenerBus => {
  let fiber: Fiber.Fiber<void, never> | undefined
  const run = client
    .executeEach(busCommand(true), async (response) => {
      if (response.responseType.case !== "streamingQueryListenerEventsResult") return
      for (const e of response.responseType.value.events) {
        const decoded = decodeListenerEvent(e)
        if (decoded === undefined) {
          await Effect.runPromise(Effect.logWarning(`Spark Connect: a listener event could not be read: ${e.eventJson}`))
        } else await Effect.runPromise(dispatch(listeners(), decoded))
      }
    })
    .pipe(Effect.catch((e) => Effect.logWarning(`Spark Connect: the streaming listener bus ended: ${e.message}`)))
  return {
    sync: () =>
      Effect.suspend(() => {
        const wanted = listeners().length > 0
        if (wanted && fiber === undefined) {
          return Effect.map(Effect.forkIn(run, scope), (f) => {
            fiber = f
          })
        }
        if (!wanted && fiber !== undefined) {
          const f = fiber
          fiber = undefined
          // Spark ends the long-running call on remove; the interrupt covers a server that does not.
          return client.execute(busCommand(false)).pipe(Effect.ignore, Effect.andThen(Fiber.interrupt(f)))
        }
        return Effect.void
      })
  }
}
