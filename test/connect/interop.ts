/**
 * Helpers of the write and Avro interop suites: one local and one remote session (the real
 * Spark 4.2 of test/connect/globalSetup.ts, sharing this machine's file system), a fresh folder
 * per test, and rows normalised so the two engines' values compare (dates as ISO text, binary as
 * hex, maps as sorted entries, bigints as text).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import "../../mod.ts"
import { type OpenSession, Session } from "../../structured/api/Session.ts"
import { remoteAddress } from "./remote.ts"

export interface Engines {
  readonly local: OpenSession
  readonly remote: OpenSession
  /** A new empty folder under the suite's temporary root. */
  readonly dir: (name: string) => string
}

/** Opens both sessions for a test file (`beforeAll`) and closes them (`afterAll`). */
export const useEngines = (): (() => Engines) => {
  let engines: Engines | undefined
  let root = ""
  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-interop-"))
    const [local, remote] = await Promise.all([Session.open(), Session.open({ remote: remoteAddress() })])
    let n = 0
    engines = { local, remote, dir: (name) => path.join(root, `${name}-${n++}`) }
  })
  afterAll(async () => {
    if (engines !== undefined) await Promise.allSettled([engines.local.close(), engines.remote.close()])
    fs.rmSync(root, { recursive: true, force: true })
  })
  return () => {
    if (engines === undefined) throw new Error("the engines are not open")
    return engines
  }
}

const normalizeValue = (v: unknown): unknown => {
  if (v === null || v === undefined) return null
  if (v instanceof Date) return v.toISOString()
  if (typeof v === "bigint") return `${v}n`
  if (typeof v === "number" && Number.isSafeInteger(v) && Math.abs(v) > 2 ** 31) return `${v}n`
  if (v instanceof Uint8Array) return Buffer.from(v).toString("hex")
  if (v instanceof Map) return [...v].map(([k, x]) => [normalizeValue(k), normalizeValue(x)]).sort()
  if (Array.isArray(v)) return v.map(normalizeValue)
  if (typeof v === "object") {
    const o: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) o[k] = normalizeValue(x)
    return o
  }
  return v
}

/** Rows as comparable plain values, sorted by their JSON text. */
export const normalize = (rows: ReadonlyArray<Record<string, unknown>>): Array<unknown> =>
  rows
    .map((r) => normalizeValue(r))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))

/** Relative paths of the files below `dir`, with Spark's part-file names reduced to their shape. */
export const layout = (dir: string): Array<string> =>
  [
    ...new Set(
      (fs.readdirSync(dir, { recursive: true }) as Array<string>)
        .map((p) => p.split(path.sep).join("/"))
        .filter((p) => fs.statSync(path.join(dir, p)).isFile() && !path.basename(p).startsWith("."))
        .map((p) => p.replace(/part-\d{5}-[0-9a-f-]{36}([.-])c\d{3}/, "part-N-UUID$1cN"))
    )
  ].sort()
