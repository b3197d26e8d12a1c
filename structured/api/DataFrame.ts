/**
 * `DataFrame<R>`: Spark's DataFrame, typed by its row type `R`.
 *
 * Transformations are pure and synchronous: each returns a new DataFrame around a new logical
 * plan node and never throws. A mistake the builder cannot see (an unknown column name behind a
 * `Row` type, a bad delay string) surfaces as an `AnalysisError` from the first action.
 * Actions (`collect`, `count`, `show`, `explain`, `printSchema`) return Effects.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { F, Session } from "tributary-streaming"
 *
 * const program = Effect.gen(function* () {
 *   const spark = yield* Session
 *   const people = spark.createDataFrame(
 *     [{ name: "ann", age: 31 }, { name: "bob", age: 17 }],
 *     Schema.Struct({ name: Schema.String, age: Schema.Int })
 *   )
 *   const adults = people.where(F.col("age").geq(18)).select("name", F.col("age").plus(1).as("next"))
 *   yield* adults.show()
 *   return yield* adults.collect() // [{ name: "ann", next: 32 }]
 * })
 * ```
 * @since 0.1.0
 */
import { JUPYTER_DISPLAY, type MimeBundle, streamingBundle, tableBundle } from "./Display.ts"
import { Console, Effect, Result, type Schema } from "effect"
import { Column, type ColumnOrName, col, toColumnExpr } from "../../core/Column.ts"
import * as T from "../../core/DataType.ts"
import { type IntervalString, parseDurationMs } from "../../core/Durations.ts"
import { AnalysisError, type ConnectorError, ParseException } from "../../core/Errors.ts"
import * as E from "../../core/Expression.ts"
import * as Plan from "../../core/LogicalPlan.ts"
import { type InternalRow, rowsToExternal } from "../../core/Row.ts"
import { isStructSchema, structTypeOf } from "../../core/RowSchema.ts"
import * as PlanOutput from "../../core/analysis/PlanOutput.ts"
import * as SqlParser from "../../core/sql/ExpressionParser.ts"
import * as QE from "../execution/QueryExecution.ts"
import { DataFrameWriter } from "./DataFrameWriter.ts"
import { DataStreamWriter } from "./DataStreamWriter.ts"
import { GroupedData } from "./GroupedData.ts"
import { KeyValueGroupedDataset } from "./KeyValueGroupedDataset.ts"
import type {
  ColumnName,
  ColumnPath,
  ColumnRef,
  JoinHow,
  JoinRow,
  RenamedRow,
  Row,
  SelectRow,
  Simplify,
  ValueOf,
  WithColumnRow
} from "./RowTypes.ts"
import * as State from "../contracts/SessionState.ts"
import { showString } from "../../core/ShowString.ts"

/** The row type a `map`/`flatMap` schema gives: its struct type, or `{ value }` for a single value. */
export type MapRow<S extends Schema.Top> = S["Type"] extends Date | ReadonlyArray<unknown> | Uint8Array
  ? { value: S["Type"] }
  : S["Type"] extends Record<string, unknown>
    ? S["Type"]
    : { value: S["Type"] }

const JOIN_TYPES: Record<string, Plan.JoinType> = {
  inner: "inner",
  cross: "cross",
  outer: "full_outer",
  full: "full_outer",
  fullouter: "full_outer",
  leftouter: "left_outer",
  left: "left_outer",
  rightouter: "right_outer",
  right: "right_outer",
  leftsemi: "left_semi",
  semi: "left_semi",
  leftanti: "left_anti",
  anti: "left_anti"
}

/** Spark's `JoinType(typ)`: case-insensitive, underscores ignored. */
export const parseJoinType = (how: string): Plan.JoinType | undefined =>
  JOIN_TYPES[how.toLowerCase().replaceAll("_", "")]

const invalid = (message: string, reason: AnalysisError["reason"] = "InvalidArgument"): AnalysisError =>
  new AnalysisError({ reason, message })

const sortExpr = (c: ColumnOrName): E.Expression => {
  const e = toColumnExpr(c)
  return e._tag === "SortOrder" ? e : { _tag: "SortOrder", child: e, direction: "asc", nullOrdering: "nullsFirst" }
}

/**
 * Spark's `DataFrame`: an immutable, lazily evaluated plan over rows of type `R`, batch or
 * streaming. Transformations (`select`, `where`, `groupBy`, `join`, `withWatermark`, …) return a
 * new DataFrame; actions (`collect`, `count`, `show`) are Effects that run the plan, and a
 * streaming DataFrame runs as a query through `writeStream`. Column names are checked against
 * `R` at compile time.
 *
 * @since 0.1.0
 */
export class DataFrame<R = Row> {
  declare readonly _R: R
  /** The logical plan this DataFrame stands for. */
  readonly plan: Plan.LogicalPlan
  /** @internal the session this DataFrame belongs to. */
  readonly state: State.SessionState
  /** @internal an error found while building, reported by the first action. */
  readonly buildError: AnalysisError | undefined
  #analyzed: Result.Result<Plan.LogicalPlan, AnalysisError> | undefined

  constructor(state: State.SessionState, plan: Plan.LogicalPlan, buildError?: AnalysisError) {
    this.state = state
    this.plan = plan
    this.buildError = buildError
  }

  /** @internal */
  analyzed(): Result.Result<Plan.LogicalPlan, AnalysisError> {
    if (this.#analyzed === undefined) {
      this.#analyzed = this.buildError !== undefined ? Result.fail(this.buildError) : QE.analyze(this.state, this.plan)
    }
    return this.#analyzed
  }

  /** The schema; an empty struct when the plan does not analyze (the actions report why). */
  get schema(): T.StructType {
    const a = this.analyzed()
    return Result.isSuccess(a) ? PlanOutput.schemaOf(a.success) : T.struct([])
  }

  /** Column names, in order. */
  get columns(): ReadonlyArray<string> {
    return this.schema.fields.map((f) => f.name)
  }

  /** `[name, simpleString type]` pairs, as Spark's `dtypes`. */
  get dtypes(): ReadonlyArray<readonly [string, string]> {
    return this.schema.fields.map((f) => [f.name, T.simpleString(f.dataType)] as const)
  }

  /** True when the plan reads a streaming source. */
  get isStreaming(): boolean {
    return Plan.isStreaming(this.plan)
  }

  /** @internal a DataFrame over a new plan node in the same session. */
  derive<S>(plan: Plan.LogicalPlan, error?: AnalysisError): DataFrame<S> {
    return new DataFrame<S>(this.state, plan, error ?? this.buildError)
  }

  /** @internal */
  join2<S>(other: DataFrame<any>, plan: Plan.LogicalPlan): DataFrame<S> {
    return new DataFrame<S>(this.state, plan, this.buildError ?? other.buildError)
  }

  /**
   * A column of this DataFrame, tied to it (so `a.col("id").eq(b.col("id"))` is unambiguous in
   * a self-join).
   */
  col<const K extends ColumnPath<R>>(name: K): Column<K extends keyof R ? R[K] : unknown, K> {
    return col(name, this.plan.planId) as never
  }

  // ---- transformations ------------------------------------------------------------------

  /** Projects columns (names, `"*"` or Columns). */
  select<const Cs extends ReadonlyArray<ColumnRef<R>>>(...cols: Cs): DataFrame<SelectRow<R, Cs>> {
    return this.derive({
      _tag: "Project",
      planId: Plan.newPlanId(),
      projectList: cols.map((c) => toColumnExpr(c as ColumnOrName)),
      child: this.plan
    })
  }

  /**
   * Projects Spark SQL expression strings, as Spark's `selectExpr`: each is parsed like
   * `F.expr` (`"a + 1 AS b"`, `"upper(name) n"`, `"*"`, `"count(*)"`). Text that does not parse
   * fails the first action with Spark's `ParseException`.
   *
   * @example
   * ```ts
   * import type { DataFrame } from "tributary-streaming"
   * declare const events: DataFrame<{ user: string; ts: Date }>
   * const deadlines = events.selectExpr("user", "ts + INTERVAL 10 SECONDS AS deadline")
   * ```
   * @since 0.7.0
   */
  selectExpr(...exprs: ReadonlyArray<string>): DataFrame<Row> {
    // each keeps its text, which a remote session sends for Spark to parse (pyspark's selectExpr)
    const projectList = exprs.map((text) => SqlParser.expressionOf(text))
    // Spark parses at the call: the first text that does not parse is the error, before any analysis
    const failed = projectList.find((e) => e._tag === "InvalidExpression" && e.error instanceof ParseException)
    return this.derive(
      { _tag: "Project", planId: Plan.newPlanId(), projectList, child: this.plan },
      failed?._tag === "InvalidExpression" && this.state.remote === undefined ? failed.error : undefined
    )
  }

  /**
   * Keeps the rows for which `condition` is true: a Column, a Spark SQL condition string
   * (`"age > 18 AND name IS NOT NULL"`, parsed like `F.expr`), or a predicate over the row object.
   */
  filter(condition: Column<any, any> | string | ((row: R) => boolean)): DataFrame<R> {
    if (typeof condition === "function") {
      return this.derive({ _tag: "TypedFilter", planId: Plan.newPlanId(), predicate: condition, child: this.plan })
    }
    if (typeof condition === "string") {
      // an alias the text gives (`"a > 1 AS x"`) is dropped from the condition by the analyzer, as
      // Spark's CleanupAliases does; a remote session sends the text for Spark to parse
      const e = SqlParser.expressionOf(condition)
      const error =
        e._tag === "InvalidExpression" && e.error instanceof ParseException && this.state.remote === undefined
          ? e.error
          : undefined
      return this.derive({ _tag: "Filter", planId: Plan.newPlanId(), condition: e, child: this.plan }, error)
    }
    return this.derive({ _tag: "Filter", planId: Plan.newPlanId(), condition: condition.expr, child: this.plan })
  }

  /** Same as `filter`. */
  where(condition: Column<any, any> | string | ((row: R) => boolean)): DataFrame<R> {
    return this.filter(condition)
  }

  /** Adds a column, or replaces the column of the same name. */
  withColumn<const N extends string, C extends Column<any, any>>(
    name: N,
    column: C
  ): DataFrame<WithColumnRow<R, N, ValueOf<C>>> {
    return this.derive({
      _tag: "WithColumns",
      planId: Plan.newPlanId(),
      names: [name],
      columns: [column.expr],
      child: this.plan
    })
  }

  /** Adds or replaces several columns at once. */
  withColumns<const M extends Record<string, Column<any, any>>>(
    columns: M
  ): DataFrame<Simplify<Omit<R, keyof M> & { [K in keyof M]: ValueOf<M[K]> }>> {
    const names = Object.keys(columns)
    return this.derive({
      _tag: "WithColumns",
      planId: Plan.newPlanId(),
      names,
      columns: names.map((n) => columns[n].expr),
      child: this.plan
    })
  }

  /** Renames a column; renaming a column that does not exist does nothing, as in Spark. */
  withColumnRenamed<const From extends ColumnPath<R>, const To extends string>(
    existing: From,
    newName: To
  ): DataFrame<RenamedRow<R, From, To>> {
    return this.derive({
      _tag: "WithColumnsRenamed",
      planId: Plan.newPlanId(),
      renames: [[existing, newName]],
      child: this.plan
    })
  }

  /** Renames several columns at once. */
  withColumnsRenamed(renames: Readonly<Record<string, string>>): DataFrame<Row> {
    return this.derive({
      _tag: "WithColumnsRenamed",
      planId: Plan.newPlanId(),
      renames: Object.entries(renames),
      child: this.plan
    })
  }

  /** Drops columns; dropping a column name that does not exist does nothing, as in Spark. */
  drop<const Ks extends ReadonlyArray<ColumnPath<R> | Column<any, any>>>(
    ...cols: Ks
  ): DataFrame<Simplify<Omit<R, Extract<Ks[number], string>>>> {
    return this.derive({
      _tag: "Drop",
      planId: Plan.newPlanId(),
      columns: cols.map((c) => toColumnExpr(c as ColumnOrName)),
      child: this.plan
    })
  }

  /** Renames every column, positionally (`toDF("a", "b")`). */
  toDF(...names: ReadonlyArray<string>): DataFrame<Row> {
    const current = this.columns
    if (names.length !== current.length) {
      return this.derive(
        this.plan,
        invalid(
          `The number of columns doesn't match.\nOld column names (${current.length}): ${current.join(", ")}\nNew column names (${names.length}): ${names.join(", ")}`
        )
      )
    }
    return this.derive({
      _tag: "Project",
      planId: Plan.newPlanId(),
      projectList: current.map((c, i) => col(c).as(names[i]).expr),
      child: this.plan
    })
  }

  /** Applies `f` to every row object; `schema` describes what it returns (a struct, or one `value`). */
  map<S extends Schema.Top>(f: (row: R) => S["Type"], schema: S): DataFrame<MapRow<S>> {
    return this.mapElements(f, schema, false)
  }

  /** Applies `f` to every row object and flattens the iterables it returns. */
  flatMap<S extends Schema.Top>(f: (row: R) => Iterable<S["Type"]>, schema: S): DataFrame<MapRow<S>> {
    return this.mapElements(f, schema, true)
  }

  private mapElements<S>(f: (row: any) => unknown, schema: Schema.Top, flat: boolean): DataFrame<S> {
    const st = structTypeOf(schema)
    if (st === undefined) {
      return this.derive(
        this.plan,
        invalid(
          "The schema given to map/flatMap has a part with no Spark type (functions, symbols, unions of different types)."
        )
      )
    }
    return this.derive({
      _tag: "MapElements",
      planId: Plan.newPlanId(),
      fn: f,
      flat,
      schema: st,
      wrapValue: !isStructSchema(schema),
      output: st.fields.map((fl) => E.attribute(fl.name, fl.dataType, fl.nullable)),
      child: this.plan
    })
  }

  /**
   * Groups the rows by the key `f` computes from each row object (Spark's `groupByKey`);
   * `keySchema` describes the key (a struct, or a single value). The result offers
   * `mapGroupsWithState`, `flatMapGroupsWithState`, `count`, `agg`, `keys`, `mapGroups`,
   * `flatMapGroups`.
   */
  groupByKey<KS extends Schema.Top>(f: (row: R) => KS["Type"], keySchema: KS): KeyValueGroupedDataset<KS["Type"], R> {
    return new KeyValueGroupedDataset<KS["Type"], R>(this, f, keySchema)
  }

  /** Groups by columns for aggregation (`groupBy("k").count()`, `.agg(F.sum("x"))`). */
  groupBy<const Cs extends ReadonlyArray<ColumnRef<R>>>(...cols: Cs): GroupedData<R, SelectRow<R, Cs>> {
    return new GroupedData(
      this,
      cols.map((c) => toColumnExpr(c as ColumnOrName))
    )
  }

  /** Aggregates over the whole DataFrame (`df.agg(F.max("x"))`). */
  agg<const Cs extends ReadonlyArray<Column<any, any>>>(...cols: Cs): DataFrame<SelectRow<R, Cs>> {
    return new GroupedData<R, Record<never, never>>(this, []).agg(...cols) as never
  }

  /**
   * Declares `eventTime` as this stream's event-time column with a delay (`"10 seconds"`):
   * rows older than the watermark are dropped by stateful operators and state is evicted past it.
   * A literal delay must be a Spark interval string ({@link IntervalString}).
   */
  withWatermark<const D extends string>(eventTime: ColumnName<R>, delayThreshold: IntervalString<D>): DataFrame<R> {
    const ms = parseDurationMs(delayThreshold)
    const error =
      ms === undefined
        ? invalid(
            `[CANNOT_PARSE_INTERVAL] Unable to parse '${delayThreshold}'. Please ensure that the value provided is in a valid format for defining an interval.`
          )
        : ms < 0
          ? invalid(`delay threshold (${delayThreshold}) should not be negative.`)
          : undefined
    return this.derive(
      {
        _tag: "EventTimeWatermark",
        planId: Plan.newPlanId(),
        eventTime: col(eventTime).expr,
        delayMs: ms ?? 0,
        child: this.plan
      },
      error
    )
  }

  /** Keeps the first row for each distinct value of `cols` (all columns when omitted). */
  dropDuplicates(cols?: ReadonlyArray<ColumnName<R>>): DataFrame<R> {
    return this.derive({
      _tag: "Deduplicate",
      planId: Plan.newPlanId(),
      columnNames: cols,
      keys: undefined,
      withinWatermark: false,
      child: this.plan
    })
  }

  /** Streaming dedup whose state lives until the watermark passes each row's event time plus delay. */
  dropDuplicatesWithinWatermark(cols?: ReadonlyArray<ColumnName<R>>): DataFrame<R> {
    return this.derive({
      _tag: "Deduplicate",
      planId: Plan.newPlanId(),
      columnNames: cols,
      keys: undefined,
      withinWatermark: true,
      child: this.plan
    })
  }

  /** Same as `distinct` in Spark's API for all columns. */
  distinct(): DataFrame<R> {
    return this.derive({ _tag: "Distinct", planId: Plan.newPlanId(), child: this.plan })
  }

  /**
   * Joins with `other`: on shared column names (`"id"`, `["a", "b"]`, one output column per
   * key, Spark's USING join), on a condition Column, or with no condition (a cross product).
   * `how`: inner, cross, left/left_outer, right/right_outer, full/full_outer/outer,
   * left_semi/semi, left_anti/anti.
   */
  join<R2, const K extends string = never, const How extends JoinHow = "inner">(
    other: DataFrame<R2>,
    on?: K | ReadonlyArray<K> | Column<any, any>,
    how?: How
  ): DataFrame<
    [K] extends [never]
      ? How extends "left_semi" | "leftsemi" | "semi" | "left_anti" | "leftanti" | "anti"
        ? R
        : Simplify<R & R2>
      : JoinRow<R, R2, How, K>
  > {
    const joinType = parseJoinType(how ?? "inner")
    const error =
      joinType === undefined
        ? invalid(
            `[UNSUPPORTED_JOIN_TYPE] Unsupported join type '${how}'. Supported join types include: 'inner', 'outer', 'full', 'fullouter', 'full_outer', 'leftouter', 'left', 'left_outer', 'rightouter', 'right', 'right_outer', 'leftsemi', 'left_semi', 'semi', 'leftanti', 'left_anti', 'anti', 'cross'.`
          )
        : undefined
    const using = typeof on === "string" ? [on] : Array.isArray(on) ? (on as ReadonlyArray<string>) : undefined
    const condition = on instanceof Column ? on.expr : undefined
    const node: Plan.LogicalPlan = {
      _tag: "Join",
      planId: Plan.newPlanId(),
      left: this.plan,
      right: other.plan,
      joinType: joinType ?? "inner",
      condition,
      usingColumns: using
    }
    return new DataFrame(this.state, node, error ?? this.buildError ?? other.buildError)
  }

  /** The Cartesian product with `other`. */
  crossJoin<R2>(other: DataFrame<R2>): DataFrame<Simplify<R & R2>> {
    return this.join(other, undefined, "cross") as never
  }

  /** Rows of both, matched by position (Spark's `union`, which is `UNION ALL`). */
  union(other: DataFrame<R>): DataFrame<R> {
    return this.join2(other, {
      _tag: "Union",
      planId: Plan.newPlanId(),
      children: [this.plan, other.plan],
      byName: false,
      allowMissingColumns: false
    })
  }

  /**
   * The distinct rows of this DataFrame that are also in `other` (Spark's `intersect`, SQL's
   * `INTERSECT`): columns matched by position and widened to common types, rows compared
   * null-safely. Refused on streaming DataFrames.
   *
   * @example
   * ```ts
   * // a: x = 1, 1, 2, null   b: x = 1, null, 3
   * // a.intersect(b).collect()  → [{ x: 1 }, { x: null }]
   * ```
   */
  intersect(other: DataFrame<R>): DataFrame<R> {
    return this.setOperation(other, "Intersect", false)
  }

  /**
   * The rows of this DataFrame that are also in `other`, each as often as it occurs in both
   * (Spark's `intersectAll`, SQL's `INTERSECT ALL`).
   *
   * @example
   * ```ts
   * // a: x = 1, 1, 1, 2   b: x = 1, 1, 3
   * // a.intersectAll(b).collect()  → [{ x: 1 }, { x: 1 }]
   * ```
   */
  intersectAll(other: DataFrame<R>): DataFrame<R> {
    return this.setOperation(other, "Intersect", true)
  }

  /**
   * The distinct rows of this DataFrame that are not in `other` (Spark's `except`, SQL's
   * `EXCEPT` / `EXCEPT DISTINCT`); `subtract` is the same.
   *
   * @example
   * ```ts
   * // a: x = 1, 1, 2, null   b: x = 2
   * // a.except(b).collect()  → [{ x: 1 }, { x: null }]
   * ```
   */
  except(other: DataFrame<R>): DataFrame<R> {
    return this.setOperation(other, "Except", false)
  }

  /** Same as `except` (pyspark's name). */
  subtract(other: DataFrame<R>): DataFrame<R> {
    return this.except(other)
  }

  /**
   * The rows of this DataFrame without those in `other`, keeping duplicates: a row occurring
   * l times here and r times in `other` occurs max(l - r, 0) times (Spark's `exceptAll`, SQL's
   * `EXCEPT ALL`).
   *
   * @example
   * ```ts
   * // a: x = 1, 1, 1, 2   b: x = 1
   * // a.exceptAll(b).collect()  → [{ x: 1 }, { x: 1 }, { x: 2 }]
   * ```
   */
  exceptAll(other: DataFrame<R>): DataFrame<R> {
    return this.setOperation(other, "Except", true)
  }

  private setOperation(other: DataFrame<R>, tag: "Intersect" | "Except", isAll: boolean): DataFrame<R> {
    return this.join2(other, { _tag: tag, planId: Plan.newPlanId(), left: this.plan, right: other.plan, isAll })
  }

  /** Same as `union`. */
  unionAll(other: DataFrame<R>): DataFrame<R> {
    return this.union(other)
  }

  /** Rows of both, matched by column name; with `allowMissingColumns`, missing columns are null. */
  unionByName<R2>(other: DataFrame<R2>, allowMissingColumns = false): DataFrame<R> {
    return this.join2(other, {
      _tag: "Union",
      planId: Plan.newPlanId(),
      children: [this.plan, other.plan],
      byName: true,
      allowMissingColumns
    })
  }

  /** Sorts by columns (ascending unless a Column says `.desc()`); stable. */
  orderBy(...cols: ReadonlyArray<ColumnRef<R>>): DataFrame<R> {
    return this.derive({
      _tag: "Sort",
      planId: Plan.newPlanId(),
      order: cols.map((c) => sortExpr(c as ColumnOrName) as E.SortOrder),
      global: true,
      child: this.plan
    })
  }

  /** Same as `orderBy`. */
  sort(...cols: ReadonlyArray<ColumnRef<R>>): DataFrame<R> {
    return this.orderBy(...cols)
  }

  /** Sorts within each partition; with one partition per batch this is a sort. */
  sortWithinPartitions(...cols: ReadonlyArray<ColumnRef<R>>): DataFrame<R> {
    return this.derive({
      _tag: "Sort",
      planId: Plan.newPlanId(),
      order: cols.map((c) => sortExpr(c as ColumnOrName) as E.SortOrder),
      global: false,
      child: this.plan
    })
  }

  /** The first `n` rows. */
  limit(n: number): DataFrame<R> {
    const error =
      !Number.isInteger(n) || n < 0
        ? invalid(
            `[INVALID_LIMIT_LIKE_EXPRESSION.IS_NEGATIVE] The limit like expression "${n}" is invalid. The limit expression must be equal to or greater than 0, but got ${n}.`
          )
        : undefined
    return this.derive({ _tag: "Limit", planId: Plan.newPlanId(), n, child: this.plan }, error)
  }

  /** Names this DataFrame so its columns can be qualified (`F.col("a.id")`). */
  alias(name: string): DataFrame<R> {
    return this.derive({ _tag: "SubqueryAlias", planId: Plan.newPlanId(), alias: name, child: this.plan })
  }

  /** Same as `alias`. */
  as(name: string): DataFrame<R> {
    return this.alias(name)
  }

  /** Returns this DataFrame: with one partition per batch, repartitioning changes nothing visible. */
  repartition(_numPartitions?: number, ..._cols: ReadonlyArray<ColumnRef<R>>): DataFrame<R> {
    return this
  }

  /** Returns this DataFrame (see `repartition`). */
  coalesce(_numPartitions: number): DataFrame<R> {
    return this
  }

  /** The writer that saves this batch DataFrame (`write.format("parquet").mode("overwrite").save(path)`). */
  get write(): DataFrameWriter<R> {
    return new DataFrameWriter(this)
  }

  /** The writer that starts this streaming DataFrame as a query (`writeStream.format(...).start()`). */
  get writeStream(): DataStreamWriter<R> {
    return new DataStreamWriter(this)
  }

  // ---- actions --------------------------------------------------------------------------

  /** @internal runs the plan and returns internal rows with the schema. */
  execute(): Effect.Effect<
    { readonly schema: T.StructType; readonly rows: ReadonlyArray<InternalRow> },
    AnalysisError | ConnectorError
  > {
    if (this.buildError !== undefined) return Effect.fail(this.buildError)
    // A remote session (`Session.layer({ remote })`) runs the plan on Spark instead.
    if (this.state.remote !== undefined) return this.state.remote.execute(this.plan)
    return QE.run(this.state, this.plan)
  }

  /** All rows as plain objects (timestamps as `Date`, structs as objects). */
  collect(): Effect.Effect<ReadonlyArray<R>, AnalysisError | ConnectorError> {
    return Effect.map(this.execute(), ({ schema, rows }) => rowsToExternal<R>(schema, rows))
  }

  /** The number of rows. */
  count(): Effect.Effect<number, AnalysisError | ConnectorError> {
    return Effect.map(this.execute(), ({ rows }) => rows.length)
  }

  /** The first `n` rows. */
  take(n: number): Effect.Effect<ReadonlyArray<R>, AnalysisError | ConnectorError> {
    return this.limit(n).collect()
  }

  /** Same as `take`. */
  head(n = 1): Effect.Effect<ReadonlyArray<R>, AnalysisError | ConnectorError> {
    return this.take(n)
  }

  /** The first row, or `undefined` when there is none. */
  first(): Effect.Effect<R | undefined, AnalysisError | ConnectorError> {
    return Effect.map(this.take(1), (rows) => rows[0])
  }

  /** True when there are no rows. */
  isEmpty(): Effect.Effect<boolean, AnalysisError | ConnectorError> {
    return Effect.map(this.take(1), (rows) => rows.length === 0)
  }

  /**
   * The text `show` prints: Spark's ASCII table of the first `n` rows. `truncate` cuts cells to
   * 20 characters (`true`) or to a given width; `vertical` prints one block per row.
   */
  showString(
    n = 20,
    truncate: boolean | number = true,
    vertical = false
  ): Effect.Effect<string, AnalysisError | ConnectorError> {
    const width = truncate === true ? 20 : truncate === false ? 0 : truncate
    // Spark clamps a negative row count to 0 ("only showing top 0 rows").
    const numRows = Math.max(0, Math.trunc(n))
    return Effect.map(this.limit(numRows + 1).execute(), ({ schema, rows }) =>
      showString(schema, rows, numRows, width, vertical)
    )
  }

  /** Prints the first `n` rows as Spark's ASCII table (through Effect's `Console`). */
  show(
    n = 20,
    truncate: boolean | number = true,
    vertical = false
  ): Effect.Effect<void, AnalysisError | ConnectorError> {
    return Effect.flatMap(this.showString(n, truncate, vertical), (s) => Console.log(s))
  }

  /** Spark's `printSchema` tree; printed through `Console` and returned. */
  printSchema(): Effect.Effect<string, AnalysisError | ConnectorError> {
    return Effect.gen({ self: this }, function* () {
      if (this.buildError !== undefined) return yield* this.buildError
      const remote = this.state.remote
      const schema =
        remote !== undefined
          ? yield* remote.schema(this.plan)
          : PlanOutput.schemaOf(yield* Effect.fromResult(this.analyzed()))
      const text = T.treeString(schema)
      yield* Console.log(text)
      return text
    })
  }

  /**
   * The plans as text, printed through `Console` and returned: the physical plan, or with
   * `extended` the parsed, analyzed, optimized and physical plans under Spark's headings.
   */
  explain(extended = false): Effect.Effect<string, AnalysisError | ConnectorError> {
    return Effect.gen({ self: this }, function* () {
      if (this.buildError !== undefined) return yield* this.buildError
      const remote = this.state.remote
      const text =
        remote !== undefined
          ? yield* remote.explain(this.plan, extended)
          : QE.explainString(yield* Effect.fromResult(QE.prepare(this.state, this.plan)), extended)
      yield* Console.log(text)
      return text
    })
  }

  /** Registers this DataFrame as a temporary view for `spark.table(name)` and `spark.sql`. */
  createOrReplaceTempView(name: string): Effect.Effect<void> {
    return Effect.sync(() => {
      this.state.tempViews.set(name.toLowerCase(), this.plan)
    })
  }

  /** Like `createOrReplaceTempView`, but fails when the view exists. */
  createTempView(name: string): Effect.Effect<void, AnalysisError> {
    return Effect.suspend(() =>
      this.state.tempViews.has(name.toLowerCase())
        ? Effect.fail(
            invalid(
              `[TEMP_TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create the temporary view \`${name}\` because it already exists.`,
              "InvalidPlan"
            )
          )
        : this.createOrReplaceTempView(name)
    )
  }

  toString(): string {
    const fields = this.schema.fields.map((f) => `${f.name}: ${T.simpleString(f.dataType)}`)
    return `DataFrame[${fields.join(", ")}]`
  }

  /**
   * Rich display in notebooks (Deno's Jupyter kernel): the first 20 rows as an HTML table with
   * the schema, and `show()`'s text; a streaming DataFrame shows its schema.
   */
  [JUPYTER_DISPLAY](): Promise<MimeBundle> {
    if (this.isStreaming) return Promise.resolve(streamingBundle(this.schema))
    const total = this.plan._tag === "LocalRelation" ? this.plan.rows.length : undefined
    return Effect.runPromise(
      Effect.match(this.limit(21).execute(), {
        onSuccess: ({ schema, rows }) => tableBundle(schema, rows, 20, total),
        onFailure: (e): MimeBundle => ({ "text/plain": `${e._tag}: ${e.message}` })
      })
    )
  }
}
