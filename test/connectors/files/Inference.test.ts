import { describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import {
  canonicalizeJsonType,
  type CsvInferOptions,
  csvInferField,
  javaParseDouble,
  javaParseInt,
  javaParseLong,
  jsonCompatibleRootType,
  jsonCompatibleType,
  NonObjectRecord,
  scalaToBoolean
} from "../../../connectors/files/Inference.ts"

describe("Java number parsing", () => {
  it("Integer.parseInt and Long.parseLong: signs, ranges, no whitespace", () => {
    expect(javaParseInt("+12")).toBe(12)
    // "-0" is the integer 0, not JavaScript's -0 (found by the differential suite against Spark)
    expect(Object.is(javaParseInt("-0"), 0)).toBe(true)
    expect(Object.is(javaParseLong("-0"), 0)).toBe(true)
    expect(javaParseInt("-2147483648")).toBe(-2147483648)
    expect(javaParseInt("2147483648")).toBeNull()
    expect(javaParseInt(" 1")).toBeNull()
    expect(javaParseInt("1.0")).toBeNull()
    expect(javaParseLong("9223372036854775807")).toBe(9223372036854775807n)
    expect(javaParseLong("9223372036854775808")).toBeNull()
  })

  it("Double.parseDouble: trimmed, suffixes, NaN/Infinity, hex; no inf shorthand", () => {
    expect(javaParseDouble(" 1.5 ")).toBe(1.5)
    expect(javaParseDouble("1.")).toBe(1)
    expect(javaParseDouble(".5")).toBe(0.5)
    expect(javaParseDouble("2d")).toBe(2)
    expect(javaParseDouble("-Infinity")).toBe(-Infinity)
    expect(Number.isNaN(javaParseDouble("NaN"))).toBe(true)
    expect(javaParseDouble("0x1p3")).toBe(8)
    expect(javaParseDouble("inf")).toBeNull()
    expect(javaParseDouble("1e")).toBeNull()
    expect(javaParseDouble("")).toBeNull()
  })

  it("Scala toBoolean: true/false in any case only", () => {
    expect(scalaToBoolean("TRUE")).toBe(true)
    expect(scalaToBoolean("False")).toBe(false)
    expect(scalaToBoolean("1")).toBeNull()
    expect(scalaToBoolean("yes")).toBeNull()
  })
})

const csv: CsvInferOptions = {
  nullValue: "",
  nanValue: "NaN",
  positiveInf: "Inf",
  negativeInf: "-Inf",
  preferDate: true,
  isDate: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s),
  isTimestamp: (s) => /^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}:\d{2})?$/.test(s),
  datesWidenToTimestamp: true
}
const infer = (values: ReadonlyArray<string | null>, o: CsvInferOptions = csv): string =>
  T.simpleString(values.reduce<T.DataType>((t, v) => csvInferField(o, t, v), T.NullType))

describe("CSVInferSchema", () => {
  it("tries int, long, double, date, timestamp, boolean, string in order", () => {
    expect(infer(["1", "2"])).toBe("int")
    expect(infer(["1", "3000000000"])).toBe("bigint")
    expect(infer(["1", "1.5"])).toBe("double")
    expect(infer(["NaN", "Inf"])).toBe("double")
    expect(infer(["2020-01-01"])).toBe("date")
    expect(infer(["2020-01-01", "2020-01-01 10:00:00"])).toBe("timestamp")
    expect(infer(["true", "FALSE"])).toBe("boolean")
    expect(infer(["x"])).toBe("string")
  })

  it("skips nulls and empty values, and falls to string on mixtures", () => {
    expect(infer([null, "", "1"])).toBe("int")
    expect(infer([])).toBe("void")
    expect(infer(["1", "true"])).toBe("string")
    expect(infer(["true", "1"])).toBe("string")
    expect(infer(["1", "2020-01-01"])).toBe("string")
    expect(infer(["2020-01-01", "2020-01-01 10:00:00"], { ...csv, datesWidenToTimestamp: false })).toBe("string")
  })

  it("goes straight to timestamp without preferDate", () => {
    expect(infer(["2020-01-01"], { ...csv, preferDate: false })).toBe("timestamp")
  })
})

describe("JsonInferSchema", () => {
  const s = (fields: Array<[string, T.DataType]>) => T.struct(fields.map(([n, t]) => T.field(n, t)))

  it("merges structs by sorted field names and widens conflicts", () => {
    const merged = jsonCompatibleType(
      s([
        ["a", T.LongType],
        ["c", T.StringType]
      ]),
      s([
        ["a", T.DoubleType],
        ["b", T.BooleanType]
      ])
    )
    expect(T.simpleString(merged)).toBe("struct<a:double,b:boolean,c:string>")
    expect(jsonCompatibleType(T.LongType, T.BooleanType)).toEqual(T.StringType)
    expect(jsonCompatibleType(T.array(T.LongType), T.array(T.NullType))).toEqual(T.array(T.LongType))
    expect(jsonCompatibleType(T.array(T.LongType), s([["a", T.LongType]]))).toEqual(T.StringType)
  })

  it("adds, ignores or refuses non-object records at the root", () => {
    const root = s([["a", T.LongType]])
    expect(T.simpleString(jsonCompatibleRootType(root, T.LongType, "_corrupt_record", "addCorruptField"))).toBe(
      "struct<_corrupt_record:string,a:bigint>"
    )
    expect(jsonCompatibleRootType(root, T.LongType, "_corrupt_record", "ignore")).toEqual(root)
    expect(() => jsonCompatibleRootType(root, T.LongType, "_corrupt_record", "fail")).toThrow(NonObjectRecord)
    expect(jsonCompatibleRootType(root, T.array(s([["b", T.LongType]])), "x", "fail")).toEqual(
      s([
        ["a", T.LongType],
        ["b", T.LongType]
      ])
    )
  })

  it("canonicalizes null to string and removes empty structs", () => {
    expect(
      canonicalizeJsonType(
        s([
          ["a", T.NullType],
          ["b", s([])],
          ["", T.LongType]
        ]),
        false
      )
    ).toEqual(s([["a", T.StringType]]))
    expect(canonicalizeJsonType(s([["a", T.NullType]]), true)).toBeUndefined()
  })
})
