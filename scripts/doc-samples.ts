/**
 * The TypeScript samples of README.md and docs/*.md, shared by the test that runs them
 * (test/docs/DocSamples.test.ts) and the type check (`node scripts/doc-samples.ts`, part of
 * `npm run typecheck`), which writes each sample to `.docs-run/` and checks them all with tsc,
 * `tributary-streaming` mapped to this checkout.
 *
 * A ```ts block right after a `<!-- not run: why -->` line is left out (fragments, and vitest
 * files); docs/api.md is generated and its blocks are signatures, so it is left out too.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export interface Sample {
  readonly file: string
  readonly line: number
  readonly code: string
}

/** The runnable ```ts blocks of one markdown text. */
export const samplesOf = (file: string, text: string): ReadonlyArray<Sample> => {
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

/** Every runnable sample under `root` (README.md, then docs/*.md but api.md). */
export const allSamples = (root: string): ReadonlyArray<Sample> => {
  let docs: Array<string> = []
  try {
    docs = readdirSync(join(root, "docs"))
      .filter((f) => f.endsWith(".md") && f !== "api.md")
      .sort()
      .map((f) => join("docs", f))
  } catch {
    docs = []
  }
  return ["README.md", ...docs].flatMap((f) => samplesOf(f, readFileSync(join(root, f), "utf8")))
}

/** The module name a sample is written to. */
export const sampleFileName = (s: Sample): string => `${s.file.replaceAll("/", "_").replace(/\.md$/, "")}-${s.line}.ts`

const typecheck = (root: string): void => {
  const dir = join(root, ".docs-run", "typecheck")
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const samples = allSamples(root)
  // Each sample is its own module; `export {}` keeps top-level names apart.
  for (const s of samples) writeFileSync(join(dir, sampleFileName(s)), `${s.code}\nexport {}\n`)
  const config = {
    extends: "../../tsconfig.json",
    compilerOptions: {
      noEmit: true,
      baseUrl: "../..",
      paths: {
        "tributary-streaming": ["./mod.ts"],
        "tributary-streaming/testing": ["./structured/testing.ts"],
        "tributary-streaming/dstream": ["./dstream/mod.ts"],
        // The entry points' names in the API contract (the npm name "tributary" is another package's).
        tributary: ["./mod.ts"],
        "tributary/testing": ["./structured/testing.ts"],
        "tributary/dstream": ["./dstream/mod.ts"]
      }
    },
    include: ["./*.ts"],
    exclude: []
  }
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config, null, 2))
  try {
    execFileSync(join(root, "node_modules", ".bin", "tsc"), ["-p", join(dir, "tsconfig.json")], { stdio: "inherit" })
  } catch {
    console.error(`doc samples: type errors (the samples are in ${dir}, named <page>-<line>.ts)`)
    process.exit(1)
  }
  console.log(`doc samples: ${samples.length} type-check`)
}

if (import.meta.main === true || process.argv[1]?.endsWith("doc-samples.ts")) typecheck(process.cwd())
