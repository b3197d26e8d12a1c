/**
 * Grouping keys: `partKey` (one nested `Map` level per grouping column, as the streaming
 * aggregate groups) puts together exactly what Spark's grouping puts together: NaN with NaN,
 * -0.0 with 0.0, null with null, equal structs and arrays; and a streaming aggregation over
 * several such columns groups like that, batch after batch.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../mod.ts"
import * as T from "../../../core/DataType.ts"
import { partKey } from "../../../structured/physical/HashKeys.ts"
import { planStreaming, StreamDriver } from "./stateful/StreamDriver.ts"

describe("partKey", () => {
  it("primitive values are their own key; Map puts NaN with NaN and -0.0 with 0.0", () => {
    const k = partKey(T.DoubleType)
    const m = new Map<unknown, string>()
    m.set(k(Number.NaN), "nan")
    m.set(k(-0), "zero")
    m.set(k(undefined), "null")
    assert.strictEqual(m.get(k(Number.NaN)), "nan")
    assert.strictEqual(m.get(k(0)), "zero")
    assert.strictEqual(m.get(k(null)), "null")
    assert.strictEqual(m.size, 3)
    assert.strictEqual(partKey(T.StringType)("a"), "a")
    assert.strictEqual(partKey(T.StringType)(undefined), null)
  })

  it("structs and arrays get a string key: equal values equal, null apart from everything", () => {
    const k = partKey(T.struct([T.field("a", T.LongType), T.field("b", T.StringType)]))
    assert.strictEqual(k([1, "x"]), k([1, "x"]))
    assert.notStrictEqual(k([1, "x"]), k([1, "y"]))
    assert.notStrictEqual(k([1, null]), k([1, "null"]))
    assert.notStrictEqual(k(null), k([null, null]))
    const a = partKey(T.array(T.DoubleType))
    assert.strictEqual(a([-0, 1]), a([0, 1]))
    assert.notStrictEqual(a([1]), a([1, 1]))
  })
})

describe("streaming aggregation grouping", () => {
  it.effect("groups by several columns (double with NaN and -0.0, string, null) across batches", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(
        Schema.Struct({ x: Schema.NullOr(Schema.Number), s: Schema.NullOr(Schema.String), n: Schema.Int })
      )
      const df = input
        .toDF()
        .groupBy("x", "s")
        .agg(F.count("*").as("c"), F.sum("n").as("total"))
      const d = new StreamDriver(planStreaming(df), "update")
      assert.deepStrictEqual(
        yield* d.addData([
          [Number.NaN, "a", 1],
          [-0, "a", 2],
          [0, "a", 3],
          [Number.NaN, "a", 4],
          [null, null, 5],
          [null, "a", 6],
          [0, null, 7]
        ]),
        [
          [Number.NaN, "a", 2, 5],
          [0, "a", 2, 5],
          [null, null, 1, 5],
          [null, "a", 1, 6],
          [0, null, 1, 7]
        ]
      )
      // The stored groups are found again by the next batch: -0.0 is 0.0's group, NaN NaN's.
      assert.deepStrictEqual(
        yield* d.addData([
          [-0, "a", 10],
          [Number.NaN, "a", 20],
          [null, null, 30]
        ]),
        [
          [0, "a", 3, 15],
          [Number.NaN, "a", 3, 25],
          [null, null, 2, 35]
        ]
      )
      assert.strictEqual(d.progressOf()?.numRowsTotal, 5)
    }).pipe(Effect.provide(Session.layer()))
  )
})
