/**
 * The streaming file source, Spark's `FileStreamSource`: `readStream.format("json" | "csv" |
 * "text" | "parquet").schema(s).load(dir)` reads the files that appear in `dir`, each exactly
 * once, oldest first by modification time (then path).
 *
 * - Every new batch of files is recorded in the source's log (Spark's `FileStreamSourceLog` in
 *   `<checkpoint>/sources/<i>/`, compacted every `spark.sql.streaming.fileSource.log.compactInterval`
 *   batches) before the engine logs the batch's offset `{"logOffset":n}`, so a batch replayed
 *   after a restart reads exactly the same files.
 * - Files are parsed by the batch readers of the same format (`JsonFormat`, `CsvFormat`,
 *   `TextFormat`, `ParquetFormat`), with the user's schema, the format's options, partition
 *   values from `key=value` folders below `dir`, and `mode` for malformed records: PERMISSIVE
 *   (`columnNameOfCorruptRecord`), DROPMALFORMED, or FAILFAST, which fails the query naming the file.
 * - A folder written by the streaming file sink is read through its `_spark_metadata` log.
 * - Options (`FileStreamOptions.ts`): `maxFilesPerTrigger`, `maxBytesPerTrigger`,
 *   `latestFirst`, `maxFileAge`, `fileNameOnly`, `cleanSource` with `sourceArchiveDir`,
 *   `maxCachedFiles`, `discardCachedInputRatio`, and the listing options `pathGlobFilter` and
 *   `recursiveFileLookup`.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { Cause, Effect, Exit } from "effect"
import * as T from "../../core/DataType.ts"
import { AnalysisError, CheckpointError, ConnectorError } from "../../core/Errors.ts"
import { type BatchFormat, type Options, option } from "../../core/Formats.ts"
import type { InternalRow } from "../../core/Row.ts"
import type { MicroBatchSource, ReadLimit, SourceContext, SourceFormat } from "../../core/Streaming.ts"
import { type InputFile, globToRegExp, isGlobPath, listFiles, pathNotFound, qualifiedName } from "./FileListing.ts"
import {
  CompactibleFileStreamLog,
  fromUrlPath,
  hasSinkMetadata,
  logSettingsFromConf,
  type SourceFileEntry,
  sourceEntryCodec,
  toUrlPath
} from "./FileStreamLog.ts"
import { type FileStreamOptions, parseFileStreamOptions } from "./FileStreamOptions.ts"
import { mergeDataAndPartitionSchema, unableToInferSchema } from "./FileSource.ts"
import { asNullable } from "./FileSourceOptions.ts"
import { parquetFooterSchema } from "./ParquetFooter.ts"
import { mergeTypes } from "./ParquetFormat.ts"
import { textSchema } from "./TextFormat.ts"

/** Spark's `FileStreamSourceOffset`: the last batch of the source's log in a micro-batch. */
export interface FileStreamSourceOffset {
  readonly logOffset: number
}

const invalid = (message: string, errorClass?: string): AnalysisError =>
  new AnalysisError({ reason: "InvalidArgument", message, errorClass })

/** Spark's `createStreamingSourceNotSpecifySchemaError`. */
export const schemaNotSpecified = (): AnalysisError =>
  new AnalysisError({
    reason: "SchemaRequired",
    message:
      "Schema must be specified when creating a streaming source DataFrame. If some files already exist in the directory, then depending on the file format you may be able to create a static DataFrame on that directory with 'spark.read.load(directory)' and infer schema from it."
  })

/** A user path as an absolute local path (`file:` URIs accepted). */
const localPath = (p: string): string =>
  nodePath.resolve(p.startsWith("file://") ? p.slice(7) : p.startsWith("file:") ? p.slice(5) : p)

/** A file path escaped so that the batch listing reads it literally (Spark's `GLOB_PATHS_KEY=false`). */
const literalPath = (p: string): string => p.replace(/[{}[\]*?\\]/g, "\\$&")

const withoutPath = (options: Options): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(options)) if (k.toLowerCase() !== "path") out[k] = v
  return out
}

/** A message for a failure of a synchronous run at `load()`. */
const failureOf = (cause: Cause.Cause<unknown>, format: string): AnalysisError => {
  const e = Cause.squash(cause)
  if (e instanceof AnalysisError) return e
  if (e instanceof ConnectorError) return invalid(e.message)
  // Parquet footers are read by DuckDB, which is asynchronous, while `load()` is synchronous
  return invalid(
    `Cannot infer the schema of a streaming ${format} source when the query is defined (spark.sql.streaming.schemaInference): give it with .schema(...).`
  )
}

/**
 * A parquet source's inferred schema, read synchronously from the footers (`ParquetFooter.ts`):
 * the first file's, or all files' merged with `mergeSchema`, then the partition columns, as
 * `ParquetFormat.resolveSchema` gives it through DuckDB.
 */
const parquetSourceSchema = (path: string, options: Options): T.StructType | AnalysisError => {
  const listed = Effect.runSyncExit(listFiles("parquet", [path], options, undefined))
  if (Exit.isFailure(listed)) return failureOf(listed.cause, "parquet")
  const files = listed.value.files
  if (files.length === 0) return unableToInferSchema("Parquet")
  const merge = (option(options, "mergeSchema") ?? "false").trim().toLowerCase() === "true"
  let data: T.DataType = T.struct([])
  for (const file of merge ? files : files.slice(0, 1)) {
    const s = parquetFooterSchema(file.path)
    if (typeof s === "string") return invalid(`Could not read the Parquet footer of ${qualifiedName(file.path)}: ${s}`)
    const m = mergeTypes(data, s, "")
    if (m instanceof ConnectorError) return invalid(m.message)
    data = m
  }
  return asNullable(mergeDataAndPartitionSchema(data as T.StructType, listed.value.partitionSchema))
}

/**
 * The schema of a file stream (Spark's `DataSource.sourceSchema` for file formats): the user's
 * data columns, or with `spark.sql.streaming.schemaInference` (and always for `text`) the one
 * inferred from the files already there, followed by the partition columns found below the path.
 */
const sourceSchema = (
  format: BatchFormat,
  userSchema: T.StructType | undefined,
  options: Options,
  conf: ReadonlyMap<string, string> | undefined
): T.StructType | AnalysisError => {
  const path = option(options, "path")
  if (path === undefined) return invalid("'path' is not specified")
  const glob = isGlobPath(path)
  // A glob is not checked: it may only match once the stream runs.
  if (!glob && !fs.existsSync(localPath(path))) return pathNotFound(localPath(path))
  const inference = (conf?.get("spark.sql.streaming.schemaInference") ?? "false").toLowerCase() === "true"
  if (!inference && format.name !== "text" && userSchema === undefined) return schemaNotSpecified()
  if (format.name === "parquet" && userSchema === undefined) return parquetSourceSchema(path, withoutPath(options))
  const exit = Effect.runSyncExit(format.resolveSchema([path], userSchema, withoutPath(options)))
  if (Exit.isSuccess(exit)) return exit.value
  const failure = failureOf(exit.cause, format.name)
  if (glob && failure.reason === "PathNotFound") {
    // a glob that matches nothing yet: the user's columns, or text's `value`
    if (userSchema !== undefined) return asNullable(userSchema)
    if (format.name === "text") return textSchema
  }
  return failure
}

/**
 * Spark's `FileStreamSource.SeenFilesMap`: the files already taken and their timestamps. `purge`
 * forgets those older than the newest by more than `maxAgeMs`, and from then on a file older than
 * that threshold is not new either; with `fileNameOnly` a file is known by its name alone.
 *
 * @example
 * ```ts
 * const map = new SeenFilesMap(10, false)
 * map.add("file:/a", 5)
 * map.add("file:/c", 16)
 * map.purge() // forgets a (5 < 16 - 10)
 * map.isNewFile("file:/d", 5) // false: older than the purge threshold
 * ```
 * @since 0.1.0
 */
export class SeenFilesMap {
  readonly maxAgeMs: number
  readonly fileNameOnly: boolean
  private readonly map = new Map<string, number>()
  latestTimestamp = 0
  lastPurgeTimestamp = 0

  constructor(maxAgeMs: number, fileNameOnly: boolean) {
    this.maxAgeMs = maxAgeMs
    this.fileNameOnly = fileNameOnly
  }

  private key(url: string): string {
    return this.fileNameOnly ? nodePath.basename(fromUrlPath(url)) : url
  }

  add(url: string, timestamp: number): void {
    this.map.set(this.key(url), timestamp)
    if (timestamp > this.latestTimestamp) this.latestTimestamp = timestamp
  }

  /** New: not seen, and not older than the purge threshold (so a purged file is never taken again). */
  isNewFile(url: string, timestamp: number): boolean {
    return timestamp >= this.lastPurgeTimestamp && !this.map.has(this.key(url))
  }

  /** The number of files remembered. */
  get size(): number {
    return this.map.size
  }

  purge(): number {
    this.lastPurgeTimestamp = this.latestTimestamp - this.maxAgeMs
    let n = 0
    for (const [k, t] of this.map) {
      if (t < this.lastPurgeTimestamp) {
        this.map.delete(k)
        n++
      }
    }
    return n
  }
}

/** A file found by a listing. */
interface NewFile {
  readonly url: string
  readonly size: number
  readonly timestamp: number
}

/**
 * Spark's `takeFilesUntilMax`: the first file always, then files while the total stays within
 * `maxBytes`; everything after the first file that does not fit is left for later.
 */
const takeFilesUntilMax = (
  files: ReadonlyArray<NewFile>,
  maxBytes: number
): { readonly taken: Array<NewFile>; readonly rest: Array<NewFile>; readonly restSize: number } => {
  let size = 0
  let restSize = 0
  const taken: Array<NewFile> = []
  const rest: Array<NewFile> = []
  for (let i = 0; i < files.length; i++) {
    const f = files[i]
    if (i === 0 || (rest.length === 0 && size + f.size <= maxBytes)) {
      size += f.size
      taken.push(f)
    } else {
      restSize += f.size
      rest.push(f)
    }
  }
  return { taken, rest, restSize }
}

const segments = (p: string): Array<string> => p.split("/").filter((s) => s.length > 0)

/**
 * Spark's `SourceFileArchiver.isBaseArchivePathMatchedAgainstSourcePattern`: at the smaller of
 * the two depths, every segment of the archive folder matches the source pattern's segment.
 */
const archiveMatchesSource = (source: string, archive: string): boolean => {
  const s = segments(source)
  const a = segments(archive)
  const depth = Math.min(s.length, a.length)
  for (let i = 0; i < depth; i++) {
    const re = globToRegExp(s[i])
    if (re === undefined ? s[i] !== a[i] : !re.test(a[i])) return false
  }
  return true
}

const connectorError = (connector: string, message: string, domain: "user" | "internal" = "internal") =>
  new ConnectorError({ connector, domain, retryable: false, message })

const asOffset = (o: unknown): number | undefined => {
  if (typeof o === "number" && Number.isSafeInteger(o)) return o
  const n = (o as { logOffset?: unknown } | null)?.logOffset
  return typeof n === "number" && Number.isSafeInteger(n) ? n : undefined
}

const makeSource = (
  format: BatchFormat,
  ctx: SourceContext,
  path: string,
  o: FileStreamOptions
): Effect.Effect<MicroBatchSource, AnalysisError | ConnectorError> =>
  Effect.gen(function* () {
    const name = format.name
    const conf = ctx.conf
    const glob = isGlobPath(path)
    const absPath = localPath(path)
    const logSettings = logSettingsFromConf(name, "fileSource", conf)
    if (logSettings instanceof AnalysisError) return yield* logSettings
    const archiveDir = o.sourceArchiveDir === undefined ? undefined : localPath(o.sourceArchiveDir)
    if (o.cleanSource === "ARCHIVE" && archiveDir !== undefined && archiveMatchesSource(absPath, archiveDir)) {
      return yield* invalid(
        "requirement failed: Base archive path cannot be set to the path where archived path can possibly match with source pattern. Ensure the base archive path doesn't match with source pattern in depth, where the depth is minimum of depth on both paths."
      )
    }
    const log = new CompactibleFileStreamLog<SourceFileEntry>(
      ctx.metadataPath,
      logSettings,
      sourceEntryCodec
    )
    let currentLogOffset = yield* log.latestBatchId()
    // Spark: with latestFirst and a per-trigger limit, maxFileAge is ignored (SPARK-19813)
    const maxFileAgeMs =
      o.latestFirst && (o.maxFilesPerTrigger !== undefined || o.maxBytesPerTrigger !== undefined)
        ? Number.MAX_SAFE_INTEGER
        : o.maxFileAgeMs
    const seen = new SeenFilesMap(maxFileAgeMs, o.fileNameOnly)
    for (const e of yield* log.allEntries()) seen.add(e.path, e.timestamp)
    seen.purge()

    const ignoreSinkMetadata =
      (conf.get("spark.sql.streaming.fileStreamSink.ignoreMetadata") ?? "false").toLowerCase() === "true"
    const listOptions = withoutPath(ctx.options)
    // Spark's `optionsForInnerDataSource`: partition discovery stops at the source folder
    const readOptions: Record<string, string> = glob ? listOptions : { ...listOptions, basePath: absPath }
    let unreadFiles: ReadonlyArray<NewFile> | undefined
    let availableNowFiles: ReadonlyArray<NewFile> | undefined
    let lastCleaned: number | undefined
    /** The start offset of each batch read, by its end: what `commit(end)` may clean. */
    const batchStarts = new Map<number, number>()
    /** Whether a batch was planned since this source was created (not the commit of a restart). */
    let planned = false

    /** Spark's `fetchAllFiles`: every file of the source, oldest first (newest with latestFirst). */
    const fetchAllFiles = Effect.gen(function* () {
      if (!glob && o.cleanSource !== "OFF" && !ignoreSinkMetadata && hasSinkMetadata(absPath)) {
        return yield* new ConnectorError({
          connector: name,
          domain: "user",
          retryable: false,
          message: "Clean up source files is not supported when reading from the output directory of FileStreamSink."
        })
      }
      const listed = yield* listFiles(name, [path], listOptions, ctx.schema, ignoreSinkMetadata).pipe(
        Effect.catchTag("AnalysisError", (e) =>
          // a folder or glob with nothing in it yet is a stream that has not started
          e.reason === "PathNotFound"
            ? Effect.succeed({ files: [] as ReadonlyArray<InputFile> })
            : Effect.fail(connectorError(name, e.message, "user"))
        )
      )
      const files = listed.files.map(
        (f): NewFile => ({ url: toUrlPath(f.path), size: f.size, timestamp: f.modificationTime })
      )
      // stable sorts on the path-ordered listing: equal timestamps stay in path order
      return o.latestFirst
        ? files.sort((a, b) => b.timestamp - a.timestamp)
        : files.sort((a, b) => a.timestamp - b.timestamp)
    })

    /** Spark's `fetchMaxOffset`: takes the next new files within `limit` and logs them as one log batch. */
    const fetchMaxOffset = (limit: ReadLimit) =>
      Effect.gen(function* () {
        let newFiles: ReadonlyArray<NewFile>
        if (unreadFiles !== undefined && unreadFiles.length > 0) newFiles = unreadFiles
        else {
          const all = availableNowFiles ?? (yield* fetchAllFiles)
          newFiles = all.filter((f) => seen.isNewFile(f.url, f.timestamp))
        }
        const shouldCache = !o.latestFirst && availableNowFiles === undefined
        let batch: ReadonlyArray<NewFile>
        let unselected: ReadonlyArray<NewFile> | undefined
        switch (limit._tag) {
          case "MaxFiles": {
            batch = newFiles.slice(0, limit.maxFiles)
            const rest = newFiles.slice(limit.maxFiles)
            // too few left over: list again next time rather than run a nearly empty batch
            unselected = shouldCache && rest.length >= limit.maxFiles * o.discardCachedInputRatio ? rest : undefined
            break
          }
          case "MaxBytes": {
            const split = takeFilesUntilMax(newFiles, limit.maxBytes)
            batch = split.taken
            unselected =
              shouldCache && split.restSize >= limit.maxBytes * o.discardCachedInputRatio ? split.rest : undefined
            break
          }
          default:
            batch = newFiles
            unselected = undefined
        }
        unreadFiles =
          unselected !== undefined && unselected.length > 0 && o.maxCachedFiles > 0
            ? unselected.slice(0, o.maxCachedFiles)
            : undefined
        for (const f of batch) seen.add(f.url, f.timestamp)
        seen.purge()
        if (batch.length > 0) {
          const id = currentLogOffset + 1
          const added = yield* log.add(
            id,
            batch.map((f) => ({ path: f.url, timestamp: f.timestamp, batchId: id }))
          )
          if (!added) {
            return yield* connectorError(
              name,
              `Concurrent update to the log. Multiple streaming jobs detected for ${id}`
            )
          }
          currentLogOffset = id
        }
        return { logOffset: currentLogOffset } as FileStreamSourceOffset
      })

    /** The entries of log batches `from` … `to` (each batch's own entries; compaction files hold all). */
    const entriesOf = (from: number, to: number) =>
      Effect.gen(function* () {
        const out: Array<SourceFileEntry> = []
        for (let id = from; id <= to; id++) {
          const got = yield* log.get(id)
          if (got === undefined) {
            return yield* connectorError(
              name,
              `The file source log ${yield* log.pathOf(id)} is missing: batch ${id} of the source cannot be replayed.`,
              "internal"
            )
          }
          for (const e of got) if (e.batchId === id) out.push(e)
        }
        return out
      })

    /** Spark's `FileStreamSourceCleaner`: archives or deletes the files of committed log batches. */
    const clean = (entries: ReadonlyArray<SourceFileEntry>) =>
      Effect.forEach(
        entries,
        (e) => {
          const file = fromUrlPath(e.path)
          if (o.cleanSource === "DELETE") {
            return Effect.try(() => fs.rmSync(file)).pipe(
              Effect.catch((err) => Effect.logWarning(`Fail to remove ${file} / skip removing file. ${String(err)}`))
            )
          }
          const target = nodePath.join(archiveDir!, file)
          return Effect.try(() => {
            fs.mkdirSync(nodePath.dirname(target), { recursive: true })
            fs.renameSync(file, target)
          }).pipe(
            Effect.catch((err) =>
              Effect.logWarning(`Fail to move ${file} to ${target} / skip moving file. ${String(err)}`)
            )
          )
        },
        { discard: true }
      )

    const offsetError = (json: unknown) =>
      new ConnectorError({
        connector: name,
        domain: "external",
        retryable: false,
        message: `Invalid file source offset ${JSON.stringify(json)}: expected {"logOffset":<n>}.`
      })

    const source: MicroBatchSource = {
      description: `FileStreamSource[${qualifiedName(absPath)}]`,
      schema: ctx.schema,
      initialOffset: () => Effect.succeed<FileStreamSourceOffset>({ logOffset: -1 }),
      defaultReadLimit: (): ReadLimit =>
        o.maxFilesPerTrigger !== undefined
          ? { _tag: "MaxFiles", maxFiles: o.maxFilesPerTrigger }
          : o.maxBytesPerTrigger !== undefined
            ? { _tag: "MaxBytes", maxBytes: o.maxBytesPerTrigger }
            : { _tag: "AllAvailable" },
      latestOffset: (_start, limit) =>
        Effect.suspend(() => {
          planned = true
          return fetchMaxOffset(limit)
        }),
      getBatch: (start, end) =>
        Effect.gen(function* () {
          const s = asOffset(start)
          const e = asOffset(end)
          if (s === undefined || e === undefined) return yield* offsetError({ start, end })
          if (s > e) return yield* connectorError(name, `startOffset(${s}) > endOffset(${e})`)
          if (o.cleanSource !== "OFF") batchStarts.set(e, s)
          const entries = yield* entriesOf(s + 1, e)
          if (entries.length === 0) return [] as ReadonlyArray<InternalRow>
          const paths = entries.map((x) => literalPath(fromUrlPath(x.path)))
          return yield* format.read(paths, ctx.schema, readOptions)
        }),
      commit: (end) =>
        Effect.gen(function* () {
          const e = asOffset(end)
          if (e === undefined) return yield* offsetError(end)
          // The source log is written before the offset log, so it always reaches every logged
          // offset. When it does not, its latest files are gone (a deleted `N.compact`): taking
          // new files under the same ids would re-log the batch's files and end the run early
          // (AvailableNow) or read them twice; the restart fails naming what is missing instead.
          if (e > currentLogOffset) {
            const first = yield* log.pathOf(currentLogOffset + 1)
            const last = yield* log.pathOf(e)
            return yield* new CheckpointError({
              reason: "LogGap",
              path: first,
              message: `The file source log ${ctx.metadataPath} ends at batch ${currentLogOffset}, but the checkpoint's offset log refers to batch ${e}: ${first}${e > currentLogOffset + 1 ? ` to ${last}` : ""} is missing. Restore it from a backup, or start the query from a new checkpoint (which reads every file of the source again).`
            })
          }
          // the engine commits the last committed batch again on a restart: Spark cleans its
          // files only once the next batch is planned
          if (o.cleanSource === "OFF" || !planned) return
          // Spark commits a source's offsets of batch N - 1 when batch N is planned
          // (`MicroBatchExecution.constructNextBatch`), so a batch's files are cleaned once the
          // next batch starts, not when their own batch ends ("remove completed files when
          // remove option is enabled"): here, the files up to this batch's start offset.
          const upTo = batchStarts.get(e) ?? e
          for (const k of [...batchStarts.keys()]) if (k <= e) batchStarts.delete(k)
          if (upTo < 0) return
          const from = lastCleaned === undefined ? upTo : lastCleaned + 1
          if (from <= upTo) yield* clean(yield* entriesOf(Math.max(0, from), upTo))
          lastCleaned = Math.max(lastCleaned ?? -1, upTo)
        }),
      decodeOffset: (json) => {
        const n = asOffset(json)
        if (n === undefined) return Effect.fail(offsetError(json))
        return Effect.succeed<FileStreamSourceOffset>({ logOffset: n })
      },
      prepareForTriggerAvailableNow: () =>
        Effect.map(fetchAllFiles, (files) => {
          availableNowFiles = files
        }),
      stop: () => Effect.void
    }
    return source
  })

/**
 * The streaming source format of a file format: `readStream.format(format.name)`.
 *
 * @example
 * ```ts
 * import { JsonFormat } from "./JsonFormat.ts"
 * import { fileStreamSourceFormat } from "./FileStreamSource.ts"
 * const json = fileStreamSourceFormat(JsonFormat)
 * // spark.readStream.format("json").schema("id INT, name STRING").load("/data/in")
 * ```
 * @since 0.1.0
 */
export const fileStreamSourceFormat = (format: BatchFormat): SourceFormat => ({
  name: format.name,
  schema: (userSchema, options, conf) => sourceSchema(format, userSchema, options, conf),
  create: (ctx) =>
    Effect.gen(function* () {
      const path = option(ctx.options, "path")
      if (path === undefined) return yield* invalid("'path' is not specified")
      const built = yield* Effect.exit(
        Effect.suspend(() => {
          const parsed = parseFileStreamOptions(ctx.options)
          return parsed instanceof AnalysisError ? Effect.fail(parsed) : makeSource(format, ctx, path, parsed)
        })
      )
      if (Exit.isSuccess(built)) return built.value
      // Spark builds a file source in the stream thread (`MicroBatchExecution.logicalPlan`), so a
      // bad option (maxFilesPerTrigger "0", modifiedBefore, an archive folder matching the source)
      // does not fail start(): the query starts and fails with it ("max files per trigger -
      // incorrect values", SPARK-31962).
      const error = Cause.squash(built.cause)
      return failedSource(ctx, format.name, path, error)
    })
})

/** A source that could not be built: the query fails with `error` at its first step. */
const failedSource = (ctx: SourceContext, name: string, path: string, error: unknown): MicroBatchSource => {
  const failure = Effect.fail(
    error instanceof ConnectorError
      ? error
      : new ConnectorError({
          connector: name,
          domain: "user",
          retryable: false,
          message: error instanceof Error ? error.message : String(error),
          cause: error
        })
  )
  return {
    description: `FileStreamSource[${qualifiedName(localPath(path))}]`,
    schema: ctx.schema,
    initialOffset: () => failure,
    defaultReadLimit: (): ReadLimit => ({ _tag: "AllAvailable" }),
    latestOffset: () => failure,
    getBatch: () => failure,
    commit: () => failure,
    decodeOffset: () => failure,
    prepareForTriggerAvailableNow: () => failure,
    stop: () => Effect.void
  }
}
