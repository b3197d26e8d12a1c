/**
 * A CSV tokenizer that reproduces what the univocity parser behind Spark's CSV source returns
 * for Spark's reader settings, including its less obvious cases:
 *
 * - a quote only opens a quoted value at the start of a field; elsewhere it is data;
 * - inside quotes, `escape` + quote is a quote and `escape` + `escape` (when the escape is the
 *   `charToEscapeQuoteEscaping` too) is one escape; an escape before anything else is kept;
 * - a doubled quote (`""`) inside quotes is a quote, but the value is then parsed as an
 *   unescaped quote unless `escape` is the quote character (`"a""b"` reads as `"a""b"` with the
 *   default `\` escape, and as `a"b` with `escape` set to `"`, as in Spark);
 * - an unescaped quote inside a quoted value is handled as `STOP_AT_DELIMITER`: the value
 *   becomes the text up to the next delimiter, the opening quote included;
 * - an empty unquoted value is `nullValue`, an empty quoted value `emptyValue`;
 * - a quoted value left open at the end of the input keeps what was read.
 *
 * @since 0.1.0
 */

/** The tokenizer settings (from `CsvOptions`). */
export interface CsvTokenizerConfig {
  readonly delimiter: string
  /** Char code, or -1 for none. */
  readonly quote: number
  readonly escape: number
  readonly escapeEscape: number
  readonly ignoreLeadingWhiteSpace: boolean
  readonly ignoreTrailingWhiteSpace: boolean
  readonly nullValue: string
  readonly emptyValue: string
}

/** Univocity's whitespace: any char in (U+0000, U+0020]. */
const isWs = (c: number): boolean => c > 0 && c <= 32

/** One record: its tokens and the source range it came from (for the corrupt-record column). */
export interface CsvRecord {
  readonly tokens: Array<string>
  readonly start: number
  readonly end: number
}

/**
 * Tokenizes CSV records. `multiLine` decides whether `\n`/`\r` end a record (quoted values may
 * then span lines); without it the given range is one record and line breaks are data.
 */
export class CsvTokenizer {
  private readonly cfg: CsvTokenizerConfig
  private readonly delim: string
  private readonly d0: number
  private text = ""
  private end = 0
  private pos = 0
  private multiLine = false

  constructor(cfg: CsvTokenizerConfig) {
    this.cfg = cfg
    this.delim = cfg.delimiter
    this.d0 = cfg.delimiter.charCodeAt(0)
  }

  /** The tokens of `text[start, end)` as one record. */
  parseLine(text: string, start = 0, end = text.length): Array<string> {
    this.text = text
    this.end = end
    this.pos = start
    this.multiLine = false
    return this.record()
  }

  /**
   * All records of a text whose quoted values may span lines. Blank lines are skipped, and
   * so are lines starting with `comment`.
   */
  parseAll(text: string, comment: string | undefined): Array<CsvRecord> {
    this.text = text
    this.end = text.length
    this.pos = 0
    this.multiLine = true
    const out: Array<CsvRecord> = []
    const commentCode = comment === undefined ? -1 : comment.charCodeAt(0)
    while (this.pos < this.end) {
      // skip blank and comment lines
      const lineStart = this.pos
      let p = lineStart
      while (p < this.end && isWs(text.charCodeAt(p)) && text.charCodeAt(p) !== 10 && text.charCodeAt(p) !== 13) p++
      const c = p < this.end ? text.charCodeAt(p) : -1
      if (c === -1 || c === 10 || c === 13 || text.charCodeAt(lineStart) === commentCode) {
        while (p < this.end && text.charCodeAt(p) !== 10 && text.charCodeAt(p) !== 13) p++
        this.pos = this.skipNewline(p)
        continue
      }
      const tokens = this.record()
      out.push({ tokens, start: lineStart, end: this.pos })
      this.pos = this.skipNewline(this.pos)
    }
    return out
  }

  private skipNewline(p: number): number {
    const t = this.text
    if (p < this.end && t.charCodeAt(p) === 13) p++
    if (p < this.end && t.charCodeAt(p) === 10) p++
    return p
  }

  private atDelim(p: number): boolean {
    const t = this.text
    if (p >= this.end || t.charCodeAt(p) !== this.d0) return false
    return this.delim.length === 1 || (p + this.delim.length <= this.end && t.startsWith(this.delim, p))
  }

  private atNewline(p: number): boolean {
    if (!this.multiLine || p >= this.end) return false
    const c = this.text.charCodeAt(p)
    return c === 10 || c === 13
  }

  private atFieldEnd(p: number): boolean {
    return p >= this.end || this.atNewline(p) || this.atDelim(p)
  }

  private record(): Array<string> {
    const tokens: Array<string> = []
    while (true) {
      tokens.push(this.field())
      if (this.atDelim(this.pos)) {
        this.pos += this.delim.length
        continue
      }
      // the field parsers stop only at a delimiter, a line break or the end
      return tokens
    }
  }

  private field(): string {
    const t = this.text
    if (this.cfg.ignoreLeadingWhiteSpace) {
      while (this.pos < this.end && isWs(t.charCodeAt(this.pos)) && !this.atFieldEnd(this.pos)) this.pos++
    }
    if (this.atFieldEnd(this.pos)) return this.cfg.nullValue
    if (t.charCodeAt(this.pos) === this.cfg.quote) return this.quoted()
    return this.unquoted(this.pos)
  }

  /** Where the field starting at `from` ends: the next delimiter, line break or the end. */
  private fieldEnd(from: number): number {
    const t = this.text
    const end = this.end
    if (!this.multiLine) {
      const i = t.indexOf(this.delim, from)
      return i < 0 || i + this.delim.length > end ? end : i
    }
    for (let p = from; p < end; p++) {
      const c = t.charCodeAt(p)
      if (c === 10 || c === 13 || (c === this.d0 && this.atDelim(p))) return p
    }
    return end
  }

  /** An unquoted value: the text up to the delimiter, escapes untouched. */
  private unquoted(from: number): string {
    const p = this.fieldEnd(from)
    this.pos = p
    let v = this.text.slice(from, p)
    if (this.cfg.ignoreTrailingWhiteSpace) {
      let e = v.length
      while (e > 0 && isWs(v.charCodeAt(e - 1))) e--
      v = v.slice(0, e)
    }
    return v.length === 0 ? this.cfg.nullValue : v
  }

  /** The rest of the value after an unescaped quote: `"` + what was read + the raw text to the delimiter. */
  private stopAtDelimiter(buf: string, from: number): string {
    const p = this.fieldEnd(from)
    this.pos = p
    let v = `${String.fromCharCode(this.cfg.quote)}${buf}${this.text.slice(from, p)}`
    if (this.cfg.ignoreTrailingWhiteSpace) {
      let e = v.length
      while (e > 0 && isWs(v.charCodeAt(e - 1))) e--
      v = v.slice(0, e)
    }
    return v
  }

  private quoted(): string {
    const t = this.text
    const q = this.cfg.quote
    const e = this.cfg.escape
    const ee = this.cfg.escapeEscape
    let i = this.pos + 1
    let buf = ""
    // the last quote or escape character read whose meaning depends on the next one
    let prev = -1
    while (true) {
      if (i >= this.end) {
        this.pos = i
        // a quote right before the end closes the value; an unterminated value keeps what was read
        return prev === q && buf.length === 0 ? this.cfg.emptyValue : buf
      }
      const c = t.charCodeAt(i)
      if (prev === q && (isWs(c) || this.atDelim(i) || this.atNewline(i))) break
      if (c !== q && c !== e) {
        if (prev === q) return this.stopAtDelimiter(`${buf}${String.fromCharCode(q)}`, i)
        if (prev !== -1 && (prev === e || prev === ee)) buf += String.fromCharCode(prev)
        let j = i
        while (j < this.end) {
          const x = t.charCodeAt(j)
          if (x === q || x === e || x === ee) break
          j++
        }
        buf += t.slice(i, j)
        if (j >= this.end) {
          this.pos = j
          return buf
        }
        prev = t.charCodeAt(j)
        i = j + 1
        continue
      }
      // c is the quote or the escape character
      let cur = c
      if (c === e && prev === ee && ee !== -1) {
        buf += String.fromCharCode(e)
        cur = -1
      } else if (prev === e && e !== -1) {
        if (c === q) {
          buf += String.fromCharCode(q)
          cur = -1
        } else buf += String.fromCharCode(e)
      } else if (c === q && prev === q) {
        buf += String.fromCharCode(q)
      } else if (prev === q) {
        // a closing quote followed by the escape character: an unescaped quote
        return this.stopAtDelimiter(`${buf}${String.fromCharCode(q)}`, i)
      }
      prev = cur
      i++
    }
    // closing quote found at i - 1; skip whitespace after it
    let p = i
    if (!this.atDelim(p) && !this.atNewline(p)) {
      while (p < this.end && isWs(t.charCodeAt(p)) && !this.atDelim(p) && !this.atNewline(p)) p++
      if (p < this.end && !this.atDelim(p) && !this.atNewline(p)) {
        // more text after the closing quote: STOP_AT_DELIMITER keeps all of it
        return this.stopAtDelimiter(`${buf}${String.fromCharCode(q)}${t.slice(i, p)}`, p)
      }
    }
    this.pos = p
    return buf.length === 0 ? this.cfg.emptyValue : buf
  }
}
