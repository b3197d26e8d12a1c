/**
 * How the state reader (`spark.read.format("statestore")`) turns a store's entries back into
 * rows. Operators keep their state as a key string and a JSON value in their own layout; the
 * reader runs from the checkpoint alone, without the query's plan, so each stateful operator
 * writes a serializable description of its stores when the query starts
 * (`<checkpoint>/state/<operatorId>/_metadata/reader`), and `decodeEntries` reads any store with it.
 *
 * The rows have Spark's shape: a `key` struct, a `value` struct and `partition_id` (always 0:
 * tributary runs each operator as one partition). What the structs hold follows Spark where the
 * state means the same thing:
 * - an aggregation: `key` the grouping columns, `value` the aggregates by their output names
 *   (Spark shows the raw aggregation buffers; tributary evaluates them, so `avg(x)` is one
 *   column rather than a sum and a count);
 * - a session-window aggregation: one row per session, the session window in the key;
 * - a deduplication: `key` the deduplication columns, `value` `{__dummy__: null}`, or
 *   `{expiresAtMicros}` for `dropDuplicatesWithinWatermark` (microseconds, as Spark);
 * - anything else: the key parsed from its key string by the key schema and the value read
 *   positionally by the value schema.
 *
 * @since 0.1.0
 */
import type { Schema } from "effect"
import { dataTypeOf } from "../../../core/Compile.ts"
import * as T from "../../../core/DataType.ts"
import type { AggregateFunction } from "../../../core/Expression.ts"
import { makeAggregate, valueFromJSON } from "../../../core/functions/Aggregates.ts"
import type { InternalRow } from "../../../core/Row.ts"
import { structTypeOf } from "../../../core/RowSchema.ts"
import type * as P from "../SparkPlan.ts"
import { aggregateStateSchema } from "./StatefulAggregateExec.ts"
import type { OperatorStateSchema } from "./StatefulContext.ts"
import { dedupStateSchema } from "./StreamingDeduplicateExec.ts"
import {
  discover,
  type Kind,
  keyStruct,
  propertiesStoreName,
  timerStoreName,
  transformWithStateStores
} from "./TransformWithStateDeclarations.ts"

/**
 * One aggregate as the reader rebuilds it: enough to decode and evaluate its stored buffer.
 *
 * @since 0.1.0
 */
export interface AggregateDescriptor {
  readonly name: AggregateFunction["name"]
  readonly distinct: boolean
  readonly options: AggregateFunction["options"]
  readonly argTypes: ReadonlyArray<T.DataType>
  /** The output column (`count`, `sum(x)`, or the alias). */
  readonly field: T.StructField
}

/**
 * How a store's entries become `key` and `value` rows.
 *
 * @since 0.1.0
 */
export type StoreDecoder =
  | {
      readonly kind: "aggregate"
      readonly grouping: ReadonlyArray<T.StructField>
      readonly aggregates: ReadonlyArray<AggregateDescriptor>
    }
  | {
      readonly kind: "sessionWindow"
      /** The grouping columns other than the session window, in state order. */
      readonly others: ReadonlyArray<T.StructField>
      readonly session: T.StructField
      readonly aggregates: ReadonlyArray<AggregateDescriptor>
    }
  | { readonly kind: "dedup"; readonly keys: ReadonlyArray<T.StructField>; readonly withinWatermark: boolean }
  | StateVariableDecoder
  | { readonly kind: "generic" }

/**
 * One store's reader description, as written under the checkpoint.
 *
 * @since 0.1.0
 */
export interface StoreReaderSpec {
  readonly storeName: string
  /** The store's own schemas (what the compatibility check compares). */
  readonly schema: OperatorStateSchema
  readonly decoder: StoreDecoder
}

/**
 * The output name of an aggregation's grouping or aggregate attribute: the alias a result
 * expression gives it (`bucket` for `groupBy(F.col("v").mod(2).as("bucket"))`, `count` for
 * `groupBy(...).count()`, `n` for `.as("n")`), else the attribute's own name — the names Spark's
 * state reader shows.
 */
const outputNameOf = (p: P.StatefulAggregateExec, attr: { readonly exprId: number; readonly name: string }): string => {
  for (const e of p.resultExpressions) {
    if (e._tag === "Alias" && e.child._tag === "AttributeReference" && e.child.exprId === attr.exprId) return e.name
  }
  return attr.name
}

const outputName = (p: P.StatefulAggregateExec, i: number): string => outputNameOf(p, p.aggregateAttributes[i])

const describeAggregates = (p: P.StatefulAggregateExec): ReadonlyArray<AggregateDescriptor> =>
  p.aggregateFunctions.map((f, i) => ({
    name: f.name,
    distinct: f.distinct,
    options: f.options,
    argTypes: f.args.map(dataTypeOf),
    field: T.field(outputName(p, i), p.aggregateAttributes[i].dataType, true)
  }))

/**
 * The reader description of an aggregation's or a deduplication's store; operators without one
 * get the generic decoder.
 *
 * @since 0.1.0
 */
export const builtInReaderSpec = (node: P.SparkPlan, storeName: string): StoreReaderSpec | undefined => {
  switch (node._tag) {
    case "StatefulAggregateExec": {
      const schema = aggregateStateSchema(node)
      const fields = node.groupingAttributes.map((a) => T.field(outputNameOf(node, a), a.dataType, a.nullable))
      if (node.sessionWindow === undefined) {
        return { storeName, schema, decoder: { kind: "aggregate", grouping: fields, aggregates: describeAggregates(node) } }
      }
      const index = node.sessionWindow.index
      return {
        storeName,
        schema,
        decoder: {
          kind: "sessionWindow",
          others: fields.filter((_, i) => i !== index),
          session: fields[index],
          aggregates: describeAggregates(node)
        }
      }
    }
    case "StreamingDeduplicateExec":
      return {
        storeName,
        schema: dedupStateSchema(node),
        decoder: {
          kind: "dedup",
          keys: node.keys.map((k) => T.field(k.name, k.dataType, k.nullable)),
          withinWatermark: node.withinWatermark
        }
      }
    case "TransformWithStateExec": {
      // transformWithState: one store per state variable (its values by field name) and the timers.
      const decoder = transformWithStateDecoder(node, storeName)
      const store = transformWithStateStores(node).find((s) => s.storeName === storeName)
      return decoder === undefined || store === undefined ? undefined : { storeName, schema: store.schema, decoder }
    }
    default:
      return undefined
  }
}

/** A store's entries as reader rows, or why they cannot be read. */
export type Decoded = { readonly keySchema: T.StructType; readonly valueSchema: T.StructType; readonly rows: Array<InternalRow> }

const aggregateImpls = (aggs: ReadonlyArray<AggregateDescriptor>) =>
  aggs.map((a) =>
    makeAggregate(
      { _tag: "AggregateFunction", name: a.name, args: [], distinct: a.distinct, options: a.options, dataType: a.field.dataType },
      a.argTypes.map(() => () => null),
      a.argTypes
    )
  )

const asArray = (v: unknown, what: string): ReadonlyArray<unknown> => {
  if (!Array.isArray(v)) throw new Error(`${what} is not an array`)
  return v
}

/**
 * Decodes a store's entries (`[key string, value JSON]`) with its reader description. Throws
 * an `Error` saying what is wrong on data the description does not fit (the caller turns it
 * into a `StateStoreError`).
 *
 * @since 0.1.0
 */
export const decodeEntries = (spec: StoreReaderSpec, entries: ReadonlyArray<readonly [string, unknown]>): Decoded => {
  const d = spec.decoder
  switch (d.kind) {
    case "aggregate": {
      const impls = aggregateImpls(d.aggregates)
      const dec = d.grouping.map((f) => valueFromJSON(f.dataType))
      const n = dec.length
      const rows: Array<InternalRow> = []
      for (const [, json] of entries) {
        const a = asArray(json, "an aggregation state value")
        const key = dec.map((f, i) => f(a[i]))
        const value = impls.map((im, j) => im.evaluate(im.fromJSON(a[n + j])))
        rows.push([key, value, 0])
      }
      return {
        keySchema: T.struct(d.grouping),
        valueSchema: T.struct(d.aggregates.map((a) => a.field)),
        rows
      }
    }
    case "sessionWindow": {
      const impls = aggregateImpls(d.aggregates)
      const dec = d.others.map((f) => valueFromJSON(f.dataType))
      const n = dec.length
      const rows: Array<InternalRow> = []
      for (const [, json] of entries) {
        const a = asArray(json, "a session window state value")
        const others = dec.map((f, i) => f(a[i]))
        for (const s of asArray(a[n], "the sessions of a session window state value")) {
          const session = asArray(s, "a session")
          const value = impls.map((im, j) => im.evaluate(im.fromJSON(session[2 + j])))
          rows.push([[...others, [session[0], session[1]]], value, 0])
        }
      }
      return {
        keySchema: T.struct([...d.others, d.session]),
        valueSchema: T.struct(d.aggregates.map((a) => a.field)),
        rows
      }
    }
    case "dedup": {
      const parse = keyParser(d.keys.map((f) => f.dataType))
      const rows: Array<InternalRow> = []
      for (const [key, json] of entries) {
        const keyRow = parse(key)
        if (d.withinWatermark) {
          const t = asArray(json, "a deduplication state value")[0]
          rows.push([keyRow, [typeof t === "number" ? t * 1000 : null], 0])
        } else rows.push([keyRow, [null], 0])
      }
      return {
        keySchema: T.struct(d.keys),
        valueSchema: T.struct([
          d.withinWatermark ? T.field("expiresAtMicros", T.LongType, false) : T.field("__dummy__", T.NullType, true)
        ]),
        rows
      }
    }
    case "transformWithState":
      return decodeStateVariableEntries(d, entries)
    case "generic": {
      // transformWithState's properties store keys its one entry by the plain string "properties".
      const parse =
        spec.storeName === propertiesStoreName
          ? (key: string): InternalRow => [key]
          : keyParser(spec.schema.keySchema.fields.map((f) => f.dataType))
      const value = valueFromJSON(spec.schema.valueSchema)
      const rows: Array<InternalRow> = []
      for (const [key, json] of entries) rows.push([parse(key), value(json), 0])
      return { keySchema: spec.schema.keySchema, valueSchema: spec.schema.valueSchema, rows }
    }
  }
}

/** Separates the parts of a composite state key (`WatermarkSupport.stateKey`). */
const SEP = "\u0001"
const NULL = "\u0000"

/**
 * Parses a state key written by `WatermarkSupport.stateKey` (each part `Ordering.keyString` of
 * its type) back into values. Binary values nested in structs or arrays cannot be told apart
 * from their neighbours and are not supported.
 *
 * @since 0.1.0
 */
export const keyParser = (types: ReadonlyArray<T.DataType>): ((key: string) => Array<unknown>) => {
  if (types.length === 0) return () => []
  return (key) => {
    const parts = types.length === 1 ? [key] : key.split(SEP)
    if (parts.length !== types.length) {
      throw new Error(`a state key has ${parts.length} parts where the key schema has ${types.length}`)
    }
    return types.map((t, i) => {
      const p = parts[i]
      if (t._tag === "binary") return p === NULL ? null : parseBinary(p)
      const r = new KeyReader(p)
      const v = r.value(t)
      if (r.pos !== p.length) throw new Error(`unexpected text at ${r.pos} in state key part ${JSON.stringify(p)}`)
      return v
    })
  }
}

const parseBinary = (p: string): Uint8Array => {
  if (!p.startsWith("b")) throw new Error(`a binary state key does not start with 'b': ${JSON.stringify(p)}`)
  return p.length === 1 ? new Uint8Array(0) : Uint8Array.from(p.slice(1).split(",").map(Number))
}

class KeyReader {
  readonly text: string
  pos = 0
  constructor(text: string) {
    this.text = text
  }

  value(t: T.DataType): unknown {
    const s = this.text
    if (s[this.pos] === NULL) {
      this.pos++
      return null
    }
    switch (t._tag) {
      case "integer":
      case "long":
      case "double":
      case "timestamp":
      case "date": {
        const start = this.pos
        while (this.pos < s.length && s[this.pos] !== "," && s[this.pos] !== "]" && s[this.pos] !== "}") this.pos++
        const n = Number(s.slice(start, this.pos))
        if (Number.isNaN(n) && s.slice(start, this.pos) !== "NaN") throw new Error(`not a number in a state key: ${s}`)
        return n
      }
      case "boolean": {
        const c = s[this.pos++]
        if (c !== "t" && c !== "f") throw new Error(`not a boolean in a state key: ${s}`)
        return c === "t"
      }
      case "string":
      case "null":
      case "calendarInterval":
        return JSON.parse(this.jsonToken())
      case "array": {
        this.expect("[")
        const out: Array<unknown> = []
        if (s[this.pos] === "]") {
          this.pos++
          return out
        }
        for (;;) {
          out.push(this.value(t.elementType))
          const c = s[this.pos++]
          if (c === "]") return out
          if (c !== ",") throw new Error(`malformed array in a state key: ${s}`)
        }
      }
      case "struct": {
        this.expect("{")
        const out: Array<unknown> = []
        for (let i = 0; i < t.fields.length; i++) {
          if (i > 0) this.expect(",")
          out.push(this.value(t.fields[i].dataType))
        }
        this.expect("}")
        return out
      }
      default:
        throw new Error(`a state key of type ${T.simpleString(t)} cannot be read back`)
    }
  }

  /** One JSON value (a string, or a number/object for the rare types kept as JSON). */
  private jsonToken(): string {
    const s = this.text
    const start = this.pos
    if (s[this.pos] === '"') {
      this.pos++
      while (this.pos < s.length && s[this.pos] !== '"') this.pos += s[this.pos] === "\\" ? 2 : 1
      this.pos++
      return s.slice(start, this.pos)
    }
    let depth = 0
    while (this.pos < s.length) {
      const c = s[this.pos]
      if (c === "{" || c === "[") depth++
      else if (c === "}" || c === "]") {
        if (depth === 0) break
        depth--
      } else if (c === "," && depth === 0) break
      this.pos++
    }
    return s.slice(start, this.pos)
  }

  private expect(c: string): void {
    if (this.text[this.pos] !== c) throw new Error(`expected '${c}' at ${this.pos} in state key ${JSON.stringify(this.text)}`)
    this.pos++
  }
}

// ---------------------------------------------------------------------------------------------
// transformWithState's stores
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
