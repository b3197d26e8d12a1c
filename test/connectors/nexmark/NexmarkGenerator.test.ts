/**
 * The Nexmark generator against Apache Beam's: the events Beam's own `Generator` printed
 * (`fixtures/`, see its README) for several ranges and configurations, field for field; and the
 * event model's properties for any configuration (fast-check): the 1 : 3 : 46 proportions of
 * people, auctions and bids, event times in order at the configured rate, ids within the active
 * and in-flight windows, hot sellers, auctions and bidders, sizes near their averages, and
 * per-event determinism (any range regenerates on its own exactly as within a longer run).
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import type { InternalRow } from "../../../core/Row.ts"
import {
  AUCTION,
  BID,
  DEFAULT_GENERATOR_CONFIG,
  interEventDelayUs,
  lastBase0AuctionId,
  lastBase0PersonId,
  NexmarkGenerator,
  type NexmarkGeneratorConfig,
  PERSON
} from "../../../connectors/nexmark/mod.ts"

const FIXTURES = join(fileURLToPath(new URL(".", import.meta.url)), "fixtures")

/** `BeamGolden.java`'s line for an event. */
const q = (s: unknown): string => `"${String(s).replace(/["\\]/g, (c) => `\\${c}`)}"`
const beamLine = (r: InternalRow): string => {
  if (r[0] === PERSON) {
    const p = r[1] as InternalRow
    return `P ${p[0]} ${q(p[1])} ${q(p[2])} ${q(p[3])} ${q(p[4])} ${q(p[5])} ${p[6]} ${q(p[7])}`
  }
  if (r[0] === AUCTION) {
    const a = r[2] as InternalRow
    return `A ${a[0]} ${q(a[1])} ${q(a[2])} ${a[3]} ${a[4]} ${a[5]} ${a[6]} ${a[7]} ${a[8]} ${q(a[9])}`
  }
  const b = r[3] as InternalRow
  return `B ${b[0]} ${b[1]} ${b[2]} ${b[5]} ${q(b[6])}`
}

const generator = (overrides: Partial<NexmarkGeneratorConfig>) =>
  new NexmarkGenerator({ ...DEFAULT_GENERATOR_CONFIG, ...overrides })

describe("NexmarkGenerator against Apache Beam's Generator", () => {
  it("gives Beam's first 150 events field for field", () => {
    const expected = readFileSync(join(FIXTURES, "beam-events-0-150.txt"), "utf8").trimEnd().split("\n")
    const actual = generator({}).rows(0, 150).map(beamLine)
    expect(actual).toEqual(expected)
  })

  it("gives Beam's events over 34 000 events of six configurations", () => {
    const specs = readFileSync(join(FIXTURES, "beam-hashes.txt"), "utf8").trim().split("\n")
    expect(specs.length).toBe(6)
    for (const spec of specs) {
      const [first, count, baseTime, rate, hash, ...settings] = spec.split(" ")
      const overrides: Record<string, number> = {}
      for (const s of settings) {
        const [k, v] = s.split("=")
        overrides[k] = Number(v)
      }
      const gen = generator({ baseTimeMs: Number(baseTime), firstEventRate: Number(rate), ...overrides })
      const from = Number(first)
      const text = `${gen
        .rows(from, from + Number(count))
        .map(beamLine)
        .join("\n")}\n`
      expect(createHash("sha256").update(text).digest("hex"), spec).toBe(hash)
    }
  })

  it("adds Flink's channel and url to bids, drawn after Beam's fields", () => {
    const rows = generator({}).rows(0, 5000)
    const bids = rows.filter((r) => r[0] === BID).map((r) => r[3] as InternalRow)
    const hot = new Set(["Google", "Facebook", "Baidu", "Apple"])
    const hotShare = bids.filter((b) => hot.has(b[3] as string)).length / bids.length
    expect(hotShare).toBeGreaterThan(0.45)
    expect(hotShare).toBeLessThan(0.55)
    for (const b of bids) {
      const channel = b[3] as string
      const url = b[4] as string
      expect(url).toMatch(
        /^https:\/\/www\.nexmark\.com\/[a-z_]+\/[a-z_]+\/[a-z_]+\/item\.htm\?query=1(&channel_id=-?\d+)?$/
      )
      if (!hot.has(channel)) expect(channel).toMatch(/^channel-\d{1,4}$/)
    }
    // each hot channel has one url, each numbered channel one url (Flink's tables)
    const urlOf = new Map<string, string>()
    for (const b of bids) {
      const seen = urlOf.get(b[3] as string)
      if (seen !== undefined) expect(b[4]).toBe(seen)
      urlOf.set(b[3] as string, b[4] as string)
    }
    // Flink's channel table: `channel_id` is `Math.abs(Integer.reverse(i))` for 9 channels in 10;
    // channel 1 reverses to Integer.MIN_VALUE, which `Math.abs` leaves negative
    const tables = generator({}) as unknown as { channelUrls: ReadonlyArray<string> }
    const reverse = (i: number) => {
      const r = Number.parseInt((i >>> 0).toString(2).padStart(32, "0").split("").reverse().join(""), 2) | 0
      return r === -2147483648 ? r : Math.abs(r)
    }
    let withId = 0
    tables.channelUrls.forEach((u, i) => {
      const m = /&channel_id=(-?\d+)$/.exec(u)
      if (m !== null) {
        withId++
        expect(Number(m[1])).toBe(reverse(i))
      }
    })
    expect(reverse(1)).toBe(-2147483648)
    expect(withId / tables.channelUrls.length).toBeGreaterThan(0.88)
    expect(withId / tables.channelUrls.length).toBeLessThan(0.92)
  })

  it("mixes the seed into every event; seed 0 is Beam's stream", () => {
    const beam = generator({}).rows(0, 100).map(beamLine)
    const seeded = generator({ seed: 7n }).rows(0, 100).map(beamLine)
    expect(generator({ seed: 0n }).rows(0, 100).map(beamLine)).toEqual(beam)
    expect(seeded).not.toEqual(beam)
    expect(generator({ seed: 7n }).rows(0, 100).map(beamLine)).toEqual(seeded)
    // the kinds, ids and times do not depend on the seed
    expect(seeded.map((l) => l.split(" ")[0])).toEqual(beam.map((l) => l.split(" ")[0]))
  })
})

describe("the Nexmark event model", () => {
  it("has Beam's inter-event delay and id helpers", () => {
    expect(interEventDelayUs(10_000)).toBe(100)
    expect(interEventDelayUs(3)).toBe(333_333)
    expect(interEventDelayUs(2_000_000)).toBe(1) // (1 000 000 + 1 000 000) / 2 000 000
    expect(lastBase0PersonId(0)).toBe(0)
    expect(lastBase0PersonId(49)).toBe(0)
    expect(lastBase0PersonId(50)).toBe(1)
    expect(lastBase0AuctionId(0)).toBe(-1)
    expect(lastBase0AuctionId(1)).toBe(0)
    expect(lastBase0AuctionId(3)).toBe(2)
    expect(lastBase0AuctionId(49)).toBe(2)
    expect(lastBase0AuctionId(51)).toBe(3)
  })

  const config = fc.record({
    seed: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    baseTimeMs: fc.integer({ min: 0, max: 2_000_000_000_000 }),
    firstEventRate: fc.integer({ min: 1, max: 1_000_000 }),
    hotAuctionRatio: fc.integer({ min: 1, max: 10 }),
    hotSellersRatio: fc.integer({ min: 1, max: 10 }),
    hotBiddersRatio: fc.integer({ min: 1, max: 10 }),
    numInFlightAuctions: fc.integer({ min: 1, max: 200 }),
    numActivePeople: fc.integer({ min: 1, max: 2000 }),
    avgPersonByteSize: fc.integer({ min: 0, max: 400 }),
    avgAuctionByteSize: fc.integer({ min: 0, max: 1000 }),
    avgBidByteSize: fc.integer({ min: 0, max: 200 })
  })

  it("any range regenerates exactly as within a longer run", () => {
    fc.assert(
      fc.property(config, fc.nat(5_000_000), fc.nat(300), fc.nat(300), (c, start, a, len) => {
        const whole = new NexmarkGenerator(c).rows(start, start + a + len)
        const part = new NexmarkGenerator(c).rows(start + a, start + a + len)
        expect(part).toEqual(whole.slice(a))
      }),
      { numRuns: 60 }
    )
  })

  it("rows (bids' padding decoded a chunk at a time) equals event by event", () => {
    fc.assert(
      fc.property(config, fc.nat(5_000_000), fc.nat(700), (c, start, len) => {
        const rows = new NexmarkGenerator(c).rows(start, start + len)
        const one = new NexmarkGenerator(c)
        const each: Array<InternalRow> = []
        for (let n = start; n < start + len; n++) each.push(one.event(n))
        expect(rows).toEqual(each)
      }),
      { numRuns: 40 }
    )
  })

  it("keeps the proportions, times, ids and hot choices of the model", () => {
    fc.assert(
      fc.property(config, fc.nat(1_000_000), (c, block) => {
        const from = block * 50
        const gen = new NexmarkGenerator(c)
        const rows = gen.rows(from, from + 500)
        const delay = interEventDelayUs(c.firstEventRate)
        let lastTime = -1
        for (let i = 0; i < rows.length; i++) {
          const n = from + i
          const r = rows[i]
          // person : auction : bid = 1 : 3 : 46 in every block of 50
          expect(r[0]).toBe(n % 50 === 0 ? PERSON : n % 50 < 4 ? AUCTION : BID)
          // one struct set, the others null; the time is Beam's and never goes back
          expect([r[1], r[2], r[3]].filter((x) => x !== null).length).toBe(1)
          const time = r[4] as number
          expect(time).toBe(c.baseTimeMs + Math.floor((n * delay) / 1000))
          expect(time).toBeGreaterThanOrEqual(lastTime)
          lastTime = time
          const lastPerson = lastBase0PersonId(n) + 1000
          const lastAuction = lastBase0AuctionId(n) + 1000
          if (r[0] === PERSON) {
            const p = r[1] as InternalRow
            expect(p[0]).toBe(lastPerson)
            expect(p[6]).toBe(time)
            expect(p[3]).toMatch(/^\d{4} \d{4} \d{4} \d{4}$/)
            expect(p[2]).toMatch(/^[a-z ]*@[a-z ]*\.com$/)
          } else if (r[0] === AUCTION) {
            const a = r[2] as InternalRow
            expect(a[0]).toBe(lastAuction)
            expect(a[5]).toBe(time)
            expect(a[6] as number).toBeGreaterThan(time) // expires after it starts
            expect(a[4] as number).toBeGreaterThanOrEqual(a[3] as number) // reserve >= initial bid
            expect(a[8] as number).toBeGreaterThanOrEqual(10)
            expect(a[8] as number).toBeLessThan(15)
            const seller = a[7] as number
            // a hot seller (the first of the last hundred people), or an active person, or a lead
            const hotSeller = Math.floor((lastPerson - 1000) / 100) * 100 + 1000
            expect(
              seller === hotSeller ||
                (seller > lastPerson - Math.min(lastPerson - 999, c.numActivePeople) - 1 && seller < lastPerson + 11)
            ).toBe(true)
          } else {
            const b = r[3] as InternalRow
            expect(b[5]).toBe(time)
            const price = b[2] as number
            expect(price).toBeGreaterThanOrEqual(100)
            expect(price).toBeLessThanOrEqual(100_000_000)
            const auction = b[0] as number
            const hotAuction = Math.floor((lastAuction - 1000) / 100) * 100 + 1000
            expect(
              auction === hotAuction ||
                (auction >= Math.max(lastAuction - c.numInFlightAuctions, 1000) && auction < lastAuction + 11)
            ).toBe(true)
            const bidder = b[1] as number
            const hotBidder = Math.floor((lastPerson - 1000) / 100) * 100 + 1001
            expect(
              bidder === hotBidder ||
                (bidder > lastPerson - Math.min(lastPerson - 999, c.numActivePeople) - 1 && bidder < lastPerson + 11)
            ).toBe(true)
          }
        }
      }),
      { numRuns: 60 }
    )
  })

  it("draws hot auctions, bidders and sellers with probability 1 - 1/ratio, and pads to the average sizes", () => {
    const gen = generator({ hotAuctionRatio: 4, hotBiddersRatio: 5, hotSellersRatio: 10 })
    const rows = gen.rows(100_000, 300_000)
    let bids = 0
    let hotAuctions = 0
    let hotBidders = 0
    let auctions = 0
    let hotSellers = 0
    let bidBytes = 0
    let auctionBytes = 0
    let personBytes = 0
    let persons = 0
    for (let i = 0; i < rows.length; i++) {
      const n = 100_000 + i
      const r = rows[i]
      const lastPerson = lastBase0PersonId(n)
      if (r[0] === BID) {
        const b = r[3] as InternalRow
        bids++
        if (b[0] === Math.floor(lastBase0AuctionId(n) / 100) * 100 + 1000) hotAuctions++
        if (b[1] === Math.floor(lastPerson / 100) * 100 + 1001) hotBidders++
        bidBytes += 32 + (b[6] as string).length
      } else if (r[0] === AUCTION) {
        const a = r[2] as InternalRow
        auctions++
        if (a[7] === Math.floor(lastPerson / 100) * 100 + 1000) hotSellers++
        auctionBytes += 48 + (a[1] as string).length + (a[2] as string).length + (a[9] as string).length
      } else {
        const p = r[1] as InternalRow
        persons++
        personBytes += 8 + [p[1], p[2], p[3], p[4], p[5], p[7]].reduce((s: number, x) => s + (x as string).length, 0)
      }
    }
    expect(bids + auctions + persons).toBe(200_000)
    expect([persons, auctions, bids]).toEqual([4000, 12_000, 184_000])
    // a cold draw can land on the hot id too, hence a little above 1 - 1/ratio
    expect(hotAuctions / bids).toBeGreaterThan(0.74)
    expect(hotAuctions / bids).toBeLessThan(0.77)
    expect(hotBidders / bids).toBeGreaterThan(0.79)
    expect(hotBidders / bids).toBeLessThan(0.81)
    expect(hotSellers / auctions).toBeGreaterThan(0.89)
    expect(hotSellers / auctions).toBeLessThan(0.91)
    expect(Math.abs(bidBytes / bids - 100)).toBeLessThan(2)
    expect(Math.abs(auctionBytes / auctions - 500)).toBeLessThan(5)
    expect(Math.abs(personBytes / persons - 200)).toBeLessThan(5)
  })
})
