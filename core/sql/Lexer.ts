/**
 * The tokens of Spark SQL expression text, as Spark's `SqlBaseLexer.g4` cuts them: keywords and
 * identifiers case-insensitively, backquoted identifiers (with doubled backquotes), string
 * literals in single or double quotes with Spark's backslash escapes (`R'…'` raw), the numeric
 * literal suffixes (`10L`, `1S`, `1Y`, `1.5D`, `1.5F`, `1.5BD`, `1e3`), operators by longest
 * match, and `--` / nested `/* … *\/` comments.
 *
 * Every token keeps its offset in the text, so that a syntax error can show Spark's
 * `(line l, pos p)` and caret line.
 *
 * @since 0.7.0
 */

/** The kinds of token the parser sees. */
export type TokenKind =
  /** An unquoted word: keyword or identifier (the parser decides by context). */
  | "word"
  /** A backquoted identifier, its text unescaped. */
  | "quoted"
  /** A string literal, its text unescaped. */
  | "string"
  | "integer"
  | "bigint"
  | "smallint"
  | "tinyint"
  | "decimal"
  | "exponent"
  | "double"
  | "float"
  | "bigdecimal"
  | "op"
  /** A character no rule matches (Spark's `UNRECOGNIZED`). */
  | "unrecognized"
  | "eof"

export interface Token {
  readonly kind: TokenKind
  /** The unescaped value (strings, quoted identifiers), the digits of a number, or the text. */
  readonly value: string
  /** The token as written. */
  readonly text: string
  readonly start: number
  readonly end: number
}

/** The lexer's own failure: an unclosed bracketed comment (Spark's `UNCLOSED_BRACKETED_COMMENT`). */
export interface LexError {
  readonly _tag: "UnclosedComment"
  readonly start: number
}

/** Operators, longest first so that the first match is the longest (`<=>` before `<=` before `<`). */
const OPERATORS = [
  "<=>",
  ">>>",
  "<<",
  ">>",
  "<=",
  ">=",
  "<>",
  "!=",
  "!>",
  "!<",
  "==",
  "=>",
  "->",
  "||",
  "::",
  "=",
  "<",
  ">",
  "+",
  "-",
  "*",
  "/",
  "%",
  "~",
  "&",
  "|",
  "^",
  ":",
  "?",
  "(",
  ")",
  ",",
  ".",
  "[",
  "]",
  "!",
  ";"
] as const

// Spark's WS rule (the Unicode spaces it lists)
const SPACES = new Set([
  " ",
  "\t",
  "\n",
  "\f",
  "\r",
  "\u000B",
  "\u00A0",
  "\u1680",
  "\u2028",
  "\u202F",
  "\u205F",
  "\u3000"
])
const isSpace = (c: string): boolean => SPACES.has(c) || (c >= "\u2000" && c <= "\u200A")

const WORD = /[\p{L}0-9_]+/uy

/** The numeric rules in the lexer's order; ties between equally long matches go to the first. */
const NUMBER_RULES: ReadonlyArray<readonly [TokenKind, RegExp, boolean]> = [
  ["bigint", /[0-9]+L/iy, false],
  ["smallint", /[0-9]+S/iy, false],
  ["tinyint", /[0-9]+Y/iy, false],
  ["integer", /[0-9]+/y, false],
  ["exponent", /[0-9]+E[+-]?[0-9]+/iy, false],
  ["exponent", /(?:[0-9]+\.[0-9]*|\.[0-9]+)E[+-]?[0-9]+/iy, true],
  ["decimal", /(?:[0-9]+\.[0-9]*|\.[0-9]+)/y, true],
  ["float", /[0-9]+(?:E[+-]?[0-9]+)?F/iy, false],
  ["float", /(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:E[+-]?[0-9]+)?F/iy, true],
  ["double", /[0-9]+(?:E[+-]?[0-9]+)?D/iy, false],
  ["double", /(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:E[+-]?[0-9]+)?D/iy, true],
  ["bigdecimal", /[0-9]+(?:E[+-]?[0-9]+)?BD/iy, false],
  ["bigdecimal", /(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:E[+-]?[0-9]+)?BD/iy, true]
]

/** Spark's `isValidDecimal`: a literal with a dot may not run into a letter, digit or `_`. */
const validDecimalEnd = (text: string, end: number): boolean => end >= text.length || !/[A-Za-z0-9_]/.test(text[end])

const matchAt = (re: RegExp, text: string, pos: number): number => {
  re.lastIndex = pos
  const m = re.exec(text)
  return m === null ? 0 : m[0].length
}

/**
 * Spark's `unescapeSQLString` (with `spark.sql.parser.escapedStringLiterals=false`) of the
 * body of a quoted literal: `\n`, `\t`, `\'`, octal `\101`, `\u0041`, `\U0001F600`; `\%` and
 * `\_` keep their backslash (they are LIKE escapes); any other escaped character is itself.
 */
export const unescapeSqlString = (body: string): string => {
  let out = ""
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]
    if (ch !== "\\" || i + 1 >= body.length) {
      out += ch
      continue
    }
    const n = body[i + 1]
    if (n === "u" && /^[0-9A-Fa-f]{4}$/.test(body.slice(i + 2, i + 6))) {
      out += String.fromCharCode(Number.parseInt(body.slice(i + 2, i + 6), 16))
      i += 5
      continue
    }
    if (n === "U" && /^[0-9A-Fa-f]{8}$/.test(body.slice(i + 2, i + 10))) {
      const cp = Number.parseInt(body.slice(i + 2, i + 10), 16)
      out += cp <= 0x10ffff ? String.fromCodePoint(cp) : body.slice(i, i + 10)
      i += 9
      continue
    }
    if (/^[0-3][0-7][0-7]$/.test(body.slice(i + 1, i + 4))) {
      out += String.fromCharCode(Number.parseInt(body.slice(i + 1, i + 4), 8))
      i += 3
      continue
    }
    i++
    switch (n) {
      case "0":
        out += "\u0000"
        break
      case "b":
        out += "\b"
        break
      case "n":
        out += "\n"
        break
      case "r":
        out += "\r"
        break
      case "t":
        out += "\t"
        break
      case "Z":
        out += "\u001A"
        break
      case "%":
        out += "\\%"
        break
      case "_":
        out += "\\_"
        break
      default:
        out += n
    }
  }
  return out
}

/** The end of a quoted literal starting at `pos` (the quote), or -1 when it is not closed. */
const quotedEnd = (text: string, pos: number, quote: string, escapes: boolean): number => {
  for (let i = pos + 1; i < text.length; i++) {
    const c = text[i]
    if (escapes && c === "\\") {
      i++
      continue
    }
    if (c === quote) return i + 1
  }
  return -1
}

/** Cuts `text` into tokens, ending with one `eof` token; or the unclosed comment it found. */
export const tokenize = (text: string): ReadonlyArray<Token> | LexError => {
  const tokens: Array<Token> = []
  let pos = 0
  const push = (kind: TokenKind, start: number, end: number, value = text.slice(start, end)) =>
    tokens.push({ kind, value, text: text.slice(start, end), start, end })
  while (pos < text.length) {
    const c = text[pos]
    if (isSpace(c)) {
      pos++
      continue
    }
    if (c === "-" && text[pos + 1] === "-") {
      // SIMPLE_COMMENT: to the end of the line (a backslash-newline continues it)
      pos += 2
      while (pos < text.length && text[pos] !== "\n" && text[pos] !== "\r") {
        pos += text[pos] === "\\" && text[pos + 1] === "\n" ? 2 : 1
      }
      continue
    }
    if (c === "/" && text[pos + 1] === "*" && text[pos + 2] !== "+") {
      // BRACKETED_COMMENT, nested
      const start = pos
      let depth = 0
      while (pos < text.length) {
        if (text[pos] === "/" && text[pos + 1] === "*") {
          depth++
          pos += 2
        } else if (text[pos] === "*" && text[pos + 1] === "/") {
          depth--
          pos += 2
          if (depth === 0) break
        } else pos++
      }
      if (depth > 0) return { _tag: "UnclosedComment", start }
      continue
    }
    if ((c === "r" || c === "R") && (text[pos + 1] === "'" || text[pos + 1] === '"')) {
      const end = quotedEnd(text, pos + 1, text[pos + 1], false)
      if (end > 0) {
        push("string", pos, end, text.slice(pos + 2, end - 1))
        pos = end
        continue
      }
    }
    if (c === "'" || c === '"') {
      const end = quotedEnd(text, pos, c, true)
      if (end < 0) {
        push("unrecognized", pos, pos + 1)
        pos++
        continue
      }
      push("string", pos, end, unescapeSqlString(text.slice(pos + 1, end - 1)))
      pos = end
      continue
    }
    if (c === "`") {
      let i = pos + 1
      let value = ""
      let closed = false
      while (i < text.length) {
        if (text[i] === "`") {
          if (text[i + 1] === "`") {
            value += "`"
            i += 2
            continue
          }
          closed = true
          i++
          break
        }
        value += text[i]
        i++
      }
      if (!closed) {
        push("unrecognized", pos, pos + 1)
        pos++
        continue
      }
      push("quoted", pos, i, value)
      pos = i
      continue
    }
    // numbers and words: the longest match wins, a number on a tie (its rules come first)
    const wordLen = matchAt(WORD, text, pos)
    let numKind: TokenKind | undefined
    let numLen = 0
    if (/[0-9.]/.test(c)) {
      for (const [kind, re, needsValidEnd] of NUMBER_RULES) {
        const n = matchAt(re, text, pos)
        if (n > numLen && (!needsValidEnd || validDecimalEnd(text, pos + n))) {
          numLen = n
          numKind = kind
        }
      }
    }
    if (numKind !== undefined && numLen >= wordLen) {
      push(numKind, pos, pos + numLen)
      pos += numLen
      continue
    }
    if (wordLen > 0) {
      push("word", pos, pos + wordLen)
      pos += wordLen
      continue
    }
    const op = OPERATORS.find((o) => text.startsWith(o, pos))
    if (op !== undefined) {
      push("op", pos, pos + op.length)
      pos += op.length
      continue
    }
    const cp = text.codePointAt(pos) ?? 0
    const width = cp > 0xffff ? 2 : 1
    push("unrecognized", pos, pos + width)
    pos += width
  }
  tokens.push({ kind: "eof", value: "", text: "", start: text.length, end: text.length })
  return tokens
}
