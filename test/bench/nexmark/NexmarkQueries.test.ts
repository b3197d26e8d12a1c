/**
 * Every Nexmark query of `bench/nexmark/` run as a stream over the `nexmark` source (several
 * micro-batches, `Trigger.AvailableNow`, the memory sink) against the batch engine over the same
 * events (`spark.read.format("nexmark")`): the streaming answer is the batch answer — for a
 * query that emits results when the watermark closes them, the batch rows the final watermark
 * has closed. Where a module reformulates Flink's SQL for Spark's streaming model, Flink's SQL as
 * written (`reference`, run by the batch engine) checks the reformulation too. q12 (processing
 * time) runs on the test clock, its batch twin computing each event's processing time from the
 * clock's schedule.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { F, MemoryStream, type Row, Session, Trigger } from "../../../mod.ts"
import {
  AddData,
  AdvanceClock,
  AssertOnQuery,
  CheckAnswer,
  StartStream,
  testStream
} from "../../../structured/testing.ts"
import type { Frame, NexmarkQuery } from "../../../bench/nexmark/Nexmark.ts"
import { q0 } from "../../../bench/nexmark/q0.ts"
import { q1 } from "../../../bench/nexmark/q1.ts"
import { q2 } from "../../../bench/nexmark/q2.ts"
import { q3 } from "../../../bench/nexmark/q3.ts"
import { q4 } from "../../../bench/nexmark/q4.ts"
import { q5 } from "../../../bench/nexmark/q5.ts"
import { q7 } from "../../../bench/nexmark/q7.ts"
import { q8 } from "../../../bench/nexmark/q8.ts"
import { q11 } from "../../../bench/nexmark/q11.ts"
import { q12 } from "../../../bench/nexmark/q12.ts"

/** The Nexmark table as an Effect Schema (longs as `Schema.Int`), for hand-made events. */
const NexmarkEvent = Schema.Struct({
  event_type: Schema.Int,
  person: Schema.NullOr(
    Schema.Struct({
      id: Schema.Int,
      name: Schema.String,
      emailAddress: Schema.String,
      creditCard: Schema.String,
      city: Schema.String,
      state: Schema.String,
      dateTime: Schema.Date,
      extra: Schema.String
    })
  ),
  auction: Schema.NullOr(
    Schema.Struct({
      id: Schema.Int,
      itemName: Schema.String,
      description: Schema.String,
      initialBid: Schema.Int,
      reserve: Schema.Int,
      dateTime: Schema.Date,
      expires: Schema.Date,
      seller: Schema.Int,
      category: Schema.Int,
      extra: Schema.String
    })
  ),
  bid: Schema.NullOr(
    Schema.Struct({
      auction: Schema.Int,
      bidder: Schema.Int,
      price: Schema.Int,
      channel: Schema.String,
      url: Schema.String,
      dateTime: Schema.Date,
      extra: Schema.String
    })
  ),
  dateTime: Schema.Date
})

const tempDir = Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "tributary-nexmark-q-")))

/** A row as comparable text: timestamps as ISO text, doubles to 12 significant digits. */
const canonical = (r: Row): string =>
  JSON.stringify(r, (_k, v) => (typeof v === "number" && !Number.isInteger(v) ? Number(v.toPrecision(12)) : v))

const multiset = (rows: ReadonlyArray<Row>): ReadonlyArray<string> => rows.map(canonical).sort()

interface Case {
  readonly query: NexmarkQuery
  readonly options: Readonly<Record<string, string>>
  /** At least this many rows in the checked answer, so that no check passes on nothing. */
  readonly minRows: number
}

const EVENTS = 20_000
// Event-time queries: 100 events a second of event time, so 20 000 events span 200 seconds and
// most windows and sessions close before the end.
const slow = { maxEvents: String(EVENTS), firstEventRate: "100" }
const CASES: ReadonlyArray<Case> = [
  { query: q0, options: { maxEvents: String(EVENTS) }, minRows: 18_000 },
  { query: q1, options: { maxEvents: String(EVENTS) }, minRows: 18_000 },
  { query: q2, options: { maxEvents: String(EVENTS) }, minRows: 50 },
  { query: q3, options: { maxEvents: String(EVENTS) }, minRows: 50 },
  { query: q4, options: slow, minRows: 100 },
  { query: q5, options: slow, minRows: 50 },
  { query: q7, options: slow, minRows: 10 },
  { query: q8, options: slow, minRows: 20 },
  { query: q11, options: slow, minRows: 500 }
]

/** Runs `query` as a stream into the memory table `name`; returns its rows and final watermark. */
const runStream = (query: NexmarkQuery, options: Readonly<Record<string, string>>, name: string) =>
  Effect.gen(function* () {
    const spark = yield* Session
    const events = spark.readStream
      .format("nexmark")
      .options({ ...options, maxOffsetsPerTrigger: String(Math.ceil(EVENTS / 8)) })
      .load()
    const handle = yield* query
      .build(events)
      .writeStream.format("memory")
      .queryName(name)
      .outputMode(query.outputMode)
      .trigger(Trigger.AvailableNow())
      .option("checkpointLocation", yield* tempDir)
      .start()
    yield* handle.awaitTermination()
    const progress = yield* handle.recentProgress()
    const dataBatches = progress.filter((p) => p.numInputRows > 0).length
    const watermark = progress.at(-1)?.eventTime.watermark
    return {
      table: spark.table(name) as Frame,
      rows: yield* spark.table(name).collect(),
      dataBatches,
      watermarkMs: watermark === undefined ? undefined : Date.parse(watermark)
    }
  })

describe("Nexmark queries: streaming answer = batch answer over the same events", () => {
  for (const { query, options, minRows } of CASES) {
    it.effect(
      `${query.name} (${query.title})`,
      () =>
        Effect.gen(function* () {
          const spark = yield* Session
          const batch = (yield* spark.read.format("nexmark").options(options).load()) as Frame
          const complete = yield* query.build(batch).collect()
          const streamed = yield* runStream(query, options, `${query.name}_out`)
          assert.isAtLeast(streamed.dataBatches, 8, "the stream ran in several micro-batches")
          let expected = complete
          if (query.isFinal !== undefined) {
            const wm = streamed.watermarkMs
            assert.isDefined(wm, "an event-time query reports its watermark")
            expected = complete.filter((r) => query.isFinal!(r, wm!))
          }
          assert.isAtLeast(expected.length, minRows)
          assert.deepStrictEqual(multiset(streamed.rows), multiset(expected))

          // Flink's SQL as written, where the module reformulates it
          if (query.reference !== undefined) {
            const reference = multiset(yield* query.reference(batch).collect())
            const finished = query.finish === undefined ? complete : yield* query.finish(query.build(batch)).collect()
            assert.isAbove(reference.length, 0)
            assert.deepStrictEqual(multiset(finished), reference)
          }
          // the last step over the streaming output is the same step over the closed batch rows
          if (query.finish !== undefined) {
            const wm = streamed.watermarkMs!
            const closed = query.build(batch).filter((r: Row) => query.isFinal === undefined || query.isFinal(r, wm))
            assert.deepStrictEqual(
              multiset(yield* query.finish(streamed.table).collect()),
              multiset(yield* query.finish(closed).collect())
            )
          }
        }).pipe(Effect.provide(Session.layer())),
      120_000
    )
  }

  it.effect(
    "q12 (processing-time windows): each batch's events fall in the windows of its trigger time",
    () =>
      Effect.gen(function* () {
        const spark = yield* Session
        // 100 events a second from time 0, on the clock and in event time alike: the batch at
        // second k holds the events of event time [k - 1, k), stamped k.
        const options = { eventsPerSecond: "100", baseTime: "0", maxEvents: "10000" }
        const batch = (yield* spark.read.format("nexmark").options(options).load()) as Frame
        const t = F.unix_millis(F.col("dateTime"))
        const processingTime = F.timestamp_millis(t.minus(t.mod(1000)).plus(1000))
        const complete = yield* q12.build(batch, { processingTime }).collect()
        // The batch at 46 s runs with the watermark 45 s: the windows ending by then are out.
        const expected = complete.filter((r) => q12.isFinal!(r, 45_000)) as Array<Row>
        assert.isAtLeast(expected.length, 50)
        assert.isBelow(expected.length, complete.length)

        const events = spark.readStream.format("nexmark").options(options).load()
        yield* testStream(q12.build(events), "append", [
          StartStream({ trigger: Trigger.ProcessingTime("1 second") }),
          ...Array.from({ length: 45 }, () => AdvanceClock("1 second")),
          // the batch at 46 s runs with the watermark of the batches before it, 45 s
          AdvanceClock("1 second"),
          CheckAnswer(...expected),
          AssertOnQuery(
            (q) => Effect.map(q.lastProgress(), (p) => p?.eventTime.watermark === new Date(45_000).toISOString()),
            "the batch at 46 s runs with the watermark of the batches before it: 45 s"
          )
        ])
      }).pipe(Effect.provide(Session.layer())),
    120_000
  )

  it.effect("q7: a bid exactly at a window's end also matches that window's maximum, as Flink's BETWEEN does", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(NexmarkEvent)
      const at = (ms: number, price: number, auction: number) => ({
        event_type: 2,
        person: null,
        auction: null,
        bid: { auction, bidder: 7, price, channel: "Google", url: "u", dateTime: new Date(ms), extra: "" },
        dateTime: new Date(ms)
      })
      const events = [
        at(1_000, 500, 1), // the maximum of [0 s, 10 s)
        at(2_000, 100, 2),
        at(10_000, 500, 3), // in [10 s, 20 s), at the end of [0 s, 10 s) with its maximum price
        at(12_000, 700, 4), // the maximum of [10 s, 20 s)
        at(40_000, 1, 5) // moves the watermark to 36 s
      ]
      const row = (e: ReturnType<typeof at>) => ({
        auction: e.bid.auction,
        price: e.bid.price,
        bidder: 7,
        dateTime: e.dateTime,
        extra: ""
      })
      const reference = yield* q7.reference!(spark.createDataFrame(events, NexmarkEvent) as Frame).collect()
      // Flink: [0 s, 10 s] at 500, [10 s, 20 s] at 700, [40 s, 50 s] at 1 (the bid at 2 s is not a maximum)
      assert.deepStrictEqual(multiset(reference), multiset([events[0], events[2], events[3], events[4]].map(row)))
      yield* testStream(q7.build(input.toDF() as Frame), "append", [
        AddData(input, ...events),
        CheckAnswer(row(events[0]), row(events[2]), row(events[3]))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})
