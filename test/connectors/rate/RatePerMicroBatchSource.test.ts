/**
 * The `rate-micro-batch` source against Spark's RatePerMicroBatchProviderSuite: fixed rows per
 * batch whatever the clock, Spark's offset JSON, restart from logged offsets, Trigger.AvailableNow,
 * partition interleaving, and the option checks with Spark's messages.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as T from "../../../core/DataType.ts"
import { AnalysisError, type ConnectorError } from "../../../core/Errors.ts"
import type { Options } from "../../../core/Formats.ts"
import type { InternalRow } from "../../../core/Row.ts"
import { lookupSourceFormat, type MicroBatchSource, type Offset, ReadLimit } from "../../../core/Streaming.ts"
import {
  parseRatePerMicroBatchOptions,
  RatePerMicroBatchSource,
  RateSchema,
  registerRate
} from "../../../connectors/rate/mod.ts"

const create = (options: Options): Effect.Effect<MicroBatchSource, AnalysisError | ConnectorError> =>
  RatePerMicroBatchSource.create({ options, schema: RateSchema, metadataPath: "/nonexistent/unused", conf: new Map() })

/** One micro-batch from `start`: its end offset (as the offset log would hold it) and rows. */
const batch = (source: MicroBatchSource, start: Offset) =>
  Effect.gen(function* () {
    const end = yield* source.latestOffset(start, source.defaultReadLimit())
    const rows = yield* source.getBatch(start, end)
    return { end, json: JSON.stringify(end), rows }
  })

const rowsAt = (ts: number, from: number, until: number): Array<InternalRow> =>
  Array.from({ length: until - from }, (_, i) => [ts, from + i])

describe("rate-micro-batch source", () => {
  it("registers under `rate-micro-batch` with the rate schema", () => {
    registerRate()
    assert.strictEqual(lookupSourceFormat("rate-micro-batch"), RatePerMicroBatchSource)
    assert.deepStrictEqual(RatePerMicroBatchSource.schema(undefined, { rowsPerBatch: "1" }), RateSchema)
  })

  it.effect("basic: 10 rows per batch, timestamps advancing 50 ms from 1000", () =>
    Effect.gen(function* () {
      const source = yield* create({ rowsPerBatch: "10", startTimestamp: "1000", advanceMillisPerBatch: "50" })
      const start = yield* source.initialOffset()
      assert.strictEqual(JSON.stringify(start), '{"offset":0,"timestamp":1000}')
      const b0 = yield* batch(source, start)
      assert.strictEqual(b0.json, '{"offset":10,"timestamp":1050}')
      assert.deepStrictEqual(b0.rows, rowsAt(1000, 0, 10))
      const b1 = yield* batch(source, b0.end)
      assert.strictEqual(b1.json, '{"offset":20,"timestamp":1100}')
      assert.deepStrictEqual(b1.rows, rowsAt(1050, 10, 20))
      const b2 = yield* batch(source, b1.end)
      assert.deepStrictEqual(b2.rows, rowsAt(1100, 20, 30))
    })
  )

  it.effect("ignores the clock and the read limit; the default limit is maxRows(rowsPerBatch)", () =>
    Effect.gen(function* () {
      const source = yield* create({ rowsPerBatch: "10" })
      assert.deepStrictEqual(source.defaultReadLimit(), ReadLimit.maxRows(10))
      yield* TestClock.adjust("1 hour")
      const start = yield* source.initialOffset()
      assert.deepStrictEqual(yield* source.latestOffset(start, ReadLimit.maxRows(3)), { offset: 10, timestamp: 1000 })
      assert.deepStrictEqual(yield* source.latestOffset(start, ReadLimit.allAvailable), { offset: 10, timestamp: 1000 })
      assert.deepStrictEqual(yield* source.getBatch(start, start), [])
    })
  )

  it.effect("restart: continues from the offset read back from the log", () =>
    Effect.gen(function* () {
      const first = yield* create({ rowsPerBatch: "10" })
      const b0 = yield* batch(first, yield* first.initialOffset())
      assert.deepStrictEqual(b0.rows, rowsAt(0, 0, 10))
      const b1 = yield* batch(first, b0.end)
      assert.deepStrictEqual(b1.rows, rowsAt(1000, 10, 20))
      yield* first.stop()

      const second = yield* create({ rowsPerBatch: "10" })
      const logged = yield* second.decodeOffset(JSON.parse(b1.json))
      // Replaying the last logged batch gives the same rows; the next batch continues.
      assert.deepStrictEqual(yield* second.getBatch(yield* second.decodeOffset(JSON.parse(b0.json)), logged), b1.rows)
      const b2 = yield* batch(second, logged)
      assert.strictEqual(b2.json, '{"offset":30,"timestamp":3000}')
      assert.deepStrictEqual(b2.rows, rowsAt(2000, 20, 30))
    })
  )

  it.effect("Trigger.AvailableNow: exactly one batch, from the first start offset asked", () =>
    Effect.gen(function* () {
      const source = yield* create({ rowsPerBatch: "10" })
      const resumed = { offset: 10, timestamp: 1000 }
      yield* source.prepareForTriggerAvailableNow!()
      const end = yield* source.latestOffset(resumed, source.defaultReadLimit())
      assert.deepStrictEqual(end, { offset: 20, timestamp: 2000 })
      assert.deepStrictEqual(yield* source.getBatch(resumed, end), rowsAt(1000, 10, 20))
      // Nothing more: the end is fixed.
      assert.deepStrictEqual(yield* source.latestOffset(end, source.defaultReadLimit()), end)
    })
  )

  it.effect("numPartitions: values dealt round robin, read partition after partition", () =>
    Effect.gen(function* () {
      const source = yield* create({ rowsPerBatch: "10", numPartitions: "6" })
      const b0 = yield* batch(source, yield* source.initialOffset())
      assert.deepStrictEqual(
        b0.rows.map((r) => r[1]),
        [0, 6, 1, 7, 2, 8, 3, 9, 4, 5]
      )
      assert.isTrue(b0.rows.every((r) => r[0] === 0))
    })
  )

  it.effect("offsets that are not Spark's {offset, timestamp} are refused", () =>
    Effect.gen(function* () {
      const source = yield* create({ rowsPerBatch: "1" })
      const e = yield* Effect.flip(source.decodeOffset(5))
      assert.strictEqual(e._tag, "ConnectorError")
      assert.deepStrictEqual(yield* source.decodeOffset({ offset: 5, timestamp: 7, extra: 1 }), {
        offset: 5,
        timestamp: 7
      })
      const backwards = yield* Effect.flip(source.getBatch({ offset: 5, timestamp: 0 }, { offset: 4, timestamp: 0 }))
      assert.strictEqual(backwards.message, "startOffset(5) > endOffset(4)")
    })
  )

  it.effect("description is Spark's toString", () =>
    Effect.gen(function* () {
      const source = yield* create({ rowsPerBatch: "10", startTimestamp: "1000", advanceMillisPerBatch: "50" })
      assert.strictEqual(
        source.description,
        "RatePerMicroBatchStream[rowsPerBatch=10, numPartitions=1, startTimestamp=1000, advanceMsPerBatch=50]"
      )
    })
  )
})

describe("rate-micro-batch options", () => {
  it("illegal option values fail with Spark's messages, from schema() and from create", async () => {
    const cases: ReadonlyArray<readonly [Options, string]> = [
      [{}, "Invalid value '0'. The option 'rowsPerBatch' must be positive"],
      [{ rowsPerBatch: "-1" }, "Invalid value '-1'. The option 'rowsPerBatch' must be positive"],
      [{ rowsPerBatch: "0" }, "Invalid value '0'. The option 'rowsPerBatch' must be positive"],
      [{ rowsPerBatch: "1", numPartitions: "-1" }, "Invalid value '-1'. The option 'numPartitions' must be positive"],
      [{ rowsPerBatch: "1", numPartitions: "0" }, "Invalid value '0'. The option 'numPartitions' must be positive"],
      [
        { rowsPerBatch: "1", advanceMillisPerBatch: "-1" },
        "Invalid value '-1'. The option 'advanceMillisPerBatch' must be non-negative"
      ],
      [
        { rowsPerBatch: "1", startTimestamp: "-1" },
        "Invalid value '-1'. The option 'startTimestamp' must be non-negative"
      ],
      [{ rowsPerBatch: "1", advanceMillisPerBatch: "1.5" }, 'For input string: "1.5"']
    ]
    for (const [options, message] of cases) {
      const fromSchema = RatePerMicroBatchSource.schema(undefined, options)
      assert.instanceOf(fromSchema, AnalysisError)
      assert.strictEqual((fromSchema as AnalysisError).reason, "InvalidArgument")
      assert.strictEqual((fromSchema as AnalysisError).message, message)
      const fromCreate = await Effect.runPromise(Effect.flip(create(options)))
      assert.strictEqual(fromCreate.message, message)
    }
  })

  it("zero is allowed for startTimestamp and advanceMillisPerBatch", () => {
    assert.deepStrictEqual(
      parseRatePerMicroBatchOptions({ rowsPerBatch: "3", startTimestamp: "0", advanceMillisPerBatch: "0" }),
      {
        rowsPerBatch: 3,
        numPartitions: 1,
        startTimestamp: 0,
        advanceMillisPerBatch: 0
      }
    )
  })

  it("user-specified schema given", () => {
    const e = RatePerMicroBatchSource.schema(T.struct([T.field("id", T.LongType, false)]), { rowsPerBatch: "10" })
    assert.instanceOf(e, AnalysisError)
    assert.strictEqual(
      (e as AnalysisError).message,
      "RatePerMicroBatchProvider source does not support user-specified schema."
    )
  })
})
