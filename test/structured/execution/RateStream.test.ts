/**
 * The `rate` source end to end on the test clock, after Spark's `RateStreamProviderSuite`
 * ("microbatch - basic"): `value` counts up from 0 at `rowsPerSecond`, each value stamped
 * `start + value * 1000 / rowsPerSecond` ms, and a restarted query continues from its checkpoint.
 */
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { F, Session, Trigger } from "../../../mod.ts"
import {
  AdvanceClock,
  AssertOnQuery,
  CheckAnswer,
  CheckLastBatch,
  CheckNewAnswer,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"

const rows = (from: number, to: number, msPerValue: number, startMs = 0) =>
  Array.from({ length: to - from }, (_, i) => ({
    timestamp: new Date(startMs + (from + i) * msPerValue),
    value: from + i
  }))

describe("the rate source", () => {
  it.effect("rowsPerSecond = 2: after 3 seconds the sink has 0..5, 500 ms apart", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = spark.readStream.format("rate").option("rowsPerSecond", 2).load()
      yield* testStream(input, "append", [
        AdvanceClock("3 seconds"),
        CheckAnswer(...rows(0, 6, 500)),
        AssertOnQuery(
          (q) =>
            Effect.map(
              q.recentProgress(),
              (ps) => ps.filter((p) => p.numInputRows > 0).reduce((n, p) => n + p.numInputRows, 0) === 6
            ),
          "six input rows in all"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("microbatch - basic: 10 rows per second, and a restart continues the values and timestamps", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = join(tmpdir(), `tributary-rate-${Math.random().toString(36).slice(2)}`)
      const input = spark.readStream.format("rate").option("rowsPerSecond", "10").load()
      yield* testStream(input, "append", [
        StartStream({ checkpointLocation: dir }),
        AdvanceClock("1 second"),
        CheckLastBatch(...rows(0, 10, 100)),
        StopStream,
        StartStream({ checkpointLocation: dir }),
        AdvanceClock("1 second"),
        CheckNewAnswer(...rows(10, 20, 100))
      ])
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("the start time is the clock when the query first starts", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* TestClock.adjust("1 minute")
      const input = spark.readStream
        .format("rate")
        .option("rowsPerSecond", 4)
        .load()
        .select("value", F.col("timestamp"))
      yield* testStream(input, "append", [
        StartStream({ trigger: Trigger.ProcessingTime("1 second") }),
        AdvanceClock("1 second"),
        CheckAnswer(...rows(0, 4, 250, 60_000).map(({ value, timestamp }) => ({ value, timestamp }))),
        AdvanceClock("1 second"),
        CheckLastBatch(...rows(4, 8, 250, 60_000).map(({ value, timestamp }) => ({ value, timestamp })))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("options are checked by start()", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.readStream.format("rate").option("rowsPerSecond", -1).load()
      const e = yield* df.writeStream.format("noop").start().pipe(Effect.flip)
      assert.strictEqual(e._tag, "AnalysisError")
      assert.include(e.message, "rowsPerSecond")
      assert.deepStrictEqual(yield* spark.streams.active(), [])
    }).pipe(Effect.provide(Session.layer()))
  )
})
