/**
 * `MicroBatchExecution`: runs a streaming plan incrementally, one micro-batch per trigger, with
 * Spark's exactly-once protocol:
 *
 * 1. ask every source for its latest offset (within its read limit);
 * 2. if there is new data (or the watermark requires a no-data batch), write the offset log
 *    entry for the batch — before anything runs;
 * 3. read exactly the rows between the committed and the new offsets, run the plan over them
 *    with the batch timestamp (`current_timestamp()`) and watermark of the log entry;
 * 4. hand the result to the sink with the batch id (sinks skip ids they already wrote);
 * 5. write the commit log entry, then tell the sources what is committed.
 *
 * On restart a batch whose offsets are logged but whose commit is not is run again with exactly
 * the same offsets, timestamp and watermark. See Spark's `MicroBatchExecution.populateStartOffsets`.
 *
 * @since 0.1.0
 */
import { Clock, Deferred, Effect } from "effect"
import * as PlanOutput from "../../core/analysis/PlanOutput.ts"
import { AnalysisError, CheckpointError, type ConnectorError, StateStoreError, type StreamingQueryError } from "../../core/Errors.ts"
import type { AttributeReference } from "../../core/Expression.ts"
import { parseDurationMs } from "../../core/Durations.ts"
import * as MetadataLog from "../../core/MetadataLog.ts"
import * as Optimizer from "../../core/optimizer/Optimizer.ts"
import type { InternalRow } from "../../core/Row.ts"
import { runTrigger, type StepResult } from "../../core/Scheduler.ts"
import type { MicroBatchSource, Offset, ReadLimit } from "../../core/Streaming.ts"
import type { StateStoreProvider } from "../../state/StateStore.ts"
import type { SourceProgress, StreamingQueryProgress } from "../contracts/StreamingQueryProgress.ts"
import { withJsonToString } from "../contracts/StreamingQueryProgress.ts"
import * as Execute from "../physical/Execute.ts"
import type { EventTimeStats } from "../physical/Execute.ts"
import * as PhysicalPlanString from "../physical/PhysicalPlanString.ts"
import * as Planner from "../physical/Planner.ts"
import type { EventTimeWatermarkExec, SparkPlan } from "../physical/SparkPlan.ts"
import * as SparkPlanModule from "../physical/SparkPlan.ts"
import type { OperatorProgress, StatefulContext } from "../physical/stateful/StatefulContext.ts"
import {
  type StatefulOperatorInfo,
  isStatefulOperator,
  processingTimeOperators,
  shouldRunAnotherBatch,
  multipleEventTimeColumns,
  statefulOperators
} from "../physical/stateful/StatefulOperators.ts"
import { streamStreamJoinWithoutEquality } from "../physical/stateful/StreamingSymmetricHashJoinHelper.ts"
import { iso } from "./ProgressReporter.ts"
import { readRelation } from "./QueryExecution.ts"
import { PROVIDER_CONF, writeOperatorMetadata } from "./StateReader.ts"
import { type Binding, type ExecutionConfig, type FailureDetails, StreamExecution } from "./StreamExecution.ts"
import { parsePolicy, WatermarkTracker } from "./WatermarkTracker.ts"

/** Spark's `spark.sql.streaming.pollingDelay`: how long an idle default trigger waits before asking sources again. */
const POLLING_DELAY_MS = 10

/** Spark's `spark.sql.streaming.noDataProgressEventInterval` default: idle progress at most this often. */
const NO_DATA_EVENT_INTERVAL_MS = 10_000

export type SourceBinding = Binding<MicroBatchSource>

/** Everything the query start resolved before a micro-batch query runs. */
export interface QueryConfig extends ExecutionConfig<MicroBatchSource> {
  /** The session's state store provider (stateful queries keep their state through it). */
  readonly stateStore: StateStoreProvider
}

interface PendingBatch {
  readonly batchId: number
  readonly end: ReadonlyArray<Offset>
  readonly batchTimestampMs: number
  readonly watermarkMs: number
}

const sameOffset = (a: Offset, b: Offset): boolean => JSON.stringify(a) === JSON.stringify(b)

/** The conf entries a checkpoint fixes for the life of the query (Spark's `OffsetSeqMetadata.relevantSQLConfs`). */
const RELEVANT_CONFS = [
  "spark.sql.streaming.multipleWatermarkPolicy",
  "spark.sql.shuffle.partitions",
  "spark.sql.streaming.stateStore.providerClass",
  "spark.sql.streaming.noDataMicroBatches.enabled"
] as const

export class MicroBatchExecution extends StreamExecution<MicroBatchSource, QueryConfig> {
  /** Bumped whenever a trigger finds nothing to do; `processAllAvailable` waits for it. */
  #idleEpoch = 0
  #noNewData = false
  #wake = Deferred.makeUnsafe<void>()
  /** `processAllAvailable` calls, and how many of them the loop has seen (a wake-up is never lost). */
  #wakeRequests = 0
  #wakeSeen = 0
  /** True while the loop is blocked waiting for data or for the next trigger time. */
  #waiting = false

  #currentBatchId = 0
  #committed: Array<Offset> = []
  /**
   * Whether `#committed` holds offsets a batch committed (or the log recorded) rather than the
   * sources' initial offsets: Spark's `committedOffsets` is empty before the first batch, so
   * progress reports `startOffset: null` for batch 0.
   */
  #hasCommitted = false
  /** Spark's `availableOffsets`: the end of the batch last planned (for the failure's `endOffset`). */
  #availableOffsets: ReadonlyArray<Offset> | undefined = undefined
  /** The watermark the previous batch ran with: Spark's late-events watermark for the next batch. */
  #lateEventsWatermarkMs = 0
  /** After a batch: whether its new watermark lets a stateful operator emit or evict (a no-data batch is due). */
  #needsNoDataBatch = false
  /**
   * Per operator, the processing time at which it asked for a batch with or without data (its
   * next `transformWithState` timer or TTL expiry, `StatefulContext.requestBatchAt`).
   */
  #batchDeadlines = new Map<number, number>()
  /** The relevant confs a restart read from the checkpoint (they win over the session's). */
  #restoredConf: Readonly<Record<string, string>> = {}
  readonly #stateful: ReadonlyArray<StatefulOperatorInfo>
  /** Spark's `_LEGACY_ERROR_TEMP_3077` for a stateful operator over several event-time columns. */
  readonly #eventTimeConflict: string | undefined
  /** The stateful operators' ids in a pre-order walk (Spark's order of `progress.stateOperators`). */
  readonly #statefulPreOrder: ReadonlyArray<number>
  #pending: PendingBatch | undefined
  /** Spark's `lastTriggerStartTimestamp`: the start of the previous trigger (with or without data). */
  #lastTriggerStartMs: number | undefined
  /** Spark's `lastNoExecutionProgressEventTime` (`undefined` for `Long.MinValue`). */
  #lastNoExecutionProgressMs: number | undefined
  /** Whether a batch has run in this run of the query (an idle progress then reports sink rows 0, not -1). */
  #executedBatch = false
  /** The state operators' progress of the last batch this run executed (idle progress repeats it). */
  #lastStateOperators: StreamingQueryProgress["stateOperators"] = []
  #lastExplain: string
  /** `Trigger.AvailableNow`: per source, the end fixed at start for sources that cannot cap themselves. */
  #availableNowTargets: Array<Offset | undefined> = []

  readonly #offsetLog: MetadataLog.MetadataLog<MetadataLog.OffsetSeq>
  readonly #commitLog: MetadataLog.MetadataLog<MetadataLog.CommitMetadata>

  constructor(config: QueryConfig) {
    super(config, Planner.plan(Optimizer.optimize(config.analyzed), { streaming: true }))
    this.#stateful = statefulOperators(this.physical)
    this.#eventTimeConflict = multipleEventTimeColumns(this.#stateful)
    const statefulPre: Array<number> = []
    const walkStateful = (p: SparkPlan): void => {
      if (isStatefulOperator(p)) statefulPre.push(p.operatorId)
      for (const c of SparkPlanModule.children(p)) walkStateful(c)
    }
    walkStateful(this.physical)
    this.#statefulPreOrder = statefulPre
    this.#offsetLog = MetadataLog.offsetLog(config.fs, config.checkpoint)
    this.#commitLog = MetadataLog.commitLog(config.fs, config.checkpoint)
    this.#lastExplain = `== Physical Plan ==\n${PhysicalPlanString.treeString(this.physical).trimEnd()}\n`
  }

  // ---- lifecycle ------------------------------------------------------------------------

  /** The query's loop: start offsets and state, then one trigger after another. */
  protected runStream(): Effect.Effect<void, unknown> {
    const self = this
    return Effect.gen(function* () {
      yield* self.initialize()
      if (self.config.trigger._tag === "AvailableNow") yield* self.prepareAvailableNow()
      yield* runTrigger(self.config.trigger, self.step(), self.waiting(self.waitForData()), (ms) =>
        self.waiting(self.sleepToTrigger(ms), "Waiting for next trigger")
      )
    })
  }

  /**
   * Sleeps until the next processing-time trigger. While `testStream` jumps the test clock
   * (`SessionState.clockJumpTargetMs`), the query sleeps on to the jump's end, so its next batch
   * runs once, at the new time, as under Spark's `ManualClock.advance`.
   */
  private sleepToTrigger(ms: number): Effect.Effect<void> {
    const state = this.config.state
    return Effect.gen(function* () {
      yield* Effect.sleep(ms)
      for (;;) {
        const target = state.clockJumpTargetMs
        if (target === undefined) return
        const now = yield* Clock.currentTimeMillis
        if (now >= target) return
        yield* Effect.sleep(target - now)
      }
    })
  }

  /** Spark's `OffsetSeq.toString`: each source's offset JSON, `-` where there is none. */
  private offsetSeqString(offsets: ReadonlyArray<Offset> | undefined): string {
    return `[${this.config.sources.map((_, i) => (offsets?.[i] === undefined ? "-" : JSON.stringify(offsets[i]))).join(", ")}]`
  }

  protected failureDetails(): FailureDetails {
    return {
      batchId: this.#currentBatchId,
      startOffset: this.offsetSeqString(this.#hasCommitted ? this.#committed : undefined),
      endOffset: this.offsetSeqString(this.#availableOffsets ?? (this.#hasCommitted ? this.#committed : undefined))
    }
  }

  // ---- start offsets --------------------------------------------------------------------

  private initialize(): Effect.Effect<void, AnalysisError | CheckpointError | ConnectorError | StateStoreError> {
    return Effect.gen({ self: this }, function* () {
      // Spark's `UpdatingWatermarkPropagator` (the default since multiple stateful operators are
      // allowed) refuses a watermark defined on input that already carries one, when it plans
      // the first batch: the query fails, nothing runs.
      if ((this.config.state.conf.get("spark.sql.streaming.statefulOperator.allowMultiple") ?? "true") !== "false") {
        const below = (p: SparkPlan): boolean =>
          SparkPlanModule.children(p).some((c) => c._tag === "EventTimeWatermarkExec" || below(c))
        if (this.watermarkNodes.some(below)) {
          return yield* new AnalysisError({
            reason: "UnsupportedOperation",
            message:
              "Redefining watermark is disallowed. You can set the config 'spark.sql.streaming.statefulOperator.allowMultiple' to 'false' to restore the previous behavior. Note that multiple stateful operators will be disallowed."
          })
        }
      }
      // Spark's `AggUtils.planStreamingAggregationForSession` refuses a session window without
      // any other grouping key when it plans the first batch: the query fails, nothing runs.
      for (const op of this.#stateful) {
        const node = op.node
        if (
          node._tag === "StatefulAggregateExec" &&
          node.sessionWindow !== undefined &&
          node.groupingAttributes.length < 2
        ) {
          return yield* new AnalysisError({
            reason: "UnsupportedOperation",
            message: "Global aggregation with session window in streaming query is not supported."
          })
        }
      }
      // Spark's `StreamingJoinStrategy` refuses a join of two streams without an equality.
      const noEquality = streamStreamJoinWithoutEquality(this.physical)
      if (noEquality !== undefined) {
        return yield* new AnalysisError({ reason: "UnsupportedOperation", message: noEquality })
      }
      const sources = this.config.sources.map((s) => s.source)
      const latest = yield* this.#offsetLog.getLatest()
      const initial: Array<Offset> = []
      for (const s of sources) initial.push(yield* s.initialOffset())
      if (latest === undefined) {
        const committed = yield* this.#commitLog.batchIds()
        if (committed.length > 0) {
          // The offsets a committed batch ran with are gone: starting over would re-read every
          // source from its start into a sink that already holds those batches.
          const missing = this.config.fs.join(this.#offsetLog.dir, String(committed[committed.length - 1]))
          return yield* new CheckpointError({
            reason: "LogGap",
            path: missing,
            message: `The offset log of ${this.config.checkpoint} is empty but its commit log holds batches ${committed[0]} to ${committed[committed.length - 1]}: ${missing} and the offset files before it are missing. Restore the offsets folder from a backup, or start the query from a new checkpoint.`
          })
        }
        this.#committed = initial
        this.#currentBatchId = 0
        yield* this.prepareState(-1)
        return
      }
      const [n, seq] = latest
      const path = this.config.fs.join(this.#offsetLog.dir, String(n))
      if (seq.offsets.length !== sources.length) {
        return yield* new CheckpointError({
          reason: "Incompatible",
          path,
          message: `There are [${seq.offsets.length}] sources in the checkpoint offsets and now there are [${sources.length}] sources requested by the query. Cannot continue.`
        })
      }
      const decode = (offsets: ReadonlyArray<Offset | undefined>) =>
        Effect.forEach(offsets, (o, i) => (o === undefined ? Effect.succeed(initial[i]) : sources[i].decodeOffset(o)))
      const end = yield* decode(seq.offsets)
      const lastCommit = yield* this.#commitLog.getLatest()
      if (lastCommit !== undefined && lastCommit[0] === n) {
        this.#committed = end.slice()
        this.#hasCommitted = true
        this.#currentBatchId = n + 1
        // Spark: the offset log's watermark, then `max` with the commit's (a commit entry without
        // metadata, as Spark 2.3.1 wrote them, keeps the offset log's).
        this.watermarkMs = Math.max(seq.metadata.batchWatermarkMs, lastCommit[1].nextBatchWatermarkMs)
        this.#lateEventsWatermarkMs = seq.metadata.batchWatermarkMs
        this.restoreConf(seq.metadata.conf)
        this.watermarkTracker.restore(this.watermarkMs)
        this.#needsNoDataBatch =
          this.#stateful.length > 0 &&
          shouldRunAnotherBatch(
            this.physical,
            this.watermarkMs,
            seq.metadata.batchWatermarkMs,
            this.config.outputMode,
            this.propagateWatermarks()
          )
        // Timers and TTL expiries that fell due while the query was down: one batch finds them.
        for (const id of processingTimeOperators(this.physical)) this.#batchDeadlines.set(id, Number.NEGATIVE_INFINITY)
        for (let i = 0; i < sources.length; i++) yield* sources[i].commit(end[i])
        yield* this.prepareState(n)
        return
      }
      // Spark's `populateStartOffsets`: the latest batch of the offset log re-runs with its own
      // offsets, timestamp and watermark whenever its commit is missing, whether the commit log
      // ends one batch before it (the usual crash) or earlier or not at all (logged, as Spark).
      if (lastCommit === undefined || lastCommit[0] < n) {
        if (lastCommit !== undefined && lastCommit[0] < n - 1) {
          yield* Effect.logWarning(
            `Batch completion log latest batch id is ${lastCommit[0]}, which is not trailing batchid ${n} by one`
          )
        } else if (lastCommit === undefined && n > 0) yield* Effect.logInfo("no commit log present")
        if (n > 0) {
          const prev = yield* this.#offsetLog.get(n - 1)
          if (prev === undefined) {
            return yield* new CheckpointError({
              reason: "LogGap",
              path: this.config.fs.join(this.#offsetLog.dir, String(n - 1)),
              message: `batch ${n - 1} doesn't exist in the offset log of ${this.config.checkpoint}; the checkpoint is incomplete.`
            })
          }
          this.#committed = (yield* decode(prev.offsets)).slice()
          this.#hasCommitted = true
          this.#lateEventsWatermarkMs = prev.metadata.batchWatermarkMs
        } else {
          this.#committed = initial
        }
        this.#currentBatchId = n
        this.watermarkMs = seq.metadata.batchWatermarkMs
        this.restoreConf(seq.metadata.conf)
        this.watermarkTracker.restore(this.watermarkMs)
        yield* this.prepareState(n - 1)
        this.#pending = {
          batchId: n,
          end,
          batchTimestampMs: seq.metadata.batchTimestampMs,
          watermarkMs: seq.metadata.batchWatermarkMs
        }
        return
      }
      const missing = this.config.fs.join(this.#offsetLog.dir, String(lastCommit?.[0]))
      return yield* new CheckpointError({
        reason: "LogGap",
        path: missing,
        message: `The commit log of ${this.config.checkpoint} ends at batch ${lastCommit?.[0]} but the offset log at batch ${n}: ${missing} (and any offset file after ${n}) is missing — a concurrent update to the log, or files were deleted. Restore the offsets folder from a backup, or start the query from a new checkpoint.`
      })
    })
  }

  /** The state provider finishes its background work on this query's checkpoint. */
  protected override settleState(): Effect.Effect<void> {
    return this.config.stateStore.settle(this.config.checkpoint)
  }

  /**
   * Before the first batch: every stateful operator's stores are rolled back to the last
   * committed batch (a version committed to the store but not to the commit log is discarded)
   * and opened once, so an incompatible state schema fails the query here, naming the operator
   * and the field, before any batch runs.
   */
  private prepareState(lastCommitted: number): Effect.Effect<void, StateStoreError | CheckpointError> {
    return Effect.gen({ self: this }, function* () {
      const provider = this.config.stateStore
      const written = this.#restoredConf[PROVIDER_CONF]
      if (this.#stateful.length > 0 && written !== undefined && written !== provider.name) {
        return yield* new StateStoreError({
          reason: "InvalidUsage",
          message: `The state in ${this.config.checkpoint} was written by the '${written}' state store provider, but this session uses '${provider.name}'. A checkpoint keeps its provider for life: restart the query in a session made with Session.layer({ stateStore: "${written}" }), or use a new checkpoint.`
        })
      }
      // State that no committed batch refers to is disposable: a run killed before its first
      // commit may have left it half written (a DuckDB file killed while being created cannot
      // even be opened), and the first batch writes it again from nothing.
      if (lastCommitted === -1 && this.#stateful.length > 0 && (yield* this.#commitLog.batchIds()).length === 0) {
        yield* provider.discard(this.config.checkpoint)
      }
      for (const op of this.#stateful) {
        for (const store of op.stores) {
          const id = { checkpoint: this.config.checkpoint, operatorId: op.operatorId, storeName: store.storeName }
          const latest = yield* provider.latestVersion(id)
          if (store.mayBeNew === true && latest === -1 && lastCommitted >= 0) continue
          if (latest > lastCommitted) yield* provider.rollbackTo({ ...id, version: lastCommitted })
          const opened = yield* provider.open({
            ...id,
            schema: store.schema,
            version: lastCommitted,
            minBatchesToRetain: this.minBatchesToRetain(),
            checkSchema: this.config.state.conf.get("spark.sql.streaming.stateStore.stateSchemaCheck") !== "false"
          })
          yield* opened.abort()
        }
      }
      // What the state data sources (`format("statestore")`, `format("state-metadata")`) read.
      yield* writeOperatorMetadata(this.config.fs, this.config.checkpoint, this.#stateful)
    })
  }

  /** The confs a checkpoint fixes for the life of the query (Spark's `OffsetSeqMetadata.setSessionConf`). */
  private restoreConf(conf: Readonly<Record<string, string>>): void {
    const policy = parsePolicy(conf["spark.sql.streaming.multipleWatermarkPolicy"])
    if (policy !== undefined && policy !== this.watermarkTracker.policy) this.watermarkTracker = new WatermarkTracker(policy)
    // The restored values are the ones the next batches log again, whatever the session says
    // now (Spark sets them on the stream's own conf), so a second restart still sees them; a
    // checkpoint without the policy means "min" (Spark's `relevantSQLConfDefaultValues`).
    this.#restoredConf = { ...conf, "spark.sql.streaming.multipleWatermarkPolicy": policy ?? this.watermarkTracker.policy }
  }

  /**
   * Spark's `WatermarkPropagator`: each stateful operator gets the watermark the operators below
   * it leave (`PropagateWatermarkSimulator`), unless
   * `spark.sql.streaming.statefulOperator.allowMultiple` is false (`UseSingleWatermarkPropagator`:
   * every operator gets the global one).
   */
  private propagateWatermarks(): boolean {
    return this.config.state.conf.get("spark.sql.streaming.statefulOperator.allowMultiple") !== "false"
  }

  private minBatchesToRetain(): number {
    return Number(this.config.state.conf.get("spark.sql.streaming.minBatchesToRetain") ?? "100")
  }

  /**
   * Spark's `AvailableNow`: sources that support it fix their own end and keep their read
   * limits; for the others (Spark's `AvailableNowDataStreamWrapper`) everything available now
   * is read in one batch.
   */
  private prepareAvailableNow(): Effect.Effect<void, ConnectorError> {
    return Effect.gen({ self: this }, function* () {
      const sources = this.config.sources
      this.#availableNowTargets = []
      for (let i = 0; i < sources.length; i++) {
        const s = sources[i].source
        if (s.prepareForTriggerAvailableNow !== undefined) {
          yield* s.prepareForTriggerAvailableNow()
          this.#availableNowTargets.push(undefined)
        } else {
          const start = this.#pending?.end[i] ?? this.#committed[i]
          this.#availableNowTargets.push(yield* s.latestOffset(start, { _tag: "AllAvailable" }))
        }
      }
    })
  }

  // ---- one trigger ----------------------------------------------------------------------

  private step(): Effect.Effect<StepResult, unknown> {
    return Effect.gen({ self: this }, function* () {
      const startMs = yield* Clock.currentTimeMillis
      // Spark's `ProgressContext.startTrigger`: every trigger, with data or not, moves the
      // reference point of `inputRowsPerSecond`.
      const previousTriggerStartMs = this.#lastTriggerStartMs
      this.#lastTriggerStartMs = startMs
      this.reporter.isTriggerActive = true
      try {
        if (this.#pending !== undefined) {
          const pending = this.#pending
          this.#pending = undefined
          yield* this.runBatch(pending, startMs, previousTriggerStartMs, {})
          return "ran" as StepResult
        }
        const t0 = yield* Clock.currentTimeMillis
        const sources = this.config.sources
        const ends: Array<Offset> = []
        let hasData = false
        for (let i = 0; i < sources.length; i++) {
          const s = sources[i].source
          // Spark's `constructNextBatch`: `updateStatusMessage(s"Getting offsets from $s")`, per source
          this.reporter.statusMessage = `Getting offsets from ${s.description}`
          const target = this.#availableNowTargets[i]
          // Spark's `MicroBatchExecution`: Trigger.Once reads everything, whatever the source's limit.
          const limit: ReadLimit = this.config.trigger._tag === "Once" ? { _tag: "AllAvailable" } : s.defaultReadLimit()
          const end = target !== undefined ? target : yield* s.latestOffset(this.#committed[i], limit)
          ends.push(end)
          if (!sameOffset(end, this.#committed[i])) hasData = true
        }
        const latestOffsetMs = (yield* Clock.currentTimeMillis) - t0
        // Spark's `constructNextBatch`: a batch without new data still runs when the last batch
        // moved the watermark far enough for a stateful operator to emit or evict state.
        const nowMs = yield* Clock.currentTimeMillis
        let deadlineDue = false
        for (const at of this.#batchDeadlines.values()) if (at <= nowMs) deadlineDue = true
        const noDataBatch =
          !hasData &&
          (this.#needsNoDataBatch || deadlineDue) &&
          (this.config.state.conf.get("spark.sql.streaming.noDataMicroBatches.enabled") ?? "true") !== "false"
        if (!hasData && !noDataBatch) {
          yield* this.reportIdle(startMs, previousTriggerStartMs, ends, latestOffsetMs)
          return "idle" as StepResult
        }
        this.reporter.isDataAvailable = true
        const batchTimestampMs = yield* Clock.currentTimeMillis
        const batch: PendingBatch = {
          batchId: this.#currentBatchId,
          end: ends,
          batchTimestampMs,
          watermarkMs: this.watermarkMs
        }
        const w0 = yield* Clock.currentTimeMillis
        yield* this.#offsetLog.add(batch.batchId, {
          metadata: { batchWatermarkMs: batch.watermarkMs, batchTimestampMs, conf: this.relevantConf() },
          offsets: ends
        })
        const walCommitMs = (yield* Clock.currentTimeMillis) - w0
        yield* this.runBatch(batch, startMs, previousTriggerStartMs, { latestOffset: latestOffsetMs, walCommit: walCommitMs })
        return "ran" as StepResult
      } finally {
        this.reporter.isTriggerActive = false
      }
    })
  }

  private relevantConf(): Record<string, string> {
    const conf: Record<string, string> = {}
    for (const k of RELEVANT_CONFS) {
      const v = this.#restoredConf[k] ?? this.config.state.conf.get(k)
      if (v !== undefined) conf[k] = v
    }
    // The provider that writes this checkpoint's state, so a restart or the state reader in a
    // session with another provider fails clearly instead of finding no state.
    if (conf[PROVIDER_CONF] === undefined && this.#stateful.length > 0) conf[PROVIDER_CONF] = this.config.stateStore.name
    return conf
  }

  /** Spark's `spark.sql.streaming.noDataProgressEventInterval` (milliseconds, or a duration like `10s`). */
  private noDataProgressEventIntervalMs(): number {
    const raw = this.config.state.conf.get("spark.sql.streaming.noDataProgressEventInterval")
    if (raw === undefined) return NO_DATA_EVENT_INTERVAL_MS
    // Spark's time confs: a bare number is milliseconds, or a number with a unit suffix.
    const m = /^(\d+)\s*(ms|s|m|min|h|d)?$/i.exec(raw.trim())
    const unitMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 }
    const ms = m === null ? parseDurationMs(raw) : Number(m[1]) * unitMs[(m[2] ?? "ms").toLowerCase()]
    return ms === undefined ? NO_DATA_EVENT_INTERVAL_MS : ms
  }

  /**
   * A trigger that found no new data. As Spark's `finishNoExecutionTrigger` and
   * `ProgressReporter.updateIdleness`: at most once per `noDataProgressEventInterval` the
   * trigger is recorded as a progress with no input (not posted to `onQueryProgress`), and every
   * such record but the first of a run is announced to `onQueryIdle` listeners.
   */
  private reportIdle(
    startMs: number,
    previousTriggerStartMs: number | undefined,
    ends: ReadonlyArray<Offset>,
    latestOffsetMs: number
  ): Effect.Effect<void> {
    return Effect.gen({ self: this }, function* () {
      this.reporter.statusMessage = "Waiting for data to arrive"
      this.reporter.isDataAvailable = false
      this.#noNewData = true
      this.#idleEpoch++
      this.notify()
      const now = yield* Clock.currentTimeMillis
      const last = this.#lastNoExecutionProgressMs
      if (last !== undefined && now - this.noDataProgressEventIntervalMs() < last) return
      const committed = this.#hasCommitted ? this.#committed : undefined
      this.reporter.add(
        this.makeProgress({
          // Spark 4 reports the id of the batch this trigger would have run.
          batchId: this.#currentBatchId,
          triggerStartMs: startMs,
          previousTriggerStartMs,
          endMs: now,
          start: committed,
          end: ends,
          perSource: ends.map(() => 0),
          numOutputRows: this.#executedBatch ? 0 : -1,
          // Spark's `extractStateOperatorMetrics(hasExecuted = false)`: the last batch's state
          // operators, with nothing updated or dropped in this trigger.
          stateOperators: this.#lastStateOperators.map((o) => ({
            ...o,
            numRowsUpdated: 0,
            numRowsDroppedByWatermark: 0
          })),
          durationMs: { latestOffset: latestOffsetMs, triggerExecution: now - startMs }
        })
      )
      this.#lastNoExecutionProgressMs = now
      if (last === undefined) return
      yield* this.postEvent("onQueryIdle", { id: this.id, runId: this.runId, timestamp: iso(startMs) })
    })
  }

  private runBatch(
    batch: PendingBatch,
    triggerStartMs: number,
    previousTriggerStartMs: number | undefined,
    durations: Record<string, number>
  ): Effect.Effect<void, unknown> {
    return Effect.gen({ self: this }, function* () {
      this.reporter.statusMessage = "Processing new data"
      this.#availableOffsets = batch.end
      // Spark's stateful operators look their event-time column up when a batch executes.
      if (
        this.#eventTimeConflict !== undefined &&
        this.config.state.conf.get("spark.sql.streaming.statefulOperator.allowMultiple") !== "false"
      ) {
        return yield* new AnalysisError({
          reason: "InvalidPlan",
          errorClass: "_LEGACY_ERROR_TEMP_3077",
          message: this.#eventTimeConflict
        })
      }
      const sources = this.config.sources
      const rowsByKey = new Map<string, ReadonlyArray<InternalRow>>()
      const perSource: Array<number> = []
      const g0 = yield* Clock.currentTimeMillis
      for (let i = 0; i < sources.length; i++) {
        const { key, source } = sources[i]
        const rows = sameOffset(this.#committed[i], batch.end[i])
          ? []
          : yield* source.getBatch(this.#committed[i], batch.end[i])
        rowsByKey.set(key, rows)
        perSource.push(rows.length)
      }
      const getBatchMs = (yield* Clock.currentTimeMillis) - g0
      // Spark counts a source's input rows at its scans: a source read twice (a self-union, a
      // self-join) counts its rows twice ("input row calculation with same V2 source used twice
      // in self-union").
      const scans = new Map<string, number>()
      const a0 = yield* Clock.currentTimeMillis
      const eventStats = new Map<EventTimeWatermarkExec, EventTimeStats>()
      const operatorProgress = new Map<number, OperatorProgress>()
      const hasWatermark = this.watermarkNodes.length > 0
      const provider = this.config.stateStore
      const stateful: StatefulContext | undefined =
        this.#stateful.length === 0
          ? undefined
          : {
              batchId: batch.batchId,
              outputMode: this.config.outputMode,
              watermarkForLateEventsMs: hasWatermark ? this.#lateEventsWatermarkMs : undefined,
              watermarkForEvictionMs: hasWatermark ? batch.watermarkMs : undefined,
              // Spark's UseSingleWatermarkPropagator in compatibility mode
              propagateWatermarks: this.propagateWatermarks(),
              openStore: (operatorId, storeName, schema) =>
                provider.open({
                  checkpoint: this.config.checkpoint,
                  operatorId,
                  storeName,
                  schema,
                  version: batch.batchId - 1,
                  minBatchesToRetain: this.minBatchesToRetain(),
                  checkSchema: this.config.state.conf.get("spark.sql.streaming.stateStore.stateSchemaCheck") !== "false"
                }),
              reportProgress: (operatorId, progress) => {
                operatorProgress.set(operatorId, progress)
              },
              batchTimestampMs: batch.batchTimestampMs,
              requestBatchAt: (operatorId, timestampMs) => {
                if (timestampMs === undefined) this.#batchDeadlines.delete(operatorId)
                else this.#batchDeadlines.set(operatorId, timestampMs)
              }
            }
      const rows = yield* Execute.execute(this.physical, {
        currentTimestampMs: batch.batchTimestampMs,
        readRelation: readRelation(this.config.state),
        streamingRows: (rel) =>
          Effect.sync(() => {
            scans.set(rel.sourceKey, (scans.get(rel.sourceKey) ?? 0) + 1)
            return rowsByKey.get(rel.sourceKey) ?? []
          }),
        onEventTime: (node, stats) => {
          eventStats.set(node, stats)
        },
        stateful
      })
      for (let i = 0; i < sources.length; i++) perSource[i] *= Math.max(1, scans.get(sources[i].key) ?? 0)
      yield* this.config.sink.addBatch({
        batchId: batch.batchId,
        schema: this.outputSchema,
        rows,
        outputMode: this.config.outputMode
      })
      const addBatchMs = (yield* Clock.currentTimeMillis) - a0
      const c0 = yield* Clock.currentTimeMillis
      // Spark's WatermarkTracker.updateWatermark: the watermark of the next batch, from this
      // batch's event times; it is recorded with this batch's commit.
      this.watermarkTracker.update(
        this.watermarkNodes.map((n) => eventStats.get(n)),
        this.watermarkNodes.map((n) => n.delayMs)
      )
      const nextWatermarkMs = Math.max(this.watermarkTracker.currentMs, batch.watermarkMs)
      yield* this.#commitLog.add(batch.batchId, { nextBatchWatermarkMs: nextWatermarkMs })
      for (let i = 0; i < sources.length; i++) yield* sources[i].source.commit(batch.end[i])
      const start = this.#hasCommitted ? this.#committed : undefined
      this.#committed = batch.end.slice()
      this.#hasCommitted = true
      // Spark's `MicroBatchExecution.constructNextBatch`: once batch N is logged, entries below
      // N - minBatchesToRetain go (purge is exclusive), so N - min … N stay recoverable.
      const minBatchesToRetain = Number(this.config.state.conf.get("spark.sql.streaming.minBatchesToRetain") ?? "100")
      const threshold = batch.batchId - minBatchesToRetain
      if (threshold > 0) {
        yield* this.#offsetLog.purge(threshold)
        yield* this.#commitLog.purge(threshold)
      }
      const commitOffsetsMs = (yield* Clock.currentTimeMillis) - c0
      this.#currentBatchId = batch.batchId + 1
      this.#lateEventsWatermarkMs = batch.watermarkMs
      this.watermarkMs = nextWatermarkMs
      this.#needsNoDataBatch =
        this.#stateful.length > 0 &&
        shouldRunAnotherBatch(
          this.physical,
          nextWatermarkMs,
          batch.watermarkMs,
          this.config.outputMode,
          this.propagateWatermarks()
        )
      const endMs = yield* Clock.currentTimeMillis
      // Spark lists `stateOperators` in `executedPlan.collect` order: a pre-order walk, so the
      // topmost stateful operator comes first (dedup then aggregate reports [aggregate, dedup]).
      const rank = this.#statefulPreOrder
      // Spark's numbers: the state is split into `spark.sql.shuffle.partitions` partitions (the
      // checkpoint's value), one store instance per partition and store (a join has four).
      // tributary runs each operator as one task, but reports what Spark would, so monitoring
      // written against Spark reads the same.
      const partitions = Number(this.relevantConf()["spark.sql.shuffle.partitions"] ?? "200")
      const storesOf = (id: number) => (this.#stateful.find((o) => o.operatorId === id)?.name === "symmetricHashJoin" ? 4 : 1)
      this.#lastStateOperators = [...operatorProgress.entries()]
        .sort(([a], [b]) => rank.indexOf(a) - rank.indexOf(b))
        .map(([id, p]) => ({ ...p, numShufflePartitions: partitions, numStateStoreInstances: partitions * storesOf(id) }))
      const progress = this.makeProgress({
        batchId: batch.batchId,
        triggerStartMs,
        previousTriggerStartMs,
        endMs,
        start,
        end: batch.end,
        perSource,
        numOutputRows: rows.length,
        eventTime: this.eventTimeProgress(eventStats, batch.watermarkMs),
        stateOperators: this.#lastStateOperators,
        durationMs: {
          ...durations,
          getBatch: getBatchMs,
          queryPlanning: 0,
          addBatch: addBatchMs,
          commitOffsets: commitOffsetsMs,
          triggerExecution: endMs - triggerStartMs
        }
      })
      this.#executedBatch = true
      this.#lastNoExecutionProgressMs = endMs
      this.reporter.add(progress)
      yield* this.postEvent("onQueryProgress", { progress })
      this.#noNewData = false
      this.notify()
    })
  }

  /**
   * A progress record with Spark's arithmetic (`ProgressContext.constructNewProgress`): rates
   * are rows per second, processing time is at least 1 ms, and the input rate of the first
   * trigger of a run is 0 (no previous trigger: an infinite input interval).
   */
  private makeProgress(p: {
    readonly batchId: number
    readonly triggerStartMs: number
    readonly previousTriggerStartMs: number | undefined
    readonly endMs: number
    /** `undefined` before the first committed batch (Spark reports `startOffset: null`). */
    readonly start: ReadonlyArray<Offset> | undefined
    readonly end: ReadonlyArray<Offset>
    readonly perSource: ReadonlyArray<number>
    readonly numOutputRows: number
    readonly durationMs: Record<string, number>
    readonly eventTime?: Readonly<Record<string, string>>
    readonly stateOperators?: StreamingQueryProgress["stateOperators"]
  }): StreamingQueryProgress {
    const numInputRows = p.perSource.reduce((a, b) => a + b, 0)
    const processingTimeSec = Math.max(1, p.endMs - p.triggerStartMs) / 1000
    const inputTimeSec =
      p.previousTriggerStartMs === undefined
        ? Number.POSITIVE_INFINITY
        : (p.triggerStartMs - p.previousTriggerStartMs) / 1000
    const sources: Array<SourceProgress> = this.config.sources.map(({ source }, i) => ({
      description: source.description,
      startOffset: p.start?.[i] ?? null,
      endOffset: p.end[i] ?? null,
      // Spark's `reportLatestOffset` where the source has it; for AvailableNow the end fixed at
      // the start; otherwise this batch's end.
      latestOffset: source.reportLatestOffset?.() ?? this.#availableNowTargets[i] ?? p.end[i] ?? null,
      numInputRows: p.perSource[i],
      inputRowsPerSecond: p.perSource[i] / inputTimeSec,
      processedRowsPerSecond: p.perSource[i] / processingTimeSec,
      // Spark's `ReportsSourceMetrics.metrics(latestConsumedOffset)` (Kafka's offsets behind latest)
      metrics: source.metrics?.(p.end[i]) ?? {}
    }))
    // Spark's `StreamingQueryProgress.toString` is its prettyJson
    return withJsonToString({
      id: this.id,
      runId: this.runId,
      name: this.name,
      timestamp: iso(p.triggerStartMs),
      batchId: p.batchId,
      batchDuration: p.endMs - p.triggerStartMs,
      numInputRows,
      inputRowsPerSecond: numInputRows / inputTimeSec,
      processedRowsPerSecond: numInputRows / processingTimeSec,
      durationMs: p.durationMs,
      eventTime: p.eventTime ?? (this.hasWatermark() ? { watermark: iso(this.watermarkMs) } : {}),
      stateOperators: p.stateOperators ?? [],
      sources,
      sink: { description: this.config.sink.description, numOutputRows: p.numOutputRows, metrics: {} },
      observedMetrics: {}
    })
  }

  /** Marks the loop as waiting while `wait` runs (for `awaitQuiescent`). */
  private waiting<E>(wait: Effect.Effect<void, E>, message?: string): Effect.Effect<void, E> {
    return Effect.suspend(() => {
      this.#waiting = true
      if (message !== undefined) this.reporter.statusMessage = message
      this.notify()
      return wait
    }).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          this.#waiting = false
        })
      )
    )
  }

  /**
   * Waits until the loop is blocked (waiting for data or for the next trigger time) with no
   * batch pending, or has ended. With a test clock and a processing-time trigger this is how a
   * test knows a batch that `TestClock.adjust` released has finished.
   */
  awaitQuiescent(): Effect.Effect<void, StreamingQueryError> {
    const self = this
    return Effect.gen(function* () {
      for (;;) {
        const error = self.currentError()
        if (error !== null) return yield* error
        if (!self.active || (self.#waiting && self.#pending === undefined)) return
        yield* Deferred.await(self.changed)
      }
    })
  }

  /**
   * Resolves when a source may have data, the query is woken, or the poll delay passes. The
   * signals are captured before the sources are asked again, so data or a wake-up that arrives
   * in between is never lost.
   */
  private waitForData(): Effect.Effect<void> {
    return Effect.suspend(() => {
      const waits: Array<Effect.Effect<void>> = [Deferred.await(this.#wake)]
      const signalling: Array<number> = []
      this.config.sources.forEach(({ source }, i) => {
        if (source.awaitData !== undefined) {
          waits.push(source.awaitData())
          signalling.push(i)
        }
      })
      if (this.#wakeRequests !== this.#wakeSeen) {
        this.#wakeSeen = this.#wakeRequests
        return Effect.void
      }
      waits.push(Effect.sleep(POLLING_DELAY_MS))
      return Effect.flatMap(
        Effect.forEach(signalling, (i) => {
          const s = this.config.sources[i].source
          return Effect.map(s.latestOffset(this.#committed[i], s.defaultReadLimit()), (end) => !sameOffset(end, this.#committed[i]))
        }),
        (changed) => (changed.some((c) => c) ? Effect.void : Effect.raceAll(waits))
      ).pipe(Effect.catch(() => Effect.void)) // a failing source shows its error in the next step
    })
  }

  // ---- the handle -----------------------------------------------------------------------

  processAllAvailable(): Effect.Effect<void, StreamingQueryError> {
    const self = this
    return Effect.gen(function* () {
      if (self.error !== null) return yield* self.error
      if (!self.active) return
      self.#noNewData = false
      self.#wakeRequests++
      const wake = self.#wake
      self.#wake = Deferred.makeUnsafe<void>()
      // Completing `wake` may run the query's fiber at once (it does under the test clock's
      // scheduler), up to its next idle report: so the state is checked before every wait, and
      // the signal is taken before the check, so that no change in between is missed.
      Deferred.doneUnsafe(wake, Effect.void)
      for (;;) {
        const changed = self.changed
        const error = self.currentError()
        if (error !== null) return yield* error
        if (!self.active || (self.#noNewData && self.#pending === undefined)) return
        yield* Deferred.await(changed)
      }
    })
  }

  explain(_extended = false): Effect.Effect<string> {
    // Spark's `explainInternal`: nothing to show until a batch of this run has executed.
    return Effect.sync(() => (this.#executedBatch ? this.#lastExplain : "No physical plan. Waiting for data."))
  }

  /** @internal the attributes of the plan's output, for sinks that need them. */
  outputAttributes(): ReadonlyArray<AttributeReference> {
    return PlanOutput.output(this.config.analyzed)
  }
}
