/**
 * The JSR package (`@tributary/streaming`) as `deno publish` would upload it:
 *
 * - `deno publish --dry-run` passes without `--allow-slow-types`: no slow types (every exported
 *   symbol has an explicit type, no super class expression that fast check cannot follow) and
 *   the declarations JSR generates type-check;
 * - it needs no network: every proxy points at a closed port, so a download would fail the run;
 * - the files it would upload are what the three entry points load (their module graph, from
 *   `deno info`) plus README.md, LICENSE and deno.json, and nothing else;
 * - deno.json's name, version and entry points agree with package.json's, and the README gives
 *   both install routes under those names.
 *
 * The package ships the Spark Connect protocol code (`connect/gen/`), so this generates it first
 * (`scripts/spark-connect.sh proto`, a no-op when it is current), as `npm pack` does.
 */
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"

const ROOT = process.cwd()
const DENO = join(ROOT, "node_modules", ".bin", "deno")

interface Run {
  readonly code: number
  readonly output: string
}

/** Runs a command; never rejects (the result carries the exit code and stdout + stderr). */
const run = (file: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) =>
  new Promise<Run>((resolve) => {
    execFile(
      file,
      [...args],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: "1", ...env }, timeout: 400_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, output: stdout + stderr })
    )
  })

// biome-ignore lint/suspicious/noControlCharactersInRegex: strips ANSI colour codes
const plain = (s: string): string => s.replace(/\u001b\[[0-9;]*m/g, "")

const denoJson = JSON.parse(readFileSync(join(ROOT, "deno.json"), "utf8")) as {
  name: string
  version: string
  exports: Record<string, string>
}
const packageJson = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  name: string
  version: string
  exports: Record<string, { default: string }>
}

/** Nothing listens on port 9: any download through a proxy fails at once. */
const OFFLINE = {
  HTTP_PROXY: "http://127.0.0.1:9",
  HTTPS_PROXY: "http://127.0.0.1:9",
  http_proxy: "http://127.0.0.1:9",
  https_proxy: "http://127.0.0.1:9",
  NO_PROXY: "",
  no_proxy: ""
}

describe("deno publish (JSR)", () => {
  let dryRun: Run

  beforeAll(async () => {
    const proto = await run("bash", ["scripts/spark-connect.sh", "proto"])
    if (proto.code !== 0) throw new Error(`scripts/spark-connect.sh proto failed:\n${proto.output}`)
    dryRun = await run(DENO, ["publish", "--dry-run", "--allow-dirty"], OFFLINE)
  }, 600_000)

  it("passes the dry run offline, without slow types", () => {
    const out = plain(dryRun.output)
    expect(dryRun.code, out).toBe(0)
    expect(out).toContain(`Simulating publish of ${denoJson.name}@${denoJson.version}`)
    expect(out).toContain("Dry run complete")
    // A slow type is reported as `error[missing-explicit-type]` and the like, with a hint to `--allow-slow-types`.
    expect(out).toContain("Checking for slow types in the public API")
    expect(out).not.toMatch(/error\[|allow-slow-types/)
    expect(out).not.toMatch(/^\s*(error|warning)\b/im)
  })

  it("uploads the entry points' module graph, README.md, LICENSE and deno.json, nothing else", async () => {
    const published = new Set(
      [...plain(dryRun.output).matchAll(/file:\/\/(\S+) \(/g)].map((m) => m[1].slice(ROOT.length + 1))
    )
    const graph = new Set<string>()
    for (const entry of Object.values(denoJson.exports)) {
      const info = await run(DENO, ["info", "--json", entry], OFFLINE)
      expect(info.code, info.output).toBe(0)
      const modules = (JSON.parse(info.output.slice(info.output.indexOf("{"))) as {
        modules: ReadonlyArray<{ specifier: string }>
      }).modules
      for (const { specifier } of modules) {
        if (!specifier.startsWith(`file://${ROOT}/`)) continue
        const path = specifier.slice(`file://${ROOT}/`.length)
        if (!path.startsWith("node_modules/")) graph.add(path)
      }
    }
    expect(graph.size).toBeGreaterThan(100)
    const expected = new Set([...graph, "README.md", "LICENSE", "deno.json"])
    expect([...published].filter((f) => !expected.has(f)).sort(), "published but not needed").toEqual([])
    expect([...expected].filter((f) => !published.has(f)).sort(), "needed but not published").toEqual([])
  })

  it("has package.json's version and entry points, and the README names both install routes", () => {
    expect(denoJson.name).toBe("@tributary/streaming")
    expect(denoJson.version).toBe(packageJson.version)
    const fromDist = (js: string): string => js.replace(/^\.\/dist\//, "./").replace(/\.js$/, ".ts")
    expect(denoJson.exports).toEqual(
      Object.fromEntries(Object.entries(packageJson.exports).map(([k, v]) => [k, fromDist(v.default)]))
    )
    const readme = readFileSync(join(ROOT, "README.md"), "utf8")
    expect(readme).toContain(`npm install ${packageJson.name} effect`)
    expect(readme).toContain(`deno add jsr:${denoJson.name}`)
    expect(readme).toContain(`from "jsr:${denoJson.name}"`)
  })
})
