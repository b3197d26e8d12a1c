/**
 * Spark's `FlatMapGroupsWithStateSuite` as `testStream` scripts: running counts with state
 * removal, lazy iterators, aggregation after the operator, processing-time and event-time
 * timeouts, initial state (every case, struct keys, duplicates, null keys, batch mode),
 * failure and restart, and the unsupported-operation rules of `UnsupportedOperationsSuite`.
 *
 * Spark's manual clock is Effect's test clock. Spark advances it by 10 seconds at once with a
 * 1-second trigger; here the clock moves one trigger at a time and the script waits for each
 * batch (`tick`), so every batch timestamp is exact. Spark runs a batch every trigger with a
 * processing-time timeout; tributary runs one when the earliest timeout can fire, which gives
 * the same answers and the same state metrics.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Clock, Effect, Exit, Schema } from "effect"
// the public names, from the root module as users import them
import { F, type GroupState, GroupStateTimeout, MemoryStream, Session, Trigger } from "../../../mod.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import {
  AddData,
  AdvanceClock,
  AssertOnQuery,
  CheckNewAnswer,
  ExpectFailure,
  StartStream,
  type StreamAction,
  StopStream,
  testStream
} from "../../../structured/testing.ts"
import { awaitQuiescent, providers, removeDir, stateMetrics, tempDir } from "./StreamingTestKit.ts"

const RunningCount = Schema.Struct({ count: Schema.Int })
const KeyCount = Schema.Struct({ key: Schema.String, count: Schema.String })
const kc = <K extends string | null>(key: K, count: string) => ({ key, count })

/** One trigger of a 1-second processing-time trigger, waiting for its batch. */
const tick = (seconds: number): ReadonlyArray<StreamAction> =>
  Array.from({ length: seconds }, () => [
    AdvanceClock("1 second"),
    AssertOnQuery((q) => Effect.as(awaitQuiescent(q), true), "batch done")
  ]).flat()

const everySecond = Trigger.ProcessingTime("1 second")

/**
 * `StateStoreMetricsTest.assertNumStateRows` for a query on a processing-time trigger under the
 * test clock, where `processAllAvailable` would wait for a trigger that never comes: it reads the
 * progress of the batches that already ran (each `tick` waits for its batch).
 */
const triggeredStateMetrics = () => {
  let lastChecked = -1
  let lastRun: string | undefined
  return (expected: { readonly total: number; readonly updated: number; readonly removed: number }): StreamAction =>
    AssertOnQuery(
      (q) =>
        Effect.map(q.recentProgress(), (ps) => {
          if (q.runId !== lastRun) lastChecked = -1
          lastRun = q.runId
          // executed batches only: an idle trigger's progress repeats the last batch's operators
          const recent = ps
            .slice(lastChecked + 1)
            .filter((p) => p.stateOperators.length > 0 && p.durationMs.addBatch !== undefined)
          lastChecked = ps.length - 1
          const last = recent[recent.length - 1]?.stateOperators[0]
          const sum = (f: (o: { numRowsUpdated: number; numRowsRemoved: number }) => number) =>
            recent.reduce((s, p) => s + f(p.stateOperators[0]), 0)
          return (
            last !== undefined &&
            last.numRowsTotal === expected.total &&
            sum((o) => o.numRowsUpdated) === expected.updated &&
            sum((o) => o.numRowsRemoved) === expected.removed
          )
        }),
      `state rows total=${expected.total} updated=${expected.updated} removed=${expected.removed}`
    )
}

/** Spark's `assertCannotGetWatermark`. */
const cannotGetWatermark = (state: GroupState<unknown>) => {
  try {
    state.getCurrentWatermarkMs()
  } catch {
    return
  }
  throw new Error("getCurrentWatermarkMs() should fail without a watermark")
}

const check = (ok: boolean, what: string) => {
  if (!ok) throw new Error(what)
}

/** Spark's running count up to 2, removed at 3 (`flatMapGroupsWithState - streaming`). */
const countUpTo2 = (key: string, values: ReadonlyArray<unknown>, state: GroupState<{ count: number }>) => {
  check(state.getCurrentProcessingTimeMs() >= 0, "processing time")
  cannotGetWatermark(state as GroupState<unknown>)
  const count = (state.getOption()?.count ?? 0) + values.length
  if (count === 3) {
    state.remove()
    return []
  }
  state.update({ count })
  return [kc(key, String(count))]
}

/** Spark's `sampleTestFunction`: the max event time (s) as state, timeout 5 s after it. */
const sampleTestFunction = (key: string, values: ReadonlyArray<{ eventTime: Date }>, state: GroupState<number>) => {
  check(state.getCurrentProcessingTimeMs() >= 0, "processing time")
  check(state.getCurrentWatermarkMs() >= -1, "watermark")
  if (state.hasTimedOut) {
    state.remove()
    return [{ key, value: -1 }]
  }
  const maxEventTimeSec = Math.max(...values.map((v) => v.eventTime.getTime() / 1000), state.getOption() ?? 0)
  state.update(maxEventTimeSec)
  state.setTimeoutTimestamp((maxEventTimeSec + 5) * 1000)
  return [{ key, value: maxEventTimeSec }]
}

const Pair = Schema.Struct({ _1: Schema.String, _2: Schema.Int })
const KeyValue = Schema.Struct({ key: Schema.String, value: Schema.Int })

const eventTimeQuery = (input: MemoryStream<{ _1: string; _2: number }>) =>
  input
    .toDF()
    .select(F.col("_1").as("key"), F.timestamp_seconds("_2").as("eventTime"))
    .withWatermark("eventTime", "10 seconds")
    .groupByKey((r) => r.key as string, Schema.String)
    .flatMapGroupsWithState(
      { outputMode: "update", timeout: GroupStateTimeout.EventTimeTimeout, stateSchema: Schema.Int, outputSchema: KeyValue },
      sampleTestFunction
    )

describe("FlatMapGroupsWithStateSuite", () => {
  for (const provider of providers) {
    describe(provider.name, () => {
      it.effect("flatMapGroupsWithState - streaming", () =>
        Effect.gen(function* () {
          const { assertNumStateRows } = stateMetrics()
          const input = yield* MemoryStream.make(Schema.String)
          const result = input
            .toDF()
            .groupByKey((r) => r.value, Schema.String)
            .flatMapGroupsWithState(
              { outputMode: "update", timeout: GroupStateTimeout.NoTimeout, stateSchema: RunningCount, outputSchema: KeyCount },
              countUpTo2
            )
          yield* testStream(result, "update", [
            AddData(input, "a"),
            CheckNewAnswer(kc("a", "1")),
            assertNumStateRows({ total: 1, updated: 1 }),
            AddData(input, "a", "b"),
            CheckNewAnswer(kc("a", "2"), kc("b", "1")),
            assertNumStateRows({ total: 2, updated: 2 }),
            StopStream,
            StartStream(),
            AddData(input, "a", "b"), // should remove state for "a" and not return anything for a
            CheckNewAnswer(kc("b", "2")),
            assertNumStateRows({ total: 1, updated: 1, removed: 1 }),
            StopStream,
            StartStream(),
            AddData(input, "a", "c"), // should recreate state for "a" and return count as 1
            CheckNewAnswer(kc("a", "1"), kc("c", "1")),
            assertNumStateRows({ total: 3, updated: 2 }),
            AssertOnQuery(
              (q) => Effect.map(q.lastProgress(), (p) => p?.stateOperators[0]?.operatorName === "flatMapGroupsWithState"),
              "operatorName"
            )
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("flatMapGroupsWithState - streaming with processing time timeout", () =>
        Effect.gen(function* () {
          const assertNumStateRows = triggeredStateMetrics()
          const input = yield* MemoryStream.make(Schema.String)
          const result = input
            .toDF()
            .groupByKey((r) => r.value, Schema.String)
            .flatMapGroupsWithState(
              {
                outputMode: "update",
                timeout: GroupStateTimeout.ProcessingTimeTimeout,
                stateSchema: RunningCount,
                outputSchema: KeyCount
              },
              (key, values, state) => {
                check(state.getCurrentProcessingTimeMs() >= 0, "processing time")
                cannotGetWatermark(state as GroupState<unknown>)
                if (state.hasTimedOut) {
                  state.remove()
                  return [kc(key, "-1")]
                }
                const count = (state.getOption()?.count ?? 0) + values.length
                state.update({ count })
                state.setTimeoutDuration("10 seconds")
                return [kc(key, String(count))]
              }
            )
          yield* testStream(result, "update", [
            StartStream({ trigger: everySecond }),
            AddData(input, "a"),
            ...tick(1),
            CheckNewAnswer(kc("a", "1")),
            assertNumStateRows({ total: 1, updated: 1, removed: 0 }),

            AddData(input, "b"),
            ...tick(1),
            CheckNewAnswer(kc("b", "1")),
            assertNumStateRows({ total: 2, updated: 1, removed: 0 }),

            AddData(input, "b"),
            ...tick(10),
            CheckNewAnswer(kc("a", "-1"), kc("b", "2")),
            assertNumStateRows({ total: 1, updated: 1, removed: 1 }),

            StopStream,
            StartStream({ trigger: everySecond }),

            AddData(input, "c"),
            ...tick(11),
            CheckNewAnswer(kc("b", "-1"), kc("c", "1")),
            assertNumStateRows({ total: 1, updated: 1, removed: 1 }),

            ...tick(12),
            AssertOnQuery(() => Effect.map(Clock.currentTimeMillis, (t) => t === 35_000), "clock at 35 s"),
            CheckNewAnswer(kc("c", "-1")),
            assertNumStateRows({ total: 0, updated: 0, removed: 1 })
          ])
        }).pipe(Effect.provide(provider.layer()))
      )

      it.effect("flatMapGroupsWithState - streaming w/ event time timeout + watermark", () =>
        Effect.gen(function* () {
          const { assertNumStateRows } = stateMetrics()
          const input = yield* MemoryStream.make(Pair)
          yield* testStream(eventTimeQuery(input), "update", [
            AddData(input, { _1: "a", _2: 11 }, { _1: "a", _2: 13 }, { _1: "a", _2: 15 }),
            // Max event time = 15. Timeout timestamp for "a" = 15 + 5 = 20. Watermark = 15 - 10 = 5.
            CheckNewAnswer({ key: "a", value: 15 }),
            assertNumStateRows({ total: 1, updated: 1, removed: 0 }),
            AddData(input, { _1: "a", _2: 4 }), // older than the watermark for "a"
            CheckNewAnswer(), // filtered by the watermark
            assertNumStateRows({ total: 1, updated: 0, droppedByWatermark: 1 }),
            AddData(input, { _1: "a", _2: 10 }), // newer than the watermark
            CheckNewAnswer({ key: "a", value: 15 }), // max event time is still the same
            AddData(input, { _1: "b", _2: 31 }), // watermark = 31 - 10 = 21: "a" (timeout 20) times out
            CheckNewAnswer({ key: "a", value: -1 }, { key: "b", value: 31 }),
            assertNumStateRows({ total: 1, updated: 2, removed: 1 })
          ])
        }).pipe(Effect.provide(provider.layer()))
      )
    })
  }

  it.effect("flatMapGroupsWithState - streaming + func returns iterator that updates state lazily", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .flatMapGroupsWithState(
          { outputMode: "update", stateSchema: RunningCount, outputSchema: KeyCount },
          function* (key, values, state) {
            for (const _ of values) {
              const count = (state.getOption()?.count ?? 0) + 1
              if (count === 3) state.remove()
              else {
                state.update({ count })
                yield kc(key, String(count))
              }
            }
          }
        )
      yield* testStream(result, "update", [
        AddData(input, "a", "a", "b"),
        CheckNewAnswer(kc("a", "1"), kc("a", "2"), kc("b", "1")),
        StopStream,
        StartStream(),
        AddData(input, "a", "b"), // should remove state for "a" and not return anything for a
        CheckNewAnswer(kc("b", "2")),
        StopStream,
        StartStream(),
        AddData(input, "a", "c"), // should recreate state for "a" and return count as 1
        CheckNewAnswer(kc("a", "1"), kc("c", "1"))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("flatMapGroupsWithState - streaming + aggregation", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .flatMapGroupsWithState(
          { outputMode: "append", stateSchema: RunningCount, outputSchema: KeyCount },
          (key, values, state) => {
            const count = (state.getOption()?.count ?? 0) + values.length
            if (count === 3) {
              state.remove()
              return [kc(key, "-1")]
            }
            state.update({ count })
            return [kc(key, String(count))]
          }
        )
        .groupByKey((r) => r.key as string, Schema.String)
        .count()
      const c = (key: string, n: number) => ({ key, "count(1)": n })
      yield* testStream(result, "complete", [
        AddData(input, "a"),
        CheckNewAnswer(c("a", 1)),
        AddData(input, "a", "b"),
        // mapGroups generates ("a", "2"), ("b", "1"); so increases counts of a and b by 1
        CheckNewAnswer(c("a", 2), c("b", 1)),
        StopStream,
        StartStream(),
        AddData(input, "a", "b"),
        // removes the state for "a" and generates ("a", "-1"), ("b", "2")
        CheckNewAnswer(c("a", 3), c("b", 2)),
        StopStream,
        StartStream(),
        AddData(input, "a", "c"),
        // recreates the state for "a" and generates ("a", "1"), ("c", "1")
        CheckNewAnswer(c("a", 4), c("b", 2), c("c", 1))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("flatMapGroupsWithState - batch", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const rows = yield* spark
        .createDataFrame([{ value: "a" }, { value: "a" }, { value: "b" }], Schema.Struct({ value: Schema.String }))
        .groupByKey((r) => r.value, Schema.String)
        .flatMapGroupsWithState(
          { outputMode: "update", stateSchema: RunningCount, outputSchema: Schema.Struct({ key: Schema.String, n: Schema.Int }) },
          (key, values, state) => {
            check(state.getCurrentProcessingTimeMs() === 0, "processing time: the test clock's now")
            cannotGetWatermark(state as GroupState<unknown>)
            if (state.exists) throw new Error("state.exists should be false")
            return [{ key, n: values.length }]
          }
        )
        .collect()
      assert.deepStrictEqual(rows, [
        { key: "a", n: 2 },
        { key: "b", n: 1 }
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("mapGroupsWithState - streaming", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const input = yield* MemoryStream.make(Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .mapGroupsWithState({ stateSchema: RunningCount, outputSchema: KeyCount }, (key, values, state) => {
          check(state.getCurrentProcessingTimeMs() >= 0, "processing time")
          cannotGetWatermark(state as GroupState<unknown>)
          const count = (state.getOption()?.count ?? 0) + values.length
          if (count === 3) {
            state.remove()
            return kc(key, "-1")
          }
          state.update({ count })
          return kc(key, String(count))
        })
      yield* testStream(result, "update", [
        AddData(input, "a"),
        CheckNewAnswer(kc("a", "1")),
        assertNumStateRows({ total: 1, updated: 1 }),
        AddData(input, "a", "b"),
        CheckNewAnswer(kc("a", "2"), kc("b", "1")),
        assertNumStateRows({ total: 2, updated: 2 }),
        StopStream,
        StartStream(),
        AddData(input, "a", "b"), // should remove state for "a" and return count as -1
        CheckNewAnswer(kc("a", "-1"), kc("b", "2")),
        assertNumStateRows({ total: 1, updated: 1, removed: 1 }),
        StopStream,
        StartStream(),
        AddData(input, "a", "c"), // should recreate state for "a" and return count as 1
        CheckNewAnswer(kc("a", "1"), kc("c", "1")),
        assertNumStateRows({ total: 3, updated: 2 })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  // timeouts allowed (SPARK-20792), primitive state, processing time readable
  it.effect("mapGroupsWithState - batch", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const rows = yield* spark
        .createDataFrame([{ value: "a" }, { value: "a" }, { value: "b" }], Schema.Struct({ value: Schema.String }))
        .groupByKey((r) => r.value, Schema.String)
        .mapGroupsWithState(
          {
            timeout: GroupStateTimeout.EventTimeTimeout,
            stateSchema: Schema.Int,
            outputSchema: Schema.Struct({ key: Schema.String, n: Schema.Int })
          },
          (key, values, state) => {
            check(state.getCurrentProcessingTimeMs() === 0, "processing time: the test clock's now")
            cannotGetWatermark(state as GroupState<unknown>)
            if (state.exists) throw new Error("state.exists should be false")
            state.setTimeoutTimestamp(0, "1 hour")
            state.update(10)
            return { key, n: values.length }
          }
        )
        .collect()
      assert.deepStrictEqual(rows, [
        { key: "a", n: 2 },
        { key: "b", n: 1 }
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("StateStore.abort on task failure handling", () =>
    Effect.gen(function* () {
      let failInTask = false
      const input = yield* MemoryStream.make(Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .mapGroupsWithState(
          { stateSchema: RunningCount, outputSchema: Schema.Struct({ key: Schema.String, count: Schema.Int }) },
          (key, values, state) => {
            if (failInTask) throw new Error("expected failure")
            const count = (state.getOption()?.count ?? 0) + values.length
            state.update({ count })
            return { key, count }
          }
        )
      const setFailInTask = (value: boolean) =>
        AssertOnQuery(() => {
          failInTask = value
          return true
        }, `failInTask = ${value}`)
      yield* testStream(result, "update", [
        setFailInTask(false),
        AddData(input, "a"),
        CheckNewAnswer({ key: "a", count: 1 }),
        AddData(input, "a"),
        CheckNewAnswer({ key: "a", count: 2 }),
        setFailInTask(true),
        AddData(input, "a"),
        // task should fail but should not increment count
        ExpectFailure("FlatMapGroupsWithStateUserFuncError", "expected failure"),
        setFailInTask(false),
        StartStream(),
        CheckNewAnswer({ key: "a", count: 3 }) // the re-run batch counts once
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const timeout of ["NoTimeout", "ProcessingTimeTimeout"] as const) {
    // As in Spark, the query uses ProcessingTimeTimeout whatever `timeout` names (Spark's
    // testWithTimeout(timeoutConf) only puts it in the test name).
    it.effect(`SPARK-20714: watermark does not fail query when timeout = ${timeout}`, () =>
      Effect.gen(function* () {
        const input = yield* MemoryStream.make(Pair)
        const result = input
          .toDF()
          .select(F.col("_1").as("key"), F.timestamp_seconds("_2").as("timestamp"))
          .withWatermark("timestamp", "10 seconds")
          .groupByKey((r) => r.key as string, Schema.String)
          .flatMapGroupsWithState(
            {
              outputMode: "update",
              timeout: GroupStateTimeout.ProcessingTimeTimeout,
              stateSchema: RunningCount,
              outputSchema: KeyCount
            },
            (key, values, state) => {
              if (state.hasTimedOut) {
                state.remove()
                return [kc(key, "-1")]
              }
              const count = (state.getOption()?.count ?? 0) + values.length
              state.update({ count })
              state.setTimeoutDuration("10 seconds")
              return [kc(key, String(count))]
            }
          )
        yield* testStream(result, "update", [
          StartStream({ trigger: everySecond }),
          AddData(input, { _1: "a", _2: 1 }),
          AdvanceClock("1 second"),
          CheckNewAnswer(kc("a", "1"))
        ])
      }).pipe(Effect.provide(Session.layer()))
    )
  }

  it.effect("processing-time timeouts with the default trigger fire once the clock passes them", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .flatMapGroupsWithState(
          { outputMode: "update", timeout: "ProcessingTimeTimeout", stateSchema: Schema.Int, outputSchema: KeyCount },
          (key, values, state) => {
            if (state.hasTimedOut) {
              state.remove()
              return [kc(key, "-1")]
            }
            const count = (state.getOption() ?? 0) + values.length
            state.update(count)
            state.setTimeoutDuration("1 second")
            return [kc(key, String(count))]
          }
        )
      yield* testStream(result, "update", [
        AddData(input, "a"), // batch at 0: a times out after 1000
        CheckNewAnswer(kc("a", "1")),
        AdvanceClock("500 millis"),
        AddData(input, "b"), // batch at 500: b times out after 1500
        CheckNewAnswer(kc("b", "1")),
        AdvanceClock("510 millis"), // 1010: a is due, b is not
        CheckNewAnswer(kc("a", "-1")),
        AdvanceClock("1 second"),
        CheckNewAnswer(kc("b", "-1"))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("getCurrentWatermarkMs is this batch's watermark", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Pair)
      const result = input
        .toDF()
        .select(F.col("_1").as("key"), F.timestamp_seconds("_2").as("eventTime"))
        .withWatermark("eventTime", "10 seconds")
        .groupByKey((r) => r.key as string, Schema.String)
        .mapGroupsWithState({ stateSchema: Schema.Int, outputSchema: Schema.Int }, (_key, _values, state) =>
          state.getCurrentWatermarkMs()
        )
      yield* testStream(result, "update", [
        AddData(input, { _1: "a", _2: 15 }),
        CheckNewAnswer({ value: 0 }),
        AddData(input, { _1: "a", _2: 20 }),
        CheckNewAnswer({ value: 5000 })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("GroupState misuse fails the query with Spark's errors", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.String)
      const grouped = input.toDF().groupByKey((r) => r.value, Schema.String)
      const getAbsent = grouped.mapGroupsWithState({ stateSchema: Schema.Int, outputSchema: Schema.Int }, (_k, _v, state) =>
        state.get()
      )
      yield* testStream(getAbsent, "update", [
        AddData(input, "a"),
        ExpectFailure("GroupStateError", "State is either not defined or has already been removed")
      ])
      const durationWithoutTimeout = grouped.mapGroupsWithState(
        { stateSchema: Schema.Int, outputSchema: Schema.Int },
        (_k, values, state) => {
          state.setTimeoutDuration("1 minute")
          return values.length
        }
      )
      yield* testStream(durationWithoutTimeout, "update", [
        AddData(input, "a"),
        ExpectFailure(
          "GroupStateError",
          "Cannot set timeout duration without enabling processing time timeout in [map|flatMap]GroupsWithState"
        )
      ])
      const events = yield* MemoryStream.make(Pair)
      const belowWatermark = events
        .toDF()
        .select(F.col("_1").as("key"), F.timestamp_seconds("_2").as("eventTime"))
        .withWatermark("eventTime", "10 seconds")
        .groupByKey((r) => r.key as string, Schema.String)
        .mapGroupsWithState(
          { timeout: GroupStateTimeout.EventTimeTimeout, stateSchema: Schema.Int, outputSchema: Schema.Int },
          (_k, values, state) => {
            if (state.hasTimedOut) return -1
            state.setTimeoutTimestamp(1000)
            return values.length
          }
        )
      yield* testStream(belowWatermark, "update", [
        AddData(events, { _1: "a", _2: 15 }),
        // watermark 0: the timeout 1000 is allowed; the watermark moves to 5000 and it fires
        CheckNewAnswer({ value: 1 }, { value: -1 }),
        AddData(events, { _1: "a", _2: 16 }),
        ExpectFailure("GroupStateError", "Timeout timestamp (1000) cannot be earlier than the current watermark (5000)")
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("disallow complete mode", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.String)
      const df = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .flatMapGroupsWithState(
          { outputMode: "complete" as "update", stateSchema: Schema.Int, outputSchema: Schema.String },
          () => []
        )
      const e = yield* Effect.flip(df.writeStream.format("noop").outputMode("update").start())
      assert.strictEqual(e.message, "The output mode of function should be append or update")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-38320 - flatMapGroupsWithState state with data should not timeout", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Date)
      const result = input
        .toDF()
        .withWatermark("value", "0 seconds")
        .groupByKey(() => 0, Schema.Int)
        .mapGroupsWithState(
          { timeout: GroupStateTimeout.EventTimeTimeout, stateSchema: Schema.Int, outputSchema: Schema.Int },
          (_key, _values, state) => {
            // Never times out: every batch has data for the key, which clears the timeout.
            check(!state.hasTimedOut, "The state should not have timed out!")
            if (!state.exists) {
              state.update(0)
              state.setTimeoutTimestamp(500)
            }
            return 0
          }
        )
      yield* testStream(result, "update", [
        StartStream({ additionalConfs: { "spark.sql.streaming.noDataMicroBatches.enabled": "false" } }),
        AddData(input, new Date(1000)),
        CheckNewAnswer({ value: 0 }),
        AddData(input, new Date(2000)),
        CheckNewAnswer({ value: 0 })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  // DEVIATION (engine/test harness, not this operator): Spark's StreamManualClock jumps, so
  // `AdvanceManualClock(12 * 1000)` from 23 s wakes the ProcessingTimeExecutor ONCE and the batch
  // runs at 35 s (its timestamp is the clock after the jump; Spark waits for
  // lastProgress.timestamp == 1970-01-01T00:00:35.000Z). tributary's AdvanceClock is Effect's
  // TestClock.adjust, which wakes the trigger loop at every intermediate trigger time
  // (core/Scheduler.ts runTrigger's sleep), so "c" times out in a batch at 34 s and the last
  // progress is at 34 s; likewise the 10 s jump runs "b" at 3 s (timeout 13 s) instead of 12 s.
  // The answers and the summed state metrics agree; batch timestamps do not.
  it.effect("flatMapGroupsWithState - streaming with processing time timeout (Spark's clock jumps)", () =>
    Effect.gen(function* () {
      const assertNumStateRows = triggeredStateMetrics()
      const input = yield* MemoryStream.make(Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .flatMapGroupsWithState(
          { outputMode: "update", timeout: GroupStateTimeout.ProcessingTimeTimeout, stateSchema: RunningCount, outputSchema: KeyCount },
          (key, values, state) => {
            if (state.hasTimedOut) {
              state.remove()
              return [kc(key, "-1")]
            }
            const count = (state.getOption()?.count ?? 0) + values.length
            state.update({ count })
            state.setTimeoutDuration("10 seconds")
            return [kc(key, String(count))]
          }
        )
      yield* testStream(result, "update", [
        StartStream({ trigger: everySecond }),
        AddData(input, "a"),
        AdvanceClock("1 second"),
        CheckNewAnswer(kc("a", "1")),
        assertNumStateRows({ total: 1, updated: 1, removed: 0 }),
        AddData(input, "b"),
        AdvanceClock("1 second"),
        CheckNewAnswer(kc("b", "1")),
        assertNumStateRows({ total: 2, updated: 1, removed: 0 }),
        AddData(input, "b"),
        AdvanceClock("10 seconds"),
        CheckNewAnswer(kc("a", "-1"), kc("b", "2")),
        assertNumStateRows({ total: 1, updated: 1, removed: 1 }),
        StopStream,
        StartStream({ trigger: everySecond }),
        AddData(input, "c"),
        AdvanceClock("11 seconds"),
        CheckNewAnswer(kc("b", "-1"), kc("c", "1")),
        assertNumStateRows({ total: 1, updated: 1, removed: 1 }),
        AdvanceClock("12 seconds"),
        AssertOnQuery(() => Effect.map(Clock.currentTimeMillis, (t) => t === 35_000), "clock at 35 s"),
        AssertOnQuery(
          (q) =>
            Effect.flatMap(awaitQuiescent(q), () =>
              Effect.map(q.lastProgress(), (p) => p?.timestamp === "1970-01-01T00:00:35.000Z")
            ),
          "last progress at 35 s"
        ),
        CheckNewAnswer(kc("c", "-1")),
        assertNumStateRows({ total: 0, updated: 0, removed: 1 })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("[SPARK-49474] flatMapGroupsWithState - user NPE is classified", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .flatMapGroupsWithState(
          { outputMode: "update", stateSchema: RunningCount, outputSchema: Schema.Int },
          (): Iterable<number> => {
            // JavaScript's NullPointerException: reading a property of null
            const nothing = null as unknown as { readonly count: number }
            return [nothing.count]
          }
        )
      yield* testStream(result, "update", [
        AddData(input, "a"),
        ExpectFailure(
          "FlatMapGroupsWithStateUserFuncError",
          "[FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR] An error occurred in the user provided function in flatMapGroupsWithState. Reason: Cannot read properties of null"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("[SPARK-49474] flatMapGroupsWithState - NPE from user iterator is classified", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .flatMapGroupsWithState(
          { outputMode: "update", stateSchema: RunningCount, outputSchema: Schema.Int },
          // returns null where an iterable is expected: iterating it fails
          () => null as unknown as Iterable<number>
        )
      yield* testStream(result, "update", [
        AddData(input, "a"),
        ExpectFailure("FlatMapGroupsWithStateUserFuncError", "[FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR]")
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-35896: metrics in StateOperatorProgress are output correctly", () =>
    Effect.gen(function* () {
      const { assertNumStateRows, assertStateOperatorProgressMetric } = stateMetrics()
      const input = yield* MemoryStream.make(Pair)
      yield* testStream(eventTimeQuery(input), "update", [
        StartStream({ additionalConfs: { "spark.sql.shuffle.partitions": "3" } }),
        AddData(input, { _1: "a", _2: 11 }, { _1: "a", _2: 13 }, { _1: "a", _2: 15 }),
        // Max event time = 15. Timeout timestamp for "a" = 15 + 5 = 20. Watermark = 15 - 10 = 5.
        CheckNewAnswer({ key: "a", value: 15 }), // Output = max event time of a
        assertNumStateRows({ total: [1], updated: [1], droppedByWatermark: [0], removed: [0] }),
        AddData(input, { _1: "a", _2: 4 }), // Add data older than watermark for "a"
        CheckNewAnswer(), // No output as data should get filtered by watermark
        assertStateOperatorProgressMetric("flatMapGroupsWithState", 3, 3),
        AddData(input, { _1: "a", _2: 10 }), // Add data newer than watermark for "a"
        CheckNewAnswer({ key: "a", value: 15 }), // Max event time is still the same
        // Timeout timestamp for "a" is still 20 as max event time for "a" is still 15.
        // Watermark is still 5 as max event time for all data is still 15.
        AddData(input, { _1: "b", _2: 31 }), // Add data newer than watermark for "b", not "a"
        // Watermark = 31 - 10 = 21, so "a" should be timed out as timeout timestamp for "a" is 20.
        CheckNewAnswer({ key: "a", value: -1 }, { key: "b", value: 31 }), // "a" times out and emits -1
        assertNumStateRows({ total: [1], updated: [2], droppedByWatermark: [0], removed: [1] })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-29438: ensure UNION doesn't lead (flat)MapGroupsWithState to use shifted partition IDs", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const constructUnionDf = Effect.gen(function* () {
        const input1 = yield* MemoryStream.make(Schema.String)
        const input2 = yield* MemoryStream.make(Schema.String)
        // Spark selects ($"value", $"value"); two columns of one name cannot be two fields of
        // a row object here, so they are named like the other side's columns.
        const df1 = input1.toDF().select(F.col("value").as("key"), F.col("value").as("count"))
        const df2 = input2
          .toDF()
          .groupByKey((r) => r.value, Schema.String)
          .mapGroupsWithState({ stateSchema: RunningCount, outputSchema: KeyCount }, (key, values, state) => {
            const count = (state.getOption()?.count ?? 0) + values.length
            state.update({ count })
            return kc(key, String(count))
          })
        // union is by position: (key, count) of strings on both sides
        return { input1, input2, unionDf: df1.union(df2 as unknown as typeof df1) }
      })
      const first = yield* constructUnionDf
      yield* testStream(first.unionDf, "update", [
        StartStream({ checkpointLocation: dir }),
        AddData(first.input1, "input1-a"),
        AddData(first.input2, "input2-a"),
        CheckNewAnswer(kc("input1-a", "input1-a"), kc("input2-a", "1")),
        StopStream
      ])
      // The query restored with new sources: (flat)MapGroupsWithState must find its state.
      const second = yield* constructUnionDf
      yield* second.input1.addData(["input1-a"])
      yield* second.input2.addData(["input2-a"])
      yield* testStream(second.unionDf, "update", [
        StartStream({ checkpointLocation: dir }),
        AddData(second.input1, "input1-a"),
        AddData(second.input2, "input2-a", "input2-b"),
        CheckNewAnswer(kc("input1-a", "input1-a"), kc("input2-a", "2"), kc("input2-b", "1"))
      ]).pipe(Effect.ensuring(removeDir(dir)))
    }).pipe(Effect.provide(Session.layer()))
  )

  // Spark also asserts the executed plan's outputPartitioning is UnknownPartitioning(0);
  // tributary has no physical partitioning, so only the answer is checked.
  it.effect("output partitioning is unknown", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .mapGroupsWithState({ stateSchema: RunningCount, outputSchema: Schema.String }, (key) => key)
      yield* testStream(result, "update", [AddData(input, "a"), CheckNewAnswer({ value: "a" })])
    }).pipe(Effect.provide(Session.layer()))
  )
})

/** Spark's `flatMapGroupsWithStateFunc` of the initial-state tests. */
const initialStateFunc = (key: string, values: ReadonlyArray<{ value: string }>, state: GroupState<{ count: number }>) => {
  const valList = values.map((v) => v.value)
  // called on just the initial state: the state must be there
  if (valList.length === 0) check(state.exists, "state.exists for an initial-state key")
  check(state.getCurrentProcessingTimeMs() >= 0, "processing time")
  cannotGetWatermark(state as GroupState<unknown>)
  check(!state.hasTimedOut, "not timed out")
  if (key.includes("EventTime")) state.setTimeoutTimestamp(0, "1 hour")
  if (key.includes("ProcessingTime")) state.setTimeoutDuration("1  hour")
  const count = (state.getOption()?.count ?? 0) + valList.length
  // not calling update must still keep the initial state
  if (!key.includes("NoUpdate")) state.update({ count })
  return [{ key, values: valList, count: String(count) }]
}

const KeyValuesCount = Schema.Struct({ key: Schema.String, values: Schema.Array(Schema.String), count: Schema.String })
const InitialCounts = Schema.Struct({ key: Schema.String, state: RunningCount })

const initialCounts = (rows: ReadonlyArray<readonly [string, number]>) =>
  Effect.gen(function* () {
    const spark = yield* Session
    return spark.createDataFrame(
      rows.map(([key, count]) => ({ key, state: { count } })),
      InitialCounts
    )
  })

describe("FlatMapGroupsWithStateSuite - initial state", () => {
  for (const shufflePartitions of ["1", "2", "6"]) {
  it.effect(`flatMapGroupsWithState - initial state - all cases - shuffle partitions ${shufflePartitions}`, () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const initialState = yield* initialCounts([
        ["keyInStateAndData-1", 1],
        ["keyInStateAndData-2", 2],
        ["keyNoUpdate", 2], // state.update will not be called
        ["keyOnlyInState-1", 1]
      ])
      const input = yield* MemoryStream.make(Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .flatMapGroupsWithState(
          { outputMode: "update", stateSchema: RunningCount, outputSchema: KeyValuesCount, initialState },
          initialStateFunc
        )
      yield* testStream(result, "update", [
        StartStream({ additionalConfs: { "spark.sql.shuffle.partitions": shufflePartitions } }),
        AddData(input, "keyOnlyInData", "keyInStateAndData-2"),
        CheckNewAnswer(
          { key: "keyOnlyInState-1", values: [], count: "1" },
          { key: "keyNoUpdate", values: [], count: "2" }, // update will not be called
          { key: "keyInStateAndData-2", values: ["keyInStateAndData-2"], count: "3" }, // inc by 1
          { key: "keyInStateAndData-1", values: [], count: "1" },
          { key: "keyOnlyInData", values: ["keyOnlyInData"], count: "1" } // inc by 1
        ),
        assertNumStateRows({ total: 5, updated: 4 }),
        // Stop and start to make sure the initial state is not applied again.
        StopStream,
        StartStream(),
        AddData(input, "keyInStateAndData-1"),
        CheckNewAnswer({ key: "keyInStateAndData-1", values: ["keyInStateAndData-1"], count: "2" }),
        assertNumStateRows({ total: 5, updated: 1 }),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
  }

  it.effect("flatMapGroupsWithState - initial state - case class key", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const User = Schema.Struct({ name: Schema.String, id: Schema.String })
      const spark = yield* Session
      const initialState = spark.createDataFrame(
        [
          { key: { name: "keyInStateAndData", id: "1" }, state: 1 },
          { key: { name: "keyOnlyInState", id: "1" }, state: 1 },
          { key: { name: "keyNoUpdate", id: "2" }, state: 2 } // update is not called for it
        ],
        Schema.Struct({ key: User, state: Schema.Int })
      )
      const input = yield* MemoryStream.make(User)
      const result = input
        .toDF()
        .groupByKey((u) => u, User)
        .flatMapGroupsWithState(
          {
            outputMode: "update",
            stateSchema: Schema.Int,
            outputSchema: Schema.Struct({ key: User, values: Schema.Array(Schema.String), count: Schema.String }),
            initialState
          },
          (key, values, state) => {
            if (values.length === 0) check(state.exists, "state.exists for an initial-state key")
            check(!state.hasTimedOut, "not timed out")
            const count = (state.getOption() ?? 0) + values.length
            if (!key.name.includes("NoUpdate")) state.update(count)
            return [{ key, values: values.map((v) => v.name), count: String(count) }]
          }
        )
      const u = (name: string, id: string) => ({ name, id })
      yield* testStream(result, "update", [
        AddData(input, u("keyInStateAndData", "1"), u("keyOnlyInData", "1")),
        CheckNewAnswer(
          { key: u("keyInStateAndData", "1"), values: ["keyInStateAndData"], count: "2" },
          { key: u("keyOnlyInState", "1"), values: [], count: "1" },
          { key: u("keyNoUpdate", "2"), values: [], count: "2" },
          { key: u("keyOnlyInData", "1"), values: ["keyOnlyInData"], count: "1" }
        ),
        assertNumStateRows({ total: 4, updated: 3 }), // keyNoUpdate does not call update()
        StopStream,
        StartStream(),
        AddData(input, u("keyOnlyInData", "1")),
        CheckNewAnswer({ key: u("keyOnlyInData", "1"), values: ["keyOnlyInData"], count: "2" }),
        assertNumStateRows({ total: 4, updated: 1 }),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("flatMapGroupsWithState - initial state - duplicate keys", () =>
    Effect.gen(function* () {
      const initialState = yield* initialCounts([
        ["a", 2],
        ["a", 1]
      ])
      const input = yield* MemoryStream.make(Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .flatMapGroupsWithState(
          { outputMode: "update", stateSchema: RunningCount, outputSchema: KeyValuesCount, initialState },
          initialStateFunc
        )
      yield* testStream(result, "update", [
        AddData(input, "a"),
        ExpectFailure("GroupStateError", "The initial state provided contained multiple rows(state) with the same key")
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const timeout of ["NoTimeout", "EventTimeTimeout", "ProcessingTimeTimeout"] as const) {
    it.effect(`flatMapGroupsWithState - initial state - batch mode - timeout ${timeout}`, () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const initialState = yield* initialCounts([
          [`keyInStateAndData-1-${timeout}`, 1],
          ["keyInStateAndData-2", 2],
          ["keyNoUpdate", 2],
          ["keyOnlyInState-1", 1]
        ])
        const rows = yield* spark
          .createDataFrame([{ value: "keyOnlyInData" }, { value: "keyInStateAndData-2" }], Schema.Struct({ value: Schema.String }))
          .groupByKey((r) => r.value, Schema.String)
          .flatMapGroupsWithState(
            { outputMode: "update", timeout, stateSchema: RunningCount, outputSchema: KeyValuesCount, initialState },
            initialStateFunc
          )
          .collect()
        const sortByKey = <A extends { key: string }>(xs: ReadonlyArray<A>) => [...xs].sort((a, b) => (a.key < b.key ? -1 : 1))
        assert.deepStrictEqual(
          sortByKey(rows),
          sortByKey([
            { key: "keyOnlyInState-1", values: [], count: "1" },
            { key: "keyNoUpdate", values: [], count: "2" },
            { key: "keyInStateAndData-2", values: ["keyInStateAndData-2"], count: "3" },
            { key: `keyInStateAndData-1-${timeout}`, values: [], count: "1" },
            { key: "keyOnlyInData", values: ["keyOnlyInData"], count: "1" }
          ])
        )
      }).pipe(Effect.provide(Session.layer()))
    )
  }

  it.effect("flatMapGroupsWithState - initial state - batch mode - duplicate state", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const initialState = yield* initialCounts([
        ["a", 1],
        ["a", 2]
      ])
      const exit = yield* Effect.exit(
        spark
          .createDataFrame([{ value: "a" }, { value: "b" }], Schema.Struct({ value: Schema.String }))
          .groupByKey((r) => r.value, Schema.String)
          .flatMapGroupsWithState(
            { outputMode: "update", stateSchema: RunningCount, outputSchema: KeyValuesCount, initialState },
            initialStateFunc
          )
          .collect()
      )
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        assert.include(
          (Cause.squash(exit.cause) as Error).message,
          "The initial state provided contained multiple rows(state) with the same key. Make sure to de-duplicate the initial state before passing it."
        )
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("flatMapGroupsWithState - initial state - streaming initial state", () =>
    Effect.gen(function* () {
      const initialData = yield* MemoryStream.make(InitialCounts)
      const input = yield* MemoryStream.make(Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .flatMapGroupsWithState(
          {
            outputMode: "update",
            stateSchema: RunningCount,
            outputSchema: KeyValuesCount,
            initialState: initialData.toDF()
          },
          initialStateFunc
        )
      const e = yield* Effect.flip(result.writeStream.format("noop").outputMode("update").start())
      assert.include(
        e.message,
        "Non-streaming DataFrame/Dataset is not supported as the initial state in [flatMap|map]GroupsWithState operation on a streaming DataFrame/Dataset"
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("flatMapGroupsWithState - initial state - initial state has flatMapGroupsWithState", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const initialState = spark
        .createDataFrame([{ key: "keyInStateAndData", state: { count: 1 } }], InitialCounts)
        .groupByKey((r) => r.key as string, Schema.String)
        .mapGroupsWithState({ stateSchema: Schema.Boolean, outputSchema: InitialCounts }, (key, values) => ({
          key,
          state: values[0].state
        }))
      const input = yield* MemoryStream.make(Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .flatMapGroupsWithState(
          { outputMode: "update", stateSchema: RunningCount, outputSchema: KeyValuesCount, initialState },
          initialStateFunc
        )
      yield* testStream(result, "update", [
        AddData(input, "keyInStateAndData"),
        CheckNewAnswer({ key: "keyInStateAndData", values: ["keyInStateAndData"], count: "2" }),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("mapGroupsWithState - initial state - null key", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const spark = yield* Session
      const initialState = spark.createDataFrame(
        [
          { key: "key", state: { count: 5 } },
          { key: null, state: { count: 2 } }
        ],
        Schema.Struct({ key: Schema.NullOr(Schema.String), state: RunningCount })
      )
      const input = yield* MemoryStream.make(Schema.NullOr(Schema.String))
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.NullOr(Schema.String))
        .mapGroupsWithState(
          {
            stateSchema: RunningCount,
            outputSchema: Schema.Struct({ key: Schema.NullOr(Schema.String), count: Schema.String }),
            initialState
          },
          (key, values, state) => {
            const count = (state.getOption()?.count ?? 0) + values.length
            state.update({ count })
            return { key, count: String(state.get().count) }
          }
        )
      yield* testStream(result, "update", [
        AddData(input, "key", null),
        CheckNewAnswer(kc("key", "6"), kc(null, "3")),
        assertNumStateRows({ total: 2, updated: 2 }),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("flatMapGroupsWithState - initial state - processing time timeout", () =>
    Effect.gen(function* () {
      const initialState = yield* initialCounts([["c", 2]])
      const input = yield* MemoryStream.make(Pair)
      const result = input
        .toDF()
        .select(F.col("_1").as("key"), F.timestamp_seconds("_2").as("timestamp"))
        .withWatermark("timestamp", "10 seconds")
        .groupByKey((r) => r.key as string, Schema.String)
        .flatMapGroupsWithState(
          {
            outputMode: "update",
            timeout: GroupStateTimeout.ProcessingTimeTimeout,
            stateSchema: RunningCount,
            outputSchema: KeyCount,
            initialState
          },
          (key, values, state) => {
            if (state.hasTimedOut) {
              state.remove()
              return [kc(key, "-1")]
            }
            const count = (state.getOption()?.count ?? 0) + values.length
            state.update({ count })
            state.setTimeoutDuration("10 seconds")
            return [kc(key, String(count))]
          }
        )
      yield* testStream(result, "update", [
        StartStream({ trigger: everySecond }),
        AddData(input, { _1: "a", _2: 1 }),
        AdvanceClock("1 second"), // a and c are processed here for the first time
        CheckNewAnswer(kc("a", "1"), kc("c", "2")),
        AdvanceClock("10 seconds"),
        AddData(input, { _1: "b", _2: 1 }), // this will trigger c and a to get timed out
        AdvanceClock("1 second"),
        CheckNewAnswer(kc("a", "-1"), kc("b", "1"), kc("c", "-1"))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("FlatMapGroupsWithStateSuite - restart", () => {
  it.effect("a restart with a different state schema fails before the first batch", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const input = yield* MemoryStream.make(Schema.String)
      const withState = <S extends Schema.Top>(stateSchema: S, init: (n: number) => S["Type"]) =>
        input
          .toDF()
          .groupByKey((r) => r.value, Schema.String)
          .mapGroupsWithState({ stateSchema, outputSchema: KeyCount }, (key, values, state) => {
            state.update(init(values.length))
            return kc(key, String(values.length))
          })
      yield* testStream(withState(Schema.Int, (n) => n), "update", [
        StartStream({ checkpointLocation: dir }),
        AddData(input, "a"),
        CheckNewAnswer(kc("a", "1")),
        StopStream
      ])
      yield* testStream(withState(Schema.String, (n) => String(n)), "update", [
        StartStream({ checkpointLocation: dir }),
        ExpectFailure("StateStoreError")
      ])
      // the same schema again restarts and continues from the checkpoint
      yield* testStream(withState(Schema.Int, (n) => n), "update", [
        StartStream({ checkpointLocation: dir }),
        AddData(input, "b"),
        CheckNewAnswer(kc("b", "1")),
        StopStream
      ]).pipe(Effect.ensuring(removeDir(dir)))
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("FlatMapGroupsWithStateSuite - state reader", () => {
  it.effect("spark.read.format(\"statestore\") reads the key, the state and the timeout", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const input = yield* MemoryStream.make(Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .mapGroupsWithState(
          { timeout: GroupStateTimeout.ProcessingTimeTimeout, stateSchema: RunningCount, outputSchema: KeyCount },
          (key, values, state) => {
            const count = (state.getOption()?.count ?? 0) + values.length
            state.update({ count })
            if (key === "a") state.setTimeoutDuration("1 minute")
            return kc(key, String(count))
          }
        )
      yield* testStream(result, "update", [
        StartStream({ checkpointLocation: dir }),
        AddData(input, "a", "b", "a"),
        CheckNewAnswer(kc("a", "2"), kc("b", "1")),
        StopStream
      ])
      const rows = yield* Effect.flatMap(spark.read.format("statestore").load(dir), (df) =>
        df.select(F.col("key.value").as("k"), F.col("value.groupState.count").as("count"), F.col("value.timeoutTimestamp").as("timeout")).orderBy("k").collect()
      )
      assert.deepStrictEqual(rows, [
        { k: "a", count: 2, timeout: 60_000 },
        { k: "b", count: 1, timeout: -1 }
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )
})

/** The AnalysisError `start()` fails with, or `undefined` when the query starts. */
const startError = <R>(df: DataFrame<R>, mode: "append" | "update" | "complete") =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(df.writeStream.format("noop").outputMode(mode).start())
    if (Exit.isSuccess(exit)) {
      yield* exit.value.stop()
      return undefined
    }
    return Cause.squash(exit.cause) as { message: string; reason?: string }
  })

describe("UnsupportedOperationChecker - [flat]MapGroupsWithState", () => {
  const stream = Effect.map(MemoryStream.make(Schema.String), (s) =>
    s.toDF().groupByKey((r) => r.value, Schema.String)
  )
  const mapGroups = (timeout: GroupStateTimeout = "NoTimeout") =>
    Effect.map(stream, (g) =>
      g.mapGroupsWithState({ timeout, stateSchema: Schema.Int, outputSchema: KeyCount }, (key) => kc(key, ""))
    )
  const flatMapGroups = (outputMode: "append" | "update", timeout: GroupStateTimeout = "NoTimeout") =>
    Effect.map(stream, (g) =>
      g.flatMapGroupsWithState({ outputMode, timeout, stateSchema: Schema.Int, outputSchema: KeyCount }, (key) => [
        kc(key, "")
      ])
    )

  it.effect("mapGroupsWithState only in Update mode", () =>
    Effect.gen(function* () {
      const df = yield* mapGroups()
      assert.isUndefined(yield* startError(df, "update"))
      assert.strictEqual(
        (yield* startError(df, "append"))?.message,
        "mapGroupsWithState is not supported with Append output mode on a streaming DataFrame/Dataset"
      )
      assert.strictEqual(
        (yield* startError(df, "complete"))?.message,
        "[STREAMING_OUTPUT_MODE.UNSUPPORTED_OPERATION] Invalid streaming output mode: complete. This output mode is not supported for no streaming aggregations on streaming DataFrames/DataSets. (Complete output mode not supported when there are no streaming aggregations on streaming DataFrames/Datasets.)"
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("flatMapGroupsWithState without aggregation: its mode is the query's", () =>
    Effect.gen(function* () {
      const update = yield* flatMapGroups("update")
      const append = yield* flatMapGroups("append")
      assert.isUndefined(yield* startError(update, "update"))
      assert.isUndefined(yield* startError(append, "append"))
      assert.strictEqual(
        (yield* startError(update, "append"))?.message,
        "flatMapGroupsWithState in update mode is not supported with Append output mode on a streaming DataFrame/Dataset"
      )
      assert.strictEqual(
        (yield* startError(append, "update"))?.message,
        "flatMapGroupsWithState in append mode is not supported with Update output mode on a streaming DataFrame/Dataset"
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("flatMapGroupsWithState with aggregation: append only", () =>
    Effect.gen(function* () {
      const counted = (df: DataFrame<{ key: string; count: string }>) => df.groupByKey((r) => r.key as string, Schema.String).count()
      assert.isUndefined(yield* startError(counted(yield* flatMapGroups("append")), "complete"))
      assert.strictEqual(
        (yield* startError(counted(yield* flatMapGroups("update")), "complete"))?.message,
        "flatMapGroupsWithState in update mode is not supported with aggregation on a streaming DataFrame/Dataset"
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("event-time timeout needs a watermark", () =>
    Effect.gen(function* () {
      const e = yield* startError(yield* flatMapGroups("update", "EventTimeTimeout"), "update")
      assert.strictEqual(e?.reason, "WatermarkRequired")
      assert.strictEqual(
        e?.message,
        "Watermark must be specified in the query using '[Dataset/DataFrame].withWatermark()' for using event-time timeout in a [map|flatMap]GroupsWithState. Event-time timeout not supported without watermark."
      )
      const input = yield* MemoryStream.make(Pair)
      assert.isUndefined(yield* startError(eventTimeQuery(input), "update"))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("several [flat]MapGroupsWithState", () =>
    Effect.gen(function* () {
      const again = <R>(df: DataFrame<{ key: string; count: string }>, map: boolean, outputMode: "append" | "update") => {
        const g = df.groupByKey((r) => r.key as string, Schema.String)
        return map
          ? g.mapGroupsWithState({ stateSchema: Schema.Int, outputSchema: KeyCount }, (key) => kc(key, ""))
          : g.flatMapGroupsWithState({ outputMode, stateSchema: Schema.Int, outputSchema: KeyCount }, (key) => [
              kc(key, "")
            ])
      }
      assert.strictEqual(
        (yield* startError(again(yield* mapGroups(), true, "update"), "update"))?.message,
        "Multiple mapGroupsWithStates are not supported on a streaming DataFrames/Datasets"
      )
      assert.strictEqual(
        (yield* startError(again(yield* mapGroups(), false, "update"), "update"))?.message,
        "Mixing mapGroupsWithStates and flatMapGroupsWithStates are not supported on a streaming DataFrames/Datasets"
      )
      assert.strictEqual(
        (yield* startError(again(yield* flatMapGroups("update"), false, "update"), "update"))?.message,
        "Multiple flatMapGroupsWithStates are not supported when they are not all in append mode or the output mode is not append on a streaming DataFrames/Datasets"
      )
      assert.isUndefined(yield* startError(again(yield* flatMapGroups("append"), false, "append"), "append"))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a stateful operator after an event-time [flat]MapGroupsWithState is a correctness issue", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Pair)
      const df = input
        .toDF()
        .select(F.col("_1").as("key"), F.timestamp_seconds("_2").as("eventTime"))
        .withWatermark("eventTime", "10 seconds")
        .groupByKey((r) => r.key as string, Schema.String)
        .flatMapGroupsWithState(
          { outputMode: "append", timeout: "EventTimeTimeout", stateSchema: Schema.Int, outputSchema: KeyValue },
          () => []
        )
        .groupByKey((r) => r.key as string, Schema.String)
        .flatMapGroupsWithState({ outputMode: "append", stateSchema: Schema.Int, outputSchema: KeyValue }, () => [])
      assert.include((yield* startError(df, "append"))?.message, "Detected pattern of possible 'correctness' issue")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("plan strings: FlatMapGroupsWithState, MapGroups on a batch input", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const text = yield* spark
        .createDataFrame([{ value: "a" }], Schema.Struct({ value: Schema.String }))
        .groupByKey((r) => r.value, Schema.String)
        .flatMapGroupsWithState(
          { outputMode: "append", timeout: "ProcessingTimeTimeout", stateSchema: Schema.Int, outputSchema: KeyCount },
          () => []
        )
        .explain(true)
      assert.include(text, "FlatMapGroupsWithState <function3>, Append, false, ProcessingTimeTimeout, false, [key#")
      assert.include(text, "MapGroups <function>, [key#")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("keys, mapGroups and flatMapGroups on a batch DataFrame; agg per key", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame(
        [
          { k: "b", n: 2 },
          { k: "a", n: 1 },
          { k: "b", n: 3 }
        ],
        Schema.Struct({ k: Schema.String, n: Schema.Int })
      )
      const g = df.groupByKey((r) => r.k, Schema.String)
      assert.deepStrictEqual(yield* g.keys().orderBy("value").collect(), [{ value: "a" }, { value: "b" }])
      assert.deepStrictEqual(
        yield* g.mapGroups((k, rows) => ({ k, total: rows.reduce((s, r) => s + r.n, 0) }), Schema.Struct({ k: Schema.String, total: Schema.Int })).collect(),
        [
          { k: "a", total: 1 },
          { k: "b", total: 5 }
        ]
      )
      assert.deepStrictEqual(yield* g.flatMapGroups((k, rows) => rows.map((r) => `${k}${r.n}`), Schema.String).collect(), [
        { value: "a1" },
        { value: "b2" },
        { value: "b3" }
      ])
      assert.deepStrictEqual(yield* g.count().orderBy("key").collect(), [
        { key: "a", "count(1)": 1 },
        { key: "b", "count(1)": 2 }
      ])
      assert.deepStrictEqual(yield* g.agg(F.sum("n"), F.max("n").as("top")).orderBy("key").collect(), [
        { key: "a", "sum(n)": 1, top: 1 },
        { key: "b", "sum(n)": 5, top: 3 }
      ])
      // a struct key: its fields in keys(), a struct column `key` in count()
      const s = df.groupByKey((r) => ({ k: r.k, odd: r.n % 2 === 1 }), Schema.Struct({ k: Schema.String, odd: Schema.Boolean }))
      assert.deepStrictEqual(yield* s.keys().orderBy("k", "odd").collect(), [
        { k: "a", odd: true },
        { k: "b", odd: false },
        { k: "b", odd: true }
      ])
      assert.deepStrictEqual(yield* s.count().orderBy(F.col("key.k"), F.col("key.odd")).collect(), [
        { key: { k: "a", odd: true }, "count(1)": 1 },
        { key: { k: "b", odd: false }, "count(1)": 1 },
        { key: { k: "b", odd: true }, "count(1)": 1 }
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})

