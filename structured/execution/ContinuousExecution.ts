/**
 * `ContinuousExecution`: Spark's continuous processing (`Trigger.Continuous(checkpointInterval)`),
 * for millisecond latency on map-like queries.
 *
 * Instead of micro-batches, the query runs one long-lived task (a fiber) per source partition.
 * A task polls its reader, runs the rows it got through the compiled plan
 * (`ContinuousPipeline.ts`) and writes the result to the sink at once, then waits for the next
 * rows. Epochs give the stream its checkpoints (Spark's `EpochCoordinator`):
 *
 * 1. every `checkpointInterval` of Effect's `Clock` (on the grid of Spark's
 *    `ProcessingTimeExecutor`, the first one when the query starts) the coordinator ends the
 *    current epoch and starts the next;
 * 2. each task, at its next step, ends the epochs it was in: it commits its sink writer and
 *    reports its reader's position to the coordinator;
 * 3. when every partition has reported an epoch (and the epochs before it are committed), the
 *    merged end offsets go to `<checkpoint>/offsets/<epoch>`, the sink commits the epoch, and
 *    `<checkpoint>/commits/<epoch>` is written: the checkpoint layout of micro-batches, with the
 *    epoch as batch id. One progress event is posted per committed epoch.
 *
 * Delivery is at-least-once, as in Spark: a restart resumes from the offsets of the last
 * committed epoch, so rows written to a sink after that commit (a `foreach` writer sees every
 * row at once) are written again. Sinks that take whole epochs (`memory`, `console`, `noop`
 * through `addBatch`) receive each committed epoch once. Offsets of epochs that were not
 * committed are removed on restart (Spark's "forcibly align commit and offset logs").
 *
 * A task that fails (a failing `foreach` writer, a failing source, a user function that throws)
 * stops every other task and fails the query with a `StreamingQueryError`, as Spark's
 * continuous tasks are never retried; starting the query again resumes from the last committed
 * epoch. `stop()` interrupts the tasks wherever they wait; writers of the unfinished epoch are
 * aborted (a `foreach` writer is closed with the error).
 *
 * `processAllAvailable()` ends the current epoch at once (Spark's test action `IncrementEpoch`)
 * and returns when that epoch is committed: everything the sources had when it was called is
 * then in the sink, without waiting for the checkpoint interval.
 *
 * @since 0.1.0
 */
import { Cause, Clock, Deferred, Effect, Exit, Queue } from "effect"
import { AnalysisError, CheckpointError, IllegalStateError, type StreamingQueryError } from "../../core/Errors.ts"
import * as MetadataLog from "../../core/MetadataLog.ts"
import * as Optimizer from "../../core/optimizer/Optimizer.ts"
import type {
  ContinuousDataWriter,
  ContinuousPartitionReader,
  ContinuousSource,
  ContinuousWrite,
  Offset,
  PartitionOffset
} from "../../core/Streaming.ts"
import { nextBatchTime } from "../../core/Trigger.ts"
import type { SourceProgress, StreamingQueryProgress } from "../contracts/StreamingQueryProgress.ts"
import { withJsonToString } from "../contracts/StreamingQueryProgress.ts"
import * as PhysicalPlanString from "../physical/PhysicalPlanString.ts"
import * as Planner from "../physical/Planner.ts"
import type { SparkPlan } from "../physical/SparkPlan.ts"
import { compileContinuous, type RowsFn, UnsupportedContinuousOperator } from "./ContinuousPipeline.ts"
import { continuousWriteOf } from "./ContinuousWriters.ts"
import { iso } from "./ProgressReporter.ts"
import { type Binding, type ExecutionConfig, type FailureDetails, StreamExecution } from "./StreamExecution.ts"

/** Rows a task takes from its reader in one step (Spark's `spark.sql.streaming.continuous.executorQueueSize`). */
const MAX_ROWS_PER_POLL = 1024

/** Spark's default `spark.sql.streaming.continuous.epochBacklogQueueSize`. */
const DEFAULT_EPOCH_BACKLOG = 10_000

/** One continuous source of the query and the `sourceKey` of the plan's scans that read it. */
export type ContinuousSourceBinding = Binding<ContinuousSource>

/** Everything `start()` resolved before a continuous query runs (`trigger` is `Trigger.Continuous`: its interval is the epoch length). */
export interface ContinuousQueryConfig extends ExecutionConfig<ContinuousSource> {
  /** How rows reach the sink; by default the sink's `continuousWrite` or its `addBatch` per epoch. */
  readonly write?: ContinuousWrite
}

/** What a task tells the coordinator when it ends an epoch (Spark's `ReportPartitionOffset` + `CommitPartitionEpoch`). */
interface EpochReport {
  readonly epoch: number
  /** The task's partition, numbered across all sources. */
  readonly partition: number
  readonly offset: PartitionOffset
  readonly message: unknown
  readonly numInputRows: number
  readonly numOutputRows: number
}

/** One task: a partition of one source, its reader and the compiled path to the sink. */
interface Task {
  readonly partition: number
  readonly sourceIndex: number
  readonly reader: ContinuousPartitionReader
  readonly pipeline: RowsFn | undefined
}

const RELEVANT_CONFS = ["spark.sql.streaming.multipleWatermarkPolicy", "spark.sql.shuffle.partitions"] as const

export class ContinuousExecution extends StreamExecution<ContinuousSource, ContinuousQueryConfig> {
  readonly #pipelines: ReadonlyArray<RowsFn | undefined>
  readonly #write: ContinuousWrite
  readonly #offsetLog: MetadataLog.MetadataLog<MetadataLog.OffsetSeq>
  readonly #commitLog: MetadataLog.MetadataLog<MetadataLog.CommitMetadata>
  readonly #explain: string

  // ---- the epoch coordinator's state (Spark's `EpochCoordinator`) ----
  /** The epoch tasks are writing now (Spark's driver epoch). */
  #driverEpoch = 0
  /** Resolved and replaced whenever `#driverEpoch` moves: wakes tasks waiting for data. */
  #epochSignal = Deferred.makeUnsafe<void>()
  /** When each epoch not yet committed began, by the clock. */
  readonly #epochStartMs = new Map<number, number>()
  #lastCommitted = -1
  /** The merged offsets of the last committed epoch (progress `startOffset`); `undefined` before any. */
  #committedOffsets: ReadonlyArray<Offset> | undefined
  #numPartitions = 0
  /** The tasks run (start offsets read, readers open): epochs can end. */
  #running = false

  private constructor(
    config: ContinuousQueryConfig,
    physical: SparkPlan,
    pipelines: ReadonlyArray<RowsFn | undefined>
  ) {
    super(config, physical)
    this.#pipelines = pipelines
    this.#write = config.write ?? continuousWriteOf(config.sink, this.outputSchema, config.outputMode)
    this.#offsetLog = MetadataLog.offsetLog(config.fs, config.checkpoint)
    this.#commitLog = MetadataLog.commitLog(config.fs, config.checkpoint)
    // Spark's continuous plans sit under a `WriteToContinuousDataSource` node.
    const tree = PhysicalPlanString.treeString(physical)
      .trimEnd()
      .split("\n")
      .map((line, i) => (i === 0 ? `+- ${line}` : `   ${line}`))
      .join("\n")
    this.#explain = `== Physical Plan ==\nWriteToContinuousDataSource ${config.sink.description}\n${tree}\n`
  }

  /**
   * Plans the query and compiles one pipeline per source. A plan the checker let through but the
   * planner turned into an operator that cannot run continuously fails with Spark's message.
   */
  static make(config: ContinuousQueryConfig): Effect.Effect<ContinuousExecution, AnalysisError> {
    return Effect.suspend(() => {
      try {
        const physical = Planner.plan(Optimizer.optimize(config.analyzed), { streaming: true })
        const pipelines = config.sources.map((s) => compileContinuous(physical, s.key))
        return Effect.succeed(new ContinuousExecution(config, physical, pipelines))
      } catch (e) {
        if (e instanceof UnsupportedContinuousOperator) {
          return Effect.fail(
            new AnalysisError({
              reason: "UnsupportedOperation",
              errorClass: "_LEGACY_ERROR_TEMP_3102",
              message: e.message
            })
          )
        }
        throw e
      }
    })
  }

  // ---- lifecycle ------------------------------------------------------------------------

  protected failureDetails(): FailureDetails {
    return { batchId: this.#lastCommitted + 1 }
  }

  protected runStream(): Effect.Effect<void, unknown> {
    return Effect.gen({ self: this }, function* () {
      const starts = yield* this.startOffsets()
      const tasks: Array<Task> = []
      const sources = this.config.sources
      for (let s = 0; s < sources.length; s++) {
        const readers = yield* sources[s].source.createReaders(starts[s])
        for (const reader of readers) {
          tasks.push({ partition: tasks.length, sourceIndex: s, reader, pipeline: this.#pipelines[s] })
        }
      }
      this.#numPartitions = tasks.length
      const startEpoch = this.#lastCommitted + 1
      this.#driverEpoch = startEpoch
      this.#epochStartMs.set(startEpoch, yield* Clock.currentTimeMillis)
      this.reporter.statusMessage = "Running"
      this.#running = true
      this.reporter.isDataAvailable = true
      this.notify()
      const reports = yield* Queue.unbounded<EpochReport>()
      const fibers: Array<Effect.Effect<void, unknown>> = [this.coordinator(reports, tasks), this.epochTicker()]
      for (const t of tasks) fibers.push(this.task(t, startEpoch, reports))
      yield* Effect.all(fibers, { concurrency: "unbounded", discard: true }).pipe(
        Effect.ensuring(Effect.forEach(tasks, (t) => t.reader.close(), { discard: true }))
      )
    })
  }

  /**
   * Spark's `ContinuousExecution.getStartOffsets`: the end offsets of the last committed epoch
   * (and the next epoch id), or every source's initial offset for a new query. Offset entries
   * past the last commit are from a run that stopped mid-epoch: they are deleted so the epochs
   * are logged again with this run's offsets (at-least-once).
   */
  private startOffsets(): Effect.Effect<ReadonlyArray<Offset>, unknown> {
    return Effect.gen({ self: this }, function* () {
      const sources = this.config.sources
      const latest = yield* this.#commitLog.getLatest()
      const last = latest?.[0] ?? -1
      for (const id of yield* this.#offsetLog.batchIds()) {
        if (id > last) yield* this.config.fs.remove(this.config.fs.join(this.#offsetLog.dir, String(id)))
      }
      if (latest === undefined) {
        this.reporter.statusMessage = "Starting new streaming query"
        const initial: Array<Offset> = []
        for (const { source } of sources) initial.push(yield* source.initialOffset())
        return initial
      }
      this.reporter.statusMessage = `Starting new streaming query and getting offsets from latest epoch ${last}`
      const path = this.config.fs.join(this.#offsetLog.dir, String(last))
      const seq = yield* this.#offsetLog.get(last)
      if (seq === undefined) {
        return yield* new IllegalStateError({ message: `Batch ${last} was committed without end epoch offsets!` })
      }
      if (seq.offsets.length !== sources.length) {
        return yield* new CheckpointError({
          reason: "Incompatible",
          path,
          message: `There are [${seq.offsets.length}] sources in the checkpoint offsets and now there are [${sources.length}] sources requested by the query. Cannot continue.`
        })
      }
      const starts: Array<Offset> = []
      for (let i = 0; i < sources.length; i++) {
        const o = seq.offsets[i]
        starts.push(
          o === undefined ? yield* sources[i].source.initialOffset() : yield* sources[i].source.decodeOffset(o)
        )
      }
      this.#lastCommitted = last
      this.#committedOffsets = starts
      return starts
    })
  }

  /** Ends the current epoch: tasks move on to the next one at their next step. */
  private incrementEpoch(nowMs: number): number {
    const ended = this.#driverEpoch
    this.#driverEpoch = ended + 1
    this.#epochStartMs.set(ended + 1, nowMs)
    const signal = this.#epochSignal
    this.#epochSignal = Deferred.makeUnsafe<void>()
    Deferred.doneUnsafe(signal, Effect.void)
    return ended
  }

  /**
   * Spark's epoch update thread: `ProcessingTimeExecutor` over the checkpoint interval, ending
   * an epoch at each trigger, the first one as soon as the query runs.
   */
  private epochTicker(): Effect.Effect<void> {
    const interval = this.config.trigger._tag === "Continuous" ? this.config.trigger.intervalMs : 1000
    return Effect.gen({ self: this }, function* () {
      for (;;) {
        const start = yield* Clock.currentTimeMillis
        this.incrementEpoch(start)
        // An interval of 0 would end epochs without pause: one per millisecond instead.
        const next = interval <= 0 ? start + 1 : nextBatchTime(start, interval)
        const now = yield* Clock.currentTimeMillis
        if (now < next) yield* Effect.sleep(next - now)
        else yield* Effect.yieldNow
      }
    })
  }

  /**
   * One partition's long-running task (Spark's `ContinuousDataSourceRDD` feeding
   * `ContinuousWriteRDD`): rows go from the reader through the pipeline to the writer as soon
   * as they are there; at an epoch marker the writer commits and the position is reported.
   */
  private task(t: Task, startEpoch: number, reports: Queue.Queue<EpochReport>): Effect.Effect<void, unknown> {
    const self = this
    let writer: ContinuousDataWriter | undefined
    const body = Effect.gen(function* () {
      let epoch = startEpoch
      writer = yield* self.#write.createWriter(t.partition, epoch)
      let numInputRows = 0
      let numOutputRows = 0
      for (;;) {
        // The signal is taken before the epoch is read, so an epoch that ends while this task
        // waits always wakes it.
        const signal = self.#epochSignal
        const now = yield* Clock.currentTimeMillis
        const rows = t.reader.poll(now, MAX_ROWS_PER_POLL)
        if (rows.length > 0) {
          numInputRows += rows.length
          if (t.pipeline !== undefined) {
            const out = t.pipeline(rows)
            if (out.length > 0) {
              numOutputRows += out.length
              yield* writer.write(out)
            }
          }
        }
        const driver = self.#driverEpoch
        if (driver > epoch) {
          while (epoch < driver) {
            const message = yield* writer.commit()
            writer = undefined
            Queue.offerUnsafe(reports, {
              epoch,
              partition: t.partition,
              offset: t.reader.offset(),
              message,
              numInputRows,
              numOutputRows
            })
            numInputRows = 0
            numOutputRows = 0
            epoch++
            writer = yield* self.#write.createWriter(t.partition, epoch)
          }
          continue
        }
        if (rows.length === MAX_ROWS_PER_POLL) {
          // More is due at once (a fast rate source): let the other tasks run first.
          yield* Effect.yieldNow
          continue
        }
        if (rows.length > 0) continue
        yield* Effect.raceFirst(t.reader.awaitData(now), Deferred.await(signal))
      }
    })
    return body.pipe(
      Effect.onExit((exit) => {
        const w = writer
        writer = undefined
        if (w === undefined || Exit.isSuccess(exit)) return Effect.void
        return w.abort(Cause.hasInterruptsOnly(exit.cause) ? undefined : Cause.squash(exit.cause))
      })
    )
  }

  /**
   * Spark's `EpochCoordinator`: collects the tasks' reports and commits epochs in order once
   * every partition has reported one: offset log, sink commit, commit log, sources, progress.
   */
  private coordinator(reports: Queue.Queue<EpochReport>, tasks: ReadonlyArray<Task>): Effect.Effect<void, unknown> {
    return Effect.gen({ self: this }, function* () {
      const pending = new Map<number, Array<EpochReport | undefined>>()
      const counts = new Map<number, number>()
      let stored = 0
      const backlog = Number(
        this.config.state.conf.get("spark.sql.streaming.continuous.epochBacklogQueueSize") ?? DEFAULT_EPOCH_BACKLOG
      )
      for (;;) {
        const r = yield* Queue.take(reports)
        let slot = pending.get(r.epoch)
        if (slot === undefined) {
          slot = new Array<EpochReport | undefined>(tasks.length)
          pending.set(r.epoch, slot)
          counts.set(r.epoch, 0)
        }
        if (slot[r.partition] === undefined) {
          slot[r.partition] = r
          counts.set(r.epoch, (counts.get(r.epoch) ?? 0) + 1)
          stored++
        }
        for (;;) {
          const next = this.#lastCommitted + 1
          const ready = pending.get(next)
          if (ready === undefined || counts.get(next) !== tasks.length) break
          pending.delete(next)
          counts.delete(next)
          stored -= tasks.length
          // Uninterruptible: `stop()` waits for a commit under way (a few file writes) rather
          // than leave its files half written behind a stopped query.
          yield* Effect.uninterruptible(this.commitEpoch(next, ready as ReadonlyArray<EpochReport>, tasks))
        }
        // Spark's `checkProcessingQueueBoundaries`: a partition that falls behind cannot hold
        // the others' reports forever.
        if (stored > backlog) {
          return yield* new IllegalStateError({
            message: "Size of the partition offset queue has exceeded its maximum"
          })
        }
      }
    })
  }

  private commitEpoch(
    epoch: number,
    reports: ReadonlyArray<EpochReport>,
    tasks: ReadonlyArray<Task>
  ): Effect.Effect<void, unknown> {
    return Effect.gen({ self: this }, function* () {
      this.reporter.statusMessage = `Committing epoch ${epoch}`
      const sources = this.config.sources
      const ends: Array<Offset> = []
      const perSource: Array<number> = []
      for (let s = 0; s < sources.length; s++) {
        const mine = tasks.filter((t) => t.sourceIndex === s).map((t) => reports[t.partition].offset)
        ends.push(sources[s].source.mergeOffsets(mine))
        let n = 0
        for (const t of tasks) if (t.sourceIndex === s) n += reports[t.partition].numInputRows
        perSource.push(n)
      }
      let numOutputRows = 0
      for (const r of reports) numOutputRows += r.numOutputRows
      const epochStartMs = this.#epochStartMs.get(epoch) ?? (yield* Clock.currentTimeMillis)
      const t0 = yield* Clock.currentTimeMillis
      yield* this.#offsetLog.add(epoch, {
        metadata: { batchWatermarkMs: this.watermarkMs, batchTimestampMs: epochStartMs, conf: this.relevantConf() },
        offsets: ends
      })
      const t1 = yield* Clock.currentTimeMillis
      // Spark's order: the sink commits before the commit log, so a restart never skips an
      // epoch the sink did not get.
      yield* this.#write.commit(
        epoch,
        reports.map((r) => r.message)
      )
      const t2 = yield* Clock.currentTimeMillis
      yield* this.#commitLog.add(epoch, { nextBatchWatermarkMs: this.watermarkMs })
      for (let s = 0; s < sources.length; s++) yield* sources[s].source.commit(ends[s])
      // Spark: keep the last `minBatchesToRetain` committed epochs recoverable.
      const retain = Number(this.config.state.conf.get("spark.sql.streaming.minBatchesToRetain") ?? "100")
      if (retain <= epoch) {
        yield* this.#offsetLog.purge(epoch + 1 - retain)
        yield* this.#commitLog.purge(epoch + 1 - retain)
      }
      const endMs = yield* Clock.currentTimeMillis
      const start = this.#committedOffsets
      this.#committedOffsets = ends
      this.#lastCommitted = epoch
      const nextStart = this.#epochStartMs.get(epoch + 1)
      this.#epochStartMs.delete(epoch)
      const progress = this.makeProgress({
        epoch,
        epochStartMs,
        epochEndMs: nextStart ?? endMs,
        endMs,
        start,
        end: ends,
        perSource,
        numOutputRows,
        durationMs: {
          walCommit: t1 - t0,
          addBatch: t2 - t1,
          commitOffsets: endMs - t2,
          triggerExecution: endMs - epochStartMs
        }
      })
      this.reporter.add(progress)
      this.reporter.statusMessage = "Running"
      yield* this.postEvent("onQueryProgress", { progress })
      this.notify()
    })
  }

  private relevantConf(): Record<string, string> {
    const conf: Record<string, string> = {}
    for (const k of RELEVANT_CONFS) {
      const v = this.config.state.conf.get(k)
      if (v !== undefined) conf[k] = v
    }
    return conf
  }

  /** A progress record per epoch, with the micro-batch engine's fields (`batchId` is the epoch). */
  private makeProgress(p: {
    readonly epoch: number
    readonly epochStartMs: number
    /** When the epoch ended (the next one began). */
    readonly epochEndMs: number
    /** When its commit finished. */
    readonly endMs: number
    readonly start: ReadonlyArray<Offset> | undefined
    readonly end: ReadonlyArray<Offset>
    readonly perSource: ReadonlyArray<number>
    readonly numOutputRows: number
    readonly durationMs: Record<string, number>
  }): StreamingQueryProgress {
    const numInputRows = p.perSource.reduce((a, b) => a + b, 0)
    // Rows arrive over the whole epoch: input and processing rates are both per second of it.
    const inputSec = Math.max(1, p.epochEndMs - p.epochStartMs) / 1000
    const processingSec = Math.max(1, p.endMs - p.epochStartMs) / 1000
    const sources: Array<SourceProgress> = this.config.sources.map(({ source }, i) => ({
      description: source.description,
      startOffset: p.start?.[i] ?? null,
      endOffset: p.end[i] ?? null,
      latestOffset: p.end[i] ?? null,
      numInputRows: p.perSource[i],
      inputRowsPerSecond: p.perSource[i] / inputSec,
      processedRowsPerSecond: p.perSource[i] / processingSec,
      metrics: {}
    }))
    // Spark's `StreamingQueryProgress.toString` is its prettyJson
    return withJsonToString({
      id: this.id,
      runId: this.runId,
      name: this.name,
      timestamp: iso(p.epochStartMs),
      batchId: p.epoch,
      batchDuration: p.endMs - p.epochStartMs,
      numInputRows,
      inputRowsPerSecond: numInputRows / inputSec,
      processedRowsPerSecond: numInputRows / processingSec,
      durationMs: p.durationMs,
      eventTime: {},
      stateOperators: [],
      sources,
      sink: { description: this.config.sink.description, numOutputRows: p.numOutputRows, metrics: {} },
      observedMetrics: {}
    })
  }

  // ---- the handle -----------------------------------------------------------------------

  /** The last committed epoch (`-1` before any). */
  lastCommittedEpoch(): Effect.Effect<number> {
    return Effect.sync(() => this.#lastCommitted)
  }

  /** The epoch the tasks are writing now. */
  currentEpoch(): Effect.Effect<number> {
    return Effect.sync(() => this.#driverEpoch)
  }

  /** Waits until `epoch` is committed (Spark's `awaitEpoch`); fails with the query's error if it fails first. */
  awaitEpoch(epoch: number): Effect.Effect<void, StreamingQueryError> {
    const self = this
    return Effect.gen(function* () {
      for (;;) {
        const changed = self.changed
        if (self.error !== null) return yield* self.error
        if (self.#lastCommitted >= epoch || !self.active) return
        yield* Deferred.await(changed)
      }
    })
  }

  /**
   * Ends the current epoch now (Spark's test action `IncrementEpoch`) and returns its id; the
   * query must be running its tasks (after `start()` returned and the sources are open).
   */
  incrementEpochNow(): Effect.Effect<number> {
    return Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => this.incrementEpoch(now)))
  }

  processAllAvailable(): Effect.Effect<void, StreamingQueryError> {
    const self = this
    return Effect.gen(function* () {
      // Until the tasks run there is no epoch to end: wait for the run to begin.
      for (;;) {
        const changed = self.changed
        if (self.error !== null) return yield* self.error
        if (!self.active) return
        if (self.#running) break
        yield* Deferred.await(changed)
      }
      const ended = self.incrementEpoch(yield* Clock.currentTimeMillis)
      yield* self.awaitEpoch(ended)
    })
  }

  explain(_extended = false): Effect.Effect<string> {
    return Effect.sync(() => this.#explain)
  }

  /** The number of partition tasks the query runs (0 before they start). */
  numPartitions(): number {
    return this.#numPartitions
  }
}
