/**
 * Found by the chaos harness: every store `format("state-metadata")` lists can be read with
 * `format("statestore")`. transformWithState's properties store (`tws-operatorProperties`) keys
 * its one entry by the plain string `properties`, which the generic decoder took for an encoded
 * key and failed on ("Unexpected token 'p', \"properties\" is not valid JSON").
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import {
  MemoryStream,
  Session,
  StatefulProcessor,
  type StatefulProcessorHandle,
  TimeMode,
  TTLConfig,
  type ValueState
} from "../../mod.ts"

const Event = Schema.Struct({ key: Schema.String })
const Out = Schema.Struct({ key: Schema.String, count: Schema.Number })

class Counter extends StatefulProcessor<string, typeof Event.Type, typeof Out.Type> {
  readonly outputSchema = Out
  private count!: ValueState<number>
  init(handle: StatefulProcessorHandle): void {
    this.count = handle.getValueState("count", Schema.Number, TTLConfig.of("1 minute"))
  }
  handleInputRows(key: string, rows: ReadonlyArray<typeof Event.Type>): Iterable<typeof Out.Type> {
    const n = (this.count.get() ?? 0) + rows.length
    this.count.update(n)
    return [{ key, count: n }]
  }
}

for (const provider of ["duckdb", "memory"] as const) {
  describe(`every listed store reads (${provider})`, () => {
    it.effect("transformWithState with a TTL: the properties, the variable and the timers", () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const dir = yield* Effect.promise(() => mkdtemp(join(tmpdir(), "tributary-every-store-")))
        const input = yield* MemoryStream.make(Event)
        const q = yield* input
          .toDF()
          .groupByKey((r) => r.key, Schema.String)
          .transformWithState(new Counter(), { timeMode: TimeMode.ProcessingTime, outputMode: "update" })
          .writeStream.format("noop")
          .outputMode("update")
          .option("checkpointLocation", dir)
          .start()
        yield* input.addData([{ key: "a" }, { key: "b" }, { key: "a" }])
        yield* q.processAllAvailable()
        yield* q.stop()
        const stores = (yield* (yield* spark.read.format("state-metadata").load(dir)).collect()) as ReadonlyArray<any>
        const names = stores.map((s) => s.stateStoreName as string).sort()
        assert.include(names, "tws-operatorProperties")
        assert.include(names, "count")
        const read: Record<string, ReadonlyArray<unknown>> = {}
        for (const s of stores) {
          read[s.stateStoreName] = yield* (yield* spark.read
            .format("statestore")
            .option("operatorId", Number(s.operatorId))
            .option("storeName", s.stateStoreName)
            .load(dir)).collect()
        }
        assert.deepStrictEqual(read["tws-operatorProperties"], [{ key: { key: "properties" }, value: {}, partition_id: 0 }])
        assert.strictEqual(read.count.length, 2)
        yield* Effect.promise(() => rm(dir, { recursive: true, force: true }))
      }).pipe(Effect.provide(Session.layer({ stateStore: provider })))
    )
  })
}
