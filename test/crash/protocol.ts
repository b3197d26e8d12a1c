/**
 * What the crash test and its child program share: the named kill points of the commit
 * protocol, how a kill is spelled on the child's command line, the layout of a run's working
 * folder, and the reader of the sink's output.
 *
 * The child (`child.ts`) runs one streaming query over a file of JSON lines and dies by
 * `SIGKILL` at one kill point; the test (`CrashRestart.test.ts`) restarts it and compares what
 * the sink wrote with an uninterrupted run.
 */
import * as fs from "node:fs"
import * as path from "node:path"

/**
 * The points of Spark's micro-batch commit protocol where the child kills itself, in the order
 * a batch passes them:
 *
 * - `afterOffsetWrite`: `offsets/<k>` is on disk, nothing of the batch ran;
 * - `insideSink`: the sink has written some rows of batch `k` to its temporary file;
 * - `afterSink`: the sink call for batch `k` returned (its file is in place), `commits/<k>` is not written;
 * - `afterCommit`: `commits/<k>` is on disk.
 */
export const KILL_POINTS = ["afterOffsetWrite", "insideSink", "afterSink", "afterCommit"] as const

export type KillPoint = (typeof KILL_POINTS)[number]

/** Where one child run dies: at `point` of batch `batchId` (inside the sink: after `afterRows` rows). */
export interface KillSpec {
  readonly point: KillPoint
  readonly batchId: number
  /** Only for `insideSink`: how many rows of the batch are written before the kill. */
  readonly afterRows: number
}

/** `point:batchId[:afterRows]`, as the child reads it from its command line. */
export const formatKill = (k: KillSpec): string =>
  k.point === "insideSink" ? `${k.point}:${k.batchId}:${k.afterRows}` : `${k.point}:${k.batchId}`

export const parseKill = (text: string): KillSpec => {
  const [point, batch, rows] = text.split(":")
  if (!(KILL_POINTS as ReadonlyArray<string>).includes(point)) throw new Error(`unknown kill point ${point}`)
  const batchId = Number(batch)
  const afterRows = rows === undefined ? 0 : Number(rows)
  if (!Number.isInteger(batchId) || batchId < 0 || !Number.isInteger(afterRows) || afterRows < 0) {
    throw new Error(`bad kill spec ${text}`)
  }
  return { point: point as KillPoint, batchId, afterRows }
}

/** The files of one working folder (one scenario: its checkpoint, sink output and sink call log). */
export const layout = (workDir: string) => ({
  checkpoint: path.join(workDir, "checkpoint"),
  out: path.join(workDir, "out"),
  /** One line per sink call: the batch id (appended before the sink writes anything). */
  calls: path.join(workDir, "calls.log")
})

/** The name of batch `k`'s finished output file (written under a temporary name, then renamed). */
export const batchFileName = (batchId: number): string => `${batchId}.json`

/** Written by the sink when a replayed batch differs from what it wrote before (never expected). */
export const conflictFileName = (batchId: number): string => `conflict-${batchId}.json`

/** The output row of the query (see `child.ts`). */
export interface OutRow {
  readonly id: number
  readonly label: string | null
  readonly n10: number
}

/**
 * The text of batch `batchId`'s output file: a header line, one row per line, a closing line. The
 * sink writes it in this order, so a batch killed inside the sink leaves a prefix of it.
 */
export const serializeBatch = (batchId: number, rows: ReadonlyArray<OutRow>): string =>
  `{"batchId":${batchId},"rows":[\n${rows.map((r, i) => `${JSON.stringify(r)}${i < rows.length - 1 ? ",\n" : "\n"}`).join("")}]}\n`

/** One batch as the sink wrote it. */
export interface OutBatch {
  readonly batchId: number
  readonly rows: ReadonlyArray<OutRow>
}

/**
 * The sink's output as a sequence of batches in batch-id order: the finished `<k>.json` files
 * only. Temporary files of a batch killed inside the sink are not output.
 */
export const readOutput = (outDir: string): ReadonlyArray<OutBatch> => {
  if (!fs.existsSync(outDir)) return []
  return fs
    .readdirSync(outDir)
    .filter((n) => /^\d+\.json$/.test(n))
    .map((n) => JSON.parse(fs.readFileSync(path.join(outDir, n), "utf8")) as OutBatch)
    .sort((a, b) => a.batchId - b.batchId)
}

/** The batch ids of a checkpoint log folder (`offsets` or `commits`), ascending. */
export const logIds = (checkpoint: string, log: "offsets" | "commits"): ReadonlyArray<number> => {
  const dir = path.join(checkpoint, log)
  if (!fs.existsSync(dir)) return []
  return fs
    .readdirSync(dir)
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .sort((a, b) => a - b)
}

/** The sink calls recorded so far, in call order. */
export const readCalls = (callsFile: string): ReadonlyArray<number> =>
  fs.existsSync(callsFile)
    ? fs
        .readFileSync(callsFile, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map(Number)
    : []
