/**
 * The `kafka` batch format (Spark's `KafkaRelation` / `KafkaBatch`):
 * `spark.read.format("kafka")` reads every record between `startingOffsets` (default
 * `earliest`) and `endingOffsets` (default `latest`), both resolved when the read runs.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import type { BatchFormat } from "../../core/Formats.ts"
import { makeReader } from "./KafkaClient.ts"
import { includeHeadersOption, kafkaSchema, parseBatchOptions, userSchemaRefused } from "./KafkaOptions.ts"
import { type OffsetRange, readRanges, resolveLimit } from "./KafkaSource.ts"

/**
 * `spark.read.format("kafka")`. Paths are ignored (Spark's `load()` without a path).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { Session } from "tributary-streaming"
 * const program = Effect.gen(function* () {
 *   const spark = yield* Session
 *   const df = yield* spark.read.format("kafka")
 *     .option("kafka.bootstrap.servers", "localhost:9092")
 *     .option("subscribe", "events")
 *     .option("startingOffsets", `{"events":{"0":10}}`)
 *     .option("endingOffsets", `{"events":{"0":20}}`)
 *     .load()
 *   return yield* df.selectExpr("CAST(value AS STRING) AS value", "offset").collect()
 * })
 * ```
 * @since 0.1.0
 */
export const KafkaBatchFormat: BatchFormat = {
  name: "kafka",
  resolveSchema: (_paths, userSchema, options) =>
    Effect.suspend(() => {
      if (userSchema !== undefined) return Effect.fail(userSchemaRefused())
      const parsed = parseBatchOptions(options)
      if (parsed instanceof AnalysisError) return Effect.fail(parsed)
      return Effect.succeed(kafkaSchema(includeHeadersOption(options)))
    }),
  read: (_paths, _schema, options) =>
    Effect.gen(function* () {
      const parsed = parseBatchOptions(options)
      if (parsed instanceof AnalysisError) {
        return yield* new ConnectorError({
          connector: "kafka",
          domain: "user",
          retryable: false,
          message: parsed.message
        })
      }
      const reader = makeReader({
        bootstrapServers: parsed.bootstrapServers,
        kafkaParams: parsed.kafkaParams,
        clientId: "tributary-kafka-relation",
        readCommitted: parsed.readCommitted,
        retry: { retries: parsed.fetchOffsetNumRetries, intervalMs: parsed.fetchOffsetRetryIntervalMs }
      })
      return yield* Effect.gen(function* () {
        const tps = yield* reader.partitions(parsed.strategy)
        const start = yield* resolveLimit(reader, tps, parsed.startingOffsets, "start")
        const end = yield* resolveLimit(reader, tps, parsed.endingOffsets, "end")
        const ranges: Array<OffsetRange> = []
        for (const tp of tps) {
          const key = `${tp.topic}-${tp.partition}`
          const from = start.get(key)
          const until = end.get(key)
          if (from === undefined || until === undefined) continue
          if (from > until) {
            return yield* new ConnectorError({
              connector: "kafka",
              domain: "user",
              retryable: false,
              message: `[RESOLVED_START_OFFSET_GREATER_THAN_END_OFFSET] The resolved start offset ${from} is greater than the resolved end offset ${until} for topic ${tp.topic} partition ${tp.partition}.\nThere may be multiple reasons:\n1. Start offset is set to too big a value that after resolution, end offset is smaller than it. There are multiple input cases:\n  (a) Start offset is set to a timestamp, and the end offset is set to an index.\n  (b) Start offset is set to an index, and the end offset is set to a timestamp.\n  (c) Start offset is set, and the end offset is set to latest.\n2. The Kafka topic partition is broken.`
            })
          }
          ranges.push({ tp, from, until })
        }
        return yield* readRanges(reader, ranges, {
          failOnDataLoss: parsed.failOnDataLoss,
          includeHeaders: parsed.includeHeaders,
          groupId: `${parsed.groupIdPrefix === "spark-kafka-source" ? "spark-kafka-relation" : parsed.groupIdPrefix}-${crypto.randomUUID()}-executor`
        })
      }).pipe(Effect.ensuring(reader.close()))
    })
}
