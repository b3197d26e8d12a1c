/**
 * Spark's `FlatMapGroupsWithStateSuite` processor tests (`testStateUpdateWithData`,
 * `testStateUpdateWithTimeout`): one key's stored state and timeout before a batch, what the
 * function does with its `GroupState`, and the state and timeout stored after the batch —
 * Spark's write-back rule, the reset rule (a timeout not set again is cleared) and the firing
 * rule (strictly below the threshold: the batch timestamp or the watermark).
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as T from "../../../../core/DataType.ts"
import { attribute } from "../../../../core/Expression.ts"
import { type GroupState, type GroupStateTimeout, NO_TIMESTAMP } from "../../../../structured/contracts/GroupState.ts"
import type * as P from "../../../../structured/physical/SparkPlan.ts"
import {
  executeFlatMapGroupsWithState,
  flatMapGroupsWithStateSchema,
  groupsWithStateShouldRunAnotherBatch
} from "../../../../structured/physical/stateful/FlatMapGroupsWithStateExec.ts"
import type { OperatorProgress } from "../../../../structured/physical/stateful/StatefulContext.ts"
import {
  isStatefulOperator,
  processingTimeOperators,
  statefulOperators
} from "../../../../structured/physical/stateful/StatefulOperators.ts"
import { stateKey } from "../../../../structured/physical/stateful/WatermarkSupport.ts"
import { InMemoryStateStoreProvider } from "./InMemoryStateStore.ts"

const currentBatchTimestamp = 1000
const currentBatchWatermark = 1000
const beforeTimeoutThreshold = 999
const afterTimeoutThreshold = 1001

const keyType = T.struct([T.field("value", T.StringType, true)])
const stateType = T.struct([T.field("value", T.LongType, true)])
const KEY = stateKey([T.StringType])(["a"])

const node = (timeout: GroupStateTimeout, fn: (state: GroupState<number>) => void, rows: ReadonlyArray<string>): P.FlatMapGroupsWithStateExec => {
  const value = attribute("value", T.StringType)
  return {
    _tag: "FlatMapGroupsWithStateExec",
    output: [attribute("value", T.StringType)],
    operatorId: 0,
    isStreaming: true,
    fn: (_key, _rows, state) => {
      fn(state)
      return []
    },
    keyFn: (row: { value: string }) => row.value,
    keySchema: keyType,
    keyIsStruct: false,
    stateSchema: stateType,
    stateIsStruct: false,
    outputSchema: T.struct([T.field("value", T.StringType, true)]),
    outputIsStruct: false,
    isMapGroupsWithState: false,
    outputMode: "update",
    timeout,
    child: { _tag: "LocalTableScanExec", output: [value], rows: rows.map((r) => [r]) },
    initialState: undefined
  }
}

/**
 * Stores `priorState`/`priorTimeout` for key "a" in batch 0, runs batch 1 (with a row for "a"
 * when `withData`), and returns the state and timeout stored afterwards (`undefined` state for
 * none; `"absent"` when the key is gone) and whether the function ran.
 */
const run = (
  timeout: GroupStateTimeout,
  stateUpdates: (state: GroupState<number>) => void,
  priorState: number | undefined,
  priorTimeout: number,
  withData: boolean
) =>
  Effect.gen(function* () {
    const provider = new InMemoryStateStoreProvider()
    let called = false
    const p = node(
      timeout,
      (s) => {
        called = true
        stateUpdates(s)
      },
      withData ? ["a"] : []
    )
    const schema = flatMapGroupsWithStateSchema(p)
    const seed = yield* provider.open(0, "default", schema, 0)
    if (priorState !== undefined || priorTimeout !== NO_TIMESTAMP) {
      const state = priorState === undefined ? null : [priorState]
      seed.put(KEY, timeout === "NoTimeout" ? [["a"], state] : [["a"], state, priorTimeout])
    }
    yield* seed.commit()
    const progress = new Map<number, OperatorProgress>()
    const ctx = provider.context({
      batchId: 1,
      outputMode: "update",
      watermarkForLateEventsMs: undefined,
      watermarkForEvictionMs: timeout === "EventTimeTimeout" ? currentBatchWatermark : undefined,
      progress
    })
    const rows = (p.child as P.LocalTableScanExec).rows
    yield* executeFlatMapGroupsWithState(p, rows, undefined, ctx, currentBatchTimestamp)
    const stored = provider.entries(0, 1).get(KEY) as [unknown, [number] | null, number?] | undefined
    return {
      called,
      state: stored === undefined ? "absent" : (stored[1]?.[0] ?? undefined),
      timeout: stored === undefined ? NO_TIMESTAMP : (stored[2] ?? NO_TIMESTAMP)
    }
  })

const expectRun = (
  name: string,
  args: {
    readonly timeout: GroupStateTimeout
    readonly stateUpdates: (state: GroupState<number>) => void
    readonly priorState: number | undefined
    readonly priorTimeout?: number
    readonly withData: boolean
    readonly expectedState: number | undefined | "absent"
    readonly expectedTimeout?: number
    readonly expectCalled?: boolean
  }
) =>
  it(name, async () => {
    const r = await Effect.runPromise(
      run(args.timeout, args.stateUpdates, args.priorState, args.priorTimeout ?? NO_TIMESTAMP, args.withData)
    )
    expect(r.called).toBe(args.expectCalled ?? true)
    expect(r.state).toBe(args.expectedState)
    expect(r.timeout).toBe(args.expectedTimeout ?? NO_TIMESTAMP)
  })

describe("FlatMapGroupsWithStateExec - new data", () => {
  for (const priorState of [undefined, 0]) {
    const prior = priorState === undefined ? "no prior state" : "prior state set"
    // with no state and no update nothing is stored; with state and no update it is unchanged
    expectRun(`NoTimeout - ${prior} - no update`, {
      timeout: "NoTimeout",
      stateUpdates: (state) => {
        expect(state.getCurrentProcessingTimeMs()).toBe(currentBatchTimestamp)
        expect(() => state.getCurrentWatermarkMs()).toThrow() // no watermark
      },
      priorState,
      withData: true,
      expectedState: priorState ?? "absent"
    })
    expectRun(`NoTimeout - ${prior} - state updated`, {
      timeout: "NoTimeout",
      stateUpdates: (state) => state.update(5),
      priorState,
      withData: true,
      expectedState: 5
    })
    expectRun(`NoTimeout - ${prior} - state removed`, {
      timeout: "NoTimeout",
      stateUpdates: (state) => state.remove(),
      priorState,
      withData: true,
      expectedState: "absent"
    })
  }

  for (const priorState of [undefined, 0]) {
    for (const priorTimeout of [NO_TIMESTAMP, 1000]) {
      // a timeout without state is not stored by these tests' seeds
      if (priorState === undefined && priorTimeout !== NO_TIMESTAMP) continue
      const prior =
        priorState === undefined
          ? "no prior state"
          : `prior state set, ${priorTimeout === 1000 ? "prior timeout set" : "no prior timeout"}`
      for (const timeout of ["ProcessingTimeTimeout", "EventTimeTimeout"] as const) {
        expectRun(`${timeout} - ${prior} - no update`, {
          timeout,
          stateUpdates: () => {},
          priorState,
          priorTimeout,
          withData: true,
          expectedState: priorState ?? "absent", // state does not change
          expectedTimeout: NO_TIMESTAMP // timestamp is reset
        })
        expectRun(`${timeout} - ${prior} - state updated`, {
          timeout,
          stateUpdates: (state) => state.update(5),
          priorState,
          priorTimeout,
          withData: true,
          expectedState: 5,
          expectedTimeout: NO_TIMESTAMP
        })
        expectRun(`${timeout} - ${prior} - state removed`, {
          timeout,
          stateUpdates: (state) => state.remove(),
          priorState,
          priorTimeout,
          withData: true,
          expectedState: "absent"
        })
      }
      if (priorState === undefined) {
        expectRun(`ProcessingTimeTimeout - ${prior} - timeout updated without initializing state`, {
          timeout: "ProcessingTimeTimeout",
          stateUpdates: (state) => state.setTimeoutDuration(5000),
          priorState,
          priorTimeout,
          withData: true,
          expectedState: undefined,
          expectedTimeout: currentBatchTimestamp + 5000
        })
        expectRun(`EventTimeTimeout - ${prior} - setting timeout without init state`, {
          timeout: "EventTimeTimeout",
          stateUpdates: (state) => state.setTimeoutTimestamp(10000),
          priorState,
          priorTimeout,
          withData: true,
          expectedState: undefined,
          expectedTimeout: 10000
        })
      }
      expectRun(`ProcessingTimeTimeout - ${prior} - state and timeout duration updated`, {
        timeout: "ProcessingTimeTimeout",
        stateUpdates: (state) => {
          state.update(5)
          state.setTimeoutDuration(5000)
        },
        priorState,
        priorTimeout,
        withData: true,
        expectedState: 5,
        expectedTimeout: currentBatchTimestamp + 5000
      })
      expectRun(`ProcessingTimeTimeout - ${prior} - timeout updated after state removed`, {
        timeout: "ProcessingTimeTimeout",
        stateUpdates: (state) => {
          state.remove()
          state.setTimeoutDuration(5000)
        },
        priorState,
        priorTimeout,
        withData: true,
        expectedState: undefined,
        expectedTimeout: currentBatchTimestamp + 5000
      })
      expectRun(`EventTimeTimeout - ${prior} - state and timeout timestamp updated`, {
        timeout: "EventTimeTimeout",
        stateUpdates: (state) => {
          state.update(5)
          state.setTimeoutTimestamp(5000)
        },
        priorState,
        priorTimeout,
        withData: true,
        expectedState: 5,
        expectedTimeout: 5000
      })
      expectRun(`EventTimeTimeout - ${prior} - timeout timestamp updated to before watermark`, {
        timeout: "EventTimeTimeout",
        stateUpdates: (state) => {
          state.update(5)
          expect(() => state.setTimeoutTimestamp(currentBatchWatermark - 1)).toThrow(
            "cannot be earlier than the current watermark"
          )
        },
        priorState,
        priorTimeout,
        withData: true,
        expectedState: 5,
        expectedTimeout: NO_TIMESTAMP // not updated
      })
      expectRun(`EventTimeTimeout - ${prior} - setting timeout with state removal`, {
        timeout: "EventTimeTimeout",
        stateUpdates: (state) => {
          state.remove()
          state.setTimeoutTimestamp(10000)
        },
        priorState,
        priorTimeout,
        withData: true,
        expectedState: undefined,
        expectedTimeout: 10000
      })
    }
  }
})

describe("FlatMapGroupsWithStateExec - timed-out state", () => {
  const preTimeoutState = 5
  for (const timeout of ["ProcessingTimeTimeout", "EventTimeTimeout"] as const) {
    expectRun(`${timeout} - should not timeout`, {
      timeout,
      stateUpdates: () => {
        throw new Error("function called without timeout")
      },
      priorState: preTimeoutState,
      priorTimeout: afterTimeoutThreshold,
      withData: false,
      expectCalled: false,
      expectedState: preTimeoutState, // state does not change
      expectedTimeout: afterTimeoutThreshold // timestamp does not change
    })
    expectRun(`${timeout} - does not timeout at the threshold itself`, {
      timeout,
      stateUpdates: () => {
        throw new Error("function called without timeout")
      },
      priorState: preTimeoutState,
      priorTimeout: currentBatchTimestamp,
      withData: false,
      expectCalled: false,
      expectedState: preTimeoutState,
      expectedTimeout: currentBatchTimestamp
    })
    expectRun(`${timeout} - should timeout - no update/remove`, {
      timeout,
      stateUpdates: (state) => {
        expect(state.hasTimedOut).toBe(true)
        expect(state.getCurrentProcessingTimeMs()).toBe(currentBatchTimestamp)
      },
      priorState: preTimeoutState,
      priorTimeout: beforeTimeoutThreshold,
      withData: false,
      expectedState: preTimeoutState, // state does not change
      expectedTimeout: NO_TIMESTAMP // timestamp is reset
    })
    expectRun(`${timeout} - should timeout - update state`, {
      timeout,
      stateUpdates: (state) => state.update(5),
      priorState: preTimeoutState,
      priorTimeout: beforeTimeoutThreshold,
      withData: false,
      expectedState: 5,
      expectedTimeout: NO_TIMESTAMP
    })
    expectRun(`${timeout} - should timeout - remove state`, {
      timeout,
      stateUpdates: (state) => state.remove(),
      priorState: preTimeoutState,
      priorTimeout: beforeTimeoutThreshold,
      withData: false,
      expectedState: "absent"
    })
    expectRun(`${timeout} - a key with data is not timed out`, {
      timeout,
      stateUpdates: (state) => expect(state.hasTimedOut).toBe(false),
      priorState: preTimeoutState,
      priorTimeout: beforeTimeoutThreshold,
      withData: true,
      expectedState: preTimeoutState,
      expectedTimeout: NO_TIMESTAMP
    })
  }
  expectRun("ProcessingTimeTimeout - should timeout - timeout duration updated", {
    timeout: "ProcessingTimeTimeout",
    stateUpdates: (state) => state.setTimeoutDuration(2000),
    priorState: preTimeoutState,
    priorTimeout: beforeTimeoutThreshold,
    withData: false,
    expectedState: preTimeoutState,
    expectedTimeout: currentBatchTimestamp + 2000
  })
  expectRun("ProcessingTimeTimeout - should timeout - timeout duration and state updated", {
    timeout: "ProcessingTimeTimeout",
    stateUpdates: (state) => {
      state.update(5)
      state.setTimeoutDuration(2000)
    },
    priorState: preTimeoutState,
    priorTimeout: beforeTimeoutThreshold,
    withData: false,
    expectedState: 5,
    expectedTimeout: currentBatchTimestamp + 2000
  })
  expectRun("EventTimeTimeout - should timeout - timeout timestamp updated", {
    timeout: "EventTimeTimeout",
    stateUpdates: (state) => state.setTimeoutTimestamp(5000),
    priorState: preTimeoutState,
    priorTimeout: beforeTimeoutThreshold,
    withData: false,
    expectedState: preTimeoutState,
    expectedTimeout: 5000
  })
  expectRun("EventTimeTimeout - should timeout - timeout and state updated", {
    timeout: "EventTimeTimeout",
    stateUpdates: (state) => {
      state.update(5)
      state.setTimeoutTimestamp(5000)
    },
    priorState: preTimeoutState,
    priorTimeout: beforeTimeoutThreshold,
    withData: false,
    expectedState: 5,
    expectedTimeout: 5000
  })
})

describe("FlatMapGroupsWithStateExec - batches without data", () => {
  it("an event-time timeout asks for one when the watermark moved (Spark's shouldRunAnotherBatch)", () => {
    const p = node("EventTimeTimeout", () => {}, [])
    expect(groupsWithStateShouldRunAnotherBatch(p, 6000, 5000)).toBe(true)
    expect(groupsWithStateShouldRunAnotherBatch(p, 5000, 5000)).toBe(false)
    expect(groupsWithStateShouldRunAnotherBatch(node("NoTimeout", () => {}, []), 6000, 5000)).toBe(false)
    // a processing-time timeout asks through requestBatchAt instead (see below)
    expect(groupsWithStateShouldRunAnotherBatch(node("ProcessingTimeTimeout", () => {}, []), 6000, 5000)).toBe(false)
  })

  it("a processing-time timeout asks for a batch once its earliest timeout can fire", async () => {
    const provider = new InMemoryStateStoreProvider()
    const p = node("ProcessingTimeTimeout", (s) => s.setTimeoutDuration(10_000), ["a"])
    const requests: Array<number | undefined> = []
    const ctx = {
      ...provider.context({
        batchId: 0,
        outputMode: "update",
        watermarkForLateEventsMs: undefined,
        watermarkForEvictionMs: undefined,
        progress: new Map()
      }),
      requestBatchAt: (_operatorId: number, at: number | undefined) => {
        requests.push(at)
      }
    }
    await Effect.runPromise(executeFlatMapGroupsWithState(p, (p.child as P.LocalTableScanExec).rows, undefined, ctx, 1000))
    // timeout 11000 fires in the first batch whose timestamp is above it
    expect(requests).toEqual([11_001])
  })
})

describe("FlatMapGroupsWithStateExec - as a stateful operator", () => {
  it("declares one store keyed by the grouping key; a batch-input one is no stateful operator", () => {
    const streaming = node("ProcessingTimeTimeout", () => {}, [])
    const [info] = statefulOperators(streaming)
    expect(info.name).toBe("flatMapGroupsWithState")
    expect(info.stores).toEqual([
      {
        storeName: "default",
        schema: {
          keySchema: keyType,
          valueSchema: T.struct([
            T.field("key", keyType, false),
            T.field("groupState", stateType, true),
            T.field("timeoutTimestamp", T.LongType, false)
          ])
        }
      }
    ])
    expect(processingTimeOperators(streaming)).toEqual([0])
    // no timeout configured: no timeout column (Spark's state format 2)
    expect(flatMapGroupsWithStateSchema(node("NoTimeout", () => {}, [])).valueSchema.fields.map((f) => f.name)).toEqual([
      "key",
      "groupState"
    ])
    const batch = { ...streaming, isStreaming: false }
    expect(isStatefulOperator(batch)).toBe(false)
    expect(statefulOperators(batch)).toEqual([])
    expect(processingTimeOperators(batch)).toEqual([])
  })
})
