/**
 * The corrupted-checkpoint fuzzer (issue #20, "Corrupted checkpoints, fuzzed"): real queries
 * write checkpoints of every file kind once; each case copies one, damages one file — truncated
 * at a random offset, a random bit flipped, emptied, deleted, or replaced by a file of a future
 * version (with a valid checksum, as that version would write it) — and checks what a restart
 * makes of it. A case passes when the restart
 *
 * - recovers exactly: the component the restart reads the file through gives what it gave
 *   before the damage, or the restarted query ends with exactly the uninterrupted run's output;
 * - recovers as the protocol allows: the receiver log's last file, cut short, gives a prefix of
 *   its records (a kill while appending does the same; Spark's WAL reader stops there too);
 * - or fails before its first batch with a typed error (CheckpointError, StateStoreError,
 *   ConnectorError) whose message names the damaged file (and says what to do).
 *
 * Anything else — different values without an error, an error of another kind, a failure after
 * the restart wrote output — is a finding, printed with its case number and seed.
 *
 * Two oracles: most cases read the damaged file through the component a restart uses (the
 * offset and commit logs, the file logs, the state providers, the receiver log), which is fast;
 * deleted files, the state metadata the engine rewrites, and a sample of the rest restart the
 * real query in a fresh session and compare its final output.
 *
 * Run a big count with `npm run fuzz:checkpoint -- --cases 5000 --seed 1`.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Cause, Effect, Exit } from "effect"
import { checksumFile, checksumFileName, isChecksumFileName } from "../../core/Checksum.ts"
import * as MetadataLog from "../../core/MetadataLog.ts"
import {
  CompactibleFileStreamLog,
  checkSinkFiles,
  defaultLogSettings,
  sinkLogFiles,
  sourceEntryCodec
} from "../../connectors/files/FileStreamLog.ts"
import { ReceivedBlockLog, ReceivedBlockLogCorrupt } from "../../dstream/ReceivedBlockLog.ts"
import { F, Session, Trigger } from "../../mod.ts"
import * as DuckDBStateStoreProvider from "../../state/DuckDBStateStoreProvider.ts"
import * as FileStateStoreProvider from "../../state/FileStateStoreProvider.ts"
import { NodeCheckpointFileSystem } from "../../state/NodeCheckpointFileSystem.ts"

// ---- seeded randomness ------------------------------------------------------------------

/** mulberry32: a small seeded generator, so a failing case replays from its seed. */
export const rng = (seed: number) => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return { next, int: (n: number) => Math.floor(next() * n), pick: <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(next() * xs.length)] }
}

// ---- the scenarios ------------------------------------------------------------------------

export type ScenarioName = "duckdb" | "files" | "sink" | "receiver"

const TYPED = new Set(["CheckpointError", "StateStoreError", "ConnectorError"])

/** Input files of the base run, one batch each (over ten, so the file provider writes a snapshot). */
const INPUT_FILES = 12
const WORDS = ["ant", "bee", "cat", "dog", "eel", "fox"]

const inputRows = (file: number) =>
  Array.from({ length: 3 + (file % 3) }, (_, i) => ({ id: file * 10 + i, word: WORDS[(file * 7 + i * 5) % WORDS.length] }))

const writeInput = (root: string, file: number): void => {
  const p = path.join(root, "in", `${String(file).padStart(3, "0")}.json`)
  fs.writeFileSync(p, inputRows(file).map((r) => JSON.stringify(r)).join("\n"))
  // distinct, increasing modification times: the source takes files oldest first
  fs.utimesSync(p, 1_000_000 + file, 1_000_000 + file)
}

const CONF: ReadonlyArray<readonly [string, string]> = [
  ["spark.sql.streaming.fileSource.log.compactInterval", "2"],
  ["spark.sql.streaming.fileSink.log.compactInterval", "2"]
]

/** Runs the scenario's query with AvailableNow over everything in `root/in`, in a session of its own. */
const runQuery = (name: "duckdb" | "files" | "sink", root: string, keepOpen?: (root: string) => void) =>
  Effect.gen(function* () {
    const spark = yield* Session
    for (const [k, v] of CONF) yield* spark.conf.set(k, v)
    const input = spark.readStream.schema("id INT, word STRING").option("maxFilesPerTrigger", "1").json(path.join(root, "in"))
    const chk = path.join(root, "chk")
    const out = path.join(root, "out")
    const q =
      name === "sink"
        ? yield* input.writeStream
            .format("json")
            .option("checkpointLocation", chk)
            .trigger(Trigger.AvailableNow())
            .start(out)
        : yield* input
            .groupBy("word")
            .agg(F.count("*").as("n"))
            .writeStream.outputMode("update")
            .option("checkpointLocation", chk)
            .trigger(Trigger.AvailableNow())
            // idempotent per batch id, as an exactly-once foreachBatch sink must be
            .foreachBatch((batch, id) =>
              Effect.map(batch.collect(), (rows) => {
                fs.mkdirSync(out, { recursive: true })
                const file = path.join(out, `${String(id).padStart(4, "0")}.json`)
                if (fs.existsSync(file)) return
                const sorted = [...rows].sort((a, b) => String(a.word).localeCompare(String(b.word)))
                fs.writeFileSync(`${file}.tmp`, JSON.stringify(sorted))
                fs.renameSync(`${file}.tmp`, file)
              })
            )
            .start()
    yield* Effect.exit(q.awaitTermination())
    // a copy taken here, before the session closes its state provider, is what a kill leaves
    // (DuckDB's write-ahead log not yet folded into the database file)
    keepOpen?.(root)
    return yield* q.exception()
  }).pipe(Effect.provide(Session.layer({ stateStore: name === "files" ? "memory" : "duckdb" })))

/** The final answer of a scenario's output folder. */
const finalOutput = (name: "duckdb" | "files" | "sink", root: string) =>
  Effect.gen(function* () {
    const out = path.join(root, "out")
    if (name !== "sink") {
      const counts: Record<string, number> = {}
      for (const f of fs.readdirSync(out).filter((n) => n.endsWith(".json")).sort()) {
        for (const r of JSON.parse(fs.readFileSync(path.join(out, f), "utf8")) as Array<{ word: string; n: number }>) {
          counts[r.word] = r.n
        }
      }
      return JSON.stringify(Object.entries(counts).sort())
    }
    const spark = yield* Session
    const df = yield* spark.read.schema("id INT, word STRING").json(out)
    const rows = (yield* df.collect()) as ReadonlyArray<{ id: number; word: string }>
    return JSON.stringify([...rows].map((r) => r.id).sort((a, b) => a - b))
  }).pipe(Effect.provide(Session.layer()))

/** What the uninterrupted run over input files 0 … n - 1 gives. */
const expectedOutput = (name: "duckdb" | "files" | "sink", n: number): string => {
  const rows = Array.from({ length: n }, (_, f) => inputRows(f)).flat()
  if (name === "sink") return JSON.stringify(rows.map((r) => r.id).sort((a, b) => a - b))
  const counts: Record<string, number> = {}
  for (const r of rows) counts[r.word] = (counts[r.word] ?? 0) + 1
  return JSON.stringify(Object.entries(counts).sort())
}

/** Record blocks of the receiver scenario: three log files, the first two consumed in part. */
const RECEIVER_BLOCKS: ReadonlyArray<ReadonlyArray<ReadonlyArray<unknown>>> = [
  [["a", 1], ["b", 2, { c: true }]],
  [[3, 4, 5], ["d"]],
  [[{ e: "f" }], [6, 7], ["g", "h", "i"]]
]
const RECEIVER_CONSUMED = 4

/** A fresh temporary folder. */
export const tempRoot = (prefix: string): string => fs.mkdtempSync(path.join(os.tmpdir(), `tributary-fuzz-${prefix}-`))

/**
 * Builds the pristine checkpoint of a scenario in `live` and keeps a copy in `base`. Logs record
 * absolute paths (the input files, the sink's part files), so every case runs in `live` again:
 * a copy elsewhere would be a moved checkpoint, another story (bug 3's tests).
 */
export const buildScenario = (name: ScenarioName, live: string, base: string): Effect.Effect<void, unknown> =>
  Effect.gen(function* () {
    fs.rmSync(live, { recursive: true, force: true })
    fs.mkdirSync(live, { recursive: true })
    if (name === "receiver") {
      const log = new ReceivedBlockLog(path.join(live, "receivedData", "0"))
      log.reset()
      for (const file of RECEIVER_BLOCKS) {
        for (const block of file) log.append(block)
        log.close()
      }
      fs.cpSync(live, base, { recursive: true })
      return
    }
    fs.mkdirSync(path.join(live, "in"), { recursive: true })
    for (let f = 0; f < INPUT_FILES; f++) writeInput(live, f)
    const e = yield* runQuery(name, live, (w) => fs.cpSync(w, base, { recursive: true }))
    if (e !== null) return yield* Effect.die(e)
  })

// ---- file kinds and mutations -----------------------------------------------------------

export type Mutation = "truncate" | "bitflip" | "empty" | "missing" | "future"
export const MUTATIONS: ReadonlyArray<Mutation> = ["truncate", "bitflip", "empty", "missing", "future"]

/** A file of a pristine checkpoint, relative to the scenario's copy, with its kind. */
export interface Target {
  readonly rel: string
  readonly kind: string
}

const kindOf = (rel: string): string | undefined => {
  const name = path.basename(rel)
  if (isChecksumFileName(name)) return "checksum"
  if (rel.endsWith(".tmp")) return undefined
  if (/^chk\/metadata$/.test(rel)) return "metadata"
  if (/^chk\/offsets\/\d+$/.test(rel)) return "offsets"
  if (/^chk\/commits\/\d+$/.test(rel)) return "commits"
  if (/^chk\/sources\/0\/\d+(\.compact)?$/.test(rel)) return "sources"
  if (/^chk\/state\/\d+\/_metadata\//.test(rel)) return "state metadata"
  if (/state\.duckdb$/.test(rel)) return "duckdb database"
  if (/state\.duckdb\.wal$/.test(rel)) return "duckdb wal"
  // a DuckDB store's committed version not folded into the database yet (a kill leaves it)
  if (/state\.duckdb\.changelog\/\d+\/[^/]+\/\d+\.changelog$/.test(rel)) return "state changelog"
  if (/\.delta$/.test(rel)) return "state delta"
  if (/\.snapshot$/.test(rel)) return "state snapshot"
  if (/_metadata\/schema$/.test(rel)) return "state schema"
  if (/^out\/_spark_metadata\/\d+(\.compact)?$/.test(rel)) return "sink log"
  if (/^receivedData\/0\/log-\d+$/.test(rel)) return "receiver log"
  return undefined
}

/** The kind of the file a target guards (itself, or for a checksum file the file beside it). */
const guardedKind = (t: Target): string =>
  t.kind === "checksum" ? (kindOf(path.join(path.dirname(t.rel), path.basename(t.rel).slice(1, -4))) ?? "") : t.kind

/** Every damageable file of a scenario's pristine checkpoint. */
export const targetsOf = (name: ScenarioName, pristine: string): Array<Target> => {
  const out: Array<Target> = []
  const walk = (dir: string, rel: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const r = rel === "" ? e.name : `${rel}/${e.name}`
      if (e.isDirectory()) walk(path.join(dir, e.name), r)
      else {
        const kind = kindOf(r)
        // the sink scenario's output files are data, not checkpoint (bug 6 has its own tests)
        if (kind !== undefined && !(name !== "receiver" && r.startsWith("in/"))) out.push({ rel: r, kind })
      }
    }
  }
  walk(pristine, "")
  return out.sort((a, b) => a.rel.localeCompare(b.rel))
}

const crcOf = (p: string) => path.join(path.dirname(p), checksumFileName(path.basename(p)))

/** Rewrites a file's checksum file for its new content (a future version writes a valid one). */
const rechecksum = (p: string) => {
  if (fs.existsSync(crcOf(p))) fs.writeFileSync(crcOf(p), checksumFile(fs.readFileSync(p)))
}

/** A future version of a file of a text format: its version marker raised, checksums valid. */
const futureVersion = (p: string, kind: string): boolean => {
  const bytes = fs.readFileSync(p)
  // The state deltas and snapshots of format 2 are binary after a text header line.
  const binary = /^tributary-state (delta|snapshot) 2\n/.exec(bytes.subarray(0, 40).toString("latin1"))
  if (binary !== null) {
    const header = Buffer.from(`tributary-state ${binary[1]} 99\n`)
    fs.writeFileSync(p, Buffer.concat([header, bytes.subarray(binary[0].length)]))
    rechecksum(p)
    return true
  }
  const text = bytes.toString("utf8")
  let next: string | undefined
  if (/^v1(\n|$)/.test(text)) next = text.replace(/^v1/, "v99")
  else if (kind === "metadata") next = text.replace(/^\{/, '{"version":99,"id2":').replace(/"id"/, '"id3"')
  else if (/^tributary-state changelog 1 /.test(text)) next = text.replace(/^tributary-state changelog 1 /, "tributary-state changelog 99 ")
  else if (/^tributary-state \w+ 1\n/.test(text)) {
    const lines = text.split("\n")
    lines[0] = lines[0].replace(/ 1$/, " 99")
    next = lines.join("\n")
  } else if (kind === "receiver log") next = `v99\t${text}`
  if (next === undefined) return false
  fs.writeFileSync(p, next)
  rechecksum(p)
  return true
}

/** Damages `p`; returns a description, or `undefined` when the mutation does not apply. */
export const mutate = (p: string, kind: string, m: Mutation, r: ReturnType<typeof rng>): string | undefined => {
  const size = fs.statSync(p).size
  switch (m) {
    case "truncate": {
      if (size === 0) return undefined
      const at = r.int(size)
      fs.truncateSync(p, at)
      return `truncated to ${at} of ${size} bytes`
    }
    case "bitflip": {
      if (size === 0) return undefined
      const at = r.int(size)
      const bit = r.int(8)
      const fd = fs.openSync(p, "r+")
      try {
        const b = Buffer.alloc(1)
        fs.readSync(fd, b, 0, 1, at)
        b[0] ^= 1 << bit
        fs.writeSync(fd, b, 0, 1, at)
      } finally {
        fs.closeSync(fd)
      }
      return `bit ${bit} of byte ${at} flipped`
    }
    case "empty":
      fs.truncateSync(p, 0)
      return "emptied"
    case "missing":
      fs.rmSync(p)
      return "deleted"
    case "future":
      if (kind === "checksum" || kind.startsWith("duckdb")) return undefined
      return futureVersion(p, kind) ? "replaced by a future version's file" : undefined
  }
}

// ---- oracles ------------------------------------------------------------------------------

export type Verdict =
  | "recovered exactly"
  | "recovered as the protocol allows"
  | "failed before the first batch, naming the file"
  | "FINDING"

export interface CaseResult {
  readonly verdict: Verdict
  readonly oracle: "component" | "restart"
  readonly detail: string
}

const errorOf = (cause: unknown): { tag: string | undefined; message: string } => {
  let e = cause as { _tag?: string; message?: string; cause?: unknown } | undefined
  const message = String(e?.message ?? e)
  // a StreamingQueryError wraps the typed failure
  while (e !== undefined && e._tag === "StreamingQueryError") e = e.cause as typeof e
  return { tag: e?._tag, message: `${message} ${String(e?.message ?? "")}` }
}

/**
 * The file named in an error for a damaged `file`: a checksum file's error names its file, and
 * a deleted file's names the gap it left (the folder, a neighbour, the first file missing).
 */
const namesFile = (message: string, file: string, deleted: boolean): boolean => {
  const name = path.basename(file)
  const guarded = isChecksumFileName(name) ? path.join(path.dirname(file), name.slice(1, -4)) : file
  return message.includes(file) || message.includes(guarded) || (deleted && message.includes(path.dirname(file)))
}

const failed = (
  oracle: CaseResult["oracle"],
  tag: string | undefined,
  message: string,
  file: string,
  deleted: boolean
): CaseResult =>
  tag !== undefined && TYPED.has(tag) && namesFile(message, file, deleted)
    ? { verdict: "failed before the first batch, naming the file", oracle, detail: `${tag}: ${message.slice(0, 160)}` }
    : { verdict: "FINDING", oracle, detail: `${tag ?? "untyped"} failure not naming ${file}: ${message.slice(0, 300)}` }

/** What a restart's component reads from the scenario copy at `root`, as canonical text. */
const readThroughComponent = (name: ScenarioName, kind: string, rel: string, root: string): Effect.Effect<string, unknown> =>
  Effect.gen(function* () {
    const guardedRel = kind === "checksum" ? path.join(path.dirname(rel), path.basename(rel).slice(1, -4)) : rel
    const guardedKind = kind === "checksum" ? (kindOf(guardedRel) ?? "") : kind
    const chk = path.join(root, "chk")
    const fsys = NodeCheckpointFileSystem
    switch (guardedKind) {
      case "metadata":
        return JSON.stringify(yield* MetadataLog.readQueryId(fsys, chk))
      case "offsets":
        return JSON.stringify(yield* MetadataLog.offsetLog(fsys, chk).get(Number(path.basename(guardedRel))))
      case "commits":
        return JSON.stringify(yield* MetadataLog.commitLog(fsys, chk).get(Number(path.basename(guardedRel))))
      case "sources": {
        const log = new CompactibleFileStreamLog(
          path.join(chk, "sources", "0"),
          { ...defaultLogSettings("json"), defaultCompactInterval: 2, deleteExpired: false },
          sourceEntryCodec
        )
        return JSON.stringify([yield* log.latestBatchId(), yield* log.allEntries()])
      }
      case "sink log": {
        const out = path.join(root, "out")
        const files = yield* sinkLogFiles(out, "json")
        yield* checkSinkFiles("json", out, files)
        return JSON.stringify(files.map((f) => [f.path, f.size]))
      }
      case "duckdb database":
      case "duckdb wal":
      case "state changelog":
      case "state delta":
      case "state snapshot":
      case "state schema":
        return yield* Effect.scoped(
          Effect.gen(function* () {
            const provider =
              name === "files" ? yield* FileStateStoreProvider.make() : yield* DuckDBStateStoreProvider.make()
            // the version the restart opens: the last committed batch's
            const id = { checkpoint: chk, operatorId: 0, storeName: "default" }
            const committed = yield* MetadataLog.commitLog(fsys, chk).batchIds()
            const version = committed[committed.length - 1]
            const rows = yield* provider.read({ ...id, version })
            return JSON.stringify([version, [...rows].sort((a, b) => a[0].localeCompare(b[0]))])
          })
        )
      case "receiver log": {
        const log = new ReceivedBlockLog(path.join(root, "receivedData", "0"))
        return JSON.stringify(log.recover(RECEIVER_CONSUMED))
      }
    }
    return yield* Effect.die(new Error(`no component reads ${rel}`))
  })

/** Compares a component read of the damaged copy with the pristine one. */
const componentOracle = (
  name: ScenarioName,
  target: Target,
  root: string,
  pristine: string,
  deleted: boolean
): Effect.Effect<CaseResult> =>
  Effect.map(Effect.exit(readThroughComponent(name, target.kind, target.rel, root)), (exit): CaseResult => {
    const file = path.join(root, target.rel)
    if (Exit.isSuccess(exit)) {
      if (exit.value === pristine) return { verdict: "recovered exactly", oracle: "component", detail: "" }
      const lastReceiverFile = target.kind === "receiver log" && target.rel.endsWith(`log-${lastReceiverStart()}`)
      if (lastReceiverFile) {
        const got = JSON.parse(exit.value) as Array<unknown>
        const want = JSON.parse(pristine) as Array<unknown>
        if (got.length < want.length && JSON.stringify(want.slice(0, got.length)) === JSON.stringify(got)) {
          return { verdict: "recovered as the protocol allows", oracle: "component", detail: `${got.length} of ${want.length} records` }
        }
      }
      return { verdict: "FINDING", oracle: "component", detail: `read other values without an error: ${exit.value.slice(0, 200)}` }
    }
    const cause = Cause.squash(exit.cause)
    if (cause instanceof ReceivedBlockLogCorrupt) return failed("component", "CheckpointError", cause.message, file, deleted)
    const { tag, message } = errorOf(cause)
    return failed("component", tag, message, file, deleted)
  })

const lastReceiverStart = (): number => {
  let n = 0
  for (const f of RECEIVER_BLOCKS.slice(0, -1)) for (const b of f) n += b.length
  return n
}

/** Restarts the scenario's query over the damaged copy with one more input file. */
const restartOracle = (
  name: "duckdb" | "files" | "sink",
  target: Target,
  root: string,
  deleted: boolean
): Effect.Effect<CaseResult> =>
  Effect.gen(function* () {
    const file = path.join(root, target.rel)
    const outBefore = outputState(root)
    writeInput(root, INPUT_FILES)
    const exit = yield* Effect.exit(runQuery(name, root))
    const err = Exit.isSuccess(exit) ? exit.value : Cause.squash(exit.cause)
    if (err !== null && err !== undefined) {
      const { tag, message } = errorOf(err)
      const verdict = failed("restart", tag, message, file, deleted)
      if (verdict.verdict !== "FINDING" && outputState(root) !== outBefore) {
        return { verdict: "FINDING", oracle: "restart", detail: `failed after writing output: ${message.slice(0, 200)}` }
      }
      return verdict
    }
    const got = yield* Effect.exit(finalOutput(name, root))
    if (Exit.isFailure(got)) {
      const { tag, message } = errorOf(Cause.squash(got.cause))
      return { verdict: "FINDING", oracle: "restart", detail: `ran, then its output cannot be read (${tag}): ${message.slice(0, 200)}` }
    }
    return got.value === expectedOutput(name, INPUT_FILES + 1)
      ? { verdict: "recovered exactly", oracle: "restart", detail: "" }
      : { verdict: "FINDING", oracle: "restart", detail: `wrong output ${got.value}, expected ${expectedOutput(name, INPUT_FILES + 1)}` }
  }) as Effect.Effect<CaseResult>

/** The output folder's files (what a failed restart must not have changed). */
const outputState = (root: string): string => {
  const out = path.join(root, "out")
  if (!fs.existsSync(out)) return ""
  return (fs.readdirSync(out, { recursive: true }) as Array<string>)
    .filter((p) => !p.includes(".tmp") && !path.basename(p).startsWith(".part") && !path.basename(p).startsWith("."))
    .sort()
    .join(",")
}

// ---- the run --------------------------------------------------------------------------------

export interface FuzzOptions {
  readonly cases: number
  readonly seed: number
  /** Of the cases whose damage a component read can judge, the share restarted for real. */
  readonly restartShare?: number
  /**
   * At most this many restarts (CI's time budget); once reached, cases only a restart can judge
   * (deleted files, the state metadata the engine rewrites) are drawn again.
   */
  readonly maxRestarts?: number
  readonly onCase?: (n: number, scenario: ScenarioName, target: Target, mutation: string, result: CaseResult) => void
}

export interface FuzzReport {
  readonly cases: number
  readonly byVerdict: Record<string, number>
  readonly byKind: Record<string, number>
  readonly restarts: number
  readonly findings: ReadonlyArray<string>
  readonly ms: number
}

/** Builds the scenarios, then runs `cases` seeded cases over them. */
export const fuzz = (options: FuzzOptions): Effect.Effect<FuzzReport, unknown> =>
  Effect.gen(function* () {
    const t0 = Date.now()
    const r = rng(options.seed)
    const names: ReadonlyArray<ScenarioName> = ["duckdb", "files", "sink", "receiver"]
    const work = tempRoot("run")
    try {
      const bases = new Map<ScenarioName, { base: string; live: string; targets: Array<Target> }>()
      for (const name of names) {
        const live = path.join(work, `live-${name}`)
        const base = path.join(work, `base-${name}`)
        yield* buildScenario(name, live, base)
        fs.rmSync(live, { recursive: true, force: true })
        fs.cpSync(base, live, { recursive: true })
        bases.set(name, { base, live, targets: targetsOf(name, base) })
      }
      // kinds first, uniformly, then a file of that kind: every kind gets its share of cases
      const byKindTargets = new Map<string, Array<readonly [ScenarioName, Target]>>()
      for (const [name, b] of bases) {
        for (const t of b.targets) {
          const k = t.kind === "checksum" ? `checksum of ${guardedKind(t)}` : t.kind
          byKindTargets.set(k, [...(byKindTargets.get(k) ?? []), [name, t] as const])
        }
      }
      const kinds = [...byKindTargets.keys()].sort()
      // a DuckDB restart folds and removes the changelogs the copy holds: they are put back too
      const changelogs = (bases.get("duckdb")?.targets ?? [])
        .filter((t) => t.rel.includes("state.duckdb.changelog/"))
        .map((t) => t.rel)
      const pristine = new Map<string, string>()
      const byVerdict: Record<string, number> = {}
      const byKind: Record<string, number> = {}
      const findings: Array<string> = []
      let restarts = 0
      let n = 0
      while (n < options.cases) {
        const [name, target] = r.pick(byKindTargets.get(r.pick(kinds))!)
        const { base, live } = bases.get(name)!
        const mutation = r.pick(MUTATIONS)
        const key = `${name}:${target.rel}`
        // `live` holds the pristine checkpoint between cases (copied back after a restart; after a
        // component read only the files it may have touched are put back, which is much cheaper)
        const root = live
        const needsRestart = name !== "receiver" && (mutation === "missing" || guardedKind(target) === "state metadata")
        const budget = options.maxRestarts ?? Number.POSITIVE_INFINITY
        if (needsRestart && restarts >= budget) continue
        const touched = [
          path.join(root, target.rel),
          // a future version's file comes with its own checksum file
          crcOf(path.join(root, target.rel)),
          ...(name === "duckdb"
            ? ["chk/state/state.duckdb", "chk/state/state.duckdb.wal", ...changelogs].map((f) => path.join(root, f))
            : [])
        ]
        const saved = touched.map((f) => [f, fs.existsSync(f) ? fs.readFileSync(f) : undefined] as const)
        const restore = () => {
          for (const [f, data] of saved) {
            if (data === undefined) fs.rmSync(f, { force: true })
            else {
              // a DuckDB restart removes the changelogs' folder once it folded them
              fs.mkdirSync(path.dirname(f), { recursive: true })
              fs.writeFileSync(f, data)
            }
          }
        }
        // the pristine read, in the same place (the logs hold absolute paths), before any damage
        if (!pristine.has(key) && !needsRestart) {
          pristine.set(key, yield* readThroughComponent(name, target.kind, target.rel, root))
          restore()
        }
        const description = mutate(path.join(root, target.rel), target.kind, mutation, r)
        if (description === undefined) {
          restore()
          continue
        }
        const restart =
          needsRestart || (name !== "receiver" && restarts < budget && r.next() < (options.restartShare ?? 0.05))
        let result: CaseResult
        const deleted = mutation === "missing"
        if (restart) {
          restarts++
          result = yield* restartOracle(name as "duckdb" | "files" | "sink", target, root, deleted)
        } else {
          result = yield* componentOracle(name, target, root, pristine.get(key)!, deleted)
        }
        byVerdict[result.verdict] = (byVerdict[result.verdict] ?? 0) + 1
        const kindName = target.kind === "checksum" ? `checksum of ${guardedKind(target)}` : target.kind
        byKind[kindName] = (byKind[kindName] ?? 0) + 1
        if (result.verdict === "FINDING") {
          findings.push(
            `case ${n} (seed ${options.seed}): ${name} ${target.rel} (${target.kind}) ${description}, ${result.oracle}: ${result.detail}`
          )
        }
        options.onCase?.(n, name, target, description, result)
        if (restart) {
          fs.rmSync(root, { recursive: true, force: true })
          fs.cpSync(base, root, { recursive: true })
        } else restore()
        n++
      }
      return { cases: n, byVerdict, byKind, restarts, findings, ms: Date.now() - t0 }
    } finally {
      fs.rmSync(work, { recursive: true, force: true })
    }
  })
