/**
 * End-to-end latency of a map-like streaming query: continuous processing
 * (`Trigger.Continuous`) next to micro-batches with the default trigger.
 *
 * A producer fiber adds rows to an in-process source at a fixed rate (10 K and 100 K rows per
 * second by default), every millisecond the rows that fell due, each stamped with
 * `performance.now()` just before it adds them. The source (`bench-queue`, defined here) is a
 * `MemoryStream` that forgets what a query has committed, as Spark's `MemoryStream.commit` does:
 * tributary's `MemoryStream` keeps every row for the life of the session, and at 100 K rows per
 * second its growing heap makes the old-generation GC pauses (tens of ms) the tail of both
 * modes. `BENCH_CONTINUOUS_SOURCE=memorystream` measures with `MemoryStream` instead. The query filters and projects the rows
 * (`where(id >= 0).select(id, t, id * 2)`) and writes them to a `foreach` writer, whose `process`
 * records `performance.now() - t`: the time from a record's emission to its arrival in the sink,
 * in the same process, on the real clock. After a warm-up, latencies are collected for the
 * measurement window; reported: p50, p99, p99.9 and max in milliseconds, and the rows delivered
 * per second.
 *
 * Environment: `BENCH_CONTINUOUS_RATES` (rows per second, comma-separated; default
 * `10000,100000`), `BENCH_CONTINUOUS_SECONDS` (measurement window, default 5),
 * `BENCH_CONTINUOUS_WARMUP` (seconds, default 1), `BENCH_CONTINUOUS_MODES`
 * (`continuous,microbatch`), `BENCH_CONTINUOUS_SOURCE` (`queue` or `memorystream`).
 *
 * Run: `npm run bench:continuous`
 */
import { mkdtemp, rm } from "node:fs/promises"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { Deferred, Effect, Fiber, Schema } from "effect"
import * as T from "../core/DataType.ts"
import type { InternalRow } from "../core/Row.ts"
import {
  type ContinuousPartitionReader,
  type ContinuousSource,
  type MicroBatchSource,
  registerSourceFormat
} from "../core/Streaming.ts"
import { F, MemoryStream, Session, Trigger } from "../mod.ts"

const RATES = (process.env.BENCH_CONTINUOUS_RATES ?? "10000,100000").split(",").map(Number)
const SECONDS = Number(process.env.BENCH_CONTINUOUS_SECONDS ?? 5)
const WARMUP = Number(process.env.BENCH_CONTINUOUS_WARMUP ?? 1)
const MODES = (process.env.BENCH_CONTINUOUS_MODES ?? "continuous,microbatch").split(",")
const SOURCE = process.env.BENCH_CONTINUOUS_SOURCE ?? "queue"

/** The rows of `bench-queue`: `id`, and `t`, the `performance.now()` of its emission. */
const QUEUE_SCHEMA = T.struct([T.field("id", T.IntegerType), T.field("t", T.DoubleType)])
const PARTITIONS = 2

/**
 * A replayable in-process queue that drops what is committed. Micro-batch offsets are row
 * counts; continuous offsets are row counts per partition (rows dealt round-robin).
 */
class BenchQueue {
  base = 0
  rows: Array<InternalRow> = []
  readonly partBase = Array.from({ length: PARTITIONS }, () => 0)
  readonly parts: Array<Array<InternalRow>> = Array.from({ length: PARTITIONS }, () => [])
  dealt = 0
  /** Which view a query reads: rows are kept only for that one. */
  continuousMode = false
  arrived = Deferred.makeUnsafe<void>()

  add(rows: ReadonlyArray<InternalRow>): void {
    if (this.continuousMode) for (const r of rows) this.parts[this.dealt++ % PARTITIONS].push(r)
    else for (const r of rows) this.rows.push(r)
    const a = this.arrived
    this.arrived = Deferred.makeUnsafe<void>()
    Deferred.doneUnsafe(a, Effect.void)
  }

  microBatch(): MicroBatchSource {
    this.continuousMode = false
    return {
      description: "BenchQueue",
      schema: QUEUE_SCHEMA,
      initialOffset: () => Effect.succeed(0),
      defaultReadLimit: () => ({ _tag: "AllAvailable" }),
      latestOffset: () => Effect.sync(() => this.base + this.rows.length),
      getBatch: (start, end) =>
        Effect.sync(() => this.rows.slice((start as number) - this.base, (end as number) - this.base)),
      commit: (end) =>
        Effect.sync(() => {
          const drop = (end as number) - this.base
          if (drop > 0) {
            this.rows = this.rows.slice(drop)
            this.base += drop
          }
        }),
      decodeOffset: (json) => Effect.succeed(json),
      awaitData: () => Deferred.await(this.arrived),
      stop: () => Effect.void
    }
  }

  continuous(): ContinuousSource {
    this.continuousMode = true
    const reader = (p: number, start: number): ContinuousPartitionReader => {
      let position = start
      return {
        poll: (_now, max) => {
          const rows = this.parts[p]
          const from = position - this.partBase[p]
          if (from >= rows.length) return []
          const out = rows.slice(from, Math.min(rows.length, from + max))
          position += out.length
          return out
        },
        offset: () => ({ p, position }),
        awaitData: () =>
          position - this.partBase[p] < this.parts[p].length ? Effect.void : Deferred.await(this.arrived),
        close: () => Effect.void
      }
    }
    return {
      description: "BenchQueue",
      schema: QUEUE_SCHEMA,
      initialOffset: () => Effect.succeed(this.partBase.map(() => 0)),
      createReaders: (start) => Effect.succeed((start as Array<number>).map((at, p) => reader(p, at))),
      mergeOffsets: (offsets) => (offsets as Array<{ p: number; position: number }>).map((o) => o.position),
      decodeOffset: (json) => Effect.succeed(json),
      commit: (end) =>
        Effect.sync(() => {
          ;(end as Array<number>).forEach((at, p) => {
            const drop = at - this.partBase[p]
            if (drop > 0) {
              this.parts[p] = this.parts[p].slice(drop)
              this.partBase[p] = at
            }
          })
        }),
      stop: () => Effect.void
    }
  }
}

let queue = new BenchQueue()

registerSourceFormat({
  name: "bench-queue",
  schema: () => QUEUE_SCHEMA,
  create: () => Effect.sync(() => queue.microBatch()),
  continuous: () => Effect.sync(() => queue.continuous())
})

const Event = Schema.Struct({ id: Schema.Int, t: Schema.Number })

interface Result {
  readonly mode: string
  readonly rate: number
  readonly delivered: number
  readonly p50: number
  readonly p99: number
  readonly p999: number
  readonly max: number
  /** CPU this process used per second of the measurement window (1 = one core busy). */
  readonly cpu: number
}

const quantile = (sorted: Float64Array, q: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

const runOne = (mode: string, rate: number) =>
  Effect.gen(function* () {
    const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-bench-continuous-")))
    const spark = yield* Session
    queue = new BenchQueue()
    const memory = SOURCE === "memorystream" ? yield* MemoryStream.make(Event) : undefined
    const add = (rows: ReadonlyArray<{ id: number; t: number }>): Effect.Effect<unknown> =>
      memory !== undefined ? memory.addData(rows) : Effect.sync(() => queue.add(rows.map((r) => [r.id, r.t])))
    const capacity = Math.ceil(rate * (SECONDS + WARMUP + 2))
    const latencies = new Float64Array(capacity)
    let count = 0
    let measuring = false
    let delivered = 0
    const queued = spark.readStream.format("bench-queue").load()
    const source = memory !== undefined ? (memory.toDF() as unknown as typeof queued) : queued
    const df = source.where(F.col("id").geq(0)).select(F.col("id"), F.col("t"), F.col("id").multiply(2).as("twice"))
    let writer = df.writeStream.option("checkpointLocation", dir).foreach({
      process: (row) => {
        if (!measuring) return
        delivered++
        if (count < capacity) latencies[count++] = performance.now() - (row.t as number)
      }
    })
    if (mode === "continuous") writer = writer.trigger(Trigger.Continuous("1 second"))
    const query = yield* writer.start()

    // The producer: every millisecond, the rows that fell due since the start (so the rate holds
    // even when the timer fires late), each stamped just before it is added.
    let emitted = 0
    const t0 = performance.now()
    const producer = yield* Effect.forkChild(
      Effect.gen(function* () {
        for (;;) {
          const due = Math.floor(((performance.now() - t0) * rate) / 1000) - emitted
          if (due > 0) {
            const now = performance.now()
            const rows = new Array<{ id: number; t: number }>(due)
            for (let i = 0; i < due; i++) rows[i] = { id: emitted + i, t: now }
            emitted += due
            yield* add(rows)
          }
          yield* Effect.sleep("1 millis")
        }
      })
    )
    yield* Effect.sleep(`${WARMUP * 1000} millis`)
    measuring = true
    const c0 = process.cpuUsage()
    const m0 = performance.now()
    yield* Effect.sleep(`${SECONDS * 1000} millis`)
    measuring = false
    const elapsed = (performance.now() - m0) / 1000
    const cpu = process.cpuUsage(c0)
    yield* Fiber.interrupt(producer)
    yield* query.stop()
    yield* Effect.promise(() => rm(dir, { recursive: true, force: true, maxRetries: 5 }))
    const sorted = latencies.slice(0, count).sort()
    return {
      mode,
      rate,
      delivered: Math.round(delivered / elapsed),
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      p999: quantile(sorted, 0.999),
      max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1],
      cpu: (cpu.user + cpu.system) / 1e6 / elapsed
    } satisfies Result
  })

const program = Effect.gen(function* () {
  const results: Array<Result> = []
  for (const rate of RATES) {
    for (const mode of MODES) {
      const r = yield* runOne(mode, rate)
      results.push(r)
      console.log(
        `${mode.padEnd(11)} ${String(rate).padStart(7)} rows/s  delivered ${String(r.delivered).padStart(7)}/s  ` +
          `p50 ${r.p50.toFixed(3)} ms  p99 ${r.p99.toFixed(3)} ms  p99.9 ${r.p999.toFixed(3)} ms  max ${r.max.toFixed(1)} ms  ` +
          `cpu ${r.cpu.toFixed(2)}  load ${loadavg()[0].toFixed(1)}`
      )
    }
  }
  return results
})

Effect.runPromise(program.pipe(Effect.provide(Session.layer()))).then(
  () => undefined,
  (e) => {
    console.error(e)
    process.exitCode = 1
  }
)
