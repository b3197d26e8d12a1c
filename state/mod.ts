/**
 * The public face of `state/`: the DuckDB access layer that state stores, file formats and
 * `spark.sql` share.
 *
 * @since 0.1.0
 */
export { type Connection, DuckDBFailure, quoteIdentifier } from "./DuckDB.ts"
