/**
 * Spark's `ReceiverInputDStream`: a receiver's stored items, cut into one block per batch at
 * the batch time (what was stored before the batch time goes into that batch).
 *
 * `spark.streaming.receiver.maxRate` (records per second, 0 = unlimited) caps a batch at
 * `maxRate * batchDuration`: Spark's rate limiter makes `store` wait; a JavaScript receiver
 * cannot be blocked, so the items over the limit wait in the receiver's buffer for the next
 * batches instead — the same records per batch.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { RDD } from "./RDD.ts"
import { type ContextCore, InputNode } from "./Node.ts"
import type { Receiver } from "./Receiver.ts"

export class ReceiverInputDStream<T> extends InputNode<T> {
  readonly name: string
  readonly receiver: Receiver<T>
  readonly #blocks = new Map<number, Array<T>>()

  constructor(ctx: ContextCore, receiver: Receiver<T>, name = "ReceiverInputDStream") {
    super(ctx)
    this.receiver = receiver
    this.name = name
  }

  override prepare(time: number): Effect.Effect<void> {
    return Effect.sync(() => {
      const maxRate = Number(this.ctx.session.state.conf.get("spark.streaming.receiver.maxRate") ?? "0")
      const max = maxRate > 0 ? Math.max(1, Math.floor((maxRate * this.ctx.batchMs) / 1000)) : undefined
      this.#blocks.set(time, this.receiver.takeBlock(max))
    })
  }

  compute(time: number): RDD<T> | undefined {
    const block = this.#blocks.get(time) ?? []
    this.#blocks.delete(time)
    return new RDD([block])
  }
}
