/**
 * Type tests for `groupByKey` and `KeyValueGroupedDataset`: the key is typed by the key schema,
 * `rows` by the DataFrame's row type (a readonly array), the state by the state schema and the
 * result rows by the output schema; `count`/`agg` rows carry `key`.
 */
import { Schema } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import { F } from "../../../core/mod.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import { type GroupState, GroupStateTimeout } from "../../../structured/contracts/GroupState.ts"

declare const events: DataFrame<{ user: string; ts: Date; n: number }>
declare const initial: DataFrame<{ key: string; state: number }>

type RowOf<D> = D extends DataFrame<infer R> ? R : never

describe("groupByKey", () => {
  it("types key, rows, state and output of flatMapGroupsWithState", () => {
    const df = events.groupByKey((r) => r.user, Schema.String).flatMapGroupsWithState(
      {
        outputMode: "update",
        timeout: GroupStateTimeout.ProcessingTimeTimeout,
        stateSchema: Schema.Number,
        outputSchema: Schema.Struct({ user: Schema.String, n: Schema.Number })
      },
      (user, rows, state) => {
        expectTypeOf(user).toEqualTypeOf<string>()
        expectTypeOf(rows).toEqualTypeOf<ReadonlyArray<{ user: string; ts: Date; n: number }>>()
        expectTypeOf(state).toEqualTypeOf<GroupState<number>>()
        expectTypeOf(state.getOption()).toEqualTypeOf<number | undefined>()
        if (state.hasTimedOut) {
          state.remove()
          return []
        }
        const n = (state.getOption() ?? 0) + rows.length
        state.update(n)
        state.setTimeoutDuration("10 seconds")
        return [{ user, n }]
      }
    )
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ readonly user: string; readonly n: number }>()
  })

  it("types mapGroupsWithState with a struct key and a single-value output", () => {
    const Key = Schema.Struct({ user: Schema.String, day: Schema.Number })
    const df = events
      .groupByKey((r) => ({ user: r.user, day: r.ts.getUTCDate() }), Key)
      .mapGroupsWithState({ stateSchema: Schema.Struct({ count: Schema.Number }), outputSchema: Schema.Number }, (key, rows, state) => {
        expectTypeOf(key).toEqualTypeOf<{ readonly user: string; readonly day: number }>()
        expectTypeOf(state.get()).toEqualTypeOf<{ readonly count: number }>()
        return rows.length
      })
    expectTypeOf<RowOf<typeof df>>().toEqualTypeOf<{ value: number }>()
  })

  it("accepts an initial state DataFrame of key and state", () => {
    events.groupByKey((r) => r.user, Schema.String).mapGroupsWithState(
      { stateSchema: Schema.Number, outputSchema: Schema.String, initialState: initial },
      (user) => user
    )
  })

  it("rejects outputs, states and keys of the wrong type", () => {
    const g = events.groupByKey((r) => r.user, Schema.String)
    g.flatMapGroupsWithState(
      { outputMode: "append", stateSchema: Schema.Number, outputSchema: Schema.Struct({ user: Schema.String }) },
      // @ts-expect-error the output needs `user: string`
      () => [{ user: 1 }]
    )
    g.mapGroupsWithState({ stateSchema: Schema.Number, outputSchema: Schema.String }, (user, _rows, state) => {
      // @ts-expect-error the state is a number
      state.update("x")
      return user
    })
    // @ts-expect-error the key function must return the key schema's type
    events.groupByKey((r) => r.n, Schema.String)
    g.flatMapGroupsWithState(
      // @ts-expect-error flatMapGroupsWithState needs an output mode
      { stateSchema: Schema.Number, outputSchema: Schema.String },
      () => []
    )
  })

  it("types count and agg rows with key", () => {
    const g = events.groupByKey((r) => r.user, Schema.String)
    expectTypeOf<RowOf<ReturnType<typeof g.count>>>().toEqualTypeOf<{ key: string; "count(1)": number }>()
    const agg = g.agg(F.sum("n"), F.count("*").as("rows"))
    expectTypeOf<RowOf<typeof agg>>().toEqualTypeOf<{ key: string; "sum(n)": number; rows: number }>()
    expectTypeOf<RowOf<ReturnType<typeof g.keys>>>().toEqualTypeOf<{ value: string }>()
  })
})
