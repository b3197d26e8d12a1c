/**
 * `transformWithState` over one micro-batch: the operator (Spark's `TransformWithStateExec`) and
 * its handle for the batch (`StatefulProcessorHandleImpl`).
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
 * engine knows the stores, and checks their schemas, before the first batch
 * (`TransformWithStateDeclarations.ts`).
 *
 * Values are stored with the Effect Schema's JSON codec, by field name, so a state schema may
 * gain optional fields across a restart (Spark's Avro schema evolution); each entry carries the
 * variable's kind, so a variable whose kind changed fails with
 * `STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE` when it is read (`TransformWithStateVariables.ts`).
 * Timers and TTL cleanup are in `TransformWithStateTimers.ts`; how the state reader decodes the
 * operator's stores is in `StateReaderSpec.ts`.
 *
 * @since 0.1.0
 */
import { Effect, type Schema } from "effect"
import * as T from "../../../core/DataType.ts"
import { StateStoreError } from "../../../core/Errors.ts"
import type { AttributeReference } from "../../../core/Expression.ts"
import { type InternalRow, toExternal, toInternal } from "../../../core/Row.ts"
import type { ExpiredTimerInfo, StatefulProcessorHandle, TimerValues, TTLConfig } from "../../contracts/StatefulProcessor.ts"
import type * as P from "../SparkPlan.ts"
import { timed } from "./OperatorState.ts"
import type { OperatorStateStore, StatefulContext } from "./StatefulContext.ts"
import {
  type AnyProcessor,
  checkDeclaration,
  checkName,
  checkProperties,
  Corrupt,
  discover,
  type Kind,
  Misuse,
  misuse,
  operatorName,
  PROPERTIES_KEY,
  propertiesOf,
  propertiesSchema,
  propertiesStoreName,
  schemaMessage,
  setHandle,
  storeSchema,
  timerSchema,
  timerStoreName,
  type VarDecl
} from "./TransformWithStateDeclarations.ts"
import { deleteTimer, dueTimers, earliestTimer, expireTtl, listTimers, registerTimer } from "./TransformWithStateTimers.ts"
import {
  bump,
  type Codec,
  codecOf,
  decodeWith,
  encodeWith,
  extraOf,
  makeListState,
  makeMapState,
  makeValueState,
  type Runtime
} from "./TransformWithStateVariables.ts"
import { atOrBelow, eventTimeOf, findEventTimeColumn } from "./WatermarkSupport.ts"
import { operatorWatermarks } from "./WatermarkPropagator.ts"

/**
 * A map entry holds a grouping key's whole map; Spark's map state keeps one state row per user
 * key, and its `numRowsTotal` counts them. The rows beyond one per grouping key are tracked here
 * per operator and map variable (read once per run with a scan, then kept up to date by each
 * batch's changes), and added to `numRowsTotal`.
 */
const mapExtraRows = new WeakMap<P.TransformWithStateExec, Map<string, number>>()

/**
 * Per operator (its plan node, the same object for every batch of a run): lower bounds of the
 * earliest TTL expiry and the earliest timer in its stores after the last batch. A batch whose
 * timestamp (or watermark) is below them skips scanning those stores: the scans, which read the
 * whole store, run only when something may be due (Spark reaches the same through its
 * timestamp-ordered secondary indexes). A restart starts without bounds and scans once.
 */
const bounds = new WeakMap<P.TransformWithStateExec, { readonly ttl: number; readonly timers: number }>()

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
    registerTimer: (ts) => registerTimer(rt, ts),
    deleteTimer: (ts) => deleteTimer(rt, ts),
    listTimers: () => listTimers(rt)
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
          const due = yield* guarded(opId, () => dueTimers(entries, threshold))
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
                nextTtl = Math.min(nextTtl, expireTtl(rt, v, stores.get(v.name)!, entries, batchTimestampMs))
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
          nextTimer = earliestTimer(yield* timers.scan())
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
