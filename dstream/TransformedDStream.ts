/**
 * Spark's `TransformedDStream`: `transform`, `transformWith`, `StreamingContext.transform` and
 * the per-batch joins and cogroups. Every parent must have an RDD at the batch time; a missing
 * one fails the batch with Spark's "Couldn't generate RDD from parent at time ...".
 *
 * @since 0.1.0
 */
import type { RDD } from "./RDD.ts"
import { DStreamNode, ms } from "./Node.ts"

export class TransformedDStream<U> extends DStreamNode<U> {
  readonly name = "TransformedDStream"
  readonly dependencies: ReadonlyArray<DStreamNode<any>>
  readonly #f: (rdds: ReadonlyArray<RDD<any>>, time: number) => RDD<U>

  constructor(parents: ReadonlyArray<DStreamNode<any>>, f: (rdds: ReadonlyArray<RDD<any>>, time: number) => RDD<U>) {
    super(parents[0].ctx)
    this.dependencies = parents
    this.#f = f
  }

  slideMs(): number {
    return this.dependencies[0].slideMs()
  }

  compute(time: number): RDD<U> | undefined {
    const rdds = this.dependencies.map((p) => {
      const rdd = p.getOrCompute(time)
      if (rdd === undefined) throw new Error(`Couldn't generate RDD from parent at time ${ms(time)}`)
      return rdd
    })
    const out = this.#f(rdds, time)
    if (out === undefined || out === null) {
      // Spark's message, with RDD.empty() for SparkContext.emptyRDD().
      throw new Error(
        "Transform function must not return null. Return RDD.empty() instead to represent no element as the result of transformation."
      )
    }
    return out
  }
}
