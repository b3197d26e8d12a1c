/**
 * The text format of the file provider's `<version>.delta` and `<version>.snapshot` files and of
 * its `_metadata/schema` file, with a checksum so a corrupt or truncated file is detected and
 * named, never silently read.
 *
 * ```
 * tributary-state delta 1          header: kind and format version
 * +"key-1"\t{"count":3}            a put: the key as a JSON string, a tab, the value's JSON
 * -"key-2"                         a removal (deltas only)
 * #2\t<sha-256 of every byte above, hex>
 * ```
 *
 * A key's JSON text and a value's JSON text never contain a raw tab or newline (JSON escapes
 * them), so lines split unambiguously. The footer carries the line count and a SHA-256 of the
 * header and lines; a file that ends early has no valid footer, and a changed byte changes the
 * hash. (Spark's delta files are a compressed stream of `UnsafeRow` bytes ended by `-1`; this is
 * the same content as text.)
 *
 * @since 0.1.0
 */
import { createHash } from "node:crypto"
import { StateStoreError } from "../core/Errors.ts"

/** The kinds of state file. */
export type StateFileKind = "delta" | "snapshot" | "schema"

const header = (kind: StateFileKind): string => `tributary-state ${kind} 1`

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

/**
 * Builds a framed file line by line, hashing as it goes, so a large snapshot can be written in
 * chunks between which other work runs.
 *
 * @since 0.1.0
 */
export class FrameWriter {
  readonly #hash = createHash("sha256")
  readonly #parts: Array<string> = []
  #lines: Array<string> = []
  #count = 0

  constructor(kind: StateFileKind) {
    this.#push(`${header(kind)}\n`)
  }

  #push(part: string): void {
    this.#hash.update(part, "utf8")
    this.#parts.push(part)
  }

  #flush(): void {
    if (this.#lines.length === 0) return
    this.#push(`${this.#lines.join("\n")}\n`)
    this.#lines = []
  }

  /** Adds one line (it must not contain a newline). */
  add(line: string): void {
    this.#lines.push(line)
    this.#count++
    if (this.#lines.length >= 10_000) this.#flush()
  }

  /** The whole file, footer included. */
  finish(): string {
    this.#flush()
    return `${this.#parts.join("")}#${this.#count}\t${this.#hash.digest("hex")}\n`
  }
}

/**
 * Frames lines into a file: header, the lines, then a footer with their count and checksum.
 *
 * @since 0.1.0
 */
export const frame = (kind: StateFileKind, lines: Iterable<string>): string => {
  const w = new FrameWriter(kind)
  for (const line of lines) w.add(line)
  return w.finish()
}

/** A put line: the key as a JSON string, a tab, the value's JSON text. */
export const putLine = (key: string, value: string): string => `+${JSON.stringify(key)}\t${value}`

const corrupt = (path: string, what: string, operatorId: number | undefined) =>
  new StateStoreError({
    reason: "Corrupt",
    path,
    operatorId,
    message:
      `The state file ${path} is corrupt: ${what}. It cannot be read safely; restore it from a backup ` +
      `or start the query from a new checkpoint.`
  })

/**
 * The lines of a framed file, after checking its header, footer and checksum; a `Corrupt`
 * error naming `path` when any of them is wrong.
 *
 * @since 0.1.0
 */
export const unframe = (
  kind: StateFileKind,
  text: string,
  path: string,
  operatorId?: number
): ReadonlyArray<string> | StateStoreError => {
  const h = `${header(kind)}\n`
  if (!text.startsWith(h)) {
    return corrupt(
      path,
      text.length < h.length ? `it is truncated (${text.length} bytes)` : `it does not start with '${header(kind)}'`,
      operatorId
    )
  }
  if (!text.endsWith("\n")) return corrupt(path, "it is truncated (no footer)", operatorId)
  const footerStart = text.lastIndexOf("\n", text.length - 2) + 1
  const footer = text.slice(footerStart, text.length - 1)
  const m = /^#(\d+)\t([0-9a-f]{64})$/.exec(footer)
  if (m === null || footerStart < h.length) return corrupt(path, "it is truncated (no footer)", operatorId)
  const body = text.slice(0, footerStart)
  if (sha256(body) !== m[2]) return corrupt(path, "its checksum does not match its content", operatorId)
  const inner = body.slice(h.length, body.length - 1)
  const lines = inner === "" && body.length === h.length ? [] : inner.split("\n")
  if (lines.length !== Number(m[1])) {
    return corrupt(path, `it has ${lines.length} entries where its footer says ${m[1]}`, operatorId)
  }
  return lines
}

/**
 * A delta file: the batch's puts (JSON value text) and removals (`null`).
 *
 * @since 0.1.0
 */
export const encodeDelta = (changes: Iterable<readonly [string, string | null]>): string => {
  const w = new FrameWriter("delta")
  for (const [k, v] of changes) w.add(v === null ? `-${JSON.stringify(k)}` : putLine(k, v))
  return w.finish()
}

/**
 * A snapshot file: every entry of one version.
 *
 * @since 0.1.0
 */
export const encodeSnapshot = (entries: Iterable<readonly [string, string]>): string => {
  const w = new FrameWriter("snapshot")
  for (const [k, v] of entries) w.add(putLine(k, v))
  return w.finish()
}

/**
 * Applies a delta or snapshot file's entries to `target` (puts set, removals delete), after
 * verifying it. Returns the number of entries applied, or the `Corrupt` error.
 *
 * @since 0.1.0
 */
export const applyFile = (
  kind: "delta" | "snapshot",
  text: string,
  path: string,
  target: Map<string, string>,
  operatorId?: number
): number | StateStoreError => {
  const lines = unframe(kind, text, path, operatorId)
  if (lines instanceof StateStoreError) return lines
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    const op = line.charCodeAt(0)
    if (op === 43 /* + */) {
      const tab = line.indexOf("\t")
      if (tab < 0) return corrupt(path, `entry ${i + 1} has no value`, operatorId)
      const key = parseKey(line.slice(1, tab))
      if (key === undefined) return corrupt(path, `entry ${i + 1} has an unreadable key`, operatorId)
      target.set(key, line.slice(tab + 1))
    } else if (op === 45 /* - */ && kind === "delta") {
      const key = parseKey(line.slice(1))
      if (key === undefined) return corrupt(path, `entry ${i + 1} has an unreadable key`, operatorId)
      target.delete(key)
    } else {
      return corrupt(path, `entry ${i + 1} is not a ${kind} entry`, operatorId)
    }
  }
  return lines.length
}

const parseKey = (json: string): string | undefined => {
  try {
    const k: unknown = JSON.parse(json)
    return typeof k === "string" ? k : undefined
  } catch {
    return undefined
  }
}
