/**
 * Spark's `TransformWithStateSuite` (sql/core/src/test/scala/org/apache/spark/sql/streaming/)
 * as `testStream` scripts: value state across restarts, processing-time timers (registered,
 * replaced, several per key, surviving a restart), event-time timers on the watermark with late
 * rows dropped, the handle's misuse errors, and the output-mode and time-mode rules. Spark's
 * `(String, String)` outputs are rows `{ key, value }`; Spark's manual clock is the test clock.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import {
  F,
  type ListState,
  type MapState,
  MemoryStream,
  Session,
  StatefulProcessor,
  type StatefulProcessorHandle,
  TimeMode,
  type TimerValues,
  Trigger,
  TTLConfig,
  type ValueState
} from "../../../mod.ts"
import {
  AddData,
  AdvanceClock,
  AssertOnQuery,
  CheckNewAnswer,
  ExpectFailure,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"
import { commitIds, providers, removeDir, tempDir } from "./StreamingTestKit.ts"

const KV = Schema.Struct({ key: Schema.String, value: Schema.String })
type KV = typeof KV.Type
const kv = (key: string, value: string): KV => ({ key, value })

/** Spark's `RunningCountStatefulProcessor`: the third call for a key clears its count. */
class RunningCount extends StatefulProcessor<string, { value: string }, KV> {
  readonly outputSchema = KV
  protected count!: ValueState<number>
  init(handle: StatefulProcessorHandle): void {
    this.count = handle.getValueState("countState", Schema.Number)
  }
  handleInputRows(key: string, _rows?: ReadonlyArray<{ value: string }>, _timerValues?: TimerValues): Iterable<KV> {
    const count = (this.count.get() ?? 0) + 1
    if (count === 3) {
      this.count.clear()
      return []
    }
    this.count.update(count)
    return [kv(key, String(count))]
  }
}

/** Spark's `RunningCountStatefulProcessorWithProcTimeTimer`: keys a and c get a timer 5 s out. */
class RunningCountWithProcTimeTimer extends RunningCount {
  override handleInputRows(
    key: string,
    _rows: ReadonlyArray<{ value: string }>,
    timerValues: TimerValues
  ): Iterable<KV> {
    const current = this.count.get() ?? 0
    if (current === 0 && (key === "a" || key === "c")) {
      this.getHandle().registerTimer(timerValues.getCurrentProcessingTimeInMs() + 5000)
    }
    return super.handleInputRows(key)
  }
  override handleExpiredTimer(key: string): Iterable<KV> {
    this.count.clear()
    return [kv(key, "-1")]
  }
}

/** Spark's `RunningCountStatefulProcessorWithProcTimeTimerUpdates`: a's timer is replaced. */
class RunningCountWithTimerUpdates extends StatefulProcessor<string, { value: string }, KV> {
  readonly outputSchema = KV
  private count!: ValueState<number>
  private timer!: ValueState<number>
  init(handle: StatefulProcessorHandle): void {
    this.count = handle.getValueState("countState", Schema.Number)
    this.timer = handle.getValueState("timerState", Schema.Number)
  }
  handleInputRows(key: string, rows: ReadonlyArray<{ value: string }>, timerValues: TimerValues): Iterable<KV> {
    const current = this.count.get() ?? 0
    const count = current + rows.length
    this.count.update(count)
    if (key === "a") {
      const handle = this.getHandle()
      if (current === 0) {
        const next = timerValues.getCurrentProcessingTimeInMs() + 5000
        handle.registerTimer(next)
        this.timer.update(next)
      } else if (current === 1) {
        handle.deleteTimer(this.timer.get()!)
        const next = timerValues.getCurrentProcessingTimeInMs() + 7500
        handle.registerTimer(next)
        this.timer.update(next)
      }
    }
    return [kv(key, String(count))]
  }
  override handleExpiredTimer(key: string): Iterable<KV> {
    this.timer.clear()
    return [kv(key, "-1")]
  }
}

/** Spark's `RunningCountStatefulProcessorWithMultipleTimers`. */
class RunningCountWithMultipleTimers extends StatefulProcessor<string, { value: string }, KV> {
  readonly outputSchema = KV
  private count!: ValueState<number>
  init(handle: StatefulProcessorHandle): void {
    this.count = handle.getValueState("countState", Schema.Number)
  }
  handleInputRows(_key: string, rows: ReadonlyArray<{ value: string }>, timerValues: TimerValues): Iterable<KV> {
    const count = (this.count.get() ?? 0) + rows.length
    this.count.update(count)
    const handle = this.getHandle()
    if (handle.listTimers().length === 0) {
      const now = timerValues.getCurrentProcessingTimeInMs()
      handle.registerTimer(now + 5000)
      handle.registerTimer(now + 10000)
      handle.registerTimer(now + 15000)
      if (handle.listTimers().length !== 3) throw new Error("expected 3 timers")
    }
    return []
  }
  override handleExpiredTimer(key: string): Iterable<KV> {
    const current = this.count.get() ?? 0
    // The timer being handled is still listed (Spark's listTimers note).
    if (this.getHandle().listTimers().length === 1) this.count.clear()
    return [kv(key, String(current))]
  }
}

const KT = Schema.Struct({ key: Schema.String, eventTime: Schema.Date })
const KI = Schema.Struct({ key: Schema.String, value: Schema.Number })
type KI = typeof KI.Type

/** Spark's `MaxEventTimeStatefulProcessor`: event-time timer 5 s after the max event time. */
class MaxEventTime extends StatefulProcessor<string, typeof KT.Type, KI> {
  readonly outputSchema = KI
  private max!: ValueState<number>
  private timer!: ValueState<number>
  init(handle: StatefulProcessorHandle): void {
    this.max = handle.getValueState("maxEventTimeState", Schema.Number)
    this.timer = handle.getValueState("timerState", Schema.Number)
  }
  handleInputRows(key: string, rows: ReadonlyArray<typeof KT.Type>): Iterable<KI> {
    const maxSec = Math.max(...rows.map((r) => r.eventTime.getTime() / 1000), this.max.get() ?? 0)
    const timeoutMs = (maxSec + 5) * 1000
    this.max.update(maxSec)
    const registered = this.timer.get() ?? 0
    if (registered < timeoutMs) {
      this.getHandle().deleteTimer(registered)
      this.getHandle().registerTimer(timeoutMs)
      this.timer.update(timeoutMs)
    }
    return [{ key, value: maxSec }]
  }
  override handleExpiredTimer(key: string): Iterable<KI> {
    this.max.clear()
    return [{ key, value: -1 }]
  }
}

const strings = () => MemoryStream.make(Schema.String)

describe("TransformWithStateSuite", () => {
  for (const provider of providers) {
    it.effect(`value state across restarts (${provider.name})`, () =>
      Effect.gen(function* () {
        const input = yield* strings()
        const result = input
          .toDF()
          .groupByKey((r) => r.value, Schema.String)
          .transformWithState(new RunningCount(), { timeMode: TimeMode.None, outputMode: "update" })
        yield* testStream(result, "update", [
          AddData(input, "a"),
          CheckNewAnswer(kv("a", "1")),
          AddData(input, "a", "b"),
          CheckNewAnswer(kv("a", "2"), kv("b", "1")),
          StopStream,
          StartStream(),
          AddData(input, "a", "b"), // removes the state of a, outputs nothing for it
          CheckNewAnswer(kv("b", "2")),
          StopStream,
          StartStream(),
          AddData(input, "a", "c"), // recreates a
          CheckNewAnswer(kv("a", "1"), kv("c", "1"))
        ])
      }).pipe(Effect.provide(provider.layer()))
    )
  }

  it.effect("a plain object is a processor too; the progress names the operator and its variables", () =>
    Effect.gen(function* () {
      const input = yield* strings()
      let count!: ValueState<number>
      const processor = {
        outputSchema: Schema.Struct({ key: Schema.String, total: Schema.Number }),
        init: (handle: StatefulProcessorHandle) => {
          count = handle.getValueState("total", Schema.Number)
        },
        handleInputRows: (key: string, rows: ReadonlyArray<{ value: string }>) => {
          const total = (count.get() ?? 0) + rows.length
          count.update(total)
          return [{ key, total }]
        }
      }
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(processor, { timeMode: TimeMode.None, outputMode: "update" })
      yield* testStream(result, "update", [
        AddData(input, "x", "x", "y"),
        CheckNewAnswer({ key: "x", total: 2 }, { key: "y", total: 1 }),
        AddData(input, "x"),
        CheckNewAnswer({ key: "x", total: 3 }),
        AssertOnQuery(
          (q) =>
            Effect.map(q.lastProgress(), (p) => {
              const op = p?.stateOperators[0]
              return (
                op?.operatorName === "transformWithStateExec" &&
                op.numRowsTotal === 2 &&
                op.customMetrics.numValueStateVars === 1 &&
                op.customMetrics.numRegisteredTimers === 0
              )
            }),
          "transformWithStateExec progress"
        ),
        AssertOnQuery(
          (q) =>
            Effect.map(q.explain(), (text) =>
              /TransformWithStateExec <function>, None, Update, \[key#\d+, total#\d+\], state info \[ opId = 0 \]/.test(
                text
              )
            ),
          "explain shows the operator"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("processing-time timers fire on the batch clock and survive a restart", () =>
    Effect.gen(function* () {
      const input = yield* strings()
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new RunningCountWithProcTimeTimer(), {
          timeMode: TimeMode.ProcessingTime,
          outputMode: "update"
        })
      const trigger = Trigger.ProcessingTime("1 second")
      yield* testStream(result, "update", [
        StartStream({ trigger }),
        AddData(input, "a"),
        AdvanceClock("1 second"),
        CheckNewAnswer(kv("a", "1")), // timer for a at 1 + 5 s
        AddData(input, "b"),
        AdvanceClock("1 second"),
        CheckNewAnswer(kv("b", "1")),
        AddData(input, "b"),
        AdvanceClock("10 seconds"),
        CheckNewAnswer(kv("a", "-1"), kv("b", "2")),
        StopStream,
        StartStream({ trigger }),
        AddData(input, "b"),
        AddData(input, "c"),
        AdvanceClock("1 second"),
        CheckNewAnswer(kv("c", "1")), // b reaches 3: its state goes, nothing is output
        AddData(input, "d"),
        AdvanceClock("10 seconds"),
        CheckNewAnswer(kv("c", "-1"), kv("d", "1")),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a deleted timer does not fire; its replacement does, once, after a restart", () =>
    Effect.gen(function* () {
      const input = yield* strings()
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new RunningCountWithTimerUpdates(), {
          timeMode: TimeMode.ProcessingTime,
          outputMode: "update"
        })
      const trigger = Trigger.ProcessingTime("1 second")
      yield* testStream(result, "update", [
        StartStream({ trigger }),
        AddData(input, "a"),
        AdvanceClock("1 second"),
        CheckNewAnswer(kv("a", "1")), // timer 1 + 5 s
        AddData(input, "a"),
        AdvanceClock("2 seconds"),
        CheckNewAnswer(kv("a", "2")), // timer replaced: 2 + 7.5 s
        StopStream,
        StartStream({ trigger }),
        AddData(input, "d"),
        AdvanceClock("10 seconds"),
        // Had the first timer stayed, a would time out twice here.
        CheckNewAnswer(kv("a", "-1"), kv("d", "1")),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("several timers per key fire in order; listTimers still lists the one firing", () =>
    Effect.gen(function* () {
      const input = yield* strings()
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new RunningCountWithMultipleTimers(), {
          timeMode: TimeMode.ProcessingTime,
          outputMode: "update"
        })
      const trigger = Trigger.ProcessingTime("1 second")
      yield* testStream(result, "update", [
        StartStream({ trigger }),
        AddData(input, "a"),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        AddData(input, "a"),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        AdvanceClock("20 seconds"),
        CheckNewAnswer(kv("a", "2"), kv("a", "2"), kv("a", "2")),
        AddData(input, "a"),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        AssertOnQuery(
          (q) =>
            Effect.map(q.recentProgress(), (ps) => {
              const expired = ps.reduce((n, p) => n + (p.stateOperators[0]?.customMetrics.numExpiredTimers ?? 0), 0)
              return expired === 3
            }),
          "three timers expired"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("event-time timers fire on the watermark; rows behind it are dropped", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ key: Schema.String, seconds: Schema.Int }))
      const result = input
        .toDF()
        .select(F.col("key"), F.timestamp_seconds("seconds").as("eventTime"))
        .withWatermark("eventTime", "10 seconds")
        .groupByKey((r) => r.key as string, Schema.String)
        .transformWithState(new MaxEventTime(), { timeMode: TimeMode.EventTime, outputMode: "update" })
      const row = (key: string, seconds: number) => ({ key, seconds })
      yield* testStream(result, "update", [
        AddData(input, row("a", 11), row("a", 13), row("a", 15)),
        // max event time 15 s: timer for a at 20 s; watermark 15 - 10 = 5 s
        CheckNewAnswer({ key: "a", value: 15 }),
        AddData(input, row("a", 4)), // behind the watermark: dropped
        CheckNewAnswer(),
        AddData(input, row("a", 10)),
        CheckNewAnswer({ key: "a", value: 15 }),
        AddData(input, row("b", 31)), // watermark 21 s: a's timer (20 s) fires
        CheckNewAnswer({ key: "a", value: -1 }, { key: "b", value: 31 })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("creating a state variable outside init fails the query (invalid handle state)", () =>
    Effect.gen(function* () {
      const input = yield* strings()
      class WithError extends RunningCount {
        override handleInputRows(): Iterable<KV> {
          this.getHandle().getValueState("tempState", Schema.Number)
          return []
        }
      }
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new WithError(), { timeMode: TimeMode.None, outputMode: "update" })
      yield* testStream(result, "update", [
        AddData(input, "a"),
        ExpectFailure("StateStoreError", "invalid handle state")
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect(
    "timers in TimeMode.None fail with STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_TIME_MODE",
    () =>
      Effect.gen(function* () {
        const input = yield* strings()
        class TimerInNone extends RunningCount {
          override handleInputRows(key: string): Iterable<KV> {
            this.getHandle().registerTimer(1000)
            return super.handleInputRows(key)
          }
        }
        const result = input
          .toDF()
          .groupByKey((r) => r.value, Schema.String)
          .transformWithState(new TimerInNone(), { timeMode: TimeMode.None, outputMode: "update" })
        yield* testStream(result, "update", [
          AddData(input, "a"),
          ExpectFailure("StateStoreError", "invalid timeMode=NoTime")
        ])
      }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("null values are refused (ILLEGAL_STATE_STORE_VALUE.NULL_VALUE)", () =>
    Effect.gen(function* () {
      const input = yield* strings()
      class WritesNull extends RunningCount {
        override handleInputRows(): Iterable<KV> {
          this.count.update(null as unknown as number)
          return []
        }
      }
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new WritesNull(), { timeMode: TimeMode.None, outputMode: "update" })
      yield* testStream(result, "update", [AddData(input, "a"), ExpectFailure("StateStoreError", "NULL_VALUE")])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("two variables of one name fail when the query starts (DUPLICATE_STATE_VARIABLE_DEFINED)", () =>
    Effect.gen(function* () {
      const input = yield* strings()
      class Duplicate extends RunningCount {
        override init(handle: StatefulProcessorHandle): void {
          super.init(handle)
          handle.getListState("countState", Schema.Number)
        }
      }
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new Duplicate(), { timeMode: TimeMode.None, outputMode: "update" })
      yield* testStream(result, "update", [
        AddData(input, "a"),
        ExpectFailure("StateStoreError", "STATEFUL_PROCESSOR_DUPLICATE_STATE_VARIABLE_DEFINED")
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("TTL outside TimeMode.ProcessingTime fails (STATEFUL_PROCESSOR_INCORRECT_TIME_MODE_TO_ASSIGN_TTL)", () =>
    Effect.gen(function* () {
      const input = yield* strings()
      class TtlInNone extends RunningCount {
        override init(handle: StatefulProcessorHandle): void {
          this.count = handle.getValueState("countState", Schema.Number, TTLConfig.of("1 minute"))
        }
      }
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new TtlInNone(), { timeMode: TimeMode.None, outputMode: "update" })
      yield* testStream(result, "update", [
        AddData(input, "a"),
        ExpectFailure("StateStoreError", "timeMode=NoTime, use TimeMode.ProcessingTime()")
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("complete mode and event time without a watermark are refused at start", () =>
    Effect.gen(function* () {
      const input = yield* strings()
      const grouped = input.toDF().groupByKey((r) => r.value, Schema.String)
      const complete = yield* grouped
        .transformWithState(new RunningCount(), { timeMode: TimeMode.None, outputMode: "update" })
        .writeStream.format("memory")
        .queryName("tws_complete")
        .outputMode("complete")
        .start()
        .pipe(Effect.flip)
      assert.include(complete.message, "Invalid streaming output mode: complete. This output mode is not supported for no streaming aggregations")
      const eventTime = yield* grouped
        .transformWithState(new RunningCount(), { timeMode: TimeMode.EventTime, outputMode: "update" })
        .writeStream.format("memory")
        .queryName("tws_event_time")
        .outputMode("update")
        .start()
        .pipe(Effect.flip)
      assert.include(eventTime.message, "Watermark must be specified")
      const badMode = grouped.transformWithState(new RunningCount(), {
        timeMode: TimeMode.None,
        outputMode: "complete" as "update"
      })
      const error = yield* badMode.collect().pipe(Effect.flip)
      assert.include(error.message, "supports the output modes")
    }).pipe(Effect.provide(Session.layer()))
  )
})

/** A running count kept in a struct state of schema `schema` (for the schema evolution test). */
const countWith = <S extends Schema.Top>(
  schema: S,
  step: (key: string, previous: S["Type"] | undefined) => readonly [S["Type"], string]
) =>
  new (class extends StatefulProcessor<string, { value: string }, KV> {
    readonly outputSchema = KV
    private state!: ValueState<S["Type"]>
    init(handle: StatefulProcessorHandle): void {
      this.state = handle.getValueState("countState", schema)
    }
    handleInputRows(key: string): Iterable<KV> {
      const [next, shown] = step(key, this.state.get())
      this.state.update(next)
      return [kv(key, shown)]
    }
  })()

describe("TransformWithStateSuite: state schema evolution across restarts", () => {
  it.effect(
    "an added optional field is accepted; a changed type fails before the first batch, naming the variable",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir()
        const input = yield* strings()
        const run = (processor: StatefulProcessor<string, { value: string }, KV>) =>
          input
            .toDF()
            .groupByKey((r) => r.value, Schema.String)
            .transformWithState(processor, { timeMode: TimeMode.None, outputMode: "update" })
        const V1 = Schema.Struct({ count: Schema.Number })
        const V2 = Schema.Struct({ count: Schema.Number, last: Schema.optional(Schema.String) })
        const V3 = Schema.Struct({ count: Schema.String })
        yield* testStream(
          run(countWith(V1, (_key, prev) => [{ count: (prev?.count ?? 0) + 1 }, String((prev?.count ?? 0) + 1)])),
          "update",
          [StartStream({ checkpointLocation: dir }), AddData(input, "a"), CheckNewAnswer(kv("a", "1")), StopStream]
        )
        yield* testStream(
          run(
            countWith(V2, (key, prev) => {
              const count = (prev?.count ?? 0) + 1
              return [{ count, last: key }, `${count}:${prev?.last ?? "none"}`]
            })
          ),
          "update",
          [
            StartStream({ checkpointLocation: dir }),
            AddData(input, "a"),
            CheckNewAnswer(kv("a", "2:none")), // the value stored by V1 reads with `last` absent
            AddData(input, "a"),
            CheckNewAnswer(kv("a", "3:a")),
            StopStream
          ]
        )
        const committed = yield* commitIds(dir)
        yield* testStream(run(countWith(V3, (_key, prev) => [{ count: `${prev?.count ?? ""}x` }, "never"])), "update", [
          StartStream({ checkpointLocation: dir }),
          AddData(input, "a"),
          ExpectFailure("StateStoreError", "store 'countState': field 'count' changed type from double to string")
        ])
        assert.deepStrictEqual(yield* commitIds(dir), committed)
        yield* removeDir(dir)
      }).pipe(Effect.provide(Session.layer()))
  )
})

/** A value, a list and a map state plus a timer per key, for the state reader. */
class AllKinds extends StatefulProcessor<string, { value: string }, KV> {
  readonly outputSchema = KV
  private last!: ValueState<{ readonly seen: number; readonly at: Date }>
  private list!: ListState<string>
  private map!: MapState<string, number>
  init(handle: StatefulProcessorHandle): void {
    this.last = handle.getValueState("last", Schema.Struct({ seen: Schema.Number, at: Schema.Date }))
    this.list = handle.getListState("history", Schema.String)
    this.map = handle.getMapState("perValue", Schema.String, Schema.Number)
  }
  handleInputRows(key: string, rows: ReadonlyArray<{ value: string }>, timerValues: TimerValues): Iterable<KV> {
    const now = timerValues.getCurrentProcessingTimeInMs()
    this.last.update({ seen: (this.last.get()?.seen ?? 0) + rows.length, at: new Date(now) })
    this.list.appendList(rows.map((r) => `${r.value}@${now}`))
    this.map.updateValue(key, (this.map.getValue(key) ?? 0) + rows.length)
    this.getHandle().registerTimer(now + 60_000)
    return []
  }
}

describe("TransformWithStateSuite: the state reader", () => {
  it.effect('format("statestore") reads each state variable and the timers', () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const input = yield* strings()
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new AllKinds(), { timeMode: TimeMode.ProcessingTime, outputMode: "update" })
      yield* testStream(result, "update", [
        StartStream({ checkpointLocation: dir }),
        AddData(input, "a", "a"),
        CheckNewAnswer(),
        AdvanceClock("1 second"),
        AddData(input, "a"),
        CheckNewAnswer(),
        StopStream
      ])
      const read = (storeName: string) =>
        Effect.flatMap(spark.read.format("statestore").option("storeName", storeName).load(dir), (df) => df.collect())
      assert.deepStrictEqual(yield* read("last"), [
        { key: { value: "a" }, value: { seen: 3, at: new Date(1000) }, partition_id: 0 }
      ])
      assert.deepStrictEqual(
        (yield* read("history")).map((r: any) => r.value.value),
        ["a@0", "a@0", "a@1000"]
      )
      assert.deepStrictEqual(yield* read("perValue"), [
        { key: { key: { value: "a" }, userKey: { value: "a" } }, value: { value: 3 }, partition_id: 0 }
      ])
      assert.deepStrictEqual(
        (yield* read("procTimers-keyToTimestamp")).map((r: any) => r.key.expiryTimestampMs),
        [60_000, 61_000]
      )
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )
})
