/**
 * `df.writeStream`: Spark's `DataStreamWriter`. The builder is immutable; `start()` checks the
 * query (output mode, trigger, unsupported operations, sink options, checkpoint), starts it in
 * the session's scope and returns its `StreamingQuery` handle.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { MemoryStream, Session, Trigger } from "tributary"
 * const program = Effect.gen(function* () {
 *   const spark = yield* Session
 *   const input = yield* MemoryStream.make(Schema.Struct({ word: Schema.String }))
 *   const query = yield* input.toDF().writeStream.format("memory").queryName("words").start()
 *   yield* input.addData([{ word: "a" }])
 *   yield* query.processAllAvailable()
 *   const rows = yield* spark.table("words").collect()   // [{ word: "a" }]
 *   yield* query.stop()
 * })
 * ```
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import { tmpdir } from "node:os"
import { Effect, Result } from "effect"
import * as Analyzer from "../../core/analysis/Analyzer.ts"
import * as T from "../../core/DataType.ts"
import { AnalysisError, CheckpointError, ConnectorError, errorClassOf, isTaggedError } from "../../core/Errors.ts"
import * as E from "../../core/Expression.ts"
import * as Plan from "../../core/LogicalPlan.ts"
import * as MetadataLog from "../../core/MetadataLog.ts"
import { rowsToExternal } from "../../core/Row.ts"
import {
  lookupSinkFormat,
  lookupSourceFormat,
  type OutputMode,
  type Sink,
  sinkFormatNames
} from "../../core/Streaming.ts"
import { Trigger } from "../../core/Trigger.ts"
import { checkForContinuous, checkForStreaming } from "../../core/analysis/UnsupportedOperationChecker.ts"
import { ContinuousExecution, type ContinuousSourceBinding } from "../execution/ContinuousExecution.ts"
import { foreachContinuousWrite } from "../execution/ContinuousWriters.ts"
import * as QE from "../execution/QueryExecution.ts"
import { MicroBatchExecution, type SourceBinding, streamingSourceKeys } from "../execution/MicroBatchExecution.ts"
import { DataFrame } from "./DataFrame.ts"
import * as State from "../contracts/SessionState.ts"
import { runListenerCallback } from "../contracts/StreamingQueryListener.ts"
import type { StreamingQuery } from "../contracts/StreamingQuery.ts"

/** What `foreach` calls: `open` per partition and epoch, `process` per row, `close` at the end. */
export interface ForeachWriter<R> {
  readonly open?: (partitionId: number, epochId: number) => boolean | Promise<boolean>
  readonly process: (row: R) => void | Promise<void>
  readonly close?: (error: unknown) => void | Promise<void>
}

type BatchFunction<R> = (df: DataFrame<R>, batchId: number) => unknown

interface WriterSpec<_R> {
  readonly format: string | undefined
  readonly outputMode: string
  readonly trigger: Trigger
  readonly queryName: string | undefined
  readonly options: Readonly<Record<string, string>>
  readonly partitionColumns: ReadonlyArray<string>
  // `any`: keeps DataFrame<R> covariant in R (a writer for a narrower row is usable where a wider one is)
  readonly foreachBatch: BatchFunction<any> | undefined
  readonly foreach: ForeachWriter<any> | undefined
}

const invalid = (message: string): AnalysisError => new AnalysisError({ reason: "InvalidArgument", message })

/**
 * Sets `key` in options whose keys compare case-insensitively (Spark's `CaseInsensitiveMap`):
 * an earlier key that differs only in case is dropped, so the later option wins
 * (DataStreamReaderWriterSuite's "SPARK-32832: later option should override earlier options").
 */
export const setOption = (
  options: Readonly<Record<string, string>>,
  key: string,
  value: string
): Readonly<Record<string, string>> => {
  const k = key.toLowerCase()
  const next: Record<string, string> = {}
  for (const [name, v] of Object.entries(options)) if (name.toLowerCase() !== k) next[name] = v
  next[key] = value
  return next
}

/**
 * Spark's `QueryCompilationErrors.setPathOptionAndCallWithPathParameterError`: `load(path)` or
 * `start(path)` with a `path` option already set (SPARK-32516), unless
 * `spark.sql.legacy.pathOptionBehavior.enabled` is on.
 */
export const pathOptionAndParameterError = (method: string): AnalysisError =>
  new AnalysisError({
    reason: "InvalidArgument",
    message: `There is a 'path' option set and ${method}() is called with a path parameter. Either remove the path option, or call ${method}() without the parameter. To ignore this check, set 'spark.sql.legacy.pathOptionBehavior.enabled' to 'true'.`
  })

/** Spark's `assertNotPartitioned` (`_LEGACY_ERROR_TEMP_1197`). */
const notPartitioned = (operation: string): AnalysisError =>
  new AnalysisError({
    reason: "UnsupportedOperation",
    errorClass: "_LEGACY_ERROR_TEMP_1197",
    message: `'${operation}' does not support partitioning.`
  })

/**
 * Sinks that Spark writes through the DataSource V2 `STREAMING_WRITE` path (or checks itself):
 * Spark does not normalize their partition columns (`DataStreamWriter.normalizedParCols` is only
 * used by `createV1Sink`), so `partitionBy` is ignored by them.
 */
const V2_SINKS: ReadonlySet<string> = new Set(["memory", "console", "noop", "kafka"])

/** Runs user code that may return nothing, a Promise or an Effect; its failure fails the batch. */
const callUser = (f: () => unknown): Effect.Effect<void, unknown> =>
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
const userFailure = (connector: "foreachBatch" | "foreach") => (cause: unknown) => {
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

export class DataStreamWriter<R> {
  readonly df: DataFrame<R>
  readonly spec: WriterSpec<unknown>

  constructor(df: DataFrame<R>, spec?: WriterSpec<unknown>) {
    this.df = df
    this.spec = spec ?? {
      format: undefined,
      outputMode: "append",
      trigger: Trigger.Default,
      queryName: undefined,
      options: {},
      partitionColumns: [],
      foreachBatch: undefined,
      foreach: undefined
    }
  }

  private with(patch: Partial<WriterSpec<unknown>>): DataStreamWriter<R> {
    return new DataStreamWriter(this.df, { ...this.spec, ...patch })
  }

  /** The sink: `memory`, `console`, `noop`, `json`, `csv`, `parquet`, `text`, `kafka`, … */
  format(source: string): DataStreamWriter<R> {
    return this.with({ format: source })
  }

  /** `append` (the default), `update` or `complete`. */
  outputMode(mode: OutputMode | (string & {})): DataStreamWriter<R> {
    return this.with({ outputMode: mode })
  }

  trigger(trigger: Trigger): DataStreamWriter<R> {
    return this.with({ trigger })
  }

  /** The query's name: unique among the session's active queries; the memory sink's table. */
  queryName(name: string): DataStreamWriter<R> {
    return this.with({ queryName: name })
  }

  /** Sets an option; keys compare case-insensitively and a later one wins, as in Spark. */
  option(key: string, value: string | number | boolean): DataStreamWriter<R> {
    return this.with({ options: setOption(this.spec.options, key, String(value)) })
  }

  options(options: Readonly<Record<string, string | number | boolean>>): DataStreamWriter<R> {
    let next = this.spec.options
    for (const [k, v] of Object.entries(options)) next = setOption(next, k, String(v))
    return this.with({ options: next })
  }

  /** Partition the output of file sinks by these columns. */
  partitionBy(...columns: ReadonlyArray<string>): DataStreamWriter<R> {
    return this.with({ partitionColumns: columns })
  }

  /**
   * Calls `f` with each micro-batch as a batch DataFrame and its batch id. `f` may return
   * nothing, a Promise or an Effect; a failure fails the query.
   */
  foreachBatch(f: BatchFunction<R>): DataStreamWriter<R> {
    return this.with({ foreachBatch: f, format: "foreachBatch" })
  }

  /** Calls `writer.open/process/close` for the rows of every micro-batch (one partition per batch). */
  foreach(writer: ForeachWriter<R>): DataStreamWriter<R> {
    return this.with({ foreach: writer, format: "foreach" })
  }

  /**
   * Starts the query. `path` is the output folder of file sinks; with a `path` option also set
   * it fails as Spark's `start(path)` does (SPARK-32516), unless
   * `spark.sql.legacy.pathOptionBehavior.enabled` is on (then `path` wins).
   */
  start(path?: string): Effect.Effect<StreamingQuery, AnalysisError | CheckpointError | ConnectorError> {
    if (path === undefined) return startQuery(this.df, this.spec)
    if (optionOf(this.spec.options, "path") !== undefined && !State.confBool(this.df.state, LEGACY_PATH_OPTION)) {
      return Effect.fail(pathOptionAndParameterError("start"))
    }
    return startQuery(this.df, { ...this.spec, options: setOption(this.spec.options, "path", path) })
  }
}

/** Spark's `SQLConf.LEGACY_PATH_OPTION_BEHAVIOR`. */
export const LEGACY_PATH_OPTION = "spark.sql.legacy.pathOptionBehavior.enabled"

/** Sinks Spark writes through its V1 `FileStreamSink`, which has no continuous writes. */
const CONTINUOUS_UNSUPPORTED_SINKS: ReadonlySet<string> = new Set(["json", "csv", "parquet", "text", "orc"])

const optionOf = (options: Readonly<Record<string, string>>, key: string): string | undefined => {
  const k = key.toLowerCase()
  for (const [name, v] of Object.entries(options)) if (name.toLowerCase() === k) return v
  return undefined
}

const foreachBatchSink = <R>(state: State.SessionState, f: BatchFunction<R>): Sink => ({
  description: "ForeachBatchSink",
  addBatch: (batch) => {
    const relation: Plan.LocalRelation = {
      _tag: "LocalRelation",
      planId: Plan.newPlanId(),
      output: batch.schema.fields.map((fl) => E.attribute(fl.name, fl.dataType, fl.nullable)),
      rows: batch.rows,
      isStreaming: false
    }
    return callUser(() => f(new DataFrame<R>(state, relation), batch.batchId)).pipe(
      Effect.mapError(userFailure("foreachBatch"))
    )
  },
  stop: () => Effect.void
})

const foreachSink = <R>(writer: ForeachWriter<R>): Sink => ({
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

const startQuery = <R>(
  df: DataFrame<R>,
  spec: WriterSpec<unknown>
): Effect.Effect<StreamingQuery, AnalysisError | CheckpointError | ConnectorError> =>
  Effect.gen(function* () {
    const state = df.state
    const fs = state.checkpointFileSystem
    if (df.buildError !== undefined) return yield* df.buildError
    // A remote session starts the query on Spark, which runs its own checks.
    if (state.remote !== undefined) {
      return yield* state.remote.startQuery(df.plan, {
        format: spec.format,
        outputMode: spec.outputMode,
        trigger: spec.trigger,
        queryName: spec.queryName,
        options: spec.options,
        partitionColumns: spec.partitionColumns,
        hasForeachBatch: spec.foreachBatch !== undefined,
        hasForeach: spec.foreach !== undefined
      })
    }
    const analyzed = yield* Effect.fromResult(QE.analyze(state, df.plan))
    if (!Plan.isStreaming(analyzed)) {
      return yield* invalid("'writeStream' can be called only on streaming Dataset/DataFrame")
    }
    const mode = spec.outputMode.toLowerCase()
    if (mode !== "append" && mode !== "update" && mode !== "complete") {
      // Spark 4's `STREAMING_OUTPUT_MODE.INVALID` (`InternalOutputModes.apply`), then Spark 3's words.
      return yield* new AnalysisError({
        reason: "InvalidArgument",
        errorClass: "STREAMING_OUTPUT_MODE.INVALID",
        message: `[STREAMING_OUTPUT_MODE.INVALID] Invalid streaming output mode: ${spec.outputMode}. Accepted output modes are 'Append', 'Complete', 'Update'. (Unknown output mode ${spec.outputMode}.)`
      })
    }
    const outputMode = mode as OutputMode
    const trigger = spec.trigger
    if ((trigger._tag === "ProcessingTime" || trigger._tag === "Continuous") && !(trigger.intervalMs >= 0)) {
      return yield* invalid("The trigger interval cannot be negative or invalid: give a duration like \"1 second\".")
    }
    const continuous = trigger._tag === "Continuous"
    // Spark's `DataStreamWriter.startInternal` picks the sink by the format name, so a later
    // `format(...)` replaces an earlier `foreach`/`foreachBatch`.
    const kind = spec.format === "foreachBatch" ? "foreachBatch" : spec.format === "foreach" ? "foreach" : "format"
    if (kind === "foreach") {
      // Spark's `foreach(null)`: "requirement failed: foreach writer cannot be null".
      if (spec.foreach == null) return yield* invalid("foreach writer cannot be null")
      if (spec.partitionColumns.length > 0) return yield* notPartitioned("foreach")
    }
    if (kind === "foreachBatch") {
      if (spec.foreachBatch == null) {
        return yield* invalid("foreachBatch function cannot be null")
      }
      if (spec.partitionColumns.length > 0) return yield* notPartitioned("foreachBatch")
    }
    // Spark's `DataStreamWriter.startInternal`: foreachBatch refuses a continuous trigger first.
    if (continuous && kind === "foreachBatch") {
      return yield* new AnalysisError({
        reason: "UnsupportedOperation",
        errorClass: "_LEGACY_ERROR_TEMP_1195",
        message: "'foreachBatch' is not supported with continuous trigger"
      })
    }
    // Spark's `StreamingQueryManager.createQuery`: only sinks with streaming writes run
    // continuously; a file sink (Spark's V1 `FileStreamSink`) gets the micro-batch engine's checks,
    // then its refusal of the trigger.
    const sinkName = spec.format ?? state.conf.get("spark.sql.sources.default") ?? "parquet"
    const fileSink = kind === "format" && CONTINUOUS_UNSUPPORTED_SINKS.has(sinkName.toLowerCase())
    // Spark only logs the global-watermark correctness check when its conf is off.
    const checkConf = {
      statefulOperatorCheckCorrectness:
        state.conf.get("spark.sql.streaming.statefulOperator.checkCorrectness.enabled") !== "false"
    }
    const unsupported =
      continuous && !fileSink
        ? checkForContinuous(analyzed, outputMode, checkConf)
        : checkForStreaming(analyzed, outputMode, checkConf)
    if (unsupported !== undefined) return yield* unsupported
    if (continuous && fileSink) {
      return yield* new AnalysisError({
        reason: "UnsupportedOperation",
        message: `Unknown type of trigger: ContinuousTrigger(${trigger.intervalMs})`
      })
    }

    // The sink.
    const formatName = spec.format ?? state.conf.get("spark.sql.sources.default") ?? "parquet"
    const queryName = spec.queryName
    const registry = state.queries
    if (queryName !== undefined) {
      for (const q of registry.active.values()) {
        if (q.name === queryName) {
          return yield* invalid(
            `Cannot start query with name ${queryName} as a query with that name is already active in this SparkSession`
          )
        }
      }
    }

    // The checkpoint.
    const explicit = optionOf(spec.options, "checkpointLocation")
    const confRoot = state.conf.get("spark.sql.streaming.checkpointLocation")
    const root = state.checkpointRoot ?? fs.join(tmpdir(), "tributary-checkpoints")
    const checkpoint = fs.resolve(
      explicit ??
        (confRoot !== undefined ? fs.join(confRoot, queryName ?? randomUUID()) : fs.join(root, randomUUID()))
    )
    // Spark's `StreamingQueryManager.startQuery`: a new run of a query already active (the same
    // checkpoint, so the same id) stops the active run first, unless
    // `spark.sql.streaming.stopActiveRunOnRestart` is false, which refuses the new one.
    const stopActiveRun = state.conf.get("spark.sql.streaming.stopActiveRunOnRestart") !== "false"
    /** Stops the active runs `matches` picks (Spark's default), or refuses with `refusal`. */
    const stopActive = (
      matches: (q: StreamingQuery & { readonly checkpoint: string }) => boolean,
      refusal: (q: StreamingQuery) => string
    ) =>
      Effect.gen(function* () {
        for (const q of [...registry.active.values()]) {
          if (!matches(q)) continue
          if (!stopActiveRun) {
            return yield* new CheckpointError({ reason: "ConcurrentUse", path: checkpoint, message: refusal(q) })
          }
          yield* Effect.logWarning(
            `Stopping existing streaming query [id=${q.id}, runId=${q.runId}], as a new run is being started.`
          )
          yield* Effect.ignore(q.stop())
        }
      })
    yield* stopActive(
      (q) => q.checkpoint === checkpoint,
      (q) =>
        `Cannot start query ${queryName ?? ""}: the query ${q.name ?? ""} [id = ${q.id}, runId = ${q.runId}] is already active on checkpoint ${checkpoint}. Stop it first, set spark.sql.streaming.stopActiveRunOnRestart to true, or use another checkpointLocation.`
    )
    // Spark's `useTempCheckpointLocation`: a checkpoint nobody asked for is deleted on a clean
    // stop, and here also when `start()` itself fails after making it.
    const temporary = explicit === undefined && confRoot === undefined && state.checkpointRoot === undefined
    const launch = Effect.gen(function* () {
      yield* fs.mkdirs(checkpoint)
      const existingId = yield* MetadataLog.readQueryId(fs, checkpoint)
      const id = existingId ?? randomUUID()
      if (existingId === undefined) yield* MetadataLog.writeQueryId(fs, checkpoint, id)
      yield* stopActive(
        (q) => q.id === id,
        () =>
          `Cannot start query with id ${id} as another query with same id is already active. Perhaps you are attempting to restart a query from checkpoint that is already active. You may stop the old query by setting the SQL configuration: spark.conf.set("spark.sql.streaming.stopActiveRunOnRestart", true) and retry.`
      )

      // Sources, in a fixed walk order: source i keeps its bookkeeping in sources/i.
      const relations = streamingSourceKeys(analyzed)
      const sources: Array<SourceBinding> = []
      const continuousSources: Array<ContinuousSourceBinding> = []
      for (let i = 0; continuous && i < relations.length; i++) {
        const rel = relations[i]
        const memory = state.memorySources.get(rel.sourceKey)
        const format = memory === undefined ? lookupSourceFormat(rel.format) : undefined
        if (memory === undefined && format === undefined) {
          return yield* invalid(`[DATA_SOURCE_NOT_FOUND] Failed to find the data source: ${rel.format}.`)
        }
        const create = memory?.asContinuous ?? format?.continuous
        if (create === undefined) {
          // Spark's `continuousProcessingUnsupportedByDataSourceError`.
          return yield* new AnalysisError({
            reason: "UnsupportedOperation",
            message: `Data source ${rel.format} does not support continuous processing.`
          })
        }
        const source = yield* memory?.asContinuous !== undefined
          ? Effect.sync(memory.asContinuous)
          : format!.continuous!({
              options: rel.options,
              schema: T.struct(rel.output.map((a) => T.field(a.name, a.dataType, a.nullable))),
              metadataPath: fs.join(checkpoint, "sources", String(i)),
              conf: state.conf
            })
        continuousSources.push({ key: rel.sourceKey, source })
      }
      for (let i = 0; !continuous && i < relations.length; i++) {
        const rel = relations[i]
        const memory = state.memorySources.get(rel.sourceKey)
        if (memory !== undefined) {
          sources.push({ key: rel.sourceKey, source: memory })
          continue
        }
        const format = lookupSourceFormat(rel.format)
        if (format === undefined) {
          return yield* invalid(`[DATA_SOURCE_NOT_FOUND] Failed to find the data source: ${rel.format}.`)
        }
        const source = yield* format.create({
          options: rel.options,
          schema: T.struct(rel.output.map((a) => T.field(a.name, a.dataType, a.nullable))),
          metadataPath: fs.join(checkpoint, "sources", String(i)),
          conf: state.conf
        })
        sources.push({ key: rel.sourceKey, source })
      }

      const schema = Analyzer.schemaOf(analyzed)
      let sink: Sink
      if (kind === "foreachBatch") sink = foreachBatchSink(state, spec.foreachBatch!)
      else if (kind === "foreach" && continuous) {
        // Continuous: every row reaches `process` as soon as its task has it.
        sink = { ...foreachSink(spec.foreach!), continuousWrite: foreachContinuousWrite(spec.foreach!, schema) }
      } else if (kind === "foreach") sink = foreachSink(spec.foreach!)
      else {
        const format = lookupSinkFormat(formatName)
        if (format === undefined) {
          return yield* invalid(
            `[DATA_SOURCE_NOT_FOUND] Failed to find the data source: ${formatName}. Available streaming sinks: ${sinkFormatNames().join(", ")}, foreach, foreachBatch.`
          )
        }
        if (!format.supportedOutputModes.includes(outputMode)) {
          return yield* new AnalysisError({
            reason: "UnsupportedOperation",
            message: `Data source ${formatName} does not support ${outputMode} output mode`
          })
        }
        // Spark's `DataStreamWriter.normalizedParCols` (for V1 sinks): each partition column
        // resolves to the name of an output column, by `spark.sql.caseSensitive`.
        let partitionColumns = spec.partitionColumns
        if (!V2_SINKS.has(formatName.toLowerCase()) && partitionColumns.length > 0) {
          const caseSensitive = State.confBool(state, "spark.sql.caseSensitive")
          const names = schema.fields.map((f) => f.name)
          const normalized: Array<string> = []
          for (const col of partitionColumns) {
            const found = names.find((n) => (caseSensitive ? n === col : n.toLowerCase() === col.toLowerCase()))
            if (found === undefined) {
              return yield* new AnalysisError({
                reason: "UnresolvedColumn",
                message: `Partition column ${col} not found in existing columns (${names.join(", ")})`
              })
            }
            normalized.push(found)
          }
          partitionColumns = normalized
        }
        sink = yield* format.create({
          options: spec.options,
          schema,
          outputMode,
          queryName,
          queryId: id,
          partitionColumns,
          checkpointPath: checkpoint,
          tables: state.sessionTables,
          conf: state.conf
        })
      }

      const scope = registry.scope
      if (scope === undefined) {
        return yield* invalid("The session is closed: streaming queries can only start inside Session.layer.")
      }
      const stateStore = state.stateStoreProvider
      if (stateStore === undefined) {
        return yield* invalid("The session is closed: streaming queries can only start inside Session.layer.")
      }
      const onTerminated = (q: StreamingQuery): void => {
        registry.active.delete(q.runId)
        registry.terminated.push(q)
        const done = registry.anyTerminated
        registry.anyTerminated = State.newSignal()
        done.resolve()
      }
      const execution: (MicroBatchExecution | ContinuousExecution) & StreamingQuery = continuous
        ? yield* ContinuousExecution.make({
            state,
            fs,
            id,
            runId: randomUUID(),
            name: queryName ?? null,
            checkpoint,
            analyzed,
            outputMode,
            trigger,
            sources: continuousSources,
            sink,
            listeners: () => registry.listeners.slice(),
            deleteCheckpointOnStop: temporary,
            onTerminated
          })
        : new MicroBatchExecution({
            state,
            fs,
            id,
            runId: randomUUID(),
            name: queryName ?? null,
            checkpoint,
            analyzed,
            outputMode,
            trigger,
            sources,
            sink,
            stateStore,
            listeners: () => registry.listeners.slice(),
            deleteCheckpointOnStop: temporary,
            onTerminated
          })
      const handle = Object.assign(execution, { checkpoint }) as StreamingQuery & { readonly checkpoint: string }
      registry.active.set(execution.runId, handle)
      const now = yield* Effect.clockWith((c) => c.currentTimeMillis)
      const started = { id, runId: execution.runId, name: queryName ?? null, timestamp: new Date(now).toISOString() }
      for (const l of registry.listeners) {
        if (l.onQueryStarted !== undefined) {
          const onStarted = l.onQueryStarted
          // A listener that throws, rejects or fails is logged and ignored, as for every other event.
          yield* runListenerCallback(() => onStarted(started))
        }
      }
      yield* execution.launch(scope)
      return execution as StreamingQuery
    })
    return yield* launch.pipe(
      Effect.onError(() => (temporary ? Effect.ignore(fs.remove(checkpoint)) : Effect.void))
    )
  })
