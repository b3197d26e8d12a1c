/**
 * The `json` batch format: JSON Lines by default, one document per file with `multiLine`.
 * Files are read through DuckDB; records are parsed here so that Spark's rules hold exactly
 * (`JsonInferSchema` for inference, `JacksonParser` for conversion to a schema, and the
 * PERMISSIVE / DROPMALFORMED / FAILFAST handling of malformed records with partial results,
 * Spark 4's `spark.sql.json.enablePartialResults`).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { JsonFormat } from "./JsonFormat.ts"
 * const schema = JsonFormat.resolveSchema(["/data/events.json"], undefined, {})
 * // Effect<StructType>: integers are `long`, decimals `double`, objects structs with sorted fields
 * ```
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as Cast from "../../core/Cast.ts"
import * as T from "../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import type { BatchFormat } from "../../core/Formats.ts"
import type { InternalRow } from "../../core/Row.ts"
import type { InputFile } from "./FileListing.ts"
import { qualifiedName } from "./FileListing.ts"
import { type FileReader, makeFileFormat, noResource } from "./FileSource.ts"
import { parseIsoTimestampRange, SLOW } from "./FieldParsers.ts"
import { checkCorruptColumn, sqlType } from "./FileSourceOptions.ts"
import {
  canonicalizeJsonType,
  jsonCompatibleRootType,
  jsonCompatibleType,
  javaParseInt,
  javaParseLong,
  NonObjectRecord
} from "./Inference.ts"
import { type JsonOptions, parseJsonOptions } from "./JsonOptions.ts"
import { JsonReader, JsonSyntaxError, type JsonValue } from "./JsonSyntax.ts"
import { invalidIn, LineRanges, readMarkedText } from "./TextFiles.ts"

const toTimestamp = Cast.castFunction(T.StringType, T.TimestampType)
const toDate = Cast.castFunction(T.StringType, T.DateType)

/** Spark's `JsonFileFormat.supportDataType`: atomic types, null, and structs/arrays/maps of them. */
const supports = (t: T.DataType): boolean => {
  switch (t._tag) {
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
 * Whether a parsed record holds invalid UTF-8 where Spark's parser reads it: the bytes up to the
 * end of its first value (Jackson's byte parser rejects an invalid byte in any token or string),
 * or the whole record when an `encoding` is given (a strict charset decoder reads it first).
 * Such a record is malformed, with no partial results (a `MalformedInputException` or a
 * `JsonParseException` in Spark's `JacksonParser`).
 */
const invalidUtf8 = (invalid: Int32Array | undefined, r: LineRanges, value: JsonValue, o: JsonOptions): boolean =>
  invalid !== undefined && invalidIn(invalid, r.start, o.encodingGiven ? r.end : value.end)

/** The records of one file's text: its lines, or the whole text with `multiLine`, as ranges. */
const recordsOf = (text: string, o: JsonOptions): LineRanges => new LineRanges(text, o.lineSep, o.multiLine)

const recordLiteral = (text: string, r: LineRanges): string =>
  r.start === 0 && r.end === text.length ? text : text.slice(r.start, r.end)

const malformedError = (file: InputFile, record: string, inference: boolean): ConnectorError =>
  new ConnectorError({
    connector: "json",
    domain: "user",
    retryable: false,
    message: inference
      ? `[MALFORMED_RECORD_IN_SCHEMA_INFERENCE] Malformed records are detected in schema inference. Parse Mode: FAILFAST. File ${qualifiedName(file.path)}, record: ${record}`
      : `[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected in record parsing: ${record}. Parse Mode: FAILFAST. To process malformed records as null result, try setting the option 'mode' as 'PERMISSIVE'. File ${qualifiedName(file.path)}.`
  })

// -------------------------------------------------------------------------------------------
// Inference
// -------------------------------------------------------------------------------------------

const fitsLong = (text: string): boolean => javaParseLong(text) !== null

/** Spark's `JsonInferSchema.inferField` on a parsed value. */
const inferField = (v: JsonValue, o: JsonOptions): T.DataType => {
  switch (v.k) {
    case "null":
      return T.NullType
    case "str":
      // empty strings and nulls are treated alike until all records are merged
      if (v.v.length === 0) return T.NullType
      if (o.inferTimestamp && isTimestamp(v.v, o)) return T.TimestampType
      return T.StringType
    case "int":
      if (o.primitivesAsString) return T.StringType
      // INT and LONG become long; BIG_INTEGER would be decimal(p, 0) in Spark: double here
      return fitsLong(v.text) ? T.LongType : T.DoubleType
    case "float":
      return o.primitivesAsString ? T.StringType : T.DoubleType
    case "bool":
      return o.primitivesAsString ? T.StringType : T.BooleanType
    case "arr": {
      let e: T.DataType = T.NullType
      for (const item of v.items) e = jsonCompatibleType(e, inferField(item, o))
      return T.array(e, true)
    }
    case "obj": {
      const fields: Array<T.StructField> = []
      for (let i = 0; i < v.keys.length; i++) fields.push(T.field(v.keys[i], inferField(v.values[i], o), true))
      fields.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      // a key repeated in one object: merge its types rather than keep two columns of one name
      const merged: Array<T.StructField> = []
      for (const f of fields) {
        const last = merged[merged.length - 1]
        if (last !== undefined && last.name === f.name) {
          merged[merged.length - 1] = T.field(f.name, jsonCompatibleType(last.dataType, f.dataType), true)
        } else merged.push(f)
      }
      return T.struct(merged)
    }
  }
}

const isTimestamp = (s: string, o: JsonOptions): boolean =>
  o.timestampParser !== undefined ? o.timestampParser(s) !== null : toTimestamp(s) !== null

const inferSchema = (
  _: undefined,
  files: ReadonlyArray<InputFile>,
  o: JsonOptions
): Effect.Effect<T.StructType, ConnectorError> =>
  Effect.gen(function* () {
    const handling = o.mode === "PERMISSIVE" ? "addCorruptField" : o.mode === "DROPMALFORMED" ? "ignore" : "fail"
    const corruptStruct = T.struct([T.field(o.corruptColumn, T.StringType, true)])
    let root: T.DataType = T.struct([])
    const reader = new JsonReader(o.features)
    for (const file of files) {
      if (file.size === 0) continue
      const { text, invalid } = yield* readMarkedText("json", file.path, o.encoding)
      const r = recordsOf(text, o)
      while (r.next()) {
        const parsed = reader.parse(text, r.start, r.end)
        let t: T.DataType
        if (parsed === undefined) t = T.NullType
        else if (parsed instanceof JsonSyntaxError || invalidUtf8(invalid, r, parsed, o)) {
          if (o.mode === "DROPMALFORMED") continue
          if (o.mode === "FAILFAST") return yield* Effect.fail(malformedError(file, recordLiteral(text, r), true))
          t = corruptStruct
        } else t = inferField(parsed, o)
        try {
          root = jsonCompatibleRootType(root, t, o.corruptColumn, handling)
        } catch (e) {
          if (e instanceof NonObjectRecord)
            return yield* Effect.fail(malformedError(file, recordLiteral(text, r), true))
          throw e
        }
      }
    }
    const canonical = canonicalizeJsonType(root, o.dropFieldIfAllNull)
    return canonical !== undefined && canonical._tag === "struct" ? canonical : T.struct([])
  })

// -------------------------------------------------------------------------------------------
// Conversion to a schema (JacksonParser)
// -------------------------------------------------------------------------------------------

/** A value that does not fit its type: the enclosing field becomes null and the record malformed. */
const FAIL: unique symbol = Symbol("json.fail")

/** Set when a record converted only partially (some field failed). */
interface Ctx {
  bad: boolean
}

type Converter = (v: JsonValue, text: string, ctx: Ctx) => unknown

const base64Re = /^[A-Za-z0-9+/]*={0,2}$/

/** Base64 (Jackson's default variant) to bytes; `undefined` when the text is not base64. */
const decodeBase64 = (s: string): Uint8Array | undefined => {
  if (!base64Re.test(s)) return undefined
  let bin: string
  try {
    bin = atob(s.length % 4 === 0 ? s : s + "=".repeat(4 - (s.length % 4)))
  } catch {
    return undefined
  }
  const out = new Uint8Array(bin.length)
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i)
  return out
}

const INT_MIN = -2147483648
const INT_MAX = 2147483647

const makeConverter = (t: T.DataType, o: JsonOptions): Converter => {
  switch (t._tag) {
    case "null":
      return () => null
    case "boolean":
      return (v) => (v.k === "bool" ? v.v : v.k === "null" ? null : FAIL)
    case "integer":
      return (v) => {
        if (v.k === "null") return null
        if (v.k !== "int") return FAIL
        // + 0: the JSON number -0 is the integer 0, as in Spark (Number("-0") is -0)
        const n = Number(v.text) + 0
        return n < INT_MIN || n > INT_MAX ? FAIL : n
      }
    case "long":
      return (v) => {
        if (v.k === "null") return null
        if (v.k !== "int") return FAIL
        return javaParseLong(v.text) ?? FAIL
      }
    case "double":
      return (v) => {
        switch (v.k) {
          case "null":
            return null
          case "int":
            return Number(v.text)
          case "float":
            return v.v
          case "str":
            if (!o.features.allowNonNumericNumbers) return FAIL
            switch (v.v) {
              case "NaN":
                return Number.NaN
              case "+INF":
              case "+Infinity":
              case "Infinity":
                return Infinity
              case "-INF":
              case "-Infinity":
                return -Infinity
              default:
                return FAIL
            }
          default:
            return FAIL
        }
      }
    case "string":
      // non-string values keep their exact source text (spark.sql.json.enableExactStringParsing)
      return (v, text) => (v.k === "str" ? v.v : v.k === "null" ? null : text.slice(v.start, v.end))
    case "binary":
      return (v) => {
        if (v.k === "null") return null
        if (v.k !== "str") return FAIL
        return decodeBase64(v.v) ?? FAIL
      }
    case "timestamp":
      return (v) => {
        if (v.k === "null") return null
        if (v.k === "int") return Number(v.text) * 1000
        if (v.k !== "str" || v.v.length === 0) return FAIL
        if (o.timestampParser !== undefined) return o.timestampParser(v.v) ?? FAIL
        // the ISO-8601 spelling without a substring or the general parser (same results)
        const fast = parseIsoTimestampRange(v.v, 0, v.v.length)
        if (fast !== SLOW) return fast ?? FAIL
        return (toTimestamp(v.v) as number | null) ?? FAIL
      }
    case "date":
      return (v) => {
        if (v.k === "null") return null
        if (v.k !== "str" || v.v.length === 0) return FAIL
        if (o.dateParser !== undefined) {
          const ms = o.dateParser(v.v)
          return ms === null ? FAIL : Math.floor(ms / 86_400_000)
        }
        const d = toDate(v.v) as number | null
        if (d !== null) return d
        // Spark 1.5 wrote dates as a number of days in a string
        return javaParseInt(v.v) ?? FAIL
      }
    case "calendarInterval":
      return () => FAIL
    case "struct":
      return structConverter(t, o)
    case "array": {
      const elem = makeConverter(t.elementType, o)
      return (v, text, ctx) => {
        if (v.k === "null") return null
        if (v.k !== "arr") return FAIL
        const out = new Array<unknown>(v.items.length)
        for (let i = 0; i < v.items.length; i++) {
          const x = elem(v.items[i], text, ctx)
          // an element that does not convert fails the whole array (Spark keeps only partial structs)
          if (x === FAIL) return FAIL
          out[i] = x
        }
        return out
      }
    }
    case "map": {
      const value = makeConverter(t.valueType, o)
      const key = t.keyType._tag === "string" ? undefined : Cast.castFunction(T.StringType, t.keyType)
      return (v, text, ctx) => {
        if (v.k === "null") return null
        if (v.k !== "obj") return FAIL
        const out = new Map<unknown, unknown>()
        for (let i = 0; i < v.keys.length; i++) {
          const x = value(v.values[i], text, ctx)
          if (x === FAIL) return FAIL
          const k = key === undefined ? v.keys[i] : key(v.keys[i])
          if (k === null) return FAIL
          out.set(k, x)
        }
        return out
      }
    }
  }
}

/** Converts an object to a positional row: unknown keys are skipped, names match exactly. */
const structConverter = (t: T.StructType, o: JsonOptions): ((v: JsonValue, text: string, ctx: Ctx) => unknown) => {
  const index = new Map<string, number>()
  t.fields.forEach((f, i) => {
    if (!index.has(f.name)) index.set(f.name, i)
  })
  const convs = t.fields.map((f) => makeConverter(f.dataType, o))
  const n = t.fields.length
  return (v, text, ctx) => {
    if (v.k === "null") return null
    if (v.k !== "obj") return FAIL
    const row = new Array<unknown>(n).fill(null)
    for (let i = 0; i < v.keys.length; i++) {
      const j = index.get(v.keys[i])
      if (j === undefined) continue
      const x = convs[j](v.values[i], text, ctx)
      // partial results: the field stays null, the others keep their values
      if (x === FAIL) ctx.bad = true
      else row[j] = x
    }
    return row
  }
}

const makeReader = (dataSchema: T.StructType, o: JsonOptions): Effect.Effect<FileReader<undefined>> =>
  Effect.sync(() => {
    const corruptAt = dataSchema.fields.findIndex((f) => f.name === o.corruptColumn)
    const parseFields = dataSchema.fields.filter((_, i) => i !== corruptAt)
    // output position of each parsed field
    const positions = dataSchema.fields.map((_, i) => i).filter((i) => i !== corruptAt)
    const parseSchema = T.struct(parseFields)
    const root = structConverter(parseSchema, o)
    const width = dataSchema.fields.length
    const skipParsing = parseFields.length === 0 && corruptAt < 0 && o.mode === "PERMISSIVE" && !o.multiLine
    const reader = new JsonReader(o.features)

    const place = (parsed: ReadonlyArray<unknown> | undefined, corrupt: string | null): InternalRow => {
      if (corruptAt < 0 && parsed !== undefined) return parsed
      const out = new Array<unknown>(width).fill(null)
      if (parsed !== undefined) for (let i = 0; i < positions.length; i++) out[positions[i]] = parsed[i]
      if (corruptAt >= 0) out[corruptAt] = corrupt
      return out
    }

    return (_, file) =>
      Effect.gen(function* () {
        const { text, invalid } = yield* readMarkedText("json", file.path, o.encoding)
        const out: Array<InternalRow> = []
        const ctx: Ctx = { bad: false }
        const r = recordsOf(text, o)
        while (r.next()) {
          if (skipParsing) {
            if (r.end > r.start) out.push([])
            continue
          }
          const parsed = reader.parse(text, r.start, r.end)
          if (parsed === undefined) continue
          ctx.bad = false
          let rows: Array<ReadonlyArray<unknown>> | typeof FAIL
          if (parsed instanceof JsonSyntaxError || invalidUtf8(invalid, r, parsed, o)) rows = FAIL
          else if (parsed.k === "obj") rows = [root(parsed, text, ctx) as ReadonlyArray<unknown>]
          else if (parsed.k === "arr") {
            // SPARK-3308: a top-level array holds one row per element
            rows = []
            for (const item of parsed.items) {
              if (item.k !== "obj") {
                rows = FAIL
                break
              }
              rows.push(root(item, text, ctx) as ReadonlyArray<unknown>)
            }
          } else rows = FAIL
          if (rows !== FAIL && !ctx.bad) {
            for (const row of rows) out.push(place(row, null))
            continue
          }
          switch (o.mode) {
            case "PERMISSIVE": {
              const literal = recordLiteral(text, r)
              if (rows === FAIL || rows.length === 0) out.push(place(undefined, literal))
              else for (const row of rows) out.push(place(row, literal))
              break
            }
            case "DROPMALFORMED":
              break
            case "FAILFAST":
              return yield* Effect.fail(malformedError(file, recordLiteral(text, r), false))
          }
        }
        return out
      })
  })

/**
 * The parse of one JSON text into a row of `schema` for `from_json` (Spark's `JsonToStructs`
 * with `JacksonParser` and `FailureSafeParser`): blank text gives null; an object gives its row;
 * anything else (a syntax error, an array — `allowArrayAsStructs` is off for `from_json` — a
 * scalar, `null`) or a field that does not convert makes the record malformed: in PERMISSIVE a
 * row of nulls with what converted kept and the text in the corrupt-record field when `schema`
 * has it; in FAILFAST a user `ConnectorError` naming the record. Invalid UTF-8 cannot occur: the
 * text is a string already (Spark decodes a `UTF8String` with a replacing reader here).
 */
export const jsonStructParser = (schema: T.StructType, o: JsonOptions): ((text: string) => unknown) => {
  const corruptAt = schema.fields.findIndex((f) => f.name === o.corruptColumn && f.dataType._tag === "string")
  const parseFields = schema.fields.filter((_, i) => i !== corruptAt)
  const positions = schema.fields.map((_, i) => i).filter((i) => i !== corruptAt)
  const root = structConverter(T.struct(parseFields), o)
  const width = schema.fields.length
  const reader = new JsonReader(o.features)
  const ctx: Ctx = { bad: false }
  return (text) => {
    const parsed = reader.parse(text, 0, text.length)
    if (parsed === undefined) return null
    ctx.bad = false
    const row = parsed instanceof JsonSyntaxError || parsed.k !== "obj" ? FAIL : (root(parsed, text, ctx) as ReadonlyArray<unknown>)
    if (row !== FAIL && !ctx.bad && corruptAt < 0) return row
    if (row !== FAIL && !ctx.bad) {
      const out = new Array<unknown>(width).fill(null)
      for (let i = 0; i < positions.length; i++) out[positions[i]] = row[i]
      return out
    }
    if (o.mode === "FAILFAST") {
      throw new ConnectorError({
        connector: "json",
        domain: "user",
        retryable: false,
        errorClass: "MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION",
        message: `[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected in record parsing: ${text}. Parse Mode: FAILFAST. To process malformed records as null result, try setting the option 'mode' as 'PERMISSIVE'.`
      })
    }
    const out = new Array<unknown>(width).fill(null)
    if (row !== FAIL) for (let i = 0; i < positions.length; i++) out[positions[i]] = row[i]
    if (corruptAt >= 0) out[corruptAt] = text
    return out
  }
}

const hasNonStringMapKey = (t: T.DataType): boolean => {
  switch (t._tag) {
    case "map":
      return t.keyType._tag !== "string" || hasNonStringMapKey(t.keyType) || hasNonStringMapKey(t.valueType)
    case "array":
      return hasNonStringMapKey(t.elementType)
    case "struct":
      return t.fields.some((f) => hasNonStringMapKey(f.dataType))
    default:
      return false
  }
}

/**
 * Spark's `ExprUtils.checkJsonSchema` (SPARK-35320): JSON object keys are strings, so a map
 * anywhere in the user's schema must have string keys (`INVALID_JSON_SCHEMA_MAP_TYPE`).
 */
const checkMapKeys = (schema: T.StructType): Effect.Effect<void, AnalysisError> =>
  hasNonStringMapKey(schema)
    ? Effect.fail(
        new AnalysisError({
          reason: "DataTypeMismatch",
          errorClass: "INVALID_JSON_SCHEMA_MAP_TYPE",
          message: `[INVALID_JSON_SCHEMA_MAP_TYPE] Input schema "${sqlType(schema)}" can only contain STRING as a key type for a MAP.`
        })
      )
    : Effect.void

/** The `json` format. */
export const JsonFormat: BatchFormat = makeFileFormat<JsonOptions, undefined>({
  name: "json",
  title: "JSON",
  parseOptions: parseJsonOptions,
  supports,
  checkUserSchema: (data, o) => Effect.andThen(checkMapKeys(data), checkCorruptColumn(data, o.corruptColumn)),
  withResource: noResource,
  inferSchema,
  makeReader
})
