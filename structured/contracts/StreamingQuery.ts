/**
 * `StreamingQuery`: the handle of a running streaming query, as Spark's. Identity fields are
 * plain properties; everything that reads running state or changes it is an Effect.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import type { StreamingQueryError } from "../../core/Errors.ts"
import type { StreamingQueryProgress, StreamingQueryStatus } from "./StreamingQueryProgress.ts"

export interface StreamingQuery {
  /** Kept in the checkpoint: the same across restarts. */
  readonly id: string
  /** New for every start. */
  readonly runId: string
  /** `queryName`, or `null`. */
  readonly name: string | null
  readonly isActive: () => Effect.Effect<boolean>
  readonly status: () => Effect.Effect<StreamingQueryStatus>
  /** The most recent progress, or `null` before the first batch. */
  readonly lastProgress: () => Effect.Effect<StreamingQueryProgress | null>
  /** The most recent progress updates, oldest first (at most `spark.sql.streaming.numRecentProgressUpdates`). */
  readonly recentProgress: () => Effect.Effect<ReadonlyArray<StreamingQueryProgress>>
  /**
   * Waits until everything the sources had is processed and committed (including a no-data
   * batch the watermark requires). Fails with the query's error if it failed.
   */
  readonly processAllAvailable: () => Effect.Effect<void, StreamingQueryError>
  /**
   * Waits for the query to end: without a timeout, until it stops (true); with one, false when
   * it is still running after `timeoutMs`. Fails with the query's error if it failed.
   */
  readonly awaitTermination: (timeoutMs?: number) => Effect.Effect<boolean, StreamingQueryError>
  /** Stops the query and waits until it has stopped; stopping a stopped query does nothing. */
  readonly stop: () => Effect.Effect<void>
  /** The error the query failed with, or `null`. */
  readonly exception: () => Effect.Effect<StreamingQueryError | null>
  /** The plan of the last batch (or the planned query before the first), as `explain` text. */
  readonly explain: (extended?: boolean) => Effect.Effect<string>
}
