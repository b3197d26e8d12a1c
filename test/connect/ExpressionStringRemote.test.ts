/**
 * `F.expr`, `selectExpr` and `filter("…")` on a remote session go to Spark as
 * `Expression.ExpressionString` (pyspark's mapping), parsed by Spark's own grammar, against the
 * real Spark Connect server of test/connect/globalSetup.ts.
 */
import { it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { describe, expect } from "vitest"
import { AnalysisError, F, Session } from "../../mod.ts"
import { remoteAddress } from "./remote.ts"

const remote = () => Session.layer({ remote: remoteAddress(), conf: { "spark.sql.shuffle.partitions": 2 } })

const Event = Schema.Struct({ key: Schema.String, value: Schema.Int, ts: Schema.Date })
const rows = [
  { key: "a", value: 1, ts: new Date("2011-11-11T11:11:11Z") },
  { key: "b", value: 2, ts: new Date("2024-01-31T23:30:00Z") }
]

describe("expression strings on a remote session", () => {
  it.effect("selectExpr, filter and F.expr run on Spark, with Spark's names", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame(rows, Event)
      const out = df
        .filter("value > 1 AND key LIKE 'b%'")
        .selectExpr("upper(key) AS k", "value + 1", "ts + INTERVAL 1 MONTH AS m", "timestampadd(HOUR, 1, ts) AS h")
      expect(yield* out.collect()).toEqual([
        { k: "B", "(value + 1)": 3, m: new Date("2024-02-29T23:30:00Z"), h: new Date("2024-02-01T00:30:00Z") }
      ])
      const viaExpr = yield* df.select(F.expr("value * 10").as("v"), F.col("key")).where(F.expr("key = 'a'")).collect()
      expect(viaExpr).toEqual([{ v: 10, key: "a" }])
      // Spark parses what tributary's evaluator does not have (lambda functions) when it runs the plan
      expect(yield* df.selectExpr("transform(array(value), x -> x * 4)[0] AS b").orderBy("b").collect()).toEqual([
        { b: 4 },
        { b: 8 }
      ])
    }).pipe(Effect.provide(remote()))
  )

  it.effect("a text Spark cannot parse comes back as Spark's PARSE_SYNTAX_ERROR", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const err = yield* spark.createDataFrame(rows, Event).selectExpr("value +").collect().pipe(Effect.flip)
      expect(err).toBeInstanceOf(AnalysisError)
      expect(err.message).toContain("PARSE_SYNTAX_ERROR")
    }).pipe(Effect.provide(remote()))
  )
})
