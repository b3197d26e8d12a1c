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
import * as path from "node:path"
import type { TestProject } from "vitest/node"
import { ROOT, runNeeds, runScript, stopOrphans } from "../serverSetup.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /** `host:port` of the test broker; empty when no Kafka test is part of the run. */
    kafkaBootstrap: string
  }
}

const SCRIPT = path.join(ROOT, "scripts", "kafka.sh")

/** A test file that talks to the broker: it reads the injected address, directly or through helpers. */
const usesBroker = (text: string): boolean => text.includes("kafkaBootstrap") || text.includes("./helpers.ts")

const run = (args: ReadonlyArray<string>): Promise<string> => runScript(SCRIPT, args)

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.TRIBUTARY_KAFKA_BOOTSTRAP
  if (given !== undefined && given !== "") {
    project.provide("kafkaBootstrap", given)
    return undefined
  }
  if (!runNeeds("kafka", usesBroker)) {
    project.provide("kafkaBootstrap", "")
    return undefined
  }
  // One broker per vitest process, so runs side by side do not share topics or ports. Brokers
  // of vitest processes that died without their teardown are stopped first.
  await stopOrphans(SCRIPT, process.env.TRIBUTARY_KAFKA_STATE ?? path.join(process.env.TMPDIR ?? "/tmp", "tributary-kafka"))
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
