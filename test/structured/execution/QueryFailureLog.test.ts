/**
 * A query that terminates with an error is heard: it logs one ERROR line through Effect's logger
 * (Spark's `StreamExecution.runStream`: "Query <prettyIdString> terminated with error"), naming the
 * query's name, id and run id, the batch that failed and the cause's class and message; listeners
 * still get `onQueryTerminated`. A query that stops normally logs no error.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Logger, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../mod.ts"
import type { QueryTerminatedEvent } from "../../../structured/contracts/StreamingQueryListener.ts"

interface Entry {
  readonly level: string
  readonly text: string
}

const capture = (entries: Array<Entry>) =>
  Logger.layer([
    Logger.make((options) => {
      const parts = Array.isArray(options.message) ? options.message : [options.message]
      entries.push({ level: options.logLevel, text: parts.map(String).join(" ") })
    })
  ])

describe("a failed query logs one ERROR line", () => {
  it.effect("foreachBatch failing at batch 3: name, ids, batch id, the cause's class and message", () => {
    const entries: Array<Entry> = []
    return Effect.gen(function* () {
      const spark = yield* Session
      const terminated: Array<QueryTerminatedEvent> = []
      yield* spark.streams.addListener({ onQueryTerminated: (e) => void terminated.push(e) })
      const input = yield* MemoryStream.make(Schema.Struct({ n: Schema.Int }))
      const query = yield* input
        .toDF()
        .select(F.col("n"))
        .writeStream.queryName("payments")
        .foreachBatch((_df, batchId) => (batchId === 3 ? Effect.fail(new TypeError("the ledger is closed")) : Effect.void))
        .start()
      for (let i = 0; i < 4; i++) {
        yield* input.addData([{ n: i }])
        yield* query.processAllAvailable().pipe(Effect.ignore)
      }
      yield* query.awaitTermination().pipe(Effect.ignore)
      const errors = entries.filter((e) => e.level === "Error")
      assert.strictEqual(errors.length, 1, JSON.stringify(entries))
      const line = errors[0].text
      assert.include(line, `Query payments [id = ${query.id}, runId = ${query.runId}] terminated with error at batch 3`)
      assert.include(line, "the ledger is closed")
      assert.include(line, "at batch 3: ConnectorError: [FOREACH_BATCH_USER_FUNCTION_ERROR]")
      assert.strictEqual(terminated.length, 1)
      assert.isNotNull(terminated[0].exception)
    }).pipe(Effect.provide(Session.layer()), Effect.provide(capture(entries)))
  })

  it.effect("a query that stops normally logs no error", () => {
    const entries: Array<Entry> = []
    return Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ n: Schema.Int }))
      const query = yield* input.toDF().writeStream.format("noop").start()
      yield* input.addData([{ n: 1 }])
      yield* query.processAllAvailable()
      yield* query.stop()
      assert.deepStrictEqual(
        entries.filter((e) => e.level === "Error"),
        []
      )
    }).pipe(Effect.provide(Session.layer()), Effect.provide(capture(entries)))
  })
})

