/**
 * The Nexmark event generator: Apache Beam's `Generator` (`sdks/java/testing/nexmark`, with its
 * `PersonGenerator`, `AuctionGenerator`, `BidGenerator`, `PriceGenerator`, `StringsGenerator` and
 * `LongGenerator`), the generator Flink's and Arroyo's Nexmark suites port, reproduced event for
 * event:
 *
 * - event `n` (an offset of the source) has id `n`; `n % 50` decides its kind: 0 a person, 1–3 an
 *   auction, 4–49 a bid (person : auction : bid = 1 : 3 : 46);
 * - its time is `baseTime + floor(n * interEventDelayUs / 1000)` with Beam's integer delay
 *   `(1 000 000 + rate / 2) / rate` µs for `firstEventRate` events a second, so times never go back;
 * - its fields come from a `java.util.Random` seeded with the event id (`JavaRandom.ts`), drawn in
 *   the reference's order: the hot seller / hot auction / hot bidder choices (a hot one with
 *   probability `1 - 1/ratio`), ids among the active people and in-flight auctions, names, emails,
 *   credit cards, cities and states from the reference's lists, log-uniform prices, reserves,
 *   expiry times, and the `extra` padding that brings each event to its average size.
 *
 * Because each event depends only on its number and the configuration, any range of offsets can
 * be regenerated on its own: that is what makes the source replayable.
 *
 * Two things are not in Beam's model and follow Flink's port (`nexmark-flink`'s `BidGenerator`):
 * a bid's `channel` and `url` (one of four hot channels with probability 1/2, otherwise one of
 * 10 000 numbered channels, each with its url). They are drawn after the bid's `extra`, so every
 * field Beam has keeps Beam's exact value; the hot urls and the channel table come from a
 * `java.util.Random` seeded with the `seed` option (Flink draws them from an unseeded random, so
 * its urls differ on every run). Flink adds `FIRST_PERSON_ID` to a bid's bidder twice (bidders
 * start at 2000 and never match a person); this generator adds it once, as Beam does.
 *
 * The `seed` option (default 0) is XOR-ed into every per-event seed after a 64-bit mix; with
 * seed 0 the events are exactly Beam's.
 *
 * The work is plain loops over reused buffers: no Effect and no allocation beyond the row itself.
 *
 * @since 0.1.0
 */
import { Buffer } from "node:buffer"
import type { InternalRow } from "../../core/Row.ts"
import { JavaRandom } from "./JavaRandom.ts"

/** The generator's configuration (Beam's `NexmarkConfiguration` fields that shape the events). */
export interface NexmarkGeneratorConfig {
  /** Mixed into every per-event seed; 0 reproduces Beam's events. */
  readonly seed: bigint
  /** Event time of event 0, epoch milliseconds (Beam's `BASE_TIME`, 2015-07-15T00:00:00Z, by default). */
  readonly baseTimeMs: number
  /** Events per second of event time (Beam's `firstEventRate`). */
  readonly firstEventRate: number
  /** A bid is for a hot auction with probability `1 - 1/hotAuctionRatio`. */
  readonly hotAuctionRatio: number
  /** An auction is by a hot seller with probability `1 - 1/hotSellersRatio`. */
  readonly hotSellersRatio: number
  /** A bid is by a hot bidder with probability `1 - 1/hotBiddersRatio`. */
  readonly hotBiddersRatio: number
  /** How many recent auctions a bid (for a cold auction) may go to. */
  readonly numInFlightAuctions: number
  /** How many recent people a bid or auction (by a cold bidder or seller) may come from. */
  readonly numActivePeople: number
  readonly avgPersonByteSize: number
  readonly avgAuctionByteSize: number
  readonly avgBidByteSize: number
}

/** Beam's `NexmarkUtils.BASE_TIME`: `2015-07-15T00:00:00.000Z`. */
export const BEAM_BASE_TIME_MS = 1_436_918_400_000

/**
 * Beam's `NexmarkConfiguration` defaults (`hotAuctionRatio` 2, `hotSellersRatio` 4,
 * `hotBiddersRatio` 4, 100 in-flight auctions, 1 000 active people, 200/500/100-byte persons,
 * auctions and bids, 10 000 events a second) with one generator.
 */
export const DEFAULT_GENERATOR_CONFIG: NexmarkGeneratorConfig = {
  seed: 0n,
  baseTimeMs: BEAM_BASE_TIME_MS,
  firstEventRate: 10_000,
  hotAuctionRatio: 2,
  hotSellersRatio: 4,
  hotBiddersRatio: 4,
  numInFlightAuctions: 100,
  numActivePeople: 1000,
  avgPersonByteSize: 200,
  avgAuctionByteSize: 500,
  avgBidByteSize: 100
}

/** The `event_type` of a person, an auction and a bid (Flink's `Event.Type` values). */
export const PERSON = 0
export const AUCTION = 1
export const BID = 2

const PERSON_PROPORTION = 1
const AUCTION_PROPORTION = 3
const PROPORTION_DENOMINATOR = 50
const FIRST_AUCTION_ID = 1000
const FIRST_PERSON_ID = 1000
const FIRST_CATEGORY_ID = 10
const NUM_CATEGORIES = 5
const PERSON_ID_LEAD = 10
const AUCTION_ID_LEAD = 10
const HOT_SELLER_RATIO = 100
const HOT_AUCTION_RATIO = 100
const HOT_BIDDER_RATIO = 100
const MIN_STRING_LENGTH = 3
const HOT_CHANNELS_RATIO = 2
const CHANNELS_NUMBER = 10_000
const INT_MAX = 2_147_483_647
const TWO_24 = 16_777_216

const US_STATES = ["AZ", "CA", "ID", "OR", "WA", "WY"]
const US_CITIES = [
  "Phoenix",
  "Los Angeles",
  "San Francisco",
  "Boise",
  "Portland",
  "Bend",
  "Redmond",
  "Seattle",
  "Kent",
  "Cheyenne"
]
const FIRST_NAMES = ["Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"]
const LAST_NAMES = ["Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"]
const HOT_CHANNELS = ["Google", "Facebook", "Baidu", "Apple"]

/** How many events `rows` generates before decoding their bids' padding at once. */
const EXTRA_CHUNK = 256
const EMPTY_ROW: Array<unknown> = []

/** `String.format("%04d", i)` for every `i < 10000`, built once. */
const FOUR_DIGITS: ReadonlyArray<string> = Array.from({ length: 10_000 }, (_, i) => String(i).padStart(4, "0"))

/**
 * Beam's `NexmarkUtils.RateUnit.PER_SECOND.rateToPeriodUs(rate)`: the inter-event delay in whole
 * microseconds, `(1 000 000 + rate / 2) / rate` in long arithmetic.
 *
 * @example
 * ```ts
 * import { interEventDelayUs } from "./NexmarkGenerator.ts"
 * interEventDelayUs(10_000) // 100
 * interEventDelayUs(3) // 333333
 * ```
 * @since 0.1.0
 */
export const interEventDelayUs = (rate: number): number => Math.floor((1_000_000 + Math.floor(rate / 2)) / rate)

/**
 * Beam's `PersonGenerator.lastBase0PersonId`: the last person id (from 0) generated at or before
 * event `eventId`.
 *
 * @since 0.1.0
 */
export const lastBase0PersonId = (eventId: number): number => {
  const epoch = Math.floor(eventId / PROPORTION_DENOMINATOR)
  let offset = eventId % PROPORTION_DENOMINATOR
  if (offset >= PERSON_PROPORTION) offset = PERSON_PROPORTION - 1
  return epoch * PERSON_PROPORTION + offset
}

/**
 * Beam's `AuctionGenerator.lastBase0AuctionId`: the last auction id (from 0) generated at or
 * before event `eventId` (-1 before the first one).
 *
 * @since 0.1.0
 */
export const lastBase0AuctionId = (eventId: number): number => {
  let epoch = Math.floor(eventId / PROPORTION_DENOMINATOR)
  let offset = eventId % PROPORTION_DENOMINATOR
  if (offset < PERSON_PROPORTION) {
    epoch--
    offset = AUCTION_PROPORTION - 1
  } else if (offset >= PERSON_PROPORTION + AUCTION_PROPORTION) {
    offset = AUCTION_PROPORTION - 1
  } else {
    offset -= PERSON_PROPORTION
  }
  return epoch * AUCTION_PROPORTION + offset
}

/** `Integer.reverse(i)` then `Math.abs` (which leaves `Integer.MIN_VALUE` negative, as Java does). */
const absReverse = (i: number): number => {
  let x = i >>> 0
  let r = 0
  for (let b = 0; b < 32; b++) {
    r = (r << 1) | (x & 1)
    x >>>= 1
  }
  r |= 0
  return r === -2_147_483_648 ? r : Math.abs(r)
}

/** A 64-bit mix of the `seed` option (0 stays 0, so seed 0 is Beam's stream). */
const mixSeed = (seed: bigint): bigint => BigInt.asUintN(64, BigInt.asUintN(64, seed) * 0x9e3779b97f4a7c15n)

/**
 * Generates Nexmark events: one instance per configuration (it precomputes the channel table),
 * `rows(from, to)` gives events `[from, to)` as internal rows of `NexmarkSchema`.
 *
 * @example
 * ```ts
 * import { DEFAULT_GENERATOR_CONFIG, NexmarkGenerator } from "./NexmarkGenerator.ts"
 * const gen = new NexmarkGenerator(DEFAULT_GENERATOR_CONFIG)
 * const [person, auction] = gen.rows(0, 2)
 * person[0] // 0, a person
 * auction[0] // 1, an auction
 * ```
 * @since 0.1.0
 */
export class NexmarkGenerator {
  readonly config: NexmarkGeneratorConfig
  private readonly random = new JavaRandom()
  private readonly delayUs: number
  private readonly seedLo: number
  private readonly seedHi: number
  /** Events from one auction to the one `numInFlightAuctions` later (Beam's `numEventsForAuctions`). */
  private readonly numEventsForAuctions: number
  private readonly hotUrls: ReadonlyArray<string>
  private readonly channelNames: ReadonlyArray<string>
  private readonly channelUrls: ReadonlyArray<string>
  /** The bytes (ASCII) of the string being built, reused; strings are decoded from it as latin1. */
  private bytes: Buffer = Buffer.alloc(4096)
  /** The bids' padding of the chunk `rows` is generating, and where the next one goes. */
  private extraBytes: Buffer = Buffer.alloc(EXTRA_CHUNK * 128)
  private extraPos = 0
  /** Where the last bid's padding starts in `extraBytes`. */
  private extraStart = 0
  /** The chunk's bids (their `extra` still to fill in) and where each one's padding starts. */
  private readonly pendingBids: Array<Array<unknown>> = new Array(EXTRA_CHUNK).fill(EMPTY_ROW)
  private readonly pendingStarts = new Int32Array(EXTRA_CHUNK + 1)

  constructor(config: NexmarkGeneratorConfig) {
    this.config = config
    this.delayUs = interEventDelayUs(config.firstEventRate)
    const mixed = mixSeed(config.seed)
    this.seedLo = Number(mixed & 0xffffffn)
    this.seedHi = Number((mixed >> 24n) & 0xffffffn)
    this.numEventsForAuctions = Math.floor((config.numInFlightAuctions * PROPORTION_DENOMINATOR) / AUCTION_PROPORTION)
    // Flink's `BidGenerator.HOT_URLS` and `CHANNEL_URL_CACHE`, drawn in Flink's order from one
    // random seeded with the `seed` option.
    this.random.setSeedBigInt(BigInt.asIntN(64, config.seed))
    const hot: Array<string> = []
    for (let i = 0; i < HOT_CHANNELS.length; i++) hot.push(this.baseUrl())
    this.hotUrls = hot
    const names: Array<string> = []
    const urls: Array<string> = []
    for (let i = 0; i < CHANNELS_NUMBER; i++) {
      let url = this.baseUrl()
      if (this.random.nextIntBounded(10) > 0) url = `${url}&channel_id=${absReverse(i)}`
      names.push(`channel-${i}`)
      urls.push(url)
    }
    this.channelNames = names
    this.channelUrls = urls
  }

  /**
   * The event time of event `n`: `baseTime + floor(n * delayUs / 1000)` (Beam's
   * `timestampAndInterEventDelayUsForEvent` for a single rate), exact for any safe `n`.
   */
  timestampForEvent(n: number): number {
    const thousands = Math.floor(n / 1000)
    const rest = n - thousands * 1000
    return this.config.baseTimeMs + thousands * this.delayUs + Math.floor((rest * this.delayUs) / 1000)
  }

  /**
   * Events `[from, to)` (offsets of the source), in order.
   *
   * A bid's `extra` (the only string of a bid not taken from a table, and bids are 46 events in
   * 50) is not decoded one string at a time: the bids of a run of `EXTRA_CHUNK` events write
   * their padding's bytes one after the other into one buffer, which is decoded once, and each
   * bid's `extra` is a substring of it (V8 keeps a substring of 13 characters or more as a
   * slice of its parent, no copy). One native decoding per chunk instead of one per bid: the
   * strings are the same. A bid kept alive keeps its chunk's padding (at most `EXTRA_CHUNK`
   * bids' worth, about 20 KB) alive with it.
   */
  rows(from: number, to: number): Array<InternalRow> {
    const out = new Array<InternalRow>(Math.max(0, to - from))
    const bids = this.pendingBids
    const starts = this.pendingStarts
    let i = 0
    for (let chunkStart = from; chunkStart < to; chunkStart += EXTRA_CHUNK) {
      const chunkEnd = Math.min(to, chunkStart + EXTRA_CHUNK)
      this.extraPos = 0
      let pending = 0
      for (let n = chunkStart; n < chunkEnd; n++) {
        const row = this.event(n, true)
        out[i++] = row
        if (row[0] === BID) {
          bids[pending] = row[3] as Array<unknown>
          starts[pending] = this.extraStart
          pending++
        }
      }
      if (pending === 0) continue
      const text = this.extraBytes.toString("latin1", 0, this.extraPos)
      starts[pending] = this.extraPos
      for (let k = 0; k < pending; k++) {
        bids[k][6] = text.substring(starts[k], starts[k + 1])
        bids[k] = EMPTY_ROW
      }
    }
    return out
  }

  /**
   * Event `n` as a row `[event_type, person, auction, bid, dateTime]`. With `deferExtra` (only
   * `rows` passes it), a bid's `extra` is written to `extraBytes` and left `""` in the row, for
   * `rows` to fill in.
   */
  event(n: number, deferExtra = false): InternalRow {
    // One generator, no out-of-order groups: Beam's event id and event number are both `n`.
    const eventId = n
    const timestamp = this.timestampForEvent(n)
    const lo = eventId % TWO_24
    const hi = Math.floor(eventId / TWO_24) % TWO_24
    this.random.setSeed(lo ^ this.seedLo, hi ^ this.seedHi)
    const rem = eventId % PROPORTION_DENOMINATOR
    if (rem < PERSON_PROPORTION) return [PERSON, this.person(eventId, timestamp), null, null, timestamp]
    if (rem < PERSON_PROPORTION + AUCTION_PROPORTION) {
      return [AUCTION, null, this.auction(n, eventId, timestamp), null, timestamp]
    }
    return [BID, null, null, this.bid(eventId, timestamp, deferExtra), timestamp]
  }

  /** Beam's `PersonGenerator.nextPerson`: `[id, name, emailAddress, creditCard, city, state, dateTime, extra]`. */
  private person(eventId: number, timestamp: number): InternalRow {
    const r = this.random
    const id = lastBase0PersonId(eventId) + FIRST_PERSON_ID
    const name = `${FIRST_NAMES[r.nextIntBounded(FIRST_NAMES.length)]} ${LAST_NAMES[r.nextIntBounded(LAST_NAMES.length)]}`
    const email = `${this.nextString(7)}@${this.nextString(5)}.com`
    const creditCard = `${FOUR_DIGITS[r.nextIntBounded(10_000)]} ${FOUR_DIGITS[r.nextIntBounded(10_000)]} ${FOUR_DIGITS[r.nextIntBounded(10_000)]} ${FOUR_DIGITS[r.nextIntBounded(10_000)]}`
    const city = US_CITIES[r.nextIntBounded(US_CITIES.length)]
    const state = US_STATES[r.nextIntBounded(US_STATES.length)]
    const currentSize = 8 + name.length + email.length + creditCard.length + city.length + state.length
    const extra = this.nextExtra(currentSize, this.config.avgPersonByteSize)
    return [id, name, email, creditCard, city, state, timestamp, extra]
  }

  /**
   * Beam's `AuctionGenerator.nextAuction`: `[id, itemName, description, initialBid, reserve,
   * dateTime, expires, seller, category, extra]`.
   */
  private auction(eventNumber: number, eventId: number, timestamp: number): InternalRow {
    const r = this.random
    const c = this.config
    const id = lastBase0AuctionId(eventId) + FIRST_AUCTION_ID
    let seller: number
    if (r.nextIntBounded(c.hotSellersRatio) > 0) {
      seller = Math.floor(lastBase0PersonId(eventId) / HOT_SELLER_RATIO) * HOT_SELLER_RATIO
    } else {
      seller = this.nextBase0PersonId(eventId)
    }
    seller += FIRST_PERSON_ID
    const category = FIRST_CATEGORY_ID + r.nextIntBounded(NUM_CATEGORIES)
    const initialBid = this.nextPrice()
    // Beam's `nextAuctionLengthMs`: a length averaging the time until `numInFlightAuctions`
    // auctions later.
    const futureAuction = this.timestampForEvent(eventNumber + this.numEventsForAuctions)
    const horizonMs = futureAuction - timestamp
    const expires = timestamp + 1 + this.nextLong(Math.max(horizonMs * 2, 1))
    const itemName = this.nextString(20)
    const description = this.nextString(100)
    const reserve = initialBid + this.nextPrice()
    const currentSize = 8 + itemName.length + description.length + 8 + 8 + 8 + 8 + 8
    const extra = this.nextExtra(currentSize, c.avgAuctionByteSize)
    return [id, itemName, description, initialBid, reserve, timestamp, expires, seller, category, extra]
  }

  /** Beam's `BidGenerator.nextBid` plus Flink's channel and url: `[auction, bidder, price, channel, url, dateTime, extra]`. */
  private bid(eventId: number, timestamp: number, deferExtra: boolean): InternalRow {
    const r = this.random
    const c = this.config
    let auction: number
    if (r.nextIntBounded(c.hotAuctionRatio) > 0) {
      auction = Math.floor(lastBase0AuctionId(eventId) / HOT_AUCTION_RATIO) * HOT_AUCTION_RATIO
    } else {
      auction = this.nextBase0AuctionId(eventId)
    }
    auction += FIRST_AUCTION_ID
    let bidder: number
    if (r.nextIntBounded(c.hotBiddersRatio) > 0) {
      // The second person of the batch, so hot bidders and hot sellers differ.
      bidder = Math.floor(lastBase0PersonId(eventId) / HOT_BIDDER_RATIO) * HOT_BIDDER_RATIO + 1
    } else {
      bidder = this.nextBase0PersonId(eventId)
    }
    bidder += FIRST_PERSON_ID
    const price = this.nextPrice()
    let extra = ""
    if (deferExtra) this.nextExtraBytes(8 + 8 + 8 + 8, c.avgBidByteSize)
    else extra = this.nextExtra(8 + 8 + 8 + 8, c.avgBidByteSize)
    let channel: string
    let url: string
    if (r.nextIntBounded(HOT_CHANNELS_RATIO) > 0) {
      const i = r.nextIntBounded(HOT_CHANNELS.length)
      channel = HOT_CHANNELS[i]
      url = this.hotUrls[i]
    } else {
      const i = r.nextIntBounded(CHANNELS_NUMBER)
      channel = this.channelNames[i]
      url = this.channelUrls[i]
    }
    return [auction, bidder, price, channel, url, timestamp, extra]
  }

  /** Beam's `PersonGenerator.nextBase0PersonId`: one of the active people, or a few ahead. */
  private nextBase0PersonId(eventId: number): number {
    const numPeople = lastBase0PersonId(eventId) + 1
    const activePeople = Math.min(numPeople, this.config.numActivePeople)
    const n = this.nextLong(activePeople + PERSON_ID_LEAD)
    return numPeople - activePeople + n
  }

  /** Beam's `AuctionGenerator.nextBase0AuctionId`: one of the in-flight auctions, or a few ahead. */
  private nextBase0AuctionId(eventId: number): number {
    const maxAuction = lastBase0AuctionId(eventId)
    const minAuction = Math.max(maxAuction - this.config.numInFlightAuctions, 0)
    return minAuction + this.nextLong(maxAuction - minAuction + 1 + AUCTION_ID_LEAD)
  }

  /** Beam's `LongGenerator.nextLong`: `nextInt(n)` below `Integer.MAX_VALUE`, else `abs(nextLong() % n)`. */
  private nextLong(n: number): number {
    if (n < INT_MAX) return this.random.nextIntBounded(n)
    const v = this.random.nextLong() % BigInt(n)
    return Number(v < 0n ? -v : v)
  }

  /** Beam's `PriceGenerator.nextPrice`: `round(10^(6u) * 100)`, log-uniform from 1.00 to 1 000 000.00. */
  private nextPrice(): number {
    return Math.round(10 ** (this.random.nextDouble() * 6.0) * 100.0)
  }

  /** The byte buffer, grown to hold `n` bytes. */
  private buffer(n: number): Buffer {
    if (this.bytes.length < n) this.bytes = Buffer.alloc(n * 2)
    return this.bytes
  }

  /** Beam's `StringsGenerator.nextString(maxLength)`: 3 to `maxLength - 1` letters and spaces, trimmed. */
  private nextString(maxLength: number, special = 32): string {
    const r = this.random
    const len = MIN_STRING_LENGTH + r.nextIntBounded(maxLength - MIN_STRING_LENGTH)
    const bytes = this.buffer(len)
    for (let i = 0; i < len; i++) bytes[i] = r.nextIntBounded(13) === 0 ? special : 97 + r.nextIntBounded(26)
    // Java's `trim()`: only the space can be at either end here.
    let from = 0
    let to = len
    if (special === 32) {
      while (from < to && bytes[from] === 32) from++
      while (to > from && bytes[to - 1] === 32) to--
    }
    return bytes.toString("latin1", from, to)
  }

  /**
   * Beam's `StringsGenerator.nextExactString`: `length` characters, six from each `nextInt()`:
   * `'a' + rnd % 26`, then `rnd /= 26`, with Java's signed remainder, so a negative `rnd` gives
   * characters below `a` (`H` to `` ` ``), as the reference does. The six characters are the
   * low six base-26 digits of `|rnd|`, taken three at a time from tables.
   */
  private nextExactString(length: number): string {
    const bytes = this.buffer(length + 6)
    writeExactString(this.random, bytes, 0, length)
    return bytes.toString("latin1", 0, length)
  }

  /** Beam's `StringsGenerator.nextExtra`: padding so that the event averages `desiredAverageSize` bytes. */
  private nextExtra(currentSize: number, desiredAverageSize: number): string {
    const size = this.extraSize(currentSize, desiredAverageSize)
    return size === 0 ? "" : this.nextExactString(size)
  }

  /** The length `nextExtra` draws (0 when the event is already large enough: nothing is drawn). */
  private extraSize(currentSize: number, desiredAverageSize: number): number {
    if (currentSize > desiredAverageSize) return 0
    const desired = desiredAverageSize - currentSize
    const delta = Math.round(desired * 0.2)
    const minSize = desired - delta
    return minSize + (delta === 0 ? 0 : this.random.nextIntBounded(2 * delta))
  }

  /**
   * `nextExtra`'s characters (the same draws) appended to `extraBytes` at `extraPos`, with
   * `extraStart` set to where they begin.
   */
  private nextExtraBytes(currentSize: number, desiredAverageSize: number): void {
    const length = this.extraSize(currentSize, desiredAverageSize)
    const start = this.extraPos
    this.extraStart = start
    if (length === 0) return
    if (this.extraBytes.length < start + length + 6) {
      const grown = Buffer.alloc((start + length + 6) * 2)
      this.extraBytes.copy(grown, 0, 0, start)
      this.extraBytes = grown
    }
    writeExactString(this.random, this.extraBytes, start, length)
    this.extraPos = start + length
  }

  /** Flink's `BidGenerator.getBaseUrl`. */
  private baseUrl(): string {
    const a = this.nextString(5, 95)
    const b = this.nextString(5, 95)
    const c = this.nextString(5, 95)
    return `https://www.nexmark.com/${a}/${b}/${c}/item.htm?query=1`
  }
}

/**
 * Writes `nextExactString(length)`'s characters into `bytes` from `at` (six per `nextInt()`, so
 * up to five bytes past `at + length` are overwritten; `bytes` must have room for them).
 */
const writeExactString = (r: JavaRandom, bytes: Buffer, at: number, length: number): void => {
  const end = at + length
  let i = at
  while (i < end) {
    const rnd = r.nextInt()
    const table = rnd < 0 ? DIGITS_NEG : DIGITS_POS
    // |rnd| as an unsigned 32-bit int (2^31 for Integer.MIN_VALUE, as Java's digits of it).
    const abs = (rnd < 0 ? -rnd : rnd) >>> 0
    const low = (abs % 17_576) * 3
    const high = (((abs / 17_576) >>> 0) % 17_576) * 3
    bytes[i] = table[low]
    bytes[i + 1] = table[low + 1]
    bytes[i + 2] = table[low + 2]
    bytes[i + 3] = table[high]
    bytes[i + 4] = table[high + 1]
    bytes[i + 5] = table[high + 2]
    i += 6
  }
}

/**
 * For each `k < 26^3`, the three characters `'a' + d` (and, for a negative `rnd`, `'a' - d`) of
 * the base-26 digits `d` of `k`, least significant first.
 */
const DIGITS_POS = new Uint8Array(17_576 * 3)
const DIGITS_NEG = new Uint8Array(17_576 * 3)
for (let k = 0; k < 17_576; k++) {
  const d0 = k % 26
  const d1 = Math.floor(k / 26) % 26
  const d2 = Math.floor(k / 676)
  DIGITS_POS[k * 3] = 97 + d0
  DIGITS_POS[k * 3 + 1] = 97 + d1
  DIGITS_POS[k * 3 + 2] = 97 + d2
  DIGITS_NEG[k * 3] = 97 - d0
  DIGITS_NEG[k * 3 + 1] = 97 - d1
  DIGITS_NEG[k * 3 + 2] = 97 - d2
}
