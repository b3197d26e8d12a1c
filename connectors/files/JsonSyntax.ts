/**
 * A JSON reader that behaves like the Jackson parser Spark's JSON source uses: it keeps integer
 * and floating-point tokens apart (Spark infers `1` as `long` and `1.0` as `double`, which
 * `JSON.parse` cannot tell apart), remembers where every value starts and ends (a `string`
 * column receives the exact source text of a non-string value, Spark's
 * `spark.sql.json.enableExactStringParsing`), and honours the Jackson features that Spark's
 * JSON options switch on and off (single quotes, `NaN`/`Infinity`, comments, …).
 *
 * Only the first value of a record is read; what follows it is ignored, as Jackson does when
 * Spark reads one record per line.
 *
 * @since 0.1.0
 */

/** One parsed JSON value with its source span `[start, end)`. */
export type JsonValue =
  | {
      readonly k: "obj"
      readonly keys: ReadonlyArray<string>
      readonly values: ReadonlyArray<JsonValue>
      readonly start: number
      readonly end: number
    }
  | { readonly k: "arr"; readonly items: ReadonlyArray<JsonValue>; readonly start: number; readonly end: number }
  | { readonly k: "str"; readonly v: string; readonly start: number; readonly end: number }
  /** An integer token; `text` is its source (`-12`), kept so longs beyond 2^53 can be range-checked. */
  | { readonly k: "int"; readonly text: string; readonly start: number; readonly end: number }
  /** A floating-point token (`1.5`, `1e3`, `NaN`, `-Infinity`). */
  | { readonly k: "float"; readonly v: number; readonly start: number; readonly end: number }
  | { readonly k: "bool"; readonly v: boolean; readonly start: number; readonly end: number }
  | { readonly k: "null"; readonly start: number; readonly end: number }

/** The Jackson features Spark's JSON options control (Spark's defaults in brackets). */
export interface JsonFeatures {
  /** `allowComments` [false]: `/* … *\/` and `// …`. */
  readonly allowComments: boolean
  /** `allowUnquotedFieldNames` [false]. */
  readonly allowUnquotedFieldNames: boolean
  /** `allowSingleQuotes` [true]. */
  readonly allowSingleQuotes: boolean
  /** `allowNumericLeadingZeros` [false]. */
  readonly allowNumericLeadingZeros: boolean
  /** `allowNonNumericNumbers` [true]: `NaN`, `Infinity`, `+Infinity`, `+INF`, `-Infinity`, `-INF`. */
  readonly allowNonNumericNumbers: boolean
  /** `allowBackslashEscapingAnyCharacter` [false]. */
  readonly allowBackslashEscapingAnyCharacter: boolean
  /** `allowUnquotedControlChars` [false]. */
  readonly allowUnquotedControlChars: boolean
}

/** Spark's defaults for the Jackson features. */
export const defaultFeatures: JsonFeatures = {
  allowComments: false,
  allowUnquotedFieldNames: false,
  allowSingleQuotes: true,
  allowNumericLeadingZeros: false,
  allowNonNumericNumbers: true,
  allowBackslashEscapingAnyCharacter: false,
  allowUnquotedControlChars: false
}

/** A syntax error at a position of the record. */
export class JsonSyntaxError {
  readonly message: string
  readonly position: number
  constructor(message: string, position: number) {
    this.message = message
    this.position = position
  }
}

/** Jackson's default `StreamReadConstraints.maxNestingDepth`. */
const MAX_DEPTH = 1000

const isDigit = (c: number): boolean => c >= 48 && c <= 57
const isIdentChar = (c: number): boolean =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36 || c > 127

/**
 * Parses the first JSON value of `text[start, end)`. Returns `undefined` when the range holds
 * only whitespace (Spark skips such records), the value, or a `JsonSyntaxError`.
 */
export const parseJson = (
  text: string,
  start: number,
  end: number,
  features: JsonFeatures
): JsonValue | undefined | JsonSyntaxError => {
  let pos = start
  let depth = 0

  const fail = (message: string): never => {
    throw new JsonSyntaxError(message, pos)
  }

  const skipWs = (): void => {
    while (pos < end) {
      const c = text.charCodeAt(pos)
      if (c === 32 || c === 9 || c === 10 || c === 13) {
        pos++
      } else if (c === 47 && features.allowComments) {
        const n = pos + 1 < end ? text.charCodeAt(pos + 1) : -1
        if (n === 42) {
          const close = text.indexOf("*/", pos + 2)
          if (close < 0 || close + 2 > end) fail("Unexpected end of input in a comment")
          pos = close + 2
        } else if (n === 47) {
          pos += 2
          while (pos < end && text.charCodeAt(pos) !== 10 && text.charCodeAt(pos) !== 13) pos++
        } else {
          fail("Unexpected character '/'")
        }
      } else {
        return
      }
    }
  }

  const parseString = (quote: number): string => {
    // pos is at the opening quote
    pos++
    let out = ""
    let runStart = pos
    while (true) {
      if (pos >= end) fail("Unexpected end of input in a string")
      const c = text.charCodeAt(pos)
      if (c === quote) {
        out += text.slice(runStart, pos)
        pos++
        return out
      }
      if (c === 92) {
        out += text.slice(runStart, pos)
        pos++
        if (pos >= end) fail("Unexpected end of input in an escape sequence")
        const e = text.charCodeAt(pos)
        switch (e) {
          case 34:
            out += '"'
            break
          case 92:
            out += "\\"
            break
          case 47:
            out += "/"
            break
          case 98:
            out += "\b"
            break
          case 102:
            out += "\f"
            break
          case 110:
            out += "\n"
            break
          case 114:
            out += "\r"
            break
          case 116:
            out += "\t"
            break
          case 117: {
            const hex = text.slice(pos + 1, pos + 5)
            if (pos + 5 > end || !/^[0-9a-fA-F]{4}$/.test(hex)) fail("Invalid \\u escape")
            out += String.fromCharCode(Number.parseInt(hex, 16))
            pos += 4
            break
          }
          default:
            // Jackson accepts an escaped single quote when single quotes are allowed
            if ((e === 39 && features.allowSingleQuotes) || features.allowBackslashEscapingAnyCharacter) {
              out += text[pos]
            } else {
              fail(`Unrecognized character escape '${text[pos]}'`)
            }
        }
        pos++
        runStart = pos
        continue
      }
      if (c < 32 && !features.allowUnquotedControlChars) fail("Illegal unquoted control character in a string")
      pos++
    }
  }

  const parseName = (): string => {
    const c = text.charCodeAt(pos)
    if (c === 34) return parseString(34)
    if (c === 39 && features.allowSingleQuotes) return parseString(39)
    if (features.allowUnquotedFieldNames && isIdentChar(c)) {
      const s = pos
      while (pos < end && isIdentChar(text.charCodeAt(pos))) pos++
      return text.slice(s, pos)
    }
    return fail(`Unexpected character '${text[pos] ?? "EOF"}': was expecting a field name`)
  }

  const matchWord = (word: string): boolean => {
    if (text.startsWith(word, pos) && pos + word.length <= end) {
      const after = pos + word.length < end ? text.charCodeAt(pos + word.length) : -1
      if (after >= 0 && isIdentChar(after)) return false
      pos += word.length
      return true
    }
    return false
  }

  const parseNumber = (): JsonValue => {
    const s = pos
    let neg = false
    const c0 = text.charCodeAt(pos)
    if (c0 === 45 || c0 === 43) {
      neg = c0 === 45
      pos++
      if (features.allowNonNumericNumbers) {
        if (matchWord("Infinity") || matchWord("INF")) {
          return { k: "float", v: neg ? -Infinity : Infinity, start: s, end: pos }
        }
      }
      if (!neg) fail("Unexpected character '+'")
    }
    const intStart = pos
    if (pos >= end || !isDigit(text.charCodeAt(pos))) fail("Expected a digit")
    if (text.charCodeAt(pos) === 48 && pos + 1 < end && isDigit(text.charCodeAt(pos + 1))) {
      if (!features.allowNumericLeadingZeros) fail("Invalid numeric value: leading zeroes not allowed")
    }
    while (pos < end && isDigit(text.charCodeAt(pos))) pos++
    let isFloat = false
    if (pos < end && text.charCodeAt(pos) === 46) {
      isFloat = true
      pos++
      if (pos >= end || !isDigit(text.charCodeAt(pos))) fail("Decimal point not followed by a digit")
      while (pos < end && isDigit(text.charCodeAt(pos))) pos++
    }
    if (pos < end && (text.charCodeAt(pos) === 101 || text.charCodeAt(pos) === 69)) {
      isFloat = true
      pos++
      if (pos < end && (text.charCodeAt(pos) === 43 || text.charCodeAt(pos) === 45)) pos++
      if (pos >= end || !isDigit(text.charCodeAt(pos))) fail("Exponent indicator not followed by a digit")
      while (pos < end && isDigit(text.charCodeAt(pos))) pos++
    }
    if (pos < end && isIdentChar(text.charCodeAt(pos))) fail(`Unexpected character '${text[pos]}' in a number`)
    if (isFloat) return { k: "float", v: Number(text.slice(s, pos)), start: s, end: pos }
    // leading zeros (when allowed) are dropped, as Jackson's number value does
    let digits = text.slice(intStart, pos).replace(/^0+(?=\d)/, "")
    if (neg) digits = `-${digits}`
    return { k: "int", text: digits, start: s, end: pos }
  }

  const parseValue = (): JsonValue => {
    skipWs()
    if (pos >= end) fail("Unexpected end of input")
    const s = pos
    const c = text.charCodeAt(pos)
    switch (c) {
      case 123: {
        if (++depth > MAX_DEPTH) fail(`Document nesting depth exceeds the maximum allowed (${MAX_DEPTH})`)
        pos++
        const keys: Array<string> = []
        const values: Array<JsonValue> = []
        skipWs()
        if (pos < end && text.charCodeAt(pos) === 125) {
          pos++
          depth--
          return { k: "obj", keys, values, start: s, end: pos }
        }
        while (true) {
          skipWs()
          if (pos >= end) fail("Unexpected end of input in an object")
          keys.push(parseName())
          skipWs()
          if (pos >= end || text.charCodeAt(pos) !== 58) fail("Was expecting a colon to separate field name and value")
          pos++
          values.push(parseValue())
          skipWs()
          if (pos >= end) fail("Unexpected end of input in an object")
          const d = text.charCodeAt(pos)
          pos++
          if (d === 44) continue
          if (d === 125) break
          pos--
          fail(`Unexpected character '${text[pos]}': was expecting comma to separate object entries`)
        }
        depth--
        return { k: "obj", keys, values, start: s, end: pos }
      }
      case 91: {
        if (++depth > MAX_DEPTH) fail(`Document nesting depth exceeds the maximum allowed (${MAX_DEPTH})`)
        pos++
        const items: Array<JsonValue> = []
        skipWs()
        if (pos < end && text.charCodeAt(pos) === 93) {
          pos++
          depth--
          return { k: "arr", items, start: s, end: pos }
        }
        while (true) {
          items.push(parseValue())
          skipWs()
          if (pos >= end) fail("Unexpected end of input in an array")
          const d = text.charCodeAt(pos)
          pos++
          if (d === 44) continue
          if (d === 93) break
          pos--
          fail(`Unexpected character '${text[pos]}': was expecting comma to separate array entries`)
        }
        depth--
        return { k: "arr", items, start: s, end: pos }
      }
      case 34:
        return { k: "str", v: parseString(34), start: s, end: pos }
      case 39:
        if (!features.allowSingleQuotes) fail("Unexpected character '''")
        return { k: "str", v: parseString(39), start: s, end: pos }
      case 116:
        if (matchWord("true")) return { k: "bool", v: true, start: s, end: pos }
        return fail("Unrecognized token: was expecting 'true'")
      case 102:
        if (matchWord("false")) return { k: "bool", v: false, start: s, end: pos }
        return fail("Unrecognized token: was expecting 'false'")
      case 110:
        if (matchWord("null")) return { k: "null", start: s, end: pos }
        return fail("Unrecognized token: was expecting 'null'")
      case 78:
        if (features.allowNonNumericNumbers && matchWord("NaN"))
          return { k: "float", v: Number.NaN, start: s, end: pos }
        return fail("Unrecognized token 'N'")
      case 73:
        if (features.allowNonNumericNumbers && matchWord("Infinity")) {
          return { k: "float", v: Infinity, start: s, end: pos }
        }
        return fail("Unrecognized token 'I'")
      default:
        if (c === 45 || c === 43 || isDigit(c)) return parseNumber()
        return fail(`Unexpected character '${text[pos]}'`)
    }
  }

  try {
    skipWs()
    if (pos >= end) return undefined
    return parseValue()
  } catch (e) {
    if (e instanceof JsonSyntaxError) return e
    throw e
  }
}
