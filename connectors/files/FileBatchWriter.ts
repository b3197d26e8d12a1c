/**
 * Batch writes of the file formats (`df.write.format("parquet").mode(...).save(path)`): Spark's
 * `InsertIntoHadoopFsRelationCommand` with `FileFormatWriter` and the `FileOutputCommitter`
 * commit protocol, over a format's `FileWriterFormat`.
 *
 * - Modes as `InsertIntoHadoopFsRelationCommand` decides them: `error` fails with
 *   `PATH_ALREADY_EXISTS` when the path exists (before the query runs), `ignore` does nothing
 *   then, `append` adds files, `overwrite` replaces the folder's contents (with
 *   `partitionOverwriteMode` `dynamic` — the option or `spark.sql.sources.partitionOverwriteMode`
 *   — only the partition folders this write produces).
 * - The layout of `PartitionedWriter.ts` (`key=value` folders, `part-00000-<uuid>-c000<ext>`),
 *   and an empty `_SUCCESS` file once the job commits.
 * - Nothing partial is visible: the files are written under `<path>/_temporary/<job>/`, which
 *   readers skip (names starting with `_`), and moved into place only after every file is
 *   written; a failed write removes them. Unlike Spark, which deletes the old contents of an
 *   `overwrite` before it runs the job, the old contents go only once the new files are all
 *   written.
 *
 * @since 0.5.0
 */
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { Effect } from "effect"
import * as T from "../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import { type BatchWriteFormat, type BatchWriteRequest, option } from "../../core/Formats.ts"
import type { InternalRow } from "../../core/Row.ts"
import type { FileWriterFormat } from "./FileWriters.ts"
import { canPartitionOn, maxRecordsPerFile, partFileName, partitionLayout, writeGroups } from "./PartitionedWriter.ts"

/** Spark's `FileOutputCommitter.PENDING_DIR_NAME`: where a job's files wait for the commit. */
export const TEMPORARY_DIR = "_temporary"

/** Spark's `FileOutputCommitter.SUCCEEDED_FILE_NAME`, written when a job commits. */
export const SUCCESS_FILE = "_SUCCESS"

const ioError = (connector: string, path: string, cause: unknown): ConnectorError => {
  const code = (cause as { code?: string } | undefined)?.code
  return new ConnectorError({
    connector,
    domain: "external",
    retryable: !(code === "EACCES" || code === "EPERM" || code === "ENOSPC" || code === "EROFS"),
    message: `[TASK_WRITE_FAILED] Task failed while writing rows to file:${path}. ${cause instanceof Error ? cause.message : String(cause)}`,
    cause
  })
}

const localPath = (path: string): string =>
  nodePath.resolve(path.startsWith("file://") ? path.slice(7) : path.startsWith("file:") ? path.slice(5) : path)

/**
 * Spark's `PartitioningUtils.validatePartitionColumn` for a write: no duplicates, atomic types,
 * not every column; the indexes of the partition columns.
 */
const partitionIndexes = (
  schema: T.StructType,
  columns: ReadonlyArray<string>
): ReadonlyArray<number> | AnalysisError => {
  const seen = new Set<string>()
  const out: Array<number> = []
  for (const col of columns) {
    const l = col.toLowerCase()
    if (seen.has(l)) {
      return new AnalysisError({
        reason: "InvalidArgument",
        errorClass: "COLUMN_ALREADY_EXISTS",
        message: `[COLUMN_ALREADY_EXISTS] The column \`${l}\` already exists. Choose another name or rename the existing column.`
      })
    }
    seen.add(l)
    const i = schema.fields.findIndex((f) => f.name === col)
    if (i < 0) {
      return new AnalysisError({
        reason: "UnresolvedColumn",
        errorClass: "_LEGACY_ERROR_TEMP_1155",
        message: `Partition column \`${col}\` not found in schema ${T.simpleString(schema)}.`
      })
    }
    const t = schema.fields[i].dataType
    if (!canPartitionOn(t)) {
      return new AnalysisError({
        reason: "DataTypeMismatch",
        errorClass: "INVALID_PARTITION_COLUMN_DATA_TYPE",
        message: `[INVALID_PARTITION_COLUMN_DATA_TYPE] Cannot use "${T.simpleString(t).toUpperCase()}" for partition column.`
      })
    }
    out.push(i)
  }
  if (out.length > 0 && out.length === schema.fields.length) {
    return new AnalysisError({
      reason: "InvalidArgument",
      errorClass: "ALL_PARTITION_COLUMNS_NOT_ALLOWED",
      message: "[ALL_PARTITION_COLUMNS_NOT_ALLOWED] Cannot use all columns for partition columns."
    })
  }
  return out
}

/** `partitionOverwriteMode`: the option first, then Spark's conf (default `static`). */
const dynamicOverwrite = (request: BatchWriteRequest): boolean | AnalysisError => {
  const text =
    option(request.options, "partitionOverwriteMode") ??
    request.conf.get("spark.sql.sources.partitionOverwriteMode") ??
    "static"
  const l = text.toLowerCase()
  if (l === "static") return false
  if (l === "dynamic") return true
  return new AnalysisError({
    reason: "InvalidArgument",
    errorClass: "INVALID_OPTION",
    message: `Invalid value '${text}' for 'partitionOverwriteMode': it must be one of STATIC, DYNAMIC.`
  })
}

/** Moves every file below `from` to the same place below `to`, creating folders as needed. */
const moveTree = (from: string, to: string): void => {
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const src = nodePath.join(from, entry.name)
    const dst = nodePath.join(to, entry.name)
    if (entry.isDirectory()) {
      fs.mkdirSync(dst, { recursive: true })
      moveTree(src, dst)
    } else {
      fs.renameSync(src, dst)
    }
  }
}

/** Removes everything in `dir` except the names in `keep`. */
const clearFolder = (dir: string, keep: ReadonlySet<string>): void => {
  for (const name of fs.readdirSync(dir)) {
    if (!keep.has(name)) fs.rmSync(nodePath.join(dir, name), { recursive: true, force: true })
  }
}

/**
 * The batch writer of a file format (`df.write.format(writer.name)`).
 *
 * @example
 * ```ts
 * import { JsonWriterFormat } from "./FileWriters.ts"
 * import { fileBatchWriteFormat } from "./FileBatchWriter.ts"
 * const json = fileBatchWriteFormat(JsonWriterFormat)
 * // df.write.format("json").mode("overwrite").partitionBy("day").save("/data/out")
 * ```
 * @since 0.5.0
 */
export const fileBatchWriteFormat = (writerFormat: FileWriterFormat): BatchWriteFormat => ({
  name: writerFormat.name,
  write: (request) =>
    Effect.gen(function* () {
      const name = writerFormat.name
      if (request.path === undefined || request.path === "") {
        // Spark's `QueryExecutionErrors.dataPathNotSpecifiedError`
        return yield* new AnalysisError({ reason: "InvalidArgument", message: "'path' is not specified" })
      }
      const out = localPath(request.path)
      const partIdx = partitionIndexes(request.schema, request.partitionColumns)
      if (partIdx instanceof AnalysisError) return yield* partIdx
      const layout = partitionLayout(request.schema, partIdx)
      const maxRecords = maxRecordsPerFile(name, request.options, request.conf)
      if (maxRecords instanceof AnalysisError) return yield* maxRecords
      const dynamic = request.mode === "overwrite" && partIdx.length > 0 ? dynamicOverwrite(request) : false
      if (dynamic instanceof AnalysisError) return yield* dynamic

      // `InsertIntoHadoopFsRelationCommand.run`: the mode decides before the query runs
      const exists = fs.existsSync(out)
      if (exists && request.mode === "error") {
        return yield* new AnalysisError({
          reason: "InvalidArgument",
          errorClass: "PATH_ALREADY_EXISTS",
          message: `[PATH_ALREADY_EXISTS] Path file:${out} already exists. Set mode as "overwrite" to overwrite the existing path.`
        })
      }
      if (exists && request.mode === "ignore") return
      if (exists && !fs.statSync(out).isDirectory() && request.mode === "append") {
        return yield* ioError(name, out, new Error(`${out} is a file, not a folder`))
      }
      const writer = yield* writerFormat.prepare(layout.dataSchema, request.options, request.conf)
      const rows = yield* request.rows

      const jobId = randomUUID()
      const job = nodePath.join(out, TEMPORARY_DIR, jobId)
      const createdOut = !exists
      const cleanUp = Effect.sync(() => {
        fs.rmSync(job, { recursive: true, force: true })
        const temporary = nodePath.join(out, TEMPORARY_DIR)
        if (fs.existsSync(temporary) && fs.readdirSync(temporary).length === 0) fs.rmdirSync(temporary)
        // a folder this write made and left empty goes too (Spark leaves it behind)
        if (createdOut && fs.existsSync(out) && fs.readdirSync(out).length === 0) fs.rmdirSync(out)
      })
      const writeAll = Effect.gen(function* () {
        // an `overwrite` of a file (not a folder) replaces it with the folder
        if (exists && !fs.statSync(out).isDirectory()) {
          yield* Effect.try({ try: () => fs.rmSync(out), catch: (e) => ioError(name, out, e) })
        }
        yield* Effect.try({ try: () => fs.mkdirSync(job, { recursive: true }), catch: (e) => ioError(name, job, e) })
        const dirs = new Set<string>()
        yield* writeGroups(layout.group(rows), maxRecords, (dir, counter, part: ReadonlyArray<InternalRow>) =>
          Effect.gen(function* () {
            const folder = dir === "" ? job : nodePath.join(job, dir)
            dirs.add(dir)
            yield* Effect.try({ try: () => fs.mkdirSync(folder, { recursive: true }), catch: (e) => ioError(name, folder, e) })
            yield* writer.write(nodePath.join(folder, partFileName(counter, writer.extension, partIdx.length > 0, jobId)), part)
          })
        )
        // The job commit (`FileOutputCommitter.commitJob`): replace or add, then `_SUCCESS`.
        yield* Effect.try({
          try: () => {
            if (request.mode === "overwrite" && !dynamic) clearFolder(out, new Set([TEMPORARY_DIR]))
            if (dynamic) {
              // Spark's dynamic partition overwrite: only the partition folders written are replaced
              for (const dir of dirs) fs.rmSync(nodePath.join(out, dir), { recursive: true, force: true })
            }
            moveTree(job, out)
            fs.writeFileSync(nodePath.join(out, SUCCESS_FILE), "")
          },
          catch: (e) => ioError(name, out, e)
        })
      })
      yield* writeAll.pipe(Effect.ensuring(cleanUp))
    })
})
