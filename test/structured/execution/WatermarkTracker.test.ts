import { describe, expect, it } from "vitest"
import { parsePolicy, WatermarkTracker } from "../../../structured/execution/WatermarkTracker.ts"

const stats = (max: number, count = 1) => ({ max, min: max, sum: max * count, count })

describe("WatermarkTracker (Spark's WatermarkTracker)", () => {
  it("is max event time minus the delay, and never moves back", () => {
    const t = new WatermarkTracker("min")
    expect(t.update([stats(15_000)], [10_000])).toBe(true)
    expect(t.currentMs).toBe(5_000)
    expect(t.update([stats(12_000)], [10_000])).toBe(false)
    expect(t.currentMs).toBe(5_000)
    expect(t.update([undefined], [10_000])).toBe(false)
    expect(t.currentMs).toBe(5_000)
  })

  it("min policy: an input without data holds the watermark at 0", () => {
    const t = new WatermarkTracker("min")
    t.update([stats(20_000), undefined], [5_000, 5_000])
    expect(t.currentMs).toBe(0)
    t.update([undefined, stats(12_000)], [5_000, 5_000])
    expect(t.currentMs).toBe(7_000)
    t.update([stats(40_000), undefined], [5_000, 5_000])
    expect(t.currentMs).toBe(7_000)
  })

  it("max policy: the fastest input decides", () => {
    const t = new WatermarkTracker("max")
    t.update([stats(20_000), undefined], [5_000, 5_000])
    expect(t.currentMs).toBe(15_000)
  })

  it("a negative proposal keeps the initial 0", () => {
    const t = new WatermarkTracker("min")
    expect(t.update([stats(3_000)], [10_000])).toBe(false)
    expect(t.currentMs).toBe(0)
  })

  it("parses the policy conf case-insensitively", () => {
    expect(parsePolicy("MAX")).toBe("max")
    expect(parsePolicy(undefined)).toBe("min")
    expect(parsePolicy("median")).toBeUndefined()
  })
})

describe("duration strings", () => {
  it("read abbreviations as well as Spark's unit words", async () => {
    const { parseDurationMs } = await import("../../../core/Durations.ts")
    expect(parseDurationMs("200 ms")).toBe(200)
    expect(parseDurationMs("10 s")).toBe(10_000)
    expect(parseDurationMs("5 us")).toBe(0)
    expect(parseDurationMs("2 min")).toBe(120_000)
    expect(parseDurationMs("10 seconds")).toBe(10_000)
    expect(parseDurationMs("1 month")).toBe(31 * 86_400_000)
    expect(parseDurationMs("interval 1 hour 30 minutes")).toBe(5_400_000)
    expect(parseDurationMs("10 parsecs")).toBeUndefined()
  })

  it("read Spark's ANSI interval literals with a qualifier (SPARK-35815)", async () => {
    const { parseDurationMs, parseInterval } = await import("../../../core/Durations.ts")
    const DAY = 86_400_000
    expect(parseDurationMs("interval '1 2:3:4' day to second")).toBe(DAY + 7_384_000)
    expect(parseDurationMs("\tinterval '1-2' year to month")).toBe(14 * 31 * DAY)
    expect(parseDurationMs("INTERVAL '3 4' DAY TO HOUR")).toBe(3 * DAY + 4 * 3_600_000)
    expect(parseDurationMs("interval '1 2:30' day to minute")).toBe(DAY + 9_000_000)
    expect(parseDurationMs("interval '2:30' hour to minute")).toBe(9_000_000)
    expect(parseDurationMs("interval '1:2:3.5' hour to second")).toBe(3_723_500)
    expect(parseDurationMs("interval '2:03.25' minute to second")).toBe(123_250)
    expect(parseInterval("interval '-1-2' year to month")).toEqual({ months: -14, days: 0, micros: 0 })
    // The value must match the qualifier's pattern, and fields below the first are bounded.
    expect(parseDurationMs("interval '1 2:3:4' day to hour")).toBeUndefined()
    expect(parseDurationMs("interval '1 2' year to month")).toBeUndefined()
    expect(parseDurationMs("interval '1-12' year to month")).toBeUndefined()
    expect(parseDurationMs("interval '1 24' day to hour")).toBeUndefined()
    expect(parseDurationMs("interval '1 2:60' day to minute")).toBeUndefined()
    expect(parseDurationMs("interval '1 2' second to day")).toBeUndefined()
  })
})
