import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { analyze } from "../../../core/analysis/Analyzer.ts"
import { output } from "../../../core/analysis/PlanOutput.ts"
import { emptyCatalog } from "../../../core/Catalog.ts"
import { type Column, col, lit } from "../../../core/Column.ts"
import * as T from "../../../core/DataType.ts"
import type * as E from "../../../core/Expression.ts"
import * as F from "../../../core/F.ts"
import { register } from "../../../core/functions/mod.ts"
import * as P from "../../../core/LogicalPlan.ts"
import { isFoldable, optimize, rules } from "../../../core/optimizer/Optimizer.ts"
import { treeString } from "../../../core/PlanString.ts"

// A non-deterministic function for the tests (tributary's registry has none yet)
register({
  name: "test_rand",
  deterministic: false,
  resolve: () => ({ _tag: "Resolved", resultType: T.DoubleType, nullable: false, castArgsTo: [] }),
  compile: () => () => Math.random()
})

const attr = (name: string, t: T.DataType, id: number, nullable = true): E.AttributeReference => ({
  _tag: "AttributeReference",
  name,
  dataType: t,
  nullable,
  exprId: id,
  qualifier: []
})

const rel = (planId: number, attrs: ReadonlyArray<E.AttributeReference>, isStreaming = false): P.LocalRelation => ({
  _tag: "LocalRelation",
  planId,
  output: attrs,
  rows: [[1]],
  isStreaming
})

const t = rel(900100, [
  attr("a", T.IntegerType, 900001),
  attr("b", T.LongType, 900002),
  attr("s", T.StringType, 900003),
  attr("ts", T.TimestampType, 900004),
  attr("arr", T.array(T.IntegerType), 900005)
])
const T_OUT = "[a#900001, b#900002L, s#900003, ts#900004, arr#900005]"
const u = rel(900101, [attr("k", T.IntegerType, 900021), attr("v", T.StringType, 900022)])

const norm = (s: string): string => {
  const m = new Map<string, string>()
  return s.replace(/#(\d+)/g, (all, id: string) => {
    if (Number(id) >= 900000) return all
    if (!m.has(id)) m.set(id, `g${m.size + 1}`)
    return `#${m.get(id)}`
  })
}

const analyzed = (p: P.LogicalPlan): P.LogicalPlan => {
  const r = analyze(p, emptyCatalog, { caseSensitive: false })
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

const rule = (name: string) => {
  const r = rules.find((x) => x.name === name)
  if (r === undefined) throw new Error(`no rule ${name}`)
  return r
}

/** before and after of one rule (or of `optimize`), generated ids numbered together */
const beforeAfter = (p: P.LogicalPlan, apply: (p: P.LogicalPlan) => P.LogicalPlan): [string, string] => {
  const a = analyzed(p)
  const both = norm(`${treeString(a, "analyzed")}=>\n${treeString(apply(a), "optimized")}`)
  const [before, after] = both.split("=>\n")
  return [before, after]
}

const lines = (...ls: ReadonlyArray<string>): string => `${ls.join("\n")}\n`

const project = (cols: ReadonlyArray<Column<unknown, string>>, child: P.LogicalPlan, planId = 900200): P.Project => ({
  _tag: "Project",
  planId,
  projectList: cols.map((c) => c.expr),
  child
})
const where = (c: Column<unknown, string>, child: P.LogicalPlan, planId = 900201): P.Filter => ({
  _tag: "Filter",
  planId,
  condition: c.expr,
  child
})
const aggregate = (
  groups: ReadonlyArray<Column<unknown, string>>,
  aggs: ReadonlyArray<Column<unknown, string>>,
  child: P.LogicalPlan
): P.Aggregate => ({
  _tag: "Aggregate",
  planId: 900300,
  groupingExpressions: groups.map((c) => c.expr),
  aggregateExpressions: aggs.map((c) => c.expr),
  child
})
const join = (
  left: P.LogicalPlan,
  right: P.LogicalPlan,
  joinType: P.JoinType,
  condition?: Column<unknown, string>
): P.Join => ({
  _tag: "Join",
  planId: 900400,
  left,
  right,
  joinType,
  condition: condition?.expr,
  usingColumns: undefined
})
const watermark = (child: P.LogicalPlan): P.EventTimeWatermark => ({
  _tag: "EventTimeWatermark",
  planId: 900500,
  eventTime: col("ts").expr,
  delayMs: 10_000,
  child
})

describe("CombineFilters", () => {
  it("merges adjacent filters, inner condition first, dropping repeated conjuncts", () => {
    const [before, after] = beforeAfter(
      where(col("a").gt(1), where(col("s").eq("x").and(col("a").gt(1)), t, 900202)),
      rule("CombineFilters").apply
    )
    expect(before).toBe(
      lines("Filter (a#900001 > 1)", "+- Filter ((s#900003 = x) AND (a#900001 > 1))", `   +- LocalRelation ${T_OUT}`)
    )
    expect(after).toBe(lines("Filter ((s#900003 = x) AND (a#900001 > 1))", `+- LocalRelation ${T_OUT}`))
    const [, combined] = beforeAfter(
      where(col("a").gt(1), where(col("b").lt(3), t, 900202)),
      rule("CombineFilters").apply
    )
    expect(combined).toBe(
      lines("Filter ((b#900002L < cast(3 as bigint)) AND (a#900001 > 1))", `+- LocalRelation ${T_OUT}`)
    )
  })

  it("keeps non-deterministic filters apart", () => {
    const p = analyzed(where(F.callByName("test_rand", []).gt(0.5), where(col("a").gt(1), t, 900202)))
    expect(rule("CombineFilters").apply(p)).toBe(p)
  })
})

describe("PushDownPredicates", () => {
  const push = rule("PushDownPredicates").apply

  it("pushes a filter through a projection, substituting aliases", () => {
    const [before, after] = beforeAfter(where(col("x").gt(1), project([col("a").plus(1).as("x"), col("s")], t)), push)
    expect(before).toBe(
      lines("Filter (x#g1 > 1)", "+- Project [(a#900001 + 1) AS x#g1, s#900003]", `   +- LocalRelation ${T_OUT}`)
    )
    expect(after).toBe(
      lines(
        "Project [(a#900001 + 1) AS x#g1, s#900003]",
        "+- Filter ((a#900001 + 1) > 1)",
        `   +- LocalRelation ${T_OUT}`
      )
    )
  })

  it("does not push a non-deterministic filter or through a non-deterministic projection", () => {
    const p1 = analyzed(where(F.callByName("test_rand", []).gt(0.5), project([col("a")], t)))
    expect(push(p1)).toBe(p1)
    const p2 = analyzed(where(col("r").gt(0.5), project([F.callByName("test_rand", []).as("r")], t)))
    expect(push(p2)).toBe(p2)
  })

  it("pushes predicates on grouping columns below an aggregate, keeping those on aggregates", () => {
    const p = where(col("s").eq("x").and(col("sum(a)").gt(1)), aggregate([col("s")], [col("s"), F.sum("a")], t))
    const [before, after] = beforeAfter(p, push)
    expect(before).toBe(
      lines(
        "Filter ((s#900003 = x) AND (sum(a)#g1L > cast(1 as bigint)))",
        "+- Aggregate [s#900003], [s#900003, sum(a#900001) AS sum(a)#g1L]",
        `   +- LocalRelation ${T_OUT}`
      )
    )
    expect(after).toBe(
      lines(
        "Filter (sum(a)#g1L > cast(1 as bigint))",
        "+- Aggregate [s#900003], [s#900003, sum(a#900001) AS sum(a)#g1L]",
        "   +- Filter (s#900003 = x)",
        `      +- LocalRelation ${T_OUT}`
      )
    )
  })

  it("keeps a predicate on a session window above the aggregation", () => {
    const p = analyzed(
      where(
        col("session_window")
          .getField("start")
          .gt(lit(new Date(0)))
          .and(col("s").eq("x")),
        aggregate(
          [F.session_window("ts", "5 minutes"), col("s")],
          [F.session_window("ts", "5 minutes"), col("s"), F.count("*")],
          t
        )
      )
    )
    expect(norm(treeString(push(p), "optimized"))).toBe(
      lines(
        "Filter (session_window#g1.start > 1970-01-01 00:00:00)",
        "+- Aggregate [session_window(ts#900004, 5 minutes), s#900003], [session_window(ts#900004, 5 minutes) AS session_window#g1, s#900003, count(1) AS count(1)#g2L]",
        "   +- Filter (s#900003 = x)",
        `      +- LocalRelation ${T_OUT}`
      )
    )
  })

  it("never pushes below a global aggregate", () => {
    const p = analyzed(where(col("n").gt(1), aggregate([], [F.count("*").as("n")], t)))
    expect(push(p)).toBe(p)
  })

  it("pushes into every child of a union, mapping columns by position", () => {
    const p = where(col("a").gt(1), {
      _tag: "Union",
      planId: 900600,
      children: [project([col("a"), col("s")], t), u],
      byName: false,
      allowMissingColumns: false
    })
    const [, after] = beforeAfter(p, push)
    expect(after).toBe(
      lines(
        "Union false, false",
        ":- Project [a#900001, s#900003]",
        ":  +- Filter (a#900001 > 1)",
        `:     +- LocalRelation ${T_OUT}`,
        "+- Filter (k#900021 > 1)",
        "   +- LocalRelation [k#900021, v#900022]"
      )
    )
  })

  it("pushes into both sides of an inner join and moves the rest into the join condition", () => {
    const p = where(
      col("a")
        .gt(1)
        .and(col("v").eq("x"))
        .and(col("a").eq(col("k"))),
      join(t, u, "inner")
    )
    const [before, after] = beforeAfter(p, push)
    expect(before).toBe(
      lines(
        "Filter (((a#900001 > 1) AND (v#900022 = x)) AND (a#900001 = k#900021))",
        "+- Join Inner",
        `   :- LocalRelation ${T_OUT}`,
        "   +- LocalRelation [k#900021, v#900022]"
      )
    )
    expect(after).toBe(
      lines(
        "Join Inner, (a#900001 = k#900021)",
        ":- Filter (a#900001 > 1)",
        `:  +- LocalRelation ${T_OUT}`,
        "+- Filter (v#900022 = x)",
        "   +- LocalRelation [k#900021, v#900022]"
      )
    )
  })

  it("pushes one-sided conjuncts of an inner join condition into the sides", () => {
    const [, after] = beforeAfter(join(t, u, "inner", col("a").eq(col("k")).and(col("v").eq("x"))), push)
    expect(after).toBe(
      lines(
        "Join Inner, (a#900001 = k#900021)",
        `:- LocalRelation ${T_OUT}`,
        "+- Filter (v#900022 = x)",
        "   +- LocalRelation [k#900021, v#900022]"
      )
    )
  })

  it("for a left outer join pushes only left-side predicates of a filter above it", () => {
    const p = where(col("a").gt(1).and(col("v").eq("x")), join(t, u, "left_outer", col("a").eq(col("k"))))
    const [, after] = beforeAfter(p, push)
    expect(after).toBe(
      lines(
        "Filter (v#900022 = x)",
        "+- Join LeftOuter, (a#900001 = k#900021)",
        "   :- Filter (a#900001 > 1)",
        `   :  +- LocalRelation ${T_OUT}`,
        "   +- LocalRelation [k#900021, v#900022]"
      )
    )
  })

  it("never moves a predicate on the event-time column below the watermark", () => {
    const p = where(
      col("ts")
        .gt(lit(new Date(0)))
        .and(col("a").gt(1)),
      watermark(t)
    )
    const [before, after] = beforeAfter(p, push)
    expect(before).toBe(
      lines(
        "Filter ((ts#900004-T10000ms > 1970-01-01 00:00:00) AND (a#900001 > 1))",
        "+- EventTimeWatermark ts#900004: timestamp, 10 seconds",
        `   +- LocalRelation ${T_OUT}`
      )
    )
    expect(after).toBe(
      lines(
        "Filter (ts#900004-T10000ms > 1970-01-01 00:00:00)",
        "+- EventTimeWatermark ts#900004: timestamp, 10 seconds",
        "   +- Filter (a#900001 > 1)",
        `      +- LocalRelation ${T_OUT}`
      )
    )
    const only = analyzed(where(col("ts").gt(lit(new Date(0))), watermark(t)))
    expect(push(only)).toBe(only)
  })

  it("pushes below a generator only what does not read its output", () => {
    const p = where(col("a").gt(1).and(col("col").gt(2)), project([col("a"), F.explode("arr")], t))
    const [, after] = beforeAfter(p, push)
    expect(after).toBe(
      lines(
        "Project [a#900001, col#g1]",
        "+- Filter (col#g1 > 2)",
        "   +- Generate explode(arr#900005), false, [col#g1]",
        "      +- Filter (a#900001 > 1)",
        `         +- LocalRelation ${T_OUT}`
      )
    )
  })

  it("never crosses a typed filter, a map, a limit or a deduplication", () => {
    const tf: P.TypedFilter = { _tag: "TypedFilter", planId: 900700, predicate: () => true, child: t }
    const lim: P.Limit = { _tag: "Limit", planId: 900701, n: 5, child: t }
    const dd: P.Deduplicate = {
      _tag: "Deduplicate",
      planId: 900702,
      columnNames: ["s"],
      keys: undefined,
      withinWatermark: false,
      child: t
    }
    for (const child of [tf, lim, dd]) {
      const p = analyzed(where(col("a").gt(1), child))
      expect(push(p)).toBe(p)
    }
  })
})

describe("CollapseProject", () => {
  const collapse = rule("CollapseProject").apply

  it("merges adjacent projections", () => {
    const p = project([col("x").plus(1), col("s")], project([col("a").plus(1).as("x"), col("s"), col("b")], t, 900203))
    const [before, after] = beforeAfter(p, collapse)
    expect(before).toBe(
      lines(
        "Project [(x#g1 + 1) AS (x + 1)#g2, s#900003]",
        "+- Project [(a#900001 + 1) AS x#g1, s#900003, b#900002L]",
        `   +- LocalRelation ${T_OUT}`
      )
    )
    expect(after).toBe(lines("Project [((a#900001 + 1) + 1) AS (x + 1)#g2, s#900003]", `+- LocalRelation ${T_OUT}`))
  })

  it("keeps an alias referenced as a column, with the upper name", () => {
    const [, after] = beforeAfter(project([col("X")], project([col("a").plus(1).as("x")], t, 900203)), collapse)
    expect(after).toBe(lines("Project [(a#900001 + 1) AS X#g1]", `+- LocalRelation ${T_OUT}`))
  })

  it("does not duplicate a non-cheap expression", () => {
    const p = analyzed(project([col("x").plus(col("x"))], project([col("a").plus(1).as("x")], t, 900203)))
    expect(collapse(p)).toBe(p)
  })

  it("folds a renaming projection into the aggregate below it", () => {
    const [, after] = beforeAfter(
      project([col("s").as("k"), col("sum(a)")], aggregate([col("s")], [col("s"), F.sum("a")], t)),
      collapse
    )
    expect(after).toBe(
      lines("Aggregate [s#900003], [s#900003 AS k#g1, sum(a#900001) AS sum(a)#g2L]", `+- LocalRelation ${T_OUT}`)
    )
  })
})

describe("ColumnPruning", () => {
  const prune = rule("ColumnPruning").apply

  it("drops unused aggregates and projects the aggregate's input", () => {
    const [, after] = beforeAfter(project([col("s")], aggregate([col("s")], [col("s"), F.sum("a")], t)), prune)
    expect(after).toBe(
      lines(
        "Project [s#900003]",
        "+- Aggregate [s#900003], [s#900003]",
        "   +- Project [s#900003]",
        `      +- LocalRelation ${T_OUT}`
      )
    )
  })

  it("projects both sides of a join to the needed columns", () => {
    const [, after] = beforeAfter(project([col("s")], join(t, u, "inner", col("a").eq(col("k")))), prune)
    expect(after).toBe(
      lines(
        "Project [s#900003]",
        "+- Join Inner, (a#900001 = k#900021)",
        "   :- Project [a#900001, s#900003]",
        `   :  +- LocalRelation ${T_OUT}`,
        "   +- Project [k#900021]",
        "      +- LocalRelation [k#900021, v#900022]"
      )
    )
  })

  it("drops unused items of a lower projection", () => {
    const [, after] = beforeAfter(project([col("x")], project([col("a").plus(1).as("x"), col("s")], t, 900203)), prune)
    expect(after).toBe(lines("Project [x#g1]", "+- Project [(a#900001 + 1) AS x#g1]", `   +- LocalRelation ${T_OUT}`))
  })

  it("keeps every column below a typed filter", () => {
    const tf: P.TypedFilter = { _tag: "TypedFilter", planId: 900700, predicate: () => true, child: t }
    const p = analyzed(project([col("a")], tf))
    expect(prune(p)).toBe(p)
  })
})

describe("ConstantFolding", () => {
  const fold = rule("ConstantFolding").apply

  it("evaluates expressions of literals, but not current_timestamp()", () => {
    const [, after] = beforeAfter(
      project(
        [
          lit(1).plus(2),
          col("a").plus(lit(2).multiply(3)),
          F.current_timestamp(),
          col("s").cast("int").plus(lit("4").cast("int"))
        ],
        t
      ),
      fold
    )
    expect(after).toBe(
      lines(
        "Project [3 AS (1 + 2)#g1, (a#900001 + 6) AS (a + (2 * 3))#g2, current_timestamp() AS current_timestamp()#g3, (cast(s#900003 as int) + 4) AS (CAST(s AS INT) + CAST(4 AS INT))#g4]",
        `+- LocalRelation ${T_OUT}`
      )
    )
    expect(isFoldable(F.current_timestamp().expr)).toBe(false)
  })

  it("folds null arithmetic to a typed null", () => {
    const p = fold(analyzed(project([lit(null).plus(1)], t)))
    const item = (p as P.Project).projectList[0]
    expect(item._tag === "Alias" && item.child).toEqual({ _tag: "Literal", value: null, dataType: T.IntegerType })
  })
})

describe("BooleanSimplification", () => {
  const simplify = rule("BooleanSimplification").apply

  it("removes neutral literals and repeated operands", () => {
    const [, after] = beforeAfter(
      where(
        lit(true)
          .and(col("a").gt(1))
          .and(col("a").gt(1).or(lit(false))),
        t
      ),
      simplify
    )
    expect(after).toBe(lines("Filter (a#900001 > 1)", `+- LocalRelation ${T_OUT}`))
    const [, f] = beforeAfter(
      where(
        lit(false)
          .and(col("a").gt(1))
          .or(col("s").isNull().and(col("s").isNull())),
        t
      ),
      simplify
    )
    expect(f).toBe(lines("Filter isnull(s#900003)", `+- LocalRelation ${T_OUT}`))
    const [, tr] = beforeAfter(where(col("a").gt(1).or(lit(true)), t), simplify)
    expect(tr).toBe(lines("Filter true", `+- LocalRelation ${T_OUT}`))
  })

  it("pushes NOT inwards", () => {
    const [, after] = beforeAfter(
      where(col("a").gt(1).or(col("s").isNull()).not().and(col("a").leq(2).not().not()), t),
      simplify
    )
    expect(after).toBe(
      lines("Filter (((a#900001 <= 1) AND isnotnull(s#900003)) AND (a#900001 <= 2))", `+- LocalRelation ${T_OUT}`)
    )
  })
})

describe("PruneFilters", () => {
  const pruneF = rule("PruneFilters").apply

  it("removes an always-true filter and empties an always-false one", () => {
    expect(pruneF(analyzed(where(lit(true), t)))).toBe(t)
    const empty = pruneF(analyzed(where(lit(false), t)))
    expect(treeString(empty, "optimized")).toBe(lines(`LocalRelation <empty>, ${T_OUT}`))
    const nul: P.Filter = {
      _tag: "Filter",
      planId: 900210,
      condition: { _tag: "Literal", value: null, dataType: T.BooleanType },
      child: t
    }
    expect(treeString(pruneF(nul), "optimized")).toBe(lines(`LocalRelation <empty>, ${T_OUT}`))
  })

  it("keeps the plan streaming", () => {
    const s = rel(900110, [attr("n", T.LongType, 900081)], true)
    const p = pruneF(analyzed(where(lit(false), s)))
    expect(p._tag === "LocalRelation" && p.isStreaming).toBe(true)
    expect(output(p).map((a) => a.exprId)).toEqual([900081])
  })
})

describe("RemoveNoopOperators, SimplifyCasts, EliminateSubqueryAliases", () => {
  it("removes a projection of exactly the child's columns", () => {
    const noop = rule("RemoveNoopOperators").apply
    expect(noop(analyzed(project([col("a"), col("b"), col("s"), col("ts"), col("arr")], t)))).toBe(t)
    const renaming = analyzed(project([col("A"), col("b"), col("s"), col("ts"), col("arr")], t))
    expect(noop(renaming)).toBe(renaming)
    const [, moved] = beforeAfter(project([col("X")], project([col("a").plus(1).as("x")], t, 900203)), noop)
    expect(moved).toBe(lines("Project [(a#900001 + 1) AS X#g1]", `+- LocalRelation ${T_OUT}`))
  })

  it("drops casts to the type a value already has", () => {
    const c: P.Project = {
      _tag: "Project",
      planId: 900220,
      projectList: [
        { _tag: "Alias", child: { _tag: "Cast", child: t.output[0], to: T.IntegerType }, name: "c", exprId: 900999 }
      ],
      child: t
    }
    expect(treeString(rule("SimplifyCasts").apply(c), "optimized").split("\n")[0]).toBe(
      "Project [a#900001 AS c#900999]"
    )
  })

  it("removes subquery aliases", () => {
    const sa: P.SubqueryAlias = { _tag: "SubqueryAlias", planId: 900230, alias: "x", child: t }
    expect(rule("EliminateSubqueryAliases").apply(analyzed(project([col("x.a")], sa)))).toMatchObject({
      _tag: "Project",
      child: t
    })
  })
})

describe("optimize", () => {
  it("runs the rules to a fixed point", () => {
    const p = where(
      col("s")
        .eq("x")
        .and(col("n").gt(lit(1).plus(1))),
      aggregate(
        [col("s")],
        [col("s"), F.count("*").as("n")],
        where(lit(true).and(col("a").gt(0)), project([col("a"), col("s"), col("b")], t, 900203))
      )
    )
    const [before, after] = beforeAfter(p, optimize)
    expect(before).toBe(
      lines(
        "Filter ((s#900003 = x) AND (n#g1L > cast((1 + 1) as bigint)))",
        "+- Aggregate [s#900003], [s#900003, count(1) AS n#g1L]",
        "   +- Filter (true AND (a#900001 > 0))",
        "      +- Project [a#900001, s#900003, b#900002L]",
        `         +- LocalRelation ${T_OUT}`
      )
    )
    expect(after).toBe(
      lines(
        "Filter (n#g1L > 2)",
        "+- Aggregate [s#900003], [s#900003, count(1) AS n#g1L]",
        "   +- Project [s#900003]",
        "      +- Filter ((a#900001 > 0) AND (s#900003 = x))",
        `         +- LocalRelation ${T_OUT}`
      )
    )
    const once = optimize(analyzed(p))
    expect(optimize(once)).toBe(once)
  })

  it("keeps the output attributes of a windowed streaming aggregation", () => {
    const s = rel(
      900120,
      [attr("ts", T.TimestampType, 900004), attr("w", T.StringType, 900091), attr("x", T.LongType, 900092)],
      true
    )
    const a = analyzed(
      aggregate(
        [F.window("ts", "10 seconds"), col("w")],
        [F.window("ts", "10 seconds"), col("w"), F.count("*")],
        watermark(s)
      )
    )
    const o = optimize(a)
    expect(output(o)).toEqual(output(a))
    expect(P.isStreaming(o)).toBe(true)
    expect(norm(treeString(o, "optimized"))).toBe(
      lines(
        "Aggregate [window#g1-T10000ms, w#900091], [window#g1-T10000ms AS window#g2-T10000ms, w#900091, count(1) AS count(1)#g3L]",
        "+- Project [w#900091, window#g1-T10000ms]",
        "   +- Generate window(ts#900004-T10000ms, 10000000, 10000000, 0), false, [window#g1-T10000ms]",
        "      +- EventTimeWatermark ts#900004: timestamp, 10 seconds",
        "         +- Project [ts#900004, w#900091]",
        "            +- LocalRelation [ts#900004, w#900091, x#900092L]"
      )
    )
  })

  it("lists the rules by Spark's names", () => {
    expect(rules.map((r) => r.name)).toEqual([
      "EliminateSubqueryAliases",
      "EliminateEventTimeWatermark",
      "CombineFilters",
      "PushDownPredicates",
      "ColumnPruning",
      "CollapseProject",
      "ConstantFolding",
      "BooleanSimplification",
      "SimplifyCasts",
      "PruneFilters",
      "RemoveNoopOperators"
    ])
  })
})
