/** The `noop` sink: accepts every batch in every output mode and keeps nothing. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as T from "../../../core/DataType.ts"
import { lookupSinkFormat, type OutputMode, type SessionTables } from "../../../core/Streaming.ts"
import { NoopSink, registerNoopSink } from "../../../connectors/noop/mod.ts"

describe("noop sink", () => {
  it("registers under `noop` for every output mode", () => {
    registerNoopSink()
    assert.strictEqual(lookupSinkFormat("NOOP"), NoopSink)
    assert.deepStrictEqual(NoopSink.supportedOutputModes, ["append", "update", "complete"])
  })

  it.effect("discards every batch without touching the session tables", () =>
    Effect.gen(function* () {
      let writes = 0
      const tables: SessionTables = {
        write: () => {
          writes++
        },
        seenBatches: () => new Set()
      }
      const schema = T.struct([T.field("value", T.LongType)])
      for (const outputMode of ["append", "update", "complete"] as ReadonlyArray<OutputMode>) {
        const sink = yield* NoopSink.create({
          options: {},
          schema,
          outputMode,
          queryName: "q",
          queryId: "id",
          partitionColumns: [],
          checkpointPath: "/tmp/unused",
          tables
        })
        assert.strictEqual(sink.description, "NoopTable")
        yield* sink.addBatch({ batchId: 0, schema, rows: [[1], [2]], outputMode })
        yield* sink.addBatch({ batchId: 0, schema, rows: [[1], [2]], outputMode })
        yield* sink.stop()
      }
      assert.strictEqual(writes, 0)
    })
  )
})
