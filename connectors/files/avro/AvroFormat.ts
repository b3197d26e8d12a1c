/**
 * The `avro` file format, Spark's `AvroFileFormat` (the `spark-avro` module): batch reads
 * (`spark.read.format("avro")`), the streaming file source, batch writes (`df.write.avro`) and
 * the streaming file sink, through `avsc`.
 *
 * - Reads: the schema is the `avroSchema` option's, or the first file's (Spark picks one file,
 *   without merging); with `avroSchema` every file is read through Avro's schema resolution into
 *   it (an evolved schema: new fields with defaults, promotions, renamed fields by alias). Files
 *   not ending in `.avro` are skipped when `ignoreExtension` is false. Dates and timestamps
 *   before 1582-10-15 / 1900-01-01 in files that no Spark 3+ wrote fail by default
 *   (`datetimeRebaseMode` `EXCEPTION`), as Spark's do.
 * - Writes: the schema Spark's `SchemaConverters.toAvroType` gives (or `avroSchema`), record name
 *   `recordName` in `recordNamespace`, one `.snappy.avro` file per task with the `compression`
 *   codec (snappy by default; `.avro` uncompressed, `.deflate.avro`, `.zstandard.avro`) and the `org.apache.spark.version` metadata Spark writes (so Spark reads
 *   the dates as written, in the proleptic Gregorian calendar).
 *
 * @since 0.5.0
 */
import * as fs from "node:fs"
import { Effect } from "effect"
import * as T from "../../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../../core/Errors.ts"
import { type BatchFormat, option } from "../../../core/Formats.ts"
import type { InternalRow } from "../../../core/Row.ts"
import type { InputFile } from "../FileListing.ts"
import { type FileReader, makeFileFormat, noResource } from "../FileSource.ts"
import { checkSupportedTypes } from "../FileSourceOptions.ts"
import type { FileWriterFormat } from "../FileWriters.ts"
import { blockCodecs, COMPRESSION_CODECS } from "./AvroCodecs.ts"
import { decodeContainer, encodeContainer, readHeader } from "./AvroContainer.ts"
import { AncientDatetimeError, type Converter, makeDeserializer, type RebaseMode } from "./AvroDeserializer.ts"
import { type AvroOptions, parseAvroOptions } from "./AvroOptions.ts"
import { type AvroType, IncompatibleSchemaError, parseSchema, schemaString, toAvroSchema, toSqlType } from "./AvroSchema.ts"
import { makeSerializer, NullFieldError } from "./AvroSerializer.ts"

/** The Spark version whose output tributary's Avro files match (Spark's `SPARK_VERSION_METADATA_KEY`). */
export const SPARK_VERSION = "4.2.0"

/** Spark's `AvroUtils.supportsDataType`: atomic types, null, and structs, arrays, maps of them. */
export const supportsDataType = (t: T.DataType): boolean => {
  switch (t._tag) {
    case "calendarInterval":
      return false
    case "struct":
      return t.fields.every((f) => supportsDataType(f.dataType))
    case "array":
      return supportsDataType(t.elementType)
    case "map":
      return supportsDataType(t.keyType) && supportsDataType(t.valueType)
    default:
      return true
  }
}

/** Spark's `AvroFileFormat.supportFieldName`: a letter or `_`, then letters, digits or `_`. */
const supportFieldName = (name: string): boolean => /^[\p{L}_][\p{L}\p{Nd}_]*$/u.test(name)

const readError = (path: string, cause: unknown): ConnectorError => {
  const detail = cause instanceof Error ? cause.message : String(cause)
  const known = cause instanceof IncompatibleSchemaError || cause instanceof AncientDatetimeError
  return new ConnectorError({
    connector: "avro",
    domain: (cause as { code?: string })?.code === undefined ? "user" : "external",
    retryable: false,
    message: known ? detail : `[FAILED_READ_FILE.NO_HINT] Encountered error while reading file file:${path}. ${detail}`,
    ...(cause instanceof AncientDatetimeError ? { errorClass: cause.errorClass } : {}),
    cause
  })
}

const readCodecs = blockCodecs({ deflate: -1, zstandard: 3 })

/** Spark's `DataSourceUtils.datetimeRebaseSpec`: Spark 3+ files are read as written, unless marked legacy. */
const rebaseModeOf = (meta: Readonly<Record<string, string>>, configured: RebaseMode): RebaseMode => {
  const version = meta["org.apache.spark.version"]
  if (version === undefined) return configured
  return version < "3.0.0" || meta["org.apache.spark.legacyDateTime"] !== undefined ? "LEGACY" : "CORRECTED"
}

const wantFile = (o: AvroOptions, path: string): boolean => o.ignoreExtension || path.endsWith(".avro")

/** Spark's `AvroUtils.inferSchema`: the `avroSchema` option's or the first readable file's schema. */
const inferSchema = (_: undefined, files: ReadonlyArray<InputFile>, o: AvroOptions) =>
  Effect.gen(function* () {
    let avro: AvroType | undefined = o.schema?.type
    if (avro === undefined) {
      const file = files.find((f) => wantFile(o, f.path))
      if (file === undefined) {
        return yield* new ConnectorError({
          connector: "avro",
          domain: "user",
          retryable: false,
          message: "No Avro files found. If files don't have .avro extension, set ignoreExtension to true"
        })
      }
      avro = yield* Effect.try({
        try: () => parseSchema(readHeader(file.path).writerSchema),
        catch: (e) => readError(file.path, e)
      })
    }
    const sql = yield* Effect.try({
      try: () => toSqlType(avro),
      catch: (e) => new AnalysisError({ reason: "InvalidArgument", message: e instanceof Error ? e.message : String(e) })
    })
    if (sql.dataType._tag !== "struct") {
      return yield* new AnalysisError({
        reason: "InvalidArgument",
        message: `Avro schema cannot be converted to a Spark SQL StructType:\n\n${JSON.stringify(avro.schema({ exportAttrs: true }), null, 2)}\n`
      })
    }
    return sql.dataType
  })

const makeReader = (dataSchema: T.StructType, o: AvroOptions): Effect.Effect<FileReader<undefined>> =>
  Effect.sync(() => {
    // one converter per writer schema (files of one folder usually share it)
    const cache = new Map<string, Converter>()
    const converterFor = (avro: AvroType, mode: RebaseMode): Converter => {
      const key = `${mode}\u0000${schemaString(avro)}`
      let c = cache.get(key)
      if (c === undefined) {
        c = makeDeserializer(avro, dataSchema, { positionalFieldMatching: o.positionalFieldMatching, rebaseMode: mode })
        cache.set(key, c)
      }
      return c
    }
    return (_, file) =>
      Effect.gen(function* () {
        if (!wantFile(o, file.path)) return []
        const bytes = yield* Effect.try({ try: () => fs.readFileSync(file.path), catch: (e) => readError(file.path, e) })
        const contents = yield* Effect.tryPromise({
          try: () => decodeContainer(bytes, readCodecs, o.schema?.type),
          catch: (e) => readError(file.path, e)
        })
        return yield* Effect.try({
          try: () => {
            const convert = converterFor(o.schema?.type ?? contents.writerType, rebaseModeOf(contents.meta, o.rebaseMode))
            const records = contents.records
            const out = new Array<InternalRow>(records.length)
            for (let i = 0; i < records.length; i++) out[i] = convert(records[i]) as InternalRow
            return out
          },
          catch: (e) => readError(file.path, e)
        })
      })
  })

/** The `avro` batch format (and streaming source format). */
export const AvroFormat: BatchFormat = makeFileFormat<AvroOptions, undefined>({
  name: "avro",
  title: "Avro",
  parseOptions: parseAvroOptions,
  supports: supportsDataType,
  checkUserSchema: () => Effect.void,
  withResource: noResource,
  inferSchema,
  makeReader
})

const invalidCompression = (value: string): AnalysisError =>
  new AnalysisError({
    reason: "InvalidArgument",
    errorClass: "CODEC_SHORT_NAME_NOT_FOUND",
    message: `[CODEC_SHORT_NAME_NOT_FOUND] Cannot find a short name for the codec ${value}.`
  })

const intConf = (conf: ReadonlyMap<string, string> | undefined, key: string, dflt: number): number => {
  const v = conf?.get(key)
  return v !== undefined && /^[+-]?\d+$/.test(v.trim()) ? Number(v.trim()) : dflt
}

const checkFieldNames = (schema: T.StructType): AnalysisError | undefined => {
  for (const f of schema.fields) {
    if (!supportFieldName(f.name)) {
      return new AnalysisError({
        reason: "InvalidArgument",
        errorClass: "INVALID_COLUMN_NAME_AS_PATH",
        message: `[INVALID_COLUMN_NAME_AS_PATH] The datasource \`AvroFileFormat\` cannot save the column \`${f.name}\` because its name contains some characters that are not allowed in file paths. Please, use an alias to rename it.`
      })
    }
    if (f.dataType._tag === "struct") {
      const nested = checkFieldNames(f.dataType)
      if (nested !== undefined) return nested
    }
  }
  return undefined
}

/** The `avro` writer (Spark's `AvroUtils.prepareWrite` and `AvroOutputWriter`). */
export const AvroWriterFormat: FileWriterFormat = {
  name: "avro",
  prepare: (dataSchema, options, conf) =>
    Effect.gen(function* () {
      yield* checkSupportedTypes("Avro", dataSchema, supportsDataType)
      const badName = checkFieldNames(dataSchema)
      if (badName !== undefined) return yield* badName
      const o = yield* parseAvroOptions(options)
      const codecText = option(options, "compression") ?? conf?.get("spark.sql.avro.compression.codec") ?? "snappy"
      const lower = codecText.toLowerCase()
      if (!(lower in COMPRESSION_CODECS)) return yield* invalidCompression(codecText)
      const codec = COMPRESSION_CODECS[lower]
      if (codec === undefined) {
        return yield* new AnalysisError({
          reason: "InvalidArgument",
          errorClass: "INVALID_OPTION",
          message: `Invalid value '${codecText}' for the avro option 'compression': tributary writes uncompressed, deflate, snappy or zstandard.`
        })
      }
      const codecs = blockCodecs({
        deflate: intConf(conf, "spark.sql.avro.deflate.level", -1),
        zstandard: intConf(conf, "spark.sql.avro.zstandard.level", 3)
      })
      const prepared = yield* Effect.try({
        try: () => {
          const json =
            o.schema?.json ?? JSON.stringify(toAvroSchema(dataSchema, false, o.recordName, o.recordNamespace))
          const type = o.schema?.type ?? parseSchema(json)
          const serialize = makeSerializer(dataSchema, type, false, { positionalFieldMatching: o.positionalFieldMatching })
          return { json, type, serialize }
        },
        catch: (e) => new AnalysisError({ reason: "DataTypeMismatch", message: e instanceof Error ? e.message : String(e) })
      })
      const meta = { "org.apache.spark.version": SPARK_VERSION }
      const writeError = (path: string, cause: unknown) =>
        new ConnectorError({
          connector: "avro",
          domain: cause instanceof NullFieldError || cause instanceof IncompatibleSchemaError ? "user" : "external",
          retryable: false,
          message: `[TASK_WRITE_FAILED] Task failed while writing rows to file:${path}. ${cause instanceof Error ? cause.message : String(cause)}`,
          ...(cause instanceof NullFieldError ? { errorClass: cause.errorClass } : {}),
          cause
        })
      return {
        // Spark 4.2 names the codec in the file name, as for Parquet: `.snappy.avro`, `.avro` uncompressed
        extension: codec === "null" ? ".avro" : `.${lower}.avro`,
        write: (path, rows) =>
          Effect.gen(function* () {
            const records = yield* Effect.try({
              try: () => {
                const out = new Array<unknown>(rows.length)
                for (let i = 0; i < rows.length; i++) out[i] = prepared.serialize(rows[i])
                return out
              },
              catch: (e) => writeError(path, e)
            })
            const bytes = yield* Effect.tryPromise({
              try: () => encodeContainer(prepared.type, prepared.json, records, codec, codecs, meta),
              catch: (e) => writeError(path, e)
            })
            yield* Effect.try({
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
          })
      }
    })
}
