/**
 * Spark's `StreamingJoinSuite` (`StreamingInnerJoinSuite`, `StreamingOuterJoinSuite`,
 * `StreamingFullOuterJoinSuite`, `StreamingLeftSemiJoinSuite`) as `testStream` scripts, with
 * Spark's inputs, expected outputs and state metrics (`assertNumStateRows`).
 *
 * Differences from Spark's scripts:
 * - `MultiAddData(a, …)(b, …)` (both sources in one batch) is an `Execute` that adds to both
 *   streams in one synchronous step, so no batch can run in between;
 * - tributary has no interval arithmetic on timestamps, so Spark's range conditions
 *   `leftTime < rightTime - interval 5 seconds` are written on the epoch seconds,
 *   `cast(leftTime as long) < cast(rightTime as long) - 5`: the same rows match, and the state
 *   watermark solver reads `cast(ts AS long)` and numbers in seconds as Spark's does;
 * - the scripts run with the DuckDB state store; the restart and outer-join scripts also with the
 *   file state store;
 * - rows are objects, so where Spark's positional rows repeat a column name (a self join, a join
 *   without a select) the columns are aliased;
 * - the SPARK-48687 scripts restart on a checkpoint the base query writes first, instead of the
 *   checkpoint Spark 3.5.1 wrote.
 *
 * Not ported: "locality preferences of StateStoreAwareZippedRDD" (RDD placement), the
 * SPARK-26187 "restore … from Spark 2.4" cases (Spark 2.4 checkpoints, state format version 1),
 * the executed-plan check of "streaming join should require StatefulOpClusteredDistribution from
 * children" (shuffle partitioning) and the partition counts of SPARK-29438.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../mod.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import {
  AddData,
  AssertOnQuery,
  CheckAnswer,
  CheckNewAnswer,
  Execute,
  StartStream,
  StopStream,
  type StreamAction,
  testStream
} from "../../../structured/testing.ts"
import { providers, removeDir, stateMetrics, tempDir } from "./StreamingTestKit.ts"

/** Spark's `MultiAddData`: rows for several streams in the same batch. */
const MultiAddData = (...pairs: ReadonlyArray<readonly [MemoryStream<any>, ReadonlyArray<unknown>]>): StreamAction =>
  Execute(
    Effect.sync(() => {
      for (const [source, rows] of pairs) Effect.runSync(source.addData(rows))
    })
  )

const Pair = Schema.Struct({ _1: Schema.Int, _2: Schema.Int })
const pr = (_1: number, _2: number) => ({ _1, _2 })

/** Spark's `setupStream(prefix, multiplier)`: key, `<prefix>Time` (seconds), `<prefix>Value`, watermark 10 s. */
const setupStream = (input: MemoryStream<number>, prefix: string, multiplier: number): DataFrame<any> =>
  (input.toDF() as DataFrame<any>)
    .select(
      F.col("value").as("key"),
      F.timestamp_seconds("value").as(`${prefix}Time`),
      F.col("value").multiply(multiplier).as(`${prefix}Value`)
    )
    .withWatermark(`${prefix}Time`, "10 seconds")

/** Spark's `setupWindowedJoin(joinType)`. */
const setupWindowedJoin = (joinType: string) =>
  Effect.gen(function* () {
    const input1 = yield* MemoryStream.make(Schema.Int)
    const input2 = yield* MemoryStream.make(Schema.Int)
    const windowed1 = setupStream(input1, "left", 2).select("key", F.window("leftTime", "10 seconds"), "leftValue")
    const windowed2 = setupStream(input2, "right", 3).select("key", F.window("rightTime", "10 seconds"), "rightValue")
    const joined = windowed1.join(windowed2, ["key", "window"], joinType as "inner")
    const end = F.col("window.end").cast("long").as("end")
    const select =
      joinType === "left_semi"
        ? joined.select("key", end, "leftValue")
        : joined.select("key", end, "leftValue", "rightValue")
    return { input1, input2, joined: select as DataFrame<any> }
  })

/** Spark's `setupWindowedJoinWithLeftCondition` / `…RightCondition`. */
const setupWindowedJoinWithCondition = (joinType: string, side: "left" | "right") =>
  Effect.gen(function* () {
    const leftInput = yield* MemoryStream.make(Schema.Int)
    const rightInput = yield* MemoryStream.make(Schema.Int)
    const left = setupStream(leftInput, "left", 2).select("key", F.window("leftTime", "10 seconds"), "leftValue")
    const right = setupStream(rightInput, "right", 3).select(
      "key",
      F.window("rightTime", "10 seconds"),
      F.col("rightValue").cast("string").as("rightValue")
    )
    const extra = side === "left" ? F.col("leftValue").gt(4) : F.col("rightValue").cast("int").gt(7)
    const joined = left.join(
      right,
      left
        .col("key")
        .eq(right.col("key"))
        .and(left.col("window").eq(right.col("window")))
        .and(extra),
      joinType as "inner"
    ) as DataFrame<any>
    const lEnd = left.col("window.end").cast("long").as("end")
    const rEnd = right.col("window.end").cast("long").as("end")
    const select =
      joinType === "left_semi"
        ? joined.select(left.col("key"), lEnd, "leftValue")
        : joinType === "left_outer"
          ? joined.select(left.col("key"), lEnd, "leftValue", "rightValue")
          : joinType === "right_outer"
            ? joined.select(right.col("key"), rEnd, "leftValue", "rightValue")
            : joined.select(
                left.col("key").as("lkey"),
                left.col("window.end").cast("long").as("lend"),
                "leftValue",
                right.col("key").as("rkey"),
                right.col("window.end").cast("long").as("rend"),
                "rightValue"
              )
    return { leftInput, rightInput, joined: select as DataFrame<any> }
  })

/** Spark's `setupJoinWithRangeCondition(joinType)`: `leftTime BETWEEN rightTime - 5 s AND rightTime + 5 s`. */
const setupJoinWithRangeCondition = (joinType: string, watermark = "10 seconds", lower = 5, upper = 5) =>
  Effect.gen(function* () {
    const leftInput = yield* MemoryStream.make(Pair)
    const rightInput = yield* MemoryStream.make(Pair)
    const df1 = (leftInput.toDF() as DataFrame<any>)
      .toDF("leftKey", "time")
      .select("leftKey", F.timestamp_seconds("time").as("leftTime"), F.col("leftKey").multiply(2).as("leftValue"))
      .withWatermark("leftTime", watermark)
    const df2 = (rightInput.toDF() as DataFrame<any>)
      .toDF("rightKey", "time")
      .select("rightKey", F.timestamp_seconds("time").as("rightTime"), F.col("rightKey").multiply(3).as("rightValue"))
      .withWatermark("rightTime", watermark)
    const lt = F.col("leftTime").cast("long")
    const rt = F.col("rightTime").cast("long")
    const joined = df1.join(
      df2,
      F.col("leftKey")
        .eq(F.col("rightKey"))
        .and(lt.between(rt.minus(lower), rt.plus(upper))),
      joinType as "inner"
    ) as DataFrame<any>
    const select =
      joinType === "left_semi"
        ? joined.select("leftKey", F.col("leftTime").cast("int").as("leftTime"))
        : joined.select(
            "leftKey",
            "rightKey",
            F.col("leftTime").cast("int").as("leftTime"),
            F.col("rightTime").cast("int").as("rightTime")
          )
    return { leftInput, rightInput, joined: select as DataFrame<any> }
  })

/** Spark's `setupSelfJoin(joinType)`: `leftId = rightId AND rightTime BETWEEN leftTime AND leftTime + 5 s`. */
const setupSelfJoin = (joinType: string) =>
  Effect.gen(function* () {
    const inputStream = yield* MemoryStream.make(Pair)
    const df = (inputStream.toDF() as DataFrame<any>).select(
      F.col("_1").as("value"),
      F.timestamp_seconds("_2").as("timestamp")
    )
    const leftStream = df.select(F.col("value").as("leftId"), F.col("timestamp").as("leftTime"))
    const rightStream = df
      .where(F.col("value").mod(2).eq(0))
      .select(F.col("value").as("rightId"), F.col("timestamp").as("rightTime"))
    const lt = F.col("leftTime").cast("long")
    const rt = F.col("rightTime").cast("long")
    const joined = leftStream.withWatermark("leftTime", "5 seconds").join(
      rightStream.withWatermark("rightTime", "5 seconds"),
      F.col("leftId")
        .eq(F.col("rightId"))
        .and(rt.geq(lt))
        .and(rt.leq(lt.plus(5))),
      joinType as "inner"
    ) as DataFrame<any>
    const select =
      joinType === "left_semi"
        ? joined.select("leftId", F.col("leftTime").cast("int").as("leftTime"))
        : joined.select(
            "leftId",
            F.col("leftTime").cast("int").as("leftTime"),
            "rightId",
            F.col("rightTime").cast("int").as("rightTime")
          )
    return { inputStream, joined: select as DataFrame<any> }
  })

const duck = providers[0]

describe("StreamingInnerJoinSuite", () => {
  for (const provider of providers) {
    it.effect(`stream stream inner join on non-time column (${provider.name})`, () =>
      Effect.gen(function* () {
        const input1 = yield* MemoryStream.make(Schema.Int)
        const input2 = yield* MemoryStream.make(Schema.Int)
        const df1 = input1.toDF().select(F.col("value").as("key"), F.col("value").multiply(2).as("leftValue"))
        const df2 = input2.toDF().select(F.col("value").as("key"), F.col("value").multiply(3).as("rightValue"))
        const joined = df1.join(df2, "key")
        const r = (key: number, leftValue: number, rightValue: number) => ({ key, leftValue, rightValue })
        yield* testStream(joined, "append", [
          AddData(input1, 1),
          CheckAnswer(),
          AddData(input2, 1, 10), // 1 arrived on input1 first, then input2, should join
          CheckNewAnswer(r(1, 2, 3)),
          AddData(input1, 10), // 10 arrived on input2 first, then input1, should join
          CheckNewAnswer(r(10, 20, 30)),
          AddData(input2, 1), // another 1 in input2 should join with 1 input1
          CheckNewAnswer(r(1, 2, 3)),
          StopStream,
          StartStream(),
          AddData(input1, 1), // multiple 1s should be kept in state causing multiple (1, 2, 3)
          CheckNewAnswer(r(1, 2, 3), r(1, 2, 3)),
          StopStream,
          StartStream(),
          AddData(input1, 100),
          AddData(input2, 100),
          CheckNewAnswer(r(100, 200, 300))
        ])
      }).pipe(Effect.provide(provider.layer()))
    )
  }

  it.effect("stream stream inner join on windows - without watermark", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(Schema.Int)
      const input2 = yield* MemoryStream.make(Schema.Int)
      const df1 = input1
        .toDF()
        .select(
          F.col("value").as("key"),
          F.timestamp_seconds("value").as("timestamp"),
          F.col("value").multiply(2).as("leftValue")
        )
        .select("key", F.window("timestamp", "10 seconds"), "leftValue")
      const df2 = input2
        .toDF()
        .select(
          F.col("value").as("key"),
          F.timestamp_seconds("value").as("timestamp"),
          F.col("value").multiply(3).as("rightValue")
        )
        .select("key", F.window("timestamp", "10 seconds"), "rightValue")
      const joined = df1
        .join(df2, ["key", "window"])
        .select("key", F.col("window.end").cast("long").as("end"), "leftValue", "rightValue")
      const r = (key: number, end: number, leftValue: number, rightValue: number) => ({
        key,
        end,
        leftValue,
        rightValue
      })
      yield* testStream(joined, "append", [
        AddData(input1, 1),
        CheckNewAnswer(),
        AddData(input2, 1),
        CheckNewAnswer(r(1, 10, 2, 3)),
        StopStream,
        StartStream(),
        AddData(input1, 25),
        CheckNewAnswer(),
        StopStream,
        StartStream(),
        AddData(input2, 25),
        CheckNewAnswer(r(25, 30, 50, 75)),
        AddData(input1, 1),
        CheckNewAnswer(r(1, 10, 2, 3)), // State for 1 still around as there is no watermark
        StopStream,
        StartStream(),
        AddData(input1, 5),
        CheckNewAnswer(),
        AddData(input2, 5),
        CheckNewAnswer(r(5, 10, 10, 15)) // No filter by any watermark
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  for (const provider of providers) {
    it.effect(`stream stream inner join on windows - with watermark (${provider.name})`, () =>
      Effect.gen(function* () {
        const { assertNumStateRows } = stateMetrics()
        const input1 = yield* MemoryStream.make(Schema.Int)
        const input2 = yield* MemoryStream.make(Schema.Int)
        const df1 = input1
          .toDF()
          .select(
            F.col("value").as("key"),
            F.timestamp_seconds("value").as("timestamp"),
            F.col("value").multiply(2).as("leftValue")
          )
          .withWatermark("timestamp", "10 seconds")
          .select("key", F.window("timestamp", "10 seconds"), "leftValue")
        const df2 = input2
          .toDF()
          .select(
            F.col("value").as("key"),
            F.timestamp_seconds("value").as("timestamp"),
            F.col("value").multiply(3).as("rightValue")
          )
          .select("key", F.window("timestamp", "10 seconds"), "rightValue")
        const joined = df1
          .join(df2, ["key", "window"])
          .select("key", F.col("window.end").cast("long").as("end"), "leftValue", "rightValue")
        const r = (key: number, end: number, leftValue: number, rightValue: number) => ({
          key,
          end,
          leftValue,
          rightValue
        })
        yield* testStream(joined, "append", [
          AddData(input1, 1),
          CheckAnswer(),
          assertNumStateRows({ total: 1, updated: 1 }),
          AddData(input2, 1),
          CheckAnswer(r(1, 10, 2, 3)),
          assertNumStateRows({ total: 2, updated: 1 }),
          StopStream,
          StartStream(),
          AddData(input1, 25),
          CheckNewAnswer(), // watermark = 15, no-data-batch should remove 2 rows having window=[0,10]
          assertNumStateRows({ total: 1, updated: 1 }),
          AddData(input2, 25),
          CheckNewAnswer(r(25, 30, 50, 75)),
          assertNumStateRows({ total: 2, updated: 1 }),
          StopStream,
          StartStream(),
          AddData(input2, 1),
          CheckNewAnswer(), // Should not join as < 15 removed
          assertNumStateRows({ total: 2, updated: 0 }), // row not add as 1 < state key watermark = 15
          AddData(input1, 5),
          CheckNewAnswer(), // Same reason as above
          assertNumStateRows({ total: 2, updated: 0, droppedByWatermark: 1 })
        ])
      }).pipe(Effect.provide(provider.layer()))
    )
  }

  it.effect("stream stream self join", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Int)
      const df = input.toDF()
      const l = df.select(F.col("value").mod(5).as("key"), "value")
      const r = df.select(F.col("value").mod(5).as("key"), "value")
      // Spark's rows are positional (key, value, value); the two `value` columns are named here.
      const join = l.join(r, "key").select("key", l.col("value").as("lv"), r.col("value").as("rv"))
      const t = (key: number, lv: number, rv: number) => ({ key, lv, rv })
      yield* testStream(join as DataFrame<any>, "append", [
        AddData(input, 1, 2),
        CheckAnswer(t(1, 1, 1), t(2, 2, 2)),
        StopStream,
        StartStream(),
        AddData(input, 3, 6),
        // (1, 1)     (1, 1)
        // (2, 2)  x  (2, 2)  =  (1, 1, 1), (1, 1, 6), (2, 2, 2), (1, 6, 1), (1, 6, 6)
        // (1, 6)     (1, 6)
        CheckAnswer(t(3, 3, 3), t(1, 1, 1), t(1, 1, 6), t(2, 2, 2), t(1, 6, 1), t(1, 6, 6))
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  /** Spark's `testForJoinKeyNullability`: `leftKey <=> rightKey`, an inner join. */
  const joinKeyNullability = (left: DataFrame<any>, right: DataFrame<any>) => {
    const df1 = left.select(F.col("value").as("leftKey"), F.col("value").multiply(2).as("leftValue"))
    const df2 = right.select(F.col("value").as("rightKey"), F.col("value").multiply(3).as("rightValue"))
    return (df1.join(df2, F.col("leftKey").eqNullSafe(F.col("rightKey"))) as DataFrame<any>).select(
      "leftKey",
      "rightKey",
      "leftValue",
      "rightValue"
    )
  }
  const kn = (
    leftKey: number | null,
    rightKey: number | null,
    leftValue: number | null,
    rightValue: number | null
  ) => ({
    leftKey,
    rightKey,
    leftValue,
    rightValue
  })

  it.effect("joining non-nullable left join key with nullable right join key", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(Schema.Int)
      const input2 = yield* MemoryStream.make(Schema.NullOr(Schema.Int))
      const joined = joinKeyNullability(input1.toDF() as DataFrame<any>, input2.toDF() as DataFrame<any>)
      yield* testStream(joined, "append", [
        AddData(input1, 1, 5),
        AddData(input2, 1, 5, 10, null),
        CheckNewAnswer(kn(1, 1, 2, 3), kn(5, 5, 10, 15))
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("joining nullable left join key with non-nullable right join key", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(Schema.NullOr(Schema.Int))
      const input2 = yield* MemoryStream.make(Schema.Int)
      const joined = joinKeyNullability(input1.toDF() as DataFrame<any>, input2.toDF() as DataFrame<any>)
      yield* testStream(joined, "append", [
        AddData(input1, 1, 5, 10, null),
        AddData(input2, 1, 5),
        CheckNewAnswer(kn(1, 1, 2, 3), kn(5, 5, 10, 15))
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("joining nullable left join key with nullable right join key", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(Schema.NullOr(Schema.Int))
      const input2 = yield* MemoryStream.make(Schema.NullOr(Schema.Int))
      const joined = joinKeyNullability(input1.toDF() as DataFrame<any>, input2.toDF() as DataFrame<any>)
      yield* testStream(joined, "append", [
        AddData(input1, 1, 5, 10, null),
        AddData(input2, 1, 5, null),
        CheckNewAnswer(kn(1, 1, 2, 3), kn(5, 5, 10, 15), kn(null, null, null, null))
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  // Spark restores a checkpoint written by Spark 3.5.1 for the query without the name columns;
  // here the same base query writes the checkpoint first, then the changed query restarts on it.
  const Triple = Schema.Struct({ _1: Schema.Int, _2: Schema.Int, _3: Schema.String })
  const selfInnerJoin = (inputStream: MemoryStream<any>, named: boolean, nameInKey: boolean): DataFrame<any> => {
    const df = (inputStream.toDF() as DataFrame<any>).select(
      F.col("_1").as("value"),
      F.timestamp_seconds("_2").as("timestamp"),
      ...(named ? [F.col("_3").as("name")] : [])
    )
    const leftStream = df.select(
      F.col("value").as("leftId"),
      F.col("timestamp").as("leftTime"),
      ...(named ? [F.col("name").as("leftName")] : [])
    )
    const rightStream = df
      .where(F.col("value").mod(2).eq(0))
      .select(
        F.col("value").as("rightId"),
        F.col("timestamp").as("rightTime"),
        ...(named ? [F.col("name").as("rightName")] : [])
      )
    const lt = F.col("leftTime").cast("long")
    const rt = F.col("rightTime").cast("long")
    let condition = F.col("rightId").eq(F.col("leftId"))
    if (nameInKey) condition = condition.and(F.col("leftName").eq(F.col("rightName")))
    condition = condition.and(rt.geq(lt)).and(rt.leq(lt.plus(5)))
    const joined = leftStream
      .withWatermark("leftTime", "5 seconds")
      .join(rightStream.withWatermark("rightTime", "5 seconds"), condition, "inner") as DataFrame<any>
    return named
      ? joined.select(
          F.col("leftId"),
          F.col("leftTime").cast("int").as("leftTime"),
          F.col("leftName"),
          F.col("rightId"),
          F.col("rightTime").cast("int").as("rightTime"),
          F.col("rightName")
        )
      : joined.select(
          F.col("leftId"),
          F.col("leftTime").cast("int").as("leftTime"),
          F.col("rightId"),
          F.col("rightTime").cast("int").as("rightTime")
        )
  }

  for (const [what, nameInKey, errorClass] of [
    ["join condition (key schema)", true, "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE"],
    ["value schema", false, "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE"]
  ] as const) {
    for (const provider of providers) {
      it.effect(
        `SPARK-48687 - restore the stream-stream inner join query from Spark 3.5 and changing the ${what} should fail the query (${provider.name})`,
        () =>
          Effect.gen(function* () {
            const dir = yield* tempDir()
            const base = yield* MemoryStream.make(Pair)
            const baseRow = (leftId: number, leftTime: number, rightId: number, rightTime: number) => ({
              leftId,
              leftTime,
              rightId,
              rightTime
            })
            yield* testStream(selfInnerJoin(base, false, false), "append", [
              StartStream({ checkpointLocation: dir }),
              AddData(base, pr(1, 1), pr(2, 2), pr(3, 3), pr(4, 4), pr(5, 5)),
              CheckNewAnswer(baseRow(2, 2, 2, 2), baseRow(4, 4, 4, 4)),
              StopStream
            ])
            const inputStream = yield* MemoryStream.make(Triple)
            const tr = (_1: number, _2: number, _3: string) => ({ _1, _2, _3 })
            yield* inputStream.addData([tr(1, 1, "a"), tr(2, 2, "b"), tr(3, 3, "c"), tr(4, 4, "d"), tr(5, 5, "e")])
            yield* testStream(selfInnerJoin(inputStream, true, nameInKey), "append", [
              StartStream({ checkpointLocation: dir }),
              AddData(inputStream, tr(6, 6, "a"), tr(7, 7, "a"), tr(8, 8, "a"), tr(9, 9, "a"), tr(10, 10, "a")),
              AssertOnQuery(
                (q) =>
                  Effect.gen(function* () {
                    yield* Effect.exit(q.awaitTermination())
                    const error = yield* q.exception()
                    const cause = error?.cause as { _tag?: string; message?: string } | undefined
                    // The schema check fails the query while it plans its first batch: none runs.
                    return (
                      cause?._tag === "StateStoreError" &&
                      (cause.message ?? "").startsWith(`[${errorClass}]`) &&
                      (yield* q.recentProgress()).length === 0
                    )
                  }),
                `the query fails with ${errorClass}`
              )
            ]).pipe(Effect.ensuring(removeDir(dir)))
          }).pipe(Effect.provide(provider.layer()))
      )
    }
  }
})

describe("StreamingInnerJoinSuite (time ranges, shapes, metrics)", () => {
  it.effect("stream stream inner join with time range - with watermark - one side condition", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const leftInput = yield* MemoryStream.make(Pair)
      const rightInput = yield* MemoryStream.make(Pair)
      const df1 = (leftInput.toDF() as DataFrame<any>)
        .toDF("leftKey", "time")
        .select("leftKey", F.timestamp_seconds("time").as("leftTime"), F.col("leftKey").multiply(2).as("leftValue"))
        .withWatermark("leftTime", "10 seconds")
      const df2 = (rightInput.toDF() as DataFrame<any>)
        .toDF("rightKey", "time")
        .select("rightKey", F.timestamp_seconds("time").as("rightTime"), F.col("rightKey").multiply(3).as("rightValue"))
        .withWatermark("rightTime", "10 seconds")
      // leftKey = rightKey AND leftTime < rightTime - interval 5 seconds
      const joined = df1
        .join(
          df2,
          F.col("leftKey")
            .eq(F.col("rightKey"))
            .and(F.col("leftTime").cast("long").lt(F.col("rightTime").cast("long").minus(5)))
        )
        .select(
          F.col("leftKey"),
          F.col("leftTime").cast("int").as("leftTime"),
          F.col("rightTime").cast("int").as("rightTime")
        )
      const r = (leftKey: number, leftTime: number, rightTime: number) => ({ leftKey, leftTime, rightTime })
      yield* testStream(joined, "append", [
        AddData(leftInput, pr(1, 5)),
        CheckAnswer(),
        AddData(rightInput, pr(1, 11)),
        CheckNewAnswer(r(1, 5, 11)),
        AddData(rightInput, pr(1, 10)),
        CheckNewAnswer(), // no match as leftTime 5 is not < rightTime 10 - 5
        assertNumStateRows({ total: 3, updated: 3 }),
        // Increase event time watermark to 20s by adding data with time = 30s on both inputs
        AddData(leftInput, pr(1, 3), pr(1, 30)),
        CheckNewAnswer(r(1, 3, 10), r(1, 3, 11)),
        assertNumStateRows({ total: 5, updated: 2 }),
        AddData(rightInput, pr(0, 30)),
        CheckNewAnswer(),
        // event time watermark: max event time - 10 ==> 30 - 10 = 20, so the left side only gets
        // leftTime > 20; right state constraint 20 < leftTime < rightTime - 5 ==> rightTime > 25:
        // right state with rightTime <= 25 is cleared, (1, 11) and (1, 10) removed
        assertNumStateRows({ total: 4, updated: 1 }),
        // (1, 20) ==> filtered by event time watermark = 20
        // (1, 21) ==> passed filter, matched with left (1, 3) and (1, 5), not added to state
        //             as 21 < state watermark = 25
        // (1, 28) ==> passed filter, matched with left (1, 3) and (1, 5), added to state
        AddData(rightInput, pr(1, 20), pr(1, 21), pr(1, 28)),
        CheckNewAnswer(r(1, 3, 21), r(1, 5, 21), r(1, 3, 28), r(1, 5, 28)),
        assertNumStateRows({ total: 5, updated: 1, droppedByWatermark: 1 }),
        // New data to left input with leftTime <= 20 should be filtered due to event time watermark
        AddData(leftInput, pr(1, 20), pr(1, 21)),
        CheckNewAnswer(r(1, 21, 28)),
        assertNumStateRows({ total: 6, updated: 1, droppedByWatermark: 1 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("stream stream inner join with time range - with watermark - two side conditions", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const leftInput = yield* MemoryStream.make(Pair)
      const rightInput = yield* MemoryStream.make(Pair)
      const df1 = (leftInput.toDF() as DataFrame<any>)
        .toDF("leftKey", "time")
        .select("leftKey", F.timestamp_seconds("time").as("leftTime"), F.col("leftKey").multiply(2).as("leftValue"))
        .withWatermark("leftTime", "20 seconds")
      const df2 = (rightInput.toDF() as DataFrame<any>)
        .toDF("rightKey", "time")
        .select("rightKey", F.timestamp_seconds("time").as("rightTime"), F.col("rightKey").multiply(3).as("rightValue"))
        .withWatermark("rightTime", "30 seconds")
      const lt = F.col("leftTime").cast("long")
      const rt = F.col("rightTime").cast("long")
      // leftTime BETWEEN rightTime - interval 10 seconds AND rightTime + interval 5 seconds
      const joined = df1
        .join(
          df2,
          F.col("leftKey")
            .eq(F.col("rightKey"))
            .and(lt.between(rt.minus(10), rt.plus(5)))
        )
        .select(
          F.col("leftKey"),
          F.col("leftTime").cast("int").as("leftTime"),
          F.col("rightTime").cast("int").as("rightTime")
        )
      const r = (leftKey: number, leftTime: number, rightTime: number) => ({ leftKey, leftTime, rightTime })
      yield* testStream(joined, "append", [
        // If leftTime = 20, then it match only with rightTime = [15, 30]
        AddData(leftInput, pr(1, 20)),
        CheckAnswer(),
        AddData(rightInput, pr(1, 14), pr(1, 15), pr(1, 25), pr(1, 26), pr(1, 30), pr(1, 31)),
        CheckNewAnswer(r(1, 20, 15), r(1, 20, 25), r(1, 20, 26), r(1, 20, 30)),
        assertNumStateRows({ total: 7, updated: 7 }),
        // If rightTime = 60, then it matches only leftTime = [50, 65]
        AddData(rightInput, pr(1, 60)),
        CheckNewAnswer(), // matches with nothing on the left
        AddData(leftInput, pr(1, 49), pr(1, 50), pr(1, 65), pr(1, 66)),
        CheckNewAnswer(r(1, 50, 60), r(1, 65, 60)),
        // Event time watermark = min(left: 66 - delay 20 = 46, right: 60 - delay 30 = 30) = 30
        // Left state value watermark = 30 - 10 = slightly less than 20: drops none from the left
        // Right state value watermark = 30 - 5 = slightly less than 25: drops 14 and 15
        assertNumStateRows({ total: 10, updated: 5 }), // 12 - 2 removed
        AddData(leftInput, pr(1, 30), pr(1, 31)), // 30 should not be processed or added to state
        CheckNewAnswer(r(1, 31, 26), r(1, 31, 30), r(1, 31, 31)),
        assertNumStateRows({ total: 11, updated: 1, droppedByWatermark: 1 }), // only 31 added
        // Advance the watermark
        AddData(rightInput, pr(1, 80)),
        CheckNewAnswer(),
        // Event time watermark = min(left: 66 - delay 20 = 46, right: 80 - delay 30 = 50) = 46
        // Left state value watermark = 46 - 10 = slightly less than 36: drops 20, 31 (30 was not added)
        // Right state value watermark = 46 - 5 = slightly less than 41: drops 25, 26, 30, 31
        assertNumStateRows({ total: 6, updated: 1 }), // 12 - 6 removed
        AddData(rightInput, pr(1, 46), pr(1, 50)), // 46 should not be processed or added to state
        CheckNewAnswer(r(1, 49, 50), r(1, 50, 50)),
        assertNumStateRows({ total: 7, updated: 1, droppedByWatermark: 1 }) // 50 added
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("stream stream inner join without equality predicate", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(Schema.Int)
      const input2 = yield* MemoryStream.make(Schema.Int)
      const df1 = input1.toDF().select(F.col("value").as("leftKey"), F.col("value").multiply(2).as("leftValue"))
      const df2 = input2.toDF().select(F.col("value").as("rightKey"), F.col("value").multiply(3).as("rightValue"))
      const joined = df1.join(df2, F.col("leftKey").lt(F.col("rightKey")))
      // Spark refuses the plan when it plans the first batch: the query fails.
      const query = yield* joined.writeStream.format("memory").queryName("noEquality").start()
      yield* input1.addData([1])
      const error = yield* Effect.flip(query.awaitTermination())
      assert.strictEqual(error._tag, "StreamingQueryError")
      assert.include(error.message, "Stream-stream join without equality predicate is not supported")
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("join between three streams", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(Schema.Int)
      const input2 = yield* MemoryStream.make(Schema.Int)
      const input3 = yield* MemoryStream.make(Schema.Int)
      const df1 = input1.toDF().select(F.col("value").as("leftKey"), F.col("value").multiply(2).as("leftValue"))
      const df2 = input2.toDF().select(F.col("value").as("middleKey"), F.col("value").multiply(3).as("middleValue"))
      const df3 = input3.toDF().select(F.col("value").as("rightKey"), F.col("value").multiply(5).as("rightValue"))
      const joined = df1
        .join(df2, F.col("leftKey").eq(F.col("middleKey")))
        .join(df3, F.col("rightKey").eq(F.col("middleKey")))
      yield* testStream(joined, "append", [
        AddData(input1, 1, 5),
        AddData(input2, 1, 5, 10),
        AddData(input3, 5, 10),
        CheckNewAnswer({ leftKey: 5, leftValue: 10, middleKey: 5, middleValue: 15, rightKey: 5, rightValue: 25 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("streaming join should require StatefulOpClusteredDistribution from children", () =>
    Effect.gen(function* () {
      // Spark's check of the executed plan (a hash-partitioning shuffle on (a, b) under each side,
      // with spark.sql.shuffle.partitions partitions) has no counterpart: tributary runs each
      // batch in one partition. The answer over many rows, with the repartitioned side, stays.
      const input1 = yield* MemoryStream.make(Schema.Int)
      const input2 = yield* MemoryStream.make(Schema.Int)
      const df1 = input1.toDF().select(F.col("value").as("a"), F.col("value").multiply(2).as("b"))
      const df2 = input2
        .toDF()
        .select(F.col("value").as("a"), F.col("value").multiply(2).as("b"))
        .repartition(undefined, "b")
      const joined = df1.join(df2, ["a", "b"]).select("a")
      const xs = Array.from({ length: 1000 }, (_, i) => i + 1)
      yield* testStream(joined, "append", [
        AddData(input1, ...xs),
        AddData(input2, ...xs),
        CheckAnswer(...xs.map((a) => ({ a })))
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("SPARK-35896: metrics in StateOperatorProgress are output correctly", () =>
    Effect.gen(function* () {
      const { assertNumStateRows, assertStateOperatorProgressMetric } = stateMetrics()
      const input1 = yield* MemoryStream.make(Schema.Int)
      const input2 = yield* MemoryStream.make(Schema.Int)
      const df1 = input1
        .toDF()
        .select(
          F.col("value").as("key"),
          F.timestamp_seconds("value").as("timestamp"),
          F.col("value").multiply(2).as("leftValue")
        )
        .withWatermark("timestamp", "10 seconds")
        .select("key", F.window("timestamp", "10 seconds"), "leftValue")
      const df2 = input2
        .toDF()
        .select(
          F.col("value").as("key"),
          F.timestamp_seconds("value").as("timestamp"),
          F.col("value").multiply(3).as("rightValue")
        )
        .select("key", F.window("timestamp", "10 seconds"), "rightValue")
      const joined = df1
        .join(df2, ["key", "window"])
        .select("key", F.col("window.end").cast("long").as("end"), "leftValue", "rightValue")
      const r = (key: number, end: number, leftValue: number, rightValue: number) => ({
        key,
        end,
        leftValue,
        rightValue
      })
      yield* testStream(joined, "append", [
        StartStream({ additionalConfs: { "spark.sql.shuffle.partitions": "3" } }),
        AddData(input1, 1),
        CheckAnswer(),
        assertStateOperatorProgressMetric("symmetricHashJoin", 3, 12),
        AddData(input2, 1),
        CheckAnswer(r(1, 10, 2, 3)),
        assertNumStateRows({ total: [2], updated: [1], droppedByWatermark: [0], removed: [0] }),
        // The provider's custom metrics of both keyWithIndexToValue stores, summed (DuckDB's cache).
        AssertOnQuery(
          (q) =>
            Effect.map(q.lastProgress(), (p) => {
              const m = p?.stateOperators[0]?.customMetrics ?? {}
              return typeof m.cacheHitCount === "number" && typeof m.cacheMissCount === "number"
            }),
          "customMetrics of the state store provider"
        ),
        AddData(input1, 25),
        CheckNewAnswer(), // watermark = 15, no-data-batch should remove 2 rows having window=[0,10]
        assertNumStateRows({ total: [1], updated: [1], droppedByWatermark: [0], removed: [2] }),
        AddData(input2, 25),
        CheckNewAnswer(r(25, 30, 50, 75)),
        assertNumStateRows({ total: [2], updated: [1], droppedByWatermark: [0], removed: [0] })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )
})

describe("StreamingOuterJoinSuite", () => {
  const lr = (key: number, end: number, leftValue: number | null, rightValue: unknown) => ({
    key,
    end,
    leftValue,
    rightValue
  })

  for (const provider of providers) {
    it.effect(`left outer early state exclusion on left (${provider.name})`, () =>
      Effect.gen(function* () {
        const { assertNumStateRows } = stateMetrics()
        const { leftInput, rightInput, joined } = yield* setupWindowedJoinWithCondition("left_outer", "left")
        yield* testStream(joined, "append", [
          MultiAddData([leftInput, [1, 2, 3]], [rightInput, [3, 4, 5]]),
          // The left rows with leftValue <= 4 should generate their outer join row now and
          // not get added to the state.
          CheckNewAnswer(lr(3, 10, 6, "9"), lr(1, 10, 2, null), lr(2, 10, 4, null)),
          assertNumStateRows({ total: 4, updated: 4 }),
          // We shouldn't get more outer join rows when the watermark advances.
          MultiAddData([leftInput, [20]], [rightInput, [21]]),
          CheckNewAnswer(),
          AddData(rightInput, 20),
          CheckNewAnswer(lr(20, 30, 40, "60"))
        ])
      }).pipe(Effect.provide(provider.layer()))
    )
  }

  it.effect("left outer early state exclusion on right", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { leftInput, rightInput, joined } = yield* setupWindowedJoinWithCondition("left_outer", "right")
      yield* testStream(joined, "append", [
        MultiAddData([leftInput, [3, 4, 5]], [rightInput, [1, 2, 3]]),
        // The right rows with rightValue <= 7 should never be added to the state.
        CheckNewAnswer(lr(3, 10, 6, "9")), // rightValue = 9 > 7 hence joined and added to state
        assertNumStateRows({ total: 4, updated: 4 }),
        // When the watermark advances, we get the outer join rows just as we would if they
        // were added but didn't match the full join condition.
        MultiAddData([leftInput, [20]], [rightInput, [21]]), // watermark = 10, no-data-batch computes nulls
        CheckNewAnswer(lr(4, 10, 8, null), lr(5, 10, 10, null)),
        AddData(rightInput, 20),
        CheckNewAnswer(lr(20, 30, 40, "60"))
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("right outer early state exclusion on left", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { leftInput, rightInput, joined } = yield* setupWindowedJoinWithCondition("right_outer", "left")
      yield* testStream(joined, "append", [
        MultiAddData([leftInput, [1, 2, 3]], [rightInput, [3, 4, 5]]),
        // The left rows with leftValue <= 4 should never be added to the state.
        CheckNewAnswer(lr(3, 10, 6, "9")), // leftValue = 7 > 4 hence joined and added to state
        assertNumStateRows({ total: 4, updated: 4 }),
        MultiAddData([leftInput, [20]], [rightInput, [21]]), // watermark = 10, no-data-batch computes nulls
        CheckNewAnswer(lr(4, 10, null, "12"), lr(5, 10, null, "15")),
        AddData(rightInput, 20),
        CheckNewAnswer(lr(20, 30, 40, "60"))
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("right outer early state exclusion on right", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { leftInput, rightInput, joined } = yield* setupWindowedJoinWithCondition("right_outer", "right")
      yield* testStream(joined, "append", [
        MultiAddData([leftInput, [3, 4, 5]], [rightInput, [1, 2, 3]]),
        // The right rows with rightValue <= 7 should generate their outer join row now and
        // not get added to the state.
        CheckNewAnswer(lr(3, 10, 6, "9"), lr(1, 10, null, "3"), lr(2, 10, null, "6")),
        assertNumStateRows({ total: 4, updated: 4 }),
        // We shouldn't get more outer join rows when the watermark advances.
        MultiAddData([leftInput, [20]], [rightInput, [21]]),
        CheckNewAnswer(),
        AddData(rightInput, 20),
        CheckNewAnswer(lr(20, 30, 40, "60"))
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  for (const provider of providers) {
    it.effect(`windowed left outer join (${provider.name})`, () =>
      Effect.gen(function* () {
        const { assertNumStateRows } = stateMetrics()
        const { input1: leftInput, input2: rightInput, joined } = yield* setupWindowedJoin("left_outer")
        yield* testStream(joined, "append", [
          // Test inner part of the join.
          MultiAddData([leftInput, [1, 2, 3, 4, 5]], [rightInput, [3, 4, 5, 6, 7]]),
          CheckNewAnswer(lr(3, 10, 6, 9), lr(4, 10, 8, 12), lr(5, 10, 10, 15)),
          MultiAddData([leftInput, [21]], [rightInput, [22]]), // watermark = 11, no-data-batch computes nulls
          CheckNewAnswer(lr(1, 10, 2, null), lr(2, 10, 4, null)),
          assertNumStateRows({ total: 2, updated: 12 }),
          StopStream,
          StartStream(),
          AddData(leftInput, 22),
          CheckNewAnswer(lr(22, 30, 44, 66)),
          assertNumStateRows({ total: 3, updated: 1 })
        ])
      }).pipe(Effect.provide(provider.layer()))
    )
  }

  it.effect("windowed right outer join", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { input1: leftInput, input2: rightInput, joined } = yield* setupWindowedJoin("right_outer")
      yield* testStream(joined, "append", [
        MultiAddData([leftInput, [1, 2, 3, 4, 5]], [rightInput, [3, 4, 5, 6, 7]]),
        CheckNewAnswer(lr(3, 10, 6, 9), lr(4, 10, 8, 12), lr(5, 10, 10, 15)),
        MultiAddData([leftInput, [21]], [rightInput, [22]]), // watermark = 11, no-data-batch computes nulls
        CheckNewAnswer(lr(6, 10, null, 18), lr(7, 10, null, 21)),
        assertNumStateRows({ total: 2, updated: 12 }),
        AddData(leftInput, 22),
        CheckNewAnswer(lr(22, 30, 44, 66)),
        assertNumStateRows({ total: 3, updated: 1 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  for (const [joinType, outerResult] of [
    ["left_outer", { leftKey: 3, rightKey: null, leftTime: 5, rightTime: null }],
    ["right_outer", { leftKey: null, rightKey: 2, leftTime: null, rightTime: 5 }]
  ] as const) {
    const rr = (leftKey: number, rightKey: number, leftTime: number, rightTime: number) => ({
      leftKey,
      rightKey,
      leftTime,
      rightTime
    })
    it.effect(`${joinType.replace("_", " ")} with watermark range condition`, () =>
      Effect.gen(function* () {
        const { assertNumStateRows } = stateMetrics()
        const { leftInput, rightInput, joined } = yield* setupJoinWithRangeCondition(joinType)
        yield* testStream(joined, "append", [
          AddData(leftInput, pr(1, 5), pr(3, 5)),
          CheckAnswer(),
          AddData(rightInput, pr(1, 10), pr(2, 5)),
          CheckNewAnswer(rr(1, 1, 5, 10)),
          AddData(rightInput, pr(1, 11)),
          CheckNewAnswer(), // no match as left time is too low
          assertNumStateRows({ total: 5, updated: 5 }),
          // Increase event time watermark to 20s by adding data with time = 30s on both inputs
          AddData(leftInput, pr(1, 7), pr(1, 30)),
          CheckNewAnswer(rr(1, 1, 7, 10), rr(1, 1, 7, 11)),
          assertNumStateRows({ total: 7, updated: 2 }),
          AddData(rightInput, pr(0, 30)), // watermark = 30 - 10 = 20, no-data-batch computes nulls
          CheckNewAnswer(outerResult),
          assertNumStateRows({ total: 2, updated: 1 })
        ])
        // The same with a 10 minutes watermark and a bound of 3 minutes 30 seconds.
        const second = yield* setupJoinWithRangeCondition(joinType, "10 minutes", 210, 210)
        const metrics2 = stateMetrics()
        yield* testStream(second.joined, "append", [
          AddData(second.leftInput, pr(1, 210), pr(3, 5)),
          CheckAnswer(),
          AddData(second.rightInput, pr(1, 300), pr(2, 5)),
          CheckNewAnswer(rr(1, 1, 210, 300)),
          AddData(second.rightInput, pr(1, 450)),
          CheckNewAnswer(),
          metrics2.assertNumStateRows({ total: 5, updated: 5 }),
          AddData(second.leftInput, pr(1, 260), pr(1, 1800)),
          CheckNewAnswer(rr(1, 1, 260, 300), rr(1, 1, 260, 450)),
          metrics2.assertNumStateRows({ total: 7, updated: 2 }),
          AddData(second.rightInput, pr(0, 1800)),
          CheckNewAnswer(outerResult),
          metrics2.assertNumStateRows({ total: 2, updated: 1 })
        ])
      }).pipe(Effect.provide(duck.layer()))
    )
  }

  // When the join condition isn't true, the outer null rows must be generated, even if the join
  // keys themselves have a match.
  it.effect("left outer join with non-key condition violated", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const leftInput = yield* MemoryStream.make(Schema.Int)
      const rightInput = yield* MemoryStream.make(Schema.Int)
      const left = setupStream(leftInput, "left", 2).select("key", F.window("leftTime", "10 seconds"), "leftValue")
      const right = setupStream(rightInput, "right", 3).select("key", F.window("rightTime", "10 seconds"), "rightValue")
      const joined = left
        .join(
          right,
          left
            .col("key")
            .eq(right.col("key"))
            .and(left.col("window").eq(right.col("window")))
            .and(F.col("leftValue").gt(10))
            .and(F.col("rightValue").lt(300).or(F.col("rightValue").gt(1000))),
          "left_outer"
        )
        .select(left.col("key"), left.col("window.end").cast("long").as("end"), F.col("leftValue"), F.col("rightValue"))
      yield* testStream(joined as DataFrame<any>, "append", [
        // leftValue <= 10 should generate outer join rows even though it matches right keys
        MultiAddData([leftInput, [1, 2, 3]], [rightInput, [1, 2, 3]]),
        CheckNewAnswer(lr(1, 10, 2, null), lr(2, 10, 4, null), lr(3, 10, 6, null)),
        assertNumStateRows({ total: 3, updated: 3 }), // only right 1, 2, 3 added
        MultiAddData([leftInput, [20]], [rightInput, [21]]), // watermark = 10, no-data-batch cleared < 10
        CheckNewAnswer(),
        assertNumStateRows({ total: 2, updated: 2 }), // only 20 and 21 left in state
        AddData(rightInput, 20),
        CheckNewAnswer(lr(20, 30, 40, 60)),
        assertNumStateRows({ total: 3, updated: 1 }),
        // leftValue and rightValue both satisfying condition should not generate outer join rows
        MultiAddData([leftInput, [40, 41]], [rightInput, [40, 41]]), // watermark = 31
        CheckNewAnswer(lr(40, 50, 80, 120), lr(41, 50, 82, 123)),
        assertNumStateRows({ total: 4, updated: 4 }), // only left 40, 41 + right 40,41 left in state
        MultiAddData([leftInput, [70]], [rightInput, [71]]), // watermark = 60
        CheckNewAnswer(),
        assertNumStateRows({ total: 2, updated: 2 }), // only 70, 71 left in state
        AddData(rightInput, 70),
        CheckNewAnswer(lr(70, 80, 140, 210)),
        assertNumStateRows({ total: 3, updated: 1 }),
        // rightValue between 300 and 1000 should generate outer join rows even though it matches left
        MultiAddData([leftInput, [101, 102, 103]], [rightInput, [101, 102, 103]]), // watermark = 91
        CheckNewAnswer(),
        assertNumStateRows({ total: 6, updated: 3 }), // only 101 - 103 left in state
        MultiAddData([leftInput, [1000]], [rightInput, [1001]]),
        CheckNewAnswer(lr(101, 110, 202, null), lr(102, 110, 204, null), lr(103, 110, 206, null)),
        assertNumStateRows({ total: 2, updated: 2 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  const sr = (leftId: number, leftTime: number, rightId: number | null, rightTime: number | null) => ({
    leftId,
    leftTime,
    rightId,
    rightTime
  })

  it.effect("SPARK-26187 self left outer join should not return outer nulls for already matched rows", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { inputStream, joined } = yield* setupSelfJoin("left_outer")
      yield* testStream(joined, "append", [
        AddData(inputStream, pr(1, 1), pr(2, 2), pr(3, 3), pr(4, 4), pr(5, 5)),
        // batch 1 - global watermark = 0
        // states: left (1, 1), (2, 2), (3, 3), (4, 4), (5, 5); right (2, 2), (4, 4)
        CheckNewAnswer(sr(2, 2, 2, 2), sr(4, 4, 4, 4)),
        assertNumStateRows({ total: 7, updated: 7 }),
        AddData(inputStream, pr(6, 6), pr(7, 7), pr(8, 8), pr(9, 9), pr(10, 10)),
        // batch 2 - global watermark = 5
        // states: left (1, 1) … (10, 10); right (6, 6), (8, 8), (10, 10)
        // evicted: left nothing (it waits 5 seconds more than the watermark due to the
        // condition); right (2, 2), (4, 4)
        CheckNewAnswer(sr(6, 6, 6, 6), sr(8, 8, 8, 8), sr(10, 10, 10, 10)),
        assertNumStateRows({ total: 13, updated: 8 }),
        AddData(inputStream, pr(11, 11), pr(12, 12), pr(13, 13), pr(14, 14), pr(15, 15)),
        // batch 3 - global watermark = 9
        // evicted: left (1, 1), (2, 2), (3, 3); right (6, 6), (8, 8); the rows of the left that
        // were evicted from the right in batch 2 were properly joined in batch 1: no nulls for them
        CheckNewAnswer(sr(12, 12, 12, 12), sr(14, 14, 14, 14), sr(1, 1, null, null), sr(3, 3, null, null)),
        assertNumStateRows({ total: 15, updated: 7 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("SPARK-26187 self right outer join should not return outer nulls for already matched rows", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const inputStream = yield* MemoryStream.make(Pair)
      const df = (inputStream.toDF() as DataFrame<any>).select(
        F.col("_1").as("value"),
        F.timestamp_seconds("_2").as("timestamp")
      )
      // "left" and "right" of the left outer test, flipped
      const leftStream = df
        .where(F.col("value").mod(2).eq(0))
        .select(F.col("value").as("leftId"), F.col("timestamp").as("leftTime"))
      const rightStream = df.select(F.col("value").as("rightId"), F.col("timestamp").as("rightTime"))
      const lt = F.col("leftTime").cast("long")
      const rt = F.col("rightTime").cast("long")
      const query = leftStream
        .withWatermark("leftTime", "5 seconds")
        .join(
          rightStream.withWatermark("rightTime", "5 seconds"),
          F.col("leftId")
            .eq(F.col("rightId"))
            .and(lt.geq(rt))
            .and(lt.leq(rt.plus(5))),
          "right_outer"
        )
        .select(
          F.col("leftId"),
          F.col("leftTime").cast("int").as("leftTime"),
          F.col("rightId"),
          F.col("rightTime").cast("int").as("rightTime")
        )
      const row = (leftId: number | null, leftTime: number | null, rightId: number, rightTime: number) => ({
        leftId,
        leftTime,
        rightId,
        rightTime
      })
      yield* testStream(query, "append", [
        AddData(inputStream, pr(1, 1), pr(2, 2), pr(3, 3), pr(4, 4), pr(5, 5)),
        CheckNewAnswer(row(2, 2, 2, 2), row(4, 4, 4, 4)),
        assertNumStateRows({ total: 7, updated: 7 }),
        AddData(inputStream, pr(6, 6), pr(7, 7), pr(8, 8), pr(9, 9), pr(10, 10)),
        CheckNewAnswer(row(6, 6, 6, 6), row(8, 8, 8, 8), row(10, 10, 10, 10)),
        assertNumStateRows({ total: 13, updated: 8 }),
        AddData(inputStream, pr(11, 11), pr(12, 12), pr(13, 13), pr(14, 14), pr(15, 15)),
        CheckNewAnswer(row(12, 12, 12, 12), row(14, 14, 14, 14), row(null, null, 1, 1), row(null, null, 3, 3)),
        assertNumStateRows({ total: 15, updated: 7 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("SPARK-32148 stream-stream join regression on Spark 3.0.0", () =>
    Effect.gen(function* () {
      const Triple = Schema.Struct({ _1: Schema.Date, _2: Schema.String, _3: Schema.String })
      const input1 = yield* MemoryStream.make(Triple)
      const input2 = yield* MemoryStream.make(Triple)
      const df1 = (input1.toDF() as DataFrame<any>)
        .select(F.col("_1").as("eventTime"), F.col("_2").as("id"), F.col("_3").as("comment"))
        .withWatermark("eventTime", "2 minutes")
      const df2 = (input2.toDF() as DataFrame<any>)
        .select(F.col("_1").as("eventTime"), F.col("_2").as("id"), F.col("_3").as("name"))
        .withWatermark("eventTime", "4 minutes")
      const l = df1.as("left")
      const r = df2.as("right")
      const lt = F.col("left.eventTime").cast("long")
      const rt = F.col("right.eventTime").cast("long")
      const joined = l
        .join(
          r,
          F.col("left.id")
            .eq(F.col("right.id"))
            .and(lt.between(rt.minus(30), rt.plus(30))),
          "left_outer"
        )
        .select(
          F.col("left.eventTime").as("leftTime"),
          F.col("left.id").as("leftId"),
          F.col("comment"),
          F.col("right.eventTime").as("rightTime"),
          F.col("right.id").as("rightId"),
          F.col("name")
        )
      const ts = (s: string) => new Date(`${s}Z`)
      const t = (time: string, id: string, text: string) => ({ _1: ts(time), _2: id, _3: text })
      const out = (lt: string, c: string, rt: string | null, n: string | null) => ({
        leftTime: ts(lt),
        leftId: "abc",
        comment: c,
        rightTime: rt === null ? null : ts(rt),
        rightId: rt === null ? null : "abc",
        name: n
      })
      yield* testStream(joined, "append", [
        MultiAddData(
          [
            input1,
            [
              t("2020-01-01T00:00:00", "abc", "has no join partner"),
              t("2020-01-02T00:00:00", "abc", "joined with A"),
              t("2020-01-02T01:00:00", "abc", "joined with B")
            ]
          ],
          [
            input2,
            [
              t("2020-01-02T00:00:10", "abc", "A"),
              t("2020-01-02T00:59:59", "abc", "B"),
              t("2020-01-02T02:00:00", "abc", "C")
            ]
          ]
        ),
        CheckNewAnswer(
          out("2020-01-01T00:00:00", "has no join partner", null, null),
          out("2020-01-02T00:00:00", "joined with A", "2020-01-02T00:00:10", "A"),
          out("2020-01-02T01:00:00", "joined with B", "2020-01-02T00:59:59", "B")
        )
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("SPARK-29438: ensure UNION doesn't lead stream-stream join to use shifted partition IDs", () =>
    Effect.gen(function* () {
      // Spark restarts with another number of partitions of input1 (MemoryStream[Int](3) after
      // MemoryStream[Int](2)); tributary's memory stream has one partition, so the restart on the
      // same checkpoint with new streams is what remains to check.
      const constructUnionDf = Effect.gen(function* () {
        const input1 = yield* MemoryStream.make(Schema.Int)
        const df1 = (input1.toDF() as DataFrame<any>).select(
          F.col("value").as("key"),
          F.col("value").as("leftValue"),
          F.col("value").as("rightValue")
        )
        const input2 = yield* MemoryStream.make(Schema.Int)
        const input3 = yield* MemoryStream.make(Schema.Int)
        const df2 = setupStream(input2, "left", 2)
        const df3 = setupStream(input3, "right", 3)
        const joined = df2
          .join(
            df3,
            df2
              .col("key")
              .eq(df3.col("key"))
              .and(df2.col("leftTime").eq(df3.col("rightTime"))),
            "inner"
          )
          .select(df2.col("key"), F.col("leftValue"), F.col("rightValue")) as DataFrame<any>
        return { input1, input2, input3, unionDf: df1.union(joined) }
      })
      const u = (key: number, leftValue: number, rightValue: number) => ({ key, leftValue, rightValue })
      const dir = yield* tempDir()
      const first = yield* constructUnionDf
      yield* testStream(first.unionDf, "append", [
        StartStream({ checkpointLocation: dir }),
        MultiAddData(
          [first.input1, [11, 12, 13]],
          [first.input2, [11, 12, 13, 14, 15]],
          [first.input3, [13, 14, 15, 16, 17]]
        ),
        CheckNewAnswer(u(11, 11, 11), u(12, 12, 12), u(13, 13, 13), u(13, 26, 39), u(14, 28, 42), u(15, 30, 45)),
        StopStream
      ])
      const second = yield* constructUnionDf
      yield* second.input1.addData([11, 12, 13])
      yield* second.input2.addData([11, 12, 13, 14, 15])
      yield* second.input3.addData([13, 14, 15, 16, 17])
      yield* testStream(second.unionDf, "append", [
        StartStream({ checkpointLocation: dir }),
        MultiAddData(
          [second.input1, [21, 22, 23]],
          [second.input2, [21, 22, 23, 24, 25]],
          [second.input3, [23, 24, 25, 26, 27]]
        ),
        CheckNewAnswer(u(21, 21, 21), u(22, 22, 22), u(23, 23, 23), u(23, 46, 69), u(24, 48, 72), u(25, 50, 75))
      ]).pipe(Effect.ensuring(removeDir(dir)))
    }).pipe(Effect.provide(duck.layer()))
  )

  /** Spark's `testForLeftOuterJoinKeyNullability`: `leftKey1 <=> rightKey1 AND leftKey2 = rightKey2 AND leftWindow = rightWindow`. */
  const leftOuterKeyNullability = (left: DataFrame<any>, right: DataFrame<any>) => {
    const df1 = left
      .select(
        F.col("_1").as("leftKey1"),
        F.col("_2").as("leftKey2"),
        F.timestamp_seconds("_2").as("leftTime"),
        F.col("_2").multiply(2).as("leftValue")
      )
      .withWatermark("leftTime", "10 seconds")
    const df2 = right
      .select(
        F.col("_1").as("rightKey1"),
        F.col("_2").as("rightKey2"),
        F.timestamp_seconds("_2").as("rightTime"),
        F.col("_2").multiply(3).as("rightValue")
      )
      .withWatermark("rightTime", "10 seconds")
    const windowed1 = df1.select(
      "leftKey1",
      "leftKey2",
      F.window("leftTime", "10 seconds").as("leftWindow"),
      "leftValue"
    )
    const windowed2 = df2.select(
      "rightKey1",
      "rightKey2",
      F.window("rightTime", "10 seconds").as("rightWindow"),
      "rightValue"
    )
    return (
      windowed1.join(
        windowed2,
        F.col("leftKey1")
          .eqNullSafe(F.col("rightKey1"))
          .and(F.col("leftKey2").eq(F.col("rightKey2")))
          .and(F.col("leftWindow").eq(F.col("rightWindow"))),
        "left_outer"
      ) as DataFrame<any>
    ).select(
      "leftKey1",
      "rightKey1",
      "leftKey2",
      "rightKey2",
      F.col("leftWindow.end").cast("long").as("end"),
      "leftValue",
      "rightValue"
    ) as DataFrame<any>
  }
  const NullablePair = Schema.Struct({ _1: Schema.NullOr(Schema.Int), _2: Schema.Int })
  const np = (_1: number | null, _2: number) => ({ _1, _2 })
  const ko = (
    leftKey1: number | null,
    rightKey1: number | null,
    leftKey2: number,
    rightKey2: number | null,
    end: number,
    leftValue: number,
    rightValue: number | null
  ) => ({ leftKey1, rightKey1, leftKey2, rightKey2, end, leftValue, rightValue })

  it.effect("left-outer: joining non-nullable left join key with nullable right join key", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(Pair)
      const input2 = yield* MemoryStream.make(NullablePair)
      const joined = leftOuterKeyNullability(input1.toDF() as DataFrame<any>, input2.toDF() as DataFrame<any>)
      yield* testStream(joined, "append", [
        AddData(input1, pr(1, 1), pr(1, 2), pr(1, 3), pr(1, 4), pr(1, 5)),
        AddData(input2, np(1, 3), np(1, 4), np(1, 5), np(1, 6)),
        CheckNewAnswer(ko(1, 1, 3, 3, 10, 6, 9), ko(1, 1, 4, 4, 10, 8, 12), ko(1, 1, 5, 5, 10, 10, 15)),
        AddData(input1, pr(1, 21)),
        // right-null join
        AddData(input2, np(1, 22)), // watermark = 11, no-data-batch computes nulls
        CheckNewAnswer(ko(1, null, 1, null, 10, 2, null), ko(1, null, 2, null, 10, 4, null))
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("left-outer: joining nullable left join key with non-nullable right join key", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(NullablePair)
      const input2 = yield* MemoryStream.make(Pair)
      const joined = leftOuterKeyNullability(input1.toDF() as DataFrame<any>, input2.toDF() as DataFrame<any>)
      yield* testStream(joined, "append", [
        AddData(input1, np(1, 1), np(null, 2), np(1, 3), np(1, 4), np(1, 5)),
        AddData(input2, pr(1, 3), pr(1, 4), pr(1, 5), pr(1, 6)),
        CheckNewAnswer(ko(1, 1, 3, 3, 10, 6, 9), ko(1, 1, 4, 4, 10, 8, 12), ko(1, 1, 5, 5, 10, 10, 15)),
        // right-null join
        AddData(input1, np(1, 21)),
        AddData(input2, pr(1, 22)), // watermark = 11, no-data-batch computes nulls
        CheckNewAnswer(ko(1, null, 1, null, 10, 2, null), ko(null, null, 2, null, 10, 4, null))
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("left-outer: joining nullable left join key with nullable right join key", () =>
    Effect.gen(function* () {
      const input1 = yield* MemoryStream.make(NullablePair)
      const input2 = yield* MemoryStream.make(NullablePair)
      const joined = leftOuterKeyNullability(input1.toDF() as DataFrame<any>, input2.toDF() as DataFrame<any>)
      yield* testStream(joined, "append", [
        AddData(input1, np(1, 1), np(null, 2), np(1, 3), np(null, 4), np(1, 5)),
        AddData(input2, np(1, 3), np(null, 4), np(1, 5), np(1, 6)),
        CheckNewAnswer(ko(1, 1, 3, 3, 10, 6, 9), ko(null, null, 4, 4, 10, 8, 12), ko(1, 1, 5, 5, 10, 10, 15)),
        // right-null join
        AddData(input1, np(1, 21)),
        AddData(input2, np(1, 22)), // watermark = 11, no-data-batch computes nulls
        CheckNewAnswer(ko(1, null, 1, null, 10, 2, null), ko(null, null, 2, null, 10, 4, null))
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  for (const provider of providers) {
    it.effect(
      `SPARK-38684: outer join works correctly even if processing input rows and evicting state rows for same grouping key happens in the same micro-batch (${provider.name})`,
      () =>
        Effect.gen(function* () {
          // Spark runs it on the RocksDB provider; here on each of tributary's providers.
          const Triple = Schema.Struct({ _1: Schema.Date, _2: Schema.String, _3: Schema.String })
          const input1 = yield* MemoryStream.make(Triple)
          const input2 = yield* MemoryStream.make(Triple)
          const df1 = (input1.toDF() as DataFrame<any>)
            .select(F.col("_1").as("eventTime"), F.col("_2").as("id"), F.col("_3").as("comment"))
            .withWatermark("eventTime", "0 seconds")
          const df2 = (input2.toDF() as DataFrame<any>)
            .select(F.col("_1").as("eventTime"), F.col("_2").as("id"), F.col("_3").as("comment"))
            .withWatermark("eventTime", "0 seconds")
          const l = df1.as("left")
          const r = df2.as("right")
          const lt = F.col("left.eventTime").cast("long")
          const rt = F.col("right.eventTime").cast("long")
          // Spark's rows are positional (eventTime, id, comment, eventTime, id, comment).
          const joined = l
            .join(
              r,
              F.col("left.id")
                .eq(F.col("right.id"))
                .and(lt.between(rt.minus(30), rt.plus(30))),
              "left_outer"
            )
            .select(
              F.col("left.eventTime").as("leftTime"),
              F.col("left.id").as("leftId"),
              F.col("left.comment").as("leftComment"),
              F.col("right.eventTime").as("rightTime"),
              F.col("right.id").as("rightId"),
              F.col("right.comment").as("rightComment")
            ) as DataFrame<any>
          const ts = (s: string) => new Date(`${s}Z`)
          const t = (time: string, id: string, text: string) => ({ _1: ts(time), _2: id, _3: text })
          const out = (lTime: string, lc: string, rTime: string | null, rc: string | null) => ({
            leftTime: ts(lTime),
            leftId: "abc",
            leftComment: lc,
            rightTime: rTime === null ? null : ts(rTime),
            rightId: rTime === null ? null : "abc",
            rightComment: rc
          })
          yield* testStream(joined, "append", [
            StartStream({ additionalConfs: { "spark.sql.streaming.noDataMicroBatches.enabled": "false" } }),
            MultiAddData(
              [input1, [t("2020-01-02T00:00:00", "abc", "left in batch 1")]],
              [input2, [t("2020-01-02T00:01:00", "abc", "right in batch 1")]]
            ),
            CheckNewAnswer(),
            MultiAddData(
              [input1, [t("2020-01-02T01:00:00", "abc", "left in batch 2")]],
              [input2, [t("2020-01-02T01:01:00", "abc", "right in batch 2")]]
            ),
            // watermark advanced to "2020-01-02 00:00:00"
            CheckNewAnswer(),
            AddData(input1, t("2020-01-02T01:30:00", "abc", "left in batch 3")),
            // watermark advanced to "2020-01-02 01:00:00"
            CheckNewAnswer(out("2020-01-02T00:00:00", "left in batch 1", null, null)),
            // left side state should still contain "left in batch 2" and "left in batch 3"
            // we should see both rows in the left side since
            // - "left in batch 2" is going to be evicted in this batch
            // - "left in batch 3" is going to be matched with new row in right side
            AddData(input2, t("2020-01-02T01:30:10", "abc", "match with left in batch 3")),
            // watermark advanced to "2020-01-02 01:01:00"
            CheckNewAnswer(
              out("2020-01-02T01:00:00", "left in batch 2", null, null),
              out("2020-01-02T01:30:00", "left in batch 3", "2020-01-02T01:30:10", "match with left in batch 3")
            )
          ])
        }).pipe(Effect.provide(provider.layer()))
    )
  }
})

describe("StreamingFullOuterJoinSuite", () => {
  const fr = (key: number, end: number, leftValue: number | null, rightValue: number | null) => ({
    key,
    end,
    leftValue,
    rightValue
  })
  const f6 = (
    lkey: number | null,
    lend: number | null,
    leftValue: number | null,
    rkey: number | null,
    rend: number | null,
    rightValue: string | null
  ) => ({ lkey, lend, leftValue, rkey, rend, rightValue })

  for (const provider of providers) {
    it.effect(`windowed full outer join (${provider.name})`, () =>
      Effect.gen(function* () {
        const { assertNumStateRows } = stateMetrics()
        const { input1: leftInput, input2: rightInput, joined } = yield* setupWindowedJoin("full_outer")
        yield* testStream(joined, "append", [
          MultiAddData([leftInput, [1, 2, 3, 4, 5]], [rightInput, [3, 4, 5, 6, 7]]),
          CheckNewAnswer(fr(3, 10, 6, 9), fr(4, 10, 8, 12), fr(5, 10, 10, 15)),
          // states: left 1, 2, 3, 4, 5; right 3, 4, 5, 6, 7
          assertNumStateRows({ total: 10, updated: 10 }),
          MultiAddData([leftInput, [21]], [rightInput, [22]]),
          // Watermark = 11, should remove rows having window=[0,10].
          CheckNewAnswer(fr(1, 10, 2, null), fr(2, 10, 4, null), fr(6, 10, null, 18), fr(7, 10, null, 21)),
          // states: left 21; right 22
          assertNumStateRows({ total: 2, updated: 2 }),
          AddData(leftInput, 22),
          CheckNewAnswer(fr(22, 30, 44, 66)),
          // states: left 21, 22; right 22
          assertNumStateRows({ total: 3, updated: 1 }),
          StopStream,
          StartStream(),
          AddData(leftInput, 1),
          // Row not add as 1 < state key watermark = 12.
          CheckNewAnswer(),
          assertNumStateRows({ total: 3, updated: 0, droppedByWatermark: 1 }),
          AddData(rightInput, 5),
          // Row not add as 5 < state key watermark = 12.
          CheckNewAnswer(),
          assertNumStateRows({ total: 3, updated: 0, droppedByWatermark: 1 })
        ])
      }).pipe(Effect.provide(provider.layer()))
    )
  }

  it.effect("full outer early state exclusion on left", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { leftInput, rightInput, joined } = yield* setupWindowedJoinWithCondition("full_outer", "left")
      yield* testStream(joined, "append", [
        MultiAddData([leftInput, [1, 2, 3]], [rightInput, [3, 4, 5]]),
        // The left rows with leftValue <= 4 should generate their outer join rows now and
        // not get added to the state.
        CheckNewAnswer(f6(1, 10, 2, null, null, null), f6(2, 10, 4, null, null, null), f6(3, 10, 6, 3, 10, "9")),
        // states: left 3; right 3, 4, 5
        assertNumStateRows({ total: 4, updated: 4 }),
        // Generate outer join result for all non-matched rows when the watermark advances.
        MultiAddData([leftInput, [20]], [rightInput, [21]]),
        CheckNewAnswer(f6(null, null, null, 4, 10, "12"), f6(null, null, null, 5, 10, "15")),
        // states: left 20; right 21
        assertNumStateRows({ total: 2, updated: 2 }),
        AddData(rightInput, 20),
        CheckNewAnswer(f6(20, 30, 40, 20, 30, "60")),
        assertNumStateRows({ total: 3, updated: 1 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("full outer early state exclusion on right", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { leftInput, rightInput, joined } = yield* setupWindowedJoinWithCondition("full_outer", "right")
      yield* testStream(joined, "append", [
        MultiAddData([leftInput, [3, 4, 5]], [rightInput, [1, 2, 3]]),
        // The right rows with rightValue <= 7 generate their outer join rows now and are never
        // added to the state; the right row with rightValue = 9 > 7 joins and is stored.
        CheckNewAnswer(f6(null, null, null, 1, 10, "3"), f6(null, null, null, 2, 10, "6"), f6(3, 10, 6, 3, 10, "9")),
        // states: left 3, 4, 5; right 3
        assertNumStateRows({ total: 4, updated: 4 }),
        MultiAddData([leftInput, [20]], [rightInput, [21]]),
        CheckNewAnswer(f6(4, 10, 8, null, null, null), f6(5, 10, 10, null, null, null)),
        // states: left 20; right 21
        assertNumStateRows({ total: 2, updated: 2 }),
        AddData(rightInput, 20),
        CheckNewAnswer(f6(20, 30, 40, 20, 30, "60")),
        assertNumStateRows({ total: 3, updated: 1 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("full outer join with watermark range condition", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { leftInput, rightInput, joined } = yield* setupJoinWithRangeCondition("full_outer")
      const rr = (
        leftKey: number | null,
        rightKey: number | null,
        leftTime: number | null,
        rightTime: number | null
      ) => ({
        leftKey,
        rightKey,
        leftTime,
        rightTime
      })
      yield* testStream(joined, "append", [
        AddData(leftInput, pr(1, 5), pr(3, 5)),
        CheckNewAnswer(),
        assertNumStateRows({ total: 2, updated: 2 }),
        AddData(rightInput, pr(1, 10), pr(2, 5)),
        // Match left row in the state.
        CheckNewAnswer(rr(1, 1, 5, 10)),
        assertNumStateRows({ total: 4, updated: 2 }),
        AddData(rightInput, pr(1, 9)),
        // Match left row in the state.
        CheckNewAnswer(rr(1, 1, 5, 9)),
        assertNumStateRows({ total: 5, updated: 1 }),
        // Increase event time watermark to 20s by adding data with time = 30s on both inputs.
        AddData(leftInput, pr(1, 7), pr(1, 30)),
        CheckNewAnswer(rr(1, 1, 7, 9), rr(1, 1, 7, 10)),
        assertNumStateRows({ total: 7, updated: 2 }),
        // Watermark = 30 - 10 = 20, no matched row: outer rows for the non-matched ones.
        AddData(rightInput, pr(0, 30)),
        CheckNewAnswer(rr(3, null, 5, null), rr(null, 2, null, 5)),
        // states: left (1, 30); right (0, 30)
        assertNumStateRows({ total: 2, updated: 1 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("self full outer join", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { inputStream, joined } = yield* setupSelfJoin("full_outer")
      const sr = (leftId: number, leftTime: number, rightId: number | null, rightTime: number | null) => ({
        leftId,
        leftTime,
        rightId,
        rightTime
      })
      yield* testStream(joined, "append", [
        AddData(inputStream, pr(1, 1), pr(2, 2), pr(3, 3), pr(4, 4), pr(5, 5)),
        CheckNewAnswer(sr(2, 2, 2, 2), sr(4, 4, 4, 4)),
        assertNumStateRows({ total: 7, updated: 7 }),
        AddData(inputStream, pr(6, 6), pr(7, 7), pr(8, 8), pr(9, 9), pr(10, 10)),
        CheckNewAnswer(sr(6, 6, 6, 6), sr(8, 8, 8, 8), sr(10, 10, 10, 10)),
        assertNumStateRows({ total: 13, updated: 8 }),
        AddData(inputStream, pr(11, 11), pr(12, 12), pr(13, 13), pr(14, 14), pr(15, 15)),
        CheckNewAnswer(sr(12, 12, 12, 12), sr(14, 14, 14, 14), sr(1, 1, null, null), sr(3, 3, null, null)),
        assertNumStateRows({ total: 15, updated: 7 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )
})

describe("StreamingLeftSemiJoinSuite", () => {
  const sr = (key: number, end: number, leftValue: number) => ({ key, end, leftValue })

  for (const provider of providers) {
    it.effect(`windowed left semi join (${provider.name})`, () =>
      Effect.gen(function* () {
        const { assertNumStateRows } = stateMetrics()
        const { input1: leftInput, input2: rightInput, joined } = yield* setupWindowedJoin("left_semi")
        yield* testStream(joined, "append", [
          MultiAddData([leftInput, [1, 2, 3, 4, 5]], [rightInput, [3, 4, 5, 6, 7]]),
          CheckNewAnswer(sr(3, 10, 6), sr(4, 10, 8), sr(5, 10, 10)),
          // states: left 1, 2, 3, 4, 5; right 3, 4, 5, 6, 7
          assertNumStateRows({ total: 10, updated: 10 }),
          MultiAddData([leftInput, [21]], [rightInput, [22]]),
          // Watermark = 11, should remove rows having window=[0,10].
          CheckNewAnswer(),
          // states: left 21; right 22
          assertNumStateRows({ total: 2, updated: 2 }),
          AddData(leftInput, 22),
          CheckNewAnswer(sr(22, 30, 44)),
          // Unlike inner/outer joins, a left row that matches is not stored.
          assertNumStateRows({ total: 2, updated: 0 }),
          StopStream,
          StartStream(),
          AddData(leftInput, 1),
          // Row not add as 1 < state key watermark = 12.
          CheckNewAnswer(),
          assertNumStateRows({ total: 2, updated: 0, droppedByWatermark: 1 }),
          AddData(rightInput, 5),
          // Row not add as 5 < state key watermark = 12.
          CheckNewAnswer(),
          assertNumStateRows({ total: 2, updated: 0, droppedByWatermark: 1 })
        ])
      }).pipe(Effect.provide(provider.layer()))
    )
  }

  it.effect("left semi early state exclusion on left", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { leftInput, rightInput, joined } = yield* setupWindowedJoinWithCondition("left_semi", "left")
      yield* testStream(joined, "append", [
        MultiAddData([leftInput, [1, 2, 3]], [rightInput, [3, 4, 5]]),
        // The left rows with leftValue <= 4 should not generate their semi join rows and
        // not get added to the state.
        CheckNewAnswer(sr(3, 10, 6)),
        // states: left 3; right 3, 4, 5
        assertNumStateRows({ total: 4, updated: 4 }),
        // We shouldn't get more semi join rows when the watermark advances.
        MultiAddData([leftInput, [20]], [rightInput, [21]]),
        CheckNewAnswer(),
        // states: left 20; right 21
        assertNumStateRows({ total: 2, updated: 2 }),
        AddData(rightInput, 20),
        CheckNewAnswer(sr(20, 30, 40)),
        assertNumStateRows({ total: 3, updated: 1 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("left semi early state exclusion on right", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { leftInput, rightInput, joined } = yield* setupWindowedJoinWithCondition("left_semi", "right")
      yield* testStream(joined, "append", [
        MultiAddData([leftInput, [3, 4, 5]], [rightInput, [1, 2, 3]]),
        // The right rows with rightValue <= 7 should never be added to the state.
        CheckNewAnswer(sr(3, 10, 6)),
        // states: left 3, 4, 5; right 3
        assertNumStateRows({ total: 4, updated: 4 }),
        MultiAddData([leftInput, [20]], [rightInput, [21]]),
        CheckNewAnswer(),
        // states: left 20; right 21
        assertNumStateRows({ total: 2, updated: 2 }),
        AddData(rightInput, 20),
        CheckNewAnswer(sr(20, 30, 40)),
        assertNumStateRows({ total: 3, updated: 1 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("left semi join with watermark range condition", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { leftInput, rightInput, joined } = yield* setupJoinWithRangeCondition("left_semi")
      const l = (leftKey: number, leftTime: number) => ({ leftKey, leftTime })
      yield* testStream(joined, "append", [
        AddData(leftInput, pr(1, 5), pr(3, 5)),
        CheckNewAnswer(),
        assertNumStateRows({ total: 2, updated: 2 }),
        AddData(rightInput, pr(1, 10), pr(2, 5)),
        // Match left row in the state.
        CheckNewAnswer(l(1, 5)),
        assertNumStateRows({ total: 4, updated: 2 }),
        AddData(rightInput, pr(1, 9)),
        // No match as left row is already matched.
        CheckNewAnswer(),
        assertNumStateRows({ total: 5, updated: 1 }),
        // Increase event time watermark to 20s by adding data with time = 30s on both inputs.
        AddData(leftInput, pr(1, 7), pr(1, 30)),
        CheckNewAnswer(l(1, 7)),
        // states: left (1, 5), (3, 5), (1, 30); right (1, 10), (2, 5), (1, 9)
        assertNumStateRows({ total: 6, updated: 1 }),
        // Watermark = 30 - 10 = 20, no matched row.
        AddData(rightInput, pr(0, 30)),
        CheckNewAnswer(),
        // states: left (1, 30); right (0, 30)
        assertNumStateRows({ total: 2, updated: 1 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )
})

describe("join state through the state reader", () => {
  it.effect("each side's stores read back with Spark's names and schemas", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input1 = yield* MemoryStream.make(Schema.Int)
      const input2 = yield* MemoryStream.make(Schema.Int)
      const df1 = input1.toDF().select(F.col("value").as("key"), F.col("value").multiply(2).as("leftValue"))
      const df2 = input2.toDF().select(F.col("value").as("key"), F.col("value").multiply(3).as("rightValue"))
      const dir = yield* tempDir()
      const query = yield* df1.join(df2, "key").writeStream.format("noop").option("checkpointLocation", dir).start()
      yield* input1.addData([1, 1, 2])
      yield* query.processAllAvailable()
      yield* input2.addData([1])
      yield* query.processAllAvailable()
      yield* query.stop()
      const read = (storeName: string) =>
        Effect.flatMap(spark.read.format("statestore").option("storeName", storeName).load(dir), (df) => df.collect())
      const counts = yield* read("left-keyToNumValues")
      assert.deepStrictEqual(counts.map((r: any) => [r.key.field0, r.value.value]).sort(), [
        [1, 2],
        [2, 1]
      ])
      const values = yield* read("left-keyWithIndexToValue")
      assert.deepStrictEqual(
        values.map((r: any) => [r.key.field0, r.key.index, r.value.leftValue, r.value.matched]).sort(),
        [
          [1, 0, 2, true],
          [1, 1, 2, true],
          [2, 0, 4, false]
        ]
      )
      const right = yield* read("right-keyWithIndexToValue")
      assert.deepStrictEqual(
        right.map((r: any) => [r.key.field0, r.key.index, r.value.rightValue, r.value.matched]),
        [[1, 0, 3, true]]
      )
      // joinSide: one side's rows, as Spark's StreamStreamJoinStatePartitionReader gives them.
      const side = (joinSide: string) =>
        Effect.flatMap(spark.read.format("statestore").option("joinSide", joinSide).load(dir), (df) =>
          Effect.map(df.collect(), (rows) => ({ columns: df.columns, rows }))
        )
      const leftSide = yield* side("left")
      assert.deepStrictEqual(leftSide.columns, ["key", "value", "partition_id"])
      assert.deepStrictEqual(
        leftSide.rows.map((r: any) => [r.key, r.value]).sort((a: any, b: any) => a[0].field0 - b[0].field0),
        [
          [{ field0: 1 }, { key: 1, leftValue: 2 }],
          [{ field0: 1 }, { key: 1, leftValue: 2 }],
          [{ field0: 2 }, { key: 2, leftValue: 4 }]
        ]
      )
      assert.deepStrictEqual(
        (yield* side("right")).rows.map((r: any) => r.value),
        [{ key: 1, rightValue: 3 }]
      )
      const conflict = yield* Effect.flip(
        spark.read.format("statestore").option("joinSide", "left").option("storeName", "left-keyToNumValues").load(dir)
      )
      assert.strictEqual(
        conflict.message,
        "[STDS_CONFLICT_OPTIONS] The options ['joinSide', 'storeName'] cannot be specified together. Please specify the one."
      )
      const bad = yield* Effect.flip(spark.read.format("statestore").option("joinSide", "middle").load(dir))
      assert.strictEqual(
        bad.message,
        "[STDS_INVALID_OPTION_VALUE.WITH_MESSAGE] Invalid value for source option 'joinSide': Valid values are left,right,none"
      )
      yield* removeDir(dir)
    }).pipe(Effect.provide(duck.layer()))
  )
})

describe("null join keys", () => {
  const NullableKey = Schema.Struct({ k: Schema.NullOr(Schema.Int), t: Schema.Int })
  const nk = (k: number | null, t: number) => ({ k, t })
  const sides = Effect.gen(function* () {
    const leftIn = yield* MemoryStream.make(NullableKey)
    const rightIn = yield* MemoryStream.make(NullableKey)
    const left = (leftIn.toDF() as DataFrame<any>)
      .select(F.col("k").as("lk"), F.timestamp_seconds("t").as("lt"))
      .withWatermark("lt", "10 seconds")
    const right = (rightIn.toDF() as DataFrame<any>)
      .select(F.col("k").as("rk"), F.timestamp_seconds("t").as("rt"))
      .withWatermark("rt", "10 seconds")
    const lt = F.col("lt").cast("long")
    const rt = F.col("rt").cast("long")
    const range = lt.between(rt.minus(5), rt.plus(5))
    const out = (df: DataFrame<any>) =>
      df.select("lk", F.col("lt").cast("int").as("lt"), "rk", F.col("rt").cast("int").as("rt"))
    return { leftIn, rightIn, left, right, range, out }
  })
  const row = (lk: number | null, lt: number | null, rk: number | null, rt: number | null) => ({ lk, lt, rk, rt })

  it.effect("a null key never matches with =, and a left outer join emits its row with nulls", () =>
    Effect.gen(function* () {
      const { leftIn, rightIn, left, right, range, out } = yield* sides
      const joined = out(left.join(right, F.col("lk").eq(F.col("rk")).and(range), "left_outer"))
      yield* testStream(joined, "append", [
        MultiAddData([leftIn, [nk(null, 5), nk(1, 5)]], [rightIn, [nk(null, 5), nk(1, 6)]]),
        CheckNewAnswer(row(1, 5, 1, 6)),
        // watermark = 30 - 10 = 20: the left rows of time 5 can no longer match
        MultiAddData([leftIn, [nk(2, 30)]], [rightIn, [nk(3, 30)]]),
        CheckNewAnswer(row(null, 5, null, null))
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("with <=> null keys match each other", () =>
    Effect.gen(function* () {
      const { leftIn, rightIn, left, right, range, out } = yield* sides
      const joined = out(left.join(right, F.col("lk").eqNullSafe(F.col("rk")).and(range)))
      yield* testStream(joined, "append", [
        MultiAddData([leftIn, [nk(null, 5), nk(1, 5)]], [rightIn, [nk(null, 7), nk(1, 6), nk(2, 6)]]),
        CheckNewAnswer(row(null, 5, null, 7), row(1, 5, 1, 6)),
        AddData(leftIn, nk(null, 8)),
        CheckNewAnswer(row(null, 8, null, 7))
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  // Spark's optimizer infers `isnotnull(lk)` and `isnotnull(rk)` from `lk = rk` for an inner join
  // (InferFiltersFromConstraints), so a row with a null key never reaches the join: a late one is
  // not counted in numRowsDroppedByWatermark. A left outer join keeps the left null-key rows: a
  // late one is counted there.
  for (const [how, droppedLeft] of [
    ["inner", 1],
    ["left_outer", 2]
  ] as const) {
    it.effect(`a late row with a null key is counted as dropped only where the join keeps null keys (${how})`, () =>
      Effect.gen(function* () {
        const { assertNumStateRows } = stateMetrics()
        const { leftIn, rightIn, left, right, range, out } = yield* sides
        const joined = out(left.join(right, F.col("lk").eq(F.col("rk")).and(range), how))
        yield* testStream(joined, "append", [
          MultiAddData([leftIn, [nk(1, 30)]], [rightIn, [nk(1, 30)]]),
          CheckNewAnswer(row(1, 30, 1, 30)),
          assertNumStateRows({ total: 2, updated: 2 }),
          // watermark = 30 - 10 = 20: both rows of time 5 are late
          AddData(leftIn, nk(null, 5), nk(2, 5)),
          CheckNewAnswer(),
          assertNumStateRows({ total: 2, updated: 0, droppedByWatermark: droppedLeft }),
          AddData(rightIn, nk(null, 5), nk(2, 5)),
          CheckNewAnswer(),
          assertNumStateRows({ total: 2, updated: 0, droppedByWatermark: 1 })
        ])
      }).pipe(Effect.provide(duck.layer()))
    )
  }
})

describe("StreamingLeftSemiJoinSuite (self join)", () => {
  // Deviation (the lead's files): Spark's optimizer infers `leftId % 2 = 0` for the left input
  // from the right input's filter through `leftId = rightId` (InferFiltersFromConstraints, then
  // PushPredicateThroughJoin) and stores only the even left rows: totals 4, 8, 9. tributary's
  // optimizer (core/optimizer/Optimizer.ts) has no constraint inference, so the odd left rows are stored
  // too (totals 7, 13, 15; the answers are the same).
  it.effect.fails("self left semi join", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { inputStream, joined } = yield* setupSelfJoin("left_semi")
      const l = (leftId: number, leftTime: number) => ({ leftId, leftTime })
      yield* testStream(joined, "append", [
        AddData(inputStream, pr(1, 1), pr(2, 2), pr(3, 3), pr(4, 4), pr(5, 5)),
        CheckNewAnswer(l(2, 2), l(4, 4)),
        // batch 1 - global watermark = 0
        // states: left (2, 2), (4, 4) (the odd left rows are filtered per PushPredicateThroughJoin);
        // right (2, 2), (4, 4)
        assertNumStateRows({ total: 4, updated: 4 }),
        AddData(inputStream, pr(6, 6), pr(7, 7), pr(8, 8), pr(9, 9), pr(10, 10)),
        CheckNewAnswer(l(6, 6), l(8, 8), l(10, 10)),
        // batch 2 - global watermark = 5
        // states: left (2, 2), (4, 4), (6, 6), (8, 8), (10, 10); right (6, 6), (8, 8), (10, 10)
        // evicted: left nothing (it waits 5 seconds more than the watermark due to the
        // condition); right (2, 2), (4, 4)
        assertNumStateRows({ total: 8, updated: 6 }),
        AddData(inputStream, pr(11, 11), pr(12, 12), pr(13, 13), pr(14, 14), pr(15, 15)),
        CheckNewAnswer(l(12, 12), l(14, 14)),
        // batch 3 - global watermark = 9
        // states: left (4, 4), (6, 6), (8, 8), (10, 10), (12, 12), (14, 14); right (10, 10),
        // (12, 12), (14, 14); evicted: left (2, 2); right (6, 6), (8, 8)
        assertNumStateRows({ total: 9, updated: 4 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("self left semi join: the answers (and tributary's state without inferred filters)", () =>
    Effect.gen(function* () {
      const { assertNumStateRows } = stateMetrics()
      const { inputStream, joined } = yield* setupSelfJoin("left_semi")
      const l = (leftId: number, leftTime: number) => ({ leftId, leftTime })
      // The answers of Spark's "self left semi join", with the state tributary keeps while its
      // optimizer infers no filters (see above): a left row never meets its right twin before it
      // is stored, as the twin comes later in the batch. When the optimizer infers the filter,
      // this case goes and the `it.effect.fails` above becomes a plain `it.effect`.
      yield* testStream(joined, "append", [
        AddData(inputStream, pr(1, 1), pr(2, 2), pr(3, 3), pr(4, 4), pr(5, 5)),
        CheckNewAnswer(l(2, 2), l(4, 4)),
        assertNumStateRows({ total: 7, updated: 7 }),
        AddData(inputStream, pr(6, 6), pr(7, 7), pr(8, 8), pr(9, 9), pr(10, 10)),
        CheckNewAnswer(l(6, 6), l(8, 8), l(10, 10)),
        assertNumStateRows({ total: 13, updated: 8 }),
        AddData(inputStream, pr(11, 11), pr(12, 12), pr(13, 13), pr(14, 14), pr(15, 15)),
        CheckNewAnswer(l(12, 12), l(14, 14)),
        assertNumStateRows({ total: 15, updated: 7 })
      ])
    }).pipe(Effect.provide(duck.layer()))
  )
})

describe("stream-stream join checker rules (Spark's UnsupportedOperationChecker)", () => {
  const streams = Effect.gen(function* () {
    const a = yield* MemoryStream.make(Pair)
    const b = yield* MemoryStream.make(Pair)
    const left = (a.toDF() as DataFrame<any>).select(F.col("_1").as("lk"), F.timestamp_seconds("_2").as("lt"))
    const right = (b.toDF() as DataFrame<any>).select(F.col("_1").as("rk"), F.timestamp_seconds("_2").as("rt"))
    return { left, right, a, b }
  })
  const startError = (df: DataFrame<any>, mode: "append" | "update" | "complete" = "append") =>
    Effect.flip(df.writeStream.format("noop").outputMode(mode).start())
  const keys = F.col("lk").eq(F.col("rk"))

  it.effect("stream-stream joins run only in Append mode", () =>
    Effect.gen(function* () {
      const { left, right } = yield* streams
      const e = yield* startError(left.join(right, keys), "update")
      assert.strictEqual(
        e.message,
        "Join between two streaming DataFrames/Datasets is not supported in Update output mode, only in Append output mode"
      )
    }).pipe(Effect.provide(duck.layer()))
  )

  for (const [how, name] of [
    ["left_outer", "LeftOuter"],
    ["right_outer", "RightOuter"],
    ["full_outer", "FullOuter"],
    ["left_semi", "LeftSemi"]
  ] as const) {
    it.effect(`${name} without a watermark is refused`, () =>
      Effect.gen(function* () {
        const { left, right } = yield* streams
        const e = yield* startError(left.join(right, keys, how))
        assert.strictEqual(e._tag, "AnalysisError")
        assert.strictEqual(
          e.message,
          `Stream-stream ${name} join between two streaming DataFrame/Datasets is not supported without a watermark in the join keys, or a watermark on the nullable side and an appropriate range condition`
        )
        // a watermark on both sides without a range condition is not enough either
        const wl = left.withWatermark("lt", "10 seconds")
        const wr = right.withWatermark("rt", "10 seconds")
        const e2 = yield* startError(wl.join(wr, keys, how))
        assert.include(e2.message, `Stream-stream ${name} join between two streaming DataFrame/Datasets`)
        // a range condition against a watermarked other side makes it valid
        const range = keys
          .and(F.col("lt").cast("long").geq(F.col("rt").cast("long").minus(5)))
          .and(F.col("lt").cast("long").leq(F.col("rt").cast("long").plus(5)))
        const q = yield* wl.join(wr, range, how).writeStream.format("noop").start()
        yield* q.stop()
      }).pipe(Effect.provide(duck.layer()))
    )
  }

  it.effect("a watermark in the join keys makes an outer join valid", () =>
    Effect.gen(function* () {
      const { left, right } = yield* streams
      const wl = left.withWatermark("lt", "10 seconds")
      const q = yield* wl
        .join(right, keys.and(F.col("lt").eq(F.col("rt"))), "left_outer")
        .writeStream.format("noop")
        .start()
      yield* q.stop()
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("left anti between two streams is refused", () =>
    Effect.gen(function* () {
      const { left, right } = yield* streams
      const e = yield* startError(left.join(right, keys, "left_anti"))
      assert.strictEqual(e.message, "LeftAnti joins with a streaming DataFrame/Dataset on the right are not supported")
    }).pipe(Effect.provide(duck.layer()))
  )

  it.effect("explain prints the StreamingSymmetricHashJoin", () =>
    Effect.gen(function* () {
      const { left, right, a } = yield* streams
      const q = yield* left
        .join(right, keys.and(F.col("lk").gt(1)))
        .writeStream.format("noop")
        .start()
      // Spark's explainInternal shows a plan once a batch ran
      yield* a.addData([{ _1: 2, _2: 1 }])
      yield* q.processAllAvailable()
      const text = yield* q.explain()
      yield* q.stop()
      assert.match(
        text,
        /StreamingSymmetricHashJoin \[lk#\d+L?\], \[rk#\d+L?\], Inner, condition = \[ leftOnly = null, rightOnly = null, both = null, full = null \], state info \[ opId = 0 \], 2\n:- Project/
      )
    }).pipe(Effect.provide(duck.layer()))
  )
})
