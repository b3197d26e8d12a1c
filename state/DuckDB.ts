/**
 * A thin Effect layer over `@duckdb/node-api`: open a database, run parameterised SQL, append
 * rows in one batch, and map DuckDB's types to Spark's. State stores, the file formats and
 * `spark.sql` all go through here.
 *
 * User data reaches DuckDB only as parameters or appended values, never inside SQL text.
 * Identifiers (table and column names) are quoted with `quoteIdentifier`.
 *
 * @since 0.1.0
 */
import {
  DuckDBBlobValue,
  type DuckDBConnection,
  DuckDBDateValue,
  DuckDBInstance,
  DuckDBTimestampValue,
  type DuckDBType,
  type DuckDBValue
} from "@duckdb/node-api"
import { Effect, type Scope } from "effect"
import * as T from "../core/DataType.ts"
import * as Long from "../core/Long.ts"
import type { InternalRow } from "../core/Row.ts"

/** A DuckDB failure, before the caller turns it into its own typed error. */
export class DuckDBFailure extends Error {
  readonly sql: string
  constructor(sql: string, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause))
    this.sql = sql
    this.cause = cause
  }
}

export interface Connection {
  readonly raw: DuckDBConnection
  /** Runs SQL with parameters; returns column names, their Spark types and the rows (internal values). */
  readonly query: (sql: string, params?: ReadonlyArray<unknown>) => Effect.Effect<QueryResult, DuckDBFailure>
  /** Runs SQL with parameters for its effect. */
  readonly execute: (sql: string, params?: ReadonlyArray<unknown>) => Effect.Effect<void, DuckDBFailure>
  /** Appends internal rows of `schema` to an existing table, in one appender batch. */
  readonly append: (
    table: string,
    schema: T.StructType,
    rows: ReadonlyArray<InternalRow>
  ) => Effect.Effect<void, DuckDBFailure>
}

export interface QueryResult {
  readonly columns: ReadonlyArray<string>
  readonly types: ReadonlyArray<T.DataType>
  readonly duckTypes: ReadonlyArray<string>
  readonly rows: ReadonlyArray<InternalRow>
}

/** Double-quotes an identifier for DuckDB SQL. */
export const quoteIdentifier = (name: string): string => `"${name.replaceAll('"', '""')}"`

/** DuckDB type → Spark type. Unknown types become `string` (values are converted with `String`). */
export const sparkTypeOf = (t: DuckDBType): T.DataType => {
  const anyT = t as unknown as {
    typeId: number
    valueType?: DuckDBType
    entryNames?: ReadonlyArray<string>
    entryTypes?: ReadonlyArray<DuckDBType>
    keyType?: DuckDBType
  }
  const name = t.toString()
  switch (name) {
    case "BOOLEAN":
      return T.BooleanType
    case "TINYINT":
    case "SMALLINT":
    case "INTEGER":
    case "UTINYINT":
    case "USMALLINT":
      return T.IntegerType
    case "BIGINT":
    case "UINTEGER":
    case "UBIGINT":
    case "HUGEINT":
    case "UHUGEINT":
      return T.LongType
    case "FLOAT":
    case "DOUBLE":
      return T.DoubleType
    case "VARCHAR":
    case "UUID":
    case "JSON":
      return T.StringType
    case "BLOB":
      return T.BinaryType
    case "DATE":
      return T.DateType
    case "TIMESTAMP":
    case "TIMESTAMP_S":
    case "TIMESTAMP_MS":
    case "TIMESTAMP_NS":
    case "TIMESTAMP WITH TIME ZONE":
      return T.TimestampType
    case "INTERVAL":
      return T.CalendarIntervalType
    case '"NULL"':
    case "NULL":
      return T.NullType
  }
  if (name.startsWith("DECIMAL")) return T.DoubleType
  if (anyT.entryNames !== undefined && anyT.entryTypes !== undefined && name.startsWith("STRUCT")) {
    return T.struct(anyT.entryNames.map((n, i) => T.field(n, sparkTypeOf(anyT.entryTypes![i]))))
  }
  if (anyT.keyType !== undefined && anyT.valueType !== undefined) {
    return T.map(sparkTypeOf(anyT.keyType), sparkTypeOf(anyT.valueType))
  }
  if (anyT.valueType !== undefined) return T.array(sparkTypeOf(anyT.valueType))
  return T.StringType
}

/** Spark type → DuckDB column type text (for CREATE TABLE). */
export const duckTypeOf = (t: T.DataType): string => {
  switch (t._tag) {
    case "null":
    case "string":
    case "calendarInterval":
      return "VARCHAR"
    case "boolean":
      return "BOOLEAN"
    case "integer":
      return "INTEGER"
    case "long":
      return "BIGINT"
    case "double":
      return "DOUBLE"
    case "binary":
      return "BLOB"
    case "timestamp":
      return "TIMESTAMP"
    case "date":
      return "DATE"
    case "array":
      return `${duckTypeOf(t.elementType)}[]`
    case "map":
      return `MAP(${duckTypeOf(t.keyType)}, ${duckTypeOf(t.valueType)})`
    case "struct":
      return `STRUCT(${t.fields.map((f) => `${quoteIdentifier(f.name)} ${duckTypeOf(f.dataType)}`).join(", ")})`
  }
}

/** Converts one value read from DuckDB (JS form) to the internal value of Spark type `t`. */
export const fromDuck = (t: T.DataType): ((v: unknown) => unknown) => {
  switch (t._tag) {
    case "long":
      // exact: a number while safe, a bigint beyond (core/Long.ts)
      return (v) =>
        v === null || v === undefined ? null : typeof v === "bigint" ? Long.fromBigInt(v) : Long.normalize(Number(v))
    case "integer":
    case "double":
      return (v) => (v === null || v === undefined ? null : typeof v === "bigint" ? Number(v) : Number(v))
    case "timestamp":
      return (v) => (v === null || v === undefined ? null : v instanceof Date ? v.getTime() : Number(v))
    case "date":
      return (v) => (v === null || v === undefined ? null : Math.floor((v as Date).getTime() / 86_400_000))
    case "binary":
      return (v) => (v === null || v === undefined ? null : new Uint8Array(v as Uint8Array))
    case "string":
      return (v) => (v === null || v === undefined ? null : typeof v === "string" ? v : String(v))
    case "array": {
      const e = fromDuck(t.elementType)
      return (v) => (v === null || v === undefined ? null : (v as ReadonlyArray<unknown>).map(e))
    }
    case "struct": {
      const fs = t.fields.map((f) => [f.name, fromDuck(f.dataType)] as const)
      return (v) => {
        if (v === null || v === undefined) return null
        const o = v as Record<string, unknown>
        return fs.map(([n, c]) => c(o[n]))
      }
    }
    case "map": {
      const kc = fromDuck(t.keyType)
      const vc = fromDuck(t.valueType)
      return (v) => {
        if (v === null || v === undefined) return null
        const out = new Map<unknown, unknown>()
        const entries = Array.isArray(v)
          ? (v as ReadonlyArray<{ key: unknown; value: unknown }>).map((e) => [e.key, e.value] as const)
          : Object.entries(v as object)
        for (const [k, x] of entries) out.set(kc(k), vc(x))
        return out
      }
    }
    default:
      return (v) => (v === undefined ? null : v)
  }
}

const toBigIntLong = (v: unknown): bigint => (typeof v === "bigint" ? v : BigInt(Math.trunc(v as number)))

/** Converts an internal value of Spark type `t` to a DuckDB value for parameters and appenders. */
export const toDuck = (t: T.DataType): ((v: unknown) => DuckDBValue) => {
  switch (t._tag) {
    case "long":
      return (v) => (v === null || v === undefined ? null : toBigIntLong(v))
    case "timestamp":
      return (v) =>
        v === null || v === undefined ? null : new DuckDBTimestampValue(BigInt(Math.round((v as number) * 1000)))
    case "date":
      return (v) => (v === null || v === undefined ? null : new DuckDBDateValue(v as number))
    case "binary":
      return (v) => (v === null || v === undefined ? null : new DuckDBBlobValue(v as Uint8Array))
    default:
      return (v) => (v === undefined ? null : (v as DuckDBValue))
  }
}

const appendValue = (t: T.DataType) => {
  const conv = toDuck(t)
  switch (t._tag) {
    case "boolean":
      return (a: AppenderLike, v: unknown) => (v === null ? a.appendNull() : a.appendBoolean(v as boolean))
    case "integer":
      return (a: AppenderLike, v: unknown) => (v === null ? a.appendNull() : a.appendInteger(v as number))
    case "long":
      return (a: AppenderLike, v: unknown) => (v === null ? a.appendNull() : a.appendBigInt(toBigIntLong(v)))
    case "double":
      return (a: AppenderLike, v: unknown) => (v === null ? a.appendNull() : a.appendDouble(v as number))
    case "string":
    case "null":
      return (a: AppenderLike, v: unknown) => (v === null ? a.appendNull() : a.appendVarchar(String(v)))
    default:
      return (a: AppenderLike, v: unknown) => (v === null ? a.appendNull() : a.appendValue(conv(v)))
  }
}

interface AppenderLike {
  appendNull(): void
  appendBoolean(v: boolean): void
  appendInteger(v: number): void
  appendBigInt(v: bigint): void
  appendDouble(v: number): void
  appendVarchar(v: string): void
  appendValue(v: DuckDBValue): void
}

const wrap = (raw: DuckDBConnection): Connection => ({
  raw,
  query: (sql, params = []) =>
    Effect.tryPromise({
      try: async () => {
        const reader = await raw.runAndReadAll(sql, params as Array<DuckDBValue>)
        const duck = reader.columnTypes()
        const types = duck.map(sparkTypeOf)
        const convs = types.map(fromDuck)
        const rowsJs = reader.getRowsJS()
        const rows = new Array<InternalRow>(rowsJs.length)
        for (let i = 0; i < rowsJs.length; i++) {
          const r = rowsJs[i]
          const out = new Array<unknown>(convs.length)
          for (let j = 0; j < convs.length; j++) out[j] = convs[j](r[j])
          rows[i] = out
        }
        return { columns: reader.columnNames(), types, duckTypes: duck.map((t) => t.toString()), rows }
      },
      catch: (cause) => new DuckDBFailure(sql, cause)
    }),
  execute: (sql, params = []) =>
    Effect.tryPromise({
      try: async () => {
        await raw.run(sql, params as Array<DuckDBValue>)
      },
      catch: (cause) => new DuckDBFailure(sql, cause)
    }),
  append: (table, schema, rows) =>
    Effect.tryPromise({
      try: async () => {
        const appender = await raw.createAppender(table)
        try {
          const appenders = schema.fields.map((f) => appendValue(f.dataType))
          const n = appenders.length
          const a = appender as unknown as AppenderLike
          for (let i = 0; i < rows.length; i++) {
            const r = rows[i]
            for (let j = 0; j < n; j++) appenders[j](a, r[j] === undefined ? null : r[j])
            appender.endRow()
          }
          appender.flushSync()
        } finally {
          appender.closeSync()
        }
      },
      catch: (cause) => new DuckDBFailure(`APPEND ${table}`, cause)
    })
})

/**
 * Opens a DuckDB database (`":memory:"` or a file path) and one connection, closed when the
 * scope closes.
 */
export const open = (path = ":memory:"): Effect.Effect<Connection, DuckDBFailure, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const instance = await DuckDBInstance.create(path)
        const connection = await instance.connect()
        return { instance, connection }
      },
      catch: (cause) => new DuckDBFailure(`OPEN ${path}`, cause)
    }),
    ({ instance, connection }) =>
      Effect.sync(() => {
        connection.closeSync()
        instance.closeSync()
      })
  ).pipe(Effect.map(({ connection }) => wrap(connection)))

/** Runs `f` with a fresh in-memory database, closed afterwards. */
export const withMemory = <A, E, R>(
  f: (c: Connection) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | DuckDBFailure, Exclude<R, Scope.Scope>> =>
  Effect.scoped(Effect.flatMap(open(":memory:"), f)) as never

/** Creates a table for `schema` (identifiers quoted) and appends `rows` to it. */
export const createTable = (
  c: Connection,
  table: string,
  schema: T.StructType,
  rows: ReadonlyArray<InternalRow>
): Effect.Effect<void, DuckDBFailure> =>
  Effect.andThen(
    c.execute(
      `CREATE OR REPLACE TABLE ${quoteIdentifier(table)} (${schema.fields
        .map((f) => `${quoteIdentifier(f.name)} ${duckTypeOf(f.dataType)}`)
        .join(", ")})`
    ),
    rows.length === 0 ? Effect.void : c.append(table, schema, rows)
  )
