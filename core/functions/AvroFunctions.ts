/**
 * `from_avro(data, jsonFormatSchema, options?)` and `to_avro(data, jsonFormatSchema?)` (Spark's
 * `AvroDataToCatalyst` and `CatalystDataToAvro`, for Kafka values): the binary Avro encoding of
 * one datum, without a container file's header.
 *
 * core holds no Avro codec: the composition root registers one (`registerAvroCodec`, the `avro`
 * connector's `AvroFunctionsCodec`), and without it both functions fail analysis with Spark's
 * `AVRO_NOT_LOADED_SQL_FUNCTIONS_UNUSABLE`. The options reach the function as the map literal
 * Spark Connect also sends (`map('mode', 'PERMISSIVE')`): `mode` `FAILFAST` (default: a malformed
 * value fails the query) or `PERMISSIVE` (it reads as null, or a struct of nulls), `avroSchema`
 * (an evolved reader schema), `datetimeRebaseMode`.
 *
 * @since 0.5.0
 */
import { nullableOf } from "../Compile.ts"
import * as T from "../DataType.ts"
import type { Expression } from "../Expression.ts"
import { invalid, literalValue, unexpectedInputType, wrongNumArgs } from "./Define.ts"
import { type Evaluator, register, type Resolution, type ScalarFunctionDef } from "./Registry.ts"

/** A prepared `from_avro` reader: the Spark type it gives and the decoder of one value. */
export interface AvroReader {
  readonly dataType: T.DataType
  /** Decodes one binary datum; a malformed one gives null in PERMISSIVE mode and throws a `ConnectorError` in FAILFAST. */
  readonly decode: (bytes: Uint8Array) => unknown
}

/** What the functions need from an Avro library (implemented behind the connector boundary). */
export interface AvroCodec {
  /** A reader for `jsonSchema` and the options, or the message saying why there is none. */
  readonly reader: (
    jsonSchema: string,
    options: Readonly<Record<string, string>>
  ) => AvroReader | { readonly error: string; readonly errorClass?: string | undefined }
  /** The encoder of values of `dataType` for `jsonSchema` (Spark's default schema without one), or why there is none. */
  readonly writer: (
    dataType: T.DataType,
    nullable: boolean,
    jsonSchema: string | undefined
  ) => ((value: unknown) => Uint8Array) | { readonly error: string }
}

let codec: AvroCodec | undefined

/**
 * Called by the composition root with the Avro codec.
 *
 * @since 0.5.0
 */
export const registerAvroCodec = (c: AvroCodec): void => {
  codec = c
}

const notLoaded = (name: string): Resolution =>
  invalid(
    `[AVRO_NOT_LOADED_SQL_FUNCTIONS_UNUSABLE] Cannot call the ${name.toUpperCase()} SQL function because the Avro data source is not loaded. Please restart your job or session with the 'spark-avro' package loaded, such as by using the --packages argument on the command line, and then retry your query or command again.`
  )

/** The options of a `map(k1, v1, …)` literal argument; a string says why it is not one. */
const optionsOf = (e: Expression | undefined, name: string): Readonly<Record<string, string>> | string => {
  if (e === undefined) return {}
  const lit = literalValue(e)
  if (lit !== undefined && lit.value instanceof Map) {
    const out: Record<string, string> = {}
    for (const [k, v] of lit.value as Map<unknown, unknown>) out[String(k)] = String(v)
    return out
  }
  if (e._tag === "ScalarFunction" && e.name === "map") {
    const out: Record<string, string> = {}
    for (let i = 0; i + 1 < e.args.length; i += 2) {
      const k = literalValue(e.args[i])
      const v = literalValue(e.args[i + 1])
      if (k === undefined || v === undefined) return `The options of ${name} must be a map of string literals.`
      out[String(k.value)] = String(v.value)
    }
    return out
  }
  return `The options of ${name} must be a map of string literals.`
}

const schemaOf = (e: Expression | undefined): string | undefined => {
  const lit = literalValue(e)
  return lit !== undefined && typeof lit.value === "string" ? lit.value : undefined
}

/** Spark's `ExpectsInputTypes(BinaryType)` (no implicit cast), named as Spark names the call: `from_avro(value)`. */
const binaryMismatch = (name: string, args: ReadonlyArray<Expression>, t: T.DataType): Resolution =>
  unexpectedInputType(name, args.slice(0, 1), 0, T.BinaryType, t)

const fromAvro: ScalarFunctionDef = {
  name: "from_avro",
  resolve: (argTypes, args) => {
    if (args.length < 2 || args.length > 3) return wrongNumArgs("from_avro", "[2, 3]", args.length)
    if (argTypes[0]._tag !== "binary" && argTypes[0]._tag !== "null") return binaryMismatch("from_avro", args, argTypes[0])
    const schema = schemaOf(args[1])
    if (schema === undefined) return invalid("The second argument of from_avro must be the Avro schema as a string literal.")
    const options = optionsOf(args[2], "from_avro")
    if (typeof options === "string") return invalid(options)
    if (codec === undefined) return notLoaded("from_avro")
    const reader = codec.reader(schema, options)
    if ("error" in reader) return invalid(reader.error)
    return { _tag: "Resolved", resultType: reader.dataType, nullable: true, castArgsTo: args.map(() => undefined) }
  },
  compile: (args, _argTypes, _resultType, argExprs): Evaluator => {
    const reader = codec?.reader(schemaOf(argExprs[1]) ?? "", optionsOf(argExprs[2], "from_avro") as Record<string, string>)
    if (reader === undefined || "error" in reader) throw new Error("from_avro compiled without a resolved reader")
    const data = args[0]
    const decode = reader.decode
    return (row) => {
      const v = data(row)
      return v === null || v === undefined ? null : decode(v as Uint8Array)
    }
  }
}

const toAvro: ScalarFunctionDef = {
  name: "to_avro",
  resolve: (argTypes, args) => {
    if (args.length < 1 || args.length > 2) return wrongNumArgs("to_avro", "[1, 2]", args.length)
    const schema = args.length === 2 ? schemaOf(args[1]) : undefined
    if (args.length === 2 && schema === undefined) {
      return invalid("The second argument of to_avro must be the Avro schema as a string literal.")
    }
    if (codec === undefined) return notLoaded("to_avro")
    const writer = codec.writer(argTypes[0], nullableOf(args[0]), schema)
    if ("error" in writer) return invalid(writer.error)
    return { _tag: "Resolved", resultType: T.BinaryType, nullable: nullableOf(args[0]), castArgsTo: args.map(() => undefined) }
  },
  compile: (args, argTypes, _resultType, argExprs): Evaluator => {
    const writer = codec?.writer(argTypes[0], nullableOf(argExprs[0]), argExprs.length === 2 ? schemaOf(argExprs[1]) : undefined)
    if (writer === undefined || typeof writer !== "function") throw new Error("to_avro compiled without a resolved writer")
    const data = args[0]
    return (row) => {
      const v = data(row)
      return v === null || v === undefined ? null : writer(v)
    }
  }
}

register(fromAvro, toAvro)
