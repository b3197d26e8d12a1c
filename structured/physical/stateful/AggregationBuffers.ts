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
    decodeGrouping: groupingTypes.map(valueFromJSON)
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
