import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import type * as E from "../../../core/Expression.ts"
import { register } from "../../../core/functions/Registry.ts"
import { execute } from "../../../structured/physical/Execute.ts"
import { plan } from "../../../structured/physical/Planner.ts"
import type * as P from "../../../structured/physical/SparkPlan.ts"
import { cachedChain, statelessChain } from "../../../structured/physical/StatelessOperators.ts"
import { compileContinuous } from "../../../structured/execution/ContinuousPipeline.ts"
import { alias, attr, bin, ctx, filter, fn, lit, local, project } from "./fixtures.ts"

const now: E.Expression = { _tag: "CurrentTimestamp" }

// A nondeterministic function whose closure counts its calls since it was compiled.
register({
  name: "test_counter",
  deterministic: false,
  resolve: () => ({ _tag: "Resolved", resultType: T.IntegerType, nullable: false, castArgsTo: [] }),
  compile: () => {
    let n = 0
    return () => n++
  }
})

describe("StatelessOperators", () => {
  it("a project over a filter runs as one step over the filter's input, with the same rows", () => {
    const a = attr("a")
    const b = attr("b")
    const physical = plan(
      project([alias(bin("*", a, lit(10)), "x"), b], filter(bin(">", a, lit(1)), local([a, b], [[1, 1], [2, 2], [3, null]])))
    ) as P.ProjectExec
    const chain = statelessChain(physical, ctx)
    expect(chain.input._tag).toBe("LocalTableScanExec")
    expect(chain.reusable).toBe(true)
    expect(chain.fn([[1, 1], [2, 2], [3, null], [null, 4]])).toEqual([[20, 2], [30, null]])
    expect(chain.fn([])).toEqual([])
  })

  it("a deterministic chain is compiled once per plan node; one reading current_timestamp() every time", async () => {
    const a = attr("a")
    const fixed = plan(project([alias(bin("+", a, lit(1)), "b")], local([a], [[1]]))) as P.ProjectExec
    expect(cachedChain(fixed, ctx)).toBe(cachedChain(fixed, { currentTimestampMs: 99 }))
    const timed = plan(project([alias(now, "t")], local([a], [[1]]))) as P.ProjectExec
    expect(statelessChain(timed, ctx).reusable).toBe(false)
    expect(cachedChain(timed, ctx)).not.toBe(cachedChain(timed, ctx))
    // The same physical plan run for two batches sees each batch's timestamp.
    const first = await Effect.runPromise(execute(timed, { ...ctx, currentTimestampMs: 1000 }))
    const second = await Effect.runPromise(execute(timed, { ...ctx, currentTimestampMs: 2000 }))
    expect(first).toEqual([[1000]])
    expect(second).toEqual([[2000]])
  })

  it("a filter on current_timestamp() under a project is compiled per batch too", async () => {
    const a = attr("a", T.TimestampType)
    const physical = plan(project([a], filter(bin("<", a, now), local([a], [[1500]]))))
    expect(await Effect.runPromise(execute(physical, { ...ctx, currentTimestampMs: 1000 }))).toEqual([])
    expect(await Effect.runPromise(execute(physical, { ...ctx, currentTimestampMs: 2000 }))).toEqual([[1500]])
  })

  it("a nondeterministic function is compiled again for each batch, as before", async () => {
    const a = attr("a")
    const physical = plan(project([alias(fn("test_counter", [], T.IntegerType), "n")], local([a], [[1], [2]])))
    expect(statelessChain(physical as P.ProjectExec, ctx).reusable).toBe(false)
    expect(await Effect.runPromise(execute(physical, ctx))).toEqual([[0], [1]])
    expect(await Effect.runPromise(execute(physical, ctx))).toEqual([[0], [1]])
  })

  it("continuous execution runs the same chain", () => {
    const a = attr("a")
    const physical = plan(project([alias(bin("*", a, lit(2)), "b")], filter(bin(">", a, lit(1)), local([a], []))))
    // The local scan stands for no source: compileContinuous reaches it and finds nothing to read.
    expect(compileContinuous(physical, "memory-0")).toBeUndefined()
    const chain = statelessChain(physical as P.ProjectExec, ctx)
    expect(chain.fn([[1], [2], [3]])).toEqual([[4], [6]])
  })
})
