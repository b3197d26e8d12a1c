/**
 * Spark's `TransformWithListStateSuite`: `TestListStateProcessor` driven by `(key, action,
 * value)` rows — put, append, appendAll, emit and clear — and the list state's refusals of null
 * values and empty lists.
 */
import { describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import {
  type ListState,
  MemoryStream,
  type ValueState,
  Session,
  StatefulProcessor,
  type StatefulProcessorHandle,
  TimeMode
} from "../../../mod.ts"
import {
  AddData,
  AssertOnQuery,
  CheckNewAnswer,
  ExpectFailure,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"
import { providers } from "./StreamingTestKit.ts"

const InputRow = Schema.Struct({ key: Schema.String, action: Schema.String, value: Schema.String })
type InputRow = typeof InputRow.Type
const Out = Schema.Struct({ key: Schema.String, value: Schema.String })
type Out = typeof Out.Type

/** Spark's `TestListStateProcessor`. */
class TestListStateProcessor extends StatefulProcessor<string, InputRow, Out> {
  readonly outputSchema = Out
  private list!: ListState<string>
  init(handle: StatefulProcessorHandle): void {
    this.list = handle.getListState("testListState", Schema.String)
  }
  handleInputRows(key: string, rows: ReadonlyArray<InputRow>): Iterable<Out> {
    const out: Array<Out> = []
    for (const row of rows) {
      switch (row.action) {
        case "emit":
          out.push({ key, value: row.value })
          break
        case "emitAllInState":
          for (const v of this.list.get()) out.push({ key, value: v })
          this.list.clear()
          break
        case "append":
          this.list.appendValue(row.value)
          break
        case "appendAll":
          this.list.appendList(row.value.split(","))
          break
        case "put":
          this.list.put(row.value.split(","))
          break
        case "remove":
          this.list.clear()
          break
        case "exists":
          out.push({ key, value: String(this.list.exists()) })
          break
        case "tryAppendingNull":
          this.list.appendValue(null as unknown as string)
          break
        case "tryAppendingNullValueInList":
          this.list.appendList([null as unknown as string])
          break
        case "tryPuttingNullInList":
          this.list.put([null as unknown as string])
          break
        case "tryPutNullList":
          this.list.put(null as unknown as ReadonlyArray<string>)
          break
        case "tryAppendingNullList":
          this.list.appendList(null as unknown as ReadonlyArray<string>)
          break
        case "tryPutEmptyList":
        case "tryPuttingEmptyList":
          this.list.put([])
          break
        case "tryAppendingEmptyList":
          this.list.appendList([])
          break
      }
    }
    return out
  }
}

const input = () => MemoryStream.make(InputRow)
const row = (key: string, action: string, value = ""): InputRow => ({ key, action, value })
const out = (key: string, value: string): Out => ({ key, value })

const listStateQuery = (stream: MemoryStream<InputRow>) =>
  stream
    .toDF()
    .groupByKey((r) => r.key, Schema.String)
    .transformWithState(new TestListStateProcessor(), { timeMode: TimeMode.None, outputMode: "update" })

describe("TransformWithListStateSuite", () => {
  for (const [action, error] of [
    ["tryAppendingNull", "ILLEGAL_STATE_STORE_VALUE.NULL_VALUE"],
    ["tryAppendingNullValueInList", "ILLEGAL_STATE_STORE_VALUE.NULL_VALUE"],
    ["tryPuttingEmptyList", "ILLEGAL_STATE_STORE_VALUE.EMPTY_LIST_VALUE"],
    ["tryAppendingEmptyList", "ILLEGAL_STATE_STORE_VALUE.EMPTY_LIST_VALUE"]
  ] as const) {
    it.effect(`${action} fails with ${error}`, () =>
      Effect.gen(function* () {
        const stream = yield* input()
        yield* testStream(listStateQuery(stream), "update", [
          AddData(stream, row("k1", action)),
          ExpectFailure("StateStoreError", error)
        ])
      }).pipe(Effect.provide(Session.layer()))
    )
  }

  for (const provider of providers) {
    it.effect(`list state correctness (${provider.name})`, () =>
      Effect.gen(function* () {
        const stream = yield* input()
        yield* testStream(listStateQuery(stream), "update", [
          AddData(stream, row("k1", "put", "v1,v2,v3")),
          AddData(stream, row("k1", "emitAllInState")),
          CheckNewAnswer(out("k1", "v1"), out("k1", "v2"), out("k1", "v3")),
          // emitAllInState cleared the list
          AddData(stream, row("k1", "emitAllInState")),
          CheckNewAnswer(),
          // put replaces the list
          AddData(stream, row("k1", "put", "v1,v2,v3")),
          AddData(stream, row("k1", "put", "v4,v5,v6")),
          AddData(stream, row("k1", "emitAllInState")),
          CheckNewAnswer(out("k1", "v4"), out("k1", "v5"), out("k1", "v6")),
          // append adds one value
          AddData(stream, row("k1", "append", "v7")),
          AddData(stream, row("k1", "emitAllInState")),
          CheckNewAnswer(out("k1", "v7")),
          // appendAll adds a list, after what is there; the list survives a restart
          AddData(stream, row("k1", "put", "v1"), row("k1", "appendAll", "v2,v3")),
          CheckNewAnswer(),
          StopStream,
          StartStream(),
          AddData(stream, row("k1", "exists"), row("k2", "exists")),
          CheckNewAnswer(out("k1", "true"), out("k2", "false")),
          AddData(stream, row("k1", "append", "v4"), row("k1", "emitAllInState")),
          CheckNewAnswer(out("k1", "v1"), out("k1", "v2"), out("k1", "v3"), out("k1", "v4")),
          // remove clears the list
          AddData(stream, row("k1", "put", "v1"), row("k1", "remove"), row("k1", "emitAllInState")),
          CheckNewAnswer()
        ])
      }).pipe(Effect.provide(provider.layer()))
    )
  }
})

/** Spark's `ToggleSaveAndEmitProcessor`: saves a key's rows, then emits them with the next ones. */
class ToggleSaveAndEmitProcessor extends StatefulProcessor<string, { value: string }, string> {
  readonly outputSchema = Schema.String
  private list!: ListState<string>
  private flag!: ValueState<boolean>
  init(handle: StatefulProcessorHandle): void {
    this.list = handle.getListState("testListState", Schema.String)
    this.flag = handle.getValueState("testValueState", Schema.Boolean)
  }
  handleInputRows(_key: string, rows: ReadonlyArray<{ value: string }>): Iterable<string> {
    if (this.flag.get() !== true) {
      this.list.appendList(rows.map((r) => r.value))
      this.flag.update(true)
      return []
    }
    this.flag.clear()
    const stored = this.list.get()
    this.list.clear()
    return [...rows.map((r) => r.value), ...stored]
  }
}

describe("TransformWithListStateSuite (Spark's cases)", () => {
  for (const [title, action, error] of [
    ["test appending null value in list state throw exception", "tryAppendingNull", "ILLEGAL_STATE_STORE_VALUE.NULL_VALUE"],
    ["test putting null value in list state throw exception", "tryPuttingNullInList", "ILLEGAL_STATE_STORE_VALUE.NULL_VALUE"],
    ["test putting null list in list state throw exception", "tryPutNullList", "ILLEGAL_STATE_STORE_VALUE.NULL_VALUE"],
    ["test appending null list in list state throw exception", "tryAppendingNullList", "ILLEGAL_STATE_STORE_VALUE.NULL_VALUE"],
    ["test putting empty list in list state throw exception", "tryPutEmptyList", "ILLEGAL_STATE_STORE_VALUE.EMPTY_LIST_VALUE"],
    ["test appending empty list in list state throw exception", "tryAppendingEmptyList", "ILLEGAL_STATE_STORE_VALUE.EMPTY_LIST_VALUE"]
  ] as const) {
    it.effect(title, () =>
      Effect.gen(function* () {
        const stream = yield* input()
        yield* testStream(listStateQuery(stream), "update", [
          AddData(stream, row("k1", action)),
          ExpectFailure("StateStoreError", error)
        ])
      }).pipe(Effect.provide(Session.layer()))
    )
  }

  it.effect("test list state correctness", () =>
    Effect.gen(function* () {
      const stream = yield* input()
      yield* testStream(listStateQuery(stream), "update", [
        // no interaction test
        AddData(stream, row("k1", "emit", "v1")),
        CheckNewAnswer(out("k1", "v1")),
        // check simple append
        AddData(stream, row("k1", "append", "v2")),
        AddData(stream, row("k1", "emitAllInState")),
        CheckNewAnswer(out("k1", "v2")),
        // multiple appends are correctly stored and emitted
        AddData(stream, row("k2", "append", "v1")),
        AddData(stream, row("k1", "append", "v4")),
        AddData(stream, row("k2", "append", "v2")),
        AddData(stream, row("k1", "emit", "v5")),
        AddData(stream, row("k2", "emit", "v3")),
        CheckNewAnswer(out("k1", "v5"), out("k2", "v3")),
        AddData(stream, row("k1", "emitAllInState")),
        AddData(stream, row("k2", "emitAllInState")),
        CheckNewAnswer(out("k2", "v1"), out("k2", "v2"), out("k1", "v4")),
        // check appendAll with append
        AddData(stream, row("k3", "appendAll", "v1,v2,v3")),
        AddData(stream, row("k3", "emit", "v4")),
        AddData(stream, row("k3", "append", "v5")),
        CheckNewAnswer(out("k3", "v4")),
        AddData(stream, row("k3", "emitAllInState")),
        CheckNewAnswer(out("k3", "v1"), out("k3", "v2"), out("k3", "v3"), out("k3", "v5")),
        // check removal cleans up all data in state ("appendList" is no action of the processor)
        AddData(stream, row("k4", "append", "v2")),
        AddData(stream, row("k4", "appendList", "v3,v4")),
        AddData(stream, row("k4", "remove")),
        AddData(stream, row("k4", "emitAllInState")),
        CheckNewAnswer(),
        // check put cleans up previous state and adds new state
        AddData(stream, row("k5", "appendAll", "v1,v2,v3")),
        AddData(stream, row("k5", "append", "v4")),
        AddData(stream, row("k5", "put", "v5,v6")),
        AddData(stream, row("k5", "emitAllInState")),
        CheckNewAnswer(out("k5", "v5"), out("k5", "v6")),
        AssertOnQuery(
          (q) => Effect.map(q.lastProgress(), (p) => (p?.stateOperators[0]?.customMetrics.numListStateVars ?? 0) > 0),
          "numListStateVars > 0"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("test ValueState And ListState in Processor", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(Schema.String)
      const result = stream
        .toDF()
        .groupByKey((r) => r.value, Schema.String)
        .transformWithState(new ToggleSaveAndEmitProcessor(), { timeMode: TimeMode.None, outputMode: "update" })
      yield* testStream(result, "update", [
        AddData(stream, "k1"),
        AddData(stream, "k2"),
        CheckNewAnswer(),
        AddData(stream, "k1"),
        AddData(stream, "k2"),
        CheckNewAnswer({ value: "k1" }, { value: "k1" }, { value: "k2" }, { value: "k2" })
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})
