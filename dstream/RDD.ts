/**
 * `RDD<T>`: one materialized batch of a DStream (Spark's `RDD` as the DStream API sees it).
 *
 * Spark's RDDs are lazy and distributed; here a batch is already computed when a DStream
 * operator or an output operation sees it, so an RDD is an immutable list of partitions (arrays)
 * and every method is a plain synchronous call. Partitions are kept because `glom`,
 * `mapPartitions`, `foreachPartition` and `getNumPartitions` expose them, as in Spark.
 *
 * @example
 * ```ts
 * import { RDD } from "tributary-streaming/dstream"
 * const rdd = RDD.parallelize([1, 2, 3, 4], 2)
 * rdd.glom()                 // [[1, 2], [3, 4]]
 * rdd.map((x) => x * 10).collect()   // [10, 20, 30, 40]
 * ```
 * @since 0.1.0
 */
import type { Schema } from "effect"
import type { StructType } from "../core/DataType.ts"
import type { DataFrame } from "../structured/api/DataFrame.ts"
import type { Row } from "../structured/api/RowTypes.ts"
import type { SessionShape } from "../structured/api/Session.ts"
import * as Pairs from "./PairFunctions.ts"

const EMPTY: ReadonlyArray<ReadonlyArray<never>> = [[]]

/**
 * An immutable, array-backed batch.
 *
 * @since 0.1.0
 */
export class RDD<T> {
  /** The partitions, in order; the batch's elements are their concatenation. */
  readonly partitions: ReadonlyArray<ReadonlyArray<T>>
  /** @internal the session `toDF` builds DataFrames through (set for batches a context makes). */
  readonly session: SessionShape | undefined

  constructor(partitions: ReadonlyArray<ReadonlyArray<T>>, session?: SessionShape) {
    this.partitions = partitions.length === 0 ? EMPTY : partitions
    this.session = session
  }

  /**
   * Splits `items` into `numSlices` partitions the way Spark's `ParallelCollectionRDD.slice`
   * does (partition `i` holds positions `i*n/k` until `(i+1)*n/k`).
   */
  static parallelize<T>(items: Iterable<T>, numSlices = 1): RDD<T> {
    const all = Array.from(items)
    const k = Math.max(1, Math.floor(numSlices))
    const parts: Array<Array<T>> = []
    for (let i = 0; i < k; i++) {
      parts.push(all.slice(Math.floor((i * all.length) / k), Math.floor(((i + 1) * all.length) / k)))
    }
    return new RDD(parts)
  }

  /** An RDD with no elements (one empty partition). */
  static empty<T>(session?: SessionShape): RDD<T> {
    return new RDD<T>(EMPTY, session)
  }

  /** @internal the same partitions attached to a session. */
  withSession(session: SessionShape | undefined): RDD<T> {
    return session === undefined || this.session === session ? this : new RDD(this.partitions, session)
  }

  /** Every element, in partition order. */
  collect(): Array<T> {
    if (this.partitions.length === 1) return this.partitions[0].slice()
    const out: Array<T> = []
    for (const p of this.partitions) for (let i = 0; i < p.length; i++) out.push(p[i])
    return out
  }

  count(): number {
    let n = 0
    for (const p of this.partitions) n += p.length
    return n
  }

  isEmpty(): boolean {
    for (const p of this.partitions) if (p.length > 0) return false
    return true
  }

  getNumPartitions(): number {
    return this.partitions.length
  }

  /** The first `n` elements. */
  take(n: number): Array<T> {
    const out: Array<T> = []
    for (const p of this.partitions) {
      for (let i = 0; i < p.length && out.length < n; i++) out.push(p[i])
      if (out.length >= n) break
    }
    return out
  }

  first(): T | undefined {
    return this.take(1)[0]
  }

  map<U>(f: (t: T) => U): RDD<U> {
    return new RDD(
      this.partitions.map((p) => {
        const out = new Array<U>(p.length)
        for (let i = 0; i < p.length; i++) out[i] = f(p[i])
        return out
      }),
      this.session
    )
  }

  filter(f: (t: T) => boolean): RDD<T> {
    return new RDD(
      this.partitions.map((p) => {
        const out: Array<T> = []
        for (let i = 0; i < p.length; i++) if (f(p[i])) out.push(p[i])
        return out
      }),
      this.session
    )
  }

  flatMap<U>(f: (t: T) => Iterable<U>): RDD<U> {
    return new RDD(
      this.partitions.map((p) => {
        const out: Array<U> = []
        for (let i = 0; i < p.length; i++) for (const u of f(p[i])) out.push(u)
        return out
      }),
      this.session
    )
  }

  /** One output partition per input partition, from `f` over the partition's elements. */
  mapPartitions<U>(f: (partition: ReadonlyArray<T>) => Iterable<U>): RDD<U> {
    return new RDD(
      this.partitions.map((p) => Array.from(f(p))),
      this.session
    )
  }

  /** Each partition as one array element (Spark's `glom`). */
  glom(): RDD<Array<T>> {
    return new RDD(
      this.partitions.map((p) => [p.slice()]),
      this.session
    )
  }

  /**
   * Reduces the elements with `f`; `undefined` for an empty RDD (Spark throws
   * `UnsupportedOperationException("empty collection")`).
   */
  reduce(f: (a: T, b: T) => T): T | undefined {
    let acc: T | undefined
    let has = false
    for (const p of this.partitions) {
      for (let i = 0; i < p.length; i++) {
        if (has) acc = f(acc as T, p[i])
        else {
          acc = p[i]
          has = true
        }
      }
    }
    return acc
  }

  foreach(f: (t: T) => void): void {
    for (const p of this.partitions) for (let i = 0; i < p.length; i++) f(p[i])
  }

  foreachPartition(f: (partition: ReadonlyArray<T>) => void): void {
    for (const p of this.partitions) f(p)
  }

  /** The partitions of both, this RDD's first (Spark's `UnionRDD`). */
  union(other: RDD<T>): RDD<T> {
    return new RDD([...this.partitions, ...other.partitions], this.session ?? other.session)
  }

  /** Round-robin into `n` partitions (Spark's `repartition`, without its random start). */
  repartition(n: number): RDD<T> {
    const k = Math.max(1, Math.floor(n))
    const parts: Array<Array<T>> = Array.from({ length: k }, () => [])
    let i = 0
    for (const p of this.partitions) for (let j = 0; j < p.length; j++) parts[i++ % k].push(p[j])
    return new RDD(parts, this.session)
  }

  /** Counts of each distinct element, as `[element, count]` pairs. */
  countByValue(): Array<readonly [T, number]> {
    return Pairs.countByValue(this.collect())
  }

  /** Pair RDDs: values reduced per key. */
  reduceByKey<K, V>(this: RDD<readonly [K, V]>, f: (a: V, b: V) => V): RDD<readonly [K, V]> {
    return new RDD([Pairs.reduceByKey(this.collect(), f)], this.session)
  }

  /** Pair RDDs: the values of each key, in order. */
  groupByKey<K, V>(this: RDD<readonly [K, V]>): RDD<readonly [K, Array<V>]> {
    return new RDD([Pairs.groupByKey(this.collect())], this.session)
  }

  mapValues<K, V, U>(this: RDD<readonly [K, V]>, f: (v: V) => U): RDD<readonly [K, U]> {
    return this.map(([k, v]) => [k, f(v)] as const)
  }

  /** Pair RDDs: Spark's inner `join`. */
  join<K, V, W>(this: RDD<readonly [K, V]>, other: RDD<readonly [K, W]>): RDD<readonly [K, readonly [V, W]]> {
    return new RDD([Pairs.join(this.collect(), other.collect(), "inner")], this.session) as any
  }

  leftOuterJoin<K, V, W>(
    this: RDD<readonly [K, V]>,
    other: RDD<readonly [K, W]>
  ): RDD<readonly [K, readonly [V, W | undefined]]> {
    return new RDD([Pairs.join(this.collect(), other.collect(), "left")], this.session) as any
  }

  rightOuterJoin<K, V, W>(
    this: RDD<readonly [K, V]>,
    other: RDD<readonly [K, W]>
  ): RDD<readonly [K, readonly [V | undefined, W]]> {
    return new RDD([Pairs.join(this.collect(), other.collect(), "right")], this.session) as any
  }

  fullOuterJoin<K, V, W>(
    this: RDD<readonly [K, V]>,
    other: RDD<readonly [K, W]>
  ): RDD<readonly [K, readonly [V | undefined, W | undefined]]> {
    return new RDD([Pairs.join(this.collect(), other.collect(), "full")], this.session) as any
  }

  cogroup<K, V, W>(
    this: RDD<readonly [K, V]>,
    other: RDD<readonly [K, W]>
  ): RDD<readonly [K, readonly [Array<V>, Array<W>]]> {
    return new RDD([Pairs.cogroup(this.collect(), other.collect())], this.session)
  }

  /**
   * The bridge to DataFrames: a batch DataFrame of this RDD's elements (plain objects) through
   * the session's `createDataFrame`. `schema` is an Effect Schema, a DDL string or a StructType.
   * An RDD made outside a StreamingContext (`RDD.parallelize`) has no session: pass one.
   */
  toDF<S extends Schema.Top>(schema: S, session?: SessionShape): DataFrame<S["Type"]>
  toDF(schema: StructType | string, session?: SessionShape): DataFrame<Row>
  toDF(schema: any, session?: SessionShape): DataFrame<any> {
    const s = session ?? this.session
    if (s === undefined) {
      throw new Error("RDD.toDF: this RDD has no session; pass the Session (yield* Session) as the second argument")
    }
    return s.createDataFrame(this.collect() as Iterable<any>, schema)
  }

  toString(): string {
    return `RDD[${this.partitions.length} partitions, ${this.count()} elements]`
  }
}
