/**
 * The part of a `StateStore` both providers share: one batch's uncommitted changes over a
 * committed version, the synchronous `get`/`put`/`remove` the operators' loops call, and the
 * commit bookkeeping (which changes to persist, the metrics). A provider supplies a
 * `CommittedView`: how to look up, load and scan the committed version, and how to persist a
 * batch.
 *
 * Values are encoded on `put` (by the provider's `ValueCodec`: the binary codec of
 * `StateCodec.ts` for the file provider, JSON text for the DuckDB provider's tables) and decoded
 * on `get`, so a value handed to the store cannot be changed afterwards by the caller, and every
 * `get` returns a fresh copy (as Spark's stores copy rows on `put`).
 *
 * @since 0.1.0
 */
import { Clock, Effect } from "effect"
import { StateStoreError } from "../core/Errors.ts"
import { JsonValueCodec, type ValueCodec } from "./StateCodec.ts"
import { describeStore, type StateStore, type StateStoreMetrics } from "./StateStore.ts"

/** `CommittedView.lookup`'s answer for a key whose committed value is not in memory. */
export const NOT_LOADED: unique symbol = Symbol.for("tributary/state/NotLoaded")

/** A batch ready to persist as `version`. */
export interface CommitBatch {
  readonly version: number
  /** Changes that differ from the committed version: value encodings, or `null` for a removal. */
  readonly changes: ReadonlyArray<readonly [string, string | null]>
  /** Each change's committed value before the batch (`undefined`: absent), aligned with `changes`. */
  readonly befores: ReadonlyArray<string | undefined>
  /** Every changed key with its final value (including puts of an unchanged value). */
  readonly allChanges: ReadonlyMap<string, string | null>
  /** Live keys and their character count after the batch. */
  readonly numRows: number
  readonly numChars: number
}

/** What a provider gives a session: the committed version and how to change it. */
export interface CommittedView {
  readonly operatorId: number
  readonly storeName: string
  readonly version: number
  /** Live keys and the characters of their keys and values, in the committed version. */
  readonly numRows: number
  readonly numChars: number
  /** How values are encoded (JSON text when omitted). */
  readonly codec?: ValueCodec | undefined
  /** The committed value's encoding, `undefined` when absent, `NOT_LOADED` when not in memory. */
  readonly lookup: (key: string) => string | undefined | typeof NOT_LOADED
  /** Makes the keys answerable by `lookup` (one batched read for those not in memory). */
  readonly load: (keys: ReadonlyArray<string>) => Effect.Effect<void, StateStoreError>
  /** Every committed entry. */
  readonly scan: () => Effect.Effect<ReadonlyMap<string, string>, StateStoreError>
  /** Writes the batch as `batch.version`, atomically; returns provider-specific metrics. */
  readonly persist: (batch: CommitBatch) => Effect.Effect<void, StateStoreError>
  /** Ends the writer's hold on the store (after commit, failed commit or abort). */
  readonly release: () => void
  /** Estimated bytes the store keeps in memory (after a commit: including the new version). */
  readonly memoryBytes: () => number
  readonly numRowsLoaded: () => number
  readonly customMetrics: () => Readonly<Record<string, number>>
}

const finishedError = (view: CommittedView, what: string) =>
  new StateStoreError({
    reason: "InvalidUsage",
    operatorId: view.operatorId,
    message: `${what} was called on ${describeStore(view)} after it was committed or aborted; open the store again for the next batch.`
  })

/**
 * Builds the `StateStore` for one batch over a provider's committed view.
 *
 * @since 0.1.0
 */
export const makeSession = (view: CommittedView): StateStore => {
  const changes = new Map<string, string | null>()
  const codec = view.codec ?? JsonValueCodec
  let finished = false
  /** The committed entries, once `scan` read them all (every key is then known). */
  let scanned: ReadonlyMap<string, string> | undefined

  const committed = (key: string): string | undefined | typeof NOT_LOADED =>
    scanned !== undefined ? scanned.get(key) : view.lookup(key)

  const defect = (message: string): never => {
    throw new Error(`StateStore (${describeStore(view)}): ${message}`)
  }

  const get = (key: string): unknown | undefined => {
    if (finished) defect("get after commit or abort")
    const c = changes.get(key)
    if (c !== undefined) return c === null ? undefined : codec.decode(c)
    const v = committed(key)
    if (v === NOT_LOADED)
      return defect(`get(${JSON.stringify(key)}) for a key that was not loaded; call load with the batch's keys first`)
    return v === undefined ? undefined : codec.decode(v)
  }

  const put = (key: string, value: unknown): void => {
    if (finished) defect("put after commit or abort")
    const encoded = codec.encode(value)
    if (encoded === undefined) defect(`put(${JSON.stringify(key)}): the value cannot be represented as JSON`)
    changes.set(key, encoded as string)
  }

  const remove = (key: string): void => {
    if (finished) defect("remove after commit or abort")
    changes.set(key, null)
  }

  const load = (keys: Iterable<string>): Effect.Effect<void, StateStoreError> =>
    Effect.suspend(() => {
      if (finished) return Effect.fail(finishedError(view, "load"))
      if (scanned !== undefined) return Effect.void
      const list = Array.isArray(keys) ? (keys as ReadonlyArray<string>) : Array.from(keys)
      return list.length === 0 ? Effect.void : view.load(list)
    })

  const scan = (): Effect.Effect<Iterable<readonly [string, unknown]>, StateStoreError> =>
    Effect.suspend(() => {
      if (finished) return Effect.fail(finishedError(view, "scan"))
      const base = scanned !== undefined ? Effect.succeed(scanned) : view.scan()
      return Effect.map(base, (entries) => {
        scanned = entries
        const out: Array<readonly [string, unknown]> = []
        for (const [k, v] of entries) if (!changes.has(k)) out.push([k, codec.decode(v)])
        for (const [k, v] of changes) if (v !== null) out.push([k, codec.decode(v)])
        return out
      })
    })

  const commit = (): Effect.Effect<StateStoreMetrics, StateStoreError> =>
    Effect.suspend(() => {
      if (finished) return Effect.fail(finishedError(view, "commit"))
      return Effect.gen(function* () {
        const t0 = yield* Clock.currentTimeNanos
        // Each changed key's committed value, looked up once (metrics and what to persist need
        // it); the keys not in memory are read in one go.
        const n = changes.size
        const keys = new Array<string>(n)
        const values = new Array<string | null>(n)
        const befores = new Array<string | undefined | typeof NOT_LOADED>(n)
        const unknown: Array<string> = []
        let i = 0
        changes.forEach((v, k) => {
          const before = committed(k)
          keys[i] = k
          values[i] = v
          befores[i] = before
          if (before === NOT_LOADED) unknown.push(k)
          i++
        })
        if (unknown.length > 0) {
          yield* view.load(unknown)
          for (let j = 0; j < n; j++) if (befores[j] === NOT_LOADED) befores[j] = committed(keys[j])
        }
        let numRows = view.numRows
        let numChars = view.numChars
        let updated = 0
        let removed = 0
        const persist: Array<readonly [string, string | null]> = []
        const persistBefores: Array<string | undefined> = []
        for (let j = 0; j < n; j++) {
          const k = keys[j]
          const v = values[j]
          const before = befores[j]
          if (before === NOT_LOADED) {
            return yield* new StateStoreError({
              reason: "CommitFailed",
              operatorId: view.operatorId,
              message: `Could not read the committed value of a changed key of ${describeStore(view)}.`
            })
          }
          if (v !== null) updated++
          else if (before !== undefined) removed++
          // A removal of an absent key and a put of the same value change nothing on disk.
          if (v === null ? before === undefined : before === v) continue
          persist.push([k, v])
          persistBefores.push(before)
          if (before !== undefined) {
            numRows--
            numChars -= k.length + before.length
          }
          if (v !== null) {
            numRows++
            numChars += k.length + v.length
          }
        }
        yield* view.persist({
          version: view.version + 1,
          changes: persist,
          befores: persistBefores,
          allChanges: changes,
          numRows,
          numChars
        })
        const t1 = yield* Clock.currentTimeNanos
        return {
          numRowsTotal: numRows,
          numRowsUpdated: updated,
          numRowsRemoved: removed,
          commitTimeMs: Number(t1 - t0) / 1e6,
          memoryUsedBytes: view.memoryBytes(),
          numRowsLoaded: view.numRowsLoaded(),
          customMetrics: view.customMetrics()
        } satisfies StateStoreMetrics
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            finished = true
            view.release()
          })
        )
      )
    })

  const abort = (): Effect.Effect<void> =>
    Effect.sync(() => {
      if (finished) return
      finished = true
      changes.clear()
      view.release()
    })

  return {
    operatorId: view.operatorId,
    storeName: view.storeName,
    version: view.version,
    load,
    get,
    put,
    remove,
    scan,
    commit,
    abort
  }
}
