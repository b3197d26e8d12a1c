/**
 * What the end-to-end tests need from the machine (Debian's `chromium`, `jupyter nbconvert`),
 * found or reported: a missing tool fails the test with the command that installs it, so the
 * e2e tests are never skipped silently (`npm test` runs `scripts/test-setup.sh` first).
 */
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

/** Where the e2e tests leave what a person may want to look at (gitignored). */
export const OUTPUT_DIR = join(ROOT, "test-output")

const missing = (what: string): Error =>
  new Error(`${what} is not installed: run npm run test:setup (as root; it installs Debian's chromium, jupyter-nbconvert and jupyter-client)`)

/** The Chromium binary (Debian's `chromium` package). */
export const chromiumPath = (): string => {
  for (const p of ["/usr/bin/chromium", "/usr/bin/chromium-browser"]) if (existsSync(p)) return p
  throw missing("chromium")
}

/** The `jupyter` command, with `nbconvert` available. */
export const jupyterPath = (): string => {
  for (const p of ["/usr/bin/jupyter", "/usr/local/bin/jupyter"]) {
    if (!existsSync(p)) continue
    try {
      execFileSync(p, ["nbconvert", "--version"], { stdio: "ignore", timeout: 30_000 })
      return p
    } catch {
      break
    }
  }
  throw missing("jupyter nbconvert")
}

/** The project's Deno (the `deno` devDependency). */
export const denoPath = (): string => {
  const p = join(ROOT, "node_modules", ".bin", "deno")
  if (!existsSync(p)) throw new Error("node_modules/.bin/deno is missing: run npm ci")
  return p
}
