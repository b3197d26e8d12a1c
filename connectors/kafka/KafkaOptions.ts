/**
 * The options of the `kafka` source, batch reader and sink, parsed and checked the way Spark's
 * `KafkaSourceProvider` does (`validateGeneralOptions`, `validateStreamOptions`,
 * `validateBatchOptions`, `getKafkaOffsetRangeLimit`, `kafkaParamsForProducer`), with Spark's
 * messages. Option keys are case-insensitive; `kafka.*` keys are Kafka client settings.
 *
 * Beyond Spark (documented on each):
 * - `kafka.transactional.exactlyOnce` (sink): write each batch in one Kafka transaction tied to
 *   its batch id, so a replayed batch is never written twice (see `KafkaSink.ts`).
 * - `commitOffsetsToGroup` (source): after each batch is committed, commit its end offsets to
 *   this consumer group, so lag tools (`kafka-consumer-groups.sh --describe`) see progress.
 *
 * @since 0.1.0
 */
import * as T from "../../core/DataType.ts"
import { AnalysisError } from "../../core/Errors.ts"
import type { Options } from "../../core/Formats.ts"
import * as OptionParsing from "../OptionParsing.ts"
import { forInputString, javaInt, javaLong, javaTrim } from "../OptionParsing.ts"

/** A Kafka topic partition. `toString` is Java's `TopicPartition.toString`: `topic-partition`. */
export interface TopicPartition {
  readonly topic: string
  readonly partition: number
}

/** `topic-partition`, Kafka's `TopicPartition.toString`. */
export const tpString = (tp: TopicPartition): string => `${tp.topic}-${tp.partition}`

/** Partition offsets by topic then partition: Spark's `KafkaSourceOffset` JSON shape. */
export type PartitionOffsets = ReadonlyMap<string, ReadonlyMap<number, number>>

/** Spark's `KafkaOffsetRangeLimit.LATEST` / `EARLIEST` markers in per-partition JSON. */
export const LATEST = -1
export const EARLIEST = -2

/** Spark's `KafkaOffsetRangeLimit`: where a read starts or ends. */
export type OffsetRangeLimit =
  | { readonly _tag: "Earliest" }
  | { readonly _tag: "Latest" }
  | {
      readonly _tag: "SpecificOffsets"
      readonly offsets: PartitionOffsets
      /**
       * Topic-level limits (`{"topicA":"earliest"}`): every partition of the topic starts at
       * `EARLIEST` or `LATEST`, whatever partitions it has when the offsets are resolved.
       */
      readonly topicOffsets?: ReadonlyMap<string, number>
    }
  | {
      readonly _tag: "SpecificTimestamps"
      readonly timestamps: PartitionOffsets
      readonly strategyOnNoMatch: "error" | "latest"
    }
  | { readonly _tag: "GlobalTimestamp"; readonly timestamp: number; readonly strategyOnNoMatch: "error" | "latest" }

/** Spark's `ConsumerStrategy`: which partitions to read. */
export type ConsumerStrategy =
  | { readonly _tag: "Assign"; readonly partitions: ReadonlyArray<TopicPartition> }
  | { readonly _tag: "Subscribe"; readonly topics: ReadonlyArray<string> }
  | { readonly _tag: "SubscribePattern"; readonly pattern: string }

/** Spark's `toString` of a strategy, shown in the source description. */
export const strategyString = (s: ConsumerStrategy): string => {
  switch (s._tag) {
    case "Assign":
      return `Assign[${s.partitions.map(tpString).join(", ")}]`
    case "Subscribe":
      return `Subscribe[${s.topics.join(",")}]`
    case "SubscribePattern":
      return `SubscribePattern[${s.pattern}]`
  }
}

/** What the source and the batch reader need, parsed. */
export interface KafkaReadOptions {
  readonly bootstrapServers: ReadonlyArray<string>
  /** The `kafka.*` settings, without the prefix. */
  readonly kafkaParams: ReadonlyMap<string, string>
  readonly strategy: ConsumerStrategy
  readonly startingOffsets: OffsetRangeLimit
  /** Batch reads only. */
  readonly endingOffsets: OffsetRangeLimit
  readonly maxOffsetsPerTrigger: number | undefined
  readonly minOffsetsPerTrigger: number | undefined
  readonly maxTriggerDelayMs: number
  readonly failOnDataLoss: boolean
  readonly includeHeaders: boolean
  readonly readCommitted: boolean
  readonly groupIdPrefix: string
  /** Beyond Spark: the consumer group whose offsets follow the committed batches. */
  readonly commitOffsetsToGroup: string | undefined
  /** Spark's `fetchOffset.numRetries` (default 3) and `fetchOffset.retryIntervalMs` (default 1000). */
  readonly fetchOffsetNumRetries: number
  readonly fetchOffsetRetryIntervalMs: number
}

const invalid = (message: string, errorClass?: string): AnalysisError =>
  new AnalysisError({ reason: "InvalidArgument", message, ...(errorClass === undefined ? {} : { errorClass }) })

/** Options with lower-case keys (Spark's `CaseInsensitiveMap`); a later duplicate wins. */
export const lowerCaseOptions = (options: Options): ReadonlyMap<string, string> => {
  const m = new Map<string, string>()
  for (const [k, v] of Object.entries(options)) m.set(k.toLowerCase(), v)
  return m
}

/** Java's `Long.parseLong`/`String.toLong` (as a JS number; offsets stay far below 2^53). */
const parseLong = (s: string): number | AnalysisError => {
  const n = javaLong(s)
  return n === undefined ? invalid(forInputString(s)) : Number(n)
}

/** Java's `Integer.parseInt`. */
const parseInt32 = (s: string): number | AnalysisError => javaInt(s) ?? invalid(forInputString(s))

/** Scala's `String.toBoolean`: `true`/`false` in any case, anything else fails as Java does. */
const parseBoolean = (key: string, s: string): boolean | AnalysisError => {
  const l = s.toLowerCase()
  if (l === "true") return true
  if (l === "false") return false
  // Scala's `StringOps.toBoolean` message; the option name helps find it.
  return invalid(`For input string: "${s}" (option '${key}' must be true or false)`)
}

/** Spark's `Utils.timeStringAsMs`: `15m`, `500ms`, `2s`, or a bare number of milliseconds. */
export const timeStringAsMs = (str: string): number | AnalysisError => {
  const ms = OptionParsing.timeStringAsMs(str)
  return typeof ms === "string" ? invalid(ms) : ms
}

const PARTITION_OFFSETS_EXAMPLE = `{"topicA":{"0":23,"1":-1},"topicB":{"0":-2}}`
const PARTITIONS_EXAMPLE = `{"topicA":[0,1],"topicB":[0,1]}`
const PARTITION_TIMESTAMPS_EXAMPLE = `{"topicA":{"0": 1000, "1": 1000}, "topicB": {"0": 2000, "1": 2000}}`

const parseJson = (s: string): unknown => {
  try {
    return JSON.parse(s)
  } catch {
    return undefined
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v)

/**
 * Spark's `JsonUtils.partitionOffsets`: `{"topic":{"0":23,"1":-2}}` to offsets by topic and
 * partition; anything else fails with Spark's message.
 *
 * @example
 * ```ts
 * import { parsePartitionOffsets } from "./KafkaOptions.ts"
 * parsePartitionOffsets(`{"t":{"0":23,"1":-2}}`) // Map { "t" => Map { 0 => 23, 1 => -2 } }
 * ```
 * @since 0.1.0
 */
export const parsePartitionOffsets = (
  str: string,
  example: string = PARTITION_OFFSETS_EXAMPLE
): PartitionOffsets | AnalysisError => {
  const json = parseJson(str)
  const fail = invalid(`Expected e.g. ${example}, got ${str}`)
  if (!isObject(json)) return fail
  const out = new Map<string, Map<number, number>>()
  for (const [topic, parts] of Object.entries(json)) {
    if (!isObject(parts)) return fail
    const m = new Map<number, number>()
    for (const [p, o] of Object.entries(parts)) {
      if (!/^-?\d+$/.test(p) || typeof o !== "number" || !Number.isInteger(o)) return fail
      m.set(Number(p), o)
    }
    out.set(topic, m)
  }
  return out
}

/**
 * Spark's starting/ending offsets JSON with topic-level limits: a topic maps to per-partition
 * offsets (`{"0":23}`) or to `"earliest"` / `"latest"` (any case) for all its partitions —
 * Spark's `SpecificOffsetRangeLimit(partitionOffsets, topicOffsets)` ("subscribing topics from
 * topic-level offsets").
 *
 * @example
 * ```ts
 * import { parseOffsetsWithTopics } from "./KafkaOptions.ts"
 * parseOffsetsWithTopics(`{"a":"eArLiEst","b":{"0":23}}`)
 * // { offsets: Map { "b" => Map { 0 => 23 } }, topicOffsets: Map { "a" => -2 } }
 * ```
 * @since 0.1.0
 */
export const parseOffsetsWithTopics = (
  str: string
): { readonly offsets: PartitionOffsets; readonly topicOffsets: ReadonlyMap<string, number> } | AnalysisError => {
  const json = parseJson(str)
  if (!isObject(json)) return invalid(`Expected e.g. ${PARTITION_OFFSETS_EXAMPLE}, got ${str}`)
  const topicOffsets = new Map<string, number>()
  const rest: Record<string, unknown> = {}
  for (const [topic, v] of Object.entries(json)) {
    if (typeof v === "string" && v.toLowerCase() === "earliest") topicOffsets.set(topic, EARLIEST)
    else if (typeof v === "string" && v.toLowerCase() === "latest") topicOffsets.set(topic, LATEST)
    else rest[topic] = v
  }
  if (topicOffsets.size === 0) {
    const offsets = parsePartitionOffsets(str)
    return offsets instanceof AnalysisError ? offsets : { offsets, topicOffsets }
  }
  const offsets = parsePartitionOffsets(JSON.stringify(rest))
  if (offsets instanceof AnalysisError) return invalid(`Expected e.g. ${PARTITION_OFFSETS_EXAMPLE}, got ${str}`)
  return { offsets, topicOffsets }
}

/** Spark's `JsonUtils.partitions`: `{"topicA":[0,1]}` to topic partitions. */
export const parsePartitions = (str: string): ReadonlyArray<TopicPartition> | AnalysisError => {
  const json = parseJson(str)
  const fail = invalid(`Expected e.g. ${PARTITIONS_EXAMPLE}, got ${str}`)
  if (!isObject(json)) return fail
  const out: Array<TopicPartition> = []
  for (const [topic, parts] of Object.entries(json)) {
    if (!Array.isArray(parts)) return fail
    for (const p of parts) {
      if (typeof p !== "number" || !Number.isInteger(p)) return fail
      out.push({ topic, partition: p })
    }
  }
  return out
}

/**
 * Spark's `getKafkaOffsetRangeLimit`: a global timestamp option first, then per-partition
 * timestamps, then `earliest`/`latest`/per-partition JSON, else `dflt`.
 */
const offsetRangeLimit = (
  params: ReadonlyMap<string, string>,
  globalTimestampKey: string,
  byTimestampKey: string,
  offsetKey: string,
  dflt: OffsetRangeLimit
): OffsetRangeLimit | AnalysisError => {
  const strategyText = params.get("startingoffsetsbytimestampstrategy")
  let strategyOnNoMatch: "error" | "latest" = "error"
  if (strategyText !== undefined) {
    const s = strategyText.toUpperCase()
    if (s !== "ERROR" && s !== "LATEST") return invalid(`No value found for '${s}'`)
    strategyOnNoMatch = s === "ERROR" ? "error" : "latest"
  }
  const global = params.get(globalTimestampKey)
  if (global !== undefined) {
    const ts = javaTrim(global)
    const n = parseLong(ts)
    if (n instanceof AnalysisError) return invalid(`Expected a single long value, got ${ts}`)
    return { _tag: "GlobalTimestamp", timestamp: n, strategyOnNoMatch }
  }
  const byTs = params.get(byTimestampKey)
  if (byTs !== undefined) {
    const timestamps = parsePartitionOffsets(javaTrim(byTs), PARTITION_TIMESTAMPS_EXAMPLE)
    if (timestamps instanceof AnalysisError) return timestamps
    return { _tag: "SpecificTimestamps", timestamps, strategyOnNoMatch }
  }
  const text = params.get(offsetKey)
  if (text === undefined) return dflt
  const t = javaTrim(text)
  if (t.toLowerCase() === "latest") return { _tag: "Latest" }
  if (t.toLowerCase() === "earliest") return { _tag: "Earliest" }
  const parsed = parseOffsetsWithTopics(t)
  if (parsed instanceof AnalysisError) return parsed
  return parsed.topicOffsets.size === 0
    ? { _tag: "SpecificOffsets", offsets: parsed.offsets }
    : { _tag: "SpecificOffsets", offsets: parsed.offsets, topicOffsets: parsed.topicOffsets }
}

const STRATEGY_KEYS = ["subscribe", "subscribepattern", "assign"]

/** Spark's `validateGeneralOptions`, then the parsed strategy. */
const generalOptions = (params: ReadonlyMap<string, string>): ConsumerStrategy | AnalysisError => {
  const specified = STRATEGY_KEYS.filter((k) => params.has(k))
  // Spark prints the keys of a Scala Set of three, whose iteration order is insertion order.
  const keys = STRATEGY_KEYS.join(", ")
  if (specified.length === 0) {
    return invalid(
      `One of the following options must be specified for Kafka source: ${keys}. See the docs for more details.`
    )
  }
  if (specified.length > 1) {
    return invalid(
      `Only one of the following options can be specified for Kafka source: ${keys}. See the docs for more details.`
    )
  }
  let strategy: ConsumerStrategy
  const key = specified[0]
  const value = params.get(key) as string
  if (key === "assign") {
    if (!javaTrim(value).startsWith("{")) {
      return invalid(`No topicpartitions to assign as specified value for option 'assign' is '${value}'`)
    }
    const partitions = parsePartitions(value)
    if (partitions instanceof AnalysisError) return partitions
    strategy = { _tag: "Assign", partitions }
  } else if (key === "subscribe") {
    const topics = value
      .split(",")
      .map(javaTrim)
      .filter((t) => t.length > 0)
    if (topics.length === 0) {
      return invalid(`No topics to subscribe to as specified value for option 'subscribe' is '${value}'`)
    }
    strategy = { _tag: "Subscribe", topics }
  } else {
    const pattern = javaTrim(value)
    if (pattern.length === 0) {
      return invalid(`Pattern to subscribe is empty as specified value for option 'subscribePattern' is '${value}'`)
    }
    try {
      new RegExp(pattern)
    } catch {
      return invalid(`Invalid subscribePattern '${pattern}'`)
    }
    strategy = { _tag: "SubscribePattern", pattern }
  }
  const minPartitions = params.get("minpartitions")
  if (minPartitions !== undefined) {
    const p = parseInt32(minPartitions)
    if (p instanceof AnalysisError) return p
    if (p <= 0) return invalid("minPartitions must be positive")
  }
  const maxRecords = params.get("maxrecordsperpartition")
  if (maxRecords !== undefined) {
    const p = parseLong(maxRecords)
    if (p instanceof AnalysisError) return p
    if (p <= 0) return invalid("maxRecordsPerPartition must be positive")
  }
  if (params.has("kafka.auto.offset.reset")) {
    return invalid(`
Kafka option 'auto.offset.reset' is not supported.
Instead set the source option 'startingoffsets' to 'earliest' or 'latest'
to specify where to start. Structured Streaming manages which offsets are consumed
internally, rather than relying on the kafkaConsumer to do it. This will ensure that no
data is missed when new topics/partitions are dynamically subscribed. Note that
'startingoffsets' only applies when a new Streaming query is started, and
that resuming will always pick up from where the query left off. See the docs for more
details.
`)
  }
  if (params.has("kafka.key.deserializer")) {
    return invalid(
      "Kafka option 'key.deserializer' is not supported as keys are deserialized as byte arrays with ByteArrayDeserializer. Use DataFrame operations to explicitly deserialize the keys."
    )
  }
  if (params.has("kafka.value.deserializer")) {
    return invalid(
      "Kafka option 'value.deserializer' is not supported as values are deserialized as byte arrays with ByteArrayDeserializer. Use DataFrame operations to explicitly deserialize the values."
    )
  }
  for (const c of ["enable.auto.commit", "interceptor.classes"]) {
    if (params.has(`kafka.${c}`)) return invalid(`Kafka option '${c}' is not supported`)
  }
  if (!params.has("kafka.bootstrap.servers")) {
    return invalid("Option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer")
  }
  const min = params.get("minoffsetspertrigger")
  const max = params.get("maxoffsetspertrigger")
  if (min !== undefined && max !== undefined) {
    const minN = parseLong(min)
    if (minN instanceof AnalysisError) return minN
    const maxN = parseLong(max)
    if (maxN instanceof AnalysisError) return maxN
    if (minN > maxN) {
      return invalid(`The value of minOffsetPerTrigger(${minN}) is higher than the maxOffsetsPerTrigger(${maxN}).`)
    }
  }
  return strategy
}

/** The `kafka.*` settings without their prefix (Spark's `convertToSpecifiedParams`). */
const kafkaParams = (params: ReadonlyMap<string, string>): ReadonlyMap<string, string> => {
  const m = new Map<string, string>()
  for (const [k, v] of params) if (k.startsWith("kafka.")) m.set(k.slice(6), v)
  return m
}

const bootstrap = (params: ReadonlyMap<string, string>): ReadonlyArray<string> =>
  (params.get("kafka.bootstrap.servers") ?? "")
    .split(",")
    .map(javaTrim)
    .filter((s) => s.length > 0)

const optionalLong = (params: ReadonlyMap<string, string>, key: string): number | undefined | AnalysisError => {
  const v = params.get(key)
  return v === undefined ? undefined : parseLong(v)
}

/** The parts every read shares, after the mode-specific checks. */
const readOptions = (
  params: ReadonlyMap<string, string>,
  strategy: ConsumerStrategy,
  startingOffsets: OffsetRangeLimit,
  endingOffsets: OffsetRangeLimit
): KafkaReadOptions | AnalysisError => {
  const maxOffsetsPerTrigger = optionalLong(params, "maxoffsetspertrigger")
  if (maxOffsetsPerTrigger instanceof AnalysisError) return maxOffsetsPerTrigger
  const minOffsetsPerTrigger = optionalLong(params, "minoffsetspertrigger")
  if (minOffsetsPerTrigger instanceof AnalysisError) return minOffsetsPerTrigger
  const maxTriggerDelayMs = timeStringAsMs(params.get("maxtriggerdelay") ?? "15m")
  if (maxTriggerDelayMs instanceof AnalysisError) return maxTriggerDelayMs
  const failOnDataLoss = parseBoolean("failOnDataLoss", params.get("failondataloss") ?? "true")
  if (failOnDataLoss instanceof AnalysisError) return failOnDataLoss
  const includeHeaders = parseBoolean("includeHeaders", params.get("includeheaders") ?? "false")
  if (includeHeaders instanceof AnalysisError) return includeHeaders
  const isolation = (params.get("kafka.isolation.level") ?? "read_uncommitted").toLowerCase()
  if (isolation !== "read_committed" && isolation !== "read_uncommitted") {
    return invalid(
      `Invalid value ${params.get("kafka.isolation.level")} for configuration isolation.level: String must be one of: read_committed, read_uncommitted`
    )
  }
  const retries = parseInt32(params.get("fetchoffset.numretries") ?? "3")
  if (retries instanceof AnalysisError) return retries
  const interval = parseLong(params.get("fetchoffset.retryintervalms") ?? "1000")
  if (interval instanceof AnalysisError) return interval
  const commitGroup = params.get("commitoffsetstogroup")
  if (commitGroup !== undefined && javaTrim(commitGroup).length === 0) {
    return invalid("Option 'commitOffsetsToGroup' must name a consumer group")
  }
  return {
    bootstrapServers: bootstrap(params),
    kafkaParams: kafkaParams(params),
    strategy,
    startingOffsets,
    endingOffsets,
    maxOffsetsPerTrigger,
    minOffsetsPerTrigger,
    maxTriggerDelayMs,
    failOnDataLoss,
    includeHeaders,
    readCommitted: isolation === "read_committed",
    groupIdPrefix: params.get("groupidprefix") ?? "spark-kafka-source",
    commitOffsetsToGroup: commitGroup === undefined ? undefined : javaTrim(commitGroup),
    fetchOffsetNumRetries: retries,
    fetchOffsetRetryIntervalMs: interval
  }
}

/**
 * Parses and checks the options of a streaming read (`readStream.format("kafka")`) as Spark's
 * `validateStreamOptions`: `endingOffsets` and `endingOffsetsByTimestamp` are refused, one of
 * `subscribe`/`subscribePattern`/`assign` is required, `kafka.bootstrap.servers` is required,
 * and `startingOffsets` defaults to `latest`.
 *
 * @example
 * ```ts
 * import { parseStreamOptions } from "./KafkaOptions.ts"
 * parseStreamOptions({ "kafka.bootstrap.servers": "localhost:9092", subscribe: "events" })
 * // { strategy: { _tag: "Subscribe", topics: ["events"] }, startingOffsets: { _tag: "Latest" }, ... }
 * ```
 * @since 0.1.0
 */
export const parseStreamOptions = (options: Options): KafkaReadOptions | AnalysisError => {
  const params = lowerCaseOptions(options)
  if (params.has("endingoffsets")) return invalid("ending offset not valid in streaming queries")
  if (params.has("endingoffsetsbytimestamp")) return invalid("ending timestamp not valid in streaming queries")
  const strategy = generalOptions(params)
  if (strategy instanceof AnalysisError) return strategy
  const starting = offsetRangeLimit(params, "startingtimestamp", "startingoffsetsbytimestamp", "startingoffsets", {
    _tag: "Latest"
  })
  if (starting instanceof AnalysisError) return starting
  return readOptions(params, strategy, starting, { _tag: "Latest" })
}

/**
 * Parses and checks the options of a batch read (`read.format("kafka")`) as Spark's
 * `validateBatchOptions`: starting offsets default to `earliest` and may not be `latest`,
 * ending offsets default to `latest` and may not be `earliest`, and per-partition start and end
 * offsets must name the same partitions with start ≤ end.
 *
 * @example
 * ```ts
 * import { parseBatchOptions } from "./KafkaOptions.ts"
 * parseBatchOptions({ "kafka.bootstrap.servers": "b:9092", subscribe: "t", startingOffsets: "latest" })
 * // AnalysisError: starting offset can't be latest for batch queries on Kafka
 * ```
 * @since 0.1.0
 */
export const parseBatchOptions = (options: Options): KafkaReadOptions | AnalysisError => {
  const params = lowerCaseOptions(options)
  const starting = offsetRangeLimit(params, "startingtimestamp", "startingoffsetsbytimestamp", "startingoffsets", {
    _tag: "Earliest"
  })
  if (starting instanceof AnalysisError) return starting
  if (starting._tag === "Latest") return invalid("starting offset can't be latest for batch queries on Kafka")
  if (starting._tag === "SpecificOffsets") {
    for (const [topic, parts] of starting.offsets) {
      for (const [p, o] of parts) {
        if (o === LATEST) {
          return invalid(
            `startingOffsets for ${tpString({ topic, partition: p })} can't be latest for batch queries on Kafka`
          )
        }
      }
    }
  }
  const ending = offsetRangeLimit(params, "endingtimestamp", "endingoffsetsbytimestamp", "endingoffsets", {
    _tag: "Latest"
  })
  if (ending instanceof AnalysisError) return ending
  if (ending._tag === "Earliest") return invalid("ending offset can't be earliest for batch queries on Kafka")
  if (ending._tag === "SpecificOffsets") {
    for (const [topic, parts] of ending.offsets) {
      for (const [p, o] of parts) {
        if (o === EARLIEST) {
          return invalid(
            `ending offset for ${tpString({ topic, partition: p })} can't be earliest for batch queries on Kafka`
          )
        }
      }
    }
  }
  const strategy = generalOptions(params)
  if (strategy instanceof AnalysisError) return strategy
  // Spark's `checkOffsetLimitValidity`.
  if (starting._tag === "SpecificOffsets" && ending._tag === "SpecificOffsets") {
    const s = partitionSet(starting.offsets)
    const e = partitionSet(ending.offsets)
    if (s.join(",") !== e.join(",")) {
      return invalid(
        `[MISMATCHED_TOPIC_PARTITIONS_BETWEEN_START_OFFSET_AND_END_OFFSET] The specified start offset and end offset should have the same topic-partitions.\nTopic-partitions for start offset: Set(${s.join(", ")}), topic-partitions for end offset: Set(${e.join(", ")}).`,
        "MISMATCHED_TOPIC_PARTITIONS_BETWEEN_START_OFFSET_AND_END_OFFSET"
      )
    }
    for (const [topic, parts] of starting.offsets) {
      for (const [p, so] of parts) {
        const eo = ending.offsets.get(topic)?.get(p) as number
        if (so > eo && so >= 0 && eo >= 0) {
          return invalid(
            `[UNRESOLVED_START_OFFSET_GREATER_THAN_END_OFFSET] The specified start offset ${so} is greater than the end offset ${eo} for topic ${topic} partition ${p}.`,
            "UNRESOLVED_START_OFFSET_GREATER_THAN_END_OFFSET"
          )
        }
      }
    }
  }
  return readOptions(params, strategy, starting, ending)
}

const partitionSet = (offsets: PartitionOffsets): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const [topic, parts] of offsets) for (const p of parts.keys()) out.push(tpString({ topic, partition: p }))
  return out.sort()
}

/** What the sink needs, parsed. */
export interface KafkaWriteOptions {
  readonly bootstrapServers: ReadonlyArray<string>
  readonly kafkaParams: ReadonlyMap<string, string>
  /** The `topic` option (trimmed): the topic of rows without a `topic` column. */
  readonly topic: string | undefined
  /**
   * Beyond Spark, `kafka.transactional.exactlyOnce=true`: each batch is written in one Kafka
   * transaction whose transactional id belongs to the query, so a restart fences the previous
   * run and a batch already committed is skipped (see `KafkaSink.ts`).
   */
  readonly exactlyOnce: boolean
  /** `kafka.transactional.id` prefix; the query id when not given. */
  readonly transactionalIdPrefix: string | undefined
}

/**
 * Parses the sink options as Spark's `kafkaParamsForProducer`: the key and value serializers
 * are refused, `kafka.bootstrap.servers` is required by the Kafka producer.
 *
 * @example
 * ```ts
 * import { parseWriteOptions } from "./KafkaOptions.ts"
 * parseWriteOptions({ "kafka.bootstrap.servers": "b:9092", topic: " out " })
 * // { topic: "out", exactlyOnce: false, ... }
 * ```
 * @since 0.1.0
 */
export const parseWriteOptions = (options: Options): KafkaWriteOptions | AnalysisError => {
  const params = lowerCaseOptions(options)
  if (params.has("kafka.key.serializer")) {
    return invalid("Kafka option 'key.serializer' is not supported as keys are serialized with ByteArraySerializer.")
  }
  if (params.has("kafka.value.serializer")) {
    return invalid("Kafka option 'value.serializer' is not supported as value are serialized with ByteArraySerializer.")
  }
  if (bootstrap(params).length === 0) {
    return invalid("Option 'kafka.bootstrap.servers' must be specified for configuring Kafka producer")
  }
  const exactlyOnce = parseBoolean(
    "kafka.transactional.exactlyOnce",
    params.get("kafka.transactional.exactlyonce") ?? "false"
  )
  if (exactlyOnce instanceof AnalysisError) return exactlyOnce
  const topic = params.get("topic")
  const kp = new Map(kafkaParams(params))
  kp.delete("transactional.exactlyonce")
  return {
    bootstrapServers: bootstrap(params),
    kafkaParams: kp,
    topic: topic === undefined ? undefined : javaTrim(topic),
    exactlyOnce,
    transactionalIdPrefix: params.get("kafka.transactional.id")
  }
}

/** Spark's `KafkaRecordToRowConverter.headersType`: `array<struct<key: string, value: binary>>`. */
export const HeadersType: T.DataType = T.array(
  T.struct([T.field("key", T.StringType, true), T.field("value", T.BinaryType, true)]),
  true
)

/**
 * Spark's `KafkaRecordToRowConverter.kafkaSchema`: `key`, `value`, `topic`, `partition`,
 * `offset`, `timestamp`, `timestampType`, and `headers` when `includeHeaders` is true.
 *
 * @example
 * ```ts
 * import { kafkaSchema } from "./KafkaOptions.ts"
 * kafkaSchema(false).fields.map((f) => f.name)
 * // ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType"]
 * ```
 * @since 0.1.0
 */
export const kafkaSchema = (includeHeaders: boolean): T.StructType =>
  T.struct([
    T.field("key", T.BinaryType),
    T.field("value", T.BinaryType),
    T.field("topic", T.StringType),
    T.field("partition", T.IntegerType),
    T.field("offset", T.LongType),
    T.field("timestamp", T.TimestampType),
    T.field("timestampType", T.IntegerType),
    ...(includeHeaders ? [T.field("headers", HeadersType)] : [])
  ])

/** The `includeHeaders` option alone (the schema is needed before the other checks run). */
export const includeHeadersOption = (options: Options): boolean =>
  (lowerCaseOptions(options).get("includeheaders") ?? "false").toLowerCase() === "true"

/** Spark's refusal of a user schema: the Kafka source has a fixed schema. */
export const userSchemaRefused = (): AnalysisError =>
  invalid("requirement failed: Kafka source has a fixed schema and cannot be set with a custom one")
