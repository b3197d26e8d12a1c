/**
 * `Session`: Spark's `SparkSession` as an Effect service.
 *
 * `Session.layer(options)` builds one: its conf (Spark's keys), its temp views and memory
 * tables, the readers, and `spark.sql` over DuckDB. Releasing the layer releases everything
 * the session opened.
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { F, Session } from "tributary-streaming"
 *
 * const program = Effect.gen(function* () {
 *   const spark = yield* Session
 *   const df = spark.createDataFrame([{ k: "a", v: 1 }, { k: "a", v: 2 }], Schema.Struct({ k: Schema.String, v: Schema.Int }))
 *   yield* df.groupBy("k").agg(F.sum("v")).show()
 * })
 * await Effect.runPromise(program.pipe(Effect.provide(Session.layer())))
 * ```
 * @since 0.1.0
 */
import { Context, Effect, Layer, ManagedRuntime, Schema } from "effect"
import type { CheckpointFileSystem } from "../../core/CheckpointFileSystem.ts"
import * as T from "../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../core/Errors.ts"
import * as E from "../../core/Expression.ts"
import * as Plan from "../../core/LogicalPlan.ts"
import { type InternalRow, rowsToInternal } from "../../core/Row.ts"
import * as DuckDB from "../../state/DuckDB.ts"
import { StateStoreProviderService } from "../../state/StateStore.ts"
import * as StateStoreProviders from "../../state/StateStoreProviders.ts"
import * as QE from "../execution/QueryExecution.ts"
import { DataFrame } from "./DataFrame.ts"
import { DataFrameReader, type SchemaInput, toStructType } from "./DataFrameReader.ts"
import { DataStreamReader } from "./DataStreamReader.ts"
import * as Dashboard from "./Dashboard.ts"
import { display } from "./Display.ts"
import * as Manager from "./StreamingQueryManager.ts"
import { orLogged, type RemoteError, remoteFactory } from "../contracts/Remote.ts"
import type { Row } from "./RowTypes.ts"
import * as State from "../contracts/SessionState.ts"

/** Options of `Session.layer`. */
export interface SessionOptions {
  /** Spark conf entries (`spark.sql.shuffle.partitions`, `spark.sql.caseSensitive`, …). */
  readonly conf?: Readonly<Record<string, string | number | boolean>>
  /**
   * The state store provider for streaming queries, by name (`state/StateStoreProviders.ts`):
   * `"duckdb"` (default) or `"memory"` (file-based).
   */
  readonly stateStore?: StateStoreProviders.ProviderName
  /** Where queries started without `checkpointLocation` keep their checkpoints. */
  readonly checkpointRoot?: string
  /**
   * The file system checkpoints go through (advanced: tests wrap it to crash at exact points of
   * the commit protocol). Defaults to `node:fs`.
   */
  readonly checkpointFileSystem?: CheckpointFileSystem
  /** Serves the live dashboard on `port` (0: any free port) while the session lives; see `uiWebUrl`. */
  readonly ui?: Dashboard.UiOptions
  /**
   * Runs the session's DataFrames and streaming queries on a Spark cluster through Spark Connect:
   * `"sc://host:15002"`, with Spark's parameters after `/;` (`token=…` for bearer-token auth,
   * `user_id=…`, `session_id=…`, `use_ssl=true`). See docs/spark-connect.md.
   */
  readonly remote?: string
}

/** `spark.conf`: Spark's runtime configuration. Reading and changing it are actions. */
export interface RuntimeConfig {
  readonly get: (key: string, defaultValue?: string) => Effect.Effect<string | undefined>
  /**
   * Sets a conf. Spark's checks of the confs tributary reads fail with an `AnalysisError`
   * (Spark's `IllegalArgumentException`): `spark.sql.streaming.multipleWatermarkPolicy` must be
   * `min` or `max` (stored lower-cased), `spark.sql.shuffle.partitions` and
   * `spark.sql.streaming.minBatchesToRetain` integers.
   */
  readonly set: (key: string, value: string | number | boolean) => Effect.Effect<void, AnalysisError>
  readonly unset: (key: string) => Effect.Effect<void>
  readonly getAll: () => Effect.Effect<Readonly<Record<string, string>>>
}

export interface SessionShape {
  /** @internal the session's mutable state. */
  readonly state: State.SessionState
  /** The reader for bounded data. */
  readonly read: DataFrameReader
  /** The reader for streaming sources. */
  readonly readStream: DataStreamReader
  /** The session's streaming queries and listeners. */
  readonly streams: Manager.StreamingQueryManager
  /** The live dashboard's address (`Session.layer({ ui: { port } })`), or `undefined` without one. */
  readonly uiWebUrl: () => Effect.Effect<string | undefined>
  /** Spark's runtime conf. */
  readonly conf: RuntimeConfig
  /** A DataFrame of the given rows; `schema` types them (an Effect Schema) or names Spark types (DDL / StructType). */
  readonly createDataFrame: {
    <S extends Schema.Top>(rows: Iterable<S["Type"]>, schema: S): DataFrame<S["Type"]>
    (rows: Iterable<Row>, schema: T.StructType | string): DataFrame<Row>
  }
  /** `range(end)`, `range(start, end, step?)`: a column `id` of longs. */
  readonly range: (start: number, end?: number, step?: number) => DataFrame<{ id: number }>
  /** A temp view or a memory-sink table by name; an unknown name fails the first action. */
  readonly table: (name: string) => DataFrame<Row>
  /**
   * Runs DuckDB SQL over the session's temp views and memory tables (referenced by name); on a
   * remote session (`Session.layer({ remote })`), Spark SQL on Spark.
   */
  readonly sql: (query: string, args?: ReadonlyArray<unknown>) => Effect.Effect<DataFrame<Row>, AnalysisError | ConnectorError>
}

const localRelation = (schema: T.StructType, rows: ReadonlyArray<InternalRow>): Plan.LocalRelation => ({
  _tag: "LocalRelation",
  planId: Plan.newPlanId(),
  output: schema.fields.map((f) => E.attribute(f.name, f.dataType, f.nullable)),
  rows,
  isStreaming: false
})

const emptyWithError = (state: State.SessionState, message: string): DataFrame<any> =>
  new DataFrame(state, localRelation(T.struct([]), []), new AnalysisError({ reason: "InvalidArgument", message }))

/**
 * The query with its parameter markers (`?`, `$1`) replaced by `NULL` outside quotes and
 * comments: DuckDB's `getTableNames` finds no tables in a query that still has markers.
 */
const withoutParameters = (query: string): string => {
  let out = ""
  let i = 0
  while (i < query.length) {
    const ch = query[i]
    if (ch === "'" || ch === '"') {
      const end = query.indexOf(ch, i + 1)
      const stop = end === -1 ? query.length : end + 1
      out += query.slice(i, stop)
      i = stop
    } else if (ch === "-" && query[i + 1] === "-") {
      const end = query.indexOf("\n", i)
      const stop = end === -1 ? query.length : end
      out += query.slice(i, stop)
      i = stop
    } else if (ch === "/" && query[i + 1] === "*") {
      const end = query.indexOf("*/", i + 2)
      const stop = end === -1 ? query.length : end + 2
      out += query.slice(i, stop)
      i = stop
    } else if (ch === "?") {
      out += "NULL"
      i++
    } else if (ch === "$" && /[0-9]/.test(query[i + 1] ?? "")) {
      let j = i + 1
      while (j < query.length && /[0-9]/.test(query[j])) j++
      out += "NULL"
      i = j
    } else {
      out += ch
      i++
    }
  }
  return out
}

/**
 * `spark.conf` of a remote session: Spark's own conf. Reads and writes go to the server; a
 * failed call is reported on stderr and reads as unset, since `RuntimeConfig` has no error channel.
 */
const remoteConf = (state: State.SessionState): RuntimeConfig => {
  const remote = state.remote!
  const logged = <A>(effect: Effect.Effect<A, RemoteError>, fallback: A) => orLogged("spark.conf", effect, fallback)
  return {
    get: (key, defaultValue) => logged(Effect.map(remote.conf.get(key), (v) => v ?? defaultValue), defaultValue),
    set: (key, value) => logged(remote.conf.set(key, String(value)), undefined),
    unset: (key) => logged(remote.conf.unset(key), undefined),
    getAll: () => logged(remote.conf.getAll(), {})
  }
}

/**
 * Spark's `ConfigBuilder.checkValue` (and the int conversion) for the confs tributary reads: the
 * value to store, or the error Spark's `IllegalArgumentException` carries.
 */
const checkConfValue = (key: string, value: string): string | AnalysisError => {
  const invalid = (message: string) =>
    new AnalysisError({ reason: "InvalidArgument", errorClass: "INVALID_CONF_VALUE", message })
  // Spark's `ConfigHelpers.toNumber` for an int conf.
  const int = (): string | AnalysisError => {
    const n = Number(value.trim())
    return value.trim() === "" || !Number.isInteger(n) || n > 2147483647 || n < -2147483648
      ? invalid(`${key} should be int, but was ${value}`)
      : String(n)
  }
  switch (key) {
    case "spark.sql.streaming.multipleWatermarkPolicy": {
      const v = value.toLowerCase()
      return v === "min" || v === "max"
        ? v
        : invalid(
            `'${v}' in ${key} is invalid. Invalid value for 'spark.sql.streaming.multipleWatermarkPolicy'. Valid values are 'min' and 'max'`
          )
    }
    case "spark.sql.shuffle.partitions":
    case "spark.sql.streaming.minBatchesToRetain":
      return int()
    default:
      return value
  }
}

/** Builds a session's members over its state. */
export const makeShape = (state: State.SessionState): SessionShape => {
  const createDataFrame = (rows: Iterable<unknown>, schema: SchemaInput): DataFrame<any> => {
    const st = toStructType(schema)
    if (typeof st === "string") return emptyWithError(state, st)
    return new DataFrame(state, localRelation(st, rowsToInternal(st, rows)))
  }

  const table = (name: string): DataFrame<Row> => {
    const view = state.tempViews.get(name.toLowerCase())
    if (view !== undefined) return new DataFrame(state, view)
    // On a remote session, tables (memory sinks' among them) live on Spark: Spark resolves the name.
    if (state.remote !== undefined) return new DataFrame(state, State.tableRelation(name, []))
    const mem = State.lookupMemoryTable(state, name)
    if (mem !== undefined) {
      return new DataFrame(
        state,
        State.tableRelation(
          name,
          mem.schema.fields.map((f) => E.attribute(f.name, f.dataType, f.nullable))
        )
      )
    }
    return new DataFrame(
      state,
      localRelation(T.struct([]), []),
      new AnalysisError({
        reason: "TableNotFound",
        errorClass: "TABLE_OR_VIEW_NOT_FOUND",
        message: `[TABLE_OR_VIEW_NOT_FOUND] The table or view \`${name}\` cannot be found. Verify the spelling and correctness of the schema and catalog.`
      })
    )
  }

  const sql = (query: string, args: ReadonlyArray<unknown> = []) =>
    state.remote !== undefined
      ? // On a remote session it is Spark SQL, run by Spark.
        Effect.map(state.remote.sql(query, args), (plan) => new DataFrame<Row>(state, plan))
      : localSql(query, args)

  const localSql = (query: string, args: ReadonlyArray<unknown>) =>
    DuckDB.withMemory((c) =>
      Effect.gen(function* () {
        let referenced: ReadonlyArray<string> = []
        try {
          referenced = c.raw.getTableNames(args.length > 0 ? withoutParameters(query) : query, false)
        } catch (cause) {
          return yield* new AnalysisError({
            reason: "InvalidPlan",
            errorClass: "PARSE_SYNTAX_ERROR",
            message: `[PARSE_SYNTAX_ERROR] ${cause instanceof Error ? cause.message : String(cause)}`
          })
        }
        for (const name of referenced) {
          const df = table(name)
          if (df.buildError !== undefined) continue
          const { schema, rows } = yield* QE.run(state, df.plan)
          yield* DuckDB.createTable(c, name, schema, rows)
        }
        const result = yield* c.query(query, args)
        const schema = T.struct(result.columns.map((n, i) => T.field(n, result.types[i])))
        return new DataFrame<Row>(state, localRelation(schema, result.rows))
      })
    ).pipe(
      Effect.catchIf(
        (e): e is DuckDB.DuckDBFailure => e instanceof DuckDB.DuckDBFailure,
        (e) =>
          Effect.fail(
            new AnalysisError({
              reason: "InvalidPlan",
              message: `spark.sql failed in DuckDB: ${e.message}`
            })
          )
      )
    )

  const confOf = (): RuntimeConfig => (state.remote !== undefined ? remoteConf(state) : localConf())

  const localConf = (): RuntimeConfig => ({
    get: (key, defaultValue) => Effect.sync(() => state.conf.get(key) ?? defaultValue),
    set: (key, value) =>
      Effect.suspend(() => {
        const checked = checkConfValue(key, String(value))
        if (typeof checked !== "string") return Effect.fail(checked)
        state.conf.set(key, checked)
        return Effect.void
      }),
    unset: (key) =>
      Effect.sync(() => {
        state.conf.delete(key)
      }),
    getAll: () => Effect.sync(() => Object.fromEntries(state.conf))
  })

  const range = (start: number, end?: number, step = 1): DataFrame<{ id: number }> => {
    const [from, to] = end === undefined ? [0, start] : [start, end]
    const schema = T.struct([T.field("id", T.LongType, false)])
    if (step === 0) return emptyWithError(state, "[FAILED_FUNCTION_CALL] The step of range must not be 0.")
    const rows: Array<InternalRow> = []
    for (let i = from; step > 0 ? i < to : i > to; i += step) rows.push([i])
    return new DataFrame(state, localRelation(schema, rows))
  }

  return {
    state,
    read: new DataFrameReader(state),
    readStream: new DataStreamReader(state),
    streams: Manager.make(state),
    conf: confOf(),
    createDataFrame: createDataFrame as SessionShape["createDataFrame"],
    range,
    table,
    sql,
    uiWebUrl: () => Effect.sync(() => state.uiWebUrl)
  }
}

const SessionBase: Context.ServiceClass<Session, "tributary/Session", SessionShape> = Context.Service<
  Session,
  SessionShape
>()("tributary/Session")

/**
 * The session service. `yield* Session` inside `Effect.gen` gives `spark`.
 *
 * @since 0.1.0
 */
export class Session extends SessionBase {
  /** A session with the given options; everything it opens is closed when the layer is released. */
  static readonly layer = (options: SessionOptions = {}): Layer.Layer<Session> =>
    Session.layerWithProvider(options).pipe(Layer.provide(StateStoreProviders.layer(options.stateStore)))

  /** The session over whatever `StateStoreProviderService` is provided (`layer` provides the named one). */
  private static readonly layerWithProvider = (
    options: SessionOptions
  ): Layer.Layer<Session, never, StateStoreProviderService> =>
    Layer.effect(
      Session,
      Effect.gen(function* () {
        const conf: Record<string, string> = {}
        for (const [k, v] of Object.entries(options.conf ?? {})) conf[k] = String(v)
        const state = State.make(conf)
        state.checkpointRoot = options.checkpointRoot
        if (options.checkpointFileSystem !== undefined) state.checkpointFileSystem = options.checkpointFileSystem
        // The state store provider (the session's layer provides it) lives as long as the
        // session; its files close with it.
        state.stateStoreProvider = yield* StateStoreProviderService
        state.queries.scope = yield* Effect.scope
        if (options.remote !== undefined) {
          const open = remoteFactory()
          if (open === undefined) {
            return yield* Effect.die(
              new Error("Session.layer({ remote }) needs the Spark Connect backend: import from \"tributary\" (mod.ts registers it).")
            )
          }
          state.remote = yield* open(options.remote, conf, {
            memorySources: state.memorySources,
            tableFormat: state.tableFormat,
            listeners: () => state.queries.listeners
          })
        }
        // A port that cannot be had is a configuration mistake: the session does not start.
        if (options.ui !== undefined) state.uiWebUrl = yield* Effect.orDie(Dashboard.serve(state, options.ui))
        // Releasing the session stops its queries (their fibers live in this scope) and forgets them.
        yield* Effect.addFinalizer(() =>
          Effect.forEach([...state.queries.active.values()], (q) => q.stop(), { discard: true }).pipe(
            // ... and its DStream StreamingContexts.
            Effect.andThen(Effect.forEach([...state.streamingContexts], (c) => c.stop(), { discard: true })),
            Effect.andThen(
              Effect.sync(() => {
                state.queries.scope = undefined
              })
            )
          )
        )
        return makeShape(state)
      })
    )

  /**
   * The Promise facade for notebooks and scripts: builds a session and returns it with `run`
   * (runs any action or program that needs the session, as a Promise) and `close` (releases
   * the session: stops its queries, closes its files).
   *
   * @example
   * ```ts
   * const spark = await Session.open()
   * const df = spark.createDataFrame([{ a: 1 }], Schema.Struct({ a: Schema.Int }))
   * console.log(await spark.run(df.collect()))   // [{ a: 1 }]
   * await spark.close()
   * ```
   */
  static readonly open = async (options: SessionOptions = {}): Promise<OpenSession> => {
    const runtime = ManagedRuntime.make(Session.layer(options))
    const shape = await runtime.runPromise(Effect.gen(function* () {
      return yield* Session
    }))
    const facade: OpenSession = Object.assign(Object.create(shape) as SessionShape, {
      run: <A, E>(effect: Effect.Effect<A, E, Session>): Promise<A> => runtime.runPromise(effect),
      display,
      close: (): Promise<void> => runtime.dispose()
    })
    return facade
  }
}

/**
 * A session opened with `Session.open()`: the session itself, plus `run` and `close`.
 *
 * @since 0.1.0
 */
export interface OpenSession extends SessionShape {
  /** Runs an action (or any program needing the session) and resolves with its value; rejects with its typed error. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, Session>) => Promise<A>
  /**
   * Shows a DataFrame (its table), a streaming query (its live card) or any value in the notebook
   * while the cell runs (`await spark.display(df)`); outside a kernel, prints its text form. Unlike
   * a cell's value, an awaited display is never dropped by `jupyter nbconvert --execute`.
   */
  readonly display: (value: unknown) => Promise<void>
  /** Releases the session: stops its queries and StreamingContexts, closes its files. */
  readonly close: () => Promise<void>
}

export { ConnectorError }
