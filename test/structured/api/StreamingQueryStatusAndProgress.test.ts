/**
 * Progress and status objects, after Spark's `StreamingQueryStatusAndProgressSuite`: their
 * JSON forms (`prettyJson`, `json`, `toString`) with Spark's exact layout, field order, sorted
 * maps, left-out empty maps and non-finite rates, one-decimal rates in plain notation; reading
 * them back; and the progress a running query reports (state operators on idle triggers,
 * `processedRowsPerSecond`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import { MemoryStream, Session, type StreamingQuery, Trigger } from "../../../mod.ts"
import type { MicroBatchExecution } from "../../../structured/execution/MicroBatchExecution.ts"
import {
  progressFromJson,
  progressJson,
  roundHalfUp1,
  statusJson,
  type StreamingQueryProgress,
  type StreamingQueryStatus,
  withJsonToString
} from "../../../structured/contracts/StreamingQueryProgress.ts"
import { AddData, AdvanceClock, AssertOnQuery, StartStream, StopStream, testStream } from "../../../structured/testing.ts"

const Value = Schema.Struct({ value: Schema.Int })
const quiescent = (q: StreamingQuery) => (q as unknown as MicroBatchExecution).awaitQuiescent()

const stateOp = (name: string, memoryUsedBytes: number, customMetrics: Record<string, number>) => ({
  operatorName: name,
  numRowsTotal: 0,
  numRowsUpdated: 1,
  allUpdatesTimeMs: 1,
  numRowsRemoved: 2,
  allRemovalsTimeMs: 34,
  commitTimeMs: 23,
  memoryUsedBytes,
  numRowsDroppedByWatermark: 0,
  numShufflePartitions: 2,
  numStateStoreInstances: 2,
  customMetrics
})

const customMetrics = { stateOnCurrentVersionSizeBytes: 2, loadedMapCacheHitCount: 1, loadedMapCacheMissCount: 0 }

// Spark's `testProgress1` .. `testProgress5`. The aggregate numbers of a Spark progress are sums
// over its sources; here they are fields, set to the same sums.
const testProgress1: StreamingQueryProgress = {
  id: "2b3fbb4c-4a5e-4b69-9a5a-4d7d41e34bd1",
  runId: "c3c3f6d6-4b6f-4d6e-8d4e-0d1d7a3c5e91",
  name: "myName",
  timestamp: "2016-12-05T20:54:20.827Z",
  batchId: 2,
  batchDuration: 0,
  numInputRows: 678,
  inputRowsPerSecond: 10.0,
  processedRowsPerSecond: Number.POSITIVE_INFINITY, // should not be present in the json
  durationMs: { total: 0 },
  eventTime: {
    max: "2016-12-05T20:54:20.827Z",
    min: "2016-12-05T20:54:20.827Z",
    avg: "2016-12-05T20:54:20.827Z",
    watermark: "2016-12-05T20:54:20.827Z"
  },
  stateOperators: [stateOp("op1", 3, customMetrics)],
  sources: [
    {
      description: "source",
      startOffset: "123",
      endOffset: "456",
      latestOffset: "789",
      numInputRows: 678,
      inputRowsPerSecond: 10.0,
      processedRowsPerSecond: Number.POSITIVE_INFINITY, // should not be present in the json
      metrics: {}
    }
  ],
  sink: { description: "sink", numOutputRows: -1, metrics: {} },
  // Spark's rows (c1 long, c2 double): a JavaScript number carries no long/double
  // distinction, so the double 3.0 is written 3 (see the report); -20.7 below is exact.
  observedMetrics: {
    event1: { c1: 1, c2: 3.5 },
    event2: { rc: 1, min_q: "hello", max_q: "world" }
  }
}

const testProgress2: StreamingQueryProgress = {
  ...testProgress1,
  id: "7d7a8a36-5b0a-4b1f-8f1b-bd1a2b4f7a01",
  runId: "0f8c5a7e-9c3b-4e21-a3f7-5e2b8d9c1a44",
  name: null,
  eventTime: {}, // empty maps should be handled correctly
  inputRowsPerSecond: Number.NaN,
  processedRowsPerSecond: Number.NEGATIVE_INFINITY,
  stateOperators: [stateOp("op2", 2, {})],
  sources: [
    {
      description: "source",
      startOffset: "123",
      endOffset: "456",
      latestOffset: "789",
      numInputRows: 678,
      inputRowsPerSecond: Number.NaN, // should not be present in the json
      processedRowsPerSecond: Number.NEGATIVE_INFINITY, // should not be present in the json
      metrics: {}
    }
  ],
  observedMetrics: {
    event_a: { c1: null, c2: -20.7 },
    event_b1: { rc: 33, min_q: "foo", max_q: "bar" },
    event_b2: { rc: 200, min_q: "fzo", max_q: "baz" }
  }
}

const testProgress3: StreamingQueryProgress = {
  ...testProgress1,
  id: "a6a0b5d4-0e64-4c39-8b1e-62f1e0c7f9aa",
  runId: "b1e7c8d2-3f4a-4b5c-9d6e-7f8a9b0c1d2e",
  timestamp: "2024-05-28T00:00:00.233Z",
  inputRowsPerSecond: 0,
  processedRowsPerSecond: 0,
  numInputRows: 0,
  durationMs: null as unknown as Record<string, number>,
  eventTime: null as unknown as Record<string, string>,
  sources: [],
  observedMetrics: null as unknown as Record<string, unknown>
}

const testProgress4: StreamingQueryProgress = {
  ...testProgress1,
  timestamp: "2025-09-05T20:54:20.827Z",
  inputRowsPerSecond: 6.923076923076923e8, // Large double value having exponentials
  processedRowsPerSecond: 2.923076923076923e8,
  sources: [
    {
      ...testProgress1.sources[0],
      inputRowsPerSecond: 6.923076923076923e8,
      processedRowsPerSecond: 2.923076923076923e8
    }
  ]
}

const testProgress5: StreamingQueryProgress = {
  id: "5f2d7c1e-8a9b-4c3d-b2e1-f0a9c8b7d6e5",
  runId: "e4d3c2b1-a0f9-4e8d-9c7b-6a5f4e3d2c1b",
  name: "KafkaMetricsTest",
  timestamp: "2025-09-23T06:00:00.000Z",
  batchId: 1250,
  batchDuration: 111255,
  numInputRows: 800000,
  inputRowsPerSecond: 75291.2831516931,
  processedRowsPerSecond: 71906.88058963642,
  durationMs: {
    addBatch: 110481,
    commitBatch: 410,
    commitOffsets: 107,
    getBatch: 0,
    latestOffset: 2,
    queryPlanning: 179,
    triggerExecution: 111255,
    walCommit: 74
  },
  eventTime: {},
  stateOperators: [],
  sources: [
    {
      description: "KafkaV2[Subscribe[bigdata_omsTrade_cdc]]",
      startOffset: '{\n    "bigdata_omsTrade_cdc" : {\n        "0" : 18424809459\n    }\n}',
      endOffset: '{\n    "bigdata_omsTrade_cdc" : {\n        "0" : 18432809459\n    }\n}',
      latestOffset: '{\n    "bigdata_omsTrade_cdc" : {\n        "0" : 18703750728\n    }\n}',
      numInputRows: 800000,
      inputRowsPerSecond: 75291.2831516931,
      processedRowsPerSecond: 71906.88058963642,
      metrics: {
        avgOffsetsBehindLatest: "2.70941269E8",
        minOffsetsBehindLatest: "270941269",
        maxOffsetsBehindLatest: "270941269"
      }
    }
  ],
  sink: { description: "DeltaSink[s3://<masked-storage>/delta-source]", numOutputRows: -1, metrics: {} },
  observedMetrics: {}
}

const testStatus: StreamingQueryStatus = { message: "active", isDataAvailable: true, isTriggerActive: false }

/** json4s `compact(parse(json))`: JSON without whitespace, numbers written as they were. */
const compactOf = (json: string): string => {
  let out = ""
  let inString = false
  for (let i = 0; i < json.length; i++) {
    const c = json[i]
    if (inString) {
      out += c
      if (c === "\\") out += json[++i]
      else if (c === '"') inString = false
    } else if (c === '"') {
      inString = true
      out += c
    } else if (c !== " " && c !== "\n" && c !== "\r" && c !== "\t") out += c
  }
  return out
}

describe("StreamingQueryStatusAndProgressSuite", () => {
  it("StreamingQueryProgress - prettyJson", () => {
    const json1 = progressJson(testProgress1)
    assert.strictEqual(
      json1,
      `{
  "id" : "${testProgress1.id}",
  "runId" : "${testProgress1.runId}",
  "name" : "myName",
  "timestamp" : "2016-12-05T20:54:20.827Z",
  "batchId" : 2,
  "batchDuration" : 0,
  "numInputRows" : 678,
  "inputRowsPerSecond" : 10.0,
  "durationMs" : {
    "total" : 0
  },
  "eventTime" : {
    "avg" : "2016-12-05T20:54:20.827Z",
    "max" : "2016-12-05T20:54:20.827Z",
    "min" : "2016-12-05T20:54:20.827Z",
    "watermark" : "2016-12-05T20:54:20.827Z"
  },
  "stateOperators" : [ {
    "operatorName" : "op1",
    "numRowsTotal" : 0,
    "numRowsUpdated" : 1,
    "allUpdatesTimeMs" : 1,
    "numRowsRemoved" : 2,
    "allRemovalsTimeMs" : 34,
    "commitTimeMs" : 23,
    "memoryUsedBytes" : 3,
    "numRowsDroppedByWatermark" : 0,
    "numShufflePartitions" : 2,
    "numStateStoreInstances" : 2,
    "customMetrics" : {
      "loadedMapCacheHitCount" : 1,
      "loadedMapCacheMissCount" : 0,
      "stateOnCurrentVersionSizeBytes" : 2
    }
  } ],
  "sources" : [ {
    "description" : "source",
    "startOffset" : 123,
    "endOffset" : 456,
    "latestOffset" : 789,
    "numInputRows" : 678,
    "inputRowsPerSecond" : 10.0
  } ],
  "sink" : {
    "description" : "sink",
    "numOutputRows" : -1
  },
  "observedMetrics" : {
    "event1" : {
      "c1" : 1,
      "c2" : 3.5
    },
    "event2" : {
      "rc" : 1,
      "min_q" : "hello",
      "max_q" : "world"
    }
  }
}`
    )
    assert.strictEqual(compactOf(json1), progressJson(testProgress1, false))

    const json2 = progressJson(testProgress2)
    assert.strictEqual(
      json2,
      `{
  "id" : "${testProgress2.id}",
  "runId" : "${testProgress2.runId}",
  "name" : null,
  "timestamp" : "2016-12-05T20:54:20.827Z",
  "batchId" : 2,
  "batchDuration" : 0,
  "numInputRows" : 678,
  "durationMs" : {
    "total" : 0
  },
  "stateOperators" : [ {
    "operatorName" : "op2",
    "numRowsTotal" : 0,
    "numRowsUpdated" : 1,
    "allUpdatesTimeMs" : 1,
    "numRowsRemoved" : 2,
    "allRemovalsTimeMs" : 34,
    "commitTimeMs" : 23,
    "memoryUsedBytes" : 2,
    "numRowsDroppedByWatermark" : 0,
    "numShufflePartitions" : 2,
    "numStateStoreInstances" : 2
  } ],
  "sources" : [ {
    "description" : "source",
    "startOffset" : 123,
    "endOffset" : 456,
    "latestOffset" : 789,
    "numInputRows" : 678
  } ],
  "sink" : {
    "description" : "sink",
    "numOutputRows" : -1
  },
  "observedMetrics" : {
    "event_a" : {
      "c1" : null,
      "c2" : -20.7
    },
    "event_b1" : {
      "rc" : 33,
      "min_q" : "foo",
      "max_q" : "bar"
    },
    "event_b2" : {
      "rc" : 200,
      "min_q" : "fzo",
      "max_q" : "baz"
    }
  }
}`
    )
    assert.strictEqual(compactOf(json2), progressJson(testProgress2, false))
  })

  it("StreamingQueryProgress - json", () => {
    for (const p of [testProgress1, testProgress2, testProgress3]) {
      const json = progressJson(p, false)
      assert.strictEqual(compactOf(json), json)
    }
    assert.strictEqual(
      progressJson(testProgress3, false),
      `{"id":"${testProgress3.id}","runId":"${testProgress3.runId}","name":"myName","timestamp":"2024-05-28T00:00:00.233Z",` +
        `"batchId":2,"batchDuration":0,"numInputRows":0,"inputRowsPerSecond":0.0,"processedRowsPerSecond":0.0,` +
        `"stateOperators":[{"operatorName":"op1","numRowsTotal":0,"numRowsUpdated":1,"allUpdatesTimeMs":1,"numRowsRemoved":2,` +
        `"allRemovalsTimeMs":34,"commitTimeMs":23,"memoryUsedBytes":3,"numRowsDroppedByWatermark":0,"numShufflePartitions":2,` +
        `"numStateStoreInstances":2,"customMetrics":{"loadedMapCacheHitCount":1,"loadedMapCacheMissCount":0,` +
        `"stateOnCurrentVersionSizeBytes":2}}],"sources":[],"sink":{"description":"sink","numOutputRows":-1}}`
    )
  })

  it("StreamingQueryProgress - toString", () => {
    // Spark's toString is prettyJson: progressJson's default form, and the toString of the
    // progress objects a query reports (withJsonToString)
    assert.strictEqual(String(withJsonToString({ ...testProgress1 })), progressJson(testProgress1, true))
    assert.strictEqual(String(withJsonToString({ ...testProgress2 })), progressJson(testProgress2, true))
    assert.strictEqual(progressJson(testProgress1), progressJson(testProgress1, true))
  })

  it("StreamingQueryProgress - jsonString and fromJson", () => {
    for (const input of [testProgress1, testProgress2]) {
      const result = progressFromJson(progressJson(input, false))
      assert.strictEqual(result.id, input.id)
      assert.strictEqual(result.runId, input.runId)
      assert.strictEqual(result.name, input.name)
      assert.strictEqual(result.timestamp, input.timestamp)
      assert.strictEqual(result.batchId, input.batchId)
      assert.strictEqual(result.batchDuration, input.batchDuration)
      assert.deepStrictEqual(result.durationMs, input.durationMs)
      assert.deepStrictEqual(result.eventTime, input.eventTime)
      assert.deepStrictEqual(result.stateOperators, input.stateOperators)
      assert.strictEqual(result.sources.length, input.sources.length)
      input.sources.forEach((s1, i) => {
        const s2 = result.sources[i]
        assert.strictEqual(s2.description, s1.description)
        assert.strictEqual(String(s2.startOffset), s1.startOffset)
        assert.strictEqual(String(s2.endOffset), s1.endOffset)
        assert.strictEqual(String(s2.latestOffset), s1.latestOffset)
        assert.strictEqual(s2.numInputRows, s1.numInputRows)
        if (Number.isNaN(s1.inputRowsPerSecond)) assert.isNaN(s2.inputRowsPerSecond)
        else assert.strictEqual(s2.inputRowsPerSecond, s1.inputRowsPerSecond)
        // Spark's JSON leaves infinite rates out: they come back as NaN
        assert.isNaN(s2.processedRowsPerSecond)
        assert.deepStrictEqual(s2.metrics, s1.metrics)
      })
      assert.deepStrictEqual(result.sink, input.sink)
      assert.deepStrictEqual(Object.keys(result.observedMetrics), Object.keys(input.observedMetrics).sort())
      for (const k of Object.keys(input.observedMetrics)) {
        assert.deepStrictEqual(result.observedMetrics[k], input.observedMetrics[k])
      }
    }
  })

  it("StreamingQueryStatus - prettyJson", () => {
    assert.strictEqual(
      statusJson(testStatus),
      `{
  "message" : "active",
  "isDataAvailable" : true,
  "isTriggerActive" : false
}`
    )
  })

  it("StreamingQueryStatus - json", () => {
    assert.strictEqual(statusJson(testStatus, false), `{"message":"active","isDataAvailable":true,"isTriggerActive":false}`)
    assert.strictEqual(compactOf(statusJson(testStatus, false)), statusJson(testStatus, false))
  })

  it("StreamingQueryStatus - toString", () => {
    assert.strictEqual(String(withJsonToString({ ...testStatus })), statusJson(testStatus, true))
    assert.strictEqual(statusJson(testStatus), statusJson(testStatus, true))
  })

  it.effect("the progress and status a query reports print as their pretty JSON", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const q = yield* input.toDF().writeStream.format("noop").start()
      yield* input.addData([{ value: 1 }])
      yield* q.processAllAvailable()
      const p = (yield* q.lastProgress())!
      assert.strictEqual(String(p), progressJson(p))
      assert.isTrue(String(p).startsWith(`{\n  "id" : "${q.id}",\n  "runId" : "${q.runId}",\n  "name" : null,`))
      const status = yield* q.status()
      assert.strictEqual(String(status), statusJson(status))
      // still plain records
      assert.deepStrictEqual(Object.keys(status), ["message", "isDataAvailable", "isTriggerActive"])
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("progress classes should be Serializable", () =>
    Effect.gen(function* () {
      const inputData = yield* MemoryStream.make(Value)
      const query = yield* inputData
        .toDF()
        .groupBy("value")
        .count()
        .writeStream.queryName("progress_serializable_test")
        .format("memory")
        .outputMode("complete")
        .start()
      yield* inputData.addData([{ value: 1 }, { value: 2 }, { value: 3 }])
      yield* query.processAllAvailable()
      const progress = yield* query.recentProgress()
      // Make sure it generates the progress objects we want to test
      assert.isTrue(progress.some((p) => p.sources.length >= 1 && p.stateOperators.length >= 1 && p.sink !== null))
      // Spark ships them to executors and back; here: a structured clone (a worker's postMessage)
      const array = structuredClone(progress)
      assert.strictEqual(array.length, progress.length)
      array.forEach((p1, i) => {
        const p2 = progress[i]
        assert.notStrictEqual(p1, p2)
        assert.strictEqual(progressJson(p1, false), progressJson(p2, false))
      })
      yield* query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-19378: Continue reporting stateOp metrics even if there is no active trigger", () =>
    Effect.gen(function* () {
      const inputData = yield* MemoryStream.make(Value)
      const query = yield* inputData
        .toDF()
        .select("value")
        .groupBy("value")
        .count()
        .writeStream.queryName("metric_continuity")
        .format("memory")
        .outputMode("complete")
        .start()
      yield* inputData.addData([{ value: 1 }, { value: 2 }])
      yield* query.processAllAvailable()
      const progress = (yield* query.lastProgress())!
      assert.isAbove(progress.stateOperators.length, 0)
      // Should emit a new progress every 10 ms
      yield* TestClock.adjust(20)
      yield* quiescent(query)
      const nextProgress = (yield* query.lastProgress())!
      assert.notStrictEqual(nextProgress.timestamp, progress.timestamp)
      assert.strictEqual(nextProgress.numInputRows, 0)
      assert.strictEqual(nextProgress.stateOperators[0].numRowsTotal, 2)
      assert.strictEqual(nextProgress.stateOperators[0].numRowsUpdated, 0)
      assert.strictEqual(nextProgress.sink.numOutputRows, 0)
      yield* query.stop()
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.noDataProgressEventInterval": "10" } })))
  )

  it.effect("SPARK-29973: Make `processedRowsPerSecond` calculated more accurately and meaningfully", () =>
    Effect.gen(function* () {
      const inputData = yield* MemoryStream.make(Value)
      yield* testStream(inputData.toDF(), "append", [
        StartStream({ trigger: Trigger.ProcessingTime(1000) }),
        AdvanceClock(1000),
        AssertOnQuery((q) =>
          Effect.gen(function* () {
            yield* quiescent(q)
            const last = (yield* q.lastProgress())!
            return last.numInputRows === 0 && last.processedRowsPerSecond === 0.0
          })
        ),
        AddData(inputData, { value: 1 }, { value: 2 }),
        AdvanceClock(1000),
        AssertOnQuery((q) =>
          Effect.gen(function* () {
            yield* quiescent(q)
            const last = (yield* q.lastProgress())!
            return last.numInputRows === 2 && last.processedRowsPerSecond === 2000
          })
        ),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it("SPARK-53491: inputRowsPerSecond and processedRowsPerSecond should never be with scientific notation", () => {
    const progress = JSON.parse(progressJson(testProgress4, false)) as Record<string, number>
    const text = progressJson(testProgress4, false)
    const inputText = /"inputRowsPerSecond":([^,}]*)/.exec(text)![1]
    const processedText = /"processedRowsPerSecond":([^,}]*)/.exec(text)![1]
    // This should fail if inputRowsPerSecond / processedRowsPerSecond contain E notation
    assert.notInclude(inputText, "E")
    assert.notInclude(inputText, "e")
    assert.notInclude(processedText, "E")
    assert.notInclude(processedText, "e")
    // BigDecimal(6.923076923076923E8).setScale(1, HALF_UP)
    assert.strictEqual(inputText, "692307692.3")
    assert.strictEqual(processedText, "292307692.3")
    assert.closeTo(progress.inputRowsPerSecond, 692307692.3, 1e-6)
    assert.closeTo(progress.processedRowsPerSecond, 292307692.3, 1e-6)
  })

  it("SPARK-53690: avgOffsetsBehindLatest should never be in scientific notation", () => {
    const metrics = JSON.parse(progressJson(testProgress5, false)).sources[0].metrics as Record<string, string>
    const avgOffsetsBehindLatestJSON = metrics.avgOffsetsBehindLatest
    // This should fail if avgOffsetsBehindLatest contains E notation
    assert.notInclude(avgOffsetsBehindLatestJSON, "E")
    // BigDecimal(2.70941269E8).setScale(1, HALF_UP)
    assert.closeTo(Number(avgOffsetsBehindLatestJSON), 270941269.0, 1e-6)
    // Validating that the pretty JSON of metrics reported is same as defined
    assert.strictEqual(
      progressJson(testProgress5),
      `{
  "id" : "${testProgress5.id}",
  "runId" : "${testProgress5.runId}",
  "name" : "KafkaMetricsTest",
  "timestamp" : "2025-09-23T06:00:00.000Z",
  "batchId" : 1250,
  "batchDuration" : 111255,
  "numInputRows" : 800000,
  "inputRowsPerSecond" : 75291.3,
  "processedRowsPerSecond" : 71906.9,
  "durationMs" : {
    "addBatch" : 110481,
    "commitBatch" : 410,
    "commitOffsets" : 107,
    "getBatch" : 0,
    "latestOffset" : 2,
    "queryPlanning" : 179,
    "triggerExecution" : 111255,
    "walCommit" : 74
  },
  "stateOperators" : [ ],
  "sources" : [ {
    "description" : "KafkaV2[Subscribe[bigdata_omsTrade_cdc]]",
    "startOffset" : {
      "bigdata_omsTrade_cdc" : {
        "0" : 18424809459
      }
    },
    "endOffset" : {
      "bigdata_omsTrade_cdc" : {
        "0" : 18432809459
      }
    },
    "latestOffset" : {
      "bigdata_omsTrade_cdc" : {
        "0" : 18703750728
      }
    },
    "numInputRows" : 800000,
    "inputRowsPerSecond" : 75291.3,
    "processedRowsPerSecond" : 71906.9,
    "metrics" : {
      "avgOffsetsBehindLatest" : "270941269.0",
      "maxOffsetsBehindLatest" : "270941269",
      "minOffsetsBehindLatest" : "270941269"
    }
  } ],
  "sink" : {
    "description" : "DeltaSink[s3://<masked-storage>/delta-source]",
    "numOutputRows" : -1
  }
}`
    )
  })

  it("rates are rounded half-up from the shortest decimal form (Scala's BigDecimal(d))", () => {
    assert.strictEqual(roundHalfUp1(10), "10.0")
    assert.strictEqual(roundHalfUp1(0), "0.0")
    assert.strictEqual(roundHalfUp1(0.25), "0.3")
    // 0.35 is 0.34999... in binary, but Double.toString gives "0.35": Spark writes 0.4
    assert.strictEqual(roundHalfUp1(0.35), "0.4")
    assert.strictEqual(roundHalfUp1(2.05), "2.1")
    assert.strictEqual(roundHalfUp1(1e-7), "0.0")
    assert.strictEqual(roundHalfUp1(9.96), "10.0")
    assert.strictEqual(roundHalfUp1(1e21), "1000000000000000000000.0")
    assert.strictEqual(roundHalfUp1(-2.25), "-2.3")
    assert.strictEqual(roundHalfUp1(-0.01), "0.0")
  })
})
