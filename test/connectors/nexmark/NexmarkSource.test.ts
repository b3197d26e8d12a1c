/**
 * The `nexmark` source and batch format: registration and schema, the options and their errors,
 * event-count offsets (replayable, never going back, decoded from the log), `maxEvents`,
 * `maxOffsetsPerTrigger`, `eventsPerSecond` on Effect's test clock with the start time kept in
 * the source's metadata folder, `Trigger.AvailableNow`, and the batch read giving the stream's
 * events.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { F, Session, Trigger } from "../../../mod.ts"
import {
  AdvanceClock,
  AssertOnQuery,
  CheckNewAnswer,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"
import { lookupBatchFormat } from "../../../core/Formats.ts"
import type { Options } from "../../../core/Formats.ts"
import { AnalysisError, type ConnectorError } from "../../../core/Errors.ts"
import { lookupSourceFormat, type MicroBatchSource, ReadLimit } from "../../../core/Streaming.ts"
import {
  availableEvents,
  BEAM_BASE_TIME_MS,
  DEFAULT_GENERATOR_CONFIG,
  NexmarkBatch,
  NexmarkGenerator,
  NexmarkSchema,
  NexmarkSource,
  parseNexmarkOptions
} from "../../../connectors/nexmark/mod.ts"

const tempDir = Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "tributary-nexmark-")))

const create = (
  options: Options,
  metadataPath: string
): Effect.Effect<MicroBatchSource, AnalysisError | ConnectorError> =>
  NexmarkSource.create({ options, schema: NexmarkSchema, metadataPath, conf: new Map() })

const fresh = (options: Options) => Effect.flatMap(tempDir, (dir) => create(options, path.join(dir, "sources", "0")))

const errorOf = (r: unknown): AnalysisError => {
  if (!(r instanceof AnalysisError)) throw new Error(`expected an AnalysisError, got ${JSON.stringify(r)}`)
  return r
}

const gen = (overrides: Partial<typeof DEFAULT_GENERATOR_CONFIG> = {}) =>
  new NexmarkGenerator({ ...DEFAULT_GENERATOR_CONFIG, ...overrides })

describe("nexmark source: registration, schema and options", () => {
  it("registers as a streaming source and a batch format, with Flink's Nexmark table", () => {
    assert.strictEqual(lookupSourceFormat("NEXMARK"), NexmarkSource)
    assert.strictEqual(lookupBatchFormat("nexmark"), NexmarkBatch)
    assert.deepStrictEqual(
      NexmarkSchema.fields.map((f) => [f.name, f.dataType._tag]),
      [
        ["event_type", "integer"],
        ["person", "struct"],
        ["auction", "struct"],
        ["bid", "struct"],
        ["dateTime", "timestamp"]
      ]
    )
    const names = (i: number) =>
      (NexmarkSchema.fields[i].dataType as { fields: ReadonlyArray<{ name: string }> }).fields.map((f) => f.name)
    assert.deepStrictEqual(names(1), ["id", "name", "emailAddress", "creditCard", "city", "state", "dateTime", "extra"])
    assert.deepStrictEqual(names(2), [
      "id",
      "itemName",
      "description",
      "initialBid",
      "reserve",
      "dateTime",
      "expires",
      "seller",
      "category",
      "extra"
    ])
    assert.deepStrictEqual(names(3), ["auction", "bidder", "price", "channel", "url", "dateTime", "extra"])
    assert.deepStrictEqual(NexmarkSource.schema(undefined, {}), NexmarkSchema)
    const refused = errorOf(NexmarkSource.schema(NexmarkSchema, {}))
    assert.strictEqual(refused.errorClass, "_LEGACY_ERROR_TEMP_2242")
  })

  it("defaults to Beam's configuration; firstEventRate follows eventsPerSecond; keys are case-insensitive", () => {
    const d = parseNexmarkOptions({ maxEvents: "1000" })
    assert(!(d instanceof AnalysisError))
    assert.deepStrictEqual(d.generator, DEFAULT_GENERATOR_CONFIG)
    assert.strictEqual(d.maxEvents, 1000)
    assert.strictEqual(d.eventsPerSecond, undefined) // all at once
    const unbounded = parseNexmarkOptions({})
    assert(!(unbounded instanceof AnalysisError))
    assert.strictEqual(unbounded.eventsPerSecond, 10_000) // endless, at the event-time rate
    const paced = parseNexmarkOptions({ EVENTSPERSECOND: "250", Seed: "-3", basetime: "2020-01-01T00:00:00Z" })
    assert(!(paced instanceof AnalysisError))
    assert.strictEqual(paced.eventsPerSecond, 250)
    assert.strictEqual(paced.generator.firstEventRate, 250)
    assert.strictEqual(paced.generator.seed, -3n)
    assert.strictEqual(paced.generator.baseTimeMs, Date.UTC(2020, 0, 1))
    const both = parseNexmarkOptions({
      eventsPerSecond: "250",
      firstEventRate: "1000",
      hotAuctionRatio: "9",
      avgBidByteSize: "0",
      baseTime: "0",
      maxOffsetsPerTrigger: "77"
    })
    assert(!(both instanceof AnalysisError))
    assert.strictEqual(both.generator.firstEventRate, 1000)
    assert.strictEqual(both.generator.hotAuctionRatio, 9)
    assert.strictEqual(both.generator.avgBidByteSize, 0)
    assert.strictEqual(both.generator.baseTimeMs, 0)
    assert.strictEqual(both.maxOffsetsPerTrigger, 77)
    assert.strictEqual(BEAM_BASE_TIME_MS, Date.UTC(2015, 6, 15))
  })

  it("refuses bad values with a message naming the option", () => {
    const cases: ReadonlyArray<readonly [Options, string]> = [
      [{ eventsPerSecond: "-1" }, "The option 'eventsPerSecond' must be positive"],
      [{ eventsPerSecond: "0" }, "The option 'eventsPerSecond' must be positive"],
      [{ eventsPerSecond: "ten" }, "The option 'eventsPerSecond' must be a whole number"],
      [{ maxEvents: "1.5" }, "The option 'maxEvents' must be a whole number"],
      [{ maxEvents: "0" }, "The option 'maxEvents' must be positive"],
      [{ maxEvents: "9007199254740992" }, "The option 'maxEvents' must be at most 9007199254740991"],
      [{ seed: "x" }, "The option 'seed' must be a whole number"],
      [{ seed: "9223372036854775808" }, "The option 'seed' must fit in a long"],
      [{ firstEventRate: "2147483648" }, "The option 'firstEventRate' must be at most 2147483647"],
      [{ hotAuctionRatio: "0" }, "The option 'hotAuctionRatio' must be positive"],
      [{ numActivePeople: "-5" }, "The option 'numActivePeople' must be positive"],
      [{ avgBidByteSize: "-1" }, "The option 'avgBidByteSize' must be non-negative"],
      [{ baseTime: "yesterday" }, "The option 'baseTime' must be epoch milliseconds or an ISO-8601 timestamp"],
      [{ maxOffsetsPerTrigger: "0" }, "The option 'maxOffsetsPerTrigger' must be positive"]
    ]
    for (const [options, message] of cases) {
      const e = errorOf(parseNexmarkOptions(options))
      assert.strictEqual(e.reason, "InvalidArgument")
      assert.include(e.message, message, JSON.stringify(options))
      assert.include(errorOf(NexmarkSource.schema(undefined, options)).message, message)
    }
  })

  it.effect("a bad option fails the query's start with the AnalysisError", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.readStream.format("nexmark").option("eventsPerSecond", "-1").load()
      const e = yield* Effect.flip(df.writeStream.format("noop").start())
      assert.strictEqual(e._tag, "AnalysisError")
      assert.include(e.message, "eventsPerSecond")
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("nexmark source: offsets and batches", () => {
  it.effect("maxEvents without eventsPerSecond: every event at once, offsets are event counts", () =>
    Effect.gen(function* () {
      const source = yield* fresh({ maxEvents: "1000" })
      assert.strictEqual(yield* source.initialOffset(), 0)
      assert.strictEqual(yield* source.latestOffset(0, ReadLimit.allAvailable), 1000)
      assert.strictEqual(yield* source.latestOffset(1000, ReadLimit.allAvailable), 1000)
      const rows = yield* source.getBatch(0, 1000)
      assert.strictEqual(rows.length, 1000)
      assert.deepStrictEqual(rows, gen().rows(0, 1000))
      // any range again, on its own
      assert.deepStrictEqual(yield* source.getBatch(370, 420), gen().rows(370, 420))
      assert.deepStrictEqual(yield* source.getBatch(5, 5), [])
      assert.match(source.description, /^NexmarkSource\[eventsPerSecond=unlimited, maxEvents=1000, seed=0/)
    })
  )

  it.effect("maxOffsetsPerTrigger caps a batch; a MaxRows limit caps it too", () =>
    Effect.gen(function* () {
      const source = yield* fresh({ maxEvents: "1000", maxOffsetsPerTrigger: "300" })
      const limit = source.defaultReadLimit()
      assert.deepStrictEqual(limit, ReadLimit.maxRows(300))
      const ends: Array<number> = []
      let at = 0
      for (;;) {
        const end = (yield* source.latestOffset(at, limit)) as number
        if (end === at) break
        ends.push(end)
        at = end
      }
      assert.deepStrictEqual(ends, [300, 600, 900, 1000])
      assert.strictEqual(
        yield* source.latestOffset(0, { _tag: "Composite", limits: [ReadLimit.maxRows(50), ReadLimit.maxRows(70)] }),
        50
      )
    })
  )

  it.effect("decodes offsets from the log and refuses what is not an event count", () =>
    Effect.gen(function* () {
      const source = yield* fresh({ maxEvents: "10" })
      assert.strictEqual(yield* source.decodeOffset(7), 7)
      for (const bad of [-1, 1.5, "7", null, { offset: 7 }]) {
        const e = yield* Effect.flip(source.decodeOffset(bad))
        assert.strictEqual(e._tag, "ConnectorError")
        assert.include(e.message, "Invalid nexmark source offset")
      }
      const e = yield* Effect.flip(source.getBatch(8, 3))
      assert.include(e.message, "starts at 8, after its end 3")
      const f = yield* Effect.flip(source.latestOffset("x", ReadLimit.allAvailable))
      assert.include(f.message, "Invalid nexmark source offset")
    })
  )

  it("availableEvents: event n is due at n / eventsPerSecond seconds, capped at maxEvents", () => {
    assert.strictEqual(availableEvents(0, 10, undefined), 0)
    assert.strictEqual(availableEvents(-5, 10, undefined), 0)
    assert.strictEqual(availableEvents(99, 10, undefined), 0)
    assert.strictEqual(availableEvents(100, 10, undefined), 1)
    assert.strictEqual(availableEvents(1500, 10, undefined), 15)
    assert.strictEqual(availableEvents(1500, 10, 12), 12)
    assert.strictEqual(availableEvents(1000, 3, undefined), 3)
  })

  it.effect("eventsPerSecond: events become available as the clock advances", () =>
    Effect.gen(function* () {
      const source = yield* fresh({ eventsPerSecond: "100", maxEvents: "450" })
      assert.strictEqual(yield* source.latestOffset(0, ReadLimit.allAvailable), 0)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* source.latestOffset(0, ReadLimit.allAvailable), 100)
      yield* TestClock.adjust("2500 millis")
      assert.strictEqual(yield* source.latestOffset(100, ReadLimit.allAvailable), 350)
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* source.latestOffset(350, ReadLimit.allAvailable), 450)
      // event times follow the rate: 100 a second from Beam's base time
      const rows = yield* source.getBatch(100, 350)
      assert.strictEqual(rows[0][4], BEAM_BASE_TIME_MS + 1000)
      assert.strictEqual(rows[249][4], BEAM_BASE_TIME_MS + 3490)
    })
  )

  it.effect("restart: the start time is kept in the metadata folder, so the same offsets come back", () =>
    Effect.gen(function* () {
      const dir = path.join(yield* tempDir, "sources", "0")
      yield* TestClock.adjust("1234 millis")
      const first = yield* create({ eventsPerSecond: "10" }, dir)
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(yield* first.latestOffset(0, ReadLimit.allAvailable), 20)
      const batch = yield* first.getBatch(0, 20)
      assert.strictEqual(yield* Effect.promise(() => fs.readFile(path.join(dir, "0"), "utf8")), "v1\n1234")
      assert.deepStrictEqual(
        (yield* Effect.promise(() => fs.readdir(dir))).filter((n) => n.endsWith(".tmp")),
        []
      )
      yield* first.stop()
      yield* TestClock.adjust("5 seconds")
      const second = yield* create({ eventsPerSecond: "10" }, dir)
      assert.deepStrictEqual(yield* second.getBatch(0, 20), batch)
      assert.strictEqual(yield* second.latestOffset(20, ReadLimit.allAvailable), 70)
    })
  )

  it.effect("a replayed batch's end is never offered again, even when the clock is behind it", () =>
    Effect.gen(function* () {
      const dir = path.join(yield* tempDir, "s")
      yield* Effect.promise(async () => {
        await fs.mkdir(dir, { recursive: true })
        await fs.writeFile(path.join(dir, "0"), "v1\n50000")
      })
      const source = yield* create({ eventsPerSecond: "10" }, dir) // the clock is at 0
      assert.strictEqual(yield* source.latestOffset(0, ReadLimit.allAvailable), 0)
      yield* source.getBatch(0, 30)
      assert.strictEqual(yield* source.latestOffset(30, ReadLimit.allAvailable), 30)
    })
  )

  it.effect("a malformed start time file fails with a ConnectorError naming the file", () =>
    Effect.gen(function* () {
      const dir = path.join(yield* tempDir, "s")
      yield* Effect.promise(async () => {
        await fs.mkdir(dir, { recursive: true })
        await fs.writeFile(path.join(dir, "0"), "v1\nsoon")
      })
      const e = yield* Effect.flip(create({ eventsPerSecond: "10" }, dir))
      assert.strictEqual(e._tag, "ConnectorError")
      assert.include(e.message, path.join(dir, "0"))
      assert.include(e.message, "malformed")
      yield* Effect.promise(() => fs.writeFile(path.join(dir, "0"), "v9\n5"))
      const v = yield* Effect.flip(create({ eventsPerSecond: "10" }, dir))
      assert.include(v.message, "log version v9")
    })
  )

  it.effect("Trigger.AvailableNow fixes the end when the query starts", () =>
    Effect.gen(function* () {
      const source = yield* fresh({ eventsPerSecond: "100", maxOffsetsPerTrigger: "40" })
      yield* TestClock.adjust("1 second")
      yield* source.prepareForTriggerAvailableNow!()
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(source.reportLatestOffset!(), 100)
      assert.strictEqual(yield* source.latestOffset(0, source.defaultReadLimit()), 40)
      assert.strictEqual(yield* source.latestOffset(80, source.defaultReadLimit()), 100)
      assert.strictEqual(yield* source.latestOffset(100, source.defaultReadLimit()), 100)
    })
  )
})

describe("nexmark batch read and streaming query", () => {
  it.effect("spark.read.format(nexmark) gives the events a stream with the same options gives", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const options = { maxEvents: "2000", seed: "5", firstEventRate: "500" }
      const batch = yield* spark.read.format("nexmark").options(options).load()
      assert.deepStrictEqual(batch.columns, ["event_type", "person", "auction", "bid", "dateTime"])
      const counts = yield* batch.groupBy("event_type").count().orderBy("event_type").collect()
      assert.deepStrictEqual(counts, [
        { event_type: 0, count: 40 },
        { event_type: 1, count: 120 },
        { event_type: 2, count: 1840 }
      ])
      const stream = spark.readStream
        .format("nexmark")
        .options({ ...options, maxOffsetsPerTrigger: "300" })
        .load()
      const dir = yield* tempDir
      const query = yield* stream.writeStream
        .format("memory")
        .queryName("nexmark_events")
        .trigger(Trigger.AvailableNow())
        .option("checkpointLocation", dir)
        .start()
      yield* query.awaitTermination()
      const progress = yield* query.recentProgress()
      assert.deepStrictEqual(
        progress.filter((p) => p.numInputRows > 0).map((p) => p.numInputRows),
        [300, 300, 300, 300, 300, 300, 200]
      )
      const streamed = yield* spark.table("nexmark_events").collect()
      const batchRows = yield* batch.collect()
      assert.strictEqual(streamed.length, 2000)
      assert.deepStrictEqual(streamed, batchRows)
      // the structs as rows: a bid of the table is the generator's
      const firstBid = batchRows.find((r) => r.event_type === 2) as { bid: Record<string, unknown>; person: unknown }
      assert.strictEqual(firstBid.person, null)
      assert.deepStrictEqual(Object.keys(firstBid.bid), [
        "auction",
        "bidder",
        "price",
        "channel",
        "url",
        "dateTime",
        "extra"
      ])
      assert.instanceOf(firstBid.bid.dateTime, Date)
      const bidsOnly = yield* batch.where(F.col("event_type").eq(2)).select(F.col("bid.price")).count()
      assert.strictEqual(bidsOnly, 1840)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("the batch read needs maxEvents and takes no path", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const noMax = yield* Effect.flip(spark.read.format("nexmark").load())
      assert.strictEqual(noMax._tag, "AnalysisError")
      assert.include(noMax.message, "needs the option maxEvents")
      const withPath = yield* Effect.flip(spark.read.format("nexmark").option("maxEvents", 5).load("/tmp/x"))
      assert.include(withPath.message, "reads no files")
      const bad = yield* Effect.flip(spark.read.format("nexmark").option("maxEvents", "-5").load())
      assert.include(bad.message, "The option 'maxEvents' must be positive")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("with eventsPerSecond, a processing-time query reads what the clock made available", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const kinds = spark.readStream.format("nexmark").option("eventsPerSecond", 50).load().select("event_type")
      // 50 events a second: each second brings one block of 50 (a person, 3 auctions, 46 bids)
      const block = [0, 1, 1, 1, ...Array.from({ length: 46 }, () => 2)].map((event_type) => ({ event_type }))
      yield* testStream(kinds, "append", [
        StartStream({ trigger: Trigger.ProcessingTime("1 second") }),
        AdvanceClock("1 second"),
        CheckNewAnswer(...block),
        AdvanceClock("1 second"),
        CheckNewAnswer(...block),
        AdvanceClock("500 millis"), // not a trigger time: no batch
        AdvanceClock("1500 millis"), // two seconds' events in one batch
        CheckNewAnswer(...block, ...block),
        AssertOnQuery(
          (q) =>
            Effect.map(
              q.lastProgress(),
              (p) => p?.numInputRows === 100 && p.sources[0].startOffset === 100 && p.sources[0].endOffset === 200
            ),
          "the batch read events 100 to 199"
        ),
        StopStream,
        AdvanceClock("1 second"),
        StartStream({ trigger: Trigger.ProcessingTime("1 second") }),
        AdvanceClock("1 second"), // the start time is kept: 2 seconds' events since the last batch
        CheckNewAnswer(...block, ...block)
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})
