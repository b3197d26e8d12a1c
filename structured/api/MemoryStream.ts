/**
 * `MemoryStream`: a replayable in-process streaming source for tests, notebooks and demos,
 * as Spark's `MemoryStream`. Every `addData` call is one offset (0, 1, 2, …; `-1` before any
 * data); a batch reads the rows of the offsets after the last committed one.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { MemoryStream } from "tributary-streaming"
 * const program = Effect.gen(function* () {
 *   const input = yield* MemoryStream.make(Schema.Struct({ word: Schema.String }))
 *   const offset = yield* input.addData([{ word: "a" }, { word: "b" }])   // 0
 *   return input.toDF()
 * })
 * ```
 * @since 0.1.0
 */
import { Deferred, Effect, Schema } from "effect"
import * as T from "../../core/DataType.ts"
import { ConnectorError } from "../../core/Errors.ts"
import * as E from "../../core/Expression.ts"
import * as Plan from "../../core/LogicalPlan.ts"
import { type InternalRow, toInternal } from "../../core/Row.ts"
import { isStructSchema, structTypeOf } from "../../core/RowSchema.ts"
import type {
  ContinuousPartitionReader,
  ContinuousSource,
  MicroBatchSource,
  Offset,
  PartitionOffset
} from "../../core/Streaming.ts"
import { DataFrame } from "./DataFrame.ts"
import { Session } from "./Session.ts"
import type { SessionState } from "../contracts/SessionState.ts"

let nextStreamId = 0

/** Spark's `ContinuousMemoryStream` default partition count: `addData` deals rows to 2 partitions. */
export const CONTINUOUS_MEMORY_PARTITIONS = 2

/** A continuous memory partition's position (Spark's `ContinuousMemoryStreamPartitionOffset`). */
interface MemoryPartitionOffset {
  readonly partition: number
  readonly numProcessed: number
}

/** Spark's `ContinuousMemoryStreamOffset` JSON: partition (a string key) to rows read, `{"0":2,"1":1}`. */
const decodeContinuousOffset = (json: unknown): Readonly<Record<string, number>> | undefined => {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return undefined
  for (const [k, v] of Object.entries(json as Record<string, unknown>)) {
    if (!/^\d+$/.test(k) || !Number.isSafeInteger(v) || (v as number) < 0) return undefined
  }
  return json as Readonly<Record<string, number>>
}

const badOffset = (json: unknown): ConnectorError =>
  new ConnectorError({
    connector: "memory",
    domain: "user",
    retryable: false,
    message: `MemoryStream offsets are integers; the checkpoint has ${JSON.stringify(json)}.`
  })

/**
 * Spark's `MemoryStream`: a streaming source fed from the program (`addData`), for tests and
 * notebooks; its offsets are the number of rows added, so a query restarted from its checkpoint
 * continues where it stopped.
 *
 * @since 0.1.0
 */
export class MemoryStream<A> {
  readonly id: number
  readonly schema: T.StructType
  readonly output: ReadonlyArray<E.AttributeReference>
  readonly source: MicroBatchSource
  readonly #state: SessionState
  readonly #convert: (row: unknown) => InternalRow
  /** The rows of each `addData` call, by offset. */
  readonly #batches: Array<ReadonlyArray<InternalRow>> = []
  #dataArrived: Deferred.Deferred<void> = Deferred.makeUnsafe<void>()
  readonly #sourceKey: string
  /**
   * The rows dealt to the continuous partitions (Spark's `ContinuousMemoryStream.records`), made
   * the first time the stream is read continuously and kept up to date by `addData` after that.
   */
  #partitions: Array<Array<InternalRow>> | undefined

  private constructor(state: SessionState, schema: T.StructType, wrapValue: boolean) {
    this.id = nextStreamId++
    this.#state = state
    this.schema = schema
    this.output = schema.fields.map((f) => E.attribute(f.name, f.dataType, f.nullable))
    const conv = toInternal(schema) as (v: unknown) => InternalRow
    this.#convert = wrapValue ? (v) => conv({ value: v }) : conv
    this.#sourceKey = `memory-${this.id}`
    const batches = this.#batches
    /**
     * Spark's `MemoryStream.commit` trims the batches a query committed: they are gone for every
     * reader (a new query over the stream starts at the first batch still held), and their rows
     * can be collected. Offsets stay absolute. Spark commits a source's offsets of batch N − 1
     * only once batch N is logged, so the last committed batch stays readable (a batch re-run
     * after a lost commit finds its rows): the engine commits at the end of each batch, so the
     * trim lags one commit behind.
     */
    let committedThrough = -1
    let previousCommit = -1
    this.source = {
      description: `MemoryStream[${this.output.map((a) => `${a.name}#${a.exprId}`).join(",")}]`,
      schema,
      initialOffset: () => Effect.succeed(-1),
      defaultReadLimit: () => ({ _tag: "AllAvailable" }),
      latestOffset: () => Effect.sync(() => batches.length - 1),
      getBatch: (start: Offset, end: Offset) =>
        Effect.sync(() => {
          const from = Math.max((start as number) + 1, committedThrough + 1)
          const to = end as number
          // One addData per batch is the common case: hand its rows over without copying.
          if (from === to) return batches[from] ?? []
          return batches.slice(from, to + 1).flat()
        }),
      commit: (end: Offset) =>
        Effect.sync(() => {
          const upTo = Math.min(previousCommit, batches.length - 1)
          for (let i = committedThrough + 1; i <= upTo; i++) batches[i] = []
          if (upTo > committedThrough) committedThrough = upTo
          previousCommit = Math.max(previousCommit, end as number)
        }),
      decodeOffset: (json: unknown) =>
        typeof json === "number" && Number.isInteger(json) && json >= -1
          ? Effect.succeed(json)
          : Effect.fail(badOffset(json)),
      // Captures the current signal when called (not when run), so data added in between is seen.
      awaitData: () => Deferred.await(this.#dataArrived),
      stop: () => Effect.void,
      asContinuous: () => this.continuousSource()
    }
    state.memorySources.set(this.#sourceKey, this.source)
  }

  /**
   * A MemoryStream of rows typed by `schema`. A struct schema gives its columns; any other
   * schema gives one column `value`, as Spark's `MemoryStream[Int]`.
   */
  static make<S extends Schema.Top>(schema: S): Effect.Effect<MemoryStream<S["Type"]>, never, Session> {
    return Effect.map(Session, (spark) => {
      const st = structTypeOf(schema) ?? T.struct([T.field("value", T.StringType)])
      return new MemoryStream<S["Type"]>(spark.state, st, !isStructSchema(schema))
    })
  }

  /** Adds rows as one new offset and returns that offset. */
  addData(rows: Iterable<A>): Effect.Effect<number> {
    return Effect.sync(() => {
      const converted: Array<InternalRow> = []
      for (const r of rows) converted.push(this.#convert(r))
      this.#batches.push(converted)
      if (this.#partitions !== undefined) this.deal(converted)
      const arrived = this.#dataArrived
      this.#dataArrived = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(arrived, Effect.void)
      return this.#batches.length - 1
    })
  }

  /** Spark's `ContinuousMemoryStream.addData`: row `i` of one call goes to partition `i % 2`. */
  private deal(rows: ReadonlyArray<InternalRow>): void {
    const parts = this.#partitions!
    for (let i = 0; i < rows.length; i++) parts[i % parts.length].push(rows[i])
  }

  /**
   * The stream read continuously (Spark's `ContinuousMemoryStream`): rows dealt to
   * 2 partitions, each read by its own task as soon as `addData` adds them. Offsets are the
   * rows read per partition, `{"0":2,"1":1}`.
   */
  private continuousSource(): ContinuousSource {
    if (this.#partitions === undefined) {
      this.#partitions = Array.from({ length: CONTINUOUS_MEMORY_PARTITIONS }, () => [])
      for (const b of this.#batches) this.deal(b)
    }
    const parts = this.#partitions
    const n = parts.length
    const bad = (json: unknown): ConnectorError =>
      new ConnectorError({
        connector: "memory",
        domain: "user",
        retryable: false,
        message: `Continuous MemoryStream offsets map each of its ${n} partitions to a row count, as {"0":2,"1":1}; the checkpoint has ${JSON.stringify(json)}.`
      })
    const reader = (partition: number, start: number): ContinuousPartitionReader => {
      let position = start
      const rows = parts[partition]
      return {
        poll: (_now, max) => {
          if (position >= rows.length) return []
          const end = Math.min(rows.length, position + max)
          const out = rows.slice(position, end)
          position = end
          return out
        },
        offset: (): PartitionOffset => ({ partition, numProcessed: position }) satisfies MemoryPartitionOffset,
        // Checked and captured when called: rows added before the wait starts are not missed.
        awaitData: () => (position < rows.length ? Effect.void : Deferred.await(this.#dataArrived)),
        close: () => Effect.void
      }
    }
    const initial: Record<string, number> = {}
    for (let i = 0; i < n; i++) initial[String(i)] = 0
    return {
      description: this.source.description,
      schema: this.schema,
      initialOffset: () => Effect.succeed(initial),
      createReaders: (start) =>
        Effect.suspend(() => {
          const o = decodeContinuousOffset(start)
          if (o === undefined || Object.keys(o).length !== n) return Effect.fail(bad(start))
          const readers: Array<ContinuousPartitionReader> = []
          for (let p = 0; p < n; p++) {
            const at = o[String(p)]
            if (at === undefined) return Effect.fail(bad(start))
            readers.push(reader(p, at))
          }
          return Effect.succeed(readers)
        }),
      mergeOffsets: (offsets) => {
        const merged: Record<string, number> = {}
        for (const po of offsets as ReadonlyArray<MemoryPartitionOffset>) merged[String(po.partition)] = po.numProcessed
        return merged
      },
      decodeOffset: (json) => {
        const o = decodeContinuousOffset(json)
        return o === undefined ? Effect.fail(bad(json)) : Effect.succeed(o)
      },
      commit: () => Effect.void,
      stop: () => Effect.void
    }
  }

  /** The current latest offset (`-1` before any data). */
  latestOffset(): number {
    return this.#batches.length - 1
  }

  /** The streaming DataFrame reading this stream. */
  toDF(): DataFrame<A extends Record<string, unknown> ? A : { value: A }> {
    return new DataFrame(this.#state, {
      _tag: "StreamingRelation",
      planId: Plan.newPlanId(),
      format: "memory",
      sourceKey: this.#sourceKey,
      options: {},
      output: this.output
    })
  }

  toString(): string {
    return this.source.description
  }
}
