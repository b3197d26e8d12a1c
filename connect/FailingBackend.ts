/**
 * A remote backend whose every call fails with one typed error: what a remote session gets when
 * its address does not parse, or when the backend cannot be loaded at all (its generated protocol
 * code is missing). The session still opens; its first action reports the error.
 *
 * Needs none of the generated protocol code.
 *
 * @since 0.3.0
 */
import { Effect } from "effect"
import type { ConnectorError } from "../core/Errors.ts"
import type { RemoteBackend } from "../structured/contracts/Remote.ts"

/** A backend for `address` (shown without its token) whose every call fails with `error`. */
export const failingBackend = (address: string, error: ConnectorError): RemoteBackend => {
  const fail = () => Effect.fail(error)
  return {
    address,
    execute: fail,
    schema: fail,
    explain: fail,
    write: fail,
    startQuery: fail,
    streams: { active: fail, get: fail, awaitAnyTermination: fail, resetTerminated: fail },
    conf: { get: fail, set: fail, unset: fail, getAll: fail },
    version: fail,
    sql: fail,
    listenersChanged: () => Effect.void
  }
}
