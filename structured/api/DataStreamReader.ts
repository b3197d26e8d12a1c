/**
 * `spark.readStream`: Spark's `DataStreamReader`. `load()` is pure and returns the streaming
 * DataFrame at once (its schema comes from the format and the options); the source itself is
 * created when a query starts, so a bad option surfaces as an `AnalysisError` from `start()`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Session } from "tributary-streaming"
 * const program = Effect.gen(function* () {
 *   const spark = yield* Session
 *   const rates = spark.readStream.format("rate").option("rowsPerSecond", 10).load()
 *   return rates.columns   // ["timestamp", "value"]
 * })
 * ```
 * @since 0.1.0
 */
import type { Schema } from "effect"
import * as T from "../../core/DataType.ts"
import { AnalysisError } from "../../core/Errors.ts"
import * as E from "../../core/Expression.ts"
import * as Plan from "../../core/LogicalPlan.ts"
import { lookupSourceFormat, sourceFormatNames } from "../../core/Streaming.ts"
import { DataFrame } from "./DataFrame.ts"
import { type SchemaInput, toStructType } from "./DataFrameReader.ts"
import type { Row } from "./RowTypes.ts"
import { LEGACY_PATH_OPTION, pathOptionAndParameterError, setOption } from "./DataStreamWriter.ts"
import { confBool, type SessionState } from "../contracts/SessionState.ts"

let nextSourceId = 0

/**
 * The sources `format(...)` suggests: the built-in streaming sources; any other string names a
 * registered source (or, on a Spark Connect session, one of Spark's).
 *
 * @since 0.6.0
 */
export type StreamReadFormat =
  | "rate"
  | "rate-micro-batch"
  | "socket"
  | "kafka"
  | "kinesis"
  | "nexmark"
  | "parquet"
  | "json"
  | "csv"
  | "text"
  | "orc"
  | "avro"
  | (string & {})

/**
 * Spark's `DataStreamReader` (`spark.readStream`): describes a streaming source — `format(...)`
 * (`rate`, `socket`, `kafka`, `nexmark`, the file formats, or a registered one), `schema(...)`,
 * `option(k, v)` / `options({...})` — and `load()` (or a file-format shorthand) gives the
 * streaming DataFrame.
 *
 * @since 0.1.0
 */
export class DataStreamReader<R = Row> {
  readonly state: SessionState
  readonly source: string | undefined
  readonly extraOptions: Readonly<Record<string, string>>
  readonly userSchema: SchemaInput | undefined

  constructor(
    state: SessionState,
    source?: string,
    extraOptions: Readonly<Record<string, string>> = {},
    userSchema?: SchemaInput
  ) {
    this.state = state
    this.source = source
    this.extraOptions = extraOptions
    this.userSchema = userSchema
  }

  /** The source format: `rate`, `rate-micro-batch`, `json`, `csv`, `text`, `parquet`, `kafka`, `socket`, … */
  format(source: StreamReadFormat): DataStreamReader<R> {
    return new DataStreamReader(this.state, source, this.extraOptions, this.userSchema)
  }

  /** Sets an option; keys compare case-insensitively and a later one wins, as in Spark. */
  option(key: string, value: string | number | boolean): DataStreamReader<R> {
    return new DataStreamReader(this.state, this.source, setOption(this.extraOptions, key, String(value)), this.userSchema)
  }

  options(options: Readonly<Record<string, string | number | boolean>>): DataStreamReader<R> {
    let next = this.extraOptions
    for (const [k, v] of Object.entries(options)) next = setOption(next, k, String(v))
    return new DataStreamReader(this.state, this.source, next, this.userSchema)
  }

  /** The schema of the rows (file sources require one unless `spark.sql.streaming.schemaInference` is on). */
  schema<S extends Schema.Top>(schema: S): DataStreamReader<S["Type"]>
  schema(schema: T.StructType | string): DataStreamReader<Row>
  schema(schema: SchemaInput): DataStreamReader<any> {
    return new DataStreamReader(this.state, this.source, this.extraOptions, schema)
  }

  /**
   * The streaming DataFrame of the source (`path` for file sources). With a `path` option also
   * set, `load(path)` fails as Spark's does (SPARK-32516), unless
   * `spark.sql.legacy.pathOptionBehavior.enabled` is on (then `path` wins).
   */
  load(path?: string): DataFrame<R> {
    const hasPathOption = Object.keys(this.extraOptions).some((k) => k.toLowerCase() === "path")
    const pathConflict = path !== undefined && hasPathOption && !confBool(this.state, LEGACY_PATH_OPTION)
    const options = path === undefined || pathConflict ? this.extraOptions : setOption(this.extraOptions, "path", path)
    const name = this.source ?? this.state.conf.get("spark.sql.sources.default") ?? "parquet"
    /** A DataFrame whose actions fail with `error` (a builder never throws). */
    const failWith = (error: AnalysisError): DataFrame<R> =>
      new DataFrame<R>(
        this.state,
        {
          _tag: "StreamingRelation",
          planId: Plan.newPlanId(),
          format: name,
          sourceKey: `${name}-${nextSourceId++}`,
          options,
          output: []
        },
        error
      )
    const fail = (message: string, errorClass?: string): DataFrame<R> =>
      failWith(new AnalysisError({ reason: "InvalidArgument", message, errorClass }))
    if (pathConflict) return failWith(pathOptionAndParameterError("load"))
    const format = lookupSourceFormat(name)
    if (format === undefined) {
      return fail(
        `[DATA_SOURCE_NOT_FOUND] Failed to find the data source: ${name}. Available streaming sources: ${sourceFormatNames()
          .filter((n) => !n.includes("."))
          .join(", ")}.`,
        "DATA_SOURCE_NOT_FOUND"
      )
    }
    let user: T.StructType | undefined
    if (this.userSchema !== undefined) {
      const st = toStructType(this.userSchema)
      if (typeof st === "string") return fail(st)
      user = st
    }
    const schema = format.schema(user, options, this.state.conf)
    if (schema instanceof AnalysisError) return failWith(schema)
    return new DataFrame<R>(this.state, {
      _tag: "StreamingRelation",
      planId: Plan.newPlanId(),
      format: name,
      sourceKey: `${name}-${nextSourceId++}`,
      options,
      output: (schema as T.StructType).fields.map((f) => E.attribute(f.name, f.dataType, f.nullable)),
      userSchema: user
    })
  }

  /** `format("json").load(path)`. */
  json(path: string): DataFrame<R> {
    return this.format("json").load(path)
  }

  /** `format("csv").load(path)`. */
  csv(path: string): DataFrame<R> {
    return this.format("csv").load(path)
  }

  /** `format("text").load(path)`. */
  text(path: string): DataFrame<{ value: string }> {
    return this.format("text").load(path) as never
  }

  /** `format("parquet").load(path)`. */
  parquet(path: string): DataFrame<R> {
    return this.format("parquet").load(path)
  }

  /** `format("orc").load(path)`. */
  orc(path: string): DataFrame<R> {
    return this.format("orc").load(path)
  }
}
