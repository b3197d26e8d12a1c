/**
 * The per-record work of a continuous query: the map-like physical operators between one
 * source's scan and the sink, compiled ONCE into a function over small arrays of rows.
 *
 * A continuous task hands over whatever its reader polled (often one to a few hundred rows) and
 * gets the rows for the sink back. Expressions are compiled by the batch engine's compiler
 * (`core/Compile.ts`) when the query starts, so nothing is compiled or interpreted per call. The
 * operators are the ones batch and micro-batch execution run (`physical/StatelessOperators.ts`:
 * `ProjectExec`, `FilterExec`, `GenerateExec`, `MapElementsExec`, a chain of them compiled into
 * one function); this module adds how a continuous query reaches them from one source's scan,
 * and `UnionExec`.
 *
 * @since 0.1.0
 */
import type { CompileContext } from "../../core/Compile.ts"
import type { InternalRow } from "../../core/Row.ts"
import type * as P from "../physical/SparkPlan.ts"
import { type RowsFn, type StatelessExec, statelessChain } from "../physical/StatelessOperators.ts"

export type { RowsFn }

// A continuous plan has no batches, hence no batch timestamp: the checker refuses
// `current_timestamp()` (Spark's "Continuous processing does not support current time operations.").
const CCTX: CompileContext = { currentTimestampMs: 0 }

const then =
  (f: RowsFn, g: RowsFn): RowsFn =>
  (rows) => {
    const r = f(rows)
    return r.length === 0 ? r : g(r)
  }

/** The stateless chain from `top` down, over the rows `sourceKey` feeds its input (or `undefined`). */
const chainFrom = (top: StatelessExec, sourceKey: string): RowsFn | undefined => {
  const chain = statelessChain(top, CCTX)
  const below = compileContinuous(chain.input, sourceKey)
  return below === undefined ? undefined : then(below, chain.fn)
}

/** Thrown when the planner produced an operator continuous processing cannot run (the checker should have refused it). */
export class UnsupportedContinuousOperator extends Error {
  readonly operator: string
  constructor(operator: string) {
    super(`Continuous processing does not support ${operator} operations.`)
    this.operator = operator
  }
}

/**
 * Compiles the path from the source `sourceKey` to the plan's output: the function that turns
 * rows read from that source into rows for the sink, or `undefined` when no scan of `plan`
 * reads it. A source read by several branches of a union goes through each of them, in the
 * union's child order.
 *
 * @example
 * ```ts
 * import { compileContinuous } from "./ContinuousPipeline.ts"
 * // physical: ProjectExec [value * 2] <- FilterExec (value > 1) <- StreamingScanExec memory-0
 * // compileContinuous(physical, "memory-0")!([[1], [2], [3]]) // [[4], [6]]
 * ```
 * @since 0.1.0
 */
export const compileContinuous = (plan: P.SparkPlan, sourceKey: string): RowsFn | undefined => {
  switch (plan._tag) {
    case "StreamingScanExec":
      return plan.relation.sourceKey === sourceKey ? (rows) => rows : undefined
    case "ProjectExec":
    case "FilterExec":
    case "GenerateExec":
    case "MapElementsExec":
      return chainFrom(plan, sourceKey)
    case "UnionExec": {
      const branches: Array<RowsFn> = []
      for (const c of plan.children) {
        const f = compileContinuous(c, sourceKey)
        if (f !== undefined) branches.push(f)
      }
      if (branches.length === 0) return undefined
      if (branches.length === 1) return branches[0]
      return (rows) => {
        const out: Array<InternalRow> = []
        for (const b of branches) for (const r of b(rows)) out.push(r)
        return out
      }
    }
    case "LocalTableScanExec":
      // An input the optimizer proved empty (a filter that is always false): nothing to read.
      return undefined
    case "DataSourceScanExec":
      throw new UnsupportedContinuousOperator("LogicalRelation")
    case "HashAggregateExec":
    case "StatefulAggregateExec":
      throw new UnsupportedContinuousOperator("Aggregate")
    case "BroadcastHashJoinExec":
    case "ShuffledHashJoinExec":
    case "BroadcastNestedLoopJoinExec":
    case "StreamingSymmetricHashJoinExec":
      throw new UnsupportedContinuousOperator("Join")
    case "SortExec":
    case "TakeOrderedAndProjectExec":
      throw new UnsupportedContinuousOperator("Sort")
    case "LimitExec":
      throw new UnsupportedContinuousOperator("LocalLimit")
    case "DeduplicateExec":
    case "StreamingDeduplicateExec":
      throw new UnsupportedContinuousOperator("Deduplicate")
    case "EventTimeWatermarkExec":
      throw new UnsupportedContinuousOperator("EventTimeWatermark")
    case "TransformWithStateExec":
      throw new UnsupportedContinuousOperator("TransformWithState")
    case "FlatMapGroupsWithStateExec":
      throw new UnsupportedContinuousOperator("FlatMapGroupsWithState")
  }
}
