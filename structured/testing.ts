/**
 * `tributary/testing`: `testStream`, Spark's `StreamTest` for tributary — a streaming DataFrame
 * run through a script of actions (add data, check the answer, stop, restart, advance the
 * clock, expect a failure). For this project's own tests and for its users' tests alike.
 *
 * The query writes to an in-memory sink that keeps every batch by id (a replayed batch
 * replaces its first run, as an idempotent sink would), in a fresh checkpoint that survives
 * `StopStream`/`StartStream`, so restarts are tested for real. Time comes from Effect's `Clock`:
 * run scripts under the test clock (`it.effect` in `@effect/vitest`) and move it with
 * `AdvanceClock`.
 *
 * @example
 * ```ts
 * import { it } from "@effect/vitest"
 * import { Effect, Schema } from "effect"
 * import { F, MemoryStream, Session } from "tributary-streaming"
 * import { AddData, CheckAnswer, StartStream, StopStream, testStream } from "tributary-streaming/testing"
 *
 * it.effect("counts words across a restart", () =>
 *   Effect.gen(function* () {
 *     const input = yield* MemoryStream.make(Schema.Struct({ word: Schema.String }))
 *     const counts = input.toDF().groupBy("word").count()
 *     yield* testStream(counts, "complete", [
 *       AddData(input, { word: "a" }, { word: "b" }, { word: "a" }),
 *       CheckAnswer({ word: "a", count: 2 }, { word: "b", count: 1 }),
 *       StopStream,
 *       AddData(input, { word: "b" }),
 *       StartStream(),
 *       CheckAnswer({ word: "a", count: 2 }, { word: "b", count: 2 })
 *     ])
 *   }).pipe(Effect.provide(Session.layer())))
 * ```
 * @since 0.1.0
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Cause, Clock, Data, Duration, Effect, Exit } from "effect"
import { TestClock } from "effect/testing"
import type { OutputMode } from "../core/Streaming.ts"
import type { Trigger } from "../core/Trigger.ts"
import type { DataFrame } from "./api/DataFrame.ts"
import type { MemoryStream } from "./api/MemoryStream.ts"
import type { Session } from "./api/Session.ts"
import type { StreamingQuery } from "./contracts/StreamingQuery.ts"

/** The constructor `Data.TaggedError(tag)<A>` returns, written out (JSR wants explicit types). */
type TaggedErrorBase<Tag extends string, A> = new (
  args: A
) => Cause.YieldableError & { readonly _tag: Tag } & Readonly<A>

/** Options of `StartStream`. */
export interface StartStreamOptions {
  readonly trigger?: Trigger
  /** Conf entries set on the session before this start; the script's end restores them, as Spark's. */
  readonly additionalConfs?: Readonly<Record<string, string>>
  /** Another checkpoint folder than the script's own. */
  readonly checkpointLocation?: string
}

export type StreamAction =
  | { readonly _tag: "AddData"; readonly source: MemoryStream<any>; readonly rows: ReadonlyArray<unknown> }
  | {
      readonly _tag: "CheckAnswer"
      readonly rows: ReadonlyArray<unknown>
      readonly scope: "all" | "new" | "last"
      readonly ordered: boolean
    }
  | { readonly _tag: "StopStream" }
  | { readonly _tag: "StartStream"; readonly options: StartStreamOptions }
  | { readonly _tag: "AdvanceClock"; readonly duration: Duration.Input }
  | {
      readonly _tag: "AssertOnQuery"
      readonly check: (query: StreamingQuery) => boolean | Effect.Effect<boolean, unknown>
      readonly message: string
    }
  | { readonly _tag: "ExpectFailure"; readonly tag: string | undefined; readonly message: string | undefined }
  | { readonly _tag: "Execute"; readonly run: (query: StreamingQuery | undefined) => Effect.Effect<unknown, unknown> }

/** Adds rows to a `MemoryStream` (one offset). */
export const AddData = <A>(source: MemoryStream<A>, ...rows: ReadonlyArray<A>): StreamAction => ({
  _tag: "AddData",
  source,
  rows
})

/** Waits for everything added so far, then checks ALL rows the sink has (complete mode: the latest result), as a multiset. */
export const CheckAnswer = (...rows: ReadonlyArray<unknown>): StreamAction => ({
  _tag: "CheckAnswer",
  rows,
  scope: "all",
  ordered: false
})

/** Like `CheckAnswer`, in order. */
export const CheckAnswerInOrder = (...rows: ReadonlyArray<unknown>): StreamAction => ({
  _tag: "CheckAnswer",
  rows,
  scope: "all",
  ordered: true
})

/** Checks the rows written since the last check (no rows: nothing new). */
export const CheckNewAnswer = (...rows: ReadonlyArray<unknown>): StreamAction => ({
  _tag: "CheckAnswer",
  rows,
  scope: "new",
  ordered: false
})

/** Checks the rows of the last batch only. */
export const CheckLastBatch = (...rows: ReadonlyArray<unknown>): StreamAction => ({
  _tag: "CheckAnswer",
  rows,
  scope: "last",
  ordered: false
})

/** Stops the query (the checkpoint and the sink's rows stay). */
export const StopStream: StreamAction = { _tag: "StopStream" }

/** Starts (or restarts, from the checkpoint) the query. */
export const StartStream = (options: StartStreamOptions = {}): StreamAction => ({ _tag: "StartStream", options })

/** Moves the test clock forward, releasing the batches of processing-time triggers that fall due. */
export const AdvanceClock = (duration: Duration.Input): StreamAction => ({ _tag: "AdvanceClock", duration })

/** Asserts something about the running query. */
export const AssertOnQuery = (
  check: (query: StreamingQuery) => boolean | Effect.Effect<boolean, unknown>,
  message = ""
): StreamAction => ({ _tag: "AssertOnQuery", check, message })

/** Expects the query to fail (optionally with a cause of this `_tag`, or whose message contains `message`). */
export const ExpectFailure = (tag?: string, message?: string): StreamAction => ({
  _tag: "ExpectFailure",
  tag,
  message
})

/** Runs any effect at this point of the script (given the running query, if any). */
export const Execute = (
  run: Effect.Effect<unknown, unknown> | ((query: StreamingQuery | undefined) => Effect.Effect<unknown, unknown>)
): StreamAction => ({ _tag: "Execute", run: typeof run === "function" ? run : () => run })

/** The fields of {@link TestStreamFailure}. */
interface TestStreamFailureFields {
  readonly message: string
  readonly step: number
}
const TestStreamFailureBase: TaggedErrorBase<"TestStreamFailure", TestStreamFailureFields> =
  Data.TaggedError("TestStreamFailure")<TestStreamFailureFields>

/** A script step did not hold. `message` shows the step, the expected and the actual answer. */
export class TestStreamFailure extends TestStreamFailureBase {}

const canonical = (v: unknown): unknown => {
  if (v instanceof Date) return { $date: v.getTime() }
  if (v instanceof Uint8Array) return { $bytes: Array.from(v) }
  if (v instanceof Map) return { $map: [...v.entries()].map(([k, x]) => [canonical(k), canonical(x)]) }
  if (Array.isArray(v)) return v.map(canonical)
  if (typeof v === "number" && Number.isNaN(v)) return "$NaN"
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k]
      if (x !== undefined) out[k] = canonical(x)
    }
    return out
  }
  return v === undefined ? null : v
}

const key = (row: unknown): string => JSON.stringify(canonical(row))

const show = (rows: ReadonlyArray<unknown>): string =>
  rows.length === 0 ? "  (no rows)" : rows.map((r) => `  ${key(r)}`).join("\n")

const sameAnswer = (expected: ReadonlyArray<unknown>, actual: ReadonlyArray<unknown>, ordered: boolean): boolean => {
  if (expected.length !== actual.length) return false
  const e = expected.map(key)
  const a = actual.map(key)
  if (!ordered) {
    e.sort()
    a.sort()
  }
  return e.every((x, i) => x === a[i])
}

interface Quiescable {
  readonly awaitQuiescent: () => Effect.Effect<void, unknown>
}

const describeAction = (a: StreamAction): string => {
  switch (a._tag) {
    case "AddData":
      return `AddData(${a.source.toString()}, ${a.rows.map(key).join(", ")})`
    case "CheckAnswer":
      return `${a.scope === "all" ? "CheckAnswer" : a.scope === "new" ? "CheckNewAnswer" : "CheckLastBatch"}(${a.rows.map(key).join(", ")})`
    case "StopStream":
      return "StopStream"
    case "StartStream":
      return "StartStream"
    case "AdvanceClock":
      return `AdvanceClock(${Duration.format(Duration.fromInputUnsafe(a.duration))})`
    case "AssertOnQuery":
      return `AssertOnQuery(${a.message})`
    case "ExpectFailure":
      return `ExpectFailure(${a.tag ?? ""})`
    case "Execute":
      return "Execute"
  }
}

/**
 * Runs `df` as a streaming query through `actions`. The query starts before the first action
 * unless that action is a `StartStream`, and is stopped at the end.
 */
export const testStream = <R>(
  df: DataFrame<R>,
  outputMode: OutputMode = "append",
  actions: ReadonlyArray<StreamAction>
): Effect.Effect<void, TestStreamFailure, Session> =>
  Effect.gen(function* () {
    const checkpoint = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-teststream-")))
    const batches = new Map<number, ReadonlyArray<unknown>>()
    let lastFetched = -1
    let query: StreamingQuery | undefined
    let trigger: Trigger | undefined
    const trace: Array<string> = []
    const replacedConfs = new Map<string, string | undefined>()
    const restoreConfs = Effect.sync(() => {
      for (const [k, v] of replacedConfs) {
        if (v === undefined) df.state.conf.delete(k)
        else df.state.conf.set(k, v)
      }
    })

    const fail = (step: number, why: string) =>
      new TestStreamFailure({
        step,
        message: `${why}\n\n== Progress ==\n${trace.map((t, i) => `${i === step ? "=> " : "   "}${t}`).join("\n")}`
      })

    const start = (options: StartStreamOptions, step: number) =>
      Effect.gen(function* () {
        if (options.additionalConfs !== undefined) {
          for (const [k, v] of Object.entries(options.additionalConfs)) {
            // Spark's StreamTest remembers the first value it replaced and puts it back when
            // the script ends (`resetConfValues`).
            if (!replacedConfs.has(k)) replacedConfs.set(k, df.state.conf.get(k))
            df.state.conf.set(k, v)
          }
        }
        trigger = options.trigger
        let writer = df.writeStream
          .outputMode(outputMode)
          .option("checkpointLocation", options.checkpointLocation ?? checkpoint)
          .foreachBatch((batch, batchId) =>
            Effect.map(batch.collect(), (rows) => {
              batches.set(batchId, rows)
            })
          )
        if (options.trigger !== undefined) writer = writer.trigger(options.trigger)
        query = yield* writer.start().pipe(Effect.mapError((e) => fail(step, `Could not start the query: ${e.message}`)))
      })

    /** Waits until the query has processed what it can (or has failed), without failing here. */
    const settle = (q: StreamingQuery) => {
      const interval = trigger?._tag === "ProcessingTime" ? trigger.intervalMs : 0
      const wait =
        interval > 0 && "awaitQuiescent" in q ? (q as unknown as Quiescable).awaitQuiescent() : q.processAllAvailable()
      return Effect.exit(wait)
    }

    /** Until the running query (if any) waits for data or its next trigger (failures show later). */
    const waitOnClock = Effect.suspend(() =>
      query !== undefined && "awaitQuiescent" in query
        ? Effect.ignore((query as unknown as Quiescable).awaitQuiescent())
        : Effect.void
    )

    const answer = (scope: "all" | "new" | "last"): ReadonlyArray<unknown> => {
      const ids = [...batches.keys()].sort((a, b) => a - b)
      if (ids.length === 0) return []
      const last = ids[ids.length - 1]
      let rows: ReadonlyArray<unknown>
      if (scope === "last" || (scope === "all" && outputMode === "complete")) rows = batches.get(last) ?? []
      else if (scope === "new") rows = ids.filter((id) => id > lastFetched).flatMap((id) => batches.get(id) ?? [])
      else rows = ids.flatMap((id) => batches.get(id) ?? [])
      lastFetched = last
      return rows
    }

    // Spark's StreamTest: the script starts the stream itself when a StartStream comes before
    // the first action that needs a running stream (a check, StopStream, ExpectFailure), so
    // `AddData, StartStream(), CheckAnswer` adds data before the first start.
    let startedManually = false
    for (const a of actions) {
      if (a._tag === "CheckAnswer" || a._tag === "StopStream" || a._tag === "ExpectFailure") break
      if (a._tag === "StartStream") {
        startedManually = true
        break
      }
    }
    const steps = startedManually ? actions : [StartStream(), ...actions]
    for (const a of steps) trace.push(describeAction(a))

    const program = Effect.gen(function* () {
      for (let i = 0; i < steps.length; i++) {
        const action = steps[i]
        switch (action._tag) {
          case "AddData":
            // Spark's StreamTest: with a processing-time trigger on the test clock, data is added
            // only once the query waits on the clock, so it lands in the batch the next
            // AdvanceClock triggers (not in one already running).
            if (trigger?._tag === "ProcessingTime" && trigger.intervalMs > 0) yield* waitOnClock
            yield* action.source.addData(action.rows)
            break
          case "StartStream":
            if (query !== undefined && (yield* query.isActive())) {
              return yield* fail(i, "StartStream while the query is already running: add a StopStream first.")
            }
            yield* start(action.options, i)
            break
          case "StopStream":
            if (query !== undefined) yield* query.stop()
            break
          case "AdvanceClock": {
            // Spark's StreamTest first waits until the query waits on the clock (SPARK-16002), so
            // data added before the advance is in the batch that ran before it.
            yield* waitOnClock
            // Spark's ManualClock.advance: the clock jumps; a query waiting for its next
            // processing-time trigger wakes once, at the new time (SessionState.clockJumpTargetMs).
            const now = yield* Clock.currentTimeMillis
            df.state.clockJumpTargetMs = now + Duration.toMillis(Duration.fromInputUnsafe(action.duration))
            yield* TestClock.adjust(action.duration).pipe(
              Effect.ensuring(
                Effect.sync(() => {
                  df.state.clockJumpTargetMs = undefined
                })
              )
            )
            // Let the fibers the clock released start their batches before the next step looks.
            for (let k = 0; k < 5; k++) yield* Effect.yieldNow
            break
          }
          case "CheckAnswer": {
            if (query === undefined) return yield* fail(i, "CheckAnswer before the stream started")
            const exit = yield* settle(query)
            if (Exit.isFailure(exit)) {
              return yield* fail(i, `The query failed:\n${Cause.pretty(exit.cause)}`)
            }
            const actual = answer(action.scope)
            if (!sameAnswer(action.rows, actual, action.ordered)) {
              return yield* fail(
                i,
                `Results do not match.\n== Expected (${action.rows.length}) ==\n${show(action.rows)}\n== Actual (${actual.length}) ==\n${show(actual)}`
              )
            }
            break
          }
          case "AssertOnQuery": {
            if (query === undefined) return yield* fail(i, "AssertOnQuery before the stream started")
            const q = query
            const r = action.check(q)
            const ok = Effect.isEffect(r) ? yield* Effect.exit(r as Effect.Effect<boolean, unknown>) : Exit.succeed(r)
            if (Exit.isFailure(ok) || ok.value !== true) {
              return yield* fail(i, `Assert on query failed: ${action.message}`)
            }
            break
          }
          case "ExpectFailure": {
            if (query === undefined) return yield* fail(i, "ExpectFailure before the stream started")
            const exit = yield* Effect.exit(query.awaitTermination())
            if (Exit.isSuccess(exit)) return yield* fail(i, "The query ended without failing")
            const error = Cause.squash(exit.cause) as { cause?: unknown; message?: string }
            const cause = error?.cause as { _tag?: string; message?: string } | undefined
            if (action.tag !== undefined && cause?._tag !== action.tag && (error as { _tag?: string })._tag !== action.tag) {
              return yield* fail(i, `Expected a failure with _tag ${action.tag}, got: ${error?.message ?? String(error)}`)
            }
            if (action.message !== undefined && !(error?.message ?? "").includes(action.message)) {
              return yield* fail(i, `Expected a failure whose message contains "${action.message}", got: ${error?.message}`)
            }
            break
          }
          case "Execute": {
            const exit = yield* Effect.exit(action.run(query))
            if (Exit.isFailure(exit)) return yield* fail(i, `Execute failed:\n${Cause.pretty(exit.cause)}`)
            break
          }
        }
      }
    })
    yield* program.pipe(
      Effect.ensuring(
        Effect.suspend(() => (query === undefined ? Effect.void : query.stop())).pipe(
          Effect.andThen(restoreConfs),
          Effect.andThen(Effect.promise(() => rm(checkpoint, { recursive: true, force: true })))
        )
      )
    )
  })
