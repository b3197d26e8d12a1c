/**
 * Generates docs/api.md, the API reference, from the doc comments of what `tributary-streaming`
 * (mod.ts), `tributary-streaming/testing` and `tributary-streaming/dstream` export, with the
 * TypeScript compiler.
 *
 * Every export gets its kind, source file, signature and the first paragraph of its doc comment.
 * Classes, interfaces, namespaces (`export * as F`) and object constants (`Trigger`) also list
 * their members the same way, one line each: the members declared in this repository (not the
 * ones inherited from Effect's base classes), public only. `F`'s functions are grouped as
 * Spark's API reference groups them (aggregate, window, string, math, datetime, collection, …),
 * by where each function is implemented.
 *
 *   node scripts/api-docs.ts          writes docs/api.md
 *   node scripts/api-docs.ts --check  fails when docs/api.md is not up to date, or lists an export
 *                                     or a member without its signature
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import ts from "typescript"

const ROOT = process.cwd()

const ENTRIES: ReadonlyArray<readonly [string, string]> = [
  ["tributary-streaming", "mod.ts"],
  ["tributary-streaming/testing", "structured/testing.ts"],
  ["tributary-streaming/dstream", "dstream/mod.ts"]
]

const MAX = 300
const clip = (s: string): string => (s.length > MAX ? `${s.slice(0, MAX - 3)}...` : s)
const oneLine = (s: string): string => s.replace(/\s*\n\s*/g, " ").trim()

const inRepository = (d: ts.Declaration): boolean => {
  const file = d.getSourceFile().fileName
  return file.startsWith(ROOT) && !file.includes("/node_modules/")
}

const kindOf = (symbol: ts.Symbol, d: ts.Declaration | undefined): string => {
  if (symbol.flags & ts.SymbolFlags.ValueModule) return "namespace"
  if (d === undefined) return "value"
  if (ts.isClassDeclaration(d)) return "class"
  if (ts.isInterfaceDeclaration(d)) return "interface"
  if (ts.isTypeAliasDeclaration(d)) return "type"
  if (ts.isFunctionDeclaration(d)) return "function"
  if (ts.isVariableDeclaration(d)) return "const"
  if (ts.isEnumDeclaration(d)) return "enum"
  if (ts.isSourceFile(d)) return "namespace"
  return "value"
}

/** The first paragraph of a doc comment (examples and tags left out), on one line. */
const summary = (checker: ts.TypeChecker, symbol: ts.Symbol): string => {
  const text = ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim()
  return oneLine(text.split(/\n\s*\n/)[0])
}

const typeText = (checker: ts.TypeChecker, t: ts.Type): string =>
  checker.typeToString(t, undefined, ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope)

/** A one-line signature: the declared type of a value, the head of a type or class. */
const signature = (checker: ts.TypeChecker, symbol: ts.Symbol, decl: ts.Declaration | undefined): string => {
  const kind = kindOf(symbol, decl)
  if (decl === undefined || kind === "namespace") return symbol.name
  if (kind === "const" || kind === "function") {
    return clip(`${symbol.name}: ${typeText(checker, checker.getTypeOfSymbolAtLocation(symbol, decl))}`)
  }
  const head = decl.getText().split("\n")[0].replace(/\{\s*$/, "").trim()
  return clip(head)
}

/** One member: `name(params): result` per call signature, else `name: type`. */
const memberSignatures = (checker: ts.TypeChecker, member: ts.Symbol, at: ts.Declaration): ReadonlyArray<string> => {
  const t = checker.getTypeOfSymbolAtLocation(member, at)
  const calls = t.getCallSignatures()
  const isMethod =
    (member.flags & ts.SymbolFlags.Method) !== 0 ||
    (member.flags & ts.SymbolFlags.Function) !== 0 ||
    (calls.length > 0 && member.declarations?.some((d) => ts.isMethodDeclaration(d) || ts.isMethodSignature(d)) === true)
  if (isMethod && calls.length > 0) {
    return calls.map((s) => clip(`${member.name}${oneLine(checker.signatureToString(s, undefined, ts.TypeFormatFlags.NoTruncation))}`))
  }
  const getter = member.declarations?.some((d) => ts.isGetAccessorDeclaration(d)) === true
  return [clip(`${getter ? "get " : ""}${member.name}: ${oneLine(typeText(checker, t))}`)]
}

const isPublic = (member: ts.Symbol): boolean => {
  if (member.name.startsWith("#") || member.name.startsWith("_") || member.name.startsWith("__")) return false
  const decls = member.declarations ?? []
  if (decls.length === 0 || !decls.some(inRepository)) return false
  // `@internal` members are the library's own plumbing; type-only exports of a namespace are no members.
  if (decls.some((d) => ts.getJSDocTags(d).some((t) => t.tagName.text === "internal"))) return false
  if ((member.flags & ts.SymbolFlags.Value) === 0) return false
  return !decls.some((d) => {
    const flags = ts.getCombinedModifierFlags(d)
    const name = ts.getNameOfDeclaration(d)
    return (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) !== 0 || (name !== undefined && ts.isPrivateIdentifier(name))
  })
}

interface Member {
  readonly name: string
  readonly signatures: ReadonlyArray<string>
  readonly doc: string
  /** Where the member is implemented (for grouping `F`). */
  readonly file: string
  readonly text: string
}

const describeMembers = (checker: ts.TypeChecker, members: ReadonlyArray<ts.Symbol>, at: ts.Declaration): Array<Member> =>
  members
    .filter(isPublic)
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((m) => {
      const d = m.declarations?.find(inRepository) ?? m.declarations?.[0]
      return {
        name: m.name,
        signatures: memberSignatures(checker, m, d ?? at),
        doc: summary(checker, m),
        file: d === undefined ? "" : relative(ROOT, d.getSourceFile().fileName),
        text: d === undefined ? "" : d.getText()
      }
    })

/** The members an export documents: a class's static and instance members, an interface's, a namespace's exports. */
const membersOf = (checker: ts.TypeChecker, symbol: ts.Symbol, decl: ts.Declaration | undefined): Array<Member> => {
  if (decl === undefined) return []
  const kind = kindOf(symbol, decl)
  if (kind === "namespace") {
    // `export const mean = avg` is listed as `mean`: the exported name, the aliased declaration.
    return checker.getExportsOfModule(symbol).flatMap((e) => {
      const target = e.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(e) : e
      return describeMembers(checker, [target], decl).map((m) => ({ ...m, name: e.name, signatures: m.signatures.map((x) => x.replace(target.name, e.name)) }))
    }).sort((a, b) => a.name.localeCompare(b.name))
  }
  if (kind === "class") {
    const statics = checker.getTypeOfSymbolAtLocation(symbol, decl).getProperties().filter((p) => p.name !== "prototype")
    const instance = checker.getDeclaredTypeOfSymbol(symbol).getProperties()
    const s = describeMembers(checker, statics, decl).map((m) => ({ ...m, name: `static ${m.name}`, signatures: m.signatures.map((x) => `static ${x}`) }))
    return [...s, ...describeMembers(checker, instance, decl)]
  }
  if (kind === "interface") return describeMembers(checker, checker.getDeclaredTypeOfSymbol(symbol).getProperties(), decl)
  if (kind === "const") {
    const t = checker.getTypeOfSymbolAtLocation(symbol, decl)
    if (t.getCallSignatures().length > 0) return []
    const props = t.getProperties()
    // Object constants such as `Trigger`: members written in this repository.
    return props.length > 0 && props.every((p) => p.declarations?.some(inRepository) === true) ? describeMembers(checker, props, decl) : []
  }
  return []
}

/** Spark's groups of `functions`, by the file that implements a function. */
const F_GROUPS: ReadonlyArray<readonly [string, RegExp]> = [
  ["Aggregate functions", /^core\/functions\/Aggregates\.ts$/],
  ["String functions", /^core\/functions\/StringFunctions\.ts$/],
  ["Math functions", /^core\/functions\/MathFunctions\.ts$/],
  ["Datetime functions", /^core\/functions\/Date[Tt]ime(Functions|Utils)\.ts$/],
  ["Collection functions", /^core\/functions\/CollectionFunctions\.ts$/],
  ["Avro functions", /^core\/functions\/AvroFunctions\.ts$/],
  ["Misc functions", /^core\/functions\/MiscFunctions\.ts$/]
]

/** Which scalar function names each implementation file registers (`name: "upper"`). */
const registeredNames = (): Map<string, string> => {
  const out = new Map<string, string>()
  for (const [group, re] of F_GROUPS) {
    const dir = join(ROOT, "core", "functions")
    for (const file of ["Aggregates.ts", "StringFunctions.ts", "MathFunctions.ts", "DatetimeFunctions.ts", "DateTimeUtils.ts", "CollectionFunctions.ts", "AvroFunctions.ts", "MiscFunctions.ts"]) {
      if (!re.test(`core/functions/${file}`) || !existsSync(join(dir, file))) continue
      // `define({ name: "upper", … })`, `unaryDouble("acos", …)`: the registered names.
      const text = readFileSync(join(dir, file), "utf8")
      for (const m of text.matchAll(/(?:\bname:\s*|\b[A-Za-z]+\(\s*)"([a-z][a-z_0-9]*)"/g)) if (!out.has(m[1])) out.set(m[1], group)
    }
  }
  return out
}

/** The group of one `F` function, from the function it builds (`fn("upper", …)`, `aggregate("sum", …)`) or what it is. */
const groupOfF = (m: Member, registered: ReadonlyMap<string, string>): string => {
  if (/\baggregate\w*\(\s*"|AggregateFunction/.test(m.text)) return "Aggregate functions"
  if (/WindowFunction|\bover\b|rank|row_number|ntile|lag|lead|cume_dist|nth_value/.test(m.name) || /_tag:\s*"WindowFunction"/.test(m.text)) {
    return "Window functions"
  }
  if (/^(window|session_window|window_time)$/.test(m.name)) return "Datetime functions"
  if (/^(asc|desc)(_nulls_(first|last))?$/.test(m.name)) return "Sort functions"
  if (/^(from_json|to_json|schema_of_json|get_json_object|json_tuple|json_array_length|json_object_keys)$/.test(m.name)) {
    return "JSON functions"
  }
  if (/^(from_csv|to_csv|schema_of_csv)$/.test(m.name)) return "CSV functions"
  if (/^(pos)?explode(_outer)?$|^inline(_outer)?$|^stack$/.test(m.name)) return "Generator functions"
  const built = /\bfn\(\s*"([a-z_0-9]+)"|callByName\(\s*"([a-z_0-9]+)"/.exec(m.text)
  const name = built?.[1] ?? built?.[2] ?? m.name
  const g = registered.get(name) ?? registered.get(m.name)
  if (g !== undefined) return g
  for (const [group, re] of F_GROUPS) if (re.test(m.file)) return group
  if (/date|time|^now$|day|month|year|hour|minute|second|week|quarter/.test(m.name)) return "Datetime functions"
  return "Normal functions"
}

/** `export const mean = avg`: an alias goes where what it names goes. */
const aliasOf = (m: Member): string | undefined => /^\s*[A-Za-z_$][\w$]*\s*=\s*([A-Za-z_$][\w$]*)\s*$/.exec(m.text)?.[1]

const GROUP_ORDER = [
  "Normal functions",
  "Aggregate functions",
  "Window functions",
  "Sort functions",
  "Generator functions",
  "String functions",
  "Math functions",
  "Datetime functions",
  "Collection functions",
  "JSON functions",
  "CSV functions",
  "Avro functions",
  "Misc functions"
]

const renderMembers = (members: ReadonlyArray<Member>, out: Array<string>): void => {
  for (const m of members) {
    out.push(`- \`${m.signatures[0]}\`${m.doc === "" ? "" : ` — ${m.doc}`}`)
    for (const more of m.signatures.slice(1)) out.push(`  - \`${more}\``)
  }
}

interface Generated {
  readonly text: string
  /** `entry export` names listed, for the completeness check. */
  readonly listed: ReadonlyArray<string>
  /** What the check refuses: an export or member without a signature. */
  readonly problems: ReadonlyArray<string>
}

const generate = (): Generated => {
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
  const registered = registeredNames()
  const listed: Array<string> = []
  const problems: Array<string> = []
  const out: Array<string> = [
    "# API reference",
    "",
    "Generated from the doc comments by `npm run docs:api` (`scripts/api-docs.ts`); do not edit by hand",
    "(`node scripts/api-docs.ts --check`, run by the test suite, fails when it is out of date).",
    "Each entry gives the export's kind, its source file, its signature and the first paragraph of its",
    "documentation; classes, interfaces and namespaces list their public members the same way, and",
    "`F`'s functions are grouped as Spark's API reference groups them. The source file's comment has",
    "the rest, with examples.",
    ""
  ]
  for (const [name, file] of ENTRIES) {
    const source = program.getSourceFile(join(ROOT, file))
    if (source === undefined) continue
    const moduleSymbol = checker.getSymbolAtLocation(source)
    if (moduleSymbol === undefined) continue
    out.push(`## \`${name}\``, "")
    const exports = checker.getExportsOfModule(moduleSymbol).sort((a, b) => a.name.localeCompare(b.name))
    out.push(exports.map((e) => `[${e.name}](#${e.name.toLowerCase()})`).join(" · "), "")
    for (const exported of exports) {
      const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
      const decl = symbol.valueDeclaration ?? symbol.declarations?.[0]
      const kind = kindOf(symbol, decl)
      const where = decl === undefined ? "" : ` — \`${relative(ROOT, decl.getSourceFile().fileName)}\``
      const sig = kind === "namespace" ? `import { ${exported.name} } from "${name}"` : signature(checker, symbol, decl)
      if (sig.trim() === "") problems.push(`${name} ${exported.name}: no signature`)
      listed.push(`${name} ${exported.name}`)
      out.push(`### ${exported.name}`, "", `${kind}${where}`, "", "```ts", sig, "```", "")
      const doc = summary(checker, symbol)
      if (doc !== "") out.push(doc, "")
      const members = membersOf(checker, symbol, decl)
      for (const m of members) if (m.signatures.length === 0) problems.push(`${name} ${exported.name}.${m.name}: no signature`)
      if (members.length === 0) continue
      if (exported.name === "F") {
        const groups = new Map<string, Array<Member>>()
        const byName = new Map(members.map((m) => [m.name, m]))
        for (const m of members) {
          const target = aliasOf(m)
          const g = groupOfF(target === undefined ? m : (byName.get(target) ?? m), registered)
          groups.set(g, [...(groups.get(g) ?? []), m])
        }
        const order = [...GROUP_ORDER, ...[...groups.keys()].filter((g) => !GROUP_ORDER.includes(g))]
        for (const g of order) {
          const ms = groups.get(g)
          if (ms === undefined) continue
          out.push(`#### ${g} (${ms.length})`, "")
          renderMembers(ms, out)
          out.push("")
        }
        continue
      }
      out.push(`Members (${members.length}):`, "")
      renderMembers(members, out)
      out.push("")
    }
  }
  return { text: `${out.join("\n").trimEnd()}\n`, listed, problems }
}

const target = join(ROOT, "docs", "api.md")
const generated = generate()
if (process.argv.includes("--check")) {
  const current = existsSync(target) ? readFileSync(target, "utf8") : ""
  if (generated.problems.length > 0) {
    console.error(`docs/api.md: ${generated.problems.length} entries without a signature:\n${generated.problems.join("\n")}`)
    process.exit(1)
  }
  if (current !== generated.text) {
    console.error("docs/api.md is out of date: run `npm run docs:api`")
    process.exit(1)
  }
  console.log(`docs/api.md is current: ${generated.listed.length} exports`)
} else {
  writeFileSync(target, generated.text)
  console.log(`wrote ${target} (${generated.listed.length} exports)`)
}
