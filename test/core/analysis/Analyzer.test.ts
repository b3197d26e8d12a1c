import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { analyze } from "../../../core/analysis/Analyzer.ts"
import { output, schemaOf } from "../../../core/analysis/PlanOutput.ts"
import { defaultAnalyzerConf, emptyCatalog } from "../../../core/Catalog.ts"
import { type Column, col, lit } from "../../../core/Column.ts"
import * as T from "../../../core/DataType.ts"
import type { AnalysisError } from "../../../core/Errors.ts"
import * as E from "../../../core/Expression.ts"
import * as F from "../../../core/F.ts"
import * as P from "../../../core/LogicalPlan.ts"
import { treeString } from "../../../core/PlanString.ts"

// Source attributes use ids far above the process counter, so generated ids never collide.
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
  rows: [],
  isStreaming
})

const t = rel(900100, [
  attr("a", T.IntegerType, 900001),
  attr("b", T.LongType, 900002),
  attr("s", T.StringType, 900003),
  attr("ts", T.TimestampType, 900004),
  attr("arr", T.array(T.IntegerType), 900005),
  attr("m", T.map(T.StringType, T.IntegerType), 900006),
  attr("st", T.struct([T.field("x", T.IntegerType), T.field("y", T.StringType)]), 900007),
  attr("flag", T.BooleanType, 900008),
  attr("d", T.DateType, 900009),
  attr("dbl", T.DoubleType, 900010)
])
const T_OUT =
  "[a#900001, b#900002L, s#900003, ts#900004, arr#900005, m#900006, st#900007, flag#900008, d#900009, dbl#900010]"

const u = rel(900101, [
  attr("k", T.IntegerType, 900021, false),
  attr("v", T.StringType, 900022),
  attr("a", T.LongType, 900023)
])
const v = rel(900102, [
  attr("x", T.LongType, 900031),
  attr("y", T.IntegerType, 900032),
  attr("z", T.BooleanType, 900033)
])
const v2 = rel(900103, [
  attr("y", T.StringType, 900041),
  attr("x", T.IntegerType, 900042),
  attr("z", T.BooleanType, 900043)
])
const w = rel(900104, [attr("p", T.IntegerType, 900051), attr("q", T.StringType, 900052)])

/** Generated ids become #g1, #g2, … in order of first appearance. */
const norm = (s: string): string => {
  const m = new Map<string, string>()
  return s.replace(/#(\d+)/g, (all, id: string) => {
    if (Number(id) >= 900000) return all
    if (!m.has(id)) m.set(id, `g${m.size + 1}`)
    return `#${m.get(id)}`
  })
}

const run = (p: P.LogicalPlan, caseSensitive = false) => analyze(p, emptyCatalog, { caseSensitive })

const ok = (p: P.LogicalPlan, caseSensitive = false): P.LogicalPlan => {
  const r = run(p, caseSensitive)
  if (Result.isFailure(r)) throw new Error(`analysis failed: ${r.failure.message}`)
  return r.success
}

const tree = (p: P.LogicalPlan): string => norm(treeString(ok(p), "analyzed"))

const err = (p: P.LogicalPlan, caseSensitive = false): AnalysisError => {
  const r = run(p, caseSensitive)
  if (Result.isSuccess(r)) throw new Error(`expected a failure, got\n${treeString(r.success, "analyzed")}`)
  return r.failure
}

const project = (
  cols: ReadonlyArray<Column<unknown, string>>,
  child: P.LogicalPlan = t,
  planId = 900200
): P.Project => ({
  _tag: "Project",
  planId,
  projectList: cols.map((c) => c.expr),
  child
})

const aggregate = (
  groups: ReadonlyArray<Column<unknown, string>>,
  aggs: ReadonlyArray<Column<unknown, string>>,
  child: P.LogicalPlan = t
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
  condition?: Column<unknown, string>,
  usingColumns?: ReadonlyArray<string>
): P.Join => ({ _tag: "Join", planId: 900400, left, right, joinType, condition: condition?.expr, usingColumns })

const union = (children: ReadonlyArray<P.LogicalPlan>, byName = false, allowMissingColumns = false): P.Union => ({
  _tag: "Union",
  planId: 900600,
  children,
  byName,
  allowMissingColumns
})

const allResolved = (p: P.LogicalPlan): boolean => {
  let okAll = true
  P.foreach(p, (n) => {
    if (n._tag === "WithColumns" || n._tag === "WithColumnsRenamed" || n._tag === "Drop") okAll = false
    if (n._tag === "Join" && n.usingColumns !== undefined) okAll = false
    if (n._tag === "Deduplicate" && n.keys === undefined) okAll = false
    for (const e of P.expressions(n)) if (!E.isResolved(e)) okAll = false
  })
  return okAll
}

describe("column resolution", () => {
  it("resolves names case-insensitively and keeps the name as written (Spark's withName)", () => {
    const p = ok(project([col("A"), col("b")]))
    expect(output(p).map((a) => [a.name, a.exprId])).toEqual([
      ["A", 900001],
      ["b", 900002]
    ])
    expect(allResolved(p)).toBe(true)
  })

  it("is case-sensitive with spark.sql.caseSensitive", () => {
    expect(err(project([col("A")]), true).message).toBe(
      "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with name `A` cannot be resolved. Did you mean one of the following? [`a`, `b`, `s`, `m`, `d`]."
    )
  })

  it("reports an unknown column with Spark's did-you-mean list", () => {
    const e = err(project([col("aa")]))
    expect(e.reason).toBe("UnresolvedColumn")
    expect(e.errorClass).toBe("UNRESOLVED_COLUMN.WITH_SUGGESTION")
    expect(e.message).toBe(
      "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with name `aa` cannot be resolved. Did you mean one of the following? [`a`, `b`, `s`, `ts`, `arr`]."
    )
  })

  it("names struct fields after aliased arguments, and the column as Spark does", () => {
    // Spark's CreateStruct reads the alias names before CleanupAliases trims them (found by the
    // differential suite against Spark: the field was named `a`)
    const p = ok(project([F.struct(col("a").as("u"), col("b"))]))
    const item = (p as P.Project).projectList[0]
    expect(item._tag === "Alias" && item.name).toBe("struct(a AS u, b)")
    expect(T.simpleString(schemaOf(p).fields[0].dataType)).toBe("struct<u:int,b:bigint>")
  })

  it("names a struct field from a cast or any other unnamed expression col<n>, as Spark's CreateStruct", () => {
    // found by the differential suite against Spark: struct(cast(a as string)) was named `a`
    const p = ok(project([F.struct(col("a").cast("string"), col("b").plus(1), col("b"))]))
    expect(T.simpleString(schemaOf(p).fields[0].dataType)).toBe("struct<col1:string,col2:bigint,b:bigint>")
  })

  it("resolves struct fields from dotted names and aliases them with the last part", () => {
    expect(tree(project([col("st.x"), col("ST.Y"), col("st").getField("x"), col("st").getField("x").plus(1)]))).toBe(
      [
        "Project [st#900007.x AS x#g1, ST#900007.Y AS Y#g2, st#900007.x AS st.x#g3, (st#900007.x + 1) AS (st.x + 1)#g4]",
        `+- LocalRelation <empty>, ${T_OUT}`,
        ""
      ].join("\n")
    )
    const p = ok(project([col("st.y")]))
    const item = (p as P.Project).projectList[0]
    expect(item._tag === "Alias" && item.child._tag === "GetField" && item.child.ordinal).toBe(1)
  })

  it("reports a missing struct field and a field access on a non-struct", () => {
    expect(err(project([col("st.z")])).message).toBe("[FIELD_NOT_FOUND] No such struct field `z` in `x`, `y`.")
    expect(err(project([col("a.b")])).message).toBe(
      '[INVALID_EXTRACT_BASE_FIELD_TYPE] Can\'t extract a value from "a". Need a complex type [STRUCT, ARRAY, MAP] but got "INT".'
    )
  })

  it("expands * to every column", () => {
    expect(tree(project([col("*")]))).toBe([`Project ${T_OUT}`, `+- LocalRelation <empty>, ${T_OUT}`, ""].join("\n"))
  })

  it("resolves qualified names through SubqueryAlias and re-ids the right side of a self-join", () => {
    const x: P.SubqueryAlias = { _tag: "SubqueryAlias", planId: 900500, alias: "x", child: w }
    const y: P.SubqueryAlias = { _tag: "SubqueryAlias", planId: 900501, alias: "y", child: w }
    const p = project([col("x.p"), col("y.p"), col("y.q")], join(x, y, "inner", col("x.p").eq(col("y.p"))))
    expect(tree(p)).toBe(
      [
        "Project [p#900051, p#g1, q#g2]",
        "+- Join Inner, (p#900051 = p#g1)",
        "   :- SubqueryAlias x",
        "   :  +- LocalRelation <empty>, [p#900051, q#900052]",
        "   +- SubqueryAlias y",
        "      +- LocalRelation <empty>, [p#g1, q#g2]",
        ""
      ].join("\n")
    )
  })

  it("reports an ambiguous name with Spark's AMBIGUOUS_REFERENCE", () => {
    const e = err(project([col("p")], join(w, w, "cross")))
    expect(e.reason).toBe("AmbiguousReference")
    expect(e.message).toBe("[AMBIGUOUS_REFERENCE] Reference `p` is ambiguous, could be: [`p`, `p`].")
    const x: P.SubqueryAlias = { _tag: "SubqueryAlias", planId: 900500, alias: "x", child: w }
    const y: P.SubqueryAlias = { _tag: "SubqueryAlias", planId: 900501, alias: "y", child: w }
    expect(err(project([col("p")], join(x, y, "cross"))).message).toBe(
      "[AMBIGUOUS_REFERENCE] Reference `p` is ambiguous, could be: [`x`.`p`, `y`.`p`]."
    )
  })

  it("resolves df.col(name) through the plan id of its DataFrame (Spark Connect)", () => {
    const p = ok(
      project(
        [col("k", 900101), col("a", 900101), col("a", 900100)],
        join(t, u, "inner", col("a", 900100).eq(col("k", 900101)))
      )
    )
    expect(output(p).map((a) => a.exprId)).toEqual([900021, 900023, 900001])
    expect(treeString(p, "analyzed").split("\n")[1]).toBe("+- Join Inner, (a#900001 = k#900021)")
  })

  it("fails for a column of a DataFrame that is not in the plan", () => {
    expect(err(project([col("p", 900104)])).message).toBe(
      '[CANNOT_RESOLVE_DATAFRAME_COLUMN] Cannot resolve dataframe column "p". It\'s probably because of illegal references like `df1.select(df2.col("a"))`.'
    )
  })

  it("gives the same ids when the same plan is analyzed twice", () => {
    const p = project([col("a").plus(1), F.explode("arr"), F.window("ts", "10 seconds")])
    expect(treeString(ok(p), "analyzed")).toBe(treeString(ok(p), "analyzed"))
  })

  it("is idempotent on an analyzed plan", () => {
    const p = ok(
      aggregate([F.window("ts", "10 seconds"), col("s")], [F.window("ts", "10 seconds"), col("s"), F.sum("a")])
    )
    expect(treeString(ok(p), "analyzed")).toBe(treeString(p, "analyzed"))
  })
})

describe("type coercion (non-ANSI)", () => {
  it("widens arithmetic operands and promotes strings to double", () => {
    expect(
      tree(
        project([
          col("a").plus(col("b")),
          col("a").plus(col("dbl")),
          col("s").plus(1),
          col("a").mod(2),
          lit(null).plus(1),
          col("s").negate()
        ])
      )
    ).toBe(
      [
        "Project [(cast(a#900001 as bigint) + b#900002L) AS (a + b)#g1L, (cast(a#900001 as double) + dbl#900010) AS (a + dbl)#g2, (cast(s#900003 as double) + cast(1 as double)) AS (s + 1)#g3, (a#900001 % 2) AS (a % 2)#g4, (cast(null as int) + 1) AS (NULL + 1)#g5, -cast(s#900003 as double) AS (- s)#g6]",
        `+- LocalRelation <empty>, ${T_OUT}`,
        ""
      ].join("\n")
    )
  })

  it("casts both sides of / to double", () => {
    const p = ok(project([col("a").divide(2), col("dbl").divide(col("a"))]))
    expect(norm(treeString(p, "analyzed").split("\n")[0])).toBe(
      "Project [(cast(a#900001 as double) / cast(2 as double)) AS (a / 2)#g1, (dbl#900010 / cast(a#900001 as double)) AS (dbl / a)#g2]"
    )
    expect(schemaOf(p).fields.map((f) => [f.dataType._tag, f.nullable])).toEqual([
      ["double", true],
      ["double", true]
    ])
  })

  it("compares a string with a number as that number, with a timestamp as a timestamp", () => {
    expect(
      norm(
        treeString(
          ok(
            project([
              col("s").eq(1),
              col("s").gt(col("ts")),
              col("d").lt(col("ts")),
              col("s").eq(lit(null)),
              col("b").geq(col("a"))
            ])
          ),
          "analyzed"
        ).split("\n")[0]
      )
    ).toBe(
      "Project [(cast(s#900003 as int) = 1) AS (s = 1)#g1, (cast(s#900003 as timestamp) > ts#900004) AS (s > ts)#g2, (cast(d#900009 as timestamp) < ts#900004) AS (d < ts)#g3, (s#900003 = null) AS (s = NULL)#g4, (b#900002L >= cast(a#900001 as bigint)) AS (b >= a)#g5]"
    )
  })

  it("applies BooleanEquality to booleans compared with numbers", () => {
    expect(
      norm(
        treeString(
          ok(
            project([
              col("flag").eq(1),
              col("flag").eq(0),
              col("flag").eqNullSafe(1),
              col("flag").eq(col("a")),
              col("flag").neq(1)
            ])
          ),
          "analyzed"
        ).split("\n")[0]
      )
    ).toBe(
      "Project [flag#900008 AS (flag = 1)#g1, NOT flag#900008 AS (flag = 0)#g2, (isnotnull(flag#900008) AND flag#900008) AS (flag <=> 1)#g3, (cast(flag#900008 as int) = a#900001) AS (flag = a)#g4, NOT flag#900008 AS (NOT (flag = 1))#g5]"
    )
  })

  it("casts IN lists and CASE WHEN branches to their wider common type", () => {
    expect(
      norm(
        treeString(
          ok(
            project([
              col("a").isin(1, 2.5),
              col("a").isin(1, 2),
              F.when(col("a").gt(1), 1).otherwise("x"),
              F.when(col("a").gt(1), lit(1)).when(col("flag") as Column<boolean>, col("b"))
            ])
          ),
          "analyzed"
        ).split("\n")[0]
      )
    ).toBe(
      "Project [cast(a#900001 as double) IN (cast(1 as double),cast(2.5 as double)) AS (a IN (1, 2.5))#g1, a#900001 IN (1,2) AS (a IN (1, 2))#g2, CASE WHEN (a#900001 > 1) THEN cast(1 as string) ELSE x END AS CASE WHEN (a > 1) THEN 1 ELSE x END#g3, CASE WHEN (a#900001 > 1) THEN cast(1 as bigint) WHEN flag#900008 THEN b#900002L END AS CASE WHEN (a > 1) THEN 1 WHEN flag THEN b END#g4L]"
    )
  })

  it("turns date plus or minus a number of days into date_add / date_sub (DateTimeOperations)", () => {
    expect(norm(treeString(ok(project([col("d").plus(1), col("d").minus(col("a"))])), "analyzed").split("\n")[0])).toBe(
      "Project [date_add(d#900009, 1) AS (d + 1)#g1, date_sub(d#900009, a#900001) AS (d - a)#g2]"
    )
  })

  it("reports Spark's DATATYPE_MISMATCH errors", () => {
    expect(err(project([col("a").and(col("flag"))])).message).toBe(
      '[DATATYPE_MISMATCH.BINARY_OP_DIFF_TYPES] Cannot resolve "(a AND flag)" due to data type mismatch: the left and right operands of the binary operator have incompatible types ("INT" and "BOOLEAN").'
    )
    expect(err(project([col("ts").plus(col("ts"))])).message).toBe(
      '[DATATYPE_MISMATCH.BINARY_OP_WRONG_TYPE] Cannot resolve "(ts + ts)" due to data type mismatch: the binary operator requires the input type ("NUMERIC" or "INTERVAL" or "INTERVAL DAY TO SECOND" or "INTERVAL YEAR TO MONTH"), not "TIMESTAMP".'
    )
    expect(err(project([col("a").cast("array<int>")])).message).toBe(
      '[DATATYPE_MISMATCH.CAST_WITHOUT_SUGGESTION] Cannot resolve "CAST(a AS ARRAY<INT>)" due to data type mismatch: cannot cast "INT" to "ARRAY<INT>".'
    )
    expect(err(project([F.when(col("a"), 1)])).message).toBe(
      '[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve "CASE WHEN a THEN 1 END" due to data type mismatch: The first parameter requires the "BOOLEAN" type, however "a" has the type "INT".'
    )
    expect(err(project([col("a").isin(col("arr"))])).message).toBe(
      '[DATATYPE_MISMATCH.DATA_DIFF_TYPES] Cannot resolve "(a IN (arr))" due to data type mismatch: Input to `in` should all be the same type, but it\'s ["INT", "ARRAY<INT>"].'
    )
    expect(err(project([col("m").lt(col("m"))])).message).toBe(
      '[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] Cannot resolve "(m < m)" due to data type mismatch: The `lessthan` does not support ordering on type "MAP<STRING, INT>".'
    )
    expect(err(project([col("flag").not().and(col("a").not())])).errorClass).toBe(
      "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE"
    )
  })

  it("reports builder errors (InvalidExpression) with their message", () => {
    const e = err(project([col("a").cast("nonsense")]))
    expect(e.errorClass).toBe("UNSUPPORTED_DATATYPE")
    expect(e.message).toBe('[UNSUPPORTED_DATATYPE] Unsupported data type "nonsense".')
  })
})

describe("functions", () => {
  it("resolves scalar functions through the registry and names them as Spark", () => {
    const p = ok(project([F.callByName("upper", ["s"])]))
    expect(norm(treeString(p, "analyzed").split("\n")[0])).toBe("Project [upper(s#900003) AS upper(s)#g1]")
    expect(schemaOf(p).fields[0]).toEqual({ name: "upper(s)", dataType: T.StringType, nullable: true })
  })

  it("reports an unknown function with UNRESOLVED_ROUTINE", () => {
    expect(err(project([F.callByName("foo", ["a"])])).message).toBe(
      "[UNRESOLVED_ROUTINE] Cannot resolve routine `foo` on search path [`system`.`builtin`, `system`.`session`, `spark_catalog`.`default`]."
    )
  })

  it("reports a function's type error", () => {
    expect(err(project([F.callByName("upper", ["arr"])])).errorClass).toBe("DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE")
  })
})

describe("aggregation", () => {
  it("resolves grouping and aggregates with Spark's names and types", () => {
    const p = ok(
      aggregate([col("s")], [col("s"), F.count("*").as("count"), F.sum("b"), F.max("a").plus(1), F.avg("s")])
    )
    expect(norm(treeString(p, "analyzed"))).toBe(
      [
        "Aggregate [s#900003], [s#900003, count(1) AS count#g1L, sum(b#900002L) AS sum(b)#g2L, (max(a#900001) + 1) AS (max(a) + 1)#g3, avg(cast(s#900003 as double)) AS avg(s)#g4]",
        `+- LocalRelation <empty>, ${T_OUT}`,
        ""
      ].join("\n")
    )
    expect(schemaOf(p).fields.map((f) => [f.name, f.dataType._tag, f.nullable])).toEqual([
      ["s", "string", true],
      ["count", "long", false],
      ["sum(b)", "long", true],
      ["(max(a) + 1)", "integer", true],
      ["avg(s)", "double", true]
    ])
  })

  it("accepts outputs that are functions of grouping expressions", () => {
    expect(tree(aggregate([col("a").plus(1)], [col("a").plus(1), col("a").plus(1).multiply(2), F.sum("b")]))).toBe(
      [
        "Aggregate [(a#900001 + 1)], [(a#900001 + 1) AS (a + 1)#g1, ((a#900001 + 1) * 2) AS ((a + 1) * 2)#g2, sum(b#900002L) AS sum(b)#g3L]",
        `+- LocalRelation <empty>, ${T_OUT}`,
        ""
      ].join("\n")
    )
  })

  it("turns a select of aggregates into a global aggregation", () => {
    expect(tree(project([F.sum("a"), F.count("*")]))).toBe(
      [
        "Aggregate [sum(a#900001) AS sum(a)#g1L, count(1) AS count(1)#g2L]",
        `+- LocalRelation <empty>, ${T_OUT}`,
        ""
      ].join("\n")
    )
  })

  it("reports Spark's MISSING_AGGREGATION, MISSING_GROUP_BY, NESTED_AGGREGATE_FUNCTION and GROUP_BY_AGGREGATE", () => {
    const missing =
      '[MISSING_AGGREGATION] The non-aggregating expression "a" is based on columns which are not participating in the GROUP BY clause.\nAdd the columns or the expression to the GROUP BY, aggregate the expression, or use "any_value(a)" if you do not care which of the values within a group is returned.'
    expect(err(aggregate([col("s")], [col("s"), col("a")])).message).toBe(missing)
    expect(err(aggregate([col("a").plus(1)], [col("a"), F.sum("b")])).message).toBe(missing)
    expect(err(project([F.sum("a"), col("b")])).message).toBe(
      "[MISSING_GROUP_BY] The query does not include a GROUP BY clause. Add GROUP BY or turn it into the window functions using OVER clauses."
    )
    expect(err(aggregate([col("s")], [F.sum(F.max("a"))])).message).toBe(
      "[NESTED_AGGREGATE_FUNCTION] It is not allowed to use an aggregate function in the argument of another aggregate function. Please use the inner aggregate function in a sub-query."
    )
    expect(err(aggregate([F.sum("a")], [F.count("*")])).message).toBe(
      "[GROUP_BY_AGGREGATE] Aggregate functions are not allowed in GROUP BY, but found sum(a)."
    )
  })

  it("keeps a session window in the grouping and refers to it through an alias", () => {
    const p = ok(
      aggregate(
        [F.session_window("ts", "5 minutes"), col("s")],
        [F.session_window("ts", "5 minutes"), col("s"), F.count("*")]
      )
    )
    expect(norm(treeString(p, "analyzed"))).toBe(
      [
        "Aggregate [session_window(ts#900004, 5 minutes), s#900003], [session_window(ts#900004, 5 minutes) AS session_window#g1, s#900003, count(1) AS count(1)#g2L]",
        `+- LocalRelation <empty>, ${T_OUT}`,
        ""
      ].join("\n")
    )
    expect(output(p)[0].dataType).toEqual(T.WindowType)
    expect(err(project([F.session_window("ts", "5 minutes")])).reason).toBe("UnsupportedOperation")
  })
})

describe("generators", () => {
  it("moves explode into a Generate below the Project", () => {
    const p = ok(project([col("a"), F.explode("arr"), col("s")]))
    expect(norm(treeString(p, "analyzed"))).toBe(
      [
        "Project [a#900001, col#g1, s#900003]",
        "+- Generate explode(arr#900005), false, [col#g1]",
        `   +- LocalRelation <empty>, ${T_OUT}`,
        ""
      ].join("\n")
    )
    expect(schemaOf(p).fields[1]).toEqual({ name: "col", dataType: T.IntegerType, nullable: true })
  })

  it("names posexplode of a map pos, key, value and an aliased explode by its alias", () => {
    const p = ok(project([F.posexplode("m")]))
    expect(schemaOf(p).fields).toEqual([
      { name: "pos", dataType: T.IntegerType, nullable: false },
      { name: "key", dataType: T.StringType, nullable: false },
      { name: "value", dataType: T.IntegerType, nullable: true }
    ])
    expect(tree(project([F.explode_outer("arr").as("e")]))).toBe(
      [
        "Project [e#g1]",
        "+- Generate explode(arr#900005), true, [e#g1]",
        `   +- LocalRelation <empty>, ${T_OUT}`,
        ""
      ].join("\n")
    )
  })

  it("rejects nested and multiple generators and non-collections", () => {
    expect(err(project([F.explode("arr").plus(1)])).message).toBe(
      '[UNSUPPORTED_GENERATOR.NESTED_IN_EXPRESSIONS] The generator is not supported: nested in expressions "(explode(arr) + 1)".'
    )
    expect(err(project([F.explode("arr"), F.explode("m")])).message).toBe(
      '[UNSUPPORTED_GENERATOR.MULTI_GENERATOR] The generator is not supported: only one generator allowed per SELECT clause but found 2: "explode(arr)", "explode(m)".'
    )
    expect(err(project([F.explode("a")])).message).toBe(
      '[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve "explode(a)" due to data type mismatch: The first parameter requires the ("ARRAY" or "MAP") type, however "a" has the type "INT".'
    )
  })
})

describe("time windows", () => {
  it("inserts a Generate of the window column below the operator (TimeWindowing)", () => {
    expect(
      tree(
        aggregate(
          [F.window("ts", "10 seconds", "5 seconds"), col("s")],
          [F.window("ts", "10 seconds", "5 seconds"), col("s"), F.count("*")]
        )
      )
    ).toBe(
      [
        "Aggregate [window#g1, s#900003], [window#g1 AS window#g2, s#900003, count(1) AS count(1)#g3L]",
        "+- Generate window(ts#900004, 10000000, 5000000, 0), false, [window#g1]",
        `   +- LocalRelation <empty>, ${T_OUT}`,
        ""
      ].join("\n")
    )
    expect(
      tree({
        _tag: "Filter",
        planId: 900719,
        condition: F.window("ts", "1 minute")
          .getField("start")
          .gt(lit(new Date(0))).expr,
        child: t
      })
    ).toBe(
      [
        "Filter (window#g1.start > 1970-01-01 00:00:00)",
        "+- Generate window(ts#900004, 60000000, 60000000, 0), false, [window#g1]",
        `   +- LocalRelation <empty>, ${T_OUT}`,
        ""
      ].join("\n")
    )
  })

  it("casts a string or date time column to timestamp and types the window column as Spark", () => {
    const p = ok(project([F.window("s", "1 second")]))
    expect(norm(treeString(p, "analyzed").split("\n")[1])).toBe(
      "+- Generate window(cast(s#900003 as timestamp), 1000000, 1000000, 0), false, [window#g1]"
    )
    expect(schemaOf(p).fields[0]).toEqual({ name: "window", dataType: T.WindowType, nullable: true })
  })

  it("reports Spark 4's duration checks in microseconds", () => {
    expect(err(project([F.window("ts", "0 seconds", "1 second")])).message).toBe(
      '[DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE] Cannot resolve "window(ts, 0, 1000000, 0)" due to data type mismatch: The `window_duration` must be between (0, 9223372036854775807] (current value = 0L).'
    )
    expect(err(project([F.window("ts", "1 second", "-1 second")])).message).toBe(
      '[DATATYPE_MISMATCH.VALUE_OUT_OF_RANGE] Cannot resolve "window(ts, 1000000, -1000000, 0)" due to data type mismatch: The `slide_duration` must be between (0, 9223372036854775807] (current value = -1000000L).'
    )
    expect(err(project([F.window("ts", "1 second", "2 seconds")])).message).toBe(
      '[DATATYPE_MISMATCH.PARAMETER_CONSTRAINT_VIOLATION] Cannot resolve "window(ts, 1000000, 2000000, 0)" due to data type mismatch: The `slide_duration`(2000000L) must be <= the `window_duration`(1000000L).'
    )
    expect(err(project([F.window("ts", "1 second", "1 second", "-1 minute")])).message).toBe(
      '[DATATYPE_MISMATCH.PARAMETER_CONSTRAINT_VIOLATION] Cannot resolve "window(ts, 1000000, 1000000, -60000000)" due to data type mismatch: The `abs(start_time)`(60000000L) must be < the `slide_duration`(1000000L).'
    )
    expect(err(project([F.window("a", "10 seconds")])).message).toBe(
      '[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve "window(a, 10000000, 10000000, 0)" due to data type mismatch: The first parameter requires the ("(TIMESTAMP OR TIMESTAMP WITHOUT TIME ZONE)" or "STRUCT<start: TIMESTAMP, end: TIMESTAMP>" or "STRUCT<start: TIMESTAMP_NTZ, end: TIMESTAMP_NTZ>") type, however "a" has the type "INT".'
    )
  })

  it("windows a window column by its window_time, as Spark does for chained window aggregations", () => {
    const first = aggregate([F.window("ts", "10 seconds")], [F.window("ts", "10 seconds"), F.count("*").as("n")])
    const p = ok(aggregate([F.window("window", "1 minute")], [F.window("window", "1 minute"), F.sum("n")], first))
    expect(norm(treeString(p, "analyzed").split("\n").slice(0, 2).join("\n"))).toBe(
      [
        "Aggregate [window#g1], [window#g1 AS window#g2, sum(n#g3L) AS sum(n)#g4L]",
        "+- Generate window(window_time(window#g5), 60000000, 60000000, 0), false, [window#g1]"
      ].join("\n")
    )
  })

  it("rejects two different windows in one operator", () => {
    expect(err(aggregate([F.window("ts", "5 minutes"), F.window("ts", "10 minutes")], [F.count("*")])).message).toBe(
      "Multiple time/session window expressions would result in a cartesian product of rows, therefore they are currently not supported."
    )
  })

  it("carries the time column's watermark onto the window column", () => {
    const wm: P.EventTimeWatermark = {
      _tag: "EventTimeWatermark",
      planId: 900713,
      eventTime: col("ts").expr,
      delayMs: 10000,
      child: t
    }
    const p = ok(
      aggregate([F.window("ts", "10 seconds"), col("s")], [F.window("ts", "10 seconds"), col("s"), F.count("*")], wm)
    )
    expect(norm(treeString(p, "analyzed"))).toBe(
      [
        "Aggregate [window#g1-T10000ms, s#900003], [window#g1-T10000ms AS window#g2-T10000ms, s#900003, count(1) AS count(1)#g3L]",
        "+- Generate window(ts#900004-T10000ms, 10000000, 10000000, 0), false, [window#g1-T10000ms]",
        "   +- EventTimeWatermark ts#900004: timestamp, 10 seconds",
        `      +- LocalRelation <empty>, ${T_OUT}`,
        ""
      ].join("\n")
    )
    expect(output(p)[0].eventTimeDelayMs).toBe(10000)
  })
})

describe("joins", () => {
  it("resolves a condition against both sides and makes the outer side nullable", () => {
    const p = ok(join(u, w, "left_outer", col("k").eq(col("p"))))
    expect(treeString(p, "analyzed").split("\n")[0]).toBe("Join LeftOuter, (k#900021 = p#900051)")
    expect(output(p).map((a) => [a.name, a.nullable])).toEqual([
      ["k", false],
      ["v", true],
      ["a", true],
      ["p", true],
      ["q", true]
    ])
    expect(output(ok(join(u, w, "right_outer", col("k").eq(col("p")))))[0].nullable).toBe(true)
    expect(output(ok(join(u, w, "left_semi", col("k").eq(col("p"))))).map((a) => a.name)).toEqual(["k", "v", "a"])
  })

  it("implements USING joins with Spark's output columns", () => {
    expect(tree(join(t, u, "inner", undefined, ["a"]))).toBe(
      [
        "Project [a#900001, b#900002L, s#900003, ts#900004, arr#900005, m#900006, st#900007, flag#900008, d#900009, dbl#900010, k#900021, v#900022]",
        "+- Join Inner, (cast(a#900001 as bigint) = a#900023L)",
        `   :- LocalRelation <empty>, ${T_OUT}`,
        "   +- LocalRelation <empty>, [k#900021, v#900022, a#900023L]",
        ""
      ].join("\n")
    )
    const ww = rel(900105, [attr("k", T.IntegerType, 900061), attr("r", T.StringType, 900062)])
    expect(tree(join(u, ww, "full_outer", undefined, ["K"]))).toBe(
      [
        "Project [coalesce(k#900021, k#900061) AS k#g1, v#900022, a#900023L, r#900062]",
        "+- Join FullOuter, (k#900021 = k#900061)",
        "   :- LocalRelation <empty>, [k#900021, v#900022, a#900023L]",
        "   +- LocalRelation <empty>, [k#900061, r#900062]",
        ""
      ].join("\n")
    )
    expect(norm(treeString(ok(join(u, ww, "right_outer", undefined, ["k"])), "analyzed").split("\n")[0])).toBe(
      "Project [k#900061, v#900022, a#900023L, r#900062]"
    )
    expect(norm(treeString(ok(join(u, ww, "left_anti", undefined, ["k"])), "analyzed").split("\n")[0])).toBe(
      "Project [k#900021, v#900022, a#900023L]"
    )
    const full = ok(join(u, ww, "full_outer", undefined, ["k"]))
    expect(output(full).map((a) => a.nullable)).toEqual([true, true, true, true])
  })

  it("reports a missing USING column and a non-boolean condition", () => {
    expect(err(join(t, u, "inner", undefined, ["b"])).message).toBe(
      "[UNRESOLVED_USING_COLUMN_FOR_JOIN] USING column `b` cannot be resolved on the right side of the join. The right-side columns: [`a`, `k`, `v`]."
    )
    expect(err(join(u, w, "inner", col("k"))).message).toBe(
      '[JOIN_CONDITION_IS_NOT_BOOLEAN_TYPE] The join condition "k" has the invalid type "INT", expected "BOOLEAN".'
    )
  })
})

describe("set operations", () => {
  it("widens union columns positionally with a Project on every child", () => {
    expect(tree(union([v, v2]))).toBe(
      [
        "Union false, false",
        ":- Project [cast(x#900031L as string) AS x#g1, y#900032, z#900033]",
        ":  +- LocalRelation <empty>, [x#900031L, y#900032, z#900033]",
        "+- Project [y#900041, x#900042, z#900043]",
        "   +- LocalRelation <empty>, [y#900041, x#900042, z#900043]",
        ""
      ].join("\n")
    )
    const p = ok(union([v, v2]))
    expect(output(p).map((a) => [a.name, a.dataType._tag])).toEqual([
      ["x", "string"],
      ["y", "integer"],
      ["z", "boolean"]
    ])
  })

  it("reorders by name for unionByName and fills missing columns with nulls when allowed", () => {
    expect(tree(union([v, v2], true))).toBe(
      [
        "Union true, false",
        ":- Project [x#900031L, cast(y#900032 as string) AS y#g1, z#900033]",
        ":  +- LocalRelation <empty>, [x#900031L, y#900032, z#900033]",
        "+- Project [cast(x#900042 as bigint) AS x#g2L, y#900041, z#900043]",
        "   +- Project [x#900042, y#900041, z#900043]",
        "      +- LocalRelation <empty>, [y#900041, x#900042, z#900043]",
        ""
      ].join("\n")
    )
    expect(output(ok(union([v, w], true, true))).map((a) => a.name)).toEqual(["x", "y", "z", "p", "q"])
    expect(err(union([v, w], true)).message).toBe('Cannot resolve column name "x" among (p, q).')
  })

  it("reports NUM_COLUMNS_MISMATCH and INCOMPATIBLE_COLUMN_TYPE", () => {
    expect(err(union([v, w])).message).toBe(
      "[NUM_COLUMNS_MISMATCH] UNION can only be performed on inputs with the same number of columns, but the first input has 3 columns and the second input has 2 columns."
    )
    expect(err(union([u, v])).message).toBe(
      '[INCOMPATIBLE_COLUMN_TYPE] UNION can only be performed on tables with compatible column types. The third column of the second table is "BOOLEAN" type which is not compatible with "BIGINT" at the same column of the first table..'
    )
  })
})

describe("withColumn, withColumnRenamed, drop", () => {
  it("replaces a same-named column in place and appends a new one", () => {
    expect(
      tree({
        _tag: "WithColumns",
        planId: 900700,
        names: ["Y", "w"],
        columns: [col("x").plus(1).expr, lit(1).expr],
        child: v
      })
    ).toBe(
      [
        "Project [x#900031L, (x#900031L + cast(1 as bigint)) AS Y#g1L, z#900033, 1 AS w#g2]",
        "+- LocalRelation <empty>, [x#900031L, y#900032, z#900033]",
        ""
      ].join("\n")
    )
    expect(
      err({ _tag: "WithColumns", planId: 900700, names: ["n", "N"], columns: [lit(1).expr, lit(2).expr], child: v })
        .message
    ).toBe("[COLUMN_ALREADY_EXISTS] The column `N` already exists. Choose another name or rename the existing column.")
  })

  it("renames in order, ignoring missing columns", () => {
    expect(
      tree({
        _tag: "WithColumnsRenamed",
        planId: 900702,
        renames: [
          ["X", "x2"],
          ["nope", "q"],
          ["x2", "x3"]
        ],
        child: v
      })
    ).toBe(
      [
        "Project [x#900031L AS x3#g1L, y#900032, z#900033]",
        "+- LocalRelation <empty>, [x#900031L, y#900032, z#900033]",
        ""
      ].join("\n")
    )
  })

  it("drops by name (missing is a no-op) and by column reference", () => {
    expect(
      tree({
        _tag: "Drop",
        planId: 900704,
        columns: [col("X").expr, col("nope").expr, col("y", 900102).expr, col("q", 900102).expr],
        child: v
      })
    ).toBe(["Project [z#900033]", "+- LocalRelation <empty>, [x#900031L, y#900032, z#900033]", ""].join("\n"))
  })
})

describe("other operators", () => {
  it("resolves sort orders, sorting by a column the projection dropped", () => {
    const sorted: P.Sort = {
      _tag: "Sort",
      planId: 900706,
      order: [col("z").asc().expr as E.SortOrder],
      global: true,
      child: project([col("x")], v, 900707)
    }
    expect(tree(sorted)).toBe(
      [
        "Project [x#900031L]",
        "+- Sort [z#900033 ASC NULLS FIRST], true",
        "   +- Project [x#900031L, z#900033]",
        "      +- LocalRelation <empty>, [x#900031L, y#900032, z#900033]",
        ""
      ].join("\n")
    )
    expect(
      err({ _tag: "Sort", planId: 900708, order: [col("m").asc().expr as E.SortOrder], global: true, child: t }).message
    ).toBe(
      '[DATATYPE_MISMATCH.INVALID_ORDERING_TYPE] Cannot resolve "m ASC NULLS FIRST" due to data type mismatch: The `sortorder` does not support ordering on type "MAP<STRING, INT>".'
    )
  })

  it("rejects a negative limit", () => {
    expect(err({ _tag: "Limit", planId: 900709, n: -1, child: v }).message).toBe(
      '[INVALID_LIMIT_LIKE_EXPRESSION.IS_NEGATIVE] The limit like expression "-1" is invalid. The limit expression must be equal to or greater than 0, but got -1.'
    )
  })

  it("resolves dropDuplicates column names to keys", () => {
    const d = ok({
      _tag: "Deduplicate",
      planId: 900710,
      columnNames: ["Y", "x"],
      keys: undefined,
      withinWatermark: false,
      child: v
    })
    expect(d._tag === "Deduplicate" && d.keys?.map((k) => k.exprId)).toEqual([900032, 900031])
    const all = ok({
      _tag: "Deduplicate",
      planId: 900711,
      columnNames: undefined,
      keys: undefined,
      withinWatermark: true,
      child: v
    })
    expect(treeString(all, "analyzed").split("\n")[0]).toBe(
      "DeduplicateWithinWatermark [x#900031L, y#900032, z#900033]"
    )
    expect(
      err({
        _tag: "Deduplicate",
        planId: 900712,
        columnNames: ["q"],
        keys: undefined,
        withinWatermark: false,
        child: v
      }).message
    ).toBe('Cannot resolve column name "q" among (x, y, z).')
  })

  it("checks filter conditions", () => {
    expect(err({ _tag: "Filter", planId: 900717, condition: col("a").plus(1).expr, child: t }).message).toBe(
      '[DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN] Cannot resolve "(a + 1)" due to data type mismatch: Filter expression "(a + 1)" of type "INT" is not a boolean.'
    )
    expect(err({ _tag: "Filter", planId: 900718, condition: F.sum("a").gt(1).expr, child: t }).message).toBe(
      '[INVALID_WHERE_CONDITION] The WHERE condition "(sum(a) > 1)" contains invalid expressions: sum(a).\nRewrite the query to avoid window functions, aggregate functions, and generator functions in the WHERE clause.'
    )
  })

  it("marks the event-time column with the watermark delay and checks its type", () => {
    const base = rel(900106, [
      attr("ts", T.TimestampType, 900071),
      { ...attr("old", T.TimestampType, 900072), eventTimeDelayMs: 5 }
    ])
    const wm: P.EventTimeWatermark = {
      _tag: "EventTimeWatermark",
      planId: 900713,
      eventTime: col("TS").expr,
      delayMs: 10000,
      child: base
    }
    const p = ok(project([col("ts"), col("ts").as("t2"), col("old")], wm))
    expect(norm(treeString(p, "analyzed"))).toBe(
      [
        "Project [ts#900071-T10000ms, ts#900071-T10000ms AS t2#g1-T10000ms, old#900072]",
        // Spark keeps the event-time column as the user wrote it
        "+- EventTimeWatermark TS#900071: timestamp, 10 seconds",
        "   +- LocalRelation <empty>, [ts#900071, old#900072-T5ms]",
        ""
      ].join("\n")
    )
    expect(output(p).map((a) => a.eventTimeDelayMs)).toEqual([10000, 10000, undefined])
    expect(
      err({ _tag: "EventTimeWatermark", planId: 900715, eventTime: col("s").expr, delayMs: 10000, child: t }).message
    ).toBe(
      '[EVENT_TIME_IS_NOT_ON_TIMESTAMP_TYPE] The event time `s` has the invalid type "STRING", but expected "TIMESTAMP".'
    )
  })

  it("passes typed operators through and keeps streaming relations", () => {
    const s = rel(900107, [attr("n", T.LongType, 900081)], true)
    const tf: P.TypedFilter = { _tag: "TypedFilter", planId: 900800, predicate: () => true, child: s }
    const p = ok(project([col("n")], tf))
    expect(P.isStreaming(p)).toBe(true)
    expect(treeString(p, "analyzed")).toBe(
      ["Project [n#900081L]", "+- TypedFilter <function1>", "   +- LocalRelation <empty>, [n#900081L]", ""].join("\n")
    )
  })

  it("uses the default conf", () => {
    expect(Result.isSuccess(analyze(project([col("A")]), emptyCatalog, defaultAnalyzerConf))).toBe(true)
  })
})
