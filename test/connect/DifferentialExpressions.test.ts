/**
 * Spark as the oracle for expression strings: the same `selectExpr` / `filter("…")` texts are
 * parsed by tributary's parser on the local engine and by Spark's own parser on Spark 4.2
 * (the remote session sends the text as `Expression.ExpressionString`); names, types and rows
 * must agree (interval literals print with Spark 4's ANSI names; `date + INTERVAL n DAYS`, which
 * Spark names `date_add(…, extractansiintervaldays(…))`, is aliased).
 */
import { describe } from "vitest"
import * as F from "../../core/F.ts"
import type { DataFrame } from "../../structured/api/DataFrame.ts"
import type { OpenSession } from "../../structured/api/Session.ts"
import { type DataSet, EVENTS_SCHEMA, loose, useEngines } from "./differential.ts"
import { remoteAddress } from "./remote.ts"

interface Data {
  readonly events: DataFrame<any>
}

const load = async (spark: OpenSession, data: DataSet): Promise<Data> => ({
  events: await spark.run(spark.read.schema(EVENTS_SCHEMA).json(data.eventsJson))
})

const { cases } = useEngines(load, { remote: remoteAddress })

describe("differential: expression strings", () => {
  cases([
    {
      name: "operators, precedence and Spark's generated names",
      build: (_, d) =>
        d.events.selectExpr(
          "id",
          "amount + price * 2",
          "(amount + price) * 2",
          "amount - -1",
          "-amount",
          "amount % 3",
          "price / 4",
          "amount > 1 AND price < 50 OR user IS NULL",
          "NOT amount = 1",
          "user || '-' || category",
          "amount & 3",
          "amount | 8 ^ 1",
          "~amount",
          "amount div 3",
          "id div 0",
          "amount & 3 + 1",
          "amount << 3",
          "-amount >> 1",
          "-amount >>> 28"
        )
    },
    {
      name: "predicates: IN, BETWEEN, LIKE, RLIKE, IS [NOT] DISTINCT FROM, IS TRUE",
      build: (_, d) =>
        d.events.selectExpr(
          "id",
          "amount IN (1, 2, 3) AS in1",
          "amount NOT IN (1, 2) AS in2",
          "price BETWEEN 10 AND 50.5 AS btw",
          "note LIKE '%o%' AS lk",
          "note NOT LIKE 'a%' AS nlk",
          "note RLIKE '^[a-z]+ ' AS rl",
          "user IS DISTINCT FROM 'u1' AS dist",
          "user IS NOT DISTINCT FROM NULL AS ndist",
          "amount > 2 IS TRUE AS t",
          "category IS NOT NULL AS nn"
        )
    },
    {
      name: "CASE, CAST and functions by name in any case",
      build: (_, d) =>
        d.events.selectExpr(
          "id",
          "CASE WHEN amount > 2 THEN 'big' WHEN amount > 0 THEN 'small' ELSE 'none' END",
          "CASE category WHEN 'books' THEN 1 ELSE 0 END AS isBook",
          "CAST(price AS INT)",
          "CAST(amount AS STRING) AS s",
          "UPPER(user)",
          "coalesce(category, 'n/a')",
          "round(price, 1)",
          "length(note)",
          "substring(note, 1, 3)",
          "split(note, ' ')[0]",
          "split(note, ' ')[5]"
        )
    },
    {
      name: "filter and where with condition strings",
      build: (_, d) =>
        d.events.filter("amount > 1 AND note IS NOT NULL").where("user IN ('u1', 'u2')").selectExpr("id", "user")
    },
    {
      name: "aggregates in selectExpr: count(*), count(DISTINCT), sum, avg, min, max",
      build: (_, d) =>
        d.events.selectExpr("count(*)", "count(user)", "count(DISTINCT user)", "sum(amount)", "min(ts)", "max(price)")
    },
    {
      name: "timestamp ± interval, typed literals, timestampadd and timestampdiff",
      build: (_, d) =>
        d.events.selectExpr(
          "id",
          "ts + INTERVAL 10 SECONDS AS a",
          "ts - interval 1 hour AS b",
          "ts + interval '1' day AS c",
          "ts + interval '2-1' year to month AS e",
          "ts + interval '1 2:03' day to minute AS f",
          "ts + INTERVAL 1 MONTH + INTERVAL 2 DAYS AS g",
          "timestampadd(MINUTE, 90, ts) AS h",
          "dateadd(MONTH, -1, ts) AS i",
          "timestampdiff(SECOND, ts, TIMESTAMP '2024-03-11 00:00:00') AS j",
          "datediff(HOUR, TIMESTAMP '2024-03-01 00:00:00', ts) AS k",
          "ts > TIMESTAMP '2024-03-10 10:02:00' AS l",
          "DATE '2024-03-10' + interval '2' day AS m",
          "DATE '2024-03-10' + interval 3 hours AS n",
          "DATE '2024-01-31' + interval 1 month AS o"
        )
    },
    {
      name: "unaliased timestamp ± interval columns carry Spark 4's ANSI interval names",
      build: (_, d) =>
        d.events.selectExpr(
          "id",
          "ts + INTERVAL 10 SECONDS",
          "ts - interval 90 minutes",
          "ts + interval '1 2:03' day to minute",
          "ts + interval 1 year 2 months",
          "ts + interval 1.5 seconds",
          "ts + interval '1 day 2 hours'",
          "DATE '2024-03-10' + interval 3 hours"
        )
    },
    {
      name: "an unaliased cast of a column keeps the column's name, in text and through F",
      build: (_, d) =>
        d.events
          .selectExpr("CAST(price AS INT)", "CAST(amount + 1 AS STRING)")
          .union(loose(d.events.select(F.col("price").cast("int"), F.col("amount").plus(1).cast("string"))))
    },
    {
      name: "a literal mixing year-month and day-time units fails on both",
      build: (_, d) => d.events.selectExpr("ts + INTERVAL 1 MONTH 2 DAYS"),
      expectFailure: true
    },
    {
      // ordered by every column but the partition's, so that only identical rows tie
      name: "window functions with OVER in expression text: Spark's names, default and written frames, values",
      build: (_, d) => {
        const all = "id, ts, amount, price, category, note"
        return d.events.selectExpr(
          "id",
          `row_number() OVER (PARTITION BY user ORDER BY ${all})`,
          `sum(amount) OVER (PARTITION BY user ORDER BY ${all} ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)`,
          `sum(amount) OVER (PARTITION BY user ORDER BY ${all} ROWS 2 PRECEDING)`,
          `sum(id) OVER (PARTITION BY user ORDER BY ${all} ROWS BETWEEN -1 PRECEDING AND 1 FOLLOWING)`,
          `lag(amount) OVER (PARTITION BY user ORDER BY ${all})`,
          `lead(price, 2, 0.5) OVER (ORDER BY id DESC NULLS FIRST, user, ts, amount, price, category, note)`,
          "count(*) OVER ()",
          "avg(amount) OVER (PARTITION BY category)",
          "rank() OVER (ORDER BY amount)",
          "dense_rank() OVER (DISTRIBUTE BY user SORT BY amount DESC)",
          "max(id) OVER (ORDER BY amount RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING)",
          `ntile(3) OVER (ORDER BY user, ${all})`,
          "cume_dist() OVER (PARTITION BY user ORDER BY id)",
          "percent_rank() OVER (ORDER BY id)",
          `nth_value(amount, 2) OVER (PARTITION BY user ORDER BY ${all} ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)`,
          "min(amount) OVER (CLUSTER BY category)"
        )
      }
    },
    {
      name: "a named window in expression text (no WINDOW clause) fails on both",
      build: (_, d) => d.events.selectExpr("id", "sum(amount) OVER w"),
      expectFailure: true
    },
    {
      name: "a frame bound that is not a literal fails on both",
      build: (_, d) => d.events.selectExpr("sum(amount) OVER (ORDER BY id ROWS BETWEEN amount PRECEDING AND CURRENT ROW)"),
      expectFailure: true
    },
    {
      name: "a window function without OVER in expression text fails on both",
      build: (_, d) => d.events.selectExpr("id", "row_number()"),
      expectFailure: true
    },
    {
      name: "a text neither engine can parse fails on both",
      build: (_, d) => d.events.selectExpr("id", "amount +"),
      expectFailure: true
    }
  ])
})
