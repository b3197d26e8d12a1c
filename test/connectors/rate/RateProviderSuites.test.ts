/**
 * The cases of Spark's `RateStreamProviderSuite` and `RatePerMicroBatchProviderSuite` (sql/core/
 * src/test/scala/org/apache/spark/sql/execution/streaming/sources/) that RateSource.test.ts and
 * RatePerMicroBatchSource.test.ts do not cover: the old class name in the registry, the
 * `INCORRECT_END_OFFSET` errors, and `rate-micro-batch` end to end on processing-time,
 * Trigger.Once and Trigger.AvailableNow triggers across restarts. Spark's `StreamManualClock` is
 * Effect's test clock.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { lookupSourceFormat, ReadLimit } from "../../../core/Streaming.ts"
import { RATE_LEGACY_NAME, RateSchema, RateSource, registerRate } from "../../../connectors/rate/mod.ts"
import { F, Session, Trigger } from "../../../mod.ts"
import {
  AdvanceClock,
  CheckLastBatch,
  ExpectFailure,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"

const tempDir = Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-rate-suite-")))
const removeDir = (dir: string) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
const values = (from: number, until: number) => Array.from({ length: until - from }, (_, i) => ({ value: from + i }))

describe("RateStreamProviderSuite", () => {
  it("RateStreamProvider in registry", () => {
    registerRate()
    assert.strictEqual(lookupSourceFormat("rate"), RateSource)
  })

  it("compatible with old path in registry", () => {
    registerRate()
    const ds = lookupSourceFormat("org.apache.spark.sql.execution.streaming.RateSourceProvider")
    assert.isDefined(ds, "Could not find rate source")
    assert.strictEqual(RATE_LEGACY_NAME, "org.apache.spark.sql.execution.streaming.RateSourceProvider")
    assert.strictEqual(ds!.create, RateSource.create)
  })

  it.effect("microbatch - end offset error", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const stream = yield* RateSource.create({
        options: { rowsPerSecond: "100", rampUpTime: "2" },
        schema: RateSchema,
        metadataPath: join(dir, "sources", "0"),
        conf: new Map()
      })
      const maxSeconds = 9223372036854775807n / 100n
      // Spark's endSeconds is Long.MaxValue. Offsets are JS numbers here, where Long.MaxValue
      // rounds to 2^63, so the message ends "9223372036854775808 now." instead of "…807 now.".
      const endSeconds = 2 ** 63
      const e = yield* Effect.flip(stream.getBatch(1, endSeconds))
      assert.strictEqual(e.errorClass, "INCORRECT_END_OFFSET")
      assert.isTrue(
        e.message.startsWith(`[INCORRECT_END_OFFSET] Max offset with 100 rowsPerSecond is ${maxSeconds}, but it's `),
        e.message
      )
      yield* removeDir(dir)
    })
  )

  it.effect("overflow", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = spark.readStream
        .format("rate")
        .option("rowsPerSecond", "9223372036854775807")
        .load()
        .select(F.col("value"))
      // Spark's manual clock moves 2 seconds in one step, so the first batch is (0, 2]. The
      // default trigger here polls the clock every step of the test clock and would first plan
      // (0, 1] (Long.MaxValue rows), so a 2-second processing-time trigger gives Spark's batch.
      yield* testStream(input, "append", [
        StartStream({ trigger: Trigger.ProcessingTime("2 seconds") }),
        AdvanceClock("2 seconds"),
        ExpectFailure(undefined, "INCORRECT_END_OFFSET"),
        ExpectFailure(undefined, "rowsPerSecond")
      ])
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.forceDeleteTempCheckpointLocation": true } })))
  )

  it.effect("microbatch - predetermined batch size", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const stream = yield* RateSource.create({
        options: { rowsPerSecond: "20" },
        schema: RateSchema,
        metadataPath: join(dir, "sources", "0"),
        conf: new Map()
      })
      const data = yield* stream.getBatch(0, 1)
      assert.strictEqual(data.length, 20)
      assert.deepStrictEqual(ReadLimit.allAvailable, stream.defaultReadLimit())
      yield* removeDir(dir)
    })
  )
})

describe("RatePerMicroBatchProviderSuite", () => {
  it.effect("basic", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = spark.readStream
        .format("rate-micro-batch")
        .option("rowsPerBatch", "10")
        .option("startTimestamp", "1000")
        .option("advanceMillisPerBatch", "50")
        .load()
      const at = (ts: number, from: number, until: number) =>
        values(from, until).map((r) => ({ timestamp: new Date(ts), value: r.value }))
      yield* testStream(input, "append", [
        StartStream({ trigger: Trigger.ProcessingTime(10) }),
        AdvanceClock(0),
        CheckLastBatch(...at(1000, 0, 10)),
        AdvanceClock(10),
        CheckLastBatch(...at(1050, 10, 20)),
        AdvanceClock(10),
        CheckLastBatch(...at(1100, 20, 30))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("restart", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir
      const input = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", "10").load().select("value")
      yield* testStream(input, "append", [
        StartStream({ checkpointLocation: dir, trigger: Trigger.ProcessingTime(10) }),
        AdvanceClock(0),
        CheckLastBatch(...values(0, 10)),
        AdvanceClock(10),
        CheckLastBatch(...values(10, 20)),
        StopStream
      ])
      yield* testStream(input, "append", [
        StartStream({ checkpointLocation: dir, trigger: Trigger.ProcessingTime(10) }),
        AdvanceClock(0),
        CheckLastBatch(...values(20, 30))
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const [name, trigger] of [
    ["Trigger.Once", Trigger.Once()],
    ["Trigger.AvailableNow", Trigger.AvailableNow()]
  ] as const) {
    it.effect(name, () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const dir = yield* tempDir
        const input = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", "10").load().select("value")
        yield* testStream(input, "append", [
          StartStream({ checkpointLocation: dir, trigger: Trigger.ProcessingTime(10) }),
          AdvanceClock(0),
          CheckLastBatch(...values(0, 10)),
          StopStream
        ])
        yield* testStream(input, "append", [
          StartStream({ checkpointLocation: dir, trigger }),
          CheckLastBatch(...values(10, 20)),
          StopStream
        ])
        yield* testStream(input, "append", [
          StartStream({ checkpointLocation: dir, trigger: Trigger.ProcessingTime(10) }),
          AdvanceClock(0),
          CheckLastBatch(...values(20, 30)),
          StopStream
        ])
        yield* removeDir(dir)
      }).pipe(Effect.provide(Session.layer()))
    )
  }
})
