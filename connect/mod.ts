/**
 * The Spark Connect backend: `Session.layer({ remote: "sc://host:15002" })` runs the same
 * DataFrame code on a Spark cluster. The composition root (`mod.ts`) calls `registerSparkConnect`.
 *
 * The backend is loaded only when a remote session is opened: its protocol code is generated from
 * Spark's `.proto` files (`npm run spark-connect -- proto`, which needs Java and Maven; the
 * published package ships it), and the local engine must load and run without it. When it cannot
 * be loaded, the remote session still opens and its first action fails with a `ConnectorError`
 * that names the command generating it.
 *
 * @since 0.3.0
 */
import { Effect } from "effect"
import { ConnectorError } from "../core/Errors.ts"
import { type RemoteFactory, registerRemoteBackend } from "../structured/contracts/Remote.ts"
import { redact } from "./Address.ts"
import { failingBackend } from "./FailingBackend.ts"

export { type ConnectAddress, parseAddress, redact } from "./Address.ts"
export { SparkConnectTransport } from "./Transport.ts"

/** The command that generates the protocol code in a checkout of the repository. */
export const GENERATE_PROTOCOL_COMMAND = "npm run spark-connect -- proto"

/** What loading the backend module gives: its factory. */
export interface BackendModule {
  readonly open: RemoteFactory
}

/** Whether `cause` (a failed dynamic import) says the generated protocol code is missing. */
const isMissingProtocolCode = (cause: unknown): boolean => {
  const message = cause instanceof Error ? cause.message : String(cause)
  const code = typeof cause === "object" && cause !== null ? (cause as { code?: unknown }).code : undefined
  return (
    /[/\\]gen[/\\]spark[/\\]connect[/\\]/.test(message) ||
    (code === "ERR_MODULE_NOT_FOUND" && /[/\\]connect[/\\]gen/.test(message))
  )
}

const loadFailure = (cause: unknown): ConnectorError =>
  isMissingProtocolCode(cause)
    ? new ConnectorError({
        connector: "spark-connect",
        domain: "user",
        retryable: false,
        message:
          "The Spark Connect backend cannot load: its protocol code (connect/gen/) has not been generated. " +
          `Run \`${GENERATE_PROTOCOL_COMMAND}\` in the tributary checkout (it needs Java 17 and Maven, and fetches ` +
          "Spark's jars from Maven Central); the published package already includes it. The local engine does not need it."
      })
    : new ConnectorError({
        connector: "spark-connect",
        domain: "internal",
        retryable: false,
        message: `The Spark Connect backend cannot load: ${cause instanceof Error ? cause.message : String(cause)}`
      })

/**
 * A remote factory that loads the backend with `load` when the first remote session opens (and
 * reuses it after), or gives a backend failing with a typed error when it cannot be loaded.
 */
export const lazyBackend = (load: () => Promise<BackendModule>): RemoteFactory => {
  let loaded: Promise<BackendModule> | undefined
  return (address, conf, session) =>
    Effect.tryPromise({
      try: () => {
        loaded ??= load()
        return loaded
      },
      catch: (cause) => {
        loaded = undefined
        return loadFailure(cause)
      }
    }).pipe(
      Effect.matchEffect({
        onFailure: (error) => Effect.succeed(failingBackend(redact(address), error)),
        onSuccess: (backend) => backend.open(address, conf, session)
      })
    )
}

/** Registers the Spark Connect backend for `Session.layer({ remote })`, loaded on first use. */
export const registerSparkConnect = (): void => registerRemoteBackend(lazyBackend(() => import("./RemoteSession.ts")))
