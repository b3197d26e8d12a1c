/**
 * The Avro codec behind `F.from_avro` / `F.to_avro` (core's `AvroCodec`, registered by the
 * composition root): one datum's binary encoding through `avsc`, with Spark's
 * `AvroDataToCatalyst` semantics — the writer schema `jsonFormatSchema`, the reader schema
 * `avroSchema` when given (Avro's schema resolution between them), Spark's type of the reader
 * schema (all nullable in PERMISSIVE mode), and for a value that does not decode: a
 * `ConnectorError` in FAILFAST mode, null (a struct of nulls for a struct) in PERMISSIVE.
 *
 * @since 0.5.0
 */
import type * as T from "../../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../../core/Errors.ts"
import type { AvroCodec } from "../../../core/functions/AvroFunctions.ts"
import { makeDeserializer } from "./AvroDeserializer.ts"
import { parseMode, parseSchemaOption } from "./AvroOptions.ts"
import { asNullable, type AvroType, parseSchema, toAvroSchema, toSqlType } from "./AvroSchema.ts"
import { makeSerializer } from "./AvroSerializer.ts"

/** Spark's FAILFAST failure of `from_avro` (`AvroDataToCatalyst.nullSafeEval`). */
export const malformedRecord = (cause: unknown): ConnectorError =>
  new ConnectorError({
    connector: "avro",
    domain: "user",
    retryable: false,
    errorClass: "MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION",
    message:
      "Malformed records are detected in record parsing. Current parse Mode: FAILFAST. To process malformed records as null result, try setting the option 'mode' as 'PERMISSIVE'.",
    cause
  })

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const optionValue = (options: Readonly<Record<string, string>>, key: string): string | undefined => {
  const k = key.toLowerCase()
  for (const [name, v] of Object.entries(options)) if (name.toLowerCase() === k) return v
  return undefined
}

/** `AvroCodec` over `avsc`. */
export const AvroFunctionsCodec: AvroCodec = {
  reader: (jsonSchema, options) => {
    const mode = parseMode(options, "from_avro")
    if (mode instanceof AnalysisError) return { error: mode.message, errorClass: mode.errorClass }
    let actual: AvroType
    let expected: AvroType
    try {
      actual = parseSchema(jsonSchema)
      const reader = optionValue(options, "avroSchema")
      expected = reader === undefined ? actual : parseSchemaOption("avroSchema", reader).type
    } catch (e) {
      return { error: messageOf(e) }
    }
    const rebase = (optionValue(options, "datetimeRebaseMode") ?? "EXCEPTION").toUpperCase()
    if (rebase !== "EXCEPTION" && rebase !== "CORRECTED" && rebase !== "LEGACY") {
      return { error: `Invalid value '${rebase}' for the avro option 'datetimeRebaseMode': it must be one of EXCEPTION, CORRECTED, LEGACY.` }
    }
    let dataType: T.DataType
    let convert: (v: unknown) => unknown
    let resolver: unknown
    try {
      const sql = toSqlType(expected).dataType
      dataType = mode === "PERMISSIVE" ? asNullable(sql) : sql
      convert = makeDeserializer(expected, dataType, { positionalFieldMatching: false, rebaseMode: rebase })
      resolver = expected === actual ? undefined : expected.createResolver(actual)
    } catch (e) {
      return { error: messageOf(e) }
    }
    // PERMISSIVE: Spark's `nullResultRow` (a row of nulls for a struct, else null)
    const nullResult = dataType._tag === "struct" ? dataType.fields.map(() => null) : null
    return {
      dataType,
      decode: (bytes) => {
        try {
          const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
          const { value, offset } = expected.decode(buf, 0, resolver)
          if (offset < 0) throw new Error("Truncated Avro value")
          return convert(value)
        } catch (e) {
          if (mode === "PERMISSIVE") return nullResult === null ? null : nullResult.slice()
          throw malformedRecord(e)
        }
      }
    }
  },
  writer: (dataType, nullable, jsonSchema) => {
    try {
      const type = parseSchema(jsonSchema ?? JSON.stringify(toAvroSchema(dataType, nullable, "topLevelRecord", "")))
      const serialize = makeSerializer(dataType, type, nullable, { positionalFieldMatching: false })
      return (value) => {
        try {
          return new Uint8Array(type.toBuffer(serialize(value)))
        } catch (e) {
          throw new ConnectorError({ connector: "avro", domain: "user", retryable: false, message: messageOf(e), cause: e })
        }
      }
    } catch (e) {
      return { error: messageOf(e) }
    }
  }
}

