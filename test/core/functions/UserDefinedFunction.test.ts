/**
 * `F.udf`: a typed JavaScript function as a column expression, after Spark's `UDFSuite` and
 * pyspark's `udf`: calls are named `UDF(a)` (or by `withName`), the column has the declared
 * return type, arguments arrive as JavaScript values (null as null, timestamps as `Date`s,
 * structs as objects), the function runs once per row (never folded over constants, as Spark's
 * ScalaUDF is not foldable), and `asNondeterministic` keeps a filter on it above an aggregation.
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import { F, MemoryStream, Session } from "../../../mod.ts"
import {
  AddData,
  CheckAnswer,
  CheckLastBatch,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"

type Spark = Effect.Success<typeof Session>

const run = <A>(f: (spark: Spark) => Effect.Effect<A, unknown, never>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const spark = yield* Session
      return yield* f(spark)
    }).pipe(Effect.provide(Session.layer())) as Effect.Effect<A, never, never>
  )

const people = (spark: Spark) =>
  spark.createDataFrame(
    [
      { name: "ann", age: 30, born: new Date(Date.UTC(1994, 4, 1)) },
      { name: null, age: null, born: null }
    ],
    "name string, age int, born timestamp"
  )

describe("F.udf", () => {
  it("UDF names: UDF(a) by default, the given name with withName", async () => {
    const plusOne = F.udf((x: number | null) => (x === null ? null : x + 1), "int")
    const df = await run((spark) =>
      Effect.succeed(people(spark).select(plusOne("age"), plusOne.withName("inc")("age")))
    )
    expect(df.columns).toEqual(["UDF(age)", "inc(age)"])
    expect(df.dtypes).toEqual([
      ["UDF(age)", "int"],
      ["inc(age)", "int"]
    ])
  })

  it("FAILED_EXECUTE_UDF: execute user defined function (QueryExecutionErrorsSuite): a typed failure", async () => {
    const boom = F.udf((s: string | null) => {
      if (s === "ann") throw new Error("no ann")
      return s
    }, "string")
    const e = await run((spark) => Effect.flip(people(spark).select(boom.withName("check")("name"), "age").collect()))
    expect(e).toMatchObject({
      _tag: "ConnectorError",
      errorClass: "FAILED_EXECUTE_UDF",
      sqlState: "39000",
      message:
        "[FAILED_EXECUTE_UDF] User defined function (`check`: (string) => string) failed due to: Error: no ann. SQLSTATE: 39000"
    })
  })

  it("passes JavaScript values in and converts the result to the declared type", async () => {
    const year = F.udf((d: Date | null) => (d === null ? null : d.getUTCFullYear()), T.IntegerType)
    const shout = F.udf((s: string | null) => s?.toUpperCase(), "string")
    const pair = F.udf(
      (s: { name: string | null; age: number | null }) => [s.name ?? "?", String(s.age)],
      "array<string>"
    )
    const rows = await run((spark) =>
      people(spark)
        .select(year("born").as("y"), shout("name").as("n"), pair(F.struct("name", "age")).as("p"))
        .collect()
    )
    expect(rows).toEqual([
      { y: 1994, n: "ANN", p: ["ann", "30"] },
      // undefined from the function is null
      { y: null, n: null, p: ["?", "null"] }
    ])
  })

  it("returns timestamps as Dates, stored as the engine stores them", async () => {
    const nextDay = F.udf((d: Date) => new Date(d.getTime() + 86_400_000), "timestamp")
    const rows = await run((spark) =>
      people(spark)
        .where(F.col("born").isNotNull())
        .select(nextDay("born").as("d"))
        .where(F.col("d").gt(F.lit(new Date(Date.UTC(1994, 4, 1)))))
        .collect()
    )
    expect(rows).toEqual([{ d: new Date(Date.UTC(1994, 4, 2)) }])
  })

  it("works in filters and as an aggregate's argument", async () => {
    const isAdult = F.udf((age: number | null) => age !== null && age >= 18, "boolean")
    const double = F.udf((age: number | null) => (age === null ? null : age * 2), "int")
    const [r] = await run((spark) =>
      people(spark)
        .where(isAdult("age"))
        .agg(F.sum(double("age")).as("s"), F.count("*").as("n"))
        .collect()
    )
    expect(r).toEqual({ s: 60, n: 1 })
  })

  it("runs once per row, also over constant arguments (never folded)", async () => {
    let calls = 0
    const counted = F.udf((x: number) => {
      calls++
      return x
    }, "int")
    const rows = await run((spark) =>
      people(spark)
        .select(counted(F.lit(7)).as("c"))
        .collect()
    )
    expect(rows).toEqual([{ c: 7 }, { c: 7 }])
    expect(calls).toBe(2)
  })

  it("two UDFs of the same name over the same column stay two columns", async () => {
    const a = F.udf((x: number | null) => (x ?? 0) + 1, "int")
    const b = F.udf((x: number | null) => (x ?? 0) + 2, "int")
    const rows = await run((spark) => people(spark).select(a("age").as("a"), b("age").as("b")).limit(1).collect())
    expect(rows).toEqual([{ a: 31, b: 32 }])
  })

  it("asNondeterministic: the optimizer does not push a filter on it below an aggregation", async () => {
    const known = F.udf((s: string | null) => s !== null, "boolean")
    const random = known.asNondeterministic()
    expect([known.deterministic, random.deterministic]).toEqual([true, false])
    const optimized = (u: typeof known) =>
      run((spark) => people(spark).groupBy("name").count().where(u("name")).explain(true)).then(
        (plan) => plan.split("== Optimized Logical Plan ==")[1].split("== Physical Plan ==")[0]
      )
    // a deterministic UDF on the grouping column is pushed below the Aggregate (Spark's
    // PushPredicateThroughNonJoin); a nondeterministic one stays above it
    const pushed = await optimized(known)
    expect(pushed.indexOf("Filter")).toBeGreaterThan(pushed.indexOf("Aggregate"))
    const kept = await optimized(random)
    expect(kept.indexOf("Filter")).toBeLessThan(kept.indexOf("Aggregate"))
  })

  it("runs in a streaming query, before a stateful aggregation and across a restart", async () => {
    const bucket = F.udf((v: number) => (v < 10 ? "small" : "large"), "string").withName("bucket")
    await Effect.runPromise(
      Effect.gen(function* () {
        const input = yield* MemoryStream.make(Schema.Int)
        const counts = input.toDF().groupBy(bucket("value").as("b")).agg(F.count("*").as("n"))
        yield* testStream(counts, "complete", [
          AddData(input, 1, 20, 3),
          CheckLastBatch({ b: "small", n: 2 }, { b: "large", n: 1 }),
          StopStream,
          StartStream(),
          AddData(input, 30),
          CheckAnswer({ b: "small", n: 2 }, { b: "large", n: 2 })
        ])
      }).pipe(Effect.provide(Session.layer()))
    )
  })

  it("an unknown type name fails the query with an AnalysisError, not at build time", async () => {
    const bad = F.udf((x: number) => x, "integr")
    const df = await run((spark) => Effect.succeed(people(spark).select(bad("age"))))
    const exit = await run(() => Effect.exit(df.collect()))
    expect(String(exit)).toContain('F.udf: "integr" is not a Spark type name.')
  })
})
