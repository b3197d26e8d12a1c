/**
 * Architecture test: enforces the import rules of docs/architecture.md ("Folders and who may
 * import whom", "Layers inside core/", "Layers inside structured/") by scanning every TypeScript
 * file's import and export statements (static, dynamic and `import("...")` types, found with
 * TypeScript's own pre-processor so comments, doc examples and strings are ignored).
 *
 * - `core/` imports only `effect` and core files (no `node:` modules, no other npm packages), in
 *   layers: the model (`core/*.ts`, `core/functions/`) <- `core/analysis/` <- `core/optimizer/`
 *   <- `core/mod.ts`; a file imports only its own layer and the ones below.
 * - `state/` imports core, state, `effect`, `@duckdb/node-api` and `node:` built-ins. A state
 *   store provider (`state/*StateStoreProvider.ts`) is imported only inside `state/` (the
 *   registry `StateStoreProviders.ts`, `state/mod.ts`): everything else reaches it by name.
 * - `connectors/` imports core, state, `effect`, `@duckdb/node-api`, `kafkajs`, `avsc` and `snappyjs`
 *   (the Avro format), `@aws-sdk/client-kinesis` and `@smithy/node-http-handler` (the Kinesis
 *   client and its HTTP/1.1 handler) and `node:` built-ins; a connector folder imports only its own files and the shared helpers directly
 *   under `connectors/`, never another connector.
 * - `structured/` imports core, state, structured, `effect` and `node:` built-ins, never
 *   connectors, in layers: `contracts/` <- `physical/` <- `execution/` <- `api/` <-
 *   `structured/mod.ts`, `structured/testing.ts`; a file imports only its own layer and the
 *   ones below (so the engine never imports the API, nor the notebook display).
 * - `dstream/` imports core, state, dstream, `effect`, `node:` built-ins and `structured/` only
 *   through `structured/api/` (Session and the DataFrame bridge), never connectors.
 * - `connect/` (the Spark Connect backend) imports core, connect, `effect`, the
 *   protobuf/gRPC/Arrow packages, `node:` built-ins and `structured/` only through
 *   `structured/contracts/`; nothing imports it but the composition root.
 * - `mod.ts`, `dstream/mod.ts` and every file in `bin/` (the CLI) are composition roots: they may
 *   import any library folder, and no library file may import them back. `bin/` imports only the
 *   npm package `effect` and runs in Node and Deno like the library.
 * - `scripts/` (the repository's own tools, run by npm scripts under Node) imports only `node:`
 *   built-ins and `typescript`, never the library (it reads sources as files).
 * - Everywhere (tests, examples, benchmarks, bin and scripts too): relative imports end in `.ts`,
 *   built-ins use the `node:` prefix, and only the built-ins Deno supports are used;
 *   `node:child_process` only in tests, benchmarks and scripts.
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

/** The command-line tool (composition roots) and the repository's scripts. */
const TOOL_AREAS = ["bin", "scripts"] as const

/** Composition roots: wire the built-in connectors into the session (every CLI file is one too). */
const isCompositionRoot = (file: string): boolean =>
  file === "mod.ts" || file === "dstream/mod.ts" || (firstSegment(file) === "bin" && file.includes("/"))

/** npm packages each library folder may import. */
const PACKAGES: Record<LibraryArea | "bin" | "scripts", ReadonlySet<string>> = {
  core: new Set(["effect"]),
  state: new Set(["effect", "@duckdb/node-api"]),
  connectors: new Set([
    "effect",
    "@duckdb/node-api",
    "kafkajs",
    "avsc",
    "snappyjs",
    "@aws-sdk/client-kinesis",
    "@smithy/node-http-handler"
  ]),
  structured: new Set(["effect"]),
  dstream: new Set(["effect"]),
  connect: new Set(["effect", "@bufbuild/protobuf", "@connectrpc/connect", "@connectrpc/connect-node", "apache-arrow"]),
  bin: new Set(["effect"]),
  scripts: new Set(["typescript"])
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

/**
 * A layer of a folder: files import only their own layer and the ones below (lower `rank`).
 * `matches` gets a repository-relative path inside the folder.
 */
interface Layer {
  readonly name: string
  readonly rank: number
  readonly matches: (file: string) => boolean
}

const depth = (file: string): number => file.split("/").length

/** The layers inside `core/`, bottom first (docs/architecture.md, "Layers inside core/"). */
const CORE_LAYERS: ReadonlyArray<Layer> = [
  {
    name: "core/ (the model: core/*.ts, core/functions/ and core/sql/)",
    rank: 0,
    matches: (f) =>
      (depth(f) === 2 && f !== "core/mod.ts") || f.startsWith("core/functions/") || f.startsWith("core/sql/")
  },
  { name: "core/analysis/", rank: 1, matches: (f) => f.startsWith("core/analysis/") },
  { name: "core/optimizer/", rank: 2, matches: (f) => f.startsWith("core/optimizer/") },
  { name: "core/mod.ts", rank: 3, matches: (f) => f === "core/mod.ts" }
]

/** The layers inside `structured/`, bottom first (docs/architecture.md, "Layers inside structured/"). */
const STRUCTURED_LAYERS: ReadonlyArray<Layer> = [
  { name: "structured/contracts/", rank: 0, matches: (f) => f.startsWith("structured/contracts/") },
  { name: "structured/physical/", rank: 1, matches: (f) => f.startsWith("structured/physical/") },
  { name: "structured/execution/", rank: 2, matches: (f) => f.startsWith("structured/execution/") },
  { name: "structured/api/", rank: 3, matches: (f) => f.startsWith("structured/api/") },
  {
    name: "structured/mod.ts and structured/testing.ts",
    rank: 4,
    matches: (f) => f === "structured/mod.ts" || f === "structured/testing.ts"
  }
]

const LAYERED: Readonly<Record<string, ReadonlyArray<Layer>>> = { core: CORE_LAYERS, structured: STRUCTURED_LAYERS }

/** The layer of a file of a layered folder; `undefined` for a file no layer holds. */
const layerOf = (file: string): Layer | undefined => LAYERED[firstSegment(file)]?.find((l) => l.matches(file))

/** A state store provider's implementation (reached through the registry outside `state/`). */
const isProviderImplementation = (file: string): boolean => /^state\/[A-Za-z]+StateStoreProvider\.ts$/.test(file)

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

/** Built-ins allowed only under `test/`, `bench/` and `scripts/` (crash tests, the Kafka benchmark and the doc-sample check spawn real child processes). */
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

function firstSegment(file: string): string {
  return file.split("/")[0]
}

const isFreeArea = (area: string): boolean => (FREE_AREAS as ReadonlyArray<string>).includes(area)

const isLibraryArea = (area: string): area is LibraryArea => (LIBRARY_AREAS as ReadonlyArray<string>).includes(area)

/** Root-level files other than the composition roots: tool configs (`vitest.config.ts`). */
const isRootConfig = (file: string): boolean => !file.includes("/") && /\.config\.[cm]?ts$/.test(file)

/** Where a built-in that starts processes may be used: tests, benchmarks and the repository's scripts. */
const mayStartProcesses = (area: string): boolean => area === "test" || area === "bench" || area === "scripts"

/**
 * The violations of one import of `file` (a repository-relative POSIX path), as messages that
 * name the file, the line and the import.
 */
const checkImport = (file: string, ref: ImportRef): ReadonlyArray<string> => {
  const at = `${file}:${ref.line} imports "${ref.specifier}"`
  const area = firstSegment(file)
  const spec = ref.specifier
  const out: Array<string> = []
  const composition = isCompositionRoot(file)
  const scripts = area === "scripts" && file.includes("/")
  const free = isFreeArea(area) || isRootConfig(file)

  if (!free && !composition && !scripts && !isLibraryArea(area)) {
    return [`${at}: ${file} is outside the folders docs/architecture.md describes; move it or add a rule to this test`]
  }
  if (isLibraryArea(area) && LAYERED[area] !== undefined && layerOf(file) === undefined) {
    out.push(`${at}: ${file} is in no layer of ${area}/ (docs/architecture.md); put it in a layer's folder or add one`)
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
    if (scripts) {
      if (firstSegment(target) !== "scripts") {
        out.push(`${at}: scripts/ must not import the library or other folders (it reads sources as files)`)
      }
      return out
    }
    const targetArea = firstSegment(target)
    if (isCompositionRoot(target) && !composition) {
      out.push(`${at}: ${target} is a composition root; library code must not import it (it wires in the connectors)`)
      return out
    }
    if (isProviderImplementation(target) && area !== "state") {
      out.push(
        `${at}: a state store provider is reached through state/StateStoreProviders.ts (its registry) and the session's StateStoreProviderService, never imported directly`
      )
      return out
    }
    if (composition) {
      if (!isLibraryArea(targetArea) && !isCompositionRoot(target)) {
        out.push(`${at}: a composition root imports only library folders and the other composition roots`)
      }
      return out
    }
    const lib = area as LibraryArea
    if (!AREAS[lib].has(targetArea)) {
      out.push(
        `${at}: ${lib}/ may import only ${[...AREAS[lib]].map((a) => `${a}/`).join(", ")} (docs/architecture.md)`
      )
      return out
    }
    if (lib === "dstream" && targetArea === "structured" && !target.startsWith("structured/api/")) {
      out.push(`${at}: dstream/ may use structured/ only through structured/api/ (Session and the DataFrame bridge)`)
    }
    if (lib === "connect" && targetArea === "structured" && !target.startsWith("structured/contracts/")) {
      out.push(
        `${at}: connect/ may use structured/ only through structured/contracts/ (the remote backend, session state, query and listener contracts)`
      )
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
    if (targetArea === lib && LAYERED[lib] !== undefined) {
      const from = layerOf(file)
      const to = layerOf(target)
      if (from !== undefined && to !== undefined && to.rank > from.rank) {
        const order = LAYERED[lib].map((l) => l.name).join(" <- ")
        out.push(
          `${at}: ${from.name} may not import ${to.name}, a layer above it (layers of ${lib}/, bottom first: ${order})`
        )
      }
    }
    return out
  }

  if (spec.startsWith("node:")) {
    if (!NODE_BUILTINS.has(spec)) {
      out.push(`${at}: only these node: built-ins (supported by Deno) are allowed: ${[...NODE_BUILTINS].join(", ")}`)
    } else if (TEST_ONLY_BUILTINS.has(spec) && !mayStartProcesses(area)) {
      out.push(`${at}: ${spec} is allowed only in tests, benchmarks and scripts/`)
    } else if (area === "core") {
      out.push(`${at}: core/ may import only effect and core/ files, no node: built-ins`)
    }
    return out
  }

  if (BARE_BUILTINS.has(packageName(spec))) {
    return [`${at}: import Node built-ins with the node: prefix ("node:${spec}"), which Deno requires`]
  }

  if (free || (composition && !file.startsWith("bin/"))) return out
  const packages = composition ? PACKAGES.bin : scripts ? PACKAGES.scripts : PACKAGES[area as LibraryArea]
  const owner = composition ? "bin" : scripts ? "scripts" : area
  const name = packageName(spec)
  if (!packages.has(name)) {
    out.push(
      `${at}: ${owner}/ may import only the npm packages ${[...packages].join(", ")}` +
        (owner === "core" ? " (core imports only effect)" : "")
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
  for (const dir of [...LIBRARY_AREAS, ...FREE_AREAS, ...TOOL_AREAS]) {
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
    throw new Error(`${found.length} import(s) break docs/architecture.md's rules:\n  ${found.join("\n  ")}`)
  }
  expect(found).toEqual([])
}

const inArea =
  (area: string) =>
  (file: string): boolean =>
    firstSegment(file) === area && !isCompositionRoot(file)

const ARCHITECTURE_DOC = fs.readFileSync(path.join(ROOT, "docs", "architecture.md"), "utf8")

describe("architecture (docs/architecture.md import rules)", () => {
  it("finds the library's source files, the CLI and the scripts", () => {
    const files = sourceFiles()
    expect(files.filter(inArea("core")).length).toBeGreaterThan(0)
    expect(files).toContain("test/architecture.test.ts")
    expect(files).toContain("bin/tributary.ts")
    expect(files).toContain("scripts/api-docs.ts")
    expect(files.some((f) => f.includes("node_modules"))).toBe(false)
  })

  it("core/ imports only effect and core/ files, in its layers", () => {
    expectNone(violations(inArea("core")))
  })

  it("state/ imports only core/, state/, effect, @duckdb/node-api and node: built-ins", () => {
    expectNone(violations(inArea("state")))
  })

  it("connectors/ import core/, state/, their own folder and shared helpers, and their client packages", () => {
    expectNone(violations(inArea("connectors")))
  })

  it("structured/ never imports connectors/, and imports only downward through its layers", () => {
    expectNone(violations(inArea("structured")))
  })

  it("no file under structured/execution/ or structured/physical/ imports structured/api/", () => {
    const upward = sourceFiles()
      .filter((f) => f.startsWith("structured/execution/") || f.startsWith("structured/physical/"))
      .flatMap((file) =>
        importsOf(fs.readFileSync(path.join(ROOT, file), "utf8"))
          .map((ref) => path.posix.normalize(path.posix.join(path.posix.dirname(file), ref.specifier)))
          .filter((target) => target.startsWith("structured/api/"))
          .map((target) => `${file} imports ${target}`)
      )
    expect(upward).toEqual([])
  })

  it("dstream/ reaches structured/ only through structured/api/ and never imports connectors/", () => {
    expectNone(violations(inArea("dstream")))
  })

  it("connect/ reaches structured/ only through structured/contracts/", () => {
    expectNone(violations(inArea("connect")))
  })

  it("the CLI (bin/) and the scripts (scripts/) follow their rules", () => {
    expectNone(violations((f) => firstSegment(f) === "bin" || firstSegment(f) === "scripts"))
  })

  it("composition roots, tests, examples and benchmarks use .ts relative imports and Deno-supported built-ins", () => {
    expectNone(violations((f) => !isLibraryArea(firstSegment(f)) || isCompositionRoot(f)))
  })

  it("docs/architecture.md names every layer this test enforces", () => {
    for (const layers of Object.values(LAYERED)) {
      for (const l of layers) {
        for (const folder of l.name.match(/[a-z]+\/[a-z]*\/?[a-zA-Z]*(\.ts)?/g) ?? []) {
          expect(ARCHITECTURE_DOC, `${l.name}: ${folder}`).toContain(folder)
        }
      }
    }
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
      ["core/analysis/Analyzer.ts", "../LogicalPlan.ts"],
      ["core/analysis/Analyzer.ts", "./PlanOutput.ts"],
      ["core/optimizer/Optimizer.ts", "../analysis/PlanOutput.ts"],
      ["core/mod.ts", "./optimizer/Optimizer.ts"],
      ["state/DuckDBStateStore.ts", "@duckdb/node-api"],
      ["state/FileStateStore.ts", "node:fs/promises"],
      ["state/StateStore.ts", "../core/Errors.ts"],
      ["state/StateStoreProviders.ts", "./DuckDBStateStoreProvider.ts"],
      ["connectors/kafka/KafkaSource.ts", "kafkajs"],
      ["connectors/kinesis/KinesisClient.ts", "@aws-sdk/client-kinesis"],
      ["connectors/kinesis/KinesisClient.ts", "@smithy/node-http-handler"],
      ["connectors/files/avro/AvroSchema.ts", "avsc"],
      ["connectors/files/avro/AvroSchema.ts", "../FileSource.ts"],
      ["connectors/kafka/KafkaSource.ts", "./KafkaOptions.ts"],
      ["connectors/kafka/KafkaSource.ts", "../OptionParsing.ts"],
      ["connectors/files/FileSink.ts", "../../state/StateStore.ts"],
      ["structured/execution/MicroBatchExecution.ts", "../../state/StateStore.ts"],
      ["structured/execution/MicroBatchExecution.ts", "./StreamExecution.ts"],
      ["structured/execution/QueryStart.ts", "../contracts/SessionState.ts"],
      ["structured/execution/StreamExecution.ts", "../physical/SparkPlan.ts"],
      ["structured/physical/stateful/FlatMapGroupsWithStateExec.ts", "../../contracts/GroupState.ts"],
      ["structured/contracts/SessionState.ts", "../../state/NodeCheckpointFileSystem.ts"],
      ["structured/api/DataStreamWriter.ts", "../execution/QueryStart.ts"],
      ["structured/api/Session.ts", "../../state/StateStoreProviders.ts"],
      ["structured/testing.ts", "./api/Session.ts"],
      ["structured/api/DataFrame.ts", "node:path"],
      ["dstream/StreamingContext.ts", "../structured/api/Session.ts"],
      ["connect/RemoteListeners.ts", "../structured/contracts/StreamingQueryListener.ts"],
      ["dstream/mod.ts", "../connectors/socket/SocketSource.ts"],
      ["mod.ts", "./connectors/memory/MemoryStream.ts"],
      ["bin/tributary.ts", "../mod.ts"],
      ["bin/tributary.ts", "../structured/execution/CheckpointInspect.ts"],
      ["bin/tributary.ts", "effect/cli"],
      ["bin/tributary.ts", "node:path"],
      ["scripts/api-docs.ts", "typescript"],
      ["scripts/doc-samples.ts", "node:child_process"],
      ["test/crash/Crash.test.ts", "node:child_process"],
      ["test/core/Column.test.ts", "fast-check"],
      ["test/docs/DocSamples.test.ts", "../../scripts/doc-samples.ts"],
      ["bench/state.ts", "../state/DuckDBStateStoreProvider.ts"],
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
      ["core/Column.ts", "./analysis/Analyzer.ts", "may not import core/analysis/, a layer above it"],
      ["core/functions/Define.ts", "../analysis/TypeCoercion.ts", "may not import core/analysis/"],
      ["core/analysis/Analyzer.ts", "../optimizer/Optimizer.ts", "core/analysis/ may not import core/optimizer/"],
      ["core/optimizer/Optimizer.ts", "../mod.ts", "may not import core/mod.ts"],
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
      [
        "structured/execution/MicroBatchExecution.ts",
        "../api/Display.ts",
        "structured/execution/ may not import structured/api/"
      ],
      ["structured/execution/QueryStart.ts", "../api/DataFrame.ts", "a layer above it"],
      [
        "structured/physical/stateful/TransformWithStateExec.ts",
        "../../api/Session.ts",
        "structured/physical/ may not import structured/api/"
      ],
      [
        "structured/physical/Planner.ts",
        "../execution/QueryExecution.ts",
        "structured/physical/ may not import structured/execution/"
      ],
      [
        "structured/contracts/SessionState.ts",
        "../physical/SparkPlan.ts",
        "structured/contracts/ may not import structured/physical/"
      ],
      [
        "structured/api/Session.ts",
        "../testing.ts",
        "structured/api/ may not import structured/mod.ts and structured/testing.ts"
      ],
      ["structured/api/Session.ts", "../../state/DuckDBStateStoreProvider.ts", "through state/StateStoreProviders.ts"],
      ["structured/streaming/Engine.ts", "../api/Session.ts", "in no layer of structured/"],
      ["dstream/DStream.ts", "../structured/physical/FilterExec.ts", "only through structured/api/"],
      ["dstream/DStream.ts", "../connectors/socket/SocketSource.ts", "dstream/ may import only"],
      ["dstream/DStream.ts", "./mod.ts", "composition root"],
      [
        "connect/RemoteListeners.ts",
        "../structured/execution/MicroBatchExecution.ts",
        "only through structured/contracts/"
      ],
      ["connect/Translate.ts", "../structured/api/DataFrame.ts", "only through structured/contracts/"],
      ["state/FileStateStore.ts", "fs", 'node: prefix ("node:fs")'],
      ["state/FileStateStore.ts", "node:sqlite", "only these node: built-ins"],
      ["state/FileStateStore.ts", "node:child_process", "allowed only in tests"],
      ["examples/demo.ts", "node:child_process", "allowed only in tests"],
      ["examples/demo.ts", "../mod", 'must end in ".ts"'],
      ["bin/tributary.ts", "fs", 'node: prefix ("node:fs")'],
      ["bin/tributary.ts", "node:child_process", "allowed only in tests"],
      ["bin/tributary.ts", "kafkajs", "bin/ may import only the npm packages effect"],
      ["bin/tributary.ts", "../state/FileStateStoreProvider.ts", "through state/StateStoreProviders.ts"],
      ["bin/tributary.ts", "../test/cli/fixtures/counts.ts", "imports only library folders"],
      ["scripts/api-docs.ts", "../mod.ts", "scripts/ must not import the library"],
      ["scripts/api-docs.ts", "effect", "scripts/ may import only the npm packages typescript"],
      ["scripts/doc-samples.ts", "fs", 'node: prefix ("node:fs")'],
      ["scratch.ts", "./mod.ts", "outside the folders docs/architecture.md describes"]
    ]
    for (const [file, spec, reason] of rejected) {
      const found = check(file, spec)
      expect(found.length, `${file} -> ${spec}`).toBeGreaterThan(0)
      expect(found.join("\n"), `${file} -> ${spec}`).toContain(`${file}:3 imports "${spec}"`)
      expect(found.join("\n"), `${file} -> ${spec}`).toContain(reason)
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
