/**
 * Translated plans run on a REAL Spark Connect server (Spark 4.2) and must return exactly the
 * rows the local engine's `collect()` returns for the same DataFrame: filters, projections with
 * many `F` functions, aggregates, joins (a self-join through `df.col`), unions, sort/limit,
 * explode, time windows and dedup.
 *
 * The server's address comes from `TRIBUTARY_SPARK_REMOTE` or the global setup
 * (`inject("sparkRemote")`). The remote session runs with `spark.sql.ansi.enabled=false` and a
 * UTC session time zone, the semantics the local engine implements.
 */
import { create } from "@bufbuild/protobuf"
import { createClient, type Interceptor } from "@connectrpc/connect"
import { createGrpcTransport } from "@connectrpc/connect-node"
import { Effect, Result } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { decodeBatches } from "../../connect/Arrow.ts"
import { parseAddress } from "../../connect/Client.ts"
import {
  AnalyzePlanRequestSchema,
  ConfigRequestSchema,
  ExecutePlanRequestSchema,
  PlanSchema,
  ReleaseSessionRequestSchema,
  SparkConnectService,
  UserContextSchema
} from "../../connect/gen/spark/connect/base_pb.ts"
import { type Relation, RelationSchema, SQLSchema } from "../../connect/gen/spark/connect/relations_pb.ts"
import { translatePlan } from "../../connect/Translate.ts"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Column } from "../../core/Column.ts"
import { rowsToExternal } from "../../core/Row.ts"
import { F, Session, type SessionShape } from "../../mod.ts"
import type { DataFrame } from "../../structured/api/DataFrame.ts"
import * as State from "../../structured/contracts/SessionState.ts"
import * as E from "../../core/Expression.ts"
import * as T from "../../core/DataType.ts"

const address = process.env.TRIBUTARY_SPARK_REMOTE ?? inject("sparkRemote")

/** A raw Spark Connect session: ExecutePlan of a relation, Arrow decoded to tributary rows. */
const openRemote = () => {
  const parsed = parseAddress(address)
  if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
  const a = parsed.success
  const auth: Interceptor = (next) => (req) => {
    if (a.token !== undefined) req.header.set("authorization", `Bearer ${a.token}`)
    return next(req)
  }
  const rpc = createClient(
    SparkConnectService,
    createGrpcTransport({ baseUrl: `http://${a.host}:${a.port}`, interceptors: [auth] })
  )
  const sessionId = crypto.randomUUID()
  const userContext = create(UserContextSchema, { userId: "translate-test" })
  const configure = () =>
    rpc.config(
      create(ConfigRequestSchema, {
        sessionId,
        userContext,
        operation: {
          opType: {
            case: "set",
            value: {
              pairs: [
                { key: "spark.sql.ansi.enabled", value: "false" },
                { key: "spark.sql.session.timeZone", value: "UTC" }
              ]
            }
          }
        }
      })
    )
  const run = async (relation: Relation) => {
    const request = create(ExecutePlanRequestSchema, {
      sessionId,
      userContext,
      operationId: crypto.randomUUID(),
      plan: create(PlanSchema, { opType: { case: "root", value: relation } })
    })
    const batches: Array<Uint8Array> = []
    for await (const r of rpc.executePlan(request)) {
      if (r.responseType.case === "arrowBatch") batches.push(r.responseType.value.data)
    }
    const decoded = decodeBatches(batches, undefined)
    if (Result.isFailure(decoded)) throw new Error(decoded.failure.message)
    return decoded.success
  }
  /** Spark's analysed schema of a relation (`AnalyzePlan`): streaming relations cannot be executed as a batch. */
  const schemaOf = async (relation: Relation): Promise<ReadonlyArray<string>> => {
    const response = await rpc.analyzePlan(
      create(AnalyzePlanRequestSchema, {
        sessionId,
        userContext,
        analyze: { case: "schema", value: { plan: create(PlanSchema, { opType: { case: "root", value: relation } }) } }
      })
    )
    if (response.result.case !== "schema") throw new Error("no schema in Spark's answer")
    const kind = response.result.value.schema?.kind
    if (kind?.case !== "struct") throw new Error("the schema is not a struct")
    return kind.value.fields.map((f) => f.name)
  }
  const sql = (query: string) => run(create(RelationSchema, { relType: { case: "sql", value: create(SQLSchema, { query }) } }))
  const release = () => rpc.releaseSession(create(ReleaseSessionRequestSchema, { sessionId, userContext }))
  return { configure, run, schemaOf, sql, release }
}

/** Values made comparable: dates as ISO strings, doubles rounded to 12 significant digits. */
const normalize = (v: unknown): unknown => {
  if (v === null || v === undefined) return null
  if (v instanceof Date) return v.toISOString()
  if (typeof v === "number") return Number.isInteger(v) ? v : Number(v.toPrecision(12))
  if (v instanceof Uint8Array) return [...v]
  if (v instanceof Map) return [...v.entries()].map(([k, x]) => [normalize(k), normalize(x)])
  if (Array.isArray(v)) return v.map(normalize)
  if (typeof v === "object") {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) out[k] = normalize(x)
    return out
  }
  return v
}

const sorted = (rows: ReadonlyArray<unknown>): Array<unknown> =>
  rows.map(normalize).sort((a, b) => {
    const x = JSON.stringify(a)
    const y = JSON.stringify(b)
    return x < y ? -1 : x > y ? 1 : 0
  })

const sessionLayer = Session.layer()

let remote: ReturnType<typeof openRemote>

beforeAll(async () => {
  remote = openRemote()
  await remote.configure()
})

afterAll(async () => {
  await remote.release().catch(() => undefined)
})

interface Case {
  readonly name: string
  readonly build: (spark: SessionShape) => DataFrame<any>
  /** The result's order is defined (an orderBy on a unique key): compare in order. */
  readonly ordered?: boolean
}

const people = (spark: SessionShape) =>
  spark.createDataFrame(
    [
      { id: 1, name: "Ann", age: 31, dept: "eng", salary: 100.5, ts: new Date("2024-01-01T00:00:03Z"), tags: ["a", "b"] },
      { id: 2, name: "bob", age: 17, dept: "eng", salary: 80, ts: new Date("2024-01-01T00:00:07Z"), tags: [] },
      { id: 3, name: "Cid", age: null, dept: "ops", salary: 55.25, ts: new Date("2024-01-01T00:00:12Z"), tags: ["c"] },
      { id: 4, name: "dee", age: 45, dept: null, salary: null, ts: new Date("2024-01-01T00:00:19Z"), tags: null },
      { id: 5, name: "Eve", age: 31, dept: "ops", salary: 70, ts: new Date("2024-01-01T00:01:02Z"), tags: ["a"] }
    ],
    "id INT, name STRING, age INT, dept STRING, salary DOUBLE, ts TIMESTAMP, tags ARRAY<STRING>"
  )

const depts = (spark: SessionShape) =>
  spark.createDataFrame(
    [
      { dept: "eng", floor: 3 },
      { dept: "ops", floor: 1 },
      { dept: "hr", floor: 2 }
    ],
    "dept STRING, floor INT"
  )

const cases: ReadonlyArray<Case> = [
  { name: "local relation as is", build: (s) => people(s) },
  { name: "filter and select", build: (s) => people(s).where(F.col("age").gt(20)).select("name", "age") },
  {
    name: "arithmetic, comparison and logic",
    build: (s) =>
      people(s).select(
        F.col("id").plus(1).as("a"),
        F.col("salary").multiply(2).as("b"),
        F.col("age").divide(2).as("c"),
        F.col("age").mod(7).as("d"),
        F.col("age").minus(F.col("id")).as("e"),
        F.col("age").negate().as("f"),
        F.col("age").eq(31).as("g"),
        F.col("age").neq(31).as("h"),
        F.col("age").eqNullSafe(F.lit(null)).as("i"),
        F.col("age").leq(31).and(F.col("salary").gt(60)).as("j"),
        F.col("age").lt(20).or(F.col("dept").isNull()).as("k"),
        F.col("salary").isNotNull().not().as("l")
      )
  },
  {
    name: "string functions",
    build: (s) =>
      people(s).select(
        F.upper(F.col("name")).as("u"),
        F.lower(F.col("name")).as("l"),
        F.length(F.col("name")).as("n"),
        F.concat(F.col("name"), F.lit("-"), F.col("dept")).as("c"),
        F.substring(F.col("name"), 1, 2).as("s"),
        F.col("name").like("%e%").as("like"),
        F.col("name").rlike("^[A-Z]").as("rlike"),
        F.col("name").startsWith("A").as("sw"),
        F.trim(F.lit("  x  ")).as("t"),
        F.regexp_replace(F.col("name"), "[aeiou]", "_").as("r")
      )
  },
  {
    name: "math, null handling and conditionals",
    build: (s) =>
      people(s).select(
        F.abs(F.col("age").minus(40)).as("abs"),
        F.round(F.col("salary"), 0).as("round"),
        F.sqrt(F.col("salary")).as("sqrt"),
        F.coalesce(F.col("dept"), F.lit("none")).as("dept"),
        F.when(F.col("age").geq(30), "old").when(F.col("age").lt(20), "young").otherwise("mid").as("band"),
        F.when(F.col("age").isNull(), 0).as("nullAge"),
        F.col("age").isin(17, 45).as("in"),
        F.col("age").between(18, 40).as("between")
      )
  },
  {
    name: "casts",
    build: (s) =>
      people(s).select(
        F.col("age").cast("string").as("s"),
        F.col("salary").cast("int").as("i"),
        F.col("ts").cast("long").as("l"),
        F.col("ts").cast("date").as("d"),
        F.lit("12").cast("int").as("p"),
        F.lit("x").cast("int").as("bad")
      )
  },
  {
    name: "date and time functions",
    build: (s) =>
      people(s).select(
        F.year(F.col("ts")).as("y"),
        F.minute(F.col("ts")).as("m"),
        F.second(F.col("ts")).as("sec"),
        F.date_format(F.col("ts"), "yyyy-MM-dd HH:mm").as("f"),
        F.to_date(F.col("ts")).as("d"),
        F.date_add(F.to_date(F.col("ts")), 3).as("d3"),
        F.lit(new Date("2024-02-03T04:05:06Z")).as("lit")
      )
  },
  {
    name: "collection functions",
    build: (s) =>
      people(s).select(
        F.size(F.col("tags")).as("n"),
        F.array_contains(F.col("tags"), "a").as("hasA"),
        F.split(F.col("name"), "b").as("parts"),
        F.array(F.col("id"), F.col("age")).as("arr"),
        F.struct(F.col("id"), F.col("name")).as("st")
      )
  },
  {
    name: "struct fields by getField and by dotted name",
    build: (s) =>
      people(s)
        .withColumn("st", F.struct(F.col("id"), F.col("name")))
        .select(F.col("st").getField("name").as("a"), F.col("st.id").as("b"))
  },
  {
    name: "withColumn, withColumnRenamed, drop",
    build: (s) =>
      people(s)
        .withColumn("age2", F.col("age").multiply(2))
        .withColumnRenamed("name", "who")
        .drop("tags", "ts", "nope")
  },
  {
    name: "groupBy aggregates",
    build: (s) =>
      people(s)
        .groupBy("dept")
        .agg(
          F.count("*"),
          F.count("age"),
          F.sum("salary"),
          F.avg("age"),
          F.min("name"),
          F.max("ts"),
          F.countDistinct("age").as("ages"),
          F.sumDistinct("age").as("sd"),
          F.sort_array(F.collect_set("age")).as("set"),
          F.approx_count_distinct("name").as("approx")
        )
  },
  {
    name: "groupBy count, first and last ignoring nulls",
    build: (s) =>
      people(s)
        .orderBy("id")
        .groupBy(F.col("age").geq(30).as("older"))
        .agg(F.first("dept", true).as("f"), F.last("salary", true).as("l"), F.count("*").as("n"))
  },
  { name: "groupBy().count()", build: (s) => people(s).groupBy("age").count() },
  { name: "global aggregate", build: (s) => people(s).agg(F.max("age"), F.sum("id").as("ids")) },
  {
    name: "tumbling windows over timestamps",
    build: (s) => people(s).groupBy(F.window("ts", "10 seconds"), "dept").agg(F.count("*").as("n"), F.sum("id").as("ids"))
  },
  {
    name: "sliding windows with a start time",
    build: (s) =>
      people(s)
        .groupBy(F.window("ts", "20 seconds", "10 seconds", "5 seconds"))
        .agg(F.collect_list("id").as("ids"))
        .select(F.col("window.start").as("start"), F.col("window.end").as("end"), F.size(F.col("ids")).as("n"))
  },
  {
    name: "session windows",
    build: (s) => people(s).groupBy(F.session_window("ts", "5 seconds")).agg(F.count("*").as("n"))
  },
  {
    name: "inner join on a column name",
    build: (s) => people(s).join(depts(s), "dept").select("name", "dept", "floor")
  },
  {
    name: "left, right, full, semi and anti joins on a condition",
    build: (s) => {
      const p = people(s)
      const d = depts(s)
      const on = p.col("dept").eq(d.col("dept"))
      const parts: ReadonlyArray<DataFrame<any>> = [
        p.join(d, on, "left").select(p.col("id"), d.col("floor"), F.lit("left").as("how")),
        p.join(d, on, "right").select(p.col("id"), d.col("floor"), F.lit("right").as("how")),
        p.join(d, on, "full_outer").select(p.col("id"), d.col("floor"), F.lit("full").as("how")),
        p.join(d, on, "left_semi").select(p.col("id"), F.lit(0).as("floor"), F.lit("semi").as("how")),
        p.join(d, on, "left_anti").select(p.col("id"), F.lit(0).as("floor"), F.lit("anti").as("how"))
      ]
      return parts.reduce((acc, x) => acc.union(x))
    }
  },
  {
    name: "self-join through df.col",
    build: (s) => {
      const p = people(s)
      const q = p.select(F.col("id").as("mgr"), F.col("age").as("mgrAge"))
      return p.join(q, p.col("id").eq(q.col("mgr").plus(1))).select(p.col("name"), q.col("mgrAge"))
    }
  },
  {
    name: "aliased self-join",
    build: (s) => {
      const p = people(s)
      return p
        .alias("a")
        .join(p.alias("b"), F.col("a.age").eq(F.col("b.age")).and(F.col("a.id").lt(F.col("b.id"))))
        .select(F.col("a.name").as("x"), F.col("b.name").as("y"))
    }
  },
  { name: "cross join", build: (s) => depts(s).crossJoin(depts(s).select(F.col("floor").as("f2"))) },
  {
    name: "union, unionByName with missing columns",
    build: (s) =>
      depts(s)
        .union(depts(s))
        .unionByName(s.createDataFrame([{ floor: 9 }], "floor INT"), true)
  },
  {
    name: "orderBy with null ordering and limit",
    build: (s) => people(s).orderBy(F.col("age").desc_nulls_first(), F.col("id").asc()).limit(4).select("id", "age"),
    ordered: true
  },
  {
    name: "orderBy descending names",
    build: (s) => people(s).orderBy(F.desc("name")).select("name"),
    ordered: true
  },
  {
    name: "explode, explode_outer and posexplode",
    build: (s) =>
      people(s)
        .select("id", F.explode(F.col("tags")).as("tag"))
        .union(people(s).select("id", F.explode_outer(F.col("tags")).as("tag")))
  },
  { name: "posexplode", build: (s) => people(s).select("id", F.posexplode(F.col("tags"))) },
  { name: "distinct", build: (s) => people(s).select("age").distinct() },
  { name: "dropDuplicates on columns", build: (s) => people(s).dropDuplicates(["age"]).select("age") },
  {
    name: "struct access through window.start",
    build: (s) =>
      people(s)
        .groupBy(F.window("ts", "1 minute"))
        .count()
        .select(F.col("window.start").as("s"), F.col("window").getField("end").as("e"), "count")
  },
  {
    name: "select star and qualified star",
    build: (s) => people(s).alias("p").select("p.*").where(F.col("p.id").leq(2)).select("*")
  },
  { name: "range", build: (s) => s.range(0, 10, 3).withColumn("sq", F.col("id").multiply(F.col("id"))) },
  {
    name: "literals of every type",
    build: (s) =>
      s.range(1).select(
        F.lit(true).as("b"),
        F.lit(7).as("i"),
        F.lit(2.5).as("d"),
        F.lit("s").as("str"),
        F.lit(null).as("n"),
        F.lit(new Date("2020-05-06T07:08:09.123Z")).as("ts"),
        F.lit(new Uint8Array([1, 2, 255])).as("bin"),
        F.lit(["x", null]).as("arr"),
        F.lit(3_000_000_000).as("big")
      )
  }
]

/** Rows for the function table: strings, negatives, nulls, a leap day, a half second, a map. */
const values = (spark: SessionShape) =>
  spark.createDataFrame(
    [
      {
        id: 1,
        name: "Ann",
        age: 31,
        salary: 100.5,
        ts: new Date("2024-01-01T10:00:03Z"),
        d: new Date("2024-02-29T00:00:00Z"),
        tags: ["b", "a", "b"],
        m: new Map([["x", 1]])
      },
      {
        id: 2,
        name: "bob lee",
        age: -17,
        salary: -80.25,
        ts: new Date("2023-12-31T23:59:59.5Z"),
        d: new Date("2023-01-01T00:00:00Z"),
        tags: [],
        m: new Map()
      },
      { id: 3, name: null, age: null, salary: null, ts: null, d: null, tags: null, m: null }
    ],
    "id INT, name STRING, age INT, salary DOUBLE, ts TIMESTAMP, d DATE, tags ARRAY<STRING>, m MAP<STRING,INT>"
  )

const n = F.col("name")
const a = F.col("age")
const sal = F.col("salary")
const ts = F.col("ts")
const d = F.col("d")
const tags = F.col("tags")
const m = F.col("m")

/**
 * One call of each scalar function `F` offers, over `values`. (`xxhash64` is left out: its
 * longs pass 2^53, where the local engine's JavaScript numbers lose digits; see the report.)
 */
const functions: ReadonlyArray<readonly [string, Column<any, any>]> = [
  ["upper", F.upper(n)], ["lower", F.lower(n)], ["initcap", F.initcap(n)], ["length", F.length(n)],
  ["char_length", F.char_length(n)], ["octet_length", F.octet_length(n)], ["bit_length", F.bit_length(n)],
  ["trim", F.trim(F.concat(F.lit("  "), n, F.lit(" ")))], ["ltrim", F.ltrim(F.concat(F.lit("  "), n))],
  ["rtrim", F.rtrim(F.concat(n, F.lit("  ")))], ["btrim", F.btrim(F.lit("xxaxx"), F.lit("x"))],
  ["lpad", F.lpad(n, 6, "*")], ["rpad", F.rpad(n, 6, "*")], ["reverse", F.reverse(n)], ["instr", F.instr(n, "b")],
  ["locate", F.locate("b", n)], ["repeat", F.repeat(n, 2)], ["translate", F.translate(n, "ab", "xy")],
  ["ascii", F.ascii(n)], ["char", F.char(F.lit(65))], ["base64", F.base64(n)], ["unbase64", F.unbase64(F.lit("QUJD"))],
  ["hex", F.hex(n)], ["unhex", F.unhex(F.lit("414243"))], ["concat_ws", F.concat_ws("-", n, F.lit("z"))],
  ["substring", F.substring(n, 2, 3)], ["substr", F.substr(n, F.lit(2), F.lit(2))], ["left", F.left(n, F.lit(2))],
  ["right", F.right(n, F.lit(2))], ["substring_index", F.substring_index(n, " ", 1)],
  ["levenshtein", F.levenshtein(n, F.lit("bob"))], ["startswith", F.startswith(n, F.lit("b"))],
  ["endswith", F.endswith(n, F.lit("e"))], ["contains", F.contains(n, F.lit("o"))], ["split", F.split(n, " ")],
  ["regexp_replace", F.regexp_replace(n, "[aeiou]", "_")], ["regexp_extract", F.regexp_extract(n, "([a-z]+)", 1)],
  ["regexp_extract_all", F.regexp_extract_all(n, F.lit("([a-z])"), F.lit(1))], ["rlike", F.rlike(n, F.lit("^b"))],
  ["like", F.like(n, F.lit("%o%"))], ["ilike", F.ilike(n, F.lit("a%"))],
  ["abs", F.abs(a)], ["negative", F.negative(a)], ["positive", F.positive(a)], ["sqrt", F.sqrt(sal)], ["cbrt", F.cbrt(sal)],
  ["exp", F.exp(F.lit(1))], ["expm1", F.expm1(F.lit(1))], ["ln", F.ln(sal)], ["log10", F.log10(sal)], ["log2", F.log2(sal)],
  ["log1p", F.log1p(sal)], ["sin", F.sin(sal)], ["atan", F.atan(sal)], ["cot", F.cot(F.lit(1))], ["sec", F.sec(F.lit(1))],
  ["csc", F.csc(F.lit(1))], ["asinh", F.asinh(F.lit(1))], ["acosh", F.acosh(F.lit(2))], ["atanh", F.atanh(F.lit(0.5))],
  ["degrees", F.degrees(sal)], ["radians", F.radians(F.lit(180))], ["signum", F.signum(a)], ["sign", F.sign(a)],
  ["rint", F.rint(sal)], ["floor", F.floor(sal)], ["ceil", F.ceil(sal)], ["factorial", F.factorial(F.lit(5))],
  ["bin", F.bin(a)], ["pow", F.pow(a, F.lit(2))], ["atan2", F.atan2(a, sal)], ["hypot", F.hypot(a, sal)],
  ["round", F.round(sal, 1)], ["bround", F.bround(sal, 1)], ["pmod", F.pmod(a, F.lit(5))], ["isnan", F.isnan(sal)],
  ["nanvl", F.nanvl(sal, F.lit(0))], ["greatest", F.greatest(a, F.col("id"))], ["least", F.least(a, F.col("id"))],
  ["e", F.e()], ["pi", F.pi()],
  ["year", F.year(ts)], ["quarter", F.quarter(ts)], ["month", F.month(d)], ["dayofweek", F.dayofweek(d)],
  ["dayofmonth", F.dayofmonth(d)], ["day", F.day(d)], ["dayofyear", F.dayofyear(d)], ["weekday", F.weekday(d)],
  ["weekofyear", F.weekofyear(d)], ["hour", F.hour(ts)], ["minute", F.minute(ts)], ["second", F.second(ts)],
  ["dayname", F.dayname(d)], ["monthname", F.monthname(d)], ["date_add", F.date_add(d, 3)], ["date_sub", F.date_sub(d, 3)],
  ["datediff", F.datediff(d, F.to_date(ts))], ["add_months", F.add_months(d, 1)], ["months_between", F.months_between(ts, d)],
  ["to_date", F.to_date(ts)], ["to_date with a format", F.to_date(F.lit("2024/03/04"), "yyyy/MM/dd")],
  ["to_timestamp", F.to_timestamp(F.lit("2024-03-04 05:06:07"))], ["unix_timestamp", F.unix_timestamp(ts)],
  ["from_unixtime", F.from_unixtime(F.lit(86400))], ["date_format", F.date_format(ts, "yyyy-MM-dd HH:mm:ss.SSS EEE")],
  ["date_trunc", F.date_trunc("hour", ts)], ["trunc", F.trunc(d, "month")], ["last_day", F.last_day(d)],
  ["next_day", F.next_day(d, "Mon")], ["make_date", F.make_date(F.lit(2024), F.lit(2), F.lit(3))],
  ["timestamp_seconds", F.timestamp_seconds(F.lit(1))], ["timestamp_millis", F.timestamp_millis(F.lit(1500))],
  ["unix_seconds", F.unix_seconds(ts)], ["unix_millis", F.unix_millis(ts)], ["unix_micros", F.unix_micros(ts)],
  ["unix_date", F.unix_date(d)], ["date_from_unix_date", F.date_from_unix_date(F.lit(10))],
  ["from_utc_timestamp", F.from_utc_timestamp(ts, "Europe/Paris")], ["to_utc_timestamp", F.to_utc_timestamp(ts, "America/New_York")],
  ["array", F.array(a, F.col("id"))], ["create_map", F.create_map(F.lit("k"), a)], ["struct", F.struct(a, n)],
  ["named_struct", F.named_struct(F.lit("p"), a)], ["size", F.size(tags)], ["cardinality", F.cardinality(m)],
  ["array_contains", F.array_contains(tags, "a")], ["array_position", F.array_position(tags, "a")],
  ["array_remove", F.array_remove(tags, "b")], ["element_at", F.element_at(tags, 1)], ["element_at of a map", F.element_at(m, F.lit("x"))],
  ["sort_array", F.sort_array(tags)], ["sort_array descending", F.sort_array(tags, false)], ["array_sort", F.array_sort(tags)],
  ["array_distinct", F.array_distinct(tags)], ["array_union", F.array_union(tags, F.array(F.lit("z")))],
  ["array_intersect", F.array_intersect(tags, F.array(F.lit("a")))], ["array_except", F.array_except(tags, F.array(F.lit("a")))],
  ["arrays_overlap", F.arrays_overlap(tags, F.array(F.lit("a")))], ["array_max", F.array_max(tags)], ["array_min", F.array_min(tags)],
  ["array_join", F.array_join(tags, ",")], ["slice", F.slice(tags, 1, 2)], ["flatten", F.flatten(F.array(tags, tags))],
  ["sequence", F.sequence(F.lit(1), F.col("id"))], ["array_repeat", F.array_repeat(n, 2)], ["map_keys", F.map_keys(m)],
  ["map_values", F.map_values(m)], ["map_entries", F.map_entries(m)], ["map_from_arrays", F.map_from_arrays(F.array(F.lit("a")), F.array(a))],
  ["map_contains_key", F.map_contains_key(m, F.lit("x"))], ["coalesce", F.coalesce(n, F.lit("?"))], ["nvl", F.nvl(a, F.lit(0))],
  ["nvl2", F.nvl2(a, F.lit(1), F.lit(2))], ["nullif", F.nullif(a, F.lit(31))], ["isnull", F.isnull(a)], ["hash", F.hash(n, a)],
  ["crc32", F.crc32(n)]
]

/** Runs `build` locally and translated on Spark; the column names and the rows must be equal. */
const compare = async (build: (spark: SessionShape) => DataFrame<any>, ordered: boolean): Promise<void> => {
  const { local, relation, columns } = await Effect.runPromise(
    Effect.gen(function* () {
      const spark = yield* Session
      const df = build(spark)
      const local = yield* df.collect()
      return { local, relation: translatePlan(df.plan, df.state), columns: df.columns }
    }).pipe(Effect.provide(sessionLayer))
  )
  if (Result.isFailure(relation)) throw new Error(relation.failure.message)
  const result = await remote.run(relation.success)
  const rows = rowsToExternal(result.schema, result.rows)
  expect(result.schema.fields.map((f) => f.name)).toEqual(columns)
  if (ordered) expect(rows.map(normalize)).toEqual(local.map(normalize))
  else expect(sorted(rows)).toEqual(sorted(local))
}

/** Plans over `values` where null handling, coercion and non-ANSI arithmetic matter. */
const edgeCases: ReadonlyArray<readonly [string, (df: DataFrame<any>) => DataFrame<any>]> = [
  ["division and modulo by zero are null", (df) => df.select(F.col("age").divide(0).as("a"), F.col("age").mod(0).as("b"), F.lit(7).divide(2).as("c"))],
  ["int overflow wraps", (df) => df.select(F.lit(2147483647).plus(F.col("id")).as("a"), F.lit(2147483647).multiply(2).as("b"))],
  ["string casts", (df) =>
    df.select(
      F.lit("2024-01-02 03:04:05").cast("timestamp").as("a"),
      F.lit("2024-01-02").cast("date").as("b"),
      F.lit("yes").cast("boolean").as("c"),
      F.lit("1e3").cast("double").as("d"),
      F.lit(" 12 ").cast("int").as("e"),
      F.lit("12.7").cast("int").as("f")
    )],
  ["casts to string", (df) =>
    df.select(
      F.col("salary").cast("string").as("a"),
      F.lit(1e21).cast("string").as("b"),
      F.lit(0.1).plus(0.2).cast("string").as("c"),
      F.col("ts").cast("string").as("d"),
      F.col("tags").cast("string").as("e"),
      F.col("m").cast("string").as("f"),
      F.lit(1.0e-5).cast("string").as("g")
    )],
  ["timestamps and dates cast to numbers", (df) => df.select(F.col("ts").cast("double").as("x"), F.col("d").cast("timestamp").as("y"), F.col("ts").cast("int").as("z"))],
  ["comparisons across types", (df) =>
    df.select(
      F.col("name").lt("b").as("a"),
      F.col("d").gt("2023-06-01").as("b"),
      F.col("ts").lt(F.lit("2024-01-01")).as("c"),
      F.lit("10").gt(F.lit(9)).as("d"),
      F.col("id").plus(F.lit("1")).as("e")
    )],
  ["three-valued logic", (df) => df.select(F.col("age").gt(0).and(F.lit(null)).as("x"), F.col("age").gt(0).or(F.lit(null)).as("y"), F.col("age").isin(31, null).as("z"))],
  ["aggregates of no rows", (df) =>
    df.where(F.lit(false)).agg(F.count("*").as("c"), F.sum("age").as("s"), F.avg("age").as("a"), F.max("name").as("m"), F.collect_list("id").as("l"))],
  ["grouping by a null key", (df) => df.groupBy("name").agg(F.sum("id").as("s"), F.countDistinct("age").as("c"))],
  ["join on keys with nulls, and null-safe", (df) => {
    const l = df.select("name", "id")
    const r = df.select(F.col("name").as("n2"), "age")
    return l.join(r, l.col("name").eqNullSafe(r.col("n2"))).select("id" as never, "age" as never).union(l.join(df.select("name", "age"), "name").select("id" as never, "age" as never) as never)
  }],
  ["union of an int and a string column", (df) => df.select("id").union(df.select("name") as never)],
  ["distinct arrays", (df) => df.select("tags").union(df.select("tags")).distinct()],
  ["explode a map, posexplode_outer an array", (df) => df.select("id", F.explode(F.col("m"))).union(df.select("id", F.posexplode_outer(F.col("tags"))) as never)],
  ["withWatermark on a batch, then dropDuplicates", (df) => df.withWatermark("ts", "1 minute").dropDuplicates(["age"]).select("age")],
  ["session window with a per-row gap", (df) =>
    df.where(F.col("ts").isNotNull()).groupBy(F.session_window("ts", F.when(F.col("id").eq(1), "5 seconds").otherwise("10 seconds"))).count()],
  ["sliding windows with a negative start", (df) => df.groupBy(F.window("ts", "1 hour", "30 minutes", "-10 minutes")).count()],
  ["window_time", (df) => df.groupBy(F.window("ts", "1 hour")).count().select(F.window_time("window").as("wt"), "count")],
  ["full outer join using a column", (df) => df.join(df.select("id", F.col("name").as("n2")).where(F.col("id").gt(1)), ["id"], "full").select("id", "n2")],
  ["withColumns replacing a column, withColumnsRenamed", (df) =>
    df.withColumns({ x: F.col("id").plus(1), id: F.col("id").multiply(10) }).withColumnsRenamed({ id: "ID" }).select("ID", "x")],
  ["toDF", (df) => df.select("id", "name").toDF("a", "b")],
  ["limit 0", (df) => df.limit(0)]
]

describe("edge cases, translated, give the local engine's rows on Spark", () => {
  for (const [name, build] of edgeCases) {
    it(name, () => compare((s) => build(values(s)), false))
  }
})

describe("every scalar function, translated, gives the local engine's values on Spark", () => {
  for (const [name, column] of functions) {
    it(name, () => compare((s) => values(s).select(F.col("id"), column.as("x")), false))
  }
})

describe("reads on Spark", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-translate-remote-"))
  const file = path.join(dir, "rows.json")
  fs.writeFileSync(file, '{"a":1,"b":"x"}\n{"a":2,"b":null}\n{"a":3}\n')
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  for (const schema of [undefined, "a INT, b STRING"]) {
    it(`a JSON file ${schema === undefined ? "without" : "with"} a user schema`, async () => {
      const { local, relation, columns } = await Effect.runPromise(
        Effect.gen(function* () {
          const spark = yield* Session
          const reader = schema === undefined ? spark.read : spark.read.schema(schema)
          const df = (yield* reader.json(file)).where(F.col("a").geq(2)).select("b", "a")
          return { local: yield* df.collect(), relation: translatePlan(df.plan, df.state), columns: df.columns }
        }).pipe(Effect.provide(sessionLayer))
      )
      if (Result.isFailure(relation)) throw new Error(relation.failure.message)
      const result = await remote.run(relation.success)
      expect(result.schema.fields.map((f) => f.name)).toEqual(columns)
      expect(sorted(rowsToExternal(result.schema, result.rows))).toEqual(sorted(local))
    })
  }

  it("a session table is read by name (a temp view on the server)", async () => {
    await remote.sql("CREATE OR REPLACE TEMP VIEW translate_counts AS SELECT 'a' AS k, 2L AS n UNION ALL SELECT 'b', 5L")
    const table = State.tableRelation("translate_counts", [E.attribute("k", T.StringType), E.attribute("n", T.LongType)])
    const relation = translatePlan(
      { _tag: "Filter", planId: 999_001, condition: F.col("n").gt(3).expr, child: table },
      State.make()
    )
    if (Result.isFailure(relation)) throw new Error(relation.failure.message)
    const result = await remote.run(relation.success)
    expect(rowsToExternal(result.schema, result.rows)).toEqual([{ k: "b", n: 5 }])
  })

  it("streaming sources and stateful streaming plans are accepted by Spark's analyzer", async () => {
    const plans = await Effect.runPromise(
      Effect.gen(function* () {
        const spark = yield* Session
        const rate = spark.readStream.format("rate").option("rowsPerSecond", 5).load()
        return [
          rate.withWatermark("timestamp", "10 seconds").groupBy(F.window("timestamp", "5 seconds")).count(),
          rate.withWatermark("timestamp", "1 minute").dropDuplicatesWithinWatermark(["value"]),
          spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 10).load().select(F.col("value").multiply(2).as("v")),
          spark.readStream.schema("a INT, b STRING").json(dir).where(F.col("a").gt(1)),
          spark.readStream.text(dir)
        ].map((df) => ({ columns: df.columns, relation: translatePlan(df.plan, df.state) }))
      }).pipe(Effect.provide(sessionLayer))
    )
    for (const { columns, relation } of plans) {
      if (Result.isFailure(relation)) throw new Error(relation.failure.message)
      expect(await remote.schemaOf(relation.success)).toEqual(columns)
    }
  })
})

describe("translated plans on a real Spark Connect server", () => {
  for (const c of cases) {
    it(c.name, () => compare(c.build, c.ordered === true))
  }
})


