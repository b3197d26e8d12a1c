/**
 * Spark's string functions: `upper`, `lower`, `initcap`, `length`, `trim`, `lpad`, `substring`,
 * `concat`, `concat_ws`, `split`, `regexp_replace`, `regexp_extract`, `like`, `rlike`, … with
 * Spark's result types and null handling. Lengths and positions count Unicode code points, as
 * Spark's `UTF8String` does; regexes are Java regexes (see `JavaRegex.ts`).
 *
 * @since 0.1.0
 */
import { expressionError } from "./RuntimeErrors.ts"
import { stringToBytes } from "../Cast.ts"
import { nullableOf } from "../Compile.ts"
import * as T from "../DataType.ts"
import type { Expression } from "../Expression.ts"
import { callName, define, type FunctionSpec, invalid, literalValue, memoizeLast } from "./Define.ts"
import { groupCount, javaRegex, javaReplacement, javaSplit } from "./JavaRegex.ts"
import { type Evaluator, register, type Resolution, type ScalarFunctionDef } from "./Registry.ts"

const S = T.StringType
const I = T.IntegerType
const STRING_OR_BINARY = [T.StringType, T.BinaryType]

const surrogates = /[\uD800-\uDFFF]/

/** Length in code points (Spark's `numChars`). */
export const numChars = (s: string): number => {
  if (!surrogates.test(s)) return s.length
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0xdc00 || c > 0xdfff) n++
  }
  return n
}

/** Code-point substring `[start, end)`, both clamped. */
export const substringChars = (s: string, start: number, end: number): string => {
  if (!surrogates.test(s)) return s.slice(Math.max(start, 0), Math.max(end, 0))
  const cps = Array.from(s)
  return cps.slice(Math.max(start, 0), Math.max(end, 0)).join("")
}

/** Code-point index of `sub` in `s` at or after code point `from`; -1 when absent. */
const indexOfChars = (s: string, sub: string, from: number): number => {
  // UTF8String.indexOf: the empty string is found at 0 whatever `from` (locate('', '', 4) is 1)
  if (sub === "") return 0
  if (!surrogates.test(s)) return s.indexOf(sub, from) >= from ? s.indexOf(sub, from) : -1
  const cps = Array.from(s)
  const prefix = cps.slice(0, from).join("")
  const i = s.indexOf(sub, prefix.length)
  return i < 0 ? -1 : numChars(s.slice(0, i))
}

/** Spark's `UTF8String.substringSQL`: 1-based `pos`, negative counts from the end, 0 is 1. */
export const substringSQL = (s: string, pos: number, length: number): string => {
  const len = numChars(s)
  let start = pos > 0 ? pos - 1 : pos < 0 ? len + pos : 0
  const end = start + length
  start = Math.max(start, 0)
  if (start >= end) return ""
  return substringChars(s, start, end)
}

const trimChars = (s: string, chars: string, left: boolean, right: boolean): string => {
  const set = new Set(Array.from(chars))
  const cps = Array.from(s)
  let a = 0
  let b = cps.length
  if (left) while (a < b && set.has(cps[a])) a++
  if (right) while (b > a && set.has(cps[b - 1])) b--
  return cps.slice(a, b).join("")
}

// Spark's trim/ltrim/rtrim without a trim string remove only ' ' (0x20)
const trimSpaces = (s: string, left: boolean, right: boolean): string => {
  let a = 0
  let b = s.length
  if (left) while (a < b && s.charCodeAt(a) === 32) a++
  if (right) while (b > a && s.charCodeAt(b - 1) === 32) b--
  return a === 0 && b === s.length ? s : s.slice(a, b)
}

const trimFunction = (name: string, left: boolean, right: boolean): ScalarFunctionDef =>
  define({
    name,
    inputs: [S, S],
    minArgs: 1,
    result: S,
    strict: (info) =>
      info.argTypes.length === 1
        ? (s: string) => trimSpaces(s, left, right)
        : (s: string, chars: string) => trimChars(s, chars, left, right)
  })

const pad = (s: string, len: number, p: string, left: boolean): string => {
  const n = numChars(s)
  const spaces = len - n
  if (spaces <= 0 || p.length === 0) return substringChars(s, 0, len)
  const pn = numChars(p)
  const count = Math.floor(spaces / pn)
  const fill = p.repeat(count) + substringChars(p, 0, spaces - pn * count)
  return left ? fill + s : s + fill
}

const padFunction = (name: string, left: boolean): ScalarFunctionDef =>
  define({
    name,
    inputs: [S, I, S],
    minArgs: 2,
    result: S,
    strict: (info) =>
      info.argTypes.length === 2
        ? (s: string, len: number) => pad(s, len, " ", left)
        : (s: string, len: number, p: string) => pad(s, len, p, left)
  })

/**
 * Title case of one (lower-cased) character: Unicode's titlecase mapping, which Spark's
 * `UTF8String.toTitleCase` applies. It differs from the upper case where the upper case is
 * several letters (`ß` → `Ss`, `ﬁ` → `Fi`, not `SS`, `FI`) and for the digraphs with a title
 * form of their own (`ǆ` → `ǅ`) and the Greek letters with ypogegrammeni (`ᾳ` → `ᾼ`).
 */
const TITLE_CASE: ReadonlyMap<string, string> = new Map([
  ["\u01C6", "\u01C5"],
  ["\u01C9", "\u01C8"],
  ["\u01CC", "\u01CB"],
  ["\u01F3", "\u01F2"],
  ["\u0149", "\u02BCN"],
  ["\u1FB3", "\u1FBC"],
  ["\u1FC3", "\u1FCC"],
  ["\u1FF3", "\u1FFC"]
])

const titleCase = (ch: string): string => {
  const special = TITLE_CASE.get(ch)
  if (special !== undefined) return special
  const cp = ch.codePointAt(0)!
  // ᾀ-ᾇ, ᾐ-ᾗ, ᾠ-ᾧ title-case to ᾈ-ᾏ, ᾘ-ᾟ, ᾨ-ᾯ
  if ((cp >= 0x1f80 && cp <= 0x1f87) || (cp >= 0x1f90 && cp <= 0x1f97) || (cp >= 0x1fa0 && cp <= 0x1fa7)) {
    return String.fromCodePoint(cp + 8)
  }
  const upper = ch.toUpperCase()
  if (upper.length === 1) return upper
  const first = String.fromCodePoint(upper.codePointAt(0)!)
  return first + upper.slice(first.length).toLowerCase()
}

// Spark's initcap (issue #21, deviation 2: initcap("ßa b") is "Ssa B").
const initcap = (s: string): string => {
  const lower = s.toLowerCase()
  let out = ""
  let start = true
  for (const ch of lower) {
    out += start ? titleCase(ch) : ch
    start = ch === " "
  }
  return out
}

const translate = (from: string, to: string): ((s: string) => string) => {
  const dict = new Map<string, string | null>()
  const toChars = Array.from(to)
  Array.from(from).forEach((c, i) => {
    if (!dict.has(c)) dict.set(c, i < toChars.length ? toChars[i] : null)
  })
  return (s) => {
    let out = ""
    for (const ch of s) {
      const r = dict.get(ch)
      if (r === undefined) out += ch
      else if (r !== null) out += r
    }
    return out
  }
}

const HEX = "0123456789ABCDEF"

const hexOfBytes = (b: Uint8Array): string => {
  let s = ""
  for (let i = 0; i < b.length; i++) s += HEX[b[i] >> 4] + HEX[b[i] & 15]
  return s
}

const unhex = (s: string): Uint8Array | null => {
  const t = s.length % 2 === 1 ? `0${s}` : s
  const out = new Uint8Array(t.length / 2)
  for (let i = 0; i < out.length; i++) {
    const hi = parseInt(t[2 * i], 16)
    const lo = parseInt(t[2 * i + 1], 16)
    if (Number.isNaN(hi) || Number.isNaN(lo)) return null
    out[i] = hi * 16 + lo
  }
  return out
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

const base64 = (b: Uint8Array): string => {
  let s = ""
  for (let i = 0; i < b.length; i += 3) {
    const n = (b[i] << 16) | ((b[i + 1] ?? 0) << 8) | (b[i + 2] ?? 0)
    s += B64[(n >> 18) & 63] + B64[(n >> 12) & 63]
    s += i + 1 < b.length ? B64[(n >> 6) & 63] : "="
    s += i + 2 < b.length ? B64[n & 63] : "="
  }
  return s
}

const unbase64 = (s: string): Uint8Array | null => {
  const clean = s.replace(/[\s=]/g, "")
  const out: Array<number> = []
  let acc = 0
  let bits = 0
  for (const ch of clean) {
    const v = B64.indexOf(ch === "-" ? "+" : ch === "_" ? "/" : ch)
    if (v < 0) return null
    acc = (acc << 6) | v
    bits += 6
    if (bits >= 8) {
      bits -= 8
      out.push((acc >> bits) & 255)
    }
  }
  return Uint8Array.from(out)
}

const levenshtein = (a: string, b: string): number => {
  const x = Array.from(a)
  const y = Array.from(b)
  if (x.length === 0) return y.length
  if (y.length === 0) return x.length
  let prev = new Array<number>(y.length + 1)
  let cur = new Array<number>(y.length + 1)
  for (let j = 0; j <= y.length; j++) prev[j] = j
  for (let i = 1; i <= x.length; i++) {
    cur[0] = i
    for (let j = 1; j <= y.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1))
    }
    ;[prev, cur] = [cur, prev]
  }
  return prev[y.length]
}

/** Spark's `UTF8String.subStringIndex`: occurrences may overlap, as Spark searches from `idx + 1`. */
const substringIndex = (s: string, delim: string, count: number): string => {
  if (delim.length === 0 || count === 0) return ""
  if (count > 0) {
    let idx = -1
    for (let k = count; k > 0; k--) {
      idx = s.indexOf(delim, idx + 1)
      if (idx < 0) return s
    }
    return s.slice(0, idx)
  }
  let idx = s.length
  for (let k = -count; k > 0; k--) {
    if (idx - 1 < 0) return s
    idx = s.lastIndexOf(delim, idx - 1)
    if (idx < 0) return s
  }
  return s.slice(idx + delim.length)
}

// ---------------------------------------------------------------------------------------------
// Regex-based functions
// ---------------------------------------------------------------------------------------------

/** Spark's `[INVALID_PARAMETER_VALUE.PATTERN]` for a literal pattern that does not compile. */
const invalidPattern = (name: string, pattern: string): Resolution =>
  invalid(
    `[INVALID_PARAMETER_VALUE.PATTERN] The value of parameter(s) \`regexp\` in \`${name}\` is invalid: '${pattern}'.`
  )

/** Checks a literal regex argument at analysis time, so that a bad pattern is an `AnalysisError`. */
const checkLiteralRegex = (name: string, args: ReadonlyArray<Expression>, i: number): Resolution | undefined => {
  const lit = literalValue(args[i])
  if (lit === undefined || typeof lit.value !== "string") return undefined
  return javaRegex(lit.value) === undefined ? invalidPattern(name, lit.value) : undefined
}

/**
 * A regex per pattern value, compiled once for a literal pattern and memoized on the last value
 * otherwise. Invalid non-literal patterns give `undefined` (the call returns null).
 */
const regexCache = (flags: string): ((p: string) => RegExp | undefined) =>
  memoizeLast((p: string) => javaRegex(p, flags))

const escapeRegex = (c: string): string => c.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&")

/** Spark's `StringUtils.escapeLikeRegex`: the LIKE pattern as an anchored, dot-all regex. */
export const likeRegex = (pattern: string, escapeChar: string, ignoreCase: boolean): RegExp | undefined => {
  let out = ""
  const cps = Array.from(pattern)
  for (let i = 0; i < cps.length; i++) {
    const c = cps[i]
    if (c === escapeChar) {
      if (i + 1 >= cps.length) return undefined // it is not allowed to end with the escape character
      const n = cps[++i]
      if (n === "_" || n === "%" || n === escapeChar) out += escapeRegex(n)
      else return undefined // the escape character is not allowed to precede n
    } else if (c === "_") out += "."
    else if (c === "%") out += "[\\s\\S]*"
    else out += escapeRegex(c)
  }
  return new RegExp(`^${out}$`, ignoreCase ? "isu" : "su")
}

const likeFunction = (name: string, ignoreCase: boolean): ScalarFunctionDef =>
  define({
    name,
    inputs: [S, S, S],
    minArgs: 2,
    result: T.BooleanType,
    strict: (info) => {
      const escLit = literalValue(info.argExprs[2])
      const esc = escLit === undefined ? "\\" : String(escLit.value)
      const cache = memoizeLast((p: string) => likeRegex(p, esc, ignoreCase))
      return (s: string, p: string) => {
        const re = cache(p)
        return re === undefined ? null : re.test(s)
      }
    }
  })

const likeResolve = (def: ScalarFunctionDef, name: string): ScalarFunctionDef => ({
  ...def,
  resolve: (argTypes, args) => {
    const r = def.resolve(argTypes, args)
    if (r._tag === "Invalid") return r
    const lit = literalValue(args[1])
    const escLit = literalValue(args[2])
    if (escLit !== undefined && (typeof escLit.value !== "string" || Array.from(escLit.value).length !== 1)) {
      return invalid(
        `[INVALID_ESCAPE_CHAR] The escape character of \`${name}\` must be a string literal of length one.`
      )
    }
    if (lit !== undefined && typeof lit.value === "string") {
      const esc = escLit === undefined ? "\\" : (escLit.value as string)
      if (likeRegex(lit.value, esc, false) === undefined) {
        return invalid(
          `[INVALID_FORMAT.ESC_IN_THE_MIDDLE] The format is invalid: '${lit.value}'. The escape character is not allowed to precede a character other than '_', '%' or itself, nor end the pattern.`
        )
      }
    }
    return r
  }
})

const withRegexCheck = (def: ScalarFunctionDef, patternArg: number): ScalarFunctionDef => ({
  ...def,
  resolve: (argTypes, args) => {
    const r = def.resolve(argTypes, args)
    if (r._tag === "Invalid") return r
    return checkLiteralRegex(def.name, args, patternArg) ?? r
  }
})

const rlike = (name: string): ScalarFunctionDef =>
  withRegexCheck(
    define({
      name,
      inputs: [S, S],
      result: T.BooleanType,
      strict: () => {
        const cache = regexCache("")
        return (s: string, p: string) => {
          const re = cache(p)
          return re === undefined ? null : re.test(s)
        }
      }
    }),
    1
  )

/** A lone surrogate (a match split a pair: Java's regex steps by UTF-16 unit after an empty match). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * The string Spark's `UTF8String.fromString` keeps of a Java string: `String.getBytes(UTF_8)`
 * encodes a lone surrogate as `?` (`regexp_replace('🙂', '', '-')` is `-?-?-` in Spark).
 */
const javaUtf8 = (s: string): string => (surrogates.test(s) ? s.replace(LONE_SURROGATE, "?") : s)

/** Spark's `regexp_replace(str, regexp, rep[, position])`. */
const regexpReplace = withRegexCheck(
  define({
    name: "regexp_replace",
    inputs: [S, S, S, I],
    minArgs: 3,
    result: S,
    strict: () => {
      const cache = memoizeLast((p: string) => {
        const re = javaRegex(p, "g")
        return re === undefined ? undefined : { re, groups: groupCount(re) }
      })
      let lastRep: string | undefined
      let lastGroups = -1
      let replacer: ReturnType<typeof javaReplacement>
      return (s: string, p: string, rep: string, position?: number) => {
        const c = cache(p)
        if (c === undefined) return null
        if (rep !== lastRep || c.groups !== lastGroups) {
          replacer = javaReplacement(rep, c.groups)
          lastRep = rep
          lastGroups = c.groups
        }
        const f = replacer
        const pos = position === undefined ? 0 : position - 1
        if (pos < 0) return null
        if (pos !== 0 && pos >= s.length) return s
        if (f === undefined) {
          // Java's appendReplacement rejects the replacement only at a match: no match leaves s,
          // a match fails the query (RegExpReplace.nullSafeEval, invalidRegexpReplaceError).
          c.re.lastIndex = 0
          if (!c.re.test(pos === 0 ? s : s.slice(pos))) return s
          throw expressionError(
            "INVALID_REGEXP_REPLACE",
            "22023",
            `Could not perform regexp_replace for source = "${s}", pattern = "${p}", replacement = "${rep}" and position = ${pos + 1}.`
          )
        }
        const fn = (...m: Array<unknown>): string => {
          const last = m[m.length - 1]
          const named =
            typeof last === "object" && last !== null ? (last as Record<string, string | undefined>) : undefined
          const groups = m.slice(0, c.groups + 1) as Array<string | undefined>
          return f(groups, named)
        }
        c.re.lastIndex = 0
        return javaUtf8(pos === 0 ? s.replace(c.re, fn) : s.slice(0, pos) + s.slice(pos).replace(c.re, fn))
      }
    }
  }),
  1
)

const regexGroupIndexCheck = (name: string, args: ReadonlyArray<Expression>): Resolution | undefined => {
  const p = literalValue(args[1])
  const idx = literalValue(args[2])
  if (p === undefined || typeof p.value !== "string" || idx === undefined || typeof idx.value !== "number")
    return undefined
  const re = javaRegex(p.value)
  if (re === undefined) return undefined
  const groups = groupCount(re)
  if (idx.value < 0) {
    return invalid(
      `[INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX] The value of parameter(s) \`idx\` in \`${name}\` is invalid: Expects group index >= 0, but got ${idx.value}.`
    )
  }
  if (idx.value > groups) {
    return invalid(
      `[INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX] The value of parameter(s) \`idx\` in \`${name}\` is invalid: Expects group index between 0 and ${groups}, but got ${idx.value}.`
    )
  }
  return undefined
}

const withGroupCheck = (def: ScalarFunctionDef): ScalarFunctionDef => ({
  ...def,
  resolve: (argTypes, args) => {
    const r = def.resolve(argTypes, args)
    if (r._tag === "Invalid") return r
    return regexGroupIndexCheck(def.name, args) ?? r
  }
})

const regexpExtract = withGroupCheck(
  withRegexCheck(
    define({
      name: "regexp_extract",
      inputs: [S, S, I],
      minArgs: 2,
      result: S,
      strict: () => {
        const cache = memoizeLast((p: string) => {
          const re = javaRegex(p)
          return re === undefined ? undefined : { re, groups: groupCount(re) }
        })
        return (s: string, p: string, idx = 1) => {
          const c = cache(p)
          if (c === undefined || idx < 0 || idx > c.groups) return null
          const m = c.re.exec(s)
          if (m === null) return ""
          return m[idx] ?? ""
        }
      }
    }),
    1
  )
)

const regexpExtractAll = withGroupCheck(
  withRegexCheck(
    define({
      name: "regexp_extract_all",
      inputs: [S, S, I],
      minArgs: 2,
      result: T.array(S, false),
      strict: () => {
        const cache = memoizeLast((p: string) => {
          const re = javaRegex(p, "g")
          return re === undefined ? undefined : { re, groups: groupCount(re) }
        })
        return (s: string, p: string, idx = 1) => {
          const c = cache(p)
          if (c === undefined || idx < 0 || idx > c.groups) return null
          const out: Array<string> = []
          c.re.lastIndex = 0
          for (;;) {
            const m = c.re.exec(s)
            if (m === null) break
            out.push(m[idx] ?? "")
            if (m[0].length === 0) c.re.lastIndex++
          }
          return out
        }
      }
    }),
    1
  )
)

/** Spark's `split(str, regex[, limit])`; an empty pattern splits into characters. */
const split = withRegexCheck(
  define({
    name: "split",
    inputs: [S, S, I],
    minArgs: 2,
    result: T.array(S, false),
    strict: () => {
      const cache = regexCache("g")
      return (s: string, p: string, limit = -1) => {
        const lim = limit === 0 ? -1 : limit
        if (p.length === 0 && s.length > 0) {
          // UTF8String.split: an empty pattern splits into characters, the last keeping the rest
          const cps = Array.from(s)
          const n = lim > cps.length || lim <= 0 ? cps.length : lim
          const out = cps.slice(0, n - 1)
          out.push(cps.slice(n - 1).join(""))
          return out
        }
        const re = cache(p)
        return re === undefined ? null : javaSplit(s, re, lim)
      }
    }
  }),
  1
)

// ---------------------------------------------------------------------------------------------
// concat / concat_ws
// ---------------------------------------------------------------------------------------------

/** `concat(a, b, …)`: strings (numbers and dates cast to string) or arrays; null if any is null. */
const concat: ScalarFunctionDef = {
  name: "concat",
  resolve: (argTypes, args) => {
    if (
      argTypes.length > 0 &&
      argTypes.every((t) => t._tag === "array" || t._tag === "null") &&
      argTypes.some((t) => t._tag === "array")
    ) {
      let elem: T.DataType = T.NullType
      for (const t of argTypes) {
        if (t._tag !== "array") continue
        const c = T.commonType(elem, t.elementType)
        if (c === undefined) {
          return invalid(
            `[DATATYPE_MISMATCH.DATA_DIFF_TYPES] Cannot resolve "${callName("concat", args)}" due to data type mismatch: Input to \`concat\` should all be the same type, but it's [${argTypes.map((x) => `"${T.simpleString(x).toUpperCase()}"`).join(", ")}].`
          )
        }
        elem = c
      }
      const target = T.array(
        elem,
        argTypes.some((t) => t._tag !== "array" || t.containsNull)
      )
      return {
        _tag: "Resolved",
        resultType: target,
        nullable: args.some(nullableOf),
        castArgsTo: argTypes.map((t) => (T.sameType(t, target) ? undefined : target))
      }
    }
    const binary = argTypes.length > 0 && argTypes.every((t) => t._tag === "binary")
    const castArgsTo: Array<T.DataType | undefined> = []
    for (let i = 0; i < argTypes.length; i++) {
      const t = argTypes[i]
      if (binary || t._tag === "string") castArgsTo.push(undefined)
      else if (t._tag === "array" || t._tag === "map" || t._tag === "struct") {
        return invalid(
          `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve "${callName("concat", args)}" due to data type mismatch: The ${i + 1 === 1 ? "first" : i + 1 === 2 ? "second" : `${i + 1}th`} parameter requires the ("STRING" or "BINARY" or "ARRAY") type, however it has the type "${T.simpleString(t).toUpperCase()}".`
        )
      } else castArgsTo.push(T.StringType)
    }
    return {
      _tag: "Resolved",
      resultType: binary ? T.BinaryType : T.StringType,
      nullable: args.some(nullableOf),
      castArgsTo
    }
  },
  compile: (args, argTypes, resultType) => {
    const n = args.length
    if (resultType._tag === "array") {
      return (row) => {
        const out: Array<unknown> = []
        for (let i = 0; i < n; i++) {
          const a = args[i](row) as ReadonlyArray<unknown> | null
          if (a == null) return null
          for (let j = 0; j < a.length; j++) out.push(a[j])
        }
        return out
      }
    }
    if (resultType._tag === "binary") {
      return (row) => {
        const parts: Array<Uint8Array> = []
        let len = 0
        for (let i = 0; i < n; i++) {
          const b = args[i](row) as Uint8Array | null
          if (b == null) return null
          parts.push(b)
          len += b.length
        }
        const out = new Uint8Array(len)
        let off = 0
        for (const p of parts) {
          out.set(p, off)
          off += p.length
        }
        return out
      }
    }
    if (n === 0) return () => ""
    if (n === 2) {
      const [a, b] = args
      return (row) => {
        const x = a(row)
        if (x == null) return null
        const y = b(row)
        return y == null ? null : (x as string) + (y as string)
      }
    }
    void argTypes
    return (row) => {
      let s = ""
      for (let i = 0; i < n; i++) {
        const x = args[i](row)
        if (x == null) return null
        s += x as string
      }
      return s
    }
  }
}

/** `concat_ws(sep, a, b, …)`: skips nulls; arguments are strings or arrays of strings. */
const concatWs: ScalarFunctionDef = {
  name: "concat_ws",
  resolve: (argTypes, args) => {
    if (argTypes.length < 1) {
      return invalid(
        `[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The \`concat_ws\` requires > 0 parameters but the actual number is 0. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix.`
      )
    }
    const castArgsTo: Array<T.DataType | undefined> = []
    for (let i = 0; i < argTypes.length; i++) {
      const t = argTypes[i]
      if (t._tag === "string") castArgsTo.push(undefined)
      else if (t._tag === "array" && t.elementType._tag === "string" && i > 0) castArgsTo.push(undefined)
      else if (
        t._tag === "array" &&
        i > 0 &&
        t.elementType._tag !== "array" &&
        t.elementType._tag !== "struct" &&
        t.elementType._tag !== "map"
      )
        castArgsTo.push(T.array(T.StringType, t.containsNull))
      else if (t._tag === "array" || t._tag === "map" || t._tag === "struct") {
        return invalid(
          `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve "${callName("concat_ws", args)}" due to data type mismatch: The ${i === 0 ? "first" : i === 1 ? "second" : i === 2 ? "third" : `${i + 1}th`} parameter requires the ("STRING" or "ARRAY<STRING>") type, however it has the type "${T.simpleString(t).toUpperCase()}".`
        )
      } else castArgsTo.push(T.StringType)
    }
    const sep = args[0]
    return {
      _tag: "Resolved",
      resultType: T.StringType,
      // Spark: nullable exactly when the separator is
      nullable: !(sep._tag === "Literal" && sep.value !== null),
      castArgsTo
    }
  },
  compile: (args, argTypes) => {
    const sep = args[0]
    const rest = args.slice(1)
    const isArray = argTypes.slice(1).map((t) => t._tag === "array")
    const n = rest.length
    return (row) => {
      const sv = sep(row)
      if (sv == null) return null
      const sp = sv as string
      let s = ""
      let first = true
      for (let i = 0; i < n; i++) {
        const v = rest[i](row)
        if (v == null) continue
        if (isArray[i]) {
          const a = v as ReadonlyArray<string | null>
          for (let j = 0; j < a.length; j++) {
            const x = a[j]
            if (x == null) continue
            s += first ? x : sp + x
            first = false
          }
        } else {
          s += first ? (v as string) : sp + (v as string)
          first = false
        }
      }
      return s
    }
  }
}

/** `locate(substr, str[, pos])`: 1-based, 0 when absent; a null `pos` gives 0 (Hive's rule, kept by Spark). */
const locate = define({
  name: "locate",
  inputs: [S, S, I],
  minArgs: 2,
  result: I,
  compile: (args) => {
    const [sub, str] = args
    const pos: Evaluator = args[2] ?? (() => 1)
    return (row) => {
      const p = pos(row)
      if (p == null) return 0
      const r = sub(row)
      if (r == null) return null
      const l = str(row)
      if (l == null) return null
      const start = p as number
      if (start < 1) return 0
      return indexOfChars(l as string, r as string, start - 1) + 1
    }
  }
})

const reverse = define({
  name: "reverse",
  inputs: [[T.StringType, "array"]],
  result: (types) => types[0],
  strict: (info) =>
    info.argTypes[0]._tag === "array"
      ? (a: ReadonlyArray<unknown>) => a.slice().reverse()
      : (s: string) => Array.from(s).reverse().join("")
})

const lengthOf = (name: string): FunctionSpec => ({
  name,
  inputs: [STRING_OR_BINARY],
  result: I,
  strict: (info) => (info.argTypes[0]._tag === "binary" ? (b: Uint8Array) => b.length : (s: string) => numChars(s))
})

const hex = define({
  name: "hex",
  inputs: [[T.LongType, T.BinaryType, T.StringType]],
  result: S,
  strict: (info) => {
    switch (info.argTypes[0]._tag) {
      case "binary":
        return (b: Uint8Array) => hexOfBytes(b)
      case "string":
        return (s: string) => hexOfBytes(stringToBytes(s))
      default:
        // Long.toHexString: two's complement for negative numbers
        return (n: number) =>
          BigInt.asUintN(64, BigInt(Math.trunc(n)))
            .toString(16)
            .toUpperCase()
    }
  }
})

const binaryPredicate = (name: string, f: (a: string, b: string) => boolean): ScalarFunctionDef =>
  define({
    name,
    inputs: [STRING_OR_BINARY, STRING_OR_BINARY],
    result: (types, args) =>
      types[0]._tag !== types[1]._tag
        ? invalid(
            `[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve "${callName(name, args)}" due to data type mismatch: both arguments must be strings or both binary.`
          )
        : T.BooleanType,
    strict: (info) =>
      info.argTypes[0]._tag === "binary" ? (a: Uint8Array, b: Uint8Array) => f(bytesToLatin(a), bytesToLatin(b)) : f
  })

// Byte-wise comparison of binaries through a 1:1 byte-to-char mapping
const bytesToLatin = (b: Uint8Array): string => {
  let s = ""
  for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i])
  return s
}

register(
  define({ name: "upper", inputs: [S], result: S, strict: () => (s: string) => s.toUpperCase() }),
  define({ name: "ucase", inputs: [S], result: S, strict: () => (s: string) => s.toUpperCase() }),
  define({ name: "lower", inputs: [S], result: S, strict: () => (s: string) => s.toLowerCase() }),
  define({ name: "lcase", inputs: [S], result: S, strict: () => (s: string) => s.toLowerCase() }),
  define({ name: "initcap", inputs: [S], result: S, strict: () => initcap }),
  define(lengthOf("length")),
  define(lengthOf("char_length")),
  define(lengthOf("character_length")),
  define(lengthOf("len")),
  define({
    name: "octet_length",
    inputs: [STRING_OR_BINARY],
    result: I,
    strict: (info) =>
      info.argTypes[0]._tag === "binary" ? (b: Uint8Array) => b.length : (s: string) => stringToBytes(s).length
  }),
  define({
    name: "bit_length",
    inputs: [STRING_OR_BINARY],
    result: I,
    strict: (info) =>
      info.argTypes[0]._tag === "binary" ? (b: Uint8Array) => b.length * 8 : (s: string) => stringToBytes(s).length * 8
  }),
  trimFunction("trim", true, true),
  trimFunction("btrim", true, true),
  trimFunction("ltrim", true, false),
  trimFunction("rtrim", false, true),
  padFunction("lpad", true),
  padFunction("rpad", false),
  reverse,
  define({
    name: "instr",
    inputs: [S, S],
    result: I,
    strict: () => (s: string, sub: string) => indexOfChars(s, sub, 0) + 1
  }),
  locate,
  define({
    name: "repeat",
    inputs: [S, I],
    result: S,
    strict: () => (s: string, n: number) => (n <= 0 ? "" : s.repeat(n))
  }),
  define({
    name: "translate",
    inputs: [S, S, S],
    result: S,
    strict: () => {
      const cache = memoizeLast((k: string) => {
        const i = k.indexOf("\u0000")
        return translate(k.slice(0, i), k.slice(i + 1))
      })
      return (s: string, from: string, to: string) => cache(`${from}\u0000${to}`)(s)
    }
  }),
  define({
    name: "ascii",
    inputs: [S],
    result: I,
    strict: () => (s: string) => (s.length === 0 ? 0 : (s.codePointAt(0) as number))
  }),
  define({
    name: "chr",
    inputs: [T.LongType],
    result: S,
    strict: () => (n: number) => (n < 0 ? "" : String.fromCharCode(n % 256))
  }),
  define({
    name: "char",
    inputs: [T.LongType],
    result: S,
    strict: () => (n: number) => (n < 0 ? "" : String.fromCharCode(n % 256))
  }),
  hex,
  define({ name: "unhex", inputs: [S], result: T.BinaryType, nullable: "always", strict: () => unhex }),
  define({ name: "base64", inputs: [T.BinaryType], result: S, strict: () => base64 }),
  define({ name: "unbase64", inputs: [S], result: T.BinaryType, nullable: "always", strict: () => unbase64 }),
  concat,
  concatWs,
  define({
    name: "substring",
    inputs: [S, I, I],
    minArgs: 2,
    result: S,
    strict: (info) =>
      info.argTypes.length === 2
        ? (s: string, pos: number) => substringSQL(s, pos, 2147483647)
        : (s: string, pos: number, len: number) => substringSQL(s, pos, len)
  }),
  define({
    name: "substr",
    inputs: [S, I, I],
    minArgs: 2,
    result: S,
    strict: (info) =>
      info.argTypes.length === 2
        ? (s: string, pos: number) => substringSQL(s, pos, 2147483647)
        : (s: string, pos: number, len: number) => substringSQL(s, pos, len)
  }),
  define({
    name: "left",
    inputs: [S, I],
    result: S,
    strict: () => (s: string, n: number) => substringSQL(s, 1, n)
  }),
  define({
    name: "right",
    inputs: [S, I],
    result: S,
    strict: () => (s: string, n: number) => (n <= 0 ? "" : substringSQL(s, -n, 2147483647))
  }),
  define({
    name: "substring_index",
    inputs: [S, S, I],
    result: S,
    strict: () => substringIndex
  }),
  define({ name: "levenshtein", inputs: [S, S], result: I, strict: () => levenshtein }),
  binaryPredicate("startswith", (a, b) => a.startsWith(b)),
  binaryPredicate("endswith", (a, b) => a.endsWith(b)),
  binaryPredicate("contains", (a, b) => a.includes(b)),
  split,
  regexpReplace,
  regexpExtract,
  regexpExtractAll,
  rlike("rlike"),
  rlike("regexp"),
  rlike("regexp_like"),
  likeResolve(likeFunction("like", false), "like"),
  likeResolve(likeFunction("ilike", true), "ilike")
)
