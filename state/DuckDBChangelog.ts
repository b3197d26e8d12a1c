/**
 * The DuckDB provider's changelog files: one per committed version of a store, written when the
 * version commits and folded into the store's DuckDB tables afterwards, off the commit path
 * (the design of Spark's RocksDB changelog checkpointing, with DuckDB as the folded form).
 *
 * ```
 * tributary-state changelog 1 {"version":5,"numRows":120,"numChars":4410,"numChanges":30}\n
 * [["key","value JSON text"],["removed key",null],…]\n      one line per CHUNK changes at most
 * …
 * ```
 *
 * Each line is a JSON array of `[key, value]` pairs, so DuckDB parses it itself
 * (`json_transform`, in its own threads) and the commit costs one `JSON.stringify` and one file
 * write. The checkpoint file system writes the file atomically with its checksum beside it.
 *
 * @since 0.1.0
 */

/** The version of the changelog format. */
export const CHANGELOG_FORMAT = 1

/** Changes per line: a line is one parameter of one `INSERT … SELECT`, kept well under V8's string limit. */
const CHUNK = 50_000

type WellFormed = { readonly isWellFormed: () => boolean; readonly toWellFormed: () => string }
const fix = (s: string): string => ((s as unknown as WellFormed).isWellFormed() ? s : (s as unknown as WellFormed).toWellFormed())
const wellFormed = ([k, v]: readonly [string, string | null]): readonly [string, string | null] => [
  fix(k),
  v === null ? null : fix(v)
]

const HEADER = /^tributary-state changelog (\d+) (\{[^\n]*\})$/

/**
 * What a changelog's header records of its version.
 *
 * @since 0.1.0
 */
export interface ChangelogHeader {
  readonly version: number
  /** Live keys and the characters of their keys and values after the version. */
  readonly numRows: number
  readonly numChars: number
  readonly numChanges: number
}

/**
 * The text of a changelog file (its header, then the changes in lines; `null`: a removal), and
 * its lines of changes as `parseChangelog` gives them back.
 *
 * @since 0.1.0
 */
export const encodeChangelog = (
  header: ChangelogHeader,
  changes: ReadonlyArray<readonly [string, string | null]>
): { readonly text: string; readonly lines: ReadonlyArray<string> } => {
  const lines: Array<string> = []
  for (let i = 0; i < changes.length; i += CHUNK) {
    const chunk = i === 0 && changes.length <= CHUNK ? changes : changes.slice(i, i + CHUNK)
    const line = JSON.stringify(chunk)
    // JSON.stringify writes a lone surrogate as `\udxxx`, which DuckDB's parser refuses; DuckDB's
    // VARCHAR is UTF-8, so such a string is stored as it always was, with U+FFFD in its place.
    lines.push(line.includes("\\ud") ? JSON.stringify(chunk.map(wellFormed)) : line)
  }
  const head = `tributary-state changelog ${CHANGELOG_FORMAT} ${JSON.stringify(header)}\n`
  return { text: lines.length === 0 ? head : `${head}${lines.join("\n")}\n`, lines }
}

/**
 * A changelog file's header and its lines of changes (each a JSON array DuckDB parses), or why
 * the text is not a changelog of this format.
 *
 * @since 0.1.0
 */
export const parseChangelog = (
  text: string
): { readonly header: ChangelogHeader; readonly lines: ReadonlyArray<string> } | string => {
  const end = text.indexOf("\n")
  if (end < 0) return "it has no header line"
  const m = HEADER.exec(text.slice(0, end))
  if (m === null) return "it does not start with a tributary changelog header"
  if (Number(m[1]) !== CHANGELOG_FORMAT) {
    return `it is in changelog format ${m[1]}, which this version of tributary (format ${CHANGELOG_FORMAT}) cannot read`
  }
  let header: ChangelogHeader
  try {
    header = JSON.parse(m[2]) as ChangelogHeader
  } catch {
    return "its header is not valid JSON"
  }
  for (const f of ["version", "numRows", "numChars", "numChanges"] as const) {
    if (!Number.isSafeInteger(header[f]) || header[f] < 0) return `its header has no valid ${f}`
  }
  if (!text.endsWith("\n")) return "it is truncated (its last line has no end)"
  const lines = text.slice(end + 1, -1)
  return { header, lines: lines.length === 0 ? [] : lines.split("\n") }
}
