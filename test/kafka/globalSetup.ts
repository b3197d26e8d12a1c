/**
 * Vitest global setup: starts the test Kafka broker (`scripts/kafka.sh start`) once for the run
 * and gives its bootstrap address to the tests (`inject("kafkaBootstrap")`), then stops it.
 *
 * The broker is started when the run may include a Kafka test: always when vitest has no file
 * filters, otherwise when a filter matches the path of a test file under a `kafka` folder (so
 * `npx vitest run test/core/Foo.test.ts` does not pay for a JVM). A broker that cannot start
 * fails the run loudly: Kafka tests are never skipped, in CI or anywhere.
 *
 * `TRIBUTARY_KAFKA_BOOTSTRAP=host:port` uses a broker that is already running instead.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** `host:port` of the test broker; empty when no Kafka test is part of the run. */
    kafkaBootstrap: string
  }
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const SCRIPT = path.join(ROOT, "scripts", "kafka.sh")

/** A test file that talks to the broker: it reads the injected address, directly or through helpers. */
const usesBroker = (file: string): boolean => {
  const text = fs.readFileSync(file, "utf8")
  return text.includes("kafkaBootstrap") || text.includes("./helpers.ts")
}

/** Test files under a `kafka` folder that use the broker, relative to the root. */
const kafkaTestFiles = (): ReadonlyArray<string> => {
  const out: Array<string> = []
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name.endsWith(".test.ts") && p.split(path.sep).includes("kafka") && usesBroker(p)) {
        out.push(path.relative(ROOT, p))
      }
    }
  }
  walk(path.join(ROOT, "test"))
  return out
}

/** Vitest's positional file filters (`vitest run a b`): arguments that are not options. */
const fileFilters = (): ReadonlyArray<string> => {
  const args = process.argv.slice(2)
  const out: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (a === "run" || a === "related" || a === "watch") continue
    if (a.startsWith("-")) {
      // An option with a separate value (`--reporter verbose`): skip the value too.
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

const needsKafka = (): boolean => {
  const filters = fileFilters()
  if (filters.length === 0) return true
  const files = kafkaTestFiles()
  return filters.some((f) => {
    const rel = path.isAbsolute(f) ? path.relative(ROOT, f) : f.replace(/^\.\//, "")
    return files.some((file) => file.includes(rel) || rel.includes(file))
  })
}

const run = (args: ReadonlyArray<string>): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile("bash", [SCRIPT, ...args], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null) reject(new Error(`scripts/kafka.sh ${args.join(" ")} failed:\n${stderr}\n${stdout}`))
      else resolve(stdout.trim().split("\n").pop() ?? "")
    })
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
  const root = process.env.TRIBUTARY_KAFKA_STATE ?? path.join(process.env.TMPDIR ?? "/tmp", "tributary-kafka")
  if (!fs.existsSync(root)) return
  for (const name of fs.readdirSync(root)) {
    const m = /^vitest-(\d+)$/.exec(name)
    if (m !== null && Number(m[1]) !== process.pid && !alive(Number(m[1]))) await run(["stop", name]).catch(() => {})
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.TRIBUTARY_KAFKA_BOOTSTRAP
  if (given !== undefined && given !== "") {
    project.provide("kafkaBootstrap", given)
    return undefined
  }
  if (!needsKafka()) {
    project.provide("kafkaBootstrap", "")
    return undefined
  }
  // One broker per vitest process, so runs side by side do not share topics or ports. Brokers
  // of vitest processes that died without their teardown are stopped first.
  await stopOrphans()
  const name = `vitest-${process.pid}`
  const started = Date.now()
  // One more try after a failed start (a port taken between the check and the bind, a JVM
  // starved on a loaded machine); a second failure fails the run.
  const bootstrap = await run(["start", name]).catch(async (e: unknown) => {
    console.error(`kafka: first start failed, trying again: ${e instanceof Error ? e.message : String(e)}`)
    await run(["stop", name]).catch(() => {})
    return run(["start", name])
  })
  if (!/^[^:]+:\d+$/.test(bootstrap)) throw new Error(`scripts/kafka.sh start printed no address: ${bootstrap}`)
  console.log(`kafka: broker ${bootstrap} started in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  project.provide("kafkaBootstrap", bootstrap)
  return async () => {
    await run(["stop", name])
  }
}
