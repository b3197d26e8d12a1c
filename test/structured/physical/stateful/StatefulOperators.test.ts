/**
 * Planning of the stateful operators (`plan(logical, { streaming: true })`), their operator ids,
 * their `explain` lines, what `statefulOperators` tells the engine, Spark's
 * `shouldRunAnotherBatch`, and the failure paths (no `StatefulContext`, corrupt state, a store
 * that cannot open).
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Schema } from "effect"
import { describe as vdescribe, expect, it as vit } from "vitest"
import { F, MemoryStream, Session } from "../../../../mod.ts"
import * as T from "../../../../core/DataType.ts"
import type * as E from "../../../../core/Expression.ts"
import * as L from "../../../../core/LogicalPlan.ts"
import { execute } from "../../../../structured/physical/Execute.ts"
import { treeString } from "../../../../structured/physical/PhysicalPlanString.ts"
import { plan } from "../../../../structured/physical/Planner.ts"
import type * as P from "../../../../structured/physical/SparkPlan.ts"
import { shouldRunAnotherBatch, statefulOperators } from "../../../../structured/physical/stateful/StatefulOperators.ts"
import { aggregate, alias, attr, countOne, ctx, local } from "../fixtures.ts"
import { InMemoryStateStoreProvider } from "./InMemoryStateStore.ts"
import { planStreaming, StreamDriver } from "./StreamDriver.ts"

const stream = (output: ReadonlyArray<E.AttributeReference>): L.LocalRelation => ({
  ...local(output, []),
  isStreaming: true
})

const dedup = (
  child: L.LogicalPlan,
  keys?: ReadonlyArray<E.AttributeReference>,
  withinWatermark = false
): L.Deduplicate => ({
  _tag: "Deduplicate",
  planId: L.newPlanId(),
  columnNames: undefined,
  keys,
  withinWatermark,
  child
})

const distinct = (child: L.LogicalPlan): L.Distinct => ({ _tag: "Distinct", planId: L.newPlanId(), child })

const union = (...children: ReadonlyArray<L.LogicalPlan>): L.Union => ({
  _tag: "Union",
  planId: L.newPlanId(),
  children,
  byName: false,
  allowMissingColumns: false
})

const watermark = (child: L.LogicalPlan, eventTime: E.AttributeReference, delayMs: number): L.EventTimeWatermark => ({
  _tag: "EventTimeWatermark",
  planId: L.newPlanId(),
  eventTime,
  delayMs,
  child
})

vdescribe("plan(logical, { streaming: true })", () => {
  vit("an aggregate over a stream becomes a StatefulAggregateExec with the batch aggregation's fields", () => {
    const k = attr("k", T.StringType)
    const logical = aggregate([k], [k, alias(countOne(), "count")], stream([k]))
    const batch = plan(logical) as P.HashAggregateExec
    const streaming = plan(logical, { streaming: true }) as P.StatefulAggregateExec
    expect(batch._tag).toBe("HashAggregateExec")
    expect(streaming._tag).toBe("StatefulAggregateExec")
    expect(streaming.operatorId).toBe(0)
    // The same aggregation (aggregate slots get fresh ids in every planning, so compare by name).
    expect(streaming.groupingExpressions).toEqual(batch.groupingExpressions)
    expect(streaming.groupingAttributes).toEqual(batch.groupingAttributes)
    expect(streaming.aggregateFunctions).toEqual(batch.aggregateFunctions)
    expect(streaming.aggregateAttributes.map((a) => a.name)).toEqual(batch.aggregateAttributes.map((a) => a.name))
    expect(streaming.output).toEqual(batch.output)
    expect(streaming.resultExpressions.length).toBe(batch.resultExpressions.length)
    expect(streaming.sessionWindow).toBeUndefined()
  })

  vit("an aggregate over a batch relation stays a HashAggregateExec in a streaming plan (SPARK-19690)", () => {
    const k = attr("k", T.StringType)
    const p = plan(aggregate([k], [k, alias(countOne(), "count")], local([k], [])), { streaming: true })
    expect(p._tag).toBe("HashAggregateExec")
    expect(statefulOperators(p)).toEqual([])
  })

  vit("distinct and dropDuplicates over a stream become StreamingDeduplicateExec", () => {
    const a = attr("a")
    const b = attr("b")
    const d1 = plan(distinct(stream([a, b])), { streaming: true }) as P.StreamingDeduplicateExec
    expect(d1._tag).toBe("StreamingDeduplicateExec")
    expect(d1.keys.map((x) => x.exprId)).toEqual([a.exprId, b.exprId])
    expect(d1.withinWatermark).toBe(false)
    const d2 = plan(dedup(stream([a, b]), [b], true), { streaming: true }) as P.StreamingDeduplicateExec
    expect(d2.keys.map((x) => x.exprId)).toEqual([b.exprId])
    expect(d2.withinWatermark).toBe(true)
    // Without the option, the batch operators.
    expect(plan(distinct(stream([a, b])))._tag).toBe("HashAggregateExec")
    expect(plan(dedup(stream([a, b]), [b]))._tag).toBe("DeduplicateExec")
  })

  vit("operator ids: pre-order as Spark (the topmost first, left before right), the same every time", () => {
    const a = attr("a")
    const build = () => aggregate([a], [a, alias(countOne(), "count")], union(dedup(stream([a])), dedup(stream([a]))))
    const logical = build()
    const ids = (p: P.SparkPlan) => statefulOperators(p).map((o) => [o.operatorId, o.name])
    expect(ids(plan(logical, { streaming: true }))).toEqual([
      [0, "stateStoreSave"],
      [1, "dedupe"],
      [2, "dedupe"]
    ])
    const p1 = plan(logical, { streaming: true }) as P.StatefulAggregateExec
    const u = p1.child as P.UnionExec
    expect(p1.operatorId).toBe(0)
    expect(u.children.map((c) => (c as P.StreamingDeduplicateExec).operatorId)).toEqual([1, 2])
    expect(ids(plan(logical, { streaming: true }))).toEqual(ids(p1))
  })

  vit("explain: Spark's StateStoreSave / StateStoreRestore chain and StreamingDeduplicate", () => {
    const k = attr("k", T.StringType)
    const t = attr("t", T.TimestampType)
    const src = watermark(stream([k, t]), t, 10_000)
    const marked: E.AttributeReference = { ...t, eventTimeDelayMs: 10_000 }
    const logical = aggregate([k], [k, alias(countOne(), "count")], dedup(src, [k, marked]))
    const p = plan(logical, { streaming: true })
    expect(treeString(p)).toBe(
      [
        `HashAggregate(keys=[k#${k.exprId}], functions=[count(1)])`,
        `+- StateStoreSave [k#${k.exprId}], state info [ opId = 0 ], 2`,
        `   +- HashAggregate(keys=[k#${k.exprId}], functions=[merge_count(1)])`,
        `      +- StateStoreRestore [k#${k.exprId}], state info [ opId = 0 ], 2`,
        `         +- HashAggregate(keys=[k#${k.exprId}], functions=[merge_count(1)])`,
        `            +- HashAggregate(keys=[k#${k.exprId}], functions=[partial_count(1)])`,
        `               +- StreamingDeduplicate [k#${k.exprId}, t#${t.exprId}], state info [ opId = 1 ]`,
        `                  +- EventTimeWatermark t#${t.exprId}: timestamp, 10 seconds`,
        `                     +- LocalTableScan <empty>, [k#${k.exprId}, t#${t.exprId}]`
      ].join("\n")
    )
    const within = plan(dedup(src, [k], true), { streaming: true })
    expect(treeString(within).split("\n")[0]).toBe(
      `StreamingDeduplicateWithinWatermark [k#${k.exprId}], state info [ opId = 0 ]`
    )
  })

  vit("explain: a streaming aggregation below a join keeps the `:  ` rails of its siblings", () => {
    const k = attr("k", T.StringType)
    const j = attr("j", T.StringType)
    const logical: L.Join = {
      _tag: "Join",
      planId: L.newPlanId(),
      left: aggregate([k], [k], stream([k])),
      right: local([j], []),
      joinType: "cross",
      condition: undefined,
      usingColumns: undefined
    }
    const lines = treeString(plan(logical, { streaming: true })).split("\n")
    expect(lines.slice(0, 3)).toEqual([
      "BroadcastNestedLoopJoin BuildRight, Cross",
      `:- HashAggregate(keys=[k#${k.exprId}], functions=[])`,
      `:  +- StateStoreSave [k#${k.exprId}], state info [ opId = 0 ], 2`
    ])
    // Below the chain's five lines: the rail, five levels of chain, then the scan.
    expect(lines[lines.length - 2]).toBe(`:${" ".repeat(17)}+- LocalTableScan <empty>, [k#${k.exprId}]`)
    expect(lines[lines.length - 1]).toBe(`+- LocalTableScan <empty>, [j#${j.exprId}]`)
  })
})

vdescribe("statefulOperators", () => {
  vit("names each operator's store and its key and value schemas", () => {
    const k = attr("k", T.StringType)
    const t: E.AttributeReference = { ...attr("t", T.TimestampType), eventTimeDelayMs: 5_000 }
    const logical = aggregate([k], [k, alias(countOne(), "count")], dedup(watermark(stream([k, t]), t, 5_000), [k, t]))
    const ops = statefulOperators(plan(logical, { streaming: true }))
    expect(
      ops.map((o) => [
        o.operatorId,
        o.name,
        o.stores.map((s) => [s.storeName, T.simpleString(s.schema.keySchema), T.simpleString(s.schema.valueSchema)])
      ])
    ).toEqual([
      [0, "stateStoreSave", [["default", "struct<k:string>", "struct<k:string,count(1):bigint>"]]],
      [1, "dedupe", [["default", "struct<k:string,t:timestamp>", "struct<eventTimeMs:bigint>"]]]
    ])
    const plain = statefulOperators(plan(dedup(stream([k]), [k]), { streaming: true }))
    expect(T.simpleString(plain[0].stores[0].schema.valueSchema)).toBe("struct<__dummy__:void>")
    const within = statefulOperators(plan(dedup(watermark(stream([k, t]), t, 5_000), [k], true), { streaming: true }))
    expect([within[0].name, T.simpleString(within[0].stores[0].schema.valueSchema)]).toEqual([
      "dedupeWithinWatermark",
      "struct<expiresAtMs:bigint>"
    ])
  })
})

vdescribe("shouldRunAnotherBatch (Spark's StateStoreWriter.shouldRunAnotherBatch)", () => {
  const k = attr("k", T.StringType)
  const agg = plan(aggregate([k], [k, alias(countOne(), "count")], stream([k])), { streaming: true })
  const dd = plan(dedup(stream([k]), [k]), { streaming: true })
  const stateless = plan(stream([k]), { streaming: true })

  vit(
    "an aggregation asks when the new watermark is past the last eviction watermark, in append and update mode",
    () => {
      expect(shouldRunAnotherBatch(agg, 15_000, 5_000)).toBe(true)
      expect(shouldRunAnotherBatch(agg, 15_000, 5_000, "update")).toBe(true)
      expect(shouldRunAnotherBatch(agg, 5_000, 5_000)).toBe(false)
      expect(shouldRunAnotherBatch(agg, 4_000, 5_000)).toBe(false)
      expect(shouldRunAnotherBatch(agg, 15_000, 5_000, "complete")).toBe(false)
    }
  )

  vit("a deduplication asks in every mode; nothing asks without a watermark or a stateful operator", () => {
    expect(shouldRunAnotherBatch(dd, 15_000, 5_000, "complete")).toBe(true)
    expect(shouldRunAnotherBatch(dd, 5_000, 5_000)).toBe(false)
    expect(shouldRunAnotherBatch(dd, 15_000, undefined)).toBe(false)
    expect(shouldRunAnotherBatch(stateless, 15_000, 5_000)).toBe(false)
  })
})

describe("failure paths", () => {
  it.effect("a streaming plan run without a StatefulContext dies, naming the operator", () =>
    Effect.gen(function* () {
      const k = attr("k", T.StringType)
      const p = plan(aggregate([k], [k], stream([k])), { streaming: true })
      const exit = yield* Effect.exit(execute(p, ctx))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const text = String(Cause.squash(exit.cause))
        assert.include(text, "StatefulAggregateExec (operator 0) needs a StatefulContext")
      }
    })
  )

  it.effect("a stored value the operator did not write is a StateStoreError (Corrupt) and the store is aborted", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))
      const provider = new InMemoryStateStoreProvider()
      // Version 0 of operator 0 holds a malformed value under the key of value 3.
      provider.versions.set("0/default", new Map([[0, new Map([["3", JSON.stringify({ not: "a row" })]])]]))
      const d = new StreamDriver(planStreaming(input.toDF().groupBy("value").count()), "update", {
        provider,
        batchId: 1
      })
      const exit = yield* Effect.exit(d.addData([[3]]))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const e = Cause.squash(exit.cause) as { _tag?: string; reason?: string; operatorId?: number }
        assert.deepStrictEqual([e._tag, e.reason, e.operatorId], ["StateStoreError", "Corrupt", 0])
      }
      assert.strictEqual(provider.aborted, 1)
      // Nothing was committed.
      assert.deepStrictEqual([...(provider.versions.get("0/default")?.keys() ?? [])], [0])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a store that cannot open fails the batch with its StateStoreError", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))
      const d = new StreamDriver(planStreaming(input.toDF().dropDuplicates()), "append")
      assert.deepStrictEqual(yield* d.addData([[1]]), [[1]])
      // The same operator id with another key schema: the provider refuses it.
      const other = planStreaming(input.toDF().withColumn("next", F.col("value").plus(1)).dropDuplicates())
      const exit = yield* Effect.exit(d.restart(other).addData([[1]]))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const e = Cause.squash(exit.cause) as { _tag?: string; reason?: string }
        assert.deepStrictEqual([e._tag, e.reason], ["StateStoreError", "SchemaIncompatible"])
      }
    }).pipe(Effect.provide(Session.layer()))
  )
})
