/**
 * Picks a state store provider by name, as the session's `stateStore` option and Spark's
 * `spark.sql.streaming.stateStore.providerClass` do: `"duckdb"` (the default) or `"memory"` (the
 * file provider, Spark's HDFS-backed design).
 *
 * @since 0.1.0
 */
import type { Effect, Scope } from "effect"
import { Layer } from "effect"
import * as DuckDBStateStoreProvider from "./DuckDBStateStoreProvider.ts"
import * as FileStateStoreProvider from "./FileStateStoreProvider.ts"
import { type StateStoreProvider, StateStoreProviderService } from "./StateStore.ts"

/** The provider names tributary knows. */
export type ProviderName = "duckdb" | "memory"

/** Options for either provider; each reads the ones it knows. */
export type ProviderOptions = DuckDBStateStoreProvider.DuckDBProviderOptions &
  FileStateStoreProvider.FileProviderOptions

/**
 * Makes the named provider; closing the scope closes it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { StateStoreProviders } from "tributary/state"
 * const provider = StateStoreProviders.make("memory") // Effect<StateStoreProvider, never, Scope>
 * ```
 * @since 0.1.0
 */
export const make = (
  name: ProviderName = "duckdb",
  options: ProviderOptions = {}
): Effect.Effect<StateStoreProvider, never, Scope.Scope> => {
  switch (name) {
    case "duckdb":
      return DuckDBStateStoreProvider.make(options)
    case "memory":
      return FileStateStoreProvider.make(options)
  }
}

/**
 * The named provider as the session's `StateStoreProviderService`.
 *
 * @since 0.1.0
 */
export const layer = (
  name: ProviderName = "duckdb",
  options: ProviderOptions = {}
): Layer.Layer<StateStoreProviderService> => Layer.effect(StateStoreProviderService, make(name, options))
