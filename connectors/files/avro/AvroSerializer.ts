/**
 * Spark's `AvroSerializer`: a converter from internal values of a Spark type to the Avro values
 * `avsc` writes for an Avro schema (wrapped unions, as `AvroSchema.ts` parses them), built once
 * per schema pair. Spark's pairs and checks: records by name (or position), every non-nullable
 * Avro field matched, enum symbols and fixed sizes checked, timestamps as `timestamp-micros`
 * (or milliseconds for `timestamp-millis` and plain longs), nullable values into `[type, "null"]`
 * unions, `struct<member0, …>` into complex unions.
 *
 * @since 0.5.0
 */
import * as T from "../../../core/DataType.ts"
import { type AvroType, baseType, IncompatibleSchemaError, logicalName, nonNullBranches, schemaString } from "./AvroSchema.ts"
import { type Converter, sqlString } from "./AvroDeserializer.ts"

const toFieldStr = (path: ReadonlyArray<string>): string =>
  path.length === 0 ? "top-level record" : `field '${path.join(".")}'`

/** Spark's `AVRO_CANNOT_WRITE_NULL_FIELD`, thrown while converting a row. */
export class NullFieldError extends Error {
  readonly errorClass = "AVRO_CANNOT_WRITE_NULL_FIELD"
}

export interface SerializerOptions {
  readonly positionalFieldMatching: boolean
}

/**
 * Spark's `resolveNullableType`: a union with exactly one non-null branch stands for that branch;
 * the returned `wrap` puts a value back into the union's branch.
 */
const resolveNullable = (at: AvroType): { readonly type: AvroType; readonly wrap: (v: unknown) => unknown } => {
  if (baseType(at) !== "union") return { type: at, wrap: (v) => v }
  const rest = nonNullBranches(at)
  if (rest.length === 1) {
    const name = rest[0].branchName ?? ""
    return { type: rest[0], wrap: (v) => (v === null ? null : { [name]: v }) }
  }
  return { type: at, wrap: (v) => v }
}

const isNullableField = (at: AvroType): boolean =>
  baseType(at) === "union" && (at.types ?? []).some((b) => baseType(b) === "null")

/**
 * The converter of internal values of `sql` to Avro values of `avro`; throws
 * `IncompatibleSchemaError` (Spark's message) when they do not match.
 */
export const makeSerializer = (
  sql: T.DataType,
  avro: AvroType,
  nullable: boolean,
  options: SerializerOptions
): Converter => {
  const newConverter = (
    ct: T.DataType,
    at: AvroType,
    catalystPath: ReadonlyArray<string>,
    avroPath: ReadonlyArray<string>
  ): Converter => {
    const errorPrefix = `Cannot convert SQL ${toFieldStr(catalystPath)} to Avro ${toFieldStr(avroPath)} because `
    const kind = baseType(at)
    const logical = logicalName(at)
    switch (ct._tag) {
      case "null":
        if (kind === "null") return () => null
        break
      case "boolean":
        if (kind === "boolean") return (v) => v
        break
      case "integer":
        if (kind === "int") return (v) => v
        break
      case "long":
        if (kind === "long") return (v) => v
        if (kind === "union") {
          const kinds = new Set(nonNullBranches(at).map(baseType))
          if (kinds.size === 2 && kinds.has("int") && kinds.has("long")) return (v) => ({ long: v })
        }
        break
      case "double":
        // tributary's double is also Spark's float: a float field takes it
        if (kind === "double") return (v) => v
        if (kind === "float") return (v) => v
        if (kind === "union") {
          const kinds = new Set(nonNullBranches(at).map(baseType))
          if (kinds.size === 2 && kinds.has("float") && kinds.has("double")) return (v) => ({ double: v })
        }
        break
      case "string":
        if (kind === "enum") {
          const symbols = new Set(at.symbols ?? [])
          return (v) => {
            if (!symbols.has(v as string)) {
              throw new IncompatibleSchemaError(
                `${errorPrefix}"${String(v)}" cannot be written since it's not defined in enum ${[...symbols].map((s) => `"${s}"`).join(", ")}`
              )
            }
            return v
          }
        }
        if (kind === "string") return (v) => v
        break
      case "binary":
        if (kind === "fixed") {
          const size = at.size ?? 0
          const len2str = (n: number) => `${n} ${n > 1 ? "bytes" : "byte"}`
          return (v) => {
            const b = v as Uint8Array
            if (b.length !== size) {
              throw new IncompatibleSchemaError(
                `${errorPrefix}${len2str(b.length)} of binary data cannot be written into FIXED type with size of ${len2str(size)}`
              )
            }
            return Buffer.from(b)
          }
        }
        if (kind === "bytes") return (v) => Buffer.from(v as Uint8Array)
        break
      case "date":
        if (kind === "int") return (v) => v
        break
      case "timestamp":
        if (kind === "long") {
          // internal timestamps are milliseconds, with microseconds as the fraction
          if (logical === undefined || logical === "timestamp-millis" || logical === "local-timestamp-millis") {
            return (v) => Math.floor(v as number)
          }
          if (logical === "timestamp-micros" || logical === "local-timestamp-micros") {
            return (v) => Math.round((v as number) * 1000)
          }
          throw new IncompatibleSchemaError(`${errorPrefix}SQL type TIMESTAMP cannot be converted to Avro logical type ${logical}`)
        }
        break
      case "array":
        if (kind === "array") {
          const item = resolveNullable(at.itemsType!)
          const elem = newConverter(ct.elementType, item.type, [...catalystPath, "element"], [...avroPath, "element"])
          return (v) => {
            const a = v as ReadonlyArray<unknown>
            const out = new Array<unknown>(a.length)
            for (let i = 0; i < a.length; i++) {
              const x = a[i]
              out[i] = x === null || x === undefined ? null : item.wrap(elem(x))
            }
            return out
          }
        }
        break
      case "struct":
        if (kind === "record") return structConverter(ct, at, catalystPath, avroPath)
        if (kind === "union") return complexUnionConverter(ct, at, catalystPath, avroPath)
        break
      case "map":
        if (kind === "map" && ct.keyType._tag === "string") {
          const value = resolveNullable(at.valuesType!)
          const conv = newConverter(ct.valueType, value.type, [...catalystPath, "value"], [...avroPath, "value"])
          return (v) => {
            const out: Record<string, unknown> = {}
            for (const [k, x] of v as Map<string, unknown>) {
              out[k] = x === null || x === undefined ? null : value.wrap(conv(x))
            }
            return out
          }
        }
        break
      case "calendarInterval":
        break
    }
    throw new IncompatibleSchemaError(
      `${errorPrefix}schema is incompatible (sqlType = ${sqlString(ct)}, avroType = ${schemaString(at)})`
    )
  }

  const structConverter = (
    st: T.StructType,
    at: AvroType,
    catalystPath: ReadonlyArray<string>,
    avroPath: ReadonlyArray<string>
  ): Converter => {
    const avroFields = at.fields ?? []
    const matched = st.fields.map((f, pos) => {
      if (options.positionalFieldMatching) return pos < avroFields.length ? pos : -1
      const l = f.name.toLowerCase()
      const found = avroFields.map((x, i) => [x, i] as const).filter(([x]) => x.name.toLowerCase() === l)
      if (found.length > 1) {
        throw new IncompatibleSchemaError(
          `Searching for '${f.name}' in Avro schema at ${toFieldStr(avroPath)} gave ${found.length} matches. Candidates: [${found.map(([x]) => x.name).join(", ")}]`
        )
      }
      return found.length === 1 ? found[0][1] : -1
    })
    // Spark's `validateNoExtraCatalystFields(ignoreNullable = false)`
    st.fields.forEach((f, pos) => {
      if (matched[pos] < 0) {
        throw new IncompatibleSchemaError(
          options.positionalFieldMatching
            ? `Cannot find field at position ${pos} of ${toFieldStr(avroPath)} from Avro schema (using positional matching)`
            : `Cannot find ${toFieldStr([...catalystPath, f.name])} in Avro schema`
        )
      }
    })
    // Spark's `validateNoExtraRequiredAvroFields`
    const used = new Set(matched)
    avroFields.forEach((f, i) => {
      if (!used.has(i) && !isNullableField(f.type)) {
        throw new IncompatibleSchemaError(
          options.positionalFieldMatching
            ? `Found field '${f.name}' at position ${i} of ${toFieldStr(avroPath)} from Avro schema but there is no match in the SQL schema at ${toFieldStr(catalystPath)} (using positional matching)`
            : `Found ${toFieldStr([...avroPath, f.name])} in Avro schema but there is no match in the SQL schema`
        )
      }
    })
    const parts = matched.map((i, pos) => {
      const field = avroFields[i]
      const resolved = resolveNullable(field.type)
      const conv = newConverter(st.fields[pos].dataType, resolved.type, [...catalystPath, st.fields[pos].name], [
        ...avroPath,
        field.name
      ])
      const nullable = isNullableField(field.type) || baseType(field.type) === "null"
      return { name: field.name, conv, wrap: resolved.wrap, nullable, avroType: schemaString(field.type) }
    })
    const unmatched = avroFields.filter((_, i) => !used.has(i)).map((f) => f.name)
    const n = parts.length
    return (v) => {
      const r = v as ReadonlyArray<unknown>
      const out: Record<string, unknown> = {}
      for (const name of unmatched) out[name] = null
      for (let i = 0; i < n; i++) {
        const p = parts[i]
        const x = r[i]
        if (x === null || x === undefined) {
          if (!p.nullable) {
            throw new NullFieldError(
              `[AVRO_CANNOT_WRITE_NULL_FIELD] Cannot write null value for field \`${p.name}\` defined as non-null Avro data type ${p.avroType}. To allow null value for this field, specify its avro schema as a union type with "null" using \`avroSchema\` option.`
            )
          }
          out[p.name] = null
        } else out[p.name] = p.wrap(p.conv(x))
      }
      return out
    }
  }

  /** Spark's `newComplexUnionConverter`: the first non-null member is the union's value. */
  const complexUnionConverter = (
    st: T.StructType,
    at: AvroType,
    catalystPath: ReadonlyArray<string>,
    avroPath: ReadonlyArray<string>
  ): Converter => {
    const rest = nonNullBranches(at)
    const expected = rest.map((_, i) => `member${i}`)
    const names = st.fields.map((f) => f.name)
    if (options.positionalFieldMatching) {
      if (expected.length !== names.length) {
        throw new IncompatibleSchemaError(
          `Generic Avro union at ${toFieldStr(avroPath)} does not match the SQL schema at ${toFieldStr(catalystPath)}.  It expected the ${expected.length} members but got ${names.length}`
        )
      }
    } else if (expected.join("\u0000") !== names.join("\u0000")) {
      throw new IncompatibleSchemaError(
        `Generic Avro union at ${toFieldStr(avroPath)} does not match the SQL schema at ${toFieldStr(catalystPath)}.  It expected the following members (${expected.join(", ")}) but got (${names.join(", ")})`
      )
    }
    const convs = rest.map((b, i) => newConverter(st.fields[i].dataType, b, [...catalystPath, names[i]], [...avroPath, names[i]]))
    const branchNames = rest.map((b) => b.branchName ?? "")
    return (v) => {
      const r = v as ReadonlyArray<unknown>
      for (let i = 0; i < convs.length; i++) {
        const x = r[i]
        if (x !== null && x !== undefined) return { [branchNames[i]]: convs[i](x) }
      }
      return null
    }
  }

  try {
    const root = resolveNullable(avro)
    const conv =
      sql._tag === "struct" && baseType(root.type) === "record"
        ? structConverter(sql, root.type, [], [])
        : newConverter(sql, root.type, [], [])
    return nullable ? (v) => (v === null || v === undefined ? null : root.wrap(conv(v))) : (v) => root.wrap(conv(v))
  } catch (e) {
    if (e instanceof IncompatibleSchemaError) {
      throw new IncompatibleSchemaError(`Cannot convert SQL type ${sqlString(sql)} to Avro type ${schemaString(avro)}. ${e.message}`)
    }
    throw e
  }
}
