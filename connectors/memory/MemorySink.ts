/**
 * The `memory` sink (Spark's `MemorySink`): keeps the query's output in a session table named by
 * the query name, which `spark.table(name)` reads. Append and update modes add each batch's rows
 * (Spark's `SupportsStreamingUpdateAsAppend`); complete mode replaces the table with the batch
 * (Spark truncates first).
 *
 * It is idempotent per batch id: a batch id the table has already received is ignored, and the
 * ids are kept with the table in the session, so a query restarted in the same session on the
 * same checkpoint continues the same table without duplicates. (Spark refuses to resume a memory
 * sink from a checkpoint, except in complete mode; tests and notebooks here rely on resuming.)
 * Like Spark's, the table lives in memory only and does not survive the session. The table exists
 * from `start()` on, empty until the first batch, as Spark registers its view at start.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { AnalysisError } from "../../core/Errors.ts"
import { option } from "../../core/Formats.ts"
import type { Sink, SinkFormat, SinkContext } from "../../core/Streaming.ts"

const makeSink = (name: string, ctx: SinkContext): Sink => ({
  // Spark's `MemorySink.toString`.
  description: "MemorySink",
  addBatch: (batch) =>
    Effect.sync(() => {
      const seen = ctx.tables.seenBatches(name)
      if (seen.has(batch.batchId)) return
      ctx.tables.write(name, batch.schema, batch.rows, batch.outputMode === "complete")
      // Recorded after the write: a write that fails is retried when the batch is replayed.
      seen.add(batch.batchId)
    }),
  stop: () => Effect.void
})

/**
 * The `memory` sink format: `writeStream.format("memory").queryName(name)`, for every output
 * mode. Without a query name, or with `partitionBy`, `create` fails as Spark's
 * `DataStreamWriter.start` does.
 *
 * @example
 * ```ts
 * import { MemorySink } from "./MemorySink.ts"
 * MemorySink.name // "memory"
 * // df.writeStream.format("memory").queryName("counts").outputMode("complete").start()
 * // then spark.table("counts").collect()
 * ```
 * @since 0.1.0
 */
export const MemorySink: SinkFormat = {
  name: "memory",
  supportedOutputModes: ["append", "update", "complete"],
  // A DataSource V2 sink in Spark: `partitionBy` is passed through as given.
  batchIdAware: false,
  create: (ctx) =>
    Effect.suspend(() => {
      // Spark's `assertNotPartitioned("memory")` comes before the query name check.
      if (ctx.partitionColumns.length > 0) {
        return Effect.fail(
          new AnalysisError({
            reason: "UnsupportedOperation",
            errorClass: "_LEGACY_ERROR_TEMP_1197",
            message: "'memory' does not support partitioning."
          })
        )
      }
      const name = ctx.queryName ?? option(ctx.options, "queryName")
      if (name === undefined) {
        return Effect.fail(
          new AnalysisError({
            reason: "InvalidArgument",
            errorClass: "_LEGACY_ERROR_TEMP_1194",
            message: "queryName must be specified for memory sink."
          })
        )
      }
      // Spark's `DataStreamWriter.startInternal` registers the temp view over the sink as the
      // query starts (`resultDf.createOrReplaceTempView(query.name)`), so `spark.table(name)` is
      // an empty table with the query's output schema before any batch or epoch has committed.
      // Rows a restarted query's table already holds are kept (see above).
      ctx.tables.write(name, ctx.schema, [], false)
      return Effect.succeed(makeSink(name, ctx))
    })
}
