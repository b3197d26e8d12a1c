/**
 * The `console` sink (Spark's `ConsoleSinkProvider` / `ConsoleWrite`): prints every micro-batch
 * as Spark does — a line of dashes, `Batch: <id>`, another line of dashes, then the batch as
 * `show(numRows, truncate)` prints it, followed by a blank line. Output goes through Effect's
 * `Console` service, so a test (or an application) can capture it.
 *
 * This sink cannot give exactly-once output: printed text cannot be taken back, so a batch
 * replayed after a restart prints again. Within one run a batch id already printed is skipped.
 *
 * @since 0.1.0
 */
import { Console, Effect } from "effect"
import type * as T from "../../core/DataType.ts"
import { AnalysisError } from "../../core/Errors.ts"
import { type Options, option } from "../../core/Formats.ts"
import type { InternalRow } from "../../core/Row.ts"
import { showString } from "../../core/ShowString.ts"
import type { OutputMode, Sink, SinkFormat } from "../../core/Streaming.ts"

/** The console sink's options: `numRows` (default 20) and `truncate` (default true). */
export interface ConsoleOptions {
  readonly numRows: number
  readonly truncate: boolean
}

const invalid = (message: string): AnalysisError => new AnalysisError({ reason: "InvalidArgument", message })

/**
 * Parses `numRows` (Java's `Integer.parseInt`) and `truncate` (`true`/`false` in any case), with
 * the messages of Spark's `CaseInsensitiveStringMap.getInt` / `getBoolean`.
 *
 * @example
 * ```ts
 * import { parseConsoleOptions } from "./ConsoleSink.ts"
 * parseConsoleOptions({ NUMROWS: "2", truncate: "FALSE" }) // { numRows: 2, truncate: false }
 * ```
 * @since 0.1.0
 */
export const parseConsoleOptions = (options: Options): ConsoleOptions | AnalysisError => {
  const rows = option(options, "numRows")
  let numRows = 20
  if (rows !== undefined) {
    const n = /^[+-]?\d+$/.test(rows) ? Number(rows) : Number.NaN
    if (!Number.isInteger(n) || n < -2_147_483_648 || n > 2_147_483_647) return invalid(`For input string: "${rows}"`)
    numRows = n
  }
  const t = option(options, "truncate")
  let truncate = true
  if (t !== undefined) {
    if (t.toLowerCase() === "true") truncate = true
    else if (t.toLowerCase() === "false") truncate = false
    else return invalid(`${t} is not a boolean string.`)
  }
  return { numRows, truncate }
}

const DASHES = "-------------------------------------------"

/**
 * The text printed for one batch: the `Batch: <id>` banner and the table, ending with the blank
 * line Spark's `println(showString(...))` leaves (the table ends with a newline of its own).
 * Like `Dataset.show`, a negative `numRows` shows no rows.
 *
 * @example
 * ```ts
 * import * as T from "../../core/DataType.ts"
 * import { consoleBatchText } from "./ConsoleSink.ts"
 * consoleBatchText(0, T.struct([T.field("value", T.IntegerType)]), [[1]], { numRows: 20, truncate: true })
 * // "-------------------------------------------\nBatch: 0\n-------------------------------------------\n+-----+\n|value|\n+-----+\n|    1|\n+-----+\n"
 * ```
 * @since 0.1.0
 */
export const consoleBatchText = (
  batchId: number,
  schema: T.StructType,
  rows: ReadonlyArray<InternalRow>,
  options: ConsoleOptions
): string => {
  const numRows = Math.max(0, options.numRows)
  return `${DASHES}\nBatch: ${batchId}\n${DASHES}\n${showString(schema, rows, numRows, options.truncate ? 20 : 0)}`
}

const makeSink = (options: ConsoleOptions): Sink => {
  const printed = new Set<number>()
  return {
    // Spark's `ConsoleWrite.toString`.
    description: `ConsoleWriter[numRows=${options.numRows}, truncate=${options.truncate}]`,
    addBatch: (batch) =>
      Effect.suspend(() => {
        if (printed.has(batch.batchId)) return Effect.void
        printed.add(batch.batchId)
        // One call, so that batches of concurrent queries do not interleave line by line;
        // `log` adds the final newline, which leaves Spark's blank line after the table.
        return Console.log(consoleBatchText(batch.batchId, batch.schema, batch.rows, options))
      }),
    stop: () => Effect.void
  }
}

const ALL_MODES: ReadonlyArray<OutputMode> = ["append", "update", "complete"]

/**
 * The `console` sink format: `writeStream.format("console")` with `numRows` and `truncate`.
 * Every output mode is accepted; in complete mode each batch prints the whole result table.
 *
 * @example
 * ```ts
 * import { ConsoleSink } from "./ConsoleSink.ts"
 * ConsoleSink.supportedOutputModes // ["append", "update", "complete"]
 * ```
 * @since 0.1.0
 */
export const ConsoleSink: SinkFormat = {
  name: "console",
  supportedOutputModes: ALL_MODES,
  // A DataSource V2 sink in Spark: `partitionBy` is passed through as given.
  batchIdAware: false,
  create: (ctx) =>
    Effect.suspend(() => {
      const options = parseConsoleOptions(ctx.options)
      return options instanceof AnalysisError ? Effect.fail(options) : Effect.succeed(makeSink(options))
    })
}
