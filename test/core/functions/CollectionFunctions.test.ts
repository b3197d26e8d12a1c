// Expected values are the `examples` of Spark's ExpressionDescription annotations
// (sql/catalyst/.../expressions/collectionOperations.scala, complexTypeCreator.scala) unless noted.
import { describe, expect, it } from "vitest"
import { dataTypeOf } from "../../../core/Compile.ts"
import * as T from "../../../core/DataType.ts"
import { type Expression, attribute, literal } from "../../../core/Expression.ts"
import { arr, call, dbl, evaluate, fn, lit, long, resolveError, str, typeOf } from "./support.ts"

const ints = (xs: ReadonlyArray<number | null> | null) => arr(T.IntegerType, xs)
const strs = (xs: ReadonlyArray<string | null> | null) => arr(T.StringType, xs)
const mapLit = (entries: ReadonlyArray<readonly [unknown, unknown]>, kt: T.DataType, vt: T.DataType): Expression =>
  literal(new Map(entries), T.map(kt, vt))

describe("constructors", () => {
  it("array widens to a common type", () => {
    expect(fn("array", lit(1), lit(2), lit(3))).toEqual([1, 2, 3])
    expect(typeOf("array", lit(1), long(2))).toBe("array<bigint>")
    expect(typeOf("array", lit(1), lit("a"))).toBe("array<string>")
    expect(fn("array", lit(1), lit("a"))).toEqual(["1", "a"])
    expect(fn("array")).toEqual([])
    expect(typeOf("array")).toBe("array<void>")
    expect(resolveError("array", lit(1), ints([1]))).toMatch(/DATA_DIFF_TYPES/)
  })

  it("map (create_map)", () => {
    expect(fn("map", lit(1.0), lit("2"), lit(3.0), lit("4"))).toEqual(
      new Map([
        [1, "2"],
        [3, "4"]
      ])
    )
    expect(typeOf("map", lit("a"), lit(1), lit("b"), long(2))).toBe("map<string,bigint>")
    expect(resolveError("map", lit("a"))).toMatch(/WRONG_NUM_ARGS/)
  })

  it("struct names fields after attributes and aliases, col<n> otherwise", () => {
    const a = attribute("a", T.IntegerType, false)
    const e = call("struct", a, { _tag: "Alias", child: lit("x"), name: "b", exprId: 0 }, lit(1.5))
    expect(T.simpleString(dataTypeOf(e))).toBe("struct<a:int,b:string,col3:double>")
    expect(evaluate(e, [7], [a])).toEqual([7, "x", 1.5])
    const t = dataTypeOf(e) as T.StructType
    expect(t.fields.map((f) => f.nullable)).toEqual([false, false, false])
  })

  it("named_struct", () => {
    expect(fn("named_struct", lit("a"), lit(1), lit("b"), lit(2))).toEqual([1, 2])
    expect(typeOf("named_struct", lit("a"), lit(1), lit("b"), lit("x"))).toBe("struct<a:int,b:string>")
  })
})

describe("size and access", () => {
  it("size is -1 for null (legacy sizeOfNull, non-ANSI)", () => {
    expect(fn("size", strs(["b", "d", "c", "a"]))).toBe(4)
    expect(
      fn(
        "size",
        mapLit(
          [
            ["a", 1],
            ["b", 2]
          ],
          T.StringType,
          T.IntegerType
        )
      )
    ).toBe(2)
    expect(fn("size", ints(null))).toBe(-1)
    expect(fn("cardinality", ints([1]))).toBe(1)
    expect(fn("array_size", ints(null))).toBe(null)
    expect(resolveError("size", lit("abc"))).toMatch(/UNEXPECTED_INPUT_TYPE/)
  })

  it("array_contains (null when absent but a null is present)", () => {
    expect(fn("array_contains", ints([1, 2, 3]), lit(2))).toBe(true)
    expect(fn("array_contains", ints([1, 2, 3]), lit(4))).toBe(false)
    expect(fn("array_contains", ints([1, null, 3]), lit(4))).toBe(null)
    expect(fn("array_contains", ints([1, null, 3]), lit(1))).toBe(true)
    expect(fn("array_contains", ints(null), lit(1))).toBe(null)
    expect(fn("array_contains", ints([1, 2]), lit(null))).toBe(null)
    expect(fn("array_contains", ints([1, 2]), dbl(2.0))).toBe(true)
    expect(fn("array_contains", arr(T.DoubleType, [Number.NaN]), dbl(Number.NaN))).toBe(true)
    expect(resolveError("array_contains", strs(["a"]), lit(1))).toMatch(/ARRAY_FUNCTION_DIFF_TYPES/)
  })

  it("element_at of arrays (1-based, negative from the end) and maps", () => {
    expect(fn("element_at", ints([1, 2, 3]), lit(2))).toBe(2)
    expect(fn("element_at", ints([1, 2, 3]), lit(-1))).toBe(3)
    expect(fn("element_at", ints([1, 2, 3]), lit(4))).toBe(null)
    expect(
      fn(
        "element_at",
        mapLit(
          [
            [1, "a"],
            [2, "b"]
          ],
          T.IntegerType,
          T.StringType
        ),
        lit(2)
      )
    ).toBe("b")
    expect(fn("element_at", mapLit([[1, "a"]], T.IntegerType, T.StringType), lit(3))).toBe(null)
    expect(typeOf("element_at", ints([1]), lit(1))).toBe("int")
  })

  it("array_position, map_keys, map_values, map_entries, map_contains_key", () => {
    expect(fn("array_position", ints([312, 773, 708, 708]), lit(708))).toBe(3)
    expect(fn("array_position", ints([312]), lit(1))).toBe(0)
    expect(typeOf("array_position", ints([1]), lit(1))).toBe("bigint")
    const m = mapLit(
      [
        [1, "a"],
        [2, "b"]
      ],
      T.IntegerType,
      T.StringType
    )
    expect(fn("map_keys", m)).toEqual([1, 2])
    expect(fn("map_values", m)).toEqual(["a", "b"])
    expect(fn("map_entries", m)).toEqual([
      [1, "a"],
      [2, "b"]
    ])
    expect(fn("map_contains_key", m, lit(1))).toBe(true)
    expect(fn("map_contains_key", m, lit(3))).toBe(false)
    expect(fn("map_from_arrays", arr(T.DoubleType, [1.0, 3.0]), strs(["2", "4"]))).toEqual(
      new Map([
        [1, "2"],
        [3, "4"]
      ])
    )
    expect(typeOf("map_keys", m)).toBe("array<int>")
  })
})

describe("reshaping arrays", () => {
  it("sort_array: nulls first ascending, last descending; array_sort: nulls last", () => {
    expect(fn("sort_array", strs(["b", "d", null, "c", "a"]), lit(true))).toEqual([null, "a", "b", "c", "d"])
    expect(fn("sort_array", strs(["b", "d", null, "c", "a"]), lit(false))).toEqual(["d", "c", "b", "a", null])
    expect(fn("sort_array", arr(T.DoubleType, [Number.NaN, 1, -Infinity]))).toEqual([-Infinity, 1, Number.NaN])
    expect(fn("array_sort", strs(["b", "d", null, "c", "a"]))).toEqual(["a", "b", "c", "d", null])
  })

  it("set operations keep first occurrences in order", () => {
    expect(fn("array_distinct", ints([1, 2, 3, null, 3]))).toEqual([1, 2, 3, null])
    expect(fn("array_union", ints([1, 2, 3]), ints([1, 3, 5]))).toEqual([1, 2, 3, 5])
    expect(fn("array_intersect", ints([1, 2, 3]), ints([1, 3, 5]))).toEqual([1, 3])
    expect(fn("array_except", ints([1, 2, 3]), ints([1, 3, 5]))).toEqual([2])
    expect(fn("arrays_overlap", ints([1, 2, 3]), ints([3, 4, 5]))).toBe(true)
    expect(fn("arrays_overlap", ints([1, 2]), ints([3, null]))).toBe(null)
    expect(fn("arrays_overlap", ints([1, 2]), ints([3]))).toBe(false)
    expect(fn("array_remove", ints([1, 2, 3, null, 3]), lit(3))).toEqual([1, 2, null])
    const nested = arr(T.array(T.IntegerType), [[1], [1], [2]])
    expect(fn("array_distinct", nested)).toEqual([[1], [2]])
  })

  it("array_max, array_min, array_join", () => {
    expect(fn("array_max", ints([1, 20, null, 3]))).toBe(20)
    expect(fn("array_min", ints([1, 20, null, 3]))).toBe(1)
    expect(fn("array_max", ints([null]))).toBe(null)
    expect(fn("array_join", strs(["hello", "world"]), lit(" "))).toBe("hello world")
    expect(fn("array_join", strs(["hello", null, "world"]), lit(" "))).toBe("hello world")
    expect(fn("array_join", strs(["hello", null, "world"]), lit(" "), lit(","))).toBe("hello , world")
    expect(fn("array_join", ints([1, 2]), lit("-"))).toBe("1-2")
  })

  it("slice, flatten, sequence, array_repeat", () => {
    expect(fn("slice", ints([1, 2, 3, 4]), lit(2), lit(2))).toEqual([2, 3])
    expect(fn("slice", ints([1, 2, 3, 4]), lit(-2), lit(2))).toEqual([3, 4])
    expect(fn("slice", ints([1, 2, 3, 4]), lit(5), lit(2))).toEqual([])
    expect(
      fn(
        "flatten",
        arr(T.array(T.IntegerType), [
          [1, 2],
          [3, 4]
        ])
      )
    ).toEqual([1, 2, 3, 4])
    expect(fn("flatten", arr(T.array(T.IntegerType), [[1, 2], null]))).toBe(null)
    expect(fn("sequence", lit(1), lit(5))).toEqual([1, 2, 3, 4, 5])
    expect(fn("sequence", lit(5), lit(1))).toEqual([5, 4, 3, 2, 1])
    expect(fn("sequence", lit(1), lit(10), lit(4))).toEqual([1, 5, 9])
    expect(typeOf("sequence", lit(1), long(5))).toBe("array<bigint>")
    expect(fn("array_repeat", lit("123"), lit(2))).toEqual(["123", "123"])
    expect(fn("array_repeat", str(null), lit(2))).toEqual([null, null])
    expect(fn("reverse", strs(["a", null]))).toEqual([null, "a"])
  })
})
