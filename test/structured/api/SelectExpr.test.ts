/**
 * `selectExpr`, `F.expr` and `filter("…")` end to end, with the rows and column names Apache
 * Spark 4 gives for the same program (spark.sql.ansi.enabled=false, session time zone UTC);
 * cases named after DataFrameSuite's selectExpr tests and Spark's datetime.sql / interval.sql
 * golden files (sql/core/src/test/resources/sql-tests/inputs/).
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { AnalysisError, F, MemoryStream, ParseException, Session } from "../../../mod.ts"

const run = <A, Err>(self: Effect.Effect<A, Err, Session>) => self.pipe(Effect.provide(Session.layer()))

const utc = (s: string) => new Date(`${s}Z`)

const Event = Schema.Struct({ key: Schema.String, value: Schema.Int, ts: Schema.Date, day: Schema.String })
const events = Session.useSync((spark) =>
  spark.createDataFrame(
    [
      { key: "a", value: 1, ts: utc("2011-11-11T11:11:11"), day: "2011-11-11" },
      { key: "b", value: 2, ts: utc("2024-01-31T23:30:00"), day: "2024-01-31" }
    ],
    Event
  )
)

describe("DataFrameSuite: selectExpr", () => {
  it.effect("selectExpr", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        const out = df.selectExpr("abs(value)", "upper(key) AS k", "value + 1 v1", "*")
        expect(out.columns).toEqual(["abs(value)", "k", "v1", "key", "value", "ts", "day"])
        const rows = yield* out.select("abs(value)", "k", "v1").collect()
        expect(rows).toEqual([
          { "abs(value)": 1, k: "A", v1: 2 },
          { "abs(value)": 2, k: "B", v1: 3 }
        ])
      })
    )
  )

  it.effect("selectExpr with alias", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        const rows = yield* df.selectExpr("key as k").select("k").collect()
        expect(rows).toEqual([{ k: "a" }, { k: "b" }])
      })
    )
  )

  it.effect("selectExpr with udf-free aggregates: count(*) and friends", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        const out = df.selectExpr("count(*)", "sum(value)", "max(ts)")
        expect(out.columns).toEqual(["count(1)", "sum(value)", "max(ts)"])
        expect(yield* out.collect()).toEqual([
          { "count(1)": 2, "sum(value)": 3, "max(ts)": utc("2024-01-31T23:30:00") }
        ])
      })
    )
  )

  it.effect("names unaliased expressions as Spark does", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        expect(
          df.selectExpr(
            "value * 2 + 1",
            "CAST(value AS BIGINT)",
            "value IN (1, 2)",
            "CASE WHEN value > 1 THEN 'x' END",
            "key IS NULL"
          ).columns
        ).toEqual([
          "((value * 2) + 1)",
          // Spark's ResolveAliases: a cast of a column keeps its name
          "value",
          "(value IN (1, 2))",
          "CASE WHEN (value > 1) THEN x END",
          "(key IS NULL)"
        ])
      })
    )
  )

  it.effect("bitwise operators and integral division", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        // value is a bigint (Schema.Int); `3 & 6` stays an int
        const out = df
          .where("key = 'b'")
          .selectExpr("value & 3", "value | 8", "value ^ 7", "~value", "7 div value", "value div 0", "3 & 6")
        expect(out.dtypes).toEqual([
          ["(value & 3)", "bigint"],
          ["(value | 8)", "bigint"],
          ["(value ^ 7)", "bigint"],
          ["~value", "bigint"],
          ["(7 div value)", "bigint"],
          ["(value div 0)", "bigint"],
          ["(3 & 6)", "int"]
        ])
        expect(Object.values((yield* out.collect())[0])).toEqual([2, 10, 5, -3, 3, null, 2])
        // Spark 4.2's names, types and values (probed through Spark Connect)
        const shifts = df
          .where("key = 'b'")
          .selectExpr("value << 2", "value >> 1", "-value >>> 60", "cast(value as int) << 31")
        expect(shifts.dtypes.map(([, t]) => t)).toEqual(["bigint", "bigint", "bigint", "int"])
        expect(yield* shifts.collect()).toEqual([
          { "(value << 2)": 8, "(value >> 1)": 1, "((- value) >>> 60)": 15, "(CAST(value AS INT) << 31)": 0 }
        ])
        const err = yield* df.selectExpr("value & 1.5").collect().pipe(Effect.flip)
        expect(err.errorClass).toBe("DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE")
      })
    )
  )

  it.effect("subscripts of arrays and maps, 0-based, null outside", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        const out = df
          .where("key = 'a'")
          .selectExpr("split('x,y', ',')[1]", "split('x,y', ',')[2] AS none", "map('k', value)['k'] AS m")
        expect(out.columns).toEqual(["split(x,y, ,, -1)[1]", "none", "m"])
        expect(yield* out.collect()).toEqual([{ "split(x,y, ,, -1)[1]": "y", none: null, m: 1 }])
      })
    )
  )

  it.effect("a text that does not parse fails the first action with Spark's ParseException", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        const err = yield* df.selectExpr("key", "value +").collect().pipe(Effect.flip)
        assert.instanceOf(err, ParseException)
        assert.strictEqual(err._tag, "AnalysisError")
        expect(err.message).toBe(
          "[PARSE_SYNTAX_ERROR] Syntax error at or near end of input. SQLSTATE: 42601 (line 1, pos 7)\n\n== SQL ==\nvalue +\n-------^^^\n"
        )
      })
    )
  )

  it.effect("an unknown function is UNRESOLVED_ROUTINE, an unknown column UNRESOLVED_COLUMN", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        const err = yield* df.selectExpr("nope(value)").collect().pipe(Effect.flip)
        assert.instanceOf(err, AnalysisError)
        expect(err.errorClass).toBe("UNRESOLVED_ROUTINE")
        const col = yield* df.selectExpr("valu + 1").collect().pipe(Effect.flip)
        expect(col.errorClass).toBe("UNRESOLVED_COLUMN.WITH_SUGGESTION")
      })
    )
  )
})

describe("filter and where with a condition string", () => {
  it.effect("keeps the rows the condition holds for", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        expect(yield* df.filter("value > 1 AND key LIKE 'b%'").select("key").collect()).toEqual([{ key: "b" }])
        expect(yield* df.where("value BETWEEN 0 AND 1").select("key").collect()).toEqual([{ key: "a" }])
        expect(yield* df.where("key NOT IN ('a')").select("key").collect()).toEqual([{ key: "b" }])
      })
    )
  )

  it.effect("a condition that does not parse fails with ParseException", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        const err = yield* df.filter("value >> ").count().pipe(Effect.flip)
        assert.instanceOf(err, ParseException)
        expect(err.errorClass).toBe("PARSE_SYNTAX_ERROR")
      })
    )
  )

  it.effect("F.expr builds the same filter as F", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        const a = yield* df.where(F.expr("value = 2")).collect()
        const b = yield* df.where(F.col("value").eq(2)).collect()
        expect(a).toEqual(b)
        const err = yield* df.where(F.expr("value = = 2")).collect().pipe(Effect.flip)
        assert.instanceOf(err, ParseException)
        expect(err.startPosition).toBe(8)
      })
    )
  )
})

describe("timestamp and interval arithmetic (datetime.sql, interval.sql)", () => {
  it.effect("timestamp ± interval", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        const out = df
          .where("key = 'a'")
          .selectExpr(
            "ts + interval '2' day",
            "ts - interval '2' day",
            "ts + interval 10 seconds",
            "ts - interval 1 hour AS h",
            "ts + interval '2-2' year to month",
            "ts + interval '1 2:03' day to minute",
            "ts + INTERVAL 1 MONTH + INTERVAL 1 DAY"
          )
        expect(out.columns).toEqual([
          "ts + INTERVAL '2' DAY",
          "ts - INTERVAL '2' DAY",
          "ts + INTERVAL '10' SECOND",
          "h",
          "ts + INTERVAL '2-2' YEAR TO MONTH",
          "ts + INTERVAL '1 02:03' DAY TO MINUTE",
          "ts + INTERVAL '1' MONTH + INTERVAL '1' DAY"
        ])
        const [row] = yield* out.collect()
        expect(Object.values(row)).toEqual([
          utc("2011-11-13T11:11:11"),
          utc("2011-11-09T11:11:11"),
          utc("2011-11-11T11:11:21"),
          utc("2011-11-11T10:11:11"),
          utc("2014-01-11T11:11:11"),
          utc("2011-11-12T13:14:11"),
          utc("2011-12-12T11:11:11")
        ])
      })
    )
  )

  it.effect("months clamp to the end of the month", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        const rows = yield* df.where("key = 'b'").selectExpr("ts + interval 1 month AS m").collect()
        expect(rows).toEqual([{ m: utc("2024-02-29T23:30:00") }])
      })
    )
  )

  it.effect("date ± interval: a date for days and months, a timestamp for a time interval", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        const out = df
          .where("key = 'a'")
          .selectExpr(
            "date'2011-11-11' + interval '2' day AS d1",
            "date'2011-11-11' - interval 1 month AS d2",
            "date'2011-11-11' + interval '2' second AS t1",
            "'2011-11-11 11:11:11' - interval '2' second AS s1"
          )
        expect(out.dtypes).toEqual([
          ["d1", "date"],
          ["d2", "date"],
          ["t1", "timestamp"],
          ["s1", "string"]
        ])
        const [row] = yield* out.collect()
        expect(row).toEqual({
          d1: utc("2011-11-13T00:00:00"),
          d2: utc("2011-10-11T00:00:00"),
          t1: utc("2011-11-11T00:00:02"),
          s1: "2011-11-11 11:11:09"
        })
      })
    )
  )

  it.effect("F.col(ts).plus(F.expr(interval)) is the same arithmetic", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        const rows = yield* df
          .where("key = 'a'")
          .select(
            F.col("ts").plus(F.expr("INTERVAL 90 MINUTES")).as("later"),
            F.col("ts").minus(F.expr("interval 1 day")).as("earlier")
          )
          .collect()
        expect(rows).toEqual([{ later: utc("2011-11-11T12:41:11"), earlier: utc("2011-11-10T11:11:11") }])
      })
    )
  )

  it.effect("timestampadd, dateadd, timestampdiff, datediff with a unit", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        const [row] = yield* df
          .where("key = 'a'")
          .selectExpr(
            "timestampadd(HOUR, 2, ts) AS a1",
            "dateadd(MONTH, -1, ts) AS a2",
            "date_add(YEAR, 1, ts) AS a3",
            "timestampadd(MILLISECOND, 1500, ts) AS a4",
            "timestampdiff(MINUTE, ts, ts + interval 90 seconds) AS d1",
            "datediff(MONTH, timestamp'2024-01-31 10:00:00', timestamp'2024-02-29 09:00:00') AS d2",
            "timestampdiff(DAY, timestamp'2024-01-02 10:00:00', timestamp'2024-01-01 11:00:00') AS d3",
            "timestampdiff(YEAR, date'2020-02-29', date'2021-02-28') AS d4"
          )
          .collect()
        expect(row).toEqual({
          a1: utc("2011-11-11T13:11:11"),
          a2: utc("2011-10-11T11:11:11"),
          a3: utc("2012-11-11T11:11:11"),
          a4: utc("2011-11-11T11:11:12.500"),
          d1: 1,
          d2: 0,
          d3: 0,
          d4: 0
        })
        const typed = yield* df
          .where("key = 'a'")
          .select(
            F.timestampadd("day", 3, "ts").as("x"),
            F.timestampdiff("SECOND", "ts", F.col("ts").plus(F.expr("interval 1 minute"))).as("y")
          )
          .collect()
        expect(typed).toEqual([{ x: utc("2011-11-14T11:11:11"), y: 60 }])
      })
    )
  )
})

describe("filter with an aliased condition", () => {
  it.effect("drops the alias, as Spark's CleanupAliases", () =>
    run(
      Effect.gen(function* () {
        const df = yield* events
        expect(yield* df.filter("value > 1 AS keep").select("key").collect()).toEqual([{ key: "b" }])
      })
    )
  )
})

describe("expression strings in a streaming query", () => {
  it.effect("selectExpr with interval arithmetic, withWatermark and a window from F.expr, in append mode", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const input = yield* MemoryStream.make(Schema.Struct({ word: Schema.String, ts: Schema.Date }))
        const counts = input
          .toDF()
          .selectExpr("word", "ts - INTERVAL 1 HOUR AS ts")
          .filter("word IS NOT NULL AND length(word) > 0")
          .withWatermark("ts", "10 seconds")
          .groupBy(F.expr("window(ts, '10 seconds')"), F.col("word"))
          .count()
        const query = yield* counts.writeStream.format("memory").queryName("exprCounts").outputMode("append").start()
        yield* input.addData([
          { word: "a", ts: utc("2024-01-01T01:00:01") },
          { word: "a", ts: utc("2024-01-01T01:00:05") },
          { word: "", ts: utc("2024-01-01T01:00:06") },
          { word: "b", ts: utc("2024-01-01T01:00:12") }
        ])
        yield* query.processAllAvailable()
        // moves the watermark past the first window (event time 01:00:30 - 1 hour - 10 s)
        yield* input.addData([{ word: "c", ts: utc("2024-01-01T01:00:30") }])
        yield* query.processAllAvailable()
        const rows = yield* spark.table("exprCounts").collect()
        yield* query.stop()
        expect(rows).toEqual([
          { window: { start: utc("2024-01-01T00:00:00"), end: utc("2024-01-01T00:00:10") }, word: "a", count: 2 },
          { window: { start: utc("2024-01-01T00:00:10"), end: utc("2024-01-01T00:00:20") }, word: "b", count: 1 }
        ])
      })
    )
  )
})

// The examples of Spark's "Window Functions" page (docs/sql-ref-syntax-qry-select-window.md),
// written as expression strings over its `employees` table; rows compared by name, since the
// local engine emits a window's rows partition by partition.
describe("sql-ref-syntax-qry-select-window: OVER in expression strings", () => {
  const Employee = Schema.Struct({ name: Schema.String, dept: Schema.String, salary: Schema.Int, age: Schema.Int })
  const employees = Session.useSync((spark) =>
    spark.createDataFrame(
      [
        { name: "Lisa", dept: "Sales", salary: 10000, age: 35 },
        { name: "Evan", dept: "Sales", salary: 32000, age: 38 },
        { name: "Fred", dept: "Engineering", salary: 21000, age: 28 },
        { name: "Alex", dept: "Sales", salary: 30000, age: 33 },
        { name: "Tom", dept: "Engineering", salary: 23000, age: 33 },
        { name: "Jane", dept: "Marketing", salary: 29000, age: 28 },
        { name: "Jeff", dept: "Marketing", salary: 35000, age: 38 },
        { name: "Paul", dept: "Engineering", salary: 29000, age: 23 },
        { name: "Chloe", dept: "Engineering", salary: 23000, age: 25 }
      ],
      Employee
    )
  )
  const byName = (rows: ReadonlyArray<Record<string, unknown>>) =>
    [...rows].sort((a, b) => String(a.name).localeCompare(String(b.name)))

  it.effect("RANK, DENSE_RANK, CUME_DIST and MIN over a window", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* employees).selectExpr(
          "name",
          "RANK() OVER (PARTITION BY dept ORDER BY salary) AS rank",
          "DENSE_RANK() OVER (PARTITION BY dept ORDER BY salary ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS dense_rank",
          "CUME_DIST() OVER (PARTITION BY dept ORDER BY age RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cume_dist",
          "MIN(salary) OVER (PARTITION BY dept ORDER BY salary) AS min"
        )
        expect(byName(yield* df.collect())).toEqual([
          { name: "Alex", rank: 2, dense_rank: 2, cume_dist: 1 / 3, min: 10000 },
          { name: "Chloe", rank: 2, dense_rank: 2, cume_dist: 0.5, min: 21000 },
          { name: "Evan", rank: 3, dense_rank: 3, cume_dist: 1, min: 10000 },
          { name: "Fred", rank: 1, dense_rank: 1, cume_dist: 0.75, min: 21000 },
          { name: "Jane", rank: 1, dense_rank: 1, cume_dist: 0.5, min: 29000 },
          { name: "Jeff", rank: 2, dense_rank: 2, cume_dist: 1, min: 29000 },
          { name: "Lisa", rank: 1, dense_rank: 1, cume_dist: 2 / 3, min: 10000 },
          { name: "Paul", rank: 4, dense_rank: 3, cume_dist: 0.25, min: 21000 },
          { name: "Tom", rank: 2, dense_rank: 2, cume_dist: 1, min: 21000 }
        ])
      })
    )
  )

  it.effect("LAG and LEAD with a default, and an unaliased name as Spark gives it", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* employees)
          .filter("dept <> 'Engineering'")
          .selectExpr(
            "name",
            "LAG(salary) OVER (PARTITION BY dept ORDER BY salary) AS lag",
            "LEAD(salary, 1, 0) OVER (PARTITION BY dept ORDER BY salary)"
          )
        const lead = "lead(salary, 1, 0) OVER (PARTITION BY dept ORDER BY salary ASC NULLS FIRST ROWS BETWEEN 1 FOLLOWING AND 1 FOLLOWING)"
        expect(df.columns).toEqual(["name", "lag", lead])
        expect(byName(yield* df.collect())).toEqual([
          { name: "Alex", lag: 10000, [lead]: 32000 },
          { name: "Evan", lag: 30000, [lead]: 0 },
          { name: "Jane", lag: null, [lead]: 35000 },
          { name: "Jeff", lag: 29000, [lead]: 0 },
          { name: "Lisa", lag: null, [lead]: 30000 }
        ])
      })
    )
  )
})
