/**
 * The statistical aggregates and the percentiles in a streaming aggregation: their buffers live
 * in the state store between micro-batches and across a restart from the checkpoint, and the
 * result after the last batch equals the batch result over all the rows (Spark's
 * `StreamingAggregationSuite` style, with both state store providers).
 */
import { describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../mod.ts"
import {
  AddData,
  CheckAnswer,
  CheckLastBatch,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"
import { providers, removeDir, tempDir } from "./StreamingTestKit.ts"

const Event = Schema.Struct({ k: Schema.String, v: Schema.Number, w: Schema.Number, tag: Schema.String })
type Event = typeof Event.Type

const batch1: ReadonlyArray<Event> = [
  { k: "a", v: 1, w: 2, tag: "a1" },
  { k: "a", v: 3, w: 1, tag: "a2" },
  { k: "b", v: 10, w: 4, tag: "b1" }
]
const batch2: ReadonlyArray<Event> = [
  { k: "a", v: 5, w: 7, tag: "a3" },
  { k: "b", v: 14, w: 3, tag: "b2" },
  { k: "a", v: 7, w: 5, tag: "a4" },
  { k: "b", v: 12, w: 8, tag: "b3" }
]

const aggregates = [
  F.stddev("v"),
  F.var_pop("v"),
  F.covar_samp("v", "w"),
  F.corr("v", "w"),
  F.max_by("tag", "w"),
  F.min_by("tag", "w"),
  F.median("v"),
  F.percentile("v", [0.25, 0.5]),
  F.percentile_approx("v", 0.5)
] as const

describe("statistical aggregates in a streaming aggregation", () => {
  for (const provider of providers) {
    describe(provider.name, () => {
      it.effect("stddev, covariance, max_by and percentiles across batches and a restart equal the batch result", () =>
        Effect.gen(function* () {
          const spark = yield* Session
          const dir = yield* tempDir()
          const input = yield* MemoryStream.make(Event)
          const query = input
            .toDF()
            .groupBy("k")
            .agg(...aggregates)
          const expected = (rows: ReadonlyArray<Event>) =>
            spark
              .createDataFrame(rows, "k string, v double, w double, tag string")
              .groupBy("k")
              .agg(...aggregates)
              .collect()
          const afterFirst = yield* expected(batch1)
          const afterAll = yield* expected([...batch1, ...batch2])
          yield* testStream(query, "complete", [
            StartStream({ checkpointLocation: dir }),
            AddData(input, ...batch1),
            CheckLastBatch(...afterFirst),
            StopStream,
            StartStream({ checkpointLocation: dir }),
            AddData(input, ...batch2),
            CheckAnswer(...afterAll)
          ])
          // Spark's answers, by hand: a = 1, 3, 5, 7 (w 2, 1, 7, 5); b = 10, 14, 12 (w 4, 3, 8)
          const a = afterAll.find((r) => r.k === "a")!
          const b = afterAll.find((r) => r.k === "b")!
          const check = (cond: boolean, what: string) => (cond ? Effect.void : Effect.die(new Error(what)))
          yield* check(a["stddev(v)"] === Math.sqrt(20 / 3), `stddev(v) of a: ${a["stddev(v)"]}`)
          yield* check(b["var_pop(v)"] === 8 / 3, `var_pop(v) of b: ${b["var_pop(v)"]}`)
          yield* check(a["max_by(tag, w)"] === "a3" && a["min_by(tag, w)"] === "a2", "max_by / min_by of a")
          yield* check(a["median(v)"] === 4 && b["median(v)"] === 12, "median")
          yield* check(
            JSON.stringify(a["percentile(v, array(0.25, 0.5), 1)"]) === "[2.5,4]",
            `percentile of a: ${JSON.stringify(a["percentile(v, array(0.25, 0.5), 1)"])}`
          )
          yield* check(a["percentile_approx(v, 0.5, 10000)"] === 3, "percentile_approx of a")
          yield* removeDir(dir)
        }).pipe(Effect.provide(provider.layer()))
      )
    })
  }
})
