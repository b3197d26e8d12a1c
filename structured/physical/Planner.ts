/**
 * The batch planner: turns an analyzed and optimized logical plan into physical operators, the
 * way Spark's `SparkStrategies` do for one partition.
 *
 * - `Aggregate` becomes a `HashAggregateExec` whose result expressions read an intermediate row
 *   of grouping values and aggregate results (Spark's `PhysicalAggregation`); `Distinct` becomes
 *   a `HashAggregateExec` keyed by every column, as Spark's `ReplaceDistinctWithAggregate` does.
 * - `Join` with equi-keys (Spark's `ExtractEquiJoinKeys`) becomes a `BroadcastHashJoinExec`
 *   (a `ShuffledHashJoinExec` for full outer joins, which Spark cannot broadcast); anything else
 *   a `BroadcastNestedLoopJoinExec`.
 * - `Limit` over a global `Sort` (optionally through a `Project`) becomes a
 *   `TakeOrderedAndProjectExec`; a `Limit` at the root a `CollectLimit`.
 * - With `{ streaming: true }`, an aggregate over a stream becomes a `StatefulAggregateExec` and a
 *   deduplication over a stream a `StreamingDeduplicateExec` (`stateful/`); an equi-join of two
 *   streams a `StreamingSymmetricHashJoinExec` (Spark's `StreamingJoinStrategy`).
 *
 * @since 0.1.0
 */
import * as PlanOutput from "../../core/analysis/PlanOutput.ts"
import { dataTypeOf, nullableOf } from "../../core/Compile.ts"
import * as T from "../../core/DataType.ts"
import * as E from "../../core/Expression.ts"
import { prettyName } from "../../core/ExpressionName.ts"
import * as L from "../../core/LogicalPlan.ts"
import type * as P from "./SparkPlan.ts"
import { assignOperatorIds } from "./stateful/StatefulOperators.ts"
import { splitJoinCondition } from "./stateful/StreamingSymmetricHashJoinHelper.ts"

/**
 * Plans an analyzed and optimized logical plan.
 *
 * @example
 * ```ts
 * import * as T from "../../core/DataType.ts"
 * import * as E from "../../core/Expression.ts"
 * import { plan } from "./Planner.ts"
 * const a = E.attribute("a", T.IntegerType)
 * const physical = plan({ _tag: "LocalRelation", planId: 1, output: [a], rows: [[1]], isStreaming: false })
 * // physical._tag === "LocalTableScanExec"
 * ```
 * @since 0.1.0
 */
export const plan = (logical: L.LogicalPlan, options?: PlanOptions): P.SparkPlan => {
  const streaming = options?.streaming === true
  const physical = planNode(logical, true, streaming)
  return streaming ? assignOperatorIds(physical) : physical
}

/**
 * How to plan: `streaming: true` plans the stateful operators of a streaming query (Spark's
 * `IncrementalExecution` strategies): an aggregate over a stream becomes a
 * `StatefulAggregateExec`, `dropDuplicates` / `distinct` / `dropDuplicatesWithinWatermark` over
 * a stream a `StreamingDeduplicateExec`, and the stateful operators are numbered 0, 1, 2, … in a
 * fixed pre-order walk (Spark's), so their ids (and state) survive restarts.
 *
 * @since 0.1.0
 */
export interface PlanOptions {
  readonly streaming?: boolean
}

// ---------------------------------------------------------------------------------------------
// Grouping slots
// ---------------------------------------------------------------------------------------------

/** The type of a resolved expression; window structs are known here even if the compiler does not type them. */
const typeOf = (e: E.Expression): T.DataType => {
  switch (e._tag) {
    case "TimeWindow":
    case "SessionWindow":
      return T.WindowType
    case "AggregateFunction":
      return e.dataType ?? dataTypeOf(e)
    case "Alias":
      return typeOf(e.child)
    default:
      return dataTypeOf(e)
  }
}

const nullabilityOf = (e: E.Expression): boolean => {
  switch (e._tag) {
    case "TimeWindow":
    case "SessionWindow":
      return true
    case "Alias":
      return nullabilityOf(e.child)
    default:
      return nullableOf(e)
  }
}

/**
 * The attribute of a grouping slot (Spark's `PhysicalAggregation`): an attribute is itself, an
 * `Alias` an attribute with the alias's name and id, anything else a fresh attribute named as
 * Spark names it. The output of a node is `PlanOutput.output` (core/analysis), as for the analyzer.
 */
const slotAttribute = (e: E.Expression): E.AttributeReference => {
  switch (e._tag) {
    case "AttributeReference":
      return e
    case "Alias": {
      const base: E.AttributeReference = {
        _tag: "AttributeReference",
        name: e.name,
        dataType: typeOf(e.child),
        nullable: nullabilityOf(e.child),
        exprId: e.exprId,
        qualifier: []
      }
      // An alias of the event-time column keeps the watermark marker (Spark keeps the metadata).
      return e.child._tag === "AttributeReference" && e.child.eventTimeDelayMs !== undefined
        ? { ...base, eventTimeDelayMs: e.child.eventTimeDelayMs }
        : base
    }
    default:
      return {
        _tag: "AttributeReference",
        name: prettyName(e),
        dataType: typeOf(e),
        nullable: nullabilityOf(e),
        exprId: E.newExprId(),
        qualifier: []
      }
  }
}

// ---------------------------------------------------------------------------------------------
// Expression helpers
// ---------------------------------------------------------------------------------------------

const sameValue = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a === "number" && typeof b === "number") return Number.isNaN(a) && Number.isNaN(b)
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]))
  if (a instanceof Uint8Array && b instanceof Uint8Array) return a.length === b.length && a.every((x, i) => x === b[i])
  return false
}

/**
 * Semantic equality of resolved expressions (Spark's `semanticEquals`, without reordering):
 * attributes and aliases by `exprId`, everything else by shape.
 */
export const sameExpression = (a: E.Expression, b: E.Expression): boolean => {
  if (a === b) return true
  if (a._tag !== b._tag) return false
  switch (a._tag) {
    case "AttributeReference":
      return a.exprId === (b as E.AttributeReference).exprId
    case "Alias":
      return a.exprId === (b as E.Alias).exprId
    case "Literal": {
      const l = b as E.Literal
      return T.sameType(a.dataType, l.dataType) && sameValue(a.value, l.value)
    }
    case "UnaryExpression":
      if (a.op !== (b as E.UnaryExpression).op) return false
      break
    case "BinaryExpression":
      if (a.op !== (b as E.BinaryExpression).op) return false
      break
    case "Cast":
      if (!T.sameType(a.to, (b as E.Cast).to)) return false
      break
    case "CaseWhen": {
      const c = b as E.CaseWhen
      if (a.branches.length !== c.branches.length || (a.otherwise === undefined) !== (c.otherwise === undefined)) {
        return false
      }
      break
    }
    case "GetField":
      if (a.field !== (b as E.GetField).field || a.ordinal !== (b as E.GetField).ordinal) return false
      break
    case "ScalarFunction":
      if (a.name !== (b as E.ScalarFunction).name || a.udf !== (b as E.ScalarFunction).udf) return false
      break
    case "AggregateFunction": {
      const f = b as E.AggregateFunction
      if (
        a.name !== f.name ||
        a.distinct !== f.distinct ||
        a.options.ignoreNulls !== f.options.ignoreNulls ||
        a.options.rsd !== f.options.rsd
      ) {
        return false
      }
      break
    }
    case "TimeWindow": {
      const w = b as E.TimeWindow
      if (a.windowMs !== w.windowMs || a.slideMs !== w.slideMs || a.startMs !== w.startMs) return false
      break
    }
    case "Explode": {
      const x = b as E.Explode
      if (a.outer !== x.outer || a.position !== x.position) return false
      break
    }
    case "SortOrder": {
      const s = b as E.SortOrder
      if (a.direction !== s.direction || a.nullOrdering !== s.nullOrdering) return false
      break
    }
    case "UnresolvedAttribute":
    case "UnresolvedStar":
    case "InvalidExpression":
      return false
    case "CurrentTimestamp":
      return true
    case "In":
    case "SessionWindow":
      break
  }
  const ca = E.children(a)
  const cb = E.children(b)
  return ca.length === cb.length && ca.every((c, i) => sameExpression(c, cb[i]))
}

const stripAlias = (e: E.Expression): E.Expression => (e._tag === "Alias" ? stripAlias(e.child) : e)

const references = (e: E.Expression): Set<number> => new Set(E.references(e).map((a) => a.exprId))

const splitConjuncts = (e: E.Expression): ReadonlyArray<E.Expression> =>
  e._tag === "BinaryExpression" && e.op === "and" ? [...splitConjuncts(e.left), ...splitConjuncts(e.right)] : [e]

const conjunction = (es: ReadonlyArray<E.Expression>): E.Expression | undefined =>
  es.length === 0
    ? undefined
    : es.reduce((acc, e) => ({ _tag: "BinaryExpression", op: "and", left: acc, right: e }) as E.Expression)

// ---------------------------------------------------------------------------------------------
// Aggregates
// ---------------------------------------------------------------------------------------------

interface GroupingSlot {
  readonly expr: E.Expression
  readonly aliasId: number | undefined
  readonly attribute: E.AttributeReference
}

const planAggregate = (
  groupingExpressions: ReadonlyArray<E.Expression>,
  aggregateExpressions: ReadonlyArray<E.Expression>,
  child: P.SparkPlan
): P.HashAggregateExec => {
  // Spark's PhysicalAggregation: every grouping expression gets a named slot; an attribute is its
  // own slot, an alias names it, anything else gets a fresh attribute.
  const slots: Array<GroupingSlot> = groupingExpressions.map((g) => {
    const expr = stripAlias(g)
    return {
      expr,
      aliasId: g._tag === "Alias" ? g.exprId : undefined,
      attribute: slotAttribute(g)
    }
  })
  const functions: Array<E.AggregateFunction> = []
  const functionAttributes: Array<E.AttributeReference> = []
  const slotOf = (x: E.Expression): E.AttributeReference | undefined => {
    for (const s of slots) {
      if (x._tag === "AttributeReference" && s.aliasId !== undefined && x.exprId === s.aliasId) return s.attribute
      if (x._tag === "Alias" && s.aliasId !== undefined && x.exprId === s.aliasId) return s.attribute
      if (sameExpression(x, s.expr)) return s.attribute
    }
    return undefined
  }
  const functionSlot = (f: E.AggregateFunction): E.AttributeReference => {
    const i = functions.findIndex((g) => sameExpression(g, f))
    if (i >= 0) return functionAttributes[i]
    const attr: E.AttributeReference = {
      _tag: "AttributeReference",
      name: prettyName(f),
      dataType: typeOf(f),
      nullable: true,
      exprId: E.newExprId(),
      qualifier: []
    }
    functions.push(f)
    functionAttributes.push(attr)
    return attr
  }
  const rewrite = (e: E.Expression): E.Expression =>
    E.transformDown(e, (x) => {
      const g = slotOf(x)
      if (g !== undefined) return g
      if (x._tag === "AggregateFunction") return functionSlot(x)
      return x
    })
  // The top-level alias names the output column; only its child is evaluated.
  const resultExpressions = aggregateExpressions.map((e) =>
    e._tag === "Alias" ? { ...e, child: rewrite(e.child) } : rewrite(e)
  )
  const sessionIndex = groupingExpressions.findIndex((g) => stripAlias(g)._tag === "SessionWindow")
  const sessionWindow: P.SessionWindowSpec | undefined =
    sessionIndex < 0
      ? undefined
      : { index: sessionIndex, window: stripAlias(groupingExpressions[sessionIndex]) as E.SessionWindow }
  return {
    _tag: "HashAggregateExec",
    output: aggregateExpressions.map(PlanOutput.toAttribute),
    groupingExpressions,
    aggregateFunctions: functions,
    groupingAttributes: slots.map((s) => s.attribute),
    aggregateAttributes: functionAttributes,
    resultExpressions,
    sessionWindow,
    child
  }
}

/**
 * The streaming form of an aggregation: the same grouping, buffers and result expressions around
 * a state store. Its operator id is assigned once the whole plan is built (`assignOperatorIds`).
 */
const statefulAggregate = (agg: P.HashAggregateExec): P.StatefulAggregateExec => {
  const { _tag, ...aggregation } = agg
  return { ...aggregation, _tag: "StatefulAggregateExec", operatorId: -1 }
}

const streamingDeduplicate = (
  keys: ReadonlyArray<E.AttributeReference>,
  withinWatermark: boolean,
  child: P.SparkPlan
): P.StreamingDeduplicateExec => ({
  _tag: "StreamingDeduplicateExec",
  output: child.output,
  operatorId: -1,
  keys,
  withinWatermark,
  child
})

// ---------------------------------------------------------------------------------------------
// Joins
// ---------------------------------------------------------------------------------------------

interface EquiKeys {
  readonly leftKeys: ReadonlyArray<E.Expression>
  readonly rightKeys: ReadonlyArray<E.Expression>
  readonly nullSafe: ReadonlyArray<boolean>
  readonly rest: E.Expression | undefined
}

const subsetOf = (refs: Set<number>, side: Set<number>): boolean => {
  for (const r of refs) if (!side.has(r)) return false
  return true
}

/**
 * Spark's `ExtractEquiJoinKeys`: the `=` and `<=>` conjuncts with one side over left columns
 * only and the other over right columns only (each side referencing at least one column) are
 * the keys; the other conjuncts stay as the condition.
 */
const extractEquiKeys = (
  condition: E.Expression | undefined,
  left: ReadonlyArray<E.AttributeReference>,
  right: ReadonlyArray<E.AttributeReference>
): EquiKeys => {
  if (condition === undefined) return { leftKeys: [], rightKeys: [], nullSafe: [], rest: undefined }
  const l = new Set(left.map((a) => a.exprId))
  const r = new Set(right.map((a) => a.exprId))
  const leftKeys: Array<E.Expression> = []
  const rightKeys: Array<E.Expression> = []
  const nullSafe: Array<boolean> = []
  const rest: Array<E.Expression> = []
  for (const c of splitConjuncts(condition)) {
    if (c._tag === "BinaryExpression" && (c.op === "=" || c.op === "<=>")) {
      const a = references(c.left)
      const b = references(c.right)
      if (a.size > 0 && b.size > 0) {
        if (subsetOf(a, l) && subsetOf(b, r)) {
          leftKeys.push(c.left)
          rightKeys.push(c.right)
          nullSafe.push(c.op === "<=>")
          continue
        }
        if (subsetOf(a, r) && subsetOf(b, l)) {
          leftKeys.push(c.right)
          rightKeys.push(c.left)
          nullSafe.push(c.op === "<=>")
          continue
        }
      }
    }
    rest.push(c)
  }
  return { leftKeys, rightKeys, nullSafe, rest: conjunction(rest) }
}

/** The join types a stream-stream join runs (the checker refuses the others: left anti; cross has no keys). */
const streamingJoinType = (t: L.JoinType): P.StreamingSymmetricHashJoinExec["joinType"] | undefined => {
  switch (t) {
    case "inner":
    case "cross":
      return "inner"
    case "left_outer":
    case "right_outer":
    case "full_outer":
    case "left_semi":
      return t
    case "left_anti":
      return undefined
  }
}

const planJoin = (j: L.Join, streaming: boolean): P.SparkPlan => {
  const left = planNode(j.left, false, streaming)
  const right = planNode(j.right, false, streaming)
  const output = PlanOutput.output(j)
  const keys = extractEquiKeys(j.condition, left.output, right.output)
  // Spark builds the right side for inner, left outer, semi and anti joins and the left side
  // for right outer joins, so the other side streams and output follows its order.
  const buildSide: P.BuildSide = j.joinType === "right_outer" ? "BuildLeft" : "BuildRight"
  // Spark's StreamingJoinStrategy: an equi-join of two streams keeps both sides in state.
  const streamingType = streamingJoinType(j.joinType)
  if (
    streaming &&
    keys.leftKeys.length > 0 &&
    streamingType !== undefined &&
    L.isStreaming(j.left) &&
    L.isStreaming(j.right)
  ) {
    return {
      _tag: "StreamingSymmetricHashJoinExec",
      output,
      operatorId: -1,
      leftKeys: keys.leftKeys,
      rightKeys: keys.rightKeys,
      nullSafe: keys.nullSafe,
      joinType: streamingType,
      condition: splitJoinCondition(keys.rest, left.output, right.output),
      left,
      right
    }
  }
  if (keys.leftKeys.length > 0) {
    return {
      _tag: j.joinType === "full_outer" ? "ShuffledHashJoinExec" : "BroadcastHashJoinExec",
      output,
      leftKeys: keys.leftKeys,
      rightKeys: keys.rightKeys,
      nullSafe: keys.nullSafe,
      joinType: j.joinType,
      buildSide,
      condition: keys.rest,
      left,
      right
    }
  }
  return {
    _tag: "BroadcastNestedLoopJoinExec",
    output,
    joinType: j.joinType,
    buildSide,
    condition: j.condition,
    left,
    right
  }
}

// ---------------------------------------------------------------------------------------------
// The planner proper
// ---------------------------------------------------------------------------------------------

const planTopK = (
  limit: L.Limit,
  sort: L.Sort,
  projectList: ReadonlyArray<E.Expression> | undefined,
  streaming: boolean
): P.TakeOrderedAndProjectExec => {
  const child = planNode(sort.child, false, streaming)
  const list = projectList ?? child.output
  return {
    _tag: "TakeOrderedAndProjectExec",
    output: list.map(PlanOutput.toAttribute),
    limit: limit.n,
    sortOrder: sort.order,
    projectList: list,
    child
  }
}

const planNode = (p: L.LogicalPlan, isRoot: boolean, streaming: boolean): P.SparkPlan => {
  switch (p._tag) {
    case "LocalRelation":
      return { _tag: "LocalTableScanExec", output: p.output, rows: p.rows }
    case "DataSourceRelation":
      return { _tag: "DataSourceScanExec", output: p.output, relation: p }
    case "StreamingRelation":
      return { _tag: "StreamingScanExec", output: p.output, relation: p }
    case "Project":
      return {
        _tag: "ProjectExec",
        output: PlanOutput.output(p),
        projectList: p.projectList,
        child: planNode(p.child, false, streaming)
      }
    case "Filter": {
      const child = planNode(p.child, false, streaming)
      return {
        _tag: "FilterExec",
        output: child.output,
        condition: { _tag: "Predicate", expression: p.condition },
        child
      }
    }
    case "TypedFilter": {
      const child = planNode(p.child, false, streaming)
      return {
        _tag: "FilterExec",
        output: child.output,
        condition: { _tag: "TypedPredicate", predicate: p.predicate },
        child
      }
    }
    case "Aggregate": {
      const agg = planAggregate(p.groupingExpressions, p.aggregateExpressions, planNode(p.child, false, streaming))
      // Spark's StatefulAggregationStrategy: only an aggregate over a stream keeps state (a batch
      // aggregate inside a streaming query stays a batch one, SPARK-19690).
      return streaming && L.isStreaming(p.child) ? statefulAggregate(agg) : agg
    }
    case "Distinct": {
      const child = planNode(p.child, false, streaming)
      // On a stream, Dataset.distinct() is dropDuplicates() (Spark's StreamingDeduplicationStrategy).
      if (streaming && L.isStreaming(p.child)) return streamingDeduplicate(child.output, false, child)
      return planAggregate(child.output, child.output, child)
    }
    case "Deduplicate": {
      const child = planNode(p.child, false, streaming)
      if (streaming && L.isStreaming(p.child)) {
        return streamingDeduplicate(p.keys ?? child.output, p.withinWatermark, child)
      }
      return { _tag: "DeduplicateExec", output: child.output, keys: p.keys ?? child.output, child }
    }
    case "Join":
      return planJoin(p, streaming)
    case "Sort": {
      const child = planNode(p.child, false, streaming)
      return { _tag: "SortExec", output: child.output, sortOrder: p.order, global: p.global, child }
    }
    case "Limit": {
      const c = p.child
      if (c._tag === "Sort" && c.global) return planTopK(p, c, undefined, streaming)
      if (c._tag === "Project" && c.child._tag === "Sort" && c.child.global) {
        return planTopK(p, c.child, c.projectList, streaming)
      }
      const child = planNode(c, false, streaming)
      return {
        _tag: "LimitExec",
        output: child.output,
        kind: isRoot ? "CollectLimit" : "GlobalLimit",
        n: p.n,
        child
      }
    }
    case "Union": {
      const children = p.children.map((c) => planNode(c, false, streaming))
      return { _tag: "UnionExec", output: PlanOutput.output(p), children }
    }
    case "Intersect":
    case "Except":
      // The checker refuses these over streams (Spark's UnsupportedOperationChecker), so both
      // sides are batch inputs here.
      return {
        _tag: "SetOperationExec",
        output: PlanOutput.output(p),
        kind: p._tag === "Intersect" ? "intersect" : "except",
        isAll: p.isAll,
        left: planNode(p.left, false, streaming),
        right: planNode(p.right, false, streaming)
      }
    case "Window":
      // The checker refuses a window over a stream (NON_TIME_WINDOW_NOT_SUPPORTED_IN_STREAMING)
      return {
        _tag: "WindowExec",
        output: PlanOutput.output(p),
        windowExpressions: p.windowExpressions,
        partitionSpec: p.partitionSpec,
        orderSpec: p.orderSpec,
        child: planNode(p.child, false, streaming)
      }
    case "Generate": {
      const child = planNode(p.child, false, streaming)
      const g = stripAlias(p.generator)
      if (g._tag !== "Explode" && g._tag !== "TimeWindow") {
        // The analyzer only builds Generate for explode and window; anything else is a bug there.
        throw new Error(`Generate with an unsupported generator ${g._tag}`)
      }
      return {
        _tag: "GenerateExec",
        output: [...child.output, ...p.generatorOutput],
        generator: g,
        generatorOutput: p.generatorOutput,
        child
      }
    }
    case "MapElements":
      return {
        _tag: "MapElementsExec",
        output: p.output,
        fn: p.fn,
        flat: p.flat,
        schema: p.schema,
        wrapValue: p.wrapValue,
        child: planNode(p.child, false, streaming)
      }
    case "FlatMapGroupsWithState":
      // Spark's FlatMapGroupsWithStateStrategy for a stream (the operator id comes from
      // assignOperatorIds); over a batch input, its MapGroupsExec / CoGroupExec (no state).
      return {
        _tag: "FlatMapGroupsWithStateExec",
        output: p.output,
        operatorId: -1,
        isStreaming: streaming && L.isStreaming(p.child),
        fn: p.fn,
        keyFn: p.keyFn,
        keySchema: p.keySchema,
        keyIsStruct: p.keyIsStruct,
        stateSchema: p.stateSchema,
        stateIsStruct: p.stateIsStruct,
        outputSchema: p.outputSchema,
        outputIsStruct: p.outputIsStruct,
        isMapGroupsWithState: p.isMapGroupsWithState,
        outputMode: p.outputMode,
        timeout: p.timeout,
        child: planNode(p.child, false, streaming),
        initialState: p.initialState === undefined ? undefined : planNode(p.initialState, false, streaming)
      }
    case "TransformWithState":
      // Spark's StreamingTransformWithStateStrategy; the operator id comes from assignOperatorIds.
      return {
        _tag: "TransformWithStateExec",
        output: p.output,
        operatorId: -1,
        keyFn: p.keyFn,
        keySchema: p.keySchema,
        processor: p.processor,
        timeMode: p.timeMode,
        outputMode: p.outputMode,
        schema: p.schema,
        wrapValue: p.wrapValue,
        child: planNode(p.child, false, streaming),
        initialState: p.initialState === undefined ? undefined : planNode(p.initialState, false, streaming),
        initialStateKeyFn: p.initialStateKeyFn
      }
    case "EventTimeWatermark":
      return {
        _tag: "EventTimeWatermarkExec",
        output: PlanOutput.output(p),
        eventTime: p.eventTime,
        delayMs: p.delayMs,
        child: planNode(p.child, false, streaming)
      }
    case "SubqueryAlias":
      return planNode(p.child, isRoot, streaming)
    case "WithColumns":
    case "WithColumnsRenamed":
    case "Drop":
      // The analyzer replaces these by a Project; reaching here is a bug in the analyzer.
      throw new Error(`${p._tag} must be analyzed into a Project before planning`)
  }
}
