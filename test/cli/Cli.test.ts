/**
 * The `tributary` CLI as a user runs it (a child process of `bin/tributary.ts` on Node 24):
 * `checkpoint inspect`, `state read` (table and `--json`, at a chosen batch, from both
 * providers), `state metadata`, and the errors for folders that are not checkpoints.
 */
import { execFile } from "node:child_process"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { type Console, Effect, Schema } from "effect"
import { TestConsole } from "effect/testing"
import { aroundStatusLine, backlogFraction, main, makeStatusLine, offsetPosition } from "../../bin/tributary.ts"
import { MemoryStream, Session } from "../../mod.ts"

const node = join(process.cwd(), "node_modules", ".bin", "node")
const cli = join(process.cwd(), "bin", "tributary.ts")

const run = (...args: ReadonlyArray<string>) =>
  Effect.promise(
    () =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(node, [cli, ...args], (error, stdout, stderr) =>
          resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? 1), stdout, stderr })
        )
      })
  )

/** Runs the CLI in this process; its output, or its failure's message. */
const runIn = (...args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const before = (yield* TestConsole.logLines).length
    const exit = yield* Effect.exit(main(args))
    const out = (yield* TestConsole.logLines).slice(before).join("\n")
    return { ok: exit._tag === "Success", stdout: out, error: exit._tag === "Failure" ? String(exit.cause) : "" }
  }).pipe(Effect.provide(TestConsole.layer))

/** A word count over two batches in a fresh checkpoint. */
const wordCount = (provider: "duckdb" | "memory") =>
  Effect.gen(function* () {
    const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-cli-")))
    const input = yield* MemoryStream.make(Schema.Struct({ word: Schema.String }))
    const q = yield* input
      .toDF()
      .groupBy("word")
      .count()
      .writeStream.format("noop")
      .outputMode("update")
      .option("checkpointLocation", dir)
      .start()
    yield* input.addData([{ word: "a" }, { word: "b" }, { word: "a" }])
    yield* q.processAllAvailable()
    yield* input.addData([{ word: "a" }])
    yield* q.processAllAvailable()
    yield* q.stop()
    return { dir, id: q.id }
  }).pipe(Effect.provide(Session.layer({ stateStore: provider })))

describe("tributary CLI", () => {
  it.effect("checkpoint inspect: query id, batches, offsets, commits, state", () =>
    Effect.gen(function* () {
      const { dir, id } = yield* wordCount("duckdb")
      const out = yield* runIn("checkpoint", "inspect", dir)
      assert.isTrue(out.ok, out.error)
      const text = out.stdout
      assert.include(text, `Checkpoint ${dir}`)
      assert.include(text, `query id: ${id}`)
      assert.include(text, "batches: 0 to 1 in the offset log, 2 committed")
      assert.include(text, "batch 1: committed")
      assert.include(text, "source 0: 1")
      assert.include(text, "spark.sql.streaming.stateStore.providerClass=duckdb")
      assert.include(text, "state (duckdb provider):")
      assert.include(text, "operator 0 stateStoreSave, store 'default'")
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
    })
  )

  it.effect("state read: a table, JSON lines, an earlier batch; the memory provider found by itself", () =>
    Effect.gen(function* () {
      const { dir } = yield* wordCount("memory")
      const table = yield* runIn("state", "read", dir)
      assert.isTrue(table.ok, table.error)
      const lines = table.stdout.split("\n")
      assert.strictEqual(lines[1], "|key|value|partition_id|")
      assert.include(lines, "|{a}|{3}  |0           |")
      const json = yield* runIn("state", "read", dir, "--batch", "0", "--json")
      assert.isTrue(json.ok, json.error)
      const rows = json.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .sort((x, y) => (x.key.word < y.key.word ? -1 : 1))
      assert.deepStrictEqual(rows, [
        { key: { word: "a" }, value: { count: 2 }, partition_id: 0 },
        { key: { word: "b" }, value: { count: 1 }, partition_id: 0 }
      ])
      const meta = yield* runIn("state", "metadata", dir)
      assert.include(meta.stdout, "|0         |stateStoreSave|default       |1            |0         |1         |")
      const unknown = yield* runIn("state", "read", dir, "--operator", "5")
      assert.isFalse(unknown.ok)
      assert.include(unknown.error, `no stateful operator 5 in ${dir}; its stateful operators are 0 (stateStoreSave)`)
      const late = yield* runIn("state", "read", dir, "--batch", "99")
      assert.isFalse(late.ok)
      assert.include(
        late.error,
        "batch 99 has no state to read: operator 0 store 'default' keeps state for the committed batches 0 to 1"
      )
      const store = yield* runIn("state", "read", dir, "--store", "left")
      assert.isFalse(store.ok)
      assert.include(store.error, "operator 0 (stateStoreSave) has no store 'left'; its stores are 'default'")
      yield* Effect.promise(() => mkdir(join(dir, "offsets"), { recursive: true }))
      yield* Effect.promise(() => writeFile(join(dir, "offsets", "7"), "v9\n{}"))
      const corrupt = yield* runIn("checkpoint", "inspect", dir)
      assert.isFalse(corrupt.ok)
      assert.include(corrupt.error, join(dir, "offsets", "7"))
      // What can be read is still shown: the batches before the damaged file, and the state.
      assert.include(corrupt.stdout, "batch 1: committed")
      assert.include(corrupt.stdout, "operator 0 stateStoreSave, store 'default', state for batches 0 to 1")
      assert.include(corrupt.stdout, `unreadable (1):\n    ${join(dir, "offsets", "7")}: `)
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
    })
  )

  it.effect("run a pipeline module, then check modules against its checkpoint", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-cli-run-")))
      process.env.TRIBUTARY_TEST_CHECKPOINT = dir
      const counts = join("test", "cli", "fixtures", "counts.ts")
      const ran = yield* runIn("run", counts)
      assert.isTrue(ran.ok, ran.error)
      assert.match(ran.stdout, /started query/)
      assert.match(ran.stdout, /stopped after batch 0/)
      const inspected = yield* runIn("checkpoint", "inspect", dir)
      assert.include(inspected.stdout, "state (memory provider):")
      const same = yield* runIn("checkpoint", "check", dir, counts)
      assert.isTrue(same.ok, same.error)
      assert.include(same.stdout, "ok: operator 0 stateStoreSave store 'default'")
      assert.include(same.stdout, `compatible: the query in ${counts} can continue from ${dir}`)
      const changed = yield* runIn("checkpoint", "check", dir, join("test", "cli", "fixtures", "sums.ts"))
      assert.isFalse(changed.ok)
      assert.include(changed.stdout, "INCOMPATIBLE [STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE]")
      // The aggregates by the names the query gives them, not by their expressions (`count(1)`).
      assert.include(changed.stdout, "Existing value_schema=struct<k:bigint,count:bigint>")
      assert.include(changed.stdout, "new value_schema=struct<k:bigint,count:string>")
      const missing = yield* runIn("run", join("test", "cli", "fixtures", "nope.ts"))
      assert.isFalse(missing.ok)
      assert.include(missing.error, "cannot load")
      delete process.env.TRIBUTARY_TEST_CHECKPOINT
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
    })
  )

  it("run's AvailableNow progress: offsets as positions, the share of the backlog done", () => {
    assert.strictEqual(offsetPosition(7), 7)
    assert.strictEqual(offsetPosition({ events: { "0": 10, "1": 5 } }), 15)
    assert.strictEqual(offsetPosition({ logOffset: 3 }), 3)
    assert.strictEqual(offsetPosition({ offset: 10, timestamp: 1000 }), undefined)
    assert.strictEqual(offsetPosition("x"), undefined)
    const first = [{ startOffset: { t: { "0": 2, "1": 0 } } }, { startOffset: null }]
    assert.strictEqual(
      backlogFraction(first, [
        { endOffset: { t: { "0": 4, "1": 2 } }, latestOffset: { t: { "0": 10, "1": 4 } } },
        { endOffset: 1, latestOffset: 4 }
      ]),
      // (2 + 2 + 1) of (8 + 4 + 4)
      5 / 16
    )
    assert.strictEqual(backlogFraction([{ startOffset: 5 }], [{ endOffset: 5, latestOffset: 5 }]), 1)
    assert.strictEqual(backlogFraction([{ startOffset: null }], [{ endOffset: { offset: 1, timestamp: 0 }, latestOffset: 2 }]), undefined)
  })

  it.effect("as a program: a usage error prints the usage and what is wrong, exit 1", () =>
    Effect.gen(function* () {
      const out = yield* run("state", "rd")
      assert.strictEqual(out.code, 1)
      const all = out.stdout + out.stderr
      assert.include(all, 'Unknown subcommand "rd"')
      assert.notInclude(all, "Help requested")
      const missing = yield* run("state", "read")
      assert.strictEqual(missing.code, 1)
      assert.include(missing.stdout + missing.stderr, "Missing required argument: dir")
      assert.notInclude(missing.stdout + missing.stderr, "Help requested")
    })
  )

  it("run's status line: redrawn below whatever the query prints on a terminal, a line each elsewhere", () => {
    const written: Array<string> = []
    const live = makeStatusLine((t) => void written.push(t), true)
    const printed: Array<string> = []
    const base = Object.assign(Object.create(console) as Console.Console, {
      log: (...args: ReadonlyArray<unknown>) => void printed.push(`${written.length}:${args.join(" ")}`)
    })
    const routed = aroundStatusLine(live, base)
    routed.log("before any status")
    assert.deepStrictEqual(written, [])
    live.show("batch 0")
    routed.log("-------------------------------------------\nBatch: 1")
    live.end()
    // The line is cleared before the sink prints (at index 2) and drawn again after.
    assert.deepStrictEqual(written, ["\rbatch 0\u001b[K", "\r\u001b[K", "\rbatch 0\u001b[K", "\n"])
    assert.deepStrictEqual(printed, ["0:before any status", "2:-------------------------------------------\nBatch: 1"])
    const lines: Array<string> = []
    const piped = makeStatusLine((t) => void lines.push(t), false)
    piped.show("batch 0")
    aroundStatusLine(piped, base).log("x")
    piped.show("batch 1")
    piped.end()
    assert.deepStrictEqual(lines, ["batch 0\n", "batch 1\n"])
  })

  it.effect("as a program: a folder that is not a checkpoint exits 1 with one line on stderr", () =>
    Effect.gen(function* () {
      const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-cli-bad-")))
      yield* Effect.promise(() => writeFile(join(dir, "notes.txt"), "hello"))
      const out = yield* run("checkpoint", "inspect", dir)
      assert.strictEqual(out.code, 1)
      assert.strictEqual(
        out.stderr,
        `error: ${dir} is not a streaming checkpoint: it has no 'metadata' file and no 'offsets' folder (found notes.txt).\n`
      )
      yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
    })
  )
})
