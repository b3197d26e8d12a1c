/**
 * The Spark Connect client: one remote Spark session over gRPC.
 *
 * - `parseAddress` reads Spark's connection string, `sc://host[:port][/;key=value;…]` with the
 *   keys Spark's clients know (`token`, `user_id`, `session_id`, `use_ssl`, `user_agent`).
 * - `SparkConnectClient.make(address)` opens the channel (HTTP/2 gRPC through
 *   `@connectrpc/connect-node`), sends the bearer token on every call, keeps the session alive
 *   while it is idle and releases it when its scope closes.
 * - Every call is an Effect; gRPC failures become typed errors: Spark's `AnalysisException`s an
 *   `AnalysisError` with Spark's error class and message, everything else a `ConnectorError`
 *   (`retryable` when the server was unreachable).
 *
 * The transport sits behind `SparkConnectTransport`, an Effect service: tests and other
 * runtimes can provide a different one.
 *
 * @since 0.3.0
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf"
import { BinaryReader } from "@bufbuild/protobuf/wire"
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect"
import { Duration, Effect, type Scope } from "effect"
import { AnalysisError, ConnectorError } from "../core/Errors.ts"
import { CLIENT_TYPE, type ConnectAddress } from "./Address.ts"
import { SparkConnectTransport } from "./Transport.ts"
import {
  AnalyzePlanRequestSchema,
  type AnalyzePlanResponse,
  ConfigRequest_OperationSchema,
  ConfigRequestSchema,
  type ConfigResponse,
  type ExecutePlanResponse,
  ExecutePlanRequestSchema,
  type Plan,
  ReleaseSessionRequestSchema,
  SparkConnectService,
  UserContextSchema
} from "./gen/spark/connect/base_pb.ts"

export { type ConnectAddress, DEFAULT_PORT, parseAddress, redact } from "./Address.ts"
export { SparkConnectTransport }

/** `google.rpc.ErrorInfo` (reason, domain, metadata), decoded by hand: its .proto is not part of Spark's. */
interface ErrorInfo {
  readonly reason: string
  readonly metadata: ReadonlyMap<string, string>
}

const ERROR_INFO_TYPE = "google.rpc.ErrorInfo"

const decodeErrorInfo = (bytes: Uint8Array): ErrorInfo | undefined => {
  try {
    const reader = new BinaryReader(bytes)
    let reason = ""
    const metadata = new Map<string, string>()
    while (reader.pos < reader.len) {
      const [field, wireType] = reader.tag()
      if (field === 1 && wireType === 2) reason = reader.string()
      else if (field === 3 && wireType === 2) {
        const entry = new BinaryReader(reader.bytes())
        let k = ""
        let v = ""
        while (entry.pos < entry.len) {
          const [f, w] = entry.tag()
          if (f === 1 && w === 2) k = entry.string()
          else if (f === 2 && w === 2) v = entry.string()
          else entry.skip(w)
        }
        metadata.set(k, v)
      } else reader.skip(wireType)
    }
    return { reason, metadata }
  } catch {
    return undefined
  }
}

/** Spark's error class (from `ErrorInfo.metadata.errorClass`, or the `[CLASS]` prefix of the message). */
const errorClassOf = (info: ErrorInfo | undefined, message: string): string | undefined => {
  const fromInfo = info?.metadata.get("errorClass")
  if (fromInfo !== undefined && fromInfo.length > 0) return fromInfo
  const m = /^\[([A-Z0-9_.]+)\]/.exec(message)
  return m === null ? undefined : m[1]
}

const analysisReason = (errorClass: string | undefined): AnalysisError["reason"] => {
  const c = errorClass ?? ""
  if (c.startsWith("UNRESOLVED_COLUMN") || c.startsWith("UNRESOLVED_FIELD")) return "UnresolvedColumn"
  if (c.startsWith("AMBIGUOUS_REFERENCE") || c.startsWith("AMBIGUOUS_COLUMN")) return "AmbiguousReference"
  if (c.startsWith("DATATYPE_MISMATCH") || c.startsWith("CANNOT_UP_CAST") || c.startsWith("INCOMPATIBLE")) {
    return "DataTypeMismatch"
  }
  if (c.startsWith("TABLE_OR_VIEW_NOT_FOUND")) return "TableNotFound"
  if (c.startsWith("PATH_NOT_FOUND")) return "PathNotFound"
  if (c.includes("WATERMARK")) return "WatermarkRequired"
  if (c.includes("UNSUPPORTED") || c.includes("NOT_SUPPORTED") || c.startsWith("STREAMING_OUTPUT_MODE")) {
    return "UnsupportedOperation"
  }
  if (c.startsWith("UNABLE_TO_INFER_SCHEMA")) return "SchemaRequired"
  return "InvalidPlan"
}

/**
 * The error with every occurrence of `secret` (the session's token) replaced by `***`: a server
 * or a proxy may quote the request, its `authorization` header included, in its message. The
 * details are dropped from the cause when their bytes hold the secret.
 */
const scrubbed = (err: ConnectError, secret: string | undefined): ConnectError => {
  if (secret === undefined || secret.length === 0) return err
  const holds = (d: (typeof err.details)[number]): boolean =>
    "value" in d && d.value instanceof Uint8Array && new TextDecoder().decode(d.value).includes(secret)
  let inMetadata = false
  err.metadata.forEach((v) => {
    if (v.includes(secret)) inMetadata = true
  })
  if (!err.rawMessage.includes(secret) && !inMetadata && !err.details.some(holds)) return err
  const hide = (text: string): string => text.split(secret).join("***")
  const metadata = new Headers()
  err.metadata.forEach((v, k) => {
    metadata.set(k, hide(v))
  })
  const out = new ConnectError(hide(err.rawMessage), err.code, metadata)
  out.details = err.details.filter((d) => !holds(d))
  return out
}

/**
 * The typed error of a failed call: Spark's exception, or the transport's. `secret` (the
 * session's token) is hidden from the message and the cause.
 */
export const fromRpcError = (cause: unknown, what: string, secret?: string): AnalysisError | ConnectorError => {
  const err = scrubbed(ConnectError.from(cause), secret)
  const message = err.rawMessage
  if (err.code === Code.Unavailable || err.code === Code.DeadlineExceeded || err.code === Code.Aborted) {
    return new ConnectorError({
      connector: "spark-connect",
      domain: "external",
      retryable: true,
      message: `Spark Connect ${what} failed: the server is not reachable (${Code[err.code]}): ${message}`,
      cause: err
    })
  }
  if (err.code === Code.Unauthenticated || err.code === Code.PermissionDenied) {
    return new ConnectorError({
      connector: "spark-connect",
      domain: "user",
      retryable: false,
      message: `Spark Connect ${what} was refused (${Code[err.code]}): check the token of the sc:// address. ${message}`,
      cause: err
    })
  }
  let info: ErrorInfo | undefined
  for (const d of err.details) {
    if ("type" in d && d.type === ERROR_INFO_TYPE) info = decodeErrorInfo(d.value)
  }
  const errorClass = errorClassOf(info, message)
  const classes = info?.metadata.get("classes") ?? ""
  const isAnalysis =
    info?.reason === "org.apache.spark.sql.AnalysisException" ||
    classes.includes("org.apache.spark.sql.AnalysisException") ||
    classes.includes("org.apache.spark.sql.catalyst.parser.ParseException")
  if (isAnalysis) {
    return new AnalysisError({
      reason: analysisReason(errorClass),
      message,
      ...(errorClass === undefined ? {} : { errorClass })
    })
  }
  const sqlState = info?.metadata.get("sqlState")
  return new ConnectorError({
    connector: "spark-connect",
    // Spark's own failure of the query (a bad cast in ANSI mode, a missing file at run time) is
    // the user's to fix; an internal error of Spark or the transport is not.
    domain: errorClass !== undefined && !errorClass.startsWith("INTERNAL_ERROR") ? "user" : "external",
    retryable: false,
    message: `Spark Connect ${what} failed${info !== undefined ? ` (${info.reason})` : ""}: ${message}`,
    cause: err,
    ...(errorClass === undefined ? {} : { errorClass }),
    ...(sqlState === undefined || sqlState.length === 0 ? {} : { sqlState })
  })
}

/** The `analyze` oneof of an `AnalyzePlanRequest`, as a plain object. */
export type AnalyzeInit = NonNullable<MessageInitShape<typeof AnalyzePlanRequestSchema>["analyze"]>
/** The `op_type` oneof of a `Config` operation, as a plain object. */
export type ConfigInit = NonNullable<MessageInitShape<typeof ConfigRequest_OperationSchema>["opType"]>

/** One remote session's calls. */
export interface SparkConnectClient {
  readonly address: ConnectAddress
  /** The session id every call carries (Spark keys its remote session by it). */
  readonly sessionId: string
  /** `ExecutePlan`: every response of the call, in order (Arrow batches, schema, command results). */
  readonly execute: (plan: Plan) => Effect.Effect<ReadonlyArray<ExecutePlanResponse>, AnalysisError | ConnectorError>
  /**
   * `ExecutePlan` whose responses are handed to `onResponse` as they arrive (a long-running call
   * such as the listener bus); ends when the server ends the stream, fails like `execute`, and is
   * interrupted by interrupting the Effect.
   */
  readonly executeEach: (
    plan: Plan,
    onResponse: (response: ExecutePlanResponse) => Promise<void>
  ) => Effect.Effect<void, AnalysisError | ConnectorError>
  /** `AnalyzePlan` with one analysis (`{ case: "schema", value: … }`). */
  readonly analyze: (analyze: AnalyzeInit) => Effect.Effect<AnalyzePlanResponse, AnalysisError | ConnectorError>
  /** `Config` with one operation (`{ case: "set", value: { pairs } }`). */
  readonly config: (op: ConfigInit) => Effect.Effect<ConfigResponse, AnalysisError | ConnectorError>
}

export interface ClientOptions {
  /**
   * How often an idle session is touched (a cheap `AnalyzePlan spark_version`) so that the server
   * does not expire it and stop its streaming queries. Spark's session timeout defaults to 60 min.
   */
  readonly keepAliveInterval?: Duration.Input
}

const tryCall = <A>(what: string, f: (signal: AbortSignal) => Promise<A>, secret?: string) =>
  Effect.tryPromise({ try: f, catch: (cause) => fromRpcError(cause, what, secret) })

/**
 * Opens a client for a parsed address. The keep-alive fiber and the remote session are released
 * with the scope (`ReleaseSession`, best effort: a server that is gone has nothing to release).
 */
export const make = (
  address: ConnectAddress,
  options: ClientOptions = {}
): Effect.Effect<SparkConnectClient, never, Scope.Scope | SparkConnectTransport> =>
  Effect.gen(function* () {
    const transports = yield* SparkConnectTransport
    const auth: Interceptor = (next) => (req) => {
      if (address.token !== undefined) req.header.set("authorization", `Bearer ${address.token}`)
      req.header.set("user-agent", address.userAgent)
      return next(req)
    }
    const rpc = createClient(SparkConnectService, transports.make(address, [auth]))
    const call = <A>(what: string, f: (signal: AbortSignal) => Promise<A>) => tryCall(what, f, address.token)
    const sessionId = address.sessionId ?? crypto.randomUUID()
    const userContext = create(UserContextSchema, { userId: address.userId, userName: address.userId })
    const common = { sessionId, userContext, clientType: CLIENT_TYPE }

    const execute = (plan: Plan) =>
      call("ExecutePlan", async (signal) => {
        const out: Array<ExecutePlanResponse> = []
        const request = create(ExecutePlanRequestSchema, { ...common, plan, operationId: crypto.randomUUID() })
        for await (const response of rpc.executePlan(request, { signal })) out.push(response)
        return out
      })
    const executeEach = (plan: Plan, onResponse: (response: ExecutePlanResponse) => Promise<void>) =>
      call("ExecutePlan", async (signal) => {
        const request = create(ExecutePlanRequestSchema, { ...common, plan, operationId: crypto.randomUUID() })
        for await (const response of rpc.executePlan(request, { signal })) await onResponse(response)
      })
    const analyze = (which: AnalyzeInit) =>
      call("AnalyzePlan", (signal) =>
        rpc.analyzePlan(create(AnalyzePlanRequestSchema, { ...common, analyze: which }), { signal })
      )
    const config = (opType: ConfigInit) =>
      call("Config", (signal) => rpc.config(create(ConfigRequestSchema, { ...common, operation: { opType } }), { signal }))

    const interval = Duration.fromInputUnsafe(options.keepAliveInterval ?? "5 minutes")
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.sleep(interval).pipe(Effect.andThen(Effect.ignore(analyze({ case: "sparkVersion", value: {} }))))
      )
    )
    yield* Effect.addFinalizer(() =>
      Effect.ignore(
        call("ReleaseSession", (signal) =>
          rpc.releaseSession(create(ReleaseSessionRequestSchema, { ...common }), {
            signal,
            timeoutMs: 5_000
          })
        )
      )
    )
    return { address, sessionId, execute, executeEach, analyze, config }
  })
