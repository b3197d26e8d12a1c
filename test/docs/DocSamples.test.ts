/**
 * Every TypeScript sample in README.md and docs/*.md runs: each ```ts block is written to a
 * module (with `tributary-streaming` imports pointed at this checkout) and imported, so a sample that
 * throws or rejects fails this test (`npm run typecheck` type-checks the same samples). Which
 * blocks count is decided in scripts/doc-samples.ts (a `<!-- not run: why -->` line before a
 * block leaves it out). Samples that name `"localhost:9092"` run against the test Kafka broker,
 * and samples that name `"sc://localhost:15002"` against the test Spark Connect server.
 */
import { mkdir, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { afterAll, describe, inject, it } from "vitest"
import { allSamples, sampleFileName } from "../../scripts/doc-samples.ts"

const ROOT = process.cwd()
const OUT = join(ROOT, ".docs-run", "run")

const rewrite = (code: string): string =>
  code
    .replaceAll(/from "tributary(?:-streaming)?\/testing"/g, `from ${JSON.stringify(join(ROOT, "structured", "testing.ts"))}`)
    .replaceAll(/from "tributary(?:-streaming)?\/dstream"/g, `from ${JSON.stringify(join(ROOT, "dstream", "mod.ts"))}`)
    .replaceAll(/from "tributary(?:-streaming)?"/g, `from ${JSON.stringify(join(ROOT, "mod.ts"))}`)

const all = allSamples(ROOT)

afterAll(() => rm(OUT, { recursive: true, force: true }))

describe("documentation samples", () => {
  it("finds samples in the README and the guide", () => {
    if (all.length < 20) throw new Error(`only ${all.length} runnable samples found`)
  })
  for (const s of all) {
    it(`${s.file}:${s.line}`, async () => {
      await mkdir(OUT, { recursive: true })
      const path = join(OUT, sampleFileName(s))
      let code = rewrite(s.code)
      if (code.includes('"localhost:9092"')) {
        // Kafka samples run against the test broker (started by test/kafka/globalSetup.ts).
        const bootstrap = process.env.TRIBUTARY_KAFKA_BOOTSTRAP ?? inject("kafkaBootstrap")
        if (bootstrap === undefined) {
          throw new Error("a Kafka sample needs the test broker: run vitest without a file filter, or set TRIBUTARY_KAFKA_BOOTSTRAP")
        }
        code = code.replaceAll('"localhost:9092"', JSON.stringify(bootstrap))
      }
      if (code.includes('"sc://localhost:15002"')) {
        // Spark Connect samples run against the test server (started by test/connect/globalSetup.ts).
        const remote = process.env.TRIBUTARY_SPARK_REMOTE ?? inject("sparkRemote")
        if (remote === undefined || remote === "") {
          throw new Error("a Spark Connect sample needs the test server: run vitest without a file filter, or set TRIBUTARY_SPARK_REMOTE")
        }
        code = code.replaceAll('"sc://localhost:15002"', JSON.stringify(remote))
      }
      await writeFile(path, code)
      await import(path)
    })
  }
})
