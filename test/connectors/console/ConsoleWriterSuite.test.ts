/**
 * Spark's `ConsoleWriterSuite` (sql/core/src/test/scala/org/apache/spark/sql/execution/streaming/
 * sources/ConsoleWriterSuite.scala), end to end: what the console sink prints, compared with
 * Spark's captured stdout byte for byte (each `Console.log` line is followed by a newline, as
 * Scala's `println`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { TestConsole } from "effect/testing"
import { F, MemoryStream, Session, Trigger } from "../../../mod.ts"

const captured = Effect.map(TestConsole.logLines, (lines) => lines.map((l) => `${String(l)}\n`).join(""))

const stripMargin = (s: string) =>
  s
    .split("\n")
    .map((l) => l.replace(/^\s*\|/, ""))
    .join("\n")

describe("ConsoleWriterSuite", () => {
  it.effect("console", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))
      const query = yield* input.toDF().writeStream.format("console").start()
      yield* input.addData([1, 2, 3].map((value) => ({ value })))
      yield* query.processAllAvailable()
      yield* input.addData([4, 5, 6].map((value) => ({ value })))
      yield* query.processAllAvailable()
      yield* input.addData([])
      yield* query.processAllAvailable()
      yield* query.stop()
      assert.strictEqual(
        yield* captured,
        stripMargin(`-------------------------------------------
          |Batch: 0
          |-------------------------------------------
          |+-----+
          ||value|
          |+-----+
          ||    1|
          ||    2|
          ||    3|
          |+-----+
          |
          |-------------------------------------------
          |Batch: 1
          |-------------------------------------------
          |+-----+
          ||value|
          |+-----+
          ||    4|
          ||    5|
          ||    6|
          |+-----+
          |
          |-------------------------------------------
          |Batch: 2
          |-------------------------------------------
          |+-----+
          ||value|
          |+-----+
          |+-----+
          |
          |`)
      )
    }).pipe(Effect.provide(Session.layer()), Effect.provide(TestConsole.layer))
  )

  it.effect("console with numRows", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ value: Schema.Int }))
      const query = yield* input.toDF().writeStream.format("console").option("NUMROWS", 2).start()
      yield* input.addData([1, 2, 3].map((value) => ({ value })))
      yield* query.processAllAvailable()
      yield* query.stop()
      assert.strictEqual(
        yield* captured,
        stripMargin(`-------------------------------------------
          |Batch: 0
          |-------------------------------------------
          |+-----+
          ||value|
          |+-----+
          ||    1|
          ||    2|
          |+-----+
          |only showing top 2 rows
          |
          |`)
      )
    }).pipe(Effect.provide(Session.layer()), Effect.provide(TestConsole.layer))
  )

  it.effect("console with truncation", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ value: Schema.String }))
      const query = yield* input.toDF().writeStream.format("console").option("TRUNCATE", true).start()
      yield* input.addData([{ value: "123456789012345678901234567890" }])
      yield* query.processAllAvailable()
      yield* query.stop()
      assert.strictEqual(
        yield* captured,
        stripMargin(`-------------------------------------------
          |Batch: 0
          |-------------------------------------------
          |+--------------------+
          ||               value|
          |+--------------------+
          ||12345678901234567...|
          |+--------------------+
          |
          |`)
      )
    }).pipe(Effect.provide(Session.layer()), Effect.provide(TestConsole.layer))
  )

  // ConsoleWriteSupportSuite's "continuous - default": the console sink runs continuously.
  it.effect("continuous - default", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = spark.readStream
        .format("rate")
        .option("numPartitions", "1")
        .option("rowsPerSecond", "5")
        .load()
        .select(F.col("value"))
      const query = yield* input.writeStream.format("console").trigger(Trigger.Continuous(200)).start()
      assert.isTrue(yield* query.isActive())
      yield* query.stop()
      assert.isFalse(yield* query.isActive())
    }).pipe(Effect.provide(Session.layer()), Effect.provide(TestConsole.layer))
  )
})
