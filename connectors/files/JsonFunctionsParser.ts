/**
 * The JSON parser behind `F.from_json` (core's `JsonParserProvider`, registered by the
 * composition root): the `json` format's Jackson-like parser and conversion
 * (`jsonStructParser`), with `from_json`'s option rules — `mode` PERMISSIVE (the default) or
 * FAILFAST, DROPMALFORMED refused with Spark's `PARSE_MODE_UNSUPPORTED`, an unknown mode read as
 * PERMISSIVE (Spark's `ParseMode.fromString`), and a corrupt-record field that is not a string
 * refused with `INVALID_CORRUPT_RECORD_TYPE`.
 *
 * @since 0.6.0
 */
import { Effect } from "effect"
import type * as T from "../../core/DataType.ts"
import type { JsonParserProvider } from "../../core/functions/JsonFunctions.ts"
import { asNullable, checkCorruptColumn } from "./FileSourceOptions.ts"
import { jsonStructParser } from "./JsonFormat.ts"
import { parseJsonOptions } from "./JsonOptions.ts"

const optionValue = (options: Readonly<Record<string, string>>, key: string): string | undefined => {
  const k = key.toLowerCase()
  for (const [name, v] of Object.entries(options)) if (name.toLowerCase() === k) return v
  return undefined
}

/** `JsonParserProvider` over the files connector's JSON parser. */
export const JsonFunctionsParser: JsonParserProvider = {
  reader: (schema, options) => {
    const mode = (optionValue(options, "mode") ?? "PERMISSIVE").toUpperCase()
    if (mode === "DROPMALFORMED") {
      return {
        error: `[PARSE_MODE_UNSUPPORTED] The function \`from_json\` doesn't support the ${mode} mode. Acceptable modes are PERMISSIVE and FAILFAST.`,
        errorClass: "PARSE_MODE_UNSUPPORTED"
      }
    }
    const rest: Record<string, string> = {}
    for (const [k, v] of Object.entries(options)) if (k.toLowerCase() !== "mode") rest[k] = v
    rest.mode = mode === "FAILFAST" ? "FAILFAST" : "PERMISSIVE"
    const parsed = Effect.runSync(Effect.result(parseJsonOptions(rest)))
    if (parsed._tag === "Failure") return { error: parsed.failure.message, errorClass: parsed.failure.errorClass }
    const o = parsed.success
    const dataType = asNullable(schema) as T.StructType
    const corrupt = Effect.runSync(Effect.result(checkCorruptColumn(dataType, o.corruptColumn)))
    if (corrupt._tag === "Failure") return { error: corrupt.failure.message, errorClass: corrupt.failure.errorClass }
    return { dataType, parse: jsonStructParser(dataType, o) }
  }
}

