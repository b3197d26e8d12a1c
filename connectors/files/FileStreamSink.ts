/**
 * The streaming file sink, Spark's `FileStreamSink` with its `ManifestFileCommitProtocol`:
 * `writeStream.format("json" | "csv" | "parquet" | "text").option("path", dir)` (or
 * `.start(dir)`), append mode only, `partitionBy` columns as `key=value` folders.
 *
 * Exactly once: each batch writes its rows to new files named like Spark's
 * (`part-00000-<uuid>.c000.json`, one per partition folder; written under a hidden temporary
 * name and renamed), then records them in `<dir>/_spark_metadata/<batchId>` (`v1` and one
 * `SinkFileStatus` JSON line per file; every tenth batch compacted into `<batchId>.compact`),
 * written to a temporary name and linked into place. A batch id already in the log is skipped,
 * so a batch replayed after a restart is not written twice; the files of a batch that failed or
 * was killed before its log entry are never listed, and `spark.read` of the folder (Spark's
 * `MetadataLogFileIndex`, see `FileListing.ts`) reads only what the log lists.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { Cause, Effect, Exit } from "effect"
import * as Cast from "../../core/Cast.ts"
import * as T from "../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import { option } from "../../core/Formats.ts"
import type { InternalRow } from "../../core/Row.ts"
import type { Sink, SinkContext, SinkFormat } from "../../core/Streaming.ts"
import {
  logSettingsFromConf,
  type LogFiles,
  NodeLogFiles,
  type SinkFileStatus,
  sinkLog,
  toUrlPath
} from "./FileStreamLog.ts"
import { sqlType } from "./FileSourceOptions.ts"
import { timeStringAsMs } from "./FileStreamOptions.ts"
import type { FileWriterFormat } from "./FileWriters.ts"

/** Hive's name of the folder of null and empty partition values. */
export const DEFAULT_PARTITION_NAME = "__HIVE_DEFAULT_PARTITION__"

/** The block size Hadoop's local file system reports (32 MB), logged as Spark logs it. */
const LOCAL_BLOCK_SIZE = 33554432

/**
 * Spark's `ExternalCatalogUtils.escapePathName`: control characters, DEL, the slash and
 * the characters of `"#%'*:=?\{[]^` become `%XX`.
 */
export const escapePathName = (s: string): string => {
  let out = ""
  for (const ch of s) {
    const c = ch.charCodeAt(0)
    const special = (c >= 0x01 && c <= 0x1f) || c === 0x7f || ch === "/" || `"#%'*:=?\\{[]^`.includes(ch)
    out += special ? `%${c.toString(16).toUpperCase().padStart(2, "0")}` : ch
  }
  return out
}

const isAtomic = (t: T.DataType): boolean =>
  t._tag !== "struct" && t._tag !== "array" && t._tag !== "map" && t._tag !== "calendarInterval"

/** Spark's `OutputMode.toString`. */

/** Test hooks: how the sink's metadata log touches files. */
export interface FileSinkHooks {
  readonly logFiles?: LogFiles
}

const makeSink = (
  writerFormat: FileWriterFormat,
  ctx: SinkContext,
  hooks: FileSinkHooks
): Effect.Effect<Sink, AnalysisError | ConnectorError> =>
  Effect.gen(function* () {
    const name = writerFormat.name
    const pathOption = option(ctx.options, "path")
    if (pathOption === undefined)
      return yield* new AnalysisError({ reason: "InvalidArgument", message: "'path' is not specified" })
    if (ctx.outputMode !== "append") {
      // Spark 4's `DataSource.createSink` (`dataSourceOutputModeUnsupportedError`)
      return yield* new AnalysisError({
        reason: "UnsupportedOperation",
        errorClass: "STREAMING_OUTPUT_MODE.UNSUPPORTED_DATASOURCE",
        message: `[STREAMING_OUTPUT_MODE.UNSUPPORTED_DATASOURCE] Invalid streaming output mode: ${ctx.outputMode}. This output mode is not supported in Data Source ${name}.`
      })
    }
    const out = nodePath.resolve(
      pathOption.startsWith("file://")
        ? pathOption.slice(7)
        : pathOption.startsWith("file:")
          ? pathOption.slice(5)
          : pathOption
    )
    // Spark's `DataStreamWriter.normalize(col, "Partition")` and `PartitioningUtils.validatePartitionColumn`
    const fields = ctx.schema.fields
    const partIdx: Array<number> = []
    for (const col of ctx.partitionColumns) {
      const i = fields.findIndex((f) => f.name.toLowerCase() === col.toLowerCase())
      if (i < 0) {
        return yield* new AnalysisError({
          reason: "UnresolvedColumn",
          message: `Partition column ${col} not found in existing columns (${fields.map((f) => f.name).join(", ")})`
        })
      }
      if (!isAtomic(fields[i].dataType)) {
        return yield* new AnalysisError({
          reason: "DataTypeMismatch",
          message: `Cannot use ${sqlType(fields[i].dataType)} for partition column`
        })
      }
      partIdx.push(i)
    }
    if (partIdx.length > 0 && partIdx.length === fields.length) {
      return yield* new AnalysisError({
        reason: "InvalidArgument",
        message: "Cannot use all columns for partition columns"
      })
    }
    const partSet = new Set(partIdx)
    const dataIdx = fields.map((_, i) => i).filter((i) => !partSet.has(i))
    const dataSchema = T.struct(dataIdx.map((i) => fields[i]))
    // Spark prepares the writer for every batch (`FileFormatWriter.write` -> `prepareWrite`), so a
    // schema or option the format refuses (text with two columns) fails the first batch written,
    // not start() (FileStreamSinkSuite "text": a two-column text sink starts and stops cleanly).
    const prepared = yield* Effect.exit(writerFormat.prepare(dataSchema, ctx.options))
    const writer = Exit.isSuccess(prepared) ? prepared.value : undefined
    // Spark's `maxRecordsPerFile` (0 or negative: no limit)
    const maxText = option(ctx.options, "maxRecordsPerFile")
    let maxRecordsPerFile = Number.POSITIVE_INFINITY
    if (maxText !== undefined) {
      if (!/^[+-]?\d+$/.test(maxText.trim())) {
        return yield* new AnalysisError({
          reason: "InvalidArgument",
          errorClass: "INVALID_OPTION",
          message: `Invalid value '${maxText}' for the ${name} option 'maxRecordsPerFile': it must be an integer.`
        })
      }
      const n = Number(maxText.trim())
      if (n > 0) maxRecordsPerFile = n
    }
    const partNames = partIdx.map((i) => escapePathName(fields[i].name))
    const partStrings = partIdx.map((i) => Cast.toStringFunction(fields[i].dataType))
    // Spark's `retention` option (SPARK-27188): files older than this leave the log at its next compaction
    const retentionText = option(ctx.options, "retention")
    const retentionMs = retentionText === undefined ? undefined : timeStringAsMs(retentionText)
    if (retentionMs instanceof AnalysisError) return yield* retentionMs
    // Spark's `spark.sql.streaming.fileSink.log.*` confs (compact interval, deletion, cleanup delay)
    const logSettings = logSettingsFromConf(name, "fileSink", ctx.conf ?? new Map<string, string>())
    if (logSettings instanceof AnalysisError) return yield* logSettings
    const log = sinkLog(out, {
      ...logSettings,
      files: hooks.logFiles ?? NodeLogFiles,
      retain: retentionMs === undefined ? undefined : (modified, now) => now - modified <= retentionMs
    })

    const ioError = (path: string, cause: unknown) =>
      new ConnectorError({
        connector: name,
        domain: "external",
        retryable: true,
        message: `[TASK_WRITE_FAILED] Task failed while writing rows to file:${path}. ${cause instanceof Error ? cause.message : String(cause)}`,
        cause
      })

    /** The batch's rows by partition folder (`""` without partitioning), data columns only. */
    const groups = (rows: ReadonlyArray<InternalRow>): Map<string, Array<InternalRow>> => {
      const byDir = new Map<string, Array<InternalRow>>()
      if (partIdx.length === 0) {
        byDir.set("", rows as Array<InternalRow>)
        return byDir
      }
      for (const r of rows) {
        let dir = ""
        for (let k = 0; k < partIdx.length; k++) {
          const v = r[partIdx[k]]
          const s = v === null || v === undefined ? "" : partStrings[k](v)
          dir += `${k > 0 ? "/" : ""}${partNames[k]}=${s.length === 0 ? DEFAULT_PARTITION_NAME : escapePathName(s)}`
        }
        const data = new Array<unknown>(dataIdx.length)
        for (let j = 0; j < dataIdx.length; j++) data[j] = r[dataIdx[j]]
        const g = byDir.get(dir)
        if (g === undefined) byDir.set(dir, [data])
        else g.push(data)
      }
      return byDir
    }

    /** Writes one file: to a hidden temporary name, then renamed; its status for the log. */
    const writeFile = (dir: string, rows: ReadonlyArray<InternalRow>, counter: number, written: Array<string>) =>
      Effect.gen(function* () {
        const folder = dir === "" ? out : nodePath.join(out, dir)
        // Spark's `ManifestFileCommitProtocol.newTaskTempFile`: one task (split 0), a new UUID per
        // file, the file counter (`c000`, `c001` with maxRecordsPerFile) and the format's extension
        const fileName = `part-00000-${randomUUID()}.c${String(counter).padStart(3, "0")}${writer!.extension}`
        const final = nodePath.join(folder, fileName)
        const tmp = nodePath.join(folder, `.${fileName}.tmp`)
        yield* Effect.try({ try: () => fs.mkdirSync(folder, { recursive: true }), catch: (e) => ioError(folder, e) })
        written.push(tmp)
        yield* writer!.write(tmp, rows)
        const st = yield* Effect.try({
          try: () => {
            fs.renameSync(tmp, final)
            written.push(final)
            return fs.statSync(final)
          },
          catch: (e) => ioError(final, e)
        })
        return {
          path: toUrlPath(final),
          size: st.size,
          isDir: false,
          modificationTime: Math.floor(st.mtimeMs),
          blockReplication: 1,
          blockSize: LOCAL_BLOCK_SIZE,
          action: "add"
        } satisfies SinkFileStatus
      })

    const sink: Sink = {
      // Spark's `FileStreamSink.toString`: the path as given
      description: `FileSink[${pathOption}]`,
      addBatch: (batch) =>
        Effect.gen(function* () {
          const latest = yield* log.latestBatchId()
          if (batch.batchId <= latest) {
            yield* Effect.logInfo(`Skipping already committed batch ${batch.batchId}`)
            return
          }
          if (Exit.isFailure(prepared)) {
            const error = Cause.squash(prepared.cause)
            return yield* new ConnectorError({
              connector: name,
              domain: "user",
              retryable: false,
              message: error instanceof Error ? error.message : String(error),
              cause: error
            })
          }
          const written: Array<string> = []
          const statuses: Array<SinkFileStatus> = []
          const write = Effect.gen(function* () {
            const byDir = groups(batch.rows)
            for (const [dir, rows] of byDir) {
              // Spark's first task writes a file even for an empty, unpartitioned batch
              if (rows.length === 0) {
                if (dir === "") statuses.push(yield* writeFile(dir, rows, 0, written))
                continue
              }
              // Spark's `DynamicPartitionDataSingleWriter`: the counter restarts in each partition folder
              let counter = 0
              for (let from = 0; from < rows.length; from += maxRecordsPerFile) {
                const chunk =
                  from === 0 && rows.length <= maxRecordsPerFile ? rows : rows.slice(from, from + maxRecordsPerFile)
                statuses.push(yield* writeFile(dir, chunk, counter++, written))
              }
            }
            const added = yield* log.add(batch.batchId, statuses)
            if (!added) {
              return yield* new ConnectorError({
                connector: name,
                domain: "internal",
                retryable: false,
                message: `Race while writing batch ${batch.batchId}`
              })
            }
          })
          // Spark's `abortJob`: best-effort removal of the failed batch's files (unlisted either way)
          yield* write.pipe(
            Effect.tapError(() =>
              Effect.sync(() => {
                for (const p of written) fs.rmSync(p, { force: true })
              })
            )
          )
        }),
      stop: () => Effect.void
    }
    return sink
  })

/**
 * The streaming sink format of a file format: `writeStream.format(writer.name)`. It accepts the
 * `update` and `complete` modes at the contract level so that `start()` fails with Spark's own
 * message (`[STREAMING_OUTPUT_MODE.UNSUPPORTED_DATASOURCE] Invalid streaming output mode: update. This
 * output mode is not supported in Data Source json.`).
 *
 * @example
 * ```ts
 * import { JsonWriterFormat } from "./FileWriters.ts"
 * import { fileStreamSinkFormat } from "./FileStreamSink.ts"
 * const sink = fileStreamSinkFormat(JsonWriterFormat)
 * // df.writeStream.format("json").option("checkpointLocation", chk).start("/data/out")
 * ```
 * @since 0.1.0
 */
export const fileStreamSinkFormat = (writer: FileWriterFormat, hooks: FileSinkHooks = {}): SinkFormat => ({
  name: writer.name,
  supportedOutputModes: ["append", "update", "complete"],
  // Spark's V1 `FileStreamSink` has no continuous writes.
  continuous: false,
  create: (ctx) => makeSink(writer, ctx, hooks)
})
