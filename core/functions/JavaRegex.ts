/**
 * Java regular expressions (what Spark's `rlike`, `split`, `regexp_replace` and
 * `regexp_extract` take) as JavaScript `RegExp`s, and Java replacement strings (`$1`, `${name}`,
 * `\$`) as replacer functions.
 *
 * The translation covers what Spark users write: leading inline flags (`(?i)`, `(?s)`, `(?m)`,
 * `(?x)` is rejected), `\Q…\E` quoting, `\A`, `\z`, `\Z`, `\h`, the POSIX classes `\p{Alpha}`,
 * `\p{Digit}`, `\p{Punct}`, … (also inside brackets), Unicode properties (`\p{L}`, `\p{IsLatin}`;
 * these switch on the `u` flag), possessive quantifiers and atomic groups (run as ordinary greedy
 * ones, which match the same strings in all but pathological patterns). Character-class
 * intersections (`&&`) are not supported: such a pattern is reported invalid.
 *
 * @since 0.1.0
 */

const POSIX: Record<string, string> = {
  Lower: "a-z",
  Upper: "A-Z",
  ASCII: "\\x00-\\x7F",
  Alpha: "a-zA-Z",
  Digit: "0-9",
  Alnum: "a-zA-Z0-9",
  Punct: "!-\\/:-@\\[-`{-~",
  Graph: "!-~",
  Print: " -~",
  Blank: " \\t",
  Cntrl: "\\x00-\\x1F\\x7F",
  XDigit: "0-9a-fA-F",
  Space: " \\t\\n\\x0B\\f\\r",
  javaLowerCase: "a-z",
  javaUpperCase: "A-Z",
  javaWhitespace: " \\t\\n\\x0B\\f\\r\\x1C-\\x1F"
}

const HSPACE = " \\t\\xA0\\u1680\\u180e\\u2000-\\u200a\\u202f\\u205f\\u3000"

const escapeLiteral = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&")

/** A Unicode property of Java (`L`, `Lu`, `IsLatin`, `InGreek`, `IsAlphabetic`) in JS `u` syntax. */
const unicodeProperty = (name: string): string | undefined => {
  if (
    /^(L|Lu|Ll|Lt|Lm|Lo|M|Mn|Mc|Me|N|Nd|Nl|No|P|Pc|Pd|Ps|Pe|Pi|Pf|Po|S|Sm|Sc|Sk|So|Z|Zs|Zl|Zp|C|Cc|Cf|Cs|Co|Cn)$/.test(
      name
    )
  )
    return `\\p{${name}}`
  const is = /^Is(.+)$/.exec(name)
  if (is !== null) {
    const n = is[1]
    switch (n) {
      case "Alphabetic":
        return "\\p{Alphabetic}"
      case "Letter":
        return "\\p{L}"
      case "Digit":
        return "\\p{Nd}"
      case "Uppercase":
        return "\\p{Uppercase}"
      case "Lowercase":
        return "\\p{Lowercase}"
      case "WhiteSpace":
      case "White_Space":
        return "\\p{White_Space}"
      case "Punctuation":
        return "\\p{P}"
      default:
        return /^[A-Z][a-z]+$/.test(n) ? `\\p{Script=${n}}` : `\\p{${n}}`
    }
  }
  return undefined
}

/** A translated pattern: its JavaScript source and flags. */
export interface TranslatedRegex {
  readonly source: string
  readonly flags: string
}

/** Translates a Java regex; `undefined` when it uses something that cannot be translated. */
export const translateJavaRegex = (pattern: string): TranslatedRegex | undefined => {
  let flags = ""
  let i = 0
  // leading inline flags: (?i), (?is), (?s)…
  for (;;) {
    const m = /^\(\?([imsux]+)\)/.exec(pattern.slice(i))
    if (m === null) break
    for (const f of m[1]) {
      if (f === "x") return undefined
      if (f === "u") continue
      if (!flags.includes(f)) flags += f
    }
    i += m[0].length
  }
  let out = ""
  let inClass = 0
  let unicode = false
  while (i < pattern.length) {
    const c = pattern[i]
    if (c === "\\") {
      const n = pattern[i + 1]
      if (n === undefined) return undefined
      if (n === "Q") {
        const end = pattern.indexOf("\\E", i + 2)
        const lit = end < 0 ? pattern.slice(i + 2) : pattern.slice(i + 2, end)
        out += escapeLiteral(lit)
        i = end < 0 ? pattern.length : end + 2
        continue
      }
      if (n === "p" || n === "P") {
        const m = /^\{([A-Za-z_=]+)\}/.exec(pattern.slice(i + 2))
        const name = m !== null ? m[1] : pattern[i + 2]
        const len = m !== null ? m[0].length : 1
        const posix = POSIX[name] ?? POSIX[name.replace(/^Is/, "")]
        if (posix !== undefined) {
          if (n === "P") {
            if (inClass > 0) return undefined
            out += `[^${posix}]`
          } else out += inClass > 0 ? posix : `[${posix}]`
        } else {
          const prop = unicodeProperty(name)
          if (prop === undefined) return undefined
          unicode = true
          out += n === "P" ? prop.replace("\\p", "\\P") : prop
        }
        i += 2 + len
        continue
      }
      switch (n) {
        case "A":
          out += "^"
          break
        case "z":
          out += "$"
          break
        case "Z":
          out += "(?=\\n?$)"
          break
        case "h":
          out += inClass > 0 ? HSPACE : `[${HSPACE}]`
          break
        case "H":
          if (inClass > 0) return undefined
          out += `[^${HSPACE}]`
          break
        case "R":
          out += "(?:\\r\\n|[\\n\\x0B\\f\\r\\x85\\u2028\\u2029])"
          break
        case "G":
          return undefined
        case "e":
          out += "\\x1B"
          break
        case "a":
          out += "\\x07"
          break
        default:
          out += c + n
      }
      i += 2
      continue
    }
    if (c === "[") {
      if (inClass > 0) {
        // Java nests classes ([a[b]] is a union); JS has no nesting without the v flag
        return undefined
      }
      inClass++
      out += c
      i++
      if (pattern[i] === "^") {
        out += "^"
        i++
      }
      // a ']' right after '[' or '[^' is a literal in Java
      if (pattern[i] === "]") {
        out += "\\]"
        i++
      }
      continue
    }
    if (c === "]" && inClass > 0) {
      inClass--
      out += c
      i++
      continue
    }
    if (inClass > 0) {
      if (c === "&" && pattern[i + 1] === "&") return undefined
      out += c
      i++
      continue
    }
    if (c === "(" && pattern.startsWith("(?>", i)) {
      out += "(?:"
      i += 3
      continue
    }
    if (c === "(" && /^\(\?[imsx-]+[:)]/.test(pattern.slice(i))) {
      // inline flags inside the pattern: JS supports only (?i:…) style modifiers in recent engines
      const m = /^\(\?([imsx-]+)([:)])/.exec(pattern.slice(i)) as RegExpExecArray
      if (m[2] === ")" || m[1].includes("x")) return undefined
      out += m[0]
      i += m[0].length
      continue
    }
    if (c === ".") {
      // Java's `.` matches a whole surrogate pair (a code point); without the `u` flag JS's matches
      // one UTF-16 unit (regexp_replace('a🙂', '.', '-') is '--' in Spark)
      out += "(?:[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]|.)"
      i++
      continue
    }
    if ((c === "+" || c === "*" || c === "?" || c === "}") && pattern[i + 1] === "+") {
      // possessive quantifier: run as greedy
      out += c
      i += 2
      continue
    }
    out += c
    i++
  }
  if (inClass > 0) return undefined
  return { source: out, flags: unicode ? `${flags}u` : flags }
}

/**
 * Compiles a Java regex into a `RegExp` with `extraFlags` (`g` for scanning); `undefined` when
 * the pattern is invalid or cannot be translated (Spark reports it as an invalid pattern).
 */
export const javaRegex = (pattern: string, extraFlags = ""): RegExp | undefined => {
  const t = translateJavaRegex(pattern)
  if (t === undefined) return undefined
  try {
    return new RegExp(t.source, t.flags + extraFlags)
  } catch {
    return undefined
  }
}

/** The number of capturing groups of a regex. */
export const groupCount = (re: RegExp): number => {
  const probe = new RegExp(`${re.source}|`, re.flags.replace(/[gy]/g, ""))
  const m = probe.exec("") as RegExpExecArray
  return m.length - 1
}

type ReplacementPart = string | number | { readonly name: string }

/**
 * Parses a Java replacement string (`Matcher.appendReplacement`): `$n` (as many digits as
 * name an existing group), `${name}`, and `\x` for a literal `x`. `undefined` when it refers to
 * a group the pattern does not have, as Java rejects it.
 */
export const javaReplacement = (
  replacement: string,
  groups: number
):
  | ((match: ReadonlyArray<string | undefined>, named: Record<string, string | undefined> | undefined) => string)
  | undefined => {
  const parts: Array<ReplacementPart> = []
  let lit = ""
  for (let i = 0; i < replacement.length; i++) {
    const c = replacement[i]
    if (c === "\\") {
      i++
      if (i >= replacement.length) return undefined
      lit += replacement[i]
      continue
    }
    if (c === "$") {
      i++
      if (i >= replacement.length) return undefined
      if (replacement[i] === "{") {
        const end = replacement.indexOf("}", i)
        if (end < 0) return undefined
        if (lit !== "") parts.push(lit)
        lit = ""
        parts.push({ name: replacement.slice(i + 1, end) })
        i = end
        continue
      }
      const d = replacement.charCodeAt(i) - 48
      if (d < 0 || d > 9 || d > groups) return undefined
      let n = d
      while (i + 1 < replacement.length) {
        const nd = replacement.charCodeAt(i + 1) - 48
        if (nd < 0 || nd > 9 || n * 10 + nd > groups) break
        n = n * 10 + nd
        i++
      }
      if (lit !== "") parts.push(lit)
      lit = ""
      parts.push(n)
      continue
    }
    lit += c
  }
  if (lit !== "") parts.push(lit)
  if (parts.length === 1 && typeof parts[0] === "string") {
    const constant = parts[0]
    return () => constant
  }
  if (parts.length === 0) return () => ""
  return (match, named) => {
    let s = ""
    for (const p of parts) {
      if (typeof p === "string") s += p
      else if (typeof p === "number") s += match[p] ?? ""
      else s += named?.[p.name] ?? ""
    }
    return s
  }
}

/**
 * Java's `Pattern.split(input, limit)` as Spark calls it (`limit <= 0` keeps trailing empty
 * strings, since Spark turns 0 into -1): a zero-width match at the start gives no leading empty
 * string; with `limit > 0` at most `limit` parts, the last holding the rest.
 */
export const javaSplit = (input: string, re: RegExp, limit: number): Array<string> => {
  const out: Array<string> = []
  const limited = limit > 0
  let index = 0
  re.lastIndex = 0
  for (;;) {
    const m = re.exec(input)
    if (m === null) break
    const start = m.index
    const end = start + m[0].length
    if (m[0].length === 0) re.lastIndex = end + 1
    if (end === 0 && start === 0 && m[0].length === 0) continue
    if (!limited || out.length < limit - 1) {
      out.push(input.slice(index, start))
      index = end
    } else break
    if (re.lastIndex > input.length) break
  }
  if (index === 0) return [input]
  out.push(input.slice(index))
  return out
}
