/**
 * The options of the streaming file source, Spark's `FileStreamOptions`, parsed with Spark's
 * rules and messages (`Invalid value '0' for option 'maxFilesPerTrigger', must be a positive
 * integer`). A bad value fails the query's `start()` with an `AnalysisError` naming the option.
 *
 * @since 0.1.0
 */
import { AnalysisError } from "../../core/Errors.ts"
import { type Options, option } from "../../core/Formats.ts"
import * as OptionParsing from "../OptionParsing.ts"

/** Spark's `CleanSourceMode`. */
export type CleanSourceMode = "ARCHIVE" | "DELETE" | "OFF"

/** The parsed options (Spark's defaults in brackets). */
export interface FileStreamOptions {
  /** `maxFilesPerTrigger` [none]: at most this many new files per batch. */
  readonly maxFilesPerTrigger: number | undefined
  /** `maxBytesPerTrigger` [none]: new files up to about this many bytes per batch (at least one file). */
  readonly maxBytesPerTrigger: number | undefined
  /** `maxFileAge` [7d]: files older than the newest seen file by more than this are ignored. */
  readonly maxFileAgeMs: number
  /** `latestFirst` [false]: newest files first. */
  readonly latestFirst: boolean
  /** `fileNameOnly` [false]: a file is known by its name, not its full path. */
  readonly fileNameOnly: boolean
  /** `cleanSource` [off]: `archive` (to `sourceArchiveDir`) or `delete` files once their batch commits. */
  readonly cleanSource: CleanSourceMode
  readonly sourceArchiveDir: string | undefined
  /** `maxCachedFiles` [10000]: listed but unread files kept for the next batches. */
  readonly maxCachedFiles: number
  /** `discardCachedInputRatio` [0.2]: below this share of the limit, cached files are dropped and the folder listed again. */
  readonly discardCachedInputRatio: number
}

const illegal = (message: string): AnalysisError =>
  new AnalysisError({ reason: "InvalidArgument", errorClass: "INVALID_OPTION", message })

/**
 * Spark's `JavaUtils.timeStringAsMs`: `"7d"`, `"500ms"`, `"2min"`, or a bare number of
 * milliseconds; microseconds truncate toward zero (`connectors/OptionParsing.ts`).
 */
export const timeStringAsMs = (str: string): number | AnalysisError => {
  const ms = OptionParsing.timeStringAsMs(str)
  return typeof ms === "string" ? illegal(ms) : ms
}

/** Java's `Long.parseLong` as a number, or `undefined`. */
const javaLongNumber = (s: string): number | undefined => {
  const n = OptionParsing.javaLong(s)
  return n === undefined ? undefined : Number(n)
}

/** Scala's `String.toBoolean`, with `FileStreamOptions.withBooleanParameter`'s message. */
const bool = (options: Options, key: string, dflt: boolean): boolean | AnalysisError => {
  const v = option(options, key)
  if (v === undefined) return dflt
  const l = v.toLowerCase()
  if (l === "true") return true
  if (l === "false") return false
  return illegal(`Invalid value '${v}' for option '${key}', must be 'true' or 'false'`)
}

/**
 * Parses the options of a file stream. Checks and messages follow Spark's `FileStreamOptions`
 * in its order: `modifiedBefore`/`modifiedAfter` refused, `maxFilesPerTrigger`,
 * `maxBytesPerTrigger` (not both), `maxFileAge`, `latestFirst`, `fileNameOnly`, `cleanSource`,
 * `maxCachedFiles`, `discardCachedInputRatio`.
 *
 * @example
 * ```ts
 * import { parseFileStreamOptions } from "./FileStreamOptions.ts"
 * parseFileStreamOptions({ maxFilesPerTrigger: "0" })
 * // AnalysisError: Invalid value '0' for option 'maxFilesPerTrigger', must be a positive integer
 * ```
 * @since 0.1.0
 */
export const parseFileStreamOptions = (options: Options): FileStreamOptions | AnalysisError => {
  for (const key of ["modifiedBefore", "modifiedAfter"]) {
    if (option(options, key) !== undefined) return illegal(`option '${key}' is not allowed in file stream sources`)
  }
  const filesText = option(options, "maxFilesPerTrigger")
  let maxFilesPerTrigger: number | undefined
  if (filesText !== undefined) {
    const n = OptionParsing.javaInt(filesText)
    if (n === undefined || n <= 0) {
      return illegal(`Invalid value '${filesText}' for option 'maxFilesPerTrigger', must be a positive integer`)
    }
    maxFilesPerTrigger = n
  }
  const bytesText = option(options, "maxBytesPerTrigger")
  let maxBytesPerTrigger: number | undefined
  if (bytesText !== undefined) {
    const n = javaLongNumber(bytesText)
    if (n === undefined || n <= 0) {
      return illegal(`Invalid value '${bytesText}' for option 'maxBytesPerTrigger', must be a positive integer`)
    }
    if (maxFilesPerTrigger !== undefined) {
      return illegal("Options 'maxFilesPerTrigger' and 'maxBytesPerTrigger' can't be both set at the same time")
    }
    maxBytesPerTrigger = n
  }
  const maxFileAgeMs = timeStringAsMs(option(options, "maxFileAge") ?? "7d")
  if (maxFileAgeMs instanceof AnalysisError) return maxFileAgeMs
  const latestFirst = bool(options, "latestFirst", false)
  if (latestFirst instanceof AnalysisError) return latestFirst
  const fileNameOnly = bool(options, "fileNameOnly", false)
  if (fileNameOnly instanceof AnalysisError) return fileNameOnly
  const sourceArchiveDir = option(options, "sourceArchiveDir")
  const cleanText = option(options, "cleanSource")
  let cleanSource: CleanSourceMode = "OFF"
  if (cleanText !== undefined) {
    const u = cleanText.toUpperCase()
    if (u !== "ARCHIVE" && u !== "DELETE" && u !== "OFF") {
      // Spark prints the Scala Option it was given
      return illegal(`Invalid mode for clean source option Some(${cleanText}). Must be one of ARCHIVE,DELETE,OFF`)
    }
    cleanSource = u
  }
  if (cleanSource === "ARCHIVE" && sourceArchiveDir === undefined) {
    return illegal("Archive mode must be used with 'sourceArchiveDir' option.")
  }
  const cachedText = option(options, "maxCachedFiles")
  let maxCachedFiles = 10000
  if (cachedText !== undefined) {
    const n = OptionParsing.javaInt(cachedText)
    if (n === undefined || n < 0) {
      return illegal(
        `Invalid value '${cachedText}' for option 'maxCachedFiles', must be an integer greater than or equal to 0`
      )
    }
    maxCachedFiles = n
  }
  const ratioText = option(options, "discardCachedInputRatio")
  let discardCachedInputRatio = 0.2
  if (ratioText !== undefined) {
    const x = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?\s*$/.test(ratioText)
      ? Number.parseFloat(ratioText)
      : Number.NaN
    if (!(x >= 0 && x <= 1)) {
      return illegal(
        `Invalid value '${ratioText}' for option 'discardCachedInputRatio', must be a positive float between 0 and 1`
      )
    }
    discardCachedInputRatio = x
  }
  return {
    maxFilesPerTrigger,
    maxBytesPerTrigger,
    maxFileAgeMs,
    latestFirst,
    fileNameOnly,
    cleanSource,
    sourceArchiveDir,
    maxCachedFiles,
    discardCachedInputRatio
  }
}
