import { describe, expect, it } from "vitest"
import { col, type Column } from "../../../core/Column.ts"
import * as T from "../../../core/DataType.ts"
import { exists } from "../../../core/Expression.ts"
import { prettyName } from "../../../core/ExpressionName.ts"
import * as F from "../../../core/F.ts"
import { lookup } from "../../../core/functions/Registry.ts"
import { formatDate } from "../../../core/functions/DateTimeUtils.ts"
import { ctx, evalColumn } from "./support.ts"

const name = (c: Column<unknown, string>): string => prettyName(c.expr)

describe("F wrappers name columns as Spark does", () => {
  it.each<[Column<unknown, string>, string]>([
    [F.upper("name"), "upper(name)"],
    [F.lower(col("name")), "lower(name)"],
    [F.length("s"), "length(s)"],
    [F.trim("s"), "trim(s)"],
    [F.substring("s", 1, 3), "substring(s, 1, 3)"],
    [F.concat("a", "b"), "concat(a, b)"],
    [F.concat_ws("-", "a", "b"), "concat_ws(-, a, b)"],
    [F.split("s", ","), "split(s, ,, -1)"],
    [F.regexp_replace("s", "(\\d+)", "n"), "regexp_replace(s, (\\d+), n, 1)"],
    [F.regexp_extract("s", "(\\d+)", 1), "regexp_extract(s, (\\d+), 1)"],
    [F.locate("b", "s"), "locate(b, s, 1)"],
    [F.round("x"), "round(x, 0)"],
    [F.round("x", 2), "round(x, 2)"],
    [F.bround("x"), "bround(x, 0)"],
    [F.sqrt("x"), "SQRT(x)"],
    [F.floor("x"), "FLOOR(x)"],
    [F.ceil("x"), "CEIL(x)"],
    [F.exp("x"), "EXP(x)"],
    [F.log("x"), "ln(x)"],
    [F.log(10, "x"), "LOG(10.0, x)"],
    [F.pow("x", 2), "POWER(x, 2)"],
    [F.abs("x"), "abs(x)"],
    [F.signum("x"), "SIGNUM(x)"],
    [F.pi(), "PI()"],
    [F.year("d"), "year(d)"],
    [F.date_add("d", 1), "date_add(d, 1)"],
    [F.datediff("a", "b"), "datediff(a, b)"],
    [F.months_between("a", "b"), "months_between(a, b, true)"],
    [F.to_date("s"), "to_date(s)"],
    [F.to_date("s", "yyyy-MM-dd"), "to_date(s, yyyy-MM-dd)"],
    [F.to_timestamp("s"), "to_timestamp(s)"],
    [F.unix_timestamp(), "unix_timestamp(current_timestamp(), yyyy-MM-dd HH:mm:ss)"],
    [F.unix_timestamp("s"), "unix_timestamp(s, yyyy-MM-dd HH:mm:ss)"],
    [F.from_unixtime("t"), "from_unixtime(t, yyyy-MM-dd HH:mm:ss)"],
    [F.date_format("t", "yyyy"), "date_format(t, yyyy)"],
    [F.date_trunc("hour", "t"), "date_trunc(hour, t)"],
    [F.current_date(), "current_date()"],
    [F.array("a", "b"), "array(a, b)"],
    [F.create_map("k", "v"), "map(k, v)"],
    [F.struct("a", "b"), "struct(a, b)"],
    [F.size("a"), "size(a)"],
    [F.array_contains("a", "x"), "array_contains(a, x)"],
    [F.element_at("a", 1), "element_at(a, 1)"],
    [F.sort_array("a"), "sort_array(a, true)"],
    [F.coalesce("a", "b"), "coalesce(a, b)"],
    [F.isnull("a"), "(a IS NULL)"],
    [F.isnotnull("a"), "(a IS NOT NULL)"],
    [F.isnan("a"), "isnan(a)"],
    [F.hash("a", "b"), "hash(a, b)"],
    [F.greatest("a", "b"), "greatest(a, b)"],
    [F.window_time("window"), "window_time(window)"]
  ])("%s", (c, expected) => {
    expect(name(c)).toBe(expected)
  })
})

describe("every F wrapper calls a registered function", () => {
  const all: ReadonlyArray<Column<unknown, string>> = [
    F.upper("s"),
    F.lower("s"),
    F.initcap("s"),
    F.length("s"),
    F.char_length("s"),
    F.character_length("s"),
    F.octet_length("s"),
    F.bit_length("s"),
    F.trim("s"),
    F.btrim("s"),
    F.ltrim("s"),
    F.rtrim("s"),
    F.lpad("s", 3, "x"),
    F.rpad("s", 3, "x"),
    F.reverse("s"),
    F.instr("s", "x"),
    F.locate("x", "s"),
    F.repeat("s", 2),
    F.translate("s", "a", "b"),
    F.ascii("s"),
    F.char("n"),
    F.chr("n"),
    F.base64("b"),
    F.unbase64("s"),
    F.hex("s"),
    F.unhex("s"),
    F.concat("s", "t"),
    F.concat_ws(",", "s"),
    F.substring("s", 1, 2),
    F.substr("s", 1),
    F.left("s", 1),
    F.right("s", 1),
    F.substring_index("s", ".", 1),
    F.levenshtein("s", "t"),
    F.startswith("s", "t"),
    F.endswith("s", "t"),
    F.contains("s", "t"),
    F.split("s", ","),
    F.regexp_replace("s", "a", "b"),
    F.regexp_extract("s", "a", 0),
    F.regexp_extract_all("s", "a"),
    F.rlike("s", "a"),
    F.regexp("s", "a"),
    F.regexp_like("s", "a"),
    F.like("s", "a"),
    F.ilike("s", "a"),
    F.abs("x"),
    F.negative("x"),
    F.positive("x"),
    F.sqrt("x"),
    F.cbrt("x"),
    F.exp("x"),
    F.expm1("x"),
    F.ln("x"),
    F.log10("x"),
    F.log2("x"),
    F.log1p("x"),
    F.sin("x"),
    F.cos("x"),
    F.tan("x"),
    F.asin("x"),
    F.acos("x"),
    F.atan("x"),
    F.sinh("x"),
    F.cosh("x"),
    F.tanh("x"),
    F.asinh("x"),
    F.acosh("x"),
    F.atanh("x"),
    F.cot("x"),
    F.sec("x"),
    F.csc("x"),
    F.degrees("x"),
    F.radians("x"),
    F.signum("x"),
    F.sign("x"),
    F.rint("x"),
    F.floor("x"),
    F.ceil("x"),
    F.ceiling("x"),
    F.factorial("x"),
    F.bin("x"),
    F.log("x"),
    F.log(2, "x"),
    F.pow("x", 2),
    F.power("x", 2),
    F.atan2("x", "y"),
    F.hypot("x", "y"),
    F.round("x"),
    F.bround("x"),
    F.pmod("x", 2),
    F.isnan("x"),
    F.nanvl("x", "y"),
    F.greatest("x", "y"),
    F.least("x", "y"),
    F.e(),
    F.pi(),
    F.year("d"),
    F.quarter("d"),
    F.month("d"),
    F.dayofweek("d"),
    F.dayofmonth("d"),
    F.day("d"),
    F.dayofyear("d"),
    F.weekday("d"),
    F.weekofyear("d"),
    F.hour("d"),
    F.minute("d"),
    F.second("d"),
    F.dayname("d"),
    F.monthname("d"),
    F.date_add("d", 1),
    F.dateadd("d", 1),
    F.date_sub("d", 1),
    F.datediff("d", "e"),
    F.date_diff("d", "e"),
    F.add_months("d", 1),
    F.months_between("d", "e"),
    F.to_date("s"),
    F.to_timestamp("s"),
    F.unix_timestamp("s"),
    F.from_unixtime("n"),
    F.date_format("d", "y"),
    F.date_trunc("year", "d"),
    F.trunc("d", "year"),
    F.last_day("d"),
    F.next_day("d", "Mon"),
    F.make_date("y", "m", "d"),
    F.timestamp_seconds("n"),
    F.timestamp_millis("n"),
    F.timestamp_micros("n"),
    F.unix_seconds("t"),
    F.unix_millis("t"),
    F.unix_micros("t"),
    F.unix_date("d"),
    F.date_from_unix_date("n"),
    F.from_utc_timestamp("t", "UTC"),
    F.to_utc_timestamp("t", "UTC"),
    F.window_time("w"),
    F.array("a"),
    F.create_map("k", "v"),
    F.struct("a"),
    F.named_struct(F.lit("a"), "a"),
    F.size("a"),
    F.cardinality("a"),
    F.array_size("a"),
    F.array_contains("a", 1),
    F.array_position("a", 1),
    F.array_remove("a", 1),
    F.element_at("a", 1),
    F.sort_array("a"),
    F.array_sort("a"),
    F.array_distinct("a"),
    F.array_union("a", "b"),
    F.array_intersect("a", "b"),
    F.array_except("a", "b"),
    F.arrays_overlap("a", "b"),
    F.array_max("a"),
    F.array_min("a"),
    F.array_join("a", ","),
    F.slice("a", 1, 2),
    F.flatten("a"),
    F.sequence("a", "b"),
    F.array_repeat("a", 2),
    F.map_keys("m"),
    F.map_values("m"),
    F.map_entries("m"),
    F.map_from_arrays("a", "b"),
    F.map_contains_key("m", 1),
    F.coalesce("a"),
    F.nvl("a", "b"),
    F.ifnull("a", "b"),
    F.nvl2("a", "b", "c"),
    F.nullif("a", "b"),
    F.hash("a"),
    F.xxhash64("a"),
    F.crc32("a")
  ]
  it("resolves every name in the registry", () => {
    const missing: Array<string> = []
    for (const c of all) {
      exists(c.expr, (e) => {
        if (e._tag === "ScalarFunction" && lookup(e.name) === undefined) missing.push(e.name)
        return false
      })
    }
    expect(missing).toEqual([])
  })
})

describe("F wrappers evaluate end to end", () => {
  it("strings", () => {
    expect(evalColumn(F.upper(F.trim("name")), { name: [T.StringType, "  ada "] })).toBe("ADA")
    expect(evalColumn(F.concat_ws(" ", "a", "b"), { a: [T.StringType, "x"], b: [T.StringType, null] })).toBe("x")
    expect(evalColumn(F.split("s", ","), { s: [T.StringType, "a,b"] })).toEqual(["a", "b"])
    expect(evalColumn(F.substring("s", 2, 2), { s: [T.StringType, "hello"] })).toBe("el")
    expect(evalColumn(F.locate("l", "s"), { s: [T.StringType, "hello"] })).toBe(3)
  })

  it("math", () => {
    expect(evalColumn(F.round("x", 1), { x: [T.DoubleType, 2.45] })).toBe(2.5)
    expect(evalColumn(F.sqrt("x"), { x: [T.IntegerType, 9] })).toBe(3)
    expect(evalColumn(F.log(2, "x"), { x: [T.IntegerType, 8] })).toBe(3)
    expect(evalColumn(F.pow("x", 2), { x: [T.IntegerType, 3] })).toBe(9)
  })

  it("dates, including current_date from the query's timestamp", () => {
    expect(evalColumn(F.current_date())).toBe(Math.floor(ctx.currentTimestampMs / 86_400_000))
    expect(formatDate(evalColumn(F.date_add("d", 1), { d: [T.StringType, "2024-02-28"] }) as number)).toBe("2024-02-29")
    expect(evalColumn(F.unix_timestamp("t"), { t: [T.TimestampType, 1_000] })).toBe(1)
  })

  it("collections and null handling", () => {
    expect(evalColumn(F.array_contains("a", 2), { a: [T.array(T.IntegerType), [1, 2]] })).toBe(true)
    expect(evalColumn(F.element_at("m", "k"), { m: [T.map(T.StringType, T.IntegerType), new Map([["k", 5]])] })).toBe(5)
    expect(evalColumn(F.coalesce("a", "b"), { a: [T.IntegerType, null], b: [T.IntegerType, 2] })).toBe(2)
    expect(evalColumn(F.struct("a", "b"), { a: [T.IntegerType, 1], b: [T.StringType, "x"] })).toEqual([1, "x"])
    expect(evalColumn(F.isnull("a"), { a: [T.IntegerType, null] })).toBe(true)
  })
})
