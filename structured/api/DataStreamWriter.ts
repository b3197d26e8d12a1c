/**
 * `df.writeStream`: Spark's `DataStreamWriter`. The builder is immutable; `start()` checks the
 * query (output mode, trigger, unsupported operations, sink options, checkpoint), starts it in
 * the session's scope and returns its `StreamingQuery` handle.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { MemoryStream, Session, Trigger } from "tributary-streaming"
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
import { Effect } from "effect"
import { AnalysisError, type CheckpointError, type ConnectorError } from "../../core/Errors.ts"
import * as E from "../../core/Expression.ts"
import { option } from "../../core/Formats.ts"
import * as Plan from "../../core/LogicalPlan.ts"
import type { OutputMode, Sink } from "../../core/Streaming.ts"
import { Trigger } from "../../core/Trigger.ts"
import * as State from "../contracts/SessionState.ts"
import type { StreamingQuery } from "../contracts/StreamingQuery.ts"
import { callUser, type ForeachWriter, userFailure } from "../execution/ForeachSink.ts"
import * as QueryStart from "../execution/QueryStart.ts"
import { DataFrame } from "./DataFrame.ts"
import { attachQueryDisplay } from "./Display.ts"

export type { ForeachWriter } from "../execution/ForeachSink.ts"

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

/**
 * The sinks `format(...)` suggests: the built-in streaming sinks; any other string names a
 * registered sink (or, on a Spark Connect session, one of Spark's).
 *
 * @since 0.6.0
 */
export type StreamWriteFormat =
  | "console"
  | "memory"
  | "noop"
  | "kafka"
  | "parquet"
  | "json"
  | "csv"
  | "text"
  | "orc"
  | "avro"
  | (string & {})

/**
 * Spark's `DataStreamWriter` (`df.writeStream`): where and how a streaming DataFrame's results
 * go — `format(...)` (a sink), `outputMode(...)`, `trigger(...)`, `option(k, v)` (including
 * `checkpointLocation`), `queryName`, `partitionBy`, `foreach` / `foreachBatch` — and `start()`
 * runs it as a `StreamingQuery`.
 *
 * @since 0.1.0
 */
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
  format(source: StreamWriteFormat): DataStreamWriter<R> {
    return this.with({ format: source })
  }

  /**
   * `append` (the default), `update` or `complete`. Spark reads the mode in any letter case; the
   * type takes lower case, capitalised (`Append`, as Spark's `OutputMode.Append()`) and upper case.
   */
  outputMode(mode: OutputMode | Capitalize<OutputMode> | Uppercase<OutputMode>): DataStreamWriter<R> {
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
    if (option(this.spec.options, "path") !== undefined && !State.confBool(this.df.state, LEGACY_PATH_OPTION)) {
      return Effect.fail(pathOptionAndParameterError("start"))
    }
    return startQuery(this.df, { ...this.spec, options: setOption(this.spec.options, "path", path) })
  }
}

/** Spark's `SQLConf.LEGACY_PATH_OPTION_BEHAVIOR`. */
export const LEGACY_PATH_OPTION = "spark.sql.legacy.pathOptionBehavior.enabled"

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

/**
 * Starts the writer's query: a remote session hands it to Spark (which runs its own checks);
 * otherwise the engine checks and starts it (`execution/QueryStart.ts`), and the handle gets
 * the notebook display (`query[Symbol.for("Jupyter.display")]()`).
 */
const startQuery = <R>(
  df: DataFrame<R>,
  spec: WriterSpec<unknown>
): Effect.Effect<StreamingQuery, AnalysisError | CheckpointError | ConnectorError> =>
  Effect.gen(function* () {
    const state = df.state
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
    const query = yield* QueryStart.startQuery(state, df.plan, {
      format: spec.format,
      outputMode: spec.outputMode,
      trigger: spec.trigger,
      queryName: spec.queryName,
      options: spec.options,
      partitionColumns: spec.partitionColumns,
      foreachBatchSink: spec.foreachBatch == null ? undefined : foreachBatchSink(state, spec.foreachBatch),
      foreach: spec.foreach
    })
    return attachQueryDisplay(query)
  })
