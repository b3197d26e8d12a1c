/**
 * Spark as the oracle for the statistical aggregates, `max_by`/`min_by`, the percentiles and
 * `arrays_zip`: the same DataFrame code on the local engine and on Spark 4.2 through Spark
 * Connect, over the same generated files, must give the same rows and the same column names
 * (the columns are left unaliased, so Spark's default names are compared too).
 */
import { describe } from "vitest"
import * as F from "../../core/F.ts"
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

describe("differential: statistical aggregates and percentiles", () => {
  cases([
    {
      name: "stddev, variance, covariance and corr families, by Spark's names",
      // Spark merges per-partition buffers: the last digits may differ from the one-pass fold
      opts: { roundDoubles: true },
      build: (_, d) =>
        d.events
          .groupBy("user")
          .agg(
            F.stddev("amount"),
            F.std("amount"),
            F.stddev_samp("price"),
            F.stddev_pop("amount"),
            F.variance("amount"),
            F.var_samp("price"),
            F.var_pop("amount"),
            F.skewness("price"),
            F.kurtosis("amount"),
            F.corr("amount", "price"),
            F.covar_pop("amount", "id"),
            F.covar_samp("amount", "price")
          )
    },
    {
      name: "max_by, min_by, median, percentile and percentile_approx, by Spark's names",
      build: (_, d) =>
        d.events
          .groupBy("category")
          .agg(
            F.max_by("user", "id"),
            F.min_by("amount", "id"),
            F.median("amount"),
            F.percentile("price", 0.5),
            F.percentile("amount", [0.25, 0.75]),
            F.percentile_approx("amount", 0.5),
            F.percentile_approx("ts", [0.1, 0.9], 100),
            F.approx_percentile("price", 0.5, 1000)
          )
    },
    {
      name: "arrays_zip: fields named by columns, aliases and positions",
      build: (_, d) =>
        d.events.select(
          "id",
          F.arrays_zip(F.array("id", "amount").as("nums"), F.split(F.col("note"), " ")),
          F.arrays_zip(F.array("user"), F.array("category").as("c")).as("z")
        )
    }
  ])
})

describe("differential: both engines refuse", () => {
  cases([
    {
      name: "a percentage out of [0, 1]",
      expectFailure: true,
      build: (_, d) => d.events.agg(F.percentile("amount", 1.5))
    },
    {
      name: "a percentile_approx accuracy of 0",
      expectFailure: true,
      build: (_, d) => d.events.agg(F.percentile_approx("amount", 0.5, 0))
    },
    {
      name: "a non-constant percentage",
      expectFailure: true,
      build: (_, d) => d.events.agg(F.percentile_approx("amount", F.col("price")))
    },
    {
      name: "stddev of a boolean",
      expectFailure: true,
      build: (_, d) => d.events.agg(F.stddev(F.col("amount").gt(1)))
    },
    {
      name: "max_by ordered by a map",
      expectFailure: true,
      build: (_, d) => d.events.agg(F.max_by("id", F.create_map(F.lit("k"), F.col("amount"))))
    }
  ])
})
