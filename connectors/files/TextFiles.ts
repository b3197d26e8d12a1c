/**
 * Reading a file's text through DuckDB (`read_blob`, the path passed as a parameter) and
 * splitting it into records the way Hadoop's `LineRecordReader` does for Spark's text-based
 * sources.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { ConnectorError } from "../../core/Errors.ts"
import type { Connection } from "../../state/DuckDB.ts"
import { qualifiedName } from "./FileListing.ts"

/**
 * A DuckDB failure while reading `path`, as a `ConnectorError` naming the file. Missing or
 * unreadable files are the environment's fault (`external`); anything else DuckDB rejects
 * (a corrupt Parquet footer, …) is the data's (`user`).
 */
export const readFailure = (connector: string, path: string, cause: unknown): ConnectorError => {
  const detail = cause instanceof Error ? cause.message : String(cause)
  const external = /permission denied|no such file|cannot open|could not open|i\/o error|IO Error/i.test(detail)
  return new ConnectorError({
    connector,
    domain: external ? "external" : "user",
    retryable: false,
    message: `[FAILED_READ_FILE.NO_HINT] Encountered error while reading file ${qualifiedName(path)}. ${detail}`,
    cause
  })
}

/**
 * A path as a DuckDB glob that matches only that file: DuckDB's file functions expand `*`, `?`
 * and `[...]`, so each of those characters is wrapped in a character class (`x[1]` becomes
 * `x[[]1]`), which DuckDB reads literally.
 */
export const duckLiteralPath = (path: string): string => path.replace(/[*?[]/g, (c) => `[${c}]`)

/** The bytes of one file, read with DuckDB's `read_blob`. */
export const readBytes = (c: Connection, connector: string, path: string): Effect.Effect<Uint8Array, ConnectorError> =>
  c.query("SELECT filename, content FROM read_blob(?)", [duckLiteralPath(path)]).pipe(
    Effect.mapError((e) => readFailure(connector, path, e)),
    Effect.flatMap((r) => {
      // the pattern can only match this file; checking the name keeps that promise explicit
      for (const row of r.rows) if (row[0] === path) return Effect.succeed(row[1] as Uint8Array)
      return Effect.fail(readFailure(connector, path, new Error("No such file: it was removed after listing")))
    })
  )

/**
 * Decodes bytes as text. Malformed sequences become U+FFFD (as Java's decoder does); a UTF-8
 * byte-order mark is dropped (Hadoop's `LineRecordReader` skips it).
 */
export const decode = (bytes: Uint8Array, encoding: string): string => new TextDecoder(encoding).decode(bytes)

/** The web-standard decompression format of a Hadoop codec's file extension, if any. */
const codecOf = (path: string): CompressionFormat | undefined =>
  path.endsWith(".gz") ? "gzip" : path.endsWith(".deflate") ? "deflate" : undefined

/**
 * Undoes the compression a file's extension names (`.gz`, `.deflate`), as Hadoop's codecs do
 * for Spark's text-based sources.
 */
const decompress = (connector: string, path: string, bytes: Uint8Array): Effect.Effect<Uint8Array, ConnectorError> => {
  const codec = codecOf(path)
  if (codec === undefined) return Effect.succeed(bytes)
  return Effect.tryPromise({
    try: async () => {
      const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream(codec))
      return new Uint8Array(await new Response(stream).arrayBuffer())
    },
    catch: (e) => readFailure(connector, path, e)
  })
}

/** The text of one file (decompressed when its extension names a codec). */
export const readText = (
  c: Connection,
  connector: string,
  path: string,
  encoding: string
): Effect.Effect<string, ConnectorError> =>
  readBytes(c, connector, path).pipe(
    Effect.flatMap((b) => decompress(connector, path, b)),
    Effect.map((b) => decode(b, encoding))
  )

/**
 * Splits text into records. Without `lineSep` a record ends at `\n`, `\r\n` or `\r`; with it, at
 * that exact string. A separator at the very end does not start an empty record; empty
 * records in between are kept (the text source returns them, CSV and JSON skip them).
 */
export const splitLines = (text: string, lineSep: string | undefined): Array<string> => {
  const out: Array<string> = []
  if (text.length === 0) return out
  if (lineSep !== undefined) {
    let start = 0
    while (true) {
      const i = text.indexOf(lineSep, start)
      if (i < 0) break
      out.push(text.slice(start, i))
      start = i + lineSep.length
    }
    if (start < text.length) out.push(text.slice(start))
    return out
  }
  let start = 0
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 10) {
      out.push(text.slice(start, i))
      start = i + 1
    } else if (c === 13) {
      out.push(text.slice(start, i))
      if (i + 1 < n && text.charCodeAt(i + 1) === 10) i++
      start = i + 1
    }
  }
  if (start < n) out.push(text.slice(start))
  return out
}
