/**
 * What the vitest global setups that start a real server (test/kafka/globalSetup.ts: the Kafka
 * broker; test/connect/globalSetup.ts: the Spark Connect server) share: running their script,
 * reading vitest's file filters to decide whether a run needs the server, and stopping servers
 * that vitest processes which died left behind.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/** Runs `bash script args…` from the root; resolves with the last line it printed. */
export const runScript = (
  script: string,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {}
): Promise<string> =>
  new Promise((resolve, reject) => {
    execFile(
      "bash",
      [script, ...args],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        if (error !== null) reject(new Error(`${path.relative(ROOT, script)} ${args.join(" ")} failed:\n${stderr}\n${stdout}`))
        else resolve(stdout.trim().split("\n").pop() ?? "")
      }
    )
  })

/** Test files under a folder named `folder` whose text passes `uses`, relative to the root. */
const testFilesUnder = (folder: string, uses: (text: string) => boolean): ReadonlyArray<string> => {
  const out: Array<string> = []
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name.endsWith(".test.ts") && p.split(path.sep).includes(folder) && uses(fs.readFileSync(p, "utf8"))) {
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

/**
 * Whether this run may include a test that needs the server: always without file filters,
 * otherwise when a filter matches a test file under a `folder` folder that `uses` the server.
 */
export const runNeeds = (folder: string, uses: (text: string) => boolean): boolean => {
  const filters = fileFilters()
  if (filters.length === 0) return true
  const files = testFilesUnder(folder, uses)
  return filters.some((f) => {
    const rel = path.isAbsolute(f) ? path.relative(ROOT, f) : f.replace(/^\.\//, "")
    return files.some((file) => file.includes(rel) || rel.includes(file))
  })
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Stops the `vitest-<pid>` servers under `stateRoot` whose vitest process is gone. */
export const stopOrphans = async (script: string, stateRoot: string): Promise<void> => {
  if (!fs.existsSync(stateRoot)) return
  for (const name of fs.readdirSync(stateRoot)) {
    const m = /^vitest-(\d+)$/.exec(name)
    if (m !== null && Number(m[1]) !== process.pid && !alive(Number(m[1]))) {
      await runScript(script, ["stop", name]).catch(() => {})
    }
  }
}
