/**
 * `npm start` / `deno task start`: a stateful streaming query on the embedded defaults.
 *
 * A `rate` source makes 5 rows a second. The query declares a 1-second watermark on the rows'
 * timestamps, counts rows and sums values per 2-second window and parity, and writes in append
 * mode to the console sink on a 1-second processing-time trigger: a window is printed once,
 * when the watermark has passed its end (Spark's `Batch: N` and a table). The window counts live
 * in the DuckDB state store inside a temporary checkpoint. After about seven seconds the query
 * stops cleanly and its last progress report (with `eventTime` and `stateOperators`) is printed.
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
  const counts = events
    .withWatermark("timestamp", "1 second")
    .withColumn("parity", F.when(F.col("value").mod(2).eq(0), "even").otherwise("odd"))
    .groupBy(F.window("timestamp", "2 seconds"), "parity")
    .agg(F.count("*").as("events"), F.sum("value").as("total"))

  const query = yield* counts.writeStream
    .format("console")
    .outputMode("append")
    .option("truncate", false)
    .option("checkpointLocation", checkpoint)
    .queryName("windowed-counts")
    .trigger(Trigger.ProcessingTime("1 second"))
    .start()

  yield* Console.log(`Started ${query.name} (id ${query.id}); stopping in about 7 seconds…`)
  yield* Effect.sleep("7200 millis")
  yield* query.stop()

  const last = yield* query.lastProgress()
  yield* Console.log("Last progress:")
  yield* Console.log(last === null ? "(no batch ran)" : progressJson(last))
  yield* Effect.promise(() => rm(checkpoint, { recursive: true, force: true }))
})

await Effect.runPromise(program.pipe(Effect.provide(Session.layer())))
