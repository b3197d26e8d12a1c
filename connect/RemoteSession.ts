/**
 * The Spark Connect backend of a remote session (`Session.layer({ remote: "sc://…" })`): the
 * `RemoteBackend` that `structured/` runs actions and streaming queries through.
 *
 * An action translates the DataFrame's plan (`Translate.ts`; what cannot cross fails here,
 * before anything is sent), runs it with `ExecutePlan` and decodes the Arrow batches into rows
 * of the schema Spark reports (`Arrow.ts`, `Types.ts`). Streaming queries are
 * `RemoteStreaming.ts`'s.
 *
 * @since 0.3.0
 */
import { create } from "@bufbuild/protobuf"
import { Effect, Result } from "effect"
import * as T from "../core/DataType.ts"
import { AnalysisError, type ConnectorError } from "../core/Errors.ts"
import * as E from "../core/Expression.ts"
import { type LogicalPlan, newPlanId } from "../core/LogicalPlan.ts"
import {
  REMOTE_RELATION_FORMAT,
  type RemoteBackend,
  type RemoteBatchWriteSpec,
  type RemoteFactory,
  type RemoteResult
} from "../structured/contracts/Remote.ts"
import type { StreamingQueryListener } from "../structured/contracts/StreamingQueryListener.ts"
import { decodeBatches } from "./Arrow.ts"
import * as Client from "./Client.ts"
import { failingBackend } from "./FailingBackend.ts"
import { AnalyzePlanRequest_Explain_ExplainMode, type Plan, PlanSchema } from "./gen/spark/connect/base_pb.ts"
import { CommandSchema, WriteOperation_SaveMode, WriteOperationSchema } from "./gen/spark/connect/commands_pb.ts"
import type { Expression } from "./gen/spark/connect/expressions_pb.ts"
import { type Relation, RelationSchema } from "./gen/spark/connect/relations_pb.ts"
import { dispatchStarted, type ListenerBus, makeListenerBus } from "./RemoteListeners.ts"
import { makeStreams, startQuery } from "./RemoteStreaming.ts"
import { type TranslateContext, translateExpression, translatePlan } from "./Translate.ts"
import { fromSparkSchema } from "./Types.ts"

const rootPlan = (relation: Relation): Plan => create(PlanSchema, { opType: { case: "root", value: relation } })

/** pyspark's `DataFrameWriter.mode` as Spark Connect's `WriteOperation.SaveMode`. */
const SAVE_MODES = {
  append: WriteOperation_SaveMode.APPEND,
  overwrite: WriteOperation_SaveMode.OVERWRITE,
  error: WriteOperation_SaveMode.ERROR_IF_EXISTS,
  ignore: WriteOperation_SaveMode.IGNORE
} as const

/**
 * `df.write…save(path)` as Spark Connect's `WriteOperation` command (as pyspark's Connect
 * `DataFrameWriter` builds it): the relation, the format as `source`, the path as `save_type`
 * (none when the options carry it or the format needs none), the mode, options and partitioning.
 */
export const writeOperationCommand = (relation: Relation, spec: RemoteBatchWriteSpec) =>
  create(CommandSchema, {
    commandType: {
      case: "writeOperation",
      value: create(WriteOperationSchema, {
        input: relation,
        source: spec.format,
        saveType: spec.path === undefined ? { case: undefined } : { case: "path", value: spec.path },
        mode: SAVE_MODES[spec.mode],
        options: { ...spec.options },
        partitioningColumns: [...spec.partitionColumns]
      })
    }
  })

const INT_MIN = -2147483648
const INT_MAX = 2147483647

/** A positional `spark.sql` argument as a literal of the Spark type its JavaScript value has. */
const argumentLiteral = (value: unknown, position: number): Result.Result<E.Literal, AnalysisError> => {
  if (value === null || value === undefined) return Result.succeed(E.literal(null, T.NullType))
  if (typeof value === "boolean") return Result.succeed(E.literal(value, T.BooleanType))
  if (typeof value === "string") return Result.succeed(E.literal(value, T.StringType))
  if (typeof value === "number") {
    if (!Number.isInteger(value)) return Result.succeed(E.literal(value, T.DoubleType))
    return Result.succeed(E.literal(value, value >= INT_MIN && value <= INT_MAX ? T.IntegerType : T.LongType))
  }
  if (typeof value === "bigint" && value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)) {
    return Result.succeed(E.literal(Number(value), T.LongType))
  }
  if (value instanceof Date) return Result.succeed(E.literal(value.getTime(), T.TimestampType))
  if (value instanceof Uint8Array) return Result.succeed(E.literal(value, T.BinaryType))
  return Result.fail(
    new AnalysisError({
      reason: "InvalidArgument",
      message: `spark.sql argument ${position + 1} (${typeof value}) has no Spark literal type: give a string, number, boolean, Date, Uint8Array or null.`
    })
  )
}

/** The backend over an open client. */
export const backend = (
  client: Client.SparkConnectClient,
  address: string,
  view: TranslateContext,
  bus: ListenerBus,
  listeners: () => ReadonlyArray<StreamingQueryListener>
): RemoteBackend => {
  // Relations Spark handed back for `spark.sql`, by the id their plans carry.
  const remoteRelations = new Map<string, Relation>()
  const session: TranslateContext = { ...view, remoteRelations }
  const translated = (plan: LogicalPlan) => Effect.fromResult(translatePlan(plan, session))

  const sql = (query: string, args: ReadonlyArray<unknown>): Effect.Effect<LogicalPlan, AnalysisError | ConnectorError> =>
    Effect.gen(function* () {
      const posArguments: Array<Expression> = []
      for (let i = 0; i < args.length; i++) {
        const literal = yield* Effect.fromResult(argumentLiteral(args[i], i))
        posArguments.push(yield* Effect.fromResult(translateExpression(literal, session)))
      }
      const input = create(RelationSchema, { relType: { case: "sql", value: { query, posArguments } } })
      // Spark's `SqlCommand`: the statement runs now (DDL and DML take effect here, as in Spark);
      // the answer is the relation of its result, which later actions send back.
      const command = create(CommandSchema, { commandType: { case: "sqlCommand", value: { input } } })
      const responses = yield* client.execute(create(PlanSchema, { opType: { case: "command", value: command } }))
      let relation: Relation | undefined
      for (const r of responses) if (r.responseType.case === "sqlCommandResult") relation = r.responseType.value.relation
      if (relation === undefined) {
        return yield* new AnalysisError({ reason: "InvalidPlan", message: "Spark Connect answered spark.sql without a relation." })
      }
      const id = crypto.randomUUID()
      remoteRelations.set(id, relation)
      const plan: LogicalPlan = {
        _tag: "DataSourceRelation",
        planId: newPlanId(),
        format: REMOTE_RELATION_FORMAT,
        paths: [],
        options: { id },
        output: []
      }
      return plan
    })

  const execute = (plan: LogicalPlan): Effect.Effect<RemoteResult, AnalysisError | ConnectorError> =>
    Effect.gen(function* () {
      const relation = yield* translated(plan)
      const responses = yield* client.execute(rootPlan(relation))
      const batches: Array<Uint8Array> = []
      let schema: T.StructType | undefined
      for (const r of responses) {
        if (r.responseType.case === "arrowBatch") batches.push(r.responseType.value.data)
        if (r.schema !== undefined && schema === undefined) schema = yield* Effect.fromResult(fromSparkSchema(r.schema))
      }
      const decoded = yield* Effect.fromResult(decodeBatches(batches, schema))
      return decoded
    })

  const write = (plan: LogicalPlan, spec: RemoteBatchWriteSpec) =>
    Effect.gen(function* () {
      const relation = yield* translated(plan)
      const command = writeOperationCommand(relation, spec)
      yield* client.execute(create(PlanSchema, { opType: { case: "command", value: command } }))
    })

  const schema = (plan: LogicalPlan) =>
    Effect.gen(function* () {
      const relation = yield* translated(plan)
      const response = yield* client.analyze({ case: "schema", value: { plan: rootPlan(relation) } })
      const result = response.result
      if (result.case !== "schema" || result.value.schema === undefined) {
        return yield* new AnalysisError({ reason: "InvalidPlan", message: "Spark Connect answered without a schema." })
      }
      return yield* Effect.fromResult(fromSparkSchema(result.value.schema))
    })

  const explain = (plan: LogicalPlan, extended: boolean) =>
    Effect.gen(function* () {
      const relation = yield* translated(plan)
      const response = yield* client.analyze({
        case: "explain",
        value: {
          plan: rootPlan(relation),
          explainMode: extended
            ? AnalyzePlanRequest_Explain_ExplainMode.EXTENDED
            : AnalyzePlanRequest_Explain_ExplainMode.SIMPLE
        }
      })
      return response.result.case === "explain" ? response.result.value.explainString : ""
    })

  const conf: RemoteBackend["conf"] = {
    get: (key) =>
      Effect.map(client.config({ case: "getOption", value: { keys: [key] } }), (r) => {
        const pair = r.pairs.find((p) => p.key === key)
        return pair?.value
      }),
    set: (key, value) => Effect.asVoid(client.config({ case: "set", value: { pairs: [{ key, value }] } })),
    unset: (key) => Effect.asVoid(client.config({ case: "unset", value: { keys: [key] } })),
    getAll: () =>
      Effect.map(client.config({ case: "getAll", value: {} }), (r) => {
        const out: Record<string, string> = {}
        for (const p of r.pairs) if (p.value !== undefined) out[p.key] = p.value
        return out
      })
  }

  return {
    address,
    execute,
    schema,
    explain,
    write,
    startQuery: (plan, spec) =>
      Effect.gen(function* () {
        const relation = yield* translated(plan)
        const query = yield* startQuery(client, relation, spec)
        // Spark sends the started event with the start's answer; the bus carries the others.
        const event = query.startedEvent ?? { id: query.id, runId: query.runId, name: query.name, timestamp: "" }
        yield* dispatchStarted(listeners(), event)
        return query
      }),
    listenersChanged: bus.sync,
    streams: makeStreams(client),
    conf,
    sql,
    version: () =>
      Effect.map(client.analyze({ case: "sparkVersion", value: {} }), (r) =>
        r.result.case === "sparkVersion" ? r.result.value.version : ""
      )
  }
}

/** Set on every remote session unless the session's conf says otherwise. */
export const REMOTE_DEFAULTS: Readonly<Record<string, string>> = {
  "spark.sql.ansi.enabled": "false",
  "spark.sql.session.timeZone": "UTC"
}

/**
 * The factory `mod.ts` registers: parses the address, opens the client (released with the
 * session's scope) and applies the session's conf entries on the remote session.
 */
export const open: RemoteFactory = (address, conf, session) =>
  Effect.gen(function* () {
    const parsed = Client.parseAddress(address)
    const shown = Client.redact(address)
    if (Result.isFailure(parsed)) return failingBackend(shown, parsed.failure)
    const client = yield* Client.make(parsed.success).pipe(Effect.provide(Client.SparkConnectTransport.node))
    const bus = makeListenerBus(client, yield* Effect.scope, session.listeners)
    const remote = backend(client, shown, session, bus, session.listeners)
    // Conf given to Session.layer goes to Spark, over the two defaults the local engine's
    // semantics rest on (so the same code gives the same rows): non-ANSI behaviour (Spark 4
    // defaults to ANSI) and UTC session time. The layer has no error channel and a server that is
    // not up yet must not stop the session from opening: a refused entry is logged.
    const entries = Object.entries({ ...REMOTE_DEFAULTS, ...conf })
    {
      yield* client
        .config({ case: "set", value: { pairs: entries.map(([key, value]) => ({ key, value })) } })
        .pipe(Effect.catch((e) => Effect.logWarning(`Spark Connect: the session conf was not applied: ${e.message}`)))
    }
    return remote
  })
