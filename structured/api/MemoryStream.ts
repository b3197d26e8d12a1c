/**
 * `MemoryStream`: a replayable in-process streaming source for tests, notebooks and demos,
 * as Spark's `MemoryStream`. Every `addData` call is one offset (0, 1, 2, …; `-1` before any
 * data); a batch reads the rows of the offsets after the last committed one.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { MemoryStream } from "tributary"
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
import type { MicroBatchSource, Offset } from "../../core/Streaming.ts"
import { DataFrame } from "./DataFrame.ts"
import { Session } from "./Session.ts"
import type { SessionState } from "./SessionState.ts"

let nextStreamId = 0

const badOffset = (json: unknown): ConnectorError =>
  new ConnectorError({
    connector: "memory",
    domain: "user",
    retryable: false,
    message: `MemoryStream offsets are integers; the checkpoint has ${JSON.stringify(json)}.`
  })

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

  private constructor(state: SessionState, schema: T.StructType, wrapValue: boolean) {
    this.id = nextStreamId++
    this.#state = state
    this.schema = schema
    this.output = schema.fields.map((f) => E.attribute(f.name, f.dataType, f.nullable))
    const conv = toInternal(schema) as (v: unknown) => InternalRow
    this.#convert = wrapValue ? (v) => conv({ value: v }) : conv
    this.#sourceKey = `memory-${this.id}`
    const batches = this.#batches
    this.source = {
      description: `MemoryStream[${this.output.map((a) => `${a.name}#${a.exprId}`).join(",")}]`,
      schema,
      initialOffset: () => Effect.succeed(-1),
      defaultReadLimit: () => ({ _tag: "AllAvailable" }),
      latestOffset: () => Effect.sync(() => batches.length - 1),
      getBatch: (start: Offset, end: Offset) =>
        Effect.sync(() => {
          const from = (start as number) + 1
          const to = end as number
          // One addData per batch is the common case: hand its rows over without copying.
          if (from === to) return batches[from] ?? []
          return batches.slice(from, to + 1).flat()
        }),
      commit: () => Effect.void,
      decodeOffset: (json: unknown) =>
        typeof json === "number" && Number.isInteger(json) && json >= -1
          ? Effect.succeed(json)
          : Effect.fail(badOffset(json)),
      // Captures the current signal when called (not when run), so data added in between is seen.
      awaitData: () => Deferred.await(this.#dataArrived),
      stop: () => Effect.void
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
      const arrived = this.#dataArrived
      this.#dataArrived = Deferred.makeUnsafe<void>()
      Deferred.doneUnsafe(arrived, Effect.void)
      return this.#batches.length - 1
    })
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
