/**
 * Timers and TTL of a `transformWithState` operator (Spark's `TimerStateImpl` and `TTLState`):
 * the timers' store keeps, per grouping key, its timers ascending; the handle registers, deletes
 * and lists them (only while processing, and not in `TimeMode.None`); a batch selects the timers
 * due at its timestamp (or watermark) in time order, and removes the values whose TTL expired.
 *
 * @since 0.1.0
 */
import { Corrupt, misuse, PHASE_ORDER, type VarDecl } from "./TransformWithStateDeclarations.ts"
import type { OperatorStateStore } from "./StatefulContext.ts"
import { bump, expired, implicitKey, noteMapSize, type Runtime } from "./TransformWithStateVariables.ts"

/** A timers entry: the key's JSON and its timers, ascending. */
export const timersOf = (rt: Runtime, key: string): Array<number> => {
  const e = rt.timers?.get(key)
  if (e === undefined) return []
  if (!Array.isArray(e) || !Array.isArray(e[1])) throw new Corrupt("a timers entry is not [key, timers]")
  return e[1] as Array<number>
}

export const writeTimers = (rt: Runtime, key: string, keyJson: unknown, list: ReadonlyArray<number>): void => {
  if (list.length === 0) rt.timers?.remove(key)
  else rt.timers?.put(key, [keyJson, list])
}

/** Spark's `verifyTimerOperations`. */
export const verifyTimers = (rt: Runtime, operation: string): void => {
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

export const checkTimestamp = (ts: number): void => {
  if (typeof ts !== "number" || !Number.isFinite(ts)) {
    throw misuse("STATEFUL_PROCESSOR_INVALID_TIMER", `A timer needs a finite timestamp in ms, got ${String(ts)}.`)
  }
}

/** The handle's `registerTimer`: one timer per timestamp and key, kept ascending; every call counts. */
export const registerTimer = (rt: Runtime, ts: number): void => {
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
}

/** The handle's `deleteTimer`: every call counts, whether the timer existed or not. */
export const deleteTimer = (rt: Runtime, ts: number): void => {
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
}

/** The handle's `listTimers`: the current key's timers, ascending. */
export const listTimers = (rt: Runtime): ReadonlyArray<number> => {
  verifyTimers(rt, "list_timers")
  return timersOf(rt, implicitKey(rt, "timers")).slice()
}

/**
 * The timers due at `threshold` (the batch timestamp, or the watermark in event time), ascending
 * by time, then by key (Spark's timestamp-first secondary index).
 */
export const dueTimers = (
  entries: Iterable<readonly [string, unknown]>,
  threshold: number
): Array<{ readonly text: string; readonly keyJson: unknown; readonly ts: number }> => {
  const list: Array<{ readonly text: string; readonly keyJson: unknown; readonly ts: number }> = []
  for (const [text, value] of entries) {
    if (!Array.isArray(value) || !Array.isArray(value[1])) throw new Corrupt("a timers entry is not [key, timers]")
    for (const ts of value[1] as ReadonlyArray<number>) if (ts <= threshold) list.push({ text, keyJson: value[0], ts })
  }
  return list.sort((a, b) => a.ts - b.ts || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0))
}

/** The earliest timer in the timers' store (`Infinity` without any). */
export const earliestTimer = (entries: Iterable<readonly [string, unknown]>): number => {
  let next = Number.POSITIVE_INFINITY
  for (const [, value] of entries) {
    const list = Array.isArray(value) ? (value[1] as ReadonlyArray<number>) : []
    if (list.length > 0) next = Math.min(next, list[0])
  }
  return next
}

/**
 * TTL cleanup of one state variable (Spark's `TTLState.clearExpiredStateForAllKeys`): every value
 * whose expiry is at or below the batch timestamp is removed (`numValuesRemovedDueToTTLExpiry`, and a
 * removed row); returns the earliest expiry left, for the operator's next deadline.
 */
export const expireTtl = (
  rt: Runtime,
  v: VarDecl,
  store: OperatorStateStore,
  entries: Iterable<readonly [string, unknown]>,
  batchTimestampMs: number
): number => {
  let next = Number.POSITIVE_INFINITY
  for (const [key, e] of entries) {
    if (!Array.isArray(e)) throw new Corrupt(`an entry of state variable ${v.name} is not one`)
    if (v.kind === "value") {
      if (expired(e[2], batchTimestampMs)) {
        store.remove(key)
        bump(rt, "numValuesRemovedDueToTTLExpiry")
        rt.removedRows++
      } else if (typeof e[2] === "number") next = Math.min(next, e[2])
      continue
    }
    const at = v.kind === "list" ? 1 : 2
    const list = e[1] as ReadonlyArray<ReadonlyArray<unknown>>
    const keep = list.filter((x) => !expired(x[at], batchTimestampMs))
    for (const x of keep) if (typeof x[at] === "number") next = Math.min(next, x[at] as number)
    if (keep.length === list.length) continue
    bump(rt, "numValuesRemovedDueToTTLExpiry", list.length - keep.length)
    if (v.kind === "map") noteMapSize(rt, v.name, list.length, keep.length)
    rt.removedRows += list.length - keep.length
    if (keep.length === 0) store.remove(key)
    else store.put(key, [e[0], keep])
  }
  return next
}
