/**
 * The file state store provider (`"memory"`): Spark's `HDFSBackedStateStoreProvider` design.
 * Each store's state lives in an in-memory map; each commit writes the batch's changes as one
 * delta file, and maintenance writes periodic snapshot files and removes what retention no
 * longer needs.
 *
 * ```
 * <checkpoint>/state/<operatorId>/0/                 the "default" store (partition 0)
 * <checkpoint>/state/<operatorId>/0/<storeName>/     any other store (e.g. a join's four)
 *     _metadata/schema                               key and value schemas, checked on open
 *     <version>.delta                                the changes of batch <version>
 *     <version>.snapshot                             every entry of version <version>
 * ```
 *
 * Versions are batch ids (Spark's store versions are batch id + 1; here version -1 is the empty
 * state before batch 0). Every file is written atomically (temporary file, then rename) and
 * carries a SHA-256 checksum (`StateFileFormat.ts`), so a corrupt or truncated file fails the
 * open with a `Corrupt` error that names it. Deltas and snapshots are binary (format 2: Spark's
 * key size, key, value size, value entries, the values in `StateCodec.ts`'s encoding, which is
 * also what the in-memory maps hold); files of format 1 (text, from earlier versions) are still
 * read, and a file of a later format fails with `Corrupt` naming it.
 *
 * Differences from Spark, on purpose: a commit applies its changes to the latest version's map
 * in place instead of copying the whole map per version (Spark's `loadedMaps` copy), so commit
 * cost follows the batch, not the state; older versions opened or read are rebuilt from files and
 * kept in a small cache (`maxVersionsInMemory`, Spark's
 * `spark.sql.streaming.maxBatchesToRetainInMemory`).
 *
 * @since 0.1.0
 */
import { Buffer } from "node:buffer"
import { Effect, Fiber, Layer, type Scope, Semaphore } from "effect"
import type { CheckpointFileSystem } from "../core/CheckpointFileSystem.ts"
import { type CheckpointError, StateStoreError } from "../core/Errors.ts"
import { ENTRY_OVERHEAD_BYTES } from "./KeyCache.ts"
import * as MaintenanceScheduler from "./MaintenanceScheduler.ts"
import { NodeCheckpointFileSystem } from "./NodeCheckpointFileSystem.ts"
import { BinaryValueCodec } from "./StateCodec.ts"
import { applyStateFile, BinaryFrameWriter, encodeBinaryDelta, frame, unframe } from "./StateFileFormat.ts"
import { checkCompatibility, decodeSchema, encodeSchema } from "./StateSchemaCompatibility.ts"
import {
  beginOpen,
  describeStore,
  type OpenSpec,
  type StateStore,
  type StateStoreHooks,
  type StateStoreId,
  type StateStoreProvider,
  StateStoreProviderService,
  validateSpec,
  type VersionSpec
} from "./StateStore.ts"
import { type CommitBatch, makeSession } from "./StateStoreSession.ts"

/**
 * Options of the file provider.
 *
 * @since 0.1.0
 */
export interface FileProviderOptions {
  /** Where files are written (`node:fs` by default; tests inject failures through it). */
  readonly fs?: CheckpointFileSystem | undefined
  /** `spark.sql.streaming.stateStore.minDeltasForSnapshot` (default 10): deltas since the last snapshot before maintenance writes one. */
  readonly minDeltasForSnapshot?: number | undefined
  /** `spark.sql.streaming.maxBatchesToRetainInMemory` (default 2): versions kept in memory per store, the latest included. */
  readonly maxVersionsInMemory?: number | undefined
  /** Background maintenance after this many commits of a store (default 10; 0: only when `maintain` is called). */
  readonly maintenanceEveryCommits?: number | undefined
  /** Entries a snapshot handles between yields to other fibers (default 20,000), so commits go on meanwhile. */
  readonly snapshotChunkSize?: number | undefined
  readonly hooks?: StateStoreHooks | undefined
}

interface Loaded {
  version: number
  readonly map: Map<string, string>
  /** Characters of every key and value, for the memory estimate. */
  chars: number
}

interface Handle {
  readonly operatorId: number
  readonly storeName: string
  readonly dir: string
  /** Canonical schema texts already accepted for this store. */
  readonly acceptedSchemas: Set<string>
  listed: boolean
  readonly deltas: Set<number>
  readonly snapshots: Set<number>
  latest: number
  /** The latest version's map; commits change it in place. */
  current: Loaded | undefined
  /** Older versions rebuilt for `open` or `read`, least recently used first. */
  readonly older: Map<number, Loaded>
  writer: boolean
  minBatchesToRetain: number
  commitsSinceMaintenance: number
  maintenance: Fiber.Fiber<void, never> | undefined
  /**
   * While a snapshot of `current` is being written: the value at the snapshot's version of each
   * key a commit has changed since (`undefined`: absent then). Commits fill it in.
   */
  snapshotting: Map<string, string | undefined> | undefined
  /** Serialises file listing, rebuilding, maintenance and rollback of this store. */
  readonly lock: Semaphore.Semaphore
}

const FILE = /^(\d+)\.(delta|snapshot)$/

/** The largest version in the sets, -1 when they are empty. */
const maxVersion = (...sets: ReadonlyArray<ReadonlySet<number>>): number => {
  let m = -1
  for (const set of sets) for (const v of set) if (v > m) m = v
  return m
}

const mapBytes = (l: Loaded | undefined): number =>
  l === undefined ? 0 : 2 * l.chars + ENTRY_OVERHEAD_BYTES * l.map.size

/**
 * Makes a file provider; closing the scope closes it (after background maintenance finishes).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { FileStateStoreProvider } from "../state/mod.ts" // inside the repository: state/ is not a package entry point
 * const provider = FileStateStoreProvider.make({ minDeltasForSnapshot: 10 }) // Effect<StateStoreProvider, never, Scope>
 * ```
 * @since 0.1.0
 */
export const make = (options: FileProviderOptions = {}): Effect.Effect<StateStoreProvider, never, Scope.Scope> =>
  Effect.gen(function* () {
    const fs = options.fs ?? NodeCheckpointFileSystem
    const minDeltasForSnapshot = Math.max(1, options.minDeltasForSnapshot ?? 10)
    const maxOlder = Math.max(0, (options.maxVersionsInMemory ?? 2) - 1)
    const maintenanceEvery = options.maintenanceEveryCommits ?? 10
    const chunk = Math.max(1, options.snapshotChunkSize ?? 20_000)
    const scope = yield* Effect.scope
    const handles = new Map<string, Handle>()
    let closed = false

    const io =
      (h: { readonly operatorId: number }, what: string) =>
      (e: CheckpointError): StateStoreError =>
        // A file that fails its checksum is corrupt, not unreadable.
        e.reason === "Corrupt"
          ? new StateStoreError({
              reason: "Corrupt",
              operatorId: h.operatorId,
              path: e.path,
              message: e.message,
              cause: e
            })
          : new StateStoreError({
              reason: "Io",
              operatorId: h.operatorId,
              path: e.path,
              message: `Could not ${what}: ${e.message}`,
              cause: e
            })

    const handleFor = (id: StateStoreId): Handle => {
      const root = fs.resolve(id.checkpoint)
      const key = `${root}\u0000${id.operatorId}\u0000${id.storeName}`
      let h = handles.get(key)
      if (h === undefined) {
        const base = fs.join(root, "state", String(id.operatorId), "0")
        h = {
          operatorId: id.operatorId,
          storeName: id.storeName,
          // Spark: the default store sits in the partition folder, other stores in a subfolder.
          dir: id.storeName === "default" ? base : fs.join(base, id.storeName),
          acceptedSchemas: new Set(),
          listed: false,
          deltas: new Set(),
          snapshots: new Set(),
          latest: -1,
          current: undefined,
          older: new Map(),
          writer: false,
          minBatchesToRetain: 100,
          commitsSinceMaintenance: 0,
          maintenance: undefined,
          snapshotting: undefined,
          lock: Semaphore.makeUnsafe(1)
        }
        handles.set(key, h)
      }
      return h
    }

    /** Bytes through the file system (as Latin-1 text, one character a byte, for one without byte calls). */
    const readBytes = (path: string): Effect.Effect<Uint8Array | undefined, CheckpointError> =>
      fs.readBytes !== undefined
        ? fs.readBytes(path)
        : Effect.map(fs.readText(path), (t) => (t === undefined ? undefined : Buffer.from(t, "latin1")))
    const writeBytes = (path: string, data: Buffer, overwrite: boolean): Effect.Effect<boolean, CheckpointError> =>
      fs.writeAtomicBytes !== undefined
        ? fs.writeAtomicBytes(path, data, overwrite)
        : fs.writeAtomic(path, data.toString("latin1"), overwrite)
    /** A format-1 file's value (JSON text) as its binary encoding. */
    const fromJson = (json: string): string => {
      const v = BinaryValueCodec.encode(JSON.parse(json))
      if (v === undefined) throw new Error("unrepresentable value")
      return v
    }

    const fileOf = (h: Handle, version: number, kind: "delta" | "snapshot") => fs.join(h.dir, `${version}.${kind}`)

    const list = (h: Handle): Effect.Effect<void, StateStoreError> =>
      h.listed
        ? Effect.void
        : Effect.map(
            Effect.mapError(fs.list(h.dir), io(h, `list the state folder of ${describeStore(h)}`)),
            (names) => {
              for (const n of names) {
                const m = FILE.exec(n)
                if (m === null) continue
                ;(m[2] === "delta" ? h.deltas : h.snapshots).add(Number(m[1]))
              }
              h.latest = maxVersion(h.deltas, h.snapshots)
              h.listed = true
            }
          )

    const checkSchema = (h: Handle, spec: OpenSpec): Effect.Effect<void, StateStoreError> => {
      const proposed = encodeSchema(spec.schema)
      if (h.acceptedSchemas.has(proposed)) return Effect.void
      const path = fs.join(h.dir, "_metadata", "schema")
      return Effect.gen(function* () {
        let text = yield* Effect.mapError(fs.readText(path), io(h, "read the state schema"))
        if (text === undefined) {
          const written = yield* Effect.mapError(
            fs.writeAtomic(path, frame("schema", [proposed]), false),
            io(h, "write the state schema")
          )
          if (written) {
            h.acceptedSchemas.add(proposed)
            return
          }
          text = yield* Effect.mapError(fs.readText(path), io(h, "read the state schema"))
          if (text === undefined) {
            return yield* new StateStoreError({
              reason: "Io",
              operatorId: h.operatorId,
              path,
              message: `The state schema ${path} vanished while it was written.`
            })
          }
        }
        const lines = unframe("schema", text, path, h.operatorId)
        if (lines instanceof StateStoreError) return yield* lines
        const stored = lines.length === 1 ? decodeSchema(lines[0]) : undefined
        if (stored === undefined) {
          return yield* new StateStoreError({
            reason: "Corrupt",
            operatorId: h.operatorId,
            path,
            message: `The state schema file ${path} does not hold a key and value schema.`
          })
        }
        // With the check off (spark.sql.streaming.stateStore.stateSchemaCheck=false) nothing is
        // remembered, so a later open with the check on still runs it.
        if (spec.checkSchema === false) return
        if (lines[0] !== proposed) {
          const err = checkCompatibility(stored, spec.schema, {
            operatorId: h.operatorId,
            storeName: h.storeName,
            path
          })
          if (err !== undefined) return yield* err
        }
        h.acceptedSchemas.add(proposed)
      })
    }

    const versionNotFound = (h: Handle, version: number, why: string) =>
      new StateStoreError({
        reason: "VersionNotFound",
        operatorId: h.operatorId,
        path: version > h.latest ? fileOf(h, version, "delta") : h.dir,
        message:
          `Version ${version} of ${describeStore(h)} cannot be opened: ${why}. ` +
          (version > h.latest
            ? `Its state file ${fileOf(h, version, "delta")} is missing from ${h.dir}, with any of versions ${h.latest + 1} to ${version}: restore the folder from a backup, or start the query from a new checkpoint.`
            : `The state folder ${h.dir} keeps only the last spark.sql.streaming.minBatchesToRetain versions: read a later one.`)
      })

    /** Rebuilds `version` from its files: the latest snapshot at or below it, then the deltas after it. */
    const rebuild = (h: Handle, version: number): Effect.Effect<Loaded, StateStoreError> =>
      Effect.gen(function* () {
        const map = new Map<string, string>()
        if (version === -1) return { version, map, chars: 0 }
        if (!h.deltas.has(version) && !h.snapshots.has(version)) {
          return yield* versionNotFound(
            h,
            version,
            version > h.latest
              ? `the latest committed version is ${h.latest}`
              : `it is older than the retained versions (spark.sql.streaming.minBatchesToRetain)`
          )
        }
        let from = -1
        for (const s of h.snapshots) if (s <= version && s > from) from = s
        const read = (v: number, kind: "delta" | "snapshot") =>
          Effect.gen(function* () {
            const path = fileOf(h, v, kind)
            const data = yield* Effect.mapError(readBytes(path), io(h, `read ${path}`))
            if (data === undefined) {
              return yield* new StateStoreError({
                reason: "Corrupt",
                operatorId: h.operatorId,
                path,
                message: `The state file ${path}, needed for version ${version} of ${describeStore(h)}, is missing: restore it from a backup, or start the query from a new checkpoint.`
              })
            }
            const n = applyStateFile(kind, data, path, map, fromJson, h.operatorId)
            if (n instanceof StateStoreError) return yield* n
          })
        if (from >= 0) yield* read(from, "snapshot")
        for (let v = from + 1; v <= version; v++) {
          if (!h.deltas.has(v)) {
            const path = fileOf(h, v, "delta")
            return yield* new StateStoreError({
              reason: "Corrupt",
              operatorId: h.operatorId,
              path,
              message: `The state file ${path}, needed for version ${version} of ${describeStore(h)}, is missing: restore it from a backup, or start the query from a new checkpoint.`
            })
          }
          yield* read(v, "delta")
        }
        let chars = 0
        for (const [k, v] of map) chars += k.length + v.length
        return { version, map, chars }
      })

    /** The map of `version`, from memory or rebuilt; `hit` says which. */
    const mapOf = (h: Handle, version: number): Effect.Effect<{ loaded: Loaded; hit: boolean }, StateStoreError> => {
      if (h.current?.version === version) return Effect.succeed({ loaded: h.current, hit: true })
      const old = h.older.get(version)
      if (old !== undefined) {
        h.older.delete(version)
        h.older.set(version, old)
        return Effect.succeed({ loaded: old, hit: true })
      }
      return h.lock.withPermits(1)(
        Effect.map(rebuild(h, version), (loaded) => {
          if (version === h.latest) h.current = loaded
          else if (maxOlder > 0) {
            h.older.set(version, loaded)
            for (const v of h.older.keys()) {
              if (h.older.size <= maxOlder) break
              h.older.delete(v)
            }
          }
          return { loaded, hit: false }
        })
      )
    }

    const closedError = (id: { readonly operatorId: number }) =>
      new StateStoreError({
        reason: "InvalidUsage",
        operatorId: id.operatorId,
        message: "The state store provider is closed."
      })

    /**
     * The snapshot file of `cur` at its current version, written in chunks so commits can run in
     * between. Commits change the map in place meanwhile; they record the values they replace in
     * `h.snapshotting` (copy-on-write, without copying the map). Entries are written straight
     * from the map; a key changed since the snapshot began is written from `h.snapshotting`
     * instead, at the end. A key the walk wrote before a commit changed it is written twice, both
     * times with its value at the snapshot's version: a reader keeps the last, so the file holds
     * exactly that version.
     */
    const snapshotBytes = (h: Handle, cur: Loaded): Effect.Effect<Buffer> =>
      Effect.gen(function* () {
        const before = new Map<string, string | undefined>()
        h.snapshotting = before
        const w = new BinaryFrameWriter("snapshot")
        let n = 0
        // A Map iterator survives changes to the map between steps: changed keys come below.
        for (const [k, v] of cur.map) {
          if (!before.has(k)) w.add(k, v)
          if (++n % chunk === 0) yield* Effect.yieldNow
        }
        h.snapshotting = undefined
        // Keys changed since the snapshot's version take their value from then.
        for (const [k, old] of before) if (old !== undefined) w.add(k, old)
        return w.finish()
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            h.snapshotting = undefined
          })
        )
      )

    const maintainHandle = (h: Handle): Effect.Effect<void, StateStoreError> =>
      h.lock.withPermits(1)(
        Effect.gen(function* () {
          h.commitsSinceMaintenance = 0
          let lastSnapshot = -1
          for (const s of h.snapshots) if (s > lastSnapshot) lastSnapshot = s
          const cur = h.current
          if (cur !== undefined && cur.version === h.latest && cur.version - lastSnapshot >= minDeltasForSnapshot) {
            const version = cur.version
            const data = yield* snapshotBytes(h, cur)
            yield* Effect.mapError(writeBytes(fileOf(h, version, "snapshot"), data, true), io(h, "write a snapshot"))
            h.snapshots.add(version)
          }
          // Spark's cleanup: keep what rebuilding `latest - minBatchesToRetain` needs, delete older files.
          const earliest = h.latest - h.minBatchesToRetain
          let keepFrom = -1
          for (const s of h.snapshots) if (s <= earliest && s > keepFrom) keepFrom = s
          if (keepFrom <= 0) return
          for (const set of [h.deltas, h.snapshots] as const) {
            const kind = set === h.deltas ? "delta" : "snapshot"
            for (const v of [...set].filter((x) => x < keepFrom).sort((a, b) => a - b)) {
              yield* Effect.mapError(fs.remove(fileOf(h, v, kind)), io(h, "remove an old state file"))
              set.delete(v)
            }
          }
          for (const v of h.older.keys()) if (v < keepFrom) h.older.delete(v)
        })
      )

    const maintenance = MaintenanceScheduler.make<Handle>({
      everyCommits: maintenanceEvery,
      scope,
      isClosed: () => closed,
      what: "maintenance",
      run: (h) => maintainHandle(h)
    })
    const scheduleMaintenance = maintenance.schedule

    const open = (spec: OpenSpec): Effect.Effect<StateStore, StateStoreError> =>
      Effect.gen(function* () {
        const h = yield* beginOpen(spec, closed, closedError, () => Effect.sync(() => handleFor(spec)))
        const opened = Effect.gen(function* () {
          yield* checkSchema(h, spec)
          yield* h.lock.withPermits(1)(list(h))
          h.minBatchesToRetain = spec.minBatchesToRetain
          const { loaded, hit } = yield* mapOf(h, spec.version)
          const map = loaded.map
          let released = false
          return makeSession({
            operatorId: h.operatorId,
            storeName: h.storeName,
            version: spec.version,
            numRows: map.size,
            numChars: loaded.chars,
            codec: BinaryValueCodec,
            lookup: (key) => map.get(key),
            load: () => Effect.void,
            // The live map: the session reads it only before its own commit changes it.
            scan: () => Effect.succeed(map),
            persist: (batch) => persist(h, loaded, batch),
            release: () => {
              if (!released) {
                released = true
                h.writer = false
              }
            },
            memoryBytes: () => mapBytes(h.current) + (loaded === h.current ? 0 : mapBytes(loaded)),
            numRowsLoaded: () => (hit ? 0 : map.size),
            customMetrics: () => ({
              loadedMapCacheHitCount: hit ? 1 : 0,
              loadedMapCacheMissCount: hit ? 0 : 1,
              stateOnCurrentVersionSizeBytes: mapBytes(h.current)
            })
          })
        })
        return yield* Effect.onError(opened, () =>
          Effect.sync(() => {
            h.writer = false
          })
        )
      })

    const persist = (h: Handle, loaded: Loaded, batch: CommitBatch): Effect.Effect<void, StateStoreError> =>
      Effect.gen(function* () {
        const from = batch.version - 1
        if (closed) return yield* closedError(h)
        if (h.latest !== from || loaded.version !== from) {
          return yield* new StateStoreError({
            reason: "InvalidUsage",
            operatorId: h.operatorId,
            message:
              `${describeStore(h)} was opened at version ${from} but version ${h.latest} exists: ` +
              `call rollbackTo(${from}) to discard the later versions before committing on top of ${from}.`
          })
        }
        const path = fileOf(h, batch.version, "delta")
        const data = encodeBinaryDelta(batch.changes)
        if (options.hooks?.beforeCommitPublish !== undefined) {
          yield* Effect.mapError(
            options.hooks.beforeCommitPublish({
              operatorId: h.operatorId,
              storeName: h.storeName,
              version: batch.version
            }),
            (cause) =>
              new StateStoreError({
                reason: "CommitFailed",
                operatorId: h.operatorId,
                path,
                message: `The commit of version ${batch.version} of ${describeStore(h)} failed: ${String(cause)}`,
                cause
              })
          )
        }
        const written = yield* Effect.mapError(
          writeBytes(path, data, false),
          (e) =>
            new StateStoreError({
              reason: "CommitFailed",
              operatorId: h.operatorId,
              path,
              message: `The commit of version ${batch.version} of ${describeStore(h)} failed: ${e.message}`,
              cause: e
            })
        )
        if (!written) {
          return yield* new StateStoreError({
            reason: "CommitFailed",
            operatorId: h.operatorId,
            path,
            message: `The commit of version ${batch.version} of ${describeStore(h)} failed: ${path} already exists (another writer?).`
          })
        }
        // The delta file is the commit; the map follows it.
        h.deltas.add(batch.version)
        h.latest = batch.version
        const before = loaded === h.current ? h.snapshotting : undefined
        if (before !== undefined) {
          for (let j = 0; j < batch.changes.length; j++) {
            const k = batch.changes[j][0]
            if (!before.has(k)) before.set(k, batch.befores[j])
          }
        }
        for (const [k, v] of batch.changes) {
          if (v === null) loaded.map.delete(k)
          else loaded.map.set(k, v)
        }
        loaded.chars = batch.numChars
        loaded.version = batch.version
        if (h.older.get(from) === loaded) h.older.delete(from)
        h.current = loaded
        h.commitsSinceMaintenance++
        yield* scheduleMaintenance(h)
      })

    const rollbackTo = (spec: VersionSpec): Effect.Effect<void, StateStoreError> =>
      Effect.gen(function* () {
        const invalid = validateSpec(spec)
        if (invalid !== undefined) return yield* invalid
        if (closed) return yield* closedError(spec)
        const h = handleFor(spec)
        if (h.writer) {
          return yield* new StateStoreError({
            reason: "InvalidUsage",
            operatorId: h.operatorId,
            message: `rollbackTo(${spec.version}) while ${describeStore(h)} is open: commit or abort it first.`
          })
        }
        yield* h.lock.withPermits(1)(
          Effect.gen(function* () {
            yield* list(h)
            if (spec.version > h.latest)
              return yield* versionNotFound(h, spec.version, `the latest committed version is ${h.latest}`)
            if (spec.version >= 0 && !h.deltas.has(spec.version) && !h.snapshots.has(spec.version)) {
              return yield* versionNotFound(h, spec.version, "it is older than the retained versions")
            }
            // Newest first, so an interrupted rollback leaves a contiguous prefix of versions.
            const doomed = [...new Set([...h.deltas, ...h.snapshots])]
              .filter((v) => v > spec.version)
              .sort((a, b) => b - a)
            for (const v of doomed) {
              for (const kind of ["snapshot", "delta"] as const) {
                const set = kind === "delta" ? h.deltas : h.snapshots
                if (!set.has(v)) continue
                yield* Effect.mapError(fs.remove(fileOf(h, v, kind)), io(h, "remove a rolled-back state file"))
                set.delete(v)
              }
            }
            h.latest = maxVersion(h.deltas, h.snapshots)
            if (h.current !== undefined && h.current.version > spec.version) h.current = undefined
            for (const v of h.older.keys()) if (v > spec.version) h.older.delete(v)
          })
        )
      })

    const read = (spec: VersionSpec): Effect.Effect<ReadonlyArray<readonly [string, unknown]>, StateStoreError> =>
      Effect.gen(function* () {
        const invalid = validateSpec(spec)
        if (invalid !== undefined) return yield* invalid
        if (closed) return yield* closedError(spec)
        const h = handleFor(spec)
        yield* h.lock.withPermits(1)(list(h))
        const { loaded } = yield* mapOf(h, spec.version)
        const out: Array<readonly [string, unknown]> = []
        for (const [k, v] of loaded.map) out.push([k, BinaryValueCodec.decode(v)])
        return out
      })

    const latestVersion = (id: StateStoreId): Effect.Effect<number, StateStoreError> =>
      Effect.gen(function* () {
        const invalid = validateSpec({ ...id, version: -1 })
        if (invalid !== undefined) return yield* invalid
        if (closed) return yield* closedError(id)
        const h = handleFor(id)
        yield* h.lock.withPermits(1)(list(h))
        return h.latest
      })

    const maintain = (): Effect.Effect<void, StateStoreError> =>
      Effect.suspend(() =>
        closed ? Effect.void : Effect.forEach([...handles.values()], (h) => maintainHandle(h), { discard: true })
      )

    const discard = (checkpoint: string): Effect.Effect<void, StateStoreError> =>
      Effect.gen(function* () {
        if (closed) return yield* closedError({ operatorId: -1 })
        const root = fs.resolve(checkpoint)
        const mine = [...handles.entries()].filter(([key]) => key.startsWith(`${root}\u0000`))
        const open = mine.find(([, h]) => h.writer)
        if (open !== undefined) {
          return yield* new StateStoreError({
            reason: "InvalidUsage",
            operatorId: open[1].operatorId,
            path: open[1].dir,
            message: `The state of ${root} cannot be discarded while ${describeStore(open[1])} is open.`
          })
        }
        yield* Fiber.awaitAll(mine.flatMap(([, h]) => (h.maintenance === undefined ? [] : [h.maintenance])))
        for (const [key] of mine) handles.delete(key)
        // Each operator's partition folder (`state/<operatorId>/0`, the default store and the
        // others below it); `state/<operatorId>/_metadata` belongs to the engine.
        const stateDir = fs.join(root, "state")
        const removeFailed = (e: CheckpointError) =>
          new StateStoreError({
            reason: "Io",
            path: e.path,
            cause: e,
            message: `Could not delete the uncommitted state in ${e.path}: ${e.message}. Delete it by hand, then restart the query.`
          })
        const operators = yield* Effect.mapError(fs.list(stateDir), removeFailed)
        for (const name of operators) {
          if (/^\d+$/.test(name)) yield* Effect.mapError(fs.remove(fs.join(stateDir, name, "0")), removeFailed)
        }
      })

    const settle = (checkpoint: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        const root = fs.resolve(checkpoint)
        const mine = [...handles.entries()].flatMap(([key, h]) => (key.startsWith(`${root}\u0000`) ? [h] : []))
        return Fiber.awaitAll(maintenance.running(mine)).pipe(Effect.asVoid)
      })

    const close = (): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (closed) return
        closed = true
        const running = maintenance.running(handles.values())
        yield* Fiber.awaitAll(running)
        handles.clear()
      })

    yield* Effect.addFinalizer(() => close())
    const provider: StateStoreProvider = {
      name: "memory",
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

/**
 * The file provider as the session's `StateStoreProviderService`.
 *
 * @since 0.1.0
 */
export const layer = (options: FileProviderOptions = {}): Layer.Layer<StateStoreProviderService> =>
  Layer.effect(StateStoreProviderService, make(options))
