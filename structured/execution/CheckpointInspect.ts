/**
 * What a checkpoint holds, read without running anything: the query id, every batch of the
 * offset log with its offsets, watermark and timestamp, which batches committed, the confs the
 * checkpoint fixes, and the stateful operators with their stores (what `tributary checkpoint
 * inspect` prints). Refuses folders that are not checkpoints. A corrupt or foreign file does not
 * hide the rest: everything that can be read is reported, and each file that cannot is listed in
 * `unreadable` with the reason.
 *
 * @example
 * ```ts
 * const report = yield* inspectCheckpoint(NodeCheckpointFileSystem, "/tmp/words-checkpoint")
 * console.log(renderInspection(report))
 * ```
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { CheckpointFileSystem } from "../../core/CheckpointFileSystem.ts"
import { CheckpointError } from "../../core/Errors.ts"
import { formatTimestamp } from "../../core/ExpressionName.ts"
import * as MetadataLog from "../../core/MetadataLog.ts"
import { PROVIDER_CONF, readStateMetadata, type StateTable } from "./StateReader.ts"

/** One batch of the offset log. */
export interface BatchInfo {
  readonly batchId: number
  readonly batchTimestampMs: number
  readonly batchWatermarkMs: number
  /** One per source, as written (`undefined` for a source with no offset yet). */
  readonly offsets: ReadonlyArray<unknown>
  /** The commit's watermark for the next batch, or `undefined` when the batch did not commit. */
  readonly nextBatchWatermarkMs: number | undefined
}

/** One store of a stateful operator. */
export interface StoreInfo {
  readonly operatorId: number
  readonly operatorName: string
  readonly storeName: string
  /** The oldest and newest batch whose state the store retains (Spark's state metadata columns). */
  readonly minBatchId: number
  readonly maxBatchId: number
}

/** A file of the checkpoint that could not be read, and why. */
export interface UnreadableFile {
  readonly path: string
  readonly message: string
}

/** Everything `inspectCheckpoint` found. */
export interface CheckpointInspection {
  readonly path: string
  readonly queryId: string | undefined
  readonly batches: ReadonlyArray<BatchInfo>
  /** The confs of the latest batch (the ones the checkpoint fixes for the query's life). */
  readonly conf: Readonly<Record<string, string>>
  /** `duckdb` or `memory` when the query is stateful. */
  readonly stateProvider: string | undefined
  readonly stores: ReadonlyArray<StoreInfo>
  /** The files that could not be read (corrupt, foreign, from a newer version); empty when all could. */
  readonly unreadable: ReadonlyArray<UnreadableFile>
}

/**
 * Reads a checkpoint folder. Fails with `CheckpointError` (`Incompatible` for a folder that is not a
 * checkpoint, `Corrupt` naming the file that cannot be read).
 *
 * @since 0.1.0
 */
export const inspectCheckpoint = (
  fs: CheckpointFileSystem,
  dir: string
): Effect.Effect<CheckpointInspection, CheckpointError> =>
  Effect.gen(function* () {
    const path = fs.resolve(dir)
    const names = yield* fs.list(path)
    if (!names.includes("metadata") && !names.includes("offsets")) {
      return yield* new CheckpointError({
        reason: "Incompatible",
        path,
        message:
          names.length === 0
            ? `${path} is empty or does not exist: it is not a streaming checkpoint.`
            : `${path} is not a streaming checkpoint: it has no 'metadata' file and no 'offsets' folder (found ${names.slice(0, 5).join(", ")}${names.length > 5 ? ", …" : ""}).`
      })
    }
    const unreadable: Array<UnreadableFile> = []
    // Reads one piece; a CheckpointError is recorded (naming its file) and the rest goes on.
    const attempt = <A>(read: Effect.Effect<A, CheckpointError>, fallbackPath: string) =>
      read.pipe(
        Effect.map((a): A | undefined => a),
        Effect.catchTag("CheckpointError", (e) =>
          Effect.sync(() => {
            unreadable.push({ path: e.path === "" ? fallbackPath : e.path, message: e.message })
            return undefined
          })
        )
      )
    const queryId = yield* attempt(MetadataLog.readQueryId(fs, path), fs.join(path, "metadata"))
    const offsets = MetadataLog.offsetLog(fs, path)
    const commits = MetadataLog.commitLog(fs, path)
    const committed = new Map<number, number>()
    for (const id of (yield* attempt(commits.batchIds(), fs.join(path, "commits"))) ?? []) {
      const c = yield* attempt(commits.get(id), fs.join(path, "commits", String(id)))
      if (c !== undefined) committed.set(id, c.nextBatchWatermarkMs)
    }
    const batches: Array<BatchInfo> = []
    let conf: Readonly<Record<string, string>> = {}
    for (const id of (yield* attempt(offsets.batchIds(), fs.join(path, "offsets"))) ?? []) {
      const seq = yield* attempt(offsets.get(id), fs.join(path, "offsets", String(id)))
      if (seq === undefined) continue
      conf = seq.metadata.conf
      batches.push({
        batchId: id,
        batchTimestampMs: seq.metadata.batchTimestampMs,
        batchWatermarkMs: seq.metadata.batchWatermarkMs,
        offsets: seq.offsets,
        nextBatchWatermarkMs: committed.get(id)
      })
    }
    const meta = yield* readStateMetadata(fs, [path], {}).pipe(
      Effect.map((m): StateTable | undefined => m),
      Effect.catchTags({
        AnalysisError: (e) => Effect.sync(() => void unreadable.push({ path: fs.join(path, "state"), message: e.message })),
        CheckpointError: (e) =>
          Effect.sync(() => void unreadable.push({ path: e.path === "" ? fs.join(path, "state") : e.path, message: e.message }))
      })
    )
    const stores = (meta?.rows ?? []).map((r) => ({
      operatorId: r[0] as number,
      operatorName: r[1] as string,
      storeName: r[2] as string,
      minBatchId: Number(r[4]),
      maxBatchId: Number(r[5])
    }))
    return { path, queryId, batches, conf, stateProvider: conf[PROVIDER_CONF], stores, unreadable }
  })

const time = (ms: number): string => `${formatTimestamp(ms)} (${ms})`

/**
 * The text `tributary checkpoint inspect` prints.
 *
 * @since 0.1.0
 */
export const renderInspection = (r: CheckpointInspection): string => {
  const lines: Array<string> = [`Checkpoint ${r.path}`, `  query id: ${r.queryId ?? "(none yet)"}`]
  if (r.batches.length === 0) lines.push("  batches: none")
  else {
    const done = r.batches.filter((b) => b.nextBatchWatermarkMs !== undefined).length
    lines.push(
      `  batches: ${r.batches[0].batchId} to ${r.batches[r.batches.length - 1].batchId} in the offset log, ${done} committed`
    )
    for (const b of r.batches) {
      lines.push(
        `  batch ${b.batchId}: ${b.nextBatchWatermarkMs === undefined ? "NOT COMMITTED (re-run on restart)" : "committed"}`,
        `    timestamp ${time(b.batchTimestampMs)}, watermark ${time(b.batchWatermarkMs)}` +
          (b.nextBatchWatermarkMs === undefined ? "" : `, next watermark ${time(b.nextBatchWatermarkMs)}`),
        ...b.offsets.map((o, i) => `    source ${i}: ${o === undefined ? "-" : JSON.stringify(o)}`)
      )
    }
  }
  const confKeys = Object.keys(r.conf).sort()
  if (confKeys.length > 0) {
    lines.push("  conf:")
    for (const k of confKeys) lines.push(`    ${k}=${r.conf[k]}`)
  }
  if (r.stores.length === 0) lines.push("  state: none (a stateless query)")
  else {
    lines.push(`  state (${r.stateProvider ?? "unknown"} provider):`)
    for (const s of r.stores) {
      lines.push(
        `    operator ${s.operatorId} ${s.operatorName}, store '${s.storeName}', state for batches ${s.minBatchId} to ${s.maxBatchId}`
      )
    }
  }
  if (r.unreadable.length > 0) {
    lines.push(`  unreadable (${r.unreadable.length}):`)
    for (const u of r.unreadable) lines.push(`    ${u.path}: ${u.message}`)
  }
  return lines.join("\n")
}
