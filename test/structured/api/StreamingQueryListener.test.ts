/**
 * Listeners of `spark.streams`, after Spark's `StreamingQueryListenerSuite`: start, progress,
 * idle and termination events, their order, several listeners, adding and removing, callbacks
 * that return Promises or Effects or fail, and sessions that do not hear each other's queries.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import {
  MemoryStream,
  type QueryIdleEvent,
  type QueryProgressEvent,
  type QueryStartedEvent,
  type QueryTerminatedEvent,
  Session,
  type StreamingQuery,
  type StreamingQueryListener,
  Trigger
} from "../../../mod.ts"
import type { MicroBatchExecution } from "../../../structured/execution/MicroBatchExecution.ts"
import {
  AddData,
  AdvanceClock,
  AssertOnQuery,
  CheckAnswer,
  ExpectFailure,
  StartStream,
  StopStream,
  testStream
} from "../../../structured/testing.ts"

const Value = Schema.Struct({ value: Schema.Int })

const quiescent = (q: StreamingQuery) => (q as unknown as MicroBatchExecution).awaitQuiescent()

/** Spark's `EventCollector`: records events and checks that they come in a valid order. */
class EventCollector implements StreamingQueryListener {
  startEvent: QueryStartedEvent | null = null
  progressEvents: Array<QueryProgressEvent> = []
  idleEvents: Array<QueryIdleEvent> = []
  terminationEvent: QueryTerminatedEvent | null = null
  readonly errors: Array<string> = []

  reset(): void {
    this.startEvent = null
    this.progressEvents = []
    this.idleEvents = []
    this.terminationEvent = null
  }

  onQueryStarted = (e: QueryStartedEvent): void => {
    if (this.startEvent !== null) this.errors.push("started twice")
    if (this.terminationEvent !== null) this.errors.push("started after terminated")
    this.startEvent = e
  }

  onQueryProgress = (e: QueryProgressEvent): void => {
    if (this.startEvent === null) this.errors.push("progress before started")
    if (this.terminationEvent !== null) this.errors.push("progress after terminated")
    this.progressEvents.push(e)
  }

  onQueryIdle = (e: QueryIdleEvent): void => {
    if (this.startEvent === null) this.errors.push("idle before started")
    this.idleEvents.push(e)
  }

  onQueryTerminated = (e: QueryTerminatedEvent): void => {
    if (this.startEvent === null) this.errors.push("terminated before started")
    if (this.terminationEvent !== null) this.errors.push("terminated twice")
    this.terminationEvent = e
  }
}

const tenDividedBy = (input: MemoryStream<{ value: number }>) =>
  input.toDF().map((r) => {
    if (r.value === 0) throw new Error("/ by zero")
    return { value: Math.trunc(10 / r.value) }
  }, Value)

describe("StreamingQueryListener", () => {
  it.effect("single listener, check trigger events are generated correctly", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Value)
      const listener = new EventCollector()
      yield* spark.streams.addListener(listener)
      // No events until started
      assert.isNull(listener.startEvent)
      assert.deepStrictEqual(listener.progressEvents, [])
      assert.isNull(listener.terminationEvent)
      const trigger = Trigger.ProcessingTime(100)
      yield* testStream(tenDividedBy(input), "append", [
        // Start event generated when the query started
        StartStream({ trigger }),
        AssertOnQuery(
          (q) =>
            listener.startEvent?.id === q.id &&
            listener.startEvent.runId === q.runId &&
            listener.startEvent.name === q.name &&
            listener.startEvent.timestamp === "1970-01-01T00:00:00.000Z" &&
            listener.progressEvents.length === 0 &&
            listener.terminationEvent === null,
          "the start event"
        ),
        // Progress event generated when data is processed
        AddData(input, { value: 1 }, { value: 2 }),
        AdvanceClock(100),
        CheckAnswer({ value: 10 }, { value: 5 }),
        AssertOnQuery(
          (q) =>
            Effect.map(q.recentProgress(), (ps) => {
              const lastWithData = ps.filter((p) => p.numInputRows > 0).at(-1)
              return listener.progressEvents.length === 1 && listener.progressEvents[0].progress === lastWithData
            }),
          "one progress event, the batch's progress"
        ),
        // Termination event generated when stopped cleanly
        StopStream,
        AssertOnQuery(
          (q) =>
            listener.terminationEvent?.id === q.id &&
            listener.terminationEvent.runId === q.runId &&
            listener.terminationEvent.exception === null,
          "a clean termination event"
        ),
        AssertOnQuery(() => {
          assert.deepStrictEqual(listener.errors, [])
          listener.reset()
          return true
        }),
        // Termination event with the exception message when stopped with an error
        StartStream({ trigger }),
        AddData(input, { value: 0 }),
        AdvanceClock(100),
        ExpectFailure(undefined, "/ by zero"),
        AssertOnQuery(
          (q) =>
            listener.terminationEvent?.id === q.id &&
            listener.terminationEvent.runId === q.runId &&
            listener.terminationEvent.exception?.includes("/ by zero") === true &&
            // Spark: the cause's exception string with its stack trace, not the wrapping
            // StreamingQueryException
            !listener.terminationEvent.exception.includes("StreamingQueryError") &&
            !listener.terminationEvent.exception.includes("terminated with exception") &&
            listener.terminationEvent.exception.startsWith("Error: / by zero") &&
            listener.terminationEvent.exception.includes("StreamingQueryListener.test.ts"),
          "the termination event carries the failure"
        )
      ])
      assert.deepStrictEqual(listener.errors, [])
      yield* spark.streams.removeListener(listener)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("SPARK-19594: all of listeners should receive QueryTerminatedEvent", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Value)
      const listeners = Array.from({ length: 5 }, () => new EventCollector())
      for (const l of listeners) yield* spark.streams.addListener(l)
      yield* testStream(input.toDF(), "append", [
        StartStream(),
        StopStream,
        AssertOnQuery(
          (q) =>
            listeners.every(
              (l) =>
                l.terminationEvent?.id === q.id &&
                l.terminationEvent.runId === q.runId &&
                l.terminationEvent.exception === null
            ),
          "every listener heard the termination"
        )
      ])
      for (const l of listeners) {
        assert.deepStrictEqual(l.errors, [])
        yield* spark.streams.removeListener(l)
      }
      assert.deepStrictEqual(yield* spark.streams.listListeners(), [])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("QueryTerminatedEvent.errorClassOnException is the error class of the failure's cause", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const collector = new EventCollector()
      yield* spark.streams.addListener(collector)
      // A user function failing inside flatMapGroupsWithState: Spark's
      // FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR (SPARK-49474); a failure without an error
      // class (a plain Error in map) gives null.
      const keyed = yield* MemoryStream.make(Value)
      const failing = keyed
        .toDF()
        .groupByKey((r) => r.value, Schema.Int)
        .flatMapGroupsWithState(
          { outputMode: "update", stateSchema: Schema.Int, outputSchema: Value },
          (): Iterable<{ value: number }> => {
            throw new Error("boom")
          }
        )
      yield* testStream(failing, "update", [AddData(keyed, { value: 1 }), ExpectFailure()])
      assert.strictEqual(collector.terminationEvent?.errorClassOnException, "FLATMAPGROUPSWITHSTATE_USER_FUNCTION_ERROR")
      assert.include(collector.terminationEvent?.exception ?? "", "boom")
      collector.reset()
      const plain = yield* MemoryStream.make(Value)
      yield* testStream(tenDividedBy(plain), "append", [AddData(plain, { value: 0 }), ExpectFailure()])
      assert.isNull(collector.terminationEvent?.errorClassOnException)
      assert.include(collector.terminationEvent?.exception ?? "", "/ by zero")
      assert.deepStrictEqual(collector.errors, [])
      yield* spark.streams.removeListener(collector)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("adding and removing listener", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const input = yield* MemoryStream.make(Value)
      const isListenerActive = (l: EventCollector) =>
        Effect.gen(function* () {
          l.reset()
          yield* testStream(input.toDF(), "append", [StartStream(), StopStream])
          return l.startEvent !== null
        })
      const listener1 = new EventCollector()
      const listener2 = new EventCollector()
      yield* spark.streams.addListener(listener1)
      assert.isTrue(yield* isListenerActive(listener1))
      assert.isFalse(yield* isListenerActive(listener2))
      yield* spark.streams.addListener(listener2)
      assert.isTrue(yield* isListenerActive(listener1))
      assert.isTrue(yield* isListenerActive(listener2))
      yield* spark.streams.removeListener(listener1)
      assert.isFalse(yield* isListenerActive(listener1))
      assert.isTrue(yield* isListenerActive(listener2))
      assert.deepStrictEqual(yield* spark.streams.listListeners(), [listener2])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("event ordering", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const listener = new EventCollector()
      yield* spark.streams.addListener(listener)
      for (let i = 0; i < 20; i++) {
        listener.reset()
        const input = yield* MemoryStream.make(Value)
        const q = yield* input.toDF().writeStream.format("noop").start()
        // onQueryStarted is called before start() returns
        assert.isNotNull(listener.startEvent)
        yield* input.addData([{ value: i }])
        yield* q.processAllAvailable()
        yield* q.stop()
        assert.strictEqual(listener.progressEvents.length, 1)
        assert.isNotNull(listener.terminationEvent)
      }
      assert.deepStrictEqual(listener.errors, [])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect(
    "progress events come only from batches; idle triggers post onQueryIdle every 10 s, not the first time",
    () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const listener = new EventCollector()
        yield* spark.streams.addListener(listener)
        const input = yield* MemoryStream.make(Value)
        const q = yield* input.toDF().writeStream.format("noop").trigger(Trigger.ProcessingTime("1 second")).start()
        yield* quiescent(q)
        for (let i = 0; i < 30; i++) {
          yield* TestClock.adjust("1 second")
          yield* quiescent(q)
        }
        assert.deepStrictEqual(listener.progressEvents, [])
        assert.deepStrictEqual(
          listener.idleEvents.map((e) => e.timestamp),
          ["1970-01-01T00:00:10.000Z", "1970-01-01T00:00:20.000Z", "1970-01-01T00:00:30.000Z"]
        )
        assert.isTrue(listener.idleEvents.every((e) => e.id === q.id && e.runId === q.runId))
        // recentProgress keeps one idle record per interval (the first one at once)
        assert.deepStrictEqual(
          (yield* q.recentProgress()).map((p) => [p.timestamp, p.numInputRows]),
          [
            ["1970-01-01T00:00:00.000Z", 0],
            ["1970-01-01T00:00:10.000Z", 0],
            ["1970-01-01T00:00:20.000Z", 0],
            ["1970-01-01T00:00:30.000Z", 0]
          ]
        )
        // A batch resets the interval
        yield* input.addData([{ value: 1 }])
        yield* TestClock.adjust("1 second") // t = 31 s
        yield* quiescent(q)
        assert.strictEqual(listener.progressEvents.length, 1)
        for (let i = 0; i < 9; i++) {
          yield* TestClock.adjust("1 second")
          yield* quiescent(q)
        }
        assert.strictEqual(listener.idleEvents.length, 3) // t = 40 s: only 9 s since the batch
        yield* TestClock.adjust("1 second")
        yield* quiescent(q)
        assert.strictEqual(listener.idleEvents.at(-1)?.timestamp, "1970-01-01T00:00:41.000Z")
        yield* q.stop()
        assert.deepStrictEqual(listener.errors, [])
      }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("spark.sql.streaming.noDataProgressEventInterval sets the idle interval", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const idle: Array<string> = []
      yield* spark.streams.addListener({ onQueryIdle: (e) => void idle.push(e.timestamp) })
      const input = yield* MemoryStream.make(Value)
      const q = yield* input.toDF().writeStream.format("noop").trigger(Trigger.ProcessingTime(100)).start()
      yield* quiescent(q)
      for (let i = 0; i < 5; i++) {
        yield* TestClock.adjust(100)
        yield* quiescent(q)
      }
      assert.deepStrictEqual(idle, ["1970-01-01T00:00:00.200Z", "1970-01-01T00:00:00.400Z"])
      yield* q.stop()
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.noDataProgressEventInterval": "200ms" } })))
  )

  it.effect("callbacks may return Promises or Effects; a failing listener does not stop the query", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const order: Array<string> = []
      yield* spark.streams.addListener({
        onQueryStarted: () => Promise.resolve().then(() => void order.push("started (promise)")),
        onQueryProgress: () => Effect.sync(() => void order.push("progress (effect)")),
        onQueryTerminated: () => {
          order.push("terminated (plain)")
        }
      })
      yield* spark.streams.addListener({
        onQueryStarted: () => {
          throw new Error("a broken listener")
        },
        onQueryProgress: () => Promise.reject(new Error("a broken listener")),
        onQueryTerminated: () => Effect.fail("a broken listener")
      })
      const input = yield* MemoryStream.make(Value)
      const q = yield* input.toDF().writeStream.format("memory").queryName("listened").start()
      yield* input.addData([{ value: 1 }])
      yield* q.processAllAvailable()
      assert.isTrue(yield* q.isActive())
      yield* q.stop()
      assert.isNull(yield* q.exception())
      assert.deepStrictEqual(order, ["started (promise)", "progress (effect)", "terminated (plain)"])
      assert.deepStrictEqual(yield* spark.table("listened").collect(), [{ value: 1 }])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("listener only posts events from queries started in the related sessions", () =>
    Effect.gen(function* () {
      const collector1 = new EventCollector()
      const collector2 = new EventCollector()
      const runQuery = Effect.gen(function* () {
        const input = yield* MemoryStream.make(Value)
        yield* testStream(input.toDF(), "append", [AddData(input, { value: 1 }), CheckAnswer({ value: 1 })])
      })
      const session1 = Layer.fresh(Session.layer())
      const session2 = Layer.fresh(Session.layer())
      yield* Effect.gen(function* () {
        const spark = yield* Session
        yield* spark.streams.addListener(collector1)
        yield* runQuery
      }).pipe(Effect.provide(session1))
      yield* Effect.gen(function* () {
        const spark = yield* Session
        yield* spark.streams.addListener(collector2)
        yield* runQuery
      }).pipe(Effect.provide(session2))
      for (const c of [collector1, collector2]) {
        assert.isNotNull(c.startEvent)
        assert.strictEqual(c.progressEvents.length, 1)
        assert.isNotNull(c.terminationEvent)
      }
      assert.notStrictEqual(collector1.startEvent?.id, collector2.startEvent?.id)
    })
  )

  it.effect("continuous processing listeners should receive QueryTerminatedEvent", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.readStream.format("rate").load()
      const listeners = Array.from({ length: 5 }, () => new EventCollector())
      for (const l of listeners) yield* spark.streams.addListener(l)
      const q = yield* df.writeStream.format("noop").trigger(Trigger.Continuous(1000)).start()
      yield* q.stop()
      for (const l of listeners) {
        assert.strictEqual(l.terminationEvent?.id, q.id)
        assert.strictEqual(l.terminationEvent?.runId, q.runId)
        assert.isNull(l.terminationEvent?.exception)
        assert.deepStrictEqual(l.errors, [])
        yield* spark.streams.removeListener(l)
      }
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("only one progress event per interval when no data", () =>
    Effect.gen(function* () {
      // This test starts a query but pushes no data, then checks that not too many events come.
      const spark = yield* Session
      let numProgressEvent = 0
      let numIdleEvent = 0
      yield* spark.streams.addListener({
        onQueryProgress: () => {
          numProgressEvent += 1
        },
        // Spark 4 posts a trigger without data to onQueryIdle (SPARK-43183), at most once per
        // noDataProgressEventInterval
        onQueryIdle: () => {
          numIdleEvent += 1
        }
      })
      const input = yield* MemoryStream.make(Value)
      const actions = [StartStream({ trigger: Trigger.ProcessingTime(10) })]
      for (let i = 0; i < 100; i++) actions.push(AdvanceClock(10))
      // `recentProgress` should not receive too many no data events
      actions.push(AssertOnQuery((q) => Effect.map(q.recentProgress(), (ps) => ps.length > 1 && ps.length <= 11)))
      yield* testStream(input.toDF(), "append", actions)
      assert.strictEqual(numProgressEvent, 0)
      // 11 is the max value of the possible numbers of events.
      assert.isTrue(numIdleEvent > 1 && numIdleEvent <= 11, `${numIdleEvent} idle events`)
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.noDataProgressEventInterval": "100ms" } })))
  )

  it.effect("SPARK-31593: remove unnecessary streaming query progress update", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      let numProgressEvent = 0
      let numIdleEvent = 0
      yield* spark.streams.addListener({
        onQueryProgress: () => {
          numProgressEvent += 1
        },
        onQueryIdle: () => {
          numIdleEvent += 1
        }
      })
      const checkEvents = (progress: number, idle: number) =>
        AssertOnQuery((q) =>
          Effect.gen(function* () {
            yield* quiescent(q)
            assert.strictEqual(numProgressEvent, progress)
            assert.strictEqual(numIdleEvent, idle)
            return true
          })
        )
      const input = yield* MemoryStream.make(Value)
      const result = input.toDF().select("value")
      // Spark 4's ProgressReporter: a batch posts a progress event and restarts the no-data
      // interval; a trigger without data is recorded (and posted to onQueryIdle, not to
      // onQueryProgress) only once noDataProgressEventInterval (100 ms) has passed since.
      yield* testStream(result, "append", [
        AddData(input, { value: 10 }),
        StartStream({ trigger: Trigger.ProcessingTime(10) }),
        checkEvents(1, 0),
        AdvanceClock(10),
        checkEvents(1, 0),
        AdvanceClock(90),
        checkEvents(1, 1),
        AdvanceClock(10),
        checkEvents(1, 1),
        AssertOnQuery((q) =>
          Effect.map(q.recentProgress(), (ps) => {
            assert.deepStrictEqual(
              ps.map((p) => [p.timestamp, p.numInputRows]),
              [
                ["1970-01-01T00:00:00.000Z", 1],
                ["1970-01-01T00:00:00.100Z", 0]
              ]
            )
            return true
          })
        )
      ])
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.streaming.noDataProgressEventInterval": "100" } })))
  )
})
