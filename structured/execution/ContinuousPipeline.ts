/**
 * The per-record work of a continuous query: the map-like physical operators between one
 * source's scan and the sink, compiled ONCE into a function over small arrays of rows.
 *
 * A continuous task hands over whatever its reader polled (often one to a few hundred rows) and
 * gets the rows for the sink back. Expressions are compiled by the batch engine's compiler
 * (`core/Compile.ts`) when the query starts, so nothing is compiled or interpreted per call, and
 * every operator is a plain loop (the micro-batch operators of `Execute.ts` compile per batch,
 * which a stream of tiny arrays cannot afford). The operators mirror `Execute.ts` row for row:
 * `ProjectExec`, `FilterExec` (expression and typed predicates), `GenerateExec` (`explode` and
 * its variants, the tumbling `window`), `MapElementsExec` (`map`/`flatMap`) and `UnionExec`.
 *
 * @since 0.1.0
 */
import { type CompileContext, compile, compilePredicate, compileProjection, dataTypeOf } from "../../core/Compile.ts"
import * as T from "../../core/DataType.ts"
import type * as E from "../../core/Expression.ts"
import { type InternalRow, toExternal, toInternal } from "../../core/Row.ts"
import type * as P from "../physical/SparkPlan.ts"

/** Rows in, rows out (positional, ordered like the plan's output). */
export type RowsFn = (rows: ReadonlyArray<InternalRow>) => ReadonlyArray<InternalRow>

const MS_PER_DAY = 86_400_000

// A continuous plan has no batches, hence no batch timestamp: the checker refuses
// `current_timestamp()` (Spark's "Continuous processing does not support current time operations.").
const CCTX: CompileContext = { currentTimestampMs: 0 }

const structOf = (attrs: ReadonlyArray<E.AttributeReference>): T.StructType =>
  T.struct(attrs.map((a) => T.field(a.name, a.dataType, a.nullable)))

const then =
  (f: RowsFn, g: RowsFn): RowsFn =>
  (rows) => {
    const r = f(rows)
    return r.length === 0 ? r : g(r)
  }

const project = (p: P.ProjectExec): RowsFn => {
  const proj = compileProjection(p.projectList, p.child.output, CCTX)
  return (rows) => {
    const n = rows.length
    const out = new Array<InternalRow>(n)
    for (let i = 0; i < n; i++) out[i] = proj(rows[i])
    return out
  }
}

const filter = (p: P.FilterExec): RowsFn => {
  switch (p.condition._tag) {
    case "Predicate": {
      const keep = compilePredicate(p.condition.expression, p.child.output, CCTX)
      return (rows) => {
        const out: Array<InternalRow> = []
        for (let i = 0; i < rows.length; i++) if (keep(rows[i])) out.push(rows[i])
        return out
      }
    }
    case "TypedPredicate": {
      // Spark's TypedFilter: the user's function sees the external row.
      const external = toExternal(structOf(p.child.output))
      const keep = p.condition.predicate
      return (rows) => {
        const out: Array<InternalRow> = []
        for (let i = 0; i < rows.length; i++) if (keep(external(rows[i])) === true) out.push(rows[i])
        return out
      }
    }
  }
}

/** `explode`, `explode_outer`, `posexplode[_outer]` over arrays and maps (as `Execute.ts`). */
const explode = (p: P.GenerateExec, g: E.Explode): RowsFn => {
  const input = p.child.output
  const ev = compile(g.child, input, CCTX)
  const isMap = dataTypeOf(g.child)._tag === "map"
  const width = input.length
  const genWidth = p.generatorOutput.length
  const pos = g.position ? 1 : 0
  return (rows) => {
    const out: Array<InternalRow> = []
    const emit = (row: InternalRow, i: number, a: unknown, b: unknown, pair: boolean): void => {
      const o = new Array<unknown>(width + genWidth)
      for (let c = 0; c < width; c++) o[c] = row[c]
      if (pos === 1) o[width] = i
      o[width + pos] = a
      if (pair) o[width + pos + 1] = b
      out.push(o)
    }
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]
      const v = ev(row)
      const size =
        v === null || v === undefined
          ? 0
          : isMap
            ? (v as Map<unknown, unknown>).size
            : (v as ReadonlyArray<unknown>).length
      if (size === 0) {
        // the _outer variants keep the row, with nulls for the generated columns
        if (g.outer) {
          const o = new Array<unknown>(width + genWidth).fill(null)
          for (let c = 0; c < width; c++) o[c] = row[c]
          out.push(o)
        }
        continue
      }
      if (isMap) {
        let i = 0
        for (const [k, x] of v as Map<unknown, unknown>) emit(row, i++, k, x, true)
      } else {
        const arr = v as ReadonlyArray<unknown>
        for (let i = 0; i < arr.length; i++) emit(row, i, arr[i] === undefined ? null : arr[i], null, false)
      }
    }
    return out
  }
}

/** A tumbling `window(...)` column (Spark's `TimeWindowing` for window = slide: one window per event). */
const tumblingWindow = (p: P.GenerateExec, w: E.TimeWindow): RowsFn => {
  const { windowMs, slideMs, startMs } = w
  const ev = compile(w.timeColumn, p.child.output, CCTX)
  const isDate = dataTypeOf(w.timeColumn)._tag === "date"
  const width = p.child.output.length
  const count = Math.ceil(windowMs / slideMs)
  const exact = windowMs % slideMs === 0
  return (rows) => {
    const out: Array<InternalRow> = []
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]
      const raw = ev(row)
      if (raw === null || raw === undefined) continue
      const ts = isDate ? (raw as number) * MS_PER_DAY : (raw as number)
      const rem = (ts - startMs) % slideMs
      const lastStart = ts - (rem < 0 ? rem + slideMs : rem)
      for (let i = 0; i < count; i++) {
        const start = lastStart - i * slideMs
        const end = start + windowMs
        if (!exact && !(ts >= start && ts < end)) continue
        const o = new Array<unknown>(width + 1)
        for (let c = 0; c < width; c++) o[c] = row[c]
        o[width] = [start, end]
        out.push(o)
      }
    }
    return out
  }
}

/** `map(f)` / `flatMap(f)` over external rows (Spark's `MapElementsExec` / `MapPartitionsExec`). */
const mapElements = (p: P.MapElementsExec): RowsFn => {
  const external = toExternal(structOf(p.child.output))
  let toRow: (v: unknown) => InternalRow
  if (p.wrapValue) {
    const conv = toInternal(p.schema.fields[0]?.dataType ?? T.NullType)
    toRow = (v) => [conv(v)]
  } else {
    const conv = toInternal(p.schema)
    toRow = (v) => {
      const row = conv(v)
      if (row === null) {
        // Spark's encoder cannot serialize a null object as a top-level row either.
        throw new Error(`map/flatMap returned ${String(v)} where a row of ${T.simpleString(p.schema)} was expected`)
      }
      return row as InternalRow
    }
  }
  const fn = p.fn
  if (p.flat) {
    return (rows) => {
      const out: Array<InternalRow> = []
      for (let i = 0; i < rows.length; i++)
        for (const v of fn(external(rows[i])) as Iterable<unknown>) out.push(toRow(v))
      return out
    }
  }
  return (rows) => {
    const out = new Array<InternalRow>(rows.length)
    for (let i = 0; i < rows.length; i++) out[i] = toRow(fn(external(rows[i])))
    return out
  }
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
    case "ProjectExec": {
      const below = compileContinuous(plan.child, sourceKey)
      return below === undefined ? undefined : then(below, project(plan))
    }
    case "FilterExec": {
      const below = compileContinuous(plan.child, sourceKey)
      return below === undefined ? undefined : then(below, filter(plan))
    }
    case "GenerateExec": {
      const below = compileContinuous(plan.child, sourceKey)
      if (below === undefined) return undefined
      const g = plan.generator
      return then(below, g._tag === "Explode" ? explode(plan, g) : tumblingWindow(plan, g))
    }
    case "MapElementsExec": {
      const below = compileContinuous(plan.child, sourceKey)
      return below === undefined ? undefined : then(below, mapElements(plan))
    }
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
