/**
 * The soak's verdict (`soak.ts`, issue #20 item 5) on made-up series — flat, noisy, growing
 * memory, growing state, slowing batches — and a short run of the soak query itself: it makes
 * batches, keeps a bounded state (the watermark evicts windows) and reports every measure.
 */
import { describe, expect, it } from "vitest"
import { formatVerdict, minuteRow, runSoak, type Sample, verdict } from "./soak.ts"

const MiB = 1024 * 1024

/** A sample a second for `seconds`, each measure given by a function of the second. */
const series = (
  seconds: number,
  f: {
    rss?: (i: number) => number
    heap?: (i: number) => number
    state?: (i: number) => number
    ms?: (i: number) => number
    cpu?: (i: number) => number
  }
): Array<Sample> =>
  Array.from({ length: seconds }, (_, i) => ({
    t: i * 1000,
    batchId: i,
    batchMs: f.ms?.(i) ?? 100,
    inputRows: 1000,
    stateRows: f.state?.(i) ?? 3000,
    rssBytes: f.rss?.(i) ?? 300 * MiB,
    heapBytes: f.heap?.(i) ?? 90 * MiB,
    cpuMs: f.cpu?.(i) ?? 50,
    load: 2
  }))

describe("the soak's verdict", () => {
  it("is flat for flat and for noisy series, ignoring the warm-up", () => {
    const flat = verdict(series(600, {}), 60_000)
    expect(flat.flat).toBe(true)
    expect(flat.samples).toBe(540)
    // a garbage collector's sawtooth, a noisy batch duration and a warm-up that grows fast
    const noisy = series(600, {
      rss: (i) => (i < 60 ? (100 + i * 3) * MiB : (300 + (i % 7)) * MiB),
      heap: (i) => (60 + (i % 30)) * MiB,
      state: (i) => 3000 + (i % 2) * 1000,
      ms: (i) => 100 + ((i * 37) % 90),
      cpu: (i) => 40 + (i % 20)
    })
    expect(verdict(noisy, 60_000).flat).toBe(true)
  })

  it("finds growing memory, growing state and slowing batches", () => {
    const rss = verdict(series(600, { rss: (i) => (300 + i * 0.5) * MiB }), 60_000)
    expect(rss.flat).toBe(false)
    expect(rss.trends.find((t) => t.name === "rss")?.flat).toBe(false)
    expect(rss.trends.find((t) => t.name === "batch ms")?.flat).toBe(true)
    expect(verdict(series(600, { heap: (i) => (90 + i * 0.3) * MiB }), 60_000).flat).toBe(false)
    expect(verdict(series(600, { state: (i) => 3000 + i * 10 }), 60_000).flat).toBe(false)
    expect(verdict(series(600, { ms: (i) => 100 + i }), 60_000).flat).toBe(false)
    expect(verdict(series(600, { cpu: (i) => 50 + i }), 60_000).flat).toBe(false)
    expect(formatVerdict(rss)).toContain("rss: first third")
    expect(formatVerdict(rss)).toContain("verdict: NOT FLAT")
  })

  it("is not flat without samples after the warm-up", () => {
    expect(verdict(series(30, {}), 60_000).flat).toBe(false)
  })

  it("prints a minute's row: batches, rows, medians, the state at its end, the p95", () => {
    const row = minuteRow(series(120, { ms: (i) => i }), 2)
    // 50 ms of CPU for 1,000 rows a batch: 500 ms per 10,000 rows
    expect(row).toBe("| 2 | 60 | 60000 | 300.0 | 90.0 | 3000 | 89.5 | 117 | 500.0 | 2.0 |")
  })
})

describe("the soak query", () => {
  it("runs: batches with rows, a bounded state the watermark evicts, memory measured", { timeout: 60_000 }, async () => {
    const samples = await runSoak({ durationMs: 9_000, rowsPerSecond: 2000, keys: 50, stateStore: "duckdb" })
    expect(samples.length).toBeGreaterThanOrEqual(3)
    expect(samples.reduce((n, s) => n + s.inputRows, 0)).toBeGreaterThan(0)
    for (const s of samples) {
      expect(s.rssBytes).toBeGreaterThan(0)
      expect(s.heapBytes).toBeGreaterThan(0)
      expect(s.cpuMs).toBeGreaterThanOrEqual(0)
      // 10 s of watermark delay over 5 s windows: at most four windows of 50 keys are open
      expect(s.stateRows).toBeLessThanOrEqual(4 * 50)
    }
    expect(Math.max(...samples.map((s) => s.stateRows))).toBeGreaterThan(0)
  })
})
