/**
 * Spark's data types, as plain tagged values.
 *
 * A DataFrame's schema is a `StructType`. Users describe rows with an Effect `Schema`;
 * `fromSchema` (in `RowSchema.ts`) derives the `StructType` from it. Names follow Spark:
 * `typeName` is what `printSchema` shows (`long`, `integer`), `simpleString` is what
 * `DataFrame.toString` and struct types show (`bigint`, `int`).
 *
 * @since 0.1.0
 */

export type DataType =
  | { readonly _tag: "null" }
  | { readonly _tag: "boolean" }
  | { readonly _tag: "integer" }
  | { readonly _tag: "long" }
  | { readonly _tag: "double" }
  | { readonly _tag: "string" }
  | { readonly _tag: "binary" }
  | { readonly _tag: "timestamp" }
  | { readonly _tag: "date" }
  | { readonly _tag: "calendarInterval" }
  | StructType
  | ArrayType
  | MapType

export interface StructField {
  readonly name: string
  readonly dataType: DataType
  readonly nullable: boolean
}

export interface StructType {
  readonly _tag: "struct"
  readonly fields: ReadonlyArray<StructField>
}

export interface ArrayType {
  readonly _tag: "array"
  readonly elementType: DataType
  readonly containsNull: boolean
}

export interface MapType {
  readonly _tag: "map"
  readonly keyType: DataType
  readonly valueType: DataType
  readonly valueContainsNull: boolean
}

export const NullType: DataType = { _tag: "null" }
export const BooleanType: DataType = { _tag: "boolean" }
export const IntegerType: DataType = { _tag: "integer" }
export const LongType: DataType = { _tag: "long" }
export const DoubleType: DataType = { _tag: "double" }
export const StringType: DataType = { _tag: "string" }
export const BinaryType: DataType = { _tag: "binary" }
export const TimestampType: DataType = { _tag: "timestamp" }
export const DateType: DataType = { _tag: "date" }
export const CalendarIntervalType: DataType = { _tag: "calendarInterval" }

export const struct = (fields: ReadonlyArray<StructField>): StructType => ({ _tag: "struct", fields })
export const field = (name: string, dataType: DataType, nullable = true): StructField => ({
  name,
  dataType,
  nullable
})
export const array = (elementType: DataType, containsNull = true): ArrayType => ({
  _tag: "array",
  elementType,
  containsNull
})
export const map = (keyType: DataType, valueType: DataType, valueContainsNull = true): MapType => ({
  _tag: "map",
  keyType,
  valueType,
  valueContainsNull
})

/** Spark's `window` column type: `struct<start: timestamp, end: timestamp>`. */
export const WindowType: StructType = struct([
  field("start", TimestampType, true),
  field("end", TimestampType, true)
])

export const isNumeric = (t: DataType): boolean =>
  t._tag === "integer" || t._tag === "long" || t._tag === "double"

export const isIntegral = (t: DataType): boolean => t._tag === "integer" || t._tag === "long"

/** The name `printSchema` shows for a type (Spark's `DataType.typeName`). */
export const typeName = (t: DataType): string => {
  switch (t._tag) {
    case "null":
      return "void"
    case "calendarInterval":
      return "interval"
    default:
      return t._tag
  }
}

/** Spark's `DataType.simpleString`: `bigint`, `int`, `struct<a:int,b:string>`, `array<int>`. */
export const simpleString = (t: DataType): string => {
  switch (t._tag) {
    case "null":
      return "void"
    case "boolean":
      return "boolean"
    case "integer":
      return "int"
    case "long":
      return "bigint"
    case "double":
      return "double"
    case "string":
      return "string"
    case "binary":
      return "binary"
    case "timestamp":
      return "timestamp"
    case "date":
      return "date"
    case "calendarInterval":
      return "interval"
    case "struct":
      return `struct<${t.fields.map((f) => `${f.name}:${simpleString(f.dataType)}`).join(",")}>`
    case "array":
      return `array<${simpleString(t.elementType)}>`
    case "map":
      return `map<${simpleString(t.keyType)},${simpleString(t.valueType)}>`
  }
}

/**
 * Spark's `QuotingUtils.quoteIfNeeded`: a name as it is when it is letters, digits and `_` (not
 * all digits), else in backquotes with inner backquotes doubled.
 *
 * @since 0.4.0
 */
export const quoteIfNeeded = (name: string): string =>
  /^[A-Za-z0-9_]+$/.test(name) && !/^[0-9]+$/.test(name) ? name : `\`${name.replaceAll("`", "``")}\``

/**
 * Spark's `DataType.sql`, as error messages quote types and DDL spells them: `INT`, `BIGINT`,
 * `ARRAY<STRING>`, `MAP<STRING, INT>`, `STRUCT<x: BIGINT, y: STRING NOT NULL>` (Spark 4's
 * `StructField.sql`: a field that is never null says so).
 *
 * @example
 * ```ts
 * import { DataType } from "tributary-streaming"
 * DataType.sqlTypeName(DataType.map(DataType.StringType, DataType.IntegerType)) // "MAP<STRING, INT>"
 * ```
 * @since 0.4.0
 */
export const sqlTypeName = (t: DataType): string => {
  switch (t._tag) {
    case "null":
      return "VOID"
    case "boolean":
      return "BOOLEAN"
    case "integer":
      return "INT"
    case "long":
      return "BIGINT"
    case "double":
      return "DOUBLE"
    case "string":
      return "STRING"
    case "binary":
      return "BINARY"
    case "timestamp":
      return "TIMESTAMP"
    case "date":
      return "DATE"
    case "calendarInterval":
      return "INTERVAL"
    case "struct":
      return `STRUCT<${t.fields
        .map((f) => `${quoteIfNeeded(f.name)}: ${sqlTypeName(f.dataType)}${f.nullable ? "" : " NOT NULL"}`)
        .join(", ")}>`
    case "array":
      return `ARRAY<${sqlTypeName(t.elementType)}>`
    case "map":
      return `MAP<${sqlTypeName(t.keyType)}, ${sqlTypeName(t.valueType)}>`
  }
}

/** Structural equality of types (nullability of nested fields ignored, as Spark's `sameType`). */
export const sameType = (a: DataType, b: DataType): boolean => {
  if (a._tag !== b._tag) return false
  switch (a._tag) {
    case "struct": {
      const bs = b as StructType
      return (
        a.fields.length === bs.fields.length &&
        a.fields.every((f, i) => f.name === bs.fields[i].name && sameType(f.dataType, bs.fields[i].dataType))
      )
    }
    case "array":
      return sameType(a.elementType, (b as ArrayType).elementType)
    case "map":
      return sameType(a.keyType, (b as MapType).keyType) && sameType(a.valueType, (b as MapType).valueType)
    default:
      return true
  }
}

const numericRank = (t: DataType): number =>
  t._tag === "integer" ? 1 : t._tag === "long" ? 2 : t._tag === "double" ? 3 : 0

/**
 * The common type two values widen to (Spark's `TypeCoercion.findTightestCommonType` plus the
 * string promotion of `findWiderTypeForTwo`); `undefined` when there is none.
 */
export const commonType = (a: DataType, b: DataType): DataType | undefined => {
  if (sameType(a, b)) return a
  if (a._tag === "null") return b
  if (b._tag === "null") return a
  const ra = numericRank(a)
  const rb = numericRank(b)
  if (ra > 0 && rb > 0) return ra >= rb ? a : b
  if (a._tag === "date" && b._tag === "timestamp") return b
  if (a._tag === "timestamp" && b._tag === "date") return a
  if (a._tag === "string" && (ra > 0 || rb > 0 || b._tag === "boolean" || isDatetime(b))) return StringType
  if (b._tag === "string" && (ra > 0 || rb > 0 || a._tag === "boolean" || isDatetime(a))) return StringType
  if (a._tag === "array" && b._tag === "array") {
    const e = commonType(a.elementType, b.elementType)
    return e === undefined ? undefined : array(e, a.containsNull || b.containsNull)
  }
  if (a._tag === "struct" && b._tag === "struct" && a.fields.length === b.fields.length) {
    const fields: Array<StructField> = []
    for (let i = 0; i < a.fields.length; i++) {
      const fa = a.fields[i]
      const fb = b.fields[i]
      if (fa.name !== fb.name) return undefined
      const t = commonType(fa.dataType, fb.dataType)
      if (t === undefined) return undefined
      fields.push(field(fa.name, t, fa.nullable || fb.nullable))
    }
    return struct(fields)
  }
  return undefined
}

export const isDatetime = (t: DataType): boolean => t._tag === "timestamp" || t._tag === "date"

/** Spark's `StructType.treeString`, as `printSchema` prints it. */
export const treeString = (schema: StructType): string => {
  const lines: Array<string> = ["root"]
  const walk = (t: DataType, prefix: string): void => {
    switch (t._tag) {
      case "struct":
        for (const f of t.fields) {
          lines.push(`${prefix}-- ${f.name}: ${typeName(f.dataType)} (nullable = ${f.nullable})`)
          walk(f.dataType, `${prefix}    |`)
        }
        return
      case "array":
        lines.push(`${prefix}-- element: ${typeName(t.elementType)} (containsNull = ${t.containsNull})`)
        walk(t.elementType, `${prefix}    |`)
        return
      case "map":
        lines.push(`${prefix}-- key: ${typeName(t.keyType)}`)
        walk(t.keyType, `${prefix}    |`)
        lines.push(`${prefix}-- value: ${typeName(t.valueType)} (valueContainsNull = ${t.valueContainsNull})`)
        walk(t.valueType, `${prefix}    |`)
        return
      default:
        return
    }
  }
  walk(schema, " |")
  return `${lines.join("\n")}\n`
}

/**
 * Parses a Spark type string (`"int"`, `"bigint"`, `"string"`, `"array<int>"`,
 * `"struct<a:int,b:string>"`, `"map<string,int>"`); `undefined` when it is not one.
 */
export const parseTypeString = (text: string): DataType | undefined => {
  let pos = 0
  const s = text.trim()
  const peek = (): string => s[pos]
  const skipWs = (): void => {
    while (pos < s.length && /\s/.test(s[pos])) pos++
  }
  const ident = (): string => {
    skipWs()
    const start = pos
    while (pos < s.length && /[A-Za-z0-9_]/.test(s[pos])) pos++
    return s.slice(start, pos)
  }
  const expect = (ch: string): boolean => {
    skipWs()
    if (s[pos] !== ch) return false
    pos++
    return true
  }
  const parse = (): DataType | undefined => {
    const name = ident().toLowerCase()
    switch (name) {
      case "string":
      case "varchar":
      case "char":
        if (peek() === "(") {
          while (pos < s.length && s[pos] !== ")") pos++
          pos++
        }
        return StringType
      case "boolean":
      case "bool":
        return BooleanType
      case "int":
      case "integer":
      case "smallint":
      case "short":
      case "tinyint":
      case "byte":
        return IntegerType
      case "bigint":
      case "long":
        return LongType
      case "double":
      case "float":
      case "real":
      case "decimal":
      case "numeric":
        if (peek() === "(") {
          while (pos < s.length && s[pos] !== ")") pos++
          pos++
        }
        return DoubleType
      case "binary":
        return BinaryType
      case "timestamp":
      case "timestamp_ntz":
      case "timestamp_ltz":
        return TimestampType
      case "date":
        return DateType
      case "void":
      case "null":
        return NullType
      case "interval":
        return CalendarIntervalType
      case "array": {
        if (!expect("<")) return undefined
        const e = parse()
        if (e === undefined || !expect(">")) return undefined
        return array(e)
      }
      case "map": {
        if (!expect("<")) return undefined
        const k = parse()
        if (k === undefined || !expect(",")) return undefined
        const v = parse()
        if (v === undefined || !expect(">")) return undefined
        return map(k, v)
      }
      case "struct": {
        if (!expect("<")) return undefined
        const fields: Array<StructField> = []
        skipWs()
        if (peek() === ">") {
          pos++
          return struct(fields)
        }
        for (;;) {
          const n = ident()
          if (n === "" || !expect(":")) return undefined
          const t = parse()
          if (t === undefined) return undefined
          fields.push(field(n, t))
          if (expect(">")) return struct(fields)
          if (!expect(",")) return undefined
        }
      }
      default:
        return undefined
    }
  }
  const t = parse()
  skipWs()
  return pos === s.length ? t : undefined
}

/**
 * Parses a DDL schema string (`"name STRING, age INT"` or `"name string, age int"`) into a
 * `StructType`; `undefined` when it is not one.
 */
export const parseDDL = (ddl: string): StructType | undefined => {
  const fields: Array<StructField> = []
  let depth = 0
  let cur = ""
  const parts: Array<string> = []
  for (const ch of ddl) {
    if (ch === "<" || ch === "(") depth++
    if (ch === ">" || ch === ")") depth--
    if (ch === "," && depth === 0) {
      parts.push(cur)
      cur = ""
    } else cur += ch
  }
  if (cur.trim() !== "") parts.push(cur)
  for (const part of parts) {
    const m = /^\s*`?([^`\s:]+)`?\s*:?\s+(.+?)(\s+NOT\s+NULL)?\s*$/i.exec(part)
    if (m === null) return undefined
    const t = parseTypeString(m[2])
    if (t === undefined) return undefined
    fields.push(field(m[1], t, m[3] === undefined))
  }
  return struct(fields)
}
