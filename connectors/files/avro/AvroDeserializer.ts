/**
 * Spark's `AvroDeserializer`: a converter from Avro values (as `avsc` decodes them with
 * `AvroSchema.ts`'s options) to tributary's internal values of a Spark type, built once per
 * schema pair and then applied in plain loops.
 *
 * The pairs Spark accepts, with Spark's checks and messages (`IncompatibleSchemaException`,
 * `AVRO_INCOMPATIBLE_READ_TYPE`): records by field name (case-insensitive, or by position with
 * `positionalFieldMatching`), a missing nullable field reads as null; `timestamp-millis` (and a
 * long without logical type) as milliseconds, `timestamp-micros` keeping microseconds; the
 * legacy long-as-date; unions of null and one type as that type; `[int, long]` as long,
 * `[float, double]` as double; other unions as `struct<member0, …>`; enums as strings; fixed as
 * binary; decimals as the nearest double. Dates and timestamps are rebased by
 * `datetimeRebaseMode` (Spark's `RebaseDateTime` from the Julian calendar, in UTC).
 *
 * @since 0.5.0
 */
import * as T from "../../../core/DataType.ts"
import {
  type AvroType,
  baseType,
  IncompatibleSchemaError,
  logicalName,
  nonNullBranches,
  schemaString,
  toSqlType
} from "./AvroSchema.ts"

/** A converter from one Avro value to one internal value. */
export type Converter = (value: unknown) => unknown

/** Spark's `LegacyBehaviorPolicy` for reading dates and timestamps. */
export type RebaseMode = "EXCEPTION" | "CORRECTED" | "LEGACY"

/** Spark's `INCONSISTENT_BEHAVIOR_CROSS_VERSION.READ_ANCIENT_DATETIME`, thrown by a converter. */
export class AncientDatetimeError extends Error {
  readonly errorClass = "INCONSISTENT_BEHAVIOR_CROSS_VERSION.READ_ANCIENT_DATETIME"
  constructor() {
    super(
      `[INCONSISTENT_BEHAVIOR_CROSS_VERSION.READ_ANCIENT_DATETIME] You may get a different result due to the upgrading to Spark >= 3.0: Spark >= 3.0: reading dates before 1582-10-15 or timestamps before 1900-01-01T00:00:00Z from Avro files can be ambiguous, as the files may be written by Spark 2.x or legacy versions of Hive, which uses a legacy hybrid calendar that is different from Spark 3.0+'s Proleptic Gregorian calendar. See more details in SPARK-31404. You can set the SQL config "spark.sql.avro.datetimeRebaseModeInRead" or the datasource option "datetimeRebaseMode" to "LEGACY" to rebase the datetime values w.r.t. the calendar difference during reading. To read the datetime values as it is, set the SQL config or the datasource option to "CORRECTED".`
    )
  }
}

export interface DeserializerOptions {
  readonly positionalFieldMatching: boolean
  readonly rebaseMode: RebaseMode
}

/** Spark's `RebaseDateTime.lastSwitchJulianDay` (1582-10-15) and `lastSwitchJulianTs` (1900-01-01T00:00:00Z, in ms). */
const LAST_SWITCH_JULIAN_DAY = -141427
const LAST_SWITCH_JULIAN_TS_MS = -2208988800000
const MS_PER_DAY = 86_400_000
const JDN_EPOCH = 2440588

/** The proleptic Gregorian epoch day of the Julian-calendar date that `days` stands for in the hybrid calendar. */
export const rebaseJulianToGregorianDays = (days: number): number => {
  if (days >= LAST_SWITCH_JULIAN_DAY) return days
  // the Julian calendar's year, month and day of this day number
  const c = days + JDN_EPOCH + 32082
  const d = Math.floor((4 * c + 3) / 1461)
  const e = c - Math.floor((1461 * d) / 4)
  const m = Math.floor((5 * e + 2) / 153)
  const day = e - Math.floor((153 * m + 2) / 5) + 1
  const month = m + 3 - 12 * Math.floor(m / 10)
  const year = d - 4800 + Math.floor(m / 10)
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  return Math.floor(date.getTime() / MS_PER_DAY)
}

/** A UTC timestamp (ms) of the hybrid calendar rebased to the proleptic Gregorian calendar. */
const rebaseJulianToGregorianMs = (ms: number): number => {
  if (ms >= LAST_SWITCH_JULIAN_TS_MS) return ms
  const days = Math.floor(ms / MS_PER_DAY)
  return rebaseJulianToGregorianDays(days) * MS_PER_DAY + (ms - days * MS_PER_DAY)
}

const toFieldStr = (path: ReadonlyArray<string>): string =>
  path.length === 0 ? "top-level record" : `field '${path.join(".")}'`

/** Spark's `DataType.sql`. */
export const sqlString = (t: T.DataType): string => {
  switch (t._tag) {
    case "struct":
      return `STRUCT<${t.fields.map((f) => `${f.name}: ${sqlString(f.dataType)}${f.nullable ? "" : " NOT NULL"}`).join(", ")}>`
    case "array":
      return `ARRAY<${sqlString(t.elementType)}>`
    case "map":
      return `MAP<${sqlString(t.keyType)}, ${sqlString(t.valueType)}>`
    default:
      return T.simpleString(t).toUpperCase()
  }
}

const num = (v: unknown): number => (typeof v === "bigint" ? Number(v) : (v as number))

/** A decimal's unscaled big-endian two's complement bytes as the nearest double. */
export const decimalToDouble = (bytes: Uint8Array, scale: number): number => {
  if (bytes.length === 0) return 0
  let big = 0n
  for (const b of bytes) big = (big << 8n) | BigInt(b)
  if ((bytes[0] & 0x80) !== 0) big -= 1n << BigInt(bytes.length * 8)
  if (scale === 0) return Number(big)
  const neg = big < 0n
  const digits = (neg ? -big : big).toString().padStart(scale + 1, "0")
  return Number(`${neg ? "-" : ""}${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`)
}

const copyBytes = (v: unknown): Uint8Array => new Uint8Array(v as Uint8Array)

/** Record fields of `avro` matched to the fields of `st` (Spark's `AvroSchemaHelper`). */
const matchFields = (
  avro: AvroType,
  st: T.StructType,
  avroPath: ReadonlyArray<string>,
  positional: boolean
): ReadonlyArray<number> => {
  if (baseType(avro) !== "record") {
    throw new IncompatibleSchemaError(`Attempting to treat ${avro.name ?? baseType(avro)} as a RECORD, but it was: ${baseType(avro).toUpperCase()}`)
  }
  const fields = avro.fields ?? []
  return st.fields.map((f, pos) => {
    if (positional) return pos < fields.length ? pos : -1
    const l = f.name.toLowerCase()
    const found = fields.map((x, i) => [x, i] as const).filter(([x]) => x.name.toLowerCase() === l)
    if (found.length > 1) {
      throw new IncompatibleSchemaError(
        `Searching for '${f.name}' in Avro schema at ${toFieldStr(avroPath)} gave ${found.length} matches. Candidates: [${found.map(([x]) => x.name).join(", ")}]`
      )
    }
    return found.length === 1 ? found[0][1] : -1
  })
}

/**
 * The converter of Avro values of `avro` to internal values of `sql`; throws
 * `IncompatibleSchemaError` (with Spark's message) when they do not match.
 */
export const makeDeserializer = (avro: AvroType, sql: T.DataType, options: DeserializerOptions): Converter => {
  const ancientDay = (d: number): number => {
    if (options.rebaseMode === "EXCEPTION" && d < LAST_SWITCH_JULIAN_DAY) throw new AncientDatetimeError()
    return options.rebaseMode === "LEGACY" ? rebaseJulianToGregorianDays(d) : d
  }
  const ancientTs = (ms: number): number => {
    if (options.rebaseMode === "EXCEPTION" && ms < LAST_SWITCH_JULIAN_TS_MS) throw new AncientDatetimeError()
    return options.rebaseMode === "LEGACY" ? rebaseJulianToGregorianMs(ms) : ms
  }

  const newWriter = (
    at: AvroType,
    ct: T.DataType,
    avroPath: ReadonlyArray<string>,
    catalystPath: ReadonlyArray<string>
  ): Converter => {
    const errorPrefix = `Cannot convert Avro ${toFieldStr(avroPath)} to SQL ${toFieldStr(catalystPath)} because `
    const incompatible = () =>
      new IncompatibleSchemaError(
        `${errorPrefix}schema is incompatible (avroType = ${schemaString(at)}, sqlType = ${sqlString(ct)})`
      )
    const real = baseType(at) === "union" ? undefined : toSqlType(at).dataType
    const incorrectType = () =>
      new IncompatibleSchemaError(
        `[AVRO_INCOMPATIBLE_READ_TYPE] Cannot convert Avro ${toFieldStr(avroPath)} to SQL ${toFieldStr(catalystPath)} because the original encoded data type is ${real === undefined ? "" : T.simpleString(real)}, however you're trying to read the field as ${T.simpleString(ct)}, which would lead to an incorrect answer. To allow reading this field, enable the SQL configuration: "spark.sql.legacy.avro.allowIncompatibleSchema".`
      )
    const logical = logicalName(at)
    const kind = baseType(at)
    switch (kind) {
      case "null":
        if (ct._tag === "null") return () => null
        break
      case "boolean":
        if (ct._tag === "boolean") return (v) => v
        break
      case "int":
        if (ct._tag === "integer") return (v) => v
        if (ct._tag === "date") {
          if (real !== undefined && !T.sameType(real, ct)) throw incorrectType()
          return (v) => ancientDay(v as number)
        }
        break
      case "long":
        if (ct._tag === "long") return (v) => v
        if (ct._tag === "timestamp") {
          // Spark: a long without logical type is a timestamp in milliseconds (backward compatibility)
          if (logical === undefined || logical === "timestamp-millis" || logical === "local-timestamp-millis") {
            return (v) => ancientTs(num(v))
          }
          if (logical === "timestamp-micros" || logical === "local-timestamp-micros") {
            return (v) => {
              const micros = v as number | bigint
              const ms = typeof micros === "bigint" ? Number(micros) / 1000 : micros / 1000
              return ancientTs(ms)
            }
          }
          throw new IncompatibleSchemaError(`${errorPrefix}Avro logical type ${logical} cannot be converted to SQL type TIMESTAMP.`)
        }
        if (ct._tag === "date") {
          if (real !== undefined && !T.sameType(real, ct)) throw incompatible()
          // spark-avro before Avro 1.8 wrote dates as longs of milliseconds (Java's truncating division)
          return (v) => Math.trunc(num(v) / MS_PER_DAY)
        }
        break
      case "float":
      case "double":
        if (ct._tag === "double") return (v) => v
        break
      case "string":
      case "enum":
        if (ct._tag === "string") return (v) => v
        break
      case "fixed":
      case "bytes":
        if (ct._tag === "binary" && logical !== "decimal") return copyBytes
        if (ct._tag === "binary") return copyBytes
        if (ct._tag === "double" && logical === "decimal") {
          const scale = at.scale ?? 0
          return (v) => decimalToDouble(v as Uint8Array, scale)
        }
        break
      case "record":
        if (ct._tag === "struct") return recordWriter(at, ct, avroPath, catalystPath)
        break
      case "array":
        if (ct._tag === "array") {
          const elementPath = [...avroPath, "element"]
          const elem = newWriter(at.itemsType!, ct.elementType, elementPath, [...catalystPath, "element"])
          const containsNull = ct.containsNull
          return (v) => {
            const a = v as ReadonlyArray<unknown>
            const out = new Array<unknown>(a.length)
            for (let i = 0; i < a.length; i++) {
              const x = a[i]
              if (x === null || x === undefined) {
                if (!containsNull) throw new Error(`Array value at path ${toFieldStr(elementPath)} is not allowed to be null`)
                out[i] = null
              } else out[i] = elem(x)
            }
            return out
          }
        }
        break
      case "map":
        if (ct._tag === "map" && ct.keyType._tag === "string") {
          const value = newWriter(at.valuesType!, ct.valueType, [...avroPath, "value"], [...catalystPath, "value"])
          const valueContainsNull = ct.valueContainsNull
          return (v) => {
            const out = new Map<unknown, unknown>()
            for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
              if (x === null || x === undefined) {
                if (!valueContainsNull) {
                  throw new Error(`Map value at path ${toFieldStr([...avroPath, "value"])} is not allowed to be null`)
                }
                out.set(k, null)
              } else out.set(k, value(x))
            }
            return out
          }
        }
        break
      case "union": {
        const branches = at.types ?? []
        const rest = nonNullBranches(at)
        if (rest.length === 0) return () => null
        const branchIndex = new Map(rest.map((b, i) => [b.branchName ?? "", i] as const))
        if (rest.length === 1) {
          const inner = newWriter(rest[0], ct, avroPath, catalystPath)
          const name = rest[0].branchName ?? ""
          return (v) => {
            const x = (v as Record<string, unknown>)[name]
            return x === null || x === undefined ? null : inner(x)
          }
        }
        const kinds = new Set(rest.map(baseType))
        if (rest.length === 2 && kinds.has("int") && kinds.has("long") && ct._tag === "long") {
          return (v) => {
            const o = v as Record<string, unknown>
            return o.long ?? o.int ?? null
          }
        }
        if (rest.length === 2 && kinds.has("float") && kinds.has("double") && ct._tag === "double") {
          return (v) => {
            const o = v as Record<string, unknown>
            return o.double ?? o.float ?? null
          }
        }
        if (ct._tag === "struct" && ct.fields.length === rest.length) {
          const writers = rest.map((b, i) => newWriter(b, ct.fields[i].dataType, avroPath, [...catalystPath, ct.fields[i].name]))
          const n = rest.length
          void branches
          return (v) => {
            const o = v as Record<string, unknown>
            const out = new Array<unknown>(n).fill(null)
            for (const key in o) {
              const i = branchIndex.get(key)
              if (i !== undefined) {
                const x = o[key]
                out[i] = x === null || x === undefined ? null : writers[i](x)
              }
            }
            return out
          }
        }
        throw incompatible()
      }
    }
    throw incompatible()
  }

  const recordWriter = (
    at: AvroType,
    st: T.StructType,
    avroPath: ReadonlyArray<string>,
    catalystPath: ReadonlyArray<string>
  ): Converter => {
    const matched = matchFields(at, st, avroPath, options.positionalFieldMatching)
    // Spark's `validateNoExtraCatalystFields(ignoreNullable = true)`
    st.fields.forEach((f, pos) => {
      if (matched[pos] < 0 && !f.nullable) {
        throw new IncompatibleSchemaError(
          options.positionalFieldMatching
            ? `Cannot find field at position ${pos} of ${toFieldStr(avroPath)} from Avro schema (using positional matching)`
            : `Cannot find ${toFieldStr([...catalystPath, f.name])} in Avro schema`
        )
      }
    })
    const avroFields = at.fields ?? []
    const names = matched.map((i) => (i < 0 ? undefined : avroFields[i].name))
    const writers = matched.map((i, pos) =>
      i < 0
        ? undefined
        : newWriter(avroFields[i].type, st.fields[pos].dataType, [...avroPath, avroFields[i].name], [
            ...catalystPath,
            st.fields[pos].name
          ])
    )
    const n = st.fields.length
    return (v) => {
      const rec = v as Record<string, unknown>
      const out = new Array<unknown>(n)
      for (let i = 0; i < n; i++) {
        const name = names[i]
        if (name === undefined) {
          out[i] = null
          continue
        }
        const x = rec[name]
        out[i] = x === null || x === undefined ? null : writers[i]!(x)
      }
      return out
    }
  }

  try {
    if (sql._tag === "struct" && sql.fields.length === 0) return () => []
    return newWriter(avro, sql, [], [])
  } catch (e) {
    if (e instanceof IncompatibleSchemaError) {
      throw new IncompatibleSchemaError(
        `Cannot convert Avro type ${schemaString(avro)} to SQL type ${sqlString(sql)}. ${e.message}`
      )
    }
    throw e
  }
}
