/**
 * `mapGroupsWithState` / `flatMapGroupsWithState` over one batch (Spark's
 * `FlatMapGroupsWithStateExec`, `FlatMapGroupsWithStateExecHelper` state format 2, and for a
 * batch input `MapGroupsExec` / `CoGroupExec`).
 *
 * Per micro-batch:
 *
 * 1. with an event-time timeout, input rows at or below the late-events watermark are dropped
 *    (`numRowsDroppedByWatermark`), as Spark filters only in that case;
 * 2. in the query's first batch the initial state (columns `key`, `state`) is stored for its
 *    keys (a key twice is an error) and the function is called for every key that has data or
 *    initial state, in key order (Spark co-groups both inputs sorted by key);
 * 3. after all the data, every stored key whose timeout timestamp is strictly below the
 *    threshold (the batch timestamp for `ProcessingTimeTimeout`, this batch's watermark for
 *    `EventTimeTimeout`) is called with no rows and `hasTimedOut` true. Keys with data had their
 *    timeout reset or set anew above, so they never time out in the same batch;
 * 4. after each call (the returned iterable fully consumed, so a lazy generator may still
 *    change the state) the state is written back by Spark's rule: removed without a timeout →
 *    the key is removed (`numRowsRemoved`); otherwise it is written when it was updated,
 *    removed, or its timeout changed (`numRowsUpdated`). A timeout not set again in a call is
 *    cleared (Spark's reset rule).
 *
 * In a micro-batch, anything but a tagged tributary error (such as `GroupStateError`) that the
 * function or its iterable throws fails the batch as `FlatMapGroupsWithStateUserFuncError`
 * (Spark's `FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR`, SPARK-49474).
 *
 * Stored key: the grouping key's fields as every operator's state key (`WatermarkSupport.stateKey`).
 * Stored value (JSON): `[key, groupState | null, timeoutTimestamp]` (the timestamp only with a
 * timeout configured); the key is kept so timed-out keys can be handed back to the function.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as T from "../../../core/DataType.ts"
import { isTaggedError, type StateStoreError } from "../../../core/Errors.ts"
import type { AttributeReference } from "../../../core/Expression.ts"
import { valueFromJSON, valueToJSON } from "../../../core/functions/Aggregates.ts"
import { comparator } from "../../../core/Ordering.ts"
import { type InternalRow, toExternal, toInternal } from "../../../core/Row.ts"
import {
  FlatMapGroupsWithStateUserFuncError,
  GroupStateError,
  GroupStateImpl,
  NO_TIMESTAMP
} from "../../contracts/GroupState.ts"
import type * as P from "../SparkPlan.ts"
import { commitAndReport, CorruptState, decodingState, guardDecode, timed, withOperatorStore } from "./OperatorState.ts"
import type { OperatorStateSchema, StatefulContext } from "./StatefulContext.ts"
import { atOrBelow, eventTimeOf, findEventTimeColumn, stateKey } from "./WatermarkSupport.ts"
import { operatorWatermarks } from "./WatermarkPropagator.ts"

/**
 * Spark's `shortName`, reported as `stateOperators[].operatorName`.
 *
 * @since 0.1.0
 */
export const operatorName = "flatMapGroupsWithState"

/**
 * The store's schemas: the grouping key, and as value the key, Spark's `groupState` (nullable:
 * a removed state with a timeout is kept as null) and, with a timeout configured,
 * `timeoutTimestamp`.
 *
 * @since 0.1.0
 */
export const flatMapGroupsWithStateSchema = (p: P.FlatMapGroupsWithStateExec): OperatorStateSchema => ({
  keySchema: p.keySchema,
  valueSchema: T.struct([
    T.field("key", p.keySchema, false),
    T.field("groupState", p.stateSchema, true),
    ...(p.timeout === "NoTimeout" ? [] : [T.field("timeoutTimestamp", T.LongType, false)])
  ])
})

/**
 * Spark's `FlatMapGroupsWithStateExec.shouldRunAnotherBatch`: an event-time timeout asks for a
 * batch without data when the watermark moved past the one the last batch evicted with.
 * Processing-time timeouts are asked for through `processingTimeBatchDue`.
 *
 * @since 0.1.0
 */
export const groupsWithStateShouldRunAnotherBatch = (
  p: P.FlatMapGroupsWithStateExec,
  newWatermarkMs: number,
  currentEvictionWatermarkMs: number
): boolean => p.isStreaming && p.timeout === "EventTimeTimeout" && newWatermarkMs > currentEvictionWatermarkMs

const structOf = (attrs: ReadonlyArray<AttributeReference>): T.StructType =>
  T.struct(attrs.map((a) => T.field(a.name, a.dataType, a.nullable)))

/** Spark's message when the initial state holds a key twice (`foundDuplicateInitialKeyException`). */
const duplicateInitialKey = (): GroupStateError =>
  new GroupStateError({
    reason: "IllegalArgument",
    message:
      "The initial state provided contained multiple rows(state) with the same key. Make sure to de-duplicate the initial state before passing it."
  })

/** The conversions of one operator, built once per batch. */
interface Codecs {
  /** External key (what `keyFn` returns) to the internal key struct. */
  readonly keyToInternal: (k: unknown) => unknown
  readonly keyToExternal: (k: unknown) => unknown
  readonly keyString: (k: unknown) => string
  readonly keyCompare: (a: unknown, b: unknown) => number
  readonly stateToInternal: (s: unknown) => unknown
  readonly stateToExternal: (s: unknown) => unknown
  readonly keyToJSON: (k: unknown) => unknown
  readonly keyFromJSON: (j: unknown) => unknown
  readonly stateToJSON: (s: unknown) => unknown
  readonly stateFromJSON: (j: unknown) => unknown
  readonly outputRow: (o: unknown) => InternalRow
}

const codecs = (p: P.FlatMapGroupsWithStateExec): Codecs => {
  const kIn = toInternal(p.keySchema)
  const kOut = toExternal(p.keySchema)
  const sIn = toInternal(p.stateSchema)
  const sOut = toExternal(p.stateSchema)
  const oIn = toInternal(p.outputSchema)
  const outputType = T.simpleString(p.outputSchema)
  const toKey = stateKey(p.keySchema.fields.map((f) => f.dataType))
  const nullKey = p.keySchema.fields.map(() => null)
  return {
    keyToInternal: p.keyIsStruct ? kIn : (k) => kIn({ value: k }),
    keyToExternal: p.keyIsStruct ? kOut : (k) => (kOut(k) as { value: unknown } | null)?.value ?? null,
    // the key's fields joined as every operator's state key (WatermarkSupport.stateKey), so the
    // state reader parses it back with the key schema; a null struct key counts as all-null fields
    keyString: (k) => toKey((k as ReadonlyArray<unknown> | null) ?? nullKey),
    keyCompare: comparator(p.keySchema),
    stateToInternal: p.stateIsStruct ? sIn : (s) => sIn({ value: s }),
    stateToExternal: p.stateIsStruct ? sOut : (s) => (sOut(s) as { value: unknown } | null)?.value ?? undefined,
    keyToJSON: valueToJSON(p.keySchema),
    keyFromJSON: guardDecode("a flatMapGroupsWithState key", valueFromJSON(p.keySchema)),
    stateToJSON: valueToJSON(p.stateSchema),
    stateFromJSON: guardDecode("a flatMapGroupsWithState state", valueFromJSON(p.stateSchema)),
    outputRow: (o) => {
      const row = oIn(p.outputIsStruct ? o : { value: o })
      if (row === null) {
        // Spark's encoder cannot serialize a null object as a top-level row either.
        throw new Error(`[flat]MapGroupsWithState returned ${String(o)} where a row of ${outputType} was expected`)
      }
      return row as InternalRow
    }
  }
}

/** One key of the batch: its internal key, state key and external rows. */
interface Group {
  readonly key: unknown
  readonly id: string
  readonly rows: Array<unknown>
  /** The initial state's (internal) value for this key, first batch only. */
  initial?: unknown
  hasInitial: boolean
}

/** Groups the external rows by key, in first-seen order; sorted by the caller. */
const groupRows = (
  p: P.FlatMapGroupsWithStateExec,
  c: Codecs,
  rows: ReadonlyArray<unknown>,
  into: Map<string, Group>
) => {
  const keyFn = p.keyFn
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]
    const key = c.keyToInternal(keyFn(row))
    const id = c.keyString(key)
    const g = into.get(id)
    if (g === undefined) into.set(id, { key, id, rows: [row], hasInitial: false })
    else g.rows.push(row)
  }
}

/** Adds the initial state's keys (columns `key` and `state`); a key twice is an error. */
const addInitialState = (
  p: P.FlatMapGroupsWithStateExec,
  c: Codecs,
  rows: ReadonlyArray<InternalRow>,
  into: Map<string, Group>
): void => {
  const plan = p.initialState
  if (plan === undefined) return
  const ki = plan.output.findIndex((a) => a.name === "key")
  const si = plan.output.findIndex((a) => a.name === "state")
  // The builder checked both columns exist; an analyzer rewrite that lost them is a bug.
  if (ki < 0 || si < 0) throw new Error("the initial state of [flat]MapGroupsWithState has no `key` or `state` column")
  const keyExt = toExternal(plan.output[ki].dataType)
  const stateExt = toExternal(plan.output[si].dataType)
  const seen = new Set<string>()
  for (const row of rows) {
    const key = c.keyToInternal(keyExt(row[ki]))
    const id = c.keyString(key)
    if (seen.has(id)) throw duplicateInitialKey()
    seen.add(id)
    const state = c.stateToInternal(stateExt(row[si]))
    const g = into.get(id)
    if (g === undefined) into.set(id, { key, id, rows: [], initial: state, hasInitial: true })
    else {
      g.initial = state
      g.hasInitial = true
    }
  }
}

const sortedGroups = (c: Codecs, groups: Map<string, Group>): Array<Group> =>
  [...groups.values()].sort((a, b) => c.keyCompare(a.key, b.key))

/** Calls the user function and collects its output (the iterable fully consumed). */
const callFunction = (
  p: P.FlatMapGroupsWithStateExec,
  c: Codecs,
  key: unknown,
  rows: ReadonlyArray<unknown>,
  state: GroupStateImpl<unknown>,
  out: Array<InternalRow>
): void => {
  for (const o of p.fn(c.keyToExternal(key), rows, state)) out.push(c.outputRow(o))
}

/**
 * `callFunction` for a micro-batch: whatever the function, its iterable or the conversion of
 * its output throws is wrapped in `FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR` (Spark's
 * `withUserFuncExceptionHandling` in `FlatMapGroupsWithStateExec`, SPARK-49474), except a tagged
 * tributary error such as `GroupStateError` (Spark passes a `SparkThrowable` through).
 */
const callUserFunction = (
  p: P.FlatMapGroupsWithStateExec,
  c: Codecs,
  key: unknown,
  rows: ReadonlyArray<unknown>,
  state: GroupStateImpl<unknown>,
  out: Array<InternalRow>
): void => {
  try {
    callFunction(p, c, key, rows, state, out)
  } catch (e) {
    // GroupStateError and an already wrapped error are tagged too
    if (isTaggedError(e)) throw e
    throw FlatMapGroupsWithStateUserFuncError.wrap(e)
  }
}

/**
 * Runs the operator over a batch input (Spark's `MapGroupsExec`, or `CoGroupExec` with an initial
 * state): every key once, with no stored state, never timed out.
 *
 * @since 0.1.0
 */
export const executeBatchGroupsWithState = (
  p: P.FlatMapGroupsWithStateExec,
  rows: ReadonlyArray<InternalRow>,
  initialRows: ReadonlyArray<InternalRow> | undefined,
  nowMs: number
): ReadonlyArray<InternalRow> => {
  const c = codecs(p)
  const external = toExternal(structOf(p.child.output))
  const groups = new Map<string, Group>()
  groupRows(
    p,
    c,
    rows.map((r) => external(r)),
    groups
  )
  if (initialRows !== undefined) addInitialState(p, c, initialRows, groups)
  const watermarkPresent = findEventTimeColumn(p.child.output) !== undefined
  const out: Array<InternalRow> = []
  for (const g of sortedGroups(c, groups)) {
    const state = GroupStateImpl.createForBatch<unknown>(
      p.timeout,
      watermarkPresent,
      nowMs,
      g.hasInitial ? c.stateToExternal(g.initial) : undefined
    )
    callFunction(p, c, g.key, g.rows, state, out)
  }
  return out
}

/** A stored entry, decoded. */
interface Stored {
  readonly key: unknown
  /** Internal state, `undefined` for none. */
  readonly state: unknown
  readonly timeoutTimestamp: number
}

/**
 * Runs the operator over a micro-batch: reads and writes the key states in its store, calls the
 * function per key with data (and initial state in the first batch) and then per timed-out key,
 * commits and reports progress.
 *
 * @since 0.1.0
 */
export const executeFlatMapGroupsWithState = (
  p: P.FlatMapGroupsWithStateExec,
  rows: ReadonlyArray<InternalRow>,
  initialRows: ReadonlyArray<InternalRow> | undefined,
  ctx: StatefulContext,
  batchTimestampMs: number
): Effect.Effect<ReadonlyArray<InternalRow>, StateStoreError> =>
  Effect.suspend(() => {
    const c = codecs(p)
    const timeoutEnabled = p.timeout !== "NoTimeout"
    const input = p.child.output
    const et = findEventTimeColumn(input)
    const watermarkPresent = et !== undefined
    const evictionWm = operatorWatermarks(p, ctx).evictionMs
    const external = toExternal(structOf(input))

    // 1. Late rows are dropped only with an event-time timeout (Spark's processDataWithPartition).
    const lateWm = operatorWatermarks(p, ctx).lateEventsMs
    let droppedByWatermark = 0
    const kept: Array<unknown> = []
    const etIndex = et === undefined ? -1 : input.indexOf(et)
    const timeOf = et === undefined ? undefined : eventTimeOf(et.dataType)
    const filterLate = p.timeout === "EventTimeTimeout" && timeOf !== undefined && lateWm !== undefined
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]
      if (filterLate && atOrBelow(timeOf(row[etIndex]), lateWm)) {
        droppedByWatermark++
        continue
      }
      kept.push(external(row))
    }
    const groups = new Map<string, Group>()
    groupRows(p, c, kept, groups)
    if (initialRows !== undefined) addInitialState(p, c, initialRows, groups)
    const ordered = sortedGroups(c, groups)

    const decode = (json: unknown): Stored => {
      if (!Array.isArray(json) || json.length !== (timeoutEnabled ? 3 : 2)) {
        throw new CorruptState("a flatMapGroupsWithState state value is not [key, state, timeout]")
      }
      const t = timeoutEnabled ? json[2] : NO_TIMESTAMP
      if (typeof t !== "number") throw new CorruptState("a flatMapGroupsWithState timeout is not a number")
      return {
        key: c.keyFromJSON(json[0]),
        state: json[1] === null ? undefined : c.stateFromJSON(json[1]),
        timeoutTimestamp: t
      }
    }
    const encode = (key: unknown, state: unknown, timeout: number): unknown => {
      const k = c.keyToJSON(key)
      const s = state === undefined ? null : c.stateToJSON(state)
      return timeoutEnabled ? [k, s, timeout] : [k, s]
    }

    return withOperatorStore(ctx, p.operatorId, flatMapGroupsWithStateSchema(p), (store) =>
      Effect.gen(function* () {
        yield* store.load(ordered.map((g) => g.id))
        const out: Array<InternalRow> = []
        let updated = 0
        let removed = 0

        /**
         * Spark's `callFunctionAndUpdateState` with its `onIteratorCompletion`; returns the
         * key's timeout timestamp afterwards (`NO_TIMESTAMP` for none).
         */
        const callAndUpdate = (
          id: string,
          stored: Stored,
          groupRows: ReadonlyArray<unknown>,
          hasTimedOut: boolean
        ): number => {
          const state = GroupStateImpl.createForStreaming<unknown>(
            stored.state === undefined ? undefined : c.stateToExternal(stored.state),
            batchTimestampMs,
            evictionWm ?? NO_TIMESTAMP,
            p.timeout,
            hasTimedOut,
            watermarkPresent
          )
          callUserFunction(p, c, stored.key, groupRows, state, out)
          const timeout = state.getTimeoutTimestampMs()
          if (state.isRemoved && timeout === undefined) {
            store.remove(id)
            removed++
            return NO_TIMESTAMP
          }
          const current = timeout ?? NO_TIMESTAMP
          if (state.isUpdated || state.isRemoved || current !== stored.timeoutTimestamp) {
            store.put(id, encode(stored.key, state.exists ? c.stateToInternal(state.get()) : undefined, current))
            updated++
            return current
          }
          return stored.timeoutTimestamp
        }

        // 2. The batch's keys (and the initial state's, in the first batch), in key order.
        const [, updatesMs] = yield* timed(
          decodingState(p.operatorId, () => {
            for (const g of ordered) {
              if (g.hasInitial) store.put(g.id, encode(g.key, g.initial, NO_TIMESTAMP))
              const json = store.get(g.id)
              const stored: Stored =
                json === undefined ? { key: g.key, state: undefined, timeoutTimestamp: NO_TIMESTAMP } : decode(json)
              callAndUpdate(g.id, { ...stored, key: g.key }, g.rows, false)
            }
          })
        )

        // 3. Timeouts, after all the data (Spark's processTimedOutState).
        let removalsMs = 0
        // The earliest timeout still pending after this batch (processing time: the engine is
        // asked for a batch once it can fire).
        let nextTimeout = Number.POSITIVE_INFINITY
        const pending = (t: number) => {
          if (t !== NO_TIMESTAMP && t < nextTimeout) nextTimeout = t
        }
        const threshold =
          p.timeout === "ProcessingTimeTimeout"
            ? batchTimestampMs
            : p.timeout === "EventTimeTimeout"
              ? evictionWm
              : undefined
        if (threshold !== undefined) {
          const [, ms] = yield* timed(
            Effect.flatMap(store.scan(), (entries) =>
              decodingState(p.operatorId, () => {
                const due: Array<readonly [string, Stored]> = []
                for (const [id, json] of entries) {
                  const s = decode(json)
                  if (s.timeoutTimestamp !== NO_TIMESTAMP && s.timeoutTimestamp < threshold) due.push([id, s])
                  else pending(s.timeoutTimestamp)
                }
                due.sort((a, b) => c.keyCompare(a[1].key, b[1].key))
                for (const [id, s] of due) pending(callAndUpdate(id, s, [], true))
              })
            )
          )
          removalsMs = ms
        }

        if (p.timeout === "ProcessingTimeTimeout" && ctx.requestBatchAt !== undefined) {
          // A timeout fires in the first batch whose timestamp is strictly above it: Spark runs
          // a batch every trigger for that; asking for one then is the same for the output.
          ctx.requestBatchAt(p.operatorId, Number.isFinite(nextTimeout) ? nextTimeout + 1 : undefined)
        }
        yield* commitAndReport(ctx, p.operatorId, store, {
          operatorName,
          numRowsUpdated: updated,
          allUpdatesTimeMs: updatesMs,
          numRowsRemoved: removed,
          allRemovalsTimeMs: removalsMs,
          numRowsDroppedByWatermark: droppedByWatermark
        })
        return out
      })
    )
  })
