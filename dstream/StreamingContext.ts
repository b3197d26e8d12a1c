/**
 * `StreamingContext`: Spark's legacy DStream entry point, running on the session's scheduler
 * (`core/Scheduler.ts`, Effect's `Clock`) and keeping state in the session's state store.
 *
 * Lifecycle (Spark's `StreamingContextState`): INITIALIZED → ACTIVE → STOPPED. Starting an
 * active context does nothing; starting a stopped one fails with `IllegalStateError`
 * ("StreamingContext has already been stopped"); stop is idempotent. Batch times follow
 * Spark's `JobGenerator`: started at clock time `t`, the first batch runs at the next multiple
 * of the batch duration after `t` (so at 1000, 2000, 3000 ms for a 1 s batch started at 0), and
 * output operations run in the order they were registered.
 *
 * Checkpointing: `checkpoint(dir)` keeps, after every batch, the state of every stateful
 * stream (updateStateByKey, mapWithState, windowed reduce with an inverse function) in the
 * session's state store under `dir`, and the batch time in `dir/dstream-checkpoint`.
 * `StreamingContext.getOrCreate(dir, create)` always calls `create` to rebuild the graph — JS
 * closures cannot be serialized, so this deviates from Spark, which deserializes the graph —
 * and, when `dir` holds a checkpoint, restores each stateful stream's state and the batch grid,
 * then runs the batches missed while the context was down (Spark's "down times") before it
 * continues on the grid. Stateful streams are matched by creation order, so `create` must build
 * the same graph every time. The checkpoint also keeps, per receiver stream with the write-ahead
 * log on, how many logged records completed batches consumed (the rest is replayed), and per
 * direct stream the end offset of the last completed batch (`DirectInputDStream.ts`).
 *
 * Backpressure (`spark.streaming.backpressure.enabled`): each receiver stream gets a
 * `RateController` with Spark's PID estimator, fed after every completed batch
 * (`PIDRateEstimator.ts`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Session } from "tributary-streaming"
 * import { StreamingContext } from "tributary-streaming/dstream"
 *
 * const program = Effect.gen(function* () {
 *   const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
 *   const lines = ssc.queueStream([["a b", "a"], ["b"]])
 *   lines.flatMap((l) => l.split(" ")).map((w) => [w, 1] as const).reduceByKey((a, b) => a + b).print()
 *   yield* ssc.start()
 *   yield* ssc.awaitTerminationOrTimeout(5_000)
 *   yield* ssc.stop()
 * })
 * await Effect.runPromise(program.pipe(Effect.provide(Session.layer())))
 * ```
 * @since 0.1.0
 */
import { Cause, Clock, Deferred, Effect, Exit, Fiber, Option, Semaphore } from "effect"
import * as T from "../core/DataType.ts"
import {
  AnalysisError,
  CheckpointError,
  type ConnectorError,
  IllegalStateError,
  type StateStoreError,
  StreamingQueryError
} from "../core/Errors.ts"
import { runTrigger } from "../core/Scheduler.ts"
import { Trigger } from "../core/Trigger.ts"
import type { StateStoreProvider } from "../state/StateStore.ts"
import { Session, type SessionShape } from "../structured/api/Session.ts"
import { type BuildContext, DStream, type DurationInput, sameSlide } from "./DStream.ts"
import { parseDurationMs } from "../core/Durations.ts"
import { DirectInputDStream } from "./DirectInputDStream.ts"
import { FileInputDStream } from "./FileInputDStream.ts"
import { ForEachDStream } from "./ForEachDStream.ts"
import type { ContextCore, DStreamNode, InputNode, StatefulNode } from "./Node.ts"
import { ms } from "./Node.ts"
import { createRateEstimator, isBackPressureEnabled } from "./PIDRateEstimator.ts"
import { QueueInputDStream } from "./QueueInputDStream.ts"
import { ReceivedBlockLog, ReceivedBlockLogCorrupt, receivedDataDir } from "./ReceivedBlockLog.ts"
import type { RDD } from "./RDD.ts"
import type { Receiver } from "./Receiver.ts"
import { ReceiverInputDStream } from "./ReceiverInputDStream.ts"
import { SocketReceiver } from "./SocketReceiver.ts"
import type { BatchInfo, OutputOperationInfo, StreamInputInfo, StreamingListener } from "./StreamingListener.ts"
import { registerView } from "./StreamingContextView.ts"
import { TransformedDStream } from "./TransformedDStream.ts"
import { UnionDStream } from "./UnionDStream.ts"

/** Spark's `StreamingContextState`. */
export type StreamingContextState = "INITIALIZED" | "ACTIVE" | "STOPPED"

/** Options of `StreamingContext.make`. */
export interface StreamingContextOptions {
  /** The batch interval: `"1 second"`, an Effect duration, or milliseconds. */
  readonly batchDuration: DurationInput
}

/** What `awaitTermination` can fail with: a failed batch, or an operation added after start. */
export type StreamingContextError = StreamingQueryError | IllegalStateError

/** The checkpoint file: the batch grid and the state version of the last completed batch. */
interface CheckpointMetadata {
  readonly version: 1
  readonly batchDurationMs: number
  readonly zeroTime: number
  readonly lastBatchTime: number
  /** The state-store version every stateful stream committed with that batch (-1: none). */
  readonly stateVersion: number
  /**
   * Per receiver stream id with the write-ahead log on: how many logged records the completed
   * batches consumed (the rest is replayed on recovery).
   */
  readonly receivedRecords?: Readonly<Record<string, number>>
  /** Per direct stream id: the end offset (the source's JSON) of the last completed batch. */
  readonly directOffsets?: Readonly<Record<string, unknown>>
}

const CHECKPOINT_FILE = "dstream-checkpoint"
const STATE_SCHEMA = {
  keySchema: T.struct([T.field("key", T.StringType)]),
  valueSchema: T.struct([T.field("value", T.StringType)])
}

let contextCounter = 0

const requirement = (message: string) => new IllegalStateError({ message: `requirement failed: ${message}` })

const describeError = (e: unknown): string =>
  e instanceof Error
    ? `${e.name}: ${e.message}`
    : typeof e === "object" && e !== null && "message" in e
      ? String((e as { message: unknown }).message)
      : String(e)

/**
 * Spark's `StreamingContext`.
 *
 * @since 0.1.0
 */
export class StreamingContext {
  /** The batch duration in milliseconds. */
  readonly batchDuration: number
  /** The session this context runs in (`toDF` builds DataFrames through it). */
  readonly session: SessionShape
  /** An id for messages and errors (`StreamingContext-<n>`). */
  readonly id: string
  #state: StreamingContextState = "INITIALIZED"
  readonly #inputs: Array<InputNode<unknown>> = []
  readonly #outputs: Array<ForEachDStream<unknown>> = []
  readonly #buildErrors: Array<IllegalStateError> = []
  readonly #listeners: Array<StreamingListener> = []
  #checkpointDir: string | undefined = undefined
  #rememberMs: number | undefined = undefined
  #operatorIds = 0
  #inputIds = 0
  #restored: CheckpointMetadata | undefined = undefined
  #zeroTime = 0
  #nextTime = 0
  #stateVersion = -1
  #stateful: Array<StatefulNode> = []
  #receivedRecords: Record<string, number> = {}
  #directOffsets: Record<string, unknown> = {}
  #stopRequested = false
  #startedAt = 0
  #inBatch = false
  #failure: { readonly message: string; readonly batchTime: number | undefined } | undefined = undefined
  #notifyView: () => void = () => {}
  #loop: Fiber.Fiber<void, unknown> | undefined = undefined
  #receivers: Array<Fiber.Fiber<void, unknown>> = []
  readonly #terminated = Deferred.makeUnsafe<void, StreamingContextError>()
  readonly #batchLock = Semaphore.makeUnsafe(1)
  readonly #core: BuildContext

  private constructor(batchDurationMs: number, session: SessionShape) {
    this.batchDuration = batchDurationMs
    this.session = session
    this.id = `StreamingContext-${++contextCounter}`
    this.#core = {
      owner: this,
      batchMs: batchDurationMs,
      session,
      status: () => this.#state,
      checkpointDir: () => this.#checkpointDir,
      nextOperatorId: () => this.#operatorIds++,
      registerInput: (node) => {
        node.id = this.#inputIds++
        this.#inputs.push(node)
      },
      registerOutput: (node) => {
        this.#outputs.push(node as ForEachDStream<unknown>)
      },
      recordBuildError: (error) => {
        this.#buildErrors.push(error)
        // After start there is no start() left to report it: awaitTermination does (Spark throws at the call).
        if (this.#state !== "INITIALIZED") Deferred.doneUnsafe(this.#terminated, Effect.fail(error))
      }
    }
  }

  /**
   * A new context in the current session (Spark's `new StreamingContext(sc, batchDuration)`).
   * Fails with `IllegalStateError` when the batch duration is not a positive duration.
   */
  static make(options: StreamingContextOptions): Effect.Effect<StreamingContext, IllegalStateError, Session> {
    return Effect.gen(function* () {
      const session = yield* Session
      const batchMs = parseDurationMs(options.batchDuration)
      if (batchMs === undefined || !(batchMs > 0)) {
        return yield* new IllegalStateError({ message: `Invalid batch duration: ${String(options.batchDuration)}` })
      }
      return new StreamingContext(batchMs, session)
    })
  }

  /**
   * Spark's `StreamingContext.getOrCreate`: calls `create` to build the graph, sets `dir` as
   * its checkpoint directory and, when `dir` holds a checkpoint, restores the state and the
   * batch grid from it when the context starts. A checkpoint written with another batch
   * duration fails with `CheckpointError`.
   */
  static getOrCreate<E, R>(
    dir: string,
    create: () => Effect.Effect<StreamingContext, E, R> | StreamingContext
  ): Effect.Effect<StreamingContext, E | CheckpointError, R | Session> {
    return Effect.gen(function* () {
      const session = yield* Session
      const fs = session.state.checkpointFileSystem
      const made = create()
      const ssc: StreamingContext = made instanceof StreamingContext ? made : yield* made
      ssc.checkpoint(dir)
      const path = fs.join(fs.resolve(dir), CHECKPOINT_FILE)
      const text = yield* fs.readText(path)
      if (text === undefined) return ssc
      let meta: CheckpointMetadata
      try {
        meta = JSON.parse(text) as CheckpointMetadata
      } catch (cause) {
        return yield* new CheckpointError({
          reason: "Corrupt",
          path,
          message: `The DStream checkpoint ${path} is not valid JSON.`,
          cause
        })
      }
      if (meta.version !== 1 || typeof meta.zeroTime !== "number" || typeof meta.lastBatchTime !== "number") {
        return yield* new CheckpointError({
          reason: "UnsupportedVersion",
          path,
          message: `The DStream checkpoint ${path} has an unknown layout.`
        })
      }
      if (meta.batchDurationMs !== ssc.batchDuration) {
        return yield* new CheckpointError({
          reason: "Incompatible",
          path,
          message: `The checkpoint in ${dir} was written with a batch duration of ${ms(meta.batchDurationMs)}, but the context has ${ms(ssc.batchDuration)}.`
        })
      }
      ssc.#restored = meta
      return ssc
    })
  }

  // ---- inputs ----

  #input<T>(make: () => InputNode<T>): DStream<T> {
    const error = this.#initError()
    if (error !== undefined) {
      this.#buildErrors.push(error)
      if (this.#state !== "INITIALIZED") Deferred.doneUnsafe(this.#terminated, Effect.fail(error))
      // Builders never throw: the stream carries the error (start() and awaitTermination report
      // it) over an input that is not registered, so it never runs.
      return new DStream(new QueueInputDStream<T>(this.#core, [], true, undefined), error)
    }
    const node = make()
    this.#core.registerInput(node as InputNode<unknown>)
    return new DStream(node)
  }

  #initError(): IllegalStateError | undefined {
    if (this.#state === "ACTIVE") {
      return new IllegalStateError({
        message: "Adding new inputs, transformations, and output operations after starting a context is not supported"
      })
    }
    if (this.#state === "STOPPED") {
      return new IllegalStateError({
        message: "Adding new inputs, transformations, and output operations after stopping a context is not supported"
      })
    }
    return undefined
  }

  /**
   * Spark's `queueStream`: one batch per queue element (`oneAtATime`, the default) or all queued
   * elements at once; `defaultRDD` (or an empty batch) when the queue is empty. Elements are
   * arrays or RDDs; the array passed is consumed, so elements pushed later reach later batches.
   */
  queueStream<T>(
    queue: Array<ReadonlyArray<T> | RDD<T>>,
    oneAtATime = true,
    defaultRDD?: ReadonlyArray<T> | RDD<T>
  ): DStream<T> {
    return this.#input(() => new QueueInputDStream<T>(this.#core, queue, oneAtATime, defaultRDD))
  }

  /** Spark's `socketTextStream`: lines from a TCP server (a `SocketReceiver`). */
  socketTextStream(host: string, port: number, storageLevel?: string): DStream<string> {
    return this.#input(
      () => new ReceiverInputDStream(this.#core, new SocketReceiver(host, port, storageLevel), "SocketInputDStream")
    )
  }

  /** Spark's `textFileStream`: the lines of new files in a folder, per batch. */
  textFileStream(directory: string): DStream<string> {
    return this.#input(() => new FileInputDStream(this.#core, directory, true))
  }

  /**
   * A direct stream over any registered streaming source (Spark's `KafkaUtils.createDirectStream`
   * shape, see `DirectInputDStream.ts`): each batch reads the source's next offset range, and a
   * context recovered through `getOrCreate` re-reads exactly the ranges of batches that did not
   * complete. An unknown format or bad options fail `start` (`AnalysisError`/`ConnectorError`).
   */
  directStream<R = Record<string, unknown>>(
    format: string,
    options: Readonly<Record<string, string | number | boolean>> = {}
  ): DStream<R> {
    const opts: Record<string, string> = {}
    for (const [k, v] of Object.entries(options)) opts[k] = String(v)
    return this.#input(() => new DirectInputDStream<R>(this.#core, format, opts))
  }

  /**
   * @internal An input stream over a custom `InputNode` (Spark's `InputDStream` subclasses, such
   * as the test suites' `TestInputStream`, whose batches may be missing at some times).
   */
  inputNode<T>(make: (core: ContextCore) => InputNode<T>): DStream<T> {
    return this.#input(() => make(this.#core))
  }

  /** Spark's `receiverStream`: the items a custom `Receiver` stores. */
  receiverStream<T>(receiver: Receiver<T>): DStream<T> {
    return this.#input(() => new ReceiverInputDStream<T>(this.#core, receiver))
  }

  /** The batches of several streams together (same slide duration). */
  union<T>(streams: ReadonlyArray<DStream<T>>): DStream<T> {
    const first = streams[0]
    if (first === undefined) return this.queueStream<T>([])
    return first.derive(
      () => new UnionDStream(streams.map((s) => s.node)),
      () => sameSlide(streams),
      streams.slice(1)
    )
  }

  /** Spark's `StreamingContext.transform`: a function of several streams' batches of the same time. */
  transform<U>(
    streams: ReadonlyArray<DStream<any>>,
    f: (rdds: ReadonlyArray<RDD<any>>, time: number) => RDD<U>
  ): DStream<U> {
    const first = streams[0] as DStream<any>
    return first.derive(
      () =>
        new TransformedDStream<U>(
          streams.map((s) => s.node),
          f
        ),
      () => sameSlide(streams),
      streams.slice(1)
    )
  }

  // ---- settings ----

  /** Spark's `remember`: every stream keeps its batches at least this long (set once). */
  remember(duration: DurationInput): void {
    const d = parseDurationMs(duration)
    if (this.#rememberMs !== undefined) {
      this.#buildErrors.push(
        requirement(`Remember duration already set as ${ms(this.#rememberMs)}. Cannot set it again.`)
      )
      return
    }
    if (d === undefined || d <= 0) {
      this.#buildErrors.push(new IllegalStateError({ message: `Invalid remember duration: ${String(duration)}` }))
      return
    }
    this.#rememberMs = d
  }

  /** Spark's `checkpoint(directory)`: where state and the batch grid are checkpointed. */
  checkpoint(directory: string | undefined): void {
    this.#checkpointDir =
      directory === undefined ? undefined : this.session.state.checkpointFileSystem.resolve(directory)
  }

  addStreamingListener(listener: StreamingListener): void {
    this.#listeners.push(listener)
  }

  removeStreamingListener(listener: StreamingListener): void {
    const i = this.#listeners.indexOf(listener)
    if (i >= 0) this.#listeners.splice(i, 1)
  }

  /** Spark's `getState()`. */
  getState(): Effect.Effect<StreamingContextState> {
    return Effect.sync(() => this.#state)
  }

  #post(f: (l: StreamingListener) => void): void {
    for (const l of this.#listeners) {
      try {
        f(l)
      } catch {
        // Spark's listener bus logs a failing listener and carries on.
      }
    }
  }

  // ---- lifecycle ----

  /**
   * Spark's `start()`: validates the graph (output operations, windows, checkpoint settings —
   * `IllegalStateError` with Spark's messages), restores a checkpoint if `getOrCreate` found one,
   * starts receivers and the batch timer. Does nothing on an active context.
   */
  start(): Effect.Effect<
    void,
    IllegalStateError | CheckpointError | StateStoreError | AnalysisError | ConnectorError
  > {
    return Effect.gen({ self: this }, function* () {
      switch (this.#state) {
        case "ACTIVE":
          return
        case "STOPPED":
          return yield* new IllegalStateError({ message: "StreamingContext has already been stopped" })
        case "INITIALIZED":
          break
      }
      // DStreams run on this process's scheduler over JavaScript closures: nothing of them can
      // run on a Spark Connect server (Spark Connect has no DStream API either).
      if (this.session.state.remote !== undefined) {
        return yield* new AnalysisError({
          reason: "UnsupportedOperation",
          message: `StreamingContext (DStreams) cannot run on a remote session (${this.session.state.remote.address}): DStreams run on the local scheduler with JavaScript functions, and Spark Connect has no DStream API. Use a local Session.layer() for DStreams, or Structured Streaming on the remote session.`
        })
      }
      if (this.#buildErrors.length > 0) return yield* this.#buildErrors[0]
      if (this.#outputs.length === 0)
        return yield* requirement("No output operations registered, so nothing to execute")
      const now = yield* Clock.currentTimeMillis
      const batch = this.batchDuration
      const restored = this.#restored
      // Spark's RecurringTimer.getStartTime: the next multiple of the period; zero time is one batch before.
      this.#zeroTime = restored !== undefined ? restored.zeroTime : (Math.floor(now / batch) + 1) * batch - batch
      for (const out of this.#outputs) out.initialize(this.#zeroTime)
      if (this.#rememberMs !== undefined) for (const out of this.#outputs) out.remember(this.#rememberMs)
      else for (const out of this.#outputs) out.remember(undefined)
      for (const out of this.#outputs) {
        const m = out.validateAtStart()
        if (m !== undefined) return yield* requirement(m)
      }
      this.#stateful = collectStateful(this.#outputs)
      const dir = this.#checkpointDir
      if (dir !== undefined) {
        yield* this.session.state.checkpointFileSystem.mkdirs(dir)
        const provider = this.#provider()
        if (restored === undefined) {
          // A context made afresh on a used directory starts from empty state, as Spark's
          // new StreamingContext does (it only recovers through getOrCreate).
          for (const node of this.#stateful) {
            const id = { checkpoint: dir, operatorId: node.operatorId, storeName: "default" }
            if ((yield* provider.latestVersion(id)) > -1) yield* provider.rollbackTo({ ...id, version: -1 })
          }
        } else {
          this.#stateVersion = restored.stateVersion
          for (const node of this.#stateful) {
            const id = { checkpoint: dir, operatorId: node.operatorId, storeName: "default" }
            const latest = yield* provider.latestVersion(id)
            if (latest > restored.stateVersion) yield* provider.rollbackTo({ ...id, version: restored.stateVersion })
            if (restored.stateVersion >= 0 && latest >= 0) {
              const entries = yield* provider.read({ ...id, version: restored.stateVersion })
              node.restore(entries, restored.lastBatchTime)
            }
          }
        }
      }
      this.#directOffsets = { ...(restored?.directOffsets ?? {}) }
      for (const input of this.#inputs) {
        if (input instanceof DirectInputDStream)
          yield* input.open(restored?.directOffsets?.[String(input.id)], restored?.lastBatchTime)
      }
      // Batches missed while a restored context was down run first (Spark's down times).
      this.#nextTime = restored !== undefined ? restored.lastBatchTime + batch : this.#zeroTime + batch
      const scope = this.session.state.queries.scope
      if (scope === undefined)
        return yield* new IllegalStateError({ message: "The session of this StreamingContext has been closed" })
      const services = yield* Effect.context<never>()
      const nowSync = () => Effect.runSyncWith(services)(Clock.currentTimeMillis)
      // Spark's JobScheduler.start: one rate controller per receiver stream with backpressure on.
      const backpressure = isBackPressureEnabled(this.session.state.conf)
      const wal =
        (this.session.state.conf.get("spark.streaming.receiver.writeAheadLog.enable") ?? "false")
          .trim()
          .toLowerCase() === "true"
      this.#receivedRecords = { ...(restored?.receivedRecords ?? {}) }
      for (const input of this.#inputs) {
        if (input instanceof ReceiverInputDStream) {
          input.configureRate(
            backpressure ? yield* createRateEstimator(this.session.state.conf, this.batchDuration) : undefined
          )
          if (wal) yield* this.#attachLog(input as ReceiverInputDStream<unknown>, restored)
        }
      }
      for (const input of this.#inputs) {
        const started = input.start()
        if (started !== undefined) yield* started
        if (input instanceof ReceiverInputDStream) {
          const receiver = input.receiver as Receiver<unknown>
          const fiber = yield* Effect.forkIn(
            receiver.supervise(input.id, {
              restartDelayMs: Number(this.session.state.conf.get("spark.streaming.receiverRestartDelay") ?? "2000"),
              now: nowSync,
              started: (info) => this.#post((l) => l.onReceiverStarted?.({ receiverInfo: info })),
              stopped: (info) => this.#post((l) => l.onReceiverStopped?.({ receiverInfo: info })),
              error: (info) => this.#post((l) => l.onReceiverError?.({ receiverInfo: info }))
            }),
            scope
          )
          this.#receivers.push(fiber)
        }
      }
      this.#startedAt = now
      this.#state = "ACTIVE"
      this.session.state.streamingContexts.add(this)
      this.#notifyView = registerView(
        {
          id: this.id,
          batchDuration: this.batchDuration,
          session: this.session,
          addStreamingListener: (l) => this.addStreamingListener(l),
          currentState: () => this.#state,
          failure: () => this.#failure
        },
        now
      )
      this.#notifyView()
      this.#loop = yield* Effect.forkIn(this.#runLoop(), scope)
      this.#post((l) => l.onStreamingStarted?.({ time: now }))
    })
  }

  /** Spark's WriteAheadLogBasedBlockHandler set-up: needs a checkpoint dir; recovers on getOrCreate. */
  #attachLog(
    input: ReceiverInputDStream<unknown>,
    restored: CheckpointMetadata | undefined
  ): Effect.Effect<void, IllegalStateError | CheckpointError> {
    return Effect.gen({ self: this }, function* () {
      const dir = this.#checkpointDir
      if (dir === undefined) {
        return yield* new IllegalStateError({
          message:
            "Cannot enable receiver write-ahead log without checkpoint directory set. Please use streamingContext.checkpoint() to set the checkpoint directory. See documentation for more details."
        })
      }
      const logDir = receivedDataDir(dir, input.id)
      const consumed = restored === undefined ? undefined : (restored.receivedRecords?.[String(input.id)] ?? 0)
      try {
        input.attachLog(new ReceivedBlockLog(logDir), consumed)
      } catch (cause) {
        if (cause instanceof ReceivedBlockLogCorrupt) {
          return yield* new CheckpointError({
            reason: "Corrupt",
            path: cause.path,
            message: `${cause.message} Restore it from a backup, or start the context from a new checkpoint directory.`,
            cause
          })
        }
        return yield* new CheckpointError({
          reason: "Io",
          path: logDir,
          message: `Cannot open the receiver write-ahead log in ${logDir}: ${describeError(cause)}`,
          cause
        })
      }
      if (consumed !== undefined) this.#receivedRecords[String(input.id)] = consumed
    })
  }

  #provider(): StateStoreProvider {
    const provider = this.session.state.stateStoreProvider
    if (provider === undefined) throw new Error("The session has no state store provider")
    return provider
  }

  #runLoop(): Effect.Effect<void> {
    const step = Effect.gen({ self: this }, function* () {
      if (this.#stopRequested) return "stop" as const
      const now = yield* Clock.currentTimeMillis
      let ran = false
      while (!this.#stopRequested && this.#nextTime <= now) {
        const ok = yield* this.#batchLock.withPermit(this.#runBatch(this.#nextTime))
        if (!ok) return "stop" as const
        ran = true
      }
      return ran ? ("ran" as const) : ("idle" as const)
    })
    return runTrigger(Trigger.ProcessingTime(this.batchDuration), step, Effect.void)
  }

  /**
   * One batch (Spark's JobGenerator.generateJobs, then the JobScheduler running the jobs, then
   * DoCheckpoint and ClearMetadata). Returns false when the batch failed (the failure is
   * reported to `awaitTermination` and the timer stops).
   */
  #runBatch(time: number): Effect.Effect<boolean> {
    return Effect.uninterruptible(
      Effect.gen({ self: this }, function* () {
        this.#inBatch = true
        return yield* this.#batchBody(time)
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            this.#inBatch = false
          })
        )
      )
    )
  }

  #batchBody(time: number): Effect.Effect<boolean> {
    return Effect.gen({ self: this }, function* () {
      // Spark's JobSet is submitted when the timer fires at the batch time, and queues while an
      // earlier batch runs: a late batch's scheduling delay counts from its batch time (down-time
      // batches of a recovered context from the restart), which backpressure's integral term uses.
      const submissionTime = Math.min(yield* Clock.currentTimeMillis, Math.max(time, this.#startedAt))
      const fail = (message: string, cause: unknown) =>
        Effect.gen({ self: this }, function* () {
          const error = new StreamingQueryError({
            message: `${message}: ${describeError(cause)}`,
            queryId: this.id,
            runId: this.id,
            batchId: time,
            cause
          })
          this.#failure ??= { message: error.message, batchTime: time }
          this.#notifyView()
          yield* Deferred.fail(this.#terminated, error)
          return false
        })
      for (const input of this.#inputs) {
        const prepared = input.prepare(time)
        if (prepared === undefined) continue
        const exit = yield* Effect.exit(prepared)
        if (Exit.isFailure(exit))
          return yield* fail(`Error generating jobs for time ${ms(time)}`, Cause.squash(exit.cause))
      }
      // Spark generates every output's job (computes the RDDs) before running any job.
      const jobs: Array<{
        readonly out: ForEachDStream<unknown>
        readonly rdd: RDD<unknown> | undefined
        readonly index: number
      }> = []
      try {
        for (let i = 0; i < this.#outputs.length; i++) {
          jobs.push({ out: this.#outputs[i], rdd: this.#outputs[i].generateJob(time), index: i })
        }
      } catch (cause) {
        return yield* fail(`Error generating jobs for time ${ms(time)}`, cause)
      }
      const inputInfo = new Map<number, StreamInputInfo>()
      let numRecords = 0
      for (const input of this.#inputs) {
        const n = input.numRecords(time)
        numRecords += n
        inputInfo.set(input.id, { inputStreamId: input.id, numRecords: n, metadata: {} })
      }
      const opInfos = new Map<number, OutputOperationInfo>()
      const info = (start: number | undefined, end: number | undefined): BatchInfo => ({
        batchTime: time,
        streamIdToInputInfo: inputInfo,
        submissionTime,
        processingStartTime: start,
        processingEndTime: end,
        outputOperationInfos: opInfos,
        schedulingDelay: start === undefined ? undefined : start - submissionTime,
        processingDelay: start === undefined || end === undefined ? undefined : end - start,
        totalDelay: end === undefined ? undefined : end - submissionTime,
        numRecords
      })
      for (const job of jobs) {
        opInfos.set(job.index, opInfo(time, job.index, job.out.description, undefined, undefined, undefined))
      }
      this.#post((l) => l.onBatchSubmitted?.({ batchInfo: info(undefined, undefined) }))
      const processingStart = yield* Clock.currentTimeMillis
      this.#post((l) => l.onBatchStarted?.({ batchInfo: info(processingStart, undefined) }))
      for (const job of jobs) {
        if (job.rdd === undefined) continue
        const opStart = yield* Clock.currentTimeMillis
        const started = opInfo(time, job.index, job.out.description, opStart, undefined, undefined)
        opInfos.set(job.index, started)
        this.#post((l) => l.onOutputOperationStarted?.({ outputOperationInfo: started }))
        const exit = yield* Effect.exit(runOutput(job.out.fn, job.rdd, time))
        const opEnd = yield* Clock.currentTimeMillis
        const failure = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
        const done = opInfo(
          time,
          job.index,
          job.out.description,
          opStart,
          opEnd,
          failure === undefined ? undefined : describeError(failure)
        )
        opInfos.set(job.index, done)
        this.#post((l) => l.onOutputOperationCompleted?.({ outputOperationInfo: done }))
        if (failure !== undefined) return yield* fail(`Job failed for batch time ${ms(time)}`, failure)
      }
      const dir = this.#checkpointDir
      if (dir !== undefined) {
        const saved = yield* Effect.exit(this.#checkpointBatch(dir, time))
        if (Exit.isFailure(saved))
          return yield* fail(`Checkpointing batch ${ms(time)} failed`, Cause.squash(saved.cause))
      }
      for (const input of this.#inputs) {
        if (!(input instanceof DirectInputDStream)) continue
        const committed = yield* Effect.exit(input.completed(time))
        if (Exit.isFailure(committed))
          return yield* fail(`Committing the offsets of batch ${ms(time)} failed`, Cause.squash(committed.cause))
      }
      for (const out of this.#outputs) out.clearMetadata(time)
      this.#nextTime = time + this.batchDuration
      const processingEnd = yield* Clock.currentTimeMillis
      const completed = info(processingStart, processingEnd)
      for (const input of this.#inputs) {
        if (input instanceof ReceiverInputDStream) input.rateController?.onBatchCompleted(completed)
      }
      this.#post((l) => l.onBatchCompleted?.({ batchInfo: completed }))
      return true
    })
  }

  /** Commits every stateful stream's changes as the next state version, then the batch time. */
  #checkpointBatch(dir: string, time: number): Effect.Effect<void, StateStoreError | CheckpointError> {
    return Effect.gen({ self: this }, function* () {
      const fs = this.session.state.checkpointFileSystem
      if (this.#stateful.length > 0) {
        const provider = this.#provider()
        const minBatchesToRetain = Number(
          this.session.state.conf.get("spark.sql.streaming.minBatchesToRetain") ?? "100"
        )
        for (const node of this.#stateful) {
          const changes = node.drainChanges(time)
          const store = yield* provider.open({
            checkpoint: dir,
            operatorId: node.operatorId,
            storeName: "default",
            schema: STATE_SCHEMA,
            version: this.#stateVersion,
            minBatchesToRetain
          })
          for (const key of changes.removes) store.remove(key)
          for (const [key, value] of changes.puts) store.put(key, value)
          yield* store.commit()
        }
        this.#stateVersion++
      }
      const logs: Array<readonly [ReceivedBlockLog, number]> = []
      for (const input of this.#inputs) {
        if (!(input instanceof ReceiverInputDStream) || input.log === undefined) continue
        const consumed = input.consumedThrough(time)
        if (consumed !== undefined) this.#receivedRecords[String(input.id)] = consumed
        logs.push([input.log, this.#receivedRecords[String(input.id)] ?? 0])
      }
      const meta: CheckpointMetadata = {
        version: 1,
        batchDurationMs: this.batchDuration,
        zeroTime: this.#zeroTime,
        lastBatchTime: time,
        stateVersion: this.#stateVersion,
        ...(logs.length > 0 ? { receivedRecords: { ...this.#receivedRecords } } : {}),
        ...(this.#directEnds(time) ?? {})
      }
      yield* fs.writeAtomic(fs.join(dir, CHECKPOINT_FILE), JSON.stringify(meta), true)
      // Spark's cleanupOldBlocks: log files all of whose records completed batches consumed.
      for (const [log, consumed] of logs) {
        try {
          log.clean(consumed)
        } catch (cause) {
          return yield* new CheckpointError({
            reason: "Io",
            path: log.dir,
            message: `Cannot clean the receiver write-ahead log in ${log.dir}: ${describeError(cause)}`,
            cause
          })
        }
      }
    })
  }

  /** Records the end offset of each direct stream's batch `time`; `{ directOffsets }` when any. */
  #directEnds(time: number): { readonly directOffsets: Record<string, unknown> } | undefined {
    let any = false
    for (const input of this.#inputs) {
      if (!(input instanceof DirectInputDStream)) continue
      any = true
      const end = input.endOffset(time)
      if (end !== undefined) this.#directOffsets[String(input.id)] = end
    }
    return any ? { directOffsets: { ...this.#directOffsets } } : undefined
  }

  /**
   * Spark's `stop`: stops receivers and the batch timer (a batch already running finishes) and
   * marks the context STOPPED. With `stopGracefully`, receivers stop first and the data they
   * stored runs as one more batch (at the next batch time, without waiting for the clock).
   * Idempotent; stopping a context that never started just marks it STOPPED.
   */
  stop(options?: { readonly stopGracefully?: boolean }): Effect.Effect<void> {
    return Effect.gen({ self: this }, function* () {
      if (this.#state === "STOPPED") return
      if (this.#state === "INITIALIZED") {
        this.#state = "STOPPED"
        yield* Deferred.succeed(this.#terminated, undefined)
        return
      }
      const graceful = options?.stopGracefully === true
      if (graceful) {
        yield* this.#stopReceivers()
        while (
          !this.#stopRequested &&
          !this.#inBatch &&
          this.#inputs.some((i) => i instanceof ReceiverInputDStream && i.receiver.hasPending())
        ) {
          const ok = yield* this.#batchLock.withPermit(this.#runBatch(this.#nextTime))
          if (!ok) break
        }
      }
      this.#stopRequested = true
      const loop = this.#loop
      this.#loop = undefined
      // Called from an output operation of a running batch: the loop ends after that batch.
      if (loop !== undefined && !this.#inBatch) yield* interruptFiber(loop)
      if (!graceful) yield* this.#stopReceivers()
      for (const input of this.#inputs) {
        const stopped = input.stop(graceful)
        if (stopped !== undefined) yield* stopped
        if (input instanceof ReceiverInputDStream) input.log?.close()
      }
      this.#state = "STOPPED"
      this.session.state.streamingContexts.delete(this)
      this.#notifyView()
      yield* Deferred.succeed(this.#terminated, undefined)
    })
  }

  #stopReceivers(): Effect.Effect<void> {
    return Effect.gen({ self: this }, function* () {
      const fibers = this.#receivers
      this.#receivers = []
      for (const f of fibers) yield* interruptFiber(f)
      for (const input of this.#inputs) if (input instanceof ReceiverInputDStream) input.receiver.shutdown()
    })
  }

  /** Waits until the context stops; fails with the error of a failed batch. */
  awaitTermination(): Effect.Effect<void, StreamingContextError> {
    return Deferred.await(this.#terminated)
  }

  /**
   * Waits at most `timeoutMs` (on Effect's clock): `true` when the context stopped, `false` on
   * timeout; fails with the error of a failed batch.
   */
  awaitTerminationOrTimeout(timeoutMs: number): Effect.Effect<boolean, StreamingContextError> {
    return Deferred.await(this.#terminated).pipe(Effect.timeoutOption(timeoutMs), Effect.map(Option.isSome))
  }
}

const interruptFiber = (fiber: Fiber.Fiber<unknown, unknown>): Effect.Effect<void> => Fiber.interrupt(fiber)

const opInfo = (
  batchTime: number,
  id: number,
  description: string,
  startTime: number | undefined,
  endTime: number | undefined,
  failureReason: string | undefined
): OutputOperationInfo => ({
  batchTime,
  id,
  name: description,
  description,
  startTime,
  endTime,
  failureReason,
  duration: startTime === undefined || endTime === undefined ? undefined : endTime - startTime
})

/** Runs an output function that may return nothing, a Promise or an Effect. */
const runOutput = (
  fn: (rdd: RDD<unknown>, time: number) => unknown,
  rdd: RDD<unknown>,
  time: number
): Effect.Effect<void, unknown> =>
  Effect.suspend(() => {
    let result: unknown
    try {
      result = fn(rdd, time)
    } catch (e) {
      return Effect.fail(e)
    }
    if (Effect.isEffect(result)) return Effect.asVoid(result as Effect.Effect<unknown, unknown, never>)
    if (result !== null && typeof result === "object" && typeof (result as PromiseLike<unknown>).then === "function") {
      return Effect.tryPromise({ try: () => result as Promise<unknown>, catch: (e) => e }).pipe(Effect.asVoid)
    }
    return Effect.void
  })

/** The stateful nodes reachable from the outputs, by operator id (a fixed order across restarts). */
const collectStateful = (outputs: ReadonlyArray<DStreamNode<unknown>>): Array<StatefulNode> => {
  const seen = new Set<DStreamNode<unknown>>()
  const found = new Map<number, StatefulNode>()
  const visit = (n: DStreamNode<unknown>) => {
    if (seen.has(n)) return
    seen.add(n)
    const s = n.stateful()
    if (s !== undefined) found.set(s.operatorId, s)
    for (const d of n.dependencies) visit(d)
  }
  for (const o of outputs) visit(o)
  return [...found.values()].sort((a, b) => a.operatorId - b.operatorId)
}
