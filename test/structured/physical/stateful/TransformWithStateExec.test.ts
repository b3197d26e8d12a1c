/**
 * The `transformWithState` operator batch by batch, on an in-memory store with chosen batch
 * timestamps and watermarks: the exact TTL boundary (`batchTimestampMs >= expiry` expires),
 * TTL cleanup counts, timers firing at or below the threshold in time order, the next
 * processing-time deadline the operator asks for, late rows in event-time mode, a variable
 * whose kind changed, and the schema-evolution rule for values stored by name.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Schema } from "effect"
import * as T from "../../../../core/DataType.ts"
import type { StateStoreError } from "../../../../core/Errors.ts"
import * as E from "../../../../core/Expression.ts"
import type { LogicalPlan } from "../../../../core/LogicalPlan.ts"
import { evolutionIncompatibility } from "../../../../state/StateSchemaCompatibility.ts"
import {
  type ListState,
  type StatefulProcessorHandle,
  type StatefulProcessorLike,
  TimeMode,
  type TimerValues,
  TTLConfig,
  transformWithState,
  type ValueState
} from "../../../../structured/contracts/StatefulProcessor.ts"
import { plan } from "../../../../structured/physical/Planner.ts"
import type * as P from "../../../../structured/physical/SparkPlan.ts"
import type { OperatorProgress } from "../../../../structured/physical/stateful/StatefulContext.ts"
import { executeTransformWithState } from "../../../../structured/physical/stateful/TransformWithStateExec.ts"
import { InMemoryStateStoreProvider } from "./InMemoryStateStore.ts"

const Out = Schema.Struct({ key: Schema.String, value: Schema.String })
type Out = typeof Out.Type
type In = { readonly key: string; readonly op: string; readonly t: Date | null }

const keyAttr = E.attribute("key", T.StringType, false)
const opAttr = E.attribute("op", T.StringType, false)
const timeAttr: E.AttributeReference = { ...E.attribute("t", T.TimestampType, true), eventTimeDelayMs: 0 }

const physical = (processor: StatefulProcessorLike<string, In, Out>, timeMode: TimeMode): P.TransformWithStateExec => {
  const child: LogicalPlan = {
    _tag: "LocalRelation",
    planId: 1,
    output: [keyAttr, opAttr, timeAttr],
    rows: [],
    isStreaming: true
  }
  const built = transformWithState(child, (r: In) => r.key, Schema.String, processor, {
    timeMode,
    outputMode: "update"
  })
  return plan(Result.getOrThrow(built), { streaming: true }) as P.TransformWithStateExec
}

interface BatchResult {
  readonly out: ReadonlyArray<Out>
  readonly progress: OperatorProgress
  readonly deadline: number | undefined
}

/** Runs batch `batchId` at `batchTimestampMs` over rows `"key op"` (and event times). */
const batch = (
  p: P.TransformWithStateExec,
  provider: InMemoryStateStoreProvider,
  batchId: number,
  batchTimestampMs: number,
  rows: ReadonlyArray<string>,
  watermarks: { readonly late?: number; readonly eviction?: number; readonly times?: ReadonlyArray<number> } = {}
): Effect.Effect<BatchResult, StateStoreError> =>
  Effect.gen(function* () {
    const progress = new Map<number, OperatorProgress>()
    let deadline: number | undefined
    const ctx = {
      ...provider.context({
        batchId,
        outputMode: "update",
        watermarkForLateEventsMs: watermarks.late,
        watermarkForEvictionMs: watermarks.eviction,
        progress
      }),
      batchTimestampMs,
      requestBatchAt: (_id: number, at: number | undefined) => {
        deadline = at
      }
    }
    const internal = rows.map((r, i) => {
      const [key, op] = r.split(" ")
      return [key, op, watermarks.times?.[i] ?? null]
    })
    const out = yield* executeTransformWithState(p, internal, undefined, ctx)
    return {
      out: out.map((r) => ({ key: r[0] as string, value: r[1] as string })),
      progress: progress.get(0)!,
      deadline
    }
  })

/** put / get on a value state with a 1 s TTL; `timer:<ms>` registers a timer. */
const valueProcessor = (ttl: TTLConfig): StatefulProcessorLike<string, In, Out> => {
  let state: ValueState<string>
  let handle: StatefulProcessorHandle
  return {
    outputSchema: Out,
    init: (h) => {
      handle = h
      state = h.getValueState("value", Schema.String, ttl)
    },
    handleInputRows: (key, rows) => {
      const out: Array<Out> = []
      for (const r of rows) {
        if (r.op.startsWith("put")) state.update(r.op.slice(4) || "v")
        else if (r.op === "get") out.push({ key, value: String(state.get() ?? "none") })
        else if (r.op.startsWith("timer:")) handle.registerTimer(Number(r.op.slice(6)))
      }
      return out
    },
    handleExpiredTimer: (key, _tv, info) => [
      { key, value: `fired ${info.getExpiryTimeInMs()} [${handle.listTimers().join(",")}]` }
    ]
  }
}

describe("TransformWithStateExec", () => {
  it.effect("a TTL value is returned until the batch timestamp reaches its expiry", () =>
    Effect.gen(function* () {
      const provider = new InMemoryStateStoreProvider()
      const p = physical(valueProcessor(TTLConfig.of("1 second")), TimeMode.ProcessingTime)
      const b0 = yield* batch(p, provider, 0, 1000, ["k put"])
      assert.strictEqual(b0.deadline, 2000)
      const b1 = yield* batch(p, provider, 1, 1999, ["k get"])
      assert.deepStrictEqual(b1.out, [{ key: "k", value: "v" }])
      assert.strictEqual(b1.progress.customMetrics.numValuesRemovedDueToTTLExpiry, 0)
      const b2 = yield* batch(p, provider, 2, 2000, ["k get"])
      assert.deepStrictEqual(b2.out, [{ key: "k", value: "none" }])
      assert.strictEqual(b2.progress.customMetrics.numValuesRemovedDueToTTLExpiry, 1)
      assert.strictEqual(b2.progress.numRowsTotal, 0)
      assert.strictEqual(b2.deadline, undefined)
      assert.strictEqual(b2.progress.customMetrics.numValueStateWithTTLVars, 1)
    })
  )

  it.effect("stores are scanned only when a timer or a TTL expiry may be due", () =>
    Effect.gen(function* () {
      const provider = new InMemoryStateStoreProvider()
      let scans = 0
      const open = provider.open.bind(provider)
      provider.open = (operatorId, storeName, schema, batchId) =>
        Effect.map(open(operatorId, storeName, schema, batchId), (store) => ({
          ...store,
          scan: () => {
            scans++
            return store.scan()
          }
        }))
      const p = physical(valueProcessor(TTLConfig.of("1 second")), TimeMode.ProcessingTime)
      yield* batch(p, provider, 0, 1000, ["k put", "k timer:5000"])
      scans = 0
      const b1 = yield* batch(p, provider, 1, 1500, ["k get"])
      assert.deepStrictEqual(b1.out, [{ key: "k", value: "v" }])
      assert.strictEqual(scans, 0)
      assert.strictEqual(b1.deadline, 2000)
      const b2 = yield* batch(p, provider, 2, 2000, [])
      assert.isAbove(scans, 0)
      assert.strictEqual(b2.progress.customMetrics.numValuesRemovedDueToTTLExpiry, 1)
      assert.strictEqual(b2.deadline, 5000)
      scans = 0
      yield* batch(p, provider, 3, 4999, [])
      assert.strictEqual(scans, 0)
      const b4 = yield* batch(p, provider, 4, 5000, [])
      assert.deepStrictEqual(b4.out, [{ key: "k", value: "fired 5000 [5000]" }])
      assert.strictEqual(b4.deadline, undefined)
    })
  )

  it.effect("TTLConfig.NONE and a zero duration mean no TTL", () =>
    Effect.gen(function* () {
      assert.strictEqual(TTLConfig.of("1 minute").ttlDurationMs, 60_000)
      const provider = new InMemoryStateStoreProvider()
      const p = physical(valueProcessor(TTLConfig.of("0 seconds")), TimeMode.ProcessingTime)
      yield* batch(p, provider, 0, 1000, ["k put"])
      const b1 = yield* batch(p, provider, 1, 1_000_000, ["k get"])
      assert.deepStrictEqual(b1.out, [{ key: "k", value: "v" }])
      assert.strictEqual(b1.progress.customMetrics.numValueStateVars, 1)
      assert.strictEqual(b1.deadline, undefined)
    })
  )

  it.effect("processing-time timers fire at or below the batch timestamp, in time order", () =>
    Effect.gen(function* () {
      const provider = new InMemoryStateStoreProvider()
      const p = physical(valueProcessor(TTLConfig.NONE), TimeMode.ProcessingTime)
      const b0 = yield* batch(p, provider, 0, 1000, ["a timer:3000", "a timer:2000", "b timer:2500", "b timer:2500"])
      assert.deepStrictEqual(b0.out, [])
      assert.strictEqual(b0.deadline, 2000)
      assert.strictEqual(b0.progress.customMetrics.numRegisteredTimers, 4)
      const b1 = yield* batch(p, provider, 1, 2500, [])
      assert.deepStrictEqual(b1.out, [
        { key: "a", value: "fired 2000 [2000,3000]" },
        { key: "b", value: "fired 2500 [2500]" }
      ])
      assert.strictEqual(b1.progress.customMetrics.numExpiredTimers, 2)
      assert.strictEqual(b1.deadline, 3000)
      const b2 = yield* batch(p, provider, 2, 2999, [])
      assert.deepStrictEqual(b2.out, [])
      const b3 = yield* batch(p, provider, 3, 3000, [])
      assert.deepStrictEqual(b3.out, [{ key: "a", value: "fired 3000 [3000]" }])
      assert.strictEqual(b3.deadline, undefined)
    })
  )

  it.effect("event-time timers fire at or below the eviction watermark; late rows are dropped", () =>
    Effect.gen(function* () {
      const provider = new InMemoryStateStoreProvider()
      const p = physical(valueProcessor(TTLConfig.NONE), TimeMode.EventTime)
      const b0 = yield* batch(p, provider, 0, 1000, ["a timer:5000", "b get"], {
        late: 0,
        eviction: 0,
        times: [10_000, 0]
      })
      // b's row has event time 0, at the late-events watermark 0: dropped
      assert.deepStrictEqual(b0.out, [])
      assert.strictEqual(b0.progress.numRowsDroppedByWatermark, 1)
      assert.strictEqual(b0.deadline, undefined)
      const b1 = yield* batch(p, provider, 1, 999_999, [], { late: 0, eviction: 4999 })
      assert.deepStrictEqual(b1.out, [])
      const b2 = yield* batch(p, provider, 2, 0, [], { late: 4999, eviction: 5000 })
      assert.deepStrictEqual(b2.out, [{ key: "a", value: "fired 5000 [5000]" }])
    })
  )

  it.effect("a variable that changed kind fails when read (STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE)", () =>
    Effect.gen(function* () {
      const provider = new InMemoryStateStoreProvider()
      yield* batch(physical(valueProcessor(TTLConfig.NONE), TimeMode.None), provider, 0, 0, ["k put"])
      const asList: StatefulProcessorLike<string, In, Out> = {
        outputSchema: Out,
        init: (h) => {
          list = h.getListState("value", Schema.String)
        },
        handleInputRows: () => {
          list.get()
          return []
        }
      }
      let list: ListState<string>
      const error = yield* batch(physical(asList, TimeMode.None), provider, 1, 0, ["k get"]).pipe(Effect.flip)
      assert.include(error.message, "STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE")
      assert.strictEqual(error.reason, "InvalidUsage")
    })
  )

  it.effect("a timer outside a key's processing or a state variable outside init is a misuse", () =>
    Effect.gen(function* () {
      const provider = new InMemoryStateStoreProvider()
      const inInit: StatefulProcessorLike<string, In, Out> = {
        outputSchema: Out,
        init: (h) => h.registerTimer(5),
        handleInputRows: () => []
      }
      const e1 = yield* batch(physical(inInit, TimeMode.ProcessingTime), provider, 0, 0, ["k get"]).pipe(Effect.flip)
      assert.include(e1.message, "STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_HANDLE_STATE")
      assert.include(e1.message, "operation=register_timer")
      const badName: StatefulProcessorLike<string, In, Out> = {
        outputSchema: Out,
        init: (h) => {
          h.getValueState("$bad name", Schema.String)
        },
        handleInputRows: () => []
      }
      const e2 = yield* batch(physical(badName, TimeMode.None), provider, 0, 0, ["k get"]).pipe(Effect.flip)
      assert.include(e2.message, "STATE_STORE_CANNOT_CREATE_COLUMN_FAMILY_WITH_RESERVED_CHARS")
      const timerValues: Array<number> = []
      const reads: StatefulProcessorLike<string, In, Out> = {
        outputSchema: Out,
        init: () => {},
        handleInputRows: (_k, _rows, tv: TimerValues) => {
          timerValues.push(tv.getCurrentProcessingTimeInMs(), tv.getCurrentWatermarkInMs())
          return []
        }
      }
      yield* batch(physical(reads, TimeMode.None), new InMemoryStateStoreProvider(), 0, 1234, ["k get"])
      assert.deepStrictEqual(timerValues, [1234, -1])
    })
  )
})

describe("evolutionIncompatibility (values stored by field name)", () => {
  const s = (...fields: ReadonlyArray<T.StructField>) => T.struct(fields)
  const count = T.field("count", T.DoubleType, false)
  it("accepts an added nullable field and a removed field, refuses an added non-nullable field and a type change", () => {
    assert.strictEqual(evolutionIncompatibility(s(count), s(count, T.field("last", T.StringType, true))), undefined)
    assert.strictEqual(evolutionIncompatibility(s(count, T.field("last", T.StringType, true)), s(count)), undefined)
    assert.include(
      evolutionIncompatibility(s(count), s(count, T.field("last", T.StringType, false))) ?? "",
      "field 'last' was added as non-nullable"
    )
    assert.include(
      evolutionIncompatibility(s(count), s(T.field("count", T.StringType, false))) ?? "",
      "field 'count' changed type from double to string"
    )
  })
})
