/**
 * Summarises a V8 CPU profile (`node --cpu-prof`): the functions with the most self time, with
 * their share of all samples, and the same grouped by source file.
 *
 *   NEXMARK_QUERIES=q5 BENCH_ENGINES=generator node --cpu-prof --cpu-prof-dir=prof bench/nexmark/run.ts
 *   node bench/nexmark/topFrames.ts prof [how many, default 25] [seconds to skip, default 0]
 *
 * The seconds to skip leave out the start of the profile (loading the modules, starting the
 * session, the warm-up run), so that the timed runs dominate.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const [dir, howMany = "25", skip = "0"] = process.argv.slice(2)
if (dir === undefined) throw new Error("usage: topFrames.ts <dir with .cpuprofile files> [how many]")
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".cpuprofile"))
  .map((f) => join(dir, f))
  .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)
if (files.length === 0) throw new Error(`no .cpuprofile in ${dir}`)
const profile = JSON.parse(readFileSync(files[0], "utf8")) as Profile
const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const selfTime = new Map<string, number>()
const byFile = new Map<string, number>()
let total = 0
let elapsed = 0
const skipUs = Number(skip) * 1e6
for (let i = 0; i < profile.samples.length; i++) {
  const dt = profile.timeDeltas[i] ?? 0
  elapsed += dt
  if (elapsed < skipUs) continue
  total += dt
  const node = byId.get(profile.samples[i])
  if (node === undefined) continue
  const f = node.callFrame
  const file =
    f.url === ""
      ? "(native)"
      : f.url
          .replace(/^file:\/\//, "")
          .split("/")
          .slice(-2)
          .join("/")
  const key = `${f.functionName || "(anonymous)"}  ${file}:${f.lineNumber + 1}`
  selfTime.set(key, (selfTime.get(key) ?? 0) + dt)
  byFile.set(file, (byFile.get(file) ?? 0) + dt)
}
const pct = (t: number) => `${((t / total) * 100).toFixed(1).padStart(5)}%`
console.log(`${files[0]}: ${(total / 1e6).toFixed(1)} s sampled (after the first ${skip} s)`)
console.log("self time by function:")
for (const [k, t] of [...selfTime].sort((a, b) => b[1] - a[1]).slice(0, Number(howMany)))
  console.log(`  ${pct(t)}  ${k}`)
console.log("self time by file:")
for (const [k, t] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`  ${pct(t)}  ${k}`)
