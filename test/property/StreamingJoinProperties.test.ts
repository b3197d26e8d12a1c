/**
 * Differential property of the stream-stream join (`StreamingSymmetricHashJoinExec`): for two
 * random streams (a small key, a value) split at random into micro-batches — left only, right
 * only or both in a batch — with random stop/start points and no watermark (so no row is late
 * and no state is removed), the rows an inner join emits over all batches equal the batch join
 * of all the rows, as a multiset. Runs alternate between the DuckDB and the file state store,
 * and between a plain key join and one with a condition on one side and on both sides.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fc from "fast-check"
import { type DataFrame, F, MemoryStream, Session } from "../../mod.ts"

const Left = Schema.Struct({ k: Schema.Int, lv: Schema.Int })
const Right = Schema.Struct({ k: Schema.Int, rv: Schema.Int })
type Left = typeof Left.Type
type Right = typeof Right.Type

interface Step {
  readonly left: ReadonlyArray<Left>
  readonly right: ReadonlyArray<Right>
  readonly restartBefore: boolean
}

const step: fc.Arbitrary<Step> = fc.record({
  left: fc.array(fc.record({ k: fc.integer({ min: 0, max: 3 }), lv: fc.integer({ min: -5, max: 5 }) }), {
    maxLength: 4
  }),
  right: fc.array(fc.record({ k: fc.integer({ min: 0, max: 3 }), rv: fc.integer({ min: -5, max: 5 }) }), {
    maxLength: 4
  }),
  restartBefore: fc.boolean()
})

const canonical = (r: unknown): string => {
  const o = r as Record<string, unknown>
  return JSON.stringify(
    Object.keys(o)
      .sort()
      .map((k) => [k, o[k]])
  )
}

const multiset = (rows: ReadonlyArray<unknown>): ReadonlyArray<string> => rows.map(canonical).sort()

/** The joined DataFrame of the two inputs, in one of two shapes. */
const joined = (left: DataFrame<Left>, right: DataFrame<Right>, withCondition: boolean): DataFrame<any> =>
  withCondition
    ? left
        .join(
          right,
          left
            .col("k")
            .eq(right.col("k"))
            .and(F.col("lv").gt(-3))
            .and(F.col("lv").leq(F.col("rv")))
        )
        .select(left.col("k"), F.col("lv"), F.col("rv"))
    : left.join(right, "k")

let runs = 0

describe("stream-stream join equals batch join", () => {
  it(
    "an inner join of two random streams with no late data equals the batch join of everything",
    { timeout: 300_000 },
    () =>
      fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 5 }), fc.boolean(), (steps, withCondition) =>
          Effect.runPromise(
            Effect.acquireUseRelease(
              Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-joinprop-"))),
              (dir) =>
                Effect.gen(function* () {
                  const spark = yield* Session
                  const leftIn = yield* MemoryStream.make(Left)
                  const rightIn = yield* MemoryStream.make(Right)
                  const out: Array<unknown> = []
                  const start = joined(leftIn.toDF(), rightIn.toDF(), withCondition)
                    .writeStream.option("checkpointLocation", dir)
                    .foreachBatch((df) =>
                      Effect.map(df.collect(), (rows) => {
                        out.push(...rows)
                      })
                    )
                    .start()
                  let query = yield* start
                  for (const s of steps) {
                    if (s.restartBefore) {
                      yield* query.stop()
                      query = yield* start
                    }
                    // Left and right rows may land in one batch or in two: any split must do.
                    if (s.left.length > 0) yield* leftIn.addData(s.left)
                    if (s.right.length > 0) yield* rightIn.addData(s.right)
                    yield* query.processAllAvailable()
                  }
                  yield* query.stop()
                  const allLeft = steps.flatMap((s) => s.left)
                  const allRight = steps.flatMap((s) => s.right)
                  const expected = yield* joined(
                    spark.createDataFrame(allLeft, Left),
                    spark.createDataFrame(allRight, Right),
                    withCondition
                  ).collect()
                  const a = multiset(out)
                  const e = multiset(expected)
                  if (a.length !== e.length || a.some((x, i) => x !== e[i])) {
                    return yield* Effect.fail(
                      new Error(`streaming join\n  ${a.join("\n  ")}\nbatch join\n  ${e.join("\n  ")}`)
                    )
                  }
                }),
              (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
            ).pipe(Effect.provide(runs++ % 2 === 0 ? Session.layer() : Session.layer({ stateStore: "memory" })))
          )
        ),
        { numRuns: 25 }
      )
  )
})
