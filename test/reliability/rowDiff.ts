/** Row comparison for the fuzzers, brief on failure (a generated record can be 200 KB long). */
import * as fs from "node:fs"
import * as path from "node:path"

let fileNo = 0

/** Writes `records` as the lines of a new file in `dir`, each ended by `\n` or `\r\n`. */
export const writeLines = (
  dir: string,
  ext: string,
  records: ReadonlyArray<{ readonly bytes: Uint8Array }>,
  crlf = false
): string => {
  const file = path.join(dir, `records-${fileNo++}.${ext}`)
  const newline = crlf ? new Uint8Array([0x0d, 0x0a]) : new Uint8Array([0x0a])
  fs.writeFileSync(file, Buffer.concat(records.flatMap((r) => [r.bytes, newline])))
  return file
}

/** JSON text that tells NaN, the infinities and -0 apart. */
export const show = (v: unknown): string =>
  JSON.stringify(v, (_, x) => (typeof x === "number" && (!Number.isFinite(x) || Object.is(x, -0)) ? `num:${x}` : x)) ??
  String(v)

export const short = (v: unknown): string => {
  const t = show(v)
  return t.length > 300 ? `${t.slice(0, 300)}…(${t.length} chars)` : t
}

export const firstDifference = (
  mode: string,
  actual: ReadonlyArray<unknown>,
  expected: ReadonlyArray<unknown>
): string | undefined => {
  for (let i = 0; i < Math.max(actual.length, expected.length); i++) {
    if (show(actual[i]) !== show(expected[i])) {
      return `${mode} row ${i} of ${expected.length} (got ${actual.length}): expected ${short(expected[i])}, got ${short(actual[i])}`
    }
  }
  return undefined
}
