/**
 * Builders for small resolved logical plans, shared by the physical-layer tests.
 */
import { Effect, Exit } from "effect"
import * as T from "../../../core/DataType.ts"
import { ConnectorError } from "../../../core/Errors.ts"
import * as E from "../../../core/Expression.ts"
import * as L from "../../../core/LogicalPlan.ts"
import type { InternalRow } from "../../../core/Row.ts"
import { type ExecContext, execute } from "../../../structured/physical/Execute.ts"
import { plan } from "../../../structured/physical/Planner.ts"

export const attr = (name: string, t: T.DataType = T.IntegerType): E.AttributeReference => E.attribute(name, t)

export const local = (
  output: ReadonlyArray<E.AttributeReference>,
  rows: ReadonlyArray<InternalRow>
): L.LocalRelation => ({
  _tag: "LocalRelation",
  planId: L.newPlanId(),
  output,
  rows,
  isStreaming: false
})

export const lit = (value: unknown, t: T.DataType = T.IntegerType): E.Literal => E.literal(value, t)

export const bin = (op: E.BinaryOp, left: E.Expression, right: E.Expression): E.Expression => ({
  _tag: "BinaryExpression",
  op,
  left,
  right
})

export const alias = (child: E.Expression, name: string): E.Alias => ({
  _tag: "Alias",
  child,
  name,
  exprId: E.newExprId()
})

export const agg = (
  name: E.AggregateName,
  args: ReadonlyArray<E.Expression>,
  dataType: T.DataType,
  distinct = false
): E.AggregateFunction => ({ _tag: "AggregateFunction", name, args, distinct, options: {}, dataType })

export const countOne = (): E.AggregateFunction => agg("count", [lit(1)], T.LongType)

export const fn = (name: string, args: ReadonlyArray<E.Expression>, dataType: T.DataType): E.ScalarFunction => ({
  _tag: "ScalarFunction",
  name,
  args,
  dataType
})

export const asc = (child: E.Expression): E.SortOrder => ({
  _tag: "SortOrder",
  child,
  direction: "asc",
  nullOrdering: "nullsFirst"
})

export const desc = (child: E.Expression): E.SortOrder => ({
  _tag: "SortOrder",
  child,
  direction: "desc",
  nullOrdering: "nullsLast"
})

export const project = (projectList: ReadonlyArray<E.Expression>, child: L.LogicalPlan): L.Project => ({
  _tag: "Project",
  planId: L.newPlanId(),
  projectList,
  child
})

export const filter = (condition: E.Expression, child: L.LogicalPlan): L.Filter => ({
  _tag: "Filter",
  planId: L.newPlanId(),
  condition,
  child
})

export const aggregate = (
  groupingExpressions: ReadonlyArray<E.Expression>,
  aggregateExpressions: ReadonlyArray<E.Expression>,
  child: L.LogicalPlan
): L.Aggregate => ({ _tag: "Aggregate", planId: L.newPlanId(), groupingExpressions, aggregateExpressions, child })

export const join = (
  left: L.LogicalPlan,
  right: L.LogicalPlan,
  joinType: L.JoinType,
  condition: E.Expression | undefined
): L.Join => ({ _tag: "Join", planId: L.newPlanId(), left, right, joinType, condition, usingColumns: undefined })

export const sort = (order: ReadonlyArray<E.SortOrder>, child: L.LogicalPlan, global = true): L.Sort => ({
  _tag: "Sort",
  planId: L.newPlanId(),
  order,
  global,
  child
})

export const limit = (n: number, child: L.LogicalPlan): L.Limit => ({ _tag: "Limit", planId: L.newPlanId(), n, child })

export const ctx: ExecContext = {
  currentTimestampMs: 0,
  readRelation: (rel) =>
    Effect.fail(
      new ConnectorError({ connector: rel.format, domain: "user", retryable: false, message: "no files in tests" })
    )
}

/** Plans and runs a logical plan with the test context. */
export const runPlan = (logical: L.LogicalPlan, context: ExecContext = ctx): Promise<ReadonlyArray<InternalRow>> =>
  Effect.runPromise(execute(plan(logical), context))

/** Plans and runs a logical plan, returning its exit. */
export const runExit = (logical: L.LogicalPlan, context: ExecContext = ctx) =>
  Effect.runPromiseExit(execute(plan(logical), context))

export { Exit }
