/**
 * How the scalar function modules declare a function: Spark's expected input types (its
 * `ImplicitCastInputTypes`), the implicit casts those imply, the result type, nullability, and
 * a body that is specialised by arity at compile time so that the per-row path is one closure
 * call per argument and one for the body.
 *
 * @since 0.1.0
 */
import { nullableOf } from "../Compile.ts"
import * as T from "../DataType.ts"
import type { Expression } from "../Expression.ts"
import { prettyName } from "../ExpressionName.ts"
import type { Evaluator, Resolution, ScalarFunctionDef } from "./Registry.ts"

/**
 * An expected input type, as Spark's `AbstractDataType`: a concrete type, a family
 * (`"numeric"`: int, bigint or double, cast to double otherwise; `"array"`, `"map"`, `"struct"`:
 * any of that shape; `"any"`), or a collection (accepted when any member accepts, otherwise cast
 * to the first member the value implicitly casts to — Spark's `TypeCollection`).
 */
export type InputType =
  | T.DataType
  | "any"
  | "numeric"
  | "integral"
  | "array"
  | "map"
  | "struct"
  | ReadonlyArray<T.DataType | "array" | "map">

/** What a function body sees at compile time. */
export interface CallInfo {
  /** Argument types after the implicit casts. */
  readonly argTypes: ReadonlyArray<T.DataType>
  readonly resultType: T.DataType
  readonly argExprs: ReadonlyArray<Expression>
}

const accepts = (t: T.DataType, expected: InputType): boolean => {
  if (typeof expected === "string") {
    switch (expected) {
      case "any":
        return true
      case "numeric":
        return T.isNumeric(t)
      case "integral":
        return T.isIntegral(t)
      case "array":
      case "map":
      case "struct":
        return t._tag === expected
    }
  }
  if (Array.isArray(expected)) return expected.some((e) => accepts(t, e as InputType))
  return T.sameType(t, expected as T.DataType)
}

/** Spark's `TypeCoercion.implicitCast` of a value of `from` to the concrete `to`. */
export const implicitCastTo = (from: T.DataType, to: T.DataType): T.DataType | undefined => {
  if (T.sameType(from, to)) return to
  if (from._tag === "null") return to
  if (T.isNumeric(from) && T.isNumeric(to)) return to
  if (from._tag === "string" && (T.isNumeric(to) || T.isDatetime(to) || to._tag === "binary")) return to
  if (
    to._tag === "string" &&
    (T.isNumeric(from) || T.isDatetime(from) || from._tag === "boolean" || from._tag === "binary")
  )
    return to
  if (from._tag === "date" && to._tag === "timestamp") return to
  if (from._tag === "timestamp" && to._tag === "date") return to
  if (from._tag === "array" && to._tag === "array") {
    const e = implicitCastTo(from.elementType, to.elementType)
    return e === undefined ? undefined : T.array(e, from.containsNull)
  }
  return undefined
}

const defaultConcrete = (expected: InputType): T.DataType | undefined => {
  if (typeof expected === "string") {
    switch (expected) {
      case "numeric":
        return T.DoubleType
      case "integral":
        return T.LongType
      case "array":
        return T.array(T.NullType)
      default:
        return undefined
    }
  }
  if (Array.isArray(expected)) return defaultConcrete(expected[0] as InputType)
  return expected as T.DataType
}

/** The type a value of `t` must be cast to for `expected`: `undefined` when it already fits, `null` when it cannot. */
const castFor = (t: T.DataType, expected: InputType): T.DataType | undefined | null => {
  if (accepts(t, expected)) return undefined
  if (typeof expected === "string") {
    if (t._tag === "null") return defaultConcrete(expected) ?? undefined
    if (expected === "numeric" && t._tag === "string") return T.DoubleType
    if (expected === "integral" && t._tag === "string") return T.LongType
    return null
  }
  if (Array.isArray(expected)) {
    if (t._tag === "null") return defaultConcrete(expected) ?? null
    for (const e of expected) {
      if (e === "array" || e === "map") continue
      const c = implicitCastTo(t, e)
      if (c !== undefined) return c
    }
    return null
  }
  return implicitCastTo(t, expected as T.DataType) ?? null
}

const ORDINALS = ["first", "second", "third"]

/** Spark's ordinal words in type-mismatch messages. */
export const ordinal = (i: number): string => ORDINALS[i] ?? `${i + 1}th`

/** Spark's `toSQLType`: `"STRING"`, `("STRING" or "BINARY")`. */
export const sqlType = (expected: InputType): string => {
  if (typeof expected === "string") {
    switch (expected) {
      case "any":
        return '"ANY"'
      case "numeric":
        return '"NUMERIC"'
      case "integral":
        return '"INTEGRAL"'
      default:
        return `"${expected.toUpperCase()}"`
    }
  }
  if (Array.isArray(expected)) return `(${expected.map((e) => sqlType(e as InputType)).join(" or ")})`
  return `"${T.simpleString(expected as T.DataType).toUpperCase()}"`
}

/** The call as Spark names it in messages: `"upper(name)"`. */
export const callName = (name: string, args: ReadonlyArray<Expression>): string =>
  `${name}(${args.map(prettyName).join(", ")})`

/** `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE]`, as Spark words it. */
export const unexpectedInputType = (
  name: string,
  args: ReadonlyArray<Expression>,
  i: number,
  expected: InputType,
  actual: T.DataType
): Resolution => ({
  _tag: "Invalid",
  message: `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve "${callName(name, args)}" due to data type mismatch: The ${ordinal(i)} parameter requires the ${sqlType(expected)} type, however "${prettyName(args[i])}" has the type "${T.simpleString(actual).toUpperCase()}".`
})

/** `[WRONG_NUM_ARGS.WITHOUT_SUGGESTION]`, as Spark words it. */
export const wrongNumArgs = (name: string, expected: string, actual: number): Resolution => ({
  _tag: "Invalid",
  message: `[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The \`${name}\` requires ${expected} parameters but the actual number is ${actual}. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix.`
})

export const invalid = (message: string): Resolution => ({ _tag: "Invalid", message })

/** The `[DATATYPE_MISMATCH.DATA_DIFF_TYPES]` message for functions whose arguments need a common type. */
export const dataDiffTypes = (
  name: string,
  args: ReadonlyArray<Expression>,
  types: ReadonlyArray<T.DataType>
): Resolution =>
  invalid(
    `[DATATYPE_MISMATCH.DATA_DIFF_TYPES] Cannot resolve "${callName(name, args)}" due to data type mismatch: Input to \`${name}\` should all be the same type, but it's [${types.map((t) => `"${T.simpleString(t).toUpperCase()}"`).join(", ")}].`
  )

/** Spark's wider common type of many types (`findWiderCommonType`), `undefined` when there is none. */
export const commonTypeOf = (types: ReadonlyArray<T.DataType>): T.DataType | undefined => {
  let acc: T.DataType = T.NullType
  for (const t of types) {
    const c = T.commonType(acc, t)
    if (c === undefined) return undefined
    acc = c
  }
  return acc
}

/**
 * A body over non-null argument values. Its parameters are typed by each function (`(s: string,
 * n: number) => …`); the values come from arguments already cast to the declared input types.
 */
// biome-ignore lint/suspicious/noExplicitAny: each body declares the internal types of its own arguments
export type StrictBody = (...values: Array<any>) => unknown

export type Nullability =
  | "args"
  | "always"
  | "never"
  | ((args: ReadonlyArray<Expression>, argTypes: ReadonlyArray<T.DataType>) => boolean)

export type InputSpec =
  | ReadonlyArray<InputType>
  | ((argTypes: ReadonlyArray<T.DataType>, args: ReadonlyArray<Expression>) => ReadonlyArray<InputType> | Resolution)

export interface FunctionSpec {
  readonly name: string
  /** Expected types, one per argument position (the last repeats for variadic functions when `maxArgs` exceeds it). */
  readonly inputs: InputSpec
  readonly minArgs?: number
  readonly maxArgs?: number
  /** The result type, from the argument types after the casts. */
  readonly result:
    | T.DataType
    | ((argTypes: ReadonlyArray<T.DataType>, args: ReadonlyArray<Expression>) => T.DataType | Resolution)
  /** Default `"args"`: null exactly when an argument is null (and the body never returns null). */
  readonly nullable?: Nullability
  /**
   * A null-intolerant body (Spark's `NullIntolerant`): called with non-null argument values only;
   * any null argument gives null without calling it. Built once per call site.
   */
  readonly strict?: (info: CallInfo) => StrictBody
  /** A body that handles nulls itself, from the compiled arguments. */
  readonly compile?: (args: ReadonlyArray<Evaluator>, info: CallInfo) => Evaluator
}

const isResolution = (x: unknown): x is Resolution =>
  typeof x === "object" &&
  x !== null &&
  !Array.isArray(x) &&
  "_tag" in x &&
  (x._tag === "Resolved" || x._tag === "Invalid")

/**
 * Wraps a body over non-null values into an evaluator, specialised by arity (no per-row
 * allocation for up to four arguments).
 */
export const strictEvaluator = (args: ReadonlyArray<Evaluator>, f: StrictBody): Evaluator => {
  switch (args.length) {
    case 0:
      return () => f()
    case 1: {
      const a = args[0]
      return (row) => {
        const x = a(row)
        return x === null || x === undefined ? null : f(x)
      }
    }
    case 2: {
      const a = args[0]
      const b = args[1]
      return (row) => {
        const x = a(row)
        if (x === null || x === undefined) return null
        const y = b(row)
        return y === null || y === undefined ? null : f(x, y)
      }
    }
    case 3: {
      const a = args[0]
      const b = args[1]
      const c = args[2]
      return (row) => {
        const x = a(row)
        if (x === null || x === undefined) return null
        const y = b(row)
        if (y === null || y === undefined) return null
        const z = c(row)
        return z === null || z === undefined ? null : f(x, y, z)
      }
    }
    case 4: {
      const [a, b, c, d] = args
      return (row) => {
        const x = a(row)
        if (x === null || x === undefined) return null
        const y = b(row)
        if (y === null || y === undefined) return null
        const z = c(row)
        if (z === null || z === undefined) return null
        const w = d(row)
        return w === null || w === undefined ? null : f(x, y, z, w)
      }
    }
    default: {
      const n = args.length
      return (row) => {
        const vals = new Array<unknown>(n)
        for (let i = 0; i < n; i++) {
          const v = args[i](row)
          if (v === null || v === undefined) return null
          vals[i] = v
        }
        return f(...vals)
      }
    }
  }
}

/** Builds a registry entry from a declarative spec. */
export const define = (spec: FunctionSpec): ScalarFunctionDef => {
  const fixed = Array.isArray(spec.inputs) ? (spec.inputs as ReadonlyArray<InputType>) : undefined
  const minArgs = spec.minArgs ?? fixed?.length ?? 0
  const maxArgs = spec.maxArgs ?? fixed?.length ?? Infinity
  return {
    name: spec.name,
    resolve: (argTypes, args) => {
      if (argTypes.length < minArgs || argTypes.length > maxArgs) {
        const expected =
          maxArgs === Infinity
            ? `> ${minArgs - 1}`
            : minArgs === maxArgs
              ? String(minArgs)
              : maxArgs - minArgs === 1
                ? `[${minArgs}, ${maxArgs}]`
                : `[${Array.from({ length: maxArgs - minArgs + 1 }, (_, i) => minArgs + i).join(", ")}]`
        return wrongNumArgs(spec.name, expected, argTypes.length)
      }
      const inputs = typeof spec.inputs === "function" ? spec.inputs(argTypes, args) : spec.inputs
      if (isResolution(inputs)) return inputs
      const list = inputs as ReadonlyArray<InputType>
      const castArgsTo: Array<T.DataType | undefined> = []
      const finalTypes: Array<T.DataType> = []
      for (let i = 0; i < argTypes.length; i++) {
        const expected = list[Math.min(i, list.length - 1)]
        const c = expected === undefined ? undefined : castFor(argTypes[i], expected)
        if (c === null) return unexpectedInputType(spec.name, args, i, expected, argTypes[i])
        castArgsTo.push(c)
        finalTypes.push(c ?? argTypes[i])
      }
      const result = typeof spec.result === "function" ? spec.result(finalTypes, args) : spec.result
      if (isResolution(result)) return result
      const nullable = spec.nullable ?? "args"
      const isNullable =
        nullable === "always"
          ? true
          : nullable === "never"
            ? false
            : nullable === "args"
              ? args.some(nullableOf)
              : nullable(args, finalTypes)
      return { _tag: "Resolved", resultType: result, nullable: isNullable, castArgsTo }
    },
    compile: (args, argTypes, resultType, argExprs) => {
      const info: CallInfo = { argTypes, resultType, argExprs }
      if (spec.compile !== undefined) return spec.compile(args, info)
      if (spec.strict !== undefined) return strictEvaluator(args, spec.strict(info))
      throw new Error(`function ${spec.name} has no body`)
    }
  }
}

/** The value of a literal argument (after the analyzer's casts, which may wrap it in `Cast` of a literal). */
export const literalValue = (e: Expression | undefined): { readonly value: unknown } | undefined => {
  if (e === undefined) return undefined
  if (e._tag === "Literal") return { value: e.value }
  if (e._tag === "Alias") return literalValue(e.child)
  return undefined
}

/** Whether an argument expression is a literal (possibly under casts and aliases). */
export const isFoldableLiteral = (e: Expression | undefined): boolean => {
  if (e === undefined) return false
  switch (e._tag) {
    case "Literal":
      return true
    case "Cast":
    case "Alias":
      return isFoldableLiteral(e.child)
    default:
      return false
  }
}

/**
 * Caches a value derived from an argument that is usually constant (a regex, a datetime pattern):
 * recomputed only when the argument's value changes from one row to the next.
 */
export const memoizeLast = <A, B>(f: (a: A) => B): ((a: A) => B) => {
  let lastIn: A | undefined
  let lastOut: B | undefined
  let has = false
  return (a) => {
    if (has && a === lastIn) return lastOut as B
    lastOut = f(a)
    lastIn = a
    has = true
    return lastOut
  }
}
