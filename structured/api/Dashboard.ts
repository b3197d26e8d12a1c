/**
 * The live dashboard (Spark UI's Structured Streaming tab): `Session.layer({ ui: { port } })`
 * serves a page listing the session's active and finished queries with, per query, charts of
 * input rate, processing rate, batch duration by phase, watermark and state rows, updated live
 * through server-sent events, and the query's last error. `spark.uiWebUrl()` gives its address.
 *
 * Routes: `/` (the page, self-contained: no external scripts), `/api/queries` (every query with
 * its recent progress, JSON), `/api/events` (server-sent events: `started`, `progress`, `idle`,
 * `terminated`). It listens on localhost only. Built on `node:http`, which Node and Deno both
 * provide.
 *
 * @example
 * ```ts
 * const program = Effect.gen(function* () {
 *   const spark = yield* Session
 *   console.log(yield* spark.uiWebUrl())     // http://127.0.0.1:4040/
 * })
 * Effect.runPromise(program.pipe(Effect.provide(Session.layer({ ui: { port: 4040 } }))))
 * ```
 * @since 0.1.0
 */
import * as http from "node:http"
import { Effect, type Scope } from "effect"
import type { SessionState } from "../contracts/SessionState.ts"
import type { StreamingQuery } from "../contracts/StreamingQuery.ts"
import type { StreamingQueryListener } from "../contracts/StreamingQueryListener.ts"
import type { StreamingQueryProgress } from "../contracts/StreamingQueryProgress.ts"

/** The dashboard's options (`Session.layer({ ui })`). */
export interface UiOptions {
  /** The TCP port; 0 picks a free one. */
  readonly port: number
  /** The interface to listen on (default `127.0.0.1`). */
  readonly host?: string
}

/** One query as `/api/queries` reports it. */
export interface QuerySummary {
  readonly id: string
  readonly runId: string
  readonly name: string | null
  readonly active: boolean
  readonly status: string
  readonly exception: string | null
  readonly recentProgress: ReadonlyArray<StreamingQueryProgress>
}

const summarize = (q: StreamingQuery, active: boolean): Effect.Effect<QuerySummary> =>
  Effect.gen(function* () {
    const status = yield* q.status()
    const error = yield* q.exception()
    return {
      id: q.id,
      runId: q.runId,
      name: q.name,
      active,
      status: status.message,
      exception: error?.message ?? null,
      recentProgress: yield* q.recentProgress()
    }
  })

/** Every query of the session: the active ones, then the finished ones (newest first). */
export const querySummaries = (state: SessionState): Effect.Effect<ReadonlyArray<QuerySummary>> =>
  Effect.gen(function* () {
    const out: Array<QuerySummary> = []
    const seen = new Set<string>()
    for (const q of state.queries.active.values()) {
      seen.add(q.runId)
      out.push(yield* summarize(q, yield* q.isActive()))
    }
    for (const q of [...state.queries.terminated].reverse()) {
      if (seen.has(q.runId)) continue
      seen.add(q.runId)
      out.push(yield* summarize(q, false))
    }
    return out
  })

/** Numbers JSON cannot carry (an infinite rate) are left out, as Spark's progress JSON does. */
const toJson = (value: unknown): string =>
  JSON.stringify(value, (_k, v) => (typeof v === "number" && !Number.isFinite(v) ? undefined : v))

/**
 * Starts the dashboard for a session in `scope`: the server closes (and its event streams end)
 * when the scope closes. Returns its address.
 *
 * @since 0.1.0
 */
export const serve = (
  state: SessionState,
  options: UiOptions
): Effect.Effect<string, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const clients = new Set<http.ServerResponse>()
    const broadcast = (event: string, data: unknown) => {
      const frame = `event: ${event}\ndata: ${toJson(data)}\n\n`
      for (const c of clients) c.write(frame)
    }
    const listener: StreamingQueryListener = {
      onQueryStarted: (e) => broadcast("started", e),
      onQueryProgress: (e) => broadcast("progress", e.progress),
      onQueryIdle: (e) => broadcast("idle", e),
      onQueryTerminated: (e) => broadcast("terminated", e)
    }
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://localhost")
      if (req.method !== "GET") {
        res.writeHead(405, { allow: "GET" }).end()
        return
      }
      switch (url.pathname) {
        case "/":
          res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE)
          return
        case "/api/queries":
          Effect.runPromise(querySummaries(state)).then(
            (qs) => res.writeHead(200, { "content-type": "application/json" }).end(toJson(qs)),
            (e) => res.writeHead(500, { "content-type": "text/plain" }).end(String(e))
          )
          return
        case "/api/events":
          res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
          res.write(": connected\n\n")
          clients.add(res)
          req.on("close", () => clients.delete(res))
          return
        default:
          res.writeHead(404, { "content-type": "text/plain" }).end("not found")
      }
    })
    const host = options.host ?? "127.0.0.1"
    const port = yield* Effect.callback<number, Error>((resume) => {
      server.once("error", (e) => resume(Effect.fail(new Error(`The dashboard cannot listen on ${host}:${options.port}: ${e.message}`))))
      server.listen(options.port, host, () => resume(Effect.succeed((server.address() as { port: number }).port)))
    })
    state.queries.listeners.push(listener)
    yield* Effect.addFinalizer(() =>
      Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            const i = state.queries.listeners.indexOf(listener)
            if (i >= 0) state.queries.listeners.splice(i, 1)
            for (const c of clients) c.end()
            clients.clear()
            server.close(() => resolve())
            server.closeAllConnections?.()
          })
      )
    )
    return `http://${host}:${port}/`
  })

/** The page: plain DOM and SVG, no dependencies; every value is inserted as text, never as HTML. */
const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>tributary · Structured Streaming</title><link rel="icon" href="data:,">
<style>
body{font:14px system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#202124;background:#f6f7f9}
header{background:#1f2937;color:#fff;padding:10px 20px;display:flex;align-items:baseline;gap:12px}
header h1{font-size:17px;margin:0;font-weight:600}header .sub{color:#cbd5e1;font-size:12px}
main{padding:16px 20px}
#empty{color:#666;padding:24px 0}
.q{background:#fff;border:1px solid #dde1e6;border-radius:8px;padding:12px 14px;margin:0 0 16px;box-shadow:0 1px 2px rgba(0,0,0,.04)}
.q h2{font-size:15px;margin:0 0 4px;display:flex;align-items:center;gap:8px}
.meta{color:#5f6368;font-size:12px;font-family:ui-monospace,monospace;word-break:break-all}
.err{margin-top:10px;padding:8px 10px;border-left:3px solid #d93025;background:#fdf2f1;color:#a50e0e;white-space:pre-wrap;font:12px ui-monospace,monospace}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:10px;margin-top:10px}
.nodata{color:#80868b;font-size:12px;margin-top:8px}
.chart{border:1px solid #eceff1;border-radius:6px;padding:6px 8px;background:#fcfcfd}
.chart h3{font-size:12px;margin:0 0 2px;color:#3c4043;font-weight:600;display:flex;justify-content:space-between;gap:8px}
.chart h3 .now{font-weight:400;color:#5f6368;font-variant-numeric:tabular-nums;white-space:nowrap}
.plot{position:relative}.chart svg{display:block;width:100%;height:90px}
.plot .max{position:absolute;top:0;left:2px;font-size:10px;color:#80868b;background:rgba(252,252,253,.85);padding:0 2px}
.legend{font-size:11px;color:#5f6368;display:flex;gap:10px;margin-top:2px}
.legend i{display:inline-block;width:10px;height:3px;margin-right:4px;vertical-align:middle}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:11px;font-weight:500;background:#e6f4ea;color:#137333}
.badge.off{background:#eceff1;color:#5f6368}.badge.fail{background:#fce8e6;color:#b3261e}
</style></head>
<body><header><h1>Structured Streaming</h1><span class="sub">tributary · live from server-sent events</span></header>
<main><div id="queries"></div></main>
<script>
const queries = new Map()
const W = 300, H = 90, PAD_L = 4, PAD_R = 4, PAD_T = 12, PAD_B = 4
function fmt(x) {
  if (!isFinite(x)) return "–"
  const a = Math.abs(x)
  return a >= 1e6 ? (x / 1e6).toFixed(1) + "M" : a >= 1e4 ? (x / 1e3).toFixed(1) + "k" : a >= 100 || Number.isInteger(x) ? String(Math.round(x)) : x.toFixed(1)
}
// One SVG polyline per series; the y range is 0..max (or min..max for absolute values such as
// a watermark), the x range the batches shown.
function plot(series, fromMin) {
  const all = series.flatMap(s => s.points)
  if (all.length === 0) return { svg: "", max: undefined }
  const xs = all.map(p => p[0]), ys = all.map(p => p[1])
  const x0 = Math.min(...xs), x1 = Math.max(...xs, x0 + 1)
  let y0 = fromMin ? Math.min(...ys) : 0, y1 = Math.max(...ys)
  if (y1 <= y0) y1 = y0 + 1
  const X = x => (PAD_L + (x - x0) / (x1 - x0) * (W - PAD_L - PAD_R)).toFixed(1)
  const Y = y => (H - PAD_B - (y - y0) / (y1 - y0) * (H - PAD_T - PAD_B)).toFixed(1)
  // The SVG stretches to its box: strokes keep their width (non-scaling-stroke), labels are HTML.
  let out = '<line vector-effect="non-scaling-stroke" x1="0" x2="' + W + '" y1="' + (H - PAD_B) + '" y2="' + (H - PAD_B) + '" stroke="#e0e3e7"/>' +
    '<line vector-effect="non-scaling-stroke" x1="0" x2="' + W + '" y1="' + PAD_T + '" y2="' + PAD_T + '" stroke="#eceff1" stroke-dasharray="3 3"/>'
  for (const s of series) {
    if (s.points.length === 0) continue
    out += '<polyline vector-effect="non-scaling-stroke" fill="none" stroke="' + s.color + '" stroke-width="1.6" stroke-linejoin="round" points="' +
      s.points.map(p => X(p[0]) + "," + Y(p[1])).join(" ") + '"/>'
  }
  return { svg: out, max: y1 }
}
function chart(title, now, series, options) {
  const fromMin = options && options.fromMin
  const div = document.createElement("div"); div.className = "chart"
  const h = document.createElement("h3"); h.textContent = title
  const v = document.createElement("span"); v.className = "now"; v.textContent = now; h.appendChild(v)
  div.appendChild(h)
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg")
  svg.setAttribute("viewBox", "0 0 " + W + " " + H); svg.setAttribute("preserveAspectRatio", "none")
  const drawn = plot(series, fromMin)
  svg.innerHTML = drawn.svg
  const box = document.createElement("div"); box.className = "plot"; box.appendChild(svg)
  if (drawn.max !== undefined && !fromMin) {
    const max = document.createElement("span"); max.className = "max"; max.textContent = "max " + fmt(drawn.max); box.appendChild(max)
  }
  div.appendChild(box)
  if (series.length > 1) {
    const legend = document.createElement("div"); legend.className = "legend"
    for (const s of series) {
      const item = document.createElement("span"), swatch = document.createElement("i")
      swatch.style.background = s.color; item.appendChild(swatch); item.appendChild(document.createTextNode(s.name)); legend.appendChild(item)
    }
    div.appendChild(legend)
  }
  return div
}
function num(x) { return typeof x === "number" && isFinite(x) ? x : 0 }
function stateRows(p) { return p.stateOperators.reduce((n, o) => n + o.numRowsTotal, 0) }
function time(ms) { return new Date(ms).toISOString().replace("T", " ").replace(/\\.000Z$|Z$/, "") }
function render() {
  const root = document.getElementById("queries"); root.textContent = ""
  if (queries.size === 0) { const e = document.createElement("div"); e.id = "empty"; e.textContent = "No streaming queries yet."; root.appendChild(e) }
  for (const q of queries.values()) {
    const box = document.createElement("div"); box.className = "q"; box.dataset.runId = q.runId; box.dataset.name = q.name || ""
    const h = document.createElement("h2"); h.textContent = q.name || "query"
    const badge = document.createElement("span")
    badge.className = "badge" + (q.active ? "" : q.exception ? " fail" : " off")
    badge.textContent = q.active ? q.status : q.exception ? "failed" : "stopped"
    h.appendChild(badge); box.appendChild(h)
    const last = q.recentProgress[q.recentProgress.length - 1]
    const meta = document.createElement("div"); meta.className = "meta"
    meta.textContent = "id " + q.id + " · run " + q.runId + (last ? " · batch " + last.batchId + " · watermark " + (last.eventTime.watermark || "–") : "")
    box.appendChild(meta)
    const ps = q.recentProgress.map((p, i) => ({ i, p }))
    if (ps.length === 0) {
      const none = document.createElement("div"); none.className = "nodata"; none.textContent = "No batch has run yet."; box.appendChild(none)
    }
    const now = (f, unit) => last ? fmt(f(last)) + unit : "–"
    const charts = document.createElement("div"); charts.className = "charts"
    charts.appendChild(chart("input rate (rows/s)", now(p => num(p.inputRowsPerSecond), ""),
      [{ name: "input", color: "#1a73e8", points: ps.map(({ i, p }) => [i, num(p.inputRowsPerSecond)]) }]))
    charts.appendChild(chart("processing rate (rows/s)", now(p => num(p.processedRowsPerSecond), ""),
      [{ name: "processing", color: "#188038", points: ps.map(({ i, p }) => [i, num(p.processedRowsPerSecond)]) }]))
    charts.appendChild(chart("batch duration (ms)", now(p => num(p.batchDuration), " ms"), [
      { name: "total", color: "#3c4043", points: ps.map(({ i, p }) => [i, num(p.batchDuration)]) },
      { name: "addBatch", color: "#e37400", points: ps.map(({ i, p }) => [i, num(p.durationMs.addBatch)]) },
      { name: "walCommit", color: "#9334e6", points: ps.map(({ i, p }) => [i, num(p.durationMs.walCommit)]) }]))
    const marks = ps.filter(({ p }) => p.eventTime.watermark).map(({ i, p }) => [i, Date.parse(p.eventTime.watermark)])
    charts.appendChild(chart("watermark", marks.length ? time(marks[marks.length - 1][1]) : "–",
      [{ name: "watermark", color: "#d93025", points: marks }], { fromMin: true }))
    charts.appendChild(chart("state rows", now(stateRows, ""),
      [{ name: "state rows", color: "#007b83", points: ps.map(({ i, p }) => [i, stateRows(p)]) }]))
    if (ps.length > 0) box.appendChild(charts)
    if (q.exception) { const e = document.createElement("div"); e.className = "err"; e.textContent = q.exception; box.appendChild(e) }
    root.appendChild(box)
  }
}
async function refresh() {
  const list = await (await fetch("/api/queries")).json()
  queries.clear(); for (const q of list) queries.set(q.runId, q)
  render()
}
const events = new EventSource("/api/events")
events.addEventListener("progress", (e) => {
  const p = JSON.parse(e.data), q = queries.get(p.runId)
  if (q === undefined) return refresh()
  q.recentProgress = [...q.recentProgress, p].slice(-100); render()
})
for (const kind of ["started", "terminated", "idle"]) events.addEventListener(kind, () => refresh())
refresh()
</script></body></html>`
