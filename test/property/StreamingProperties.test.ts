/**
 * Differential property tests of the streaming engine: for random event streams (a word from a
 * small alphabet, an event time in a small range, an int value) split at random into
 * micro-batches, with random stop/start points between batches, the streaming query's output
 * equals what the batch engine (or a plain JavaScript model of Spark's semantics) gives for the
 * same rows. Runs alternate between the DuckDB state store and the file state store.
 *
 * (a) complete mode `groupBy(word).agg(count, sum)`: after every batch, the output equals the
 *     batch aggregation of all rows so far;
 * (b) append mode windowed counts with a watermark: per batch (no-data batches included), the
 *     emitted windows are exactly the model's — a row is late when its window's end is at or
 *     below the previous batch's watermark (Spark compares the window, the aggregation's
 *     event-time key), the watermark is the max event time seen minus the delay (never going
 *     back), a window is emitted by the first batch whose watermark reaches its end, and a
 *     no-data batch runs when the watermark moved; all emitted rows together equal the batch
 *     aggregation of the on-time rows, restricted to the closed windows (a final row far in
 *     the future closes them);
 * (c) `dropDuplicates("word")`: every batch emits exactly the rows that are the first of their
 *     word across all batches and restarts.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fc from "fast-check"
import { type DataFrame, F, MemoryStream, Session } from "../../mod.ts"
import type { OutputMode } from "../../core/Streaming.ts"

const Event = Schema.Struct({ word: Schema.String, ts: Schema.Date, value: Schema.Int })
type Event = typeof Event.Type

/** One micro-batch of the script: its rows, and whether the query is restarted before it. */
interface Step {
  readonly rows: ReadonlyArray<Event>
  readonly restartBefore: boolean
}

const SECOND = 1000
const WINDOW_MS = 10 * SECOND
const DELAY_MS = 5 * SECOND

const event: fc.Arbitrary<Event> = fc.record({
  word: fc.constantFrom("a", "b", "c"),
  ts: fc.integer({ min: 0, max: 40 }).map((s) => new Date(s * SECOND)),
  value: fc.integer({ min: -5, max: 5 })
})

const script: fc.Arbitrary<ReadonlyArray<Step>> = fc.array(
  fc.record({ rows: fc.array(event, { maxLength: 4 }), restartBefore: fc.boolean() }),
  { minLength: 1, maxLength: 5 }
)

// ---- comparing rows -------------------------------------------------------------------------

const canonical = (v: unknown): unknown => {
  if (v instanceof Date) return v.toISOString()
  if (Array.isArray(v)) return v.map(canonical)
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(v).sort()) out[k] = canonical((v as Record<string, unknown>)[k])
    return out
  }
  return v
}

const multiset = (rows: ReadonlyArray<unknown>): ReadonlyArray<string> =>
  rows.map((r) => JSON.stringify(canonical(r))).sort()

const sameRows = (actual: ReadonlyArray<unknown>, expected: ReadonlyArray<unknown>): boolean => {
  const a = multiset(actual)
  const e = multiset(expected)
  return a.length === e.length && a.every((x, i) => x === e[i])
}

const describeRows = (rows: ReadonlyArray<unknown>): string => multiset(rows).join("\n  ")

const check = (ok: boolean, message: () => string): Effect.Effect<void, Error> =>
  ok ? Effect.void : Effect.fail(new Error(message()))

// ---- running a script -----------------------------------------------------------------------

let runs = 0

/** Alternates the state store provider from one run to the next. */
const nextLayer = () => (runs++ % 2 === 0 ? Session.layer() : Session.layer({ stateStore: "memory" }))

/**
 * Runs `build(input)` over the script: one `addData` and one `processAllAvailable` per step
 * (so each step is exactly one data batch, plus the no-data batch a new watermark calls for),
 * stopping and restarting the query from its checkpoint where the script says. Returns the
 * rows of every batch by batch id.
 */
const runScript = <R>(
  steps: ReadonlyArray<Step>,
  mode: OutputMode,
  build: (input: MemoryStream<Event>) => DataFrame<R>
): Effect.Effect<ReadonlyMap<number, ReadonlyArray<unknown>>, unknown, Session> =>
  Effect.acquireUseRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-prop-"))),
    (dir) =>
      Effect.gen(function* () {
        const input = yield* MemoryStream.make(Event)
        const batches = new Map<number, ReadonlyArray<unknown>>()
        const start = build(input)
          .writeStream.outputMode(mode)
          .option("checkpointLocation", dir)
          .foreachBatch((df, batchId) =>
            Effect.map(df.collect(), (rows) => {
              batches.set(batchId, rows)
            })
          )
          .start()
        let query = yield* start
        for (const step of steps) {
          if (step.restartBefore) {
            yield* query.stop()
            query = yield* start
          }
          yield* input.addData(step.rows)
          yield* query.processAllAvailable()
        }
        yield* query.stop()
        return batches
      }),
    (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
  )

const runProperty = <A>(arb: fc.Arbitrary<A>, body: (a: A) => Effect.Effect<void, unknown, Session>) =>
  fc.assert(
    fc.asyncProperty(arb, (a) => Effect.runPromise(body(a).pipe(Effect.provide(nextLayer())))),
    { numRuns: 100 }
  )

// ---- the properties -------------------------------------------------------------------------

describe("streaming equals batch", () => {
  it(
    "(a) complete-mode groupBy(word).agg(count, sum) equals the batch aggregation after every batch",
    { timeout: 300_000 },
    () =>
      runProperty(script, (steps) =>
        Effect.gen(function* () {
          const spark = yield* Session
          const aggregate = (df: DataFrame<Event>) =>
            df.groupBy("word").agg(F.count("*").as("n"), F.sum("value").as("s"))
          const batches = yield* runScript(steps, "complete", (input) => aggregate(input.toDF()))
          const seen: Array<Event> = []
          for (let i = 0; i < steps.length; i++) {
            seen.push(...steps[i].rows)
            const expected = yield* aggregate(spark.createDataFrame(seen, Event)).collect()
            const actual = batches.get(i) ?? []
            yield* check(
              sameRows(actual, expected),
              () => `batch ${i}:\nexpected\n  ${describeRows(expected)}\nactual\n  ${describeRows(actual)}`
            )
          }
          yield* check(batches.size === steps.length, () => `${batches.size} batches for ${steps.length} steps`)
        })
      )
  )

  it("(b) append-mode windowed counts with a watermark emit exactly Spark's closed windows", { timeout: 300_000 }, () =>
    runProperty(fc.record({ steps: script, restartBeforeLast: fc.boolean() }), ({ steps, restartBeforeLast }) =>
      Effect.gen(function* () {
        const spark = yield* Session
        // A final row far in the future: its watermark closes every window of the script.
        const all: ReadonlyArray<Step> = [
          ...steps,
          { rows: [{ word: "z", ts: new Date(1000 * SECOND), value: 0 }], restartBefore: restartBeforeLast }
        ]
        const windowed = (df: DataFrame<Event>) =>
          df.groupBy(F.window("ts", "10 seconds"), "word").agg(F.count("*").as("n"), F.sum("value").as("s"))
        const batches = yield* runScript(all, "append", (input) =>
          windowed(input.toDF().withWatermark("ts", "5 seconds"))
        )

        // The model (Spark's StateStoreSaveExec in append mode, WatermarkTracker, no-data batches).
        const expected = new Map<number, Array<unknown>>()
        const state = new Map<string, { start: number; word: string; n: number; s: number }>()
        const onTime: Array<Event> = []
        let batchId = 0
        let watermark = 0 // the watermark the next batch runs with (eviction)
        let previous = 0 // the watermark the previous batch ran with (late events)
        const runBatch = (rows: ReadonlyArray<Event>, late: number, evict: number) => {
          for (const r of rows) {
            const start = Math.floor(r.ts.getTime() / WINDOW_MS) * WINDOW_MS
            if (start + WINDOW_MS <= late) continue // its window is closed: dropped
            onTime.push(r)
            const key = `${start}/${r.word}`
            const g = state.get(key) ?? { start, word: r.word, n: 0, s: 0 }
            g.n += 1
            g.s += r.value
            state.set(key, g)
          }
          const out: Array<unknown> = []
          for (const [key, g] of state) {
            if (g.start + WINDOW_MS <= evict) {
              out.push({
                window: { start: new Date(g.start), end: new Date(g.start + WINDOW_MS) },
                word: g.word,
                n: g.n,
                s: g.s
              })
              state.delete(key)
            }
          }
          expected.set(batchId++, out)
        }
        for (const step of all) {
          const ran = watermark
          runBatch(step.rows, previous, ran)
          previous = ran
          if (step.rows.length > 0) {
            const max = Math.max(...step.rows.map((r) => r.ts.getTime()))
            watermark = Math.max(watermark, max - DELAY_MS)
          }
          if (watermark > ran) {
            runBatch([], ran, watermark) // the no-data batch
            previous = watermark
          }
        }

        yield* check(
          [...batches.keys()].sort((a, b) => a - b).join() === [...expected.keys()].join(),
          () => `batch ids ${[...batches.keys()]} instead of ${[...expected.keys()]}`
        )
        for (const [id, rows] of expected) {
          const actual = batches.get(id) ?? []
          yield* check(
            sameRows(actual, rows),
            () => `batch ${id}:\nexpected\n  ${describeRows(rows)}\nactual\n  ${describeRows(actual)}`
          )
        }
        // Everything emitted equals the batch result over the on-time rows, closed windows only.
        const emitted = [...batches.values()].flat()
        const batchResult = yield* windowed(spark.createDataFrame(onTime, Event)).collect()
        const closed = batchResult.filter((r) => (r.window as { end: Date }).end.getTime() <= watermark)
        yield* check(
          sameRows(emitted, closed),
          () => `emitted\n  ${describeRows(emitted)}\nbatch result\n  ${describeRows(closed)}`
        )
      })
    )
  )

  it(
    "(c) dropDuplicates(word) keeps exactly the first row per word across batches and restarts",
    { timeout: 300_000 },
    () =>
      runProperty(script, (steps) =>
        Effect.gen(function* () {
          const batches = yield* runScript(steps, "append", (input) => input.toDF().dropDuplicates(["word"]))
          const seen = new Set<string>()
          for (let i = 0; i < steps.length; i++) {
            const firsts = steps[i].rows.filter((r) => {
              if (seen.has(r.word)) return false
              seen.add(r.word)
              return true
            })
            const actual = batches.get(i) ?? []
            yield* check(
              sameRows(actual, firsts),
              () => `batch ${i}:\nexpected\n  ${describeRows(firsts)}\nactual\n  ${describeRows(actual)}`
            )
          }
        })
      )
  )
})
