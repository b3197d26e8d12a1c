/**
 * Which files a batch file read covers, following Spark's `DataSource.checkAndGlobPathIfNecessary`
 * and `InMemoryFileIndex`:
 *
 * - a path is a file, a directory or a Hadoop glob (`*`, `?`, `[...]`, `{a,b}` in any segment);
 *   a path that does not exist, or a glob that matches nothing, fails with `PATH_NOT_FOUND`;
 * - directories are listed recursively, skipping names that start with `_` (unless they hold a
 *   `=`) or `.`, and names ending in `._COPYING_`;
 * - without partition columns only the files directly inside the given directories are read,
 *   unless `recursiveFileLookup` is set (which also turns partition discovery off);
 * - with `key=value` directories the files of those leaf directories are read, each with its
 *   partition values (see `PartitionDiscovery.ts`); `basePath` says where discovery stops;
 * - `pathGlobFilter` keeps only the files whose name matches a glob;
 * - a single directory written by the streaming file sink (it holds `_spark_metadata`) reads the
 *   files its metadata log lists, not what the directory holds (Spark's `MetadataLogFileIndex`).
 *
 * Files are returned sorted by path, so reads are deterministic (Spark orders them by size for
 * its tasks, which no query may rely on).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import type { Stats } from "node:fs"
import * as nodePath from "node:path"
import type * as T from "../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import { type Options, option } from "../../core/Formats.ts"
import type { InternalRow } from "../../core/Row.ts"
import { OptionReader, invalidOption, parseOptions } from "./FileSourceOptions.ts"
import {
  ancestorIsMetadataDirectory,
  checkSinkFiles,
  fromUrlPath,
  hasSinkMetadata,
  sinkLogFiles
} from "./FileStreamLog.ts"
import { discoverPartitions } from "./PartitionDiscovery.ts"

/** One file to read, with the values of the partition columns of its directory. */
export interface InputFile {
  /** Absolute local path. */
  readonly path: string
  readonly size: number
  /** Last modification, epoch milliseconds (the file source orders new files by it). */
  readonly modificationTime: number
  /** Values of `FileIndex.partitionSchema`'s columns (empty when there are none). */
  readonly partitionValues: InternalRow
}

/** The files of a read and the partition columns discovered from their directories. */
export interface FileIndex {
  readonly files: ReadonlyArray<InputFile>
  readonly partitionSchema: T.StructType
  /** The files are those a streaming file sink's `_spark_metadata` log lists (Spark's `MetadataLogFileIndex`). */
  readonly fromSinkLog: boolean
}

/** How Spark (Hadoop) prints a local path in messages: `file:/abs/path`. */
export const qualifiedName = (absPath: string): string => `file:${absPath}`

/** Spark's `PATH_NOT_FOUND` error. */
export const pathNotFound = (absPath: string): AnalysisError =>
  new AnalysisError({
    reason: "PathNotFound",
    errorClass: "PATH_NOT_FOUND",
    message: `[PATH_NOT_FOUND] Path does not exist: ${qualifiedName(absPath)}.`
  })

/** An I/O failure on a path, as a `ConnectorError` naming it. */
export const ioError = (connector: string, absPath: string, cause: unknown): ConnectorError => {
  const code = (cause as { code?: string } | undefined)?.code
  const detail = cause instanceof Error ? cause.message : String(cause)
  return new ConnectorError({
    connector,
    domain: "external",
    // a missing permission or a vanished file does not come back by retrying
    retryable: !(code === "EACCES" || code === "EPERM" || code === "ENOENT" || code === "ENOTDIR"),
    message: `[FAILED_READ_FILE.NO_HINT] Encountered error while reading file ${qualifiedName(absPath)}. ${detail}`,
    cause
  })
}

/** Spark's `InMemoryFileIndex.shouldFilterOutPathName`, for data files and the directories on the way. */
export const isHiddenName = (name: string): boolean => {
  const exclude = (name.startsWith("_") && !name.includes("=")) || name.startsWith(".") || name.endsWith("._COPYING_")
  return exclude
}

/** Spark's `SparkHadoopUtil.isGlobPath`. */
export const isGlobPath = (p: string): boolean => /[{}[\]*?\\]/.test(p)

/**
 * Compiles a Hadoop glob (`GlobPattern`) to a regular expression matching a whole name:
 * `*`, `?`, `[abc]`, `[a-z]`, `[!a]`/`[^a]`, `{a,b}` and `\` escapes. `undefined` when the
 * pattern is malformed.
 */
export const globToRegExp = (glob: string): RegExp | undefined => {
  let re = ""
  let braces = 0
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]
    switch (c) {
      case "\\":
        if (i + 1 >= glob.length) return undefined
        re += escapeRe(glob[++i])
        break
      case "*":
        re += "[^/]*"
        break
      case "?":
        re += "[^/]"
        break
      case "{":
        braces++
        re += "(?:"
        break
      case "}":
        if (braces === 0) return undefined
        braces--
        re += ")"
        break
      case ",":
        re += braces > 0 ? "|" : ","
        break
      case "[": {
        const close = glob.indexOf("]", i + 2)
        if (close < 0) return undefined
        let body = glob.slice(i + 1, close)
        let negate = false
        if (body.startsWith("!") || body.startsWith("^")) {
          negate = true
          body = body.slice(1)
        }
        re += `[${negate ? "^" : ""}${body.replace(/[\\\]^[]/g, (m) => `\\${m}`)}]`
        i = close
        break
      }
      default:
        re += escapeRe(c)
    }
  }
  if (braces !== 0) return undefined
  try {
    return new RegExp(`^${re}$`, "s")
  } catch {
    return undefined
  }
}

const escapeRe = (c: string): string => c.replace(/[.*+?^${}()|[\]\\/]/g, (m) => `\\${m}`)

/** Whether a path segment holds an unescaped glob character. */
const hasGlobChars = (seg: string): boolean => {
  for (let i = 0; i < seg.length; i++) {
    const c = seg[i]
    if (c === "\\") i++
    else if ("{}[]*?".includes(c)) return true
  }
  return false
}

/** Removes glob escapes from a segment without glob characters. */
const unescapeGlob = (s: string): string => s.replace(/\\(.)/g, "$1")

/**
 * Turns a user path into an absolute local path: `file:` URIs are accepted, relative paths
 * resolve against the working directory, other file systems are refused.
 */
const toLocalPath = (p: string): string | AnalysisError => {
  let s = p
  if (s.startsWith("file://")) s = s.slice("file://".length)
  else if (s.startsWith("file:")) s = s.slice("file:".length)
  else if (/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(s)) {
    return new AnalysisError({
      reason: "InvalidArgument",
      errorClass: "UNSUPPORTED_FILE_SYSTEM",
      message: `Cannot read ${p}: tributary reads files from the local file system only (paths or file: URIs).`
    })
  }
  if (s.length === 0) {
    return new AnalysisError({ reason: "InvalidArgument", message: "Can not create a Path from an empty string" })
  }
  return nodePath.resolve(s)
}

interface Root {
  readonly path: string
  readonly isDir: boolean
  readonly size: number
  readonly mtime: number
}

// Listing is synchronous (inside Effect.try): a streaming file source resolves its schema and
// partition columns when `readStream...load()` is called, which is synchronous, and local
// directory listings are short.
const statOrUndefined = (connector: string, p: string): Effect.Effect<Stats | undefined, ConnectorError> =>
  Effect.try({
    try: () => fs.statSync(p),
    catch: (e) => e
  }).pipe(
    Effect.catch((e) =>
      (e as { code?: string }).code === "ENOENT" || (e as { code?: string }).code === "ENOTDIR"
        ? Effect.succeed(undefined)
        : Effect.fail(ioError(connector, p, e))
    )
  )

const readDir = (connector: string, dir: string): Effect.Effect<ReadonlyArray<string>, ConnectorError> =>
  Effect.try({
    try: () => fs.readdirSync(dir).sort(),
    catch: (e) => e
  }).pipe(
    Effect.catch((e) =>
      // a directory removed while listing is skipped, as Hadoop's listing does for non-root paths
      (e as { code?: string }).code === "ENOENT" ? Effect.succeed([]) : Effect.fail(ioError(connector, dir, e))
    )
  )

/** Hadoop's `globStatus`: expands a glob segment by segment; results sorted. */
const expandGlob = (
  connector: string,
  pattern: string
): Effect.Effect<ReadonlyArray<string>, AnalysisError | ConnectorError> =>
  Effect.gen(function* () {
    const segments = pattern.split("/").filter((s) => s.length > 0)
    let candidates: Array<string> = ["/"]
    for (const seg of segments) {
      const next: Array<string> = []
      if (!hasGlobChars(seg)) {
        const literal = unescapeGlob(seg)
        for (const c of candidates) next.push(nodePath.join(c, literal))
      } else {
        const re = globToRegExp(seg)
        if (re === undefined) {
          return yield* Effect.fail(
            new AnalysisError({ reason: "InvalidArgument", message: `Illegal file pattern: ${pattern}` })
          )
        }
        for (const c of candidates) {
          const st = yield* statOrUndefined(connector, c)
          if (st === undefined || !st.isDirectory()) continue
          for (const name of yield* readDir(connector, c)) if (re.test(name)) next.push(nodePath.join(c, name))
        }
      }
      candidates = next
    }
    const out: Array<string> = []
    for (const c of candidates) if ((yield* statOrUndefined(connector, c)) !== undefined) out.push(c)
    return out.sort()
  })

interface Listed {
  readonly path: string
  readonly dir: string
  readonly size: number
  readonly mtime: number
}

/** All data files below a directory (recursively), skipping hidden names. */
const listRecursively = (connector: string, dir: string, out: Array<Listed>): Effect.Effect<void, ConnectorError> =>
  Effect.gen(function* () {
    for (const name of yield* readDir(connector, dir)) {
      if (isHiddenName(name)) continue
      const p = nodePath.join(dir, name)
      const st = yield* statOrUndefined(connector, p)
      if (st === undefined) continue
      if (st.isDirectory()) yield* listRecursively(connector, p, out)
      else out.push({ path: p, dir, size: st.size, mtime: Math.floor(st.mtimeMs) })
    }
  })

/**
 * Lists the files of `paths` for the format `connector` (`json`, `csv`, …) with Spark's rules
 * (see the module doc), and discovers partition columns. `userSchema` gives the types of
 * partition columns it names.
 */
export const listFiles = (
  connector: string,
  paths: ReadonlyArray<string>,
  options: Options,
  userSchema: T.StructType | undefined,
  /** Spark's `spark.sql.streaming.fileStreamSink.ignoreMetadata` (SPARK-35565): list a sink folder as any other. */
  ignoreSinkMetadata = false
): Effect.Effect<FileIndex, AnalysisError | ConnectorError> =>
  Effect.gen(function* () {
    const opts = yield* parseOptions(() => {
      const r = new OptionReader(connector, options)
      const filter = r.get("pathGlobFilter")
      const filterRe = filter === undefined ? undefined : globToRegExp(filter)
      if (filter !== undefined && filterRe === undefined) {
        throw invalidOption(connector, "pathGlobFilter", filter, "it is not a valid glob pattern")
      }
      return { recursive: r.bool("recursiveFileLookup", false), filterRe, basePath: r.get("basePath") }
    })

    // Spark's `DataSource`: the `path` option is one more path
    const pathOption = option(options, "path")
    const allPaths = pathOption === undefined ? paths : [...paths, pathOption]
    const roots: Array<Root> = []
    for (const p of allPaths) {
      const abs = toLocalPath(p)
      if (abs instanceof AnalysisError) return yield* Effect.fail(abs)
      const matches = isGlobPath(abs) ? yield* expandGlob(connector, abs) : [abs]
      if (matches.length === 0) return yield* Effect.fail(pathNotFound(abs))
      for (const m of matches) {
        if (ancestorIsMetadataDirectory(m)) continue
        const st = yield* statOrUndefined(connector, m)
        if (st === undefined) return yield* Effect.fail(pathNotFound(m))
        roots.push({ path: m, isDir: st.isDirectory(), size: st.size, mtime: Math.floor(st.mtimeMs) })
      }
    }

    // every data file under the roots; a root file is filtered by its own name too
    const all: Array<Listed> = []
    const fromSinkLog =
      !ignoreSinkMetadata &&
      allPaths.length === 1 &&
      roots.length === 1 &&
      !isGlobPath(allPaths[0]) &&
      hasSinkMetadata(roots[0].path)
    if (fromSinkLog) {
      // Spark's `MetadataLogFileIndex`: a folder written by the streaming file sink holds
      // exactly the files its `_spark_metadata` log lists (files of failed batches are not
      // data), at the paths logged — outside the folder when it was copied or moved. Beyond
      // Spark, each file must exist with the size logged, so a moved folder or a damaged file
      // fails naming the file instead of reading nothing or something else.
      const statuses = yield* sinkLogFiles(roots[0].path, connector)
      yield* checkSinkFiles(connector, roots[0].path, statuses)
      for (const s of statuses) {
        const p = fromUrlPath(s.path)
        all.push({ path: p, dir: nodePath.dirname(p), size: s.size, mtime: s.modificationTime })
      }
    } else {
      for (const root of roots) {
        if (root.isDir) yield* listRecursively(connector, root.path, all)
        else if (!isHiddenName(nodePath.basename(root.path))) {
          all.push({ path: root.path, dir: nodePath.dirname(root.path), size: root.size, mtime: root.mtime })
        }
      }
    }
    const matching =
      opts.filterRe === undefined ? all : all.filter((f) => opts.filterRe!.test(nodePath.basename(f.path)))
    const noPartitions: T.StructType = { _tag: "struct", fields: [] }
    const finish = (files: ReadonlyArray<InputFile>, partitionSchema: T.StructType): FileIndex => ({
      files: dedupe(files),
      partitionSchema,
      fromSinkLog
    })

    if (opts.recursive) {
      return finish(
        matching.map((f) => ({ path: f.path, size: f.size, modificationTime: f.mtime, partitionValues: [] })),
        noPartitions
      )
    }

    // Spark's `PartitioningAwareFileIndex.basePaths`
    let basePaths: Set<string>
    if (opts.basePath !== undefined) {
      const base = toLocalPath(opts.basePath)
      if (base instanceof AnalysisError) return yield* Effect.fail(base)
      const st = yield* statOrUndefined(connector, base)
      if (st === undefined) return yield* Effect.fail(pathNotFound(base))
      if (!st.isDirectory()) {
        return yield* Effect.fail(
          new AnalysisError({ reason: "InvalidArgument", message: "Option 'basePath' must be a directory" })
        )
      }
      for (const root of roots) {
        if (!root.path.startsWith(base)) {
          return yield* Effect.fail(
            new AnalysisError({
              reason: "InvalidArgument",
              message: `Wrong basePath ${opts.basePath} for the root path: ${qualifiedName(root.path)}`
            })
          )
        }
      }
      basePaths = new Set([base])
    } else {
      basePaths = new Set(roots.map((r) => (r.isDir ? r.path : nodePath.dirname(r.path))))
    }

    const leafDirs = [...new Set(matching.map((f) => f.dir))].sort()
    const spec = discoverPartitions(leafDirs, basePaths, userSchema)
    if (spec instanceof AnalysisError) return yield* Effect.fail(spec)

    if (spec.schema.fields.length === 0) {
      // not partitioned: the root files and the files directly inside the root directories
      const rootDirs = new Set(roots.filter((r) => r.isDir).map((r) => r.path))
      const rootFiles = new Set(roots.filter((r) => !r.isDir).map((r) => r.path))
      return finish(
        matching
          .filter((f) => fromSinkLog || rootFiles.has(f.path) || rootDirs.has(f.dir))
          .map((f) => ({ path: f.path, size: f.size, modificationTime: f.mtime, partitionValues: [] })),
        noPartitions
      )
    }
    const files: Array<InputFile> = []
    for (const f of matching) {
      const values = spec.values.get(f.dir)
      if (values !== undefined) {
        files.push({ path: f.path, size: f.size, modificationTime: f.mtime, partitionValues: values })
      }
    }
    return finish(files, spec.schema)
  })

const dedupe = (files: ReadonlyArray<InputFile>): ReadonlyArray<InputFile> => {
  const seen = new Set<string>()
  const out: Array<InputFile> = []
  for (const f of [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    if (seen.has(f.path)) continue
    seen.add(f.path)
    out.push(f)
  }
  return out
}
