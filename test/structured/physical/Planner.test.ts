import { describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import * as E from "../../../core/Expression.ts"
import * as L from "../../../core/LogicalPlan.ts"
import { output as outputOf } from "../../../core/analysis/PlanOutput.ts"
import { plan, sameExpression } from "../../../structured/physical/Planner.ts"
import * as P from "../../../structured/physical/SparkPlan.ts"
import {
  agg,
  aggregate,
  alias,
  asc,
  attr,
  bin,
  countOne,
  filter,
  join,
  limit,
  lit,
  local,
  project,
  sort
} from "./fixtures.ts"

describe("Planner", () => {
  const id = attr("id")
  const lv = attr("lv", T.StringType)
  const rid = attr("id")
  const rv = attr("rv", T.StringType)
  const left = local([id, lv], [])
  const right = local([rid, rv], [])

  it("extracts equi-keys and keeps the rest of the condition", () => {
    const rest = bin(">", lv, rv)
    const p = plan(join(left, right, "inner", bin("and", bin("=", id, rid), bin("and", rest, bin("<=>", rv, lv)))))
    expect(p._tag).toBe("BroadcastHashJoinExec")
    if (p._tag !== "BroadcastHashJoinExec") return
    expect(p.leftKeys).toEqual([id, lv])
    expect(p.rightKeys).toEqual([rid, rv])
    expect(p.nullSafe).toEqual([false, true])
    expect(p.condition).toBe(rest)
    expect(p.buildSide).toBe("BuildRight")
  })

  it("a comparison with a literal on one side is not an equi-key", () => {
    const p = plan(join(left, right, "inner", bin("and", bin("=", id, lit(1)), bin("=", rid, lit(1)))))
    expect(p._tag).toBe("BroadcastNestedLoopJoinExec")
  })

  it("picks the join operator and build side by join type", () => {
    const eq = bin("=", id, rid)
    expect(plan(join(left, right, "full_outer", eq))._tag).toBe("ShuffledHashJoinExec")
    const r = plan(join(left, right, "right_outer", eq)) as P.HashJoinExec
    expect(r.buildSide).toBe("BuildLeft")
    expect(plan(join(left, right, "cross", undefined))._tag).toBe("BroadcastNestedLoopJoinExec")
  })

  it("outer joins make the padded side nullable; semi and anti output the left side", () => {
    const nonNullLeft = E.attribute("x", T.IntegerType, false)
    const nonNullRight = E.attribute("y", T.IntegerType, false)
    const l = local([nonNullLeft], [])
    const r = local([nonNullRight], [])
    const nullability = (t: L.JoinType) => plan(join(l, r, t, undefined)).output.map((a) => a.nullable)
    expect(nullability("inner")).toEqual([false, false])
    expect(nullability("left_outer")).toEqual([false, true])
    expect(nullability("right_outer")).toEqual([true, false])
    expect(nullability("full_outer")).toEqual([true, true])
    expect(plan(join(l, r, "left_semi", undefined)).output).toEqual([nonNullLeft])
    expect(plan(join(l, r, "left_anti", undefined)).output).toEqual([nonNullLeft])
  })

  it("plans an aggregate in two steps: grouping slots and distinct aggregate calls", () => {
    const k = attr("k", T.StringType)
    const v = attr("v")
    const sum = agg("sum", [v], T.LongType)
    const c = alias(countOne(), "count")
    const s1 = alias(bin("+", sum, lit(1, T.LongType)), "s1")
    const s2 = alias(agg("sum", [v], T.LongType), "s2")
    const p = plan(aggregate([k], [k, c, s1, s2], local([k, v], [])))
    expect(p._tag).toBe("HashAggregateExec")
    if (p._tag !== "HashAggregateExec") return
    expect(p.aggregateFunctions.length).toBe(2)
    expect(p.groupingAttributes).toEqual([k])
    expect(p.output.map((a) => [a.name, a.exprId, a.dataType._tag])).toEqual([
      ["k", k.exprId, "string"],
      ["count", c.exprId, "long"],
      ["s1", s1.exprId, "long"],
      ["s2", s2.exprId, "long"]
    ])
    // Result expressions read only the intermediate row.
    const slots = new Set([...p.groupingAttributes, ...p.aggregateAttributes].map((a) => a.exprId))
    for (const e of p.resultExpressions) {
      expect(E.exists(e, (x) => x._tag === "AggregateFunction")).toBe(false)
      for (const r of E.references(e)) expect(slots.has(r.exprId)).toBe(true)
    }
  })

  it("plans Distinct as a HashAggregate keyed by every column", () => {
    const a = attr("a")
    const p = plan({ _tag: "Distinct", planId: L.newPlanId(), child: local([a], []) })
    expect(p._tag).toBe("HashAggregateExec")
    if (p._tag !== "HashAggregateExec") return
    expect(p.groupingExpressions).toEqual([a])
    expect(p.aggregateFunctions).toEqual([])
    expect(p.output).toEqual([a])
  })

  it("a session window among the grouping keys is recorded", () => {
    const k = attr("k", T.StringType)
    const ts = attr("ts", T.TimestampType)
    const sw = alias({ _tag: "SessionWindow", timeColumn: ts, gap: lit(1000) }, "session_window")
    const p = plan(aggregate([k, sw], [k, sw, alias(countOne(), "count")], local([k, ts], [])))
    if (p._tag !== "HashAggregateExec") throw new Error(p._tag)
    expect(p.sessionWindow?.index).toBe(1)
    expect(p.output[1].dataType).toEqual(T.WindowType)
  })

  it("Limit: CollectLimit at the root, GlobalLimit inside; top-k through a Project", () => {
    const a = attr("a")
    const rel = local([a], [])
    expect(plan(limit(1, rel))).toMatchObject({ _tag: "LimitExec", kind: "CollectLimit", n: 1 })
    expect(plan(project([a], limit(1, rel)))).toMatchObject({
      _tag: "ProjectExec",
      child: { _tag: "LimitExec", kind: "GlobalLimit" }
    })
    const c = alias(bin("+", a, lit(1)), "c")
    const top = plan(limit(2, project([c], sort([asc(a)], rel))))
    expect(top._tag).toBe("TakeOrderedAndProjectExec")
    expect(top.output.map((x) => x.exprId)).toEqual([c.exprId])
  })

  it("SubqueryAlias disappears; EventTimeWatermark marks its event-time column", () => {
    const ts = attr("ts", T.TimestampType)
    const rel = local([ts], [])
    const wm: L.EventTimeWatermark = {
      _tag: "EventTimeWatermark",
      planId: L.newPlanId(),
      eventTime: ts,
      delayMs: 5000,
      child: rel
    }
    const p = plan({ _tag: "SubqueryAlias", planId: L.newPlanId(), alias: "t", child: wm })
    expect(p._tag).toBe("EventTimeWatermarkExec")
    expect(p.output[0].eventTimeDelayMs).toBe(5000)
    expect(outputOf(wm)[0].exprId).toBe(ts.exprId)
  })

  it("Filter, Project and Generate outputs", () => {
    const a = attr("a")
    const arr = attr("arr", T.array(T.IntegerType))
    const col = attr("col")
    const g: L.Generate = {
      _tag: "Generate",
      planId: L.newPlanId(),
      generator: { _tag: "Explode", child: arr, outer: false, position: false },
      generatorOutput: [col],
      child: filter(bin(">", a, lit(0)), local([a, arr], []))
    }
    expect(plan(g).output).toEqual([a, arr, col])
  })

  it("sameExpression compares attributes by id and everything else by shape", () => {
    const a = attr("a")
    const a2 = attr("a")
    expect(sameExpression(bin("+", a, lit(1)), bin("+", a, lit(1)))).toBe(true)
    expect(sameExpression(bin("+", a, lit(1)), bin("+", a2, lit(1)))).toBe(false)
    expect(sameExpression(bin("+", a, lit(1)), bin("-", a, lit(1)))).toBe(false)
    expect(sameExpression(lit(1, T.IntegerType), lit(1, T.LongType))).toBe(false)
  })

  it("transformUp rebuilds only what changed", () => {
    const a = attr("a")
    const p = plan(filter(bin(">", a, lit(0)), local([a], [[1]])))
    expect(P.transformUp(p, (x) => x)).toBe(p)
    const swapped = P.transformUp(p, (x) => (x._tag === "LocalTableScanExec" ? { ...x, rows: [[2]] } : x))
    expect(swapped).not.toBe(p)
    expect(P.children(swapped)[0]).toMatchObject({ rows: [[2]] })
  })
})
