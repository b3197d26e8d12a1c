/**
 * The Kinesis calls the `kinesis` source makes, on the AWS SDK v3 Kinesis client, as Effects
 * failing with `ConnectorError`: ListShards (every shard, open and closed, with its parents),
 * GetShardIterator and GetRecords.
 *
 * The client sends HTTP/1.1 requests (`NodeHttpHandler`, on `node:http`, which Deno has too):
 * the SDK's default for Kinesis is HTTP/2, which only SubscribeToShard needs, and which local
 * Kinesis implementations (kinesalite) do not speak.
 *
 * @since 0.1.0
 */
import {
  GetRecordsCommand,
  GetShardIteratorCommand,
  KinesisClient,
  type KinesisClientConfig,
  ListShardsCommand,
  type Shard
} from "@aws-sdk/client-kinesis"
import { NodeHttpHandler } from "@smithy/node-http-handler"
import { Effect } from "effect"
import { ConnectorError } from "../../core/Errors.ts"

const CONNECTOR = "kinesis"

/**
 * One shard of a stream as the source needs it.
 *
 * @since 0.1.0
 */
export interface ShardDescription {
  readonly shardId: string
  /** The shards it was split or merged from (ListShards' `ParentShardId`, `AdjacentParentShardId`). */
  readonly parents: ReadonlyArray<string>
  /** Closed shards have an ending sequence number. */
  readonly closed: boolean
}

/**
 * A record read from a shard.
 *
 * @since 0.1.0
 */
export interface KinesisRecord {
  readonly sequenceNumber: string
  readonly partitionKey: string
  readonly data: Uint8Array
  /** Milliseconds since the epoch. */
  readonly approximateArrivalTimestamp: number
}

/**
 * Where GetShardIterator starts.
 *
 * @since 0.1.0
 */
export type IteratorStart =
  | { readonly type: "TRIM_HORIZON" | "LATEST" }
  | { readonly type: "AT_TIMESTAMP"; readonly timestampMs: number }
  | { readonly type: "AFTER_SEQUENCE_NUMBER" | "AT_SEQUENCE_NUMBER"; readonly sequenceNumber: string }

/**
 * One GetRecords answer.
 *
 * @since 0.1.0
 */
export interface RecordsPage {
  readonly records: ReadonlyArray<KinesisRecord>
  /** `undefined`: the shard is closed and every record of it has been returned. */
  readonly nextIterator: string | undefined
  readonly millisBehindLatest: number
}

/**
 * The Kinesis calls of the source.
 *
 * @since 0.1.0
 */
export interface KinesisApi {
  readonly listShards: (stream: string) => Effect.Effect<ReadonlyArray<ShardDescription>, ConnectorError>
  /**
   * A shard iterator; `undefined` for an `AT_TIMESTAMP` later than Kinesis' own clock (Kinesis
   * refuses those: no record can have arrived at or after it yet).
   */
  readonly shardIterator: (
    stream: string,
    shardId: string,
    start: IteratorStart
  ) => Effect.Effect<string | undefined, ConnectorError>
  readonly getRecords: (iterator: string, limit: number) => Effect.Effect<RecordsPage, ConnectorError>
  readonly close: () => Effect.Effect<void>
}

/** AWS error names that are the user's to fix. */
const USER_ERRORS = new Set([
  "ResourceNotFoundException",
  "AccessDeniedException",
  "InvalidArgumentException",
  "UnrecognizedClientException",
  "InvalidSignatureException",
  "ValidationException"
])

/** AWS error names a later try may get past. */
const RETRYABLE_ERRORS = new Set([
  "ProvisionedThroughputExceededException",
  "LimitExceededException",
  "ResourceInUseException",
  "KMSThrottlingException",
  "InternalFailure",
  "ServiceUnavailable"
])

/**
 * An AWS SDK failure as a `ConnectorError`: whose fault it is (`user` for a missing stream or
 * denied access) and whether a retry can help (throttling).
 *
 * @since 0.1.0
 */
export const awsError = (what: string, e: unknown): ConnectorError => {
  const name = e instanceof Error ? e.name : "Error"
  const message = e instanceof Error ? e.message : String(e)
  const regionMissing = /region is missing/i.test(message)
  return new ConnectorError({
    connector: CONNECTOR,
    domain: USER_ERRORS.has(name) || regionMissing ? "user" : "external",
    retryable: RETRYABLE_ERRORS.has(name),
    message: `Kinesis ${what} failed: ${name}: ${message}${regionMissing ? " (set the option 'region')" : ""}`,
    cause: e
  })
}

/** Kinesis' refusal of an AT_TIMESTAMP iterator later than its clock. */
const FUTURE_TIMESTAMP = /cannot be greater than the currentTimestampInMillis/i

const toShard = (s: Shard): ShardDescription => ({
  shardId: s.ShardId ?? "",
  parents: [s.ParentShardId, s.AdjacentParentShardId].filter((p): p is string => p !== undefined && p !== ""),
  closed: s.SequenceNumberRange?.EndingSequenceNumber !== undefined
})

/**
 * The connection settings of the client.
 *
 * @since 0.1.0
 */
export interface ClientSettings {
  readonly region: string | undefined
  readonly endpointUrl: string | undefined
  readonly credentials:
    | { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string }
    | undefined
}

/**
 * Makes the Kinesis calls on one AWS SDK client.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { makeKinesisApi } from "./KinesisClient.ts"
 * const api = makeKinesisApi({ region: "us-east-1", endpointUrl: "http://localhost:4567", credentials: undefined })
 * const shards = Effect.runPromise(api.listShards("events"))
 * ```
 * @since 0.1.0
 */
export const makeKinesisApi = (settings: ClientSettings): KinesisApi => {
  const config: KinesisClientConfig = {
    requestHandler: new NodeHttpHandler(),
    ...(settings.region === undefined ? {} : { region: settings.region }),
    ...(settings.endpointUrl === undefined ? {} : { endpoint: settings.endpointUrl }),
    ...(settings.credentials === undefined ? {} : { credentials: settings.credentials })
  }
  const client = new KinesisClient(config)
  return {
    listShards: (stream) =>
      Effect.tryPromise({
        try: async () => {
          const shards: Array<ShardDescription> = []
          let next: string | undefined
          do {
            // ListShards takes either the stream or a continuation token, never both.
            const page = await client.send(
              new ListShardsCommand(next === undefined ? { StreamName: stream } : { NextToken: next })
            )
            for (const s of page.Shards ?? []) shards.push(toShard(s))
            next = page.NextToken
          } while (next !== undefined)
          return shards
        },
        catch: (e) => awsError(`ListShards of stream ${stream}`, e)
      }),
    shardIterator: (stream, shardId, start) =>
      Effect.tryPromise({
        try: async () => {
          const answer = await client
            .send(
              new GetShardIteratorCommand({
                StreamName: stream,
                ShardId: shardId,
                ShardIteratorType: start.type,
                ...(start.type === "AT_TIMESTAMP" ? { Timestamp: new Date(start.timestampMs) } : {}),
                ...(start.type === "AFTER_SEQUENCE_NUMBER" || start.type === "AT_SEQUENCE_NUMBER"
                  ? { StartingSequenceNumber: start.sequenceNumber }
                  : {})
              })
            )
            .catch((e: unknown) => {
              // `latest` is logged as AT_TIMESTAMP(the start time); Kinesis' clock may not be
              // there yet (the same millisecond, or skew between the clocks).
              if (start.type === "AT_TIMESTAMP" && e instanceof Error && FUTURE_TIMESTAMP.test(e.message))
                return undefined
              throw e
            })
          if (answer === undefined) return undefined
          if (answer.ShardIterator === undefined) throw new Error("GetShardIterator returned no iterator")
          return answer.ShardIterator
        },
        catch: (e) => awsError(`GetShardIterator of ${stream}/${shardId}`, e)
      }),
    getRecords: (iterator, limit) =>
      Effect.tryPromise({
        try: async () => {
          const answer = await client.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: limit }))
          const records = (answer.Records ?? []).map(
            (r): KinesisRecord => ({
              sequenceNumber: r.SequenceNumber ?? "",
              partitionKey: r.PartitionKey ?? "",
              data: r.Data ?? new Uint8Array(0),
              approximateArrivalTimestamp: r.ApproximateArrivalTimestamp?.getTime() ?? 0
            })
          )
          return {
            records,
            nextIterator: answer.NextShardIterator ?? undefined,
            millisBehindLatest: answer.MillisBehindLatest ?? 0
          }
        },
        catch: (e) => awsError("GetRecords", e)
      }),
    close: () => Effect.sync(() => client.destroy())
  }
}
