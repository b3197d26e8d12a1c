/**
 * `StreamExecution`: what every running streaming query has, whichever engine runs it (Spark's
 * `StreamExecution` with its `ProgressReporter` and `WatermarkTracker`). `MicroBatchExecution`
 * and `ContinuousExecution` extend it with how they run (`runStream`) and what a failure
 * reports (`failureDetails`).
 *
 * - Lifecycle: `start` posts `onQueryStarted` and forks `runStream` into the session's scope;
 *   when it ends (normally, with an error, or by `stop()`), `finish` runs once: it records the
 *   failure as a `StreamingQueryError`, stops the sources and the sink (a failing stop is
 *   logged, SPARK-19774), deletes a temporary checkpoint, takes the query off the session's
 *   active list and posts `onQueryTerminated`.
 * - Listeners: `postEvent` calls every listener of the session in order; a failing callback is
 *   logged, never raised.
 * - Progress reporting: status, `lastProgress` and `recentProgress` through a `ProgressReporter`.
 * - Watermark tracking: the plan's watermark nodes in Spark's two walk orders and the query's
 *   `WatermarkTracker` (policy `spark.sql.streaming.multipleWatermarkPolicy`); the watermark a
 *   batch (or epoch) runs with is `watermarkMs`.
 *
 * The notebook display of a query is attached by the writer (`api/`), not here.
 *
 * @since 0.1.0
 */
import { Cause, Clock, Deferred, Effect, Exit, Fiber, type Scope } from "effect"
import * as PlanOutput from "../../core/analysis/PlanOutput.ts"
import type { CheckpointFileSystem } from "../../core/CheckpointFileSystem.ts"
import type * as T from "../../core/DataType.ts"
import { ConnectorError, errorClassOf, errorNameOf, exceptionString, messageOf, StreamingQueryError } from "../../core/Errors.ts"
import * as Plan from "../../core/LogicalPlan.ts"
import type { OutputMode, Sink } from "../../core/Streaming.ts"
import type { Trigger } from "../../core/Trigger.ts"
import * as State from "../contracts/SessionState.ts"
import type { StreamingQuery } from "../contracts/StreamingQuery.ts"
import { runListenerCallback, type StreamingQueryListener } from "../contracts/StreamingQueryListener.ts"
import type { StreamingQueryProgress, StreamingQueryStatus } from "../contracts/StreamingQueryProgress.ts"
import type { EventTimeStats } from "../physical/Execute.ts"
import * as SparkPlanModule from "../physical/SparkPlan.ts"
import type { EventTimeWatermarkExec, SparkPlan } from "../physical/SparkPlan.ts"
import { eventTimeProgress, iso, ProgressReporter } from "./ProgressReporter.ts"
import { parsePolicy, WatermarkTracker } from "./WatermarkTracker.ts"

/** A source of the query and the `sourceKey` of the plan's `StreamingRelation` nodes reading it. */
export interface Binding<S> {
  readonly key: string
  readonly source: S
}

/** What every source kind gives the shared lifecycle: a description and a way to release it. */
export interface StoppableSource {
  readonly description: string
  readonly stop: () => Effect.Effect<void>
}

/** What the query start resolves for any execution (micro-batch or continuous) of source type `S`. */
export interface ExecutionConfig<S> {
  readonly state: State.SessionState
  readonly fs: CheckpointFileSystem
  readonly id: string
  readonly runId: string
  readonly name: string | null
  readonly checkpoint: string
  readonly analyzed: Plan.LogicalPlan
  readonly outputMode: OutputMode
  readonly trigger: Trigger
  readonly sources: ReadonlyArray<Binding<S>>
  readonly sink: Sink
  readonly listeners: () => ReadonlyArray<StreamingQueryListener>
  /**
   * The checkpoint is a temporary folder the query start made up (no `checkpointLocation`, no
   * checkpoint root): Spark deletes it when the query stops without an error (or always, with
   * `spark.sql.streaming.forceDeleteTempCheckpointLocation`).
   */
  readonly deleteCheckpointOnStop?: boolean
  /** Called once when the query ends (normally or not), before listeners hear of it. */
  readonly onTerminated: (query: StreamingQuery) => void
}

/** What a failure reports beyond its cause: the batch (or epoch) it failed in, and its offsets. */
export interface FailureDetails {
  readonly batchId: number
  readonly startOffset?: string
  readonly endOffset?: string
}

/** The event a listener callback `K` takes. */
type ListenerEvent<K extends keyof StreamingQueryListener> = Parameters<NonNullable<StreamingQueryListener[K]>>[0]

export abstract class StreamExecution<S extends StoppableSource, C extends ExecutionConfig<S> = ExecutionConfig<S>>
  implements StreamingQuery
{
  readonly id: string
  readonly runId: string
  readonly name: string | null
  readonly config: C
  readonly physical: SparkPlan
  readonly outputSchema: T.StructType

  /** Status and progress buffer (Spark's `ProgressReporter`). */
  protected readonly reporter: ProgressReporter
  /** Spark's `WatermarkTracker`; a restart may replace it with the checkpoint's policy. */
  protected watermarkTracker: WatermarkTracker
  /** The watermark the current batch (or epoch) runs with. */
  protected watermarkMs = 0
  /** The plan's watermark nodes in a fixed post-order walk (the tracker's node indexes). */
  protected readonly watermarkNodes: ReadonlyArray<EventTimeWatermarkExec>
  /** The same nodes in a pre-order walk (Spark's `collect` order, for the `eventTime` progress). */
  protected readonly watermarkNodesPreOrder: ReadonlyArray<EventTimeWatermarkExec>
  /** The error the query failed with, once it has. */
  protected error: StreamingQueryError | null = null
  /** The message of what failed the query (the status reports it). */
  private failureMessage = ""
  protected active = true

  #fiber: Fiber.Fiber<void, never> | undefined
  readonly #terminated = Deferred.makeUnsafe<void>()
  /** Set when `finish` starts, so that it runs once (from the run's exit or from `stop`). */
  #finished = false
  /** Resolved and replaced by `notify` whenever the query's state changes. */
  #changed = Deferred.makeUnsafe<void>()

  protected constructor(config: C, physical: SparkPlan) {
    this.config = config
    this.id = config.id
    this.runId = config.runId
    this.name = config.name
    this.physical = physical
    this.outputSchema = PlanOutput.schemaOf(config.analyzed)
    const conf = config.state.conf
    this.reporter = new ProgressReporter(() =>
      Number(conf.get("spark.sql.streaming.numRecentProgressUpdates") ?? "100")
    )
    this.watermarkTracker = new WatermarkTracker(
      parsePolicy(conf.get("spark.sql.streaming.multipleWatermarkPolicy")) ?? "min"
    )
    const post: Array<EventTimeWatermarkExec> = []
    const pre: Array<EventTimeWatermarkExec> = []
    const walk = (p: SparkPlan): void => {
      if (p._tag === "EventTimeWatermarkExec") pre.push(p)
      for (const c of SparkPlanModule.children(p)) walk(c)
      if (p._tag === "EventTimeWatermarkExec") post.push(p)
    }
    walk(physical)
    this.watermarkNodes = post
    this.watermarkNodesPreOrder = pre
  }

  /** The query's run: what the engine does until it ends or is interrupted. */
  protected abstract runStream(): Effect.Effect<void, unknown>

  /** The batch (or epoch) and offsets a failure reports. */
  protected abstract failureDetails(): FailureDetails

  // ---- lifecycle ------------------------------------------------------------------------

  /**
   * Starts the query: posts `onQueryStarted` to the session's listeners (a failing listener is
   * logged), then forks the run into `scope`.
   */
  start(scope: Scope.Scope): Effect.Effect<void> {
    return Effect.gen({ self: this }, function* () {
      const now = yield* Clock.currentTimeMillis
      yield* this.postEvent("onQueryStarted", { id: this.id, runId: this.runId, name: this.name, timestamp: iso(now) })
      yield* this.launch(scope)
    })
  }

  /** Forks the query's run into `scope`. */
  launch(scope: Scope.Scope): Effect.Effect<void> {
    return Effect.gen({ self: this }, function* () {
      this.#fiber = yield* Effect.forkIn(
        this.runStream().pipe(
          Effect.onExit((exit) => this.finish(exit)),
          Effect.catchCause(() => Effect.void)
        ),
        scope
      )
    })
  }

  /** Spark's `prettyIdString`: the name (if any), then `[id = …, runId = …]`. */
  protected prettyIdString(): string {
    return `${this.name === null ? "" : `${this.name} `}[id = ${this.id}, runId = ${this.runId}]`
  }

  /** Wakes everything waiting for the query's state to change. */
  protected notify(): void {
    const changed = this.#changed
    this.#changed = Deferred.makeUnsafe<void>()
    Deferred.doneUnsafe(changed, Effect.void)
  }

  /** The signal the next `notify` resolves: take it before checking, then wait on it. */
  protected get changed(): Deferred.Deferred<void> {
    return this.#changed
  }

  /**
   * When the query stops: the state provider's background work on this checkpoint finishes
   * (micro-batch execution; continuous execution keeps no state).
   */
  protected settleState(): Effect.Effect<void> {
    return Effect.void
  }

  private finish(exit: Exit.Exit<void, unknown>): Effect.Effect<void> {
    return Effect.gen({ self: this }, function* () {
      if (this.#finished) return
      this.#finished = true
      if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) {
        const failure = Cause.squash(exit.cause)
        const details = this.failureDetails()
        this.failureMessage = messageOf(failure)
        this.error = new StreamingQueryError({
          message: `Query ${this.prettyIdString()} terminated with exception: ${messageOf(failure)}`,
          queryId: this.id,
          runId: this.runId,
          ...details,
          // Spark's `runStream` does not expose a `ForeachUserFuncException`: the query error's
          // cause is the user's own exception (its message still names the error class)
          cause:
            failure instanceof ConnectorError &&
            failure.errorClass === "FOREACH_USER_FUNCTION_ERROR" &&
            failure.cause !== undefined
              ? failure.cause
              : failure
        })
        // Spark's `StreamExecution.runStream`: `logError(s"Query $prettyIdString terminated with
        // error", e)`, so a query failing in the background is heard even without a listener.
        yield* Effect.logError(
          `Query ${this.prettyIdString()} terminated with error at batch ${details.batchId}: ${errorNameOf(failure)}: ${messageOf(failure)}`
        ).pipe(
          Effect.annotateLogs({
            queryName: this.name ?? "",
            queryId: this.id,
            runId: this.runId,
            batchId: details.batchId,
            errorClass: errorClassOf(failure) ?? ""
          })
        )
      }
      this.active = false
      // Spark's `StreamExecution.runStream`: "Stopped" after a normal end, the failure otherwise.
      this.reporter.statusMessage =
        this.error === null ? "Stopped" : `Terminated with exception: ${this.failureMessage}`
      this.reporter.isTriggerActive = false
      this.reporter.isDataAvailable = false
      // Spark's `stopSources`: a source (or sink) that fails to stop is logged and the others
      // are still stopped (SPARK-19774); the query still terminates.
      for (const { source } of this.config.sources) {
        yield* source
          .stop()
          .pipe(
            Effect.catchCause((cause) =>
              Effect.logWarning(
                `Failed to stop streaming source: ${source.description}. Resources may have leaked.`,
                cause
              )
            )
          )
      }
      yield* this.config.sink
        .stop()
        .pipe(
          Effect.catchCause((cause) =>
            Effect.logWarning(
              `Failed to stop streaming sink: ${this.config.sink.description}. Resources may have leaked.`,
              cause
            )
          )
        )
      yield* this.settleState()
      if (
        this.config.deleteCheckpointOnStop === true &&
        (this.error === null ||
          State.confBool(this.config.state, "spark.sql.streaming.forceDeleteTempCheckpointLocation"))
      ) {
        // As Spark, a temporary checkpoint that cannot be deleted is left behind with a warning.
        yield* this.config.fs
          .remove(this.config.checkpoint)
          .pipe(
            Effect.catch((e) =>
              Effect.logWarning(`Cannot delete the temporary checkpoint ${this.config.checkpoint}: ${e.message}`)
            )
          )
      }
      this.config.onTerminated(this)
      yield* this.postEvent("onQueryTerminated", {
        id: this.id,
        runId: this.runId,
        exception: this.error === null ? null : exceptionString(this.error.cause),
        // Spark: the error class of the failure's cause, when it has one (a SparkThrowable).
        errorClassOnException: errorClassOf(this.error?.cause) ?? null
      })
      Deferred.doneUnsafe(this.#terminated, Effect.void)
      this.notify()
    })
  }

  // ---- listeners ------------------------------------------------------------------------

  /** Calls callback `kind` of every listener of the session, in order (Spark's `postEvent`). */
  protected postEvent<K extends keyof StreamingQueryListener>(kind: K, event: ListenerEvent<K>): Effect.Effect<void> {
    return Effect.forEach(
      this.config.listeners(),
      (l) => {
        const f = l[kind] as ((e: ListenerEvent<K>) => unknown) | undefined
        return f === undefined ? Effect.void : runListenerCallback(() => f.call(l, event))
      },
      { discard: true }
    )
  }

  // ---- watermark ------------------------------------------------------------------------

  /** Whether the query defines a watermark (progress then reports `eventTime.watermark`). */
  protected hasWatermark(): boolean {
    let found = false
    Plan.foreach(this.config.analyzed, (p) => {
      if (p._tag === "EventTimeWatermark") found = true
    })
    return found
  }

  /** The `eventTime` of a batch's progress, from its watermark nodes' statistics. */
  protected eventTimeProgress(
    stats: ReadonlyMap<EventTimeWatermarkExec, EventTimeStats>,
    watermarkMs: number
  ): Readonly<Record<string, string>> {
    return eventTimeProgress(this.watermarkNodesPreOrder, stats, watermarkMs)
  }

  // ---- the handle -----------------------------------------------------------------------

  isActive(): Effect.Effect<boolean> {
    return Effect.sync(() => this.active)
  }

  status(): Effect.Effect<StreamingQueryStatus> {
    return Effect.sync(() => this.reporter.status())
  }

  lastProgress(): Effect.Effect<StreamingQueryProgress | null> {
    return Effect.sync(() => this.reporter.last())
  }

  recentProgress(): Effect.Effect<ReadonlyArray<StreamingQueryProgress>> {
    return Effect.sync(() => this.reporter.recent())
  }

  abstract processAllAvailable(): Effect.Effect<void, StreamingQueryError>

  abstract explain(extended?: boolean): Effect.Effect<string>

  awaitTermination(timeoutMs?: number): Effect.Effect<boolean, StreamingQueryError> {
    const self = this
    return Effect.gen(function* () {
      if (timeoutMs === undefined) {
        yield* Deferred.await(self.#terminated)
      } else {
        const done = yield* Deferred.await(self.#terminated).pipe(Effect.timeoutOption(timeoutMs))
        if (done._tag === "None") return false
      }
      const error = self.currentError()
      if (error !== null) return yield* error
      return true
    })
  }

  stop(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const fiber = this.#fiber
      if (fiber === undefined) return Effect.void
      // A fiber interrupted before it first runs never runs its body (nor its `onExit`), so
      // the query is finished here when the run could not do it itself.
      return Fiber.interrupt(fiber).pipe(
        Effect.andThen(Effect.suspend(() => this.finish(Exit.void))),
        Effect.andThen(Deferred.await(this.#terminated))
      )
    })
  }

  /** The error the query failed with so far (a call, so that a check inside a loop is never narrowed away). */
  protected currentError(): StreamingQueryError | null {
    return this.error
  }

  exception(): Effect.Effect<StreamingQueryError | null> {
    return Effect.sync(() => this.error)
  }

  toString(): string {
    return `Streaming Query ${this.prettyIdString()} [state = ${this.active ? "ACTIVE" : "TERMINATED"}]`
  }
}
