/**
 * Differential property test: the batch engine against DuckDB.
 *
 * For random tables (ints with nulls, doubles, strings with nulls from a small alphabet,
 * timestamps) and a random pipeline (an optional inner/left join with a second table, then
 * filters, selects with arithmetic, withColumn, groupBy/agg, distinct, and an optional final
 * orderBy over every output column with a limit), the same pipeline runs through tributary's
 * DataFrame API and, as SQL text generated from the same description, through DuckDB over the
 * same rows. Results must agree as multisets (doubles within a relative 1e-9), the output
 * columns and their Spark types must be the ones Spark gives, and an ordered result must be in
 * Spark's order.
 *
 * The generator stays inside the part of SQL where Spark (ANSI off) and DuckDB agree:
 * `/` is double division in both, a zero divisor gives null (`NULLIF` in the SQL); there is no
 * integer overflow (magnitudes are tracked and kept below 1e9, where Spark would wrap and
 * DuckDB would fail); doubles are multiples of 1/4 so sums are exact in any order; results of
 * `avg` and `/` are only passed through (never computed on, filtered or grouped by), because
 * the engines may round them differently in the last place.
 * Identifiers are quoted with `quoteIdentifier`; literal values reach DuckDB as `?` parameters
 * (in a chain of CTEs, so the parameters follow the text order).
 */
import { describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as fc from "fast-check"
import type { Column } from "../../core/Column.ts"
import * as T from "../../core/DataType.ts"
import { rowsToInternal } from "../../core/Row.ts"
import { type DataFrame, F, type Row, Session } from "../../mod.ts"
import * as DuckDB from "../../state/DuckDB.ts"

type Ty = "int" | "long" | "double" | "string" | "timestamp"

interface ColInfo {
  readonly name: string
  readonly type: Ty
  /** An upper bound of the absolute value (numeric columns). */
  readonly bound: number
  /** False for results of `avg`, which the engines may round differently. */
  readonly exact: boolean
}

/** One expression, built for both engines at once. */
interface Built {
  readonly column: Column<unknown, string>
  readonly sql: string
  readonly params: ReadonlyArray<unknown>
  readonly code: string
  readonly type: Ty
  readonly bound: number
  /** False for `/` results: not computed on further (the engines may round differently). */
  readonly exact?: boolean
}

type Gen = fc.GeneratorValue

const SPARK_TYPE: Record<Ty, string> = {
  int: "int",
  long: "bigint",
  double: "double",
  string: "string",
  timestamp: "timestamp"
}
const MAX_BOUND = 1e9
const ALPHABET = ["a", "b", "c", "ab", "ba", ""]
const T0 = Date.UTC(2024, 0, 1)
const q = DuckDB.quoteIdentifier

const isNumeric = (t: Ty): boolean => t === "int" || t === "long" || t === "double"

const int = (g: Gen, min: number, max: number): number => g(fc.integer, { min, max })
const pick = <A>(g: Gen, xs: ReadonlyArray<A>): A => xs[int(g, 0, xs.length - 1)]
const chance = (g: Gen, percent: number): boolean => int(g, 1, 100) <= percent

// ---- tables ---------------------------------------------------------------------------------

const nullable = <A>(arb: fc.Arbitrary<A>): fc.Arbitrary<A | null> => fc.option(arb, { nil: null, freq: 5 })
const quarter = (min: number, max: number) => fc.integer({ min: min * 4, max: max * 4 }).map((n) => n / 4)

const rowA = fc.record({
  k: nullable(fc.integer({ min: 0, max: 4 })),
  i: nullable(fc.integer({ min: -100, max: 100 })),
  d: nullable(quarter(-1000, 1000)),
  s: nullable(fc.constantFrom(...ALPHABET)),
  t: nullable(fc.integer({ min: 0, max: 600 }).map((sec) => new Date(T0 + sec * 1000)))
})
const rowB = fc.record({
  bk: nullable(fc.integer({ min: 0, max: 5 })),
  x: nullable(fc.integer({ min: -100, max: 100 })),
  y: nullable(fc.constantFrom(...ALPHABET))
})
const DDL_A = "k int, i int, d double, s string, t timestamp"
const DDL_B = "bk int, x int, y string"
const COLS_A: ReadonlyArray<ColInfo> = [
  { name: "k", type: "int", bound: 4, exact: true },
  { name: "i", type: "int", bound: 100, exact: true },
  { name: "d", type: "double", bound: 1000, exact: true },
  { name: "s", type: "string", bound: 0, exact: true },
  { name: "t", type: "timestamp", bound: 0, exact: true }
]
const COLS_B: ReadonlyArray<ColInfo> = [
  { name: "bk", type: "int", bound: 5, exact: true },
  { name: "x", type: "int", bound: 100, exact: true },
  { name: "y", type: "string", bound: 0, exact: true }
]
const MAX_ROWS_A = 30
const MAX_ROWS_B = 10

// ---- expressions ----------------------------------------------------------------------------

const colRef = (c: ColInfo): Built => ({
  column: F.col(c.name),
  sql: q(c.name),
  params: [],
  code: `F.col(${JSON.stringify(c.name)})`,
  type: c.type,
  bound: c.bound
})

/** A literal of type `t`, as `lit` for tributary and `CAST(? AS …)` for DuckDB. */
const literal = (t: Ty, value: number | string): Built => {
  switch (t) {
    case "int":
    case "long":
      return {
        column: F.lit(value as number),
        sql: "CAST(? AS INTEGER)",
        params: [value],
        code: `F.lit(${value})`,
        type: "int",
        bound: Math.abs(value as number)
      }
    case "double":
      // `lit(2)` would be an int literal, so doubles are cast (Spark folds the cast).
      return {
        column: F.lit(value as number).cast("double"),
        sql: "CAST(? AS DOUBLE)",
        params: [value],
        code: `F.lit(${value}).cast("double")`,
        type: "double",
        bound: Math.abs(value as number)
      }
    case "string":
      return {
        column: F.lit(value as string),
        sql: "CAST(? AS VARCHAR)",
        params: [value],
        code: `F.lit(${JSON.stringify(value)})`,
        type: "string",
        bound: 0
      }
    case "timestamp":
      return {
        column: F.lit(new Date(value as number)),
        sql: "CAST(? AS TIMESTAMP)",
        params: [DuckDB.toDuck(T.TimestampType)(value)],
        code: `F.lit(new Date(${JSON.stringify(new Date(value as number).toISOString())}))`,
        type: "timestamp",
        bound: 0
      }
  }
}

/** A literal of type `t` near the values a column of that type holds. */
const randomLiteral = (g: Gen, t: Ty, bound: number): Built => {
  switch (t) {
    case "int":
    case "long": {
      const b = Math.ceil(Math.min(Math.max(bound, 1), 10_000))
      return literal("int", int(g, -b, b))
    }
    case "double": {
      const b = Math.ceil(Math.min(Math.max(bound, 1), 10_000))
      return literal("double", int(g, -4 * b, 4 * b) / 4)
    }
    case "string":
      return literal("string", pick(g, ALPHABET))
    case "timestamp":
      return literal("timestamp", T0 + int(g, -10, 610) * 1000)
  }
}

type ArithOp = "+" | "-" | "*" | "/" | "%"
const arithType = (op: ArithOp, a: Ty, b: Ty): Ty =>
  op === "/" || a === "double" || b === "double" ? "double" : a === "long" || b === "long" ? "long" : "int"

const METHOD: Record<ArithOp, "plus" | "minus" | "multiply" | "divide" | "mod"> = {
  "+": "plus",
  "-": "minus",
  "*": "multiply",
  "/": "divide",
  "%": "mod"
}

/**
 * `l op r`. Spark's `/` is always double division, as DuckDB's is. Spark's `/` and `%` give
 * null for a zero divisor (ANSI off); DuckDB gives null for `1 / 0` but NaN for `0 / 0` and for
 * a double `% 0`, so the SQL divides by `NULLIF(r, 0)`.
 */
const arith = (op: ArithOp, l: Built, r: Built): Built => ({
  column: l.column[METHOD[op]](r.column),
  sql: op === "/" || op === "%" ? `(${l.sql} ${op} NULLIF(${r.sql}, 0))` : `(${l.sql} ${op} ${r.sql})`,
  params: [...l.params, ...r.params],
  code: `${l.code}.${METHOD[op]}(${r.code})`,
  type: arithType(op, l.type, r.type),
  bound: op === "*" ? l.bound * r.bound : op === "/" ? l.bound * 4 : op === "%" ? l.bound : l.bound + r.bound,
  exact: op !== "/"
})

/** A numeric leaf: an exact numeric column or a small literal. */
const numericLeaf = (g: Gen, cols: ReadonlyArray<ColInfo>): Built => {
  const numeric = cols.filter((c) => isNumeric(c.type) && c.exact)
  if (numeric.length === 0 || chance(g, 25)) {
    return chance(g, 50) ? literal("int", int(g, -10, 10)) : literal("double", int(g, -40, 40) / 4)
  }
  return colRef(pick(g, numeric))
}

/** Arithmetic over numeric leaves, at most two operators, never past MAX_BOUND; `/` only last. */
const arithmetic = (g: Gen, cols: ReadonlyArray<ColInfo>): Built => {
  let e = numericLeaf(g, cols)
  const ops = int(g, 1, 2)
  for (let n = 0; n < ops && e.exact !== false; n++) {
    const r = numericLeaf(g, cols)
    const op = pick<ArithOp>(g, ["+", "-", "*", "*", "/", "%"])
    const next = arith(op, e, r)
    if (next.bound <= MAX_BOUND) e = next
    else if (e.bound + r.bound <= MAX_BOUND) e = arith("+", e, r)
  }
  return e
}

type CmpOp = "=" | "!=" | "<" | "<=" | ">" | ">="

const compare = (op: CmpOp, l: Built, r: Built): Built => {
  const m = { "=": "eq", "!=": "neq", "<": "lt", "<=": "leq", ">": "gt", ">=": "geq" } as const
  return {
    column: l.column[m[op]](r.column),
    sql: `(${l.sql} ${op === "!=" ? "<>" : op} ${r.sql})`,
    params: [...l.params, ...r.params],
    code: `${l.code}.${m[op]}(${r.code})`,
    type: "int",
    bound: 0
  }
}

/** A predicate: comparisons of a column with a literal, IS [NOT] NULL, AND/OR. */
/** Non-null values of the base tables' columns, by column name (timestamps as epoch ms). */
type Samples = ReadonlyMap<string, ReadonlyArray<unknown>>

const baseType = (name: string): Ty | undefined => [...COLS_A, ...COLS_B].find((c) => c.name === name)?.type

const predicate = (g: Gen, cols: ReadonlyArray<ColInfo>, samples: Samples, depth = 0): Built => {
  const usable = cols.filter((c) => c.exact)
  const kind = depth >= 2 || usable.length === 0 ? 0 : int(g, 0, 3)
  if (usable.length === 0) return compare("=", literal("int", 1), literal("int", 1))
  if (kind === 2 || kind === 3) {
    const l = predicate(g, cols, samples, depth + 1)
    const r = predicate(g, cols, samples, depth + 1)
    const and = kind === 2
    return {
      column: and ? l.column.and(r.column) : l.column.or(r.column),
      sql: `(${l.sql} ${and ? "AND" : "OR"} ${r.sql})`,
      params: [...l.params, ...r.params],
      code: `${l.code}.${and ? "and" : "or"}(${r.code})`,
      type: "int",
      bound: 0
    }
  }
  const c = pick(g, usable)
  if (chance(g, 20)) {
    const isNull = chance(g, 50)
    const ref = colRef(c)
    return {
      column: isNull ? ref.column.isNull() : ref.column.isNotNull(),
      sql: `(${ref.sql} IS ${isNull ? "" : "NOT "}NULL)`,
      params: [],
      code: `${ref.code}.${isNull ? "isNull" : "isNotNull"}()`,
      type: "int",
      bound: 0
    }
  }
  // half of the literals are values the base tables hold, so that filters keep some rows
  const seen = samples.get(c.name)?.filter((v) => v !== null)
  const lit =
    seen !== undefined && seen.length > 0 && c.type === baseType(c.name) && chance(g, 50)
      ? literal(c.type, pick(g, seen) as number | string)
      : randomLiteral(g, c.type, c.bound)
  return compare(pick<CmpOp>(g, ["=", "!=", "<", "<=", ">", ">="]), colRef(c), lit)
}

// ---- pipelines ------------------------------------------------------------------------------

interface Stage {
  readonly df: DataFrame<Row>
  readonly cols: ReadonlyArray<ColInfo>
  /** The CTEs so far (`q0 AS (...)`, …) and their parameters, in text order. */
  readonly ctes: ReadonlyArray<string>
  readonly params: ReadonlyArray<unknown>
  readonly code: string
  /** An upper bound of the number of rows (for count and sum bounds). */
  readonly maxRows: number
}

const prev = (s: Stage): string => `q${s.ctes.length - 1}`

const addCte = (s: Stage, select: string, params: ReadonlyArray<unknown>): Pick<Stage, "ctes" | "params"> => ({
  ctes: [...s.ctes, `q${s.ctes.length} AS (${select})`],
  params: [...s.params, ...params]
})

const selectList = (items: ReadonlyArray<{ readonly sql: string; readonly name: string }>): string =>
  items.map((it) => (it.sql === q(it.name) ? it.sql : `${it.sql} AS ${q(it.name)}`)).join(", ")

const start = (g: Gen, a: DataFrame<Row>, b: DataFrame<Row>, rowsA: number, rowsB: number): Stage => {
  const base: Stage = {
    df: a,
    cols: COLS_A,
    ctes: [],
    params: [],
    code: "a",
    maxRows: rowsA
  }
  if (!chance(g, 40)) return { ...base, ...addCte(base, `SELECT * FROM ${q("a")}`, []) }
  const how = pick(g, ["inner", "left"] as const)
  const sqlJoin = how === "inner" ? "JOIN" : "LEFT JOIN"
  const maxRows = rowsA * Math.max(rowsB, 1)
  const variant = int(g, 0, 2)
  const aCols = COLS_A.map((c) => `l.${q(c.name)}`)
  if (variant === 0) {
    // USING join: one key column `k`, from the left side (inner and left)
    const b2 = b.withColumnRenamed("bk", "k")
    const cols = [...COLS_A, ...COLS_B.slice(1)]
    const sql = `SELECT ${[...aCols, ...COLS_B.slice(1).map((c) => `r.${q(c.name)}`)].join(", ")} FROM ${q("a")} l ${sqlJoin} ${q("b")} r ON l.${q("k")} = r.${q("bk")}`
    return {
      // JoinRow over untyped rows gives a union of Row shapes; the rows are still Rows
      df: a.join(b2, "k", how) as unknown as DataFrame<Row>,
      cols,
      ...addCte(base, sql, []),
      code: `a.join(b.withColumnRenamed("bk", "k"), "k", "${how}")`,
      maxRows
    }
  }
  const cols = [...COLS_A, ...COLS_B]
  const bCols = COLS_B.map((c) => `r.${q(c.name)}`)
  if (variant === 1) {
    const sql = `SELECT ${[...aCols, ...bCols].join(", ")} FROM ${q("a")} l ${sqlJoin} ${q("b")} r ON l.${q("k")} = r.${q("bk")}`
    return {
      df: a.join(b, a.col("k").eq(b.col("bk")), how),
      cols,
      ...addCte(base, sql, []),
      code: `a.join(b, a.col("k").eq(b.col("bk")), "${how}")`,
      maxRows
    }
  }
  // an equi-join with an extra non-equi conjunct
  const sql = `SELECT ${[...aCols, ...bCols].join(", ")} FROM ${q("a")} l ${sqlJoin} ${q("b")} r ON l.${q("k")} = r.${q("bk")} AND l.${q("i")} < r.${q("x")}`
  return {
    df: a.join(
      b,
      a
        .col("k")
        .eq(b.col("bk"))
        .and(a.col("i").lt(b.col("x"))),
      how
    ),
    cols,
    ...addCte(base, sql, []),
    code: `a.join(b, a.col("k").eq(b.col("bk")).and(a.col("i").lt(b.col("x"))), "${how}")`,
    maxRows
  }
}

const filterStep = (g: Gen, s: Stage, samples: Samples): Stage => {
  const p = predicate(g, s.cols, samples)
  return {
    ...s,
    df: s.df.where(p.column),
    ...addCte(s, `SELECT * FROM ${prev(s)} WHERE ${p.sql}`, p.params),
    code: `${s.code}\n  .where(${p.code})`
  }
}

const selectStep = (g: Gen, s: Stage, fresh: () => string): Stage => {
  const n = int(g, 1, 4)
  const items: Array<{ built: Built; name: string; exact: boolean }> = []
  for (let j = 0; j < n; j++) {
    if (chance(g, 50)) {
      const c = pick(g, s.cols)
      if (items.some((it) => it.name === c.name)) continue
      items.push({ built: colRef(c), name: c.name, exact: c.exact })
    } else {
      const e = arithmetic(g, s.cols)
      items.push({ built: e, name: fresh(), exact: e.exact !== false })
    }
  }
  if (items.length === 0) items.push({ built: colRef(s.cols[0]), name: s.cols[0].name, exact: s.cols[0].exact })
  const columns = items.map((it) => (it.built.sql === q(it.name) ? it.built.column : it.built.column.as(it.name)))
  const code = items
    .map((it) => (it.built.sql === q(it.name) ? `"${it.name}"` : `${it.built.code}.as("${it.name}")`))
    .join(", ")
  return {
    ...s,
    df: s.df.select(...columns),
    cols: items.map((it) => ({ name: it.name, type: it.built.type, bound: it.built.bound, exact: it.exact })),
    ...addCte(
      s,
      `SELECT ${selectList(items.map((it) => ({ sql: it.built.sql, name: it.name })))} FROM ${prev(s)}`,
      items.flatMap((it) => it.built.params)
    ),
    code: `${s.code}\n  .select(${code})`
  }
}

const withColumnStep = (g: Gen, s: Stage, fresh: () => string): Stage => {
  const replace = chance(g, 40)
  const name = replace ? pick(g, s.cols).name : fresh()
  const e = chance(g, 80)
    ? arithmetic(g, s.cols)
    : randomLiteral(g, pick(g, ["int", "double", "string", "timestamp"] as const), 10)
  const info: ColInfo = { name, type: e.type, bound: e.bound, exact: e.exact !== false }
  const cols = replace ? s.cols.map((c) => (c.name === name ? info : c)) : [...s.cols, info]
  const items = cols.map((c) => (c.name === name ? { sql: e.sql, name } : { sql: q(c.name), name: c.name }))
  return {
    ...s,
    df: s.df.withColumn(name, e.column),
    cols,
    ...addCte(s, `SELECT ${selectList(items)} FROM ${prev(s)}`, e.params),
    code: `${s.code}\n  .withColumn("${name}", ${e.code})`
  }
}

type AggFn = "count(*)" | "count" | "sum" | "avg" | "min" | "max"

const groupByStep = (g: Gen, s: Stage, fresh: () => string): Stage => {
  const keyCandidates = s.cols.filter((c) => c.exact)
  const keys: Array<ColInfo> = []
  const nKeys = int(g, 0, Math.min(2, keyCandidates.length))
  for (let j = 0; j < nKeys; j++) {
    const c = pick(g, keyCandidates)
    if (!keys.includes(c)) keys.push(c)
  }
  const aggs: Array<{ fn: AggFn; col: ColInfo | undefined; name: string }> = []
  const nAggs = int(g, 1, 3)
  for (let j = 0; j < nAggs; j++) {
    const fn = pick<AggFn>(g, ["count(*)", "count", "sum", "avg", "min", "max"])
    const candidates = s.cols.filter((c) => c.exact && (fn === "sum" || fn === "avg" ? isNumeric(c.type) : true))
    if (fn === "count(*)" || candidates.length === 0) aggs.push({ fn: "count(*)", col: undefined, name: fresh() })
    else aggs.push({ fn, col: pick(g, candidates), name: fresh() })
  }
  const aggColumn = (a: (typeof aggs)[number]): Column<unknown, string> => {
    const c = a.col?.name ?? "*"
    const col = a.fn === "count(*)" ? F.count("*") : a.fn === "count" ? F.count(c) : F[a.fn](c)
    return col.as(a.name)
  }
  const aggSql = (a: (typeof aggs)[number]): string => (a.fn === "count(*)" ? "count(*)" : `${a.fn}(${q(a.col!.name)})`)
  const aggInfo = (a: (typeof aggs)[number]): ColInfo => {
    const c = a.col
    switch (a.fn) {
      case "count(*)":
      case "count":
        return { name: a.name, type: "long", bound: s.maxRows, exact: true }
      case "sum":
        return {
          name: a.name,
          type: c!.type === "double" ? "double" : "long",
          bound: c!.bound * s.maxRows,
          exact: true
        }
      case "avg":
        return { name: a.name, type: "double", bound: c!.bound, exact: false }
      case "min":
      case "max":
        return { ...c!, name: a.name }
    }
  }
  const keySql = keys.map((k) => q(k.name))
  const sql = `SELECT ${[...keySql, ...aggs.map((a) => `${aggSql(a)} AS ${q(a.name)}`)].join(", ")} FROM ${prev(s)}${
    keys.length > 0 ? ` GROUP BY ${keySql.join(", ")}` : ""
  }`
  const aggCode = aggs
    .map((a) => `${a.fn === "count(*)" ? 'F.count("*")' : `F.${a.fn}("${a.col!.name}")`}.as("${a.name}")`)
    .join(", ")
  return {
    ...s,
    df: s.df.groupBy(...keys.map((k) => k.name)).agg(...aggs.map(aggColumn)),
    cols: [...keys, ...aggs.map(aggInfo)],
    ...addCte(s, sql, []),
    code: `${s.code}\n  .groupBy(${keys.map((k) => `"${k.name}"`).join(", ")}).agg(${aggCode})`,
    maxRows: s.maxRows
  }
}

const distinctStep = (s: Stage): Stage => ({
  ...s,
  df: s.df.distinct(),
  ...addCte(s, `SELECT DISTINCT * FROM ${prev(s)}`, []),
  code: `${s.code}\n  .distinct()`
})

type Direction = "asc" | "desc" | "asc_nulls_last" | "desc_nulls_first"

interface Ordering {
  readonly directions: ReadonlyArray<Direction>
  readonly limit: number | undefined
}

interface Pipeline {
  readonly stage: Stage
  readonly ordering: Ordering | undefined
  readonly df: DataFrame<Row>
  readonly sql: string
  readonly params: ReadonlyArray<unknown>
  readonly code: string
}

const DIRECTION_SQL: Record<Direction, string> = {
  asc: "ASC NULLS FIRST",
  desc: "DESC NULLS LAST",
  asc_nulls_last: "ASC NULLS LAST",
  desc_nulls_first: "DESC NULLS FIRST"
}

const buildPipeline = (
  g: Gen,
  a: DataFrame<Row>,
  b: DataFrame<Row>,
  rowsA: number,
  rowsB: number,
  samples: Samples
): Pipeline => {
  let counter = 0
  const fresh = () => `c${counter++}`
  let s = start(g, a, b, rowsA, rowsB)
  const steps = int(g, 0, 5)
  let groupBys = 0
  for (let j = 0; j < steps; j++) {
    const kind = int(g, 0, 9)
    if (kind <= 2) s = filterStep(g, s, samples)
    else if (kind <= 4) s = selectStep(g, s, fresh)
    else if (kind <= 6) s = withColumnStep(g, s, fresh)
    else if (kind <= 8 && groupBys < 2) {
      s = groupByStep(g, s, fresh)
      groupBys++
    } else s = distinctStep(s)
  }
  const last = prev(s)
  if (!chance(g, 40)) {
    return {
      stage: s,
      ordering: undefined,
      df: s.df,
      sql: `WITH ${s.ctes.join(", ")} SELECT * FROM ${last}`,
      params: s.params,
      code: s.code
    }
  }
  const directions = s.cols.map(() => pick<Direction>(g, ["asc", "desc", "asc_nulls_last", "desc_nulls_first"]))
  const limit = chance(g, 40) ? int(g, 0, 8) : undefined
  const sortCols = s.cols.map((c, j) => F.col(c.name)[directions[j]]())
  const sorted = s.df.orderBy(...sortCols)
  const df = limit === undefined ? sorted : sorted.limit(limit)
  const orderSql = s.cols.map((c, j) => `${q(c.name)} ${DIRECTION_SQL[directions[j]]}`).join(", ")
  return {
    stage: s,
    ordering: { directions, limit },
    df,
    sql: `WITH ${s.ctes.join(", ")} SELECT * FROM ${last} ORDER BY ${orderSql}${limit === undefined ? "" : " LIMIT ?"}`,
    params: limit === undefined ? s.params : [...s.params, limit],
    code: `${s.code}\n  .orderBy(${s.cols.map((c, j) => `F.col("${c.name}").${directions[j]}()`).join(", ")})${limit === undefined ? "" : `.limit(${limit})`}`
  }
}

// ---- comparing ------------------------------------------------------------------------------

const normalize = (v: unknown): unknown => (v instanceof Date ? v.getTime() : v === undefined ? null : v)

const sameValue = (a: unknown, b: unknown): boolean => {
  if (a === null || b === null) return a === b
  if (typeof a === "number" && typeof b === "number") {
    if (a === b || (Number.isNaN(a) && Number.isNaN(b))) return true
    return Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))
  }
  return a === b
}

const sameRow = (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>): boolean =>
  a.length === b.length && a.every((v, j) => sameValue(v, b[j]))

/** Equal as multisets: every row of `a` pairs with its own row of `b` (doubles within tolerance). */
const sameMultiset = (a: ReadonlyArray<ReadonlyArray<unknown>>, b: ReadonlyArray<ReadonlyArray<unknown>>): boolean => {
  if (a.length !== b.length) return false
  const used = new Array<boolean>(b.length).fill(false)
  for (const row of a) {
    let found = false
    for (let j = 0; j < b.length; j++) {
      if (!used[j] && sameRow(row, b[j])) {
        used[j] = true
        found = true
        break
      }
    }
    if (!found) return false
  }
  return true
}

/** Spark's ordering of two values of one column (-0.0 equals 0.0; strings by code unit for ASCII). */
const compareValues = (a: unknown, b: unknown, d: Direction): number => {
  const nullsFirst = d === "asc" || d === "desc_nulls_first"
  if (a === null && b === null) return 0
  if (a === null) return nullsFirst ? -1 : 1
  if (b === null) return nullsFirst ? 1 : -1
  const c =
    (a as number | string) < (b as number | string) ? -1 : (a as number | string) > (b as number | string) ? 1 : 0
  return d === "asc" || d === "asc_nulls_last" ? c : -c
}

const isOrdered = (rows: ReadonlyArray<ReadonlyArray<unknown>>, directions: ReadonlyArray<Direction>): boolean => {
  for (let r = 1; r < rows.length; r++) {
    for (let j = 0; j < directions.length; j++) {
      const c = compareValues(rows[r - 1][j], rows[r][j], directions[j])
      if (c < 0) break
      if (c > 0) return false
    }
  }
  return true
}

const show = (rows: ReadonlyArray<ReadonlyArray<unknown>>): string =>
  rows.length === 0
    ? "  (no rows)"
    : rows
        .map((r) => `  ${JSON.stringify(r, (_, v) => (typeof v === "number" && !Number.isFinite(v) ? String(v) : v))}`)
        .join("\n")

// ---- the property ---------------------------------------------------------------------------

type RowA = { k: number | null; i: number | null; d: number | null; s: string | null; t: Date | null }
type RowB = { bk: number | null; x: number | null; y: string | null }

const check = (c: DuckDB.Connection, rowsA: ReadonlyArray<RowA>, rowsB: ReadonlyArray<RowB>, g: Gen) =>
  Effect.gen(function* () {
    const spark = yield* Session
    const schemaA = T.parseDDL(DDL_A)!
    const schemaB = T.parseDDL(DDL_B)!
    const a = spark.createDataFrame(rowsA, DDL_A)
    const b = spark.createDataFrame(rowsB, DDL_B)
    const samples = new Map<string, ReadonlyArray<unknown>>()
    for (const c of COLS_A)
      samples.set(
        c.name,
        rowsA.map((r) => normalize(r[c.name as keyof RowA]))
      )
    for (const c of COLS_B)
      samples.set(
        c.name,
        rowsB.map((r) => normalize(r[c.name as keyof RowB]))
      )
    const p = buildPipeline(g, a, b, rowsA.length, rowsB.length, samples)
    const context = () =>
      `pipeline:\n${p.code}\nSQL: ${p.sql}\nparams: ${JSON.stringify(p.params, (_, v) => (typeof v === "bigint" ? String(v) : v))}\n` +
      `a (${DDL_A}):\n${show(rowsA.map((r) => [r.k, r.i, r.d, r.s, r.t?.toISOString() ?? null]))}\n` +
      `b (${DDL_B}):\n${show(rowsB.map((r) => [r.bk, r.x, r.y]))}`

    // `createTable` replaces the tables of the previous run
    const expected = yield* Effect.gen(function* () {
      yield* DuckDB.createTable(c, "a", schemaA, rowsToInternal(schemaA, rowsA))
      yield* DuckDB.createTable(c, "b", schemaB, rowsToInternal(schemaB, rowsB))
      return yield* c.query(p.sql, p.params)
    }).pipe(Effect.orDie)

    const names = p.stage.cols.map((c) => c.name)
    const exit = yield* Effect.exit(p.df.collect())
    if (Exit.isFailure(exit)) {
      return yield* Effect.die(new Error(`tributary failed: ${String(exit.cause)}\n${context()}`))
    }
    const fail = (what: string, actual: ReadonlyArray<ReadonlyArray<unknown>>) =>
      Effect.die(
        new Error(`${what}\n${context()}\nDuckDB (expected):\n${show(expected.rows)}\ntributary:\n${show(actual)}`)
      )

    if (JSON.stringify(p.df.columns) !== JSON.stringify(names)) {
      return yield* fail(
        `columns differ: tributary ${JSON.stringify(p.df.columns)}, expected ${JSON.stringify(names)}`,
        []
      )
    }
    const types = p.df.dtypes.map(([, t]) => t)
    const expectedTypes = p.stage.cols.map((c) => SPARK_TYPE[c.type])
    if (JSON.stringify(types) !== JSON.stringify(expectedTypes)) {
      return yield* fail(`types differ: tributary ${JSON.stringify(types)}, Spark ${JSON.stringify(expectedTypes)}`, [])
    }
    const actual = exit.value.map((r) => names.map((n) => normalize((r as Record<string, unknown>)[n])))
    const want = expected.rows.map((r) => r.map(normalize))
    if (!sameMultiset(actual, want)) {
      return yield* fail("rows differ", actual)
    }
    if (p.ordering !== undefined && !isOrdered(actual, p.ordering.directions)) {
      return yield* fail("rows are not in the requested order", actual)
    }
    return true
  })

describe("batch engine vs DuckDB", () => {
  it("random pipelines over random tables give DuckDB's rows", { timeout: 120_000 }, async () => {
    // one in-memory DuckDB database for all runs
    await Effect.runPromise(
      DuckDB.withMemory((c) =>
        Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(
              fc.array(rowA, { maxLength: MAX_ROWS_A, size: "max" }),
              fc.array(rowB, { maxLength: MAX_ROWS_B, size: "max" }),
              fc.gen(),
              (rowsA, rowsB, g) => Effect.runPromise(check(c, rowsA, rowsB, g).pipe(Effect.provide(Session.layer())))
            ),
            { numRuns: 200 }
          )
        )
      )
    )
  })
})
