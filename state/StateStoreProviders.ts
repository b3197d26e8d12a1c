/**
 * The state store providers by name, as the session's `stateStore` option and Spark's
 * `spark.sql.streaming.stateStore.providerClass` pick them: `"duckdb"` (the default) or
 * `"memory"` (the file provider, Spark's HDFS-backed design). A checkpoint records the name of
 * the provider that wrote its state.
 *
 * Adding a provider is its own file (a `make(options)` giving a `StateStoreProvider` whose `name`
 * is its key here) plus one line in `PROVIDERS`: the session (`Session.layer({ stateStore })`),
 * the state reader and the CLI find it by that name.
 *
 * @since 0.1.0
 */
import type { Effect, Scope } from "effect"
import { Layer } from "effect"
import * as DuckDBStateStoreProvider from "./DuckDBStateStoreProvider.ts"
import * as FileStateStoreProvider from "./FileStateStoreProvider.ts"
import { type StateStoreProvider, StateStoreProviderService } from "./StateStore.ts"

/** The registry: one line per provider. */
const PROVIDERS = {
  duckdb: DuckDBStateStoreProvider.make,
  memory: FileStateStoreProvider.make
} satisfies Record<string, (options?: never) => Effect.Effect<StateStoreProvider, never, Scope.Scope>>

/** The provider names tributary knows. */
export type ProviderName = keyof typeof PROVIDERS

/** The provider a session uses when none is named. */
export const DEFAULT_PROVIDER: ProviderName = "duckdb"

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never

/** Options for any provider; each reads the ones it knows. */
export type ProviderOptions = UnionToIntersection<NonNullable<Parameters<(typeof PROVIDERS)[ProviderName]>[0]>>

/**
 * Whether `name` names a provider (a checkpoint's recorded provider, a CLI argument).
 *
 * @since 0.1.0
 */
export const isProviderName = (name: unknown): name is ProviderName =>
  typeof name === "string" && Object.hasOwn(PROVIDERS, name)

/**
 * The provider names, in registry order.
 *
 * @since 0.1.0
 */
export const providerNames = (): ReadonlyArray<ProviderName> => Object.keys(PROVIDERS) as Array<ProviderName>

/**
 * Makes the named provider; closing the scope closes it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { StateStoreProviders } from "../state/mod.ts" // inside the repository: state/ is not a package entry point
 * const provider = StateStoreProviders.make("memory") // Effect<StateStoreProvider, never, Scope>
 * ```
 * @since 0.1.0
 */
export const make = (
  name: ProviderName = DEFAULT_PROVIDER,
  options: ProviderOptions = {}
): Effect.Effect<StateStoreProvider, never, Scope.Scope> => PROVIDERS[name](options)

/**
 * The named provider as the session's `StateStoreProviderService` (what `Session.layer` builds
 * its session on).
 *
 * @since 0.1.0
 */
export const layer = (
  name: ProviderName = DEFAULT_PROVIDER,
  options: ProviderOptions = {}
): Layer.Layer<StateStoreProviderService> => Layer.effect(StateStoreProviderService, make(name, options))
