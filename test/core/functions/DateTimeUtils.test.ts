import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as DT from "../../../core/functions/DateTimeUtils.ts"

describe("civil calendar", () => {
  it("days from civil agrees with Date.UTC over the proleptic Gregorian calendar", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1_000_000, max: 2_000_000 }), (days) => {
        const out = [0, 0, 0]
        DT.civilFromDays(days, out)
        const d = new Date(days * DT.MS_PER_DAY)
        expect(out).toEqual([d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()])
        expect(DT.daysFromCivil(out[0], out[1], out[2])).toBe(days)
      })
    )
  })

  it("ISO weeks and days", () => {
    expect(DT.isoDayOfWeek(0)).toBe(4) // 1970-01-01 was a Thursday
    expect(DT.isoWeekOfYear(DT.daysFromCivil(2008, 2, 20))).toBe(8)
    expect(DT.isoWeekOfYear(DT.daysFromCivil(2021, 1, 3))).toBe(53)
    expect(DT.isoWeekOfYear(DT.daysFromCivil(2024, 12, 30))).toBe(1)
  })

  it("formats like Spark, padding the year", () => {
    expect(DT.formatDate(DT.daysFromCivil(1, 2, 3))).toBe("0001-02-03")
    expect(DT.formatTimestamp(Date.UTC(2024, 0, 2, 3, 4, 5, 60))).toBe("2024-01-02 03:04:05.06")
    expect(DT.formatTimestamp(-1)).toBe("1969-12-31 23:59:59.999")
  })
})

describe("patterns", () => {
  it("format and parse round-trip", () => {
    const pattern = "yyyy-MM-dd HH:mm:ss.SSS"
    const format = DT.timestampFormatter(pattern) as (ms: number) => string
    const parse = DT.timestampParser(pattern) as (s: string) => number | null
    fc.assert(
      fc.property(fc.integer({ min: -62_135_596_800_000, max: 253_402_300_799_999 }), (ms) => {
        expect(parse(format(ms))).toBe(ms)
      })
    )
  })

  it("rejects what Spark 3+ rejects", () => {
    expect(DT.timestampFormatter("YYYY")).toBe(undefined)
    expect(DT.timestampFormatter("yyyy-ww")).toBe(undefined)
    expect(DT.timestampFormatter("'unclosed")).toBe(undefined)
    expect(DT.timestampFormatter("yyyy[-MM")).toBe(undefined)
  })

  it("optional sections parse with or without their content", () => {
    const parse = DT.timestampParser("yyyy-MM-dd[ HH:mm]") as (s: string) => number | null
    expect(parse("2020-01-02")).toBe(Date.UTC(2020, 0, 2))
    expect(parse("2020-01-02 10:30")).toBe(Date.UTC(2020, 0, 2, 10, 30))
  })

  it("zones", () => {
    expect(DT.zoneOffsetFunction("+05:30")?.(0)).toBe(5.5 * 3_600_000)
    expect(DT.zoneOffsetFunction("UTC-3")?.(0)).toBe(-3 * 3_600_000)
    expect(DT.zoneOffsetFunction("America/New_York")?.(Date.UTC(2024, 0, 1))).toBe(-5 * 3_600_000)
    expect(DT.zoneOffsetFunction("America/New_York")?.(Date.UTC(2024, 6, 1))).toBe(-4 * 3_600_000)
    expect(DT.zoneOffsetFunction("Mars/Base")).toBe(undefined)
  })
})
