/**
 * Continuous processing (`Trigger.Continuous`) against Spark's ContinuousSuite, ContinuousMetaSuite
 * and ContinuousEpochBacklogSuite: memory and rate sources into memory and foreach sinks, epoch
 * commits in the offset and commit logs, restarts from the last committed epoch (at-least-once),
 * the checker's messages, task failures, progress per epoch, and a prompt stop. Time is Effect's
 * test clock: epochs end on its grid, the rate source's rows fall due on it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Exit, Fiber, Schema } from "effect"
import { TestClock, TestConsole } from "effect/testing"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { F, MemoryStream, Session, Trigger } from "../../../mod.ts"
import type { DataFrame } from "../../../structured/api/DataFrame.ts"
import type { ContinuousExecution } from "../../../structured/execution/ContinuousExecution.ts"
import type { StreamingQuery } from "../../../structured/contracts/StreamingQuery.ts"
import type { StreamingQueryProgress } from "../../../structured/contracts/StreamingQueryProgress.ts"

const Value = Schema.Struct({ value: Schema.Int })

const tempDir = Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "tributary-continuous-")))

const readFile = (file: string) => Effect.promise(() => fs.readFile(file, "utf8"))

const listDir = (dir: string) =>
  Effect.promise(() =>
    fs.readdir(dir).then((names) =>
      names
        .filter((n) => /^\d+$/.test(n))
        .map(Number)
        .sort((a, b) => a - b)
    )
  )

const values = (rows: ReadonlyArray<Record<string, unknown>>): Array<number> =>
  rows.map((r) => r.value as number).sort((a, b) => a - b)

const continuousOf = (q: StreamingQuery): ContinuousExecution => q as unknown as ContinuousExecution

describe("ContinuousExecution: memory source to memory sink", () => {
  it.effect("basic: rows reach the sink, and a restart continues without duplicates (ContinuousSuite 'basic')", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir
      const input = yield* MemoryStream.make(Value)
      const start = input
        .toDF()
        .writeStream.format("memory")
        .queryName("basic")
        .trigger(Trigger.Continuous("1 hour"))
        .option("checkpointLocation", dir)
        .start()
      const q1 = yield* start
      yield* input.addData([{ value: 0 }, { value: 1 }, { value: 2 }])
      yield* q1.processAllAvailable()
      assert.deepStrictEqual(values(yield* spark.table("basic").collect()), [0, 1, 2])
      yield* q1.stop()
      yield* input.addData([{ value: 3 }, { value: 4 }, { value: 5 }])
      const q2 = yield* start
      assert.strictEqual(q2.id, q1.id)
      yield* q2.processAllAvailable()
      assert.deepStrictEqual(values(yield* spark.table("basic").collect()), [0, 1, 2, 3, 4, 5])
      yield* q2.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("map, flatMap, filter, withColumn, explode and a union of two streams", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const a = yield* MemoryStream.make(Value)
      const b = yield* MemoryStream.make(Value)
      const mapped = a.toDF().map((r) => ({ value: r.value * 2 }), Value)
      const flat = b.toDF().flatMap((r) => [{ value: 0 }, { value: r.value }, { value: r.value * 2 }], Value)
      const df = mapped
        .union(flat)
        .where(F.col("value").gt(1))
        .withColumn("arr", F.array(F.col("value"), F.col("value").plus(100)))
        .select(F.explode(F.col("arr")).as("value"))
      const q = yield* df.writeStream.format("memory").queryName("mapped").trigger(Trigger.Continuous("1 hour")).start()
      yield* a.addData([{ value: 0 }, { value: 1 }, { value: 2 }])
      yield* b.addData([{ value: 3 }])
      yield* q.processAllAvailable()
      // a: 0, 2, 4 (> 1: 2, 4); b: 0, 3, 6 (> 1: 3, 6); each v also as v + 100
      assert.deepStrictEqual(values(yield* spark.table("mapped").collect()), [2, 3, 4, 6, 102, 103, 104, 106])
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a typed filter, a tumbling window column, renames and drops run continuously", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.readStream
        .format("rate")
        .option("rowsPerSecond", 2)
        .load()
        .filter((r) => (r.value as number) % 2 === 1)
        .withColumn("w", F.window("timestamp", "1 second"))
        .withColumnRenamed("value", "v")
        .select(F.col("v"), F.col("w.start").as("start"))
      const q = yield* df.writeStream
        .format("memory")
        .queryName("windows")
        .trigger(Trigger.Continuous("1 hour"))
        .start()
      yield* continuousOf(q).awaitEpoch(0)
      yield* TestClock.adjust("2 seconds")
      yield* q.processAllAvailable()
      const rows = (yield* spark.table("windows").collect()) as ReadonlyArray<{ v: number; start: Date }>
      // one partition, a row every 500 ms: values 0..3 at 500, 1000, 1500, 2000 ms; odd ones kept
      assert.deepStrictEqual(
        rows.map((r) => [r.v, r.start.getTime()]).sort((a, b) => a[0] - b[0]),
        [
          [1, 1000],
          [3, 2000]
        ]
      )
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("epochs commit to offsets/<epoch> and commits/<epoch>; a restart resumes after the last commit", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const input = yield* MemoryStream.make(Value)
      const start = input
        .toDF()
        .writeStream.format("memory")
        .queryName("epochs")
        .trigger(Trigger.Continuous("10 seconds"))
        .option("checkpointLocation", dir)
        .start()
      const q1 = yield* start
      yield* input.addData([{ value: 1 }, { value: 2 }, { value: 3 }])
      yield* q1.processAllAvailable()
      const c1 = yield* continuousOf(q1).lastCommittedEpoch()
      // The query keeps running: list the commits first, so every one listed has its offsets.
      const commits = yield* listDir(path.join(dir, "commits"))
      const offsets = yield* listDir(path.join(dir, "offsets"))
      for (const c of commits) assert.include(offsets, c)
      assert.include(commits, c1)
      const entry = (yield* readFile(path.join(dir, "offsets", String(c1)))).split("\n")
      assert.strictEqual(entry[0], "v1")
      // ContinuousMemoryStream deals rows to 2 partitions: 1, 3 to partition 0 and 2 to partition 1
      assert.strictEqual(entry[2], '{"0":2,"1":1}')
      assert.deepStrictEqual((yield* readFile(path.join(dir, "commits", String(c1)))).split("\n"), [
        "v1",
        '{"nextBatchWatermarkMs":0}'
      ])
      // epochs end on the clock's grid: 10 s later another epoch has committed
      yield* TestClock.adjust("10 seconds")
      yield* continuousOf(q1).awaitEpoch(c1 + 1)
      const c2 = yield* continuousOf(q1).lastCommittedEpoch()
      yield* q1.stop()
      const q2 = yield* start
      yield* input.addData([{ value: 4 }])
      yield* q2.processAllAvailable()
      const p = yield* q2.lastProgress()
      assert.isTrue(p !== null && p.batchId > c2, "epoch ids continue after the last committed one")
      // each addData deals from partition 0 again (Spark's zipWithIndex per call)
      assert.deepStrictEqual(p?.sources[0].endOffset, { "0": 3, "1": 1 })
      yield* q2.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-24351: only the last minBatchesToRetain epochs stay in the logs (ContinuousMetaSuite)", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const input = yield* MemoryStream.make(Value)
      const q = yield* input
        .toDF()
        .writeStream.format("memory")
        .queryName("retain")
        .trigger(Trigger.Continuous("100 millis"))
        .option("checkpointLocation", dir)
        .start()
      yield* input.addData([{ value: 1 }])
      yield* q.processAllAvailable()
      yield* TestClock.adjust("1 second")
      yield* continuousOf(q).awaitEpoch(5)
      yield* q.stop()
      const commits = yield* listDir(path.join(dir, "commits"))
      const latest = commits[commits.length - 1]
      assert.isAtLeast(latest, 5)
      assert.deepStrictEqual(commits, [latest - 1, latest])
      assert.deepStrictEqual(yield* listDir(path.join(dir, "offsets")), [latest - 1, latest])
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.minBatchesToRetain": "2" } })))
  )
})

describe("ContinuousExecution: the checker", () => {
  const startError = <R>(df: DataFrame<R>) =>
    Effect.flip(df.writeStream.trigger(Trigger.Continuous("1 second")).format("memory").queryName("x").start()).pipe(
      Effect.map((e) => e.message)
    )

  it.effect("stateful and global operators and current time fail start() with Spark's messages", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const df = input.toDF()
      const q = (d: typeof df) =>
        Effect.flip(d.writeStream.trigger(Trigger.Continuous("1 second")).format("memory").queryName("x").start()).pipe(
          Effect.map((e) => e.message)
        )
      assert.strictEqual(
        yield* q(df.dropDuplicates()),
        "Continuous processing does not support Deduplicate operations."
      )
      assert.strictEqual(
        yield* Effect.flip(
          df
            .groupBy("value")
            .count()
            .writeStream.outputMode("update")
            .trigger(Trigger.Continuous("1 second"))
            .format("memory")
            .queryName("x")
            .start()
        ).pipe(Effect.map((e) => e.message)),
        "Continuous processing does not support Aggregate operations."
      )
      assert.strictEqual(
        yield* Effect.flip(
          df
            .select(F.current_timestamp())
            .writeStream.trigger(Trigger.Continuous("1 second"))
            .format("memory")
            .queryName("x")
            .start()
        ).pipe(Effect.map((e) => e.message)),
        "Continuous processing does not support current time operations."
      )
      assert.strictEqual(
        yield* Effect.flip(
          df.limit(1).writeStream.trigger(Trigger.Continuous("1 second")).format("memory").queryName("x").start()
        ).pipe(Effect.map((e) => e.message)),
        "Continuous processing does not support LocalLimit operations."
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("sources and sinks without continuous support", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir
      const microBatchOnly = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 1).load()
      assert.strictEqual(
        yield* startError(microBatchOnly),
        "Data source rate-micro-batch does not support continuous processing."
      )
      const files = spark.readStream.format("json").schema(Value).load(dir)
      assert.strictEqual(
        yield* startError(files),
        "Continuous processing does not support StreamingRelation operations."
      )
      const input = yield* MemoryStream.make(Value)
      assert.strictEqual(
        yield* Effect.flip(
          input
            .toDF()
            .writeStream.trigger(Trigger.Continuous("1 second"))
            .foreachBatch(() => undefined)
            .start()
        ).pipe(Effect.map((e) => e.message)),
        "'foreachBatch' is not supported with continuous trigger"
      )
      assert.strictEqual(
        yield* Effect.flip(
          input
            .toDF()
            .writeStream.trigger(Trigger.Continuous("1 second"))
            .format("json")
            .option("checkpointLocation", path.join(dir, "chk"))
            .start(path.join(dir, "out"))
        ).pipe(Effect.map((e) => e.message)),
        "Unknown type of trigger: ContinuousTrigger(1000)"
      )
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("ContinuousExecution: the rate source", () => {
  it.effect("partition p emits p, p + N, … at rowsPerSecond / N rows per second, stamped when due", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir
      const df = spark.readStream.format("rate").option("rowsPerSecond", 10).option("numPartitions", 2).load()
      const start = df.writeStream
        .format("memory")
        .queryName("rate")
        .trigger(Trigger.Continuous("1 hour"))
        .option("checkpointLocation", dir)
        .start()
      const q1 = yield* start
      yield* continuousOf(q1).awaitEpoch(0)
      yield* TestClock.adjust("1 second")
      yield* q1.processAllAvailable()
      const rows = (yield* spark.table("rate").collect()) as ReadonlyArray<{ timestamp: Date; value: number }>
      const sorted = [...rows].sort((x, y) => x.value - y.value)
      // 5 rows per second per partition, one every 200 ms: value v is row floor(v / 2) + 1 of its partition
      assert.deepStrictEqual(
        sorted.map((r) => [r.value, r.timestamp.getTime()]),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((v) => [v, (Math.floor(v / 2) + 1) * 200])
      )
      const last = yield* q1.lastProgress()
      assert.deepStrictEqual(last?.sources[0].endOffset, {
        "0": { value: 8, runTimeMs: 1000 },
        "1": { value: 9, runTimeMs: 1000 }
      })
      yield* q1.stop()
      // a restart continues each partition where its last committed epoch ended
      const q2 = yield* start
      yield* TestClock.adjust("400 millis")
      yield* q2.processAllAvailable()
      const after = (yield* spark.table("rate").collect()) as ReadonlyArray<{ timestamp: Date; value: number }>
      assert.deepStrictEqual(
        after.map((r) => r.value).sort((x, y) => x - y),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
      )
      yield* q2.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("numPartitions cannot change across restarts", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir
      const run = (n: number) =>
        spark.readStream
          .format("rate")
          .option("numPartitions", n)
          .load()
          .writeStream.format("noop")
          .trigger(Trigger.Continuous("1 hour"))
          .option("checkpointLocation", dir)
          .start()
      const q1 = yield* run(2)
      yield* q1.processAllAvailable()
      yield* q1.stop()
      const q2 = yield* run(3)
      const exit = yield* Effect.exit(q2.awaitTermination())
      assert.isTrue(Exit.isFailure(exit))
      const error = yield* q2.exception()
      assert.include(
        error?.message ?? "",
        "The previous run contained 2 partitions, but 3 partitions are currently configured. The numPartitions option cannot be changed."
      )
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("ContinuousExecution: foreach, failures and stop", () => {
  it.effect(
    "foreach sees every row as soon as it is read; an uncommitted epoch is replayed after a restart (at-least-once)",
    () =>
      Effect.gen(function* () {
        const dir = yield* tempDir
        const input = yield* MemoryStream.make(Value)
        const seen: Array<number> = []
        const opened: Array<string> = []
        let arrived = Deferred.makeUnsafe<void>()
        const start = input
          .toDF()
          .writeStream.foreach({
            open: (partition, epoch) => {
              opened.push(`${partition}@${epoch}`)
              return true
            },
            process: (row) => {
              seen.push(row.value)
              Deferred.doneUnsafe(arrived, Effect.void)
            }
          })
          .trigger(Trigger.Continuous("1 hour"))
          .option("checkpointLocation", dir)
          .start()
        const q1 = yield* start
        yield* continuousOf(q1).awaitEpoch(0)
        yield* input.addData([{ value: 7 }])
        // no epoch ends (the interval is an hour): the row is written within the running epoch
        yield* Deferred.await(arrived)
        assert.deepStrictEqual(seen, [7])
        assert.strictEqual(yield* continuousOf(q1).lastCommittedEpoch(), 0)
        yield* q1.stop()
        arrived = Deferred.makeUnsafe<void>()
        const q2 = yield* start
        yield* Deferred.await(arrived)
        yield* q2.processAllAvailable()
        assert.deepStrictEqual(seen, [7, 7], "the epoch was not committed: its row comes again")
        assert.includeMembers(opened, ["0@0", "1@0", "0@1", "1@1"])
        yield* q2.stop()
      }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a failing foreach writer fails the query; a restart resumes from the last committed epoch", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir
      const input = yield* MemoryStream.make(Value)
      const seen: Array<number> = []
      const closed: Array<string> = []
      let failOn = 3
      const start = input
        .toDF()
        .writeStream.foreach({
          process: (row) => {
            if (row.value === failOn) throw new Error(`boom on ${row.value}`)
            seen.push(row.value)
          },
          close: (error) => {
            closed.push(error === null ? "ok" : (error as Error).message)
          }
        })
        .trigger(Trigger.Continuous("1 hour"))
        .option("checkpointLocation", dir)
        .start()
      const q1 = yield* start
      yield* input.addData([{ value: 1 }, { value: 2 }])
      yield* q1.processAllAvailable()
      yield* input.addData([{ value: 3 }])
      const exit = yield* Effect.exit(q1.awaitTermination())
      assert.isTrue(Exit.isFailure(exit))
      const error = yield* q1.exception()
      assert.strictEqual(error?._tag, "StreamingQueryError")
      assert.include(error?.message ?? "", "The foreach function failed: boom on 3")
      assert.isFalse(yield* q1.isActive())
      assert.include(closed, "boom on 3", "the failing writer is closed with its error")
      failOn = -1
      const q2 = yield* start
      yield* q2.processAllAvailable()
      assert.deepStrictEqual(seen.sort(), [1, 2, 3])
      yield* q2.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("stop is prompt: it needs no clock time, and the tasks stop where they wait", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.readStream.format("rate").option("rowsPerSecond", 1).option("numPartitions", 4).load()
      const q = yield* df.writeStream.format("memory").queryName("stopme").trigger(Trigger.Continuous("1 hour")).start()
      yield* continuousOf(q).awaitEpoch(0)
      const before = yield* Clock.currentTimeMillis
      const stopping = yield* Effect.forkChild(q.stop())
      yield* Fiber.join(stopping)
      assert.strictEqual(yield* Clock.currentTimeMillis, before)
      assert.isFalse(yield* q.isActive())
      assert.strictEqual((yield* q.status()).message, "Stopped")
      assert.isTrue(yield* q.awaitTermination())
      assert.strictEqual((yield* spark.streams.active()).length, 0)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a partition that falls behind overflows the epoch backlog (ContinuousEpochBacklogSuite)", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const q = yield* input
        .toDF()
        .writeStream.foreach({
          // partition 0's row never finishes: partition 1 keeps ending epochs alone
          process: (row) => (row.value === 0 ? new Promise<void>(() => {}) : undefined)
        })
        .trigger(Trigger.Continuous("1 millis"))
        .start()
      yield* continuousOf(q).awaitEpoch(0)
      yield* input.addData([{ value: 0 }])
      yield* TestClock.adjust("50 millis")
      const exit = yield* Effect.exit(q.awaitTermination())
      assert.isTrue(Exit.isFailure(exit))
      assert.include(
        (yield* q.exception())?.message ?? "",
        "Size of the partition offset queue has exceeded its maximum"
      )
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.continuous.epochBacklogQueueSize": "10" } })))
  )
})

describe("ContinuousExecution: progress and listeners", () => {
  it.effect(
    "one progress per committed epoch, with batchId = epoch, to lastProgress, recentProgress and listeners",
    () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const events: Array<string> = []
        const progress: Array<StreamingQueryProgress> = []
        yield* spark.streams.addListener({
          onQueryStarted: () => {
            events.push("started")
          },
          onQueryProgress: (e) => {
            progress.push(e.progress)
          },
          onQueryTerminated: (e) => {
            events.push(`terminated ${e.exception}`)
          }
        })
        const input = yield* MemoryStream.make(Value)
        const q = yield* input
          .toDF()
          .writeStream.format("memory")
          .queryName("progress")
          .trigger(Trigger.Continuous("1 hour"))
          .start()
        yield* continuousOf(q).awaitEpoch(0)
        yield* input.addData([{ value: 1 }, { value: 2 }, { value: 3 }])
        yield* q.processAllAvailable()
        const last = yield* q.lastProgress()
        assert.isNotNull(last)
        assert.strictEqual(last!.numInputRows, 3)
        assert.strictEqual(last!.sink.description, "MemorySink")
        assert.strictEqual(last!.sink.numOutputRows, 3)
        assert.deepStrictEqual(last!.sources[0].endOffset, { "0": 2, "1": 1 })
        assert.deepStrictEqual(last!.sources[0].startOffset, { "0": 0, "1": 0 })
        const recent = yield* q.recentProgress()
        assert.deepStrictEqual(
          recent.map((p) => p.batchId),
          recent.map((_, i) => i)
        )
        assert.deepStrictEqual(
          progress.map((p) => p.batchId),
          recent.map((p) => p.batchId)
        )
        assert.strictEqual((yield* q.status()).message, "Running")
        const explain = yield* q.explain()
        assert.isTrue(explain.startsWith("== Physical Plan ==\nWriteToContinuousDataSource MemorySink\n+- "), explain)
        yield* q.stop()
        assert.deepStrictEqual(events, ["started", "terminated null"])
      }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("the console sink prints each committed epoch as a batch", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const q = yield* input.toDF().writeStream.format("console").trigger(Trigger.Continuous("1 hour")).start()
      yield* continuousOf(q).awaitEpoch(0)
      yield* input.addData([{ value: 5 }])
      yield* q.processAllAvailable()
      const epoch = yield* continuousOf(q).lastCommittedEpoch()
      yield* q.stop()
      const lines = (yield* TestConsole.logLines) as ReadonlyArray<string>
      assert.strictEqual(
        lines[lines.length - 1],
        `-------------------------------------------\nBatch: ${epoch}\n-------------------------------------------\n+-----+\n|value|\n+-----+\n|    5|\n+-----+\n`
      )
    }).pipe(Effect.provide(Session.layer()), Effect.provide(TestConsole.layer))
  )
})
