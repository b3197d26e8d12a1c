/**
 * The public face of `state/`: the state store contract and its two providers (DuckDB, the
 * default, and the file provider `"memory"`), state schemas and their compatibility check, and
 * the DuckDB access layer that state stores, file formats and `spark.sql` share.
 *
 * @since 0.1.0
 */
export { type Connection, DuckDBFailure, quoteIdentifier } from "./DuckDB.ts"
export * as DuckDBStateStoreProvider from "./DuckDBStateStoreProvider.ts"
export * as FileStateStoreProvider from "./FileStateStoreProvider.ts"
export { checkCompatibility, decodeSchema, encodeSchema } from "./StateSchemaCompatibility.ts"
export {
  combineMetrics,
  type OpenSpec,
  type StateSchema,
  type StateStore,
  type StateStoreHooks,
  type StateStoreId,
  type StateStoreMetrics,
  type StateStoreProvider,
  StateStoreProviderService,
  stateOperatorProgress,
  type VersionSpec
} from "./StateStore.ts"
export * as StateStoreProviders from "./StateStoreProviders.ts"
