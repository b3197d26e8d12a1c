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
import type { StreamingQuery } from "../../../structured/api/StreamingQuery.ts"
import {
  AddData,
  AdvanceClock,
  AssertOnQuery,
  CheckNewAnswer,
  StartStream,
  testStream
} from "../../../structured/testing.ts"

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
        AdvanceClock("65 seconds"),
        CheckNewAnswer(),
        assertTTL(2, 0),
        AssertOnQuery(
          (q) =>
            Effect.map(q.recentProgress(), (ps) => {
              const last = ps.filter((p) => p.durationMs.addBatch !== undefined).at(-1)
              return last !== undefined && last.numInputRows === 0 && last.timestamp === new Date(61_000).toISOString()
            }),
          "the cleanup batch had no data and ran at 61 s"
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
