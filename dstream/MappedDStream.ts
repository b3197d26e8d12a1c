/**
 * A DStream whose batch is a function of its parent's batch of the same time: Spark's
 * `MappedDStream`, `FlatMappedDStream`, `FilteredDStream`, `GlommedDStream`,
 * `MapPartitionedDStream`, `MapValuedDStream`, `FlatMapValuedDStream` and `ShuffledDStream`
 * (reduceByKey, groupByKey, combineByKey) all have this shape, so one class serves them,
 * named after the Spark class it stands for. A time without a parent RDD has none here either.
 *
 * @since 0.1.0
 */
import type { RDD } from "./RDD.ts"
import { DStreamNode } from "./Node.ts"

export class MappedDStream<T, U> extends DStreamNode<U> {
  readonly name: string
  readonly dependencies: ReadonlyArray<DStreamNode<any>>
  readonly #parent: DStreamNode<T>
  readonly #f: (rdd: RDD<T>) => RDD<U>

  constructor(name: string, parent: DStreamNode<T>, f: (rdd: RDD<T>) => RDD<U>) {
    super(parent.ctx)
    this.name = name
    this.#parent = parent
    this.#f = f
    this.dependencies = [parent]
  }

  slideMs(): number {
    return this.#parent.slideMs()
  }

  compute(time: number): RDD<U> | undefined {
    const rdd = this.#parent.getOrCompute(time)
    return rdd === undefined ? undefined : this.#f(rdd)
  }
}
