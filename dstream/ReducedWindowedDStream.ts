/**
 * Spark's `ReducedWindowedDStream`: `reduceByKeyAndWindow` with an inverse function. Each
 * window's value is the previous window's value, minus (inverse-reduced) the batches that left
 * the window, plus the batches that entered it; a key whose window empties keeps its zero
 * value unless the filter function drops it (WindowOperationsSuite "big test").
 *
 * State: the last window's values and the per-batch reduced values still inside a window live
 * in the session's state store (operator id = creation order), so a context restarted from its
 * checkpoint continues the same windows.
 *
 * @since 0.1.0
 */
import { RDD } from "./RDD.ts"
import { DStreamNode, type StateChanges, type StatefulNode } from "./Node.ts"
import { MappedDStream } from "./MappedDStream.ts"
import * as Pairs from "./PairFunctions.ts"

const TIME_KEY = "#time"

export class ReducedWindowedDStream<K, V> extends DStreamNode<readonly [K, V]> implements StatefulNode {
  readonly name = "ReducedWindowedDStream"
  readonly dependencies: ReadonlyArray<DStreamNode<any>>
  readonly operatorId: number
  readonly windowMs: number
  readonly #slideMs: number
  readonly #parentSlideMs: number
  readonly #reduced: DStreamNode<readonly [K, V]>
  readonly #f: (a: V, b: V) => V
  readonly #inv: (a: V, b: V) => V
  readonly #filter: ((kv: readonly [K, V]) => boolean) | undefined
  /** What the store holds for the window (store key -> JSON), to write only what changed. */
  #storedWindow = new Map<string, string>()
  #storedBatches = new Set<number>()

  constructor(
    parent: DStreamNode<readonly [K, V]>,
    f: (a: V, b: V) => V,
    inv: (a: V, b: V) => V,
    filter: ((kv: readonly [K, V]) => boolean) | undefined,
    windowMs: number,
    slideMs: number
  ) {
    super(parent.ctx)
    this.#f = f
    this.#inv = inv
    this.#filter = filter
    this.windowMs = windowMs
    this.#slideMs = slideMs
    this.#parentSlideMs = parent.slideMs()
    this.#reduced = new MappedDStream(
      "ShuffledDStream",
      parent,
      (rdd) => new RDD([Pairs.reduceByKey(rdd.collect(), f)])
    )
    // Spark persists both: the reduced batches and the windows are reused by the next window.
    this.#reduced.storageLevel = "MEMORY_ONLY_SER"
    this.storageLevel = "MEMORY_ONLY_SER"
    this.mustCheckpoint = true
    this.dependencies = [this.#reduced]
    this.operatorId = parent.ctx.nextOperatorId()
  }

  slideMs(): number {
    return this.#slideMs
  }

  override parentRememberMs(): number {
    return (this.rememberMs ?? 0) + this.windowMs
  }

  /** Spark's `ReducedWindowedDStream.persist`: the windows and the reduced batches. */
  override persist(level: string): void {
    this.storageLevel = level
    this.#reduced.storageLevel = level
  }

  override stateful(): StatefulNode {
    return this
  }

  compute(time: number): RDD<readonly [K, V]> | undefined {
    const ps = this.#parentSlideMs
    const curBegin = time - this.windowMs + ps
    const prevBegin = curBegin - this.#slideMs
    const prevEnd = time - this.#slideMs
    const oldRDDs = this.#reduced.slice(prevBegin, curBegin - ps)
    const newRDDs = this.#reduced.slice(prevEnd + ps, time)
    const previous = this.getOrCompute(prevEnd)
    // Per key: [key, previous window value, reduced old values, reduced new values].
    const merged = new Map<
      unknown,
      { k: K; prev: { v: V } | undefined; old: V | undefined; hasOld: boolean; neu: V | undefined; hasNew: boolean }
    >()
    const entry = (k: K) => {
      const h = Pairs.hashKey(k)
      let e = merged.get(h)
      if (e === undefined) {
        e = { k, prev: undefined, old: undefined, hasOld: false, neu: undefined, hasNew: false }
        merged.set(h, e)
      }
      return e
    }
    if (previous !== undefined) for (const [k, v] of previous.collect()) entry(k).prev = { v }
    for (const rdd of oldRDDs) {
      for (const [k, v] of rdd.collect()) {
        const e = entry(k)
        e.old = e.hasOld ? this.#f(e.old as V, v) : v
        e.hasOld = true
      }
    }
    for (const rdd of newRDDs) {
      for (const [k, v] of rdd.collect()) {
        const e = entry(k)
        e.neu = e.hasNew ? this.#f(e.neu as V, v) : v
        e.hasNew = true
      }
    }
    const out: Array<readonly [K, V]> = []
    for (const e of merged.values()) {
      let value: V
      if (e.prev === undefined) {
        if (!e.hasNew) {
          throw new Error(
            "Neither previous window has value for key, nor new values found. Are you sure your key class hashes consistently?"
          )
        }
        value = e.neu as V
      } else {
        value = e.prev.v
        if (e.hasOld) value = this.#inv(value, e.old as V)
        if (e.hasNew) value = this.#f(value, e.neu as V)
      }
      const kv = [e.k, value] as const
      if (this.#filter === undefined || this.#filter(kv)) out.push(kv)
    }
    return new RDD([out])
  }

  drainChanges(time: number): StateChanges {
    const puts: Array<readonly [string, unknown]> = []
    const removes: Array<string> = []
    // The reduced batch of this time is needed by later windows: keep it in the store.
    if (this.#reduced.zeroTime !== undefined && this.#reduced.isTimeValid(time)) {
      const rdd = this.#reduced.getOrCompute(time)
      if (rdd !== undefined) {
        puts.push([`b${time}`, rdd.collect()])
        this.#storedBatches.add(time)
      }
    }
    for (const t of this.#storedBatches) {
      if (t <= time - this.windowMs - this.#slideMs) {
        removes.push(`b${t}`)
        this.#storedBatches.delete(t)
      }
    }
    const window = this.generated.get(time)
    if (window !== undefined) {
      const now = new Map<string, readonly [K, V]>()
      for (const kv of window.collect()) now.set(`w${Pairs.storeKey(kv[0])}`, kv)
      for (const [key, kv] of now) {
        const json = JSON.stringify(kv)
        if (this.#storedWindow.get(key) !== json) {
          puts.push([key, kv])
          this.#storedWindow.set(key, json)
        }
      }
      for (const key of this.#storedWindow.keys()) {
        if (!now.has(key)) {
          removes.push(key)
          this.#storedWindow.delete(key)
        }
      }
      puts.push([TIME_KEY, time])
    }
    return { puts, removes }
  }

  restore(entries: ReadonlyArray<readonly [string, unknown]>, _lastBatchTime: number): void {
    let windowTime: number | undefined
    const window: Array<readonly [K, V]> = []
    for (const [key, value] of entries) {
      if (key === TIME_KEY) windowTime = value as number
      else if (key.startsWith("w")) {
        const kv = value as readonly [K, V]
        window.push(kv)
        this.#storedWindow.set(key, JSON.stringify(kv))
      } else if (key.startsWith("b")) {
        const t = Number(key.slice(1))
        this.#storedBatches.add(t)
        this.#reduced.generated.set(t, new RDD([value as Array<readonly [K, V]>]))
      }
    }
    if (windowTime !== undefined) this.generated.set(windowTime, new RDD([window]))
  }
}
