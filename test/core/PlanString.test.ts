import { describe, expect, it } from "vitest"
import { col, lit } from "../../core/Column.ts"
import * as T from "../../core/DataType.ts"
import type * as E from "../../core/Expression.ts"
import * as F from "../../core/F.ts"
import type * as P from "../../core/LogicalPlan.ts"
import { expressionString, intervalString, isPlanResolved, treeString } from "../../core/PlanString.ts"

const attr = (
  name: string,
  t: T.DataType,
  id: number,
  extra: Partial<E.AttributeReference> = {}
): E.AttributeReference => ({
  _tag: "AttributeReference",
  name,
  dataType: t,
  nullable: true,
  exprId: id,
  qualifier: [],
  ...extra
})

const a = attr("a", T.IntegerType, 1)
const b = attr("b", T.LongType, 2)
const k = attr("k", T.IntegerType, 3)
const ts = attr("ts", T.TimestampType, 4)
const lrel = (
  planId: number,
  output: ReadonlyArray<E.AttributeReference>,
  rows: ReadonlyArray<ReadonlyArray<unknown>> = []
): P.LocalRelation => ({
  _tag: "LocalRelation",
  planId,
  output,
  rows,
  isStreaming: false
})
const lines = (...ls: ReadonlyArray<string>): string => `${ls.join("\n")}\n`
const int = (v: number): E.Literal => ({ _tag: "Literal", value: v, dataType: T.IntegerType })

describe("expressionString", () => {
  it("prints resolved attributes with their id, L for bigint and the watermark delay", () => {
    expect(expressionString(a)).toBe("a#1")
    expect(expressionString(b)).toBe("b#2L")
    expect(expressionString(attr("ts", T.TimestampType, 7, { eventTimeDelayMs: 10000 }))).toBe("ts#7-T10000ms")
    expect(
      expressionString({
        _tag: "Alias",
        child: {
          _tag: "BinaryExpression",
          op: "+",
          left: b,
          right: { _tag: "Literal", value: 1, dataType: T.LongType }
        },
        name: "c",
        exprId: 9
      })
    ).toBe("(b#2L + 1) AS c#9L")
  })

  it("prints unresolved columns and functions with a quote", () => {
    expect(expressionString(col("a").plus(1).expr)).toBe("('a + 1)")
    expect(expressionString(col("`x.y`.z").expr)).toBe("'`x.y`.z")
    expect(expressionString(col("t.*").expr)).toBe("t.*")
    expect(expressionString(F.callByName("upper", ["s"]).expr)).toBe("'upper('s)")
    expect(expressionString(F.count("*").expr)).toBe("'count(1)")
    expect(expressionString(F.countDistinct("a").expr)).toBe("'count(distinct 'a)")
  })

  it("prints literals as Spark's Literal.toString", () => {
    expect(expressionString(lit("x y").expr)).toBe("x y")
    expect(expressionString(lit(null).expr)).toBe("null")
    expect(expressionString(lit(1.0).expr)).toBe("1")
    expect(expressionString({ _tag: "Literal", value: 1, dataType: T.DoubleType })).toBe("1.0")
    expect(expressionString({ _tag: "Literal", value: 1e10, dataType: T.DoubleType })).toBe("1.0E10")
    expect(expressionString(lit(new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 120))).expr)).toBe("2024-01-02 03:04:05.12")
    expect(expressionString({ _tag: "Literal", value: 19724, dataType: T.DateType })).toBe("2024-01-02")
    expect(expressionString(lit(true).expr)).toBe("true")
    expect(expressionString({ _tag: "Literal", value: new Uint8Array([1, 171]), dataType: T.BinaryType })).toBe(
      "0x01AB"
    )
  })

  it("prints operators, casts and conditionals as Spark", () => {
    const gt: E.Expression = { _tag: "BinaryExpression", op: ">", left: a, right: int(1) }
    expect(
      expressionString({
        _tag: "BinaryExpression",
        op: "and",
        left: gt,
        right: { _tag: "UnaryExpression", op: "isNull", child: b }
      })
    ).toBe("((a#1 > 1) AND isnull(b#2L))")
    expect(expressionString({ _tag: "BinaryExpression", op: "!=", left: a, right: int(1) })).toBe("NOT (a#1 = 1)")
    expect(expressionString({ _tag: "UnaryExpression", op: "not", child: gt })).toBe("NOT (a#1 > 1)")
    expect(expressionString({ _tag: "UnaryExpression", op: "negate", child: a })).toBe("-a#1")
    expect(expressionString({ _tag: "UnaryExpression", op: "isNotNull", child: a })).toBe("isnotnull(a#1)")
    expect(expressionString({ _tag: "Cast", child: a, to: T.LongType })).toBe("cast(a#1 as bigint)")
    expect(expressionString({ _tag: "In", child: a, list: [int(1), int(2)] })).toBe("a#1 IN (1,2)")
    expect(expressionString({ _tag: "CaseWhen", branches: [[gt, int(1)]], otherwise: int(0) })).toBe(
      "CASE WHEN (a#1 > 1) THEN 1 ELSE 0 END"
    )
    expect(expressionString({ _tag: "SortOrder", child: a, direction: "desc", nullOrdering: "nullsLast" })).toBe(
      "a#1 DESC NULLS LAST"
    )
    const w = attr("window", T.WindowType, 5)
    expect(expressionString({ _tag: "GetField", child: w, field: "start", ordinal: 0 })).toBe("window#5.start")
    expect(expressionString({ _tag: "CurrentTimestamp" })).toBe("current_timestamp()")
  })

  it("prints resolved aggregates with Spark's extra arguments", () => {
    const agg = (
      name: E.AggregateName,
      options: E.AggregateFunction["options"] = {},
      distinct = false
    ): E.AggregateFunction => ({
      _tag: "AggregateFunction",
      name,
      args: [a],
      distinct,
      options,
      dataType: T.IntegerType
    })
    expect(expressionString(agg("sum"))).toBe("sum(a#1)")
    expect(expressionString(agg("count", {}, true))).toBe("count(distinct a#1)")
    expect(expressionString(agg("first", { ignoreNulls: true }))).toBe("first(a#1, true)")
    expect(expressionString(agg("collect_list"))).toBe("collect_list(a#1, 0, 0)")
    expect(expressionString(agg("approx_count_distinct", { rsd: 0.05 }))).toBe("approx_count_distinct(a#1, 0.05, 0, 0)")
  })

  it("prints windows with durations in microseconds and session gaps as intervals", () => {
    expect(expressionString({ _tag: "TimeWindow", timeColumn: ts, windowMs: 10000, slideMs: 5000, startMs: 0 })).toBe(
      "window(ts#4, 10000000, 5000000, 0)"
    )
    expect(expressionString({ _tag: "SessionWindow", timeColumn: ts, gap: int(300000) })).toBe(
      "session_window(ts#4, 5 minutes)"
    )
  })
})

describe("intervalString", () => {
  it("follows CalendarInterval.toString", () => {
    expect(intervalString(10000)).toBe("10 seconds")
    expect(intervalString(90000)).toBe("1 minutes 30 seconds")
    expect(intervalString(3600000)).toBe("1 hours")
    expect(intervalString(500)).toBe("0.5 seconds")
    expect(intervalString(0)).toBe("0 seconds")
  })
})

describe("treeString", () => {
  it("prints a parsed plan with unresolved markers and unresolvedalias", () => {
    const parsed: P.Project = {
      _tag: "Project",
      planId: 10,
      projectList: [
        col("a").expr,
        col("a").plus(1).expr,
        { _tag: "Alias", child: col("b").expr, name: "c", exprId: 11 }
      ],
      child: { _tag: "Filter", planId: 12, condition: col("a").gt(1).expr, child: lrel(13, [a, b]) }
    }
    expect(treeString(parsed, "parsed")).toBe(
      lines(
        "'Project ['a, unresolvedalias(('a + 1)), 'b AS c#11]",
        "+- 'Filter ('a > 1)",
        "   +- LocalRelation <empty>, [a#1, b#2L]"
      )
    )
    expect(isPlanResolved(parsed)).toBe(false)
  })

  it("indents children with :- and +- as TreeNode.treeString", () => {
    const plan: P.Project = {
      _tag: "Project",
      planId: 20,
      projectList: [
        a,
        {
          _tag: "Alias",
          child: {
            _tag: "BinaryExpression",
            op: "+",
            left: b,
            right: { _tag: "Literal", value: 1, dataType: T.LongType }
          },
          name: "(b + 1)",
          exprId: 21
        }
      ],
      child: {
        _tag: "Join",
        planId: 22,
        left: {
          _tag: "Filter",
          planId: 23,
          condition: { _tag: "BinaryExpression", op: ">", left: a, right: int(1) },
          child: lrel(24, [a, b], [[1, 2]])
        },
        right: { _tag: "SubqueryAlias", planId: 25, alias: "r", child: lrel(26, [k]) },
        joinType: "left_outer",
        condition: { _tag: "BinaryExpression", op: "=", left: a, right: k },
        usingColumns: undefined
      }
    }
    expect(treeString(plan, "analyzed")).toBe(
      lines(
        "Project [a#1, (b#2L + 1) AS (b + 1)#21L]",
        "+- Join LeftOuter, (a#1 = k#3)",
        "   :- Filter (a#1 > 1)",
        "   :  +- LocalRelation [a#1, b#2L]",
        "   +- SubqueryAlias r",
        "      +- LocalRelation <empty>, [k#3]"
      )
    )
    expect(isPlanResolved(plan)).toBe(true)
  })

  it("prints the other operators as Spark", () => {
    const base = lrel(30, [a, ts])
    const wm: P.EventTimeWatermark = {
      _tag: "EventTimeWatermark",
      planId: 31,
      eventTime: ts,
      delayMs: 10000,
      child: base
    }
    const window = attr("window", T.WindowType, 32)
    const gen: P.Generate = {
      _tag: "Generate",
      planId: 33,
      generator: { _tag: "TimeWindow", timeColumn: ts, windowMs: 10000, slideMs: 10000, startMs: 0 },
      generatorOutput: [window],
      child: wm
    }
    const agg: P.Aggregate = {
      _tag: "Aggregate",
      planId: 34,
      groupingExpressions: [window],
      aggregateExpressions: [
        window,
        {
          _tag: "Alias",
          child: {
            _tag: "AggregateFunction",
            name: "count",
            args: [int(1)],
            distinct: false,
            options: {},
            dataType: T.LongType
          },
          name: "count",
          exprId: 35
        }
      ],
      child: gen
    }
    const sorted: P.Sort = {
      _tag: "Sort",
      planId: 36,
      order: [{ _tag: "SortOrder", child: window, direction: "asc", nullOrdering: "nullsFirst" }],
      global: true,
      child: agg
    }
    const limited: P.Limit = { _tag: "Limit", planId: 37, n: 10, child: sorted }
    expect(treeString(limited, "optimized")).toBe(
      lines(
        "GlobalLimit 10",
        "+- LocalLimit 10",
        "   +- Sort [window#32 ASC NULLS FIRST], true",
        "      +- Aggregate [window#32], [window#32, count(1) AS count#35L]",
        "         +- Generate window(ts#4, 10000000, 10000000, 0), false, [window#32]",
        "            +- EventTimeWatermark ts#4: timestamp, 10 seconds",
        "               +- LocalRelation <empty>, [a#1, ts#4]"
      )
    )
  })

  it("leaves empty lists out, as TreeNode.argString does", () => {
    const count: E.Expression = {
      _tag: "Alias",
      child: { _tag: "AggregateFunction", name: "count", args: [int(1)], distinct: false, options: {}, dataType: T.LongType },
      name: "count",
      exprId: 70
    }
    const agg: P.Aggregate = { _tag: "Aggregate", planId: 71, groupingExpressions: [], aggregateExpressions: [count], child: lrel(72, [a]) }
    expect(treeString(agg, "analyzed")).toBe(lines("Aggregate [count(1) AS count#70L]", "+- LocalRelation <empty>, [a#1]"))
    const empty: P.Project = { _tag: "Project", planId: 73, projectList: [], child: lrel(74, [a]) }
    expect(treeString(empty, "optimized").split("\n")[0]).toBe("Project")
  })

  it("prints unions, deduplication, explode, relations and typed operators", () => {
    const arr = attr("arr", T.array(T.IntegerType), 40)
    const c = attr("col", T.IntegerType, 41)
    const src: P.StreamingRelation = {
      _tag: "StreamingRelation",
      planId: 42,
      format: "rate",
      sourceKey: "s0",
      options: {},
      output: [attr("timestamp", T.TimestampType, 43), attr("value", T.LongType, 44)]
    }
    const files: P.DataSourceRelation = {
      _tag: "DataSourceRelation",
      planId: 45,
      format: "csv",
      paths: ["/x"],
      options: {},
      output: [a, b]
    }
    const u: P.Union = {
      _tag: "Union",
      planId: 46,
      children: [files, lrel(47, [a, b])],
      byName: false,
      allowMissingColumns: false
    }
    const d: P.Deduplicate = {
      _tag: "Deduplicate",
      planId: 48,
      columnNames: ["a"],
      keys: [a],
      withinWatermark: false,
      child: u
    }
    expect(treeString(d, "analyzed")).toBe(
      lines(
        "Deduplicate [a#1]",
        "+- Union false, false",
        "   :- Relation [a#1,b#2L] csv",
        "   +- LocalRelation <empty>, [a#1, b#2L]"
      )
    )
    const g: P.Generate = {
      _tag: "Generate",
      planId: 49,
      generator: { _tag: "Explode", child: arr, outer: true, position: false },
      generatorOutput: [c],
      child: lrel(50, [arr])
    }
    expect(treeString(g, "analyzed")).toBe(
      lines("Generate explode(arr#40), true, [col#41]", "+- LocalRelation <empty>, [arr#40]")
    )
    expect(treeString(src, "parsed")).toBe(lines("StreamingRelation rate, [timestamp#43, value#44L]"))
    const tf: P.TypedFilter = { _tag: "TypedFilter", planId: 51, predicate: () => true, child: src }
    const me: P.MapElements = {
      _tag: "MapElements",
      planId: 52,
      fn: (r) => r,
      flat: false,
      schema: T.struct([T.field("value", T.LongType)]),
      wrapValue: true,
      output: [attr("value", T.LongType, 53)],
      child: tf
    }
    expect(treeString(me, "analyzed")).toBe(
      lines(
        "MapElements <function1>, [value#53L]",
        "+- TypedFilter <function1>",
        "   +- StreamingRelation rate, [timestamp#43, value#44L]"
      )
    )
  })

  it("prints the builder-only operators of a parsed plan as unresolved", () => {
    const base = lrel(60, [a, b])
    const wc: P.WithColumns = {
      _tag: "WithColumns",
      planId: 61,
      names: ["c"],
      columns: [col("a").plus(1).expr],
      child: base
    }
    const rn: P.WithColumnsRenamed = { _tag: "WithColumnsRenamed", planId: 62, renames: [["c", "d"]], child: wc }
    const dr: P.Drop = { _tag: "Drop", planId: 63, columns: [col("b").expr], child: rn }
    const j: P.Join = {
      _tag: "Join",
      planId: 64,
      left: dr,
      right: base,
      joinType: "inner",
      condition: undefined,
      usingColumns: ["a"]
    }
    expect(treeString(j, "parsed")).toBe(
      lines(
        "'Join UsingJoin(Inner, [a])",
        ":- 'Drop ['b]",
        ":  +- 'WithColumnsRenamed [c -> d]",
        ":     +- 'WithColumns [('a + 1) AS c]",
        ":        +- LocalRelation <empty>, [a#1, b#2L]",
        "+- LocalRelation <empty>, [a#1, b#2L]"
      )
    )
  })
})
