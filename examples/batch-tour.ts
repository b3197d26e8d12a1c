/**
 * A batch tour on the embedded defaults (`node examples/batch-tour.ts`).
 *
 * Builds a DataFrame of sales, aggregates it per shop and per 10-minute window, joins it with a
 * table of shops, writes a JSON Lines file and reads it back through DuckDB, and shows each
 * result as Spark's `show()` table.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Console, Effect, Schema } from "effect"
import { F, Session } from "../mod.ts"

const Sale = Schema.Struct({ shop: Schema.String, amount: Schema.Int, at: Schema.Date })
const Shop = Schema.Struct({ shop: Schema.String, city: Schema.String })

const t = (minute: number) => new Date(Date.UTC(2026, 0, 1, 9, minute))

const program = Effect.gen(function* () {
  const spark = yield* Session
  const sales = spark.createDataFrame(
    [
      { shop: "north", amount: 12, at: t(1) },
      { shop: "south", amount: 7, at: t(4) },
      { shop: "north", amount: 30, at: t(12) },
      { shop: "east", amount: 5, at: t(13) },
      { shop: "south", amount: 11, at: t(25) }
    ],
    Sale
  )
  const shops = spark.createDataFrame(
    [
      { shop: "north", city: "Oslo" },
      { shop: "south", city: "Lisbon" }
    ],
    Shop
  )

  yield* Console.log("Sales per shop:")
  yield* sales
    .groupBy("shop")
    .agg(F.count("*").as("orders"), F.sum("amount").as("total"), F.avg("amount"))
    .orderBy(F.col("total").desc())
    .show()

  yield* Console.log("Sales per 10-minute window:")
  yield* sales.groupBy(F.window("at", "10 minutes")).agg(F.sum("amount").as("total")).orderBy("window").show(20, false)

  yield* Console.log("Shops and their cities (left join):")
  const joined = sales.join(shops, "shop", "left").select("shop", "city", "amount")
  yield* joined.show()
  yield* joined.explain(true)

  const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-demo-")))
  const file = join(dir, "events.jsonl")
  yield* Effect.promise(() =>
    writeFile(file, ['{"user":"ann","clicks":3}', '{"user":"bob","clicks":5}', '{"user":"ann","clicks":4}'].join("\n"))
  )
  yield* Console.log(`Read back from ${file} through DuckDB:`)
  const events = yield* spark.read.json(file)
  yield* events.printSchema()
  yield* events.groupBy("user").agg(F.sum("clicks").as("clicks")).orderBy("user").show()
  yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
})

await Effect.runPromise(program.pipe(Effect.provide(Session.layer())))
