/**
 * Spark's `PropagateWatermarkSimulator` (`WatermarkPropagator.ts`) on planned streaming queries:
 * the input watermark of each stateful operator for a global watermark, the output watermark of
 * a stream-stream join, the cut after `flatMapGroupsWithState`, and Spark's 0 rules.
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { F, GroupStateTimeout, MemoryStream, Session } from "../../../../mod.ts"
import type { DataFrame } from "../../../../structured/api/DataFrame.ts"
import * as P from "../../../../structured/physical/SparkPlan.ts"
import {
  inputWatermark,
  operatorInputWatermarks,
  operatorWatermarks,
  produceOutputWatermark
} from "../../../../structured/physical/stateful/WatermarkPropagator.ts"
import type { StatefulContext } from "../../../../structured/physical/stateful/StatefulContext.ts"
import { planStreaming } from "./StreamDriver.ts"

const IdTime = Schema.Struct({ id: Schema.String, t: Schema.Date })
const T0 = Date.parse("2023-01-01T01:00:20Z")
const HOUR = 3_600_000

const find = <Tag extends P.SparkPlan["_tag"]>(p: P.SparkPlan, tag: Tag): Extract<P.SparkPlan, { _tag: Tag }> => {
  if (p._tag === tag) return p as Extract<P.SparkPlan, { _tag: Tag }>
  for (const c of P.children(p)) {
    try {
      return find(c, tag)
    } catch {
      // not under this child
    }
  }
  throw new Error(`no ${tag}`)
}

const run = <A>(f: Effect.Effect<A, never, any>): A =>
  Effect.runSync(Effect.provide(f, Session.layer()) as Effect.Effect<A>)

/** `l.t BETWEEN r.t - 1 hour AND r.t + 1 hour` (on epoch seconds), left outer, then a 10 minute window count. */
const joinThenAggregate = () =>
  run(
    Effect.gen(function* () {
      const a = yield* MemoryStream.make(IdTime)
      const b = yield* MemoryStream.make(IdTime)
      const l = (a.toDF() as DataFrame<any>).toDF("id1", "t1").withWatermark("t1", "0 seconds")
      const r = (b.toDF() as DataFrame<any>).toDF("id2", "t2").withWatermark("t2", "0 seconds")
      const t1 = F.col("t1").cast("long")
      const t2 = F.col("t2").cast("long")
      const joined = l.join(
        r,
        F.col("id1")
          .eq(F.col("id2"))
          .and(t1.geq(t2.minus(3600)))
          .and(t1.leq(t2.plus(3600))),
        "left_outer"
      )
      return planStreaming(joined.groupBy(F.window("t1", "10 minutes")).count())
    })
  )

describe("WatermarkPropagator", () => {
  it("an aggregation after a time-interval join runs one hour and 1 ms behind the global watermark", () => {
    const plan = joinThenAggregate()
    const join = find(plan, "StreamingSymmetricHashJoinExec")
    const agg = find(plan, "StatefulAggregateExec")
    expect(inputWatermark(join, T0)).toBe(T0)
    expect(produceOutputWatermark(join, T0)).toBe(T0 - HOUR - 1)
    expect(inputWatermark(agg, T0)).toBe(T0 - HOUR - 1)
    expect(Object.fromEntries(operatorInputWatermarks(plan, T0))).toEqual({
      [join.operatorId]: T0,
      [agg.operatorId]: T0 - HOUR - 1
    })
  })

  it("Spark's 0 rules: a global watermark of 0 gives 0 everywhere, and no input watermark is below 0", () => {
    const plan = joinThenAggregate()
    const agg = find(plan, "StatefulAggregateExec")
    expect(inputWatermark(agg, 0)).toBe(0)
    // 10 s global watermark: the join's output would be 10 s - 1 h - 1 ms, clamped at 0
    expect(inputWatermark(agg, 10_000)).toBe(0)
  })

  it("late events use the previous batch's propagated watermark, eviction this batch's; off with propagateWatermarks: false", () => {
    const agg = find(joinThenAggregate(), "StatefulAggregateExec")
    const ctx = { watermarkForLateEventsMs: T0, watermarkForEvictionMs: T0 + 15 * 60_000 } as StatefulContext
    expect(operatorWatermarks(agg, ctx)).toEqual({
      lateEventsMs: T0 - HOUR - 1,
      evictionMs: T0 + 15 * 60_000 - HOUR - 1
    })
    expect(operatorWatermarks(agg, { ...ctx, propagateWatermarks: false })).toEqual({
      lateEventsMs: T0,
      evictionMs: T0 + 15 * 60_000
    })
    expect(
      operatorWatermarks(agg, { ...ctx, watermarkForLateEventsMs: undefined, watermarkForEvictionMs: undefined })
    ).toEqual({ lateEventsMs: undefined, evictionMs: undefined })
  })

  it("flatMapGroupsWithState gives its output no watermark: a deduplication after it runs with 0", () => {
    const plan = run(
      Effect.gen(function* () {
        const input = yield* MemoryStream.make(IdTime)
        const fmgws = (input.toDF() as DataFrame<any>)
          .withWatermark("t", "10 seconds")
          .groupByKey((r) => r.id as string, Schema.String)
          .flatMapGroupsWithState(
            {
              outputMode: "append",
              timeout: GroupStateTimeout.NoTimeout,
              stateSchema: Schema.Int,
              outputSchema: Schema.Struct({ key: Schema.String })
            },
            (key: string) => [{ key }]
          )
        return planStreaming((fmgws as DataFrame<any>).dropDuplicates())
      })
    )
    const groups = find(plan, "FlatMapGroupsWithStateExec")
    const dedup = find(plan, "StreamingDeduplicateExec")
    expect(inputWatermark(groups, T0)).toBe(T0)
    expect(produceOutputWatermark(groups, T0)).toBeUndefined()
    expect(inputWatermark(dedup, T0)).toBe(0)
  })
})
