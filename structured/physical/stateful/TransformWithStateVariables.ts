/**
 * The state variables of a `transformWithState` operator in one batch (Spark's `ValueStateImpl`,
 * `ListStateImpl`, `MapStateImpl` and their TTL variants): values stored with the Effect
 * Schema's JSON codec, by field name, each entry tagged with its kind (a variable whose kind
 * changed fails with `STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE` when read); with TTL, each value
 * carries its expiry and reads skip expired ones (Spark's `isExpired`: `batchTimestampMs >=
 * expiry`). The per-batch `Runtime` they share with the handle and the timers counts Spark's
 * metrics.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import type { ListState, MapState, TimeMode, ValueState } from "../../contracts/StatefulProcessor.ts"
import {
  Corrupt,
  type Kind,
  type Misuse,
  misuse,
  type Phase,
  schemaMessage,
  type VarDecl
} from "./TransformWithStateDeclarations.ts"
import type { OperatorStateStore } from "./StatefulContext.ts"

export interface Codec {
  readonly encode: (value: unknown) => unknown
  readonly decode: (json: unknown) => unknown
}

const codecs = new WeakMap<Schema.Top, Codec>()

/** The schema's JSON codec (Effect's `toCodecJson`): by field name, dates as ISO strings. */
export const codecOf = (schema: Schema.Top): Codec => {
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

/** Everything the handle and the state variables share for one batch. */
export interface Runtime {
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

export const extraOf = (length: number): number => (length > 0 ? length - 1 : 0)

export const noteMapSize = (rt: Runtime, name: string, before: number, after: number): void => {
  const d = extraOf(after) - extraOf(before)
  if (d !== 0) rt.mapExtraDelta.set(name, (rt.mapExtraDelta.get(name) ?? 0) + d)
}

const noteExpiry = (rt: Runtime, expiry: number | null): void => {
  if (expiry !== null && expiry < rt.minWrittenExpiry) rt.minWrittenExpiry = expiry
}

export const implicitKey = (rt: Runtime, name: string): string => {
  if (rt.currentKey === undefined) {
    throw misuse("INTERNAL_ERROR_TWS", `Implicit key not found in state store for stateName=${name}`)
  }
  return rt.currentKey
}

export const bump = (rt: Runtime, metric: string, n = 1): void => {
  rt.counters[metric] = (rt.counters[metric] ?? 0) + n
}

const nullValue = (name: string): Misuse =>
  misuse("ILLEGAL_STATE_STORE_VALUE.NULL_VALUE", `Cannot write null values to State Store for StateName ${name}.`)

const emptyList = (name: string): Misuse =>
  misuse(
    "ILLEGAL_STATE_STORE_VALUE.EMPTY_LIST_VALUE",
    `Cannot write empty list values to State Store for StateName ${name}.`
  )

export const expired = (expiry: unknown, now: number): boolean => typeof expiry === "number" && expiry <= now

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

export const encodeWith = (codec: Codec, value: unknown, name: string): unknown => {
  try {
    return codec.encode(value)
  } catch (e) {
    throw misuse(
      "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE",
      `The value written to state variable ${name} does not match its schema: ${schemaMessage(e)}`
    )
  }
}

export const decodeWith = (codec: Codec, json: unknown, name: string): unknown => {
  try {
    return codec.decode(json)
  } catch (e) {
    throw new Corrupt(`a value of state variable ${name} does not decode with its schema: ${schemaMessage(e)}`)
  }
}

export const makeValueState = (rt: Runtime, decl: VarDecl, store: OperatorStateStore): ValueState<any> => {
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

export const makeListState = (rt: Runtime, decl: VarDecl, store: OperatorStateStore): ListState<any> => {
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

export const makeMapState = (rt: Runtime, decl: VarDecl, store: OperatorStateStore): MapState<any, any> => {
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
