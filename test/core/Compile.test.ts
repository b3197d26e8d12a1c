import { describe, expect, it } from "vitest"
import { compile, compilePredicate, compileProjection, dataTypeOf, nullableOf } from "../../core/Compile.ts"
import * as T from "../../core/DataType.ts"
import { type AttributeReference, attribute, type BinaryOp, type Expression, literal } from "../../core/Expression.ts"
import { register } from "../../core/functions/Registry.ts"
import "../../core/functions/mod.ts"

const ctx = { currentTimestampMs: 1_700_000_000_000 }
const bin = (op: BinaryOp, left: Expression, right: Expression): Expression => ({
  _tag: "BinaryExpression",
  op,
  left,
  right
})
const int = (v: number | null) => literal(v, T.IntegerType)
const long = (v: number | null) => literal(v, T.LongType)
const dbl = (v: number | null) => literal(v, T.DoubleType)
const str = (v: string | null) => literal(v, T.StringType)
const bool = (v: boolean | null) => literal(v, T.BooleanType)
const run = (e: Expression, row: ReadonlyArray<unknown> = [], input: ReadonlyArray<AttributeReference> = []) =>
  compile(e, input, ctx)(row)

describe("attributes", () => {
  it("read the ordinal of their exprId in the input", () => {
    const a = attribute("a", T.IntegerType)
    const b = attribute("b", T.StringType)
    expect(run(b, [1, "x"], [a, b])).toBe("x")
    expect(run(a, [1, "x"], [a, b])).toBe(1)
  })

  it("a missing attribute is a defect naming it", () => {
    const a = attribute("a", T.IntegerType)
    const b = attribute("b", T.StringType)
    expect(() => compile(a, [b], ctx)).toThrow(new RegExp(`Couldn't find a#${a.exprId} in \\[b#${b.exprId}\\]`))
  })
})

describe("arithmetic (non-ANSI)", () => {
  it("int wraps at 32 bits", () => {
    expect(run(bin("+", int(2147483647), int(1)))).toBe(-2147483648)
    expect(run(bin("-", int(-2147483648), int(1)))).toBe(2147483647)
    expect(run(bin("*", int(65536), int(65536)))).toBe(0)
    expect(run(bin("*", int(-3), int(7)))).toBe(-21)
  })

  it("bigint and double do not wrap", () => {
    expect(run(bin("+", long(2147483647), long(1)))).toBe(2147483648)
    expect(run(bin("*", dbl(1.5), dbl(2)))).toBe(3)
  })

  it("division is double division; a zero divisor gives null", () => {
    expect(run(bin("/", int(1), int(2)))).toBe(0.5)
    expect(run(bin("/", dbl(1), dbl(0)))).toBe(null)
    expect(run(bin("/", dbl(0), dbl(0)))).toBe(null)
    expect(run(bin("/", dbl(1), dbl(-0)))).toBe(null)
    expect(dataTypeOf(bin("/", int(1), int(2)))).toEqual(T.DoubleType)
  })

  it("remainder takes the sign of the dividend; % 0 is null", () => {
    expect(run(bin("%", int(7), int(3)))).toBe(1)
    expect(run(bin("%", int(-7), int(3)))).toBe(-1)
    expect(run(bin("%", int(7), int(0)))).toBe(null)
    expect(run(bin("%", dbl(7.5), dbl(2)))).toBe(1.5)
    expect(Object.is(run(bin("%", long(-4), long(2))), 0)).toBe(true)
    // found by the differential suite against Spark: -5L * 0L is 0, not -0
    expect(Object.is(run(bin("*", long(-5), long(0))), 0)).toBe(true)
  })

  it("null propagates", () => {
    expect(run(bin("+", int(null), int(1)))).toBe(null)
    expect(run(bin("*", int(1), int(null)))).toBe(null)
    expect(run(bin("/", dbl(null), dbl(0)))).toBe(null)
  })

  it("negation", () => {
    expect(run({ _tag: "UnaryExpression", op: "negate", child: int(5) })).toBe(-5)
    expect(run({ _tag: "UnaryExpression", op: "negate", child: int(-2147483648) })).toBe(-2147483648)
    expect(Object.is(run({ _tag: "UnaryExpression", op: "negate", child: long(0) }), 0)).toBe(true)
    expect(run({ _tag: "UnaryExpression", op: "negate", child: dbl(null) })).toBe(null)
  })

  it("result type is the (coerced) left type except for /", () => {
    expect(dataTypeOf(bin("+", long(1), long(2)))).toEqual(T.LongType)
    expect(dataTypeOf(bin("%", int(1), int(2)))).toEqual(T.IntegerType)
  })
})

describe("comparisons", () => {
  it("numbers, strings, booleans, dates", () => {
    expect(run(bin("<", int(1), int(2)))).toBe(true)
    expect(run(bin(">=", int(1), int(2)))).toBe(false)
    expect(run(bin("=", str("a"), str("a")))).toBe(true)
    expect(run(bin("<", str("B"), str("a")))).toBe(true)
    expect(run(bin("<", bool(false), bool(true)))).toBe(true)
    expect(run(bin("!=", literal(3, T.DateType), literal(3, T.DateType)))).toBe(false)
  })

  it("NaN equals NaN and is greater than everything (Spark's SQLOrderingUtil)", () => {
    expect(run(bin("=", dbl(Number.NaN), dbl(Number.NaN)))).toBe(true)
    expect(run(bin(">", dbl(Number.NaN), dbl(Infinity)))).toBe(true)
    expect(run(bin("<", dbl(1), dbl(Number.NaN)))).toBe(true)
    expect(run(bin("<=", dbl(Number.NaN), dbl(Number.NaN)))).toBe(true)
    expect(run(bin("!=", dbl(Number.NaN), dbl(1)))).toBe(true)
    expect(run(bin("=", dbl(0), dbl(-0)))).toBe(true)
  })

  it("null compares to null (unknown); <=> is null-safe", () => {
    expect(run(bin("=", int(null), int(1)))).toBe(null)
    expect(run(bin("<", int(1), int(null)))).toBe(null)
    expect(run(bin("<=>", int(null), int(null)))).toBe(true)
    expect(run(bin("<=>", int(null), int(1)))).toBe(false)
    expect(run(bin("<=>", int(1), int(1)))).toBe(true)
    expect(nullableOf(bin("<=>", int(null), int(1)))).toBe(false)
  })

  it("arrays and structs compare element-wise", () => {
    const t = T.array(T.IntegerType)
    expect(run(bin("=", literal([1, 2], t), literal([1, 2], t)))).toBe(true)
    expect(run(bin("<", literal([1, 2], t), literal([1, 3], t)))).toBe(true)
    expect(run(bin("<", literal([1], t), literal([1, 0], t)))).toBe(true)
    const st = T.struct([T.field("a", T.IntegerType), T.field("b", T.StringType)])
    expect(run(bin(">", literal([1, "b"], st), literal([1, "a"], st)))).toBe(true)
  })
})

describe("three-valued logic", () => {
  const values = [true, false, null] as const
  const and = (a: boolean | null, b: boolean | null) =>
    a === false || b === false ? false : a === null || b === null ? null : true
  const or = (a: boolean | null, b: boolean | null) =>
    a === true || b === true ? true : a === null || b === null ? null : false
  for (const a of values) {
    for (const b of values) {
      it(`${a} AND ${b} = ${and(a, b)}, ${a} OR ${b} = ${or(a, b)}`, () => {
        expect(run(bin("and", bool(a), bool(b)))).toBe(and(a, b))
        expect(run(bin("or", bool(a), bool(b)))).toBe(or(a, b))
      })
    }
  }

  it("NOT null is null; IS NULL is never null", () => {
    expect(run({ _tag: "UnaryExpression", op: "not", child: bool(null) })).toBe(null)
    expect(run({ _tag: "UnaryExpression", op: "not", child: bool(true) })).toBe(false)
    expect(run({ _tag: "UnaryExpression", op: "isNull", child: int(null) })).toBe(true)
    expect(run({ _tag: "UnaryExpression", op: "isNotNull", child: int(null) })).toBe(false)
  })

  it("AND short-circuits on false without evaluating the right side", () => {
    let calls = 0
    register({
      name: "test_counting_true",
      resolve: () => ({ _tag: "Resolved", resultType: T.BooleanType, nullable: false, castArgsTo: [] }),
      compile: () => () => {
        calls++
        return true
      }
    })
    const a = attribute("a", T.BooleanType)
    const f = compile(
      bin("and", a, { _tag: "ScalarFunction", name: "test_counting_true", args: [a], dataType: T.BooleanType }),
      [a],
      ctx
    )
    expect(f([false])).toBe(false)
    expect(calls).toBe(0)
    expect(f([true])).toBe(true)
    expect(calls).toBe(1)
  })
})

describe("IN (Spark semantics)", () => {
  const inList = (child: Expression, list: ReadonlyArray<Expression>): Expression => ({ _tag: "In", child, list })

  it("constant lists", () => {
    expect(run(inList(int(1), [int(1), int(2)]))).toBe(true)
    expect(run(inList(int(3), [int(1), int(2)]))).toBe(false)
    expect(run(inList(int(3), [int(1), int(null)]))).toBe(null)
    expect(run(inList(int(1), [int(1), int(null)]))).toBe(true)
    expect(run(inList(int(null), [int(1)]))).toBe(null)
    expect(run(inList(dbl(Number.NaN), [dbl(Number.NaN)]))).toBe(true)
    expect(run(inList(str("b"), [str("a"), str("b")]))).toBe(true)
  })

  it("lists with columns", () => {
    const a = attribute("a", T.IntegerType)
    const b = attribute("b", T.IntegerType)
    const f = compile(inList(a, [b, int(5)]), [a, b], ctx)
    expect(f([1, 1])).toBe(true)
    expect(f([5, 1])).toBe(true)
    expect(f([2, 1])).toBe(false)
    expect(f([2, null])).toBe(null)
    expect(f([null, 1])).toBe(null)
  })

  it("structural values", () => {
    const t = T.array(T.IntegerType)
    expect(run(inList(literal([1, 2], t), [literal([1], t), literal([1, 2], t)]))).toBe(true)
  })
})

describe("CASE WHEN, GetField, Cast, current_timestamp", () => {
  it("first true branch wins; null conditions do not match; no ELSE gives null", () => {
    const a = attribute("a", T.IntegerType)
    const e: Expression = {
      _tag: "CaseWhen",
      branches: [
        [bin(">", a, int(10)), str("big")],
        [bin(">", a, int(0)), str("small")]
      ],
      otherwise: undefined
    }
    const f = compile(e, [a], ctx)
    expect(f([11])).toBe("big")
    expect(f([5])).toBe("small")
    expect(f([-1])).toBe(null)
    expect(f([null])).toBe(null)
    const withElse = compile({ ...e, otherwise: str("neg") }, [a], ctx)
    expect(withElse([-1])).toBe("neg")
    expect(dataTypeOf(e)).toEqual(T.StringType)
    expect(nullableOf(e)).toBe(true)
    expect(nullableOf({ ...e, otherwise: str("neg") })).toBe(false)
  })

  it("GetField reads a struct ordinal; a null struct gives null", () => {
    const st = T.struct([T.field("start", T.TimestampType), T.field("end", T.TimestampType, false)])
    const w = attribute("window", st)
    const end: Expression = { _tag: "GetField", child: w, field: "end", ordinal: 1 }
    const f = compile(end, [w], ctx)
    expect(f([[0, 10_000]])).toBe(10_000)
    expect(f([null])).toBe(null)
    expect(dataTypeOf(end)).toEqual(T.TimestampType)
    expect(nullableOf(end)).toBe(true)
    expect(nullableOf({ ...end, child: attribute("w", st, false) })).toBe(false)
  })

  it("Cast delegates to Cast.ts", () => {
    expect(run({ _tag: "Cast", child: str("12"), to: T.IntegerType })).toBe(12)
    expect(run({ _tag: "Cast", child: str("x"), to: T.IntegerType })).toBe(null)
    expect(nullableOf({ _tag: "Cast", child: str("12"), to: T.IntegerType })).toBe(true)
    expect(nullableOf({ _tag: "Cast", child: int(1), to: T.LongType })).toBe(false)
  })

  it("current_timestamp is the context's timestamp", () => {
    expect(run({ _tag: "CurrentTimestamp" })).toBe(ctx.currentTimestampMs)
    expect(dataTypeOf({ _tag: "CurrentTimestamp" })).toEqual(T.TimestampType)
  })

  it("Alias and SortOrder evaluate their child", () => {
    expect(run({ _tag: "Alias", child: int(3), name: "x", exprId: 0 })).toBe(3)
    expect(run({ _tag: "SortOrder", child: int(3), direction: "asc", nullOrdering: "nullsFirst" })).toBe(3)
  })
})

describe("nodes that belong to plan operators", () => {
  it.each<Expression>([
    { _tag: "TimeWindow", timeColumn: literal(0, T.TimestampType), windowMs: 1000, slideMs: 1000, startMs: 0 },
    { _tag: "SessionWindow", timeColumn: literal(0, T.TimestampType), gap: long(1000) },
    { _tag: "Explode", child: literal([1], T.array(T.IntegerType)), outer: false, position: false },
    { _tag: "AggregateFunction", name: "sum", args: [int(1)], distinct: false, options: {}, dataType: T.LongType }
  ])("$_tag is not compiled", (e) => {
    expect(() => compile(e, [], ctx)).toThrow(/planned by its own operator/)
  })

  it("unresolved expressions are defects", () => {
    expect(() => compile({ _tag: "UnresolvedAttribute", nameParts: ["x"], planId: undefined }, [], ctx)).toThrow(
      /not resolved/
    )
    expect(() => compile({ _tag: "InvalidExpression", message: "bad" }, [], ctx)).toThrow(/not resolved/)
  })

  it("their types", () => {
    expect(
      dataTypeOf({ _tag: "TimeWindow", timeColumn: literal(0, T.TimestampType), windowMs: 1, slideMs: 1, startMs: 0 })
    ).toEqual(T.WindowType)
    expect(
      dataTypeOf({ _tag: "Explode", child: literal([1], T.array(T.IntegerType)), outer: false, position: false })
    ).toEqual(T.IntegerType)
    expect(
      dataTypeOf({
        _tag: "AggregateFunction",
        name: "count",
        args: [int(1)],
        distinct: false,
        options: {},
        dataType: T.LongType
      })
    ).toEqual(T.LongType)
  })
})

describe("predicates and projections", () => {
  it("a predicate treats null as false", () => {
    const a = attribute("a", T.IntegerType)
    const p = compilePredicate(bin(">", a, int(1)), [a], ctx)
    expect([[0], [2], [null]].map(p)).toEqual([false, true, false])
  })

  it("a projection builds one value per expression", () => {
    const a = attribute("a", T.IntegerType)
    const b = attribute("b", T.StringType)
    const p = compileProjection(
      [b, bin("*", a, int(2)), int(7), { _tag: "UnaryExpression", op: "isNull", child: b }],
      [a, b],
      ctx
    )
    expect(p([3, "x"])).toEqual(["x", 6, 7, false])
    expect(compileProjection([a], [a, b], ctx)([1, "y"])).toEqual([1])
  })
})

describe("scalar functions and constant folding", () => {
  it("compiles registry functions with their resolved types", () => {
    const a = attribute("s", T.StringType)
    const f = compile({ _tag: "ScalarFunction", name: "upper", args: [a], dataType: T.StringType }, [a], ctx)
    expect(f(["abc"])).toBe("ABC")
    expect(f([null])).toBe(null)
  })

  it("a constant subtree is evaluated once, at compile time", () => {
    let evaluations = 0
    register({
      name: "test_counting_plus_one",
      resolve: () => ({ _tag: "Resolved", resultType: T.IntegerType, nullable: false, castArgsTo: [undefined] }),
      compile: (args) => (row) => {
        evaluations++
        return (args[0](row) as number) + 1
      }
    })
    const a = attribute("a", T.IntegerType)
    const call: Expression = {
      _tag: "ScalarFunction",
      name: "test_counting_plus_one",
      args: [int(1)],
      dataType: T.IntegerType
    }
    const f = compile(bin("+", a, call), [a], ctx)
    expect(evaluations).toBe(1)
    expect([f([1]), f([2]), f([3])]).toEqual([3, 4, 5])
    expect(evaluations).toBe(1)
  })
})

describe("nondeterministic functions", () => {
  it("are not folded even without arguments", () => {
    let n = 0
    register({
      name: "test_counter_nondeterministic",
      deterministic: false,
      resolve: () => ({ _tag: "Resolved", resultType: T.IntegerType, nullable: false, castArgsTo: [] }),
      compile: () => () => ++n
    })
    const f = compile(
      { _tag: "ScalarFunction", name: "test_counter_nondeterministic", args: [], dataType: T.IntegerType },
      [],
      ctx
    )
    expect([f([]), f([]), f([])]).toEqual([1, 2, 3])
  })
})

describe("nullability", () => {
  it("follows Spark", () => {
    const a = attribute("a", T.IntegerType, false)
    const n = attribute("n", T.IntegerType, true)
    expect(nullableOf(bin("+", a, a))).toBe(false)
    expect(nullableOf(bin("+", a, n))).toBe(true)
    expect(nullableOf(bin("/", a, a))).toBe(true)
    expect(nullableOf(bin("%", a, a))).toBe(true)
    expect(nullableOf(int(1))).toBe(false)
    expect(nullableOf(int(null))).toBe(true)
    expect(nullableOf({ _tag: "In", child: a, list: [int(1)] })).toBe(false)
    expect(nullableOf({ _tag: "CurrentTimestamp" })).toBe(false)
    expect(
      nullableOf({
        _tag: "ScalarFunction",
        name: "upper",
        args: [{ _tag: "Cast", child: a, to: T.StringType }],
        dataType: T.StringType
      })
    ).toBe(false)
    expect(
      nullableOf({
        _tag: "ScalarFunction",
        name: "upper",
        args: [{ _tag: "Cast", child: n, to: T.StringType }],
        dataType: T.StringType
      })
    ).toBe(true)
  })
})
