/**
 * `intersect`, `intersectAll`, `except` (`subtract`) and `exceptAll` over batch rows, by hashing.
 *
 * Spark rewrites these logical operators before planning: `ReplaceIntersectWithSemiJoin` and
 * `ReplaceExceptWithAntiJoin` (a `Distinct` over a left semi / anti join whose condition is
 * `<=>` on every column), `RewriteIntersectAll` and `RewriteExceptAll` (a union of both sides
 * with a marker column, an aggregate of the markers per row value and `ReplicateRows`). The
 * results here are those multisets: rows compare null-safely (null equals null), NaN equals NaN
 * and -0.0 equals 0.0, and, as the aggregate groups by every column, values come out normalized
 * (`NormalizeFloatingNumbers`: -0.0 as 0.0, inside structs and arrays too). Rows keep the order
 * of their first occurrence on the left (Spark gives no order).
 *
 * @since 0.2.0
 */
import type { InternalRow } from "../../core/Row.ts"
import { type Evaluator, groupingKey, normalizer } from "./HashKeys.ts"
import type * as P from "./SparkPlan.ts"

/**
 * The rows of a set operation, given both sides' rows (columns matched by position; the
 * analyzer has already cast both sides to the same types).
 *
 * @example
 * ```ts
 * import * as T from "../../core/DataType.ts"
 * import * as E from "../../core/Expression.ts"
 * import { setOperationRows } from "./SetOperationExec.ts"
 * const a = E.attribute("x", T.IntegerType, true)
 * const scan = (rows: Array<Array<unknown>>) => ({ _tag: "LocalTableScanExec" as const, output: [a], rows })
 * const left = scan([[1], [1], [2], [null]])
 * const right = scan([[1], [1], [1], [null]])
 * const p = { _tag: "SetOperationExec" as const, output: [a], kind: "intersect" as const, isAll: true, left, right }
 * setOperationRows(p, left.rows, right.rows) // [[1], [1], [null]]
 * ```
 * @since 0.2.0
 */
export const setOperationRows = (
  p: P.SetOperationExec,
  left: ReadonlyArray<InternalRow>,
  right: ReadonlyArray<InternalRow>
): ReadonlyArray<InternalRow> => {
  const types = p.left.output.map((a) => a.dataType)
  const evals: Array<Evaluator> = types.map((_, i) => (row) => row[i])
  const key = groupingKey(evals, types)
  const norms = types.map(normalizer)
  const normalize = norms.every((n) => n === undefined)
    ? (row: InternalRow): InternalRow => row
    : (row: InternalRow): InternalRow => row.map((v, i) => (norms[i] === undefined ? v : norms[i]!(v)))
  const out: Array<InternalRow> = []
  if (!p.isAll) {
    // Distinct rows of the left side that are (intersect) or are not (except) on the right.
    const onRight = new Set<unknown>()
    for (let i = 0; i < right.length; i++) onRight.add(key(right[i]))
    const keep = p.kind === "intersect"
    const emitted = new Set<unknown>()
    for (let i = 0; i < left.length; i++) {
      const k = key(left[i])
      if (onRight.has(k) !== keep || emitted.has(k)) continue
      emitted.add(k)
      out.push(normalize(left[i]))
    }
    return out
  }
  // A row occurring l times on the left and r times on the right comes out min(l, r) times
  // (intersectAll) or max(l - r, 0) times (exceptAll).
  const counts = new Map<unknown, number>()
  for (let i = 0; i < right.length; i++) {
    const k = key(right[i])
    counts.set(k, (counts.get(k) ?? 0) + 1)
  }
  const intersect = p.kind === "intersect"
  for (let i = 0; i < left.length; i++) {
    const k = key(left[i])
    const c = counts.get(k) ?? 0
    if (c > 0) counts.set(k, c - 1)
    if (c > 0 === intersect) out.push(normalize(left[i]))
  }
  return out
}
