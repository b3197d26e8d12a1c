/**
 * `F.udf` over Spark Connect: a remote session refuses a query with a JavaScript UDF with a typed
 * `AnalysisError` before anything is sent (JavaScript cannot run on the JVM), in a batch action
 * and in a streaming start. The session points at an address nothing listens on: a query that
 * tried to reach it would fail with a `ConnectorError` instead, so the refusal is shown to come
 * first.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { AnalysisError } from "../../core/Errors.ts"
import { F, Session } from "../../mod.ts"

const unreachable = () => Session.layer({ remote: "sc://127.0.0.1:9" })

describe("F.udf on a Spark Connect session", () => {
  it.effect("collect() of a select with a UDF fails with an AnalysisError naming the UDF", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const plusOne = F.udf((v: number | null) => (v === null ? null : v + 1), "int")
      const df = spark.createDataFrame([{ v: 1 }], "v int").select(plusOne("v"))
      const error = yield* Effect.flip(df.collect())
      expect(error).toBeInstanceOf(AnalysisError)
      expect(error.message).toContain("The user-defined function UDF (F.udf) cannot be translated for Spark")
      expect(error.message).toContain("a JavaScript function cannot run on a Spark Connect server")
    }).pipe(Effect.provide(unreachable()))
  )

  it.effect("writeStream.start() of a streaming query with a UDF is refused the same way", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const twice = F.udf((v: number) => v * 2, "bigint").withName("twice")
      const stream = spark.readStream.format("rate").load().select(twice("value"))
      const error = yield* Effect.flip(stream.writeStream.format("console").start())
      expect(error).toBeInstanceOf(AnalysisError)
      expect(error.message).toContain("The user-defined function twice (F.udf)")
    }).pipe(Effect.provide(unreachable()))
  )
})
