/**
 * Value parsers that read a range of a file's text in place, for the text formats' hot loops:
 * no substring per numeric or timestamp value, and one string per distinct value of a string
 * column (`Interner`). Each fast parser handles the common spellings itself and answers
 * `SLOW` for anything else, which the caller hands, as a substring, to the exact parser it
 * would have used anyway (`javaParseInt`, `javaParseLong`, `Cast`'s `stringToTimestamp`), so
 * the results never differ from those parsers'.
 *
 * @since 0.1.0
 */
import { daysFromCivil, daysInMonth } from "../../core/functions/DateTimeUtils.ts"

/** The fast parser did not decide: parse the substring with the exact parser. */
export const SLOW: unique symbol = Symbol("fieldParsers.slow")
export type Slow = typeof SLOW

const INT_MIN = -2147483648
const INT_MAX = 2147483647

/**
 * Java's `Integer.parseInt` over `text[start, end)` for an optional sign and up to 15 ASCII
 * digits: the number, `null` when the text is not such a number (`Integer.parseInt` throws
 * there too: anything else in the range is not a digit) or out of the int range; `SLOW` for
 * longer digit runs.
 */
export const parseIntRange = (text: string, start: number, end: number): number | null | Slow => {
  const v = parseDigits(text, start, end)
  if (v === SLOW || v === null) return v
  return v < INT_MIN || v > INT_MAX ? null : v
}

/** Java's `Long.parseLong` over `text[start, end)`, exact for up to 15 digits; `SLOW` beyond. */
export const parseLongRange = (text: string, start: number, end: number): number | null | Slow =>
  parseDigits(text, start, end)

/** `[+-]?\d{1,15}` as a number (`-0` is `0`), `null` when the range is not of that form (but could be none longer), `SLOW` for 16+ digits. */
const parseDigits = (text: string, start: number, end: number): number | null | Slow => {
  let i = start
  let neg = false
  if (i < end) {
    const c = text.charCodeAt(i)
    if (c === 45 || c === 43) {
      neg = c === 45
      i++
    }
  }
  if (i >= end) return null
  if (end - i > 15) return SLOW
  let v = 0
  for (; i < end; i++) {
    const d = text.charCodeAt(i) - 48
    if (d < 0 || d > 9) return null
    v = v * 10 + d
  }
  return neg ? (v === 0 ? 0 : -v) : v
}

const MS_PER_SECOND = 1_000
const MS_PER_MINUTE = 60_000
const MS_PER_HOUR = 3_600_000
const MS_PER_DAY = 86_400_000

const digit = (text: string, i: number): number => {
  const d = text.charCodeAt(i) - 48
  return d >= 0 && d <= 9 ? d : -1
}

const two = (text: string, i: number): number => {
  const a = digit(text, i)
  const b = digit(text, i + 1)
  return a < 0 || b < 0 ? -1 : a * 10 + b
}

/**
 * Spark's `cast(string as timestamp)` (`stringToTimestamp`, UTC) for the ISO-8601 spelling
 * `yyyy-MM-dd[T ]HH:mm:ss[.f{1,9}][Z]` over `text[start, end)`: epoch milliseconds, `null` when
 * a field is out of range (the cast gives null there too), `SLOW` for every other spelling.
 */
export const parseIsoTimestampRange = (text: string, start: number, end: number): number | null | Slow => {
  const len = end - start
  if (len < 19 || len > 30) return SLOW
  const s = start
  if (text.charCodeAt(s + 4) !== 45 || text.charCodeAt(s + 7) !== 45) return SLOW
  const sep = text.charCodeAt(s + 10)
  if (sep !== 84 && sep !== 32) return SLOW
  if (text.charCodeAt(s + 13) !== 58 || text.charCodeAt(s + 16) !== 58) return SLOW
  const y1 = two(text, s)
  const y2 = two(text, s + 2)
  const mo = two(text, s + 5)
  const d = two(text, s + 8)
  const h = two(text, s + 11)
  const mi = two(text, s + 14)
  const sec = two(text, s + 17)
  if (y1 < 0 || y2 < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || sec < 0) return SLOW
  let i = s + 19
  let ms = 0
  if (i < end && text.charCodeAt(i) === 46) {
    i++
    let k = 0
    while (i < end) {
      const x = digit(text, i)
      if (x < 0) break
      if (k < 3) ms = ms * 10 + x
      k++
      i++
    }
    if (k === 0 || k > 9) return SLOW
    for (let j = k; j < 3; j++) ms *= 10
  }
  if (i < end) {
    if (text.charCodeAt(i) !== 90 || i + 1 !== end) return SLOW
  }
  const y = y1 * 100 + y2
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return null
  if (h > 23 || mi > 59 || sec > 59) return null
  return daysFromCivil(y, mo, d) * MS_PER_DAY + h * MS_PER_HOUR + mi * MS_PER_MINUTE + sec * MS_PER_SECOND + ms
}

/**
 * One string per distinct value of a column within a read: a file's repeated values (user ids,
 * categories) share one string instead of one copy per row, which is most of what the rows of a
 * batch keep alive. A value already seen costs a hash of its characters and one comparison, and
 * allocates nothing (the table is probed with the range itself, no substring). Values longer
 * than `maxLength` are not interned (they rarely repeat), and the table stops growing at
 * `maxEntries` distinct values.
 */
export class Interner {
  private keys: Array<string | undefined> = new Array<string | undefined>(1024).fill(undefined)
  private mask = 1023
  private size = 0
  private readonly maxLength: number
  private readonly maxEntries: number

  constructor(maxLength = 32, maxEntries = 65_536) {
    this.maxLength = maxLength
    this.maxEntries = maxEntries
  }

  /** `text[start, end)`, shared with earlier equal values. */
  slice(text: string, start: number, end: number): string {
    const len = end - start
    if (len > this.maxLength) return text.slice(start, end)
    let h = 0x811c9dc5 ^ len
    for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
    const keys = this.keys
    let idx = h & this.mask
    while (true) {
      const k = keys[idx]
      if (k === undefined) break
      if (k.length === len && text.startsWith(k, start)) return k
      idx = (idx + 1) & this.mask
    }
    const v = text.slice(start, end)
    if (this.size >= this.maxEntries) return v
    keys[idx] = v
    this.size++
    if (this.size * 2 > keys.length) this.grow()
    return v
  }

  private grow(): void {
    const old = this.keys
    const keys = new Array<string | undefined>(old.length * 2).fill(undefined)
    const mask = keys.length - 1
    for (const k of old) {
      if (k === undefined) continue
      let h = 0x811c9dc5 ^ k.length
      for (let i = 0; i < k.length; i++) h = Math.imul(h ^ k.charCodeAt(i), 0x01000193)
      let idx = h & mask
      while (keys[idx] !== undefined) idx = (idx + 1) & mask
      keys[idx] = k
    }
    this.keys = keys
    this.mask = mask
  }
}
