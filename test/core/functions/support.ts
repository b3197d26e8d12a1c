/**
 * Test support for the function library: builds resolved calls the way the analyzer does
 * (asks the registry to resolve, wraps arguments in the casts it asks for) and evaluates them.
 */
import { compile, type CompileContext, dataTypeOf } from "../../../core/Compile.ts"
import * as T from "../../../core/DataType.ts"
import { type AttributeReference, attribute, type Expression, literal, transformUp } from "../../../core/Expression.ts"
import "../../../core/functions/mod.ts"
import { lookup } from "../../../core/functions/Registry.ts"
import type { InternalRow } from "../../../core/Row.ts"
import { stringToDate, stringToTimestamp } from "../../../core/functions/DateTimeUtils.ts"

export const ctx: CompileContext = { currentTimestampMs: Date.UTC(2024, 0, 15, 10, 30, 0) }

/** A literal with the type Spark gives the JavaScript value (`1` is int, `1.5` double). */
export const lit = (v: unknown, t?: T.DataType): Expression => {
  if (t !== undefined) return literal(v, t)
  if (v === null) return literal(null, T.NullType)
  if (typeof v === "string") return literal(v, T.StringType)
  if (typeof v === "boolean") return literal(v, T.BooleanType)
  if (typeof v === "number")
    return literal(v, Number.isInteger(v) && Math.abs(v) < 2 ** 31 ? T.IntegerType : T.DoubleType)
  if (v instanceof Uint8Array) return literal(v, T.BinaryType)
  throw new Error(`no literal type for ${String(v)}`)
}

export const long = (v: number | null): Expression => literal(v, T.LongType)
export const dbl = (v: number | null): Expression => literal(v, T.DoubleType)
export const str = (v: string | null): Expression => literal(v, T.StringType)
export const date = (v: string | null): Expression => literal(v === null ? null : stringToDate(v), T.DateType)
export const ts = (v: string | null): Expression => literal(v === null ? null : stringToTimestamp(v), T.TimestampType)
export const arr = (elementType: T.DataType, values: ReadonlyArray<unknown> | null): Expression =>
  literal(values, T.array(elementType))

/** Resolves a call through the registry and inserts the casts it asks for, as the analyzer does. */
export const call = (name: string, ...args: ReadonlyArray<Expression>): Expression => {
  const def = lookup(name)
  if (def === undefined) throw new Error(`no function ${name}`)
  const r = def.resolve(args.map(dataTypeOf), args)
  if (r._tag === "Invalid") throw new Error(r.message)
  const cast = args.map((a, i): Expression => {
    const to = r.castArgsTo[i]
    return to === undefined ? a : { _tag: "Cast", child: a, to }
  })
  return { _tag: "ScalarFunction", name, args: cast, dataType: r.resultType }
}

/** The resolution error of a call, or undefined when it resolves. */
export const resolveError = (name: string, ...args: ReadonlyArray<Expression>): string | undefined => {
  const def = lookup(name)
  if (def === undefined) return `no function ${name}`
  const r = def.resolve(args.map(dataTypeOf), args)
  return r._tag === "Invalid" ? r.message : undefined
}

export const evaluate = (
  e: Expression,
  row: InternalRow = [],
  input: ReadonlyArray<AttributeReference> = []
): unknown => compile(e, input, ctx)(row)

/** Evaluates `name(args)` on constant arguments. */
export const fn = (name: string, ...args: ReadonlyArray<Expression>): unknown => evaluate(call(name, ...args))

/** The result type of `name(args)`. */
export const typeOf = (name: string, ...args: ReadonlyArray<Expression>): string =>
  T.simpleString(dataTypeOf(call(name, ...args)))

/**
 * A minimal analyzer for tests: binds column names to `attrs` and resolves function calls
 * through the registry (inserting the casts it asks for), bottom-up.
 */
export const analyze = (e: Expression, attrs: ReadonlyArray<AttributeReference>): Expression =>
  transformUp(e, (x) => {
    if (x._tag === "UnresolvedAttribute") {
      const a = attrs.find((a) => a.name === x.nameParts[0])
      if (a === undefined) throw new Error(`no column ${x.nameParts.join(".")}`)
      return a
    }
    if (x._tag === "ScalarFunction" && x.dataType === undefined) {
      const r = call(x.name, ...x.args) as Expression & { readonly _tag: "ScalarFunction" }
      return { ...r, name: x.name }
    }
    return x
  })

/** Evaluates a `Column` over one row given as `{ name: [type, value] }`. */
export const evalColumn = (
  column: { readonly expr: Expression },
  row: Readonly<Record<string, readonly [T.DataType, unknown]>> = {}
): unknown => {
  const attrs = Object.entries(row).map(([name, [t]]) => attribute(name, t))
  const values = Object.values(row).map(([, v]) => v)
  return compile(analyze(column.expr, attrs), attrs, ctx)(values)
}
