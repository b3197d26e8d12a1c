/**
 * The Spark Connect backend: `Session.layer({ remote: "sc://host:15002" })` runs the same
 * DataFrame code on a Spark cluster. The composition root (`mod.ts`) calls `registerSparkConnect`.
 *
 * @since 0.3.0
 */
import { registerRemoteBackend } from "../structured/contracts/Remote.ts"
import { open } from "./RemoteSession.ts"

export { type ConnectAddress, parseAddress, redact, SparkConnectTransport } from "./Client.ts"

/** Registers the Spark Connect backend for `Session.layer({ remote })`. */
export const registerSparkConnect = (): void => registerRemoteBackend(open)
