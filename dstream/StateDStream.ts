/**
 * Spark's `StateDStream` (`updateStateByKey`): every batch, the update function runs for every
 * key that has state or new values — `update(values, state)` — and a key whose function returns
 * `undefined` loses its state. The batch's output is the whole state. Spark's three forms of the
 * update function are kept: per key `(values, state)`, per key with the batch time
 * `(time, key, values, state)`, and over the batch's whole cogroup `(entries) => pairs`
 * (BasicOperationsSuite "updateStateByKey - testing time stamps as input" and "- with initial
 * value RDD"). A batch without a parent RDD re-applies the function to the old state with no
 * values, as Spark's `StateDStream.compute` does ("updateStateByKey - object lifecycle").
 *
 * The state lives in the session's state store (one entry per key, written only when it
 * changed), so a context restarted from its checkpoint continues from the last batch's state.
 *
 * @since 0.1.0
 */
import { RDD } from "./RDD.ts"
import { DStreamNode, type StateChanges, type StatefulNode } from "./Node.ts"
import * as Pairs from "./PairFunctions.ts"

const TIME_KEY = "#time"

/**
 * The update function in one of Spark's three forms: `simple` `(values, state)`, `timed`
 * `(time, key, values, state)`, or `iterator` over every `[key, values, state]` of the batch.
 */
export type UpdateFunction<K, V, S> =
  | { readonly _tag: "simple"; readonly f: (values: Array<V>, state: S | undefined) => S | undefined }
  | {
      readonly _tag: "timed"
      readonly f: (time: number, key: K, values: Array<V>, state: S | undefined) => S | undefined
    }
  | {
      readonly _tag: "iterator"
      readonly f: (entries: IterableIterator<readonly [K, Array<V>, S | undefined]>) => Iterable<readonly [K, S]>
    }

export class StateDStream<K, V, S> extends DStreamNode<readonly [K, S]> implements StatefulNode {
  readonly name = "StateDStream"
  readonly dependencies: ReadonlyArray<DStreamNode<any>>
  readonly operatorId: number
  readonly #parent: DStreamNode<readonly [K, V]>
  readonly #update: UpdateFunction<K, V, S>
  readonly #initial: ReadonlyArray<readonly [K, S]> | undefined
  #stored = new Map<string, string>()

  constructor(
    parent: DStreamNode<readonly [K, V]>,
    update: UpdateFunction<K, V, S>,
    initial: ReadonlyArray<readonly [K, S]> | undefined
  ) {
    super(parent.ctx)
    this.#parent = parent
    this.#update = update
    this.#initial = initial
    this.dependencies = [parent]
    this.mustCheckpoint = true
    this.storageLevel = "MEMORY_ONLY_SER"
    this.operatorId = parent.ctx.nextOperatorId()
  }

  slideMs(): number {
    return this.#parent.slideMs()
  }

  override stateful(): StatefulNode {
    return this
  }

  compute(time: number): RDD<readonly [K, S]> | undefined {
    const prev = this.getOrCompute(time - this.slideMs())
    const data = this.#parent.getOrCompute(time)
    if (prev === undefined && data === undefined) return undefined
    const prevPairs = prev !== undefined ? prev.collect() : (this.#initial ?? [])
    const usePrev = prev !== undefined || this.#initial !== undefined
    // Spark cogroups the previous state with the batch's grouped values: each key once.
    const groups = new Map<unknown, { k: K; values: Array<V>; state: { s: S } | undefined }>()
    if (usePrev) {
      for (const [k, s] of prevPairs) groups.set(Pairs.hashKey(k), { k, values: [], state: { s } })
    }
    if (data !== undefined) {
      for (const [k, v] of data.collect()) {
        const h = Pairs.hashKey(k)
        const g = groups.get(h)
        if (g === undefined) groups.set(h, { k, values: [v], state: undefined })
        else g.values.push(v)
      }
    }
    const out: Array<readonly [K, S]> = []
    const update = this.#update
    switch (update._tag) {
      case "simple":
        for (const g of groups.values()) {
          const s = update.f(g.values, g.state?.s)
          if (s !== undefined) out.push([g.k, s])
        }
        break
      case "timed":
        for (const g of groups.values()) {
          const s = update.f(time, g.k, g.values, g.state?.s)
          if (s !== undefined) out.push([g.k, s])
        }
        break
      case "iterator": {
        const entries: Array<readonly [K, Array<V>, S | undefined]> = []
        for (const g of groups.values()) entries.push([g.k, g.values, g.state?.s])
        for (const kv of update.f(entries.values())) out.push(kv)
        break
      }
    }
    return new RDD([out])
  }

  drainChanges(time: number): StateChanges {
    const rdd = this.generated.get(time)
    if (rdd === undefined) return { puts: [], removes: [] }
    const puts: Array<readonly [string, unknown]> = []
    const removes: Array<string> = []
    const now = new Set<string>()
    for (const kv of rdd.collect()) {
      const key = Pairs.storeKey(kv[0])
      now.add(key)
      const json = JSON.stringify(kv)
      if (this.#stored.get(key) !== json) {
        puts.push([key, kv])
        this.#stored.set(key, json)
      }
    }
    for (const key of this.#stored.keys()) {
      if (!now.has(key)) {
        removes.push(key)
        this.#stored.delete(key)
      }
    }
    puts.push([TIME_KEY, time])
    return { puts, removes }
  }

  restore(entries: ReadonlyArray<readonly [string, unknown]>, _lastBatchTime: number): void {
    let time: number | undefined
    const pairs: Array<readonly [K, S]> = []
    for (const [key, value] of entries) {
      if (key === TIME_KEY) time = value as number
      else {
        pairs.push(value as readonly [K, S])
        this.#stored.set(key, JSON.stringify(value))
      }
    }
    if (time !== undefined) this.generated.set(time, new RDD([pairs]))
  }
}
