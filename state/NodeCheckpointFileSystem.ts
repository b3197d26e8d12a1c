/**
 * `CheckpointFileSystem` on `node:fs/promises` (works in Node and Deno). Atomic writes go to a
 * temporary name in the same folder and are renamed into place; with `overwrite: false` the
 * rename is replaced by a hard link, which fails when the target exists, so two writers of the
 * same batch id cannot both win.
 *
 * Durability. By default a write is not flushed to the disk (no `fsync`), as Spark's checkpoint
 * file managers do on a local file system (`CheckpointFileManager.RenameBasedFSDataOutputStream`:
 * write a temporary file, close it, rename): a finished write survives the process being killed
 * at any point, since the file's content is in the operating system's cache, but not necessarily
 * a crash of the operating system or a power cut. `makeNodeCheckpointFileSystem({ fsync: true })`
 * (or `DurableNodeCheckpointFileSystem`) flushes the file before it is linked or renamed into
 * place and the folder after, so a finished write also survives those; pass it as
 * `Session.layer({ checkpointFileSystem })`. It costs one to two disk flushes per write (each
 * micro-batch writes two log files), from a few to tens of milliseconds each.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import * as fsSync from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Effect } from "effect"
import type { CheckpointFileSystem } from "../core/CheckpointFileSystem.ts"
import { CheckpointError } from "../core/Errors.ts"

const io = (p: string, what: string) => (cause: unknown) =>
  new CheckpointError({
    reason: "Io",
    path: p,
    message: `Could not ${what} ${p}: ${cause instanceof Error ? cause.message : String(cause)}`,
    cause
  })

const code = (e: unknown): string | undefined => (e as { code?: string } | null)?.code

/**
 * Options of `makeNodeCheckpointFileSystem`.
 *
 * @since 0.1.0
 */
export interface NodeCheckpointFileSystemOptions {
  /**
   * Flush each written file, and its folder once the file is in place, to the disk before the
   * write completes (default `false`, as Spark on a local file system).
   */
  readonly fsync?: boolean | undefined
}

/**
 * Files up to this many characters are written with synchronous calls when nothing is flushed:
 * the logs' entries of every micro-batch (offsets, commits) are a few hundred bytes, for which
 * the three round trips through libuv's thread pool (shared with DuckDB's queries) cost far more
 * than the write itself. Larger files (state deltas, snapshots) are written asynchronously.
 */
const SMALL_WRITE_CHARS = 16 * 1024

/** `writeAtomic` of a small file without flushing, in synchronous calls (see `SMALL_WRITE_CHARS`). */
const writeSmallAtomic = (p: string, text: string, overwrite: boolean): boolean => {
  const dir = path.dirname(p)
  const tmp = path.join(dir, `.${path.basename(p)}.${randomUUID()}.tmp`)
  try {
    fsSync.writeFileSync(tmp, text, "utf8")
  } catch (e) {
    if (code(e) !== "ENOENT") throw e
    fsSync.mkdirSync(dir, { recursive: true })
    fsSync.writeFileSync(tmp, text, "utf8")
  }
  if (overwrite) {
    try {
      fsSync.renameSync(tmp, p)
    } catch (e) {
      fsSync.rmSync(tmp, { force: true })
      throw e
    }
    return true
  }
  try {
    fsSync.linkSync(tmp, p)
  } catch (e) {
    if (code(e) === "EEXIST") return false
    throw e
  } finally {
    fsSync.rmSync(tmp, { force: true })
  }
  return true
}

/** Flushes a folder's entries (a new or renamed name); platforms that cannot open a folder skip it. */
const syncDir = async (dir: string): Promise<void> => {
  let handle: fs.FileHandle | undefined
  try {
    handle = await fs.open(dir, "r")
    await handle.sync()
  } catch (e) {
    // Windows cannot open a folder, and some file systems refuse to flush one.
    const c = code(e)
    if (c !== "EISDIR" && c !== "EPERM" && c !== "EINVAL" && c !== "EACCES" && c !== "EBADF") throw e
  } finally {
    await handle?.close()
  }
}

/**
 * A `CheckpointFileSystem` on `node:fs/promises`; `fsync: true` makes every write durable across
 * an operating-system crash (see the module documentation).
 *
 * @example
 * ```ts
 * import { Session } from "tributary"
 * import { makeNodeCheckpointFileSystem } from "tributary/state"
 * const layer = Session.layer({ checkpointFileSystem: makeNodeCheckpointFileSystem({ fsync: true }) })
 * ```
 * @since 0.1.0
 */
export const makeNodeCheckpointFileSystem = (options: NodeCheckpointFileSystemOptions = {}): CheckpointFileSystem => {
  const durable = options.fsync === true

  /** Writes the temporary file, creating its folder when it is missing. */
  const writeTemp = async (dir: string, tmp: string, text: string): Promise<void> => {
    const write = async () => {
      if (!durable) return fs.writeFile(tmp, text, "utf8")
      const handle = await fs.open(tmp, "w")
      try {
        await handle.writeFile(text, "utf8")
        await handle.sync()
      } finally {
        await handle.close()
      }
    }
    try {
      await write()
    } catch (e) {
      if (code(e) !== "ENOENT") throw e
      // The folder does not exist yet (the first entry of a log): one mkdir, then write again.
      await fs.mkdir(dir, { recursive: true })
      await write()
    }
  }

  return {
    readText: (p) =>
      Effect.tryPromise({
        try: async () => {
          try {
            return await fs.readFile(p, "utf8")
          } catch (e) {
            if (code(e) === "ENOENT") return undefined
            throw e
          }
        },
        catch: io(p, "read")
      }),
    writeAtomic: (p, text, overwrite) =>
      !durable && text.length <= SMALL_WRITE_CHARS
        ? Effect.try({ try: () => writeSmallAtomic(p, text, overwrite), catch: io(p, "write") })
        : Effect.tryPromise({
            try: async () => {
              const dir = path.dirname(p)
              const tmp = path.join(dir, `.${path.basename(p)}.${randomUUID()}.tmp`)
              await writeTemp(dir, tmp, text)
              if (overwrite) {
                try {
                  await fs.rename(tmp, p)
                } catch (e) {
                  await fs.rm(tmp, { force: true })
                  throw e
                }
                if (durable) await syncDir(dir)
                return true
              }
              try {
                await fs.link(tmp, p)
              } catch (e) {
                if (code(e) === "EEXIST") return false
                throw e
              } finally {
                await fs.rm(tmp, { force: true })
              }
              if (durable) await syncDir(dir)
              return true
            },
            catch: io(p, "write")
          }),
    list: (dir) =>
      Effect.tryPromise({
        try: async () => {
          try {
            return await fs.readdir(dir)
          } catch (e) {
            if (code(e) === "ENOENT") return []
            throw e
          }
        },
        catch: io(dir, "list")
      }),
    remove: (p) =>
      Effect.tryPromise({
        try: () => fs.rm(p, { recursive: true, force: true }),
        catch: io(p, "remove")
      }),
    mkdirs: (dir) =>
      Effect.tryPromise({
        try: async () => {
          await fs.mkdir(dir, { recursive: true })
        },
        catch: io(dir, "create")
      }),
    exists: (p) =>
      Effect.tryPromise({
        try: async () => {
          try {
            await fs.stat(p)
            return true
          } catch (e) {
            if (code(e) === "ENOENT") return false
            throw e
          }
        },
        catch: io(p, "stat")
      }),
    join: (...parts) => path.join(...parts),
    resolve: (p) => path.resolve(p)
  }
}

/**
 * The default checkpoint file system: atomic writes without `fsync`, as Spark on a local file
 * system.
 *
 * @since 0.1.0
 */
export const NodeCheckpointFileSystem: CheckpointFileSystem = makeNodeCheckpointFileSystem()

/**
 * Atomic writes flushed to the disk (file and folder) before they complete.
 *
 * @since 0.1.0
 */
export const DurableNodeCheckpointFileSystem: CheckpointFileSystem = makeNodeCheckpointFileSystem({ fsync: true })
