/**
 * `npm run build` (after `scripts/spark-connect.sh proto`): compiles the library into `dist/`,
 * which is what the published package holds (package.json `files`).
 *
 * - `tsc -p tsconfig.build.json`: JavaScript and declarations, no source maps (the package
 *   ships no sources for them to point at).
 * - The Spark Connect protocol code (`connect/gen/`) must be there, compiled: the published
 *   package's remote sessions need it, while a checkout without it runs only the local engine.
 * - The command's entry files get no declarations (nothing imports them) and are executable.
 */
import { execFileSync } from "node:child_process"
import { chmodSync, existsSync, readdirSync, rmSync } from "node:fs"
import { join } from "node:path"

const ROOT = process.cwd()
const DIST = join(ROOT, "dist")

if (!existsSync(join(ROOT, "connect", "gen", "spark", "connect", "base_pb.ts"))) {
  console.error("build: connect/gen/ is missing; run `npm run spark-connect -- proto` first (npm run build does)")
  process.exit(1)
}

rmSync(DIST, { recursive: true, force: true })
execFileSync(join(ROOT, "node_modules", ".bin", "tsc"), ["-p", join(ROOT, "tsconfig.build.json")], { stdio: "inherit" })

const bin = join(DIST, "bin")
for (const f of readdirSync(bin)) if (f.endsWith(".d.ts")) rmSync(join(bin, f))
chmodSync(join(bin, "launch.js"), 0o755)

const count = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? count(join(dir, e.name)) : 1), 0)
console.error(`build: ${count(DIST)} files in dist/`)
