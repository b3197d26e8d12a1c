/**
 * Type tests for the statistical aggregates, the percentiles and `F.udf`: Spark's default names
 * become the row's keys, statistics are nullable numbers, `max_by` keeps its value's type,
 * percentiles of an array are arrays, and a UDF's column has its function's return type.
 */
import { describe, expectTypeOf, it } from "vitest"
import { F } from "../../../core/mod.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"

declare const orders: DataFrame<{ name: string; amount: number; qty: number; at: Date }>

type RowOf<D> = D extends DataFrame<infer R> ? R : never

describe("statistical aggregates", () => {
  it("are named as Spark names them and typed as nullable numbers", () => {
    const df = orders
      .groupBy("name")
      .agg(
        F.stddev("amount"),
        F.var_pop("amount"),
        F.corr("amount", "qty"),
        F.covar_samp("amount", "qty"),
        F.median("qty")
      )
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{
      name: string
      "stddev(amount)": number | null
      "var_pop(amount)": number | null
      "corr(amount, qty)": number | null
      "covar_samp(amount, qty)": number | null
      "median(qty)": number | null
    }>()
  })
  it("max_by keeps the value column's type; percentile of an array is an array", () => {
    const df = orders.agg(
      F.max_by(F.col("name"), "at").as("latest"),
      F.percentile("amount", [0.25, 0.75]).as("q"),
      F.percentile("amount", 0.5).as("p50")
    )
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ latest: unknown; q: Array<number> | null; p50: number | null }>()
  })
})

describe("F.udf", () => {
  it("gives a column of the function's return type, callable with names or columns", () => {
    const initial = F.udf((s: string | null) => (s === null ? null : s.slice(0, 1)), "string")
    const df = orders.select(initial("name").as("i"), initial.withName("first")(F.col("name")).as("f"))
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ i: string | null; f: string | null }>()
    // @ts-expect-error one argument, not two
    initial("name", "qty")
  })
})
