/**
 * Option parsing shared by the file formats, with Spark's rules: keys are case-insensitive,
 * booleans are `true`/`false` in any case, one-character options reject longer values. A value
 * that does not fit fails with an `AnalysisError` (reason `InvalidArgument`) that names the
 * option and the value.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as T from "../../core/DataType.ts"
import { AnalysisError } from "../../core/Errors.ts"
import { type Options, option } from "../../core/Formats.ts"
import * as DT from "../../core/functions/DateTimeUtils.ts"

/** Spark's `ParseMode`: what a reader does with a record it cannot parse. */
export type ParseMode = "PERMISSIVE" | "DROPMALFORMED" | "FAILFAST"

/** `spark.sql.columnNameOfCorruptRecord`'s default. */
export const defaultCorruptColumn = "_corrupt_record"

/** An invalid option value, naming the format, the option and the value. */
export const invalidOption = (format: string, key: string, value: string, why: string): AnalysisError =>
  new AnalysisError({
    reason: "InvalidArgument",
    errorClass: "INVALID_OPTION",
    message: `Invalid value '${value}' for the ${format} option '${key}': ${why}.`
  })

/**
 * Reads options for one format; its methods throw `AnalysisError`, which `parseOptions` turns
 * into a typed failure. Used only inside `parseOptions`.
 */
export class OptionReader {
  readonly format: string
  readonly options: Options
  constructor(format: string, options: Options) {
    this.format = format
    this.options = options
  }

  get(key: string): string | undefined {
    return option(this.options, key)
  }

  /** Spark's `getBool`: `true`/`false` in any case, else an error. */
  bool(key: string, dflt: boolean): boolean {
    const v = this.get(key)
    if (v === undefined) return dflt
    const l = v.toLowerCase()
    if (l === "true") return true
    if (l === "false") return false
    throw invalidOption(this.format, key, v, "it must be true or false")
  }

  /** Spark's `CSVOptions.getChar`: empty turns the feature off (`\u0000`), more than one char fails. */
  char(key: string, dflt: string): string {
    const v = this.get(key)
    if (v === undefined) return dflt
    if (v.length === 0) return "\u0000"
    if (v.length === 1) return v
    throw invalidOption(this.format, key, v, "it cannot be more than one character")
  }

  int(key: string, dflt: number): number {
    const v = this.get(key)
    if (v === undefined) return dflt
    if (!/^[+-]?\d+$/.test(v)) throw invalidOption(this.format, key, v, "it must be an integer")
    return Number(v)
  }

  /** `mode`: PERMISSIVE (default), DROPMALFORMED or FAILFAST, in any case. */
  mode(): ParseMode {
    const v = this.get("mode")
    if (v === undefined) return "PERMISSIVE"
    const u = v.toUpperCase()
    if (u === "PERMISSIVE" || u === "DROPMALFORMED" || u === "FAILFAST") return u
    // Spark logs a warning and falls back to PERMISSIVE; a typo here silently changes what a
    // query returns, so tributary refuses it.
    throw invalidOption(this.format, "mode", v, "it must be one of PERMISSIVE, DROPMALFORMED, FAILFAST")
  }

  /** `encoding`/`charset` as a `TextDecoder` label (UTF-8 by default). */
  encoding(): string {
    const v = this.get("encoding") ?? this.get("charset")
    if (v === undefined) return "utf-8"
    try {
      new TextDecoder(v)
      return v
    } catch {
      throw invalidOption(this.format, "encoding", v, "it is not a supported character set")
    }
  }

  /** `lineSep`: a non-empty separator; `undefined` means `\n`, `\r` or `\r\n` (Hadoop's rule). */
  lineSep(maxLength = Number.POSITIVE_INFINITY): string | undefined {
    const v = this.get("lineSep")
    if (v === undefined) return undefined
    if (v.length === 0) throw invalidOption(this.format, "lineSep", v, "it cannot be an empty string")
    if (v.length > maxLength) {
      throw invalidOption(this.format, "lineSep", v, `it can contain at most ${maxLength} characters`)
    }
    return v
  }

  /**
   * A datetime pattern option (`dateFormat`, `timestampFormat`) compiled to a parser to epoch
   * milliseconds; `undefined` when not set (Spark then parses leniently, as a cast does).
   */
  pattern(key: string): ((text: string) => number | null) | undefined {
    const v = this.get(key)
    if (v === undefined) return undefined
    const p = DT.timestampParser(v)
    if (p === undefined) throw invalidOption(this.format, key, v, "it is not a valid datetime pattern")
    return p
  }
}

/** Runs an option parser, turning a thrown `AnalysisError` into a typed failure. */
export const parseOptions = <A>(f: () => A): Effect.Effect<A, AnalysisError> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(f())
    } catch (e) {
      if (e instanceof AnalysisError) return Effect.fail(e)
      throw e
    }
  })

/** Spark's `toSQLType`: the upper-case SQL name of a type, as error messages quote it. */
export const sqlType = (t: T.DataType): string => {
  switch (t._tag) {
    case "struct":
      return `STRUCT<${t.fields.map((f) => `${f.name}: ${sqlType(f.dataType)}`).join(", ")}>`
    case "array":
      return `ARRAY<${sqlType(t.elementType)}>`
    case "map":
      return `MAP<${sqlType(t.keyType)}, ${sqlType(t.valueType)}>`
    default:
      return T.simpleString(t).toUpperCase()
  }
}

/**
 * Checks that every column type of `schema` is one the format can read (Spark's
 * `FileFormat.supportDataType`), failing with `UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE`.
 */
export const checkSupportedTypes = (
  formatTitle: string,
  schema: T.StructType,
  supports: (t: T.DataType) => boolean
): Effect.Effect<void, AnalysisError> => {
  for (const f of schema.fields) {
    if (!supports(f.dataType)) {
      return Effect.fail(
        new AnalysisError({
          reason: "DataTypeMismatch",
          errorClass: "UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE",
          message: `[UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE] The ${formatTitle} datasource doesn't support the column \`${f.name}\` of the type "${sqlType(f.dataType)}".`
        })
      )
    }
  }
  return Effect.void
}

/**
 * Checks the corrupt-record column, when the schema has one: it must be a (nullable) string,
 * Spark's `INVALID_CORRUPT_RECORD_TYPE`.
 */
export const checkCorruptColumn = (schema: T.StructType, name: string): Effect.Effect<void, AnalysisError> => {
  const f = schema.fields.find((x) => x.name === name)
  if (f === undefined || f.dataType._tag === "string") return Effect.void
  return Effect.fail(
    new AnalysisError({
      reason: "DataTypeMismatch",
      errorClass: "INVALID_CORRUPT_RECORD_TYPE",
      message: `[INVALID_CORRUPT_RECORD_TYPE] The column \`${name}\` for corrupt records must have the nullable STRING type, but got "${sqlType(f.dataType)}".`
    })
  )
}

/**
 * Spark's `StructType.asNullable`: file sources read every column, nested field, array element
 * and map value as nullable, whatever the user's schema or the file says.
 */
export const asNullable = <A extends T.DataType>(t: A): A => {
  switch (t._tag) {
    case "struct":
      return T.struct(t.fields.map((f) => T.field(f.name, asNullable(f.dataType), true))) as T.DataType as A
    case "array":
      return T.array(asNullable(t.elementType), true) as T.DataType as A
    case "map":
      return T.map(asNullable(t.keyType), asNullable(t.valueType), true) as T.DataType as A
    default:
      return t
  }
}
