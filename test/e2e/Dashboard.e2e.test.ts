/**
 * The live dashboard end to end in headless Chromium (Debian's `chromium`, driven by
 * `playwright-core`). A session with `ui: { port: 0 }` runs, on real processing-time triggers,
 * a windowed aggregation with a watermark over `rate-micro-batch`, a stateless query, a query
 * that fails, and a DStream StreamingContext with a socket receiver. The page lists them all;
 * the query page draws every one of Spark's charts with data, axes and a histogram, moves them
 * from server-sent events (without refetching the list), shows a value on hover, says "no
 * data" on a stateless query's state charts instead of drawing a scale, and links a failed
 * query's error to its batch. A dashboard bound beyond localhost is opened with its token.
 * Screenshots are kept in `test-output/dashboard*.png`.
 *
 * Needs Chromium, which `npm test` installs first (`scripts/test-setup.sh`); without it the test fails saying so.
 */
import { mkdirSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Schema } from "effect"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { StreamingContext } from "../../dstream/mod.ts"
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

/** What the chart of `metric` on the current view holds: points, polylines, axis labels, its "no data" text. */
const chart = (page: Page, metric: string) =>
  page.evaluate((metric) => {
    const c = document.querySelector<HTMLElement>(`.chart[data-metric="${metric}"]`)
    if (c === null) return undefined
    return {
      points: Number(c.dataset.points ?? "0"),
      polylines: Array.from(c.querySelectorAll("polyline")).map(
        (p) => (p.getAttribute("points") ?? "").trim().split(/\s+/).length
      ),
      yTicks: Array.from(c.querySelectorAll("text.ytick")).map((t) => t.textContent ?? ""),
      note: c.querySelector("text.note")?.textContent ?? null,
      xTicks: Array.from(c.querySelectorAll("text.xtick")).map((t) => t.textContent ?? ""),
      areas: c.querySelectorAll("polygon").length,
      noData: c.querySelector(".nodata")?.textContent ?? null,
      histogramBars: document.querySelectorAll(`.chart[data-metric="${metric}-histogram"] rect.bar`).length
    }
  }, metric)

/**
 * Moves the mouse over the chart of `metric` at a fraction of its plot area until its tooltip
 * shows. The page redraws on every batch, so the chart is scrolled to and measured in one go.
 */
const hoverChart = async (page: Page, metric: string, fx: number, fy: number): Promise<void> => {
  for (let i = 0; i < 20; i++) {
    const box = await page.evaluate((metric) => {
      const overlay = document.querySelector(`.chart[data-metric="${metric}"] rect.hover`)
      if (overlay === null) return null
      overlay.scrollIntoView({ block: "center" })
      const r = overlay.getBoundingClientRect()
      return { x: r.left, y: r.top, width: r.width, height: r.height }
    }, metric)
    if (box !== null) {
      await page.mouse.move(box.x + box.width * fx, box.y + box.height * fy)
      if ((await tipOf(page, metric))?.visible === true) return
    }
    await page.waitForTimeout(100)
  }
  throw new Error(`hovering the chart ${metric} shows no tooltip`)
}

/** The hover tooltip of the chart of `metric`, measured in one go (the page redraws on every batch). */
const tipOf = (page: Page, metric: string) =>
  page.evaluate((metric) => {
    const c = document.querySelector<HTMLElement>(`.chart[data-metric="${metric}"]`)
    const tip = c?.querySelector<HTMLElement>(".tip")
    if (c == null || tip == null) return undefined
    const t = tip.getBoundingClientRect()
    const r = c.getBoundingClientRect()
    return {
      visible: tip.style.display !== "none",
      text: tip.textContent ?? "",
      left: t.left,
      right: t.right,
      chartLeft: r.left,
      chartRight: r.right
    }
  }, metric)

const QUERY_METRICS = [
  "input-rate",
  "process-rate",
  "input-rows",
  "batch-duration",
  "operation-duration",
  "watermark-gap",
  "state-rows-total",
  "state-rows-updated",
  "state-memory",
  "state-rows-dropped"
]
const STATE_METRICS = ["state-rows-total", "state-rows-updated", "state-memory", "state-rows-dropped"]

const Reading = Schema.Struct({ n: Schema.Int })

const launch = async (profile: string): Promise<BrowserContext> =>
  chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath(),
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1440, height: 1000 },
    timeout: 60_000
  })

describe("the dashboard in headless Chromium", () => {
  let spark: OpenSession | undefined
  let browser: BrowserContext | undefined
  let profile: string | undefined

  beforeAll(async () => {
    profile = await mkdtemp(join(tmpdir(), "tributary-chromium-"))
    browser = await launch(profile)
    spark = await Session.open({ ui: { port: 0 } })
    mkdirSync(OUTPUT_DIR, { recursive: true })
  })

  afterAll(async () => {
    await browser?.close()
    await spark?.close()
    if (profile !== undefined) await rm(profile, { recursive: true, force: true })
  })

  it("lists queries and contexts, draws Spark's charts live with hover values, shows a failure with its batch", async () => {
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

    // A windowed count with a watermark over rate-micro-batch, a batch every 250 ms of real time;
    // event time starts a minute ago, so the watermark gap is a minute and a bit.
    const checkpoint = await mkdtemp(join(tmpdir(), "tributary-dashboard-e2e-"))
    const windows = session.readStream
      .format("rate-micro-batch")
      .option("rowsPerBatch", 40)
      .option("advanceMillisPerBatch", 1000)
      .option("startTimestamp", Date.now() - 60_000)
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
    const stateless = await session.run(
      session.readStream
        .format("rate-micro-batch")
        .option("rowsPerBatch", 5)
        .load()
        .select(F.col("value").multiply(2).as("twice"))
        .writeStream.format("noop")
        .queryName("stateless-rate")
        .trigger(Trigger.ProcessingTime("250 milliseconds"))
        .start()
    )
    // A DStream context: a queue of batches and a socket receiver, a batch every 200 ms.
    const lines = net.createServer((c) => {
      c.on("error", () => {})
      const timer = setInterval(() => c.write("tick tock\n"), 50)
      c.on("close", () => clearInterval(timer))
    })
    await new Promise<void>((r) => lines.listen(0, "127.0.0.1", () => r()))
    const ssc = await session.run(StreamingContext.make({ batchDuration: 200 }))
    const queue: Array<ReadonlyArray<number>> = Array.from({ length: 50 }, (_, i) => [i, i + 1, i + 2])
    ssc.queueStream(queue).foreachRDD(() => {})
    ssc.socketTextStream("127.0.0.1", (lines.address() as net.AddressInfo).port).foreachRDD(() => {})
    await session.run(ssc.start())
    try {
      // The overview: Spark's query table, and the context.
      const row = page.locator('tr.query[data-name="windowed-rate"]')
      await row.waitFor({ timeout: 10_000 })
      await expect
        .poll(async () => Number(await row.locator("td").nth(8).textContent()), { timeout: 15_000 })
        .toBeGreaterThanOrEqual(2)
      // The first batch has no input rate (no trigger before it); the average moves with the next.
      await expect
        .poll(async () => Number(await row.locator("td").nth(6).textContent()), { timeout: 15_000 })
        .toBeGreaterThan(0)
      // The status column follows the batches (it starts as "Initializing sources").
      await expect
        .poll(() => row.locator(".badge").textContent(), { timeout: 10_000 })
        .toMatch(/^(Processing new data|Waiting for next trigger|Waiting for data to arrive)$/)
      // The average processing rate too, once a batch has processed rows.
      await expect
        .poll(async () => Number(await row.locator("td").nth(7).textContent()), { timeout: 15_000 })
        .toBeGreaterThan(0)
      const cells = await row.locator("td").allTextContents()
      expect(cells[2]).toBe(query.id)
      expect(cells[3]).toBe(query.runId)
      expect(cells[4]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/)
      await page.locator('table.active tr.query[data-name="stateless-rate"]').waitFor()
      const context = page.locator(`tr.context[data-id="${ssc.id}"]`)
      await context.waitFor({ timeout: 10_000 })
      await expect
        .poll(async () => Number(await context.locator("td").nth(4).textContent()), { timeout: 15_000 })
        .toBeGreaterThanOrEqual(3)
      expect(await context.locator("td").nth(9).textContent()).toBe("1 / 1")

      // The query's page: every chart has data, axes and (for one series) a histogram.
      await row.locator("a").first().click()
      await page.waitForURL(`**/#/query/${query.runId}`)
      await expect
        .poll(async () => (await chart(page, "watermark-gap"))?.points ?? 0, { timeout: 20_000 })
        .toBeGreaterThanOrEqual(3)
      for (const metric of QUERY_METRICS) {
        const c = await chart(page, metric)
        expect(c, metric).toBeDefined()
        expect(c!.noData, metric).toBeNull()
        expect(c!.points, metric).toBeGreaterThanOrEqual(3)
        expect(c!.polylines.length, metric).toBeGreaterThan(0)
        // In-order rate data: no row is ever dropped, and the chart says every batch had 0 on a
        // single "0" tick rather than inventing a 0..1 scale.
        if (metric === "state-rows-dropped") expect(c!.yTicks, metric).toEqual(["0"])
        else expect(c!.yTicks.length, metric).toBeGreaterThanOrEqual(2)
        expect(c!.xTicks.length, metric).toBeGreaterThanOrEqual(1)
        if (metric !== "operation-duration") expect(c!.histogramBars, metric).toBeGreaterThan(0)
      }
      // Operation Duration stacks one area per phase the progress reports, as Spark's does.
      const operations = (await chart(page, "operation-duration"))!
      expect(operations.polylines.length).toBeGreaterThanOrEqual(4)
      expect(operations.areas).toBe(operations.polylines.length)
      expect((await chart(page, "batch-duration"))!.areas).toBe(0)
      expect((await chart(page, "state-rows-dropped"))!.note).toBe("every batch 0")
      expect((await chart(page, "input-rate"))!.note).toBeNull()
      // The gap, not the absolute watermark: a minute or so, on an axis in seconds.
      const gapTicks = (await chart(page, "watermark-gap"))!.yTicks.map(Number)
      expect(Math.max(...gapTicks)).toBeGreaterThanOrEqual(50)
      expect(Math.max(...gapTicks)).toBeLessThan(400)

      // Live: the charts grow with each batch while the list is not fetched again.
      const before = (await chart(page, "batch-duration"))!.points
      const fetchesBefore = listFetches
      await expect
        .poll(async () => (await chart(page, "batch-duration"))!.points, { timeout: 15_000 })
        .toBeGreaterThanOrEqual(before + 4)
      expect(listFetches).toBe(fetchesBefore)

      // Hover: the tooltip names a batch and its value, and stays while batches keep coming.
      await hoverChart(page, "input-rate", 0.6, 0.5)
      await expect.poll(async () => (await tipOf(page, "input-rate"))?.visible, { timeout: 5_000 }).toBe(true)
      const tip = (await tipOf(page, "input-rate"))!
      expect(tip.text).toMatch(/^batch \d+ · \d\d:\d\d:\d\d[\d.,kM]+ rows\/s$/)
      // Inside the chart, not clipped at its edge.
      expect(tip.right).toBeLessThanOrEqual(tip.chartRight + 1)
      expect(tip.left).toBeGreaterThanOrEqual(tip.chartLeft - 1)
      await page.waitForTimeout(600)
      expect((await tipOf(page, "input-rate"))?.visible).toBe(true)
      const opTip = page.locator('.chart[data-metric="operation-duration"] .tip')
      await hoverChart(page, "operation-duration", 0.95, 0.1)
      await expect.poll(() => opTip.textContent()).toMatch(/addBatch: [\d.]+ ms.*total: [\d.]+ ms$/)

      // Each stateful operator's own metrics, and the recent batches.
      const operator = page.locator('.op[data-operator="0"]')
      expect(await operator.locator("h4").textContent()).toBe("Operator 0: stateStoreSave")
      expect((await chart(page, "operator-0-rows"))!.polylines.length).toBe(3)
      expect(await page.locator("table.batches tbody tr").count()).toBeGreaterThanOrEqual(5)
      await page.mouse.move(0, 0)
      await page.screenshot({ path: join(OUTPUT_DIR, "dashboard-query.png"), fullPage: true })

      // A stateless query's state charts say so; its watermark chart too.
      await page.goto(`${url}#/query/${stateless.runId}`)
      await expect
        .poll(async () => (await chart(page, "input-rate"))?.points ?? 0, { timeout: 15_000 })
        .toBeGreaterThanOrEqual(2)
      for (const metric of STATE_METRICS) {
        const c = (await chart(page, metric))!
        expect(c.noData, metric).toBe("No data: this query has no stateful operator.")
        expect(c.polylines, metric).toEqual([])
        expect(c.yTicks, metric).toEqual([])
      }
      expect((await chart(page, "watermark-gap"))!.noData).toBe("No data: this query has no watermark (withWatermark).")
      expect(await page.locator(".op").count()).toBe(0)
      await page.screenshot({ path: join(OUTPUT_DIR, "dashboard-stateless.png"), fullPage: true })

      // A query whose map throws: failed, with its error linked to its batch.
      await page.goto(url!)
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
      await session.run(readings.addData([{ n: 1 }]))
      await session.run(failing.processAllAvailable())
      await session.run(readings.addData([{ n: -7 }]))
      await expect(session.run(failing.awaitTermination())).rejects.toThrow()
      const failedRow = page.locator('table.completed tr.query[data-name="failing-readings"]')
      await failedRow.waitFor({ timeout: 10_000 })
      expect(await failedRow.locator(".badge").textContent()).toBe("failed")
      expect(await failedRow.locator("td.err").textContent()).toContain("negative reading -7")
      await page.screenshot({ path: join(OUTPUT_DIR, "dashboard.png"), fullPage: true })
      await failedRow.locator("td.err a").click()
      const error = page.locator("#query-error")
      await error.waitFor()
      expect(await error.locator("pre").textContent()).toContain("negative reading -7")
      expect(await error.locator("b").textContent()).toBe("Failed in batch 1")
      await error.locator("a").click()
      await page.waitForURL(`**/#/query/${failing.runId}/batch/1`)
      const failedBatch = page.locator("table.batches tr#batch-1")
      await expect.poll(() => failedBatch.getAttribute("class")).toContain("hl")
      expect(await failedBatch.textContent()).toContain("negative reading -7")
      expect(await page.locator("table.batches tr#batch-0").count()).toBe(1)
      await page.screenshot({ path: join(OUTPUT_DIR, "dashboard-failed.png"), fullPage: true })

      // The StreamingContext's page: Spark's Streaming tab charts, receivers, batches.
      await page.goto(`${url}#/context/${ssc.id}`)
      for (const metric of ["input-rate", "scheduling-delay", "processing-time", "total-delay"]) {
        await expect
          .poll(async () => (await chart(page, metric))?.points ?? 0, { timeout: 15_000 })
          .toBeGreaterThanOrEqual(3)
      }
      expect(await page.locator("tr.receiver").count()).toBe(1)
      expect(await page.locator("tr.receiver td").nth(2).textContent()).toBe("active")
      expect(await page.locator("tr.batch.completed").count()).toBeGreaterThanOrEqual(3)
      await page.screenshot({ path: join(OUTPUT_DIR, "dashboard-context.png"), fullPage: true })

      // A context whose output operation throws: failed, with the error and the batch it failed in.
      const broken = await session.run(StreamingContext.make({ batchDuration: 200 }))
      broken.queueStream([[1], [2]]).foreachRDD((rdd) => {
        if (rdd.collect()[0] === 2) throw new Error("bad record 2")
      })
      await session.run(broken.start())
      await expect(session.run(broken.awaitTermination())).rejects.toThrow()
      await page.goto(`${url}#/context/${broken.id}`)
      const contextError = page.locator("#context-error")
      await contextError.waitFor({ timeout: 10_000 })
      expect(await contextError.locator("pre").textContent()).toContain("bad record 2")
      expect(await contextError.locator("b").textContent()).toMatch(
        /^Failed in the batch of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/
      )
      expect(await page.locator("tr.batch.failed").count()).toBe(1)
      expect(await page.locator("tr.batch.failed").textContent()).toContain("foreachRDD failed: Error: bad record 2")
      await session.run(broken.stop())
      expect(problems).toEqual([])
    } finally {
      await session.run(query.stop())
      await session.run(stateless.stop())
      await session.run(ssc.stop())
      await new Promise<void>((r) => lines.close(() => r()))
      await rm(checkpoint, { recursive: true, force: true })
    }
    // The stopped query moves to the finished ones, grey.
    await page.goto(url!)
    const stopped = page.locator('table.completed tr.query[data-name="windowed-rate"] .badge')
    await expect.poll(() => stopped.textContent(), { timeout: 10_000 }).toBe("stopped")
    await expect
      .poll(() => page.locator(`tr.context[data-id="${ssc.id}"] .badge`).textContent(), { timeout: 10_000 })
      .toBe("stopped")
  })

  it("beyond localhost, the page opens with its token and then drops it from the address", async () => {
    const open = await Session.open({ ui: { port: 0, host: "0.0.0.0" } })
    try {
      const url = (await open.run(open.uiWebUrl()))!
      const token = new URL(url).searchParams.get("token")!
      expect(token).toMatch(/^[0-9a-f]{64}$/)
      const local = url.replace("0.0.0.0", "127.0.0.1")
      const page = await browser!.newPage()
      const refused = await page.goto(local.replace(/\?.*$/, ""))
      expect(refused!.status()).toBe(401)
      expect(await page.content()).not.toContain(token)
      await page.goto(local)
      await page.getByText("No streaming queries yet.").waitFor({ timeout: 10_000 })
      await expect.poll(() => page.locator("#live").textContent(), { timeout: 10_000 }).toBe("● live")
      expect(page.url()).not.toContain(token)
      await page.close()
    } finally {
      await open.close()
    }
  })
})
