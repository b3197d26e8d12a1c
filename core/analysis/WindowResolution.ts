/**
 * Time and session windows in the analyzer (Spark's `TimeWindowing`, `SessionWindowing` and the
 * type checks of `TimeWindow` / `SessionWindow`): a time column is typed (dates and strings cast
 * to timestamps, a window column read as its `window_time`), a `window(...)` in an operator's
 * expressions becomes a `Generate` below it producing the `window` column (carrying the time
 * column's watermark), and the durations are checked with Spark's messages.
 *
 * @since 0.1.0
 */
import * as T from "../DataType.ts"
import * as E from "../Expression.ts"
import type * as P from "../LogicalPlan.ts"
import { eventTimeDelayOf } from "./PlanOutput.ts"
import { collect, isSessionWindow, isTimeWindow, NOTHING, type Resolver, semanticKey } from "./Resolver.ts"
import { stableExprId, stablePlanId } from "./StableIds.ts"
import {
  dataTypeOf,
  fail,
  failClass,
  implicitCast,
  toPrettySQL,
  toSQLExpr,
  toSQLId,
  toSQLType
} from "./TypeCoercion.ts"

/** Types a time column: timestamps as they are, dates and strings cast (Spark's implicit cast to `AnyTimestampType`). */
export const typeTimeColumn = (
  r: Resolver,
  tc: E.Expression,
  sqlOfCall: string,
  allowStruct: boolean
): E.Expression => {
  const typed = r.typeExpr(tc, NOTHING)
  const t = dataTypeOf(typed)
  if (t._tag === "timestamp") return typed
  if (t._tag === "date" || t._tag === "string" || t._tag === "null") return implicitCast(typed, T.TimestampType)
  if (
    allowStruct &&
    t._tag === "struct" &&
    t.fields.length === 2 &&
    t.fields[0].dataType._tag === "timestamp" &&
    t.fields[1].dataType._tag === "timestamp"
  ) {
    // Spark: a window column as time column means its window_time (end minus one microsecond)
    const wt: E.ScalarFunction = { _tag: "ScalarFunction", name: "window_time", args: [typed], dataType: undefined }
    return r.resolveScalar(wt, wt.args)
  }
  return failClass(
    "DataTypeMismatch",
    "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
    `Cannot resolve "${sqlOfCall}" due to data type mismatch: The first parameter requires the ("(TIMESTAMP OR TIMESTAMP WITHOUT TIME ZONE)" or "STRUCT<start: TIMESTAMP, end: TIMESTAMP>" or "STRUCT<start: TIMESTAMP_NTZ, end: TIMESTAMP_NTZ>") type, however ${toSQLExpr(typed)} has the type ${toSQLType(t)}.`
  )
}

export const typeSessionWindow = (r: Resolver, e: E.SessionWindow): E.SessionWindow => {
  const sql = `session_window(${toPrettySQL(e.timeColumn)}, ${toPrettySQL(e.gap)})`
  const timeColumn = typeTimeColumn(r, e.timeColumn, sql, true)
  const gap = r.typeExpr(e.gap, NOTHING)
  const gt = dataTypeOf(gap)
  // F.session_window builds a literal number of milliseconds (a double past 2^31 ms)
  if (T.isNumeric(gt)) {
    if (gap._tag === "Literal" && typeof gap.value === "number" && Number.isNaN(gap.value)) {
      return fail(
        "InvalidArgument",
        undefined,
        "The provided session window gap duration is not a valid interval string."
      )
    }
  } else if (gt._tag !== "string" && gt._tag !== "calendarInterval") {
    return failClass(
      "DataTypeMismatch",
      "DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE",
      `Cannot resolve "${sql}" due to data type mismatch: The second parameter requires the ("INTERVAL" or "STRING") type, however ${toSQLExpr(gap)} has the type ${toSQLType(gt)}.`
    )
  }
  return timeColumn === e.timeColumn && gap === e.gap ? e : { ...e, timeColumn, gap }
}

/**
 * Spark's `TimeWindowing`: a `window(...)` in an operator's expressions becomes a `Generate`
 * below the operator producing the `window` column, and the expressions refer to that column.
 * At most one time or session window per operator.
 */
export const extractTimeWindow = (
  r: Resolver,
  exprs: ReadonlyArray<E.Expression>,
  child: P.LogicalPlan,
  owner: object
): { readonly exprs: ReadonlyArray<E.Expression>; readonly child: P.LogicalPlan } => {
  const windows = new Map<string, E.TimeWindow>()
  const sessions = new Set<string>()
  for (const e of exprs) {
    for (const w of collect(e, isTimeWindow)) windows.set(semanticKey(w), w)
    for (const s of collect(e, isSessionWindow)) sessions.add(semanticKey(s))
  }
  if (windows.size + sessions.size > 1) {
    return failClass(
      "UnsupportedOperation",
      "_LEGACY_ERROR_TEMP_1205",
      "Multiple time/session window expressions would result in a cartesian product of rows, therefore they are currently not supported."
    )
  }
  if (windows.size === 0) return { exprs, child }
  const [key, w] = [...windows][0]
  const sql = `window(${toPrettySQL(w.timeColumn)}, ${w.windowMs * 1000}, ${w.slideMs * 1000}, ${w.startMs * 1000})`
  const timeColumn = typeTimeColumn(r, w.timeColumn, sql, true)
  checkWindowDurations(w, sql)
  const delay = eventTimeDelayOf(timeColumn)
  const attr: E.AttributeReference = {
    _tag: "AttributeReference",
    name: "window",
    dataType: T.WindowType,
    nullable: true,
    exprId: stableExprId(owner, `window:${key}`),
    qualifier: [],
    // Spark copies the time column's metadata (its watermark) onto the window column
    ...(delay === undefined ? {} : { eventTimeDelayMs: delay })
  }
  const generate: P.Generate = {
    _tag: "Generate",
    planId: stablePlanId(owner, `window:${key}`),
    generator: { ...w, timeColumn },
    generatorOutput: [attr],
    child
  }
  const replace = (e: E.Expression): E.Expression =>
    E.transformDown(e, (x) => (x._tag === "TimeWindow" && semanticKey(x) === key ? attr : x))
  return { exprs: exprs.map(replace), child: generate }
}

/** `TimeWindow.checkInputDataTypes`: the duration checks, values in microseconds as Spark prints them. */
const checkWindowDurations = (w: E.TimeWindow, sql: string): void => {
  if (!Number.isFinite(w.windowMs) || !Number.isFinite(w.slideMs) || !Number.isFinite(w.startMs)) {
    fail(
      "InvalidArgument",
      undefined,
      `The provided interval of ${sql.replace(/NaN/g, "?")} did not correspond to a valid interval string.`
    )
  }
  const win = w.windowMs * 1000
  const slide = w.slideMs * 1000
  const start = w.startMs * 1000
  const mismatch = (sub: string, text: string): never =>
    failClass(
      "DataTypeMismatch",
      `DATATYPE_MISMATCH.${sub}`,
      `Cannot resolve "${sql}" due to data type mismatch: ${text}`
    )
  if (win <= 0) {
    mismatch(
      "VALUE_OUT_OF_RANGE",
      `The ${toSQLId("window_duration")} must be between (0, 9223372036854775807] (current value = ${win}L).`
    )
  }
  if (slide <= 0) {
    mismatch(
      "VALUE_OUT_OF_RANGE",
      `The ${toSQLId("slide_duration")} must be between (0, 9223372036854775807] (current value = ${slide}L).`
    )
  }
  if (slide > win) {
    mismatch(
      "PARAMETER_CONSTRAINT_VIOLATION",
      `The ${toSQLId("slide_duration")}(${slide}L) must be <= the ${toSQLId("window_duration")}(${win}L).`
    )
  }
  if (Math.abs(start) >= slide) {
    mismatch(
      "PARAMETER_CONSTRAINT_VIOLATION",
      `The ${toSQLId("abs(start_time)")}(${Math.abs(start)}L) must be < the ${toSQLId("slide_duration")}(${slide}L).`
    )
  }
}
