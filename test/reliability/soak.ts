/**
 * The soak (issue #20 item 5): one stateful query run for a long time, to see that memory and
 * batch duration stay flat. A `rate` source at a high rate feeds a windowed count per key with a
 * watermark, in append mode, so the state store keeps a bounded number of windows: each batch
 * adds rows for new windows and the watermark evicts the old ones. Every progress event is a
 * sample: the process's RSS and heap, the state rows (`stateOperators[0].numRowsTotal`) and the
 * batch duration. A table per minute is printed, and at the end a verdict: after a warm-up, the
 * medians of the last third of the samples against those of the first third.
 *
 * `soakMain.ts` runs it from the command line (`npm run soak -- --minutes 10`).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { F, Session, Trigger } from "../../mod.ts"
import type { StreamingQueryProgress } from "../../structured/contracts/StreamingQueryProgress.ts"

/** One progress event with the process's memory at that moment. */
export interface Sample {
  /** Milliseconds since the query started. */
  readonly t: number
  readonly batchId: number
  readonly batchMs: number
  readonly inputRows: number
  readonly stateRows: number
  readonly rssBytes: number
  readonly heapBytes: number
  /** CPU time (user and system) the process used since the previous sample, in ms. */
  readonly cpuMs: number
  /** The machine's 1-minute load average (the soak shares the machine; wall time depends on it). */
  readonly load: number
}

export interface SoakOptions {
  readonly durationMs: number
  /** `rowsPerSecond` of the rate source. */
  readonly rowsPerSecond: number
  /** Distinct keys per window. */
  readonly keys: number
  readonly stateStore: "duckdb" | "memory"
  /** Called once a minute (and at the end) with the samples so far. */
  readonly onMinute?: (samples: ReadonlyArray<Sample>, minute: number) => void
}

const median = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return Number.NaN
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2
}

const quantile = (xs: ReadonlyArray<number>, q: number): number => {
  if (xs.length === 0) return Number.NaN
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}

/** How one measure moved between the first and the last third after the warm-up. */
export interface Trend {
  readonly name: string
  readonly first: number
  readonly last: number
  /** Whether `last` stays within the allowance over `first`. */
  readonly flat: boolean
}

export interface Verdict {
  readonly trends: ReadonlyArray<Trend>
  readonly flat: boolean
  /** Samples compared (after the warm-up). */
  readonly samples: number
}

/**
 * The verdict over the samples: the warm-up (the first `warmupMs`) is dropped, the rest is cut in
 * thirds, and each measure's median in the last third is compared with the first third's. A
 * measure is flat when the last median is at most `ratio` times the first plus a small absolute
 * allowance (16 MiB of memory, 50 ms of batch duration, 10% of the state rows, 5 ms of CPU per
 * 10,000 rows), so that the noise of a shared machine and a garbage collector's sawtooth do not
 * read as growth. Batch duration is wall time, so a busier machine lengthens it; the CPU time per
 * row is the engine's own cost.
 */
export const verdict = (samples: ReadonlyArray<Sample>, warmupMs: number): Verdict => {
  const rest = samples.filter((s) => s.t >= warmupMs)
  const third = Math.floor(rest.length / 3)
  const first = rest.slice(0, third)
  const last = rest.slice(rest.length - third)
  const MiB = 1024 * 1024
  const measure = (name: string, f: (s: Sample) => number, ratio: number, slack: (first: number) => number): Trend => {
    const a = median(first.map(f))
    const b = median(last.map(f))
    return { name, first: a, last: b, flat: third > 0 && b <= a * ratio + slack(a) }
  }
  const trends = [
    measure("rss", (s) => s.rssBytes, 1.15, () => 16 * MiB),
    measure("heap", (s) => s.heapBytes, 1.2, () => 16 * MiB),
    measure("state rows", (s) => s.stateRows, 1.1, (a) => 0.1 * a + 1),
    measure("batch ms", (s) => s.batchMs, 1.5, () => 50),
    // CPU per input row: the engine's own cost, which the machine's load does not change much
    measure("cpu ms per 10k rows", (s) => (s.inputRows > 0 ? (s.cpuMs * 10_000) / s.inputRows : 0), 1.5, () => 5)
  ]
  return { trends, flat: trends.every((t) => t.flat), samples: rest.length }
}

const mb = (bytes: number): string => (bytes / (1024 * 1024)).toFixed(1)

/** The table row of one minute's samples. */
export const minuteRow = (samples: ReadonlyArray<Sample>, minute: number): string => {
  const inMinute = samples.filter((s) => s.t >= (minute - 1) * 60_000 && s.t < minute * 60_000)
  if (inMinute.length === 0) return `| ${minute} | 0 | | | | | | | | |`
  const rows = inMinute.reduce((n, s) => n + s.inputRows, 0)
  const cpu = inMinute.reduce((n, s) => n + s.cpuMs, 0)
  const lastSample = inMinute[inMinute.length - 1]
  return `| ${minute} | ${inMinute.length} | ${rows} | ${mb(median(inMinute.map((s) => s.rssBytes)))} | ${mb(median(inMinute.map((s) => s.heapBytes)))} | ${lastSample.stateRows} | ${median(inMinute.map((s) => s.batchMs))} | ${quantile(inMinute.map((s) => s.batchMs), 0.95)} | ${rows > 0 ? ((cpu * 10_000) / rows).toFixed(1) : ""} | ${lastSample.load.toFixed(1)} |`
}

export const TABLE_HEADER =
  "| minute | batches | input rows | RSS MB (median) | heap MB (median) | state rows (end) | batch ms (median) | batch ms (p95) | CPU ms / 10k rows | load avg |\n| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"

export const formatVerdict = (v: Verdict): string =>
  `${v.trends
    .map((t) => {
      const show = (x: number) =>
        t.name === "rss" || t.name === "heap" ? `${mb(x)} MB` : t.name === "state rows" ? `${x}` : `${x.toFixed(1)} ms`
      return `${t.name}: first third ${show(t.first)}, last third ${show(t.last)}: ${t.flat ? "flat" : "GROWING"}`
    })
    .join("\n")}\nverdict: ${v.flat ? "FLAT" : "NOT FLAT"} (${v.samples} samples after the warm-up)`

/**
 * Runs the soak query for `durationMs`: `rate` → watermark 10 s → count per 5-second window and
 * key (`value % keys`) in append mode → the `noop` sink, a 1-second trigger, state in a
 * temporary checkpoint. Answers every sample.
 */
export const runSoak = (options: SoakOptions): Promise<ReadonlyArray<Sample>> => {
  const checkpoint = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-soak-"))
  const samples: Array<Sample> = []
  let started = 0
  let cpu = process.cpuUsage()
  const program = Effect.gen(function* () {
    const spark = yield* Session
    yield* spark.streams.addListener({
      onQueryProgress: (e) => {
        const p: StreamingQueryProgress = e.progress
        const m = process.memoryUsage()
        const used = process.cpuUsage(cpu)
        cpu = process.cpuUsage()
        samples.push({
          t: Date.now() - started,
          batchId: p.batchId,
          batchMs: p.batchDuration,
          inputRows: p.numInputRows,
          stateRows: p.stateOperators[0]?.numRowsTotal ?? 0,
          rssBytes: m.rss,
          heapBytes: m.heapUsed,
          cpuMs: (used.user + used.system) / 1000,
          load: os.loadavg()[0]
        })
      }
    })
    const counts = spark.readStream
      .format("rate")
      .option("rowsPerSecond", options.rowsPerSecond)
      .load()
      .withWatermark("timestamp", "10 seconds")
      .groupBy(F.window("timestamp", "5 seconds"), F.col("value").mod(options.keys).as("key"))
      .count()
    started = Date.now()
    cpu = process.cpuUsage()
    const query = yield* counts.writeStream
      .format("noop")
      .outputMode("append")
      .option("checkpointLocation", checkpoint)
      .queryName("soak")
      .trigger(Trigger.ProcessingTime("1 second"))
      .start()
    let minute = 0
    while (Date.now() - started < options.durationMs) {
      yield* Effect.sleep("1 second")
      const elapsedMinutes = Math.floor((Date.now() - started) / 60_000)
      if (elapsedMinutes > minute) {
        minute = elapsedMinutes
        options.onMinute?.(samples, minute)
      }
      const failed = yield* query.exception()
      if (failed !== null) return yield* Effect.fail(failed)
    }
    yield* query.stop()
    if (options.durationMs % 60_000 !== 0) options.onMinute?.(samples, minute + 1)
  })
  return Effect.runPromise(program.pipe(Effect.provide(Session.layer({ stateStore: options.stateStore })))).then(
    () => samples,
    (e) => {
      throw e
    }
  ).finally(() => fs.rmSync(checkpoint, { recursive: true, force: true }))
}
