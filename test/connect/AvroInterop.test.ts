/**
 * Avro cross-checked with Spark 4.2 and its `spark-avro` module (on the Spark Connect server's
 * classpath, scripts/spark-connect/pom.xml): Spark writes Avro with each codec, every type
 * tributary maps and partitioned output, and tributary reads the same rows; tributary writes
 * Avro and Spark reads the same rows; `to_avro` on one side decodes with `from_avro` on the
 * other, and FAILFAST fails as Spark's does. (remoteAddress: this suite needs the server.)
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { F, Session } from "../../mod.ts"
import { layout, normalize, useEngines } from "./interop.ts"

const engines = useEngines()

/** Every type Spark writes that tributary reads (float and decimal read as double, see docs/connectors.md). */
const ALL_TYPES = `SELECT * FROM VALUES
  (1, 'a', 1.5D, CAST(0.25 AS FLOAT), true, X'0102', DATE'2024-05-01', TIMESTAMP'2024-05-01 12:00:00.123',
   CAST(12.34 AS DECIMAL(10, 2)), 9007199254740993L, array(1, 2), map('k', 1), named_struct('x', 1, 'y', 'z'), 'p1'),
  (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'p2'),
  (3, '', -0.5D, CAST(-1 AS FLOAT), false, X'', DATE'1970-01-01', TIMESTAMP'1999-12-31 23:59:59',
   CAST(-0.01 AS DECIMAL(10, 2)), -1L, array(), map(), named_struct('x', NULL, 'y', NULL), 'p1')
  AS t(id, s, d, f, b, bin, day, ts, dec, big, arr, m, st, p)`

const remoteRows = (sql: string) =>
  engines().remote.run(
    Effect.gen(function* () {
      const spark = yield* Session
      return (yield* (yield* spark.sql(sql)).collect()) as ReadonlyArray<Record<string, unknown>>
    })
  )

const readAvro = (which: "local" | "remote", dir: string) =>
  (which === "local" ? engines().local : engines().remote).run(
    Effect.gen(function* () {
      const spark = yield* Session
      return (yield* (yield* spark.read.format("avro").load(dir)).collect()) as ReadonlyArray<Record<string, unknown>>
    })
  )

describe("Avro against Spark", () => {
  for (const codec of ["uncompressed", "deflate", "snappy", "zstandard"]) {
    it(`Spark writes every type with ${codec}; tributary reads the same rows`, async () => {
      const dir = engines().dir(`spark-${codec}`)
      await engines().remote.run(
        Effect.gen(function* () {
          const spark = yield* Session
          yield* (yield* spark.sql(ALL_TYPES)).write.format("avro").option("compression", codec).save(dir)
        })
      )
      const expected = await remoteRows(ALL_TYPES)
      const ours = await readAvro("local", dir)
      expect(normalize(ours)).toEqual(normalize(expected))
    })
  }

  it("Spark's bzip2 output fails to read with a message naming the codec", async () => {
    const dir = engines().dir("spark-bzip2")
    await engines().remote.run(
      Effect.gen(function* () {
        const spark = yield* Session
        yield* (yield* spark.sql(ALL_TYPES)).write.format("avro").option("compression", "bzip2").save(dir)
      })
    )
    await expect(readAvro("local", dir)).rejects.toThrow(/bzip2/)
  })

  it("Spark's partitioned Avro output reads back with its partition column", async () => {
    const dir = engines().dir("spark-partitioned")
    await engines().remote.run(
      Effect.gen(function* () {
        const spark = yield* Session
        yield* (yield* spark.sql(ALL_TYPES)).write.partitionBy("p").format("avro").save(dir)
      })
    )
    const expected = await readAvro("remote", dir)
    const ours = await readAvro("local", dir)
    expect(Object.keys(ours[0])).toEqual(Object.keys(expected[0]))
    expect(normalize(ours)).toEqual(normalize(expected))
  })

  for (const codec of ["uncompressed", "deflate", "snappy", "zstandard"]) {
    it(`tributary writes every type with ${codec}, partitioned; Spark reads the same rows and layout`, async () => {
      const ourDir = engines().dir(`ours-${codec}`)
      const sparkDir = engines().dir(`theirs-${codec}`)
      const rows = await remoteRows(ALL_TYPES)
      const Row = Schema.Struct({
        id: Schema.Int,
        s: Schema.NullOr(Schema.String),
        d: Schema.NullOr(Schema.Number),
        b: Schema.NullOr(Schema.Boolean),
        bin: Schema.NullOr(Schema.Uint8Array),
        day: Schema.NullOr(Schema.Date),
        ts: Schema.NullOr(Schema.Date),
        arr: Schema.NullOr(Schema.Array(Schema.Int)),
        st: Schema.NullOr(Schema.Struct({ x: Schema.NullOr(Schema.Int), y: Schema.NullOr(Schema.String) })),
        p: Schema.String
      })
      const subset = rows.map((r) => ({ id: r.id, s: r.s, d: r.d, b: r.b, bin: r.bin, day: r.day, ts: r.ts, arr: r.arr, st: r.st, p: r.p }))
      for (const [session, dir] of [
        [engines().local, ourDir],
        [engines().remote, sparkDir]
      ] as const) {
        await session.run(
          Effect.gen(function* () {
            const spark = yield* Session
            const df = spark.createDataFrame(subset as never, Row).withColumn("day", F.col("day").cast("date"))
            yield* df.write.partitionBy("p").option("compression", codec).avro(dir)
          })
        )
      }
      const theirs = await readAvro("remote", ourDir)
      const ours = await readAvro("local", ourDir)
      expect(normalize(theirs)).toEqual(normalize(ours))
      expect(normalize(ours).length).toBe(3)
      expect(layout(ourDir)).toEqual(layout(sparkDir))
    })
  }

  const userSchema = JSON.stringify({
    type: "record",
    name: "topLevelRecord",
    fields: [
      { name: "name", type: "string" },
      { name: "age", type: ["int", "null"] }
    ]
  })

  it("Spark's to_avro decodes with tributary's from_avro, and tributary's to_avro with Spark's from_avro", async () => {
    const bytes = await remoteRows("SELECT to_avro(named_struct('name', 'ann', 'age', CAST(31 AS INT))) AS v")
    const Value = Schema.Struct({ v: Schema.Uint8Array })
    const decodedHere = await engines().local.run(
      Effect.gen(function* () {
        const spark = yield* Session
        const fixed = JSON.stringify({
          type: "record",
          name: "topLevelRecord",
          fields: [
            { name: "name", type: "string" },
            { name: "age", type: "int" }
          ]
        })
        return yield* spark
          .createDataFrame(bytes as never, Value)
          .select(F.from_avro("v", fixed).as("u"))
          .collect()
      })
    )
    expect(decodedHere).toEqual([{ u: { name: "ann", age: 31 } }])
    const encodedHere = await engines().local.run(
      Effect.gen(function* () {
        const spark = yield* Session
        const people = spark.createDataFrame([{ name: "bob", age: null }], Schema.Struct({ name: Schema.String, age: Schema.NullOr(Schema.Int) }))
        return yield* people.select(F.to_avro(F.struct("name", F.col("age").cast("int").as("age")), userSchema).as("v")).collect()
      })
    )
    const decodedThere = await engines().remote.run(
      Effect.gen(function* () {
        const spark = yield* Session
        return yield* spark
          .createDataFrame(encodedHere as never, Value)
          .select(F.from_avro("v", userSchema).as("u"))
          .collect()
      })
    )
    expect(decodedThere).toEqual([{ u: { name: "bob", age: null } }])
  })

  it("a malformed value fails FAILFAST on both engines with Spark's message, and PERMISSIVE gives nulls on both", async () => {
    const Value = Schema.Struct({ v: Schema.Uint8Array })
    const bad = [{ v: new Uint8Array([0xff, 0xff, 0xff]) }]
    const messages: Array<string> = []
    const permissive: Array<unknown> = []
    for (const session of [engines().local, engines().remote]) {
      const e = await session
        .run(
          Effect.flatMap(Session, (spark) => spark.createDataFrame(bad, Value).select(F.from_avro("v", userSchema).as("u")).collect())
        )
        .then(
          () => "no error",
          (err: unknown) => String((err as { message?: unknown }).message)
        )
      messages.push(e)
      permissive.push(
        await session.run(
          Effect.flatMap(Session, (spark) =>
            spark.createDataFrame(bad, Value).select(F.from_avro("v", userSchema, { mode: "PERMISSIVE" }).as("u")).collect()
          )
        )
      )
    }
    const spark = "Malformed records are detected in record parsing. Current parse Mode: FAILFAST. To process malformed records as null result, try setting the option 'mode' as 'PERMISSIVE'."
    expect(messages[0]).toBe(spark)
    expect(messages[1]).toContain(spark)
    expect(permissive[0]).toEqual(permissive[1])
  })
})
