/**
 * The options of the `kinesis` source, with the names of Spark's Kinesis connectors: Databricks'
 * (`streamName`, `region`, `initialPosition`, `maxRecordsPerFetch`, `shardFetchInterval`,
 * `awsAccessKey`, `awsSecretKey`) and the open-source `spark-sql-kinesis` (qubole/kinesis-sql:
 * `endpointUrl`, `regionName`, `startingPosition`, `awsAccessKeyId`, `sessionToken`,
 * `failOnDataLoss`, `kinesis.executor.maxFetchRecordsPerShard`,
 * `kinesis.client.describeShardInterval`), and the row schema of `spark-sql-kinesis`.
 *
 * Keys are case-insensitive (Spark's `CaseInsensitiveMap`); bad values fail with an
 * `AnalysisError` when the DataFrame is loaded, before any query starts.
 *
 * @since 0.1.0
 */
import * as T from "../../core/DataType.ts"
import { AnalysisError } from "../../core/Errors.ts"
import type { Options } from "../../core/Formats.ts"
import { javaInt, javaTrim, timeStringAsMs } from "../OptionParsing.ts"

/**
 * Where a query without a checkpoint starts reading each shard (Spark's
 * `KinesisInitialPositions`: `Latest`, `TrimHorizon`, `AtTimestamp`).
 *
 * @since 0.1.0
 */
export type InitialPosition =
  | { readonly _tag: "Latest" }
  | { readonly _tag: "TrimHorizon" }
  | { readonly _tag: "AtTimestamp"; readonly timestampMs: number }

/**
 * The parsed options of the `kinesis` source.
 *
 * @since 0.1.0
 */
export interface KinesisReadOptions {
  /** The streams to read (`streamName`, a comma-separated list), in the order given. */
  readonly streamNames: ReadonlyArray<string>
  /** `region` / `regionName`; `undefined`: the AWS SDK's own resolution (`AWS_REGION`, profiles). */
  readonly region: string | undefined
  /** `endpointUrl` / `endpoint`; `undefined`: the region's AWS endpoint. */
  readonly endpointUrl: string | undefined
  /** Static credentials; `undefined`: the AWS SDK's default credential provider chain. */
  readonly credentials:
    | { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string }
    | undefined
  readonly initialPosition: InitialPosition
  /** Records asked for by one GetRecords call (Kinesis allows at most 10,000). */
  readonly maxRecordsPerFetch: number
  /** Records read from one shard for one micro-batch at most. */
  readonly maxFetchRecordsPerShard: number
  /** How long a shard listing is reused before the shards are listed again (resharding). */
  readonly shardFetchIntervalMs: number
  readonly failOnDataLoss: boolean
}

const invalid = (message: string): AnalysisError => new AnalysisError({ reason: "InvalidArgument", message })

/** Options with lower-case keys; a later duplicate wins. */
const lowerCaseOptions = (options: Options): ReadonlyMap<string, string> => {
  const m = new Map<string, string>()
  for (const [k, v] of Object.entries(options)) m.set(k.toLowerCase(), v)
  return m
}

/** The first of `keys` that is set (Databricks' name first, then spark-sql-kinesis'). */
const firstOf = (params: ReadonlyMap<string, string>, ...keys: ReadonlyArray<string>): string | undefined => {
  for (const k of keys) {
    const v = params.get(k)
    if (v !== undefined) return v
  }
  return undefined
}

/** Kinesis' GetRecords `Limit` range. */
const MAX_GET_RECORDS_LIMIT = 10_000

const positiveInt = (
  params: ReadonlyMap<string, string>,
  name: string,
  key: string,
  dflt: number,
  max?: number
): number | AnalysisError => {
  const raw = params.get(key)
  if (raw === undefined) return dflt
  const n = javaInt(javaTrim(raw))
  if (n === undefined || n <= 0 || (max !== undefined && n > max)) {
    return invalid(
      `Invalid value '${raw}' for option '${name}': it must be a positive integer${max === undefined ? "" : ` of at most ${max}`}`
    )
  }
  return n
}

const DEFAULT_AT_TIMESTAMP_FORMAT = "MM/dd/yyyy HH:mm:ss ZZZ"

/** Zone names the timestamp parser knows (offset in minutes east of UTC). */
const ZONE_NAMES: Readonly<Record<string, number>> = {
  UTC: 0,
  UT: 0,
  GMT: 0,
  Z: 0,
  EST: -300,
  EDT: -240,
  CST: -360,
  CDT: -300,
  MST: -420,
  MDT: -360,
  PST: -480,
  PDT: -420,
  AKST: -540,
  AKDT: -480,
  HST: -600,
  CET: 60,
  CEST: 120,
  BST: 60,
  IST: 330,
  JST: 540
}

type Token = { readonly letter: string; readonly count: number } | { readonly literal: string }

/** A `SimpleDateFormat` pattern as letter runs and literals (quoted with `'`, `''` a quote). */
const tokenize = (pattern: string): ReadonlyArray<Token> | string => {
  const out: Array<Token> = []
  let i = 0
  while (i < pattern.length) {
    const c = pattern[i]
    if (c === "'") {
      const end = pattern.indexOf("'", i + 1)
      if (end < 0) return `Unterminated quote in pattern '${pattern}'`
      out.push({ literal: end === i + 1 ? "'" : pattern.slice(i + 1, end) })
      i = end + 1
    } else if (/[A-Za-z]/.test(c)) {
      let j = i
      while (j < pattern.length && pattern[j] === c) j++
      if (!"yMdHmsSZXz".includes(c))
        return `Unsupported pattern letter '${c}' in '${pattern}' (supported: y M d H m s S Z X z)`
      out.push({ letter: c, count: j - i })
      i = j
    } else {
      out.push({ literal: c })
      i++
    }
  }
  return out
}

/** A zone at `s[i]`: `Z`, `±HH:MM`, `±HHMM`, `±HH`, `GMT±HH:MM` or a name of `ZONE_NAMES`. */
const parseZone = (s: string, i: number): { readonly minutes: number; readonly next: number } | undefined => {
  const rest = s.slice(i)
  const offset = /^(?:GMT|UTC)?([+-])(\d{2}):?(\d{2})?/.exec(rest)
  if (offset !== null) {
    const minutes = Number(offset[2]) * 60 + Number(offset[3] ?? "0")
    return { minutes: offset[1] === "-" ? -minutes : minutes, next: i + offset[0].length }
  }
  const name = /^[A-Za-z]+/.exec(rest)
  if (name !== null && Object.hasOwn(ZONE_NAMES, name[0].toUpperCase())) {
    return { minutes: ZONE_NAMES[name[0].toUpperCase()], next: i + name[0].length }
  }
  return undefined
}

/**
 * Parses `text` with a `SimpleDateFormat`-style pattern (the letters `y M d H m s S` and the
 * zones `Z X z`), as Databricks' `at_timestamp` does; milliseconds since the epoch, or why not.
 *
 * @example
 * ```ts
 * import { parseTimestamp } from "./KinesisOptions.ts"
 * parseTimestamp("06/25/2020 10:23:45 PDT", "MM/dd/yyyy HH:mm:ss ZZZ") // 1593105825000
 * ```
 * @since 0.1.0
 */
export const parseTimestamp = (text: string, pattern: string): number | string => {
  const tokens = tokenize(pattern)
  if (typeof tokens === "string") return tokens
  const fields: Record<string, number> = { y: 1970, M: 1, d: 1, H: 0, m: 0, s: 0, S: 0 }
  let zone = 0
  let i = 0
  const fail = `Unparseable date: "${text}" (format "${pattern}")`
  for (let t = 0; t < tokens.length; t++) {
    const tok = tokens[t]
    if ("literal" in tok) {
      if (!text.startsWith(tok.literal, i)) return fail
      i += tok.literal.length
      continue
    }
    if (tok.letter === "Z" || tok.letter === "X" || tok.letter === "z") {
      const z = parseZone(text, i)
      if (z === undefined) return fail
      zone = z.minutes
      i = z.next
      continue
    }
    // A numeric field followed directly by another takes exactly its width (`yyyyMMdd`);
    // otherwise it takes every digit there is, as SimpleDateFormat does.
    const nextTok = tokens[t + 1]
    const adjacentNumber = nextTok !== undefined && "letter" in nextTok && "yMdHmsS".includes(nextTok.letter)
    let j = i
    while (j < text.length && /\d/.test(text[j]) && (!adjacentNumber || j - i < tok.count)) j++
    if (j === i) return fail
    fields[tok.letter] = Number(text.slice(i, j))
    i = j
  }
  if (i !== text.length) return fail
  const { y, M, d, H, m, s, S } = fields
  if (M < 1 || M > 12 || d < 1 || d > 31 || H > 23 || m > 59 || s > 59 || S > 999) return fail
  const date = new Date(Date.UTC(y, M - 1, d, H, m, s, S))
  // Date.UTC maps years 0-99 to 1900-1999; a four-digit year is what the pattern meant.
  if (y < 100) date.setUTCFullYear(y)
  if (date.getUTCDate() !== d) return fail
  return date.getTime() - zone * 60_000
}

/**
 * Databricks' `initialPosition`: `latest` (the default), `trim_horizon`, `earliest` (an alias
 * of `trim_horizon`), or a JSON object `{"at_timestamp": "06/25/2020 10:23:45 PDT", "format":
 * "MM/dd/yyyy HH:mm:ss ZZZ"}` (`format` optional, that pattern its default).
 *
 * @example
 * ```ts
 * import { parseInitialPosition } from "./KinesisOptions.ts"
 * parseInitialPosition("earliest") // { _tag: "TrimHorizon" }
 * parseInitialPosition('{"at_timestamp": "01/02/2024 03:04:05 UTC"}') // { _tag: "AtTimestamp", timestampMs: 1704164645000 }
 * ```
 * @since 0.1.0
 */
export const parseInitialPosition = (raw: string): InitialPosition | AnalysisError => {
  const value = javaTrim(raw)
  switch (value.toLowerCase()) {
    case "latest":
      return { _tag: "Latest" }
    case "trim_horizon":
    case "earliest":
      return { _tag: "TrimHorizon" }
  }
  const usage = `Invalid initialPosition '${raw}': expected latest, trim_horizon, earliest, or {"at_timestamp": "<timestamp>", "format": "<pattern, default ${DEFAULT_AT_TIMESTAMP_FORMAT}>"}`
  if (!value.startsWith("{")) return invalid(usage)
  let json: unknown
  try {
    json = JSON.parse(value)
  } catch {
    return invalid(usage)
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) return invalid(usage)
  const entries = new Map(Object.entries(json).map(([k, v]) => [k.toLowerCase(), v] as const))
  const ts = entries.get("at_timestamp")
  const format = entries.get("format") ?? DEFAULT_AT_TIMESTAMP_FORMAT
  const unknown = [...entries.keys()].filter((k) => k !== "at_timestamp" && k !== "format")
  if (typeof ts !== "string" || typeof format !== "string" || unknown.length > 0) return invalid(usage)
  const ms = parseTimestamp(ts, format)
  if (typeof ms === "string") return invalid(`Invalid initialPosition '${raw}': ${ms}`)
  return { _tag: "AtTimestamp", timestampMs: ms }
}

/**
 * Parses and checks the options of `spark.readStream.format("kinesis")`.
 *
 * @example
 * ```ts
 * import { parseKinesisOptions } from "./KinesisOptions.ts"
 * const o = parseKinesisOptions({ streamName: "events", region: "eu-west-1", initialPosition: "trim_horizon" })
 * // { streamNames: ["events"], region: "eu-west-1", initialPosition: { _tag: "TrimHorizon" }, maxRecordsPerFetch: 10000, … }
 * ```
 * @since 0.1.0
 */
export const parseKinesisOptions = (options: Options): KinesisReadOptions | AnalysisError => {
  const params = lowerCaseOptions(options)
  const streams = (params.get("streamname") ?? "")
    .split(",")
    .map(javaTrim)
    .filter((s) => s !== "")
  // spark-sql-kinesis' `validateStreamOptions`.
  if (streams.length === 0) return invalid("Stream name is a required field")
  if (new Set(streams).size !== streams.length) {
    return invalid(`Option 'streamName' names a stream more than once: ${streams.join(",")}`)
  }
  const regionRaw = firstOf(params, "region", "regionname")
  const region = regionRaw === undefined ? undefined : javaTrim(regionRaw)
  if (region !== undefined && !/^[a-z0-9-]+$/.test(region)) return invalid(`Invalid region '${regionRaw}'`)
  const endpointRaw = firstOf(params, "endpointurl", "endpoint")
  let endpointUrl: string | undefined
  if (endpointRaw !== undefined) {
    const trimmed = javaTrim(endpointRaw)
    let url: URL | undefined
    try {
      url = new URL(trimmed)
    } catch {
      url = undefined
    }
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
      return invalid(
        `Invalid endpointUrl '${endpointRaw}': expected an http or https URL such as https://kinesis.us-east-1.amazonaws.com`
      )
    }
    endpointUrl = trimmed
  }
  const accessKey = firstOf(params, "awsaccesskey", "awsaccesskeyid")
  const secretKey = params.get("awssecretkey")
  const sessionToken = firstOf(params, "sessiontoken", "awssessiontoken")
  if ((accessKey === undefined) !== (secretKey === undefined)) {
    return invalid("Options 'awsAccessKey' and 'awsSecretKey' must be given together")
  }
  const credentials =
    accessKey === undefined || secretKey === undefined
      ? undefined
      : { accessKeyId: accessKey, secretAccessKey: secretKey, ...(sessionToken === undefined ? {} : { sessionToken }) }
  const positionRaw = firstOf(params, "initialposition", "startingposition")
  const initialPosition = positionRaw === undefined ? ({ _tag: "Latest" } as const) : parseInitialPosition(positionRaw)
  if (initialPosition instanceof AnalysisError) return initialPosition
  const maxRecordsPerFetch = positiveInt(
    params,
    "maxRecordsPerFetch",
    "maxrecordsperfetch",
    MAX_GET_RECORDS_LIMIT,
    MAX_GET_RECORDS_LIMIT
  )
  if (maxRecordsPerFetch instanceof AnalysisError) return maxRecordsPerFetch
  const maxFetchRecordsPerShard = positiveInt(
    params,
    "kinesis.executor.maxFetchRecordsPerShard",
    "kinesis.executor.maxfetchrecordspershard",
    100_000
  )
  if (maxFetchRecordsPerShard instanceof AnalysisError) return maxFetchRecordsPerShard
  const intervalRaw = firstOf(params, "shardfetchinterval", "kinesis.client.describeshardinterval")
  let shardFetchIntervalMs = 1000
  if (intervalRaw !== undefined) {
    const ms = timeStringAsMs(intervalRaw)
    if (typeof ms === "string") return invalid(`Invalid value '${intervalRaw}' for option 'shardFetchInterval': ${ms}`)
    if (ms < 0)
      return invalid(`Invalid value '${intervalRaw}' for option 'shardFetchInterval': it must not be negative`)
    shardFetchIntervalMs = ms
  }
  const lossRaw = params.get("failondataloss")
  const loss = lossRaw === undefined ? "true" : javaTrim(lossRaw).toLowerCase()
  if (loss !== "true" && loss !== "false") {
    return invalid(`Invalid value '${lossRaw}' for option 'failOnDataLoss': it must be true or false`)
  }
  return {
    streamNames: streams,
    region,
    endpointUrl,
    credentials,
    initialPosition,
    maxRecordsPerFetch,
    maxFetchRecordsPerShard,
    shardFetchIntervalMs,
    failOnDataLoss: loss === "true"
  }
}

/**
 * The rows of the `kinesis` source (spark-sql-kinesis' `KinesisReader.kinesisSchema`): `data`
 * (binary), `streamName`, `partitionKey`, `sequenceNumber` (strings) and
 * `approximateArrivalTimestamp` (timestamp).
 *
 * @example
 * ```ts
 * import { kinesisSchema } from "./KinesisOptions.ts"
 * kinesisSchema.fields.map((f) => f.name)
 * // ["data", "streamName", "partitionKey", "sequenceNumber", "approximateArrivalTimestamp"]
 * ```
 * @since 0.1.0
 */
export const kinesisSchema: T.StructType = T.struct([
  T.field("data", T.BinaryType),
  T.field("streamName", T.StringType),
  T.field("partitionKey", T.StringType),
  T.field("sequenceNumber", T.StringType),
  T.field("approximateArrivalTimestamp", T.TimestampType)
])

/** spark-sql-kinesis' refusal of a user schema. */
export const userSchemaRefused = (): AnalysisError =>
  invalid("requirement failed: Kinesis source has a fixed schema and cannot be set with a custom one")
