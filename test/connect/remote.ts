/**
 * The test Spark Connect server's address (`sc://…`, with its token when it has one): given by
 * `TRIBUTARY_SPARK_REMOTE`, or started by test/connect/globalSetup.ts for the run.
 */
import { inject } from "vitest"

export const remoteAddress = (): string => {
  const address = process.env.TRIBUTARY_SPARK_REMOTE ?? inject("sparkRemote")
  if (address === undefined || address === "") {
    throw new Error("no Spark Connect server: run through vitest (test/connect/globalSetup.ts) or set TRIBUTARY_SPARK_REMOTE")
  }
  return address
}

/** The address with another token (or none): for the authentication tests. */
export const withToken = (address: string, token: string | undefined): string => {
  const base = address.replace(/\/;.*$/, "")
  return token === undefined ? base : `${base}/;token=${token}`
}
