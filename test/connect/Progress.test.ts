import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { decodeProgress } from "../../connect/Progress.ts"
import type { StreamingQueryProgress } from "../../structured/contracts/StreamingQueryProgress.ts"

// Captured from the Spark 4.2 Connect server (StreamingQueryCommand recent_progress): batch 1 of a
// streaming `groupBy(window(ts, "10 seconds")).count()` with a 10 s watermark over json files
// (maxFilesPerTrigger=1), update mode, memory sink.
const AGGREGATION =
  '{"id":"989dd97e-1f26-484a-8805-ccb78c16fea1","runId":"9fae9be8-bd1c-4ddd-b69b-592f7fd7588d","name":"scratch_agg","timestamp":"2026-11-30T03:56:09.816Z","batchId":1,"batchDuration":7592,"durationMs":{"triggerExecution":7592,"queryPlanning":411,"getBatch":160,"commitOffsets":1000,"latestOffset":761,"addBatch":4799,"walCommit":417},"eventTime":{"min":"2026-01-01T00:00:02.000Z","avg":"2026-01-01T00:00:16.500Z","watermark":"2026-01-01T00:00:02.000Z","max":"2026-01-01T00:00:31.000Z"},"stateOperators":[{"operatorName":"stateStoreSave","numRowsTotal":3,"numRowsUpdated":2,"allUpdatesTimeMs":1925,"numRowsRemoved":0,"allRemovalsTimeMs":126,"commitTimeMs":3096,"memoryUsedBytes":2760,"numRowsDroppedByWatermark":0,"numShufflePartitions":4,"numStateStoreInstances":4,"customMetrics":{"stateOnCurrentVersionSizeBytes":1272,"forceSnapshotCount":0,"loadedMapCacheMissCount":0,"SnapshotLastUploaded.partition_3_default":-1,"SnapshotLastUploaded.partition_0_default":-1,"loadedMapCacheHitCount":8,"SnapshotLastUploaded.partition_1_default":-1,"numSnapshotsAutoRepaired":0,"SnapshotLastUploaded.partition_2_default":-1}}],"sources":[{"description":"FileStreamSource[file:/tmp/rs-qW1pWq/in]","startOffset":"{\\"logOffset\\":0}","endOffset":"{\\"logOffset\\":1}","latestOffset":null,"numInputRows":2,"inputRowsPerSecond":0.18485996857380532,"processedRowsPerSecond":0.26343519494204426,"metrics":{}}],"sink":{"description":"MemorySink","numOutputRows":2,"metrics":{}},"observedMetrics":{}}'

// Captured likewise: batch 0 of json files observed with `observe("m", count(*) AS cnt, sum(v) AS total)`
// into the noop sink.
const OBSERVED =
  '{"id":"dac7238c-92d4-45e1-a607-71b308d7f2bd","runId":"f2f680d2-f321-4400-82bb-8e4970cebc6f","name":null,"timestamp":"2026-11-30T03:57:20.197Z","batchId":0,"batchDuration":1351,"durationMs":{"triggerExecution":1351,"queryPlanning":103,"getBatch":19,"commitOffsets":228,"latestOffset":224,"addBatch":491,"walCommit":251},"eventTime":{},"stateOperators":[],"sources":[{"description":"FileStreamSource[file:/tmp/rs-iaKVO4/in]","startOffset":null,"endOffset":"{\\"logOffset\\":0}","latestOffset":null,"numInputRows":3,"inputRowsPerSecond":0.0,"processedRowsPerSecond":2.220577350111029,"metrics":{}}],"sink":{"description":"NoopTable","numOutputRows":3,"metrics":{}},"observedMetrics":{"m":{"values":[3,6],"schema":{"type":"struct","fields":[{"name":"cnt","type":"long","nullable":false,"metadata":{}},{"name":"total","type":"long","nullable":true,"metadata":{}}]}}}}'

const decode = (json: string): StreamingQueryProgress => {
  const r = decodeProgress(json)
  if (Result.isFailure(r)) throw new Error(r.failure.message)
  return r.success
}

describe("decodeProgress", () => {
  it("reads a stateful batch as Spark reported it", () => {
    const p = decode(AGGREGATION)
    expect(p.id).toBe("989dd97e-1f26-484a-8805-ccb78c16fea1")
    expect(p.runId).toBe("9fae9be8-bd1c-4ddd-b69b-592f7fd7588d")
    expect(p.name).toBe("scratch_agg")
    expect(p.timestamp).toBe("2026-11-30T03:56:09.816Z")
    expect(p.batchId).toBe(1)
    expect(p.batchDuration).toBe(7592)
    // Not written by the server: Spark's totals are sums over the sources.
    expect(p.numInputRows).toBe(2)
    expect(p.inputRowsPerSecond).toBe(0.18485996857380532)
    expect(p.processedRowsPerSecond).toBe(0.26343519494204426)
    expect(p.durationMs).toEqual({
      triggerExecution: 7592,
      queryPlanning: 411,
      getBatch: 160,
      commitOffsets: 1000,
      latestOffset: 761,
      addBatch: 4799,
      walCommit: 417
    })
    expect(p.eventTime).toEqual({
      min: "2026-01-01T00:00:02.000Z",
      avg: "2026-01-01T00:00:16.500Z",
      watermark: "2026-01-01T00:00:02.000Z",
      max: "2026-01-01T00:00:31.000Z"
    })
    expect(p.stateOperators).toHaveLength(1)
    const op = p.stateOperators[0]
    expect(op.operatorName).toBe("stateStoreSave")
    expect([op.numRowsTotal, op.numRowsUpdated, op.numRowsRemoved, op.numRowsDroppedByWatermark]).toEqual([3, 2, 0, 0])
    expect([op.allUpdatesTimeMs, op.allRemovalsTimeMs, op.commitTimeMs, op.memoryUsedBytes]).toEqual([
      1925, 126, 3096, 2760
    ])
    expect([op.numShufflePartitions, op.numStateStoreInstances]).toEqual([4, 4])
    expect(op.customMetrics.stateOnCurrentVersionSizeBytes).toBe(1272)
    expect(op.customMetrics.loadedMapCacheHitCount).toBe(8)
    expect(op.customMetrics["SnapshotLastUploaded.partition_0_default"]).toBe(-1)
    expect(p.sources).toEqual([
      {
        description: "FileStreamSource[file:/tmp/rs-qW1pWq/in]",
        // The server writes offsets as JSON text; they read as the offset JSON.
        startOffset: { logOffset: 0 },
        endOffset: { logOffset: 1 },
        latestOffset: null,
        numInputRows: 2,
        inputRowsPerSecond: 0.18485996857380532,
        processedRowsPerSecond: 0.26343519494204426,
        metrics: {}
      }
    ])
    expect(p.sink).toEqual({ description: "MemorySink", numOutputRows: 2, metrics: {} })
    expect(p.observedMetrics).toEqual({})
  })

  it("reads the first batch of a query without a name, with observed metrics as objects", () => {
    const p = decode(OBSERVED)
    expect(p.name).toBeNull()
    expect(p.batchId).toBe(0)
    expect(p.numInputRows).toBe(3)
    // Spark's first trigger has no previous one: its input rate is 0.
    expect(p.inputRowsPerSecond).toBe(0)
    expect(p.processedRowsPerSecond).toBe(2.220577350111029)
    expect(p.eventTime).toEqual({})
    expect(p.stateOperators).toEqual([])
    expect(p.sources[0].startOffset).toBeNull()
    expect(p.sources[0].endOffset).toEqual({ logOffset: 0 })
    expect(p.sink).toEqual({ description: "NoopTable", numOutputRows: 3, metrics: {} })
    expect(p.observedMetrics).toEqual({ m: { cnt: 3, total: 6 } })
  })

  it("reads NaN rates as Jackson writes them, and as progress.json leaves them out", () => {
    const nanStrings = AGGREGATION.replace(
      '"inputRowsPerSecond":0.18485996857380532',
      '"inputRowsPerSecond":"NaN"'
    ).replace('"processedRowsPerSecond":0.26343519494204426', '"processedRowsPerSecond":"Infinity"')
    const p = decode(nanStrings)
    expect(p.sources[0].inputRowsPerSecond).toBeNaN()
    expect(p.sources[0].processedRowsPerSecond).toBe(Number.POSITIVE_INFINITY)
    // Spark's sum over the sources carries the NaN.
    expect(p.inputRowsPerSecond).toBeNaN()
    const bare = AGGREGATION.replace('"inputRowsPerSecond":0.18485996857380532', '"inputRowsPerSecond":NaN')
    expect(decode(bare).sources[0].inputRowsPerSecond).toBeNaN()
    expect(decode(bare).numInputRows).toBe(2)
    const left = AGGREGATION.replace('"inputRowsPerSecond":0.18485996857380532,', "")
    expect(decode(left).sources[0].inputRowsPerSecond).toBeNaN()
  })

  it("reads the progress.json form: written totals, parsed offsets, rates left out, maps left out", () => {
    const json = JSON.stringify({
      id: "a",
      runId: "b",
      name: "q",
      timestamp: "2026-01-01T00:00:00.000Z",
      batchId: 7,
      batchDuration: 12,
      numInputRows: 5,
      processedRowsPerSecond: 250.0,
      stateOperators: [],
      sources: [
        {
          description: "RateStreamV2[rowsPerSecond=5]",
          startOffset: 10,
          endOffset: 15,
          latestOffset: 15,
          numInputRows: 5,
          processedRowsPerSecond: 250.0
        }
      ],
      sink: { description: "ConsoleSink", numOutputRows: -1 },
      somethingNew: { x: 1 }
    })
    const p = decode(json)
    expect(p.numInputRows).toBe(5)
    expect(p.inputRowsPerSecond).toBeNaN()
    expect(p.processedRowsPerSecond).toBe(250)
    expect(p.durationMs).toEqual({})
    expect(p.eventTime).toEqual({})
    expect(p.observedMetrics).toEqual({})
    expect(p.sources[0]).toEqual({
      description: "RateStreamV2[rowsPerSecond=5]",
      startOffset: 10,
      endOffset: 15,
      latestOffset: 15,
      numInputRows: 5,
      inputRowsPerSecond: Number.NaN,
      processedRowsPerSecond: 250,
      metrics: {}
    })
    expect(p.sink).toEqual({ description: "ConsoleSink", numOutputRows: -1, metrics: {} })
  })

  it("keeps an offset that is not JSON as its text", () => {
    const p = decode(AGGREGATION.replace('"startOffset":"{\\"logOffset\\":0}"', '"startOffset":"{not json"'))
    expect(p.sources[0].startOffset).toBe("{not json")
  })

  it("fails with a ConnectorError naming what is wrong", () => {
    const notJson = decodeProgress("{")
    expect(Result.isFailure(notJson) && notJson.failure._tag).toBe("ConnectorError")
    const noId = decodeProgress(AGGREGATION.replace('"id":"989dd97e-1f26-484a-8805-ccb78c16fea1",', ""))
    expect(Result.isFailure(noId) && noId.failure.message).toBe(
      "Spark's streaming progress report could not be read: $.id is not a string"
    )
    const badSource = decodeProgress(AGGREGATION.replace('"numInputRows":2', '"numInputRows":"two"'))
    expect(Result.isFailure(badSource) && badSource.failure.message).toBe(
      "Spark's streaming progress report could not be read: $.sources[0].numInputRows is not a number"
    )
    const array = decodeProgress("[]")
    expect(Result.isFailure(array) && array.failure.message).toBe(
      "Spark's streaming progress report could not be read: it is not a JSON object"
    )
  })
})
