/**
 * The `text` batch format, Spark's `TextFileFormat`: one row per line in a single string
 * column `value` (empty lines included), or one row per file with `wholetext`. `lineSep` sets
 * the line separator (default `\n`, `\r\n` or `\r`).
 *
 * @example
 * ```ts
 * import { TextFormat } from "./TextFormat.ts"
 * TextFormat.read(["/logs/app.log"], schema, { wholetext: "false" })
 * // rows like ["first line"], ["second line"]
 * ```
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as T from "../../core/DataType.ts"
import { AnalysisError } from "../../core/Errors.ts"
import type { BatchFormat, Options } from "../../core/Formats.ts"
import type { InternalRow } from "../../core/Row.ts"
import { type FileReader, makeFileFormat, noResource } from "./FileSource.ts"
import { OptionReader, parseOptions } from "./FileSourceOptions.ts"
import { readText, splitLines } from "./TextFiles.ts"

interface TextOptions {
  readonly wholetext: boolean
  readonly lineSep: string | undefined
  readonly encoding: string
}

const parseTextOptions = (options: Options): Effect.Effect<TextOptions, AnalysisError> =>
  parseOptions(() => {
    const r = new OptionReader("text", options)
    return { wholetext: r.bool("wholetext", false), lineSep: r.lineSep(), encoding: r.encoding() }
  })

/** The schema of a text read: one string column `value`. */
export const textSchema: T.StructType = T.struct([T.field("value", T.StringType, true)])

const makeReader = (dataSchema: T.StructType, o: TextOptions): Effect.Effect<FileReader<undefined>> =>
  Effect.sync(() => {
    const width = dataSchema.fields.length
    return (_, file) =>
      Effect.map(readText("text", file.path, o.encoding), (text) => {
        // a read of partition columns only still yields one row per line
        const lines = o.wholetext ? [text] : splitLines(text, o.lineSep)
        const out = new Array<InternalRow>(lines.length)
        for (let i = 0; i < lines.length; i++) out[i] = width === 0 ? [] : [lines[i]]
        return out
      })
  })

/** The `text` format. */
export const TextFormat: BatchFormat = makeFileFormat<TextOptions, undefined>({
  name: "text",
  title: "Text",
  parseOptions: parseTextOptions,
  supports: (t) => t._tag === "string",
  checkUserSchema: (data) =>
    data.fields.length === 1
      ? Effect.void
      : Effect.fail(
          new AnalysisError({
            reason: "InvalidArgument",
            message: `Text data source supports only a single column, and you have ${data.fields.length} columns.`
          })
        ),
  withResource: noResource,
  inferSchema: () => Effect.succeed(textSchema),
  schemaWithoutFiles: textSchema,
  makeReader
})
