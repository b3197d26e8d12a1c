/**
 * Spark's checkpoint metadata logs: `offsets/<batchId>` (written before a batch runs) and
 * `commits/<batchId>` (written after its sink write), plus the `metadata` file with the query
 * id. Each entry is one file named by its batch id, written atomically, never overwritten.
 *
 * Formats, as Spark writes them:
 * ```
 * offsets/3:  v1
 *             {"batchWatermarkMs":0,"batchTimestampMs":1700000000000,"conf":{...}}
 *             <one JSON offset per source, "-" when a source has none>
 * commits/3:  v1
 *             {"nextBatchWatermarkMs":0}
 * metadata:   {"id":"<query id>"}
 * ```
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { CheckpointFileSystem } from "./CheckpointFileSystem.ts"
import { CheckpointError } from "./Errors.ts"
import type { Offset } from "./Streaming.ts"

export interface OffsetSeqMetadata {
  readonly batchWatermarkMs: number
  readonly batchTimestampMs: number
  readonly conf: Readonly<Record<string, string>>
}

/** One entry of the offset log: the end offset of every source for the batch. */
export interface OffsetSeq {
  readonly metadata: OffsetSeqMetadata
  /** `undefined` for a source with no offset yet (`-` in the file). */
  readonly offsets: ReadonlyArray<Offset | undefined>
}

export interface CommitMetadata {
  readonly nextBatchWatermarkMs: number
}

const VERSION = "v1"

const corrupt = (path: string, why: string): CheckpointError =>
  new CheckpointError({
    reason: "Corrupt",
    path,
    message: `The checkpoint file ${path} is corrupt or not written by this version: ${why}. Delete the checkpoint folder to start over, or point the query at another checkpointLocation.`
  })

/** Parses `v<N>`, failing on versions newer than this one (Spark's `validateVersion`). */
const checkVersion = (path: string, line: string | undefined): Effect.Effect<void, CheckpointError> => {
  if (line === undefined || !/^v\d+$/.test(line)) return Effect.fail(corrupt(path, `expected a version line like "v1", found ${JSON.stringify(line)}`))
  const v = Number(line.slice(1))
  if (v > 1) {
    return Effect.fail(
      new CheckpointError({
        reason: "UnsupportedVersion",
        path,
        message: `The checkpoint file ${path} has log version ${line}, but this version of tributary supports up to v1. Upgrade tributary to read it.`
      })
    )
  }
  return Effect.void
}

const parseJson = (path: string, text: string): Effect.Effect<unknown, CheckpointError> =>
  Effect.try({ try: () => JSON.parse(text) as unknown, catch: () => corrupt(path, `invalid JSON ${JSON.stringify(text.slice(0, 80))}`) })

/** A log of entries named by batch id in one folder. */
export interface MetadataLog<A> {
  readonly dir: string
  /** Writes the entry for `batchId` unless one exists; `false` when it existed. */
  readonly add: (batchId: number, entry: A) => Effect.Effect<boolean, CheckpointError>
  readonly get: (batchId: number) => Effect.Effect<A | undefined, CheckpointError>
  /** The entry with the highest batch id. */
  readonly getLatest: () => Effect.Effect<readonly [number, A] | undefined, CheckpointError>
  /** Batch ids present, ascending. */
  readonly batchIds: () => Effect.Effect<ReadonlyArray<number>, CheckpointError>
  /** Removes entries with batch id below `threshold`. */
  readonly purge: (threshold: number) => Effect.Effect<void, CheckpointError>
}

const makeLog = <A>(
  fs: CheckpointFileSystem,
  dir: string,
  serialize: (a: A) => string,
  deserialize: (path: string, text: string) => Effect.Effect<A, CheckpointError>
): MetadataLog<A> => {
  const pathOf = (batchId: number) => fs.join(dir, String(batchId))
  const batchIds = () =>
    Effect.map(fs.list(dir), (names) =>
      names
        .filter((n) => /^\d+$/.test(n))
        .map(Number)
        .sort((a, b) => a - b)
    )
  const get = (batchId: number) =>
    Effect.flatMap(fs.readText(pathOf(batchId)), (text) =>
      text === undefined ? Effect.succeed(undefined) : deserialize(pathOf(batchId), text)
    )
  return {
    dir,
    add: (batchId, entry) => fs.writeAtomic(pathOf(batchId), serialize(entry), false),
    get,
    getLatest: () =>
      Effect.flatMap(batchIds(), (ids) => {
        if (ids.length === 0) return Effect.succeed(undefined)
        const last = ids[ids.length - 1]
        return Effect.map(get(last), (a) => (a === undefined ? undefined : ([last, a] as const)))
      }),
    batchIds,
    purge: (threshold) =>
      Effect.flatMap(batchIds(), (ids) =>
        Effect.forEach(
          ids.filter((id) => id < threshold),
          (id) => fs.remove(pathOf(id)),
          { discard: true }
        )
      )
  }
}

/** The offset log under `<checkpoint>/offsets`. */
export const offsetLog = (fs: CheckpointFileSystem, checkpoint: string): MetadataLog<OffsetSeq> =>
  makeLog(
    fs,
    fs.join(checkpoint, "offsets"),
    (seq) =>
      [
        VERSION,
        JSON.stringify({
          batchWatermarkMs: seq.metadata.batchWatermarkMs,
          batchTimestampMs: seq.metadata.batchTimestampMs,
          conf: seq.metadata.conf
        }),
        ...seq.offsets.map((o) => (o === undefined ? "-" : JSON.stringify(o)))
      ].join("\n"),
    (path, text) =>
      Effect.gen(function* () {
        const lines = text.split("\n")
        yield* checkVersion(path, lines[0])
        if (lines.length < 2 || lines[1].trim() === "") return yield* corrupt(path, "the batch metadata line is missing")
        const meta = (yield* parseJson(path, lines[1])) as Partial<OffsetSeqMetadata> | null
        if (meta === null || typeof meta !== "object") return yield* corrupt(path, "the batch metadata is not an object")
        const offsets: Array<Offset | undefined> = []
        for (const line of lines.slice(2)) {
          if (line === "") continue
          offsets.push(line === "-" ? undefined : yield* parseJson(path, line))
        }
        return {
          metadata: {
            batchWatermarkMs: typeof meta.batchWatermarkMs === "number" ? meta.batchWatermarkMs : 0,
            batchTimestampMs: typeof meta.batchTimestampMs === "number" ? meta.batchTimestampMs : 0,
            conf: (meta.conf ?? {}) as Record<string, string>
          },
          offsets
        }
      })
  )

/** The commit log under `<checkpoint>/commits`. */
export const commitLog = (fs: CheckpointFileSystem, checkpoint: string): MetadataLog<CommitMetadata> =>
  makeLog(
    fs,
    fs.join(checkpoint, "commits"),
    (c) => `${VERSION}\n${JSON.stringify({ nextBatchWatermarkMs: c.nextBatchWatermarkMs })}`,
    (path, text) =>
      Effect.gen(function* () {
        const lines = text.split("\n")
        yield* checkVersion(path, lines[0])
        const meta = (lines[1] === undefined ? {} : yield* parseJson(path, lines[1])) as Partial<CommitMetadata> | null
        if (meta === null || typeof meta !== "object") return yield* corrupt(path, "the commit metadata is not an object")
        return { nextBatchWatermarkMs: typeof meta.nextBatchWatermarkMs === "number" ? meta.nextBatchWatermarkMs : 0 }
      })
  )

/** Reads `<checkpoint>/metadata` (`{"id":"…"}`), or `undefined` when the checkpoint is new. */
export const readQueryId = (
  fs: CheckpointFileSystem,
  checkpoint: string
): Effect.Effect<string | undefined, CheckpointError> => {
  const path = fs.join(checkpoint, "metadata")
  return Effect.flatMap(fs.readText(path), (text) => {
    if (text === undefined) return Effect.succeed(undefined)
    return Effect.flatMap(parseJson(path, text.split("\n")[0] ?? ""), (json) => {
      const id = (json as { id?: unknown } | null)?.id
      return typeof id === "string" ? Effect.succeed(id) : Effect.fail(corrupt(path, "no query id"))
    })
  })
}

/** Writes `<checkpoint>/metadata` for a new query. */
export const writeQueryId = (
  fs: CheckpointFileSystem,
  checkpoint: string,
  id: string
): Effect.Effect<void, CheckpointError> =>
  Effect.asVoid(fs.writeAtomic(fs.join(checkpoint, "metadata"), JSON.stringify({ id }), false))
