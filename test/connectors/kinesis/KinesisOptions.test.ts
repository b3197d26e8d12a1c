/**
 * The options of the `kinesis` source (Databricks' and spark-sql-kinesis' names), the
 * `at_timestamp` parser, the row schema and the offset JSON the offset log holds.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { AnalysisError, ConnectorError } from "../../../core/Errors.ts"
import {
  decodeKinesisSourceOffset,
  KinesisSourceFormat,
  kinesisSchema,
  parseInitialPosition,
  parseKinesisOptions,
  parseTimestamp
} from "../../../connectors/kinesis/mod.ts"
import {
  afterSequenceNumber,
  atTimestamp,
  fromJson,
  shardEnd,
  toJson,
  trimHorizon
} from "../../../connectors/kinesis/KinesisSourceOffset.ts"
import * as T from "../../../core/DataType.ts"

const message = (o: Record<string, string>): string => {
  const parsed = parseKinesisOptions(o)
  if (!(parsed instanceof AnalysisError)) throw new Error(`expected an AnalysisError for ${JSON.stringify(o)}`)
  return parsed.message
}

describe("kinesis options", () => {
  it("has spark-sql-kinesis' schema and refuses a user schema", () => {
    expect(kinesisSchema.fields.map((f) => `${f.name}:${f.dataType._tag}`)).toEqual([
      "data:binary",
      "streamName:string",
      "partitionKey:string",
      "sequenceNumber:string",
      "approximateArrivalTimestamp:timestamp"
    ])
    expect(KinesisSourceFormat.schema(undefined, { streamName: "s" })).toEqual(kinesisSchema)
    const refused = KinesisSourceFormat.schema(T.struct([T.field("x", T.StringType)]), { streamName: "s" })
    expect(refused).toBeInstanceOf(AnalysisError)
    expect((refused as AnalysisError).message).toContain("Kinesis source has a fixed schema")
  })

  it("parses the defaults and both connectors' names, case-insensitively", () => {
    expect(parseKinesisOptions({ streamName: "a" })).toEqual({
      streamNames: ["a"],
      region: undefined,
      endpointUrl: undefined,
      credentials: undefined,
      initialPosition: { _tag: "Latest" },
      maxRecordsPerFetch: 10_000,
      maxFetchRecordsPerShard: 100_000,
      shardFetchIntervalMs: 1000,
      failOnDataLoss: true
    })
    expect(
      parseKinesisOptions({
        STREAMNAME: " a , b ",
        regionName: "eu-west-1",
        endpointUrl: "http://localhost:4567",
        awsAccessKeyId: "AK",
        awsSecretKey: "SK",
        sessionToken: "TOK",
        startingPosition: "TRIM_HORIZON",
        maxRecordsPerFetch: "500",
        "kinesis.executor.maxFetchRecordsPerShard": "20",
        "kinesis.client.describeShardInterval": "2s",
        failOnDataLoss: "FALSE"
      })
    ).toEqual({
      streamNames: ["a", "b"],
      region: "eu-west-1",
      endpointUrl: "http://localhost:4567",
      credentials: { accessKeyId: "AK", secretAccessKey: "SK", sessionToken: "TOK" },
      initialPosition: { _tag: "TrimHorizon" },
      maxRecordsPerFetch: 500,
      maxFetchRecordsPerShard: 20,
      shardFetchIntervalMs: 2000,
      failOnDataLoss: false
    })
    const db = parseKinesisOptions({
      streamName: "a",
      region: "us-west-2",
      awsAccessKey: "AK",
      awsSecretKey: "SK",
      shardFetchInterval: "500ms"
    })
    expect(db).toMatchObject({
      region: "us-west-2",
      credentials: { accessKeyId: "AK", secretAccessKey: "SK" },
      shardFetchIntervalMs: 500
    })
  })

  it("fails bad options with AnalysisError", () => {
    expect(message({})).toBe("Stream name is a required field")
    expect(message({ streamName: " , " })).toBe("Stream name is a required field")
    expect(message({ streamName: "a,a" })).toContain("more than once")
    expect(message({ streamName: "a", initialPosition: "oldest" })).toContain("Invalid initialPosition 'oldest'")
    expect(message({ streamName: "a", initialPosition: '{"at_timestamp": "yesterday"}' })).toContain("Unparseable date")
    expect(message({ streamName: "a", initialPosition: '{"at_timestamp": 5}' })).toContain("Invalid initialPosition")
    expect(message({ streamName: "a", maxRecordsPerFetch: "0" })).toContain(
      "'maxRecordsPerFetch': it must be a positive integer of at most 10000"
    )
    expect(message({ streamName: "a", maxRecordsPerFetch: "10001" })).toContain("at most 10000")
    expect(message({ streamName: "a", maxRecordsPerFetch: "x" })).toContain("'x'")
    expect(message({ streamName: "a", "kinesis.executor.maxFetchRecordsPerShard": "-1" })).toContain("positive integer")
    expect(message({ streamName: "a", endpointUrl: "localhost:4567" })).toContain("Invalid endpointUrl")
    expect(message({ streamName: "a", endpointUrl: "not a url" })).toContain("Invalid endpointUrl")
    expect(message({ streamName: "a", awsAccessKey: "AK" })).toContain("must be given together")
    expect(message({ streamName: "a", shardFetchInterval: "soon" })).toContain("Time must be specified")
    expect(message({ streamName: "a", failOnDataLoss: "yes" })).toContain("true or false")
    expect(message({ streamName: "a", region: "US EAST" })).toContain("Invalid region")
    expect(KinesisSourceFormat.schema(undefined, {})).toBeInstanceOf(AnalysisError)
  })

  it.effect("fails create with the AnalysisError too", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        KinesisSourceFormat.create({
          options: { streamName: "a", initialPosition: "x" },
          schema: kinesisSchema,
          metadataPath: "/nonexistent",
          conf: new Map()
        })
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) expect(String(exit.cause)).toContain("Invalid initialPosition")
    })
  )

  it("parses initialPosition as Databricks does, at_timestamp with its default format", () => {
    expect(parseInitialPosition("LATEST")).toEqual({ _tag: "Latest" })
    expect(parseInitialPosition(" trim_horizon ")).toEqual({ _tag: "TrimHorizon" })
    expect(parseInitialPosition("earliest")).toEqual({ _tag: "TrimHorizon" })
    expect(parseInitialPosition('{"at_timestamp": "06/25/2020 10:23:45 PDT"}')).toEqual({
      _tag: "AtTimestamp",
      timestampMs: Date.UTC(2020, 5, 25, 17, 23, 45)
    })
    expect(
      parseInitialPosition(
        '{"at_timestamp": "2020-06-25T10:23:45.120+02:00", "format": "yyyy-MM-dd\'T\'HH:mm:ss.SSSXXX"}'
      )
    ).toEqual({ _tag: "AtTimestamp", timestampMs: Date.UTC(2020, 5, 25, 8, 23, 45, 120) })
  })

  it("parses timestamps with SimpleDateFormat patterns", () => {
    expect(parseTimestamp("01/02/2024 03:04:05 UTC", "MM/dd/yyyy HH:mm:ss ZZZ")).toBe(Date.UTC(2024, 0, 2, 3, 4, 5))
    expect(parseTimestamp("01/02/2024 03:04:05 -0800", "MM/dd/yyyy HH:mm:ss Z")).toBe(Date.UTC(2024, 0, 2, 11, 4, 5))
    expect(parseTimestamp("20240102030405", "yyyyMMddHHmmss")).toBe(Date.UTC(2024, 0, 2, 3, 4, 5))
    expect(parseTimestamp("2024-01-02 03:04:05Z", "yyyy-MM-dd HH:mm:ssX")).toBe(Date.UTC(2024, 0, 2, 3, 4, 5))
    expect(parseTimestamp("02/30/2024 00:00:00 UTC", "MM/dd/yyyy HH:mm:ss ZZZ")).toContain("Unparseable date")
    expect(parseTimestamp("01/02/2024 03:04:05 Mars", "MM/dd/yyyy HH:mm:ss ZZZ")).toContain("Unparseable date")
    expect(parseTimestamp("01/02/2024", "MM/dd/yyyy G")).toContain("Unsupported pattern letter 'G'")
    expect(parseTimestamp("01/02/2024 trailing", "MM/dd/yyyy")).toContain("Unparseable date")
  })
})

describe("kinesis source offset", () => {
  it("serializes positions in one text, streams and shards sorted", () => {
    const positions = new Map([
      ["s2/shardId-000000000000", trimHorizon],
      ["s1/shardId-000000000001", afterSequenceNumber("49590338271490256608559692538361571095921575989136588898")],
      ["s1/shardId-000000000000", shardEnd],
      ["s1/shardId-000000000002", atTimestamp(1_700_000_000_000)]
    ])
    const json = JSON.stringify(toJson(positions))
    expect(json).toBe(
      '{"s1":{"shardId-000000000000":{"iteratorType":"SHARD_END","iteratorPosition":""},' +
        '"shardId-000000000001":{"iteratorType":"AFTER_SEQUENCE_NUMBER","iteratorPosition":"49590338271490256608559692538361571095921575989136588898"},' +
        '"shardId-000000000002":{"iteratorType":"AT_TIMESTAMP","iteratorPosition":"1700000000000"}},' +
        '"s2":{"shardId-000000000000":{"iteratorType":"TRIM_HORIZON","iteratorPosition":""}}}'
    )
    expect(fromJson(JSON.parse(json))).toEqual(positions)
  })

  it.effect("decodes what it wrote and refuses anything else with a ConnectorError", () =>
    Effect.gen(function* () {
      const good = { s: { "shardId-0": { iteratorType: "AFTER_SEQUENCE_NUMBER", iteratorPosition: "12" } } }
      expect(yield* decodeKinesisSourceOffset(good)).toEqual(good)
      for (const bad of [
        5,
        { s: { "shardId-0": { iteratorType: "LATEST", iteratorPosition: "" } } },
        { s: { "shardId-0": { iteratorType: "AFTER_SEQUENCE_NUMBER", iteratorPosition: "" } } },
        { s: { "shardId-0": { iteratorType: "TRIM_HORIZON", iteratorPosition: "3" } } },
        { s: { "shardId-0": { iteratorType: "AT_TIMESTAMP" } } }
      ]) {
        const e = yield* Effect.flip(decodeKinesisSourceOffset(bad))
        expect(e).toBeInstanceOf(ConnectorError)
        expect(e.message).toContain("Invalid Kinesis source offset")
      }
    })
  )
})
