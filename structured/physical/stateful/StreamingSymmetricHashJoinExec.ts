/**
 * A join of two streams over one micro-batch (Spark's `StreamingSymmetricHashJoinExec`, state
 * format version 2 with the `matched` flag).
 *
 * Each side keeps its past input rows in two state stores, as Spark's
 * `SymmetricHashJoinStateManager` does: `<side>-keyToNumValues` (join key → number of stored
 * rows) and `<side>-keyWithIndexToValue` ((join key, index) → the row and whether it has ever
 * matched). Per batch:
 *
 * 1. rows with a null `=` key part on a side that Spark's optimizer guards with an inferred
 *    `isnotnull` filter are dropped uncounted; then late rows (event time at or below the
 *    late-events watermark, on each side's own event-time column) are dropped and counted
 *    (`numRowsDroppedByWatermark`);
 * 2. the new left rows join with the stored right rows and are stored; then the new right rows
 *    join with the stored left rows, this batch's left rows included (Spark's "tiny asymmetry"
 *    that avoids emitting a new pair twice). A row that fails the condition on its own side
 *    alone can never match: it is not stored, and an outer join emits it at once with nulls. A
 *    right row that the state watermark would evict in this very batch is not stored either,
 *    unless a right or full outer join still has to emit it unmatched;
 * 3. left semi: a new left row that matches is emitted once and not stored; a new right row
 *    emits each stored left row it is the first to match;
 * 4. state below the state watermark of each side (state-key or state-value watermark, see
 *    `StreamingSymmetricHashJoinHelper.ts`) is removed; an outer join emits the removed rows of
 *    its outer side(s) that never matched, padded with nulls.
 *
 * Progress (`operatorName: "symmetricHashJoin"`) sums both sides: `numRowsTotal` counts stored
 * rows (the `keyWithIndexToValue` entries), `numRowsUpdated` the rows stored in this batch and
 * `numRowsRemoved` the rows removed by the final cleanup pass — as in Spark, the rows an outer
 * join removes from its outer side while emitting null-padded rows are not counted.
 *
 * A `<=>` key part compares null with null; with `=` a row whose key has a null never matches
 * (it is kept only when an outer join may have to emit it). Spark's full outer join, whose
 * inputs no inferred filter guards, looks such rows up by the key's bytes and so pairs null keys
 * of the two sides; tributary keeps SQL's `=` there (no Spark test covers it).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { type CompileContext, compile, compilePredicate, dataTypeOf, nullableOf } from "../../../core/Compile.ts"
import * as T from "../../../core/DataType.ts"
import type { StateStoreError } from "../../../core/Errors.ts"
import { valueFromJSON, valueToJSON } from "../../../core/functions/Aggregates.ts"
import * as E from "../../../core/Expression.ts"
import type { InternalRow } from "../../../core/Row.ts"
import type * as P from "../SparkPlan.ts"
import { CorruptState, decodingState, timed } from "./OperatorState.ts"
import type {
  OperatorStateSchema,
  OperatorStateStore,
  OperatorStoreMetrics,
  StatefulContext
} from "./StatefulContext.ts"
import {
  type JoinSide,
  type JoinStateWatermarkPredicate,
  stateWatermarkPredicates,
  usesWatermarkForStateCleanup
} from "./StreamingSymmetricHashJoinHelper.ts"
import { atOrBelow, eventTimeOf, findEventTimeColumn, stateKey } from "./WatermarkSupport.ts"
import { operatorWatermarks } from "./WatermarkPropagator.ts"

/**
 * Spark's `shortName` of the operator, reported as `stateOperators[].operatorName`.
 *
 * @since 0.1.0
 */
export const operatorName = "symmetricHashJoin"

/** Separates the join key from the index in a `keyWithIndexToValue` key (as `stateKey` joins parts). */
const SEP = "\u0001"

/**
 * Spark's store names of one side (`SymmetricHashJoinStateManager.getStateStoreName`).
 *
 * @since 0.1.0
 */
export const storeNames = (
  side: JoinSide
): { readonly keyToNumValues: string; readonly keyWithIndexToValue: string } => ({
  keyToNumValues: `${side}-keyToNumValues`,
  keyWithIndexToValue: `${side}-keyWithIndexToValue`
})

/**
 * The four stores of the operator with Spark's schemas (`getSchemaForStateStores`, format 2):
 * keys `field0, field1, …` of the join key types; `keyToNumValues` values `{value: long}`;
 * `keyWithIndexToValue` keys with an `index` and values the side's input columns plus `matched`.
 *
 * @since 0.1.0
 */
export const joinStateStores = (
  p: P.StreamingSymmetricHashJoinExec
): ReadonlyArray<{ readonly storeName: string; readonly schema: OperatorStateSchema }> => {
  const keyFields = p.leftKeys.map((k, i) => T.field(`field${i}`, dataTypeOf(k), nullableOf(k)))
  const side = (s: JoinSide, input: ReadonlyArray<{ name: string; dataType: T.DataType; nullable: boolean }>) => {
    const names = storeNames(s)
    return [
      {
        storeName: names.keyToNumValues,
        schema: { keySchema: T.struct(keyFields), valueSchema: T.struct([T.field("value", T.LongType, true)]) }
      },
      {
        storeName: names.keyWithIndexToValue,
        schema: {
          keySchema: T.struct([...keyFields, T.field("index", T.LongType, true)]),
          valueSchema: T.struct([
            ...input.map((a) => T.field(a.name, a.dataType, a.nullable)),
            T.field("matched", T.BooleanType, true)
          ])
        }
      }
    ]
  }
  return [...side("left", p.left.output), ...side("right", p.right.output)]
}

/**
 * Spark's `StreamingSymmetricHashJoinExec.shouldRunAnotherBatch`: a batch without data is due
 * when the join removes state by the watermark and the new watermark is past the eviction
 * watermark of the last batch (outer rows may now be emitted, state removed).
 *
 * @since 0.1.0
 */
export const joinShouldRunAnotherBatch = (
  p: P.StreamingSymmetricHashJoinExec,
  newWatermarkMs: number,
  currentEvictionWatermarkMs: number | undefined
): boolean =>
  currentEvictionWatermarkMs !== undefined &&
  newWatermarkMs > currentEvictionWatermarkMs &&
  usesWatermarkForStateCleanup(p.left.output, p.right.output, p.leftKeys, p.rightKeys, p.condition.full)

/** A stored row of one side. */
interface Entry {
  readonly row: InternalRow
  matched: boolean
}

/** A row's join key, or `undefined` when a `=` part is null (it can match nothing). */
type KeyOf = (row: InternalRow) => { readonly key: string; readonly matchable: boolean }

const makeKeyOf = (
  keys: ReadonlyArray<P.StreamingSymmetricHashJoinExec["leftKeys"][number]>,
  input: P.SparkPlan["output"],
  types: ReadonlyArray<T.DataType>,
  nullSafe: ReadonlyArray<boolean>,
  cctx: CompileContext
): KeyOf => {
  const evals = keys.map((k) => compile(k, input, cctx))
  const toKey = stateKey(types)
  const n = evals.length
  const scratch = new Array<unknown>(n)
  return (row) => {
    let matchable = true
    for (let i = 0; i < n; i++) {
      const v = evals[i](row)
      scratch[i] = v === undefined ? null : v
      if (scratch[i] === null && !nullSafe[i]) matchable = false
    }
    return { key: toKey(scratch), matchable }
  }
}

/** The side's row codec: internal values ↔ JSON, the `matched` flag last. */
const rowCodec = (input: P.SparkPlan["output"]) => {
  const enc = input.map((a) => valueToJSON(a.dataType))
  const dec = input.map((a) => valueFromJSON(a.dataType))
  const n = input.length
  return {
    encode: (row: InternalRow, matched: boolean): Array<unknown> => {
      const out = new Array<unknown>(n + 1)
      for (let i = 0; i < n; i++) out[i] = enc[i](row[i])
      out[n] = matched
      return out
    },
    width: n,
    decodeColumn: (i: number, json: unknown): unknown => dec[i](json),
    decode: (json: unknown): Entry => {
      if (!Array.isArray(json) || json.length !== n + 1 || typeof json[n] !== "boolean") {
        throw new CorruptState("a stream-stream join state value is not [...row, matched]")
      }
      const row = new Array<unknown>(n)
      for (let i = 0; i < n; i++) row[i] = dec[i](json[i])
      return { row, matched: json[n] as boolean }
    }
  }
}

const countOf = (json: unknown): number => {
  if (json === undefined) return 0
  if (!Array.isArray(json) || typeof json[0] !== "number") {
    throw new CorruptState("a stream-stream join keyToNumValues value is not [count]")
  }
  return json[0]
}

/**
 * One side's state for the batch (Spark's `SymmetricHashJoinStateManager`): the stored rows of
 * the keys the batch touches, read once; every change is written through to the two stores.
 */
class SideState {
  readonly operatorId: number
  readonly counts: OperatorStateStore
  readonly values: OperatorStateStore
  readonly codec: ReturnType<typeof rowCodec>
  readonly cache = new Map<string, Array<Entry>>()
  /** Keys whose number of values changed by appends (written once, by `flushCounts`). */
  readonly grown = new Set<string>()
  appended = 0

  constructor(
    operatorId: number,
    counts: OperatorStateStore,
    values: OperatorStateStore,
    codec: ReturnType<typeof rowCodec>
  ) {
    this.operatorId = operatorId
    this.counts = counts
    this.values = values
    this.codec = codec
  }

  /** Reads the stored rows of `keys` (two batched reads). */
  load(keys: ReadonlyArray<string>, incoming: ReadonlyMap<string, number>): Effect.Effect<void, StateStoreError> {
    return Effect.gen({ self: this }, function* () {
      yield* this.counts.load(keys)
      const indexKeys: Array<string> = []
      const counted: Array<readonly [string, number]> = []
      yield* decodingState(this.operatorId, () => {
        for (const k of keys) {
          const n = countOf(this.counts.get(k))
          counted.push([k, n])
          // The indexes this batch may append are read too (as absent): the store then knows
          // every key it commits without another read.
          const m = n + (incoming.get(k) ?? 0)
          for (let i = 0; i < m; i++) indexKeys.push(k + SEP + i)
        }
      })
      yield* this.values.load(indexKeys)
      yield* decodingState(this.operatorId, () => {
        for (const [k, n] of counted) {
          const list: Array<Entry> = []
          for (let i = 0; i < n; i++) {
            const json = this.values.get(k + SEP + i)
            if (json === undefined) throw new CorruptState(`join state key has ${n} values but index ${i} is missing`)
            list.push(this.codec.decode(json))
          }
          this.cache.set(k, list)
        }
      })
    })
  }

  get(key: string): ReadonlyArray<Entry> {
    return this.cache.get(key) ?? []
  }

  append(key: string, row: InternalRow, matched: boolean): void {
    let list = this.cache.get(key)
    if (list === undefined) {
      list = []
      this.cache.set(key, list)
    }
    this.values.put(key + SEP + list.length, this.codec.encode(row, matched))
    list.push({ row, matched })
    this.grown.add(key)
    this.appended++
  }

  /** Writes the number of values of the keys that grew (before any removal). */
  flushCounts(): void {
    for (const key of this.grown) this.counts.put(key, [this.cache.get(key)?.length ?? 0])
    this.grown.clear()
  }

  markMatched(key: string, index: number, entry: Entry): void {
    if (entry.matched) return
    entry.matched = true
    this.values.put(key + SEP + index, this.codec.encode(entry.row, true))
  }

  /**
   * Removes every stored row the eviction test selects (Spark's `removeByKeyCondition` /
   * `removeByValueCondition`; a key's remaining rows are renumbered 0 … n-1) and returns them.
   * Only the columns the test reads are decoded for the test; whole rows only for the removed.
   */
  removeWhere(evict: Evictor): Effect.Effect<{ removed: Array<Entry>; minKept: number }, StateStoreError> {
    return Effect.flatMap(this.values.scan(), (scanned) =>
      decodingState(this.operatorId, () => {
        const entries = Array.isArray(scanned) ? (scanned as ReadonlyArray<readonly [string, unknown]>) : [...scanned]
        const scratch = new Array<unknown>(this.codec.width).fill(null)
        const { columns, test, timeOf } = evict
        const affected = new Set<string>()
        let minKept = Number.POSITIVE_INFINITY
        for (let e = 0; e < entries.length; e++) {
          const json = entries[e][1]
          if (!Array.isArray(json)) throw new CorruptState("a stream-stream join state value is not an array")
          for (const c of columns) scratch[c] = this.codec.decodeColumn(c, json[c])
          if (test(scratch)) affected.add(keyPart(entries[e][0]))
          else {
            const t = timeOf(scratch)
            if (t !== undefined && t < minKept) minKept = t
          }
        }
        const removed: Array<Entry> = []
        if (affected.size === 0) return { removed, minKept }
        const byKey = new Map<string, Array<readonly [number, unknown]>>()
        for (const [ik, json] of entries) {
          const k = keyPart(ik)
          if (!affected.has(k)) continue
          let list = byKey.get(k)
          if (list === undefined) {
            list = []
            byKey.set(k, list)
          }
          list.push([Number(ik.slice(k.length + 1)), json])
        }
        for (const [k, list] of byKey) {
          list.sort((a, b) => a[0] - b[0])
          const keep: Array<unknown> = []
          for (const [, json] of list) {
            const e = this.codec.decode(json)
            if (test(e.row)) removed.push(e)
            else keep.push(json)
          }
          for (let i = 0; i < keep.length; i++) {
            if (list[i][0] !== i || list[i][1] !== keep[i]) this.values.put(k + SEP + i, keep[i])
          }
          for (let i = keep.length; i < list.length; i++) this.values.remove(k + SEP + i)
          if (keep.length === 0) this.counts.remove(k)
          else this.counts.put(k, [keep.length])
          this.cache.delete(k)
        }
        return { removed, minKept }
      })
    )
  }
}

/** The join key of a `keyWithIndexToValue` key (everything before the last separator). */
const keyPart = (indexKey: string): string => {
  const cut = indexKey.lastIndexOf(SEP)
  if (cut < 0) throw new CorruptState("a keyWithIndexToValue key has no index")
  return indexKey.slice(0, cut)
}

/** A state watermark predicate compiled over a side's rows, with the columns it reads. */
interface Evictor {
  readonly columns: ReadonlyArray<number>
  readonly watermarkMs: number
  /** The time the predicate compares (the key's window end or time, or the row's event time). */
  readonly timeOf: (row: InternalRow) => number | undefined
  readonly test: (row: InternalRow) => boolean
}

/**
 * What the last batch of this plan left in state, per side: the smallest time the state
 * watermark predicate compares, over the stored rows (`+Infinity` for none, `undefined` when
 * unknown). A batch whose watermark is below it (and whose new rows are all above it) can skip
 * the scan of the side's state: nothing there is evictable. Kept per physical plan object, so
 * only within one run of a query; the batch after a restart scans (`batchId` must follow on).
 */
const stateTimeHints = new WeakMap<
  P.StreamingSymmetricHashJoinExec,
  { readonly batchId: number; readonly left: number | undefined; readonly right: number | undefined }
>()

const nulls = (n: number): InternalRow => new Array<unknown>(n).fill(null)

/**
 * Spark's join `customMetrics`: the state store provider's custom metrics of each side's
 * `keyWithIndexToValue` store (`SymmetricHashJoinStateManager.metrics`), summed over the sides
 * (`StateStoreMetrics.combine`). Stores that report none give none.
 */
const joinCustomMetrics = (...stores: ReadonlyArray<OperatorStoreMetrics>): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const m of stores) {
    const custom = (m as OperatorStoreMetrics & { readonly customMetrics?: Readonly<Record<string, number>> })
      .customMetrics
    if (custom === undefined) continue
    for (const [k, v] of Object.entries(custom)) out[k] = (out[k] ?? 0) + v
  }
  return out
}

/**
 * Runs the join over both children's rows for the batch `ctx` describes, commits its four
 * stores and reports its progress; returns the joined rows (matches first, then the outer rows
 * the watermark released).
 *
 * @since 0.1.0
 */
export const executeStreamingSymmetricHashJoin = (
  p: P.StreamingSymmetricHashJoinExec,
  leftInput: ReadonlyArray<InternalRow>,
  rightInput: ReadonlyArray<InternalRow>,
  ctx: StatefulContext,
  cctx: CompileContext
): Effect.Effect<ReadonlyArray<InternalRow>, StateStoreError> =>
  Effect.suspend(() => {
    const joinType = p.joinType
    const leftOut = p.left.output
    const rightOut = p.right.output
    const nL = leftOut.length
    const nR = rightOut.length
    const keyTypes = p.leftKeys.map((k) => dataTypeOf(k))
    const leftKeyOf = makeKeyOf(p.leftKeys, leftOut, keyTypes, p.nullSafe, cctx)
    const rightKeyOf = makeKeyOf(p.rightKeys, rightOut, keyTypes, p.nullSafe, cctx)
    const always = () => true
    const leftPre =
      p.condition.leftSideOnly === undefined ? always : compilePredicate(p.condition.leftSideOnly, leftOut, cctx)
    const rightPre =
      p.condition.rightSideOnly === undefined ? always : compilePredicate(p.condition.rightSideOnly, rightOut, cctx)
    const post =
      p.condition.bothSides === undefined
        ? always
        : compilePredicate(p.condition.bothSides, [...leftOut, ...rightOut], cctx)
    const leftOuter = joinType === "left_outer" || joinType === "full_outer"
    const rightOuter = joinType === "right_outer" || joinType === "full_outer"
    const semi = joinType === "left_semi"

    // 1. Rows with a null `=` key part where Spark's optimizer filters them out before the join,
    // then late rows, on each side's own event-time column. Spark infers `isnotnull(key)` from
    // an equi-join key (InferFiltersFromConstraints) for both sides of an inner or left semi join
    // and for the side a left or right outer join does not preserve (none for a full outer
    // join): those rows never reach the join, so they are not counted as late either.
    const lateWm = operatorWatermarks(p, ctx).lateEventsMs
    let dropped = 0
    const admit = (
      rows: ReadonlyArray<InternalRow>,
      input: P.SparkPlan["output"],
      keyOf: KeyOf,
      preserved: boolean
    ): { readonly rows: ReadonlyArray<InternalRow>; readonly keys: ReadonlyArray<ReturnType<KeyOf>> } => {
      const et = lateWm === undefined ? undefined : findEventTimeColumn(input)
      const time = et === undefined ? undefined : compile(et, input, cctx)
      const timeOf = et === undefined ? undefined : eventTimeOf(et.dataType)
      const kept: Array<InternalRow> = []
      const keys: Array<ReturnType<KeyOf>> = []
      for (const r of rows) {
        const k = keyOf(r)
        if (!k.matchable && !preserved) continue
        if (time !== undefined && timeOf !== undefined && atOrBelow(timeOf(time(r)), lateWm as number)) {
          dropped++
          continue
        }
        kept.push(r)
        keys.push(k)
      }
      return { rows: kept, keys }
    }
    const leftAdmitted = admit(leftInput, leftOut, leftKeyOf, leftOuter)
    const rightAdmitted = admit(rightInput, rightOut, rightKeyOf, rightOuter)
    const leftRows = leftAdmitted.rows
    const rightRows = rightAdmitted.rows

    // The state watermark predicates for this batch's eviction watermark.
    const evictWm = operatorWatermarks(p, ctx).evictionMs
    const predicates = stateWatermarkPredicates(leftOut, rightOut, p.leftKeys, p.rightKeys, p.condition.full, evictWm)
    const evictor = (
      pred: JoinStateWatermarkPredicate | undefined,
      keys: P.StreamingSymmetricHashJoinExec["leftKeys"],
      input: P.SparkPlan["output"]
    ): Evictor | undefined => {
      if (pred === undefined) return undefined
      const expr = pred._tag === "KeyPredicate" ? keys[pred.keyOrdinal] : pred.eventTime
      const ev = compile(expr, input, cctx)
      const timeOf = eventTimeOf(dataTypeOf(expr))
      const wm = pred.watermarkMs
      const ids = new Set(E.references(expr).map((a) => a.exprId))
      const columns: Array<number> = []
      input.forEach((a, i) => {
        if (ids.has(a.exprId)) columns.push(i)
      })
      return {
        columns,
        watermarkMs: wm,
        timeOf: (row) => timeOf(ev(row)),
        test: (row) => atOrBelow(timeOf(ev(row)), wm)
      }
    }
    const leftEvict = evictor(predicates.left, p.leftKeys, leftOut)
    const rightEvict = evictor(predicates.right, p.rightKeys, rightOut)

    const leftKeys = leftAdmitted.keys
    const rightKeys = rightAdmitted.keys
    const perKey = (ks: ReadonlyArray<{ readonly key: string }>): Map<string, number> => {
      const m = new Map<string, number>()
      for (const k of ks) m.set(k.key, (m.get(k.key) ?? 0) + 1)
      return m
    }
    const leftIncoming = perKey(leftKeys)
    const rightIncoming = perKey(rightKeys)
    const touched = new Set<string>()
    for (const k of leftKeys) touched.add(k.key)
    for (const k of rightKeys) touched.add(k.key)
    const touchedKeys = [...touched]

    const stores = joinStateStores(p)
    const open = (i: number) => ctx.openStore(p.operatorId, stores[i].storeName, stores[i].schema)
    return Effect.gen(function* () {
      const opened: Array<OperatorStateStore> = []
      const abortAll = Effect.suspend(() => Effect.forEach(opened, (s) => s.abort(), { discard: true }))
      return yield* Effect.onError(
        Effect.gen(function* () {
          for (let i = 0; i < 4; i++) opened.push(yield* open(i))
          const left = new SideState(p.operatorId, opened[0], opened[1], rowCodec(leftOut))
          const right = new SideState(p.operatorId, opened[2], opened[3], rowCodec(rightOut))
          const out: Array<InternalRow> = []
          let leftAddedEvictable = false
          let rightAddedEvictable = false
          let leftAddedMin = Number.POSITIVE_INFINITY
          let rightAddedMin = Number.POSITIVE_INFINITY

          const [, updatesMs] = yield* timed(
            Effect.gen(function* () {
              yield* left.load(touchedKeys, leftIncoming)
              yield* right.load(touchedKeys, rightIncoming)
              // 2. New left rows against the stored right rows; every left row is stored
              // (even one this batch evicts: it has not yet met this batch's right rows).
              for (let r = 0; r < leftRows.length; r++) {
                const row = leftRows[r]
                if (!leftPre(row)) {
                  if (leftOuter) out.push([...row, ...nulls(nR)])
                  continue
                }
                const { key, matchable } = leftKeys[r]
                let matched = false
                if (matchable) {
                  const others = right.get(key)
                  for (let i = 0; i < others.length; i++) {
                    const o = others[i]
                    const joined = [...row, ...o.row]
                    if (!post(joined)) continue
                    matched = true
                    right.markMatched(key, i, o)
                    if (semi) break
                    out.push(joined)
                  }
                }
                if (semi && matched) {
                  // Left semi: a matching left row is emitted once and never stored.
                  out.push(row)
                  continue
                }
                if (!matchable && !leftOuter) continue
                left.append(key, row, matched)
                if (leftEvict !== undefined) {
                  if (leftEvict.test(row)) leftAddedEvictable = true
                  const t = leftEvict.timeOf(row)
                  if (t !== undefined && t < leftAddedMin) leftAddedMin = t
                }
              }
              // New right rows against the stored left rows, this batch's included.
              for (let r = 0; r < rightRows.length; r++) {
                const row = rightRows[r]
                if (!rightPre(row)) {
                  if (rightOuter) out.push([...nulls(nL), ...row])
                  continue
                }
                const { key, matchable } = rightKeys[r]
                let matched = false
                if (matchable) {
                  const others = left.get(key)
                  for (let i = 0; i < others.length; i++) {
                    const o = others[i]
                    // Left semi: a stored left row is emitted on its first match only.
                    if (semi && o.matched) continue
                    const joined = [...o.row, ...row]
                    if (!post(joined)) continue
                    matched = true
                    left.markMatched(key, i, o)
                    out.push(semi ? o.row : joined)
                  }
                }
                if (!matchable && !rightOuter) continue
                // A right row the state watermark evicts in this batch has met every left row
                // it ever can: it is stored only when an outer join must still emit it.
                const evictingNow = rightEvict?.test(row) === true
                if (!evictingNow || (rightOuter && !matched)) {
                  right.append(key, row, matched)
                  if (evictingNow) rightAddedEvictable = true
                  const t = rightEvict?.timeOf(row)
                  if (t !== undefined && t < rightAddedMin) rightAddedMin = t
                }
              }
            })
          )

          // 4. Remove the state below the state watermarks; outer sides emit their unmatched rows.
          // A side's state is scanned only when something in it can be evicted: when the last
          // batch of this run says what the smallest stored time is, by comparing it with the
          // state watermark; otherwise when the watermark moved since the last batch (which
          // removed everything it allowed) or a row stored now is below it.
          left.flushCounts()
          right.flushCounts()
          const moved = evictWm !== undefined && (lateWm === undefined || evictWm > lateWm)
          const hint = stateTimeHints.get(p)
          const known = hint !== undefined && hint.batchId === ctx.batchId - 1
          let removed = 0
          const sweep = (
            side: SideState,
            evict: Evictor | undefined,
            hinted: number | undefined,
            addedMin: number,
            addedEvictable: boolean,
            outer: boolean,
            pad: (row: InternalRow) => InternalRow
          ): Effect.Effect<number | undefined, StateStoreError> => {
            if (evict === undefined) return Effect.succeed(undefined)
            const before = known && hinted !== undefined ? Math.min(hinted, addedMin) : undefined
            const due = before !== undefined ? atOrBelow(before, evict.watermarkMs) : moved || addedEvictable
            if (!due) return Effect.succeed(before)
            return Effect.map(side.removeWhere(evict), ({ removed: gone, minKept }) => {
              if (outer) {
                for (const e of gone) if (!e.matched) out.push(pad(e.row))
              } else removed += gone.length
              return minKept
            })
          }
          const [[leftMin, rightMin], removalsMs] = yield* timed(
            Effect.all([
              sweep(left, leftEvict, hint?.left, leftAddedMin, leftAddedEvictable, leftOuter, (row) => [
                ...row,
                ...nulls(nR)
              ]),
              sweep(right, rightEvict, hint?.right, rightAddedMin, rightAddedEvictable, rightOuter, (row) => [
                ...nulls(nL),
                ...row
              ])
            ])
          )

          // The four stores are independent: their commits run side by side.
          const [metrics, commitMs] = yield* timed(
            Effect.forEach(opened, (s): Effect.Effect<OperatorStoreMetrics, StateStoreError> => s.commit(), {
              concurrency: "unbounded"
            })
          )
          stateTimeHints.set(p, { batchId: ctx.batchId, left: leftMin, right: rightMin })
          ctx.reportProgress(p.operatorId, {
            operatorName,
            // Spark counts each stored row once: the keyWithIndexToValue entries of both sides.
            numRowsTotal: metrics[1].numRowsTotal + metrics[3].numRowsTotal,
            numRowsUpdated: left.appended + right.appended,
            allUpdatesTimeMs: updatesMs,
            numRowsRemoved: removed,
            allRemovalsTimeMs: removalsMs,
            commitTimeMs: commitMs,
            memoryUsedBytes: metrics.reduce((a, m) => a + m.memoryUsedBytes, 0),
            numRowsDroppedByWatermark: dropped,
            customMetrics: joinCustomMetrics(metrics[1], metrics[3])
          })
          return out as ReadonlyArray<InternalRow>
        }),
        () => abortAll
      )
    })
  })
