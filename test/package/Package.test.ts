/**
 * The published package as a user gets it: `npm pack` of this checkout (its `prepack` builds
 * `dist/`), installed into a new project in a temporary folder, and used there as a user would:
 *
 * - the tarball holds what the exports, types and bin need and nothing else (no sources, no
 *   source maps, no install scripts; LICENSE and README);
 * - a batch and a streaming query run under Node 24 and under Deno (`deno run` on the project's
 *   `node_modules`), the three entry points load, and a remote session finds its Spark Connect
 *   backend in the package (it fails with a typed error against an address nobody serves);
 * - `npx tributary-streaming --help` prints the CLI's help, and on a Node older than 22.19 the
 *   command prints one line naming the version it needs;
 * - a consumer file type-checks against the package's declarations (no `skipLibCheck`), and a
 *   misspelled column in it is a compile error (checked both ways: with `@ts-expect-error` it
 *   compiles, without it tsc reports the column).
 *
 * Installing needs the npm registry (or npm's cache: the package's dependencies are the
 * checkout's own, so they are usually cached).
 */
import { execFile } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const ROOT = process.cwd()
const NODE = join(ROOT, "node_modules", ".bin", "node")
const DENO = join(ROOT, "node_modules", ".bin", "deno")
const NAME = "tributary-streaming"
const devDependencies = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).devDependencies as Record<string, string>

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs a command; never rejects (the result carries the exit code). */
const run = (file: string, args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv = {}, timeout = 300_000) =>
  new Promise<Run>((resolve) => {
    execFile(
      file,
      [...args],
      { cwd, env: { ...process.env, ...env }, timeout, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    )
  })

const ok = (r: Run, what: string): Run => {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.stderr}\n${r.stdout}`)
  return r
}

/** Node 24 first on the PATH, as npm scripts have it (npx and the bin's `#!/usr/bin/env node`). */
const PATH24 = { PATH: `${dirname(NODE)}:${process.env.PATH ?? ""}` }

const CONSUMER = `import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "${NAME}"
import { StreamingContext } from "${NAME}/dstream"
import { testStream } from "${NAME}/testing"

const local = Effect.gen(function* () {
  const spark = yield* Session
  const sales = spark.createDataFrame(
    [{ shop: "a", amount: 3 }, { shop: "b", amount: 5 }, { shop: "a", amount: 4 }],
    Schema.Struct({ shop: Schema.String, amount: Schema.Int })
  )
  const batch = yield* sales.groupBy("shop").agg(F.sum("amount").as("total")).orderBy("shop").collect()
  const input = yield* MemoryStream.make(Schema.Struct({ word: Schema.String }))
  const query = yield* input.toDF().groupBy("word").count()
    .writeStream.format("memory").queryName("counts").outputMode("complete").start()
  yield* input.addData([{ word: "x" }, { word: "y" }, { word: "x" }])
  yield* query.processAllAvailable()
  const streamed = yield* spark.table("counts").orderBy("word").collect()
  yield* query.stop()
  return { batch, streamed, entryPoints: [typeof StreamingContext.make, typeof testStream] }
})

// Nothing listens on port 1: the backend loads from the package and reports a typed error.
const remote = Effect.gen(function* () {
  const spark = yield* Session
  return yield* spark.createDataFrame([{ a: 1 }], Schema.Struct({ a: Schema.Int })).count()
}).pipe(
  Effect.flip,
  Effect.map((e) => ({ tag: e._tag, retryable: "retryable" in e ? e.retryable : undefined })),
  Effect.provide(Session.layer({ remote: "sc://127.0.0.1:1" }))
)

const out = await Effect.runPromise(local.pipe(Effect.provide(Session.layer())))
console.log("RESULT " + JSON.stringify({ ...out, remote: await Effect.runPromise(remote) }))
`

const TYPED = (expectError: boolean) => `import { Effect, Schema } from "effect"
import { F, Session } from "${NAME}"

export const program = Effect.gen(function* () {
  const spark = yield* Session
  const people = spark.createDataFrame([{ name: "ada", age: 36 }], Schema.Struct({ name: Schema.String, age: Schema.Int }))
  const adults = people.where(F.col("age").geq(18)).select("name")
  ${expectError ? '// @ts-expect-error "nmae" is not a column of the rows' : ""}
  people.select("nmae")
  return yield* adults.collect()
})
`

const EXPECTED = {
  batch: [
    { shop: "a", total: 7 },
    { shop: "b", total: 5 }
  ],
  streamed: [
    { word: "x", count: 2 },
    { word: "y", count: 1 }
  ],
  entryPoints: ["function", "function"],
  remote: { tag: "ConnectorError", retryable: true }
}

const resultOf = (r: Run): unknown => {
  const line = r.stdout.split("\n").find((l) => l.startsWith("RESULT "))
  if (line === undefined) throw new Error(`no RESULT line:\n${r.stdout}\n${r.stderr}`)
  return JSON.parse(line.slice("RESULT ".length))
}

describe("the packed package in a new project", () => {
  let work = ""
  let consumer = ""
  let files: ReadonlyArray<string> = []
  let manifest: Record<string, any> = {}

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "tributary-package-"))
    consumer = join(work, "consumer")
    await mkdir(consumer)
    // `npm pack` runs `prepack` (npm run build: connect/gen/ and tsc into dist/).
    const packed = ok(await run("npm", ["pack", "--json", "--pack-destination", work], ROOT, PATH24), "npm pack")
    const info = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as ReadonlyArray<{
      readonly filename: string
      readonly files: ReadonlyArray<{ readonly path: string }>
    }>
    files = info[0].files.map((f) => f.path)
    const tarball = join(work, info[0].filename)
    await writeFile(join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
    ok(
      await run(
        "npm",
        [
          "install",
          "--prefer-offline",
          "--no-audit",
          "--no-fund",
          tarball,
          `typescript@${devDependencies.typescript}`,
          `@types/node@${devDependencies["@types/node"]}`
        ],
        consumer,
        PATH24
      ),
      "npm install of the tarball"
    )
    manifest = JSON.parse(await readFile(join(consumer, "node_modules", NAME, "package.json"), "utf8"))
    await writeFile(join(consumer, "consumer.ts"), CONSUMER)
  }, 600_000)

  afterAll(async () => {
    if (work !== "") await rm(work, { recursive: true, force: true })
  })

  it("holds the built library, LICENSE and README, and nothing else", () => {
    expect(files).toContain("LICENSE")
    expect(files).toContain("README.md")
    expect(files).toContain("package.json")
    for (const entry of ["dist/mod.js", "dist/mod.d.ts", "dist/dstream/mod.js", "dist/structured/testing.d.ts", "dist/bin/launch.js"]) {
      expect(files).toContain(entry)
    }
    expect(files).toContain("dist/connect/gen/spark/connect/base_pb.js")
    const stray = files.filter(
      (f) => !["LICENSE", "README.md", "package.json"].includes(f) && !(f.startsWith("dist/") && (f.endsWith(".js") || f.endsWith(".d.ts")))
    )
    expect(stray).toEqual([])
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([])
    expect(files.filter((f) => f.startsWith("dist/bin/") && f.endsWith(".d.ts"))).toEqual([])
  })

  it("has its own name, the exports and bin, and no install scripts", () => {
    expect(manifest.name).toBe(NAME)
    expect(manifest.license).toBe("Apache-2.0")
    expect(Object.keys(manifest.exports)).toEqual([".", "./dstream", "./testing"])
    expect(manifest.bin).toEqual({ [NAME]: "./dist/bin/launch.js" })
    for (const script of ["preinstall", "install", "postinstall", "prepare"]) expect(manifest.scripts?.[script]).toBeUndefined()
    // Every path the manifest points at is in the installed package.
    const installed = join(consumer, "node_modules", NAME)
    for (const target of Object.values(manifest.exports as Record<string, Record<string, string>>).flatMap((e) => Object.values(e))) {
      expect(existsSync(join(installed, target)), target).toBe(true)
    }
  })

  it("runs a batch and a streaming query under Node 24", async () => {
    const r = ok(await run(NODE, ["consumer.ts"], consumer), "node consumer.ts")
    expect(resultOf(r)).toEqual(EXPECTED)
  }, 120_000)

  it("runs the same program under Deno on the project's node_modules", async () => {
    const r = ok(await run(DENO, ["run", "--node-modules-dir=manual", "--allow-all", "consumer.ts"], consumer), "deno run consumer.ts")
    expect(resultOf(r)).toEqual(EXPECTED)
  }, 120_000)

  it("npx tributary-streaming --help prints the CLI's help", async () => {
    const r = ok(await run("npx", ["--no-install", NAME, "--help"], consumer, PATH24), "npx --help")
    expect(r.stdout).toContain(`${NAME} <subcommand>`)
    expect(r.stdout).toContain("checkpoint")
    expect(r.stdout).toContain("state")
  }, 120_000)

  it("on a Node older than 22.19 the command prints one line naming the version it needs", async () => {
    const bin = join(consumer, "node_modules", ".bin", NAME)
    // Node 24 made to report an older version before the command loads.
    const pretend = 'data:text/javascript,Object.defineProperty(process.versions,"node",{value:"20.20.2"})'
    const r = await run(NODE, ["--import", pretend, bin, "--help"], consumer)
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr.trim()).toBe(`${NAME} needs Node.js 22.19 or later; this is Node.js 20.20.2.`)
    // And a real older Node, when the machine has one (its own Node is 20 here).
    const system = await run("/usr/bin/env", ["node", "--version"], consumer, { PATH: (process.env.PATH ?? "").split(":").filter((p) => !p.includes("node_modules")).join(":") })
    const m = /^v(\d+)\.(\d+)/.exec(system.stdout.trim())
    if (system.code === 0 && m !== null && (Number(m[1]) < 22 || (Number(m[1]) === 22 && Number(m[2]) < 19))) {
      const old = await run("/usr/bin/env", ["node", bin, "--help"], consumer, {
        PATH: (process.env.PATH ?? "").split(":").filter((p) => !p.includes("node_modules")).join(":")
      })
      expect(old.code).toBe(1)
      expect(old.stderr.trim()).toBe(`${NAME} needs Node.js 22.19 or later; this is Node.js ${system.stdout.trim().slice(1)}.`)
    }
  }, 120_000)

  it("type-checks a consumer file, where a misspelled column is a compile error", async () => {
    const tsconfig = (file: string) =>
      JSON.stringify({
        compilerOptions: {
          target: "ES2023",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          types: ["node"],
          skipLibCheck: false
        },
        files: [file]
      })
    await writeFile(join(consumer, "typed.ts"), TYPED(true))
    await writeFile(join(consumer, "misspelled.ts"), TYPED(false))
    await writeFile(join(consumer, "tsconfig.typed.json"), tsconfig("typed.ts"))
    await writeFile(join(consumer, "tsconfig.misspelled.json"), tsconfig("misspelled.ts"))
    const tsc = join(consumer, "node_modules", ".bin", "tsc")
    ok(await run(NODE, [tsc, "-p", "tsconfig.typed.json"], consumer), "tsc on the consumer file")
    const bad = await run(NODE, [tsc, "-p", "tsconfig.misspelled.json"], consumer)
    expect(bad.code).not.toBe(0)
    expect(bad.stdout).toMatch(/misspelled\.ts\(\d+,\d+\): error TS2345: Argument of type '"nmae"'/)
  }, 240_000)
})
