/**
 * `from_json(json, schema, options?)` (Spark's `JsonToStructs`): parses a JSON string column — a
 * Kafka value cast to a string, say — into a struct of the given schema.
 *
 * core holds no JSON parser: the composition root registers one (`registerJsonParser`, the
 * files connector's Jackson-like parser, the one the `json` format reads with), and without it
 * the function fails analysis. The schema is a DDL string literal (`"a INT, b STRING"`) or a
 * struct type string (`"struct<a:int>"`); the result is that struct, every field nullable
 * (Spark's `asNullable`). The options reach the function as the map literal Spark Connect also
 * sends: `mode` `PERMISSIVE` (default: a malformed record reads as a struct of nulls, with what
 * converted kept and the record in the corrupt-record field when the schema has one) or
 * `FAILFAST` (it fails the query); `DROPMALFORMED` is refused as Spark refuses it;
 * `columnNameOfCorruptRecord` and the JSON parser options of the `json` format.
 *
 * @since 0.6.0
 */
import * as T from "../DataType.ts"
import type { Expression } from "../Expression.ts"
import { invalid, literalValue, unexpectedInputType, wrongNumArgs } from "./Define.ts"
import { type Evaluator, register, type Resolution, type ScalarFunctionDef } from "./Registry.ts"

/** A prepared `from_json` parser: the struct it gives and the parse of one string. */
export interface JsonStructReader {
  readonly dataType: T.StructType
  /**
   * Parses one JSON text: a positional row, or null for blank text; a malformed record gives a
   * row of nulls (partial results kept) in PERMISSIVE mode and throws a `ConnectorError` in
   * FAILFAST.
   */
  readonly parse: (text: string) => unknown
}

/** What `from_json` needs from a JSON parser (implemented behind the connector boundary). */
export interface JsonParserProvider {
  /** A reader for `schema` and the options, or the message saying why there is none. */
  readonly reader: (
    schema: T.StructType,
    options: Readonly<Record<string, string>>
  ) => JsonStructReader | { readonly error: string; readonly errorClass?: string | undefined }
}

let provider: JsonParserProvider | undefined

/**
 * Called by the composition root with the JSON parser.
 *
 * @since 0.6.0
 */
export const registerJsonParser = (p: JsonParserProvider): void => {
  provider = p
}

/** The options of a `map(k1, v1, …)` literal argument; a string says why it is not one. */
const optionsOf = (e: Expression | undefined): Readonly<Record<string, string>> | string => {
  if (e === undefined) return {}
  const lit = literalValue(e)
  if (lit !== undefined && lit.value instanceof Map) {
    const out: Record<string, string> = {}
    for (const [k, v] of lit.value as Map<unknown, unknown>) out[String(k)] = String(v)
    return out
  }
  if (e._tag === "ScalarFunction" && (e.name === "map" || e.name === "create_map")) {
    const out: Record<string, string> = {}
    for (let i = 0; i + 1 < e.args.length; i += 2) {
      const k = literalValue(e.args[i])
      const v = literalValue(e.args[i + 1])
      if (k === undefined || v === undefined) return "[INVALID_OPTIONS.NON_STRING_TYPE] Invalid options: A type of keys and values in `map()` must be string."
      out[String(k.value)] = String(v.value)
    }
    return out
  }
  return "[INVALID_OPTIONS.NON_MAP_FUNCTION] Invalid options: Must use the `map()` function for options."
}

/** The schema argument: a struct, or Spark's message for a schema that is not one. */
const schemaOf = (e: Expression | undefined): T.StructType | string => {
  const lit = literalValue(e)
  if (lit === undefined || typeof lit.value !== "string") {
    return "[INVALID_SCHEMA.NON_STRING_LITERAL] The input schema is not a valid schema string. The input expression must be string literal and not null."
  }
  const text = lit.value
  const t = /^\s*struct\s*</i.test(text) ? T.parseTypeString(text) : T.parseDDL(text)
  if (t === undefined || t._tag !== "struct") {
    return `[INVALID_SCHEMA.PARSE_ERROR] The input schema "${text}" is not a valid schema string. Cannot parse the schema.`
  }
  return t
}

const fromJson: ScalarFunctionDef = {
  name: "from_json",
  resolve: (argTypes, args): Resolution => {
    if (args.length < 2 || args.length > 3) return wrongNumArgs("from_json", "[2, 3]", args.length)
    // Spark's ExpectsInputTypes(StringType): no implicit cast, a binary Kafka value must be cast
    if (argTypes[0]._tag !== "string" && argTypes[0]._tag !== "null") {
      return unexpectedInputType("from_json", args.slice(0, 1), 0, T.StringType, argTypes[0])
    }
    const schema = schemaOf(args[1])
    if (typeof schema === "string") return invalid(schema)
    const options = optionsOf(args[2])
    if (typeof options === "string") return invalid(options)
    if (provider === undefined) return invalid("from_json needs the JSON parser of the files connector (registerJsonParser).")
    const reader = provider.reader(schema, options)
    if ("error" in reader) return invalid(reader.error)
    return { _tag: "Resolved", resultType: reader.dataType, nullable: true, castArgsTo: args.map(() => undefined) }
  },
  compile: (args, _argTypes, _resultType, argExprs): Evaluator => {
    const schema = schemaOf(argExprs[1])
    const options = optionsOf(argExprs[2])
    if (provider === undefined || typeof schema === "string" || typeof options === "string") {
      throw new Error("from_json compiled without a resolved parser")
    }
    const reader = provider.reader(schema, options)
    if ("error" in reader) throw new Error("from_json compiled without a resolved parser")
    const json = args[0]
    const parse = reader.parse
    return (row) => {
      const v = json(row)
      return v === null || v === undefined ? null : parse(v as string)
    }
  }
}

register(fromJson)
