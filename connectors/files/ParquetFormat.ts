/**
 * The `parquet` batch format, read with DuckDB's `read_parquet` (path as a parameter, Hive
 * partitioning off: partition columns come from tributary's discovery, as in Spark). DuckDB's
 * types map to Spark's (`state/DuckDB.ts` `sparkTypeOf`). The schema comes from the first file,
 * or from all files merged with `mergeSchema`; columns are matched by name, case-insensitively
 * (`spark.sql.caseSensitive=false`), a column a file lacks reads as null, and a column whose
 * type differs (beyond Spark 4's int-to-long and int-to-double widening) fails the read.
 *
 * @example
 * ```ts
 * import { ParquetFormat } from "./ParquetFormat.ts"
 * ParquetFormat.resolveSchema(["/warehouse/events"], undefined, { mergeSchema: "true" })
 * ```
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as T from "../../core/DataType.ts"
import { type AnalysisError, ConnectorError } from "../../core/Errors.ts"
import type { BatchFormat, Options } from "../../core/Formats.ts"
import type { InternalRow } from "../../core/Row.ts"
import type * as DuckDB from "../../state/DuckDB.ts"
import { type InputFile, qualifiedName } from "./FileListing.ts"
import { duckDBResource, type FileReader, makeFileFormat } from "./FileSource.ts"
import { OptionReader, parseOptions, sqlType } from "./FileSourceOptions.ts"

interface ParquetOptions {
  readonly mergeSchema: boolean
}

const parseParquetOptions = (options: Options): Effect.Effect<ParquetOptions, AnalysisError> =>
  parseOptions(() => {
    const r = new OptionReader("parquet", options)
    return { mergeSchema: r.bool("mergeSchema", false) }
  })

/** Spark's `ParquetFileFormat.supportDataType`: atomic types and structs/arrays/maps of them. */
const supports = (t: T.DataType): boolean => {
  switch (t._tag) {
    case "null":
    case "calendarInterval":
      return false
    case "struct":
      return t.fields.every((f) => supports(f.dataType))
    case "array":
      return supports(t.elementType)
    case "map":
      return supports(t.keyType) && supports(t.valueType)
    default:
      return true
  }
}

/**
 * A DuckDB failure while reading `path`, as a `ConnectorError` naming the file. Missing or
 * unreadable files are the environment's fault (`external`); anything else DuckDB rejects (a
 * corrupt footer, a file that is not Parquet) is the data's (`user`).
 */
export const readFailure = (path: string, cause: unknown): ConnectorError => {
  const detail = cause instanceof Error ? cause.message : String(cause)
  const external = /permission denied|no such file|cannot open|could not open|i\/o error|IO Error/i.test(detail)
  return new ConnectorError({
    connector: "parquet",
    domain: external ? "external" : "user",
    retryable: false,
    message: `[FAILED_READ_FILE.NO_HINT] Encountered error while reading file ${qualifiedName(path)}. ${detail}`,
    cause
  })
}

/**
 * A path as a DuckDB glob that matches only that file: DuckDB's file functions expand `*`, `?`
 * and `[...]`, so each of those characters is wrapped in a character class (`x[1]` becomes
 * `x[[]1]`), which DuckDB reads literally.
 */
export const duckLiteralPath = (path: string): string => path.replace(/[*?[]/g, (c) => `[${c}]`)

const SELECT = "SELECT * FROM read_parquet(?, hive_partitioning = false)"

/** The schema of one Parquet file, as Spark types. */
const fileSchema = (c: DuckDB.Connection, file: InputFile): Effect.Effect<T.StructType, ConnectorError> =>
  c.query(`${SELECT} LIMIT 0`, [duckLiteralPath(file.path)]).pipe(
    Effect.mapError((e) => readFailure(file.path, e)),
    Effect.map((r) => T.struct(r.columns.map((n, i) => T.field(n, r.types[i], true))))
  )

const mergeError = (message: string): ConnectorError =>
  new ConnectorError({ connector: "parquet", domain: "user", retryable: false, message })

/** Spark's `StructType.merge` for `mergeSchema`: fields by name, equal types (recursively). */
export const mergeTypes = (a: T.DataType, b: T.DataType, name: string): T.DataType | ConnectorError => {
  if (a._tag === "struct" && b._tag === "struct") {
    const fields = [...a.fields]
    for (const fb of b.fields) {
      const i = fields.findIndex((f) => f.name === fb.name)
      if (i < 0) fields.push(fb)
      else {
        const t = mergeTypes(fields[i].dataType, fb.dataType, fb.name)
        if (t instanceof ConnectorError) return t
        fields[i] = T.field(fb.name, t, true)
      }
    }
    return T.struct(fields)
  }
  if (a._tag === "array" && b._tag === "array") {
    const e = mergeTypes(a.elementType, b.elementType, name)
    return e instanceof ConnectorError ? e : T.array(e, true)
  }
  if (a._tag === "map" && b._tag === "map") {
    const k = mergeTypes(a.keyType, b.keyType, name)
    if (k instanceof ConnectorError) return k
    const v = mergeTypes(a.valueType, b.valueType, name)
    return v instanceof ConnectorError ? v : T.map(k, v, true)
  }
  if (T.sameType(a, b)) return a
  return mergeError(
    `[CANNOT_MERGE_SCHEMAS] Failed merging schemas: failed to merge field '${name}': incompatible data types "${sqlType(a)}" and "${sqlType(b)}".`
  )
}

const inferSchema = (
  c: DuckDB.Connection,
  files: ReadonlyArray<InputFile>,
  o: ParquetOptions
): Effect.Effect<T.StructType, ConnectorError> =>
  Effect.gen(function* () {
    if (!o.mergeSchema) return yield* fileSchema(c, files[0])
    let merged: T.DataType = T.struct([])
    for (const file of files) {
      const s = yield* fileSchema(c, file)
      const m = mergeTypes(merged, s, "")
      if (m instanceof ConnectorError) return yield* Effect.fail(m)
      merged = m
    }
    return merged as T.StructType
  })

type Adapt = (v: unknown) => unknown

/**
 * How a value of the file's type becomes a value of the wanted type: identity for equal types,
 * Spark 4's Parquet type widening (int to long, int to double), structs by field name
 * (case-insensitive, missing fields null). A string describes a mismatch.
 */
const adapt = (from: T.DataType, to: T.DataType): Adapt | string => {
  switch (to._tag) {
    case "struct": {
      if (from._tag !== "struct") return `${sqlType(from)}`
      const parts: Array<readonly [number, Adapt]> = []
      for (const f of to.fields) {
        const i = matchField(
          from.fields.map((x) => x.name),
          f.name
        )
        if (typeof i === "string") return i
        if (i < 0) parts.push([-1, () => null])
        else {
          const a = adapt(from.fields[i].dataType, f.dataType)
          if (typeof a === "string") return a
          parts.push([i, a])
        }
      }
      return (v) => {
        if (v === null) return null
        const r = v as ReadonlyArray<unknown>
        return parts.map(([i, a]) => (i < 0 ? null : a(r[i])))
      }
    }
    case "array": {
      if (from._tag !== "array") return sqlType(from)
      const e = adapt(from.elementType, to.elementType)
      if (typeof e === "string") return e
      return (v) => (v === null ? null : (v as ReadonlyArray<unknown>).map(e))
    }
    case "map": {
      if (from._tag !== "map") return sqlType(from)
      const k = adapt(from.keyType, to.keyType)
      if (typeof k === "string") return k
      const x = adapt(from.valueType, to.valueType)
      if (typeof x === "string") return x
      return (v) => {
        if (v === null) return null
        const out = new Map<unknown, unknown>()
        for (const [kk, vv] of v as Map<unknown, unknown>) out.set(k(kk), x(vv))
        return out
      }
    }
    default:
      if (T.sameType(from, to)) return (v) => v
      if (from._tag === "integer" && (to._tag === "long" || to._tag === "double")) return (v) => v
      return sqlType(from)
  }
}

/** The index of `name` among `names`: exact first, then the one case-insensitive match. */
const matchField = (names: ReadonlyArray<string>, name: string): number | string => {
  const exact = names.indexOf(name)
  if (exact >= 0) return exact
  const l = name.toLowerCase()
  const found = names.map((n, i) => [n, i] as const).filter(([n]) => n.toLowerCase() === l)
  if (found.length > 1) {
    return `ambiguous: the file has ${found.map(([n]) => `\`${n}\``).join(", ")} for \`${name}\` in case-insensitive mode`
  }
  return found.length === 1 ? found[0][1] : -1
}

const makeReader = (dataSchema: T.StructType): Effect.Effect<FileReader<DuckDB.Connection>> =>
  Effect.succeed((c: DuckDB.Connection, file: InputFile) =>
    Effect.gen(function* () {
      const r = yield* c
        .query(SELECT, [duckLiteralPath(file.path)])
        .pipe(Effect.mapError((e) => readFailure(file.path, e)))
      const plan: Array<readonly [number, Adapt]> = []
      for (const f of dataSchema.fields) {
        const i = matchField(r.columns, f.name)
        const problem = typeof i === "string" ? i : i < 0 ? undefined : adapt(r.types[i], f.dataType)
        if (typeof problem === "string" || typeof i === "string") {
          const actual = typeof i === "number" && i >= 0 ? `, actual type "${problem}"` : `: ${problem}`
          return yield* Effect.fail(
            new ConnectorError({
              connector: "parquet",
              domain: "user",
              retryable: false,
              message: `[FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH] Error while reading file ${qualifiedName(file.path)}. Data type mismatches when reading Parquet column \`${f.name}\`. Expected Spark type "${sqlType(f.dataType)}"${actual}.`
            })
          )
        }
        plan.push(i < 0 ? [-1, () => null] : [i, problem as Adapt])
      }
      const rows = r.rows
      const out = new Array<InternalRow>(rows.length)
      const n = plan.length
      for (let k = 0; k < rows.length; k++) {
        const src = rows[k]
        const row = new Array<unknown>(n)
        for (let j = 0; j < n; j++) {
          const [i, a] = plan[j]
          row[j] = i < 0 ? null : a(src[i])
        }
        out[k] = row
      }
      return out as ReadonlyArray<InternalRow>
    })
  )

/** The `parquet` format. */
export const ParquetFormat: BatchFormat = makeFileFormat<ParquetOptions, DuckDB.Connection>({
  name: "parquet",
  title: "Parquet",
  parseOptions: parseParquetOptions,
  supports,
  checkUserSchema: () => Effect.void,
  withResource: duckDBResource("parquet"),
  inferSchema,
  makeReader
})
