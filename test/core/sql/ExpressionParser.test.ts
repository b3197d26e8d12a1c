// Cases from Spark's ExpressionParserSuite (sql/catalyst/src/test/scala/org/apache/spark/sql/
// catalyst/parser/ExpressionParserSuite.scala), each compared with the expression F builds.
import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type Column, F, Window } from "../../../mod.ts"
import { Column as ColumnClass } from "../../../core/Column.ts"
import * as T from "../../../core/DataType.ts"
import type { Expression } from "../../../core/Expression.ts"
import { ParseException } from "../../../core/Errors.ts"
import { prettyName } from "../../../core/ExpressionName.ts"
import { stringToDate, stringToTimestamp } from "../../../core/functions/DateTimeUtils.ts"
import { parseExpression } from "../../../core/sql/ExpressionParser.ts"
import { tokenize, unescapeSqlString } from "../../../core/sql/Lexer.ts"

/** An expression with its alias ids zeroed, so that two builds of the same alias compare equal. */
const normalize = (e: unknown): unknown => {
  if (Array.isArray(e)) return e.map(normalize)
  if (e instanceof Uint8Array) return e
  if (typeof e === "object" && e !== null) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(e)) {
      if (k === "exprId") out[k] = 0
      else if (k === "error" || k === "sql") continue
      else if (v !== undefined) out[k] = normalize(v)
    }
    return out
  }
  return e
}

const parse = (text: string): Expression => {
  const r = parseExpression(text)
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

const assertEqual = (text: string, expected: Column<any, any> | Expression): void => {
  const e = "expr" in expected ? expected.expr : expected
  expect(normalize(parse(text)), text).toEqual(normalize(e))
}

const parseError = (text: string): ParseException => {
  const r = parseExpression(text)
  if (Result.isSuccess(r)) throw new Error(`${text} parsed`)
  return r.failure
}

const a = F.col("a")
const b = F.col("b")
const c = F.col("c")

describe("Lexer", () => {
  it("cuts numbers, words and operators by longest match", () => {
    const kinds = (s: string) =>
      (tokenize(s) as ReadonlyArray<{ kind: string; text: string }>).map((t) => `${t.kind}:${t.text}`)
    expect(kinds("10L 1S 2Y 1.5 .5 1e3 1.5D 2F 3BD 12abc a.b <=> >= != ||")).toEqual([
      "bigint:10L",
      "smallint:1S",
      "tinyint:2Y",
      "decimal:1.5",
      "decimal:.5",
      "exponent:1e3",
      "double:1.5D",
      "float:2F",
      "bigdecimal:3BD",
      "word:12abc",
      "word:a",
      "op:.",
      "word:b",
      "op:<=>",
      "op:>=",
      "op:!=",
      "op:||",
      "eof:"
    ])
    expect(kinds("a -- comment\n + /* c /* nested */ */ b")).toEqual(["word:a", "op:+", "word:b", "eof:"])
  })

  it("unescapes string literals as Spark's unescapeSQLString", () => {
    expect(unescapeSqlString("a\\nb\\tc\\'d\\\\e")).toBe("a\nb\tc'd\\e")
    expect(unescapeSqlString("\\u0041\\101\\%\\_\\x")).toBe("AA\\%\\_x")
    expect(unescapeSqlString("\\0")).toBe("\u0000")
  })
})

describe("ExpressionParserSuite", () => {
  it("star expressions", () => {
    assertEqual("*", F.col("*"))
    assertEqual("a.b.*", F.col("a.b.*"))
    assertEqual("`a.b`.*", F.col("`a.b`.*"))
  })

  it("named expressions", () => {
    assertEqual("a AS b", a.as("b"))
    assertEqual("a b", a.as("b"))
    assertEqual("a + 1 AS `b c`", a.plus(1).as("b c"))
    assertEqual("`a``b`", F.col("`a``b`"))
  })

  it("binary logical expressions", () => {
    assertEqual("a and b", a.and(b))
    assertEqual("a or b", a.or(b))
    // AND binds tighter than OR
    assertEqual("a or b and c", a.or(b.and(c)))
    assertEqual("a and b or c", a.and(b).or(c))
    assertEqual("(a or b) and c", a.or(b).and(c))
  })

  it("long binary logical expressions stay left-deep", () => {
    const text = Array.from({ length: 200 }, (_, i) => `a${i} = ${i}`).join(" and ")
    const e = parse(text)
    expect(e._tag).toBe("BinaryExpression")
  })

  it("not expressions", () => {
    assertEqual("not a", a.not())
    assertEqual("!a", a.not())
    assertEqual("not true > true", F.lit(true).gt(true).not())
    // NOT binds tighter than AND
    assertEqual("not a and b", a.not().and(b))
  })

  it("exists is not an expression tributary parses", () => {
    expect(parseError("exists (select 1)").errorClass).toBe("PARSE_SYNTAX_ERROR")
  })

  it("comparison expressions", () => {
    assertEqual("a = b", a.eq(b))
    assertEqual("a == b", a.eq(b))
    assertEqual("a <=> b", a.eqNullSafe(b))
    assertEqual("a <> b", a.neq(b))
    assertEqual("a != b", a.neq(b))
    assertEqual("a < b", a.lt(b))
    assertEqual("a <= b", a.leq(b))
    assertEqual("a !> b", a.leq(b))
    assertEqual("a > b", a.gt(b))
    assertEqual("a >= b", a.geq(b))
    assertEqual("a !< b", a.geq(b))
  })

  it("in expressions", () => {
    assertEqual("a in (b, c)", a.isin(b, c))
    assertEqual("a not in (b, c)", a.isin(b, c).not())
    assertEqual("a in (1, 'x')", a.isin(1, "x"))
  })

  it("between expressions", () => {
    assertEqual("a between b and c", a.between(b, c))
    assertEqual("a not between b and c", a.between(b, c).not())
    assertEqual("(a and b) between c and d", a.and(b).between(c, F.col("d")))
    // the AND after BETWEEN's bounds is the logical one
    assertEqual("a between b and c and d", a.between(b, c).and(F.col("d")))
  })

  it("like expressions", () => {
    assertEqual("a like 'pattern%'", a.like("pattern%"))
    assertEqual("a not like 'pattern%'", a.like("pattern%").not())
    assertEqual("a rlike 'pattern%'", a.rlike("pattern%"))
    assertEqual("a regexp 'pattern%'", a.rlike("pattern%"))
    assertEqual("a not rlike 'pattern%'", a.rlike("pattern%").not())
    assertEqual("a ilike 'P%'", F.ilike("a", F.lit("P%")))
    assertEqual("a like 'pattern%' escape '#'", F.like("a", F.lit("pattern%"), "#"))
    expect(parseError("a like 'x' escape '##'").errorClass).toBe("INVALID_ESCAPE_CHAR")
  })

  it("is null expressions", () => {
    assertEqual("a is null", a.isNull())
    assertEqual("a is not null", a.isNotNull())
    assertEqual("a = b is null", a.eq(b).isNull())
    assertEqual("a = b is not null", a.eq(b).isNotNull())
    assertEqual("a is unknown", a.isNull())
  })

  it("is distinct expressions", () => {
    assertEqual("a is distinct from b", a.eqNullSafe(b).not())
    assertEqual("a is not distinct from b", a.eqNullSafe(b))
  })

  it("is true/false", () => {
    assertEqual("a = b is true", a.eq(b).eqNullSafe(true))
    assertEqual("a = b is not true", a.eq(b).eqNullSafe(true).not())
    assertEqual("a = b is false", a.eq(b).eqNullSafe(false))
  })

  it("binary arithmetic expressions", () => {
    assertEqual("a + b", a.plus(b))
    assertEqual("a - b", a.minus(b))
    assertEqual("a * b", a.multiply(b))
    assertEqual("a / b", a.divide(b))
    assertEqual("a % b", a.mod(b))
    assertEqual("a || b", F.concat(a, b))
    // precedence and left associativity
    assertEqual("a + b * c", a.plus(b.multiply(c)))
    assertEqual("(a + b) * c", a.plus(b).multiply(c))
    assertEqual("a - b - c", a.minus(b).minus(c))
    assertEqual("a * b / c % 2", a.multiply(b).divide(c).mod(2))
    assertEqual("a + b = c", a.plus(b).eq(c))
    assertEqual("a = b + c", a.eq(b.plus(c)))
    assertEqual("a < b = true", a.lt(b).eq(true))
  })

  it("unary arithmetic expressions", () => {
    assertEqual("-a", a.negate())
    assertEqual("+a", F.positive(a))
    assertEqual("-a * b", a.negate().multiply(b))
    assertEqual("a - -b", a.minus(b.negate()))
    assertEqual("-1", F.lit(-1))
    assertEqual("a - 1", a.minus(1))
    assertEqual("a -1", a.minus(1))
    assertEqual("a - -1", a.minus(-1))
  })

  it("cast expressions", () => {
    assertEqual("cast(a as int)", a.cast("int"))
    assertEqual("cast(a as timestamp)", a.cast("timestamp"))
    assertEqual("cast(a as array<int>)", a.cast("array<int>"))
    assertEqual("cast(a as map<string, array<int>>)", a.cast(T.map(T.StringType, T.array(T.IntegerType))))
    assertEqual("cast(cast(a as int) as long)", a.cast("int").cast("bigint"))
    assertEqual("cast(a as decimal(10, 2))", a.cast("double"))
    assertEqual("a::string", a.cast("string"))
    expect(parseError("cast(a as foo)").message).toBe(
      // Spark 4.2's words for `selectExpr("cast(a as foo)")`, without the leading newline
      '[UNSUPPORTED_DATATYPE] Unsupported data type "FOO". SQLSTATE: 0A000\n== SQL (line 1, position 11) ==\ncast(a as foo)\n          ^^^\n'
    )
  })

  it("function expressions", () => {
    assertEqual("foo()", F.expr("foo()"))
    assertEqual("upper(a)", F.upper(a))
    assertEqual("UPPER(a)", F.upper(a))
    assertEqual("Sqrt(a)", F.sqrt(a))
    assertEqual("pow(a, 2)", F.pow(a, 2))
    assertEqual("round(a)", F.round(a))
    assertEqual("round(a, 2)", F.round(a, 2))
    assertEqual("split(a, ',')", F.split(a, ","))
    assertEqual("coalesce(a, b, 1)", F.coalesce(a, b, F.lit(1)))
    assertEqual("count(*)", F.count("*"))
    assertEqual("count(1)", F.count(F.lit(1)))
    assertEqual("count(a)", F.count(a))
    assertEqual("count(distinct a, b)", F.countDistinct(a, b))
    assertEqual("sum(a)", F.sum("a"))
    assertEqual("SUM(DISTINCT a)", F.sumDistinct("a"))
    assertEqual("avg(a)", F.avg("a"))
    assertEqual("mean(a)", F.avg("a"))
    assertEqual("first(a)", F.first("a"))
    assertEqual("first(a, true)", F.first("a", true))
    assertEqual("last(a ignore nulls)", F.last("a", true))
    assertEqual("approx_count_distinct(a, 0.1)", F.approx_count_distinct("a", 0.1))
    assertEqual("stddev(a)", F.stddev("a"))
    assertEqual("STD(a)", F.std("a"))
    assertEqual("var_pop(a)", F.var_pop("a"))
    assertEqual("corr(a, b)", F.corr("a", "b"))
    assertEqual("covar_samp(a, b)", F.covar_samp("a", "b"))
    assertEqual("max_by(a, b)", F.max_by("a", "b"))
    assertEqual("median(a)", F.median("a"))
    assertEqual("percentile(a, 0.5)", F.percentile("a", 0.5))
    assertEqual("percentile_approx(a, 0.25)", F.percentile_approx("a", 0.25))
    assertEqual("approx_percentile(a, 0.25, 100)", F.approx_percentile("a", 0.25, 100))
    assertEqual("struct(a, b AS c)", F.struct(a, b.as("c")))
    assertEqual("current_timestamp()", F.current_timestamp())
    assertEqual("current_timestamp", F.current_timestamp())
    assertEqual("now()", F.current_timestamp())
    assertEqual("current_date", F.current_date())
    assertEqual("window(ts, '10 seconds')", F.window("ts", "10 seconds"))
    assertEqual("window(ts, '10 minutes', '5 minutes')", F.window("ts", "10 minutes", "5 minutes"))
    assertEqual("session_window(ts, '5 minutes')", F.session_window("ts", "5 minutes"))
    assertEqual("explode(a)", F.explode("a"))
    assertEqual("posexplode_outer(a)", F.posexplode_outer("a"))
    assertEqual("date_add(a, 1)", F.date_add("a", 1))
  })

  it("unknown functions are Spark's UNRESOLVED_ROUTINE", () => {
    const e = parse("no_such_fn(a)")
    expect(e._tag).toBe("InvalidExpression")
    expect(e._tag === "InvalidExpression" && e.message).toBe(
      "[UNRESOLVED_ROUTINE] Cannot resolve routine `no_such_fn` on search path [`system`.`builtin`, `system`.`session`, `spark_catalog`.`default`]."
    )
  })

  it("case when", () => {
    assertEqual("case a when 1 then b when 2 then c else 3 end", F.when(a.eq(1), b).when(a.eq(2), c).otherwise(3))
    assertEqual("case when a = 1 then b when a = 2 then c else 3 end", F.when(a.eq(1), b).when(a.eq(2), c).otherwise(3))
    assertEqual("case when a > 1 then 'x' end", F.when(a.gt(1), "x"))
    expect(parseError("case when a then b").message).toContain("Syntax error at or near end of input.")
  })

  it("dereference and subscripts", () => {
    assertEqual("a.b", F.col("a.b"))
    assertEqual("`a`.b", F.col("a.b"))
    assertEqual("`a.b`", F.col("`a.b`"))
    assertEqual("struct(a).a", F.struct(a).getField("a"))
    const subscript = (base: Column<any, any>, i: unknown) =>
      new ColumnClass({
        _tag: "ScalarFunction",
        name: "subscript",
        args: [base.expr, F.lit(i as number).expr],
        dataType: undefined
      })
    assertEqual("a[0]", subscript(a, 0))
    assertEqual("a['k'].b", subscript(a, "k").getField("b"))
    expect(prettyName(parse("split(a, ',')[0]"))).toBe("split(a, ,, -1)[0]")
    // text cannot call the analyzer's own functions
    expect(parse("subscript(a, 0)")._tag).toBe("InvalidExpression")
  })

  it("literals", () => {
    assertEqual("null", F.lit(null))
    assertEqual("TRUE", F.lit(true))
    assertEqual("false", F.lit(false))
    assertEqual("'hello'", F.lit("hello"))
    assertEqual('"hello"', F.lit("hello"))
    assertEqual("'hello' \" \" 'world'", F.lit("hello world"))
    assertEqual("'it''s'", F.lit("its"))
    assertEqual("'\\u0041\\n'", F.lit("A\n"))
    assertEqual("r'\\n'", F.lit("\\n"))
  })

  it("integral literals", () => {
    assertEqual("787324", F.lit(787324))
    assertEqual("-787324", F.lit(-787324))
    assertEqual("7873247234798249234", { _tag: "Literal", value: 7873247234798249234n, dataType: T.LongType })
    // beyond bigint Spark reads a decimal; tributary has none, so a double
    assertEqual("98732472347982492340", {
      _tag: "Literal",
      value: Number("98732472347982492340"),
      dataType: T.DoubleType
    })
    assertEqual("2147483648", { _tag: "Literal", value: 2147483648, dataType: T.LongType })
    assertEqual("10L", { _tag: "Literal", value: 10, dataType: T.LongType })
    assertEqual("-10L", { _tag: "Literal", value: -10, dataType: T.LongType })
    assertEqual("10S", F.lit(10))
    assertEqual("-128Y", F.lit(-128))
    expect(parseError("128Y").message).toBe(
      "[INVALID_NUMERIC_LITERAL_RANGE] Numeric literal 128 is outside the valid range for tinyint with minimum value of -128 and maximum value of 127. Please adjust the value accordingly. SQLSTATE: 22003\n== SQL (line 1, position 1) ==\n128Y\n^^^^\n"
    )
    expect(parseError("40000S").errorClass).toBe("INVALID_NUMERIC_LITERAL_RANGE")
    expect(parseError("9223372036854775808L").errorClass).toBe("INVALID_NUMERIC_LITERAL_RANGE")
  })

  it("decimal and double literals (decimals are doubles here)", () => {
    assertEqual("10.0", { _tag: "Literal", value: 10, dataType: T.DoubleType })
    assertEqual("1.5", F.lit(1.5))
    assertEqual("-1.5", F.lit(-1.5))
    assertEqual(".5", F.lit(0.5))
    assertEqual("1e3", { _tag: "Literal", value: 1000, dataType: T.DoubleType })
    assertEqual("1.5D", F.lit(1.5))
    assertEqual("1.5F", F.lit(1.5))
    assertEqual("1.5BD", F.lit(1.5))
  })

  it("type constructors", () => {
    assertEqual("DATE '2016-03-11'", { _tag: "Literal", value: stringToDate("2016-03-11"), dataType: T.DateType })
    assertEqual("date'2016-03-11'", { _tag: "Literal", value: stringToDate("2016-03-11"), dataType: T.DateType })
    assertEqual(
      "TIMESTAMP '2016-03-11 20:54:00.000'",
      F.lit(new Date(stringToTimestamp("2016-03-11 20:54:00.000") ?? 0))
    )
    assertEqual("X'A'", F.lit(new Uint8Array([10])))
    assertEqual("x'A10C'", F.lit(new Uint8Array([0xa1, 0x0c])))
    expect(parseError("DATE 'mar 11 2016'").message).toBe(
      `[INVALID_TYPED_LITERAL] The value of the typed literal "DATE" is invalid: 'mar 11 2016'. SQLSTATE: 42604\n== SQL (line 1, position 1) ==\nDATE 'mar 11 2016'\n^^^^^^^^^^^^^^^^^^\n`
    )
    expect(parseError("a + TIMESTAMP '2016-33-11 20:54:00.000'").startPosition).toBe(4)
  })

  it("intervals", () => {
    const iv = (months: number, days: number, micros: number): Expression => ({
      _tag: "Literal",
      value: { months, days, micros },
      dataType: T.CalendarIntervalType
    })
    assertEqual("interval 10 seconds", iv(0, 0, 10_000_000))
    assertEqual("INTERVAL 1 HOUR", iv(0, 0, 3_600_000_000))
    assertEqual("interval '1' hour", iv(0, 0, 3_600_000_000))
    assertEqual("interval 1 day 2 hours", iv(0, 1, 7_200_000_000))
    assertEqual("interval -1 day", iv(0, -1, 0))
    assertEqual("interval 1 year 2 months", iv(14, 0, 0))
    assertEqual("interval 3 weeks", iv(0, 21, 0))
    assertEqual("interval 500 milliseconds", iv(0, 0, 500_000))
    assertEqual("interval '1 day 2 hours'", iv(0, 1, 7_200_000_000))
    assertEqual("interval '1 2:03' day to minute", iv(0, 1, 7_380_000_000))
    assertEqual("interval '1-2' year to month", iv(14, 0, 0))
    assertEqual("interval '10:20:30.5' hour to second", iv(0, 0, 37_230_500_000))
    assertEqual("ts + interval 10 seconds", F.col("ts").plus(new ColumnClass(iv(0, 0, 10_000_000))))
    expect(parseError("interval 1 fortnights").message).toContain("Syntax error at or near 'fortnights'")
    expect(parseError("interval 'nonsense'").errorClass).toBe("INVALID_TYPED_LITERAL")
    // Spark 4 reads a literal as year-month or day-time, never both (MIXED_INTERVAL_UNITS)
    expect(parseError("a + INTERVAL 1 MONTH 2 DAYS").message).toBe(
      "Cannot mix year-month and day-time fields: INTERVAL 1 MONTH 2 DAYS.\n== SQL (line 1, position 5) ==\na + INTERVAL 1 MONTH 2 DAYS\n    ^^^^^^^^^^^^^^^^^^^^^^^\n"
    )
    expect(parseError("interval '1 year 2 second'").errorClass).toBe("_LEGACY_ERROR_TEMP_0029")
  })

  it("interval literals print as Spark 4.2 names them (fields from the units written)", () => {
    // each name is what Spark 4.2 printed for `ts + <literal>` (probed through Spark Connect)
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["INTERVAL 10 SECONDS", "INTERVAL '10' SECOND"],
      ["interval 1.5 seconds", "INTERVAL '01.5' SECOND"],
      ["interval '1' hour", "INTERVAL '01' HOUR"],
      ["INTERVAL 90 MINUTES", "INTERVAL '90' MINUTE"],
      ["interval 1 day 2 hours", "INTERVAL '1 02' DAY TO HOUR"],
      ["interval '1 2:03' day to minute", "INTERVAL '1 02:03' DAY TO MINUTE"],
      ["interval '10:20:30.5' hour to second", "INTERVAL '10:20:30.5' HOUR TO SECOND"],
      ["interval -3 hours", "INTERVAL '-03' HOUR"],
      ["interval 1 year", "INTERVAL '1' YEAR"],
      ["interval 14 months", "INTERVAL '14' MONTH"],
      ["interval 1 year 2 months", "INTERVAL '1-2' YEAR TO MONTH"],
      ["interval '2-1' year to month", "INTERVAL '2-1' YEAR TO MONTH"],
      ["interval 3 weeks", "INTERVAL '21' DAY"],
      ["interval 500 milliseconds", "INTERVAL '00.5' SECOND"],
      ["interval '1 day 2 hours'", "INTERVAL '1 02' DAY TO HOUR"],
      ["interval '3 months'", "INTERVAL '3' MONTH"]
    ]
    for (const [text, name] of cases) expect(prettyName(parse(`ts + ${text}`)), text).toBe(`ts + ${name}`)
    expect(prettyName(parse("ts - interval 2 days"))).toBe("ts - INTERVAL '2' DAY")
  })

  it("timestampadd and timestampdiff", () => {
    assertEqual("timestampadd(HOUR, 1, ts)", F.timestampadd("HOUR", 1, "ts"))
    assertEqual("dateadd(day, -1, ts)", F.timestampadd("DAY", -1, "ts"))
    assertEqual("date_add(MONTH, 2, ts)", F.timestampadd("MONTH", 2, "ts"))
    assertEqual("timestampdiff(SECOND, a, b)", F.timestampdiff("SECOND", "a", "b"))
    assertEqual("datediff(week, a, b)", F.timestampdiff("WEEK", "a", "b"))
    // the two-argument functions of the same names
    assertEqual("date_add(a, 1)", F.date_add("a", 1))
    assertEqual("datediff(a, b)", F.datediff("a", "b"))
    expect(parseError("timestampadd('HOUR', 1, ts)").errorClass).toBe("INVALID_PARAMETER_VALUE.DATETIME_UNIT")
  })

  it("special syntax: extract, substring, trim, position", () => {
    assertEqual("extract(year from a)", F.year("a"))
    assertEqual("extract(HOUR FROM a)", F.hour("a"))
    assertEqual("substring(a from 2 for 3)", F.substring(a, 2, 3))
    assertEqual("substring(a, 2, 3)", F.substring(a, 2, 3))
    assertEqual("trim(both from a)", F.trim(a))
    assertEqual("trim(leading 'x' from a)", F.ltrim(a, "x"))
    assertEqual("trim(a)", F.trim(a))
    assertEqual("position('b' in a)", F.locate("b", a))
  })

  it("bitwise operators and div, with their precedence", () => {
    const call = (name: string, ...args: ReadonlyArray<Column<any, any>>) =>
      new ColumnClass({ _tag: "ScalarFunction", name, args: args.map((x) => x.expr), dataType: undefined })
    assertEqual("a & b", call("bitwise_and", a, b))
    assertEqual("a | b ^ c", call("bitwise_or", a, call("bitwise_xor", b, c)))
    assertEqual("a & b + c", call("bitwise_and", a, b.plus(c)))
    assertEqual("a | b = c", call("bitwise_or", a, b).eq(c))
    assertEqual("~a", call("bitwise_not", a))
    assertEqual("a div b * c", call("div", a, b).multiply(c))
    expect(prettyName(parse("a & b | ~c"))).toBe("((a & b) | ~c)")
    expect(prettyName(parse("a div 2"))).toBe("(a div 2)")
    // shifts bind looser than + and tighter than &
    expect(prettyName(parse("a << 1 + 1 & b >>> 2"))).toBe("((a << (1 + 1)) & (b >>> 2))")
  })

  // ExpressionParserSuite's "window function expressions": each is the expression
  // `Column.over(Window…)` builds; a frame bound written `n PRECEDING` is named as Spark names
  // its `UnaryMinus(n)` (the DataFrame API's negative offsets are named `-n FOLLOWING`).
  it("window function expressions", () => {
    // a sort item is a SortOrder (`Window.orderBy("c")` leaves the analyzer to add it)
    const byC = Window.orderBy(F.col("c").asc())
    const w = Window.partitionBy("a", "b").orderBy(F.col("c").asc(), F.col("d").desc_nulls_first())
    assertEqual("count(*) over ()", F.count(F.lit(1)).over())
    assertEqual("sum(x) over ()", F.sum("x").over())
    assertEqual("sum(x) over (partition by a, b order by c asc, d desc nulls first)", F.sum("x").over(w))
    assertEqual("sum(x) over (distribute by a, b sort by c, d desc nulls first)", F.sum("x").over(w))
    assertEqual("sum(x) over (cluster by a, b)", F.sum("x").over(Window.partitionBy("a", "b")))
    assertEqual("sum(x) over (order by c desc)", F.sum("x").over(Window.orderBy(F.col("c").desc())))
    assertEqual(
      "sum(x) over (order by c rows between unbounded preceding and unbounded following)",
      F.sum("x").over(byC.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing))
    )
    assertEqual("row_number() over (order by c)", F.row_number().over(byC))
    assertEqual("rank(c) over (order by c)", F.rank().over(byC))
    assertEqual("ntile(4) over (order by c)", F.ntile(4).over(byC))
    assertEqual("lag(x) over (order by c)", F.lag("x").over(byC))
    assertEqual("lead(x, 2, 0) over (order by c)", F.lead("x", 2, 0).over(byC))
    assertEqual("lag(x, 1) ignore nulls over (order by c)", F.lag("x", 1, undefined, true).over(byC))
    assertEqual("nth_value(x, 2) ignore nulls over (order by c)", F.nth_value("x", 2, true).over(byC))
    const frame = (text: string): string => prettyName(parse(`sum(x) over (order by c ${text})`))
    expect(frame("rows between 2 preceding and 3 following")).toBe(
      "sum(x) OVER (ORDER BY c ASC NULLS FIRST ROWS BETWEEN 2 PRECEDING AND 3 FOLLOWING)"
    )
    expect(frame("rows 1 preceding")).toBe(
      "sum(x) OVER (ORDER BY c ASC NULLS FIRST ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"
    )
    expect(frame("range between current row and -2 preceding")).toBe(
      "sum(x) OVER (ORDER BY c ASC NULLS FIRST RANGE BETWEEN CURRENT ROW AND -2 PRECEDING)"
    )
    expect(frame("rows between -1 following and 1 following")).toBe(
      "sum(x) OVER (ORDER BY c ASC NULLS FIRST ROWS BETWEEN -1 FOLLOWING AND 1 FOLLOWING)"
    )
  })

  it("window specifications Spark refuses", () => {
    const invalid = (text: string): string => {
      const e = parse(text)
      expect(e._tag, text).toBe("InvalidExpression")
      return e._tag === "InvalidExpression" ? e.message : ""
    }
    expect(invalid("sum(x) over w")).toBe(
      "[MISSING_WINDOW_SPECIFICATION] Window specification is not defined in the WINDOW clause for w. For more information about WINDOW clauses, please refer to 'https://spark.apache.org/docs/latest/sql-ref-syntax-qry-select-window.html'. SQLSTATE: 42P20"
    )
    expect(invalid("sum(x) over (w)")).toMatch(/^\[MISSING_WINDOW_SPECIFICATION\]/)
    expect(invalid("row_number(a) over (order by c)")).toMatch(
      /^\[WRONG_NUM_ARGS.WITHOUT_SUGGESTION\] The `row_number` requires 0/
    )
    expect(invalid("lag() over (order by c)")).toMatch(
      /The `lag` requires \[1, 2, 3\] parameters but the actual number is 0/
    )
    // a bound that is not a literal is a parse error, with the bound in the caret
    const r = parseExpression("sum(x) over (order by c rows between x preceding and current row)")
    expect(Result.isFailure(r) && r.failure.message).toBe(
      "Frame bound value must be a literal.\n== SQL (line 1, position 38) ==\nsum(x) over (order by c rows between x preceding and current row)\n                                     ^^^^^^^^^^^\n"
    )
  })

  it("unsupported constructs fail at the first action, naming the construct", () => {
    for (const text of [
      "count(a) filter (where b > 1)",
      "transform(a, x -> x + 1)",
      "sum(x) over (order by c range interval 1 day preceding)"
    ]) {
      const e = parse(text)
      expect(e._tag, text).toBe("InvalidExpression")
      expect(e._tag === "InvalidExpression" && e.message, text).toMatch(/^\[UNSUPPORTED_FEATURE\]/)
    }
  })
})

describe("ParseException", () => {
  it("is Spark's PARSE_SYNTAX_ERROR with the position and caret", () => {
    const e = parseError("a + + ")
    expect(e).toBeInstanceOf(ParseException)
    expect(e._tag).toBe("AnalysisError")
    expect(e.reason).toBe("ParseError")
    expect(e.errorClass).toBe("PARSE_SYNTAX_ERROR")
    expect(e.sqlState).toBe("42601")
    expect(e.message).toBe(
      "[PARSE_SYNTAX_ERROR] Syntax error at or near end of input. SQLSTATE: 42601 (line 1, pos 6)\n\n== SQL ==\na + + \n------^^^\n"
    )
  })

  it("names the offending token", () => {
    const e = parseError("a + )")
    expect(e.message).toBe(
      "[PARSE_SYNTAX_ERROR] Syntax error at or near ')'. SQLSTATE: 42601 (line 1, pos 4)\n\n== SQL ==\na + )\n----^^^\n"
    )
  })

  it("reports extra input after a complete expression", () => {
    const e = parseError("a b c")
    expect(e.message).toContain("Syntax error at or near 'c': extra input 'c'. SQLSTATE: 42601 (line 1, pos 4)")
    expect(parseError("a b c d").message).toContain("Syntax error at or near 'c'. SQLSTATE")
  })

  it("reports a text that ends early at the end of input, without a hint (Spark 4.2 on `(a + 1`)", () => {
    expect(parseError("(a + 1").message).toBe(
      "[PARSE_SYNTAX_ERROR] Syntax error at or near end of input. SQLSTATE: 42601 (line 1, pos 6)\n\n== SQL ==\n(a + 1\n------^^^\n"
    )
    expect(parseError("upper(a").message).toContain("Syntax error at or near end of input.")
  })

  it("shows the line of a multi-line text", () => {
    const e = parseError("a +\nb +\n)")
    expect(e.line).toBe(3)
    expect(e.startPosition).toBe(0)
    expect(e.message).toBe(
      "[PARSE_SYNTAX_ERROR] Syntax error at or near ')'. SQLSTATE: 42601 (line 3, pos 0)\n\n== SQL ==\na +\nb +\n)\n^^^\n"
    )
    const mid = parseError("a +\n) +\nb")
    expect(mid.message).toBe(
      "[PARSE_SYNTAX_ERROR] Syntax error at or near ')'. SQLSTATE: 42601 (line 2, pos 0)\n\n== SQL ==\na +\n)\n^^^\n +\nb\n".replace(
        ")\n^^^\n +\nb\n",
        ") +\n^^^\nb\n"
      )
    )
  })

  it("empty text and unclosed comments", () => {
    expect(parseError("  ").errorClass).toBe("PARSE_EMPTY_STATEMENT")
    expect(parseError("a /* never closed").message).toBe(
      "[UNCLOSED_BRACKETED_COMMENT] Found an unclosed bracketed comment. Please, append */ at the end of the comment. SQLSTATE: 42601 (line 1, pos 2)\n\n== SQL ==\na /* never closed\n--^^^\n"
    )
  })

  it("an unclosed string is an unrecognized quote", () => {
    expect(parseError("'abc").message).toContain("Syntax error at or near '''")
  })
})

/** A SQL string literal for `s`: quotes and backslashes escaped with a backslash. */
const sqlString = (s: string): string => `'${s.replaceAll("\\", "\\\\").replaceAll("'", "\\'")}'`

describe("F.expr(text) equals the column F builds", () => {
  type Gen = { readonly text: string; readonly col: Column<any, any> }
  const leaf: fc.Arbitrary<Gen> = fc.oneof(
    fc.constantFrom("a", "b", "c").map((n) => ({ text: n, col: F.col(n) })),
    fc.integer({ min: 0, max: 1000 }).map((n) => ({ text: String(n), col: F.lit(n) })),
    // any string, written with Spark's escapes for the backslash and the quote
    fc.string({ unit: "binary", maxLength: 8 }).map((s) => ({ text: sqlString(s), col: F.lit(s) })),
    fc.boolean().map((v) => ({ text: String(v), col: F.lit(v) }))
  )
  const tree: fc.Arbitrary<Gen> = fc.letrec<{ node: Gen }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc
        .tuple(tie("node"), fc.constantFrom("+", "-", "*", "/", "%", "=", "<", ">=", "<=>", "AND", "OR"), tie("node"))
        .map(([l, op, r]) => {
          const col =
            op === "+"
              ? l.col.plus(r.col)
              : op === "-"
                ? l.col.minus(r.col)
                : op === "*"
                  ? l.col.multiply(r.col)
                  : op === "/"
                    ? l.col.divide(r.col)
                    : op === "%"
                      ? l.col.mod(r.col)
                      : op === "="
                        ? l.col.eq(r.col)
                        : op === "<"
                          ? l.col.lt(r.col)
                          : op === ">="
                            ? l.col.geq(r.col)
                            : op === "<=>"
                              ? l.col.eqNullSafe(r.col)
                              : op === "AND"
                                ? l.col.and(r.col)
                                : l.col.or(r.col)
          return { text: `(${l.text} ${op} ${r.text})`, col }
        }),
      tie("node").map((x) => ({ text: `(NOT ${x.text})`, col: x.col.not() })),
      tie("node").map((x) => ({ text: `(${x.text} IS NULL)`, col: x.col.isNull() })),
      tie("node").map((x) => ({ text: `upper(${x.text})`, col: F.upper(x.col) })),
      tie("node").map((x) => ({ text: `CAST(${x.text} AS BIGINT)`, col: x.col.cast("bigint") })),
      fc
        .tuple(tie("node"), tie("node"))
        .map(([x, y]) => ({ text: `(${x.text} IN (${y.text}, 1))`, col: x.col.isin(y.col, 1) })),
      fc.tuple(tie("node"), tie("node"), tie("node")).map(([x, y, z]) => ({
        text: `(${x.text} BETWEEN ${y.text} AND ${z.text})`,
        col: x.col.between(y.col, z.col)
      })),
      fc.tuple(tie("node"), fc.string({ maxLength: 5 })).map(([x, p]) => ({
        text: `(${x.text} LIKE ${sqlString(p)})`,
        col: x.col.like(p)
      })),
      fc.tuple(tie("node"), tie("node")).map(([x, y]) => ({
        text: `(${x.text} IS NOT DISTINCT FROM ${y.text})`,
        col: x.col.eqNullSafe(y.col)
      })),
      fc
        .tuple(tie("node"), tie("node"))
        .map(([x, y]) => ({ text: `(${x.text} NOT IN (${y.text}))`, col: x.col.isin(y.col).not() })),
      tie("node").map((x) => ({ text: `round(${x.text})`, col: F.round(x.col) })),
      fc.tuple(tie("node"), tie("node")).map(([x, y]) => ({
        text: `CASE WHEN ${x.text} THEN ${y.text} ELSE NULL END`,
        col: F.when(x.col, y.col).otherwise(null)
      }))
    )
  })).node

  it("for random expression trees", () => {
    fc.assert(
      fc.property(tree, (g) => {
        expect(normalize(F.expr(g.text).expr)).toEqual(normalize(g.col.expr))
      }),
      { numRuns: 300 }
    )
  })

  it("the column's Spark name reads back as the same expression", () => {
    // prettyName prints operators fully parenthesized; without string literals it is valid SQL
    const numeric: fc.Arbitrary<Gen> = fc.letrec<{ n: Gen }>((tie) => ({
      n: fc.oneof(
        { depthSize: "small" },
        fc.constantFrom("a", "b").map((n) => ({ text: n, col: F.col(n) })),
        fc.integer({ min: 0, max: 99 }).map((n) => ({ text: String(n), col: F.lit(n) })),
        fc.tuple(tie("n"), tie("n")).map(([l, r]) => ({ text: "", col: l.col.plus(r.col) })),
        fc.tuple(tie("n"), tie("n")).map(([l, r]) => ({ text: "", col: l.col.multiply(r.col).gt(r.col) })),
        tie("n").map((x) => ({ text: "", col: x.col.isNotNull() })),
        // a minus before a number literal is part of the literal (`(- 0)` is -0), so names only
        fc.constantFrom("a", "b").map((n) => ({ text: "", col: F.col(n).negate() }))
      )
    })).n
    fc.assert(
      fc.property(numeric, (g) => {
        expect(normalize(F.expr(prettyName(g.col.expr)).expr)).toEqual(normalize(g.col.expr))
      }),
      { numRuns: 200 }
    )
  })
})
