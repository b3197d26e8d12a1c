/**
 * The `nexmark` source under Deno: the generator gives Beam's events (the first ones of
 * `test/connectors/nexmark/fixtures/beam-events-0-150.txt`), and a streaming query over the
 * source equals the batch read of the same events.
 */
import assert from "node:assert/strict"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { F, Session, Trigger } from "../../mod.ts"
import { DEFAULT_GENERATOR_CONFIG, NexmarkGenerator } from "../../connectors/nexmark/mod.ts"

Deno.test("the nexmark generator gives Beam's events", () => {
  const [person, auction, , , bid] = new NexmarkGenerator(DEFAULT_GENERATOR_CONFIG).rows(0, 5)
  const p = person[1] as ReadonlyArray<unknown>
  assert.deepEqual(p.slice(0, 6), [1000, "Peter Jones", "nhd@xcat.com", "7241 7320 9143 4888", "Portland", "WY"])
  const a = auction[2] as ReadonlyArray<unknown>
  assert.deepEqual(
    [a[0], a[1], a[3], a[4], a[6], a[7], a[8]],
    [1000, "wkx mgee", 28873, 29448, 1436918400011, 1000, 13]
  )
  const b = bid[3] as ReadonlyArray<unknown>
  assert.deepEqual([b[0], b[1], b[2], b[5]], [1000, 1001, 32530001, 1436918400000])
})

Deno.test("a nexmark stream equals the batch read of the same events", async () => {
  const dir = await mkdtemp(join(tmpdir(), "tributary-deno-nexmark-"))
  try {
    const [streamed, batch] = await Effect.runPromise(
      Effect.gen(function* () {
        const spark = yield* Session
        const bids = (events: typeof stream) =>
          events
            .where(F.col("event_type").eq(2))
            .select(F.col("bid.auction").as("auction"), F.col("bid.price").as("price"))
        const stream = spark.readStream
          .format("nexmark")
          .option("maxEvents", 3000)
          .option("maxOffsetsPerTrigger", 700)
          .load()
        const query = yield* bids(stream)
          .writeStream.format("memory")
          .queryName("deno_bids")
          .trigger(Trigger.AvailableNow())
          .option("checkpointLocation", dir)
          .start()
        yield* query.awaitTermination()
        const b = yield* spark.read.format("nexmark").option("maxEvents", 3000).load()
        return [yield* spark.table("deno_bids").collect(), yield* bids(b).collect()] as const
      }).pipe(Effect.provide(Session.layer()))
    )
    assert.equal(streamed.length, 2760)
    assert.deepEqual(streamed, batch)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
