/**
 * Spark's `QueueInputDStream` (`queueStream`): each batch takes the next element of the queue
 * (`oneAtATime`, the default) or everything queued (a union); an empty queue gives the default
 * RDD, or an empty one. The queue is the caller's array, consumed as Spark consumes its
 * `Queue`, so elements pushed after `start` reach later batches.
 *
 * @since 0.1.0
 */
import { RDD } from "./RDD.ts"
import { InputNode } from "./Node.ts"
import type { ContextCore } from "./Node.ts"

const toRDD = <T>(item: RDD<T> | ReadonlyArray<T>): RDD<T> => (item instanceof RDD ? item : new RDD([item.slice()]))

export class QueueInputDStream<T> extends InputNode<T> {
  readonly name = "QueueInputDStream"
  readonly #queue: Array<RDD<T> | ReadonlyArray<T>>
  readonly #oneAtATime: boolean
  readonly #defaultRDD: RDD<T> | undefined

  constructor(
    ctx: ContextCore,
    queue: Array<RDD<T> | ReadonlyArray<T>>,
    oneAtATime: boolean,
    defaultRDD: RDD<T> | ReadonlyArray<T> | undefined
  ) {
    super(ctx)
    this.#queue = queue
    this.#oneAtATime = oneAtATime
    this.#defaultRDD = defaultRDD === undefined ? undefined : toRDD(defaultRDD)
  }

  compute(_time: number): RDD<T> | undefined {
    if (this.#queue.length > 0) {
      if (this.#oneAtATime) return toRDD(this.#queue.shift() as RDD<T> | ReadonlyArray<T>)
      const all = this.#queue.splice(0, this.#queue.length)
      const parts: Array<ReadonlyArray<T>> = []
      for (const item of all) for (const p of toRDD(item).partitions) parts.push(p)
      return new RDD(parts)
    }
    return this.#defaultRDD ?? RDD.empty<T>()
  }
}
