/**
 * Type tests for the typed DataFrame API: result row types of select, withColumn, groupBy/agg,
 * join and map, and misspelled column names that must not compile.
 */
import { Schema } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import { type Column, F } from "../../../core/mod.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"

declare const people: DataFrame<{ name: string; age: number; city: string | null }>
declare const orders: DataFrame<{ name: string; amount: number }>
declare const events: DataFrame<{ user: string; ts: Date; n: number }>

type RowOf<D> = D extends DataFrame<infer R> ? R : never

describe("select", () => {
  it("keeps the types of named columns", () => {
    const df = people.select("name", "age")
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ name: string; age: number }>()
  })
  it("uses alias names and column value types", () => {
    const df = people.select("name", F.col("age").plus(1).as("next"), F.upper("name").as("loud"))
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ name: string; next: number; loud: string }>()
  })
  it("expands *", () => {
    const df = people.select("*")
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ name: string; age: number; city: string | null }>()
  })
  it("F.col of a known column keeps its type", () => {
    const df = people.select(F.col("age"))
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ age: number }>()
  })
  it("rejects a misspelled column", () => {
    // @ts-expect-error "nmae" is not a column of the row type
    people.select("nmae")
  })
})

describe("withColumn and friends", () => {
  it("adds a typed column", () => {
    const df = people.withColumn("adult", F.col("age").geq(18))
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ name: string; age: number; city: string | null; adult: boolean }>()
  })
  it("replaces a column's type", () => {
    const df = people.withColumn("age", F.col("age").cast("string"))
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ name: string; city: string | null; age: string }>()
  })
  it("renames", () => {
    const df = people.withColumnRenamed("name", "who")
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ age: number; city: string | null; who: string }>()
  })
  it("drops", () => {
    const df = people.drop("city")
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ name: string; age: number }>()
    // @ts-expect-error "cty" is not a column
    people.drop("cty")
  })
  it("rejects misspelled names in groupBy, orderBy, dropDuplicates and withWatermark", () => {
    // @ts-expect-error misspelled
    people.groupBy("ag")
    // @ts-expect-error misspelled
    people.orderBy("nam")
    // @ts-expect-error misspelled
    people.dropDuplicates(["nam"])
    // @ts-expect-error misspelled
    people.col("nmae")
  })
})

describe("groupBy", () => {
  it("count adds a count column", () => {
    const df = people.groupBy("city").count()
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ city: string | null; count: number }>()
  })
  it("agg names aggregates as Spark does", () => {
    // max of a column given by name cannot know the column's type: unknown, not a guess
    const df = orders.groupBy("name").agg(F.sum("amount"), F.max("amount").as("top"), F.count("*"))
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{
      name: string
      "sum(amount)": number
      top: unknown
      "count(1)": number
    }>()
  })
  it("windows are structs of dates", () => {
    const df = events.groupBy(F.window("ts", "10 seconds"), "user").count()
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ window: F.Window; user: string; count: number }>()
  })
  it("sum of named numeric columns", () => {
    const df = orders.groupBy("name").sum("amount")
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ name: string; "sum(amount)": number }>()
    // @ts-expect-error name is not numeric
    orders.groupBy("name").sum("name")
  })
})

describe("join", () => {
  it("a USING inner join keeps one key column", () => {
    const df = people.join(orders, "name")
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ name: string; age: number; city: string | null; amount: number }>()
  })
  it("a left join makes the right side nullable", () => {
    const df = people.join(orders, ["name"], "left")
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{
      name: string
      age: number
      city: string | null
      amount: number | null
    }>()
  })
  it("semi and anti joins keep the left row", () => {
    const df = people.join(orders, "name", "left_semi")
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ name: string; age: number; city: string | null }>()
  })
  it("rejects an unknown join type", () => {
    // @ts-expect-error not a join type
    people.join(orders, "name", "sideways")
  })
})

describe("map", () => {
  it("struct schemas give their type", () => {
    const df = people.map((p) => ({ who: p.name.toUpperCase() }), Schema.Struct({ who: Schema.String }))
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ readonly who: string }>()
  })
  it("value schemas give a value column", () => {
    const df = people.map((p) => p.age * 2, Schema.Number)
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ value: number }>()
  })
  it("the row a function sees is the DataFrame's row type", () => {
    people.filter((p) => {
      expectTypeOf(p).toEqualTypeOf<{ name: string; age: number; city: string | null }>()
      return p.age > 1
    })
  })
})

describe("expression strings", () => {
  it("selectExpr gives an untyped row (Spark parses the text at the action)", () => {
    const df = people.selectExpr("upper(name) AS loud", "age + 1")
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<Record<string, unknown>>()
  })
  it("filter and where take a condition string and keep the row type", () => {
    const df = people.filter("age > 18 AND city IS NOT NULL").where("name LIKE 'a%'")
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ name: string; age: number; city: string | null }>()
  })
  it("F.expr is an untyped column, F.timestampadd a timestamp", () => {
    expectTypeOf(F.expr("ts + INTERVAL 10 SECONDS")).toEqualTypeOf<Column<unknown>>()
    const df = events.select(F.timestampadd("HOUR", 1, "ts").as("later"))
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ later: Date }>()
  })
  it("rejects a misspelled datetime unit", () => {
    // @ts-expect-error "HOURS" is not a unit of timestampadd
    F.timestampadd("HOURS", 1, "ts")
  })
})
