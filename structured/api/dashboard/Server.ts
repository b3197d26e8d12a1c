/**
 * The dashboard's HTTP server on `node:http` (Node and Deno both provide it): the page, the JSON
 * endpoints, the server-sent events, and the token check when it listens beyond localhost.
 *
 * @since 0.1.0
 */
import { Buffer } from "node:buffer"
import { randomBytes, timingSafeEqual } from "node:crypto"
import * as http from "node:http"
import { Effect, type Scope } from "effect"
import type { SessionState } from "../../contracts/SessionState.ts"
import type { StreamingQueryListener } from "../../contracts/StreamingQueryListener.ts"
import { type QueryTimes, querySummaries, streamingContextSummaries, streamingContextSummary } from "./Model.ts"
import { PAGE } from "./Page.ts"

/** The dashboard's options (`Session.layer({ ui })`). */
export interface UiOptions {
  /** The TCP port; 0 picks a free one. */
  readonly port: number
  /**
   * The interface to listen on: `127.0.0.1` (the default) keeps it on this machine. Any other
   * (`0.0.0.0`, a LAN address) requires a token on every request.
   */
  readonly host?: string
  /**
   * The token every request must carry (`?token=…`, `Authorization: Bearer …`, or the cookie the
   * page sets). Generated (32 random bytes, hex) when the dashboard listens beyond localhost and
   * none is given; given, it is required on localhost too. It is never logged; `spark.uiWebUrl()`
   * returns the address with it.
   */
  readonly token?: string
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"])

/** Whether `host` keeps the dashboard on this machine. */
export const isLoopback = (host: string): boolean =>
  LOOPBACK.has(host.toLowerCase()) || /^127\.\d+\.\d+\.\d+$/.test(host)

const COOKIE = "tributary_ui_token"

/** Numbers JSON cannot carry (an infinite rate) are left out, as Spark's progress JSON does. */
const toJson = (value: unknown): string =>
  JSON.stringify(value, (_k, v) => (typeof v === "number" && !Number.isFinite(v) ? undefined : v))

const sameToken = (given: string | undefined, token: string): boolean => {
  if (given === undefined) return false
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

const presentedToken = (req: http.IncomingMessage, url: URL): string | undefined => {
  const auth = req.headers.authorization
  if (auth !== undefined && /^Bearer\s+/i.test(auth)) return auth.replace(/^Bearer\s+/i, "").trim()
  const query = url.searchParams.get("token")
  if (query !== null) return query
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=")
    if (k === COOKIE) return decodeURIComponent(v.join("="))
  }
  return undefined
}

/** The hostname of a Host header (`127.0.0.1:4040`, `[::1]:4040`). */
const hostName = (header: string | undefined): string => {
  if (header === undefined) return ""
  const h = header.trim()
  if (h.startsWith("[")) return h.slice(0, h.indexOf("]") + 1)
  return h.split(":")[0] ?? ""
}

/**
 * Starts the dashboard for a session in `scope`: the server closes (and its event streams end)
 * when the scope closes. Returns its address (with `?token=…` when a token is required).
 *
 * @since 0.1.0
 */
export const serve = (state: SessionState, options: UiOptions): Effect.Effect<string, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const host = options.host ?? "127.0.0.1"
    const loopback = isLoopback(host)
    if (options.token !== undefined && options.token.length < 8) {
      return yield* Effect.fail(new Error("The dashboard's token must have at least 8 characters."))
    }
    const token = options.token ?? (loopback ? undefined : randomBytes(32).toString("hex"))
    const clients = new Set<http.ServerResponse>()
    const times: QueryTimes = new Map()
    const broadcast = (event: string, data: unknown) => {
      const frame = `event: ${event}\ndata: ${toJson(data)}\n\n`
      for (const c of clients) c.write(frame)
    }
    const listener: StreamingQueryListener = {
      onQueryStarted: (e) => {
        const start = Date.parse(e.timestamp)
        times.set(e.runId, { start: Number.isFinite(start) ? start : Date.now(), end: undefined })
        broadcast("started", e)
      },
      onQueryProgress: (e) => {
        broadcast("progress", e.progress)
        // The table's status column moves with the batches, without refetching the list.
        const q = [...state.queries.active.values()].find((a) => a.runId === e.progress.runId)
        if (q !== undefined) {
          Effect.runPromise(q.status()).then(
            (status) => broadcast("status", { runId: q.runId, message: status.message }),
            () => {}
          )
        }
      },
      onQueryIdle: (e) => broadcast("idle", e),
      onQueryTerminated: (e) => {
        const t = times.get(e.runId)
        if (t !== undefined) t.end = Date.now()
        broadcast("terminated", e)
      }
    }
    const watcher = (contextId: string) => {
      const view = state.streamingContextViews.find((v) => v.id === contextId)
      if (view === undefined) return
      // A batch changes the latest few only: the event carries those (the page merges them by
      // batch time), not the up to 1000 batches kept, three times a batch.
      const summary = streamingContextSummary(view)
      broadcast("dstream", { ...summary, batches: summary.batches.slice(-3) })
    }
    const server = http.createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://localhost")
      if (token !== undefined) {
        if (!sameToken(presentedToken(req, url), token)) {
          res
            .writeHead(401, {
              "content-type": "text/plain; charset=utf-8",
              "www-authenticate": 'Bearer realm="tributary"'
            })
            .end(
              "401 Unauthorized: this dashboard needs its token (open the address spark.uiWebUrl() gives, or send Authorization: Bearer <token>).\n"
            )
          return
        }
      } else if (!isLoopback(hostName(req.headers.host))) {
        // Bound to localhost without a token: a page elsewhere must not reach it through a DNS name
        // that resolves here (DNS rebinding).
        res
          .writeHead(403, { "content-type": "text/plain; charset=utf-8" })
          .end("403 Forbidden: this dashboard answers localhost only.\n")
        return
      }
      if (req.method !== "GET") {
        res.writeHead(405, { allow: "GET" }).end()
        return
      }
      const headers = (type: string): http.OutgoingHttpHeaders => ({
        "content-type": type,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
        ...(token !== undefined && url.searchParams.has("token")
          ? { "set-cookie": `${COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/` }
          : {})
      })
      switch (url.pathname) {
        case "/":
          res
            .writeHead(200, {
              ...headers("text/html; charset=utf-8"),
              "content-security-policy":
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:",
              "referrer-policy": "no-referrer"
            })
            .end(PAGE)
          return
        case "/api/queries":
          Effect.runPromise(querySummaries(state, times)).then(
            (qs) => res.writeHead(200, headers("application/json")).end(toJson(qs)),
            (e) => res.writeHead(500, { "content-type": "text/plain" }).end(String(e))
          )
          return
        case "/api/streaming-contexts":
          res.writeHead(200, headers("application/json")).end(toJson(streamingContextSummaries(state)))
          return
        case "/api/events":
          res.writeHead(200, { ...headers("text/event-stream"), connection: "keep-alive" })
          res.write(": connected\n\n")
          clients.add(res)
          req.on("close", () => clients.delete(res))
          return
        default:
          res.writeHead(404, { "content-type": "text/plain" }).end("not found")
      }
    })
    const port = yield* Effect.callback<number, Error>((resume) => {
      server.once("error", (e) =>
        resume(Effect.fail(new Error(`The dashboard cannot listen on ${host}:${options.port}: ${e.message}`)))
      )
      server.listen(options.port, host, () => resume(Effect.succeed((server.address() as { port: number }).port)))
    })
    state.queries.listeners.push(listener)
    state.streamingContextWatchers.push(watcher)
    yield* Effect.addFinalizer(() =>
      Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            const i = state.queries.listeners.indexOf(listener)
            if (i >= 0) state.queries.listeners.splice(i, 1)
            const j = state.streamingContextWatchers.indexOf(watcher)
            if (j >= 0) state.streamingContextWatchers.splice(j, 1)
            for (const c of clients) c.end()
            clients.clear()
            server.close(() => resolve())
            server.closeAllConnections?.()
          })
      )
    )
    const shown = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host
    return `http://${shown}:${port}/${token === undefined ? "" : `?token=${encodeURIComponent(token)}`}`
  })
