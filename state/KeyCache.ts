/**
 * The DuckDB provider's in-memory cache of one store's committed entries at one version: a
 * bounded, least-recently-used map from key to value JSON (or `null`, "known absent").
 *
 * When the whole version fits (a new store, or a version loaded in full at open), the cache is
 * `complete`: a key it does not hold is absent, and reads never reach DuckDB. Once it has to
 * evict, it is a plain hot-key cache and misses are read from DuckDB in one batched query.
 *
 * Sizes are estimates (two bytes per character plus a per-entry overhead), the same estimate
 * `memoryUsedBytes` reports. While complete, an update keeps the entry's place, so the first
 * cache that outgrows its budget evicts its oldest entries first; from then on it is LRU.
 *
 * @since 0.1.0
 */

/** Bytes an entry costs beyond its characters: Map slot, string headers. */
export const ENTRY_OVERHEAD_BYTES = 80

/** The estimated memory of one entry. */
export const entryBytes = (key: string, value: string | null): number =>
  ENTRY_OVERHEAD_BYTES + 2 * (key.length + (value === null ? 0 : value.length))

/**
 * A bounded LRU cache of one store version's entries.
 *
 * @since 0.1.0
 */
export class KeyCache {
  readonly maxBytes: number
  /** The committed version the entries belong to (-2 when unset). */
  version = -2
  /** True when every live key of `version` is in the cache (so a missing key is absent). */
  complete = false
  bytes = 0
  /** Insertion order is recency order: the first entry is the least recently used. */
  readonly entries = new Map<string, string | null>()

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes
  }

  /** Empties the cache for `version`; `complete` when that version is known to be empty. */
  reset(version: number, complete: boolean): void {
    this.entries.clear()
    this.bytes = 0
    this.version = version
    this.complete = complete
  }

  /** The cached value (`null`: known absent), moved to most recently used; `undefined` when not cached. */
  touch(key: string): string | null | undefined {
    const v = this.entries.get(key)
    if (v === undefined) return undefined
    this.entries.delete(key)
    this.entries.set(key, v)
    return v
  }

  /** The cached value without changing recency. */
  peek(key: string): string | null | undefined {
    return this.entries.get(key)
  }

  /**
   * Caches `key` (`null`: absent) as most recently used, evicting the least recently used
   * entries while over budget. A complete cache drops absent keys instead of storing them.
   */
  set(key: string, value: string | null): void {
    const old = this.entries.get(key)
    if (this.complete) {
      // A complete cache holds no absent markers: `old` is the value or nothing.
      this.replace(key, old ?? undefined, value)
      return
    }
    if (old !== undefined) {
      this.bytes -= entryBytes(key, old)
      this.entries.delete(key)
    }
    this.entries.set(key, value)
    this.bytes += entryBytes(key, value)
    if (this.bytes > this.maxBytes) this.evict()
  }

  /**
   * `set` for a complete cache whose entry for `key` is known to be `old` (`undefined`: absent),
   * as a commit knows each changed key's committed value: one map operation instead of two.
   */
  replace(key: string, old: string | undefined, value: string | null): void {
    // Complete, the cache evicts nothing until it outgrows its budget, so an update keeps its
    // place (no delete and re-insert into a map of every key) and a removal just goes.
    if (!this.complete) {
      this.set(key, value)
      return
    }
    if (old !== undefined) this.bytes -= entryBytes(key, old)
    if (value === null) {
      if (old !== undefined) this.entries.delete(key)
      return
    }
    this.entries.set(key, value)
    this.bytes += entryBytes(key, value)
    if (this.bytes > this.maxBytes) this.evict()
  }

  private evict(): void {
    this.complete = false
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes * 0.9) break
      this.entries.delete(k)
      this.bytes -= entryBytes(k, v)
    }
  }
}
