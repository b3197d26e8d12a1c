import { Cause, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import { ConnectorError } from "../../../core/Errors.ts"
import * as E from "../../../core/Expression.ts"
import * as L from "../../../core/LogicalPlan.ts"
import { register } from "../../../core/functions/Registry.ts"
import type { InternalRow } from "../../../core/Row.ts"
import { execute } from "../../../structured/physical/Execute.ts"
import { plan } from "../../../structured/physical/Planner.ts"
import {
  agg,
  aggregate,
  alias,
  asc,
  attr,
  bin,
  countOne,
  ctx,
  desc,
  filter,
  fn,
  join,
  limit,
  lit,
  local,
  project,
  runExit,
  runPlan,
  sort
} from "./fixtures.ts"

// A test-only scalar function, so these tests do not depend on which functions are registered.
register({
  name: "test_upper",
  resolve: () => ({ _tag: "Resolved", resultType: T.StringType, nullable: true, castArgsTo: [undefined] }),
  compile:
    ([a]) =>
    (row) => {
      const v = a(row)
      return v === null || v === undefined ? null : String(v).toUpperCase()
    }
})

const refTo = (a: E.Alias, dataType: T.DataType): E.AttributeReference => ({
  _tag: "AttributeReference",
  name: a.name,
  dataType,
  nullable: true,
  exprId: a.exprId,
  qualifier: []
})

describe("scans, Project, Filter", () => {
  it("LocalTableScan returns the relation's rows", async () => {
    const a = attr("a")
    expect(await runPlan(local([a], [[1], [2]]))).toEqual([[1], [2]])
  })

  it("Project evaluates attributes and aliased expressions", async () => {
    const a = attr("a")
    const b = attr("b", T.LongType)
    const rel = local(
      [a, b],
      [
        [1, 10],
        [2, null]
      ]
    )
    const rows = await runPlan(project([b, alias(bin("+", a, lit(1)), "c")], rel))
    expect(rows).toEqual([
      [10, 2],
      [null, 3]
    ])
  })

  it("Filter keeps only rows whose predicate is true (null is dropped)", async () => {
    const a = attr("a")
    const rel = local([a], [[1], [null], [2], [3]])
    expect(await runPlan(filter(bin(">", a, lit(1)), rel))).toEqual([[2], [3]])
  })

  it("current_timestamp() is the context's timestamp", async () => {
    const a = attr("a")
    const rows = await runPlan(project([alias({ _tag: "CurrentTimestamp" }, "now")], local([a], [[1], [2]])), {
      ...ctx,
      currentTimestampMs: 1234
    })
    expect(rows).toEqual([[1234], [1234]])
  })

  it("DataSourceRelation rows come from ctx.readRelation", async () => {
    const a = attr("a")
    const rel: L.DataSourceRelation = {
      _tag: "DataSourceRelation",
      planId: L.newPlanId(),
      format: "json",
      paths: ["/tmp/x.json"],
      options: {},
      output: [a]
    }
    const seen: Array<string> = []
    const rows = await runPlan(filter(bin(">", a, lit(1)), rel), {
      ...ctx,
      readRelation: (r) => {
        seen.push(r.format)
        return Effect.succeed([[1], [5]])
      }
    })
    expect(rows).toEqual([[5]])
    expect(seen).toEqual(["json"])
  })

  it("StreamingRelation fails with a ConnectorError without streamingRows, and reads them with it", async () => {
    const a = attr("a")
    const rel: L.StreamingRelation = {
      _tag: "StreamingRelation",
      planId: L.newPlanId(),
      format: "memory",
      sourceKey: "memory-1",
      options: {},
      output: [a]
    }
    const exit = await runExit(rel)
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      const err = Cause.squash(exit.cause)
      expect(err).toBeInstanceOf(ConnectorError)
      expect((err as ConnectorError).connector).toBe("memory")
    }
    expect(await runPlan(rel, { ...ctx, streamingRows: () => Effect.succeed([[7]]) })).toEqual([[7]])
  })

  it("a failing readRelation fails the batch with its ConnectorError", async () => {
    const a = attr("a")
    const rel: L.DataSourceRelation = {
      _tag: "DataSourceRelation",
      planId: L.newPlanId(),
      format: "csv",
      paths: [],
      options: {},
      output: [a]
    }
    const exit = await runExit(rel)
    expect(Exit.isFailure(exit) && Cause.squash(exit.cause) instanceof ConnectorError).toBe(true)
  })

  it("EventTimeWatermark and SubqueryAlias pass rows through", async () => {
    const ts = attr("ts", T.TimestampType)
    const rel = local([ts], [[1000], [2000]])
    const wm: L.EventTimeWatermark = {
      _tag: "EventTimeWatermark",
      planId: L.newPlanId(),
      eventTime: ts,
      delayMs: 10_000,
      child: rel
    }
    const sq: L.SubqueryAlias = { _tag: "SubqueryAlias", planId: L.newPlanId(), alias: "t", child: wm }
    expect(await runPlan(sq)).toEqual([[1000], [2000]])
  })
})

describe("TypedFilter and MapElements (user functions on external rows)", () => {
  const name = attr("name", T.StringType)
  const n = attr("n")
  const ts = attr("ts", T.TimestampType)
  const rel = local(
    [name, n, ts],
    [
      ["a", 1, 1000],
      ["b", 2, 5000],
      ["c", 3, null]
    ]
  )

  it("TypedFilter sees external rows (Date timestamps) and keeps the rows it returns true for", async () => {
    const seen: Array<unknown> = []
    const tf: L.TypedFilter = {
      _tag: "TypedFilter",
      planId: L.newPlanId(),
      predicate: (r: { name: string; n: number; ts: Date | null }) => {
        seen.push(r)
        return r.ts !== null && r.ts.getTime() > 2000
      },
      child: rel
    }
    expect(await runPlan(tf)).toEqual([["b", 2, 5000]])
    expect(seen[0]).toEqual({ name: "a", n: 1, ts: new Date(1000) })
  })

  it("a user function that throws kills the batch with the thrown value", async () => {
    const boom = new Error("user bug")
    const tf: L.TypedFilter = {
      _tag: "TypedFilter",
      planId: L.newPlanId(),
      predicate: () => {
        throw boom
      },
      child: rel
    }
    const exit = await runExit(tf)
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      expect(Cause.hasDies(exit.cause)).toBe(true)
      expect(Cause.squash(exit.cause)).toBe(boom)
    }
  })

  const mapNode = (
    f: (row: any) => unknown,
    schema: T.StructType,
    flat: boolean,
    wrapValue: boolean
  ): L.MapElements => ({
    _tag: "MapElements",
    planId: L.newPlanId(),
    fn: f,
    flat,
    schema,
    wrapValue,
    output: schema.fields.map((f) => E.attribute(f.name, f.dataType, f.nullable)),
    child: rel
  })

  it("map to a struct schema converts the returned objects to internal rows", async () => {
    const schema = T.struct([
      T.field("upper", T.StringType),
      T.field("at", T.TimestampType),
      T.field("twice", T.LongType)
    ])
    const rows = await runPlan(
      mapNode(
        (r: { name: string; n: number; ts: Date | null }) => ({
          upper: r.name.toUpperCase(),
          at: r.ts === null ? null : new Date(r.ts.getTime() + 1),
          twice: r.n * 2
        }),
        schema,
        false,
        false
      )
    )
    expect(rows).toEqual([
      ["A", 1001, 2],
      ["B", 5001, 4],
      ["C", null, 6]
    ])
  })

  it("map with wrapValue takes the bare returned value as the `value` column", async () => {
    const schema = T.struct([T.field("value", T.LongType)])
    expect(await runPlan(mapNode((r: { n: number }) => r.n + 10, schema, false, true))).toEqual([[11], [12], [13]])
  })

  it("flatMap emits every element of the returned iterable, in order", async () => {
    const schema = T.struct([T.field("value", T.StringType)])
    const rows = await runPlan(
      mapNode(
        (r: { name: string; n: number }) => Array.from({ length: r.n - 1 }, (_, i) => `${r.name}${i}`),
        schema,
        true,
        true
      )
    )
    expect(rows).toEqual([["b0"], ["c0"], ["c1"]])
  })

  it("flatMap to structs", async () => {
    const schema = T.struct([T.field("k", T.StringType), T.field("i", T.LongType)])
    const rows = await runPlan(
      mapNode(
        function* (r: { name: string; n: number }) {
          if (r.n !== 2) yield { k: r.name, i: r.n }
        },
        schema,
        true,
        false
      )
    )
    expect(rows).toEqual([
      ["a", 1],
      ["c", 3]
    ])
  })
})

describe("HashAggregate", () => {
  const k = attr("k", T.StringType)
  const v = attr("v")
  const rel = local(
    [k, v],
    [
      ["a", 1],
      ["b", 2],
      [null, 3],
      ["a", 4],
      [null, null],
      ["c", null]
    ]
  )

  it("groups in first-seen order; null keys form their own group", async () => {
    const rows = await runPlan(
      aggregate([k], [k, alias(countOne(), "count"), alias(agg("sum", [v], T.LongType), "sum(v)")], rel)
    )
    expect(rows).toEqual([
      ["a", 2, 5],
      ["b", 1, 2],
      [null, 2, 3],
      ["c", 1, null]
    ])
  })

  it("evaluates result expressions over grouping values and aggregate results", async () => {
    const sum = agg("sum", [v], T.LongType)
    const rows = await runPlan(
      aggregate(
        [k],
        [
          alias(fn("test_upper", [k], T.StringType), "u"),
          alias(bin("+", sum, lit(1, T.LongType)), "s1"),
          alias(bin("*", agg("sum", [v], T.LongType), agg("max", [v], T.IntegerType)), "sm")
        ],
        rel
      )
    )
    expect(rows).toEqual([
      ["A", 6, 20],
      ["B", 3, 4],
      [null, 4, 9],
      ["C", null, null]
    ])
  })

  it("an aliased grouping expression is reachable through its attribute", async () => {
    const u = alias(fn("test_upper", [k], T.StringType), "u")
    const uRef = refTo(u, T.StringType)
    const rows = await runPlan(aggregate([u], [uRef, alias(countOne(), "count")], rel))
    expect(rows).toEqual([
      ["A", 2],
      ["B", 1],
      [null, 2],
      ["C", 1]
    ])
  })

  it("a global aggregate over no rows yields one row: count 0, the others null", async () => {
    const empty = local([k, v], [])
    const rows = await runPlan(
      aggregate(
        [],
        [
          alias(countOne(), "count"),
          alias(agg("sum", [v], T.LongType), "s"),
          alias(agg("max", [v], T.IntegerType), "m")
        ],
        empty
      )
    )
    expect(rows).toEqual([[0, null, null]])
  })

  it("a grouped aggregate over no rows yields no rows", async () => {
    expect(await runPlan(aggregate([k], [k, alias(countOne(), "count")], local([k, v], [])))).toEqual([])
  })

  it("a global aggregate over rows", async () => {
    expect(
      await runPlan(aggregate([], [alias(countOne(), "c"), alias(agg("sum", [v], T.LongType), "s")], rel))
    ).toEqual([[6, 10]])
  })

  it("NaN groups with NaN, -0.0 with 0.0 (output 0.0)", async () => {
    const x = attr("x", T.DoubleType)
    const rows = await runPlan(
      aggregate(
        [x],
        [x, alias(countOne(), "count")],
        local([x], [[0], [-0], [Number.NaN], [Number.NaN], [null], [1.5], [-0]])
      )
    )
    expect(rows).toEqual([
      [0, 3],
      [Number.NaN, 2],
      [null, 1],
      [1.5, 1]
    ])
    expect(Object.is(rows[0][0], 0)).toBe(true)
  })

  it("composite keys, with nulls and NaN inside", async () => {
    const a = attr("a", T.StringType)
    const d = attr("d", T.DoubleType)
    const rows = await runPlan(
      aggregate(
        [a, d],
        [a, d, alias(countOne(), "count")],
        local(
          [a, d],
          [
            ["x", 1],
            [null, null],
            ["x", Number.NaN],
            ["x", 1],
            [null, null],
            ["x", Number.NaN],
            ["null", null],
            ["x", -0],
            ["x", 0]
          ]
        )
      )
    )
    expect(rows).toEqual([
      ["x", 1, 2],
      [null, null, 2],
      ["x", Number.NaN, 2],
      ["null", null, 1],
      ["x", 0, 2]
    ])
  })

  it("collect_list keeps arrival order within a group", async () => {
    const rows = await runPlan(aggregate([k], [k, alias(agg("collect_list", [v], T.array(T.IntegerType)), "vs")], rel))
    expect(rows).toEqual([
      ["a", [1, 4]],
      ["b", [2]],
      [null, [3]],
      ["c", []]
    ])
  })

  it("Distinct keeps first occurrences in order", async () => {
    const a = attr("a")
    const b = attr("b", T.StringType)
    const d: L.Distinct = {
      _tag: "Distinct",
      planId: L.newPlanId(),
      child: local(
        [a, b],
        [
          [1, "a"],
          [2, "b"],
          [1, "a"],
          [null, null],
          [2, "b"],
          [null, null],
          [2, "c"]
        ]
      )
    }
    expect(await runPlan(d)).toEqual([
      [1, "a"],
      [2, "b"],
      [null, null],
      [2, "c"]
    ])
  })

  it("Deduplicate keeps the first row per key", async () => {
    const a = attr("a")
    const b = attr("b", T.StringType)
    const dd: L.Deduplicate = {
      _tag: "Deduplicate",
      planId: L.newPlanId(),
      columnNames: ["a"],
      keys: [a],
      withinWatermark: false,
      child: local(
        [a, b],
        [
          [1, "x"],
          [2, "y"],
          [1, "z"],
          [null, "n1"],
          [null, "n2"],
          [3, "w"]
        ]
      )
    }
    expect(await runPlan(dd)).toEqual([
      [1, "x"],
      [2, "y"],
      [null, "n1"],
      [3, "w"]
    ])
  })
})

describe("joins", () => {
  const lid = attr("id")
  const lv = attr("lv", T.StringType)
  const rid = attr("id")
  const rv = attr("rv", T.StringType)
  const left = local(
    [lid, lv],
    [
      [1, "l1"],
      [2, "l2"],
      [2, "l2b"],
      [null, "lnull"],
      [4, "l4"]
    ]
  )
  const right = local(
    [rid, rv],
    [
      [2, "r2"],
      [1, "r1"],
      [2, "r2b"],
      [null, "rnull"],
      [5, "r5"]
    ]
  )
  const eq = bin("=", lid, rid)
  const innerRows = [
    [1, "l1", 1, "r1"],
    [2, "l2", 2, "r2"],
    [2, "l2", 2, "r2b"],
    [2, "l2b", 2, "r2"],
    [2, "l2b", 2, "r2b"]
  ]

  it("inner: left order, matches in right order; null keys never match with =", async () => {
    expect(await runPlan(join(left, right, "inner", eq))).toEqual(innerRows)
  })

  it("equi-keys written right = left are recognised too", async () => {
    const physical = plan(join(left, right, "inner", bin("=", rid, lid)))
    expect(physical._tag).toBe("BroadcastHashJoinExec")
    expect(await runPlan(join(left, right, "inner", bin("=", rid, lid)))).toEqual(innerRows)
  })

  it("null-safe <=> matches null with null", async () => {
    expect(await runPlan(join(left, right, "inner", bin("<=>", lid, rid)))).toEqual([
      ...innerRows,
      [null, "lnull", null, "rnull"]
    ])
  })

  it("left outer pads unmatched left rows with nulls", async () => {
    expect(await runPlan(join(left, right, "left_outer", eq))).toEqual([
      ...innerRows,
      [null, "lnull", null, null],
      [4, "l4", null, null]
    ])
  })

  it("right outer streams the right side and pads unmatched right rows", async () => {
    expect(await runPlan(join(left, right, "right_outer", eq))).toEqual([
      [2, "l2", 2, "r2"],
      [2, "l2b", 2, "r2"],
      [1, "l1", 1, "r1"],
      [2, "l2", 2, "r2b"],
      [2, "l2b", 2, "r2b"],
      [null, null, null, "rnull"],
      [null, null, 5, "r5"]
    ])
  })

  it("full outer: left rows (padded when unmatched), then unmatched right rows", async () => {
    expect(await runPlan(join(left, right, "full_outer", eq))).toEqual([
      ...innerRows,
      [null, "lnull", null, null],
      [4, "l4", null, null],
      [null, null, null, "rnull"],
      [null, null, 5, "r5"]
    ])
  })

  it("left semi and left anti", async () => {
    expect(await runPlan(join(left, right, "left_semi", eq))).toEqual([
      [1, "l1"],
      [2, "l2"],
      [2, "l2b"]
    ])
    expect(await runPlan(join(left, right, "left_anti", eq))).toEqual([
      [null, "lnull"],
      [4, "l4"]
    ])
  })

  it("the rest of the condition is evaluated on the joined row", async () => {
    const cond = bin("and", eq, bin("=", rv, lit("r2b", T.StringType)))
    expect(await runPlan(join(left, right, "inner", cond))).toEqual([
      [2, "l2", 2, "r2b"],
      [2, "l2b", 2, "r2b"]
    ])
    expect(await runPlan(join(left, right, "left_outer", cond))).toEqual([
      [1, "l1", null, null],
      [2, "l2", 2, "r2b"],
      [2, "l2b", 2, "r2b"],
      [null, "lnull", null, null],
      [4, "l4", null, null]
    ])
    expect(await runPlan(join(left, right, "left_anti", cond))).toEqual([
      [1, "l1"],
      [null, "lnull"],
      [4, "l4"]
    ])
    expect(await runPlan(join(left, right, "full_outer", cond))).toEqual([
      [1, "l1", null, null],
      [2, "l2", 2, "r2b"],
      [2, "l2b", 2, "r2b"],
      [null, "lnull", null, null],
      [4, "l4", null, null],
      [null, null, 2, "r2"],
      [null, null, 1, "r1"],
      [null, null, null, "rnull"],
      [null, null, 5, "r5"]
    ])
  })

  it("keys may be expressions over one side", async () => {
    expect(await runPlan(join(left, right, "inner", bin("=", bin("+", lid, lit(1)), rid)))).toEqual([
      [1, "l1", 2, "r2"],
      [1, "l1", 2, "r2b"],
      [4, "l4", 5, "r5"]
    ])
  })

  it("composite keys: a null part never matches with =, does with <=>", async () => {
    const a = attr("a")
    const b = attr("b", T.StringType)
    const c = attr("c")
    const d = attr("d", T.StringType)
    const l = local(
      [a, b],
      [
        [1, "x"],
        [1, null],
        [null, "y"]
      ]
    )
    const r = local(
      [c, d],
      [
        [1, null],
        [1, "x"],
        [null, "y"]
      ]
    )
    expect(await runPlan(join(l, r, "inner", bin("and", bin("=", a, c), bin("=", b, d))))).toEqual([[1, "x", 1, "x"]])
    expect(await runPlan(join(l, r, "inner", bin("and", bin("<=>", a, c), bin("<=>", b, d))))).toEqual([
      [1, "x", 1, "x"],
      [1, null, 1, null],
      [null, "y", null, "y"]
    ])
    expect(await runPlan(join(l, r, "inner", bin("and", bin("=", a, c), bin("<=>", b, d))))).toEqual([
      [1, "x", 1, "x"],
      [1, null, 1, null]
    ])
  })

  const lt = bin("<", lid, rid)
  const ltInner = [
    [1, "l1", 2, "r2"],
    [1, "l1", 2, "r2b"],
    [1, "l1", 5, "r5"],
    [2, "l2", 5, "r5"],
    [2, "l2b", 5, "r5"],
    [4, "l4", 5, "r5"]
  ]

  it("non-equi inner join (nested loop)", async () => {
    expect(plan(join(left, right, "inner", lt))._tag).toBe("BroadcastNestedLoopJoinExec")
    expect(await runPlan(join(left, right, "inner", lt))).toEqual(ltInner)
  })

  it("non-equi outer joins pad like hash joins", async () => {
    expect(await runPlan(join(left, right, "left_outer", lt))).toEqual([
      ...ltInner.slice(0, 5),
      [null, "lnull", null, null],
      [4, "l4", 5, "r5"]
    ])
    expect(await runPlan(join(left, right, "right_outer", lt))).toEqual([
      [1, "l1", 2, "r2"],
      [null, null, 1, "r1"],
      [1, "l1", 2, "r2b"],
      [null, null, null, "rnull"],
      [1, "l1", 5, "r5"],
      [2, "l2", 5, "r5"],
      [2, "l2b", 5, "r5"],
      [4, "l4", 5, "r5"]
    ])
    expect(await runPlan(join(left, right, "full_outer", lt))).toEqual([
      ...ltInner.slice(0, 5),
      [null, "lnull", null, null],
      [4, "l4", 5, "r5"],
      [null, null, 1, "r1"],
      [null, null, null, "rnull"]
    ])
    expect(await runPlan(join(left, right, "left_semi", lt))).toEqual([
      [1, "l1"],
      [2, "l2"],
      [2, "l2b"],
      [4, "l4"]
    ])
    expect(await runPlan(join(left, right, "left_anti", lt))).toEqual([[null, "lnull"]])
  })

  it("cross join without a condition is the cartesian product, left-major", async () => {
    const a = attr("a")
    const b = attr("b")
    expect(await runPlan(join(local([a], [[1], [2]]), local([b], [[10], [20], [30]]), "cross", undefined))).toEqual([
      [1, 10],
      [1, 20],
      [1, 30],
      [2, 10],
      [2, 20],
      [2, 30]
    ])
  })

  it("joins with an empty side", async () => {
    const empty = local([rid, rv], [])
    expect(await runPlan(join(left, empty, "inner", eq))).toEqual([])
    expect((await runPlan(join(left, empty, "left_outer", eq))).length).toBe(5)
    expect(await runPlan(join(left, empty, "left_anti", eq))).toEqual(left.rows)
  })
})

describe("Sort and Limit", () => {
  const a = attr("a")
  const b = attr("b", T.StringType)
  const rel = local(
    [a, b],
    [
      [2, "x"],
      [null, "n"],
      [1, "y"],
      [2, "a"],
      [1, "z"],
      [null, "m"]
    ]
  )

  it("ascending puts nulls first by default and is stable", async () => {
    expect(await runPlan(sort([asc(a)], rel))).toEqual([
      [null, "n"],
      [null, "m"],
      [1, "y"],
      [1, "z"],
      [2, "x"],
      [2, "a"]
    ])
  })

  it("descending puts nulls last by default; several sort orders", async () => {
    expect(await runPlan(sort([desc(a), asc(b)], rel))).toEqual([
      [2, "a"],
      [2, "x"],
      [1, "y"],
      [1, "z"],
      [null, "m"],
      [null, "n"]
    ])
  })

  it("explicit null orderings do not depend on the direction", async () => {
    const ascLast: E.SortOrder = { _tag: "SortOrder", child: a, direction: "asc", nullOrdering: "nullsLast" }
    const descFirst: E.SortOrder = { _tag: "SortOrder", child: a, direction: "desc", nullOrdering: "nullsFirst" }
    expect((await runPlan(sort([ascLast], rel))).map((r) => r[1])).toEqual(["y", "z", "x", "a", "n", "m"])
    expect((await runPlan(sort([descFirst], rel))).map((r) => r[1])).toEqual(["n", "m", "x", "a", "y", "z"])
  })

  it("NaN sorts above every number", async () => {
    const x = attr("x", T.DoubleType)
    const rows = await runPlan(
      sort([asc(x)], local([x], [[3], [Number.NaN], [-1], [null], [0], [Number.POSITIVE_INFINITY]]))
    )
    expect(rows).toEqual([[null], [-1], [0], [3], [Number.POSITIVE_INFINITY], [Number.NaN]])
  })

  it("sortWithinPartitions (global: false) sorts the same here", async () => {
    expect(await runPlan(sort([asc(a)], rel, false))).toEqual(await runPlan(sort([asc(a)], rel, true)))
  })

  it("Limit keeps the first n rows", async () => {
    expect(await runPlan(limit(2, rel))).toEqual([
      [2, "x"],
      [null, "n"]
    ])
    expect(await runPlan(limit(0, rel))).toEqual([])
    expect((await runPlan(limit(100, rel))).length).toBe(6)
  })

  it("Limit over Sort (top-k) and over Project over Sort", async () => {
    expect(await runPlan(limit(3, sort([desc(a), asc(b)], rel)))).toEqual([
      [2, "a"],
      [2, "x"],
      [1, "y"]
    ])
    expect(await runPlan(limit(2, project([b], sort([asc(a)], rel))))).toEqual([["n"], ["m"]])
  })
})

describe("Union", () => {
  it("concatenates children in order", async () => {
    const a = attr("a")
    const a2 = attr("a")
    const a3 = attr("a")
    const u: L.Union = {
      _tag: "Union",
      planId: L.newPlanId(),
      children: [local([a], [[1], [2]]), local([a2], []), local([a3], [[3], [1]])],
      byName: false,
      allowMissingColumns: false
    }
    expect(await runPlan(u)).toEqual([[1], [2], [3], [1]])
  })
})

describe("Generate: explode", () => {
  const id = attr("id")
  const arr = attr("arr", T.array(T.IntegerType))
  const rel = local(
    [id, arr],
    [
      [1, [10, 20]],
      [2, []],
      [3, null],
      [4, [null, 5]]
    ]
  )
  const generate = (
    outer: boolean,
    position: boolean,
    child: L.LogicalPlan,
    c: E.Expression,
    out: ReadonlyArray<E.AttributeReference>
  ): L.Generate => ({
    _tag: "Generate",
    planId: L.newPlanId(),
    generator: { _tag: "Explode", child: c, outer, position },
    generatorOutput: out,
    child
  })

  it("explode", async () => {
    expect(await runPlan(generate(false, false, rel, arr, [attr("col")]))).toEqual([
      [1, [10, 20], 10],
      [1, [10, 20], 20],
      [4, [null, 5], null],
      [4, [null, 5], 5]
    ])
  })

  it("explode_outer: a null or empty array gives one row of nulls", async () => {
    expect(await runPlan(generate(true, false, rel, arr, [attr("col")]))).toEqual([
      [1, [10, 20], 10],
      [1, [10, 20], 20],
      [2, [], null],
      [3, null, null],
      [4, [null, 5], null],
      [4, [null, 5], 5]
    ])
  })

  it("posexplode and posexplode_outer", async () => {
    expect(await runPlan(generate(false, true, rel, arr, [attr("pos"), attr("col")]))).toEqual([
      [1, [10, 20], 0, 10],
      [1, [10, 20], 1, 20],
      [4, [null, 5], 0, null],
      [4, [null, 5], 1, 5]
    ])
    expect(await runPlan(generate(true, true, rel, arr, [attr("pos"), attr("col")]))).toEqual([
      [1, [10, 20], 0, 10],
      [1, [10, 20], 1, 20],
      [2, [], null, null],
      [3, null, null, null],
      [4, [null, 5], 0, null],
      [4, [null, 5], 1, 5]
    ])
  })

  it("maps explode into key and value", async () => {
    const m = attr("m", T.map(T.StringType, T.IntegerType))
    const m1 = new Map([
      ["a", 1],
      ["b", 2]
    ])
    const mrel = local(
      [id, m],
      [
        [1, m1],
        [2, new Map()]
      ]
    )
    const key = attr("key", T.StringType)
    const value = attr("value")
    expect(await runPlan(generate(false, false, mrel, m, [key, value]))).toEqual([
      [1, m1, "a", 1],
      [1, m1, "b", 2]
    ])
    expect(await runPlan(generate(true, true, mrel, m, [attr("pos"), key, value]))).toEqual([
      [1, m1, 0, "a", 1],
      [1, m1, 1, "b", 2],
      [2, new Map(), null, null, null]
    ])
  })

  it("a projection over the generated column", async () => {
    const col = attr("col")
    const g = generate(false, false, rel, arr, [col])
    expect(await runPlan(project([id, alias(bin("*", col, lit(2)), "c2")], g))).toEqual([
      [1, 20],
      [1, 40],
      [4, null],
      [4, 10]
    ])
  })
})

describe("Generate: time windows (Spark's TimeWindowing)", () => {
  const ts = attr("ts", T.TimestampType)
  const windows = async (times: ReadonlyArray<number | null>, windowMs: number, slideMs: number, startMs = 0) => {
    const w = attr("window", T.WindowType)
    const g: L.Generate = {
      _tag: "Generate",
      planId: L.newPlanId(),
      generator: { _tag: "TimeWindow", timeColumn: ts, windowMs, slideMs, startMs },
      generatorOutput: [w],
      child: local(
        [ts],
        times.map((t) => [t])
      )
    }
    return runPlan(g)
  }

  it("tumbling windows, including negative times; null times are dropped", async () => {
    expect(await windows([0, 9999, 10000, 25000, -1, -10000, -10001, null], 10_000, 10_000)).toEqual([
      [0, [0, 10000]],
      [9999, [0, 10000]],
      [10000, [10000, 20000]],
      [25000, [20000, 30000]],
      [-1, [-10000, 0]],
      [-10000, [-10000, 0]],
      [-10001, [-20000, -10000]]
    ])
  })

  it("sliding windows come latest-first, as Spark's Expand emits them", async () => {
    expect(await windows([7000, 5000, -3000], 10_000, 5_000)).toEqual([
      [7000, [5000, 15000]],
      [7000, [0, 10000]],
      [5000, [5000, 15000]],
      [5000, [0, 10000]],
      [-3000, [-5000, 5000]],
      [-3000, [-10000, 0]]
    ])
  })

  it("startTime shifts the windows (floor mod for times before the offset)", async () => {
    expect(await windows([1000, 12000, 11999], 10_000, 10_000, 2_000)).toEqual([
      [1000, [-8000, 2000]],
      [12000, [12000, 22000]],
      [11999, [2000, 12000]]
    ])
  })

  it("a window that is not a multiple of the slide drops candidates that do not contain the time", async () => {
    expect(await windows([7000, 1000], 10_000, 3_000)).toEqual([
      [7000, [6000, 16000]],
      [7000, [3000, 13000]],
      [7000, [0, 10000]],
      [1000, [0, 10000]],
      [1000, [-3000, 7000]],
      [1000, [-6000, 4000]]
    ])
  })

  it("Spark's documented example: 12:05 with window 12m, slide 5m, start 2m", async () => {
    const m = 60_000
    expect(await windows([725 * m], 12 * m, 5 * m, 2 * m)).toEqual([
      [725 * m, [722 * m, 734 * m]],
      [725 * m, [717 * m, 729 * m]]
    ])
  })
})

describe("session windows (MergingSessionsExec semantics)", () => {
  const k = attr("k", T.StringType)
  const ts = attr("ts", T.TimestampType)
  const v = attr("v")

  const sessionAgg = (gap: E.Expression, rel: L.LogicalPlan, withKey: boolean) => {
    const sw = alias({ _tag: "SessionWindow", timeColumn: ts, gap }, "session_window")
    const swRef = refTo(sw, T.WindowType)
    return aggregate(
      withKey ? [k, sw] : [sw],
      [
        ...(withKey ? [k] : []),
        swRef,
        alias(countOne(), "count"),
        alias(agg("collect_list", [v], T.array(T.IntegerType)), "vs")
      ],
      rel
    )
  }

  it("merges overlapping and touching spans per key; sessions ordered by start within a key", async () => {
    const rel = local(
      [k, ts, v],
      [
        ["a", 0, 1],
        ["b", 5000, 2],
        ["a", 12000, 3],
        ["a", 8000, 4],
        ["a", 30000, 5],
        ["a", 23000, 6],
        ["a", null, 7],
        ["b", 15000, 8]
      ]
    )
    expect(await runPlan(sessionAgg(lit(10_000), rel, true))).toEqual([
      ["a", [0, 22000], 3, [1, 4, 3]],
      ["a", [23000, 40000], 2, [6, 5]],
      ["b", [5000, 25000], 2, [2, 8]]
    ])
  })

  it("a session window as the only grouping key", async () => {
    const rel = local(
      [k, ts, v],
      [
        ["a", 10000, 1],
        ["b", 0, 2],
        ["c", 20000, 3]
      ]
    )
    expect(await runPlan(sessionAgg(lit(5_000), rel, false))).toEqual([
      [[0, 5000], 1, [2]],
      [[10000, 15000], 1, [1]],
      [[20000, 25000], 1, [3]]
    ])
  })

  it("a per-row gap from a string column; null, invalid and non-positive gaps drop the row", async () => {
    const gap = attr("gap", T.StringType)
    const rel = local(
      [k, ts, v, gap],
      [
        ["a", 0, 1, "5 seconds"],
        ["a", 4000, 2, "10 seconds"],
        ["a", 20000, 3, null],
        ["a", 30000, 4, "0 seconds"],
        ["a", 40000, 5, "-1 seconds"],
        ["a", 50000, 6, "bad"],
        ["a", 60000, 7, "1 second"]
      ]
    )
    expect(await runPlan(sessionAgg(gap, rel, true))).toEqual([
      ["a", [0, 14000], 2, [1, 2]],
      ["a", [60000, 61000], 1, [7]]
    ])
  })

  it("result expressions can read the session struct's fields", async () => {
    const sw = alias({ _tag: "SessionWindow", timeColumn: ts, gap: lit(1000) }, "session_window")
    const swRef = refTo(sw, T.WindowType)
    const rel = local(
      [k, ts, v],
      [
        ["a", 0, 1],
        ["a", 500, 2],
        ["a", 5000, 3]
      ]
    )
    const rows = await runPlan(aggregate([k, sw], [k, alias(countOne(), "count")], rel))
    expect(rows).toEqual([
      ["a", 2],
      ["a", 1]
    ])
    const starts = await runPlan(
      aggregate([k, sw], [k, alias({ _tag: "GetField", child: swRef, field: "start", ordinal: 0 }, "start")], rel)
    )
    expect(starts).toEqual([
      ["a", 0],
      ["a", 5000]
    ])
  })

  it("a session window over no rows yields no rows", async () => {
    expect(await runPlan(sessionAgg(lit(1000), local([k, ts, v], []), true))).toEqual([])
  })
})

describe("execute runs the plan it is given", () => {
  it("compiles once and can be run twice with the same result", async () => {
    const a = attr("a")
    const physical = plan(filter(bin(">", a, lit(1)), local([a], [[1], [2], [3]])))
    const once = await Effect.runPromise(execute(physical, ctx))
    const twice = await Effect.runPromise(execute(physical, ctx))
    expect(once).toEqual([[2], [3]])
    expect(twice).toEqual(once)
  })

  it("handles a large batch in one pass", async () => {
    const g = attr("g")
    const x = attr("x", T.LongType)
    const rows: Array<InternalRow> = []
    for (let i = 0; i < 200_000; i++) rows.push([i % 100, i])
    const out = await runPlan(
      aggregate([g], [g, alias(countOne(), "c"), alias(agg("sum", [x], T.LongType), "s")], local([g, x], rows))
    )
    expect(out.length).toBe(100)
    expect(out[0]).toEqual([0, 2000, (2000 * 1999 * 100) / 2])
  })
})
