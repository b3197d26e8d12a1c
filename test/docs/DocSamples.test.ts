/**
 * Every TypeScript sample in README.md and docs/*.md runs: each ```ts block is written to a
 * module (with `tributary` imports pointed at this checkout) and imported, so a sample that
 * does not compile, throws or rejects fails this test. A block right after a
 * `<!-- not run: why -->` line is skipped (fragments, and files that are vitest suites), and the
 * generated docs/api.md is left out. Samples that name `"localhost:9092"` run against the test
 * Kafka broker.
 */
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { afterAll, describe, inject, it } from "vitest"

const ROOT = process.cwd()
const OUT = join(ROOT, ".docs-run")

interface Sample {
  readonly file: string
  readonly line: number
  readonly code: string
}

/** The runnable ```ts blocks of a markdown file. */
const samples = (file: string, text: string): ReadonlyArray<Sample> => {
  const lines = text.split("\n")
  const out: Array<Sample> = []
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== "```ts") continue
    let j = i + 1
    while (j < lines.length && lines[j].trim() !== "```") j++
    let k = i - 1
    while (k >= 0 && lines[k].trim() === "") k--
    const skipped = k >= 0 && lines[k].trim().startsWith("<!-- not run")
    if (!skipped) out.push({ file, line: i + 1, code: lines.slice(i + 1, j).join("\n") })
    i = j
  }
  return out
}

const rewrite = (code: string): string =>
  code
    .replaceAll('from "tributary/testing"', `from ${JSON.stringify(join(ROOT, "structured", "testing.ts"))}`)
    .replaceAll('from "tributary/dstream"', `from ${JSON.stringify(join(ROOT, "dstream", "mod.ts"))}`)
    .replaceAll('from "tributary"', `from ${JSON.stringify(join(ROOT, "mod.ts"))}`)

const docFiles = async (): Promise<ReadonlyArray<string>> => {
  const docs = (await readdir(join(ROOT, "docs")).catch(() => [] as Array<string>))
    // api.md is generated: its blocks are signatures, not programs.
    .filter((f) => f.endsWith(".md") && f !== "api.md")
    .map((f) => join("docs", f))
  return ["README.md", ...docs.sort()]
}

const all: Array<Sample> = []
for (const file of await docFiles()) all.push(...samples(file, await readFile(join(ROOT, file), "utf8")))

afterAll(() => rm(OUT, { recursive: true, force: true }))

describe("documentation samples", () => {
  it("finds samples in the README and the guide", () => {
    if (all.length < 10) throw new Error(`only ${all.length} runnable samples found`)
  })
  for (const s of all) {
    it(`${s.file}:${s.line}`, async () => {
      await mkdir(OUT, { recursive: true })
      const path = join(OUT, `${s.file.replaceAll("/", "_").replace(/\.md$/, "")}-${s.line}.ts`)
      let code = rewrite(s.code)
      if (code.includes('"localhost:9092"')) {
        // Kafka samples run against the test broker (started by test/kafka/globalSetup.ts).
        const bootstrap = process.env.TRIBUTARY_KAFKA_BOOTSTRAP ?? inject("kafkaBootstrap")
        if (bootstrap === undefined) {
          throw new Error("a Kafka sample needs the test broker: run vitest without a file filter, or set TRIBUTARY_KAFKA_BOOTSTRAP")
        }
        code = code.replaceAll('"localhost:9092"', JSON.stringify(bootstrap))
      }
      await writeFile(path, code)
      await import(path)
    })
  }
})
