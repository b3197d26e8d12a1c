/**
 * Spark as the oracle for window functions: the same DataFrame code on the local engine and on
 * Spark 4.2 through Spark Connect (`Expression.Window` in the plan) must give the same rows and
 * the same schema (column names included: Spark names an unaliased window column after its
 * resolved frame), and both must refuse a ranking function over an unordered window.
 */
import { describe } from "vitest"
import * as F from "../../core/F.ts"
import { Window } from "../../core/Window.ts"
import type { DataFrame } from "../../structured/api/DataFrame.ts"
import type { OpenSession } from "../../structured/api/Session.ts"
import { type DataSet, EVENTS_SCHEMA, useEngines } from "./differential.ts"
import { remoteAddress } from "./remote.ts"

interface Data {
  readonly events: DataFrame<any>
}

const load = async (spark: OpenSession, data: DataSet): Promise<Data> => ({
  events: await spark.run(spark.read.schema(EVENTS_SCHEMA).json(data.eventsJson))
})

const { cases } = useEngines(load, { remote: remoteAddress })

const byUser = Window.partitionBy("user").orderBy("id")

describe("differential: window functions", () => {
  cases([
    {
      name: "ranking functions over a partitioned, ordered window (ties on amount)",
      build: (_, d) => {
        const w = Window.partitionBy("user").orderBy(F.col("amount").desc())
        return d.events.select(
          F.col("id"),
          F.rank().over(w).as("rank"),
          F.dense_rank().over(w).as("dense"),
          F.percent_rank().over(w).as("pr"),
          F.cume_dist().over(w).as("cd"),
          F.ntile(3).over(byUser).as("tile"),
          F.row_number().over(byUser).as("rn")
        )
      }
    },
    {
      name: "lag / lead with defaults and ignoreNulls, nth_value",
      build: (_, d) =>
        d.events.select(
          F.col("id"),
          F.lag("amount", 1).over(byUser).as("lag1"),
          F.lead("amount", 2, -1).over(byUser).as("lead2"),
          F.lag("note", 1, null, true).over(byUser).as("lagNote"),
          F.nth_value("price", 2).over(byUser).as("nth2")
        )
    },
    {
      name: "aggregates over the default, whole-partition, rows and range frames (unaliased names)",
      build: (_, d) =>
        d.events.select(
          F.col("id"),
          F.sum("amount").over(byUser),
          F.count("*").over(Window.partitionBy("user")),
          F.avg("price").over(byUser.rowsBetween(-1, 1)).as("avg3"),
          F.max("amount").over(Window.partitionBy("category").orderBy("amount").rangeBetween(-5, 5)).as("maxNear"),
          F.collect_list("id").over(byUser.rowsBetween(Window.currentRow, Window.unboundedFollowing)).as("rest"),
          F.first("amount").over(byUser.rowsBetween(Window.unboundedPreceding, Window.currentRow)).as("first")
        )
    },
    {
      name: "window functions over a grouped aggregation (unaliased names too)",
      build: (_, d) =>
        d.events
          .groupBy("user")
          .agg(
            F.sum("amount").as("total"),
            F.rank().over(Window.orderBy(F.sum("amount").desc())),
            F.sum(F.count("*")).over().as("rows"),
            F.lag("user", 1).over(Window.orderBy("user")).as("previous")
          )
    },
    {
      name: "a window function over a global aggregation",
      build: (_, d) => d.events.select(F.max("amount"), F.dense_rank().over(Window.orderBy(F.max("amount"))))
    },
    {
      name: "row_number over an unordered window is refused (WINDOW_FUNCTION_FRAME_NOT_ORDERED)",
      build: (_, d) => d.events.select(F.row_number().over(Window.partitionBy("user"))),
      expectFailure: true
    },
    {
      name: "rank with a frame other than its own is refused (_LEGACY_ERROR_TEMP_1036)",
      build: (_, d) => d.events.select(F.rank().over(byUser.rowsBetween(-1, 1))),
      expectFailure: true
    },
    {
      name: "a range frame with offsets over a string key is refused (SPECIFIED_WINDOW_FRAME_UNACCEPTED_TYPE)",
      build: (_, d) => d.events.select(F.count("*").over(Window.orderBy("user").rangeBetween(-1, 1))),
      expectFailure: true
    }
  ])
})
