/**
 * The aggregate functions: `count`, `sum`, `avg`, `min`, `max`, `first`, `last`, `collect_list`,
 * `collect_set`, `approx_count_distinct`, `max_by` and `min_by`, and (implemented in
 * `StatisticalAggregates.ts`) the statistics `stddev`/`std`/`stddev_samp`/`stddev_pop`,
 * `variance`/`var_samp`/`var_pop`, `corr`, `covar_pop`/`covar_samp` and the percentiles
 * `median`, `percentile`, `percentile_approx`/`approx_percentile`, with Spark 4's result types,
 * null handling and `DISTINCT` (non-ANSI mode, as the rest of tributary).
 *
 * The analyzer asks `resolveAggregate` for the result type and the casts the arguments need; the
 * physical operators ask `makeAggregate` for an `AggregateImpl` once per plan and then drive its
 * buffers in plain loops: `init` per group, `update` per row, `merge` of partial buffers (`merge(a,
 * b)` means the rows of `a` came before those of `b`, which `first`, `last` and `collect_list`
 * depend on), `evaluate` per output row. Buffers of `count`, `sum`, `avg`, `min`, `max`, `first`
 * and `last` are small mutable arrays, so `update` allocates nothing. `toJSON` / `fromJSON` turn a
 * buffer into JSON-safe data and back, for the state store to keep between micro-batches: NaN,
 * ±Infinity and -0 survive, sets keep their order, binary values become base64.
 *
 * Where JavaScript differs from the JVM:
 * - `sum` over integers wraps on 64-bit overflow as Spark does without ANSI mode: the running
 *   sum is a number while it is a safe integer and a `BigInt` wrapped to 64 bits after that; the
 *   result is a number again (exact up to 2^53, the precision of every long in tributary).
 * - `collect_set` keeps the first-seen order (Spark's order is unspecified); like Spark 4.2 it
 *   folds NaNs into one and -0.0 into 0.0 (a double column's set over 0.0, -0.0, NaN, NaN is
 *   `[0.0, NaN]`); nested values are compared after normalising NaN and -0.0.
 * - `approx_count_distinct` hashes values exactly as Spark does (`XxHash64.ts`), so its estimates
 *   equal Spark's (`HyperLogLogPlusPlus.ts`).
 *
 * @example
 * ```ts
 * import * as Agg from "./Aggregates.ts"
 * import * as T from "../DataType.ts"
 * const fn = { _tag: "AggregateFunction", name: "sum", args: [], distinct: false, options: {}, dataType: T.LongType } as const
 * const sum = Agg.makeAggregate(fn, [(row) => row[0]], [T.IntegerType])
 * let buf = sum.init()
 * for (const row of [[1], [null], [2]]) buf = sum.update(buf, row)
 * sum.evaluate(buf) // 3
 * ```
 * @since 0.1.0
 */
import { Base64 } from "effect/encoding"
import * as T from "../DataType.ts"
import type { DataType } from "../DataType.ts"
import type { CalendarInterval } from "../Durations.ts"
import type { AggregateFunction, AggregateName, Expression } from "../Expression.ts"
import { prettyName } from "../ExpressionName.ts"
import * as Long from "../Long.ts"
import * as Ordering from "../Ordering.ts"
import type { InternalRow } from "../Row.ts"
import * as HLL from "./HyperLogLogPlusPlus.ts"
import * as Stat from "./StatisticalAggregates.ts"

// ---------------------------------------------------------------------------------------------
// Type checking
// ---------------------------------------------------------------------------------------------

/** What `resolveAggregate` answers: Spark's result type and the casts the arguments need first. */
export type AggregateResolution =
  | {
      readonly _tag: "Resolved"
      readonly resultType: DataType
      readonly nullable: boolean
      /** One entry per argument; `undefined` keeps the argument as it is. */
      readonly castArgsTo: ReadonlyArray<DataType | undefined>
    }
  | { readonly _tag: "Invalid"; readonly message: string }

/** Spark's `DataType.sql`, as error messages quote types (`DataType.sqlTypeName`). */
export const dataTypeSql: (t: DataType) => string = T.sqlTypeName

/** Spark's `RowOrdering.isOrderable`: maps and intervals (also inside arrays and structs) are not. */
export const isOrderable = (t: DataType): boolean => {
  switch (t._tag) {
    case "map":
    case "calendarInterval":
      return false
    case "array":
      return isOrderable(t.elementType)
    case "struct":
      return t.fields.every((f) => isOrderable(f.dataType))
    default:
      return true
  }
}

const containsMap = (t: DataType): boolean => {
  switch (t._tag) {
    case "map":
      return true
    case "array":
      return containsMap(t.elementType)
    case "struct":
      return t.fields.some((f) => containsMap(f.dataType))
    default:
      return false
  }
}

const resolved = (
  resultType: DataType,
  nullable: boolean,
  castArgsTo: ReadonlyArray<DataType | undefined>
): AggregateResolution => ({ _tag: "Resolved", resultType, nullable, castArgsTo })

const invalid = (message: string): AggregateResolution => ({ _tag: "Invalid", message })

/**
 * Type checking for the analyzer: Spark's result type, nullability and the implicit casts of the
 * arguments, or Spark's error message.
 *
 * - `count(...)`: any types, at least one argument; `bigint`, never null.
 * - `sum` / `avg`: numeric input; strings, nulls and timestamps are cast to `double` first (Spark's
 *   implicit cast to `NUMERIC` without ANSI mode); `sum` of `int`/`bigint` is `bigint`, of `double`
 *   is `double`; `avg` is `double`.
 * - `min` / `max`: any orderable type (not maps or intervals); the input type.
 * - `first` / `last`: any type; the input type.
 * - `collect_list` / `collect_set`: `array<T>` without nulls; `collect_set` rejects maps.
 * - `approx_count_distinct`: any type; `bigint`, never null; `rsd` must give 4 or more bits.
 * - the statistics: numbers, strings and nulls cast to `double`; `double`, nullable.
 * - `max_by` / `min_by`: any value, an orderable ordering; the value's type.
 * - `median` / `percentile`: a numeric input (strings, nulls and timestamps cast to `double`), a
 *   constant percentage or array of them in [0, 1]; `double` or `array<double>`.
 * - `percentile_approx`: a numeric, date or timestamp input, constant percentage(s) and a
 *   constant accuracy in (0, 2^31 - 1]; the input's type (or an array of it).
 *
 * `args`, when given, are the resolved argument expressions, used only to name the call in
 * messages the way Spark does (`Cannot resolve "sum(b)"`).
 *
 * @example
 * ```ts
 * resolveAggregate("sum", [T.IntegerType], false, {}) // Resolved: bigint, nullable, no casts
 * resolveAggregate("avg", [T.StringType], false, {})  // Resolved: double, cast the argument to double
 * resolveAggregate("sum", [T.BooleanType], false, {}) // Invalid: [DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] …
 * ```
 */
export const resolveAggregate = (
  name: AggregateName,
  argTypes: ReadonlyArray<DataType>,
  distinct: boolean,
  options: AggregateFunction["options"],
  args?: ReadonlyArray<Expression>
): AggregateResolution => {
  const argName = (i: number): string =>
    args !== undefined && args[i] !== undefined ? prettyName(args[i]) : `argument ${i + 1}`
  const callName = (): string =>
    args !== undefined
      ? prettyName({ _tag: "AggregateFunction", name, args, distinct, options, dataType: undefined })
      : `${name}(${distinct ? "DISTINCT " : ""}${argTypes.map((t) => T.simpleString(t)).join(", ")})`
  const mismatch = (errorClass: string, detail: string): AggregateResolution =>
    invalid(`[DATATYPE_MISMATCH.${errorClass}] Cannot resolve "${callName()}" due to data type mismatch: ${detail}`)
  const arity = (n: number): AggregateResolution | undefined =>
    argTypes.length === n
      ? undefined
      : invalid(
          `[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The \`${name}\` requires ${n} parameters but the actual number is ${argTypes.length}. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix.`
        )
  switch (name) {
    case "count":
      if (argTypes.length === 0)
        return invalid(
          '[WRONG_NUM_ARGS.WITH_SUGGESTION] The `count` requires  >= 1 parameters but the actual number is 0. If you have to call this function with 0 parameters, set the legacy configuration "spark.sql.legacy.allowParameterlessCount" to "true".'
        )
      return resolved(
        T.LongType,
        false,
        argTypes.map(() => undefined)
      )
    case "sum":
    case "avg": {
      const bad = arity(1)
      if (bad !== undefined) return bad
      const t = argTypes[0]
      switch (t._tag) {
        case "integer":
        case "long":
          return resolved(name === "sum" ? T.LongType : T.DoubleType, true, [undefined])
        case "double":
          return resolved(T.DoubleType, true, [undefined])
        case "string":
        case "null":
        case "timestamp":
          // ImplicitCastInputTypes: NUMERIC's default type is DOUBLE (a timestamp becomes seconds).
          return resolved(T.DoubleType, true, [T.DoubleType])
        default:
          return mismatch(
            "UNEXPECTED_INPUT_TYPE",
            `The first parameter requires the "NUMERIC" or "ANSI INTERVAL" type, however "${argName(0)}" has the type "${dataTypeSql(t)}".`
          )
      }
    }
    case "min":
    case "max": {
      const bad = arity(1)
      if (bad !== undefined) return bad
      const t = argTypes[0]
      if (!isOrderable(t))
        return mismatch(
          "INVALID_ORDERING_TYPE",
          `The \`${name}\` does not support ordering on type "${dataTypeSql(t)}".`
        )
      return resolved(t, true, [undefined])
    }
    case "first":
    case "last": {
      const bad = arity(1)
      if (bad !== undefined) return bad
      return resolved(argTypes[0], true, [undefined])
    }
    case "collect_list":
    case "collect_set": {
      const bad = arity(1)
      if (bad !== undefined) return bad
      const t = argTypes[0]
      if (name === "collect_set" && containsMap(t))
        return mismatch(
          "UNSUPPORTED_INPUT_TYPE",
          `The input of \`collect_set\` can't be "MAP" or "COLLATED STRING" type data.`
        )
      return resolved(T.array(t, false), false, [undefined])
    }
    case "approx_count_distinct": {
      const bad = arity(1)
      if (bad !== undefined) return bad
      const problem = HLL.validateRelativeSD(options.rsd ?? 0.05)
      if (problem !== undefined) return invalid(problem)
      return resolved(T.LongType, false, [undefined])
    }
    case "stddev":
    case "std":
    case "stddev_samp":
    case "stddev_pop":
    case "variance":
    case "var_samp":
    case "var_pop":
    case "skewness":
    case "kurtosis":
    case "corr":
    case "covar_pop":
    case "covar_samp": {
      const two = name === "corr" || name === "covar_pop" || name === "covar_samp"
      const bad = arity(two ? 2 : 1)
      if (bad !== undefined) return bad
      // ImplicitCastInputTypes(DoubleType, ...): numbers, strings and nulls are cast to double.
      const casts: Array<DataType | undefined> = []
      for (let i = 0; i < argTypes.length; i++) {
        const t = argTypes[i]
        if (t._tag === "double") casts.push(undefined)
        else if (T.isNumeric(t) || t._tag === "string" || t._tag === "null") casts.push(T.DoubleType)
        else
          return mismatch(
            "UNEXPECTED_INPUT_TYPE",
            `The ${ORDINAL_WORDS[i]} parameter requires the "DOUBLE" type, however "${argName(i)}" has the type "${dataTypeSql(t)}".`
          )
      }
      return resolved(T.DoubleType, true, casts)
    }
    case "max_by":
    case "min_by": {
      const bad = arity(2)
      if (bad !== undefined) return bad
      const o = argTypes[1]
      if (!isOrderable(o))
        return mismatch(
          "INVALID_ORDERING_TYPE",
          `The \`${name}\` does not support ordering on type "${dataTypeSql(o)}".`
        )
      return resolved(argTypes[0], true, [undefined, undefined])
    }
    case "median":
    case "percentile": {
      if (name === "median") {
        const bad = arity(1)
        if (bad !== undefined) return bad
      } else if (argTypes.length !== 2 && argTypes.length !== 3)
        return invalid(
          `[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The \`percentile\` requires [2, 3] parameters but the actual number is ${argTypes.length}. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix.`
        )
      const cast = percentileInputCast(argTypes[0])
      if (cast === null)
        return mismatch(
          "UNEXPECTED_INPUT_TYPE",
          `The first parameter requires the ("NUMERIC" or "INTERVAL DAY TO SECOND" or "INTERVAL YEAR TO MONTH") type, however "${argName(0)}" has the type "${dataTypeSql(argTypes[0])}".`
        )
      if (name === "median") return resolved(T.DoubleType, true, [cast])
      const p = checkPercentages(args?.[1], argTypes[1], mismatch)
      if (p._tag === "Invalid") return p
      const casts: Array<DataType | undefined> = [cast, undefined]
      if (argTypes.length === 3) {
        const f = argTypes[2]
        if (T.isIntegral(f)) casts.push(undefined)
        else if (f._tag === "string" || f._tag === "null") casts.push(T.LongType)
        else
          return mismatch(
            "UNEXPECTED_INPUT_TYPE",
            `The third parameter requires the "INTEGRAL" type, however "${argName(2)}" has the type "${dataTypeSql(f)}".`
          )
      }
      return resolved(p.asArray ? T.array(T.DoubleType, false) : T.DoubleType, true, casts)
    }
    case "percentile_approx":
    case "approx_percentile": {
      if (argTypes.length !== 2 && argTypes.length !== 3)
        return invalid(
          `[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The \`${name}\` requires [2, 3] parameters but the actual number is ${argTypes.length}. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix.`
        )
      const t = argTypes[0]
      const cast =
        T.isNumeric(t) || t._tag === "date" || t._tag === "timestamp"
          ? undefined
          : t._tag === "string" || t._tag === "null"
            ? T.DoubleType
            : null
      if (cast === null)
        return mismatch(
          "UNEXPECTED_INPUT_TYPE",
          `The first parameter requires the ("NUMERIC" or "DATE" or "TIMESTAMP" or "TIMESTAMP_NTZ" or "INTERVAL YEAR TO MONTH" or "INTERVAL DAY TO SECOND") type, however "${argName(0)}" has the type "${dataTypeSql(t)}".`
        )
      const p = checkPercentages(args?.[1], argTypes[1], mismatch)
      if (p._tag === "Invalid") return p
      if (argTypes.length === 3) {
        const a = foldNumbers(args?.[2])
        if (a === undefined || a === null || Array.isArray(a))
          return mismatch(
            "NON_FOLDABLE_INPUT",
            `the input \`accuracy\` should be a foldable "INT" expression; however, got "${argName(2)}".`
          )
        const n = a as number
        if (!T.isIntegral(argTypes[2]) || n <= 0 || n > 2147483647)
          return mismatch(
            "VALUE_OUT_OF_RANGE",
            `The \`accuracy\` must be between (0, 2147483647] (current value = ${n}L).`
          )
      }
      const rt = cast ?? t
      return resolved(
        p.asArray ? T.array(rt, false) : rt,
        true,
        argTypes.length === 3 ? [cast, undefined, undefined] : [cast, undefined]
      )
    }
  }
}

const ORDINAL_WORDS = ["first", "second", "third"]

/** `percentile`'s implicit cast of its input to NUMERIC: numbers stay, strings and nulls become doubles; `null`: no cast fits. */
const percentileInputCast = (t: DataType): DataType | undefined | null => {
  if (T.isNumeric(t)) return undefined
  if (t._tag === "string" || t._tag === "null" || t._tag === "timestamp") return T.DoubleType
  return null
}

/**
 * The value of a constant numeric argument (a literal, `array(...)` of literals, a cast or an
 * alias of one): a number, an array of numbers, `null`, or `undefined` when it is not constant.
 */
export const foldNumbers = (e: Expression | undefined): number | ReadonlyArray<number | null> | null | undefined => {
  if (e === undefined) return undefined
  switch (e._tag) {
    case "Literal": {
      const v = e.value
      if (v === null || v === undefined) return null
      if (typeof v === "number") return v
      if (typeof v === "bigint") return Number(v)
      if (Array.isArray(v)) {
        const out: Array<number | null> = []
        for (const x of v) {
          if (x === null || x === undefined) out.push(null)
          else if (typeof x === "number" || typeof x === "bigint") out.push(Number(x))
          else return undefined
        }
        return out
      }
      return undefined
    }
    case "Cast":
    case "Alias":
      return foldNumbers(e.child)
    case "UnaryExpression": {
      if (e.op !== "negate") return undefined
      const v = foldNumbers(e.child)
      return typeof v === "number" ? -v : undefined
    }
    case "ScalarFunction": {
      if (e.name.toLowerCase() !== "array") return undefined
      const out: Array<number | null> = []
      for (const a of e.args) {
        const v = foldNumbers(a)
        if (v === undefined || Array.isArray(v)) return undefined
        out.push(v as number | null)
      }
      return out
    }
    default:
      return undefined
  }
}

/** Spark's `toSQLValue(d, DoubleType)`: `0.5D`. */
const doubleSql = (d: number): string => {
  const s = Number.isInteger(d) && Number.isFinite(d) ? `${d}.0` : String(d)
  return `${s}D`
}

type PercentageCheck =
  | { readonly _tag: "Valid"; readonly asArray: boolean; readonly percentages: ReadonlyArray<number> }
  | { readonly _tag: "Invalid"; readonly message: string }

/** Spark's `PercentileBase.checkInputDataTypes` for the percentage argument. */
const checkPercentages = (
  e: Expression | undefined,
  t: DataType,
  mismatch: (errorClass: string, detail: string) => AggregateResolution
): PercentageCheck => {
  const asArray = t._tag === "array"
  const numeric = asArray
    ? T.isNumeric(t.elementType) || t.elementType._tag === "null"
    : T.isNumeric(t) || t._tag === "null"
  const fail = (r: AggregateResolution): PercentageCheck => ({
    _tag: "Invalid",
    message: (r as { message: string }).message
  })
  if (!numeric)
    return fail(
      mismatch(
        "UNEXPECTED_INPUT_TYPE",
        `The second parameter requires the ${asArray ? '"ARRAY<DOUBLE>"' : '"DOUBLE"'} type, however "${e === undefined ? "argument 2" : prettyName(e)}" has the type "${dataTypeSql(t)}".`
      )
    )
  const v = foldNumbers(e)
  if (v === undefined)
    return fail(
      mismatch(
        "NON_FOLDABLE_INPUT",
        `the input \`percentage\` should be a foldable ${asArray ? '"ARRAY<DOUBLE>"' : '"DOUBLE"'} expression; however, got "${e === undefined ? "" : prettyName(e)}".`
      )
    )
  if (v === null || (Array.isArray(v) && v.some((x) => x === null)))
    return fail(mismatch("UNEXPECTED_NULL", "The percentage must not be null."))
  const ps = (Array.isArray(v) ? v : [v]) as ReadonlyArray<number>
  if (ps.some((p) => p < 0 || p > 1))
    return fail(
      mismatch(
        "VALUE_OUT_OF_RANGE",
        `The percentage must be between [0.0, 1.0] (current value = ${ps.map(doubleSql).join(",")}).`
      )
    )
  return { _tag: "Valid", asArray, percentages: ps }
}

// ---------------------------------------------------------------------------------------------
// JSON encoding of internal values
// ---------------------------------------------------------------------------------------------

/** A number as JSON: finite numbers as they are; NaN, ±Infinity and -0 as strings. */
export const encodeNumber = (n: number): number | string =>
  Number.isFinite(n) ? (Object.is(n, -0) ? "-0" : n) : String(n)

/** The inverse of `encodeNumber`. */
export const decodeNumber = (j: unknown): number => {
  if (typeof j === "number") return j
  if (j === "-0") return -0
  return Number(j)
}

/** A long as JSON: a number when it is safe, its decimal digits as a string beyond (exact). */
export const encodeLong = (v: Long.Long): number | string => (typeof v === "bigint" ? v.toString() : v)

/** The inverse of `encodeLong` (a number written before longs were exact is read as it is). */
export const decodeLong = (j: unknown): Long.Long =>
  typeof j === "string" ? Long.fromBigInt(BigInt(j)) : typeof j === "bigint" ? Long.fromBigInt(j) : (j as number)

const encodeLongOrNull = (v: unknown): unknown => (v === null || v === undefined ? null : encodeLong(v as Long.Long))
const decodeLongOrNull = (j: unknown): unknown => (j === null || j === undefined ? null : decodeLong(j))

const codecError = (what: string, j: unknown): Error =>
  new Error(`aggregate buffer: cannot decode ${what} from ${JSON.stringify(j)?.slice(0, 80)}`)

/** Encodes internal values of `t` as JSON-safe data (type-directed, so no tags are needed). */
export const valueToJSON = (t: DataType): ((v: unknown) => unknown) => {
  switch (t._tag) {
    case "null":
      return () => null
    case "long":
      return encodeLongOrNull
    case "integer":
    case "double":
    case "timestamp":
    case "date":
      return (v) => (v === null || v === undefined ? null : encodeNumber(v as number))
    case "string":
    case "boolean":
      return (v) => (v === undefined ? null : v)
    case "binary":
      return (v) => (v === null || v === undefined ? null : Base64.encode(v as Uint8Array))
    case "calendarInterval":
      return (v) => {
        if (v === null || v === undefined) return null
        const i = v as CalendarInterval
        return [i.months, i.days, encodeNumber(i.micros)]
      }
    case "array": {
      const elem = valueToJSON(t.elementType)
      return (v) => (v === null || v === undefined ? null : (v as ReadonlyArray<unknown>).map(elem))
    }
    case "struct": {
      const fields = t.fields.map((f) => valueToJSON(f.dataType))
      return (v) => {
        if (v === null || v === undefined) return null
        const a = v as ReadonlyArray<unknown>
        return fields.map((f, i) => f(a[i]))
      }
    }
    case "map": {
      const k = valueToJSON(t.keyType)
      const x = valueToJSON(t.valueType)
      return (v) => {
        if (v === null || v === undefined) return null
        const out: Array<unknown> = []
        for (const [a, b] of v as Map<unknown, unknown>) out.push([k(a), x(b)])
        return out
      }
    }
  }
}

/** Decodes what `valueToJSON(t)` produced. Throws on data that no encoder of `t` produces. */
export const valueFromJSON = (t: DataType): ((j: unknown) => unknown) => {
  switch (t._tag) {
    case "null":
      return () => null
    case "long":
      return decodeLongOrNull
    case "integer":
    case "double":
    case "timestamp":
    case "date":
      return (j) => (j === null ? null : decodeNumber(j))
    case "string":
    case "boolean":
      return (j) => j
    case "binary":
      return (j) => {
        if (j === null) return null
        const r = Base64.decode(j as string)
        if (r._tag === "Failure") throw codecError("binary", j)
        return r.success
      }
    case "calendarInterval":
      return (j) => {
        if (j === null) return null
        const [months, days, micros] = j as [number, number, unknown]
        return { months, days, micros: decodeNumber(micros) } satisfies CalendarInterval
      }
    case "array": {
      const elem = valueFromJSON(t.elementType)
      return (j) => (j === null ? null : (j as ReadonlyArray<unknown>).map(elem))
    }
    case "struct": {
      const fields = t.fields.map((f) => valueFromJSON(f.dataType))
      return (j) => {
        if (j === null) return null
        const a = j as ReadonlyArray<unknown>
        return fields.map((f, i) => f(a[i]))
      }
    }
    case "map": {
      const k = valueFromJSON(t.keyType)
      const x = valueFromJSON(t.valueType)
      return (j) => {
        if (j === null) return null
        const out = new Map<unknown, unknown>()
        for (const [a, b] of j as ReadonlyArray<[unknown, unknown]>) out.set(k(a), x(b))
        return out
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Implementations
// ---------------------------------------------------------------------------------------------

/** A compiled argument: reads one internal row. */
export type Evaluator = (row: InternalRow) => unknown

/** One running aggregate. Buffers are serializable with `toJSON`/`fromJSON`. */
export interface AggregateImpl {
  readonly resultType: DataType
  /** A fresh buffer. */
  readonly init: () => unknown
  /** Adds one row; returns the buffer (the same object, mutated, for every built-in aggregate). */
  readonly update: (buffer: unknown, row: InternalRow) => unknown
  /** Combines two buffers, the rows of `a` before those of `b`; returns `a`, mutated. `b` is not changed. */
  readonly merge: (a: unknown, b: unknown) => unknown
  /** The internal value of the result. It shares nothing mutable with the buffer. */
  readonly evaluate: (buffer: unknown) => unknown
  /** JSON-safe data (NaN, Infinity, -0, sets, binary and bigints encoded). */
  readonly toJSON: (buffer: unknown) => unknown
  /** A buffer from what `toJSON` produced. */
  readonly fromJSON: (json: unknown) => unknown
}

const isNull = (v: unknown): boolean => v === null || v === undefined

// count ---------------------------------------------------------------------------------------

type CountBuffer = [n: number]

const countImpl = (args: ReadonlyArray<Evaluator>): AggregateImpl => {
  const a0 = args[0]
  const n = args.length
  const update =
    n === 1
      ? (b: unknown, row: InternalRow): unknown => {
          const v = a0(row)
          if (v !== null && v !== undefined) (b as CountBuffer)[0]++
          return b
        }
      : (b: unknown, row: InternalRow): unknown => {
          for (let i = 0; i < n; i++) if (isNull(args[i](row))) return b
          ;(b as CountBuffer)[0]++
          return b
        }
  return {
    resultType: T.LongType,
    init: (): CountBuffer => [0],
    update,
    merge: (a, b) => {
      ;(a as CountBuffer)[0] += (b as CountBuffer)[0]
      return a
    },
    evaluate: (b) => (b as CountBuffer)[0],
    toJSON: (b) => (b as CountBuffer)[0],
    fromJSON: (j): CountBuffer => [Number(j)]
  }
}

// sum -----------------------------------------------------------------------------------------

/** `[sum, hasValue]`: the running sum is an exact long that wraps as Java's long addition does. */
type LongSumBuffer = [sum: Long.Long, has: number]

const longSumImpl = (arg: Evaluator): AggregateImpl => ({
  resultType: T.LongType,
  init: (): LongSumBuffer => [0, 0],
  update: (b, row) => {
    const v = arg(row)
    if (v === null || v === undefined) return b
    const buf = b as LongSumBuffer
    buf[1] = 1
    // Java's long addition wraps (Spark's sum without ANSI mode)
    buf[0] = Long.add(buf[0], v as Long.Long)
    return b
  },
  merge: (a, b) => {
    const x = a as LongSumBuffer
    const y = b as LongSumBuffer
    if (y[1] === 0) return a
    x[0] = x[1] === 0 ? y[0] : Long.add(x[0], y[0])
    x[1] = 1
    return a
  },
  evaluate: (b) => {
    const buf = b as LongSumBuffer
    return buf[1] === 0 ? null : buf[0]
  },
  toJSON: (b) => {
    const buf = b as LongSumBuffer
    return [encodeLong(buf[0]), buf[1]]
  },
  fromJSON: (j): LongSumBuffer => {
    // [sum, has] or, as written before, [sum, has, wrapped digits or null]
    const [s, has, w] = j as [unknown, number, string | null | undefined]
    return [typeof w === "string" ? Long.fromBigInt(BigInt(w)) : decodeLong(s), has]
  }
})

type DoubleSumBuffer = [sum: number, has: number]

const doubleSumImpl = (arg: Evaluator): AggregateImpl => ({
  resultType: T.DoubleType,
  // Spark starts from null and adds to coalesce(sum, 0.0): the same as starting from 0.0.
  init: (): DoubleSumBuffer => [0, 0],
  update: (b, row) => {
    const v = arg(row)
    if (v !== null && v !== undefined) {
      const buf = b as DoubleSumBuffer
      buf[0] += v as number
      buf[1] = 1
    }
    return b
  },
  merge: (a, b) => {
    const x = a as DoubleSumBuffer
    const y = b as DoubleSumBuffer
    if (y[1] !== 0) {
      x[0] += y[0]
      x[1] = 1
    }
    return a
  },
  evaluate: (b) => ((b as DoubleSumBuffer)[1] === 0 ? null : (b as DoubleSumBuffer)[0]),
  toJSON: (b) => [encodeNumber((b as DoubleSumBuffer)[0]), (b as DoubleSumBuffer)[1]],
  fromJSON: (j): DoubleSumBuffer => [decodeNumber((j as Array<unknown>)[0]), Number((j as Array<unknown>)[1])]
})

// avg -----------------------------------------------------------------------------------------

type AvgBuffer = [sum: number, count: number]

const avgImpl = (arg: Evaluator): AggregateImpl => ({
  resultType: T.DoubleType,
  init: (): AvgBuffer => [0, 0],
  update: (b, row) => {
    const v = arg(row)
    if (v !== null && v !== undefined) {
      const buf = b as AvgBuffer
      // Spark's Average sums a long input as a double
      buf[0] += typeof v === "bigint" ? Number(v) : (v as number)
      buf[1]++
    }
    return b
  },
  merge: (a, b) => {
    const x = a as AvgBuffer
    const y = b as AvgBuffer
    x[0] += y[0]
    x[1] += y[1]
    return a
  },
  // Spark divides sum by count; with no values the count is 0 and the result null.
  evaluate: (b) => ((b as AvgBuffer)[1] === 0 ? null : (b as AvgBuffer)[0] / (b as AvgBuffer)[1]),
  toJSON: (b) => [encodeNumber((b as AvgBuffer)[0]), (b as AvgBuffer)[1]],
  fromJSON: (j): AvgBuffer => [decodeNumber((j as Array<unknown>)[0]), Number((j as Array<unknown>)[1])]
})

// min / max -----------------------------------------------------------------------------------

type ExtremumBuffer = [value: unknown]

const extremumImpl = (t: DataType, arg: Evaluator, sign: 1 | -1): AggregateImpl => {
  const cmp = Ordering.comparator(t)
  const enc = valueToJSON(t)
  const dec = valueFromJSON(t)
  // Spark's Least/Greatest keep the earlier value on ties (the buffer before the new row).
  const better = (v: unknown, cur: unknown): boolean => cur === null || sign * cmp(v, cur) < 0
  return {
    resultType: t,
    init: (): ExtremumBuffer => [null],
    update: (b, row) => {
      const v = arg(row)
      if (v !== null && v !== undefined && better(v, (b as ExtremumBuffer)[0])) (b as ExtremumBuffer)[0] = v
      return b
    },
    merge: (a, b) => {
      const v = (b as ExtremumBuffer)[0]
      if (v !== null && better(v, (a as ExtremumBuffer)[0])) (a as ExtremumBuffer)[0] = v
      return a
    },
    evaluate: (b) => (b as ExtremumBuffer)[0],
    toJSON: (b) => enc((b as ExtremumBuffer)[0]),
    fromJSON: (j): ExtremumBuffer => [dec(j)]
  }
}

// max_by / min_by ---------------------------------------------------------------------------

/** `[value, ordering]`: the value kept with the extremum of the ordering so far (Spark's `MaxMinBy`). */
type ByBuffer = [value: unknown, ordering: unknown]

/**
 * Spark's `MaxMinBy` (`sign` 1 for `max_by`, -1 for `min_by`): rows whose ordering is null are skipped (their value may be null); on a tie
 * the later row wins, in `update` and in `merge` (Spark keeps the old value only when it is
 * strictly better).
 */
const byImpl = (vt: DataType, ot: DataType, value: Evaluator, ordering: Evaluator, sign: 1 | -1): AggregateImpl => {
  const cmp = Ordering.comparator(ot)
  const encV = valueToJSON(vt)
  const decV = valueFromJSON(vt)
  const encO = valueToJSON(ot)
  const decO = valueFromJSON(ot)
  return {
    resultType: vt,
    init: (): ByBuffer => [null, null],
    update: (b, row) => {
      const o = ordering(row)
      if (o === null || o === undefined) return b
      const buf = b as ByBuffer
      if (buf[1] === null || !(sign * cmp(buf[1], o) > 0)) {
        const v = value(row)
        buf[0] = v === undefined ? null : v
        buf[1] = o
      }
      return b
    },
    merge: (a, b) => {
      const x = a as ByBuffer
      const y = b as ByBuffer
      if (y[1] === null) return a
      if (x[1] === null || !(sign * cmp(x[1], y[1]) > 0)) {
        x[0] = y[0]
        x[1] = y[1]
      }
      return a
    },
    evaluate: (b) => (b as ByBuffer)[0],
    toJSON: (b) => [encV((b as ByBuffer)[0]), encO((b as ByBuffer)[1])],
    fromJSON: (j): ByBuffer => [decV((j as Array<unknown>)[0]), decO((j as Array<unknown>)[1])]
  }
}

// first / last --------------------------------------------------------------------------------

type FirstLastBuffer = [value: unknown, set: number]

const firstImpl = (t: DataType, arg: Evaluator, ignoreNulls: boolean): AggregateImpl => {
  const enc = valueToJSON(t)
  const dec = valueFromJSON(t)
  return {
    resultType: t,
    init: (): FirstLastBuffer => [null, 0],
    update: ignoreNulls
      ? (b, row) => {
          const buf = b as FirstLastBuffer
          if (buf[1] === 0) {
            const v = arg(row)
            if (v !== null && v !== undefined) {
              buf[0] = v
              buf[1] = 1
            }
          }
          return b
        }
      : (b, row) => {
          const buf = b as FirstLastBuffer
          if (buf[1] === 0) {
            const v = arg(row)
            buf[0] = v === undefined ? null : v
            buf[1] = 1
          }
          return b
        },
    // Spark's First.mergeExpressions: the left value when it is set.
    merge: (a, b) => {
      const x = a as FirstLastBuffer
      const y = b as FirstLastBuffer
      if (x[1] === 0 && y[1] !== 0) {
        x[0] = y[0]
        x[1] = 1
      }
      return a
    },
    evaluate: (b) => (b as FirstLastBuffer)[0],
    toJSON: (b) => [enc((b as FirstLastBuffer)[0]), (b as FirstLastBuffer)[1]],
    fromJSON: (j): FirstLastBuffer => [dec((j as Array<unknown>)[0]), Number((j as Array<unknown>)[1])]
  }
}

const lastImpl = (t: DataType, arg: Evaluator, ignoreNulls: boolean): AggregateImpl => {
  const enc = valueToJSON(t)
  const dec = valueFromJSON(t)
  return {
    resultType: t,
    init: (): FirstLastBuffer => [null, 0],
    update: ignoreNulls
      ? (b, row) => {
          const v = arg(row)
          if (v !== null && v !== undefined) {
            const buf = b as FirstLastBuffer
            buf[0] = v
            buf[1] = 1
          }
          return b
        }
      : (b, row) => {
          const v = arg(row)
          const buf = b as FirstLastBuffer
          buf[0] = v === undefined ? null : v
          buf[1] = 1
          return b
        },
    // Spark's Last.mergeExpressions: the right value when it is set.
    merge: (a, b) => {
      const x = a as FirstLastBuffer
      const y = b as FirstLastBuffer
      if (y[1] !== 0) {
        x[0] = y[0]
        x[1] = 1
      }
      return a
    },
    evaluate: (b) => (b as FirstLastBuffer)[0],
    toJSON: (b) => [enc((b as FirstLastBuffer)[0]), (b as FirstLastBuffer)[1]],
    fromJSON: (j): FirstLastBuffer => [dec((j as Array<unknown>)[0]), Number((j as Array<unknown>)[1])]
  }
}

// collect_list / collect_set ------------------------------------------------------------------

const collectListImpl = (t: DataType, arg: Evaluator): AggregateImpl => {
  const enc = valueToJSON(t)
  const dec = valueFromJSON(t)
  return {
    resultType: T.array(t, false),
    init: (): Array<unknown> => [],
    update: (b, row) => {
      const v = arg(row)
      if (v !== null && v !== undefined) (b as Array<unknown>).push(v)
      return b
    },
    merge: (a, b) => {
      const x = a as Array<unknown>
      const y = b as ReadonlyArray<unknown>
      for (let i = 0; i < y.length; i++) x.push(y[i])
      return a
    },
    evaluate: (b) => (b as Array<unknown>).slice(),
    toJSON: (b) => (b as Array<unknown>).map(enc),
    fromJSON: (j) => (j as Array<unknown>).map(dec)
  }
}

const isPrimitiveType = (t: DataType): boolean => {
  switch (t._tag) {
    case "integer":
    case "long":
    case "double":
    case "timestamp":
    case "date":
    case "string":
    case "boolean":
    case "null":
      return true
    default:
      return false
  }
}

/**
 * The set-membership key of a value of `t`: primitives are their own key (a JavaScript `Set`
 * already treats NaN as NaN and 0 as -0, as Spark's grouping normalises them); other values use
 * `Ordering.keyString`.
 */
const memberKey = (t: DataType): ((v: unknown) => unknown) => (isPrimitiveType(t) ? (v) => v : Ordering.keyString(t))

interface SetBuffer {
  readonly seen: Set<unknown>
  readonly values: Array<unknown>
}

const collectSetImpl = (t: DataType, arg: Evaluator): AggregateImpl => {
  const key = memberKey(t)
  const enc = valueToJSON(t)
  const dec = valueFromJSON(t)
  // Spark 4.2's collect_set of doubles over 0.0, -0.0, NaN, NaN is [0.0, NaN]: NaNs fold into
  // one and -0.0 comes out as 0.0 (found by the random differential run, issue #21 deviation 5).
  const normalize = t._tag === "double" ? (v: unknown) => (v === 0 ? 0 : v) : (v: unknown) => v
  const add = (buf: SetBuffer, v: unknown): void => {
    const k = key(v)
    if (!buf.seen.has(k)) {
      buf.seen.add(k)
      buf.values.push(normalize(v))
    }
  }
  return {
    resultType: T.array(t, false),
    init: (): SetBuffer => ({ seen: new Set(), values: [] }),
    update: (b, row) => {
      const v = arg(row)
      if (v !== null && v !== undefined) add(b as SetBuffer, v)
      return b
    },
    merge: (a, b) => {
      const y = (b as SetBuffer).values
      for (let i = 0; i < y.length; i++) add(a as SetBuffer, y[i])
      return a
    },
    evaluate: (b) => (b as SetBuffer).values.slice(),
    toJSON: (b) => (b as SetBuffer).values.map(enc),
    fromJSON: (j) => {
      const buf: SetBuffer = { seen: new Set(), values: [] }
      for (const x of j as Array<unknown>) add(buf, dec(x))
      return buf
    }
  }
}

// approx_count_distinct -----------------------------------------------------------------------

const registersToJSON = (hll: HLL.HyperLogLogPlusPlus, r: Uint8Array): unknown => {
  let nonZero = 0
  for (let i = 0; i < r.length; i++) if (r[i] !== 0) nonZero++
  // Few groups see many distinct values: a sparse list of (index, register) is usually smaller.
  if (nonZero * 6 < r.length) {
    const sparse: Array<number> = []
    for (let i = 0; i < r.length; i++) if (r[i] !== 0) sparse.push(i, r[i])
    return { p: hll.p, sparse }
  }
  return { p: hll.p, dense: Base64.encode(r) }
}

const registersFromJSON = (hll: HLL.HyperLogLogPlusPlus, j: unknown): Uint8Array => {
  const o = j as { p: number; sparse?: ReadonlyArray<number>; dense?: string }
  if (o === null || typeof o !== "object" || o.p !== hll.p)
    throw codecError(`HyperLogLog++ registers with p = ${hll.p}`, j)
  if (o.sparse !== undefined) {
    const r = hll.init()
    for (let i = 0; i < o.sparse.length; i += 2) r[o.sparse[i]] = o.sparse[i + 1]
    return r
  }
  const d = Base64.decode(o.dense ?? "")
  if (d._tag === "Failure" || d.success.length !== hll.m) throw codecError("HyperLogLog++ registers", j)
  return d.success
}

const approxCountDistinctImpl = (t: DataType, arg: Evaluator, rsd: number): AggregateImpl => {
  const hll = HLL.make(rsd)
  const add = HLL.adder(hll, t)
  return {
    resultType: T.LongType,
    init: () => hll.init(),
    update: (b, row) => {
      add(b as Uint8Array, arg(row))
      return b
    },
    merge: (a, b) => hll.merge(a as Uint8Array, b as Uint8Array),
    evaluate: (b) => hll.query(b as Uint8Array),
    toJSON: (b) => registersToJSON(hll, b as Uint8Array),
    fromJSON: (j) => registersFromJSON(hll, j)
  }
}

// DISTINCT ------------------------------------------------------------------------------------

/**
 * `count`, `sum`, `avg` and `collect_list` with `DISTINCT`: the buffer is the set of distinct
 * argument tuples in first-seen order (doubles normalised: -0.0 as 0.0 and NaN as one value, as
 * Spark's distinct aggregation groups them); `evaluate` runs the plain aggregate over that set.
 * These aggregates ignore nulls, so tuples with a null are never stored: `count(DISTINCT a, b)`
 * counts the distinct tuples without nulls.
 */
const distinctImpl = (
  fn: AggregateFunction,
  argTypes: ReadonlyArray<DataType>,
  args: ReadonlyArray<Evaluator>,
  resultType: DataType
): AggregateImpl => {
  const n = args.length
  const single = n === 1
  const tupleType = T.struct(argTypes.map((t, i) => T.field(`_${i}`, t)))
  const key: (v: unknown) => unknown = single ? memberKey(argTypes[0]) : Ordering.keyString(tupleType)
  const normalizeDouble = single && argTypes[0]._tag === "double"
  const enc = single ? valueToJSON(argTypes[0]) : valueToJSON(tupleType)
  const dec = single ? valueFromJSON(argTypes[0]) : valueFromJSON(tupleType)
  // The plain aggregate over one stored value (single argument: a reused one-slot row) or tuple.
  const inner = makeAggregate(
    { ...fn, distinct: false },
    args.map((_, i) => (row: InternalRow) => row[i]),
    argTypes
  )
  const add = (buf: SetBuffer, v: unknown): void => {
    const k = key(v)
    if (!buf.seen.has(k)) {
      buf.seen.add(k)
      buf.values.push(v)
    }
  }
  const read = single
    ? (row: InternalRow): unknown => {
        const v = args[0](row)
        if (v === null || v === undefined) return undefined
        return normalizeDouble && v === 0 ? 0 : v
      }
    : (row: InternalRow): unknown => {
        const t = new Array<unknown>(n)
        for (let i = 0; i < n; i++) {
          const v = args[i](row)
          if (v === null || v === undefined) return undefined
          t[i] = v
        }
        return t
      }
  const slot: Array<unknown> = [null]
  return {
    resultType,
    init: (): SetBuffer => ({ seen: new Set(), values: [] }),
    update: (b, row) => {
      const v = read(row)
      if (v !== undefined) add(b as SetBuffer, v)
      return b
    },
    merge: (a, b) => {
      const y = (b as SetBuffer).values
      for (let i = 0; i < y.length; i++) add(a as SetBuffer, y[i])
      return a
    },
    evaluate: (b) => {
      const values = (b as SetBuffer).values
      if (fn.name === "count") return values.length
      let acc = inner.init()
      for (let i = 0; i < values.length; i++) {
        if (single) {
          slot[0] = values[i]
          acc = inner.update(acc, slot)
        } else acc = inner.update(acc, values[i] as InternalRow)
      }
      slot[0] = null
      return inner.evaluate(acc)
    },
    toJSON: (b) => (b as SetBuffer).values.map(enc),
    fromJSON: (j) => {
      const buf: SetBuffer = { seen: new Set(), values: [] }
      for (const x of j as Array<unknown>) add(buf, dec(x))
      return buf
    }
  }
}

/**
 * Builds one running aggregate for a resolved `AggregateFunction`. `args` are the compiled
 * evaluators of the (already cast, see `resolveAggregate`) arguments and `argTypes` their types.
 * Built once per plan; the returned functions run in the aggregation loops.
 *
 * A call that `resolveAggregate` rejects is a bug in the caller (the analyzer checks first), so
 * it throws (a defect), never returns a half-working aggregate.
 */
export const makeAggregate = (
  fn: AggregateFunction,
  args: ReadonlyArray<Evaluator>,
  argTypes: ReadonlyArray<DataType>
): AggregateImpl => {
  const r = resolveAggregate(fn.name, argTypes, fn.distinct, fn.options, fn.args)
  if (r._tag === "Invalid") throw new Error(`makeAggregate(${fn.name}): ${r.message}`)
  const resultType = r.resultType
  const t = argTypes[0]
  const a0 = args[0]
  // Spark's EliminateDistinct drops DISTINCT from min, max, first, last and collect_set
  // (collect_set(DISTINCT x) keeps every NaN, like collect_set(x)); approx_count_distinct ignores
  // duplicates by construction; max_by / min_by over the distinct (value, ordering) pairs pick
  // the same value as over all rows. The others (the statistics and percentiles ignore rows
  // with a null argument, as the distinct set does) run over the distinct argument tuples.
  if (fn.distinct && !IGNORES_DISTINCT.has(fn.name)) return distinctImpl(fn, argTypes, args, resultType)
  switch (fn.name) {
    case "count":
      return countImpl(args)
    case "sum":
      return T.isIntegral(t) ? longSumImpl(a0) : doubleSumImpl(a0)
    case "avg":
      return avgImpl(a0)
    case "min":
      return extremumImpl(t, a0, 1)
    case "max":
      return extremumImpl(t, a0, -1)
    case "first":
      return firstImpl(t, a0, fn.options.ignoreNulls === true)
    case "last":
      return lastImpl(t, a0, fn.options.ignoreNulls === true)
    case "collect_list":
      return collectListImpl(t, a0)
    case "collect_set":
      return collectSetImpl(t, a0)
    case "approx_count_distinct":
      return approxCountDistinctImpl(t, a0, fn.options.rsd ?? 0.05)
    case "stddev":
    case "std":
    case "stddev_samp":
    case "stddev_pop":
    case "variance":
    case "var_samp":
    case "var_pop":
      return Stat.centralMoment(fn.name, a0, fn.options.legacyStatisticalAggregate === true)
    case "skewness":
    case "kurtosis":
      return Stat.higherMoment(fn.name, a0, fn.options.legacyStatisticalAggregate === true)
    case "covar_pop":
    case "covar_samp":
      return Stat.covariance(fn.name, a0, args[1], fn.options.legacyStatisticalAggregate === true)
    case "corr":
      return Stat.corr(a0, args[1], fn.options.legacyStatisticalAggregate === true)
    case "max_by":
      return byImpl(t, argTypes[1], a0, args[1], 1)
    case "min_by":
      return byImpl(t, argTypes[1], a0, args[1], -1)
    case "median":
      return Stat.percentile(a0, [0.5], false)
    case "percentile": {
      const p = foldNumbers(fn.args[1])
      const frequency =
        args.length === 3 ? { eval: args[2], sql: `"${prettyName(stripCasts(fn.args[2]))}"` } : undefined
      return Stat.percentile(a0, (Array.isArray(p) ? p : [p]) as ReadonlyArray<number>, Array.isArray(p), frequency)
    }
    case "percentile_approx":
    case "approx_percentile": {
      const p = foldNumbers(fn.args[1])
      const accuracy = fn.args.length === 3 ? (foldNumbers(fn.args[2]) as number) : DEFAULT_PERCENTILE_ACCURACY
      return Stat.percentileApprox(
        t,
        a0,
        (Array.isArray(p) ? p : [p]) as ReadonlyArray<number>,
        Array.isArray(p),
        accuracy
      )
    }
  }
}

const stripCasts = (e: Expression): Expression => (e._tag === "Cast" ? stripCasts(e.child) : e)

/** The aggregates whose result DISTINCT does not change. */
const IGNORES_DISTINCT: ReadonlySet<AggregateName> = new Set<AggregateName>([
  "min",
  "max",
  "first",
  "last",
  "collect_set",
  "approx_count_distinct",
  "max_by",
  "min_by"
])

/** Spark's `ApproximatePercentile.DEFAULT_PERCENTILE_ACCURACY`. */
export const DEFAULT_PERCENTILE_ACCURACY = 10000
