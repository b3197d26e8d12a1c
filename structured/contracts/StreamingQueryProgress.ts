/**
 * Progress and status of streaming queries, with Spark's JSON field names
 * (`StreamingQueryProgress`, `SourceProgress`, `SinkProgress`, `StateOperatorProgress`,
 * `StreamingQueryStatus`). The listener events are in `StreamingQueryListener.ts`.
 *
 * @since 0.1.0
 */

/** One source's part of a progress record (Spark's `SourceProgress`). */
export interface SourceProgress {
  readonly description: string
  readonly startOffset: unknown
  readonly endOffset: unknown
  readonly latestOffset: unknown
  readonly numInputRows: number
  readonly inputRowsPerSecond: number
  readonly processedRowsPerSecond: number
  readonly metrics: Readonly<Record<string, string>>
}

export interface SinkProgress {
  readonly description: string
  readonly numOutputRows: number
  readonly metrics: Readonly<Record<string, string>>
}

export interface StateOperatorProgress {
  readonly operatorName: string
  readonly numRowsTotal: number
  readonly numRowsUpdated: number
  readonly allUpdatesTimeMs: number
  readonly numRowsRemoved: number
  readonly allRemovalsTimeMs: number
  readonly commitTimeMs: number
  readonly memoryUsedBytes: number
  readonly numRowsDroppedByWatermark: number
  readonly numShufflePartitions: number
  readonly numStateStoreInstances: number
  readonly customMetrics: Readonly<Record<string, number>>
}

export interface StreamingQueryProgress {
  readonly id: string
  readonly runId: string
  readonly name: string | null
  /** The trigger's start, ISO 8601 in UTC (`2026-01-01T00:00:00.000Z`). */
  readonly timestamp: string
  readonly batchId: number
  readonly batchDuration: number
  readonly numInputRows: number
  readonly inputRowsPerSecond: number
  readonly processedRowsPerSecond: number
  /** Phases in ms: `latestOffset`, `queryPlanning`, `walCommit`, `addBatch`, `commitOffsets`, `triggerExecution`, … */
  readonly durationMs: Readonly<Record<string, number>>
  /** `watermark` (ISO) and, for batches with event-time data, `max`, `min`, `avg`. */
  readonly eventTime: Readonly<Record<string, string>>
  readonly stateOperators: ReadonlyArray<StateOperatorProgress>
  readonly sources: ReadonlyArray<SourceProgress>
  readonly sink: SinkProgress
  readonly observedMetrics: Readonly<Record<string, unknown>>
}

export interface StreamingQueryStatus {
  /** Spark's messages: "Initializing sources", "Waiting for data to arrive", "Processing new data", "Waiting for next trigger", "Stopped". */
  readonly message: string
  readonly isDataAvailable: boolean
  readonly isTriggerActive: boolean
}

// ---- Spark's JSON forms ------------------------------------------------------------------

/**
 * A JSON value as Spark's progress classes build it with json4s: `undefined` is json4s's
 * `JNothing` (the field is left out), `Decimal` a `JDecimal` (written in plain notation),
 * `Raw` a number already written the way Spark writes it.
 */
type JsonTree =
  | undefined
  | null
  | boolean
  | string
  | { readonly _json: "raw"; readonly text: string }
  | ReadonlyArray<JsonTree>
  | { readonly _json: "object"; readonly fields: ReadonlyArray<readonly [string, JsonTree]> }

const raw = (text: string): JsonTree => ({ _json: "raw", text })
const obj = (fields: ReadonlyArray<readonly [string, JsonTree]>): JsonTree => ({ _json: "object", fields })

/** A long (json4s `JInt`). */
const long = (n: number): JsonTree => raw(Number.isFinite(n) ? String(Math.trunc(n)) : "0")

/**
 * Spark's `SafeJsonSerializer.safeDecimalToJValue`: NaN and infinities are left out; anything
 * else is `BigDecimal(value).setScale(1, HALF_UP)` — rounded from the shortest decimal form of
 * the double (Scala's `BigDecimal(d)` goes through `Double.toString`) and never in E notation
 * (SPARK-53491).
 */
const decimal1 = (x: number): JsonTree => (Number.isFinite(x) ? raw(roundHalfUp1(x)) : undefined)

/** `x` rounded half-up (away from zero) to one fractional digit, in plain notation. */
export const roundHalfUp1 = (x: number): string => {
  const negative = x < 0
  const text = String(Math.abs(x))
  const [mantissa, expText] = text.split("e")
  const [intPart, fracPart = ""] = mantissa.split(".")
  let digits = intPart + fracPart
  let point = intPart.length + (expText === undefined ? 0 : Number(expText))
  if (point <= 0) {
    digits = "0".repeat(1 - point) + digits
    point = 1
  }
  if (digits.length < point + 2) digits = digits.padEnd(point + 2, "0")
  let kept = BigInt(digits.slice(0, point + 1))
  if (digits.charCodeAt(point + 1) >= 53 /* '5' */) kept += 1n
  const keptText = kept.toString().padStart(2, "0")
  const body = `${keptText.slice(0, -1)}.${keptText.slice(-1)}`
  // java.math.BigDecimal has no negative zero
  return negative && kept !== 0n ? `-${body}` : body
}

/** A plain JSON value (offsets, observed metrics): json4s's rendering of what `parse` gives. */
const plain = (v: unknown): JsonTree => {
  if (v === undefined || v === null) return null
  if (typeof v === "number") return Number.isFinite(v) ? raw(String(v)) : undefined
  if (typeof v === "bigint") return raw(v.toString())
  if (typeof v === "boolean" || typeof v === "string") return v
  if (v instanceof Date) return v.toISOString()
  if (Array.isArray(v)) return v.map(plain)
  if (v instanceof Map) return obj([...v.entries()].map(([k, x]) => [String(k), plain(x)] as const))
  return obj(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, plain(x)] as const))
}

/**
 * Spark's `SourceProgress.tryParse`: an offset is written as the JSON it is; a string that is
 * JSON text (as Spark keeps offsets) is parsed first, anything else stays a string.
 */
const offset = (v: unknown): JsonTree => {
  if (typeof v !== "string") return plain(v)
  try {
    return plain(JSON.parse(v))
  } catch {
    return v
  }
}

/** Spark's `safeMapToJValue`: an empty or missing map is left out, keys are sorted. */
const sortedMap = <T>(
  m: Readonly<Record<string, T>> | null | undefined,
  value: (t: T) => JsonTree
): JsonTree => {
  if (m === null || m === undefined) return undefined
  const keys = Object.keys(m).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  if (keys.length === 0) return undefined
  return obj(keys.map((k) => [k, value(m[k])] as const))
}

const stateOperatorTree = (o: StateOperatorProgress): JsonTree =>
  obj([
    ["operatorName", o.operatorName],
    ["numRowsTotal", long(o.numRowsTotal)],
    ["numRowsUpdated", long(o.numRowsUpdated)],
    ["allUpdatesTimeMs", long(o.allUpdatesTimeMs)],
    ["numRowsRemoved", long(o.numRowsRemoved)],
    ["allRemovalsTimeMs", long(o.allRemovalsTimeMs)],
    ["commitTimeMs", long(o.commitTimeMs)],
    ["memoryUsedBytes", long(o.memoryUsedBytes)],
    ["numRowsDroppedByWatermark", long(o.numRowsDroppedByWatermark)],
    ["numShufflePartitions", long(o.numShufflePartitions)],
    ["numStateStoreInstances", long(o.numStateStoreInstances)],
    ["customMetrics", sortedMap(o.customMetrics, long)]
  ])

const sourceTree = (s: SourceProgress): JsonTree =>
  obj([
    ["description", s.description],
    ["startOffset", offset(s.startOffset)],
    ["endOffset", offset(s.endOffset)],
    ["latestOffset", offset(s.latestOffset)],
    ["numInputRows", long(s.numInputRows)],
    ["inputRowsPerSecond", decimal1(s.inputRowsPerSecond)],
    ["processedRowsPerSecond", decimal1(s.processedRowsPerSecond)],
    ["metrics", sortedMap(s.metrics, metricValue)]
  ])

/**
 * A source metric as Spark 4.1 writes it (SPARK-53690): a number in E notation (Java's
 * `Double.toString` of a large double, as `avgOffsetsBehindLatest` of 2.70941269E8) is written
 * in plain notation with one decimal ("270941269.0"); anything else as it is.
 */
const metricValue = (v: string): JsonTree => {
  if (/^-?\d+(\.\d+)?[eE][+-]?\d+$/.test(v)) {
    const x = Number(v)
    if (Number.isFinite(x)) return roundHalfUp1(x)
  }
  return v
}

const sinkTree = (s: SinkProgress): JsonTree =>
  obj([
    ["description", s.description],
    ["numOutputRows", long(s.numOutputRows)],
    ["metrics", sortedMap(s.metrics, (v: string) => v)]
  ])

const progressTree = (p: StreamingQueryProgress): JsonTree =>
  obj([
    ["id", p.id],
    ["runId", p.runId],
    ["name", p.name],
    ["timestamp", p.timestamp],
    ["batchId", long(p.batchId)],
    ["batchDuration", long(p.batchDuration)],
    ["numInputRows", long(p.numInputRows)],
    ["inputRowsPerSecond", decimal1(p.inputRowsPerSecond)],
    ["processedRowsPerSecond", decimal1(p.processedRowsPerSecond)],
    ["durationMs", sortedMap(p.durationMs, long)],
    ["eventTime", sortedMap(p.eventTime, (v: string) => v)],
    ["stateOperators", (p.stateOperators ?? []).map(stateOperatorTree)],
    ["sources", (p.sources ?? []).map(sourceTree)],
    ["sink", sinkTree(p.sink)],
    ["observedMetrics", sortedMap(p.observedMetrics, plain)]
  ])

const isObj = (t: JsonTree): t is { readonly _json: "object"; readonly fields: ReadonlyArray<readonly [string, JsonTree]> } =>
  typeof t === "object" && t !== null && !Array.isArray(t) && (t as { _json: string })._json === "object"

/** json4s `compact`: no spaces; `JNothing` fields and array elements are dropped. */
const compact = (t: JsonTree): string => {
  if (t === null || t === undefined) return "null"
  if (typeof t === "boolean") return String(t)
  if (typeof t === "string") return JSON.stringify(t)
  if (Array.isArray(t)) return `[${t.filter((x) => x !== undefined).map(compact).join(",")}]`
  if (isObj(t)) {
    return `{${t.fields
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}:${compact(v)}`)
      .join(",")}}`
  }
  return (t as { text: string }).text
}

/**
 * json4s `pretty` (Jackson's `DefaultPrettyPrinter`): `"key" : value`, objects one field a
 * line indented by two spaces per object level, arrays inline as `[ a, b ]` (they add no
 * level), empty ones as `{ }` and `[ ]`.
 */
const pretty = (t: JsonTree, level: number): string => {
  if (Array.isArray(t)) {
    const items = t.filter((x) => x !== undefined)
    return items.length === 0 ? "[ ]" : `[ ${items.map((x) => pretty(x, level)).join(", ")} ]`
  }
  if (isObj(t)) {
    const fields = t.fields.filter(([, v]) => v !== undefined)
    if (fields.length === 0) return "{ }"
    const inner = "  ".repeat(level + 1)
    return `{\n${fields.map(([k, v]) => `${inner}${JSON.stringify(k)} : ${pretty(v, level + 1)}`).join(",\n")}\n${"  ".repeat(level)}}`
  }
  return compact(t)
}

/**
 * Spark's `StreamingQueryProgress.prettyJson` (with `pretty = true`, the default, also its
 * `toString`) or `.json` (with `pretty = false`): Spark's field order, `durationMs`,
 * `eventTime`, metrics and observed metrics with sorted keys and left out when empty, rates
 * rounded half-up to one decimal and left out when NaN or infinite, offsets as JSON.
 *
 * @example
 * ```ts
 * const last = yield* query.lastProgress()
 * if (last !== null) yield* Console.log(progressJson(last))
 * ```
 */
export const progressJson = (p: StreamingQueryProgress, pretty_ = true): string =>
  pretty_ ? pretty(progressTree(p), 0) : compact(progressTree(p))

/** Spark's `SourceProgress.prettyJson` / `.json`. */
export const sourceProgressJson = (s: SourceProgress, pretty_ = true): string =>
  pretty_ ? pretty(sourceTree(s), 0) : compact(sourceTree(s))

/** Spark's `SinkProgress.prettyJson` / `.json`. */
export const sinkProgressJson = (s: SinkProgress, pretty_ = true): string =>
  pretty_ ? pretty(sinkTree(s), 0) : compact(sinkTree(s))

/** Spark's `StateOperatorProgress.prettyJson` / `.json`. */
export const stateOperatorProgressJson = (o: StateOperatorProgress, pretty_ = true): string =>
  pretty_ ? pretty(stateOperatorTree(o), 0) : compact(stateOperatorTree(o))

/**
 * Spark's `StreamingQueryStatus.prettyJson` (the default, also its `toString`) or `.json`.
 *
 * @example
 * ```ts
 * statusJson({ message: "active", isDataAvailable: true, isTriggerActive: false })
 * // {\n  "message" : "active",\n  "isDataAvailable" : true,\n  "isTriggerActive" : false\n}
 * ```
 */
export const statusJson = (s: StreamingQueryStatus, pretty_ = true): string => {
  const tree = obj([
    ["message", s.message],
    ["isDataAvailable", s.isDataAvailable],
    ["isTriggerActive", s.isTriggerActive]
  ])
  return pretty_ ? pretty(tree, 0) : compact(tree)
}

/**
 * Reads a progress back from its JSON (`progressJson`, either form), as Spark's
 * `StreamingQueryProgress.fromJson`: fields Spark leaves out come back as Spark's defaults —
 * rates as NaN, maps as empty, `name` as `null`, `numOutputRows` as -1.
 */
export const progressFromJson = (json: string): StreamingQueryProgress => {
  const o = JSON.parse(json) as Record<string, unknown>
  const num = (v: unknown, dflt: number) => (typeof v === "number" ? v : dflt)
  const rec = <T>(v: unknown): Readonly<Record<string, T>> =>
    typeof v === "object" && v !== null ? (v as Record<string, T>) : {}
  const sources = (Array.isArray(o.sources) ? o.sources : []).map((x: Record<string, unknown>): SourceProgress => ({
    description: String(x.description),
    startOffset: x.startOffset ?? null,
    endOffset: x.endOffset ?? null,
    latestOffset: x.latestOffset ?? null,
    numInputRows: num(x.numInputRows, 0),
    inputRowsPerSecond: num(x.inputRowsPerSecond, Number.NaN),
    processedRowsPerSecond: num(x.processedRowsPerSecond, Number.NaN),
    metrics: rec<string>(x.metrics)
  }))
  const stateOperators = (Array.isArray(o.stateOperators) ? o.stateOperators : []).map(
    (x: Record<string, unknown>): StateOperatorProgress => ({
      operatorName: String(x.operatorName),
      numRowsTotal: num(x.numRowsTotal, 0),
      numRowsUpdated: num(x.numRowsUpdated, 0),
      allUpdatesTimeMs: num(x.allUpdatesTimeMs, 0),
      numRowsRemoved: num(x.numRowsRemoved, 0),
      allRemovalsTimeMs: num(x.allRemovalsTimeMs, 0),
      commitTimeMs: num(x.commitTimeMs, 0),
      memoryUsedBytes: num(x.memoryUsedBytes, 0),
      numRowsDroppedByWatermark: num(x.numRowsDroppedByWatermark, 0),
      numShufflePartitions: num(x.numShufflePartitions, 0),
      numStateStoreInstances: num(x.numStateStoreInstances, 0),
      customMetrics: rec<number>(x.customMetrics)
    })
  )
  const sink = rec<unknown>(o.sink)
  return {
    id: String(o.id),
    runId: String(o.runId),
    name: typeof o.name === "string" ? o.name : null,
    timestamp: String(o.timestamp),
    batchId: num(o.batchId, 0),
    batchDuration: num(o.batchDuration, 0),
    numInputRows: num(o.numInputRows, 0),
    inputRowsPerSecond: num(o.inputRowsPerSecond, Number.NaN),
    processedRowsPerSecond: num(o.processedRowsPerSecond, Number.NaN),
    durationMs: rec<number>(o.durationMs),
    eventTime: rec<string>(o.eventTime),
    stateOperators,
    sources,
    sink: { description: String(sink.description), numOutputRows: num(sink.numOutputRows, -1), metrics: rec<string>(sink.metrics) },
    observedMetrics: rec<unknown>(o.observedMetrics)
  }
}

/**
 * Gives a progress or a status Spark's `toString` (its `prettyJson`) as a non-enumerable method:
 * the object stays a plain record for equality checks, spreading and `structuredClone`.
 *
 * @example
 * ```ts
 * const last = yield* query.lastProgress()
 * console.log(String(last)) // the same text as progressJson(last)
 * ```
 */
export const withJsonToString = <A extends StreamingQueryProgress | StreamingQueryStatus>(a: A): A => {
  const text =
    "message" in a
      ? function (this: StreamingQueryStatus) {
          return statusJson(this)
        }
      : function (this: StreamingQueryProgress) {
          return progressJson(this)
        }
  Object.defineProperty(a, "toString", { value: text, enumerable: false, writable: true, configurable: true })
  return a
}
