/**
 * The `noop` sink (Spark's `NoopDataSource` / `NoopStreamingWrite`): consumes every batch and
 * keeps nothing. Useful for benchmarks (the whole query runs, nothing is written) and for
 * queries run only for their side effects on state. Trivially idempotent.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { Sink, SinkFormat } from "../../core/Streaming.ts"

/** The one sink value: it holds no state, so every query can share it. */
const sink: Sink = {
  // Spark's `NoopTable` is named `noop-table`; its progress description is the object's
  // default `toString` (with a hash code), so the class name is used here.
  description: "NoopTable",
  addBatch: () => Effect.void,
  stop: () => Effect.void
}

/**
 * The `noop` sink format: `writeStream.format("noop")`, for every output mode.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { NoopSink } from "./NoopSink.ts"
 * const program = Effect.flatMap(
 *   NoopSink.create({ options: {}, schema: { _tag: "struct", fields: [] }, outputMode: "append",
 *     queryName: undefined, queryId: "q", partitionColumns: [], checkpointPath: "/tmp/chk",
 *     tables: { write: () => {}, seenBatches: () => new Set() } }),
 *   (s) => s.addBatch({ batchId: 0, schema: { _tag: "struct", fields: [] }, rows: [[]], outputMode: "append" })
 * )
 * ```
 * @since 0.1.0
 */
export const NoopSink: SinkFormat = {
  name: "noop",
  supportedOutputModes: ["append", "update", "complete"],
  // A DataSource V2 sink in Spark: `partitionBy` is passed through as given.
  batchIdAware: false,
  create: () => Effect.succeed(sink)
}
