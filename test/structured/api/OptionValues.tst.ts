/**
 * Type tests for options with a fixed set of values (#18 item 6): output modes are Spark's three
 * (lower case, capitalised or upper case), `format(...)` suggests the registry's names and takes
 * any other string, and trigger intervals and watermark delays are numbers, Effect durations or
 * Spark interval strings checked at compile time: a misspelled literal does not compile.
 */
import { Duration } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import type { IntervalString, IntervalUnit } from "../../../core/Durations.ts"
import { Trigger, type TriggerInterval } from "../../../core/Trigger.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import type { ReadFormat } from "../../../structured/api/DataFrameReader.ts"
import type { StreamReadFormat } from "../../../structured/api/DataStreamReader.ts"
import type { StreamWriteFormat } from "../../../structured/api/DataStreamWriter.ts"
import type { SessionShape } from "../../../structured/api/Session.ts"

declare const spark: SessionShape
declare const events: DataFrame<{ word: string; ts: Date }>

/** The literal members of a union with a `(string & {})` fallback. */
type Known<T> = T extends string ? (string extends T ? never : T) : never

describe("outputMode", () => {
  it("takes Spark's three modes in lower case, capitalised and upper case", () => {
    const w = events.writeStream
    w.outputMode("append").outputMode("update").outputMode("complete")
    w.outputMode("Append").outputMode("Update").outputMode("Complete")
    w.outputMode("APPEND").outputMode("UPDATE").outputMode("COMPLETE")
    type Mode = Parameters<typeof w.outputMode>[0]
    expectTypeOf<Mode>().toEqualTypeOf<
      "append" | "update" | "complete" | "Append" | "Update" | "Complete" | "APPEND" | "UPDATE" | "COMPLETE"
    >()
  })
  it("rejects misspellings, other modes and plain strings", () => {
    const w = events.writeStream
    // @ts-expect-error misspelled
    w.outputMode("apend")
    // @ts-expect-error not a streaming output mode (a save mode)
    w.outputMode("overwrite")
    // @ts-expect-error a mixed case is not typed (Spark reads it; cast if you must)
    w.outputMode("aPPend")
    const fromConfig: string = "append"
    // @ts-expect-error a string must be narrowed to a mode first
    w.outputMode(fromConfig)
  })
})

describe("format", () => {
  it("suggests the built-in names of each registry", () => {
    expectTypeOf<Known<StreamReadFormat>>().toEqualTypeOf<
      "rate" | "rate-micro-batch" | "socket" | "kafka" | "kinesis" | "nexmark" | "parquet" | "json" | "csv" | "text" | "orc" | "avro"
    >()
    expectTypeOf<Known<StreamWriteFormat>>().toEqualTypeOf<
      "console" | "memory" | "noop" | "kafka" | "parquet" | "json" | "csv" | "text" | "orc" | "avro"
    >()
    expectTypeOf<Known<ReadFormat>>().toEqualTypeOf<
      "parquet" | "json" | "csv" | "text" | "orc" | "avro" | "kafka" | "nexmark" | "statestore" | "state-metadata"
    >()
    expectTypeOf(spark.readStream.format).parameter(0).toEqualTypeOf<StreamReadFormat>()
    expectTypeOf(events.writeStream.format).parameter(0).toEqualTypeOf<StreamWriteFormat>()
    expectTypeOf(spark.read.format).parameter(0).toEqualTypeOf<ReadFormat>()
  })
  it("takes any other string, for registered and Spark Connect formats", () => {
    spark.readStream.format("rate").format("my-source")
    events.writeStream.format("console").format("delta")
    spark.read.format("statestore").format("jdbc")
    const fromConfig: string = "parquet"
    spark.read.format(fromConfig)
    // @ts-expect-error a format is a string
    spark.read.format(42)
  })
})

describe("Trigger intervals", () => {
  it("take Spark's interval strings as API.md and the guides write them", () => {
    Trigger.ProcessingTime("1 second")
    Trigger.ProcessingTime("10 seconds")
    Trigger.ProcessingTime("5 minutes")
    Trigger.ProcessingTime("1 hour")
    Trigger.ProcessingTime("10 day")
    Trigger.ProcessingTime("250 milliseconds")
    Trigger.ProcessingTime("10 millis")
    Trigger.ProcessingTime("100 ms")
    Trigger.ProcessingTime("1.5 seconds")
    Trigger.ProcessingTime("interval 10 seconds")
    Trigger.ProcessingTime("INTERVAL 10 SECONDS")
    Trigger.ProcessingTime("10 Seconds")
    Trigger.ProcessingTime("1 hour 30 minutes")
    Trigger.ProcessingTime("interval 1 minute 30 seconds")
    Trigger.ProcessingTime("'10' seconds")
    Trigger.ProcessingTime("interval '1 2:3:4' day to second")
    Trigger.Continuous("1 second")
    Trigger.Continuous("200 millis")
  })
  it("take milliseconds and Effect durations", () => {
    Trigger.ProcessingTime(0)
    Trigger.ProcessingTime(1000)
    Trigger.ProcessingTime(Duration.seconds(1))
    Trigger.ProcessingTime({ seconds: 1, milliseconds: 500 })
    Trigger.ProcessingTime([1, 0])
    Trigger.ProcessingTime(1_000_000_000n)
    Trigger.Continuous(Duration.millis(200))
    expectTypeOf(Trigger.ProcessingTime("1 second")).toEqualTypeOf<Trigger>()
  })
  it("take values that are not literals, checked when the query starts", () => {
    const fromConfig: string = "1 second"
    const input: Duration.Input = "1 second"
    const seconds = 2 as number
    Trigger.ProcessingTime(fromConfig)
    Trigger.ProcessingTime(input)
    Trigger.ProcessingTime(`${seconds} seconds`)
    const either = "1 second" as "1 second" | "2 seconds"
    Trigger.ProcessingTime(either)
  })
  it("reject misspelled and malformed literals", () => {
    // @ts-expect-error misspelled unit
    Trigger.ProcessingTime("1 secnod")
    // @ts-expect-error misspelled unit in a later part
    Trigger.ProcessingTime("1 hour 30 minuets")
    // @ts-expect-error not an interval
    Trigger.ProcessingTime("soon")
    // @ts-expect-error no space between number and unit
    Trigger.ProcessingTime("10seconds")
    // @ts-expect-error no number
    Trigger.ProcessingTime("seconds")
    // @ts-expect-error a number without a unit
    Trigger.ProcessingTime("10")
    // @ts-expect-error nanoseconds are Effect's, not Spark's, and the parser does not read them
    Trigger.ProcessingTime("10 nanos")
    // @ts-expect-error not an ANSI qualifier
    Trigger.ProcessingTime("interval '1 2' day to decade")
    // @ts-expect-error misspelled unit
    Trigger.Continuous("1 secnod")
    const either = "1 second" as "1 second" | "2 secnods"
    // @ts-expect-error one member of the union is misspelled
    Trigger.ProcessingTime(either)
    // @ts-expect-error not a duration
    Trigger.ProcessingTime(true)
  })
  it("name the expected form in the error", () => {
    expectTypeOf<TriggerInterval<"1 secnod">>().toEqualTypeOf<
      'Not a Spark interval: "1 secnod". Write <number> <unit> parts such as "10 seconds" or "1 hour 30 minutes".'
    >()
    expectTypeOf<IntervalString<"10 seconds">>().toEqualTypeOf<"10 seconds">()
    expectTypeOf<IntervalString<string>>().toEqualTypeOf<string>()
    expectTypeOf<"minutes">().toMatchTypeOf<IntervalUnit>()
  })
})

describe("withWatermark", () => {
  it("takes Spark's interval strings, and strings that are not literals", () => {
    events.withWatermark("ts", "10 seconds")
    events.withWatermark("ts", "0 seconds")
    events.withWatermark("ts", "1 minute")
    events.withWatermark("ts", "2 years 5 months")
    events.withWatermark("ts", "interval 1 hour 30 minutes")
    const delay: string = "10 seconds"
    events.withWatermark("ts", delay)
    const ms = 2000 as number
    events.withWatermark("ts", `${ms / 1000} seconds`)
  })
  it("rejects misspelled delays", () => {
    // @ts-expect-error misspelled unit
    events.withWatermark("ts", "10 secnods")
    // @ts-expect-error not an interval
    events.withWatermark("ts", "ten seconds")
    // @ts-expect-error the column is still checked
    events.withWatermark("tss", "10 seconds")
  })
})
