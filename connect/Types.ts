/**
 * The mapping between tributary's data types (`core/DataType.ts`) and Spark Connect's: the
 * `spark.connect.DataType` protobuf message, DDL schema strings and Arrow schemas.
 *
 * tributary has fewer types than Spark, so reading Spark types narrows some of them (see
 * `docs/spark-connect-types.md`): `tinyint`/`smallint` become `integer`, `float` and
 * `decimal(p,s)` become `double` (a decimal loses digits beyond a double's 15–17 significant
 * ones), `timestamp_ntz` becomes `timestamp` (the session time zone is UTC, so the wall clock
 * reads the same), `char(n)`/`varchar(n)`/collated strings become `string`, and ANSI intervals
 * become `calendarInterval`. Types with no tributary counterpart (`variant`, `time`, `geometry`,
 * `geography`, user-defined types) are never mapped silently: the reading functions return a
 * `Result` whose failure is an `AnalysisError` naming the column and the Spark type.
 *
 * @since 0.4.0
 */
import { create } from "@bufbuild/protobuf"
import type * as arrow from "apache-arrow"
import { Result } from "effect"
import * as T from "../core/DataType.ts"
import { AnalysisError } from "../core/Errors.ts"
import * as P from "./gen/spark/connect/types_pb.ts"

// ---------------------------------------------------------------------------------------------
// Spark type names, for messages
// ---------------------------------------------------------------------------------------------

/** Spark's `DayTimeIntervalType`/`YearMonthIntervalType` field names, by proto field number. */
const DAY_TIME_FIELDS = ["day", "hour", "minute", "second"]
const YEAR_MONTH_FIELDS = ["year", "month"]

const intervalString = (names: ReadonlyArray<string>, start: number | undefined, end: number | undefined): string => {
  const s = names[start ?? 0] ?? names[0]
  const e = names[end ?? start ?? names.length - 1] ?? names[names.length - 1]
  return s === e ? `interval ${s}` : `interval ${s} to ${e}`
}

/**
 * Spark's `DataType.simpleString` of a Spark Connect type (`tinyint`, `decimal(10,2)`,
 * `struct<a:int>`, `variant`), for error messages.
 *
 * @example
 * ```ts
 * import { create } from "@bufbuild/protobuf"
 * import { DataTypeSchema } from "./gen/spark/connect/types_pb.ts"
 * sparkTypeString(create(DataTypeSchema, { kind: { case: "variant", value: {} } })) // "variant"
 * ```
 * @since 0.4.0
 */
export const sparkTypeString = (dt: P.DataType): string => {
  const k = dt.kind
  switch (k.case) {
    case "null":
      return "void"
    case "binary":
    case "boolean":
    case "float":
    case "double":
    case "date":
    case "timestamp":
    case "variant":
      return k.case
    case "byte":
      return "tinyint"
    case "short":
      return "smallint"
    case "integer":
      return "int"
    case "long":
      return "bigint"
    case "decimal":
      return `decimal(${k.value.precision ?? 10},${k.value.scale ?? 0})`
    case "string":
      return k.value.collation === "" || k.value.collation === "UTF8_BINARY"
        ? "string"
        : `string collate ${k.value.collation}`
    case "char":
      return `char(${k.value.length})`
    case "varChar":
      return `varchar(${k.value.length})`
    case "timestampNtz":
      return "timestamp_ntz"
    case "calendarInterval":
      return "interval"
    case "yearMonthInterval":
      return intervalString(YEAR_MONTH_FIELDS, k.value.startField, k.value.endField)
    case "dayTimeInterval":
      return intervalString(DAY_TIME_FIELDS, k.value.startField, k.value.endField)
    case "array":
      return `array<${k.value.elementType === undefined ? "?" : sparkTypeString(k.value.elementType)}>`
    case "struct":
      return `struct<${k.value.fields
        .map((f) => `${f.name}:${f.dataType === undefined ? "?" : sparkTypeString(f.dataType)}`)
        .join(",")}>`
    case "map":
      return `map<${k.value.keyType === undefined ? "?" : sparkTypeString(k.value.keyType)},${
        k.value.valueType === undefined ? "?" : sparkTypeString(k.value.valueType)
      }>`
    case "udt":
      return k.value.jvmClass ?? k.value.pythonClass ?? k.value.type
    case "geometry":
      return `geometry(${k.value.srid})`
    case "geography":
      return `geography(${k.value.srid})`
    case "unparsed":
      return k.value.dataTypeString
    case "time":
      return `time(${k.value.precision ?? 6})`
    case undefined:
      return "unknown"
  }
}

/** The error for a Spark type tributary cannot hold; names the column and the type. */
export const unsupportedTypeError = (column: string, sparkType: string): AnalysisError =>
  new AnalysisError({
    reason: "DataTypeMismatch",
    errorClass: "UNSUPPORTED_DATATYPE",
    message:
      `Column ${column === "" ? "(value)" : `\`${column}\``} has Spark type ${sparkType}, which tributary ` +
      `cannot represent. Cast it in the query to a supported type (for example ` +
      `\`cast(${column === "" ? "col" : column} as string)\`) before it reaches the client.`
  })

const childPath = (path: string, part: string): string => (path === "" ? part : `${path}.${part}`)

// ---------------------------------------------------------------------------------------------
// proto -> tributary
// ---------------------------------------------------------------------------------------------

type Conv = Result.Result<T.DataType, AnalysisError>

const fromSpark = (dt: P.DataType | undefined, path: string): Conv => {
  if (dt === undefined) return Result.fail(unsupportedTypeError(path, "unknown"))
  const k = dt.kind
  switch (k.case) {
    case "null":
      return Result.succeed(T.NullType)
    case "binary":
      return Result.succeed(T.BinaryType)
    case "boolean":
      return Result.succeed(T.BooleanType)
    // tinyint/smallint widen losslessly to int.
    case "byte":
    case "short":
    case "integer":
      return Result.succeed(T.IntegerType)
    case "long":
      return Result.succeed(T.LongType)
    // float widens losslessly; decimal keeps only a double's precision (documented loss).
    case "float":
    case "double":
    case "decimal":
      return Result.succeed(T.DoubleType)
    case "string":
    case "char":
    case "varChar":
      return Result.succeed(T.StringType)
    case "date":
      return Result.succeed(T.DateType)
    // timestamp_ntz: wall-clock micros; with the session time zone at UTC they read as the same
    // instant tributary's timestamp holds.
    case "timestamp":
    case "timestampNtz":
      return Result.succeed(T.TimestampType)
    // ANSI intervals fit Spark's CalendarInterval (months; days + micros), which is what
    // tributary's calendarInterval values are (core/Durations.ts).
    case "calendarInterval":
    case "yearMonthInterval":
    case "dayTimeInterval":
      return Result.succeed(T.CalendarIntervalType)
    case "array": {
      const e = fromSpark(k.value.elementType, childPath(path, "element"))
      return Result.isFailure(e) ? e : Result.succeed(T.array(e.success, k.value.containsNull))
    }
    case "map": {
      const kt = fromSpark(k.value.keyType, childPath(path, "key"))
      if (Result.isFailure(kt)) return kt
      const vt = fromSpark(k.value.valueType, childPath(path, "value"))
      if (Result.isFailure(vt)) return vt
      return Result.succeed(T.map(kt.success, vt.success, k.value.valueContainsNull))
    }
    case "struct": {
      const fields: Array<T.StructField> = []
      for (const f of k.value.fields) {
        const ft = fromSpark(f.dataType, childPath(path, f.name))
        if (Result.isFailure(ft)) return ft
        fields.push(T.field(f.name, ft.success, f.nullable))
      }
      return Result.succeed(T.struct(fields))
    }
    case "unparsed": {
      const parsed = T.parseTypeString(k.value.dataTypeString)
      return parsed === undefined
        ? Result.fail(unsupportedTypeError(path, k.value.dataTypeString))
        : Result.succeed(parsed)
    }
    case "variant":
    case "udt":
    case "geometry":
    case "geography":
    case "time":
    case undefined:
      return Result.fail(unsupportedTypeError(path, sparkTypeString(dt)))
  }
}

/**
 * Maps a Spark Connect `DataType` (as in `ExecutePlanResponse.schema` or `AnalyzePlanResponse`)
 * to tributary's type. Fails with an `AnalysisError` naming the column (`column`, or the nested
 * path inside a struct such as `a.b.element`) and the Spark type when tributary has no
 * counterpart.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * const t = fromSparkType(response.schema!) // Result<T.DataType, AnalysisError>
 * if (Result.isFailure(t)) console.log(t.failure.message)
 * ```
 * @since 0.4.0
 */
export const fromSparkType = (dt: P.DataType, column = ""): Result.Result<T.DataType, AnalysisError> =>
  fromSpark(dt, column)

/**
 * `fromSparkType` for a schema: the type must be a struct (Spark Connect always sends one for a
 * result's schema).
 *
 * @since 0.4.0
 */
export const fromSparkSchema = (dt: P.DataType): Result.Result<T.StructType, AnalysisError> => {
  const r = fromSpark(dt, "")
  if (Result.isFailure(r)) return Result.fail(r.failure)
  return r.success._tag === "struct"
    ? Result.succeed(r.success)
    : Result.fail(
        new AnalysisError({
          reason: "InvalidPlan",
          message: `Spark Connect sent a ${sparkTypeString(dt)} where a struct schema was expected`
        })
      )
}

// ---------------------------------------------------------------------------------------------
// tributary -> proto
// ---------------------------------------------------------------------------------------------

/**
 * Maps tributary's type to Spark Connect's `DataType` message (for casts, literals' types,
 * `Parse`/`LocalRelation` schemas). Total: every tributary type has a Spark type; `timestamp`
 * is Spark's `timestamp` (with local time zone), `calendarInterval` Spark's `interval`.
 *
 * @example
 * ```ts
 * import * as T from "../core/DataType.ts"
 * toSparkType(T.array(T.LongType)).kind.case // "array"
 * ```
 * @since 0.4.0
 */
export const toSparkType = (t: T.DataType): P.DataType => {
  switch (t._tag) {
    case "null":
      return create(P.DataTypeSchema, { kind: { case: "null", value: create(P.DataType_NULLSchema) } })
    case "boolean":
      return create(P.DataTypeSchema, { kind: { case: "boolean", value: create(P.DataType_BooleanSchema) } })
    case "integer":
      return create(P.DataTypeSchema, { kind: { case: "integer", value: create(P.DataType_IntegerSchema) } })
    case "long":
      return create(P.DataTypeSchema, { kind: { case: "long", value: create(P.DataType_LongSchema) } })
    case "double":
      return create(P.DataTypeSchema, { kind: { case: "double", value: create(P.DataType_DoubleSchema) } })
    case "string":
      return create(P.DataTypeSchema, { kind: { case: "string", value: create(P.DataType_StringSchema) } })
    case "binary":
      return create(P.DataTypeSchema, { kind: { case: "binary", value: create(P.DataType_BinarySchema) } })
    case "timestamp":
      return create(P.DataTypeSchema, {
        kind: { case: "timestamp", value: create(P.DataType_TimestampSchema) }
      })
    case "date":
      return create(P.DataTypeSchema, { kind: { case: "date", value: create(P.DataType_DateSchema) } })
    case "calendarInterval":
      return create(P.DataTypeSchema, {
        kind: { case: "calendarInterval", value: create(P.DataType_CalendarIntervalSchema) }
      })
    case "struct":
      return create(P.DataTypeSchema, {
        kind: {
          case: "struct",
          value: create(P.DataType_StructSchema, {
            fields: t.fields.map((f) =>
              create(P.DataType_StructFieldSchema, {
                name: f.name,
                dataType: toSparkType(f.dataType),
                nullable: f.nullable
              })
            )
          })
        }
      })
    case "array":
      return create(P.DataTypeSchema, {
        kind: {
          case: "array",
          value: create(P.DataType_ArraySchema, {
            elementType: toSparkType(t.elementType),
            containsNull: t.containsNull
          })
        }
      })
    case "map":
      return create(P.DataTypeSchema, {
        kind: {
          case: "map",
          value: create(P.DataType_MapSchema, {
            keyType: toSparkType(t.keyType),
            valueType: toSparkType(t.valueType),
            valueContainsNull: t.valueContainsNull
          })
        }
      })
  }
}

// ---------------------------------------------------------------------------------------------
// DDL
// ---------------------------------------------------------------------------------------------

/**
 * Spark's `StructType.toDDL`: `a INT, b STRING NOT NULL, c STRUCT<x: BIGINT>`, as
 * `Read.DataSource.schema` and `LocalRelation.schema` take it. Names that need it are
 * backquoted. DDL cannot say that an array's elements or a map's values are never null; Spark
 * reads those back as nullable.
 *
 * @example
 * ```ts
 * import * as T from "../core/DataType.ts"
 * toDDL(T.struct([T.field("a", T.IntegerType), T.field("my col", T.StringType, false)]))
 * // "a INT,`my col` STRING NOT NULL"
 * ```
 * @since 0.4.0
 */
export const toDDL = (schema: T.StructType): string =>
  schema.fields
    .map((f) => `${T.quoteIfNeeded(f.name)} ${T.sqlTypeName(f.dataType)}${f.nullable ? "" : " NOT NULL"}`)
    .join(",")

// ---------------------------------------------------------------------------------------------
// Arrow -> tributary
// ---------------------------------------------------------------------------------------------

/** Arrow's `Type` ids (apache-arrow's `Type` enum), kept local so this module imports types only. */
const ArrowTypeId = {
  Null: 1,
  Int: 2,
  Float: 3,
  Binary: 4,
  Utf8: 5,
  Bool: 6,
  Decimal: 7,
  Date: 8,
  Timestamp: 10,
  Interval: 11,
  List: 12,
  Struct: 13,
  Map: 17,
  Duration: 18,
  LargeBinary: 19,
  LargeUtf8: 20
} as const

/** Arrow's `TimeUnit.MICROSECOND` and `IntervalUnit` values. */
const MICROSECOND = 2
const YEAR_MONTH = 0
const MONTH_DAY_NANO = 2

/** Spark's name of an Arrow type it would have produced, for error messages. */
const arrowTypeString = (f: arrow.Field): string =>
  f.metadata.get("variant") === "true" ? "variant" : `arrow ${String(f.type)}`

/**
 * The tributary type of an Arrow field as Spark writes it (Spark's `ArrowUtils.fromArrowField`),
 * narrowed like `fromSparkType`; fails naming `path` on an Arrow type with no tributary
 * counterpart (a variant struct, a time, an unsigned integer).
 */
export const fromArrowField = (f: arrow.Field, path: string): Conv => {
  const t = f.type
  const fail = (): Conv => Result.fail(unsupportedTypeError(path, arrowTypeString(f)))
  switch (t.typeId as number) {
    case ArrowTypeId.Null:
      return Result.succeed(T.NullType)
    case ArrowTypeId.Bool:
      return Result.succeed(T.BooleanType)
    case ArrowTypeId.Int: {
      const it = t as arrow.Int
      if (!it.isSigned) return fail()
      return Result.succeed(it.bitWidth === 64 ? T.LongType : T.IntegerType)
    }
    case ArrowTypeId.Float: {
      // Float16 is not something Spark writes.
      return (t as arrow.Float).precision === 0 ? fail() : Result.succeed(T.DoubleType)
    }
    case ArrowTypeId.Decimal:
      return Result.succeed(T.DoubleType)
    case ArrowTypeId.Utf8:
    case ArrowTypeId.LargeUtf8:
      return Result.succeed(T.StringType)
    case ArrowTypeId.Binary:
    case ArrowTypeId.LargeBinary:
      return Result.succeed(T.BinaryType)
    case ArrowTypeId.Date:
      return Result.succeed(T.DateType)
    case ArrowTypeId.Timestamp:
      return (t as arrow.Timestamp).unit === MICROSECOND ? Result.succeed(T.TimestampType) : fail()
    case ArrowTypeId.Interval: {
      const u = (t as arrow.Interval).unit as number
      return u === YEAR_MONTH || u === MONTH_DAY_NANO ? Result.succeed(T.CalendarIntervalType) : fail()
    }
    case ArrowTypeId.Duration:
      return (t as arrow.Duration).unit === MICROSECOND ? Result.succeed(T.CalendarIntervalType) : fail()
    case ArrowTypeId.List: {
      const c = t.children[0]
      const e = fromArrowField(c, childPath(path, "element"))
      return Result.isFailure(e) ? e : Result.succeed(T.array(e.success, c.nullable))
    }
    case ArrowTypeId.Struct: {
      if (f.metadata.get("variant") === "true") return fail()
      const fields: Array<T.StructField> = []
      for (const c of t.children) {
        const ct = fromArrowField(c, childPath(path, c.name))
        if (Result.isFailure(ct)) return ct
        fields.push(T.field(c.name, ct.success, c.nullable))
      }
      return Result.succeed(T.struct(fields))
    }
    case ArrowTypeId.Map: {
      const entries = t.children[0] as arrow.Field<arrow.Struct>
      const [kf, vf] = entries.type.children
      const kt = fromArrowField(kf, childPath(path, "key"))
      if (Result.isFailure(kt)) return kt
      const vt = fromArrowField(vf, childPath(path, "value"))
      if (Result.isFailure(vt)) return vt
      return Result.succeed(T.map(kt.success, vt.success, vf.nullable))
    }
    default:
      return fail()
  }
}

/**
 * The tributary schema of an Arrow schema as Spark writes it (for when only the Arrow data is at
 * hand). Fails, naming the column, on an Arrow type Spark's types do not map to tributary's
 * (a variant column, a time column).
 *
 * @example
 * ```ts
 * import { tableFromIPC } from "apache-arrow"
 * const schema = fromArrowSchema(tableFromIPC(bytes).schema) // Result<T.StructType, AnalysisError>
 * ```
 * @since 0.4.0
 */
export const fromArrowSchema = (schema: arrow.Schema): Result.Result<T.StructType, AnalysisError> => {
  const fields: Array<T.StructField> = []
  for (const f of schema.fields) {
    const t = fromArrowField(f, f.name)
    if (Result.isFailure(t)) return Result.fail(t.failure)
    fields.push(T.field(f.name, t.success, f.nullable))
  }
  return Result.succeed(T.struct(fields))
}
