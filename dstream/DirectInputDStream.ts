/**
 * A direct stream (Spark's `DirectKafkaInputDStream`, for any replayable source): no receiver;
 * each batch asks the source for the offsets available after the previous batch's end
 * (`latestOffset` with the source's default read limit) and reads exactly that range
 * (`getBatch`). The source is any streaming format in core's registry (`lookupSourceFormat`),
 * so `dstream/` needs no connector: `kafka`, `rate-micro-batch`, files…
 *
 * Exactly the offsets once across restarts, as Spark's direct stream checkpoints its offset
 * ranges: with a checkpoint directory, each batch's range is written to
 * `<checkpoint>/directOffsets/<streamId>/<batchTime>` before the batch runs, the end offset of
 * each completed batch goes into the context's checkpoint, and the range files of completed
 * batches are deleted. A context recovered through `StreamingContext.getOrCreate` continues from
 * the last completed end and re-reads the recorded range of a batch that did not complete —
 * the same offsets, not whatever the source has by then. The source's `commit` is called with
 * the end of each completed batch.
 *
 * Rows are the format's rows as external objects (timestamps as `Date`, binary as
 * `Uint8Array`).
 *
 * @since 0.1.0
 */
import { tmpdir } from "node:os"
import { Effect } from "effect"
import type * as T from "../core/DataType.ts"
import { AnalysisError, CheckpointError, ConnectorError } from "../core/Errors.ts"
import type { Options } from "../core/Formats.ts"
import { rowsToExternal } from "../core/Row.ts"
import { lookupSourceFormat, type MicroBatchSource, type Offset, sourceFormatNames } from "../core/Streaming.ts"
import { type ContextCore, InputNode } from "./Node.ts"
import { RDD } from "./RDD.ts"

/** One batch's offsets (Spark's `OffsetRange`, for the whole source). */
export interface DirectOffsetRange {
  readonly start: Offset
  readonly end: Offset
}

const sameOffset = (a: Offset, b: Offset): boolean => JSON.stringify(a) === JSON.stringify(b)

let directCounter = 0

export class DirectInputDStream<R> extends InputNode<R> {
  readonly name = "DirectInputDStream"
  readonly format: string
  readonly options: Options
  #source: MicroBatchSource | undefined = undefined
  #schema: T.StructType | undefined = undefined
  /** The end offset of the last batch generated (the start of the next one). */
  #current: Offset = undefined
  /** Ranges recovered from the checkpoint for batches that did not complete. */
  readonly #planned = new Map<number, DirectOffsetRange>()
  readonly #ranges = new Map<number, DirectOffsetRange>()
  readonly #prepared = new Map<number, RDD<R>>()

  constructor(ctx: ContextCore, format: string, options: Options) {
    super(ctx)
    this.format = format
    this.options = options
  }

  /** The offset range batch `time` read (until its metadata is cleared). */
  offsetRange(time: number): DirectOffsetRange | undefined {
    return this.#ranges.get(time)
  }

  #rangeDir(checkpointDir: string): string {
    const fs = this.ctx.session.state.checkpointFileSystem
    return fs.join(checkpointDir, "directOffsets", String(this.id))
  }

  /**
   * @internal Creates the source when the context starts. `restored` is the end offset of the
   * last completed batch from a recovered checkpoint (`undefined`: start at the source's
   * initial offset), `lastBatchTime` that batch's time.
   */
  open(
    restored: unknown,
    lastBatchTime: number | undefined
  ): Effect.Effect<void, AnalysisError | ConnectorError | CheckpointError> {
    return Effect.gen({ self: this }, function* () {
      const format = lookupSourceFormat(this.format)
      if (format === undefined) {
        return yield* new AnalysisError({
          reason: "InvalidArgument",
          errorClass: "DATA_SOURCE_NOT_FOUND",
          message: `[DATA_SOURCE_NOT_FOUND] Failed to find the data source: ${this.format}. Available streaming sources: ${sourceFormatNames().join(", ")}.`
        })
      }
      const conf = this.ctx.session.state.conf
      const schema = format.schema(undefined, this.options, conf)
      if (schema instanceof AnalysisError) return yield* schema
      const fs = this.ctx.session.state.checkpointFileSystem
      const dir = this.ctx.checkpointDir()
      const metadataPath =
        dir !== undefined
          ? fs.join(dir, "sources", String(this.id))
          : fs.join(tmpdir(), `tributary-direct-${process.pid}-${++directCounter}-${Date.now()}`)
      const source = yield* format.create({ options: this.options, schema, metadataPath, conf })
      this.#source = source
      this.#schema = schema
      this.#current = restored === undefined ? yield* source.initialOffset() : yield* source.decodeOffset(restored)
      if (dir === undefined) return
      const rangeDir = this.#rangeDir(dir)
      const names = yield* fs.list(rangeDir)
      for (const name of names) {
        const time = Number(name)
        if (!Number.isInteger(time)) continue
        const path = fs.join(rangeDir, name)
        if (lastBatchTime === undefined || time <= lastBatchTime) {
          // A new context on a used directory, or a batch that completed: not to be replayed.
          yield* fs.remove(path)
          continue
        }
        const text = yield* fs.readText(path)
        if (text === undefined) continue
        let json: { start: unknown; end: unknown }
        try {
          json = JSON.parse(text)
        } catch (cause) {
          return yield* new CheckpointError({
            reason: "Corrupt",
            path,
            message: `The direct stream offset range ${path} is not valid JSON.`,
            cause
          })
        }
        this.#planned.set(time, {
          start: yield* source.decodeOffset(json.start),
          end: yield* source.decodeOffset(json.end)
        })
      }
    })
  }

  override prepare(time: number): Effect.Effect<void, ConnectorError | CheckpointError> {
    return Effect.gen({ self: this }, function* () {
      const source = this.#source
      const schema = this.#schema
      if (source === undefined || schema === undefined) {
        return yield* new ConnectorError({
          connector: this.format,
          domain: "internal",
          retryable: false,
          message: "The direct stream's source was not opened"
        })
      }
      let range = this.#planned.get(time)
      this.#planned.delete(time)
      if (range === undefined) {
        const end = yield* source.latestOffset(this.#current, source.defaultReadLimit())
        range = { start: this.#current, end }
        const dir = this.ctx.checkpointDir()
        if (dir !== undefined) {
          const fs = this.ctx.session.state.checkpointFileSystem
          const rangeDir = this.#rangeDir(dir)
          yield* fs.mkdirs(rangeDir)
          // Written before the batch runs, so a restart re-reads exactly this range.
          yield* fs.writeAtomic(fs.join(rangeDir, String(time)), JSON.stringify(range), true)
        }
      }
      const rows = sameOffset(range.start, range.end) ? [] : yield* source.getBatch(range.start, range.end)
      this.#current = range.end
      this.#ranges.set(time, range)
      this.#prepared.set(time, new RDD([rowsToExternal<R>(schema, rows)]))
    })
  }

  compute(time: number): RDD<R> | undefined {
    const rdd = this.#prepared.get(time) ?? RDD.empty<R>()
    this.#prepared.delete(time)
    return rdd
  }

  /**
   * @internal After batch `time` completed and the context checkpointed: commits its end to the
   * source and deletes the range files up to it. Returns the end to checkpoint.
   */
  completed(time: number): Effect.Effect<void, ConnectorError | CheckpointError> {
    return Effect.gen({ self: this }, function* () {
      const range = this.#ranges.get(time)
      if (range !== undefined && this.#source !== undefined) yield* this.#source.commit(range.end)
      const dir = this.ctx.checkpointDir()
      if (dir === undefined) return
      const fs = this.ctx.session.state.checkpointFileSystem
      const rangeDir = this.#rangeDir(dir)
      for (const name of yield* fs.list(rangeDir)) {
        const t = Number(name)
        if (Number.isInteger(t) && t <= time) yield* fs.remove(fs.join(rangeDir, name))
      }
    })
  }

  /** @internal The end offset of batch `time` (for the context's checkpoint). */
  endOffset(time: number): Offset | undefined {
    return this.#ranges.get(time)?.end
  }

  override clearMetadata(time: number): void {
    super.clearMetadata(time)
    const remember = this.rememberMs ?? 0
    for (const t of this.#ranges.keys()) if (t <= time - remember) this.#ranges.delete(t)
  }

  override stop(_graceful: boolean): Effect.Effect<void> | undefined {
    const source = this.#source
    this.#source = undefined
    return source?.stop()
  }
}
