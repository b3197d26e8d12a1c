/**
 * The `csv` batch format. Files are read through DuckDB and tokenized here (`CsvParser.ts`)
 * because DuckDB's CSV reader differs from Spark's univocity parser on quotes, short and long
 * rows and malformed input. Inference follows Spark's `CSVInferSchema`; conversion and
 * malformed-record handling follow `UnivocityParser` and `FailureSafeParser`: a record with
 * the wrong number of fields, or a value that does not convert, is malformed — PERMISSIVE keeps
 * what converted (missing fields null, extra ones dropped) and puts the line in the
 * corrupt-record column when the schema has one, DROPMALFORMED drops it, FAILFAST fails.
 *
 * @example
 * ```ts
 * import { JsonFormat } from "./JsonFormat.ts"
 * import { CsvFormat } from "./CsvFormat.ts"
 * CsvFormat.resolveSchema(["/data/people.csv"], undefined, { header: "true", inferSchema: "true" })
 * ```
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as Cast from "../../core/Cast.ts"
import * as T from "../../core/DataType.ts"
import { ConnectorError } from "../../core/Errors.ts"
import type { BatchFormat } from "../../core/Formats.ts"
import type { InternalRow } from "../../core/Row.ts"
import { javaTrim } from "../OptionParsing.ts"
import { type CsvOptions, parseCsvOptions } from "./CsvOptions.ts"
import { CsvTokenizer } from "./CsvParser.ts"
import { type InputFile, qualifiedName } from "./FileListing.ts"
import { type FileReader, makeFileFormat, noResource } from "./FileSource.ts"
import { Interner, parseIntRange, parseIsoTimestampRange, parseLongRange, SLOW } from "./FieldParsers.ts"
import { checkCorruptColumn } from "./FileSourceOptions.ts"
import {
  type CsvInferOptions,
  csvInferField,
  javaParseDouble,
  javaParseInt,
  javaParseLong,
  scalaToBoolean
} from "./Inference.ts"
import { readText, splitLines } from "./TextFiles.ts"

const toTimestamp = Cast.castFunction(T.StringType, T.TimestampType)
const toDate = Cast.castFunction(T.StringType, T.DateType)
const MS_PER_DAY = 86_400_000

/** Spark's `CSVFileFormat.supportDataType`: atomic types only. */
const supports = (t: T.DataType): boolean =>
  t._tag !== "struct" && t._tag !== "array" && t._tag !== "map" && t._tag !== "calendarInterval"

/** One CSV record: its tokens and its raw text. */
interface Row {
  readonly tokens: Array<string>
  readonly raw: string
}

/**
 * The records of one file, comment and blank lines skipped. With `header`, the file's first
 * record is returned apart.
 */
const recordsOf = (
  text: string,
  o: CsvOptions,
  tokenizer: CsvTokenizer
): { readonly header: Row | undefined; readonly rows: Array<Row> } => {
  const rows: Array<Row> = []
  if (o.multiLine) {
    for (const r of tokenizer.parseAll(text, o.comment))
      rows.push({ tokens: r.tokens, raw: text.slice(r.start, r.end) })
  } else {
    // Spark's CSVExprUtils.filterCommentAndEmpty, then one record per line
    for (const line of splitLines(text, o.lineSep)) {
      if (javaTrim(line).length === 0) continue
      if (o.comment !== undefined && line.startsWith(o.comment)) continue
      rows.push({ tokens: tokenizer.parseLine(line), raw: line })
    }
  }
  if (!o.header || rows.length === 0) return { header: undefined, rows }
  return { header: rows[0], rows: rows.slice(1) }
}

const tokenizerOf = (o: CsvOptions): CsvTokenizer =>
  new CsvTokenizer({
    delimiter: o.delimiter,
    quote: o.quote,
    escape: o.escape,
    escapeEscape: o.escapeEscape,
    ignoreLeadingWhiteSpace: o.ignoreLeadingWhiteSpace,
    ignoreTrailingWhiteSpace: o.ignoreTrailingWhiteSpace,
    nullValue: o.nullValue,
    emptyValue: o.emptyValue
  })

/**
 * Spark's `CSVUtils.makeSafeHeader`: header names, `_c<i>` for empty or null ones, and the
 * position appended to names that repeat (case-insensitively).
 */
const safeHeader = (tokens: ReadonlyArray<string>, o: CsvOptions): Array<string> => {
  if (!o.header) return tokens.map((_, i) => `_c${i}`)
  const counts = new Map<string, number>()
  for (const t of tokens) counts.set(t.toLowerCase(), (counts.get(t.toLowerCase()) ?? 0) + 1)
  return tokens.map((t, i) => {
    if (t.length === 0 || t === o.nullValue) return `_c${i}`
    return (counts.get(t.toLowerCase()) ?? 0) > 1 ? `${t}${i}` : t
  })
}

const inferOptions = (o: CsvOptions): CsvInferOptions => {
  // Spark parses dates strictly with `yyyy-MM-dd` unless `dateFormat` says otherwise
  const strictDate = /^\d{4}-\d{2}-\d{2}$/
  return {
    nullValue: o.nullValue,
    nanValue: o.nanValue,
    positiveInf: o.positiveInf,
    negativeInf: o.negativeInf,
    preferDate: o.preferDate,
    isDate:
      o.dateParser !== undefined ? (s) => o.dateParser!(s) !== null : (s) => strictDate.test(s) && toDate(s) !== null,
    isTimestamp:
      o.timestampParser !== undefined ? (s) => o.timestampParser!(s) !== null : (s) => toTimestamp(s) !== null,
    // the lenient timestamp parser reads `yyyy-MM-dd` dates; a custom timestamp format does not
    datesWidenToTimestamp: o.timestampParser === undefined && !o.dateFormatSet
  }
}

const inferSchema = (
  _: undefined,
  files: ReadonlyArray<InputFile>,
  o: CsvOptions
): Effect.Effect<T.StructType, ConnectorError> =>
  Effect.gen(function* () {
    const tokenizer = tokenizerOf(o)
    let header: Row | undefined
    const data: Array<Row> = []
    for (const file of files) {
      if (file.size === 0) continue
      const text = yield* readText("csv", file.path, o.encoding)
      const recs = recordsOf(text, o, tokenizer)
      const first = recs.header ?? recs.rows[0]
      if (header === undefined && first !== undefined) header = first
      // line mode keeps every file's first line here: Spark's `filterHeaderLine` below drops
      // the lines equal to the header; with multiLine each file's first record is dropped
      if (recs.header !== undefined && !o.multiLine) data.push(recs.header)
      for (const r of recs.rows) data.push(r)
    }
    if (header === undefined) return T.struct([])
    const names = safeHeader(header.tokens, o)
    if (!o.inferSchema) return T.struct(names.map((n) => T.field(n, T.StringType, true)))
    const headerLine = header.raw
    const rows = o.header && !o.multiLine ? data.filter((r) => r.raw !== headerLine) : data
    const io = inferOptions(o)
    const types: Array<T.DataType> = names.map(() => T.NullType)
    for (const r of rows) {
      const n = Math.min(types.length, r.tokens.length)
      for (let i = 0; i < n; i++) types[i] = csvInferField(io, types[i], r.tokens[i])
    }
    return T.struct(names.map((n, i) => T.field(n, types[i]._tag === "null" ? T.StringType : types[i], true)))
  })

/** A token that does not convert to its column's type. */
const FAIL: unique symbol = Symbol("csv.fail")

type Converter = (token: string) => unknown

/** Spark's `UnivocityParser.makeConverter`, for a non-null token. */
const converterOf = (t: T.DataType, o: CsvOptions): Converter => {
  switch (t._tag) {
    case "null":
      return () => null
    case "integer":
      return (s) => javaParseInt(s) ?? FAIL
    case "long":
      return (s) => javaParseLong(s) ?? FAIL
    case "double":
      return (s) =>
        s === o.nanValue
          ? Number.NaN
          : s === o.negativeInf
            ? -Infinity
            : s === o.positiveInf
              ? Infinity
              : (javaParseDouble(s) ?? FAIL)
    case "boolean":
      return (s) => scalaToBoolean(s) ?? FAIL
    case "string":
      return (s) => s
    case "binary": {
      const enc = new TextEncoder()
      return (s) => enc.encode(s)
    }
    case "timestamp":
      return o.timestampParser !== undefined
        ? (s) => o.timestampParser!(s) ?? FAIL
        : (s) => (toTimestamp(s) as number | null) ?? FAIL
    case "date":
      return o.dateParser !== undefined
        ? (s) => {
            const ms = o.dateParser!(s)
            return ms === null ? FAIL : Math.floor(ms / MS_PER_DAY)
          }
        : (s) => (toDate(s) as number | null) ?? FAIL
    default:
      return () => FAIL
  }
}

const malformedError = (file: InputFile, record: string): ConnectorError =>
  new ConnectorError({
    connector: "csv",
    domain: "user",
    retryable: false,
    message: `[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION] Malformed records are detected in record parsing: ${record}. Parse Mode: FAILFAST. To process malformed records as null result, try setting the option 'mode' as 'PERMISSIVE'. File ${qualifiedName(file.path)}.`
  })

/** Spark's `CSVHeaderChecker` with `enforceSchema=false`: the header must match the schema. */
const checkHeader = (
  header: Row,
  names: ReadonlyArray<string>,
  file: InputFile,
  o: CsvOptions
): ConnectorError | undefined => {
  const tokens = header.tokens
  let message: string | undefined
  if (tokens.length !== names.length) {
    message = `Number of column in CSV header is not equal to number of fields in the schema:\n Header length: ${tokens.length}, schema size: ${names.length}\nCSV file: ${qualifiedName(file.path)}`
  } else {
    for (let i = 0; i < names.length; i++) {
      const h = tokens[i] === o.nullValue ? "" : tokens[i]
      if (h.toLowerCase() !== names[i].toLowerCase()) {
        message = `CSV header does not conform to the schema.\n Header: ${tokens.join(", ")}\n Schema: ${names.join(", ")}\nExpected: ${names[i]} but found: ${h}\nCSV file: ${qualifiedName(file.path)}`
        break
      }
    }
  }
  return message === undefined
    ? undefined
    : new ConnectorError({ connector: "csv", domain: "user", retryable: false, message })
}

/** A converter over `text[start, end)`, a non-null unquoted token, for the line-mode fast path. */
type RangeConverter = (text: string, start: number, end: number) => unknown

/**
 * `converterOf` over a range of the file's text: ints, longs and ISO timestamps are parsed in
 * place (`FieldParsers.ts`, falling back to `conv` on a substring for other spellings), strings
 * are interned per read, the other types take the substring to `conv`.
 */
const rangeConverterOf = (t: T.DataType, o: CsvOptions, conv: Converter): RangeConverter => {
  switch (t._tag) {
    case "integer":
      return (x, s, e) => {
        const v = parseIntRange(x, s, e)
        return v === SLOW ? conv(x.slice(s, e)) : v === null ? FAIL : v
      }
    case "long":
      return (x, s, e) => {
        const v = parseLongRange(x, s, e)
        return v === SLOW ? conv(x.slice(s, e)) : v === null ? FAIL : v
      }
    case "string": {
      const interner = new Interner()
      return (x, s, e) => interner.slice(x, s, e)
    }
    case "timestamp":
      if (o.timestampParser !== undefined) return (x, s, e) => conv(x.slice(s, e))
      return (x, s, e) => {
        const v = parseIsoTimestampRange(x, s, e)
        return v === SLOW ? conv(x.slice(s, e)) : v === null ? FAIL : v
      }
    default:
      return (x, s, e) => conv(x.slice(s, e))
  }
}

const makeReader = (dataSchema: T.StructType, o: CsvOptions): Effect.Effect<FileReader<undefined>> =>
  Effect.sync(() => {
    const corruptAt = dataSchema.fields.findIndex((f) => f.name === o.corruptColumn)
    // the corrupt-record column takes no token: the others map to tokens by position
    const positions = dataSchema.fields.map((_, i) => i).filter((i) => i !== corruptAt)
    const convs = positions.map((i) => converterOf(dataSchema.fields[i].dataType, o))
    const rangeConvs = positions.map((i, k) => rangeConverterOf(dataSchema.fields[i].dataType, o, convs[k]))
    const names = positions.map((i) => dataSchema.fields[i].name)
    const n = positions.length
    const width = dataSchema.fields.length
    const nullValue = o.nullValue
    const tokenizer = tokenizerOf(o)
    // a packed array of nulls: `slice()` copies it into a new row faster than filling one
    const blank: Array<unknown> = new Array<unknown>(width).fill(null)
    // The line-mode fast path reads unquoted fields in place; a line with a quoted field goes
    // through the tokenizer. The whitespace options change every field: those reads (and
    // multiLine ones) use the tokenizer for all records.
    const fast = !o.multiLine && !o.ignoreLeadingWhiteSpace && !o.ignoreTrailingWhiteSpace
    const delim = o.delimiter
    const delimLen = delim.length
    const d0 = delim.charCodeAt(0)
    const quote = o.quote
    const commentCode = o.comment === undefined ? -1 : o.comment.charCodeAt(0)
    const nullLen = nullValue.length

    /** Converts a record's tokens into `row`; whether it is malformed. */
    const convertTokens = (tokens: ReadonlyArray<string>, row: Array<unknown>): boolean => {
      let bad = tokens.length !== n
      for (let k = 0; k < n; k++) {
        const tok = k < tokens.length ? tokens[k] : null
        if (tok === null || tok === nullValue) continue
        const v = convs[k](tok)
        if (v === FAIL) bad = true
        else row[positions[k]] = v
      }
      return bad
    }

    /**
     * Converts the line `text[ls, le)` into `row` reading its unquoted fields in place;
     * `undefined` when a field is quoted (the caller tokenizes the line), else whether it is
     * malformed. The fields are what `CsvTokenizer.parseLine` returns for an unquoted line: the
     * text between delimiters, the empty one being `nullValue`.
     */
    const convertLine = (text: string, ls: number, le: number, row: Array<unknown>): boolean | undefined => {
      let p = ls
      let k = 0
      let bad = false
      while (true) {
        if (p < le && text.charCodeAt(p) === quote) return undefined
        let fe = p
        if (delimLen === 1) {
          while (fe < le && text.charCodeAt(fe) !== d0) fe++
        } else {
          while (fe < le && !(text.charCodeAt(fe) === d0 && fe + delimLen <= le && text.startsWith(delim, fe))) fe++
        }
        if (k < n && fe > p && !(fe - p === nullLen && text.startsWith(nullValue, p))) {
          const v = rangeConvs[k](text, p, fe)
          if (v === FAIL) bad = true
          else row[positions[k]] = v
        }
        k++
        if (fe >= le) break
        p = fe + delimLen
      }
      return bad || k !== n
    }

    return (_, file) =>
      Effect.gen(function* () {
        const text = yield* readText("csv", file.path, o.encoding)
        const out: Array<InternalRow> = []
        /** Adds the record `raw` converted into `row` by mode; a FAILFAST error, or nothing. */
        const emit = (row: Array<unknown>, bad: boolean, raw: () => string): ConnectorError | undefined => {
          if (!bad) {
            out.push(row)
            return undefined
          }
          switch (o.mode) {
            case "PERMISSIVE":
              if (corruptAt >= 0) row[corruptAt] = raw()
              out.push(row)
              return undefined
            case "DROPMALFORMED":
              return undefined
            case "FAILFAST":
              return malformedError(file, raw())
          }
        }
        if (!fast) {
          const { header, rows } = recordsOf(text, o, tokenizer)
          if (header !== undefined && !o.enforceSchema) {
            const err = checkHeader(header, names, file, o)
            if (err !== undefined) return yield* Effect.fail(err)
          }
          for (const r of rows) {
            const row = blank.slice()
            const err = emit(row, convertTokens(r.tokens, row), () => r.raw)
            if (err !== undefined) return yield* Effect.fail(err)
          }
          return out
        }
        // line mode: `splitLines` + Spark's CSVExprUtils.filterCommentAndEmpty, over ranges
        const len = text.length
        const lineSep = o.lineSep
        const noCR = lineSep === undefined && text.indexOf("\r") < 0
        let headerPending = o.header
        let pos = 0
        while (pos < len) {
          const ls = pos
          let le: number
          if (lineSep !== undefined || noCR) {
            const i = text.indexOf(lineSep ?? "\n", pos)
            le = i < 0 ? len : i
            pos = i < 0 ? len : i + (lineSep ?? "\n").length
          } else {
            let i = pos
            while (i < len) {
              const c = text.charCodeAt(i)
              if (c === 10 || c === 13) break
              i++
            }
            le = i
            pos =
              i >= len ? len : text.charCodeAt(i) === 13 && i + 1 < len && text.charCodeAt(i + 1) === 10 ? i + 2 : i + 1
          }
          // blank (javaTrim empty) and comment lines
          if (ls === le) continue
          if (text.charCodeAt(ls) <= 32) {
            let j = ls
            while (j < le && text.charCodeAt(j) <= 32) j++
            if (j === le) continue
          }
          if (text.charCodeAt(ls) === commentCode) continue
          if (headerPending) {
            headerPending = false
            if (!o.enforceSchema) {
              const header: Row = { tokens: tokenizer.parseLine(text, ls, le), raw: text.slice(ls, le) }
              const err = checkHeader(header, names, file, o)
              if (err !== undefined) return yield* Effect.fail(err)
            }
            continue
          }
          const row = blank.slice()
          let bad = convertLine(text, ls, le, row)
          if (bad === undefined) {
            // a quoted field: the tokenizer reads the line, into a fresh row
            const fresh = blank.slice()
            bad = convertTokens(tokenizer.parseLine(text, ls, le), fresh)
            const err = emit(fresh, bad, () => text.slice(ls, le))
            if (err !== undefined) return yield* Effect.fail(err)
            continue
          }
          const err = emit(row, bad, () => text.slice(ls, le))
          if (err !== undefined) return yield* Effect.fail(err)
        }
        return out
      })
  })

/** The `csv` format. */
export const CsvFormat: BatchFormat = makeFileFormat<CsvOptions, undefined>({
  name: "csv",
  title: "CSV",
  parseOptions: parseCsvOptions,
  supports,
  checkUserSchema: (data, o) => checkCorruptColumn(data, o.corruptColumn),
  withResource: noResource,
  inferSchema,
  makeReader
})
