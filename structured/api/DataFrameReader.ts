/**
 * `spark.read`: Spark's `DataFrameReader` for bounded data (json, csv, parquet, text and any
 * registered batch format). The builder is immutable; `load` is an action because it lists
 * files and, without a schema, infers one from the data (as Spark does eagerly at `load`).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Session } from "tributary-streaming"
 * const program = Effect.gen(function* () {
 *   const spark = yield* Session
 *   const people = yield* spark.read.schema(Schema.Struct({ name: Schema.String, age: Schema.Int })).json("people.jsonl")
 *   const rows = yield* spark.read.option("header", true).option("inferSchema", true).csv("data.csv")
 *   return [yield* people.count(), yield* rows.count()]
 * })
 * ```
 * @since 0.1.0
 */
import { Effect, Schema as S } from "effect"
import * as T from "../../core/DataType.ts"
import { AnalysisError, type CheckpointError, type ConnectorError, type StateStoreError } from "../../core/Errors.ts"
import * as E from "../../core/Expression.ts"
import { lookupBatchFormat } from "../../core/Formats.ts"
import * as Plan from "../../core/LogicalPlan.ts"
import { structTypeOf } from "../../core/RowSchema.ts"
import * as StateReader from "../execution/StateReader.ts"
import { DataFrame } from "./DataFrame.ts"
import type { Row } from "./RowTypes.ts"
import { batchReadContext, type SessionState } from "../contracts/SessionState.ts"

/** A schema as the readers accept it: an Effect Schema, a `StructType`, or a DDL string (`"a INT, b STRING"`). */
export type SchemaInput = S.Top | T.StructType | string

/** Resolves a `SchemaInput` to a `StructType`, or says why it cannot. */
export const toStructType = (schema: SchemaInput): T.StructType | string => {
  if (typeof schema === "string") {
    return T.parseDDL(schema) ?? `[PARSE_SYNTAX_ERROR] Cannot parse the schema string: ${schema}`
  }
  if (S.isSchema(schema)) {
    return structTypeOf(schema) ?? "The schema has a part with no Spark type (functions, symbols, unions of different types)."
  }
  return schema as T.StructType
}

/**
 * The formats `format(...)` suggests: the built-in batch formats and the state data sources
 * (`statestore`, `state-metadata`); any other string names a registered format (or, on a Spark
 * Connect session, one of Spark's).
 *
 * @since 0.6.0
 */
export type ReadFormat =
  | "parquet"
  | "json"
  | "csv"
  | "text"
  | "orc"
  | "avro"
  | "kafka"
  | "nexmark"
  | "statestore"
  | "state-metadata"
  | (string & {})

/**
 * Spark's `DataFrameReader` (`spark.read`): reads a batch DataFrame from files or a registered
 * format — `format(...)`, `schema(...)`, `option(k, v)` / `options({...})`, then `load(paths)` or
 * a shorthand (`json`, `csv`, `parquet`, `orc`, `avro`, `text`, `table`), and the state data
 * sources (`statestore`, `state-metadata`).
 *
 * @since 0.1.0
 */
export class DataFrameReader<R = Row> {
  readonly state: SessionState
  readonly source: string
  readonly extraOptions: Readonly<Record<string, string>>
  readonly userSchema: SchemaInput | undefined

  constructor(
    state: SessionState,
    source = "parquet",
    extraOptions: Readonly<Record<string, string>> = {},
    userSchema?: SchemaInput
  ) {
    this.state = state
    this.source = source
    this.extraOptions = extraOptions
    this.userSchema = userSchema
  }

  /** The input format: `json`, `csv`, `parquet` (the default), `text`, or any registered one. */
  format(source: ReadFormat): DataFrameReader<R> {
    return new DataFrameReader(this.state, source, this.extraOptions, this.userSchema)
  }

  /** Sets an option (values are kept as strings, as Spark does). */
  option(key: string, value: string | number | boolean): DataFrameReader<R> {
    return new DataFrameReader(this.state, this.source, { ...this.extraOptions, [key]: String(value) }, this.userSchema)
  }

  /** Sets several options. */
  options(options: Readonly<Record<string, string | number | boolean>>): DataFrameReader<R> {
    const next: Record<string, string> = { ...this.extraOptions }
    for (const [k, v] of Object.entries(options)) next[k] = String(v)
    return new DataFrameReader(this.state, this.source, next, this.userSchema)
  }

  /** The schema of the data; an Effect Schema also types the rows. */
  schema<Sch extends S.Top>(schema: Sch): DataFrameReader<Sch["Type"]>
  schema(schema: T.StructType | string): DataFrameReader<Row>
  schema(schema: SchemaInput): DataFrameReader<any> {
    return new DataFrameReader(this.state, this.source, this.extraOptions, schema)
  }

  /** Reads `paths` (files, folders or globs) with the chosen format. */
  load(
    ...paths: ReadonlyArray<string>
  ): Effect.Effect<DataFrame<R>, AnalysisError | ConnectorError | CheckpointError | StateStoreError> {
    return Effect.gen({ self: this }, function* () {
      if (this.state.remote !== undefined) return yield* this.remoteRelation(paths)
      const stateSource = this.source.toLowerCase()
      if (stateSource === "statestore" || stateSource === "state-metadata") {
        const fs = this.state.checkpointFileSystem
        const provider = this.state.stateStoreProvider
        const table =
          stateSource === "state-metadata"
            ? yield* StateReader.readStateMetadata(fs, paths, this.extraOptions)
            : provider === undefined
              ? yield* new AnalysisError({
                  reason: "InvalidArgument",
                  message: "The statestore source needs the session's state store provider: build the session with Session.layer()."
                })
              : yield* StateReader.readStateStore(fs, provider, paths, this.extraOptions)
        const local: Plan.LocalRelation = {
          _tag: "LocalRelation",
          planId: Plan.newPlanId(),
          output: table.schema.fields.map((f) => E.attribute(f.name, f.dataType, f.nullable)),
          rows: table.rows,
          isStreaming: false
        }
        return new DataFrame<R>(this.state, local)
      }
      const format = lookupBatchFormat(this.source)
      if (format === undefined) {
        return yield* new AnalysisError({
          reason: "InvalidArgument",
          errorClass: "DATA_SOURCE_NOT_FOUND",
          message: `[DATA_SOURCE_NOT_FOUND] Failed to find the data source: ${this.source}. Please find packages at \`https://spark.apache.org/third-party-projects.html\`.`
        })
      }
      let user: T.StructType | undefined
      if (this.userSchema !== undefined) {
        const st = toStructType(this.userSchema)
        if (typeof st === "string") return yield* new AnalysisError({ reason: "InvalidArgument", message: st })
        user = st
      }
      const schema = yield* format.resolveSchema(paths, user, this.extraOptions, batchReadContext(this.state))
      const relation: Plan.DataSourceRelation = {
        _tag: "DataSourceRelation",
        planId: Plan.newPlanId(),
        format: this.source,
        paths,
        options: this.extraOptions,
        output: schema.fields.map((f) => E.attribute(f.name, f.dataType, f.nullable)),
        userSchema: user
      }
      return new DataFrame<R>(this.state, relation)
    })
  }

  /**
   * On a remote session the files are Spark's to find and read (they may be on the cluster's
   * storage only): the relation carries the format, paths, options and the user's schema, and
   * Spark infers the rest. Nothing is read here.
   */
  private remoteRelation(paths: ReadonlyArray<string>): Effect.Effect<DataFrame<R>, AnalysisError> {
    let user: T.StructType | undefined
    if (this.userSchema !== undefined) {
      const st = toStructType(this.userSchema)
      if (typeof st === "string") return Effect.fail(new AnalysisError({ reason: "InvalidArgument", message: st }))
      user = st
    }
    const relation: Plan.DataSourceRelation = {
      _tag: "DataSourceRelation",
      planId: Plan.newPlanId(),
      format: this.source,
      paths,
      options: this.extraOptions,
      output: (user?.fields ?? []).map((f) => E.attribute(f.name, f.dataType, f.nullable)),
      userSchema: user
    }
    return Effect.succeed(new DataFrame<R>(this.state, relation))
  }

  /** `format("json").load(paths)`: JSON Lines (or whole-file JSON with `multiLine`). */
  json(...paths: ReadonlyArray<string>): Effect.Effect<DataFrame<R>, AnalysisError | ConnectorError | CheckpointError | StateStoreError> {
    return this.format("json").load(...paths)
  }

  /** `format("csv").load(paths)`. */
  csv(...paths: ReadonlyArray<string>): Effect.Effect<DataFrame<R>, AnalysisError | ConnectorError | CheckpointError | StateStoreError> {
    return this.format("csv").load(...paths)
  }

  /** `format("parquet").load(paths)`. */
  parquet(...paths: ReadonlyArray<string>): Effect.Effect<DataFrame<R>, AnalysisError | ConnectorError | CheckpointError | StateStoreError> {
    return this.format("parquet").load(...paths)
  }

  /** `format("orc").load(paths)`: ORC files, their schema read from the files' footers. */
  orc(...paths: ReadonlyArray<string>): Effect.Effect<DataFrame<R>, AnalysisError | ConnectorError | CheckpointError | StateStoreError> {
    return this.format("orc").load(...paths)
  }

  /** `format("text").load(paths)`: one row per line, in a column `value`. */
  text(...paths: ReadonlyArray<string>): Effect.Effect<DataFrame<{ value: string }>, AnalysisError | ConnectorError | CheckpointError | StateStoreError> {
    return this.format("text").load(...paths) as never
  }
}
