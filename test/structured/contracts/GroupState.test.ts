/**
 * Spark's `GroupStateSuite` (and the GroupState tests at the top of `FlatMapGroupsWithStateSuite`):
 * get/exists/update/remove, the timeout setters per timeout kind, illegal arguments, hasTimedOut,
 * the watermark and processing-time getters, with Spark's error kinds and messages.
 */
import { Duration } from "effect"
import { describe, expect, it } from "vitest"
import {
  FlatMapGroupsWithStateUserFuncError,
  GroupStateError,
  GroupStateImpl,
  type GroupStateTimeout,
  NO_TIMESTAMP,
  TestGroupState
} from "../../../structured/contracts/GroupState.ts"

const caught = (f: () => unknown): GroupStateError => {
  try {
    f()
  } catch (e) {
    if (e instanceof GroupStateError) return e
    throw e
  }
  throw new Error("expected a GroupStateError")
}

const timeoutOf = (s: GroupStateImpl<unknown>): number => s.getTimeoutTimestampMs() ?? NO_TIMESTAMP

/** Spark's `testTimeoutDurationNotAllowed`: each call fails and leaves the timeout as it was. */
const durationNotAllowed = (s: GroupStateImpl<unknown>) => {
  const prevTimestamp = s.getTimeoutTimestampMs()
  for (const f of [() => s.setTimeoutDuration(1000), () => s.setTimeoutDuration("2 second")]) {
    const e = caught(f)
    expect(e.reason).toBe("UnsupportedOperation")
    expect(e.errorClass).toBe("_LEGACY_ERROR_TEMP_2203")
    expect(e.message).toBe(
      "Cannot set timeout duration without enabling processing time timeout in [map|flatMap]GroupsWithState"
    )
    expect(s.getTimeoutTimestampMs()).toBe(prevTimestamp)
  }
}

/** Spark's `testTimeoutTimestampNotAllowed`: each call fails and leaves the timeout as it was. */
const timestampNotAllowed = (s: GroupStateImpl<unknown>) => {
  const prevTimestamp = s.getTimeoutTimestampMs()
  for (const f of [
    () => s.setTimeoutTimestamp(2000),
    () => s.setTimeoutTimestamp(2000, "1 second"),
    () => s.setTimeoutTimestamp(new Date(2000)),
    () => s.setTimeoutTimestamp(new Date(2000), "1 second")
  ]) {
    const e = caught(f)
    expect(e.reason).toBe("UnsupportedOperation")
    expect(e.errorClass).toBe("_LEGACY_ERROR_TEMP_2205")
    expect(s.getTimeoutTimestampMs()).toBe(prevTimestamp)
  }
}

describe("GroupState", () => {
  it("SPARK-35800: ensure TestGroupState creates instances the same as prod", () => {
    const testState = TestGroupState.create<number>(5, "EventTimeTimeout", 1, 1, false)
    const prodState = GroupStateImpl.createForStreaming<number>(5, 1, 1, "EventTimeTimeout", false, true)
    expect(testState).toBeInstanceOf(GroupStateImpl)

    expect(testState.isRemoved).toBe(prodState.isRemoved)
    expect(testState.isUpdated).toBe(prodState.isUpdated)
    expect(testState.exists).toBe(prodState.exists)
    expect(testState.get()).toBe(prodState.get())
    expect(testState.getTimeoutTimestampMs()).toBe(prodState.getTimeoutTimestampMs())
    expect(testState.hasTimedOut).toBe(prodState.hasTimedOut)
    expect(testState.getCurrentProcessingTimeMs()).toBe(prodState.getCurrentProcessingTimeMs())
    expect(testState.getCurrentWatermarkMs()).toBe(prodState.getCurrentWatermarkMs())

    testState.update(6)
    prodState.update(6)
    expect(testState.isUpdated).toBe(prodState.isUpdated)
    expect(testState.exists).toBe(prodState.exists)
    expect(testState.get()).toBe(prodState.get())

    testState.remove()
    prodState.remove()
    expect(testState.exists).toBe(prodState.exists)
    expect(testState.isRemoved).toBe(prodState.isRemoved)
  })

  it("GroupState - get, exists, update, remove", () => {
    const check = (
      state: GroupStateImpl<string>,
      expected: string | undefined,
      updated = false,
      removed = false
    ) => {
      if (expected !== undefined) {
        expect(state.exists).toBe(true)
        expect(state.get()).toBe(expected)
      } else {
        expect(state.exists).toBe(false)
        const e = caught(() => state.get())
        expect(e.reason).toBe("NoSuchElement")
        expect(e.message).toBe("State is either not defined or has already been removed")
      }
      expect(state.getOption()).toBe(expected)
      expect(state.isUpdated).toBe(updated)
      expect(state.isRemoved).toBe(removed)
    }
    let state = TestGroupState.create<string>(undefined, "NoTimeout", 1, undefined, false)
    check(state, undefined)
    state.update("")
    check(state, "", true)

    state = TestGroupState.create<string>("2", "NoTimeout", 1, undefined, false)
    check(state, "2")
    state.update("3")
    check(state, "3", true)
    state.remove()
    check(state, undefined, false, true)
    state.remove() // still callable
    state.update("4")
    check(state, "4", true, false)

    for (const bad of [null, undefined]) {
      const e = caught(() => state.update(bad as unknown as string))
      expect(e.reason).toBe("IllegalArgument")
      expect(e.message).toBe("'null' is not a valid state value")
    }
  })

  it("GroupState - setTimeout - with NoTimeout", () => {
    for (const init of [undefined, 5]) {
      const states = [
        GroupStateImpl.createForStreaming<unknown>(init, 1000, 1000, "NoTimeout", false, false),
        GroupStateImpl.createForBatch<unknown>("NoTimeout", false, 1000)
      ]
      for (const s of states) {
        durationNotAllowed(s)
        timestampNotAllowed(s)
      }
    }
  })

  it("GroupState - setTimeout - with ProcessingTimeTimeout", () => {
    let state = GroupStateImpl.createForStreaming<unknown>(undefined, 1000, 1000, "ProcessingTimeTimeout", false, false)
    expect(state.getTimeoutTimestampMs()).toBeUndefined()
    state.setTimeoutDuration("-1 month 31 days 1 second")
    expect(timeoutOf(state)).toBe(2000)
    state.setTimeoutDuration(500)
    expect(timeoutOf(state)).toBe(1500) // can be set without initializing state
    timestampNotAllowed(state)

    state.update(5)
    expect(timeoutOf(state)).toBe(1500) // does not change
    state.setTimeoutDuration(1000)
    expect(timeoutOf(state)).toBe(2000)
    state.setTimeoutDuration("2 second")
    expect(timeoutOf(state)).toBe(3000)
    state.setTimeoutDuration(Duration.seconds(3))
    expect(timeoutOf(state)).toBe(4000)
    timestampNotAllowed(state)

    state.remove()
    expect(timeoutOf(state)).toBe(4000) // does not change
    state.setTimeoutDuration(500) // can still be set
    expect(timeoutOf(state)).toBe(1500)
    timestampNotAllowed(state)

    // batch queries
    state = GroupStateImpl.createForBatch<unknown>("ProcessingTimeTimeout", false, 1000)
    expect(state.getTimeoutTimestampMs()).toBeUndefined()
    state.setTimeoutDuration(500)
    timestampNotAllowed(state)
    state.update(5)
    state.setTimeoutDuration(1000)
    state.setTimeoutDuration("2 second")
    timestampNotAllowed(state)
    state.remove()
    state.setTimeoutDuration(500)
    timestampNotAllowed(state)
  })

  it("GroupState - setTimeout - with EventTimeTimeout", () => {
    let state = GroupStateImpl.createForStreaming<unknown>(undefined, 1000, 1000, "EventTimeTimeout", false, true)
    expect(state.getTimeoutTimestampMs()).toBeUndefined()
    durationNotAllowed(state)
    state.setTimeoutTimestamp(5000)
    expect(timeoutOf(state)).toBe(5000) // can be set without initializing state

    state.update(5)
    expect(timeoutOf(state)).toBe(5000) // does not change
    state.setTimeoutTimestamp(10000)
    expect(timeoutOf(state)).toBe(10000)
    state.setTimeoutTimestamp(new Date(20000))
    expect(timeoutOf(state)).toBe(20000)
    state.setTimeoutTimestamp(new Date(20000), "1 second")
    expect(timeoutOf(state)).toBe(21000)
    state.setTimeoutTimestamp(20000, "2 seconds")
    expect(timeoutOf(state)).toBe(22000)
    durationNotAllowed(state)

    state.remove()
    expect(timeoutOf(state)).toBe(22000)
    state.setTimeoutTimestamp(5000)
    expect(timeoutOf(state)).toBe(5000) // can be set after removing state
    durationNotAllowed(state)

    // batch queries: no watermark value, so any positive timestamp goes
    state = GroupStateImpl.createForBatch<unknown>("EventTimeTimeout", false, 1000)
    expect(state.getTimeoutTimestampMs()).toBeUndefined()
    durationNotAllowed(state)
    state.setTimeoutTimestamp(5000)
    state.update(5)
    state.setTimeoutTimestamp(10000)
    state.setTimeoutTimestamp(new Date(20000))
    durationNotAllowed(state)
    state.remove()
    state.setTimeoutTimestamp(5000)
    durationNotAllowed(state)
  })

  it("GroupState - illegal params to setTimeout", () => {
    const illegal = (state: GroupStateImpl<unknown>, f: () => void, message?: string) => {
      const e = caught(f)
      expect(e.reason).toBe("IllegalArgument")
      if (message !== undefined) expect(e.message).toBe(message)
      expect(state.getTimeoutTimestampMs()).toBeUndefined()
    }
    let state = GroupStateImpl.createForStreaming<unknown>(5, 1000, 1000, "ProcessingTimeTimeout", false, false)
    illegal(state, () => state.setTimeoutDuration(-1000), "Timeout duration must be positive")
    illegal(state, () => state.setTimeoutDuration(0), "Timeout duration must be positive")
    illegal(state, () => state.setTimeoutDuration("-2 second"), "Provided duration (-2 second) is negative")
    illegal(state, () => state.setTimeoutDuration("-1 month"), "Provided duration (-1 month) is negative")
    illegal(state, () => state.setTimeoutDuration("1 month -31 day"), "Timeout duration must be positive")
    illegal(state, () => state.setTimeoutDuration("ten seconds"))

    state = TestGroupState.create<unknown>(5, "EventTimeTimeout", 1000, 1000, false)
    illegal(state, () => state.setTimeoutTimestamp(-10000), "Timeout timestamp must be positive")
    illegal(state, () => state.setTimeoutTimestamp(10000, "-3 second"), "Provided duration (-3 second) is negative")
    illegal(state, () => state.setTimeoutTimestamp(10000, "-1 month"), "Provided duration (-1 month) is negative")
    illegal(
      state,
      () => state.setTimeoutTimestamp(10000, "1 month -32 day"),
      "Provided duration (1 month -32 day) is negative"
    )
    illegal(state, () => state.setTimeoutTimestamp(new Date(-10000)), "Timeout timestamp must be positive")
    illegal(state, () => state.setTimeoutTimestamp(new Date(-10000), "-3 second"))
    illegal(state, () => state.setTimeoutTimestamp(new Date(-10000), "-1 month"))
    illegal(state, () => state.setTimeoutTimestamp(new Date(-10000), "1 month -32 day"))

    // Spark's setTimeoutDuration(String) parses the interval before it checks the timeout kind
    // (GroupStateImpl.setTimeoutDuration(duration: String) = setTimeoutDuration(parseDuration(duration)))
    state = TestGroupState.create<unknown>(5, "NoTimeout", 1000, undefined, false)
    illegal(state, () => state.setTimeoutDuration("-2 second"), "Provided duration (-2 second) is negative")

    // below the watermark (FlatMapGroupsWithStateSuite: "timeout timestamp updated to before watermark")
    state = GroupStateImpl.createForStreaming<unknown>(5, 1000, 1000, "EventTimeTimeout", false, true)
    illegal(
      state,
      () => state.setTimeoutTimestamp(999),
      "Timeout timestamp (999) cannot be earlier than the current watermark (1000)"
    )
    state.setTimeoutTimestamp(1000) // at the watermark is fine
    expect(timeoutOf(state)).toBe(1000)
  })

  it("SPARK-35800: illegal params to create", () => {
    // eventTimeWatermarkMs >= 0 if present
    for (const f of [
      () => TestGroupState.create<number>(5, "EventTimeTimeout", 100, -1000, false),
      () => GroupStateImpl.createForStreaming<number>(5, 100, -1000, "EventTimeTimeout", false, true)
    ]) {
      const e = caught(f)
      expect(e.reason).toBe("IllegalArgument")
      expect(e.message).toContain("eventTimeWatermarkMs must be 0 or positive if present")
    }
    // batchProcessingTimeMs must be positive
    for (const f of [
      () => TestGroupState.create<number>(5, "EventTimeTimeout", -100, 1000, false),
      () => GroupStateImpl.createForStreaming<number>(5, -100, 1000, "EventTimeTimeout", false, true)
    ]) {
      const e = caught(f)
      expect(e.reason).toBe("IllegalArgument")
      expect(e.message).toContain("batchProcessingTimeMs must be 0 or positive")
    }
    // hasTimedOut cannot be true if there's no timeout configured
    for (const f of [
      () => TestGroupState.create<number>(5, "NoTimeout", 100, undefined, true),
      () => GroupStateImpl.createForStreaming<number>(5, 100, NO_TIMESTAMP, "NoTimeout", true, false)
    ]) {
      const e = caught(f)
      expect(e.errorClass).toBe("MISSING_TIMEOUT_CONFIGURATION")
      expect(e.reason).toBe("UnsupportedOperation")
      expect(e.message).toBe(
        "[MISSING_TIMEOUT_CONFIGURATION] The operation has timed out, but no timeout duration is configured. To set a processing time-based timeout, use 'GroupState.setTimeoutDuration()' in your 'mapGroupsWithState' or 'flatMapGroupsWithState' operation. For event-time based timeout, use 'GroupState.setTimeoutTimestamp()' and define a watermark using 'Dataset.withWatermark()'."
      )
    }
  })

  it("GroupState - hasTimedOut", () => {
    const kinds: ReadonlyArray<GroupStateTimeout> = ["NoTimeout", "ProcessingTimeTimeout", "EventTimeTimeout"]
    for (const timeout of kinds) {
      for (const init of [undefined, 5]) {
        expect(TestGroupState.create<unknown>(init, timeout, 1000, undefined, false).hasTimedOut).toBe(false)
        if (timeout !== "NoTimeout") {
          expect(TestGroupState.create<unknown>(init, timeout, 1000, undefined, true).hasTimedOut).toBe(true)
        }
      }
      expect(GroupStateImpl.createForBatch(timeout, false, 1000).hasTimedOut).toBe(false)
    }
  })

  it("GroupState - getCurrentWatermarkMs", () => {
    const kinds: ReadonlyArray<GroupStateTimeout> = ["NoTimeout", "ProcessingTimeTimeout", "EventTimeTimeout"]
    for (const timeout of kinds) {
      const e = caught(() => TestGroupState.create<number>(undefined, timeout, 1000, undefined, false).getCurrentWatermarkMs())
      expect(e.errorClass).toBe("_LEGACY_ERROR_TEMP_2204")
      expect(e.message).toContain("Cannot get event time watermark timestamp without setting watermark")
      expect(TestGroupState.create<number>(undefined, timeout, 1000, 0, false).getCurrentWatermarkMs()).toBe(0)
      expect(TestGroupState.create<number>(undefined, timeout, 1000, 1000, false).getCurrentWatermarkMs()).toBe(1000)
      expect(TestGroupState.create<number>(undefined, timeout, 1000, 2000, false).getCurrentWatermarkMs()).toBe(2000)
      expect(GroupStateImpl.createForBatch("EventTimeTimeout", true, 1000).getCurrentWatermarkMs()).toBe(-1)
      // batch queries
      const b = caught(() => GroupStateImpl.createForBatch(timeout, false, 1000).getCurrentWatermarkMs())
      expect(b.reason).toBe("UnsupportedOperation")
      expect(b.errorClass).toBe("_LEGACY_ERROR_TEMP_2204")
      expect(GroupStateImpl.createForBatch(timeout, true, 1000).getCurrentWatermarkMs()).toBe(-1)
    }
  })

  it("GroupState - getCurrentProcessingTimeMs", () => {
    const kinds: ReadonlyArray<GroupStateTimeout> = ["NoTimeout", "ProcessingTimeTimeout", "EventTimeTimeout"]
    for (const timeout of kinds) {
      for (const watermark of [undefined, 1000]) {
        expect(TestGroupState.create<number>(1000, timeout, 0, watermark, false).getCurrentProcessingTimeMs()).toBe(0)
        expect(TestGroupState.create<number>(1000, timeout, 1000, watermark, false).getCurrentProcessingTimeMs()).toBe(1000)
        expect(TestGroupState.create<number>(1000, timeout, 2000, watermark, false).getCurrentProcessingTimeMs()).toBe(2000)
      }
      expect(GroupStateImpl.createForBatch(timeout, false, 1234).getCurrentProcessingTimeMs()).toBe(1234)
    }
  })

  it("GroupState - primitive type", () => {
    let state = GroupStateImpl.createForStreaming<number>(undefined, 1000, 1000, "NoTimeout", false, false)
    expect(caught(() => state.get()).reason).toBe("NoSuchElement")
    expect(state.getOption()).toBeUndefined()
    state = GroupStateImpl.createForStreaming<number>(10, 1000, 1000, "NoTimeout", false, false)
    expect(state.get()).toBe(10)
    state.update(0) // 0 is a value, not absence
    expect(state.get()).toBe(0)
    expect(state.exists).toBe(true)
    state.remove()
    expect(caught(() => state.get()).reason).toBe("NoSuchElement")
  })

  // [SPARK-49474]: FlatMapGroupsWithStateUserFuncException's message, reason = the cause's
  // message or "" (Option(cause.getMessage).getOrElse(""))
  it("FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR wraps what the user function threw", () => {
    const boom = new TypeError("boom")
    const e = FlatMapGroupsWithStateUserFuncError.wrap(boom)
    expect(e._tag).toBe("FlatMapGroupsWithStateUserFuncError")
    expect(e.errorClass).toBe("FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR")
    expect(e.cause).toBe(boom)
    expect(e.message).toBe(
      "[FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR] An error occurred in the user provided function in flatMapGroupsWithState. Reason: boom"
    )
    expect(FlatMapGroupsWithStateUserFuncError.wrap(undefined).message).toBe(
      "[FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR] An error occurred in the user provided function in flatMapGroupsWithState. Reason: "
    )
    expect(FlatMapGroupsWithStateUserFuncError.wrap("text").message.endsWith("Reason: text")).toBe(true)
  })
})
