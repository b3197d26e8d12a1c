/**
 * Helpers of the Kinesis tests: the local Kinesis the global setup started
 * (`inject("kinesisEndpoint")`, test/kinesis/globalSetup.ts), unique streams, and plain AWS SDK
 * calls to write records and reshard.
 */
import { randomUUID } from "node:crypto"
import {
  CreateStreamCommand,
  DescribeStreamSummaryCommand,
  KinesisClient,
  ListShardsCommand,
  MergeShardsCommand,
  PutRecordsCommand,
  type Shard,
  SplitShardCommand
} from "@aws-sdk/client-kinesis"
import { NodeHttpHandler } from "@smithy/node-http-handler"
import { inject } from "vitest"

/** The endpoint; fails loudly when the global setup started no Kinesis. */
export const endpoint = (): string => {
  const e = inject("kinesisEndpoint")
  if (e === undefined || e === "") {
    throw new Error("No local Kinesis: test/kinesis/globalSetup.ts starts one for runs that include a Kinesis test.")
  }
  return e
}

/** The options every test source needs to reach the local Kinesis. */
export const connection = (): Record<string, string> => ({
  endpointUrl: endpoint(),
  region: "us-east-1",
  awsAccessKey: "test",
  awsSecretKey: "test"
})

export const uniqueStream = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`

export interface TestKinesis {
  readonly client: KinesisClient
  readonly createStream: (stream: string, shards: number) => Promise<void>
  /**
   * Writes records with PutRecords, in order; `hashKey` routes a record to the shard whose hash
   * key range holds it (ExplicitHashKey). Returns the sequence numbers.
   */
  readonly put: (
    stream: string,
    records: ReadonlyArray<{ readonly data: string; readonly key: string; readonly hashKey?: string }>
  ) => Promise<ReadonlyArray<{ readonly shardId: string; readonly sequenceNumber: string }>>
  readonly shards: (stream: string) => Promise<ReadonlyArray<Shard>>
  /** Splits a shard at the middle of its hash key range; waits until the stream is ACTIVE. */
  readonly split: (stream: string, shardId: string) => Promise<void>
  /** Merges two adjacent shards; waits until the stream is ACTIVE. */
  readonly merge: (stream: string, shardId: string, adjacent: string) => Promise<void>
  readonly close: () => void
}

export const connect = (): TestKinesis => {
  const client = new KinesisClient({
    endpoint: endpoint(),
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    requestHandler: new NodeHttpHandler()
  })
  const active = async (stream: string): Promise<void> => {
    for (;;) {
      const s = await client.send(new DescribeStreamSummaryCommand({ StreamName: stream }))
      if (s.StreamDescriptionSummary?.StreamStatus === "ACTIVE") return
    }
  }
  const shards = async (stream: string): Promise<ReadonlyArray<Shard>> =>
    (await client.send(new ListShardsCommand({ StreamName: stream }))).Shards ?? []
  return {
    client,
    createStream: async (stream, count) => {
      await client.send(new CreateStreamCommand({ StreamName: stream, ShardCount: count }))
      await active(stream)
    },
    put: async (stream, records) => {
      const answer = await client.send(
        new PutRecordsCommand({
          StreamName: stream,
          Records: records.map((r) => ({
            Data: new TextEncoder().encode(r.data),
            PartitionKey: r.key,
            ...(r.hashKey === undefined ? {} : { ExplicitHashKey: r.hashKey })
          }))
        })
      )
      if ((answer.FailedRecordCount ?? 0) > 0) throw new Error(`PutRecords failed: ${JSON.stringify(answer.Records)}`)
      return (answer.Records ?? []).map((r) => ({ shardId: r.ShardId ?? "", sequenceNumber: r.SequenceNumber ?? "" }))
    },
    shards,
    split: async (stream, shardId) => {
      const shard = (await shards(stream)).find((s) => s.ShardId === shardId)
      const range = shard?.HashKeyRange
      if (range?.StartingHashKey === undefined || range.EndingHashKey === undefined)
        throw new Error(`no shard ${shardId}`)
      const mid = (BigInt(range.StartingHashKey) + BigInt(range.EndingHashKey)) / 2n
      await client.send(
        new SplitShardCommand({ StreamName: stream, ShardToSplit: shardId, NewStartingHashKey: (mid + 1n).toString() })
      )
      await active(stream)
    },
    merge: async (stream, shardId, adjacent) => {
      await client.send(
        new MergeShardsCommand({ StreamName: stream, ShardToMerge: shardId, AdjacentShardToMerge: adjacent })
      )
      await active(stream)
    },
    close: () => client.destroy()
  }
}
