/**
 * Spark's `ReceiverInputDStream`: a receiver's stored items, cut into one block per batch at
 * the batch time (what was stored before the batch time goes into that batch).
 *
 * `spark.streaming.receiver.maxRate` (records per second, 0 = unlimited) caps a batch at
 * `maxRate * batchDuration`: Spark's rate limiter makes `store` wait; a JavaScript receiver
 * cannot be blocked, so the items over the limit wait in the receiver's buffer for the next
 * batches instead — the same records per batch. With `spark.streaming.backpressure.enabled`,
 * the rate published by the stream's `RateController` (Spark's PID estimator, see
 * `PIDRateEstimator.ts`) caps it as well — the smaller of both — starting at
 * `spark.streaming.backpressure.initialRate`.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { RDD } from "./RDD.ts"
import { type ContextCore, InputNode } from "./Node.ts"
import { RateController, type RateEstimator, ReceiverRateLimit } from "./PIDRateEstimator.ts"
import type { ReceivedBlockLog } from "./ReceivedBlockLog.ts"
import type { Receiver } from "./Receiver.ts"

export class ReceiverInputDStream<T> extends InputNode<T> {
  readonly name: string
  readonly receiver: Receiver<T>
  readonly #blocks = new Map<number, Array<T>>()
  #limit: ReceiverRateLimit | undefined = undefined
  /** The backpressure controller, when `spark.streaming.backpressure.enabled` is on. */
  rateController: RateController | undefined = undefined

  constructor(ctx: ContextCore, receiver: Receiver<T>, name = "ReceiverInputDStream") {
    super(ctx)
    this.receiver = receiver
    this.name = name
  }

  /** @internal reads the rate settings at start; `estimator` turns backpressure on. */
  configureRate(estimator: RateEstimator | undefined): void {
    const limit = new ReceiverRateLimit(this.ctx.session.state.conf)
    this.#limit = limit
    this.rateController =
      estimator === undefined ? undefined : new RateController(this.id, estimator, (rate) => limit.updateRate(rate))
  }

  /** The write-ahead log, when `spark.streaming.receiver.writeAheadLog.enable` is on. */
  log: ReceivedBlockLog | undefined = undefined
  /** Records taken into batches so far, counted like the log's record numbers. */
  #taken = 0
  readonly #takenAt = new Map<number, number>()

  /**
   * @internal Turns the write-ahead log on: afresh (`consumed` undefined: any old log is removed)
   * or recovering from a checkpoint where batches had consumed `consumed` records.
   */
  attachLog(log: ReceivedBlockLog, consumed: number | undefined): void {
    this.log = log
    if (consumed === undefined) {
      log.reset()
      this.#taken = 0
      this.receiver.attachLog(log, [])
    } else {
      const pending = log.recover(consumed)
      this.#taken = consumed
      this.receiver.attachLog(log, pending as Array<T>)
    }
  }

  /** @internal Records consumed by the batches up to `time` (checkpointed with that batch). */
  consumedThrough(time: number): number | undefined {
    const n = this.#takenAt.get(time)
    for (const t of this.#takenAt.keys()) if (t <= time) this.#takenAt.delete(t)
    return n
  }

  /** The records-per-second limit in force (`Infinity`: none). */
  currentRateLimit(): number {
    return (this.#limit ?? new ReceiverRateLimit(this.ctx.session.state.conf)).rate
  }

  override prepare(time: number): Effect.Effect<void> {
    return Effect.sync(() => {
      const limit = this.#limit ?? new ReceiverRateLimit(this.ctx.session.state.conf)
      const block = this.receiver.takeBlock(limit.perBatch(this.ctx.batchMs))
      this.#taken += block.length
      if (this.log !== undefined) this.#takenAt.set(time, this.#taken)
      this.#blocks.set(time, block)
    })
  }

  compute(time: number): RDD<T> | undefined {
    const block = this.#blocks.get(time) ?? []
    this.#blocks.delete(time)
    return new RDD([block])
  }
}
