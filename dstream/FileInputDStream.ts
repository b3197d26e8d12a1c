/**
 * Spark's `FileInputDStream` (`textFileStream`): each batch reads the files that appeared in a
 * folder — files whose modification time is after both the context's start (new files only)
 * and `batchTime - durationToRemember`, not after the batch time, not selected by a remembered
 * batch before, and whose names do not start with "." — one partition per file, one element per
 * line. `durationToRemember` is Spark's: the batch duration times
 * `ceil(spark.streaming.fileStream.minRememberDuration (60 s) / batchDuration)`.
 *
 * Modification times are compared with batch times from Effect's clock, so a test on the test
 * clock sets file times (`utimes`) on the same scale.
 *
 * @since 0.1.0
 */
import { readdir, readFile, stat } from "node:fs/promises"
import { join } from "node:path"
import { Clock, Effect } from "effect"
import { ConnectorError } from "../core/Errors.ts"
import { RDD } from "./RDD.ts"
import { type ContextCore, InputNode } from "./Node.ts"

export class FileInputDStream extends InputNode<string> {
  readonly name = "FileInputDStream"
  readonly directory: string
  readonly durationToRememberMs: number
  #initialModTimeIgnoreThreshold = 0
  readonly #newFilesOnly: boolean
  readonly #batchFiles = new Map<number, ReadonlyArray<string>>()
  readonly #recentlySelected = new Set<string>()
  readonly #prepared = new Map<number, RDD<string>>()

  constructor(ctx: ContextCore, directory: string, newFilesOnly: boolean, minRememberMs = 60_000) {
    super(ctx)
    this.directory = directory
    this.#newFilesOnly = newFilesOnly
    this.durationToRememberMs = ctx.batchMs * Math.ceil(minRememberMs / ctx.batchMs)
    this.rememberMs = this.durationToRememberMs
  }

  override start(): Effect.Effect<void> {
    return Effect.map(Clock.currentTimeMillis, (now) => {
      this.#initialModTimeIgnoreThreshold = this.#newFilesOnly ? now : 0
    })
  }

  override prepare(time: number): Effect.Effect<void, ConnectorError> {
    const threshold = Math.max(this.#initialModTimeIgnoreThreshold, time - this.durationToRememberMs)
    return Effect.tryPromise({
      try: async () => {
        let names: Array<string>
        try {
          names = (await readdir(this.directory)).sort()
        } catch (e) {
          if ((e as { code?: string }).code === "ENOENT") names = []
          else throw e
        }
        const selected: Array<string> = []
        const parts: Array<Array<string>> = []
        for (const name of names) {
          if (name.startsWith(".")) continue
          const path = join(this.directory, name)
          const st = await stat(path)
          if (!st.isFile()) continue
          const mod = Math.floor(st.mtimeMs)
          if (mod <= threshold || mod > time || this.#recentlySelected.has(path)) continue
          selected.push(path)
          const text = await readFile(path, "utf8")
          const lines = text.split(/\r?\n/)
          if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
          parts.push(lines)
        }
        this.#batchFiles.set(time, selected)
        for (const p of selected) this.#recentlySelected.add(p)
        this.#prepared.set(time, new RDD(parts))
      },
      catch: (cause) =>
        new ConnectorError({
          connector: "textFileStream",
          domain: "external",
          retryable: true,
          message: `Listing or reading ${this.directory} failed: ${cause instanceof Error ? cause.message : String(cause)}`,
          cause
        })
    })
  }

  compute(time: number): RDD<string> | undefined {
    const rdd = this.#prepared.get(time) ?? RDD.empty<string>()
    this.#prepared.delete(time)
    return rdd
  }

  override clearMetadata(time: number): void {
    super.clearMetadata(time)
    for (const [t, files] of this.#batchFiles) {
      if (t < time - (this.rememberMs ?? 0)) {
        this.#batchFiles.delete(t)
        for (const f of files) this.#recentlySelected.delete(f)
      }
    }
  }
}
