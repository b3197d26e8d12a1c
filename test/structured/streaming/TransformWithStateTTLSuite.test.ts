/**
 * Spark's `TransformWithValueStateTTLSuite`, `TransformWithListStateTTLSuite` and
 * `TransformWithMapStateTTLSuite` on the test clock: a value expires when the batch timestamp
 * reaches its expiry (last update + TTL; Spark's `isExpired` is `batchTimestampMs >= expiry`), an
 * expired value is never returned, cleanup also runs in batches without data (the operator asks
 * for one at the next expiry), and each removal counts in `numValuesRemovedDueToTTLExpiry`.
 */
import { describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import {
  type ListState,
  type MapState,
  MemoryStream,
  Session,
  StatefulProcessor,
  type StatefulProcessorHandle,
  TimeMode,
  Trigger,
  TTLConfig,
  type ValueState
} from "../../../mod.ts"
import type { StreamingQuery } from "../../../structured/contracts/StreamingQuery.ts"
import {
  AddData,
  AdvanceClock,
  AssertOnQuery,
  CheckNewAnswer,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"
import { removeDir, tempDir } from "./StreamingTestKit.ts"

const InputEvent = Schema.Struct({ key: Schema.String, action: Schema.String, value: Schema.Number })
type InputEvent = typeof InputEvent.Type
const OutputEvent = Schema.Struct({ key: Schema.String, value: Schema.Number })
type OutputEvent = typeof OutputEvent.Type

const ttl = TTLConfig.of("1 minute")

/** Spark's `ValueStateTTLProcessor`: put sets the value, get outputs it when it exists. */
class ValueStateTTLProcessor extends StatefulProcessor<string, InputEvent, OutputEvent> {
  readonly outputSchema = OutputEvent
  private state!: ValueState<number>
  private readonly ttl: TTLConfig
  constructor(ttlConfig: TTLConfig = ttl) {
    super()
    this.ttl = ttlConfig
  }
  init(handle: StatefulProcessorHandle): void {
    this.state = handle.getValueState("valueState", Schema.Number, this.ttl)
  }
  handleInputRows(key: string, rows: ReadonlyArray<InputEvent>): Iterable<OutputEvent> {
    const out: Array<OutputEvent> = []
    for (const r of rows) {
      if (r.action === "put") this.state.update(r.value)
      else if (r.action === "get") {
        const v = this.state.get()
        if (v !== undefined) out.push({ key, value: v })
      }
    }
    return out
  }
}

/** Spark's `MultiStatefulVariableTTLProcessor`-like list processor: append, then get every value. */
class ListStateTTLProcessor extends StatefulProcessor<string, InputEvent, OutputEvent> {
  readonly outputSchema = OutputEvent
  private list!: ListState<number>
  init(handle: StatefulProcessorHandle): void {
    this.list = handle.getListState("listState", Schema.Number, ttl)
  }
  handleInputRows(key: string, rows: ReadonlyArray<InputEvent>): Iterable<OutputEvent> {
    const out: Array<OutputEvent> = []
    for (const r of rows) {
      if (r.action === "append") this.list.appendValue(r.value)
      else if (r.action === "get") for (const v of this.list.get()) out.push({ key, value: v })
    }
    return out
  }
}

/** Spark's `MapStateSingleKeyTTLProcessor`: put `value` under user key `value`, get every entry. */
class MapStateTTLProcessor extends StatefulProcessor<string, InputEvent, OutputEvent> {
  readonly outputSchema = OutputEvent
  private map!: MapState<number, number>
  init(handle: StatefulProcessorHandle): void {
    this.map = handle.getMapState("mapState", Schema.Number, Schema.Number, ttl)
  }
  handleInputRows(key: string, rows: ReadonlyArray<InputEvent>): Iterable<OutputEvent> {
    const out: Array<OutputEvent> = []
    for (const r of rows) {
      if (r.action === "put") this.map.updateValue(r.value, r.value * 10)
      else if (r.action === "get") for (const [, v] of this.map.iterator()) out.push({ key, value: v })
    }
    return out
  }
}

const ev = (key: string, action: string, value = -1): InputEvent => ({ key, action, value })

const query = (stream: MemoryStream<InputEvent>, processor: StatefulProcessor<string, InputEvent, OutputEvent>) =>
  stream
    .toDF()
    .groupByKey((r) => r.key, Schema.String)
    .transformWithState(processor, { timeMode: TimeMode.ProcessingTime, outputMode: "update" })

const trigger = Trigger.ProcessingTime("1 second")

/** `numValuesRemovedDueToTTLExpiry` summed over the batches run, and the state rows of the last one. */
const assertTTL = (removed: number, totalRows: number) =>
  AssertOnQuery(
    (q: StreamingQuery) =>
      Effect.map(q.recentProgress(), (ps) => {
        // Batches that ran (an idle progress repeats the last batch's state operators).
        const withOps = ps.filter((p) => p.stateOperators.length > 0 && p.durationMs.addBatch !== undefined)
        const sum = withOps.reduce(
          (n, p) => n + (p.stateOperators[0].customMetrics.numValuesRemovedDueToTTLExpiry ?? 0),
          0
        )
        return sum === removed && withOps[withOps.length - 1]?.stateOperators[0].numRowsTotal === totalRows
      }),
    `numValuesRemovedDueToTTLExpiry = ${removed}, numRowsTotal = ${totalRows}`
  )

describe("TransformWithStateTTLSuite", () => {
  it.effect("value state: returned until the batch timestamp reaches the expiry, then gone", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(InputEvent)
      yield* testStream(query(stream, new ValueStateTTLProcessor()), "update", [
        StartStream({ trigger }),
        AddData(stream, ev("k1", "put", 1)),
        AdvanceClock("1 second"), // batch at 1 s: expires at 61 s
        CheckNewAnswer(),
        AddData(stream, ev("k1", "get")),
        AdvanceClock("1 second"),
        CheckNewAnswer({ key: "k1", value: 1 }),
        AdvanceClock("58 seconds"), // now 60 s
        AddData(stream, ev("k1", "get")),
        AdvanceClock("1 second"), // batch at 61 s: expired (61 >= 61)
        CheckNewAnswer(),
        assertTTL(1, 0)
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("value state: an update restarts the TTL", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(InputEvent)
      yield* testStream(query(stream, new ValueStateTTLProcessor()), "update", [
        StartStream({ trigger }),
        AddData(stream, ev("k1", "put", 1)),
        AdvanceClock("1 second"), // expires at 61 s
        CheckNewAnswer(),
        AdvanceClock("29 seconds"),
        AddData(stream, ev("k1", "put", 2)),
        AdvanceClock("1 second"), // batch at 31 s: expires at 91 s
        CheckNewAnswer(),
        AdvanceClock("29 seconds"),
        AddData(stream, ev("k1", "get")),
        AdvanceClock("1 second"), // batch at 61 s
        CheckNewAnswer({ key: "k1", value: 2 }),
        assertTTL(0, 1)
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("cleanup runs in a batch without data at the expiry", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(InputEvent)
      yield* testStream(query(stream, new ValueStateTTLProcessor()), "update", [
        StartStream({ trigger }),
        AddData(stream, ev("k1", "put", 1), ev("k2", "put", 2)),
        AdvanceClock("1 second"), // expire at 61 s
        CheckNewAnswer(),
        assertTTL(0, 2),
        // Spark's manual clock jumps: the trigger wakes once, at 66 s, and that batch (without
        // data) removes both values.
        AdvanceClock("65 seconds"),
        CheckNewAnswer(),
        assertTTL(2, 0),
        AssertOnQuery(
          (q) =>
            Effect.map(q.recentProgress(), (ps) => {
              const last = ps.filter((p) => p.durationMs.addBatch !== undefined).at(-1)
              return last !== undefined && last.numInputRows === 0 && last.timestamp === new Date(66_000).toISOString()
            }),
          "the cleanup batch had no data and ran at 66 s"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("cleanup also runs without a trigger interval (default trigger on the test clock)", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(InputEvent)
      // A short TTL: without an interval the idle query polls every 10 ms of test-clock time.
      yield* testStream(query(stream, new ValueStateTTLProcessor(TTLConfig.of("200 millis"))), "update", [
        AddData(stream, ev("k1", "put", 1)), // batch at 0 s: expires at 200 ms
        CheckNewAnswer(),
        assertTTL(0, 1),
        AdvanceClock("200 millis"),
        CheckNewAnswer(),
        assertTTL(1, 0)
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("list state: each element expires on its own", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(InputEvent)
      yield* testStream(query(stream, new ListStateTTLProcessor()), "update", [
        StartStream({ trigger }),
        AddData(stream, ev("k1", "append", 1)),
        AdvanceClock("1 second"), // expires at 61 s
        CheckNewAnswer(),
        AdvanceClock("29 seconds"),
        AddData(stream, ev("k1", "append", 2)),
        AdvanceClock("1 second"), // expires at 91 s
        CheckNewAnswer(),
        AddData(stream, ev("k1", "get")),
        AdvanceClock("1 second"),
        CheckNewAnswer({ key: "k1", value: 1 }, { key: "k1", value: 2 }),
        AdvanceClock("28 seconds"), // now 60 s
        AddData(stream, ev("k1", "get")),
        AdvanceClock("1 second"), // batch at 61 s
        CheckNewAnswer({ key: "k1", value: 2 }),
        assertTTL(1, 1),
        AdvanceClock("40 seconds"), // past 91 s: the last element goes in a batch without data
        CheckNewAnswer(),
        assertTTL(2, 0)
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("map state: each entry expires on its own", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(InputEvent)
      yield* testStream(query(stream, new MapStateTTLProcessor()), "update", [
        StartStream({ trigger }),
        AddData(stream, ev("k1", "put", 1)),
        AdvanceClock("1 second"), // expires at 61 s
        CheckNewAnswer(),
        AdvanceClock("29 seconds"),
        AddData(stream, ev("k1", "put", 2)),
        AdvanceClock("1 second"), // expires at 91 s
        CheckNewAnswer(),
        AdvanceClock("29 seconds"), // now 60 s
        AddData(stream, ev("k1", "get")),
        AdvanceClock("1 second"), // batch at 61 s
        CheckNewAnswer({ key: "k1", value: 20 }),
        assertTTL(1, 1)
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})

// -------------------------------------------------------------------------------------------------
// Spark's TransformWithStateTTLTest cases, run (as in Spark) for a value, a list and a map state
// processor: TransformWithValueStateTTLSuite, TransformWithListStateTTLSuite,
// TransformWithMapStateTTLSuite. Spark also inspects its TTL secondary index there
// (get_ttl_value_from_state, get_values_in_ttl_state, get_without_enforcing_ttl: methods of its
// *ImplWithTTL classes, not of the public API); those steps are kept as batches without data so
// that the clock moves as in Spark, and their outputs are not checked.
// -------------------------------------------------------------------------------------------------

const SparkOutputEvent = Schema.Struct({
  key: Schema.String,
  value: Schema.Number,
  isTTLValue: Schema.Boolean,
  ttlValue: Schema.Number
})
type SparkOutputEvent = typeof SparkOutputEvent.Type
const got = (key: string, value: number): SparkOutputEvent => ({ key, value, isTTLValue: false, ttlValue: -1 })

/** Spark's `ValueStateTTLProcessor` (`get` outputs the value when it exists, `put` sets it). */
class SparkValueStateTTLProcessor extends StatefulProcessor<string, InputEvent, SparkOutputEvent> {
  readonly outputSchema = SparkOutputEvent
  private state!: ValueState<number>
  private readonly ttlConfig: TTLConfig
  constructor(ttlConfig: TTLConfig) {
    super()
    this.ttlConfig = ttlConfig
  }
  init(handle: StatefulProcessorHandle): void {
    this.state = handle.getValueState("valueState", Schema.Int, this.ttlConfig)
  }
  handleInputRows(key: string, rows: ReadonlyArray<InputEvent>): Iterable<SparkOutputEvent> {
    const out: Array<SparkOutputEvent> = []
    for (const r of rows) {
      if (r.action === "get") {
        const v = this.state.get()
        if (v !== undefined) out.push(got(key, v))
      } else if (r.action === "put") this.state.update(r.value)
    }
    return out
  }
}

/** Spark's `ListStateTTLProcessor` (`put` replaces the list by one value, `append` adds one). */
class SparkListStateTTLProcessor extends StatefulProcessor<string, InputEvent, SparkOutputEvent> {
  readonly outputSchema = SparkOutputEvent
  private list!: ListState<number>
  private readonly ttlConfig: TTLConfig
  constructor(ttlConfig: TTLConfig) {
    super()
    this.ttlConfig = ttlConfig
  }
  init(handle: StatefulProcessorHandle): void {
    this.list = handle.getListState("listState", Schema.Int, this.ttlConfig)
  }
  handleInputRows(key: string, rows: ReadonlyArray<InputEvent>): Iterable<SparkOutputEvent> {
    const out: Array<SparkOutputEvent> = []
    for (const r of rows) {
      if (r.action === "get") for (const v of this.list.get()) out.push(got(key, v))
      else if (r.action === "put") this.list.put([r.value])
      else if (r.action === "append") this.list.appendValue(r.value)
      else if (r.action === "clear") this.list.clear()
    }
    return out
  }
}

/** Spark's `MapStateSingleKeyTTLProcessor`: one fixed user key. */
class SparkMapStateSingleKeyTTLProcessor extends StatefulProcessor<string, InputEvent, SparkOutputEvent> {
  readonly outputSchema = SparkOutputEvent
  private map!: MapState<string, number>
  private readonly ttlConfig: TTLConfig
  constructor(ttlConfig: TTLConfig) {
    super()
    this.ttlConfig = ttlConfig
  }
  init(handle: StatefulProcessorHandle): void {
    this.map = handle.getMapState("mapState", Schema.String, Schema.Int, this.ttlConfig)
  }
  handleInputRows(key: string, rows: ReadonlyArray<InputEvent>): Iterable<SparkOutputEvent> {
    const out: Array<SparkOutputEvent> = []
    for (const r of rows) {
      if (r.action === "get") {
        const v = this.map.getValue(key)
        if (v !== undefined) out.push(got(key, v))
      } else if (r.action === "put") this.map.updateValue(key, r.value)
    }
    return out
  }
}

const ttlSuites = [
  {
    suite: "TransformWithValueStateTTLSuite",
    make: (c: TTLConfig) => new SparkValueStateTTLProcessor(c),
    metric: "numValueStateWithTTLVars"
  },
  {
    suite: "TransformWithListStateTTLSuite",
    make: (c: TTLConfig) => new SparkListStateTTLProcessor(c),
    metric: "numListStateWithTTLVars"
  },
  {
    suite: "TransformWithMapStateTTLSuite",
    make: (c: TTLConfig) => new SparkMapStateSingleKeyTTLProcessor(c),
    metric: "numMapStateWithTTLVars"
  }
] as const

const appendQuery = (stream: MemoryStream<InputEvent>, processor: StatefulProcessor<string, InputEvent, SparkOutputEvent>) =>
  stream
    .toDF()
    .groupByKey((r) => r.key, Schema.String)
    .transformWithState(processor, { timeMode: TimeMode.ProcessingTime, outputMode: "append" })

/** A step where Spark reads its TTL index: one batch without data, one second later. */
const internalStep = [AdvanceClock("1 second"), CheckNewAnswer()] as const

for (const { suite, make, metric } of ttlSuites) {
  describe(`${suite} (Spark's TransformWithStateTTLTest cases)`, () => {
    it.effect("validate state is evicted at ttl expiry", () =>
      Effect.gen(function* () {
        const dir = yield* tempDir()
        const stream = yield* MemoryStream.make(InputEvent)
        const start = StartStream({ trigger, checkpointLocation: dir })
        yield* testStream(appendQuery(stream, make(TTLConfig.of("1 minute"))), "append", [
          start,
          AddData(stream, ev("k1", "put", 1)),
          AdvanceClock("1 second"),
          CheckNewAnswer(),
          StopStream,
          start,
          // get this state, and make sure we get unexpired value
          AddData(stream, ev("k1", "get", -1)),
          AdvanceClock("1 second"),
          CheckNewAnswer(got("k1", 1)),
          StopStream,
          start,
          ...internalStep, // get_ttl_value_from_state
          ...internalStep, // get_values_in_ttl_state
          StopStream,
          start,
          // advance clock so that state expires
          AdvanceClock("60 seconds"),
          AddData(stream, ev("k1", "get", -1)),
          AdvanceClock("1 second"),
          // validate expired value is not returned
          CheckNewAnswer(),
          ...internalStep, // get_without_enforcing_ttl
          ...internalStep, // get_values_in_ttl_state
          AssertOnQuery(
            (q) =>
              Effect.map(q.recentProgress(), (ps) => {
                const ops = ps.filter((p) => p.stateOperators.length > 0).map((p) => p.stateOperators[0].customMetrics)
                return ops.some((m) => m[metric] > 0) && ops.some((m) => m.numValuesRemovedDueToTTLExpiry > 0)
              }),
            `${metric} > 0 and numValuesRemovedDueToTTLExpiry > 0 in some progress`
          )
        ])
        yield* removeDir(dir)
      }).pipe(Effect.provide(Session.layer()))
    )

    it.effect("validate state update updates the expiration timestamp", () =>
      Effect.gen(function* () {
        const stream = yield* MemoryStream.make(InputEvent)
        yield* testStream(appendQuery(stream, make(TTLConfig.of("1 minute"))), "append", [
          StartStream({ trigger }),
          AddData(stream, ev("k1", "put", 1)),
          AdvanceClock("1 second"),
          CheckNewAnswer(),
          AddData(stream, ev("k1", "get", -1)),
          AdvanceClock("1 second"),
          CheckNewAnswer(got("k1", 1)),
          ...internalStep, // get_ttl_value_from_state: 61000
          ...internalStep, // get_values_in_ttl_state: 61000
          // advance clock and update expiration time
          AdvanceClock("30 seconds"),
          AddData(stream, ev("k1", "put", 1)),
          AddData(stream, ev("k1", "get", -1)),
          AdvanceClock("1 second"),
          // validate value is not expired
          CheckNewAnswer(got("k1", 1)),
          ...internalStep, // get_ttl_value_from_state: 95000
          ...internalStep, // get_values_in_ttl_state: 61000, 95000
          // advance clock after older expiration value
          AdvanceClock("30 seconds"),
          // ensure unexpired value is still present in the state
          AddData(stream, ev("k1", "get", -1)),
          AdvanceClock("1 second"),
          CheckNewAnswer(got("k1", 1))
        ])
      }).pipe(Effect.provide(Session.layer()))
    )

    it.effect("validate state is evicted at ttl expiry for no data batch", () =>
      Effect.gen(function* () {
        const stream = yield* MemoryStream.make(InputEvent)
        yield* testStream(appendQuery(stream, make(TTLConfig.of("1 minute"))), "append", [
          StartStream({ trigger }),
          AddData(stream, ev("k1", "put", 1)),
          AdvanceClock("1 second"),
          CheckNewAnswer(),
          AddData(stream, ev("k1", "get", -1)),
          AdvanceClock("1 second"),
          CheckNewAnswer(got("k1", 1)),
          ...internalStep,
          ...internalStep,
          // advance clock so that state expires
          AdvanceClock("60 seconds"),
          // run a no data batch
          CheckNewAnswer(),
          AssertOnQuery(
            (q) =>
              Effect.map(q.lastProgress(), (p) => p?.numInputRows === 0 && p.stateOperators[0]?.numRowsTotal === 0),
            "the state is gone after a batch without data"
          ),
          AddData(stream, ev("k1", "get", -1)),
          AdvanceClock("1 second"),
          // validate expired value is not returned
          CheckNewAnswer()
        ])
      }).pipe(Effect.provide(Session.layer()))
    )

    it.effect("validate only expired keys are removed from the state", () =>
      Effect.gen(function* () {
        const stream = yield* MemoryStream.make(InputEvent)
        yield* testStream(appendQuery(stream, make(TTLConfig.of("1 minute"))), "append", [
          StartStream({ trigger }),
          AddData(stream, ev("k1", "put", 1)),
          AdvanceClock("1 second"),
          CheckNewAnswer(),
          // advance clock halfway to expiration ttl, and add another key
          AdvanceClock("30 seconds"),
          AddData(stream, ev("k2", "put", 2)),
          AdvanceClock("1 second"),
          CheckNewAnswer(),
          // advance clock so that key k1 is expired
          AdvanceClock("30 seconds"),
          AddData(stream, ev("k1", "get", 1)),
          AddData(stream, ev("k2", "get", -1)),
          AdvanceClock("1 second"),
          // validate k1 is expired and k2 is not
          CheckNewAnswer(got("k2", 2)),
          // k1 is gone from the state, k2 (expiring at 92 s) is there
          AssertOnQuery(
            (q) => Effect.map(q.lastProgress(), (p) => p?.stateOperators[0]?.numRowsTotal === 1),
            "one key left in the state"
          )
        ])
      }).pipe(Effect.provide(Session.layer()))
    )
  })
}

/** Spark's `MultipleValueStatesTTLProcessor`: `ttlKey` uses a value state with TTL, others one without. */
class MultipleValueStatesTTLProcessor extends StatefulProcessor<string, InputEvent, SparkOutputEvent> {
  readonly outputSchema = SparkOutputEvent
  private withTtl!: ValueState<number>
  private withoutTtl!: ValueState<number>
  private readonly ttlKey: string
  private readonly ttlConfig: TTLConfig
  constructor(ttlKey: string, ttlConfig: TTLConfig) {
    super()
    this.ttlKey = ttlKey
    this.ttlConfig = ttlConfig
  }
  init(handle: StatefulProcessorHandle): void {
    this.withTtl = handle.getValueState("valueStateTTL", Schema.Int, this.ttlConfig)
    this.withoutTtl = handle.getValueState("valueState", Schema.Int)
  }
  handleInputRows(key: string, rows: ReadonlyArray<InputEvent>): Iterable<SparkOutputEvent> {
    const state = key === this.ttlKey ? this.withTtl : this.withoutTtl
    const out: Array<SparkOutputEvent> = []
    for (const r of rows) {
      if (r.action === "get") {
        const v = state.get()
        if (v !== undefined) out.push(got(key, v))
      } else if (r.action === "put") state.update(r.value)
    }
    return out
  }
}

describe("TransformWithValueStateTTLSuite (Spark's cases)", () => {
  it.effect("validate multiple value states", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(InputEvent)
      const result = appendQuery(stream, new MultipleValueStatesTTLProcessor("k1", TTLConfig.of("1 minute")))
      yield* testStream(result, "append", [
        StartStream({ trigger }),
        AddData(stream, ev("k1", "put", 1)),
        AddData(stream, ev("k2", "put", 2)),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        // get both state values, and make sure we get unexpired value
        AddData(stream, ev("k1", "get", -1)),
        AddData(stream, ev("k2", "get", -1)),
        AdvanceClock("1 second"),
        CheckNewAnswer(got("k1", 1), got("k2", 2)),
        ...internalStep, // get_ttl_value_from_state
        ...internalStep, // get_values_in_ttl_state
        // advance clock after expiry
        AdvanceClock("60 seconds"),
        AddData(stream, ev("k1", "get", -1)),
        AddData(stream, ev("k2", "get", -1)),
        AdvanceClock("1 second"),
        // validate ttlKey is expired, but noTtlKey is still present
        CheckNewAnswer(got("k2", 2))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})

/** Spark's `MultiStatefulVariableTTLProcessor`: a list, a map and a value state kept in step. */
class MultiStatefulVariableTTLProcessor extends StatefulProcessor<string, { value: string }, { key: string; count: number }> {
  readonly outputSchema = Schema.Struct({ key: Schema.String, count: Schema.Int })
  private list!: ListState<string>
  private map!: MapState<number, number>
  private count!: ValueState<number>
  private readonly ttlConfig: TTLConfig
  constructor(ttlConfig: TTLConfig) {
    super()
    this.ttlConfig = ttlConfig
  }
  init(handle: StatefulProcessorHandle): void {
    this.list = handle.getListState("listState", Schema.String, this.ttlConfig)
    this.map = handle.getMapState("mapState", Schema.Int, Schema.Int, this.ttlConfig)
    this.count = handle.getValueState("valueState", Schema.Int, this.ttlConfig)
  }
  private assertSanity(): void {
    const listSize = this.list.get().length
    if (listSize !== this.map.iterator().length || listSize !== (this.count.get() ?? 0)) {
      throw new Error("the list, map and value states are out of step")
    }
  }
  handleInputRows(key: string, rows: ReadonlyArray<{ value: string }>) {
    this.assertSanity()
    return rows.map((row) => {
      this.list.appendValue(row.value)
      const mapSize = this.map.iterator().length
      this.map.updateValue(mapSize + 1, mapSize + 1)
      this.count.update((this.count.get() ?? 0) + 1)
      this.assertSanity()
      return { key, count: this.list.get().length }
    })
  }
}

describe("TransformWithListStateTTLSuite (Spark's cases)", () => {
  // Spark's map state keeps one state row per (grouping key, user key), so a key seen t times
  // holds t map rows and numRowsTotal counts them (7, 8, 9, 10 below); the timers and TTL indexes
  // are internal and not counted.
  it.effect("verify the list state secondary index has at most one record per key", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(Schema.String)
      const result = stream
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new MultiStatefulVariableTTLProcessor(TTLConfig.of("10 minutes")), {
          timeMode: TimeMode.ProcessingTime,
          outputMode: "append"
        })
      const step = (k: string, count: number, total: number) => [
        AddData(stream, k),
        AdvanceClock("1 second"),
        CheckNewAnswer({ key: k, count }),
        AssertOnQuery(
          (q) =>
            Effect.map(
              q.lastProgress(),
              (p) => p?.stateOperators[0]?.numRowsTotal === total && p.stateOperators[0].numRowsUpdated === 3
            ),
          `numRowsTotal == ${total}, numRowsUpdated == 3`
        )
      ]
      yield* testStream(result, "append", [
        StartStream({ trigger }),
        ...step("k1", 1, 3),
        ...step("k2", 1, 6),
        ...step("k1", 2, 7),
        ...step("k2", 2, 8),
        ...step("k1", 3, 9),
        ...step("k2", 3, 10)
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})

const MapInputEvent = Schema.Struct({
  key: Schema.String,
  userKey: Schema.String,
  action: Schema.String,
  value: Schema.Int
})
type MapInputEvent = typeof MapInputEvent.Type
const MapOutputEvent = Schema.Struct({
  key: Schema.String,
  userKey: Schema.String,
  value: Schema.Int,
  isTTLValue: Schema.Boolean,
  ttlValue: Schema.Number
})
type MapOutputEvent = typeof MapOutputEvent.Type
const mapIn = (key: string, userKey: string, action: string, value: number): MapInputEvent => ({
  key,
  userKey,
  action,
  value
})
const mapGot = (key: string, userKey: string, value: number): MapOutputEvent => ({
  key,
  userKey,
  value,
  isTTLValue: false,
  ttlValue: -1
})

/** Spark's `MapStateTTLProcessor` (its public-API actions: get, put, iterator). */
class MapStateTTLProcessorWithUserKeys extends StatefulProcessor<string, MapInputEvent, MapOutputEvent> {
  readonly outputSchema = MapOutputEvent
  private map!: MapState<string, number>
  private readonly ttlConfig: TTLConfig
  constructor(ttlConfig: TTLConfig) {
    super()
    this.ttlConfig = ttlConfig
  }
  init(handle: StatefulProcessorHandle): void {
    this.map = handle.getMapState("mapState", Schema.String, Schema.Int, this.ttlConfig)
  }
  handleInputRows(key: string, rows: ReadonlyArray<MapInputEvent>): Iterable<MapOutputEvent> {
    const out: Array<MapOutputEvent> = []
    for (const row of rows) {
      if (row.action === "get") {
        if (this.map.containsKey(row.userKey)) out.push(mapGot(key, row.userKey, this.map.getValue(row.userKey)!))
      } else if (row.action === "put") this.map.updateValue(row.userKey, row.value)
      else if (row.action === "iterator") for (const [k, v] of this.map.iterator()) out.push(mapGot(key, k, v))
    }
    return out
  }
}

describe("TransformWithMapStateTTLSuite (Spark's cases)", () => {
  const mapQuery = (stream: MemoryStream<MapInputEvent>) =>
    stream
      .toDF()
      .groupByKey((r) => r.key, Schema.String)
      .transformWithState(new MapStateTTLProcessorWithUserKeys(TTLConfig.of("1 minute")), {
        timeMode: TimeMode.ProcessingTime,
        outputMode: "append"
      })
  const lastOpIs = (what: string, check: (op: { numRowsUpdated: number; numRowsRemoved: number }) => boolean) =>
    AssertOnQuery(
      (q) =>
        Effect.map(q.lastProgress(), (p) => {
          const op = p?.stateOperators[0]
          return op !== undefined && check(op)
        }),
      what
    )

  it.effect("validate state is evicted with multiple user keys", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(MapInputEvent)
      yield* testStream(mapQuery(stream), "append", [
        StartStream({ trigger }),
        AddData(stream, mapIn("k1", "key1", "put", 1)),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        AddData(stream, mapIn("k1", "key1", "get", -1)),
        AdvanceClock("30 seconds"),
        CheckNewAnswer(mapGot("k1", "key1", 1)),
        AddData(stream, mapIn("k1", "key2", "put", 2)),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        lastOpIs("numRowsUpdated == 1", (op) => op.numRowsUpdated === 1),
        AddData(stream, mapIn("k1", "key1", "get", -1), mapIn("k1", "key2", "get", -1)),
        // advance clock to expire first key
        AdvanceClock("30 seconds"),
        CheckNewAnswer(mapGot("k1", "key2", 2)),
        lastOpIs("numRowsRemoved == 1", (op) => op.numRowsRemoved === 1),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("verify iterator doesn't return expired keys", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(MapInputEvent)
      yield* testStream(mapQuery(stream), "append", [
        StartStream({ trigger }),
        AddData(stream, mapIn("k1", "key1", "put", 1), mapIn("k1", "key2", "put", 2)),
        AdvanceClock("1 second"), // batch timestamp: 1000
        CheckNewAnswer(),
        AddData(stream, mapIn("k1", "key1", "get", -1), mapIn("k1", "key2", "get", -1)),
        AdvanceClock("30 seconds"), // batch timestamp: 31000
        CheckNewAnswer(mapGot("k1", "key1", 1), mapGot("k1", "key2", 2)),
        ...internalStep, // get_values_in_ttl_state (batch timestamp: 32000)
        // advance clock to expire first two values
        AdvanceClock("30 seconds"), // batch timestamp: 62000
        AddData(
          stream,
          mapIn("k1", "key3", "put", 3),
          mapIn("k1", "key4", "put", 4),
          mapIn("k1", "key5", "put", 5),
          mapIn("k1", "", "iterator", -1)
        ),
        AdvanceClock("1 second"), // batch timestamp: 63000
        CheckNewAnswer(mapGot("k1", "key3", 3), mapGot("k1", "key4", 4), mapGot("k1", "key5", 5)),
        ...internalStep, // get_values_in_ttl_state
        // Spark reads every user key without enforcing the TTL here: key1 and key2 are gone
        AddData(
          stream,
          mapIn("k1", "key1", "get", -1),
          mapIn("k1", "key2", "get", -1),
          mapIn("k1", "key3", "get", -1),
          mapIn("k1", "key4", "get", -1),
          mapIn("k1", "key5", "get", -1)
        ),
        AdvanceClock("1 second"),
        CheckNewAnswer(mapGot("k1", "key3", 3), mapGot("k1", "key4", 4), mapGot("k1", "key5", 5)),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("TransformWithListStateTTLSuite (Spark's cases): expired values", () => {
  const opMetrics = (what: string, check: (op: { numRowsTotal: number; numRowsUpdated: number; numRowsRemoved: number }) => boolean) =>
    AssertOnQuery(
      (q) =>
        Effect.map(q.lastProgress(), (p) => {
          const op = p?.stateOperators[0]
          return op !== undefined && check(op)
        }),
      what
    )

  it.effect("verify iterator works with expired values in beginning of list", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(InputEvent)
      yield* testStream(appendQuery(stream, new SparkListStateTTLProcessor(TTLConfig.of("1 minute"))), "append", [
        StartStream({ trigger }),
        AddData(stream, ev("k1", "put", 1)),
        AdvanceClock("1 second"),
        AddData(stream, ev("k1", "append", 2), ev("k1", "append", 3)),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        // assertNumStateRows(total = 1, updated = 3): one put and two appends so far
        AssertOnQuery(
          (q) =>
            Effect.map(q.recentProgress(), (ps) => {
              const ops = ps.filter((p) => p.stateOperators.length > 0 && p.durationMs.addBatch !== undefined)
              const updated = ops.reduce((n, p) => n + p.stateOperators[0].numRowsUpdated, 0)
              return updated === 3 && ops.at(-1)?.stateOperators[0].numRowsTotal === 1
            }),
          "numRowsTotal == 1, 3 rows updated"
        ),
        ...internalStep, // get_ttl_value_from_state: 61000, 62000, 62000
        // advance clock to add elements with later TTL
        AdvanceClock("45 seconds"), // batch timestamp: 48000
        AddData(stream, ev("k1", "append", 4), ev("k1", "append", 5), ev("k1", "append", 6)),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        opMetrics("numRowsTotal == 1, numRowsUpdated == 3", (op) => op.numRowsTotal === 1 && op.numRowsUpdated === 3),
        ...internalStep, // get_ttl_value_from_state: ..., 109000 x 3
        AddData(stream, ev("k1", "get", -1)),
        // advance clock to expire the first three elements
        AdvanceClock("15 seconds"), // batch timestamp: 65000
        CheckNewAnswer(got("k1", 4), got("k1", 5), got("k1", 6)),
        opMetrics(
          "numRowsTotal == 1, numRowsUpdated == 0, numRowsRemoved == 3",
          (op) => op.numRowsTotal === 1 && op.numRowsUpdated === 0 && op.numRowsRemoved === 3
        ),
        // the expired elements are no longer in state (Spark: get_without_enforcing_ttl)
        AddData(stream, ev("k1", "get", -1)),
        AdvanceClock("1 second"),
        CheckNewAnswer(got("k1", 4), got("k1", 5), got("k1", 6)),
        opMetrics("numRowsTotal == 1, numRowsUpdated == 0", (op) => op.numRowsTotal === 1 && op.numRowsUpdated === 0)
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})

/**
 * Spark's `assertNumStateRows(total, updated)` for processing-time scripts: the last batch's
 * numRowsTotal, and numRowsUpdated summed over the batches since the previous check of the run.
 */
const stateRows = () => {
  let lastRun: string | undefined
  let lastBatch = -1
  return (total: number, updated: number) =>
    AssertOnQuery(
      (q) =>
        Effect.map(q.recentProgress(), (ps) => {
          if (q.runId !== lastRun) lastBatch = -1
          lastRun = q.runId
          const ran = ps.filter((p) => p.stateOperators.length > 0 && p.durationMs.addBatch !== undefined)
          const since = ran.filter((p) => p.batchId > lastBatch)
          const last = ran.at(-1)
          if (last !== undefined) lastBatch = last.batchId
          const sum = since.reduce((n, p) => n + p.stateOperators[0].numRowsUpdated, 0)
          return last?.stateOperators[0].numRowsTotal === total && sum === updated
        }),
      `assertNumStateRows(total = ${total}, updated = ${updated})`
    )
}

describe("TransformWithListStateTTLSuite (Spark's cases): TTL changed across restarts", () => {
  const listQuery = (stream: MemoryStream<InputEvent>, ttlConfig: TTLConfig) =>
    appendQuery(stream, new SparkListStateTTLProcessor(ttlConfig))

  it.effect("verify iterator works with expired values in middle of list", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const stream = yield* MemoryStream.make(InputEvent)
      const start = StartStream({ trigger, checkpointLocation: dir })
      const assertNumStateRows = stateRows()
      // three elements with a TTL of 3 minutes
      yield* testStream(listQuery(stream, TTLConfig.of("3 minutes")), "append", [
        start,
        AddData(stream, ev("k1", "put", 1)),
        AdvanceClock("1 second"),
        AddData(stream, ev("k1", "append", 2)),
        AddData(stream, ev("k1", "append", 3)),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        assertNumStateRows(1, 3),
        ...internalStep, // get_ttl_value_from_state: 181000, 182000, 182000
        AddData(stream, ev("k1", "get", -1)),
        AdvanceClock("1 second"),
        CheckNewAnswer(got("k1", 1), got("k1", 2), got("k1", 3)),
        assertNumStateRows(1, 0),
        StopStream
      ])
      // three elements in the middle with a TTL of 15 seconds (expiring at 20 s)
      yield* testStream(listQuery(stream, TTLConfig.of("15 seconds")), "append", [
        start,
        AddData(stream, ev("k1", "append", 4)),
        AddData(stream, ev("k1", "append", 5)),
        AddData(stream, ev("k1", "append", 6)),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        assertNumStateRows(1, 3),
        ...internalStep, // get_without_enforcing_ttl: 1 to 6
        ...internalStep, // get_ttl_value_from_state
        StopStream
      ])
      // three elements at the end with a TTL of 3 minutes again
      yield* testStream(listQuery(stream, TTLConfig.of("3 minutes")), "append", [
        start,
        AddData(stream, ev("k1", "append", 7)),
        AddData(stream, ev("k1", "append", 8)),
        AddData(stream, ev("k1", "append", 9)),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        assertNumStateRows(1, 3),
        ...internalStep, // get_values_in_ttl_state
        // the middle three elements expire
        AdvanceClock("45 seconds"),
        AddData(stream, ev("k1", "get", -1)),
        AdvanceClock("1 second"),
        CheckNewAnswer(got("k1", 1), got("k1", 2), got("k1", 3), got("k1", 7), got("k1", 8), got("k1", 9)),
        assertNumStateRows(1, 0),
        // Spark: get_without_enforcing_ttl, the expired elements are gone from the state
        AddData(stream, ev("k1", "get", -1)),
        AdvanceClock("1 second"),
        CheckNewAnswer(got("k1", 1), got("k1", 2), got("k1", 3), got("k1", 7), got("k1", 8), got("k1", 9)),
        assertNumStateRows(1, 0),
        StopStream
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("verify min-expiry index doesn't insert when the new minimum is None", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const stream = yield* MemoryStream.make(InputEvent)
      const assertNumStateRows = stateRows()
      yield* testStream(listQuery(stream, TTLConfig.of("1 minute")), "append", [
        StartStream({ trigger, checkpointLocation: dir }),
        // three elements, all with different eviction timestamps
        AddData(stream, ev("k1", "append", 1)),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        assertNumStateRows(1, 1),
        AddData(stream, ev("k1", "append", 2)),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        assertNumStateRows(1, 1),
        AddData(stream, ev("k1", "append", 3)),
        AdvanceClock("1 second"), // time is 3000
        CheckNewAnswer(),
        assertNumStateRows(1, 1),
        // a separate key, expiring at 64000, not affected by k1 expiring
        AddData(stream, ev("k2", "put", 1)),
        AdvanceClock("1 second"), // Spark also reads k1's TTL values here
        CheckNewAnswer(),
        assertNumStateRows(2, 1),
        ...internalStep, // get_values_in_min_state
        assertNumStateRows(2, 0),
        // the k1 records expire at 63000
        AdvanceClock("58 seconds"),
        CheckNewAnswer(),
        assertNumStateRows(1, 0),
        ...internalStep, // Spark reads the TTL indexes of k1 and k2; k2 expires in this batch
        assertNumStateRows(0, 0),
        StopStream
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("verify iterator works with expired values in end of list", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir()
      const stream = yield* MemoryStream.make(InputEvent)
      const start = StartStream({ trigger, checkpointLocation: dir })
      const assertNumStateRows = stateRows()
      // three elements with a TTL of 2 minutes
      yield* testStream(listQuery(stream, TTLConfig.of("2 minutes")), "append", [
        start,
        AddData(stream, ev("k1", "put", 1)),
        AdvanceClock("1 second"),
        AddData(stream, ev("k1", "append", 2)),
        AddData(stream, ev("k1", "append", 3)),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        assertNumStateRows(1, 3),
        ...internalStep, // get_ttl_value_from_state, get_values_in_min_state
        AddData(stream, ev("k1", "get", -1)),
        AdvanceClock("1 second"),
        CheckNewAnswer(got("k1", 1), got("k1", 2), got("k1", 3)),
        assertNumStateRows(1, 0),
        StopStream
      ])
      // three elements at the end with a TTL of 1 minute: they expire before the first three
      yield* testStream(listQuery(stream, TTLConfig.of("1 minute")), "append", [
        start,
        AddData(stream, ev("k1", "append", 4)),
        AddData(stream, ev("k1", "append", 5)),
        AddData(stream, ev("k1", "append", 6)),
        AdvanceClock("1 second"),
        CheckNewAnswer(),
        assertNumStateRows(1, 3),
        ...internalStep, // get_ttl_value_from_state
        ...internalStep, // get_values_in_ttl_state
        // expire the end values
        AdvanceClock("60 seconds"),
        AddData(stream, ev("k1", "get", -1)),
        AdvanceClock("1 second"),
        CheckNewAnswer(got("k1", 1), got("k1", 2), got("k1", 3)),
        assertNumStateRows(1, 0),
        // Spark: get_without_enforcing_ttl
        AddData(stream, ev("k1", "get", -1)),
        AdvanceClock("1 second"),
        CheckNewAnswer(got("k1", 1), got("k1", 2), got("k1", 3)),
        assertNumStateRows(1, 0),
        StopStream
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-53069: stopping and restarting the query maintains correct state total rows", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(Schema.String)
      const assertNumStateRows = stateRows()
      const result = stream
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new MultiStatefulVariableTTLProcessor(TTLConfig.of("10 minutes")), {
          timeMode: TimeMode.ProcessingTime,
          outputMode: "append"
        })
      yield* testStream(result, "append", [
        StartStream({ trigger }),
        AddData(stream, "k1"),
        AdvanceClock("1 second"),
        CheckNewAnswer({ key: "k1", count: 1 }),
        assertNumStateRows(3, 3),
        StopStream,
        StartStream({ trigger }),
        AddData(stream, "k1"),
        AdvanceClock("1 second"),
        CheckNewAnswer({ key: "k1", count: 2 }),
        assertNumStateRows(4, 3),
        StopStream,
        StartStream({ trigger }),
        AddData(stream, "k1"),
        AdvanceClock("1 second"),
        CheckNewAnswer({ key: "k1", count: 3 }),
        assertNumStateRows(5, 3),
        StopStream
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})
