/**
 * Loads every scalar function module so that each registers its functions in the registry.
 * Import this once (the analyzer and the compiler do) before resolving `ScalarFunction` calls.
 *
 * @since 0.1.0
 */
import "./StringFunctions.ts"
import "./MathFunctions.ts"
import "./DatetimeFunctions.ts"
import "./CollectionFunctions.ts"
import "./MiscFunctions.ts"
import "./AvroFunctions.ts"
import "./JsonFunctions.ts"
import "./IntervalFunctions.ts"

export { lookup, names, register } from "./Registry.ts"
export type { Evaluator, Resolution, ScalarFunctionDef } from "./Registry.ts"
