/**
 * The `console` sink against Spark's ConsoleWriterSuite: the exact text printed per batch
 * (banner, table, blank line), `numRows` and `truncate` (case-insensitive keys), empty batches,
 * complete mode, option errors, and skipping a batch id already printed in this run. Output is
 * captured through Effect's `Console` service.
 */
import { assert, describe, it } from "@effect/vitest"
import { Console, Effect } from "effect"
import * as T from "../../../core/DataType.ts"
import type { Options } from "../../../core/Formats.ts"
import type { InternalRow } from "../../../core/Row.ts"
import { lookupSinkFormat, type OutputMode, type SessionTables, type Sink } from "../../../core/Streaming.ts"
import { ConsoleSink, parseConsoleOptions, registerConsoleSink } from "../../../connectors/console/mod.ts"

const tables: SessionTables = { write: () => {}, seenBatches: () => new Set() }

const create = (schema: T.StructType, options: Options = {}, outputMode: OutputMode = "append") =>
  ConsoleSink.create({
    options,
    schema,
    outputMode,
    queryName: undefined,
    queryId: "q",
    partitionColumns: [],
    checkpointPath: "/tmp/unused",
    tables
  })

/** Runs `self` with a Console that records what `log` prints; returns the text as a terminal shows it. */
const captured = <A, E>(self: Effect.Effect<A, E>) =>
  Effect.suspend(() => {
    const lines: Array<string> = []
    const console: Console.Console = {
      ...globalThis.console,
      log: (...a: ReadonlyArray<unknown>) => lines.push(a.join(" "))
    }
    return self.pipe(
      Effect.map(() => lines.map((l) => `${l}\n`).join("")),
      Effect.provideService(Console.Console, console)
    )
  })

const text = (...lines: ReadonlyArray<string>): string => `${lines.join("\n")}\n`

const ints = T.struct([T.field("value", T.IntegerType, false)])
const strings = T.struct([T.field("value", T.StringType)])

const write = (
  sink: Sink,
  batchId: number,
  schema: T.StructType,
  rows: ReadonlyArray<InternalRow>,
  outputMode: OutputMode = "append"
) => sink.addBatch({ batchId, schema, rows, outputMode })

describe("console sink", () => {
  it("registers under `console` for every output mode", () => {
    registerConsoleSink()
    assert.strictEqual(lookupSinkFormat("Console"), ConsoleSink)
    assert.deepStrictEqual(ConsoleSink.supportedOutputModes, ["append", "update", "complete"])
  })

  it.effect("microbatch - default", () =>
    Effect.gen(function* () {
      const sink = yield* create(ints)
      const out = yield* captured(
        Effect.gen(function* () {
          yield* write(sink, 0, ints, [[1], [1], [1]])
          yield* write(sink, 1, ints, [[2], [2], [2]])
          yield* write(sink, 2, ints, [])
        })
      )
      assert.strictEqual(
        out,
        text(
          "-------------------------------------------",
          "Batch: 0",
          "-------------------------------------------",
          "+-----+",
          "|value|",
          "+-----+",
          "|    1|",
          "|    1|",
          "|    1|",
          "+-----+",
          "",
          "-------------------------------------------",
          "Batch: 1",
          "-------------------------------------------",
          "+-----+",
          "|value|",
          "+-----+",
          "|    2|",
          "|    2|",
          "|    2|",
          "+-----+",
          "",
          "-------------------------------------------",
          "Batch: 2",
          "-------------------------------------------",
          "+-----+",
          "|value|",
          "+-----+",
          "+-----+",
          ""
        )
      )
    })
  )

  it.effect("microbatch - with numRows (option key in any case)", () =>
    Effect.gen(function* () {
      const sink = yield* create(ints, { NUMROWS: "2" })
      const out = yield* captured(write(sink, 0, ints, [[1], [1], [1]]))
      assert.strictEqual(
        out,
        text(
          "-------------------------------------------",
          "Batch: 0",
          "-------------------------------------------",
          "+-----+",
          "|value|",
          "+-----+",
          "|    1|",
          "|    1|",
          "+-----+",
          "only showing top 2 rows",
          ""
        )
      )
    })
  )

  it.effect("microbatch - truncation", () =>
    Effect.gen(function* () {
      const sink = yield* create(strings, { TRUNCATE: "true" })
      const out = yield* captured(write(sink, 0, strings, [["123456789012345678901234567890"]]))
      assert.strictEqual(
        out,
        text(
          "-------------------------------------------",
          "Batch: 0",
          "-------------------------------------------",
          "+--------------------+",
          "|               value|",
          "+--------------------+",
          "|12345678901234567...|",
          "+--------------------+",
          ""
        )
      )
    })
  )

  it.effect("truncate=false prints whole, left-aligned cells", () =>
    Effect.gen(function* () {
      const sink = yield* create(strings, { truncate: "False" })
      const out = yield* captured(write(sink, 3, strings, [["123456789012345678901234567890"], ["a"]]))
      assert.strictEqual(
        out,
        text(
          "-------------------------------------------",
          "Batch: 3",
          "-------------------------------------------",
          "+------------------------------+",
          "|value                         |",
          "+------------------------------+",
          "|123456789012345678901234567890|",
          "|a                             |",
          "+------------------------------+",
          ""
        )
      )
    })
  )

  it.effect("complete mode prints the whole result table of every batch; timestamps print in UTC", () =>
    Effect.gen(function* () {
      const schema = T.struct([T.field("window_start", T.TimestampType), T.field("count", T.LongType, false)])
      const sink = yield* create(schema, {}, "complete")
      const out = yield* captured(
        Effect.gen(function* () {
          yield* write(sink, 0, schema, [[0, 1]], "complete")
          yield* write(
            sink,
            1,
            schema,
            [
              [0, 2],
              [10_000, 1]
            ],
            "complete"
          )
        })
      )
      assert.strictEqual(
        out,
        text(
          "-------------------------------------------",
          "Batch: 0",
          "-------------------------------------------",
          "+-------------------+-----+",
          "|       window_start|count|",
          "+-------------------+-----+",
          "|1970-01-01 00:00:00|    1|",
          "+-------------------+-----+",
          "",
          "-------------------------------------------",
          "Batch: 1",
          "-------------------------------------------",
          "+-------------------+-----+",
          "|       window_start|count|",
          "+-------------------+-----+",
          "|1970-01-01 00:00:00|    2|",
          "|1970-01-01 00:00:10|    1|",
          "+-------------------+-----+",
          ""
        )
      )
    })
  )

  it.effect("a batch id already printed in this run is skipped", () =>
    Effect.gen(function* () {
      const sink = yield* create(ints)
      const out = yield* captured(
        Effect.gen(function* () {
          yield* write(sink, 0, ints, [[1]])
          yield* write(sink, 0, ints, [[1]])
        })
      )
      assert.strictEqual(out.split("Batch: 0").length, 2)
    })
  )

  it.effect("numRows=0 and negative numRows show no rows, as Dataset.show does", () =>
    Effect.gen(function* () {
      const sink = yield* create(ints, { numRows: "-5" })
      const out = yield* captured(write(sink, 0, ints, [[1]]))
      assert.strictEqual(
        out,
        text(
          "-------------------------------------------",
          "Batch: 0",
          "-------------------------------------------",
          "+-----+",
          "|value|",
          "+-----+",
          "+-----+",
          "only showing top 0 rows",
          ""
        )
      )
    })
  )

  it.effect("description is Spark's ConsoleWriter toString", () =>
    Effect.gen(function* () {
      assert.strictEqual((yield* create(ints)).description, "ConsoleWriter[numRows=20, truncate=true]")
      assert.strictEqual(
        (yield* create(ints, { numRows: "5", truncate: "false" })).description,
        "ConsoleWriter[numRows=5, truncate=false]"
      )
    })
  )

  it.effect("invalid options fail create with Spark's messages", () =>
    Effect.gen(function* () {
      const rows = yield* Effect.flip(create(ints, { numRows: "many" }))
      assert.strictEqual(rows._tag, "AnalysisError")
      assert.strictEqual(rows.message, 'For input string: "many"')
      const truncate = yield* Effect.flip(create(ints, { truncate: "yes" }))
      assert.strictEqual(truncate.message, "yes is not a boolean string.")
      assert.deepStrictEqual(parseConsoleOptions({}), { numRows: 20, truncate: true })
    })
  )
})
