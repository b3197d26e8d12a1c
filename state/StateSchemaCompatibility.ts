/**
 * State schemas: their stored form and the compatibility check a restart runs before the first
 * batch (Spark's `StateSchemaCompatibilityChecker`).
 *
 * Spark's rule (`DataType.equalsIgnoreNameAndCompatibleNullability(new, stored)`), followed
 * here: key and value schemas must have the same number of fields with the same types, position
 * by position, recursively; field names are not compared (a rename is allowed); nullability may
 * only tighten: a field (array element, map value) the state has as nullable may become
 * non-nullable, not the other way round. Adding or removing a field is incompatible, nullable or
 * not. An identical schema passes without further checks.
 *
 * The error names the operator, the store and the first field that differs, e.g.
 * `Provided value schema does not match existing state value schema for operator 0 store
 * 'default': field 'count' changed type from bigint to string`.
 *
 * @since 0.1.0
 */
import * as T from "../core/DataType.ts"
import { StateStoreError } from "../core/Errors.ts"
import { describeStore, type StateSchema } from "./StateStore.ts"

/** A data type as plain JSON, with a fixed key order (so equal types encode to equal text). */
const typeToJson = (t: T.DataType): unknown => {
  switch (t._tag) {
    case "struct":
      return {
        _tag: "struct",
        fields: t.fields.map((f) => ({ name: f.name, dataType: typeToJson(f.dataType), nullable: f.nullable }))
      }
    case "array":
      return { _tag: "array", elementType: typeToJson(t.elementType), containsNull: t.containsNull }
    case "map":
      return {
        _tag: "map",
        keyType: typeToJson(t.keyType),
        valueType: typeToJson(t.valueType),
        valueContainsNull: t.valueContainsNull
      }
    default:
      return { _tag: t._tag }
  }
}

const LEAVES = new Set([
  "null",
  "boolean",
  "integer",
  "long",
  "double",
  "string",
  "binary",
  "timestamp",
  "date",
  "calendarInterval"
])

const typeFromJson = (j: unknown): T.DataType | undefined => {
  if (typeof j !== "object" || j === null) return undefined
  const o = j as Record<string, unknown>
  switch (o._tag) {
    case "struct": {
      if (!Array.isArray(o.fields)) return undefined
      const fields: Array<T.StructField> = []
      for (const f of o.fields as ReadonlyArray<Record<string, unknown>>) {
        if (typeof f !== "object" || f === null || typeof f.name !== "string" || typeof f.nullable !== "boolean")
          return undefined
        const dt = typeFromJson(f.dataType)
        if (dt === undefined) return undefined
        fields.push(T.field(f.name, dt, f.nullable))
      }
      return T.struct(fields)
    }
    case "array": {
      const e = typeFromJson(o.elementType)
      return e === undefined || typeof o.containsNull !== "boolean" ? undefined : T.array(e, o.containsNull)
    }
    case "map": {
      const k = typeFromJson(o.keyType)
      const v = typeFromJson(o.valueType)
      return k === undefined || v === undefined || typeof o.valueContainsNull !== "boolean"
        ? undefined
        : T.map(k, v, o.valueContainsNull)
    }
    default:
      return typeof o._tag === "string" && LEAVES.has(o._tag) ? ({ _tag: o._tag } as T.DataType) : undefined
  }
}

/**
 * The stored text of a state schema: canonical JSON, so two equal schemas give equal text.
 *
 * @since 0.1.0
 */
export const encodeSchema = (schema: StateSchema): string =>
  JSON.stringify({ keySchema: typeToJson(schema.keySchema), valueSchema: typeToJson(schema.valueSchema) })

/**
 * Reads a stored state schema; `undefined` when the text is not one.
 *
 * @since 0.1.0
 */
export const decodeSchema = (text: string): StateSchema | undefined => {
  let j: unknown
  try {
    j = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof j !== "object" || j === null) return undefined
  const o = j as Record<string, unknown>
  const k = typeFromJson(o.keySchema)
  const v = typeFromJson(o.valueSchema)
  return k?._tag === "struct" && v?._tag === "struct" ? { keySchema: k, valueSchema: v } : undefined
}

/**
 * The first difference that makes `proposed` incompatible with `stored` (Spark's
 * `equalsIgnoreNameAndCompatibleNullability(proposed, stored)`), described for a message; or
 * `undefined` when compatible. `path` names the place being compared.
 *
 * @since 0.1.0
 */
export const incompatibility = (stored: T.DataType, proposed: T.DataType, path = ""): string | undefined => {
  const where = path === "" ? "the schema" : `field '${path}'`
  if (stored._tag !== proposed._tag) {
    return `${where} changed type from ${T.simpleString(stored)} to ${T.simpleString(proposed)}`
  }
  switch (stored._tag) {
    case "struct": {
      const p = proposed as T.StructType
      const n = Math.min(stored.fields.length, p.fields.length)
      for (let i = 0; i < n; i++) {
        const sf = stored.fields[i]
        const pf = p.fields[i]
        const name = path === "" ? pf.name : `${path}.${pf.name}`
        const renamed = sf.name === pf.name ? "" : ` (was '${sf.name}')`
        // Spark: (toField.nullable || !fromField.nullable) with from = proposed, to = stored.
        if (pf.nullable && !sf.nullable) {
          return `field '${name}'${renamed} became nullable; the stored state has it non-nullable`
        }
        const inner = incompatibility(sf.dataType, pf.dataType, name)
        if (inner !== undefined) return inner
      }
      if (stored.fields.length !== p.fields.length) {
        const fields = (fs: ReadonlyArray<T.StructField>) => fs.map((f) => `'${f.name}'`).join(", ")
        return p.fields.length > stored.fields.length
          ? `${where} has ${p.fields.length} fields where the stored state has ${stored.fields.length}: added ${fields(p.fields.slice(n))}`
          : `${where} has ${p.fields.length} fields where the stored state has ${stored.fields.length}: removed ${fields(stored.fields.slice(n))}`
      }
      return undefined
    }
    case "array": {
      const p = proposed as T.ArrayType
      const name = `${path}[]`
      if (p.containsNull && !stored.containsNull) {
        return `${where} now allows null elements; the stored state's do not`
      }
      return incompatibility(stored.elementType, p.elementType, name)
    }
    case "map": {
      const p = proposed as T.MapType
      if (p.valueContainsNull && !stored.valueContainsNull) {
        return `${where} now allows null map values; the stored state's do not`
      }
      return (
        incompatibility(stored.keyType, p.keyType, `${path}{key}`) ??
        incompatibility(stored.valueType, p.valueType, `${path}{value}`)
      )
    }
    default:
      return undefined
  }
}

/**
 * Checks a store's proposed schema against the stored one: `undefined` when the query may run,
 * otherwise a `SchemaIncompatible` error naming the operator, the store and the field. Mirrors
 * Spark's `STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE` / `STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE`.
 *
 * @example
 * ```ts
 * import * as T from "../core/DataType.ts"
 * const stored = { keySchema: T.struct([T.field("word", T.StringType)]), valueSchema: T.struct([T.field("count", T.LongType)]) }
 * const proposed = { ...stored, valueSchema: T.struct([T.field("count", T.StringType)]) }
 * checkCompatibility(stored, proposed, { operatorId: 0, storeName: "default" })?.message
 * // "[STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE] Provided value schema does not match existing state value schema
 * //  for operator 0 store 'default': field 'count' changed type from bigint to string. ..."
 * ```
 * @since 0.1.0
 */
export const checkCompatibility = (
  stored: StateSchema,
  proposed: StateSchema,
  id: { readonly operatorId: number; readonly storeName: string; readonly path?: string | undefined }
): StateStoreError | undefined => {
  const check = (kind: "key" | "value", s: T.StructType, p: T.StructType): StateStoreError | undefined => {
    const why = incompatibility(s, p)
    if (why === undefined) return undefined
    const upper = kind.toUpperCase()
    return new StateStoreError({
      reason: "SchemaIncompatible",
      operatorId: id.operatorId,
      path: id.path,
      message:
        `[STATE_STORE_${upper}_SCHEMA_NOT_COMPATIBLE] Provided ${kind} schema does not match existing state ${kind} schema ` +
        `for ${describeStore(id)}: ${why}. Existing ${kind}_schema=${T.simpleString(s)}, new ${kind}_schema=${T.simpleString(p)}. ` +
        `Please check number and type of fields: a query whose state is incompatible must start from a new checkpoint. ` +
        `To run it anyway, set spark.sql.streaming.stateStore.stateSchemaCheck to false (results may then be wrong).`
    })
  }
  if (proposed.valueSchemaEvolution === true) {
    const keyError = check("key", stored.keySchema, proposed.keySchema)
    if (keyError !== undefined) return keyError
    const why = evolutionIncompatibility(stored.valueSchema, proposed.valueSchema)
    if (why === undefined) return undefined
    return new StateStoreError({
      reason: "SchemaIncompatible",
      operatorId: id.operatorId,
      path: id.path,
      message:
        `[STATE_STORE_INVALID_VALUE_SCHEMA_EVOLUTION] Schema evolution is not possible for ${describeStore(id)}: ${why}. ` +
        `Existing value_schema=${T.simpleString(stored.valueSchema)}, new value_schema=${T.simpleString(proposed.valueSchema)}. ` +
        `A stored value keeps its fields by name: fields may be added if they are nullable (optional) and removed, but not change type. ` +
        `Restore the previous schema or start from a new checkpoint.`
    })
  }
  return check("key", stored.keySchema, proposed.keySchema) ?? check("value", stored.valueSchema, proposed.valueSchema)
}

/**
 * The schema evolution Spark allows for `transformWithState` state stored by field name (its
 * Avro encoding): top-level fields are matched by name; a field both schemas have must keep a
 * compatible type (`incompatibility`), a new field must be nullable (old values lack it), and a
 * removed field is dropped when old values are read. `undefined` when `proposed` may read what
 * `stored` wrote.
 *
 * @since 0.1.0
 */
export const evolutionIncompatibility = (stored: T.StructType, proposed: T.StructType): string | undefined => {
  const byName = new Map(stored.fields.map((f) => [f.name, f]))
  for (const pf of proposed.fields) {
    const sf = byName.get(pf.name)
    if (sf === undefined) {
      if (!pf.nullable) return `field '${pf.name}' was added as non-nullable; values stored before have no value for it`
      continue
    }
    if (pf.nullable && !sf.nullable) {
      // Widening nullability is harmless for values stored by name (Spark's Avro evolution).
      continue
    }
    const inner = incompatibility(sf.dataType, pf.dataType, pf.name)
    if (inner !== undefined) return inner
  }
  return undefined
}
