/**
 * `transformWithState` over one micro-batch (Spark's `TransformWithStateExec`,
 * `StatefulProcessorHandleImpl`, `ValueStateImpl` / `ListStateImpl` / `MapStateImpl` and their
 * TTL variants, `TimerStateImpl`).
 *
 * Per batch, in Spark's order:
 *
 * 1. in `TimeMode.EventTime`, input rows at or below the late-events watermark are dropped
 *    (`numRowsDroppedByWatermark`);
 * 2. the stores are opened (the operator's properties first, which a restart may not change in
 *    output mode, time mode or a variable's kind; one per state variable, named by the variable;
 *    the timers' store) and the batch's keys loaded; the processor's `init` runs with a fresh
 *    handle;
 * 3. batch 0 only: the initial state, one `handleInitialState` per key (a key twice fails with
 *    `STATEFUL_PROCESSOR_CANNOT_REINITIALIZE_STATE_ON_KEY`);
 * 4. `handleInputRows` once per key with the key's rows (first-seen key order);
 * 5. expired timers, ascending by time: processing-time timers at or below the batch timestamp,
 *    event-time timers at or below the eviction watermark; each calls `handleExpiredTimer` and is
 *    then deleted (`numExpiredTimers`);
 * 6. TTL cleanup: every value whose expiry is at or below the batch timestamp is removed
 *    (`numValuesRemovedDueToTTLExpiry`; Spark's `isExpired` is `batchTimestampMs >= expiry`),
 *    in every batch, with or without data;
 * 7. commit, `close()`, progress; in `TimeMode.ProcessingTime` the operator asks the engine for
 *    a batch at its next timer or TTL expiry (`StatefulContext.requestBatchAt`).
 *
 * Metrics follow Spark's: `numRowsUpdated` / `numRowsRemoved` count the write and removal calls
 * on state variables (and TTL removals), `numRowsTotal` counts a map's rows per user key and
 * leaves out the timers and the properties (Spark's internal column families). An exception the
 * processor throws fails the batch with `TRANSFORM_WITH_STATE_USER_FUNCTION_ERROR` naming the
 * function.
 *
 * The processor's `init` also runs when the query starts, with a handle that only records the
 * state variables it creates (Spark's `DriverStatefulProcessorHandleImpl`): that is how the
 * engine knows the stores, and checks their schemas, before the first batch.
 *
 * Values are stored with the Effect Schema's JSON codec, by field name, so a state schema may
 * gain optional fields across a restart (Spark's Avro schema evolution); each entry carries the
 * variable's kind, so a variable whose kind changed fails with
 * `STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE` when it is read.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import * as T from "../../../core/DataType.ts"
import { StateStoreError } from "../../../core/Errors.ts"
import type { AttributeReference } from "../../../core/Expression.ts"
import { type InternalRow, toExternal, toInternal } from "../../../core/Row.ts"
import { structTypeOf } from "../../../core/RowSchema.ts"
import {
  type ExpiredTimerInfo,
  type ListState,
  type MapState,
  StatefulProcessor,
  type StatefulProcessorHandle,
  type StatefulProcessorLike,
  type TimeMode,
  type TimerValues,
  type TTLConfig,
  type ValueState
} from "../../contracts/StatefulProcessor.ts"
import type * as P from "../SparkPlan.ts"
import { timed } from "./OperatorState.ts"
import type { OperatorStateSchema, OperatorStateStore, StatefulContext } from "./StatefulContext.ts"
import { atOrBelow, eventTimeOf, findEventTimeColumn } from "./WatermarkSupport.ts"
import { operatorWatermarks } from "./WatermarkPropagator.ts"

/**
 * Spark's `shortName` of the operator, reported as `stateOperators[].operatorName`.
 *
 * @since 0.1.0
 */
export const operatorName = "transformWithStateExec"

/** The timers' store (Spark's `$procTimers_keyToTimestamp` / `$eventTimers_keyToTimestamp`). */
const timerStoreName = (timeMode: TimeMode): string =>
  timeMode === "EventTime" ? "eventTimers-keyToTimestamp" : "procTimers-keyToTimestamp"

type Kind = "value" | "list" | "map"

/** A state variable as `init` declared it. */
interface VarDecl {
  readonly name: string
  readonly kind: Kind
  readonly schema: Schema.Top
  readonly userKeySchema: Schema.Top | undefined
  /** The TTL in ms; `undefined` without TTL. */
  readonly ttlMs: number | undefined
}

/** What the start-time `init` found: the variables, or the misuse that stopped it. */
interface Discovery {
  readonly vars: ReadonlyArray<VarDecl>
  readonly error: StateStoreError | undefined
}

/** A misuse of the handle or of a state variable; the batch fails with `error`. */
class Misuse extends Error {
  readonly error: StateStoreError
  constructor(error: StateStoreError) {
    super(error.message)
    this.error = error
  }
}

/** A stored entry that this operator cannot read. */
class Corrupt extends Error {}

const misuse = (errorClass: string, message: string): Misuse =>
  new Misuse(new StateStoreError({ reason: "InvalidUsage", message: `[${errorClass}] ${message}` }))

/** Spark's `TimeMode.toString`. */
const timeModeString = (m: TimeMode): string => (m === "None" ? "NoTime" : m)

type Phase = "PRE_INIT" | "CREATED" | "INITIALIZED" | "DATA_PROCESSED" | "TIMER_PROCESSED" | "CLOSED"
const PHASE_ORDER: Record<Phase, number> = {
  PRE_INIT: 0,
  CREATED: 0,
  INITIALIZED: 1,
  DATA_PROCESSED: 2,
  TIMER_PROCESSED: 3,
  CLOSED: 4
}

const VALID_NAME = /^[A-Za-z0-9][A-Za-z0-9_]*$/

/** A state variable's name names its store (Spark's column family name rules). */
const checkName = (name: string): void => {
  if (typeof name !== "string" || !VALID_NAME.test(name) || name === "default") {
    throw misuse(
      "STATE_STORE_CANNOT_CREATE_COLUMN_FAMILY_WITH_RESERVED_CHARS",
      `Failed to create column family with unsupported name=${String(name)}: a state variable's store is named by it, so use letters, digits and '_', starting with a letter or digit (not 'default').`
    )
  }
}

/** The checks Spark's handles make when a state variable is created. */
const checkDeclaration = (
  phase: Phase,
  required: Phase,
  operation: string,
  name: string,
  schemas: ReadonlyArray<Schema.Top>,
  ttl: TTLConfig | undefined,
  timeMode: TimeMode,
  seen: ReadonlySet<string>
): number | undefined => {
  if (phase !== required) {
    throw misuse(
      "STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_HANDLE_STATE",
      `Failed to perform stateful processor operation=${operation} with invalid handle state=${phase}. State variables can only be created in init().`
    )
  }
  checkName(name)
  if (seen.has(name)) {
    throw misuse(
      "STATEFUL_PROCESSOR_DUPLICATE_STATE_VARIABLE_DEFINED",
      `State variable with name ${name} has already been defined in the StatefulProcessor.`
    )
  }
  for (const s of schemas) {
    if (s === undefined || structTypeOf(s) === undefined) {
      throw misuse(
        "STATE_STORE_UNSUPPORTED_OPERATION",
        `The schema of state variable ${name} is missing or has a part with no Spark type.`
      )
    }
  }
  // Spark's getXState: a zero duration (TTLConfig.NONE) means no TTL.
  if (ttl === undefined || ttl.ttlDurationMs === 0) return undefined
  if (timeMode !== "ProcessingTime") {
    throw misuse(
      "STATEFUL_PROCESSOR_INCORRECT_TIME_MODE_TO_ASSIGN_TTL",
      `Cannot use TTL for state=${name} in timeMode=${timeModeString(timeMode)}, use TimeMode.ProcessingTime() instead.`
    )
  }
  if (!(ttl.ttlDurationMs > 0)) {
    throw misuse(
      "STATEFUL_PROCESSOR_TTL_DURATION_MUST_BE_POSITIVE",
      `TTL duration must be greater than zero for State store operation=update on state=${name}.`
    )
  }
  return ttl.ttlDurationMs
}

const invalidHandleVar = (name: string, operation: string): never => {
  throw misuse(
    "STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_HANDLE_STATE",
    `Failed to perform stateful processor operation=${name}.${operation} with invalid handle state=PRE_INIT.`
  )
}

const noTimersAtStart = (operation: string, timeMode: TimeMode): never => {
  if (timeMode === "None") {
    throw misuse(
      "STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_TIME_MODE",
      `Failed to perform stateful processor operation=${operation} with invalid timeMode=NoTime`
    )
  }
  throw misuse(
    "STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_HANDLE_STATE",
    `Failed to perform stateful processor operation=${operation} with invalid handle state=PRE_INIT.`
  )
}

/** Spark's `DriverStatefulProcessorHandleImpl`: records the variables `init` creates. */
const discoveryHandle = (timeMode: TimeMode, vars: Array<VarDecl>): StatefulProcessorHandle => {
  const seen = new Set<string>()
  const declare = (decl: Omit<VarDecl, "ttlMs">, ttl: TTLConfig | undefined, operation: string) => {
    const schemas = decl.userKeySchema === undefined ? [decl.schema] : [decl.userKeySchema, decl.schema]
    const ttlMs = checkDeclaration("PRE_INIT", "PRE_INIT", operation, decl.name, schemas, ttl, timeMode, seen)
    seen.add(decl.name)
    vars.push({ ...decl, ttlMs })
  }
  const handle: StatefulProcessorHandle = {
    getValueState: (name, schema, ttl) => {
      declare({ name, kind: "value", schema, userKeySchema: undefined }, ttl, "get_value_state")
      return {
        exists: () => invalidHandleVar(name, "exists"),
        get: () => invalidHandleVar(name, "get"),
        update: () => invalidHandleVar(name, "update"),
        clear: () => invalidHandleVar(name, "clear")
      }
    },
    getListState: (name, schema, ttl) => {
      declare({ name, kind: "list", schema, userKeySchema: undefined }, ttl, "get_list_state")
      return {
        exists: () => invalidHandleVar(name, "exists"),
        get: () => invalidHandleVar(name, "get"),
        put: () => invalidHandleVar(name, "put"),
        appendValue: () => invalidHandleVar(name, "appendValue"),
        appendList: () => invalidHandleVar(name, "appendList"),
        clear: () => invalidHandleVar(name, "clear")
      }
    },
    getMapState: (name, keySchema, valueSchema, ttl) => {
      declare({ name, kind: "map", schema: valueSchema, userKeySchema: keySchema }, ttl, "get_map_state")
      return {
        exists: () => invalidHandleVar(name, "exists"),
        getValue: () => invalidHandleVar(name, "getValue"),
        containsKey: () => invalidHandleVar(name, "containsKey"),
        updateValue: () => invalidHandleVar(name, "updateValue"),
        iterator: () => invalidHandleVar(name, "iterator"),
        keys: () => invalidHandleVar(name, "keys"),
        values: () => invalidHandleVar(name, "values"),
        removeKey: () => invalidHandleVar(name, "removeKey"),
        clear: () => invalidHandleVar(name, "clear")
      }
    },
    deleteIfExists: (name) => {
      checkName(name)
    },
    registerTimer: () => noTimersAtStart("register_timer", timeMode),
    deleteTimer: () => noTimersAtStart("delete_timer", timeMode),
    listTimers: () => noTimersAtStart("list_timers", timeMode)
  }
  return handle
}

type AnyProcessor = StatefulProcessorLike<any, any, any, any>

const setHandle = (processor: AnyProcessor, handle: StatefulProcessorHandle | undefined): void => {
  if (processor instanceof StatefulProcessor) processor.setHandle(handle)
}

const discoveries = new WeakMap<object, Map<TimeMode, Discovery>>()

/** Runs the processor's `init` with a recording handle, once per processor and time mode. */
const discover = (p: P.TransformWithStateExec): Discovery => {
  let byMode = discoveries.get(p.processor)
  if (byMode === undefined) {
    byMode = new Map()
    discoveries.set(p.processor, byMode)
  }
  const known = byMode.get(p.timeMode)
  if (known !== undefined) return known
  const processor = p.processor as AnyProcessor
  const vars: Array<VarDecl> = []
  let error: StateStoreError | undefined
  const handle = discoveryHandle(p.timeMode, vars)
  try {
    setHandle(processor, handle)
    processor.init(handle, p.timeMode)
    processor.close?.()
  } catch (e) {
    // The user's init threw: the first batch fails with it (Spark wraps it the same way) rather
    // than the query's start, which cannot fail with a typed error here.
    error =
      e instanceof Misuse
        ? e.error
        : new StateStoreError({
            reason: "InvalidUsage",
            message: `[TRANSFORM_WITH_STATE_USER_FUNCTION_ERROR] An error occurred in the user-defined function [init] of the StatefulProcessor. Reason: ${schemaMessage(e)}`,
            cause: e
          })
  } finally {
    setHandle(processor, undefined)
  }
  const found: Discovery = { vars, error }
  byMode.set(p.timeMode, found)
  return found
}

const keyStruct = (p: P.TransformWithStateExec): T.StructType =>
  structTypeOf(p.keySchema as Schema.Top) ?? T.struct([T.field("value", T.NullType, true)])

const storeSchema = (p: P.TransformWithStateExec, v: VarDecl): OperatorStateSchema => {
  const key = keyStruct(p)
  const value = structTypeOf(v.schema) ?? T.struct([])
  if (v.kind !== "map") return { keySchema: key, valueSchema: value, valueSchemaEvolution: true }
  const userKey = structTypeOf(v.userKeySchema as Schema.Top) ?? T.struct([])
  return {
    keySchema: T.struct([T.field("key", key, false), T.field("userKey", userKey, false)]),
    valueSchema: value,
    valueSchemaEvolution: true
  }
}

const timerSchema = (p: P.TransformWithStateExec): OperatorStateSchema => ({
  keySchema: T.struct([T.field("key", keyStruct(p), false), T.field("expiryTimestampMs", T.LongType, false)]),
  valueSchema: T.struct([])
})

/**
 * The store of the operator's properties (Spark's `TransformWithStateOperatorProperties` in its
 * operator metadata): time mode, output mode and the kind of each state variable, checked when a
 * run starts. Its name cannot be a state variable's (those have no '-').
 */
const propertiesStoreName = "tws-operatorProperties"
const PROPERTIES_KEY = "properties"

const propertiesSchema: OperatorStateSchema = {
  keySchema: T.struct([T.field("key", T.StringType, false)]),
  valueSchema: T.struct([])
}

/** Spark's `TransformWithStateOperatorProperties`. */
interface OperatorProperties {
  readonly timeMode: string
  readonly outputMode: string
  readonly stateVariables: ReadonlyArray<{ readonly stateName: string; readonly stateVariableType: string }>
}

const KIND_TYPE: Record<Kind, string> = { value: "ValueState", list: "ListState", map: "MapState" }

const propertiesOf = (p: P.TransformWithStateExec, vars: ReadonlyArray<VarDecl>): OperatorProperties => ({
  timeMode: timeModeString(p.timeMode),
  outputMode: p.outputMode === "append" ? "Append" : "Update",
  stateVariables: vars.map((v) => ({ stateName: v.name, stateVariableType: KIND_TYPE[v.kind] }))
})

/**
 * Spark's restart checks of `TransformWithStateExec.validateNewMetadata`: the output mode and time
 * mode may not change (`STATE_STORE_INVALID_CONFIG_AFTER_RESTART`), nor the kind of a state
 * variable kept across the restart (`STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE`); variables may be
 * added or dropped.
 */
const checkProperties = (old: unknown, next: OperatorProperties): void => {
  if (old === null || typeof old !== "object") throw new Corrupt("the operator properties are not an object")
  const o = old as Partial<OperatorProperties>
  for (const name of ["outputMode", "timeMode"] as const) {
    if (o[name] !== undefined && o[name] !== next[name]) {
      throw misuse(
        "STATE_STORE_INVALID_CONFIG_AFTER_RESTART",
        `Cannot change ${name} from ${o[name]} to ${next[name]} between restarts. Please set ${name} to ${o[name]}, or restart with a new checkpoint directory.`
      )
    }
  }
  for (const v of next.stateVariables) {
    const before = (o.stateVariables ?? []).find((x) => x.stateName === v.stateName)
    if (before !== undefined && before.stateVariableType !== v.stateVariableType) {
      throw misuse(
        "STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE",
        `Cannot change ${v.stateName} to ${v.stateVariableType} between query restarts. Please set ${v.stateName} to ${before.stateVariableType}, or restart with a new checkpoint directory.`
      )
    }
  }
}

/**
 * The stores of the operator: its properties' store, one per state variable its `init` creates
 * (named by the variable), and the timers' store unless `TimeMode.None`. Runs the processor's
 * `init` (once).
 *
 * @since 0.1.0
 */
export const transformWithStateStores = (
  p: P.TransformWithStateExec
): ReadonlyArray<{ readonly storeName: string; readonly schema: OperatorStateSchema }> => {
  const d = discover(p)
  const stores = [
    { storeName: propertiesStoreName, schema: propertiesSchema },
    ...d.vars.map((v) => ({ storeName: v.name, schema: storeSchema(p, v) }))
  ]
  return p.timeMode === "None" ? stores : [...stores, { storeName: timerStoreName(p.timeMode), schema: timerSchema(p) }]
}

// ---------------------------------------------------------------------------------------------
// Codecs
// ---------------------------------------------------------------------------------------------

interface Codec {
  readonly encode: (value: unknown) => unknown
  readonly decode: (json: unknown) => unknown
}

const codecs = new WeakMap<Schema.Top, Codec>()

/** The schema's JSON codec (Effect's `toCodecJson`): by field name, dates as ISO strings. */
const codecOf = (schema: Schema.Top): Codec => {
  let c = codecs.get(schema)
  if (c === undefined) {
    const json = Schema.toCodecJson(schema as Schema.Codec<unknown, unknown>)
    c = {
      encode: Schema.encodeSync(json as Schema.Codec<unknown, unknown>) as (v: unknown) => unknown,
      decode: Schema.decodeUnknownSync(json as Schema.Codec<unknown, unknown>) as (j: unknown) => unknown
    }
    codecs.set(schema, c)
  }
  return c
}

const schemaMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e))

// ---------------------------------------------------------------------------------------------
// The runtime handle
// ---------------------------------------------------------------------------------------------

/** Everything the handle and the state variables share for one batch. */
interface Runtime {
  phase: Phase
  /** The state key (the key's JSON text) of the key being processed, if any. */
  currentKey: string | undefined
  currentKeyJson: unknown
  readonly batchTimestampMs: number
  readonly timeMode: TimeMode
  readonly stores: ReadonlyMap<string, OperatorStateStore>
  readonly timers: OperatorStateStore | undefined
  readonly declared: ReadonlyMap<string, VarDecl>
  readonly created: Set<string>
  readonly counters: Record<string, number>
  /** The earliest TTL expiry written in this batch. */
  minWrittenExpiry: number
  /** The earliest timer registered in this batch. */
  minRegisteredTimer: number
  /**
   * Spark's `numUpdatedStateRows` / `numRemovedStateRows`: one per write or removal call on a
   * state variable (a map's `clear` one per user key, TTL expiry one per value), which become the
   * operator's `numRowsUpdated` / `numRowsRemoved`.
   */
  updatedRows: number
  removedRows: number
  /** Whether this is the operator's first batch in this run (`deleteIfExists` counts then only). */
  readonly firstBatchOfRun: boolean
  /** Per map variable: how many entries beyond one per grouping key this batch added (or removed). */
  readonly mapExtraDelta: Map<string, number>
}

/**
 * A map entry holds a grouping key's whole map; Spark's map state keeps one state row per user
 * key, and its `numRowsTotal` counts them. The rows beyond one per grouping key are tracked here
 * per operator and map variable (read once per run with a scan, then kept up to date by each
 * batch's changes), and added to `numRowsTotal`.
 */
const mapExtraRows = new WeakMap<P.TransformWithStateExec, Map<string, number>>()

const extraOf = (length: number): number => (length > 0 ? length - 1 : 0)

const noteMapSize = (rt: Runtime, name: string, before: number, after: number): void => {
  const d = extraOf(after) - extraOf(before)
  if (d !== 0) rt.mapExtraDelta.set(name, (rt.mapExtraDelta.get(name) ?? 0) + d)
}

const noteExpiry = (rt: Runtime, expiry: number | null): void => {
  if (expiry !== null && expiry < rt.minWrittenExpiry) rt.minWrittenExpiry = expiry
}

/**
 * Per operator (its plan node, the same object for every batch of a run): lower bounds of the
 * earliest TTL expiry and the earliest timer in its stores after the last batch. A batch whose
 * timestamp (or watermark) is below them skips scanning those stores: the scans, which read the
 * whole store, run only when something may be due (Spark reaches the same through its
 * timestamp-ordered secondary indexes). A restart starts without bounds and scans once.
 */
const bounds = new WeakMap<P.TransformWithStateExec, { readonly ttl: number; readonly timers: number }>()

const implicitKey = (rt: Runtime, name: string): string => {
  if (rt.currentKey === undefined) {
    throw misuse("INTERNAL_ERROR_TWS", `Implicit key not found in state store for stateName=${name}`)
  }
  return rt.currentKey
}

const bump = (rt: Runtime, metric: string, n = 1): void => {
  rt.counters[metric] = (rt.counters[metric] ?? 0) + n
}

const nullValue = (name: string): Misuse =>
  misuse("ILLEGAL_STATE_STORE_VALUE.NULL_VALUE", `Cannot write null values to State Store for StateName ${name}.`)

const emptyList = (name: string): Misuse =>
  misuse(
    "ILLEGAL_STATE_STORE_VALUE.EMPTY_LIST_VALUE",
    `Cannot write empty list values to State Store for StateName ${name}.`
  )

const expired = (expiry: unknown, now: number): boolean => typeof expiry === "number" && expiry <= now

/** The tag of an entry's kind; a different one means the variable changed kind across a restart. */
const TAG: Record<Kind, string> = { value: "v", list: "l", map: "m" }
const KIND_NAME: Record<string, string> = { v: "ValueState", l: "ListState", m: "MapState" }

const entryOf = (store: OperatorStateStore, key: string, decl: VarDecl): ReadonlyArray<unknown> | undefined => {
  const e = store.get(key)
  if (e === undefined) return undefined
  if (!Array.isArray(e) || typeof e[0] !== "string")
    throw new Corrupt(`an entry of state variable ${decl.name} is not one`)
  if (e[0] !== TAG[decl.kind]) {
    throw misuse(
      "STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE",
      `Cannot change ${decl.name} to ${KIND_NAME[TAG[decl.kind]]}: it holds a ${KIND_NAME[e[0]] ?? e[0]}. Restore the previous kind of the variable, or start from a new checkpoint.`
    )
  }
  return e
}

const encodeWith = (codec: Codec, value: unknown, name: string): unknown => {
  try {
    return codec.encode(value)
  } catch (e) {
    throw misuse(
      "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE",
      `The value written to state variable ${name} does not match its schema: ${schemaMessage(e)}`
    )
  }
}

const decodeWith = (codec: Codec, json: unknown, name: string): unknown => {
  try {
    return codec.decode(json)
  } catch (e) {
    throw new Corrupt(`a value of state variable ${name} does not decode with its schema: ${schemaMessage(e)}`)
  }
}

const makeValueState = (rt: Runtime, decl: VarDecl, store: OperatorStateStore): ValueState<any> => {
  const codec = codecOf(decl.schema)
  const read = (): ReadonlyArray<unknown> | undefined => {
    const e = entryOf(store, implicitKey(rt, decl.name), decl)
    return e === undefined || expired(e[2], rt.batchTimestampMs) ? undefined : e
  }
  return {
    exists: () => read() !== undefined,
    get: () => {
      const e = read()
      return e === undefined ? undefined : decodeWith(codec, e[1], decl.name)
    },
    update: (value) => {
      const key = implicitKey(rt, decl.name)
      if (value === null || value === undefined) throw nullValue(decl.name)
      const expiry = decl.ttlMs === undefined ? null : rt.batchTimestampMs + decl.ttlMs
      noteExpiry(rt, expiry)
      store.put(key, [TAG.value, encodeWith(codec, value, decl.name), expiry])
      rt.updatedRows++
    },
    clear: () => {
      store.remove(implicitKey(rt, decl.name))
      rt.removedRows++
    }
  }
}

const makeListState = (rt: Runtime, decl: VarDecl, store: OperatorStateStore): ListState<any> => {
  const codec = codecOf(decl.schema)
  const elements = (key: string): Array<ReadonlyArray<unknown>> => {
    const e = entryOf(store, key, decl)
    if (e === undefined) return []
    if (!Array.isArray(e[1])) throw new Corrupt(`a list of state variable ${decl.name} is not a list`)
    return e[1] as Array<ReadonlyArray<unknown>>
  }
  const fresh = (values: ReadonlyArray<unknown>): Array<ReadonlyArray<unknown>> => {
    const expiry = decl.ttlMs === undefined ? null : rt.batchTimestampMs + decl.ttlMs
    noteExpiry(rt, expiry)
    return values.map((v) => {
      if (v === null || v === undefined) throw nullValue(decl.name)
      return [encodeWith(codec, v, decl.name), expiry]
    })
  }
  const write = (key: string, list: ReadonlyArray<ReadonlyArray<unknown>>) => {
    if (list.length === 0) store.remove(key)
    else store.put(key, [TAG.list, list])
  }
  const live = () => elements(implicitKey(rt, decl.name)).filter((x) => !expired(x[1], rt.batchTimestampMs))
  return {
    exists: () => live().length > 0,
    get: () => live().map((x) => decodeWith(codec, x[0], decl.name)),
    put: (values) => {
      const key = implicitKey(rt, decl.name)
      if (values === null || values === undefined) throw nullValue(decl.name)
      if (values.length === 0) throw emptyList(decl.name)
      write(key, fresh(values))
      rt.updatedRows++
    },
    appendValue: (value) => {
      const key = implicitKey(rt, decl.name)
      if (value === null || value === undefined) throw nullValue(decl.name)
      write(key, [...elements(key), ...fresh([value])])
      rt.updatedRows++
    },
    appendList: (values) => {
      const key = implicitKey(rt, decl.name)
      if (values === null || values === undefined) throw nullValue(decl.name)
      if (values.length === 0) throw emptyList(decl.name)
      write(key, [...elements(key), ...fresh(values)])
      rt.updatedRows++
    },
    clear: () => {
      store.remove(implicitKey(rt, decl.name))
      rt.removedRows++
    }
  }
}

const makeMapState = (rt: Runtime, decl: VarDecl, store: OperatorStateStore): MapState<any, any> => {
  const valueCodec = codecOf(decl.schema)
  const keyCodec = codecOf(decl.userKeySchema as Schema.Top)
  const entries = (key: string): Array<ReadonlyArray<unknown>> => {
    const e = entryOf(store, key, decl)
    if (e === undefined) return []
    if (!Array.isArray(e[1])) throw new Corrupt(`a map of state variable ${decl.name} is not a list of entries`)
    return e[1] as Array<ReadonlyArray<unknown>>
  }
  const userKeyText = (userKey: unknown): string => {
    if (userKey === null || userKey === undefined) throw nullValue(decl.name)
    return JSON.stringify(encodeWith(keyCodec, userKey, decl.name))
  }
  const live = () => entries(implicitKey(rt, decl.name)).filter((x) => !expired(x[2], rt.batchTimestampMs))
  const find = (userKey: unknown) => {
    const text = userKeyText(userKey)
    return live().find((x) => JSON.stringify(x[0]) === text)
  }
  return {
    exists: () => live().length > 0,
    getValue: (userKey) => {
      const x = find(userKey)
      return x === undefined ? undefined : decodeWith(valueCodec, x[1], decl.name)
    },
    containsKey: (userKey) => find(userKey) !== undefined,
    updateValue: (userKey, value) => {
      const key = implicitKey(rt, decl.name)
      const text = userKeyText(userKey)
      if (value === null || value === undefined) throw nullValue(decl.name)
      const expiry = decl.ttlMs === undefined ? null : rt.batchTimestampMs + decl.ttlMs
      noteExpiry(rt, expiry)
      const entry = [JSON.parse(text), encodeWith(valueCodec, value, decl.name), expiry]
      const list = entries(key)
      const before = list.length
      const i = list.findIndex((x) => JSON.stringify(x[0]) === text)
      if (i >= 0) list[i] = entry
      else list.push(entry)
      noteMapSize(rt, decl.name, before, list.length)
      store.put(key, [TAG.map, list])
      rt.updatedRows++
    },
    iterator: () =>
      live().map((x) => [decodeWith(keyCodec, x[0], decl.name), decodeWith(valueCodec, x[1], decl.name)] as const),
    keys: () => live().map((x) => decodeWith(keyCodec, x[0], decl.name)),
    values: () => live().map((x) => decodeWith(valueCodec, x[1], decl.name)),
    removeKey: (userKey) => {
      const key = implicitKey(rt, decl.name)
      const text = userKeyText(userKey)
      const all = entries(key)
      const list = all.filter((x) => JSON.stringify(x[0]) !== text)
      noteMapSize(rt, decl.name, all.length, list.length)
      if (list.length === 0) store.remove(key)
      else store.put(key, [TAG.map, list])
      rt.removedRows++
    },
    clear: () => {
      const key = implicitKey(rt, decl.name)
      const n = entries(key).length
      noteMapSize(rt, decl.name, n, 0)
      store.remove(key)
      // Spark's MapStateImpl.clear removes (and counts) the map's rows one by one.
      rt.removedRows += n
    }
  }
}

/** A timers entry: the key's JSON and its timers, ascending. */
const timersOf = (rt: Runtime, key: string): Array<number> => {
  const e = rt.timers?.get(key)
  if (e === undefined) return []
  if (!Array.isArray(e) || !Array.isArray(e[1])) throw new Corrupt("a timers entry is not [key, timers]")
  return e[1] as Array<number>
}

const writeTimers = (rt: Runtime, key: string, keyJson: unknown, list: ReadonlyArray<number>): void => {
  if (list.length === 0) rt.timers?.remove(key)
  else rt.timers?.put(key, [keyJson, list])
}

/** Spark's `verifyTimerOperations`. */
const verifyTimers = (rt: Runtime, operation: string): void => {
  if (rt.timeMode === "None") {
    throw misuse(
      "STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_TIME_MODE",
      `Failed to perform stateful processor operation=${operation} with invalid timeMode=NoTime`
    )
  }
  const order = PHASE_ORDER[rt.phase]
  if (order < PHASE_ORDER.INITIALIZED || order >= PHASE_ORDER.TIMER_PROCESSED) {
    throw misuse(
      "STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_HANDLE_STATE",
      `Failed to perform stateful processor operation=${operation} with invalid handle state=${rt.phase}.`
    )
  }
}

const checkTimestamp = (ts: number): void => {
  if (typeof ts !== "number" || !Number.isFinite(ts)) {
    throw misuse("STATEFUL_PROCESSOR_INVALID_TIMER", `A timer needs a finite timestamp in ms, got ${String(ts)}.`)
  }
}

/** Spark's `StatefulProcessorHandleImpl` for one batch. */
const runtimeHandle = (rt: Runtime): StatefulProcessorHandle => {
  const create = <A>(
    name: string,
    kind: Kind,
    schemas: ReadonlyArray<Schema.Top>,
    ttl: TTLConfig | undefined,
    operation: string,
    make: (decl: VarDecl, store: OperatorStateStore) => A
  ): A => {
    checkDeclaration(rt.phase, "CREATED", operation, name, schemas, ttl, rt.timeMode, rt.created)
    const decl = rt.declared.get(name)
    const store = rt.stores.get(name)
    if (decl === undefined || store === undefined || decl.kind !== kind) {
      throw misuse(
        "STATE_STORE_UNSUPPORTED_OPERATION_ON_MISSING_COLUMN_FAMILY",
        `State store operation=${operation} not supported on missing column family=${name}: init() must create the same state variables every time it runs (they were fixed when the query started).`
      )
    }
    rt.created.add(name)
    const withTtl = decl.ttlMs !== undefined
    bump(rt, `num${kind === "value" ? "Value" : kind === "list" ? "List" : "Map"}State${withTtl ? "WithTTL" : ""}Vars`)
    return make(decl, store)
  }
  return {
    getValueState: (name, schema, ttl) =>
      create(name, "value", [schema], ttl, "get_value_state", (d, s) => makeValueState(rt, d, s)),
    getListState: (name, schema, ttl) =>
      create(name, "list", [schema], ttl, "get_list_state", (d, s) => makeListState(rt, d, s)),
    getMapState: (name, keySchema, valueSchema, ttl) =>
      create(name, "map", [keySchema, valueSchema], ttl, "get_map_state", (d, s) => makeMapState(rt, d, s)),
    deleteIfExists: (name) => {
      // Spark's StatefulProcessorHandleImpl.deleteIfExists: only in init.
      if (rt.phase !== "CREATED") {
        throw misuse(
          "STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_HANDLE_STATE",
          `Failed to perform stateful processor operation=delete_if_exists with invalid handle state=${rt.phase}.`
        )
      }
      checkName(name)
      // The variable's store is gone after the first batch of a run: Spark counts a removal once.
      if (rt.firstBatchOfRun) bump(rt, "numDeletedStateVars")
    },
    registerTimer: (ts) => {
      verifyTimers(rt, "register_timer")
      checkTimestamp(ts)
      const key = implicitKey(rt, "timers")
      const list = timersOf(rt, key).slice()
      if (!list.includes(ts)) {
        list.push(ts)
        list.sort((a, b) => a - b)
        writeTimers(rt, key, rt.currentKeyJson, list)
      }
      if (ts < rt.minRegisteredTimer) rt.minRegisteredTimer = ts
      bump(rt, "numRegisteredTimers")
    },
    deleteTimer: (ts) => {
      verifyTimers(rt, "delete_timer")
      const key = implicitKey(rt, "timers")
      const list = timersOf(rt, key)
      if (list.includes(ts))
        writeTimers(
          rt,
          key,
          rt.currentKeyJson,
          list.filter((t) => t !== ts)
        )
      bump(rt, "numDeletedTimers")
    },
    listTimers: () => {
      verifyTimers(rt, "list_timers")
      return timersOf(rt, implicitKey(rt, "timers")).slice()
    }
  }
}

// ---------------------------------------------------------------------------------------------
// One batch
// ---------------------------------------------------------------------------------------------

interface Group {
  readonly key: unknown
  readonly keyJson: unknown
  readonly rows: Array<unknown>
}

const withOperator = (e: StateStoreError, operatorId: number): StateStoreError =>
  new StateStoreError({ reason: e.reason, message: e.message, operatorId })

/** Runs synchronous user-facing work: a misuse fails the batch, corrupt state fails it as `Corrupt`. */
const guarded = <A>(operatorId: number, work: () => A): Effect.Effect<A, StateStoreError> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(work())
    } catch (e) {
      if (e instanceof Misuse) return Effect.fail(withOperator(e.error, operatorId))
      if (e instanceof Corrupt) {
        return Effect.fail(
          new StateStoreError({
            reason: "Corrupt",
            operatorId,
            message: `The state of stateful operator ${operatorId} holds a value this operator cannot read (${e.message}). The checkpoint was written by a different query or is damaged: restart from a new checkpoint location.`,
            cause: e
          })
        )
      }
      // The user's own code threw: a defect, as for map/flatMap (Spark wraps it in
      // TRANSFORM_WITH_STATE_USER_FUNCTION_ERROR).
      throw e
    }
  })

/**
 * Runs one call into the processor. A misuse of the handle, unreadable state and an error the
 * user threw that already names its error class (a `StateStoreError`) pass through; any other
 * error the user's code throws becomes Spark's `TRANSFORM_WITH_STATE_USER_FUNCTION_ERROR`
 * naming the function (Spark's `TransformWithStateUserFunctionException`, guarded by
 * TransformWithStateValidationSuite "check that error within handleInputRows is classified").
 */
const userCall = <A>(fn: string, work: () => A): A => {
  try {
    return work()
  } catch (e) {
    if (e instanceof Misuse || e instanceof Corrupt) throw e
    if (e instanceof StateStoreError) throw new Misuse(e)
    throw new Misuse(
      new StateStoreError({
        reason: "InvalidUsage",
        message: `[TRANSFORM_WITH_STATE_USER_FUNCTION_ERROR] An error occurred in the user-defined function [${fn}] of the StatefulProcessor. Reason: ${schemaMessage(e)}`,
        cause: e
      })
    )
  }
}

const structOf = (attrs: ReadonlyArray<AttributeReference>): T.StructType =>
  T.struct(attrs.map((a) => T.field(a.name, a.dataType, a.nullable)))

/** Groups external rows by key (first-seen order); the key's state key is its JSON text. */
const groupRows = (
  rows: ReadonlyArray<InternalRow>,
  attrs: ReadonlyArray<AttributeReference>,
  keyFn: (row: any) => unknown,
  keyCodec: Codec
): Map<string, Group> => {
  const external = toExternal(structOf(attrs))
  const groups = new Map<string, Group>()
  for (let i = 0; i < rows.length; i++) {
    const row = external(rows[i])
    const key = keyFn(row)
    const keyJson = encodeWith(keyCodec, key, "the grouping key")
    const text = JSON.stringify(keyJson)
    let g = groups.get(text)
    if (g === undefined) {
      g = { key, keyJson, rows: [] }
      groups.set(text, g)
    }
    g.rows.push(row)
  }
  return groups
}

const outputConverter = (p: P.TransformWithStateExec): ((v: unknown) => InternalRow) => {
  if (p.wrapValue) {
    const conv = toInternal(p.schema.fields[0]?.dataType ?? T.NullType)
    return (v) => [conv(v)]
  }
  const conv = toInternal(p.schema)
  return (v) => {
    const row = conv(v)
    if (row === null) {
      throw new Error(
        `transformWithState returned ${String(v)} where a row of ${T.simpleString(p.schema)} was expected`
      )
    }
    return row as InternalRow
  }
}

/**
 * Runs the operator over its child's rows (and, in batch 0, the initial state's rows) for the
 * batch `ctx` describes, commits its stores and reports its progress; returns the output rows.
 *
 * @since 0.1.0
 */
export const executeTransformWithState = (
  p: P.TransformWithStateExec,
  rows: ReadonlyArray<InternalRow>,
  initialRows: ReadonlyArray<InternalRow> | undefined,
  ctx: StatefulContext
): Effect.Effect<ReadonlyArray<InternalRow>, StateStoreError> =>
  Effect.gen(function* () {
    const opId = p.operatorId
    const discovery = discover(p)
    if (discovery.error !== undefined) return yield* Effect.fail(withOperator(discovery.error, opId))
    const processor = p.processor as AnyProcessor
    const batchTimestampMs = ctx.batchTimestampMs ?? 0
    // Spark's WatermarkPropagator: the watermarks left for this operator by those below it.
    const watermarks = operatorWatermarks(p, ctx)
    const watermarkMs = watermarks.evictionMs
    const keyCodec = codecOf(p.keySchema as Schema.Top)

    // 1. Late rows (Spark filters them in TimeMode.EventTime only).
    let input = rows
    let droppedByWatermark = 0
    const et = findEventTimeColumn(p.child.output)
    const lateWm = watermarks.lateEventsMs
    if (p.timeMode === "EventTime" && et !== undefined && lateWm !== undefined) {
      const idx = p.child.output.findIndex((a) => a.exprId === et.exprId)
      const timeOf = eventTimeOf(et.dataType)
      const kept: Array<InternalRow> = []
      for (const r of rows) {
        if (atOrBelow(timeOf(r[idx]), lateWm)) droppedByWatermark++
        else kept.push(r)
      }
      input = kept
    }

    const groups = yield* guarded(opId, () => groupRows(input, p.child.output, p.keyFn, keyCodec))
    const initialGroups = new Map<string, Group>()
    if (initialRows !== undefined && p.initialState !== undefined && p.initialStateKeyFn !== undefined) {
      const attrs = p.initialState.output
      const initialKeyFn = p.initialStateKeyFn
      yield* guarded(opId, () => {
        const external = toExternal(structOf(attrs))
        for (const r of initialRows) {
          const row = external(r)
          const key = initialKeyFn(row)
          const keyJson = encodeWith(keyCodec, key, "the grouping key")
          const text = JSON.stringify(keyJson)
          if (initialGroups.has(text)) {
            throw misuse(
              "STATEFUL_PROCESSOR_CANNOT_REINITIALIZE_STATE_ON_KEY",
              `Cannot re-initialize state on the same grouping key during initial state handling for stateful processor. Invalid grouping key=${typeof key === "string" ? key : text}. Please check your initial state, remove duplicate rows and restart query.`
            )
          }
          initialGroups.set(text, { key, keyJson, rows: [row] })
        }
      })
    }

    // 2. Stores, one per declared variable, plus the timers'.
    const opened: Array<OperatorStateStore> = []
    const stores = new Map<string, OperatorStateStore>()
    const abortAll = Effect.forEach(opened, (s) => s.abort(), { discard: true })
    let timers: OperatorStateStore | undefined
    const declared = new Map(discovery.vars.map((v) => [v.name, v]))
    let properties: OperatorStateStore | undefined
    const work = Effect.gen(function* () {
      // The properties first: a restart that changed them fails before any state is read.
      properties = yield* ctx.openStore(opId, propertiesStoreName, propertiesSchema)
      opened.push(properties)
      yield* properties.load([PROPERTIES_KEY])
      const props = propertiesOf(p, discovery.vars)
      const stored = properties.get(PROPERTIES_KEY)
      yield* guarded(opId, () => {
        if (stored !== undefined) checkProperties(stored, props)
        if (JSON.stringify(stored) !== JSON.stringify(props)) properties!.put(PROPERTIES_KEY, props)
      })
      for (const v of discovery.vars) {
        const s = yield* ctx.openStore(opId, v.name, storeSchema(p, v))
        opened.push(s)
        stores.set(v.name, s)
      }
      if (p.timeMode !== "None") {
        timers = yield* ctx.openStore(opId, timerStoreName(p.timeMode), timerSchema(p))
        opened.push(timers)
      }
      // The map rows beyond one per grouping key, read once per run (see `mapExtraRows`).
      const mapVars = discovery.vars.filter((v) => v.kind === "map")
      let extras = mapExtraRows.get(p)
      if (extras === undefined && mapVars.length > 0) {
        const counted = new Map<string, number>()
        for (const v of mapVars) {
          const entries = yield* stores.get(v.name)!.scan()
          let n = 0
          for (const [, e] of entries) if (Array.isArray(e) && Array.isArray(e[1])) n += extraOf(e[1].length)
          counted.set(v.name, n)
        }
        extras = counted
      }
      const loadAll = (keys: Iterable<string>) => {
        const ks = [...keys]
        return Effect.forEach(opened, (s) => s.load(ks), { discard: true })
      }
      yield* loadAll(new Set([...groups.keys(), ...initialGroups.keys()]))

      const rt: Runtime = {
        phase: "CREATED",
        currentKey: undefined,
        currentKeyJson: undefined,
        batchTimestampMs,
        timeMode: p.timeMode,
        stores,
        timers,
        declared,
        created: new Set(),
        minWrittenExpiry: Number.POSITIVE_INFINITY,
        minRegisteredTimer: Number.POSITIVE_INFINITY,
        mapExtraDelta: new Map(),
        updatedRows: 0,
        removedRows: 0,
        firstBatchOfRun: !bounds.has(p),
        counters: {
          numValueStateVars: 0,
          numListStateVars: 0,
          numMapStateVars: 0,
          numValueStateWithTTLVars: 0,
          numListStateWithTTLVars: 0,
          numMapStateWithTTLVars: 0,
          numDeletedStateVars: 0,
          numRegisteredTimers: 0,
          numDeletedTimers: 0,
          numExpiredTimers: 0,
          numValuesRemovedDueToTTLExpiry: 0
        }
      }
      const handle = runtimeHandle(rt)
      const timerValues: TimerValues = {
        getCurrentProcessingTimeInMs: () => batchTimestampMs,
        getCurrentWatermarkInMs: () => watermarkMs ?? -1
      }
      const toRow = outputConverter(p)
      const out: Array<InternalRow> = []
      const withKey = (text: string, keyJson: unknown, f: () => void) => {
        rt.currentKey = text
        rt.currentKeyJson = keyJson
        try {
          f()
        } finally {
          rt.currentKey = undefined
          rt.currentKeyJson = undefined
        }
      }
      const emit = (values: Iterable<unknown>) => {
        for (const v of values) out.push(toRow(v))
      }

      // 3 and 4: init, the initial state (batch 0), the batch's rows.
      const [, updatesMs] = yield* timed(
        guarded(opId, () => {
          setHandle(processor, handle)
          userCall("init", () => processor.init(handle, p.timeMode))
          rt.phase = "INITIALIZED"
          if (initialGroups.size > 0) {
            const handleInitial = processor.handleInitialState
            for (const [text, g] of initialGroups) {
              withKey(text, g.keyJson, () =>
                userCall("handleInitialState", () => handleInitial?.call(processor, g.key, g.rows[0], timerValues))
              )
            }
          }
          for (const [text, g] of groups) {
            // The iterable is drained while the key is set: a lazy generator sees its own key.
            withKey(text, g.keyJson, () =>
              userCall("handleInputRows", () => emit(processor.handleInputRows(g.key, g.rows, timerValues)))
            )
          }
          rt.phase = "DATA_PROCESSED"
        })
      )

      // 5. Expired timers, ascending by time (Spark's timestamp-first secondary index).
      const threshold =
        p.timeMode === "ProcessingTime" ? batchTimestampMs : p.timeMode === "EventTime" ? watermarkMs : undefined
      let scannedTimers = false
      const [, timerMs] = yield* timed(
        Effect.gen(function* () {
          if (timers === undefined || threshold === undefined) return
          const known = bounds.get(p)
          if (known !== undefined && Math.min(known.timers, rt.minRegisteredTimer) > threshold) return
          scannedTimers = true
          const entries = yield* timers.scan()
          const due = yield* guarded(opId, () => {
            const list: Array<{ readonly text: string; readonly keyJson: unknown; readonly ts: number }> = []
            for (const [text, value] of entries) {
              if (!Array.isArray(value) || !Array.isArray(value[1]))
                throw new Corrupt("a timers entry is not [key, timers]")
              for (const ts of value[1] as ReadonlyArray<number>)
                if (ts <= threshold) list.push({ text, keyJson: value[0], ts })
            }
            return list.sort((a, b) => a.ts - b.ts || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0))
          })
          if (due.length === 0) return
          yield* loadAll(new Set(due.map((d) => d.text)))
          yield* guarded(opId, () => {
            const expire = processor.handleExpiredTimer
            for (const d of due) {
              const key = decodeWith(keyCodec, d.keyJson, "the grouping key")
              bump(rt, "numExpiredTimers")
              withKey(d.text, d.keyJson, () => {
                const info: ExpiredTimerInfo = { getExpiryTimeInMs: () => d.ts }
                if (expire !== undefined) {
                  userCall("handleExpiredTimer", () => emit(expire.call(processor, key, timerValues, info)))
                }
                // Spark deletes the timer once its output is consumed (`deleteTimer`, counted).
                handle.deleteTimer(d.ts)
              })
            }
          })
        })
      )
      rt.phase = "TIMER_PROCESSED"

      // 6. TTL cleanup, and the next processing-time deadline.
      const known = bounds.get(p)
      const ttlVars = discovery.vars.filter((v) => v.ttlMs !== undefined)
      const skipTtl = known !== undefined && known.ttl > batchTimestampMs
      let nextTtl = skipTtl ? Math.min(known.ttl, rt.minWrittenExpiry) : Number.POSITIVE_INFINITY
      const [, removalsMs] = yield* timed(
        Effect.forEach(
          skipTtl ? [] : ttlVars,
          (v) =>
            Effect.flatMap(stores.get(v.name)!.scan(), (entries) =>
              guarded(opId, () => {
                const store = stores.get(v.name)!
                for (const [key, e] of entries) {
                  if (!Array.isArray(e)) throw new Corrupt(`an entry of state variable ${v.name} is not one`)
                  if (v.kind === "value") {
                    if (expired(e[2], batchTimestampMs)) {
                      store.remove(key)
                      bump(rt, "numValuesRemovedDueToTTLExpiry")
                      rt.removedRows++
                    } else if (typeof e[2] === "number") nextTtl = Math.min(nextTtl, e[2])
                    continue
                  }
                  const at = v.kind === "list" ? 1 : 2
                  const list = e[1] as ReadonlyArray<ReadonlyArray<unknown>>
                  const keep = list.filter((x) => !expired(x[at], batchTimestampMs))
                  for (const x of keep) if (typeof x[at] === "number") nextTtl = Math.min(nextTtl, x[at] as number)
                  if (keep.length === list.length) continue
                  bump(rt, "numValuesRemovedDueToTTLExpiry", list.length - keep.length)
                  if (v.kind === "map") noteMapSize(rt, v.name, list.length, keep.length)
                  rt.removedRows += list.length - keep.length
                  if (keep.length === 0) store.remove(key)
                  else store.put(key, [e[0], keep])
                }
              })
            ),
          { discard: true }
        )
      )
      // The earliest timer left: unchanged without timer activity, else read from the store.
      let nextTimer = Number.POSITIVE_INFINITY
      const timerActivity =
        rt.counters.numRegisteredTimers + rt.counters.numDeletedTimers + rt.counters.numExpiredTimers > 0
      if (timers !== undefined) {
        if (known !== undefined && !timerActivity && !scannedTimers) nextTimer = known.timers
        else {
          const entries = yield* timers.scan()
          for (const [, value] of entries) {
            const list = Array.isArray(value) ? (value[1] as ReadonlyArray<number>) : []
            if (list.length > 0) nextTimer = Math.min(nextTimer, list[0])
          }
        }
      }
      const nextDeadline = p.timeMode === "ProcessingTime" ? Math.min(nextTtl, nextTimer) : Number.POSITIVE_INFINITY

      // 7. Commit, close, progress.
      let numRowsTotal = 0
      const numRowsUpdated = rt.updatedRows
      const numRowsRemoved = rt.removedRows
      let memoryUsedBytes = 0
      const [, commitMs] = yield* timed(
        Effect.forEach(
          opened,
          (s) =>
            Effect.map(s.commit(), (m) => {
              memoryUsedBytes += m.memoryUsedBytes
              // Timers live in Spark's internal column families, which its row counts leave out
              // (TransformWithListStateTTLSuite "verify the list state secondary index has at
              // most one record per key").
              if (s === timers || s === properties) return
              numRowsTotal += m.numRowsTotal
            }),
          { discard: true }
        )
      )
      if (extras !== undefined) {
        const next = new Map<string, number>()
        for (const v of mapVars) {
          const n = Math.max(0, (extras.get(v.name) ?? 0) + (rt.mapExtraDelta.get(v.name) ?? 0))
          next.set(v.name, n)
          numRowsTotal += n
        }
        mapExtraRows.set(p, next)
      }
      yield* guarded(opId, () => {
        try {
          userCall("close", () => processor.close?.())
        } finally {
          rt.phase = "CLOSED"
          setHandle(processor, undefined)
        }
      })
      bounds.set(p, { ttl: nextTtl, timers: nextTimer })
      if (p.timeMode === "ProcessingTime") {
        ctx.requestBatchAt?.(opId, Number.isFinite(nextDeadline) ? nextDeadline : undefined)
      }
      ctx.reportProgress(opId, {
        operatorName,
        numRowsTotal,
        numRowsUpdated,
        allUpdatesTimeMs: updatesMs,
        numRowsRemoved,
        allRemovalsTimeMs: removalsMs,
        commitTimeMs: commitMs,
        memoryUsedBytes,
        numRowsDroppedByWatermark: droppedByWatermark,
        customMetrics: { ...rt.counters, timerProcessingTimeMs: timerMs }
      })
      return out as ReadonlyArray<InternalRow>
    })
    return yield* work.pipe(
      Effect.onError(() =>
        Effect.andThen(
          abortAll,
          Effect.sync(() => setHandle(processor, undefined))
        )
      )
    )
  })

/**
 * The state of a batch query (Spark's `generateSparkPlanForBatchQueries`: a throwaway store):
 * batch 0 at `batchTimestampMs`, no watermark, stores in memory that vanish with the run.
 *
 * @since 0.1.0
 */
export const batchStatefulContext = (batchTimestampMs: number): StatefulContext => ({
  batchId: 0,
  outputMode: "update",
  watermarkForLateEventsMs: undefined,
  watermarkForEvictionMs: undefined,
  batchTimestampMs,
  reportProgress: () => {},
  openStore: () =>
    Effect.sync((): OperatorStateStore => {
      const entries = new Map<string, string>()
      return {
        version: -1,
        load: () => Effect.void,
        get: (key) => {
          const text = entries.get(key)
          return text === undefined ? undefined : JSON.parse(text)
        },
        put: (key, value) => {
          entries.set(key, JSON.stringify(value))
        },
        remove: (key) => {
          entries.delete(key)
        },
        scan: () => Effect.sync(() => [...entries].map(([k, v]) => [k, JSON.parse(v)] as const)),
        commit: () =>
          Effect.succeed({
            numRowsTotal: entries.size,
            numRowsUpdated: 0,
            numRowsRemoved: 0,
            commitTimeMs: 0,
            memoryUsedBytes: 0
          }),
        abort: () => Effect.void
      }
    })
})

// ---------------------------------------------------------------------------------------------
// The state reader
// ---------------------------------------------------------------------------------------------

/**
 * How the state reader (`format("statestore")`) reads one store of the operator: a state
 * variable (by its kind) or the timers. Serializable: it is written under the checkpoint.
 *
 * @since 0.1.0
 */
export interface StateVariableDecoder {
  readonly kind: "transformWithState"
  readonly variable: Kind | "timers"
  readonly key: T.StructType
  readonly keyIsStruct: boolean
  readonly userKey: T.StructType | undefined
  readonly userKeyIsStruct: boolean
  readonly value: T.StructType
  readonly valueIsStruct: boolean
}

const isStruct = (schema: Schema.Top | undefined): boolean =>
  schema !== undefined &&
  schema.ast._tag === "Objects" &&
  !(schema.ast.propertySignatures.length === 0 && schema.ast.indexSignatures.length === 1)

/**
 * The reader description of store `storeName` of the operator, `undefined` for a store it does
 * not have.
 *
 * @since 0.1.0
 */
export const transformWithStateDecoder = (
  p: P.TransformWithStateExec,
  storeName: string
): StateVariableDecoder | undefined => {
  const key = keyStruct(p)
  const keyIsStruct = isStruct(p.keySchema as Schema.Top)
  if (p.timeMode !== "None" && storeName === timerStoreName(p.timeMode)) {
    return {
      kind: "transformWithState",
      variable: "timers",
      key,
      keyIsStruct,
      userKey: undefined,
      userKeyIsStruct: false,
      value: T.struct([]),
      valueIsStruct: true
    }
  }
  const v = discover(p).vars.find((d) => d.name === storeName)
  if (v === undefined) return undefined
  return {
    kind: "transformWithState",
    variable: v.kind,
    key,
    keyIsStruct,
    userKey: v.userKeySchema === undefined ? undefined : structTypeOf(v.userKeySchema),
    userKeyIsStruct: isStruct(v.userKeySchema),
    value: structTypeOf(v.schema) ?? T.struct([]),
    valueIsStruct: isStruct(v.schema)
  }
}

const base64ToBytes = (s: string): Uint8Array => Uint8Array.from(atob(s), (c) => c.charCodeAt(0))

/** An Effect JSON-codec value (`toCodecJson`: ISO dates, base64 bytes, objects by name) as an internal value of `t`. */
const jsonToInternal = (t: T.DataType): ((json: unknown) => unknown) => {
  switch (t._tag) {
    case "timestamp":
      return (j) => (typeof j === "string" ? Date.parse(j) : typeof j === "number" ? j : null)
    case "date":
      return (j) => (typeof j === "string" ? Math.floor(Date.parse(j) / 86_400_000) : typeof j === "number" ? j : null)
    case "binary":
      return (j) => (typeof j === "string" ? base64ToBytes(j) : null)
    case "long":
    case "integer":
    case "double":
      return (j) => (typeof j === "string" ? Number(j) : (j ?? null))
    case "struct": {
      const convs = t.fields.map((f) => [f.name, jsonToInternal(f.dataType)] as const)
      return (j) => {
        if (j === null || j === undefined || typeof j !== "object") return null
        const o = j as Record<string, unknown>
        return convs.map(([name, c]) => (o[name] === undefined ? null : c(o[name])))
      }
    }
    case "array": {
      const c = jsonToInternal(t.elementType)
      return (j) => (Array.isArray(j) ? j.map(c) : null)
    }
    case "map": {
      const kc = jsonToInternal(t.keyType)
      const vc = jsonToInternal(t.valueType)
      return (j) =>
        j === null || typeof j !== "object"
          ? null
          : new Map(Object.entries(j as object).map(([k, v]) => [kc(k), vc(v)]))
    }
    default:
      return (j) => j ?? null
  }
}

/** A whole row from a JSON value: a struct schema's object, or a single value in a `value` column. */
const rowFromJson = (st: T.StructType, isStructValue: boolean): ((json: unknown) => unknown) => {
  const conv = jsonToInternal(st)
  if (isStructValue) return conv
  const one = jsonToInternal(st.fields[0]?.dataType ?? T.NullType)
  return (j) => [one(j)]
}

/**
 * The rows the state reader shows for one store: `[key, value, partition_id]` per value (a
 * list's elements and a map's entries one row each; the map's user key joins the key), and per
 * timer for the timers' store (`key` with `expiryTimestampMs`).
 *
 * @since 0.1.0
 */
export const decodeStateVariableEntries = (
  d: StateVariableDecoder,
  entries: ReadonlyArray<readonly [string, unknown]>
): { readonly keySchema: T.StructType; readonly valueSchema: T.StructType; readonly rows: Array<InternalRow> } => {
  const keyRow = rowFromJson(d.key, d.keyIsStruct)
  const valueRow = rowFromJson(d.value, d.valueIsStruct)
  const rows: Array<InternalRow> = []
  const list = (v: unknown, what: string): ReadonlyArray<ReadonlyArray<unknown>> => {
    if (!Array.isArray(v)) throw new Error(`${what} is not a list`)
    return v as ReadonlyArray<ReadonlyArray<unknown>>
  }
  switch (d.variable) {
    case "timers": {
      for (const [, e] of entries) {
        const a = list(e, "a timers entry")
        for (const ts of list(a[1], "a key's timers")) rows.push([[keyRow(a[0]), ts], [], 0])
      }
      return {
        keySchema: T.struct([T.field("key", d.key, false), T.field("expiryTimestampMs", T.LongType, false)]),
        valueSchema: T.struct([]),
        rows
      }
    }
    case "value":
      for (const [k, e] of entries) rows.push([keyRow(JSON.parse(k)), valueRow(list(e, "a value entry")[1]), 0])
      return { keySchema: d.key, valueSchema: d.value, rows }
    case "list":
      for (const [k, e] of entries) {
        const key = keyRow(JSON.parse(k))
        for (const x of list(list(e, "a list entry")[1], "a list")) rows.push([key, valueRow(x[0]), 0])
      }
      return { keySchema: d.key, valueSchema: d.value, rows }
    case "map": {
      const userKey = d.userKey ?? T.struct([])
      const userKeyRow = rowFromJson(userKey, d.userKeyIsStruct)
      for (const [k, e] of entries) {
        const key = keyRow(JSON.parse(k))
        for (const x of list(list(e, "a map entry")[1], "a map"))
          rows.push([[key, userKeyRow(x[0])], valueRow(x[1]), 0])
      }
      return {
        keySchema: T.struct([T.field("key", d.key, false), T.field("userKey", userKey, false)]),
        valueSchema: d.value,
        rows
      }
    }
  }
}
