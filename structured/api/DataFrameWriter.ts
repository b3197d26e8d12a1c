/**
 * `df.write`: Spark's `DataFrameWriter` for batch DataFrames. The builder is immutable and never
 * throws; `save` (and the `parquet`, `json`, `csv`, `text`, `avro`, `orc` shorthands) runs the
 * query and writes its rows through the format's registered batch writer (`core/Formats.ts`), or,
 * on a remote session, sends Spark Connect's `WriteOperation`.
 *
 * File formats write Spark's layout (`part-00000-<uuid>-c000.snappy.parquet` files, `key=value`
 * partition folders, `_SUCCESS`), so Spark reads what tributary writes and the other way round.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Session } from "tributary-streaming"
 * const program = Effect.gen(function* () {
 *   const spark = yield* Session
 *   const sales = spark.createDataFrame(
 *     [{ day: "2024-05-01", shop: "a", amount: 3 }, { day: "2024-05-02", shop: "b", amount: 5 }],
 *     Schema.Struct({ day: Schema.String, shop: Schema.String, amount: Schema.Int })
 *   )
 *   yield* sales.write.mode("overwrite").partitionBy("day").parquet("/tmp/sales")
 *   // /tmp/sales/day=2024-05-01/part-00000-<uuid>-c000.snappy.parquet, …, /tmp/sales/_SUCCESS
 *   return yield* (yield* spark.read.parquet("/tmp/sales")).count() // 2
 * })
 * ```
 * @since 0.5.0
 */
import { Effect, Result } from "effect"
import { schemaOf } from "../../core/analysis/PlanOutput.ts"
import * as T from "../../core/DataType.ts"
import { AnalysisError, type ConnectorError } from "../../core/Errors.ts"
import { type SaveMode as NormalizedSaveMode, batchWriteFormatNames, lookupBatchWriteFormat } from "../../core/Formats.ts"
import * as Plan from "../../core/LogicalPlan.ts"
import * as QE from "../execution/QueryExecution.ts"
import type { DataFrame } from "./DataFrame.ts"
import { LEGACY_PATH_OPTION, pathOptionAndParameterError, setOption } from "./DataStreamWriter.ts"
import type { ColumnName } from "./RowTypes.ts"
import * as State from "../contracts/SessionState.ts"

/**
 * The save modes `mode(...)` takes (Spark's `SaveMode` names; Spark also accepts `default` and any
 * letter case at run time, and so does tributary).
 *
 * @since 0.5.0
 */
export type SaveMode = "error" | "errorifexists" | "append" | "overwrite" | "ignore"

/**
 * The formats `format(...)` names: the built-in file formats, or any registered writer's name.
 *
 * @since 0.5.0
 */
export type WriteFormat = "parquet" | "json" | "csv" | "text" | "avro" | "orc" | (string & {})

interface WriterSpec {
  readonly format: string | undefined
  readonly mode: string
  readonly options: Readonly<Record<string, string>>
  readonly partitionColumns: ReadonlyArray<string>
}

/** Spark's `DataFrameWriter.mode(String)`: case-insensitive; `default` is `error`. */
const normalizeMode = (mode: string): NormalizedSaveMode | AnalysisError => {
  switch (mode.toLowerCase()) {
    case "overwrite":
      return "overwrite"
    case "append":
      return "append"
    case "ignore":
      return "ignore"
    case "error":
    case "errorifexists":
    case "default":
      return "error"
    default:
      return new AnalysisError({
        reason: "InvalidArgument",
        errorClass: "INVALID_SAVE_MODE",
        message: `[INVALID_SAVE_MODE] The specified save mode '${mode}' is invalid. Valid save modes include "append", "overwrite", "ignore", "error", "errorifexists", and "default".`
      })
  }
}

const optionOf = (options: Readonly<Record<string, string>>, key: string): string | undefined => {
  const k = key.toLowerCase()
  for (const [name, v] of Object.entries(options)) if (name.toLowerCase() === k) return v
  return undefined
}

const withoutOption = (options: Readonly<Record<string, string>>, key: string): Readonly<Record<string, string>> => {
  const k = key.toLowerCase()
  const out: Record<string, string> = {}
  for (const [name, v] of Object.entries(options)) if (name.toLowerCase() !== k) out[name] = v
  return out
}

/**
 * The writer behind `df.write`.
 *
 * @since 0.5.0
 */
export class DataFrameWriter<R> {
  readonly df: DataFrame<R>
  readonly spec: WriterSpec

  constructor(df: DataFrame<R>, spec?: WriterSpec) {
    this.df = df
    this.spec = spec ?? { format: undefined, mode: "error", options: {}, partitionColumns: [] }
  }

  private with(patch: Partial<WriterSpec>): DataFrameWriter<R> {
    return new DataFrameWriter(this.df, { ...this.spec, ...patch })
  }

  /** The output format: `parquet` (Spark's `spark.sql.sources.default`), `json`, `csv`, `text`, `avro`, `orc`, or any registered writer. */
  format(source: WriteFormat): DataFrameWriter<R> {
    return this.with({ format: source })
  }

  /**
   * What to do when the path exists: `error` / `errorifexists` (the default: fail with
   * `PATH_ALREADY_EXISTS`), `append`, `overwrite` (replace, once the new files are written) or
   * `ignore` (write nothing). An unknown mode fails `save` with `INVALID_SAVE_MODE`.
   */
  mode(mode: SaveMode): DataFrameWriter<R> {
    return this.with({ mode })
  }

  /** Sets an option (kept as a string); keys compare case-insensitively and a later one wins. */
  option(key: string, value: string | number | boolean): DataFrameWriter<R> {
    return this.with({ options: setOption(this.spec.options, key, String(value)) })
  }

  /** Sets several options. */
  options(options: Readonly<Record<string, string | number | boolean>>): DataFrameWriter<R> {
    let next = this.spec.options
    for (const [k, v] of Object.entries(options)) next = setOption(next, k, String(v))
    return this.with({ options: next })
  }

  /** Writes one `column=value` folder level per column, in this order (Hive-style partitioning). */
  partitionBy(...columns: ReadonlyArray<ColumnName<R>>): DataFrameWriter<R> {
    return this.with({ partitionColumns: columns })
  }

  /**
   * Runs the query and writes its rows to `path` (or the `path` option). With both set it fails
   * as Spark does (SPARK-32516), unless `spark.sql.legacy.pathOptionBehavior.enabled` is on.
   */
  save(path?: string): Effect.Effect<void, AnalysisError | ConnectorError> {
    return Effect.gen({ self: this }, function* () {
      const df = this.df
      const state = df.state
      const spec = this.spec
      if (df.buildError !== undefined) return yield* df.buildError
      const mode = normalizeMode(spec.mode)
      if (mode instanceof AnalysisError) return yield* mode
      let options = spec.options
      if (path !== undefined) {
        if (optionOf(options, "path") !== undefined && !State.confBool(state, LEGACY_PATH_OPTION)) {
          return yield* pathOptionAndParameterError("save")
        }
        options = setOption(options, "path", path)
      }
      const target = optionOf(options, "path")
      if (state.remote !== undefined) {
        return yield* state.remote.write(df.plan, {
          format: spec.format,
          mode,
          path: target,
          options: withoutOption(options, "path"),
          partitionColumns: spec.partitionColumns
        })
      }
      const analyzed = QE.analyze(state, df.plan)
      if (Result.isFailure(analyzed)) return yield* analyzed.failure
      // Spark's `Dataset.write` (CALL_ON_STREAMING_DATASET_UNSUPPORTED)
      if (Plan.isStreaming(analyzed.success)) {
        return yield* new AnalysisError({
          reason: "UnsupportedOperation",
          errorClass: "CALL_ON_STREAMING_DATASET_UNSUPPORTED",
          message:
            "[CALL_ON_STREAMING_DATASET_UNSUPPORTED] The method `write` can not be called on streaming Dataset/DataFrame."
        })
      }
      const formatName = spec.format ?? state.conf.get("spark.sql.sources.default") ?? "parquet"
      const format = lookupBatchWriteFormat(formatName)
      if (format === undefined) {
        return yield* new AnalysisError({
          reason: "InvalidArgument",
          errorClass: "DATA_SOURCE_NOT_FOUND",
          message: `[DATA_SOURCE_NOT_FOUND] Failed to find the data source: ${formatName}. Make sure the provider name is correct and the package is properly registered and compatible with your Spark version. (tributary writes: ${batchWriteFormatNames().join(", ")}.)`
        })
      }
      const schema = schemaOf(analyzed.success)
      // Spark's `PartitioningUtils.validatePartitionColumn` / `partitionColumnsSchema`: each
      // partition column names an output column, by `spark.sql.caseSensitive`.
      const caseSensitive = State.confBool(state, "spark.sql.caseSensitive")
      const partitionColumns: Array<string> = []
      for (const col of spec.partitionColumns) {
        const found = schema.fields.find((f) =>
          caseSensitive ? f.name === col : f.name.toLowerCase() === col.toLowerCase()
        )
        if (found === undefined) {
          return yield* new AnalysisError({
            reason: "UnresolvedColumn",
            errorClass: "_LEGACY_ERROR_TEMP_1155",
            message: `Partition column \`${col}\` not found in schema ${T.simpleString(schema)}.`
          })
        }
        partitionColumns.push(found.name)
      }
      yield* format.write({
        path: target,
        mode,
        schema,
        rows: Effect.map(QE.run(state, df.plan), (r) => r.rows),
        partitionColumns,
        options: withoutOption(options, "path"),
        conf: state.conf
      })
    })
  }

  /** `format("parquet").save(path)`: Snappy-compressed Parquet (option `compression`). */
  parquet(path: string): Effect.Effect<void, AnalysisError | ConnectorError> {
    return this.format("parquet").save(path)
  }

  /** `format("json").save(path)`: JSON Lines. */
  json(path: string): Effect.Effect<void, AnalysisError | ConnectorError> {
    return this.format("json").save(path)
  }

  /** `format("csv").save(path)`. */
  csv(path: string): Effect.Effect<void, AnalysisError | ConnectorError> {
    return this.format("csv").save(path)
  }

  /** `format("text").save(path)`: one line per row of the single string column. */
  text(path: string): Effect.Effect<void, AnalysisError | ConnectorError> {
    return this.format("text").save(path)
  }

  /** `format("avro").save(path)`: Avro object container files (Snappy by default, option `compression`). */
  avro(path: string): Effect.Effect<void, AnalysisError | ConnectorError> {
    return this.format("avro").save(path)
  }

  /** `format("orc").save(path)`. */
  orc(path: string): Effect.Effect<void, AnalysisError | ConnectorError> {
    return this.format("orc").save(path)
  }
}
