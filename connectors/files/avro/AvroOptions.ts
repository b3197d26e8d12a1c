/**
 * Spark's `AvroOptions`: `avroSchema` (or `avroSchemaUrl`, a file holding it), `ignoreExtension`
 * (default true: files are read whatever their extension), `positionalFieldMatching`,
 * `datetimeRebaseMode` (`EXCEPTION` by default, `CORRECTED`, `LEGACY`), `mode` (for `from_avro`:
 * `FAILFAST` by default or `PERMISSIVE`), `recordName` (`topLevelRecord`) and `recordNamespace`
 * for writes, and `compression` (`AvroCodecs.ts`). Keys are case-insensitive.
 *
 * @since 0.5.0
 */
import * as fs from "node:fs"
import type { Effect } from "effect"
import { AnalysisError } from "../../../core/Errors.ts"
import type { Options } from "../../../core/Formats.ts"
import { invalidOption, OptionReader, parseOptions } from "../FileSourceOptions.ts"
import { type AvroType, parseSchema } from "./AvroSchema.ts"
import type { RebaseMode } from "./AvroDeserializer.ts"

export interface AvroOptions {
  /** The `avroSchema` (or `avroSchemaUrl`) schema, parsed, with its JSON text. */
  readonly schema: { readonly type: AvroType; readonly json: string } | undefined
  readonly ignoreExtension: boolean
  readonly positionalFieldMatching: boolean
  readonly rebaseMode: RebaseMode
  readonly recordName: string
  readonly recordNamespace: string
}

const schemaError = (key: string, cause: unknown): AnalysisError =>
  new AnalysisError({
    reason: "InvalidArgument",
    errorClass: "INVALID_OPTION",
    message: `Invalid value for the avro option '${key}': ${cause instanceof Error ? cause.message : String(cause)}.`
  })

/** Parses an Avro schema option, failing with the parser's reason. */
export const parseSchemaOption = (key: string, json: string): { readonly type: AvroType; readonly json: string } => {
  try {
    return { type: parseSchema(json), json: JSON.stringify(JSON.parse(json)) }
  } catch (e) {
    throw schemaError(key, e)
  }
}

/** The options of a read, a write or `from_avro`. */
export const parseAvroOptions = (options: Options): Effect.Effect<AvroOptions, AnalysisError> =>
  parseOptions(() => {
    const r = new OptionReader("avro", options)
    const inline = r.get("avroSchema")
    const url = r.get("avroSchemaUrl")
    let schema: AvroOptions["schema"]
    if (inline !== undefined) schema = parseSchemaOption("avroSchema", inline)
    else if (url !== undefined) {
      const path = url.startsWith("file:") ? url.replace(/^file:(\/\/)?/, "") : url
      let text: string
      try {
        text = fs.readFileSync(path, "utf8")
      } catch (e) {
        throw schemaError("avroSchemaUrl", e)
      }
      schema = parseSchemaOption("avroSchemaUrl", text)
    }
    const rebase = (r.get("datetimeRebaseMode") ?? "EXCEPTION").toUpperCase()
    if (rebase !== "EXCEPTION" && rebase !== "CORRECTED" && rebase !== "LEGACY") {
      throw invalidOption("avro", "datetimeRebaseMode", r.get("datetimeRebaseMode")!, "it must be one of EXCEPTION, CORRECTED, LEGACY")
    }
    for (const unsupported of ["recursiveFieldMaxDepth", "enableStableIdentifiersForUnionType", "stableIdentifierPrefixForUnionType"]) {
      const v = r.get(unsupported)
      if (v !== undefined && !(unsupported === "recursiveFieldMaxDepth" && Number(v) <= 0) && v !== "false") {
        throw invalidOption("avro", unsupported, v, "tributary does not support this option yet")
      }
    }
    return {
      schema,
      ignoreExtension: r.bool("ignoreExtension", true),
      positionalFieldMatching: r.bool("positionalFieldMatching", false),
      rebaseMode: rebase,
      recordName: r.get("recordName") ?? "topLevelRecord",
      recordNamespace: r.get("recordNamespace") ?? ""
    }
  })

/** `mode` of `from_avro`: FAILFAST (default) or PERMISSIVE (Spark's `PARSE_MODE_UNSUPPORTED` otherwise). */
export const parseMode = (options: Options, functionName: string): "FAILFAST" | "PERMISSIVE" | AnalysisError => {
  const r = new OptionReader("avro", options)
  const v = (r.get("mode") ?? "FAILFAST").toUpperCase()
  if (v === "FAILFAST" || v === "PERMISSIVE") return v
  // Spark's `ParseMode.fromString` reads an unknown name as PERMISSIVE (with a warning)
  if (v !== "DROPMALFORMED") return "PERMISSIVE"
  return new AnalysisError({
    reason: "InvalidArgument",
    errorClass: "PARSE_MODE_UNSUPPORTED",
    message: `[PARSE_MODE_UNSUPPORTED] The function \`${functionName}\` doesn't support the ${v} mode. Acceptable modes are PERMISSIVE and FAILFAST.`
  })
}
