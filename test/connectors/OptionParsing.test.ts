/** The option parsers every connector shares (connectors/OptionParsing.ts), with Java's and Spark's messages. */
import { describe, expect, it } from "vitest"
import { timeStringAsMs as fileTimeStringAsMs } from "../../connectors/files/FileStreamOptions.ts"
import { timeStringAsMs as kafkaTimeStringAsMs } from "../../connectors/kafka/KafkaOptions.ts"
import {
  javaInt,
  javaLong,
  javaTrim,
  parseTimeString,
  TIME_ERROR,
  timeStringAsMs
} from "../../connectors/OptionParsing.ts"
import { timeStringAsSec } from "../../connectors/rate/RateOptions.ts"

describe("OptionParsing", () => {
  it("javaTrim strips the chars up to U+0020 only, as Java's String.trim", () => {
    expect(javaTrim(" \t\u0001a b\n")).toBe("a b")
    expect(javaTrim("\u00a0a\u00a0")).toBe("\u00a0a\u00a0")
    expect(javaTrim("")).toBe("")
  })

  it("javaLong and javaInt accept what Long.parseLong and Integer.parseInt accept", () => {
    expect(javaLong("9223372036854775807")).toBe(9223372036854775807n)
    expect(javaLong("-9223372036854775808")).toBe(-9223372036854775808n)
    expect(javaLong("9223372036854775808")).toBeUndefined()
    expect(javaLong("+12")).toBe(12n)
    expect(javaLong(" 1")).toBeUndefined()
    expect(javaInt("2147483647")).toBe(2147483647)
    expect(javaInt("2147483648")).toBeUndefined()
    expect(javaInt("1.0")).toBeUndefined()
  })

  it("timeStringAsMs: units, truncated microseconds, and Spark's three failures", () => {
    expect(["7d", "500ms", "2min", "2m", " 3S ", "1500us", "-5s", "42"].map(timeStringAsMs)).toEqual([
      604_800_000, 500, 120_000, 120_000, 3000, 1, -5000, 42
    ])
    expect(timeStringAsMs("2 hours")).toBe(`${TIME_ERROR}\nFailed to parse time string: 2 hours`)
    expect(timeStringAsMs("99999999999999999999s")).toBe(`${TIME_ERROR}\nFor input string: "99999999999999999999"`)
    expect(timeStringAsMs("5w")).toBe(`${TIME_ERROR}\nInvalid suffix: "w"`)
    expect(parseTimeString("10min")).toEqual({ value: 10n, suffix: "min" })
  })

  it("every connector reads a time option the same way and wraps the same message in its own error", () => {
    for (const text of ["15m", "250us", "bad", "5w"]) {
      const shared = timeStringAsMs(text)
      const file = fileTimeStringAsMs(text)
      const kafka = kafkaTimeStringAsMs(text)
      if (typeof shared === "number") {
        expect(file).toBe(shared)
        expect(kafka).toBe(shared)
      } else {
        expect(typeof file === "number" ? file : file.message).toBe(shared)
        expect(typeof kafka === "number" ? kafka : kafka.message).toBe(shared)
        const rate = timeStringAsSec(text)
        expect(typeof rate === "bigint" ? rate : rate.message).toBe(shared)
      }
    }
    expect(timeStringAsSec("1500ms")).toBe(1n)
  })
})
