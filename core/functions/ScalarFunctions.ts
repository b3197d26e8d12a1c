/**
 * The scalar functions of `F` (string, math, date and time, collection, null handling), each a
 * thin, typed constructor of a `ScalarFunction` expression resolved through the registry.
 *
 * @since 0.1.0
 */
import { type Column, type ColumnOrName, callNamed } from "../Column.ts"

/** A call of any registered function by name, with column (or column-name) arguments. */
export const callByName = <A = unknown>(name: string, columns: ReadonlyArray<ColumnOrName>): Column<A> =>
  callNamed<A>(name, columns)
