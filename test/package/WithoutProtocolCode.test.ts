/**
 * The local engine needs no JVM: a copy of this checkout without `connect/gen/` (what `npm ci`
 * leaves on a machine without Java and Maven, since nothing generates it at install) runs the
 * demo (`npm start`), a batch and a streaming query under Node and Deno, and a remote session
 * there fails with a typed `ConnectorError` naming the command that generates the code.
 *
 * The copy shares this checkout's `node_modules` through a symbolic link.
 */
import { execFile } from "node:child_process"
import { cp, mkdtemp, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const ROOT = process.cwd()
const NODE = join(ROOT, "node_modules", ".bin", "node")
const DENO = join(ROOT, "node_modules", ".bin", "deno")

/** What the library and its demo are made of (tests, docs and tools are not needed). */
const LIBRARY = ["mod.ts", "package.json", "deno.json", "core", "state", "connectors", "structured", "dstream", "connect", "examples"]

const run = (file: string, args: ReadonlyArray<string>, cwd: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, [...args], { cwd, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  })

const PROGRAM = `import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "./mod.ts"

const local = Effect.gen(function* () {
  const spark = yield* Session
  const df = spark.createDataFrame([{ k: "a", v: 1 }, { k: "a", v: 2 }], Schema.Struct({ k: Schema.String, v: Schema.Int }))
  const batch = yield* df.groupBy("k").agg(F.sum("v").as("total")).collect()
  const input = yield* MemoryStream.make(Schema.Struct({ n: Schema.Int }))
  const query = yield* input.toDF().select(F.col("n").multiply(2).as("twice")).writeStream.format("memory").queryName("twice").start()
  yield* input.addData([{ n: 1 }, { n: 2 }])
  yield* query.processAllAvailable()
  const streamed = yield* spark.table("twice").collect()
  yield* query.stop()
  return { batch, streamed }
})
const remote = Effect.gen(function* () {
  const spark = yield* Session
  return yield* spark.createDataFrame([{ a: 1 }], Schema.Struct({ a: Schema.Int })).count()
}).pipe(Effect.flip, Effect.provide(Session.layer({ remote: "sc://127.0.0.1:1" })))

const out = await Effect.runPromise(local.pipe(Effect.provide(Session.layer())))
const e = await Effect.runPromise(remote)
console.log("RESULT " + JSON.stringify({ ...out, remote: { tag: e._tag, message: e.message } }))
`

describe("the local engine without the generated Spark Connect code", () => {
  let copy = ""

  beforeAll(async () => {
    copy = await mkdtemp(join(tmpdir(), "tributary-nogen-"))
    for (const entry of LIBRARY) {
      await cp(join(ROOT, entry), join(copy, entry), {
        recursive: true,
        filter: (src) => !src.includes(join("connect", "gen"))
      })
    }
    await symlink(join(ROOT, "node_modules"), join(copy, "node_modules"), "dir")
    await writeFile(join(copy, "program.ts"), PROGRAM)
  })

  afterAll(async () => {
    if (copy !== "") await rm(copy, { recursive: true, force: true })
  })

  const check = (stdout: string) => {
    const line = stdout.split("\n").find((l) => l.startsWith("RESULT "))
    expect(line, stdout).toBeDefined()
    const result = JSON.parse(line!.slice("RESULT ".length))
    expect(result.batch).toEqual([{ k: "a", total: 3 }])
    expect(result.streamed).toEqual([{ twice: 2 }, { twice: 4 }])
    expect(result.remote.tag).toBe("ConnectorError")
    expect(result.remote.message).toContain("npm run spark-connect -- proto")
    expect(result.remote.message).toContain("connect/gen/")
  }

  it("runs a batch and a streaming query under Node; a remote session names the command to generate the code", async () => {
    const r = await run(NODE, ["program.ts"], copy)
    expect(r.code, r.stderr).toBe(0)
    check(r.stdout)
  })

  it("does the same under Deno", async () => {
    const r = await run(DENO, ["run", "--allow-all", "program.ts"], copy)
    expect(r.code, r.stderr).toBe(0)
    check(r.stdout)
  })

  it("npm start's demo runs", async () => {
    const r = await run(NODE, [join("examples", "demo.ts")], copy)
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain("Batch: 0")
    expect(r.stdout).toContain("Last progress:")
  }, 60_000)
})
