/**
 * `CheckpointFileSystem` on `node:fs/promises` (works in Node and Deno). Atomic writes go to a
 * temporary name in the same folder and are renamed into place; with `overwrite: false` the
 * rename is replaced by a hard link, which fails when the target exists, so two writers of the
 * same batch id cannot both win.
 *
 * @since 0.1.0
 */
import { randomUUID } from "node:crypto"
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

export const NodeCheckpointFileSystem: CheckpointFileSystem = {
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
    Effect.tryPromise({
      try: async () => {
        const dir = path.dirname(p)
        await fs.mkdir(dir, { recursive: true })
        const tmp = path.join(dir, `.${path.basename(p)}.${randomUUID()}.tmp`)
        const handle = await fs.open(tmp, "w")
        try {
          await handle.writeFile(text, "utf8")
          await handle.sync()
        } finally {
          await handle.close()
        }
        try {
          if (overwrite) {
            await fs.rename(tmp, p)
            return true
          }
          try {
            await fs.link(tmp, p)
            return true
          } catch (e) {
            if (code(e) === "EEXIST") return false
            throw e
          }
        } finally {
          if (!overwrite) await fs.rm(tmp, { force: true })
        }
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
