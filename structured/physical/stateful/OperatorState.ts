/**
 * The life of one operator's state store in one batch, shared by the stateful operators: open,
 * work, commit, or abort on failure; decoding failures become a `StateStoreError` that names the
 * operator; and the timings Spark's `StateStoreWriter` reports.
 *
 * @since 0.1.0
 */
import { Clock, Effect } from "effect"
import { StateStoreError } from "../../../core/Errors.ts"
import type { OperatorProgress, OperatorStateSchema, OperatorStateStore, StatefulContext } from "./StatefulContext.ts"

/**
 * The name of an operator's only store (Spark's `StateStoreId.DEFAULT_STORE_NAME`).
 *
 * @since 0.1.0
 */
export const DEFAULT_STORE_NAME = "default"

/**
 * Thrown by a decoder that meets a stored value it did not write; `decodingState` turns it into
 * a `StateStoreError` with reason `Corrupt`.
 *
 * @since 0.1.0
 */
export class CorruptState extends Error {}

/**
 * Wraps a decoder so that anything it throws (a malformed buffer, a value of the wrong shape) is
 * a `CorruptState`.
 *
 * @since 0.1.0
 */
export const guardDecode =
  <A>(what: string, decode: (json: unknown) => A): ((json: unknown) => A) =>
  (json) => {
    try {
      return decode(json)
    } catch (e) {
      if (e instanceof CorruptState) throw e
      throw new CorruptState(`cannot decode ${what}: ${e instanceof Error ? e.message : String(e)}`)
    }
  }

/**
 * Runs synchronous work over a store's values; a `CorruptState` thrown inside fails with
 * `StateStoreError` (`Corrupt`, naming the operator). Anything else thrown is a defect (a bug).
 *
 * @since 0.1.0
 */
export const decodingState = <A>(operatorId: number, work: () => A): Effect.Effect<A, StateStoreError> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(work())
    } catch (e) {
      if (e instanceof CorruptState) {
        return Effect.fail(
          new StateStoreError({
            reason: "Corrupt",
            operatorId,
            message: `The state of stateful operator ${operatorId} holds a value this operator did not write (${e.message}). The checkpoint was written by a different query or is damaged: restart from a new checkpoint location.`,
            cause: e
          })
        )
      }
      throw e
    }
  })

/**
 * Opens the operator's store, runs `use`, and aborts the store's uncommitted changes when `use`
 * fails or dies (Spark aborts a task's store that did not commit).
 *
 * @since 0.1.0
 */
export const withOperatorStore = <A>(
  ctx: StatefulContext,
  operatorId: number,
  schema: OperatorStateSchema,
  use: (store: OperatorStateStore) => Effect.Effect<A, StateStoreError>
): Effect.Effect<A, StateStoreError> =>
  Effect.flatMap(ctx.openStore(operatorId, DEFAULT_STORE_NAME, schema), (store) =>
    Effect.onError(use(store), () => store.abort())
  )

/**
 * Runs `self` and returns its value with the milliseconds it took on the effect clock (Spark's
 * `timeTakenMs`; under the test clock it is 0).
 *
 * @since 0.1.0
 */
export const timed = <A, E>(self: Effect.Effect<A, E>): Effect.Effect<readonly [A, number], E> =>
  Effect.flatMap(Clock.currentTimeMillis, (start) =>
    Effect.flatMap(self, (a) => Effect.map(Clock.currentTimeMillis, (end) => [a, end - start] as const))
  )

/**
 * Commits the operator's store and reports the batch's `stateOperators` entry: the store's
 * rows total (unless the operator counts them itself) and memory, the commit time, and what
 * only the operator knows.
 *
 * @since 0.1.0
 */
export const commitAndReport = (
  ctx: StatefulContext,
  operatorId: number,
  store: OperatorStateStore,
  progress: Omit<OperatorProgress, "numRowsTotal" | "commitTimeMs" | "memoryUsedBytes" | "customMetrics"> & {
    readonly numRowsTotal?: number
    readonly customMetrics?: Readonly<Record<string, number>>
  }
): Effect.Effect<void, StateStoreError> =>
  Effect.map(timed(store.commit()), ([metrics, commitTimeMs]) => {
    ctx.reportProgress(operatorId, {
      ...progress,
      numRowsTotal: progress.numRowsTotal ?? metrics.numRowsTotal,
      commitTimeMs,
      memoryUsedBytes: metrics.memoryUsedBytes,
      customMetrics: progress.customMetrics ?? {}
    })
  })
