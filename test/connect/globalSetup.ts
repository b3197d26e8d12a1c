/**
 * Vitest global setup: starts a real Spark Connect server (Spark 4.2 on local[2],
 * `scripts/spark-connect.sh start`) once for the run, with a random bearer token, and gives its
 * `sc://…;token=…` address to the tests (`inject("sparkRemote")`), then stops it.
 *
 * The server is started when the run may include a Spark Connect test: always when vitest has no
 * file filters, otherwise when a filter matches a test file under a `connect` folder that reads
 * the address. A server that cannot start fails the run loudly: these tests are never skipped.
 *
 * `TRIBUTARY_SPARK_REMOTE=sc://host:port[/;token=…]` uses a server that is already running instead.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** The test Spark Connect server's `sc://` address (with its token); empty when no such test runs. */
    sparkRemote: string
  }
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const SCRIPT = path.join(ROOT, "scripts", "spark-connect.sh")

/** Test files under a `connect` folder that use the server, relative to the root. */
const connectTestFiles = (): ReadonlyArray<string> => {
  const out: Array<string> = []
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (
        e.name.endsWith(".test.ts") &&
        p.split(path.sep).includes("connect") &&
        /sparkRemote|remoteAddress/.test(fs.readFileSync(p, "utf8"))
      ) {
        out.push(path.relative(ROOT, p))
      }
    }
  }
  walk(path.join(ROOT, "test"))
  return out
}

/** Vitest's positional file filters (arguments that are not options). */
const fileFilters = (): ReadonlyArray<string> => {
  const args = process.argv.slice(2)
  const out: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (a === "run" || a === "related" || a === "watch") continue
    if (a.startsWith("-")) {
      if (
        !a.includes("=") &&
        i + 1 < args.length &&
        !args[i + 1].startsWith("-") &&
        !args[i + 1].includes(".ts") &&
        !args[i + 1].includes("/")
      )
        i++
      continue
    }
    out.push(a)
  }
  return out
}

const needsSpark = (): boolean => {
  const filters = fileFilters()
  if (filters.length === 0) return true
  const files = connectTestFiles()
  return filters.some((f) => {
    const rel = path.isAbsolute(f) ? path.relative(ROOT, f) : f.replace(/^\.\//, "")
    return files.some((file) => file.includes(rel) || rel.includes(file))
  })
}

const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile(
      "bash",
      [SCRIPT, ...args],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`scripts/spark-connect.sh ${args.join(" ")} failed:\n${stderr}\n${stdout}`))
        else resolve(stdout.trim().split("\n").pop() ?? "")
      }
    )
  })

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const stopOrphans = async (): Promise<void> => {
  const root = process.env.TRIBUTARY_SPARK_STATE ?? path.join(process.env.TMPDIR ?? "/tmp", "tributary-spark")
  if (!fs.existsSync(root)) return
  for (const name of fs.readdirSync(root)) {
    const m = /^vitest-(\d+)$/.exec(name)
    if (m !== null && Number(m[1]) !== process.pid && !alive(Number(m[1]))) await run(["stop", name]).catch(() => {})
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.TRIBUTARY_SPARK_REMOTE
  if (given !== undefined && given !== "") {
    project.provide("sparkRemote", given)
    return undefined
  }
  if (!needsSpark()) {
    project.provide("sparkRemote", "")
    return undefined
  }
  await stopOrphans()
  const name = `vitest-${process.pid}`
  const token = crypto.randomUUID().replaceAll("-", "")
  const started = Date.now()
  const address = await run(["start", name], { TRIBUTARY_SPARK_TOKEN: token }).catch(async (e: unknown) => {
    console.error(`spark-connect: first start failed, trying again: ${e instanceof Error ? e.message : String(e)}`)
    await run(["stop", name]).catch(() => {})
    return run(["start", name], { TRIBUTARY_SPARK_TOKEN: token })
  })
  if (!address.startsWith("sc://")) throw new Error(`scripts/spark-connect.sh start printed no address: ${address}`)
  console.log(`spark-connect: Spark Connect server started in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  project.provide("sparkRemote", address)
  return async () => {
    await run(["stop", name])
  }
}
