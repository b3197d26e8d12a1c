/**
 * Spark's `ForEachDStream`: an output operation. At each batch time where its parent has an
 * RDD it yields one job, `fn(rdd, time)`; jobs run in the order the outputs were registered.
 *
 * @since 0.1.0
 */
import type { RDD } from "./RDD.ts"
import { DStreamNode } from "./Node.ts"

/** What an output operation's function may return: nothing, a Promise, or an Effect. */
export type OutputResult = unknown

export class ForEachDStream<T> extends DStreamNode<never> {
  readonly name = "ForEachDStream"
  readonly dependencies: ReadonlyArray<DStreamNode<any>>
  readonly #parent: DStreamNode<T>
  readonly fn: (rdd: RDD<T>, time: number) => OutputResult
  /** Spark's output operation description (`print`, `foreachRDD`, ...). */
  readonly description: string

  constructor(parent: DStreamNode<T>, fn: (rdd: RDD<T>, time: number) => OutputResult, description: string) {
    super(parent.ctx)
    this.#parent = parent
    this.fn = fn
    this.description = description
    this.dependencies = [parent]
  }

  slideMs(): number {
    return this.#parent.slideMs()
  }

  compute(_time: number): RDD<never> | undefined {
    return undefined
  }

  /** The job of `time`: the parent's RDD to hand to `fn`, or `undefined` when there is none. */
  generateJob(time: number): RDD<T> | undefined {
    return this.#parent.getOrCompute(time)
  }
}
