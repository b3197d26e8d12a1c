/**
 * The state data sources: `spark.read.format("statestore")` reads one store of a stateful
 * operator at a committed batch as a batch DataFrame, and `format("state-metadata")` lists a
 * checkpoint's operators and stores (Spark's `StateDataSource` and `StateMetadataSource`).
 *
 * Both read only the checkpoint: the operator metadata the engine writes when a query starts
 * (`<checkpoint>/state/<operatorId>/_metadata/metadata`, Spark's `OperatorStateMetadataV1`
 * text, and `…/_metadata/reader`, tributary's description of how to decode each store), the
 * commit log, and the state store itself through the session's provider. They work while the
 * query runs: a committed version never changes.
 *
 * @example
 * ```ts
 * const state = yield* spark.read.format("statestore").option("batchId", 3).load(checkpoint)
 * yield* state.select("key.word", "value.count").show()
 * yield* spark.read.format("state-metadata").load(checkpoint).pipe(Effect.flatMap((df) => df.show()))
 * ```
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { CheckpointFileSystem } from "../../core/CheckpointFileSystem.ts"
import * as T from "../../core/DataType.ts"
import { AnalysisError, type CheckpointError, StateStoreError } from "../../core/Errors.ts"
import { type Options, option } from "../../core/Formats.ts"
import * as MetadataLog from "../../core/MetadataLog.ts"
import type { InternalRow } from "../../core/Row.ts"
import type { StateStoreProvider } from "../../state/StateStore.ts"
import { builtInReaderSpec, decodeEntries, type StoreReaderSpec } from "../physical/stateful/StateReaderSpec.ts"
import type { StatefulOperatorInfo } from "../physical/stateful/StatefulOperators.ts"

/** The conf key under which the offset log records which provider wrote a checkpoint's state. */
export const PROVIDER_CONF = "spark.sql.streaming.stateStore.providerClass"

/** A batch result: the schema and its internal rows. */
export interface StateTable {
  readonly schema: T.StructType
  readonly rows: ReadonlyArray<InternalRow>
}

const metadataDir = (fs: CheckpointFileSystem, checkpoint: string, operatorId: number) =>
  fs.join(checkpoint, "state", String(operatorId), "_metadata")

/**
 * Writes every stateful operator's metadata under the checkpoint (before the first batch of a
 * run; rewriting it on restart is harmless, as the plan's state is checked to be compatible).
 *
 * @since 0.1.0
 */
export const writeOperatorMetadata = (
  fs: CheckpointFileSystem,
  checkpoint: string,
  operators: ReadonlyArray<StatefulOperatorInfo>
): Effect.Effect<void, CheckpointError> =>
  Effect.forEach(
    operators,
    (op) => {
      const dir = metadataDir(fs, checkpoint, op.operatorId)
      const spark = {
        operatorInfo: { operatorId: op.operatorId, operatorName: op.name },
        stateStoreInfo: op.stores.map((s) => ({ storeName: s.storeName, numColsPrefixKey: 0, numPartitions: 1 }))
      }
      const specs: ReadonlyArray<StoreReaderSpec> = op.stores.map(
        (s) =>
          builtInReaderSpec(op.node, s.storeName) ?? {
            storeName: s.storeName,
            schema: s.schema,
            decoder: { kind: "generic" }
          }
      )
      return Effect.andThen(fs.mkdirs(dir), () =>
        Effect.andThen(fs.writeAtomic(fs.join(dir, "metadata"), `v1\n${JSON.stringify(spark)}`, true), () =>
          fs.writeAtomic(fs.join(dir, "reader"), JSON.stringify({ operatorName: op.name, stores: specs }), true)
        )
      )
    },
    { discard: true }
  )

const optionError = (errorClass: string, message: string) =>
  new AnalysisError({ reason: "InvalidArgument", errorClass, message: `[${errorClass}] ${message}` })

const isNegative = (name: string) =>
  optionError("STDS_INVALID_OPTION_VALUE.IS_NEGATIVE", `Invalid value for source option '${name}': must be zero or positive.`)

const withMessage = (name: string, message: string) =>
  optionError("STDS_INVALID_OPTION_VALUE.WITH_MESSAGE", `Invalid value for source option '${name}': ${message}`)

const integerOption = (options: Options, name: string): number | undefined | AnalysisError => {
  const raw = option(options, name)
  if (raw === undefined) return undefined
  const n = Number(raw.trim())
  return raw.trim() === "" || !Number.isSafeInteger(n) ? withMessage(name, `'${raw}' is not an integer.`) : n
}

/** Spark's `StateSourceOptions` for the options tributary supports. */
interface StateSourceOptions {
  readonly checkpoint: string
  readonly batchId: number | undefined
  readonly operatorId: number
  readonly storeName: string
  /** A stream-stream join's side: its rows, read from `<side>-keyWithIndexToValue`. */
  readonly joinSide: "left" | "right" | undefined
  readonly readChangeFeed: { readonly start: number; readonly end: number | undefined } | undefined
}

const parseOptions = (paths: ReadonlyArray<string>, options: Options): StateSourceOptions | AnalysisError => {
  const checkpoint = paths[0] ?? option(options, "path")
  if (checkpoint === undefined) return optionError("STDS_REQUIRED_OPTION_UNSPECIFIED", "'path' must be specified.")
  const operatorId = integerOption(options, "operatorId")
  if (operatorId instanceof AnalysisError) return operatorId
  if (operatorId !== undefined && operatorId < 0) return isNegative("operatorId")
  const storeName = (option(options, "storeName") ?? "default").trim()
  if (storeName === "") {
    return optionError("STDS_INVALID_OPTION_VALUE.IS_EMPTY", "Invalid value for source option 'storeName': cannot be empty.")
  }
  const rawSide = option(options, "joinSide")
  if (rawSide !== undefined && rawSide !== "none" && rawSide !== "left" && rawSide !== "right") {
    return withMessage("joinSide", "Valid values are left,right,none")
  }
  const joinSide = rawSide === "left" || rawSide === "right" ? rawSide : undefined
  if (joinSide !== undefined && storeName !== "default") {
    return optionError("STDS_CONFLICT_OPTIONS", "The options ['joinSide', 'storeName'] cannot be specified together. Please specify the one.")
  }
  for (const name of ["snapshotStartBatchId", "snapshotPartitionId", "stateVarName"]) {
    if (option(options, name) !== undefined) return withMessage(name, "this option is not supported by tributary.")
  }
  const batchId = integerOption(options, "batchId")
  if (batchId instanceof AnalysisError) return batchId
  const changeStart = integerOption(options, "changeStartBatchId")
  if (changeStart instanceof AnalysisError) return changeStart
  const changeEnd = integerOption(options, "changeEndBatchId")
  if (changeEnd instanceof AnalysisError) return changeEnd
  const readChangeFeed = (option(options, "readChangeFeed") ?? "false").trim().toLowerCase() === "true"
  if (readChangeFeed) {
    if (joinSide !== undefined) {
      return optionError("STDS_CONFLICT_OPTIONS", "The options ['joinSide', 'readChangeFeed'] cannot be specified together. Please specify the one.")
    }
    if (batchId !== undefined) {
      return optionError("STDS_CONFLICT_OPTIONS", "The options ['batchId', 'readChangeFeed'] cannot be specified together. Please specify the one.")
    }
    if (changeStart === undefined) {
      return optionError("STDS_REQUIRED_OPTION_UNSPECIFIED", "'changeStartBatchId' must be specified.")
    }
    if (changeStart < 0) return isNegative("changeStartBatchId")
  } else {
    if (changeStart !== undefined) {
      return withMessage("changeStartBatchId", "Only specify this option when readChangeFeed is set to true.")
    }
    if (changeEnd !== undefined) {
      return withMessage("changeEndBatchId", "Only specify this option when readChangeFeed is set to true.")
    }
    if (batchId !== undefined && batchId < 0) return isNegative("batchId")
  }
  return {
    checkpoint,
    batchId,
    operatorId: operatorId ?? 0,
    storeName,
    joinSide,
    readChangeFeed: readChangeFeed ? { start: changeStart as number, end: changeEnd } : undefined
  }
}

const lastCommittedBatch = (fs: CheckpointFileSystem, checkpoint: string) =>
  Effect.flatMap(MetadataLog.commitLog(fs, checkpoint).getLatest(), (latest) =>
    latest === undefined
      ? Effect.fail(
          optionError(
            "STDS_COMMITTED_BATCH_UNAVAILABLE",
            `No committed batch found, checkpoint location: ${checkpoint}. Ensure that the query has run and committed any microbatch before stopping.`
          )
        )
      : Effect.succeed(latest[0])
  )

/** Fails when the checkpoint's state was written by another provider than the session's. */
const checkProvider = (
  fs: CheckpointFileSystem,
  checkpoint: string,
  batchId: number,
  provider: StateStoreProvider
): Effect.Effect<void, AnalysisError | CheckpointError> =>
  Effect.flatMap(MetadataLog.offsetLog(fs, checkpoint).get(batchId), (seq) => {
    if (seq === undefined) {
      return Effect.fail(
        optionError(
          "STDS_OFFSET_LOG_UNAVAILABLE",
          `The offset log for ${batchId} does not exist, checkpoint location: ${checkpoint}.`
        )
      )
    }
    const written = seq.metadata.conf[PROVIDER_CONF]
    return written === undefined || written === provider.name
      ? Effect.void
      : Effect.fail(
          new AnalysisError({
            reason: "InvalidArgument",
            message: `The state of ${checkpoint} was written by the '${written}' state store provider, but this session uses '${provider.name}'. Read it from a session made with Session.layer({ stateStore: "${written}" }).`
          })
        )
  })

const readSpecs = (
  fs: CheckpointFileSystem,
  checkpoint: string,
  operatorId: number,
  batchId: number
): Effect.Effect<ReadonlyArray<StoreReaderSpec>, AnalysisError | CheckpointError> => {
  const path = fs.join(metadataDir(fs, checkpoint, operatorId), "reader")
  return Effect.flatMap(fs.readText(path), (text) => {
    const parsed = text === undefined ? undefined : safeParse(text)
    const stores = (parsed as { stores?: unknown } | undefined)?.stores
    if (!Array.isArray(stores)) {
      return Effect.fail(
        optionError(
          "STDS_FAILED_TO_READ_OPERATOR_METADATA",
          `Failed to read the operator metadata for checkpointLocation=${checkpoint} and batchId=${batchId}. Either the file does not exist, or the file is corrupted. Rerun the streaming query to construct the operator metadata, and report to the corresponding communities or vendors if the error persists. (No stateful operator ${operatorId}: ${path}.)`
        )
      )
    }
    return Effect.succeed(stores as ReadonlyArray<StoreReaderSpec>)
  })
}

const safeParse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const decode = (spec: StoreReaderSpec, entries: ReadonlyArray<readonly [string, unknown]>, operatorId: number) =>
  Effect.try({
    try: () => decodeEntries(spec, entries),
    catch: (e) =>
      new StateStoreError({
        reason: "Corrupt",
        operatorId,
        message: `The state of operator ${operatorId} store '${spec.storeName}' cannot be read: ${e instanceof Error ? e.message : String(e)}`
      })
  })

/**
 * `spark.read.format("statestore").load(checkpoint)`: the rows of one store at a committed batch
 * (`batchId`, default the last committed one), as `key`, `value` and `partition_id` columns; with
 * `readChangeFeed`, the changes of each batch from `changeStartBatchId` to `changeEndBatchId`
 * as `batch_id`, `change_type` (`update` or `delete`), `key`, `value`, `partition_id`.
 *
 * @since 0.1.0
 */
export const readStateStore = (
  fs: CheckpointFileSystem,
  provider: StateStoreProvider,
  paths: ReadonlyArray<string>,
  options: Options
): Effect.Effect<StateTable, AnalysisError | CheckpointError | StateStoreError> =>
  Effect.gen(function* () {
    const opts = parseOptions(paths, options)
    if (opts instanceof AnalysisError) return yield* opts
    const checkpoint = fs.resolve(opts.checkpoint)
    const feed = opts.readChangeFeed
    let batchId: number
    if (feed !== undefined) {
      const end = feed.end ?? (yield* lastCommittedBatch(fs, checkpoint))
      if (end < feed.start) {
        return yield* withMessage(
          "changeEndBatchId",
          `changeEndBatchId cannot be smaller than changeStartBatchId. Please check the input to changeEndBatchId, or if you are using its default value, make sure that changeStartBatchId is less than ${end}.`
        )
      }
      batchId = end
    } else batchId = opts.batchId ?? (yield* lastCommittedBatch(fs, checkpoint))
    yield* checkProvider(fs, checkpoint, batchId, provider)
    const specs = yield* readSpecs(fs, checkpoint, opts.operatorId, batchId)
    const storeName = opts.joinSide === undefined ? opts.storeName : `${opts.joinSide}-keyWithIndexToValue`
    const spec = specs.find((s) => s.storeName === storeName)
    if (spec === undefined && opts.joinSide !== undefined) {
      return yield* withMessage(
        "joinSide",
        `operator ${opts.operatorId} is not a stream-stream join (its stores are ${specs.map((s) => `'${s.storeName}'`).join(", ")}).`
      )
    }
    if (spec === undefined) {
      return yield* withMessage(
        "storeName",
        `operator ${opts.operatorId} has no store '${opts.storeName}'; its stores are ${specs.map((s) => `'${s.storeName}'`).join(", ")}.`
      )
    }
    const id = { checkpoint, operatorId: opts.operatorId, storeName }
    const readVersion = (version: number) =>
      version < 0 ? Effect.succeed([] as ReadonlyArray<readonly [string, unknown]>) : provider.read({ ...id, version })
    if (feed === undefined && opts.joinSide !== undefined) {
      // Spark's `StreamStreamJoinStatePartitionReader`: the side's rows, keyed by the join key —
      // the store's key without its `index`, its value without the `matched` flag.
      const decoded = yield* decode(spec, yield* readVersion(batchId), opts.operatorId)
      const keyFields = decoded.keySchema.fields.slice(0, -1)
      const valueFields = decoded.valueSchema.fields.slice(0, -1)
      return {
        schema: T.struct([
          T.field("key", T.struct(keyFields), true),
          T.field("value", T.struct(valueFields), true),
          T.field("partition_id", T.IntegerType, false)
        ]),
        rows: decoded.rows.map((r) => [
          (r[0] as ReadonlyArray<unknown>).slice(0, -1),
          (r[1] as ReadonlyArray<unknown>).slice(0, -1),
          r[2]
        ])
      }
    }
    if (feed === undefined) {
      const decoded = yield* decode(spec, yield* readVersion(batchId), opts.operatorId)
      return {
        schema: T.struct([
          T.field("key", decoded.keySchema, true),
          T.field("value", decoded.valueSchema, true),
          T.field("partition_id", T.IntegerType, false)
        ]),
        rows: decoded.rows
      }
    }
    // The change feed: each batch's puts and removals, found by comparing consecutive versions.
    const rows: Array<InternalRow> = []
    let previous = new Map((yield* readVersion(feed.start - 1)).map(([k, v]) => [k, JSON.stringify(v)] as const))
    let keySchema = spec.schema.keySchema
    let valueSchema = spec.schema.valueSchema
    for (let b = feed.start; b <= batchId; b++) {
      const entries = yield* readVersion(b)
      const current = new Map(entries.map(([k, v]) => [k, JSON.stringify(v)] as const))
      const updated = entries.filter(([k]) => previous.get(k) !== current.get(k))
      const removed = [...previous.keys()].filter((k) => !current.has(k))
      const up = yield* decode(spec, updated, opts.operatorId)
      const gone = yield* decode(
        spec,
        removed.map((k) => [k, JSON.parse(previous.get(k) as string)] as const),
        opts.operatorId
      )
      keySchema = up.keySchema
      valueSchema = up.valueSchema
      for (const r of up.rows) rows.push([b, "update", r[0], r[1], 0])
      for (const r of gone.rows) rows.push([b, "delete", r[0], null, 0])
      previous = current
    }
    return {
      schema: T.struct([
        T.field("batch_id", T.LongType, false),
        T.field("change_type", T.StringType, false),
        T.field("key", keySchema, true),
        T.field("value", valueSchema, true),
        T.field("partition_id", T.IntegerType, false)
      ]),
      rows
    }
  })

/**
 * `spark.read.format("state-metadata").load(checkpoint)`: one row per operator and store, with
 * Spark's columns `operatorId`, `operatorName`, `stateStoreName`, `numPartitions`, `minBatchId`,
 * `maxBatchId` (the committed batches) and `operatorProperties`.
 *
 * @since 0.1.0
 */
export const readStateMetadata = (
  fs: CheckpointFileSystem,
  paths: ReadonlyArray<string>,
  options: Options
): Effect.Effect<StateTable, AnalysisError | CheckpointError> =>
  Effect.gen(function* () {
    const raw = paths[0] ?? option(options, "path")
    if (raw === undefined) return yield* optionError("STDS_REQUIRED_OPTION_UNSPECIFIED", "'path' must be specified.")
    const checkpoint = fs.resolve(raw)
    const batches = yield* MetadataLog.commitLog(fs, checkpoint).batchIds()
    const minBatchId = batches.length > 0 ? batches[0] : -1
    const maxBatchId = batches.length > 0 ? batches[batches.length - 1] : -1
    const operatorIds = (yield* fs.list(fs.join(checkpoint, "state")))
      .filter((n) => /^\d+$/.test(n))
      .map(Number)
      .sort((a, b) => a - b)
    const rows: Array<InternalRow> = []
    for (const id of operatorIds) {
      const path = fs.join(metadataDir(fs, checkpoint, id), "metadata")
      const text = yield* fs.readText(path)
      if (text === undefined) continue
      const [version, json] = [text.slice(0, text.indexOf("\n")), safeParse(text.slice(text.indexOf("\n") + 1))]
      const meta = json as
        | {
            operatorInfo?: { operatorId?: number; operatorName?: string }
            stateStoreInfo?: Array<{ storeName?: string; numPartitions?: number }>
          }
        | undefined
      if (version !== "v1" || meta?.operatorInfo === undefined || !Array.isArray(meta.stateStoreInfo)) {
        return yield* optionError(
          "STDS_FAILED_TO_READ_OPERATOR_METADATA",
          `Failed to read the operator metadata for checkpointLocation=${checkpoint} and batchId=${maxBatchId}. Either the file does not exist, or the file is corrupted. Rerun the streaming query to construct the operator metadata, and report to the corresponding communities or vendors if the error persists. (${path})`
        )
      }
      for (const s of meta.stateStoreInfo) {
        rows.push([
          meta.operatorInfo.operatorId ?? id,
          meta.operatorInfo.operatorName ?? "",
          s.storeName ?? "default",
          s.numPartitions ?? 1,
          minBatchId,
          maxBatchId,
          ""
        ])
      }
    }
    return {
      schema: T.struct([
        T.field("operatorId", T.LongType, true),
        T.field("operatorName", T.StringType, true),
        T.field("stateStoreName", T.StringType, true),
        T.field("numPartitions", T.IntegerType, true),
        T.field("minBatchId", T.LongType, true),
        T.field("maxBatchId", T.LongType, true),
        T.field("operatorProperties", T.StringType, true)
      ]),
      rows
    }
  })
