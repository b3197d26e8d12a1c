/**
 * Spark's `UnionDStream`: the partitions of every parent's batch, in parent order. All parents
 * share one slide duration (checked when the union is built); a parent without an RDD at a
 * batch time fails the batch, as in Spark.
 *
 * @since 0.1.0
 */
import { RDD } from "./RDD.ts"
import { DStreamNode, ms } from "./Node.ts"

export class UnionDStream<T> extends DStreamNode<T> {
  readonly name = "UnionDStream"
  readonly dependencies: ReadonlyArray<DStreamNode<any>>

  constructor(parents: ReadonlyArray<DStreamNode<T>>) {
    super(parents[0].ctx)
    this.dependencies = parents
  }

  slideMs(): number {
    return this.dependencies[0].slideMs()
  }

  compute(time: number): RDD<T> | undefined {
    const parts: Array<ReadonlyArray<T>> = []
    for (const p of this.dependencies) {
      const rdd = p.getOrCompute(time)
      if (rdd === undefined) throw new Error(`Could not generate RDD from a parent for unifying at time ${ms(time)}`)
      for (const part of rdd.partitions) parts.push(part)
    }
    return new RDD(parts)
  }
}
