/**
 * ORC's type tree (Java's `TypeDescription`): the types an ORC file's footer lists in pre-order
 * (the root, usually a struct, is column 0), their `struct<a:int,b:string>` text, and the mapping
 * to and from tributary's Spark types with Spark's rules (`OrcUtils.toCatalystSchema` and
 * `orcTypeDescription`):
 *
 * | ORC | tributary | note |
 * | --- | --- | --- |
 * | boolean | boolean | |
 * | tinyint, smallint, int | integer | |
 * | bigint | long | a `spark.sql.catalyst.type` attribute of `timestamp_ntz` makes it a timestamp (micros), of an interval an interval |
 * | float, double | double | a float is its exact double |
 * | decimal(p,s) | double | the nearest double, as tributary has no decimal type |
 * | string, char(n), varchar(n) | string | |
 * | binary | binary | |
 * | date | date | |
 * | timestamp, timestamp with local time zone | timestamp | |
 * | struct, array, map | struct, array, map | |
 * | uniontype | — | not supported (Spark does not read it either) |
 *
 * @since 0.1.0
 */
import * as T from "../../../core/DataType.ts"
import { OrcCorruption } from "./Bytes.ts"
import { Kind, type Type } from "./OrcProto.ts"

/** An ORC primitive category, by its `TypeDescription` name. */
export type OrcPrimitive =
  | "boolean"
  | "tinyint"
  | "smallint"
  | "int"
  | "bigint"
  | "float"
  | "double"
  | "string"
  | "binary"
  | "date"
  | "timestamp"
  | "timestamp with local time zone"

/** An ORC type. `attributes` are the footer's type attributes (Spark's `spark.sql.catalyst.type`). */
export type OrcType =
  | { readonly kind: OrcPrimitive; readonly attributes?: Readonly<Record<string, string>> }
  | {
      readonly kind: "char" | "varchar"
      readonly maxLength: number
      readonly attributes?: Readonly<Record<string, string>>
    }
  | {
      readonly kind: "decimal"
      readonly precision: number
      readonly scale: number
      readonly attributes?: Readonly<Record<string, string>>
    }
  | {
      readonly kind: "struct"
      readonly fields: ReadonlyArray<{ readonly name: string; readonly type: OrcType }>
      readonly attributes?: Readonly<Record<string, string>>
    }
  | { readonly kind: "array"; readonly element: OrcType; readonly attributes?: Readonly<Record<string, string>> }
  | {
      readonly kind: "map"
      readonly key: OrcType
      readonly value: OrcType
      readonly attributes?: Readonly<Record<string, string>>
    }
  | {
      readonly kind: "uniontype"
      readonly variants: ReadonlyArray<OrcType>
      readonly attributes?: Readonly<Record<string, string>>
    }

/** Spark's attribute naming the Catalyst type an ORC primitive holds. */
export const CATALYST_TYPE_ATTRIBUTE = "spark.sql.catalyst.type"

const PRIMITIVE_KINDS: Readonly<Record<number, OrcPrimitive>> = {
  [Kind.BOOLEAN]: "boolean",
  [Kind.BYTE]: "tinyint",
  [Kind.SHORT]: "smallint",
  [Kind.INT]: "int",
  [Kind.LONG]: "bigint",
  [Kind.FLOAT]: "float",
  [Kind.DOUBLE]: "double",
  [Kind.STRING]: "string",
  [Kind.BINARY]: "binary",
  [Kind.DATE]: "date",
  [Kind.TIMESTAMP]: "timestamp",
  [Kind.TIMESTAMP_INSTANT]: "timestamp with local time zone"
}

const KIND_OF: Readonly<Record<OrcPrimitive, number>> = {
  boolean: Kind.BOOLEAN,
  tinyint: Kind.BYTE,
  smallint: Kind.SHORT,
  int: Kind.INT,
  bigint: Kind.LONG,
  float: Kind.FLOAT,
  double: Kind.DOUBLE,
  string: Kind.STRING,
  binary: Kind.BINARY,
  date: Kind.DATE,
  timestamp: Kind.TIMESTAMP,
  "timestamp with local time zone": Kind.TIMESTAMP_INSTANT
}

/** A type with its column id (its index in the footer's pre-order list) and its children's. */
export interface OrcColumn {
  readonly id: number
  readonly type: OrcType
  readonly children: ReadonlyArray<OrcColumn>
}

/** The type tree of a footer's `types` list, each node with its column id. */
export const columnsFromProto = (types: ReadonlyArray<Type>): OrcColumn => {
  if (types.length === 0) throw new OrcCorruption("footer: the file lists no types")
  const seen = new Uint8Array(types.length)
  const build = (id: number, depth: number): OrcColumn => {
    if (id >= types.length) throw new OrcCorruption(`footer: type ${id} is not among the ${types.length} types`)
    if (seen[id] === 1) throw new OrcCorruption(`footer: type ${id} is used twice`)
    if (depth > 1000) throw new OrcCorruption("footer: types nest too deeply")
    seen[id] = 1
    const t = types[id]
    const attributes = t.attributes.length === 0 ? undefined : Object.fromEntries(t.attributes)
    const sub = (n: number): ReadonlyArray<OrcColumn> => {
      if (t.subtypes.length !== n && n >= 0) {
        throw new OrcCorruption(`footer: type ${id} has ${t.subtypes.length} subtypes where ${n} are needed`)
      }
      return t.subtypes.map((s) => {
        if (s <= id) throw new OrcCorruption(`footer: type ${id} lists an earlier type ${s} as its child`)
        return build(s, depth + 1)
      })
    }
    const primitive = PRIMITIVE_KINDS[t.kind]
    if (primitive !== undefined) {
      sub(0)
      return { id, type: { kind: primitive, attributes }, children: [] }
    }
    switch (t.kind) {
      case Kind.CHAR:
      case Kind.VARCHAR:
        sub(0)
        return {
          id,
          type: { kind: t.kind === Kind.CHAR ? "char" : "varchar", maxLength: t.maximumLength ?? 255, attributes },
          children: []
        }
      case Kind.DECIMAL:
        sub(0)
        return {
          id,
          type: { kind: "decimal", precision: t.precision ?? 38, scale: t.scale ?? 10, attributes },
          children: []
        }
      case Kind.STRUCT: {
        if (t.fieldNames.length !== t.subtypes.length) {
          throw new OrcCorruption(
            `footer: struct type ${id} has ${t.fieldNames.length} names for ${t.subtypes.length} fields`
          )
        }
        const children = sub(-1)
        return {
          id,
          type: {
            kind: "struct",
            fields: children.map((c, i) => ({ name: t.fieldNames[i], type: c.type })),
            attributes
          },
          children
        }
      }
      case Kind.LIST: {
        const children = sub(1)
        return { id, type: { kind: "array", element: children[0].type, attributes }, children }
      }
      case Kind.MAP: {
        const children = sub(2)
        return { id, type: { kind: "map", key: children[0].type, value: children[1].type, attributes }, children }
      }
      case Kind.UNION: {
        const children = sub(-1)
        return { id, type: { kind: "uniontype", variants: children.map((c) => c.type), attributes }, children }
      }
      default:
        throw new OrcCorruption(`footer: type ${id} has the unknown kind ${t.kind}`)
    }
  }
  return build(0, 0)
}

/** The footer's `types` list of a type tree (pre-order). */
export const typesToProto = (root: OrcType): Array<Type> => {
  const out: Array<Type> = []
  const attrs = (t: OrcType): ReadonlyArray<readonly [string, string]> => Object.entries(t.attributes ?? {})
  const walk = (t: OrcType): number => {
    const id = out.length
    const slot: { value: Type } = { value: { kind: 0, subtypes: [], fieldNames: [], attributes: [] } }
    out.push(slot.value)
    switch (t.kind) {
      case "char":
      case "varchar":
        out[id] = {
          kind: t.kind === "char" ? Kind.CHAR : Kind.VARCHAR,
          subtypes: [],
          fieldNames: [],
          maximumLength: t.maxLength,
          attributes: attrs(t)
        }
        return id
      case "decimal":
        out[id] = {
          kind: Kind.DECIMAL,
          subtypes: [],
          fieldNames: [],
          precision: t.precision,
          scale: t.scale,
          attributes: attrs(t)
        }
        return id
      case "struct": {
        const subtypes = t.fields.map((f) => walk(f.type))
        out[id] = { kind: Kind.STRUCT, subtypes, fieldNames: t.fields.map((f) => f.name), attributes: attrs(t) }
        return id
      }
      case "array": {
        const subtypes = [walk(t.element)]
        out[id] = { kind: Kind.LIST, subtypes, fieldNames: [], attributes: attrs(t) }
        return id
      }
      case "map": {
        const subtypes = [walk(t.key), walk(t.value)]
        out[id] = { kind: Kind.MAP, subtypes, fieldNames: [], attributes: attrs(t) }
        return id
      }
      case "uniontype": {
        const subtypes = t.variants.map(walk)
        out[id] = { kind: Kind.UNION, subtypes, fieldNames: [], attributes: attrs(t) }
        return id
      }
      default:
        out[id] = { kind: KIND_OF[t.kind], subtypes: [], fieldNames: [], attributes: attrs(t) }
        return id
    }
  }
  walk(root)
  return out
}

/** The type tree with column ids, for a type built in code (the writer's). */
export const columnsOf = (root: OrcType): OrcColumn => columnsFromProto(typesToProto(root))

const plainName = /^[A-Za-z0-9_]+$/

/** Java's `TypeDescription.toString`: `struct<a:int,b:array<string>>`, odd names in backquotes. */
export const orcTypeString = (t: OrcType): string => {
  switch (t.kind) {
    case "char":
    case "varchar":
      return `${t.kind}(${t.maxLength})`
    case "decimal":
      return `decimal(${t.precision},${t.scale})`
    case "struct":
      return `struct<${t.fields
        .map(
          (f) => `${plainName.test(f.name) ? f.name : `\`${f.name.replaceAll("`", "``")}\``}:${orcTypeString(f.type)}`
        )
        .join(",")}>`
    case "array":
      return `array<${orcTypeString(t.element)}>`
    case "map":
      return `map<${orcTypeString(t.key)},${orcTypeString(t.value)}>`
    case "uniontype":
      return `uniontype<${t.variants.map(orcTypeString).join(",")}>`
    default:
      return t.kind
  }
}

/** What an ORC primitive's values become, when a Spark attribute names another Catalyst type. */
export type Reinterpretation = "timestamp_ntz" | "year_month_interval" | "day_time_interval" | undefined

/** Spark's `spark.sql.catalyst.type` attribute of a primitive, as the way its values are read. */
export const reinterpretation = (t: OrcType): Reinterpretation => {
  const attr = t.attributes?.[CATALYST_TYPE_ATTRIBUTE]?.toLowerCase()
  if (attr === undefined) return undefined
  if (t.kind === "bigint" && attr === "timestamp_ntz") return "timestamp_ntz"
  if (t.kind === "int" && attr.startsWith("interval") && /year|month/.test(attr)) return "year_month_interval"
  if (t.kind === "bigint" && attr.startsWith("interval")) return "day_time_interval"
  return undefined
}

/**
 * The tributary type of an ORC type (Spark's `toCatalystType`, narrowed to tributary's types as
 * the module doc says); a string describes a type tributary cannot read.
 */
export const toSparkType = (t: OrcType): T.DataType | string => {
  switch (reinterpretation(t)) {
    case "timestamp_ntz":
      return T.TimestampType
    case "year_month_interval":
    case "day_time_interval":
      return T.CalendarIntervalType
    default:
      break
  }
  switch (t.kind) {
    case "boolean":
      return T.BooleanType
    case "tinyint":
    case "smallint":
    case "int":
      return T.IntegerType
    case "bigint":
      return T.LongType
    case "float":
    case "double":
    case "decimal":
      return T.DoubleType
    case "string":
    case "char":
    case "varchar":
      return T.StringType
    case "binary":
      return T.BinaryType
    case "date":
      return T.DateType
    case "timestamp":
    case "timestamp with local time zone":
      return T.TimestampType
    case "struct": {
      const fields: Array<T.StructField> = []
      for (const f of t.fields) {
        const ft = toSparkType(f.type)
        if (typeof ft === "string") return ft
        fields.push(T.field(f.name, ft, true))
      }
      return T.struct(fields)
    }
    case "array": {
      const e = toSparkType(t.element)
      return typeof e === "string" ? e : T.array(e, true)
    }
    case "map": {
      const k = toSparkType(t.key)
      if (typeof k === "string") return k
      const v = toSparkType(t.value)
      return typeof v === "string" ? v : T.map(k, v, true)
    }
    case "uniontype":
      return orcTypeString(t)
  }
}

/**
 * The ORC type tributary writes for a Spark type (Spark's `OrcUtils.orcTypeDescription`: a
 * timestamp is ORC `timestamp`); `undefined` for the types ORC cannot hold (null, interval).
 */
export const fromSparkType = (t: T.DataType): OrcType | undefined => {
  switch (t._tag) {
    case "boolean":
      return { kind: "boolean" }
    case "integer":
      return { kind: "int" }
    case "long":
      return { kind: "bigint" }
    case "double":
      return { kind: "double" }
    case "string":
      return { kind: "string" }
    case "binary":
      return { kind: "binary" }
    case "date":
      return { kind: "date" }
    case "timestamp":
      return { kind: "timestamp" }
    case "struct": {
      const fields: Array<{ name: string; type: OrcType }> = []
      for (const f of t.fields) {
        const ft = fromSparkType(f.dataType)
        if (ft === undefined) return undefined
        fields.push({ name: f.name, type: ft })
      }
      return { kind: "struct", fields }
    }
    case "array": {
      const e = fromSparkType(t.elementType)
      return e === undefined ? undefined : { kind: "array", element: e }
    }
    case "map": {
      const k = fromSparkType(t.keyType)
      const v = fromSparkType(t.valueType)
      return k === undefined || v === undefined ? undefined : { kind: "map", key: k, value: v }
    }
    case "null":
    case "calendarInterval":
      return undefined
  }
}
