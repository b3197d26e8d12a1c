/**
 * Writing internal rows as files the way Spark's file formats write them, for the streaming file
 * sink:
 *
 * - `json` (Spark's `JacksonGenerator`): one object per line, null fields left out
 *   (`ignoreNullFields`, default true), timestamps as `2020-01-01T00:00:00.000Z`
 *   (`timestampFormat` `yyyy-MM-dd'T'HH:mm:ss.SSSXXX` in the session's UTC), dates as
 *   `yyyy-MM-dd`, doubles as Java prints them (`1.0`, `1.0E20`, `"NaN"`), binary as base64;
 * - `csv` (Spark's `UnivocityGenerator` with the writer settings of `CSVOptions`): `header`,
 *   `sep`, `quote`, `escape`, `escapeQuotes`, `quoteAll`, `nullValue`, `emptyValue` (`""`),
 *   `ignoreLeadingWhiteSpace`/`ignoreTrailingWhiteSpace` (true when writing), `lineSep`,
 *   `timestampFormat`, `dateFormat`;
 * - `text`: one line per row of the single string column (a null row is an empty line);
 * - `parquet`: through DuckDB — the rows are appended to an in-memory table and copied out with
 *   `COPY … TO ? (FORMAT parquet)` (the path is a parameter; no data is spliced into SQL),
 *   `compression` snappy (default), gzip, zstd or none;
 * - `orc`: this project's ORC writer (`orc/OrcFormat.ts`).
 *
 * `json`, `csv` and `text` also take `compression` `gzip` (or `none`).
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as zlib from "node:zlib"
import {
  BIGINT,
  BLOB,
  BOOLEAN,
  blobValue,
  DATE,
  DOUBLE,
  type DuckDBType,
  DuckDBTimestampValue,
  type DuckDBValue,
  dateValue,
  INTEGER,
  LIST,
  listValue,
  MAP,
  mapValue,
  STRUCT,
  structValue,
  TIMESTAMP,
  VARCHAR
} from "@duckdb/node-api"
import { Effect } from "effect"
import * as Cast from "../../core/Cast.ts"
import * as T from "../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import { type Options, option } from "../../core/Formats.ts"
import * as DT from "../../core/functions/DateTimeUtils.ts"
import type { InternalRow } from "../../core/Row.ts"
import * as DuckDB from "../../state/DuckDB.ts"
import { checkSupportedTypes, OptionReader, parseOptions } from "./FileSourceOptions.ts"
import { OrcWriterFormat } from "./orc/OrcFormat.ts"

/** Writes the rows of one output file. */
export interface FileWriter {
  /** The file name's extension (`.json`, `.csv`, `.txt`, `.snappy.parquet`, `.json.gz`). */
  readonly extension: string
  readonly write: (path: string, rows: ReadonlyArray<InternalRow>) => Effect.Effect<void, ConnectorError>
}

/** A format's writer, prepared once per query for the data columns (partition columns removed). */
export interface FileWriterFormat {
  readonly name: string
  readonly prepare: (
    dataSchema: T.StructType,
    options: Options,
    conf?: ReadonlyMap<string, string>
  ) => Effect.Effect<FileWriter, AnalysisError>
}

const invalidOption = (format: string, key: string, value: string, why: string): AnalysisError =>
  new AnalysisError({
    reason: "InvalidArgument",
    errorClass: "INVALID_OPTION",
    message: `Invalid value '${value}' for the ${format} option '${key}': ${why}.`
  })

const writeError = (connector: string, path: string, cause: unknown): ConnectorError => {
  const code = (cause as { code?: string } | undefined)?.code
  return new ConnectorError({
    connector,
    domain: "external",
    retryable: !(code === "EACCES" || code === "EPERM" || code === "ENOSPC" || code === "EROFS"),
    message: `[TASK_WRITE_FAILED] Task failed while writing rows to file:${path}. ${cause instanceof Error ? cause.message : String(cause)}`,
    cause
  })
}

/** Writes text (gzip-compressed when asked) to `path` and flushes it to disk. */
const writeText = (connector: string, path: string, text: string, gzip: boolean): Effect.Effect<void, ConnectorError> =>
  Effect.try({
    try: () => {
      const bytes = gzip ? zlib.gzipSync(text) : Buffer.from(text, "utf8")
      const fd = fs.openSync(path, "w")
      try {
        fs.writeSync(fd, bytes)
        fs.fsyncSync(fd)
      } finally {
        fs.closeSync(fd)
      }
    },
    catch: (e) => writeError(connector, path, e)
  })

/** `compression` of the text formats: none (default) or gzip. */
const textCompression = (format: string, options: Options): boolean | AnalysisError => {
  const v = option(options, "compression") ?? option(options, "codec")
  if (v === undefined) return false
  const l = v.toLowerCase()
  if (l === "none" || l === "uncompressed") return false
  if (l === "gzip") return true
  return invalidOption(format, "compression", v, "tributary writes none or gzip")
}

/** Formats timestamps (`timestampFormat`) and dates (`dateFormat`) in UTC. */
const dateTimeFormatters = (
  format: string,
  options: Options
): { readonly timestamp: (ms: number) => string; readonly date: (days: number) => string } | AnalysisError => {
  const ts = option(options, "timestampFormat") ?? "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"
  const timestamp = DT.timestampFormatter(ts)
  if (timestamp === undefined) return invalidOption(format, "timestampFormat", ts, "it is not a valid datetime pattern")
  const ds = option(options, "dateFormat") ?? "yyyy-MM-dd"
  const dateMs = DT.timestampFormatter(ds)
  if (dateMs === undefined) return invalidOption(format, "dateFormat", ds, "it is not a valid datetime pattern")
  return { timestamp, date: (days) => dateMs(days * DT.MS_PER_DAY) }
}

const base64 = (b: Uint8Array): string => Buffer.from(b).toString("base64")

const doubleToString = Cast.toStringFunction(T.DoubleType)

// ---- json ---------------------------------------------------------------------------------

type JsonWriter = (v: unknown) => string

const jsonWriterOf = (
  t: T.DataType,
  ignoreNullFields: boolean,
  dt: { readonly timestamp: (ms: number) => string; readonly date: (days: number) => string }
): JsonWriter => {
  switch (t._tag) {
    case "null":
      return () => "null"
    case "string":
      return (v) => JSON.stringify(v as string)
    case "boolean":
      return (v) => ((v as boolean) ? "true" : "false")
    case "integer":
    case "long":
      return (v) => String(v)
    case "double":
      // Jackson writes NaN and the infinities as strings (WRITE_NAN_AS_STRINGS)
      return (v) => (Number.isFinite(v as number) ? doubleToString(v) : JSON.stringify(doubleToString(v)))
    case "binary":
      return (v) => JSON.stringify(base64(v as Uint8Array))
    case "timestamp":
      return (v) => JSON.stringify(dt.timestamp(v as number))
    case "date":
      return (v) => JSON.stringify(dt.date(v as number))
    case "calendarInterval":
      return (v) => JSON.stringify(String(v))
    case "array": {
      const elem = jsonWriterOf(t.elementType, ignoreNullFields, dt)
      return (v) => {
        const a = v as ReadonlyArray<unknown>
        let out = "["
        for (let i = 0; i < a.length; i++) {
          if (i > 0) out += ","
          out += a[i] === null ? "null" : elem(a[i])
        }
        return `${out}]`
      }
    }
    case "map": {
      const key = Cast.toStringFunction(t.keyType)
      const value = jsonWriterOf(t.valueType, ignoreNullFields, dt)
      return (v) => {
        let out = "{"
        let first = true
        for (const [k, x] of v as Map<unknown, unknown>) {
          if (!first) out += ","
          first = false
          out += `${JSON.stringify(key(k))}:${x === null ? "null" : value(x)}`
        }
        return `${out}}`
      }
    }
    case "struct": {
      const names = t.fields.map((f) => `${JSON.stringify(f.name)}:`)
      const writers = t.fields.map((f) => jsonWriterOf(f.dataType, ignoreNullFields, dt))
      const n = names.length
      return (v) => {
        const r = v as ReadonlyArray<unknown>
        let out = "{"
        let first = true
        for (let i = 0; i < n; i++) {
          const x = r[i]
          if ((x === null || x === undefined) && ignoreNullFields) continue
          if (!first) out += ","
          first = false
          out += names[i] + (x === null || x === undefined ? "null" : writers[i](x))
        }
        return `${out}}`
      }
    }
  }
}

/** Spark's `JsonFileFormat.supportDataType` (no intervals). */
const jsonSupports = (t: T.DataType): boolean => {
  switch (t._tag) {
    case "calendarInterval":
      return false
    case "struct":
      return t.fields.every((f) => jsonSupports(f.dataType))
    case "array":
      return jsonSupports(t.elementType)
    case "map":
      return jsonSupports(t.keyType) && jsonSupports(t.valueType)
    default:
      return true
  }
}

/** The `json` writer. */
export const JsonWriterFormat: FileWriterFormat = {
  name: "json",
  prepare: (dataSchema, options) =>
    Effect.gen(function* () {
      yield* checkSupportedTypes("JSON", dataSchema, jsonSupports)
      const gzip = textCompression("json", options)
      if (gzip instanceof AnalysisError) return yield* gzip
      const dt = dateTimeFormatters("json", options)
      if (dt instanceof AnalysisError) return yield* dt
      const ignoreText = option(options, "ignoreNullFields")
      const ignoreNullFields = ignoreText === undefined ? true : ignoreText.toLowerCase() !== "false"
      const lineSep = option(options, "lineSep") ?? "\n"
      const row = jsonWriterOf(dataSchema, ignoreNullFields, dt)
      return {
        extension: gzip ? ".json.gz" : ".json",
        write: (path, rows) =>
          Effect.suspend(() => {
            const parts = new Array<string>(rows.length)
            for (let i = 0; i < rows.length; i++) parts[i] = row(rows[i]) + lineSep
            return writeText("json", path, parts.join(""), gzip)
          })
      }
    })
}

// ---- csv ----------------------------------------------------------------------------------

const csvSupports = (t: T.DataType): boolean =>
  t._tag !== "struct" && t._tag !== "array" && t._tag !== "map" && t._tag !== "calendarInterval"

/** Java's `String.trim` at the ends univocity trims when writing. */
const trimStart = (s: string): string => {
  let i = 0
  while (i < s.length && s.charCodeAt(i) <= 0x20) i++
  return i === 0 ? s : s.slice(i)
}
const trimEnd = (s: string): string => {
  let i = s.length
  while (i > 0 && s.charCodeAt(i - 1) <= 0x20) i--
  return i === s.length ? s : s.slice(0, i)
}

/** The `csv` writer. */
export const CsvWriterFormat: FileWriterFormat = {
  name: "csv",
  prepare: (dataSchema, options) =>
    Effect.gen(function* () {
      yield* checkSupportedTypes("CSV", dataSchema, csvSupports)
      const gzip = textCompression("csv", options)
      if (gzip instanceof AnalysisError) return yield* gzip
      const dt = dateTimeFormatters("csv", options)
      if (dt instanceof AnalysisError) return yield* dt
      const o = yield* parseOptions(() => {
        const r = new OptionReader("csv", options)
        const sepText = r.get("sep") ?? r.get("delimiter") ?? ","
        if (sepText.length === 0) throw invalidOption("csv", "sep", sepText, "the delimiter cannot be an empty string")
        return {
          sep: sepText === "\\t" ? "\t" : sepText,
          quote: r.char("quote", '"'),
          escape: r.char("escape", "\\"),
          header: r.bool("header", false),
          quoteAll: r.bool("quoteAll", false),
          escapeQuotes: r.bool("escapeQuotes", true),
          // univocity's writer trims both ends unless told otherwise (Spark's write defaults)
          trimLeading: r.bool("ignoreLeadingWhiteSpace", true),
          trimTrailing: r.bool("ignoreTrailingWhiteSpace", true),
          nullValue: r.get("nullValue") ?? "",
          emptyValue: r.get("emptyValue"),
          lineSep: r.get("lineSep") ?? "\n"
        }
      })
      const { sep, quote, header, quoteAll, escapeQuotes, trimLeading, trimTrailing, nullValue, lineSep } = o
      const escapeChar = o.escape
      // Spark 2.4+: an empty string is written as a quoted empty string
      const emptyValue = o.emptyValue ?? `${quote}${quote}`
      const quoteOn = quote !== "\u0000"

      /** Univocity's `CsvWriter` for one value: trim, then quote when it holds a delimiter, quote or line break. */
      const field = (s: string): string => {
        let v = s
        if (trimLeading) v = trimStart(v)
        if (trimTrailing) v = trimEnd(v)
        if (!quoteOn) return v
        const hasQuote = v.includes(quote)
        const needs = quoteAll || hasQuote || v.includes(sep) || v.includes("\n") || v.includes("\r")
        if (!needs) return v
        const body = hasQuote && (escapeQuotes || quoteAll) ? v.split(quote).join(`${escapeChar}${quote}`) : v
        return `${quote}${body}${quote}`
      }
      const converters = dataSchema.fields.map((f): ((v: unknown) => string) => {
        switch (f.dataType._tag) {
          case "timestamp":
            return (v) => dt.timestamp(v as number)
          case "date":
            return (v) => dt.date(v as number)
          case "binary":
            return (v) => new TextDecoder().decode(v as Uint8Array)
          default:
            return Cast.toStringFunction(f.dataType)
        }
      })
      const n = converters.length
      const line = (r: InternalRow): string => {
        let out = ""
        for (let i = 0; i < n; i++) {
          if (i > 0) out += sep
          const v = r[i]
          if (v === null || v === undefined) out += nullValue
          else {
            const s = converters[i](v)
            out += s.length === 0 ? emptyValue : field(s)
          }
        }
        return out + lineSep
      }
      const headerLine = dataSchema.fields.map((f) => field(f.name)).join(sep) + lineSep
      return {
        extension: gzip ? ".csv.gz" : ".csv",
        write: (path, rows) =>
          Effect.suspend(() => {
            const parts: Array<string> = header ? [headerLine] : []
            for (let i = 0; i < rows.length; i++) parts.push(line(rows[i]))
            return writeText("csv", path, parts.join(""), gzip)
          })
      }
    })
}

// ---- text ---------------------------------------------------------------------------------

/** The `text` writer: exactly one string column (Spark's `TextFileFormat.verifySchema`). */
export const TextWriterFormat: FileWriterFormat = {
  name: "text",
  prepare: (dataSchema, options) =>
    Effect.gen(function* () {
      if (dataSchema.fields.length !== 1) {
        return yield* new AnalysisError({
          reason: "InvalidArgument",
          message: `Text data source supports only a single column, and you have ${dataSchema.fields.length} columns.`
        })
      }
      yield* checkSupportedTypes("Text", dataSchema, (t) => t._tag === "string")
      const gzip = textCompression("text", options)
      if (gzip instanceof AnalysisError) return yield* gzip
      const lineSep = option(options, "lineSep") ?? "\n"
      return {
        extension: gzip ? ".txt.gz" : ".txt",
        write: (path, rows) =>
          Effect.suspend(() => {
            const parts = new Array<string>(rows.length)
            for (let i = 0; i < rows.length; i++) {
              const v = rows[i][0]
              parts[i] = (v === null || v === undefined ? "" : (v as string)) + lineSep
            }
            return writeText("text", path, parts.join(""), gzip)
          })
      }
    })
}

// ---- parquet ------------------------------------------------------------------------------

const parquetSupports = (t: T.DataType): boolean => {
  switch (t._tag) {
    case "null":
    case "calendarInterval":
      return false
    case "struct":
      return t.fields.every((f) => parquetSupports(f.dataType))
    case "array":
      return parquetSupports(t.elementType)
    case "map":
      return parquetSupports(t.keyType) && parquetSupports(t.valueType)
    default:
      return true
  }
}

/** Spark's `compression` values for Parquet, as DuckDB's `COMPRESSION` and the file extension. */
const PARQUET_CODECS: Readonly<Record<string, readonly [string, string]>> = {
  snappy: ["snappy", ".snappy.parquet"],
  gzip: ["gzip", ".gz.parquet"],
  zstd: ["zstd", ".zstd.parquet"],
  none: ["uncompressed", ".parquet"],
  uncompressed: ["uncompressed", ".parquet"]
}

/** An internal value of Spark type `t` as a DuckDB value (nested values typed by `duckType`). */
const duckValue = (t: T.DataType): ((v: unknown) => DuckDBValue) => {
  switch (t._tag) {
    case "long":
      return (v) => (typeof v === "bigint" ? v : BigInt(v as number))
    case "timestamp":
      return (v) => new DuckDBTimestampValue(BigInt(Math.round((v as number) * 1000)))
    case "date":
      return (v) => dateValue(v as number)
    case "binary":
      return (v) => blobValue(v as Uint8Array)
    case "calendarInterval":
      return (v) => String(v)
    case "array": {
      const elem = duckValue(t.elementType)
      return (v) =>
        listValue((v as ReadonlyArray<unknown>).map((x) => (x === null || x === undefined ? null : elem(x))))
    }
    case "map": {
      const key = duckValue(t.keyType)
      const value = duckValue(t.valueType)
      return (v) =>
        mapValue(
          [...(v as Map<unknown, unknown>)].map(([k, x]) => ({
            key: key(k),
            value: x === null || x === undefined ? null : value(x)
          }))
        )
    }
    case "struct": {
      const parts = t.fields.map((f) => [f.name, duckValue(f.dataType)] as const)
      return (v) => {
        const r = v as ReadonlyArray<unknown>
        const entries: Record<string, DuckDBValue> = {}
        parts.forEach(([name, conv], i) => {
          const x = r[i]
          entries[name] = x === null || x === undefined ? null : conv(x)
        })
        return structValue(entries)
      }
    }
    default:
      return (v) => v as DuckDBValue
  }
}

/** The DuckDB type of a Spark type, as the appender needs it for nested values. */
const duckType = (t: T.DataType): DuckDBType => {
  switch (t._tag) {
    case "null":
    case "string":
    case "calendarInterval":
      return VARCHAR
    case "boolean":
      return BOOLEAN
    case "integer":
      return INTEGER
    case "long":
      return BIGINT
    case "double":
      return DOUBLE
    case "binary":
      return BLOB
    case "timestamp":
      return TIMESTAMP
    case "date":
      return DATE
    case "array":
      return LIST(duckType(t.elementType))
    case "map":
      return MAP(duckType(t.keyType), duckType(t.valueType))
    case "struct":
      return STRUCT(Object.fromEntries(t.fields.map((f) => [f.name, duckType(f.dataType)])))
  }
}

/** Appends rows to the staging table in one appender batch (values, never SQL text). */
const appendRows = (
  c: DuckDB.Connection,
  columns: ReadonlyArray<readonly [(v: unknown) => DuckDBValue, DuckDBType]>,
  rows: ReadonlyArray<InternalRow>
): Effect.Effect<void, DuckDB.DuckDBFailure> =>
  Effect.tryPromise({
    try: async () => {
      const appender = await c.raw.createAppender("batch")
      try {
        for (const r of rows) {
          for (let j = 0; j < columns.length; j++) {
            const v = r[j]
            if (v === null || v === undefined) appender.appendNull()
            else appender.appendValue(columns[j][0](v), columns[j][1])
          }
          appender.endRow()
        }
        appender.flushSync()
      } finally {
        appender.closeSync()
      }
    },
    catch: (cause) => new DuckDB.DuckDBFailure("APPEND batch", cause)
  })

/** The `parquet` writer (DuckDB). */
export const ParquetWriterFormat: FileWriterFormat = {
  name: "parquet",
  prepare: (dataSchema, options) =>
    Effect.gen(function* () {
      yield* checkSupportedTypes("Parquet", dataSchema, parquetSupports)
      const codecText = option(options, "compression") ?? "snappy"
      const codec = PARQUET_CODECS[codecText.toLowerCase()]
      if (codec === undefined) {
        return yield* invalidOption(
          "parquet",
          "compression",
          codecText,
          `it must be one of ${Object.keys(PARQUET_CODECS).join(", ")}`
        )
      }
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
      // the codec is one of the fixed names above, never user text
      const copy = `COPY "batch" TO ? (FORMAT parquet, COMPRESSION ${codec[0]})`
      const columns = dataSchema.fields.map((f) => [duckValue(f.dataType), duckType(f.dataType)] as const)
      return {
        extension: codec[1],
        write: (path, rows) =>
          DuckDB.withMemory((c) =>
            Effect.gen(function* () {
              yield* DuckDB.createTable(c, "batch", dataSchema, [])
              yield* appendRows(c, columns, rows)
              yield* c.execute(copy, [path])
            })
          ).pipe(Effect.mapError((e) => writeError("parquet", path, e)))
      }
    })
}

/** The writer formats by name. */
export const writerFormats: Readonly<Record<string, FileWriterFormat>> = {
  json: JsonWriterFormat,
  csv: CsvWriterFormat,
  text: TextWriterFormat,
  parquet: ParquetWriterFormat,
  orc: OrcWriterFormat
}
