/**
 * A minimal Spark Connect client for tests: runs one relation as the plan's root and gathers the
 * response's schema and Arrow chunks. The real client lives in connect/Client.ts; this one
 * exists so the codec's tests talk to a real server without depending on it.
 */
import { create } from "@bufbuild/protobuf"
import { type Client, createClient } from "@connectrpc/connect"
import { createGrpcTransport } from "@connectrpc/connect-node"
import { inject } from "vitest"
import {
  ExecutePlanRequestSchema,
  PlanSchema,
  SparkConnectService,
  UserContextSchema
} from "../../connect/gen/spark/connect/base_pb.ts"
import { Expression_ExpressionStringSchema, ExpressionSchema } from "../../connect/gen/spark/connect/expressions_pb.ts"
import {
  LocalRelationSchema,
  ProjectSchema,
  type Relation,
  RelationSchema,
  SQLSchema
} from "../../connect/gen/spark/connect/relations_pb.ts"
import type { DataType } from "../../connect/gen/spark/connect/types_pb.ts"

/** The `sc://host:port` of the shared test server. */
export const sparkRemote = (): string => process.env.TRIBUTARY_SPARK_REMOTE ?? inject("sparkRemote")

export interface RawClient {
  readonly client: Client<typeof SparkConnectService>
  readonly sessionId: string
}

/**
 * A client with its own session on the server at `remote` (`sc://host:port[/;token=…]`); a token
 * is sent as a bearer `authorization` header on every call.
 */
export const rawClient = (remote: string): RawClient => {
  const m = /^sc:\/\/([^:/;]+):(\d+)\/?(.*)$/.exec(remote)
  if (m === null) throw new Error(`not a Spark Connect address: ${remote.replace(/token=[^;]*/g, "token=***")}`)
  const token = /(?:^|;)token=([^;]*)/.exec(m[3])?.[1]
  const transport = createGrpcTransport({
    baseUrl: `http://${m[1]}:${m[2]}`,
    interceptors:
      token === undefined
        ? []
        : [
            (next) => (req) => {
              req.header.set("authorization", `Bearer ${decodeURIComponent(token)}`)
              return next(req)
            }
          ]
  })
  return { client: createClient(SparkConnectService, transport), sessionId: crypto.randomUUID() }
}

export interface RawResult {
  /** `ExecutePlanResponse.schema`, when the server sent one. */
  readonly schema: DataType | undefined
  /** Every `arrow_batch.data`, in order. */
  readonly chunks: ReadonlyArray<Uint8Array>
}

/** Runs `relation` as the plan's root and collects the result. */
export const execute = async (c: RawClient, relation: Relation): Promise<RawResult> => {
  const req = create(ExecutePlanRequestSchema, {
    sessionId: c.sessionId,
    userContext: create(UserContextSchema, { userId: "tributary-test" }),
    plan: create(PlanSchema, { opType: { case: "root", value: relation } })
  })
  let schema: DataType | undefined
  const chunks: Array<Uint8Array> = []
  for await (const r of c.client.executePlan(req)) {
    if (r.schema !== undefined) schema = r.schema
    if (r.responseType.case === "arrowBatch") chunks.push(r.responseType.value.data)
  }
  return { schema, chunks }
}

/** A `sql` relation. */
export const sqlRelation = (query: string): Relation =>
  create(RelationSchema, { relType: { case: "sql", value: create(SQLSchema, { query }) } })

/** A `LocalRelation` with Arrow `data` and a DDL `schema`. */
export const localRelation = (data: Uint8Array, schema: string): Relation =>
  create(RelationSchema, {
    relType: { case: "localRelation", value: create(LocalRelationSchema, { data, schema }) }
  })

/** `input.selectExpr(...expressions)`: a `Project` of SQL expression strings. */
export const selectExpr = (input: Relation, ...expressions: ReadonlyArray<string>): Relation =>
  create(RelationSchema, {
    relType: {
      case: "project",
      value: create(ProjectSchema, {
        input,
        expressions: expressions.map((expression) =>
          create(ExpressionSchema, {
            exprType: {
              case: "expressionString",
              value: create(Expression_ExpressionStringSchema, { expression })
            }
          })
        )
      })
    }
  })
