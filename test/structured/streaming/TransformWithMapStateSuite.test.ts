/**
 * Spark's `TransformWithMapStateSuite`: `TestMapStateProcessor` driven by `(key, action, user
 * key, value)` rows — updateValue, getValue, containsKey, removeKey, iterator, keys, values,
 * exists, clear — and the refusal of null values.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import {
  type MapState,
  MemoryStream,
  Session,
  StatefulProcessor,
  type StatefulProcessorHandle,
  TimeMode
} from "../../../mod.ts"
import {
  AddData,
  CheckAnswer,
  CheckNewAnswer,
  ExpectFailure,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"
import { providers } from "./StreamingTestKit.ts"

const InputMapRow = Schema.Struct({
  key: Schema.String,
  action: Schema.String,
  userKey: Schema.String,
  value: Schema.String
})
type InputMapRow = typeof InputMapRow.Type
const Out = Schema.Struct({ key: Schema.String, userKey: Schema.String, value: Schema.String })
type Out = typeof Out.Type

/** Spark's `TestMapStateProcessor`. */
class TestMapStateProcessor extends StatefulProcessor<string, InputMapRow, Out> {
  readonly outputSchema = Out
  private map!: MapState<string, string>
  init(handle: StatefulProcessorHandle): void {
    this.map = handle.getMapState("sessionState", Schema.String, Schema.String)
  }
  handleInputRows(key: string, rows: ReadonlyArray<InputMapRow>): Iterable<Out> {
    const out: Array<Out> = []
    for (const row of rows) {
      switch (row.action) {
        case "exists":
          out.push({ key, userKey: "exists", value: String(this.map.exists()) })
          break
        case "updateValue":
          this.map.updateValue(row.userKey, row.value)
          break
        case "getValue":
          out.push({ key, userKey: row.userKey, value: this.map.getValue(row.userKey) ?? "null" })
          break
        case "containsKey":
          out.push({ key, userKey: row.userKey, value: this.map.containsKey(row.userKey) ? "true" : "false" })
          break
        case "removeKey":
          this.map.removeKey(row.userKey)
          break
        case "iterator":
          for (const [k, v] of this.map.iterator()) out.push({ key, userKey: k, value: v })
          break
        case "keys":
          for (const k of this.map.keys()) out.push({ key, userKey: k, value: "" })
          break
        case "values":
          for (const v of this.map.values()) out.push({ key, userKey: "", value: v })
          break
        case "clear":
          this.map.clear()
          break
        case "updateNull":
          this.map.updateValue(row.userKey, null as unknown as string)
          break
      }
    }
    return out
  }
}

const row = (key: string, action: string, userKey = "", value = ""): InputMapRow => ({ key, action, userKey, value })
const out = (key: string, userKey: string, value: string): Out => ({ key, userKey, value })

const mapStateQuery = (stream: MemoryStream<InputMapRow>) =>
  stream
    .toDF()
    .groupByKey((r) => r.key, Schema.String)
    .transformWithState(new TestMapStateProcessor(), { timeMode: TimeMode.None, outputMode: "update" })

describe("TransformWithMapStateSuite", () => {
  for (const provider of providers) {
    it.effect(`map state: update, get, containsKey, remove, iterate (${provider.name})`, () =>
      Effect.gen(function* () {
        const stream = yield* MemoryStream.make(InputMapRow)
        yield* testStream(mapStateQuery(stream), "update", [
          AddData(stream, row("k1", "updateValue", "v1", "10")),
          AddData(stream, row("k1", "exists")),
          CheckNewAnswer(out("k1", "exists", "true")),
          AddData(stream, row("k2", "exists")),
          CheckNewAnswer(out("k2", "exists", "false")),
          AddData(stream, row("k1", "getValue", "v1")),
          CheckNewAnswer(out("k1", "v1", "10")),
          AddData(stream, row("k1", "containsKey", "v1"), row("k1", "containsKey", "v2")),
          CheckNewAnswer(out("k1", "v1", "true"), out("k1", "v2", "false")),
          AddData(stream, row("k1", "updateValue", "v2", "3"), row("k1", "updateValue", "v1", "11")),
          CheckNewAnswer(),
          StopStream,
          StartStream(),
          AddData(stream, row("k1", "iterator")),
          CheckNewAnswer(out("k1", "v1", "11"), out("k1", "v2", "3")),
          AddData(stream, row("k1", "keys"), row("k1", "values")),
          CheckNewAnswer(out("k1", "v1", ""), out("k1", "v2", ""), out("k1", "", "11"), out("k1", "", "3")),
          AddData(stream, row("k1", "removeKey", "v1"), row("k1", "getValue", "v1"), row("k1", "iterator")),
          CheckNewAnswer(out("k1", "v1", "null"), out("k1", "v2", "3")),
          AddData(stream, row("k1", "clear"), row("k1", "exists")),
          CheckNewAnswer(out("k1", "exists", "false"))
        ])
      }).pipe(Effect.provide(provider.layer()))
    )
  }

  it.effect("a null map value fails with ILLEGAL_STATE_STORE_VALUE.NULL_VALUE", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(InputMapRow)
      yield* testStream(mapStateQuery(stream), "update", [
        AddData(stream, row("k1", "updateNull", "v1")),
        ExpectFailure("StateStoreError", "ILLEGAL_STATE_STORE_VALUE.NULL_VALUE")
      ])
    }).pipe(Effect.provide(Session.layer()))
  )
})

/** Spark's `InputMapRow(key, action, value: (String, String))`, the pair as `userKey` and `value`. */
const SparkMapRow = Schema.Struct({
  key: Schema.String,
  action: Schema.String,
  userKey: Schema.NullOr(Schema.String),
  value: Schema.NullOr(Schema.String)
})
type SparkMapRow = typeof SparkMapRow.Type
const SparkOut = Schema.Struct({ key: Schema.String, userKey: Schema.NullOr(Schema.String), value: Schema.NullOr(Schema.String) })
type SparkOut = typeof SparkOut.Type

/** Spark's `TestMapStateProcessor`, as written (getValue of a missing user key outputs null). */
class SparkMapStateProcessor extends StatefulProcessor<string, SparkMapRow, SparkOut> {
  readonly outputSchema = SparkOut
  private map!: MapState<string, string>
  init(handle: StatefulProcessorHandle): void {
    this.map = handle.getMapState("sessionState", Schema.String, Schema.String)
  }
  handleInputRows(key: string, rows: ReadonlyArray<SparkMapRow>): Iterable<SparkOut> {
    const out: Array<SparkOut> = []
    for (const row of rows) {
      const userKey = row.userKey as string
      switch (row.action) {
        case "exists":
          out.push({ key, userKey: "exists", value: String(this.map.exists()) })
          break
        case "getValue":
          out.push({ key, userKey, value: this.map.getValue(userKey) ?? null })
          break
        case "containsKey":
          out.push({ key, userKey, value: this.map.containsKey(userKey) ? "true" : "false" })
          break
        case "updateValue":
          this.map.updateValue(userKey, row.value as string)
          break
        case "iterator":
          for (const [k, v] of this.map.iterator()) out.push({ key, userKey: k, value: v })
          break
        case "keys":
          for (const k of this.map.keys()) out.push({ key: row.key, userKey: k, value: row.value })
          break
        case "values":
          for (const v of this.map.values()) out.push({ key: row.key, userKey: row.userKey, value: v })
          break
        case "removeKey":
          this.map.removeKey(userKey)
          break
        case "clear":
          this.map.clear()
          break
      }
    }
    return out
  }
}

const sparkRow = (key: string, action: string, userKey: string | null, value: string | null): SparkMapRow => ({
  key,
  action,
  userKey,
  value
})
const sparkOut = (key: string, userKey: string | null, value: string | null): SparkOut => ({ key, userKey, value })

const sparkMapQuery = (stream: MemoryStream<SparkMapRow>, outputMode: "update" | "append" = "update") =>
  stream
    .toDF()
    .groupByKey((r) => r.key, Schema.String)
    .transformWithState(new SparkMapStateProcessor(), { timeMode: TimeMode.None, outputMode })

describe("TransformWithMapStateSuite (Spark's cases)", () => {
  it.effect("Test retrieving value with non-existing user key", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(SparkMapRow)
      yield* testStream(sparkMapQuery(stream), "update", [
        AddData(stream, sparkRow("k1", "getValue", "v1", "")),
        CheckAnswer(sparkOut("k1", "v1", null))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  for (const action of ["getValue", "containsKey", "updateValue", "removeKey"]) {
    it.effect(`Test ${action} with null user key`, () =>
      Effect.gen(function* () {
        const stream = yield* MemoryStream.make(SparkMapRow)
        yield* testStream(sparkMapQuery(stream), "update", [
          AddData(stream, sparkRow("k1", action, null, "")),
          ExpectFailure(
            "StateStoreError",
            "[ILLEGAL_STATE_STORE_VALUE.NULL_VALUE] Cannot write null values to State Store for StateName sessionState"
          )
        ])
      }).pipe(Effect.provide(Session.layer()))
    )
  }

  it.effect("Test put value with null value", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(SparkMapRow)
      yield* testStream(sparkMapQuery(stream), "update", [
        AddData(stream, sparkRow("k1", "updateValue", "k1", null)),
        ExpectFailure(
          "StateStoreError",
          "[ILLEGAL_STATE_STORE_VALUE.NULL_VALUE] Cannot write null values to State Store for StateName sessionState"
        )
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("Test map state correctness", () =>
    Effect.gen(function* () {
      const stream = yield* MemoryStream.make(SparkMapRow)
      yield* testStream(sparkMapQuery(stream, "append"), "append", [
        // Test exists()
        AddData(stream, sparkRow("k1", "updateValue", "v1", "10")),
        AddData(stream, sparkRow("k1", "exists", "", "")),
        AddData(stream, sparkRow("k2", "exists", "", "")),
        CheckNewAnswer(sparkOut("k1", "exists", "true"), sparkOut("k2", "exists", "false")),
        // Test get and put with composite key
        AddData(stream, sparkRow("k1", "updateValue", "v2", "5")),
        AddData(stream, sparkRow("k2", "updateValue", "v2", "3")),
        AddData(stream, sparkRow("k2", "updateValue", "v2", "12")),
        AddData(stream, sparkRow("k2", "updateValue", "v4", "1")),
        // Different grouping key, same user key
        AddData(stream, sparkRow("k1", "getValue", "v2", "")),
        CheckNewAnswer(sparkOut("k1", "v2", "5")),
        // Same grouping key, same user key, update value should reflect
        AddData(stream, sparkRow("k2", "getValue", "v2", "")),
        CheckNewAnswer(sparkOut("k2", "v2", "12")),
        // Test get full map for a given grouping key - prefixScan
        AddData(stream, sparkRow("k2", "iterator", "", "")),
        CheckNewAnswer(sparkOut("k2", "v2", "12"), sparkOut("k2", "v4", "1")),
        AddData(stream, sparkRow("k2", "keys", "", "")),
        CheckNewAnswer(sparkOut("k2", "v2", ""), sparkOut("k2", "v4", "")),
        AddData(stream, sparkRow("k2", "values", "", "")),
        CheckNewAnswer(sparkOut("k2", "", "12"), sparkOut("k2", "", "1")),
        // Test remove functionalities
        AddData(stream, sparkRow("k1", "removeKey", "v2", "")),
        AddData(stream, sparkRow("k1", "containsKey", "v2", "")),
        CheckNewAnswer(sparkOut("k1", "v2", "false")),
        AddData(stream, sparkRow("k2", "clear", "", "")),
        AddData(stream, sparkRow("k2", "iterator", "", "")),
        CheckNewAnswer(),
        AddData(stream, sparkRow("k2", "exists", "", "")),
        CheckNewAnswer(sparkOut("k2", "exists", "false"))
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("transformWithMapState - batch should succeed", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const result = spark
        .createDataFrame([sparkRow("k1", "updateValue", "v1", "10"), sparkRow("k1", "getValue", "v1", "")], SparkMapRow)
        .groupByKey((r) => r.key, Schema.String)
        .transformWithState(new SparkMapStateProcessor(), { timeMode: TimeMode.None, outputMode: "append" })
      assert.deepStrictEqual(yield* result.collect(), [sparkOut("k1", "v1", "10")])
    }).pipe(Effect.provide(Session.layer()))
  )
})
