/**
 * Spark as the oracle, batch queries: the same DataFrame code on the local engine and on Spark
 * 4.2 through Spark Connect, over the same generated JSON, CSV and parquet files, must give the
 * same rows (see differential.ts for how rows are compared).
 */
import { describe } from "vitest"
import * as F from "../../core/F.ts"
import type { DataFrame } from "../../structured/api/DataFrame.ts"
import type { OpenSession } from "../../structured/api/Session.ts"
import { type DataSet, EVENTS_SCHEMA, loose, USERS_SCHEMA, useEngines } from "./differential.ts"
import { remoteAddress } from "./remote.ts"

interface Data {
  /** The events from JSON lines. */
  readonly events: DataFrame<any>
  readonly eventsCsv: DataFrame<any>
  readonly eventsParquet: DataFrame<any>
  readonly users: DataFrame<any>
  readonly dirtyJson: DataFrame<any>
  readonly dirtyCsv: DataFrame<any>
}

const load = async (spark: OpenSession, data: DataSet): Promise<Data> => ({
  events: await spark.run(spark.read.schema(EVENTS_SCHEMA).json(data.eventsJson)),
  eventsCsv: await spark.run(spark.read.schema(EVENTS_SCHEMA).option("header", true).csv(data.eventsCsv)),
  eventsParquet: await spark.run(spark.read.schema(EVENTS_SCHEMA).parquet(data.eventsParquet)),
  users: await spark.run(spark.read.schema(USERS_SCHEMA).json(data.usersJson)),
  dirtyJson: await spark.run(spark.read.schema(EVENTS_SCHEMA).json(data.dirtyJson)),
  dirtyCsv: await spark.run(spark.read.schema(EVENTS_SCHEMA).option("header", true).csv(data.dirtyCsv))
})

const { cases } = useEngines(load, { remote: remoteAddress })

describe("differential: reading files", () => {
  cases([
    { name: "JSON lines with an explicit schema", build: (_, d) => d.events },
    { name: "CSV with a header and quoted cells", build: (_, d) => d.eventsCsv },
    { name: "parquet", build: (_, d) => d.eventsParquet },
    {
      name: "malformed JSON records and values of the wrong type (PERMISSIVE)",
      build: (_, d) => d.dirtyJson
    },
    {
      name: "malformed CSV values, quotes, short and long lines (PERMISSIVE)",
      build: (_, d) => d.dirtyCsv
    }
  ])
})

describe("differential: filters and null semantics", () => {
  cases([
    {
      name: "comparisons drop null rows; NOT keeps three-valued logic",
      build: (_, d) => {
        const e = d.events
        const tag = (df: DataFrame<any>, t: string) => df.select(F.lit(t).as("filter"), F.col("id"))
        return tag(e.where(F.col("amount").gt(0)), "gt")
          .union(loose(tag(e.where(F.col("amount").gt(0).not()), "not gt")))
          .union(loose(tag(e.where(F.col("amount").gt(0).or(F.col("price").lt(100))), "or")))
          .union(loose(tag(e.where(F.col("amount").gt(0).and(F.col("user").neq("u1")).not()), "not and")))
          .union(loose(tag(e.where(F.col("user").eq(F.lit(null))), "eq null")))
          .union(loose(tag(e.where(F.col("user").eqNullSafe(F.lit(null))), "eqNullSafe null")))
          .union(loose(tag(e.where(F.col("user").isNull().or(F.col("category").isNull())), "isNull")))
          .union(loose(tag(e.where(F.col("amount").isin(1, 2, 3, null, -5, 100)), "isin")))
          .union(loose(tag(e.where(F.col("amount").isin(1, 2, null).not()), "not isin with null")))
          .union(loose(tag(e.where(F.col("price").between(10, 50.5)), "between")))
          .union(loose(tag(e.where(F.col("note").like("%o%")), "like")))
          .union(loose(tag(e.where(F.col("note").rlike("^[a-z]+ ")), "rlike")))
          .union(
            loose(tag(e.where(F.col("category").startsWith("b").or(F.col("category").endsWith("s"))), "startsWith"))
          )
          .union(loose(tag(e.where(F.col("ts").geq(F.lit(new Date("2024-03-10T10:02:00Z")))), "ts >=")))
          .union(loose(tag(e.where(F.col("amount").divide(0).isNull()), "division by zero is null")))
      }
    },

    {
      name: "null-aware boolean columns",
      build: (_, d) =>
        d.events.select(
          "id",
          F.col("amount").gt(10).as("gt"),
          F.col("amount").gt(10).and(F.col("user").isNull()).as("and"),
          F.col("amount").gt(10).or(F.col("user").isNull()).as("or"),
          F.col("amount").eqNullSafe(F.col("price")).as("nullSafe"),
          F.col("amount").isin(F.lit(1), F.col("id")).as("isinCol"),
          F.col("category").isin("books", null).as("isinNull"),
          F.isnull(F.col("price")).as("isnull"),
          F.isnan(F.col("price")).as("isnan")
        )
    }
  ])
})

describe("differential: projections", () => {
  cases([
    {
      name: "arithmetic and casts",
      build: (_, d) =>
        d.events.select(
          "id",
          F.col("amount").plus(F.col("id")).as("plus"),
          F.col("amount").minus(7).as("minus"),
          F.col("amount").multiply(F.col("amount")).as("square"),
          F.col("amount").divide(7).as("div"),
          F.col("amount")
            .divide(F.col("amount").minus(F.col("amount")))
            .as("divZero"),
          F.col("amount").mod(7).as("mod"),
          F.pmod(F.col("amount"), F.lit(7)).as("pmod"),
          F.col("price").multiply(100).cast("int").as("cents"),
          F.col("price").negate().cast("long").as("negLong"),
          F.col("amount").cast("string").as("amountStr"),
          F.col("amount").cast("double").as("amountDouble"),
          F.col("amount").cast("boolean").as("amountBool"),
          F.col("price").cast("string").as("priceStr"),
          F.col("ts").cast("long").as("tsLong"),
          F.col("ts").cast("double").as("tsDouble"),
          F.col("ts").cast("date").as("tsDate"),
          F.col("ts").cast("string").as("tsStr"),
          F.col("note").cast("int").as("noteInt"),
          F.col("user").cast("boolean").as("userBool"),
          F.lit(" 42 ").cast("int").as("spaced"),
          F.lit("1.9").cast("int").as("fraction"),
          F.lit("2024-03-10 12:00:00").cast("timestamp").as("strTs"),
          F.col("id").cast("timestamp").as("idTs")
        )
    },

    {
      name: "string functions",
      build: (_, d) =>
        d.events.select(
          "id",
          F.upper(F.col("note")).as("upper"),
          F.lower(F.col("note")).as("lower"),
          F.initcap(F.col("note")).as("initcap"),
          F.length(F.col("note")).as("length"),
          F.trim(F.col("note")).as("trim"),
          F.ltrim(F.col("note")).as("ltrim"),
          F.rtrim(F.col("note")).as("rtrim"),
          F.lpad(F.col("user"), 5, "*").as("lpad"),
          F.rpad(F.col("category"), 3, "-").as("rpad"),
          F.reverse(F.col("note")).as("reverse"),
          F.instr(F.col("note"), "o").as("instr"),
          F.locate("o", F.col("note"), 3).as("locate"),
          F.repeat(F.col("user"), 2).as("repeat"),
          F.translate(F.col("note"), "aeo", "AE").as("translate"),
          F.concat(F.col("user"), F.lit(":"), F.col("category")).as("concat"),
          F.concat_ws("|", F.col("user"), F.col("category"), F.col("note")).as("concat_ws"),
          F.substring(F.col("note"), 2, 4).as("substring"),
          F.substring(F.col("note"), -3, 2).as("substringNeg"),
          F.left(F.col("note"), 3).as("left"),
          F.right(F.col("note"), 3).as("right"),
          F.substring_index(F.col("note"), " ", 2).as("substring_index"),
          F.substring_index(F.col("note"), " ", -1).as("substring_index_neg"),
          F.split(F.col("note"), "[ ,;]").as("split"),
          F.regexp_replace(F.col("note"), "[aeiou]+", "_").as("regexp_replace"),
          F.regexp_extract(F.col("note"), "([a-z]+) ([a-z]+)", 2).as("regexp_extract"),
          F.levenshtein(F.col("note"), F.col("category")).as("levenshtein"),
          F.ascii(F.col("note")).as("ascii"),
          F.startswith(F.col("note"), F.lit("a")).as("startswith"),
          F.col("note").contains("o").as("contains"),
          F.base64(F.col("user").cast("binary")).as("base64"),
          F.hex(F.col("amount")).as("hex")
        )
    },

    {
      name: "math functions",
      build: (_, d) =>
        d.events.select(
          "id",
          F.abs(F.col("amount")).as("abs"),
          F.sqrt(F.col("amount")).as("sqrt"),
          F.cbrt(F.col("amount")).as("cbrt"),
          F.ln(F.col("amount")).as("ln"),
          F.log10(F.col("price")).as("log10"),
          F.log2(F.col("price")).as("log2"),
          F.floor(F.col("price")).as("floor"),
          F.ceil(F.col("price")).as("ceil"),
          F.round(F.col("price"), 1).as("round1"),
          F.round(F.col("price")).as("round0"),
          F.round(F.col("amount"), -1).as("roundNeg"),
          F.bround(F.col("price"), 1).as("bround"),
          F.pow(F.col("amount"), 2).as("pow"),
          F.signum(F.col("amount")).as("signum"),
          F.greatest(F.col("amount"), F.col("id")).as("greatest"),
          F.least(F.col("amount"), F.col("id"), F.lit(10)).as("least"),
          F.hypot(F.col("amount"), F.col("id")).as("hypot"),
          F.atan2(F.col("amount"), F.col("id")).as("atan2"),
          F.degrees(F.col("price")).as("degrees"),
          F.radians(F.col("amount")).as("radians"),
          F.rint(F.col("price")).as("rint"),
          F.nanvl(F.sqrt(F.col("amount")), F.lit(-1.0)).as("nanvl")
        )
    },

    {
      name: "transcendental functions (HotSpot intrinsics: compared to 14 significant digits)",
      build: (_, d) =>
        d.events.select(
          "id",
          F.exp(F.col("amount").divide(100)).as("exp"),
          F.sin(F.col("amount")).as("sin"),
          F.cos(F.col("price")).as("cos"),
          F.tan(F.col("amount")).as("tan"),
          F.atan(F.col("price")).as("atan"),
          F.pow(F.col("price"), 0.5).as("pow")
        ),
      opts: { significantDigits: 14 }
    },
    {
      name: "date and time functions",
      build: (_, d) =>
        d.events.select(
          "id",
          F.year(F.col("ts")).as("year"),
          F.quarter(F.col("ts")).as("quarter"),
          F.month(F.col("ts")).as("month"),
          F.dayofmonth(F.col("ts")).as("dayofmonth"),
          F.dayofweek(F.col("ts")).as("dayofweek"),
          F.dayofyear(F.col("ts")).as("dayofyear"),
          F.weekofyear(F.col("ts")).as("weekofyear"),
          F.hour(F.col("ts")).as("hour"),
          F.minute(F.col("ts")).as("minute"),
          F.second(F.col("ts")).as("second"),
          F.date_format(F.col("ts"), "yyyy-MM-dd HH:mm:ss.SSS").as("fmt"),
          F.date_format(F.col("ts"), "EEE, d MMM yy h:mm a").as("fmt2"),
          F.to_date(F.col("ts")).as("to_date"),
          F.date_add(F.col("ts"), F.col("amount")).as("date_add"),
          F.date_sub(F.to_date(F.col("ts")), 40).as("date_sub"),
          F.datediff(F.date_add(F.col("ts"), F.col("amount")), F.col("ts")).as("datediff"),
          F.add_months(F.col("ts"), F.col("id")).as("add_months"),
          F.months_between(F.add_months(F.col("ts"), 1), F.col("ts")).as("months_between"),
          F.date_trunc("minute", F.col("ts")).as("trunc_minute"),
          F.date_trunc("hour", F.col("ts")).as("trunc_hour"),
          F.trunc(F.col("ts"), "month").as("trunc_month"),
          F.last_day(F.col("ts")).as("last_day"),
          F.next_day(F.col("ts"), "Mon").as("next_day"),
          F.unix_timestamp(F.col("ts")).as("unix_timestamp"),
          F.unix_millis(F.col("ts")).as("unix_millis"),
          F.from_unixtime(F.unix_timestamp(F.col("ts"))).as("from_unixtime"),
          F.timestamp_seconds(F.col("amount")).as("timestamp_seconds"),
          F.make_date(F.lit(2024), F.col("id").mod(12).plus(1), F.lit(31)).as("make_date"),
          F.from_utc_timestamp(F.col("ts"), "Europe/Amsterdam").as("from_utc"),
          F.to_timestamp(F.lit("2024-03-10 11:22:33")).as("to_timestamp")
        )
    },

    {
      name: "conditional functions",
      build: (_, d) =>
        d.events.select(
          "id",
          F.when(F.col("amount").gt(100), "big").when(F.col("amount").lt(0), "negative").otherwise("small").as("band"),
          F.when(F.col("amount").isNull(), F.col("price")).as("noOtherwise"),
          F.coalesce(F.col("user"), F.col("category"), F.lit("?")).as("coalesce"),
          F.nvl(F.col("amount"), F.lit(0)).as("nvl"),
          F.nvl2(F.col("amount"), F.lit("has"), F.lit("none")).as("nvl2"),
          F.nullif(F.col("user"), F.lit("u1")).as("nullif"),
          F.ifnull(F.col("price"), F.col("amount")).as("ifnull")
        )
    },

    {
      name: "withColumn, withColumnRenamed, drop and struct fields",
      build: (_, d) =>
        d.events
          .withColumn("s", F.struct(F.col("user"), F.col("amount")))
          .withColumn("arr", F.array(F.col("amount"), F.col("id")))
          .withColumnRenamed("note", "text")
          .drop("price", "category", "ts")
          .select(
            "id",
            "text",
            F.col("s.user").as("su"),
            F.col("s").getField("amount").as("sa"),
            F.element_at(F.col("arr"), 2).as("second"),
            "s"
          )
    }
  ])
})

describe("differential: aggregates", () => {
  cases([
    {
      name: "groupBy with every aggregate",
      build: (_, d) =>
        d.events
          .groupBy("user")
          .agg(
            F.count("*").as("rows"),
            F.count("amount").as("amounts"),
            F.countDistinct("category").as("categories"),
            F.countDistinct("category", "amount").as("pairs"),
            F.sum("amount").as("sum"),
            F.sumDistinct("amount").as("sumDistinct"),
            F.avg("amount").as("avg"),
            F.min("amount").as("min"),
            F.max("amount").as("max"),
            F.min("ts").as("firstSeen"),
            F.max("ts").as("lastSeen"),
            F.min("category").as("minCategory"),
            F.max("note").as("maxNote"),
            F.array_sort(F.collect_list("amount")).as("amountList"),
            F.array_sort(F.collect_set("category")).as("categorySet"),
            F.size(F.collect_list("category")).as("listSize"),
            F.approx_count_distinct("category").as("approxCategories"),
            F.approx_count_distinct("amount").as("approxAmounts")
          )
    },

    {
      name: "sums and averages of doubles (rounded: the summation order differs)",
      build: (_, d) =>
        d.events
          .groupBy("category")
          .agg(
            F.sum("price").as("sum"),
            F.avg("price").as("avg"),
            F.min("price").as("min"),
            F.max("price").as("max"),
            F.count("price").as("n")
          ),
      opts: { roundDoubles: true }
    },

    {
      name: "first and last where they are deterministic",
      build: (_, d) =>
        d.events.groupBy(F.col("id").mod(7).as("k")).agg(
          // The value is a function of the key: every row of the group has it.
          F.first(F.col("id").mod(7).multiply(10)).as("first"),
          F.last(F.col("id").mod(7).multiply(10)).as("last"),
          // Exactly one row of each group has a non-null value (ids 1..7 fall into different groups).
          F.first(F.when(F.col("id").leq(7), F.col("id")), true).as("firstNonNull"),
          F.last(F.when(F.col("id").leq(7), F.col("id")), true).as("lastNonNull"),
          F.count("*").as("n")
        )
    },

    {
      name: "global aggregates, also over no rows",
      build: (_, d) =>
        d.events
          .agg(
            F.count("*").as("n"),
            F.sum("amount").as("sum"),
            F.avg("amount").as("avg"),
            F.min("ts").as("min"),
            F.max("user").as("max"),
            F.countDistinct("user").as("users")
          )
          .union(
            loose(
              d.events
                .where(F.col("id").lt(0))
                .agg(
                  F.count("*").as("n"),
                  F.sum("amount").as("sum"),
                  F.avg("amount").as("avg"),
                  F.min("ts").as("min"),
                  F.max("user").as("max"),
                  F.countDistinct("user").as("users")
                )
            )
          )
    },

    {
      name: "approx_count_distinct of every type, with two precisions",
      build: (_, d) =>
        d.events.agg(
          F.approx_count_distinct("id").as("ids"),
          F.approx_count_distinct("ts").as("times"),
          F.approx_count_distinct("price").as("prices"),
          F.approx_count_distinct("note").as("notes"),
          F.approx_count_distinct(F.col("id").cast("long").multiply(1_000_003)).as("longs"),
          F.approx_count_distinct("id", 0.01).as("idsPrecise"),
          F.approx_count_distinct(F.to_date(F.col("ts"))).as("dates"),
          F.approx_count_distinct(F.col("amount").gt(0)).as("booleans")
        )
    },
    {
      name: "groupBy on several keys with a filter on the aggregate, and groupBy().count()",
      build: (_, d) =>
        d.events
          .groupBy("user", "category")
          .agg(F.count("*").as("n"), F.sum("amount").as("total"))
          .where(F.col("n").geq(3))
          .union(
            loose(
              d.events
                .groupBy(F.col("amount").gt(0).as("positive"), F.lit("count").as("c"))
                .count()
                .select(
                  F.col("positive").cast("string").as("user"),
                  F.col("c").as("category"),
                  F.col("count").as("n"),
                  F.lit(null).cast("long").as("total")
                )
            )
          )
    },

    {
      name: "tumbling and sliding windows",
      build: (_, d) =>
        d.events
          .groupBy(F.window("ts", "30 seconds"), "user")
          .agg(F.count("*").as("n"), F.sum("amount").as("total"))
          .select(F.lit("tumbling").as("kind"), "window", "user", "n", "total")
          .union(
            loose(
              d.events
                .groupBy(F.window("ts", "1 minute", "20 seconds", "5 seconds"))
                .agg(F.count("*").as("n"), F.max("amount").as("total"))
                .select(
                  F.lit("sliding").as("kind"),
                  "window",
                  F.lit(null).cast("string").as("user"),
                  "n",
                  F.col("total").cast("long").as("total")
                )
            )
          )
    },

    {
      name: "session windows, with a fixed and a per-row gap",
      build: (_, d) =>
        d.events
          .groupBy(F.session_window("ts", "10 seconds"), "user")
          .agg(F.count("*").as("n"), F.array_sort(F.collect_list("id")).as("ids"))
          .select(F.lit("fixed").as("kind"), "session_window", "user", "n", "ids")
          .union(
            loose(
              d.events
                .groupBy(
                  F.session_window("ts", F.when(F.col("user").eq("u1"), "5 seconds").otherwise("20 seconds")),
                  "user"
                )
                .agg(F.count("*").as("n"), F.array_sort(F.collect_list("id")).as("ids"))
                .select(F.lit("dynamic").as("kind"), "session_window", "user", "n", "ids")
            )
          )
    }
  ])
})

describe("differential: joins", () => {
  cases([
    {
      name: "USING joins of every kind",
      build: (_, d) => {
        const e = d.events.select("id", "user", "amount")
        const tag = (df: DataFrame<any>, how: string) =>
          df.select(F.lit(how).as("how"), "user", "id", "country", "tier")
        return tag(e.join(d.users, "user", "inner"), "inner")
          .union(loose(tag(e.join(d.users, ["user"], "left"), "left")))
          .union(loose(tag(e.join(d.users, "user", "right"), "right")))
          .union(loose(tag(e.join(d.users, "user", "full_outer"), "full")))
          .union(
            loose(
              e
                .join(d.users, "user", "left_semi")
                .select(
                  F.lit("semi").as("how"),
                  "user",
                  "id",
                  F.lit(null).cast("string").as("country"),
                  F.lit(null).cast("int").as("tier")
                )
            )
          )
          .union(
            loose(
              e
                .join(d.users, "user", "left_anti")
                .select(
                  F.lit("anti").as("how"),
                  "user",
                  "id",
                  F.lit(null).cast("string").as("country"),
                  F.lit(null).cast("int").as("tier")
                )
            )
          )
      }
    },

    {
      name: "joins on a condition of every kind, and a cross join",
      build: (_, d) => {
        const e = d.events.where(F.col("id").leq(60))
        const u = d.users
        const on = e.col("user").eq(u.col("user")).and(u.col("tier").leq(2))
        const pick = (df: DataFrame<any>, how: string) =>
          df.select(F.lit(how).as("how"), e.col("id"), e.col("user"), u.col("user").as("uUser"), u.col("country"))
        return pick(e.join(u, on, "inner"), "inner")
          .union(loose(pick(e.join(u, on, "left_outer"), "left")))
          .union(loose(pick(e.join(u, on, "right_outer"), "right")))
          .union(loose(pick(e.join(u, on, "outer"), "full")))
          .union(
            loose(
              e
                .join(u, on, "semi")
                .select(
                  F.lit("semi").as("how"),
                  "id",
                  "user",
                  F.lit(null).cast("string").as("uUser"),
                  F.lit(null).cast("string").as("country")
                )
            )
          )
          .union(
            loose(
              e
                .join(u, on, "anti")
                .select(
                  F.lit("anti").as("how"),
                  "id",
                  "user",
                  F.lit(null).cast("string").as("uUser"),
                  F.lit(null).cast("string").as("country")
                )
            )
          )
          .union(loose(pick(e.where(F.col("id").leq(3)).crossJoin(u), "cross")))
      }
    },

    {
      name: "a self-join through df.col",
      build: (_, d) => {
        const a = d.events
        const b = d.events.select(
          F.col("id").as("nextId"),
          F.col("user").as("nextUser"),
          F.col("amount").as("nextAmount")
        )
        return a
          .join(
            b,
            a
              .col("id")
              .plus(1)
              .eq(b.col("nextId"))
              .and(a.col("user").eq(b.col("nextUser"))),
            "inner"
          )
          .select(a.col("id"), a.col("user"), a.col("amount"), b.col("nextAmount"))
      }
    },

    {
      name: "an aliased self-join with a range condition",
      build: (_, d) =>
        d.events
          .alias("l")
          .join(
            d.events.alias("r"),
            F.col("l.user")
              .eq(F.col("r.user"))
              .and(F.col("r.ts").gt(F.col("l.ts")))
              .and(F.col("r.ts").cast("long").leq(F.col("l.ts").cast("long").plus(5)))
          )
          .select(F.col("l.id").as("a"), F.col("r.id").as("b"))
    }
  ])
})

describe("differential: set operations, ordering, dedup, explode", () => {
  cases([
    {
      name: "union keeps duplicates; unionByName matches names",
      build: (_, d) =>
        d.events
          .select("user", "amount")
          .union(loose(d.eventsCsv.select("user", "amount")))
          .unionByName(d.users.select(F.col("tier").as("amount"), "user"))
          .unionByName(d.users.select("country"), true)
    },

    {
      name: "orderBy with nulls first and last, ties broken by id",
      build: (_, d) =>
        d.events
          .orderBy(F.col("amount").asc_nulls_last(), F.col("user").desc_nulls_first(), F.col("id"))
          .select("amount", "user", "id"),
      opts: { ordered: true }
    },

    {
      name: "orderBy descending (nulls last by default) then limit",
      build: (_, d) => d.events.orderBy(F.desc("price"), F.asc("id")).limit(12).select("id", "price", "user"),
      opts: { ordered: true }
    },

    {
      name: "orderBy ascending (nulls first by default) on strings and timestamps, then limit",
      build: (_, d) => d.events.orderBy("note", "ts", "id").limit(25).select("note", "ts", "id"),
      opts: { ordered: true }
    },

    {
      name: "distinct and dropDuplicates (the re-sent events go)",
      build: (_, d) =>
        d.events
          .distinct()
          .select(F.lit("distinct").as("kind"), "id", "user")
          .union(loose(d.events.dropDuplicates().select(F.lit("dropDuplicates()").as("kind"), "id", "user")))
          // Which row of a key survives is not defined: only the key columns are compared.
          .union(
            loose(
              d.events
                .dropDuplicates(["user", "category"])
                .select(
                  F.lit("on keys").as("kind"),
                  F.lit(0).as("id"),
                  F.concat_ws("/", F.col("user"), F.col("category")).as("user")
                )
            )
          )
    },

    {
      name: "explode, explode_outer and posexplode",
      build: (_, d) =>
        d.events
          .select("id", F.explode(F.split(F.col("note"), " ")).as("word"))
          .select(F.lit("explode").as("kind"), "id", F.lit(null).cast("int").as("pos"), "word")
          .union(
            loose(
              d.events
                .select("id", F.explode_outer(F.split(F.col("note"), " ")).as("word"))
                .select(F.lit("outer").as("kind"), "id", F.lit(null).cast("int").as("pos"), "word")
            )
          )
          .union(
            loose(
              d.events
                .select("id", F.posexplode(F.split(F.col("category"), ",")))
                .select(F.lit("pos").as("kind"), "id", F.col("pos"), F.col("col").as("word"))
            )
          )
    },

    {
      name: "an aggregate over exploded words joined back",
      build: (_, d) =>
        d.events
          .select(F.explode(F.split(F.lower(F.trim(F.col("note"))), "\\s+")).as("word"))
          .groupBy("word")
          .count()
          .join(
            d.events.groupBy(F.lower(F.trim(F.col("note"))).as("word")).agg(F.count("*").as("whole")),
            "word",
            "left"
          )
    }
  ])
})

describe("differential: edge cases", () => {
  cases([
    {
      name: "number formatting, overflow and rounding edges",
      build: (_, d) =>
        d.events.select(
          "id",
          F.col("price").multiply(100000).cast("string").as("bigStr"),
          F.col("price").divide(1000000).cast("string").as("smallStr"),
          F.col("amount").cast("double").divide(3).cast("string").as("thirdStr"),
          F.col("amount").multiply(100000000).as("intOverflow"),
          F.col("amount").cast("long").multiply(100000000).as("long"),
          F.col("price").multiply(1e8).cast("int").as("doubleToIntSaturates"),
          F.sqrt(F.col("amount")).cast("int").as("nanToInt"),
          F.round(F.col("price").divide(7), 3).as("round3"),
          F.bround(F.col("amount").divide(2), 0).as("bround0"),
          F.round(F.col("amount").divide(2)).as("roundHalf"),
          F.col("amount").mod(-7).as("modNeg"),
          F.col("price").mod(3.5).as("modDouble"),
          F.pmod(F.col("price"), F.lit(-3)).as("pmodDouble"),
          // Integers have no -0 (JavaScript arithmetic makes one from negative operands)
          F.col("amount").multiply(0).as("intTimesZero"),
          F.col("amount").multiply(0).negate().as("negZero"),
          F.col("amount").mod(1).as("intModOne"),
          F.col("amount").cast("long").multiply(0).as("longTimesZero"),
          F.col("amount").divide(-1000).cast("int").as("truncatedToZero"),
          F.col("amount").multiply(0.0).as("doubleNegZero"),
          F.round(F.col("amount").divide(-1000)).as("roundNegZero")
        )
    },
    {
      name: "more string edges",
      build: (_, d) =>
        d.events.select(
          "id",
          F.lpad(F.col("note"), 8, "<>").as("lpad"),
          F.rpad(F.col("user"), 1, "x").as("rpadShort"),
          F.substring(F.col("note"), 0, 3).as("substr0"),
          F.locate("o", F.col("note"), 0).as("locate0"),
          F.col("note").like("%\\_%").as("likeEscape"),
          F.col("note").like("_b%").as("likeUnderscore"),
          F.ilike(F.col("note"), "%HELLO%").as("ilike"),
          F.regexp_extract_all(F.col("note"), "([a-z])([a-z])", 1).as("extractAll"),
          F.split(F.col("note"), " ", 2).as("splitLimit"),
          F.octet_length(F.col("note")).as("octets"),
          F.bit_length(F.col("note")).as("bits"),
          F.initcap(F.lower(F.col("note"))).as("initcapLower"),
          F.unbase64(F.base64(F.col("note").cast("binary")))
            .cast("string")
            .as("roundTrip"),
          F.unhex(F.hex(F.col("note"))).as("unhex"),
          F.chr(F.col("amount")).as("chr"),
          F.bin(F.col("amount")).as("bin"),
          F.repeat(F.col("user"), -1).as("repeatNeg"),
          F.concat(F.split(F.col("note"), " "), F.array(F.col("user"))).as("concatArrays"),
          F.reverse(F.split(F.col("note"), " ")).as("reverseArray")
        )
    },
    {
      name: "a full outer self-join USING two columns (null keys never match)",
      build: (_, d) => {
        const a = d.events.groupBy("user", "category").agg(F.count("*").as("n"))
        const b = d.events.where(F.col("amount").gt(50)).groupBy("user", "category").agg(F.sum("amount").as("big"))
        return a.join(b, ["user", "category"], "full").toDF("u", "c", "n", "big")
      }
    },
    {
      name: "Java regular expressions and replacement strings",
      build: (_, d) =>
        d.events.select(
          "id",
          F.regexp_replace(F.col("note"), "(\\w+) (\\w+)", "$2 $1").as("swap"),
          F.regexp_replace(F.col("note"), "(o)", "\\$1").as("escapedDollar"),
          F.regexp_replace(F.col("note"), "\\s+", "").as("noSpace"),
          F.regexp_extract(F.col("note"), "(\\p{Lu})(\\p{Ll}*)", 0).as("group0"),
          F.regexp_extract(F.col("note"), "(x)?(b)", 1).as("unmatchedGroup"),
          F.col("note").rlike("\\p{IsHan}").as("han"),
          F.col("note").rlike("^\\p{Upper}").as("upperStart"),
          F.col("note").like("%.%").as("likeDot"),
          F.col("note").like("%[a]%").as("likeBracket"),
          F.split(F.col("note"), "\\s*[,;]\\s*").as("splitRegex")
        )
    },
    {
      name: "datetime pattern letters and time zones",
      build: (_, d) =>
        d.events.select(
          "id",
          F.date_format(F.col("ts"), "EEEE, MMMM d, yyyy hh:mm:ss a").as("long"),
          F.date_format(F.col("ts"), "kk:mm K h H").as("hours"),
          F.date_format(F.col("ts"), "SSSSSS S").as("fractions"),
          F.date_format(F.col("ts"), "XXX Z z VV").as("zones"),
          F.date_format(F.col("ts"), "yy-M-d L").as("short"),
          F.from_utc_timestamp(F.col("ts"), "America/New_York").as("newYork"),
          F.to_utc_timestamp(F.col("ts"), "Asia/Kolkata").as("kolkata"),
          F.from_unixtime(F.unix_timestamp(F.col("ts")), "yyyyMMddHHmmss").as("compact")
        )
    },
    {
      name: "orderBy descending on strings beyond U+FFFF, with greatest and least",
      build: (_, d) =>
        d.events
          .select(
            "id",
            "note",
            F.greatest(F.col("note"), F.col("category")).as("g"),
            F.least(F.col("note"), F.col("user")).as("l")
          )
          .orderBy(F.col("note").desc(), F.col("id"))
          .limit(20),
      opts: { ordered: true }
    },
    {
      name: "result types through Arrow: null, binary, date, nested maps, arrays and structs",
      build: (_, d) =>
        d.events.select(
          "id",
          F.lit(null).as("nothing"),
          F.col("note").cast("binary").as("bytes"),
          F.to_date(F.col("ts")).as("day"),
          F.col("amount").gt(0).as("positive"),
          F.create_map(F.coalesce(F.col("user"), F.lit("?")), F.array(F.col("amount"), F.lit(null).cast("int"))).as(
            "mapOfArrays"
          ),
          F.struct(
            F.col("id").as("i"),
            F.struct(F.col("ts").as("t"), F.split(F.col("note"), " ").as("w")).as("inner")
          ).as("nested"),
          F.array(F.struct(F.col("user").as("u")), F.struct(F.lit(null).cast("string").as("u"))).as("arrayOfStructs"),
          F.array(F.array(F.col("price")), F.array()).as("arrayOfArrays"),
          // Named by Spark after the aliases of its arguments
          F.struct(F.col("user").as("u"), F.col("amount"), F.lit(1))
        )
    },
    {
      name: "struct names a cast argument col<n>",
      build: (_, d) => d.events.select("id", F.struct(F.col("price").cast("int")).as("s"))
    },
    {
      name: "grouping normalizes -0.0 and NaN",
      build: (_, d) =>
        d.events
          .groupBy(F.col("amount").multiply(0.0).as("zero"), F.sqrt(F.signum(F.col("amount"))).as("root"))
          .agg(F.count("*").as("n"))
          .select(F.col("zero").cast("string").as("zero"), F.col("root").cast("string").as("root"), "n")
    },
    {
      name: "orderBy on doubles with NaN and nulls",
      build: (_, d) =>
        d.events.orderBy(F.sqrt(F.col("amount")).desc(), F.col("id")).select("id", F.sqrt(F.col("amount")).as("r")),
      opts: { ordered: true }
    },
    {
      name: "hash functions",
      build: (_, d) =>
        d.events.select(
          "id",
          F.hash(F.col("user")).as("hashUser"),
          F.hash(F.col("amount"), F.col("price"), F.col("ts")).as("hashMany"),
          F.hash(F.col("note")).as("hashNote"),
          F.xxhash64(F.col("user"), F.col("amount")).as("xx"),
          F.crc32(F.col("note").cast("binary")).as("crc")
        )
    },
    {
      name: "dates spread over years",
      build: (_, d) =>
        d.events
          .select(
            "id",
            F.date_add(F.col("ts"), F.col("amount").multiply(9)).as("d"),
            F.col("ts")
              .cast("long")
              .plus(F.col("amount").multiply(86_400 * 11))
              .cast("timestamp")
              .as("t")
          )
          .select(
            "id",
            "d",
            F.dayofweek(F.col("d")).as("dow"),
            F.weekofyear(F.col("d")).as("woy"),
            F.dayofyear(F.col("d")).as("doy"),
            F.quarter(F.col("d")).as("q"),
            F.last_day(F.col("d")).as("last"),
            F.next_day(F.col("d"), "Sunday").as("nextSunday"),
            F.trunc(F.col("d"), "year").as("truncYear"),
            F.trunc(F.col("d"), "quarter").as("truncQuarter"),
            F.trunc(F.col("d"), "week").as("truncWeek"),
            F.date_trunc("week", F.col("t")).as("dtWeek"),
            F.date_trunc("quarter", F.col("t")).as("dtQuarter"),
            F.months_between(F.col("t"), F.col("d")).as("mb"),
            F.months_between(F.col("t"), F.col("d"), false).as("mbRaw"),
            F.add_months(F.col("d"), -13).as("minus13"),
            F.date_format(F.col("t"), "yyyy-MM-dd E D Q HH:mm:ss.SS").as("fmt"),
            F.datediff(F.col("d"), F.col("t")).as("diff"),
            F.unix_date(F.col("d")).as("unixDate"),
            F.col("d").cast("string").as("dStr"),
            F.col("t").cast("string").as("tStr")
          )
    },
    {
      name: "parsing strings to dates and timestamps",
      build: (_, d) =>
        d.events
          .select("id", F.date_format(F.col("ts"), "dd/MM/yyyy HH:mm").as("s"), F.col("ts").cast("string").as("plain"))
          .select(
            "id",
            F.to_timestamp(F.col("s"), "dd/MM/yyyy HH:mm").as("ts1"),
            F.to_date(F.col("s"), "dd/MM/yyyy HH:mm").as("d1"),
            F.unix_timestamp(F.col("s"), "dd/MM/yyyy HH:mm").as("unix1"),
            F.col("plain").cast("timestamp").as("ts2"),
            F.col("plain").cast("date").as("d2"),
            F.to_timestamp(F.col("plain")).as("ts3"),
            F.to_date(F.lit("2024-02-30")).as("invalid"),
            F.to_timestamp(F.col("s"), "yyyy-MM-dd").as("mismatch")
          )
    },
    {
      name: "collection functions",
      build: (_, d) =>
        d.events
          .select(
            "id",
            "amount",
            "note",
            F.split(F.col("note"), " ").as("words"),
            F.array(F.col("amount"), F.col("id"), F.lit(null)).as("nums")
          )
          .select(
            "id",
            F.size(F.col("words")).as("size"),
            F.array_contains(F.col("words"), "World").as("contains"),
            F.array_position(F.col("words"), "fox").as("position"),
            F.element_at(F.col("words"), -1).as("last"),
            F.slice(F.col("words"), 2, 2).as("slice"),
            F.array_join(F.col("nums"), "-", "?").as("joined"),
            F.array_distinct(F.array_union(F.col("words"), F.col("words"))).as("union"),
            F.array_max(F.col("nums")).as("max"),
            F.array_min(F.col("nums")).as("min"),
            F.sort_array(F.col("nums"), false).as("sortedDesc"),
            F.array_sort(F.col("nums")).as("sorted"),
            F.array_remove(F.col("nums"), 1).as("removed"),
            F.flatten(F.array(F.col("words"), F.col("words"))).as("flat"),
            F.array_repeat(F.col("id"), 2).as("repeat"),
            F.create_map(F.lit("a"), F.col("amount"), F.lit("b"), F.col("id")).as("map"),
            F.element_at(F.create_map(F.lit("a"), F.col("amount")), "a").as("fromMap"),
            // A null key fails the query in Spark (NULL_MAP_KEY); the local engine gives a null map.
            F.map_keys(F.create_map(F.coalesce(F.col("note"), F.lit("")), F.col("id"))).as("keys")
          )
    },
    {
      name: "a join on a null-safe condition and on an expression",
      build: (_, d) => {
        const e = d.events.select("id", "user", "category")
        const u = d.users
        return e
          .join(u, e.col("user").eqNullSafe(u.col("user")), "left")
          .select(F.lit("nullSafe").as("how"), e.col("id"), u.col("country"))
          .union(
            loose(
              e
                .join(
                  u,
                  F.upper(e.col("user"))
                    .eq(F.upper(u.col("user")))
                    .and(e.col("id").mod(2).eq(u.col("tier").mod(2))),
                  "full"
                )
                .select(F.lit("expr").as("how"), e.col("id"), u.col("country"))
            )
          )
      }
    },
    {
      name: "union widens types; collect_list of structs",
      build: (_, d) =>
        d.events
          .select(F.col("amount").as("v"))
          .union(loose(d.events.select(F.col("id").cast("long").as("v"))))
          .union(loose(d.events.select(F.col("price").as("v"))))
          .groupBy(F.col("v").isNull().as("isNull"))
          .agg(F.count("*").as("n"), F.sum("v").as("sum"), F.max("v").as("max"))
          .join(
            d.events
              .groupBy(F.col("user").isNull().as("isNull"))
              .agg(F.array_sort(F.collect_list(F.struct(F.col("id"), F.col("category")))).as("items")),
            "isNull"
          ),
      opts: { roundDoubles: true }
    }
  ])
})

describe("differential: both engines refuse", () => {
  cases([
    {
      name: "an unknown column",
      expectFailure: true,
      build: (_, d) => d.events.select(F.col("nope"))
    },
    {
      name: "a type mismatch in a binary operator",
      expectFailure: true,
      build: (_, d) => d.events.select(F.col("ts").plus(F.col("note").isNull()))
    },
    {
      name: "an aggregate inside a filter",
      expectFailure: true,
      build: (_, d) => d.events.where(F.sum("amount").gt(1))
    },
    {
      name: "a non-aggregated column beside an aggregate",
      expectFailure: true,
      build: (_, d) => d.events.groupBy("user").agg(F.col("amount"))
    },
    {
      name: "union of frames with different numbers of columns",
      expectFailure: true,
      build: (_, d) => d.events.select("id").union(loose(d.events.select("id", "user")))
    }
  ])
})
