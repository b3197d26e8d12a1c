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

import { Interner } from "./FieldParsers.ts"

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
 * A reusable reader for one set of features: `parse` reads the first JSON value of
 * `text[start, end)`. Reuse one instance for all records of a read: it keeps no state between
 * calls, and allocating a parser per record costs more than the parsing.
 */
export class JsonReader {
  private readonly f: JsonFeatures
  private text = ""
  private pos = 0
  private end = 0
  private depth = 0
  private readonly names = new Interner(64, 4096)

  constructor(features: JsonFeatures) {
    this.f = features
  }

  /**
   * The first JSON value of `text[start, end)`: `undefined` when the range holds only
   * whitespace (Spark skips such records), the value, or a `JsonSyntaxError`.
   */
  parse(text: string, start: number, end: number): JsonValue | undefined | JsonSyntaxError {
    this.text = text
    this.pos = start
    this.end = end
    this.depth = 0
    try {
      this.skipWs()
      if (this.pos >= this.end) return undefined
      return this.value()
    } catch (e) {
      if (e instanceof JsonSyntaxError) return e
      throw e
    } finally {
      this.text = ""
    }
  }

  private fail(message: string, at = this.pos): never {
    throw new JsonSyntaxError(message, at)
  }

  private skipWs(): void {
    const t = this.text
    const end = this.end
    while (this.pos < end) {
      const c = t.charCodeAt(this.pos)
      if (c === 32 || c === 9 || c === 10 || c === 13) {
        this.pos++
      } else if (c === 47 && this.f.allowComments) {
        const n = this.pos + 1 < end ? t.charCodeAt(this.pos + 1) : -1
        if (n === 42) {
          const close = t.indexOf("*/", this.pos + 2)
          if (close < 0 || close + 2 > end) this.fail("Unexpected end of input in a comment")
          this.pos = close + 2
        } else if (n === 47) {
          this.pos += 2
          while (this.pos < end && t.charCodeAt(this.pos) !== 10 && t.charCodeAt(this.pos) !== 13) this.pos++
        } else {
          this.fail("Unexpected character '/'")
        }
      } else {
        return
      }
    }
  }

  /** A quoted string; `pos` is at the opening quote. */
  private string(quote: number): string {
    const t = this.text
    const end = this.end
    let pos = this.pos + 1
    let out = ""
    let runStart = pos
    while (true) {
      if (pos >= end) this.fail("Unexpected end of input in a string", pos)
      const c = t.charCodeAt(pos)
      if (c === quote) {
        this.pos = pos + 1
        return out.length === 0 ? t.slice(runStart, pos) : out + t.slice(runStart, pos)
      }
      if (c === 92) {
        out += t.slice(runStart, pos)
        pos++
        if (pos >= end) this.fail("Unexpected end of input in an escape sequence", pos)
        const e = t.charCodeAt(pos)
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
            const hex = t.slice(pos + 1, pos + 5)
            if (pos + 5 > end || !/^[0-9a-fA-F]{4}$/.test(hex)) this.fail("Invalid \\u escape", pos)
            out += String.fromCharCode(Number.parseInt(hex, 16))
            pos += 4
            break
          }
          default:
            // Jackson accepts an escaped single quote when single quotes are allowed
            if ((e === 39 && this.f.allowSingleQuotes) || this.f.allowBackslashEscapingAnyCharacter) {
              out += t[pos]
            } else {
              this.fail(`Unrecognized character escape '${t[pos]}'`, pos)
            }
        }
        pos++
        runStart = pos
        continue
      }
      if (c < 32 && !this.f.allowUnquotedControlChars) this.fail("Illegal unquoted control character in a string", pos)
      pos++
    }
  }

  private name(): string {
    const c = this.text.charCodeAt(this.pos)
    if (c === 34) {
      // a name without escapes or control characters: one shared string per distinct name
      // (records repeat their names; an interned one also keeps its hash for the lookups)
      const t = this.text
      const s = this.pos + 1
      let p = s
      while (p < this.end) {
        const x = t.charCodeAt(p)
        if (x === 34 || x === 92 || x < 32) break
        p++
      }
      if (p < this.end && t.charCodeAt(p) === 34) {
        this.pos = p + 1
        return this.names.slice(t, s, p)
      }
      return this.string(34)
    }
    if (c === 39 && this.f.allowSingleQuotes) return this.string(39)
    if (this.f.allowUnquotedFieldNames && isIdentChar(c)) {
      const s = this.pos
      while (this.pos < this.end && isIdentChar(this.text.charCodeAt(this.pos))) this.pos++
      return this.text.slice(s, this.pos)
    }
    return this.fail(`Unexpected character '${this.text[this.pos] ?? "EOF"}': was expecting a field name`)
  }

  /** Consumes `word` when it is there and not followed by more identifier characters. */
  private word(word: string): boolean {
    const t = this.text
    const after = this.pos + word.length
    if (after > this.end || !t.startsWith(word, this.pos)) return false
    if (after < this.end && isIdentChar(t.charCodeAt(after))) return false
    this.pos = after
    return true
  }

  private number(): JsonValue {
    const t = this.text
    const end = this.end
    const s = this.pos
    let neg = false
    const c0 = t.charCodeAt(s)
    if (c0 === 45 || c0 === 43) {
      neg = c0 === 45
      this.pos++
      if (this.f.allowNonNumericNumbers && (this.word("Infinity") || this.word("INF"))) {
        return { k: "float", v: neg ? -Infinity : Infinity, start: s, end: this.pos }
      }
      if (!neg) this.fail("Unexpected character '+'")
    }
    let pos = this.pos
    const intStart = pos
    if (pos >= end || !isDigit(t.charCodeAt(pos))) this.fail("Expected a digit", pos)
    if (t.charCodeAt(pos) === 48 && pos + 1 < end && isDigit(t.charCodeAt(pos + 1))) {
      if (!this.f.allowNumericLeadingZeros) this.fail("Invalid numeric value: leading zeroes not allowed", pos)
    }
    while (pos < end && isDigit(t.charCodeAt(pos))) pos++
    let isFloat = false
    if (pos < end && t.charCodeAt(pos) === 46) {
      isFloat = true
      pos++
      if (pos >= end || !isDigit(t.charCodeAt(pos))) this.fail("Decimal point not followed by a digit", pos)
      while (pos < end && isDigit(t.charCodeAt(pos))) pos++
    }
    if (pos < end && (t.charCodeAt(pos) === 101 || t.charCodeAt(pos) === 69)) {
      isFloat = true
      pos++
      if (pos < end && (t.charCodeAt(pos) === 43 || t.charCodeAt(pos) === 45)) pos++
      if (pos >= end || !isDigit(t.charCodeAt(pos))) this.fail("Exponent indicator not followed by a digit", pos)
      while (pos < end && isDigit(t.charCodeAt(pos))) pos++
    }
    this.pos = pos
    if (pos < end && isIdentChar(t.charCodeAt(pos))) this.fail(`Unexpected character '${t[pos]}' in a number`)
    if (isFloat) return { k: "float", v: Number(t.slice(s, pos)), start: s, end: pos }
    let digits = t.slice(intStart, pos)
    // leading zeros (when allowed) are dropped, as Jackson's number value does
    if (digits.length > 1 && digits.charCodeAt(0) === 48) digits = digits.replace(/^0+(?=\d)/, "")
    return { k: "int", text: neg ? `-${digits}` : digits, start: s, end: pos }
  }

  private object(s: number): JsonValue {
    const t = this.text
    if (++this.depth > MAX_DEPTH) this.fail(`Document nesting depth exceeds the maximum allowed (${MAX_DEPTH})`)
    this.pos++
    const keys: Array<string> = []
    const values: Array<JsonValue> = []
    this.skipWs()
    if (this.pos < this.end && t.charCodeAt(this.pos) === 125) {
      this.pos++
      this.depth--
      return { k: "obj", keys, values, start: s, end: this.pos }
    }
    while (true) {
      this.skipWs()
      if (this.pos >= this.end) this.fail("Unexpected end of input in an object")
      keys.push(this.name())
      this.skipWs()
      if (this.pos >= this.end || t.charCodeAt(this.pos) !== 58) {
        this.fail("Was expecting a colon to separate field name and value")
      }
      this.pos++
      values.push(this.value())
      this.skipWs()
      if (this.pos >= this.end) this.fail("Unexpected end of input in an object")
      const d = t.charCodeAt(this.pos)
      this.pos++
      if (d === 44) continue
      if (d === 125) break
      this.fail(`Unexpected character '${t[this.pos - 1]}': was expecting comma to separate object entries`)
    }
    this.depth--
    return { k: "obj", keys, values, start: s, end: this.pos }
  }

  private array(s: number): JsonValue {
    const t = this.text
    if (++this.depth > MAX_DEPTH) this.fail(`Document nesting depth exceeds the maximum allowed (${MAX_DEPTH})`)
    this.pos++
    const items: Array<JsonValue> = []
    this.skipWs()
    if (this.pos < this.end && t.charCodeAt(this.pos) === 93) {
      this.pos++
      this.depth--
      return { k: "arr", items, start: s, end: this.pos }
    }
    while (true) {
      items.push(this.value())
      this.skipWs()
      if (this.pos >= this.end) this.fail("Unexpected end of input in an array")
      const d = t.charCodeAt(this.pos)
      this.pos++
      if (d === 44) continue
      if (d === 93) break
      this.fail(`Unexpected character '${t[this.pos - 1]}': was expecting comma to separate array entries`)
    }
    this.depth--
    return { k: "arr", items, start: s, end: this.pos }
  }

  private value(): JsonValue {
    this.skipWs()
    if (this.pos >= this.end) this.fail("Unexpected end of input")
    const s = this.pos
    const c = this.text.charCodeAt(s)
    switch (c) {
      case 123:
        return this.object(s)
      case 91:
        return this.array(s)
      case 34:
        return { k: "str", v: this.string(34), start: s, end: this.pos }
      case 39:
        if (!this.f.allowSingleQuotes) this.fail("Unexpected character (') : single quotes are not allowed")
        return { k: "str", v: this.string(39), start: s, end: this.pos }
      case 116:
        if (this.word("true")) return { k: "bool", v: true, start: s, end: this.pos }
        return this.fail("Unrecognized token: was expecting 'true'")
      case 102:
        if (this.word("false")) return { k: "bool", v: false, start: s, end: this.pos }
        return this.fail("Unrecognized token: was expecting 'false'")
      case 110:
        if (this.word("null")) return { k: "null", start: s, end: this.pos }
        return this.fail("Unrecognized token: was expecting 'null'")
      case 78:
        if (this.f.allowNonNumericNumbers && this.word("NaN")) {
          return { k: "float", v: Number.NaN, start: s, end: this.pos }
        }
        return this.fail("Unrecognized token 'N'")
      case 73:
        if (this.f.allowNonNumericNumbers && this.word("Infinity")) {
          return { k: "float", v: Infinity, start: s, end: this.pos }
        }
        return this.fail("Unrecognized token 'I'")
      default:
        if (c === 45 || c === 43 || isDigit(c)) return this.number()
        return this.fail(`Unexpected character '${this.text[s]}'`)
    }
  }
}

/** Parses the first JSON value of `text[start, end)` (see `JsonReader.parse`), for one-off use. */
export const parseJson = (
  text: string,
  start: number,
  end: number,
  features: JsonFeatures
): JsonValue | undefined | JsonSyntaxError => new JsonReader(features).parse(text, start, end)
