/**
 * The streaming file sink, Spark's `FileStreamSink` with its `ManifestFileCommitProtocol`:
 * `writeStream.format("json" | "csv" | "parquet" | "text").option("path", dir)` (or
 * `.start(dir)`), append mode only, `partitionBy` columns as `key=value` folders.
 *
 * Exactly once: each batch writes its rows to new files named like Spark's
 * (`part-00000-<uuid>-c000.json`, one per partition folder; written under a hidden temporary
 * name and renamed), then records them in `<dir>/_spark_metadata/<batchId>` (`v1` and one
 * `SinkFileStatus` JSON line per file; every tenth batch compacted into `<batchId>.compact`),
 * written to a temporary name and linked into place. A batch id already in the log is skipped,
 * so a batch replayed after a restart is not written twice; the files of a batch that failed or
 * was killed before its log entry are never listed, and `spark.read` of the folder (Spark's
 * `MetadataLogFileIndex`, see `FileListing.ts`) reads only what the log lists.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { Cause, Effect, Exit } from "effect"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import { option } from "../../core/Formats.ts"
import type { InternalRow } from "../../core/Row.ts"
import type { Sink, SinkContext, SinkFormat } from "../../core/Streaming.ts"
import {
  checkSinkFiles,
  logSettingsFromConf,
  type LogFiles,
  NodeLogFiles,
  type SinkFileStatus,
  sinkLog,
  toUrlPath,
  visibleFiles
} from "./FileStreamLog.ts"
import { sqlType } from "./FileSourceOptions.ts"
import { timeStringAsMs } from "./FileStreamOptions.ts"
import type { FileWriterFormat } from "./FileWriters.ts"
import { canPartitionOn, maxRecordsPerFile as maxRecordsOption, partFileName, partitionLayout, writeGroups } from "./PartitionedWriter.ts"

export { DEFAULT_PARTITION_NAME, escapePathName } from "./PartitionedWriter.ts"

/** The block size Hadoop's local file system reports (32 MB), logged as Spark logs it. */
const LOCAL_BLOCK_SIZE = 33554432


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
      if (!canPartitionOn(fields[i].dataType)) {
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
    const layout = partitionLayout(ctx.schema, partIdx)
    const dataSchema = layout.dataSchema
    // Spark prepares the writer for every batch (`FileFormatWriter.write` -> `prepareWrite`), so a
    // schema or option the format refuses (text with two columns) fails the first batch written,
    // not start() (FileStreamSinkSuite "text": a two-column text sink starts and stops cleanly).
    const prepared = yield* Effect.exit(writerFormat.prepare(dataSchema, ctx.options, ctx.conf))
    const writer = Exit.isSuccess(prepared) ? prepared.value : undefined
    const maxRecordsPerFile = maxRecordsOption(name, ctx.options, undefined)
    if (maxRecordsPerFile instanceof AnalysisError) return yield* maxRecordsPerFile
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

    // Beyond Spark: at every start the sink checks its own log — every log file it reads is
    // intact and every file it lists exists with the size logged — so a damaged output folder
    // fails the query before its first batch rather than a later read of the folder.
    if ((yield* log.latestBatchId()) >= 0) yield* checkSinkFiles(name, out, visibleFiles(yield* log.allEntries()))

    const ioError = (path: string, cause: unknown) =>
      new ConnectorError({
        connector: name,
        domain: "external",
        retryable: true,
        message: `[TASK_WRITE_FAILED] Task failed while writing rows to file:${path}. ${cause instanceof Error ? cause.message : String(cause)}`,
        cause
      })

    /** Writes one file: to a hidden temporary name, then renamed; its status for the log. */
    const writeFile = (dir: string, rows: ReadonlyArray<InternalRow>, counter: number, written: Array<string>) =>
      Effect.gen(function* () {
        const folder = dir === "" ? out : nodePath.join(out, dir)
        // Spark's `ManifestFileCommitProtocol.newTaskTempFile`: one task (split 0), a new UUID per
        // file, the file counter (`c000`, `c001` with maxRecordsPerFile) and the format's extension
        const fileName = partFileName(counter, writer!.extension, partIdx.length > 0)
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
          // Beyond Spark: the engine runs a batch only after the sink wrote the one before it, so
          // a log that ends earlier lost its latest files; writing on would leave a gap that
          // every read of the folder trips over. (A log that is empty is a new output folder.)
          if (latest >= 0 && batch.batchId > latest + 1) {
            const missing = yield* log.pathOf(latest + 1)
            return yield* new ConnectorError({
              connector: name,
              domain: "user",
              retryable: false,
              message: `The sink log ${nodePath.join(out, "_spark_metadata")} ends at batch ${latest}, but the query is at batch ${batch.batchId}: ${missing} (and any batch after it) is missing. Restore it from a backup, or write to a new output folder.`
            })
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
            statuses.push(
              ...(yield* writeGroups(layout.group(batch.rows), maxRecordsPerFile, (dir, counter, rows) =>
                writeFile(dir, rows, counter, written)
              ))
            )
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
