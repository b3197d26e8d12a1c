/**
 * The physical plan as `explain()` prints it, in Spark's format: one operator per line
 * (`HashAggregate(keys=[k#1], functions=[count(1)])`, `Project [a#1, b#2L]`,
 * `Filter (a#1 > 1)`, `LocalTableScan [a#1, b#2L]`), children indented with `+- ` (last child)
 * and `:- ` (the others), attributes as `name#exprId` with an `L` suffix for `bigint`, as
 * Spark's `AttributeReference.toString`. Whole-stage-codegen markers (`*(1)`) and exchanges are
 * not printed: everything runs in one partition here.
 *
 * @since 0.1.0
 */
import * as T from "../../core/DataType.ts"
import type * as E from "../../core/Expression.ts"
import { formatDate, formatDouble, formatTimestamp } from "../../core/ExpressionName.ts"
import { joinTypeName } from "../../core/LogicalPlan.ts"
import { frameString, windowFunctionString } from "../../core/PlanString.ts"
import * as P from "./SparkPlan.ts"

/**
 * Spark's `explain()` text of a physical plan, without a trailing newline.
 *
 * @example
 * ```ts
 * import { plan } from "./Planner.ts"
 * import { treeString } from "./PhysicalPlanString.ts"
 * console.log(treeString(plan(analyzedAndOptimized)))
 * // HashAggregate(keys=[k#1], functions=[count(1)])
 * // +- LocalTableScan [k#1, v#2L]
 * ```
 * @since 0.1.0
 */
export const treeString = (plan: P.SparkPlan): string => {
  const lines: Array<string> = []
  // Spark's TreeNode.generateTreeString: ancestors that are not the last child draw ":  ".
  const walk = (p: P.SparkPlan, lastFlags: ReadonlyArray<boolean>): void => {
    let prefix = ""
    if (lastFlags.length > 0) {
      for (let i = 0; i < lastFlags.length - 1; i++) prefix += lastFlags[i] ? "   " : ":  "
      prefix += lastFlags[lastFlags.length - 1] ? "+- " : ":- "
    }
    lines.push(prefix + nodeString(p))
    // A streaming aggregation prints as Spark's chain of operators, each the only child of the
    // one above it; the real children hang below the last line of the chain.
    let flags = lastFlags
    const chain = chainBelow(p)
    for (const line of chain) {
      flags = [...flags, true]
      let pad = ""
      for (let i = 0; i < flags.length - 1; i++) pad += flags[i] ? "   " : ":  "
      lines.push(`${pad}+- ${line}`)
    }
    const cs = P.children(p)
    for (let i = 0; i < cs.length; i++) walk(cs[i], [...flags, i === cs.length - 1])
  }
  walk(plan, [])
  return lines.join("\n")
}

/**
 * `name#exprId`, with `L` after a `bigint` attribute (Spark's `NamedExpression.typeSuffix`).
 *
 * @since 0.1.0
 */
export const attributeString = (a: E.AttributeReference): string =>
  `${a.name}#${a.exprId}${a.dataType._tag === "long" ? "L" : ""}`

const literalString = (value: unknown, t: T.DataType): string => {
  if (value === null || value === undefined) return "null"
  switch (t._tag) {
    case "double":
      return formatDouble(value as number)
    case "timestamp":
      return formatTimestamp(value as number)
    case "date":
      return formatDate(value as number)
    case "binary":
      return `0x${Array.from(value as Uint8Array, (b) => b.toString(16).padStart(2, "0").toUpperCase()).join("")}`
    case "array": {
      const et = t.elementType
      return `[${(value as ReadonlyArray<unknown>).map((x) => literalString(x, et)).join(",")}]`
    }
    default:
      return String(value)
  }
}

const millisString = (ms: number): string => String(ms * 1000)

/**
 * An expression as Spark's `Expression.toString` prints it in plans: `(a#1 > 1)`,
 * `isnotnull(a#1)`, `cast(a#1 as bigint)`, `count(1)`, `upper(s#3) AS u#7`.
 *
 * @since 0.1.0
 */
export const expressionString = (e: E.Expression): string => {
  switch (e._tag) {
    case "UnresolvedAttribute":
      return `'${e.nameParts.join(".")}`
    case "UnresolvedStar":
      return e.target === undefined ? "*" : `${e.target.join(".")}.*`
    case "AttributeReference":
      return attributeString(e)
    case "Literal":
      return literalString(e.value, e.dataType)
    case "Alias":
      return `${expressionString(e.child)} AS ${e.name}#${e.exprId}`
    case "UnaryExpression": {
      const c = expressionString(e.child)
      switch (e.op) {
        case "negate":
          return `-${c}`
        case "not":
          return `NOT ${c}`
        case "isNull":
          return `isnull(${c})`
        case "isNotNull":
          return `isnotnull(${c})`
      }
    }
    case "BinaryExpression": {
      const l = expressionString(e.left)
      const r = expressionString(e.right)
      switch (e.op) {
        case "and":
          return `(${l} AND ${r})`
        case "or":
          return `(${l} OR ${r})`
        case "!=":
          // Spark has no not-equal node: `a != b` is `NOT (a = b)`.
          return `NOT (${l} = ${r})`
        default:
          return `(${l} ${e.op} ${r})`
      }
    }
    case "In":
      return `${expressionString(e.child)} IN (${e.list.map(expressionString).join(",")})`
    case "Cast":
      return `cast(${expressionString(e.child)} as ${T.simpleString(e.to)})`
    case "CaseWhen":
      return `CASE ${e.branches.map(([c, v]) => `WHEN ${expressionString(c)} THEN ${expressionString(v)}`).join(" ")}${
        e.otherwise === undefined ? "" : ` ELSE ${expressionString(e.otherwise)}`
      } END`
    case "GetField":
      return `${expressionString(e.child)}.${e.field}`
    case "ScalarFunction":
      return `${e.name}(${e.args.map(expressionString).join(", ")})`
    case "AggregateFunction":
      return `${e.name}(${e.distinct ? "distinct " : ""}${e.args.map(expressionString).join(", ")})`
    case "TimeWindow":
      // Spark prints the durations in microseconds.
      return `window(${expressionString(e.timeColumn)}, ${millisString(e.windowMs)}, ${millisString(e.slideMs)}, ${millisString(e.startMs)})`
    case "SessionWindow":
      return `session_window(${expressionString(e.timeColumn)}, ${expressionString(e.gap)})`
    case "Explode":
      return `${e.position ? "posexplode" : "explode"}(${expressionString(e.child)})`
    case "CurrentTimestamp":
      return "current_timestamp()"
    case "SortOrder":
      return `${expressionString(e.child)} ${e.direction === "asc" ? "ASC" : "DESC"} ${
        e.nullOrdering === "nullsFirst" ? "NULLS FIRST" : "NULLS LAST"
      }`
    case "InvalidExpression":
      return `<invalid: ${e.message}>`
    case "WindowFunction":
      return windowFunctionString(e, [], expressionString)
    case "WindowExpression": {
      const fn =
        e.function._tag === "WindowFunction"
          ? windowFunctionString(e.function, e.orderSpec, expressionString)
          : expressionString(e.function)
      const spec = [...e.partitionSpec, ...e.orderSpec].map(expressionString)
      spec.push(e.frame === undefined ? "unspecifiedframe$()" : frameString(e.frame))
      return `${fn} windowspecdefinition(${spec.join(", ")})`
    }
  }
}

/** A named output expression; an alias prints its output attribute (with the `L` suffix). */
const namedString = (e: E.Expression, out: E.AttributeReference | undefined): string =>
  e._tag === "Alias" && out !== undefined
    ? `${expressionString(e.child)} AS ${attributeString(out)}`
    : expressionString(e)

const list = (xs: ReadonlyArray<string>, sep = ", "): string => `[${xs.join(sep)}]`

const DAY_MS = 86_400_000

/** Spark's `CalendarInterval.toString` of a delay: `10 seconds`, `1 minutes 30 seconds`. */
const intervalString = (ms: number): string => {
  if (ms === 0) return "0 seconds"
  const parts: Array<string> = []
  const days = Math.trunc(ms / DAY_MS)
  let rest = ms - days * DAY_MS
  if (days !== 0) parts.push(`${days} days`)
  const hours = Math.trunc(rest / 3_600_000)
  rest -= hours * 3_600_000
  if (hours !== 0) parts.push(`${hours} hours`)
  const minutes = Math.trunc(rest / 60_000)
  rest -= minutes * 60_000
  if (minutes !== 0) parts.push(`${minutes} minutes`)
  if (rest !== 0) parts.push(`${rest / 1000} seconds`)
  return parts.join(" ")
}

/** The functions of an aggregate stage as Spark names them (`partial_count(1)`, `merge_sum(v#1)`). */
const stageFunctions = (fs: ReadonlyArray<E.AggregateFunction>, stage: string): string =>
  list(fs.map((f) => `${stage}${expressionString(f)}`))

/** `state info [ opId = 0 ]`: what is known of Spark's `StatefulOperatorStateInfo` at planning. */
const stateInfo = (operatorId: number): string => `state info [ opId = ${operatorId} ]`

/**
 * The lines Spark prints below a stateful aggregation's top `HashAggregate` (without exchanges):
 * `StateStoreSave`, the merge aggregate, `StateStoreRestore`, the merge and partial aggregates;
 * with a session window `SessionWindowStateStoreSave`, `MergingSessions`,
 * `SessionWindowStateStoreRestore` and the partial aggregate.
 */
const chainBelow = (p: P.SparkPlan): ReadonlyArray<string> => {
  if (p._tag !== "StatefulAggregateExec") return []
  const keys = p.groupingAttributes
  const partial = `HashAggregate(keys=${list(
    p.groupingExpressions.map((g, i) => namedString(g, keys[i]))
  )}, functions=${stageFunctions(p.aggregateFunctions, "partial_")})`
  const merge = `HashAggregate(keys=${list(keys.map(attributeString))}, functions=${stageFunctions(
    p.aggregateFunctions,
    "merge_"
  )})`
  const spec = p.sessionWindow
  if (spec === undefined) {
    const k = list(keys.map(attributeString))
    return [
      `StateStoreSave ${k}, ${stateInfo(p.operatorId)}, 2`,
      merge,
      `StateStoreRestore ${k}, ${stateInfo(p.operatorId)}, 2`,
      merge,
      partial
    ]
  }
  const others = list(keys.filter((_, i) => i !== spec.index).map(attributeString))
  const session = attributeString(keys[spec.index])
  return [
    `SessionWindowStateStoreSave ${others}, ${session}, ${stateInfo(p.operatorId)}, 1`,
    `MergingSessions ${others}, ${session}, ${stageFunctions(p.aggregateFunctions, "merge_")}`,
    `SessionWindowStateStoreRestore ${others}, ${session}, ${stateInfo(p.operatorId)}, 1`,
    partial
  ]
}

const nodeString = (p: P.SparkPlan): string => {
  switch (p._tag) {
    case "LocalTableScanExec":
      return p.rows.length === 0
        ? `LocalTableScan <empty>, ${list(p.output.map(attributeString))}`
        : `LocalTableScan ${list(p.output.map(attributeString))}`
    case "DataSourceScanExec": {
      const rel = p.relation
      return `FileScan ${rel.format} ${list(p.output.map(attributeString), ",")} Batched: false, DataFilters: [], Format: ${rel.format.toUpperCase()}, Location: InMemoryFileIndex(${rel.paths.length} paths)${list([...rel.paths], ", ")}, PartitionFilters: [], PushedFilters: [], ReadSchema: ${T.simpleString(
        T.struct(p.output.map((a) => T.field(a.name, a.dataType, a.nullable)))
      )}`
    }
    case "StreamingScanExec":
      return `MicroBatchScan${list(p.output.map(attributeString))} ${p.relation.format}`
    case "ProjectExec":
      return `Project ${list(p.projectList.map((e, i) => namedString(e, p.output[i])))}`
    case "FilterExec":
      return p.condition._tag === "Predicate"
        ? `Filter ${expressionString(p.condition.expression)}`
        : "Filter <function>"
    case "StreamingDeduplicateExec":
      return `${p.withinWatermark ? "StreamingDeduplicateWithinWatermark" : "StreamingDeduplicate"} ${list(
        p.keys.map(attributeString)
      )}, ${stateInfo(p.operatorId)}`
    case "StatefulAggregateExec":
      // The final aggregate above StateStoreSave groups by the grouping attributes.
      return `HashAggregate(keys=${list(p.groupingAttributes.map(attributeString))}, functions=${list(
        p.aggregateFunctions.map(expressionString)
      )})`
    case "HashAggregateExec":
      return `HashAggregate(keys=${list(
        p.groupingExpressions.map((g, i) => namedString(g, p.groupingAttributes[i]))
      )}, functions=${list(p.aggregateFunctions.map(expressionString))})`
    case "BroadcastHashJoinExec":
    case "ShuffledHashJoinExec": {
      const args = [
        list(p.leftKeys.map(expressionString)),
        list(p.rightKeys.map(expressionString)),
        joinTypeName(p.joinType),
        p.buildSide
      ]
      if (p.condition !== undefined) args.push(expressionString(p.condition))
      // BroadcastHashJoinExec's last argument is `isNullAwareAntiJoin`.
      if (p._tag === "BroadcastHashJoinExec") args.push("false")
      return `${p._tag === "BroadcastHashJoinExec" ? "BroadcastHashJoin" : "ShuffledHashJoin"} ${args.join(", ")}`
    }
    case "StreamingSymmetricHashJoinExec": {
      // Spark's `JoinConditionSplitPredicates.toString`; the state format version (2) last.
      const c = p.condition
      const part = (e: E.Expression | undefined) => (e === undefined ? "null" : expressionString(e))
      return `StreamingSymmetricHashJoin ${list(p.leftKeys.map(expressionString))}, ${list(
        p.rightKeys.map(expressionString)
      )}, ${joinTypeName(p.joinType)}, condition = [ leftOnly = ${part(c.leftSideOnly)}, rightOnly = ${part(
        c.rightSideOnly
      )}, both = ${part(c.bothSides)}, full = ${part(c.full)} ], ${stateInfo(p.operatorId)}, 2`
    }
    case "BroadcastNestedLoopJoinExec":
      return `BroadcastNestedLoopJoin ${p.buildSide}, ${joinTypeName(p.joinType)}${
        p.condition === undefined ? "" : `, ${expressionString(p.condition)}`
      }`
    case "SortExec":
      return `Sort ${list(p.sortOrder.map(expressionString))}, ${p.global}, 0`
    case "LimitExec":
      return `${p.kind} ${p.n}`
    case "TakeOrderedAndProjectExec":
      return `TakeOrderedAndProject(limit=${p.limit}, orderBy=${list(p.sortOrder.map(expressionString), ",")}, output=${list(
        p.projectList.map((e, i) => namedString(e, p.output[i])),
        ","
      )})`
    case "DeduplicateExec":
      return `Deduplicate ${list(p.keys.map(attributeString))}`
    case "UnionExec":
      return "Union"
    case "SetOperationExec":
      return `${p.kind === "intersect" ? "Intersect" : "Except"}${p.isAll ? "All" : ""} ${list(p.output.map(attributeString))}`
    case "WindowExec": {
      // Spark's WindowExec line (Spark also shows the Sort and Exchange below it; one task here)
      const base = p.child.output.length
      const exprs = p.windowExpressions.map((e, i) => namedString(e, p.output[base + i]))
      return `Window ${list(exprs)}, ${list(p.partitionSpec.map(expressionString))}, ${list(p.orderSpec.map(expressionString))}`
    }
    case "GenerateExec":
      return `Generate ${expressionString(p.generator)}, ${list(p.child.output.map(attributeString))}, ${
        p.generator._tag === "Explode" ? p.generator.outer : false
      }, ${list(p.generatorOutput.map(attributeString))}`
    case "FlatMapGroupsWithStateExec":
      // Spark: FlatMapGroupsWithStateExec on a stream; MapGroups / CoGroup on a batch input
      return p.isStreaming
        ? `FlatMapGroupsWithState <function>, ${p.outputMode === "append" ? "Append" : "Update"}, ${p.timeout}, ${list(p.output.map(attributeString))}, ${stateInfo(p.operatorId)}`
        : `${p.initialState === undefined ? "MapGroups" : "CoGroup"} <function>, ${list(p.output.map(attributeString))}`
    case "TransformWithStateExec":
      return `TransformWithStateExec <function>, ${p.timeMode}, ${p.outputMode === "append" ? "Append" : "Update"}, ${list(p.output.map(attributeString))}, ${stateInfo(p.operatorId)}`
    case "MapElementsExec":
      // Spark plans flatMap as MapPartitions.
      return `${p.flat ? "MapPartitions" : "MapElements"} <function>, ${list(p.output.map(attributeString))}`
    case "EventTimeWatermarkExec": {
      const et = p.eventTime
      const head =
        et._tag === "AttributeReference"
          ? `${attributeString(et)}: ${T.simpleString(et.dataType)}`
          : expressionString(et)
      return `EventTimeWatermark ${head}, ${intervalString(p.delayMs)}`
    }
  }
}
