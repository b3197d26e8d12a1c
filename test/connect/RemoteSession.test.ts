/**
 * `Session.layer({ remote })` end to end, through the public API only, against a real Spark 4.2
 * (test/connect/globalSetup.ts): batch actions decode Spark's rows, `printSchema`/`explain` are
 * Spark's, conf goes to Spark, what cannot cross is refused before anything is sent, and a bad
 * address or an unreachable server is a typed error.
 */
import { it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { describe, expect } from "vitest"
import { StreamingContext } from "../../dstream/mod.ts"
import { AnalysisError, ConnectorError, F, MemoryStream, Session } from "../../mod.ts"
import { remoteAddress } from "./remote.ts"

const remote = () => Session.layer({ remote: remoteAddress(), conf: { "spark.sql.shuffle.partitions": 2 } })

const Sale = Schema.Struct({ shop: Schema.String, amount: Schema.Int, at: Schema.Date })
const sales = [
  { shop: "a", amount: 3, at: new Date("2024-01-01T00:00:05.123Z") },
  { shop: "b", amount: 5, at: new Date("2024-01-01T00:00:15Z") },
  { shop: "a", amount: 4, at: new Date("2024-01-01T00:00:25Z") }
]

describe("a remote session", () => {
  it.effect("runs batch actions on Spark and decodes typed rows", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame(sales, Sale)
      expect(yield* df.count()).toBe(3)
      const totals = yield* df
        .groupBy("shop")
        .agg(F.sum("amount").as("total"), F.max("at").as("last"), F.count(F.lit(1)).as("n"))
        .orderBy("shop")
        .collect()
      expect(totals).toEqual([
        { shop: "a", total: 7, last: new Date("2024-01-01T00:00:25Z"), n: 2 },
        { shop: "b", total: 5, last: new Date("2024-01-01T00:00:15Z"), n: 1 }
      ])
      // Millisecond timestamps survive the round trip through Spark's microseconds.
      const first = yield* df.orderBy("at").first()
      expect(first?.at).toEqual(new Date("2024-01-01T00:00:05.123Z"))
      expect(yield* df.filter(F.col("amount").gt(10)).isEmpty()).toBe(true)
      const text = yield* df.select("shop", "amount").orderBy("amount").showString()
      expect(text).toBe(
        [
          "+----+------+",
          "|shop|amount|",
          "+----+------+",
          "|   a|     3|",
          "|   a|     4|",
          "|   b|     5|",
          "+----+------+",
          ""
        ].join("\n")
      )
    }).pipe(Effect.provide(remote()))
  )

  it.effect("range, take and Spark's own schema and plans", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      expect(yield* spark.range(0, 10, 3).collect()).toEqual([{ id: 0 }, { id: 3 }, { id: 6 }, { id: 9 }])
      const df = spark.createDataFrame(sales, Sale).withColumn("double", F.col("amount").multiply(2))
      const schema = yield* df.printSchema()
      expect(schema).toContain("|-- double: long (nullable = false)")
      expect(schema).toContain("|-- at: timestamp (nullable = false)")
      const plan = yield* df.explain(true)
      expect(plan).toContain("== Parsed Logical Plan ==")
      expect(plan).toContain("== Physical Plan ==")
    }).pipe(Effect.provide(remote()))
  )

  it.effect("reads and writes Spark's conf, starting with the layer's", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      expect(yield* spark.conf.get("spark.sql.shuffle.partitions")).toBe("2")
      yield* spark.conf.set("spark.sql.shuffle.partitions", 5)
      expect(yield* spark.conf.get("spark.sql.shuffle.partitions")).toBe("5")
      const all = yield* spark.conf.getAll()
      expect(all["spark.sql.shuffle.partitions"]).toBe("5")
      expect(yield* spark.conf.get("spark.tributary.unset.key", "fallback")).toBe("fallback")
    }).pipe(Effect.provide(remote()))
  )

  it.effect("Spark's analysis errors come back typed, with Spark's error class", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const e = yield* Effect.flip(spark.createDataFrame(sales, Sale).select("nope" as never).collect())
      expect(e).toBeInstanceOf(AnalysisError)
      expect(e instanceof AnalysisError && e.errorClass).toBe("UNRESOLVED_COLUMN.WITH_SUGGESTION")
      const missing = yield* Effect.flip(spark.table("no_such_table").collect())
      expect(missing instanceof AnalysisError && missing.reason).toBe("TableNotFound")
    }).pipe(Effect.provide(remote()))
  )

  it.effect("refuses what cannot cross before anything is sent", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame(sales, Sale)
      const mapped = yield* Effect.flip(df.map((r) => ({ n: r.amount + 1 }), Schema.Struct({ n: Schema.Int })).collect())
      expect(mapped).toBeInstanceOf(AnalysisError)
      expect(mapped.message).toMatch(/MapElements/)
      const filtered = yield* Effect.flip(df.filter((r) => r.amount > 3).collect())
      expect(filtered.message).toMatch(/TypedFilter/)
      const input = yield* MemoryStream.make(Schema.Int)
      const fromMemory = yield* Effect.flip(input.toDF().writeStream.format("memory").queryName("m").start())
      expect(fromMemory).toBeInstanceOf(AnalysisError)
      expect(fromMemory.message).toMatch(/MemoryStream/)
      const rate = spark.readStream.format("rate").load()
      const batchFn = yield* Effect.flip(rate.writeStream.foreachBatch(() => undefined).start())
      expect(batchFn).toBeInstanceOf(AnalysisError)
      expect(batchFn.message).toMatch(/foreachBatch/)
      expect(yield* spark.streams.active()).toEqual([])
    }).pipe(Effect.provide(remote()))
  )

  it.effect("spark.sql is Spark SQL, run by Spark: arguments, DDL at once, results that compose", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const args = yield* spark.sql("select ? + 1 as x, ? as s, ? as d, ? as n", [41, "a", 1.5, null])
      expect(yield* args.collect()).toEqual([{ x: 42, s: "a", d: 1.5, n: null }])
      // A DDL statement takes effect when spark.sql runs, as in Spark (not again at each action).
      yield* spark.sql("create or replace temporary view nums as select id, id % 3 as k from range(10)")
      expect(yield* spark.table("nums").count()).toBe(10)
      const grouped = (yield* spark.sql("select k, count(*) as c from nums group by k"))
        .filter(F.col("k").gt(0))
        .orderBy("k")
      expect(yield* grouped.collect()).toEqual([
        { k: 1, c: 3 },
        { k: 2, c: 3 }
      ])
      const parse = yield* Effect.flip(spark.sql("selec 1"))
      expect(parse).toBeInstanceOf(AnalysisError)
      expect(parse instanceof AnalysisError && parse.errorClass).toBe("PARSE_SYNTAX_ERROR")
      const badArg = yield* Effect.flip(spark.sql("select ?", [{ a: 1 }]))
      expect(badArg.message).toContain("spark.sql argument 1")
    }).pipe(Effect.provide(remote()))
  )

  it.effect("a StreamingContext (DStreams) refuses to start on a remote session", () =>
    Effect.gen(function* () {
      const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
      ssc.queueStream([[1, 2, 3]]).print()
      const e = yield* Effect.flip(ssc.start())
      expect(e).toBeInstanceOf(AnalysisError)
      expect(e.message).toContain("StreamingContext (DStreams) cannot run on a remote session")
      // The address is shown without its token.
      const token = /token=([^;]+)/.exec(remoteAddress())?.[1]
      if (token !== undefined) expect(e.message).not.toContain(token)
    }).pipe(Effect.provide(remote()))
  )

  it.effect("an address that does not parse fails the first action with a typed error", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const e = yield* Effect.flip(spark.range(3).collect())
      expect(e).toBeInstanceOf(ConnectorError)
      expect(e.message).toContain("Invalid Spark Connect address")
      expect(e.message).not.toContain("s3cret")
    }).pipe(Effect.provide(Session.layer({ remote: "sc://h:notaport/;token=s3cret" })))
  )

  it.effect("a server that is not there is a retryable ConnectorError", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const e = yield* Effect.flip(spark.range(3).collect())
      expect(e).toBeInstanceOf(ConnectorError)
      expect(e instanceof ConnectorError && e.retryable).toBe(true)
    }).pipe(Effect.provide(Session.layer({ remote: "sc://127.0.0.1:1" })))
  )

  it.effect("two sessions are two remote sessions: their conf is their own", () =>
    Effect.gen(function* () {
      const a = yield* Effect.provide(
        Effect.gen(function* () {
          const spark = yield* Session
          yield* spark.conf.set("spark.sql.shuffle.partitions", 7)
          return yield* spark.conf.get("spark.sql.shuffle.partitions")
        }),
        Layer.fresh(remote())
      )
      const b = yield* Effect.provide(
        Effect.gen(function* () {
          const spark = yield* Session
          return yield* spark.conf.get("spark.sql.shuffle.partitions")
        }),
        Layer.fresh(remote())
      )
      expect([a, b]).toEqual(["7", "2"])
    })
  )
})
