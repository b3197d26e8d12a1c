/**
 * The statistical aggregates, `max_by`/`min_by` and the percentiles, after Spark's tests:
 * `DataFrameAggregateSuite` ("moments", "zero moments", "null moments", "stddev", "max_by",
 * "min_by", "percentile"…), `ApproximatePercentileQuerySuite`, `PercentileSuite` and the examples
 * of Spark's `ExpressionDescription`s (`SELECT stddev_pop(col) FROM VALUES (1), (2), (3)` gives
 * 0.816496580927726, …). Expected values are Spark's, or worked out by hand from Spark's
 * definitions where the comment says so.
 */
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import type { AggregateFunction, AggregateName } from "../../../core/Expression.ts"
import { type AggregateImpl, makeAggregate, resolveAggregate } from "../../../core/functions/Aggregates.ts"
import * as QS from "../../../core/functions/QuantileSummaries.ts"
import type { InternalRow } from "../../../core/Row.ts"
import type { Column } from "../../../core/Column.ts"
import { type DataFrame, F, Session } from "../../../mod.ts"

type Spark = Effect.Success<typeof Session>

const run = <A>(f: (spark: Spark) => Effect.Effect<A, unknown, never>, conf?: Record<string, string>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const spark = yield* Session
      if (conf !== undefined) for (const [k, v] of Object.entries(conf)) yield* spark.conf.set(k, v)
      return yield* f(spark)
    }).pipe(Effect.provide(Session.layer())) as Effect.Effect<A, never, never>
  )

const rowsOf = <R>(df: DataFrame<R>) =>
  df.collect() as unknown as Effect.Effect<ReadonlyArray<Record<string, unknown>>, unknown>

/** Spark's `testData2`: (1,1), (1,2), (2,1), (2,2), (3,1), (3,2). */
const testData2 = (spark: Spark) =>
  spark.createDataFrame(
    [
      { a: 1, b: 1 },
      { a: 1, b: 2 },
      { a: 2, b: 1 },
      { a: 2, b: 2 },
      { a: 3, b: 1 },
      { a: 3, b: 2 }
    ],
    "a int, b int"
  )

/** Spark's `courseSales`. */
const courseSales = (spark: Spark) =>
  spark.createDataFrame(
    [
      { course: "dotNET", year: 2012, earnings: 10000 },
      { course: "Java", year: 2012, earnings: 20000 },
      { course: "dotNET", year: 2012, earnings: 5000 },
      { course: "dotNET", year: 2013, earnings: 48000 },
      { course: "Java", year: 2013, earnings: 30000 }
    ],
    "course string, year int, earnings int"
  )

const values = (spark: Spark, ddl: string, rows: ReadonlyArray<Record<string, unknown>>) =>
  spark.createDataFrame(rows, ddl)

describe("central moments (DataFrameAggregateSuite)", () => {
  it("moments", async () => {
    const [r] = await run((spark) =>
      rowsOf(
        testData2(spark).agg(
          F.variance("a"),
          F.var_samp("a"),
          F.var_pop("a"),
          F.stddev("a"),
          F.stddev_pop("a"),
          F.std("a")
        )
      )
    )
    // Spark: variance(a) 4.0 / 5.0, var_pop(a) 4.0 / 6.0, stddev math.sqrt(4.0 / 5.0)
    expect(r["variance(a)"]).toBeCloseTo(4 / 5, 12)
    expect(r["var_samp(a)"]).toBeCloseTo(4 / 5, 12)
    expect(r["var_pop(a)"]).toBeCloseTo(4 / 6, 12)
    expect(r["stddev(a)"]).toBeCloseTo(Math.sqrt(4 / 5), 12)
    expect(r["stddev_pop(a)"]).toBeCloseTo(Math.sqrt(4 / 6), 12)
    expect(r["std(a)"]).toBeCloseTo(Math.sqrt(4 / 5), 12)
  })

  it("examples of CentralMomentAgg: exact values over (1), (2), (3)", async () => {
    const [r] = await run((spark) =>
      rowsOf(
        values(spark, "col int", [{ col: 1 }, { col: 2 }, { col: 3 }]).agg(
          F.stddev_pop("col"),
          F.stddev_samp("col"),
          F.var_pop("col"),
          F.var_samp("col")
        )
      )
    )
    expect(r).toEqual({
      "stddev_pop(col)": 0.816496580927726,
      "stddev_samp(col)": 1.0,
      "var_pop(col)": 0.6666666666666666,
      "var_samp(col)": 1.0
    })
  })

  it("examples of Skewness and Kurtosis (one partition per row, merged, as Spark runs VALUES)", () => {
    // Spark's LocalTableScanExec gives each of the few VALUES rows its own partition (up to the
    // default parallelism), so its examples are the merge of one-row buffers.
    const merged = (name: AggregateName, vs: ReadonlyArray<number>) => {
      const impl = agg(name, [T.DoubleType])
      return impl.evaluate(vs.reduce((b: unknown, v) => impl.merge(b, feed(impl, [[v]])), impl.init()))
    }
    // Spark: SELECT skewness(col) / kurtosis(col) FROM VALUES (-10), (-20), (100), (1000)
    expect(merged("skewness", [-10, -20, 100, 1000])).toBe(1.1135657469022013)
    expect(merged("kurtosis", [-10, -20, 100, 1000])).toBe(-0.7014368047529618)
    expect(merged("skewness", [-1000, -100, 10, 20])).toBe(-1.1135657469022011)
    expect(merged("kurtosis", [1, 10, 100, 10, 1])).toBe(0.19432323191698986)
  })

  it("skewness and kurtosis by name over a DataFrame", async () => {
    const [r] = await run((spark) =>
      rowsOf(
        values(spark, "col int", [{ col: 1 }, { col: 10 }, { col: 100 }, { col: 10 }, { col: 1 }]).agg(
          F.skewness("col"),
          F.kurtosis("col")
        )
      )
    )
    expect(r["kurtosis(col)"]).toBe(0.19432323191698986)
    // by hand: mean 24.4, m2 = 7225.2, m3 = 400483.44, sqrt(5) * m3 / m2^1.5 = 1.45812…
    expect(r["skewness(col)"]).toBeCloseTo((Math.sqrt(5) * 400483.44) / 7225.2 ** 1.5, 12)
  })

  it("zero moments: one value gives null sample statistics (Spark 4), NaN with the legacy flag", async () => {
    const q = (spark: Spark) =>
      rowsOf(
        values(spark, "a int, b int", [{ a: 1, b: 2 }]).agg(
          F.stddev("a"),
          F.stddev_samp("a"),
          F.stddev_pop("a"),
          F.variance("a"),
          F.var_samp("a"),
          F.var_pop("a"),
          F.skewness("a"),
          F.kurtosis("a"),
          F.covar_samp("a", "b"),
          F.covar_pop("a", "b"),
          F.corr("a", "b")
        )
      )
    // Spark: Row(null, null, 0.0, null, null, 0.0, null, null), and NaN for the nulls when legacy
    expect(Object.values((await run(q))[0])).toEqual([null, null, 0, null, null, 0, null, null, null, 0, null])
    const legacy = await run(q, { "spark.sql.legacy.statisticalAggregate": "true" })
    expect(Object.values(legacy[0])).toEqual([NaN, NaN, 0, NaN, NaN, 0, NaN, NaN, NaN, 0, NaN])
  })

  it("null moments: no rows and all-null columns give null", async () => {
    const [r] = await run((spark) =>
      rowsOf(
        values(spark, "a int, b double", [{ a: null, b: null }]).agg(
          F.stddev("a"),
          F.stddev_pop("b"),
          F.var_pop("a"),
          F.corr("a", "b"),
          F.covar_pop("a", "b"),
          F.median("a"),
          F.percentile_approx("b", 0.5),
          F.max_by("a", "b")
        )
      )
    )
    expect(Object.values(r)).toEqual([null, null, null, null, null, null, null, null])
  })

  it("names each alias as it was called and types every statistic as double", async () => {
    const df = await run((spark) =>
      Effect.succeed(
        testData2(spark).agg(F.stddev("a"), F.std("a"), F.variance("a"), F.corr("a", "b"), F.covar_samp("a", "b"))
      )
    )
    expect(df.dtypes).toEqual([
      ["stddev(a)", "double"],
      ["std(a)", "double"],
      ["variance(a)", "double"],
      ["corr(a, b)", "double"],
      ["covar_samp(a, b)", "double"]
    ])
  })

  it("a NaN value makes every moment NaN", async () => {
    const [r] = await run((spark) =>
      rowsOf(values(spark, "d double", [{ d: 1 }, { d: NaN }, { d: 3 }]).agg(F.stddev("d"), F.var_pop("d")))
    )
    expect(Object.values(r)).toEqual([NaN, NaN])
  })

  it("casts strings to double and rejects booleans with Spark's message", async () => {
    const [r] = await run((spark) =>
      rowsOf(values(spark, "s string", [{ s: "1" }, { s: "2" }, { s: "x" }, { s: "3" }]).agg(F.var_samp("s")))
    )
    expect(r["var_samp(s)"]).toBe(1)
    const exit = await run((spark) => Effect.exit(rowsOf(values(spark, "b boolean", [{ b: true }]).agg(F.stddev("b")))))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String(exit)).toContain(
      '[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve "stddev(b)" due to data type mismatch: The first parameter requires the "DOUBLE" type, however "b" has the type "BOOLEAN".'
    )
  })
})

describe("covariance and correlation", () => {
  it("examples of Corr, CovPopulation and CovSample", async () => {
    const [c] = await run((spark) =>
      rowsOf(
        values(spark, "c1 int, c2 int", [
          { c1: 3, c2: 2 },
          { c1: 3, c2: 3 },
          { c1: 6, c2: 4 }
        ]).agg(F.corr("c1", "c2"))
      )
    )
    // Spark: SELECT corr(c1, c2) FROM VALUES (3, 2), (3, 3), (6, 4) AS tab(c1, c2)
    expect(c["corr(c1, c2)"]).toBe(0.8660254037844387)
    const [v] = await run((spark) =>
      rowsOf(
        values(spark, "c1 int, c2 int", [
          { c1: 1, c2: 1 },
          { c1: 2, c2: 2 },
          { c1: 3, c2: 3 }
        ]).agg(F.covar_pop("c1", "c2"), F.covar_samp("c1", "c2"))
      )
    )
    // Spark: covar_pop 0.6666666666666666, covar_samp 1.0
    expect(v).toEqual({ "covar_pop(c1, c2)": 0.6666666666666666, "covar_samp(c1, c2)": 1.0 })
  })

  it("skips pairs with a null on either side; a constant column has a null correlation", async () => {
    const [r] = await run((spark) =>
      rowsOf(
        values(spark, "x double, y double", [
          { x: 1, y: 2 },
          { x: null, y: 5 },
          { x: 2, y: null },
          { x: 3, y: 6 }
        ]).agg(F.covar_pop("x", "y"), F.corr("x", "y"), F.corr("x", F.lit(1)))
      )
    )
    // by hand over (1, 2), (3, 6): means 2 and 4, ck = (-1)(-2) + (1)(2) = 4; covar_pop 2; corr 1
    expect(r["covar_pop(x, y)"]).toBe(2)
    expect(r["corr(x, y)"]).toBe(1)
    // ck / sqrt(xMk * 0): Spark's Divide by 0, null (Spark 4.2; random differential seed 4125611320)
    expect(r["corr(x, 1)"]).toBe(null)
  })
})

describe("max_by and min_by (DataFrameAggregateSuite)", () => {
  it("max_by", async () => {
    const rows = await run((spark) =>
      rowsOf(courseSales(spark).groupBy("course").agg(F.max_by("year", "earnings")).orderBy("course"))
    )
    expect(rows).toEqual([
      { course: "Java", "max_by(year, earnings)": 2013 },
      { course: "dotNET", "max_by(year, earnings)": 2013 }
    ])
    const one = (data: ReadonlyArray<[string, number | null]>) =>
      run((spark) =>
        rowsOf(
          values(
            spark,
            "x string, y int",
            data.map(([x, y]) => ({ x, y }))
          ).agg(F.max_by("x", "y"), F.min_by("x", "y"))
        )
      ).then((r) => Object.values(r[0]))
    expect(
      await one([
        ["a", 10],
        ["b", 50],
        ["c", 20]
      ])
    ).toEqual(["b", "a"])
    expect(
      await one([
        ["a", null],
        ["b", null],
        ["c", 20]
      ])
    ).toEqual(["c", "c"])
    expect(
      await one([
        ["a", null],
        ["b", null],
        ["c", null]
      ])
    ).toEqual([null, null])
    expect(
      await one([
        ["a", 10],
        ["b", null],
        ["c", null]
      ])
    ).toEqual(["a", "a"])
  })

  it("min_by", async () => {
    const rows = await run((spark) =>
      rowsOf(courseSales(spark).groupBy("course").agg(F.min_by("year", "earnings")).orderBy("course"))
    )
    expect(rows).toEqual([
      { course: "Java", "min_by(year, earnings)": 2012 },
      { course: "dotNET", "min_by(year, earnings)": 2012 }
    ])
  })

  it("keeps the later row on a tie, in update and in merge (Spark's predicate is strict)", () => {
    const impl = agg("max_by", [T.StringType, T.IntegerType])
    expect(
      impl.evaluate(
        feed(impl, [
          ["a", 5],
          ["b", 5]
        ])
      )
    ).toBe("b")
    const merged = impl.merge(feed(impl, [["a", 5]]), feed(impl, [["b", 5]]))
    expect(impl.evaluate(merged)).toBe("b")
    const min = agg("min_by", [T.StringType, T.DoubleType])
    // NaN is the largest double to Spark
    expect(
      min.evaluate(
        feed(min, [
          ["nan", NaN],
          ["one", 1]
        ])
      )
    ).toBe("one")
  })

  it("rejects an unorderable ordering with Spark's message", () => {
    const r = resolveAggregate("max_by", [T.IntegerType, T.map(T.StringType, T.IntegerType)], false, {})
    expect(r._tag).toBe("Invalid")
    expect((r as { message: string }).message).toContain(
      '[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] Cannot resolve "max_by(int, map<string,int>)" due to data type mismatch: The `max_by` does not support ordering on type "MAP<STRING, INT>".'
    )
  })
})

describe("percentile and median (PercentileSuite, percentiles.scala examples)", () => {
  it("percentile of (0), (10) at 0.3 and at array(0.25, 0.75); median", async () => {
    const [r] = await run((spark) =>
      rowsOf(
        values(spark, "col int", [{ col: 0 }, { col: 10 }]).agg(
          F.percentile("col", 0.3),
          F.percentile("col", [0.25, 0.75]),
          F.median("col")
        )
      )
    )
    // Spark: 3.0, [2.5,7.5], 5.0
    expect(r).toEqual({
      "percentile(col, 0.3, 1)": 3.0,
      "percentile(col, array(0.25, 0.75), 1)": [2.5, 7.5],
      "median(col)": 5.0
    })
  })

  it("types the result as double or array<double> and interpolates between ranks", async () => {
    const df = await run((spark) =>
      Effect.succeed(
        testData2(spark).agg(
          F.percentile("a", 0.5),
          F.percentile("a", [0, 1]),
          F.median("b"),
          F.percentile("a", 0.5, "b")
        )
      )
    )
    expect(df.dtypes).toEqual([
      ["percentile(a, 0.5, 1)", "double"],
      ["percentile(a, array(0.0, 1.0), 1)", "array<double>"],
      ["median(b)", "double"],
      ["percentile(a, 0.5, b)", "double"]
    ])
    const [r] = await run((spark) =>
      rowsOf(
        testData2(spark).agg(
          F.percentile("a", 0.5),
          F.percentile("a", [0, 1]),
          F.median("b"),
          F.percentile("a", 0.5, "b")
        )
      )
    )
    // by hand: a = 1,1,2,2,3,3: position 2.5 between 2 and 3 -> 2 (the same key);
    // weighted by b: 1,1,1,2,2,2,3,3,3 (nine values), position 4 -> 2
    expect(Object.values(r)).toEqual([2, [1, 3], 1.5, 2])
  })

  it("rejects a percentage out of [0, 1], a null and a non-constant percentage with Spark's messages", async () => {
    const fail = (c: Column<unknown, string>) =>
      run((spark) => Effect.exit(rowsOf(testData2(spark).agg(c)))).then((e) => String(e))
    expect(await fail(F.percentile("a", 1.5))).toContain(
      '[DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE] Cannot resolve "percentile(a, 1.5, 1)" due to data type mismatch: The percentage must be between [0.0, 1.0] (current value = 1.5D).'
    )
    expect(await fail(F.percentile("a", F.col("b")))).toContain("[DATATYPE_MISMATCH.NON_FOLDABLE_INPUT]")
    expect(await fail(F.percentile("a", F.lit(null)))).toContain(
      '[DATATYPE_MISMATCH.UNEXPECTED_NULL] Cannot resolve "percentile(a, NULL, 1)" due to data type mismatch: The percentage must not be null.'
    )
  })

  it("negatives frequency column handling (PercentileSuite): a typed NEGATIVE_VALUES_IN_FREQUENCY_EXPRESSION", async () => {
    const e = await run((spark) =>
      Effect.flip(
        rowsOf(values(spark, "a int, f int", [{ a: 1, f: 2 }, { a: 2, f: -1 }]).agg(F.percentile("a", 0.5, "f")))
      )
    )
    expect(e).toMatchObject({
      _tag: "ConnectorError",
      errorClass: "NEGATIVE_VALUES_IN_FREQUENCY_EXPRESSION",
      sqlState: "22003",
      message:
        "[NEGATIVE_VALUES_IN_FREQUENCY_EXPRESSION] Found the negative value in \"f\": -1, but expected a positive integral value. SQLSTATE: 22003"
    })
  })

  it("keeps -0.0 and 0.0 apart and sorts NaN last, as boxed doubles in Spark's map", () => {
    const impl = agg("percentile", [T.DoubleType, T.DoubleType], [lit(0.5, T.DoubleType)])
    expect(impl.evaluate(feed(impl, [[NaN], [-0], [0]]))).toBe(0)
    const toArray = agg("percentile", [T.DoubleType, T.array(T.DoubleType)], [lit([0, 1], T.array(T.DoubleType))])
    const r = toArray.evaluate(feed(toArray, [[NaN], [0], [-0]])) as Array<number>
    expect(Object.is(r[0], -0)).toBe(true)
    expect(r[1]).toBeNaN()
  })
})

describe("percentile_approx (ApproximatePercentileQuerySuite)", () => {
  const range = (spark: Spark) =>
    spark.createDataFrame(
      Array.from({ length: 1000 }, (_, i) => ({ col: i + 1 })),
      "col int"
    )

  it("percentile_approx, single percentile value", async () => {
    const [r] = await run((spark) =>
      rowsOf(
        range(spark).agg(
          F.percentile_approx("col", 0.25).as("a"),
          F.percentile_approx("col", 0.5).as("b"),
          F.percentile_approx("col", 0.75).as("c"),
          F.percentile_approx("col", 0.0).as("d"),
          F.percentile_approx("col", 1.0).as("e")
        )
      )
    )
    expect(r).toEqual({ a: 250, b: 500, c: 750, d: 1, e: 1000 })
  })

  it("percentile_approx, array of percentile value", async () => {
    const [r] = await run((spark) => rowsOf(range(spark).agg(F.percentile_approx("col", [0.25, 0.5, 0.75]).as("p"))))
    expect(r.p).toEqual([250, 500, 750])
  })

  it("examples of ApproximatePercentile: [1,1,0] and 7", async () => {
    const [a] = await run((spark) =>
      rowsOf(
        values(spark, "col int", [{ col: 0 }, { col: 1 }, { col: 2 }, { col: 10 }]).agg(
          F.percentile_approx("col", [0.5, 0.4, 0.1], 100)
        )
      )
    )
    expect(a).toEqual({ "percentile_approx(col, array(0.5, 0.4, 0.1), 100)": [1, 1, 0] })
    const [b] = await run((spark) =>
      rowsOf(
        values(spark, "col int", [{ col: 0 }, { col: 6 }, { col: 7 }, { col: 9 }, { col: 10 }]).agg(
          F.approx_percentile("col", 0.5, 100)
        )
      )
    )
    expect(b).toEqual({ "approx_percentile(col, 0.5, 100)": 7 })
  })

  it("has the input's type: int, bigint, double, date and timestamp", async () => {
    const df = await run((spark) =>
      Effect.succeed(
        values(spark, "i int, l bigint, d double, dt date, ts timestamp", [
          { i: 1, l: 2, d: 0.5, dt: new Date(0), ts: new Date(5000) }
        ]).agg(
          F.percentile_approx("i", 0.5),
          F.percentile_approx("l", [0.5]),
          F.percentile_approx("d", 0.5),
          F.percentile_approx("dt", 0.5),
          F.percentile_approx("ts", 0.5)
        )
      )
    )
    expect(df.dtypes.map(([, t]) => t)).toEqual(["int", "array<bigint>", "double", "date", "timestamp"])
    const [r] = await run(() => rowsOf(df))
    expect(Object.values(r)).toEqual([1, [2], 0.5, new Date(0), new Date(5000)])
  })

  it("percentile_approx(), aggregation on empty input gives null", async () => {
    const [r] = await run((spark) => rowsOf(spark.createDataFrame([], "col int").agg(F.percentile_approx("col", 0.5))))
    expect(r).toEqual({ "percentile_approx(col, 0.5, 10000)": null })
  })

  it("rejects an accuracy out of (0, 2147483647]", async () => {
    const e = await run((spark) => Effect.exit(rowsOf(range(spark).agg(F.percentile_approx("col", 0.5, 0))))).then(
      String
    )
    expect(e).toContain("[DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE]")
  })

  it("percentile_approx, with different accuracies: the rank error stays within count / accuracy", () => {
    // ApproximatePercentileQuerySuite: 1000 values, accuracies 1, 10, 100, 1000, 10000
    const n = 1000
    for (const accuracy of [1, 10, 100, 1000, 10000]) {
      const s = QS.make(1 / accuracy)
      for (let i = 1; i <= n; i++) QS.insert(s, i)
      for (const p of [0.1, 0.25, 0.5, 0.75, 0.9]) {
        const v = QS.query(s, [p])![0]
        expect(Math.abs(v - p * n)).toBeLessThanOrEqual(n / accuracy + 1)
      }
    }
  })

  it("merges partial summaries as Spark does: exact below the accuracy, within the bound above it", () => {
    const impl = agg(
      "percentile_approx",
      [T.DoubleType, T.DoubleType, T.IntegerType],
      [lit(0.5, T.DoubleType), lit(100, T.IntegerType)]
    )
    const rows = Array.from({ length: 5000 }, (_, i) => [(i * 7919) % 5000])
    const parts = [rows.slice(0, 1200), rows.slice(1200, 3100), rows.slice(3100)].map((p) => feed(impl, p))
    const merged = parts.reduce((a, b) => impl.merge(a, b), impl.init())
    expect(Math.abs((impl.evaluate(merged) as number) - 2500)).toBeLessThanOrEqual(5000 / 100)
    const small = agg("percentile_approx", [T.DoubleType, T.DoubleType], [lit(0.5, T.DoubleType)])
    const a = feed(small, [[5], [1], [9]])
    const b = feed(small, [[3], [7]])
    // 1, 3, 5, 7, 9: rank ceil(2.5) = 3
    expect(small.evaluate(small.merge(a, b))).toBe(5)
  })
})

describe("DISTINCT", () => {
  it("stddev, corr and percentile over the distinct argument tuples (Spark's distinct aggregation)", () => {
    const distinct = (name: AggregateName, types: ReadonlyArray<T.DataType>, extra: ReadonlyArray<Lit> = []) => {
      return makeAggregate(
        {
          _tag: "AggregateFunction",
          name,
          args: argsOf(types, extra),
          distinct: true,
          options: {},
          dataType: undefined
        },
        evaluatorsOf(types, extra),
        types
      )
    }
    // by hand: DISTINCT 1, 1, 3, null is {1, 3}: stddev_samp sqrt(2)
    const sd = distinct("stddev_samp", [T.DoubleType])
    expect(sd.evaluate(feed(sd, [[1], [1], [3], [null]]))).toBe(Math.SQRT2)
    // {(1, 2), (3, 6)} from (1, 2), (1, 2), (3, 6): covar_samp 4
    const cv = distinct("covar_samp", [T.DoubleType, T.DoubleType])
    expect(
      cv.evaluate(
        feed(cv, [
          [1, 2],
          [1, 2],
          [3, 6]
        ])
      )
    ).toBe(4)
    // {0, 10}: the median is 5, where over 0, 0, 0, 10 it is 0
    const p = distinct("percentile", [T.IntegerType, T.DoubleType], [lit(0.5, T.DoubleType)])
    expect(p.evaluate(feed(p, [[0], [0], [0], [10]]))).toBe(5)
  })
})

describe("buffers survive JSON (the streaming state)", () => {
  const cases: ReadonlyArray<{
    name: AggregateName
    types: ReadonlyArray<T.DataType>
    extra?: ReadonlyArray<Lit>
    rows: ReadonlyArray<InternalRow>
  }> = [
    { name: "stddev_samp", types: [T.DoubleType], rows: [[1], [-0], [NaN], [Infinity]] },
    { name: "var_pop", types: [T.DoubleType], rows: [[1.5], [2.25], [null]] },
    { name: "kurtosis", types: [T.DoubleType], rows: [[1.5], [2.25], [7], [-3]] },
    {
      name: "corr",
      types: [T.DoubleType, T.DoubleType],
      rows: [
        [1, 2],
        [2, 5],
        [3, 1]
      ]
    },
    {
      name: "covar_samp",
      types: [T.DoubleType, T.DoubleType],
      rows: [
        [1, 2],
        [2, null],
        [4, 1]
      ]
    },
    {
      name: "max_by",
      types: [T.StringType, T.TimestampType],
      rows: [
        ["a", 5],
        ["b", 9],
        ["c", 1]
      ]
    },
    {
      name: "percentile",
      types: [T.DoubleType, T.DoubleType],
      extra: [lit(0.5, T.DoubleType)],
      rows: [[1], [-0], [0], [4]]
    },
    {
      name: "percentile_approx",
      types: [T.IntegerType, T.DoubleType],
      extra: [lit(0.5, T.DoubleType)],
      rows: [[3], [1], [2]]
    }
  ]
  for (const c of cases) {
    it(`${c.name}: toJSON / fromJSON keeps the result, and the buffer keeps working`, () => {
      const impl = agg(c.name, c.types, c.extra)
      const buf = feed(impl, c.rows)
      const back = impl.fromJSON(JSON.parse(JSON.stringify(impl.toJSON(buf))))
      expect(impl.evaluate(back)).toEqual(impl.evaluate(buf))
      const more = c.rows.slice(0, 1)
      expect(impl.evaluate(feed(impl, more, back))).toEqual(impl.evaluate(feed(impl, more, feed(impl, c.rows))))
    })
  }
})

// ---- helpers --------------------------------------------------------------------------------

interface Lit {
  readonly _tag: "Literal"
  readonly value: unknown
  readonly dataType: T.DataType
}

function lit(value: unknown, dataType: T.DataType): Lit {
  return { _tag: "Literal", value, dataType }
}

function argsOf(types: ReadonlyArray<T.DataType>, extra: ReadonlyArray<Lit>): AggregateFunction["args"] {
  const columns = types.length - extra.length
  return [
    ...types.slice(0, columns).map((t, i) => ({
      _tag: "AttributeReference" as const,
      name: `c${i}`,
      dataType: t,
      nullable: true,
      exprId: i + 1,
      qualifier: []
    })),
    ...extra
  ]
}

function evaluatorsOf(types: ReadonlyArray<T.DataType>, extra: ReadonlyArray<Lit>) {
  const columns = types.length - extra.length
  return types.map((_, i) => (row: InternalRow) => (i < columns ? row[i] : extra[i - columns].value))
}

/** The aggregate over columns of `types`; `extra` are constant arguments after the first (percentages). */
function agg(name: AggregateName, types: ReadonlyArray<T.DataType>, extra: ReadonlyArray<Lit> = []): AggregateImpl {
  const fn: AggregateFunction = {
    _tag: "AggregateFunction",
    name,
    args: argsOf(types, extra),
    distinct: false,
    options: {},
    dataType: undefined
  }
  return makeAggregate(fn, evaluatorsOf(types, extra), types)
}

function feed(impl: AggregateImpl, rows: ReadonlyArray<InternalRow>, buffer: unknown = impl.init()): unknown {
  let b = buffer
  for (const r of rows) b = impl.update(b, r)
  return b
}
