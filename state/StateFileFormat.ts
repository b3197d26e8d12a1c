/**
 * The formats of the file provider's `<version>.delta` and `<version>.snapshot` files and of its
 * `_metadata/schema` file, with a checksum so a corrupt or truncated file is detected and named,
 * never silently read. Deltas and snapshots are written in format 2 (binary, below
 * `BINARY_FORMAT`); format 1, the text format described here, is what earlier versions wrote:
 * `applyStateFile` still reads it, so their checkpoints restart. The schema file stays format 1.
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
import { Buffer } from "node:buffer"
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
  return applyLines(kind, lines, path, target, (v) => v, operatorId)
}

const applyLines = (
  kind: "delta" | "snapshot",
  lines: ReadonlyArray<string>,
  path: string,
  target: Map<string, string>,
  convert: (json: string) => string,
  operatorId: number | undefined
): number | StateStoreError => {
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    const op = line.charCodeAt(0)
    if (op === 43 /* + */) {
      const tab = line.indexOf("\t")
      if (tab < 0) return corrupt(path, `entry ${i + 1} has no value`, operatorId)
      const key = parseKey(line.slice(1, tab))
      if (key === undefined) return corrupt(path, `entry ${i + 1} has an unreadable key`, operatorId)
      let value: string
      try {
        value = convert(line.slice(tab + 1))
      } catch {
        return corrupt(path, `entry ${i + 1} has an unreadable value`, operatorId)
      }
      target.set(key, value)
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

// ---- format 2: binary ---------------------------------------------------------------------

/**
 * Format 2 of `<version>.delta` and `<version>.snapshot`: binary, as Spark's delta files
 * (`HDFSBackedStateStoreProvider.writeUpdateToDeltaFile`: key size, key bytes, value size, value
 * bytes, `-1` for the end), with a text header naming the kind and format and a checksummed
 * footer.
 *
 * ```
 * tributary-state delta 2\n          header (ASCII)
 * int32 keySize, key (UTF-8),         one entry; sizes are big-endian int32 (Java's DataOutput)
 *   int32 valueSize, value bytes      valueSize -1: a removal (deltas only); the value bytes are
 *                                     the value's encoding (StateCodec.ts)
 * ...
 * int32 -1                            the end (Spark's end marker)
 * int32 entries, 32 bytes SHA-256     footer: the entry count, the hash of every byte before it
 * ```
 *
 * @since 0.1.0
 */
export const BINARY_FORMAT = 2

const CHUNK = 1 << 20

/**
 * Builds a format-2 file entry by entry in 1 MiB chunks, hashing as it goes (a large snapshot is
 * written in steps between which other work runs).
 *
 * @since 0.1.0
 */
export class BinaryFrameWriter {
  readonly #hash = createHash("sha256")
  readonly #chunks: Array<Buffer> = []
  #buf: Buffer = Buffer.allocUnsafe(CHUNK)
  #pos = 0
  #count = 0

  constructor(kind: "delta" | "snapshot") {
    this.#pos = this.#buf.write(`tributary-state ${kind} ${BINARY_FORMAT}\n`, 0, "latin1")
  }

  #room(n: number): void {
    if (this.#pos + n <= this.#buf.length) return
    this.#seal()
    this.#buf = Buffer.allocUnsafe(Math.max(CHUNK, n))
    this.#pos = 0
  }

  #seal(): void {
    if (this.#pos === 0) return
    const done = this.#buf.subarray(0, this.#pos)
    this.#hash.update(done)
    this.#chunks.push(done)
  }

  /** Adds one entry: a key and its value's encoding (a binary string), or `null` for a removal. */
  add(key: string, value: string | null): void {
    let ascii = true
    for (let i = 0; i < key.length; i++) {
      if (key.charCodeAt(i) >= 0x80) {
        ascii = false
        break
      }
    }
    const keySize = ascii ? key.length : Buffer.byteLength(key, "utf8")
    const valueSize = value === null ? 0 : value.length
    this.#room(8 + keySize + valueSize)
    const b = this.#buf
    let p = this.#pos
    b.writeInt32BE(keySize, p)
    p += 4
    p += b.write(key, p, keySize, ascii ? "latin1" : "utf8")
    if (value === null) {
      b.writeInt32BE(-1, p)
      p += 4
    } else {
      b.writeInt32BE(valueSize, p)
      p += 4
      p += b.write(value, p, valueSize, "latin1")
    }
    this.#pos = p
    this.#count++
  }

  /** The whole file, end marker and footer included. */
  finish(): Buffer {
    this.#room(4)
    this.#buf.writeInt32BE(-1, this.#pos)
    this.#pos += 4
    this.#seal()
    const footer = Buffer.allocUnsafe(36)
    footer.writeInt32BE(this.#count, 0)
    this.#hash.digest().copy(footer, 4)
    this.#chunks.push(footer)
    return Buffer.concat(this.#chunks)
  }
}

/**
 * A format-2 delta file: the batch's puts (value encodings) and removals (`null`).
 *
 * @since 0.1.0
 */
export const encodeBinaryDelta = (changes: Iterable<readonly [string, string | null]>): Buffer => {
  const w = new BinaryFrameWriter("delta")
  for (const [k, v] of changes) w.add(k, v)
  return w.finish()
}

/**
 * A format-2 snapshot file: every entry of one version.
 *
 * @since 0.1.0
 */
export const encodeBinarySnapshot = (entries: Iterable<readonly [string, string]>): Buffer => {
  const w = new BinaryFrameWriter("snapshot")
  for (const [k, v] of entries) w.add(k, v)
  return w.finish()
}

const HEADER = /^tributary-state (delta|snapshot|schema) (\d+)\n/

/**
 * Applies a delta or snapshot file of either format to `target` (key to value encoding), after
 * verifying it: format 2 as it is; format 1 (text, written before format 2) with each value's
 * JSON text turned into its encoding by `fromJson`. A file of a later format, or of another kind,
 * is `Corrupt` and named. Returns the number of entries applied, or the error.
 *
 * @since 0.1.0
 */
export const applyStateFile = (
  kind: "delta" | "snapshot",
  data: Uint8Array,
  path: string,
  target: Map<string, string>,
  fromJson: (json: string) => string,
  operatorId?: number
): number | StateStoreError => {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const head = HEADER.exec(buf.toString("latin1", 0, Math.min(buf.length, 64)))
  if (head === null || head[1] !== kind) {
    return corrupt(
      path,
      buf.length < 24
        ? `it is truncated (${buf.length} bytes)`
        : `it does not start with 'tributary-state ${kind} ${BINARY_FORMAT}'`,
      operatorId
    )
  }
  const format = Number(head[2])
  if (format === 1) {
    const lines = unframe(kind, buf.toString("utf8"), path, operatorId)
    if (lines instanceof StateStoreError) return lines
    return applyLines(kind, lines, path, target, fromJson, operatorId)
  }
  if (format !== BINARY_FORMAT) {
    return corrupt(
      path,
      `it has format ${format}, which this version of tributary cannot read (it reads formats 1 and ${BINARY_FORMAT}): it was written by a later version`,
      operatorId
    )
  }
  const start = head[0].length
  if (buf.length < start + 40) return corrupt(path, "it is truncated (no footer)", operatorId)
  const footerAt = buf.length - 36
  const digest = createHash("sha256").update(buf.subarray(0, footerAt)).digest()
  if (!digest.equals(buf.subarray(footerAt + 4)))
    return corrupt(path, "its checksum does not match its content", operatorId)
  const expected = buf.readInt32BE(footerAt)
  let p = start
  let n = 0
  for (;;) {
    if (p + 4 > footerAt) return corrupt(path, "it has no end marker", operatorId)
    const keySize = buf.readInt32BE(p)
    p += 4
    if (keySize === -1) break
    if (keySize < 0 || p + keySize + 4 > footerAt) return corrupt(path, `entry ${n + 1} is cut short`, operatorId)
    const key = buf.toString("utf8", p, p + keySize)
    p += keySize
    const valueSize = buf.readInt32BE(p)
    p += 4
    if (valueSize === -1) {
      if (kind !== "delta") return corrupt(path, `entry ${n + 1} is a removal in a snapshot`, operatorId)
      target.delete(key)
    } else {
      if (valueSize < 0 || p + valueSize > footerAt) return corrupt(path, `entry ${n + 1} is cut short`, operatorId)
      target.set(key, buf.toString("latin1", p, p + valueSize))
      p += valueSize
    }
    n++
  }
  if (p !== footerAt) return corrupt(path, "bytes follow its end marker", operatorId)
  if (n !== expected) return corrupt(path, `it has ${n} entries where its footer says ${expected}`, operatorId)
  return n
}
