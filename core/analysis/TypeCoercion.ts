/**
 * Spark's type coercion with `spark.sql.ansi.enabled=false` (Catalyst's `TypeCoercion` object and
 * its rules `PromoteStrings`, `BooleanEquality`, `InConversion`, `CaseWhenCoercion`, `Division`,
 * `ImplicitTypeCasts`, `WidenSetOperationTypes`), the type checks that follow them
 * (`checkInputDataTypes`), and the helpers Spark's error messages are built from (`toSQLType`,
 * `toSQLId`, `toSQLExpr`).
 *
 * The analyzer calls these on expressions whose children are already resolved and coerced; a
 * failed check throws an internal `AnalysisFailure` that the analyzer turns into a typed
 * `AnalysisError` at its boundary (nothing here escapes the public API as an exception).
 *
 * @since 0.1.0
 */
import { canCast, forceNullable } from "../Cast.ts"
import { dataTypeOf, nullableOf } from "../Compile.ts"
import * as T from "../DataType.ts"
import { AnalysisError } from "../Errors.ts"
import type * as E from "../Expression.ts"
import { prettyName } from "../ExpressionName.ts"
import { lookup } from "../functions/mod.ts"

/** The type helpers of `Cast.ts` and `Compile.ts`, re-exported for the analyzer and optimizer. */
export { canCast, dataTypeOf, forceNullable, nullableOf }

// ---------------------------------------------------------------------------------------------
// Failures
// ---------------------------------------------------------------------------------------------

/**
 * Thrown inside the analyzer (never across the public API): carries the `AnalysisError` that
 * `analyze` returns as its failure.
 */
export class AnalysisFailure extends Error {
  readonly error: AnalysisError
  constructor(error: AnalysisError) {
    super(error.message)
    this.error = error
  }
}

/** Throws an `AnalysisFailure`; `message` is the whole Spark message including `[CLASS]`. */
export const fail = (
  reason: AnalysisError["reason"],
  errorClass: string | undefined,
  message: string,
  suggestions?: ReadonlyArray<string>
): never => {
  throw new AnalysisFailure(
    new AnalysisError(
      errorClass === undefined
        ? { reason, message, ...(suggestions === undefined ? {} : { suggestions }) }
        : { reason, message, errorClass, ...(suggestions === undefined ? {} : { suggestions }) }
    )
  )
}

/** Throws a Spark error with class `cls`: the message is `[cls] text` unless the class is legacy. */
export const failClass = (reason: AnalysisError["reason"], cls: string, text: string): never =>
  fail(reason, cls, cls.startsWith("_LEGACY_ERROR") ? text : `[${cls}] ${text}`)

/** `[DATATYPE_MISMATCH.<sub>] Cannot resolve "<expr>" due to data type mismatch: <text>` */
export const failMismatch = (sub: string, expr: E.Expression, text: string): never =>
  failClass(
    "DataTypeMismatch",
    `DATATYPE_MISMATCH.${sub}`,
    `Cannot resolve ${toSQLExpr(expr)} due to data type mismatch: ${text}`
  )

// ---------------------------------------------------------------------------------------------
// Spark's SQL spellings in messages
// ---------------------------------------------------------------------------------------------

/** Spark's `quoteIdentifier`: backquotes, doubling backquotes inside. */
export const quoteIdentifier = (part: string): string => `\`${part.replace(/`/g, "``")}\``

/** Spark's `toSQLType`: the SQL type name in double quotes. */
export const toSQLType = (t: T.DataType): string => `"${T.sqlTypeName(t)}"`

/** Spark's `toSQLId`: every name part backquoted, joined by dots. */
export const toSQLId = (parts: string | ReadonlyArray<string>): string =>
  (typeof parts === "string" ? [parts] : parts).map(quoteIdentifier).join(".")

/** Casts inserted by coercion; Spark's `toPrettySQL` leaves them out of names and messages. */
const implicitCasts = new WeakSet<object>()

/** A cast inserted by the analyzer (not written by the user). */
export const implicitCast = (child: E.Expression, to: T.DataType): E.Cast => {
  const c: E.Cast = { _tag: "Cast", child, to }
  implicitCasts.add(c)
  return c
}

/** Whether `e` is a cast the analyzer inserted. */
export const isImplicitCast = (e: E.Expression): boolean => e._tag === "Cast" && implicitCasts.has(e)

const stripImplicitCasts = (e: E.Expression): E.Expression => {
  if (e._tag === "Cast" && implicitCasts.has(e)) return stripImplicitCasts(e.child)
  switch (e._tag) {
    case "UnresolvedAttribute":
    case "UnresolvedStar":
    case "AttributeReference":
    case "Literal":
    case "CurrentTimestamp":
    case "InvalidExpression":
      return e
    case "Alias":
    case "UnaryExpression":
    case "Cast":
    case "GetField":
    case "SortOrder":
      return { ...e, child: stripImplicitCasts(e.child) }
    case "Explode": {
      // Spark's SQL of a generator: explode(x), posexplode(x), explode_outer(x)
      const name = `${e.position ? "posexplode" : "explode"}${e.outer ? "_outer" : ""}`
      return { _tag: "ScalarFunction", name, args: [stripImplicitCasts(e.child)], dataType: undefined }
    }
    case "BinaryExpression":
      return { ...e, left: stripImplicitCasts(e.left), right: stripImplicitCasts(e.right) }
    case "In":
      return { ...e, child: stripImplicitCasts(e.child), list: e.list.map(stripImplicitCasts) }
    case "CaseWhen":
      return {
        ...e,
        branches: e.branches.map(([c, v]) => [stripImplicitCasts(c), stripImplicitCasts(v)] as const),
        otherwise: e.otherwise === undefined ? undefined : stripImplicitCasts(e.otherwise)
      }
    case "ScalarFunction":
    case "AggregateFunction":
    case "WindowFunction":
      return { ...e, args: e.args.map(stripImplicitCasts) }
    case "WindowExpression":
      return {
        ...e,
        function: stripImplicitCasts(e.function),
        partitionSpec: e.partitionSpec.map(stripImplicitCasts),
        orderSpec: e.orderSpec.map(stripImplicitCasts)
      }
    case "TimeWindow": {
      // Spark's TimeWindow SQL: window(ts, <window>, <slide>, <start>) in microseconds
      const us = (ms: number): E.Expression => ({ _tag: "Literal", value: ms * 1000, dataType: T.IntegerType })
      return {
        _tag: "ScalarFunction",
        name: "window",
        args: [stripImplicitCasts(e.timeColumn), us(e.windowMs), us(e.slideMs), us(e.startMs)],
        dataType: undefined
      }
    }
    case "SessionWindow":
      return { ...e, timeColumn: stripImplicitCasts(e.timeColumn), gap: stripImplicitCasts(e.gap) }
  }
}

/** Spark's `toSQLExpr`: the pretty SQL of an expression (implicit casts left out) in double quotes. */
export const toSQLExpr = (e: E.Expression): string => `"${toPrettySQL(e)}"`

/** The pretty SQL of an expression without quotes (Spark's `toPrettySQL`). */
export const toPrettySQL = (e: E.Expression): string => prettyName(stripImplicitCasts(e))

/** Spark's `QueryErrorsBase.ordinalNumber`. */
export const ordinalNumber = (i: number): string =>
  i === 0 ? "first" : i === 1 ? "second" : i === 2 ? "third" : `${i + 1}th`

// ---------------------------------------------------------------------------------------------
// Type widening (TypeCoercion.scala, non-ANSI)
// ---------------------------------------------------------------------------------------------

/** Exact equality of types, nullability flags included (Scala's `==` on `DataType`). */
export const equalsType = (a: T.DataType, b: T.DataType): boolean => {
  if (a._tag !== b._tag) return false
  switch (a._tag) {
    case "array": {
      const y = b as T.ArrayType
      return a.containsNull === y.containsNull && equalsType(a.elementType, y.elementType)
    }
    case "map": {
      const y = b as T.MapType
      return (
        a.valueContainsNull === y.valueContainsNull &&
        equalsType(a.keyType, y.keyType) &&
        equalsType(a.valueType, y.valueType)
      )
    }
    case "struct": {
      const y = b as T.StructType
      return (
        a.fields.length === y.fields.length &&
        a.fields.every(
          (f, i) =>
            f.name === y.fields[i].name &&
            f.nullable === y.fields[i].nullable &&
            equalsType(f.dataType, y.fields[i].dataType)
        )
      )
    }
    default:
      return true
  }
}

/** Spark's `AtomicType`: the scalar types other than null and intervals. */
export const isAtomic = (t: T.DataType): boolean =>
  t._tag === "boolean" ||
  t._tag === "integer" ||
  t._tag === "long" ||
  t._tag === "double" ||
  t._tag === "string" ||
  t._tag === "binary" ||
  t._tag === "timestamp" ||
  t._tag === "date"

const numericRank = (t: T.DataType): number =>
  t._tag === "integer" ? 1 : t._tag === "long" ? 2 : t._tag === "double" ? 3 : 0

const findTypeForComplex = (
  t1: T.DataType,
  t2: T.DataType,
  f: (a: T.DataType, b: T.DataType) => T.DataType | undefined,
  caseSensitive: boolean
): T.DataType | undefined => {
  if (t1._tag === "array" && t2._tag === "array") {
    const et = f(t1.elementType, t2.elementType)
    if (et === undefined) return undefined
    return T.array(
      et,
      t1.containsNull || t2.containsNull || forceNullable(t1.elementType, et) || forceNullable(t2.elementType, et)
    )
  }
  if (t1._tag === "map" && t2._tag === "map") {
    const kt = f(t1.keyType, t2.keyType)
    if (kt === undefined || forceNullable(t1.keyType, kt) || forceNullable(t2.keyType, kt)) return undefined
    const vt = f(t1.valueType, t2.valueType)
    if (vt === undefined) return undefined
    return T.map(
      kt,
      vt,
      t1.valueContainsNull || t2.valueContainsNull || forceNullable(t1.valueType, vt) || forceNullable(t2.valueType, vt)
    )
  }
  if (t1._tag === "struct" && t2._tag === "struct" && t1.fields.length === t2.fields.length) {
    const fields: Array<T.StructField> = []
    for (let i = 0; i < t1.fields.length; i++) {
      const a = t1.fields[i]
      const b = t2.fields[i]
      if (!sameName(a.name, b.name, caseSensitive)) return undefined
      const dt = f(a.dataType, b.dataType)
      if (dt === undefined) return undefined
      fields.push(
        T.field(a.name, dt, a.nullable || b.nullable || forceNullable(a.dataType, dt) || forceNullable(b.dataType, dt))
      )
    }
    return T.struct(fields)
  }
  return undefined
}

/** Spark's resolver: names compare case-insensitively unless `spark.sql.caseSensitive`. */
export const sameName = (a: string, b: string, caseSensitive: boolean): boolean =>
  caseSensitive ? a === b : a === b || a.toLowerCase() === b.toLowerCase()

/**
 * Spark's `findTightestCommonType`: the common type without loss of precision (numeric widening,
 * date with timestamp, complex types field by field); `undefined` when there is none.
 */
export const findTightestCommonType = (
  t1: T.DataType,
  t2: T.DataType,
  caseSensitive = false
): T.DataType | undefined => {
  if (equalsType(t1, t2)) return t1
  if (t1._tag === "null") return t2
  if (t2._tag === "null") return t1
  const r1 = numericRank(t1)
  const r2 = numericRank(t2)
  if (r1 > 0 && r2 > 0) return r1 >= r2 ? t1 : t2
  if (T.isDatetime(t1) && T.isDatetime(t2)) return T.TimestampType
  return findTypeForComplex(t1, t2, (a, b) => findTightestCommonType(a, b, caseSensitive), caseSensitive)
}

/** Spark's `stringPromotion`: any atomic type but binary and boolean widens to string. */
const stringPromotion = (t1: T.DataType, t2: T.DataType): T.DataType | undefined => {
  if (t1._tag === "string" && isAtomic(t2) && t2._tag !== "binary" && t2._tag !== "boolean") return T.StringType
  if (t2._tag === "string" && isAtomic(t1) && t1._tag !== "binary" && t1._tag !== "boolean") return T.StringType
  return undefined
}

/** Spark's `findWiderTypeForTwo`: tightest common type, else promotion to string, else field-wise. */
export const findWiderTypeForTwo = (t1: T.DataType, t2: T.DataType, caseSensitive = false): T.DataType | undefined =>
  findTightestCommonType(t1, t2, caseSensitive) ??
  stringPromotion(t1, t2) ??
  findTypeForComplex(t1, t2, (a, b) => findWiderTypeForTwo(a, b, caseSensitive), caseSensitive)

const hasStringType = (t: T.DataType): boolean =>
  t._tag === "string" || (t._tag === "array" && hasStringType(t.elementType))

/**
 * Spark's `findWiderCommonType`: string-bearing types first (so that `(timestamp, int, string)`
 * widens to string), then a fold of `findWiderTypeForTwo` starting from `NullType`.
 */
export const findWiderCommonType = (
  types: ReadonlyArray<T.DataType>,
  caseSensitive = false
): T.DataType | undefined => {
  const strings: Array<T.DataType> = []
  const others: Array<T.DataType> = []
  for (const t of types) {
    if (hasStringType(t)) {
      if (!strings.some((s) => equalsType(s, t))) strings.push(t)
    } else others.push(t)
  }
  let acc: T.DataType | undefined = T.NullType
  for (const t of [...strings, ...others]) {
    acc = findWiderTypeForTwo(acc, t, caseSensitive)
    if (acc === undefined) return undefined
  }
  return acc
}

/** Spark's `haveSameType`: equal ignoring nullability flags. */
export const haveSameType = (types: ReadonlyArray<T.DataType>): boolean =>
  types.length <= 1 || types.every((t) => T.sameType(t, types[0]))

/**
 * Spark's `findCommonTypeForBinaryComparison` (non-ANSI, `castDatetimeToString` off): a string
 * compared with a number, boolean or datetime is cast to that type; date with timestamp compares
 * as timestamps.
 */
export const findCommonTypeForBinaryComparison = (l: T.DataType, r: T.DataType): T.DataType | undefined => {
  if (l._tag === "string" && r._tag === "date") return T.DateType
  if (l._tag === "date" && r._tag === "string") return T.DateType
  if (l._tag === "string" && r._tag === "timestamp") return T.TimestampType
  if (l._tag === "timestamp" && r._tag === "string") return T.TimestampType
  if (l._tag === "string" && r._tag === "null") return T.StringType
  if (l._tag === "null" && r._tag === "string") return T.StringType
  if (l._tag === "timestamp" && r._tag === "date") return T.TimestampType
  if (l._tag === "date" && r._tag === "timestamp") return T.TimestampType
  if (l._tag === "string" && r._tag === "string") return T.StringType
  if (l._tag === "string" && isAtomic(r)) return r
  if (r._tag === "string" && isAtomic(l)) return l
  return undefined
}

/** Casts `e` to `t` unless it already has that type (Spark's `castIfNotSameType`). */
export const castIfNotSameType = (e: E.Expression, t: T.DataType): E.Expression =>
  T.sameType(dataTypeOf(e), t) ? e : implicitCast(e, t)

/** Whether values of `t` can be ordered (Spark's `RowOrdering.isOrderable`): maps cannot. */
export const isOrderable = (t: T.DataType): boolean => {
  switch (t._tag) {
    case "map":
      return false
    case "array":
      return isOrderable(t.elementType)
    case "struct":
      return t.fields.every((f) => isOrderable(f.dataType))
    default:
      return true
  }
}

// ---------------------------------------------------------------------------------------------
// Coercion of resolved expressions
// ---------------------------------------------------------------------------------------------

const isArithmetic = (op: E.BinaryOp): op is E.ArithmeticOp =>
  op === "+" || op === "-" || op === "*" || op === "/" || op === "%"

const isEquality = (op: E.BinaryOp): boolean => op === "=" || op === "<=>" || op === "!="

const binary = (e: E.BinaryExpression, left: E.Expression, right: E.Expression): E.BinaryExpression =>
  left === e.left && right === e.right ? e : { ...e, left, right }

/** `PromoteStrings.castExpr`: a null side becomes a typed null literal, others a cast. */
const castExprForComparison = (e: E.Expression, t: T.DataType): E.Expression => {
  const dt = dataTypeOf(e)
  if (dt._tag === "null") return { _tag: "Literal", value: null, dataType: t }
  return equalsType(dt, t) ? e : implicitCast(e, t)
}

const INTEGRAL_ONE = (e: E.Expression): boolean =>
  e._tag === "Literal" && (e.dataType._tag === "integer" || e.dataType._tag === "long") && e.value === 1
const INTEGRAL_ZERO = (e: E.Expression): boolean =>
  e._tag === "Literal" && (e.dataType._tag === "integer" || e.dataType._tag === "long") && e.value === 0

const not = (child: E.Expression): E.Expression => ({ _tag: "UnaryExpression", op: "not", child })
const isNotNull = (child: E.Expression): E.Expression => ({ _tag: "UnaryExpression", op: "isNotNull", child })
const and = (left: E.Expression, right: E.Expression): E.Expression => ({
  _tag: "BinaryExpression",
  op: "and",
  left,
  right
})

/**
 * Spark's `BooleanEquality`: `bool = 1` is `bool`, `bool = 0` is `NOT bool`, and a boolean
 * compared for equality with any other number is cast to that number's type. `undefined` when
 * the rule does not apply.
 */
const booleanEquality = (e: E.BinaryExpression): E.Expression | undefined => {
  if (!isEquality(e.op)) return undefined
  const lt = dataTypeOf(e.left)
  const rt = dataTypeOf(e.right)
  const [bool, num, boolLeft] =
    lt._tag === "boolean" && T.isNumeric(rt)
      ? [e.left, e.right, true]
      : rt._tag === "boolean" && T.isNumeric(lt)
        ? [e.right, e.left, false]
        : [undefined, undefined, false]
  if (bool === undefined || num === undefined) return undefined
  const nullSafe = e.op === "<=>"
  const negate = e.op === "!="
  const wrap = (x: E.Expression): E.Expression => (negate ? not(x) : x)
  if (INTEGRAL_ONE(num)) return wrap(nullSafe ? and(isNotNull(bool), bool) : bool)
  if (INTEGRAL_ZERO(num)) return wrap(nullSafe ? and(isNotNull(bool), not(bool)) : not(bool))
  const cast = implicitCast(bool, dataTypeOf(num))
  return boolLeft ? binary(e, cast, e.right) : binary(e, e.left, cast)
}

const NUMERIC_AND_INTERVAL = '("NUMERIC" or "INTERVAL" or "INTERVAL DAY TO SECOND" or "INTERVAL YEAR TO MONTH")'

/** The SQL name of what an operator accepts, for `BINARY_OP_WRONG_TYPE`. */
const inputTypeSql = (op: E.BinaryOp): string => {
  switch (op) {
    case "+":
    case "-":
      return NUMERIC_AND_INTERVAL
    case "*":
    case "%":
      return '"NUMERIC"'
    case "/":
      return '("DOUBLE" or "DECIMAL")'
    case "and":
    case "or":
      return '"BOOLEAN"'
    default:
      return '"ANY"'
  }
}

const accepts = (op: E.BinaryOp, t: T.DataType): boolean => {
  if (isArithmetic(op)) return op === "/" ? t._tag === "double" : T.isNumeric(t)
  if (op === "and" || op === "or") return t._tag === "boolean"
  return true
}

/** Spark's name for a comparison in `INVALID_ORDERING_TYPE`. */
const comparisonName = (op: E.BinaryOp): string => {
  switch (op) {
    case "<":
      return "lessthan"
    case "<=":
      return "lessthanorequal"
    case ">":
      return "greaterthan"
    case ">=":
      return "greaterthanorequal"
    case "<=>":
      return "equalnullsafe"
    default:
      return "equalto"
  }
}

/**
 * Coerces a binary expression whose children are resolved (Spark's `PromoteStrings`,
 * `BooleanEquality`, `Division` and `ImplicitTypeCasts`, in that order), then runs its type check
 * (`BinaryOperator.checkInputDataTypes`). Returns the coerced expression (possibly no longer a
 * binary expression: `bool = 1` is `bool`); throws `[DATATYPE_MISMATCH.*]` on failure.
 *
 * `original` is the expression as the user wrote it, for the message.
 */
export const coerceBinary = (e: E.BinaryExpression, original: E.Expression = e): E.Expression => {
  let cur: E.BinaryExpression = e
  const op = e.op
  let lt = dataTypeOf(cur.left)
  let rt = dataTypeOf(cur.right)
  if (isArithmetic(op)) {
    // PromoteStrings: a string operand of arithmetic is read as a double
    if (lt._tag === "string" && rt._tag !== "calendarInterval")
      cur = binary(cur, implicitCast(cur.left, T.DoubleType), cur.right)
    if (rt._tag === "string" && lt._tag !== "calendarInterval")
      cur = binary(cur, cur.left, implicitCast(cur.right, T.DoubleType))
    lt = dataTypeOf(cur.left)
    rt = dataTypeOf(cur.right)
    // Division: `/` is always fractional division; both sides become double unless the left one is
    const numOrNull = (t: T.DataType) => T.isNumeric(t) || t._tag === "null"
    if (op === "/" && lt._tag !== "double" && numOrNull(lt) && numOrNull(rt)) {
      cur = binary(cur, implicitCast(cur.left, T.DoubleType), implicitCast(cur.right, T.DoubleType))
      lt = rt = T.DoubleType
    }
    // Both sides null: read as doubles so that the operator has a numeric type
    if (lt._tag === "null" && rt._tag === "null") {
      cur = binary(cur, implicitCast(cur.left, T.DoubleType), implicitCast(cur.right, T.DoubleType))
      lt = rt = T.DoubleType
    }
  } else if (op === "and" || op === "or") {
    if (lt._tag === "null" && rt._tag === "null") {
      cur = binary(cur, implicitCast(cur.left, T.BooleanType), implicitCast(cur.right, T.BooleanType))
      lt = rt = T.BooleanType
    }
  } else {
    // PromoteStrings for comparisons
    if (isEquality(op) && lt._tag === "string" && rt._tag === "timestamp") {
      cur = binary(cur, implicitCast(cur.left, T.TimestampType), cur.right)
    } else if (isEquality(op) && lt._tag === "timestamp" && rt._tag === "string") {
      cur = binary(cur, cur.left, implicitCast(cur.right, T.TimestampType))
    } else {
      const common = findCommonTypeForBinaryComparison(lt, rt)
      if (common !== undefined)
        cur = binary(cur, castExprForComparison(cur.left, common), castExprForComparison(cur.right, common))
    }
    const be = booleanEquality(cur)
    if (be !== undefined) {
      if (be._tag !== "BinaryExpression") return be
      cur = be
    }
    lt = dataTypeOf(cur.left)
    rt = dataTypeOf(cur.right)
  }
  // ImplicitTypeCasts: different types meet at their tightest common type when the operator takes it
  if (!T.sameType(lt, rt)) {
    const common = findTightestCommonType(lt, rt)
    if (common !== undefined && accepts(op, common)) {
      cur = binary(
        cur,
        T.sameType(lt, common) ? cur.left : implicitCast(cur.left, common),
        T.sameType(rt, common) ? cur.right : implicitCast(cur.right, common)
      )
      lt = rt = common
    }
  }
  // checkInputDataTypes
  if (!T.sameType(lt, rt)) {
    failMismatch(
      "BINARY_OP_DIFF_TYPES",
      original,
      `the left and right operands of the binary operator have incompatible types (${toSQLType(lt)} and ${toSQLType(rt)}).`
    )
  }
  if (!accepts(op, lt)) {
    failMismatch(
      "BINARY_OP_WRONG_TYPE",
      original,
      `the binary operator requires the input type ${inputTypeSql(op)}, not ${toSQLType(lt)}.`
    )
  }
  if (!isArithmetic(op) && op !== "and" && op !== "or" && !isOrderable(lt)) {
    failMismatch(
      "INVALID_ORDERING_TYPE",
      original,
      `The ${toSQLId(comparisonName(op))} does not support ordering on type ${toSQLType(lt)}.`
    )
  }
  return cur
}

/**
 * Spark's `InConversion` and `In.checkInputDataTypes`: when a list value's type differs from the
 * tested value's, every child is cast to their wider common type.
 */
export const coerceIn = (e: E.In, original: E.Expression = e): E.Expression => {
  const vt = dataTypeOf(e.child)
  const types = [vt, ...e.list.map(dataTypeOf)]
  let cur: E.In = e
  if (e.list.some((x) => !equalsType(dataTypeOf(x), vt))) {
    const wide = findWiderCommonType(types)
    if (wide !== undefined) {
      cur = { ...e, child: implicitCast(e.child, wide), list: e.list.map((x) => implicitCast(x, wide)) }
    }
  }
  const after = [dataTypeOf(cur.child), ...cur.list.map(dataTypeOf)]
  if (!haveSameType(after)) {
    failMismatch(
      "DATA_DIFF_TYPES",
      original,
      `Input to ${toSQLId("in")} should all be the same type, but it's [${types.map(toSQLType).join(", ")}].`
    )
  }
  if (!isOrderable(after[0])) {
    failMismatch(
      "INVALID_ORDERING_TYPE",
      original,
      `The ${toSQLId("in")} does not support ordering on type ${toSQLType(after[0])}.`
    )
  }
  return cur
}

/**
 * Spark's `CaseWhenCoercion` and `CaseWhen.checkInputDataTypes`: branch values meet at their wider
 * common type; every condition must be boolean.
 */
export const coerceCaseWhen = (e: E.CaseWhen, original: E.Expression = e): E.Expression => {
  const values = [...e.branches.map(([, v]) => v), ...(e.otherwise === undefined ? [] : [e.otherwise])]
  const types = values.map(dataTypeOf)
  let cur: E.CaseWhen = e
  if (!haveSameType(types)) {
    const wide = findWiderCommonType(types)
    if (wide === undefined) {
      failMismatch(
        "DATA_DIFF_TYPES",
        original,
        `Input to ${toSQLId("casewhen")} should all be the same type, but it's [${types.map(toSQLType).join(", ")}].`
      )
    } else {
      cur = {
        ...e,
        branches: e.branches.map(([c, v]) => [c, castIfNotSameType(v, wide)] as const),
        otherwise: e.otherwise === undefined ? undefined : castIfNotSameType(e.otherwise, wide)
      }
    }
  }
  const bad = cur.branches.findIndex(([c]) => dataTypeOf(c)._tag !== "boolean")
  if (bad >= 0) {
    const c = cur.branches[bad][0]
    failMismatch(
      "UNEXPECTED_INPUT_TYPE",
      original,
      `The ${ordinalNumber(bad * 2)} parameter requires the ${toSQLType(T.BooleanType)} type, however ${toSQLExpr(c)} has the type ${toSQLType(dataTypeOf(c))}.`
    )
  }
  return cur
}

/**
 * Unary operators (`ImplicitCastInputTypes` of `UnaryMinus` and `Not`): `-` takes numbers (a
 * string or null is read as a double), `NOT` takes booleans (null is cast); `IS [NOT] NULL` takes
 * anything.
 */
export const coerceUnary = (e: E.UnaryExpression, original: E.Expression = e): E.Expression => {
  const t = dataTypeOf(e.child)
  switch (e.op) {
    case "negate":
      if (T.isNumeric(t)) return e
      if (t._tag === "string" || t._tag === "null") return { ...e, child: implicitCast(e.child, T.DoubleType) }
      return failMismatch(
        "UNEXPECTED_INPUT_TYPE",
        original,
        `The first parameter requires the ("NUMERIC" or "INTERVAL DAY TO SECOND" or "INTERVAL YEAR TO MONTH") type, however ${toSQLExpr(e.child)} has the type ${toSQLType(t)}.`
      )
    case "not":
      if (t._tag === "boolean") return e
      if (t._tag === "null") return { ...e, child: implicitCast(e.child, T.BooleanType) }
      return failMismatch(
        "UNEXPECTED_INPUT_TYPE",
        original,
        `The first parameter requires the ${toSQLType(T.BooleanType)} type, however ${toSQLExpr(e.child)} has the type ${toSQLType(t)}.`
      )
    case "isNull":
    case "isNotNull":
      return e
  }
}

/** `Cast.checkInputDataTypes` (non-ANSI): the cast must be one Spark can do. */
export const checkCast = (e: E.Cast, original: E.Expression = e): E.Expression => {
  const from = dataTypeOf(e.child)
  if (!canCast(from, e.to)) {
    failMismatch("CAST_WITHOUT_SUGGESTION", original, `cannot cast ${toSQLType(from)} to ${toSQLType(e.to)}.`)
  }
  return e
}

/** Whether a registered scalar function exists (for messages that need it). */
export const hasFunction = (name: string): boolean => lookup(name) !== undefined
