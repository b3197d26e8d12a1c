/**
 * The continuous `rate` source against Spark's `RateStreamContinuousStream` and the continuous
 * parts of RateStreamProviderSuite: per-partition values `p, p + N, …`, the read interval, row
 * timestamps, the initial offset, merging and decoding offsets, and the partition-count check.
 * Time is Effect's test clock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { ConnectorError } from "../../../core/Errors.ts"
import { lookupSourceFormat } from "../../../core/Streaming.ts"
import {
  initialRateOffset,
  makeRateContinuousSource,
  RateSchema,
  rateReader,
  readTimeIncrementMs,
  registerRate
} from "../../../connectors/rate/mod.ts"

describe("RateContinuousSource", () => {
  it("reads every floor(1000 / (rowsPerSecond / numPartitions)) ms", () => {
    assert.strictEqual(readTimeIncrementMs(10, 2), 200)
    assert.strictEqual(readTimeIncrementMs(5, 2), 400)
    assert.strictEqual(readTimeIncrementMs(3, 1), 333)
    // above 1000 rows per second per partition Spark's interval truncates to 0
    assert.strictEqual(readTimeIncrementMs(5000, 2), 0)
  })

  it("the initial offset starts each partition one step before its index (Spark's createInitialOffset)", () => {
    assert.strictEqual(
      JSON.stringify(initialRateOffset(3, 1000)),
      '{"0":{"value":-3,"runTimeMs":1000},"1":{"value":-2,"runTimeMs":1000},"2":{"value":-1,"runTimeMs":1000}}'
    )
  })

  it("partition p emits p, p + N, p + 2N, … each stamped with the time it falls due", () => {
    const n = 3
    const readers = [0, 1, 2].map((p) => rateReader({ partition: p, value: p - n, runTimeMs: 0 }, n, 300))
    // nothing is due before the first interval
    assert.deepStrictEqual(readers[0].poll(299, 100), [])
    assert.deepStrictEqual(readers[0].poll(900, 100), [
      [300, 0],
      [600, 3],
      [900, 6]
    ])
    assert.deepStrictEqual(readers[1].poll(900, 2), [
      [300, 1],
      [600, 4]
    ])
    assert.deepStrictEqual(readers[1].poll(900, 2), [[900, 7]])
    assert.deepStrictEqual(readers[2].poll(600, 100), [
      [300, 2],
      [600, 5]
    ])
    assert.deepStrictEqual(readers[0].offset(), { partition: 0, value: 6, runTimeMs: 900 })
    assert.deepStrictEqual(readers[2].offset(), { partition: 2, value: 5, runTimeMs: 600 })
  })

  it.effect("awaitData sleeps on the clock until the next row is due", () =>
    Effect.gen(function* () {
      const reader = rateReader({ partition: 0, value: -1, runTimeMs: 0 }, 1, 250)
      const waiting = yield* Effect.forkChild(reader.awaitData(0))
      yield* TestClock.adjust("249 millis")
      assert.isUndefined(waiting.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(waiting)
      assert.deepStrictEqual(reader.poll(250, 10), [[250, 0]])
    })
  )

  it.effect("a restart resumes every partition from the merged offset", () =>
    Effect.gen(function* () {
      const source = makeRateContinuousSource(4, 2, 1000)
      assert.deepStrictEqual(source.schema, RateSchema)
      const readers = yield* source.createReaders(yield* source.initialOffset())
      readers[0].poll(2000, 100)
      readers[1].poll(1500, 100)
      const merged = source.mergeOffsets(readers.map((r) => r.offset()))
      assert.strictEqual(JSON.stringify(merged), '{"0":{"value":2,"runTimeMs":2000},"1":{"value":1,"runTimeMs":1500}}')
      const decoded = yield* source.decodeOffset(JSON.parse(JSON.stringify(merged)))
      const again = yield* source.createReaders(decoded)
      assert.deepStrictEqual(again[0].poll(2500, 100), [[2500, 4]])
      assert.deepStrictEqual(again[1].poll(2500, 100), [
        [2000, 3],
        [2500, 5]
      ])
    })
  )

  it.effect("numPartitions cannot change, with Spark's message; a malformed offset is refused", () =>
    Effect.gen(function* () {
      const two = makeRateContinuousSource(10, 2, 0)
      const three = makeRateContinuousSource(10, 3, 0)
      const error = yield* Effect.flip(three.createReaders(yield* two.initialOffset()))
      assert.instanceOf(error, ConnectorError)
      assert.strictEqual(
        error.message,
        "The previous run contained 2 partitions, but 3 partitions are currently configured. The numPartitions option cannot be changed."
      )
      const bad = yield* Effect.flip(two.decodeOffset({ "0": { value: "x" } }))
      assert.instanceOf(bad, ConnectorError)
    })
  )

  it("the registered rate format reads continuously", () => {
    registerRate()
    assert.isDefined(lookupSourceFormat("rate")?.continuous)
    assert.isUndefined(lookupSourceFormat("rate-micro-batch")?.continuous)
  })
})
