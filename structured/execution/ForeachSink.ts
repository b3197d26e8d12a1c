/**
 * The sink behind `writeStream.foreach(writer)` (Spark's `ForeachWriterTable` in micro-batch
 * mode), and what both user-function sinks (`foreach`, `foreachBatch`) share: calling user code
 * that may return nothing, a Promise or an Effect, and Spark's classification of its failures.
 *
 * @since 0.1.0
 */
import { Effect, Result } from "effect"
import { ConnectorError, errorClassOf, isTaggedError } from "../../core/Errors.ts"
import { rowsToExternal } from "../../core/Row.ts"
import type { Sink } from "../../core/Streaming.ts"

/**
 * What `foreach` calls: `open` per partition and epoch, `process` per row, `close` at the end.
 *
 * @since 0.1.0
 */
export interface ForeachWriter<R> {
  readonly open?: (partitionId: number, epochId: number) => boolean | Promise<boolean>
  readonly process: (row: R) => void | Promise<void>
  readonly close?: (error: unknown) => void | Promise<void>
}

/** Runs user code that may return nothing, a Promise or an Effect; its failure fails the batch. */
export const callUser = (f: () => unknown): Effect.Effect<void, unknown> =>
  Effect.suspend(() => {
    let r: unknown
    try {
      r = f()
    } catch (e) {
      // A function that throws fails like one whose Promise rejects (not as a defect).
      return Effect.fail(e)
    }
    if (Effect.isEffect(r)) return Effect.asVoid(r as Effect.Effect<unknown, unknown>)
    if (r instanceof Promise) return Effect.asVoid(Effect.tryPromise({ try: () => r, catch: (e) => e }))
    return Effect.void
  })

/**
 * What a `foreachBatch` or `foreach` user function failed with: Spark's
 * `ForeachBatchUserFuncException` (`FOREACH_BATCH_USER_FUNCTION_ERROR`) and
 * `ForeachUserFuncException` (`FOREACH_USER_FUNCTION_ERROR`), whose reason is the cause's
 * message. A typed tributary error (one with a `_tag`) keeps its own message and error class,
 * as Spark does not wrap a `SparkThrowable`.
 */
export const userFailure = (connector: "foreachBatch" | "foreach") => (cause: unknown) => {
  if (isTaggedError(cause)) {
    if (cause instanceof ConnectorError) return cause
    const message = (cause as { message?: unknown }).message
    return new ConnectorError({
      connector,
      domain: "user",
      retryable: false,
      message: typeof message === "string" ? message : String(cause),
      errorClass: errorClassOf(cause),
      cause
    })
  }
  const reason = cause instanceof Error ? cause.message : cause === null || cause === undefined ? "" : String(cause)
  const errorClass = connector === "foreachBatch" ? "FOREACH_BATCH_USER_FUNCTION_ERROR" : "FOREACH_USER_FUNCTION_ERROR"
  const where = connector === "foreachBatch" ? "foreach batch sink" : "foreach sink"
  return new ConnectorError({
    connector,
    domain: "user",
    retryable: false,
    errorClass,
    message: `[${errorClass}] An error occurred in the user provided function in ${where}. Reason: ${reason}`,
    cause
  })
}

/**
 * The micro-batch sink of `foreach(writer)`: one partition per batch, `open(0, batchId)`, then
 * `process` for every row (a synchronous `process` costs no promise per row), then `close` with
 * the first failure or `null`.
 *
 * @since 0.1.0
 */
export const foreachSink = <R>(writer: ForeachWriter<R>): Sink => ({
  description: "ForeachWriterSink",
  addBatch: (batch) =>
    Effect.gen(function* () {
      const rows = rowsToExternal<R>(batch.schema, batch.rows)
      let opened = true
      if (writer.open !== undefined) {
        const open = writer.open
        const r = yield* Effect.tryPromise({ try: async () => open(0, batch.batchId), catch: (e) => e })
        opened = r !== false
      }
      let failure: unknown
      if (opened) {
        // One effect for the batch, a plain loop inside: a synchronous `process` costs no
        // promise per row; only a returned promise is awaited. The first failure stops it.
        const process = writer.process
        const out = yield* Effect.tryPromise({
          try: async () => {
            for (const row of rows) {
              const r = process(row)
              if (r !== undefined && typeof (r as PromiseLike<void>).then === "function") await r
            }
          },
          catch: (e) => e
        }).pipe(Effect.result)
        if (Result.isFailure(out)) failure = out.failure
      }
      if (writer.close !== undefined) {
        const close = writer.close
        yield* Effect.tryPromise({ try: async () => close(failure ?? null), catch: (e) => e })
      }
      if (failure !== undefined) return yield* Effect.fail(failure)
    }).pipe(Effect.mapError(userFailure("foreach"))),
  stop: () => Effect.void
})
