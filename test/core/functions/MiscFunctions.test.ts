// Expected values are the `examples` of Spark's ExpressionDescription annotations
// (sql/catalyst/.../expressions/hash.scala, nullExpressions.scala) unless noted.
import { describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import { attribute, literal } from "../../../core/Expression.ts"
import { nullableOf } from "../../../core/Compile.ts"
import { arr, call, date, dbl, fn, lit, long, resolveError, str, ts, typeOf } from "./support.ts"

describe("null handling", () => {
  it("coalesce, nvl, ifnull, nvl2, nullif", () => {
    expect(fn("coalesce", lit(null), lit(1), lit(null))).toBe(1)
    expect(fn("coalesce", lit(null), lit(null))).toBe(null)
    expect(typeOf("coalesce", lit(1), long(2))).toBe("bigint")
    expect(fn("coalesce", lit(1), long(2))).toBe(1)
    expect(fn("nvl", lit(null), arr(T.StringType, ["2"]))).toEqual(["2"])
    expect(fn("ifnull", lit(null), arr(T.StringType, ["2"]))).toEqual(["2"])
    expect(fn("nvl2", lit(null), lit(2), lit(1))).toBe(1)
    expect(fn("nvl2", lit(0), lit(2), lit(1))).toBe(2)
    expect(fn("nullif", lit(2), lit(2))).toBe(null)
    expect(fn("nullif", lit(2), lit(3))).toBe(2)
    expect(fn("nullif", lit(2), dbl(2.0))).toBe(null)
    expect(typeOf("nullif", lit(2), dbl(2.0))).toBe("int")
    expect(resolveError("coalesce", lit(1), arr(T.IntegerType, [1]))).toMatch(/DATA_DIFF_TYPES/)
  })

  it("coalesce is nullable only when every argument is", () => {
    const a = attribute("a", T.IntegerType, false)
    const n = attribute("n", T.IntegerType, true)
    expect(nullableOf(call("coalesce", n, a))).toBe(false)
    expect(nullableOf(call("coalesce", n, n))).toBe(true)
  })

  it("isnull and isnotnull", () => {
    expect(fn("isnull", lit(null))).toBe(true)
    expect(fn("isnotnull", lit(1))).toBe(true)
  })
})

describe("hashing (bit-exact with Spark)", () => {
  it("hash is Murmur3 with seed 42, chained over the arguments", () => {
    expect(fn("hash", lit("Spark"), arr(T.IntegerType, [123]), lit(2))).toBe(-1321691492)
    expect(typeOf("hash", lit(1))).toBe("int")
  })

  it("hash of each type as Spark hashes its internal form", () => {
    // values from Spark 4: SELECT hash(1), hash(1L), hash(null), hash(true), hash(1.0D), hash('')
    expect(fn("hash", lit(1))).toBe(-559580957)
    expect(fn("hash", long(1))).toBe(-1712319331)
    expect(fn("hash", lit(null))).toBe(42)
    expect(fn("hash", lit(true))).toBe(-559580957)
    expect(fn("hash", dbl(1.0))).toBe(-460888942)
    expect(fn("hash", lit(""))).toBe(142593372)
    // -0.0 hashes as 0.0
    expect(fn("hash", dbl(-0.0))).toBe(fn("hash", dbl(0.0)))
    // a date hashes as its day number, a timestamp as microseconds
    expect(fn("hash", date("1970-01-02"))).toBe(fn("hash", lit(1)))
    expect(fn("hash", ts("1970-01-01 00:00:00.001"))).toBe(fn("hash", long(1000)))
  })

  it("hash on maps is rejected (spark.sql.legacy.allowHashOnMapType=false)", () => {
    expect(resolveError("hash", literal(new Map(), T.map(T.StringType, T.IntegerType)))).toMatch(/HASH_MAP_TYPE/)
  })

  it("xxhash64 (an exact long) and crc32", () => {
    expect(fn("xxhash64", lit("Spark"), arr(T.IntegerType, [123]), lit(2))).toBe(5602566077635097486n)
    expect(typeOf("xxhash64", lit(1))).toBe("bigint")
    expect(fn("crc32", lit("Spark"))).toBe(1557323817)
    expect(fn("crc32", str(null))).toBe(null)
    expect(typeOf("crc32", lit("Spark"))).toBe("bigint")
  })

  it("typeof", () => {
    expect(fn("typeof", lit(1))).toBe("int")
    expect(fn("typeof", arr(T.IntegerType, [1]))).toBe("array<int>")
  })
})
