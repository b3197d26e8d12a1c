/**
 * Spark's `StreamingAggregationSuite` as `testStream` scripts, with Spark's inputs and expected
 * outputs. Spark runs each script with every state format version; tributary has one format but
 * two state store providers, so the key scripts run with the DuckDB provider (the default) and
 * the file provider (`Session.layer({ stateStore: "memory" })`).
 *
 * Spark's `MemoryStream[Int]` is a `MemoryStream` of `Schema.Int` (one column `value`);
 * `groupBy("value").agg(count("*"))` gives rows `{ value, "count(1)" }`.
 */
import { rm } from "node:fs/promises"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import { F, MemoryStream, Session, Trigger } from "../../../mod.ts"
import {
  AddData,
  AdvanceClock,
  AssertOnQuery,
  CheckAnswer,
  CheckAnswerInOrder,
  CheckLastBatch,
  CheckNewAnswer,
  Execute,
  ExpectFailure,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import type { StreamingQuery } from "../../../structured/contracts/StreamingQuery.ts"
import type { StreamingQueryProgress } from "../../../structured/contracts/StreamingQueryProgress.ts"
import { awaitQuiescent, commitIds, providers, purgeCommits, removeDir, stateMetrics, tempDir } from "./StreamingTestKit.ts"

const Ints = Schema.Int

/** `(value, count(1))` rows. */
const vc = (value: number, count: number) => ({ value, "count(1)": count })

const countByValue = (input: MemoryStream<number>) => input.toDF().groupBy("value").agg(F.count("*"))

/** The progress of the last trigger that ran a batch (Spark's `lastExecutedBatch`). */
const lastExecutedBatch = (q: StreamingQuery): Effect.Effect<StreamingQueryProgress> =>
  Effect.map(q.recentProgress(), (ps) => ps.filter((p) => p.durationMs.addBatch !== undefined).at(-1)!)

/** Spark's checks on `StateStoreSaveExec`'s metrics, read from the last batch's progress. */
const stateNode = (expected: { readonly output?: number; readonly updated?: number; readonly total?: number }) =>
  AssertOnQuery(
    (q) =>
      Effect.map(lastExecutedBatch(q), (p) => {
        const op = p.stateOperators[0]
        return (
          p.stateOperators.length === 1 &&
          (expected.output === undefined || p.sink.numOutputRows === expected.output) &&
          (expected.updated === undefined || op.numRowsUpdated === expected.updated) &&
          (expected.total === undefined || op.numRowsTotal === expected.total)
        )
      }),
    `state operator output=${expected.output} updated=${expected.updated} total=${expected.total}`
  )

/** The number of seconds of a day (Spark's `DateTimeConstants.SECONDS_PER_DAY`). */
const SECONDS_PER_DAY = 86_400

/**
 * Spark's `prepareTestForChangingSchemaOfState`: runs `sum, avg, max` by `value % 10` once in
 * `dir`, then builds the same query with `collect_list` in place of `max` over a new stream that
 * already holds the first batch's data.
 */
const prepareTestForChangingSchemaOfState = (dir: string) =>
  Effect.gen(function* () {
    const input = yield* MemoryStream.make(Ints)
    const aggregated = input
      .toDF()
      .select(F.col("value").mod(10).as("id"), F.col("value"))
      .groupBy("id")
      .agg(F.sum("value").as("sum_value"), F.avg("value").as("avg_value"), F.max("value").as("max_value"))
    yield* testStream(aggregated, "update", [
      StartStream({ checkpointLocation: dir }),
      AddData(input, 1, 11),
      CheckLastBatch({ id: 1, sum_value: 12, avg_value: 6.0, max_value: 11 }),
      StopStream
    ])

    const input2 = yield* MemoryStream.make(Ints)
    const aggregated2 = input2
      .toDF()
      .select(F.col("value").mod(10).as("id"), F.col("value"))
      .groupBy("id")
      .agg(F.sum("value").as("sum_value"), F.avg("value").as("avg_value"), F.collect_list("value").as("values"))
    yield* input2.addData([1, 11])
    return { input2, aggregated2 }
  })

describe("StreamingAggregationSuite", () => {
  for (const provider of providers) {
    describe(provider.name, () => {
      it.effect("simple count, update mode", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Ints)
          yield* testStream(countByValue(input), "update", [
            AddData(input, 3),
            CheckLastBatch(vc(3, 1)),
            AddData(input, 3, 2),
            CheckLastBatch(vc(3, 2), vc(2, 1)),
            StopStream,
            StartStream(),
            AddData(input, 3, 2, 1),
            CheckLastBatch(vc(3, 3), vc(2, 2), vc(1, 1)),
            // By default we run in new tuple mode.
            AddData(input, 4, 4, 4, 4),
            CheckLastBatch(vc(4, 4))
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("simple count, complete mode", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Ints)
          yield* testStream(countByValue(input), "complete", [
            AddData(input, 3),
            CheckLastBatch(vc(3, 1)),
            AddData(input, 2),
            CheckLastBatch(vc(3, 1), vc(2, 1)),
            StopStream,
            StartStream(),
            AddData(input, 3, 2, 1),
            CheckLastBatch(vc(3, 2), vc(2, 2), vc(1, 1)),
            AddData(input, 4, 4, 4, 4),
            CheckLastBatch(vc(4, 4), vc(3, 2), vc(2, 2), vc(1, 1))
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("sort after aggregate in complete mode", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Ints)
          const aggregated = input
            .toDF()
            .groupBy("value")
            .agg(F.count("*"))
            .toDF("value", "count")
            .orderBy(F.col("count").desc())
          const r = (value: number, count: number) => ({ value, count })
          yield* testStream(aggregated, "complete", [
            AddData(input, 3),
            CheckAnswerInOrder(r(3, 1)),
            AddData(input, 2, 3),
            CheckAnswerInOrder(r(3, 2), r(2, 1)),
            StopStream,
            StartStream(),
            AddData(input, 3, 2, 1),
            CheckAnswerInOrder(r(3, 3), r(2, 2), r(1, 1)),
            AddData(input, 4, 4, 4, 4),
            CheckAnswerInOrder(r(4, 4), r(3, 3), r(2, 2), r(1, 1))
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("multiple keys", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Ints)
          const aggregated = input.toDF().groupBy(F.col("value"), F.col("value").plus(1)).agg(F.count("*"))
          const r = (a: number, b: number, n: number) => ({ value: a, "(value + 1)": b, "count(1)": n })
          yield* testStream(aggregated, "update", [
            AddData(input, 1, 2),
            CheckLastBatch(r(1, 2, 1), r(2, 3, 1)),
            AddData(input, 1, 2),
            CheckLastBatch(r(1, 2, 2), r(2, 3, 2))
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("state metrics - update/complete mode", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Ints)
          const aggregated = input
            .toDF()
            .flatMap((r) => [{ value: r.value }, { value: r.value + 1 }], Schema.Struct({ value: Schema.Int }))
            .groupBy("value")
            .agg(F.count("*"))
          // Test with Update mode
          yield* testStream(aggregated, "update", [
            AddData(input, 1),
            CheckLastBatch(vc(1, 1), vc(2, 1)),
            stateNode({ output: 2, updated: 2, total: 2 }),
            AddData(input, 2, 3),
            CheckLastBatch(vc(2, 2), vc(3, 2), vc(4, 1)),
            stateNode({ output: 3, updated: 3, total: 4 })
          ])
          // Test with Complete mode (Spark resets the MemoryStream; a new one here)
          const input2 = yield* MemoryStream.make(Ints)
          const aggregated2 = input2
            .toDF()
            .flatMap((r) => [{ value: r.value }, { value: r.value + 1 }], Schema.Struct({ value: Schema.Int }))
            .groupBy("value")
            .agg(F.count("*"))
          yield* testStream(aggregated2, "complete", [
            AddData(input2, 1),
            CheckLastBatch(vc(1, 1), vc(2, 1)),
            stateNode({ output: 2, updated: 2, total: 2 }),
            AddData(input2, 2, 3),
            CheckLastBatch(vc(1, 1), vc(2, 2), vc(3, 2), vc(4, 1)),
            stateNode({ output: 4, updated: 3, total: 4 })
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("state metrics - append mode", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Ints)
          const aggWithWatermark = input
            .toDF()
            .withColumn("eventTime", F.timestamp_seconds("value"))
            .withWatermark("eventTime", "10 seconds")
            .groupBy(F.window("eventTime", "5 seconds").as("window"))
            .agg(F.count("*").as("count"))
            .select(F.col("window").getField("start").cast("long").as("start"), F.col("count"))
          // Spark waits (`eventually`) for the no-data batch; here: until the loop is idle again.
          const lastBatchId = (id: number) =>
            AssertOnQuery(
              (q) =>
                Effect.andThen(
                  awaitQuiescent(q),
                  Effect.map(q.lastProgress(), (p) => p?.batchId === id)
                ),
              `last batch is ${id}`
            )
          yield* testStream(aggWithWatermark, "append", [
            // batchId 0
            AddData(input, 15),
            StartStream({ trigger: Trigger.ProcessingTime("1 second") }),
            CheckAnswer(), // watermark = 0
            stateNode({ output: 0, updated: 1, total: 1 }),

            // batchId 1 without data
            AdvanceClock("1 second"), // watermark = 5
            lastBatchId(1),
            CheckAnswer(),
            stateNode({ output: 0, updated: 0, total: 1 }),

            // batchId 2 with data
            AddData(input, 10, 12, 14),
            AdvanceClock("1 second"), // watermark = 5
            CheckAnswer(),
            stateNode({ output: 0, updated: 1, total: 2 }),

            // batchId 3 with data
            AddData(input, 25),
            AdvanceClock("1 second"), // watermark = 5
            CheckAnswer(),
            stateNode({ output: 0, updated: 1, total: 3 }),

            // batchId 4 without data
            AdvanceClock("1 second"), // watermark = 15
            lastBatchId(4),
            CheckAnswer({ start: 10, count: 3 }),
            stateNode({ output: 1, updated: 0, total: 2 })
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("midbatch failure", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Ints)
          let firstTime = true
          const aggregated = input
            .toDF()
            .map(
              (r) => {
                if (r.value === 4 && firstTime) {
                  firstTime = false
                  throw new Error("injected failure")
                }
                return r
              },
              Schema.Struct({ value: Schema.Int })
            )
            .groupBy("value")
            .agg(F.count("*"))
          yield* testStream(aggregated, "update", [
            StartStream(),
            AddData(input, 1, 2, 3, 4),
            ExpectFailure(undefined, "injected failure"),
            StartStream(),
            CheckLastBatch(vc(1, 1), vc(2, 1), vc(3, 1), vc(4, 1))
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      // Spark replaces current_timestamp() by the nondeterministic CurrentBatchTimestamp before
      // optimizing a streaming batch, so the filter stays above the state (core/optimizer/Optimizer.ts).
      it.effect("prune results by current_time, complete mode", () =>
        Effect.gen(function* () {
          const dir = yield* tempDir()
          const input = yield* MemoryStream.make(Ints)
          const aggregated = input
            .toDF()
            .groupBy("value")
            .agg(F.count("*"))
            .where(F.col("value").geq(F.current_timestamp().cast("long").minus(10)))
          const trigger = Trigger.ProcessingTime("10 seconds")
          yield* testStream(aggregated, "complete", [
            StartStream({ trigger, checkpointLocation: dir }),

            // advance clock to 10 seconds, all keys retained
            AddData(input, 0, 5, 5, 10),
            AdvanceClock("10 seconds"),
            CheckLastBatch(vc(0, 1), vc(5, 2), vc(10, 1)),

            // advance clock to 20 seconds, should retain keys >= 10
            AddData(input, 15, 15, 20),
            AdvanceClock("10 seconds"),
            CheckLastBatch(vc(10, 1), vc(15, 2), vc(20, 1)),

            // advance clock to 30 seconds, should retain keys >= 20
            AddData(input, 0, 85),
            AdvanceClock("10 seconds"),
            CheckLastBatch(vc(20, 1), vc(85, 1)),

            // bounce stream and ensure correct batch timestamp is used
            // i.e., we don't take it from the clock, which is at 90 seconds.
            StopStream,
            // Spark purges the whole commit log (purge(3)); tributary refuses a commit log that
            // lags the offset log by more than one batch (a CheckpointError), so only the last
            // commit goes: the last batch re-runs all the same.
            Execute(
              Effect.gen(function* () {
                const ids = yield* commitIds(dir)
                assert.deepStrictEqual(ids, [0, 1, 2])
                yield* Effect.promise(() => rm(join(dir, "commits", "2")))
                // advance by a minute i.e., 90 seconds total
                yield* TestClock.adjust("60 seconds")
              })
            ),
            StartStream({ trigger, checkpointLocation: dir }),
            // The commit log blown, causing the last batch to re-run
            CheckLastBatch(vc(20, 1), vc(85, 1)),
            AssertOnQuery(() =>
              Effect.map(
                Effect.clockWith((c) => c.currentTimeMillis),
                (t) => t === 90_000
              )
            ),

            // advance clock to 100 seconds, should retain keys >= 90
            AddData(input, 85, 90, 100, 105),
            AdvanceClock("10 seconds"),
            CheckLastBatch(vc(90, 1), vc(100, 1), vc(105, 1))
          ]).pipe(Effect.ensuring(removeDir(dir)))
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("prune results by current_time, complete mode (filter kept above the aggregation)", () =>
        Effect.gen(function* () {
          const dir = yield* tempDir()
          const input = yield* MemoryStream.make(Ints)
          const aggregated = input
            .toDF()
            .groupBy("value")
            .agg(F.count("*"))
            // Spark's filter, made to reference the aggregate so that no optimizer moves it
            // below the state (see the known bug above): `value + 0 * count(1) >= now - 10`.
            .where(F.col("value").plus(F.col("count(1)").multiply(0)).geq(F.current_timestamp().cast("long").minus(10)))
          const trigger = Trigger.ProcessingTime("10 seconds")
          yield* testStream(aggregated, "complete", [
            StartStream({ trigger, checkpointLocation: dir }),

            // advance clock to 10 seconds, all keys retained
            AddData(input, 0, 5, 5, 10),
            AdvanceClock("10 seconds"),
            CheckLastBatch(vc(0, 1), vc(5, 2), vc(10, 1)),

            // advance clock to 20 seconds, should retain keys >= 10
            AddData(input, 15, 15, 20),
            AdvanceClock("10 seconds"),
            CheckLastBatch(vc(10, 1), vc(15, 2), vc(20, 1)),

            // advance clock to 30 seconds, should retain keys >= 20
            AddData(input, 0, 85),
            AdvanceClock("10 seconds"),
            CheckLastBatch(vc(20, 1), vc(85, 1)),

            // bounce stream and ensure correct batch timestamp is used
            // i.e., we don't take it from the clock, which is at 90 seconds.
            StopStream,
            // Spark purges the whole commit log (purge(3)); tributary refuses a commit log that
            // lags the offset log by more than one batch (a CheckpointError), so only the last
            // commit goes: the last batch re-runs all the same.
            Execute(
              Effect.gen(function* () {
                const ids = yield* commitIds(dir)
                assert.deepStrictEqual(ids, [0, 1, 2])
                yield* Effect.promise(() => rm(join(dir, "commits", "2")))
                // advance by a minute i.e., 90 seconds total
                yield* TestClock.adjust("60 seconds")
              })
            ),
            StartStream({ trigger, checkpointLocation: dir }),
            // The commit log blown, causing the last batch to re-run
            CheckLastBatch(vc(20, 1), vc(85, 1)),
            AssertOnQuery(() =>
              Effect.map(
                Effect.clockWith((c) => c.currentTimeMillis),
                (t) => t === 90_000
              )
            ),

            // advance clock to 100 seconds, should retain keys >= 90
            AddData(input, 85, 90, 100, 105),
            AdvanceClock("10 seconds"),
            CheckLastBatch(vc(90, 1), vc(100, 1), vc(105, 1))
          ]).pipe(Effect.ensuring(removeDir(dir)))
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("prune results by current_date, complete mode", () =>
        Effect.gen(function* () {
          const dir = yield* tempDir()
          const input = yield* MemoryStream.make(Ints)
          // Spark's `TimeZone.getDefault.getID`; the session time zone is UTC.
          const tz = "UTC"
          const aggregated = input
            .toDF()
            .select(F.to_utc_timestamp(F.from_unixtime(F.col("value").multiply(SECONDS_PER_DAY)), tz))
            .toDF("value")
            .groupBy("value")
            .agg(F.count("*"))
            .where(F.col("value").cast("date").geq(F.date_sub(F.current_date(), 10)))
            .select(F.col("value").cast("long").divide(SECONDS_PER_DAY).cast("long"), F.col("count(1)"))
          const day = "CAST((CAST(value AS BIGINT) / 86400) AS BIGINT)"
          const r = (d: number, n: number) => ({ [day]: d, "count(1)": n })
          const trigger = Trigger.ProcessingTime("10 day")
          yield* testStream(aggregated, "complete", [
            StartStream({ trigger, checkpointLocation: dir }),
            // advance clock to 10 days, should retain all keys
            AddData(input, 0, 5, 5, 10),
            AdvanceClock("10 days"),
            CheckLastBatch(r(0, 1), r(5, 2), r(10, 1)),
            // advance clock to 20 days, should retain keys >= 10
            AddData(input, 15, 15, 20),
            AdvanceClock("10 days"),
            CheckLastBatch(r(10, 1), r(15, 2), r(20, 1)),
            // advance clock to 30 days, should retain keys >= 20
            AddData(input, 85),
            AdvanceClock("10 days"),
            CheckLastBatch(r(20, 1), r(85, 1)),

            // bounce stream and ensure correct batch timestamp is used
            // i.e., we don't take it from the clock, which is at 90 days.
            StopStream,
            // As in "prune results by current_time": only the last commit goes (Spark purges all).
            Execute(
              Effect.gen(function* () {
                assert.deepStrictEqual(yield* commitIds(dir), [0, 1, 2])
                yield* Effect.promise(() => rm(join(dir, "commits", "2")))
                // advance by 60 days i.e., 90 days total
                yield* TestClock.adjust("60 days")
              })
            ),
            StartStream({ trigger, checkpointLocation: dir }),
            // Commit log blown, causing a re-run of the last batch
            CheckLastBatch(r(20, 1), r(85, 1)),

            // advance clock to 100 days, should retain keys >= 90
            AddData(input, 85, 90, 100, 105),
            AdvanceClock("10 days"),
            CheckLastBatch(r(90, 1), r(100, 1), r(105, 1))
          ]).pipe(Effect.ensuring(removeDir(dir)))
        }).pipe(Effect.provide(provider.layer()))
      )

      // Spark's `BlockRDDBackedSource` can offer a batch with no partitions at all; a MemoryStream
      // batch of no rows is tributary's nearest: the global count must keep its state.
      it.effect("SPARK-21977: coalesce(1) with 0 partition RDD should be repartitioned to 1", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Schema.Struct({ a: Schema.Int }))
          const aggregated = input.toDF().coalesce(1).groupBy().count()
          yield* testStream(aggregated, "complete", [
            AddData(input, { a: 1 }),
            CheckLastBatch({ count: 1 }),
            AddData(input), // create an empty trigger
            CheckLastBatch({ count: 1 }),
            AddData(input, { a: 2 }, { a: 3 }),
            CheckLastBatch({ count: 3 }),
            AddData(input),
            CheckLastBatch({ count: 3 }),
            StopStream
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect(
        "SPARK-21977: coalesce(1) with aggregation should still be repartitioned when it has non-empty grouping keys",
        () =>
          Effect.gen(function* () {
            const dir = yield* tempDir()
            const input = yield* MemoryStream.make(Schema.Struct({ a: Schema.Int }))
            const createDf = (partitions: number) =>
              input.toDF().coalesce(partitions).groupBy(F.col("a").mod(1)).count()
            const r = (k: number, count: number) => ({ "(a % 1)": k, count })
            yield* testStream(createDf(1), "complete", [
              StartStream({ checkpointLocation: dir }),
              AddData(input, { a: 1 }),
              CheckLastBatch(r(0, 1)),
              StopStream
            ])
            yield* testStream(createDf(2), "complete", [
              StartStream({ checkpointLocation: dir }),
              Execute((q) => q!.processAllAvailable()),
              AddData(input, { a: 2 }, { a: 3 }, { a: 4 }),
              CheckLastBatch(r(0, 4)),
              AddData(input),
              CheckLastBatch(r(0, 4)),
              StopStream
            ]).pipe(Effect.ensuring(removeDir(dir)))
          }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("SPARK-35896: metrics in StateOperatorProgress are output correctly", () =>
        Effect.gen(function* () {
          const confs = { "spark.sql.shuffle.partitions": "3" }
          {
            const { assertNumStateRows, assertStateOperatorProgressMetric } = stateMetrics()
            const input = yield* MemoryStream.make(Ints)
            yield* testStream(countByValue(input), "update", [
              StartStream({ additionalConfs: confs }),
              AddData(input, 3, 2, 1, 3),
              CheckLastBatch(vc(3, 2), vc(2, 1), vc(1, 1)),
              assertNumStateRows({ total: [3], updated: [3], droppedByWatermark: [0], removed: [0] }),

              AddData(input, 1, 4),
              CheckLastBatch(vc(1, 2), vc(4, 1)),
              assertStateOperatorProgressMetric("stateStoreSave", 3, 3)
            ])
          }
          // Spark resets the MemoryStream: a new one here.
          {
            const { assertNumStateRows, assertStateOperatorProgressMetric } = stateMetrics()
            const input = yield* MemoryStream.make(Ints)
            yield* testStream(countByValue(input), "complete", [
              StartStream({ additionalConfs: confs }),
              AddData(input, 3, 2, 1, 3),
              CheckLastBatch(vc(3, 2), vc(2, 1), vc(1, 1)),
              assertNumStateRows({ total: [3], updated: [3], droppedByWatermark: [0], removed: [0] }),

              AddData(input, 1, 4),
              CheckLastBatch(vc(3, 2), vc(2, 1), vc(1, 2), vc(4, 1)),
              assertStateOperatorProgressMetric("stateStoreSave", 3, 3)
            ])
          }
          // with watermark and append output mode
          {
            const { assertNumStateRows, assertStateOperatorProgressMetric } = stateMetrics()
            const input = yield* MemoryStream.make(Ints)
            const aggWithWatermark = input
              .toDF()
              .withColumn("eventTime", F.timestamp_seconds("value"))
              .withWatermark("eventTime", "10 seconds")
              .groupBy(F.window("eventTime", "5 seconds").as("window"))
              .agg(F.count("*").as("count"))
              .select(F.col("window").getField("start").cast("long").as("start"), F.col("count"))
            yield* testStream(aggWithWatermark, "append", [
              StartStream({ additionalConfs: confs }),
              AddData(input, 3, 2, 1, 9),
              CheckLastBatch(),
              assertStateOperatorProgressMetric("stateStoreSave", 3, 3),

              AddData(input, 25), // Advance watermark to 15 secs, no-data-batch drops rows <= 15
              CheckLastBatch({ start: 0, count: 3 }, { start: 5, count: 1 }),
              assertNumStateRows({ total: [1], updated: [1], droppedByWatermark: [0], removed: [2] })
            ])
          }
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("changing schema of state when restarting query - schema check off", () =>
        Effect.gen(function* () {
          const dir = yield* tempDir()
          const { input2, aggregated2 } = yield* prepareTestForChangingSchemaOfState(dir)
          yield* testStream(aggregated2, "update", [
            StartStream({
              checkpointLocation: dir,
              additionalConfs: { "spark.sql.streaming.stateStore.stateSchemaCheck": "false" }
            }),
            AddData(input2, 21),
            ExpectFailure(),
            Execute((q) =>
              Effect.gen(function* () {
                // it would bring other error in runtime, but it shouldn't check schema in any way
                const error = yield* q!.exception()
                assert.notInclude(error?.message ?? "", "does not match existing")
                const cause = error?.cause as { readonly reason?: string } | undefined
                assert.notStrictEqual(cause?.reason, "SchemaIncompatible")
              })
            )
          ]).pipe(Effect.ensuring(removeDir(dir)))
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("SPARK-22230: last should change with new batches", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Ints)
          const aggregated = input.toDF().agg(F.last("value"))
          const l = (v: number) => ({ "last(value)": v })
          yield* testStream(aggregated, "complete", [
            AddData(input, 1, 2, 3),
            CheckLastBatch(l(3)),
            AddData(input, 4, 5, 6),
            CheckLastBatch(l(6)),
            AddData(input),
            CheckLastBatch(l(6)),
            AddData(input, 0),
            CheckLastBatch(l(0))
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("changing schema of state when restarting query", () =>
        Effect.gen(function* () {
          const dir = yield* tempDir()
          const { input2, aggregated2 } = yield* prepareTestForChangingSchemaOfState(dir)
          // if we don't have verification phase on state schema, modified query would throw NPE with
          // stack trace which end users would not easily understand
          yield* testStream(aggregated2, "update", [
            StartStream({ checkpointLocation: dir }),
            AddData(input2, 21),
            ExpectFailure("StateStoreError", "operator 0"),
            Execute((q) =>
              Effect.gen(function* () {
                const error = yield* q!.exception()
                const message = error?.message ?? ""
                // Spark 4: StateStoreValueSchemaNotCompatible, "[STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE]
                // Provided value schema does not match existing state value schema ..."
                assert.include(message, "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE")
                assert.include(message, "does not match existing")
                // names the operator, the store and the field that changed (the third
                // aggregate's buffer: max(value) -> collect_list(value))
                assert.include(message, "operator 0")
                assert.include(message, "field 'collect_list(value)' changed type from bigint to array<bigint>")
                const cause = error?.cause as { readonly _tag?: string; readonly reason?: string } | undefined
                assert.strictEqual(cause?._tag, "StateStoreError")
                assert.strictEqual(cause?.reason, "SchemaIncompatible")
                // nothing ran: no batch, no progress
                assert.deepStrictEqual(yield* q!.recentProgress(), [])
              })
            )
          ]).pipe(Effect.ensuring(removeDir(dir)))
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("restarting a count as a sum of a string column fails with a StateStoreError", () =>
        Effect.gen(function* () {
          const dir = yield* tempDir()
          const Words = Schema.Struct({ word: Schema.String, n: Schema.String })
          const input = yield* MemoryStream.make(Words)
          yield* testStream(input.toDF().groupBy("word").agg(F.count("*").as("c")), "complete", [
            StartStream({ checkpointLocation: dir }),
            AddData(input, { word: "a", n: "1" }),
            CheckAnswer({ word: "a", c: 1 }),
            StopStream
          ])
          yield* testStream(input.toDF().groupBy("word").agg(F.sum("n").as("c")), "complete", [
            StartStream({ checkpointLocation: dir }),
            AddData(input, { word: "a", n: "2" }),
            ExpectFailure("StateStoreError"),
            Execute((q) =>
              Effect.gen(function* () {
                const error = yield* q!.exception()
                const cause = error?.cause as {
                  readonly _tag?: string
                  readonly reason?: string
                  readonly operatorId?: number
                  readonly message?: string
                }
                assert.strictEqual(cause?._tag, "StateStoreError")
                assert.strictEqual(cause?.reason, "SchemaIncompatible")
                assert.strictEqual(cause?.operatorId, 0)
                assert.include(cause?.message ?? "", "operator 0")
                assert.include(cause?.message ?? "", "bigint")
                assert.include(cause?.message ?? "", "double")
                assert.deepStrictEqual(yield* q!.recentProgress(), [])
              })
            )
          ]).pipe(Effect.ensuring(removeDir(dir)))
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("every aggregate's state survives a restart (streaming equals batch)", () =>
        Effect.gen(function* () {
          const spark = yield* Session
          const Row = Schema.Struct({
            k: Schema.String,
            i: Schema.NullOr(Schema.Int),
            d: Schema.NullOr(Schema.Number),
            s: Schema.NullOr(Schema.String),
            t: Schema.NullOr(Schema.Date)
          })
          // (Spark refuses countDistinct on a stream: approx_count_distinct stands in.)
          const aggregate = (df: DataFrame<typeof Row.Type>) =>
            df
              .groupBy("k")
              .agg(
                F.count("*").as("rows"),
                F.sum("i").as("sum_i"),
                F.sum("d").as("sum_d"),
                F.avg("i").as("avg_i"),
                F.min("s").as("min_s"),
                F.max("t").as("max_t"),
                F.first("s").as("first_s"),
                F.last("i", true).as("last_i"),
                F.collect_list("i").as("list_i"),
                F.sort_array(F.collect_set("s")).as("set_s"),
                F.approx_count_distinct("i").as("approx_i")
              )
          const batches: ReadonlyArray<ReadonlyArray<typeof Row.Type>> = [
            [
              { k: "a", i: 1, d: 0.5, s: "x", t: new Date(1000) },
              { k: "a", i: null, d: null, s: null, t: null },
              { k: "b", i: 7, d: -2.25, s: "y", t: new Date(5000) }
            ],
            [
              { k: "a", i: 3, d: 1.25, s: "w", t: new Date(500) },
              { k: "b", i: 7, d: null, s: "y", t: null }
            ],
            [
              { k: "c", i: null, d: null, s: null, t: null },
              { k: "a", i: 2, d: 4, s: "z", t: new Date(9000) }
            ]
          ]
          const input = yield* MemoryStream.make(Row)
          const expected = (n: number) => aggregate(spark.createDataFrame(batches.slice(0, n).flat(), Row)).collect()
          yield* testStream(aggregate(input.toDF()), "complete", [
            AddData(input, ...batches[0]),
            CheckAnswer(...(yield* expected(1))),
            StopStream,
            StartStream(),
            AddData(input, ...batches[1]),
            CheckAnswer(...(yield* expected(2))),
            StopStream,
            AddData(input, ...batches[2]),
            StartStream(),
            CheckAnswer(...(yield* expected(3)))
          ])
          const all = yield* expected(3)
          // Spot-check the batch result itself against Spark's semantics.
          const a = all.find((r) => r.k === "a")!
          assert.deepStrictEqual(
            { ...a, max_t: (a.max_t as Date | null)?.getTime() },
            {
              k: "a",
              rows: 4,
              sum_i: 6,
              sum_d: 5.75,
              avg_i: 2,
              min_s: "w",
              max_t: 9000,
              first_s: "x",
              last_i: 2,
              list_i: [1, 3, 2],
              set_s: ["w", "x", "z"],
              approx_i: 3
            }
          )
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("state survives restarts across many batches (recovery)", () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Ints)
          yield* testStream(countByValue(input), "complete", [
            AddData(input, 1, 2),
            CheckAnswer(vc(1, 1), vc(2, 1)),
            StopStream,
            AddData(input, 1),
            AddData(input, 3),
            StartStream(),
            CheckAnswer(vc(1, 2), vc(2, 1), vc(3, 1)),
            StopStream,
            StartStream(),
            AddData(input, 2, 2),
            CheckAnswer(vc(1, 2), vc(2, 3), vc(3, 1)),
            StopStream,
            StartStream(),
            CheckAnswer(vc(1, 2), vc(2, 3), vc(3, 1))
          ])
        }).pipe(Effect.provide(provider.layer()))
      )
    })
  }

  // Spark's own scripts purge the whole commit log (`q.commitLog.purge(3)`) before the restart.
  // Spark's `MicroBatchExecution.populateStartOffsets` only logs "no commit log present" (or
  // "Batch completion log latest batch id is X, which is not trailing batchid Y by one") and
  // re-runs the latest batch of the offset log, as tributary does; the cases above remove only
  // the last commit.
  it.effect("prune results by current_time or localtimestamp, complete mode (current_time; commitLog.purge(3))", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const input = yield* MemoryStream.make(Ints)
      const aggregated = input
        .toDF()
        .groupBy("value")
        .agg(F.count("*"))
        .where(F.col("value").geq(F.current_timestamp().cast("long").minus(10)))
      const trigger = Trigger.ProcessingTime("10 seconds")
      yield* testStream(aggregated, "complete", [
        StartStream({ trigger, checkpointLocation: dir }),
        AddData(input, 0, 5, 5, 10),
        AdvanceClock("10 seconds"),
        CheckLastBatch(vc(0, 1), vc(5, 2), vc(10, 1)),
        AddData(input, 15, 15, 20),
        AdvanceClock("10 seconds"),
        CheckLastBatch(vc(10, 1), vc(15, 2), vc(20, 1)),
        AddData(input, 0, 85),
        AdvanceClock("10 seconds"),
        CheckLastBatch(vc(20, 1), vc(85, 1)),
        StopStream,
        Execute(
          Effect.gen(function* () {
            yield* purgeCommits(dir, 3)
            assert.deepStrictEqual(yield* commitIds(dir), [])
            // advance by a minute i.e., 90 seconds total
            yield* TestClock.adjust("60 seconds")
          })
        ),
        StartStream({ trigger, checkpointLocation: dir }),
        // The commit log blown, causing the last batch to re-run
        CheckLastBatch(vc(20, 1), vc(85, 1)),
        AssertOnQuery(() => Effect.map(Effect.clockWith((c) => c.currentTimeMillis), (t) => t === 90_000)),
        // advance clock to 100 seconds, should retain keys >= 90
        AddData(input, 85, 90, 100, 105),
        AdvanceClock("10 seconds"),
        CheckLastBatch(vc(90, 1), vc(100, 1), vc(105, 1))
      ]).pipe(Effect.ensuring(removeDir(dir)))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("prune results by current_date, complete mode (commitLog.purge(3))", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const input = yield* MemoryStream.make(Ints)
      const aggregated = input
        .toDF()
        .select(F.to_utc_timestamp(F.from_unixtime(F.col("value").multiply(SECONDS_PER_DAY)), "UTC"))
        .toDF("value")
        .groupBy("value")
        .agg(F.count("*"))
        .where(F.col("value").cast("date").geq(F.date_sub(F.current_date(), 10)))
        .select(F.col("value").cast("long").divide(SECONDS_PER_DAY).cast("long"), F.col("count(1)"))
      const day = "CAST((CAST(value AS BIGINT) / 86400) AS BIGINT)"
      const r = (d: number, n: number) => ({ [day]: d, "count(1)": n })
      const trigger = Trigger.ProcessingTime("10 day")
      yield* testStream(aggregated, "complete", [
        StartStream({ trigger, checkpointLocation: dir }),
        AddData(input, 0, 5, 5, 10),
        AdvanceClock("10 days"),
        CheckLastBatch(r(0, 1), r(5, 2), r(10, 1)),
        AddData(input, 15, 15, 20),
        AdvanceClock("10 days"),
        CheckLastBatch(r(10, 1), r(15, 2), r(20, 1)),
        AddData(input, 85),
        AdvanceClock("10 days"),
        CheckLastBatch(r(20, 1), r(85, 1)),
        StopStream,
        Execute(
          Effect.gen(function* () {
            yield* purgeCommits(dir, 3)
            // advance by 60 days i.e., 90 days total
            yield* TestClock.adjust("60 days")
          })
        ),
        StartStream({ trigger, checkpointLocation: dir }),
        // Commit log blown, causing a re-run of the last batch
        CheckLastBatch(r(20, 1), r(85, 1)),
        // advance clock to 100 days, should retain keys >= 90
        AddData(input, 85, 90, 100, 105),
        AdvanceClock("10 days"),
        CheckLastBatch(r(90, 1), r(100, 1), r(105, 1))
      ]).pipe(Effect.ensuring(removeDir(dir)))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("count distinct", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ _1: Schema.Int, _2: Schema.Array(Schema.Int) }))
      const aggregated = input
        .toDF()
        .select(F.col("*"), F.explode("_2").as("value"))
        .groupBy(F.col("_1"))
        .agg(F.size(F.collect_set("value")))
      yield* testStream(aggregated, "update", [
        AddData(input, { _1: 1, _2: [1, 2] }),
        CheckLastBatch({ _1: 1, "size(collect_set(value))": 2 })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("simple count, append mode", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Ints)
      const error = yield* Effect.flip(countByValue(input).writeStream.outputMode("append").format("noop").start())
      assert.strictEqual(error._tag, "AnalysisError")
      for (const m of ["append", "not supported"]) assert.include(error.message.toLowerCase(), m)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-29438: ensure UNION doesn't lead streaming aggregation to use shifted partition IDs", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const construct = Effect.gen(function* () {
        const input1 = yield* MemoryStream.make(Ints)
        const input2 = yield* MemoryStream.make(Ints)
        const df1 = input1.toDF().select(F.col("value"), F.col("value").plus(1).as("count(1)"))
        const df2 = input2.toDF().groupBy("value").agg(F.count("*"))
        return { input1, input2, union: df1.union(df2) }
      })
      const first = yield* construct
      yield* testStream(first.union, "update", [
        StartStream({ checkpointLocation: dir }),
        StopStream,
        AddData(first.input1, 11, 12),
        AddData(first.input2, 21, 22),
        StartStream({ checkpointLocation: dir }),
        CheckNewAnswer(vc(11, 12), vc(12, 13), vc(21, 1), vc(22, 1)),
        StopStream
      ])
      const second = yield* construct
      yield* second.input1.addData([11, 12])
      yield* second.input2.addData([21, 22])
      yield* testStream(second.union, "update", [
        StopStream,
        AddData(second.input1, 13, 14),
        AddData(second.input2, 22, 23),
        StartStream({ checkpointLocation: dir }),
        CheckNewAnswer(vc(13, 14), vc(14, 15), vc(22, 2), vc(23, 1))
      ]).pipe(Effect.ensuring(removeDir(dir)))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-23004: collect_list over a batch of 128 rows", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Ints)
      const df = input
        .toDF()
        .select(F.col("value").as("group"), F.col("value"))
        .groupBy("group")
        .agg(F.collect_list("value"))
      const values = Array.from({ length: 128 }, (_, i) => i + 1)
      yield* testStream(df, "update", [
        AddData(input, ...values),
        CheckLastBatch(...values.map((v) => ({ group: v, "collect_list(value)": [v] })))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-19690: do not convert batch aggregation in streaming query to streaming", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const streamInput = yield* MemoryStream.make(Ints)
      const batchDF = spark
        .createDataFrame(
          [1, 2, 3, 4, 5].map((value) => ({ value })),
          Schema.Struct({ value: Schema.Int })
        )
        .withColumn("parity", F.col("value").mod(2))
        .groupBy("parity")
        .agg(F.count("*").as("joinValue"))
      const joinDF = streamInput.toDF().join(batchDF, F.col("value").eq(F.col("parity")))
      const r = (value: number, parity: number, joinValue: number) => ({ value, parity, joinValue })
      yield* testStream(joinDF, "append", [
        AddData(streamInput, 0, 1, 2, 3),
        CheckLastBatch(r(0, 0, 2), r(1, 1, 3)),
        AddData(streamInput, 0, 1, 2, 3),
        CheckLastBatch(r(0, 0, 2), r(1, 1, 3))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("count of all types, with nulls", () =>
    Effect.gen(function* () {
      // count(col) counts the non-null values of any type; count("*") counts rows.
      const Row = Schema.Struct({
        k: Schema.String,
        s: Schema.NullOr(Schema.String),
        i: Schema.NullOr(Schema.Int),
        d: Schema.NullOr(Schema.Number),
        b: Schema.NullOr(Schema.Boolean),
        t: Schema.NullOr(Schema.Date),
        a: Schema.NullOr(Schema.Array(Schema.Int)),
        st: Schema.NullOr(Schema.Struct({ x: Schema.Int }))
      })
      const input = yield* MemoryStream.make(Row)
      const counts = input
        .toDF()
        .groupBy("k")
        .agg(
          F.count("*").as("rows"),
          F.count("s").as("s"),
          F.count("i").as("i"),
          F.count("d").as("d"),
          F.count("b").as("b"),
          F.count("t").as("t"),
          F.count("a").as("a"),
          F.count("st").as("st")
        )
      const full = { s: "x", i: 1, d: 1.5, b: true, t: new Date(0), a: [1], st: { x: 1 } }
      const empty = { s: null, i: null, d: null, b: null, t: null, a: null, st: null }
      const c = (k: string, rows: number, n: number) => ({ k, rows, s: n, i: n, d: n, b: n, t: n, a: n, st: n })
      yield* testStream(counts, "complete", [
        AddData(input, { k: "p", ...full }, { k: "p", ...empty }, { k: "q", ...empty }),
        CheckAnswer(c("p", 2, 1), c("q", 1, 0)),
        StopStream,
        StartStream(),
        AddData(input, { k: "q", ...full }, { k: "p", ...full }),
        CheckAnswer(c("p", 3, 2), c("q", 2, 1))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})
