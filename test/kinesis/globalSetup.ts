/**
 * Vitest global setup: starts a local Kinesis (kinesalite from npm, on an in-memory store, with
 * one fix: see kinesalite.cjs) as a child process on a free port once for the run, gives its
 * endpoint to the tests (`inject("kinesisEndpoint")`), and stops it at the end.
 *
 * It starts when the run may include a Kinesis test: always when vitest has no file filters,
 * otherwise when a filter matches a test file under a `kinesis` folder. Starting it takes well
 * under a second (no JVM).
 *
 * `TRIBUTARY_KINESIS_ENDPOINT=http://host:port` uses a Kinesis that is already running instead.
 */
import { spawn } from "node:child_process"
import * as path from "node:path"
import type { TestProject } from "vitest/node"
import { ROOT, runNeeds } from "../serverSetup.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /** `http://host:port` of the local Kinesis; empty when no Kinesis test is part of the run. */
    kinesisEndpoint: string
  }
}

/** A test file that talks to Kinesis: it reads the injected endpoint, directly or through helpers. */
const usesKinesis = (text: string): boolean => text.includes("kinesisEndpoint") || text.includes("./helpers.ts")

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.TRIBUTARY_KINESIS_ENDPOINT
  if (given !== undefined && given !== "") {
    project.provide("kinesisEndpoint", given)
    return undefined
  }
  if (!runNeeds("kinesis", usesKinesis)) {
    project.provide("kinesisEndpoint", "")
    return undefined
  }
  const child = spawn(process.execPath, [path.join(ROOT, "test", "kinesis", "kinesalite.cjs")], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"]
  })
  const port = await new Promise<number>((resolve, reject) => {
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString()
      const m = /^(\d+)\n/.exec(out)
      if (m !== null) resolve(Number(m[1]))
    })
    child.once("error", reject)
    child.once("exit", (code) => reject(new Error(`test/kinesis/kinesalite.cjs exited with ${code} before listening`)))
  })
  project.provide("kinesisEndpoint", `http://127.0.0.1:${port}`)
  return () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once("exit", () => resolve())
      child.kill()
    })
}
