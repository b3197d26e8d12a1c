/**
 * Generates docs/api.md, the API reference, from the doc comments of what `tributary-streaming`
 * (mod.ts), `tributary-streaming/testing` and `tributary-streaming/dstream` export, with the TypeScript compiler.
 *
 *   node scripts/api-docs.ts          writes docs/api.md
 *   node scripts/api-docs.ts --check  fails when docs/api.md is not up to date
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import ts from "typescript"

const ROOT = process.cwd()

const ENTRIES: ReadonlyArray<readonly [string, string]> = [
  ["tributary-streaming", "mod.ts"],
  ["tributary-streaming/testing", "structured/testing.ts"],
  ["tributary-streaming/dstream", "dstream/mod.ts"]
]

const kindOf = (d: ts.Declaration | undefined): string => {
  if (d === undefined) return "value"
  if (ts.isClassDeclaration(d)) return "class"
  if (ts.isInterfaceDeclaration(d)) return "interface"
  if (ts.isTypeAliasDeclaration(d)) return "type"
  if (ts.isFunctionDeclaration(d)) return "function"
  if (ts.isVariableDeclaration(d)) return "const"
  if (ts.isEnumDeclaration(d)) return "enum"
  return "value"
}

/** The first paragraph of a doc comment (examples and tags left out). */
const summary = (checker: ts.TypeChecker, symbol: ts.Symbol): string => {
  const text = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim()
  return text.split(/\n\s*\n/)[0].replace(/\s*\n\s*/g, " ")
}

/** A one-line signature: the declared type of a value, the head of a type or class. */
const signature = (checker: ts.TypeChecker, symbol: ts.Symbol, decl: ts.Declaration | undefined): string => {
  const kind = kindOf(decl)
  if (decl === undefined) return symbol.name
  if (kind === "const" || kind === "function") {
    const t = checker.typeToString(checker.getTypeOfSymbolAtLocation(symbol, decl), undefined, ts.TypeFormatFlags.NoTruncation)
    return `${symbol.name}: ${t.length > 300 ? `${t.slice(0, 297)}...` : t}`
  }
  const text = decl.getText().split("\n")[0].replace(/\{\s*$/, "").trim()
  return text.length > 300 ? `${text.slice(0, 297)}...` : text
}

const generate = (): string => {
  const roots = ENTRIES.map(([, f]) => join(ROOT, f)).filter((f) => existsSync(f))
  const program = ts.createProgram(roots, {
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
    strict: true
  })
  const checker = program.getTypeChecker()
  const out: Array<string> = [
    "# API reference",
    "",
    "Generated from the doc comments by `npm run docs:api` (`scripts/api-docs.ts`); do not edit by hand.",
    "Each entry gives the export's kind, its signature and the first paragraph of its documentation;",
    "the source file's comment has the rest, with examples.",
    ""
  ]
  for (const [name, file] of ENTRIES) {
    const source = program.getSourceFile(join(ROOT, file))
    if (source === undefined) continue
    const moduleSymbol = checker.getSymbolAtLocation(source)
    if (moduleSymbol === undefined) continue
    out.push(`## \`${name}\``, "")
    const exports = checker.getExportsOfModule(moduleSymbol).sort((a, b) => a.name.localeCompare(b.name))
    for (const exported of exports) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
      const decl = symbol.declarations?.[0]
      const where = decl === undefined ? "" : ` — \`${decl.getSourceFile().fileName.slice(ROOT.length + 1)}\``
      out.push(`### ${exported.name}`, "", `${kindOf(decl)}${where}`, "", "```ts", signature(checker, symbol, decl), "```", "")
      const doc = summary(checker, symbol)
      if (doc !== "") out.push(doc, "")
    }
  }
  return out.join("\n")
}

const target = join(ROOT, "docs", "api.md")
const text = generate()
if (process.argv.includes("--check")) {
  const current = existsSync(target) ? readFileSync(target, "utf8") : ""
  if (current !== text) {
    console.error("docs/api.md is out of date: run `npm run docs:api`")
    process.exit(1)
  }
} else {
  writeFileSync(target, text)
  console.log(`wrote ${target}`)
}
