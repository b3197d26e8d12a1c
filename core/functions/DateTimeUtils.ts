/**
 * Calendar arithmetic, Spark's datetime string forms and Spark's datetime patterns, on the
 * internal forms: timestamps are epoch milliseconds, dates are days since 1970-01-01, both in
 * the proleptic Gregorian calendar that Spark 3+ uses. The session time zone is UTC.
 *
 * Everything here is plain arithmetic on numbers (no `Date` per value) so that the compiled
 * closures of `Cast.ts` and the datetime functions stay cheap per row.
 *
 * @since 0.1.0
 */

export const MS_PER_SECOND = 1_000
export const MS_PER_MINUTE = 60_000
export const MS_PER_HOUR = 3_600_000
export const MS_PER_DAY = 86_400_000

/** `Math.floorDiv` for numbers. */
export const floorDiv = (a: number, b: number): number => Math.floor(a / b)

/** `Math.floorMod` for numbers (the result has the sign of `b`). */
export const floorMod = (a: number, b: number): number => a - Math.floor(a / b) * b

export const isLeapYear = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** Days in `month` (1-12) of `year`. */
export const daysInMonth = (year: number, month: number): number =>
  month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]

/** Days since the epoch of a civil date (H. Hinnant's `days_from_civil`). */
export const daysFromCivil = (year: number, month: number, day: number): number => {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const mp = (month + 9) % 12
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
}

/**
 * The civil date of a day number, written into `out` as `[year, month, day]` (reusing the
 * caller's array keeps the per-row path free of allocation).
 */
export const civilFromDays = (days: number, out: Int32Array | Array<number>): void => {
  const z = days + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  out[0] = m <= 2 ? yoe + era * 400 + 1 : yoe + era * 400
  out[1] = m
  out[2] = d
}

const scratch = new Int32Array(3)

export const yearOfDays = (days: number): number => {
  civilFromDays(days, scratch)
  return scratch[0]
}

export const monthOfDays = (days: number): number => {
  civilFromDays(days, scratch)
  return scratch[1]
}

export const dayOfMonthOfDays = (days: number): number => {
  civilFromDays(days, scratch)
  return scratch[2]
}

/** 1 = Monday … 7 = Sunday (ISO). 1970-01-01 was a Thursday. */
export const isoDayOfWeek = (days: number): number => floorMod(days + 3, 7) + 1

export const dayOfYearOfDays = (days: number): number => {
  civilFromDays(days, scratch)
  return days - daysFromCivil(scratch[0], 1, 1) + 1
}

/** ISO-8601 week of the year (Spark's `weekofyear`): weeks start on Monday, week 1 has the year's first Thursday. */
export const isoWeekOfYear = (days: number): number => {
  const thursday = days - isoDayOfWeek(days) + 4
  const year = yearOfDays(thursday)
  return Math.floor((thursday - daysFromCivil(year, 1, 1)) / 7) + 1
}

/** Days since the epoch of a timestamp (UTC). */
export const msToDays = (ms: number): number => Math.floor(ms / MS_PER_DAY)

/** Adds months as `LocalDate.plusMonths` does: the day is clamped to the new month's length. */
export const addMonths = (days: number, months: number): number => {
  civilFromDays(days, scratch)
  const total = scratch[0] * 12 + (scratch[1] - 1) + months
  const y = Math.floor(total / 12)
  const m = total - y * 12 + 1
  const d = Math.min(scratch[2], daysInMonth(y, m))
  return daysFromCivil(y, m, d)
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n))

const padYear = (y: number): string => {
  if (y >= 0 && y < 10000) return String(y).padStart(4, "0")
  // java.time prints years beyond 9999 with a '+' sign and negative years with '-'
  return y < 0 ? `-${String(-y).padStart(4, "0")}` : `+${y}`
}

/** `yyyy-MM-dd`, as Spark casts a date to a string. */
export const formatDate = (days: number): string => {
  civilFromDays(days, scratch)
  return `${padYear(scratch[0])}-${pad2(scratch[1])}-${pad2(scratch[2])}`
}

/**
 * `yyyy-MM-dd HH:mm:ss[.fraction]` in UTC, the fraction without trailing zeros and only when
 * non-zero: Spark's `TimestampFormatter.getFractionFormatter`, used by `cast(ts as string)`.
 */
export const formatTimestamp = (ms: number): string => {
  const days = Math.floor(ms / MS_PER_DAY)
  let rest = ms - days * MS_PER_DAY
  const h = Math.floor(rest / MS_PER_HOUR)
  rest -= h * MS_PER_HOUR
  const m = Math.floor(rest / MS_PER_MINUTE)
  rest -= m * MS_PER_MINUTE
  const s = Math.floor(rest / MS_PER_SECOND)
  const frac = Math.round(rest - s * MS_PER_SECOND)
  const base = `${formatDate(days)} ${pad2(h)}:${pad2(m)}:${pad2(s)}`
  if (frac === 0) return base
  return `${base}.${String(frac).padStart(3, "0").replace(/0+$/, "")}`
}

// ---------------------------------------------------------------------------------------------
// Time zones
// ---------------------------------------------------------------------------------------------

const offsetRe = /^(?:(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?(?::?(\d{2}))?)$/i

const zoneFormatters = new Map<string, Intl.DateTimeFormat | undefined>()

const regionFormatter = (zone: string): Intl.DateTimeFormat | undefined => {
  if (zoneFormatters.has(zone)) return zoneFormatters.get(zone)
  let f: Intl.DateTimeFormat | undefined
  try {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
      era: "short"
    })
  } catch {
    f = undefined
  }
  zoneFormatters.set(zone, f)
  return f
}

/** The offset from UTC (ms) of a region zone at an instant, read through `Intl`. */
const regionOffsetAt = (f: Intl.DateTimeFormat, utcMs: number): number => {
  let y = 0
  let mo = 1
  let d = 1
  let h = 0
  let mi = 0
  let s = 0
  let bc = false
  for (const p of f.formatToParts(new Date(utcMs))) {
    switch (p.type) {
      case "year":
        y = Number(p.value)
        break
      case "month":
        mo = Number(p.value)
        break
      case "day":
        d = Number(p.value)
        break
      case "hour":
        h = Number(p.value)
        break
      case "minute":
        mi = Number(p.value)
        break
      case "second":
        s = Number(p.value)
        break
      case "era":
        bc = p.value.startsWith("B")
        break
      default:
        break
    }
  }
  if (bc) y = 1 - y
  const local = daysFromCivil(y, mo, d) * MS_PER_DAY + h * MS_PER_HOUR + mi * MS_PER_MINUTE + s * MS_PER_SECOND
  const flooredUtc = Math.floor(utcMs / 1000) * 1000
  return local - flooredUtc
}

/**
 * A time zone as Spark's `getZoneId` reads it: `Z`, `UTC`, `GMT`, `UT`, fixed offsets
 * (`+01:00`, `-0800`, `+1`, `UTC+2`, `GMT-03:30`) and region ids (`Europe/Paris`, through `Intl`).
 * Returns a function from a UTC instant to the offset in ms, or `undefined` for an unknown zone.
 */
export const zoneOffsetFunction = (zone: string): ((utcMs: number) => number) | undefined => {
  const z = zone.trim()
  const upper = z.toUpperCase()
  if (upper === "Z" || upper === "UTC" || upper === "GMT" || upper === "UT" || upper === "ZULU") return () => 0
  const m = offsetRe.exec(z)
  if (m !== null) {
    const hours = Number(m[2])
    const minutes = m[3] === undefined ? 0 : Number(m[3])
    const seconds = m[4] === undefined ? 0 : Number(m[4])
    if (hours > 18 || minutes > 59 || seconds > 59) return undefined
    const off = (m[1] === "-" ? -1 : 1) * (hours * MS_PER_HOUR + minutes * MS_PER_MINUTE + seconds * MS_PER_SECOND)
    return () => off
  }
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(z)) return undefined
  const f = regionFormatter(z)
  if (f === undefined) return undefined
  return (utcMs) => regionOffsetAt(f, utcMs)
}

/** Converts a local wall-clock time (as if UTC) in a zone to the UTC instant, as `ZonedDateTime.of` resolves it. */
export const localToUtc = (localMs: number, offsetAt: (utcMs: number) => number): number => {
  const first = offsetAt(localMs)
  const guess = localMs - first
  const second = offsetAt(guess)
  if (second === first) return guess
  // Crossing a transition: java.time keeps the earlier offset for overlaps and shifts gaps forward.
  const alt = localMs - second
  return offsetAt(alt) === second ? Math.min(guess, alt) : guess
}

// ---------------------------------------------------------------------------------------------
// Spark's string forms (DateTimeUtils.stringToTimestamp / stringToDate)
// ---------------------------------------------------------------------------------------------

const isDigit = (c: number): boolean => c >= 48 && c <= 57

/** Spark's `UTF8String.trimAll`: whitespace and ISO control characters at both ends. */
const trimAll = (s: string): string => {
  let a = 0
  let b = s.length
  while (a < b && (s.charCodeAt(a) <= 32 || /\s/.test(s[a]))) a++
  while (b > a && (s.charCodeAt(b - 1) <= 32 || /\s/.test(s[b - 1]))) b--
  return a === 0 && b === s.length ? s : s.slice(a, b)
}

interface DatePart {
  readonly days: number
  /** Index just past the date (at a ' ' or 'T' separator, or the end). */
  readonly end: number
}

/** `[+-]yyyy*[-[m]m[-[d]d]]`; `undefined` when the text does not start with a valid date. */
const parseDatePart = (s: string): DatePart | undefined => {
  let i = 0
  let sign = 1
  if (s[0] === "+" || s[0] === "-") {
    sign = s[0] === "-" ? -1 : 1
    i++
  }
  const segs = [0, 1, 1]
  let seg = 0
  let digits = 0
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (isDigit(c)) {
      segs[seg] = (digits === 0 ? 0 : segs[seg] * 10) + (c - 48)
      digits++
      continue
    }
    if (c === 45 /* - */ && seg < 2) {
      if (!validDigits(seg, digits)) return undefined
      seg++
      digits = 0
      continue
    }
    if (c === 32 /* space */ || c === 84 /* T */) {
      if (seg < 2 || !validDigits(seg, digits)) return undefined
      return finishDate(sign * segs[0], segs[1], segs[2], i)
    }
    return undefined
  }
  if (!validDigits(seg, digits)) return undefined
  return finishDate(sign * segs[0], segs[1], segs[2], s.length)
}

const validDigits = (seg: number, digits: number): boolean =>
  seg === 0 ? digits >= 4 && digits <= 7 : digits >= 1 && digits <= 2

const finishDate = (y: number, m: number, d: number, end: number): DatePart | undefined => {
  if (m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m)) return undefined
  return { days: daysFromCivil(y, m, d), end }
}

/**
 * Spark's `cast(string as date)`: `yyyy`, `yyyy-[m]m`, `yyyy-[m]m-[d]d`, optionally followed by
 * a space or `T` and anything; `null` when invalid.
 */
export const stringToDate = (text: string): number | null => {
  const s = trimAll(text)
  if (s.length === 0) return null
  const p = parseDatePart(s)
  return p === undefined ? null : p.days
}

/**
 * Spark's `cast(string as timestamp)` (non-ANSI `DateTimeUtils.stringToTimestamp`) in a UTC
 * session: `yyyy`, `yyyy-[m]m`, `yyyy-[m]m-[d]d`, then optionally `T` or a space and
 * `[h]h:[m]m[:[s]s[.fraction]]`, then optionally a zone (`Z`, `+01:00`, `UTC+1`, `Europe/Paris`).
 * Fractions beyond milliseconds are truncated. `null` when invalid. Time-only strings
 * (`T12:00:00`, which Spark puts on the current date) are not supported and give `null`.
 */
export const stringToTimestamp = (text: string, todayDays?: number): number | null => {
  const s = trimAll(text)
  if (s.length === 0) return null
  // Spark's stringToTimestamp: a string that starts with `T`, or whose first segment ends at a
  // `:`, is a time alone, on the current date (`todayDays`; without it, null)
  const timeAt = s[0] === "T" ? 1 : /^\d{1,2}:/.test(s) ? 0 : -1
  if (timeAt >= 0 && (todayDays === undefined || timeAt >= s.length)) return null
  const p: DatePart | undefined = timeAt >= 0 ? { days: todayDays!, end: timeAt - 1 } : parseDatePart(s)
  if (p === undefined) return null
  let i = p.end
  if (i >= s.length) return p.days * MS_PER_DAY
  i++ // the ' ' or 'T'
  // A date followed only by a separator and then a zone, or nothing.
  let h = 0
  let mi = 0
  let sec = 0
  let ms = 0
  const readNum = (max: number): number => {
    let n = 0
    let k = 0
    while (i < s.length && isDigit(s.charCodeAt(i)) && k < max) {
      n = n * 10 + (s.charCodeAt(i) - 48)
      i++
      k++
    }
    return k === 0 ? -1 : n
  }
  if (i < s.length && isDigit(s.charCodeAt(i))) {
    h = readNum(2)
    if (s[i] !== ":") return null
    i++
    mi = readNum(2)
    if (mi < 0) return null
    if (s[i] === ":") {
      i++
      sec = readNum(2)
      if (sec < 0) return null
      if (s[i] === ".") {
        i++
        let k = 0
        let frac = 0
        while (i < s.length && isDigit(s.charCodeAt(i))) {
          if (k < 3) frac = frac * 10 + (s.charCodeAt(i) - 48)
          k++
          i++
        }
        if (k > 9) return null
        for (let j = Math.min(k, 3); j < 3; j++) frac *= 10
        ms = frac
      }
    }
    if (h > 23 || mi > 59 || sec > 59) return null
  }
  const local = p.days * MS_PER_DAY + h * MS_PER_HOUR + mi * MS_PER_MINUTE + sec * MS_PER_SECOND + ms
  while (i < s.length && s[i] === " ") i++
  if (i >= s.length) return local
  const offsetAt = zoneOffsetFunction(s.slice(i))
  if (offsetAt === undefined) return null
  return localToUtc(local, offsetAt)
}

// ---------------------------------------------------------------------------------------------
// Spark's datetime patterns (https://spark.apache.org/docs/latest/sql-ref-datetime-pattern.html)
// ---------------------------------------------------------------------------------------------

type Token =
  | { readonly _tag: "Literal"; readonly text: string }
  | { readonly _tag: "Field"; readonly letter: string; readonly count: number }
  | { readonly _tag: "Optional"; readonly tokens: ReadonlyArray<Token> }

// Spark 3+ rejects the week-based letters Y, w, u, W, e, c
const PATTERN_LETTERS = "GyDMLdQqEFaHhKkmsSVzOXxZ"

/** Splits a pattern into tokens; `undefined` for a pattern Spark rejects (unknown letters, unbalanced quotes). */
const tokenize = (pattern: string): ReadonlyArray<Token> | undefined => {
  const stack: Array<Array<Token>> = [[]]
  let i = 0
  while (i < pattern.length) {
    const c = pattern[i]
    const top = stack[stack.length - 1]
    if (c === "'") {
      let j = i + 1
      let text = ""
      if (pattern[j] === "'") {
        top.push({ _tag: "Literal", text: "'" })
        i = j + 1
        continue
      }
      for (;;) {
        if (j >= pattern.length) return undefined
        if (pattern[j] === "'") {
          if (pattern[j + 1] === "'") {
            text += "'"
            j += 2
            continue
          }
          break
        }
        text += pattern[j]
        j++
      }
      top.push({ _tag: "Literal", text })
      i = j + 1
      continue
    }
    if (c === "[") {
      stack.push([])
      i++
      continue
    }
    if (c === "]") {
      if (stack.length === 1) return undefined
      const inner = stack.pop() as Array<Token>
      stack[stack.length - 1].push({ _tag: "Optional", tokens: inner })
      i++
      continue
    }
    if (/[A-Za-z]/.test(c)) {
      if (!PATTERN_LETTERS.includes(c)) return undefined
      let j = i
      while (j < pattern.length && pattern[j] === c) j++
      top.push({ _tag: "Field", letter: c, count: j - i })
      i = j
      continue
    }
    top.push({ _tag: "Literal", text: c })
    i++
  }
  if (stack.length !== 1) return undefined
  return stack[0]
}

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December"
]
const DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

const padNum = (n: number, width: number): string => {
  const s = String(Math.abs(n)).padStart(width, "0")
  return n < 0 ? `-${s}` : s
}

type Formatter = (ms: number, parts: Int32Array) => string

const fieldFormatter = (letter: string, count: number): Formatter | undefined => {
  switch (letter) {
    case "G":
      return (_, p) => (count === 4 ? (p[0] > 0 ? "Anno Domini" : "Before Christ") : p[0] > 0 ? "AD" : "BC")
    case "y":
    case "u":
      return (_, p) => {
        const y = letter === "y" && p[0] <= 0 ? 1 - p[0] : p[0]
        if (count === 2) return padNum(floorMod(y, 100), 2)
        return padNum(y, count)
      }
    case "D":
      return (_, p) => padNum(p[7], count)
    case "M":
    case "L":
      return (_, p) =>
        count >= 5
          ? MONTHS[p[1] - 1][0]
          : count === 4
            ? MONTHS[p[1] - 1]
            : count === 3
              ? MONTHS[p[1] - 1].slice(0, 3)
              : padNum(p[1], count)
    case "d":
      return (_, p) => padNum(p[2], count)
    case "Q":
    case "q":
      return (_, p) => {
        const q = Math.floor((p[1] - 1) / 3) + 1
        return count === 3 ? `Q${q}` : count >= 4 ? `${q}${["st", "nd", "rd", "th"][q - 1]} quarter` : padNum(q, count)
      }
    case "E":
      return (_, p) => (count >= 5 ? DAYS[p[8] - 1][0] : count === 4 ? DAYS[p[8] - 1] : DAYS[p[8] - 1].slice(0, 3))
    case "e":
      return (_, p) => padNum((p[8] % 7) + 1, count)
    case "F":
      return (_, p) => padNum(Math.floor((p[2] - 1) / 7) + 1, count)
    case "a":
      return (_, p) => (p[3] < 12 ? "AM" : "PM")
    case "H":
      return (_, p) => padNum(p[3], count)
    case "k":
      return (_, p) => padNum(p[3] === 0 ? 24 : p[3], count)
    case "K":
      return (_, p) => padNum(p[3] % 12, count)
    case "h":
      return (_, p) => padNum(p[3] % 12 === 0 ? 12 : p[3] % 12, count)
    case "m":
      return (_, p) => padNum(p[4], count)
    case "s":
      return (_, p) => padNum(p[5], count)
    case "S":
      return (_, p) => String(p[6]).padStart(3, "0").padEnd(count, "0").slice(0, count)
    case "V":
      return () => "UTC"
    case "z":
      return () => (count >= 4 ? "Coordinated Universal Time" : "UTC")
    case "O":
      return () => "GMT"
    case "X":
      return () => "Z"
    case "x":
      return () => (count === 1 ? "+00" : count === 2 || count === 4 ? "+0000" : "+00:00")
    case "Z":
      return () => (count <= 3 ? "+0000" : count === 4 ? "GMT" : "Z")
    default:
      return undefined
  }
}

/** Splits a timestamp into `[year, month, day, hour, minute, second, millis, dayOfYear, isoDayOfWeek]`. */
const splitTimestamp = (ms: number, p: Int32Array): void => {
  const days = Math.floor(ms / MS_PER_DAY)
  let rest = ms - days * MS_PER_DAY
  civilFromDays(days, p)
  p[3] = Math.floor(rest / MS_PER_HOUR)
  rest -= p[3] * MS_PER_HOUR
  p[4] = Math.floor(rest / MS_PER_MINUTE)
  rest -= p[4] * MS_PER_MINUTE
  p[5] = Math.floor(rest / MS_PER_SECOND)
  p[6] = Math.floor(rest - p[5] * MS_PER_SECOND)
  p[7] = days - daysFromCivil(p[0], 1, 1) + 1
  p[8] = isoDayOfWeek(days)
}

/**
 * Compiles a Spark datetime pattern into a formatter of timestamps (UTC); `undefined` when the
 * pattern is invalid.
 */
export const timestampFormatter = (pattern: string): ((ms: number) => string) | undefined => {
  const tokens = tokenize(pattern)
  if (tokens === undefined) return undefined
  const flat: Array<Formatter> = []
  const walk = (ts: ReadonlyArray<Token>): boolean => {
    for (const t of ts) {
      switch (t._tag) {
        case "Literal": {
          const text = t.text
          flat.push(() => text)
          break
        }
        case "Field": {
          const f = fieldFormatter(t.letter, t.count)
          if (f === undefined) return false
          flat.push(f)
          break
        }
        case "Optional":
          if (!walk(t.tokens)) return false
          break
      }
    }
    return true
  }
  if (!walk(tokens)) return undefined
  const parts = new Int32Array(9)
  return (ms) => {
    splitTimestamp(ms, parts)
    let out = ""
    for (let i = 0; i < flat.length; i++) out += flat[i](ms, parts)
    return out
  }
}

interface ParseState {
  year: number
  month: number
  day: number
  dayOfYear: number
  hour: number
  hour12: number
  pm: number
  minute: number
  second: number
  millis: number
  offsetAt: ((utcMs: number) => number) | undefined
  bce: boolean
}

const NUMERIC_LETTERS = "yuDMLdQqeFHkKhmsS"

const isNumericField = (t: Token | undefined): boolean =>
  t !== undefined && t._tag === "Field" && NUMERIC_LETTERS.includes(t.letter) && !(t.letter === "M" && t.count >= 3)

const matchWord = (s: string, i: number, words: ReadonlyArray<string>): [index: number, end: number] | undefined => {
  // longest match first (September before Sep), case-insensitive as Spark's parseCaseInsensitive
  let best: [number, number] | undefined
  for (let k = 0; k < words.length; k++) {
    const w = words[k]
    if (s.length - i >= w.length && s.slice(i, i + w.length).toLowerCase() === w.toLowerCase()) {
      if (best === undefined || w.length > best[1] - i) best = [k, i + w.length]
    }
  }
  return best
}

/** Returns the position after the token, or -1 when it does not match. */
const parseToken = (t: Token, next: Token | undefined, s: string, i: number, st: ParseState): number => {
  switch (t._tag) {
    case "Literal":
      return s.startsWith(t.text, i) ? i + t.text.length : -1
    case "Optional": {
      const saved = { ...st }
      const end = parseSeq(t.tokens, s, i, st, next)
      if (end >= 0) return end
      Object.assign(st, saved)
      return i
    }
    case "Field": {
      const { letter, count } = t
      if (letter === "M" && count >= 3) {
        const names = count === 3 ? MONTHS.map((m) => m.slice(0, 3)) : MONTHS
        const m = matchWord(s, i, names)
        if (m === undefined) return -1
        st.month = m[0] + 1
        return m[1]
      }
      if (letter === "E") {
        const m = matchWord(s, i, count >= 4 ? DAYS : DAYS.map((d) => d.slice(0, 3)))
        return m === undefined ? -1 : m[1]
      }
      if (letter === "a") {
        const m = matchWord(s, i, ["AM", "PM"])
        if (m === undefined) return -1
        st.pm = m[0]
        return m[1]
      }
      if (letter === "G") {
        const m = matchWord(s, i, count === 4 ? ["Before Christ", "Anno Domini"] : ["BC", "AD"])
        if (m === undefined) return -1
        st.bce = m[0] === 0
        return m[1]
      }
      if ("VzOXxZ".includes(letter)) {
        let j = i
        if (s[j] === "Z" && letter !== "V" && letter !== "z") {
          st.offsetAt = () => 0
          return j + 1
        }
        while (j < s.length && /[A-Za-z0-9_+\-/:]/.test(s[j])) j++
        const f = zoneOffsetFunction(s.slice(i, j))
        if (f === undefined || j === i) return -1
        st.offsetAt = f
        return j
      }
      // numeric fields
      const adjacent = isNumericField(next)
      let min = count
      let max = count
      if (count === 1) {
        min = 1
        max = letter === "y" || letter === "u" ? 9 : letter === "D" ? 3 : 2
      } else if (letter === "S") {
        min = 1
      } else if ((letter === "y" || letter === "u") && count !== 2) {
        max = adjacent ? count : 9
      } else if (letter === "D") {
        max = 3
      }
      let neg = false
      let j = i
      if ((letter === "y" || letter === "u") && count !== 2 && (s[j] === "-" || s[j] === "+")) {
        neg = s[j] === "-"
        j++
      }
      let n = 0
      let k = 0
      while (j < s.length && k < max && isDigit(s.charCodeAt(j))) {
        n = n * 10 + (s.charCodeAt(j) - 48)
        j++
        k++
      }
      if (k < min) return -1
      if (neg) n = -n
      switch (letter) {
        case "y":
        case "u":
          st.year = count === 2 ? 2000 + n : n
          break
        case "D":
          st.dayOfYear = n
          break
        case "M":
        case "L":
          st.month = n
          break
        case "d":
          st.day = n
          break
        case "Q":
        case "q":
        case "e":
        case "F":
          break
        case "H":
          st.hour = n
          break
        case "k":
          st.hour = n === 24 ? 0 : n
          break
        case "K":
          st.hour12 = n
          break
        case "h":
          st.hour12 = n === 12 ? 0 : n
          if (n < 1 || n > 12) return -1
          break
        case "m":
          st.minute = n
          break
        case "s":
          st.second = n
          break
        case "S": {
          let f = n
          for (let z = k; z < 3; z++) f *= 10
          for (let z = 3; z < k; z++) f = Math.floor(f / 10)
          st.millis = f
          break
        }
      }
      return j
    }
  }
}

const parseSeq = (
  tokens: ReadonlyArray<Token>,
  s: string,
  i: number,
  st: ParseState,
  after: Token | undefined
): number => {
  let pos = i
  for (let k = 0; k < tokens.length; k++) {
    pos = parseToken(tokens[k], k + 1 < tokens.length ? tokens[k + 1] : after, s, pos, st)
    if (pos < 0) return -1
  }
  return pos
}

/**
 * Compiles a Spark datetime pattern into a parser to epoch ms (UTC unless the text carries a
 * zone); the parser returns `null` when the text does not match the whole pattern or names an
 * invalid date, as Spark's non-ANSI `to_timestamp` does. `undefined` for an invalid pattern.
 */
export const timestampParser = (pattern: string): ((text: string) => number | null) | undefined => {
  const tokens = tokenize(pattern)
  if (tokens === undefined) return undefined
  return (text) => {
    const st: ParseState = {
      year: 1970,
      month: -1,
      day: -1,
      dayOfYear: -1,
      hour: -1,
      hour12: -1,
      pm: -1,
      minute: 0,
      second: 0,
      millis: 0,
      offsetAt: undefined,
      bce: false
    }
    const end = parseSeq(tokens, text, 0, st, undefined)
    if (end !== text.length) return null
    const year = st.bce ? 1 - st.year : st.year
    let days: number
    if (st.dayOfYear >= 0 && st.month < 0 && st.day < 0) {
      if (st.dayOfYear < 1 || st.dayOfYear > (isLeapYear(year) ? 366 : 365)) return null
      days = daysFromCivil(year, 1, 1) + st.dayOfYear - 1
    } else {
      const month = st.month < 0 ? 1 : st.month
      const day = st.day < 0 ? 1 : st.day
      if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null
      days = daysFromCivil(year, month, day)
      if (st.dayOfYear >= 0 && days - daysFromCivil(year, 1, 1) + 1 !== st.dayOfYear) return null
    }
    let hour = st.hour
    if (st.hour12 >= 0) {
      const h12 = st.hour12 + (st.pm === 1 ? 12 : 0)
      if (hour >= 0 && hour !== h12) return null
      hour = h12
    } else if (hour < 0) hour = st.pm === 1 ? 12 : 0
    if (hour > 23 || st.minute > 59 || st.second > 59) return null
    const local =
      days * MS_PER_DAY + hour * MS_PER_HOUR + st.minute * MS_PER_MINUTE + st.second * MS_PER_SECOND + st.millis
    return st.offsetAt === undefined ? local : localToUtc(local, st.offsetAt)
  }
}
