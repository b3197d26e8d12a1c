/**
 * `Window` and `WindowSpec`: Spark's window specifications for analytic functions
 * (`F.row_number().over(Window.partitionBy("k").orderBy("v"))`, `F.sum("x").over(w)`).
 *
 * A `WindowSpec` is immutable: every method returns a new one. Frame boundaries follow Spark's
 * `WindowSpec.rowsBetween` / `rangeBetween`: `Window.unboundedPreceding` (Long.MinValue),
 * `Window.unboundedFollowing` (Long.MaxValue) and `Window.currentRow` (0) are the special
 * boundaries; other values are offsets from the current row (negative ones precede it). A row
 * offset outside the int range is Spark's `INVALID_BOUNDARY.START` / `.END`, reported by the
 * analyzer when the window is used.
 *
 * @example
 * ```ts
 * import { F, Window } from "tributary-streaming"
 * const w = Window.partitionBy("category").orderBy("id")
 * const cols = [
 *   F.row_number().over(w).as("rn"),
 *   F.sum("id").over(w.rowsBetween(Window.currentRow, 1)).as("sum")
 * ]
 * ```
 * @since 0.7.0
 */
import { type ColumnOrName, toColumnExpr, type WindowSpecLike } from "./Column.ts"
import type * as E from "./Expression.ts"

const LONG_MIN = -(2n ** 63n)
const LONG_MAX = 2n ** 63n - 1n
const INT_MIN = -2147483648n
const INT_MAX = 2147483647n

const CURRENT_ROW: E.FrameBoundary = { _tag: "CurrentRow" }
const UNBOUNDED_PRECEDING: E.FrameBoundary = { _tag: "UnboundedPreceding" }
const UNBOUNDED_FOLLOWING: E.FrameBoundary = { _tag: "UnboundedFollowing" }

const toBig = (v: number | bigint): bigint => {
  if (typeof v === "bigint") return v
  if (!Number.isFinite(v)) return v < 0 ? LONG_MIN : LONG_MAX
  // a number at or beyond ±2^63 is the nearest long: Long.MinValue / Long.MaxValue
  if (v <= -(2 ** 63)) return LONG_MIN
  if (v >= 2 ** 63) return LONG_MAX
  return BigInt(Math.trunc(v))
}

const invalidBoundary = (which: "start" | "end", v: bigint): string =>
  `[INVALID_BOUNDARY.${which.toUpperCase()}] The boundary \`${which}\` is invalid: ${v}L. Expected the value is '0', '${
    which === "start" ? `${LONG_MIN}L` : `${LONG_MAX}L`
  }', '[${INT_MIN}, ${INT_MAX}]'.`

/**
 * A window specification: partitioning, ordering and frame. Make one with {@link Window}.
 *
 * @since 0.7.0
 */
export class WindowSpec implements WindowSpecLike {
  readonly partitionSpec: ReadonlyArray<E.Expression>
  readonly orderSpec: ReadonlyArray<E.Expression>
  /** `undefined`: Spark's `UnspecifiedFrame` (the analyzer picks the default). */
  readonly frame: E.WindowFrame | undefined
  /** A builder error (`INVALID_BOUNDARY`), reported by the analyzer where the window is used. */
  readonly invalid: string | undefined

  constructor(
    partitionSpec: ReadonlyArray<E.Expression>,
    orderSpec: ReadonlyArray<E.Expression>,
    frame: E.WindowFrame | undefined,
    invalid?: string
  ) {
    this.partitionSpec = partitionSpec
    this.orderSpec = orderSpec
    this.frame = frame
    this.invalid = invalid
  }

  /** The partitioning columns (replacing any given before). */
  partitionBy(...cols: ReadonlyArray<ColumnOrName>): WindowSpec {
    return new WindowSpec(cols.map(toColumnExpr), this.orderSpec, this.frame, this.invalid)
  }

  /** The ordering columns (replacing any given before); a plain column sorts ascending, nulls first. */
  orderBy(...cols: ReadonlyArray<ColumnOrName>): WindowSpec {
    return new WindowSpec(this.partitionSpec, cols.map(toColumnExpr), this.frame, this.invalid)
  }

  /**
   * A row frame from `start` to `end` (both inclusive), as positions relative to the current row.
   * Offsets must fit in an int (Spark's `INVALID_BOUNDARY` otherwise).
   */
  rowsBetween(start: number | bigint, end: number | bigint): WindowSpec {
    const s = toBig(start)
    const e = toBig(end)
    const offset = (v: bigint): E.FrameBoundary | undefined =>
      v >= INT_MIN && v <= INT_MAX ? { _tag: "Offset", value: Number(v) } : undefined
    const lower = s === 0n ? CURRENT_ROW : s === LONG_MIN ? UNBOUNDED_PRECEDING : offset(s)
    const upper = e === 0n ? CURRENT_ROW : e === LONG_MAX ? UNBOUNDED_FOLLOWING : offset(e)
    const invalid =
      this.invalid ??
      (lower === undefined ? invalidBoundary("start", s) : upper === undefined ? invalidBoundary("end", e) : undefined)
    const frame: E.WindowFrame = { frameType: "rows", lower: lower ?? CURRENT_ROW, upper: upper ?? CURRENT_ROW }
    return new WindowSpec(this.partitionSpec, this.orderSpec, frame, invalid)
  }

  /**
   * A range frame from `start` to `end` (both inclusive), as offsets from the current row's
   * order key: over a single numeric order key, unless both ends are unbounded or the current row.
   */
  rangeBetween(start: number | bigint, end: number | bigint): WindowSpec {
    const s = toBig(start)
    const e = toBig(end)
    const lower: E.FrameBoundary =
      s === 0n
        ? { _tag: "CurrentRow" }
        : s === LONG_MIN
          ? { _tag: "UnboundedPreceding" }
          : { _tag: "Offset", value: Number(s) }
    const upper: E.FrameBoundary =
      e === 0n
        ? { _tag: "CurrentRow" }
        : e === LONG_MAX
          ? { _tag: "UnboundedFollowing" }
          : { _tag: "Offset", value: Number(e) }
    return new WindowSpec(this.partitionSpec, this.orderSpec, { frameType: "range", lower, upper }, this.invalid)
  }
}

/**
 * Spark's `Window`: the static builders of a {@link WindowSpec} and the special frame boundaries.
 *
 * @example
 * ```ts
 * import { F, Window } from "tributary-streaming"
 * const running = F.sum("amount").over(
 *   Window.partitionBy("shop").orderBy("ts").rowsBetween(Window.unboundedPreceding, Window.currentRow)
 * )
 * ```
 * @since 0.7.0
 */
export const Window = {
  /** Spark's `Window.unboundedPreceding`: `Long.MinValue`. */
  unboundedPreceding: LONG_MIN,
  /** Spark's `Window.unboundedFollowing`: `Long.MaxValue`. */
  unboundedFollowing: LONG_MAX,
  /** Spark's `Window.currentRow`: `0`. */
  currentRow: 0,
  /** A window partitioned by these columns. */
  partitionBy: (...cols: ReadonlyArray<ColumnOrName>): WindowSpec =>
    new WindowSpec([], [], undefined).partitionBy(...cols),
  /** A window ordered by these columns. */
  orderBy: (...cols: ReadonlyArray<ColumnOrName>): WindowSpec => new WindowSpec([], [], undefined).orderBy(...cols),
  /** A window over the whole input with this row frame. */
  rowsBetween: (start: number | bigint, end: number | bigint): WindowSpec =>
    new WindowSpec([], [], undefined).rowsBetween(start, end),
  /** A window over the whole input with this range frame. */
  rangeBetween: (start: number | bigint, end: number | bigint): WindowSpec =>
    new WindowSpec([], [], undefined).rangeBetween(start, end)
} as const
