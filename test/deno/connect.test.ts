/**
 * Deno smoke test of the Spark Connect backend: starts a real Spark Connect server (Spark 4.2,
 * `scripts/spark-connect.sh`, with a bearer token) unless `TRIBUTARY_SPARK_REMOTE` names one,
 * then runs a DataFrame built with the public API on it through `Session.layer({ remote })`
 * (gRPC over `node:http2` in Deno, Arrow results decoded into typed rows).
 */
import assert from "node:assert/strict"
import { execFileSync } from "node:child_process"
import { Effect, Schema } from "effect"
import { F, Session } from "../../mod.ts"

const ROOT = new URL("../..", import.meta.url).pathname
const given = Deno.env.get("TRIBUTARY_SPARK_REMOTE")
const name = `deno-${Deno.pid}`

const script = (args: ReadonlyArray<string>, env: Record<string, string> = {}): string =>
  execFileSync("bash", [`${ROOT}scripts/spark-connect.sh`, ...args], {
    cwd: ROOT,
    env: { ...Deno.env.toObject(), ...env },
    encoding: "utf8"
  })
    .trim()
    .split("\n")
    .pop() ?? ""

Deno.test({
  name: "a DataFrame runs on Spark through Spark Connect",
  // The gRPC client keeps an HTTP/2 session open until the layer releases it; Spark's startup is slow.
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const address = given ?? script(["start", name], { TRIBUTARY_SPARK_TOKEN: crypto.randomUUID().replaceAll("-", "") })
    try {
      const program = Effect.gen(function* () {
        const spark = yield* Session
        const sales = spark.createDataFrame(
          [
            { shop: "a", amount: 3, at: new Date("2024-01-01T00:00:05Z") },
            { shop: "b", amount: 5, at: new Date("2024-01-01T00:00:15Z") },
            { shop: "a", amount: 4, at: new Date("2024-01-01T00:00:25Z") }
          ],
          Schema.Struct({ shop: Schema.String, amount: Schema.Int, at: Schema.Date })
        )
        const totals = yield* sales
          .groupBy("shop")
          .agg(F.sum("amount").as("total"), F.max("at").as("last"))
          .orderBy("shop")
          .collect()
        const version = yield* spark.state.remote!.version()
        return { totals, version }
      })
      const { totals, version } = await Effect.runPromise(program.pipe(Effect.provide(Session.layer({ remote: address }))))
      assert.match(version, /^4\.2\./)
      assert.deepEqual(totals, [
        { shop: "a", total: 7, last: new Date("2024-01-01T00:00:25Z") },
        { shop: "b", total: 5, last: new Date("2024-01-01T00:00:15Z") }
      ])
    } finally {
      if (given === undefined) script(["stop", name])
    }
  }
})
