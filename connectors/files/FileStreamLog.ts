/**
 * Spark's `CompactibleFileStreamLog`, the metadata log of the file source (`FileStreamSourceLog`,
 * in `<checkpoint>/sources/<i>/`) and of the file sink (`FileStreamSinkLog`, in
 * `<output>/_spark_metadata/`), in Spark's on-disk format so that either side can read the
 * other's folders:
 *
 * ```
 * _spark_metadata/0          v1
 *                            {"path":"file:/out/part-00000-….c000.json","size":120,"isDir":false,…,"action":"add"}
 * _spark_metadata/9.compact  v1, then the entries of batches 0 … 9
 * sources/0/3                v1
 *                            {"path":"file:/in/a.json","timestamp":1700000000000,"batchId":3}
 * ```
 *
 * One file per batch, named by the batch id; every `compactInterval`-th batch (ids 9, 19, … for
 * the default 10) is written as `<id>.compact` holding every entry so far, so a reader needs the
 * latest compaction file plus the files after it. Files are written to a temporary name and
 * linked into place (never overwritten: a batch id already there is left alone and `add` says
 * `false`). Log files older than the compaction that keeps `minBatchesToRetain` batches are
 * deleted once they are older than the cleanup delay (Spark's `deleteExpiredLog`).
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import { Buffer } from "node:buffer"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { Clock, Effect } from "effect"
import { checksumFile, checksumFileName, verifyChecksumFile } from "../../core/Checksum.ts"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import { timeStringAsMs } from "./FileStreamOptions.ts"

/**
 * The file operations a log needs. Synchronous (local files, small texts), so that a batch read
 * of a sink folder can run inside the synchronous `readStream...load()`. Tests replace
 * `writeNew` to kill a process at a precise point of the commit protocol.
 */
export interface LogFiles {
  /** The file's text, or `undefined` when it does not exist. */
  readonly read: (path: string) => string | undefined
  /** Names in a folder; empty when it does not exist. */
  readonly list: (dir: string) => ReadonlyArray<string>
  /** Writes `text` atomically unless `path` exists; `false` when it existed. */
  readonly writeNew: (path: string, text: string) => boolean
  readonly remove: (path: string) => void
  /** Last modification (epoch ms), or `undefined` when the file does not exist. */
  readonly modificationTime: (path: string) => number | undefined
}

const code = (e: unknown): string | undefined => (e as { code?: string } | null)?.code

/** A log file that does not match its checksum file (`NodeLogFiles.read` throws it). */
export class LogChecksumMismatch extends Error {
  readonly why: string
  constructor(why: string) {
    super(why)
    this.why = why
  }
}

const crcPathOf = (p: string): string => nodePath.join(nodePath.dirname(p), checksumFileName(nodePath.basename(p)))

/**
 * `LogFiles` on `node:fs` (Node and Deno). As Hadoop's local file system does for Spark, each
 * file written gets a checksum file beside it (`.<name>.crc`, `core/Checksum.ts`), written once
 * the file is in place, and `read` checks a file against it when there is one: a bit flip or a
 * truncation (even one at a line boundary, which leaves valid lines) is detected, never read as
 * other entries.
 */
export const NodeLogFiles: LogFiles = {
  read: (p) => {
    let data: Buffer
    try {
      data = fs.readFileSync(p)
    } catch (e) {
      if (code(e) === "ENOENT") return undefined
      throw e
    }
    let crc: Buffer | undefined
    try {
      crc = fs.readFileSync(crcPathOf(p))
    } catch (e) {
      if (code(e) !== "ENOENT") throw e
    }
    if (crc !== undefined) {
      const why = verifyChecksumFile(data, crc)
      if (why !== undefined) throw new LogChecksumMismatch(why)
    }
    return data.toString("utf8")
  },
  list: (dir) => {
    try {
      return fs.readdirSync(dir)
    } catch (e) {
      if (code(e) === "ENOENT" || code(e) === "ENOTDIR") return []
      throw e
    }
  },
  writeNew: (p, text) => {
    const dir = nodePath.dirname(p)
    fs.mkdirSync(dir, { recursive: true })
    const tmp = nodePath.join(dir, `.${nodePath.basename(p)}.${randomUUID()}.tmp`)
    const data = Buffer.from(text, "utf8")
    const fd = fs.openSync(tmp, "w")
    try {
      fs.writeSync(fd, data)
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    try {
      // a hard link fails when the target exists: two writers of one batch id cannot both win
      fs.linkSync(tmp, p)
    } catch (e) {
      if (code(e) === "EEXIST") return false
      throw e
    } finally {
      fs.rmSync(tmp, { force: true })
    }
    // Only the writer that won writes the checksum; a kill before it leaves the file unchecked.
    const crc = crcPathOf(p)
    const crcTmp = nodePath.join(dir, `.${nodePath.basename(crc)}.${randomUUID()}.tmp`)
    fs.writeFileSync(crcTmp, checksumFile(data))
    try {
      fs.renameSync(crcTmp, crc)
    } catch (e) {
      fs.rmSync(crcTmp, { force: true })
      throw e
    }
    return true
  },
  remove: (p) => {
    fs.rmSync(p, { force: true })
    fs.rmSync(crcPathOf(p), { force: true })
  },
  modificationTime: (p) => {
    const st = fs.statSync(p, { throwIfNoEntry: false })
    return st === undefined ? undefined : Math.floor(st.mtimeMs)
  }
}

/** Spark's `CompactibleFileStreamLog.COMPACT_FILE_SUFFIX`. */
export const COMPACT_FILE_SUFFIX = ".compact"

/** Spark's `isCompactionBatch`: with interval 3, batches 2, 5, 8, … compact. */
export const isCompactionBatch = (batchId: number, compactInterval: number): boolean =>
  (batchId + 1) % compactInterval === 0

/** Spark's `getValidBatchesBeforeCompactionBatch`: the previous compaction and the batches after it. */
export const validBatchesBeforeCompaction = (compactionBatchId: number, compactInterval: number): Array<number> => {
  const out: Array<number> = []
  for (let i = Math.max(0, compactionBatchId - compactInterval); i < compactionBatchId; i++) out.push(i)
  return out
}

/** Spark's `getAllValidBatches`: the last compaction at or before `batchId`, then every batch up to it. */
export const allValidBatches = (batchId: number, compactInterval: number): Array<number> => {
  const start = Math.max(0, Math.floor((batchId + 1) / compactInterval) * compactInterval - 1)
  const out: Array<number> = []
  for (let i = start; i <= batchId; i++) out.push(i)
  return out
}

/**
 * The intervals a single `.compact` file at `latestCompactBatchId` allows, best first: Spark's
 * `deriveCompactInterval` order (SPARK-18187) — the interval that divides its batch id + 1 and
 * is at least the default where possible, else batch id + 1.
 *
 * One boundary differs from Spark: Spark looks for a divisor only when the default is *below*
 * half of batch id + 1, so with the default exactly half (5.compact and interval 3) it picks 6,
 * although 3 divides 6 — and a checkpoint whose log holds one compaction after retention
 * (`5.compact, 6, 7` with `minBatchesToRetain=2`, `compactInterval=3`, as Spark's own
 * FileStreamSinkLogSuite "delete expired file" leaves it) restarts with another interval than
 * it was written with, and the log destroys itself a few batches later. Here the default is a
 * candidate whenever it divides: an unchanged default is always derived back.
 */
export const compactIntervalCandidates = (defaultInterval: number, latestCompactBatchId: number): Array<number> => {
  const n = latestCompactBatchId + 1
  if (n <= defaultInterval) return [n]
  const out: Array<number> = []
  if (defaultInterval <= Math.floor(n / 2)) {
    for (let i = defaultInterval; i <= Math.floor(n / 2); i++) if (n % i === 0) out.push(i)
  }
  out.push(n)
  return out
}

/**
 * Spark's `deriveCompactInterval`: with one `.compact` file already there, an interval that
 * divides its batch id + 1 and is at least the default where possible (SPARK-18187); see
 * `compactIntervalCandidates` for the one boundary that differs.
 */
export const deriveCompactInterval = (defaultInterval: number, latestCompactBatchId: number): number =>
  compactIntervalCandidates(defaultInterval, latestCompactBatchId)[0]

const batchIdOfName = (name: string): number | undefined => {
  const m = /^(\d+)(\.compact)?$/.exec(name)
  return m === null ? undefined : Number(m[1])
}

/** How a log's JSON lines map to entries. */
export interface EntryCodec<A> {
  readonly encode: (a: A) => string
  /** `undefined` for a line that is not an entry of this log. */
  readonly decode: (json: unknown) => A | undefined
  /** The entry's time for `LogSettings.retain`. */
  readonly timeOf?: (a: A) => number
}

/** Settings of one log. */
export interface LogSettings {
  /** Connector named in errors (`json`, `parquet`, …). */
  readonly connector: string
  /** Spark's `spark.sql.streaming.file{Source,Sink}.log.compactInterval` (10). */
  readonly defaultCompactInterval: number
  /** Spark's `spark.sql.streaming.file{Source,Sink}.log.deletion` (true). */
  readonly deleteExpired: boolean
  /** Spark's `spark.sql.streaming.file{Source,Sink}.log.cleanupDelay` (10 minutes). */
  readonly cleanupDelayMs: number
  /** Spark's `spark.sql.streaming.minBatchesToRetain` (100). */
  readonly minBatchesToRetain: number
  readonly files: LogFiles
  /**
   * Spark's `shouldRetain`: entries it refuses are left out of compactions and of `allEntries`
   * (the file sink's `retention` option). Everything is kept by default.
   */
  readonly retain?: (entryModificationTime: number, nowMs: number) => boolean
}

/** The defaults of Spark's confs for both logs. */
export const defaultLogSettings = (connector: string): LogSettings => ({
  connector,
  defaultCompactInterval: 10,
  deleteExpired: true,
  cleanupDelayMs: 10 * 60 * 1000,
  minBatchesToRetain: 100,
  files: NodeLogFiles
})

/**
 * The log settings Spark's confs give the file source (`spark.sql.streaming.fileSource.log.*`)
 * or sink (`spark.sql.streaming.fileSink.log.*`): compact interval, deletion of expired files,
 * cleanup delay, and `spark.sql.streaming.minBatchesToRetain`. Fails with Spark's requirement
 * message for a compact interval that is not positive.
 *
 * @since 0.1.0
 */
export const logSettingsFromConf = (
  connector: string,
  kind: "fileSource" | "fileSink",
  conf: ReadonlyMap<string, string>
): LogSettings | AnalysisError => {
  const num = (key: string, dflt: number): number => {
    const v = conf.get(key)
    const n = v === undefined ? dflt : Number(v)
    return Number.isFinite(n) ? n : dflt
  }
  const prefix = `spark.sql.streaming.${kind}.log`
  const compactInterval = num(`${prefix}.compactInterval`, 10)
  if (!(compactInterval > 0)) {
    return new AnalysisError({
      reason: "InvalidArgument",
      message: `requirement failed: Please set ${prefix}.compactInterval (was ${compactInterval}) to a positive value.`
    })
  }
  const cleanupDelayMs = timeStringAsMs(conf.get(`${prefix}.cleanupDelay`) ?? "10m")
  if (cleanupDelayMs instanceof AnalysisError) return cleanupDelayMs
  return {
    ...defaultLogSettings(connector),
    defaultCompactInterval: compactInterval,
    deleteExpired: (conf.get(`${prefix}.deletion`) ?? "true").toLowerCase() !== "false",
    cleanupDelayMs,
    minBatchesToRetain: num("spark.sql.streaming.minBatchesToRetain", 100)
  }
}

const logError = (connector: string, path: string, message: string, cause?: unknown): ConnectorError => {
  // A full disk or a refused write damages nothing: the entry was not written, and a restart
  // once the cause is mended writes it.
  const code = (cause as { code?: string } | undefined)?.code
  const transient = code === "ENOSPC" || code === "EDQUOT" || code === "EACCES" || code === "EROFS"
  return new ConnectorError({
    connector,
    domain: "external",
    retryable: false,
    message: transient
      ? `The metadata log file ${path} ${message}. Nothing in the log was damaged: ${code === "ENOSPC" || code === "EDQUOT" ? "free space on its file system" : "make its folder writable"}, then restart the query.`
      : `The metadata log file ${path} ${message}. Restore it from a backup, or start over with a new checkpoint (a source) or output folder (a sink).`,
    cause
  })
}

/** A compactible metadata log of entries `A` in one folder. */
export class CompactibleFileStreamLog<A> {
  readonly dir: string
  readonly settings: LogSettings
  readonly codec: EntryCodec<A>
  #interval: number | undefined

  constructor(dir: string, settings: LogSettings, codec: EntryCodec<A>) {
    this.dir = dir
    this.settings = settings
    this.codec = codec
  }

  /** Runs a synchronous file operation, turning a throw into a `ConnectorError` naming the path. */
  private io<B>(path: string, what: string, f: () => B): Effect.Effect<B, ConnectorError> {
    return Effect.try({
      try: f,
      catch: (e) =>
        e instanceof ConnectorError
          ? e
          : e instanceof LogChecksumMismatch
            ? logError(this.settings.connector, path, `is damaged: ${e.why} (checked against ${crcPathOf(path)})`)
            : logError(
              this.settings.connector,
              path,
              `could not be ${what}: ${e instanceof Error ? e.message : String(e)}`,
              e
            )
    })
  }

  private batchNames(): Effect.Effect<ReadonlyArray<readonly [number, string]>, ConnectorError> {
    return this.io(this.dir, "listed", () => {
      const out: Array<readonly [number, string]> = []
      for (const name of this.settings.files.list(this.dir)) {
        const id = batchIdOfName(name)
        if (id !== undefined) out.push([id, name])
      }
      return out.sort((a, b) => a[0] - b[0])
    })
  }

  /** Spark's `compactInterval`: the default, or one compatible with the `.compact` files there. */
  compactInterval(): Effect.Effect<number, ConnectorError> {
    if (this.#interval !== undefined) return Effect.succeed(this.#interval)
    return Effect.map(this.batchNames(), (names) => {
      const compacts = names
        .filter(([, n]) => n.endsWith(COMPACT_FILE_SUFFIX))
        .map(([id]) => id)
        .sort((a, b) => b - a)
      let interval = this.settings.defaultCompactInterval
      if (compacts.length >= 2) interval = compacts[0] - compacts[1]
      else if (compacts.length === 1) {
        // Of the intervals the compaction allows, the first under which none of the plain batch
        // files written after it falls on a compaction batch: those files were written with the
        // old interval, and a new one must not expect a `.compact` file where there is none.
        const latest = names.length === 0 ? compacts[0] : names[names.length - 1][0]
        const candidates = compactIntervalCandidates(interval, compacts[0])
        interval = candidates.find((c) => latest - compacts[0] < c) ?? candidates[0]
      }
      this.#interval = interval
      return interval
    })
  }

  /** The file of batch `batchId` (`<id>` or `<id>.compact`). */
  pathOf(batchId: number): Effect.Effect<string, ConnectorError> {
    return Effect.map(this.compactInterval(), (interval) =>
      nodePath.join(
        this.dir,
        isCompactionBatch(batchId, interval) ? `${batchId}${COMPACT_FILE_SUFFIX}` : String(batchId)
      )
    )
  }

  /** The highest batch id with a log file, or -1. */
  latestBatchId(): Effect.Effect<number, ConnectorError> {
    return Effect.map(this.batchNames(), (names) => (names.length === 0 ? -1 : names[names.length - 1][0]))
  }

  private parse(path: string, text: string): Effect.Effect<ReadonlyArray<A>, ConnectorError> {
    const connector = this.settings.connector
    return Effect.suspend(() => {
      const lines = text.split("\n")
      const version = lines[0]
      // Spark's `validateVersion`
      const m = version === undefined ? null : /^v(\d+)$/.exec(version.trim())
      if (m === null)
        return Effect.fail(
          logError(connector, path, `is corrupt: expected a version line like "v1", found ${JSON.stringify(version)}`)
        )
      if (Number(m[1]) > 1) {
        return Effect.fail(
          logError(
            connector,
            path,
            `has log version v${m[1]}, but the maximum supported log version is v1: it was produced by a newer version and cannot be read by this one. Please upgrade.`
          )
        )
      }
      const out: Array<A> = []
      for (let i = 1; i < lines.length; i++) {
        const line = lines[i]
        if (line.trim() === "") continue
        let json: unknown
        try {
          json = JSON.parse(line)
        } catch (e) {
          return Effect.fail(logError(connector, path, `is corrupt: line ${i + 1} is not JSON`, e))
        }
        const a = this.codec.decode(json)
        if (a === undefined)
          return Effect.fail(logError(connector, path, `is corrupt: line ${i + 1} is not a log entry`))
        out.push(a)
      }
      return Effect.succeed(out)
    })
  }

  /** The entries in batch `batchId`'s file (all entries so far for a compaction file), if it exists. */
  get(batchId: number): Effect.Effect<ReadonlyArray<A> | undefined, ConnectorError> {
    return Effect.flatMap(this.pathOf(batchId), (path) =>
      Effect.flatMap(
        this.io(path, "read", () => this.settings.files.read(path)),
        (text) => (text === undefined ? Effect.succeed(undefined) : this.parse(path, text))
      )
    )
  }

  /**
   * Writes batch `batchId` (compacting on a compaction batch: the previous compaction and the
   * batches after it, then `entries`); `false` when the batch is already there.
   */
  add(batchId: number, entries: ReadonlyArray<A>): Effect.Effect<boolean, ConnectorError> {
    const self = this
    return Effect.gen(function* () {
      const interval = yield* self.compactInterval()
      const path = yield* self.pathOf(batchId)
      let all: ReadonlyArray<A> = entries
      if (isCompactionBatch(batchId, interval)) {
        const keep = yield* self.retention()
        const merged: Array<A> = []
        for (const id of validBatchesBeforeCompaction(batchId, interval)) {
          const got = yield* self.get(id)
          if (got === undefined) {
            return yield* logError(
              self.settings.connector,
              yield* self.pathOf(id),
              `doesn't exist when compacting batch ${batchId} (compactInterval: ${interval})`
            )
          }
          for (const a of got) if (keep(a)) merged.push(a)
        }
        for (const a of entries) if (keep(a)) merged.push(a)
        all = merged
      }
      const text = ["v1", ...all.map(self.codec.encode)].join("\n")
      const added = yield* self.io(path, "written", () => self.settings.files.writeNew(path, text))
      if (added && self.settings.deleteExpired) yield* self.deleteExpired(batchId, interval)
      return added
    })
  }

  /** Every entry of the log: the latest compaction file and the batch files after it. */
  allEntries(): Effect.Effect<ReadonlyArray<A>, ConnectorError> {
    const self = this
    return Effect.gen(function* () {
      const latest = yield* self.latestBatchId()
      if (latest < 0) return []
      const interval = yield* self.compactInterval()
      const keep = yield* self.retention()
      const out: Array<A> = []
      for (const id of allValidBatches(latest, interval)) {
        const got = yield* self.get(id)
        if (got === undefined) {
          return yield* logError(
            self.settings.connector,
            yield* self.pathOf(id),
            `doesn't exist (latestId: ${latest}, compactInterval: ${interval})`
          )
        }
        for (const a of got) if (keep(a)) out.push(a)
      }
      return out
    })
  }

  /** The `retain` test at the current time (every entry when there is none). */
  private retention(): Effect.Effect<(a: A) => boolean> {
    const retain = this.settings.retain
    const timeOf = this.codec.timeOf
    if (retain === undefined || timeOf === undefined) return Effect.succeed(() => true)
    return Effect.map(Clock.currentTimeMillis, (now) => (a: A) => retain(timeOf(a), now))
  }

  /** Spark's `deleteExpiredLog`: files before the compaction keeping `minBatchesToRetain` batches. */
  private deleteExpired(currentBatchId: number, interval: number): Effect.Effect<void, ConnectorError> {
    const self = this
    return Effect.gen(function* () {
      const minBatchId = currentBatchId + 1 - self.settings.minBatchesToRetain
      if (interval > minBatchId) return
      const minCompactionBatchId = minBatchId - (minBatchId % interval) - 1
      const now = yield* Clock.currentTimeMillis
      const expiredTime = now - self.settings.cleanupDelayMs
      for (const [id, name] of yield* self.batchNames()) {
        if (id >= minCompactionBatchId) continue
        const path = nodePath.join(self.dir, name)
        yield* self.io(path, "removed", () => {
          const mtime = self.settings.files.modificationTime(path)
          if (mtime !== undefined && mtime <= expiredTime) self.settings.files.remove(path)
        })
      }
    })
  }
}

// ---- paths as Spark writes them -----------------------------------------------------------

/** Characters Java's `URI` keeps as they are in a path (RFC 2396 unreserved, punct and `/`). */
const KEEP = /[A-Za-z0-9\-_.!~*'();:@&=+$,/]/

/**
 * A local absolute path as the URI string Spark logs (`SparkPath.urlEncoded` of a Hadoop path):
 * `file:/dir/a%20b.json`. Non-ASCII characters stay as they are, as Java's `URI` leaves them.
 */
export const toUrlPath = (absPath: string): string => {
  let out = "file:"
  for (const ch of absPath) {
    if (KEEP.test(ch) || ch.charCodeAt(0) > 0x7f) out += ch
    else for (const b of new TextEncoder().encode(ch)) out += `%${b.toString(16).toUpperCase().padStart(2, "0")}`
  }
  return out
}

/** The local path of a logged URI string (`file:/…`, `file:///…`, or a plain path). */
export const fromUrlPath = (url: string): string => {
  let s = url
  if (s.startsWith("file://")) s = s.slice("file://".length)
  else if (s.startsWith("file:")) s = s.slice("file:".length)
  try {
    return decodeURIComponent(s)
  } catch {
    return s
  }
}

// ---- the two logs ------------------------------------------------------------------------

/** One file of Spark's `FileStreamSourceLog` (`FileStreamSource.FileEntry`). */
export interface SourceFileEntry {
  /** The URI string of the file (`file:/…`). */
  readonly path: string
  /** Its modification time when it was seen (epoch ms). */
  readonly timestamp: number
  /** The source log batch (offset) that took it. */
  readonly batchId: number
}

const isWhole = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n)

/** The JSON lines of `FileStreamSourceLog`, fields in Spark's order. */
export const sourceEntryCodec: EntryCodec<SourceFileEntry> = {
  encode: (e) => JSON.stringify({ path: e.path, timestamp: e.timestamp, batchId: e.batchId }),
  decode: (json) => {
    const o = json as Partial<SourceFileEntry> | null
    if (
      o === null ||
      typeof o !== "object" ||
      typeof o.path !== "string" ||
      !isWhole(o.timestamp) ||
      !isWhole(o.batchId)
    ) {
      return undefined
    }
    return { path: o.path, timestamp: o.timestamp, batchId: o.batchId }
  }
}

/** One file of Spark's `FileStreamSinkLog` (`SinkFileStatus`). */
export interface SinkFileStatus {
  readonly path: string
  readonly size: number
  readonly isDir: boolean
  readonly modificationTime: number
  readonly blockReplication: number
  readonly blockSize: number
  /** `add` (Spark 2 also wrote `delete`, which readers still honour). */
  readonly action: string
}

/** The JSON lines of `FileStreamSinkLog`, fields in Spark's order. */
export const sinkStatusCodec: EntryCodec<SinkFileStatus> = {
  timeOf: (s) => s.modificationTime,
  encode: (s) =>
    JSON.stringify({
      path: s.path,
      size: s.size,
      isDir: s.isDir,
      modificationTime: s.modificationTime,
      blockReplication: s.blockReplication,
      blockSize: s.blockSize,
      action: s.action
    }),
  decode: (json) => {
    const o = json as Partial<SinkFileStatus> | null
    if (o === null || typeof o !== "object" || typeof o.path !== "string" || !isWhole(o.size)) return undefined
    return {
      path: o.path,
      size: o.size,
      isDir: o.isDir === true,
      modificationTime: isWhole(o.modificationTime) ? o.modificationTime : 0,
      blockReplication: isWhole(o.blockReplication) ? o.blockReplication : 1,
      blockSize: isWhole(o.blockSize) ? o.blockSize : 0,
      action: typeof o.action === "string" ? o.action : "add"
    }
  }
}

/** Spark's `FileStreamSink.metadataDir`. */
export const SINK_METADATA_DIR = "_spark_metadata"

/** The sink log of an output folder. */
export const sinkLog = (outputDir: string, settings: LogSettings): CompactibleFileStreamLog<SinkFileStatus> =>
  new CompactibleFileStreamLog(nodePath.join(outputDir, SINK_METADATA_DIR), settings, sinkStatusCodec)

/**
 * Spark's `FileStreamSink.ancestorIsMetadataDirectory`: the path, or a folder above it, is a
 * sink's `_spark_metadata`. A batch read drops such root paths (`InMemoryFileIndex.rootPaths`),
 * so a glob of every folder of a sink's output does not pick up its log files.
 */
export const ancestorIsMetadataDirectory = (p: string): boolean =>
  p.split(/[\\/]+/).some((segment) => segment === SINK_METADATA_DIR)

/**
 * Spark's `FileStreamSink.hasMetadata` for one path: a directory holding `_spark_metadata`.
 * (Several paths, or a glob, never count.)
 */
export const hasSinkMetadata = (dir: string): boolean => {
  try {
    return fs.statSync(dir).isDirectory() && fs.existsSync(nodePath.join(dir, SINK_METADATA_DIR))
  } catch {
    return false
  }
}

/**
 * The files a sink folder's log lists (Spark's `MetadataLogFileIndex.allFilesFromLog`):
 * directories and entries whose action is `delete` are left out.
 */
export const sinkLogFiles = (
  outputDir: string,
  connector: string
): Effect.Effect<ReadonlyArray<SinkFileStatus>, ConnectorError> =>
  Effect.map(sinkLog(outputDir, { ...defaultLogSettings(connector), deleteExpired: false }).allEntries(), visibleFiles)

/** The data files of a sink log's entries: directories and files a `delete` entry removed are left out. */
export const visibleFiles = (all: ReadonlyArray<SinkFileStatus>): ReadonlyArray<SinkFileStatus> => {
  const deleted = new Set(all.filter((s) => s.action === "delete").map((s) => s.path))
  return all.filter((s) => !s.isDir && s.action !== "delete" && !deleted.has(s.path))
}

/**
 * Beyond Spark: every file a sink log lists exists with the size logged (Spark's
 * `SinkFileStatus.size`). A missing file means the folder was moved or copied (the log keeps
 * absolute paths) or the file was deleted; another size means it was damaged or replaced.
 * Either fails naming the file: a read of the folder never returns fewer or other rows than the
 * log promises.
 *
 * @since 0.1.0
 */
export const checkSinkFiles = (
  connector: string,
  outputDir: string,
  statuses: ReadonlyArray<SinkFileStatus>
): Effect.Effect<void, ConnectorError> =>
  Effect.suspend(() => {
    const metadata = nodePath.join(outputDir, SINK_METADATA_DIR)
    for (const s of statuses) {
      const file = fromUrlPath(s.path)
      let size: number | undefined
      try {
        size = fs.statSync(file).size
      } catch (e) {
        if (code(e) !== "ENOENT" && code(e) !== "ENOTDIR") {
          return Effect.fail(
            new ConnectorError({
              connector,
              domain: "external",
              retryable: true,
              message: `Could not read ${file}, listed in ${metadata}: ${e instanceof Error ? e.message : String(e)}`,
              cause: e
            })
          )
        }
      }
      if (size === undefined) {
        const outside = !file.startsWith(`${nodePath.resolve(outputDir)}${nodePath.sep}`)
        return Effect.fail(
          new ConnectorError({
            connector,
            domain: "user",
            retryable: false,
            message:
              `The file ${file}, listed in the sink log ${metadata}, does not exist. ` +
              (outside
                ? `The log records absolute paths, and this one is outside ${outputDir}: the folder was moved or copied from where the sink wrote it. Read it where it was written, or read the files it holds now without the log: a glob path such as ${nodePath.join(outputDir, "*")} (with the basePath option for partition columns) or, for a stream, spark.sql.streaming.fileStreamSink.ignoreMetadata=true — which also reads files of failed batches.`
                : `It was deleted: restore it, or read the files the folder holds now without the log: a glob path such as ${nodePath.join(outputDir, "*")} or, for a stream, spark.sql.streaming.fileStreamSink.ignoreMetadata=true — which also reads files of failed batches.`)
          })
        )
      }
      if (size !== s.size) {
        return Effect.fail(
          new ConnectorError({
            connector,
            domain: "user",
            retryable: false,
            message: `The file ${file} has ${size} bytes, but the sink log ${metadata} recorded ${s.size} when the sink wrote it: it was damaged or replaced. Restore it from a backup.`
          })
        )
      }
    }
    return Effect.void
  })
