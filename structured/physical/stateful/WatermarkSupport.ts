/**
 * How stateful operators compare rows and state with the watermark (Spark's `WatermarkSupport`).
 *
 * The event-time column is the first attribute carrying a watermark delay (Spark's
 * `findEventTimeColumn`; the analyzer keeps the marker through aliases, `window` and
 * `session_window`). A row or a state key is "at or below" a watermark when its event time is
 * `<= watermark`; for a window struct (`window`, `session_window`) the time compared is the
 * struct's `end` (Spark's `watermarkExpression` uses `GetStructField(_, 1)`). A null event time
 * compares as null, so such rows are never dropped and such keys are never evicted.
 *
 * @since 0.1.0
 */
import type * as T from "../../../core/DataType.ts"
import type { AttributeReference } from "../../../core/Expression.ts"
import { keyString } from "../../../core/Ordering.ts"

/**
 * Spark's `WatermarkSupport.findEventTimeColumn`: the first attribute with a watermark delay
 * (several distinct ones are refused by the analyzer unless Spark's compatibility mode, where
 * the first one wins too).
 *
 * @since 0.1.0
 */
export const findEventTimeColumn = (attrs: ReadonlyArray<AttributeReference>): AttributeReference | undefined =>
  attrs.find((a) => a.eventTimeDelayMs !== undefined)

/**
 * Spark's check in `WatermarkSupport.findEventTimeColumn(attrs, allowMultipleEventTimeColumns =
 * false)` (the default, `spark.sql.streaming.statefulOperator.allowMultiple` = true): a stateful
 * operator's input must carry at most one distinct event-time attribute (the same `exprId`
 * repeated by a projection is fine). Returns Spark's `_LEGACY_ERROR_TEMP_3077` message when there
 * are several, `undefined` otherwise; in Spark's compatibility mode the caller skips the check
 * and the first column wins.
 *
 * @since 0.1.0
 */
export const multipleEventTimeColumnsError = (attrs: ReadonlyArray<AttributeReference>): string | undefined => {
  const cols = attrs.filter((a) => a.eventTimeDelayMs !== undefined)
  if (new Set(cols.map((a) => a.exprId)).size <= 1) return undefined
  const names = cols.map((a) => `${a.name}#${a.exprId}`).join(",")
  return `More than one event time columns are available. Please ensure there is at most one event time column per stream. event time columns: (${names})`
}

/**
 * The time a watermark is compared with, for an event-time value of type `t`: the `end` of a
 * window struct, the value itself otherwise; `undefined` for null.
 *
 * @since 0.1.0
 */
export const eventTimeOf = (t: T.DataType): ((v: unknown) => number | undefined) =>
  t._tag === "struct"
    ? (v) => {
        if (v === null || v === undefined) return undefined
        const end = (v as ReadonlyArray<unknown>)[1]
        return typeof end === "number" ? end : undefined
      }
    : (v) => (typeof v === "number" ? v : undefined)

/**
 * Spark's watermark predicate `eventTime <= watermark` (false for a null time or no watermark).
 *
 * @since 0.1.0
 */
export const atOrBelow = (time: number | undefined, watermarkMs: number | undefined): boolean =>
  time !== undefined && watermarkMs !== undefined && time <= watermarkMs

/** Separates the parts of a composite state key; `keyString` never produces it. */
const SEP = "\u0001"

/**
 * The state key of a row's key values: `keyString` per type, joined; equal exactly for values
 * Spark groups together (NaN with NaN, -0.0 with 0.0, null with null).
 *
 * @since 0.1.0
 */
export const stateKey = (types: ReadonlyArray<T.DataType>): ((values: ReadonlyArray<unknown>) => string) => {
  const ks = types.map(keyString)
  const n = ks.length
  if (n === 0) return () => ""
  if (n === 1) {
    const k0 = ks[0]
    return (values) => k0(values[0])
  }
  return (values) => {
    let s = ks[0](values[0])
    for (let i = 1; i < n; i++) s += SEP + ks[i](values[i])
    return s
  }
}
