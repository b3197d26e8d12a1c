/**
 * The aggregate functions against Spark 4.0.0. Every "Spark:" comment quotes the query run in a
 * local Spark 4.0.0 session (spark-sql_2.13 from Maven Central, UTC, spark.sql.ansi.enabled=false)
 * and the expected values are what it printed.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import { type AggregateFunction, type AggregateName, attribute } from "../../../core/Expression.ts"
import {
  type AggregateImpl,
  dataTypeSql,
  decodeNumber,
  encodeNumber,
  makeAggregate,
  resolveAggregate
} from "../../../core/functions/Aggregates.ts"
import type { InternalRow } from "../../../core/Row.ts"

interface Options {
  readonly distinct?: boolean
  readonly ignoreNulls?: boolean
  readonly rsd?: number
}

const fnOf = (name: AggregateName, o: Options = {}): AggregateFunction => ({
  _tag: "AggregateFunction",
  name,
  args: [],
  distinct: o.distinct ?? false,
  options: {
    ...(o.ignoreNulls === undefined ? {} : { ignoreNulls: o.ignoreNulls }),
    ...(o.rsd === undefined ? {} : { rsd: o.rsd })
  },
  dataType: undefined
})

/** The aggregate over columns of the given types; argument i reads column i of the row. */
const agg = (name: AggregateName, types: ReadonlyArray<T.DataType>, o: Options = {}): AggregateImpl =>
  makeAggregate(
    fnOf(name, o),
    types.map((_, i) => (row: InternalRow) => row[i]),
    types
  )

const feed = (impl: AggregateImpl, rows: ReadonlyArray<InternalRow>, buffer: unknown = impl.init()): unknown => {
  let b = buffer
  for (const r of rows) b = impl.update(b, r)
  return b
}

const run = (impl: AggregateImpl, rows: ReadonlyArray<InternalRow>): unknown => impl.evaluate(feed(impl, rows))

/** One column of values as rows. */
const col = (values: ReadonlyArray<unknown>): Array<InternalRow> => values.map((v) => [v])

/** Runs one aggregate over one column. */
const over = (name: AggregateName, t: T.DataType, values: ReadonlyArray<unknown>, o: Options = {}): unknown =>
  run(agg(name, [t], o), col(values))

const roundTrip = (impl: AggregateImpl, buffer: unknown): unknown =>
  impl.fromJSON(JSON.parse(JSON.stringify(impl.toJSON(buffer))))

const ALL: ReadonlyArray<AggregateName> = [
  "count",
  "sum",
  "avg",
  "min",
  "max",
  "first",
  "last",
  "collect_list",
  "collect_set",
  "approx_count_distinct"
]

describe("resolveAggregate", () => {
  const b = attribute("b", T.BooleanType)

  it("types count as a non-null bigint over any arguments", () => {
    expect(resolveAggregate("count", [T.StringType, T.map(T.IntegerType, T.IntegerType)], true, {})).toEqual({
      _tag: "Resolved",
      resultType: T.LongType,
      nullable: false,
      castArgsTo: [undefined, undefined]
    })
  })

  it("rejects count() with Spark's message", () => {
    // Spark: SELECT count()
    expect(resolveAggregate("count", [], false, {})).toEqual({
      _tag: "Invalid",
      message:
        '[WRONG_NUM_ARGS.WITH_SUGGESTION] The `count` requires  >= 1 parameters but the actual number is 0. If you have to call this function with 0 parameters, set the legacy configuration "spark.sql.legacy.allowParameterlessCount" to "true".'
    })
  })

  it("types sum as bigint over integers and double over doubles; avg as double", () => {
    // Spark: SELECT sum(x), avg(x) FROM VALUES (1), (2) -> struct<sum(x):bigint,avg(x):double>
    expect(resolveAggregate("sum", [T.IntegerType], false, {})).toEqual({
      _tag: "Resolved",
      resultType: T.LongType,
      nullable: true,
      castArgsTo: [undefined]
    })
    expect(resolveAggregate("sum", [T.LongType], false, {})).toMatchObject({ resultType: T.LongType })
    expect(resolveAggregate("sum", [T.DoubleType], false, {})).toMatchObject({
      resultType: T.DoubleType,
      castArgsTo: [undefined]
    })
    for (const t of [T.IntegerType, T.LongType, T.DoubleType])
      expect(resolveAggregate("avg", [t], true, {})).toMatchObject({ resultType: T.DoubleType, nullable: true })
  })

  it("casts strings, nulls and timestamps to double for sum and avg", () => {
    // Spark: SELECT sum(s), avg(s) FROM VALUES ('1.5'), ('x'), ('2') -> double 3.5, 1.75
    // Spark: SELECT sum(NULL), avg(NULL) -> double; SELECT sum(ts) ... -> double 1.7040672E9
    for (const name of ["sum", "avg"] as const)
      for (const t of [T.StringType, T.NullType, T.TimestampType])
        expect(resolveAggregate(name, [t], false, {})).toEqual({
          _tag: "Resolved",
          resultType: T.DoubleType,
          nullable: true,
          castArgsTo: [T.DoubleType]
        })
  })

  it("rejects non-numeric sum and avg with Spark's message", () => {
    // Spark: SELECT sum(b) FROM VALUES (true) AS t(b)
    expect(resolveAggregate("sum", [T.BooleanType], false, {}, [b])).toEqual({
      _tag: "Invalid",
      message:
        '[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve "sum(b)" due to data type mismatch: The first parameter requires the "NUMERIC" or "ANSI INTERVAL" type, however "b" has the type "BOOLEAN".'
    })
    // Spark: avg(d) of a DATE, sum(b) of BINARY, sum(a) of ARRAY<INT>, sum(c) of INTERVAL
    const cases: ReadonlyArray<readonly [AggregateName, T.DataType, string]> = [
      ["avg", T.DateType, "DATE"],
      ["sum", T.DateType, "DATE"],
      ["sum", T.BinaryType, "BINARY"],
      ["sum", T.array(T.IntegerType), "ARRAY<INT>"],
      ["sum", T.CalendarIntervalType, "INTERVAL"]
    ]
    for (const [name, t, sql] of cases) {
      const x = attribute("x", t)
      expect(resolveAggregate(name, [t], false, {}, [x])).toEqual({
        _tag: "Invalid",
        message: `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve "${name}(x)" due to data type mismatch: The first parameter requires the "NUMERIC" or "ANSI INTERVAL" type, however "x" has the type "${sql}".`
      })
    }
  })

  it("names DISTINCT calls as Spark does in messages", () => {
    const r = resolveAggregate("sum", [T.BooleanType], true, {}, [b])
    expect(r._tag === "Invalid" && r.message).toContain('Cannot resolve "sum(DISTINCT b)"')
  })

  it("types min and max as their input and rejects unorderable types", () => {
    const st = T.struct([T.field("col1", T.IntegerType), T.field("col2", T.StringType)])
    for (const t of [T.StringType, T.BinaryType, T.array(T.IntegerType), st, T.NullType, T.TimestampType])
      expect(resolveAggregate("max", [t], false, {})).toEqual({
        _tag: "Resolved",
        resultType: t,
        nullable: true,
        castArgsTo: [undefined]
      })
    // Spark: SELECT min(m) FROM VALUES (map(1,2)) AS t(m)
    const m = attribute("m", T.map(T.IntegerType, T.IntegerType))
    expect(resolveAggregate("min", [m.dataType], false, {}, [m])).toEqual({
      _tag: "Invalid",
      message:
        '[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] Cannot resolve "min(m)" due to data type mismatch: The `min` does not support ordering on type "MAP<INT, INT>".'
    })
    // Spark: SELECT min(s) FROM VALUES (named_struct('a', map(1,2))) AS t(s)
    const s = attribute("s", T.struct([T.field("a", T.map(T.IntegerType, T.IntegerType), false)]))
    expect(resolveAggregate("min", [s.dataType], false, {}, [s])).toMatchObject({
      message:
        '[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] Cannot resolve "min(s)" due to data type mismatch: The `min` does not support ordering on type "STRUCT<a: MAP<INT, INT> NOT NULL>".'
    })
    // Spark: SELECT min(c) FROM VALUES (make_interval(0,0,0,1)) AS t(c)
    const c = attribute("c", T.CalendarIntervalType)
    expect(resolveAggregate("max", [c.dataType], false, {}, [c])).toMatchObject({
      message:
        '[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] Cannot resolve "max(c)" due to data type mismatch: The `max` does not support ordering on type "INTERVAL".'
    })
  })

  it("types first and last as their input, for any type", () => {
    const m = T.map(T.StringType, T.IntegerType)
    expect(resolveAggregate("first", [m], false, { ignoreNulls: true })).toEqual({
      _tag: "Resolved",
      resultType: m,
      nullable: true,
      castArgsTo: [undefined]
    })
    expect(resolveAggregate("last", [T.IntegerType], false, {})).toMatchObject({ resultType: T.IntegerType })
  })

  it("types collect_list and collect_set as non-null arrays without null elements", () => {
    expect(resolveAggregate("collect_list", [T.map(T.IntegerType, T.IntegerType)], false, {})).toEqual({
      _tag: "Resolved",
      resultType: T.array(T.map(T.IntegerType, T.IntegerType), false),
      nullable: false,
      castArgsTo: [undefined]
    })
    expect(resolveAggregate("collect_set", [T.DoubleType], false, {})).toMatchObject({
      resultType: T.array(T.DoubleType, false),
      nullable: false
    })
    // Spark: SELECT collect_set(m) FROM VALUES (map(1,2)); SELECT collect_set(a) FROM VALUES (array(map(1,2)))
    for (const t of [T.map(T.IntegerType, T.IntegerType), T.array(T.map(T.IntegerType, T.IntegerType))]) {
      const a = attribute("a", t)
      expect(resolveAggregate("collect_set", [t], false, {}, [a])).toEqual({
        _tag: "Invalid",
        message:
          '[DATATYPE_MISMATCH.UNSUPPORTED_INPUT_TYPE] Cannot resolve "collect_set(a)" due to data type mismatch: The input of `collect_set` can\'t be "MAP" or "COLLATED STRING" type data.'
      })
    }
  })

  it("types approx_count_distinct as a non-null bigint and checks rsd", () => {
    // Spark: SELECT approx_count_distinct(m) FROM VALUES (map(1,2)) -> 1
    expect(resolveAggregate("approx_count_distinct", [T.map(T.IntegerType, T.IntegerType)], false, {})).toEqual({
      _tag: "Resolved",
      resultType: T.LongType,
      nullable: false,
      castArgsTo: [undefined]
    })
    expect(resolveAggregate("approx_count_distinct", [T.LongType], false, { rsd: 0.39 })._tag).toBe("Resolved")
    // Spark: approx_count_distinct(x, 0.4) fails (fewer than 4 bits)
    expect(resolveAggregate("approx_count_distinct", [T.LongType], false, { rsd: 0.4 })).toEqual({
      _tag: "Invalid",
      message: "requirement failed: HLL++ requires at least 4 bits for addressing. Use a lower error, at most 39%."
    })
  })

  it("checks the number of arguments", () => {
    expect(resolveAggregate("sum", [T.IntegerType, T.IntegerType], false, {})).toMatchObject({
      _tag: "Invalid",
      message: expect.stringContaining(
        "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `sum` requires 1 parameters but the actual number is 2."
      )
    })
  })

  it("quotes types as Spark's DataType.sql", () => {
    expect(dataTypeSql(T.LongType)).toBe("BIGINT")
    expect(dataTypeSql(T.map(T.StringType, T.array(T.IntegerType)))).toBe("MAP<STRING, ARRAY<INT>>")
    expect(dataTypeSql(T.struct([T.field("a b", T.DoubleType), T.field("c", T.DateType, false)]))).toBe(
      "STRUCT<`a b`: DOUBLE, c: DATE NOT NULL>"
    )
  })
})

describe("aggregates over rows (Spark 4.0.0 results)", () => {
  it("count, sum, avg, min and max skip nulls", () => {
    // Spark: SELECT sum(x), avg(x), count(x), count(1), min(x), max(x) FROM VALUES (1), (2), (NULL) -> [3,1.5,2,3,1,2]
    const xs = [1, 2, null]
    expect(over("sum", T.IntegerType, xs)).toBe(3)
    expect(over("avg", T.IntegerType, xs)).toBe(1.5)
    expect(over("count", T.IntegerType, xs)).toBe(2)
    expect(over("count", T.IntegerType, [1, 1, 1])).toBe(3) // count(1): the literal is never null
    expect(over("min", T.IntegerType, xs)).toBe(1)
    expect(over("max", T.IntegerType, xs)).toBe(2)
  })

  it("gives Spark's empty-input results", () => {
    // Spark: ... FROM VALUES (1) AS t(x) WHERE x > 5 -> [null,null,0,null,null,null,null,[],[],0]
    const empty = ALL.map((name) => over(name, T.IntegerType, []))
    expect(empty).toEqual([0, null, null, null, null, null, null, [], [], 0])
    const emptyDistinct = (["count", "sum", "avg", "collect_list"] as const).map((name) =>
      over(name, T.IntegerType, [], { distinct: true })
    )
    expect(emptyDistinct).toEqual([0, null, null, []])
  })

  it("gives Spark's all-null results", () => {
    // Spark: SELECT count(*), count(x), sum(x), avg(x), min(x), first(x), collect_list(x), count(DISTINCT x),
    //        sum(DISTINCT x) FROM VALUES (CAST(NULL AS INT)), (CAST(NULL AS INT)) -> [2,0,null,null,null,null,[],0,null]
    const xs = [null, null]
    expect([
      over("count", T.IntegerType, [1, 1]),
      over("count", T.IntegerType, xs),
      over("sum", T.IntegerType, xs),
      over("avg", T.IntegerType, xs),
      over("min", T.IntegerType, xs),
      over("first", T.IntegerType, xs),
      over("collect_list", T.IntegerType, xs),
      over("count", T.IntegerType, xs, { distinct: true }),
      over("sum", T.IntegerType, xs, { distinct: true })
    ]).toEqual([2, 0, null, null, null, null, [], 0, null])
    // Spark: SELECT first(x, true), last(x, true), first(x), last(x) ... all null -> [null,null,null,null]
    expect([
      over("first", T.IntegerType, xs, { ignoreNulls: true }),
      over("last", T.IntegerType, xs, { ignoreNulls: true }),
      over("last", T.IntegerType, xs)
    ]).toEqual([null, null, null])
    // Spark: SELECT sum(NULL), avg(NULL), min(NULL), first(NULL), collect_list(NULL), approx_count_distinct(NULL), count(NULL)
    expect([
      over("sum", T.DoubleType, [null]),
      over("min", T.NullType, [null]),
      over("collect_list", T.NullType, [null]),
      over("approx_count_distinct", T.NullType, [null]),
      over("count", T.NullType, [null])
    ]).toEqual([null, null, [], 0, 0])
  })

  it("adds doubles in input order, with NaN and infinities as IEEE arithmetic gives them", () => {
    // Spark: SELECT sum(x), avg(x) FROM VALUES (0.1D), (0.2D), (0.3D) -> [0.6000000000000001,0.20000000000000004]
    expect(over("sum", T.DoubleType, [0.1, 0.2, 0.3])).toBe(0.6000000000000001)
    expect(over("avg", T.DoubleType, [0.1, 0.2, 0.3])).toBe(0.20000000000000004)
    // Spark: SELECT sum(x), avg(x), min(x), max(x) FROM VALUES (1.0D), (Infinity), (-Infinity) -> [NaN,NaN,-Infinity,Infinity]
    const xs = [1, Infinity, -Infinity]
    expect(["sum", "avg", "min", "max"].map((n) => over(n as AggregateName, T.DoubleType, xs))).toEqual([
      Number.NaN,
      Number.NaN,
      -Infinity,
      Infinity
    ])
    // Spark: SELECT sum(x), avg(x) FROM VALUES (-0.0D) -> [0.0,0.0] (sum starts from 0.0)
    expect(Object.is(over("sum", T.DoubleType, [-0]), 0)).toBe(true)
    expect(Object.is(over("avg", T.DoubleType, [-0]), 0)).toBe(true)
  })

  it("sums integers into a bigint that wraps on overflow, as Spark without ANSI mode", () => {
    // Spark: SELECT sum(x), typeof(sum(x)) FROM VALUES (2147483647), (1) -> [2147483648,bigint]
    expect(over("sum", T.IntegerType, [2147483647, 1])).toBe(2147483648)
    // Spark: SELECT sum(x) FROM VALUES (4611686018427387904L) x3 -> -4611686018427387904
    expect(over("sum", T.LongType, [2n ** 62n, 2n ** 62n, 2n ** 62n])).toBe(-(2n ** 62n))
    // Spark: SELECT sum(x) FROM VALUES (-9223372036854775808L), (-1L) -> 9223372036854775807
    expect(over("sum", T.LongType, [-(2n ** 63n), -1])).toBe(9223372036854775807n)
    // Beyond 2^53 the sum is exact: 2^53 + 1 + 1 - 2 = 2^53.
    expect(over("sum", T.LongType, [2n ** 53n, 1, 1, -2])).toBe(2n ** 53n)
    // Spark: SELECT avg(x) FROM VALUES (9223372036854775807L) x2 -> 9.223372036854776E18 (avg adds doubles)
    expect(over("avg", T.LongType, [9223372036854775807n, 9223372036854775807n])).toBe(9.223372036854776e18)
  })

  it("orders min and max as Spark: NaN above everything, ties keep the first value", () => {
    // Spark: SELECT min(x), max(x) FROM VALUES (0.0D), (NaN), (1.0D) -> [0.0,NaN]
    expect(over("min", T.DoubleType, [0, Number.NaN, 1])).toBe(0)
    expect(over("max", T.DoubleType, [0, Number.NaN, 1])).toBeNaN()
    // Spark: SELECT min(x), max(x) FROM VALUES (-0.0D), (0.0D) -> [-0.0,-0.0]
    expect(Object.is(over("min", T.DoubleType, [-0, 0]), -0)).toBe(true)
    expect(Object.is(over("max", T.DoubleType, [-0, 0]), -0)).toBe(true)
    // Spark: SELECT min(s), max(s) FROM VALUES ('b'), ('a'), ('B'), (NULL), ('é') -> [B,é]
    expect(over("min", T.StringType, ["b", "a", "B", null, "é"])).toBe("B")
    expect(over("max", T.StringType, ["b", "a", "B", null, "é"])).toBe("é")
    // Spark: SELECT min(b), max(b) FROM VALUES (true), (false), (NULL) -> [false,true]
    expect(over("min", T.BooleanType, [true, false, null])).toBe(false)
    expect(over("max", T.BooleanType, [true, false, null])).toBe(true)
    // Binary: unsigned bytes, a prefix first (X'01' < X'0100' < X'FF').
    const bin = [new Uint8Array([0xff]), new Uint8Array([1]), new Uint8Array([1, 0])]
    expect(over("min", T.BinaryType, bin)).toEqual(new Uint8Array([1]))
    expect(over("max", T.BinaryType, bin)).toEqual(new Uint8Array([0xff]))
  })

  it("orders arrays and structs element by element, nulls first", () => {
    // Spark: SELECT min(a), max(a), min(st), max(st) FROM VALUES (array(1,2), struct(1, 'a')), (array(1), struct(1, NULL))
    //        -> [[1], [1, 2], [1,null], [1,a]]
    const ints = T.array(T.IntegerType)
    const st = T.struct([T.field("col1", T.IntegerType), T.field("col2", T.StringType)])
    expect(over("min", ints, [[1, 2], [1]])).toEqual([1])
    expect(over("max", ints, [[1, 2], [1]])).toEqual([1, 2])
    expect(
      over("min", st, [
        [1, "a"],
        [1, null]
      ])
    ).toEqual([1, null])
    expect(
      over("max", st, [
        [1, "a"],
        [1, null]
      ])
    ).toEqual([1, "a"])
    // Spark: SELECT min(a), max(a) FROM VALUES (array(1, NULL)), (array(1, 2)), (array(NULL)) -> [[null], [1, 2]]
    expect(over("min", ints, [[1, null], [1, 2], [null]])).toEqual([null])
    expect(over("max", ints, [[1, null], [1, 2], [null]])).toEqual([1, 2])
  })

  it("takes first and last in input order, optionally skipping nulls", () => {
    // Spark: SELECT first(x), last(x), first(x, true), last(x, true) FROM VALUES (NULL), (1), (2), (NULL) -> [null,null,1,2]
    const xs = [null, 1, 2, null]
    expect([
      over("first", T.IntegerType, xs),
      over("last", T.IntegerType, xs),
      over("first", T.IntegerType, xs, { ignoreNulls: true }),
      over("last", T.IntegerType, xs, { ignoreNulls: true })
    ]).toEqual([null, null, 1, 2])
    // Spark: SELECT first(x), last(x) FROM VALUES (map(1,2)) -> [Map(1 -> 2),Map(1 -> 2)]
    const m = T.map(T.IntegerType, T.IntegerType)
    expect(over("first", m, [new Map([[1, 2]])])).toEqual(new Map([[1, 2]]))
  })

  it("collects lists in input order and sets without duplicates, skipping nulls", () => {
    // Spark: SELECT collect_list(x), collect_set(x) FROM VALUES (3), (1), (NULL), (3), (2) -> [[3, 1, 3, 2], [1, 2, 3]]
    const xs = [3, 1, null, 3, 2]
    expect(over("collect_list", T.IntegerType, xs)).toEqual([3, 1, 3, 2])
    // Spark's set order is unspecified; tributary keeps the first-seen order.
    expect(over("collect_set", T.IntegerType, xs)).toEqual([3, 1, 2])
    // Spark: SELECT collect_set(a) FROM VALUES (array(1,2)), (array(1,2)), (array(2)), (NULL) -> [[2], [1, 2]]
    expect(over("collect_set", T.array(T.IntegerType), [[1, 2], [1, 2], [2], null])).toEqual([[1, 2], [2]])
    // Spark: SELECT collect_list(m) FROM VALUES (map(1,2)), (NULL) -> [Map(1 -> 2)]
    expect(over("collect_list", T.map(T.IntegerType, T.IntegerType), [new Map([[1, 2]]), null])).toEqual([
      new Map([[1, 2]])
    ])
  })

  // issue #21 deviation 5, found by the random differential run against Spark 4.2: collect_set
  // of doubles folds NaNs into one and -0.0 into 0.0 (Spark 4.2 gives [0.0, NaN]; Spark 3's
  // OpenHashSet with Scala's == kept every NaN)
  it("collect_set of doubles folds NaNs into one and -0.0 into 0.0, as Spark 4.2", () => {
    const a = over("collect_set", T.DoubleType, [0, -0, Number.NaN, Number.NaN]) as Array<number>
    expect(a).toEqual([0, Number.NaN])
    expect(Object.is(a[0], 0)).toBe(true)
    const b = over("collect_set", T.DoubleType, [-0, 0, 1]) as Array<number>
    expect(b).toEqual([0, 1])
    expect(Object.is(b[0], 0)).toBe(true)
    // EliminateDistinct drops DISTINCT from collect_set; count's DISTINCT groups NaNs.
    expect(over("collect_set", T.DoubleType, [Number.NaN, Number.NaN], { distinct: true })).toEqual([Number.NaN])
    expect(over("count", T.DoubleType, [Number.NaN, Number.NaN], { distinct: true })).toBe(1)
  })

  it("aggregates DISTINCT values for count, sum, avg and collect_list", () => {
    // Spark: SELECT count(DISTINCT x), sum(DISTINCT x), avg(DISTINCT x), collect_list(DISTINCT x)
    //        FROM VALUES (1), (1), (2), (NULL) -> [2,3,1.5,[1, 2]]
    const xs = [1, 1, 2, null]
    expect(
      (["count", "sum", "avg", "collect_list"] as const).map((n) => over(n, T.IntegerType, xs, { distinct: true }))
    ).toEqual([2, 3, 1.5, [1, 2]])
    // Spark: SELECT count(DISTINCT x), sum(DISTINCT x), avg(DISTINCT x) FROM VALUES (0.0D), (-0.0D), (NaN), (NaN), (1.0D) -> [3,NaN,NaN]
    const ds = [0, -0, Number.NaN, Number.NaN, 1]
    expect((["count", "sum", "avg"] as const).map((n) => over(n, T.DoubleType, ds, { distinct: true }))).toEqual([
      3,
      Number.NaN,
      Number.NaN
    ])
    // Spark: SELECT collect_list(DISTINCT x), sum(DISTINCT x) FROM VALUES (-0.0D), (0.0D) -> [[0.0],0.0]
    // (distinct grouping normalises -0.0 to 0.0)
    const zeros = over("collect_list", T.DoubleType, [-0, 0], { distinct: true }) as Array<number>
    expect(zeros).toEqual([0])
    expect(Object.is(zeros[0], 0)).toBe(true)
    // min, max, first, last and approx_count_distinct are unchanged by DISTINCT.
    // Spark: SELECT approx_count_distinct(DISTINCT x), approx_count_distinct(x) FROM VALUES (1), (1), (2), (NULL) -> [2,2]
    expect(over("approx_count_distinct", T.IntegerType, xs, { distinct: true })).toBe(2)
    expect(over("max", T.IntegerType, xs, { distinct: true })).toBe(2)
    expect(over("first", T.IntegerType, [null, 1], { distinct: true })).toBe(null)
  })

  it("counts distinct tuples without nulls over several columns", () => {
    // Spark: SELECT count(DISTINCT a, b) FROM VALUES (1, 1), (1, 1), (1, NULL), (NULL, NULL), (2, 1) -> 2
    const rows = [
      [1, 1],
      [1, 1],
      [1, null],
      [null, null],
      [2, 1]
    ]
    expect(run(agg("count", [T.IntegerType, T.IntegerType], { distinct: true }), rows)).toBe(2)
    expect(run(agg("count", [T.IntegerType, T.IntegerType]), rows)).toBe(3)
  })

  it("compares nested values in count(DISTINCT)", () => {
    // Spark: SELECT count(DISTINCT x) FROM VALUES (array(1, NULL)), (array(1, NULL)), (array(1)) -> 2
    expect(over("count", T.array(T.IntegerType), [[1, null], [1, null], [1]], { distinct: true })).toBe(2)
    // Spark: SELECT count(DISTINCT m) FROM VALUES (map(1,2)) -> 1
    const m = T.map(T.IntegerType, T.IntegerType)
    expect(over("count", m, [new Map([[1, 2]]), new Map([[1, 2]])], { distinct: true })).toBe(1)
  })

  it("estimates distinct counts with Spark's HyperLogLog++", () => {
    // Spark: SELECT approx_count_distinct(id) FROM range(1000) -> 1026; (id, 0.01) -> 996
    const ids = Array.from({ length: 1000 }, (_, i) => i)
    expect(over("approx_count_distinct", T.LongType, ids)).toBe(1026)
    expect(over("approx_count_distinct", T.LongType, ids, { rsd: 0.01 })).toBe(996)
    expect(over("approx_count_distinct", T.StringType, ["a", "b", null, "a"])).toBe(2)
    // Spark: SELECT approx_count_distinct(x) FROM VALUES (0.0D), (-0.0D), (NaN), (NaN) -> 2
    expect(over("approx_count_distinct", T.DoubleType, [0, -0, Number.NaN, Number.NaN])).toBe(2)
  })

  it("returns results that later updates do not change", () => {
    for (const name of ["collect_list", "collect_set"] as const) {
      const impl = agg(name, [T.IntegerType])
      const b = feed(impl, col([1, 2]))
      const before = impl.evaluate(b)
      impl.update(b, [3])
      expect(before).toEqual([1, 2])
    }
  })
})

// ---------------------------------------------------------------------------------------------
// Properties: merge equivalence and JSON round trips
// ---------------------------------------------------------------------------------------------

interface Case {
  readonly label: string
  readonly name: AggregateName
  readonly type: T.DataType
  readonly options?: Options
  readonly value: fc.Arbitrary<unknown>
}

const withNulls = <A>(a: fc.Arbitrary<A>): fc.Arbitrary<A | null> => fc.option(a, { nil: null, freq: 4 })
// Small integers as doubles keep sums exact whatever the grouping, so merge order cannot matter.
const smallDouble = fc.integer({ min: -1000, max: 1000 }).map((i) => i / 4)
// Doubles with the special values min, max, first, last and collect care about.
const specialDouble = fc.oneof(
  fc.constantFrom(0, -0, Number.NaN, Infinity, -Infinity, 1.5, -1.5),
  fc.double({ noDefaultInfinity: false })
)
const word = fc.constantFrom("a", "b", "c", "é", "日本", "", "a b")
const bytes = fc.uint8Array({ maxLength: 4 })
const structType = T.struct([T.field("i", T.IntegerType), T.field("s", T.StringType)])
const structValue = fc.tuple(withNulls(fc.integer({ min: -3, max: 3 })), withNulls(word))
const mapType = T.map(T.StringType, T.DoubleType)
const mapValue = fc.array(fc.tuple(word, withNulls(specialDouble)), { maxLength: 3 }).map((entries) => new Map(entries))

const CASES: ReadonlyArray<Case> = [
  { label: "count", name: "count", type: T.StringType, value: word },
  { label: "count DISTINCT", name: "count", type: T.DoubleType, options: { distinct: true }, value: specialDouble },
  { label: "sum of ints", name: "sum", type: T.IntegerType, value: fc.integer() },
  {
    label: "sum of longs that overflow",
    name: "sum",
    type: T.LongType,
    value: fc.constantFrom(2 ** 62, -(2 ** 62), 2 ** 53, 1, -7)
  },
  { label: "sum of doubles", name: "sum", type: T.DoubleType, value: smallDouble },
  {
    label: "sum DISTINCT",
    name: "sum",
    type: T.IntegerType,
    options: { distinct: true },
    value: fc.integer({ min: -5, max: 5 })
  },
  { label: "avg", name: "avg", type: T.DoubleType, value: smallDouble },
  {
    label: "avg DISTINCT",
    name: "avg",
    type: T.LongType,
    options: { distinct: true },
    value: fc.integer({ min: -5, max: 5 })
  },
  { label: "min of doubles", name: "min", type: T.DoubleType, value: specialDouble },
  { label: "max of doubles", name: "max", type: T.DoubleType, value: specialDouble },
  { label: "max of strings", name: "max", type: T.StringType, value: word },
  { label: "min of structs", name: "min", type: structType, value: structValue },
  { label: "first", name: "first", type: T.DoubleType, value: specialDouble },
  { label: "first ignoring nulls", name: "first", type: T.StringType, options: { ignoreNulls: true }, value: word },
  { label: "last", name: "last", type: T.BinaryType, value: bytes },
  {
    label: "last ignoring nulls",
    name: "last",
    type: T.DoubleType,
    options: { ignoreNulls: true },
    value: specialDouble
  },
  { label: "collect_list of maps", name: "collect_list", type: mapType, value: mapValue },
  {
    label: "collect_list DISTINCT",
    name: "collect_list",
    type: T.DoubleType,
    options: { distinct: true },
    value: specialDouble
  },
  { label: "collect_set of doubles", name: "collect_set", type: T.DoubleType, value: specialDouble },
  { label: "collect_set of structs", name: "collect_set", type: structType, value: structValue },
  { label: "collect_set of binary", name: "collect_set", type: T.BinaryType, value: bytes },
  {
    label: "approx_count_distinct",
    name: "approx_count_distinct",
    type: T.LongType,
    value: fc.integer({ min: 0, max: 5000 })
  },
  {
    label: "approx_count_distinct of strings, rsd 0.3",
    name: "approx_count_distinct",
    type: T.StringType,
    options: { rsd: 0.3 },
    value: fc.string()
  }
]

/** Values and cut points that split them into consecutive chunks. */
const splitValues = (value: fc.Arbitrary<unknown>) =>
  fc.array(withNulls(value), { maxLength: 60 }).chain((values) =>
    fc.tuple(
      fc.constant(values),
      fc
        .uniqueArray(fc.integer({ min: 0, max: values.length }), { maxLength: 4 })
        .map((cuts) => [...cuts].sort((a, b) => a - b))
    )
  )

const chunks = <A>(values: ReadonlyArray<A>, cuts: ReadonlyArray<number>): Array<Array<A>> => {
  const out: Array<Array<A>> = []
  let start = 0
  for (const c of [...cuts, values.length]) {
    out.push(values.slice(start, c))
    start = c
  }
  return out
}

describe("merge equivalence: update over chunks, then merge == update over all", () => {
  for (const c of CASES) {
    it(c.label, () => {
      const impl = agg(c.name, [c.type], c.options)
      fc.assert(
        fc.property(splitValues(c.value), ([values, cuts]) => {
          const whole = impl.evaluate(feed(impl, col(values)))
          const parts = chunks(values, cuts).map((vs) => feed(impl, col(vs)))
          const merged = parts.reduce((a, b) => impl.merge(a, b), impl.init())
          expect(impl.evaluate(merged)).toEqual(whole)
          // Merging into a fresh buffer from the right works too.
          expect(impl.evaluate(impl.merge(feed(impl, col(values)), impl.init()))).toEqual(whole)
        }),
        { numRuns: 150 }
      )
    })
  }

  it("merges count(DISTINCT a, b) over several columns", () => {
    const impl = agg("count", [T.IntegerType, T.StringType], { distinct: true })
    const row = fc.tuple(withNulls(fc.integer({ min: 0, max: 4 })), withNulls(word))
    fc.assert(
      fc.property(fc.array(row, { maxLength: 50 }), fc.nat(50), (rows, cut) => {
        const k = Math.min(cut, rows.length)
        const merged = impl.merge(feed(impl, rows.slice(0, k)), feed(impl, rows.slice(k)))
        expect(impl.evaluate(merged)).toBe(impl.evaluate(feed(impl, rows)))
      })
    )
  })
})

describe("toJSON / fromJSON", () => {
  for (const c of CASES) {
    it(`round-trips ${c.label} through JSON text, and the buffer keeps working`, () => {
      const impl = agg(c.name, [c.type], c.options)
      fc.assert(
        fc.property(splitValues(c.value), ([values, cuts]) => {
          const [head, ...rest] = chunks(values, cuts)
          const buffer = feed(impl, col(head))
          const json = impl.toJSON(buffer)
          // JSON-safe: the text parses back to the same data (no NaN/Infinity/undefined/Map lost).
          const text = JSON.stringify(json)
          expect(JSON.parse(text)).toEqual(json)
          const back = impl.fromJSON(JSON.parse(text))
          expect(impl.evaluate(back)).toEqual(impl.evaluate(buffer))
          const tail = col(rest.flat())
          expect(impl.evaluate(feed(impl, tail, back))).toEqual(impl.evaluate(feed(impl, tail, buffer)))
        }),
        { numRuns: 100 }
      )
    })
  }

  it("keeps NaN, ±Infinity and -0 in double buffers", () => {
    for (const v of [Number.NaN, Infinity, -Infinity, -0]) {
      for (const name of ["min", "max", "first", "last"] as const) {
        const impl = agg(name, [T.DoubleType])
        const back = roundTrip(impl, feed(impl, col([v])))
        expect(Object.is(impl.evaluate(back), v)).toBe(true)
      }
      const sum = agg("sum", [T.DoubleType])
      expect(sum.evaluate(roundTrip(sum, feed(sum, col([1, v]))))).toEqual(1 + v)
    }
    expect(
      [Number.NaN, Infinity, -Infinity, -0, 0, 1.5].map((v) =>
        decodeNumber(JSON.parse(JSON.stringify(encodeNumber(v))))
      )
    ).toEqual([Number.NaN, Infinity, -Infinity, -0, 0, 1.5])
  })

  it("keeps a wrapped 64-bit sum exact", () => {
    const impl = agg("sum", [T.LongType])
    const b = feed(impl, col([2 ** 62, 2 ** 62, 2 ** 62]))
    const back = roundTrip(impl, b)
    expect(impl.evaluate(feed(impl, col([2 ** 62]), back))).toBe(0)
  })

  it("keeps sets as sets: order, dedup and Spark's NaN and -0.0 rules survive", () => {
    const impl = agg("collect_set", [T.DoubleType])
    const back = roundTrip(impl, feed(impl, col([3, Number.NaN, 3, -0, Number.NaN])))
    const set = impl.evaluate(feed(impl, col([0, 3, 4]), back)) as Array<number>
    expect(set).toEqual([3, Number.NaN, 0, 4])
    expect(Object.is(set[2], 0)).toBe(true)
    const distinct = agg("count", [T.StringType], { distinct: true })
    const d = roundTrip(distinct, feed(distinct, col(["x", "y", "x"])))
    expect(distinct.evaluate(feed(distinct, col(["y", "z"]), d))).toBe(3)
  })

  it("encodes HyperLogLog++ registers sparsely when few are set and densely otherwise", () => {
    const impl = agg("approx_count_distinct", [T.LongType])
    const small = impl.toJSON(feed(impl, col([1, 2, 3]))) as { p: number; sparse?: Array<number> }
    expect(small.p).toBe(9)
    expect(small.sparse).toHaveLength(6)
    const large = impl.toJSON(feed(impl, col(Array.from({ length: 5000 }, (_, i) => i)))) as { dense?: string }
    expect(typeof large.dense).toBe("string")
    expect(impl.evaluate(impl.fromJSON(JSON.parse(JSON.stringify(large))))).toBe(4671) // Spark: range(5000) -> 4671
    // A sketch of another precision is refused rather than misread.
    const other = agg("approx_count_distinct", [T.LongType], { rsd: 0.01 })
    expect(() => other.fromJSON(small)).toThrow(/p = 14/)
  })
})

describe("makeAggregate", () => {
  it("reports its result type", () => {
    expect(agg("sum", [T.IntegerType]).resultType).toEqual(T.LongType)
    expect(agg("avg", [T.IntegerType]).resultType).toEqual(T.DoubleType)
    expect(agg("collect_set", [T.StringType]).resultType).toEqual(T.array(T.StringType, false))
    expect(agg("count", [T.StringType], { distinct: true }).resultType).toEqual(T.LongType)
    expect(agg("approx_count_distinct", [T.StringType]).resultType).toEqual(T.LongType)
  })

  it("refuses a call the analyzer should have rejected", () => {
    expect(() => agg("sum", [T.BooleanType])).toThrow(/UNEXPECTED_INPUT_TYPE/)
  })
})
