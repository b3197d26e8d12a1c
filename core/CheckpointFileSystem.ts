/**
 * The file operations checkpoints need, as a service-like interface so that `core/` (which
 * imports only `effect`) can hold the metadata-log logic. `state/NodeCheckpointFileSystem.ts`
 * implements it with `node:fs/promises` (Node and Deno).
 *
 * Every write is atomic: the content goes to a temporary file in the same folder, which is then
 * renamed into place, so a reader never sees half a file.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import type { CheckpointError } from "./Errors.ts"

export interface CheckpointFileSystem {
  /** The file's text, or `undefined` when it does not exist. */
  readonly readText: (path: string) => Effect.Effect<string | undefined, CheckpointError>
  /**
   * Writes `text` atomically. With `overwrite: false`, an existing file is left alone and the
   * result is `false` (Spark's `HDFSMetadataLog.add` semantics).
   */
  readonly writeAtomic: (path: string, text: string, overwrite: boolean) => Effect.Effect<boolean, CheckpointError>
  /**
   * The file's bytes, or `undefined` when it does not exist (binary files: the state provider's
   * deltas and snapshots). Optional for file systems written before it; the file provider then
   * carries the bytes through `readText`/`writeAtomic` as Latin-1 text.
   */
  readonly readBytes?: (path: string) => Effect.Effect<Uint8Array | undefined, CheckpointError>
  /** `writeAtomic` of bytes (see `readBytes`). */
  readonly writeAtomicBytes?: (
    path: string,
    data: Uint8Array,
    overwrite: boolean
  ) => Effect.Effect<boolean, CheckpointError>
  /** Names in a folder (not paths); empty when the folder does not exist. */
  readonly list: (dir: string) => Effect.Effect<ReadonlyArray<string>, CheckpointError>
  readonly remove: (path: string) => Effect.Effect<void, CheckpointError>
  readonly mkdirs: (dir: string) => Effect.Effect<void, CheckpointError>
  readonly exists: (path: string) => Effect.Effect<boolean, CheckpointError>
  /** Joins path segments with the platform separator. */
  readonly join: (...parts: ReadonlyArray<string>) => string
  /** The absolute, normalized form of a path. */
  readonly resolve: (path: string) => string
}
