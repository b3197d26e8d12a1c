/**
 * `npm start` / `deno task start`: a streaming query on the embedded defaults.
 *
 * A `rate` source makes 5 rows a second; a stateless query tags each row and keeps the even
 * ones; the console sink prints every micro-batch as Spark does (`Batch: N` and a table) on a
 * 1-second processing-time trigger. After about four seconds the query is stopped cleanly and
 * its last progress report is printed. The checkpoint goes to a temporary folder.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Console, Effect } from "effect"
import { F, progressJson, Session, Trigger } from "../mod.ts"

const program = Effect.gen(function* () {
  const spark = yield* Session
  const checkpoint = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-demo-")))

  const events = spark.readStream.format("rate").option("rowsPerSecond", 5).load()
  const tagged = events
    .withColumn("parity", F.when(F.col("value").mod(2).eq(0), "even").otherwise("odd"))
    .where(F.col("parity").eq("even"))
    .select("timestamp", "value", F.col("value").multiply(F.col("value")).as("square"))

  const query = yield* tagged.writeStream
    .format("console")
    .option("truncate", false)
    .option("checkpointLocation", checkpoint)
    .queryName("even-squares")
    .trigger(Trigger.ProcessingTime("1 second"))
    .start()

  yield* Console.log(`Started ${query.name} (id ${query.id}); stopping in about 4 seconds…`)
  yield* Effect.sleep("4200 millis")
  yield* query.stop()

  const last = yield* query.lastProgress()
  yield* Console.log("Last progress:")
  yield* Console.log(last === null ? "(no batch ran)" : progressJson(last))
  yield* Effect.promise(() => rm(checkpoint, { recursive: true, force: true }))
})

await Effect.runPromise(program.pipe(Effect.provide(Session.layer())))
