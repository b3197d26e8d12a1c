/**
 * The typed errors of tributary: one class per area, each with a `reason` that says what went
 * wrong and a `message` that says how to fix it. They are values in Effect's error channel and
 * `yield*`-able inside `Effect.gen`; no public API throws them.
 *
 * @since 0.1.0
 */
import { type Cause, Data } from "effect"

/** The constructor `Data.TaggedError(tag)<A>` returns, written out (JSR wants explicit types). */
type TaggedErrorBase<Tag extends string, A> = new (
  args: A
) => Cause.YieldableError & { readonly _tag: Tag } & Readonly<A>

/** The fields of {@link AnalysisError}. */
interface AnalysisErrorFields {
  readonly reason:
    | "UnresolvedColumn"
    | "AmbiguousReference"
    | "DataTypeMismatch"
    | "UnsupportedOperation"
    | "WatermarkRequired"
    | "InvalidPlan"
    | "InvalidArgument"
    | "PathNotFound"
    | "TableNotFound"
    | "SchemaRequired"
    | "ParseError"
  readonly message: string
  /** For `UnresolvedColumn`: the closest existing column names, best first. */
  readonly suggestions?: ReadonlyArray<string>
  /** Spark's error class where one applies, e.g. `UNRESOLVED_COLUMN.WITH_SUGGESTION`. */
  readonly errorClass?: string
}
const AnalysisErrorBase: TaggedErrorBase<"AnalysisError", AnalysisErrorFields> = Data.TaggedError(
  "AnalysisError"
)<AnalysisErrorFields>

/**
 * The plan cannot run as written: an unresolved column (with a did-you-mean list), a type
 * mismatch, an operation the output mode does not support, a missing watermark.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { AnalysisError } from "tributary-streaming"
 * const handled = Effect.fail(new AnalysisError({ reason: "UnresolvedColumn", message: "no column x" }))
 *   .pipe(Effect.catchTag("AnalysisError", (e) => Effect.succeed(e.reason)))
 * ```
 * @since 0.1.0
 */
export class AnalysisError extends AnalysisErrorBase {}

/** The fields of {@link ParseException}. */
interface ParseExceptionFields {
  /** Spark's `ParseException.getMessage`: the message, `(line l, pos p)`, and the `== SQL ==` block. */
  readonly message: string
  /** `PARSE_SYNTAX_ERROR`, `INVALID_TYPED_LITERAL`, `UNSUPPORTED_DATATYPE`, … */
  readonly errorClass: string
  /** Spark's SQLSTATE of the error class (`42601` for a syntax error). */
  readonly sqlState: string
  /** The text that did not parse. */
  readonly command: string
  /** 1-based line of the offending token. */
  readonly line: number
  /** 0-based position of the offending token in its line. */
  readonly startPosition: number
}

/**
 * Expression text that does not parse (`F.expr`, `selectExpr`, `filter("…")`), as Spark's
 * `ParseException` — which, as in Spark, is an {@link AnalysisError} (reason `ParseError`), so
 * `Effect.catchTag("AnalysisError", …)` sees it too. The message is Spark's: the error class,
 * the SQLSTATE, the position, and the text with a caret line under the offending token.
 *
 * @example
 * ```ts
 * import { ParseException } from "tributary-streaming"
 * const e = ParseException.at("a + + ", 6, "PARSE_SYNTAX_ERROR", "42601", "Syntax error at or near end of input.")
 * e.message
 * // [PARSE_SYNTAX_ERROR] Syntax error at or near end of input. SQLSTATE: 42601 (line 1, pos 6)
 * //
 * // == SQL ==
 * // a + +
 * // ------^^^
 * ```
 * @since 0.7.0
 */
export class ParseException extends AnalysisError {
  declare readonly errorClass: string
  declare readonly sqlState: string
  declare readonly command: string
  declare readonly line: number
  declare readonly startPosition: number

  constructor(fields: ParseExceptionFields) {
    super({ reason: "ParseError", ...fields })
  }

  /**
   * A syntax error at character `offset` of `command`, worded as Spark's `ParseException` of the
   * parser's error listener: `[CLASS] text SQLSTATE: s (line l, pos p)`, then `== SQL ==`, the
   * lines up to the offending one, a line of `p` dashes and `^^^`, and the lines after it
   * (without the message's leading newline).
   */
  static at(command: string, offset: number, errorClass: string, sqlState: string, text: string): ParseException {
    const { line, startPosition } = position(command, offset)
    const lines = command.split("\n")
    const sql = [...lines.slice(0, line), `${"-".repeat(startPosition)}^^^`, ...lines.slice(line)]
      .map((l) => `${l}\n`)
      .join("")
    return new ParseException({
      message: `[${errorClass}] ${text} SQLSTATE: ${sqlState} (line ${line}, pos ${startPosition})\n\n== SQL ==\n${sql}`,
      errorClass,
      sqlState,
      command,
      line,
      startPosition
    })
  }

  /**
   * An error about the fragment `[start, stop)` of `command` (a literal, a type name), worded as
   * Spark's parser words the errors it raises with a query context: `[CLASS] text SQLSTATE: s`,
   * then `== SQL (line l, position p) ==` (p 1-based) and the text with `^` under the fragment.
   * An empty `sqlState` is an error Spark words without class and SQLSTATE
   * (`_LEGACY_ERROR_TEMP_0029`: `Cannot mix year-month and day-time fields: …`).
   */
  static inContext(
    command: string,
    start: number,
    stop: number,
    errorClass: string,
    sqlState: string,
    text: string
  ): ParseException {
    const { line, startPosition } = position(command, start)
    const out: Array<string> = []
    let lineStart = 0
    for (const l of command.split("\n")) {
      const lineEnd = lineStart + l.length
      out.push(l)
      const from = Math.max(start, lineStart)
      const to = Math.min(stop, lineEnd)
      if (from < to) out.push(`${" ".repeat(from - lineStart)}${"^".repeat(to - from)}`)
      lineStart = lineEnd + 1
    }
    const head = sqlState === "" ? text : `[${errorClass}] ${text} SQLSTATE: ${sqlState}`
    return new ParseException({
      message: `${head}\n== SQL (line ${line}, position ${startPosition + 1}) ==\n${out.map((l) => `${l}\n`).join("")}`,
      errorClass,
      sqlState,
      command,
      line,
      startPosition
    })
  }
}

/** The 1-based line and 0-based position in its line of character `offset` of `text`. */
const position = (text: string, offset: number): { readonly line: number; readonly startPosition: number } => {
  const before = text.slice(0, offset).split("\n")
  return { line: before.length, startPosition: before[before.length - 1].length }
}

/** The fields of {@link StreamingQueryError}. */
interface StreamingQueryErrorFields {
  readonly message: string
  readonly queryId: string
  readonly runId: string
  readonly batchId: number | undefined
  readonly operatorId?: number | undefined
  readonly cause: unknown
  /**
   * Spark's `StreamingQueryException.startOffset`: the offsets committed when the query failed,
   * as Spark writes an `OffsetSeq` (`[0, {"t":{"0":5}}]`, `-` for a source without one).
   */
  readonly startOffset?: string | undefined
  /** Spark's `StreamingQueryException.endOffset`: the offsets of the batch that was running. */
  readonly endOffset?: string | undefined
}
const StreamingQueryErrorBase: TaggedErrorBase<"StreamingQueryError", StreamingQueryErrorFields> = Data.TaggedError(
  "StreamingQueryError"
)<StreamingQueryErrorFields>

/**
 * A streaming query failed. Wraps the cause and names the batch (and operator, when one is to
 * blame). `awaitTermination` and `exception()` report it.
 *
 * @since 0.1.0
 */
export class StreamingQueryError extends StreamingQueryErrorBase {}

/** The fields of {@link CheckpointError}. */
interface CheckpointErrorFields {
  readonly reason: "Corrupt" | "LogGap" | "Incompatible" | "ConcurrentUse" | "Io" | "UnsupportedVersion"
  readonly message: string
  readonly path: string
  readonly cause?: unknown
}
const CheckpointErrorBase: TaggedErrorBase<"CheckpointError", CheckpointErrorFields> = Data.TaggedError(
  "CheckpointError"
)<CheckpointErrorFields>

/**
 * A checkpoint cannot be used: unreadable or corrupt files, a gap in a log, a foreign or
 * incompatible layout, or another active query on the same location. Names the file.
 *
 * @since 0.1.0
 */
export class CheckpointError extends CheckpointErrorBase {}

/** The fields of {@link StateStoreError}. */
interface StateStoreErrorFields {
  readonly reason: "VersionNotFound" | "CommitFailed" | "SchemaIncompatible" | "Corrupt" | "Io" | "InvalidUsage"
  readonly message: string
  readonly operatorId?: number | undefined
  readonly path?: string | undefined
  readonly cause?: unknown
}
const StateStoreErrorBase: TaggedErrorBase<"StateStoreError", StateStoreErrorFields> = Data.TaggedError(
  "StateStoreError"
)<StateStoreErrorFields>

/**
 * The state store failed: a version that is not there, a commit that did not land, a state
 * schema that does not match the checkpoint's, a corrupt file.
 *
 * @since 0.1.0
 */
export class StateStoreError extends StateStoreErrorBase {}

/** The fields of {@link ConnectorError}. */
interface ConnectorErrorFields {
  readonly connector: string
  readonly domain: "user" | "external" | "internal"
  readonly retryable: boolean
  readonly message: string
  readonly cause?: unknown
  /** Spark's error class when the failure came from Spark (a Spark Connect backend). */
  readonly errorClass?: string
  /** Spark's SQLSTATE when the failure came from Spark. */
  readonly sqlState?: string
}
const ConnectorErrorBase: TaggedErrorBase<"ConnectorError", ConnectorErrorFields> = Data.TaggedError(
  "ConnectorError"
)<ConnectorErrorFields>

/**
 * A source or sink failed. `domain` says whose fault it is (`user`: bad options or input;
 * `external`: the broker, the disk, the network; `internal`: a bug here) and `retryable` whether
 * trying again can help.
 *
 * @since 0.1.0
 */
export class ConnectorError extends ConnectorErrorBase {}

/** The fields of {@link IllegalStateError}. */
interface IllegalStateErrorFields {
  readonly message: string
}
const IllegalStateErrorBase: TaggedErrorBase<"IllegalStateError", IllegalStateErrorFields> = Data.TaggedError(
  "IllegalStateError"
)<IllegalStateErrorFields>

/**
 * A DStream or StreamingContext was used in a state that does not allow it (Spark's
 * `IllegalStateException`): adding operations after start, starting a stopped context.
 *
 * @since 0.1.0
 */
export class IllegalStateError extends IllegalStateErrorBase {}

/** Levenshtein distance, for did-you-mean suggestions. */
const distance = (a: string, b: string): number => {
  const prev = new Array<number>(b.length + 1)
  for (let j = 0; j <= b.length; j++) prev[j] = j
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]
    prev[0] = i
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1))
      diag = up
    }
  }
  return prev[b.length]
}

/**
 * Candidate names ordered by closeness to `name` (Spark's `StringUtils.orderSuggestedIdentifiersBySimilarity`:
 * all candidates, closest first, at most five).
 */
export const suggestions = (name: string, candidates: ReadonlyArray<string>): ReadonlyArray<string> =>
  [...new Set(candidates)]
    .map((c) => [c, distance(name.toLowerCase(), c.toLowerCase())] as const)
    .sort((x, y) => x[1] - y[1])
    .slice(0, 5)
    .map(([c]) => c)

/** Spark's `UNRESOLVED_COLUMN.WITH_SUGGESTION` error. */
export const unresolvedColumn = (name: string, candidates: ReadonlyArray<string>): AnalysisError => {
  const sugg = suggestions(name, candidates)
  return new AnalysisError({
    reason: "UnresolvedColumn",
    errorClass: sugg.length > 0 ? "UNRESOLVED_COLUMN.WITH_SUGGESTION" : "UNRESOLVED_COLUMN.WITHOUT_SUGGESTION",
    message:
      sugg.length > 0
        ? `[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with name \`${name}\` cannot be resolved. Did you mean one of the following? [${sugg.map((s) => `\`${s}\``).join(", ")}].`
        : `[UNRESOLVED_COLUMN.WITHOUT_SUGGESTION] A column, variable, or function parameter with name \`${name}\` cannot be resolved.`,
    suggestions: sugg
  })
}

/**
 * True for a typed tributary failure (an object with a string `_tag`): Spark's `SparkThrowable`,
 * which user-function error handling passes through instead of wrapping.
 *
 * @since 0.1.0
 */
export const isTaggedError = (e: unknown): boolean =>
  typeof e === "object" && e !== null && typeof (e as { readonly _tag?: unknown })._tag === "string"

/**
 * The `errorClass` a typed failure carries (Spark's `SparkThrowable.getErrorClass`), if any.
 *
 * @since 0.1.0
 */
export const errorClassOf = (cause: unknown): string | undefined => {
  const c = (cause as { readonly errorClass?: unknown } | null | undefined)?.errorClass
  return typeof c === "string" ? c : undefined
}

/**
 * The class of a failure of any kind, as a log line names it: a tagged error's `_tag`
 * (`ConnectorError`), an `Error`'s name (`TypeError`), else the type of the value.
 *
 * @since 0.5.0
 */
export const errorNameOf = (cause: unknown): string => {
  if (typeof cause === "object" && cause !== null) {
    const tag = (cause as { readonly _tag?: unknown })._tag
    if (typeof tag === "string") return tag
    if (cause instanceof Error) return cause.name
    return cause.constructor?.name ?? "object"
  }
  return typeof cause
}

/**
 * The message of a failure of any kind: an `Error`'s or a tagged error's `message`, else the
 * value as text.
 *
 * @since 0.1.0
 */
export const messageOf = (cause: unknown): string => {
  if (cause instanceof Error) return cause.message
  if (typeof cause === "object" && cause !== null && "message" in cause)
    return String((cause as { message: unknown }).message)
  return String(cause)
}

/**
 * Spark's `Utils.exceptionString` of the failure's cause, as `QueryTerminatedEvent.exception`
 * carries it: the error's name and message with its stack trace — not the wrapping
 * StreamingQueryError (StreamingQueryListenerSuite: the text names the cause, not
 * "StreamingQueryException").
 *
 * @since 0.1.0
 */
export const exceptionString = (cause: unknown): string => {
  const message = messageOf(cause)
  if (cause instanceof Error) {
    const head = `${cause.name}: ${message}`
    const stack = typeof cause.stack === "string" ? cause.stack : ""
    if (stack.includes(message)) return stack
    return stack === "" ? head : `${head}\n${stack}`
  }
  if (typeof cause === "object" && cause !== null && "_tag" in cause)
    return `${String((cause as { _tag: unknown })._tag)}: ${message}`
  return message
}
