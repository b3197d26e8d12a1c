/**
 * The type mapping of the Spark Connect backend (connect/Types.ts): tributary types to and from
 * Spark Connect's `DataType` message, DDL strings Spark parses back to the same schema, Arrow
 * schemas, and unsupported Spark types refused with the column's name.
 */
import { create } from "@bufbuild/protobuf"
import * as arrow from "apache-arrow"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { encodeRows } from "../../connect/Arrow.ts"
import { LocalRelationSchema, RelationSchema } from "../../connect/gen/spark/connect/relations_pb.ts"
import * as P from "../../connect/gen/spark/connect/types_pb.ts"
import { fromArrowSchema, fromSparkSchema, fromSparkType, sparkTypeString, toDDL, toSparkType } from "../../connect/Types.ts"
import * as T from "../../core/DataType.ts"
import { quoteIfNeeded, sqlTypeName as toSqlType } from "../../core/DataType.ts"
import { execute, rawClient, sparkRemote, sqlRelation } from "./rawClient.ts"

const ok = <A, E>(r: Result.Result<A, E>): A => {
  if (Result.isFailure(r)) throw new Error(`expected success, got ${String(r.failure)}`)
  return r.success
}

const failure = <A, E>(r: Result.Result<A, E>): E => {
  if (Result.isSuccess(r)) throw new Error("expected a failure")
  return r.failure
}

/** A proto `DataType` of one simple kind. */
const simple = (kind: P.DataType["kind"]): P.DataType => create(P.DataTypeSchema, { kind })

const protoStruct = (fields: ReadonlyArray<[string, P.DataType, boolean]>): P.DataType =>
  simple({
    case: "struct",
    value: create(P.DataType_StructSchema, {
      fields: fields.map(([name, dataType, nullable]) =>
        create(P.DataType_StructFieldSchema, { name, dataType, nullable })
      )
    })
  })

const EVERY_TYPE = T.struct([
  T.field("n", T.NullType),
  T.field("bo", T.BooleanType, false),
  T.field("i", T.IntegerType),
  T.field("l", T.LongType),
  T.field("d", T.DoubleType),
  T.field("s", T.StringType),
  T.field("b", T.BinaryType),
  T.field("ts", T.TimestampType),
  T.field("dt", T.DateType),
  T.field("iv", T.CalendarIntervalType),
  T.field("st", T.struct([T.field("x", T.LongType, false), T.field("y", T.StringType)])),
  T.field("ar", T.array(T.IntegerType, false)),
  T.field("m", T.map(T.StringType, T.array(T.DateType), false))
])

describe("toSparkType / fromSparkType", () => {
  it("round-trips every tributary type, nullability included", () => {
    const proto = toSparkType(EVERY_TYPE)
    expect(proto.kind.case).toBe("struct")
    expect(ok(fromSparkType(proto))).toEqual(EVERY_TYPE)
    expect(ok(fromSparkSchema(proto))).toEqual(EVERY_TYPE)
    expect(sparkTypeString(proto)).toBe(
      "struct<n:void,bo:boolean,i:int,l:bigint,d:double,s:string,b:binary,ts:timestamp,dt:date,iv:interval," +
        "st:struct<x:bigint,y:string>,ar:array<int>,m:map<string,array<date>>>"
    )
  })

  it("narrows Spark's other types to tributary's", () => {
    const cases: ReadonlyArray<[P.DataType["kind"], T.DataType, string]> = [
      [{ case: "byte", value: create(P.DataType_ByteSchema) }, T.IntegerType, "tinyint"],
      [{ case: "short", value: create(P.DataType_ShortSchema) }, T.IntegerType, "smallint"],
      [{ case: "float", value: create(P.DataType_FloatSchema) }, T.DoubleType, "float"],
      [
        { case: "decimal", value: create(P.DataType_DecimalSchema, { precision: 10, scale: 2 }) },
        T.DoubleType,
        "decimal(10,2)"
      ],
      [{ case: "decimal", value: create(P.DataType_DecimalSchema) }, T.DoubleType, "decimal(10,0)"],
      [{ case: "char", value: create(P.DataType_CharSchema, { length: 3 }) }, T.StringType, "char(3)"],
      [{ case: "varChar", value: create(P.DataType_VarCharSchema, { length: 9 }) }, T.StringType, "varchar(9)"],
      [
        { case: "string", value: create(P.DataType_StringSchema, { collation: "UTF8_LCASE" }) },
        T.StringType,
        "string collate UTF8_LCASE"
      ],
      [{ case: "timestampNtz", value: create(P.DataType_TimestampNTZSchema) }, T.TimestampType, "timestamp_ntz"],
      [
        { case: "dayTimeInterval", value: create(P.DataType_DayTimeIntervalSchema, { startField: 0, endField: 3 }) },
        T.CalendarIntervalType,
        "interval day to second"
      ],
      [
        {
          case: "yearMonthInterval",
          value: create(P.DataType_YearMonthIntervalSchema, { startField: 0, endField: 0 })
        },
        T.CalendarIntervalType,
        "interval year"
      ],
      [
        { case: "unparsed", value: create(P.DataType_UnparsedSchema, { dataTypeString: "array<bigint>" }) },
        T.array(T.LongType),
        "array<bigint>"
      ]
    ]
    for (const [kind, expected, name] of cases) {
      const dt = simple(kind)
      expect(ok(fromSparkType(dt))).toEqual(expected)
      expect(sparkTypeString(dt)).toBe(name)
    }
  })

  it("refuses types tributary cannot hold, naming the column path and the Spark type", () => {
    const variant = simple({ case: "variant", value: create(P.DataType_VariantSchema) })
    const time = simple({ case: "time", value: create(P.DataType_TimeSchema, { precision: 6 }) })
    const geo = simple({ case: "geometry", value: create(P.DataType_GeometrySchema, { srid: 4326 }) })
    const schema = protoStruct([
      ["a", toSparkType(T.LongType), true],
      [
        "s",
        protoStruct([
          ["inner", simple({ case: "array", value: create(P.DataType_ArraySchema, { elementType: variant }) }), true]
        ]),
        true
      ]
    ])
    const e = failure(fromSparkSchema(schema))
    expect(e._tag).toBe("AnalysisError")
    expect(e.reason).toBe("DataTypeMismatch")
    expect(e.errorClass).toBe("UNSUPPORTED_DATATYPE")
    expect(e.message).toContain("`s.inner.element`")
    expect(e.message).toContain("variant")
    expect(failure(fromSparkType(time, "clock")).message).toContain("Column `clock` has Spark type time(6)")
    expect(failure(fromSparkType(geo, "g")).message).toContain("geometry(4326)")
    expect(
      failure(
        fromSparkType(
          simple({ case: "unparsed", value: create(P.DataType_UnparsedSchema, { dataTypeString: "wat<>" }) }),
          "u"
        )
      ).message
    ).toContain("wat<>")
    expect(failure(fromSparkSchema(toSparkType(T.LongType))).reason).toBe("InvalidPlan")
  })
})

describe("toDDL", () => {
  it("writes Spark's StructType.toDDL form", () => {
    expect(toDDL(EVERY_TYPE)).toBe(
      "n VOID,bo BOOLEAN NOT NULL,i INT,l BIGINT,d DOUBLE,s STRING,b BINARY,ts TIMESTAMP,dt DATE,iv INTERVAL," +
        "st STRUCT<x: BIGINT NOT NULL, y: STRING>,ar ARRAY<INT>,m MAP<STRING, ARRAY<DATE>>"
    )
    expect(toSqlType(T.struct([]))).toBe("STRUCT<>")
  })

  it("backquotes the names that need it, doubling inner backquotes", () => {
    expect(quoteIfNeeded("abc_1")).toBe("abc_1")
    expect(quoteIfNeeded("1abc")).toBe("1abc")
    expect(quoteIfNeeded("123")).toBe("`123`")
    expect(quoteIfNeeded("my col")).toBe("`my col`")
    expect(quoteIfNeeded("a.b")).toBe("`a.b`")
    expect(quoteIfNeeded("we`ird")).toBe("`we``ird`")
    expect(quoteIfNeeded("")).toBe("``")
    expect(toDDL(T.struct([T.field("my col", T.struct([T.field("x:y", T.IntegerType)]))]))).toBe(
      "`my col` STRUCT<`x:y`: INT>"
    )
  })

  it("is parsed by Spark back to the same schema (a LocalRelation with only a schema)", async () => {
    const schema = T.struct([
      ...EVERY_TYPE.fields.filter((f) => f.name !== "ar" && f.name !== "m"),
      T.field("ar", T.array(T.IntegerType)),
      T.field("m", T.map(T.StringType, T.array(T.DateType))),
      T.field("my col", T.LongType),
      T.field("we`ird", T.struct([T.field("a.b", T.IntegerType, false), T.field("123", T.StringType)])),
      T.field("select", T.IntegerType),
      T.field("ünï", T.StringType)
    ])
    const c = rawClient(sparkRemote())
    const rel = create(RelationSchema, {
      relType: { case: "localRelation", value: create(LocalRelationSchema, { schema: toDDL(schema) }) }
    })
    const r = await execute(c, rel)
    expect(ok(fromSparkSchema(r.schema!))).toEqual(schema)
  })
})

describe("against a real Spark Connect server", () => {
  it("refuses a variant column of a real result with the column's name", async () => {
    const r = await execute(rawClient(sparkRemote()), sqlRelation("select 1 a, named_struct('v', parse_json('1')) s"))
    const e = failure(fromSparkSchema(r.schema!))
    expect(e.message).toContain("Column `s.v` has Spark type variant")
  })
})

describe("fromArrowSchema", () => {
  it("reads the schema encodeRows writes back to the same tributary schema", () => {
    const t = arrow.tableFromIPC(encodeRows(EVERY_TYPE, []))
    expect(ok(fromArrowSchema(t.schema))).toEqual(EVERY_TYPE)
  })

  it("maps Spark's other Arrow types and refuses the rest", () => {
    const schema = new arrow.Schema([
      new arrow.Field("a", new arrow.Int8(), false),
      new arrow.Field("b", new arrow.Int16(), true),
      new arrow.Field("c", new arrow.Float32(), true),
      new arrow.Field("d", new arrow.Decimal(2, 10, 128), true),
      new arrow.Field("e", new arrow.TimestampMicrosecond(), true),
      new arrow.Field("f", new arrow.DurationMicrosecond(), true),
      new arrow.Field("g", new arrow.IntervalYearMonth(), true),
      new arrow.Field("h", new arrow.LargeUtf8(), true)
    ])
    expect(ok(fromArrowSchema(schema))).toEqual(
      T.struct([
        T.field("a", T.IntegerType, false),
        T.field("b", T.IntegerType),
        T.field("c", T.DoubleType),
        T.field("d", T.DoubleType),
        T.field("e", T.TimestampType),
        T.field("f", T.CalendarIntervalType),
        T.field("g", T.CalendarIntervalType),
        T.field("h", T.StringType)
      ])
    )
    const variant = new arrow.Field(
      "v",
      new arrow.Struct([
        new arrow.Field("value", new arrow.Binary(), false),
        new arrow.Field("metadata", new arrow.Binary(), false)
      ]),
      true,
      new Map([["variant", "true"]])
    )
    expect(failure(fromArrowSchema(new arrow.Schema([variant]))).message).toContain("Column `v` has Spark type variant")
    expect(failure(fromArrowSchema(new arrow.Schema([new arrow.Field("u", new arrow.Uint32())]))).message).toContain(
      "`u`"
    )
    expect(
      failure(fromArrowSchema(new arrow.Schema([new arrow.Field("t", new arrow.TimestampMillisecond("UTC"))]))).message
    ).toContain("`t`")
  })
})
