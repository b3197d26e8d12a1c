/**
 * `spark.streams`, after Spark's `StreamingQueryManagerSuite`: listing active queries, `get`,
 * `awaitAnyTermination` (with and without a timeout) and `resetTerminated`, the uniqueness of
 * names and checkpoints among active queries, and sessions that do not see each other's queries.
 */
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as T from "../../../core/DataType.ts"
import {
  type MicroBatchSource,
  MemoryStream,
  registerSourceFormat,
  Session,
  type StreamingQuery,
  StreamingQueryError
} from "../../../mod.ts"

const Value = Schema.Struct({ value: Schema.Int })

const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

const tempDir = (name: string) => Effect.promise(() => mkdtemp(join(tmpdir(), `tributary-${name}-`)))
const removeDir = (dir: string) => Effect.promise(() => rm(dir, { recursive: true, force: true }))

/** Spark's `makeDataset`: a MemoryStream mapped through `6 / _`, which fails on 0. */
const makeDataset = Effect.gen(function* () {
  const input = yield* MemoryStream.make(Value)
  const mapped = input.toDF().map((r) => {
    if (r.value === 0) throw new Error("/ by zero")
    return { value: Math.trunc(6 / r.value) }
  }, Value)
  return { input, mapped }
})

/** Spark's `withQueriesOn`: one memory-sink query per dataset, each with its own checkpoint. */
const startQueries = (n: number) =>
  Effect.gen(function* () {
    const out: Array<{ readonly input: MemoryStream<{ value: number }>; readonly query: StreamingQuery }> = []
    for (let i = 0; i < n; i++) {
      const { input, mapped } = yield* makeDataset
      const dir = yield* tempDir("manager")
      yield* Effect.addFinalizer(() => removeDir(dir))
      const query = yield* mapped.writeStream
        .format("memory")
        .queryName(`query${i}`)
        .option("checkpointLocation", dir)
        .start()
      out.push({ input, query })
    }
    return out
  })

const ids = (qs: ReadonlyArray<StreamingQuery>) => qs.map((q) => q.id).sort()

/** Forks `awaitAnyTermination` and reports whether it is still blocked once every fiber has settled. */
const forkAwaitAny = (timeoutMs?: number) =>
  Effect.gen(function* () {
    const spark = yield* Session
    const fiber = yield* Effect.forkChild(spark.streams.awaitAnyTermination(timeoutMs))
    yield* settle
    return fiber
  })

const isBlocked = (fiber: Fiber.Fiber<unknown, unknown>) => Effect.map(settle, () => fiber.pollUnsafe() === undefined)

describe("StreamingQueryManager", () => {
  it.effect("listing", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const [m1, m2, m3] = yield* startQueries(3)
      const [q1, q2, q3] = [m1.query, m2.query, m3.query]
      assert.deepStrictEqual(ids(yield* spark.streams.active()), ids([q1, q2, q3]))
      assert.strictEqual(yield* spark.streams.get(q1.id), q1)
      assert.strictEqual(yield* spark.streams.get(q2.id), q2)
      assert.strictEqual(yield* spark.streams.get(q3.id), q3)
      assert.isUndefined(yield* spark.streams.get(crypto.randomUUID())) // non-existent id
      yield* q1.stop()
      assert.deepStrictEqual(ids(yield* spark.streams.active()), ids([q2, q3]))
      assert.isUndefined(yield* spark.streams.get(q1.id))
      assert.strictEqual(yield* spark.streams.get(q2.id), q2)
      yield* m2.input.addData([{ value: 0 }]) // q2 terminates with an error
      yield* q2.awaitTermination().pipe(Effect.flip)
      assert.isFalse(yield* q2.isActive())
      assert.isNotNull(yield* q2.exception())
      assert.isUndefined(yield* spark.streams.get(q2.id))
      assert.deepStrictEqual(ids(yield* spark.streams.active()), ids([q3]))
      yield* q3.stop()
      assert.deepStrictEqual(yield* spark.streams.active(), [])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("awaitAnyTermination without timeout and resetTerminated", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const queries = yield* startQueries(5)
      // Blocked while every query runs
      let waiting = yield* forkAwaitAny()
      assert.isTrue(yield* isBlocked(waiting))
      // A query stops: awaitAnyTermination returns
      yield* queries[0].query.stop()
      assert.isTrue(yield* Fiber.join(waiting))
      // ... and keeps returning at once
      assert.isTrue(yield* spark.streams.awaitAnyTermination())
      // resetTerminated makes it block again
      yield* spark.streams.resetTerminated()
      waiting = yield* forkAwaitAny()
      assert.isTrue(yield* isBlocked(waiting))
      // A query fails: awaitAnyTermination fails with its error
      yield* queries[1].input.addData([{ value: 0 }])
      const failed = yield* Fiber.await(waiting)
      assert.isTrue(Exit.isFailure(failed))
      const error = yield* queries[1].query.exception()
      assert.instanceOf(error, StreamingQueryError)
      assert.strictEqual(yield* spark.streams.awaitAnyTermination().pipe(Effect.flip), error)
      // resetTerminated: blocked again
      yield* spark.streams.resetTerminated()
      waiting = yield* forkAwaitAny()
      assert.isTrue(yield* isBlocked(waiting))
      // One query stops cleanly, then another fails: from then on, the failure is reported
      yield* queries[2].query.stop()
      assert.isTrue(yield* Fiber.join(waiting))
      yield* queries[3].input.addData([{ value: 0 }])
      yield* queries[3].query.awaitTermination().pipe(Effect.flip)
      const error3 = yield* queries[3].query.exception()
      assert.strictEqual(yield* spark.streams.awaitAnyTermination().pipe(Effect.flip), error3)
      yield* queries[4].query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("awaitAnyTermination with timeout and resetTerminated", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const queries = yield* startQueries(4)
      // Nothing ends within the timeout: false once the timeout has passed, not before
      let waiting = yield* forkAwaitAny(4000)
      yield* TestClock.adjust(2000)
      assert.isTrue(yield* isBlocked(waiting))
      yield* TestClock.adjust(2000)
      assert.isFalse(yield* Fiber.join(waiting))
      // A query stops within the timeout: true at once
      waiting = yield* forkAwaitAny(2000)
      yield* queries[0].query.stop()
      assert.isTrue(yield* Fiber.join(waiting))
      // Later calls return true at once, whatever the timeout
      assert.isTrue(yield* spark.streams.awaitAnyTermination(4000))
      // After resetTerminated, a failure within the timeout fails it
      yield* spark.streams.resetTerminated()
      waiting = yield* forkAwaitAny(4000)
      yield* TestClock.adjust(1000)
      assert.isTrue(yield* isBlocked(waiting))
      yield* queries[1].input.addData([{ value: 0 }])
      const failed = yield* Fiber.await(waiting)
      assert.isTrue(Exit.isFailure(failed))
      assert.isTrue(Exit.isFailure(yield* Effect.exit(spark.streams.awaitAnyTermination(2000))))
      // A failure after the timeout: false first, the failure afterwards
      yield* spark.streams.resetTerminated()
      waiting = yield* forkAwaitAny(100)
      yield* TestClock.adjust(100)
      assert.isFalse(yield* Fiber.join(waiting))
      yield* queries[2].input.addData([{ value: 0 }])
      yield* queries[2].query.awaitTermination().pipe(Effect.flip)
      assert.isTrue(Exit.isFailure(yield* Effect.exit(spark.streams.awaitAnyTermination(100))))
      yield* queries[3].query.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("can't start a streaming query with the same name in the same session", () =>
    Effect.gen(function* () {
      const ds1 = (yield* makeDataset).mapped
      const ds2 = (yield* makeDataset).mapped
      const query1 = yield* ds1.writeStream.format("noop").queryName("abc").start()
      const e = yield* ds2.writeStream.format("noop").queryName("abc").start().pipe(Effect.flip)
      assert.strictEqual(e._tag, "AnalysisError")
      assert.include(e.message, "query with that name is already active")
      yield* query1.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("can start a streaming query with the same name in a different session", () =>
    Effect.gen(function* () {
      const other = Layer.fresh(Session.layer())
      const query1 = yield* Effect.flatMap(makeDataset, ({ mapped }) =>
        mapped.writeStream.format("noop").queryName("abc").start()
      )
      const query2 = yield* Effect.flatMap(makeDataset, ({ mapped }) =>
        mapped.writeStream.format("noop").queryName("abc").start()
      ).pipe(Effect.provide(other))
      // The other session was released when its layer was: its query has stopped.
      assert.isFalse(yield* query2.isActive())
      assert.isTrue(yield* query1.isActive())
      const spark = yield* Session
      assert.deepStrictEqual(ids(yield* spark.streams.active()), [query1.id])
      yield* query1.stop()
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("can't start multiple instances of the same streaming query (same checkpoint) in the same session", () =>
    Effect.gen(function* () {
      const dir = yield* tempDir("same-checkpoint")
      const chk = join(dir, "_checkpoint")
      const a = yield* makeDataset
      const b = yield* makeDataset
      const query1 = yield* a.mapped.writeStream.format("noop").option("checkpointLocation", chk).start()
      yield* a.input.addData([{ value: 1 }, { value: 2 }, { value: 3 }])
      const e = yield* b.mapped.writeStream.format("noop").option("checkpointLocation", chk).start().pipe(Effect.flip)
      assert.strictEqual(e._tag, "CheckpointError")
      if (e._tag === "CheckpointError") {
        assert.strictEqual(e.reason, "ConcurrentUse")
        assert.strictEqual(e.path, chk)
        assert.include(e.message, chk)
      }
      yield* query1.stop()
      // Once the first has stopped, the checkpoint can be used again (and keeps its id)
      const query2 = yield* b.mapped.writeStream.format("noop").option("checkpointLocation", chk).start()
      assert.strictEqual(query2.id, query1.id)
      yield* query2.stop()
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.stopActiveRunOnRestart": false } })))
  )

  it.effect("releasing the session stops its queries", () =>
    Effect.gen(function* () {
      const query = yield* Effect.flatMap(makeDataset, ({ mapped }) => mapped.writeStream.format("noop").start()).pipe(
        Effect.provide(Layer.fresh(Session.layer()))
      )
      assert.isFalse(yield* query.isActive())
      assert.isTrue(yield* query.awaitTermination())
    })
  )

  // Spark's default `spark.sql.streaming.stopActiveRunOnRestart=true` makes a new start on the
  // checkpoint of an active query stop that query first
  // (StreamingQueryManager.startQuery: `activeOption.foreach(_.stop())` when the conf is on).
  it.effect("new instance of the same streaming query stops old query in the same session", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir("stop-old")
      const chkLocation = join(dir, "_checkpoint")
      const dataLocation = join(dir, "data")
      const a = yield* makeDataset
      const b = yield* makeDataset
      const query1 = yield* a.mapped.writeStream.format("parquet").option("checkpointLocation", chkLocation).start(dataLocation)
      yield* a.input.addData([{ value: 1 }, { value: 2 }, { value: 3 }])
      const query2 = yield* b.mapped.writeStream.format("parquet").option("checkpointLocation", chkLocation).start(dataLocation)
      yield* b.input.addData([{ value: 1 }, { value: 2 }, { value: 3 }])
      yield* query2.processAllAvailable()
      assert.strictEqual(yield* spark.streams.get(query2.id), query2, "The correct streaming query is not being tracked")
      assert.isFalse(yield* query1.isActive(), "First query should have stopped before starting the second query")
      yield* query2.stop()
      yield* removeDir(dir)
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.stopActiveRunOnRestart": true } })))
  )

  // Deviation: Spark resolves sources on the query's own thread, so `start()` returns while a
  // source is still being created and the status says "Initializing sources"
  // (StreamExecution.runStream / MicroBatchExecution.logicalPlan). tributary creates the sources
  // inside `start()` (structured/api/DataStreamWriter.ts, `format.create(...)` in start), so a
  // source that blocks while being created blocks `start()`.
  it.effect.fails("SPARK-18811: Source resolution should not block main thread", () =>
    Effect.gen(function* () {
      const latch = yield* Deferred.make<void>()
      const schema = T.struct([T.field("value", T.IntegerType, false)])
      registerSourceFormat({
        name: "test-blocking-source",
        schema: () => schema,
        create: () =>
          Effect.as(Deferred.await(latch), {
            description: "BlockingSource",
            schema,
            initialOffset: () => Effect.succeed(0),
            defaultReadLimit: () => ({ _tag: "AllAvailable" }),
            latestOffset: () => Effect.succeed(0),
            getBatch: () => Effect.succeed([]),
            commit: () => Effect.void,
            decodeOffset: (json: unknown) => Effect.succeed(json),
            stop: () => Effect.void
          } as MicroBatchSource)
      })
      const spark = yield* Session
      const starting = yield* Effect.forkChild(spark.readStream.format("test-blocking-source").load().writeStream.format("noop").start())
      yield* settle
      const started = starting.pollUnsafe()
      // if source resolution was happening in start(), it would block the start call
      assert.isDefined(started, "start() is blocked by the source's creation")
      const sq = yield* Fiber.join(starting)
      assert.include((yield* sq.status()).message, "Initializing sources")
      yield* Deferred.succeed(latch, undefined)
      yield* sq.stop()
    }).pipe(Effect.provide(Session.layer()))
  )
})
