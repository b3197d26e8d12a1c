/**
 * Spark's `WindowExec` over a batch: the rows grouped by the partition keys (nulls together,
 * NaN with NaN, as grouping does), each partition sorted by the order keys (stable, so ties keep
 * their input order), and every window expression evaluated per row.
 *
 * Frames follow Spark's `WindowFunctionFrame`s:
 * - ranking functions (`row_number`, `rank`, `dense_rank`, `percent_rank`, `cume_dist`,
 *   `ntile`) read the row's position and its peers (rows with equal order keys);
 * - `lag` / `lead` read the row `offset` rows away (Spark's `FrameLessOffsetWindowFunctionFrame`;
 *   with `ignoreNulls`, the `offset`-th row whose input is not null), `default` evaluated on the
 *   current row when there is none;
 * - aggregates and `nth_value` read the frame: `ROWS` bounds count rows, `RANGE` bounds compare
 *   the single order key plus the offset (minus it for a descending key, Spark's
 *   `createBoundOrdering`), `CURRENT ROW` in a range frame means the row's peers. A frame that
 *   starts at the partition (Spark's `UnboundedPrecedingWindowFunctionFrame`) grows one buffer,
 *   one that ends there (`UnboundedFollowingWindowFunctionFrame`) merges buffers from the end, a
 *   whole-partition frame evaluates once, and a sliding frame recomputes its rows.
 *
 * Output: partitions in the order their first row arrived, rows in window order inside each,
 * the child's columns then one per window expression.
 *
 * @since 0.7.0
 */
import { type CompileContext, compile, dataTypeOf } from "../../core/Compile.ts"
import type * as E from "../../core/Expression.ts"
import { type AggregateImpl, makeAggregate } from "../../core/functions/Aggregates.ts"
import { comparator } from "../../core/Ordering.ts"
import type { InternalRow } from "../../core/Row.ts"
import { type Evaluator, groupingKey } from "./HashKeys.ts"
import type * as P from "./SparkPlan.ts"

const isNull = (v: unknown): boolean => v === null || v === undefined

/** Compares order-key tuples as the window's `ORDER BY` does (nulls placed by their ordering). */
const keyComparator = (
  order: ReadonlyArray<E.SortOrder>
): ((a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>) => number) => {
  const cmps = order.map((o) => comparator(dataTypeOf(o.child)))
  const desc = order.map((o) => o.direction === "desc")
  const nullsFirst = order.map((o) => o.nullOrdering === "nullsFirst")
  const k = order.length
  return (a, b) => {
    for (let c = 0; c < k; c++) {
      const x = a[c]
      const y = b[c]
      const xn = isNull(x)
      const yn = isNull(y)
      if (xn || yn) {
        if (xn && yn) continue
        const r = xn ? -1 : 1
        return nullsFirst[c] ? r : -r
      }
      const r = cmps[c](x, y)
      if (r !== 0) return desc[c] ? -r : r
    }
    return 0
  }
}

/** One sorted partition as the functions see it. */
interface Partition {
  readonly rows: ReadonlyArray<InternalRow>
  /** Order-key tuples, one per row. */
  readonly keys: ReadonlyArray<ReadonlyArray<unknown>>
  /** Index of the first and last peer of each row. */
  readonly peerStart: Int32Array
  readonly peerEnd: Int32Array
}

/** Writes the values of one window expression for a partition into `out`. */
type WindowFn = (part: Partition, out: Array<unknown>) => void

const offsetValue = (e: E.Expression | undefined): number => {
  const lit = e?._tag === "Cast" ? e.child : e
  if (lit?._tag !== "Literal" || typeof lit.value !== "number") {
    throw new Error("window function offsets are literals (the analyzer checks them)")
  }
  return lit.value
}

/** `[lo, hi]` (inclusive, empty when lo > hi) of the frame of row `i`. */
type Bounds = (part: Partition, i: number) => readonly [number, number]

const frameBounds = (frame: E.WindowFrame, order: ReadonlyArray<E.SortOrder>): Bounds => {
  if (frame.frameType === "rows") {
    const at = (b: E.FrameBoundary, i: number, n: number): number => {
      switch (b._tag) {
        case "UnboundedPreceding":
          return 0
        case "UnboundedFollowing":
          return n - 1
        case "CurrentRow":
          return i
        case "Offset":
          return i + b.value
      }
    }
    return (part, i) => {
      const n = part.rows.length
      return [Math.max(0, at(frame.lower, i, n)), Math.min(n - 1, at(frame.upper, i, n))]
    }
  }
  // RANGE: value offsets compare the single order key (the analyzer checked it is numeric)
  const o = order[0]
  const desc = o?.direction === "desc"
  const cmp = o === undefined ? () => 0 : keyComparator([o])
  const boundValue = (k: unknown, v: number): unknown =>
    isNull(k) ? null : desc ? (k as number) - v : (k as number) + v
  const firstAtLeast = (part: Partition, bound: unknown): number => {
    let lo = 0
    let hi = part.rows.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cmp(part.keys[mid], [bound]) < 0) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  const lastAtMost = (part: Partition, bound: unknown): number => {
    let lo = 0
    let hi = part.rows.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cmp(part.keys[mid], [bound]) <= 0) lo = mid + 1
      else hi = mid
    }
    return lo - 1
  }
  const lower = (part: Partition, i: number): number => {
    const b = frame.lower
    switch (b._tag) {
      case "UnboundedPreceding":
        return 0
      case "UnboundedFollowing":
        return part.rows.length
      case "CurrentRow":
        return part.peerStart[i]
      case "Offset":
        return firstAtLeast(part, boundValue(part.keys[i][0], b.value))
    }
  }
  const upper = (part: Partition, i: number): number => {
    const b = frame.upper
    switch (b._tag) {
      case "UnboundedPreceding":
        return -1
      case "UnboundedFollowing":
        return part.rows.length - 1
      case "CurrentRow":
        return part.peerEnd[i]
      case "Offset":
        return lastAtMost(part, boundValue(part.keys[i][0], b.value))
    }
  }
  return (part, i) => [lower(part, i), upper(part, i)]
}

const aggregateFn = (
  agg: E.AggregateFunction,
  frame: E.WindowFrame,
  order: ReadonlyArray<E.SortOrder>,
  input: ReadonlyArray<E.AttributeReference>,
  cctx: CompileContext
): WindowFn => {
  const impl: AggregateImpl = makeAggregate(
    agg,
    agg.args.map((a) => compile(a, input, cctx)),
    agg.args.map(dataTypeOf)
  )
  const bounds = frameBounds(frame, order)
  const fromStart = frame.lower._tag === "UnboundedPreceding"
  const toEnd = frame.upper._tag === "UnboundedFollowing"
  return (part, out) => {
    const n = part.rows.length
    if (fromStart && toEnd) {
      let buf = impl.init()
      for (let j = 0; j < n; j++) buf = impl.update(buf, part.rows[j])
      // evaluate per row: a result shares nothing mutable with the buffer or another row's
      for (let i = 0; i < n; i++) out[i] = impl.evaluate(buf)
      return
    }
    if (fromStart) {
      // the frame's end only moves forward: one growing buffer
      let buf = impl.init()
      let added = 0
      for (let i = 0; i < n; i++) {
        const hi = bounds(part, i)[1]
        while (added <= hi && added < n) buf = impl.update(buf, part.rows[added++])
        out[i] = impl.evaluate(buf)
      }
      return
    }
    if (toEnd) {
      // the frame's start only moves forward: suffix buffers built from the end, each a row
      // merged before the rows after it (merge keeps first/last/collect_list's order)
      let buf = impl.init()
      let from = n
      for (let i = n - 1; i >= 0; i--) {
        const lo = Math.max(0, bounds(part, i)[0])
        while (from > lo) {
          from--
          buf = impl.merge(impl.update(impl.init(), part.rows[from]), buf)
        }
        out[i] = impl.evaluate(buf)
      }
      return
    }
    for (let i = 0; i < n; i++) {
      const [lo, hi] = bounds(part, i)
      let buf = impl.init()
      for (let j = Math.max(0, lo); j <= hi && j < n; j++) buf = impl.update(buf, part.rows[j])
      out[i] = impl.evaluate(buf)
    }
  }
}

const windowFunction = (
  fn: E.WindowFunction,
  frame: E.WindowFrame,
  order: ReadonlyArray<E.SortOrder>,
  input: ReadonlyArray<E.AttributeReference>,
  cctx: CompileContext
): WindowFn => {
  switch (fn.name) {
    case "row_number":
      return (part, out) => {
        for (let i = 0; i < part.rows.length; i++) out[i] = i + 1
      }
    case "rank":
      return (part, out) => {
        for (let i = 0; i < part.rows.length; i++) out[i] = part.peerStart[i] + 1
      }
    case "dense_rank":
      return (part, out) => {
        let r = 0
        for (let i = 0; i < part.rows.length; i++) {
          if (part.peerStart[i] === i) r++
          out[i] = r
        }
      }
    case "percent_rank":
      return (part, out) => {
        const n = part.rows.length
        for (let i = 0; i < n; i++) out[i] = n > 1 ? part.peerStart[i] / (n - 1) : 0
      }
    case "cume_dist":
      return (part, out) => {
        const n = part.rows.length
        for (let i = 0; i < n; i++) out[i] = (part.peerEnd[i] + 1) / n
      }
    case "ntile": {
      const buckets = offsetValue(fn.args[0])
      // Spark's NTile buffer: the first `n % buckets` buckets hold one row more
      return (part, out) => {
        const n = part.rows.length
        const size = Math.trunc(n / buckets)
        const padded = n % buckets
        let bucket = 0
        let threshold = 0
        for (let i = 0; i < n; i++) {
          if (i >= threshold) {
            threshold += size + (bucket < padded ? 1 : 0)
            bucket++
          }
          out[i] = bucket
        }
      }
    }
    case "lag":
    case "lead": {
      const inputEv = compile(fn.args[0], input, cctx)
      const defaultEv = compile(fn.args[2], input, cctx)
      const offset = fn.name === "lag" ? -offsetValue(fn.args[1]) : offsetValue(fn.args[1])
      const ignoreNulls = fn.ignoreNulls
      return (part, out) => {
        const n = part.rows.length
        for (let i = 0; i < n; i++) {
          if (!ignoreNulls || offset === 0) {
            const j = i + offset
            out[i] = j >= 0 && j < n ? inputEv(part.rows[j]) : defaultEv(part.rows[i])
            continue
          }
          // the |offset|-th row in the offset's direction whose input is not null
          const step = offset > 0 ? 1 : -1
          let left = Math.abs(offset)
          let found: unknown
          let hit = false
          for (let j = i + step; j >= 0 && j < n; j += step) {
            const v = inputEv(part.rows[j])
            if (isNull(v)) continue
            if (--left === 0) {
              found = v
              hit = true
              break
            }
          }
          out[i] = hit ? found : defaultEv(part.rows[i])
        }
      }
    }
    case "nth_value": {
      const inputEv: Evaluator = compile(fn.args[0], input, cctx)
      const k = offsetValue(fn.args[1])
      const bounds = frameBounds(frame, order)
      const ignoreNulls = fn.ignoreNulls
      return (part, out) => {
        const n = part.rows.length
        for (let i = 0; i < n; i++) {
          const [lo0, hi0] = bounds(part, i)
          const lo = Math.max(0, lo0)
          const hi = Math.min(n - 1, hi0)
          let v: unknown = null
          if (!ignoreNulls) {
            if (lo + k - 1 <= hi) v = inputEv(part.rows[lo + k - 1])
          } else {
            let left = k
            for (let j = lo; j <= hi; j++) {
              const x = inputEv(part.rows[j])
              if (isNull(x)) continue
              if (--left === 0) {
                v = x
                break
              }
            }
          }
          out[i] = v
        }
      }
    }
  }
}

/**
 * The rows of a `WindowExec` over its child's rows.
 *
 * @example
 * ```ts
 * import * as T from "../../core/DataType.ts"
 * import * as E from "../../core/Expression.ts"
 * import { windowRows } from "./WindowExec.ts"
 * const k = E.attribute("k", T.IntegerType)
 * const rn: E.WindowExpression = {
 *   _tag: "WindowExpression",
 *   function: { _tag: "WindowFunction", name: "row_number", args: [], ignoreNulls: false, dataType: T.IntegerType },
 *   partitionSpec: [],
 *   orderSpec: [{ _tag: "SortOrder", child: k, direction: "desc", nullOrdering: "nullsLast" }],
 *   frame: { frameType: "rows", lower: { _tag: "UnboundedPreceding" }, upper: { _tag: "CurrentRow" } }
 * }
 * const scan = { _tag: "LocalTableScanExec" as const, output: [k], rows: [[1], [3], [2]] }
 * const p = {
 *   _tag: "WindowExec" as const,
 *   output: [k],
 *   windowExpressions: [{ _tag: "Alias" as const, child: rn, name: "rn", exprId: E.newExprId() }],
 *   partitionSpec: [],
 *   orderSpec: rn.orderSpec,
 *   child: scan
 * }
 * windowRows(p, scan.rows, { currentTimestampMs: 0 }) // [[3, 1], [2, 2], [1, 3]]
 * ```
 * @since 0.7.0
 */
export const windowRows = (
  p: P.WindowExec,
  rows: ReadonlyArray<InternalRow>,
  cctx: CompileContext
): ReadonlyArray<InternalRow> => {
  const input = p.child.output
  const order = p.orderSpec as ReadonlyArray<E.SortOrder>
  const key = groupingKey(
    p.partitionSpec.map((e) => compile(e, input, cctx)),
    p.partitionSpec.map(dataTypeOf)
  )
  const orderEvals = order.map((o) => compile(o.child, input, cctx))
  const cmp = keyComparator(order)
  const fns: ReadonlyArray<WindowFn> = p.windowExpressions.map((named) => {
    const we = (named._tag === "Alias" ? named.child : named) as E.WindowExpression
    const frame = we.frame
    if (frame === undefined) throw new Error("WindowExec over an unresolved frame (a bug in the analyzer)")
    return we.function._tag === "AggregateFunction"
      ? aggregateFn(we.function, frame, order, input, cctx)
      : windowFunction(we.function as E.WindowFunction, frame, order, input, cctx)
  })
  const groups = new Map<unknown, Array<number>>()
  for (let i = 0; i < rows.length; i++) {
    const k = key(rows[i])
    const g = groups.get(k)
    if (g === undefined) groups.set(k, [i])
    else g.push(i)
  }
  const out: Array<InternalRow> = []
  const nW = fns.length
  for (const idx of groups.values()) {
    const keys = idx.map((i) => orderEvals.map((ev) => ev(rows[i])))
    const perm = idx.map((_, j) => j)
    perm.sort((a, b) => cmp(keys[a], keys[b]) || a - b)
    const part: Partition = {
      rows: perm.map((j) => rows[idx[j]]),
      keys: perm.map((j) => keys[j]),
      peerStart: new Int32Array(perm.length),
      peerEnd: new Int32Array(perm.length)
    }
    const n = perm.length
    for (let i = 0; i < n; i++) {
      part.peerStart[i] = i > 0 && cmp(part.keys[i - 1], part.keys[i]) === 0 ? part.peerStart[i - 1] : i
    }
    for (let i = n - 1; i >= 0; i--) {
      part.peerEnd[i] = i < n - 1 && cmp(part.keys[i + 1], part.keys[i]) === 0 ? part.peerEnd[i + 1] : i
    }
    const cols = fns.map(() => new Array<unknown>(n))
    for (let w = 0; w < nW; w++) fns[w](part, cols[w])
    for (let i = 0; i < n; i++) {
      const row = part.rows[i]
      const next = new Array<unknown>(row.length + nW)
      for (let c = 0; c < row.length; c++) next[c] = row[c]
      for (let w = 0; w < nW; w++) next[row.length + w] = cols[w][i]
      out.push(next)
    }
  }
  return out
}
