/**
 * The Kafka options with Spark's validation messages (KafkaSourceProvider's
 * `validateGeneralOptions` / `validateStreamOptions` / `validateBatchOptions`, JsonUtils), the
 * offset JSON, and Spark's `rateLimit` arithmetic. No broker needed.
 */
import { describe, expect, it } from "vitest"
import { AnalysisError } from "../../../core/Errors.ts"
import {
  parseBatchOptions,
  parsePartitionOffsets,
  parseStreamOptions,
  parseWriteOptions,
  rateLimit
} from "../../../connectors/kafka/mod.ts"
import { toJson } from "../../../connectors/kafka/KafkaSourceOffset.ts"

const base = { "kafka.bootstrap.servers": "localhost:9092" }

const message = (r: unknown): string => {
  expect(r).toBeInstanceOf(AnalysisError)
  return (r as AnalysisError).message
}

describe("kafka options", () => {
  it("requires exactly one of subscribe, subscribePattern, assign", () => {
    expect(message(parseStreamOptions(base))).toBe(
      "One of the following options must be specified for Kafka source: subscribe, subscribepattern, assign. See the docs for more details."
    )
    expect(message(parseStreamOptions({ ...base, subscribe: "t", assign: `{"t":[0]}` }))).toBe(
      "Only one of the following options can be specified for Kafka source: subscribe, subscribepattern, assign. See the docs for more details."
    )
    expect(message(parseStreamOptions({ ...base, subscribe: " , " }))).toBe(
      "No topics to subscribe to as specified value for option 'subscribe' is ' , '"
    )
    expect(message(parseStreamOptions({ ...base, subscribePattern: "  " }))).toBe(
      "Pattern to subscribe is empty as specified value for option 'subscribePattern' is '  '"
    )
    expect(message(parseStreamOptions({ ...base, assign: "t" }))).toBe(
      "No topicpartitions to assign as specified value for option 'assign' is 't'"
    )
    expect(message(parseStreamOptions({ ...base, assign: `{"t":0}` }))).toBe(
      `Expected e.g. {"topicA":[0,1],"topicB":[0,1]}, got {"t":0}`
    )
  })

  it("refuses Kafka settings Spark refuses and requires the bootstrap servers", () => {
    expect(message(parseStreamOptions({ subscribe: "t" }))).toBe(
      "Option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer"
    )
    expect(message(parseStreamOptions({ ...base, subscribe: "t", "kafka.auto.offset.reset": "latest" }))).toContain(
      "Kafka option 'auto.offset.reset' is not supported."
    )
    expect(message(parseStreamOptions({ ...base, subscribe: "t", "kafka.key.deserializer": "x" }))).toBe(
      "Kafka option 'key.deserializer' is not supported as keys are deserialized as byte arrays with ByteArrayDeserializer. Use DataFrame operations to explicitly deserialize the keys."
    )
    expect(message(parseStreamOptions({ ...base, subscribe: "t", "kafka.enable.auto.commit": "true" }))).toBe(
      "Kafka option 'enable.auto.commit' is not supported"
    )
    expect(
      message(parseStreamOptions({ ...base, subscribe: "t", minOffsetsPerTrigger: "20", maxOffsetsPerTrigger: "10" }))
    ).toBe("The value of minOffsetPerTrigger(20) is higher than the maxOffsetsPerTrigger(10).")
    expect(message(parseStreamOptions({ ...base, subscribe: "t", minPartitions: "0" }))).toBe(
      "minPartitions must be positive"
    )
  })

  it("streaming refuses ending offsets; batch refuses latest start and earliest end", () => {
    expect(message(parseStreamOptions({ ...base, subscribe: "t", endingOffsets: "latest" }))).toBe(
      "ending offset not valid in streaming queries"
    )
    expect(message(parseBatchOptions({ ...base, subscribe: "t", startingOffsets: "latest" }))).toBe(
      "starting offset can't be latest for batch queries on Kafka"
    )
    expect(message(parseBatchOptions({ ...base, subscribe: "t", endingOffsets: "earliest" }))).toBe(
      "ending offset can't be earliest for batch queries on Kafka"
    )
    expect(message(parseBatchOptions({ ...base, subscribe: "t", startingOffsets: `{"t":{"0":-1}}` }))).toBe(
      "startingOffsets for t-0 can't be latest for batch queries on Kafka"
    )
    expect(message(parseBatchOptions({ ...base, subscribe: "t", endingOffsets: `{"t":{"0":-2}}` }))).toBe(
      "ending offset for t-0 can't be earliest for batch queries on Kafka"
    )
    expect(
      message(
        parseBatchOptions({ ...base, subscribe: "t", startingOffsets: `{"t":{"0":5}}`, endingOffsets: `{"t":{"0":3}}` })
      )
    ).toBe(
      "[UNRESOLVED_START_OFFSET_GREATER_THAN_END_OFFSET] The specified start offset 5 is greater than the end offset 3 for topic t partition 0."
    )
  })

  it("defaults: streaming starts at latest, batch reads earliest to latest; keys are case-insensitive", () => {
    const s = parseStreamOptions({ "KAFKA.BOOTSTRAP.SERVERS": "a:1, b:2", SUBSCRIBE: "x,y" })
    expect(s).not.toBeInstanceOf(AnalysisError)
    if (s instanceof AnalysisError) return
    expect(s.bootstrapServers).toEqual(["a:1", "b:2"])
    expect(s.strategy).toEqual({ _tag: "Subscribe", topics: ["x", "y"] })
    expect(s.startingOffsets).toEqual({ _tag: "Latest" })
    expect(s.failOnDataLoss).toBe(true)
    expect(s.maxTriggerDelayMs).toBe(15 * 60 * 1000)
    const b = parseBatchOptions({ ...base, subscribe: "t" })
    if (b instanceof AnalysisError) throw b
    expect([b.startingOffsets, b.endingOffsets]).toEqual([{ _tag: "Earliest" }, { _tag: "Latest" }])
  })

  it("parses per-partition offsets and refuses anything else with Spark's example", () => {
    expect(parsePartitionOffsets(`{"t":{"0":23,"1":-2}}`)).toEqual(
      new Map([
        [
          "t",
          new Map([
            [0, 23],
            [1, -2]
          ])
        ]
      ])
    )
    expect(message(parsePartitionOffsets(`{"t":[0]}`))).toBe(
      `Expected e.g. {"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}, got {"t":[0]}`
    )
    const ts = parseStreamOptions({ ...base, subscribe: "t", startingTimestamp: "abc" })
    expect(message(ts)).toBe("Expected a single long value, got abc")
  })

  it("sink options: serializers refused, topic trimmed, exactlyOnce parsed", () => {
    const w = parseWriteOptions({ ...base, topic: " out ", "kafka.transactional.exactlyOnce": "TRUE" })
    if (w instanceof AnalysisError) throw w
    expect([w.topic, w.exactlyOnce]).toEqual(["out", true])
    expect(message(parseWriteOptions({ ...base, "kafka.key.serializer": "x" }))).toBe(
      "Kafka option 'key.serializer' is not supported as keys are serialized with ByteArraySerializer."
    )
  })

  it("offset JSON is sorted by topic and partition, so equal offsets are equal text", () => {
    expect(
      JSON.stringify(
        toJson(
          new Map([
            ["b-0", 3],
            ["a-10", 1],
            ["a-2", 7]
          ])
        )
      )
    ).toBe(`{"a":{"2":7,"10":1},"b":{"0":3}}`)
  })

  it("rateLimit spreads the limit by backlog, rounding a share below 1 up", () => {
    const from = new Map([
      ["t-0", 0],
      ["t-1", 0],
      ["t-2", 10]
    ])
    const until = new Map([
      ["t-0", 100],
      ["t-1", 1],
      ["t-2", 10]
    ])
    // 10 * 100/101 = 9.9 -> 9; 10 * 1/101 = 0.099 -> 1; t-2 has no backlog.
    expect(rateLimit(10, from, until, new Map())).toEqual(
      new Map([
        ["t-0", 9],
        ["t-1", 1],
        ["t-2", 10]
      ])
    )
    // A new partition starts from its earliest offset.
    expect(rateLimit(4, new Map(), new Map([["n-0", 8]]), new Map([["n-0", 2]]))).toEqual(new Map([["n-0", 6]]))
  })
})
