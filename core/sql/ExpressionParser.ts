/**
 * Spark SQL expression text (`F.expr`, `selectExpr`, `filter("…")`) parsed into the same
 * expressions `F` builds: a hand-written recursive-descent parser for the expression part of
 * Spark's `SqlBaseParser.g4` (`namedExpression`, `booleanExpression`, `valueExpression`,
 * `primaryExpression`, `constant`, `interval`, `dataType`).
 *
 * Precedence, loosest first, as the grammar's alternatives order it: `OR`; `AND`; `NOT`; the
 * predicates (`BETWEEN`, `IN`, `LIKE`/`RLIKE`/`ILIKE`, `IS [NOT] NULL|TRUE|FALSE|UNKNOWN`,
 * `IS [NOT] DISTINCT FROM`) after a value expression; comparisons (`=`, `==`, `<>`, `!=`, `<`,
 * `<=`, `>`, `>=`, `<=>`); `|`; `^`; `&`; shifts; `+`, `-`, `||`; `*`, `/`, `%`, `DIV`; unary
 * `-`, `+`, `~`; then subscripts, field access and the primaries. Binary operators associate to
 * the left. A number right after a minus sign is one negative literal (`-1`), as Spark's
 * `number` rule reads it.
 *
 * Function names resolve case-insensitively: aggregates and the special forms `F` builds
 * (`window`, `session_window`, `explode`, `current_timestamp`, …) first, then the scalar
 * function registry; an unknown name is Spark's `[UNRESOLVED_ROUTINE]`, reported by the first
 * action. Syntax errors are a {@link ParseException} with Spark's message and caret position.
 *
 * @since 0.7.0
 */
import { Result } from "effect"
import * as T from "../DataType.ts"
import { type CalendarInterval, parseDurationMs, parseInterval } from "../Durations.ts"
import { AnalysisError, ParseException } from "../Errors.ts"
import * as E from "../Expression.ts"
import * as DT from "../functions/DateTimeUtils.ts"
import * as Long from "../Long.ts"
import { INTERNAL_NAMES } from "../functions/IntervalFunctions.ts"
import { lookup } from "../functions/mod.ts"
import { type Token, tokenize } from "./Lexer.ts"

/** Thrown inside the parser only; `parseExpression` returns it as a failure. */
class Failure {
  readonly error: ParseException
  constructor(error: ParseException) {
    this.error = error
  }
}

const SYNTAX = "PARSE_SYNTAX_ERROR"
const SYNTAX_STATE = "42601"

/** ANTLR's `getTokenErrorDisplay`, as Spark's messages quote a token. */
const display = (t: Token): string =>
  t.kind === "eof"
    ? "end of input"
    : `'${t.text.replaceAll("\n", "\\n").replaceAll("\r", "\\r").replaceAll("\t", "\\t")}'`

const lit = (value: unknown, dataType: T.DataType): E.Expression => E.literal(value, dataType)
const intLit = (n: number): E.Expression => lit(n, T.IntegerType)
const not = (child: E.Expression): E.Expression => ({ _tag: "UnaryExpression", op: "not", child })
const binary = (op: E.BinaryOp, left: E.Expression, right: E.Expression): E.Expression => ({
  _tag: "BinaryExpression",
  op,
  left,
  right
})
const fn = (name: string, args: ReadonlyArray<E.Expression>): E.Expression => ({
  _tag: "ScalarFunction",
  name,
  args,
  dataType: undefined
})
const aggregate = (
  name: E.AggregateName,
  args: ReadonlyArray<E.Expression>,
  distinct: boolean,
  options: E.AggregateFunction["options"] = {}
): E.Expression => ({ _tag: "AggregateFunction", name, args, distinct, options, dataType: undefined })

/** Spark's `toSQLId` of a (possibly qualified) name. */
const sqlId = (parts: ReadonlyArray<string>): string => parts.map((p) => `\`${p.replaceAll("`", "``")}\``).join(".")

/** `[UNRESOLVED_ROUTINE]`, as Spark's analyzer words it for an unknown function. */
const unresolvedRoutine = (parts: ReadonlyArray<string>): E.Expression => {
  const message = `[UNRESOLVED_ROUTINE] Cannot resolve routine ${sqlId(parts)} on search path [\`system\`.\`builtin\`, \`system\`.\`session\`, \`spark_catalog\`.\`default\`].`
  return {
    _tag: "InvalidExpression",
    message,
    error: new AnalysisError({ reason: "InvalidArgument", errorClass: "UNRESOLVED_ROUTINE", message })
  }
}

/** A construct Spark parses that tributary cannot evaluate yet; reported by the first action. */
const unsupported = (what: string): E.InvalidExpression => {
  const message = `[UNSUPPORTED_FEATURE] ${what} is not supported in tributary's expression strings.`
  return {
    _tag: "InvalidExpression",
    message,
    error: new AnalysisError({ reason: "UnsupportedOperation", errorClass: "UNSUPPORTED_FEATURE", message })
  }
}

/** Aggregates by their SQL names (Spark's `mean` is `avg`). */
const AGGREGATES: Readonly<Record<string, E.AggregateName>> = {
  count: "count",
  sum: "sum",
  avg: "avg",
  mean: "avg",
  min: "min",
  max: "max",
  first: "first",
  last: "last",
  collect_list: "collect_list",
  collect_set: "collect_set",
  approx_count_distinct: "approx_count_distinct",
  stddev: "stddev",
  std: "std",
  stddev_samp: "stddev_samp",
  stddev_pop: "stddev_pop",
  variance: "variance",
  var_samp: "var_samp",
  var_pop: "var_pop",
  skewness: "skewness",
  kurtosis: "kurtosis",
  corr: "corr",
  covar_pop: "covar_pop",
  covar_samp: "covar_samp",
  max_by: "max_by",
  min_by: "min_by",
  median: "median",
  percentile: "percentile",
  percentile_approx: "percentile_approx",
  approx_percentile: "approx_percentile"
}

/**
 * The names `F` gives the registry's functions where they differ from the lower-case SQL name:
 * Spark's math expressions print upper case (`SQRT(x)`), `pow` is `POWER`.
 */
const DISPLAY_NAMES: Readonly<Record<string, string>> = Object.fromEntries([
  ...[
    "sqrt",
    "cbrt",
    "exp",
    "expm1",
    "log10",
    "log2",
    "log1p",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "cot",
    "sec",
    "csc",
    "degrees",
    "radians",
    "signum",
    "floor",
    "ceil",
    "log",
    "power",
    "atan2",
    "hypot",
    "e",
    "pi"
  ].map((n) => [n, n.toUpperCase()] as const),
  ["pow", "POWER"] as const
])

/** The arguments Spark's constructors add when a call leaves them out (`round(x)` is `round(x, 0)`). */
const DEFAULT_ARGS: Readonly<Record<string, readonly [arity: number, extra: () => E.Expression]>> = {
  round: [1, () => intLit(0)],
  bround: [1, () => intLit(0)],
  locate: [2, () => intLit(1)],
  split: [2, () => intLit(-1)],
  regexp_replace: [3, () => intLit(1)],
  regexp_extract: [2, () => intLit(1)],
  regexp_extract_all: [2, () => intLit(1)],
  months_between: [2, () => lit(true, T.BooleanType)],
  sort_array: [1, () => lit(true, T.BooleanType)]
}

/** Spark's `datetimeUnit` words of `timestampadd` / `timestampdiff`. */
const DATETIME_UNITS = new Set([
  "YEAR",
  "QUARTER",
  "MONTH",
  "WEEK",
  "DAY",
  "DAYOFYEAR",
  "HOUR",
  "MINUTE",
  "SECOND",
  "MILLISECOND",
  "MICROSECOND"
])

/** The units of Spark's `unitInMultiUnits` (`INTERVAL 10 SECONDS`). */
const INTERVAL_UNITS = new Set([
  "MICROSECOND",
  "MICROSECONDS",
  "MILLISECOND",
  "MILLISECONDS",
  "SECOND",
  "SECONDS",
  "MINUTE",
  "MINUTES",
  "HOUR",
  "HOURS",
  "DAY",
  "DAYS",
  "WEEK",
  "WEEKS",
  "MONTH",
  "MONTHS",
  "YEAR",
  "YEARS"
])

/** Spark's `unitInUnitToUnit` (`INTERVAL '1 2:03' DAY TO MINUTE`). */
const UNIT_TO_UNIT = new Set(["SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "YEAR"])

const COMPARISONS: Readonly<Record<string, E.ComparisonOp | "<>">> = {
  "=": "=",
  "==": "=",
  "<>": "<>",
  "!=": "<>",
  "<": "<",
  "<=": "<=",
  "!>": "<=",
  ">": ">",
  ">=": ">=",
  "!<": ">=",
  "<=>": "<=>"
}

/** Words that end an expression or continue it, never an implicit alias (`a AND b` is not `a AS AND`). */
/** Words that open a window definition inside `OVER (…)` (anything else there names a window). */
const WINDOW_SPEC_WORDS = new Set(["PARTITION", "DISTRIBUTE", "ORDER", "SORT", "CLUSTER", "ROWS", "RANGE"])

/** A numeric literal, or the negation of one, as a number (a frame bound's value). */
const foldedNumber = (e: E.Expression): number | undefined => {
  if (e._tag === "Literal") {
    if (typeof e.value === "number") return e.value
    if (typeof e.value === "bigint") return Number(e.value)
    return undefined
  }
  if (e._tag === "UnaryExpression" && e.op === "negate") {
    const n = foldedNumber(e.child)
    return n === undefined ? undefined : n === 0 ? 0 : -n
  }
  return undefined
}

/** No column, star or aggregate below: Spark's `foldable`, as far as text can show it. */
const isFoldable = (e: E.Expression): boolean =>
  e._tag !== "UnresolvedAttribute" &&
  e._tag !== "UnresolvedStar" &&
  e._tag !== "AggregateFunction" &&
  e._tag !== "WindowFunction" &&
  E.children(e).every(isFoldable)

const NOT_ALIAS = new Set([
  "AND",
  "OR",
  "NOT",
  "IS",
  "IN",
  "BETWEEN",
  "LIKE",
  "ILIKE",
  "RLIKE",
  "REGEXP",
  "DIV",
  "FROM",
  "WHERE",
  "ESCAPE",
  "THEN",
  "WHEN",
  "ELSE",
  "END",
  "OVER",
  "FILTER",
  "IGNORE",
  "RESPECT",
  "WITHIN"
])

class Parser {
  private pos = 0
  private readonly text: string
  private readonly tokens: ReadonlyArray<Token>

  constructor(text: string, tokens: ReadonlyArray<Token>) {
    this.text = text
    this.tokens = tokens
  }

  // ---- tokens --------------------------------------------------------------------------

  private get peek(): Token {
    return this.tokens[this.pos]
  }

  private ahead(n: number): Token {
    return this.tokens[Math.min(this.pos + n, this.tokens.length - 1)]
  }

  private next(): Token {
    const t = this.tokens[this.pos]
    if (t.kind !== "eof") this.pos++
    return t
  }

  private isWord(t: Token, word: string): boolean {
    return t.kind === "word" && t.value.toUpperCase() === word
  }

  private isOp(t: Token, op: string): boolean {
    return t.kind === "op" && t.value === op
  }

  private acceptWord(word: string): boolean {
    if (!this.isWord(this.peek, word)) return false
    this.pos++
    return true
  }

  private acceptOp(op: string): boolean {
    if (!this.isOp(this.peek, op)) return false
    this.pos++
    return true
  }

  /** A syntax error at `t`, with ANTLR's hint when one applies (`: missing ')'`, `: extra input 'x'`). */
  fail(t: Token, hint = ""): never {
    throw new Failure(
      ParseException.at(this.text, t.start, SYNTAX, SYNTAX_STATE, `Syntax error at or near ${display(t)}${hint}.`)
    )
  }

  /** An error about the text from `t` to `stop` (Spark's errors with a query context). */
  failClass(t: Token, errorClass: string, sqlState: string, message: string, stop = t.end): never {
    throw new Failure(ParseException.inContext(this.text, t.start, stop, errorClass, sqlState, message))
  }

  /** The end of the last token read. */
  private get lastEnd(): number {
    return this.tokens[Math.max(0, this.pos - 1)].end
  }

  /**
   * Requires `op` next. As Spark reports ANTLR's recovery: when the token after the current one
   * is `op`, the current one is extra input (`a b c`: `extra input 'c'`); a text that ends
   * early is `at or near end of input`, with no hint (Spark 4.2 on `(a + 1`).
   */
  private expectOp(op: string): void {
    if (this.acceptOp(op)) return
    const t = this.peek
    if (this.isOp(this.ahead(1), op)) this.fail(t, `: extra input ${display(t)}`)
    this.fail(t)
  }

  private expectWord(word: string): void {
    if (this.acceptWord(word)) return
    const t = this.peek
    if (this.isWord(this.ahead(1), word)) this.fail(t, `: extra input ${display(t)}`)
    this.fail(t)
  }

  /** The end of the text: anything left is an error (Spark's `singleExpression: namedExpression EOF`). */
  expectEnd(): void {
    const t = this.peek
    if (t.kind === "eof") return
    if (this.ahead(1).kind === "eof") this.fail(t, `: extra input ${display(t)}`)
    this.fail(t)
  }

  // ---- names ---------------------------------------------------------------------------

  /** An identifier (a word or a backquoted name), or `undefined`. */
  private identifier(): string | undefined {
    const t = this.peek
    if (t.kind === "quoted") {
      this.pos++
      return t.value
    }
    if (t.kind === "word" && !/^[0-9]+$/.test(t.value)) {
      this.pos++
      return t.value
    }
    return undefined
  }

  private requireIdentifier(): string {
    const id = this.identifier()
    return id === undefined ? this.fail(this.peek) : id
  }

  // ---- expressions ---------------------------------------------------------------------

  /** `namedExpression`: an expression with an optional alias (`AS name`, or just `name`). */
  namedExpression(): E.Expression {
    const e = this.expression()
    if (this.acceptWord("AS")) {
      if (this.isOp(this.peek, "(")) return this.fail(this.peek)
      return this.alias(e, this.requireIdentifier())
    }
    const t = this.peek
    if (
      (t.kind === "word" && !NOT_ALIAS.has(t.value.toUpperCase()) && !/^[0-9]+$/.test(t.value)) ||
      t.kind === "quoted"
    ) {
      return this.alias(e, this.requireIdentifier())
    }
    return e
  }

  private alias(child: E.Expression, name: string): E.Expression {
    return { _tag: "Alias", child, name, exprId: E.newExprId() }
  }

  expression(): E.Expression {
    return this.or()
  }

  private or(): E.Expression {
    let left = this.and()
    while (this.acceptWord("OR")) left = binary("or", left, this.and())
    return left
  }

  private and(): E.Expression {
    let left = this.notExpr()
    while (this.acceptWord("AND")) left = binary("and", left, this.notExpr())
    return left
  }

  /** `NOT` / `!` bind tighter than `AND` and looser than the predicates: `NOT a = b` is `NOT (a = b)`. */
  private notExpr(): E.Expression {
    if (this.acceptWord("NOT") || this.acceptOp("!")) return not(this.notExpr())
    if (this.isWord(this.peek, "EXISTS") && this.isOp(this.ahead(1), "(")) return this.fail(this.ahead(2))
    return this.predicated()
  }

  /** `valueExpression predicate?`: at most one predicate (`a IS NULL IS NULL` does not parse). */
  private predicated(): E.Expression {
    const e = this.comparison()
    {
      const t = this.peek
      if (this.isWord(t, "IS")) {
        this.pos++
        const negated = this.acceptWord("NOT")
        if (this.acceptWord("NULL")) {
          return { _tag: "UnaryExpression", op: negated ? "isNotNull" : "isNull", child: e }
        } else if (this.isWord(this.peek, "TRUE") || this.isWord(this.peek, "FALSE")) {
          const v = this.next().value.toUpperCase() === "TRUE"
          const test = binary("<=>", e, lit(v, T.BooleanType))
          return negated ? not(test) : test
        } else if (this.acceptWord("UNKNOWN")) {
          return { _tag: "UnaryExpression", op: negated ? "isNotNull" : "isNull", child: e }
        } else if (this.acceptWord("DISTINCT")) {
          this.expectWord("FROM")
          const test = binary("<=>", e, this.comparison())
          return negated ? test : not(test)
        } else this.fail(this.peek)
        return e
      }
      const negated = this.isWord(t, "NOT") || this.isOp(t, "!")
      const kw = negated ? this.ahead(1) : t
      const word = kw.kind === "word" ? kw.value.toUpperCase() : ""
      if (
        word !== "BETWEEN" &&
        word !== "IN" &&
        word !== "LIKE" &&
        word !== "ILIKE" &&
        word !== "RLIKE" &&
        word !== "REGEXP"
      ) {
        return e
      }
      if (negated) this.pos++
      this.pos++
      let p: E.Expression
      switch (word) {
        case "BETWEEN": {
          const lower = this.comparison()
          this.expectWord("AND")
          const upper = this.comparison()
          // Column.between's expression: lower <= e AND e <= upper
          p = binary("and", binary(">=", e, lower), binary("<=", e, upper))
          break
        }
        case "IN": {
          this.expectOp("(")
          if (this.isWord(this.peek, "SELECT") || this.isWord(this.peek, "WITH")) this.fail(this.peek)
          const list: Array<E.Expression> = [this.expression()]
          while (this.acceptOp(",")) list.push(this.expression())
          this.expectOp(")")
          p = { _tag: "In", child: e, list }
          break
        }
        case "RLIKE":
        case "REGEXP":
          p = fn("rlike", [e, this.comparison()])
          break
        default: {
          const name = word === "LIKE" ? "like" : "ilike"
          if (this.isWord(this.peek, "ANY") || this.isWord(this.peek, "SOME") || this.isWord(this.peek, "ALL")) {
            this.fail(this.peek)
          }
          const pattern = this.comparison()
          if (this.acceptWord("ESCAPE")) {
            const esc = this.peek
            if (esc.kind !== "string") this.fail(esc)
            this.pos++
            if (esc.value.length !== 1) {
              this.failClass(
                esc,
                "INVALID_ESCAPE_CHAR",
                "42604",
                `The escape character must be a string literal of length one, but got ${esc.text}.`
              )
            }
            p = fn(name, [e, pattern, lit(esc.value, T.StringType)])
          } else p = fn(name, [e, pattern])
        }
      }
      return negated ? not(p) : p
    }
  }

  private comparison(): E.Expression {
    let left = this.bitOr()
    for (;;) {
      const t = this.peek
      const op = t.kind === "op" ? COMPARISONS[t.value] : undefined
      if (op === undefined) return left
      this.pos++
      const right = this.bitOr()
      // Spark's `a <> b` / `a != b` is Not(EqualTo(a, b)), as Column.neq builds it
      left = op === "<>" ? not(binary("=", left, right)) : binary(op, left, right)
    }
  }

  private bitOr(): E.Expression {
    let left = this.bitXor()
    while (this.isOp(this.peek, "|")) {
      this.pos++
      left = fn("bitwise_or", [left, this.bitXor()])
    }
    return left
  }

  private bitXor(): E.Expression {
    let left = this.bitAnd()
    while (this.isOp(this.peek, "^")) {
      this.pos++
      left = fn("bitwise_xor", [left, this.bitAnd()])
    }
    return left
  }

  private bitAnd(): E.Expression {
    let left = this.shift()
    while (this.isOp(this.peek, "&")) {
      this.pos++
      left = fn("bitwise_and", [left, this.shift()])
    }
    return left
  }

  private shift(): E.Expression {
    let left = this.additive()
    while (this.isOp(this.peek, "<<") || this.isOp(this.peek, ">>") || this.isOp(this.peek, ">>>")) {
      const op = this.next().value
      const name = op === "<<" ? "shift_left" : op === ">>" ? "shift_right" : "shift_right_unsigned"
      left = fn(name, [left, this.additive()])
    }
    return left
  }

  private additive(): E.Expression {
    let left = this.multiplicative()
    for (;;) {
      const t = this.peek
      if (this.isOp(t, "+") || this.isOp(t, "-")) {
        this.pos++
        left = binary(t.value as "+" | "-", left, this.multiplicative())
      } else if (this.isOp(t, "||")) {
        this.pos++
        // Spark's `a || b` is Concat(Seq(a, b))
        left = fn("concat", [left, this.multiplicative()])
      } else return left
    }
  }

  private multiplicative(): E.Expression {
    let left = this.unary()
    for (;;) {
      const t = this.peek
      if (this.isOp(t, "*") || this.isOp(t, "/") || this.isOp(t, "%")) {
        this.pos++
        left = binary(t.value as "*" | "/" | "%", left, this.unary())
      } else if (this.isWord(t, "DIV")) {
        this.pos++
        left = fn("div", [left, this.unary()])
      } else return left
    }
  }

  private unary(): E.Expression {
    const t = this.peek
    if (this.isOp(t, "-")) {
      const n = this.ahead(1)
      // Spark's `number: MINUS? INTEGER_VALUE | …`: a minus right before a number is part of the literal
      if (isNumberToken(n)) {
        this.pos += 2
        return this.postfix(this.number(n, true))
      }
      this.pos++
      return { _tag: "UnaryExpression", op: "negate", child: this.unary() }
    }
    if (this.isOp(t, "+")) {
      this.pos++
      return fn("positive", [this.unary()])
    }
    if (this.isOp(t, "~")) {
      this.pos++
      return fn("bitwise_not", [this.unary()])
    }
    return this.postfix(this.primary())
  }

  /** Subscripts, field access and `::` casts after a primary. */
  private postfix(base: E.Expression): E.Expression {
    let e = base
    for (;;) {
      if (this.acceptOp("[")) {
        const index = this.expression()
        this.expectOp("]")
        e = fn("subscript", [e, index])
      } else if (this.isOp(this.peek, ".") && (this.ahead(1).kind === "word" || this.ahead(1).kind === "quoted")) {
        this.pos++
        const field = this.requireIdentifier()
        e = { _tag: "GetField", child: e, field, ordinal: undefined }
      } else if (this.acceptOp("::")) {
        e = { _tag: "Cast", child: e, to: this.dataType() }
      } else return e
    }
  }

  // ---- primaries -----------------------------------------------------------------------

  private primary(): E.Expression {
    const t = this.peek
    switch (t.kind) {
      case "string":
        return this.strings()
      case "integer":
      case "bigint":
      case "smallint":
      case "tinyint":
      case "decimal":
      case "exponent":
      case "double":
      case "float":
      case "bigdecimal":
        this.pos++
        return this.number(t, false)
      case "quoted":
        return this.nameOrCall()
      case "word":
        return this.wordPrimary(t)
      case "op":
        if (t.value === "*") {
          this.pos++
          return { _tag: "UnresolvedStar", target: undefined, planId: undefined }
        }
        if (t.value === "(") {
          this.pos++
          if (this.isWord(this.peek, "SELECT") || this.isWord(this.peek, "WITH")) return this.fail(this.peek)
          const e = this.expression()
          if (this.isOp(this.peek, ",")) {
            const items: Array<E.Expression> = [e]
            while (this.acceptOp(",")) items.push(this.namedExpression())
            this.expectOp(")")
            return fn("struct", items)
          }
          this.expectOp(")")
          return e
        }
        return this.fail(t)
      default:
        return this.fail(t)
    }
  }

  /** `stringLit+`: adjacent string literals are one (`'a' 'b'` is `'ab'`). */
  private strings(): E.Expression {
    let s = ""
    while (this.peek.kind === "string") s += this.next().value
    return lit(s, T.StringType)
  }

  private number(t: Token, negative: boolean): E.Expression {
    const raw = t.text
    const sign = negative ? "-" : ""
    const checkRange = (digits: string, type: string, min: number, max: number, dataType: T.DataType): E.Expression => {
      const v = Number(`${sign}${digits}`)
      if (v < min || v > max) {
        this.failClass(
          t,
          "INVALID_NUMERIC_LITERAL_RANGE",
          "22003",
          `Numeric literal ${sign}${digits} is outside the valid range for ${type} with minimum value of ${min} and maximum value of ${max}. Please adjust the value accordingly.`
        )
      }
      return lit(v, dataType)
    }
    switch (t.kind) {
      case "integer": {
        const big = BigInt(`${sign}${raw}`)
        if (big >= -2147483648n && big <= 2147483647n) return intLit(Number(big))
        if (big >= -(2n ** 63n) && big < 2n ** 63n) return lit(Long.fromBigInt(big), T.LongType)
        // Spark reads it as a decimal; tributary has no decimal type
        return lit(Number(big), T.DoubleType)
      }
      case "bigint": {
        const digits = raw.slice(0, -1)
        const big = BigInt(`${sign}${digits}`)
        if (big < -(2n ** 63n) || big >= 2n ** 63n) {
          this.failClass(
            t,
            "INVALID_NUMERIC_LITERAL_RANGE",
            "22003",
            `Numeric literal ${sign}${digits} is outside the valid range for bigint with minimum value of -9223372036854775808 and maximum value of 9223372036854775807. Please adjust the value accordingly.`
          )
        }
        return lit(Long.fromBigInt(big), T.LongType)
      }
      case "smallint":
        return checkRange(raw.slice(0, -1), "smallint", -32768, 32767, T.IntegerType)
      case "tinyint":
        return checkRange(raw.slice(0, -1), "tinyint", -128, 127, T.IntegerType)
      case "bigdecimal":
        return lit(Number(`${sign}${raw.slice(0, -2)}`), T.DoubleType)
      case "double":
      case "float":
        return lit(Number(`${sign}${raw.slice(0, -1)}`), T.DoubleType)
      default:
        return lit(Number(`${sign}${raw}`), T.DoubleType)
    }
  }

  private wordPrimary(t: Token): E.Expression {
    const w = t.value.toUpperCase()
    const next = this.ahead(1)
    switch (w) {
      case "NULL":
        this.pos++
        return lit(null, T.NullType)
      case "TRUE":
      case "FALSE":
        this.pos++
        return lit(w === "TRUE", T.BooleanType)
      case "CASE":
        return this.caseWhen()
      case "CAST":
      case "TRY_CAST":
        if (this.isOp(next, "(")) return this.cast()
        break
      case "INTERVAL":
        if (next.kind === "string" || isNumberToken(next) || this.isOp(next, "-") || this.isOp(next, "+")) {
          return this.interval()
        }
        break
      case "DATE":
      case "TIMESTAMP":
      case "TIMESTAMP_NTZ":
      case "TIMESTAMP_LTZ":
      case "X":
        if (next.kind === "string") return this.typedLiteral(w)
        break
      case "CURRENT_TIMESTAMP":
      case "CURRENT_DATE":
        if (!this.isOp(next, "(")) {
          this.pos++
          return w === "CURRENT_TIMESTAMP" ? { _tag: "CurrentTimestamp" } : currentDate()
        }
        break
      case "STRUCT":
        if (this.isOp(next, "(")) {
          this.pos += 2
          const args: Array<E.Expression> = []
          if (!this.isOp(this.peek, ")")) {
            args.push(this.namedExpression())
            while (this.acceptOp(",")) args.push(this.namedExpression())
          }
          this.expectOp(")")
          return fn("struct", args)
        }
        break
      case "EXTRACT":
        if (this.isOp(next, "(")) return this.extract()
        break
      case "SUBSTR":
      case "SUBSTRING":
        if (this.isOp(next, "(")) return this.substring(w.toLowerCase())
        break
      case "TRIM":
        if (this.isOp(next, "(")) return this.trim()
        break
      case "POSITION":
        if (this.isOp(next, "(")) return this.position()
        break
      case "TIMESTAMPADD":
      case "DATEADD":
      case "DATE_ADD":
      case "TIMESTAMPDIFF":
      case "DATEDIFF":
      case "DATE_DIFF":
        if (this.isOp(next, "(")) {
          const e = this.timestampArith(w)
          if (e !== undefined) return e
        }
        break
    }
    return this.nameOrCall()
  }

  /** `CASE WHEN c THEN v … [ELSE e] END` or `CASE x WHEN v THEN r … END` (`x = v` per branch). */
  private caseWhen(): E.Expression {
    this.pos++
    const value = this.isWord(this.peek, "WHEN") ? undefined : this.expression()
    const branches: Array<readonly [E.Expression, E.Expression]> = []
    if (!this.isWord(this.peek, "WHEN")) this.fail(this.peek)
    while (this.acceptWord("WHEN")) {
      const c = this.expression()
      this.expectWord("THEN")
      const v = this.expression()
      branches.push([value === undefined ? c : binary("=", value, c), v])
    }
    const otherwise = this.acceptWord("ELSE") ? this.expression() : undefined
    this.expectWord("END")
    return { _tag: "CaseWhen", branches, otherwise }
  }

  private cast(): E.Expression {
    this.pos += 2
    const child = this.expression()
    this.expectWord("AS")
    const to = this.dataType()
    this.expectOp(")")
    return { _tag: "Cast", child, to }
  }

  /** A `dataType`: a name with `(…)` parameters or `<…>` type arguments, read by `parseTypeString`. */
  private dataType(): T.DataType {
    const first = this.peek
    if (first.kind !== "word") return this.fail(first)
    this.pos++
    let end = first.end
    if (this.isOp(this.peek, "<")) {
      let depth = 0
      for (;;) {
        const t = this.next()
        if (t.kind === "eof") return this.fail(t)
        if (this.isOp(t, "<")) depth++
        else if (this.isOp(t, ">")) depth--
        else if (this.isOp(t, ">>")) depth -= 2
        else if (this.isOp(t, ">>>")) depth -= 3
        end = t.end
        if (depth <= 0) break
      }
    } else if (this.isOp(this.peek, "(")) {
      while (!this.isOp(this.peek, ")")) {
        if (this.peek.kind === "eof") return this.fail(this.peek)
        this.pos++
      }
      end = this.next().end
    }
    const source = this.text.slice(first.start, end)
    const t = T.parseTypeString(source)
    if (t === undefined) {
      return this.failClass(
        first,
        "UNSUPPORTED_DATATYPE",
        "0A000",
        `Unsupported data type "${source.toUpperCase()}".`,
        end
      )
    }
    return t
  }

  /** `DATE '…'`, `TIMESTAMP '…'`, `X'…'`: the string read as Spark reads it, or `INVALID_TYPED_LITERAL`. */
  private typedLiteral(type: string): E.Expression {
    const start = this.next()
    const valueToken = this.peek
    const value = (this.strings() as E.Literal).value as string
    const invalid = (): never =>
      this.failClass(
        start,
        "INVALID_TYPED_LITERAL",
        "42604",
        `The value of the typed literal "${type}" is invalid: '${value}'.`,
        this.lastEnd
      )
    switch (type) {
      case "DATE": {
        const d = DT.stringToDate(value)
        return d === null ? invalid() : lit(d, T.DateType)
      }
      case "X": {
        if (!/^([0-9A-Fa-f]{2})*[0-9A-Fa-f]?$/.test(value)) return invalid()
        const hex = value.length % 2 === 1 ? `0${value}` : value
        const bytes = new Uint8Array(hex.length / 2)
        for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16)
        return lit(bytes, T.BinaryType)
      }
      default: {
        void valueToken
        const ms = DT.stringToTimestamp(value)
        return ms === null ? invalid() : lit(ms, T.TimestampType)
      }
    }
  }

  /**
   * `INTERVAL '1 day 2 hours'`, `INTERVAL 10 SECONDS`, `INTERVAL '1' HOUR 30 MINUTES`,
   * `INTERVAL '1 2:03' DAY TO MINUTE`: a `calendarInterval` literal.
   */
  private interval(): E.Expression {
    const start = this.next()
    const parts: Array<string> = []
    const invalid = (text: string): never =>
      this.failClass(
        start,
        "INVALID_TYPED_LITERAL",
        "42604",
        `The value of the typed literal "INTERVAL" is invalid: '${text}'.`,
        this.lastEnd
      )
    // the string form without units: INTERVAL '1 day 2 hours'
    if (this.peek.kind === "string" && !isUnit(this.ahead(1), INTERVAL_UNITS) && !isUnit(this.ahead(1), UNIT_TO_UNIT)) {
      const s = (this.strings() as E.Literal).value as string
      const iv = parseInterval(s)
      if (iv === undefined) return invalid(s)
      if (iv.months !== 0 && (iv.days !== 0 || iv.micros !== 0)) this.mixedUnits(start)
      return intervalLiteral(iv, fieldsOfValue(iv))
    }
    for (;;) {
      const signTok = this.isOp(this.peek, "-") || this.isOp(this.peek, "+") ? this.next().value : ""
      const v = this.peek
      let value: string
      if (v.kind === "string") value = (this.strings() as E.Literal).value as string
      else if (v.kind === "integer" || v.kind === "decimal") {
        this.pos++
        value = v.text
      } else return this.fail(v)
      value = `${signTok}${value.trim()}`
      const unit = this.peek
      if (unit.kind !== "word") return this.fail(unit)
      const u = unit.value.toUpperCase()
      if (this.isWord(this.ahead(1), "TO") && UNIT_TO_UNIT.has(u) && parts.length === 0) {
        this.pos += 2
        const to = this.peek
        if (!isUnit(to, UNIT_TO_UNIT)) return this.fail(to)
        this.pos++
        const text = `'${value}' ${u.toLowerCase()} to ${to.value.toLowerCase()}`
        const iv = parseInterval(text)
        return iv === undefined
          ? invalid(value)
          : intervalLiteral(iv, [u as IntervalField, to.value.toUpperCase() as IntervalField])
      }
      if (!INTERVAL_UNITS.has(u)) return this.fail(unit)
      this.pos++
      parts.push(`${value} ${u.toLowerCase()}`)
      const n = this.peek
      const more =
        n.kind === "string" ||
        ((n.kind === "integer" || n.kind === "decimal") && isUnit(this.ahead(1), INTERVAL_UNITS)) ||
        ((this.isOp(n, "-") || this.isOp(n, "+")) && isUnit(this.ahead(2), INTERVAL_UNITS))
      if (!more) break
    }
    const text = parts.join(" ")
    const iv = parseInterval(text)
    if (iv === undefined) return invalid(text)
    // Spark 4 types a literal by the units written: year-month or day-time, never both
    const units = parts.map((p) => p.slice(p.lastIndexOf(" ") + 1))
    const yearMonth = units.some((u) => u.startsWith("year") || u.startsWith("month"))
    if (yearMonth && units.some((u) => !u.startsWith("year") && !u.startsWith("month"))) this.mixedUnits(start)
    const fields = units.map(fieldOfUnit).sort((a, b) => FIELD_ORDER.indexOf(a) - FIELD_ORDER.indexOf(b))
    return intervalLiteral(iv, [fields[0], fields[fields.length - 1]])
  }

  /** Spark's `mixedIntervalUnitsError`, with the literal's text. */
  private mixedUnits(start: Token): never {
    const literal = this.text.slice(start.start, this.lastEnd)
    // Spark 4.2 still raises this one as a legacy error, without class or SQLSTATE in the message
    return this.failClass(
      start,
      "_LEGACY_ERROR_TEMP_0029",
      "",
      `Cannot mix year-month and day-time fields: ${literal}.`,
      this.lastEnd
    )
  }

  /** `EXTRACT(field FROM source)`: Spark's `date_part` of the field. */
  private extract(): E.Expression {
    this.pos += 2
    const field = this.requireIdentifier()
    this.expectWord("FROM")
    const source = this.comparison()
    this.expectOp(")")
    const name = EXTRACT_FIELDS[field.toUpperCase()]
    if (name === undefined) {
      return this.failClass(
        this.tokens[this.pos - 1],
        "INVALID_EXTRACT_FIELD",
        "42601",
        `Cannot extract ${field} from ${source._tag === "UnresolvedAttribute" ? source.nameParts.join(".") : "the value"}.`
      )
    }
    return fn(name, [source])
  }

  /** `SUBSTRING(str FROM pos [FOR len])` or the call form. */
  private substring(name: string): E.Expression {
    this.pos += 2
    const str = this.comparison()
    if (!this.acceptWord("FROM")) this.expectOp(",")
    const pos = this.comparison()
    let len: E.Expression | undefined
    if (this.acceptWord("FOR") || this.acceptOp(",")) len = this.comparison()
    this.expectOp(")")
    // Spark's Substring(str, pos) fills in Integer.MAX_VALUE for the length
    return fn(name, [str, pos, len ?? intLit(2147483647)])
  }

  /** `TRIM([BOTH | LEADING | TRAILING] [chars] FROM str)` or `trim(str[, chars])`. */
  private trim(): E.Expression {
    const save = this.pos
    this.pos += 2
    const option = ["BOTH", "LEADING", "TRAILING"].find((o) => this.isWord(this.peek, o))
    if (option !== undefined) this.pos++
    const first = this.isWord(this.peek, "FROM") ? undefined : this.comparison()
    if (this.acceptWord("FROM")) {
      const src = this.comparison()
      this.expectOp(")")
      const name = option === "LEADING" ? "ltrim" : option === "TRAILING" ? "rtrim" : "trim"
      return fn(name, first === undefined ? [src] : [src, first])
    }
    if (option !== undefined) return this.fail(this.peek)
    this.pos = save
    return this.nameOrCall()
  }

  /** `POSITION(substr IN str)`: Spark's `locate(substr, str, 1)`. */
  private position(): E.Expression {
    const save = this.pos
    this.pos += 2
    const sub = this.comparison()
    if (!this.acceptWord("IN")) {
      this.pos = save
      return this.nameOrCall()
    }
    const str = this.comparison()
    this.expectOp(")")
    return fn("locate", [sub, str, intLit(1)])
  }

  /**
   * `timestampadd(unit, n, ts)` / `dateadd` / `date_add` and `timestampdiff(unit, a, b)` /
   * `datediff` / `date_diff` with a unit word first; `undefined` (nothing consumed) for the
   * two-argument function calls of the same names.
   */
  private timestampArith(word: string): E.Expression | undefined {
    const unitTok = this.ahead(2)
    const isUnitWord = unitTok.kind === "word" && DATETIME_UNITS.has(unitTok.value.toUpperCase())
    if ((!isUnitWord && unitTok.kind !== "string") || !this.isOp(this.ahead(3), ",")) return undefined
    const save = this.pos
    this.pos += 4
    const a = this.comparison()
    if (!this.acceptOp(",")) {
      this.pos = save
      return undefined
    }
    const b = this.comparison()
    this.expectOp(")")
    const add = word === "TIMESTAMPADD" || word === "DATEADD" || word === "DATE_ADD"
    const name = add ? "timestampadd" : "timestampdiff"
    if (!isUnitWord) {
      return this.failClass(
        unitTok,
        "INVALID_PARAMETER_VALUE.DATETIME_UNIT",
        "22023",
        `The value of parameter(s) \`unit\` in \`${name}\` is invalid: expects one of the units without quotes YEAR, QUARTER, MONTH, WEEK, DAY, DAYOFYEAR, HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND, but got the string literal ${unitTok.text}.`
      )
    }
    return fn(name, [lit(unitTok.value.toUpperCase(), T.StringType), a, b])
  }

  /** A column reference (`a`, `a.b.c`, `t.*`) or a function call. */
  private nameOrCall(): E.Expression {
    const parts: Array<string> = [this.requireIdentifier()]
    for (;;) {
      if (this.isOp(this.peek, ".") && this.isOp(this.ahead(1), "*")) {
        this.pos += 2
        return { _tag: "UnresolvedStar", target: parts, planId: undefined }
      }
      if (this.isOp(this.peek, ".") && (this.ahead(1).kind === "word" || this.ahead(1).kind === "quoted")) {
        this.pos++
        parts.push(this.requireIdentifier())
        continue
      }
      break
    }
    if (this.isOp(this.peek, "(")) return this.call(parts)
    return { _tag: "UnresolvedAttribute", nameParts: parts, planId: undefined }
  }

  /** `name([DISTINCT | ALL] args…) [IGNORE NULLS]`. */
  private call(parts: ReadonlyArray<string>): E.Expression {
    this.expectOp("(")
    const distinct = this.acceptWord("DISTINCT")
    if (!distinct) this.acceptWord("ALL")
    const args: Array<E.Expression> = []
    let star = false
    if (this.isOp(this.peek, "*") && this.isOp(this.ahead(1), ")")) {
      this.pos++
      star = true
    } else if (!this.isOp(this.peek, ")")) {
      args.push(this.functionArgument())
      while (this.acceptOp(",")) args.push(this.functionArgument())
    }
    let ignoreNulls = false
    if (this.acceptWord("IGNORE")) {
      this.expectWord("NULLS")
      ignoreNulls = true
    }
    this.expectOp(")")
    if (this.isWord(this.peek, "IGNORE") && this.isWord(this.ahead(1), "NULLS")) {
      this.pos += 2
      ignoreNulls = true
    }
    if (this.isWord(this.peek, "FILTER") && this.isOp(this.ahead(1), "(")) {
      this.skipParens(1)
      return unsupported("An aggregate FILTER clause")
    }
    const window = this.isWord(this.peek, "OVER") ? this.windowSpec() : undefined
    const unsupportedArg = args.find(
      (x) => x._tag === "InvalidExpression" && x.error?.errorClass === "UNSUPPORTED_FEATURE"
    )
    if (unsupportedArg !== undefined) return unsupportedArg
    if (parts.length > 1) return unresolvedRoutine(parts)
    const call = resolveCall(parts[0], args, { distinct, star, ignoreNulls })
    if (window === undefined || call._tag === "InvalidExpression") return call
    if (window._tag === "InvalidExpression") return window
    return { ...window, function: call }
  }

  /**
   * `OVER (…)` after a function call (Spark's `windowSpec`): `[PARTITION | DISTRIBUTE] BY`,
   * `[ORDER | SORT] BY` sort items, or `CLUSTER BY`, then an optional `ROWS`/`RANGE` frame. The
   * result is the `WindowExpression` that `Column.over` builds, with `function` still to fill in.
   * A named window (`OVER w`) is Spark's `MISSING_WINDOW_SPECIFICATION` (an expression string
   * has no `WINDOW` clause).
   */
  private windowSpec(): E.WindowExpression | E.InvalidExpression {
    this.expectWord("OVER")
    const named = this.isOp(this.peek, "(") ? (this.isOp(this.ahead(2), ")") ? this.ahead(1) : undefined) : this.peek
    if (
      named !== undefined &&
      (named.kind === "word" || named.kind === "quoted") &&
      !WINDOW_SPEC_WORDS.has(named.value.toUpperCase())
    ) {
      if (this.acceptOp("(")) {
        this.requireIdentifier()
        this.expectOp(")")
      } else this.requireIdentifier()
      const message = `[MISSING_WINDOW_SPECIFICATION] Window specification is not defined in the WINDOW clause for ${named.value}. For more information about WINDOW clauses, please refer to 'https://spark.apache.org/docs/latest/sql-ref-syntax-qry-select-window.html'. SQLSTATE: 42P20`
      return {
        _tag: "InvalidExpression",
        message,
        error: new AnalysisError({ reason: "InvalidArgument", errorClass: "MISSING_WINDOW_SPECIFICATION", message })
      }
    }
    this.expectOp("(")
    const partitionSpec: Array<E.Expression> = []
    const orderSpec: Array<E.Expression> = []
    if (this.isWord(this.peek, "CLUSTER") && this.isWord(this.ahead(1), "BY")) {
      this.pos += 2
      partitionSpec.push(...this.expressionList())
    } else {
      if (
        (this.isWord(this.peek, "PARTITION") || this.isWord(this.peek, "DISTRIBUTE")) &&
        this.isWord(this.ahead(1), "BY")
      ) {
        this.pos += 2
        partitionSpec.push(...this.expressionList())
      }
      if ((this.isWord(this.peek, "ORDER") || this.isWord(this.peek, "SORT")) && this.isWord(this.ahead(1), "BY")) {
        this.pos += 2
        orderSpec.push(this.sortItem())
        while (this.acceptOp(",")) orderSpec.push(this.sortItem())
      }
    }
    let frame: E.WindowFrame | undefined
    let invalid: E.InvalidExpression | undefined
    if (this.isWord(this.peek, "ROWS") || this.isWord(this.peek, "RANGE")) {
      const frameType = this.next().value.toUpperCase() === "ROWS" ? "rows" : "range"
      const between = this.acceptWord("BETWEEN")
      const lower = this.frameBound()
      let upper: E.FrameBoundary | E.InvalidExpression = { _tag: "CurrentRow" }
      if (between) {
        this.expectWord("AND")
        upper = this.frameBound()
      }
      if (lower._tag === "InvalidExpression") invalid = lower
      else if (upper._tag === "InvalidExpression") invalid = upper
      else frame = { frameType, lower, upper }
    }
    this.expectOp(")")
    return invalid ?? { _tag: "WindowExpression", function: lit(null, T.NullType), partitionSpec, orderSpec, frame }
  }

  private expressionList(): Array<E.Expression> {
    const out = [this.expression()]
    while (this.acceptOp(",")) out.push(this.expression())
    return out
  }

  /** Spark's `sortItem`: `expr [ASC | DESC] [NULLS (FIRST | LAST)]`, nulls first when ascending. */
  private sortItem(): E.Expression {
    const child = this.expression()
    const direction = this.acceptWord("DESC") ? "desc" : "asc"
    if (direction === "asc") this.acceptWord("ASC")
    let nullOrdering: E.SortOrder["nullOrdering"] = direction === "asc" ? "nullsFirst" : "nullsLast"
    if (this.acceptWord("NULLS")) {
      if (this.acceptWord("FIRST")) nullOrdering = "nullsFirst"
      else {
        this.expectWord("LAST")
        nullOrdering = "nullsLast"
      }
    }
    return { _tag: "SortOrder", child, direction, nullOrdering }
  }

  /**
   * Spark's `frameBound`: `UNBOUNDED PRECEDING | FOLLOWING`, `CURRENT ROW`, or a literal followed
   * by `PRECEDING` (its negation, named `n PRECEDING` as Spark's `UnaryMinus` bound is) or
   * `FOLLOWING`. A bound that is not a literal is Spark's parse error; a literal that is not a
   * number (an interval) is not supported locally.
   */
  private frameBound(): E.FrameBoundary | E.InvalidExpression {
    if (this.isWord(this.peek, "UNBOUNDED")) {
      this.pos++
      if (this.acceptWord("PRECEDING")) return { _tag: "UnboundedPreceding" }
      this.expectWord("FOLLOWING")
      return { _tag: "UnboundedFollowing" }
    }
    if (this.isWord(this.peek, "CURRENT") && this.isWord(this.ahead(1), "ROW")) {
      this.pos += 2
      return { _tag: "CurrentRow" }
    }
    const start = this.peek
    const value = this.expression()
    const preceding = this.acceptWord("PRECEDING")
    if (!preceding) this.expectWord("FOLLOWING")
    const n = foldedNumber(value)
    if (n === undefined) {
      if (value._tag === "Literal" || isFoldable(value)) return unsupported("A frame boundary that is not a number")
      return this.failClass(start, "_LEGACY_ERROR_TEMP_0064", "", "Frame bound value must be a literal.", this.lastEnd)
    }
    return preceding ? { _tag: "Offset", value: n === 0 ? 0 : -n, preceding: true } : { _tag: "Offset", value: n }
  }

  /** Skips a parenthesised group starting `offset` tokens ahead. */
  private skipParens(offset: number): void {
    this.pos += offset
    let depth = 0
    do {
      const t = this.next()
      if (t.kind === "eof") this.fail(t)
      if (this.isOp(t, "(")) depth++
      else if (this.isOp(t, ")")) depth--
    } while (depth > 0)
  }

  private functionArgument(): E.Expression {
    // named arguments (`name => value`) and lambdas (`x -> …`) are Spark's; tributary has neither
    if ((this.peek.kind === "word" || this.peek.kind === "quoted") && this.isOp(this.ahead(1), "=>")) {
      this.pos += 2
      this.expression()
      return unsupported("A named function argument (=>)")
    }
    if ((this.peek.kind === "word" || this.peek.kind === "quoted") && this.isOp(this.ahead(1), "->")) {
      this.pos += 2
      this.expression()
      return unsupported("A lambda function (->)")
    }
    return this.expression()
  }
}

/** The fields of Spark's ANSI interval types, largest first. */
type IntervalField = "YEAR" | "MONTH" | "DAY" | "HOUR" | "MINUTE" | "SECOND"
const FIELD_ORDER: ReadonlyArray<IntervalField> = ["YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"]

/** The field a unit of `INTERVAL 10 SECONDS` gives (weeks are days, smaller units seconds). */
const fieldOfUnit = (unit: string): IntervalField => {
  const u = unit.toUpperCase().replace(/S$/, "")
  switch (u) {
    case "YEAR":
    case "MONTH":
    case "DAY":
    case "HOUR":
    case "MINUTE":
      return u
    case "WEEK":
      return "DAY"
    default:
      return "SECOND"
  }
}

/** The fields of `INTERVAL '1 day 2 hours'`, from its value: the largest and smallest parts there. */
const fieldsOfValue = (iv: CalendarInterval): readonly [IntervalField, IntervalField] => {
  if (iv.months !== 0) return [Math.abs(iv.months) >= 12 ? "YEAR" : "MONTH", iv.months % 12 === 0 ? "YEAR" : "MONTH"]
  const present: Array<IntervalField> = []
  if (iv.days !== 0) present.push("DAY")
  const rest = Math.abs(iv.micros)
  if (Math.floor(rest / 3_600_000_000) !== 0) present.push("HOUR")
  if (Math.floor(rest / 60_000_000) % 60 !== 0) present.push("MINUTE")
  if (rest % 60_000_000 !== 0) present.push("SECOND")
  return present.length === 0 ? ["SECOND", "SECOND"] : [present[0], present[present.length - 1]]
}

const pad2 = (n: number): string => String(n).padStart(2, "0")

/**
 * Spark 4's SQL of an ANSI interval literal (`IntervalUtils.toYearMonthIntervalString` /
 * `toDayTimeIntervalString`, ANSI style), as Spark 4.2 prints them in column names:
 * `INTERVAL '10' SECOND`, `INTERVAL '01' HOUR`, `INTERVAL '1 02:03' DAY TO MINUTE`,
 * `INTERVAL '01.5' SECOND`, `INTERVAL '14' MONTH`, `INTERVAL '1-2' YEAR TO MONTH`. The leading
 * field holds the whole amount; hours, minutes and seconds are two digits.
 */
export const ansiIntervalSql = (iv: CalendarInterval, start: IntervalField, end: IntervalField): string => {
  const qualifier = start === end ? start : `${start} TO ${end}`
  if (start === "YEAR" || start === "MONTH") {
    const sign = iv.months < 0 ? "-" : ""
    const m = Math.abs(iv.months)
    const body =
      start === "MONTH" ? String(m) : end === "YEAR" ? String(Math.trunc(m / 12)) : `${Math.trunc(m / 12)}-${m % 12}`
    return `INTERVAL '${sign}${body}' ${qualifier}`
  }
  const total = iv.days * 86_400_000_000 + iv.micros
  const sign = total < 0 ? "-" : ""
  let rest = Math.abs(total)
  const unitMicros: Record<string, number> = {
    DAY: 86_400_000_000,
    HOUR: 3_600_000_000,
    MINUTE: 60_000_000,
    SECOND: 1_000_000
  }
  let body = ""
  for (let i = FIELD_ORDER.indexOf(start); i <= FIELD_ORDER.indexOf(end); i++) {
    const f = FIELD_ORDER[i]
    const n = Math.floor(rest / unitMicros[f])
    rest -= n * unitMicros[f]
    const digits = f === "DAY" ? String(n) : pad2(n)
    body += i === FIELD_ORDER.indexOf(start) ? digits : `${f === "HOUR" ? " " : ":"}${digits}`
  }
  if (end === "SECOND" && rest !== 0) body += `.${String(rest).padStart(6, "0").replace(/0+$/, "")}`
  return `INTERVAL '${sign}${body}' ${qualifier}`
}

const intervalLiteral = (
  iv: CalendarInterval,
  [start, end]: readonly [IntervalField, IntervalField]
): E.Expression => ({
  _tag: "Literal",
  value: iv,
  dataType: T.CalendarIntervalType,
  sql: ansiIntervalSql(iv, start, end)
})

const isNumberToken = (t: Token): boolean =>
  t.kind === "integer" ||
  t.kind === "bigint" ||
  t.kind === "smallint" ||
  t.kind === "tinyint" ||
  t.kind === "decimal" ||
  t.kind === "exponent" ||
  t.kind === "double" ||
  t.kind === "float" ||
  t.kind === "bigdecimal"

const isUnit = (t: Token, units: ReadonlySet<string>): boolean => t.kind === "word" && units.has(t.value.toUpperCase())

/** `EXTRACT(field FROM x)` fields and the functions Spark's `date_part` maps them to. */
const EXTRACT_FIELDS: Readonly<Record<string, string>> = {
  YEAR: "year",
  Y: "year",
  YEARS: "year",
  YR: "year",
  YRS: "year",
  QUARTER: "quarter",
  QTR: "quarter",
  MONTH: "month",
  MON: "month",
  MONS: "month",
  MONTHS: "month",
  WEEK: "weekofyear",
  W: "weekofyear",
  WEEKS: "weekofyear",
  DAY: "day",
  D: "day",
  DAYS: "day",
  DAYOFWEEK: "dayofweek",
  DOW: "dayofweek",
  DOY: "dayofyear",
  HOUR: "hour",
  H: "hour",
  HOURS: "hour",
  HR: "hour",
  HRS: "hour",
  MINUTE: "minute",
  M: "minute",
  MIN: "minute",
  MINS: "minute",
  MINUTES: "minute"
}

/** `F.current_date()`'s expression. */
const currentDate = (): E.Expression => ({
  _tag: "Alias",
  child: { _tag: "Cast", child: { _tag: "CurrentTimestamp" }, to: T.DateType },
  name: "current_date()",
  exprId: E.newExprId()
})

const literalString = (e: E.Expression | undefined): string | undefined =>
  e !== undefined && e._tag === "Literal" && typeof e.value === "string" ? e.value : undefined

const durationArg = (e: E.Expression | undefined): number =>
  (literalString(e) === undefined ? undefined : parseDurationMs(literalString(e))) ?? Number.NaN

/**
 * A call by name, as `F` would build it: aggregates and `F`'s special forms, then the scalar
 * registry (case-insensitively, with Spark's default arguments), else `UNRESOLVED_ROUTINE`.
 */
const resolveCall = (
  name: string,
  args: ReadonlyArray<E.Expression>,
  opts: { readonly distinct: boolean; readonly star: boolean; readonly ignoreNulls: boolean }
): E.Expression => {
  const lower = name.toLowerCase()
  const agg = AGGREGATES[lower]
  if (agg !== undefined) {
    if (opts.star) {
      return agg === "count" ? aggregate("count", [intLit(1)], false) : unsupported(`${lower}(*)`)
    }
    if (agg === "first" || agg === "last") {
      const flag = args[1]
      const ignoreNulls = opts.ignoreNulls || (flag?._tag === "Literal" && flag.value === true)
      return aggregate(agg, args.slice(0, 1), opts.distinct, { ignoreNulls })
    }
    // F's defaults: percentile's frequency 1L, percentile_approx's accuracy 10000
    if (agg === "percentile" && args.length === 2) {
      return aggregate(agg, [...args, { _tag: "Literal", value: 1, dataType: T.LongType }], opts.distinct)
    }
    if ((agg === "percentile_approx" || agg === "approx_percentile") && args.length === 2) {
      return aggregate(agg, [...args, intLit(10000)], opts.distinct)
    }
    if (agg === "approx_count_distinct") {
      const rsd = args[1]?._tag === "Literal" && typeof args[1].value === "number" ? args[1].value : 0.05
      return aggregate(agg, args.slice(0, 1), opts.distinct, { rsd })
    }
    return aggregate(agg, args, opts.distinct)
  }
  if (opts.star) return unresolvedStarArg(lower)
  const windowed = windowFunction(lower, args, opts.ignoreNulls)
  if (windowed !== undefined) return windowed
  switch (lower) {
    case "window": {
      const windowMs = durationArg(args[1])
      return {
        _tag: "TimeWindow",
        timeColumn: args[0] ?? lit(null, T.NullType),
        windowMs,
        slideMs: args[2] === undefined ? windowMs : durationArg(args[2]),
        startMs: args[3] === undefined ? 0 : durationArg(args[3])
      }
    }
    case "session_window": {
      const gap = args[1]
      const s = literalString(gap)
      return {
        _tag: "SessionWindow",
        timeColumn: args[0] ?? lit(null, T.NullType),
        gap: s === undefined ? (gap ?? lit(null, T.NullType)) : intLit(parseDurationMs(s) ?? Number.NaN)
      }
    }
    case "explode":
    case "explode_outer":
    case "posexplode":
    case "posexplode_outer":
      return {
        _tag: "Explode",
        child: args[0] ?? lit(null, T.NullType),
        outer: lower.endsWith("_outer"),
        position: lower.startsWith("pos")
      }
    case "current_timestamp":
    case "now":
      return { _tag: "CurrentTimestamp" }
    case "current_date":
    case "curdate":
      return currentDate()
    case "log":
      // Spark's Logarithm(child) is log base e: LOG(E(), x)
      if (args.length === 1) return fn("LOG", [fn("E", []), args[0]])
      break
  }
  const def = INTERNAL_NAMES.has(lower) ? undefined : lookup(lower)
  if (def === undefined) return unresolvedRoutine([name])
  const defaults = DEFAULT_ARGS[lower]
  const full = defaults !== undefined && args.length === defaults[0] ? [...args, defaults[1]()] : args
  return fn(DISPLAY_NAMES[lower] ?? lower, full)
}

/** `[WRONG_NUM_ARGS]` for a window function called with the wrong number of arguments. */
const wrongNumArgs = (name: string, expected: string, actual: number): E.Expression => {
  const message = `[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The \`${name}\` requires ${expected} parameters but the actual number is ${actual}. Please, refer to 'https://spark.apache.org/docs/latest/sql-ref-functions.html' for a fix. SQLSTATE: 42605`
  return {
    _tag: "InvalidExpression",
    message,
    error: new AnalysisError({ reason: "InvalidArgument", errorClass: "WRONG_NUM_ARGS.WITHOUT_SUGGESTION", message })
  }
}

/**
 * The window functions by their SQL names, as `F` builds them (`lag(x)` is `lag(x, 1, NULL)`);
 * `undefined` for any other name. Spark's ranking functions take no arguments of their own (the
 * window's order is theirs), so `rank(a)` ignores `a` as Spark's `ResolveWindowOrder` does.
 */
const windowFunction = (
  name: string,
  args: ReadonlyArray<E.Expression>,
  ignoreNulls: boolean
): E.Expression | undefined => {
  const make = (fn: E.WindowFunctionName, fnArgs: ReadonlyArray<E.Expression>, nulls = false): E.Expression => ({
    _tag: "WindowFunction",
    name: fn,
    args: fnArgs,
    ignoreNulls: nulls,
    dataType: undefined
  })
  switch (name) {
    case "row_number":
    case "cume_dist":
      return args.length === 0 ? make(name, []) : wrongNumArgs(name, "0", args.length)
    case "rank":
    case "dense_rank":
    case "percent_rank":
      return make(name, [])
    case "ntile":
      return args.length === 1 ? make(name, args) : wrongNumArgs(name, "1", args.length)
    case "lag":
    case "lead":
      if (args.length < 1 || args.length > 3) return wrongNumArgs(name, "[1, 2, 3]", args.length)
      return make(name, [args[0], args[1] ?? intLit(1), args[2] ?? lit(null, T.NullType)], ignoreNulls)
    case "nth_value":
      return args.length === 2 ? make(name, args, ignoreNulls) : wrongNumArgs(name, "2", args.length)
    default:
      return undefined
  }
}

const unresolvedStarArg = (name: string): E.Expression => ({
  _tag: "InvalidExpression",
  message: `[INVALID_USAGE_OF_STAR_OR_REGEX] Invalid usage of '*' in expression \`${name}\`.`
})

/**
 * Parses Spark SQL expression text (Spark's `parseExpression`: one `namedExpression`, so
 * `a + 1 AS b` and `a b` carry an alias) into an expression, or fails with Spark's
 * `ParseException`.
 *
 * @example
 * ```ts
 * import { Result } from "effect"
 * const parsed = parseExpression("upper(name) AS n")
 * Result.isSuccess(parsed) // true
 * ```
 * @since 0.7.0
 */
export const parseExpression = (text: string): Result.Result<E.Expression, ParseException> => {
  const tokens = tokenize(text)
  if (!Array.isArray(tokens)) {
    const start = (tokens as { readonly start: number }).start
    return Result.fail(
      ParseException.at(
        text,
        start,
        "UNCLOSED_BRACKETED_COMMENT",
        SYNTAX_STATE,
        "Found an unclosed bracketed comment. Please, append */ at the end of the comment."
      )
    )
  }
  const list = tokens as ReadonlyArray<Token>
  if (list.length === 1) {
    return Result.fail(
      ParseException.at(text, 0, "PARSE_EMPTY_STATEMENT", "42617", "Syntax error, unexpected empty statement.")
    )
  }
  const parser = new Parser(text, list)
  try {
    const e = parser.namedExpression()
    parser.expectEnd()
    return Result.succeed(e)
  } catch (err) {
    if (err instanceof Failure) return Result.fail(err.error)
    throw err
  }
}

/** The text each parsed root expression came from (expressions are immutable, so identity is stable). */
const sources = new WeakMap<E.Expression, string>()

/**
 * The expression text `e` was parsed from, when `e` is the root of an `F.expr` / `selectExpr`
 * expression: a Spark Connect session sends the text itself (`Expression.ExpressionString`) so
 * that Spark parses it with its own grammar, as pyspark does.
 */
export const sourceText = (e: E.Expression): string | undefined => sources.get(e)

/**
 * The expression of `F.expr(text)`: the parsed expression, or one that reports the
 * `ParseException` at the first action (builders never throw). Either way its text is kept
 * (`sourceText`).
 */
export const expressionOf = (text: string): E.Expression => {
  const r = parseExpression(text)
  const e: E.Expression = Result.isSuccess(r)
    ? r.success
    : { _tag: "InvalidExpression", message: r.failure.message, error: r.failure }
  sources.set(e, text)
  return e
}
