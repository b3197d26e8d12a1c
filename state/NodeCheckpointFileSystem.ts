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
 * Checksums. Every file written gets Hadoop's checksum file beside it (`.<name>.crc`, see
 * `core/Checksum.ts`), as Spark's checkpoints on a local file system have, written once the file
 * is in place; `readText` checks a file against it when there is one, so a bit flip or a
 * truncation fails with a `Corrupt` error naming the file instead of being read as another
 * offset, commit or state. A file without one (written by an older version, or killed between
 * the two writes) is read unchecked. `list` leaves checksum files out and `remove` removes them
 * with their file.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
import { Buffer } from "node:buffer"
import * as fsSync from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import * as zlib from "node:zlib"
import { Effect } from "effect"
import type { CheckpointFileSystem } from "../core/CheckpointFileSystem.ts"
import {
  type Crc32,
  checksumFile as checksumFileWith,
  checksumFileName,
  crc32,
  isChecksumFileName,
  verifyChecksumFile as verifyWith
} from "../core/Checksum.ts"
import { CheckpointError } from "../core/Errors.ts"

const io = (p: string, what: string) => (cause: unknown) =>
  new CheckpointError({
    reason: "Io",
    path: p,
    message: `Could not ${what} ${p}: ${cause instanceof Error ? cause.message : String(cause)}`,
    cause
  })

/**
 * zlib's CRC-32 where the runtime has it (Node 22.2+): the same values as `crc32`, about twenty
 * times faster on a state delta of megabytes; elsewhere the portable one.
 */
const nativeCrc = (zlib as { readonly crc32?: (data: Uint8Array) => number }).crc32
const fastCrc32: Crc32 =
  typeof nativeCrc === "function" ? (bytes, from, to) => nativeCrc(bytes.subarray(from, to)) : crc32
const checksumFile = (data: Uint8Array): Uint8Array => checksumFileWith(data, undefined, fastCrc32)
const verifyChecksumFile = (data: Uint8Array, crc: Uint8Array): string | undefined => verifyWith(data, crc, fastCrc32)

const code = (e: unknown): string | undefined => (e as { code?: string } | null)?.code

/** The checksum file beside `p`. */
const crcPathOf = (p: string): string => path.join(path.dirname(p), checksumFileName(path.basename(p)))

/** A temporary name in `p`'s folder. */
const tmpPathOf = (p: string): string => path.join(path.dirname(p), `.${path.basename(p)}.${randomUUID()}.tmp`)

/** Writes `p`'s checksum file (to a temporary name, then renamed over any old one). */
const writeChecksumSync = (p: string, data: Uint8Array): void => {
  const crc = crcPathOf(p)
  const tmp = tmpPathOf(crc)
  fsSync.writeFileSync(tmp, checksumFile(data))
  try {
    fsSync.renameSync(tmp, crc)
  } catch (e) {
    fsSync.rmSync(tmp, { force: true })
    throw e
  }
}

/**
 * The error for a file that does not match its checksum file: a bit flip, a truncation, or an
 * edit by hand that left the checksum file as it was.
 */
const checksumMismatch = (p: string, why: string): CheckpointError =>
  new CheckpointError({
    reason: "Corrupt",
    path: p,
    message: `The checkpoint file ${p} is damaged: ${why} (checked against ${crcPathOf(p)}). Restore it from a backup, or start the query from a new checkpoint. (A file edited by hand must have its checksum file deleted.)`
  })

/** Checks `data`, read from `p`, against `p`'s checksum file, if there is one. */
const verifySync = (p: string, data: Uint8Array): void => {
  let crc: Uint8Array
  try {
    crc = fsSync.readFileSync(crcPathOf(p))
  } catch (e) {
    if (code(e) === "ENOENT") return
    throw e
  }
  const why = verifyChecksumFile(data, crc)
  if (why !== undefined) throw checksumMismatch(p, why)
}

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
const writeSmallAtomic = (p: string, data: Uint8Array, overwrite: boolean): boolean => {
  const dir = path.dirname(p)
  const tmp = tmpPathOf(p)
  try {
    fsSync.writeFileSync(tmp, data)
  } catch (e) {
    if (code(e) !== "ENOENT") throw e
    fsSync.mkdirSync(dir, { recursive: true })
    fsSync.writeFileSync(tmp, data)
  }
  if (overwrite) {
    try {
      // The old checksum goes first: a kill before the new one leaves the file unchecked, never
      // checked against the checksum of its previous content.
      fsSync.rmSync(crcPathOf(p), { force: true })
      fsSync.renameSync(tmp, p)
    } catch (e) {
      fsSync.rmSync(tmp, { force: true })
      throw e
    }
    writeChecksumSync(p, data)
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
  writeChecksumSync(p, data)
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
 * import { Session } from "tributary-streaming"
 * import { makeNodeCheckpointFileSystem } from "../state/mod.ts" // inside the repository: state/ is not a package entry point
 * const layer = Session.layer({ checkpointFileSystem: makeNodeCheckpointFileSystem({ fsync: true }) })
 * ```
 * @since 0.1.0
 */
export const makeNodeCheckpointFileSystem = (options: NodeCheckpointFileSystemOptions = {}): CheckpointFileSystem => {
  const durable = options.fsync === true

  /** Writes the temporary file, creating its folder when it is missing. */
  const writeTemp = async (dir: string, tmp: string, data: Uint8Array): Promise<void> => {
    const write = async () => {
      if (!durable) return fs.writeFile(tmp, data)
      const handle = await fs.open(tmp, "w")
      try {
        await handle.writeFile(data)
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

  /** Writes `p`'s checksum file (flushed like the file itself when durable). */
  const writeChecksum = async (p: string, data: Uint8Array): Promise<void> => {
    const crc = crcPathOf(p)
    const tmp = tmpPathOf(crc)
    await writeTemp(path.dirname(p), tmp, checksumFile(data))
    try {
      await fs.rename(tmp, crc)
    } catch (e) {
      await fs.rm(tmp, { force: true })
      throw e
    }
    if (durable) await syncDir(path.dirname(p))
  }

  const readBytes = (p: string): Effect.Effect<Buffer | undefined, CheckpointError> =>
    Effect.tryPromise({
      try: async () => {
        let data: Buffer
        try {
          data = await fs.readFile(p)
        } catch (e) {
          if (code(e) === "ENOENT") return undefined
          throw e
        }
        verifySync(p, data)
        return data
      },
      catch: (e) => (e instanceof CheckpointError ? e : io(p, "read")(e))
    })

  const writeAtomicBytes = (p: string, data: Uint8Array, overwrite: boolean): Effect.Effect<boolean, CheckpointError> =>
    Effect.tryPromise({
      try: async () => {
        const dir = path.dirname(p)
        const tmp = tmpPathOf(p)
        await writeTemp(dir, tmp, data)
        if (overwrite) {
          try {
            // The old checksum goes first (see writeSmallAtomic).
            await fs.rm(crcPathOf(p), { force: true })
            await fs.rename(tmp, p)
          } catch (e) {
            await fs.rm(tmp, { force: true })
            throw e
          }
          if (durable) await syncDir(dir)
          await writeChecksum(p, data)
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
        await writeChecksum(p, data)
        return true
      },
      catch: io(p, "write")
    })

  return {
    readText: (p) => Effect.map(readBytes(p), (data) => (data === undefined ? undefined : data.toString("utf8"))),
    readBytes,
    writeAtomic: (p, text, overwrite) =>
      !durable && text.length <= SMALL_WRITE_CHARS
        ? Effect.try({ try: () => writeSmallAtomic(p, Buffer.from(text, "utf8"), overwrite), catch: io(p, "write") })
        : writeAtomicBytes(p, Buffer.from(text, "utf8"), overwrite),
    writeAtomicBytes: (p, data, overwrite) =>
      !durable && data.length <= SMALL_WRITE_CHARS
        ? Effect.try({ try: () => writeSmallAtomic(p, data, overwrite), catch: io(p, "write") })
        : writeAtomicBytes(p, data, overwrite),
    list: (dir) =>
      Effect.tryPromise({
        try: async () => {
          try {
            return (await fs.readdir(dir)).filter((n) => !isChecksumFileName(n))
          } catch (e) {
            if (code(e) === "ENOENT") return []
            throw e
          }
        },
        catch: io(dir, "list")
      }),
    remove: (p) =>
      Effect.tryPromise({
        try: async () => {
          await fs.rm(p, { recursive: true, force: true })
          await fs.rm(crcPathOf(p), { force: true })
        },
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
