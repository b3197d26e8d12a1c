/**
 * The dashboard's page: one self-contained HTML document (no external scripts, styles or fonts)
 * with hand-written SVG charts. Every value is inserted as text, never as HTML.
 *
 * Views (by the address's `#`): `#/` the query table (active and finished queries, DStream
 * StreamingContexts), `#/query/<runId>` a query's charts, operators and batches,
 * `#/context/<id>` a StreamingContext's batches and receivers.
 *
 * @since 0.1.0
 */

const STYLE = `
*{box-sizing:border-box}
body{font:14px system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#202124;background:#f6f7f9}
header{background:#1f2937;color:#fff;padding:10px 20px;display:flex;align-items:baseline;gap:14px}
header h1{font-size:17px;margin:0;font-weight:600}header a{color:#cbd5e1;text-decoration:none;font-size:13px}
header a:hover{color:#fff}header .live{margin-left:auto;font-size:12px;color:#86efac}header .live.off{color:#fca5a5}
main{padding:14px 20px 40px}
h2{font-size:16px;margin:18px 0 8px}h2 .n{color:#5f6368;font-weight:400}
h3{font-size:14px;margin:18px 0 6px}
a{color:#1a56db}
.empty,.nodata{color:#5f6368;padding:6px 0}
table.list{border-collapse:collapse;width:100%;background:#fff;border:1px solid #dde1e6;font-size:13px}
table.list th,table.list td{padding:5px 8px;border-bottom:1px solid #eceff1;text-align:left;vertical-align:top}
table.list th{background:#f1f3f4;font-weight:600;white-space:nowrap}
table.list td.num,table.list th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table.list td.mono{font:12px ui-monospace,monospace;word-break:break-all}
table.list tr.hl td{background:#fdf2f1}
table.list tr.query td:first-child,table.list tr.context td:first-child{white-space:nowrap}
table.list td.err{color:#a50e0e;max-width:420px;white-space:pre-wrap;word-break:break-word}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:11px;font-weight:500;background:#e6f4ea;color:#137333;white-space:nowrap}
.badge.off{background:#eceff1;color:#5f6368}.badge.fail{background:#fce8e6;color:#b3261e}
.title{display:flex;align-items:center;gap:10px}.title h2{margin:6px 0}
.facts{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:4px 18px;background:#fff;border:1px solid #dde1e6;padding:10px 12px;font-size:13px}
.facts div{min-width:0}.facts b{display:block;font-weight:600;color:#5f6368;font-size:11px;text-transform:uppercase;letter-spacing:.03em}
.facts span{font-variant-numeric:tabular-nums;overflow-wrap:anywhere}
.error{margin:12px 0;padding:10px 12px;border-left:4px solid #d93025;background:#fdf2f1;color:#a50e0e}
.error pre{white-space:pre-wrap;word-break:break-word;margin:6px 0 0;font:12px ui-monospace,monospace}
.metrics{display:grid;grid-template-columns:minmax(170px,220px) minmax(0,1fr) minmax(180px,300px);background:#fff;border:1px solid #dde1e6}
.metrics>div{border-bottom:1px solid #eceff1;padding:8px 10px;min-width:0}
.metrics .label b{display:block;font-size:13px}.metrics .label span{display:block;color:#5f6368;font-size:12px;margin-top:4px;font-variant-numeric:tabular-nums}
.chart{position:relative}.chart svg{display:block;width:100%;height:auto;max-height:220px}
.chart svg text{font:10px system-ui,sans-serif;fill:#5f6368}
.chart .nodata{height:56px;display:flex;align-items:center;justify-content:center;background:#fafbfc;border:1px dashed #dadce0;border-radius:4px;font-size:12px;text-align:center;padding:0 12px}
.tip{position:absolute;pointer-events:none;background:#202124;color:#fff;font-size:12px;padding:5px 8px;border-radius:4px;white-space:nowrap;z-index:5;font-variant-numeric:tabular-nums}
.tip div{line-height:1.4}.tip i{display:inline-block;width:8px;height:8px;margin-right:5px;border-radius:2px}
.legend{font-size:11px;color:#5f6368;display:flex;flex-wrap:wrap;gap:4px 12px;padding-top:4px}
.legend i{display:inline-block;width:10px;height:3px;margin-right:4px;vertical-align:middle}
.legendbox{font-size:12px;color:#3c4043}.legendbox div{padding:2px 0;font-variant-numeric:tabular-nums}.legendbox i{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:2px;vertical-align:-1px}
.ops{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:10px}
.op .facts{grid-template-columns:repeat(3,minmax(0,1fr));border:0;padding:0 0 8px}
.op{background:#fff;border:1px solid #dde1e6;padding:8px 10px}.op h4{margin:0 0 6px;font-size:13px}
`

const SCRIPT = String.raw`
"use strict"
const queries = new Map()   // runId -> summary
const contexts = new Map()  // id -> summary
let hover = null            // { key, x } kept across renders while the pointer is on a chart
let lastFocus = null        // the address whose batch or error was last scrolled to
const COLORS = ["#1a73e8", "#e37400", "#188038", "#9334e6", "#d93025", "#007b83", "#b06000", "#5f6368"]
const SVGNS = "http://www.w3.org/2000/svg"

// ---- formatting --------------------------------------------------------------------------
function fmt(x) {
  if (x === null || x === undefined || !isFinite(x)) return "–"
  const a = Math.abs(x)
  if (a >= 1e9) return (x / 1e9).toFixed(2) + "G"
  if (a >= 1e6) return (x / 1e6).toFixed(2) + "M"
  if (a >= 1e4) return (x / 1e3).toFixed(1) + "k"
  if (Number.isInteger(x)) return String(x)
  return a >= 100 ? x.toFixed(0) : a >= 1 ? x.toFixed(2) : x.toPrecision(2)
}
function bytes(x) {
  if (x === null || x === undefined || !isFinite(x)) return "–"
  const u = ["B", "KiB", "MiB", "GiB", "TiB"]; let i = 0
  while (Math.abs(x) >= 1024 && i < u.length - 1) { x /= 1024; i++ }
  return (i === 0 ? String(Math.round(x)) : x.toFixed(1)) + " " + u[i]
}
function dur(ms) {
  if (ms === null || ms === undefined || !isFinite(ms)) return "–"
  if (ms < 1000) return Math.round(ms) + " ms"
  const s = ms / 1000
  if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + " s"
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = Math.floor(s % 60)
  return h > 0 ? h + "h " + m + "m " + r + "s" : m + "m " + r + "s"
}
function clock(ms) { return new Date(ms).toISOString().slice(11, 19) }
function when(ms) { return ms === null || ms === undefined || !isFinite(ms) ? "–" : new Date(ms).toISOString().replace("T", " ").replace("Z", "") }
function num(x) { return typeof x === "number" && isFinite(x) ? x : null }

// ---- DOM helpers -------------------------------------------------------------------------
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag)
  if (attrs) for (const k in attrs) {
    if (attrs[k] === undefined || attrs[k] === null) continue
    if (k === "class") e.className = attrs[k]; else if (k === "text") e.textContent = attrs[k]; else e.setAttribute(k, attrs[k])
  }
  for (const c of kids) if (c !== null && c !== undefined) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c)
  return e
}
function svg(tag, attrs, text) {
  const e = document.createElementNS(SVGNS, tag)
  for (const k in attrs) e.setAttribute(k, attrs[k])
  if (text !== undefined) e.textContent = text
  return e
}
function table(head, rows, opts) {
  const t = el("table", { class: "list" + (opts && opts.cls ? " " + opts.cls : "") })
  const tr = el("tr")
  for (const h of head) tr.appendChild(el("th", { class: h.num ? "num" : null, text: h.name }))
  t.appendChild(el("thead", null, tr))
  const body = el("tbody")
  for (const r of rows) body.appendChild(r)
  t.appendChild(body)
  return t
}
function td(value, cls) {
  const c = el("td", { class: cls || null })
  if (value instanceof Node) c.appendChild(value); else c.textContent = value === undefined || value === null ? "–" : String(value)
  return c
}
function badge(q) {
  if (q.active) return el("span", { class: "badge", text: q.status })
  return q.exception ? el("span", { class: "badge fail", text: "failed" }) : el("span", { class: "badge off", text: "stopped" })
}

// ---- scales --------------------------------------------------------------------------------
function niceStep(range, count) {
  const raw = range / Math.max(1, count), mag = Math.pow(10, Math.floor(Math.log10(raw))), n = raw / mag
  return (n <= 1 ? 1 : n <= 2 ? 2 : n <= 2.5 ? 2.5 : n <= 5 ? 5 : 10) * mag
}
function yTicks(max) {
  if (max <= 0) return { top: 1, ticks: [0] }
  const step = niceStep(max, 4), top = Math.ceil(max / step - 1e-9) * step, ticks = []
  for (let v = 0; v <= top + step / 2; v += step) ticks.push(+v.toPrecision(12))
  return { top, ticks }
}
function timeTicks(t0, t1, width) {
  const count = Math.max(2, Math.floor(width / 90)), spans = [100, 200, 250, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5, 216e5, 864e5]
  let step = spans[spans.length - 1]
  for (const s of spans) if ((t1 - t0) / s <= count) { step = s; break }
  const out = []
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) out.push(t)
  return { step, ticks: out }
}

// ---- the timeline chart with its histogram -----------------------------------------------
// spec: { key, unit, format, series: [{ name, color, points: [[time, value, batchId]] }], noData }
function timeline(spec) {
  const box = el("div", { class: "chart", "data-metric": spec.key })
  const all = spec.series.flatMap(s => s.points)
  box.dataset.points = String(all.length)
  if (all.length === 0) {
    box.appendChild(el("div", { class: "nodata", text: spec.noData || "No data yet." }))
    return box
  }
  const W = Math.max(320, (spec.width || 600)), H = 170, L = 52, R = 12, T = 10, B = 22
  const f = spec.format || fmt
  const ts = all.map(p => p[0]), vs = all.map(p => p[1])
  let t0 = Math.min(...ts), t1 = Math.max(...ts)
  if (t1 === t0) { t0 -= 1000; t1 += 1000 }
  // Stacked (Spark's Operation Duration): each series sits on the ones before it; top[i] maps a
  // batch time to the top of series i.
  const top = spec.series.map(() => new Map())
  if (spec.stacked) {
    const base = new Map()
    spec.series.forEach((se, i) => { for (const p of se.points) { const v = (base.get(p[0]) || 0) + p[1]; base.set(p[0], v); top[i].set(p[0], v) } })
  }
  const y = yTicks(spec.stacked ? Math.max(...top.flatMap(m => [...m.values()])) : Math.max(...vs))
  const X = t => L + (t - t0) / (t1 - t0) * (W - L - R)
  const Y = v => H - B - (v / y.top) * (H - T - B)
  const s = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img" })
  for (const v of y.ticks) {
    s.appendChild(svg("line", { x1: L, x2: W - R, y1: Y(v), y2: Y(v), stroke: v === 0 ? "#bdc1c6" : "#eceff1" }))
    s.appendChild(svg("text", { x: L - 6, y: Y(v) + 3, "text-anchor": "end", class: "ytick" }, f(v)))
  }
  s.appendChild(svg("line", { x1: L, x2: L, y1: T, y2: H - B, stroke: "#bdc1c6" }))
  const xt = timeTicks(t0, t1, W - L - R)
  for (const t of xt.ticks) {
    s.appendChild(svg("line", { x1: X(t), x2: X(t), y1: H - B, y2: H - B + 4, stroke: "#bdc1c6" }))
    // Labels at the ends stay inside the chart instead of being cut at its edge.
    const anchor = X(t) > W - R - 30 ? "end" : X(t) < L + 30 ? "start" : "middle"
    s.appendChild(svg("text", { x: X(t), y: H - 6, "text-anchor": anchor, class: "xtick" }, xt.step < 1000 ? new Date(t).toISOString().slice(11, 21) : clock(t)))
  }
  if (y.ticks.length === 1) s.appendChild(svg("text", { x: W - R, y: H - B - 6, "text-anchor": "end", class: "note" }, "every batch 0"))
  const at = (i, p) => spec.stacked ? top[i].get(p[0]) : p[1]
  spec.series.forEach((se, i) => {
    if (se.points.length === 0) return
    const line = se.points.map(p => X(p[0]).toFixed(1) + "," + Y(at(i, p)).toFixed(1))
    if (spec.stacked) {
      const below = se.points.map(p => X(p[0]).toFixed(1) + "," + Y(at(i, p) - p[1]).toFixed(1)).reverse()
      s.appendChild(svg("polygon", { fill: se.color, opacity: 0.35, stroke: "none", points: line.concat(below).join(" ") }))
    }
    s.appendChild(svg("polyline", { fill: "none", stroke: se.color, "stroke-width": 1.6, "stroke-linejoin": "round", points: line.join(" ") }))
    if (se.points.length <= 60 && !spec.stacked) for (const p of se.points) s.appendChild(svg("circle", { cx: X(p[0]).toFixed(1), cy: Y(p[1]).toFixed(1), r: 2, fill: se.color }))
  })
  const cursor = svg("line", { y1: T, y2: H - B, stroke: "#5f6368", "stroke-dasharray": "3 3", visibility: "hidden" })
  s.appendChild(cursor)
  const dots = spec.series.map(se => { const d = svg("circle", { r: 4, fill: se.color, stroke: "#fff", "stroke-width": 1.5, visibility: "hidden" }); s.appendChild(d); return d })
  const overlay = svg("rect", { x: L, y: T, width: W - L - R, height: H - T - B, fill: "transparent", class: "hover" })
  s.appendChild(overlay)
  box.appendChild(s)
  const tip = el("div", { class: "tip" }); tip.style.display = "none"; box.appendChild(tip)
  // The nearest batch to the pointer: one line per series, with the batch id and its time.
  function show(px) {
    let best = null
    for (const p of all) if (best === null || Math.abs(X(p[0]) - px) < Math.abs(X(best[0]) - px)) best = p
    if (best === null) return
    const t = best[0], x = X(t)
    cursor.setAttribute("x1", x); cursor.setAttribute("x2", x); cursor.setAttribute("visibility", "visible")
    tip.textContent = ""
    tip.appendChild(el("div", { text: "batch " + best[2] + " · " + clock(t) }))
    spec.series.forEach((se, i) => {
      const p = se.points.find(q => q[0] === t)
      if (p === undefined) { dots[i].setAttribute("visibility", "hidden"); return }
      dots[i].setAttribute("cx", x); dots[i].setAttribute("cy", Y(at(i, p))); dots[i].setAttribute("visibility", "visible")
      const line = el("div", { class: "value" }); const sw = el("i"); sw.style.background = se.color
      line.appendChild(sw); line.appendChild(document.createTextNode((spec.series.length > 1 ? se.name + ": " : "") + f(p[1]) + (spec.unit ? " " + spec.unit : "")))
      tip.appendChild(line)
    })
    if (spec.stacked) tip.appendChild(el("div", { class: "value", text: "total: " + f(Math.max(0, ...top.map(m => m.get(t) || 0))) + (spec.unit ? " " + spec.unit : "") }))
    tip.style.display = "block"
    // The tooltip stays inside the chart: left of the cursor near the right edge.
    const scale = (s.getBoundingClientRect().width || W) / W, cx = x * scale
    const left = cx + 12 + tip.offsetWidth > box.clientWidth ? Math.max(0, cx - 12 - tip.offsetWidth) : cx + 12
    tip.style.left = left + "px"; tip.style.top = "4px"
  }
  overlay.addEventListener("mousemove", e => {
    const r = s.getBoundingClientRect(), px = (e.clientX - r.left) * (W / r.width)
    hover = { key: spec.key, x: px }; show(px)
  })
  overlay.addEventListener("mouseleave", () => {
    hover = null; tip.style.display = "none"; cursor.setAttribute("visibility", "hidden"); for (const d of dots) d.setAttribute("visibility", "hidden")
  })
  box.show = show
  return box
}
// Horizontal bars over the timeline's own value axis: how many batches fell in each band.
function histogram(spec) {
  const box = el("div", { class: "chart histogram", "data-metric": spec.key + "-histogram" })
  const vs = spec.series.length === 1 ? spec.series[0].points.map(p => p[1]) : []
  if (vs.length === 0) return spec.series.length > 1 ? legendBox(spec) : box
  const W = 260, H = 170, L = 8, R = 30, T = 10, B = 22, f = spec.format || fmt
  const y = yTicks(Math.max(...vs))
  const bins = y.ticks.length === 1 ? 1 : 10, counts = new Array(bins).fill(0)
  for (const v of vs) counts[Math.min(bins - 1, Math.floor(v / y.top * bins))]++
  const most = Math.max(...counts), band = (H - T - B) / bins
  const s = svg("svg", { viewBox: "0 0 " + W + " " + H })
  counts.forEach((c, i) => {
    const w = most === 0 ? 0 : c / most * (W - L - R), yy = H - B - (i + 1) * band
    const bar = svg("rect", { x: L, y: yy + 1, width: Math.max(c > 0 ? 1 : 0, w), height: Math.max(1, band - 2), fill: spec.series[0].color, opacity: 0.75, class: "bar" })
    bar.appendChild(svg("title", {}, f(i * y.top / bins) + " – " + f((i + 1) * y.top / bins) + ": " + c + " batch" + (c === 1 ? "" : "es")))
    s.appendChild(bar)
    if (c > 0) s.appendChild(svg("text", { x: L + w + 4, y: yy + band / 2 + 3 }, String(c)))
  })
  s.appendChild(svg("line", { x1: L, x2: L, y1: T, y2: H - B, stroke: "#bdc1c6" }))
  s.appendChild(svg("text", { x: L, y: H - 6 }, "batches per band"))
  box.appendChild(s)
  return box
}
function legendBox(spec) {
  const box = el("div", { class: "legendbox" }), f = spec.format || fmt
  for (const se of spec.series) {
    if (se.points.length === 0) continue
    const avg = se.points.reduce((a, p) => a + p[1], 0) / se.points.length
    const sw = el("i"); sw.style.background = se.color
    box.appendChild(el("div", null, sw, se.name + " · avg " + f(avg) + (spec.unit ? " " + spec.unit : "")))
  }
  return box
}
function metricRow(parent, title, spec, width) {
  const vals = spec.series.flatMap(s => s.points.map(p => p[1])), f = spec.format || fmt
  const label = el("div", { class: "label" }, el("b", { text: title }))
  if (vals.length > 0 && spec.series.length === 1) {
    const avg = vals.reduce((a, b) => a + b, 0) / vals.length
    label.appendChild(el("span", { text: "avg " + f(avg) + (spec.unit ? " " + spec.unit : "") }))
    label.appendChild(el("span", { text: "latest " + f(vals[vals.length - 1]) + (spec.unit ? " " + spec.unit : "") }))
  }
  spec.width = width
  const chart = timeline(spec)
  const cell = el("div", { class: "timeline" }, chart)
  if (spec.series.length > 1 && vals.length > 0) {
    const lg = el("div", { class: "legend" })
    for (const se of spec.series) { const sw = el("i"); sw.style.background = se.color; lg.appendChild(el("span", null, sw, se.name)) }
    cell.appendChild(lg)
  }
  parent.appendChild(label); parent.appendChild(cell); parent.appendChild(el("div", { class: "hist" }, histogram(spec)))
}

// ---- views -------------------------------------------------------------------------------
function link(text, href) { return el("a", { href, text }) }
function overview(root) {
  const all = [...queries.values()], active = all.filter(q => q.active), done = all.filter(q => !q.active)
  if (all.length === 0) root.appendChild(el("div", { class: "empty", id: "empty", text: "No streaming queries yet." }))
  const head = [{ name: "Name" }, { name: "Status" }, { name: "ID" }, { name: "Run ID" }, { name: "Start Time" }, { name: "Duration", num: true },
    { name: "Avg Input /sec", num: true }, { name: "Avg Process /sec", num: true }, { name: "Latest Batch", num: true }, { name: "Error" }]
  const row = q => {
    const tr = el("tr", { class: "query", "data-run-id": q.runId, "data-name": q.name || "" })
    tr.appendChild(td(link(q.name || "(unnamed)", "#/query/" + q.runId)))
    tr.appendChild(td(badge(q))); tr.appendChild(td(q.id, "mono")); tr.appendChild(td(q.runId, "mono"))
    tr.appendChild(td(q.startTime ? when(Date.parse(q.startTime)) : "–"))
    tr.appendChild(td(dur(q.durationMs), "num")); tr.appendChild(td(fmt(q.avgInputRowsPerSecond), "num")); tr.appendChild(td(fmt(q.avgProcessedRowsPerSecond), "num"))
    tr.appendChild(td(q.latestBatchId === null ? "–" : String(q.latestBatchId), "num"))
    tr.appendChild(td(q.exception ? link(q.exception.length > 160 ? q.exception.slice(0, 160) + "…" : q.exception, "#/query/" + q.runId + "/error") : "", "err"))
    return tr
  }
  if (all.length > 0) {
    root.appendChild(el("h2", null, "Active Streaming Queries ", el("span", { class: "n", text: "(" + active.length + ")" })))
    root.appendChild(active.length ? table(head, active.map(row), { cls: "active" }) : el("div", { class: "empty", text: "None." }))
    root.appendChild(el("h2", null, "Completed Streaming Queries ", el("span", { class: "n", text: "(" + done.length + ")" })))
    root.appendChild(done.length ? table(head, done.map(row), { cls: "completed" }) : el("div", { class: "empty", text: "None." }))
  }
  const cs = [...contexts.values()]
  root.appendChild(el("h2", null, "Streaming Contexts (DStreams) ", el("span", { class: "n", text: "(" + cs.length + ")" })))
  if (cs.length === 0) { root.appendChild(el("div", { class: "empty", text: "No StreamingContext has started in this session." })); return }
  const chead = [{ name: "Context" }, { name: "Status" }, { name: "Batch Interval", num: true }, { name: "Start Time" }, { name: "Completed Batches", num: true },
    { name: "Avg Input /sec", num: true }, { name: "Avg Scheduling Delay", num: true }, { name: "Avg Processing Time", num: true }, { name: "Avg Total Delay", num: true },
    { name: "Receivers", num: true }, { name: "Error" }]
  root.appendChild(table(chead, cs.map(c => {
    const tr = el("tr", { class: "context", "data-id": c.id })
    tr.appendChild(td(link(c.id, "#/context/" + c.id))); tr.appendChild(td(contextBadge(c))); tr.appendChild(td(dur(c.batchDurationMs), "num"))
    tr.appendChild(td(when(c.startTime))); tr.appendChild(td(String(c.completedBatches), "num")); tr.appendChild(td(fmt(c.avgInputRate), "num"))
    tr.appendChild(td(dur(c.avgSchedulingDelay), "num")); tr.appendChild(td(dur(c.avgProcessingTime), "num")); tr.appendChild(td(dur(c.avgTotalDelay), "num"))
    tr.appendChild(td(c.receivers.filter(r => r.active).length + " / " + c.receivers.length, "num"))
    tr.appendChild(td(c.error ? c.error.message : "", "err"))
    return tr
  }), { cls: "contexts" }))
}
function contextBadge(c) {
  if (c.error) return el("span", { class: "badge fail", text: "failed" })
  return c.state === "ACTIVE" ? el("span", { class: "badge", text: "active" }) : el("span", { class: "badge off", text: c.state.toLowerCase() })
}
function facts(pairs) {
  const box = el("div", { class: "facts" })
  for (const [k, v] of pairs) box.appendChild(el("div", null, el("b", { text: k }), el("span", { text: v === null || v === undefined ? "–" : String(v) })))
  return box
}
function watermarkMs(p) { const w = p.eventTime && p.eventTime.watermark; return w ? Date.parse(w) : null }
const OPERATIONS = ["addBatch", "getBatch", "latestOffset", "queryPlanning", "walCommit", "commitOffsets"]
function queryView(root, runId, focus) {
  const q = queries.get(runId)
  root.appendChild(el("div", null, link("← all queries", "#/")))
  if (q === undefined) { root.appendChild(el("div", { class: "empty", text: "No query with run id " + runId + " in this session." })); return }
  const ps = q.recentProgress, last = ps[ps.length - 1]
  const title = el("div", { class: "title" }, el("h2", { text: "Streaming Query " + (q.name || "(unnamed)") }), badge(q))
  root.appendChild(title)
  const wm = last ? watermarkMs(last) : null
  root.appendChild(facts([["Name", q.name || "(unnamed)"], ["ID", q.id], ["Run ID", q.runId], ["Status", q.active ? q.status : q.exception ? "failed" : "stopped"],
    ["Start Time", q.startTime ? when(Date.parse(q.startTime)) : null], ["Duration", dur(q.durationMs)], ["Latest Batch", q.latestBatchId],
    ["Avg Input /sec", fmt(q.avgInputRowsPerSecond)], ["Avg Process /sec", fmt(q.avgProcessedRowsPerSecond)],
    ["Global Watermark", wm === null ? "none" : when(wm)], ["Sources", last ? last.sources.map(s => s.description).join(", ") : null], ["Sink", last ? last.sink.description : null]]))
  if (q.exception) {
    const box = el("div", { class: "error", id: "query-error" })
    const where = q.exceptionBatchId === null ? el("b", { text: "Failed" }) : el("b", null, "Failed in ", link("batch " + q.exceptionBatchId, "#/query/" + q.runId + "/batch/" + q.exceptionBatchId))
    box.appendChild(where); box.appendChild(el("pre", { text: q.exception })); root.appendChild(box)
  }
  const width = Math.max(320, Math.min(1400, root.clientWidth - 560))
  const pts = f => ps.map(p => [Date.parse(p.timestamp), f(p), p.batchId]).filter(p => p[1] !== null && isFinite(p[1]))
  const stateful = ps.some(p => p.stateOperators.length > 0)
  const agg = field => stateful ? pts(p => p.stateOperators.length ? p.stateOperators.reduce((n, o) => n + (num(o[field]) || 0), 0) : null) : []
  const noState = "No data: this query has no stateful operator."
  const metrics = el("div", { class: "metrics" })
  root.appendChild(el("h3", { text: "Batches over time" }))
  root.appendChild(metrics)
  const one = (key, color, points, extra) => Object.assign({ key, series: [{ name: key, color, points }] }, extra)
  const noBatch = "No data: no batch has run yet."
  metricRow(metrics, "Input Rate", one("input-rate", COLORS[0], pts(p => num(p.inputRowsPerSecond)), { unit: "rows/s", noData: noBatch }), width)
  metricRow(metrics, "Process Rate", one("process-rate", COLORS[2], pts(p => num(p.processedRowsPerSecond)), { unit: "rows/s", noData: noBatch }), width)
  metricRow(metrics, "Input Rows", one("input-rows", COLORS[5], pts(p => num(p.numInputRows)), { unit: "rows", noData: noBatch }), width)
  metricRow(metrics, "Batch Duration", one("batch-duration", COLORS[7], pts(p => num(p.batchDuration)), { unit: "ms", noData: noBatch }), width)
  const ops = OPERATIONS.filter(o => ps.some(p => num(p.durationMs[o]) !== null))
  metricRow(metrics, "Operation Duration", { key: "operation-duration", unit: "ms", noData: noBatch, stacked: true,
    series: ops.map((o, i) => ({ name: o, color: COLORS[i % COLORS.length], points: pts(p => num(p.durationMs[o])) })) }, width)
  // Batch time minus the watermark, in seconds; a batch before the first watermark (0, 1970) is left out.
  const gap = pts(p => { const w = watermarkMs(p); return w === null || w <= 0 ? null : Math.max(0, (Date.parse(p.timestamp) - w) / 1000) })
  const hasWatermark = ps.some(p => p.eventTime && p.eventTime.watermark)
  metricRow(metrics, "Global Watermark Gap", one("watermark-gap", COLORS[4], gap,
    { unit: "s", noData: hasWatermark ? "No data yet: the watermark has not moved past 1970-01-01 (no event-time data seen)." : "No data: this query has no watermark (withWatermark)." }), width)
  metricRow(metrics, "Aggregated Number Of Total State Rows", one("state-rows-total", COLORS[5], agg("numRowsTotal"), { unit: "rows", noData: noState }), width)
  metricRow(metrics, "Aggregated Number Of Updated State Rows", one("state-rows-updated", COLORS[1], agg("numRowsUpdated"), { unit: "rows", noData: noState }), width)
  metricRow(metrics, "Aggregated State Memory Used In Bytes", one("state-memory", COLORS[3], agg("memoryUsedBytes"), { format: bytes, noData: noState }), width)
  metricRow(metrics, "Aggregated Number Of Rows Dropped By Watermark", one("state-rows-dropped", COLORS[4], agg("numRowsDroppedByWatermark"), { unit: "rows", noData: noState }), width)
  if (last && last.stateOperators.length > 0) {
    root.appendChild(el("h3", { text: "Stateful operators (" + last.stateOperators.length + ")" }))
    const grid = el("div", { class: "ops" })
    last.stateOperators.forEach((o, i) => {
      const box = el("div", { class: "op", "data-operator": String(i) }, el("h4", { text: "Operator " + i + ": " + o.operatorName }))
      const custom = Object.entries(o.customMetrics || {}).map(([k, v]) => k + " " + fmt(v)).join(", ")
      box.appendChild(facts([["Total rows", fmt(o.numRowsTotal)], ["Updated rows", fmt(o.numRowsUpdated)], ["Removed rows", fmt(o.numRowsRemoved)],
        ["Dropped by watermark", fmt(o.numRowsDroppedByWatermark)], ["Memory used", bytes(o.memoryUsedBytes)], ["Commit time", dur(o.commitTimeMs)],
        ["Update / removal time", dur(o.allUpdatesTimeMs) + " / " + dur(o.allRemovalsTimeMs)], ["State store instances", o.numStateStoreInstances], ["Custom metrics", custom || "none"]]))
      const series = [["numRowsTotal", COLORS[5]], ["numRowsUpdated", COLORS[1]], ["numRowsRemoved", COLORS[4]]].map(([field, color]) => ({
        name: field, color, points: ps.map(p => p.stateOperators[i] ? [Date.parse(p.timestamp), num(p.stateOperators[i][field]), p.batchId] : null).filter(p => p !== null && p[1] !== null) }))
      box.appendChild(timeline({ key: "operator-" + i + "-rows", unit: "rows", series, width: 760, noData: "No data yet." }))
      const lg = el("div", { class: "legend" })
      for (const se of series) { const sw = el("i"); sw.style.background = se.color; lg.appendChild(el("span", null, sw, se.name)) }
      box.appendChild(lg)
      grid.appendChild(box)
    })
    root.appendChild(grid)
  }
  root.appendChild(el("h3", { text: "Recent batches" }))
  const rows = []
  if (q.exception && q.exceptionBatchId !== null && !ps.some(p => p.batchId === q.exceptionBatchId)) {
    const tr = el("tr", { id: "batch-" + q.exceptionBatchId, class: "failed" + (focus === "batch-" + q.exceptionBatchId ? " hl" : "") })
    tr.appendChild(td(String(q.exceptionBatchId), "num")); const c = td("failed: " + q.exception, "err"); c.colSpan = 9; tr.appendChild(c)
    rows.push(tr)
  }
  for (const p of [...ps].reverse()) {
    const tr = el("tr", { id: "batch-" + p.batchId, class: focus === "batch-" + p.batchId ? "hl" : null })
    const w = watermarkMs(p)
    for (const [v, cls] of [[String(p.batchId), "num"], [when(Date.parse(p.timestamp)), null], [fmt(p.numInputRows), "num"], [fmt(num(p.inputRowsPerSecond)), "num"],
      [fmt(num(p.processedRowsPerSecond)), "num"], [dur(p.batchDuration), "num"], [dur(num(p.durationMs.addBatch)), "num"], [w === null ? "–" : when(w), null],
      [p.stateOperators.length ? fmt(p.stateOperators.reduce((n, o) => n + o.numRowsTotal, 0)) : "–", "num"],
      [p.stateOperators.length ? fmt(p.stateOperators.reduce((n, o) => n + o.numRowsDroppedByWatermark, 0)) : "–", "num"]]) tr.appendChild(td(v, cls))
    rows.push(tr)
  }
  root.appendChild(rows.length ? table([{ name: "Batch", num: true }, { name: "Time" }, { name: "Input Rows", num: true }, { name: "Input /sec", num: true }, { name: "Process /sec", num: true },
    { name: "Duration", num: true }, { name: "addBatch", num: true }, { name: "Watermark" }, { name: "State Rows", num: true }, { name: "Dropped By Watermark", num: true }], rows, { cls: "batches" })
    : el("div", { class: "empty", text: "No batch has run yet." }))
}
function contextView(root, id) {
  const c = contexts.get(id)
  root.appendChild(el("div", null, link("← all queries", "#/")))
  if (c === undefined) { root.appendChild(el("div", { class: "empty", text: "No StreamingContext " + id + " in this session." })); return }
  root.appendChild(el("div", { class: "title" }, el("h2", { text: "Streaming " + c.id }), contextBadge(c)))
  root.appendChild(facts([["Batch Interval", dur(c.batchDurationMs)], ["Start Time", when(c.startTime)], ["Completed Batches", c.completedBatches],
    ["Avg Input /sec", fmt(c.avgInputRate)], ["Avg Scheduling Delay", dur(c.avgSchedulingDelay)], ["Avg Processing Time", dur(c.avgProcessingTime)], ["Avg Total Delay", dur(c.avgTotalDelay)]]))
  if (c.error) {
    const box = el("div", { class: "error", id: "context-error" })
    box.appendChild(el("b", { text: c.error.batchTime === undefined ? "Failed" : "Failed in the batch of " + when(c.error.batchTime) }))
    box.appendChild(el("pre", { text: c.error.message })); root.appendChild(box)
  }
  const done = c.batches.filter(b => b.status === "completed")
  const width = Math.max(320, Math.min(1400, root.clientWidth - 560))
  const pts = f => done.map(b => [b.batchTime, f(b), clock(b.batchTime)]).filter(p => p[1] !== null && p[1] !== undefined)
  const metrics = el("div", { class: "metrics" })
  root.appendChild(el("h3", { text: "Batches over time" })); root.appendChild(metrics)
  const noBatch = "No data: no batch has completed yet."
  metricRow(metrics, "Input Rate", { key: "input-rate", unit: "records/s", noData: noBatch, series: [{ name: "input", color: COLORS[0], points: pts(b => b.numRecords * 1000 / c.batchDurationMs) }] }, width)
  metricRow(metrics, "Scheduling Delay", { key: "scheduling-delay", unit: "ms", noData: noBatch, series: [{ name: "scheduling", color: COLORS[1], points: pts(b => b.schedulingDelay) }] }, width)
  metricRow(metrics, "Processing Time", { key: "processing-time", unit: "ms", noData: noBatch, series: [{ name: "processing", color: COLORS[2], points: pts(b => b.processingDelay) }] }, width)
  metricRow(metrics, "Total Delay", { key: "total-delay", unit: "ms", noData: noBatch, series: [{ name: "total", color: COLORS[3], points: pts(b => b.totalDelay) }] }, width)
  root.appendChild(el("h3", { text: "Receivers (" + c.receivers.length + ")" }))
  root.appendChild(c.receivers.length ? table([{ name: "Stream" }, { name: "Name" }, { name: "Status" }, { name: "Location" }, { name: "Last Error" }, { name: "Last Error Time" }],
    c.receivers.map(r => el("tr", { class: "receiver" }, td(String(r.streamId)), td(r.name), td(r.active ? "active" : "inactive"), td(r.location || "–"),
      td(r.lastErrorMessage || "", "err"), td(r.lastErrorTime > 0 ? when(r.lastErrorTime) : "–")))) : el("div", { class: "empty", text: "No receiver streams." }))
  root.appendChild(el("h3", { text: c.batches.length > 200 ? "Batches (the latest 200 of " + c.batches.length + " kept)" : "Batches (" + c.batches.length + ")" }))
  root.appendChild(c.batches.length ? table([{ name: "Batch Time" }, { name: "Status" }, { name: "Records", num: true }, { name: "Scheduling Delay", num: true },
    { name: "Processing Time", num: true }, { name: "Total Delay", num: true }, { name: "Output Operations" }],
    [...c.batches].reverse().slice(0, 200).map(b => el("tr", { class: "batch " + b.status }, td(when(b.batchTime)), td(b.status), td(String(b.numRecords), "num"),
      td(dur(b.schedulingDelay), "num"), td(dur(b.processingDelay), "num"), td(dur(b.totalDelay), "num"),
      td(b.outputOperations.map(o => o.name + (o.failureReason ? " failed: " + o.failureReason : o.duration !== undefined ? " " + dur(o.duration) : "")).join("; ") || "–")))) : el("div", { class: "empty", text: "No batch yet." }))
}

// ---- routing and live updates ------------------------------------------------------------
let scheduled = false
function render() {
  if (scheduled) return
  scheduled = true
  requestAnimationFrame(() => { scheduled = false; draw() })
}
function draw() {
  const root = document.getElementById("view"), y = window.scrollY
  root.textContent = ""
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent)
  let focus = null
  if (parts[0] === "query" && parts[1]) {
    if (parts[2] === "batch" && parts[3] !== undefined) focus = "batch-" + parts[3]
    if (parts[2] === "error") focus = "query-error"
    queryView(root, parts[1], focus)
  } else if (parts[0] === "context" && parts[1]) contextView(root, parts[1])
  else overview(root)
  window.scrollTo(0, y)
  if (hover !== null) { const c = root.querySelector('.chart[data-metric="' + hover.key + '"]'); if (c && c.show) c.show(hover.x) }
  if (focus !== null && lastFocus !== location.hash) { lastFocus = location.hash; const f = document.getElementById(focus); if (f) f.scrollIntoView({ block: "center" }) }
}
function averages(q) {
  const ps = q.recentProgress, rate = f => ps.length === 0 ? null : ps.reduce((n, p) => n + (num(f(p)) || 0), 0) / ps.length
  q.avgInputRowsPerSecond = rate(p => p.inputRowsPerSecond); q.avgProcessedRowsPerSecond = rate(p => p.processedRowsPerSecond)
  q.latestBatchId = ps.length ? ps[ps.length - 1].batchId : null
}
// Refreshes can overlap (an idle tick, then a query's end): an answer older than the one shown
// is dropped, so an earlier fetch that returns last cannot put back a query that has ended (and
// a steady stream of refreshes still shows each newer answer).
let refreshes = 0
let shown = 0
async function refresh() {
  const mine = ++refreshes
  const [qs, cs] = await Promise.all([fetch("api/queries").then(r => r.json()), fetch("api/streaming-contexts").then(r => r.json())])
  if (mine < shown) return
  shown = mine
  queries.clear(); for (const q of qs) queries.set(q.runId, q)
  contexts.clear(); for (const c of cs) contexts.set(c.id, c)
  render()
}
const live = document.getElementById("live")
const events = new EventSource("api/events")
events.onopen = () => { live.textContent = "● live"; live.className = "live" }
events.onerror = () => { live.textContent = "● reconnecting"; live.className = "live off" }
events.addEventListener("progress", e => {
  const p = JSON.parse(e.data), q = queries.get(p.runId)
  if (q === undefined) return refresh()
  q.recentProgress = [...q.recentProgress, p].slice(-100); averages(q)
  if (q.startTime) q.durationMs = Date.now() - Date.parse(q.startTime)
  render()
})
// A context's event carries its latest batches only: merged into those already here by batch time.
// A query's status message after each batch (Spark's StreamingQueryStatus.message).
events.addEventListener("status", e => {
  const st = JSON.parse(e.data), q = queries.get(st.runId)
  if (q !== undefined && q.active) { q.status = st.message; render() }
})
events.addEventListener("dstream", e => {
  const c = JSON.parse(e.data), known = contexts.get(c.id)
  if (known !== undefined) {
    const byTime = new Map(known.batches.map(b => [b.batchTime, b]))
    for (const b of c.batches) byTime.set(b.batchTime, b)
    c.batches = [...byTime.values()].sort((a, b) => a.batchTime - b.batchTime).slice(-1000)
  }
  contexts.set(c.id, c); render()
})
for (const kind of ["started", "terminated"]) events.addEventListener(kind, () => refresh())
// An idle query reports once per trigger: its status is fetched at most once a second.
let idleTimer = null
events.addEventListener("idle", () => { if (idleTimer === null) idleTimer = setTimeout(() => { idleTimer = null; refresh() }, 1000) })
// Running queries' durations move on between batches.
setInterval(() => {
  let moved = false
  for (const q of queries.values()) if (q.active && q.startTime) { q.durationMs = Date.now() - Date.parse(q.startTime); moved = true }
  if (moved) render()
}, 1000)
window.addEventListener("hashchange", () => { hover = null; render() })
window.addEventListener("resize", render)
// The token came in the address; the page's cookie carries it from now on, so the address drops it.
if (new URLSearchParams(location.search).has("token")) history.replaceState(null, "", location.pathname + location.hash)
refresh()
`

/** The page served at `/`. */
export const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>tributary · Structured Streaming</title><link rel="icon" href="data:,">
<style>${STYLE}</style></head>
<body><header><h1>Structured Streaming</h1><a href="#/">Queries</a><span class="sub" style="color:#cbd5e1;font-size:12px">tributary</span><span id="live" class="live off">● connecting</span></header>
<main id="view"></main>
<script>${SCRIPT}</script></body></html>`
