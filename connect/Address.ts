/**
 * Spark Connect addresses: Spark's connection string, `sc://host[:port][/;key=value;…]`, with the
 * keys Spark's clients know (`token`, `user_id`, `session_id`, `use_ssl`, `user_agent`).
 *
 * This module needs none of the generated protocol code, so the root module can export it while
 * the backend itself (`RemoteSession.ts`) is loaded only when a remote session is opened.
 *
 * @since 0.3.0
 */
import { Result } from "effect"
import { ConnectorError } from "../core/Errors.ts"

/** The parts of an `sc://` connection string. */
export interface ConnectAddress {
  readonly host: string
  readonly port: number
  readonly token: string | undefined
  readonly userId: string
  readonly sessionId: string | undefined
  readonly useSsl: boolean
  readonly userAgent: string
}

/** Spark Connect's default port (`spark.connect.grpc.binding.port`). */
export const DEFAULT_PORT = 15002

/** The client type Spark sees in its UI and logs. */
export const CLIENT_TYPE = "tributary"

const invalidAddress = (address: string, why: string): ConnectorError =>
  new ConnectorError({
    connector: "spark-connect",
    domain: "user",
    retryable: false,
    message: `Invalid Spark Connect address '${redact(address)}': ${why}. Expected sc://host[:port][/;token=…;user_id=…;session_id=…;use_ssl=true].`
  })

/** The address with its token hidden, for messages and `uiWebUrl`-like displays. */
export const redact = (address: string): string => address.replace(/token=[^;]*/gi, "token=***")

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Parses Spark's connection string (the rules of Spark's `ChannelBuilder`). */
export const parseAddress = (address: string): Result.Result<ConnectAddress, ConnectorError> => {
  if (!address.startsWith("sc://")) return Result.fail(invalidAddress(address, "it must start with sc://"))
  const rest = address.slice("sc://".length)
  const slash = rest.indexOf("/")
  const authority = slash === -1 ? rest : rest.slice(0, slash)
  const tail = slash === -1 ? "" : rest.slice(slash + 1)
  if (authority.length === 0) return Result.fail(invalidAddress(address, "the host is missing"))
  let host = authority
  let port = DEFAULT_PORT
  const bracket = authority.startsWith("[") ? authority.indexOf("]") : -1
  const colon = authority.lastIndexOf(":")
  if (colon > bracket && colon !== -1) {
    host = authority.slice(0, colon)
    const p = authority.slice(colon + 1)
    if (!/^[0-9]+$/.test(p) || Number(p) < 1 || Number(p) > 65535) {
      return Result.fail(invalidAddress(address, `'${p}' is not a port`))
    }
    port = Number(p)
  }
  // Spark's format puts the parameters after "/;"; a bare path is not allowed.
  if (tail.length > 0 && !tail.startsWith(";")) {
    return Result.fail(invalidAddress(address, "parameters follow '/;' (a path is not allowed)"))
  }
  const params = new Map<string, string>()
  for (const part of tail.split(";")) {
    if (part.length === 0) continue
    const eq = part.indexOf("=")
    if (eq <= 0) return Result.fail(invalidAddress(address, `parameter '${part}' is not key=value`))
    const key = part.slice(0, eq).toLowerCase()
    let value: string
    try {
      value = decodeURIComponent(part.slice(eq + 1))
    } catch {
      // the value is not shown: it may be the token
      return Result.fail(invalidAddress(address, `the value of '${key}' is not valid percent-encoding`))
    }
    params.set(key, value)
  }
  const sessionId = params.get("session_id")
  if (sessionId !== undefined && !UUID.test(sessionId)) {
    return Result.fail(invalidAddress(address, "session_id must be a UUID"))
  }
  const ssl = params.get("use_ssl")
  if (ssl !== undefined && ssl !== "true" && ssl !== "false") {
    return Result.fail(invalidAddress(address, "use_ssl must be true or false"))
  }
  return Result.succeed({
    host,
    port,
    token: params.get("token"),
    userId: params.get("user_id") ?? "tributary",
    sessionId,
    useSsl: ssl === "true",
    userAgent: params.get("user_agent") ?? CLIENT_TYPE
  })
}
