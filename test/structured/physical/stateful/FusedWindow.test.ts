/**
 * Time windows assigned inside the streaming aggregate (`FusedWindow.ts`): which plans fuse, and
 * that a fused plan gives exactly what the planned `Generate` gives, batch by batch (the same
 * rows in the same order, the same state and metrics), for tumbling and sliding windows,
 * `startTime`, times before the epoch, null times, date columns, watermarks and the window at
 * any grouping position.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { F, MemoryStream, Session } from "../../../../mod.ts"
import type { InternalRow } from "../../../../core/Row.ts"
import type { OutputMode } from "../../../../core/Streaming.ts"
import type { DataFrame } from "../../../../structured/api/DataFrame.ts"
import type * as P from "../../../../structured/physical/SparkPlan.ts"
import { fusedWindow } from "../../../../structured/physical/stateful/FusedWindow.ts"
import { planStreaming, StreamDriver, sorted } from "./StreamDriver.ts"

const Click = Schema.Struct({ user: Schema.String, amount: Schema.Int, ts: Schema.NullOr(Schema.Date) })

const statefulAggregate = (p: P.SparkPlan): P.StatefulAggregateExec => {
  if (p._tag === "StatefulAggregateExec") return p
  const child = (p as { readonly child?: P.SparkPlan }).child
  if (child === undefined) throw new Error(`no StatefulAggregateExec under ${p._tag}`)
  return statefulAggregate(child)
}

/**
 * The same plan with the aggregate's input behind a `Project` that renames nothing but is not a
 * plain column list (`a AS a`, same id), so the aggregate reads the materialised windows.
 */
const unfused = (p: P.SparkPlan): P.SparkPlan => {
  if (p._tag === "StatefulAggregateExec") {
    const child = p.child
    const project: P.SparkPlan = {
      _tag: "ProjectExec",
      output: child.output,
      projectList: child.output.map((a) => ({ _tag: "Alias", name: a.name, exprId: a.exprId, child: a })),
      child
    }
    return { ...p, child: project }
  }
  const child = (p as { readonly child?: P.SparkPlan }).child
  if (child === undefined) throw new Error(`no StatefulAggregateExec under ${p._tag}`)
  return { ...p, child: unfused(child) } as P.SparkPlan
}

/** Runs `batches` through the fused and the unfused plan of `df` and checks they agree exactly. */
const sameAsGenerate = (
  df: Pick<DataFrame, "analyzed">,
  mode: OutputMode,
  batches: ReadonlyArray<ReadonlyArray<InternalRow>>
) =>
  Effect.gen(function* () {
    const plan = planStreaming(df)
    assert.isDefined(fusedWindow(statefulAggregate(plan)), "the plan fuses its window")
    const other = unfused(plan)
    assert.isUndefined(fusedWindow(statefulAggregate(other)), "the comparison plan does not")
    const fused = new StreamDriver(plan, mode)
    const generated = new StreamDriver(other, mode)
    const outputs: Array<ReadonlyArray<InternalRow>> = []
    for (const rows of batches) {
      const a = yield* fused.addData(rows)
      const b = yield* generated.addData(rows)
      assert.deepStrictEqual(a, b)
      outputs.push(a)
    }
    const progress = (d: StreamDriver) =>
      d.batches.map((b) => {
        const p = b.progress.get(0)
        return [p?.numRowsTotal, p?.numRowsUpdated, p?.numRowsRemoved, p?.numRowsDroppedByWatermark]
      })
    assert.deepStrictEqual(progress(fused), progress(generated))
    return outputs
  })

const s = (x: number) => x * 1000

describe("FusedWindow", () => {
  it.effect("groupBy(window, user) fuses; a window read through a computed column does not", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Click)
      const plan = statefulAggregate(
        planStreaming(
          input
            .toDF()
            .groupBy(F.window("ts", "10 seconds"), "user")
            .agg(F.count("*").as("n"), F.sum("amount").as("total"))
        )
      )
      const fused = fusedWindow(plan)
      assert.isDefined(fused)
      assert.strictEqual(fused?.groupingIndex, 0)
      assert.strictEqual(fused?.window.windowMs, 10_000)
      assert.deepStrictEqual(
        fused?.source.output.map((a) => a.name),
        ["user", "amount", "ts"]
      )
      // The aggregate reads a column computed from the window: the windows are materialised.
      const computed = statefulAggregate(
        planStreaming(
          input
            .toDF()
            .select(F.window("ts", "10 seconds").getField("start").as("start"), F.col("user"))
            .groupBy("start", "user")
            .count()
        )
      )
      assert.isUndefined(fusedWindow(computed))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("tumbling windows with null times: the same rows, in the same order, as the Generate", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Click)
      const df = input
        .toDF()
        .groupBy(F.window("ts", "10 seconds"), "user")
        .agg(F.count("*").as("n"), F.sum("amount").as("total"), F.avg("amount").as("mean"))
      const out = yield* sameAsGenerate(df, "update", [
        [
          ["a", 1, s(1)],
          ["b", 2, s(12)],
          ["a", 3, null],
          ["a", 4, s(9)],
          [null, 5, s(3)]
        ],
        [
          ["a", 10, s(5)],
          ["c", 7, -s(1)],
          ["b", 1, null]
        ]
      ])
      assert.deepStrictEqual(out, [
        [
          [[0, s(10)], "a", 2, 5, 2.5],
          [[s(10), s(20)], "b", 1, 2, 2],
          [[0, s(10)], null, 1, 5, 5]
        ],
        [
          [[0, s(10)], "a", 3, 15, 5],
          [[-s(10), 0], "c", 1, 7, 7]
        ]
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("sliding windows (a multiple and not a multiple of the slide), startTime, times before 1970", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Click)
      const batches: ReadonlyArray<ReadonlyArray<InternalRow>> = [
        [
          ["a", 1, s(1)],
          ["b", 2, s(12)],
          ["a", 3, -s(7)],
          ["a", 4, 12_345]
        ],
        [
          ["b", 5, s(13)],
          ["a", 6, null],
          ["c", 7, -1]
        ]
      ]
      for (const [size, slide, start] of [
        ["10 seconds", "5 seconds", undefined],
        ["10 seconds", "3 seconds", undefined],
        ["10 seconds", "4 seconds", "1 second"],
        ["7 seconds", "7 seconds", "-2 seconds"]
      ] as const) {
        const df = input
          .toDF()
          .groupBy(F.window("ts", size, slide, start), "user")
          .agg(F.count("*").as("n"), F.collect_list("amount").as("amounts"))
        yield* sameAsGenerate(df, "update", batches)
      }
      // 10 s windows sliding by 3 s: [ts - 9 s, ts] holds 4 starts, the last one only if it
      // reaches ts (Spark's filter of the non-containing window).
      const df = input
        .toDF()
        .groupBy(F.window("ts", "10 seconds", "3 seconds"), "user")
        .agg(F.count("*").as("n"))
      const [first] = yield* sameAsGenerate(df, "update", [[["a", 1, s(1)]]])
      assert.deepStrictEqual(first, [
        [[0, s(10)], "a", 1],
        [[-s(3), s(7)], "a", 1],
        [[-s(6), s(4)], "a", 1]
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("the window as the last grouping column, over a date column", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ user: Schema.String, day: Schema.NullOr(Schema.Date) }))
      const df = input
        .toDF()
        .select(F.col("user"), F.col("day").cast("date").as("day"))
        .groupBy("user", F.window("day", "2 days"))
        .count()
      const day = 86_400_000
      const out = yield* sameAsGenerate(df, "update", [
        [
          ["a", 0],
          ["a", day],
          ["b", 3 * day],
          ["a", null],
          ["a", -day]
        ]
      ])
      assert.deepStrictEqual(out, [
        [
          ["a", [0, 2 * day], 2],
          ["b", [2 * day, 4 * day], 1],
          ["a", [-2 * day, 0], 1]
        ]
      ])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("append mode with a watermark: late rows dropped and windows emitted as with the Generate", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Click)
      const df = input
        .toDF()
        .withWatermark("ts", "5 seconds")
        .groupBy("user", F.window("ts", "10 seconds", "5 seconds"))
        .agg(F.count("*").as("n"), F.max("amount").as("top"))
      const out = yield* sameAsGenerate(df, "append", [
        [
          ["a", 1, s(1)],
          ["b", 2, s(6)]
        ],
        // The watermark moves to 25 s: the four windows of the first batch close.
        [["a", 3, s(30)]],
        // Both windows of a@2s end at or below 25 s: dropped as late.
        [
          ["a", 4, s(2)],
          ["b", 5, s(29)]
        ],
        [["c", 6, s(60)]]
      ])
      assert.deepStrictEqual(
        out.map(sorted),
        [
          [],
          [
            ["a", [-s(5), s(5)], 1, 1],
            ["a", [0, s(10)], 1, 1],
            ["b", [0, s(10)], 1, 2],
            ["b", [s(5), s(15)], 1, 2]
          ],
          [],
          [
            ["a", [s(25), s(35)], 1, 3],
            ["a", [s(30), s(40)], 1, 3],
            ["b", [s(20), s(30)], 1, 5],
            ["b", [s(25), s(35)], 1, 5]
          ]
        ].map(sorted)
      )
    }).pipe(Effect.provide(Session.layer()))
  )
})
