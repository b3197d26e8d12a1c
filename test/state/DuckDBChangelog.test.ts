/**
 * The DuckDB provider's changelog commit (`state/DuckDBChangelog.ts`): a commit writes one
 * changelog file and DuckDB receives the changes afterwards, off the commit path. Checked here:
 * closing folds everything and leaves only `state.duckdb`; a start after a kill folds the
 * changelogs no fold reached (and removes those a kill left behind after their fold); a damaged,
 * foreign or missing changelog fails the open naming the file; keys and values of any text
 * (quotes, backslashes, newlines, SQL, any Unicode) come back exactly through DuckDB's JSON parse.
 */
import * as fsSync from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { DuckDBInstance } from "@duckdb/node-api"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { encodeChangelog, parseChangelog } from "../../state/DuckDBChangelog.ts"
import * as DuckDBStateStoreProvider from "../../state/DuckDBStateStoreProvider.ts"
import { NodeCheckpointFileSystem } from "../../state/NodeCheckpointFileSystem.ts"
import { JsonValueCodec } from "../../state/StateCodec.ts"
import { tempCheckpoint, wordSchema } from "./StateStoreContract.ts"

const spec = (checkpoint: string, version: number) => ({
  checkpoint,
  operatorId: 0,
  storeName: "default",
  schema: wordSchema,
  version,
  minBatchesToRetain: 100
})
const readSpec = (checkpoint: string, version: number) => ({ checkpoint, operatorId: 0, storeName: "default", version })

const changelogDir = (cp: string) => path.join(cp, "state", "state.duckdb.changelog", "0", "default")

const versionsIn = (cp: string) =>
  Effect.promise(async () => {
    const db = await DuckDBInstance.create(path.join(cp, "state", "state.duckdb"))
    const c = await db.connect()
    try {
      const rows = (await c.runAndReadAll("SELECT version FROM tributary_state_versions ORDER BY version")).getRowsJS()
      return rows.map((r) => Number(r[0]))
    } finally {
      c.closeSync()
      db.closeSync()
    }
  })

/** Commits versions 0..n-1 of the word-count store (`w<i>` → i) and closes the provider. */
const commitVersions = (cp: string, n: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0 })
      for (let v = -1; v < n - 1; v++) {
        const s = yield* p.open(spec(cp, v))
        s.put(`w${v + 1}`, v + 1)
        yield* s.commit()
      }
    })
  )

/** Writes the changelog of `version` by hand, as a commit killed before its fold leaves it. */
const writeChangelog = (cp: string, version: number, changes: ReadonlyArray<readonly [string, unknown]>, numRows: number) =>
  Effect.gen(function* () {
    const encoded = changes.map(([k, v]) => [k, v === null ? null : JsonValueCodec.encode(v)!] as const)
    const numChars = encoded.reduce((n, [k, v]) => n + k.length + (v?.length ?? 0), 0)
    const { text } = encodeChangelog({ version, numRows, numChars, numChanges: changes.length }, encoded)
    const file = path.join(changelogDir(cp), `${version}.changelog`)
    yield* NodeCheckpointFileSystem.writeAtomic(file, text, true)
    return file
  })

describe("DuckDB changelog commits", () => {
  it("a changelog's text parses back to its header and lines; a torn or foreign one is named why", () => {
    const { text, lines } = encodeChangelog({ version: 3, numRows: 2, numChars: 9, numChanges: 2 }, [
      ["a", "1"],
      ["b", null]
    ])
    const parsed = parseChangelog(text)
    assert.deepStrictEqual(parsed, { header: { version: 3, numRows: 2, numChars: 9, numChanges: 2 }, lines })
    assert.deepStrictEqual(JSON.parse(lines[0]!), [
      ["a", "1"],
      ["b", null]
    ])
    assert.match(parseChangelog(text.slice(0, -1)) as string, /truncated/)
    assert.match(parseChangelog("hello\n") as string, /header/)
    assert.match(parseChangelog(text.replace("changelog 1", "changelog 9")) as string, /format 9/)
  })

  it.effect("closing folds every version into DuckDB and leaves only state.duckdb", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      yield* commitVersions(cp, 5)
      assert.deepStrictEqual(yield* versionsIn(cp), [0, 1, 2, 3, 4])
      assert.deepStrictEqual(yield* Effect.promise(() => fs.readdir(path.join(cp, "state"))), ["state.duckdb"])
    })
  )

  it.effect("settle (a query stopping) leaves no fold running; reopening resumes folding, closing folds the rest", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      yield* Effect.scoped(
        Effect.gen(function* () {
          const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0 })
          for (let v = -1; v < 5; v++) {
            const s = yield* p.open(spec(cp, v))
            s.put(`w${v + 1}`, v + 1)
            yield* s.commit()
          }
          yield* p.settle(cp)
          // What is not folded yet stays as changelogs: they are commits, and a read folds them.
          const rows = yield* p.read(readSpec(cp, 5))
          assert.strictEqual(rows.length, 6)
          const s = yield* p.open(spec(cp, 5))
          s.put("w6", 6)
          yield* s.commit()
        })
      )
      assert.deepStrictEqual(yield* versionsIn(cp), [0, 1, 2, 3, 4, 5, 6])
    })
  )

  it.effect("folding keeps up with commits: at most 32 versions wait for their fold", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      let most = 0
      yield* Effect.scoped(
        Effect.gen(function* () {
          const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0 })
          for (let v = -1; v < 99; v++) {
            const s = yield* p.open(spec(cp, v))
            for (let i = 0; i < 200; i++) s.put(`w${i}`, v + 1)
            yield* s.commit()
            const dir = changelogDir(cp)
            const files = fsSync.existsSync(dir) ? fsSync.readdirSync(dir).filter((n) => /^\d+\.changelog$/.test(n)) : []
            most = Math.max(most, files.length)
          }
        })
      )
      // 32 waiting, plus at most one transaction's worth (16) folded but not yet removed.
      assert.isAtMost(most, 48)
      assert.deepStrictEqual((yield* versionsIn(cp)).length, 100)
    })
  )

  it.effect("a start folds the changelogs a kill left unfolded, and removes those already folded", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      yield* commitVersions(cp, 3)
      // Version 2 folded, its file still there (a kill between the fold and the removal);
      // versions 3 and 4 committed, never folded.
      yield* writeChangelog(cp, 2, [["w2", 2]], 3)
      yield* writeChangelog(cp, 3, [["w3", 3], ["w0", null]], 3)
      yield* writeChangelog(cp, 4, [["w1", 10]], 3)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0 })
          assert.strictEqual(yield* p.latestVersion(readSpec(cp, 0)), 4)
          const rows = yield* p.read(readSpec(cp, 4))
          assert.deepStrictEqual(
            [...rows].sort((a, b) => a[0].localeCompare(b[0])),
            [
              ["w1", 10],
              ["w2", 2],
              ["w3", 3]
            ]
          )
          assert.deepStrictEqual(
            [...(yield* p.read(readSpec(cp, 3)))].sort((a, b) => a[0].localeCompare(b[0])),
            [
              ["w1", 1],
              ["w2", 2],
              ["w3", 3]
            ]
          )
          // The next version commits on top of the folded ones.
          const s = yield* p.open(spec(cp, 4))
          assert.strictEqual(s.get("w1"), 10)
          s.put("w1", 11)
          yield* s.commit()
        })
      )
      assert.deepStrictEqual(yield* versionsIn(cp), [0, 1, 2, 3, 4, 5])
      assert.isFalse(fsSync.existsSync(changelogDir(cp)))
    })
  )

  it.effect("a damaged changelog fails the start with a Corrupt error naming it; so does a missing one", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      yield* commitVersions(cp, 2)
      const file = yield* writeChangelog(cp, 2, [["w2", 2]], 3)
      const bytes = fsSync.readFileSync(file)
      bytes[bytes.length - 5] ^= 0x20
      fsSync.writeFileSync(file, bytes)
      const opened = (version: number) =>
        Effect.scoped(
          Effect.gen(function* () {
            const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0 })
            return yield* Effect.flip(p.open(spec(cp, version)))
          })
        )
      const damaged = yield* opened(2)
      assert.strictEqual(damaged.reason, "Corrupt")
      assert.strictEqual(damaged.path, file)
      assert.include(damaged.message, file)
      // Version 2's changelog gone, version 3's there: the gap is named.
      fsSync.rmSync(file)
      fsSync.rmSync(path.join(path.dirname(file), `.${path.basename(file)}.crc`))
      yield* writeChangelog(cp, 3, [["w3", 3]], 4)
      const missing = yield* opened(3)
      assert.strictEqual(missing.reason, "Corrupt")
      assert.include(missing.message, path.join(changelogDir(cp), "2.changelog"))
      assert.include(missing.message, "is missing")
    })
  )

  it.effect("a lone surrogate in a key is stored as U+FFFD, as DuckDB's UTF-8 VARCHAR always stored it, and the fold goes on", () =>
    Effect.gen(function* () {
      const cp = yield* tempCheckpoint()
      yield* Effect.scoped(
        Effect.gen(function* () {
          const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0 })
          const s = yield* p.open(spec(cp, -1))
          s.put("a\ud800b", "x\udc00")
          s.put("plain \\ud800 text", 1)
          yield* s.commit()
        })
      )
      const back = yield* Effect.scoped(
        Effect.gen(function* () {
          const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0, cacheMaxBytes: 0 })
          return yield* p.read(readSpec(cp, 0))
        })
      )
      assert.deepStrictEqual(
        [...back].sort((a, b) => (a[0] < b[0] ? -1 : 1)),
        [
          // A value is JSON text, where the surrogate is an escape: it comes back exactly.
          ["a\ufffdb", "x\udc00"],
          ["plain \\ud800 text", 1]
        ]
      )
    })
  )

  it.effect("keys and values of any text come back exactly through DuckDB's parse of the changelog", () =>
    Effect.gen(function* () {
      const text = fc.oneof(
        fc.string({ unit: "binary", maxLength: 40 }),
        fc.constantFrom(`'; DROP TABLE tributary_state_versions; --`, `"\\"\n\t\u0000`, `\\u0041`, "😀𝄞", "")
      )
      const samples = fc.sample(fc.uniqueArray(fc.tuple(text, text), { selector: (e) => e[0], minLength: 1, maxLength: 60 }), {
        numRuns: 8,
        seed: 7
      })
      for (const entries of samples) {
        const cp = yield* tempCheckpoint()
        yield* Effect.scoped(
          Effect.gen(function* () {
            const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0, cacheMaxBytes: 0 })
            const s = yield* p.open(spec(cp, -1))
            for (const [k, v] of entries) s.put(k, v)
            yield* s.commit()
          })
        )
        // Read back from DuckDB alone (no cache), after the close folded the changelog.
        const back = yield* Effect.scoped(
          Effect.gen(function* () {
            const p = yield* DuckDBStateStoreProvider.make({ maintenanceEveryCommits: 0, cacheMaxBytes: 0 })
            return yield* p.read(readSpec(cp, 0))
          })
        )
        const sort = (xs: ReadonlyArray<readonly [string, unknown]>) =>
          [...xs].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
        assert.deepStrictEqual(sort(back), sort(entries))
      }
    })
  )
})
