/**
 * The streaming contracts between the engine and connectors: micro-batch sources, sinks, read
 * limits, output modes, and the registry that names them (`readStream.format("rate")`,
 * `writeStream.format("console")`).
 *
 * Offsets are JSON values. The engine writes `JSON.stringify(offset)` as the source's line of
 * the offset log and gives the parsed value back on restart, so a source must produce the same
 * offsets for the same data every time (replay exactly) and `decodeOffset` must accept what it
 * produced (a Schema's decode is the usual way).
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import type { StructType } from "./DataType.ts"
import type { AnalysisError, ConnectorError } from "./Errors.ts"
import type { Options } from "./Formats.ts"
import type { InternalRow } from "./Row.ts"

/** A source's position: a JSON value (a number, `{"offset":10,"timestamp":1000}`, …). */
export type Offset = unknown

/** Spark's output modes. */
export type OutputMode = "append" | "update" | "complete"

/** How much a micro-batch may read (Spark's `ReadLimit`). */
export type ReadLimit =
  | { readonly _tag: "AllAvailable" }
  | { readonly _tag: "MaxRows"; readonly maxRows: number }
  | { readonly _tag: "MaxFiles"; readonly maxFiles: number }
  | { readonly _tag: "MaxBytes"; readonly maxBytes: number }
  | { readonly _tag: "MinRows"; readonly minRows: number; readonly maxTriggerDelayMs: number }
  | { readonly _tag: "Composite"; readonly limits: ReadonlyArray<ReadLimit> }

export const ReadLimit = {
  allAvailable: { _tag: "AllAvailable" } as ReadLimit,
  maxRows: (maxRows: number): ReadLimit => ({ _tag: "MaxRows", maxRows })
}

/**
 * A replayable micro-batch source (Spark's `MicroBatchStream` with `SupportsAdmissionControl`).
 */
export interface MicroBatchSource {
  /** What progress reports as `sources[].description`, e.g. `MemoryStream[value#1]`. */
  readonly description: string
  readonly schema: StructType
  /** The offset before any data (the start of batch 0). */
  readonly initialOffset: () => Effect.Effect<Offset, ConnectorError>
  /** The limit used when the trigger does not impose one. */
  readonly defaultReadLimit: () => ReadLimit
  /**
   * The end of the next batch starting at `start`, within `limit`; equal to `start` (by JSON)
   * when there is no new data.
   */
  readonly latestOffset: (start: Offset, limit: ReadLimit) => Effect.Effect<Offset, ConnectorError>
  /** Exactly the rows in `(start, end]`, the same every time it is asked. */
  readonly getBatch: (start: Offset, end: Offset) => Effect.Effect<ReadonlyArray<InternalRow>, ConnectorError>
  /** Everything up to `end` is committed: the source may forget it. */
  readonly commit: (end: Offset) => Effect.Effect<void, ConnectorError>
  /** Validates an offset read back from the offset log. */
  readonly decodeOffset: (json: unknown) => Effect.Effect<Offset, ConnectorError>
  /** `Trigger.AvailableNow`: fix the offset everything up to which is to be processed. */
  readonly prepareForTriggerAvailableNow?: () => Effect.Effect<void, ConnectorError>
  /**
   * Resolves when the source may have new data (for the default trigger, so that the engine
   * does not poll). It must capture its signal when called, not when the effect runs: the
   * engine calls it, then asks `latestOffset` again, then waits. Sources that cannot tell omit
   * it; the engine then polls on the clock.
   */
  readonly awaitData?: () => Effect.Effect<void>
  /** Releases what the source holds (connections, files). */
  readonly stop: () => Effect.Effect<void>
}

/** What a source connector gets when a query starts. */
export interface SourceContext {
  readonly options: Options
  readonly schema: StructType
  /** The folder for this source's own bookkeeping (`<checkpoint>/sources/<i>`). */
  readonly metadataPath: string
  /** Spark's conf, for keys like `spark.sql.streaming.schemaInference`. */
  readonly conf: ReadonlyMap<string, string>
}

/** A streaming source format (`readStream.format(name)`). */
export interface SourceFormat {
  readonly name: string
  /**
   * The schema rows will have, from the user's schema and the options; checked when `load()`
   * is called (so `df.columns` is known) and again at `start()`.
   */
  readonly schema: (userSchema: StructType | undefined, options: Options) => StructType | AnalysisError
  /** Creates the source when a query starts; invalid options fail here with a clear error. */
  readonly create: (ctx: SourceContext) => Effect.Effect<MicroBatchSource, AnalysisError | ConnectorError>
}

/** One micro-batch handed to a sink. */
export interface SinkBatch {
  readonly batchId: number
  readonly schema: StructType
  readonly rows: ReadonlyArray<InternalRow>
  readonly outputMode: OutputMode
}

/**
 * A sink. `addBatch` must be idempotent per batch id: a batch id it has already written is
 * ignored (a restart may replay the last batch).
 */
export interface Sink {
  /** What progress reports as `sink.description`, e.g. `MemorySink`. */
  readonly description: string
  readonly addBatch: (batch: SinkBatch) => Effect.Effect<void, ConnectorError>
  readonly stop: () => Effect.Effect<void>
}

/** Session tables a sink may fill (the memory sink). */
export interface SessionTables {
  /** Appends rows to table `name` (creating it with `schema`), or replaces its rows. */
  readonly write: (name: string, schema: StructType, rows: ReadonlyArray<InternalRow>, replace: boolean) => void
  /** The batch ids the table has already received (kept across restarts in the same session). */
  readonly seenBatches: (name: string) => Set<number>
}

/** What a sink connector gets when a query starts. */
export interface SinkContext {
  readonly options: Options
  readonly schema: StructType
  readonly outputMode: OutputMode
  readonly queryName: string | undefined
  readonly queryId: string
  readonly partitionColumns: ReadonlyArray<string>
  /** The checkpoint folder of the query (for sinks with their own bookkeeping). */
  readonly checkpointPath: string
  readonly tables: SessionTables
}

/** A streaming sink format (`writeStream.format(name)`). */
export interface SinkFormat {
  readonly name: string
  /** Output modes this sink accepts (Spark: the file sink only `append`). */
  readonly supportedOutputModes: ReadonlyArray<OutputMode>
  readonly create: (ctx: SinkContext) => Effect.Effect<Sink, AnalysisError | ConnectorError>
}

const sourceFormats = new Map<string, SourceFormat>()
const sinkFormats = new Map<string, SinkFormat>()

export const registerSourceFormat = (f: SourceFormat): void => {
  sourceFormats.set(f.name.toLowerCase(), f)
}

export const registerSinkFormat = (f: SinkFormat): void => {
  sinkFormats.set(f.name.toLowerCase(), f)
}

export const lookupSourceFormat = (name: string): SourceFormat | undefined => sourceFormats.get(name.toLowerCase())

export const lookupSinkFormat = (name: string): SinkFormat | undefined => sinkFormats.get(name.toLowerCase())

export const sourceFormatNames = (): ReadonlyArray<string> => [...sourceFormats.keys()].sort()

export const sinkFormatNames = (): ReadonlyArray<string> => [...sinkFormats.keys()].sort()
