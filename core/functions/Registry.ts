/**
 * The scalar function registry: every Spark function that `F` exposes by name (`upper`,
 * `date_add`, `concat`, …) is one `ScalarFunctionDef` here. The analyzer asks `resolve` for the
 * result type (and the casts its arguments need); the compiler asks `compile` for a closure,
 * once per plan, never per row.
 *
 * @since 0.1.0
 */
import type { DataType } from "../DataType.ts"
import type { Expression } from "../Expression.ts"
import type { InternalRow } from "../Row.ts"

/** A compiled expression: reads one internal row, returns one internal value. */
export type Evaluator = (row: InternalRow) => unknown

/** What `resolve` answers: the result type and, per argument, the type to cast it to first. */
export type Resolution =
  | {
      readonly _tag: "Resolved"
      readonly resultType: DataType
      readonly nullable: boolean
      /** One entry per argument; `undefined` keeps the argument as it is. */
      readonly castArgsTo: ReadonlyArray<DataType | undefined>
    }
  | { readonly _tag: "Invalid"; readonly message: string }

export interface ScalarFunctionDef {
  /** Spark's name, lower case. */
  readonly name: string
  /**
   * `false` for a function whose result is not determined by its arguments (Spark's
   * `Nondeterministic`: `rand`, `uuid`, …); the optimizer never folds, duplicates or moves such
   * calls. Absent means deterministic.
   */
  readonly deterministic?: boolean
  /** Checks the argument count and types (after resolution) and says what the call returns. */
  readonly resolve: (argTypes: ReadonlyArray<DataType>, args: ReadonlyArray<Expression>) => Resolution
  /**
   * Builds the closure for one call. `args` are the compiled arguments (already cast as
   * `resolve` asked), `argExprs` the resolved argument expressions (for literal arguments that
   * can be precomputed, like a regex or a format).
   */
  readonly compile: (
    args: ReadonlyArray<Evaluator>,
    argTypes: ReadonlyArray<DataType>,
    resultType: DataType,
    argExprs: ReadonlyArray<Expression>
  ) => Evaluator
}

const registry = new Map<string, ScalarFunctionDef>()

/** Adds functions to the registry (each functions module calls this once when loaded). */
export const register = (...defs: ReadonlyArray<ScalarFunctionDef>): void => {
  for (const d of defs) registry.set(d.name, d)
}

export const lookup = (name: string): ScalarFunctionDef | undefined => registry.get(name.toLowerCase())

export const names = (): ReadonlyArray<string> => [...registry.keys()].sort()
