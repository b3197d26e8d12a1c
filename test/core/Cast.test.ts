import { describe, expect, it } from "vitest"
import { canCast, castFunction, forceNullable } from "../../core/Cast.ts"
import * as T from "../../core/DataType.ts"

const cast = (from: T.DataType, to: T.DataType, v: unknown): unknown => castFunction(from, to)(v)
const ms = (iso: string): number => Date.parse(iso)
const day = (iso: string): number => Date.parse(`${iso}T00:00:00Z`) / 86_400_000

describe("Cast: string to numbers (Spark non-ANSI: invalid gives null)", () => {
  it.each([
    ["123", 123],
    [" 12 ", 12],
    ["\t-7\n", -7],
    ["+5", 5],
    ["1.9", 1],
    ["-1.9", -1],
    ["1.", 1],
    [".5", 0],
    ["2147483647", 2147483647],
    ["-2147483648", -2147483648],
    ["2147483648", null],
    ["1e3", null],
    ["1.5x", null],
    ["x", null],
    ["", null],
    ["+", null],
    ["1 2", null]
  ])("cast('%s' as int) = %s", (s, expected) => {
    expect(cast(T.StringType, T.IntegerType, s)).toBe(expected)
  })

  it.each([
    // Long.MaxValue and Long.MinValue, exact (bigints beyond 2^53)
    ["9223372036854775807", 9223372036854775807n],
    ["-9223372036854775808", -9223372036854775808n],
    ["9223372036854775808", null],
    ["12345678901", 12345678901],
    ["-3.99", -3]
  ])("cast('%s' as bigint) = %s", (s, expected) => {
    expect(cast(T.StringType, T.LongType, s)).toBe(expected)
  })

  it.each([
    ["1.5", 1.5],
    [" 2 ", 2],
    ["1e3", 1000],
    ["-1.5E-2", -0.015],
    [".5", 0.5],
    ["1.5d", 1.5],
    ["2f", 2],
    ["Infinity", Infinity],
    ["-Infinity", -Infinity],
    ["inf", Infinity],
    ["+INF", Infinity],
    ["-inf", -Infinity],
    ["abc", null],
    ["", null],
    ["1,5", null]
  ])("cast('%s' as double) = %s", (s, expected) => {
    expect(cast(T.StringType, T.DoubleType, s)).toBe(expected)
  })

  it("NaN strings become NaN", () => {
    expect(cast(T.StringType, T.DoubleType, "NaN")).toBeNaN()
    expect(cast(T.StringType, T.DoubleType, "nan")).toBeNaN()
  })
})

describe("Cast: between numbers (Java semantics)", () => {
  it.each([
    [1.9, 1],
    [-1.9, -1],
    [Number.NaN, 0],
    [1e10, 2147483647],
    [-1e10, -2147483648],
    [Infinity, 2147483647],
    [-0.5, 0]
  ])("cast(%s as int) = %s (truncates, saturates, NaN is 0)", (d, expected) => {
    expect(Object.is(cast(T.DoubleType, T.IntegerType, d), expected)).toBe(true)
  })

  it("double to bigint saturates", () => {
    expect(cast(T.DoubleType, T.LongType, 1e19)).toBe(9223372036854775807n)
    expect(cast(T.DoubleType, T.LongType, -1e19)).toBe(-9223372036854775808n)
    expect(cast(T.DoubleType, T.LongType, 12.7)).toBe(12)
  })

  it("bigint to int keeps the low 32 bits", () => {
    expect(cast(T.LongType, T.IntegerType, 2147483648)).toBe(-2147483648)
    expect(cast(T.LongType, T.IntegerType, 4294967297)).toBe(1)
    expect(cast(T.LongType, T.IntegerType, -1)).toBe(-1)
  })

  it("int widens to bigint and double unchanged", () => {
    expect(cast(T.IntegerType, T.LongType, 7)).toBe(7)
    expect(cast(T.IntegerType, T.DoubleType, 7)).toBe(7)
  })

  it("booleans and numbers", () => {
    expect(cast(T.BooleanType, T.IntegerType, true)).toBe(1)
    expect(cast(T.BooleanType, T.DoubleType, false)).toBe(0)
    expect(cast(T.IntegerType, T.BooleanType, 0)).toBe(false)
    expect(cast(T.IntegerType, T.BooleanType, -3)).toBe(true)
    expect(cast(T.DoubleType, T.BooleanType, Number.NaN)).toBe(true)
  })
})

describe("Cast: to string", () => {
  it.each([
    [1.0, "1.0"],
    [0.1, "0.1"],
    [-2.5, "-2.5"],
    [1e10, "1.0E10"],
    [1.0e-5, "1.0E-5"],
    [123456789.0, "1.23456789E8"],
    [1234567.0, "1234567.0"],
    [0.001, "0.001"],
    [-0.0, "-0.0"],
    [Number.NaN, "NaN"],
    [Infinity, "Infinity"],
    // issue #21 deviation 10: Double.toString(Double.MIN_VALUE) is "4.9E-324"
    [5e-324, "4.9E-324"],
    [-5e-324, "-4.9E-324"],
    [1e-10, "1.0E-10"],
    [2e22, "2.0E22"]
  ])("cast(%s as string) = %s (Java's Double.toString)", (d, expected) => {
    expect(cast(T.DoubleType, T.StringType, d)).toBe(expected)
  })

  // issue #21 deviation 3: Spark's non-ANSI cast of a timestamp to int is null when the
  // seconds do not fit an int (Cast.castToInt: `if (longValue == longValue.toInt) ... else null`)
  it("cast(ts as int) is null when the seconds overflow an int", () => {
    expect(cast(T.TimestampType, T.IntegerType, Date.UTC(2039, 0, 1))).toBe(null)
    expect(cast(T.TimestampType, T.IntegerType, Date.UTC(1901, 0, 1))).toBe(null)
    expect(cast(T.TimestampType, T.IntegerType, Date.UTC(2038, 0, 1))).toBe(Date.UTC(2038, 0, 1) / 1000)
    expect(cast(T.TimestampType, T.IntegerType, -1)).toBe(-1)
    expect(forceNullable(T.TimestampType, T.IntegerType)).toBe(true)
  })

  it("ints, booleans, dates, timestamps", () => {
    expect(cast(T.IntegerType, T.StringType, -12)).toBe("-12")
    expect(cast(T.BooleanType, T.StringType, true)).toBe("true")
    expect(cast(T.DateType, T.StringType, day("2024-01-02"))).toBe("2024-01-02")
    expect(cast(T.DateType, T.StringType, day("0001-01-01"))).toBe("0001-01-01")
    expect(cast(T.TimestampType, T.StringType, ms("2024-01-02T03:04:05Z"))).toBe("2024-01-02 03:04:05")
    expect(cast(T.TimestampType, T.StringType, ms("2024-01-02T03:04:05.500Z"))).toBe("2024-01-02 03:04:05.5")
    expect(cast(T.TimestampType, T.StringType, ms("2024-01-02T03:04:05.123Z"))).toBe("2024-01-02 03:04:05.123")
    expect(cast(T.TimestampType, T.StringType, ms("1969-12-31T23:59:59.990Z"))).toBe("1969-12-31 23:59:59.99")
  })

  it("arrays, structs and maps print as Spark 3+ does", () => {
    expect(cast(T.array(T.IntegerType), T.StringType, [1, 2, null])).toBe("[1, 2, null]")
    expect(cast(T.array(T.DoubleType), T.StringType, [])).toBe("[]")
    const st = T.struct([T.field("a", T.IntegerType), T.field("b", T.StringType)])
    expect(cast(st, T.StringType, [1, "x"])).toBe("{1, x}")
    expect(cast(st, T.StringType, [null, "x"])).toBe("{null, x}")
    expect(
      cast(
        T.map(T.StringType, T.IntegerType),
        T.StringType,
        new Map([
          ["a", 1],
          ["b", null]
        ])
      )
    ).toBe("{a -> 1, b -> null}")
  })

  it("binary decodes as UTF-8", () => {
    expect(cast(T.BinaryType, T.StringType, new TextEncoder().encode("héllo"))).toBe("héllo")
  })
})

describe("Cast: booleans from strings", () => {
  it.each(["t", "true", "y", "yes", "1", " TRUE ", "Yes"])("'%s' is true", (s) => {
    expect(cast(T.StringType, T.BooleanType, s)).toBe(true)
  })
  it.each(["f", "false", "n", "no", "0", "FALSE"])("'%s' is false", (s) => {
    expect(cast(T.StringType, T.BooleanType, s)).toBe(false)
  })
  it.each(["maybe", "", "2", "tru"])("'%s' is null", (s) => {
    expect(cast(T.StringType, T.BooleanType, s)).toBe(null)
  })
})

describe("Cast: dates and timestamps", () => {
  it.each([
    ["2024-01-02", "2024-01-02T00:00:00Z"],
    ["2024", "2024-01-01T00:00:00Z"],
    ["2024-03", "2024-03-01T00:00:00Z"],
    ["2024-1-2 3:4:5", "2024-01-02T03:04:05Z"],
    ["2024-01-02 03:04:05", "2024-01-02T03:04:05Z"],
    ["2024-01-02T03:04:05", "2024-01-02T03:04:05Z"],
    ["2024-01-02 03:04:05.123456", "2024-01-02T03:04:05.123Z"],
    ["2024-01-02 03:04:05.5", "2024-01-02T03:04:05.500Z"],
    ["2024-01-02T03:04:05Z", "2024-01-02T03:04:05Z"],
    ["2024-01-02T03:04:05+01:00", "2024-01-02T02:04:05Z"],
    ["2024-01-02 03:04:05 UTC", "2024-01-02T03:04:05Z"],
    ["2024-01-02T03:04:05-0800", "2024-01-02T11:04:05Z"],
    ["2024-01-02 03:04", "2024-01-02T03:04:00Z"],
    ["  2024-01-02 03:04:05  ", "2024-01-02T03:04:05Z"],
    ["2024-07-01T12:00:00 Europe/Paris", "2024-07-01T10:00:00Z"]
  ])("cast('%s' as timestamp)", (s, iso) => {
    expect(cast(T.StringType, T.TimestampType, s)).toBe(ms(iso))
  })

  // issue #21 deviation 8: Spark's stringToTimestamp reads a string starting with `T`, or whose
  // first segment ends at `:`, as a time on the current date (the query's current time here)
  it.each([
    ["10:00:00", "2024-01-15T10:00:00Z"],
    ["T10:00:00", "2024-01-15T10:00:00Z"],
    ["T10:00:00.25", "2024-01-15T10:00:00.250Z"],
    ["9:30", "2024-01-15T09:30:00Z"],
    ["T10:00:00+01:00", "2024-01-15T09:00:00Z"]
  ])("cast('%s' as timestamp) is today at that time", (s, iso) => {
    const now = Date.parse("2024-01-15T18:45:00Z")
    expect(castFunction(T.StringType, T.TimestampType, now)(s)).toBe(ms(iso))
  })

  it.each(["T", "25:00:00", "T10:61", "10:00:00x"])("cast('%s' as timestamp) with a bad time is null", (s) => {
    expect(castFunction(T.StringType, T.TimestampType, Date.parse("2024-01-15T18:45:00Z"))(s)).toBe(null)
  })

  it.each(["abc", "", "2024-02-30", "2024-13-01", "2024-01-02 25:00:00", "2024-01-02 10:61", "20240102", "24-01-02"])(
    "cast('%s' as timestamp) is null",
    (s) => {
      expect(cast(T.StringType, T.TimestampType, s)).toBe(null)
    }
  )

  it.each([
    ["2024-01-02", "2024-01-02"],
    ["2024-1-2", "2024-01-02"],
    ["2024", "2024-01-01"],
    ["2024-02", "2024-02-01"],
    ["2024-02-29", "2024-02-29"],
    ["2024-01-02 anything", "2024-01-02"],
    ["2024-01-02T10:00:00", "2024-01-02"]
  ])("cast('%s' as date)", (s, iso) => {
    expect(cast(T.StringType, T.DateType, s)).toBe(day(iso))
  })

  it.each(["2023-02-29", "x", "2024-01-02x", "2024-00-01"])("cast('%s' as date) is null", (s) => {
    expect(cast(T.StringType, T.DateType, s)).toBe(null)
  })

  it("timestamps and numbers: seconds, flooring", () => {
    expect(cast(T.TimestampType, T.LongType, 1500)).toBe(1)
    expect(cast(T.TimestampType, T.LongType, -1500)).toBe(-2)
    expect(cast(T.TimestampType, T.IntegerType, 1500)).toBe(1)
    expect(cast(T.TimestampType, T.DoubleType, 1500)).toBe(1.5)
    expect(cast(T.LongType, T.TimestampType, 1)).toBe(1000)
    expect(cast(T.IntegerType, T.TimestampType, -2)).toBe(-2000)
    expect(cast(T.DoubleType, T.TimestampType, 1.5)).toBe(1500)
    expect(cast(T.DoubleType, T.TimestampType, Number.NaN)).toBe(null)
    expect(cast(T.DoubleType, T.TimestampType, Infinity)).toBe(null)
    expect(cast(T.TimestampType, T.BooleanType, 0)).toBe(false)
  })

  it("dates and timestamps convert at UTC midnight", () => {
    expect(cast(T.DateType, T.TimestampType, day("2024-01-02"))).toBe(ms("2024-01-02T00:00:00Z"))
    expect(cast(T.TimestampType, T.DateType, ms("2024-01-02T23:59:59Z"))).toBe(day("2024-01-02"))
    expect(cast(T.TimestampType, T.DateType, ms("1969-12-31T23:00:00Z"))).toBe(-1)
  })

  it("a date to a number or boolean is null (Hive's rule, kept by Spark)", () => {
    expect(cast(T.DateType, T.IntegerType, 10)).toBe(null)
    expect(cast(T.DateType, T.LongType, 10)).toBe(null)
    expect(cast(T.DateType, T.DoubleType, 10)).toBe(null)
    expect(cast(T.DateType, T.BooleanType, 10)).toBe(null)
  })
})

describe("Cast: nested and binary", () => {
  it("arrays element-wise, nulls kept", () => {
    expect(cast(T.array(T.StringType), T.array(T.IntegerType), ["1", "x", null])).toEqual([1, null, null])
  })

  it("structs field by field", () => {
    const from = T.struct([T.field("a", T.StringType), T.field("b", T.IntegerType)])
    const to = T.struct([T.field("a", T.IntegerType), T.field("b", T.StringType)])
    expect(cast(from, to, ["5", 6])).toEqual([5, "6"])
  })

  it("maps key and value", () => {
    expect(cast(T.map(T.StringType, T.StringType), T.map(T.StringType, T.IntegerType), new Map([["a", "1"]]))).toEqual(
      new Map([["a", 1]])
    )
  })

  it("integral to binary is big-endian", () => {
    expect(cast(T.IntegerType, T.BinaryType, 1)).toEqual(new Uint8Array([0, 0, 0, 1]))
    expect(cast(T.LongType, T.BinaryType, -1)).toEqual(new Uint8Array([255, 255, 255, 255, 255, 255, 255, 255]))
    expect(cast(T.StringType, T.BinaryType, "Sp")).toEqual(new Uint8Array([83, 112]))
  })

  it("null in gives null out, and null type casts to anything", () => {
    expect(cast(T.StringType, T.IntegerType, null)).toBe(null)
    expect(cast(T.NullType, T.IntegerType, null)).toBe(null)
    expect(cast(T.NullType, T.array(T.StringType), null)).toBe(null)
  })
})

describe("canCast and forceNullable", () => {
  it.each([
    [T.StringType, T.IntegerType, true],
    [T.IntegerType, T.StringType, true],
    [T.DateType, T.IntegerType, true],
    [T.TimestampType, T.LongType, true],
    [T.BooleanType, T.TimestampType, true],
    [T.DateType, T.BinaryType, false],
    [T.DoubleType, T.BinaryType, false],
    [T.IntegerType, T.DateType, false],
    [T.BooleanType, T.DateType, false],
    [T.array(T.StringType), T.array(T.IntegerType), true],
    [T.array(T.StringType), T.IntegerType, false],
    [T.NullType, T.struct([]), true],
    [T.struct([T.field("a", T.IntegerType)]), T.struct([T.field("x", T.StringType)]), true],
    [T.struct([T.field("a", T.IntegerType)]), T.struct([]), false]
  ])("canCast(%o, %o) = %s", (from, to, expected) => {
    expect(canCast(from, to)).toBe(expected)
  })

  it("forceNullable follows Spark", () => {
    expect(forceNullable(T.StringType, T.IntegerType)).toBe(true)
    expect(forceNullable(T.StringType, T.BinaryType)).toBe(false)
    expect(forceNullable(T.IntegerType, T.StringType)).toBe(false)
    expect(forceNullable(T.DoubleType, T.TimestampType)).toBe(true)
    expect(forceNullable(T.TimestampType, T.DateType)).toBe(false)
    expect(forceNullable(T.DateType, T.IntegerType)).toBe(true)
    expect(forceNullable(T.IntegerType, T.LongType)).toBe(false)
  })

  it("an unsupported cast is a defect", () => {
    expect(() => castFunction(T.DateType, T.BinaryType)).toThrow(/not supported/)
  })
})
