/**
 * How a continuous query writes: the sink's own `continuousWrite` when it has one, or an epoch
 * adapter over `addBatch`; and the `foreach` writer, which gets every row as soon as it is
 * processed (Spark's `ForeachDataWriter`).
 *
 * The adapter is Spark's behaviour for its memory and console sinks in continuous mode: a
 * partition's rows are kept until its epoch ends and the sink receives the whole epoch, with the
 * epoch id as batch id, when the epoch commits. So those sinks stay idempotent per epoch (a
 * restart that replays an uncommitted epoch writes it once), at the cost of seeing rows only at
 * epoch boundaries. Record-level latency needs a sink that writes rows as they come: `foreach`.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type * as T from "../../core/DataType.ts"
import { ConnectorError } from "../../core/Errors.ts"
import { type InternalRow, toExternal } from "../../core/Row.ts"
import type { ContinuousDataWriter, ContinuousWrite, OutputMode, Sink } from "../../core/Streaming.ts"

/**
 * The continuous writes of `sink`: its own, or epochs gathered and handed to `addBatch`.
 *
 * @since 0.1.0
 */
export const continuousWriteOf = (sink: Sink, schema: T.StructType, outputMode: OutputMode): ContinuousWrite =>
  sink.continuousWrite ?? epochBatchWrite(sink, schema, outputMode)

/**
 * The adapter over `addBatch`: each partition writer keeps its epoch's rows; the epoch's commit
 * concatenates them in partition order and calls `addBatch({ batchId: epoch })`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { epochBatchWrite } from "./ContinuousWriters.ts"
 * const seen: Array<number> = []
 * const write = epochBatchWrite(
 *   { description: "test", addBatch: (b) => Effect.sync(() => { seen.push(b.rows.length) }), stop: () => Effect.void },
 *   { _tag: "struct", fields: [] }, "append")
 * ```
 * @since 0.1.0
 */
export const epochBatchWrite = (sink: Sink, schema: T.StructType, outputMode: OutputMode): ContinuousWrite => ({
  createWriter: () =>
    Effect.sync((): ContinuousDataWriter => {
      let rows: Array<InternalRow> = []
      return {
        write: (more) =>
          Effect.sync(() => {
            for (let i = 0; i < more.length; i++) rows.push(more[i])
          }),
        commit: () =>
          Effect.sync(() => {
            const out = rows
            rows = []
            return out
          }),
        abort: () =>
          Effect.sync(() => {
            rows = []
          })
      }
    }),
  commit: (epochId, messages) =>
    Effect.suspend(() => {
      const parts = messages as ReadonlyArray<ReadonlyArray<InternalRow>>
      const rows = parts.length === 1 ? parts[0] : parts.flat()
      return sink.addBatch({ batchId: epochId, schema, rows, outputMode })
    })
})

/** The `foreach` writer's shape (`DataStreamWriter.foreach`). */
export interface ForeachWriterLike {
  readonly open?: (partitionId: number, epochId: number) => boolean | Promise<boolean>
  // biome-ignore lint/suspicious/noExplicitAny: a writer typed for the query's rows (`ForeachWriter<R>`) must fit here
  readonly process: (row: any) => void | Promise<void>
  readonly close?: (error: unknown) => void | Promise<void>
}

const messageOf = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

const userFailure = (cause: unknown): ConnectorError =>
  new ConnectorError({
    connector: "foreach",
    domain: "user",
    retryable: false,
    message: `The foreach function failed: ${messageOf(cause)}`,
    cause
  })

/** Calls user code that may return a Promise; a throw or a rejection is the user's failure. */
const callUser = <A>(f: () => A | Promise<A>): Effect.Effect<A, ConnectorError> =>
  Effect.suspend(() => {
    let r: A | Promise<A>
    try {
      r = f()
    } catch (e) {
      return Effect.fail(userFailure(e))
    }
    return r instanceof Promise ? Effect.tryPromise({ try: () => r, catch: userFailure }) : Effect.succeed(r)
  })

/**
 * `foreach(writer)` in continuous mode (Spark's `ForeachWriterTable` / `ForeachDataWriter`): per
 * partition and epoch, `open(partitionId, epochId)`; `process(row)` for every row the moment the
 * task has it (skipped when `open` returned false); `close(null)` when the partition ends the
 * epoch; `close(error)` when the task fails or the query stops first. A `process` that throws or
 * rejects fails the task, and with it the query.
 *
 * @example
 * ```ts
 * import { foreachContinuousWrite } from "./ContinuousWriters.ts"
 * const write = foreachContinuousWrite({ process: (row) => console.log(row) }, { _tag: "struct", fields: [] })
 * ```
 * @since 0.1.0
 */
export const foreachContinuousWrite = (writer: ForeachWriterLike, schema: T.StructType): ContinuousWrite => {
  const external = toExternal(schema)
  const close = (error: unknown): Effect.Effect<void, ConnectorError> =>
    writer.close === undefined ? Effect.void : callUser(() => writer.close!(error))
  return {
    createWriter: (partitionId, epochId) =>
      Effect.map(
        writer.open === undefined ? Effect.succeed(true) : callUser(() => writer.open!(partitionId, epochId)),
        (opened): ContinuousDataWriter => {
          let failure: unknown = null
          return {
            write: (rows) => {
              if (opened === false) return Effect.void
              // Plain calls while `process` is synchronous; from the first Promise on, the rest
              // of the rows wait for it in order.
              for (let i = 0; i < rows.length; i++) {
                let r: void | Promise<void>
                try {
                  r = writer.process(external(rows[i]))
                } catch (e) {
                  failure = e
                  return Effect.fail(userFailure(e))
                }
                if (r instanceof Promise) {
                  const from = i + 1
                  return Effect.tryPromise({
                    try: async () => {
                      await r
                      for (let j = from; j < rows.length; j++) await writer.process(external(rows[j]))
                    },
                    catch: (e) => {
                      failure = e
                      return userFailure(e)
                    }
                  })
                }
              }
              return Effect.void
            },
            commit: () => Effect.as(close(null), undefined),
            abort: (cause) =>
              // Spark's `ForeachDataWriter.abort`: the writer's own failure, or a generic one.
              Effect.ignore(
                close(failure ?? cause ?? new Error("Foreach writer has been aborted due to a task failure"))
              )
          }
        }
      ),
    commit: () => Effect.void
  }
}
