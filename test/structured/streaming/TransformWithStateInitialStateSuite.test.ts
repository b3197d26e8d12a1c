/**
 * Spark's `TransformWithStateInitialStateSuite`: the initial state (a grouped batch DataFrame)
 * is given to `handleInitialState` once per key in the first batch only, before the batch's
 * rows; a key twice fails with `STATEFUL_PROCESSOR_CANNOT_REINITIALIZE_STATE_ON_KEY`; timers
 * registered while initialising fire like any other.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import {
  MemoryStream,
  Session,
  StatefulProcessor,
  type StatefulProcessorHandle,
  TimeMode,
  type TimerValues,
  Trigger,
  type ValueState
} from "../../../mod.ts"
import {
  AddData,
  AdvanceClock,
  CheckNewAnswer,
  ExpectFailure,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"

const Init = Schema.Struct({ key: Schema.String, count: Schema.Int })
type Init = typeof Init.Type
const Out = Schema.Struct({ key: Schema.String, count: Schema.Number })
type Out = typeof Out.Type

/** Spark's `InitialStateInMemoryTestClass`, reduced to a count: the initial state seeds it. */
class CountWithInitialState extends StatefulProcessor<string, { value: string }, Out, Init> {
  readonly outputSchema = Out
  protected count!: ValueState<number>
  init(handle: StatefulProcessorHandle): void {
    this.count = handle.getValueState("count", Schema.Number)
  }
  override handleInitialState(_key: string, initial: Init, _timerValues?: TimerValues): void {
    this.count.update(initial.count)
  }
  handleInputRows(key: string, rows: ReadonlyArray<{ value: string }>): Iterable<Out> {
    const count = (this.count.get() ?? 0) + rows.length
    this.count.update(count)
    return [{ key, count }]
  }
}

/** The initial state registers a timer 5 s out; when it fires the key reports -1. */
class TimerFromInitialState extends CountWithInitialState {
  override handleInitialState(key: string, initial: Init, timerValues: TimerValues): void {
    super.handleInitialState(key, initial)
    this.getHandle().registerTimer(timerValues.getCurrentProcessingTimeInMs() + 5000)
  }
  override handleExpiredTimer(key: string): Iterable<Out> {
    return [{ key, count: -1 }]
  }
}

describe("TransformWithStateInitialStateSuite", () => {
  it.effect("the initial state seeds the first batch only", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Schema.String)
      const initial = spark
        .createDataFrame(
          [
            { key: "a", count: 10 },
            { key: "b", count: 20 }
          ],
          Init
        )
        .groupByKey((r) => r.key, Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new CountWithInitialState(), {
          timeMode: TimeMode.None,
          outputMode: "update",
          initialState: initial
        })
      yield* testStream(result, "update", [
        AddData(input, "a", "c"),
        CheckNewAnswer({ key: "a", count: 11 }, { key: "c", count: 1 }),
        AddData(input, "b"),
        CheckNewAnswer({ key: "b", count: 21 }),
        StopStream,
        StartStream(),
        // not applied again after a restart
        AddData(input, "a", "b"),
        CheckNewAnswer({ key: "a", count: 12 }, { key: "b", count: 22 })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a key twice in the initial state fails (STATEFUL_PROCESSOR_CANNOT_REINITIALIZE_STATE_ON_KEY)", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Schema.String)
      const initial = spark
        .createDataFrame(
          [
            { key: "a", count: 1 },
            { key: "a", count: 2 }
          ],
          Init
        )
        .groupByKey((r) => r.key, Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new CountWithInitialState(), {
          timeMode: TimeMode.None,
          outputMode: "update",
          initialState: initial
        })
      yield* testStream(result, "update", [
        AddData(input, "a"),
        ExpectFailure("StateStoreError", "STATEFUL_PROCESSOR_CANNOT_REINITIALIZE_STATE_ON_KEY")
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("timers registered in handleInitialState fire on the batch clock", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Schema.String)
      const initial = spark.createDataFrame([{ key: "a", count: 5 }], Init).groupByKey((r) => r.key, Schema.String)
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new TimerFromInitialState(), {
          timeMode: TimeMode.ProcessingTime,
          outputMode: "update",
          initialState: initial
        })
      yield* testStream(result, "update", [
        StartStream({ trigger: Trigger.ProcessingTime("1 second") }),
        AddData(input, "x"),
        AdvanceClock("1 second"), // batch 0 at 1 s: a's timer at 6 s
        CheckNewAnswer({ key: "x", count: 1 }),
        AdvanceClock("10 seconds"),
        CheckNewAnswer({ key: "a", count: -1 }),
        AddData(input, "a"),
        AdvanceClock("1 second"),
        CheckNewAnswer({ key: "a", count: 6 })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a processor without handleInitialState is refused when given an initial state", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Schema.String)
      const initial = spark.createDataFrame([{ key: "a", count: 5 }], Init).groupByKey((r) => r.key, Schema.String)
      const processor = {
        outputSchema: Out,
        init: () => {},
        handleInputRows: (key: string) => [{ key, count: 0 }]
      }
      const result = input
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(processor, { timeMode: TimeMode.None, outputMode: "update", initialState: initial })
      const error = yield* result.writeStream.format("memory").queryName("tws_no_initial").start().pipe(Effect.flip)
      if (!error.message.includes("handleInitialState")) return yield* Effect.die(new Error(error.message))
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("transformWithState on a batch DataFrame", () => {
  it.effect("runs once over throwaway state, with the initial state and due timers", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const words = spark.createDataFrame(
        [{ value: "a" }, { value: "b" }, { value: "a" }],
        Schema.Struct({ value: Schema.String })
      )
      const initial = spark.createDataFrame([{ key: "a", count: 10 }], Init).groupByKey((r) => r.key, Schema.String)
      const counts = words
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new CountWithInitialState(), {
          timeMode: TimeMode.None,
          outputMode: "update",
          initialState: initial
        })
      const rows = yield* counts.collect()
      assert.deepStrictEqual(
        [...rows].sort((x, y) => x.key.localeCompare(y.key)),
        [
          { key: "a", count: 12 },
          { key: "b", count: 1 }
        ]
      )
      const eventTime = words
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new CountWithInitialState(), { timeMode: TimeMode.EventTime, outputMode: "update" })
      const error = yield* eventTime.collect().pipe(Effect.flip)
      assert.include(error.message, "TimeMode.EventTime needs a watermark")
    }).pipe(Effect.provide(Session.layer()))
  )
})
