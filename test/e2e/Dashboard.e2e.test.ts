/**
 * The live dashboard end to end in headless Chromium (Debian's `chromium`, driven by
 * `playwright-core`): a session with `ui: { port: 0 }` runs a windowed aggregation over
 * `rate-micro-batch` on a real processing-time trigger; the page lists it, its charts grow as
 * batches run (through server-sent events, without refetching the list), a query that fails
 * shows its error, and a screenshot is saved to `test-output/dashboard.png`.
 *
 * Needs Chromium, which `npm test` installs first (`scripts/test-setup.sh`); without it the test fails saying so.
 */
import { mkdirSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Schema } from "effect"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { F, MemoryStream, type OpenSession, Session, Trigger } from "../../mod.ts"
import { chromiumPath, OUTPUT_DIR } from "./tools.ts"

/** The machine's network is closed: Chromium must not try to reach anything on its own. */
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

/** The number of points of each polyline of the chart titled `title` in the card of `name`. */
const chartPoints = (page: Page, name: string, title: string): Promise<ReadonlyArray<number>> =>
  page.evaluate(
    ([name, title]) => {
      const card = Array.from(document.querySelectorAll<HTMLElement>(".q")).find((q) => q.dataset.name === name)
      const chart = Array.from(card?.querySelectorAll(".chart") ?? []).find((c) => c.querySelector("h3")?.textContent?.startsWith(title))
      return Array.from(chart?.querySelectorAll("polyline") ?? []).map(
        (p) => (p.getAttribute("points") ?? "").trim().split(/\s+/).filter((s: string) => s !== "").length
      )
    },
    [name, title] as const
  )

const Reading = Schema.Struct({ n: Schema.Int })

describe("the dashboard in headless Chromium", () => {
  let spark: OpenSession | undefined
  let browser: BrowserContext | undefined
  let profile: string | undefined

  beforeAll(async () => {
    const executablePath = chromiumPath()
    profile = await mkdtemp(join(tmpdir(), "tributary-chromium-"))
    browser = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 900 },
      timeout: 60_000
    })
    spark = await Session.open({ ui: { port: 0 } })
  })

  afterAll(async () => {
    await browser?.close()
    await spark?.close()
    if (profile !== undefined) await rm(profile, { recursive: true, force: true })
  })

  it("lists the queries, moves the charts from server-sent events, shows a failure", async () => {
    const session = spark!
    const url = await session.run(session.uiWebUrl())
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
    const page = browser!.pages()[0] ?? (await browser!.newPage())
    const problems: Array<string> = []
    page.on("pageerror", (e) => problems.push(`page error: ${e.message}`))
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`console error: ${m.text()}`)
    })
    let listFetches = 0
    page.on("request", (r) => {
      if (new URL(r.url()).pathname === "/api/queries") listFetches++
    })
    await page.goto(url!)
    await page.getByText("No streaming queries yet.").waitFor({ timeout: 10_000 })

    // A windowed count with a watermark over rate-micro-batch, a batch every 250 ms of real time.
    const checkpoint = await mkdtemp(join(tmpdir(), "tributary-dashboard-e2e-"))
    const windows = session.readStream
      .format("rate-micro-batch")
      .option("rowsPerBatch", 40)
      .option("advanceMillisPerBatch", 1000)
      .load()
      .withWatermark("timestamp", "2 seconds")
      .groupBy(F.window("timestamp", "5 seconds"), F.col("value").mod(3).as("bucket"))
      .agg(F.count("*").as("events"), F.sum("value").as("total"))
    const query = await session.run(
      windows.writeStream
        .format("noop")
        .outputMode("append")
        .queryName("windowed-rate")
        .option("checkpointLocation", checkpoint)
        .trigger(Trigger.ProcessingTime("250 milliseconds"))
        .start()
    )
    try {
      const card = page.locator('.q[data-name="windowed-rate"]')
      await card.waitFor({ timeout: 10_000 })
      await expect.poll(() => chartPoints(page, "windowed-rate", "input rate"), { timeout: 15_000 }).toEqual([
        expect.toSatisfy((n: number) => n >= 3)
      ])
      const before = await chartPoints(page, "windowed-rate", "batch duration")
      const fetchesBefore = listFetches
      // The charts grow with each batch while the list is not fetched again: the progress events
      // carry the updates.
      await expect
        .poll(async () => (await chartPoints(page, "windowed-rate", "batch duration"))[0] ?? 0, { timeout: 15_000 })
        .toBeGreaterThanOrEqual(before[0]! + 4)
      expect(listFetches).toBe(fetchesBefore)
      // Every chart has drawn something, the watermark and state-row charts included.
      for (const title of ["input rate", "processing rate", "batch duration", "watermark", "state rows"]) {
        const points = await chartPoints(page, "windowed-rate", title)
        expect(points.length, title).toBeGreaterThan(0)
        for (const n of points) expect(n, title).toBeGreaterThanOrEqual(3)
      }
      await expect.poll(() => card.locator(".badge").textContent()).not.toBe("")
      const meta = await card.locator(".meta").textContent()
      expect(meta).toContain(query.id)
      expect(meta).toMatch(/watermark 1970-01-01T00:00:\d\d/)

      // A query whose map throws: the page shows it as failed, with its error.
      const readings = await session.run(MemoryStream.make(Reading))
      const failing = await session.run(
        readings
          .toDF()
          .map((r) => {
            if (r.n < 0) throw new Error(`negative reading ${r.n}`)
            return { n: r.n }
          }, Reading)
          .writeStream.format("noop")
          .queryName("failing-readings")
          .start()
      )
      await session.run(readings.addData([{ n: 1 }, { n: -7 }]))
      await expect(session.run(failing.awaitTermination())).rejects.toThrow()
      const failed = page.locator('.q[data-name="failing-readings"]')
      await failed.locator(".err").waitFor({ timeout: 10_000 })
      expect(await failed.locator(".err").textContent()).toContain("negative reading -7")
      expect(await failed.locator(".badge").textContent()).toBe("failed")

      // Let a few more batches draw, then keep a picture of the page.
      const now = (await chartPoints(page, "windowed-rate", "input rate"))[0] ?? 0
      await expect.poll(async () => (await chartPoints(page, "windowed-rate", "input rate"))[0] ?? 0, { timeout: 15_000 }).toBeGreaterThan(now + 2)
      mkdirSync(OUTPUT_DIR, { recursive: true })
      await page.screenshot({ path: join(OUTPUT_DIR, "dashboard.png"), fullPage: true })
      expect(problems).toEqual([])
    } finally {
      await session.run(query.stop())
      await rm(checkpoint, { recursive: true, force: true })
    }
    // The stopped query turns grey on the page.
    await expect.poll(() => page.locator('.q[data-name="windowed-rate"] .badge').textContent(), { timeout: 10_000 }).toBe("stopped")
  })
})
