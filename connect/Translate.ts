/**
 * Translation of tributary's logical plans and expressions into Spark Connect protos.
 *
 * A remote session (`Session.layer({ remote: "sc://…" })`) builds the same UNANALYZED plans as
 * a local one; when an action runs, `translatePlan` turns `df.plan` into a `spark.connect.Relation`
 * and Spark analyses it. The encoding follows the official Python client (pyspark's
 * `sql/connect/plan.py`, `expressions.py`, `column.py`, `functions/builtin.py`) so that Spark's
 * `SparkConnectPlanner` reads each node exactly as it reads pyspark's:
 *
 * - every relation carries `common.plan_id` (the node's `planId`) and `df.col("x")` carries the
 *   same id on its `UnresolvedAttribute`, which is how Spark resolves `df["x"]` in a self-join;
 * - operators are Spark's function names (`==`, `!=`, `negative`, `isnull`, `in`, `when`);
 * - `window`/`session_window` take interval strings, which the planner turns into `TimeWindow`
 *   and `SessionWindow` named `window`/`session_window`;
 * - what cannot cross the wire (JavaScript functions, in-process sources) is refused with an
 *   `AnalysisError` naming the operator, before anything is sent.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { translatePlan } from "./Translate.ts"
 * // const relation = translatePlan(df.plan, df.state)
 * // if (Result.isSuccess(relation)) send(relation.success)
 * ```
 * @since 0.4.0
 */
import { create } from "@bufbuild/protobuf"
import { Result } from "effect"
import * as T from "../core/DataType.ts"
import { AnalysisError } from "../core/Errors.ts"
import type * as E from "../core/Expression.ts"
import { parseInterval } from "../core/Durations.ts"
import type * as Plan from "../core/LogicalPlan.ts"
import { sourceText } from "../core/sql/ExpressionParser.ts"
import { REMOTE_RELATION_FORMAT } from "../structured/contracts/Remote.ts"
import { TABLE_FORMAT } from "../structured/contracts/SessionState.ts"
import { encodeRows } from "./Arrow.ts"
import * as PE from "./gen/spark/connect/expressions_pb.ts"
import * as PR from "./gen/spark/connect/relations_pb.ts"
import { toDDL, toSparkType } from "./Types.ts"

/**
 * What translation needs from the session. `SessionState` satisfies it, so a caller passes
 * `df.state`.
 */
export interface TranslateContext {
  /** In-process streaming sources (`MemoryStream`) by `sourceKey`: these cannot cross the wire. */
  readonly memorySources: { readonly has: (sourceKey: string) => boolean }
  /** The format of relations that read a session table (`SessionState.TABLE_FORMAT`). */
  readonly tableFormat: string
  /** Relations Spark handed back (`spark.sql` on a remote session), by the id their plan carries. */
  readonly remoteRelations?: { readonly get: (id: string) => PR.Relation | undefined }
}

/**
 * The context when the caller has no session at hand: in-process sources are still recognised by
 * their format (`MemoryStream` reads as format `memory`).
 */
export const defaultContext: TranslateContext = { memorySources: new Set<string>(), tableFormat: TABLE_FORMAT }

/** The reason a JavaScript function cannot be shipped, said once for every refusal. */
const JS_REASON = "a JavaScript function cannot run on a Spark Connect server"

/** File formats Spark's streaming file source reads; they need a schema (Spark infers none for streams). */
const FILE_FORMATS: ReadonlySet<string> = new Set(["json", "csv", "parquet", "text", "orc"])

const refuse = (message: string): AnalysisError => new AnalysisError({ reason: "UnsupportedOperation", message })

/**
 * Walks a plan once, building protos and keeping the first refusal. Translation goes on after a
 * refusal (a refused node becomes an empty relation) so that the whole plan is visited, but nothing built after a
 * refusal is ever returned.
 */
class Walker {
  readonly ctx: TranslateContext
  error: AnalysisError | undefined = undefined

  constructor(ctx: TranslateContext) {
    this.ctx = ctx
  }

  fail(error: AnalysisError): void {
    if (this.error === undefined) this.error = error
  }

  // ---- relations ----------------------------------------------------------------------------

  relation(p: Plan.LogicalPlan): PR.Relation {
    const relType = this.relType(p)
    return create(PR.RelationSchema, {
      common: create(PR.RelationCommonSchema, { planId: BigInt(p.planId) }),
      relType
    })
  }

  private relType(p: Plan.LogicalPlan): PR.Relation["relType"] {
    switch (p._tag) {
      case "LocalRelation":
        return this.localRelation(p)
      case "DataSourceRelation":
        return this.dataSource(p)
      case "StreamingRelation":
        return this.streamingSource(p)
      case "Project":
        return {
          case: "project",
          value: create(PR.ProjectSchema, { input: this.relation(p.child), expressions: this.exprs(p.projectList) })
        }
      case "Filter":
        return {
          case: "filter",
          value: create(PR.FilterSchema, { input: this.relation(p.child), condition: this.expr(p.condition) })
        }
      case "Aggregate":
        return this.aggregate(p)
      case "Join":
        return {
          case: "join",
          value: create(PR.JoinSchema, {
            left: this.relation(p.left),
            right: this.relation(p.right),
            joinType: joinType(p.joinType),
            ...(p.condition === undefined ? {} : { joinCondition: this.expr(p.condition) }),
            usingColumns: p.usingColumns === undefined ? [] : [...p.usingColumns]
          })
        }
      case "Sort":
        return {
          case: "sort",
          value: create(PR.SortSchema, {
            input: this.relation(p.child),
            order: p.order.map((o) => this.sortOrder(o)),
            isGlobal: p.global
          })
        }
      case "Limit":
        return { case: "limit", value: create(PR.LimitSchema, { input: this.relation(p.child), limit: p.n }) }
      case "Distinct":
        // pyspark: `distinct()` is `Deduplicate(all_columns_as_keys=True)`.
        return {
          case: "deduplicate",
          value: create(PR.DeduplicateSchema, { input: this.relation(p.child), allColumnsAsKeys: true })
        }
      case "Deduplicate": {
        const names = p.columnNames ?? p.keys?.map((k) => k.name)
        return {
          case: "deduplicate",
          value: create(PR.DeduplicateSchema, {
            input: this.relation(p.child),
            ...(names === undefined ? { allColumnsAsKeys: true } : { columnNames: [...names] }),
            withinWatermark: p.withinWatermark
          })
        }
      }
      case "Union":
        return this.union(p)
      case "Intersect":
      case "Except":
        // pyspark's DataFrame.intersect / intersectAll / subtract / exceptAll
        return {
          case: "setOp",
          value: create(PR.SetOperationSchema, {
            leftInput: this.relation(p.left),
            rightInput: this.relation(p.right),
            setOpType: p._tag === "Intersect" ? PR.SetOperation_SetOpType.INTERSECT : PR.SetOperation_SetOpType.EXCEPT,
            isAll: p.isAll
          })
        }
      case "Generate":
        // Only the analyzer makes a Generate; pyspark's form of it is a select of the generator
        // next to every column, which Spark's analyzer turns back into a Generate.
        return {
          case: "project",
          value: create(PR.ProjectSchema, {
            input: this.relation(p.child),
            expressions: [
              create(PE.ExpressionSchema, {
                exprType: { case: "unresolvedStar", value: create(PE.Expression_UnresolvedStarSchema) }
              }),
              alias(
                this.expr(p.generator),
                p.generatorOutput.map((a) => a.name)
              )
            ]
          })
        }
      case "Window":
        // Only the analyzer makes a Window; pyspark's form of it is a select of every column and
        // the window expressions, which Spark's analyzer turns back into a Window.
        return {
          case: "project",
          value: create(PR.ProjectSchema, {
            input: this.relation(p.child),
            expressions: [
              create(PE.ExpressionSchema, {
                exprType: { case: "unresolvedStar", value: create(PE.Expression_UnresolvedStarSchema) }
              }),
              ...this.exprs(p.windowExpressions)
            ]
          })
        }
      case "WithColumns":
        return {
          case: "withColumns",
          value: create(PR.WithColumnsSchema, {
            input: this.relation(p.child),
            aliases: p.names.map((name, i) =>
              create(PE.Expression_AliasSchema, { expr: this.expr(p.columns[i]), name: [name] })
            )
          })
        }
      case "WithColumnsRenamed":
        return {
          case: "withColumnsRenamed",
          value: create(PR.WithColumnsRenamedSchema, {
            input: this.relation(p.child),
            renames: p.renames.map(([from, to]) =>
              create(PR.WithColumnsRenamed_RenameSchema, { colName: from, newColName: to })
            )
          })
        }
      case "Drop":
        return this.drop(p)
      case "EventTimeWatermark":
        return {
          case: "withWatermark",
          value: create(PR.WithWatermarkSchema, {
            input: this.relation(p.child),
            eventTime: this.columnName(p.eventTime, "withWatermark"),
            delayThreshold: intervalString(p.delayMs)
          })
        }
      case "SubqueryAlias":
        return {
          case: "subqueryAlias",
          value: create(PR.SubqueryAliasSchema, { input: this.relation(p.child), alias: p.alias })
        }
      case "TypedFilter":
        this.fail(
          refuse(
            `filter with a JavaScript function (TypedFilter) cannot be translated for Spark: ${JS_REASON}. Use a Column condition (F.col(...)) instead.`
          )
        )
        return this.refusedChild(p.child)
      case "MapElements":
        this.fail(
          refuse(
            `${p.flat ? "flatMap" : "map"} (MapElements) cannot be translated for Spark: ${JS_REASON}. Use select/withColumn with F functions instead.`
          )
        )
        return this.refusedChild(p.child)
      case "TransformWithState":
        this.fail(
          refuse(
            `transformWithState (TransformWithState) cannot be translated for Spark: ${JS_REASON} (its StatefulProcessor is JavaScript).`
          )
        )
        this.refusedChild(p.child)
        if (p.initialState !== undefined) this.relation(p.initialState)
        return { case: undefined }
      case "FlatMapGroupsWithState": {
        const name = p.isMapGroupsWithState ? "mapGroupsWithState" : "flatMapGroupsWithState"
        this.fail(refuse(`${name} (FlatMapGroupsWithState) cannot be translated for Spark: ${JS_REASON}.`))
        this.refusedChild(p.child)
        if (p.initialState !== undefined) this.relation(p.initialState)
        return { case: undefined }
      }
    }
  }

  /** Visits `child` (so that its refusals are found too) and returns an empty relation type. */
  /** A refused node: its child is still walked (to find the first refusal in plan order); nothing is built for it. */
  private refusedChild(child: Plan.LogicalPlan): PR.Relation["relType"] {
    this.relation(child)
    return { case: undefined }
  }

  private localRelation(p: Plan.LocalRelation): PR.Relation["relType"] {
    if (p.isStreaming) {
      this.fail(
        refuse(
          "A streaming LocalRelation (rows held in this process) cannot be translated for Spark: Spark Connect has no streaming source for in-process data."
        )
      )
      return { case: undefined }
    }
    const schema = T.struct(p.output.map((a) => T.field(a.name, a.dataType, a.nullable)))
    // pyspark sends the Arrow IPC stream and the schema as DDL; the server renames and casts the
    // Arrow columns to the DDL schema.
    return {
      case: "localRelation",
      value: create(PR.LocalRelationSchema, { data: encodeRows(schema, p.rows), schema: toDDL(schema) })
    }
  }

  private dataSource(p: Plan.DataSourceRelation): PR.Relation["relType"] {
    if (p.format === REMOTE_RELATION_FORMAT) {
      // The result of `spark.sql` on a remote session: Spark's own relation, sent back as it is.
      const relation = this.ctx.remoteRelations?.get(p.options.id ?? "")
      if (relation !== undefined) return relation.relType
      this.fail(
        new AnalysisError({
          reason: "InvalidPlan",
          message:
            "This DataFrame came from spark.sql on another remote session; it can only run on the session that made it."
        })
      )
      return { case: undefined }
    }
    if (p.format === this.ctx.tableFormat) {
      // Memory-sink tables and temp views live in the remote session under their name.
      const name = p.options.name ?? ""
      return {
        case: "read",
        value: create(PR.ReadSchema, {
          readType: { case: "namedTable", value: create(PR.Read_NamedTableSchema, { unparsedIdentifier: name }) }
        })
      }
    }
    return {
      case: "read",
      value: create(PR.ReadSchema, {
        readType: {
          case: "dataSource",
          value: create(PR.Read_DataSourceSchema, {
            format: p.format,
            // Spark infers the schema itself unless the user gave one.
            ...(p.userSchema === undefined ? {} : { schema: toDDL(p.userSchema) }),
            options: { ...p.options },
            paths: [...p.paths]
          })
        }
      })
    }
  }

  private streamingSource(p: Plan.StreamingRelation): PR.Relation["relType"] {
    const format = p.format.toLowerCase()
    if (this.ctx.memorySources.has(p.sourceKey) || format === "memory") {
      this.fail(
        refuse(
          `MemoryStream (an in-process streaming source) cannot be translated for Spark: its rows live in this JavaScript process and a Spark Connect server cannot read them. Read from a source Spark can reach (rate, files, kafka, socket) instead.`
        )
      )
      return { case: undefined }
    }
    const schema =
      p.userSchema ??
      (FILE_FORMATS.has(format) && p.output.length > 0
        ? T.struct(p.output.map((a) => T.field(a.name, a.dataType, a.nullable)))
        : undefined)
    const { path, ...options } = p.options
    return {
      case: "read",
      value: create(PR.ReadSchema, {
        isStreaming: true,
        readType: {
          case: "dataSource",
          value: create(PR.Read_DataSourceSchema, {
            format: p.format,
            ...(schema === undefined ? {} : { schema: toDDL(schema) }),
            options,
            // Spark's planner calls `readStream.load(path)` with the single path, as pyspark sends it.
            paths: path === undefined ? [] : [path]
          })
        }
      })
    }
  }

  private aggregate(p: Plan.Aggregate): PR.Relation["relType"] {
    // Spark's planner outputs the grouping expressions followed by the aggregate expressions
    // (`spark.sql.retainGroupColumns`), as `GroupedData` builds them: send only the tail.
    const g = p.groupingExpressions
    const prefix = g.length <= p.aggregateExpressions.length && g.every((e, i) => p.aggregateExpressions[i] === e)
    if (!prefix) {
      this.fail(
        new AnalysisError({
          reason: "InvalidPlan",
          message:
            "An Aggregate whose output does not start with its grouping expressions cannot be translated for Spark (Spark Connect always outputs the grouping columns first)."
        })
      )
    }
    return {
      case: "aggregate",
      value: create(PR.AggregateSchema, {
        input: this.relation(p.child),
        groupType: PR.Aggregate_GroupType.GROUPBY,
        groupingExpressions: this.exprs(g),
        aggregateExpressions: this.exprs(p.aggregateExpressions.slice(g.length))
      })
    }
  }

  private union(p: Plan.Union): PR.Relation["relType"] {
    // n-ary unions become a left-deep chain of binary UNION ALLs, as `a.union(b).union(c)`.
    const relations = p.children.map((c) => this.relation(c))
    if (relations.length < 2) {
      this.fail(new AnalysisError({ reason: "InvalidPlan", message: "A Union needs at least two children." }))
      return { case: undefined }
    }
    const setOp = (left: PR.Relation, right: PR.Relation) =>
      create(PR.SetOperationSchema, {
        leftInput: left,
        rightInput: right,
        setOpType: PR.SetOperation_SetOpType.UNION,
        isAll: true,
        byName: p.byName,
        allowMissingColumns: p.allowMissingColumns
      })
    let acc = setOp(relations[0], relations[1])
    for (let i = 2; i < relations.length; i++) {
      const left = create(PR.RelationSchema, { relType: { case: "setOp", value: acc } })
      acc = setOp(left, relations[i])
    }
    return { case: "setOp", value: acc }
  }

  private drop(p: Plan.Drop): PR.Relation["relType"] {
    // pyspark: names go to `column_names` (Spark ignores a name that is not there), Columns to
    // `columns`. `drop("x")` arrives here as an attribute without a plan id.
    const columnNames: Array<string> = []
    const columns: Array<PE.Expression> = []
    for (const c of p.columns) {
      if (c._tag === "UnresolvedAttribute" && c.planId === undefined) columnNames.push(c.nameParts.join("."))
      else columns.push(this.expr(c))
    }
    return { case: "drop", value: create(PR.DropSchema, { input: this.relation(p.child), columns, columnNames }) }
  }

  /** A column's name as Spark's `withWatermark(eventTime, …)` takes it. */
  private columnName(e: E.Expression, operator: string): string {
    if (e._tag === "UnresolvedAttribute") return unparsedIdentifier(e.nameParts)
    if (e._tag === "AttributeReference") return quotePart(e.name)
    this.fail(new AnalysisError({ reason: "InvalidArgument", message: `${operator} needs a column name.` }))
    return ""
  }

  // ---- expressions --------------------------------------------------------------------------

  exprs(es: ReadonlyArray<E.Expression>): Array<PE.Expression> {
    return es.map((e) => this.expr(e))
  }

  sortOrder(o: E.SortOrder): PE.Expression_SortOrder {
    return create(PE.Expression_SortOrderSchema, {
      child: this.expr(o.child),
      direction:
        o.direction === "asc"
          ? PE.Expression_SortOrder_SortDirection.ASCENDING
          : PE.Expression_SortOrder_SortDirection.DESCENDING,
      nullOrdering:
        o.nullOrdering === "nullsFirst"
          ? PE.Expression_SortOrder_NullOrdering.SORT_NULLS_FIRST
          : PE.Expression_SortOrder_NullOrdering.SORT_NULLS_LAST
    })
  }

  expr(e: E.Expression): PE.Expression {
    // F.expr / selectExpr text goes as text, for Spark's own parser (pyspark's `expr`)
    const text = sourceText(e)
    if (text !== undefined) {
      return create(PE.ExpressionSchema, {
        exprType: {
          case: "expressionString",
          value: create(PE.Expression_ExpressionStringSchema, { expression: text })
        }
      })
    }
    switch (e._tag) {
      case "UnresolvedAttribute":
        return attributeExpr(unparsedIdentifier(e.nameParts), e.planId)
      case "UnresolvedStar":
        return create(PE.ExpressionSchema, {
          exprType: {
            case: "unresolvedStar",
            value: create(PE.Expression_UnresolvedStarSchema, {
              ...(e.target === undefined ? {} : { unparsedTarget: `${unparsedIdentifier(e.target)}.*` }),
              ...(e.planId === undefined ? {} : { planId: BigInt(e.planId) })
            })
          }
        })
      case "AttributeReference":
        // Unanalyzed plans hold names, not attributes; one that is here is sent by name.
        return attributeExpr(quotePart(e.name), undefined)
      case "Literal":
        return literalExpr(this.literal(e.value, e.dataType))
      case "Alias":
        return alias(this.expr(e.child), [e.name])
      case "UnaryExpression":
        return fn(unaryName(e.op), [this.expr(e.child)])
      case "BinaryExpression":
        return fn(binaryName(e.op), [this.expr(e.left), this.expr(e.right)])
      case "In":
        return fn("in", [this.expr(e.child), ...this.exprs(e.list)])
      case "Cast":
        return create(PE.ExpressionSchema, {
          exprType: {
            case: "cast",
            value: create(PE.Expression_CastSchema, {
              expr: this.expr(e.child),
              castToType: { case: "type", value: toSparkType(e.to) }
            })
          }
        })
      case "CaseWhen": {
        // pyspark: `when` with condition/value pairs and an optional trailing else value.
        const args: Array<PE.Expression> = []
        for (const [c, v] of e.branches) args.push(this.expr(c), this.expr(v))
        if (e.otherwise !== undefined) args.push(this.expr(e.otherwise))
        return fn("when", args)
      }
      case "GetField":
        return create(PE.ExpressionSchema, {
          exprType: {
            case: "unresolvedExtractValue",
            value: create(PE.Expression_UnresolvedExtractValueSchema, {
              child: this.expr(e.child),
              extraction: literalExpr(this.literal(e.field, T.StringType))
            })
          }
        })
      case "ScalarFunction":
        if (e.udf !== undefined) {
          this.fail(
            refuse(
              `The user-defined function ${e.name} (F.udf) cannot be translated for Spark: ${JS_REASON}. Use the built-in functions of F, or run the query on a local session.`
            )
          )
          return create(PE.ExpressionSchema, {})
        }
        return fn(e.name, this.exprs(e.args))
      case "AggregateFunction":
        return this.aggregateFunction(e)
      case "TimeWindow": {
        // Spark's planner reads `window(time, windowDuration[, slideDuration[, startTime]])` with
        // string literals and names the result `window`.
        if (![e.windowMs, e.slideMs, e.startMs].every(Number.isFinite)) {
          this.fail(
            new AnalysisError({
              reason: "InvalidArgument",
              message:
                "The window duration, slide duration and start time must be interval strings such as '10 seconds'."
            })
          )
        }
        const args = [this.expr(e.timeColumn), stringLit(intervalString(e.windowMs))]
        if (e.slideMs !== e.windowMs || e.startMs !== 0) args.push(stringLit(intervalString(e.slideMs)))
        if (e.startMs !== 0) args.push(stringLit(intervalString(e.startMs)))
        return fn("window", args)
      }
      case "SessionWindow": {
        // `F.session_window(t, "5 minutes")` holds the gap as a literal number of milliseconds;
        // Spark takes an interval string literal (or a column of them).
        if (e.gap._tag === "Literal" && typeof e.gap.value === "number" && !Number.isFinite(e.gap.value)) {
          this.fail(
            new AnalysisError({
              reason: "InvalidArgument",
              message: "The provided session window gap duration is not a valid interval string."
            })
          )
        }
        const gap =
          e.gap._tag === "Literal" && typeof e.gap.value === "number"
            ? stringLit(intervalString(e.gap.value))
            : this.expr(e.gap)
        return fn("session_window", [this.expr(e.timeColumn), gap])
      }
      case "Explode":
        return fn(`${e.position ? "posexplode" : "explode"}${e.outer ? "_outer" : ""}`, [this.expr(e.child)])
      case "CurrentTimestamp":
        return fn("current_timestamp", [])
      case "SortOrder":
        return create(PE.ExpressionSchema, { exprType: { case: "sortOrder", value: this.sortOrder(e) } })
      case "InvalidExpression":
        this.fail(new AnalysisError({ reason: "InvalidArgument", message: e.message }))
        return create(PE.ExpressionSchema, {})
      case "WindowFunction":
        return this.windowFunction(e)
      case "WindowExpression":
        return this.windowExpression(e)
    }
  }

  /** pyspark's `row_number()`, `ntile(n)`, `lag(col, offset, default)`, `nth_value(col, offset, ignoreNulls)`. */
  private windowFunction(e: E.WindowFunction): PE.Expression {
    const args = this.exprs(e.args)
    // Spark's `lag`/`lead` take `ignoreNulls` as a fourth argument (Scala's functions.lag)
    if ((e.name === "lag" || e.name === "lead") && e.ignoreNulls) args.push(literalExpr(booleanLit(true)))
    if (e.name === "nth_value" && e.ignoreNulls) args.push(literalExpr(booleanLit(true)))
    return fn(e.name, args)
  }

  /** `fn.over(window)` as Spark Connect's `Expression.Window`, the frame left out when unspecified. */
  private windowExpression(e: E.WindowExpression): PE.Expression {
    const orders = e.orderSpec.map((o) =>
      this.sortOrder(
        o._tag === "SortOrder" ? o : { _tag: "SortOrder", child: o, direction: "asc", nullOrdering: "nullsFirst" }
      )
    )
    const f = e.frame
    const boundary = (b: E.FrameBoundary): PE.Expression_Window_WindowFrame_FrameBoundary => {
      switch (b._tag) {
        case "CurrentRow":
          return create(PE.Expression_Window_WindowFrame_FrameBoundarySchema, {
            boundary: { case: "currentRow", value: true }
          })
        case "UnboundedPreceding":
        case "UnboundedFollowing":
          return create(PE.Expression_Window_WindowFrame_FrameBoundarySchema, {
            boundary: { case: "unbounded", value: true }
          })
        case "Offset":
          // rows take an int offset, ranges a long one (Scala's rowsBetween / rangeBetween)
          return create(PE.Expression_Window_WindowFrame_FrameBoundarySchema, {
            boundary: {
              case: "value",
              value: literalExpr(this.literal(b.value, f?.frameType === "range" ? T.LongType : T.IntegerType))
            }
          })
      }
    }
    return create(PE.ExpressionSchema, {
      exprType: {
        case: "window",
        value: create(PE.Expression_WindowSchema, {
          windowFunction: this.expr(e.function),
          partitionSpec: this.exprs(e.partitionSpec),
          orderSpec: orders,
          ...(f === undefined
            ? {}
            : {
                frameSpec: create(PE.Expression_Window_WindowFrameSchema, {
                  frameType:
                    f.frameType === "rows"
                      ? PE.Expression_Window_WindowFrame_FrameType.ROW
                      : PE.Expression_Window_WindowFrame_FrameType.RANGE,
                  lower: boundary(f.lower),
                  upper: boundary(f.upper)
                })
              })
        })
      }
    })
  }

  private aggregateFunction(e: E.AggregateFunction): PE.Expression {
    const args = this.exprs(e.args)
    switch (e.name) {
      case "first":
      case "last":
        // pyspark: first(col, ignorenulls) always passes the flag as a boolean literal.
        args.push(literalExpr(booleanLit(e.options.ignoreNulls === true)))
        break
      case "approx_count_distinct":
        // pyspark passes rsd only when the user gave one; 0.05 is Spark's default.
        if (e.options.rsd !== undefined && e.options.rsd !== 0.05) {
          args.push(
            literalExpr(create(PE.Expression_LiteralSchema, { literalType: { case: "double", value: e.options.rsd } }))
          )
        }
        break
      default:
        break
    }
    return fn(e.name, args, e.distinct)
  }

  /** A tributary internal value of type `t` as a Spark Connect literal. */
  literal(value: unknown, t: T.DataType): PE.Expression_Literal {
    const lit = (literalType: PE.Expression_Literal["literalType"]) =>
      create(PE.Expression_LiteralSchema, { literalType })
    if (value === null || value === undefined) return lit({ case: "null", value: toSparkType(t) })
    const bad = (): PE.Expression_Literal => {
      this.fail(
        new AnalysisError({
          reason: "InvalidArgument",
          message: `The literal ${String(value)} is not a value of type ${T.simpleString(t)}.`
        })
      )
      return lit({ case: "null", value: toSparkType(t) })
    }
    switch (t._tag) {
      case "null":
        return lit({ case: "null", value: toSparkType(t) })
      case "boolean":
        return typeof value === "boolean" ? lit({ case: "boolean", value }) : bad()
      case "integer":
        return typeof value === "number" && Number.isInteger(value) ? lit({ case: "integer", value }) : bad()
      case "long":
        if (typeof value === "bigint") return lit({ case: "long", value })
        return typeof value === "number" && Number.isFinite(value)
          ? lit({ case: "long", value: BigInt(Math.trunc(value)) })
          : bad()
      case "double":
        return typeof value === "number" ? lit({ case: "double", value }) : bad()
      case "string":
        return typeof value === "string" ? lit({ case: "string", value }) : bad()
      case "binary":
        return value instanceof Uint8Array ? lit({ case: "binary", value }) : bad()
      case "timestamp":
        // Internal timestamps are epoch milliseconds; Spark's literal is epoch microseconds.
        return typeof value === "number" && Number.isFinite(value)
          ? lit({ case: "timestamp", value: BigInt(Math.round(value * 1000)) })
          : bad()
      case "date":
        return typeof value === "number" && Number.isInteger(value) ? lit({ case: "date", value }) : bad()
      case "calendarInterval": {
        const i =
          typeof value === "string"
            ? parseInterval(value)
            : typeof value === "object" && value !== null && "months" in value
              ? (value as { months: number; days: number; micros: number })
              : undefined
        if (i === undefined) return bad()
        return lit({
          case: "calendarInterval",
          value: create(PE.Expression_Literal_CalendarIntervalSchema, {
            months: i.months,
            days: i.days,
            microseconds: BigInt(Math.round(i.micros))
          })
        })
      }
      case "array": {
        if (!Array.isArray(value)) return bad()
        const elements = value.map((v) => this.literal(v, t.elementType))
        return create(PE.Expression_LiteralSchema, {
          literalType: {
            case: "array",
            value: create(PE.Expression_Literal_ArraySchema, { elementType: toSparkType(t.elementType), elements })
          },
          dataType: toSparkType(t)
        })
      }
      case "map": {
        if (!(value instanceof Map)) return bad()
        const keys: Array<PE.Expression_Literal> = []
        const values: Array<PE.Expression_Literal> = []
        for (const [k, v] of value) {
          keys.push(this.literal(k, t.keyType))
          values.push(this.literal(v, t.valueType))
        }
        return create(PE.Expression_LiteralSchema, {
          literalType: {
            case: "map",
            value: create(PE.Expression_Literal_MapSchema, {
              keyType: toSparkType(t.keyType),
              valueType: toSparkType(t.valueType),
              keys,
              values
            })
          },
          dataType: toSparkType(t)
        })
      }
      case "struct": {
        if (!Array.isArray(value) || value.length !== t.fields.length) return bad()
        const elements = t.fields.map((f, i) => this.literal(value[i], f.dataType))
        return create(PE.Expression_LiteralSchema, {
          literalType: {
            case: "struct",
            value: create(PE.Expression_Literal_StructSchema, { structType: toSparkType(t), elements })
          },
          dataType: toSparkType(t)
        })
      }
    }
  }
}

// ---- small builders -------------------------------------------------------------------------

const fn = (name: string, args: ReadonlyArray<PE.Expression>, distinct = false): PE.Expression =>
  create(PE.ExpressionSchema, {
    exprType: {
      case: "unresolvedFunction",
      value: create(PE.Expression_UnresolvedFunctionSchema, {
        functionName: name,
        arguments: [...args],
        isDistinct: distinct,
        isUserDefinedFunction: false
      })
    }
  })

const alias = (child: PE.Expression, names: ReadonlyArray<string>): PE.Expression =>
  create(PE.ExpressionSchema, {
    exprType: { case: "alias", value: create(PE.Expression_AliasSchema, { expr: child, name: [...names] }) }
  })

const literalExpr = (literal: PE.Expression_Literal): PE.Expression =>
  create(PE.ExpressionSchema, { exprType: { case: "literal", value: literal } })

const stringLit = (s: string): PE.Expression =>
  literalExpr(create(PE.Expression_LiteralSchema, { literalType: { case: "string", value: s } }))

const booleanLit = (b: boolean): PE.Expression_Literal =>
  create(PE.Expression_LiteralSchema, { literalType: { case: "boolean", value: b } })

const attributeExpr = (identifier: string, planId: number | undefined): PE.Expression =>
  create(PE.ExpressionSchema, {
    exprType: {
      case: "unresolvedAttribute",
      value: create(PE.Expression_UnresolvedAttributeSchema, {
        unparsedIdentifier: identifier,
        ...(planId === undefined ? {} : { planId: BigInt(planId) })
      })
    }
  })

/** One name part as Spark's `parseAttributeName` reads it: backquoted when it holds `.` or a backquote. */
const quotePart = (part: string): string =>
  part.includes(".") || part.includes("`") ? `\`${part.replaceAll("`", "``")}\`` : part

/**
 * The `unparsed_identifier` of a column: its name parts joined with dots, a part that holds a
 * dot or a backquote in backquotes (the inverse of `Column.parseName` and of Spark's
 * `UnresolvedAttribute.parseAttributeName`).
 */
export const unparsedIdentifier = (nameParts: ReadonlyArray<string>): string => nameParts.map(quotePart).join(".")

const unaryName = (op: E.UnaryOp): string => {
  switch (op) {
    case "negate":
      return "negative"
    case "not":
      return "not"
    case "isNull":
      return "isnull"
    case "isNotNull":
      return "isnotnull"
  }
}

const binaryName = (op: E.BinaryOp): string => {
  switch (op) {
    case "=":
      // pyspark's `==`; Spark's registry has both `=` and `==` for EqualTo.
      return "=="
    case "+":
    case "-":
    case "*":
    case "/":
    case "%":
    case "!=":
    case "<":
    case "<=":
    case ">":
    case ">=":
    case "<=>":
    case "and":
    case "or":
      return op
  }
}

const joinType = (t: Plan.JoinType): PR.Join_JoinType => {
  switch (t) {
    case "inner":
      return PR.Join_JoinType.INNER
    case "left_outer":
      return PR.Join_JoinType.LEFT_OUTER
    case "right_outer":
      return PR.Join_JoinType.RIGHT_OUTER
    case "full_outer":
      return PR.Join_JoinType.FULL_OUTER
    case "left_semi":
      return PR.Join_JoinType.LEFT_SEMI
    case "left_anti":
      return PR.Join_JoinType.LEFT_ANTI
    case "cross":
      return PR.Join_JoinType.CROSS
  }
}

const UNITS: ReadonlyArray<readonly [string, number]> = [
  ["days", 86_400_000_000],
  ["hours", 3_600_000_000],
  ["minutes", 60_000_000],
  ["seconds", 1_000_000],
  ["milliseconds", 1_000],
  ["microseconds", 1]
]

/**
 * A length of time in milliseconds as an interval string Spark's `IntervalUtils.stringToInterval`
 * parses (`"10 seconds"`, `"1 minutes 30 seconds"`, `"-5 minutes"`), in whole days and smaller
 * units. Watermark delays and window durations are kept in milliseconds here; a month written
 * by the user is already 31 days, as Spark's watermark counts it.
 *
 * @example
 * ```ts
 * intervalString(90_000) // "1 minutes 30 seconds"
 * ```
 * @since 0.4.0
 */
export const intervalString = (ms: number): string => {
  let micros = Math.round(Math.abs(ms) * 1000)
  if (micros === 0) return "0 seconds"
  const sign = ms < 0 ? "-" : ""
  const parts: Array<string> = []
  for (const [unit, size] of UNITS) {
    const n = Math.floor(micros / size)
    if (n > 0) {
      parts.push(`${sign}${n} ${unit}`)
      micros -= n * size
    }
  }
  return parts.join(" ")
}

// ---- API ------------------------------------------------------------------------------------

/**
 * Translates an unanalyzed logical plan into a Spark Connect `Relation`, or fails with the first
 * `AnalysisError` found while walking the whole plan: an operator holding a JavaScript function
 * (`map`, `flatMap`, `filter(fn)`, `transformWithState`, `flatMapGroupsWithState`,
 * `mapGroupsWithState`), an in-process source (`MemoryStream`), or an invalid column.
 *
 * @example
 * ```ts
 * // const relation = translatePlan(df.plan, df.state)   // Result<Relation, AnalysisError>
 * ```
 * @since 0.4.0
 */
export const translatePlan = (
  plan: Plan.LogicalPlan,
  ctx: TranslateContext = defaultContext
): Result.Result<PR.Relation, AnalysisError> => {
  const w = new Walker(ctx)
  const relation = w.relation(plan)
  return w.error === undefined ? Result.succeed(relation) : Result.fail(w.error)
}

/**
 * Translates one unanalyzed expression into a Spark Connect `Expression` (for callers that build
 * their own relations, such as `writeStream` options or commands).
 *
 * @since 0.4.0
 */
export const translateExpression = (
  e: E.Expression,
  ctx: TranslateContext = defaultContext
): Result.Result<PE.Expression, AnalysisError> => {
  const w = new Walker(ctx)
  const expression = w.expr(e)
  return w.error === undefined ? Result.succeed(expression) : Result.fail(w.error)
}
