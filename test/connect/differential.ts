/**
 * Spark as the oracle (issue #9): the harness of the differential suite.
 *
 * The same builder code runs on a local session (`Session.open()`) and on a remote one
 * (`Session.open({ remote })`, Spark 4.2 through Spark Connect); both results are collected and
 * must be equal. Spark is the reference: a mismatch is a bug in one of the two engines (or in the
 * translation / decoding between them).
 *
 * - `useEngines(load)` opens one session of each kind for a test file (`beforeAll`/`afterAll`) and
 *   loads per-engine fixtures (DataFrames over the generated files) with `load`.
 * - `differential(case)` runs a case on both engines and compares the results: a batch query
 *   is collected; a streaming one (`stream: { outputMode }`) runs into a memory sink
 *   (`Trigger.AvailableNow()`, a fresh checkpoint) until it ends, and the memory tables are compared.
 * - `cases(list)` registers one test per case and runs them a few at a time.
 * - `generateData(dir)` writes the seeded data set both engines read (the server shares this
 *   machine's file system).
 */
import { DuckDBInstance } from "@duckdb/node-api"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, it } from "vitest"
import "../../mod.ts"
import * as T from "../../core/DataType.ts"
import { rowsToExternal } from "../../core/Row.ts"
import { Trigger } from "../../core/Trigger.ts"
import type { DataFrame } from "../../structured/api/DataFrame.ts"
import { type OpenSession, Session, type SessionShape } from "../../structured/api/Session.ts"
import { remoteAddress } from "./remote.ts"

// ---- data ------------------------------------------------------------------------------------

/** The events' schema, given explicitly to both engines so they read the same types. */
export const EVENTS_SCHEMA = "id INT, user STRING, amount INT, price DOUBLE, ts TIMESTAMP, category STRING, note STRING"

/** The users' (dimension table) schema. */
export const USERS_SCHEMA = "user STRING, country STRING, tier INT"

/** The clicks' schema (the right side of the stream-stream join). */
export const CLICKS_SCHEMA = "clickId INT, clickUser STRING, clickTs TIMESTAMP"

/** Where the event times start: 2024-03-10T10:00:00Z. */
export const BASE_MS = Date.UTC(2024, 2, 10, 10, 0, 0)

/** How many files each event input has (the streaming cases take three per micro-batch). */
export const FILES = 6

/** The paths of a generated data set. */
export interface DataSet {
  readonly root: string
  /** JSON lines, `FILES` files. */
  readonly eventsJson: string
  /** The same rows as CSV with a header, `FILES` files. */
  readonly eventsCsv: string
  /** The same rows as one parquet file (written by DuckDB). */
  readonly eventsParquet: string
  readonly usersJson: string
  /** Clicks as JSON lines, `FILES` files aligned in time with the events' files. */
  readonly clicksJson: string
  /** Hand-written JSON lines with malformed records and values of the wrong type. */
  readonly dirtyJson: string
  /** Hand-written CSV with malformed values, quoting and too few / too many cells. */
  readonly dirtyCsv: string
  /** The generated rows (ISO timestamps), for sanity checks. */
  readonly events: ReadonlyArray<EventRow>
}

export interface EventRow {
  readonly id: number
  readonly user: string | null
  readonly amount: number | null
  readonly price: number | null
  readonly ts: string
  readonly category: string | null
  readonly note: string | null
}

/** mulberry32: a small seeded PRNG, so the data set is the same on every run. */
const prng = (seed: number) => {
  let a = seed >>> 0
  return (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const NOTES = [
  "  Hello World ",
  "abc-def ghi",
  "Ärger über Öl",
  "straße",
  "x",
  "the quick brown fox",
  "a,b;c",
  "MiXeD CaSe 42",
  "tab\tand space",
  "日本 語",
  // Outside the BMP and above the surrogates: UTF-16 order differs from Spark's UTF-8 byte order,
  // and a JavaScript string's length counts two units for the emoji.
  "🙂 smile",
  "\uff01bang"
]

const CATEGORIES = ["books", "games", "food", "Toys", "x,y"]

const csvCell = (v: unknown): string => {
  if (v === null) return ""
  const s = String(v)
  return /[",\n\r\t]/.test(s) || s.trim() !== s ? `"${s.replaceAll('"', '""')}"` : s
}

/**
 * Writes the seeded data set under `root`: events (user ids with some nulls, integer amounts
 * with nulls and negatives, doubles, event times spread over about five minutes with late and
 * out-of-order events and some exact re-sent duplicates, categories, free-text notes), users and
 * clicks. File modification times increase with the file number, so the file stream source of
 * both engines takes them in the same order.
 */
export const generateData = async (root: string, seed = 20261130): Promise<DataSet> => {
  const rand = prng(seed)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(rand() * xs.length)]
  const perFile: Array<Array<EventRow>> = []
  const clicksPerFile: Array<Array<{ clickId: number; clickUser: string | null; clickTs: string }>> = []
  let id = 1
  let clickId = 1
  const all: Array<EventRow> = []
  for (let f = 0; f < FILES; f++) {
    const rows: Array<EventRow> = []
    const clicks: Array<{ clickId: number; clickUser: string | null; clickTs: string }> = []
    for (let i = 0; i < 30; i++) {
      // Mostly moving forward 45 s per file; one event in eight is late by up to two minutes.
      let t = BASE_MS + f * 45_000 + Math.floor(rand() * 50_000)
      if (rand() < 0.125) t -= 20_000 + Math.floor(rand() * 100_000)
      const r = rand()
      // A re-sent event (an exact duplicate of an earlier one) now and then.
      if (all.length > 0 && r < 0.08) {
        const dup = all[Math.floor(rand() * all.length)]
        rows.push(dup)
        continue
      }
      const row: EventRow = {
        id: id++,
        user: rand() < 0.08 ? null : `u${1 + Math.floor(rand() * 7)}`,
        amount: rand() < 0.1 ? null : Math.floor(rand() * 260) - 50,
        price: rand() < 0.06 ? null : Math.round(rand() * 100_000) / 100,
        ts: new Date(t).toISOString(),
        category: rand() < 0.05 ? null : pick(CATEGORIES),
        note: rand() < 0.05 ? null : pick(NOTES)
      }
      rows.push(row)
      all.push(row)
      if (row.user !== null && rand() < 0.5) {
        // A click by the same user 0–25 s after the event (some fall outside the 20 s join range).
        clicks.push({
          clickId: clickId++,
          clickUser: row.user,
          clickTs: new Date(t + Math.floor(rand() * 25_000)).toISOString()
        })
      }
    }
    perFile.push(rows)
    clicksPerFile.push(clicks)
  }

  const dirs = {
    eventsJson: path.join(root, "events-json"),
    eventsCsv: path.join(root, "events-csv"),
    eventsParquet: path.join(root, "events-parquet"),
    usersJson: path.join(root, "users-json"),
    clicksJson: path.join(root, "clicks-json"),
    dirtyJson: path.join(root, "dirty-json"),
    dirtyCsv: path.join(root, "dirty-csv")
  }
  for (const d of Object.values(dirs)) fs.mkdirSync(d, { recursive: true })
  const columns = ["id", "user", "amount", "price", "ts", "category", "note"] as const
  for (let f = 0; f < FILES; f++) {
    const name = `part-${String(f).padStart(5, "0")}`
    const mtime = new Date(BASE_MS + f * 10_000)
    const json = path.join(dirs.eventsJson, `${name}.json`)
    fs.writeFileSync(json, perFile[f].map((r) => JSON.stringify(r)).join("\n") + "\n")
    const csv = path.join(dirs.eventsCsv, `${name}.csv`)
    fs.writeFileSync(
      csv,
      [columns.join(","), ...perFile[f].map((r) => columns.map((c) => csvCell(r[c])).join(","))].join("\n") + "\n"
    )
    const clicks = path.join(dirs.clicksJson, `${name}.json`)
    fs.writeFileSync(clicks, clicksPerFile[f].map((r) => JSON.stringify(r)).join("\n") + "\n")
    for (const p of [json, csv, clicks]) fs.utimesSync(p, mtime, mtime)
  }
  const users = [
    { user: "u1", country: "NL", tier: 1 },
    { user: "u2", country: "DE", tier: 2 },
    { user: "u2", country: "AT", tier: 3 },
    { user: "u3", country: null, tier: 1 },
    { user: "u5", country: "FR", tier: null },
    { user: "u9", country: "US", tier: 2 },
    { user: null, country: "XX", tier: 0 }
  ]
  fs.writeFileSync(path.join(dirs.usersJson, "users.json"), users.map((u) => JSON.stringify(u)).join("\n") + "\n")
  // Readers' corner cases, read with EVENTS_SCHEMA in PERMISSIVE mode.
  fs.writeFileSync(
    path.join(dirs.dirtyJson, "dirty.json"),
    [
      '{"id": 1, "user": "a", "amount": 5, "price": 1.5, "ts": "2024-03-10T10:00:00Z"}',
      '{"id": 2, "user": "b", "amount": "12", "price": 2}',
      '{"id": 3, "user": 7, "amount": 1.5, "price": "x"}',
      '{"id": 4, "amount": 2147483648, "ts": "2024-03-10 10:00:01"}',
      '{"id": 5, "user": null, "ts": "not a time", "category": ["x"]}',
      "{broken json",
      '{"id": 6, "note": "quote \\" and \\u00e9", "extra": true, "ts": 1710064800}',
      "",
      '{"id": 7, "user": "c", "amount": -0, "price": -0.0, "ts": "2024-03-10T10:00:02.123456Z"}',
      '[{"id": 8}]'
    ].join("\n") + "\n"
  )
  fs.writeFileSync(
    path.join(dirs.dirtyCsv, "dirty.csv"),
    [
      "id,user,amount,price,ts,category,note",
      "1,a,5,1.5,2024-03-10T10:00:00Z,books,plain",
      "2,b,twelve,2,2024-03-10 10:00:01,,",
      '3,"c, d",7,x,not a time,"games","say ""hi"""',
      "4,e,2147483648,1e3,2024-03-10T10:00:02.5Z,food",
      "5,f,6,7.25,2024-03-10T10:00:03Z,food,note,extra",
      " 6 , g , 8 , 9.5 ,2024-03-10T10:00:04Z, x ,  spaced  ",
      "7,,,,,,"
    ].join("\n") + "\n"
  )

  // Parquet through DuckDB: the JSON rows with the same types (timestamps with a time zone, so
  // the parquet column is UTC-adjusted and Spark reads it as TIMESTAMP).
  const instance = await DuckDBInstance.create(":memory:")
  const connection = await instance.connect()
  try {
    const parquet = path.join(dirs.eventsParquet, "part-00000.parquet")
    await connection.run(
      `COPY (SELECT id, "user", amount, price, CAST(ts AS TIMESTAMPTZ) AS ts, category, note FROM read_json($1, format = 'newline_delimited', columns = {id: 'INTEGER', "user": 'VARCHAR', amount: 'INTEGER', price: 'DOUBLE', ts: 'VARCHAR', category: 'VARCHAR', note: 'VARCHAR'})) TO '${parquet.replaceAll("'", "''")}' (FORMAT parquet)`,
      [path.join(dirs.eventsJson, "*.json")]
    )
  } finally {
    connection.closeSync()
    instance.closeSync()
  }
  return { root, ...dirs, events: perFile.flat() }
}

// ---- comparison ------------------------------------------------------------------------------

/** A collected result: the schema, the rows, and for a streaming query its batches (`batchId`, `+` when it had input). */
export interface Result {
  readonly schema: T.StructType
  readonly rows: ReadonlyArray<unknown>
  readonly batches?: string
}

export interface DiffOptions {
  /** The query sorts on a unique key: compare in order (otherwise order-insensitive). */
  readonly ordered?: boolean
  /**
   * Round non-integer numbers to 9 significant digits before comparing. Only for results whose
   * floating-point summation order differs between the engines (`sum`/`avg` of doubles: Spark adds
   * partial sums per partition, the local engine in input order); every other number, and every
   * integer, is compared exactly.
   */
  readonly roundDoubles?: boolean
  /**
   * Round non-integer numbers to this many significant digits instead. Only for functions that
   * Spark computes with HotSpot's intrinsics (`exp`, `sin`, `cos`, `log` and friends on x86_64),
   * whose last bit differs from V8's fdlibm port and cannot be reproduced in JavaScript.
   */
  readonly significantDigits?: number
  /** The result may be empty (by default an empty result fails: a vacuous comparison proves nothing). */
  readonly allowEmpty?: boolean
}

/**
 * A value in a comparable form: timestamps as their epoch ms (Date equality), NaN, ±Infinity and
 * -0.0 spelled out. `round` applies to doubles: by `type` when it is known (a double column is
 * rounded even where its value is integral, as 2.1218375138001664e+23 is; an int or long column
 * never is), otherwise to non-integer numbers.
 */
const normalize = (v: unknown, round: number | undefined, type?: T.DataType): unknown => {
  if (v === null || v === undefined) return null
  if (v instanceof Date) return { date: v.getTime() }
  if (typeof v === "number") {
    if (Number.isNaN(v)) return "NaN"
    if (!Number.isFinite(v)) return v > 0 ? "Infinity" : "-Infinity"
    // -0.0 is a value of its own in Spark (it prints as -0.0); JSON would make it 0
    if (Object.is(v, -0)) return "-0.0"
    const rounds = round !== undefined && (type === undefined ? !Number.isInteger(v) : type._tag === "double")
    return rounds ? Number(v.toPrecision(round)) : v
  }
  if (typeof v === "bigint") return Number(v)
  if (v instanceof Uint8Array) return { bytes: [...v] }
  if (v instanceof Map) {
    const [kt, vt] = type?._tag === "map" ? [type.keyType, type.valueType] : [undefined, undefined]
    return { map: [...v.entries()].map(([k, x]) => [normalize(k, round, kt), normalize(x, round, vt)]) }
  }
  if (Array.isArray(v)) return v.map((x) => normalize(x, round, type?._tag === "array" ? type.elementType : undefined))
  if (typeof v === "object") {
    const fields = type?._tag === "struct" ? type.fields : undefined
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) out[k] = normalize(x, round, fields?.find((f) => f.name === k)?.dataType)
    return out
  }
  return v
}

/** A row as a list of [column, value] pairs (so column order is compared too). */
const rowKey = (row: unknown, round: number | undefined, schema?: T.StructType): string =>
  JSON.stringify(
    Object.entries(row as Record<string, unknown>).map(([k, x], i) => [
      k,
      normalize(x, round, schema?.fields[i]?.name === k ? schema.fields[i].dataType : undefined)
    ])
  )

const show = (rows: ReadonlyArray<string>): string =>
  rows.length === 0 ? "  (no rows)" : rows.map((r) => `  ${r}`).join("\n")

/** The schema as comparable text: names and Spark types (nullability differs legitimately). */
const schemaText = (schema: T.StructType): string =>
  schema.fields.map((f) => `${f.name}: ${T.simpleString(f.dataType)}`).join(", ")

/** Two normalized values equal, but non-integral numbers (doubles) within `tolerance` of each other (relative). */
const near = (a: unknown, b: unknown, tolerance: number): boolean => {
  // an int or long (an integer on both sides) must be equal
  if (typeof a === "number" && typeof b === "number")
    return (
      a === b ||
      ((!Number.isInteger(a) || !Number.isInteger(b)) &&
        Math.abs(a - b) <= tolerance * Math.max(Math.abs(a), Math.abs(b)))
    )
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => near(x, b[i], tolerance))
  if (
    typeof a === "object" &&
    a !== null &&
    typeof b === "object" &&
    b !== null &&
    !Array.isArray(a) &&
    !Array.isArray(b)
  ) {
    const ka = Object.keys(a)
    const kb = Object.keys(b)
    return (
      ka.length === kb.length &&
      ka.every(
        (k, i) => k === kb[i] && near((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], tolerance)
      )
    )
  }
  return a === b
}

/**
 * When doubles are compared rounded, rounding can split two values on either side of a rounding
 * boundary (36539.15445 ± an ulp gives 36539.1545 and 36539.1544; seed 9's 2882983400): the rows
 * then agree when, paired in order (sorted on 6 significant digits unless ordered), every double
 * is within 10^-digits (relative) of its pair.
 */
const nearlyEqual = (local: Result, remote: Result, opts: DiffOptions, round: number | undefined): boolean => {
  if (round === undefined || local.rows.length !== remote.rows.length) return false
  const exact = (rows: ReadonlyArray<unknown>, schema: T.StructType) => {
    const out = rows.map((r) => ({
      coarse: rowKey(r, 6, schema),
      value: JSON.parse(rowKey(r, undefined, schema)) as unknown
    }))
    return opts.ordered === true ? out : out.sort((x, y) => (x.coarse < y.coarse ? -1 : x.coarse > y.coarse ? 1 : 0))
  }
  const l = exact(local.rows, local.schema)
  const s = exact(remote.rows, remote.schema)
  return l.every((x, i) => near(x.value, s[i].value, 10 ** -round))
}

/**
 * Compares two results; `undefined` when they are equal, otherwise a message that shows both
 * schemas and both row sets (sorted, unless ordered), and the rows only one side has.
 */
export const compareResults = (
  name: string,
  local: Result,
  remote: Result,
  opts: DiffOptions = {}
): string | undefined => {
  const round = opts.significantDigits ?? (opts.roundDoubles === true ? 9 : undefined)
  const l = local.rows.map((r) => rowKey(r, round, local.schema))
  const s = remote.rows.map((r) => rowKey(r, round, remote.schema))
  if (opts.ordered !== true) {
    l.sort()
    s.sort()
  }
  const problems: Array<string> = []
  if (schemaText(local.schema) !== schemaText(remote.schema)) {
    problems.push(`schemas differ:\n  local: ${schemaText(local.schema)}\n  spark: ${schemaText(remote.schema)}`)
  }
  if (local.batches !== remote.batches) {
    problems.push(
      `micro-batches differ (batchId, + when it had input):\n  local: ${local.batches}\n  spark: ${remote.batches}`
    )
  }
  if (opts.allowEmpty !== true && s.length === 0)
    problems.push("Spark returned no rows (a vacuous comparison: change the query or pass allowEmpty)")
  if ((l.length !== s.length || l.some((x, i) => x !== s[i])) && !nearlyEqual(local, remote, opts, round)) {
    const count = (xs: ReadonlyArray<string>) => {
      const m = new Map<string, number>()
      for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1)
      return m
    }
    const lc = count(l)
    const sc = count(s)
    const onlyLocal = l.filter((x) => (sc.get(x) ?? 0) < (lc.get(x) ?? 0))
    const onlySpark = s.filter((x) => (lc.get(x) ?? 0) < (sc.get(x) ?? 0))
    problems.push(
      `rows differ (local ${l.length}, spark ${s.length}${opts.ordered === true ? ", compared in order" : ""})\n` +
        `only local:\n${show([...new Set(onlyLocal)])}\nonly spark:\n${show([...new Set(onlySpark)])}\n` +
        `local rows:\n${show(l)}\nspark rows:\n${show(s)}`
    )
  }
  return problems.length === 0 ? undefined : `[${name}] ${problems.join("\n")}`
}

/**
 * A DataFrame with its row type forgotten: the cases union frames whose literal columns have
 * different literal types (`F.lit("left").as("how")` and `F.lit("right").as("how")`).
 */
export const loose = (df: DataFrame<any>): DataFrame<any> => df

// ---- engines ---------------------------------------------------------------------------------

/**
 * The conf both sessions run with: the semantics the local engine implements
 * (`spark.sql.ansi.enabled=false`, UTC), and two shuffle partitions (Spark on local[2]; it also
 * fixes the stateful operators' partitions). On the remote session it is Spark's conf.
 */
export const SESSION_CONF: Readonly<Record<string, string | number | boolean>> = {
  "spark.sql.ansi.enabled": false,
  "spark.sql.session.timeZone": "UTC",
  "spark.sql.shuffle.partitions": 2
}

export interface Engines<D> {
  readonly local: OpenSession
  readonly remote: OpenSession
  readonly localData: D
  readonly remoteData: D
  readonly dataSet: DataSet
}

/** Builds the query under test from a session and that session's fixtures. */
export type Build<D> = (spark: SessionShape, data: D) => DataFrame<any>

export interface StreamOptions extends DiffOptions {
  readonly outputMode: "append" | "update" | "complete"
  /** Compare each micro-batch's output row count too (the sink's `numOutputRows` in its progress). */
  readonly batchOutputRows?: boolean
}

/** A differential case: a batch query, or a streaming one when `stream` is given. */
export interface Case<D> {
  readonly name: string
  readonly build: Build<D>
  readonly opts?: DiffOptions
  /** Run as a streaming query into a memory sink with this output mode. */
  readonly stream?: StreamOptions
  /** Both engines must refuse the query (with the same error class when both give one). */
  readonly expectFailure?: boolean
  /** The case fails because of this (described, reported) bug: the test is `it.fails`. */
  readonly knownBug?: string
}

let queryCounter = 0

/** Internal rows to the external form `collect()` gives. */
const rowsOf = (result: { readonly schema: T.StructType; readonly rows: ReadonlyArray<ReadonlyArray<unknown>> }) =>
  rowsToExternal(result.schema, result.rows)

/** `run` of a session's action, with the typed failure rethrown as an Error naming the side. */
const runOn = async <A>(
  s: OpenSession,
  which: string,
  effect: Effect.Effect<A, any, any>,
  name: string
): Promise<A> => {
  try {
    return await s.run(effect)
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    throw new Error(`[${name}] the ${which} engine failed: ${message}`, { cause: e })
  }
}

/** Collects a batch query. */
const runBatch = async (s: OpenSession, which: string, name: string, df: DataFrame<any>): Promise<Result> => {
  const result = await runOn(s, which, df.execute(), name)
  return { schema: result.schema, rows: rowsOf(result) }
}

/**
 * Runs a streaming query into a memory sink (a unique query name, `Trigger.AvailableNow()`, a
 * fresh checkpoint), waits for it to end and reads the memory table back.
 */
const runStream = async (
  s: OpenSession,
  which: string,
  name: string,
  df: DataFrame<any>,
  opts: StreamOptions,
  tmp: string
): Promise<Result> => {
  const id = ++queryCounter
  const queryName = `diff_${id}_${which}`
  const checkpoint = fs.mkdtempSync(path.join(tmp, `ckpt-${id}-${which}-`))
  const query = await runOn(
    s,
    which,
    df.writeStream
      .format("memory")
      .queryName(queryName)
      .outputMode(opts.outputMode)
      .trigger(Trigger.AvailableNow())
      .option("checkpointLocation", checkpoint)
      .start(),
    name
  )
  await runOn(s, which, query.awaitTermination(), name)
  const progress = await runOn(s, which, query.recentProgress(), name)
  const result = await runOn(s, which, s.table(queryName).execute(), name)
  // The batches, those with input marked "+": both engines must cut the input the same way and run
  // the same no-data batches. A batch has input when a source's offsets moved. (Not the input row
  // counts, nor numInputRows > 0: Spark counts the rows its scans output after filters pushed into
  // the file reader, none for a scan its optimizer removed (a filter folded to false), and a source
  // scanned twice twice; docs/differences.md.)
  const moved = (p: (typeof progress)[number]): boolean =>
    p.sources.some((src) => JSON.stringify(src.startOffset ?? null) !== JSON.stringify(src.endOffset ?? null))
  const batches = progress
    .map((p) => `${p.batchId}${moved(p) ? "+" : ""}${opts.batchOutputRows === true ? `=${p.sink.numOutputRows}` : ""}`)
    .join(" ")
  return { schema: result.schema, rows: rowsOf(result), batches }
}

/**
 * Opens a local and a remote session for the test file (in `beforeAll`, closed in `afterAll`),
 * writes the data set into a fresh temp dir (on the file system the server shares with this
 * machine) and loads each engine's fixtures with `load`.
 */
export const useEngines = <D>(
  load: (spark: OpenSession, data: DataSet) => Promise<D>,
  options: {
    /** How many cases run at once (3 by default). */
    readonly concurrency?: number
    /**
     * The Spark Connect address (`remoteAddress` of ./remote.ts by default). A test file names
     * `remoteAddress` itself so that the global setup sees it needs the server.
     */
    readonly remote?: () => string
  } = {}
) => {
  let engines: Engines<D> | undefined
  beforeAll(async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-differential-"))
    const dataSet = await generateData(path.join(root, "data"))
    const [local, remote] = await Promise.all([
      Session.open({ conf: SESSION_CONF }),
      Session.open({ remote: (options.remote ?? remoteAddress)(), conf: SESSION_CONF })
    ])
    const [localData, remoteData] = await Promise.all([load(local, dataSet), load(remote, dataSet)])
    engines = { local, remote, localData, remoteData, dataSet }
  })
  afterAll(async () => {
    if (engines === undefined) return
    await Promise.allSettled([engines.local.close(), engines.remote.close()])
    fs.rmSync(path.dirname(engines.dataSet.root), { recursive: true, force: true })
  })
  const get = (): Engines<D> => {
    if (engines === undefined) throw new Error("the engines are not open (useEngines registers beforeAll)")
    return engines
  }

  /** Runs one case on one engine. */
  const runSide = async (c: Case<D>, which: "local" | "remote"): Promise<Result> => {
    const e = get()
    const [s, data] = which === "local" ? [e.local, e.localData] : [e.remote, e.remoteData]
    const t0 = performance.now()
    const df = c.build(s, data)
    const result =
      c.stream === undefined
        ? await runBatch(s, which, c.name, df)
        : await runStream(s, which, c.name, df, c.stream, path.dirname(e.dataSet.root))
    if (process.env.DIFF_TIMING !== undefined)
      console.log(`${c.name}: ${which} ${Math.round(performance.now() - t0)} ms, ${result.rows.length} rows`)
    return result
  }

  /** Runs one case on both engines at once, each side settled on its own (a failure of one does not hide the other). */
  const runCaseSettled = (c: Case<D>): Promise<[PromiseSettledResult<Result>, PromiseSettledResult<Result>]> =>
    Promise.allSettled([runSide(c, "local"), runSide(c, "remote")]) as Promise<
      [PromiseSettledResult<Result>, PromiseSettledResult<Result>]
    >

  /** Runs one case on both engines at once (the local engine computes here while Spark works in its JVM). */
  const runCase = async (c: Case<D>): Promise<{ local: Result; remote: Result }> => {
    const [local, remote] = await Promise.all([runSide(c, "local"), runSide(c, "remote")])
    return { local, remote }
  }

  /**
   * Both engines must refuse the case; when both name an error class (Spark's, and the local
   * engine's copy of it), the classes must agree.
   */
  const bothFail = async (c: Case<D>): Promise<void> => {
    const [local, remote] = await Promise.allSettled([runSide(c, "local"), runSide(c, "remote")])
    const describe = (r: PromiseSettledResult<Result>): string =>
      r.status === "fulfilled"
        ? `succeeded with ${r.value.rows.length} rows`
        : `failed: ${String((r.reason as Error).message)}`
    if (local.status === "fulfilled" || remote.status === "fulfilled") {
      throw new Error(`[${c.name}] both engines must fail\n  local ${describe(local)}\n  spark ${describe(remote)}`)
    }
    const classOf = (r: PromiseRejectedResult): string | undefined =>
      ((r.reason as Error).cause as { readonly errorClass?: string } | undefined)?.errorClass
    const l = classOf(local)
    const s = classOf(remote)
    if (l !== undefined && s !== undefined && l !== s) {
      throw new Error(`[${c.name}] the error classes differ\n  local ${describe(local)}\n  spark ${describe(remote)}`)
    }
  }

  /** Runs one case on both engines and fails with both row sets when the results differ. */
  const differential = async (c: Case<D>): Promise<void> => {
    if (c.expectFailure === true) return bothFail(c)
    const { local, remote } = await runCase(c)
    const problem = compareResults(c.name, local, remote, { ...c.opts, ...c.stream })
    if (problem !== undefined) throw new Error(problem)
  }

  /**
   * Registers one test per case. A test starts its own case and the next `concurrency - 1` ones
   * (Spark's per-query latency is mostly fixed overhead, which overlaps), then waits for its own;
   * so at most `concurrency` cases run at once, and cases whose tests are filtered out mostly do not run.
   */
  const registered: Array<Case<D>> = []
  const started = new Map<Case<D>, Promise<void>>()
  const start = (c: Case<D>): Promise<void> => {
    let run = started.get(c)
    if (run === undefined) {
      run = differential(c)
      // Handled by the test that awaits it; this keeps a failure that comes early from being "unhandled".
      run.catch(() => undefined)
      started.set(c, run)
    }
    return run
  }
  const cases = (list: ReadonlyArray<Case<D>>) => {
    for (const c of list) {
      const index = registered.push(c) - 1
      const run = () => {
        const ahead = registered.slice(index + 1, index + (options.concurrency ?? 3))
        const own = start(c)
        for (const next of ahead) start(next)
        return own
      }
      // A case that fails because of a described, reported bug: the test fails once the bug is fixed.
      const test = c.knownBug === undefined ? it : it.fails
      test(c.knownBug === undefined ? c.name : `${c.name} (known bug: ${c.knownBug})`, run, 240_000)
    }
  }

  return { engines: get, runCase, runCaseSettled, differential, cases }
}
