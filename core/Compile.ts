/**
 * The expression compiler: turns a resolved `Expression` into a closure over internal rows, once
 * per plan. Every decision that depends on types (which comparison, which arithmetic, which
 * cast) is made here, so the closure only reads values and computes; constant subtrees are
 * evaluated once at compile time.
 *
 * Semantics are Spark's with `spark.sql.ansi.enabled=false`: arithmetic propagates null, `/` is
 * double division and `x / 0`, `x % 0` are null, `int` arithmetic wraps at 32 bits, comparisons
 * and `and`/`or`/`not`/`in` use SQL three-valued logic, NaN equals NaN and sorts above every
 * other number.
 *
 * @since 0.1.0
 */
import { castFunction, forceNullable } from "./Cast.ts"
import * as T from "./DataType.ts"
import type * as E from "./Expression.ts"
import * as O from "./Ordering.ts"
import * as L from "./Long.ts"
import type { InternalRow } from "./Row.ts"
import { type Evaluator, lookup } from "./functions/Registry.ts"

export type { Evaluator } from "./functions/Registry.ts"

/** What compiled expressions may read besides the row. */
export interface CompileContext {
  /** `current_timestamp()`: the batch timestamp in a streaming query, the action's start in a batch one. */
  readonly currentTimestampMs: number
}

const EMPTY_ROW: InternalRow = []

const fail = (message: string): never => {
  throw new Error(message)
}

const notCompilable = (tag: string): never =>
  fail(
    `${tag} cannot be compiled as an expression: it is planned by its own operator (a bug in the planner if it gets here)`
  )

const unresolved = (e: E.Expression): never =>
  fail(`Expression ${e._tag} is not resolved and cannot be compiled (a bug in the analyzer)`)

const isArithmetic = (op: E.BinaryOp): op is E.ArithmeticOp =>
  op === "+" || op === "-" || op === "*" || op === "/" || op === "%"

/**
 * The data type of a resolved expression.
 *
 * @example
 * ```ts
 * import * as T from "./DataType.ts"
 * import { attribute, literal } from "./Expression.ts"
 * const a = attribute("a", T.IntegerType)
 * dataTypeOf({ _tag: "BinaryExpression", op: "/", left: a, right: literal(2, T.IntegerType) }) // double
 * ```
 * @since 0.1.0
 */
export const dataTypeOf = (e: E.Expression): T.DataType => {
  switch (e._tag) {
    case "AttributeReference":
    case "Literal":
      return e.dataType
    case "Alias":
    case "SortOrder":
      return dataTypeOf(e.child)
    case "UnaryExpression":
      return e.op === "negate" ? dataTypeOf(e.child) : T.BooleanType
    case "BinaryExpression": {
      if (!isArithmetic(e.op)) return T.BooleanType
      if (e.op === "/") return T.DoubleType
      const l = dataTypeOf(e.left)
      return l._tag === "null" ? dataTypeOf(e.right) : l
    }
    case "In":
      return T.BooleanType
    case "Cast":
      return e.to
    case "CaseWhen": {
      for (const [, v] of e.branches) {
        const t = dataTypeOf(v)
        if (t._tag !== "null") return t
      }
      return e.otherwise === undefined ? T.NullType : dataTypeOf(e.otherwise)
    }
    case "GetField": {
      const t = dataTypeOf(e.child)
      if (t._tag !== "struct") return fail(`GetField on a non-struct value of type ${T.simpleString(t)}`)
      const f = e.ordinal !== undefined ? t.fields[e.ordinal] : t.fields.find((x) => x.name === e.field)
      return f === undefined ? fail(`No field ${e.field} in ${T.simpleString(t)}`) : f.dataType
    }
    case "ScalarFunction":
    case "AggregateFunction":
    case "WindowFunction":
      return e.dataType ?? unresolved(e)
    case "WindowExpression":
      return dataTypeOf(e.function)
    case "TimeWindow":
    case "SessionWindow":
      return T.WindowType
    case "CurrentTimestamp":
      return T.TimestampType
    case "Explode": {
      const t = dataTypeOf(e.child)
      if (t._tag === "array") return t.elementType
      if (t._tag === "map")
        return T.struct([T.field("key", t.keyType, false), T.field("value", t.valueType, t.valueContainsNull)])
      return fail(`explode of a non-collection value of type ${T.simpleString(t)}`)
    }
    case "UnresolvedAttribute":
    case "UnresolvedStar":
    case "InvalidExpression":
      return unresolved(e)
  }
}

/**
 * Whether a resolved expression can be null (Spark's `Expression.nullable`).
 *
 * @since 0.1.0
 */
export const nullableOf = (e: E.Expression): boolean => {
  switch (e._tag) {
    case "AttributeReference":
      return e.nullable
    case "Literal":
      return e.value === null || e.value === undefined
    case "Alias":
    case "SortOrder":
      return nullableOf(e.child)
    case "UnaryExpression":
      return e.op === "isNull" || e.op === "isNotNull" ? false : nullableOf(e.child)
    case "BinaryExpression":
      // Spark: division and remainder are nullable (x / 0 is null without ANSI); <=> never is null
      if (e.op === "/" || e.op === "%") return true
      if (e.op === "<=>") return false
      return nullableOf(e.left) || nullableOf(e.right)
    case "In":
      return nullableOf(e.child) || e.list.some(nullableOf)
    case "Cast":
      return nullableOf(e.child) || forceNullable(dataTypeOf(e.child), e.to)
    case "CaseWhen":
      return e.otherwise === undefined || nullableOf(e.otherwise) || e.branches.some(([, v]) => nullableOf(v))
    case "GetField": {
      if (nullableOf(e.child)) return true
      const t = dataTypeOf(e.child)
      if (t._tag !== "struct") return true
      const f = e.ordinal !== undefined ? t.fields[e.ordinal] : t.fields.find((x) => x.name === e.field)
      return f === undefined ? true : f.nullable
    }
    case "ScalarFunction": {
      const def = e.udf ?? lookup(e.name)
      if (def === undefined) return true
      const r = def.resolve(e.args.map(dataTypeOf), e.args)
      return r._tag === "Resolved" ? r.nullable : true
    }
    case "AggregateFunction":
      // Spark: count is never null; the others are null over no (non-null) input
      return !(
        e.name === "count" ||
        e.name === "approx_count_distinct" ||
        e.name === "collect_list" ||
        e.name === "collect_set"
      )
    case "TimeWindow":
    case "SessionWindow":
    case "CurrentTimestamp":
      return false
    case "WindowExpression":
      return nullableOf(e.function)
    case "WindowFunction":
      // Spark: the ranking functions are never null; lag/lead/nth_value are null past the partition
      switch (e.name) {
        case "lag":
        case "lead":
          return nullableOf(e.args[0]) || nullableOf(e.args[2])
        case "nth_value":
          return true
        default:
          return false
      }
    case "Explode":
      return true
    case "UnresolvedAttribute":
    case "UnresolvedStar":
    case "InvalidExpression":
      return true
  }
}

// ---------------------------------------------------------------------------------------------
// Arithmetic
// ---------------------------------------------------------------------------------------------

const arithmetic = (op: E.ArithmeticOp, t: T.DataType, l: Evaluator, r: Evaluator): Evaluator => {
  if (op === "/") {
    // Spark's Divide: always double division here; a zero divisor gives null (non-ANSI)
    return (row) => {
      const x = l(row)
      if (x == null) return null
      const y = r(row) as number | null
      if (y == null || y === 0) return null
      return (x as number) / y
    }
  }
  if (t._tag === "long") return longArithmetic(op, l, r)
  if (op === "%") {
    const normalize = t._tag === "integer" ? (v: number) => v | 0 : undefined
    if (normalize !== undefined) {
      return (row) => {
        const x = l(row)
        if (x == null) return null
        const y = r(row) as number | null
        if (y == null || y === 0) return null
        return normalize((x as number) % y)
      }
    }
    return (row) => {
      const x = l(row)
      if (x == null) return null
      const y = r(row) as number | null
      if (y == null || y === 0) return null
      return (x as number) % y
    }
  }
  if (t._tag === "integer") {
    // Java int arithmetic: wraps at 32 bits
    switch (op) {
      case "+":
        return (row) => {
          const x = l(row)
          if (x == null) return null
          const y = r(row)
          return y == null ? null : ((x as number) + (y as number)) | 0
        }
      case "-":
        return (row) => {
          const x = l(row)
          if (x == null) return null
          const y = r(row)
          return y == null ? null : ((x as number) - (y as number)) | 0
        }
      case "*":
        return (row) => {
          const x = l(row)
          if (x == null) return null
          const y = r(row)
          return y == null ? null : Math.imul(x as number, y as number)
        }
    }
  }
  switch (op) {
    case "+":
      return (row) => {
        const x = l(row)
        if (x == null) return null
        const y = r(row)
        return y == null ? null : (x as number) + (y as number)
      }
    case "-":
      return (row) => {
        const x = l(row)
        if (x == null) return null
        const y = r(row)
        return y == null ? null : (x as number) - (y as number)
      }
    case "*":
      return (row) => {
        const x = l(row)
        if (x == null) return null
        const y = r(row)
        return y == null ? null : (x as number) * (y as number)
      }
  }
}

/** Exact long arithmetic with Java's wrap-around (`core/Long.ts`); `%` by 0 is null (non-ANSI). */
const longArithmetic = (op: "+" | "-" | "*" | "%", l: Evaluator, r: Evaluator): Evaluator => {
  const f = op === "+" ? L.add : op === "-" ? L.subtract : op === "*" ? L.multiply : undefined
  if (f !== undefined) {
    return (row) => {
      const x = l(row)
      if (x == null) return null
      const y = r(row)
      return y == null ? null : f(x as L.Long, y as L.Long)
    }
  }
  return (row) => {
    const x = l(row)
    if (x == null) return null
    const y = r(row)
    if (y == null || y === 0) return null
    return L.remainder(x as L.Long, y as L.Long)
  }
}

// ---------------------------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------------------------

type Compare = (a: unknown, b: unknown) => boolean

const compareDoubles = (a: unknown, b: unknown): number => {
  const x = a as number
  const y = b as number
  if (x < y) return -1
  if (x > y) return 1
  if (x === y) return 0
  const xn = x !== x
  const yn = y !== y
  return xn && yn ? 0 : xn ? 1 : -1
}

const primitiveComparison = (op: E.ComparisonOp): Compare => {
  // no NaN: the JavaScript operators are Spark's ordering (false < true, strings by code unit)
  switch (op) {
    case "=":
    case "<=>":
      return (a, b) => a === b
    case "!=":
      return (a, b) => a !== b
    case "<":
      return (a, b) => (a as number) < (b as number)
    case "<=":
      return (a, b) => (a as number) <= (b as number)
    case ">":
      return (a, b) => (a as number) > (b as number)
    case ">=":
      return (a, b) => (a as number) >= (b as number)
  }
}

const doubleComparison = (op: E.ComparisonOp): Compare => {
  // Spark: NaN = NaN is true and NaN is greater than any other value; 0.0 = -0.0
  switch (op) {
    case "=":
    case "<=>":
      return (a, b) => a === b || (a !== a && b !== b)
    case "!=":
      return (a, b) => !(a === b || (a !== a && b !== b))
    case "<":
      return (a, b) => compareDoubles(a, b) < 0
    case "<=":
      return (a, b) => compareDoubles(a, b) <= 0
    case ">":
      return (a, b) => compareDoubles(a, b) > 0
    case ">=":
      return (a, b) => compareDoubles(a, b) >= 0
  }
}

const structuralComparison = (op: E.ComparisonOp, t: T.DataType): Compare => {
  if (op === "=" || op === "<=>" || op === "!=") {
    const eq = O.equality(t)
    return op === "!=" ? (a, b) => !eq(a, b) : eq
  }
  const cmp = O.comparator(t)
  switch (op) {
    case "<":
      return (a, b) => cmp(a, b) < 0
    case "<=":
      return (a, b) => cmp(a, b) <= 0
    case ">":
      return (a, b) => cmp(a, b) > 0
    case ">=":
      return (a, b) => cmp(a, b) >= 0
  }
}

/** The non-null comparison for `op` on values of `t`, chosen once. */
const comparison = (op: E.ComparisonOp, t: T.DataType): Compare => {
  switch (t._tag) {
    case "integer":
    case "long":
    case "timestamp":
    case "date":
    case "string":
    case "boolean":
      return primitiveComparison(op)
    case "double":
      return doubleComparison(op)
    default:
      return structuralComparison(op, t)
  }
}

const compileComparison = (op: E.ComparisonOp, t: T.DataType, l: Evaluator, r: Evaluator): Evaluator => {
  if (op === "<=>") {
    const eq = comparison("=", t)
    return (row) => {
      const x = l(row)
      const y = r(row)
      if (x == null) return y == null
      if (y == null) return false
      return eq(x, y)
    }
  }
  const cmp = comparison(op, t)
  return (row) => {
    const x = l(row)
    if (x == null) return null
    const y = r(row)
    return y == null ? null : cmp(x, y)
  }
}

// ---------------------------------------------------------------------------------------------
// The compiler
// ---------------------------------------------------------------------------------------------

interface Compiled {
  readonly ev: Evaluator
  /** Reads no row: evaluated once at compile time. */
  readonly constant: boolean
}

const constant = (v: unknown): Compiled => {
  const value = v === undefined ? null : v
  return { ev: () => value, constant: true }
}

/** Folds a node whose inputs are all constant into its value. */
const folded = (ev: Evaluator, allConstant: boolean): Compiled =>
  allConstant ? constant(ev(EMPTY_ROW)) : { ev, constant: false }

const build = (e: E.Expression, input: ReadonlyArray<E.AttributeReference>, ctx: CompileContext): Compiled => {
  switch (e._tag) {
    case "AttributeReference": {
      let ordinal = -1
      for (let i = 0; i < input.length; i++) {
        if (input[i].exprId === e.exprId) {
          ordinal = i
          break
        }
      }
      if (ordinal < 0) {
        // Spark's "Couldn't find a#1 in [b#2,c#3]": the analyzer bound an attribute that is not an input
        return fail(`Couldn't find ${e.name}#${e.exprId} in [${input.map((a) => `${a.name}#${a.exprId}`).join(",")}]`)
      }
      const i = ordinal
      return { ev: (row) => row[i], constant: false }
    }
    case "Literal":
      return constant(e.value)
    case "Alias":
    case "SortOrder":
      return build(e.child, input, ctx)
    case "UnaryExpression": {
      const c = build(e.child, input, ctx)
      const a = c.ev
      let ev: Evaluator
      switch (e.op) {
        case "negate": {
          const t = dataTypeOf(e.child)
          ev =
            t._tag === "integer"
              ? (row) => {
                  const x = a(row)
                  return x == null ? null : -(x as number) | 0
                }
              : t._tag === "double"
                ? (row) => {
                    const x = a(row)
                    return x == null ? null : -(x as number)
                  }
                : t._tag === "long"
                  ? (row) => {
                      const x = a(row)
                      return x == null ? null : L.negate(x as L.Long)
                    }
                  : (row) => {
                      const x = a(row)
                      // 0 - x so that a zero stays 0, not -0
                      return x == null ? null : 0 - (x as number)
                    }
          break
        }
        case "not":
          ev = (row) => {
            const x = a(row)
            return x == null ? null : !x
          }
          break
        case "isNull":
          ev = (row) => a(row) == null
          break
        case "isNotNull":
          ev = (row) => a(row) != null
          break
      }
      return folded(ev, c.constant)
    }
    case "BinaryExpression": {
      const l = build(e.left, input, ctx)
      const r = build(e.right, input, ctx)
      const allConstant = l.constant && r.constant
      const L = l.ev
      const R = r.ev
      switch (e.op) {
        case "and":
          // SQL three-valued logic: false wins over null
          return folded((row) => {
            const x = L(row)
            if (x === false) return false
            const y = R(row)
            if (y === false) return false
            return x == null || y == null ? null : true
          }, allConstant)
        case "or":
          // true wins over null
          return folded((row) => {
            const x = L(row)
            if (x === true) return true
            const y = R(row)
            if (y === true) return true
            return x == null || y == null ? null : false
          }, allConstant)
        case "+":
        case "-":
        case "*":
        case "/":
        case "%":
          return folded(arithmetic(e.op, dataTypeOf(e), L, R), allConstant)
        default: {
          const lt = dataTypeOf(e.left)
          const t = lt._tag === "null" ? dataTypeOf(e.right) : lt
          return folded(compileComparison(e.op, t, L, R), allConstant)
        }
      }
    }
    case "In": {
      const c = build(e.child, input, ctx)
      const items = e.list.map((x) => build(x, input, ctx))
      const t = dataTypeOf(e.child)
      const child = c.ev
      if (items.every((x) => x.constant)) {
        // Spark's InSet: a constant list becomes a hash set (SameValueZero: NaN matches NaN, 0 matches -0)
        const values = items.map((x) => x.ev(EMPTY_ROW))
        const hasNull = values.some((v) => v == null)
        const nonNull = values.filter((v) => v != null)
        const primitive =
          t._tag === "integer" ||
          t._tag === "long" ||
          t._tag === "double" ||
          t._tag === "string" ||
          t._tag === "boolean" ||
          t._tag === "timestamp" ||
          t._tag === "date"
        if (primitive) {
          const set = new Set<unknown>(nonNull)
          return folded((row) => {
            const v = child(row)
            if (v == null) return null
            if (set.has(v)) return true
            return hasNull ? null : false
          }, c.constant)
        }
        const eq = O.equality(t)
        return folded((row) => {
          const v = child(row)
          if (v == null) return null
          for (let i = 0; i < nonNull.length; i++) if (eq(v, nonNull[i])) return true
          return hasNull ? null : false
        }, c.constant)
      }
      const eq = comparison("=", t)
      const evs = items.map((x) => x.ev)
      const n = evs.length
      return {
        ev: (row) => {
          const v = child(row)
          if (v == null) return null
          let hasNull = false
          for (let i = 0; i < n; i++) {
            const x = evs[i](row)
            if (x == null) hasNull = true
            else if (eq(v, x)) return true
          }
          return hasNull ? null : false
        },
        constant: false
      }
    }
    case "Cast": {
      const c = build(e.child, input, ctx)
      const from = dataTypeOf(e.child)
      if (T.sameType(from, e.to)) return c
      const f = castFunction(from, e.to, ctx.currentTimestampMs)
      const a = c.ev
      return folded((row) => f(a(row)), c.constant)
    }
    case "CaseWhen": {
      const conds = e.branches.map(([cond]) => build(cond, input, ctx))
      const vals = e.branches.map(([, v]) => build(v, input, ctx))
      const other = e.otherwise === undefined ? constant(null) : build(e.otherwise, input, ctx)
      const allConstant = conds.every((x) => x.constant) && vals.every((x) => x.constant) && other.constant
      const cs = conds.map((x) => x.ev)
      const vs = vals.map((x) => x.ev)
      const o = other.ev
      const n = cs.length
      if (n === 1) {
        const c0 = cs[0]
        const v0 = vs[0]
        return folded((row) => (c0(row) === true ? v0(row) : o(row)), allConstant)
      }
      return folded((row) => {
        for (let i = 0; i < n; i++) if (cs[i](row) === true) return vs[i](row)
        return o(row)
      }, allConstant)
    }
    case "GetField": {
      const c = build(e.child, input, ctx)
      let ordinal = e.ordinal
      if (ordinal === undefined) {
        const t = dataTypeOf(e.child)
        ordinal = t._tag === "struct" ? t.fields.findIndex((f) => f.name === e.field) : -1
        if (ordinal < 0) return unresolved(e)
      }
      const i = ordinal
      const a = c.ev
      return folded((row) => {
        const s = a(row) as ReadonlyArray<unknown> | null | undefined
        if (s == null) return null
        const v = s[i]
        return v === undefined ? null : v
      }, c.constant)
    }
    case "ScalarFunction": {
      const def = e.udf ?? lookup(e.name)
      if (def === undefined) return fail(`Unknown function ${e.name} (the analyzer should have rejected it)`)
      const resultType = e.dataType ?? unresolved(e)
      const args = e.args.map((x) => build(x, input, ctx))
      const ev = def.compile(
        args.map((x) => x.ev),
        e.args.map(dataTypeOf),
        resultType,
        e.args
      )
      // a nondeterministic function (rand, uuid) is evaluated per row even over constant arguments;
      // a UDF too (Spark's ScalaUDF is never foldable)
      return folded(ev, e.udf === undefined && def.deterministic !== false && args.every((x) => x.constant))
    }
    case "CurrentTimestamp":
      return constant(ctx.currentTimestampMs)
    case "TimeWindow":
    case "SessionWindow":
    case "Explode":
    case "AggregateFunction":
    case "WindowExpression":
    case "WindowFunction":
      return notCompilable(e._tag)
    case "UnresolvedAttribute":
    case "UnresolvedStar":
    case "InvalidExpression":
      return unresolved(e)
  }
}

/**
 * Compiles a resolved expression over rows laid out like `input` into a closure. Throws (a
 * defect) when the expression is not resolved or names an attribute `input` does not have:
 * both are bugs of the analyzer or the planner, never user errors.
 *
 * @example
 * ```ts
 * import * as T from "./DataType.ts"
 * import { attribute, literal } from "./Expression.ts"
 * const a = attribute("a", T.IntegerType)
 * const plusOne = compile({ _tag: "BinaryExpression", op: "+", left: a, right: literal(1, T.IntegerType) }, [a], { currentTimestampMs: 0 })
 * plusOne([41]) // 42
 * plusOne([null]) // null
 * ```
 * @since 0.1.0
 */
export const compile = (e: E.Expression, input: ReadonlyArray<E.AttributeReference>, ctx: CompileContext): Evaluator =>
  build(e, input, ctx).ev

/**
 * Compiles a condition: a row passes when it evaluates to `true` (null counts as false, as in a
 * SQL `WHERE`).
 *
 * @since 0.1.0
 */
export const compilePredicate = (
  e: E.Expression,
  input: ReadonlyArray<E.AttributeReference>,
  ctx: CompileContext
): ((row: InternalRow) => boolean) => {
  const ev = compile(e, input, ctx)
  return (row) => ev(row) === true
}

/**
 * Compiles a list of expressions into a function from an input row to a new row with one value
 * per expression.
 *
 * @since 0.1.0
 */
export const compileProjection = (
  exprs: ReadonlyArray<E.Expression>,
  input: ReadonlyArray<E.AttributeReference>,
  ctx: CompileContext
): ((row: InternalRow) => InternalRow) => {
  const evs = exprs.map((e) => compile(e, input, ctx))
  const n = evs.length
  switch (n) {
    case 1: {
      const a = evs[0]
      return (row) => [a(row)]
    }
    case 2: {
      const [a, b] = evs
      return (row) => [a(row), b(row)]
    }
    case 3: {
      const [a, b, c] = evs
      return (row) => [a(row), b(row), c(row)]
    }
    default:
      return (row) => {
        const out = new Array<unknown>(n)
        for (let i = 0; i < n; i++) out[i] = evs[i](row)
        return out
      }
  }
}
