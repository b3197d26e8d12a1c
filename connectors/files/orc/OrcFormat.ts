/**
 * The `orc` file format: batch reads (`spark.read.format("orc")` / `.orc(path)`), the streaming
 * file source and the file sink (`writeStream.format("orc")`), on this folder's ORC reader and
 * writer (no ORC library exists for JavaScript).
 *
 * - Schema: from the files' footers, as Spark's `OrcUtils.readSchema` (the first file with
 *   fields; all files merged with `mergeSchema`); ORC types map to tributary's as `OrcType.ts`
 *   says. Columns are matched by name, case-insensitively (`spark.sql.caseSensitive=false`;
 *   two file columns matching one name fail), or by position when the file's names are Hive's
 *   `_col0`, `_col1`, …; a column a file lacks reads as null; an int column read as long or
 *   double, or a long as double, is widened, a long read as int narrowed (null when it does not
 *   fit, as ORC's schema evolution does); other mismatches fail the read.
 * - Writing: `compression` (or `orc.compress`): `zstd` (Spark 4's default), `snappy`, `zlib`,
 *   `lz4`, `none`/`uncompressed`, `brotli`; files are named `part-….c000.zstd.orc` as Spark
 *   names them; `orc.write.format` `0.11` writes RLE v1, and `orc.dictionary.key.threshold`
 *   and `orc.compress.size` are honoured as in ORC's Java writer.
 *
 * @example
 * ```ts
 * import { OrcFormat } from "./OrcFormat.ts"
 * OrcFormat.resolveSchema(["/warehouse/events"], undefined, { mergeSchema: "true" })
 * ```
 * @since 0.1.0
 */
import * as fs from "node:fs"
import { Effect } from "effect"
import * as T from "../../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../../core/Errors.ts"
import { type BatchFormat, type Options, option } from "../../../core/Formats.ts"
import type { InternalRow } from "../../../core/Row.ts"
import { type InputFile, qualifiedName } from "../FileListing.ts"
import { type FileReader, makeFileFormat, noResource } from "../FileSource.ts"
import { checkSupportedTypes, invalidOption, OptionReader, parseOptions, sqlType } from "../FileSourceOptions.ts"
import type { FileWriter, FileWriterFormat } from "../FileWriters.ts"
import { OrcCorruption } from "./Bytes.ts"
import { checkCodec, OrcUnsupported } from "./Compression.ts"
import { Compression } from "./OrcProto.ts"
import { readOrc, readTail, rootFields } from "./OrcReader.ts"
import { fromSparkType, type OrcType, orcTypeString, toSparkType } from "./OrcType.ts"
import { writeOrc } from "./OrcWriter.ts"

interface OrcReadOptions {
  readonly mergeSchema: boolean
}

const parseReadOptions = (options: Options): Effect.Effect<OrcReadOptions, AnalysisError> =>
  parseOptions(() => {
    const r = new OptionReader("orc", options)
    return { mergeSchema: r.bool("mergeSchema", false) }
  })

/** Spark's `OrcFileFormat.supportDataType`: atomic types (not null, not the calendar interval) and containers of them. */
export const orcSupports = (t: T.DataType): boolean => {
  switch (t._tag) {
    case "null":
    case "calendarInterval":
      return false
    case "struct":
      return t.fields.every((f) => orcSupports(f.dataType))
    case "array":
      return orcSupports(t.elementType)
    case "map":
      return orcSupports(t.keyType) && orcSupports(t.valueType)
    default:
      return true
  }
}

const detail = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

const isIoError = (cause: unknown): boolean => typeof (cause as { code?: unknown } | undefined)?.code === "string"

/**
 * A failure reading `path` as a `ConnectorError` naming the file (Spark's `FAILED_READ_FILE` /
 * `CANNOT_READ_FILE_FOOTER`): the file system's fault (`external`) or the data's (`user`).
 */
export const orcReadError = (path: string, cause: unknown, footer = false): ConnectorError => {
  const external = isIoError(cause)
  const what =
    cause instanceof OrcCorruption
      ? `The file is not a valid ORC file: ${cause.message}.`
      : cause instanceof OrcUnsupported
        ? `${cause.message}.`
        : detail(cause)
  return new ConnectorError({
    connector: "orc",
    domain: external ? "external" : "user",
    retryable: false,
    message: footer
      ? `[CANNOT_READ_FILE_FOOTER] Could not read footer for file: ${qualifiedName(path)}. ${what}`
      : `[FAILED_READ_FILE.NO_HINT] Encountered error while reading file ${qualifiedName(path)}. ${what}`,
    cause
  })
}

const readBytes = (path: string): Uint8Array => {
  const b = fs.readFileSync(path)
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength)
}

/** The data schema of one file (`undefined` for a file without fields, which Spark skips). */
const fileSchema = (file: InputFile): Effect.Effect<T.StructType | undefined, ConnectorError> =>
  Effect.try({
    try: () => {
      const fields = rootFields(readTail(readBytes(file.path)))
      if (fields.length === 0) return undefined
      const out: Array<T.StructField> = []
      for (const f of fields) {
        const t = toSparkType(f.type)
        if (typeof t === "string")
          throw new OrcUnsupported(`tributary cannot read the ORC type ${t} of column \`${f.name}\``)
        out.push(T.field(f.name, t, true))
      }
      return T.struct(out)
    },
    catch: (e) => orcReadError(file.path, e, true)
  })

const mergeError = (message: string): ConnectorError =>
  new ConnectorError({ connector: "orc", domain: "user", retryable: false, message })

/** Spark's `StructType.merge` for `mergeSchema`: fields by name, equal types (recursively). */
const mergeTypes = (a: T.DataType, b: T.DataType, name: string): T.DataType | ConnectorError => {
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
  _: undefined,
  files: ReadonlyArray<InputFile>,
  o: OrcReadOptions
): Effect.Effect<T.StructType, AnalysisError | ConnectorError> =>
  Effect.gen(function* () {
    let merged: T.DataType | undefined
    for (const file of files) {
      if (file.size === 0) continue
      const s = yield* fileSchema(file)
      if (s === undefined) continue
      if (!o.mergeSchema) return s
      const m: T.DataType | ConnectorError = merged === undefined ? s : mergeTypes(merged, s, "")
      if (m instanceof ConnectorError) return yield* Effect.fail(m)
      merged = m
    }
    if (merged === undefined) {
      return yield* new AnalysisError({
        reason: "SchemaRequired",
        errorClass: "UNABLE_TO_INFER_SCHEMA",
        message: "[UNABLE_TO_INFER_SCHEMA] Unable to infer schema for ORC. It must be specified manually."
      })
    }
    return merged as T.StructType
  })

type Adapt = (v: unknown) => unknown

/**
 * How a value read as `from` becomes one of `to` (identity, ORC's integer widening and narrowing,
 * integers to double, structs by name); a string says why not.
 */
const adapt = (from: T.DataType, to: T.DataType): Adapt | string => {
  switch (to._tag) {
    case "struct": {
      if (from._tag !== "struct") return sqlType(from)
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
      return (v) => (v === null ? null : parts.map(([i, a]) => (i < 0 ? null : a((v as ReadonlyArray<unknown>)[i]))))
    }
    case "array": {
      if (from._tag !== "array") return sqlType(from)
      const e = adapt(from.elementType, to.elementType)
      if (typeof e === "string") return e
      return (v) => (v === null ? null : (v as ReadonlyArray<unknown>).map((x) => (x === null ? null : e(x))))
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
        for (const [kk, vv] of v as Map<unknown, unknown>) out.set(k(kk), vv === null ? null : x(vv))
        return out
      }
    }
    default:
      if (T.sameType(from, to)) return (v) => v
      if (from._tag === "integer" && (to._tag === "long" || to._tag === "double")) return (v) => v
      if (from._tag === "long" && to._tag === "double") return (v) => v
      // ORC's schema evolution narrows integers too; a value that does not fit reads as null
      if (from._tag === "long" && to._tag === "integer") {
        return (v) => ((v as number) >= -2147483648 && (v as number) <= 2147483647 ? v : null)
      }
      return sqlType(from)
  }
}

/**
 * The index of `name` among `names`, case-insensitively (Spark's `OrcUtils.requestedColumnIds`
 * with `spark.sql.caseSensitive=false`: more than one match is ambiguous, even with an exact one).
 */
const matchField = (names: ReadonlyArray<string>, name: string): number | string => {
  const l = name.toLowerCase()
  const found = names.map((n, i) => [n, i] as const).filter(([n]) => n.toLowerCase() === l)
  if (found.length > 1) {
    return `Found duplicate field(s) "${name}": [${found.map(([n]) => n).join(", ")}] in case-insensitive mode`
  }
  return found.length === 1 ? found[0][1] : -1
}

/** A mismatch between a file's column and the schema read, failing the read of that file. */
class Mismatch extends Error {}

const makeReader = (dataSchema: T.StructType): Effect.Effect<FileReader<undefined>> =>
  Effect.succeed((_: undefined, file: InputFile) =>
    Effect.try({
      try: (): ReadonlyArray<InternalRow> => {
        const bytes = readBytes(file.path)
        const tail = readTail(bytes)
        const fields = rootFields(tail)
        // SPARK-8501: an ORC file without fields has no rows to give
        if (fields.length === 0) return []
        const names = fields.map((f) => f.name)
        // Hive's files without real names (`_col0`, …) are matched by position (Spark's `requestedColumnIds`)
        const positional = names.every((n) => n.startsWith("_col"))
        const include: Array<number> = []
        const plan: Array<readonly [number, Adapt]> = []
        dataSchema.fields.forEach((f, pos) => {
          const i = positional ? (pos < names.length ? pos : -1) : matchField(names, f.name)
          if (typeof i === "string") throw new Mismatch(i)
          if (i < 0) {
            plan.push([-1, () => null])
            return
          }
          const fileType = toSparkType(fields[i].type)
          if (typeof fileType === "string") {
            throw new OrcUnsupported(`tributary cannot read the ORC type ${fileType} of column \`${names[i]}\``)
          }
          const a = adapt(fileType, f.dataType)
          if (typeof a === "string") {
            throw new Mismatch(
              `ORC does not support type conversion from file type ${orcTypeString(fields[i].type)} (column \`${names[i]}\`) to reader type ${sqlType(f.dataType)}`
            )
          }
          let slot = include.indexOf(i)
          if (slot < 0) slot = include.push(i) - 1
          plan.push([slot, a])
        })
        const { rows } = readOrc(bytes, include)
        const n = plan.length
        const out = new Array<InternalRow>(rows.length)
        for (let r = 0; r < rows.length; r++) {
          const src = rows[r]
          const row = new Array<unknown>(n)
          for (let j = 0; j < n; j++) {
            const [slot, a] = plan[j]
            const v = slot < 0 ? null : src[slot]
            row[j] = v === null || v === undefined ? null : a(v)
          }
          out[r] = row
        }
        return out
      },
      catch: (e) => orcReadError(file.path, e)
    })
  )

/** The `orc` batch format (also the streaming file source's, through `fileStreamSourceFormat`). */
export const OrcFormat: BatchFormat = makeFileFormat<OrcReadOptions, undefined>({
  name: "orc",
  title: "ORC",
  parseOptions: parseReadOptions,
  supports: orcSupports,
  checkUserSchema: () => Effect.void,
  withResource: noResource,
  inferSchema,
  makeReader
})

// ---- writing -------------------------------------------------------------------------------

/** Spark's ORC `compression` names: the codec and the file name's extension (Spark's `OrcUtils`). */
const CODECS: Readonly<Record<string, readonly [number, string]>> = {
  none: [Compression.NONE, ""],
  uncompressed: [Compression.NONE, ""],
  snappy: [Compression.SNAPPY, ".snappy"],
  zlib: [Compression.ZLIB, ".zlib"],
  lz4: [Compression.LZ4, ".lz4"],
  zstd: [Compression.ZSTD, ".zstd"],
  brotli: [Compression.BROTLI, ".brotli"]
}

/** The writer's settings from Spark's (and ORC's) options. */
export interface OrcWriterSettings {
  readonly type: OrcType
  readonly compression: number
  readonly extension: string
  readonly format: "0.11" | "0.12"
  readonly blockSize: number
  readonly dictionaryKeyThreshold: number
}

/**
 * Checks a data schema and Spark's write options for ORC: `compression` (then `orc.compress`;
 * `zstd` by default, Spark 4's `spark.sql.orc.compression.codec`), `orc.write.format`,
 * `orc.compress.size`, `orc.dictionary.key.threshold`.
 */
export const orcWriterSettings = (
  dataSchema: T.StructType,
  options: Options
): Effect.Effect<OrcWriterSettings, AnalysisError> =>
  Effect.gen(function* () {
    yield* checkSupportedTypes("ORC", dataSchema, orcSupports)
    const seen = new Set<string>()
    for (const f of dataSchema.fields) {
      const l = f.name.toLowerCase()
      if (seen.has(l)) {
        return yield* new AnalysisError({
          reason: "InvalidArgument",
          errorClass: "COLUMN_ALREADY_EXISTS",
          message: `[COLUMN_ALREADY_EXISTS] The column \`${l}\` already exists. Choose another name or rename the existing column.`
        })
      }
      seen.add(l)
    }
    const codecText = option(options, "compression") ?? option(options, "orc.compress") ?? "zstd"
    const codec = CODECS[codecText.toLowerCase()]
    if (codec === undefined) {
      const why =
        codecText.toLowerCase() === "lzo"
          ? "tributary does not write LZO; use zstd, snappy, zlib, lz4 or none"
          : `Codec [${codecText.toLowerCase()}] is not available. Available codecs are ${Object.keys(CODECS).join(", ")}`
      return yield* invalidOption("orc", "compression", codecText, why)
    }
    const unsupported = yield* Effect.sync(() => {
      try {
        checkCodec(codec[0])
        return undefined
      } catch (e) {
        return detail(e)
      }
    })
    if (unsupported !== undefined) return yield* invalidOption("orc", "compression", codecText, unsupported)
    const o = yield* parseOptions(() => {
      const r = new OptionReader("orc", options)
      const format = r.get("orc.write.format") ?? "0.12"
      if (format !== "0.11" && format !== "0.12") {
        throw invalidOption("orc", "orc.write.format", format, "it must be 0.11 or 0.12")
      }
      const blockSize = r.int("orc.compress.size", 256 * 1024)
      if (blockSize < 1024 || blockSize > 8 * 1024 * 1024) {
        throw invalidOption("orc", "orc.compress.size", String(blockSize), "it must be between 1024 and 8388608")
      }
      const thresholdText = r.get("orc.dictionary.key.threshold") ?? "0.8"
      const threshold = Number(thresholdText)
      if (!Number.isFinite(threshold) || threshold < 0 || threshold > 1) {
        throw invalidOption("orc", "orc.dictionary.key.threshold", thresholdText, "it must be a number from 0 to 1")
      }
      return { format: format as "0.11" | "0.12", blockSize, threshold }
    })
    const type = fromSparkType(dataSchema) as OrcType
    return {
      type,
      compression: codec[0],
      extension: `${codec[1]}.orc`,
      format: o.format,
      blockSize: o.blockSize,
      dictionaryKeyThreshold: o.threshold
    }
  })

/**
 * The bytes of an ORC file holding `rows` (internal rows of `settings`' schema). This is the
 * writer's function interface: the file sink and batch writers call it, then write the bytes.
 */
export const encodeOrc = (
  settings: OrcWriterSettings,
  rows: ReadonlyArray<InternalRow>
): Effect.Effect<Uint8Array, ConnectorError> =>
  Effect.try({
    try: () =>
      writeOrc(settings.type, rows, {
        compression: settings.compression,
        blockSize: settings.blockSize,
        format: settings.format,
        dictionaryKeyThreshold: settings.dictionaryKeyThreshold
      }),
    catch: (e) =>
      new ConnectorError({
        connector: "orc",
        domain: "internal",
        retryable: false,
        message: `Could not encode ORC rows: ${detail(e)}`,
        cause: e
      })
  })

const writeError = (path: string, cause: unknown): ConnectorError => {
  const code = (cause as { code?: string } | undefined)?.code
  return new ConnectorError({
    connector: "orc",
    domain: "external",
    retryable: !(code === "EACCES" || code === "EPERM" || code === "ENOSPC" || code === "EROFS"),
    message: `[TASK_WRITE_FAILED] Task failed while writing rows to file:${path}. ${detail(cause)}`,
    cause
  })
}

/** Writes `rows` as one ORC file at `path` and flushes it to disk. */
export const writeOrcFile = (
  path: string,
  settings: OrcWriterSettings,
  rows: ReadonlyArray<InternalRow>
): Effect.Effect<void, ConnectorError> =>
  Effect.flatMap(encodeOrc(settings, rows), (bytes) =>
    Effect.try({
      try: () => {
        const fd = fs.openSync(path, "w")
        try {
          fs.writeSync(fd, bytes)
          fs.fsyncSync(fd)
        } finally {
          fs.closeSync(fd)
        }
      },
      catch: (e) => writeError(path, e)
    })
  )

/** The `orc` writer of the file sink (and of batch writes). */
export const OrcWriterFormat: FileWriterFormat = {
  name: "orc",
  prepare: (dataSchema, options) =>
    Effect.map(
      orcWriterSettings(dataSchema, options),
      (settings): FileWriter => ({
        extension: settings.extension,
        write: (path, rows) => writeOrcFile(path, settings, rows)
      })
    )
}
