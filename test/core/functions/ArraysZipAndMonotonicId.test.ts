/**
 * `arrays_zip` after `DataFrameFunctionsSuite` ("arrays_zip function", "arrays_zip with field
 * names") and `monotonically_increasing_id` after `ColumnExpressionSuite`
 * ("monotonically_increasing_id"), on the local engine's single partition.
 */
import { Effect, Exit, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { F, MemoryStream, Session } from "../../../mod.ts"

type Spark = Effect.Success<typeof Session>

const run = <A>(f: (spark: Spark) => Effect.Effect<A, unknown, Session>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const spark = yield* Session
      return yield* f(spark)
    }).pipe(Effect.provide(Session.layer())) as Effect.Effect<A, never, never>
  )

const zipped = (ddl: string, row: Record<string, unknown>, cols: ReadonlyArray<string>) =>
  run((spark) =>
    spark
      .createDataFrame([row], ddl)
      .select(F.arrays_zip(...cols).as("z"))
      .collect()
  ).then((rows) => (rows[0] as { z: unknown }).z)

describe("arrays_zip (DataFrameFunctionsSuite)", () => {
  it("arrays_zip function", async () => {
    expect(
      await zipped("val1 array<int>, val2 array<int>", { val1: [9001, 9002, 9003], val2: [4, 5, 6] }, ["val1", "val2"])
    ).toEqual([
      { val1: 9001, val2: 4 },
      { val1: 9002, val2: 5 },
      { val1: 9003, val2: 6 }
    ])
    expect(
      await zipped(
        "val1 array<string>, val2 array<boolean>, val3 array<int>",
        { val1: ["a", "b"], val2: [true, false], val3: [10, 11] },
        ["val1", "val2", "val3"]
      )
    ).toEqual([
      { val1: "a", val2: true, val3: 10 },
      { val1: "b", val2: false, val3: 11 }
    ])
    expect(
      await zipped("val1 array<string>, val2 array<int>", { val1: ["a", "b"], val2: [4, 5, 6] }, ["val1", "val2"])
    ).toEqual([
      { val1: "a", val2: 4 },
      { val1: "b", val2: 5 },
      { val1: null, val2: 6 }
    ])
    expect(
      await zipped("val1 array<string>, val2 array<bigint>", { val1: ["a", "b", null], val2: [4] }, ["val1", "val2"])
    ).toEqual([
      { val1: "a", val2: 4 },
      { val1: "b", val2: null },
      { val1: null, val2: null }
    ])
    expect(
      await zipped(
        "val1 array<int>, val2 array<int>, val3 array<int>, val4 array<int>",
        { val1: [-1], val2: [null], val3: [], val4: [null, null] },
        ["val1", "val2", "val3", "val4"]
      )
    ).toEqual([
      { val1: -1, val2: null, val3: null, val4: null },
      { val1: null, val2: null, val3: null, val4: null }
    ])
  })

  it("arrays_zip with field names: columns and aliases name the fields, other expressions their position", async () => {
    const df = await run((spark) =>
      Effect.succeed(
        spark
          .createDataFrame([{ a: [1], b: ["x"] }], "a array<int>, b array<string>")
          .select(F.arrays_zip("a", F.col("b").as("renamed"), F.array(F.lit(2))))
      )
    )
    expect(df.dtypes).toEqual([["arrays_zip(a, b AS renamed, array(2))", "array<struct<a:int,renamed:string,2:int>>"]])
    expect(await run(() => df.collect())).toEqual([
      { "arrays_zip(a, b AS renamed, array(2))": [{ a: 1, renamed: "x", "2": 2 }] }
    ])
  })

  it("is null when any array is null, empty without arguments, and rejects a non-array", async () => {
    expect(await zipped("a array<int>, b array<int>", { a: [1], b: null }, ["a", "b"])).toBeNull()
    expect(await zipped("a array<int>", { a: [1] }, [])).toEqual([])
    const exit = await run((spark) =>
      Effect.exit(
        spark
          .createDataFrame([{ a: 1 }], "a int")
          .select(F.arrays_zip("a"))
          .collect()
      )
    )
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String(exit)).toContain(
      '[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve "arrays_zip(a)" due to data type mismatch: The first parameter requires the "ARRAY" type'
    )
  })
})

describe("monotonically_increasing_id (ColumnExpressionSuite)", () => {
  it("numbers the rows of the single partition from 0, again at each action", async () => {
    const df = await run((spark) =>
      Effect.succeed(
        spark
          .createDataFrame([{ a: 1 }, { a: 2 }, { a: 1 }, { a: 2 }], "a int")
          .select(F.monotonically_increasing_id(), F.col("a"))
      )
    )
    expect(df.dtypes).toEqual([
      ["monotonically_increasing_id()", "bigint"],
      ["a", "int"]
    ])
    const ids = () => run(() => df.collect()).then((rows) => rows.map((r) => r["monotonically_increasing_id()"]))
    expect(await ids()).toEqual([0, 1, 2, 3])
    expect(await ids()).toEqual([0, 1, 2, 3])
  })

  it("is not folded or merged: two calls give the same ids per row, never one constant", async () => {
    const rows = await run((spark) =>
      spark
        .createDataFrame([{ a: 1 }, { a: 2 }], "a int")
        .select(F.monotonically_increasing_id().as("x"), F.monotonically_increasing_id().as("y"))
        .collect()
    )
    expect(rows).toEqual([
      { x: 0, y: 0 },
      { x: 1, y: 1 }
    ])
  })

  it("is refused in a streaming query (UnsupportedOperationChecker)", async () => {
    const exit = await run(() =>
      Effect.gen(function* () {
        const input = yield* MemoryStream.make(Schema.Int)
        return yield* Effect.exit(
          input.toDF().select(F.monotonically_increasing_id()).writeStream.format("memory").queryName("ids").start()
        )
      })
    )
    expect(String(exit)).toContain("monotonically_increasing_id() is not supported with streaming DataFrames/Datasets")
  })
})
