/**
 * The compiled pieces of a streaming aggregation, built once per batch and shared by the keyed
 * and the session-window paths: the running aggregates (`makeAggregate`, whose buffers merge and
 * round-trip through JSON), the grouping evaluators, and the result projection the batch
 * `HashAggregateExec` uses over `groupingAttributes ++ aggregateAttributes`.
 *
 * @since 0.1.0
 */
import { type CompileContext, compile, compileProjection, dataTypeOf } from "../../../core/Compile.ts"
import * as T from "../../../core/DataType.ts"
import type * as E from "../../../core/Expression.ts"
import { type AggregateImpl, makeAggregate, valueFromJSON, valueToJSON } from "../../../core/functions/Aggregates.ts"
import type { InternalRow } from "../../../core/Row.ts"
import { normalizer } from "../HashKeys.ts"
import type * as P from "../SparkPlan.ts"
import { CorruptState, guardDecode } from "./OperatorState.ts"

/**
 * A streaming aggregation compiled for one batch.
 *
 * @since 0.1.0
 */
export interface CompiledAggregation {
  readonly impls: ReadonlyArray<AggregateImpl>
  /** The output row from an intermediate row `grouping values ++ aggregate results`. */
  readonly result: (row: InternalRow) => InternalRow
  /** Grouping values over the child's rows, one per grouping expression. */
  readonly groupingEvals: ReadonlyArray<(row: InternalRow) => unknown>
  readonly groupingTypes: ReadonlyArray<T.DataType>
  /** Spark's `NormalizeFloatingNumbers` for each grouping value (undefined: nothing to do). */
  readonly groupingNorms: ReadonlyArray<((v: unknown) => unknown) | undefined>
  /** JSON codecs of the grouping values, for the state value. */
  readonly encodeGrouping: ReadonlyArray<(v: unknown) => unknown>
  readonly decodeGrouping: ReadonlyArray<(j: unknown) => unknown>
  /** Per aggregate, its typed fold (`FastAggregate`), or `undefined` when it folds through `update`. */
  readonly fast: ReadonlyArray<FastAggregate | undefined>
}

/**
 * An aggregate whose batch fold can run over typed per-group accumulators instead of one
 * `update` call per row: `count` of input columns or of non-null constants (`count(*)` is
 * `count(1)`), and `sum` of one input column, without `DISTINCT`. The buffers are then made from
 * the accumulators with the aggregate's own `fromJSON` (its JSON form is the stored state format),
 * so they are the buffers `update` would have built.
 *
 * @since 0.1.0
 */
export type FastAggregate =
  /** Rows where every listed column is non-null (no columns: every row). */
  | { readonly _tag: "count"; readonly columns: ReadonlyArray<number> }
  /** An integral column's sum (Spark's long sum; past the safe integers the fold falls back to `update`). */
  | { readonly _tag: "longSum"; readonly column: number }
  /** A floating column's sum, in row order as `update` adds it. */
  | { readonly _tag: "doubleSum"; readonly column: number }

const columnOf = (e: E.Expression, input: ReadonlyArray<E.AttributeReference>): number =>
  e._tag === "AttributeReference" ? input.findIndex((a) => a.exprId === e.exprId) : -1

/** The typed fold of `f` over rows laid out like `input`, when it has one. */
const fastAggregate = (
  f: E.AggregateFunction,
  input: ReadonlyArray<E.AttributeReference>
): FastAggregate | undefined => {
  if (f.distinct) return undefined
  if (f.name === "count") {
    const columns: Array<number> = []
    for (const a of f.args) {
      if (a._tag === "Literal") {
        // count(NULL) counts nothing: left to `update`.
        if (a.value === null || a.value === undefined) return undefined
        continue
      }
      const i = columnOf(a, input)
      if (i < 0) return undefined
      columns.push(i)
    }
    return { _tag: "count", columns }
  }
  if (f.name === "sum" && f.args.length === 1) {
    const a = f.args[0]
    const i = columnOf(a, input)
    if (a._tag !== "AttributeReference" || i < 0) return undefined
    // The same choice as `makeAggregate`: integral input sums as a long, the rest as a double.
    const t = a.dataType
    if (T.isIntegral(t)) return { _tag: "longSum", column: i }
    if (t._tag === "double") return { _tag: "doubleSum", column: i }
  }
  return undefined
}

const stripAlias = (e: E.Expression): E.Expression => (e._tag === "Alias" ? stripAlias(e.child) : e)

/**
 * Compiles the aggregation of `p` for one batch (expressions are compiled once, never per row),
 * over rows laid out like `input`: the child's output, or the source of a fused window assignment
 * (`FusedWindow.ts`), whose window grouping expression (`skipGrouping`) the caller computes.
 *
 * @since 0.1.0
 */
export const compileAggregation = (
  p: P.StatefulAggregateExec,
  cctx: CompileContext,
  input: ReadonlyArray<E.AttributeReference> = p.child.output,
  skipGrouping = -1
): CompiledAggregation => {
  const groupingTypes = p.groupingAttributes.map((a) => a.dataType)
  return {
    impls: p.aggregateFunctions.map((f) =>
      makeAggregate(
        f,
        f.args.map((a) => compile(a, input, cctx)),
        f.args.map((a) => dataTypeOf(a))
      )
    ),
    result: compileProjection(p.resultExpressions, [...p.groupingAttributes, ...p.aggregateAttributes], cctx),
    groupingEvals: p.groupingExpressions.map((g, i) => {
      const e = stripAlias(g)
      // A session window is computed by the session path itself, a fused window by the caller.
      return e._tag === "SessionWindow" || i === skipGrouping ? () => null : compile(e, input, cctx)
    }),
    groupingTypes,
    groupingNorms: groupingTypes.map(normalizer),
    encodeGrouping: groupingTypes.map(valueToJSON),
    decodeGrouping: groupingTypes.map(valueFromJSON),
    fast: p.aggregateFunctions.map((f) => fastAggregate(f, input))
  }
}

/**
 * Fresh buffers, one per aggregate.
 *
 * @since 0.1.0
 */
export const initBuffers = (impls: ReadonlyArray<AggregateImpl>): Array<unknown> => impls.map((im) => im.init())

/**
 * Folds `more` into `into` (the rows of `into` first, as Spark's merge of restored state and
 * new input); returns `into`.
 *
 * @since 0.1.0
 */
export const mergeBuffers = (
  impls: ReadonlyArray<AggregateImpl>,
  into: Array<unknown>,
  more: ReadonlyArray<unknown>
): Array<unknown> => {
  for (let j = 0; j < impls.length; j++) into[j] = impls[j].merge(into[j], more[j])
  return into
}

/**
 * The aggregate results of the buffers.
 *
 * @since 0.1.0
 */
export const evaluateBuffers = (impls: ReadonlyArray<AggregateImpl>, bufs: ReadonlyArray<unknown>): Array<unknown> => {
  const out = new Array<unknown>(impls.length)
  for (let j = 0; j < impls.length; j++) out[j] = impls[j].evaluate(bufs[j])
  return out
}

/**
 * The JSON of the buffers, one element per aggregate.
 *
 * @since 0.1.0
 */
export const buffersToJSON = (impls: ReadonlyArray<AggregateImpl>, bufs: ReadonlyArray<unknown>): Array<unknown> => {
  const out = new Array<unknown>(impls.length)
  for (let j = 0; j < impls.length; j++) out[j] = impls[j].toJSON(bufs[j])
  return out
}

/**
 * Buffers from `json[offset..]`, as `buffersToJSON` wrote them; throws `CorruptState` on data it
 * did not write.
 *
 * @since 0.1.0
 */
export const buffersFromJSON = (
  impls: ReadonlyArray<AggregateImpl>,
  json: ReadonlyArray<unknown>,
  offset: number
): Array<unknown> => {
  if (json.length < offset + impls.length) {
    throw new CorruptState(`expected ${impls.length} aggregate buffers, found ${json.length - offset}`)
  }
  const out = new Array<unknown>(impls.length)
  for (let j = 0; j < impls.length; j++) out[j] = guardedFromJSON(impls[j], j)(json[offset + j])
  return out
}

/** Each aggregate's guarded decoder, made once (not once per stored value). */
const guarded = new WeakMap<AggregateImpl, Array<(json: unknown) => unknown>>()

const guardedFromJSON = (impl: AggregateImpl, j: number): ((json: unknown) => unknown) => {
  let byPosition = guarded.get(impl)
  if (byPosition === undefined) {
    byPosition = []
    guarded.set(impl, byPosition)
  }
  let f = byPosition[j]
  if (f === undefined) {
    f = guardDecode(`the buffer of aggregate ${j}`, impl.fromJSON)
    byPosition[j] = f
  }
  return f
}

/** An array, or `CorruptState`. */
export const asArray = (json: unknown, what: string): ReadonlyArray<unknown> => {
  if (!Array.isArray(json)) throw new CorruptState(`${what} is not an array`)
  return json
}

/**
 * The struct fields describing one aggregate result per aggregate (named like Spark's output
 * column, typed by the result), for state schemas.
 *
 * @since 0.1.0
 */
export const aggregateFields = (p: P.StatefulAggregateExec): ReadonlyArray<T.StructField> =>
  p.aggregateAttributes.map((a) => T.field(a.name, a.dataType, true))
