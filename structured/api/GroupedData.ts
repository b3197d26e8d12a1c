/**
 * `GroupedData`: the result of `groupBy`, waiting for its aggregates. Grouping columns come
 * first in the output (Spark's `spark.sql.retainGroupColumns`), then the aggregates in order.
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * // df: DataFrame<{ user: string; amount: number }>
 * // df.groupBy("user").agg(F.sum("amount"), F.count("*").as("n"))  // { user, "sum(amount)", n }
 * // df.groupBy("user").count()                                     // { user, count }
 * ```
 * @since 0.1.0
 */
import { type Column, col, lit } from "../../core/Column.ts"
import type * as E from "../../core/Expression.ts"
import * as F from "../../core/F.ts"
import * as Plan from "../../core/LogicalPlan.ts"
import { AnalysisError } from "../../core/Errors.ts"
import type { DataFrame } from "./DataFrame.ts"
import type { ColumnName, Row, SelectRow, Simplify } from "./RowTypes.ts"

type Numeric<R> = { [K in ColumnName<R>]: R[K] extends number | null | undefined ? K : never }[ColumnName<R>]

type Named<Prefix extends string, Ks extends ReadonlyArray<string>> = { -readonly [I in keyof Ks as Ks[I] extends string ? `${Prefix}(${Ks[I]})` : never]: number }

/** The aggregate functions `agg({ col: "fn" })` accepts, as in Spark. */
const DICT_FUNCTIONS: Record<string, (c: string) => Column<any, any>> = {
  count: (c) => (c === "*" ? F.count("*") : F.count(c)),
  sum: (c) => F.sum(c),
  avg: (c) => F.avg(c),
  mean: (c) => F.avg(c),
  min: (c) => F.min(c),
  max: (c) => F.max(c),
  first: (c) => F.first(c),
  last: (c) => F.last(c),
  collect_list: (c) => F.collect_list(c),
  collect_set: (c) => F.collect_set(c),
  approx_count_distinct: (c) => F.approx_count_distinct(c),
  stddev: (c) => F.stddev(c),
  std: (c) => F.std(c),
  stddev_samp: (c) => F.stddev_samp(c),
  stddev_pop: (c) => F.stddev_pop(c),
  variance: (c) => F.variance(c),
  var_samp: (c) => F.var_samp(c),
  var_pop: (c) => F.var_pop(c),
  skewness: (c) => F.skewness(c),
  kurtosis: (c) => F.kurtosis(c),
  median: (c) => F.median(c)
}

/**
 * Spark's `RelationalGroupedDataset` (`df.groupBy(...)`): the grouping of a DataFrame by columns
 * or windows, waiting for its aggregates — `agg(...)`, `count()`, `sum`, `avg`, `min`, `max`,
 * `mean`.
 *
 * @since 0.1.0
 */
export class GroupedData<R, K> {
  readonly df: DataFrame<R>
  readonly groupingExpressions: ReadonlyArray<E.Expression>

  constructor(df: DataFrame<R>, groupingExpressions: ReadonlyArray<E.Expression>) {
    this.df = df
    this.groupingExpressions = groupingExpressions
  }

  private aggregate<S>(columns: ReadonlyArray<E.Expression>, error?: AnalysisError): DataFrame<S> {
    return this.df.derive<S>(
      {
        _tag: "Aggregate",
        planId: Plan.newPlanId(),
        groupingExpressions: this.groupingExpressions,
        aggregateExpressions: [...this.groupingExpressions, ...columns],
        child: this.df.plan
      },
      error
    )
  }

  /**
   * Computes aggregates per group: Columns (`F.sum("x")`, `F.count("*").as("n")`), or Spark's
   * dictionary form `{ x: "sum", y: "max" }` (columns named `sum(x)`, `max(y)`).
   */
  agg<const Cs extends ReadonlyArray<Column<any, any>>>(...cols: Cs): DataFrame<Simplify<K & SelectRow<R, Cs>>>
  agg(exprs: Readonly<Record<string, string>>): DataFrame<Simplify<K & Row>>
  agg(...args: ReadonlyArray<unknown>): DataFrame<any> {
    const [firstArg] = args
    if (args.length === 1 && firstArg !== null && typeof firstArg === "object" && !("expr" in (firstArg as object))) {
      const entries = Object.entries(firstArg as Record<string, string>)
      const bad = entries.find(([, fn]) => DICT_FUNCTIONS[fn.toLowerCase()] === undefined)
      if (bad !== undefined) {
        return this.aggregate(
          [],
          new AnalysisError({
            reason: "InvalidArgument",
            errorClass: "UNRESOLVED_ROUTINE",
            message: `[UNRESOLVED_ROUTINE] Cannot resolve routine \`${bad[1]}\` on search path [\`system\`.\`builtin\`].`
          })
        )
      }
      return this.aggregate(entries.map(([c, fn]) => DICT_FUNCTIONS[fn.toLowerCase()](c).expr))
    }
    return this.aggregate((args as ReadonlyArray<Column<any, any>>).map((c) => c.expr))
  }

  /** The number of rows per group, in a column named `count`. */
  count(): DataFrame<Simplify<K & { count: number }>> {
    return this.aggregate([F.count(lit(1)).as("count").expr])
  }

  /** `sum` of the given numeric columns (all numeric columns when none are given). */
  sum<const Ks extends ReadonlyArray<Numeric<R>>>(...cols: Ks): DataFrame<Simplify<K & Named<"sum", Ks>>> {
    return this.numeric("sum", cols)
  }

  /** `avg` of the given numeric columns (all numeric columns when none are given). */
  avg<const Ks extends ReadonlyArray<Numeric<R>>>(...cols: Ks): DataFrame<Simplify<K & Named<"avg", Ks>>> {
    return this.numeric("avg", cols)
  }

  /** Same as `avg`. */
  mean<const Ks extends ReadonlyArray<Numeric<R>>>(...cols: Ks): DataFrame<Simplify<K & Named<"avg", Ks>>> {
    return this.numeric("avg", cols)
  }

  /** `min` of the given numeric columns (all numeric columns when none are given). */
  min<const Ks extends ReadonlyArray<Numeric<R>>>(...cols: Ks): DataFrame<Simplify<K & Named<"min", Ks>>> {
    return this.numeric("min", cols)
  }

  /** `max` of the given numeric columns (all numeric columns when none are given). */
  max<const Ks extends ReadonlyArray<Numeric<R>>>(...cols: Ks): DataFrame<Simplify<K & Named<"max", Ks>>> {
    return this.numeric("max", cols)
  }

  private numeric(fn: "sum" | "avg" | "min" | "max", cols: ReadonlyArray<string>): DataFrame<any> {
    const make = { sum: F.sum, avg: F.avg, min: F.min, max: F.max }[fn]
    if (cols.length > 0) return this.aggregate(cols.map((c) => make(col(c)).expr))
    // Spark: with no columns, every numeric column of the input.
    const numericCols = this.df.schema.fields
      .filter((f) => f.dataType._tag === "integer" || f.dataType._tag === "long" || f.dataType._tag === "double")
      .map((f) => f.name)
    return this.aggregate(numericCols.map((c) => make(col(c)).expr))
  }
}
