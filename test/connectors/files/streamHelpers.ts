/**
 * Helpers of the streaming file source and sink tests: temporary folders removed when the test's
 * scope closes, files with fixed modification times (the source orders files by them), and a
 * query that records every micro-batch it gets.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, type Scope } from "effect"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import type { StreamingQuery } from "../../../structured/contracts/StreamingQuery.ts"

/** A fresh temporary folder, removed when the scope closes. */
export const tempDir = (): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "tributary-fstream-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/** Writes `root/rel` with `text`, modified at `mtimeSec` seconds after the epoch. */
export const put = (root: string, rel: string, text: string | Uint8Array, mtimeSec: number): Effect.Effect<string> =>
  Effect.sync(() => {
    const p = path.join(root, rel)
    fs.mkdirSync(path.dirname(p), { recursive: true })
    fs.writeFileSync(p, text)
    fs.utimesSync(p, mtimeSec, mtimeSec)
    return p
  })

/** The batches a query handed to its sink: batch id and rows. */
export type Batches = Array<readonly [number, ReadonlyArray<Record<string, unknown>>]>

/** Starts `df` with a `foreachBatch` sink that records each batch into `batches`. */
export const startRecording = <R>(
  df: DataFrame<R>,
  checkpoint: string,
  batches: Batches
): Effect.Effect<StreamingQuery, unknown> =>
  df.writeStream
    .option("checkpointLocation", checkpoint)
    .foreachBatch((batch, id) =>
      Effect.map(batch.collect(), (rows) => {
        batches.push([id, rows as ReadonlyArray<Record<string, unknown>>])
      })
    )
    .start()

/** Names in a folder, recursively, sorted. */
export const listTree = (dir: string): Array<string> =>
  (fs.readdirSync(dir, { recursive: true }) as Array<string>).map((p) => p.split(path.sep).join("/")).sort()

/** A file's text. */
export const readText = (p: string): string => fs.readFileSync(p, "utf8")
