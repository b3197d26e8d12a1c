/**
 * Spark's `UnsupportedOperationChecker`: which operations an analyzed plan may use in a batch
 * query, a micro-batch streaming query (per output mode) and a continuous query, with Spark 4's
 * rules and messages.
 *
 * The checks follow Spark 4's `checkForStreaming` in its order, so the same plan fails with the
 * same first message:
 *
 * 1. the plan must read a streaming source;
 * 2. output mode against the streaming aggregations (the topmost one decides): `Append` needs a
 *    grouping key on an event-time watermark (the column itself, a `window` over it, a session
 *    window over it); `Update` refuses session windows; `Complete` needs an aggregation;
 * 3. every operator, children first: distinct aggregates, joins (stream-static sides per join
 *    type; stream-stream only in `Append`, outer and semi joins only with a watermark in the join
 *    keys or a time-range condition on the nullable side), `dropDuplicatesWithinWatermark` without
 *    a watermark, a union of streaming and batch inputs, limits in `Update`, sorts other than over
 *    a complete aggregation, `monotonically_increasing_id()`;
 * 4. the global watermark check (`spark.sql.streaming.statefulOperator.checkCorrectness.enabled`):
 *    a stateful operator may not sit above a streaming aggregation unless the mode is `Append`.
 *
 * Spark 3.5 dropped the older "Multiple streaming aggregations are not supported", "dropDuplicates
 * is not supported after aggregation" and "Inner join between two streaming DataFrames/Datasets
 * is not supported" rules: chained stateful operators are allowed in `Append` mode, and the
 * global watermark check is what rejects them in `Update`/`Complete`. This module follows Spark 4.
 *
 * tributary's `Distinct` comes from `df.distinct()`, which Spark defines as `dropDuplicates()`, so
 * it is checked as a `Deduplicate` over every column (not as Spark's SQL `DISTINCT` aggregate).
 *
 * Operators Spark checks that tributary has no plan node for yet (and so are not checked here):
 * `applyInPandasWithState`, `transformWithState`, `cogroup`,
 * grouping sets (`cube`/`rollup`), `sample`, `offset`, commands.
 *
 * @since 0.1.0
 */
import { output } from "./PlanOutput.ts"
import { AnalysisError } from "../Errors.ts"
import * as E from "../Expression.ts"
import * as P from "../LogicalPlan.ts"
import { prettyName, windowSpecSql } from "../ExpressionName.ts"
import { expressionString, windowFunctionString } from "../PlanString.ts"
import type { OutputMode } from "../Streaming.ts"

/** Spark's `SQLConf` keys the checker reads. */
export interface StreamingCheckConf {
  /** `spark.sql.streaming.statefulOperator.checkCorrectness.enabled` (default `true`). */
  readonly statefulOperatorCheckCorrectness?: boolean
}

// Spark reports every checker failure under this legacy class, its message being the text alone
const ERROR_CLASS = "_LEGACY_ERROR_TEMP_3102"

/**
 * Spark 4's `STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION`
 * (`QueryCompilationErrors.unsupportedOutputModeForStreamingOperationError`), worded as Spark 4.2
 * words it, followed by the sentence Spark 3 gave for the same refusal (`legacy`), which code and
 * tests written against Spark 3 look for.
 */
const outputModeUnsupported = (
  outputMode: OutputMode,
  operation: string,
  legacy: string,
  reason: "UnsupportedOperation" | "WatermarkRequired" = "UnsupportedOperation"
): AnalysisError =>
  new AnalysisError({
    reason,
    errorClass: "STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION",
    message: `[STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] Invalid streaming output mode: ${outputMode}. This output mode is not supported for ${operation} on streaming DataFrames/DataSets. (${legacy})`
  })

const unsupported = (message: string): AnalysisError =>
  new AnalysisError({ reason: "UnsupportedOperation", errorClass: ERROR_CLASS, message })

const watermarkRequired = (message: string): AnalysisError =>
  new AnalysisError({ reason: "WatermarkRequired", errorClass: ERROR_CLASS, message })

/** `OutputMode.toString` in Spark (`InternalOutputModes.Append` prints `Append`). */
const modeName = (m: OutputMode): string => {
  switch (m) {
    case "append":
      return "Append"
    case "update":
      return "Update"
    case "complete":
      return "Complete"
  }
}

// ---------------------------------------------------------------------------------------------
// Tree walks that stop at the first error
// ---------------------------------------------------------------------------------------------

/** Spark's `foreachUp`: children first (left to right), then the node; the first error wins. */
const firstUp = (p: P.LogicalPlan, f: (p: P.LogicalPlan) => AnalysisError | undefined): AnalysisError | undefined => {
  for (const c of P.children(p)) {
    const e = firstUp(c, f)
    if (e !== undefined) return e
  }
  return f(p)
}

/** Spark's `collect`: pre-order. */
const collectPlans = <A extends P.LogicalPlan>(p: P.LogicalPlan, pick: (p: P.LogicalPlan) => p is A): Array<A> => {
  const out: Array<A> = []
  P.foreach(p, (x) => {
    if (pick(x)) out.push(x)
  })
  return out
}

/** Spark's `find` without the node itself: does any node strictly below `p` satisfy `pred`? */
const existsBelow = (p: P.LogicalPlan, pred: (p: P.LogicalPlan) => boolean): boolean =>
  P.children(p).some((c) => {
    let found = false
    P.foreach(c, (x) => {
      if (!found && pred(x)) found = true
    })
    return found
  })

// ---------------------------------------------------------------------------------------------
// Watermark metadata
// ---------------------------------------------------------------------------------------------

const stripAlias = (e: E.Expression): E.Expression => (e._tag === "Alias" ? stripAlias(e.child) : e)

/** Spark's `metadata.contains(EventTimeWatermark.delayKey)`. */
const hasDelay = (a: E.AttributeReference): boolean => a.eventTimeDelayMs !== undefined

/** Ids of the attributes of `attrs` that carry an event-time watermark. */
const delayedIds = (attrs: ReadonlyArray<E.AttributeReference>): ReadonlySet<number> => {
  const s = new Set<number>()
  for (const a of attrs) if (hasDelay(a)) s.add(a.exprId)
  return s
}

/** Spark's `hasEventTimeCol`: an attribute with a watermark anywhere in `e`. */
const hasEventTimeCol = (e: E.Expression, delayed: ReadonlySet<number>): boolean =>
  E.exists(e, (x) => x._tag === "AttributeReference" && (hasDelay(x) || delayed.has(x.exprId)))

/**
 * Spark's "aggregation with watermark" test: a grouping expression that is an attribute carrying
 * the watermark. A `window(...)` column carries its time column's watermark (the analyzer copies
 * it, as Spark's `TimeWindowing` copies the metadata); a session window carries it when its time
 * column is a watermarked attribute (Spark's `SessionWindowing`).
 */
const groupsOnWatermark = (a: P.Aggregate): boolean => {
  const delayed = delayedIds(output(a.child))
  return a.groupingExpressions.some((g) => {
    const x = stripAlias(g)
    if (x._tag === "AttributeReference") return hasDelay(x) || delayed.has(x.exprId)
    if (x._tag === "SessionWindow") {
      const t = stripAlias(x.timeColumn)
      return t._tag === "AttributeReference" && (hasDelay(t) || delayed.has(t.exprId))
    }
    return false
  })
}

const groupsOnSessionWindow = (a: P.Aggregate): boolean =>
  a.groupingExpressions.some((g) => stripAlias(g)._tag === "SessionWindow")

/** The keys a `Deduplicate` (or `Distinct`, Spark's `dropDuplicates()`) deduplicates on. */
const dedupKeys = (p: P.Deduplicate | P.Distinct): ReadonlyArray<E.AttributeReference> =>
  p._tag === "Deduplicate" ? (p.keys ?? output(p.child)) : output(p.child)

// ---------------------------------------------------------------------------------------------
// Stream-stream join watermarks (Spark's StreamingJoinHelper)
// ---------------------------------------------------------------------------------------------

const splitConjuncts = (e: E.Expression): ReadonlyArray<E.Expression> =>
  e._tag === "BinaryExpression" && e.op === "and" ? [...splitConjuncts(e.left), ...splitConjuncts(e.right)] : [e]

const referenceIds = (e: E.Expression): ReadonlySet<number> => new Set(E.references(e).map((a) => a.exprId))

const subsetOf = (ids: ReadonlySet<number>, of: ReadonlySet<number>): boolean => {
  for (const id of ids) if (!of.has(id)) return false
  return true
}

/**
 * Spark's `ExtractEquiJoinKeys` as `isWatermarkInJoinKeys` uses it: the `left = right` conjuncts of
 * the condition whose sides each read one input, as (left key, right key) pairs. Null-safe
 * equalities become `coalesce`/`isnull` keys in Spark, never bare attributes, so they are left out.
 */
const equiJoinKeys = (join: P.Join): ReadonlyArray<readonly [E.Expression, E.Expression]> => {
  if (join.condition === undefined) return []
  const leftIds = new Set(output(join.left).map((a) => a.exprId))
  const rightIds = new Set(output(join.right).map((a) => a.exprId))
  const keys: Array<readonly [E.Expression, E.Expression]> = []
  for (const c of splitConjuncts(join.condition)) {
    if (c._tag !== "BinaryExpression" || c.op !== "=") continue
    const l = referenceIds(c.left)
    const r = referenceIds(c.right)
    if (l.size === 0 || r.size === 0) continue
    if (subsetOf(l, leftIds) && subsetOf(r, rightIds)) keys.push([c.left, c.right])
    else if (subsetOf(l, rightIds) && subsetOf(r, leftIds)) keys.push([c.right, c.left])
  }
  return keys
}

/**
 * Spark's `StreamingJoinHelper.isWatermarkInJoinKeys`: an equi-join key of either side is an
 * attribute carrying an event-time watermark. False when the join has no equi-join keys.
 *
 * @since 0.1.0
 */
export const isWatermarkInJoinKeys = (join: P.Join): boolean => {
  const delayed = delayedIds([...output(join.left), ...output(join.right)])
  return equiJoinKeys(join).some(([l, r]) =>
    [l, r].some((k) => k._tag === "AttributeReference" && (hasDelay(k) || delayed.has(k.exprId)))
  )
}

/** A term of a canonicalised comparison: an attribute, or a constant in microseconds. */
type Term =
  | { readonly _tag: "Attr"; readonly negated: boolean; readonly attr: E.AttributeReference }
  | { readonly _tag: "Const"; readonly negated: boolean; readonly micros: number }

const termKey = (t: Term): string =>
  t._tag === "Attr" ? `${t.negated ? "-" : "+"}#${t.attr.exprId}` : `${t.negated ? "-" : "+"}${t.micros}`

const MICROS_PER_DAY = 86_400_000_000

const isCalendarInterval = (v: unknown): v is { months: number; days: number; micros: number } =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as { months?: unknown }).months === "number" &&
  typeof (v as { days?: unknown }).days === "number" &&
  typeof (v as { micros?: unknown }).micros === "number"

/**
 * Spark's `collectTerms`: `e` as a sum of attributes and constants (microseconds), each possibly
 * negated; `undefined` when `e` has any other shape.
 */
const collectTerms = (e: E.Expression): ReadonlyArray<Term> | undefined => {
  const out: Array<Term> = []
  const walk = (x: E.Expression, negated: boolean): boolean => {
    switch (x._tag) {
      case "BinaryExpression":
        if (x.op === "+") return walk(x.left, negated) && walk(x.right, negated)
        if (x.op === "-") return walk(x.left, negated) && walk(x.right, !negated)
        return false
      case "UnaryExpression":
        return x.op === "negate" && walk(x.child, !negated)
      case "Cast": {
        const t = x.to._tag
        return (t === "integer" || t === "long" || t === "double" || t === "timestamp") && walk(x.child, negated)
      }
      case "AttributeReference":
        out.push({ _tag: "Attr", negated, attr: x })
        return true
      case "Literal": {
        const v = x.value
        if (v === null || v === undefined) return false
        switch (x.dataType._tag) {
          case "integer":
          case "long":
          case "double":
            // a plain number counts as seconds, as Spark's `lit * 1000000.0`
            out.push({ _tag: "Const", negated, micros: (v as number) * 1_000_000 })
            return true
          case "timestamp":
            // internal timestamps are epoch ms; the term is in microseconds
            out.push({ _tag: "Const", negated, micros: (v as number) * 1000 })
            return true
          case "calendarInterval":
            // Spark refuses months (imprecise); days count as 24 hours (a day-time interval)
            if (!isCalendarInterval(v) || v.months > 0) return false
            out.push({ _tag: "Const", negated, micros: v.days * MICROS_PER_DAY + v.micros })
            return true
          default:
            return false
        }
      }
      default:
        return false
    }
  }
  if (!walk(e, false)) return undefined
  // Spark keeps the terms in an `ExpressionSet`: equal terms count once
  const seen = new Set<string>()
  return out.filter((t) => {
    const k = termKey(t)
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
}

/**
 * Solves `left < right` for the state watermark of `toFind`'s side (Spark's
 * `getStateWatermarkFromLessThenPredicate`): canonicalised to `left - right < 0`, the one term on
 * `toFind`'s side must be negated, and the rest (the watermarked attribute replaced by the
 * watermark) gives the bound.
 */
const stateWatermarkFromLessThan = (
  left: E.Expression,
  right: E.Expression,
  toFind: ReadonlySet<number>,
  withWatermark: ReadonlySet<number>,
  watermarked: ReadonlySet<number>,
  eventWatermarkMs: number
): number | undefined => {
  const inCondition = new Set([...referenceIds(left), ...referenceIds(right)])
  let nFind = 0
  let nWatermark = 0
  for (const id of inCondition) {
    if (toFind.has(id)) nFind++
    if (withWatermark.has(id)) nWatermark++
  }
  // more than one attribute of a side: cannot be solved
  if (nFind > 1 || nWatermark > 1) return undefined
  const terms = collectTerms({ _tag: "BinaryExpression", op: "-", left, right })
  if (terms === undefined) return undefined
  const constraint = terms.filter((t) => t._tag === "Attr" && toFind.has(t.attr.exprId))
  if (constraint.length !== 1 || !constraint[0].negated) return undefined
  const rest = terms.filter((t) => t !== constraint[0])
  // Spark reduces the rest with `reduceLeft`: nothing left is an error, hence no watermark
  if (rest.length === 0) return undefined
  let sum = 0
  for (const t of rest) {
    let v: number
    if (t._tag === "Const") v = t.micros
    else if (withWatermark.has(t.attr.exprId) && (hasDelay(t.attr) || watermarked.has(t.attr.exprId)))
      v = eventWatermarkMs * 1000
    // any other attribute cannot be evaluated: Spark's `eval` fails and gives no watermark
    else return undefined
    sum += t.negated ? -v : v
  }
  return Math.trunc(sum / 1000)
}

/**
 * Spark's `StreamingJoinHelper.getStateValueWatermark`: the state watermark (ms) for the rows of
 * the side whose attributes are `toFind`, implied by the time-range conjuncts of `condition`
 * (`leftTime + c1 < rightTime + c2`, with `<`, `<=`, `>`, `>=`) and the event-time watermark of
 * the other side. The smallest bound over all conjuncts; `undefined` when none gives one.
 *
 * Numbers count as seconds, intervals by their days and microseconds (months are refused);
 * `cast(ts AS long)` is read as the timestamp itself, as in Spark.
 *
 * @example
 * ```ts
 * import * as T from "../DataType.ts"
 * import { attribute, literal } from "../Expression.ts"
 * const lt = attribute("lt", T.LongType)
 * const rt = { ...attribute("rt", T.LongType), eventTimeDelayMs: 5000 }
 * // lt > rt + 10 (seconds) with the watermark W = 60 s on rt: left rows up to W + 10 s can go
 * const plus10 = { _tag: "BinaryExpression" as const, op: "+" as const, left: rt, right: literal(10, T.LongType) }
 * const condition = { _tag: "BinaryExpression" as const, op: ">" as const, left: lt, right: plus10 }
 * stateValueWatermark([lt], [rt], condition, 60_000) // 70_000
 * ```
 * @since 0.1.0
 */
export const stateValueWatermark = (
  toFind: ReadonlyArray<E.AttributeReference>,
  withEventWatermark: ReadonlyArray<E.AttributeReference>,
  condition: E.Expression | undefined,
  eventWatermarkMs: number | undefined
): number | undefined => {
  if (condition === undefined || eventWatermarkMs === undefined) return undefined
  const watermarked = delayedIds(withEventWatermark)
  if (watermarked.size === 0) return undefined
  const findIds = new Set(toFind.map((a) => a.exprId))
  const wmIds = new Set(withEventWatermark.map((a) => a.exprId))
  const solve = (l: E.Expression, r: E.Expression) =>
    stateWatermarkFromLessThan(l, r, findIds, wmIds, watermarked, eventWatermarkMs)
  let best: number | undefined
  for (const c of splitConjuncts(condition)) {
    if (c._tag !== "BinaryExpression") continue
    let w: number | undefined
    // the cleanup is inclusive of the state watermark, so a non-strict bound gives one ms less
    switch (c.op) {
      case "<":
        w = solve(c.left, c.right)
        break
      case "<=":
        w = solve(c.left, c.right)
        if (w !== undefined) w -= 1
        break
      case ">":
        w = solve(c.right, c.left)
        break
      case ">=":
        w = solve(c.right, c.left)
        if (w !== undefined) w -= 1
        break
      default:
        w = undefined
    }
    if (w !== undefined) best = best === undefined ? w : Math.min(best, w)
  }
  return best
}

/** Spark's `checkForStreamStreamJoinWatermark`. */
const checkStreamStreamJoinWatermark = (join: P.Join): AnalysisError | undefined => {
  const left = output(join.left)
  const right = output(join.right)
  // any defined watermark value will do: only whether a bound exists matters here
  const bound = (find: ReadonlyArray<E.AttributeReference>, wm: ReadonlyArray<E.AttributeReference>) =>
    stateValueWatermark(find, wm, join.condition, 1_000_000) !== undefined
  let hasValidWatermarkRange: boolean
  switch (join.joinType) {
    case "left_outer":
    case "left_semi":
      hasValidWatermarkRange = bound(left, right)
      break
    case "right_outer":
      hasValidWatermarkRange = bound(right, left)
      break
    case "full_outer":
      hasValidWatermarkRange = bound(left, right) || bound(right, left)
      break
    case "inner":
    case "cross":
    case "left_anti":
      return unsupported(`Join type ${P.joinTypeName(join.joinType)} is not supported with streaming DataFrame/Dataset`)
  }
  if (!isWatermarkInJoinKeys(join) && !hasValidWatermarkRange) {
    return watermarkRequired(
      `Stream-stream ${P.joinTypeName(join.joinType)} join between two streaming DataFrame/Datasets is not supported without a watermark in the join keys, or a watermark on the nullable side and an appropriate range condition`
    )
  }
  return undefined
}

/** The join rules of Spark's `checkForStreaming`. */
const checkJoin = (join: P.Join, mode: OutputMode): AnalysisError | undefined => {
  const ls = P.isStreaming(join.left)
  const rs = P.isStreaming(join.right)
  if (ls && rs && mode !== "append") {
    return unsupported(
      `Join between two streaming DataFrames/Datasets is not supported in ${modeName(mode)} output mode, only in Append output mode`
    )
  }
  switch (join.joinType) {
    case "inner":
    case "cross":
      return undefined
    case "full_outer":
      if (ls && !rs) {
        return unsupported(
          "FullOuter joins with streaming DataFrames/Datasets on the left and a static DataFrame/Dataset on the right is not supported"
        )
      }
      if (!ls && rs) {
        return unsupported(
          "FullOuter joins with streaming DataFrames/Datasets on the right and a static DataFrame/Dataset on the left is not supported"
        )
      }
      return ls && rs ? checkStreamStreamJoinWatermark(join) : undefined
    case "left_anti":
      return rs
        ? unsupported("LeftAnti joins with a streaming DataFrame/Dataset on the right are not supported")
        : undefined
    case "left_outer":
    case "left_semi":
      if (!ls && rs) {
        return unsupported(
          `${P.joinTypeName(join.joinType)} join with a streaming DataFrame/Dataset on the right and a static DataFrame/Dataset on the left is not supported`
        )
      }
      return ls && rs ? checkStreamStreamJoinWatermark(join) : undefined
    case "right_outer":
      if (ls && !rs) {
        return unsupported(
          "RightOuter join with a streaming DataFrame/Dataset on the left and a static DataFrame/DataSet on the right not supported"
        )
      }
      return ls && rs ? checkStreamStreamJoinWatermark(join) : undefined
  }
}

// ---------------------------------------------------------------------------------------------
// Streaming
// ---------------------------------------------------------------------------------------------

const isStreamingAggregate = (p: P.LogicalPlan): p is P.Aggregate => p._tag === "Aggregate" && P.isStreaming(p)

/** Spark's `checkUnsupportedExpressions`: `monotonically_increasing_id()` has no meaning across batches. */
const checkUnsupportedExpressions = (p: P.LogicalPlan): AnalysisError | undefined => {
  const found = P.expressions(p).some((e) =>
    E.exists(e, (x) => x._tag === "ScalarFunction" && x.name.toLowerCase() === "monotonically_increasing_id")
  )
  return found
    ? unsupported("Expression(s): monotonically_increasing_id() is not supported with streaming DataFrames/Datasets")
    : undefined
}

/**
 * Spark's `isStatefulOperation` (for the global watermark check): a streaming aggregation, a
 * stream-stream join, and a deduplication keyed on an event-time column or within the watermark.
 */
const isStatefulOperation = (p: P.LogicalPlan): boolean => {
  switch (p._tag) {
    case "Aggregate":
      return P.isStreaming(p)
    case "TransformWithState":
      return P.isStreaming(p.child)
    case "FlatMapGroupsWithState":
      return P.isStreaming(p)
    case "Join":
      return P.isStreaming(p.left) && P.isStreaming(p.right)
    case "Deduplicate":
    case "Distinct": {
      if (!P.isStreaming(p)) return false
      if (p._tag === "Deduplicate" && p.withinWatermark) return true
      const delayed = delayedIds(output(p.child))
      return dedupKeys(p).some((k) => hasEventTimeCol(k, delayed))
    }
    case "LocalRelation":
    case "DataSourceRelation":
    case "StreamingRelation":
    case "Project":
    case "Filter":
    case "Sort":
    case "Limit":
    case "Union":
    case "Intersect":
    case "Except":
    case "Generate":
    case "Window":
    case "WithColumns":
    case "WithColumnsRenamed":
    case "Drop":
    case "TypedFilter":
    case "MapElements":
    case "EventTimeWatermark":
    case "SubqueryAlias":
      return false
  }
}

const CORRECTNESS_MESSAGE =
  "Detected pattern of possible 'correctness' issue due to global watermark. The query contains stateful operation which can emit rows older than the current watermark plus allowed late record delay, which are \"late rows\" in downstream stateful operations and these rows can be discarded. Please refer the programming guide doc for more details. If you understand the possible risk of correctness issue and still need to run the query, you can disable this check by setting the config `spark.sql.streaming.statefulOperator.checkCorrectness.enabled` to false."

/**
 * Spark's `checkStreamingQueryGlobalWatermarkLimit`: a stateful operator above a streaming
 * aggregation that emits in `Update` or `Complete` mode would see rows older than the watermark
 * and drop them as late. With the check disabled Spark only logs a warning; here it passes.
 *
 * @since 0.1.0
 */
export const checkStreamingQueryGlobalWatermarkLimit = (
  plan: P.LogicalPlan,
  outputMode: OutputMode,
  conf: StreamingCheckConf = {}
): AnalysisError | undefined => {
  if (conf.statefulOperatorCheckCorrectness === false) return undefined
  // Spark's `ifCannotBeFollowedByStatefulOperation`: also a streaming [flat]MapGroupsWithState
  // with an event-time timeout (its output carries no watermark guarantee)
  const cannotBeFollowed = (p: P.LogicalPlan): boolean =>
    (isStreamingAggregate(p) && outputMode !== "append") ||
    (p._tag === "FlatMapGroupsWithState" && P.isStreaming(p) && p.timeout === "EventTimeTimeout")
  let found = false
  P.foreach(plan, (p) => {
    if (!found && isStatefulOperation(p) && existsBelow(p, cannotBeFollowed)) found = true
  })
  return found ? unsupported(CORRECTNESS_MESSAGE) : undefined
}

/**
 * Spark's rules for a streaming `[flat]MapGroupsWithState` (`checkForStreaming`): a batch initial
 * state; `mapGroupsWithState` only in Update mode; `flatMapGroupsWithState` without aggregation
 * in the query's own output mode, with aggregation only in Append mode; an event-time timeout
 * only with a watermark on the input.
 */
const checkGroupsWithState = (
  p: P.FlatMapGroupsWithState,
  mode: OutputMode,
  hasStreamingAggregates: boolean
): AnalysisError | undefined => {
  if (!P.isStreaming(p)) return undefined
  if (p.initialState !== undefined && P.isStreaming(p.initialState)) {
    // Spark's message says "Non-streaming", though it refuses a streaming initial state
    return unsupported(
      "Non-streaming DataFrame/Dataset is not supported as the initial state in [flatMap|map]GroupsWithState operation on a streaming DataFrame/Dataset"
    )
  }
  if (p.isMapGroupsWithState) {
    if (mode !== "update") {
      return unsupported(
        `mapGroupsWithState is not supported with ${modeName(mode)} output mode on a streaming DataFrame/Dataset`
      )
    }
  } else if (!hasStreamingAggregates) {
    if (p.outputMode !== mode) {
      return unsupported(
        `flatMapGroupsWithState in ${p.outputMode} mode is not supported with ${modeName(mode)} output mode on a streaming DataFrame/Dataset`
      )
    }
  } else if (p.outputMode === "update") {
    return unsupported(
      "flatMapGroupsWithState in update mode is not supported with aggregation on a streaming DataFrame/Dataset"
    )
  }
  if (p.timeout === "EventTimeTimeout" && !output(p.child).some(hasDelay)) {
    return watermarkRequired(
      "Watermark must be specified in the query using '[Dataset/DataFrame].withWatermark()' for using event-time timeout in a [map|flatMap]GroupsWithState. Event-time timeout not supported without watermark."
    )
  }
  return undefined
}

/**
 * Spark's counts of `[flat]MapGroupsWithState` in a streaming plan: at most one
 * `mapGroupsWithState`, never mixed with `flatMapGroupsWithState`, and several
 * `flatMapGroupsWithState` only when all of them and the query are in Append mode.
 */
const checkGroupsWithStateCount = (plan: P.LogicalPlan, outputMode: OutputMode): AnalysisError | undefined => {
  const all = collectPlans(
    plan,
    (p): p is P.FlatMapGroupsWithState => p._tag === "FlatMapGroupsWithState" && P.isStreaming(p)
  )
  const maps = all.filter((p) => p.isMapGroupsWithState)
  const flatMaps = all.filter((p) => !p.isMapGroupsWithState)
  if (maps.length >= 2) {
    return unsupported("Multiple mapGroupsWithStates are not supported on a streaming DataFrames/Datasets")
  }
  if (maps.length > 0 && flatMaps.length > 0) {
    return unsupported(
      "Mixing mapGroupsWithStates and flatMapGroupsWithStates are not supported on a streaming DataFrames/Datasets"
    )
  }
  if (flatMaps.length >= 2 && (outputMode !== "append" || flatMaps.some((p) => p.outputMode !== "append"))) {
    return unsupported(
      "Multiple flatMapGroupsWithStates are not supported when they are not all in append mode or the output mode is not append on a streaming DataFrames/Datasets"
    )
  }
  return undefined
}

/** The per-operator rules of Spark's `checkForStreaming` (its `foreachUp` match). */
const checkOperator = (
  p: P.LogicalPlan,
  mode: OutputMode,
  completeAggregation: boolean,
  hasStreamingAggregates = false
): AnalysisError | undefined => {
  switch (p._tag) {
    case "FlatMapGroupsWithState":
      return checkGroupsWithState(p, mode, hasStreamingAggregates)
    case "Aggregate": {
      if (!P.isStreaming(p.child)) return undefined
      const distinct = p.aggregateExpressions.some((e) =>
        E.exists(e, (x) => x._tag === "AggregateFunction" && x.distinct)
      )
      return distinct
        ? unsupported(
            "Distinct aggregations are not supported on streaming DataFrames/Datasets. Consider using approx_count_distinct() instead."
          )
        : undefined
    }
    case "Join":
      return checkJoin(p, mode)
    case "Deduplicate":
      // dropDuplicatesWithinWatermark keeps a key until the watermark passes it: it needs one
      if (p.withinWatermark && P.isStreaming(p) && !output(p.child).some(hasDelay)) {
        return watermarkRequired(
          "dropDuplicatesWithinWatermark is not supported on streaming DataFrames/DataSets without watermark"
        )
      }
      return undefined
    case "Except":
      if (P.isStreaming(p.right)) {
        return unsupported("Except on a streaming DataFrame/Dataset on the right is not supported")
      }
      // Spark lets a streaming left side through here and plans its rewrite (a streaming
      // aggregation over a left anti join, ReplaceExceptWithAntiJoin / RewriteExceptAll); the
      // local engine has no streaming plan for it (docs/differences.md).
      return P.isStreaming(p.left)
        ? unsupported(
            `${p.isAll ? "exceptAll" : "except"} of a streaming DataFrame/Dataset is not supported by the local engine; use a left_anti join with the static side and dropDuplicates`
          )
        : undefined
    case "Intersect":
      return P.isStreaming(p.left) || P.isStreaming(p.right)
        ? unsupported("Intersect of streaming DataFrames/Datasets is not supported")
        : undefined
    case "Union": {
      const kinds = new Set(p.children.map(P.isStreaming))
      return kinds.size === 2
        ? unsupported("Union between streaming and batch DataFrames/Datasets is not supported")
        : undefined
    }
    case "Limit":
      return P.isStreaming(p.child) && mode === "update"
        ? unsupported("Limits are not supported on streaming DataFrames/Datasets in Update output mode")
        : undefined
    case "Sort": {
      // a sort needs the whole result every batch: a batch input, or an aggregation in Complete mode
      const complete = !P.isStreaming(p) || (completeAggregation && collectPlans(p, isStreamingAggregate).length > 0)
      return complete
        ? undefined
        : unsupported(
            "Sorting is not supported on streaming DataFrames/Datasets, unless it is on aggregated DataFrame/Dataset in Complete output mode"
          )
    }
    case "LocalRelation":
    case "DataSourceRelation":
    case "StreamingRelation":
    case "Project":
    case "Filter":
    case "Distinct":
    case "Generate":
    case "WithColumns":
    case "WithColumnsRenamed":
    case "Drop":
    case "TypedFilter":
    case "MapElements":
    case "EventTimeWatermark":
    case "SubqueryAlias":
      return undefined
    case "TransformWithState":
      return checkTransformWithState(p)
    case "Window":
      return P.isStreaming(p.child) ? nonTimeWindowNotSupported(p) : undefined
  }
}

/**
 * Spark's `NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING` (`QueryExecutionErrors
 * .nonTimeWindowNotSupportedInStreamingError`): the functions as their `toString`, the columns
 * and the specifications as SQL, upper-cased by `toSQLStmt` (the test "SPARK-44044:
 * non-time-window" of StreamingAggregationSuite).
 */
const nonTimeWindowNotSupported = (p: P.Window): AnalysisError => {
  const funcs: Array<string> = []
  const names: Array<string> = []
  const specs: Array<string> = []
  for (const e of p.windowExpressions) {
    const name = e._tag === "Alias" ? e.name : prettyName(e)
    E.exists(e, (x) => {
      if (x._tag !== "WindowExpression") return false
      funcs.push(
        (x.function._tag === "WindowFunction"
          ? windowFunctionString(x.function, x.orderSpec)
          : expressionString(x.function)
        ).toUpperCase()
      )
      names.push(`\`${name.replace(/`/g, "``")}\``)
      specs.push(windowSpecSql(x.partitionSpec, x.orderSpec, x.frame).toUpperCase())
      return false
    })
  }
  return new AnalysisError({
    reason: "UnsupportedOperation",
    errorClass: "NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING",
    message: `[NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING] Window function is not supported in ${funcs.join(",")} (as column ${names.join(",")}) on streaming DataFrames/Datasets. Structured Streaming only supports time-window aggregation using the WINDOW function. (window specification: ${specs.join(",")})`
  })
}

/**
 * Spark's rules for `transformWithState` on a stream: the initial state must be a batch
 * DataFrame (as for `[flatMap|map]GroupsWithState`), and `TimeMode.EventTime` timers fire on the
 * watermark, so the input needs one (Spark fails the batch with `missingTimeValues` otherwise).
 */
const checkTransformWithState = (p: P.TransformWithState): AnalysisError | undefined => {
  if (!P.isStreaming(p.child)) return undefined
  if (p.initialState !== undefined && P.isStreaming(p.initialState)) {
    return unsupported(
      "Non-streaming DataFrame/Dataset is not supported as the initial state in transformWithState operation on a streaming DataFrame/Dataset"
    )
  }
  let watermarked = false
  P.foreach(p.child, (c) => {
    if (c._tag === "EventTimeWatermark") watermarked = true
  })
  if (p.timeMode === "EventTime" && !watermarked) {
    return watermarkRequired(
      "Watermark must be specified in the query using '[Dataset/DataFrame].withWatermark()' for using TimeMode.EventTime in transformWithState."
    )
  }
  return undefined
}

/**
 * Spark's `UnsupportedOperationChecker.checkForStreaming`: whether an analyzed plan can run as a
 * streaming query in `outputMode`. `undefined` when it can; otherwise Spark's first error, with
 * reason `WatermarkRequired` when a missing watermark is the problem and `UnsupportedOperation`
 * otherwise.
 *
 * @example
 * ```ts
 * import * as T from "../DataType.ts"
 * import { attribute } from "../Expression.ts"
 * const k = attribute("k", T.StringType)
 * const stream = { _tag: "LocalRelation" as const, planId: 1, output: [k], rows: [], isStreaming: true }
 * const counts = { _tag: "Aggregate" as const, planId: 2, groupingExpressions: [k], aggregateExpressions: [k], child: stream }
 * checkForStreaming(counts, "update") // undefined
 * checkForStreaming(counts, "append")?.message
 * // "[STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] Invalid streaming output mode: append. This output mode is not supported for streaming aggregations without watermark on streaming DataFrames/DataSets. (Append output mode …)"
 * ```
 * @since 0.1.0
 */
export const checkForStreaming = (
  plan: P.LogicalPlan,
  outputMode: OutputMode,
  conf: StreamingCheckConf = {}
): AnalysisError | undefined => {
  if (!P.isStreaming(plan)) {
    return unsupported("Queries without streaming sources cannot be executed with writeStream.start()")
  }
  const groupsWithState = checkGroupsWithStateCount(plan, outputMode)
  if (groupsWithState !== undefined) return groupsWithState
  const aggregates = collectPlans(plan, isStreamingAggregate)
  const mode = modeName(outputMode)
  if (aggregates.length > 0) {
    // Spark looks at the topmost streaming aggregation only
    const top = aggregates[0]
    if (outputMode === "append" && !groupsOnWatermark(top)) {
      // without a watermark a group is never final, so Append could never emit it
      return outputModeUnsupported(
        outputMode,
        "streaming aggregations without watermark",
        `${mode} output mode not supported when there are streaming aggregations on streaming DataFrames/DataSets without watermark.`,
        "WatermarkRequired"
      )
    }
    if (outputMode === "update" && groupsOnSessionWindow(top)) {
      return outputModeUnsupported(
        outputMode,
        "session window streaming aggregations",
        `${mode} output mode not supported for session window on streaming DataFrames/DataSets.`
      )
    }
  } else if (outputMode === "complete") {
    return outputModeUnsupported(
      outputMode,
      "no streaming aggregations",
      `${mode} output mode not supported when there are no streaming aggregations on streaming DataFrames/Datasets.`
    )
  }
  const completeAggregation = outputMode === "complete"
  const err = firstUp(
    plan,
    (p) => checkOperator(p, outputMode, completeAggregation, aggregates.length > 0) ?? checkUnsupportedExpressions(p)
  )
  if (err !== undefined) return err
  return checkStreamingQueryGlobalWatermarkLimit(plan, outputMode, conf)
}

/**
 * Spark's `UnsupportedOperationChecker.checkForBatch`: a batch query (`collect`, `write`) may not
 * read a streaming source, and `dropDuplicatesWithinWatermark` has no meaning without a stream.
 *
 * @example
 * ```ts
 * import * as T from "../DataType.ts"
 * import { attribute } from "../Expression.ts"
 * const stream = { _tag: "LocalRelation" as const, planId: 1, output: [attribute("a", T.IntegerType)], rows: [], isStreaming: true }
 * checkForBatch(stream)?.message // "Queries with streaming sources must be executed with writeStream.start()"
 * ```
 * @since 0.1.0
 */
export const checkForBatch = (plan: P.LogicalPlan): AnalysisError | undefined =>
  firstUp(plan, (p) => {
    if (P.isStreaming(p)) return unsupported("Queries with streaming sources must be executed with writeStream.start()")
    if (p._tag === "Deduplicate" && p.withinWatermark) {
      return unsupported("dropDuplicatesWithinWatermark is not supported with batch DataFrames/DataSets")
    }
    if (p._tag === "TransformWithState" && p.timeMode === "EventTime") {
      // A batch query has no watermark for event-time timers (Spark fails it in validateTimeMode).
      return unsupported("transformWithState in TimeMode.EventTime needs a watermark, which batch queries do not have")
    }
    return undefined
  })

// ---------------------------------------------------------------------------------------------
// Continuous
// ---------------------------------------------------------------------------------------------

/**
 * Streaming file formats: Spark reads them through its V1 `FileStreamSource`, whose plan node
 * stays a `StreamingRelation` that continuous processing refuses.
 */
const V1_STREAMING_FORMATS: ReadonlySet<string> = new Set(["json", "csv", "text", "parquet", "orc"])

/**
 * The operator name Spark reports for a plan node continuous processing cannot run, or
 * `undefined` when it can (Spark's allow-list: projections, filters, typed map/filter, aliases and
 * the streaming source). Names are those of the node Spark's analyzed plan has in its place.
 *
 * Beyond Spark's list, tributary also runs `explode` (a `Generate` with an `Explode` generator)
 * and a `Union` of streams continuously: both are per-row work with no state, which its
 * continuous engine runs in the source partition's task.
 */
const continuousUnsupportedName = (p: P.LogicalPlan): string | undefined => {
  switch (p._tag) {
    case "FlatMapGroupsWithState":
      return "FlatMapGroupsWithState"
    case "Project":
    case "Filter":
    case "TypedFilter":
    case "MapElements":
    case "SubqueryAlias":
    // unresolved forms of a projection; the analyzer turns them into `Project`
    case "WithColumns":
    case "WithColumnsRenamed":
    case "Drop":
      return undefined
    case "StreamingRelation":
      return V1_STREAMING_FORMATS.has(p.format.toLowerCase()) ? "StreamingRelation" : undefined
    case "LocalRelation":
      // a streaming LocalRelation stands for a source (Spark's StreamingRelationV2)
      return p.isStreaming ? undefined : "LocalRelation"
    case "DataSourceRelation":
      return "LogicalRelation"
    case "Generate":
      // Spark's TimeWindowing: a tumbling window is a Project over a Filter, a sliding one an Expand
      if (p.generator._tag === "TimeWindow") return p.generator.windowMs === p.generator.slideMs ? undefined : "Expand"
      return p.generator._tag === "Explode" ? undefined : "Generate"
    case "Aggregate":
      return "Aggregate"
    case "Join":
      return "Join"
    case "Sort":
      return "Sort"
    case "Limit":
      // Spark's Limit is GlobalLimit over LocalLimit; the walk meets the LocalLimit first
      return "LocalLimit"
    case "Distinct":
      // Dataset.distinct() is dropDuplicates()
      return "Deduplicate"
    case "Deduplicate":
      return p.withinWatermark ? "DeduplicateWithinWatermark" : "Deduplicate"
    case "Union":
      // a union with a batch side already failed the streaming checks
      return undefined
    case "Intersect":
    case "Except":
      // Spark's nodeName
      return `${p._tag}${p.isAll ? "All" : ""}`
    case "EventTimeWatermark":
      return "EventTimeWatermark"
    case "TransformWithState":
      return "TransformWithState"
  }
}

const CURRENT_TIME_FUNCTIONS = new Set(["current_timestamp", "current_date", "curdate", "now", "localtimestamp"])

const usesCurrentTime = (e: E.Expression): boolean =>
  E.exists(
    e,
    (x) =>
      x._tag === "CurrentTimestamp" || (x._tag === "ScalarFunction" && CURRENT_TIME_FUNCTIONS.has(x.name.toLowerCase()))
  )

/**
 * Spark's `UnsupportedOperationChecker.checkForContinuous`: the streaming checks, then only
 * map-like operators (`select`, `filter`, `map`, `flatMap`, a tumbling `window` column, and here
 * also `explode` and a union of streams) over sources Spark reads through its V2 API, and no
 * current time (`current_timestamp()`, `current_date()`), since a continuous query has no batches
 * to take a timestamp from.
 *
 * @example
 * ```ts
 * import * as T from "../DataType.ts"
 * import { attribute } from "../Expression.ts"
 * const k = attribute("k", T.StringType)
 * const stream = { _tag: "LocalRelation" as const, planId: 1, output: [k], rows: [], isStreaming: true }
 * const counts = { _tag: "Aggregate" as const, planId: 2, groupingExpressions: [k], aggregateExpressions: [k], child: stream }
 * checkForContinuous(counts, "update")?.message // "Continuous processing does not support Aggregate operations."
 * ```
 * @since 0.1.0
 */
export const checkForContinuous = (
  plan: P.LogicalPlan,
  outputMode: OutputMode,
  conf: StreamingCheckConf = {}
): AnalysisError | undefined =>
  checkForStreaming(plan, outputMode, conf) ??
  firstUp(plan, (p) => {
    const name = continuousUnsupportedName(p)
    if (name !== undefined) return unsupported(`Continuous processing does not support ${name} operations.`)
    if (P.expressions(p).some(usesCurrentTime)) {
      return unsupported("Continuous processing does not support current time operations.")
    }
    return undefined
  })
