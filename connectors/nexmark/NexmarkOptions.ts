/**
 * The options of the `nexmark` source, as an Effect Schema over Spark's option map (string values,
 * case-insensitive keys), and the source's schema: Flink's Nexmark table (`nexmark-flink`'s
 * `ddl_gen.sql`) with `event_type`, the `person`, `auction` and `bid` structs and the event time
 * `dateTime`.
 *
 * | option | default | meaning |
 * | --- | --- | --- |
 * | `eventsPerSecond` | unset | events become available at this rate on Effect's `Clock` (from the query's first start); unset with `maxEvents` set, all events are available at once |
 * | `maxEvents` | unset (unbounded) | the source ends after this many events |
 * | `seed` | `0` | mixed into every event's seed; `0` gives Beam's events exactly |
 * | `firstEventRate` | `eventsPerSecond`, else 10 000 | events per second of event time (Beam's `firstEventRate`) |
 * | `baseTime` | `2015-07-15T00:00:00Z` | event time of the first event: epoch milliseconds or an ISO-8601 timestamp |
 * | `hotAuctionRatio`, `hotSellersRatio`, `hotBiddersRatio` | 2, 4, 4 | a bid / auction is for a hot auction / by a hot seller / by a hot bidder with probability `1 - 1/ratio` |
 * | `numInFlightAuctions`, `numActivePeople` | 100, 1 000 | the windows of recent auctions and people that cold ids are drawn from |
 * | `avgPersonByteSize`, `avgAuctionByteSize`, `avgBidByteSize` | 200, 500, 100 | average event sizes the `extra` padding aims at |
 * | `maxOffsetsPerTrigger` | unset | at most this many events per micro-batch |
 *
 * Unset `eventsPerSecond` and `maxEvents` together mean an endless stream at `firstEventRate`
 * events a second (the reference's rate-limited mode).
 *
 * @since 0.1.0
 */
import { Schema, SchemaTransformation } from "effect"
import * as T from "../../core/DataType.ts"
import { AnalysisError } from "../../core/Errors.ts"
import { type Options, option } from "../../core/Formats.ts"
import { BEAM_BASE_TIME_MS, DEFAULT_GENERATOR_CONFIG, type NexmarkGeneratorConfig } from "./NexmarkGenerator.ts"

/**
 * The `person` struct (Flink's `person ROW<…>`).
 *
 * @since 0.1.0
 */
export const PersonType: T.StructType = T.struct([
  T.field("id", T.LongType, false),
  T.field("name", T.StringType, false),
  T.field("emailAddress", T.StringType, false),
  T.field("creditCard", T.StringType, false),
  T.field("city", T.StringType, false),
  T.field("state", T.StringType, false),
  T.field("dateTime", T.TimestampType, false),
  T.field("extra", T.StringType, false)
])

/**
 * The `auction` struct (Flink's `auction ROW<…>`).
 *
 * @since 0.1.0
 */
export const AuctionType: T.StructType = T.struct([
  T.field("id", T.LongType, false),
  T.field("itemName", T.StringType, false),
  T.field("description", T.StringType, false),
  T.field("initialBid", T.LongType, false),
  T.field("reserve", T.LongType, false),
  T.field("dateTime", T.TimestampType, false),
  T.field("expires", T.TimestampType, false),
  T.field("seller", T.LongType, false),
  T.field("category", T.LongType, false),
  T.field("extra", T.StringType, false)
])

/**
 * The `bid` struct (Flink's `bid ROW<…>`).
 *
 * @since 0.1.0
 */
export const BidType: T.StructType = T.struct([
  T.field("auction", T.LongType, false),
  T.field("bidder", T.LongType, false),
  T.field("price", T.LongType, false),
  T.field("channel", T.StringType, false),
  T.field("url", T.StringType, false),
  T.field("dateTime", T.TimestampType, false),
  T.field("extra", T.StringType, false)
])

/**
 * The rows of the `nexmark` source: Flink's Nexmark table. `event_type` is 0 for a person, 1 for
 * an auction and 2 for a bid; exactly the struct of that kind is set, the other two are null.
 * `dateTime` is the event's time, the column Flink's DDL computes from the struct that is set
 * (`CASE WHEN event_type = 0 THEN person.dateTime …`) and puts its watermark on.
 *
 * @example
 * ```ts
 * import { NexmarkSchema } from "./NexmarkOptions.ts"
 * NexmarkSchema.fields.map((f) => f.name) // ["event_type", "person", "auction", "bid", "dateTime"]
 * ```
 * @since 0.1.0
 */
export const NexmarkSchema: T.StructType = T.struct([
  T.field("event_type", T.IntegerType, false),
  T.field("person", PersonType, true),
  T.field("auction", AuctionType, true),
  T.field("bid", BidType, true),
  T.field("dateTime", T.TimestampType, false)
])

/** The options, checked and typed. */
export interface NexmarkOptions {
  readonly generator: NexmarkGeneratorConfig
  /** Events per second of clock time, or `undefined` for all of `maxEvents` at once. */
  readonly eventsPerSecond: number | undefined
  /** The number of events, or `undefined` for no end. */
  readonly maxEvents: number | undefined
  readonly maxOffsetsPerTrigger: number | undefined
}

const INT_MAX = 2_147_483_647
/** Every count and offset must stay a safe integer. */
const MAX_EVENTS = Number.MAX_SAFE_INTEGER
/** Larger average sizes would make single events of megabytes. */
const MAX_BYTE_SIZE = 1 << 20

const integerText = (name: string) =>
  Schema.String.check(
    Schema.isPattern(/^[+-]?\d+$/, {
      message: `The option '${name}' must be a whole number`
    })
  )

/** A whole number in `[min, max]`, given as text. */
const wholeNumber = (name: string, min: number, max: number, what: string) =>
  integerText(name).pipe(
    Schema.decodeTo(
      Schema.Number.check(
        Schema.isGreaterThanOrEqualTo(min, { message: `The option '${name}' must be ${what}` }),
        Schema.isLessThanOrEqualTo(max, { message: `The option '${name}' must be at most ${max}` })
      ),
      SchemaTransformation.numberFromString
    )
  )

/** A Java long, given as text. */
const javaLong = (name: string) =>
  integerText(name).pipe(
    Schema.decodeTo(
      Schema.BigInt.check(
        Schema.makeFilter((n: bigint) => n >= -(2n ** 63n) && n < 2n ** 63n, {
          message: `The option '${name}' must fit in a long`
        })
      ),
      SchemaTransformation.bigintFromString
    )
  )

/** Epoch milliseconds, or an ISO-8601 timestamp. */
const timestampText = (name: string) =>
  Schema.String.pipe(
    Schema.decodeTo(
      Schema.Number.check(
        Schema.makeFilter((n: number) => Number.isSafeInteger(n), {
          message: `The option '${name}' must be epoch milliseconds or an ISO-8601 timestamp such as 2015-07-15T00:00:00Z`
        })
      ),
      SchemaTransformation.transform({
        decode: (s: string) => (/^[+-]?\d+$/.test(s) ? Number(s) : Date.parse(s)),
        encode: (n: number) => String(n)
      })
    )
  )

const positiveInt = (name: string) => wholeNumber(name, 1, INT_MAX, "positive")
const byteSize = (name: string) => wholeNumber(name, 0, MAX_BYTE_SIZE, "non-negative")

/**
 * The `nexmark` options as a Schema: each key (in its canonical spelling) to its checked value.
 * `parseNexmarkOptions` looks the keys up case-insensitively first, as Spark does.
 *
 * @since 0.1.0
 */
export const NexmarkOptionsSchema = Schema.Struct({
  eventsPerSecond: Schema.optional(wholeNumber("eventsPerSecond", 1, MAX_EVENTS, "positive")),
  maxEvents: Schema.optional(wholeNumber("maxEvents", 1, MAX_EVENTS, "positive")),
  seed: Schema.optional(javaLong("seed")),
  firstEventRate: Schema.optional(positiveInt("firstEventRate")),
  baseTime: Schema.optional(timestampText("baseTime")),
  hotAuctionRatio: Schema.optional(positiveInt("hotAuctionRatio")),
  hotSellersRatio: Schema.optional(positiveInt("hotSellersRatio")),
  hotBiddersRatio: Schema.optional(positiveInt("hotBiddersRatio")),
  numInFlightAuctions: Schema.optional(positiveInt("numInFlightAuctions")),
  numActivePeople: Schema.optional(positiveInt("numActivePeople")),
  avgPersonByteSize: Schema.optional(byteSize("avgPersonByteSize")),
  avgAuctionByteSize: Schema.optional(byteSize("avgAuctionByteSize")),
  avgBidByteSize: Schema.optional(byteSize("avgBidByteSize")),
  maxOffsetsPerTrigger: Schema.optional(wholeNumber("maxOffsetsPerTrigger", 1, MAX_EVENTS, "positive"))
})

const KEYS = Object.keys(NexmarkOptionsSchema.fields) as ReadonlyArray<keyof typeof NexmarkOptionsSchema.fields>

/**
 * Parses and checks the `nexmark` options; a bad value fails with an `AnalysisError` naming the
 * option (for example `The option 'eventsPerSecond' must be positive`). Unknown options are
 * ignored, as Spark's sources do.
 *
 * @example
 * ```ts
 * import { parseNexmarkOptions } from "./NexmarkOptions.ts"
 * const o = parseNexmarkOptions({ maxEvents: "1000", seed: "7" })
 * // { maxEvents: 1000, eventsPerSecond: undefined, generator: { seed: 7n, firstEventRate: 10000, … }, … }
 * ```
 * @since 0.1.0
 */
export const parseNexmarkOptions = (options: Options): NexmarkOptions | AnalysisError => {
  const given: Record<string, string> = {}
  for (const k of KEYS) {
    const v = option(options, k)
    if (v !== undefined) given[k] = v.trim()
  }
  const decoded = Schema.decodeUnknownExit(NexmarkOptionsSchema)(given)
  if (decoded._tag === "Failure") {
    const reason = decoded.cause.reasons[0]
    const message = reason?._tag === "Fail" ? reason.error.message : "invalid nexmark options"
    return new AnalysisError({
      reason: "InvalidArgument",
      message: `Invalid option for the nexmark source: ${message.split("\n")[0]}`
    })
  }
  const o = decoded.value
  const d = DEFAULT_GENERATOR_CONFIG
  const firstEventRate =
    o.firstEventRate ?? (o.eventsPerSecond !== undefined ? Math.min(o.eventsPerSecond, INT_MAX) : d.firstEventRate)
  return {
    generator: {
      seed: o.seed ?? d.seed,
      baseTimeMs: o.baseTime ?? BEAM_BASE_TIME_MS,
      firstEventRate,
      hotAuctionRatio: o.hotAuctionRatio ?? d.hotAuctionRatio,
      hotSellersRatio: o.hotSellersRatio ?? d.hotSellersRatio,
      hotBiddersRatio: o.hotBiddersRatio ?? d.hotBiddersRatio,
      numInFlightAuctions: o.numInFlightAuctions ?? d.numInFlightAuctions,
      numActivePeople: o.numActivePeople ?? d.numActivePeople,
      avgPersonByteSize: o.avgPersonByteSize ?? d.avgPersonByteSize,
      avgAuctionByteSize: o.avgAuctionByteSize ?? d.avgAuctionByteSize,
      avgBidByteSize: o.avgBidByteSize ?? d.avgBidByteSize
    },
    // Neither given: an endless stream at the event-time rate, as the reference's rate-limited mode.
    eventsPerSecond: o.eventsPerSecond ?? (o.maxEvents === undefined ? firstEventRate : undefined),
    maxEvents: o.maxEvents,
    maxOffsetsPerTrigger: o.maxOffsetsPerTrigger
  }
}

/**
 * A source with a fixed schema refuses a user-specified one (Spark's `_LEGACY_ERROR_TEMP_2242`,
 * as the rate source does).
 */
export const userSchemaUnsupported = (): AnalysisError =>
  new AnalysisError({
    reason: "UnsupportedOperation",
    errorClass: "_LEGACY_ERROR_TEMP_2242",
    message: "nexmark source does not support user-specified schema."
  })
