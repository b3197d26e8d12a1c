/** The shared helpers of the state store contract: spec checks, combining metrics, progress entries. */
import { describe, expect, it } from "vitest"
import { combineMetrics, stateOperatorProgress, validateSpec } from "../../state/StateStore.ts"

const ok = { checkpoint: "/cp", operatorId: 0, storeName: "default", version: -1, minBatchesToRetain: 100 }

describe("StateStore helpers", () => {
  it("validateSpec accepts Spark's store names and refuses what cannot be a folder or a batch id", () => {
    expect(validateSpec(ok)).toBeUndefined()
    expect(validateSpec({ ...ok, storeName: "left-keyWithIndexToValue", version: 41 })).toBeUndefined()
    for (const storeName of ["", "_metadata", ".hidden", "a/b", "5.delta", "a\\b"]) {
      expect(validateSpec({ ...ok, storeName })?.reason, storeName).toBe("InvalidUsage")
    }
    expect(validateSpec({ ...ok, version: -2 })?.message).toBe("State version -2 is not a batch id (an integer >= -1).")
    expect(validateSpec({ ...ok, version: 1.5 })?.reason).toBe("InvalidUsage")
    expect(validateSpec({ ...ok, operatorId: -1 })?.reason).toBe("InvalidUsage")
    expect(validateSpec({ ...ok, minBatchesToRetain: 0 })?.reason).toBe("InvalidUsage")
    expect(validateSpec({ ...ok, checkpoint: "" })?.reason).toBe("InvalidUsage")
  })

  it("combineMetrics adds up an operator's stores; stateOperatorProgress has Spark's fields", () => {
    const m = combineMetrics([
      {
        numRowsTotal: 3,
        numRowsUpdated: 2,
        numRowsRemoved: 1,
        commitTimeMs: 4,
        memoryUsedBytes: 100,
        numRowsLoaded: 5,
        customMetrics: { cacheHitCount: 1 }
      },
      {
        numRowsTotal: 7,
        numRowsUpdated: 0,
        numRowsRemoved: 2,
        commitTimeMs: 1,
        memoryUsedBytes: 50,
        numRowsLoaded: 0,
        customMetrics: { cacheHitCount: 2, cacheMissCount: 3 }
      }
    ])
    expect(m).toEqual({
      numRowsTotal: 10,
      numRowsUpdated: 2,
      numRowsRemoved: 3,
      commitTimeMs: 5,
      memoryUsedBytes: 150,
      numRowsLoaded: 5,
      customMetrics: { cacheHitCount: 3, cacheMissCount: 3 }
    })
    expect(stateOperatorProgress("stateStoreSave", m, { allUpdatesTimeMs: 9, numStateStoreInstances: 2 })).toEqual({
      operatorName: "stateStoreSave",
      numRowsTotal: 10,
      numRowsUpdated: 2,
      allUpdatesTimeMs: 9,
      numRowsRemoved: 3,
      allRemovalsTimeMs: 0,
      commitTimeMs: 5,
      memoryUsedBytes: 150,
      numRowsDroppedByWatermark: 0,
      numShufflePartitions: 1,
      numStateStoreInstances: 2,
      customMetrics: { cacheHitCount: 3, cacheMissCount: 3, numRowsLoaded: 5 }
    })
  })
})
