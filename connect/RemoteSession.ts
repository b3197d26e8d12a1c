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
import type * as T from "../core/DataType.ts"
import { AnalysisError, type ConnectorError } from "../core/Errors.ts"
import type { LogicalPlan } from "../core/LogicalPlan.ts"
import type { RemoteBackend, RemoteFactory, RemoteResult } from "../structured/api/Remote.ts"
import { decodeBatches } from "./Arrow.ts"
import * as Client from "./Client.ts"
import { AnalyzePlanRequest_Explain_ExplainMode, type Plan, PlanSchema } from "./gen/spark/connect/base_pb.ts"
import type { Relation } from "./gen/spark/connect/relations_pb.ts"
import { makeStreams, startQuery } from "./RemoteStreaming.ts"
import { type TranslateContext, translatePlan } from "./Translate.ts"
import { fromSparkSchema } from "./Types.ts"

const rootPlan = (relation: Relation): Plan => create(PlanSchema, { opType: { case: "root", value: relation } })

/** The backend over an open client. */
export const backend = (client: Client.SparkConnectClient, address: string, session: TranslateContext): RemoteBackend => {
  const translated = (plan: LogicalPlan) => Effect.fromResult(translatePlan(plan, session))

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
    startQuery: (plan, spec) => Effect.flatMap(translated(plan), (relation) => startQuery(client, relation, spec)),
    streams: makeStreams(client),
    conf,
    version: () =>
      Effect.map(client.analyze({ case: "sparkVersion", value: {} }), (r) =>
        r.result.case === "sparkVersion" ? r.result.value.version : ""
      )
  }
}

/** A backend whose every call fails with `error` (an address that does not parse): typed, not a crash. */
const failing = (address: string, error: ConnectorError): RemoteBackend => {
  const fail = () => Effect.fail(error)
  return {
    address,
    execute: fail,
    schema: fail,
    explain: fail,
    startQuery: fail,
    streams: { active: fail, get: fail, awaitAnyTermination: fail, resetTerminated: fail },
    conf: { get: fail, set: fail, unset: fail, getAll: fail },
    version: fail
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
    if (Result.isFailure(parsed)) return failing(shown, parsed.failure)
    const client = yield* Client.make(parsed.success).pipe(Effect.provide(Client.SparkConnectTransport.node))
    const remote = backend(client, shown, session)
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
