/**
 * `translatePlan` / `translateExpression`: DataFrames built with a LOCAL session translate to the
 * Spark Connect protos pyspark would send (structure and key fields), and what cannot cross the
 * wire (JavaScript functions, MemoryStream) is refused with an `AnalysisError` naming the
 * operator. The same relations run on a real Spark in `TranslateRemote.test.ts`.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Result, Schema } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import type * as PE from "../../connect/gen/spark/connect/expressions_pb.ts"
import { Aggregate_GroupType, Join_JoinType, SetOperation_SetOpType } from "../../connect/gen/spark/connect/relations_pb.ts"
import type * as PR from "../../connect/gen/spark/connect/relations_pb.ts"
import { intervalString, translateExpression, translatePlan, unparsedIdentifier } from "../../connect/Translate.ts"
import * as E from "../../core/Expression.ts"
import * as T from "../../core/DataType.ts"
import { F, GroupStateTimeout, MemoryStream, Session, type SessionShape, TimeMode } from "../../mod.ts"
import * as State from "../../structured/contracts/SessionState.ts"
import type { DataFrame } from "../../structured/api/DataFrame.ts"

const withSpark = <A>(f: (spark: SessionShape) => Effect.Effect<A, unknown, Session> | A): Promise<A> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const spark = yield* Session
      const out = f(spark)
      return Effect.isEffect(out) ? yield* (out as Effect.Effect<A, unknown, Session>) : (out as A)
    }).pipe(Effect.provide(Session.layer())) as Effect.Effect<A>
  )

const ok = (df: DataFrame<any>): PR.Relation => {
  const r = translatePlan(df.plan, df.state)
  if (Result.isFailure(r)) throw new Error(`unexpected refusal: ${r.failure.message}`)
  return r.success
}

const refusal = (df: DataFrame<any>): string => {
  const r = translatePlan(df.plan, df.state)
  if (Result.isSuccess(r)) throw new Error("expected a refusal")
  expect(r.failure._tag).toBe("AnalysisError")
  return r.failure.message
}

/** The relation's `relType.value` when its case is `c`. */
const as = <C extends NonNullable<PR.Relation["relType"]["case"]>>(
  rel: PR.Relation | undefined,
  c: C
): Extract<PR.Relation["relType"], { case: C }>["value"] => {
  expect(rel?.relType.case).toBe(c)
  return rel!.relType.value as never
}

const fnOf = (e: PE.Expression | undefined): PE.Expression_UnresolvedFunction => {
  expect(e?.exprType.case).toBe("unresolvedFunction")
  return e!.exprType.value as PE.Expression_UnresolvedFunction
}

const attrOf = (e: PE.Expression | undefined): PE.Expression_UnresolvedAttribute => {
  expect(e?.exprType.case).toBe("unresolvedAttribute")
  return e!.exprType.value as PE.Expression_UnresolvedAttribute
}

const litOf = (e: PE.Expression | undefined): PE.Expression_Literal["literalType"] => {
  expect(e?.exprType.case).toBe("literal")
  return (e!.exprType.value as PE.Expression_Literal).literalType
}

const aliasOf = (e: PE.Expression | undefined): PE.Expression_Alias => {
  expect(e?.exprType.case).toBe("alias")
  return e!.exprType.value as PE.Expression_Alias
}

const people = (spark: SessionShape) =>
  spark.createDataFrame(
    [
      { k: "a", v: 1, ts: new Date(1_000) },
      { k: "b", v: 2, ts: new Date(12_000) }
    ],
    "k STRING, v INT, ts TIMESTAMP"
  )

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-translate-"))
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }))

describe("relations", () => {
  it("a local relation is Arrow IPC with its schema as DDL, and every relation carries its plan id", async () => {
    const df = await withSpark(people)
    const rel = ok(df)
    expect(rel.common?.planId).toBe(BigInt(df.plan.planId))
    const local = as(rel, "localRelation")
    expect(local.schema).toBe("k STRING,v INT,ts TIMESTAMP")
    // An Arrow IPC stream starts with the continuation marker 0xFFFFFFFF.
    expect([...(local.data ?? new Uint8Array()).slice(0, 4)]).toEqual([255, 255, 255, 255])
  })

  it("filter and project with operators named as pyspark names them", async () => {
    const df = await withSpark((s) =>
      people(s)
        .where(F.col("v").gt(1).and(F.col("k").neq("x")))
        .select(F.col("k"), F.col("v").plus(1).as("w"), F.col("v").negate().as("n"))
    )
    const project = as(ok(df), "project")
    expect(project.expressions).toHaveLength(3)
    expect(attrOf(project.expressions[0]).unparsedIdentifier).toBe("k")
    const w = aliasOf(project.expressions[1])
    expect(w.name).toEqual(["w"])
    expect(fnOf(w.expr).functionName).toBe("+")
    expect(fnOf(aliasOf(project.expressions[2]).expr).functionName).toBe("negative")
    const filter = as(project.input, "filter")
    const and = fnOf(filter.condition)
    expect(and.functionName).toBe("and")
    const gt = fnOf(and.arguments[0])
    expect(gt.functionName).toBe(">")
    expect(attrOf(gt.arguments[0]).unparsedIdentifier).toBe("v")
    expect(litOf(gt.arguments[1])).toEqual({ case: "integer", value: 1 })
    // Spark's `=!=` is NOT (a = b), sent as pyspark does: not(==(a, b)).
    const not = fnOf(and.arguments[1])
    expect(not.functionName).toBe("not")
    expect(fnOf(not.arguments[0]).functionName).toBe("==")
    expect(as(filter.input, "localRelation").schema).toBe("k STRING,v INT,ts TIMESTAMP")
  })

  it("groupBy(window, k).agg sends the aggregates without the grouping columns", async () => {
    const df = await withSpark((s) =>
      people(s)
        .groupBy(F.window("ts", "10 seconds"), "k")
        .agg(F.count("*"), F.countDistinct("v").as("d"), F.first("v", true), F.approx_count_distinct("v", 0.1), F.last("v"))
    )
    const agg = as(ok(df), "aggregate")
    expect(agg.groupType).toBe(Aggregate_GroupType.GROUPBY)
    expect(agg.groupingExpressions).toHaveLength(2)
    const window = fnOf(agg.groupingExpressions[0])
    expect(window.functionName).toBe("window")
    expect(window.arguments.map((a, i) => (i === 0 ? attrOf(a).unparsedIdentifier : litOf(a).value))).toEqual([
      "ts",
      "10 seconds"
    ])
    expect(attrOf(agg.groupingExpressions[1]).unparsedIdentifier).toBe("k")
    expect(agg.aggregateExpressions).toHaveLength(5)
    const count = fnOf(agg.aggregateExpressions[0])
    expect(count.functionName).toBe("count")
    expect(litOf(count.arguments[0])).toEqual({ case: "integer", value: 1 })
    const distinct = fnOf(aliasOf(agg.aggregateExpressions[1]).expr)
    expect([distinct.functionName, distinct.isDistinct]).toEqual(["count", true])
    const first = fnOf(agg.aggregateExpressions[2])
    expect(first.functionName).toBe("first")
    expect(litOf(first.arguments[1])).toEqual({ case: "boolean", value: true })
    const approx = fnOf(agg.aggregateExpressions[3])
    expect(approx.functionName).toBe("approx_count_distinct")
    expect(litOf(approx.arguments[1])).toEqual({ case: "double", value: 0.1 })
    expect(litOf(fnOf(agg.aggregateExpressions[4]).arguments[1])).toEqual({ case: "boolean", value: false })
  })

  it("sliding windows with a start time and session windows take interval strings", async () => {
    const [sliding, session] = await withSpark((s) => [
      people(s).groupBy(F.window("ts", "1 minute", "30 seconds", "5 seconds")).count(),
      people(s).groupBy(F.session_window("ts", "90 seconds")).count()
    ])
    const w = fnOf(as(ok(sliding), "aggregate").groupingExpressions[0])
    expect(w.arguments.slice(1).map((a) => litOf(a).value)).toEqual(["1 minutes", "30 seconds", "5 seconds"])
    const count = aliasOf(as(ok(sliding), "aggregate").aggregateExpressions[0])
    expect(count.name).toEqual(["count"])
    const sw = fnOf(as(ok(session), "aggregate").groupingExpressions[0])
    expect(sw.functionName).toBe("session_window")
    expect(litOf(sw.arguments[1])).toEqual({ case: "string", value: "1 minutes 30 seconds" })
  })

  it("joins: type, condition with df.col plan ids (self-join), using columns", async () => {
    const [self, using, semi] = await withSpark((s) => {
      const p = people(s)
      const q = p.select(F.col("v").as("v2"), F.col("k"))
      return [
        p.join(q, p.col("v").eq(q.col("v2")), "left_outer"),
        p.join(q, ["k"], "full"),
        p.join(q, "k", "left_anti")
      ] as const
    })
    const join = as(ok(self), "join")
    expect(join.joinType).toBe(Join_JoinType.LEFT_OUTER)
    const eq = fnOf(join.joinCondition)
    expect(eq.functionName).toBe("==")
    // df.col("x") is tied to its DataFrame: the attribute's plan id is that relation's plan id.
    expect(attrOf(eq.arguments[0]).planId).toBe(join.left?.common?.planId)
    expect(attrOf(eq.arguments[1]).planId).toBe(join.right?.common?.planId)
    expect(join.right?.common?.planId).not.toBe(join.left?.common?.planId)
    const u = as(ok(using), "join")
    expect([u.joinType, u.usingColumns, u.joinCondition]).toEqual([Join_JoinType.FULL_OUTER, ["k"], undefined])
    expect(as(ok(semi), "join").joinType).toBe(Join_JoinType.LEFT_ANTI)
  })

  it("sort (global and within partitions), limit, alias", async () => {
    const [sorted, local] = await withSpark((s) => [
      people(s).orderBy(F.col("v").desc(), "k").limit(5).alias("t"),
      people(s).sortWithinPartitions(F.col("k").asc_nulls_last())
    ])
    const alias = as(ok(sorted), "subqueryAlias")
    expect(alias.alias).toBe("t")
    const limit = as(alias.input, "limit")
    expect(limit.limit).toBe(5)
    const sort = as(limit.input, "sort")
    expect(sort.isGlobal).toBe(true)
    expect(sort.order.map((o) => [o.direction, o.nullOrdering])).toEqual([
      [2, 2], // DESCENDING, NULLS LAST
      [1, 1] // ASCENDING, NULLS FIRST
    ])
    const within = as(ok(local), "sort")
    expect(within.isGlobal).toBe(false)
    expect([within.order[0].direction, within.order[0].nullOrdering]).toEqual([1, 2])
  })

  it("distinct, dropDuplicates and dropDuplicatesWithinWatermark are Deduplicate", async () => {
    const [distinct, dedup, within] = await withSpark((s) => [
      people(s).distinct(),
      people(s).dropDuplicates(["k"]),
      people(s).withWatermark("ts", "1 minute").dropDuplicatesWithinWatermark()
    ])
    expect(as(ok(distinct), "deduplicate").allColumnsAsKeys).toBe(true)
    const d = as(ok(dedup), "deduplicate")
    expect([d.columnNames, d.withinWatermark]).toEqual([["k"], false])
    const w = as(ok(within), "deduplicate")
    expect([w.allColumnsAsKeys, w.withinWatermark]).toEqual([true, true])
    const wm = as(w.input, "withWatermark")
    expect([wm.eventTime, wm.delayThreshold]).toEqual(["ts", "1 minutes"])
  })

  it("union, unionByName(allowMissingColumns) and a chain of three", async () => {
    const [byName, three] = await withSpark((s) => [
      people(s).unionByName(people(s), true),
      people(s).union(people(s)).union(people(s))
    ])
    const u = as(ok(byName), "setOp")
    expect([u.setOpType, u.isAll, u.byName, u.allowMissingColumns]).toEqual([
      SetOperation_SetOpType.UNION,
      true,
      true,
      true
    ])
    const outer = as(ok(three), "setOp")
    expect(as(outer.leftInput, "setOp").byName).toBe(false)
    expect(outer.rightInput?.relType.case).toBe("localRelation")
  })

  it("withColumn(s), withColumnRenamed and drop", async () => {
    const df = await withSpark((s) => {
      const x = people(s).withColumns({ a: F.lit(1), b: F.col("v") }).withColumnRenamed("k", "key")
      // Names go to column_names (Spark ignores a missing one); a Column of a DataFrame to columns.
      return x.drop("ts", F.col("nope"), x.col("a"))
    })
    const drop = as(ok(df), "drop")
    expect(drop.columnNames).toEqual(["ts", "nope"])
    expect(attrOf(drop.columns[0]).unparsedIdentifier).toBe("a")
    expect(attrOf(drop.columns[0]).planId).toBe(drop.input?.common?.planId)
    const renamed = as(drop.input, "withColumnsRenamed")
    expect(renamed.renames.map((r) => [r.colName, r.newColName])).toEqual([["k", "key"]])
    const wc = as(renamed.input, "withColumns")
    expect(wc.aliases.map((a) => a.name)).toEqual([["a"], ["b"]])
  })

  it("explode-style generators are functions in a select; a session table is a named table", async () => {
    const df = await withSpark((s) =>
      s
        .createDataFrame([{ xs: [1, 2] }], "xs ARRAY<INT>")
        .select(F.explode("xs").as("x"), F.posexplode_outer("xs"), F.current_timestamp())
    )
    const names = as(ok(df), "project").expressions.map((e, i) =>
      i === 0 ? fnOf(aliasOf(e).expr).functionName : fnOf(e).functionName
    )
    expect(names).toEqual(["explode", "posexplode_outer", "current_timestamp"])
    const table = State.tableRelation("Counts", [E.attribute("n", T.LongType)])
    const read = as(ok(new (df.constructor as typeof DataFrame)(df.state, table)), "read")
    expect(read.readType).toMatchObject({ case: "namedTable", value: { unparsedIdentifier: "counts" } })
  })

  it("an analyzer-made Generate is a select of every column and the aliased generator, as pyspark sends it", async () => {
    const df = await withSpark((s) => s.createDataFrame([{ xs: [1, 2] }], "xs ARRAY<INT>"))
    const generate = {
      _tag: "Generate" as const,
      planId: 777_001,
      generator: F.posexplode("xs").expr,
      generatorOutput: [E.attribute("pos", T.IntegerType), E.attribute("col", T.IntegerType)],
      child: df.plan
    }
    const project = as(ok(new (df.constructor as typeof DataFrame)(df.state, generate)), "project")
    expect(project.expressions[0].exprType.case).toBe("unresolvedStar")
    const alias = aliasOf(project.expressions[1])
    expect([alias.name, fnOf(alias.expr).functionName]).toEqual([["pos", "col"], "posexplode"])
  })

  it("a window whose duration is not an interval string is refused before anything is sent", async () => {
    const df = await withSpark((s) => people(s).groupBy(F.window("ts", "ten seconds")).count())
    expect(refusal(df)).toContain("interval strings")
  })

  it("batch reads send the schema only when the user gave one", async () => {
    const file = path.join(tmp, "people.json")
    fs.writeFileSync(file, '{"a":1,"b":"x"}\n')
    const [inferred, given] = await withSpark((s) =>
      Effect.all([s.read.json(file), s.read.schema("a INT, b STRING").option("mode", "PERMISSIVE").json(file)])
    )
    const r1 = as(ok(inferred), "read")
    expect(r1.isStreaming).toBe(false)
    expect(r1.readType).toMatchObject({ case: "dataSource", value: { format: "json", paths: [file] } })
    expect((r1.readType.value as PR.Read_DataSource).schema).toBeUndefined()
    const r2 = as(ok(given), "read").readType.value as PR.Read_DataSource
    expect([r2.schema, r2.options]).toEqual(["a INT,b STRING", { mode: "PERMISSIVE" }])
  })

  it("streaming sources are streaming reads with their options", async () => {
    const [rate, json, kafka, socket] = await withSpark((s) => [
      s.readStream.format("rate").option("rowsPerSecond", 10).load(),
      s.readStream.schema("a INT").json(tmp),
      s.readStream
        .format("kafka")
        .option("kafka.bootstrap.servers", "localhost:9092")
        .option("subscribe", "events")
        .load(),
      s.readStream.format("socket").option("host", "localhost").option("port", 9999).load()
    ])
    const r = as(ok(rate), "read")
    expect(r.isStreaming).toBe(true)
    expect(r.readType.value).toMatchObject({ format: "rate", options: { rowsPerSecond: "10" }, paths: [] })
    expect((r.readType.value as PR.Read_DataSource).schema).toBeUndefined()
    expect(as(ok(json), "read").readType.value).toMatchObject({ format: "json", schema: "a INT", paths: [tmp], options: {} })
    expect(as(ok(kafka), "read").readType.value).toMatchObject({
      format: "kafka",
      options: { "kafka.bootstrap.servers": "localhost:9092", subscribe: "events" }
    })
    expect(as(ok(socket), "read").readType.value).toMatchObject({ format: "socket", options: { host: "localhost", port: "9999" } })
  })

  it("withWatermark formats the delay back into an interval string Spark parses", () => {
    expect(intervalString(10_000)).toBe("10 seconds")
    expect(intervalString(60_000)).toBe("1 minutes")
    expect(intervalString(5_400_000)).toBe("1 hours 30 minutes")
    expect(intervalString(31 * 86_400_000)).toBe("31 days")
    expect(intervalString(1_500)).toBe("1 seconds 500 milliseconds")
    expect(intervalString(0)).toBe("0 seconds")
    expect(intervalString(-300_000)).toBe("-5 minutes")
  })
})

describe("expressions", () => {
  const tr = (e: E.Expression): PE.Expression => {
    const r = translateExpression(e)
    if (Result.isFailure(r)) throw new Error(r.failure.message)
    return r.success
  }

  it("names with dots and backquotes are quoted; stars carry their target", () => {
    expect(unparsedIdentifier(["window", "start"])).toBe("window.start")
    expect(unparsedIdentifier(["a.b", "c`d"])).toBe("`a.b`.`c``d`")
    expect(attrOf(tr(F.col("`a.b`.c").expr)).unparsedIdentifier).toBe("`a.b`.c")
    const star = tr(F.col("t.*").expr)
    expect(star.exprType).toMatchObject({ case: "unresolvedStar", value: { unparsedTarget: "t.*" } })
    expect(attrOf(tr(E.attribute("x.y", T.LongType))).unparsedIdentifier).toBe("`x.y`")
  })

  it("literals of every type: long vs integer, timestamps in micros, dates in days, typed nulls", () => {
    expect(litOf(tr(F.lit(7).expr))).toEqual({ case: "integer", value: 7 })
    expect(litOf(tr(F.lit(3_000_000_000).expr))).toEqual({ case: "double", value: 3_000_000_000 })
    expect(litOf(tr(E.literal(3_000_000_000, T.LongType)))).toEqual({ case: "long", value: 3_000_000_000n })
    expect(litOf(tr(F.lit(2.5).expr))).toEqual({ case: "double", value: 2.5 })
    expect(litOf(tr(F.lit(new Date(1_500)).expr))).toEqual({ case: "timestamp", value: 1_500_000n })
    expect(litOf(tr(E.literal(19_000, T.DateType)))).toEqual({ case: "date", value: 19_000 })
    expect(litOf(tr(F.lit("s").expr))).toEqual({ case: "string", value: "s" })
    expect(litOf(tr(F.lit(true).expr))).toEqual({ case: "boolean", value: true })
    expect(litOf(tr(F.lit(new Uint8Array([1, 2])).expr))).toEqual({ case: "binary", value: new Uint8Array([1, 2]) })
    const nul = litOf(tr(E.literal(null, T.StringType)))
    expect(nul.case).toBe("null")
    expect((nul.value as { kind: { case: string } }).kind.case).toBe("string")
    const arr = tr(F.lit(["x", null]).expr).exprType.value as PE.Expression_Literal
    expect(arr.dataType?.kind.case).toBe("array")
    const elems = (arr.literalType.value as PE.Expression_Literal_Array).elements.map((l) => l.literalType.case)
    expect(elems).toEqual(["string", "null"])
    const st = tr(E.literal([1, "a"], T.struct([T.field("i", T.IntegerType), T.field("s", T.StringType)])))
    expect((st.exprType.value as PE.Expression_Literal).literalType.case).toBe("struct")
    const mp = tr(E.literal(new Map([["k", 1]]), T.map(T.StringType, T.IntegerType)))
    expect((mp.exprType.value as PE.Expression_Literal).literalType.case).toBe("map")
    const iv = litOf(tr(E.literal({ months: 1, days: 2, micros: 3 }, T.CalendarIntervalType)))
    expect(iv).toMatchObject({ case: "calendarInterval", value: { months: 1, days: 2, microseconds: 3n } })
  })

  it("unary and binary operators, in, cast, when, getField", () => {
    const names = [
      F.col("a").isNull(),
      F.col("a").isNotNull(),
      F.col("a").not(),
      F.col("a").minus(1),
      F.col("a").multiply(1),
      F.col("a").divide(1),
      F.col("a").mod(1),
      F.col("a").lt(1),
      F.col("a").leq(1),
      F.col("a").geq(1),
      F.col("a").eqNullSafe(1),
      F.col("a").or(F.col("b")),
      F.col("a").isin(1, 2)
    ].map((c) => fnOf(tr(c.expr)).functionName)
    expect(names).toEqual(["isnull", "isnotnull", "not", "-", "*", "/", "%", "<", "<=", ">=", "<=>", "or", "in"])
    expect(fnOf(tr({ _tag: "BinaryExpression", op: "!=", left: F.col("a").expr, right: F.lit(1).expr })).functionName).toBe("!=")
    expect(fnOf(tr(F.col("a").isin(1, 2).expr)).arguments).toHaveLength(3)
    const cast = tr(F.col("a").cast("bigint").expr)
    expect(cast.exprType.case).toBe("cast")
    expect((cast.exprType.value as PE.Expression_Cast).castToType).toMatchObject({ case: "type", value: { kind: { case: "long" } } })
    const when = fnOf(tr(F.when(F.col("a").gt(1), "x").when(F.col("a").lt(0), "y").otherwise("z").expr))
    expect([when.functionName, when.arguments.length]).toEqual(["when", 5])
    expect(fnOf(tr(F.when(F.col("a").gt(1), "x").expr)).arguments).toHaveLength(2)
    const get = tr(F.col("s").getField("f").expr)
    expect(get.exprType).toMatchObject({
      case: "unresolvedExtractValue",
      value: { extraction: { exprType: { case: "literal", value: { literalType: { case: "string", value: "f" } } } } }
    })
  })

  it("scalar functions by their Spark names; sort orders", () => {
    expect(fnOf(tr(F.upper("k").expr)).functionName).toBe("upper")
    expect(fnOf(tr(F.col("k").startsWith("a").expr)).functionName).toBe("startswith")
    expect(fnOf(tr(F.date_format("ts", "yyyy").expr)).arguments).toHaveLength(2)
    const so = tr(F.col("a").desc_nulls_first().expr)
    expect(so.exprType).toMatchObject({ case: "sortOrder", value: { direction: 2, nullOrdering: 1 } })
  })

  it("an invalid column fails with its message", () => {
    const r = translateExpression(F.col("a").otherwise(1).expr)
    expect(Result.isFailure(r) && r.failure.message).toBe(
      "otherwise() can only be applied once on a Column previously generated by when()"
    )
  })
})

describe("refusals", () => {
  const WHY = "a JavaScript function cannot run on a Spark Connect server"
  const Out = Schema.Struct({ k: Schema.String, n: Schema.Number })

  it("map, flatMap and filter with a JavaScript function", async () => {
    const [map, flatMap, filter] = await withSpark((s) => [
      people(s).map((r) => ({ k: r.k as string, n: 1 }), Out),
      people(s).flatMap((r) => [{ k: r.k as string, n: 1 }], Out),
      people(s).filter((r) => r.v === 1)
    ])
    expect(refusal(map)).toContain("map (MapElements)")
    expect(refusal(map)).toContain(WHY)
    expect(refusal(flatMap)).toContain("flatMap (MapElements)")
    expect(refusal(filter)).toContain("filter with a JavaScript function (TypedFilter)")
    expect(refusal(filter)).toContain(WHY)
  })

  it("a user-defined function (F.udf), in a select, a filter or an aggregate's argument", async () => {
    const plusOne = F.udf((v: number | null) => (v === null ? null : v + 1), "int")
    const [select, where, agg] = await withSpark((s) => [
      people(s).select(plusOne("v")),
      people(s).where(plusOne.withName("inc")(F.col("v")).gt(1)),
      people(s).groupBy("k").agg(F.sum(plusOne("v")))
    ])
    expect(refusal(select)).toContain("The user-defined function UDF (F.udf) cannot be translated for Spark")
    expect(refusal(select)).toContain(WHY)
    expect(refusal(where)).toContain("The user-defined function inc (F.udf)")
    expect(refusal(agg)).toContain(WHY)
    // the same query without the UDF crosses
    ok(await withSpark((s) => people(s).select(F.col("v").plus(1))))
  })

  it("the whole plan is walked: a refusal below other operators is found, the outermost first", async () => {
    const [deep, two] = await withSpark((s) => {
      const mapped = people(s).map((r) => ({ k: r.k as string, n: 1 }), Out)
      return [
        mapped.where(F.col("n").gt(0)).groupBy("k").count().join(people(s), "k").orderBy("k"),
        people(s).union(mapped.filter((r) => r.n > 0) as never)
      ]
    })
    expect(refusal(deep)).toContain("map (MapElements)")
    expect(refusal(two)).toContain("(TypedFilter)")
  })

  it("transformWithState, flatMapGroupsWithState and mapGroupsWithState", async () => {
    const processor = {
      outputSchema: Out,
      init: () => undefined,
      handleInputRows: (key: string) => [{ k: key, n: 1 }]
    }
    const [tws, fmgws, mgws] = await withSpark((s) => {
      const grouped = people(s).groupByKey((r) => r.k as string, Schema.String)
      return [
        grouped.transformWithState(processor as never, { timeMode: TimeMode.None, outputMode: "update" }),
        grouped.flatMapGroupsWithState(
          { outputMode: "update", timeout: GroupStateTimeout.NoTimeout, stateSchema: Schema.Number, outputSchema: Out },
          (k) => [{ k, n: 1 }]
        ),
        grouped.mapGroupsWithState(
          { timeout: GroupStateTimeout.NoTimeout, stateSchema: Schema.Number, outputSchema: Out },
          (k) => ({ k, n: 1 })
        )
      ] as const
    })
    expect(refusal(tws as DataFrame<any>)).toContain("transformWithState")
    expect(refusal(tws as DataFrame<any>)).toContain(WHY)
    expect(refusal(fmgws as DataFrame<any>)).toContain("flatMapGroupsWithState")
    expect(refusal(mgws as DataFrame<any>)).toContain("mapGroupsWithState")
  })

  it("MemoryStream cannot be read by Spark", async () => {
    const df = await withSpark(() =>
      Effect.map(MemoryStream.make(Schema.Struct({ k: Schema.String })), (m) => m.toDF().select("k"))
    )
    expect(refusal(df)).toContain("MemoryStream")
    // Without the session's context, the `memory` format alone identifies it.
    const r = translatePlan(df.plan)
    expect(Result.isFailure(r) && r.failure.message).toContain("MemoryStream")
  })
})
