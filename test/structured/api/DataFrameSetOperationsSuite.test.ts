/**
 * `intersect`, `intersectAll`, `except` / `subtract`, `exceptAll` against Spark's
 * `DataFrameSetOperationsSuite` (sql/core/src/test/scala/org/apache/spark/sql/), its analysis
 * errors (`NUM_COLUMNS_MISMATCH`, `INCOMPATIBLE_COLUMN_TYPE`, `SET_OPERATION_ON_MAP_TYPE`), the
 * streaming refusals of its `UnsupportedOperationChecker`, and a fast-check differential run
 * against DuckDB's `INTERSECT [ALL]` / `EXCEPT [ALL]` over random tables with nulls and
 * duplicates.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fc from "fast-check"
import * as T from "../../../core/DataType.ts"
import type { AnalysisError } from "../../../core/Errors.ts"
import { rowsToInternal } from "../../../core/Row.ts"
import { type DataFrame, F, MemoryStream, type Row, Session } from "../../../mod.ts"
import * as DuckDB from "../../../state/DuckDB.ts"

type Spark = Effect.Success<typeof Session>

// Spark's SQLTestData
const lowerCaseData = (spark: Spark) =>
  spark.createDataFrame(
    [1, 2, 3, 4].map((n, i) => ({ n, l: "abcd"[i] })),
    "n int, l string"
  )
const upperCaseData = (spark: Spark) =>
  spark.createDataFrame(
    [1, 2, 3, 4, 5, 6].map((N, i) => ({ N, L: "ABCDEF"[i] })),
    "N int, L string"
  )
const lowerCaseDataWithDuplicates = (spark: Spark) =>
  spark.createDataFrame(
    [
      [1, "a"],
      [2, "b"],
      [2, "b"],
      [3, "c"],
      [3, "c"],
      [3, "c"],
      [4, "d"]
    ].map(([n, l]) => ({ n, l })),
    "n int, l string"
  )
const nullInts = (spark: Spark) => spark.createDataFrame([1, 2, 3, null].map((a) => ({ a })), "a int")
const allNulls = (spark: Spark) => spark.createDataFrame([null, null, null, null].map((a) => ({ a })), "a int")
const nonNullableInts = (spark: Spark, values: ReadonlyArray<number>) =>
  spark.createDataFrame(
    values.map((value) => ({ value })),
    T.struct([T.field("value", T.IntegerType, false)])
  )
const none = <R>(df: DataFrame<R>) => df.filter(F.lit(false))

const rows = <R>(df: DataFrame<R>) => Effect.map(df.collect(), (r) => r.map((x) => Object.values(x as object)))
const check = <R>(df: DataFrame<R>, expected: ReadonlyArray<ReadonlyArray<unknown>>) =>
  Effect.map(rows(df), (actual) => assert.sameDeepMembers(actual, expected as Array<Array<unknown>>))
const nullable = <R>(df: DataFrame<R>) => df.schema.fields.map((f) => f.nullable)

describe("DataFrameSetOperationsSuite", () => {
  it.effect("except", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* check(lowerCaseData(spark).except(upperCaseData(spark)), [
        [1, "a"],
        [2, "b"],
        [3, "c"],
        [4, "d"]
      ])
      yield* check(lowerCaseData(spark).except(lowerCaseData(spark)), [])
      yield* check(upperCaseData(spark).except(upperCaseData(spark)), [])
      // check null equality
      yield* check(nullInts(spark).except(none(nullInts(spark))), [[1], [2], [3], [null]])
      yield* check(nullInts(spark).except(nullInts(spark)), [])
      // check if values are de-duplicated
      yield* check(allNulls(spark).except(none(allNulls(spark))), [[null]])
      yield* check(allNulls(spark).except(allNulls(spark)), [])
      const df = spark.createDataFrame(
        [
          ["id1", 1],
          ["id1", 1],
          ["id", 1],
          ["id1", 2]
        ].map(([id, value]) => ({ id, value })),
        "id string, value int"
      )
      yield* check(df.except(none(df)), [
        ["id1", 1],
        ["id", 1],
        ["id1", 2]
      ])
      // check if the empty set on the left side works
      yield* check(none(allNulls(spark)).except(allNulls(spark)), [])
      // subtract is pyspark's name for it
      yield* check(nullInts(spark).subtract(allNulls(spark)), [[1], [2], [3]])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-23274: except between two projects without references used in filter", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame(
        [
          [1, 2, 4],
          [1, 3, 5],
          [2, 2, 3],
          [2, 4, 5]
        ].map(([a, b, c]) => ({ a, b, c })),
        "a int, b int, c int"
      )
      const df1 = df.filter(F.col("a").eq(1))
      const df2 = df.filter(F.col("a").eq(2))
      yield* check(df1.select("b").except(df2.select("b")), [[3]])
      yield* check(df1.select("b").except(df2.select("c") as never), [[2]])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("except distinct - SQL compliance", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const left = spark.createDataFrame([1, 2, 2, 3, 3, 4].map((id) => ({ id })), "id int")
      const right = spark.createDataFrame([1, 3].map((id) => ({ id })), "id int")
      yield* check(left.except(right), [[2], [4]])
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const [name, op] of [
    ["except - nullability", "except"],
    ["exceptAll - nullability", "exceptAll"]
  ] as const) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const nn = nonNullableInts(spark, [11, 3])
        assert.deepStrictEqual(nullable(nn), [false])
        const df1 = nn[op](nullInts(spark))
        yield* check(df1, [[11]])
        assert.deepStrictEqual(nullable(df1), [false])
        const df2 = nullInts(spark)[op](nn)
        yield* check(df2, [[1], [2], [null]])
        assert.deepStrictEqual(nullable(df2), [true])
        const df3 = nullInts(spark)[op](nullInts(spark))
        yield* check(df3, [])
        assert.deepStrictEqual(nullable(df3), [true])
        const df4 = nn[op](nn)
        yield* check(df4, [])
        assert.deepStrictEqual(nullable(df4), [false])
      }).pipe(Effect.provide(Session.layer()))
    )
  }

  it.effect("except all", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* check(lowerCaseData(spark).exceptAll(upperCaseData(spark)), [
        [1, "a"],
        [2, "b"],
        [3, "c"],
        [4, "d"]
      ])
      yield* check(lowerCaseData(spark).exceptAll(lowerCaseData(spark)), [])
      // check null equality
      yield* check(nullInts(spark).exceptAll(none(nullInts(spark))), [[1], [2], [3], [null]])
      yield* check(nullInts(spark).exceptAll(nullInts(spark)), [])
      // check that duplicate values are preserved
      yield* check(allNulls(spark).exceptAll(none(allNulls(spark))), [[null], [null], [null], [null]])
      yield* check(allNulls(spark).exceptAll(allNulls(spark).limit(2)), [[null], [null]])
      const df = spark.createDataFrame(
        [
          [1, "id1"],
          [1, "id1"],
          [2, "id1"],
          [3, null]
        ].map(([id, value]) => ({ id, value })),
        "id int, value string"
      )
      yield* check(df.exceptAll(none(df)), [
        [1, "id1"],
        [1, "id1"],
        [2, "id1"],
        [3, null]
      ])
      yield* check(none(allNulls(spark)).exceptAll(allNulls(spark)), [])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("intersect", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* check(lowerCaseData(spark).intersect(lowerCaseData(spark)), [
        [1, "a"],
        [2, "b"],
        [3, "c"],
        [4, "d"]
      ])
      yield* check(lowerCaseData(spark).intersect(upperCaseData(spark)), [])
      yield* check(nullInts(spark).intersect(nullInts(spark)), [[1], [2], [3], [null]])
      yield* check(allNulls(spark).intersect(allNulls(spark)), [[null]])
      const df = spark.createDataFrame(
        [
          ["id1", 1],
          ["id1", 1],
          ["id", 1],
          ["id1", 2]
        ].map(([id, value]) => ({ id, value })),
        "id string, value int"
      )
      yield* check(df.intersect(df), [
        ["id1", 1],
        ["id", 1],
        ["id1", 2]
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const [name, op] of [
    ["intersect - nullability", "intersect"],
    ["intersectAll - nullability", "intersectAll"]
  ] as const) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const nn = nonNullableInts(spark, [1, 3])
        const df1 = nn[op](nullInts(spark))
        yield* check(df1, [[1], [3]])
        assert.deepStrictEqual(nullable(df1), [false])
        const df2 = nullInts(spark)[op](nn)
        yield* check(df2, [[1], [3]])
        assert.deepStrictEqual(nullable(df2), [false])
        const df3 = nullInts(spark)[op](nullInts(spark))
        yield* check(df3, [[1], [2], [3], [null]])
        assert.deepStrictEqual(nullable(df3), [true])
        const df4 = nn[op](nn)
        yield* check(df4, [[1], [3]])
        assert.deepStrictEqual(nullable(df4), [false])
      }).pipe(Effect.provide(Session.layer()))
    )
  }

  it.effect("intersectAll", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dup = lowerCaseDataWithDuplicates(spark)
      yield* check(dup.intersectAll(lowerCaseDataWithDuplicates(spark)), [
        [1, "a"],
        [2, "b"],
        [2, "b"],
        [3, "c"],
        [3, "c"],
        [3, "c"],
        [4, "d"]
      ])
      yield* check(lowerCaseData(spark).intersectAll(upperCaseData(spark)), [])
      yield* check(nullInts(spark).intersectAll(nullInts(spark)), [[1], [2], [3], [null]])
      // Duplicate nulls are preserved.
      yield* check(allNulls(spark).intersectAll(allNulls(spark)), [[null], [null], [null], [null]])
      const left = spark.createDataFrame([1, 2, 2, 3, 3, 4].map((id) => ({ id })), "id int")
      const right = spark.createDataFrame([1, 2, 2, 3].map((id) => ({ id })), "id int")
      yield* check(left.intersectAll(right), [[1], [2], [2], [3]])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-10539: Project should not be pushed down through Intersect or Except", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const range = (n: number) => Array.from({ length: n }, (_, i) => ({ i: i + 1 }))
      const df1 = spark.createDataFrame(range(100), "i int")
      const df2 = spark.createDataFrame(range(30), "i int")
      assert.strictEqual(yield* df1.intersect(df2).count(), 30)
      assert.strictEqual(yield* df1.except(df2).count(), 70)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-17123: Performing set operations that combine non-scala native types (widening)", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const ints = spark.createDataFrame([1, 2, 3].map((x) => ({ x })), "x int")
      const doubles = spark.createDataFrame([2.0, 2.5].map((x) => ({ x })), "x double")
      const inter = ints.intersect(doubles)
      assert.deepStrictEqual(inter.dtypes, [["x", "double"]])
      yield* check(inter, [[2]])
      const exc = doubles.exceptAll(ints)
      assert.deepStrictEqual(exc.dtypes, [["x", "double"]])
      yield* check(exc, [[2.5]])
      // int and string widen to string, as in Spark's WidenSetOperationTypes
      const strs = spark.createDataFrame(["1", "x"].map((x) => ({ x })), "x string")
      yield* check(ints.intersect(strs), [["1"]])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-19893: cannot run set operations with map type", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame([{ id: 0 }], "id bigint").select(F.create_map(F.lit("key"), F.col("id")).as("m"))
      for (const result of [df.intersect(df), df.except(df)]) {
        const e = (yield* Effect.flip(result.collect())) as AnalysisError
        assert.strictEqual(e.errorClass, "UNSUPPORTED_FEATURE.SET_OPERATION_ON_MAP_TYPE")
        assert.include(e.message, "Cannot have MAP type columns in DataFrame which calls set operations")
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("distinct and dropDuplicates refuse a map column too (CheckAnalysis mapColumnInSetOperation)", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark
        .createDataFrame([{ id: 0 }, { id: 0 }], "id bigint")
        .select(F.col("id"), F.create_map(F.lit("key"), F.col("id")).as("m"))
      for (const result of [df.distinct(), df.dropDuplicates(["m"] as never), df.dropDuplicates()]) {
        const e = (yield* Effect.flip(result.collect())) as AnalysisError
        assert.strictEqual(e.errorClass, "UNSUPPORTED_FEATURE.SET_OPERATION_ON_MAP_TYPE")
        assert.include(e.message, "the type of column `m` is \"MAP<STRING, BIGINT>\"")
      }
      // keys without the map column deduplicate as usual
      yield* check(df.dropDuplicates(["id"] as never).select("id"), [[0]])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("NUM_COLUMNS_MISMATCH and INCOMPATIBLE_COLUMN_TYPE name the operator (CheckAnalysis)", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const two = spark.createDataFrame([{ a: 1, b: "x" }], "a int, b string")
      const one = spark.createDataFrame([{ a: 1 }], "a int")
      for (const [df, op] of [
        [two.intersect(one), "INTERSECT"],
        [two.intersectAll(one), "INTERSECTALL"],
        [two.except(one), "EXCEPT"],
        [two.exceptAll(one), "EXCEPTALL"]
      ] as const) {
        const e = (yield* Effect.flip(df.collect())) as AnalysisError
        assert.strictEqual(e.errorClass, "NUM_COLUMNS_MISMATCH")
        assert.strictEqual(
          e.message,
          `[NUM_COLUMNS_MISMATCH] ${op} can only be performed on inputs with the same number of columns, but the first input has 2 columns and the second input has 1 columns.`
        )
      }
      const arrays = spark.createDataFrame([{ a: [1] }], "a array<int>")
      const e = (yield* Effect.flip(one.intersect(arrays).collect())) as AnalysisError
      assert.strictEqual(e.errorClass, "INCOMPATIBLE_COLUMN_TYPE")
      assert.include(e.message, "INTERSECT can only be performed on tables with compatible column types.")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("-0.0 equals 0.0 and NaN equals NaN; values come out normalized (NormalizeFloatingNumbers)", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const a = spark.createDataFrame([-0.0, Number.NaN, 1.5].map((d) => ({ d })), "d double")
      const b = spark.createDataFrame([0.0, Number.NaN].map((d) => ({ d })), "d double")
      const inter = yield* rows(a.intersect(b))
      assert.sameDeepMembers(inter, [[0], [Number.NaN]])
      assert.isTrue(inter.every(([d]) => !Object.is(d, -0)))
      yield* check(a.except(b), [[1.5]])
      yield* check(a.exceptAll(b), [[1.5]])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("explain names the operator as Spark's analyzed plan does", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = nullInts(spark)
      assert.include(yield* df.intersectAll(df).explain(true), "IntersectAll true")
      assert.include(yield* df.except(df).explain(true), "Except false")
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("set operations on streaming DataFrames (UnsupportedOperationChecker)", () => {
  const startError = <R>(df: DataFrame<R>) =>
    Effect.map(Effect.flip(df.writeStream.format("noop").start()), (e) => e as AnalysisError)

  it.effect("Intersect of streaming DataFrames/Datasets is not supported (either side streaming)", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))
      const stream = input.toDF() as unknown as DataFrame<Row>
      const stat = spark.createDataFrame([{ value: 1 }], "value bigint")
      for (const df of [
        stream.intersect(stream),
        stream.intersect(stat),
        stat.intersect(stream),
        stream.intersectAll(stat)
      ]) {
        const e = yield* startError(df)
        assert.strictEqual(e.reason, "UnsupportedOperation")
        assert.include(e.message, "Intersect of streaming DataFrames/Datasets is not supported")
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("Except on a streaming DataFrame/Dataset on the right is not supported", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))
      const stream = input.toDF() as unknown as DataFrame<Row>
      const stat = spark.createDataFrame([{ value: 1 }], "value bigint")
      for (const df of [stat.except(stream), stream.exceptAll(stream)]) {
        const e = yield* startError(df)
        assert.include(e.message, "Except on a streaming DataFrame/Dataset on the right is not supported")
      }
      // Spark plans a streaming left side against a static right side; the local engine refuses it
      const e = yield* startError(stream.except(stat))
      assert.strictEqual(e.reason, "UnsupportedOperation")
      assert.include(e.message, "except of a streaming DataFrame/Dataset is not supported by the local engine")
    }).pipe(Effect.provide(Session.layer()))
  )
})

// ---- DuckDB differential ----------------------------------------------------------------------

type R3 = { k: number | null; s: string | null; d: number | null }
const DDL = "k int, s string, d double"
const row3 = fc.record({
  k: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null, freq: 4 }),
  s: fc.option(fc.constantFrom("a", "b", ""), { nil: null, freq: 4 }),
  d: fc.option(fc.constantFrom(0.5, 1, 2.25), { nil: null, freq: 4 })
})
const OPS = [
  ["intersect", "INTERSECT"],
  ["intersectAll", "INTERSECT ALL"],
  ["except", "EXCEPT"],
  ["exceptAll", "EXCEPT ALL"]
] as const

const canonical = (rs: ReadonlyArray<ReadonlyArray<unknown>>) => rs.map((r) => JSON.stringify(r)).sort()

describe("set operations vs DuckDB SQL", () => {
  it("random tables with nulls and duplicates give DuckDB's multisets", { timeout: 120_000 }, async () => {
    const schema = T.parseDDL(DDL)!
    await Effect.runPromise(
      DuckDB.withMemory((c) =>
        Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(
              fc.array(row3, { maxLength: 25 }),
              fc.array(row3, { maxLength: 25 }),
              fc.constantFrom(...OPS),
              fc.subarray(["k", "s", "d"] as const, { minLength: 1 }),
              (left: ReadonlyArray<R3>, right: ReadonlyArray<R3>, [op, sql], cols) =>
                Effect.runPromise(
                  Effect.gen(function* () {
                    const spark = yield* Session
                    yield* DuckDB.createTable(c, "l", schema, rowsToInternal(schema, left)).pipe(Effect.orDie)
                    yield* DuckDB.createTable(c, "r", schema, rowsToInternal(schema, right)).pipe(Effect.orDie)
                    const list = cols.map(DuckDB.quoteIdentifier).join(", ")
                    const expected = yield* c
                      .query(`SELECT ${list} FROM l ${sql} SELECT ${list} FROM r`)
                      .pipe(Effect.orDie)
                    const l = spark.createDataFrame(left, DDL).select(...cols)
                    const r = spark.createDataFrame(right, DDL).select(...cols)
                    const actual = yield* rows(l[op](r))
                    assert.deepStrictEqual(
                      canonical(actual),
                      canonical(expected.rows),
                      `${op} over ${cols.join(",")}`
                    )
                  }).pipe(Effect.provide(Session.layer()))
                )
            ),
            { numRuns: 150 }
          )
        )
      )
    )
  })
})
