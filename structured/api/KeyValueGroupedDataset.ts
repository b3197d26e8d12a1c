/**
 * `KeyValueGroupedDataset<K, V>`: the result of `df.groupByKey(f, keySchema)` (Spark's
 * `KeyValueGroupedDataset`): rows of type `V` grouped by the key `f` computes, waiting for a
 * per-group operation — `mapGroupsWithState` / `flatMapGroupsWithState` (arbitrary state per key,
 * batch and streaming), `count` and `agg`, and on batch DataFrames `keys`, `mapGroups`,
 * `flatMapGroups`.
 *
 * Spark's typed key column is named `key` in `count`/`agg` results (Spark 3+, a struct for a
 * struct key), and `count()` names its column `count(1)`.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { GroupStateTimeout } from "tributary-streaming"
 *
 * // events: DataFrame<{ user: string; ts: Date }>
 * const sessions = events.groupByKey((r) => r.user, Schema.String).mapGroupsWithState(
 *   { timeout: GroupStateTimeout.ProcessingTimeTimeout, stateSchema: Schema.Number,
 *     outputSchema: Schema.Struct({ user: Schema.String, events: Schema.Number }) },
 *   (user, rows, state) => {
 *     const n = (state.getOption() ?? 0) + rows.length
 *     if (state.hasTimedOut) state.remove()
 *     else { state.update(n); state.setTimeoutDuration("1 minute") }
 *     return { user, events: n }
 *   })
 * // events.groupByKey((r) => r.user, Schema.String).count()   // { key, "count(1)" }
 * ```
 * @since 0.1.0
 */
import { Result, Schema } from "effect"
import { type Column, col } from "../../core/Column.ts"
import * as T from "../../core/DataType.ts"
import { AnalysisError } from "../../core/Errors.ts"
import * as E from "../../core/Expression.ts"
import * as F from "../../core/F.ts"
import * as Plan from "../../core/LogicalPlan.ts"
import { isStructSchema, structTypeOf } from "../../core/RowSchema.ts"
import type { DataFrame, MapRow } from "./DataFrame.ts"
import type { GroupState, GroupStateTimeout } from "../contracts/GroupState.ts"
import type { SelectRow, Simplify } from "./RowTypes.ts"
import * as TWS from "../contracts/StatefulProcessor.ts"

/**
 * Options of `mapGroupsWithState` (Spark's `mapGroupsWithState(timeoutConf, initialState)` with
 * the state and output encoders as Schemas).
 *
 * @since 0.1.0
 */
export interface MapGroupsWithStateOptions<K, SS extends Schema.Top, US extends Schema.Top> {
  /** Default `GroupStateTimeout.NoTimeout`. */
  readonly timeout?: GroupStateTimeout | undefined
  /** The state's schema (a struct, or a single value). */
  readonly stateSchema: SS
  /** The schema of what the function returns (a struct, or a single value: column `value`). */
  readonly outputSchema: US
  /** A batch DataFrame with columns `key` and `state`, applied in the first batch only. */
  readonly initialState?: DataFrame<{ key: K; state: SS["Type"] }> | undefined
}

/**
 * Options of `flatMapGroupsWithState`: those of `mapGroupsWithState` and the function's output
 * mode (`"append"` or `"update"`), checked against the query's.
 *
 * @since 0.1.0
 */
export interface FlatMapGroupsWithStateOptions<K, SS extends Schema.Top, US extends Schema.Top>
  extends MapGroupsWithStateOptions<K, SS, US> {
  readonly outputMode: "append" | "update"
}

const invalid = (message: string): AnalysisError => new AnalysisError({ reason: "InvalidArgument", message })

/** The column holding the key inside `count`/`agg` plans (Spark's `AppendColumns`). */
const KEY_COLUMN = "__groupByKey"

const TIMEOUTS: ReadonlyArray<string> = ["NoTimeout", "ProcessingTimeTimeout", "EventTimeTimeout"]

/** The row type of `keys()`: a struct key's object, or `{ value }` for a single value. */
export type KeyRow<K> = K extends Date | ReadonlyArray<unknown> | Uint8Array
  ? { value: K }
  : K extends Record<string, unknown>
    ? K
    : { value: K }

/**
 * Rows of type `V` grouped by a key of type `K` (`df.groupByKey(f, keySchema)`). Operations
 * build on `df` (the grouped DataFrame), `keyFn` and `keySchema`.
 *
 * @since 0.1.0
 */
export class KeyValueGroupedDataset<K, V> {
  /** The grouped DataFrame (its plan is the child of every operation here). */
  readonly df: DataFrame<V>
  /** The grouping function over the row objects. */
  readonly keyFn: (row: V) => K
  /** The key's Schema (`groupByKey(f, keySchema)`). */
  readonly keySchema: Schema.Top

  constructor(df: DataFrame<V>, keyFn: (row: V) => K, keySchema: Schema.Top) {
    this.df = df
    this.keyFn = keyFn
    this.keySchema = keySchema
  }

  /** The logical plan of the grouped rows. */
  get plan(): Plan.LogicalPlan {
    return this.df.plan
  }

  /**
   * Calls `f` once per key with the key's rows (a readonly array of row objects) and its
   * `GroupState`, and outputs what it returns, one row per call (Spark's `mapGroupsWithState`:
   * Update output mode only on a stream). On a batch DataFrame every key is called once with
   * no state.
   */
  mapGroupsWithState<SS extends Schema.Top, US extends Schema.Top>(
    options: MapGroupsWithStateOptions<K, SS, US>,
    f: (key: K, rows: ReadonlyArray<V>, state: GroupState<SS["Type"]>) => US["Type"]
  ): DataFrame<MapRow<US>> {
    return this.groupsWithState(options, "update", true, (k, rows, s) => [f(k as K, rows as ReadonlyArray<V>, s)])
  }

  /**
   * Calls `f` once per key with the key's rows and its `GroupState`, and outputs every row of
   * the iterable it returns (Spark's `flatMapGroupsWithState`). `outputMode` is the function's
   * output mode: without aggregations after it, it must equal the query's; with them, `append`.
   * The iterable is consumed before the state is saved, so a lazy generator may update the state.
   */
  flatMapGroupsWithState<SS extends Schema.Top, US extends Schema.Top>(
    options: FlatMapGroupsWithStateOptions<K, SS, US>,
    f: (key: K, rows: ReadonlyArray<V>, state: GroupState<SS["Type"]>) => Iterable<US["Type"]>
  ): DataFrame<MapRow<US>> {
    return this.groupsWithState(options, options.outputMode ?? "update", false, f as never)
  }

  private groupsWithState<S>(
    options: MapGroupsWithStateOptions<K, any, any>,
    outputMode: string,
    isMap: boolean,
    fn: (key: unknown, rows: ReadonlyArray<unknown>, state: any) => Iterable<unknown>
  ): DataFrame<S> {
    const keyType = structTypeOf(this.keySchema)
    const stateType = options.stateSchema === undefined ? undefined : structTypeOf(options.stateSchema)
    const outputType = options.outputSchema === undefined ? undefined : structTypeOf(options.outputSchema)
    const timeout = options.timeout ?? "NoTimeout"
    const initial = options.initialState
    const initialColumns = initial?.columns
    const error =
      keyType === undefined
        ? invalid("The key schema given to groupByKey has a part with no Spark type (functions, symbols, unions of different types).")
        : stateType === undefined
          ? invalid("The stateSchema of [flat]MapGroupsWithState is missing or has a part with no Spark type.")
          : outputType === undefined
            ? invalid("The outputSchema of [flat]MapGroupsWithState is missing or has a part with no Spark type.")
            : outputMode !== "append" && outputMode !== "update"
              ? // Spark's FlatMapGroupsWithState.apply refuses Complete mode at once
                invalid("The output mode of function should be append or update")
              : !TIMEOUTS.includes(timeout)
                ? invalid(
                    `Unknown timeout '${String(timeout)}': use GroupStateTimeout.NoTimeout, ProcessingTimeTimeout or EventTimeTimeout.`
                  )
                : initial !== undefined && (initial.buildError ?? undefined) !== undefined
                  ? initial.buildError
                  : initialColumns !== undefined && !(initialColumns.includes("key") && initialColumns.includes("state"))
                    ? invalid(
                        `The initial state of [flat]MapGroupsWithState needs the columns \`key\` and \`state\`; it has: ${initialColumns.join(", ")}.`
                      )
                    : undefined
    if (error !== undefined || keyType === undefined || stateType === undefined || outputType === undefined) {
      return this.df.derive<S>(this.df.plan, error)
    }
    const node: Plan.FlatMapGroupsWithState = {
      _tag: "FlatMapGroupsWithState",
      planId: Plan.newPlanId(),
      fn,
      keyFn: this.keyFn as (row: unknown) => unknown,
      keySchema: keyType,
      keyIsStruct: isStructSchema(this.keySchema),
      stateSchema: stateType,
      stateIsStruct: isStructSchema(options.stateSchema),
      outputSchema: outputType,
      outputIsStruct: isStructSchema(options.outputSchema),
      output: outputType.fields.map((fl) => E.attribute(fl.name, fl.dataType, fl.nullable)),
      isMapGroupsWithState: isMap,
      outputMode: outputMode as "append" | "update",
      timeout: timeout as Plan.FlatMapGroupsWithState["timeout"],
      initialState: initial?.plan,
      child: this.df.plan
    }
    return this.df.derive<S>(node)
  }

  /**
   * The number of rows per key, as `{ key, "count(1)" }` (Spark's typed `count()`); works on
   * batch and streaming DataFrames (a streaming aggregation).
   */
  count(): DataFrame<{ key: K; "count(1)": number }> {
    return this.agg(F.count("*")) as never
  }

  /**
   * Aggregates per key: `{ key, ...aggregates }` (Spark's `agg` on a KeyValueGroupedDataset).
   * The aggregate columns name the row's columns (`F.sum("amount")`).
   */
  agg<const Cs extends ReadonlyArray<Column<any, any>>>(...cols: Cs): DataFrame<Simplify<{ key: K } & SelectRow<V, Cs>>> {
    const keyed = this.withKeyColumn()
    if (keyed === undefined) return this.df.derive(this.df.plan, this.keyTypeError())
    const key = col(KEY_COLUMN)
    return this.df.derive({
      _tag: "Aggregate",
      planId: Plan.newPlanId(),
      groupingExpressions: [key.expr],
      aggregateExpressions: [key.as("key").expr, ...cols.map((c) => c.expr)],
      child: keyed
    })
  }

  /** The distinct keys (Spark's `keys`): a struct key's fields, or one column `value`. */
  keys(): DataFrame<KeyRow<K>> {
    const keyed = this.withKeyColumn()
    const keyType = structTypeOf(this.keySchema)
    if (keyed === undefined || keyType === undefined) return this.df.derive(this.df.plan, this.keyTypeError())
    const key = col(KEY_COLUMN)
    const projection = isStructSchema(this.keySchema)
      ? keyType.fields.map((fl) => key.getField(fl.name).as(fl.name).expr)
      : [key.as("value").expr]
    return this.df.derive({
      _tag: "Distinct",
      planId: Plan.newPlanId(),
      child: { _tag: "Project", planId: Plan.newPlanId(), projectList: projection, child: keyed }
    })
  }

  /**
   * Calls `f` once per key with its rows and outputs what it returns (Spark's `mapGroups`).
   * Batch DataFrames only: on a stream, use `mapGroupsWithState`.
   */
  mapGroups<US extends Schema.Top>(
    f: (key: K, rows: ReadonlyArray<V>) => US["Type"],
    outputSchema: US
  ): DataFrame<MapRow<US>> {
    return this.flatMapGroups((k, rows) => [f(k, rows)], outputSchema)
  }

  /**
   * Calls `f` once per key with its rows and outputs every row it returns (Spark's
   * `flatMapGroups`). Batch DataFrames only: on a stream, use `flatMapGroupsWithState`.
   */
  flatMapGroups<US extends Schema.Top>(
    f: (key: K, rows: ReadonlyArray<V>) => Iterable<US["Type"]>,
    outputSchema: US
  ): DataFrame<MapRow<US>> {
    if (this.df.isStreaming) {
      return this.df.derive(
        this.df.plan,
        new AnalysisError({
          reason: "UnsupportedOperation",
          message:
            "mapGroups/flatMapGroups keep no state across micro-batches: on a streaming DataFrame use mapGroupsWithState or flatMapGroupsWithState."
        })
      )
    }
    return this.groupsWithState(
      { stateSchema: NO_STATE, outputSchema },
      "update",
      false,
      (k, rows) => f(k as K, rows as ReadonlyArray<V>)
    )
  }

  /**
   * Spark's `transformWithState`: `processor` (an object with `outputSchema`, `init`,
   * `handleInputRows`, optionally `handleExpiredTimer`, `handleInitialState`, `close`; or a
   * `StatefulProcessor` subclass) runs once per key and batch with the key's rows, with state
   * variables, timers and TTL (structured/api/StatefulProcessor.ts). `initialState`, a grouped
   * batch DataFrame, is given to `handleInitialState` row by row in the first batch.
   */
  transformWithState<P extends TWS.StatefulProcessorLike<K, V, any, any>>(
    processor: P,
    options: {
      readonly timeMode: TWS.TimeMode
      readonly outputMode: "append" | "update"
      readonly initialState?: KeyValueGroupedDataset<K, any> | undefined
    }
  ): DataFrame<MapRow<P["outputSchema"]>> {
    const initial = options.initialState
    const built = TWS.transformWithState(this.df.plan, this.keyFn as (row: unknown) => unknown, this.keySchema, processor, {
      timeMode: options.timeMode,
      outputMode: options.outputMode,
      initialState:
        initial === undefined
          ? undefined
          : { plan: initial.df.plan, keyFn: initial.keyFn as (row: unknown) => unknown, buildError: initial.df.buildError }
    })
    return Result.isSuccess(built) ? this.df.derive(built.success) : this.df.derive(this.df.plan, built.failure)
  }

  /** The grouped rows with the key appended as one column (Spark's `AppendColumns`). */
  private withKeyColumn(): Plan.LogicalPlan | undefined {
    const keyType = structTypeOf(this.keySchema)
    if (keyType === undefined) return undefined
    const keyIsStruct = isStructSchema(this.keySchema)
    const keyField = keyIsStruct ? T.field(KEY_COLUMN, keyType, true) : T.field(KEY_COLUMN, keyType.fields[0].dataType, true)
    const input = this.df.schema
    const schema = T.struct([...input.fields, keyField])
    const keyFn = this.keyFn as (row: unknown) => unknown
    return {
      _tag: "MapElements",
      planId: Plan.newPlanId(),
      fn: (row: unknown) => ({ ...(row as object), [KEY_COLUMN]: keyFn(row) }),
      flat: false,
      schema,
      wrapValue: false,
      output: schema.fields.map((fl) => E.attribute(fl.name, fl.dataType, fl.nullable)),
      child: this.df.plan
    }
  }

  private keyTypeError(): AnalysisError {
    return invalid("The key schema given to groupByKey has a part with no Spark type (functions, symbols, unions of different types).")
  }
}

/** The state schema of `mapGroups`/`flatMapGroups`, which keep none. */
const NO_STATE: Schema.Top = Schema.Null
