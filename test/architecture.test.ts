/**
 * Architecture test: checks the import arrows of DESIGN.md ("Folders and who may import whom")
 * by scanning every TypeScript file's import and export statements (static, dynamic and
 * `import("...")` types, found with TypeScript's own pre-processor so comments, doc examples and
 * strings are ignored).
 *
 * - `core/` imports only `effect` and core files (no `node:` modules, no other npm packages).
 * - `state/` imports core, state, `effect`, `@duckdb/node-api` and `node:` built-ins.
 * - `connectors/` imports core, state, `effect`, `@duckdb/node-api`, `kafkajs`, `avsc` and
 *   `snappyjs` (the Avro format) and `node:` built-ins; a connector folder imports only its own files and the shared helpers directly
 *   under `connectors/`, never another connector.
 * - `structured/` imports core, state, structured, `effect` and `node:` built-ins, never connectors.
 * - `dstream/` imports core, state, dstream, `effect`, `node:` built-ins and `structured/` only
 *   through `structured/api/` (Session and the DataFrame bridge), never connectors.
 * - `connect/` (the Spark Connect backend) imports core, structured, connect, `effect`, the
 *   protobuf/gRPC/Arrow packages and `node:` built-ins; nothing imports it but the composition root.
 * - `mod.ts` and `dstream/mod.ts` are the composition roots: they may import anything, and no
 *   library file may import them back.
 * - Everywhere (tests, examples and benchmarks too): relative imports end in `.ts`, built-ins use
 *   the `node:` prefix, and only the built-ins Deno supports are used; `node:child_process` only
 *   in tests.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/** The library folders, each with its own arrows. */
const LIBRARY_AREAS = ["core", "state", "connectors", "structured", "dstream", "connect"] as const
type LibraryArea = (typeof LIBRARY_AREAS)[number]

/** Folders that may import anything (still subject to the extension and built-in rules). */
const FREE_AREAS = ["test", "examples", "bench"] as const

/** Composition roots: wire the built-in connectors into the session (the CLI is one too). */
const COMPOSITION_ROOTS = new Set(["mod.ts", "dstream/mod.ts", "bin/tributary.ts"])

/** npm packages each library folder may import. */
const PACKAGES: Record<LibraryArea, ReadonlySet<string>> = {
  core: new Set(["effect"]),
  state: new Set(["effect", "@duckdb/node-api"]),
  connectors: new Set(["effect", "@duckdb/node-api", "kafkajs", "avsc", "snappyjs"]),
  structured: new Set(["effect"]),
  dstream: new Set(["effect"]),
  connect: new Set(["effect", "@bufbuild/protobuf", "@connectrpc/connect", "@connectrpc/connect-node", "apache-arrow"])
}

/** Library folders each library folder may import (connectors is refined per connector below). */
const AREAS: Record<LibraryArea, ReadonlySet<string>> = {
  core: new Set(["core"]),
  state: new Set(["core", "state"]),
  connectors: new Set(["core", "state", "connectors"]),
  structured: new Set(["core", "state", "structured"]),
  dstream: new Set(["core", "state", "dstream", "structured"]),
  connect: new Set(["core", "structured", "connect"])
}

/** The `node:` built-ins Deno 2 supports that this project allows. */
const NODE_BUILTINS = new Set([
  "node:fs",
  "node:fs/promises",
  "node:path",
  "node:os",
  "node:crypto",
  "node:url",
  "node:net",
  "node:events",
  "node:stream",
  "node:buffer",
  "node:util",
  "node:process",
  "node:child_process",
  "node:http",
  "node:zlib",
  "node:timers",
  "node:readline",
  "node:worker_threads",
  "node:assert",
  // Sub-modules of the modules above, also supported by Deno.
  "node:assert/strict",
  "node:path/posix",
  "node:path/win32",
  "node:stream/promises",
  "node:stream/web",
  "node:timers/promises",
  "node:util/types",
  "node:readline/promises"
])

/** Built-ins allowed only under `test/` and `bench/` (crash tests and the Kafka benchmark spawn real child processes). */
const TEST_ONLY_BUILTINS = new Set(["node:child_process"])

/** Node built-in module names, to catch a built-in imported without the `node:` prefix. */
const BARE_BUILTINS = new Set([
  "assert",
  "async_hooks",
  "buffer",
  "child_process",
  "cluster",
  "console",
  "constants",
  "crypto",
  "dgram",
  "diagnostics_channel",
  "dns",
  "domain",
  "events",
  "fs",
  "http",
  "http2",
  "https",
  "inspector",
  "module",
  "net",
  "os",
  "path",
  "perf_hooks",
  "process",
  "punycode",
  "querystring",
  "readline",
  "repl",
  "stream",
  "string_decoder",
  "sys",
  "timers",
  "tls",
  "trace_events",
  "tty",
  "url",
  "util",
  "v8",
  "vm",
  "wasi",
  "worker_threads",
  "zlib"
])

/** One import or export-from statement of a file. */
interface ImportRef {
  readonly specifier: string
  readonly line: number
}

/** The imports of a source text, in order. */
const importsOf = (text: string): ReadonlyArray<ImportRef> =>
  ts.preProcessFile(text, true, true).importedFiles.map((f) => ({
    specifier: f.fileName,
    line: text.slice(0, f.pos).split("\n").length
  }))

/** The npm package a bare specifier names: `effect/Schema` is `effect`, `@duckdb/node-api/x` is `@duckdb/node-api`. */
const packageName = (specifier: string): string => {
  const parts = specifier.split("/")
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]
}

const firstSegment = (file: string): string => file.split("/")[0]

const isFreeArea = (area: string): boolean => (FREE_AREAS as ReadonlyArray<string>).includes(area)

const isLibraryArea = (area: string): area is LibraryArea => (LIBRARY_AREAS as ReadonlyArray<string>).includes(area)

/** Root-level files other than the composition roots: tool configs (`vitest.config.ts`). */
const isRootConfig = (file: string): boolean => !file.includes("/") && /\.config\.[cm]?ts$/.test(file)

/**
 * The violations of one import of `file` (a repository-relative POSIX path), as messages that
 * name the file, the line and the import.
 */
const checkImport = (file: string, ref: ImportRef): ReadonlyArray<string> => {
  const at = `${file}:${ref.line} imports "${ref.specifier}"`
  const area = firstSegment(file)
  const spec = ref.specifier
  const out: Array<string> = []
  const composition = COMPOSITION_ROOTS.has(file)
  const free = composition || isFreeArea(area) || isRootConfig(file)

  if (!free && !isLibraryArea(area)) {
    return [`${at}: ${file} is outside the folders DESIGN.md describes; move it or add a rule to this test`]
  }

  if (spec.startsWith("./") || spec.startsWith("../")) {
    if (!spec.endsWith(".ts")) {
      out.push(`${at}: relative imports must end in ".ts" (Node type stripping and Deno load the file as written)`)
    }
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec))
    if (target.startsWith("../")) {
      out.push(`${at}: the import leaves the repository`)
      return out
    }
    if (free) return out
    if (COMPOSITION_ROOTS.has(target)) {
      out.push(`${at}: ${target} is a composition root; library code must not import it (it wires in the connectors)`)
      return out
    }
    const lib = area as LibraryArea
    const targetArea = firstSegment(target)
    if (!AREAS[lib].has(targetArea)) {
      out.push(`${at}: ${lib}/ may import only ${[...AREAS[lib]].map((a) => `${a}/`).join(", ")} (DESIGN.md)`)
      return out
    }
    if (lib === "dstream" && targetArea === "structured" && !target.startsWith("structured/api/")) {
      out.push(`${at}: dstream/ may use structured/ only through structured/api/ (Session and the DataFrame bridge)`)
    }
    if (lib === "connectors" && targetArea === "connectors") {
      const own = file.split("/")
      const dst = target.split("/")
      const targetIsShared = dst.length === 2
      const sameConnector = own.length > 2 && dst.length > 2 && own[1] === dst[1]
      if (!targetIsShared && !sameConnector) {
        out.push(
          own.length > 2
            ? `${at}: the ${own[1]} connector may import only its own folder and the shared helpers directly under connectors/`
            : `${at}: shared helpers directly under connectors/ must not depend on a connector folder`
        )
      }
    }
    return out
  }

  if (spec.startsWith("node:")) {
    if (!NODE_BUILTINS.has(spec)) {
      out.push(`${at}: only these node: built-ins (supported by Deno) are allowed: ${[...NODE_BUILTINS].join(", ")}`)
    } else if (TEST_ONLY_BUILTINS.has(spec) && area !== "test" && area !== "bench") {
      out.push(`${at}: ${spec} is allowed only in tests`)
    } else if (!free && area === "core") {
      out.push(`${at}: core/ may import only effect and core/ files, no node: built-ins`)
    }
    return out
  }

  if (BARE_BUILTINS.has(packageName(spec))) {
    return [`${at}: import Node built-ins with the node: prefix ("node:${spec}"), which Deno requires`]
  }

  if (free) return out
  const lib = area as LibraryArea
  const name = packageName(spec)
  if (!PACKAGES[lib].has(name)) {
    out.push(
      `${at}: ${lib}/ may import only the npm packages ${[...PACKAGES[lib]].join(", ")}` +
        (lib === "core" ? " (core imports only effect)" : "")
    )
  }
  return out
}

/** Every TypeScript or JavaScript file the rules cover, as repository-relative POSIX paths. */
const sourceFiles = (): ReadonlyArray<string> => {
  const files: Array<string> = []
  const isCode = (name: string): boolean => /\.(ts|mts|cts|tsx|js|mjs|cjs)$/.test(name)
  for (const entry of fs.readdirSync(ROOT, { withFileTypes: true })) {
    if (entry.isFile() && isCode(entry.name)) files.push(entry.name)
  }
  for (const dir of [...LIBRARY_AREAS, ...FREE_AREAS]) {
    const abs = path.join(ROOT, dir)
    if (!fs.existsSync(abs)) continue
    for (const rel of fs.readdirSync(abs, { recursive: true, encoding: "utf8" })) {
      const posix = rel.split(path.sep).join("/")
      if (posix.split("/").includes("node_modules")) continue
      if (isCode(posix) && fs.statSync(path.join(abs, rel)).isFile()) files.push(`${dir}/${posix}`)
    }
  }
  return files.sort()
}

/** All violations of the files whose path satisfies `select`. */
const violations = (select: (file: string) => boolean): ReadonlyArray<string> =>
  sourceFiles()
    .filter(select)
    .flatMap((file) =>
      importsOf(fs.readFileSync(path.join(ROOT, file), "utf8")).flatMap((ref) => checkImport(file, ref))
    )

const expectNone = (found: ReadonlyArray<string>): void => {
  if (found.length > 0) {
    throw new Error(`${found.length} import(s) break DESIGN.md's arrows:\n  ${found.join("\n  ")}`)
  }
  expect(found).toEqual([])
}

const inArea =
  (area: string) =>
  (file: string): boolean =>
    firstSegment(file) === area && !COMPOSITION_ROOTS.has(file)

describe("architecture (DESIGN.md import arrows)", () => {
  it("finds the library's source files", () => {
    const files = sourceFiles()
    expect(files.filter(inArea("core")).length).toBeGreaterThan(0)
    expect(files).toContain("test/architecture.test.ts")
    expect(files.some((f) => f.includes("node_modules"))).toBe(false)
  })

  it("core/ imports only effect and core/ files", () => {
    expectNone(violations(inArea("core")))
  })

  it("state/ imports only core/, state/, effect, @duckdb/node-api and node: built-ins", () => {
    expectNone(violations(inArea("state")))
  })

  it("connectors/ import core/, state/, their own folder and shared helpers, and their client packages", () => {
    expectNone(violations(inArea("connectors")))
  })

  it("structured/ never imports connectors/", () => {
    expectNone(violations(inArea("structured")))
  })

  it("dstream/ reaches structured/ only through structured/api/ and never imports connectors/", () => {
    expectNone(violations(inArea("dstream")))
  })

  it("composition roots, tests, examples and benchmarks use .ts relative imports and Deno-supported built-ins", () => {
    expectNone(violations((f) => !isLibraryArea(firstSegment(f)) || COMPOSITION_ROOTS.has(f)))
  })
})

describe("architecture rules (self-check on synthetic imports)", () => {
  const check = (file: string, specifier: string): ReadonlyArray<string> => checkImport(file, { specifier, line: 3 })

  it("accepts the allowed arrows", () => {
    const allowed: ReadonlyArray<readonly [string, string]> = [
      ["core/Column.ts", "./Expression.ts"],
      ["core/functions/Registry.ts", "../DataType.ts"],
      ["core/Column.ts", "effect"],
      ["core/RowSchema.ts", "effect/Schema"],
      ["state/DuckDBStateStore.ts", "@duckdb/node-api"],
      ["state/FileStateStore.ts", "node:fs/promises"],
      ["state/StateStore.ts", "../core/Errors.ts"],
      ["connectors/kafka/KafkaSource.ts", "kafkajs"],
      ["connectors/files/avro/AvroSchema.ts", "avsc"],
      ["connectors/files/avro/AvroSchema.ts", "../FileSource.ts"],
      ["connectors/kafka/KafkaSource.ts", "./KafkaOptions.ts"],
      ["connectors/kafka/KafkaSource.ts", "../Shared.ts"],
      ["connectors/files/FileSink.ts", "../../state/StateStore.ts"],
      ["structured/execution/MicroBatchExecution.ts", "../../state/StateStore.ts"],
      ["structured/api/DataFrame.ts", "node:path"],
      ["dstream/StreamingContext.ts", "../structured/api/Session.ts"],
      ["dstream/mod.ts", "../connectors/socket/SocketSource.ts"],
      ["mod.ts", "./connectors/memory/MemoryStream.ts"],
      ["test/crash/Crash.test.ts", "node:child_process"],
      ["test/core/Column.test.ts", "fast-check"],
      ["vitest.config.ts", "vitest/config"]
    ]
    for (const [file, spec] of allowed) expect(check(file, spec), `${file} -> ${spec}`).toEqual([])
  })

  it("rejects the forbidden arrows with a message naming the file, line and import", () => {
    const rejected: ReadonlyArray<readonly [string, string, string]> = [
      ["core/Scheduler.ts", "node:timers", "core/ may import only effect"],
      ["core/Scheduler.ts", "@duckdb/node-api", "core/ may import only the npm packages effect"],
      ["core/Column.ts", "../state/StateStore.ts", "core/ may import only core/"],
      ["core/Column.ts", "./Expression", 'must end in ".ts"'],
      ["core/Column.ts", "./Expression.js", 'must end in ".ts"'],
      ["state/StateStore.ts", "../connectors/memory/MemorySink.ts", "state/ may import only core/, state/"],
      ["state/StateStore.ts", "kafkajs", "state/ may import only the npm packages"],
      ["core/functions/AvroFunctions.ts", "avsc", "core/ may import only the npm packages effect"],
      ["structured/api/DataFrameWriter.ts", "avsc", "structured/ may import only the npm packages effect"],
      ["connectors/kafka/KafkaSource.ts", "../files/FileSource.ts", "the kafka connector may import only its own"],
      ["connectors/Shared.ts", "./memory/MemoryStream.ts", "must not depend on a connector folder"],
      ["connectors/kafka/KafkaSource.ts", "../../structured/api/Session.ts", "connectors/ may import only"],
      ["structured/api/DataFrame.ts", "../../connectors/memory/MemoryStream.ts", "structured/ may import only"],
      ["structured/api/DataFrame.ts", "@duckdb/node-api", "structured/ may import only the npm packages effect"],
      ["structured/api/DataFrame.ts", "../../mod.ts", "composition root"],
      ["dstream/DStream.ts", "../structured/physical/FilterExec.ts", "only through structured/api/"],
      ["dstream/DStream.ts", "../connectors/socket/SocketSource.ts", "dstream/ may import only"],
      ["dstream/DStream.ts", "./mod.ts", "composition root"],
      ["state/FileStateStore.ts", "fs", 'node: prefix ("node:fs")'],
      ["state/FileStateStore.ts", "node:sqlite", "only these node: built-ins"],
      ["state/FileStateStore.ts", "node:child_process", "allowed only in tests"],
      ["examples/demo.ts", "node:child_process", "allowed only in tests"],
      ["examples/demo.ts", "../mod", 'must end in ".ts"'],
      ["scratch.ts", "./mod.ts", "outside the folders DESIGN.md describes"]
    ]
    for (const [file, spec, reason] of rejected) {
      const found = check(file, spec)
      expect(found.length, `${file} -> ${spec}`).toBeGreaterThan(0)
      expect(found.join("\n")).toContain(`${file}:3 imports "${spec}"`)
      expect(found.join("\n")).toContain(reason)
    }
  })

  it("reads static, type-only, re-export and dynamic imports but not comments or strings", () => {
    const text = [
      "/** ```ts",
      ' * import { F } from "tributary"',
      " * ``` */",
      'import type { A } from "./A.ts"',
      'export * from "./B.ts"',
      'const c = await import("./C.ts")',
      'type D = import("./D.ts").D',
      "const s = \"import x from 'node:vm'\""
    ].join("\n")
    expect(importsOf(text)).toEqual([
      { specifier: "./A.ts", line: 4 },
      { specifier: "./B.ts", line: 5 },
      { specifier: "./C.ts", line: 6 },
      { specifier: "./D.ts", line: 7 }
    ])
  })
})
