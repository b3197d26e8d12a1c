/**
 * Rich display in notebooks (Deno's Jupyter kernel): the MIME bundles behind
 * `df[Symbol.for("Jupyter.display")]()` and `query[Symbol.for("Jupyter.display")]()`.
 *
 * A DataFrame shows its first rows as an HTML table with its schema (and its row count when it
 * is cheap: a local relation), next to the ASCII table of `show()` as `text/plain`. A streaming
 * DataFrame shows its schema only (it runs with `writeStream.start()`). A streaming query shows a
 * card: status, input and processing rates, batch duration, watermark, state rows and the last
 * error; inside Deno's kernel the card keeps updating in place (Jupyter's `update_display_data`)
 * until the query stops.
 *
 * @example
 * ```ts
 * // a notebook cell: the value of the last expression renders through Jupyter.display
 * const spark = await Session.open()
 * spark.createDataFrame([{ a: 1 }], Schema.Struct({ a: Schema.Int }))
 * ```
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as T from "../../core/DataType.ts"
import type { InternalRow } from "../../core/Row.ts"
import { cellString, showString } from "../../core/ShowString.ts"
import type { StreamingQuery } from "../contracts/StreamingQuery.ts"
import type { StreamingQueryProgress } from "../contracts/StreamingQueryProgress.ts"

/** The key Deno's Jupyter kernel (and `Deno.jupyter.display`) looks for. */
export const JUPYTER_DISPLAY: unique symbol = Symbol.for("Jupyter.display") as never

/** A Jupyter MIME bundle (empty when the value was already displayed another way). */
export type MimeBundle = { readonly "text/html"?: string; readonly "text/plain"?: string }

/** Escapes text for HTML (every interpolated value goes through it). */
export const escapeHtml = (s: string): string =>
  s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;")

const STYLE =
  "<style>.trib table{border-collapse:collapse;font:12px ui-monospace,monospace}.trib th,.trib td{border:1px solid #ccc;padding:2px 6px;text-align:left}.trib th{background:#f3f3f3}.trib .meta{color:#666;font:11px sans-serif;margin:4px 0}</style>"

/**
 * The bundle of a batch result: the first `numRows` of `rows` (one more tells whether there are
 * more), and the total when the caller knows it.
 *
 * @since 0.1.0
 */
export const tableBundle = (
  schema: T.StructType,
  rows: ReadonlyArray<InternalRow>,
  numRows: number,
  total?: number
): MimeBundle => {
  const shown = rows.slice(0, numRows)
  const head = schema.fields
    .map((f) => `<th title="${escapeHtml(T.simpleString(f.dataType))}">${escapeHtml(f.name)}</th>`)
    .join("")
  const body = shown
    .map((r) => `<tr>${schema.fields.map((f, i) => `<td>${escapeHtml(cellString(f.dataType, r[i]))}</td>`).join("")}</tr>`)
    .join("")
  const count =
    total !== undefined
      ? `${total} ${total === 1 ? "row" : "rows"}`
      : rows.length > numRows
        ? `first ${numRows} rows`
        : `${shown.length} ${shown.length === 1 ? "row" : "rows"}`
  const schemaText = schema.fields.map((f) => `${f.name}: ${T.simpleString(f.dataType)}`).join(", ")
  return {
    "text/html": `${STYLE}<div class="trib"><div class="meta">DataFrame[${escapeHtml(schemaText)}] · ${escapeHtml(count)}</div><table><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`,
    "text/plain": showString(schema, rows, numRows, 20)
  }
}

/**
 * The bundle of a streaming DataFrame: it cannot be collected, so its schema and how to run it.
 *
 * @since 0.1.0
 */
export const streamingBundle = (schema: T.StructType): MimeBundle => {
  const text = `Streaming DataFrame[${schema.fields.map((f) => `${f.name}: ${T.simpleString(f.dataType)}`).join(", ")}]`
  return {
    "text/html": `${STYLE}<div class="trib"><div class="meta">${escapeHtml(text)}</div><div>Run it with <code>writeStream…start()</code>.</div></div>`,
    "text/plain": text
  }
}

const rate = (x: number | undefined): string => (x === undefined || !Number.isFinite(x) ? "–" : `${x.toFixed(1)} rows/s`)

/**
 * The card of a streaming query from its status, last progress and error.
 *
 * @since 0.1.0
 */
export const queryCard = (
  q: { readonly id: string; readonly runId: string; readonly name: string | null },
  active: boolean,
  statusMessage: string,
  progress: StreamingQueryProgress | null,
  error: string | undefined
): MimeBundle => {
  const stateRows = progress?.stateOperators.reduce((n, o) => n + o.numRowsTotal, 0)
  const fields: ReadonlyArray<readonly [string, string]> = [
    ["status", active ? statusMessage : error === undefined ? "stopped" : "failed"],
    ["batch", progress === null ? "–" : String(progress.batchId)],
    ["input rate", rate(progress?.inputRowsPerSecond)],
    ["processing rate", rate(progress?.processedRowsPerSecond)],
    ["batch duration", progress === null ? "–" : `${progress.batchDuration} ms`],
    ["watermark", progress?.eventTime.watermark ?? "–"],
    ["state rows", stateRows === undefined || progress?.stateOperators.length === 0 ? "–" : String(stateRows)],
    ...(error === undefined ? [] : ([["error", error]] as const))
  ]
  const title = `${q.name ?? "query"} ${q.id}`
  return {
    "text/html": `${STYLE}<div class="trib"><div class="meta">StreamingQuery ${escapeHtml(title)} (run ${escapeHtml(q.runId)})</div><table>${fields
      .map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`)
      .join("")}</table></div>`,
    "text/plain": [`StreamingQuery ${title}`, ...fields.map(([k, v]) => `  ${k}: ${v}`)].join("\n")
  }
}

/** The card of `query` now. */
export const queryBundle = (query: StreamingQuery): Effect.Effect<MimeBundle> =>
  Effect.gen(function* () {
    const active = yield* query.isActive()
    const status = yield* query.status()
    const progress = yield* query.lastProgress()
    const error = yield* query.exception()
    return queryCard(query, active, status.message, progress, error?.message)
  })

interface DenoJupyter {
  readonly display: (obj: unknown, options?: { raw?: boolean; update?: boolean; display_id?: string }) => Promise<void>
}

/** Deno's Jupyter API inside the kernel; outside it, reading `Deno.jupyter` throws. */
const denoJupyter = (): DenoJupyter | undefined => {
  try {
    return (globalThis as { Deno?: { jupyter?: DenoJupyter } }).Deno?.jupyter
  } catch {
    return undefined
  }
}

/** How often a live card refreshes. */
const REFRESH_MS = 1000

/**
 * How long a display waits after handing its message to Deno's kernel before it resolves.
 *
 * Deno's kernel (2.x) takes what a cell displays from a queue and publishes it on one loop, and
 * reports the cell finished (`status: idle`) on another, once the cell's code has returned. A
 * display handed over just before the cell returns can be published after that report, and a
 * client then drops it (`jupyter nbconvert --execute` does) or shows it under the next cell.
 * Measured on a loaded 2-core machine (load 20–30), the late message trailed the report by about
 * a millisecond, in 1 run of 13; waiting here keeps the cell running until the kernel has
 * published it. It is I/O pacing at the notebook's edge, not engine time, so it is a plain timer.
 */
const PUBLISH_MS = 100

/** Displays `bundle` and resolves once Deno's kernel has had the time to publish it. */
const publish = async (jupyter: DenoJupyter, obj: unknown, options?: { raw?: boolean; display_id?: string }): Promise<void> => {
  await jupyter.display(obj, options)
  await new Promise((resolve) => setTimeout(resolve, PUBLISH_MS))
}

/**
 * What `query[Symbol.for("Jupyter.display")]()` resolves to. In Deno's kernel the card is shown
 * under a display id and refreshed every second until the query stops (the returned bundle is
 * then `{}`, which the kernel does not show, so the card is not shown twice); elsewhere it is a
 * snapshot.
 *
 * @since 0.1.0
 */
export const displayQuery = async (query: StreamingQuery): Promise<MimeBundle> => {
  const jupyter = denoJupyter()
  if (jupyter === undefined) return Effect.runPromise(queryBundle(query))
  await showLiveCard(query, jupyter)
  return {}
}

/** Shows the query's card under a display id and refreshes it every second until the query stops. */
const showLiveCard = async (query: StreamingQuery, jupyter: DenoJupyter): Promise<void> => {
  const first = await Effect.runPromise(queryBundle(query))
  const displayId = `tributary-${query.runId}`
  await publish(jupyter, first, { raw: true, display_id: displayId })
  const timer = setInterval(() => {
    Effect.runPromise(Effect.zip(queryBundle(query), query.isActive())).then(
      ([bundle, active]) => {
        if (!active) clearInterval(timer)
        return jupyter.display(bundle, { raw: true, update: true, display_id: displayId })
      },
      () => clearInterval(timer)
    )
  }, REFRESH_MS)
  // A refresh must not keep a script alive (Deno: unrefTimer; Node: unref).
  const t = timer as unknown as { unref?: () => void }
  if (typeof t.unref === "function") t.unref()
  else (globalThis as { Deno?: { unrefTimer?: (id: number) => void } }).Deno?.unrefTimer?.(timer as unknown as number)
}

/** Marks a query whose card can be shown live (set by `attachQueryDisplay`). */
const LIVE_CARD: unique symbol = Symbol.for("tributary.liveCard") as never

/**
 * Shows `value` in the notebook now, as a display of the running cell, and resolves when it has
 * been sent: a DataFrame as its table, a streaming query as its live card (refreshed in place
 * until it stops), a string as its text, anything else as Deno's kernel formats it. Outside a Jupyter kernel it prints
 * the value's `text/plain` form.
 *
 * Beyond Spark (Databricks notebooks have `display(df)`): a cell's *value* reaches the notebook
 * through `Symbol.for("Jupyter.display")`, which Deno's kernel (2.x) may publish after it has
 * reported the cell finished, and `jupyter nbconvert --execute` then drops it (about one run in
 * three); an awaited `display(...)` resolves only once the kernel has had the time to publish it
 * (see `PUBLISH_MS`), so the cell is still running when it is published, and a query shown this
 * way leaves no empty `Out[n]` behind.
 *
 * @since 0.1.0
 */
export const display = async (value: unknown): Promise<void> => {
  const jupyter = denoJupyter()
  const target = value as { [JUPYTER_DISPLAY]?: () => Promise<MimeBundle>; [LIVE_CARD]?: StreamingQuery } | null
  const query = target?.[LIVE_CARD]
  if (jupyter !== undefined && query !== undefined) return showLiveCard(query, jupyter)
  const render = target?.[JUPYTER_DISPLAY]
  if (jupyter !== undefined) {
    if (typeof render === "function") return publish(jupyter, await render.call(target), { raw: true })
    // A string is shown as its text (Deno's formatter would quote it), never through stdout:
    // the kernel may publish a cell's console output after the cell has finished.
    if (typeof value === "string") return publish(jupyter, { "text/plain": value }, { raw: true })
    return publish(jupyter, value)
  }
  const bundle = typeof render === "function" ? await render.call(target) : undefined
  console.log(bundle?.["text/plain"] ?? (typeof value === "string" ? value : inspect(value)))
}

const inspect = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/**
 * Gives a running query its notebook display: `query[Symbol.for("Jupyter.display")]()` resolves
 * to `displayQuery(query)`. The writer attaches it to every query it starts, so the engine never
 * knows about notebooks.
 *
 * @since 0.1.0
 */
export const attachQueryDisplay = <Q extends StreamingQuery>(query: Q): Q => {
  Object.defineProperty(query, JUPYTER_DISPLAY, {
    value: (): Promise<MimeBundle> => displayQuery(query),
    enumerable: false,
    writable: true,
    configurable: true
  })
  Object.defineProperty(query, LIVE_CARD, { value: query, enumerable: false, configurable: true })
  return query
}
