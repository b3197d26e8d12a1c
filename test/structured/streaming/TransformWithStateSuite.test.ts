/**
 * Spark's `TransformWithStateSuite` (sql/core/src/test/scala/org/apache/spark/sql/streaming/)
 * as `testStream` scripts: value state across restarts, processing-time timers (registered,
 * replaced, several per key, surviving a restart), event-time timers on the watermark with late
 * rows dropped, the handle's misuse errors, and the output-mode and time-mode rules. Spark's
 * `(String, String)` outputs are rows `{ key, value }`; Spark's manual clock is the test clock.
 */
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { StateStoreError } from "../../../core/Errors.ts"
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
import type { SessionShape } from "../../../structured/api/Session.ts"
import type { StreamingQuery } from "../../../structured/contracts/StreamingQuery.ts"
import {
  AddData,
  AdvanceClock,
  AssertOnQuery,
  CheckAnswer,
  CheckNewAnswer,
  Execute,
  ExpectFailure,
  StartStream,
  StopStream,
  type StreamAction,
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

// -------------------------------------------------------------------------------------------------
// Spark's TransformWithStateSuite / TransformWithStateValidationSuite cases, one `it` per Spark
// `test(...)`, titled with Spark's name.
// -------------------------------------------------------------------------------------------------

/** The last progress's first state operator. */
const lastOp = (q: StreamingQuery) => Effect.map(q.lastProgress(), (p) => p?.stateOperators[0])

/** Every progress of the run that has a state operator. */
const opProgress = (q: StreamingQuery) =>
  Effect.map(q.recentProgress(), (ps) => ps.filter((p) => p.stateOperators.length > 0))

const runningCount = (stream: MemoryStream<string>, processor = new RunningCount()) =>
  stream
    .toDF()
    .groupByKey((r) => r.value, Schema.String)
    .transformWithState(processor, { timeMode: TimeMode.None, outputMode: "update" })

/** Spark's `RunningCountMostRecentStatefulProcessor`. */
class RunningCountMostRecent extends StatefulProcessor<string, KV, { key: string; count: string; last: string }> {
  readonly outputSchema = Schema.Struct({ key: Schema.String, count: Schema.String, last: Schema.String })
  private count!: ValueState<number>
  private mostRecent!: ValueState<string>
  init(handle: StatefulProcessorHandle): void {
    this.count = handle.getValueState("countState", Schema.Number)
    this.mostRecent = handle.getValueState("mostRecent", Schema.String)
  }
  handleInputRows(key: string, rows: ReadonlyArray<KV>) {
    const count = (this.count.get() ?? 0) + 1
    const mostRecent = this.mostRecent.get() ?? ""
    const out: Array<{ key: string; count: string; last: string }> = []
    for (const row of rows) {
      this.mostRecent.update(row.value)
      this.count.update(count)
      out.push({ key, count: String(count), last: mostRecent })
    }
    return out
  }
}

/** Spark's `MinEventTimeStatefulProcessor`. */
class MinEventTime extends StatefulProcessor<string, typeof KT.Type, KI> {
  readonly outputSchema = KI
  private min!: ValueState<number>
  init(handle: StatefulProcessorHandle): void {
    this.min = handle.getValueState("minEventTimeState", Schema.Number)
  }
  handleInputRows(key: string, rows: ReadonlyArray<typeof KT.Type>): Iterable<KI> {
    const minSec = Math.min(...rows.map((r) => r.eventTime.getTime() / 1000), this.min.get() ?? Number.MAX_VALUE)
    this.min.update(minSec)
    return [{ key, value: minSec }]
  }
}

/** A processor whose `handleInputRows` (or `handleExpiredTimer`) throws `error`. */
const throwing = (where: "rows" | "timer", error: () => unknown) =>
  new (class extends StatefulProcessor<string, { value: string }, KV> {
    readonly outputSchema = KV
    init(handle: StatefulProcessorHandle): void {
      handle.getValueState("testState", Schema.Struct({ id: Schema.Int, name: Schema.String }))
    }
    handleInputRows(_key: string, _rows: ReadonlyArray<{ value: string }>, timerValues: TimerValues): Iterable<KV> {
      if (where === "rows") throw error()
      this.getHandle().registerTimer(timerValues.getCurrentProcessingTimeInMs() + 1000)
      return []
    }
    override handleExpiredTimer(): Iterable<KV> {
      throw error()
    }
  })()

/** Spark's `TestValueStateExistsInInit` and its list and map siblings: `exists()` inside `init`. */
const existsInInit = (kind: "valueState" | "listState" | "mapState") =>
  new (class extends StatefulProcessor<string, { value: string }, KV> {
    readonly outputSchema = KV
    init(handle: StatefulProcessorHandle): void {
      const state =
        kind === "valueState"
          ? handle.getValueState(kind, Schema.String)
          : kind === "listState"
            ? handle.getListState(kind, Schema.String)
            : handle.getMapState(kind, Schema.String, Schema.String)
      state.exists()
    }
    handleInputRows(): Iterable<KV> {
      return []
    }
  })()

describe("TransformWithStateSuite (Spark's cases)", () => {
  it.effect("transformWithState - lazy iterators can properly get/set keyed state", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Int)
      class ProcessorWithLazyIterators extends StatefulProcessor<number, { timestamp: Date }, number> {
        readonly outputSchema = Schema.Number
        private state!: ValueState<number>
        private hasSetTimer = false
        init(handle: StatefulProcessorHandle): void {
          this.state = handle.getValueState("myValueState", Schema.Number)
        }
        handleInputRows(_key: number, rows: ReadonlyArray<{ timestamp: Date }>): Iterable<number> {
          this.state.get()
          this.state.update(1)
          if (!this.hasSetTimer) {
            this.getHandle().registerTimer(0)
            this.hasSetTimer = true
          }
          const state = this.state
          return (function* () {
            for (const r of rows) {
              state.get()
              const seconds = r.timestamp.getTime() / 1000
              state.update(seconds)
              yield seconds
            }
          })()
        }
        override handleExpiredTimer(): Iterable<number> {
          const state = this.state
          return (function* () {
            for (const r of [42]) {
              state.get()
              state.update(r)
              yield r
            }
          })()
        }
      }
      const result = input
        .toDF()
        .select(F.timestamp_seconds("value").as("timestamp"))
        .withWatermark("timestamp", "10 seconds")
        .groupByKey((r) => (r.timestamp as Date).getTime() / 1000, Schema.Number)
        .transformWithState(new ProcessorWithLazyIterators(), { timeMode: TimeMode.EventTime, outputMode: "update" })
      yield* testStream(result, "update", [
        StartStream(),
        // 12 moves the watermark to 2 s, which fires the timer registered at 0
        AddData(input, 12),
        CheckAnswer({ value: 12 }, { value: 42 })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const provider of providers) {
    it.effect(`transformWithState - streaming with rocksdb should succeed (${provider.name})`, () =>
      Effect.gen(function* () {
        const input = yield* strings()
        yield* testStream(runningCount(input), "update", [
          AddData(input, "a"),
          CheckNewAnswer(kv("a", "1")),
          AssertOnQuery(
            (q) =>
              Effect.map(
                lastOp(q),
                (op) =>
                  op !== undefined &&
                  op.customMetrics.numValueStateVars > 0 &&
                  op.customMetrics.numRegisteredTimers === 0 &&
                  op.numRowsUpdated === 1
              ),
            "numValueStateVars > 0, numRegisteredTimers == 0, numRowsUpdated == 1"
          ),
          AddData(input, "a", "b"),
          CheckNewAnswer(kv("a", "2"), kv("b", "1")),
          StopStream,
          StartStream(),
          AddData(input, "a", "b"), // removes the state of a, outputs nothing for it
          CheckNewAnswer(kv("b", "2")),
          AssertOnQuery(
            (q) => Effect.map(lastOp(q), (op) => op?.numRowsUpdated === 1 && op.numRowsRemoved === 1),
            "numRowsUpdated == 1, numRowsRemoved == 1"
          ),
          StopStream,
          StartStream(),
          AddData(input, "a", "c"), // recreates a
          CheckNewAnswer(kv("a", "1"), kv("c", "1"))
        ])
      }).pipe(Effect.provide(provider.layer()))
    )
  }

  it.effect("transformWithState - streaming with rocksdb and processing time timer should succeed", () =>
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
        CheckNewAnswer(kv("a", "1")),
        AssertOnQuery(
          (q) =>
            Effect.map(
              lastOp(q),
              (op) => op !== undefined && op.customMetrics.numValueStateVars > 0 && op.customMetrics.numRegisteredTimers === 1
            ),
          "numValueStateVars > 0, numRegisteredTimers == 1"
        ),
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
        CheckNewAnswer(kv("c", "1")),
        AddData(input, "d"),
        AdvanceClock("10 seconds"),
        CheckNewAnswer(kv("c", "-1"), kv("d", "1")),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  // Deviation (structured/testing.ts AdvanceClock): Spark's AdvanceManualClock first waits until
  // the stream is waiting on the clock (StreamTest: `clock.isStreamWaitingAt`), so the first "a"
  // is batch 0 at 1 s. Here AdvanceClock adjusts the test clock without waiting, the batch of the
  // first "a" has not started when the clock moves on, and both "a"s land in one batch at 7 s.
  it.effect("transformWithState - streaming with rocksdb and processing time timer and multiple timers should succeed", () =>
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
        AdvanceClock("1 second"), // batch 0: three timers for a, at 6, 11 and 16 s
        AddData(input, "a"),
        AdvanceClock("6 seconds"),
        CheckNewAnswer(kv("a", "2")), // at 7 s the first timer fires
        AddData(input, "a"),
        AdvanceClock("5 seconds"),
        CheckNewAnswer(kv("a", "3")), // at 12 s the second
        StopStream,
        StartStream({ trigger }),
        AddData(input, "a"),
        AdvanceClock("5 seconds"),
        CheckNewAnswer(kv("a", "4")), // at 17 s the third
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("transformWithState - streaming with rocksdb and event time based timer", () =>
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
        StartStream(),
        AddData(input, row("a", 11), row("a", 13), row("a", 15)),
        CheckNewAnswer({ key: "a", value: 15 }),
        AddData(input, row("a", 4)),
        CheckNewAnswer(),
        AddData(input, row("a", 10)),
        CheckNewAnswer({ key: "a", value: 15 }),
        AddData(input, row("b", 31)),
        CheckNewAnswer({ key: "a", value: -1 }, { key: "b", value: 31 }),
        AssertOnQuery(
          (q) =>
            Effect.map(
              opProgress(q),
              (ps) =>
                ps.some((p) => p.stateOperators[0].customMetrics.numValueStateVars > 0) &&
                ps.some((p) => p.stateOperators[0].customMetrics.numRegisteredTimers > 0) &&
                ps.some((p) => p.stateOperators[0].customMetrics.numDeletedTimers > 0)
            ),
          "numValueStateVars, numRegisteredTimers and numDeletedTimers reported"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  // Spark's SleepingTimerProcessor sleeps a second per timer to check timerProcessingTimeMs;
  // tests here run on the test clock without sleeps, so the timing bound is not asserted.
  // Spark's manual clock jumps from 2 s to 13 s and the trigger runs one batch at 13 s, where
  // the timers of a and b fire and c's (at 23 s) is registered.
  it.effect("transformWithState - timer duration should be reflected in metrics", () =>
    Effect.gen(function* () {
      const input = yield* strings()
      const processor = {
        outputSchema: Schema.String,
        init: () => {},
        handle: undefined as StatefulProcessorHandle | undefined,
        handleInputRows(_key: string, rows: ReadonlyArray<{ value: string }>, timerValues: TimerValues) {
          for (const _ of rows) this.handle!.registerTimer(timerValues.getCurrentProcessingTimeInMs() + 10000)
          return []
        },
        handleExpiredTimer: (key: string) => [key]
      }
      const withHandle = {
        ...processor,
        init(handle: StatefulProcessorHandle) {
          processor.handle = handle
        },
        handleInputRows: processor.handleInputRows.bind(processor)
      }
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(withHandle, { timeMode: TimeMode.ProcessingTime, outputMode: "update" })
      const registered = (n: number) =>
        AssertOnQuery(
          (q) =>
            Effect.map(
              lastOp(q),
              (op) =>
                op?.customMetrics.numRegisteredTimers === n && typeof op.customMetrics.timerProcessingTimeMs === "number"
            ),
          `numRegisteredTimers == ${n}, timerProcessingTimeMs reported`
        )
      yield* testStream(result, "update", [
        StartStream({ trigger: Trigger.ProcessingTime("1 second") }),
        AddData(input, "a"),
        AdvanceClock("1 second"), // timer at 11 s
        CheckNewAnswer(),
        registered(1),
        AddData(input, "b"),
        AdvanceClock("1 second"), // timer at 12 s
        CheckNewAnswer(),
        registered(1),
        AddData(input, "c"),
        AdvanceClock("11 seconds"),
        CheckNewAnswer({ value: "a" }, { value: "b" }),
        registered(1),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it("Use statefulProcessor without transformWithState - handle should be absent", () => {
    const processor = new RunningCount()
    assert.throws(() => processor.getHandle(), /STATE_STORE_HANDLE_NOT_INITIALIZED/)
  })

  it.effect("transformWithState - batch should succeed", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const result = spark
        .createDataFrame([{ value: "a" }, { value: "b" }], Schema.Struct({ value: Schema.String }))
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new RunningCount(), { timeMode: TimeMode.None, outputMode: "append" })
      const rows = yield* result.collect()
      assert.deepStrictEqual(
        [...rows].sort((x, y) => x.key.localeCompare(y.key)),
        [kv("a", "1"), kv("b", "1")]
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("transformWithState - two input streams", () =>
    Effect.gen(function* () {
      const input1 = yield* strings()
      const input2 = yield* strings()
      const result = input1
        .toDF()
        .union(input2.toDF())
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new RunningCount(), { timeMode: TimeMode.None, outputMode: "update" })
      yield* testStream(result, "update", [
        AddData(input1, "a"),
        CheckNewAnswer(kv("a", "1")),
        AddData(input2, "a", "b"),
        CheckNewAnswer(kv("a", "2"), kv("b", "1")),
        AddData(input1, "a", "b"),
        CheckNewAnswer(kv("b", "2")),
        AddData(input1, "d", "e"),
        AddData(input2, "a", "c"),
        CheckNewAnswer(kv("a", "1"), kv("c", "1"), kv("d", "1"), kv("e", "1")),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("transformWithState - three input streams", () =>
    Effect.gen(function* () {
      const input1 = yield* strings()
      const input2 = yield* strings()
      const input3 = yield* strings()
      const result = input1
        .toDF()
        .union(input2.toDF())
        .union(input3.toDF())
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new RunningCount(), { timeMode: TimeMode.None, outputMode: "update" })
      yield* testStream(result, "update", [
        AddData(input1, "a"),
        CheckNewAnswer(kv("a", "1")),
        AddData(input2, "a", "b"),
        CheckNewAnswer(kv("a", "2"), kv("b", "1")),
        AddData(input3, "a", "b"),
        CheckNewAnswer(kv("b", "2")),
        AddData(input1, "d", "e"),
        AddData(input2, "a", "c"),
        CheckNewAnswer(kv("a", "1"), kv("c", "1"), kv("d", "1"), kv("e", "1")),
        AddData(input3, "a", "c", "d", "e"),
        CheckNewAnswer(kv("a", "2"), kv("c", "2"), kv("d", "2"), kv("e", "2")),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("transformWithState - two input streams, different key type", () =>
    Effect.gen(function* () {
      const input1 = yield* strings()
      const input2 = yield* MemoryStream.make(Schema.Int)
      const result = input1
        .toDF()
        .union(input2.toDF().select(F.col("value").cast("string").as("value")))
        .groupByKey((r) => r.value as string, Schema.String)
        .transformWithState(new RunningCount(), { timeMode: TimeMode.None, outputMode: "update" })
      yield* testStream(result, "update", [
        AddData(input1, "1"),
        CheckNewAnswer(kv("1", "1")),
        AddData(input2, 1, 2),
        CheckNewAnswer(kv("1", "2"), kv("2", "1")),
        AddData(input1, "1", "2"),
        CheckNewAnswer(kv("2", "2")),
        AddData(input1, "4", "5"),
        AddData(input2, 1, 3),
        CheckNewAnswer(kv("1", "1"), kv("3", "1"), kv("4", "1"), kv("5", "1")),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  const restartWith = (
    first: { processor: StatefulProcessor<string, any, any>; timeMode: TimeMode; outputMode: "update" | "append" },
    second: { processor: StatefulProcessor<string, any, any>; timeMode: TimeMode; outputMode: "update" | "append" },
    secondActions: (input: MemoryStream<string>) => ReadonlyArray<StreamAction>
  ) =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const input = yield* strings()
      const query = (c: typeof first) =>
        input
          .toDF()
          .groupByKey((r) => r.value, Schema.String)
          .transformWithState(c.processor, { timeMode: c.timeMode, outputMode: c.outputMode })
      const trigger = Trigger.ProcessingTime("1 second")
      const start = (c: typeof first) =>
        StartStream(c.timeMode === "ProcessingTime" ? { checkpointLocation: dir, trigger } : { checkpointLocation: dir })
      yield* testStream(query(first), "update", [
        start(first),
        AddData(input, "a"),
        ...(first.timeMode === "ProcessingTime" ? [AdvanceClock("1 second")] : []),
        CheckNewAnswer(kv("a", "1")),
        StopStream
      ])
      yield* testStream(query(second), "update", [start(second), ...secondActions(input)])
      yield* removeDir(dir)
    })

  it.effect("test that different outputMode after query restart fails", () =>
    restartWith(
      { processor: new RunningCount(), timeMode: TimeMode.None, outputMode: "update" },
      { processor: new RunningCount(), timeMode: TimeMode.None, outputMode: "append" },
      (input) => [
        AddData(input, "a"),
        ExpectFailure(
          "StateStoreError",
          "[STATE_STORE_INVALID_CONFIG_AFTER_RESTART] Cannot change outputMode from Update to Append between restarts."
        )
      ]
    ).pipe(Effect.provide(Session.layer()))
  )

  it.effect("test that changing between different state variable types fails", () =>
    restartWith(
      { processor: new RunningCount(), timeMode: TimeMode.None, outputMode: "update" },
      {
        processor: new (class extends StatefulProcessor<string, { value: string }, KV> {
          readonly outputSchema = KV
          init(handle: StatefulProcessorHandle): void {
            handle.getListState("countState", Schema.Number)
          }
          handleInputRows(): Iterable<KV> {
            return []
          }
        })(),
        timeMode: TimeMode.None,
        outputMode: "update"
      },
      (input) => [
        AddData(input, "a"),
        ExpectFailure(
          "StateStoreError",
          "[STATE_STORE_INVALID_VARIABLE_TYPE_CHANGE] Cannot change countState to ListState between query restarts. Please set countState to ValueState"
        )
      ]
    ).pipe(Effect.provide(Session.layer()))
  )

  // The timers' store is new in the second run: it is not opened before the first batch, whose
  // check of the operator's properties fails first (Spark's validateNewMetadata).
  it.effect("test that different timeMode after query restart fails", () =>
    restartWith(
      { processor: new RunningCount(), timeMode: TimeMode.None, outputMode: "update" },
      { processor: new RunningCount(), timeMode: TimeMode.ProcessingTime, outputMode: "update" },
      (input) => [
        AddData(input, "a"),
        AdvanceClock("1 second"),
        ExpectFailure(
          "StateStoreError",
          "[STATE_STORE_INVALID_CONFIG_AFTER_RESTART] Cannot change timeMode from NoTime to ProcessingTime between restarts."
        )
      ]
    ).pipe(Effect.provide(Session.layer()))
  )

  it.effect("test query restart with new state variable succeeds", () =>
    restartWith(
      { processor: new RunningCount(), timeMode: TimeMode.ProcessingTime, outputMode: "update" },
      { processor: new RunningCountWithProcTimeTimer(), timeMode: TimeMode.ProcessingTime, outputMode: "update" },
      (input) => [AddData(input, "a"), AdvanceClock("1 second"), CheckNewAnswer(kv("a", "2")), StopStream]
    ).pipe(Effect.provide(Session.layer()))
  )

  // Deviation (found here, not fixed): Spark keeps every variable as a column family of one
  // store, so a variable the earlier runs did not have starts empty. Here each variable is a
  // store of its own, and the first batch after the restart opens the new one at the last
  // committed batch, which it never had ("Version 0 of operator 0 store 'seenState' cannot be
  // opened"). The fix needs the providers to create a store empty at a given version (a
  // snapshot for the file provider, so that later loads need no earlier deltas).
  it.effect.fails("a state variable added at a restart starts empty", () => {
    class CountAndSeen extends RunningCount {
      private seen!: ValueState<number>
      override init(handle: StatefulProcessorHandle): void {
        super.init(handle)
        this.seen = handle.getValueState("seenState", Schema.Number)
      }
      override handleInputRows(key: string): Iterable<KV> {
        const seen = (this.seen.get() ?? 0) + 1
        this.seen.update(seen)
        return [...super.handleInputRows(key)].map((r) => kv(r.key, `${r.value}/${seen}`))
      }
    }
    return restartWith(
      { processor: new RunningCount(), timeMode: TimeMode.None, outputMode: "update" },
      { processor: new CountAndSeen(), timeMode: TimeMode.None, outputMode: "update" },
      (input) => [AddData(input, "a"), CheckNewAnswer(kv("a", "2/1")), AddData(input, "b"), CheckNewAnswer(kv("b", "1/1")), StopStream]
    ).pipe(Effect.provide(Session.layer()))
  })

  it.effect("test query restart succeeds", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const input = yield* strings()
      yield* testStream(runningCount(input), "update", [
        StartStream({ checkpointLocation: dir }),
        AddData(input, "a"),
        CheckNewAnswer(kv("a", "1")),
        StopStream
      ])
      // Files that are not log entries in the offsets folder are ignored on restart.
      yield* Effect.promise(() => mkdir(join(dir, "offsets", "dummy_path_name"), { recursive: true }))
      yield* testStream(runningCount(input, new RunningCountWithProcTimeTimer()), "update", [
        StartStream({ checkpointLocation: dir }),
        AddData(input, "a"),
        CheckNewAnswer(kv("a", "2")),
        StopStream
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("transformWithState - check that error within handleInputRows is classified", () =>
    Effect.gen(function* () {
      const input = yield* strings()
      const result = runningCount(input, throwing("rows", () => new Error("dummy unclassified error")) as any)
      yield* testStream(result, "update", [
        AddData(input, "a"),
        ExpectFailure(
          "StateStoreError",
          "[TRANSFORM_WITH_STATE_USER_FUNCTION_ERROR] An error occurred in the user-defined function [handleInputRows] of the StatefulProcessor. Reason: dummy unclassified error"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("transformWithState - check that classified error is thrown from handleInputRows", () =>
    Effect.gen(function* () {
      const input = yield* strings()
      const classified = () =>
        new StateStoreError({ reason: "InvalidUsage", message: "[STATE_STORE_UNSUPPORTED_OPERATION] dummy val is not supported" })
      const result = runningCount(input, throwing("rows", classified) as any)
      yield* testStream(result, "update", [
        AddData(input, "a"),
        ExpectFailure("StateStoreError", "[STATE_STORE_UNSUPPORTED_OPERATION] dummy val is not supported")
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("transformWithState - check that error within handleExpiredTimer is classified", () =>
    Effect.gen(function* () {
      const input = yield* strings()
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(throwing("timer", () => new Error("dummy unclassified error")), {
          timeMode: TimeMode.ProcessingTime,
          outputMode: "update"
        })
      yield* testStream(result, "update", [
        StartStream({ trigger: Trigger.ProcessingTime("1 second") }),
        AddData(input, "a"),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        AdvanceClock("2 seconds"),
        ExpectFailure(
          "StateStoreError",
          "[TRANSFORM_WITH_STATE_USER_FUNCTION_ERROR] An error occurred in the user-defined function [handleExpiredTimer] of the StatefulProcessor. Reason: dummy unclassified error"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("transformWithState - check that classified error is thrown from handleExpiredTimer", () =>
    Effect.gen(function* () {
      const input = yield* strings()
      const classified = () =>
        new StateStoreError({ reason: "InvalidUsage", message: "[STATE_STORE_UNSUPPORTED_OPERATION] dummy val is not supported" })
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(throwing("timer", classified), { timeMode: TimeMode.ProcessingTime, outputMode: "update" })
      yield* testStream(result, "update", [
        StartStream({ trigger: Trigger.ProcessingTime("1 second") }),
        AddData(input, "a"),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        AdvanceClock("2 seconds"),
        ExpectFailure("StateStoreError", "dummy val is not supported")
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const kind of ["valueState", "mapState", "listState"] as const) {
    const name = kind === "valueState" ? "ValueState" : kind === "mapState" ? "MapState" : "ListState"
    it.effect(`transformWithState - ${name}.exists() should fail in init`, () =>
      Effect.gen(function* () {
        const input = yield* strings()
        yield* testStream(runningCount(input, existsInInit(kind) as any), "update", [
          AddData(input, "a"),
          ExpectFailure(
            "StateStoreError",
            `[STATEFUL_PROCESSOR_CANNOT_PERFORM_OPERATION_WITH_INVALID_HANDLE_STATE] Failed to perform stateful processor operation=${kind}.exists with invalid handle state=PRE_INIT.`
          )
        ])
      }).pipe(Effect.provide(Session.layer()))
    )
  }

  for (const timeMode of [TimeMode.None, TimeMode.ProcessingTime]) {
    it.effect(
      `transformWithState - using watermark but time mode as ${timeMode} should not perform late record filtering`,
      () =>
        Effect.gen(function* () {
          const input = yield* MemoryStream.make(Schema.Struct({ key: Schema.String, seconds: Schema.Int }))
          const result = input
            .toDF()
            .select(F.col("key"), F.timestamp_seconds("seconds").as("eventTime"))
            .withWatermark("eventTime", "10 seconds")
            .groupByKey((r) => r.key as string, Schema.String)
            .transformWithState(new MinEventTime(), { timeMode, outputMode: "update" })
          const row = (key: string, seconds: number) => ({ key, seconds })
          yield* testStream(result, "update", [
            StartStream({ trigger: Trigger.ProcessingTime("1 second") }),
            AddData(input, row("a", 11), row("a", 13), row("a", 15)),
            AdvanceClock("1 second"),
            CheckNewAnswer({ key: "a", value: 11 }),
            AddData(input, row("a", 4)), // behind the watermark (5 s), still processed
            AdvanceClock("1 second"),
            CheckNewAnswer({ key: "a", value: 4 }),
            AddData(input, row("a", 1)),
            AdvanceClock("1 second"),
            CheckNewAnswer({ key: "a", value: 1 }),
            AddData(input, row("a", 85)),
            AdvanceClock("1 second"),
            CheckNewAnswer({ key: "a", value: 1 }),
            StopStream
          ])
        }).pipe(Effect.provide(Session.layer()))
    )
  }
})

describe("TransformWithStateSuite (Spark's cases): deleteIfExists", () => {
  /** Spark's `MostRecentStatefulProcessorWithDeletion`. */
  class MostRecentWithDeletion extends StatefulProcessor<string, KV, KV> {
    readonly outputSchema = KV
    private mostRecent!: ValueState<string>
    init(handle: StatefulProcessorHandle): void {
      handle.deleteIfExists("countState")
      this.mostRecent = handle.getValueState("mostRecent", Schema.String)
    }
    handleInputRows(key: string, rows: ReadonlyArray<KV>): Iterable<KV> {
      const mostRecent = this.mostRecent.get() ?? ""
      return rows.map((row) => {
        this.mostRecent.update(row.value)
        return kv(key, mostRecent)
      })
    }
  }

  it.effect("transformWithState - test deleteIfExists operator", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const input = yield* MemoryStream.make(KV)
      const stream1 = input
        .toDF()
        .groupByKey((r) => r.key, Schema.String)
        .transformWithState(new RunningCountMostRecent(), { timeMode: TimeMode.None, outputMode: "update" })
      const stream2 = input
        .toDF()
        .groupByKey((r) => r.key, Schema.String)
        .transformWithState(new MostRecentWithDeletion(), { timeMode: TimeMode.None, outputMode: "update" })
      yield* testStream(stream1, "update", [
        StartStream({ checkpointLocation: dir }),
        AddData(input, kv("a", "str1")),
        CheckNewAnswer({ key: "a", count: "1", last: "" }),
        StopStream
      ])
      yield* testStream(stream2, "update", [
        StartStream({ checkpointLocation: dir }),
        AddData(input, kv("a", "str2"), kv("b", "str3")),
        CheckNewAnswer(kv("a", "str1"), kv("b", "")), // the count state is not read
        AssertOnQuery(
          (q) =>
            Effect.map(
              lastOp(q),
              (op) => (op?.customMetrics.numValueStateVars ?? 0) > 0 && (op?.customMetrics.numDeletedStateVars ?? 0) > 0
            ),
          "numValueStateVars > 0, numDeletedStateVars > 0"
        ),
        StopStream
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("TransformWithStateSuite (Spark's cases): Trigger.AvailableNow over files", () => {
  /** Spark's `createFile`: a text file with one line, named by a fresh UUID. */
  const createFile = (data: string, dir: string) =>
    Effect.promise(() => writeFile(join(dir, `${crypto.randomUUID()}.txt`), data))

  /** Spark's `createFileStream`: one file per trigger into the running count. */
  const createFileStream = (spark: SessionShape, dir: string) =>
    spark.readStream
      .option("maxFilesPerTrigger", "1")
      .text(dir)
      .select("value")
      .groupByKey((r) => r.value as string, Schema.String)
      .transformWithState(new RunningCount(), { timeMode: TimeMode.None, outputMode: "update" })

  /** Runs the query to its end with Trigger.AvailableNow, counting foreachBatch calls into `counter`. */
  const runAvailableNow = (df: ReturnType<typeof createFileStream>, counter: { n: number }) =>
    Effect.gen(function* () {
      const q = yield* df.writeStream
        .foreachBatch(() => {
          counter.n += 1
        })
        .trigger(Trigger.AvailableNow())
        .start()
      yield* q.awaitTermination()
      yield* q.stop()
    })

  it.effect("transformWithState - availableNow trigger mode, rate limit is respected", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      for (const d of ["a", "b", "c"]) yield* createFile(d, src)
      const df = createFileStream(spark, src)
      const awaitTermination = Execute((q) => q!.awaitTermination())
      yield* testStream(df, "update", [
        StartStream({ trigger: Trigger.AvailableNow() }),
        awaitTermination,
        CheckNewAnswer(kv("a", "1"), kv("b", "1"), kv("c", "1")),
        StopStream,
        Execute(createFile("a", src)),
        StartStream({ trigger: Trigger.AvailableNow() }),
        awaitTermination,
        CheckNewAnswer(kv("a", "2"))
      ])
      const counter = { n: 0 }
      yield* runAvailableNow(df, counter)
      assert.strictEqual(counter.n, 4)
      yield* removeDir(src)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("transformWithState - availableNow trigger mode, multiple restarts", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const src = yield* tempDir()
      for (const d of ["a", "b", "c"]) yield* createFile(d, src)
      const df = createFileStream(spark, src)
      const counter = { n: 0 }
      // start query for the first time
      yield* runAvailableNow(df, counter)
      assert.strictEqual(counter.n, 3)
      // add two files and restart (a fresh checkpoint: every file again)
      yield* createFile("a", src)
      yield* createFile("b", src)
      yield* runAvailableNow(df, counter)
      assert.strictEqual(counter.n, 8)
      // try restart again
      yield* createFile("d", src)
      yield* runAvailableNow(df, counter)
      assert.strictEqual(counter.n, 14)
      yield* removeDir(src)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("TransformWithStateSuite (Spark's cases): operator metadata", () => {
  // Deviation (structured/execution/StateReader.ts writeOperatorMetadata / readStateMetadata):
  // Spark's OperatorStateMetadataV2 for transformWithState has one state store, "default", and
  // operatorProperties is the JSON of TransformWithStateOperatorProperties (timeMode, outputMode,
  // stateVariables). tributary lists one row per store of the operator (the properties' store,
  // countState) and leaves operatorProperties empty. (Spark's numPartitions, 5 from its shuffle
  // partitions conf, is not checked.)
  it.effect.fails("transformWithState - verify that OperatorStateMetadataV2 file is being written correctly", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const input = yield* strings()
      yield* testStream(runningCount(input), "update", [
        StartStream({ checkpointLocation: dir }),
        AddData(input, "a"),
        CheckNewAnswer(kv("a", "1")),
        StopStream,
        StartStream({ checkpointLocation: dir }),
        AddData(input, "a"),
        CheckNewAnswer(kv("a", "2")),
        StopStream
      ])
      const df = yield* spark.read.format("state-metadata").load(dir)
      const rows = (yield* df.collect()) as ReadonlyArray<Record<string, unknown>>
      assert.deepStrictEqual(
        rows.map((r) => [r.operatorId, r.operatorName, r.stateStoreName, r.minBatchId, r.maxBatchId]),
        [[0, "transformWithStateExec", "default", 0, 1]]
      )
      const props = JSON.parse(String(rows[0].operatorProperties))
      assert.strictEqual(props.timeMode, "NoTime")
      assert.strictEqual(props.outputMode, "Update")
      assert.strictEqual(props.stateVariables.length, 1)
      assert.strictEqual(props.stateVariables[0].stateName, "countState")
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )
})
