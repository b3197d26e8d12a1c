/**
 * Spark's streaming progress JSON decoded into tributary's `StreamingQueryProgress`, the same
 * type the local engine reports, with Spark's values.
 *
 * Spark Connect returns `lastProgress` / `recentProgress` as the JSON its server writes with
 * Jackson's bean serializer (`StreamingQueryProgress.jsonString`), which differs from
 * `StreamingQueryProgress.json` (what listeners and logs show); both are read:
 * - the totals `numInputRows`, `inputRowsPerSecond`, `processedRowsPerSecond` are not written by
 *   the server (Spark derives them as sums over the sources): missing, they are summed the same way;
 * - a non-finite rate is the string `"NaN"` / `"Infinity"` (Jackson), left out (`progress.json`'s
 *   `safeDoubleToJValue`) or a bare `NaN` token: all read as that number, a missing one as NaN;
 * - source offsets are JSON text (`"{\"logOffset\":0}"`) or parsed JSON: both read as the parsed
 *   value (an offset that is not JSON stays a string, as Spark's `tryParse` keeps it);
 * - an observed-metrics row is `{ values, schema }` or an object: both read as an object of field
 *   name to value (Spark's `Row.json`);
 * - an empty or missing map (`durationMs`, `eventTime`, `customMetrics`, …) reads as `{}`.
 * Unknown fields are ignored.
 *
 * @since 0.4.0
 */
import { Result } from "effect"
import { ConnectorError } from "../core/Errors.ts"
import type {
  SinkProgress,
  SourceProgress,
  StateOperatorProgress,
  StreamingQueryProgress
} from "../structured/contracts/StreamingQueryProgress.ts"

type Json = Readonly<Record<string, unknown>>

/** A field that is there but not of the type Spark writes: the JSON is not a progress report. */
class Malformed {
  readonly path: string
  readonly expected: string
  constructor(path: string, expected: string) {
    this.path = path
    this.expected = expected
  }
}

const fail = (path: string, expected: string): never => {
  throw new Malformed(path, expected)
}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

const objectAt = (o: Json, key: string, path: string): Json => {
  const v = o[key]
  if (v === undefined || v === null) return {}
  return isObject(v) ? v : fail(`${path}.${key}`, "an object")
}

const stringAt = (o: Json, key: string, path: string, fallback?: string): string => {
  const v = o[key]
  if (typeof v === "string") return v
  if ((v === undefined || v === null) && fallback !== undefined) return fallback
  return fail(`${path}.${key}`, "a string")
}

/** Spark writes counts as JSON integers (`JInt`); a big one may come as a string from other writers. */
const integerAt = (o: Json, key: string, path: string, fallback?: number): number => {
  const v = o[key]
  if (typeof v === "number" && Number.isFinite(v)) return v
  if (typeof v === "string" && /^-?[0-9]+$/.test(v)) return Number(v)
  if (v === undefined && fallback !== undefined) return fallback
  return fail(`${path}.${key}`, "a number")
}

/** A rate: missing (Spark's `safeDoubleToJValue` for NaN/∞) is NaN; `"NaN"`/`"Infinity"` are read as such. */
const rateAt = (o: Json, key: string, path: string): number => {
  const v = o[key]
  if (v === undefined || v === null) return Number.NaN
  if (typeof v === "number") return v
  if (typeof v === "string") {
    if (v === "NaN") return Number.NaN
    if (v === "Infinity" || v === "+Infinity") return Number.POSITIVE_INFINITY
    if (v === "-Infinity") return Number.NEGATIVE_INFINITY
    const n = Number(v)
    if (v.trim().length > 0 && !Number.isNaN(n)) return n
  }
  return fail(`${path}.${key}`, "a number")
}

const numberMap = (o: Json, key: string, path: string): Readonly<Record<string, number>> => {
  const m = objectAt(o, key, path)
  const out: Record<string, number> = {}
  for (const k of Object.keys(m)) out[k] = rateAt(m, k, `${path}.${key}`)
  return out
}

const stringMap = (o: Json, key: string, path: string): Readonly<Record<string, string>> => {
  const m = objectAt(o, key, path)
  const out: Record<string, string> = {}
  for (const k of Object.keys(m)) {
    const v = m[k]
    // Source and sink metrics are strings in Spark's JSON; a number from another writer is kept as text.
    if (typeof v === "string") out[k] = v
    else if (typeof v === "number" || typeof v === "boolean") out[k] = String(v)
    else fail(`${path}.${key}.${k}`, "a string")
  }
  return out
}

const arrayAt = (o: Json, key: string, path: string): ReadonlyArray<unknown> => {
  const v = o[key]
  if (v === undefined || v === null) return []
  return Array.isArray(v) ? v : fail(`${path}.${key}`, "an array")
}

const objectsAt = <A>(o: Json, key: string, path: string, each: (j: Json, path: string) => A): ReadonlyArray<A> =>
  arrayAt(o, key, path).map((v, i) => {
    const p = `${path}.${key}[${i}]`
    return isObject(v) ? each(v, p) : fail(p, "an object")
  })

/**
 * A source offset as a JSON value. Spark 4 writes a source's offset JSON as a string
 * (`"{\"logOffset\":0}"`), Spark 3 wrote it parsed (`{"logOffset":0}`); both read as the parsed
 * value, and an offset that is not JSON stays a string (Spark's `tryParse`).
 */
const offsetAt = (o: Json, key: string): unknown => {
  const v = o[key]
  if (v === undefined) return null
  if (typeof v === "string" && (v.startsWith("{") || v.startsWith("["))) {
    try {
      return JSON.parse(v)
    } catch {
      return v
    }
  }
  return v
}

const stateOperator = (j: Json, path: string): StateOperatorProgress => ({
  operatorName: stringAt(j, "operatorName", path, ""),
  numRowsTotal: integerAt(j, "numRowsTotal", path, 0),
  numRowsUpdated: integerAt(j, "numRowsUpdated", path, 0),
  allUpdatesTimeMs: integerAt(j, "allUpdatesTimeMs", path, 0),
  numRowsRemoved: integerAt(j, "numRowsRemoved", path, 0),
  allRemovalsTimeMs: integerAt(j, "allRemovalsTimeMs", path, 0),
  commitTimeMs: integerAt(j, "commitTimeMs", path, 0),
  memoryUsedBytes: integerAt(j, "memoryUsedBytes", path, 0),
  numRowsDroppedByWatermark: integerAt(j, "numRowsDroppedByWatermark", path, 0),
  numShufflePartitions: integerAt(j, "numShufflePartitions", path, 0),
  numStateStoreInstances: integerAt(j, "numStateStoreInstances", path, 0),
  customMetrics: numberMap(j, "customMetrics", path)
})

const source = (j: Json, path: string): SourceProgress => ({
  description: stringAt(j, "description", path, ""),
  startOffset: offsetAt(j, "startOffset"),
  endOffset: offsetAt(j, "endOffset"),
  latestOffset: offsetAt(j, "latestOffset"),
  numInputRows: integerAt(j, "numInputRows", path, 0),
  inputRowsPerSecond: rateAt(j, "inputRowsPerSecond", path),
  processedRowsPerSecond: rateAt(j, "processedRowsPerSecond", path),
  metrics: stringMap(j, "metrics", path)
})

const sink = (j: Json, path: string): SinkProgress => ({
  description: stringAt(j, "description", path, ""),
  // Spark writes -1 for sinks that do not count their rows.
  numOutputRows: integerAt(j, "numOutputRows", path, -1),
  metrics: stringMap(j, "metrics", path)
})

/**
 * Observed metrics (`Dataset.observe`), each a row. Spark Connect's serializer writes a row as
 * its `values` and `schema`; it reads as Spark's `Row.json` does, an object of field name to value.
 */
const observedMetrics = (m: Json): Readonly<Record<string, unknown>> => {
  const out: Record<string, unknown> = {}
  for (const name of Object.keys(m)) {
    const row = m[name]
    const values = isObject(row) ? row.values : undefined
    const schema = isObject(row) ? row.schema : undefined
    const fields = isObject(schema) ? schema.fields : undefined
    if (Array.isArray(values) && Array.isArray(fields) && values.length === fields.length) {
      const o: Record<string, unknown> = {}
      fields.forEach((f, i) => {
        o[isObject(f) && typeof f.name === "string" ? f.name : `_${i + 1}`] = values[i]
      })
      out[name] = o
    } else out[name] = row
  }
  return out
}

/** A total Spark 4 no longer writes: the sum over the sources (Spark's `StreamingQueryProgress.numInputRows` etc.). */
const totalAt = (
  j: Json,
  key: "numInputRows" | "inputRowsPerSecond" | "processedRowsPerSecond",
  sources: ReadonlyArray<SourceProgress>
): number => {
  if (j[key] !== undefined) return key === "numInputRows" ? integerAt(j, key, "$") : rateAt(j, key, "$")
  let sum = 0
  for (const s of sources) sum += s[key]
  return sum
}

const progress = (j: Json): StreamingQueryProgress => {
  const name = j.name
  const sources = objectsAt(j, "sources", "$", source)
  return {
    id: stringAt(j, "id", "$"),
    runId: stringAt(j, "runId", "$"),
    name: typeof name === "string" ? name : name === undefined || name === null ? null : fail("$.name", "a string"),
    timestamp: stringAt(j, "timestamp", "$"),
    batchId: integerAt(j, "batchId", "$"),
    batchDuration: integerAt(j, "batchDuration", "$", 0),
    numInputRows: totalAt(j, "numInputRows", sources),
    inputRowsPerSecond: totalAt(j, "inputRowsPerSecond", sources),
    processedRowsPerSecond: totalAt(j, "processedRowsPerSecond", sources),
    durationMs: numberMap(j, "durationMs", "$"),
    eventTime: stringMap(j, "eventTime", "$"),
    stateOperators: objectsAt(j, "stateOperators", "$", stateOperator),
    sources,
    sink: sink(objectAt(j, "sink", "$"), "$.sink"),
    observedMetrics: observedMetrics(objectAt(j, "observedMetrics", "$"))
  }
}

const malformed = (message: string, cause?: unknown): ConnectorError =>
  new ConnectorError({
    connector: "spark-connect",
    domain: "external",
    retryable: false,
    message: `Spark's streaming progress report could not be read: ${message}`,
    ...(cause === undefined ? {} : { cause })
  })

/** Quotes the bare `NaN` / `Infinity` tokens Jackson writes when non-numeric numbers are allowed. */
const quoteNonNumeric = (json: string): string => json.replace(/([:,[]\s*)(-?Infinity|NaN)(?=\s*[,}\]])/g, '$1"$2"')

/**
 * Decodes one of Spark's progress reports (the JSON of `StreamingQueryProgress.json`).
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * import { decodeProgress } from "./Progress.ts"
 * const p = decodeProgress('{"id":"a","runId":"b","name":null,"timestamp":"2026-01-01T00:00:00.000Z","batchId":0,"numInputRows":3}')
 * Result.isSuccess(p) // true; a missing rate reads as NaN, missing maps as {}
 * ```
 * @since 0.4.0
 */
export const decodeProgress = (json: string): Result.Result<StreamingQueryProgress, ConnectorError> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch (e) {
    try {
      parsed = JSON.parse(quoteNonNumeric(json))
    } catch {
      return Result.fail(malformed(`it is not JSON (${e instanceof Error ? e.message : String(e)})`, e))
    }
  }
  if (!isObject(parsed)) return Result.fail(malformed("it is not a JSON object"))
  try {
    return Result.succeed(progress(parsed))
  } catch (e) {
    if (e instanceof Malformed) return Result.fail(malformed(`${e.path} is not ${e.expected}`))
    throw e
  }
}
