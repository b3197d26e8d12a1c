/**
 * The physical plan: a `_tag` union of operators that run one batch of rows in tight loops.
 *
 * The planner (`Planner.ts`) picks one of these for every node of an analyzed and optimized
 * logical plan; `Execute.ts` runs them; `PhysicalPlanString.ts` prints them the way Spark's
 * `explain()` prints its physical plan. Every operator carries its `output` attributes, in the
 * order of the positional rows it produces. Names follow Spark's physical operators
 * (`HashAggregateExec`, `BroadcastHashJoinExec`, `TakeOrderedAndProjectExec`, …).
 *
 * @since 0.1.0
 */
import type { StructType } from "../../core/DataType.ts"
import type {
  AggregateFunction,
  AttributeReference,
  Explode,
  Expression,
  SessionWindow,
  SortOrder,
  TimeWindow
} from "../../core/Expression.ts"
import type { DataSourceRelation, JoinType, StreamingRelation } from "../../core/LogicalPlan.ts"
import type { InternalRow } from "../../core/Row.ts"

/**
 * A physical operator.
 *
 * @since 0.1.0
 */
export type SparkPlan =
  | LocalTableScanExec
  | DataSourceScanExec
  | StreamingScanExec
  | ProjectExec
  | FilterExec
  | HashAggregateExec
  | HashJoinExec
  | BroadcastNestedLoopJoinExec
  | SortExec
  | LimitExec
  | TakeOrderedAndProjectExec
  | DeduplicateExec
  | UnionExec
  | SetOperationExec
  | WindowExec
  | GenerateExec
  | MapElementsExec
  | EventTimeWatermarkExec
  | StatefulAggregateExec
  | StreamingDeduplicateExec
  | TransformWithStateExec
  | FlatMapGroupsWithStateExec
  | StreamingSymmetricHashJoinExec

/** Rows already in memory and already internal (Spark's `LocalTableScanExec`). */
export interface LocalTableScanExec {
  readonly _tag: "LocalTableScanExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly rows: ReadonlyArray<InternalRow>
}

/** A bounded read through a batch format; the session's `readRelation` supplies the rows (Spark's `FileSourceScanExec`). */
export interface DataSourceScanExec {
  readonly _tag: "DataSourceScanExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly relation: DataSourceRelation
}

/** The rows a streaming source gives the current micro-batch (Spark's `MicroBatchScanExec`). */
export interface StreamingScanExec {
  readonly _tag: "StreamingScanExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly relation: StreamingRelation
}

export interface ProjectExec {
  readonly _tag: "ProjectExec"
  readonly output: ReadonlyArray<AttributeReference>
  /** Attributes and `Alias`es over `child.output`, one per output attribute. */
  readonly projectList: ReadonlyArray<Expression>
  readonly child: SparkPlan
}

/**
 * What a `FilterExec` tests: a resolved boolean expression (`Filter (a#1 > 1)`), or a user
 * predicate over external rows (Spark's `TypedFilter`, printed `Filter <function>`).
 */
export type FilterCondition =
  | { readonly _tag: "Predicate"; readonly expression: Expression }
  | { readonly _tag: "TypedPredicate"; readonly predicate: (row: any) => boolean }

export interface FilterExec {
  readonly _tag: "FilterExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly condition: FilterCondition
  readonly child: SparkPlan
}

/**
 * The session window among the grouping expressions of an aggregate: events of one group
 * (the other grouping keys) are merged into sessions as Spark's `MergingSessionsExec` does.
 */
export interface SessionWindowSpec {
  /** Position of the session window among `groupingExpressions` (and `groupingAttributes`). */
  readonly index: number
  readonly window: SessionWindow
}

/**
 * Hash aggregation (Spark's `HashAggregateExec`; with a session window, `MergingSessionsExec`).
 *
 * Like Spark's physical aggregate it works in two steps: it computes the grouping values and the
 * aggregate results per group into an intermediate row `groupingAttributes ++ aggregateAttributes`,
 * then evaluates `resultExpressions` over that row.
 */
export interface HashAggregateExec {
  readonly _tag: "HashAggregateExec"
  readonly output: ReadonlyArray<AttributeReference>
  /** Grouping expressions over `child.output` (possibly `Alias`ed). */
  readonly groupingExpressions: ReadonlyArray<Expression>
  /** The distinct aggregate calls, over `child.output`. */
  readonly aggregateFunctions: ReadonlyArray<AggregateFunction>
  /** One attribute per grouping expression: the slots of the intermediate row. */
  readonly groupingAttributes: ReadonlyArray<AttributeReference>
  /** One attribute per aggregate function: the slots after the grouping ones. */
  readonly aggregateAttributes: ReadonlyArray<AttributeReference>
  /** One per output attribute, over `groupingAttributes ++ aggregateAttributes`. */
  readonly resultExpressions: ReadonlyArray<Expression>
  readonly sessionWindow: SessionWindowSpec | undefined
  readonly child: SparkPlan
}

/** Which side of a join is held in memory (hashed or looped over); the other side streams in order. */
export type BuildSide = "BuildLeft" | "BuildRight"

/**
 * An equi-join (Spark's `BroadcastHashJoinExec` or `ShuffledHashJoinExec`; both run the same
 * way here, on one partition). `leftKeys[i] = rightKeys[i]` for every `i` (null-safe `<=>` where
 * `nullSafe[i]`); `condition` is the rest of the join condition, evaluated on `left ++ right`.
 */
export interface HashJoinExec {
  readonly _tag: "BroadcastHashJoinExec" | "ShuffledHashJoinExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly leftKeys: ReadonlyArray<Expression>
  readonly rightKeys: ReadonlyArray<Expression>
  readonly nullSafe: ReadonlyArray<boolean>
  readonly joinType: JoinType
  readonly buildSide: BuildSide
  readonly condition: Expression | undefined
  readonly left: SparkPlan
  readonly right: SparkPlan
}

/** A join without equi-keys, and the cross join (Spark's `BroadcastNestedLoopJoinExec`). */
export interface BroadcastNestedLoopJoinExec {
  readonly _tag: "BroadcastNestedLoopJoinExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly joinType: JoinType
  readonly buildSide: BuildSide
  readonly condition: Expression | undefined
  readonly left: SparkPlan
  readonly right: SparkPlan
}

/** A stable sort (Spark's `SortExec`); `global: false` is `sortWithinPartitions`, the same here. */
export interface SortExec {
  readonly _tag: "SortExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly sortOrder: ReadonlyArray<SortOrder>
  readonly global: boolean
  readonly child: SparkPlan
}

/**
 * The first `n` rows: `CollectLimit` at the root of a plan, `GlobalLimit` inside one (Spark's
 * `CollectLimitExec` / `GlobalLimitExec`).
 */
export interface LimitExec {
  readonly _tag: "LimitExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly kind: "CollectLimit" | "GlobalLimit"
  readonly n: number
  readonly child: SparkPlan
}

/** `sort` then `limit` as one top-k (Spark's `TakeOrderedAndProjectExec`), then a projection. */
export interface TakeOrderedAndProjectExec {
  readonly _tag: "TakeOrderedAndProjectExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly limit: number
  readonly sortOrder: ReadonlyArray<SortOrder>
  /** Over `child.output`, one per output attribute. */
  readonly projectList: ReadonlyArray<Expression>
  readonly child: SparkPlan
}

/** `dropDuplicates(cols)`: keeps the first row per key. */
export interface DeduplicateExec {
  readonly _tag: "DeduplicateExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly keys: ReadonlyArray<AttributeReference>
  readonly child: SparkPlan
}

/** Concatenation of the children's rows, in child order (Spark's `UnionExec`). */
export interface UnionExec {
  readonly _tag: "UnionExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly children: ReadonlyArray<SparkPlan>
}

/**
 * `intersect` / `intersectAll` / `except` / `exceptAll` of two batch inputs, by hashing whole
 * rows (`SetOperationExec.ts`; Spark plans its rewrites into semi/anti joins and aggregates).
 * Output is the logical operator's (the left side's attributes).
 */
export interface SetOperationExec {
  readonly _tag: "SetOperationExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly kind: "intersect" | "except"
  readonly isAll: boolean
  readonly left: SparkPlan
  readonly right: SparkPlan
}

/**
 * Spark's `WindowExec`: the child's rows with the window expressions (`Alias`es of
 * `WindowExpression`s sharing `partitionSpec` and `orderSpec`) appended (`WindowExec.ts`).
 * Batch only: the checker refuses a window over a stream.
 */
export interface WindowExec {
  readonly _tag: "WindowExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly windowExpressions: ReadonlyArray<Expression>
  readonly partitionSpec: ReadonlyArray<Expression>
  readonly orderSpec: ReadonlyArray<Expression>
  readonly child: SparkPlan
}

/**
 * A generator applied to every row (Spark's `GenerateExec`): `explode` and its variants, or the
 * time-window assignment of `window(...)` (Spark's `Expand` + `Filter` from `TimeWindowing`).
 * Output is `child.output ++ generatorOutput`.
 */
export interface GenerateExec {
  readonly _tag: "GenerateExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly generator: Explode | TimeWindow
  readonly generatorOutput: ReadonlyArray<AttributeReference>
  readonly child: SparkPlan
}

/** `map(f)` / `flatMap(f)` over external rows (Spark's `MapElementsExec` / `MapPartitionsExec`). */
export interface MapElementsExec {
  readonly _tag: "MapElementsExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly fn: (row: any) => unknown
  readonly flat: boolean
  readonly schema: StructType
  /** The output is one `value` column and `fn` returns the bare value. */
  readonly wrapValue: boolean
  readonly child: SparkPlan
}

/** `withWatermark`: a pass-through in a batch plan (Spark's `EventTimeWatermarkExec`). */
export interface EventTimeWatermarkExec {
  readonly _tag: "EventTimeWatermarkExec"
  readonly output: ReadonlyArray<AttributeReference>
  readonly eventTime: Expression
  readonly delayMs: number
  readonly child: SparkPlan
}

/**
 * A streaming aggregation: the aggregation of `HashAggregateExec` (same fields, same result
 * expressions) around a state store, as Spark plans it with `StateStoreRestoreExec` and
 * `StateStoreSaveExec` between a partial and a final `HashAggregateExec`; with a session window,
 * Spark's `SessionWindowStateStoreRestoreExec`, `MergingSessionsExec` and
 * `SessionWindowStateStoreSaveExec`. Each batch merges the batch's per-key buffers with the
 * stored ones and emits by output mode (`stateful/StatefulAggregateExec.ts`). Only planned for a
 * streaming child (`plan(logical, { streaming: true })`).
 *
 * @since 0.1.0
 */
export interface StatefulAggregateExec extends Omit<HashAggregateExec, "_tag"> {
  readonly _tag: "StatefulAggregateExec"
  /** Stable across restarts: assigned by a fixed bottom-up walk of the plan (`stateful/StatefulOperators.ts`). */
  readonly operatorId: number
}

/**
 * `dropDuplicates` / `distinct` on a stream (Spark's `StreamingDeduplicateExec`) and
 * `dropDuplicatesWithinWatermark` (Spark's `StreamingDeduplicateWithinWatermarkExec`): the
 * first row per key across all batches passes, later ones are dropped; the keys seen are kept
 * in a state store (`stateful/StreamingDeduplicateExec.ts`).
 *
 * @since 0.1.0
 */
export interface StreamingDeduplicateExec {
  readonly _tag: "StreamingDeduplicateExec"
  readonly output: ReadonlyArray<AttributeReference>
  /** Stable across restarts: assigned by a fixed bottom-up walk of the plan (`stateful/StatefulOperators.ts`). */
  readonly operatorId: number
  readonly keys: ReadonlyArray<AttributeReference>
  /** `dropDuplicatesWithinWatermark`: a key is remembered until the watermark passes its event time plus the delay. */
  readonly withinWatermark: boolean
  readonly child: SparkPlan
}

/**
 * Spark's `JoinConditionSplitPredicates`: the join condition (what is left after the equi-join
 * keys) split into the deterministic conjuncts over the left input only, those over the right
 * input only, and the rest (both sides, or nondeterministic); `full` is the whole of it.
 *
 * @since 0.1.0
 */
export interface JoinConditionSplit {
  readonly leftSideOnly: Expression | undefined
  readonly rightSideOnly: Expression | undefined
  readonly bothSides: Expression | undefined
  readonly full: Expression | undefined
}

/**
 * A join of two streams (Spark's `StreamingSymmetricHashJoinExec`): both sides' rows are kept
 * in state stores keyed by the equi-join keys, each new row joins with the other side's stored
 * rows, and the watermark (on a time column in the keys, or through a time-range condition)
 * bounds the state and decides when an outer row can be emitted with nulls
 * (`stateful/StreamingSymmetricHashJoinExec.ts`). Planned for a join whose two inputs are
 * streaming, with at least one equi-join key.
 *
 * @since 0.1.0
 */
export interface StreamingSymmetricHashJoinExec {
  readonly _tag: "StreamingSymmetricHashJoinExec"
  readonly output: ReadonlyArray<AttributeReference>
  /** Stable across restarts: assigned by a fixed bottom-up walk of the plan (`stateful/StatefulOperators.ts`). */
  readonly operatorId: number
  readonly leftKeys: ReadonlyArray<Expression>
  readonly rightKeys: ReadonlyArray<Expression>
  /** `leftKeys[i] <=> rightKeys[i]` (null equals null) rather than `=`. */
  readonly nullSafe: ReadonlyArray<boolean>
  readonly joinType: "inner" | "left_outer" | "right_outer" | "full_outer" | "left_semi"
  readonly condition: JoinConditionSplit
  readonly left: SparkPlan
  readonly right: SparkPlan
}

/**
 * `transformWithState` (Spark's `TransformWithStateExec`): a user's stateful processor called
 * per key with the batch's rows, then for expired timers; its state variables live in one state
 * store each, its timers in another (`stateful/TransformWithStateExec.ts`). The optional
 * `initialState` is a batch plan run in the first batch only.
 *
 * @since 0.1.0
 */
export interface TransformWithStateExec {
  readonly _tag: "TransformWithStateExec"
  readonly output: ReadonlyArray<AttributeReference>
  /** Stable across restarts: assigned by a fixed walk of the plan (`stateful/StatefulOperators.ts`). */
  readonly operatorId: number
  readonly keyFn: (row: any) => unknown
  /** The key's Effect Schema. */
  readonly keySchema: unknown
  /** The stateful processor (`structured/api/StatefulProcessor.ts`). */
  readonly processor: object
  readonly timeMode: "None" | "ProcessingTime" | "EventTime"
  readonly outputMode: "append" | "update"
  readonly schema: StructType
  readonly wrapValue: boolean
  readonly child: SparkPlan
  readonly initialState: SparkPlan | undefined
  readonly initialStateKeyFn: ((row: any) => unknown) | undefined
}

/**
 * `mapGroupsWithState` / `flatMapGroupsWithState` (Spark's `FlatMapGroupsWithStateExec`; over a
 * batch input Spark's `MapGroupsExec`, or `CoGroupExec` with an initial state): the user function
 * per key with the key's rows and its `GroupState`, then (streaming) per timed-out key; the state
 * lives in one store keyed by the grouping key (`stateful/FlatMapGroupsWithStateExec.ts`). The
 * optional `initialState` (columns `key`, `state`) is read in a streaming query's first batch only.
 *
 * @since 0.1.0
 */
export interface FlatMapGroupsWithStateExec {
  readonly _tag: "FlatMapGroupsWithStateExec"
  readonly output: ReadonlyArray<AttributeReference>
  /** Stable across restarts: assigned by a fixed walk of the plan (`stateful/StatefulOperators.ts`). */
  readonly operatorId: number
  /** Planned in a streaming query over a streaming child: state, timeouts and watermarks apply. */
  readonly isStreaming: boolean
  readonly fn: (key: any, rows: ReadonlyArray<any>, state: any) => Iterable<unknown>
  readonly keyFn: (row: any) => unknown
  readonly keySchema: StructType
  readonly keyIsStruct: boolean
  readonly stateSchema: StructType
  readonly stateIsStruct: boolean
  readonly outputSchema: StructType
  readonly outputIsStruct: boolean
  readonly isMapGroupsWithState: boolean
  readonly outputMode: "append" | "update"
  readonly timeout: "NoTimeout" | "ProcessingTimeTimeout" | "EventTimeTimeout"
  readonly child: SparkPlan
  readonly initialState: SparkPlan | undefined
}

/**
 * The direct children of an operator, in a fixed order (left before right).
 *
 * @since 0.1.0
 */
export const children = (p: SparkPlan): ReadonlyArray<SparkPlan> => {
  switch (p._tag) {
    case "LocalTableScanExec":
    case "DataSourceScanExec":
    case "StreamingScanExec":
      return []
    case "BroadcastHashJoinExec":
    case "ShuffledHashJoinExec":
    case "BroadcastNestedLoopJoinExec":
    case "StreamingSymmetricHashJoinExec":
    case "SetOperationExec":
      return [p.left, p.right]
    case "UnionExec":
      return p.children
    case "TransformWithStateExec":
      return p.initialState === undefined ? [p.child] : [p.child, p.initialState]
    case "FlatMapGroupsWithStateExec":
      return p.initialState === undefined ? [p.child] : [p.child, p.initialState]
    case "ProjectExec":
    case "FilterExec":
    case "HashAggregateExec":
    case "SortExec":
    case "LimitExec":
    case "TakeOrderedAndProjectExec":
    case "DeduplicateExec":
    case "GenerateExec":
    case "WindowExec":
    case "MapElementsExec":
    case "EventTimeWatermarkExec":
    case "StatefulAggregateExec":
    case "StreamingDeduplicateExec":
      return [p.child]
  }
}

/**
 * Rebuilds `p` with new children (same order as `children`); returns `p` itself when nothing
 * changed, so that rewrites (for example the streaming engine swapping a scan for a batch's
 * rows) can detect a fixed point by identity.
 *
 * @since 0.1.0
 */
export const withChildren = (p: SparkPlan, next: ReadonlyArray<SparkPlan>): SparkPlan => {
  const old = children(p)
  if (old.length === next.length && old.every((c, i) => c === next[i])) return p
  switch (p._tag) {
    case "LocalTableScanExec":
    case "DataSourceScanExec":
    case "StreamingScanExec":
      return p
    case "BroadcastHashJoinExec":
    case "ShuffledHashJoinExec":
    case "BroadcastNestedLoopJoinExec":
    case "StreamingSymmetricHashJoinExec":
    case "SetOperationExec":
      return { ...p, left: next[0], right: next[1] }
    case "UnionExec":
      return { ...p, children: next }
    case "TransformWithStateExec":
      return p.initialState === undefined ? { ...p, child: next[0] } : { ...p, child: next[0], initialState: next[1] }
    case "FlatMapGroupsWithStateExec":
      return p.initialState === undefined ? { ...p, child: next[0] } : { ...p, child: next[0], initialState: next[1] }
    case "ProjectExec":
    case "FilterExec":
    case "HashAggregateExec":
    case "SortExec":
    case "LimitExec":
    case "TakeOrderedAndProjectExec":
    case "DeduplicateExec":
    case "GenerateExec":
    case "WindowExec":
    case "MapElementsExec":
    case "EventTimeWatermarkExec":
    case "StatefulAggregateExec":
    case "StreamingDeduplicateExec":
      return { ...p, child: next[0] }
  }
}

/**
 * Bottom-up rewrite of a physical plan: children first, then `f`. Identity-preserving.
 *
 * @since 0.1.0
 */
export const transformUp = (p: SparkPlan, f: (p: SparkPlan) => SparkPlan): SparkPlan => {
  const cs = children(p)
  const next =
    cs.length === 0
      ? p
      : withChildren(
          p,
          cs.map((c) => transformUp(c, f))
        )
  return f(next)
}
