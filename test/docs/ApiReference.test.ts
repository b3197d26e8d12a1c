/**
 * docs/api.md is complete and current: `scripts/api-docs.ts --check` regenerates it and compares
 * (so a changed signature or doc comment without `npm run docs:api` fails here), and every value
 * each entry point exports at run time has its section, with `F`'s functions and `DataFrame`'s
 * methods listed one per line.
 */
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import * as Dstream from "../../dstream/mod.ts"
import * as Root from "../../mod.ts"
import * as Testing from "../../structured/testing.ts"

const node = join(process.cwd(), "node_modules", ".bin", "node")
const api = readFileSync(join(process.cwd(), "docs", "api.md"), "utf8")

const section = (entry: string): string => {
  const start = api.indexOf(`## \`${entry}\``)
  const next = api.indexOf("\n## `", start + 1)
  return api.slice(start, next === -1 ? undefined : next)
}

describe("docs/api.md", () => {
  it("is what scripts/api-docs.ts generates from the sources today", async () => {
    const result = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile(node, [join("scripts", "api-docs.ts"), "--check"], (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : 1, out: stdout + stderr })
      )
    )
    expect(result.out).toMatch(/docs\/api\.md is current: \d+ exports/)
    expect(result.code).toBe(0)
  }, 120_000)

  it("has a section for every value each entry point exports", () => {
    const entries: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ["tributary-streaming", Root],
      ["tributary-streaming/testing", Testing],
      ["tributary-streaming/dstream", Dstream]
    ]
    for (const [entry, module] of entries) {
      const text = section(entry)
      expect(text.length, entry).toBeGreaterThan(0)
      for (const name of Object.keys(module)) expect(text, `${entry} ${name}`).toContain(`\n### ${name}\n`)
    }
  })

  it("lists F's functions by Spark's groups and DataFrame's methods with signatures", () => {
    const f = section("tributary-streaming").split("\n### F\n")[1].split("\n### ")[0]
    for (const g of ["Aggregate functions", "String functions", "Math functions", "Datetime functions", "Collection functions"]) {
      expect(f).toContain(`#### ${g} (`)
    }
    for (const name of Object.keys(Root.F)) expect(f, `F.${name}`).toMatch(new RegExp(`\\n- \`${name}[:<(]`))
    expect(f).toMatch(/#### Aggregate functions[^#]*\n- `sum: /)
    expect(f).toMatch(/#### Datetime functions[^#]*\n- `session_window: /)
    const df = section("tributary-streaming").split("\n### DataFrame\n")[1].split("\n### ")[0]
    expect(df).toMatch(/\n- `groupBy<[^\n]*— Groups by columns/)
    expect(df).toMatch(/\n- `withWatermark[<(][^\n]*eventTime: /)
    expect(df).not.toMatch(/\n- `derive</) // @internal members are left out
  })
})
