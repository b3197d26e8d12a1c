/**
 * The planning-time parts of a stream-stream join (Spark's `StreamingSymmetricHashJoinHelper`):
 * how the join condition splits into one-side and both-side conjuncts, and which state
 * watermark predicate bounds each side's state for a given eviction watermark.
 *
 * Spark distinguishes two state watermarks (see `StreamingSymmetricHashJoinExec`'s class doc):
 *
 * - the **state-key watermark**: when an equi-join key carries an event-time watermark (the
 *   event-time column itself, or a `window` over it), a stored row whose key time is at or below
 *   the event-time watermark can never match again; the same key position bounds the other
 *   side too, even when that side has no watermark of its own (`JoinStateKeyWatermarkPredicate`);
 * - the **state-value watermark**: otherwise, when a side has an event-time column and the
 *   condition holds a time range against the other side (`leftTime > rightTime - 5`), the range
 *   and the other side's watermark give a bound below which this side's rows can go
 *   (`JoinStateValueWatermarkPredicate`, `StreamingJoinHelper.getStateValueWatermark`).
 *
 * @since 0.1.0
 */
import type { AttributeReference, Expression } from "../../../core/Expression.ts"
import * as E from "../../../core/Expression.ts"
import { isDeterministic } from "../../../core/optimizer/Optimizer.ts"
import { stateValueWatermark } from "../../../core/analysis/UnsupportedOperationChecker.ts"
import * as P from "../SparkPlan.ts"
import type { JoinConditionSplit } from "../SparkPlan.ts"
import { findEventTimeColumn } from "./WatermarkSupport.ts"

/**
 * A side of the join (Spark's `JoinSide`, printed `left` / `right`).
 *
 * @since 0.1.0
 */
export type JoinSide = "left" | "right"

/**
 * A state watermark predicate of one side: remove the stored rows whose key time (the join key
 * at `keyOrdinal`) or whose event time (`eventTime`, an attribute of the side's input) is at or
 * below `watermarkMs`. Window structs compare by their `end`, as Spark's `watermarkExpression`.
 *
 * @since 0.1.0
 */
export type JoinStateWatermarkPredicate =
  | { readonly _tag: "KeyPredicate"; readonly keyOrdinal: number; readonly watermarkMs: number }
  | { readonly _tag: "ValuePredicate"; readonly eventTime: AttributeReference; readonly watermarkMs: number }

/**
 * Spark's `JoinStateWatermarkPredicates`: one optional predicate per side.
 *
 * @since 0.1.0
 */
export interface JoinStateWatermarkPredicates {
  readonly left: JoinStateWatermarkPredicate | undefined
  readonly right: JoinStateWatermarkPredicate | undefined
}

const splitConjuncts = (e: Expression): ReadonlyArray<Expression> =>
  e._tag === "BinaryExpression" && e.op === "and" ? [...splitConjuncts(e.left), ...splitConjuncts(e.right)] : [e]

const conjunction = (es: ReadonlyArray<Expression>): Expression | undefined =>
  es.length === 0
    ? undefined
    : es.reduce((acc, e) => ({ _tag: "BinaryExpression", op: "and", left: acc, right: e }) as Expression)

const within = (e: Expression, ids: ReadonlySet<number>): boolean => E.references(e).every((a) => ids.has(a.exprId))

/**
 * Spark's `JoinConditionSplitPredicates.apply`: deterministic conjuncts over the left input only
 * go to `leftSideOnly`, over the right only to `rightSideOnly` (a conjunct without columns goes
 * to both), and the others, with every nondeterministic conjunct, to `bothSides`.
 *
 * @example
 * ```ts
 * import { splitJoinCondition } from "./StreamingSymmetricHashJoinHelper.ts"
 * // condition `leftValue > 4 AND rightValue < leftValue`:
 * // { leftSideOnly: leftValue > 4, rightSideOnly: undefined, bothSides: rightValue < leftValue, full: … }
 * ```
 * @since 0.1.0
 */
export const splitJoinCondition = (
  condition: Expression | undefined,
  left: ReadonlyArray<AttributeReference>,
  right: ReadonlyArray<AttributeReference>
): JoinConditionSplit => {
  if (condition === undefined) {
    return { leftSideOnly: undefined, rightSideOnly: undefined, bothSides: undefined, full: undefined }
  }
  const leftIds = new Set(left.map((a) => a.exprId))
  const rightIds = new Set(right.map((a) => a.exprId))
  const conjuncts = splitConjuncts(condition)
  const deterministic = conjuncts.filter(isDeterministic)
  const nondeterministic = conjuncts.filter((c) => !isDeterministic(c))
  const leftOnly = deterministic.filter((c) => within(c, leftIds))
  const rightOnly = deterministic.filter((c) => within(c, rightIds))
  const both = deterministic.filter((c) => !within(c, leftIds) && !within(c, rightIds))
  return {
    leftSideOnly: conjunction(leftOnly),
    rightSideOnly: conjunction(rightOnly),
    bothSides: conjunction([...both, ...nondeterministic]),
    full: condition
  }
}

/** Spark's `case ne: NamedExpression if ne.metadata.contains(delayKey)`. */
const carriesWatermark = (e: Expression): boolean =>
  (e._tag === "AttributeReference" && e.eventTimeDelayMs !== undefined) ||
  (e._tag === "Alias" && e.child._tag === "AttributeReference" && e.child.eventTimeDelayMs !== undefined)

/**
 * The position of the first equi-join key (left keys first, then right keys) that carries an
 * event-time watermark, or `undefined` (Spark's `joinKeyOrdinalForWatermark`).
 *
 * @since 0.1.0
 */
export const joinKeyOrdinalForWatermark = (
  leftKeys: ReadonlyArray<Expression>,
  rightKeys: ReadonlyArray<Expression>
): number | undefined => {
  const l = leftKeys.findIndex(carriesWatermark)
  if (l >= 0) return l
  const r = rightKeys.findIndex(carriesWatermark)
  return r >= 0 ? r : undefined
}

/**
 * Spark's `getStateWatermarkPredicates` for the eviction watermark `eventTimeWatermarkMs`
 * (`undefined` when the query has no watermark: then no state is ever removed). For each side:
 * a key predicate when a join key carries the watermark (cases 1 and 3 of Spark's class doc),
 * else a value predicate on the side's event-time column when the condition gives a state-value
 * watermark for it (case 2), else none.
 *
 * @example
 * ```ts
 * import { stateWatermarkPredicates } from "./StreamingSymmetricHashJoinHelper.ts"
 * // keys (key, window) with a watermark on the left window, eviction watermark 15 s:
 * // { left: { _tag: "KeyPredicate", keyOrdinal: 1, watermarkMs: 15000 }, right: { … same … } }
 * ```
 * @since 0.1.0
 */
export const stateWatermarkPredicates = (
  leftAttributes: ReadonlyArray<AttributeReference>,
  rightAttributes: ReadonlyArray<AttributeReference>,
  leftKeys: ReadonlyArray<Expression>,
  rightKeys: ReadonlyArray<Expression>,
  condition: Expression | undefined,
  eventTimeWatermarkMs: number | undefined
): JoinStateWatermarkPredicates => {
  const keyOrdinal = joinKeyOrdinalForWatermark(leftKeys, rightKeys)
  const oneSide = (
    attrs: ReadonlyArray<AttributeReference>,
    other: ReadonlyArray<AttributeReference>
  ): JoinStateWatermarkPredicate | undefined => {
    if (eventTimeWatermarkMs === undefined) return undefined
    if (keyOrdinal !== undefined) return { _tag: "KeyPredicate", keyOrdinal, watermarkMs: eventTimeWatermarkMs }
    const eventTime = findEventTimeColumn(attrs)
    if (eventTime === undefined) return undefined
    const watermarkMs = stateValueWatermark(attrs, other, condition, eventTimeWatermarkMs)
    return watermarkMs === undefined ? undefined : { _tag: "ValuePredicate", eventTime, watermarkMs }
  }
  return { left: oneSide(leftAttributes, rightAttributes), right: oneSide(rightAttributes, leftAttributes) }
}

/**
 * Whether the join removes state by the watermark at all (some side has a key predicate, or a
 * state-value watermark can be derived): Spark's `stateWatermarkPredicates.left.nonEmpty ||
 * right.nonEmpty`, asked with any watermark value.
 *
 * @since 0.1.0
 */
export const usesWatermarkForStateCleanup = (
  leftAttributes: ReadonlyArray<AttributeReference>,
  rightAttributes: ReadonlyArray<AttributeReference>,
  leftKeys: ReadonlyArray<Expression>,
  rightKeys: ReadonlyArray<Expression>,
  condition: Expression | undefined
): boolean => {
  const p = stateWatermarkPredicates(leftAttributes, rightAttributes, leftKeys, rightKeys, condition, 1_000_000)
  return p.left !== undefined || p.right !== undefined
}

const readsStream = (p: P.SparkPlan): boolean => p._tag === "StreamingScanExec" || P.children(p).some(readsStream)

/**
 * Spark's `StreamingJoinStrategy` refusal: a join of two streams without an equality between
 * them (`=` or `<=>`) is not planned as a stream-stream join; Spark fails the query when it
 * plans the first batch with this message. Returns the message for the first such join of a
 * streaming physical plan, or `undefined`.
 *
 * @since 0.1.0
 */
export const streamStreamJoinWithoutEquality = (plan: P.SparkPlan): string | undefined => {
  switch (plan._tag) {
    case "BroadcastHashJoinExec":
    case "ShuffledHashJoinExec":
    case "BroadcastNestedLoopJoinExec":
      if (readsStream(plan.left) && readsStream(plan.right)) {
        return "Stream-stream join without equality predicate is not supported"
      }
      break
    default:
      break
  }
  for (const c of P.children(plan)) {
    const found = streamStreamJoinWithoutEquality(c)
    if (found !== undefined) return found
  }
  return undefined
}
