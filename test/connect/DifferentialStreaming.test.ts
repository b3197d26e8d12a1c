/**
 * Spark as the oracle, streaming queries: the same streaming DataFrame started on the local
 * engine and on Spark 4.2 through Spark Connect, reading the same files three per micro-batch
 * (`maxFilesPerTrigger` 3: two batches with data, then any no-data batch a watermark asks for;
 * the files' modification times fix their order) with `Trigger.AvailableNow()`, into a memory
 * sink; the memory tables must hold the same rows, and the engines must run the same batches.
 *
 * The event files have late and out-of-order events and re-sent duplicates, so watermarks drop
 * rows and close windows at batch boundaries: both engines must draw the same lines.
 */
import { describe } from "vitest"
import * as F from "../../core/F.ts"
import type { DataFrame } from "../../structured/api/DataFrame.ts"
import type { OpenSession, SessionShape } from "../../structured/api/Session.ts"
import { CLICKS_SCHEMA, type DataSet, EVENTS_SCHEMA, loose, USERS_SCHEMA, useEngines } from "./differential.ts"
import { remoteAddress } from "./remote.ts"

interface Data {
  readonly files: DataSet
  readonly users: DataFrame<any>
}

const load = async (spark: OpenSession, files: DataSet): Promise<Data> => ({
  files,
  users: await spark.run(spark.read.schema(USERS_SCHEMA).json(files.usersJson))
})

const { cases } = useEngines(load, { concurrency: 4, remote: remoteAddress })

/** The events as a stream: three files per micro-batch. */
const events = (spark: SessionShape, d: Data): DataFrame<any> =>
  spark.readStream.schema(EVENTS_SCHEMA).option("maxFilesPerTrigger", 3).json(d.files.eventsJson)

/** The clicks as a stream: three files per micro-batch. */
const clicks = (spark: SessionShape, d: Data): DataFrame<any> =>
  spark.readStream.schema(CLICKS_SCHEMA).option("maxFilesPerTrigger", 3).json(d.files.clicksJson)

describe("differential: streaming queries (AvailableNow, memory sink)", () => {
  cases([
    {
      name: "a stateless filter and projection, from CSV",
      build: (s, d) =>
        s.readStream
          .schema(EVENTS_SCHEMA)
          .option("header", true)
          .option("maxFilesPerTrigger", 2)
          .csv(d.files.eventsCsv)
          .where(F.col("amount").gt(0).or(F.col("user").isNull()))
          .select(
            "id",
            F.upper(F.col("user")).as("user"),
            F.col("amount").multiply(2).as("double"),
            F.window("ts", "10 seconds").as("w"),
            "note"
          ),
      stream: { outputMode: "append" }
    },

    {
      name: "a windowed aggregation with a watermark, append mode (late rows dropped, closed windows emitted)",
      build: (s, d) =>
        events(s, d)
          .withWatermark("ts", "30 seconds")
          .groupBy(F.window("ts", "30 seconds"), "user")
          .agg(F.count("*").as("n"), F.sum("amount").as("total"), F.max("id").as("maxId")),
      stream: { outputMode: "append" }
    },

    {
      name: "a sliding-window aggregation with a watermark, complete mode",
      build: (s, d) =>
        events(s, d)
          .withWatermark("ts", "20 seconds")
          .groupBy(F.window("ts", "1 minute", "30 seconds"), "category")
          .agg(F.count("*").as("n"), F.min("amount").as("min"), F.array_sort(F.collect_set("user")).as("users")),
      stream: { outputMode: "complete" }
    },

    {
      name: "an aggregation sorted in complete mode",
      build: (s, d) =>
        events(s, d)
          .groupBy("category")
          .agg(F.count("*").as("n"), F.sum("amount").as("total"), F.max("note").as("maxNote"))
          .orderBy(F.col("total").desc(), F.col("category")),
      opts: { ordered: true },
      stream: { outputMode: "complete" }
    },
    {
      name: "a running aggregation in update mode (every batch's updated rows)",
      build: (s, d) =>
        events(s, d)
          .groupBy("user")
          .agg(
            F.count("*").as("n"),
            F.sum("amount").as("total"),
            F.max("ts").as("last"),
            F.approx_count_distinct("category").as("categories")
          ),
      stream: { outputMode: "update" }
    },

    {
      name: "a windowed aggregation with a watermark in update mode",
      build: (s, d) =>
        events(s, d)
          .withWatermark("ts", "15 seconds")
          .groupBy(F.window("ts", "20 seconds"))
          .agg(F.count("*").as("n"), F.sum("amount").as("total")),
      stream: { outputMode: "update" }
    },

    {
      name: "session windows with a watermark, append mode",
      build: (s, d) =>
        events(s, d)
          .withWatermark("ts", "30 seconds")
          .groupBy(F.session_window("ts", "10 seconds"), "user")
          .agg(F.count("*").as("n"), F.sum("amount").as("total")),
      stream: { outputMode: "append" }
    },
    {
      name: "dropDuplicates without a watermark",
      build: (s, d) => events(s, d).dropDuplicates(["user", "category"]).select("user", "category"),
      stream: { outputMode: "append" }
    },

    {
      name: "dropDuplicates with a watermark (the event time among the keys)",
      build: (s, d) => events(s, d).withWatermark("ts", "20 seconds").dropDuplicates(["id", "ts"]),
      stream: { outputMode: "append" }
    },

    {
      name: "dropDuplicatesWithinWatermark",
      build: (s, d) => events(s, d).withWatermark("ts", "20 seconds").dropDuplicatesWithinWatermark(["id"]),
      stream: { outputMode: "append" }
    },

    {
      name: "a stream-static join, inner and left outer",
      build: (s, d) => {
        const e = events(s, d).select("id", "user", "amount")
        return e
          .join(d.users, "user")
          .select(F.lit("inner").as("how"), "id", "user", "country", "tier")
          .union(
            loose(e.join(d.users, "user", "left").select(F.lit("left").as("how"), "id", "user", "country", "tier"))
          )
      },
      stream: { outputMode: "append" }
    },

    {
      name: "a stream-stream left outer join (unmatched rows come out when the watermark passes)",
      build: (s, d) => {
        const e = events(s, d)
          .where(F.col("user").isNotNull())
          .select("id", "user", "ts")
          .withWatermark("ts", "20 seconds")
        const c = clicks(s, d).withWatermark("clickTs", "20 seconds")
        const t = F.col("ts").cast("long")
        const ct = F.col("clickTs").cast("long")
        return loose(
          e.join(
            c,
            F.col("user")
              .eq(F.col("clickUser"))
              .and(ct.geq(t))
              .and(ct.leq(t.plus(10))),
            "left_outer"
          )
        ).select(F.col("id"), F.col("clickId"), F.col("ts"), F.col("clickTs"))
      },
      stream: { outputMode: "append" }
    },
    {
      name: "a stream-stream inner join with watermarks and a time-range condition",
      build: (s, d) => {
        const e = events(s, d).select("id", "user", "ts").withWatermark("ts", "30 seconds")
        const c = clicks(s, d).withWatermark("clickTs", "30 seconds")
        // Spark's `clickTs BETWEEN ts AND ts + interval 20 seconds`, on epoch seconds (tributary
        // has no interval arithmetic); both engines derive the state watermark from it.
        const t = F.col("ts").cast("long")
        const ct = F.col("clickTs").cast("long")
        return e
          .join(
            c,
            F.col("user")
              .eq(F.col("clickUser"))
              .and(ct.geq(t))
              .and(ct.leq(t.plus(20)))
          )
          .select(F.col("id"), F.col("clickId"), F.col("user"), F.col("ts"), F.col("clickTs"))
      },
      stream: { outputMode: "append" }
    },
    {
      name: "append mode refuses an aggregation without a watermark",
      expectFailure: true,
      build: (s, d) => events(s, d).groupBy("user").count(),
      stream: { outputMode: "append" }
    },
    {
      name: "complete mode refuses a query without an aggregation",
      expectFailure: true,
      build: (s, d) => events(s, d).select("id"),
      stream: { outputMode: "complete" }
    }
  ])
})
