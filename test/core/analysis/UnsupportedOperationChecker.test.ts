/**
 * Spark's UnsupportedOperationsSuite for tributary's plan nodes, with Spark 4's rules (ec7cab5 of
 * UnsupportedOperationChecker.scala): where the 3.x suite expects a rule Spark 3.5 removed
 * (multiple streaming aggregations, dropDuplicates after aggregation, outer joins followed by
 * stateful operators), the case asserts Spark 4's outcome and says so.
 *
 * Spark's suite wraps every plan in a `StreamingPlanWrapper` so that a batch sub-plan is checked
 * inside a streaming query; tributary has no such node, so `wrap` puts a batch plan into an
 * inner join with a streaming relation (a stream-static inner join passes every check).
 */
import { it as effectIt } from "@effect/vitest"
import { Effect, Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { analyze } from "../../../core/analysis/Analyzer.ts"
import { emptyCatalog } from "../../../core/Catalog.ts"
import { type Column, col, lit } from "../../../core/Column.ts"
import * as T from "../../../core/DataType.ts"
import type { AnalysisError } from "../../../core/Errors.ts"
import * as E from "../../../core/Expression.ts"
import * as F from "../../../core/F.ts"
import * as P from "../../../core/LogicalPlan.ts"
import type { OutputMode } from "../../../core/Streaming.ts"
import {
  checkForBatch,
  checkForContinuous,
  checkForStreaming,
  checkStreamingQueryGlobalWatermarkLimit,
  isWatermarkInJoinKeys,
  stateValueWatermark
} from "../../../core/analysis/UnsupportedOperationChecker.ts"
import { MemoryStream, Session } from "../../../mod.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"

// ---------------------------------------------------------------------------------------------
// Plans built by hand, as Spark's suite builds them
// ---------------------------------------------------------------------------------------------

const attribute = E.attribute("a", T.IntegerType)
const attributeWithWatermark: E.AttributeReference = { ...attribute, eventTimeDelayMs: 1000 }

const localRelation = (output: ReadonlyArray<E.AttributeReference>, isStreaming: boolean): P.LocalRelation => ({
  _tag: "LocalRelation",
  planId: P.newPlanId(),
  output,
  rows: [],
  isStreaming
})

const streamingRelation = (output: ReadonlyArray<E.AttributeReference>): P.StreamingRelation => ({
  _tag: "StreamingRelation",
  planId: P.newPlanId(),
  format: "memory",
  sourceKey: `source-${P.newPlanId()}`,
  options: {},
  output
})

const batchRelation = localRelation([attribute], false)
const streamRelation = streamingRelation([attribute])

const countStar = (name: string): E.Alias => ({
  _tag: "Alias",
  child: {
    _tag: "AggregateFunction",
    name: "count",
    args: [E.literal(1, T.IntegerType)],
    distinct: false,
    options: {},
    dataType: T.LongType
  },
  name,
  exprId: E.newExprId()
})

const countDistinct = (name: string): E.Alias => ({
  _tag: "Alias",
  child: {
    _tag: "AggregateFunction",
    name: "count",
    args: [E.literal(1, T.IntegerType)],
    distinct: true,
    options: {},
    dataType: T.LongType
  },
  name,
  exprId: E.newExprId()
})

const aggregate = (
  grouping: ReadonlyArray<E.Expression>,
  aggs: ReadonlyArray<E.Expression>,
  child: P.LogicalPlan
): P.Aggregate => ({
  _tag: "Aggregate",
  planId: P.newPlanId(),
  groupingExpressions: grouping,
  aggregateExpressions: aggs,
  child
})

/** `groupBy("a")(count(*))` */
const groupByA = (child: P.LogicalPlan): P.Aggregate => aggregate([attribute], [attribute, countStar("count")], child)

const join = (left: P.LogicalPlan, right: P.LogicalPlan, joinType: P.JoinType, condition?: E.Expression): P.Join => ({
  _tag: "Join",
  planId: P.newPlanId(),
  left,
  right,
  joinType,
  condition,
  usingColumns: undefined
})

const binary = (op: E.BinaryOp, left: E.Expression, right: E.Expression): E.BinaryExpression => ({
  _tag: "BinaryExpression",
  op,
  left,
  right
})

const sort = (child: P.LogicalPlan, global = true): P.Sort => ({
  _tag: "Sort",
  planId: P.newPlanId(),
  order: [],
  global,
  child
})

const limit = (child: P.LogicalPlan): P.Limit => ({ _tag: "Limit", planId: P.newPlanId(), n: 10, child })

const deduplicate = (
  keys: ReadonlyArray<E.AttributeReference>,
  child: P.LogicalPlan,
  withinWatermark = false
): P.Deduplicate => ({
  _tag: "Deduplicate",
  planId: P.newPlanId(),
  columnNames: undefined,
  keys,
  withinWatermark,
  child
})

const distinct = (child: P.LogicalPlan): P.Distinct => ({ _tag: "Distinct", planId: P.newPlanId(), child })

const union = (...children: ReadonlyArray<P.LogicalPlan>): P.Union => ({
  _tag: "Union",
  planId: P.newPlanId(),
  children,
  byName: false,
  allowMissingColumns: false
})

const project = (list: ReadonlyArray<E.Expression>, child: P.LogicalPlan): P.Project => ({
  _tag: "Project",
  planId: P.newPlanId(),
  projectList: list,
  child
})

const filter = (condition: E.Expression, child: P.LogicalPlan): P.Filter => ({
  _tag: "Filter",
  planId: P.newPlanId(),
  condition,
  child
})

const wrapperStream = streamingRelation([E.attribute("w", T.IntegerType)])

/** Spark's `wrapInStreaming`: a batch plan checked as part of a streaming query. */
const wrap = (p: P.LogicalPlan): P.LogicalPlan => (P.isStreaming(p) ? p : join(p, wrapperStream, "inner"))

type Failure = { readonly reason: AnalysisError["reason"]; readonly message: string }

const described = (e: AnalysisError | undefined): Failure | undefined =>
  e === undefined ? undefined : { reason: e.reason, message: e.message }

const unsupported = (message: string): Failure => ({ reason: "UnsupportedOperation", message })
const watermarkRequired = (message: string): Failure => ({ reason: "WatermarkRequired", message })

const streaming = (plan: P.LogicalPlan, mode: OutputMode, conf?: { statefulOperatorCheckCorrectness?: boolean }) =>
  described(checkForStreaming(wrap(plan), mode, conf))

// Spark's messages
const M = {
  noStreamingSource: "Queries without streaming sources cannot be executed with writeStream.start()",
  streamingSourceInBatch: "Queries with streaming sources must be executed with writeStream.start()",
  // Spark 4's STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION, worded as Spark 4.2 words it, then Spark 3's sentence
  appendWithoutWatermark:
    "[STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] Invalid streaming output mode: append. This output mode is not supported for streaming aggregations without watermark on streaming DataFrames/DataSets. (Append output mode not supported when there are streaming aggregations on streaming DataFrames/DataSets without watermark.)",
  completeWithoutAggregation:
    "[STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] Invalid streaming output mode: complete. This output mode is not supported for no streaming aggregations on streaming DataFrames/DataSets. (Complete output mode not supported when there are no streaming aggregations on streaming DataFrames/Datasets.)",
  updateSessionWindow:
    "[STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] Invalid streaming output mode: update. This output mode is not supported for session window streaming aggregations on streaming DataFrames/DataSets. (Update output mode not supported for session window on streaming DataFrames/DataSets.)",
  distinctAggregation:
    "Distinct aggregations are not supported on streaming DataFrames/Datasets. Consider using approx_count_distinct() instead.",
  streamStreamJoinMode: (mode: string) =>
    `Join between two streaming DataFrames/Datasets is not supported in ${mode} output mode, only in Append output mode`,
  fullOuterStreamLeft:
    "FullOuter joins with streaming DataFrames/Datasets on the left and a static DataFrame/Dataset on the right is not supported",
  fullOuterStreamRight:
    "FullOuter joins with streaming DataFrames/Datasets on the right and a static DataFrame/Dataset on the left is not supported",
  leftAntiStreamRight: "LeftAnti joins with a streaming DataFrame/Dataset on the right are not supported",
  leftStreamRight: (name: string) =>
    `${name} join with a streaming DataFrame/Dataset on the right and a static DataFrame/Dataset on the left is not supported`,
  rightOuterStreamLeft:
    "RightOuter join with a streaming DataFrame/Dataset on the left and a static DataFrame/DataSet on the right not supported",
  streamStreamWatermark: (name: string) =>
    `Stream-stream ${name} join between two streaming DataFrame/Datasets is not supported without a watermark in the join keys, or a watermark on the nullable side and an appropriate range condition`,
  dedupWithinWatermarkStreaming:
    "dropDuplicatesWithinWatermark is not supported on streaming DataFrames/DataSets without watermark",
  dedupWithinWatermarkBatch: "dropDuplicatesWithinWatermark is not supported with batch DataFrames/DataSets",
  union: "Union between streaming and batch DataFrames/Datasets is not supported",
  limitUpdate: "Limits are not supported on streaming DataFrames/Datasets in Update output mode",
  sort: "Sorting is not supported on streaming DataFrames/Datasets, unless it is on aggregated DataFrame/Dataset in Complete output mode",
  monotonicallyIncreasingId:
    "Expression(s): monotonically_increasing_id() is not supported with streaming DataFrames/Datasets",
  correctness:
    "Detected pattern of possible 'correctness' issue due to global watermark. The query contains stateful operation which can emit rows older than the current watermark plus allowed late record delay, which are \"late rows\" in downstream stateful operations and these rows can be discarded. Please refer the programming guide doc for more details. If you understand the possible risk of correctness issue and still need to run the query, you can disable this check by setting the config `spark.sql.streaming.statefulOperator.checkCorrectness.enabled` to false.",
  continuous: (name: string) => `Continuous processing does not support ${name} operations.`,
  continuousCurrentTime: "Continuous processing does not support current time operations."
}

const MODES: ReadonlyArray<OutputMode> = ["append", "update", "complete"]

/**
 * Spark's `testBinaryOperationInStreamingPlan`: the operator over stream-stream, stream-batch,
 * batch-stream and batch-batch inputs; batch-batch is always supported.
 */
const binaryMatrix = (
  name: string,
  make: (l: P.LogicalPlan, r: P.LogicalPlan) => P.LogicalPlan,
  mode: OutputMode,
  expected: {
    readonly streamStream?: Failure
    readonly streamBatch?: Failure
    readonly batchStream?: Failure
  }
) => {
  describe(`${name} in ${mode} mode`, () => {
    it("stream-stream", () =>
      expect(streaming(make(streamRelation, streamRelation), mode)).toEqual(expected.streamStream))
    it("stream-batch", () => expect(streaming(make(streamRelation, batchRelation), mode)).toEqual(expected.streamBatch))
    it("batch-stream", () => expect(streaming(make(batchRelation, streamRelation), mode)).toEqual(expected.batchStream))
    it("batch-batch", () => expect(streaming(make(batchRelation, batchRelation), mode)).toBeUndefined())
  })
}

// ---------------------------------------------------------------------------------------------
// Batch queries
// ---------------------------------------------------------------------------------------------

describe("checkForBatch", () => {
  it("local relation: supported", () => {
    expect(checkForBatch(batchRelation)).toBeUndefined()
  })

  it("streaming source: not supported", () => {
    expect(described(checkForBatch(streamRelation))).toEqual(unsupported(M.streamingSourceInBatch))
    expect(described(checkForBatch(localRelation([attribute], true)))).toEqual(unsupported(M.streamingSourceInBatch))
  })

  it("select on streaming source: not supported", () => {
    expect(described(checkForBatch(project([attribute], streamRelation)))).toEqual(
      unsupported(M.streamingSourceInBatch)
    )
  })

  it("a streaming side of a join: not supported", () => {
    expect(described(checkForBatch(join(batchRelation, streamRelation, "inner")))).toEqual(
      unsupported(M.streamingSourceInBatch)
    )
  })

  it("dropDuplicatesWithinWatermark on a batch relation: not supported; dropDuplicates is", () => {
    expect(described(checkForBatch(deduplicate([attribute], batchRelation, true)))).toEqual(
      unsupported(M.dedupWithinWatermarkBatch)
    )
    expect(checkForBatch(deduplicate([attribute], batchRelation))).toBeUndefined()
    expect(checkForBatch(distinct(batchRelation))).toBeUndefined()
  })

  it("batch aggregations, sorts, limits and joins: supported", () => {
    const plan = limit(sort(join(groupByA(batchRelation), batchRelation, "full_outer")))
    expect(checkForBatch(plan)).toBeUndefined()
  })
})

// ---------------------------------------------------------------------------------------------
// Streaming queries
// ---------------------------------------------------------------------------------------------

describe("checkForStreaming: plans", () => {
  it("no streaming source: not supported", () => {
    expect(described(checkForStreaming(project([attribute], batchRelation), "append"))).toEqual(
      unsupported(M.noStreamingSource)
    )
  })

  it("a streaming LocalRelation counts as a streaming source", () => {
    expect(checkForStreaming(localRelation([attribute], true), "append")).toBeUndefined()
  })

  it("map-like operators: supported in Append and Update", () => {
    const mapped: P.MapElements = {
      _tag: "MapElements",
      planId: P.newPlanId(),
      fn: (r) => r,
      flat: false,
      schema: T.struct([T.field("a", T.IntegerType)]),
      wrapValue: false,
      output: [attribute],
      child: {
        _tag: "TypedFilter",
        planId: P.newPlanId(),
        predicate: () => true,
        child: filter(binary(">", attribute, E.literal(1, T.IntegerType)), streamRelation)
      }
    }
    expect(streaming(mapped, "append")).toBeUndefined()
    expect(streaming(mapped, "update")).toBeUndefined()
  })
})

describe("checkForStreaming: aggregation", () => {
  it("multiple batch aggregations: supported", () => {
    const plan = aggregate([], [countStar("c")], aggregate([], [countStar("d")], batchRelation))
    expect(streaming(plan, "append")).toBeUndefined()
  })

  it("multiple aggregations but only one streaming aggregation: supported", () => {
    const plan = join(
      aggregate([], [countStar("c")], batchRelation),
      aggregate([], [countStar("d")], streamRelation),
      "inner"
    )
    expect(streaming(plan, "update")).toBeUndefined()
  })

  // Spark 3.x: "Multiple streaming aggregations are not supported". Since Spark 3.5 chained
  // aggregations are allowed in Append mode and caught by the global watermark check otherwise.
  it("multiple streaming aggregations: Update and Complete fail the global watermark check", () => {
    const plan = aggregate([], [countStar("c")], aggregate([], [countStar("d")], streamRelation))
    expect(streaming(plan, "update")).toEqual(unsupported(M.correctness))
    expect(streaming(plan, "complete")).toEqual(unsupported(M.correctness))
    expect(streaming(plan, "update", { statefulOperatorCheckCorrectness: false })).toBeUndefined()
  })

  it("multiple streaming aggregations on the watermark: supported in Append", () => {
    const inner = aggregate([attributeWithWatermark], [attributeWithWatermark, countStar("d")], streamRelation)
    const plan = aggregate([attributeWithWatermark], [attributeWithWatermark, countStar("c")], inner)
    expect(streaming(plan, "append")).toBeUndefined()
  })

  it("multiple streaming aggregations: Append looks at the topmost one", () => {
    const inner = aggregate([attributeWithWatermark], [attributeWithWatermark, countStar("d")], streamRelation)
    const plan = aggregate([], [countStar("c")], inner)
    expect(streaming(plan, "append")).toEqual(watermarkRequired(M.appendWithoutWatermark))
  })

  it("streaming aggregations in Update mode: supported", () => {
    expect(streaming(aggregate([], [countStar("d")], streamRelation), "update")).toBeUndefined()
  })

  it("streaming aggregations in Complete mode: supported", () => {
    expect(streaming(aggregate([], [countStar("d")], streamRelation), "complete")).toBeUndefined()
  })

  it("streaming aggregations with watermark in Append mode: supported", () => {
    expect(streaming(aggregate([attributeWithWatermark], [countStar("d")], streamRelation), "append")).toBeUndefined()
  })

  it("streaming aggregations without watermark in Append mode: not supported", () => {
    expect(streaming(aggregate([], [countStar("d")], streamRelation), "append")).toEqual(
      watermarkRequired(M.appendWithoutWatermark)
    )
    expect(streaming(aggregate([attribute], [countStar("d")], streamRelation), "append")).toEqual(
      watermarkRequired(M.appendWithoutWatermark)
    )
  })

  it("a grouping key that only computes from the watermark column does not count", () => {
    const shifted = binary("+", attributeWithWatermark, E.literal(1, T.IntegerType))
    expect(streaming(aggregate([shifted], [countStar("d")], streamRelation), "append")).toEqual(
      watermarkRequired(M.appendWithoutWatermark)
    )
  })

  it("an aliased watermark key counts (Spark's CleanupAliases)", () => {
    const aliased: E.Alias = { _tag: "Alias", child: attributeWithWatermark, name: "t", exprId: E.newExprId() }
    expect(streaming(aggregate([aliased], [countStar("d")], streamRelation), "append")).toBeUndefined()
  })

  it("distinct aggregate on a batch relation: supported", () => {
    expect(streaming(aggregate([], [countDistinct("c")], batchRelation), "append")).toBeUndefined()
  })

  it("distinct aggregate on a streaming relation: not supported", () => {
    expect(streaming(aggregate([], [countDistinct("c")], streamRelation), "complete")).toEqual(
      unsupported(M.distinctAggregation)
    )
    expect(streaming(aggregate([], [countDistinct("c")], streamRelation), "update")).toEqual(
      unsupported(M.distinctAggregation)
    )
  })
})

describe("checkForStreaming: output modes (Spark's testOutputMode)", () => {
  const agg = groupByA(streamRelation)
  const noAgg = filter(binary(">", attribute, E.literal(1, T.IntegerType)), streamRelation)

  it("Append: aggregation without watermark is not supported, no aggregation is", () => {
    expect(streaming(agg, "append")).toEqual(watermarkRequired(M.appendWithoutWatermark))
    expect(streaming(noAgg, "append")).toBeUndefined()
  })

  it("Update: both supported", () => {
    expect(streaming(agg, "update")).toBeUndefined()
    expect(streaming(noAgg, "update")).toBeUndefined()
  })

  it("Complete: aggregation supported, no aggregation is not", () => {
    expect(streaming(agg, "complete")).toBeUndefined()
    expect(streaming(noAgg, "complete")).toEqual(unsupported(M.completeWithoutAggregation))
  })

  it("Complete needs a streaming aggregation: one over a batch relation does not count", () => {
    const plan = join(aggregate([], [countStar("c")], batchRelation), streamRelation, "inner")
    expect(streaming(plan, "complete")).toEqual(unsupported(M.completeWithoutAggregation))
  })
})

describe("checkForStreaming: deduplication", () => {
  it("Deduplicate on streaming relation before aggregation: supported", () => {
    const plan = aggregate([attributeWithWatermark], [countStar("c")], deduplicate([attribute], streamRelation))
    expect(streaming(plan, "append")).toBeUndefined()
  })

  // Spark 3.x: "dropDuplicates is not supported after aggregation"; removed in Spark 3.5. A
  // deduplication not keyed on event time is not stateful for the global watermark check.
  it("Deduplicate on streaming relation after aggregation: supported in Complete mode (Spark 4)", () => {
    const plan = deduplicate([attribute], aggregate([], [countStar("c")], streamRelation))
    expect(streaming(plan, "complete")).toBeUndefined()
  })

  it("Deduplicate keyed on event time after an Update/Complete aggregation: global watermark check", () => {
    const agg = aggregate([attributeWithWatermark], [attributeWithWatermark, countStar("c")], streamRelation)
    const plan = deduplicate([attributeWithWatermark], agg)
    expect(streaming(plan, "update")).toEqual(unsupported(M.correctness))
    expect(streaming(plan, "complete")).toEqual(unsupported(M.correctness))
    expect(streaming(plan, "append")).toBeUndefined()
  })

  it("Deduplicate on batch relation inside a streaming query: supported", () => {
    expect(streaming(deduplicate([attribute], batchRelation), "append")).toBeUndefined()
  })

  it("dropDuplicates / distinct on a stream: supported in Append and Update, not Complete", () => {
    for (const plan of [deduplicate([attribute], streamRelation), distinct(streamRelation)]) {
      expect(streaming(plan, "append")).toBeUndefined()
      expect(streaming(plan, "update")).toBeUndefined()
      expect(streaming(plan, "complete")).toEqual(unsupported(M.completeWithoutAggregation))
    }
  })

  it("dropDuplicatesWithinWatermark without watermark: not supported", () => {
    expect(streaming(deduplicate([attribute], streamRelation, true), "append")).toEqual(
      watermarkRequired(M.dedupWithinWatermarkStreaming)
    )
  })

  it("dropDuplicatesWithinWatermark with a watermark in the input: supported", () => {
    const input = streamingRelation([attributeWithWatermark, E.attribute("id", T.StringType)])
    expect(streaming(deduplicate([input.output[1]], input, true), "append")).toBeUndefined()
  })

  it("dropDuplicatesWithinWatermark on a batch relation inside a streaming query: no streaming check", () => {
    expect(streaming(deduplicate([attribute], batchRelation, true), "append")).toBeUndefined()
  })
})

describe("checkForStreaming: joins (Spark's testBinaryOperationInStreamingPlan)", () => {
  binaryMatrix("single inner join", (l, r) => join(l, r, "inner"), "append", {})
  binaryMatrix("multiple inner joins", (l, r) => join(join(l, r, "inner"), streamRelation, "inner"), "append", {})
  binaryMatrix("cross join", (l, r) => join(l, r, "cross"), "append", {})
  binaryMatrix("inner join", (l, r) => join(l, r, "inner"), "update", {
    streamStream: unsupported(M.streamStreamJoinMode("Update"))
  })
  binaryMatrix("FullOuter join", (l, r) => join(l, r, "full_outer"), "append", {
    streamStream: watermarkRequired(M.streamStreamWatermark("FullOuter")),
    streamBatch: unsupported(M.fullOuterStreamLeft),
    batchStream: unsupported(M.fullOuterStreamRight)
  })
  binaryMatrix("LeftOuter join", (l, r) => join(l, r, "left_outer"), "append", {
    streamStream: watermarkRequired(M.streamStreamWatermark("LeftOuter")),
    batchStream: unsupported(M.leftStreamRight("LeftOuter"))
  })
  binaryMatrix("LeftSemi join", (l, r) => join(l, r, "left_semi"), "append", {
    streamStream: watermarkRequired(M.streamStreamWatermark("LeftSemi")),
    batchStream: unsupported(M.leftStreamRight("LeftSemi"))
  })
  binaryMatrix("LeftAnti join", (l, r) => join(l, r, "left_anti"), "append", {
    streamStream: unsupported(M.leftAntiStreamRight),
    batchStream: unsupported(M.leftAntiStreamRight)
  })
  binaryMatrix("RightOuter join", (l, r) => join(l, r, "right_outer"), "append", {
    streamStream: watermarkRequired(M.streamStreamWatermark("RightOuter")),
    streamBatch: unsupported(M.rightOuterStreamLeft)
  })

  it("stream-static joins in Update mode follow the same side rules", () => {
    expect(streaming(join(streamRelation, batchRelation, "left_outer"), "update")).toBeUndefined()
    expect(streaming(join(batchRelation, streamRelation, "right_outer"), "update")).toBeUndefined()
    expect(streaming(join(streamRelation, batchRelation, "left_anti"), "update")).toBeUndefined()
    expect(streaming(join(batchRelation, streamRelation, "left_outer"), "update")).toEqual(
      unsupported(M.leftStreamRight("LeftOuter"))
    )
  })
})

describe("checkForStreaming: stream-stream outer and semi joins", () => {
  const b = E.attribute("b", T.IntegerType)
  const timeWithWatermark: E.AttributeReference = { ...b, eventTimeDelayMs: 1000 }
  const relationWithWatermark = streamingRelation([timeWithWatermark])
  const ten = E.literal(10, T.IntegerType)

  const names: ReadonlyArray<readonly [P.JoinType, string]> = [
    ["left_outer", "LeftOuter"],
    ["right_outer", "RightOuter"],
    ["full_outer", "FullOuter"],
    ["left_semi", "LeftSemi"]
  ]
  for (const [joinType, name] of names) {
    describe(name, () => {
      it("Update mode: not supported", () => {
        const plan = join(streamRelation, streamRelation, joinType, binary("=", attribute, attribute))
        expect(streaming(plan, "update")).toEqual(unsupported(M.streamStreamJoinMode("Update")))
      })

      it("Complete mode: not supported", () => {
        const j = join(streamRelation, streamRelation, joinType, binary("=", attribute, attribute))
        expect(streaming(aggregate([], [countStar("d")], j), "complete")).toEqual(
          unsupported(M.streamStreamJoinMode("Complete"))
        )
      })

      // the attribute need not be watermarked on both sides
      it("join on attribute with left watermark: supported", () => {
        const plan = join(streamRelation, streamRelation, joinType, binary("=", attributeWithWatermark, attribute))
        expect(streaming(plan, "append")).toBeUndefined()
      })

      it("join on attribute with right watermark: supported", () => {
        const plan = join(streamRelation, streamRelation, joinType, binary("=", attribute, attributeWithWatermark))
        expect(streaming(plan, "append")).toBeUndefined()
      })

      it("join on non-watermarked attribute: not supported", () => {
        const plan = join(streamRelation, streamRelation, joinType, binary("=", attribute, attribute))
        expect(streaming(plan, "append")).toEqual(watermarkRequired(M.streamStreamWatermark(name)))
      })

      const [left, right] =
        joinType === "right_outer" ? [relationWithWatermark, streamRelation] : [streamRelation, relationWithWatermark]

      it("range condition yielding a state value watermark: supported", () => {
        const plan = join(left, right, joinType, binary(">", attribute, binary("+", timeWithWatermark, ten)))
        expect(streaming(plan, "append")).toBeUndefined()
      })

      it("insufficient range condition: not supported", () => {
        const plan = join(left, right, joinType, binary("<", attribute, binary("+", timeWithWatermark, ten)))
        expect(streaming(plan, "append")).toEqual(watermarkRequired(M.streamStreamWatermark(name)))
      })
    })
  }

  it("a null-safe equality is not an equi-join key for the watermark", () => {
    const plan = join(streamRelation, streamRelation, "left_outer", binary("<=>", attributeWithWatermark, attribute))
    expect(streaming(plan, "append")).toEqual(watermarkRequired(M.streamStreamWatermark("LeftOuter")))
  })

  it("stream-stream inner join needs no watermark in Append mode", () => {
    expect(streaming(join(streamRelation, streamRelation, "inner", binary("=", attribute, attribute)), "append")).toBe(
      undefined
    )
  })
})

describe("checkStreamingQueryGlobalWatermarkLimit", () => {
  const equiOnWatermark = binary("=", attributeWithWatermark, attribute)
  const ssJoin = (t: P.JoinType) => join(streamRelation, streamRelation, t, equiOnWatermark)
  const check = (plan: P.LogicalPlan, mode: OutputMode, enabled = true) =>
    described(checkStreamingQueryGlobalWatermarkLimit(wrap(plan), mode, { statefulOperatorCheckCorrectness: enabled }))

  // Spark 3.4 rejected stateful operators after outer joins; Spark 3.5+ propagates watermarks
  // between operators and only rejects stateful operators above Update/Complete aggregations.
  for (const t of ["inner", "left_outer", "right_outer"] as const) {
    it(`single ${t} join in Append mode: pass`, () => expect(check(ssJoin(t), "append")).toBeUndefined())

    it(`streaming aggregation after stream-stream ${t} join in Append mode: pass`, () => {
      expect(check(groupByA(ssJoin(t)), "append")).toBeUndefined()
    })

    for (const t2 of ["inner", "left_outer", "right_outer"] as const) {
      it(`stream-stream ${t2} after stream-stream ${t} join in Append mode: pass`, () => {
        expect(check(join(streamRelation, ssJoin(t), t2, equiOnWatermark), "append")).toBeUndefined()
      })
    }

    it(`deduplicate after stream-stream ${t} join in Append mode: pass`, () => {
      expect(check(deduplicate([attribute], ssJoin(t)), "append")).toBeUndefined()
    })
  }

  it("single streaming aggregation: pass in every mode", () => {
    for (const mode of MODES) expect(check(groupByA(streamRelation), mode)).toBeUndefined()
  })

  it("chained streaming aggregations: pass in Append, fail in Update and Complete", () => {
    const plan = aggregate([], [countStar("c")], groupByA(streamRelation))
    expect(check(plan, "append")).toBeUndefined()
    expect(check(plan, "update")).toEqual(unsupported(M.correctness))
    expect(check(plan, "complete")).toEqual(unsupported(M.correctness))
  })

  for (const t of ["inner", "left_outer", "right_outer"] as const) {
    it(`${t} join after streaming aggregation: pass in Append, fail in Update`, () => {
      const plan = join(streamRelation, groupByA(streamRelation), t)
      expect(check(plan, "append")).toBeUndefined()
      expect(check(plan, "update")).toEqual(unsupported(M.correctness))
    })
  }

  it("deduplicate after streaming aggregation: fails only when keyed on event time (and not Append)", () => {
    expect(check(deduplicate([attribute], groupByA(streamRelation)), "update")).toBeUndefined()
    expect(check(deduplicate([attributeWithWatermark], groupByA(streamRelation)), "update")).toEqual(
      unsupported(M.correctness)
    )
    expect(check(deduplicate([attributeWithWatermark], groupByA(streamRelation)), "append")).toBeUndefined()
  })

  it("dropDuplicatesWithinWatermark after an Update aggregation: fail", () => {
    expect(check(deduplicate([attribute], groupByA(streamRelation), true), "update")).toEqual(
      unsupported(M.correctness)
    )
  })

  it("streaming aggregation after deduplicate in Append mode: pass", () => {
    expect(check(groupByA(deduplicate([attribute], streamRelation)), "append")).toBeUndefined()
  })

  for (const t of ["inner", "left_outer", "right_outer"] as const) {
    it(`${t} join after deduplicate in Append mode: pass`, () => {
      expect(check(join(streamRelation, deduplicate([attribute], streamRelation), t, equiOnWatermark), "append")).toBe(
        undefined
      )
    })
  }

  it("disabled: Spark only logs a warning", () => {
    const plan = aggregate([], [countStar("c")], groupByA(streamRelation))
    expect(check(plan, "update", false)).toBeUndefined()
  })
})

describe("checkForStreaming: union, sort, limit, expressions", () => {
  binaryMatrix("union", (l, r) => union(l, r), "append", {
    streamBatch: unsupported(M.union),
    batchStream: unsupported(M.union)
  })

  it("union of three inputs mixing streaming and batch: not supported", () => {
    expect(streaming(union(streamRelation, streamRelation, batchRelation), "append")).toEqual(unsupported(M.union))
  })

  it("sort with stream relation: not supported; with batch relation: supported", () => {
    expect(streaming(sort(streamRelation), "append")).toEqual(unsupported(M.sort))
    expect(streaming(sort(streamRelation, false), "append")).toEqual(unsupported(M.sort))
    expect(streaming(sort(batchRelation), "append")).toBeUndefined()
  })

  it("sort after aggregation in Complete output mode: supported", () => {
    expect(streaming(sort(aggregate([], [countStar("c")], streamRelation)), "complete")).toBeUndefined()
  })

  it("sort before aggregation in Complete output mode: not supported", () => {
    expect(streaming(aggregate([], [countStar("c")], sort(streamRelation)), "complete")).toEqual(unsupported(M.sort))
  })

  it("sort over aggregated data in Update output mode: not supported", () => {
    expect(streaming(sort(aggregate([], [countStar("c")], streamRelation)), "update")).toEqual(unsupported(M.sort))
  })

  it("limit: not supported on a stream in Update mode only", () => {
    expect(streaming(limit(streamRelation), "update")).toEqual(unsupported(M.limitUpdate))
    expect(streaming(limit(groupByA(streamRelation)), "update")).toEqual(unsupported(M.limitUpdate))
    expect(streaming(limit(streamRelation), "append")).toBeUndefined()
    expect(streaming(limit(groupByA(streamRelation)), "complete")).toBeUndefined()
    expect(streaming(join(limit(batchRelation), streamRelation, "inner"), "update")).toBeUndefined()
  })

  it("MonotonicallyIncreasingID: not supported", () => {
    const id: E.ScalarFunction = {
      _tag: "ScalarFunction",
      name: "monotonically_increasing_id",
      args: [],
      dataType: T.LongType
    }
    const plan = project([{ _tag: "Alias", child: id, name: "id", exprId: E.newExprId() }], streamRelation)
    expect(streaming(plan, "append")).toEqual(unsupported(M.monotonicallyIncreasingId))
  })

  it("the first failing operator from the bottom wins", () => {
    // the union (below) fails before the sort (above), as Spark's foreachUp visits children first
    expect(streaming(sort(union(streamRelation, batchRelation)), "append")).toEqual(unsupported(M.union))
  })
})

// ---------------------------------------------------------------------------------------------
// [flat]MapGroupsWithState (Spark's TestFlatMapGroupsWithState cases), titles as Spark names them
// ---------------------------------------------------------------------------------------------

/** Spark's `att`: the long attribute its TestFlatMapGroupsWithState nodes use for everything. */
const att = E.attribute("a", T.LongType)

type GroupStateTimeout = P.FlatMapGroupsWithState["timeout"]

/**
 * Spark's `TestFlatMapGroupsWithState(null, att, att, Seq(att), Seq(att), att, null, funcMode,
 * isMapGroupsWithState, timeout, child)`; Spark's `null` timeout is `NoTimeout` here.
 */
const fmgws = (
  funcMode: "append" | "update",
  child: P.LogicalPlan,
  options: { readonly isMap?: boolean; readonly timeout?: GroupStateTimeout } = {}
): P.FlatMapGroupsWithState => ({
  _tag: "FlatMapGroupsWithState",
  planId: P.newPlanId(),
  fn: () => [],
  keyFn: (row) => row,
  keySchema: T.struct([T.field("value", T.LongType)]),
  keyIsStruct: false,
  stateSchema: T.struct([T.field("value", T.LongType)]),
  stateIsStruct: false,
  outputSchema: T.struct([T.field("value", T.LongType)]),
  outputIsStruct: false,
  output: [att],
  isMapGroupsWithState: options.isMap ?? false,
  outputMode: funcMode,
  timeout: options.timeout ?? "NoTimeout",
  initialState: undefined,
  child
})

const mgws = (child: P.LogicalPlan, timeout: GroupStateTimeout = "NoTimeout") =>
  fmgws("update", child, { isMap: true, timeout })

/** `Aggregate(Seq(attributeWithWatermark), aggExprs("c"), child)` */
const aggOnWatermark = (child: P.LogicalPlan): P.Aggregate =>
  aggregate([attributeWithWatermark], [countStar("c")], child)

/** `aggExprs(name)` = `Seq(Count("*").as(name))` over no grouping. */
const globalAgg = (name: string, child: P.LogicalPlan): P.Aggregate => aggregate([], [countStar(name)], child)

const GS = {
  modeMismatch: (funcMode: string, mode: string) =>
    `flatMapGroupsWithState in ${funcMode} mode is not supported with ${mode} output mode on a streaming DataFrame/Dataset`,
  updateWithAggregation:
    "flatMapGroupsWithState in update mode is not supported with aggregation on a streaming DataFrame/Dataset",
  mapMode: (mode: string) =>
    `mapGroupsWithState is not supported with ${mode} output mode on a streaming DataFrame/Dataset`,
  multipleMaps: "Multiple mapGroupsWithStates are not supported on a streaming DataFrames/Datasets",
  mixing: "Mixing mapGroupsWithStates and flatMapGroupsWithStates are not supported on a streaming DataFrames/Datasets",
  multipleFlatMaps:
    "Multiple flatMapGroupsWithStates are not supported when they are not all in append mode or the output mode is not append on a streaming DataFrames/Datasets",
  eventTimeTimeout:
    "Watermark must be specified in the query using '[Dataset/DataFrame].withWatermark()' for using event-time timeout in a [map|flatMap]GroupsWithState. Event-time timeout not supported without watermark."
}

/**
 * Spark's `testError`: the refusal's message holds each word (case-insensitively). Its
 * `assertNotSupportedInStreamingPlan` adds "streaming", "DataFrame", "Dataset" and "not supported"
 * (`streamingWords`); Spark's `getMessage` also prints the plan, whose node names supply
 * "streaming" for the event-time timeout refusal, so that case asks for its own words only.
 */
const expectSparkWords = (f: Failure | undefined, words: ReadonlyArray<string>, streamingWords = true) => {
  expect(f).toBeDefined()
  const msg = (f?.message ?? "").toLowerCase()
  for (const w of streamingWords ? [...words, "streaming", "DataFrame", "Dataset", "not supported"] : words) {
    expect(msg).toContain(w.toLowerCase())
  }
}

const MODE_NAMES: ReadonlyArray<readonly [OutputMode, string]> = [
  ["append", "Append"],
  ["update", "Update"],
  ["complete", "Complete"]
]

describe("UnsupportedOperationsSuite: [flat]MapGroupsWithState", () => {
  for (const [funcMode, name] of [
    ["append", "Append"],
    ["update", "Update"]
  ] as const) {
    it(`batch plan - flatMapGroupsWithState - flatMapGroupsWithState(${name}) on batch relation: supported`, () => {
      expect(checkForBatch(fmgws(funcMode, batchRelation))).toBeUndefined()
    })

    it(`batch plan - flatMapGroupsWithState - multiple flatMapGroupsWithState(${name})s on batch relation: supported`, () => {
      expect(checkForBatch(fmgws(funcMode, fmgws(funcMode, batchRelation)))).toBeUndefined()
    })
  }

  it("streaming plan - flatMapGroupsWithState - flatMapGroupsWithState(Update) on streaming relation without aggregation in update mode: supported", () => {
    expect(streaming(fmgws("update", streamRelation), "update")).toBeUndefined()
  })

  it("streaming plan - flatMapGroupsWithState - flatMapGroupsWithState(Update) on streaming relation without aggregation in append mode: not supported", () => {
    const f = streaming(fmgws("update", streamRelation), "append")
    expect(f).toEqual(unsupported(GS.modeMismatch("update", "Append")))
    expectSparkWords(f, ["flatMapGroupsWithState in update mode", "Append"])
  })

  it("streaming plan - flatMapGroupsWithState - flatMapGroupsWithState(Update) on streaming relation without aggregation in complete mode: not supported", () => {
    // disallowed by the aggregation check first, as in Spark
    const f = streaming(fmgws("update", streamRelation), "complete")
    expect(f).toEqual(unsupported(M.completeWithoutAggregation))
    expectSparkWords(f, ["Complete"])
  })

  for (const [mode, name] of MODE_NAMES) {
    it(`streaming plan - flatMapGroupsWithState - flatMapGroupsWithState(Update) on streaming relation with aggregation in ${name} mode: not supported`, () => {
      const f = streaming(fmgws("update", aggOnWatermark(streamRelation)), mode)
      expect(f).toEqual(unsupported(GS.updateWithAggregation))
      expectSparkWords(f, ["flatMapGroupsWithState in update mode", "with aggregation"])
    })
  }

  it("streaming plan - flatMapGroupsWithState - flatMapGroupsWithState(Append) on streaming relation without aggregation in append mode: supported", () => {
    expect(streaming(fmgws("append", streamRelation), "append")).toBeUndefined()
  })

  it("streaming plan - flatMapGroupsWithState - flatMapGroupsWithState(Append) on streaming relation without aggregation in update mode: not supported", () => {
    const f = streaming(fmgws("append", streamRelation), "update")
    expect(f).toEqual(unsupported(GS.modeMismatch("append", "Update")))
    expectSparkWords(f, ["flatMapGroupsWithState in append mode", "update"])
  })

  // Spark: "Only supported when `spark.sql.streaming.statefulOperator.correctnessCheck` is disabled."
  for (const [mode, name] of MODE_NAMES) {
    it(`streaming plan - flatMapGroupsWithState - flatMapGroupsWithState(Append) on streaming relation before aggregation in ${name} mode: supported`, () => {
      const plan = aggOnWatermark(fmgws("append", streamRelation))
      expect(streaming(plan, mode, { statefulOperatorCheckCorrectness: false })).toBeUndefined()
    })
  }

  it("streaming plan - flatMapGroupsWithState - flatMapGroupsWithState(Update) on streaming relation in complete mode: not supported", () => {
    // Spark's plan has an Append function despite the title; Complete fails on the missing aggregation
    const f = streaming(fmgws("append", streamRelation), "complete")
    expect(f).toEqual(unsupported(M.completeWithoutAggregation))
    expectSparkWords(f, ["Complete"])
  })

  for (const [funcMode, funcName] of [
    ["append", "Append"],
    ["update", "Update"]
  ] as const) {
    for (const [mode, name] of MODE_NAMES.slice(0, 2)) {
      it(`streaming plan - flatMapGroupsWithState - flatMapGroupsWithState(${funcName}) on batch relation inside streaming relation in ${name} output mode: supported`, () => {
        expect(streaming(fmgws(funcMode, batchRelation), mode)).toBeUndefined()
      })
    }
  }

  it("streaming plan - flatMapGroupsWithState - multiple flatMapGroupsWithStates on streaming relation and all are in append mode: supported", () => {
    const plan = fmgws("append", fmgws("append", streamRelation))
    expect(streaming(plan, "append", { statefulOperatorCheckCorrectness: false })).toBeUndefined()
  })

  it("streaming plan - flatMapGroupsWithState -  multiple flatMapGroupsWithStates on s streaming relation but some are not in append mode: not supported", () => {
    const f = streaming(fmgws("update", fmgws("append", streamRelation)), "append")
    expect(f).toEqual(unsupported(GS.multipleFlatMaps))
    expectSparkWords(f, ["multiple flatMapGroupsWithState", "append"])
  })

  it("streaming plan - mapGroupsWithState - mapGroupsWithState on streaming relation without aggregation in append mode: not supported", () => {
    const f = streaming(mgws(streamRelation), "append")
    expect(f).toEqual(unsupported(GS.mapMode("Append")))
    expectSparkWords(f, ["mapGroupsWithState", "append"])
  })

  it("streaming plan - mapGroupsWithState - mapGroupsWithState on streaming relation without aggregation in complete mode: not supported", () => {
    const f = streaming(mgws(streamRelation), "complete")
    expect(f).toEqual(unsupported(M.completeWithoutAggregation))
    expectSparkWords(f, ["Complete"])
  })

  it("streaming plan - mapGroupsWithState - multiple mapGroupsWithStates on streaming relation and all are in append mode: not supported", () => {
    const f = streaming(mgws(mgws(streamRelation)), "append")
    expect(f).toEqual(unsupported(GS.multipleMaps))
    expectSparkWords(f, ["multiple mapGroupsWithStates"])
  })

  it("streaming plan - mapGroupsWithState - mixing mapGroupsWithStates and flatMapGroupsWithStates on streaming relation: not supported", () => {
    const f = streaming(mgws(fmgws("update", streamRelation)), "append")
    expect(f).toEqual(unsupported(GS.mixing))
    expectSparkWords(f, ["Mixing mapGroupsWithStates and flatMapGroupsWithStates"])
  })

  it("streaming plan - mapGroupsWithState - mapGroupsWithState with event time timeout without watermark: not supported", () => {
    const f = streaming(mgws(streamRelation, "EventTimeTimeout"), "update")
    expect(f).toEqual(watermarkRequired(GS.eventTimeTimeout))
    expectSparkWords(f, ["watermark", "DataFrame", "Dataset", "not supported"], false)
  })

  it("streaming plan - mapGroupsWithState - mapGroupsWithState with event time timeout with watermark: supported", () => {
    expect(streaming(mgws(streamingRelation([attributeWithWatermark]), "EventTimeTimeout"), "update")).toBeUndefined()
  })

  it("a streaming initial state: not supported (Spark's checkForStreaming)", () => {
    const plan: P.FlatMapGroupsWithState = {
      ...fmgws("update", streamRelation),
      initialState: streamingRelation([att])
    }
    expect(streaming(plan, "update")).toEqual(
      unsupported(
        "Non-streaming DataFrame/Dataset is not supported as the initial state in [flatMap|map]GroupsWithState operation on a streaming DataFrame/Dataset"
      )
    )
    const batchInitial: P.FlatMapGroupsWithState = {
      ...fmgws("update", streamRelation),
      initialState: localRelation([att], false)
    }
    expect(streaming(batchInitial, "update")).toBeUndefined()
  })
})

// ---------------------------------------------------------------------------------------------
// Spark 4's errors: class and message words (Spark's testError / checkError)
// ---------------------------------------------------------------------------------------------

describe("UnsupportedOperationsSuite: error classes", () => {
  const errorClassOf = (plan: P.LogicalPlan, mode: OutputMode) => checkForStreaming(wrap(plan), mode)?.errorClass

  it("streaming plan - aggregate - streaming aggregations without watermark in append mode: not supported (STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION)", () => {
    expect(errorClassOf(globalAgg("d", streamRelation), "append")).toBe("STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION")
    // Spark's parameters: outputMode "append", operation "streaming aggregations without watermark"
    expect(streaming(globalAgg("d", streamRelation), "append")?.message).toContain(
      "Invalid streaming output mode: append. This output mode is not supported for streaming aggregations without watermark on streaming DataFrames/DataSets."
    )
  })

  it("streaming plan - Append output mode - aggregation without watermark: not supported (STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION)", () => {
    expect(errorClassOf(groupByA(streamRelation), "append")).toBe("STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION")
  })

  it("streaming plan - Complete output mode - no aggregation: not supported (STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION)", () => {
    const noAgg = filter(binary(">", attribute, E.literal(1, T.IntegerType)), streamRelation)
    expect(errorClassOf(noAgg, "complete")).toBe("STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION")
    expect(streaming(noAgg, "complete")?.message).toContain(
      "Invalid streaming output mode: complete. This output mode is not supported for no streaming aggregations on streaming DataFrames/DataSets."
    )
  })

  it("the other refusals are Spark's _LEGACY_ERROR_TEMP_3102 (throwError)", () => {
    expect(errorClassOf(globalAgg("c", sort(streamRelation)), "complete")).toBe("_LEGACY_ERROR_TEMP_3102")
    expect(errorClassOf(union(streamRelation, batchRelation), "append")).toBe("_LEGACY_ERROR_TEMP_3102")
    expect(errorClassOf(mgws(mgws(streamRelation)), "append")).toBe("_LEGACY_ERROR_TEMP_3102")
    expect(checkForBatch(streamRelation)?.errorClass).toBe("_LEGACY_ERROR_TEMP_3102")
    expect(checkForStreaming(batchRelation, "append")?.errorClass).toBe("_LEGACY_ERROR_TEMP_3102")
    expect(
      checkStreamingQueryGlobalWatermarkLimit(globalAgg("c", globalAgg("d", streamRelation)), "update")?.errorClass
    ).toBe("_LEGACY_ERROR_TEMP_3102")
  })

  it("Spark's words in each refusal of the suite's plain cases", () => {
    // assertNotSupportedInBatchPlan asks for its own words only
    expectSparkWords(described(checkForBatch(streamRelation)), ["with streaming source", "start"], false)
    expectSparkWords(
      described(checkForBatch(project([attribute], streamRelation))),
      ["with streaming source", "start"],
      false
    )
    expect(checkForStreaming(project([attribute], batchRelation), "append")?.message).toContain(
      "without streaming source"
    )
    expectSparkWords(streaming(aggregate([], [countDistinct("c")], streamRelation), "complete"), [
      "distinct aggregation"
    ])
    expectSparkWords(streaming(join(streamRelation, streamRelation, "inner"), "update"), [
      "is not supported in Update output mode"
    ])
    expectSparkWords(streaming(join(streamRelation, batchRelation, "full_outer"), "append"), ["FullOuter join"])
    expectSparkWords(streaming(join(batchRelation, streamRelation, "full_outer"), "append"), ["FullOuter join"])
    expectSparkWords(streaming(join(streamRelation, streamRelation, "full_outer"), "append"), ["FullOuter join"])
    for (const [t, name] of [
      ["left_outer", "LeftOuter join"],
      ["left_semi", "LeftSemi join"],
      ["left_anti", "LeftAnti join"]
    ] as const) {
      expectSparkWords(streaming(join(batchRelation, streamRelation, t), "append"), [name])
      expectSparkWords(streaming(join(streamRelation, streamRelation, t), "append"), [name])
    }
    expectSparkWords(streaming(join(streamRelation, batchRelation, "right_outer"), "append"), ["RightOuter join"])
    expectSparkWords(streaming(join(streamRelation, streamRelation, "right_outer"), "append"), ["RightOuter join"])
    expectSparkWords(streaming(union(streamRelation, batchRelation), "append"), ["union"])
    expectSparkWords(streaming(sort(streamRelation), "append"), ["sort"])
    expectSparkWords(streaming(globalAgg("c", sort(streamRelation)), "complete"), ["sort", "aggregat", "complete"])
    expectSparkWords(streaming(sort(globalAgg("c", streamRelation)), "update"), ["sort", "aggregat", "complete"])
  })
})

// ---------------------------------------------------------------------------------------------
// Spark 4's global watermark limit cases, by Spark's names
// ---------------------------------------------------------------------------------------------

describe("UnsupportedOperationsSuite: Global watermark limit", () => {
  const gw = (plan: P.LogicalPlan, mode: OutputMode) =>
    described(checkStreamingQueryGlobalWatermarkLimit(wrap(plan), mode, { statefulOperatorCheckCorrectness: true }))
  const pass = (title: string, plan: () => P.LogicalPlan, mode: OutputMode) =>
    it(`Global watermark limit - ${title}`, () => expect(gw(plan(), mode)).toBeUndefined())
  const fail = (title: string, plan: () => P.LogicalPlan, mode: OutputMode) =>
    it(`Global watermark limit - ${title}`, () => {
      const f = gw(plan(), mode)
      expect(f).toEqual(unsupported(M.correctness))
      expect(f?.message).toContain("Detected pattern of possible 'correctness' issue")
    })

  const onWatermark = binary("=", attributeWithWatermark, attribute)
  const timeInterval = binary(
    "and",
    binary("=", attribute, attribute),
    binary(">", attributeWithWatermark, binary("+", attributeWithWatermark, E.literal(10, T.IntegerType)))
  )

  // multi-aggregations only supported in Append mode
  pass(
    "aggregate - multiple streaming aggregations - append",
    () => globalAgg("c", globalAgg("d", streamRelation)),
    "append"
  )
  fail(
    "aggregate - multiple streaming aggregations - update",
    () => globalAgg("c", globalAgg("d", streamRelation)),
    "update"
  )
  fail(
    "aggregate - multiple streaming aggregations - complete",
    () => globalAgg("c", globalAgg("d", streamRelation)),
    "complete"
  )

  pass(
    "flatMapGroupsWithState - flatMapGroupsWithState(Append) on streaming relation after aggregation in Append mode",
    () => fmgws("append", aggOnWatermark(streamRelation)),
    "append"
  )
  // aggregation not in Append mode followed by any stateful operator is disallowed
  fail(
    "flatMapGroupsWithState - flatMapGroupsWithState(Append) on streaming relation after aggregation in Update mode",
    () => fmgws("append", aggOnWatermark(streamRelation)),
    "update"
  )
  fail(
    "mapGroupsWithState - mapGroupsWithState on streaming relation after aggregation in Update mode",
    () => mgws(aggOnWatermark(streamRelation)),
    "update"
  )

  // [flat]MapGroupsWithState with an event-time timeout followed by any stateful operator
  fail(
    "multiple stateful ops - FlatMapGroupsWithState followed by agg",
    () => globalAgg("c", fmgws("append", streamRelation, { timeout: "EventTimeTimeout" })),
    "append"
  )
  pass(
    "multiple stateful ops - FlatMapGroupsWithState(process time) followed by agg",
    () => globalAgg("c", fmgws("append", streamRelation, { timeout: "ProcessingTimeTimeout" })),
    "append"
  )
  fail(
    "multiple stateful ops - MapGroupsWithState followed by agg",
    () => globalAgg("c", mgws(streamRelation, "EventTimeTimeout")),
    "append"
  )
  pass(
    "multiple stateful ops - MapGroupsWithState(process time) followed by agg",
    () => globalAgg("c", mgws(streamRelation, "ProcessingTimeTimeout")),
    "append"
  )

  // stream-stream joins (time interval or equality) can be followed by any stateful operator
  pass(
    "multiple stateful ops - stream-stream time-interval join followed by agg",
    () => globalAgg("c", join(streamRelation, streamRelation, "inner", timeInterval)),
    "append"
  )
  pass(
    "multiple stateful ops - stream-stream equality join followed by agg",
    () => globalAgg("c", join(streamRelation, streamRelation, "inner", binary("=", attribute, attribute))),
    "append"
  )

  // deduplication is stateful for this check only when keyed on an event-time column
  fail(
    "multiple stateful ops - FlatMapGroupsWithState followed by dedup (with event-time)",
    () => deduplicate([attributeWithWatermark], fmgws("append", streamRelation, { timeout: "EventTimeTimeout" })),
    "append"
  )
  pass(
    "multiple stateful ops - FlatMapGroupsWithState followed by dedup (without event-time)",
    () => deduplicate([att], fmgws("append", streamRelation)),
    "append"
  )
  for (const [mode, name] of MODE_NAMES.slice(1)) {
    fail(
      `multiple stateful ops - aggregation(${name} mode) followed by dedup (with event-time)`,
      () => deduplicate([attributeWithWatermark], aggOnWatermark(streamRelation)),
      mode
    )
    pass(
      `multiple stateful ops - aggregation(${name} mode) followed by dedup (without event-time)`,
      () => deduplicate([att], aggOnWatermark(streamRelation)),
      mode
    )
  }
  pass(
    "multiple stateful ops - stream-stream time interval join followed by dedup (with event-time)",
    () => deduplicate([attributeWithWatermark], join(streamRelation, streamRelation, "inner", timeInterval)),
    "append"
  )
  pass(
    "multiple stateful ops - stream-stream time interval join followed by dedup (without event-time)",
    () => deduplicate([att], join(streamRelation, streamRelation, "inner", timeInterval)),
    "append"
  )

  const joinTypes: ReadonlyArray<readonly [P.JoinType, string]> = [
    ["inner", "Inner"],
    ["left_outer", "LeftOuter"],
    ["right_outer", "RightOuter"],
    ["full_outer", "FullOuter"]
  ]
  for (const [t, name] of joinTypes) {
    pass(
      `streaming aggregation after stream-stream ${name} join keyed on time interval in Append mode are not supported`,
      () =>
        groupByA(
          join(
            streamRelation,
            streamRelation,
            t,
            binary(
              "and",
              onWatermark,
              binary("<", attributeWithWatermark, binary("+", attributeWithWatermark, E.literal(10, T.IntegerType)))
            )
          )
        ),
      "append"
    )
    // Spark's case joins RightOuter whatever the loop's join type
    pass(
      `single ${name} join in Append mode`,
      () => join(streamRelation, streamRelation, "right_outer", onWatermark),
      "append"
    )
    pass(
      `streaming aggregation after stream-stream ${name} join keyed on time equality in Append mode are supported`,
      () => groupByA(join(streamRelation, streamRelation, t, onWatermark)),
      "append"
    )
    for (const [t2, name2] of joinTypes.slice(0, 3)) {
      pass(
        `streaming-stream ${name2} after stream-stream ${name} join in Append mode`,
        () => join(streamRelation, join(streamRelation, streamRelation, t, onWatermark), t2, onWatermark),
        "append"
      )
    }
    pass(
      `FlatMapGroupsWithState after stream-stream ${name} join in Append mode`,
      () => fmgws("append", join(streamRelation, streamRelation, t, onWatermark)),
      "append"
    )
    pass(
      `deduplicate after stream-stream ${name} join in Append mode`,
      () => deduplicate([attribute], join(streamRelation, streamRelation, t, onWatermark)),
      "append"
    )
  }

  // streaming aggregation
  pass("single streaming aggregation in Append mode", () => groupByA(streamRelation), "append")
  pass("chained streaming aggregations in Append mode", () => globalAgg("count", groupByA(streamRelation)), "append")
  for (const [t, name] of joinTypes.slice(0, 3)) {
    pass(
      `${name} join after streaming aggregation in Append mode`,
      () => join(streamRelation, groupByA(streamRelation), t),
      "append"
    )
  }
  pass(
    "deduplicate after streaming aggregation in Append mode",
    () => deduplicate([attribute], groupByA(streamRelation)),
    "append"
  )
  pass(
    "FlatMapGroupsWithState after streaming aggregation in Append mode",
    () => fmgws("append", groupByA(streamRelation)),
    "append"
  )

  // FlatMapGroupsWithState
  pass("single FlatMapGroupsWithState in Append mode", () => fmgws("append", streamRelation), "append")
  fail(
    "streaming aggregation after FlatMapGroupsWithState in Append mode",
    () => aggregate([att], [countStar("count")], fmgws("append", streamRelation, { timeout: "EventTimeTimeout" })),
    "append"
  )
  for (const [t, name] of joinTypes.slice(0, 3)) {
    fail(
      `stream-stream ${name} after FlatMapGroupsWithState in Append mode`,
      () => join(streamRelation, fmgws("append", streamRelation, { timeout: "EventTimeTimeout" }), t, onWatermark),
      "append"
    )
  }
  fail(
    "FlatMapGroupsWithState after FlatMapGroupsWithState in Append mode",
    () => fmgws("append", fmgws("append", streamRelation, { timeout: "EventTimeTimeout" })),
    "append"
  )
  pass(
    "deduplicate after FlatMapGroupsWithState in Append mode",
    () => deduplicate([attribute], fmgws("append", streamRelation)),
    "append"
  )

  // deduplicate
  pass(
    "streaming aggregation after deduplicate in Append mode",
    () => groupByA(deduplicate([attribute], streamRelation)),
    "append"
  )
  for (const [t, name] of joinTypes.slice(0, 3)) {
    pass(
      `${name} join after deduplicate in Append mode`,
      () => join(streamRelation, deduplicate([attribute], streamRelation), t, onWatermark),
      "append"
    )
  }
  pass(
    "FlatMapGroupsWithState after deduplicate in Append mode",
    () => fmgws("append", deduplicate([attribute], streamRelation)),
    "append"
  )
})

// ---------------------------------------------------------------------------------------------
// Analyzed plans: windows, session windows, watermarks
// ---------------------------------------------------------------------------------------------

const sourceAttr = (name: string, t: T.DataType, id: number): E.AttributeReference => ({
  _tag: "AttributeReference",
  name,
  dataType: t,
  nullable: true,
  exprId: id,
  qualifier: []
})

const events = streamingRelation([
  sourceAttr("ts", T.TimestampType, 990001),
  sourceAttr("user", T.StringType, 990002),
  sourceAttr("ts2", T.TimestampType, 990003)
])

const withWatermark = (child: P.LogicalPlan, column = "ts"): P.EventTimeWatermark => ({
  _tag: "EventTimeWatermark",
  planId: P.newPlanId(),
  eventTime: col(column).expr,
  delayMs: 10_000,
  child
})

const groupBy = (
  groups: ReadonlyArray<Column<unknown, string>>,
  aggs: ReadonlyArray<Column<unknown, string>>,
  child: P.LogicalPlan
): P.Aggregate => ({
  _tag: "Aggregate",
  planId: P.newPlanId(),
  groupingExpressions: groups.map((c) => c.expr),
  aggregateExpressions: aggs.map((c) => c.expr),
  child
})

const analyzed = (p: P.LogicalPlan): P.LogicalPlan => {
  const r = analyze(p, emptyCatalog, { caseSensitive: false })
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

const check = (p: P.LogicalPlan, mode: OutputMode) => described(checkForStreaming(analyzed(p), mode))

describe("checkForStreaming: analyzed windowed aggregations", () => {
  const windowed = (child: P.LogicalPlan) =>
    groupBy(
      [F.window("ts", "10 seconds"), col("user")],
      [F.window("ts", "10 seconds"), col("user"), F.count("*")],
      child
    )

  it("window over the watermark column: Append supported", () => {
    expect(check(windowed(withWatermark(events)), "append")).toBeUndefined()
    expect(check(windowed(withWatermark(events)), "update")).toBeUndefined()
    expect(check(windowed(withWatermark(events)), "complete")).toBeUndefined()
  })

  it("window without a watermark: Append not supported", () => {
    expect(check(windowed(events), "append")).toEqual(watermarkRequired(M.appendWithoutWatermark))
  })

  it("window over a column other than the watermark's: Append not supported", () => {
    expect(check(windowed(withWatermark(events, "ts2")), "append")).toEqual(watermarkRequired(M.appendWithoutWatermark))
  })

  it("grouping on the watermark column itself: Append supported", () => {
    expect(check(groupBy([col("ts")], [col("ts"), F.count("*")], withWatermark(events)), "append")).toBeUndefined()
  })

  it("grouping on other columns only: Append not supported even with a watermark", () => {
    expect(check(groupBy([col("user")], [col("user"), F.count("*")], withWatermark(events)), "append")).toEqual(
      watermarkRequired(M.appendWithoutWatermark)
    )
  })

  it("the watermark survives a projection below the aggregation", () => {
    const projected = project([col("ts").expr, col("user").expr], withWatermark(events))
    expect(check(windowed(projected), "append")).toBeUndefined()
  })

  it("sorting the windowed counts: only in Complete mode", () => {
    const sorted: P.Sort = {
      _tag: "Sort",
      planId: P.newPlanId(),
      order: [col("user").asc().expr as E.SortOrder],
      global: true,
      child: windowed(withWatermark(events))
    }
    expect(check(sorted, "complete")).toBeUndefined()
    expect(check(sorted, "append")).toEqual(unsupported(M.sort))
    expect(check(sorted, "update")).toEqual(unsupported(M.sort))
  })
})

describe("checkForStreaming: analyzed session windows", () => {
  const sessions = (child: P.LogicalPlan) =>
    groupBy(
      [F.session_window("ts", "5 minutes"), col("user")],
      [F.session_window("ts", "5 minutes"), col("user"), F.count("*")],
      child
    )

  it("Append with a watermark on the time column: supported", () => {
    expect(check(sessions(withWatermark(events)), "append")).toBeUndefined()
  })

  it("Append without watermark: not supported", () => {
    expect(check(sessions(events), "append")).toEqual(watermarkRequired(M.appendWithoutWatermark))
  })

  it("Update: not supported for session windows", () => {
    expect(check(sessions(withWatermark(events)), "update")).toEqual(unsupported(M.updateSessionWindow))
    expect(check(sessions(events), "update")).toEqual(unsupported(M.updateSessionWindow))
  })

  it("Complete: supported", () => {
    expect(check(sessions(events), "complete")).toBeUndefined()
  })
})

describe("checkForStreaming: analyzed deduplication and joins", () => {
  const dedupWithin = (child: P.LogicalPlan): P.Deduplicate => ({
    _tag: "Deduplicate",
    planId: P.newPlanId(),
    columnNames: ["user"],
    keys: undefined,
    withinWatermark: true,
    child
  })

  it("dropDuplicatesWithinWatermark after withWatermark: supported", () => {
    expect(check(dedupWithin(withWatermark(events)), "append")).toBeUndefined()
  })

  it("dropDuplicatesWithinWatermark without withWatermark: not supported", () => {
    expect(check(dedupWithin(events), "append")).toEqual(watermarkRequired(M.dedupWithinWatermarkStreaming))
  })

  const clicks = streamingRelation([sourceAttr("ck", T.StringType, 990011), sourceAttr("ct", T.TimestampType, 990012)])
  const views = streamingRelation([sourceAttr("vk", T.StringType, 990021), sourceAttr("vt", T.TimestampType, 990022)])
  const ssJoin = (
    joinType: P.JoinType,
    condition: Column<unknown, string>,
    left: P.LogicalPlan,
    right: P.LogicalPlan
  ) =>
    ({
      _tag: "Join",
      planId: P.newPlanId(),
      left,
      right,
      joinType,
      condition: condition.expr,
      usingColumns: undefined
    }) as P.Join

  it("left outer join with a time-range condition and watermarks: supported", () => {
    const cond = col("ck")
      .eq(col("vk"))
      .and(col("ct").geq(col("vt")))
    expect(check(ssJoin("left_outer", cond, withWatermark(clicks, "ct"), withWatermark(views, "vt")), "append")).toBe(
      undefined
    )
  })

  it("left outer join with the range the wrong way round: not supported", () => {
    const cond = col("ck")
      .eq(col("vk"))
      .and(col("ct").leq(col("vt")))
    expect(
      check(ssJoin("left_outer", cond, withWatermark(clicks, "ct"), withWatermark(views, "vt")), "append")
    ).toEqual(watermarkRequired(M.streamStreamWatermark("LeftOuter")))
  })

  it("left outer join on keys only, without watermarks: not supported", () => {
    expect(check(ssJoin("left_outer", col("ck").eq(col("vk")), clicks, views), "append")).toEqual(
      watermarkRequired(M.streamStreamWatermark("LeftOuter"))
    )
  })

  it("full outer join on the event-time columns: supported", () => {
    const cond = col("ck")
      .eq(col("vk"))
      .and(col("ct").eq(col("vt")))
    expect(check(ssJoin("full_outer", cond, withWatermark(clicks, "ct"), withWatermark(views, "vt")), "append")).toBe(
      undefined
    )
  })

  it("a time range through casts to seconds: supported", () => {
    const cond = col("ck")
      .eq(col("vk"))
      .and(col("ct").cast("long").geq(col("vt").cast("long")))
      .and(col("ct").cast("long").leq(col("vt").cast("long").plus(60)))
    expect(check(ssJoin("left_outer", cond, clicks, withWatermark(views, "vt")), "append")).toBeUndefined()
  })

  it("stream-stream left anti join: not supported", () => {
    expect(check(ssJoin("left_anti", col("ck").eq(col("vk")), clicks, views), "append")).toEqual(
      unsupported(M.leftAntiStreamRight)
    )
  })
})

// ---------------------------------------------------------------------------------------------
// StreamingJoinHelper
// ---------------------------------------------------------------------------------------------

describe("stateValueWatermark (Spark's StreamingJoinHelper.getStateValueWatermark)", () => {
  const lt = sourceAttr("lt", T.LongType, 990101)
  const lt2 = sourceAttr("lt2", T.LongType, 990102)
  const rtPlain = sourceAttr("rt", T.LongType, 990201)
  const rt: E.AttributeReference = { ...rtPlain, eventTimeDelayMs: 5000 }
  const ltWm: E.AttributeReference = { ...lt, eventTimeDelayMs: 5000 }
  const n = (v: number) => E.literal(v, T.LongType)
  const W = 60_000

  it("leftTime > rightTime + 10 s: the left state keeps rows after W + 10 s", () => {
    expect(stateValueWatermark([lt], [rt], binary(">", lt, binary("+", rt, n(10))), W)).toBe(70_000)
  })

  it("a non-strict bound is one millisecond less", () => {
    expect(stateValueWatermark([lt], [rt], binary(">=", lt, binary("+", rt, n(10))), W)).toBe(69_999)
    expect(stateValueWatermark([lt], [rt], binary("<=", binary("+", rt, n(10)), lt), W)).toBe(69_999)
  })

  it("the bound the other way gives no watermark", () => {
    expect(stateValueWatermark([lt], [rt], binary("<", lt, binary("+", rt, n(10))), W)).toBeUndefined()
  })

  it("a BETWEEN-style range: each side gets its own bound", () => {
    // lt >= rt - 5 AND lt <= rt + 10
    const cond = binary("and", binary(">=", lt, binary("-", rt, n(5))), binary("<=", lt, binary("+", rtPlain, n(10))))
    expect(stateValueWatermark([lt], [rt], cond, W)).toBe(54_999)
    const cond2 = binary(
      "and",
      binary(">=", ltWm, binary("-", rtPlain, n(5))),
      binary("<=", ltWm, binary("+", rtPlain, n(10)))
    )
    expect(stateValueWatermark([rtPlain], [ltWm], cond2, W)).toBe(49_999)
  })

  it("the smallest bound of several conjuncts", () => {
    const cond = binary("and", binary(">", lt, binary("+", rt, n(10))), binary(">", lt, binary("+", rt, n(3))))
    expect(stateValueWatermark([lt], [rt], cond, W)).toBe(63_000)
  })

  it("interval literals count by days and microseconds; months are refused", () => {
    const iv = (months: number, days: number, micros: number) =>
      E.literal({ months, days, micros }, T.CalendarIntervalType)
    expect(stateValueWatermark([lt], [rt], binary(">", lt, binary("+", rt, iv(0, 0, 10_000_000))), W)).toBe(70_000)
    expect(stateValueWatermark([lt], [rt], binary(">", lt, binary("-", rt, iv(0, 1, 0))), W)).toBe(60_000 - 86_400_000)
    expect(stateValueWatermark([lt], [rt], binary(">", lt, binary("+", rt, iv(1, 0, 0))), W)).toBeUndefined()
  })

  it("casts to numbers are looked through", () => {
    const cond = binary(">", { _tag: "Cast", child: lt, to: T.DoubleType }, binary("+", rt, lit(2.5).expr))
    expect(stateValueWatermark([lt], [rt], cond, W)).toBe(62_500)
  })

  it("no answer: two attributes of one side, other operators, no watermark, no condition", () => {
    expect(stateValueWatermark([lt, lt2], [rt], binary(">", lt, binary("+", rt, lt2)), W)).toBeUndefined()
    expect(stateValueWatermark([lt], [rt], binary(">", lt, binary("*", rt, n(2))), W)).toBeUndefined()
    expect(stateValueWatermark([lt], [rtPlain], binary(">", lt, rtPlain), W)).toBeUndefined()
    expect(stateValueWatermark([lt], [rt], undefined, W)).toBeUndefined()
    expect(stateValueWatermark([lt], [rt], binary(">", lt, rt), undefined)).toBeUndefined()
    expect(stateValueWatermark([lt], [rt], binary("=", lt, rt), W)).toBeUndefined()
  })
})

describe("isWatermarkInJoinKeys", () => {
  const k1 = sourceAttr("k1", T.IntegerType, 990301)
  const t1: E.AttributeReference = { ...sourceAttr("t1", T.TimestampType, 990302), eventTimeDelayMs: 1000 }
  const k2 = sourceAttr("k2", T.IntegerType, 990401)
  const t2 = sourceAttr("t2", T.TimestampType, 990402)
  const l = streamingRelation([k1, t1])
  const r = streamingRelation([k2, t2])

  it("an equi-join key with a watermark, on either side of the equality", () => {
    expect(isWatermarkInJoinKeys(join(l, r, "left_outer", binary("=", t1, t2)))).toBe(true)
    expect(isWatermarkInJoinKeys(join(l, r, "left_outer", binary("=", t2, t1)))).toBe(true)
    expect(
      isWatermarkInJoinKeys(join(l, r, "left_outer", binary("and", binary("=", k1, k2), binary("=", t1, t2))))
    ).toBe(true)
  })

  it("no watermark in the keys, a non-equality, an expression key", () => {
    expect(isWatermarkInJoinKeys(join(l, r, "left_outer", binary("=", k1, k2)))).toBe(false)
    expect(isWatermarkInJoinKeys(join(l, r, "left_outer", binary(">=", t1, t2)))).toBe(false)
    expect(isWatermarkInJoinKeys(join(l, r, "left_outer", binary("<=>", t1, t2)))).toBe(false)
    expect(isWatermarkInJoinKeys(join(l, r, "left_outer", undefined))).toBe(false)
    const castKey: E.Expression = { _tag: "Cast", child: t1, to: T.LongType }
    expect(isWatermarkInJoinKeys(join(l, r, "left_outer", binary("=", castKey, { ...castKey, child: t2 })))).toBe(false)
  })
})

// ---------------------------------------------------------------------------------------------
// Continuous processing
// ---------------------------------------------------------------------------------------------

describe("checkForContinuous", () => {
  const continuous = (p: P.LogicalPlan, mode: OutputMode = "append") => described(checkForContinuous(p, mode))

  it("TypedFilter: supported", () => {
    const plan: P.TypedFilter = {
      _tag: "TypedFilter",
      planId: P.newPlanId(),
      predicate: () => true,
      child: streamRelation
    }
    expect(continuous(plan)).toBeUndefined()
  })

  it("project, filter, map, alias over a streaming relation: supported", () => {
    const mapped: P.MapElements = {
      _tag: "MapElements",
      planId: P.newPlanId(),
      fn: (x) => x,
      flat: true,
      schema: T.struct([T.field("a", T.IntegerType)]),
      wrapValue: false,
      output: [attribute],
      child: {
        _tag: "SubqueryAlias",
        planId: P.newPlanId(),
        alias: "t",
        child: project([attribute], filter(binary(">", attribute, E.literal(0, T.IntegerType)), streamRelation))
      }
    }
    expect(continuous(mapped)).toBeUndefined()
    expect(continuous(project([attribute], localRelation([attribute], true)))).toBeUndefined()
  })

  it("the streaming checks come first", () => {
    expect(continuous(project([attribute], streamRelation), "complete")).toEqual(
      unsupported(M.completeWithoutAggregation)
    )
    expect(continuous(project([attribute], batchRelation))).toEqual(unsupported(M.noStreamingSource))
  })

  it("stateful and global operators: not supported, named as in Spark's plan", () => {
    expect(continuous(groupByA(streamRelation), "update")).toEqual(unsupported(M.continuous("Aggregate")))
    expect(continuous(limit(streamRelation))).toEqual(unsupported(M.continuous("LocalLimit")))
    expect(continuous(distinct(streamRelation))).toEqual(unsupported(M.continuous("Deduplicate")))
    expect(continuous(deduplicate([attribute], streamRelation))).toEqual(unsupported(M.continuous("Deduplicate")))
    // a union of streams runs continuously in tributary (Spark refuses it)
    expect(continuous(union(streamRelation, streamRelation))).toBeUndefined()
    expect(continuous(join(streamRelation, streamRelation, "inner"))).toEqual(unsupported(M.continuous("Join")))
    const wm: P.EventTimeWatermark = {
      _tag: "EventTimeWatermark",
      planId: P.newPlanId(),
      eventTime: attribute,
      delayMs: 1000,
      child: streamRelation
    }
    expect(continuous(wm)).toEqual(unsupported(M.continuous("EventTimeWatermark")))
  })

  it("a static side of a join fails at its relation, which the walk meets first", () => {
    expect(continuous(join(streamRelation, batchRelation, "inner"))).toEqual(unsupported(M.continuous("LocalRelation")))
  })

  it("generators: explode runs; a tumbling window is a projection, a sliding one an Expand", () => {
    const arr = E.attribute("arr", T.array(T.IntegerType))
    const ts = E.attribute("ts", T.TimestampType)
    const input = streamingRelation([arr, ts])
    const explode: P.Generate = {
      _tag: "Generate",
      planId: P.newPlanId(),
      generator: { _tag: "Explode", child: arr, outer: false, position: false },
      generatorOutput: [E.attribute("col", T.IntegerType)],
      child: input
    }
    // explode runs continuously in tributary (Spark refuses its Generate)
    expect(continuous(explode)).toBeUndefined()
    const window = (slideMs: number): P.Generate => ({
      _tag: "Generate",
      planId: P.newPlanId(),
      generator: { _tag: "TimeWindow", timeColumn: ts, windowMs: 10_000, slideMs, startMs: 0 },
      generatorOutput: [E.attribute("window", T.WindowType)],
      child: input
    })
    expect(continuous(window(10_000))).toBeUndefined()
    expect(continuous(window(5_000))).toEqual(unsupported(M.continuous("Expand")))
  })

  it("current time: not supported", () => {
    const now = project([F.current_timestamp().expr], streamRelation)
    expect(continuous(now)).toEqual(unsupported(M.continuousCurrentTime))
    const filtered = filter(binary("<", attribute, { _tag: "CurrentTimestamp" }), streamRelation)
    expect(continuous(filtered)).toEqual(unsupported(M.continuousCurrentTime))
  })
})

// ---------------------------------------------------------------------------------------------
// Through the public API: writeStream.start() and collect() run these checks on analyzed plans
// ---------------------------------------------------------------------------------------------

describe("UnsupportedOperationsSuite through writeStream.start() and collect()", () => {
  const startError = <R>(df: DataFrame<R>, mode: OutputMode) =>
    Effect.flip(df.writeStream.outputMode(mode).format("noop").start())

  effectIt.effect("streaming plan - sort with stream relation: not supported", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Int)
      const error = yield* startError(input.toDF().sort("value"), "append")
      expect(error._tag).toBe("AnalysisError")
      expect({ reason: (error as AnalysisError).reason, message: error.message }).toEqual(unsupported(M.sort))
    }).pipe(Effect.provide(Session.layer()))
  )

  effectIt.effect("streaming plan - Append output mode - aggregation without watermark: not supported", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Int)
      const error = (yield* startError(input.toDF().groupBy("value").agg(F.count("*")), "append")) as AnalysisError
      expect(error.errorClass).toBe("STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION")
      expect({ reason: error.reason, message: error.message }).toEqual(watermarkRequired(M.appendWithoutWatermark))
    }).pipe(Effect.provide(Session.layer()))
  )

  effectIt.effect("streaming plan - Complete output mode - no aggregation: not supported", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Int)
      const error = (yield* startError(input.toDF().where(F.col("value").gt(1)), "complete")) as AnalysisError
      expect({ reason: error.reason, message: error.message }).toEqual(unsupported(M.completeWithoutAggregation))
    }).pipe(Effect.provide(Session.layer()))
  )

  effectIt.effect("streaming plan - limit in Update output mode: not supported", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Int)
      const error = (yield* startError(
        input.toDF().groupBy("value").agg(F.count("*")).limit(1),
        "update"
      )) as AnalysisError
      expect({ reason: error.reason, message: error.message }).toEqual(unsupported(M.limitUpdate))
    }).pipe(Effect.provide(Session.layer()))
  )

  effectIt.effect("Global watermark limit - aggregate - multiple streaming aggregations - update", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Int)
      const chained = input.toDF().groupBy("value").agg(F.count("*").as("c")).groupBy("c").agg(F.count("*"))
      const error = (yield* startError(chained, "update")) as AnalysisError
      expect({ reason: error.reason, message: error.message }).toEqual(unsupported(M.correctness))
    }).pipe(Effect.provide(Session.layer()))
  )

  // Spark's checkStreamingQueryGlobalWatermarkLimit reads
  // `spark.sql.streaming.statefulOperator.checkCorrectness.enabled` from the session (SQLConf) and
  // only logs a warning when it is false; DataStreamWriter.start passes the session's value.
  effectIt.effect(
    "Global watermark limit with spark.sql.streaming.statefulOperator.checkCorrectness.enabled=false: start() succeeds",
    () =>
      Effect.gen(function* () {
        const input = yield* MemoryStream.make(Schema.Int)
        const chained = input.toDF().groupBy("value").agg(F.count("*").as("c")).groupBy("c").agg(F.count("*"))
        const query = yield* chained.writeStream.outputMode("update").format("noop").start()
        yield* query.stop()
      }).pipe(
        Effect.provide(
          Session.layer({ conf: { "spark.sql.streaming.statefulOperator.checkCorrectness.enabled": false } })
        )
      )
  )

  effectIt.effect("batch plan - streaming source: not supported (collect)", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Int)
      const error = (yield* Effect.flip(input.toDF().collect())) as AnalysisError
      expect(error._tag).toBe("AnalysisError")
      expect({ reason: error.reason, message: error.message }).toEqual(unsupported(M.streamingSourceInBatch))
    }).pipe(Effect.provide(Session.layer()))
  )
})
