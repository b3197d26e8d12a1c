/**
 * The `rate` source against Spark's RateStreamProviderSuite: `valueAtSecond`, the basic and
 * ramp-up batches, uniform timestamps, partition interleaving, the option checks and their
 * messages, overflow errors, and a restart that replays the same rows from the start time kept in
 * the source's metadata folder. Time is Effect's test clock (it starts at 0, like Spark's
 * `ManualClock`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import * as T from "../../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../../core/Errors.ts"
import type { Options } from "../../../core/Formats.ts"
import type { InternalRow } from "../../../core/Row.ts"
import { lookupSourceFormat, type MicroBatchSource, ReadLimit } from "../../../core/Streaming.ts"
import {
  parseRateOptions,
  RateSchema,
  RateSource,
  rateBatchRows,
  registerRate,
  timeStringAsSec,
  valueAtSecond
} from "../../../connectors/rate/mod.ts"

const tempDir = Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "tributary-rate-")))

const create = (
  options: Options,
  metadataPath: string
): Effect.Effect<MicroBatchSource, AnalysisError | ConnectorError> =>
  RateSource.create({ options, schema: RateSchema, metadataPath, conf: new Map() })

/** A fresh source in a fresh metadata folder. */
const fresh = (options: Options) => Effect.flatMap(tempDir, (dir) => create(options, path.join(dir, "sources", "0")))

/** Spark's `AdvanceRateManualClock(seconds)` + `CheckLastBatch`: the rows of the next batch. */
const nextBatch = (source: MicroBatchSource, start: number, seconds: number) =>
  Effect.gen(function* () {
    yield* TestClock.adjust(`${seconds} seconds`)
    const end = (yield* source.latestOffset(start, ReadLimit.allAvailable)) as number
    const rows = yield* source.getBatch(start, end)
    return { end, rows }
  })

const pairs = (from: number, until: number, ts: (v: number) => number): Array<InternalRow> => {
  const out: Array<InternalRow> = []
  for (let v = from; v < until; v++) out.push([ts(v), v])
  return out
}

const sorted = (rows: ReadonlyArray<InternalRow>) => [...rows].sort((a, b) => (a[1] as number) - (b[1] as number))

const errorOf = (r: T.StructType | AnalysisError): AnalysisError => {
  if (!(r instanceof AnalysisError)) throw new Error(`expected an AnalysisError, got ${JSON.stringify(r)}`)
  return r
}

describe("valueAtSecond", () => {
  it("matches RateStreamProviderSuite's valueAtSecond test", () => {
    assert.strictEqual(valueAtSecond(0n, 5n, 0n), 0n)
    assert.strictEqual(valueAtSecond(1n, 5n, 0n), 5n)

    assert.strictEqual(valueAtSecond(0n, 5n, 2n), 0n)
    assert.strictEqual(valueAtSecond(1n, 5n, 2n), 1n)
    assert.strictEqual(valueAtSecond(2n, 5n, 2n), 3n)
    assert.strictEqual(valueAtSecond(3n, 5n, 2n), 8n)

    assert.strictEqual(valueAtSecond(0n, 10n, 4n), 0n)
    assert.strictEqual(valueAtSecond(1n, 10n, 4n), 2n)
    assert.strictEqual(valueAtSecond(2n, 10n, 4n), 6n)
    assert.strictEqual(valueAtSecond(3n, 10n, 4n), 12n)
    assert.strictEqual(valueAtSecond(4n, 10n, 4n), 20n)
    assert.strictEqual(valueAtSecond(5n, 10n, 4n), 30n)
  })
})

describe("rate source", () => {
  it("has Spark's schema and registers under `rate`", () => {
    registerRate()
    assert.strictEqual(lookupSourceFormat("RATE"), RateSource)
    assert.deepStrictEqual(RateSource.schema(undefined, {}), RateSchema)
    assert.deepStrictEqual(
      RateSchema.fields.map((f) => [f.name, f.dataType._tag, f.nullable]),
      [
        ["timestamp", "timestamp", true],
        ["value", "long", true]
      ]
    )
  })

  it.effect("microbatch - basic: 10 rows in the first second, 100 ms apart", () =>
    Effect.gen(function* () {
      const source = yield* fresh({ rowsPerSecond: "10" })
      assert.strictEqual(yield* source.initialOffset(), 0)
      assert.strictEqual(yield* source.latestOffset(0, ReadLimit.allAvailable), 0)
      const { end, rows } = yield* nextBatch(source, 0, 1)
      assert.strictEqual(end, 1)
      assert.deepStrictEqual(
        rows,
        pairs(0, 10, (v) => v * 100)
      )
    })
  )

  it.effect("microbatch - uniform distribution of event timestamps", () =>
    Effect.gen(function* () {
      const source = yield* fresh({ rowsPerSecond: "1500" })
      const { rows } = yield* nextBatch(source, 0, 1)
      assert.deepStrictEqual(
        rows,
        pairs(0, 1500, (v) => Math.round(v * (1000 / 1500)))
      )
    })
  )

  it.effect("rampUpTime: speeds 2, 4, 6, 8 and then 10 rows a second", () =>
    Effect.gen(function* () {
      const source = yield* fresh({ rowsPerSecond: "10", rampUpTime: "4s" })
      const expected: ReadonlyArray<ReadonlyArray<InternalRow>> = [
        pairs(0, 2, (v) => v * 500),
        pairs(2, 6, (v) => 1000 + (v - 2) * 250),
        [
          [2000, 6],
          [2167, 7],
          [2333, 8],
          [2500, 9],
          [2667, 10],
          [2833, 11]
        ],
        pairs(12, 20, (v) => 3000 + (v - 12) * 125),
        pairs(20, 30, (v) => 4000 + (v - 20) * 100),
        pairs(30, 40, (v) => 5000 + (v - 30) * 100),
        pairs(40, 50, (v) => 6000 + (v - 40) * 100)
      ]
      let start = 0
      for (const batch of expected) {
        const { end, rows } = yield* nextBatch(source, start, 1)
        assert.strictEqual(end, start + 1)
        assert.deepStrictEqual(rows, batch)
        start = end
      }
    })
  )

  it.effect("a batch spanning several seconds spreads its values over them", () =>
    Effect.gen(function* () {
      const source = yield* fresh({ rowsPerSecond: "2" })
      const { end, rows } = yield* nextBatch(source, 0, 3)
      assert.strictEqual(end, 3)
      assert.deepStrictEqual(
        rows,
        pairs(0, 6, (v) => v * 500)
      )
      // Part of a second does not make an offset.
      const later = yield* nextBatch(source, 3, 0.5)
      assert.strictEqual(later.end, 3)
      assert.deepStrictEqual(later.rows, [])
    })
  )

  it.effect("microbatch - predetermined batch size", () =>
    Effect.gen(function* () {
      const source = yield* fresh({ rowsPerSecond: "20" })
      assert.strictEqual((yield* source.getBatch(0, 1)).length, 20)
    })
  )

  it.effect("microbatch - data read: 11 partitions, dealt round robin and read partition after partition", () =>
    Effect.gen(function* () {
      const source = yield* fresh({ rowsPerSecond: "33", numPartitions: "11" })
      const rows = yield* source.getBatch(0, 1)
      assert.deepStrictEqual(
        sorted(rows).map((r) => r[1]),
        Array.from({ length: 33 }, (_, i) => i)
      )
      // Partition p holds p, p + 11, p + 22; partition 0's rows come first.
      const expected: Array<InternalRow> = []
      for (let p = 0; p < 11; p++) for (let v = p; v < 33; v += 11) expected.push([Math.round(v * (1000 / 33)), v])
      assert.deepStrictEqual(rows, expected)
    })
  )

  it("rateBatchRows with 6 partitions starts each partition at rangeStart + p", () => {
    const o = { rowsPerSecond: 10n, rampUpTimeSeconds: 0n, numPartitions: 6, numPartitionsOption: "6" }
    const rows = rateBatchRows(o, 5_000, 1, 2)
    assert.deepStrictEqual(
      rows.map((r) => r[1]),
      [10, 16, 11, 17, 12, 18, 13, 19, 14, 15]
    )
    assert.deepStrictEqual(rows[0], [6_000, 10])
    assert.deepStrictEqual(rows[1], [6_600, 16])
  })

  it.effect("microbatch - infer offsets: the latest offset is the seconds since the start", () =>
    Effect.gen(function* () {
      const source = yield* fresh({ rowsPerSecond: "100" })
      yield* TestClock.adjust("100 seconds")
      assert.strictEqual(yield* source.latestOffset(0, ReadLimit.allAvailable), 100)
      // The start offset is never passed back.
      assert.strictEqual(yield* source.latestOffset(150, ReadLimit.allAvailable), 150)
    })
  )

  it.effect("restart: the start time is kept in the metadata folder, so the same rows come back", () =>
    Effect.gen(function* () {
      const dir = path.join(yield* tempDir, "sources", "0")
      yield* TestClock.adjust("1234 millis")
      const first = yield* create({ rowsPerSecond: "3" }, dir)
      const a = yield* nextBatch(first, 0, 2)
      assert.strictEqual(a.end, 2)
      assert.deepStrictEqual(
        a.rows,
        pairs(0, 6, (v) => 1234 + Math.round(v * (1000 / 3)))
      )
      // Spark's metadata log entry: a version line and the start time.
      assert.strictEqual(yield* Effect.promise(() => fs.readFile(path.join(dir, "0"), "utf8")), "v1\n1234")
      assert.deepStrictEqual(
        (yield* Effect.promise(() => fs.readdir(dir))).filter((n) => n.endsWith(".tmp")),
        []
      )
      yield* first.stop()

      yield* TestClock.adjust("10 seconds")
      const second = yield* create({ rowsPerSecond: "3" }, dir)
      // The replayed batch is identical, and the next one continues from the same start time.
      assert.deepStrictEqual(yield* second.getBatch(0, 2), a.rows)
      const latest = (yield* second.latestOffset(2, ReadLimit.allAvailable)) as number
      assert.strictEqual(latest, 12)
      const next = yield* second.getBatch(2, latest)
      assert.deepStrictEqual(next[0], [3234, 6])
      assert.deepStrictEqual(next[next.length - 1], [1234 + 12_000 - 333, 35])
    })
  )

  it.effect("restart with a clock behind the start time: offsets never go back", () =>
    Effect.gen(function* () {
      const dir = path.join(yield* tempDir, "s")
      yield* Effect.promise(async () => {
        await fs.mkdir(dir, { recursive: true })
        await fs.writeFile(path.join(dir, "0"), "v1\n50000")
      })
      const source = yield* create({}, dir) // the test clock is at 0
      assert.strictEqual(yield* source.latestOffset(0, ReadLimit.allAvailable), 0)
      // Replaying a logged batch moves the source's notion of time to the batch's end.
      assert.deepStrictEqual(yield* source.getBatch(0, 3), [
        [50_000, 0],
        [51_000, 1],
        [52_000, 2]
      ])
      assert.strictEqual(yield* source.latestOffset(0, ReadLimit.allAvailable), 3)
    })
  )

  it.effect("a start time file from a newer version or a malformed one fails create", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      yield* Effect.promise(async () => {
        await fs.mkdir(path.join(dir, "a"))
        await fs.writeFile(path.join(dir, "a", "0"), "v2\n0")
        await fs.mkdir(path.join(dir, "b"))
        await fs.writeFile(path.join(dir, "b", "0"), "1234")
      })
      const newer = yield* Effect.flip(create({}, path.join(dir, "a")))
      assert.strictEqual(newer._tag, "ConnectorError")
      assert.include(newer.message, "has log version v2, but this version of tributary supports up to v1")
      const bad = yield* Effect.flip(create({}, path.join(dir, "b")))
      assert.include(bad.message, "failed to detect the log file version line")
    })
  )

  it.effect("Trigger.AvailableNow fixes the end at the time it is prepared", () =>
    Effect.gen(function* () {
      const source = yield* fresh({})
      yield* TestClock.adjust("2500 millis")
      yield* source.prepareForTriggerAvailableNow!()
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* source.latestOffset(0, ReadLimit.allAvailable), 2)
      assert.strictEqual(yield* source.latestOffset(2, ReadLimit.allAvailable), 2)
    })
  )

  it.effect("offsets are JSON numbers; anything else is refused", () =>
    Effect.gen(function* () {
      const source = yield* fresh({})
      assert.strictEqual(yield* source.decodeOffset(JSON.parse(JSON.stringify(7))), 7)
      const bad = yield* Effect.flip(source.decodeOffset({ offset: 7 }))
      assert.strictEqual(bad._tag, "ConnectorError")
      const backwards = yield* Effect.flip(source.getBatch(3, 2))
      assert.strictEqual(backwards.message, "startSeconds(3) > endSeconds(2)")
    })
  )

  it.effect("description is Spark's toString", () =>
    Effect.gen(function* () {
      const a = yield* fresh({})
      assert.strictEqual(a.description, "RateStreamV2[rowsPerSecond=1, rampUpTimeSeconds=0, numPartitions=default")
      const b = yield* fresh({ ROWSPERSECOND: "10", rampuptime: "1min", numPartitions: "6" })
      assert.strictEqual(b.description, "RateStreamV2[rowsPerSecond=10, rampUpTimeSeconds=60, numPartitions=6")
    })
  )
})

describe("rate options", () => {
  it("illegal option values fail with Spark's messages, from schema() and from create", async () => {
    const cases: ReadonlyArray<readonly [Options, string]> = [
      [{ rowsPerSecond: "-1" }, "Invalid value '-1'. The option 'rowsPerSecond' must be positive"],
      [{ rowsPerSecond: "0" }, "Invalid value '0'. The option 'rowsPerSecond' must be positive"],
      [{ numPartitions: "-1" }, "Invalid value '-1'. The option 'numPartitions' must be positive"],
      [{ rampUpTime: "-1s" }, "Invalid value '-1'. The option 'rampUpTime' must not be negative"],
      [{ rowsPerSecond: "ten" }, 'For input string: "ten"'],
      [{ rowsPerSecond: "9223372036854775808" }, 'For input string: "9223372036854775808"'],
      [{ numPartitions: "2147483648" }, 'For input string: "2147483648"'],
      [
        { rampUpTime: "5 sec" },
        "Time must be specified as seconds (s), milliseconds (ms), microseconds (us), minutes (m or min), hour (h), or day (d). E.g. 50s, 100ms, or 250us.\nFailed to parse time string: 5 sec"
      ],
      [
        { rampUpTime: "5sec" },
        'Time must be specified as seconds (s), milliseconds (ms), microseconds (us), minutes (m or min), hour (h), or day (d). E.g. 50s, 100ms, or 250us.\nInvalid suffix: "sec"'
      ]
    ]
    for (const [options, message] of cases) {
      const fromSchema = errorOf(RateSource.schema(undefined, options))
      assert.strictEqual(fromSchema.reason, "InvalidArgument")
      assert.strictEqual(fromSchema.message, message)
      const fromCreate = await Effect.runPromise(
        Effect.flip(
          RateSource.create({
            options,
            schema: RateSchema,
            metadataPath: "/nonexistent/never-written",
            conf: new Map()
          })
        )
      )
      assert.strictEqual(fromCreate._tag, "AnalysisError")
      assert.strictEqual(fromCreate.message, message)
    }
  })

  it("microbatch - ramp up error: INCORRECT_RAMP_UP_RATE", () => {
    const e = errorOf(RateSource.schema(undefined, { rowsPerSecond: "9223372036854775807", rampUpTime: "2" }))
    assert.strictEqual(e.errorClass, "INCORRECT_RAMP_UP_RATE")
    assert.strictEqual(
      e.message,
      "[INCORRECT_RAMP_UP_RATE] Max offset with 9223372036854775807 rowsPerSecond is 1, but 'rampUpTimeSeconds' is 2."
    )
  })

  it.effect("overflow: an end offset past Long.MaxValue / rowsPerSecond fails the batch", () =>
    Effect.gen(function* () {
      const source = yield* fresh({ rowsPerSecond: "9223372036854775807" })
      const e = yield* Effect.flip(source.getBatch(0, 2))
      assert.strictEqual(e._tag, "ConnectorError")
      assert.strictEqual(e.errorClass, "INCORRECT_END_OFFSET")
      assert.strictEqual(
        e.message,
        "[INCORRECT_END_OFFSET] Max offset with 9223372036854775807 rowsPerSecond is 1, but it's 2 now."
      )
    })
  )

  it("user-specified schema given", () => {
    const e = errorOf(RateSource.schema(T.struct([T.field("id", T.LongType, false)]), {}))
    assert.strictEqual(e.reason, "UnsupportedOperation")
    assert.strictEqual(e.message, "RateStreamProvider source does not support user-specified schema.")
  })

  it("defaults and case-insensitive keys", () => {
    assert.deepStrictEqual(parseRateOptions({}), {
      rowsPerSecond: 1n,
      rampUpTimeSeconds: 0n,
      numPartitions: 1,
      numPartitionsOption: undefined
    })
    assert.deepStrictEqual(parseRateOptions({ ROWSPERSECOND: "+5", RampUpTime: "90S", NUMPARTITIONS: "3" }), {
      rowsPerSecond: 5n,
      rampUpTimeSeconds: 90n,
      numPartitions: 3,
      numPartitionsOption: "3"
    })
  })

  it("timeStringAsSec follows JavaUtils: units, truncation toward zero, bare seconds", () => {
    assert.strictEqual(timeStringAsSec("5"), 5n)
    assert.strictEqual(timeStringAsSec(" 5s "), 5n)
    assert.strictEqual(timeStringAsSec("1500ms"), 1n)
    assert.strictEqual(timeStringAsSec("-1500ms"), -1n)
    assert.strictEqual(timeStringAsSec("999999us"), 0n)
    assert.strictEqual(timeStringAsSec("2m"), 120n)
    assert.strictEqual(timeStringAsSec("2min"), 120n)
    assert.strictEqual(timeStringAsSec("1h"), 3600n)
    assert.strictEqual(timeStringAsSec("1D"), 86_400n)
    assert.strictEqual(timeStringAsSec("9223372036854775807d"), 9_223_372_036_854_775_807n)
  })
})
