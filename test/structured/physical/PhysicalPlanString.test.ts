import { describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import * as L from "../../../core/LogicalPlan.ts"
import { expressionString, treeString } from "../../../structured/physical/PhysicalPlanString.ts"
import { plan } from "../../../structured/physical/Planner.ts"
import {
  agg,
  aggregate,
  alias,
  attr,
  bin,
  countOne,
  desc,
  filter,
  join,
  limit,
  lit,
  local,
  project,
  sort
} from "./fixtures.ts"

describe("treeString (Spark's explain format)", () => {
  it("aggregate over a filter over a scan", () => {
    const k = attr("k", T.StringType)
    const v = attr("v", T.LongType)
    const c = alias(countOne(), "count")
    const s = alias(agg("sum", [v], T.LongType), "sum(v)")
    const p = plan(aggregate([k], [k, c, s], filter(bin(">", v, lit(1, T.LongType)), local([k, v], [["a", 2]]))))
    expect(treeString(p)).toBe(
      [
        `HashAggregate(keys=[k#${k.exprId}], functions=[count(1), sum(v#${v.exprId}L)])`,
        `+- Filter (v#${v.exprId}L > 1)`,
        `   +- LocalTableScan [k#${k.exprId}, v#${v.exprId}L]`
      ].join("\n")
    )
  })

  it("a join under a project, with Spark's `:-` / `:  ` indentation", () => {
    const id = attr("id")
    const lv = attr("lv", T.StringType)
    const rid = attr("id")
    const rv = attr("rv", T.LongType)
    const notNull = { _tag: "UnaryExpression", op: "isNotNull", child: id } as const
    const left = filter(notNull, local([id, lv], [[1, "a"]]))
    const right = local([rid, rv], [])
    const c = alias(bin("+", rv, lit(1, T.LongType)), "c")
    const p = plan(project([id, c], join(left, right, "left_outer", bin("=", id, rid))))
    expect(treeString(p)).toBe(
      [
        `Project [id#${id.exprId}, (rv#${rv.exprId}L + 1) AS c#${c.exprId}L]`,
        `+- BroadcastHashJoin [id#${id.exprId}], [id#${rid.exprId}], LeftOuter, BuildRight, false`,
        `   :- Filter isnotnull(id#${id.exprId})`,
        `   :  +- LocalTableScan [id#${id.exprId}, lv#${lv.exprId}]`,
        `   +- LocalTableScan <empty>, [id#${rid.exprId}, rv#${rv.exprId}L]`
      ].join("\n")
    )
  })

  it("top-k, collect limit, sort, nested loop join and union", () => {
    const a = attr("a")
    const b = attr("b", T.StringType)
    const rel = local([a, b], [[1, "x"]])
    expect(treeString(plan(limit(3, sort([desc(a)], rel))))).toBe(
      [
        `TakeOrderedAndProject(limit=3, orderBy=[a#${a.exprId} DESC NULLS LAST], output=[a#${a.exprId},b#${b.exprId}])`,
        `+- LocalTableScan [a#${a.exprId}, b#${b.exprId}]`
      ].join("\n")
    )
    expect(treeString(plan(limit(5, rel)))).toBe(`CollectLimit 5\n+- LocalTableScan [a#${a.exprId}, b#${b.exprId}]`)
    expect(treeString(plan(sort([desc(a)], rel))).split("\n")[0]).toBe(`Sort [a#${a.exprId} DESC NULLS LAST], true, 0`)
    const x = attr("x")
    const cross = plan(join(rel, local([x], []), "inner", bin("<", a, x)))
    expect(treeString(cross).split("\n")[0]).toBe(
      `BroadcastNestedLoopJoin BuildRight, Inner, (a#${a.exprId} < x#${x.exprId})`
    )
    const u: L.Union = {
      _tag: "Union",
      planId: L.newPlanId(),
      children: [local([a], []), local([x], [])],
      byName: false,
      allowMissingColumns: false
    }
    expect(treeString(plan(u))).toBe(
      [`Union`, `:- LocalTableScan <empty>, [a#${a.exprId}]`, `+- LocalTableScan <empty>, [x#${x.exprId}]`].join("\n")
    )
  })

  it("typed filter, map, generate and watermark", () => {
    const ts = attr("ts", T.TimestampType)
    const arr = attr("arr", T.array(T.IntegerType))
    const col = attr("col")
    const rel = local([ts, arr], [])
    const wm: L.EventTimeWatermark = {
      _tag: "EventTimeWatermark",
      planId: L.newPlanId(),
      eventTime: ts,
      delayMs: 90_000,
      child: rel
    }
    const tf: L.TypedFilter = { _tag: "TypedFilter", planId: L.newPlanId(), predicate: () => true, child: wm }
    const g: L.Generate = {
      _tag: "Generate",
      planId: L.newPlanId(),
      generator: { _tag: "Explode", child: arr, outer: true, position: false },
      generatorOutput: [col],
      child: tf
    }
    const value = attr("value", T.LongType)
    const m: L.MapElements = {
      _tag: "MapElements",
      planId: L.newPlanId(),
      fn: (r) => r,
      flat: false,
      schema: T.struct([T.field("value", T.LongType)]),
      wrapValue: true,
      output: [value],
      child: g
    }
    expect(treeString(plan(m))).toBe(
      [
        `MapElements <function>, [value#${value.exprId}L]`,
        `+- Generate explode(arr#${arr.exprId}), [ts#${ts.exprId}, arr#${arr.exprId}], true, [col#${col.exprId}]`,
        `   +- Filter <function>`,
        `      +- EventTimeWatermark ts#${ts.exprId}: timestamp, 1 minutes 30 seconds`,
        `         +- LocalTableScan <empty>, [ts#${ts.exprId}, arr#${arr.exprId}]`
      ].join("\n")
    )
  })

  it("expressions print as Spark's Expression.toString", () => {
    const a = attr("a")
    const s = attr("s", T.StringType)
    expect(expressionString(bin("and", bin("!=", a, lit(1)), bin("=", s, lit("x", T.StringType))))).toBe(
      `(NOT (a#${a.exprId} = 1) AND (s#${s.exprId} = x))`
    )
    expect(expressionString({ _tag: "Cast", child: a, to: T.LongType })).toBe(`cast(a#${a.exprId} as bigint)`)
    expect(expressionString(agg("count", [a], T.LongType, true))).toBe(`count(distinct a#${a.exprId})`)
    expect(expressionString(lit(1.5, T.DoubleType))).toBe("1.5")
    expect(expressionString(lit(null, T.StringType))).toBe("null")
  })
})
