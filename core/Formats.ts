/**
 * The format registry: connectors register the batch formats (`spark.read.format(name)`) and
 * batch writers (`df.write.format(name)`) they provide under Spark's names; the session looks
 * them up. A connector is a folder plus one
 * registry line in the composition root (`mod.ts`), so nothing in `structured/` changes when
 * one is added.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import type { StructType } from "./DataType.ts"
import type { AnalysisError, ConnectorError } from "./Errors.ts"
import type { InternalRow } from "./Row.ts"

/** Options as Spark passes them: case-insensitive keys, string values. */
export type Options = Readonly<Record<string, string>>

/** What a batch read takes from the session's conf. */
export interface BatchReadContext {
  /**
   * Spark's `spark.sql.streaming.fileStreamSink.ignoreMetadata` (SPARK-35565): a folder written
   * by the streaming file sink is listed as any folder, not through its `_spark_metadata` log.
   */
  readonly ignoreSinkMetadata?: boolean
}

/** A bounded (batch) format: `json`, `csv`, `parquet`, `text`, … */
export interface BatchFormat {
  readonly name: string
  /**
   * The schema of the data at `paths`: the user's schema checked against the options, or one
   * inferred from the data (Spark's rules for the format). Fails with `AnalysisError`
   * (`PathNotFound`, a bad option) or `ConnectorError` (unreadable data).
   */
  readonly resolveSchema: (
    paths: ReadonlyArray<string>,
    userSchema: StructType | undefined,
    options: Options,
    context?: BatchReadContext
  ) => Effect.Effect<StructType, AnalysisError | ConnectorError>
  /** Reads all rows at `paths` as internal rows of `schema` (the result of `resolveSchema`). */
  readonly read: (
    paths: ReadonlyArray<string>,
    schema: StructType,
    options: Options,
    context?: BatchReadContext
  ) => Effect.Effect<ReadonlyArray<InternalRow>, ConnectorError>
}

const batchFormats = new Map<string, BatchFormat>()

/** Registers a batch format under its name (lower case); a later registration replaces an earlier one. */
export const registerBatchFormat = (format: BatchFormat): void => {
  batchFormats.set(format.name.toLowerCase(), format)
}

export const lookupBatchFormat = (name: string): BatchFormat | undefined => batchFormats.get(name.toLowerCase())

export const batchFormatNames = (): ReadonlyArray<string> => [...batchFormats.keys()].sort()

/**
 * Spark's `SaveMode`, as `df.write.mode(...)` normalises it: `error` stands for `error`,
 * `errorifexists` and `default` (Spark's `SaveMode.ErrorIfExists`).
 */
export type SaveMode = "error" | "append" | "overwrite" | "ignore"

/** What `df.write…save(path)` asks a batch writer to do. */
export interface BatchWriteRequest {
  /** The output location (the `path` option or `save(path)`'s argument); `undefined` when neither is set. */
  readonly path: string | undefined
  readonly mode: SaveMode
  /** The schema of the rows `rows` gives (the analyzed plan's output). */
  readonly schema: StructType
  /**
   * Runs the query and gives its rows. A writer calls it only when it writes (Spark runs nothing
   * for `ignore` on an existing path, and checks `error` before running the query).
   */
  readonly rows: Effect.Effect<ReadonlyArray<InternalRow>, AnalysisError | ConnectorError>
  /** `partitionBy` columns, already matched to names of `schema` (Spark's `normalizePartitionSpec`). */
  readonly partitionColumns: ReadonlyArray<string>
  readonly options: Options
  /** The session's conf (for keys such as `spark.sql.sources.partitionOverwriteMode`). */
  readonly conf: ReadonlyMap<string, string>
}

/** A batch writer (Spark's `CreatableRelationProvider` / `FileFormat.prepareWrite`): `parquet`, `json`, `avro`, … */
export interface BatchWriteFormat {
  readonly name: string
  /** Writes the request; fails with `AnalysisError` (bad options, an existing path) or `ConnectorError` (I/O). */
  readonly write: (request: BatchWriteRequest) => Effect.Effect<void, AnalysisError | ConnectorError>
}

const batchWriteFormats = new Map<string, BatchWriteFormat>()

/** Registers a batch writer under its name (lower case); a later registration replaces an earlier one. */
export const registerBatchWriteFormat = (format: BatchWriteFormat): void => {
  batchWriteFormats.set(format.name.toLowerCase(), format)
}

export const lookupBatchWriteFormat = (name: string): BatchWriteFormat | undefined =>
  batchWriteFormats.get(name.toLowerCase())

export const batchWriteFormatNames = (): ReadonlyArray<string> => [...batchWriteFormats.keys()].sort()

/** Looks an option up the way Spark does: keys are case-insensitive. */
export const option = (options: Options, key: string): string | undefined => {
  const k = key.toLowerCase()
  for (const [name, value] of Object.entries(options)) if (name.toLowerCase() === k) return value
  return undefined
}
