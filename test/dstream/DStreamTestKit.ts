/**
 * Helpers for the DStream suites, after Spark's `TestSuiteBase.testOperation`: the input batches
 * go through `queueStream` (two partitions per batch, as Spark's `TestInputStream`), the
 * operation's batches are collected by an output operation, and the test clock drives the
 * batch timer (1 s batches starting at 1000 ms).
 */
import { rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Deferred, Effect } from "effect"
import { TestClock } from "effect/testing"
import { type DStream, RDD, StreamingContext } from "../../dstream/mod.ts"
import { InputNode } from "../../dstream/Node.ts"
import { Session } from "../../mod.ts"

const TestClockNow = Effect.clockWith((c) => c.currentTimeMillis)

export const sessionLayer = Session.layer({ stateStore: "memory" })

export const tempDir = (name: string) =>
  join(tmpdir(), `tributary-dstream-${name}-${Math.random().toString(36).slice(2)}`)

export const removeDir = (dir: string) => Effect.promise(() => rm(dir, { recursive: true, force: true }))

/** Resolves once a batch at `time` or later completed. */
export const batchDone = (ssc: StreamingContext, time: number) =>
  Effect.gen(function* () {
    const done = yield* Deferred.make<void>()
    ssc.addStreamingListener({
      onBatchCompleted: ({ batchInfo }) => {
        if (batchInfo.batchTime >= time) Deferred.doneUnsafe(done, Effect.void)
      }
    })
    return done
  })

/** Starts `ssc`, advances the test clock by `numBatches` batches and waits for the last one. */
export const runBatches = (ssc: StreamingContext, numBatches: number) =>
  Effect.gen(function* () {
    const start = yield* TestClockNow
    const last = (Math.floor(start / ssc.batchDuration) + numBatches) * ssc.batchDuration
    const done = yield* batchDone(ssc, last)
    yield* ssc.start()
    yield* TestClock.adjust(numBatches * ssc.batchDuration)
    // A failed batch ends the timer: report its error instead of waiting forever.
    yield* Effect.raceFirst(Deferred.await(done), Effect.andThen(ssc.awaitTermination(), Effect.never))
  })

/**
 * Spark's `TestInputStream`: the batch at time `t` is `input[t / batch - 1]` (empty after the
 * end), whether or not earlier batches were computed — a queue would be consumed lazily, only
 * at the times some output needs its RDD (as Spark's `QueueInputDStream` is).
 */
export const timeIndexed = <I>(
  ssc: StreamingContext,
  input: ReadonlyArray<ReadonlyArray<I>>,
  partitions: number,
  zeroTime: number
): DStream<I> =>
  ssc
    .queueStream<I>([])
    .transform((_rdd, time) => RDD.parallelize(input[(time - zeroTime) / ssc.batchDuration - 1] ?? [], partitions))

/**
 * Spark's `TestInputStream` as an input node: the batch at time `t` is
 * `input[(t - zeroTime) / batch - 1]` split into `partitions` partitions (empty after the end),
 * and a `null` entry gives no RDD at all — Spark's `None`, for the "input stream return None"
 * cases.
 */
class TestInputNode<T> extends InputNode<T> {
  readonly name = "TestInputStream"
  readonly #input: ReadonlyArray<ReadonlyArray<T> | null>
  readonly #partitions: number

  constructor(
    core: ConstructorParameters<typeof InputNode>[0],
    input: ReadonlyArray<ReadonlyArray<T> | null>,
    partitions: number
  ) {
    super(core)
    this.#input = input
    this.#partitions = partitions
  }

  compute(time: number): RDD<T> | undefined {
    const index = (time - (this.zeroTime ?? 0)) / this.slideMs() - 1
    const selected = index < this.#input.length ? this.#input[index] : []
    if (selected === null) return undefined
    return RDD.parallelize(selected ?? [], this.#partitions)
  }
}

/** Spark's `new TestInputStream(ssc, input, numPartitions)`. */
export const testInputStream = <T>(
  ssc: StreamingContext,
  input: ReadonlyArray<ReadonlyArray<T> | null>,
  partitions = 2
): DStream<T> => ssc.inputNode((core) => new TestInputNode<T>(core, input, partitions))

/** Spark's `testOperation` with one input stream. */
export const testOperation = <I, O>(
  input: ReadonlyArray<ReadonlyArray<I> | null>,
  operation: (s: DStream<I>) => DStream<O>,
  numBatches: number = input.length,
  options: { readonly checkpoint?: boolean; readonly partitions?: number } = {}
) =>
  Effect.gen(function* () {
    const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
    const dir = tempDir("op")
    if (options.checkpoint !== false) ssc.checkpoint(dir)
    const stream = testInputStream(ssc, input, options.partitions ?? 2)
    const outputs: Array<Array<O>> = []
    operation(stream).foreachRDD((rdd) => {
      outputs.push(rdd.collect())
    })
    // A failed batch fails this effect (Spark's testOperation rethrows it); stop and clean up anyway.
    yield* runBatches(ssc, numBatches).pipe(Effect.ensuring(Effect.andThen(ssc.stop(), removeDir(dir))))
    return outputs
  })

/** Spark's `testOperation` with two input streams. */
export const testOperation2 = <I1, I2, O>(
  input1: ReadonlyArray<ReadonlyArray<I1> | null>,
  input2: ReadonlyArray<ReadonlyArray<I2> | null>,
  operation: (a: DStream<I1>, b: DStream<I2>) => DStream<O>,
  numBatches: number = input1.length
) =>
  Effect.gen(function* () {
    const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
    const s1 = testInputStream(ssc, input1, 2)
    const s2 = testInputStream(ssc, input2, 2)
    const outputs: Array<Array<O>> = []
    operation(s1, s2).foreachRDD((rdd) => {
      outputs.push(rdd.collect())
    })
    yield* runBatches(ssc, numBatches).pipe(Effect.ensuring(ssc.stop()))
    return outputs
  })

const canonical = (x: unknown): string => JSON.stringify(x, (_k, v) => (v === undefined ? "__undefined__" : v))

/** Each batch sorted (Spark's `useSet = true` comparisons). */
export const asSets = <O>(batches: ReadonlyArray<ReadonlyArray<O>>): Array<Array<string>> =>
  batches.map((b) => b.map(canonical).sort())
