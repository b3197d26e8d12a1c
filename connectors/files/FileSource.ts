/**
 * What every file format shares, so each format only says how to infer a schema from its files
 * and how to read one file: listing and partition discovery, the user's schema versus the
 * discovered partition columns (Spark's `DataSource.getOrInferFileFormatSchema` and
 * `PartitioningUtils.mergeDataAndPartitionSchema`), nullability (file sources read every column
 * as nullable), skipping empty files, and putting partition values into the rows.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as T from "../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import type { BatchFormat, Options } from "../../core/Formats.ts"
import type { InternalRow } from "../../core/Row.ts"
import * as DuckDB from "../../state/DuckDB.ts"
import { type InputFile, listFiles } from "./FileListing.ts"
import { asNullable, checkSupportedTypes } from "./FileSourceOptions.ts"

/** Reads the data columns of one file, with the format's resource `R` (see `withResource`). */
export type FileReader<R> = (resource: R, file: InputFile) => Effect.Effect<ReadonlyArray<InternalRow>, ConnectorError>

/** One file format: its options, its inference and its per-file reader. */
export interface FileFormatSpec<O, R> {
  /** The registry name (`json`). */
  readonly name: string
  /** The name Spark's messages use (`JSON`). */
  readonly title: string
  readonly parseOptions: (options: Options) => Effect.Effect<O, AnalysisError>
  /** Spark's `FileFormat.supportDataType`. */
  readonly supports: (t: T.DataType) => boolean
  /** Checks a user-given data schema (partition columns removed) against the options. */
  readonly checkUserSchema: (dataSchema: T.StructType, options: O) => Effect.Effect<void, AnalysisError>
  /**
   * Runs `use` with what inference and reading need, released afterwards: a DuckDB connection
   * (`duckDBResource`) or nothing (`noResource`).
   */
  readonly withResource: <A, E>(use: (resource: R) => Effect.Effect<A, E>) => Effect.Effect<A, E | ConnectorError>
  /** Infers the data schema from the files (all of them, including empty ones; never none). */
  readonly inferSchema: (
    resource: R,
    files: ReadonlyArray<InputFile>,
    options: O
  ) => Effect.Effect<T.StructType, AnalysisError | ConnectorError>
  /** Whether a read of no files can still have a schema without the user's (text: `value`). */
  readonly schemaWithoutFiles?: T.StructType
  /** Compiles the reader of `dataSchema` once per read. */
  readonly makeReader: (dataSchema: T.StructType, options: O) => Effect.Effect<FileReader<R>, AnalysisError>
}

/** For formats that read files directly: no resource. */
export const noResource = <A, E>(use: (resource: undefined) => Effect.Effect<A, E>): Effect.Effect<A, E> =>
  use(undefined)

/** For formats read by DuckDB: a fresh in-memory database for one inference or read. */
export const duckDBResource =
  (connector: string) =>
  <A, E>(use: (c: DuckDB.Connection) => Effect.Effect<A, E>): Effect.Effect<A, E | ConnectorError> =>
    DuckDB.withMemory(use).pipe(
      Effect.mapError((e) => (e instanceof DuckDB.DuckDBFailure ? toConnectorError(connector)(e) : (e as E)))
    )

/** An `AnalysisError` met while reading becomes the `ConnectorError` the read contract allows. */
export const toConnectorError =
  (connector: string) =>
  (e: AnalysisError | ConnectorError | DuckDB.DuckDBFailure): ConnectorError => {
    if (e instanceof ConnectorError) return e
    if (e instanceof AnalysisError) {
      return new ConnectorError({ connector, domain: "user", retryable: false, message: e.message, cause: e })
    }
    return new ConnectorError({
      connector,
      domain: "internal",
      retryable: false,
      message: `DuckDB failed: ${e.message}`,
      cause: e
    })
  }

const lower = (s: string): string => s.toLowerCase()

/** The rows of several files as one array, sized once. */
const concatRows = (parts: ReadonlyArray<ReadonlyArray<InternalRow>>): ReadonlyArray<InternalRow> => {
  let total = 0
  for (const p of parts) total += p.length
  const out = new Array<InternalRow>(total)
  let k = 0
  for (const p of parts) for (let i = 0; i < p.length; i++) out[k++] = p[i]
  return out
}

/**
 * Spark's `PartitioningUtils.mergeDataAndPartitionSchema`: a partition column that is also a
 * data column keeps the data column's place with the partition column's type; the others are
 * appended.
 */
export const mergeDataAndPartitionSchema = (data: T.StructType, partitions: T.StructType): T.StructType => {
  const byName = new Map(partitions.fields.map((f) => [lower(f.name), f] as const))
  const fields = data.fields.map((f) => byName.get(lower(f.name)) ?? f)
  const inData = new Set(data.fields.map((f) => lower(f.name)))
  for (const p of partitions.fields) if (!inData.has(lower(p.name))) fields.push(p)
  return T.struct(fields)
}

/** Spark's `UNABLE_TO_INFER_SCHEMA`. */
export const unableToInferSchema = (title: string): AnalysisError =>
  new AnalysisError({
    reason: "SchemaRequired",
    errorClass: "UNABLE_TO_INFER_SCHEMA",
    message: `[UNABLE_TO_INFER_SCHEMA] Unable to infer schema for ${title}. It must be specified manually.`
  })

/** Builds the `BatchFormat` of a file format. */
export const makeFileFormat = <O, R>(spec: FileFormatSpec<O, R>): BatchFormat => ({
  name: spec.name,

  resolveSchema: (paths, userSchema, options, context) =>
    Effect.gen(function* () {
      const opts = yield* spec.parseOptions(options)
      const index = yield* listFiles(spec.name, paths, options, userSchema, context?.ignoreSinkMetadata === true)
      // Spark's `DataSource.resolveRelation` reads a sink's folder (its `MetadataLogFileIndex`
      // branch) with the data schema as given or inferred; any other folder `asNullable`
      const nullable = (s: T.StructType): T.StructType => (index.fromSinkLog ? s : asNullable(s))
      const partNames = new Set(index.partitionSchema.fields.map((f) => lower(f.name)))
      if (userSchema !== undefined) {
        // Spark's `SchemaUtils.checkSchemaColumnNameDuplication` in `DataSource.resolveRelation`
        // (case-insensitive: spark.sql.caseSensitive is false by default), SPARK-20460
        const names = new Set<string>()
        for (const f of userSchema.fields) {
          const l = lower(f.name)
          if (names.has(l)) {
            return yield* Effect.fail(
              new AnalysisError({
                reason: "InvalidArgument",
                errorClass: "COLUMN_ALREADY_EXISTS",
                message: `[COLUMN_ALREADY_EXISTS] The column \`${l}\` already exists. Choose another name or rename the existing column.`
              })
            )
          }
          names.add(l)
        }
        // Spark's `DataSourceUtils.verifySchema` checks the data columns, not the partition ones
        const data = T.struct(userSchema.fields.filter((f) => !partNames.has(lower(f.name))))
        yield* checkSupportedTypes(spec.title, data, spec.supports)
        yield* spec.checkUserSchema(data, opts)
        return nullable(T.struct([...data.fields, ...index.partitionSchema.fields]))
      }
      if (index.files.length === 0) {
        if (spec.schemaWithoutFiles !== undefined) {
          return nullable(mergeDataAndPartitionSchema(spec.schemaWithoutFiles, index.partitionSchema))
        }
        return yield* Effect.fail(unableToInferSchema(spec.title))
      }
      const data = yield* spec.withResource((r) => spec.inferSchema(r, index.files, opts))
      return nullable(mergeDataAndPartitionSchema(data, index.partitionSchema))
    }),

  read: (paths, schema, options, context) =>
    Effect.gen(function* () {
      const opts = yield* spec.parseOptions(options)
      const index = yield* listFiles(spec.name, paths, options, schema, context?.ignoreSinkMetadata === true)
      const partIndex = new Map(index.partitionSchema.fields.map((f, i) => [lower(f.name), i] as const))
      // where each output column comes from: >= 0 a data column, < 0 partition column -(i + 1)
      const sources: Array<number> = []
      const dataFields: Array<T.StructField> = []
      for (const f of schema.fields) {
        const p = partIndex.get(lower(f.name))
        if (p !== undefined) sources.push(-(p + 1))
        else {
          sources.push(dataFields.length)
          dataFields.push(f)
        }
      }
      const dataSchema = T.struct(dataFields)
      const reader = yield* spec.makeReader(dataSchema, opts)
      const partitioned = index.partitionSchema.fields.length > 0
      return yield* spec.withResource((resource) =>
        Effect.gen(function* () {
          const out: Array<InternalRow> = []
          // unpartitioned: each file's rows as the reader returned them, joined once at the end
          const parts: Array<ReadonlyArray<InternalRow>> = []
          for (const file of index.files) {
            // Spark's `PartitioningAwareFileIndex.isNonEmptyFile`: empty files yield nothing
            if (file.size === 0) continue
            const rows = yield* reader(resource, file)
            if (!partitioned) {
              if (rows.length > 0) parts.push(rows)
              continue
            }
            const pv = file.partitionValues
            for (let i = 0; i < rows.length; i++) {
              const r = rows[i]
              const full = new Array<unknown>(sources.length)
              for (let j = 0; j < sources.length; j++) {
                const s = sources[j]
                full[j] = s >= 0 ? r[s] : pv[-s - 1]
              }
              out.push(full)
            }
          }
          if (!partitioned) return parts.length === 1 ? parts[0] : concatRows(parts)
          return out as ReadonlyArray<InternalRow>
        })
      )
    }).pipe(Effect.mapError(toConnectorError(spec.name)))
})
