// Expected values are the `examples` of Spark's ExpressionDescription annotations
// (sql/catalyst/.../expressions/mathExpressions.scala, arithmetic.scala) unless noted.
import { describe, expect, it } from "vitest"
import { lit as columnLit } from "../../../core/Column.ts"
import * as T from "../../../core/DataType.ts"
import { dbl, fn, lit, long, resolveError, str, typeOf } from "./support.ts"

describe("unary math", () => {
  it.each<[string, ReturnType<typeof lit>, number]>([
    ["sqrt", lit(4), 2.0],
    ["cbrt", lit(27.0), 3.0],
    // StrictMath.cbrt (fdlibm), as Spark gives it; V8's Math.cbrt differs in the last bit
    ["cbrt", lit(-17), -2.5712815906582356],
    ["cbrt", lit(58), 3.8708766406277966],
    ["exp", lit(0), 1.0],
    ["expm1", lit(0), 0.0],
    ["ln", lit(1), 0.0],
    ["log10", lit(10), 1.0],
    ["log2", lit(2), 1.0],
    ["log1p", lit(0), 0.0],
    ["sin", lit(0), 0.0],
    ["cos", lit(0), 1.0],
    ["tan", lit(0), 0.0],
    ["asin", lit(0), 0.0],
    ["acos", lit(1), 0.0],
    ["atan", lit(0), 0.0],
    ["sinh", lit(0), 0.0],
    ["cosh", lit(0), 1.0],
    ["tanh", lit(0), 0.0],
    ["asinh", lit(0), 0.0],
    ["acosh", lit(1), 0.0],
    ["atanh", lit(0), 0.0],
    ["cot", lit(1), 0.6420926159343306],
    ["csc", lit(1), 1.1883951057781212],
    ["sec", lit(0), 1.0],
    ["degrees", dbl(Math.PI), 180.0],
    ["radians", lit(180), Math.PI],
    // Java's Math.toDegrees multiplies by a constant (found by the differential suite against Spark)
    ["degrees", dbl(241.77), 13852.400612877915],
    ["radians", lit(3), 0.05235987755982989],
    ["signum", lit(40), 1.0],
    ["sign", lit(-2.5), -1.0],
    ["rint", lit(12.3456), 12.0],
    ["rint", lit(2.5), 2.0]
  ])("%s(%o) = %s", (name, arg, expected) => {
    expect(fn(name, arg)).toBe(expected)
    expect(typeOf(name, arg)).toBe("double")
  })

  it("NaN outside the domain, null for logs at or below the asymptote (Hive's rule)", () => {
    expect(fn("acos", lit(2))).toBeNaN()
    expect(fn("acosh", lit(0))).toBeNaN()
    expect(fn("atanh", lit(2))).toBeNaN()
    expect(fn("ln", lit(0))).toBe(null)
    expect(fn("log10", lit(-1))).toBe(null)
    expect(fn("log1p", lit(-1))).toBe(null)
    expect(fn("log", lit(10), lit(100))).toBe(2.0)
    expect(fn("log", lit(1))).toBe(0.0)
    expect(fn("log", lit(0), lit(100))).toBe(null)
    expect(fn("sqrt", str("16"))).toBe(4)
  })

  it("pow, atan2, hypot", () => {
    expect(fn("pow", lit(2), lit(3))).toBe(8.0)
    expect(fn("power", lit(2), lit(-1))).toBe(0.5)
    expect(fn("atan2", lit(0), lit(0))).toBe(0.0)
    expect(fn("hypot", lit(3), lit(4))).toBe(5.0)
    // Java's StrictMath.hypot (fdlibm), as Spark gives it; V8's Math.hypot differs in the last bit
    // (found by the differential suite against Spark)
    expect(fn("hypot", lit(134), lit(101))).toBe(167.80047675736802)
    expect(fn("hypot", lit(32), lit(102))).toBe(106.90182411914213)
    expect(fn("hypot", lit(1e300), lit(1e300))).toBe(1.4142135623730952e300)
    expect(fn("hypot", lit(0), lit(-2.5))).toBe(2.5)
  })

  it("e and pi", () => {
    expect(fn("e")).toBe(Math.E)
    expect(fn("pi")).toBe(Math.PI)
  })
})

describe("abs, floor, ceil, integral functions", () => {
  it("abs keeps the type; int MIN stays MIN (Java)", () => {
    expect(fn("abs", lit(-1))).toBe(1)
    expect(fn("abs", lit(-2147483648, T.IntegerType))).toBe(-2147483648)
    expect(fn("abs", dbl(-1.5))).toBe(1.5)
    expect(typeOf("abs", lit(-1))).toBe("int")
    expect(typeOf("abs", long(-1))).toBe("bigint")
    expect(typeOf("abs", str("-1"))).toBe("double")
  })

  it("floor and ceil give bigint", () => {
    expect(fn("floor", lit(-0.1))).toBe(-1)
    expect(fn("floor", lit(5))).toBe(5)
    expect(fn("ceil", lit(-0.1))).toBe(0)
    expect(Object.is(fn("ceil", lit(-0.1)), 0)).toBe(true)
    expect(fn("ceil", lit(5))).toBe(5)
    expect(fn("ceil", str("1.5"))).toBe(2)
    expect(fn("floor", dbl(Number.NaN))).toBe(0)
    expect(typeOf("floor", lit(1.5))).toBe("bigint")
    expect(typeOf("ceil", lit(1))).toBe("bigint")
  })

  it("factorial, bin, pmod", () => {
    expect(fn("factorial", lit(5))).toBe(120)
    expect(fn("factorial", lit(21))).toBe(null)
    expect(fn("bin", lit(13))).toBe("1101")
    expect(fn("bin", lit(-13))).toBe("1111111111111111111111111111111111111111111111111111111111110011")
    expect(fn("bin", lit(13.3))).toBe("1101")
    expect(fn("pmod", lit(10), lit(3))).toBe(1)
    expect(fn("pmod", lit(-10), lit(3))).toBe(2)
    expect(fn("pmod", lit(-7.5), lit(2))).toBe(0.5)
    expect(fn("pmod", lit(1), lit(0))).toBe(null)
    expect(typeOf("pmod", lit(1), long(2))).toBe("bigint")
  })

  // issue #21 deviation 9: Spark's Pmod returns the double remainder `a % n` when it is not
  // negative, and -3.0 % 1.5 is -0.0
  it("pmod(-3.0, 1.5) is -0.0 as in Spark; integral results have no -0", () => {
    expect(Object.is(fn("pmod", dbl(-3.0), dbl(1.5)), -0)).toBe(true)
    expect(Object.is(fn("pmod", lit(-4), lit(2)), 0)).toBe(true)
    expect(Object.is(fn("pmod", long(-4), long(2)), 0)).toBe(true)
  })

  it("negative and positive", () => {
    expect(fn("negative", lit(1))).toBe(-1)
    expect(fn("positive", lit(1))).toBe(1)
  })
})

describe("round and bround", () => {
  it("HALF_UP on the decimal value, keeping the type", () => {
    expect(fn("round", lit(2.5), lit(0))).toBe(3)
    expect(fn("round", lit(-2.5), lit(0))).toBe(-3)
    expect(fn("round", lit(2.675), lit(2))).toBe(2.68)
    expect(fn("round", lit(1.005), lit(2))).toBe(1.01)
    expect(fn("round", lit(123.456), lit(-1))).toBe(120)
    expect(fn("round", lit(125), lit(-1))).toBe(130)
    expect(fn("round", lit(-125), lit(-1))).toBe(-130)
    expect(fn("round", lit(12), lit(2))).toBe(12)
    expect(fn("round", lit(0.0004), lit(3))).toBe(0)
    expect(Object.is(fn("round", lit(-0.0004), lit(3)), 0)).toBe(true)
    expect(fn("round", dbl(Number.POSITIVE_INFINITY), lit(1))).toBe(Number.POSITIVE_INFINITY)
    expect(fn("round", lit(1.5))).toBe(2)
    expect(typeOf("round", lit(1), lit(0))).toBe("int")
    expect(typeOf("round", long(1), lit(0))).toBe("bigint")
    expect(typeOf("round", lit(1.5), lit(0))).toBe("double")
  })

  it("bround is HALF_EVEN", () => {
    expect(fn("bround", lit(2.5), lit(0))).toBe(2)
    expect(fn("bround", lit(3.5), lit(0))).toBe(4)
    expect(fn("bround", lit(25), lit(-1))).toBe(20)
    expect(fn("bround", lit(35), lit(-1))).toBe(40)
    expect(fn("bround", lit(2.665), lit(2))).toBe(2.66)
    expect(fn("bround", lit(0.5), lit(0))).toBe(0)
  })

  it("the scale must be a literal", () => {
    const attr = {
      _tag: "AttributeReference",
      name: "s",
      dataType: T.IntegerType,
      nullable: true,
      exprId: -1,
      qualifier: []
    } as const
    expect(resolveError("round", lit(1.5), attr)).toMatch(/NON_FOLDABLE_INPUT/)
  })
})

describe("NaN handling and extremes", () => {
  it("isnan is never null; nanvl replaces NaN", () => {
    expect(fn("isnan", dbl(Number.NaN))).toBe(true)
    expect(fn("isnan", dbl(1))).toBe(false)
    expect(fn("isnan", dbl(null))).toBe(false)
    expect(fn("nanvl", dbl(Number.NaN), lit(123))).toBe(123.0)
    expect(fn("nanvl", dbl(1), lit(123))).toBe(1)
    expect(fn("nanvl", dbl(null), lit(123))).toBe(null)
  })

  it("greatest and least skip nulls and widen types", () => {
    expect(fn("greatest", lit(10), lit(9), lit(2), lit(4), lit(3))).toBe(10)
    expect(fn("least", lit(10), lit(9), lit(2), lit(4), lit(3))).toBe(2)
    expect(fn("greatest", lit(1), lit(null), lit(3))).toBe(3)
    expect(fn("least", lit(null), lit(null))).toBe(null)
    expect(fn("greatest", lit(1), dbl(Number.NaN))).toBeNaN()
    expect(fn("greatest", lit("a"), lit("b"))).toBe("b")
    expect(typeOf("greatest", lit(1), long(2), dbl(1.5))).toBe("double")
    expect(resolveError("greatest", lit(1))).toMatch(/WRONG_NUM_ARGS/)
  })

  // issue #21 deviation 7: -0 is an integer to JavaScript, so F.lit(-0.0) is an int literal,
  // which Spark holds as 0: lit(-0.0) is 0 and least(1.5, lit(-0.0)) is 0.0
  it("lit(-0.0) is the int 0, and least(1.5, lit(-0.0)) is 0.0", () => {
    const negZero = columnLit(-0.0).expr
    expect(negZero).toMatchObject({ dataType: T.IntegerType })
    expect(Object.is((negZero as { value: unknown }).value, 0)).toBe(true)
    expect(Object.is(fn("least", dbl(1.5), negZero), 0)).toBe(true)
  })
})
