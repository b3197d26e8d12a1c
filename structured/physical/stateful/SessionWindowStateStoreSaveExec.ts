/**
 * A streaming aggregation over a session window (Spark's `SessionWindowStateStoreRestoreExec`,
 * `MergingSessionsExec` and `SessionWindowStateStoreSaveExec`).
 *
 * The state holds, per key of the other grouping columns, that key's sessions (start, end and
 * aggregate buffers), sorted by start. Per batch:
 *
 * 1. every event opens a span `[t, t + gap)` (a null time, or a gap that is null, zero or
 *    negative, drops the event, as Spark's `SessionWindowing`); events with the same key and span
 *    are folded together (Spark's partial aggregate keyed by the per-event session window);
 * 2. spans whose end is at or below the late-events watermark are dropped and counted
 *    (`numRowsDroppedByWatermark`, Spark's restore operator filters on the session's end);
 * 3. for each key in the batch, the new spans and the stored sessions are merged in start order
 *    (a stored session before a new span with the same start) and a span that starts at or before
 *    the current session's end extends it (`MergingSessionsExec`); the key's sessions are replaced
 *    (`numRowsUpdated` counts every session put, `numRowsRemoved` every stored session whose start
 *    is gone, as Spark's `updateSessions`);
 * 4. by output mode: `complete` outputs every session; `append` outputs and removes the sessions
 *    whose end is at or below the eviction watermark; `update` (which Spark's checker refuses for
 *    session windows) outputs the sessions that are new or changed in this batch and removes
 *    expired ones without output.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { type CompileContext, compile, dataTypeOf } from "../../../core/Compile.ts"
import * as T from "../../../core/DataType.ts"
import { type CalendarInterval, parseInterval } from "../../../core/Durations.ts"
import type { StateStoreError } from "../../../core/Errors.ts"
import { addMonths, MS_PER_DAY, msToDays } from "../../../core/functions/DateTimeUtils.ts"
import type { InternalRow } from "../../../core/Row.ts"
import { groupingKey } from "../HashKeys.ts"
import type * as P from "../SparkPlan.ts"
import {
  aggregateFields,
  asArray,
  buffersFromJSON,
  buffersToJSON,
  type CompiledAggregation,
  compileAggregation,
  evaluateBuffers,
  initBuffers,
  mergeBuffers
} from "./AggregationBuffers.ts"
import { commitAndReport, CorruptState, decodingState, guardDecode, timed, withOperatorStore } from "./OperatorState.ts"
import type { OperatorStateSchema, StatefulContext } from "./StatefulContext.ts"
import { atOrBelow, eventTimeOf, stateKey } from "./WatermarkSupport.ts"
import { operatorWatermarks } from "./WatermarkPropagator.ts"

/**
 * The store's schemas: the key is the grouping columns other than the session window; the value
 * is those columns followed by `sessions`, an array of `start`, `end` and one field per aggregate.
 *
 * @since 0.1.0
 */
export const sessionWindowStateSchema = (
  p: P.StatefulAggregateExec,
  spec: P.SessionWindowSpec
): OperatorStateSchema => {
  const others = p.groupingAttributes
    .filter((_, i) => i !== spec.index)
    .map((a) => T.field(a.name, a.dataType, a.nullable))
  const session = T.struct([
    T.field("start", T.TimestampType, false),
    T.field("end", T.TimestampType, false),
    ...aggregateFields(p)
  ])
  return {
    keySchema: T.struct(others),
    valueSchema: T.struct([...others, T.field("sessions", T.array(session, false), false)])
  }
}

/** `ts + interval` as Spark's `TimeAdd` in UTC: months move the calendar date, then days and time. */
const addInterval = (ts: number, iv: CalendarInterval): number => {
  let t = ts
  if (iv.months !== 0) {
    const days = msToDays(t)
    t = addMonths(days, iv.months) * MS_PER_DAY + (t - days * MS_PER_DAY)
  }
  return t + iv.days * MS_PER_DAY + Math.floor(iv.micros / 1000)
}

/**
 * The end of the span an event at `ts` opens: `ts + gap`, where the gap is milliseconds (a
 * duration literal), an interval string (a per-row gap column) or an interval; null when the gap
 * is null or not an interval.
 */
const spanEnd = (ts: number, gap: unknown): number | null => {
  if (gap === null || gap === undefined) return null
  if (typeof gap === "number") return Number.isFinite(gap) ? ts + gap : null
  if (typeof gap === "string") {
    const iv = parseInterval(gap)
    return iv === undefined ? null : addInterval(ts, iv)
  }
  if (typeof gap === "object" && "months" in gap && "days" in gap && "micros" in gap) {
    return addInterval(ts, gap as CalendarInterval)
  }
  return null
}

/** A session, or a span of the batch not yet merged (`seq`: arrival order, for stable ties). */
interface Session {
  readonly start: number
  end: number
  bufs: Array<unknown>
  readonly seq: number
}

/** The batch's spans of one key of the other grouping columns. */
interface KeyGroup {
  readonly key: string
  readonly values: Array<unknown>
  readonly spans: Map<string, Session>
}

const decodeSessions = (c: CompiledAggregation, nOthers: number, json: unknown): Array<Session> => {
  const a = asArray(json, "a session window state value")
  if (a.length !== nOthers + 1) {
    throw new CorruptState(`expected ${nOthers + 1} fields in a session window state value, found ${a.length}`)
  }
  const list = asArray(a[nOthers], "the sessions of a key")
  const out = new Array<Session>(list.length)
  for (let i = 0; i < list.length; i++) {
    const s = asArray(list[i], "a session")
    const start = s[0]
    const end = s[1]
    if (typeof start !== "number" || typeof end !== "number") throw new CorruptState("a session without start and end")
    out[i] = { start, end, bufs: buffersFromJSON(c.impls, s, 2), seq: -1 }
  }
  return out
}

const encodeSession = (c: CompiledAggregation, s: Session): Array<unknown> => [
  s.start,
  s.end,
  ...buffersToJSON(c.impls, s.bufs)
]

const encodeValue = (
  c: CompiledAggregation,
  others: ReadonlyArray<number>,
  values: ReadonlyArray<unknown>,
  sessions: ReadonlyArray<Session>
): unknown => {
  const out: Array<unknown> = []
  for (let i = 0; i < others.length; i++) out.push(c.encodeGrouping[others[i]](values[i]))
  out.push(sessions.map((s) => encodeSession(c, s)))
  return out
}

const decodeValues = (c: CompiledAggregation, others: ReadonlyArray<number>, json: unknown): Array<unknown> => {
  const a = asArray(json, "a session window state value")
  return others.map((col, i) => guardDecode(`grouping value ${col}`, c.decodeGrouping[col])(a[i]))
}

/**
 * Spark's `MergingSortWithSessionWindowStateIterator` + `MergingSessionsIterator` for one key:
 * stored sessions and new spans in start order (a stored session first on equal starts), each
 * span starting at or before the current session's end joining it.
 */
const mergeSessions = (
  c: CompiledAggregation,
  stored: ReadonlyArray<Session>,
  spans: ReadonlyArray<Session>
): Array<Session> => {
  const ordered: Array<Session> = []
  let i = 0
  let j = 0
  while (i < stored.length || j < spans.length) {
    if (j >= spans.length || (i < stored.length && !(spans[j].start < stored[i].start))) ordered.push(stored[i++])
    else ordered.push(spans[j++])
  }
  const out: Array<Session> = []
  let cur: Session | undefined
  for (const s of ordered) {
    if (cur !== undefined && s.start <= cur.end) {
      if (s.end > cur.end) cur.end = s.end
      cur.bufs = mergeBuffers(c.impls, cur.bufs, s.bufs)
    } else {
      if (cur !== undefined) out.push(cur)
      cur = { start: s.start, end: s.end, bufs: s.bufs, seq: s.seq }
    }
  }
  if (cur !== undefined) out.push(cur)
  return out
}

const sameSession = (c: CompiledAggregation, a: Session, b: Session): boolean =>
  a.start === b.start &&
  a.end === b.end &&
  JSON.stringify(buffersToJSON(c.impls, a.bufs)) === JSON.stringify(buffersToJSON(c.impls, b.bufs))

/**
 * Runs a session-window aggregation over its child's rows for the batch `ctx` describes,
 * commits its store and reports its progress; returns the rows to emit, ordered like `p.output`.
 *
 * @since 0.1.0
 */
export const executeSessionWindowAggregate = (
  p: P.StatefulAggregateExec,
  spec: P.SessionWindowSpec,
  rows: ReadonlyArray<InternalRow>,
  ctx: StatefulContext,
  cctx: CompileContext
): Effect.Effect<ReadonlyArray<InternalRow>, StateStoreError> =>
  Effect.suspend(() => {
    const mode = ctx.outputMode
    const c = compileAggregation(p, cctx)
    const input = p.child.output
    const nG = p.groupingExpressions.length
    const nA = c.impls.length
    const others: Array<number> = []
    for (let col = 0; col < nG; col++) if (col !== spec.index) others.push(col)
    const oEvals = others.map((col) => c.groupingEvals[col])
    const oTypes = others.map((col) => c.groupingTypes[col])
    const oNorms = others.map((col) => c.groupingNorms[col])
    const batchKey = groupingKey(oEvals, oTypes)
    const toStateKey = stateKey(oTypes)
    const timeEval = compile(spec.window.timeColumn, input, cctx)
    const timeIsDate = dataTypeOf(spec.window.timeColumn)._tag === "date"
    const gapEval = compile(spec.window.gap, input, cctx)

    // 1. Spans per key, events with the same key and span folded together.
    const index = new Map<unknown, KeyGroup>()
    const groups: Array<KeyGroup> = []
    let seq = 0
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r]
      const raw = timeEval(row)
      if (raw === null || raw === undefined) continue
      const ts = timeIsDate ? (raw as number) * MS_PER_DAY : (raw as number)
      const end = spanEnd(ts, gapEval(row))
      if (end === null || !(end > ts)) continue
      const k = batchKey(row)
      let g = index.get(k)
      if (g === undefined) {
        const values = new Array<unknown>(others.length)
        for (let i = 0; i < others.length; i++) {
          const v = oEvals[i](row)
          const norm = oNorms[i]
          values[i] = norm === undefined ? (v === undefined ? null : v) : norm(v)
        }
        g = { key: toStateKey(values), values, spans: new Map() }
        index.set(k, g)
        groups.push(g)
      }
      const spanKey = `${ts},${end}`
      let s = g.spans.get(spanKey)
      if (s === undefined) {
        s = { start: ts, end, bufs: initBuffers(c.impls), seq: seq++ }
        g.spans.set(spanKey, s)
      }
      for (let j = 0; j < nA; j++) s.bufs[j] = c.impls[j].update(s.bufs[j], row)
    }

    // 2. Late spans (Spark's SessionWindowStateStoreRestoreExec filters on the event-time column:
    // the session's end when the session is over the watermarked column).
    const timeOf = sessionEventTime(p, spec, others)
    const lateWm = timeOf === undefined ? undefined : operatorWatermarks(p, ctx).lateEventsMs
    let droppedByWatermark = 0
    const live: Array<{ readonly group: KeyGroup; readonly spans: Array<Session> }> = []
    for (const g of groups) {
      const spans: Array<Session> = []
      for (const s of g.spans.values()) {
        if (timeOf !== undefined && atOrBelow(timeOf(g.values, s), lateWm)) droppedByWatermark++
        else spans.push(s)
      }
      if (spans.length === 0) continue
      // The restore operator's input is sorted by the session window: start, then end.
      spans.sort((a, b) => a.start - b.start || a.end - b.end || a.seq - b.seq)
      live.push({ group: g, spans })
    }

    const evictWm = mode === "complete" || timeOf === undefined ? undefined : operatorWatermarks(p, ctx).evictionMs
    const outputRow = (values: ReadonlyArray<unknown>, s: Session): InternalRow => {
      const inter = new Array<unknown>(nG + nA)
      for (let i = 0; i < others.length; i++) inter[others[i]] = values[i]
      inter[spec.index] = [s.start, s.end]
      const results = evaluateBuffers(c.impls, s.bufs)
      for (let j = 0; j < nA; j++) inter[nG + j] = results[j]
      return c.result(inter)
    }

    return withOperatorStore(ctx, p.operatorId, sessionWindowStateSchema(p, spec), (store) =>
      Effect.gen(function* () {
        yield* store.load(live.map((l) => l.group.key))
        const out: Array<InternalRow> = []
        let updated = 0
        let removed = 0
        // 3. Merge with the stored sessions and replace the key's sessions.
        const [merged, updatesMs] = yield* timed(
          decodingState(p.operatorId, () => {
            const byKey = new Map<string, { readonly values: Array<unknown>; readonly sessions: Array<Session> }>()
            for (const { group, spans } of live) {
              const json = store.get(group.key)
              const stored = json === undefined ? [] : decodeSessions(c, others.length, json)
              // Kept before merging, which folds buffers into the stored sessions.
              const before = mode === "update" ? decodeSessionsCopy(c, others.length, json) : []
              const sessions = mergeSessions(c, stored, spans)
              store.put(group.key, encodeValue(c, others, group.values, sessions))
              updated += sessions.length
              const starts = new Set(sessions.map((s) => s.start))
              for (const s of stored) if (!starts.has(s.start)) removed++
              if (mode === "update") {
                for (const s of sessions) {
                  const old = before.find((b) => b.start === s.start)
                  if (old === undefined || !sameSession(c, old, s)) out.push(outputRow(group.values, s))
                }
              }
              byKey.set(group.key, { values: group.values, sessions })
            }
            return byKey
          })
        )
        // 4. Output and evict by output mode; count the sessions left.
        let total = 0
        const [, removalsMs] = yield* timed(
          Effect.flatMap(store.scan(), (entries) =>
            decodingState(p.operatorId, () => {
              const changes: Array<readonly [string, unknown | undefined]> = []
              for (const [key, value] of entries) {
                const m = merged.get(key)
                const values = m?.values ?? decodeValues(c, others, value)
                const sessions = m?.sessions ?? decodeSessions(c, others.length, value)
                if (mode === "complete" || evictWm === undefined) {
                  if (mode === "complete") for (const s of sessions) out.push(outputRow(values, s))
                  total += sessions.length
                  continue
                }
                const keep: Array<Session> = []
                for (const s of sessions) {
                  if (timeOf !== undefined && atOrBelow(timeOf(values, s), evictWm)) {
                    removed++
                    if (mode === "append") out.push(outputRow(values, s))
                  } else keep.push(s)
                }
                total += keep.length
                if (keep.length !== sessions.length) {
                  changes.push([key, keep.length === 0 ? undefined : encodeValue(c, others, values, keep)])
                }
              }
              // Applied after the scan, so the scan never sees its own changes.
              for (const [key, value] of changes) {
                if (value === undefined) store.remove(key)
                else store.put(key, value)
              }
            })
          )
        )
        yield* commitAndReport(ctx, p.operatorId, store, {
          operatorName: "sessionWindowStateStoreSaveExec",
          numRowsTotal: total,
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

/**
 * Spark's `findEventTimeColumn` over the restore operator's input (the grouping columns in
 * order): the session window when its time column carries the watermark (Spark's
 * `SessionWindowing` copies the marker), compared by its end; else the first other grouping
 * column that carries it; else none (no late rows, no eviction).
 */
const sessionEventTime = (
  p: P.StatefulAggregateExec,
  spec: P.SessionWindowSpec,
  others: ReadonlyArray<number>
): ((values: ReadonlyArray<unknown>, s: Session) => number | undefined) | undefined => {
  const tc = spec.window.timeColumn
  const sessionMarked =
    p.groupingAttributes[spec.index].eventTimeDelayMs !== undefined ||
    (tc._tag === "AttributeReference" &&
      (tc.eventTimeDelayMs !== undefined ||
        p.child.output.some((a) => a.exprId === tc.exprId && a.eventTimeDelayMs !== undefined)))
  for (let col = 0; col < p.groupingAttributes.length; col++) {
    if (col === spec.index) {
      if (sessionMarked) return (_, s) => s.end
      continue
    }
    const a = p.groupingAttributes[col]
    if (a.eventTimeDelayMs !== undefined) {
      const i = others.indexOf(col)
      const of = eventTimeOf(a.dataType)
      return (values) => of(values[i])
    }
  }
  return undefined
}

/** The stored sessions decoded afresh (merging mutates the buffers of the first decode). */
const decodeSessionsCopy = (c: CompiledAggregation, nOthers: number, json: unknown): Array<Session> =>
  json === undefined ? [] : decodeSessions(c, nOthers, json)
