/**
 * What the analyzer may consult besides the plan: the session's tables (memory-sink tables, temp
 * views) and the analysis settings (`spark.sql.caseSensitive`).
 *
 * The DataFrame API resolves `spark.table(name)` itself through `lookupTable`, so plans reach the
 * analyzer with their relations already in place; the catalog is passed along for the rules that
 * need it.
 *
 * @since 0.1.0
 */
import type { LogicalPlan } from "./LogicalPlan.ts"

/**
 * The session's named tables.
 *
 * @example
 * ```ts
 * import type { Catalog } from "./Catalog.ts"
 * const tables = new Map<string, LogicalPlan>()
 * const catalog: Catalog = { lookupTable: (name) => tables.get(name.toLowerCase()) }
 * ```
 * @since 0.1.0
 */
export interface Catalog {
  readonly lookupTable: (name: string) => LogicalPlan | undefined
}

/**
 * Analysis settings. `caseSensitive` is Spark's `spark.sql.caseSensitive` (default `false`):
 * column names resolve ignoring case unless it is set.
 *
 * @since 0.1.0
 */
export interface AnalyzerConf {
  readonly caseSensitive: boolean
  /**
   * Spark's `spark.sql.legacy.statisticalAggregate` (default `false`): when set, `stddev_samp`,
   * `var_samp`, `covar_samp` and `corr` over a single value give NaN instead of null.
   */
  readonly legacyStatisticalAggregate?: boolean
}

/** A catalog with no tables. */
export const emptyCatalog: Catalog = { lookupTable: () => undefined }

/** Spark's defaults: case-insensitive resolution. */
export const defaultAnalyzerConf: AnalyzerConf = { caseSensitive: false }
