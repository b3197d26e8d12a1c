/**
 * Avro schemas through `avsc`, and Spark's `SchemaConverters` between them and Spark types.
 *
 * Every schema is parsed with the same `avsc` options, so values have one shape everywhere:
 * unions are always wrapped (`{ "string": "x" }`, or `null`) so a value names its branch; longs
 * decode to a number when it is a safe integer and to a `bigint` otherwise (no silent rounding);
 * the logical types Spark reads (`date`, `timestamp-millis`/`-micros`,
 * `local-timestamp-millis`/`-micros`, `decimal`) are kept as markers over their underlying
 * values, which `AvroDeserializer.ts` and `AvroSerializer.ts` convert. An invalid logical type
 * (a decimal whose precision does not fit its fixed size) falls back to its underlying type, as
 * the Avro specification says.
 *
 * Spark's types map as Spark's `SchemaConverters.toSqlType` does, within tributary's types:
 * `float` reads as `double`, `decimal` as `double`, and the local timestamps as `timestamp`
 * (tributary has no float, decimal or timestamp_ntz type).
 *
 * @since 0.5.0
 */
import avsc from "avsc"
import * as T from "../../../core/DataType.ts"

/** The parts of an `avsc` type this connector reads (its typings leave them out). */
export interface AvroType {
  /** `null`, `boolean`, `int`, `long`, `abstract:long`, `float`, `double`, `bytes`, `string`, `record`, `error`, `enum`, `fixed`, `array`, `map`, `union:wrapped`, `logical:<name>`. */
  readonly typeName: string
  readonly name?: string | undefined
  readonly branchName?: string | undefined
  readonly fields?: ReadonlyArray<AvroField>
  readonly types?: ReadonlyArray<AvroType>
  readonly itemsType?: AvroType
  readonly valuesType?: AvroType
  readonly symbols?: ReadonlyArray<string>
  readonly size?: number
  readonly underlyingType?: AvroType
  /** Set on `decimal` logical types. */
  readonly precision?: number
  readonly scale?: number
  readonly schema: (opts?: { readonly exportAttrs?: boolean }) => unknown
  readonly createResolver: (writer: AvroType) => unknown
  readonly decode: (buf: Uint8Array, pos?: number, resolver?: unknown) => { readonly value: unknown; readonly offset: number }
  readonly toBuffer: (value: unknown) => Uint8Array
}

export interface AvroField {
  readonly name: string
  readonly type: AvroType
}

/** Spark's `IncompatibleSchemaException`: the Avro and Spark schemas cannot be matched. */
export class IncompatibleSchemaError extends Error {
  override readonly name = "IncompatibleSchemaException"
}

const TWO_63 = 2n ** 63n
const buf8 = (): Buffer => Buffer.alloc(8)

/** Avro `long`: a number when safe, else a `bigint` (avsc's own long refuses unsafe values). */
const LongType = avsc.types.LongType.__with({
  fromBuffer: (b: Buffer) => {
    const big = b.readBigInt64LE(0)
    return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big
  },
  toBuffer: (n: number | bigint) => {
    const b = buf8()
    b.writeBigInt64LE(BigInt.asIntN(64, typeof n === "bigint" ? n : BigInt(Math.trunc(n))))
    return b
  },
  fromJSON: (v: unknown) => (typeof v === "bigint" ? v : Number(v)),
  toJSON: (n: number | bigint) => (typeof n === "bigint" ? Number(n) : n),
  isValid: (n: unknown) =>
    (typeof n === "number" && Number.isInteger(n)) || (typeof n === "bigint" && n >= -TWO_63 && n < TWO_63),
  compare: (a: number | bigint, b: number | bigint) => (a < b ? -1 : a > b ? 1 : 0)
}) as unknown as AvroType

const MARKED_LOGICAL_TYPES = new Set([
  "date",
  "timestamp-millis",
  "timestamp-micros",
  "local-timestamp-millis",
  "local-timestamp-micros",
  "decimal"
])

/** A logical type whose values stay the underlying ones; the converters read its name. */
class Marker extends avsc.types.LogicalType {
  protected override _fromValue(v: unknown): unknown {
    return v
  }
  protected override _toValue(v: unknown): unknown {
    return v
  }
  /** Schema resolution: a writer of the same logical type, or of the plain underlying type, reads as is. */
  protected override _resolve(writer: avsc.Type): unknown {
    const w = writer as unknown as AvroType
    const mine = (this as unknown as AvroType).underlyingType!.typeName
    const theirs = w.typeName.startsWith("logical:") ? w.underlyingType!.typeName : w.typeName
    const base = (t: string) => (t === "abstract:long" ? "long" : t)
    if (base(mine) === base(theirs)) return (v: unknown) => v
    // int promotes to long (a date written as int read as a long timestamp is not Spark's either)
    if (base(mine) === "long" && theirs === "int") return (v: unknown) => v
    return undefined
  }
}

/** Avro's `decimal`: precision and scale checked as Avro Java's `LogicalTypes.Decimal.validate`. */
class DecimalMarker extends Marker {
  readonly precision: number
  readonly scale: number
  constructor(schema: Record<string, unknown>, opts?: unknown) {
    super(schema as never, opts)
    const precision = schema.precision
    const scale = schema.scale ?? 0
    if (typeof precision !== "number" || !Number.isInteger(precision) || precision <= 0) {
      throw new Error(`Invalid decimal precision: ${String(precision)}`)
    }
    if (typeof scale !== "number" || !Number.isInteger(scale) || scale < 0 || scale > precision) {
      throw new Error(`Invalid decimal scale: ${String(scale)}`)
    }
    const under = (this as unknown as AvroType).underlyingType!
    if (under.typeName === "fixed") {
      const maxPrecision = Math.floor(Math.log10(2) * (8 * under.size! - 1))
      if (precision > maxPrecision) throw new Error(`fixed(${under.size}) cannot store ${precision} digits`)
    } else if (under.typeName !== "bytes") {
      throw new Error("decimal must be bytes or fixed")
    }
    this.precision = precision
    this.scale = scale
  }
  protected override _export(schema: unknown): void {
    const s = schema as Record<string, unknown>
    s.precision = this.precision
    s.scale = this.scale
  }
}

const logicalTypes = Object.fromEntries(
  [...MARKED_LOGICAL_TYPES].map((n) => [n, n === "decimal" ? DecimalMarker : Marker])
) as Record<string, new (schema: never, opts?: unknown) => avsc.types.LogicalType>

const isLong = (schema: unknown): boolean =>
  schema === "long" ||
  (typeof schema === "object" &&
    schema !== null &&
    !Array.isArray(schema) &&
    (schema as { type?: unknown }).type === "long" &&
    !MARKED_LOGICAL_TYPES.has(String((schema as { logicalType?: unknown }).logicalType)))

/**
 * Parses an Avro schema (JSON text or a parsed value) with this connector's options; throws
 * avsc's error when it is not a valid schema.
 */
export const parseSchema = (schema: unknown): AvroType =>
  avsc.Type.forSchema(typeof schema === "string" ? JSON.parse(schema) : (schema as never), {
    wrapUnions: true,
    logicalTypes,
    typeHook: (s: unknown) => (isLong(s) ? (LongType as unknown as avsc.Type) : undefined)
  } as never) as unknown as AvroType

/** The Avro type name Spark's `Schema.getType` gives (a logical type's underlying type). */
export const baseType = (t: AvroType): string => {
  const n = t.typeName.startsWith("logical:") ? t.underlyingType!.typeName : t.typeName
  return n === "abstract:long" ? "long" : n === "union:wrapped" || n === "union:unwrapped" ? "union" : n === "error" ? "record" : n
}

/** A logical type's name (`date`, `timestamp-micros`, `decimal`, …), or `undefined`. */
export const logicalName = (t: AvroType): string | undefined =>
  t.typeName.startsWith("logical:") ? t.typeName.slice("logical:".length) : undefined

/** The non-null branches of a union, in order (Spark's `AvroUtils.nonNullUnionBranches`). */
export const nonNullBranches = (t: AvroType): ReadonlyArray<AvroType> =>
  (t.types ?? []).filter((b) => baseType(b) !== "null")

/** An Avro type as its JSON text, as Avro's `Schema.toString` prints it in messages. */
export const schemaString = (t: AvroType): string => JSON.stringify(t.schema({ exportAttrs: true }))

/** Spark's `SchemaConverters.SchemaType`. */
export interface SqlType {
  readonly dataType: T.DataType
  readonly nullable: boolean
}

/**
 * Spark's `SchemaConverters.toSqlType`: the Spark type of an Avro type (complex unions as
 * `struct<member0, member1, …>`), failing as Spark does on recursive records.
 */
export const toSqlType = (avro: AvroType): SqlType => {
  const walk = (t: AvroType, records: ReadonlySet<string>): SqlType => {
    const logical = logicalName(t)
    switch (baseType(t)) {
      case "int":
        return { dataType: logical === "date" ? T.DateType : T.IntegerType, nullable: false }
      case "string":
      case "enum":
        return { dataType: T.StringType, nullable: false }
      case "boolean":
        return { dataType: T.BooleanType, nullable: false }
      case "bytes":
      case "fixed":
        // tributary has no decimal type: a decimal reads as the nearest double
        return { dataType: logical === "decimal" ? T.DoubleType : T.BinaryType, nullable: false }
      case "double":
      case "float":
        return { dataType: T.DoubleType, nullable: false }
      case "long":
        return {
          dataType: logical !== undefined && logical.includes("timestamp") ? T.TimestampType : T.LongType,
          nullable: false
        }
      case "null":
        return { dataType: T.NullType, nullable: true }
      case "record": {
        const name = t.name ?? ""
        if (records.has(name)) {
          throw new IncompatibleSchemaError(
            `Found recursive reference in Avro schema, which can not be processed by Spark by default: ${schemaString(t)}. Try setting the option \`recursiveFieldMaxDepth\` to 1 - 12. Going beyond 12 levels of recursion is not allowed.`
          )
        }
        const inner = new Set(records).add(name)
        return {
          dataType: T.struct(
            (t.fields ?? []).map((f) => {
              const s = walk(f.type, inner)
              return T.field(f.name, s.dataType, s.nullable)
            })
          ),
          nullable: false
        }
      }
      case "array": {
        const s = walk(t.itemsType!, records)
        return { dataType: T.array(s.dataType, s.nullable), nullable: false }
      }
      case "map": {
        const s = walk(t.valuesType!, records)
        return { dataType: T.map(T.StringType, s.dataType, s.nullable), nullable: false }
      }
      case "union": {
        const branches = t.types ?? []
        const rest = nonNullBranches(t)
        if (rest.length < branches.length) {
          if (rest.length === 0) return { dataType: T.NullType, nullable: true }
          const inner = rest.length === 1 ? walk(rest[0], records) : complexUnion(rest, records)
          return { dataType: inner.dataType, nullable: true }
        }
        if (branches.length === 1) return walk(branches[0], records)
        return complexUnion(branches, records)
      }
      default:
        throw new IncompatibleSchemaError(`Unsupported type ${t.typeName}`)
    }
  }
  const complexUnion = (branches: ReadonlyArray<AvroType>, records: ReadonlySet<string>): SqlType => {
    const kinds = new Set(branches.map(baseType))
    if (branches.length === 2 && kinds.has("int") && kinds.has("long")) return { dataType: T.LongType, nullable: false }
    if (branches.length === 2 && kinds.has("float") && kinds.has("double")) {
      return { dataType: T.DoubleType, nullable: false }
    }
    // Spark's member0, member1, …: all nullable, as only one is set at a time
    return {
      dataType: T.struct(branches.map((b, i) => T.field(`member${i}`, walk(b, records).dataType, true))),
      nullable: false
    }
  }
  return walk(avro, new Set())
}

/** The result of `toSqlType` made nullable at every level (Spark's `DataType.asNullable`). */
export const asNullable = (t: T.DataType): T.DataType => {
  switch (t._tag) {
    case "struct":
      return T.struct(t.fields.map((f) => T.field(f.name, asNullable(f.dataType), true)))
    case "array":
      return T.array(asNullable(t.elementType), true)
    case "map":
      return T.map(asNullable(t.keyType), asNullable(t.valueType), true)
    default:
      return t
  }
}

/**
 * Spark's `SchemaConverters.toAvroType`: the Avro schema (as JSON) Spark writes for a Spark type —
 * `timestamp` as `timestamp-micros`, `date` as `date`, binary as `bytes`, a nullable type as the
 * union `[type, "null"]`, structs as records named after their field in the parent's namespace.
 */
export const toAvroSchema = (t: T.DataType, nullable: boolean, recordName: string, namespace: string): unknown => {
  let schema: unknown
  switch (t._tag) {
    case "boolean":
      schema = "boolean"
      break
    case "integer":
      schema = "int"
      break
    case "long":
      schema = "long"
      break
    case "date":
      schema = { type: "int", logicalType: "date" }
      break
    case "timestamp":
      schema = { type: "long", logicalType: "timestamp-micros" }
      break
    case "double":
      schema = "double"
      break
    case "string":
      schema = "string"
      break
    case "null":
      schema = "null"
      break
    case "binary":
      schema = "bytes"
      break
    case "array":
      schema = { type: "array", items: toAvroSchema(t.elementType, t.containsNull, recordName, namespace) }
      break
    case "map":
      if (t.keyType._tag !== "string") {
        throw new IncompatibleSchemaError(`Unexpected type ${T.simpleString(t)}.`)
      }
      schema = { type: "map", values: toAvroSchema(t.valueType, t.valueContainsNull, recordName, namespace) }
      break
    case "struct": {
      const child = namespace !== "" ? `${namespace}.${recordName}` : recordName
      schema = {
        type: "record",
        name: recordName,
        ...(namespace !== "" ? { namespace } : {}),
        fields: t.fields.map((f) => ({ name: f.name, type: toAvroSchema(f.dataType, f.nullable, f.name, child) }))
      }
      break
    }
    case "calendarInterval":
      throw new IncompatibleSchemaError(`Unexpected type ${T.simpleString(t)}.`)
  }
  return nullable && t._tag !== "null" ? [schema, "null"] : schema
}
