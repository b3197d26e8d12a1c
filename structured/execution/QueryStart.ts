/**
 * Starting a streaming query (Spark's `StreamingQueryManager.startQuery` / `createQuery` and
 * the checks of `DataStreamWriter.startInternal`): what `writeStream…start()` hands to the engine.
 *
 * In Spark's order: the plan is analyzed and must be streaming; the output mode and trigger are
 * checked; `foreach` / `foreachBatch` get their own checks; the unsupported-operation checker
 * rules on the plan for the engine the trigger picks (a sink without continuous writes gets the
 * micro-batch checks, then its refusal of the trigger); the query name must be free; the
 * checkpoint is resolved (an explicit `checkpointLocation`, the conf's root, the session's root
 * or a temporary folder) and an active run on it is stopped (or refused); the query id is read
 * from the checkpoint or written to it; the sources are bound in a fixed walk order (source i
 * keeps its bookkeeping in `sources/i`); the sink is made; and the execution — a
 * `MicroBatchExecution`, or a `ContinuousExecution` for `Trigger.Continuous` — is registered
 * with the session and started in its scope. A temporary checkpoint is removed again when the
 * start fails after making it.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import { tmpdir } from "node:os"
import { Effect } from "effect"
import * as PlanOutput from "../../core/analysis/PlanOutput.ts"
import { checkForContinuous, checkForStreaming } from "../../core/analysis/UnsupportedOperationChecker.ts"
import * as T from "../../core/DataType.ts"
import { AnalysisError, CheckpointError, type ConnectorError } from "../../core/Errors.ts"
import { option } from "../../core/Formats.ts"
import * as Plan from "../../core/LogicalPlan.ts"
import * as MetadataLog from "../../core/MetadataLog.ts"
import {
  type ContinuousSource,
  lookupSinkFormat,
  lookupSourceFormat,
  type MicroBatchSource,
  type OutputMode,
  type Sink,
  type SourceContext,
  sinkFormatNames
} from "../../core/Streaming.ts"
import type { Trigger } from "../../core/Trigger.ts"
import * as State from "../contracts/SessionState.ts"
import type { StreamingQuery } from "../contracts/StreamingQuery.ts"
import { ContinuousExecution } from "./ContinuousExecution.ts"
import { foreachContinuousWrite } from "./ContinuousWriters.ts"
import { type ForeachWriter, foreachSink } from "./ForeachSink.ts"
import { MicroBatchExecution } from "./MicroBatchExecution.ts"
import * as QE from "./QueryExecution.ts"
import type { Binding } from "./StreamExecution.ts"

/** What the writer (`DataStreamWriter`) asks the engine to start. */
export interface StartSpec {
  /** The sink's format name; `undefined` for `spark.sql.sources.default`. */
  readonly format: string | undefined
  readonly outputMode: string
  readonly trigger: Trigger
  readonly queryName: string | undefined
  /** The sink's options, `checkpointLocation` and `path` included (keys compare case-insensitively). */
  readonly options: Readonly<Record<string, string>>
  readonly partitionColumns: ReadonlyArray<string>
  /**
   * The sink of `foreachBatch(f)`, which the writer builds (it hands each batch to `f` as a
   * DataFrame); `undefined` when no function was given.
   */
  readonly foreachBatchSink: Sink | undefined
  // `any`: a writer typed for the query's rows fits
  readonly foreach: ForeachWriter<any> | null | undefined
}

/** A running query as the session's registry keeps it. */
export type RegisteredQuery = StreamingQuery & { readonly checkpoint: string }

const invalid = (message: string): AnalysisError => new AnalysisError({ reason: "InvalidArgument", message })

/** Spark's `assertNotPartitioned` (`_LEGACY_ERROR_TEMP_1197`). */
const notPartitioned = (operation: string): AnalysisError =>
  new AnalysisError({
    reason: "UnsupportedOperation",
    errorClass: "_LEGACY_ERROR_TEMP_1197",
    message: `'${operation}' does not support partitioning.`
  })

/** The `sourceKey`s of a plan's streaming leaves, in a fixed walk order (source index = position). */
export const streamingSourceKeys = (plan: Plan.LogicalPlan): ReadonlyArray<Plan.StreamingRelation> => {
  const seen = new Map<string, Plan.StreamingRelation>()
  Plan.foreach(plan, (p) => {
    if (p._tag === "StreamingRelation" && !seen.has(p.sourceKey)) seen.set(p.sourceKey, p)
  })
  return [...seen.values()]
}

/**
 * Binds the plan's sources in their fixed walk order: an in-process source (`MemoryStream`) by
 * its key, any other through the format registry with `open`.
 */
const bindSources = <S>(
  state: State.SessionState,
  analyzed: Plan.LogicalPlan,
  checkpoint: string,
  open: (
    rel: Plan.StreamingRelation,
    memory: MicroBatchSource | undefined,
    ctx: SourceContext
  ) => Effect.Effect<S, AnalysisError | ConnectorError>
): Effect.Effect<ReadonlyArray<Binding<S>>, AnalysisError | ConnectorError> =>
  Effect.gen(function* () {
    const fs = state.checkpointFileSystem
    const relations = streamingSourceKeys(analyzed)
    const sources: Array<Binding<S>> = []
    for (let i = 0; i < relations.length; i++) {
      const rel = relations[i]
      const memory = state.memorySources.get(rel.sourceKey)
      if (memory === undefined && lookupSourceFormat(rel.format) === undefined) {
        return yield* invalid(`[DATA_SOURCE_NOT_FOUND] Failed to find the data source: ${rel.format}.`)
      }
      const source = yield* open(rel, memory, {
        options: rel.options,
        schema: T.struct(rel.output.map((a) => T.field(a.name, a.dataType, a.nullable))),
        metadataPath: fs.join(checkpoint, "sources", String(i)),
        conf: state.conf
      })
      sources.push({ key: rel.sourceKey, source })
    }
    return sources
  })

/** A micro-batch source: the in-process one, or the format's. */
const openMicroBatch = (
  rel: Plan.StreamingRelation,
  memory: MicroBatchSource | undefined,
  ctx: SourceContext
): Effect.Effect<MicroBatchSource, AnalysisError | ConnectorError> =>
  memory !== undefined ? Effect.succeed(memory) : lookupSourceFormat(rel.format)!.create(ctx)

/** A continuous source (Spark's `CONTINUOUS_READ` capability), or Spark's refusal. */
const openContinuous = (
  rel: Plan.StreamingRelation,
  memory: MicroBatchSource | undefined,
  ctx: SourceContext
): Effect.Effect<ContinuousSource, AnalysisError | ConnectorError> => {
  if (memory?.asContinuous !== undefined) return Effect.sync(memory.asContinuous)
  const continuous = memory === undefined ? lookupSourceFormat(rel.format)?.continuous : undefined
  if (continuous === undefined) {
    // Spark's `continuousProcessingUnsupportedByDataSourceError`.
    return Effect.fail(
      new AnalysisError({
        reason: "UnsupportedOperation",
        message: `Data source ${rel.format} does not support continuous processing.`
      })
    )
  }
  return continuous(ctx)
}

/**
 * Checks and starts a streaming query of `plan` in `state`'s session (see the module's doc for
 * the order of the checks); returns its handle once it runs in the session's scope.
 *
 * @since 0.1.0
 */
export const startQuery = (
  state: State.SessionState,
  plan: Plan.LogicalPlan,
  spec: StartSpec
): Effect.Effect<StreamingQuery, AnalysisError | CheckpointError | ConnectorError> =>
  Effect.gen(function* () {
    const fs = state.checkpointFileSystem
    const analyzed = yield* Effect.fromResult(QE.analyze(state, plan))
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
      return yield* invalid('The trigger interval cannot be negative or invalid: give a duration like "1 second".')
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
      if (spec.foreachBatchSink === undefined) {
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
    // continuously; a sink that declares it has none (Spark's V1 `FileStreamSink`) gets the
    // micro-batch engine's checks, then its refusal of the trigger.
    const formatName = spec.format ?? state.conf.get("spark.sql.sources.default") ?? "parquet"
    const sinkFormat = kind === "format" ? lookupSinkFormat(formatName) : undefined
    const noContinuousWrites = sinkFormat?.continuous === false
    // Spark only logs the global-watermark correctness check when its conf is off.
    const checkConf = {
      statefulOperatorCheckCorrectness:
        state.conf.get("spark.sql.streaming.statefulOperator.checkCorrectness.enabled") !== "false"
    }
    const unsupported =
      continuous && !noContinuousWrites
        ? checkForContinuous(analyzed, outputMode, checkConf)
        : checkForStreaming(analyzed, outputMode, checkConf)
    if (unsupported !== undefined) return yield* unsupported
    if (continuous && noContinuousWrites) {
      return yield* new AnalysisError({
        reason: "UnsupportedOperation",
        message: `Unknown type of trigger: ContinuousTrigger(${trigger.intervalMs})`
      })
    }

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
    const explicit = option(spec.options, "checkpointLocation")
    const confRoot = state.conf.get("spark.sql.streaming.checkpointLocation")
    const root = state.checkpointRoot ?? fs.join(tmpdir(), "tributary-checkpoints")
    const checkpoint = fs.resolve(
      explicit ?? (confRoot !== undefined ? fs.join(confRoot, queryName ?? randomUUID()) : fs.join(root, randomUUID()))
    )
    // Spark's `StreamingQueryManager.startQuery`: a new run of a query already active (the same
    // checkpoint, so the same id) stops the active run first, unless
    // `spark.sql.streaming.stopActiveRunOnRestart` is false, which refuses the new one.
    const stopActiveRun = state.conf.get("spark.sql.streaming.stopActiveRunOnRestart") !== "false"
    /** Stops the active runs `matches` picks (Spark's default), or refuses with `refusal`. */
    const stopActive = (matches: (q: RegisteredQuery) => boolean, refusal: (q: StreamingQuery) => string) =>
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
    // stop, and here also when the start itself fails after making it.
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

      const microBatchSources = continuous ? [] : yield* bindSources(state, analyzed, checkpoint, openMicroBatch)
      const continuousSources = continuous ? yield* bindSources(state, analyzed, checkpoint, openContinuous) : []

      const schema = PlanOutput.schemaOf(analyzed)
      let sink: Sink
      if (kind === "foreachBatch") sink = spec.foreachBatchSink!
      else if (kind === "foreach" && continuous) {
        // Continuous: every row reaches `process` as soon as its task has it.
        sink = { ...foreachSink(spec.foreach!), continuousWrite: foreachContinuousWrite(spec.foreach!, schema) }
      } else if (kind === "foreach") sink = foreachSink(spec.foreach!)
      else {
        if (sinkFormat === undefined) {
          return yield* invalid(
            `[DATA_SOURCE_NOT_FOUND] Failed to find the data source: ${formatName}. Available streaming sinks: ${sinkFormatNames().join(", ")}, foreach, foreachBatch.`
          )
        }
        if (!sinkFormat.supportedOutputModes.includes(outputMode)) {
          return yield* new AnalysisError({
            reason: "UnsupportedOperation",
            message: `Data source ${formatName} does not support ${outputMode} output mode`
          })
        }
        // Spark's `DataStreamWriter.normalizedParCols` (for V1 sinks, which take batch ids):
        // each partition column resolves to the name of an output column, by
        // `spark.sql.caseSensitive`. Sinks Spark writes through DataSource V2 ignore them.
        let partitionColumns = spec.partitionColumns
        if (sinkFormat.batchIdAware !== false && partitionColumns.length > 0) {
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
        sink = yield* sinkFormat.create({
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
      const common = {
        state,
        fs,
        id,
        runId: randomUUID(),
        name: queryName ?? null,
        checkpoint,
        analyzed,
        outputMode,
        trigger,
        sink,
        listeners: () => registry.listeners.slice(),
        deleteCheckpointOnStop: temporary,
        onTerminated
      }
      const execution = continuous
        ? yield* ContinuousExecution.make({ ...common, sources: continuousSources })
        : new MicroBatchExecution({ ...common, sources: microBatchSources, stateStore })
      const handle: RegisteredQuery = Object.assign(execution, { checkpoint })
      registry.active.set(execution.runId, handle)
      yield* execution.start(scope)
      return handle as StreamingQuery
    })
    return yield* launch.pipe(Effect.onError(() => (temporary ? Effect.ignore(fs.remove(checkpoint)) : Effect.void)))
  })
