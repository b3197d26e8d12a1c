/**
 * Differential property: the statistical aggregates and the exact percentiles against DuckDB,
 * whose functions agree with Spark's on these: `stddev_samp`, `stddev_pop`, `var_samp`,
 * `var_pop`, `covar_samp`, `covar_pop` (null over no rows; the sample ones null over one row, as
 * Spark 4), `median` and `quantile_cont` (Spark's interpolating `percentile`). `corr` is compared
 * over two or more pairs where both columns vary (DuckDB gives NaN over one pair, where Spark 4
 * gives null).
 *
 * Random tables of a nullable group key, doubles that are multiples of 1/4 and ints, grouped
 * by the key; results must agree within a relative 1e-9 (the engines fold the moments in
 * different orders). Literal percentages reach DuckDB as `?` parameters.
 */
import { describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import * as T from "../../core/DataType.ts"
import { rowsToInternal } from "../../core/Row.ts"
import { F, Session } from "../../mod.ts"
import * as DuckDB from "../../state/DuckDB.ts"

const DDL = "k int, x double, y int"
const nullable = <A>(arb: fc.Arbitrary<A>): fc.Arbitrary<A | null> => fc.option(arb, { nil: null, freq: 6 })
const row = fc.record({
  k: nullable(fc.integer({ min: 0, max: 3 })),
  x: nullable(fc.integer({ min: -400, max: 400 }).map((n) => n / 4)),
  y: nullable(fc.integer({ min: -50, max: 50 }))
})

const close = (a: unknown, b: unknown): boolean => {
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null)
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => close(x, b[i]))
  if (typeof a !== "number" || typeof b !== "number") return false
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b)
  return a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b), 1e-300)
}

describe("statistical aggregates vs DuckDB", () => {
  it("stddev, variance, covariance, corr, median and percentile per group", { timeout: 120_000 }, async () => {
    await Effect.runPromise(
      DuckDB.withMemory((c) =>
        Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.array(row, { maxLength: 40 }), fc.constantFrom(0, 0.1, 0.25, 0.5, 0.9, 1), (rows, p) =>
              Effect.runPromise(
                Effect.gen(function* () {
                  const spark = yield* Session
                  const schema = T.parseDDL(DDL)!
                  yield* DuckDB.createTable(c, "t", schema, rowsToInternal(schema, rows)).pipe(Effect.orDie)
                  const sql =
                    "SELECT k, stddev_samp(x), stddev_pop(x), var_samp(y), var_pop(x), covar_samp(x, y), covar_pop(x, y), " +
                    "CASE WHEN count(x + y) >= 2 AND var_pop(CASE WHEN y IS NOT NULL THEN x END) > 0 " +
                    "AND var_pop(CASE WHEN x IS NOT NULL THEN y END) > 0 THEN corr(x, y) END, median(x), quantile_cont(y, ?) " +
                    "FROM t GROUP BY k ORDER BY k NULLS FIRST"
                  const expected = (yield* c.query(sql, [p]).pipe(Effect.orDie)).rows
                  const actual = yield* spark
                    .createDataFrame(rows, DDL)
                    .groupBy("k")
                    .agg(
                      F.stddev_samp("x"),
                      F.stddev_pop("x"),
                      F.var_samp("y"),
                      F.var_pop("x"),
                      F.covar_samp("x", "y"),
                      F.covar_pop("x", "y"),
                      F.when(
                        F.count(F.col("x").plus(F.col("y")))
                          .geq(2)
                          .and(F.var_pop(F.when(F.col("y").isNotNull(), F.col("x"))).gt(0))
                          .and(F.var_pop(F.when(F.col("x").isNotNull(), F.col("y"))).gt(0)),
                        F.corr("x", "y")
                      ),
                      F.median("x"),
                      F.percentile("y", p)
                    )
                    .orderBy("k")
                    .collect()
                  const got = actual.map((r) => Object.values(r as Record<string, unknown>))
                  const want = expected.map((r) => r.map((v) => (typeof v === "bigint" ? Number(v) : v)))
                  const same =
                    got.length === want.length && got.every((r, i) => r.every((v, j) => close(v, want[i][j])))
                  if (!same)
                    throw new Error(
                      `differs for p = ${p}\nrows: ${JSON.stringify(rows)}\nDuckDB: ${JSON.stringify(want)}\ntributary: ${JSON.stringify(got)}`
                    )
                }).pipe(Effect.provide(Session.layer()))
              )
            ),
            { numRuns: 100 }
          )
        )
      )
    )
  })
})
