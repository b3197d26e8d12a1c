/**
 * One run of a batch plan, as Spark's `QueryExecution`: parsed → analyzed → optimized →
 * physical, then executed. `explain` prints the same stages.
 *
 * @since 0.1.0
 */
import { Clock, Effect, Result } from "effect"
import * as Analyzer from "../../core/analysis/Analyzer.ts"
import * as PlanOutput from "../../core/analysis/PlanOutput.ts"
import * as T from "../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import { lookupBatchFormat } from "../../core/Formats.ts"
import * as Plan from "../../core/LogicalPlan.ts"
import * as Optimizer from "../../core/optimizer/Optimizer.ts"
import * as PlanString from "../../core/PlanString.ts"
import type { InternalRow } from "../../core/Row.ts"
import * as Execute from "../physical/Execute.ts"
import * as PhysicalPlanString from "../physical/PhysicalPlanString.ts"
import * as Planner from "../physical/Planner.ts"
import type { SparkPlan } from "../physical/SparkPlan.ts"
import { checkForBatch } from "../../core/analysis/UnsupportedOperationChecker.ts"
import * as State from "../contracts/SessionState.ts"

export interface QueryExecution {
  readonly parsed: Plan.LogicalPlan
  readonly analyzed: Plan.LogicalPlan
  readonly optimized: Plan.LogicalPlan
  readonly physical: SparkPlan
}

const analyzerConf = (state: State.SessionState) => ({
  caseSensitive: State.confBool(state, "spark.sql.caseSensitive"),
  legacyStatisticalAggregate: State.confBool(state, "spark.sql.legacy.statisticalAggregate")
})

/** Analyzes a plan (pure); the error says what is wrong and how to fix it. */
export const analyze = (state: State.SessionState, plan: Plan.LogicalPlan): Result.Result<Plan.LogicalPlan, AnalysisError> =>
  Analyzer.analyze(plan, state.catalog, analyzerConf(state))

/** Every stage of a plan, or the analysis error. */
export const prepare = (
  state: State.SessionState,
  plan: Plan.LogicalPlan
): Result.Result<QueryExecution, AnalysisError> =>
  Result.map(analyze(state, plan), (analyzed) => {
    const optimized = Optimizer.optimize(analyzed)
    return { parsed: plan, analyzed, optimized, physical: Planner.plan(optimized) }
  })

const schemaLine = (schema: T.StructType): string =>
  schema.fields.map((f) => `${f.name}: ${T.simpleString(f.dataType)}`).join(", ")

/** Spark's `explain` text: the physical plan, or with `extended` every stage under its heading. */
export const explainString = (qe: QueryExecution, extended: boolean): string => {
  const physical = PhysicalPlanString.treeString(qe.physical).trimEnd()
  if (!extended) return `== Physical Plan ==\n${physical}\n`
  return [
    "== Parsed Logical Plan ==",
    PlanString.treeString(qe.parsed, "parsed").trimEnd(),
    "",
    "== Analyzed Logical Plan ==",
    schemaLine(PlanOutput.schemaOf(qe.analyzed)),
    PlanString.treeString(qe.analyzed, "analyzed").trimEnd(),
    "",
    "== Optimized Logical Plan ==",
    PlanString.treeString(qe.optimized, "optimized").trimEnd(),
    "",
    "== Physical Plan ==",
    physical,
    ""
  ].join("\n")
}

const attributesSchema = (rel: Plan.DataSourceRelation): T.StructType =>
  T.struct(rel.output.map((a) => T.field(a.name, a.dataType, a.nullable)))

/** Reads a bounded relation: a session table, or a registered batch format. */
export const readRelation =
  (state: State.SessionState) =>
  (rel: Plan.DataSourceRelation): Effect.Effect<ReadonlyArray<InternalRow>, ConnectorError> => {
    if (rel.format === State.TABLE_FORMAT) {
      const table = State.lookupMemoryTable(state, rel.options.name ?? "")
      return table === undefined
        ? Effect.fail(
            new ConnectorError({
              connector: "memory",
              domain: "user",
              retryable: false,
              message: `[TABLE_OR_VIEW_NOT_FOUND] The table or view \`${rel.options.name}\` cannot be found.`
            })
          )
        : Effect.succeed(table.rows.slice())
    }
    const format = lookupBatchFormat(rel.format)
    if (format === undefined) {
      return Effect.fail(
        new ConnectorError({
          connector: rel.format,
          domain: "user",
          retryable: false,
          message: `[DATA_SOURCE_NOT_FOUND] Failed to find the data source: ${rel.format}.`
        })
      )
    }
    return format.read(rel.paths, attributesSchema(rel), rel.options, State.batchReadContext(state))
  }

/** Runs a batch plan and returns its schema and internal rows. */
export const run = (
  state: State.SessionState,
  plan: Plan.LogicalPlan
): Effect.Effect<{ readonly schema: T.StructType; readonly rows: ReadonlyArray<InternalRow> }, AnalysisError | ConnectorError> =>
  Effect.gen(function* () {
    const qe = yield* Effect.fromResult(prepare(state, plan))
    const unsupported = checkForBatch(qe.analyzed)
    if (unsupported !== undefined) return yield* unsupported
    const now = yield* Clock.currentTimeMillis
    const rows = yield* Execute.execute(qe.physical, { currentTimestampMs: now, readRelation: readRelation(state) })
    return { schema: PlanOutput.schemaOf(qe.analyzed), rows }
  })
