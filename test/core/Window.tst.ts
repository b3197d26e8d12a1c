/**
 * Type tests for window specifications and window functions: `Window`'s builders return
 * `WindowSpec`s, frame bounds take numbers or Spark's long constants (bigints), `over` keeps
 * the function's value type, and an aliased window column types the selected row.
 */
import { describe, expectTypeOf, it } from "vitest"
import type { Column } from "../../core/Column.ts"
import * as F from "../../core/F.ts"
import { Window, type WindowSpec } from "../../core/Window.ts"
import type { DataFrame } from "../../structured/api/DataFrame.ts"

declare const sales: DataFrame<{ shop: string; day: number; amount: number }>

describe("Window", () => {
  it("builders return WindowSpecs and take numbers or bigints as bounds", () => {
    expectTypeOf(Window.partitionBy("shop")).toEqualTypeOf<WindowSpec>()
    expectTypeOf(Window.orderBy(F.col("day").desc()).rowsBetween(-1, 1)).toEqualTypeOf<WindowSpec>()
    expectTypeOf(Window.unboundedPreceding).toEqualTypeOf<bigint>()
    expectTypeOf(Window.currentRow).toEqualTypeOf<0>()
    Window.orderBy("day").rangeBetween(Window.unboundedPreceding, Window.currentRow)
    Window.orderBy("day").rowsBetween(2147483647n, Window.unboundedFollowing)
    // @ts-expect-error a bound is a number or a bigint
    Window.orderBy("day").rowsBetween("1", 2)
  })
  it("window functions keep their value types through over", () => {
    const w = Window.partitionBy("shop").orderBy("day")
    expectTypeOf(F.row_number().over(w)).toEqualTypeOf<Column<number, string>>()
    expectTypeOf(F.percent_rank().over(w)).toEqualTypeOf<Column<number, string>>()
    expectTypeOf(F.lag(F.col<"amount">("amount"), 1).over(w)).toEqualTypeOf<Column<unknown, string>>()
    expectTypeOf(F.sum("amount").over(w)).toEqualTypeOf<Column<number, string>>()
    expectTypeOf(F.rank().over()).toEqualTypeOf<Column<number, string>>()
  })
  it("an aliased window column types the selected row", () => {
    const w = Window.partitionBy("shop").orderBy("day")
    const ranked = sales.select(F.col("shop"), F.dense_rank().over(w).as("rank"))
    expectTypeOf(ranked).toEqualTypeOf<DataFrame<{ shop: string; rank: number }>>()
  })
})
