/**
 * Deno smoke suite (`deno task test`): the same library code under Deno — a batch DataFrame,
 * a file read through DuckDB, and `show()` output captured through Effect's Console.
 */
import assert from "node:assert/strict"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Console, Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../mod.ts"
import * as DuckDB from "../../state/DuckDB.ts"

const run = <A, E>(effect: Effect.Effect<A, E, Session>): Promise<A> =>
  Effect.runPromise(effect.pipe(Effect.provide(Session.layer())))

/** Collects what `Console.log` prints. */
const capture = (lines: Array<string>): Console.Console => {
  const log = (...args: ReadonlyArray<unknown>) => {
    lines.push(args.map(String).join(" "))
  }
  return { ...globalThis.console, log } as unknown as Console.Console
}

Deno.test("a batch DataFrame filters, aggregates and collects", async () => {
  const rows = await run(
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame(
        [
          { k: "a", v: 1 },
          { k: "b", v: 2 },
          { k: "a", v: 3 }
        ],
        Schema.Struct({ k: Schema.String, v: Schema.Int })
      )
      return yield* df.where(F.col("v").gt(0)).groupBy("k").agg(F.sum("v").as("total")).orderBy("k").collect()
    })
  )
  assert.deepEqual(rows, [
    { k: "a", total: 4 },
    { k: "b", total: 2 }
  ])
})

Deno.test("spark.read.json reads and infers a JSON Lines file", async () => {
  const dir = await mkdtemp(join(tmpdir(), "tributary-deno-"))
  try {
    const file = join(dir, "people.jsonl")
    await writeFile(file, '{"name":"ann","age":31}\n{"name":"bob","age":17}\n')
    const rows = await run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = yield* spark.read.json(file)
        return yield* df.where(F.col("age").geq(18)).select("name").collect()
      })
    )
    assert.deepEqual(rows, [{ name: "ann" }])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

Deno.test("spark.read.parquet reads a file through DuckDB", async () => {
  const dir = await mkdtemp(join(tmpdir(), "tributary-deno-"))
  try {
    const file = join(dir, "nums.parquet")
    await Effect.runPromise(
      DuckDB.withMemory((c) => c.execute("COPY (SELECT range AS n, range * 2 AS twice FROM range(5)) TO ? (FORMAT parquet)", [file]))
    )
    const rows = await run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = yield* spark.read.parquet(file)
        return yield* df.where(F.col("n").geq(3)).orderBy("n").collect()
      })
    )
    assert.deepEqual(rows, [
      { n: 3, twice: 6 },
      { n: 4, twice: 8 }
    ])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

Deno.test("a streaming query runs micro-batches from a MemoryStream into the memory sink", async () => {
  const dir = await mkdtemp(join(tmpdir(), "tributary-deno-"))
  try {
    const rows = await run(
      Effect.gen(function* () {
        const spark = yield* Session
        const input = yield* MemoryStream.make(Schema.Struct({ word: Schema.String }))
        const query = yield* input
          .toDF()
          .select(F.upper("word").as("word"))
          .writeStream.format("memory")
          .queryName("words")
          .option("checkpointLocation", join(dir, "ck"))
          .start()
        yield* input.addData([{ word: "a" }, { word: "b" }])
        yield* query.processAllAvailable()
        yield* input.addData([{ word: "c" }])
        yield* query.processAllAvailable()
        yield* query.stop()
        return yield* spark.table("words").collect()
      })
    )
    assert.deepEqual(rows, [{ word: "A" }, { word: "B" }, { word: "C" }])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})

Deno.test("show() prints Spark's table", async () => {
  const lines: Array<string> = []
  await run(
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame([{ word: "hello", n: 2 }], Schema.Struct({ word: Schema.String, n: Schema.Int }))
      yield* df.show().pipe(Effect.provideService(Console.Console, capture(lines)))
    })
  )
  assert.equal(lines.join("\n"), "+-----+---+\n| word|  n|\n+-----+---+\n|hello|  2|\n+-----+---+\n")
})

Deno.test("df.write and the avro format (avsc, snappyjs, node:zlib) run under Deno", async () => {
  const dir = await mkdtemp(join(tmpdir(), "tributary-deno-avro-"))
  try {
    const rows = await run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark.createDataFrame(
          [
            { k: "a", v: 1, at: new Date(5) },
            { k: "b", v: 2, at: new Date(6) }
          ],
          Schema.Struct({ k: Schema.String, v: Schema.Int, at: Schema.Date })
        )
        for (const codec of ["snappy", "deflate", "zstandard", "uncompressed"]) {
          yield* df.write.option("compression", codec).partitionBy("k").avro(join(dir, codec))
        }
        yield* df.write.json(join(dir, "json"))
        const encoded = df.select(F.to_avro(F.struct("k", "v")).as("value"))
        const schema = JSON.stringify({
          type: "record",
          name: "topLevelRecord",
          fields: [
            { name: "k", type: "string" },
            { name: "v", type: "long" }
          ]
        })
        const decoded = yield* encoded.select(F.from_avro("value", schema).as("r")).collect()
        assert.deepEqual(decoded, [{ r: { k: "a", v: 1 } }, { r: { k: "b", v: 2 } }])
        const counts: Array<number> = []
        for (const codec of ["snappy", "deflate", "zstandard", "uncompressed"]) {
          counts.push(yield* (yield* spark.read.format("avro").load(join(dir, codec))).count())
        }
        assert.deepEqual(counts, [2, 2, 2, 2])
        return yield* (yield* spark.read.format("avro").load(join(dir, "snappy"))).orderBy("v").collect()
      })
    )
    assert.deepEqual(rows, [
      { v: 1, at: new Date(5), k: "a" },
      { v: 2, at: new Date(6), k: "b" }
    ])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
