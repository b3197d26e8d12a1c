/**
 * The streaming contracts between the engine and connectors: micro-batch sources, continuous
 * sources and writes (`Trigger.Continuous`), sinks, read limits, output modes, and the registry
 * that names them (`readStream.format("rate")`, `writeStream.format("console")`).
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
import type { AnalysisError, CheckpointError, ConnectorError } from "./Errors.ts"
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
  /**
   * Everything up to `end` is committed: the source may forget it. A restart commits the last
   * committed batch's end again; a source with bookkeeping of its own in the checkpoint (the file
   * source's log) fails then with a `CheckpointError` naming the file when that bookkeeping no
   * longer reaches `end`.
   */
  readonly commit: (end: Offset) => Effect.Effect<void, ConnectorError | CheckpointError>
  /** Validates an offset read back from the offset log. */
  readonly decodeOffset: (json: unknown) => Effect.Effect<Offset, ConnectorError>
  /**
   * Spark's `SupportsAdmissionControl.reportLatestOffset`: the newest offset the source knows
   * of, whatever the read limit (for `Trigger.AvailableNow`, the end it will stop at). Progress
   * reports it as `sources[].latestOffset`; sources that cannot tell omit it.
   */
  readonly reportLatestOffset?: () => Offset | undefined
  /**
   * Spark's `ReportsSourceMetrics.metrics(latestConsumedOffset)`: custom metrics progress
   * reports as `sources[].metrics` (the Kafka source's `minOffsetsBehindLatest`,
   * `maxOffsetsBehindLatest`, `avgOffsetsBehindLatest`). Sources without any omit it.
   */
  readonly metrics?: (latestConsumedOffset: Offset | undefined) => Readonly<Record<string, string>>
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
  /**
   * In-process sources that serve both engines from one object (`MemoryStream`): the same data
   * read continuously (Spark's `ContinuousMemoryStream`). Connectors give `SourceFormat.continuous`
   * instead.
   */
  readonly asContinuous?: () => ContinuousSource
}

// ---------------------------------------------------------------------------------------------
// Continuous processing (Spark's `ContinuousStream`, `ContinuousPartitionReader`)
// ---------------------------------------------------------------------------------------------

/** The position of one partition of a continuous source (Spark's `PartitionOffset`): a JSON value. */
export type PartitionOffset = unknown

/**
 * One partition of a continuous source, read by one long-running task. Reading is two calls so
 * that a task never blocks while holding rows: `poll` hands over what is there now (a plain
 * synchronous call, never an Effect per row) and `awaitData` waits until there may be more.
 */
export interface ContinuousPartitionReader {
  /**
   * The rows available at `nowMs` (the clock's time), at most `max`, in order; the reader's
   * position moves past them. An empty array when nothing is due.
   */
  readonly poll: (nowMs: number, max: number) => ReadonlyArray<InternalRow>
  /** The position after the last row `poll` returned (Spark's `ContinuousPartitionReader.getOffset`). */
  readonly offset: () => PartitionOffset
  /**
   * Resolves when `poll` may return rows (data arrived, or the next row falls due on the clock).
   * It captures its signal when called, so data that arrives before the effect runs is not missed.
   */
  readonly awaitData: (nowMs: number) => Effect.Effect<void>
  readonly close: () => Effect.Effect<void>
}

/**
 * A source that can be read continuously (Spark's `ContinuousStream`): one reader per partition,
 * each pushing its records to the query as they arrive. The engine asks every partition for its
 * position at each epoch marker, merges them into one offset per source (`mergeOffsets`) and
 * writes that to the offset log; a restart decodes the last committed one (`decodeOffset`) and
 * gives it to `createReaders`.
 */
export interface ContinuousSource {
  /** What progress reports as `sources[].description`. */
  readonly description: string
  readonly schema: StructType
  /** Where a query without a checkpoint starts (Spark's `initialOffset`). */
  readonly initialOffset: () => Effect.Effect<Offset, ConnectorError>
  /** One reader per partition, each starting after `start` (Spark's `planInputPartitions` + `createReader`). */
  readonly createReaders: (start: Offset) => Effect.Effect<ReadonlyArray<ContinuousPartitionReader>, ConnectorError>
  /** One offset from every partition's position, in partition order (Spark's `mergeOffsets`). */
  readonly mergeOffsets: (offsets: ReadonlyArray<PartitionOffset>) => Offset
  /** Validates an offset read back from the offset log (Spark's `deserializeOffset`). */
  readonly decodeOffset: (json: unknown) => Effect.Effect<Offset, ConnectorError>
  /** Everything up to `end` is committed. */
  readonly commit: (end: Offset) => Effect.Effect<void, ConnectorError>
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
  readonly schema: (
    userSchema: StructType | undefined,
    options: Options,
    /** The session's conf (Spark's `spark.sql.streaming.schemaInference` and the like). */
    conf?: ReadonlyMap<string, string>
  ) => StructType | AnalysisError
  /** Creates the source when a query starts; invalid options fail here with a clear error. */
  readonly create: (ctx: SourceContext) => Effect.Effect<MicroBatchSource, AnalysisError | ConnectorError>
  /**
   * Creates the source for `Trigger.Continuous` (Spark's `CONTINUOUS_READ` capability). Formats
   * without it fail such a query at `start()` with "Data source <name> does not support
   * continuous processing."
   */
  readonly continuous?: (ctx: SourceContext) => Effect.Effect<ContinuousSource, AnalysisError | ConnectorError>
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
  /**
   * Record-at-a-time writes for `Trigger.Continuous` (Spark's `StreamingWrite`). A sink without
   * it still runs continuously: its rows are gathered per epoch and handed to `addBatch` with
   * the epoch as batch id when the epoch commits (what Spark's memory and console sinks do).
   */
  readonly continuousWrite?: ContinuousWrite
}

/** Writes one partition's rows of one epoch as they arrive (Spark's `DataWriter`). */
export interface ContinuousDataWriter {
  /** A few rows, just processed; called many times per epoch. */
  readonly write: (rows: ReadonlyArray<InternalRow>) => Effect.Effect<void, ConnectorError>
  /** The partition reached the epoch's end: returns the message `ContinuousWrite.commit` gets. */
  readonly commit: () => Effect.Effect<unknown, ConnectorError>
  /** The task failed or the query stopped before the epoch ended. */
  readonly abort: (cause: unknown) => Effect.Effect<void>
}

/** A sink's continuous writes (Spark's `StreamingWrite` with its `StreamingDataWriterFactory`). */
export interface ContinuousWrite {
  readonly createWriter: (partitionId: number, epochId: number) => Effect.Effect<ContinuousDataWriter, ConnectorError>
  /** Every partition committed `epochId` (messages in partition order); called once per epoch, in order. */
  readonly commit: (epochId: number, messages: ReadonlyArray<unknown>) => Effect.Effect<void, ConnectorError>
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
  /** Spark's conf, for keys like `spark.sql.streaming.fileSink.log.compactInterval`. */
  readonly conf?: ReadonlyMap<string, string> | undefined
}

/**
 * A streaming sink format (`writeStream.format(name)`). Besides `create`, it declares what the
 * sink can do, and the query start checks a query against that (never against the sink's name):
 * the output modes it takes, whether it takes batch ids as Spark's V1 sinks do, and whether it
 * runs under `Trigger.Continuous`.
 */
export interface SinkFormat {
  readonly name: string
  /** Output modes this sink accepts (Spark: the file sink only `append`). */
  readonly supportedOutputModes: ReadonlyArray<OutputMode>
  /**
   * Spark's V1 `Sink`, handed each micro-batch with its batch id (`addBatch(batchId, data)`),
   * as Spark's file sink is: its `partitionBy` columns are resolved against the query's output
   * columns (by `spark.sql.caseSensitive`; Spark's `DataStreamWriter.normalizedParCols`), and a
   * column that is not there fails `start()`. A sink Spark writes through DataSource V2's
   * `STREAMING_WRITE` (memory, console, noop, kafka) says `false`: its partition columns reach it
   * as given. Omitted: `true`, as for any Spark `StreamSinkProvider`.
   */
  readonly batchIdAware?: boolean
  /**
   * Whether a query with `Trigger.Continuous` may write here: through the sink's
   * `continuousWrite`, or whole epochs handed to `addBatch`. A sink that says `false` (the file
   * sinks, Spark's V1 `FileStreamSink`) gets the micro-batch checks, then Spark's refusal
   * `Unknown type of trigger: ContinuousTrigger(…)`. Omitted: `true`.
   */
  readonly continuous?: boolean
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
