/**
 * From Effect `Schema` to Spark `StructType`.
 *
 * Rows are typed by an Effect Schema; the engine works with the `StructType` derived here.
 * The mapping (documented in the README):
 *
 * | Schema | Spark type |
 * | --- | --- |
 * | `Schema.String`, string literals | `string` |
 * | `Schema.Number`, `Schema.Finite` | `double` |
 * | `Schema.Int` (a number with the `isInt` check), `Schema.BigInt` | `long` |
 * | `Schema.Boolean` | `boolean` |
 * | `Schema.Date` (and `DateFromString`, …) | `timestamp` |
 * | `Schema.Uint8Array` | `binary` |
 * | `Schema.Array(A)` | `array<A>` |
 * | `Schema.Struct({...})` | `struct<...>` |
 * | `Schema.Record(String, A)` | `map<string, A>` |
 * | `Schema.NullOr(A)`, `Schema.optional(A)` | `A`, nullable |
 *
 * A field is nullable only when its schema admits `null` or `undefined`; Spark's
 * `createDataFrame` with a schema marks fields nullable the same way.
 *
 * @since 0.1.0
 */
import { type Schema, SchemaAST } from "effect"
import * as T from "./DataType.ts"

type AST = SchemaAST.AST

const hasCheck = (ast: AST, id: string): boolean =>
  (ast.checks ?? []).some((c) => {
    const meta = (c as { annotations?: { representation?: { id?: string } } }).annotations
    return meta?.representation?.id === id
  })

const declarationId = (ast: AST): string | undefined =>
  (ast.annotations as { representation?: { id?: string } } | undefined)?.representation?.id

/** The Spark type and nullability of one schema AST; `undefined` when it has no Spark equivalent. */
const fromAst = (ast: AST): { readonly dataType: T.DataType; readonly nullable: boolean } | undefined => {
  switch (ast._tag) {
    case "String":
    case "TemplateLiteral":
      return { dataType: T.StringType, nullable: false }
    case "Number":
      return { dataType: hasCheck(ast, "effect/schema/isInt") ? T.LongType : T.DoubleType, nullable: false }
    case "BigInt":
      return { dataType: T.LongType, nullable: false }
    case "Boolean":
      return { dataType: T.BooleanType, nullable: false }
    case "Null":
    case "Undefined":
    case "Void":
      return { dataType: T.NullType, nullable: true }
    case "Literal": {
      const v = ast.literal
      const dataType =
        typeof v === "string"
          ? T.StringType
          : typeof v === "boolean"
            ? T.BooleanType
            : typeof v === "bigint"
              ? T.LongType
              : Number.isInteger(v)
                ? T.LongType
                : T.DoubleType
      return { dataType, nullable: false }
    }
    case "Declaration": {
      const id = declarationId(ast)
      if (id === "effect/schema/Date") return { dataType: T.TimestampType, nullable: false }
      if (id === "effect/schema/Uint8Array") return { dataType: T.BinaryType, nullable: false }
      return undefined
    }
    case "Arrays": {
      const elem = ast.rest[0] ?? ast.elements[0]
      const inner = elem === undefined ? undefined : fromAst(elem)
      if (inner === undefined) return undefined
      return { dataType: T.array(inner.dataType, inner.nullable), nullable: false }
    }
    case "Objects": {
      if (ast.propertySignatures.length === 0 && ast.indexSignatures.length === 1) {
        const sig = ast.indexSignatures[0]
        const k = fromAst(sig.parameter)
        const v = fromAst(sig.type)
        if (k === undefined || v === undefined) return undefined
        return { dataType: T.map(k.dataType, v.dataType, v.nullable), nullable: false }
      }
      const st = structFromAst(ast)
      return st === undefined ? undefined : { dataType: st, nullable: false }
    }
    case "Union": {
      let nullable = false
      let dataType: T.DataType | undefined
      for (const member of ast.types) {
        const m = fromAst(member)
        if (m === undefined) return undefined
        if (m.dataType._tag === "null") {
          nullable = true
          continue
        }
        nullable ||= m.nullable
        if (dataType === undefined) dataType = m.dataType
        else {
          const c = T.commonType(dataType, m.dataType)
          if (c === undefined) return undefined
          dataType = c
        }
      }
      return { dataType: dataType ?? T.NullType, nullable }
    }
    case "Suspend":
      return fromAst(ast.thunk())
    default:
      return undefined
  }
}

const structFromAst = (ast: SchemaAST.Objects): T.StructType | undefined => {
  const fields: Array<T.StructField> = []
  for (const ps of ast.propertySignatures) {
    const m = fromAst(ps.type)
    if (m === undefined) return undefined
    const optional = ps.type.context?.isOptional === true
    fields.push(T.field(String(ps.name), m.dataType, m.nullable || optional))
  }
  return T.struct(fields)
}

/**
 * The Spark type of a schema. Struct schemas give their `StructType`; any other schema gives
 * a one-column struct named `value`, as Spark's `Encoder` for a primitive does.
 * `undefined` when some part has no Spark equivalent (a function, a symbol, …).
 */
export const structTypeOf = (schema: Schema.Top): T.StructType | undefined => {
  const ast = schema.ast
  if (ast._tag === "Objects" && !(ast.propertySignatures.length === 0 && ast.indexSignatures.length === 1)) {
    return structFromAst(ast)
  }
  const m = fromAst(ast)
  return m === undefined ? undefined : T.struct([T.field("value", m.dataType, m.nullable)])
}

/** True when the schema describes a row object (a struct), not a single value. */
export const isStructSchema = (schema: Schema.Top): boolean =>
  schema.ast._tag === "Objects" &&
  !(schema.ast.propertySignatures.length === 0 && schema.ast.indexSignatures.length === 1)

/** The type of a schema's single value, for key schemas (`groupByKey(f, Schema.String)`). */
export const dataTypeOf = (schema: Schema.Top): { readonly dataType: T.DataType; readonly nullable: boolean } | undefined =>
  fromAst(schema.ast)
