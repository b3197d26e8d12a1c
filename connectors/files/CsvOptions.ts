/**
 * The options of the `csv` source, Spark's `CSVOptions` for reading, with Spark's defaults.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import type { AnalysisError } from "../../core/Errors.ts"
import type { Options } from "../../core/Formats.ts"
import { defaultCorruptColumn, invalidOption, OptionReader, type ParseMode, parseOptions } from "./FileSourceOptions.ts"

/** The parsed `csv` options (Spark's defaults in brackets). */
export interface CsvOptions {
  /** `header` [false]: the first record of each file names the columns and is not data. */
  readonly header: boolean
  /** `inferSchema` [false]: infer column types; otherwise every column is a string. */
  readonly inferSchema: boolean
  /** `sep` / `delimiter` [`,`]: one or more characters (`\t` and friends may be written escaped). */
  readonly delimiter: string
  /** `quote` [`"`]; `-1` when quoting is off (an empty option value). */
  readonly quote: number
  /** `escape` [`\`]: escapes a quote inside a quoted value; `-1` when off. */
  readonly escape: number
  /** `charToEscapeQuoteEscaping` [the escape when it differs from the quote, else off]. */
  readonly escapeEscape: number
  /** `comment`: lines starting with this character are skipped; `undefined` when not set. */
  readonly comment: string | undefined
  /** `ignoreLeadingWhiteSpace` [false for reading]. */
  readonly ignoreLeadingWhiteSpace: boolean
  /** `ignoreTrailingWhiteSpace` [false for reading]. */
  readonly ignoreTrailingWhiteSpace: boolean
  /** `nullValue` [empty]: the text of a null value. */
  readonly nullValue: string
  /** `emptyValue` [empty]: the value of an empty quoted string (`""`). */
  readonly emptyValue: string
  readonly nanValue: string
  readonly positiveInf: string
  readonly negativeInf: string
  readonly mode: ParseMode
  /** `columnNameOfCorruptRecord` [`_corrupt_record`]. */
  readonly corruptColumn: string
  /** `multiLine` [false]: quoted values may span lines. */
  readonly multiLine: boolean
  readonly lineSep: string | undefined
  readonly encoding: string
  /** `preferDate` [true]: infer `date` before `timestamp`. */
  readonly preferDate: boolean
  /** `enforceSchema` [true]: apply the schema without checking it against the header. */
  readonly enforceSchema: boolean
  /** `dateFormat`: a strict pattern; without it dates parse as a cast does. */
  readonly dateParser: ((text: string) => number | null) | undefined
  /** `timestampFormat`: a strict pattern; without it timestamps parse as a cast does. */
  readonly timestampParser: ((text: string) => number | null) | undefined
  /** Whether `dateFormat` was given (a date and timestamp mix then infers as string). */
  readonly dateFormatSet: boolean
}

/**
 * Spark's `CSVExprUtils.toDelimiterStr`: each character, or a backslash sequence (`\t`, `\r`,
 * `\b`, `\f`, `\"`, `\'`, `\\`, `\u0000`), becomes one delimiter character.
 */
const toDelimiter = (key: string, s: string): string => {
  if (s.length === 0) throw invalidOption("csv", key, s, "the delimiter cannot be an empty string")
  if (s === "\\u0000") return "\u0000"
  let out = ""
  let i = 0
  while (i < s.length) {
    if (s[i] !== "\\") {
      out += s[i]
      i++
      continue
    }
    if (i + 1 >= s.length) {
      throw invalidOption(
        "csv",
        key,
        s,
        "a single backslash is prohibited; it begins an escape sequence (use two backslashes for a backslash)"
      )
    }
    const n = s[i + 1]
    const mapped =
      n === "t"
        ? "\t"
        : n === "r"
          ? "\r"
          : n === "b"
            ? "\b"
            : n === "f"
              ? "\f"
              : n === '"' || n === "'" || n === "\\"
                ? n
                : undefined
    if (mapped === undefined) throw invalidOption("csv", key, s, `unsupported special character for delimiter: \\${n}`)
    out += mapped
    i += 2
  }
  return out
}

const code = (c: string): number => (c === "\u0000" ? -1 : c.charCodeAt(0))

/** Parses the `csv` options; an invalid value fails with `InvalidArgument` naming it. */
export const parseCsvOptions = (options: Options): Effect.Effect<CsvOptions, AnalysisError> =>
  parseOptions(() => {
    const r = new OptionReader("csv", options)
    const sepKey = r.get("sep") !== undefined ? "sep" : "delimiter"
    const delimiter = toDelimiter(sepKey, r.get(sepKey) ?? ",")
    const quote = code(r.char("quote", '"'))
    const escapeChar = code(r.char("escape", "\\"))
    const ete = r.get("charToEscapeQuoteEscaping")
    if (ete !== undefined && ete.length > 1) {
      throw invalidOption("csv", "charToEscapeQuoteEscaping", ete, "it cannot be more than one character")
    }
    const escapeEscape =
      ete !== undefined && ete.length === 1 ? ete.charCodeAt(0) : escapeChar === quote ? -1 : escapeChar
    const comment = r.char("comment", "\u0000")
    const handling = r.get("unescapedQuoteHandling")
    if (handling !== undefined && handling.toUpperCase() !== "STOP_AT_DELIMITER") {
      throw invalidOption(
        "csv",
        "unescapedQuoteHandling",
        handling,
        "tributary supports only STOP_AT_DELIMITER (Spark's default)"
      )
    }
    const ratio = r.get("samplingRatio")
    if (ratio !== undefined && !(Number(ratio) > 0)) {
      throw invalidOption("csv", "samplingRatio", ratio, "it should be greater than 0")
    }
    r.int("maxColumns", 20480)
    r.int("maxCharsPerColumn", -1)
    return {
      header: r.bool("header", false),
      inferSchema: r.bool("inferSchema", false),
      delimiter,
      quote,
      escape: escapeChar,
      escapeEscape,
      comment: comment === "\u0000" ? undefined : comment,
      ignoreLeadingWhiteSpace: r.bool("ignoreLeadingWhiteSpace", false),
      ignoreTrailingWhiteSpace: r.bool("ignoreTrailingWhiteSpace", false),
      nullValue: r.get("nullValue") ?? "",
      emptyValue: r.get("emptyValue") ?? "",
      nanValue: r.get("nanValue") ?? "NaN",
      positiveInf: r.get("positiveInf") ?? "Inf",
      negativeInf: r.get("negativeInf") ?? "-Inf",
      mode: r.mode(),
      corruptColumn: r.get("columnNameOfCorruptRecord") ?? defaultCorruptColumn,
      multiLine: r.bool("multiLine", false),
      // Spark allows two characters for Windows' CRLF
      lineSep: r.lineSep(2),
      encoding: r.encoding(),
      preferDate: r.bool("preferDate", true),
      enforceSchema: r.bool("enforceSchema", true),
      dateParser: r.pattern("dateFormat"),
      timestampParser: r.pattern("timestampFormat"),
      dateFormatSet: r.get("dateFormat") !== undefined
    }
  })
