/**
 * The DuckDB state store provider, tributary's default: every stateful operator of a query keeps
 * its state in one embedded database file, `<checkpoint>/state/state.duckdb`.
 *
 * Layout. `tributary_state_stores` registers each store (operator id, store name, key and value
 * schemas, `base_version`); `tributary_state_versions` records each committed version (live
 * rows, their size, the number of changes). Each store has two tables of its own:
 *
 * - `state_<id>_log (version, key, value)`: every batch's changes, appended; a `NULL` value is a
 *   removal. Nothing is updated in place, so a commit costs the same whatever the state's size.
 * - `state_<id>_base (key, value)`: the state as of `base_version`, compacted from the log.
 *
 * Version `v` (`base_version <= v <= latest`) is the base overlaid with the latest log entry per
 * key at or below `v`. Why append-only: DuckDB's `INSERT ... ON CONFLICT` of a 1,000-row batch
 * was measured at 9.7 ms into 100 K keys, 18 ms into 1 M and 134 ms into 10 M (docs/architecture.md): the
 * cost follows the table. Appending follows the batch.
 *
 * Commit: the batch's changes are written as one changelog file,
 * `state/state.duckdb.changelog/<operator>/<store>/<version>.changelog` (`DuckDBChangelog.ts`:
 * JSON lines of `[key, value]` pairs, written atomically with a checksum file beside it through
 * the checkpoint file system). That file is the commit, as in Spark's RocksDB changelog
 * checkpointing: the commit costs one `JSON.stringify` and one file write, whatever the state's
 * size. Folding the changelog into the store's log table (one transaction per version: DuckDB
 * parses the lines itself with `json_transform`, on its own threads, plus the row of the
 * versions table) runs in the background after the commit; the file is removed once its version
 * is in DuckDB. Whatever reads DuckDB (a `load` of keys the cache does not hold, a scan, a
 * reader, compaction, a rollback) first folds, or waits for, the versions it needs. A start
 * folds the changelogs no fold reached (a kill) before the store opens; a damaged, foreign or
 * missing changelog fails it, naming the file. A fold that fails fails every later commit and
 * open of the store with its error (its changelog stays for the next start). No user data is
 * ever spliced into SQL: keys and values travel as a parameter or as appended values.
 *
 * Reads: an operator's `load(keys)` first asks a bounded in-memory cache of hot keys
 * (`KeyCache.ts`, `cacheMaxBytes` per store); when a whole version fits the cache it is loaded at
 * open and the cache is complete, so reads never reach DuckDB. Misses go to DuckDB in one query
 * per `load` (the keys as one list parameter). DuckDB has no batched point lookup by index, so
 * that query scans the store's tables: its cost grows with the state (see `bench/state.ts`).
 *
 * Maintenance (compaction) runs apart from commits, on its own connection, in the background
 * every `maintenanceEveryCommits` commits of a store or when `maintain()` is called: once at least
 * half a retention's worth of batches can be folded, it folds log entries at or below
 * `latest - minBatchesToRetain` (and below any version an open store or a reader is using) into
 * the base table, deletes them from the log, and raises `base_version`. So every version within
 * `spark.sql.streaming.minBatchesToRetain` stays openable, and the log holds at most about 1.5 x
 * `minBatchesToRetain` batches of changes. Maintenance also checkpoints DuckDB's
 * write-ahead log into the file, so commits do not.
 *
 * Integrity: DuckDB checksums every block of the database file and its write-ahead log; a
 * corrupt or truncated file fails with a `Corrupt` error naming it.
 *
 * @since 0.1.0
 */
import {
  BIGINT,
  type DuckDBConnection,
  DuckDBInstance,
  type DuckDBType,
  type DuckDBValue,
  LIST,
  listValue,
  VARCHAR
} from "@duckdb/node-api"
import * as nodeFs from "node:fs/promises"
import * as nodePath from "node:path"
import { Effect, Fiber, Layer, type Scope, Semaphore } from "effect"
import type { CheckpointFileSystem } from "../core/CheckpointFileSystem.ts"
import { StateStoreError } from "../core/Errors.ts"
import { encodeChangelog, parseChangelog } from "./DuckDBChangelog.ts"
import { KeyCache, ENTRY_OVERHEAD_BYTES } from "./KeyCache.ts"
import * as MaintenanceScheduler from "./MaintenanceScheduler.ts"
import { NodeCheckpointFileSystem } from "./NodeCheckpointFileSystem.ts"
import { checkCompatibility, decodeSchema, encodeSchema } from "./StateSchemaCompatibility.ts"
import {
  beginOpen,
  describeStore,
  type OpenSpec,
  type StateSchema,
  type StateStore,
  type StateStoreHooks,
  type StateStoreId,
  type StateStoreProvider,
  StateStoreProviderService,
  validateSpec,
  type VersionSpec
} from "./StateStore.ts"
import { type CommitBatch, makeSession, NOT_LOADED } from "./StateStoreSession.ts"

/**
 * Options of the DuckDB provider.
 *
 * @since 0.1.0
 */
export interface DuckDBProviderOptions {
  /**
   * Estimated bytes of committed entries kept in memory per store (default 256 MiB). A version
   * that fits is loaded whole at open and read without DuckDB; a larger one keeps its most
   * recently used keys.
   */
  readonly cacheMaxBytes?: number | undefined
  /** Background compaction after this many commits of a store (default 10; 0: only when `maintain` is called). */
  readonly maintenanceEveryCommits?: number | undefined
  readonly hooks?: StateStoreHooks | undefined
  /** Where the changelog files are written (`node:fs` by default; tests inject failures through it). */
  readonly fs?: CheckpointFileSystem | undefined
}

/** One DuckDB connection; its calls are serialised (a connection runs one statement at a time). */
interface Conn {
  readonly raw: DuckDBConnection
  readonly lock: Semaphore.Semaphore
}

interface Database {
  readonly root: string
  readonly path: string
  readonly instance: DuckDBInstance
  /** Registry changes and `read`. */
  readonly admin: Conn
  /** Compaction. */
  readonly maint: Conn
  readonly conns: Array<Conn>
  readonly stores: Map<string, Handle>
  /** Serialises store registration. */
  readonly lock: Semaphore.Semaphore
}

interface VersionInfo {
  readonly rows: number
  readonly chars: number
}

interface Handle {
  readonly db: Database
  readonly id: number
  readonly operatorId: number
  readonly storeName: string
  readonly log: string
  readonly base: string
  /** Loads and commits of this store. */
  readonly conn: Conn
  /** The schema stored with the state; `acceptedSchemas` holds the proposed ones found compatible. */
  readonly storedSchema: StateSchema
  readonly acceptedSchemas: Set<string>
  latest: number
  baseVersion: number
  /** The base version a running compaction is moving to: versions below it are no longer openable. */
  pendingBase: number
  readonly versions: Map<number, VersionInfo>
  readonly cache: KeyCache
  writer: boolean
  /** Versions in use by an open store or a reader, with use counts (compaction stays below them). */
  readonly pins: Map<number, number>
  minBatchesToRetain: number
  commitsSinceMaintenance: number
  maintenance: Fiber.Fiber<void, never> | undefined
  /** Serialises compaction and rollback of this store. */
  readonly maintLock: Semaphore.Semaphore
  /** The folder of the store's changelog files. */
  readonly changelogDir: string
  /** The latest version in the DuckDB tables; later committed versions are in changelog files. */
  folded: number
  /** Committed versions not folded yet, by version: their changelog text and what they hold. */
  readonly pending: Map<number, PendingFold>
  /** Whether a fiber is folding `pending` right now (`pump` is it). */
  pumping: boolean
  pump: Fiber.Fiber<void, never> | undefined
  /** Why the last fold failed: every later commit, read and open of the store fails with it. */
  foldError: StateStoreError | undefined
  /** Serialises folds of this store. */
  readonly foldLock: Semaphore.Semaphore
  /**
   * Set when the query using the store stopped (`settle`): no background fold starts until the
   * store is opened again; its committed changelogs wait beside the database (a read, a close
   * or the next start folds them).
   */
  paused: boolean
}

/** A committed version waiting to be folded into DuckDB. */
interface PendingFold {
  readonly version: number
  readonly path: string
  readonly lines: ReadonlyArray<string>
  readonly info: VersionInfo
  readonly numChanges: number
}

const STORES = "tributary_state_stores"

/** Versions folded into DuckDB in one transaction at most. */
const FOLD_VERSIONS = 16

/** Committed versions waiting for their fold at most; a commit beyond it waits for folds first. */
const MAX_PENDING = 32
const VERSIONS = "tributary_state_versions"

const message = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/** The state database of a checkpoint. */
const databasePath = (checkpoint: string): string => nodePath.join(nodePath.resolve(checkpoint), "state", "state.duckdb")

/** DuckDB's messages for a damaged file: a block checksum mismatch, a short read, a foreign file. */
const CORRUPT = /corrupt|checksum|could not read enough bytes|not a valid duckdb/i

/**
 * Database files held by a provider of this process. DuckDB's file lock stops other processes,
 * but not a second instance in the same process, which would corrupt the file.
 */
const held = new Set<string>()

/** DuckDB's message when another process holds the file, and ours for another provider of this process. */
const IN_USE = /could not set lock|already open in this process/i

const toError =
  (path: string, what: string, reason: "Io" | "CommitFailed", operatorId?: number) =>
  (cause: unknown): StateStoreError => {
    if (cause instanceof StateStoreError) return cause
    const m = message(cause)
    if (IN_USE.test(m)) {
      return new StateStoreError({
        reason: "InvalidUsage",
        operatorId,
        path,
        cause,
        message:
          `The state database ${path} is in use by another query or process (${m}). Stop it, or give this ` +
          `query its own checkpointLocation.`
      })
    }
    return CORRUPT.test(m)
      ? new StateStoreError({
          reason: "Corrupt",
          operatorId,
          path,
          cause,
          message:
            `The state database ${path} (or its write-ahead log ${path}.wal) is corrupt or truncated (${m}). It ` +
            `cannot be read safely; restore both from a backup or start the query from a new checkpoint.`
        })
      : new StateStoreError({
          reason,
          operatorId,
          path,
          cause,
          message: `${what} failed on ${path}: ${m}. Check that the file and its folder are readable and writable and the disk has room, then restart the query.`
        })
  }

/** Runs `f` on the connection, alone and uninterrupted (a DuckDB call cannot be abandoned halfway). */
const use = <A>(
  conn: Conn,
  f: (c: DuckDBConnection) => Promise<A>,
  onError: (cause: unknown) => StateStoreError
): Effect.Effect<A, StateStoreError> =>
  Effect.uninterruptible(conn.lock.withPermits(1)(Effect.tryPromise({ try: () => f(conn.raw), catch: onError })))

const rowsOf = async (
  c: DuckDBConnection,
  sql: string,
  values: Array<DuckDBValue>,
  types: Array<DuckDBType>,
  each: (key: string, value: string | null) => void
): Promise<void> => {
  const result = await c.stream(sql, values, types)
  for (;;) {
    const chunk = await result.fetchChunk()
    if (chunk === null || chunk.rowCount === 0) break
    const keys = chunk.getColumnValues(0) as Array<string>
    const vals = chunk.getColumnValues(1) as Array<string | null>
    for (let i = 0; i < keys.length; i++) each(keys[i], vals[i])
  }
}

/** The latest log entry per key at or below a version, over the base (every key, or the listed ones). */
const versionSql = (h: Handle, keyed: boolean): string =>
  keyed
    ? `WITH req AS (SELECT DISTINCT unnest($1) AS key),
       l AS MATERIALIZED (
         SELECT key, value FROM ${h.log} SEMI JOIN req USING (key) WHERE version <= $2
         QUALIFY row_number() OVER (PARTITION BY key ORDER BY version DESC) = 1)
       SELECT key, value FROM l
       UNION ALL
       SELECT b.key, b.value FROM ${h.base} b SEMI JOIN req USING (key) ANTI JOIN l USING (key)`
    : `WITH l AS MATERIALIZED (
         SELECT key, value FROM ${h.log} WHERE version <= $1
         QUALIFY row_number() OVER (PARTITION BY key ORDER BY version DESC) = 1)
       SELECT key, value FROM l WHERE value IS NOT NULL
       UNION ALL
       SELECT b.key, b.value FROM ${h.base} b ANTI JOIN l USING (key)`

/**
 * Makes a DuckDB provider; closing the scope closes it (after background compaction finishes).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { DuckDBStateStoreProvider } from "../state/mod.ts" // inside the repository: state/ is not a package entry point
 * const provider = DuckDBStateStoreProvider.make({ cacheMaxBytes: 64 * 1024 * 1024 }) // Effect<StateStoreProvider, never, Scope>
 * ```
 * @since 0.1.0
 */
export const make = (options: DuckDBProviderOptions = {}): Effect.Effect<StateStoreProvider, never, Scope.Scope> =>
  Effect.gen(function* () {
    const cacheMaxBytes = options.cacheMaxBytes ?? 256 * 1024 * 1024
    const maintenanceEvery = options.maintenanceEveryCommits ?? 10
    const fs = options.fs ?? NodeCheckpointFileSystem
    const scope = yield* Effect.scope
    const databases = new Map<string, Database>()
    let closed = false
    const registry = Semaphore.makeUnsafe(1)

    const closedError = (id: { readonly operatorId: number }) =>
      new StateStoreError({
        reason: "InvalidUsage",
        operatorId: id.operatorId,
        message: "The state store provider is closed."
      })

    const openDatabase = async (root: string, path: string): Promise<Database> => {
      if (held.has(path)) throw new Error("already open in this process")
      await nodeFs.mkdir(nodePath.dirname(path), { recursive: true })
      const instance = await DuckDBInstance.create(path)
      held.add(path)
      const conns: Array<Conn> = []
      try {
        const connect = async () => {
          const c: Conn = { raw: await instance.connect(), lock: Semaphore.makeUnsafe(1) }
          conns.push(c)
          return c
        }
        const admin = await connect()
        const maint = await connect()
        await admin.raw.run(`CREATE TABLE IF NOT EXISTS ${STORES} (
          store_id INTEGER PRIMARY KEY, operator_id INTEGER NOT NULL, store_name VARCHAR NOT NULL,
          schema VARCHAR NOT NULL, base_version BIGINT NOT NULL, UNIQUE (operator_id, store_name))`)
        await admin.raw.run(`CREATE TABLE IF NOT EXISTS ${VERSIONS} (
          store_id INTEGER NOT NULL, version BIGINT NOT NULL, num_rows BIGINT NOT NULL,
          num_chars BIGINT NOT NULL, num_changes BIGINT NOT NULL, PRIMARY KEY (store_id, version))`)
        return { root, path, instance, admin, maint, conns, stores: new Map(), lock: Semaphore.makeUnsafe(1) }
      } catch (e) {
        for (const c of conns) c.raw.closeSync()
        instance.closeSync()
        held.delete(path)
        throw e
      }
    }

    const database = (checkpoint: string, operatorId: number): Effect.Effect<Database, StateStoreError> => {
      const root = nodePath.resolve(checkpoint)
      const path = databasePath(root)
      // Uninterruptible: an open abandoned halfway would leave a DuckDB instance holding the file.
      return registry.withPermits(1)(
        Effect.uninterruptible(
          Effect.suspend(() => {
            if (closed) return Effect.fail(closedError({ operatorId }))
            const db = databases.get(root)
            if (db !== undefined) return Effect.succeed(db)
            if (path.includes("?")) {
              // DuckDB reads `?` in a database path as the start of its options: it would create
              // the database and then fail to commit to a write-ahead log named after the part
              // before the `?`. Refuse before anything is written.
              return Effect.fail(
                new StateStoreError({
                  reason: "InvalidUsage",
                  operatorId,
                  path,
                  message: `The DuckDB state store cannot keep its database at ${path}: DuckDB does not accept a '?' in a database path. Choose a checkpoint location without '?', or the file state store provider (stateStore: "memory").`
                })
              )
            }
            return Effect.map(
              Effect.tryPromise({
                try: () => openDatabase(root, path),
                catch: toError(path, "Opening the state database", "Io", operatorId)
              }),
              (opened) => {
                databases.set(root, opened)
                return opened
              }
            )
          })
        )
      )
    }

    /** Registers (with a schema) or finds a store and makes its handle. */
    const createHandle = (
      db: Database,
      id: StateStoreId,
      register: OpenSpec | undefined,
      key: string
    ): Effect.Effect<Handle | undefined, StateStoreError> =>
      Effect.gen(function* () {
        const err = toError(db.path, `Opening ${describeStore(id)}`, "Io", id.operatorId)
        const found = yield* use(
          db.admin,
          async (c) => {
            const select = async () =>
              (
                await c.runAndReadAll(
                  `SELECT store_id, schema, base_version FROM ${STORES} WHERE operator_id = $1 AND store_name = $2`,
                  [id.operatorId, id.storeName]
                )
              ).getRowsJS()[0] as [number, string, bigint] | undefined
            let row = await select()
            if (row === undefined) {
              if (register === undefined) return undefined
              await c.run("BEGIN TRANSACTION")
              try {
                const next = await c.runAndReadAll(`SELECT coalesce(max(store_id), 0) + 1 FROM ${STORES}`)
                const storeId = Number(next.getRowsJS()[0][0])
                await c.run(`INSERT INTO ${STORES} VALUES ($1, $2, $3, $4, -1)`, [
                  storeId,
                  id.operatorId,
                  id.storeName,
                  encodeSchema(register.schema)
                ])
                await c.run(
                  `CREATE TABLE state_${storeId}_log (version BIGINT NOT NULL, key VARCHAR NOT NULL, value VARCHAR)`
                )
                await c.run(`CREATE TABLE state_${storeId}_base (key VARCHAR NOT NULL, value VARCHAR NOT NULL)`)
                await c.run("COMMIT")
              } catch (e) {
                await c.run("ROLLBACK").catch(() => undefined)
                throw e
              }
              row = await select()
              if (row === undefined) throw new Error(`${describeStore(id)} was registered but cannot be found`)
            }
            const latest = await c.runAndReadAll(`SELECT max(version) FROM ${VERSIONS} WHERE store_id = $1`, [row[0]])
            const l = latest.getRowsJS()[0][0] as bigint | null
            const conn: Conn = { raw: await db.instance.connect(), lock: Semaphore.makeUnsafe(1) }
            db.conns.push(conn)
            return { storeId: row[0], schema: row[1], base: Number(row[2]), latest: l === null ? -1 : Number(l), conn }
          },
          err
        )
        if (found === undefined) return undefined
        const stored = decodeSchema(found.schema)
        if (stored === undefined) {
          return yield* new StateStoreError({
            reason: "Corrupt",
            operatorId: id.operatorId,
            path: db.path,
            message: `The stored schema of ${describeStore(id)} in ${db.path} is unreadable.`
          })
        }
        const h: Handle = {
          db,
          id: found.storeId,
          operatorId: id.operatorId,
          storeName: id.storeName,
          log: `state_${found.storeId}_log`,
          base: `state_${found.storeId}_base`,
          conn: found.conn,
          storedSchema: stored,
          acceptedSchemas: new Set([found.schema]),
          latest: found.latest,
          baseVersion: found.base,
          pendingBase: found.base,
          versions: new Map(),
          cache: new KeyCache(cacheMaxBytes),
          writer: false,
          pins: new Map(),
          minBatchesToRetain: 100,
          commitsSinceMaintenance: 0,
          maintenance: undefined,
          maintLock: Semaphore.makeUnsafe(1),
          changelogDir: fs.join(changelogRoot(db), String(id.operatorId), id.storeName),
          folded: found.latest,
          pending: new Map(),
          pumping: false,
          pump: undefined,
          foldError: undefined,
          foldLock: Semaphore.makeUnsafe(1),
          paused: false
        }
        yield* recoverChangelogs(h)
        db.stores.set(key, h)
        return h
      })

    /**
     * A restart: the changelogs of versions committed after the last fold are read (their
     * checksums checked) and folded now; those of versions already in DuckDB (a fold whose file
     * removal a kill cut short) are removed.
     */
    const recoverChangelogs = (h: Handle): Effect.Effect<void, StateStoreError> =>
      Effect.gen(function* () {
        const names = yield* Effect.mapError(fs.list(h.changelogDir), (e) =>
          toError(h.changelogDir, `Listing the changelogs of ${describeStore(h)}`, "Io", h.operatorId)(e)
        )
        const versions = names
          .flatMap((n) => {
            const m = /^(\d+)\.changelog$/.exec(n)
            return m === null ? [] : [Number(m[1])]
          })
          .sort((a, b) => a - b)
        for (const version of versions) {
          const path = changelogPath(h, version)
          if (version <= h.folded) {
            yield* Effect.mapError(fs.remove(path), (e) => toError(path, "Removing a folded changelog", "Io", h.operatorId)(e))
            continue
          }
          if (version !== h.latest + 1) {
            return yield* changelogCorrupt(
              h,
              changelogPath(h, h.latest + 1),
              `it is missing, but version ${version} (${path}) was committed after it`
            )
          }
          const text = yield* Effect.mapError(fs.readText(path), (e) => changelogCorrupt(h, path, e.message))
          if (text === undefined) return yield* changelogCorrupt(h, path, "it disappeared while being read")
          const parsed = parseChangelog(text)
          if (typeof parsed === "string") return yield* changelogCorrupt(h, path, parsed)
          if (parsed.header.version !== version) {
            return yield* changelogCorrupt(h, path, `its header names version ${parsed.header.version}`)
          }
          const info = { rows: parsed.header.numRows, chars: parsed.header.numChars }
          h.pending.set(version, { version, path, lines: parsed.lines, info, numChanges: parsed.header.numChanges })
          h.latest = version
          remember(h, version, info)
        }
        yield* awaitFolded(h, h.latest)
      })

    const changelogRoot = (db: Database): string => fs.join(db.root, "state", "state.duckdb.changelog")
    const changelogPath = (h: Handle, version: number): string => fs.join(h.changelogDir, `${version}.changelog`)

    const changelogCorrupt = (h: Handle, path: string, why: string) =>
      new StateStoreError({
        reason: "Corrupt",
        operatorId: h.operatorId,
        path,
        message:
          `The state changelog ${path} of ${describeStore(h)} cannot be read: ${why}. It holds a committed ` +
          `version not yet folded into ${h.db.path}: restore it from a backup, or start the query from a new checkpoint.`
      })

    /**
     * Folds consecutive committed versions' changelogs into the store's log table, in one
     * transaction (one write-ahead log flush for all of them, so folding catches up with commits).
     */
    const foldSome = (h: Handle, ps: ReadonlyArray<PendingFold>): Effect.Effect<void, StateStoreError> =>
      use(
        h.conn,
        async (c) => {
          await c.run("BEGIN TRANSACTION")
          try {
            for (const p of ps) {
              let rows = 0
              const ver = BigInt(p.version)
              for (const line of p.lines) {
                // DuckDB parses the line itself: no value crosses into it one by one.
                const r = await c.run(
                  `INSERT INTO ${h.log} SELECT $1, e[1], e[2] FROM (SELECT unnest(json_transform($2, '[["VARCHAR"]]')) AS e)`,
                  [ver, line]
                )
                rows += r.rowsChanged
              }
              if (rows !== p.numChanges) {
                throw changelogCorrupt(h, p.path, `its header counts ${p.numChanges} changes, its lines hold ${rows}`)
              }
              await c.run(`INSERT INTO ${VERSIONS} VALUES ($1, $2, $3, $4, $5)`, [
                h.id,
                ver,
                v(p.info.rows),
                v(p.info.chars),
                v(p.numChanges)
              ])
            }
            await c.run("COMMIT")
          } catch (e) {
            await c.run("ROLLBACK").catch(() => undefined)
            throw e
          }
        },
        toError(
          h.db.path,
          `Folding the changelog ${ps[0]!.path}${ps.length > 1 ? ` (and the next ${ps.length - 1})` : ""} of ${describeStore(h)} into the state database`,
          "Io",
          h.operatorId
        )
      )

    /** Folds the next committed version not in DuckDB yet, if any; whether there was one. */
    const foldNext = (h: Handle, background = false): Effect.Effect<boolean, StateStoreError> =>
      Effect.uninterruptible(
        h.foldLock.withPermits(1)(
          Effect.suspend(() => {
            if (background && h.paused) return Effect.succeed(false)
            if (h.foldError !== undefined) return Effect.fail(h.foldError)
            const batch: Array<PendingFold> = []
            for (let x = h.folded + 1; batch.length < FOLD_VERSIONS; x++) {
              const next = h.pending.get(x)
              if (next === undefined) break
              batch.push(next)
            }
            if (batch.length === 0) return Effect.succeed(false)
            return foldSome(h, batch).pipe(
              Effect.tapError((e) =>
                Effect.sync(() => {
                  h.foldError = e
                })
              ),
              Effect.andThen(
                Effect.sync(() => {
                  for (const p of batch) h.pending.delete(p.version)
                  h.folded = batch[batch.length - 1]!.version
                })
              ),
              // A changelog left behind (a failed removal, a kill) is removed at the next start.
              Effect.andThen(Effect.forEach(batch, (p) => Effect.ignore(fs.remove(p.path)), { discard: true })),
              Effect.as(true)
            )
          })
        )
      )

    /** Until `version` is in DuckDB: folds what is pending here (or waits for the fold under way). */
    const awaitFolded = (h: Handle, version: number): Effect.Effect<void, StateStoreError> =>
      Effect.gen(function* () {
        while (h.folded < version) {
          const folded = yield* foldNext(h)
          if (!folded && h.folded < version) {
            return yield* changelogCorrupt(h, changelogPath(h, h.folded + 1), "it is not known to this provider")
          }
        }
      })

    /** Starts folding in the background, apart from the commit path, unless a fold runs already. */
    const ensurePump = (h: Handle): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (h.pumping || h.paused || closed || h.foldError !== undefined || !h.pending.has(h.folded + 1)) {
          return Effect.void
        }
        h.pumping = true
        const pump = Effect.gen(function* () {
          while (yield* foldNext(h, true)) {
            /* the next one */
          }
        }).pipe(
          Effect.catch((e) =>
            Effect.logWarning(`Folding the state changelog of ${describeStore(h)} failed: ${e.message}`)
          ),
          Effect.ensuring(
            Effect.sync(() => {
              h.pumping = false
              h.pump = undefined
            })
          )
        )
        return Effect.map(Effect.forkIn(pump, scope, { uninterruptible: true }), (fiber) => {
          if (h.pumping) h.pump = fiber
        })
      })

    /** The store's handle; with a schema, registers the store on first use and checks the schema. */
    const handleFor = (
      id: StateStoreId,
      register: OpenSpec | undefined
    ): Effect.Effect<Handle | undefined, StateStoreError> =>
      Effect.gen(function* () {
        const db = yield* database(id.checkpoint, id.operatorId)
        const key = `${id.operatorId}\u0000${id.storeName}`
        let h = db.stores.get(key)
        if (h === undefined) {
          // One creation at a time per database, so two opens of a new store share one handle.
          h = yield* db.lock.withPermits(1)(
            Effect.suspend(() => {
              const again = db.stores.get(key)
              return again !== undefined ? Effect.succeed(again) : createHandle(db, id, register, key)
            })
          )
          if (h === undefined) return undefined
        }
        if (register !== undefined) {
          const proposed = encodeSchema(register.schema)
          // With the check off (spark.sql.streaming.stateStore.stateSchemaCheck=false) nothing is
          // remembered, so a later open with the check on still runs it.
          if (!h.acceptedSchemas.has(proposed) && register.checkSchema !== false) {
            const err = checkCompatibility(h.storedSchema, register.schema, {
              operatorId: h.operatorId,
              storeName: h.storeName,
              path: db.path
            })
            if (err !== undefined) return yield* err
            h.acceptedSchemas.add(proposed)
          }
        }
        return h
      })

    const versionNotFound = (h: Handle | StateStoreId, version: number, why: string, path?: string) => {
      const file = path ?? ("checkpoint" in h ? databasePath(h.checkpoint) : h.db.path)
      const older = /older than the retained/.test(why)
      return new StateStoreError({
        reason: "VersionNotFound",
        operatorId: h.operatorId,
        path: file,
        message:
          `Version ${version} of ${describeStore(h)} cannot be opened: ${why}. ` +
          (older
            ? `The state database ${file} keeps only the last spark.sql.streaming.minBatchesToRetain versions: read a later one.`
            : `The state database ${file} (with its write-ahead log ${file}.wal) does not hold it: one of them was deleted, replaced or damaged. Restore both from a backup, or start the query from a new checkpoint.`)
      })
    }

    /** Rows and size of a committed version, or the reason it cannot be opened. */
    const versionInfo = (h: Handle, version: number): Effect.Effect<VersionInfo, StateStoreError> => {
      if (version === -1) return Effect.succeed({ rows: 0, chars: 0 })
      if (version > h.latest) {
        return Effect.fail(versionNotFound(h, version, `the latest committed version is ${h.latest}`, h.db.path))
      }
      if (version < Math.max(h.baseVersion, h.pendingBase)) {
        return Effect.fail(
          versionNotFound(
            h,
            version,
            "it is older than the retained versions (spark.sql.streaming.minBatchesToRetain)",
            h.db.path
          )
        )
      }
      const pending = h.pending.get(version)
      if (pending !== undefined) return Effect.succeed(pending.info)
      const known = h.versions.get(version)
      if (known !== undefined) return Effect.succeed(known)
      return Effect.flatMap(
        use(
          h.conn,
          async (c) =>
            (
              await c.runAndReadAll(
                `SELECT num_rows, num_chars FROM ${VERSIONS} WHERE store_id = $1 AND version = $2`,
                [h.id, BigInt(version)]
              )
            ).getRowsJS()[0] as [bigint, bigint] | undefined,
          toError(h.db.path, `Reading version ${version} of ${describeStore(h)}`, "Io", h.operatorId)
        ),
        (row) => {
          if (row === undefined) return Effect.fail(versionNotFound(h, version, "it was never committed", h.db.path))
          const info = { rows: Number(row[0]), chars: Number(row[1]) }
          remember(h, version, info)
          return Effect.succeed(info)
        }
      )
    }

    const remember = (h: Handle, version: number, info: VersionInfo): void => {
      h.versions.set(version, info)
      if (h.versions.size > 8) {
        for (const v of h.versions.keys()) {
          if (h.versions.size <= 8) break
          h.versions.delete(v)
        }
      }
    }

    const pin = (h: Handle, version: number): void => {
      h.pins.set(version, (h.pins.get(version) ?? 0) + 1)
    }
    const unpin = (h: Handle, version: number): void => {
      const n = (h.pins.get(version) ?? 1) - 1
      if (n <= 0) h.pins.delete(version)
      else h.pins.set(version, n)
    }

    /** Every entry of a version, streamed into `each`. */
    const scanVersion = (
      h: Handle,
      conn: Conn,
      version: number,
      each: (key: string, value: string) => void
    ): Effect.Effect<void, StateStoreError> =>
      version === -1
        ? Effect.void
        : use(
            conn,
            (c) => rowsOf(c, versionSql(h, false), [BigInt(version)], [BIGINT], (k, v) => each(k, v as string)),
            toError(h.db.path, `Reading version ${version} of ${describeStore(h)}`, "Io", h.operatorId)
          )

    /** `scanVersion` once the version is folded into DuckDB. */
    const readVersion = (
      h: Handle,
      conn: Conn,
      version: number,
      each: (key: string, value: string) => void
    ): Effect.Effect<void, StateStoreError> => Effect.andThen(awaitFolded(h, version), scanVersion(h, conn, version, each))

    const maintenance = MaintenanceScheduler.make<Handle>({
      everyCommits: maintenanceEvery,
      scope,
      isClosed: () => closed,
      what: "compaction",
      run: (h) => compact(h)
    })
    const scheduleMaintenance = maintenance.schedule

    const open = (spec: OpenSpec): Effect.Effect<StateStore, StateStoreError> =>
      Effect.gen(function* () {
        const h = yield* beginOpen(spec, closed, closedError, () => Effect.map(handleFor(spec, spec), (found) => found!))
        const version = spec.version
        pin(h, version)
        let released = false
        const release = () => {
          if (released) return
          released = true
          h.writer = false
          unpin(h, version)
        }
        const prepared = Effect.gen(function* () {
          h.minBatchesToRetain = spec.minBatchesToRetain
          h.paused = false
          if (h.foldError !== undefined) return yield* h.foldError
          const info = yield* versionInfo(h, version)
          let preloaded = 0
          const cache = h.cache
          if (cache.version !== version) {
            if (info.rows === 0) cache.reset(version, true)
            else if (ENTRY_OVERHEAD_BYTES * info.rows + 2 * info.chars <= cacheMaxBytes) {
              // The whole version fits: load it once; reads then never reach DuckDB.
              cache.reset(version, true)
              yield* Effect.onError(
                readVersion(h, h.conn, version, (k, v) => {
                  cache.set(k, v)
                  preloaded++
                }),
                () => Effect.sync(() => cache.reset(-2, false))
              )
            } else cache.reset(version, false)
          }
          return { info, preloaded }
        })
        const { info, preloaded } = yield* Effect.onError(prepared, () => Effect.sync(release))
        const cache = h.cache
        /** Values read for this batch (pinned: the cache may evict them meanwhile); `null`: absent. */
        const loaded = new Map<string, string | null>()
        let hits = 0
        let misses = 0
        let loadMs = 0

        const load = (keys: ReadonlyArray<string>): Effect.Effect<void, StateStoreError> =>
          Effect.suspend(() => {
            if (cache.complete) {
              hits += keys.length
              return Effect.void
            }
            const missing: Array<string> = []
            for (const k of keys) {
              if (loaded.has(k)) continue
              const c = cache.touch(k)
              if (c !== undefined) {
                loaded.set(k, c)
                hits++
              } else {
                loaded.set(k, null)
                missing.push(k)
              }
            }
            if (missing.length === 0) return Effect.void
            misses += missing.length
            const t0 = performance.now()
            const query = use(
              h.conn,
              (c) =>
                rowsOf(c, versionSql(h, true), [listValue(missing), BigInt(version)], [LIST(VARCHAR), BIGINT], (k, v) =>
                  loaded.set(k, v)
                ),
              toError(h.db.path, `Reading keys of ${describeStore(h)}`, "Io", h.operatorId)
            )
            return Effect.andThen(awaitFolded(h, version), query).pipe(
              Effect.tap(() =>
                Effect.sync(() => {
                  loadMs += performance.now() - t0
                  for (const k of missing) cache.set(k, loaded.get(k) ?? null)
                })
              ),
              Effect.onError(() =>
                Effect.sync(() => {
                  for (const k of missing) loaded.delete(k)
                })
              )
            )
          })

        const persist = (batch: CommitBatch): Effect.Effect<void, StateStoreError> =>
          Effect.gen(function* () {
            if (closed) return yield* closedError(h)
            if (h.latest !== version) {
              return yield* new StateStoreError({
                reason: "InvalidUsage",
                operatorId: h.operatorId,
                message:
                  `${describeStore(h)} was opened at version ${version} but version ${h.latest} exists: ` +
                  `call rollbackTo(${version}) to discard the later versions before committing on top of ${version}.`
              })
            }
            if (h.foldError !== undefined) return yield* h.foldError
            // Folding keeps up, or the commit waits for it: at most MAX_PENDING versions unfolded.
            if (h.pending.size >= MAX_PENDING) yield* awaitFolded(h, h.latest - MAX_PENDING + 1)
            const path = changelogPath(h, batch.version)
            const failed = (cause: unknown) =>
              new StateStoreError({
                reason: "CommitFailed",
                operatorId: h.operatorId,
                path,
                cause,
                message: `The commit of version ${batch.version} of ${describeStore(h)} failed: ${message(cause)}`
              })
            const info = { rows: batch.numRows, chars: batch.numChars }
            const { text, lines } = encodeChangelog(
              {
                version: batch.version,
                numRows: batch.numRows,
                numChars: batch.numChars,
                numChanges: batch.changes.length
              },
              batch.changes
            )
            const hook = options.hooks?.beforeCommitPublish
            if (hook !== undefined) {
              yield* Effect.mapError(hook({ operatorId: h.operatorId, storeName: h.storeName, version: batch.version }), failed)
            }
            // The commit: the changelog, written atomically with its checksum. DuckDB gets the
            // changes later, apart from the commit path.
            yield* Effect.uninterruptible(
              Effect.andThen(
                Effect.mapError(fs.writeAtomic(path, text, true), failed),
                Effect.sync(() => {
                  h.latest = batch.version
                  h.pending.set(batch.version, { version: batch.version, path, lines, info, numChanges: batch.changes.length })
                  remember(h, batch.version, info)
                })
              )
            )
            if (cache.version === version) {
              // Complete, the cache is the committed version: each change's old value is known.
              if (cache.complete) {
                const { changes, befores } = batch
                for (let j = 0; j < changes.length; j++) cache.replace(changes[j][0], befores[j], changes[j][1])
              } else for (const [k, val] of batch.changes) cache.set(k, val)
              cache.version = batch.version
            }
            yield* ensurePump(h)
            h.commitsSinceMaintenance++
            yield* scheduleMaintenance(h)
          })

        return makeSession({
          operatorId: h.operatorId,
          storeName: h.storeName,
          version,
          numRows: info.rows,
          numChars: info.chars,
          lookup: (key) => {
            if (cache.complete) return cache.peek(key) ?? undefined
            const v = loaded.get(key)
            return v === undefined ? NOT_LOADED : v === null ? undefined : v
          },
          load,
          scan: () =>
            cache.complete
              ? // While complete the cache holds no absent markers: it is exactly the version.
                Effect.succeed(cache.entries as ReadonlyMap<string, string>)
              : Effect.suspend(() => {
                  const all = new Map<string, string>()
                  return Effect.as(
                    readVersion(h, h.conn, version, (k, v) => all.set(k, v)),
                    all
                  )
                }),
          persist,
          release,
          memoryBytes: () => cache.bytes,
          numRowsLoaded: () => preloaded + misses,
          customMetrics: () => ({
            cacheHitCount: hits,
            cacheMissCount: misses,
            cachedKeys: cache.entries.size,
            cacheComplete: cache.complete ? 1 : 0,
            loadTimeMs: loadMs
          })
        })
      })

    /** Folds the log at or below the compaction target into the base table. */
    const compact = (h: Handle): Effect.Effect<void, StateStoreError> =>
      h.maintLock.withPermits(1)(
        Effect.gen(function* () {
          h.commitsSinceMaintenance = 0
          // Only what is folded into DuckDB can be compacted: the folds up to the target first.
          yield* awaitFolded(h, h.latest - h.minBatchesToRetain)
          let target = Math.min(h.latest - h.minBatchesToRetain, h.folded)
          for (const v of h.pins.keys()) if (v < target) target = v
          // Each compaction scans the base table once, whatever it folds, so it waits until it can
          // fold half a retention's worth of batches: the log stays under 1.5 x minBatchesToRetain
          // batches and the base is scanned once per minBatchesToRetain / 2 commits.
          if (target - h.baseVersion < Math.max(1, Math.ceil(h.minBatchesToRetain / 2))) return yield* checkpoint(h)
          // Published before the first await, so no store opens below it from now on.
          h.pendingBase = target
          const t = BigInt(target)
          yield* use(
            h.db.maint,
            async (c) => {
              await c.run("BEGIN TRANSACTION")
              try {
                await c.run(
                  `CREATE OR REPLACE TEMP TABLE tributary_compact AS
                   SELECT key, value FROM ${h.log} WHERE version <= $1
                   QUALIFY row_number() OVER (PARTITION BY key ORDER BY version DESC) = 1`,
                  [t]
                )
                await c.run(`DELETE FROM ${h.base} WHERE key IN (SELECT key FROM temp.tributary_compact)`)
                await c.run(
                  `INSERT INTO ${h.base} SELECT key, value FROM temp.tributary_compact WHERE value IS NOT NULL`
                )
                await c.run(`DELETE FROM ${h.log} WHERE version <= $1`, [t])
                await c.run(`UPDATE ${STORES} SET base_version = $1 WHERE store_id = $2`, [t, h.id])
                await c.run(`DELETE FROM ${VERSIONS} WHERE store_id = $1 AND version < $2`, [h.id, t])
                await c.run("COMMIT")
              } catch (e) {
                await c.run("ROLLBACK").catch(() => undefined)
                throw e
              } finally {
                await c.run("DROP TABLE IF EXISTS temp.tributary_compact").catch(() => undefined)
              }
            },
            toError(h.db.path, `Compacting ${describeStore(h)}`, "Io", h.operatorId)
          ).pipe(
            Effect.onError(() =>
              Effect.sync(() => {
                h.pendingBase = h.baseVersion
              })
            )
          )
          h.baseVersion = target
          for (const v of h.versions.keys()) if (v < target) h.versions.delete(v)
          yield* checkpoint(h)
        })
      )

    /**
     * Writes the write-ahead log into the database file here, off the commit path: otherwise the
     * commit that pushes the log past DuckDB's `wal_autocheckpoint` pays for the checkpoint.
     */
    const checkpoint = (h: Handle): Effect.Effect<void, StateStoreError> =>
      use(
        h.db.maint,
        async (c) => {
          try {
            await c.run("CHECKPOINT")
          } catch (e) {
            // DuckDB refuses while another connection is inside a transaction (a commit): the
            // next maintenance tries again, and DuckDB's own wal_autocheckpoint is the backstop.
            if (!/cannot checkpoint/i.test(message(e))) throw e
          }
        },
        toError(h.db.path, "Checkpointing the state database", "Io", h.operatorId)
      )

    const rollbackTo = (spec: VersionSpec): Effect.Effect<void, StateStoreError> =>
      Effect.gen(function* () {
        const invalid = validateSpec(spec)
        if (invalid !== undefined) return yield* invalid
        if (closed) return yield* closedError(spec)
        const h = yield* handleFor(spec, undefined)
        if (h === undefined) {
          if (spec.version === -1) return
          return yield* versionNotFound(spec, spec.version, "the store has no committed versions")
        }
        if (h.writer) {
          return yield* new StateStoreError({
            reason: "InvalidUsage",
            operatorId: h.operatorId,
            message: `rollbackTo(${spec.version}) while ${describeStore(h)} is open: commit or abort it first.`
          })
        }
        yield* h.maintLock.withPermits(1)(
          Effect.gen(function* () {
            if (spec.version > h.latest) {
              return yield* versionNotFound(h, spec.version, `the latest committed version is ${h.latest}`, h.db.path)
            }
            if (spec.version < h.baseVersion) {
              return yield* versionNotFound(h, spec.version, "it is older than the retained versions", h.db.path)
            }
            if (spec.version === h.latest) return
            // The later versions go from DuckDB, so they are folded first (their changelogs go then).
            yield* awaitFolded(h, h.latest)
            const v = BigInt(spec.version)
            yield* use(
              h.conn,
              async (c) => {
                await c.run("BEGIN TRANSACTION")
                try {
                  await c.run(`DELETE FROM ${h.log} WHERE version > $1`, [v])
                  await c.run(`DELETE FROM ${VERSIONS} WHERE store_id = $1 AND version > $2`, [h.id, v])
                  await c.run("COMMIT")
                } catch (e) {
                  await c.run("ROLLBACK").catch(() => undefined)
                  throw e
                }
              },
              toError(h.db.path, `Rolling back ${describeStore(h)} to version ${spec.version}`, "Io", h.operatorId)
            )
            h.latest = spec.version
            h.folded = spec.version
            for (const x of h.versions.keys()) if (x > spec.version) h.versions.delete(x)
            if (h.cache.version > spec.version) h.cache.reset(-2, false)
          })
        )
      })

    const read = (spec: VersionSpec): Effect.Effect<ReadonlyArray<readonly [string, unknown]>, StateStoreError> =>
      Effect.gen(function* () {
        const invalid = validateSpec(spec)
        if (invalid !== undefined) return yield* invalid
        if (closed) return yield* closedError(spec)
        const h = yield* handleFor(spec, undefined)
        if (h === undefined) {
          if (spec.version === -1) return []
          return yield* versionNotFound(spec, spec.version, "the store has no committed versions")
        }
        // Pinned before the version is checked, so compaction cannot pass it meanwhile.
        pin(h, spec.version)
        return yield* Effect.ensuring(
          Effect.gen(function* () {
            yield* versionInfo(h, spec.version)
            const out: Array<readonly [string, unknown]> = []
            if (h.cache.version === spec.version && h.cache.complete) {
              for (const [k, v] of h.cache.entries) if (v !== null) out.push([k, JSON.parse(v)])
              return out
            }
            yield* readVersion(h, h.db.admin, spec.version, (k, v) => out.push([k, JSON.parse(v)]))
            return out
          }),
          Effect.sync(() => unpin(h, spec.version))
        )
      })

    const latestVersion = (id: StateStoreId): Effect.Effect<number, StateStoreError> =>
      Effect.gen(function* () {
        const invalid = validateSpec({ ...id, version: -1 })
        if (invalid !== undefined) return yield* invalid
        if (closed) return yield* closedError(id)
        const h = yield* handleFor(id, undefined)
        return h === undefined ? -1 : h.latest
      })

    const maintain = (): Effect.Effect<void, StateStoreError> =>
      Effect.suspend(() =>
        closed
          ? Effect.void
          : Effect.forEach(
              [...databases.values()].flatMap((db) => [...db.stores.values()]),
              (h) => compact(h),
              { discard: true }
            )
      )

    /**
     * Folds every committed changelog of the database's stores into DuckDB (a fold that fails
     * leaves its changelog for the next start); the folder of each store left with none goes,
     * then the folders above it if they are empty (a store this provider never opened keeps its
     * files for the start that opens it).
     */
    const foldAll = (db: Database): Effect.Effect<void> =>
      Effect.gen(function* () {
        const done: Array<string> = []
        for (const h of db.stores.values()) {
          const exit = yield* Effect.exit(awaitFolded(h, h.latest))
          if (exit._tag === "Failure") {
            yield* Effect.logWarning(`Folding the state changelogs of ${describeStore(h)} failed; the next start folds them`)
          } else if (h.pending.size === 0) done.push(h.changelogDir)
        }
        const root = changelogRoot(db)
        yield* Effect.promise(async () => {
          for (const dir of done) {
            await nodeFs.rm(dir, { recursive: true, force: true }).catch(() => undefined)
            // Only empty folders go (rmdir refuses the others).
            for (let up = nodePath.dirname(dir); up.startsWith(root); up = nodePath.dirname(up)) {
              if (!(await nodeFs.rmdir(up).then(() => true, () => false))) break
            }
          }
        })
      })

    /** Closes one database of this provider (after its background compactions) and forgets it. */
    const closeDatabase = (db: Database): Effect.Effect<void> =>
      Effect.gen(function* () {
        const running = [...db.stores.values()].flatMap((h) => (h.maintenance === undefined ? [] : [h.maintenance]))
        yield* Fiber.awaitAll(running)
        // Wait for any statement still running on a connection, then close it.
        for (const c of db.conns) yield* c.lock.withPermits(1)(Effect.sync(() => c.raw.closeSync()))
        yield* Effect.sync(() => {
          db.instance.closeSync()
          held.delete(db.path)
          databases.delete(db.root)
        })
      })

    const discard = (checkpoint: string): Effect.Effect<void, StateStoreError> => {
      const root = nodePath.resolve(checkpoint)
      const path = nodePath.join(root, "state", "state.duckdb")
      return registry.withPermits(1)(
        Effect.uninterruptible(
          Effect.gen(function* () {
            if (closed) return yield* new StateStoreError({ reason: "InvalidUsage", message: "The state store provider is closed." })
            const db = databases.get(root)
            if (db !== undefined) {
              const open = [...db.stores.values()].find((h) => h.writer || h.pins.size > 0)
              if (open !== undefined) {
                return yield* new StateStoreError({
                  reason: "InvalidUsage",
                  operatorId: open.operatorId,
                  path,
                  message: `The state database ${path} cannot be discarded while ${describeStore(open)} is open or read.`
                })
              }
              yield* closeDatabase(db)
            } else if (held.has(path)) {
              return yield* new StateStoreError({
                reason: "InvalidUsage",
                path,
                message: `The state database ${path} is in use by another state store provider of this process: stop the query using it first.`
              })
            }
            // The database and its write-ahead log; a database half created by a killed run
            // cannot even be opened, so the files go without being read.
            yield* Effect.tryPromise({
              try: async () => {
                for (const p of [path, `${path}.wal`]) await nodeFs.rm(p, { force: true })
                await nodeFs.rm(`${path}.changelog`, { recursive: true, force: true })
              },
              catch: (cause) =>
                new StateStoreError({
                  reason: "Io",
                  path,
                  cause,
                  message: `Could not delete the uncommitted state database ${path}: ${message(cause)}. Delete it (and ${path}.wal) by hand, then restart the query.`
                })
            })
          })
        )
      )
    }

    /**
     * A query stopped: the fold under way (if any) and compaction finish, and no fold starts
     * again until the store is opened — so nothing writes into the checkpoint meanwhile. The
     * committed changelogs still waiting stay beside the database (they are commits; a read, a
     * close of the provider or the next start folds them), so a stop never waits for them.
     */
    const settle = (checkpoint: string): Effect.Effect<void> =>
      Effect.gen(function* () {
        const db = databases.get(nodePath.resolve(checkpoint))
        if (db === undefined) return
        for (const h of db.stores.values()) h.paused = true
        yield* Fiber.awaitAll(maintenance.running(db.stores.values()))
        for (const h of db.stores.values()) {
          yield* h.foldLock.withPermits(1)(Effect.void)
          if (h.pump !== undefined) yield* Fiber.await(h.pump)
        }
      })

    const close = (): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (closed) return
        closed = true
        // Waits for a database being opened right now (later opens see `closed`).
        yield* registry.withPermits(1)(Effect.void)
        const all = [...databases.values()]
        const running = all.flatMap((db) => maintenance.running(db.stores.values()))
        yield* Fiber.awaitAll(running)
        for (const db of all) yield* foldAll(db)
        for (const db of all) {
          // Wait for any statement still running on a connection, then close it.
          for (const c of db.conns) yield* c.lock.withPermits(1)(Effect.sync(() => c.raw.closeSync()))
          yield* Effect.sync(() => {
            db.instance.closeSync()
            held.delete(db.path)
          })
        }
        databases.clear()
      })

    yield* Effect.addFinalizer(() => close())
    const provider: StateStoreProvider = {
      name: "duckdb",
      open,
      rollbackTo,
      read,
      latestVersion,
      maintain,
      discard,
      settle,
      close
    }
    return provider
  })

/** A JS number as a DuckDB BIGINT parameter. */
const v = (n: number): bigint => BigInt(n)

/**
 * The DuckDB provider as the session's `StateStoreProviderService`.
 *
 * @since 0.1.0
 */
export const layer = (options: DuckDBProviderOptions = {}): Layer.Layer<StateStoreProviderService> =>
  Layer.effect(StateStoreProviderService, make(options))
