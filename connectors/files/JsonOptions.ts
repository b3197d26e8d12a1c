/**
 * The options of the `json` source, Spark's `JSONOptions`, with Spark's defaults.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import type { AnalysisError } from "../../core/Errors.ts"
import type { Options } from "../../core/Formats.ts"
import { defaultCorruptColumn, invalidOption, OptionReader, type ParseMode, parseOptions } from "./FileSourceOptions.ts"
import type { JsonFeatures } from "./JsonSyntax.ts"

/** The parsed `json` options (Spark's defaults in brackets). */
export interface JsonOptions {
  /** The Jackson parser features (`allowComments`, `allowSingleQuotes`, …). */
  readonly features: JsonFeatures
  /** `primitivesAsString` [false]: infer numbers and booleans as strings. */
  readonly primitivesAsString: boolean
  /** `dropFieldIfAllNull` [false]: drop columns that are always null or empty instead of typing them string. */
  readonly dropFieldIfAllNull: boolean
  /** `inferTimestamp` [false]: infer strings that parse as timestamps as `timestamp`. */
  readonly inferTimestamp: boolean
  readonly mode: ParseMode
  /** `columnNameOfCorruptRecord` [`_corrupt_record`]. */
  readonly corruptColumn: string
  /** `multiLine` [false]: each file is one JSON document (an object or an array of objects). */
  readonly multiLine: boolean
  /** `lineSep`: the record separator (default `\n`, `\r\n` or `\r`). */
  readonly lineSep: string | undefined
  readonly encoding: string
  /**
   * Whether `encoding` (or `charset`) was given. Without it Spark's Jackson parser reads the
   * record's bytes and stops at the end of its first value, so invalid UTF-8 after that value is
   * not seen; with it a strict charset decoder decodes the whole record first.
   */
  readonly encodingGiven: boolean
  /** `timestampFormat`: a strict pattern; without it timestamps parse as a cast does. */
  readonly timestampParser: ((text: string) => number | null) | undefined
  /** `dateFormat`: a strict pattern; without it dates parse as a cast does. */
  readonly dateParser: ((text: string) => number | null) | undefined
}

/** Parses the `json` options; an invalid value fails with `InvalidArgument` naming it. */
export const parseJsonOptions = (options: Options): Effect.Effect<JsonOptions, AnalysisError> =>
  parseOptions(() => {
    const r = new OptionReader("json", options)
    if (r.bool("prefersDecimal", false)) {
      // Spark would infer decimal(p, s); tributary has no decimal type
      throw invalidOption("json", "prefersDecimal", r.get("prefersDecimal")!, "tributary has no decimal type")
    }
    const ratio = r.get("samplingRatio")
    if (ratio !== undefined && !(Number(ratio) > 0)) {
      throw invalidOption("json", "samplingRatio", ratio, "it should be greater than 0")
    }
    return {
      features: {
        allowComments: r.bool("allowComments", false),
        allowUnquotedFieldNames: r.bool("allowUnquotedFieldNames", false),
        allowSingleQuotes: r.bool("allowSingleQuotes", true),
        allowNumericLeadingZeros: r.bool("allowNumericLeadingZeros", false),
        allowNonNumericNumbers: r.bool("allowNonNumericNumbers", true),
        allowBackslashEscapingAnyCharacter: r.bool("allowBackslashEscapingAnyCharacter", false),
        allowUnquotedControlChars: r.bool("allowUnquotedControlChars", false)
      },
      primitivesAsString: r.bool("primitivesAsString", false),
      dropFieldIfAllNull: r.bool("dropFieldIfAllNull", false),
      inferTimestamp: r.bool("inferTimestamp", false),
      mode: r.mode(),
      corruptColumn: r.get("columnNameOfCorruptRecord") ?? defaultCorruptColumn,
      multiLine: r.bool("multiLine", false),
      lineSep: r.lineSep(),
      encoding: r.encoding(),
      encodingGiven: r.get("encoding") !== undefined || r.get("charset") !== undefined,
      timestampParser: r.pattern("timestampFormat"),
      dateParser: r.pattern("dateFormat")
    }
  })
