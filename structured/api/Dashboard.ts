/**
 * The live dashboard (Spark UI's Structured Streaming and Streaming tabs):
 * `Session.layer({ ui: { port } })` serves a page with the session's active and finished queries
 * (name, ids, status, start time, duration, average rates, latest batch, last error) and its
 * DStream StreamingContexts; a page per query with Spark's charts over time — input and process
 * rate, input rows, batch duration, operation durations, the global watermark gap, the
 * aggregated state metrics — each with axes, hover values and a histogram, each stateful
 * operator's own metrics, the recent batches, and a failed query's error with its batch. It
 * updates live through server-sent events. `spark.uiWebUrl()` gives its address.
 *
 * Routes: `/` (the page, self-contained: no external scripts), `/api/queries` (every query with
 * its recent progress, JSON), `/api/streaming-contexts` (every StreamingContext with its recent
 * batches and receivers), `/api/events` (server-sent events: `started`, `progress`, `status`, `idle`,
 * `terminated`, `dstream`). It listens on 127.0.0.1 unless `host` says otherwise; beyond
 * localhost every request needs the token (`UiOptions.token`, generated when not given). Built
 * on `node:http`, which Node and Deno both provide.
 *
 * @example
 * ```ts
 * const program = Effect.gen(function* () {
 *   const spark = yield* Session
 *   console.log(yield* spark.uiWebUrl())     // http://127.0.0.1:4040/
 * })
 * Effect.runPromise(program.pipe(Effect.provide(Session.layer({ ui: { port: 4040 } }))))
 * ```
 * @since 0.1.0
 */
export type {
  StreamingContextBatchView,
  StreamingContextReceiverView,
  StreamingContextView
} from "../contracts/SessionState.ts"
export {
  type QuerySummary,
  querySummaries,
  type StreamingContextSummary,
  streamingContextSummaries,
  streamingContextSummary
} from "./dashboard/Model.ts"
export { PAGE } from "./dashboard/Page.ts"
export { isLoopback, serve, type UiOptions } from "./dashboard/Server.ts"
