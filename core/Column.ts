/**
 * `Column`: a typed, immutable wrapper around an `Expression`.
 *
 * `T` is the type of the column's values as the user sees them (after `collect`), `N` the
 * column's name when it is known at compile time (`F.col("x")`, `.as("y")`, `F.sum("x")` is
 * `"sum(x)"`). The DataFrame methods use both to compute result row types.
 *
 * @since 0.1.0
 */
import type { DataType } from "./DataType.ts"
import * as T from "./DataType.ts"
import * as E from "./Expression.ts"
import { prettyName } from "./ExpressionName.ts"
import * as L from "./Long.ts"

/** Values a column method accepts where Spark accepts a literal. */
export type Primitive = string | number | boolean | Date | null | Uint8Array

/**
 * A column expression.
 *
 * @example
 * ```ts
 * import { F } from "tributary-streaming"
 * const adult = F.col("age").geq(18).and(F.col("name").isNotNull()).as("adult")
 * ```
 * @since 0.1.0
 */
export class Column<out T = unknown, out N extends string = string> {
  declare readonly _T: T
  declare readonly _N: N
  readonly expr: E.Expression

  constructor(expr: E.Expression) {
    this.expr = expr
  }

  plus(other: ColumnOrValue): Column<number> {
    return binary("+", this, other)
  }
  minus(other: ColumnOrValue): Column<number> {
    return binary("-", this, other)
  }
  multiply(other: ColumnOrValue): Column<number> {
    return binary("*", this, other)
  }
  divide(other: ColumnOrValue): Column<number> {
    return binary("/", this, other)
  }
  mod(other: ColumnOrValue): Column<number> {
    return binary("%", this, other)
  }
  eq(other: ColumnOrValue): Column<boolean> {
    return binary("=", this, other)
  }
  /** Null-safe equality (`<=>`): true when both sides are null. */
  eqNullSafe(other: ColumnOrValue): Column<boolean> {
    return binary("<=>", this, other)
  }
  /** Spark's `=!=`: `NOT (a = b)`, named `(NOT (a = b))`. */
  neq(other: ColumnOrValue): Column<boolean> {
    return binary("=", this, other).not()
  }
  gt(other: ColumnOrValue): Column<boolean> {
    return binary(">", this, other)
  }
  geq(other: ColumnOrValue): Column<boolean> {
    return binary(">=", this, other)
  }
  lt(other: ColumnOrValue): Column<boolean> {
    return binary("<", this, other)
  }
  leq(other: ColumnOrValue): Column<boolean> {
    return binary("<=", this, other)
  }
  and(other: ColumnOrValue): Column<boolean> {
    return binary("and", this, other)
  }
  or(other: ColumnOrValue): Column<boolean> {
    return binary("or", this, other)
  }
  not(): Column<boolean> {
    return new Column({ _tag: "UnaryExpression", op: "not", child: this.expr })
  }
  negate(): Column<number> {
    return new Column({ _tag: "UnaryExpression", op: "negate", child: this.expr })
  }
  isNull(): Column<boolean> {
    return new Column({ _tag: "UnaryExpression", op: "isNull", child: this.expr })
  }
  isNotNull(): Column<boolean> {
    return new Column({ _tag: "UnaryExpression", op: "isNotNull", child: this.expr })
  }
  isin(...values: ReadonlyArray<ColumnOrValue | ReadonlyArray<ColumnOrValue>>): Column<boolean> {
    const flat = values.flatMap((v) => (Array.isArray(v) ? (v as ReadonlyArray<ColumnOrValue>) : [v as ColumnOrValue]))
    return new Column({ _tag: "In", child: this.expr, list: flat.map((v) => toExpr(v)) })
  }
  /** `lower <= this <= upper`, as Spark's `between`. */
  between(lower: ColumnOrValue, upper: ColumnOrValue): Column<boolean> {
    return this.geq(lower).and(this.leq(upper))
  }
  like(pattern: string): Column<boolean> {
    return call("like", [this, lit(pattern)])
  }
  rlike(pattern: string): Column<boolean> {
    return call("rlike", [this, lit(pattern)])
  }
  startsWith(other: ColumnOrValue): Column<boolean> {
    return call("startswith", [this, other])
  }
  endsWith(other: ColumnOrValue): Column<boolean> {
    return call("endswith", [this, other])
  }
  contains(other: ColumnOrValue): Column<boolean> {
    return call("contains", [this, other])
  }
  substr(pos: number, len: number): Column<string> {
    return call("substring", [this, lit(pos), lit(len)])
  }
  /** Casts to a Spark type name (`"int"`, `"bigint"`, `"double"`, `"string"`, `"timestamp"`, …) or a `DataType`. */
  cast<const To extends string | DataType>(to: To): Column<CastResult<To>, N> {
    const dataType: T.DataType | undefined = typeof to === "string" ? T.parseTypeString(to) : (to as T.DataType)
    if (dataType === undefined) {
      return new Column({
        _tag: "InvalidExpression",
        message: `[UNSUPPORTED_DATATYPE] Unsupported data type "${String(to)}".`
      }) as never
    }
    return new Column({ _tag: "Cast", child: this.expr, to: dataType }) as never
  }
  as<const M extends string>(name: M): Column<T, M> {
    return new Column({ _tag: "Alias", child: this.expr, name, exprId: E.newExprId() })
  }
  /** Same as `as`. */
  alias<const M extends string>(name: M): Column<T, M> {
    return this.as(name)
  }
  name<const M extends string>(name: M): Column<T, M> {
    return this.as(name)
  }
  asc(): Column<T, N> {
    return sortOrder(this, "asc", "nullsFirst")
  }
  asc_nulls_first(): Column<T, N> {
    return sortOrder(this, "asc", "nullsFirst")
  }
  asc_nulls_last(): Column<T, N> {
    return sortOrder(this, "asc", "nullsLast")
  }
  desc(): Column<T, N> {
    return sortOrder(this, "desc", "nullsLast")
  }
  desc_nulls_first(): Column<T, N> {
    return sortOrder(this, "desc", "nullsFirst")
  }
  desc_nulls_last(): Column<T, N> {
    return sortOrder(this, "desc", "nullsLast")
  }
  getField<const K extends string>(name: K): Column<T extends Record<K, infer V> ? V : unknown, K> {
    return new Column({ _tag: "GetField", child: this.expr, field: name, ordinal: undefined })
  }
  /** Continues a `F.when(...)` chain. */
  when(condition: Column<boolean>, value: ColumnOrValue): Column<unknown> {
    if (this.expr._tag !== "CaseWhen" || this.expr.otherwise !== undefined) {
      // Spark: "when() can only be applied on a Column previously generated by when() function"
      return new Column({
        _tag: "InvalidExpression",
        message: "when() can only be applied on a Column previously generated by when()"
      })
    }
    return new Column({
      ...this.expr,
      branches: [...this.expr.branches, [condition.expr, toExpr(value)]]
    })
  }
  /** Ends a `F.when(...)` chain with the value for rows no branch matched. */
  otherwise(value: ColumnOrValue): Column<unknown> {
    if (this.expr._tag !== "CaseWhen" || this.expr.otherwise !== undefined) {
      return new Column({
        _tag: "InvalidExpression",
        message: "otherwise() can only be applied once on a Column previously generated by when()"
      })
    }
    return new Column({ ...this.expr, otherwise: toExpr(value) })
  }
  /**
   * Spark's `Column.over(window)`: this window or aggregate function evaluated over a window
   * (`Window.partitionBy(...).orderBy(...)`); without a window, over the whole input.
   *
   * @example
   * ```ts
   * import { F, Window } from "tributary-streaming"
   * const rank = F.rank().over(Window.partitionBy("dept").orderBy(F.col("salary").desc())).as("rank")
   * ```
   */
  over(window?: WindowSpecLike): Column<T, string> {
    if (window?.invalid !== undefined) return new Column({ _tag: "InvalidExpression", message: window.invalid })
    return new Column({
      _tag: "WindowExpression",
      function: this.expr,
      partitionSpec: window?.partitionSpec ?? [],
      orderSpec: window?.orderSpec ?? [],
      frame: window?.frame
    })
  }
  toString(): string {
    return `Column<'${prettyName(this.expr)}'>`
  }
}

/** What `Column.over` reads of a window specification (`WindowSpec` in `Window.ts`). */
export interface WindowSpecLike {
  readonly partitionSpec: ReadonlyArray<E.Expression>
  readonly orderSpec: ReadonlyArray<E.Expression>
  readonly frame: E.WindowFrame | undefined
  readonly invalid: string | undefined
}

/** What `cast` turns a column into, for the result row type. */
export type CastResult<To> = To extends "string"
  ? string
  : To extends "boolean"
    ? boolean
    : To extends "timestamp" | "date"
      ? Date
      : To extends
            | "int"
            | "integer"
            | "bigint"
            | "long"
            | "double"
            | "float"
            | "smallint"
            | "tinyint"
            | "short"
            | "byte"
        ? number
        : unknown

export type ColumnOrValue = Column<any, any> | Primitive | ReadonlyArray<unknown>

/** The Spark type of a JavaScript literal: integers that fit are `int`, like `lit(1)` in Spark. */
export const literalType = (v: unknown): T.DataType => {
  if (v === null || v === undefined) return T.NullType
  if (typeof v === "string") return T.StringType
  if (typeof v === "boolean") return T.BooleanType
  if (typeof v === "number") {
    return Number.isInteger(v) && v >= -2147483648 && v <= 2147483647 ? T.IntegerType : T.DoubleType
  }
  if (typeof v === "bigint") return T.LongType
  if (v instanceof Date) return T.TimestampType
  if (v instanceof Uint8Array) return T.BinaryType
  if (Array.isArray(v)) {
    let elem: T.DataType = T.NullType
    for (const x of v) elem = T.commonType(elem, literalType(x)) ?? T.StringType
    return T.array(
      elem,
      v.some((x) => x === null || x === undefined)
    )
  }
  return T.StringType
}

/** A literal column. Dates become timestamps (epoch ms inside). */
export const lit = <const V extends Primitive | ReadonlyArray<unknown>>(value: V): Column<V> => {
  if (value instanceof Column) return value as never
  const dataType = literalType(value)
  const internal =
    value instanceof Date
      ? value.getTime()
      : typeof value === "bigint"
        ? L.fromBigInt(value)
        : value === undefined
          ? null
          : // -0 is an integer to JavaScript, so lit(-0.0) is an int literal, and an int has no
            // -0: Spark's value is 0 (issue #21, deviation 7)
            Object.is(value, -0)
            ? 0
            : value
  return new Column({ _tag: "Literal", value: internal, dataType })
}

/** Splits a column name into parts: dots separate, backquotes quote (`` `a.b`.c ``). */
export const parseName = (name: string): ReadonlyArray<string> => {
  const parts: Array<string> = []
  let cur = ""
  let quoted = false
  for (let i = 0; i < name.length; i++) {
    const ch = name[i]
    if (ch === "`") {
      if (quoted && name[i + 1] === "`") {
        cur += "`"
        i++
      } else quoted = !quoted
    } else if (ch === "." && !quoted) {
      parts.push(cur)
      cur = ""
    } else cur += ch
  }
  parts.push(cur)
  return parts
}

/** A column by name; `"*"` selects every column. `planId` ties it to one DataFrame. */
export const col = <const N extends string>(name: N, planId?: number): Column<unknown, N> => {
  if (name === "*") return new Column({ _tag: "UnresolvedStar", target: undefined, planId })
  if (name.endsWith(".*")) {
    return new Column({ _tag: "UnresolvedStar", target: parseName(name.slice(0, -2)), planId })
  }
  return new Column({ _tag: "UnresolvedAttribute", nameParts: parseName(name), planId })
}

/** A column or a column name (names become `col(name)`); other values become literals. */
export const toExpr = (v: ColumnOrValue): E.Expression => (v instanceof Column ? v.expr : lit(v as Primitive).expr)

/** A column argument given as a `Column` or a column name, as Spark's functions take. */
export type ColumnOrName = Column<any, any> | string

export const toColumnExpr = (v: ColumnOrName): E.Expression => (typeof v === "string" ? col(v).expr : v.expr)

const binary = (op: E.BinaryOp, left: Column<any, any>, right: ColumnOrValue): Column<any> =>
  new Column({ _tag: "BinaryExpression", op, left: left.expr, right: toExpr(right) })

const sortOrder = <A, N extends string>(
  c: Column<A, N>,
  direction: "asc" | "desc",
  nullOrdering: "nullsFirst" | "nullsLast"
): Column<A, N> => {
  const child = c.expr._tag === "SortOrder" ? c.expr.child : c.expr
  return new Column({ _tag: "SortOrder", child, direction, nullOrdering })
}

/** A call of a registered scalar function by its Spark name; arguments are columns or literals. */
export const call = <A = unknown>(name: string, args: ReadonlyArray<ColumnOrValue>): Column<A> =>
  new Column({ _tag: "ScalarFunction", name, args: args.map(toExpr), dataType: undefined })

/** A call whose column arguments may be given by name (`F.upper("name")`). */
export const callNamed = <A = unknown>(
  name: string,
  columns: ReadonlyArray<ColumnOrName>,
  rest: ReadonlyArray<ColumnOrValue> = []
): Column<A> =>
  new Column({
    _tag: "ScalarFunction",
    name,
    args: [...columns.map(toColumnExpr), ...rest.map(toExpr)],
    dataType: undefined
  })
