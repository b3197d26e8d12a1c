/**
 * What a `transformWithState` operator declares before it runs (Spark's
 * `DriverStatefulProcessorHandleImpl` and `TransformWithStateOperatorProperties`): the processor's
 * `init` runs once at the query's start with a handle that only records the state variables it
 * creates (name, kind, schemas, TTL), checked as Spark's handles check them; from those come the
 * operator's stores (its properties, one per variable, the timers') with their schemas, and the
 * properties a restart may not change. Also the misuse and corrupt-state errors every part of
 * the operator raises.
 *
 * @since 0.1.0
 */
import type { Schema } from "effect"
import * as T from "../../../core/DataType.ts"
import { StateStoreError } from "../../../core/Errors.ts"
import { structTypeOf } from "../../../core/RowSchema.ts"
import {
  StatefulProcessor,
  type StatefulProcessorHandle,
  type StatefulProcessorLike,
  type TimeMode,
  type TTLConfig
} from "../../contracts/StatefulProcessor.ts"
import type * as P from "../SparkPlan.ts"
import type { OperatorStateSchema } from "./StatefulContext.ts"

/**
 * Spark's `shortName` of the operator, reported as `stateOperators[].operatorName`.
 *
 * @since 0.1.0
 */
export const operatorName = "transformWithStateExec"

/** The timers' store (Spark's `$procTimers_keyToTimestamp` / `$eventTimers_keyToTimestamp`). */
export const timerStoreName = (timeMode: TimeMode): string =>
  timeMode === "EventTime" ? "eventTimers-keyToTimestamp" : "procTimers-keyToTimestamp"

export type Kind = "value" | "list" | "map"

/** A state variable as `init` declared it. */
export interface VarDecl {
  readonly name: string
  readonly kind: Kind
  readonly schema: Schema.Top
  readonly userKeySchema: Schema.Top | undefined
  /** The TTL in ms; `undefined` without TTL. */
  readonly ttlMs: number | undefined
}

/** What the start-time `init` found: the variables, or the misuse that stopped it. */
export interface Discovery {
  readonly vars: ReadonlyArray<VarDecl>
  readonly error: StateStoreError | undefined
}

/** A misuse of the handle or of a state variable; the batch fails with `error`. */
export class Misuse extends Error {
  readonly error: StateStoreError
  constructor(error: StateStoreError) {
    super(error.message)
    this.error = error
  }
}

/** A stored entry that this operator cannot read. */
export class Corrupt extends Error {}

export const misuse = (errorClass: string, message: string): Misuse =>
  new Misuse(new StateStoreError({ reason: "InvalidUsage", message: `[${errorClass}] ${message}` }))

/** Spark's `TimeMode.toString`. */
const timeModeString = (m: TimeMode): string => (m === "None" ? "NoTime" : m)

export type Phase = "PRE_INIT" | "CREATED" | "INITIALIZED" | "DATA_PROCESSED" | "TIMER_PROCESSED" | "CLOSED"
export const PHASE_ORDER: Record<Phase, number> = {
  PRE_INIT: 0,
  CREATED: 0,
  INITIALIZED: 1,
  DATA_PROCESSED: 2,
  TIMER_PROCESSED: 3,
  CLOSED: 4
}

const VALID_NAME = /^[A-Za-z0-9][A-Za-z0-9_]*$/

/** A state variable's name names its store (Spark's column family name rules). */
export const checkName = (name: string): void => {
  if (typeof name !== "string" || !VALID_NAME.test(name) || name === "default") {
    throw misuse(
      "STATE_STORE_CANNOT_CREATE_COLUMN_FAMILY_WITH_RESERVED_CHARS",
      `Failed to create column family with unsupported name=${String(name)}: a state variable's store is named by it, so use letters, digits and '_', starting with a letter or digit (not 'default').`
    )
  }
}

/** The checks Spark's handles make when a state variable is created. */
export const checkDeclaration = (
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

export type AnyProcessor = StatefulProcessorLike<any, any, any, any>

export const setHandle = (processor: AnyProcessor, handle: StatefulProcessorHandle | undefined): void => {
  if (processor instanceof StatefulProcessor) processor.setHandle(handle)
}

const discoveries = new WeakMap<object, Map<TimeMode, Discovery>>()

/** Runs the processor's `init` with a recording handle, once per processor and time mode. */
export const discover = (p: P.TransformWithStateExec): Discovery => {
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

export const keyStruct = (p: P.TransformWithStateExec): T.StructType =>
  structTypeOf(p.keySchema as Schema.Top) ?? T.struct([T.field("value", T.NullType, true)])

export const storeSchema = (p: P.TransformWithStateExec, v: VarDecl): OperatorStateSchema => {
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

export const timerSchema = (p: P.TransformWithStateExec): OperatorStateSchema => ({
  keySchema: T.struct([T.field("key", keyStruct(p), false), T.field("expiryTimestampMs", T.LongType, false)]),
  valueSchema: T.struct([])
})

/**
 * The store of the operator's properties (Spark's `TransformWithStateOperatorProperties` in its
 * operator metadata): time mode, output mode and the kind of each state variable, checked when a
 * run starts. Its name cannot be a state variable's (those have no '-').
 */
export const propertiesStoreName = "tws-operatorProperties"
export const PROPERTIES_KEY = "properties"

export const propertiesSchema: OperatorStateSchema = {
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

export const propertiesOf = (p: P.TransformWithStateExec, vars: ReadonlyArray<VarDecl>): OperatorProperties => ({
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
export const checkProperties = (old: unknown, next: OperatorProperties): void => {
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
): ReadonlyArray<{ readonly storeName: string; readonly schema: OperatorStateSchema; readonly mayBeNew?: boolean }> => {
  const d = discover(p)
  const stores = [
    { storeName: propertiesStoreName, schema: propertiesSchema },
    ...d.vars.map((v) => ({ storeName: v.name, schema: storeSchema(p, v), mayBeNew: true }))
  ]
  return p.timeMode === "None"
    ? stores
    : [...stores, { storeName: timerStoreName(p.timeMode), schema: timerSchema(p), mayBeNew: true }]
}

/** The message of what a user function or a schema threw. */
export const schemaMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e))
