/**
 * The checkpoint a micro-batch query writes (API.md's layout): the exact contents of
 * `offsets/<n>`, `commits/<n>` and `metadata`, atomic writes, the purge of old log entries
 * (StreamingQuerySuite's "StreamExecution metadata garbage collection"), the re-run of a batch
 * whose commit is missing, and what a corrupt or incomplete checkpoint does.
 */
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { basename, dirname, join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { TestClock, TestConsole } from "effect/testing"
import { CheckpointError, F, MemoryStream, Session, type StreamingQuery, StreamingQueryError } from "../../../mod.ts"
import type { MicroBatchExecution } from "../../../structured/execution/MicroBatchExecution.ts"
import { AddData, AssertOnQuery, CheckAnswer, Execute, StartStream, testStream } from "../../../structured/testing.ts"

const Value = Schema.Struct({ value: Schema.Int })
const v = (...xs: ReadonlyArray<number>) => xs.map((value) => ({ value }))

const tempDir = (name: string) => Effect.promise(() => mkdtemp(join(tmpdir(), `tributary-${name}-`)))
const removeDir = (dir: string) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
const read = (path: string) => Effect.promise(() => readFile(path, "utf8"))
/** Hadoop's checksum file beside `path` (every checkpoint file has one). */
const crcOf = (path: string) => join(dirname(path), `.${basename(path)}.crc`)
/** Edits a checkpoint file by hand: its checksum file must go too, or the file reads as damaged. */
const write = (path: string, text: string) =>
  Effect.promise(async () => {
    await writeFile(path, text, "utf8")
    await rm(crcOf(path), { force: true })
  })
/** A folder's names without the checksum files. */
const list = (dir: string) =>
  Effect.promise(async () => {
    try {
      return (await readdir(dir)).filter((n) => !n.endsWith(".crc")).sort()
    } catch {
      return []
    }
  })

/** Every file under `dir`, relative, recursively. */
const walk = (dir: string): Effect.Effect<ReadonlyArray<string>> =>
  Effect.promise(async () => {
    const out: Array<string> = []
    const go = async (d: string, prefix: string) => {
      for (const e of await readdir(d, { withFileTypes: true })) {
        if (e.isDirectory()) await go(join(d, e.name), `${prefix}${e.name}/`)
        else out.push(`${prefix}${e.name}`)
      }
    }
    await go(dir, "")
    return out.sort()
  })

/** The relevant confs tributary records in every offset log entry (Spark's `OffsetSeqMetadata.relevantSQLConfs`). */
const CONF =
  '{"spark.sql.streaming.multipleWatermarkPolicy":"min","spark.sql.shuffle.partitions":"200","spark.sql.streaming.noDataMicroBatches.enabled":"true"}'

describe("checkpoint files", () => {
  it.effect("offsets/<n>, commits/<n> and metadata, exactly as API.md lays them out", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("layout")
      const a = yield* MemoryStream.make(Value)
      const b = yield* MemoryStream.make(Value)
      yield* TestClock.adjust(1234)
      const q = yield* a.toDF().union(b.toDF()).writeStream.format("noop").option("checkpointLocation", dir).start()
      yield* a.addData(v(1, 2))
      yield* b.addData(v(3))
      yield* q.processAllAvailable()
      yield* TestClock.adjust(1000)
      yield* a.addData(v(4))
      yield* q.processAllAvailable()
      yield* q.stop()
      assert.strictEqual(yield* read(join(dir, "metadata")), `{"id":"${q.id}"}`)
      assert.strictEqual(
        yield* read(join(dir, "offsets", "0")),
        `v1\n{"batchWatermarkMs":0,"batchTimestampMs":1234,"conf":${CONF}}\n0\n0`
      )
      assert.strictEqual(
        yield* read(join(dir, "offsets", "1")),
        `v1\n{"batchWatermarkMs":0,"batchTimestampMs":2234,"conf":${CONF}}\n1\n0`
      )
      assert.strictEqual(yield* read(join(dir, "commits", "0")), 'v1\n{"nextBatchWatermarkMs":0}')
      assert.strictEqual(yield* read(join(dir, "commits", "1")), 'v1\n{"nextBatchWatermarkMs":0}')
      // Written to temporary names and renamed, each with Hadoop's checksum file beside it (as
      // Spark's checkpoints on a local file system): nothing else is left behind.
      assert.deepStrictEqual(yield* walk(dir), [
        ".metadata.crc",
        "commits/.0.crc",
        "commits/.1.crc",
        "commits/0",
        "commits/1",
        "metadata",
        "offsets/.0.crc",
        "offsets/.1.crc",
        "offsets/0",
        "offsets/1"
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("the rate source's start time is kept under sources/0", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir("rate-layout")
      yield* TestClock.adjust(5000)
      const q = yield* spark.readStream
        .format("rate")
        .load()
        .writeStream.format("noop")
        .option("checkpointLocation", dir)
        .start()
      yield* TestClock.adjust(1000)
      yield* q.processAllAvailable()
      yield* q.stop()
      assert.strictEqual(yield* read(join(dir, "sources", "0", "0")), "v1\n5000")
      assert.strictEqual(
        yield* read(join(dir, "offsets", "0")),
        `v1\n{"batchWatermarkMs":0,"batchTimestampMs":6000,"conf":${CONF}}\n1`
      )
      assert.isTrue(
        (yield* walk(dir)).every((f) => (!f.split("/").at(-1)!.startsWith(".") || f.endsWith(".crc")) && !f.endsWith(".tmp"))
      )
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("special characters in checkpoint path", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("special")
      const dir = join(root, "chk @#chk")
      const input = yield* MemoryStream.make(Value)
      yield* input.addData(v(1))
      const q = yield* input.toDF().writeStream.format("noop").option("checkpointLocation", dir).start()
      yield* q.processAllAvailable()
      yield* q.stop()
      assert.deepStrictEqual(yield* list(dir), ["commits", "metadata", "offsets"])
      yield* removeDir(root)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a query without checkpointLocation uses the session's checkpoint root", () =>
    Effect.gen(function* () {
      const root = yield* tempDir("root")
      yield* Effect.gen(function* () {
        const input = yield* MemoryStream.make(Value)
        const q = yield* input.toDF().writeStream.format("noop").start()
        yield* input.addData(v(1))
        yield* q.processAllAvailable()
        yield* q.stop()
        const [checkpoint] = yield* list(root)
        assert.strictEqual(yield* read(join(root, checkpoint, "metadata")), `{"id":"${q.id}"}`)
        assert.deepStrictEqual(yield* list(join(root, checkpoint, "offsets")), ["0"])
      }).pipe(Effect.provide(Session.layer({ checkpointRoot: root })))
      yield* removeDir(root)
    })
  )
})

describe("temporary checkpoints (DataStreamReaderWriterSuite)", () => {
  const checkpointOf = (q: StreamingQuery) => (q as unknown as MicroBatchExecution).config.checkpoint
  const exists = (path: string) =>
    Effect.promise(() =>
      stat(path).then(
        () => true,
        () => false
      )
    )

  it.effect("temp checkpoint dir should be deleted if a query is stopped without errors", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Value)
      const query = yield* input.toDF().writeStream.format("console").start()
      yield* query.processAllAvailable()
      const dir = checkpointOf(query)
      assert.isTrue(yield* exists(dir))
      yield* query.stop()
      assert.isFalse(yield* exists(dir))
    }).pipe(Effect.provide(Session.layer()), Effect.provide(TestConsole.layer))
  )

  for (const force of [false, true]) {
    it.effect(`temp checkpoint dir after a failure, forceDeleteTempCheckpointLocation=${force}`, () =>
      Effect.gen(function* () {
        const spark = yield* Session
        yield* spark.conf.set("spark.sql.streaming.forceDeleteTempCheckpointLocation", force)
        const input = yield* MemoryStream.make(Value)
        const query = yield* input
          .toDF()
          .map((r) => {
            if (r.value === 1) throw new Error("/ by zero")
            return r
          }, Value)
          .writeStream.format("console")
          .start()
        const dir = checkpointOf(query)
        yield* input.addData(v(1))
        yield* query.awaitTermination().pipe(Effect.flip)
        assert.strictEqual(yield* exists(dir), !force)
        yield* removeDir(dir)
      }).pipe(Effect.provide(Session.layer()), Effect.provide(TestConsole.layer))
    )
  }

  it.effect("configured checkpoint dirs are kept", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const root = yield* tempDir("configured")
      yield* spark.conf.set("spark.sql.streaming.checkpointLocation", root)
      yield* spark.conf.set("spark.sql.streaming.forceDeleteTempCheckpointLocation", true)
      const input = yield* MemoryStream.make(Value)
      // With a query name, the checkpoint is <conf root>/<name>
      yield* (yield* input.toDF().writeStream.format("console").queryName("named").start()).stop()
      assert.deepStrictEqual(yield* list(root), ["named"])
      // Without one, a random folder under the root
      yield* (yield* input.toDF().writeStream.format("console").start()).stop()
      assert.strictEqual((yield* list(root)).length, 2)
      yield* removeDir(root)
    }).pipe(Effect.provide(Session.layer()), Effect.provide(TestConsole.layer))
  )
})

describe("StreamExecution metadata garbage collection", () => {
  it.effect("minBatchesToRetain = 1: three batches leave offsets 1 and 2", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("gc1")
      const input = yield* MemoryStream.make(Value)
      yield* testStream(input.toDF(), "append", [
        StartStream({ checkpointLocation: dir, additionalConfs: { "spark.sql.streaming.minBatchesToRetain": "1" } }),
        AddData(input, ...v(1, 2)),
        CheckAnswer(...v(1, 2)),
        AddData(input, ...v(1, 2)),
        CheckAnswer(...v(1, 2, 1, 2)),
        AddData(input, ...v(4, 6)),
        CheckAnswer(...v(1, 2, 1, 2, 4, 6)),
        AssertOnQuery(() => Effect.map(list(join(dir, "offsets")), (names) => names.join() === "1,2"), "offsets: 1, 2"),
        AssertOnQuery(() => Effect.map(list(join(dir, "commits")), (names) => names.join() === "1,2"), "commits: 1, 2")
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("minBatchesToRetain = 2 (set on the session conf): five batches leave offsets 2, 3 and 4", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      yield* spark.conf.set("spark.sql.streaming.minBatchesToRetain", 2)
      const dir = yield* tempDir("gc2")
      const input = yield* MemoryStream.make(Value)
      yield* testStream(input.toDF(), "append", [
        StartStream({ checkpointLocation: dir }),
        AddData(input, ...v(1, 2)),
        CheckAnswer(...v(1, 2)),
        AddData(input, ...v(1, 2)),
        CheckAnswer(...v(1, 2, 1, 2)),
        AddData(input, ...v(3, 4)),
        CheckAnswer(...v(1, 2, 1, 2, 3, 4)),
        AddData(input, ...v(5, 6)),
        CheckAnswer(...v(1, 2, 1, 2, 3, 4, 5, 6)),
        AddData(input, ...v(7, 8)),
        CheckAnswer(...v(1, 2, 1, 2, 3, 4, 5, 6, 7, 8)),
        AssertOnQuery(
          () => Effect.map(list(join(dir, "offsets")), (names) => names.join() === "2,3,4"),
          "offsets: 2, 3, 4"
        ),
        AssertOnQuery(
          () => Effect.map(list(join(dir, "commits")), (names) => names.join() === "2,3,4"),
          "commits: 2, 3, 4"
        )
      ])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("restart from the checkpoint", () => {
  it.effect("a batch whose commit is missing is re-run with exactly the same offsets", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("rerun")
      const input = yield* MemoryStream.make(Value)
      const runs: Array<readonly [number, ReadonlyArray<unknown>]> = []
      const start = () =>
        input
          .toDF()
          .writeStream.option("checkpointLocation", dir)
          .foreachBatch((batch, batchId) =>
            Effect.map(batch.collect(), (rows) => {
              runs.push([batchId, rows])
            })
          )
          .start()
      const q1 = yield* start()
      yield* input.addData(v(1))
      yield* q1.processAllAvailable()
      yield* input.addData(v(2))
      yield* input.addData(v(3))
      yield* q1.processAllAvailable()
      yield* q1.stop()
      const offsets1 = yield* read(join(dir, "offsets", "1"))
      yield* removeDir(join(dir, "commits", "1"))
      // More data arrives while the query is down: batch 1 must not take it.
      yield* input.addData(v(4))
      const q2 = yield* start()
      yield* q2.processAllAvailable()
      yield* q2.stop()
      assert.deepStrictEqual(runs, [
        [0, v(1)],
        [1, v(2, 3)],
        [1, v(2, 3)],
        [2, v(4)]
      ])
      assert.strictEqual(yield* read(join(dir, "offsets", "1")), offsets1)
      assert.deepStrictEqual(yield* list(join(dir, "commits")), ["0", "1", "2"])
      assert.strictEqual(q2.id, q1.id)
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("the memory sink ignores the re-run batch it already has", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir("rerun-memory")
      const input = yield* MemoryStream.make(Value)
      const start = () =>
        input.toDF().writeStream.format("memory").queryName("rerun").option("checkpointLocation", dir).start()
      const q1 = yield* start()
      yield* input.addData(v(1, 2))
      yield* q1.processAllAvailable()
      yield* q1.stop()
      yield* removeDir(join(dir, "commits", "0"))
      const q2 = yield* start()
      yield* q2.processAllAvailable()
      // batch 0 ran again, and the table did not get its rows twice
      assert.deepStrictEqual(
        (yield* q2.recentProgress()).filter((p) => p.numInputRows > 0).map((p) => p.batchId),
        [0]
      )
      assert.deepStrictEqual(yield* spark.table("rerun").collect(), v(1, 2))
      yield* q2.stop()
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("the watermark and timestamp of a re-run come from its offset log entry", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("rerun-meta")
      const input = yield* MemoryStream.make(Value)
      const q1 = yield* input.toDF().writeStream.format("noop").option("checkpointLocation", dir).start()
      yield* input.addData(v(1))
      yield* q1.processAllAvailable()
      yield* q1.stop()
      // Pretend batch 0 was logged at 42 s and never committed.
      yield* write(join(dir, "offsets", "0"), `v1\n{"batchWatermarkMs":0,"batchTimestampMs":42000,"conf":${CONF}}\n0`)
      yield* removeDir(join(dir, "commits"))
      yield* TestClock.adjust("1 hour")
      const stamps: Array<number> = []
      const q2 = yield* input
        .toDF()
        .select(F.current_timestamp().as("ts"))
        .writeStream.option("checkpointLocation", dir)
        .foreachBatch((batch) =>
          Effect.map(batch.collect(), (rows) => void stamps.push(...rows.map((r) => r.ts.getTime())))
        )
        .start()
      yield* q2.processAllAvailable()
      yield* q2.stop()
      assert.deepStrictEqual(stamps, [42000])
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("a corrupt or incomplete checkpoint", () => {
  const failOn = (mangle: (dir: string) => Effect.Effect<void>) =>
    Effect.gen(function* () {
      const dir = yield* tempDir("corrupt")
      const input = yield* MemoryStream.make(Value)
      const start = () => input.toDF().writeStream.format("noop").option("checkpointLocation", dir).start()
      const q1 = yield* start()
      yield* input.addData(v(1))
      yield* q1.processAllAvailable()
      yield* input.addData(v(2))
      yield* q1.processAllAvailable()
      yield* q1.stop()
      yield* mangle(dir)
      const q2 = yield* start()
      const error = yield* q2.awaitTermination().pipe(Effect.flip)
      yield* removeDir(dir)
      return { dir, error }
    })

  it.effect("garbage in the latest offsets file: a CheckpointError naming the file", () =>
    Effect.gen(function* () {
      let file = ""
      const { error } = yield* failOn((dir) => {
        file = join(dir, "offsets", "1")
        return write(file, "this is not a log entry")
      })
      assert.instanceOf(error, StreamingQueryError)
      const cause = error.cause
      assert.instanceOf(cause, CheckpointError)
      if (cause instanceof CheckpointError) {
        assert.strictEqual(cause.reason, "Corrupt")
        assert.strictEqual(cause.path, file)
        assert.include(cause.message, file)
      }
      assert.include(error.message, file)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("an offsets file of a newer log version (v99)", () =>
    Effect.gen(function* () {
      let file = ""
      const { error } = yield* failOn((dir) => {
        file = join(dir, "offsets", "1")
        return write(file, `v99\n{"batchWatermarkMs":0,"batchTimestampMs":0,"conf":{}}\n1`)
      })
      const cause = error.cause
      assert.instanceOf(cause, CheckpointError)
      if (cause instanceof CheckpointError) {
        assert.strictEqual(cause.reason, "UnsupportedVersion")
        assert.strictEqual(cause.path, file)
        assert.include(cause.message, "v99")
        assert.include(cause.message, file)
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("invalid JSON in the batch metadata line", () =>
    Effect.gen(function* () {
      let file = ""
      const { error } = yield* failOn((dir) => {
        file = join(dir, "offsets", "1")
        return write(file, "v1\n{not json\n1")
      })
      const cause = error.cause
      assert.instanceOf(cause, CheckpointError)
      if (cause instanceof CheckpointError) {
        assert.strictEqual(cause.reason, "Corrupt")
        assert.strictEqual(cause.path, file)
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  // Spark's MicroBatchExecution.populateStartOffsets: when the commit log ends more than one
  // batch before the offset log, or is gone, the latest offsets entry re-runs (with a warning),
  // from the offsets of the entry before it.
  for (const [what, mangle] of [
    [
      "ends two batches before the offset log",
      (dir: string) => Effect.andThen(removeDir(join(dir, "commits", "2")), removeDir(join(dir, "commits", "1")))
    ],
    ["is gone", (dir: string) => removeDir(join(dir, "commits"))]
  ] as const) {
    it.effect(`the commit log ${what}: the latest batch re-runs from the offsets before it`, () =>
      Effect.gen(function* () {
        const dir = yield* tempDir("gap")
        const input = yield* MemoryStream.make(Value)
        const seen: Array<readonly [number, ReadonlyArray<number>]> = []
        const start = () =>
          input
            .toDF()
            .writeStream.foreachBatch((df, batchId) =>
              Effect.map(df.collect(), (rows) => {
                seen.push([batchId, rows.map((r) => r.value)])
              })
            )
            .option("checkpointLocation", dir)
            .start()
        const q1 = yield* start()
        for (const x of [1, 2, 3]) {
          yield* input.addData(v(x))
          yield* q1.processAllAvailable()
        }
        yield* q1.stop()
        yield* mangle(dir)
        seen.length = 0
        const q2 = yield* start()
        yield* q2.processAllAvailable()
        yield* input.addData(v(4))
        yield* q2.processAllAvailable()
        yield* q2.stop()
        yield* removeDir(dir)
        assert.deepStrictEqual(seen, [
          [2, [3]],
          [3, [4]]
        ])
      }).pipe(Effect.provide(Session.layer()))
    )
  }

  it.effect("the previous offsets entry is missing for a batch to re-run", () =>
    Effect.gen(function* () {
      let missing = ""
      const { error } = yield* failOn((dir) =>
        Effect.gen(function* () {
          missing = join(dir, "offsets", "0")
          yield* removeDir(join(dir, "commits", "1"))
          yield* removeDir(missing)
        })
      )
      const cause = error.cause
      assert.instanceOf(cause, CheckpointError)
      if (cause instanceof CheckpointError) {
        assert.strictEqual(cause.reason, "LogGap")
        assert.strictEqual(cause.path, missing)
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a different number of sources than the checkpoint has", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("sources")
      const a = yield* MemoryStream.make(Value)
      const b = yield* MemoryStream.make(Value)
      const q1 = yield* a.toDF().writeStream.format("noop").option("checkpointLocation", dir).start()
      yield* a.addData(v(1))
      yield* q1.processAllAvailable()
      yield* q1.stop()
      const q2 = yield* a.toDF().union(b.toDF()).writeStream.format("noop").option("checkpointLocation", dir).start()
      const error = yield* q2.awaitTermination().pipe(Effect.flip)
      const cause = error.cause
      assert.instanceOf(cause, CheckpointError)
      if (cause instanceof CheckpointError) {
        assert.strictEqual(cause.reason, "Incompatible")
        assert.include(
          cause.message,
          "There are [1] sources in the checkpoint offsets and now there are [2] sources requested by the query. Cannot continue."
        )
      }
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a corrupt metadata file fails start() itself", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("metadata")
      yield* write(join(dir, "metadata"), "{{{")
      const input = yield* MemoryStream.make(Value)
      const e = yield* input
        .toDF()
        .writeStream.format("noop")
        .option("checkpointLocation", dir)
        .start()
        .pipe(Effect.flip)
      assert.instanceOf(e, CheckpointError)
      if (e instanceof CheckpointError) {
        assert.strictEqual(e.reason, "Corrupt")
        assert.strictEqual(e.path, join(dir, "metadata"))
        assert.include(e.message, join(dir, "metadata"))
      }
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("testStream reports a checkpoint failure of a restart", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("teststream-corrupt")
      const input = yield* MemoryStream.make(Value)
      const result = yield* testStream(input.toDF(), "append", [
        StartStream({ checkpointLocation: dir }),
        AddData(input, ...v(1)),
        CheckAnswer(...v(1)),
        Execute((q) => (q === undefined ? Effect.void : q.stop())),
        Execute(write(join(dir, "offsets", "0"), "garbage")),
        StartStream({ checkpointLocation: dir }),
        CheckAnswer(...v(1))
      ]).pipe(Effect.flip)
      assert.include(result.message, "The query failed")
      assert.include(result.message, join(dir, "offsets", "0"))
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer()))
  )
})
