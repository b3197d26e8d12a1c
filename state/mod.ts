/**
 * The public face of `state/`: the state store contract and its two providers (DuckDB, the
 * default, and the file provider `"memory"`), state schemas and their compatibility check,
 * the DuckDB access layer that state stores, file formats and `spark.sql` share, and the
 * `node:fs` checkpoint file system (optionally flushed to the disk on every write).
 *
 * @since 0.1.0
 */
export { type Connection, DuckDBFailure, quoteIdentifier } from "./DuckDB.ts"
export * as DuckDBStateStoreProvider from "./DuckDBStateStoreProvider.ts"
export * as FileStateStoreProvider from "./FileStateStoreProvider.ts"
export {
  DurableNodeCheckpointFileSystem,
  makeNodeCheckpointFileSystem,
  NodeCheckpointFileSystem,
  type NodeCheckpointFileSystemOptions
} from "./NodeCheckpointFileSystem.ts"
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
