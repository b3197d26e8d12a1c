/**
 * The `kafka` streaming source (Spark's `KafkaMicroBatchStream`): reads the partitions of a
 * consumer strategy by offset range, one micro-batch per range, with Spark's row schema.
 *
 * - Offsets are Spark's `KafkaSourceOffset` JSON (`{"topic":{"0":23}}`, the next offset to read),
 *   logged by the engine before each batch, so a restart replays a logged batch exactly.
 * - The initial offsets (from `startingOffsets`, `startingOffsetsByTimestamp` or
 *   `startingTimestamp`; default `latest`) are written to the source's metadata folder the first
 *   time, as Spark's `KafkaSourceInitialOffsetWriter` does, so a query restarted before its first
 *   batch starts where it first meant to.
 * - `maxOffsetsPerTrigger` spreads the limit over partitions in proportion to their backlog
 *   (Spark's `rateLimit`); `minOffsetsPerTrigger` delays a batch until enough records are there
 *   or `maxTriggerDelay` (default 15m) has passed since the last batch.
 * - Data loss (offsets deleted or aged out, partitions gone, a partition added that does not
 *   start at 0) fails the query with Spark's `KAFKA_DATA_LOSS` errors when `failOnDataLoss` is
 *   true (the default), and is skipped otherwise.
 * - Beyond Spark: `commitOffsetsToGroup=<group>` commits each committed batch's end offsets to
 *   that consumer group (never joined), so lag tools show the query's progress. A failed group
 *   commit does not fail the query: the next batch commits again.
 *
 * @since 0.1.0
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Clock, Effect } from "effect"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import type { InternalRow } from "../../core/Row.ts"
import type { MicroBatchSource, Offset, ReadLimit, SourceFormat } from "../../core/Streaming.ts"
import { type KafkaReader, makeReader, NonRetryable, type OffsetMap, type RawMessage } from "./KafkaClient.ts"
import {
  EARLIEST,
  includeHeadersOption,
  type KafkaReadOptions,
  kafkaSchema,
  LATEST,
  type OffsetRangeLimit,
  parseStreamOptions,
  strategyString,
  type TopicPartition,
  tpString,
  userSchemaRefused
} from "./KafkaOptions.ts"
import { decodeKafkaSourceOffset, fromJson, type KafkaSourceOffset, toJson } from "./KafkaSourceOffset.ts"

const CONNECTOR = "kafka"

/** Spark's `KAFKA_DATA_LOSS` main message. */
const DATA_LOSS =
  "Some data may have been lost because they are not available in Kafka any more;\neither the data was aged out by Kafka or the topic may have been deleted before all the data in the\ntopic was processed.\nIf you don't want your streaming query to fail on such cases, set the source option failOnDataLoss to false.\nReason:"

/** Spark's `KAFKA_DATA_LOSS.<sub>` error as a `ConnectorError`. */
export const dataLossError = (sub: string, reason: string): ConnectorError =>
  new ConnectorError({
    connector: CONNECTOR,
    domain: "external",
    retryable: false,
    message: `[KAFKA_DATA_LOSS.${sub}] ${DATA_LOSS} ${reason} SQLSTATE: 22000`
  })

/** Spark's `Set(a-0, b-1)` text of a set of topic partitions. */
const setString = (keys: ReadonlyArray<string>): string => `Set(${keys.join(", ")})`

/** Scala's `Map(a-0 -> 3, b-1 -> 5)` text of offsets by topic partition. */
const mapString = (offsets: OffsetMap): string =>
  `Map(${[...offsets.keys()]
    .sort()
    .map((k) => `${k} -> ${offsets.get(k)}`)
    .join(", ")})`

/** Spark's `KafkaIllegalStateException` of the Trigger.AvailableNow checks. */
const availableNowError = (condition: string, message: string): ConnectorError =>
  new ConnectorError({ connector: CONNECTOR, domain: "external", retryable: false, message: `[${condition}] ${message}` })

/** One partition's range to read: `[from, until)`. */
export interface OffsetRange {
  readonly tp: TopicPartition
  readonly from: number
  readonly until: number
}

/**
 * Spark's `getOffsetRangesFromResolvedOffsets`: the ranges between two offset maps. New
 * partitions start at their earliest offset (a start above 0 is data loss), vanished partitions
 * are data loss, an end below its start is data loss; `reportDataLoss` fails or ignores.
 */
export const offsetRanges = (
  reader: KafkaReader,
  start: OffsetMap,
  end: OffsetMap,
  reportDataLoss: (e: ConnectorError) => Effect.Effect<void, ConnectorError>
): Effect.Effect<ReadonlyArray<OffsetRange>, ConnectorError> =>
  Effect.gen(function* () {
    const newKeys = [...end.keys()].filter((k) => !start.has(k))
    const newTps = newKeys.map(keyToTp)
    const newInitial = newTps.length === 0 ? new Map<string, number>() : yield* reader.earliest(newTps)
    const missing = newKeys.filter((k) => !newInitial.has(k))
    if (missing.length > 0) {
      yield* reportDataLoss(
        dataLossError(
          "INITIAL_OFFSET_NOT_FOUND_FOR_PARTITIONS",
          `Cannot find initial offsets for partitions ${setString(missing)}. They may have been deleted.`
        )
      )
    }
    for (const [k, o] of newInitial) {
      if (o !== 0) {
        yield* reportDataLoss(
          dataLossError(
            "ADDED_PARTITION_DOES_NOT_START_FROM_OFFSET_ZERO",
            `Added partition ${k} starts from ${o} instead of 0.`
          )
        )
      }
    }
    const deleted = [...start.keys()].filter((k) => !end.has(k))
    if (deleted.length > 0) {
      yield* reportDataLoss(dataLossError("PARTITIONS_DELETED", `Partitions ${setString(deleted)} have been deleted.`))
    }
    const ranges: Array<OffsetRange> = []
    for (const [k, until] of end) {
      const from = start.get(k) ?? newInitial.get(k)
      if (from === undefined) continue
      if (until < from) {
        yield* reportDataLoss(
          dataLossError(
            "PARTITION_OFFSET_CHANGED",
            `Partition ${k} offset was changed from ${from} to ${until}.\nThis could either be a user error that the start offset is set too high and this is the first batch, or the kafka topic-partition is broken, and some data may have been missed.`
          )
        )
        continue
      }
      ranges.push({ tp: keyToTp(k), from, until })
    }
    return ranges
  })

const keyToTp = (key: string): TopicPartition => {
  const i = key.lastIndexOf("-")
  return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) }
}

/** A kafkajs record as a row of Spark's Kafka schema (timestamps in ms, bytes as Uint8Array). */
const toRow = (tp: TopicPartition, m: RawMessage, includeHeaders: boolean): InternalRow => {
  const row: Array<unknown> = [
    m.key,
    m.value,
    tp.topic,
    tp.partition,
    Number(m.offset),
    Number(m.timestamp),
    m.batchContext?.timestampType ?? 0
  ]
  if (includeHeaders) {
    const keys = Object.keys(m.headers)
    // Spark's KafkaRecordToRowConverter: a record without headers has null `headers`, not an
    // empty array (KafkaRelationSuite "default starting and ending offsets with headers").
    if (keys.length === 0) row.push(null)
    else {
      const hs: Array<InternalRow> = []
      for (const k of keys) {
        const v = m.headers[k]
        if (Array.isArray(v)) for (const x of v) hs.push([k, x])
        else hs.push([k, v])
      }
      row.push(hs)
    }
  }
  return row
}

/**
 * The largest record timestamp (ms) Spark's `timestamp` column holds: Spark converts it to
 * microseconds in a long, so a larger one (a producer writing nanoseconds) overflows.
 */
const MAX_TIMESTAMP_MS = Number(9_223_372_036_854_775_807n / 1000n)

/**
 * Spark's `KAFKA_MALFORMED_RECORD_TIMESTAMP` (SQLSTATE 22008, SPARK-56243): a record timestamp
 * outside the range of the `timestamp` column fails the read with the topic, partition, offset
 * and timestamp instead of a bare overflow.
 */
const malformedTimestamp = (tp: TopicPartition, m: RawMessage): ConnectorError =>
  new ConnectorError({
    connector: CONNECTOR,
    domain: "external",
    retryable: false,
    message: `[KAFKA_MALFORMED_RECORD_TIMESTAMP] The Kafka record at offset ${m.offset} of topic-partition ${tpString(tp)} has timestamp ${m.timestamp}, which cannot be converted to a Spark timestamp (milliseconds overflow microseconds); the producer may have written a timestamp in another unit. SQLSTATE: 22008`
  })

/**
 * Reads the ranges' records as rows, partition after partition (Spark's batch partitions,
 * read here in one process). Missing offsets are reported as `COULD_NOT_READ_OFFSET_RANGE`.
 */
export const readRanges = (
  reader: KafkaReader,
  ranges: ReadonlyArray<OffsetRange>,
  options: { readonly failOnDataLoss: boolean; readonly includeHeaders: boolean; readonly groupId: string }
): Effect.Effect<ReadonlyArray<InternalRow>, ConnectorError> =>
  Effect.map(
    Effect.forEach(
      ranges,
      (r) =>
        Effect.flatMap(
          reader.read(r.tp, r.from, r.until, (from, to) => {
            if (options.failOnDataLoss) {
              throw new NonRetryable(
                dataLossError(
                  "COULD_NOT_READ_OFFSET_RANGE",
                  `Could not read records in offset [${from}, ${to}) for topic partition ${tpString(r.tp)}\nwith consumer group ${options.groupId}.`
                )
              )
            }
          }),
          (messages) => {
            const rows = new Array<InternalRow>(messages.length)
            for (let i = 0; i < messages.length; i++) {
              const m = messages[i]
              const ts = Number(m.timestamp)
              if (ts > MAX_TIMESTAMP_MS || ts < -MAX_TIMESTAMP_MS) return Effect.fail(malformedTimestamp(r.tp, m))
              rows[i] = toRow(r.tp, m, options.includeHeaders)
            }
            return Effect.succeed(rows)
          }
        ),
      { concurrency: 4 }
    ),
    (parts) => (parts.length === 1 ? parts[0] : parts.flat())
  )

/**
 * Resolves a starting or ending limit to offsets for `tps` (Spark's `KafkaOffsetReader`
 * `fetchEarliestOffsets` / `fetchLatestOffsets` / `fetchSpecificOffsets` /
 * `fetchSpecificTimestampBasedOffsets` / `fetchGlobalTimestampBasedOffsets`).
 */
export const resolveLimit = (
  reader: KafkaReader,
  tps: ReadonlyArray<TopicPartition>,
  limit: OffsetRangeLimit,
  position: "start" | "end"
): Effect.Effect<OffsetMap, ConnectorError> =>
  Effect.gen(function* () {
    switch (limit._tag) {
      case "Earliest":
        return yield* reader.earliest(tps)
      case "Latest":
        return yield* reader.latest(tps)
      case "SpecificOffsets": {
        const specified: Array<string> = []
        for (const [topic, parts] of limit.offsets)
          for (const p of parts.keys()) specified.push(tpString({ topic, partition: p }))
        // Topic-level limits name every partition their topic has now.
        const topicLevel = limit.topicOffsets ?? new Map<string, number>()
        for (const tp of tps) if (topicLevel.has(tp.topic)) specified.push(tpString(tp))
        const assigned = tps.map(tpString)
        if ([...specified].sort().join(",") !== [...assigned].sort().join(",")) {
          return yield* new ConnectorError({
            connector: CONNECTOR,
            domain: "user",
            retryable: false,
            message: `[KAFKA_START_OFFSET_DOES_NOT_MATCH_ASSIGNED] Partitions specified for Kafka start offsets don't match what are assigned. Maybe topic partitions are created or deleted while the query is running. Use -1 for latest, -2 for earliest.\nSpecified: ${setString(specified.sort())} Assigned: ${setString(assigned)}`
          })
        }
        const latest = yield* reader.latest(tps)
        const earliest = yield* reader.earliest(tps)
        const out = new Map<string, number>()
        for (const [topic, parts] of limit.offsets) {
          for (const [p, o] of parts) {
            const k = tpString({ topic, partition: p })
            out.set(k, o === LATEST ? (latest.get(k) ?? 0) : o === EARLIEST ? (earliest.get(k) ?? 0) : o)
          }
        }
        for (const tp of tps) {
          const o = topicLevel.get(tp.topic)
          if (o === undefined) continue
          const k = tpString(tp)
          out.set(k, o === LATEST ? (latest.get(k) ?? 0) : (earliest.get(k) ?? 0))
        }
        return out
      }
      case "SpecificTimestamps":
      case "GlobalTimestamp": {
        const pairs: Array<readonly [TopicPartition, number]> = []
        if (limit._tag === "GlobalTimestamp") for (const tp of tps) pairs.push([tp, limit.timestamp])
        else {
          const specified: Array<string> = []
          for (const [topic, parts] of limit.timestamps) {
            for (const [p, ts] of parts) {
              pairs.push([{ topic, partition: p }, ts])
              specified.push(tpString({ topic, partition: p }))
            }
          }
          const assigned = tps.map(tpString)
          if ([...specified].sort().join(",") !== [...assigned].sort().join(",")) {
            return yield* new ConnectorError({
              connector: CONNECTOR,
              domain: "user",
              retryable: false,
              message: `[KAFKA_TIMESTAMP_OFFSET_DOES_NOT_MATCH_ASSIGNED] Partitions specified for Kafka timestamp based ${position} offsets don't match what are assigned. Maybe topic partitions are created or deleted while the query is running, or you didn't specify all the partitions.\nSpecified: ${setString(specified.sort())} Assigned: ${setString(assigned)}`
            })
          }
        }
        const found = yield* reader.byTimestamp(pairs)
        const latest = yield* reader.latest(tps)
        const out = new Map<string, number>()
        for (const [tp, ts] of pairs) {
          const k = tpString(tp)
          const o = found.get(k)
          if (o === undefined || o < 0) {
            // No record at or after the timestamp: Spark's strategy `error` (default) fails at
            // the start; the end of a batch read and strategy `latest` take the latest offset.
            if (position === "start" && limit.strategyOnNoMatch === "error") {
              return yield* new ConnectorError({
                connector: CONNECTOR,
                domain: "user",
                retryable: false,
                message: `No offset matched from request of topic-partition ${k} and timestamp ${ts}.`
              })
            }
            out.set(k, latest.get(k) ?? 0)
          } else out.set(k, o)
        }
        return out
      }
    }
  })

/**
 * Spark's `rateLimit`: the `limit` records spread over partitions in proportion to their
 * backlog (a share below 1 rounds up so small partitions are not starved).
 */
export const rateLimit = (
  limit: number,
  from: OffsetMap,
  until: OffsetMap,
  fromNew: OffsetMap
): Map<string, number> => {
  const sizes = new Map<string, number>()
  for (const [k, end] of until) {
    const begin = from.get(k) ?? fromNew.get(k)
    if (begin === undefined) continue
    const size = end - begin
    if (size > 0) sizes.set(k, size)
  }
  let total = 0
  for (const s of sizes.values()) total += s
  if (total < 1) return new Map(until)
  const out = new Map<string, number>()
  for (const [k, end] of until) {
    const size = sizes.get(k)
    if (size === undefined) {
      out.set(k, end)
      continue
    }
    const begin = (from.get(k) ?? fromNew.get(k)) as number
    const prorate = limit * (size / total)
    const share = prorate < 1 ? Math.ceil(prorate) : Math.floor(prorate)
    out.set(k, Math.min(end, begin + share))
  }
  return out
}

const asOffset = (o: Offset): Map<string, number> => fromJson(o as KafkaSourceOffset)

/** Java's `Double.toString` for the averages Spark reports (`3.0`, `2.5`). */
const javaDouble = (x: number): string => (Number.isInteger(x) && Math.abs(x) < 1e7 ? `${x}.0` : String(x))

/**
 * Spark's `KafkaMicroBatchStream.metrics`: how far the last consumed offset is behind the
 * partitions' latest offsets (a partition the consumed offset lacks counts from 0), as
 * `minOffsetsBehindLatest`, `maxOffsetsBehindLatest` and `avgOffsetsBehindLatest`; no metrics
 * without a consumed offset or without known latest offsets.
 *
 * @example
 * ```ts
 * import { offsetsBehindLatestMetrics } from "./KafkaSource.ts"
 * offsetsBehindLatestMetrics({ a: { "0": 1 }, b: { "0": 2 } }, new Map([["a-0", 3], ["b-0", 6]]))
 * // { minOffsetsBehindLatest: "2", maxOffsetsBehindLatest: "4", avgOffsetsBehindLatest: "3.0" }
 * ```
 * @since 0.1.0
 */
export const offsetsBehindLatestMetrics = (
  latestConsumed: Offset | undefined,
  latestAvailable: OffsetMap | undefined
): Readonly<Record<string, string>> => {
  if (latestConsumed === undefined || latestConsumed === null || latestAvailable === undefined) return {}
  const consumed = asOffset(latestConsumed)
  const behind: Array<number> = []
  for (const [k, latest] of latestAvailable) behind.push(latest - (consumed.get(k) ?? 0))
  if (behind.length === 0) return {}
  let sum = 0
  for (const b of behind) sum += b
  return {
    minOffsetsBehindLatest: String(Math.min(...behind)),
    maxOffsetsBehindLatest: String(Math.max(...behind)),
    avgOffsetsBehindLatest: javaDouble(sum / behind.length)
  }
}

/** A fresh group id for error messages (Spark's `spark-kafka-source-<uuid>-<hash>-executor`). */
const uniqueGroupId = (prefix: string, metadataPath: string): string => {
  let h = 0
  for (let i = 0; i < metadataPath.length; i++) h = (Math.imul(31, h) + metadataPath.charCodeAt(i)) | 0
  return `${prefix}-${crypto.randomUUID()}-${h}`
}

const INITIAL_OFFSETS_FILE = "initialOffsets.json"

/** Spark's `KafkaSourceInitialOffsetWriter`: the initial offsets, written once. */
const initialOffsetsStore = (metadataPath: string) => ({
  read: (): Effect.Effect<KafkaSourceOffset | undefined, ConnectorError> =>
    Effect.tryPromise({
      try: () => readFile(join(metadataPath, INITIAL_OFFSETS_FILE), "utf8"),
      catch: (e) => e
    }).pipe(
      Effect.flatMap((text) =>
        Effect.flatMap(Effect.try({ try: () => JSON.parse(text) as unknown, catch: (e) => e }), decodeKafkaSourceOffset)
      ),
      Effect.catch((e) =>
        (e as { code?: string }).code === "ENOENT"
          ? Effect.succeed(undefined)
          : Effect.fail(
              e instanceof ConnectorError
                ? e
                : new ConnectorError({
                    connector: CONNECTOR,
                    domain: "external",
                    retryable: false,
                    message: `Cannot read the Kafka source's initial offsets at ${join(metadataPath, INITIAL_OFFSETS_FILE)}`,
                    cause: e
                  })
            )
      )
    ),
  write: (offset: KafkaSourceOffset): Effect.Effect<void, ConnectorError> =>
    Effect.tryPromise({
      try: async () => {
        await mkdir(metadataPath, { recursive: true })
        const tmp = join(metadataPath, `.${INITIAL_OFFSETS_FILE}.${crypto.randomUUID()}.tmp`)
        await writeFile(tmp, JSON.stringify(offset))
        await rename(tmp, join(metadataPath, INITIAL_OFFSETS_FILE))
      },
      catch: (e) =>
        new ConnectorError({
          connector: CONNECTOR,
          domain: "external",
          retryable: true,
          message: `Cannot write the Kafka source's initial offsets to ${metadataPath}`,
          cause: e
        })
    })
})

/** How long partition discovery is reused between polls of an idle query. */
const PARTITIONS_TTL_MS = 500

/** Builds the micro-batch source for parsed options. */
export const makeKafkaSource = (
  options: KafkaReadOptions,
  metadataPath: string,
  reader: KafkaReader
): MicroBatchSource => {
  const groupId = `${uniqueGroupId(options.groupIdPrefix, metadataPath)}-executor`
  const store = initialOffsetsStore(metadataPath)
  // Spark starts `lastTriggerMillis` at 0, so the first trigger of a run is never delayed; kept
  // undefined until then, so that holds on a clock that starts at 0 too (the test clock).
  let lastTriggerMillis: number | undefined = undefined
  let availableNow = false
  let availableNowOffsets: Map<string, number> | undefined
  let reportedLatest: Map<string, number> | undefined
  let cachedPartitions: { at: number; tps: ReadonlyArray<TopicPartition> } | undefined

  const partitions = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    if (cachedPartitions !== undefined && now - cachedPartitions.at < PARTITIONS_TTL_MS) return cachedPartitions.tps
    const tps = yield* reader.partitions(options.strategy)
    cachedPartitions = { at: now, tps }
    return tps
  })

  const reportDataLoss = (e: ConnectorError): Effect.Effect<void, ConnectorError> =>
    options.failOnDataLoss ? Effect.fail(e) : Effect.void

  const latestAll = Effect.flatMap(partitions, (tps) => reader.latest(tps))

  /** Spark's `delayBatch`: true when the batch should wait for more records. */
  const delayBatch = (minRows: number, latest: OffsetMap, current: OffsetMap, maxDelayMs: number) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      if (lastTriggerMillis === undefined || now - lastTriggerMillis >= maxDelayMs) {
        lastTriggerMillis = now
        return false
      }
      let newRecords = 0
      for (const [k, o] of latest) newRecords += o - (current.get(k) ?? 0)
      if (newRecords < minRows) return true
      lastTriggerMillis = now
      return false
    })

  /**
   * Spark's `verifyEndOffsetForTriggerAvailableNow` (run when a batch is planned): the end of an
   * AvailableNow batch must name the pre-fetched partitions, stay within the pre-fetched
   * offsets, and still be readable (no partition lost, none shrunk below it) — Spark's
   * "Query with Trigger.AvailableNow should throw error when ..." tests.
   */
  const verifyEndForAvailableNow = (prefetched: OffsetMap, end: OffsetMap) =>
    Effect.gen(function* () {
      const tpsPrefetched = [...prefetched.keys()].sort()
      const tpsEnd = [...end.keys()].sort()
      if (tpsPrefetched.join("\u0000") !== tpsEnd.join("\u0000")) {
        return yield* availableNowError(
          "MISMATCHED_TOPIC_PARTITIONS_BETWEEN_END_OFFSET_AND_PREFETCHED",
          `Kafka data source in Trigger.AvailableNow should provide the same topic partitions in pre-fetched offset to end offset for each microbatch. The error could be transient - restart your query, and report if you still see the same issue.\ntopic-partitions for pre-fetched offset: ${setString(tpsPrefetched)}, topic-partitions for end offset: ${setString(tpsEnd)}.`
        )
      }
      if (tpsEnd.some((k) => (end.get(k) as number) > (prefetched.get(k) as number))) {
        return yield* availableNowError(
          "END_OFFSET_HAS_GREATER_OFFSET_FOR_TOPIC_PARTITION_THAN_PREFETCHED",
          `For Kafka data source with Trigger.AvailableNow, end offset should have lower or equal offset per each topic partition than pre-fetched offset. The error could be transient - restart your query, and report if you still see the same issue.\npre-fetched offset: ${mapString(prefetched)}, end offset: ${mapString(end)}.`
        )
      }
      const latest = yield* reader.latest(tpsEnd.map(keyToTp))
      if (!tpsEnd.every((k) => latest.has(k))) {
        return yield* availableNowError(
          "LOST_TOPIC_PARTITIONS_IN_END_OFFSET_WITH_TRIGGER_AVAILABLENOW",
          `Some of partitions in Kafka topic(s) have been lost during running query with Trigger.AvailableNow. The error could be transient - restart your query, and report if you still see the same issue.\ntopic-partitions for latest offset: ${setString([...latest.keys()].sort())}, topic-partitions for end offset: ${setString(tpsEnd)}`
        )
      }
      if (tpsEnd.some((k) => (end.get(k) as number) > (latest.get(k) as number))) {
        return yield* availableNowError(
          "END_OFFSET_HAS_GREATER_OFFSET_FOR_TOPIC_PARTITION_THAN_LATEST_WITH_TRIGGER_AVAILABLENOW",
          `Some of partitions in Kafka topic(s) report available offset which is less than end offset during running query with Trigger.AvailableNow. The error could be transient - restart your query, and report if you still see the same issue.\nlatest offset: ${mapString(latest)}, end offset: ${mapString(end)}`
        )
      }
    })

  const defaultReadLimit = (): ReadLimit => {
    const { minOffsetsPerTrigger: min, maxOffsetsPerTrigger: max, maxTriggerDelayMs } = options
    if (min !== undefined && max !== undefined) {
      return {
        _tag: "Composite",
        limits: [
          { _tag: "MinRows", minRows: min, maxTriggerDelayMs },
          { _tag: "MaxRows", maxRows: max }
        ]
      }
    }
    if (min !== undefined) return { _tag: "MinRows", minRows: min, maxTriggerDelayMs }
    return max !== undefined ? { _tag: "MaxRows", maxRows: max } : { _tag: "AllAvailable" }
  }

  return {
    description: `KafkaV2[${strategyString(options.strategy)}]`,
    schema: kafkaSchema(options.includeHeaders),
    initialOffset: () =>
      Effect.gen(function* () {
        const stored = yield* store.read()
        if (stored !== undefined) return stored
        const tps = yield* partitions
        const resolved = yield* resolveLimit(reader, tps, options.startingOffsets, "start")
        const json = toJson(resolved)
        yield* store.write(json)
        return json
      }),
    defaultReadLimit,
    latestOffset: (start, limit) =>
      Effect.gen(function* () {
        const from = asOffset(start)
        let latest: Map<string, number>
        if (availableNow) {
          if (availableNowOffsets === undefined) availableNowOffsets = new Map(yield* latestAll)
          latest = availableNowOffsets
        } else latest = new Map(yield* latestAll)
        reportedLatest = latest
        if (latest.size === 0) return start
        const limits = limit._tag === "Composite" ? limit.limits : [limit]
        let end: Map<string, number> = latest
        if (!limits.some((l) => l._tag === "AllAvailable")) {
          const lower = limits.find((l) => l._tag === "MinRows")
          const upper = limits.find((l) => l._tag === "MaxRows")
          let skip = false
          if (lower !== undefined && lower._tag === "MinRows") {
            skip = yield* delayBatch(lower.minRows, latest, from, lower.maxTriggerDelayMs)
          }
          if (skip) return start
          if (upper !== undefined && upper._tag === "MaxRows") {
            const newTps = [...latest.keys()].filter((k) => !from.has(k)).map(keyToTp)
            const fromNew = newTps.length === 0 ? new Map<string, number>() : yield* reader.earliest(newTps)
            end = rateLimit(upper.maxRows, from, latest, fromNew)
          }
        }
        return toJson(end)
      }),
    getBatch: (start, end) =>
      Effect.gen(function* () {
        if (availableNowOffsets !== undefined) yield* verifyEndForAvailableNow(availableNowOffsets, asOffset(end))
        const ranges = yield* offsetRanges(reader, asOffset(start), asOffset(end), reportDataLoss)
        return yield* readRanges(reader, ranges, {
          failOnDataLoss: options.failOnDataLoss,
          includeHeaders: options.includeHeaders,
          groupId
        })
      }),
    commit: (end) =>
      options.commitOffsetsToGroup === undefined
        ? Effect.void
        : reader.commitGroup(options.commitOffsetsToGroup, asOffset(end)).pipe(Effect.ignore),
    decodeOffset: (json) => decodeKafkaSourceOffset(json),
    prepareForTriggerAvailableNow: () =>
      Effect.sync(() => {
        availableNow = true
      }),
    // Spark's `KafkaMicroBatchStream.reportLatestOffset`: the partitions' latest offsets seen by
    // the last `latestOffset` (for AvailableNow, the end fixed at the first batch).
    reportLatestOffset: () => (reportedLatest === undefined || reportedLatest.size === 0 ? undefined : toJson(reportedLatest)),
    // Spark's `metrics(latestConsumedOffset)` against the latest offsets seen by the last
    // `latestOffset` (none yet: no metrics, SPARK-57438).
    metrics: (latestConsumed) => offsetsBehindLatestMetrics(latestConsumed, reportedLatest),
    stop: () => reader.close()
  }
}

/**
 * The `kafka` source format: `spark.readStream.format("kafka")` with
 * `kafka.bootstrap.servers` and one of `subscribe`, `subscribePattern`, `assign`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { F, Session } from "tributary-streaming"
 * const program = Effect.gen(function* () {
 *   const spark = yield* Session
 *   const events = spark.readStream.format("kafka")
 *     .option("kafka.bootstrap.servers", "localhost:9092")
 *     .option("subscribe", "events")
 *     .option("startingOffsets", "earliest")
 *     .option("maxOffsetsPerTrigger", 1000)
 *     .load()
 *     .select(F.col("value").cast("string").as("value"), "partition", "offset")
 *   const query = yield* events.writeStream.format("console").start()
 *   yield* query.awaitTermination()
 * })
 * ```
 * @since 0.1.0
 */
export const KafkaSourceFormat: SourceFormat = {
  name: "kafka",
  schema: (userSchema, options) => {
    if (userSchema !== undefined) return userSchemaRefused()
    const parsed = parseStreamOptions(options)
    return parsed instanceof AnalysisError ? parsed : kafkaSchema(includeHeadersOption(options))
  },
  create: (ctx) =>
    Effect.gen(function* () {
      const parsed = parseStreamOptions(ctx.options)
      if (parsed instanceof AnalysisError) return yield* parsed
      const reader = makeReader({
        bootstrapServers: parsed.bootstrapServers,
        kafkaParams: parsed.kafkaParams,
        clientId: "tributary-kafka-source",
        readCommitted: parsed.readCommitted,
        retry: { retries: parsed.fetchOffsetNumRetries, intervalMs: parsed.fetchOffsetRetryIntervalMs }
      })
      return makeKafkaSource(parsed, ctx.metadataPath, reader)
    })
}
