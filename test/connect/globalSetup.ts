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
import * as path from "node:path"
import type { TestProject } from "vitest/node"
import { ROOT, runNeeds, runScript, stopOrphans } from "../serverSetup.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /** The test Spark Connect server's `sc://` address (with its token); empty when no such test runs. */
    sparkRemote: string
  }
}

const SCRIPT = path.join(ROOT, "scripts", "spark-connect.sh")

/** A test file that talks to the server: it reads the injected address. */
const usesServer = (text: string): boolean => /sparkRemote|remoteAddress/.test(text)

const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<string> =>
  runScript(SCRIPT, args, env)

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  // Every test under test/connect imports the generated protocol code (connect/gen/): generate it
  // when it is missing or stale (a no-op otherwise; `npm ci` does not, so the local engine needs
  // no JVM), before vitest loads the test files.
  if (runNeeds("connect", () => true)) await run(["proto"])
  const given = process.env.TRIBUTARY_SPARK_REMOTE
  if (given !== undefined && given !== "") {
    project.provide("sparkRemote", given)
    return undefined
  }
  if (!runNeeds("connect", usesServer)) {
    project.provide("sparkRemote", "")
    return undefined
  }
  await stopOrphans(SCRIPT, process.env.TRIBUTARY_SPARK_STATE ?? path.join(process.env.TMPDIR ?? "/tmp", "tributary-spark"))
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
