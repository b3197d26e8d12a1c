/**
 * The logical plan: a `_tag` union of plain, immutable nodes. Nodes carry meaning only; the
 * analyzer resolves them, the optimizer rewrites them and the planner (in `structured/`) picks
 * physical operators for them.
 *
 * Every node has a `planId` (unique in the process) so that `df.col("x")` can name the
 * DataFrame it came from, as Spark Connect's `plan_id` does.
 *
 * @since 0.1.0
 */
import type { StructType } from "./DataType.ts"
import type { AttributeReference, Expression, SortOrder } from "./Expression.ts"
import type { InternalRow } from "./Row.ts"

export type LogicalPlan =
  | LocalRelation
  | DataSourceRelation
  | StreamingRelation
  | Project
  | Filter
  | Aggregate
  | Join
  | Sort
  | Limit
  | Distinct
  | Deduplicate
  | Union
  | Intersect
  | Except
  | Generate
  | Window
  | WithColumns
  | WithColumnsRenamed
  | Drop
  | TypedFilter
  | MapElements
  | EventTimeWatermark
  | SubqueryAlias
  | TransformWithState
  | FlatMapGroupsWithState

/** Rows given by the program (`createDataFrame`, a micro-batch's data). */
export interface LocalRelation {
  readonly _tag: "LocalRelation"
  readonly planId: number
  readonly output: ReadonlyArray<AttributeReference>
  readonly rows: ReadonlyArray<InternalRow>
  readonly isStreaming: boolean
}

/**
 * A bounded read through a registered batch format (`spark.read.format(f).load(paths)`).
 * `schema` is known when the reader was given one or inferred it at `load`.
 */
export interface DataSourceRelation {
  readonly _tag: "DataSourceRelation"
  readonly planId: number
  readonly format: string
  readonly paths: ReadonlyArray<string>
  readonly options: Readonly<Record<string, string>>
  readonly output: ReadonlyArray<AttributeReference>
  /** The schema the user gave the reader (`.schema(...)`), when they gave one (a remote Spark infers otherwise). */
  readonly userSchema?: StructType | undefined
}

/**
 * A streaming source (`readStream…load()`, `MemoryStream.toDF()`). `sourceKey` names the
 * source instance for the executor; the micro-batch engine swaps this node for the batch's rows.
 */
export interface StreamingRelation {
  readonly _tag: "StreamingRelation"
  readonly planId: number
  readonly format: string
  readonly sourceKey: string
  readonly options: Readonly<Record<string, string>>
  readonly output: ReadonlyArray<AttributeReference>
  /** The schema the user gave the reader (`.schema(...)`), when they gave one (a remote Spark infers otherwise). */
  readonly userSchema?: StructType | undefined
}

export interface Project {
  readonly _tag: "Project"
  readonly planId: number
  readonly projectList: ReadonlyArray<Expression>
  readonly child: LogicalPlan
}

export interface Filter {
  readonly _tag: "Filter"
  readonly planId: number
  readonly condition: Expression
  readonly child: LogicalPlan
}

export interface Aggregate {
  readonly _tag: "Aggregate"
  readonly planId: number
  readonly groupingExpressions: ReadonlyArray<Expression>
  /** Output expressions: grouping columns and (aliased) aggregates, in output order. */
  readonly aggregateExpressions: ReadonlyArray<Expression>
  readonly child: LogicalPlan
}

export type JoinType = "inner" | "left_outer" | "right_outer" | "full_outer" | "left_semi" | "left_anti" | "cross"

export interface Join {
  readonly _tag: "Join"
  readonly planId: number
  readonly left: LogicalPlan
  readonly right: LogicalPlan
  readonly joinType: JoinType
  readonly condition: Expression | undefined
  /** `join(other, "k")` / `join(other, ["k1", "k2"])`: Spark's USING join, one output column per key. */
  readonly usingColumns: ReadonlyArray<string> | undefined
}

export interface Sort {
  readonly _tag: "Sort"
  readonly planId: number
  readonly order: ReadonlyArray<SortOrder>
  readonly global: boolean
  readonly child: LogicalPlan
}

export interface Limit {
  readonly _tag: "Limit"
  readonly planId: number
  readonly n: number
  readonly child: LogicalPlan
}

export interface Distinct {
  readonly _tag: "Distinct"
  readonly planId: number
  readonly child: LogicalPlan
}

/** `dropDuplicates(cols?)` and `dropDuplicatesWithinWatermark(cols?)`: keeps the first row per key. */
export interface Deduplicate {
  readonly _tag: "Deduplicate"
  readonly planId: number
  /** Column names before analysis; resolved attributes after (`keys`). */
  readonly columnNames: ReadonlyArray<string> | undefined
  readonly keys: ReadonlyArray<AttributeReference> | undefined
  readonly withinWatermark: boolean
  readonly child: LogicalPlan
}

export interface Union {
  readonly _tag: "Union"
  readonly planId: number
  readonly children: ReadonlyArray<LogicalPlan>
  readonly byName: boolean
  readonly allowMissingColumns: boolean
}

/**
 * Spark's `Intersect(left, right, isAll)`: the rows of `left` also in `right`, columns matched by
 * position and compared null-safely (`intersect` keeps distinct rows, `intersectAll` keeps each
 * row as often as it occurs on both sides).
 */
export interface Intersect {
  readonly _tag: "Intersect"
  readonly planId: number
  readonly left: LogicalPlan
  readonly right: LogicalPlan
  readonly isAll: boolean
}

/**
 * Spark's `Except(left, right, isAll)`: the rows of `left` not in `right` (`except`/`subtract`
 * distinct, `exceptAll` keeps a row as often as it occurs more on the left than on the right).
 */
export interface Except {
  readonly _tag: "Except"
  readonly planId: number
  readonly left: LogicalPlan
  readonly right: LogicalPlan
  readonly isAll: boolean
}

/** A generator (`explode`) applied to every row; `generatorOutput` are the new columns. */
export interface Generate {
  readonly _tag: "Generate"
  readonly planId: number
  readonly generator: Expression
  readonly generatorOutput: ReadonlyArray<AttributeReference>
  readonly child: LogicalPlan
}

/**
 * Spark's `Window(windowExpressions, partitionSpec, orderSpec, child)`: the child's rows with
 * the window expressions (each an `Alias` of a `WindowExpression` sharing this partitioning and
 * ordering) appended. Made only by the analyzer (Spark's `ExtractWindowExpressions`).
 */
export interface Window {
  readonly _tag: "Window"
  readonly planId: number
  readonly windowExpressions: ReadonlyArray<Expression>
  readonly partitionSpec: ReadonlyArray<Expression>
  readonly orderSpec: ReadonlyArray<Expression>
  readonly child: LogicalPlan
}

/** `withColumn(name, col)` (several at once); the analyzer turns it into a `Project`. */
export interface WithColumns {
  readonly _tag: "WithColumns"
  readonly planId: number
  readonly names: ReadonlyArray<string>
  readonly columns: ReadonlyArray<Expression>
  readonly child: LogicalPlan
}

export interface WithColumnsRenamed {
  readonly _tag: "WithColumnsRenamed"
  readonly planId: number
  readonly renames: ReadonlyArray<readonly [from: string, to: string]>
  readonly child: LogicalPlan
}

export interface Drop {
  readonly _tag: "Drop"
  readonly planId: number
  readonly columns: ReadonlyArray<Expression>
  readonly child: LogicalPlan
}

/** `filter((r) => …)`: a predicate over the external row (Spark's `TypedFilter`). */
export interface TypedFilter {
  readonly _tag: "TypedFilter"
  readonly planId: number
  readonly predicate: (row: any) => boolean
  readonly child: LogicalPlan
}

/** `map(f, schema)` / `flatMap(f, schema)` over external rows (Spark's `MapElements`). */
export interface MapElements {
  readonly _tag: "MapElements"
  readonly planId: number
  readonly fn: (row: any) => unknown
  readonly flat: boolean
  /** The output schema; a non-struct schema gives one column named `value`, as in Spark. */
  readonly schema: StructType
  readonly wrapValue: boolean
  readonly output: ReadonlyArray<AttributeReference>
  readonly child: LogicalPlan
}

export interface EventTimeWatermark {
  readonly _tag: "EventTimeWatermark"
  readonly planId: number
  readonly eventTime: Expression
  readonly delayMs: number
  readonly child: LogicalPlan
}

export interface SubqueryAlias {
  readonly _tag: "SubqueryAlias"
  readonly planId: number
  readonly alias: string
  readonly child: LogicalPlan
}

/**
 * `groupByKey(f, keySchema).transformWithState(processor, options)` (Spark's
 * `TransformWithState`): a user's stateful processor over the rows of each key, with state
 * variables, timers and TTL (structured/physical/stateful/TransformWithStateExec.ts runs it).
 * The processor, key function and schemas are opaque here: core only carries them. The optional
 * `initialState` (a batch plan, applied in the first batch) is the node's second child.
 */
export interface TransformWithState {
  readonly _tag: "TransformWithState"
  readonly planId: number
  /** `(row) => key` over the child's external rows. */
  readonly keyFn: (row: any) => unknown
  /** The key's Effect Schema (`groupByKey(f, keySchema)`). */
  readonly keySchema: unknown
  /** The stateful processor (structured/api/StatefulProcessor.ts). */
  readonly processor: object
  readonly timeMode: "None" | "ProcessingTime" | "EventTime"
  readonly outputMode: "append" | "update"
  /** The output schema's Spark type; a non-struct schema gives one column named `value`. */
  readonly schema: StructType
  readonly wrapValue: boolean
  readonly output: ReadonlyArray<AttributeReference>
  readonly child: LogicalPlan
  /** A batch plan whose rows initialise the state in the first batch. */
  readonly initialState: LogicalPlan | undefined
  /** `(row) => key` over the initial state's external rows. */
  readonly initialStateKeyFn: ((row: any) => unknown) | undefined
}

/**
 * `groupByKey(f, keySchema).flatMapGroupsWithState(...)` and `.mapGroupsWithState(...)`
 * (Spark's `FlatMapGroupsWithState`): the user function called once per key with the key's rows
 * and its `GroupState`. The key, state and output schemas are structs (a single value is a
 * struct of one `value` field, as Spark's encoders); the `*IsStruct` flags say whether the
 * user sees the struct as an object or its single value. `initialState` is a batch plan with
 * columns `key` and `state`, applied in the first batch only (the node's second child). The
 * physical operator is in `structured/physical/stateful/FlatMapGroupsWithStateExec.ts`.
 */
export interface FlatMapGroupsWithState {
  readonly _tag: "FlatMapGroupsWithState"
  readonly planId: number
  /** The user function; `mapGroupsWithState`'s single result is wrapped into a one-element array. */
  readonly fn: (key: any, rows: ReadonlyArray<any>, state: any) => Iterable<unknown>
  /** The grouping function over the external row. */
  readonly keyFn: (row: any) => unknown
  readonly keySchema: StructType
  readonly keyIsStruct: boolean
  readonly stateSchema: StructType
  readonly stateIsStruct: boolean
  readonly outputSchema: StructType
  readonly outputIsStruct: boolean
  readonly output: ReadonlyArray<AttributeReference>
  readonly isMapGroupsWithState: boolean
  /** The function's output mode (Spark's `FlatMapGroupsWithState.outputMode`). */
  readonly outputMode: "append" | "update"
  readonly timeout: "NoTimeout" | "ProcessingTimeTimeout" | "EventTimeTimeout"
  readonly initialState: LogicalPlan | undefined
  readonly child: LogicalPlan
}

let nextPlanId = 1

/** A fresh plan id, unique in this process. */
export const newPlanId = (): number => nextPlanId++

/** The direct children of a node, in a fixed order. */
export const children = (p: LogicalPlan): ReadonlyArray<LogicalPlan> => {
  switch (p._tag) {
    case "LocalRelation":
    case "DataSourceRelation":
    case "StreamingRelation":
      return []
    case "Join":
    case "Intersect":
    case "Except":
      return [p.left, p.right]
    case "Union":
      return p.children
    case "TransformWithState":
      return p.initialState === undefined ? [p.child] : [p.child, p.initialState]
    case "FlatMapGroupsWithState":
      return p.initialState === undefined ? [p.child] : [p.child, p.initialState]
    case "Project":
    case "Filter":
    case "Aggregate":
    case "Sort":
    case "Limit":
    case "Distinct":
    case "Deduplicate":
    case "Generate":
    case "Window":
    case "WithColumns":
    case "WithColumnsRenamed":
    case "Drop":
    case "TypedFilter":
    case "MapElements":
    case "EventTimeWatermark":
    case "SubqueryAlias":
      return [p.child]
  }
}

/** Rebuilds `p` with new children; returns `p` itself when nothing changed. */
export const withChildren = (p: LogicalPlan, next: ReadonlyArray<LogicalPlan>): LogicalPlan => {
  const old = children(p)
  if (old.length === next.length && old.every((c, i) => c === next[i])) return p
  switch (p._tag) {
    case "LocalRelation":
    case "DataSourceRelation":
    case "StreamingRelation":
      return p
    case "Join":
    case "Intersect":
    case "Except":
      return { ...p, left: next[0], right: next[1] }
    case "Union":
      return { ...p, children: next }
    case "TransformWithState":
      return p.initialState === undefined ? { ...p, child: next[0] } : { ...p, child: next[0], initialState: next[1] }
    case "FlatMapGroupsWithState":
      return p.initialState === undefined ? { ...p, child: next[0] } : { ...p, child: next[0], initialState: next[1] }
    case "Project":
    case "Filter":
    case "Aggregate":
    case "Sort":
    case "Limit":
    case "Distinct":
    case "Deduplicate":
    case "Generate":
    case "Window":
    case "WithColumns":
    case "WithColumnsRenamed":
    case "Drop":
    case "TypedFilter":
    case "MapElements":
    case "EventTimeWatermark":
    case "SubqueryAlias":
      return { ...p, child: next[0] }
  }
}

/** Bottom-up rewrite of the plan tree. Identity-preserving. */
export const transformUp = (p: LogicalPlan, f: (p: LogicalPlan) => LogicalPlan): LogicalPlan => {
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

/** Top-down rewrite of the plan tree. Identity-preserving. */
export const transformDown = (p: LogicalPlan, f: (p: LogicalPlan) => LogicalPlan): LogicalPlan => {
  const self = f(p)
  const cs = children(self)
  return cs.length === 0
    ? self
    : withChildren(
        self,
        cs.map((c) => transformDown(c, f))
      )
}

/** Pre-order walk. */
export const foreach = (p: LogicalPlan, f: (p: LogicalPlan) => void): void => {
  f(p)
  for (const c of children(p)) foreach(c, f)
}

/** True when the plan reads a streaming source anywhere below it (Spark's `isStreaming`). */
export const isStreaming = (p: LogicalPlan): boolean => {
  switch (p._tag) {
    case "StreamingRelation":
      return true
    case "LocalRelation":
      return p.isStreaming
    default:
      return children(p).some(isStreaming)
  }
}

/** The expressions a node holds (not those of its children), in a fixed order. */
export const expressions = (p: LogicalPlan): ReadonlyArray<Expression> => {
  switch (p._tag) {
    case "LocalRelation":
    case "DataSourceRelation":
    case "StreamingRelation":
    case "Limit":
    case "Distinct":
    case "Union":
    case "Intersect":
    case "Except":
    case "WithColumnsRenamed":
    case "TypedFilter":
    case "MapElements":
    case "SubqueryAlias":
    case "TransformWithState":
    case "FlatMapGroupsWithState":
      return []
    case "Project":
      return p.projectList
    case "Filter":
      return [p.condition]
    case "Aggregate":
      return [...p.groupingExpressions, ...p.aggregateExpressions]
    case "Join":
      return p.condition === undefined ? [] : [p.condition]
    case "Sort":
      return p.order
    case "Deduplicate":
      return p.keys ?? []
    case "Generate":
      return [p.generator]
    case "Window":
      return [...p.windowExpressions, ...p.partitionSpec, ...p.orderSpec]
    case "WithColumns":
      return p.columns
    case "Drop":
      return p.columns
    case "EventTimeWatermark":
      return [p.eventTime]
  }
}

/** Spark's name of a join type in plan strings (`LeftOuter`, `FullOuter`, …). */
export const joinTypeName = (t: JoinType): string => {
  switch (t) {
    case "inner":
      return "Inner"
    case "left_outer":
      return "LeftOuter"
    case "right_outer":
      return "RightOuter"
    case "full_outer":
      return "FullOuter"
    case "left_semi":
      return "LeftSemi"
    case "left_anti":
      return "LeftAnti"
    case "cross":
      return "Cross"
  }
}
