/**
 * End-to-end tests of the batch DataFrame API: every transformation of API.md's DataFrame section,
 * run through the whole engine (analyzer, optimizer, planner, physical operators), with the rows
 * Apache Spark 4 returns for the same program (spark.sql.ansi.enabled=false, session time zone UTC).
 *
 * Where Spark does not promise an order (aggregates, joins, distinct), rows are compared after
 * sorting; where it does (filter, project, union of local data, orderBy, limit), in order.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as T from "../../../core/DataType.ts"
import * as E from "../../../core/Expression.ts"
import * as Plan from "../../../core/LogicalPlan.ts"
import { AnalysisError, DataFrame, F, Session } from "../../../mod.ts"
// MemoryStream is not exported from mod.ts yet
import { MemoryStream } from "../../../structured/api/MemoryStream.ts"

const run = <A, Err>(self: Effect.Effect<A, Err, Session>) => self.pipe(Effect.provide(Session.layer()))

/** A canonical order for rows whose order Spark does not fix. */
const canon = (v: unknown): string => {
  if (v instanceof Date) return `D${v.toISOString()}`
  if (Array.isArray(v)) return `[${v.map(canon).join(",")}]`
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${k}:${canon(o[k])}`)
      .join(",")}}`
  }
  return JSON.stringify(v) ?? "undefined"
}
const sorted = <R>(rows: ReadonlyArray<R>): Array<R> =>
  [...rows].sort((a, b) => {
    const ka = canon(a)
    const kb = canon(b)
    return ka < kb ? -1 : ka > kb ? 1 : 0
  })

const Person = Schema.Struct({
  name: Schema.String,
  age: Schema.NullOr(Schema.Int),
  city: Schema.NullOr(Schema.String)
})
const peopleRows = [
  { name: "ann", age: 31, city: "paris" },
  { name: "bob", age: 17, city: null },
  { name: "cid", age: 45, city: "rome" },
  { name: "dee", age: null, city: "paris" }
]

const people = Session.useSync((spark) => spark.createDataFrame(peopleRows, Person))

const Sale = Schema.Struct({ shop: Schema.NullOr(Schema.String), amount: Schema.Int, price: Schema.Number })
const saleRows = [
  { shop: "a", amount: 3, price: 1.5 },
  { shop: "b", amount: 5, price: 2.0 },
  { shop: "a", amount: 4, price: 0.5 },
  { shop: null, amount: 1, price: 1.0 }
]
const sales = Session.useSync((spark) => spark.createDataFrame(saleRows, Sale))

const utc = (s: string) => new Date(`${s}Z`)

describe("select", () => {
  it.effect("projects named columns in the order given", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* people).select("city", "name")
        assert.deepStrictEqual(df.columns, ["city", "name"])
        expect(yield* df.collect()).toEqual([
          { city: "paris", name: "ann" },
          { city: null, name: "bob" },
          { city: "rome", name: "cid" },
          { city: "paris", name: "dee" }
        ])
      })
    )
  )

  it.effect("`*` expands to every column, and can be mixed with expressions", () =>
    run(
      Effect.gen(function* () {
        const p = yield* people
        const all = p.select("*")
        assert.deepStrictEqual(all.columns, ["name", "age", "city"])
        expect(yield* all.collect()).toEqual(peopleRows)
        const more = p.select("*", F.col("age").multiply(2).as("twice"))
        assert.deepStrictEqual(more.columns, ["name", "age", "city", "twice"])
        expect((yield* more.collect()).map((r) => r.twice)).toEqual([62, 34, 90, null])
      })
    )
  )

  it.effect("names unaliased expressions as Spark does", () =>
    run(
      Effect.gen(function* () {
        const p = yield* people
        const df = p.select(
          F.col("age").plus(1),
          F.col("age").cast("string"),
          F.col("age").isNull(),
          F.col("name").eq("bob"),
          F.col("age").gt(20).and(F.col("city").isNotNull())
        )
        assert.deepStrictEqual(df.columns, [
          "(age + 1)",
          // Spark's ResolveAliases: a cast of a column keeps the column's name (checked against
          // Spark 4.2 in test/connect/DifferentialExpressions.test.ts)
          "age",
          "(age IS NULL)",
          "(name = bob)",
          "((age > 20) AND (city IS NOT NULL))"
        ])
        expect(yield* df.collect()).toEqual([
          {
            "(age + 1)": 32,
            age: "31",
            "(age IS NULL)": false,
            "(name = bob)": false,
            "((age > 20) AND (city IS NOT NULL))": true
          },
          {
            "(age + 1)": 18,
            age: "17",
            "(age IS NULL)": false,
            "(name = bob)": true,
            "((age > 20) AND (city IS NOT NULL))": false
          },
          {
            "(age + 1)": 46,
            age: "45",
            "(age IS NULL)": false,
            "(name = bob)": false,
            "((age > 20) AND (city IS NOT NULL))": true
          },
          // Spark's three-valued AND: null AND true is null
          {
            "(age + 1)": null,
            age: null,
            "(age IS NULL)": true,
            "(name = bob)": false,
            "((age > 20) AND (city IS NOT NULL))": null
          }
        ])
        const agg = p.agg(F.sum("age"), F.max("name"), F.count("*"), F.count("age"), F.avg("age"))
        assert.deepStrictEqual(agg.columns, ["sum(age)", "max(name)", "count(1)", "count(age)", "avg(age)"])
        expect(yield* agg.collect()).toEqual([
          { "sum(age)": 93, "max(name)": "dee", "count(1)": 4, "count(age)": 3, "avg(age)": 31 }
        ])
      })
    )
  )

  it.effect("computes arithmetic as Spark does with ANSI off", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark
          .createDataFrame(
            [{ a: 2147483647, b: 0, c: 7, s: "12x", n: "42" }],
            "a int, b int, c int, s string, n string"
          )
          .select(
            F.col("a").plus(1),
            F.col("c").divide(2),
            F.col("c").divide(F.col("b")),
            F.col("c").mod(F.col("b")),
            F.col("c").negate().mod(3),
            F.col("s").cast("int"),
            F.col("n").cast("int").plus(1)
          )
        assert.deepStrictEqual(df.columns, [
          "(a + 1)",
          "(c / 2)",
          "(c / b)",
          "(c % b)",
          "((- c) % 3)",
          // Spark's ResolveAliases: a cast of a column keeps the column's name
          "s",
          "(CAST(n AS INT) + 1)"
        ])
        assert.deepStrictEqual(
          df.dtypes.map(([, t]) => t),
          ["int", "double", "double", "int", "int", "int", "int"]
        )
        expect(yield* df.collect()).toEqual([
          {
            "(a + 1)": -2147483648, // int overflow wraps as in Java
            "(c / 2)": 3.5, // `/` is double division
            "(c / b)": null, // division by zero is null
            "(c % b)": null,
            "((- c) % 3)": -1, // the sign of the dividend, as Java's %
            s: null, // an invalid cast is null
            "(CAST(n AS INT) + 1)": 43
          }
        ])
      })
    )
  )

  it.effect("aliases with as/alias/name", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* people).select(F.col("name").as("who"), F.col("age").alias("years"), F.lit(1).name("one"))
        assert.deepStrictEqual(df.columns, ["who", "years", "one"])
        expect((yield* df.collect())[0]).toEqual({ who: "ann", years: 31, one: 1 })
      })
    )
  )

  it.effect("resolves column names case-insensitively, named as the user spelled them", () =>
    run(
      Effect.gen(function* () {
        // Spark's AttributeSeq.resolve returns `a.withName(name)`: the reference takes the
        // spelling of the name that resolved it
        const df = (yield* people).select(F.col("NAME"), F.col("Age").plus(0).as("a"))
        assert.deepStrictEqual(df.columns, ["NAME", "a"])
        expect(yield* df.collect()).toEqual([
          { NAME: "ann", a: 31 },
          { NAME: "bob", a: 17 },
          { NAME: "cid", a: 45 },
          { NAME: "dee", a: null }
        ])
        const grouped = (yield* people).groupBy(F.col("CITY")).count()
        assert.deepStrictEqual(grouped.columns, ["CITY", "count"])
        // with spark.sql.caseSensitive=true the name no longer resolves
        const strict = yield* Effect.flip(
          Effect.gen(function* () {
            const spark = yield* Session
            return yield* spark.createDataFrame(peopleRows, Person).select(F.col("NAME")).collect()
          }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.caseSensitive": true } })))
        )
        assert.strictEqual((strict as AnalysisError).reason, "UnresolvedColumn")
        const filtered = (yield* people).where(F.col("CITY").eq("rome"))
        expect(yield* filtered.collect()).toEqual([{ name: "cid", age: 45, city: "rome" }])
      })
    )
  )

  it.effect("an unresolved column fails the action with an AnalysisError and did-you-mean suggestions", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* people).select(F.col("nmae"))
        const error = yield* Effect.flip(df.collect())
        assert.strictEqual(error._tag, "AnalysisError")
        const e = error as AnalysisError
        assert.strictEqual(e.reason, "UnresolvedColumn")
        assert.strictEqual(e.errorClass, "UNRESOLVED_COLUMN.WITH_SUGGESTION")
        assert.deepStrictEqual(e.suggestions, ["name", "age", "city"])
        // Spark 4's message text (error class UNRESOLVED_COLUMN in error-conditions.json)
        assert.strictEqual(
          e.message,
          "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with name `nmae` cannot be resolved. Did you mean one of the following? [`name`, `age`, `city`]."
        )
        // the same error from every action
        const counted = yield* Effect.flip((yield* people).where(F.col("agee").gt(1)).count())
        assert.strictEqual((counted as AnalysisError).reason, "UnresolvedColumn")
        assert.strictEqual((counted as AnalysisError).suggestions?.[0], "age")
      })
    )
  )
})

describe("where / filter", () => {
  it.effect("keeps rows whose condition is true (null is not true)", () =>
    run(
      Effect.gen(function* () {
        const p = yield* people
        expect(yield* p.where(F.col("age").gt(18)).collect()).toEqual([
          { name: "ann", age: 31, city: "paris" },
          { name: "cid", age: 45, city: "rome" }
        ])
        expect(
          yield* p
            .filter(F.col("city").eq("paris").or(F.col("age").lt(20)))
            .select("name")
            .collect()
        ).toEqual([{ name: "ann" }, { name: "bob" }, { name: "dee" }])
        expect(yield* p.filter(F.col("age").isNull()).select("name").collect()).toEqual([{ name: "dee" }])
        expect(yield* p.where(F.col("city").isin("rome", "oslo")).select("name").collect()).toEqual([{ name: "cid" }])
        expect(yield* p.where(F.col("age").between(17, 31)).select("name").collect()).toEqual([
          { name: "ann" },
          { name: "bob" }
        ])
        expect(yield* p.where(F.col("age").gt(18).not()).select("name").collect()).toEqual([{ name: "bob" }])
      })
    )
  )

  it.effect("takes a predicate over the row object", () =>
    run(
      Effect.gen(function* () {
        const p = yield* people
        const df = p.filter((r) => r.age !== null && r.age < 40 && r.name.startsWith("a"))
        assert.deepStrictEqual(df.columns, ["name", "age", "city"])
        expect(yield* df.collect()).toEqual([{ name: "ann", age: 31, city: "paris" }])
        expect(yield* p.where((r) => r.city === null).count()).toBe(1)
      })
    )
  )
})

describe("withColumn, withColumnRenamed, drop", () => {
  it.effect("withColumn replaces an existing column in place and appends a new one", () =>
    run(
      Effect.gen(function* () {
        const p = yield* people
        const replaced = p.withColumn("age", F.col("age").plus(1))
        assert.deepStrictEqual(replaced.columns, ["name", "age", "city"])
        expect((yield* replaced.collect()).map((r) => r.age)).toEqual([32, 18, 46, null])
        const appended = p.withColumn("adult", F.col("age").geq(18))
        assert.deepStrictEqual(appended.columns, ["name", "age", "city", "adult"])
        expect((yield* appended.collect()).map((r) => r.adult)).toEqual([true, false, true, null])
        // replacing is case-insensitive and keeps the existing column's position
        // Spark's withColumns matches names with the resolver and names the result as given
        const upper = p.withColumn("NAME", F.lit("x"))
        assert.deepStrictEqual(upper.columns, ["NAME", "age", "city"])
        expect((yield* upper.collect()).map((r) => r.NAME)).toEqual(["x", "x", "x", "x"])
      })
    )
  )

  it.effect("withColumn can refer to the column it replaces and to earlier new columns", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* people)
          .withColumn("next", F.col("age").plus(1))
          .withColumn("next2", F.col("next").multiply(2))
          .select("name", "next", "next2")
        expect(yield* df.collect()).toEqual([
          { name: "ann", next: 32, next2: 64 },
          { name: "bob", next: 18, next2: 36 },
          { name: "cid", next: 46, next2: 92 },
          { name: "dee", next: null, next2: null }
        ])
      })
    )
  )

  it.effect("withColumnRenamed renames in place; an unknown name is a no-op", () =>
    run(
      Effect.gen(function* () {
        const p = yield* people
        const renamed = p.withColumnRenamed("city", "town")
        assert.deepStrictEqual(renamed.columns, ["name", "age", "town"])
        expect((yield* renamed.collect())[0]).toEqual({ name: "ann", age: 31, town: "paris" })
        const same = p.withColumnRenamed("nope" as never, "x")
        assert.deepStrictEqual(same.columns, ["name", "age", "city"])
        expect(yield* same.collect()).toEqual(peopleRows)
      })
    )
  )

  it.effect("drop removes columns; an unknown name is a no-op", () =>
    run(
      Effect.gen(function* () {
        const p = yield* people
        const df = p.drop("city")
        assert.deepStrictEqual(df.columns, ["name", "age"])
        expect(yield* df.collect()).toEqual(peopleRows.map(({ name, age }) => ({ name, age })))
        assert.deepStrictEqual(p.drop("age", "nope" as never).columns, ["name", "city"])
        assert.deepStrictEqual(p.drop(F.col("name")).columns, ["age", "city"])
      })
    )
  )
})

describe("map / flatMap", () => {
  it.effect("map with a struct schema gives its columns", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* people).map(
          (r) => ({ upper: r.name.toUpperCase(), len: r.name.length + (r.age ?? 0) }),
          Schema.Struct({ upper: Schema.String, len: Schema.Int })
        )
        assert.deepStrictEqual(df.columns, ["upper", "len"])
        assert.deepStrictEqual(df.dtypes, [
          ["upper", "string"],
          ["len", "bigint"]
        ])
        expect(yield* df.collect()).toEqual([
          { upper: "ANN", len: 34 },
          { upper: "BOB", len: 20 },
          { upper: "CID", len: 48 },
          { upper: "DEE", len: 3 }
        ])
      })
    )
  )

  it.effect("map with a single-value schema gives one column named value", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* people).map((r) => `${r.name}!`, Schema.String)
        assert.deepStrictEqual(df.columns, ["value"])
        expect(yield* df.collect()).toEqual([
          { value: "ann!" },
          { value: "bob!" },
          { value: "cid!" },
          { value: "dee!" }
        ])
        // a transformation after map sees the new column
        expect(yield* df.where(F.col("value").eq("bob!")).count()).toBe(1)
      })
    )
  )

  it.effect("flatMap flattens what the function returns", () =>
    run(
      Effect.gen(function* () {
        const p = yield* people
        const chars = p.flatMap((r) => (r.age === null ? [] : r.name.slice(0, 2).split("")), Schema.String)
        assert.deepStrictEqual(chars.columns, ["value"])
        expect(yield* chars.collect()).toEqual(["a", "n", "b", "o", "c", "i"].map((value) => ({ value })))
        const pairs = p.flatMap(
          (r) => (r.city === null ? [] : [{ who: r.name, where: r.city }]),
          Schema.Struct({ who: Schema.String, where: Schema.String })
        )
        expect(yield* pairs.collect()).toEqual([
          { who: "ann", where: "paris" },
          { who: "cid", where: "rome" },
          { who: "dee", where: "paris" }
        ])
      })
    )
  )
})

describe("groupBy and aggregates", () => {
  it.effect("count adds a count column; null is a group of its own", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* sales).groupBy("shop").count()
        assert.deepStrictEqual(df.columns, ["shop", "count"])
        assert.deepStrictEqual(df.dtypes, [
          ["shop", "string"],
          ["count", "bigint"]
        ])
        expect(sorted(yield* df.collect())).toEqual(
          sorted([
            { shop: "a", count: 2 },
            { shop: "b", count: 1 },
            { shop: null, count: 1 }
          ])
        )
      })
    )
  )

  it.effect("sum, avg, min and max name their columns fn(col) and keep Spark's types", () =>
    run(
      Effect.gen(function* () {
        const s = yield* sales
        const summed = s.groupBy("shop").sum("amount", "price")
        assert.deepStrictEqual(summed.columns, ["shop", "sum(amount)", "sum(price)"])
        assert.deepStrictEqual(
          summed.dtypes.map(([, t]) => t),
          ["string", "bigint", "double"]
        )
        expect(sorted(yield* summed.collect())).toEqual(
          sorted([
            { shop: "a", "sum(amount)": 7, "sum(price)": 2.0 },
            { shop: "b", "sum(amount)": 5, "sum(price)": 2.0 },
            { shop: null, "sum(amount)": 1, "sum(price)": 1.0 }
          ])
        )
        const avg = s.groupBy("shop").avg("amount")
        assert.deepStrictEqual(avg.dtypes, [
          ["shop", "string"],
          ["avg(amount)", "double"]
        ])
        expect(sorted(yield* avg.collect())).toEqual(
          sorted([
            { shop: "a", "avg(amount)": 3.5 },
            { shop: "b", "avg(amount)": 5 },
            { shop: null, "avg(amount)": 1 }
          ])
        )
        expect(sorted(yield* s.groupBy("shop").min("amount").collect())).toEqual(
          sorted([
            { shop: "a", "min(amount)": 3 },
            { shop: "b", "min(amount)": 5 },
            { shop: null, "min(amount)": 1 }
          ])
        )
        expect(sorted(yield* s.groupBy("shop").max("price").collect())).toEqual(
          sorted([
            { shop: "a", "max(price)": 1.5 },
            { shop: "b", "max(price)": 2 },
            { shop: null, "max(price)": 1 }
          ])
        )
      })
    )
  )

  it.effect("sum() without columns sums every numeric column", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* sales).groupBy("shop").sum()
        assert.deepStrictEqual(df.columns, ["shop", "sum(amount)", "sum(price)"])
        const a = (yield* df.collect()).find((r) => r.shop === "a")
        expect(a).toEqual({ shop: "a", "sum(amount)": 7, "sum(price)": 2 })
      })
    )
  )

  it.effect("agg takes Columns, aliases and the dictionary form", () =>
    run(
      Effect.gen(function* () {
        const s = yield* sales
        const df = s.groupBy("shop").agg(F.sum("amount").as("total"), F.count("*"), F.max(F.col("price").multiply(2)))
        assert.deepStrictEqual(df.columns, ["shop", "total", "count(1)", "max((price * 2))"])
        expect(sorted(yield* df.collect())).toEqual(
          sorted([
            { shop: "a", total: 7, "count(1)": 2, "max((price * 2))": 3 },
            { shop: "b", total: 5, "count(1)": 1, "max((price * 2))": 4 },
            { shop: null, total: 1, "count(1)": 1, "max((price * 2))": 2 }
          ])
        )
        const dict = s.groupBy("shop").agg({ amount: "max", price: "avg" })
        assert.deepStrictEqual(dict.columns, ["shop", "max(amount)", "avg(price)"])
        expect(sorted(yield* dict.collect())).toEqual(
          sorted([
            { shop: "a", "max(amount)": 4, "avg(price)": 1 },
            { shop: "b", "max(amount)": 5, "avg(price)": 2 },
            { shop: null, "max(amount)": 1, "avg(price)": 1 }
          ])
        )
      })
    )
  )

  it.effect("groups by several columns and by expressions", () =>
    run(
      Effect.gen(function* () {
        const s = yield* sales
        const df = s.groupBy("shop", F.col("amount").gt(3).as("big")).count()
        assert.deepStrictEqual(df.columns, ["shop", "big", "count"])
        expect(sorted(yield* df.collect())).toEqual(
          sorted([
            { shop: "a", big: false, count: 1 },
            { shop: "a", big: true, count: 1 },
            { shop: "b", big: true, count: 1 },
            { shop: null, big: false, count: 1 }
          ])
        )
      })
    )
  )

  it.effect("a global aggregate over no rows gives one row: count 0, sum null", () =>
    run(
      Effect.gen(function* () {
        const s = yield* sales
        const empty = s.where(F.col("amount").gt(100))
        expect(yield* empty.agg(F.count("*"), F.sum("amount"), F.max("price"), F.avg("price")).collect()).toEqual([
          { "count(1)": 0, "sum(amount)": null, "max(price)": null, "avg(price)": null }
        ])
        expect(yield* empty.groupBy().count().collect()).toEqual([{ count: 0 }])
        // grouped: no groups, no rows
        expect(yield* empty.groupBy("shop").count().collect()).toEqual([])
      })
    )
  )
})

describe("F.window", () => {
  const Event = Schema.Struct({ ts: Schema.Date, n: Schema.Int })
  const eventRows = [
    { ts: utc("2024-01-01T00:00:03"), n: 1 },
    { ts: utc("2024-01-01T00:00:07"), n: 2 },
    { ts: utc("2024-01-01T00:00:12"), n: 3 },
    { ts: utc("2024-01-01T00:00:10"), n: 4 } // an event at a window's end belongs to the next window
  ]

  it.effect("tumbling windows group events into [start, end)", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark
          .createDataFrame(eventRows, Event)
          .groupBy(F.window("ts", "10 seconds"))
          .agg(F.sum("n").as("total"), F.count("*").as("events"))
        assert.deepStrictEqual(df.columns, ["window", "total", "events"])
        assert.deepStrictEqual(df.dtypes[0], ["window", "struct<start:timestamp,end:timestamp>"])
        const rows = (yield* df.orderBy("window").collect()) as ReadonlyArray<Record<string, unknown>>
        expect(rows).toEqual([
          { window: { start: utc("2024-01-01T00:00:00"), end: utc("2024-01-01T00:00:10") }, total: 3, events: 2 },
          { window: { start: utc("2024-01-01T00:00:10"), end: utc("2024-01-01T00:00:20") }, total: 7, events: 2 }
        ])
        const w = rows[0].window as { start: unknown; end: unknown }
        assert.ok(w.start instanceof Date && w.end instanceof Date)
      })
    )
  )

  it.effect("sliding windows put each event into windowDuration / slideDuration windows", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark
          .createDataFrame(eventRows.slice(0, 3), Event)
          .groupBy(F.window("ts", "10 seconds", "5 seconds"))
          .agg(F.collect_list("n").as("ns"))
          .select(F.col("window.start").as("start"), F.col("window.end").as("end"), "ns")
          .orderBy("start")
        expect(yield* df.collect()).toEqual([
          { start: utc("2023-12-31T23:59:55"), end: utc("2024-01-01T00:00:05"), ns: [1] },
          { start: utc("2024-01-01T00:00:00"), end: utc("2024-01-01T00:00:10"), ns: [1, 2] },
          { start: utc("2024-01-01T00:00:05"), end: utc("2024-01-01T00:00:15"), ns: [2, 3] },
          { start: utc("2024-01-01T00:00:10"), end: utc("2024-01-01T00:00:20"), ns: [3] }
        ])
      })
    )
  )

  it.effect("a window can be selected next to the other columns", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark.createDataFrame(eventRows.slice(0, 1), Event).select(F.window("ts", "1 minute"), "n")
        expect(yield* df.collect()).toEqual([
          { window: { start: utc("2024-01-01T00:00:00"), end: utc("2024-01-01T00:01:00") }, n: 1 }
        ])
      })
    )
  )
})

describe("explode", () => {
  const Bag = Schema.Struct({ k: Schema.String, xs: Schema.NullOr(Schema.Array(Schema.Int)) })
  const bagRows = [
    { k: "a", xs: [1, 2] },
    { k: "b", xs: [] },
    { k: "c", xs: null },
    { k: "d", xs: [3] }
  ]

  it.effect("gives one row per element in a column named col; empty and null arrays give none", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark.createDataFrame(bagRows, Bag).select("k", F.explode("xs"))
        assert.deepStrictEqual(df.columns, ["k", "col"])
        expect(yield* df.collect()).toEqual([
          { k: "a", col: 1 },
          { k: "a", col: 2 },
          { k: "d", col: 3 }
        ])
      })
    )
  )

  it.effect("explode_outer keeps rows with empty or null arrays", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark.createDataFrame(bagRows, Bag).select("k", F.explode_outer("xs").as("x"))
        assert.deepStrictEqual(df.columns, ["k", "x"])
        expect(yield* df.collect()).toEqual([
          { k: "a", x: 1 },
          { k: "a", x: 2 },
          { k: "b", x: null },
          { k: "c", x: null },
          { k: "d", x: 3 }
        ])
      })
    )
  )
})

describe("explode of maps and posexplode", () => {
  it.effect("explode of a map gives key and value; posexplode gives pos and col", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark.createDataFrame(
          [{ k: "a", m: { x: 1, y: 2 }, xs: ["p", "q"] }],
          Schema.Struct({
            k: Schema.String,
            m: Schema.Record(Schema.String, Schema.Int),
            xs: Schema.Array(Schema.String)
          })
        )
        const kv = df.select("k", F.explode("m"))
        assert.deepStrictEqual(kv.columns, ["k", "key", "value"])
        expect(yield* kv.collect()).toEqual([
          { k: "a", key: "x", value: 1 },
          { k: "a", key: "y", value: 2 }
        ])
        const pos = df.select(F.posexplode("xs"))
        assert.deepStrictEqual(pos.columns, ["pos", "col"])
        expect(yield* pos.collect()).toEqual([
          { pos: 0, col: "p" },
          { pos: 1, col: "q" }
        ])
      })
    )
  )
})

describe("join", () => {
  const L = Schema.Struct({ id: Schema.NullOr(Schema.Int), l: Schema.String })
  const R = Schema.Struct({ id: Schema.NullOr(Schema.Int), r: Schema.String })
  const frames = Session.useSync((spark) => ({
    left: spark.createDataFrame(
      [
        { id: 1, l: "a" },
        { id: 2, l: "b" },
        { id: null, l: "n" }
      ],
      L
    ),
    right: spark.createDataFrame(
      [
        { id: 2, r: "x" },
        { id: 3, r: "y" },
        { id: null, r: "m" }
      ],
      R
    )
  }))

  it.effect("USING joins: one key column, null keys never match", () =>
    run(
      Effect.gen(function* () {
        const { left, right } = yield* frames
        const inner = left.join(right, "id")
        assert.deepStrictEqual(inner.columns, ["id", "l", "r"])
        expect(yield* inner.collect()).toEqual([{ id: 2, l: "b", r: "x" }])

        const leftJ = left.join(right, "id", "left")
        assert.deepStrictEqual(leftJ.columns, ["id", "l", "r"])
        expect(sorted(yield* leftJ.collect())).toEqual(
          sorted([
            { id: 1, l: "a", r: null },
            { id: 2, l: "b", r: "x" },
            { id: null, l: "n", r: null }
          ])
        )
        expect(sorted(yield* left.join(right, ["id"], "left_outer").collect())).toEqual(sorted(yield* leftJ.collect()))

        // right: the key comes from the right side
        const rightJ = left.join(right, "id", "right")
        assert.deepStrictEqual(rightJ.columns, ["id", "l", "r"])
        expect(sorted(yield* rightJ.collect())).toEqual(
          sorted([
            { id: 2, l: "b", r: "x" },
            { id: 3, l: null, r: "y" },
            { id: null, l: null, r: "m" }
          ])
        )

        // full: the key is coalesce(left.id, right.id)
        const full = left.join(right, "id", "full")
        assert.deepStrictEqual(full.columns, ["id", "l", "r"])
        expect(sorted(yield* full.collect())).toEqual(
          sorted([
            { id: 1, l: "a", r: null },
            { id: 2, l: "b", r: "x" },
            { id: null, l: "n", r: null },
            { id: 3, l: null, r: "y" },
            { id: null, l: null, r: "m" }
          ])
        )
        expect(sorted(yield* left.join(right, "id", "full_outer").collect())).toEqual(sorted(yield* full.collect()))
        expect(sorted(yield* left.join(right, "id", "outer").collect())).toEqual(sorted(yield* full.collect()))

        const semi = left.join(right, "id", "left_semi")
        assert.deepStrictEqual(semi.columns, ["id", "l"])
        expect(yield* semi.collect()).toEqual([{ id: 2, l: "b" }])

        // anti keeps the null-key row: it matches nothing
        const anti = left.join(right, "id", "left_anti")
        assert.deepStrictEqual(anti.columns, ["id", "l"])
        expect(yield* anti.collect()).toEqual([
          { id: 1, l: "a" },
          { id: null, l: "n" }
        ])
      })
    )
  )

  it.effect("condition joins keep both sides' columns", () =>
    run(
      Effect.gen(function* () {
        const { left, right } = yield* frames
        const r2 = right.withColumnRenamed("id", "rid")
        const cond = left.col("id").eq(r2.col("rid"))

        const inner = left.join(r2, cond)
        assert.deepStrictEqual(inner.columns, ["id", "l", "rid", "r"])
        expect(yield* inner.collect()).toEqual([{ id: 2, l: "b", rid: 2, r: "x" }])

        expect(sorted(yield* left.join(r2, cond, "left").collect())).toEqual(
          sorted([
            { id: 1, l: "a", rid: null, r: null },
            { id: 2, l: "b", rid: 2, r: "x" },
            { id: null, l: "n", rid: null, r: null }
          ])
        )
        expect(sorted(yield* left.join(r2, cond, "right").collect())).toEqual(
          sorted([
            { id: 2, l: "b", rid: 2, r: "x" },
            { id: null, l: null, rid: 3, r: "y" },
            { id: null, l: null, rid: null, r: "m" }
          ])
        )
        expect(sorted(yield* left.join(r2, cond, "full").collect())).toEqual(
          sorted([
            { id: 1, l: "a", rid: null, r: null },
            { id: 2, l: "b", rid: 2, r: "x" },
            { id: null, l: "n", rid: null, r: null },
            { id: null, l: null, rid: 3, r: "y" },
            { id: null, l: null, rid: null, r: "m" }
          ])
        )
        expect(yield* left.join(r2, cond, "left_semi").collect()).toEqual([{ id: 2, l: "b" }])
        expect(yield* left.join(r2, cond, "left_anti").collect()).toEqual([
          { id: 1, l: "a" },
          { id: null, l: "n" }
        ])
        // a non-equi condition
        const lt = left.join(r2, left.col("id").lt(r2.col("rid")))
        expect(sorted(yield* lt.collect())).toEqual(
          sorted([
            { id: 1, l: "a", rid: 2, r: "x" },
            { id: 1, l: "a", rid: 3, r: "y" },
            { id: 2, l: "b", rid: 3, r: "y" }
          ])
        )
        // eqNullSafe matches null keys
        const ns = left.join(r2, left.col("id").eqNullSafe(r2.col("rid")))
        expect(sorted(yield* ns.collect())).toEqual(
          sorted([
            { id: 2, l: "b", rid: 2, r: "x" },
            { id: null, l: "n", rid: null, r: "m" }
          ])
        )
      })
    )
  )

  it.effect("duplicate keys join many-to-many", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const l = spark.createDataFrame(
          [
            { k: 1, a: "x" },
            { k: 1, a: "y" },
            { k: 2, a: "z" }
          ],
          "k int, a string"
        )
        const r = spark.createDataFrame(
          [
            { k: 1, b: "p" },
            { k: 1, b: "q" },
            { k: 3, b: "s" }
          ],
          "k int, b string"
        )
        expect(sorted(yield* l.join(r, "k").collect())).toEqual(
          sorted([
            { k: 1, a: "x", b: "p" },
            { k: 1, a: "x", b: "q" },
            { k: 1, a: "y", b: "p" },
            { k: 1, a: "y", b: "q" }
          ])
        )
        // a semi join never duplicates left rows
        expect(yield* l.join(r, "k", "left_semi").count()).toBe(2)
        expect(yield* l.join(r, "k", "full").count()).toBe(6)
      })
    )
  )

  it.effect("cross joins give the Cartesian product", () =>
    run(
      Effect.gen(function* () {
        const { left, right } = yield* frames
        const r2 = right.withColumnRenamed("id", "rid")
        const cross = left.crossJoin(r2)
        assert.deepStrictEqual(cross.columns, ["id", "l", "rid", "r"])
        const rows = yield* cross.collect()
        assert.strictEqual(rows.length, 9)
        expect(sorted(rows.map((x) => `${x.l}${x.r}`))).toEqual(["am", "ax", "ay", "bm", "bx", "by", "nm", "nx", "ny"])
        expect(yield* left.join(r2, undefined, "cross").count()).toBe(9)
      })
    )
  )

  it.effect("a self-join tells its sides apart by alias and by df.col", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const emp = spark.createDataFrame(
          [
            { id: 1, name: "boss", mgr: null },
            { id: 2, name: "ann", mgr: 1 },
            { id: 3, name: "bob", mgr: 1 },
            { id: 4, name: "cid", mgr: 2 }
          ],
          Schema.Struct({ id: Schema.Int, name: Schema.String, mgr: Schema.NullOr(Schema.Int) })
        )
        const expected = sorted([
          { employee: "ann", manager: "boss" },
          { employee: "bob", manager: "boss" },
          { employee: "cid", manager: "ann" }
        ])
        const byAlias = emp
          .alias("e")
          .join(emp.alias("m"), F.col("e.mgr").eq(F.col("m.id")))
          .select(F.col("e.name").as("employee"), F.col("m.name").as("manager"))
        expect(sorted(yield* byAlias.collect())).toEqual(expected)

        const managers = emp.select("id", "name")
        const byCol = emp
          .join(managers, emp.col("mgr").eq(managers.col("id")))
          .select(emp.col("name").as("employee"), managers.col("name").as("manager"))
        expect(sorted(yield* byCol.collect())).toEqual(expected)

        // the unqualified name is ambiguous in a self-join
        const ambiguous = yield* Effect.flip(
          emp
            .alias("e")
            .join(emp.alias("m"), F.col("e.mgr").eq(F.col("m.id")))
            .select(F.col("name"))
            .collect()
        )
        assert.strictEqual((ambiguous as AnalysisError).reason, "AmbiguousReference")
      })
    )
  )
})

describe("union / unionByName", () => {
  const XY = Schema.Struct({ x: Schema.Int, y: Schema.String })

  it.effect("union appends rows by position (UNION ALL: duplicates stay)", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const a = spark.createDataFrame([{ x: 1, y: "a" }], XY)
        const b = spark.createDataFrame(
          [
            { x: 2, y: "b" },
            { x: 1, y: "a" }
          ],
          XY
        )
        const u = a.union(b)
        assert.deepStrictEqual(u.columns, ["x", "y"])
        expect(yield* u.collect()).toEqual([
          { x: 1, y: "a" },
          { x: 2, y: "b" },
          { x: 1, y: "a" }
        ])
        // by position: the names of the first side win
        const renamed = b.withColumnRenamed("x", "other")
        expect(yield* a.union(renamed as never).collect()).toEqual(yield* u.collect())
      })
    )
  )

  it.effect("unionByName matches columns by name, and pads missing ones with null when allowed", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const a = spark.createDataFrame([{ x: 1, y: "a" }], XY)
        const c = spark.createDataFrame([{ y: "c", x: 3 }], Schema.Struct({ y: Schema.String, x: Schema.Int }))
        const byName = a.unionByName(c)
        assert.deepStrictEqual(byName.columns, ["x", "y"])
        expect(yield* byName.collect()).toEqual([
          { x: 1, y: "a" },
          { x: 3, y: "c" }
        ])
        const d = spark.createDataFrame([{ x: 4, z: true }], Schema.Struct({ x: Schema.Int, z: Schema.Boolean }))
        const padded = a.unionByName(d, true)
        assert.deepStrictEqual(padded.columns, ["x", "y", "z"])
        expect(yield* padded.collect()).toEqual([
          { x: 1, y: "a", z: null },
          { x: 4, y: null, z: true }
        ])
        const missing = yield* Effect.flip(a.unionByName(d).collect())
        assert.strictEqual(missing._tag, "AnalysisError")
      })
    )
  )
})

describe("orderBy, limit, distinct, dropDuplicates", () => {
  const V = Schema.Struct({ k: Schema.String, v: Schema.NullOr(Schema.Int) })
  const vRows = [
    { k: "b", v: 3 },
    { k: "a", v: null },
    { k: "a", v: 1 },
    { k: "b", v: 2 }
  ]
  const values = Session.useSync((spark) => spark.createDataFrame(vRows, V))

  it.effect("sorts ascending with nulls first by default, descending with nulls last", () =>
    run(
      Effect.gen(function* () {
        const df = yield* values
        const vs = (d: DataFrame<{ k: string; v: number | null }>) =>
          Effect.map(d.collect(), (rs) => rs.map((r) => r.v))
        expect(yield* vs(df.orderBy("v"))).toEqual([null, 1, 2, 3])
        expect(yield* vs(df.sort(F.col("v").asc()))).toEqual([null, 1, 2, 3])
        expect(yield* vs(df.orderBy(F.col("v").desc()))).toEqual([3, 2, 1, null])
        expect(yield* vs(df.orderBy(F.desc("v")))).toEqual([3, 2, 1, null])
        expect(yield* vs(df.orderBy(F.col("v").asc_nulls_last()))).toEqual([1, 2, 3, null])
        expect(yield* vs(df.orderBy(F.col("v").desc_nulls_first()))).toEqual([null, 3, 2, 1])
        expect(yield* df.orderBy("k", F.col("v").desc()).collect()).toEqual([
          { k: "a", v: 1 },
          { k: "a", v: null },
          { k: "b", v: 3 },
          { k: "b", v: 2 }
        ])
        // sorting by an expression that is not selected
        expect(yield* df.orderBy(F.col("v").multiply(-1)).select("v").collect()).toEqual([
          { v: null },
          { v: 3 },
          { v: 2 },
          { v: 1 }
        ])
      })
    )
  )

  it.effect("limit keeps the first n rows", () =>
    run(
      Effect.gen(function* () {
        const df = yield* values
        expect(yield* df.limit(2).collect()).toEqual(vRows.slice(0, 2))
        expect(yield* df.limit(0).collect()).toEqual([])
        expect(yield* df.limit(10).count()).toBe(4)
        expect(yield* df.orderBy(F.col("v").desc()).limit(1).collect()).toEqual([{ k: "b", v: 3 }])
        expect(yield* df.take(1)).toEqual([vRows[0]])
        expect(yield* df.first()).toEqual(vRows[0])
        const bad = yield* Effect.flip(df.limit(-1).collect())
        assert.strictEqual(bad._tag, "AnalysisError")
      })
    )
  )

  it.effect("distinct removes duplicate rows (null equals null)", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark.createDataFrame(
          [
            { k: "a", v: 1 },
            { k: "a", v: 1 },
            { k: "b", v: null },
            { k: "b", v: null },
            { k: "b", v: 1 }
          ],
          V
        )
        expect(sorted(yield* df.distinct().collect())).toEqual(
          sorted([
            { k: "a", v: 1 },
            { k: "b", v: null },
            { k: "b", v: 1 }
          ])
        )
        expect(yield* df.select("k").distinct().count()).toBe(2)
      })
    )
  )

  it.effect("dropDuplicates keeps the first row of each key", () =>
    run(
      Effect.gen(function* () {
        const df = yield* values
        expect(sorted(yield* df.dropDuplicates(["k"]).collect())).toEqual(
          sorted([
            { k: "b", v: 3 },
            { k: "a", v: null }
          ])
        )
        expect(yield* df.dropDuplicates().count()).toBe(4)
        const unknown = yield* Effect.flip(df.dropDuplicates(["nope" as never]).collect())
        assert.strictEqual(unknown._tag, "AnalysisError")
      })
    )
  )

  // issue #21 deviation 6: Spark's batch dropDuplicates is an aggregate grouped by the keys
  // (ReplaceDeduplicateWithAggregate), so a -0.0 key comes out as 0.0; so does distinct()
  it.effect("dropDuplicates(['d']) and distinct() on -0.0 keys output 0.0, as Spark", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame(
        [
          { d: -0.0, v: 1 },
          { d: 0.0, v: 2 }
        ],
        "d double, v int"
      )
      const byKey = yield* df.dropDuplicates(["d"]).collect()
      expect(byKey).toHaveLength(1)
      expect(Object.is(byKey[0].d, 0)).toBe(true)
      expect(byKey[0].v).toBe(1)
      const distinct = yield* df.select("d").distinct().collect()
      expect(distinct).toHaveLength(1)
      expect(Object.is(distinct[0].d, 0)).toBe(true)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("Spark's value semantics", () => {
  it.effect("strings sort by code point: upper case before lower case", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark.createDataFrame(
          [{ s: "b" }, { s: "B" }, { s: "a" }, { s: "ab" }, { s: "A" }, { s: "" }],
          "s string"
        )
        expect((yield* df.orderBy("s").collect()).map((r) => r.s)).toEqual(["", "A", "B", "a", "ab", "b"])
        expect(yield* df.agg(F.min("s"), F.max("s")).collect()).toEqual([{ "min(s)": "", "max(s)": "b" }])
      })
    )
  )

  it.effect("NaN equals NaN, groups together and sorts above every number; -0.0 groups with 0.0", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark.createDataFrame(
          [{ d: 1 }, { d: Number.NaN }, { d: null }, { d: Number.NaN }, { d: -1 }],
          "d double"
        )
        expect((yield* df.orderBy("d").collect()).map((r) => r.d)).toEqual([null, -1, 1, Number.NaN, Number.NaN])
        expect((yield* df.orderBy(F.col("d").desc()).collect()).map((r) => r.d)).toEqual([
          Number.NaN,
          Number.NaN,
          1,
          -1,
          null
        ])
        expect(yield* df.where(F.col("d").eq(Number.NaN)).count()).toBe(2)
        expect(yield* df.where(F.col("d").gt(1000)).count()).toBe(2)
        expect(sorted(yield* df.groupBy("d").count().collect())).toEqual(
          sorted([
            { d: 1, count: 1 },
            { d: -1, count: 1 },
            { d: null, count: 1 },
            { d: Number.NaN, count: 2 }
          ])
        )
        expect(yield* df.agg(F.max("d"), F.min("d")).collect()).toEqual([{ "max(d)": Number.NaN, "min(d)": -1 }])
        const zeros = spark.createDataFrame([{ d: 0 }, { d: -0 }], "d double")
        const grouped = yield* zeros.groupBy("d").count().collect()
        assert.strictEqual(grouped.length, 1)
        assert.strictEqual(grouped[0].count, 2)
        assert.ok(Object.is(grouped[0].d, 0), "Spark normalizes -0.0 to 0.0 in grouping keys")
        expect(yield* zeros.distinct().count()).toBe(1)
      })
    )
  )

  it.effect("F.when names its column CASE WHEN … END", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark
          .createDataFrame([{ v: 1 }, { v: 5 }, { v: null }], "v int")
          .select(F.when(F.col("v").gt(1), "big").otherwise("small"), F.when(F.col("v").eq(1), 1).as("one"))
        assert.deepStrictEqual(df.columns, ["CASE WHEN (v > 1) THEN big ELSE small END", "one"])
        expect(yield* df.collect()).toEqual([
          { "CASE WHEN (v > 1) THEN big ELSE small END": "small", one: 1 },
          { "CASE WHEN (v > 1) THEN big ELSE small END": "big", one: null },
          { "CASE WHEN (v > 1) THEN big ELSE small END": "small", one: null }
        ])
      })
    )
  )
})

describe("session: range, temp views, table, sql", () => {
  it.effect("spark.range gives a bigint column id", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const r = spark.range(3)
        assert.deepStrictEqual(r.dtypes, [["id", "bigint"]])
        expect(yield* r.collect()).toEqual([{ id: 0 }, { id: 1 }, { id: 2 }])
        expect(yield* spark.range(1, 10, 3).collect()).toEqual([{ id: 1 }, { id: 4 }, { id: 7 }])
        expect(yield* spark.range(5, 0, -2).collect()).toEqual([{ id: 5 }, { id: 3 }, { id: 1 }])
        expect(yield* spark.range(0).count()).toBe(0)
        expect(yield* spark.range(10).where(F.col("id").mod(3).eq(0)).agg(F.sum("id")).collect()).toEqual([
          { "sum(id)": 18 }
        ])
      })
    )
  )

  it.effect("spark.table reads a temp view; an unknown name fails the action", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        yield* (yield* people).createOrReplaceTempView("people")
        const t = spark.table("people")
        assert.deepStrictEqual(t.columns, ["name", "age", "city"])
        expect(yield* t.collect()).toEqual(peopleRows)
        expect(yield* spark.table("PEOPLE").where(F.col("age").gt(40)).select("name").collect()).toEqual([
          { name: "cid" }
        ])
        const missing = yield* Effect.flip(spark.table("nope").collect())
        assert.strictEqual(missing._tag, "AnalysisError")
        assert.strictEqual((missing as AnalysisError).reason, "TableNotFound")
      })
    )
  )

  it.effect("spark.sql runs over temp views with parameters", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        yield* (yield* people).createOrReplaceTempView("people")
        const df = yield* spark.sql("SELECT name, age FROM people WHERE age > ? ORDER BY name", [18])
        assert.deepStrictEqual(df.columns, ["name", "age"])
        expect(yield* df.collect()).toEqual([
          { name: "ann", age: 31 },
          { name: "cid", age: 45 }
        ])
        // the result is a DataFrame like any other
        expect(yield* df.where(F.col("age").lt(40)).select("name").collect()).toEqual([{ name: "ann" }])
        const counted = yield* spark.sql(
          "SELECT city, count(*) AS n FROM people GROUP BY city ORDER BY city NULLS FIRST"
        )
        expect(yield* counted.collect()).toEqual([
          { city: null, n: 1 },
          { city: "paris", n: 2 },
          { city: "rome", n: 1 }
        ])
        const bad = yield* Effect.flip(spark.sql("SELEC 1"))
        assert.strictEqual(bad._tag, "AnalysisError")
      })
    )
  )

  it.effect("collect on a streaming DataFrame fails with Spark's AnalysisError", () =>
    run(
      Effect.gen(function* () {
        const input = yield* MemoryStream.make(Schema.Struct({ v: Schema.Int }))
        yield* input.addData([{ v: 1 }, { v: 2 }])
        const streaming = input.toDF()
        assert.strictEqual(streaming.isStreaming, true)
        const message = "Queries with streaming sources must be executed with writeStream.start()"
        const error = yield* Effect.flip(streaming.where(F.col("v").gt(1)).collect())
        assert.strictEqual(error._tag, "AnalysisError")
        assert.strictEqual(error.message, message)
        assert.strictEqual((yield* Effect.flip(streaming.count())).message, message)
        assert.strictEqual((yield* Effect.flip(streaming.groupBy("v").count().show())).message, message)
        // a streaming relation built directly (as any source's toDF builds it) fails the same way
        const spark = yield* Session
        const direct = new DataFrame<{ v: number }>(spark.state, {
          _tag: "StreamingRelation",
          planId: Plan.newPlanId(),
          format: "memory",
          sourceKey: "test-source",
          options: {},
          output: [E.attribute("v", T.LongType, false)]
        })
        assert.strictEqual((yield* Effect.flip(direct.collect())).message, message)
      })
    )
  )
})
