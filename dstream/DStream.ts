/**
 * `DStream<T>`: a discretized stream, Spark's `DStream` and `PairDStreamFunctions`.
 *
 * Building is synchronous and never throws: every transformation returns a new DStream, and
 * misuse (adding operations after `start`, a window that is not a multiple of the batch
 * duration) gives a DStream whose `buildError` says what is wrong, with Spark's message; the
 * context reports it from `start` (or, after start, from `awaitTermination`). Pair operations
 * are typed through a `this` parameter, so they exist on `DStream<readonly [K, V]>` only.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { StreamingContext } from "tributary-streaming/dstream"
 * const program = Effect.gen(function* () {
 *   const ssc = yield* StreamingContext.make({ batchDuration: "1 second" })
 *   const lines = ssc.queueStream([["a b", "a"], ["b"]])
 *   lines.flatMap((l) => l.split(" ")).map((w) => [w, 1] as const).reduceByKey((a, b) => a + b).print()
 *   yield* ssc.start()
 * })
 * ```
 * @since 0.1.0
 */
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Console, Duration, Effect } from "effect"
import { parseDurationMs } from "../core/Durations.ts"
import { IllegalStateError } from "../core/Errors.ts"
import { ForEachDStream } from "./ForEachDStream.ts"
import { InternalMapWithStateDStream } from "./MapWithStateDStream.ts"
import { MappedDStream } from "./MappedDStream.ts"
import type { ContextCore, DStreamNode } from "./Node.ts"
import * as Pairs from "./PairFunctions.ts"
import { RDD } from "./RDD.ts"
import { ReducedWindowedDStream } from "./ReducedWindowedDStream.ts"
import type { StateSpec } from "./State.ts"
import type { StreamingContext } from "./StreamingContext.ts"
import { StateDStream, type UpdateFunction } from "./StateDStream.ts"
import { TransformedDStream } from "./TransformedDStream.ts"
import { UnionDStream } from "./UnionDStream.ts"
import { checkWindow, WindowedDStream } from "./WindowedDStream.ts"

/** A duration: an Effect duration input (`"2 seconds"`), a Spark interval string, or milliseconds. */
export type DurationInput = Duration.Input | string | number

/** Literal types widened (`1` to `number`), so `map((w) => [w, 1] as const).reduceByKey((a, b) => a + b)` types. */
export type Widen<V> = V extends number ? number : V extends string ? string : V extends boolean ? boolean : V

/** What an output function may return: nothing, a Promise, or an Effect. */
export type OutputReturn = void | Promise<unknown> | Effect.Effect<unknown, unknown, never>

/** @internal the context services a DStream needs while building. */
export interface BuildContext extends ContextCore {
  readonly recordBuildError: (error: IllegalStateError) => void
}

const durationMs = (d: DurationInput): number | undefined => {
  const ms = parseDurationMs(d)
  return ms !== undefined && ms > 0 ? ms : undefined
}

/** Spark's `Time.toString` and the element formatting of `print` (tuples as `(a,1)`). */
export const formatElement = (x: unknown): string => {
  if (Array.isArray(x)) return `(${x.map(formatElement).join(",")})`
  if (x === undefined) return "None"
  if (x === null) return "null"
  if (x instanceof Date) return x.toISOString()
  if (typeof x === "object") return JSON.stringify(x)
  return String(x)
}

/**
 * A discretized stream.
 *
 * @since 0.1.0
 */
export class DStream<T> {
  /** @internal */
  readonly node: DStreamNode<T>
  /** Set when this DStream could not be built (Spark would have thrown); the context reports it. */
  readonly buildError: IllegalStateError | undefined

  /** @internal */
  constructor(node: DStreamNode<T>, buildError?: IllegalStateError) {
    this.node = node
    this.buildError = buildError
  }

  /** @internal */
  get ctx(): BuildContext {
    return this.node.ctx as BuildContext
  }

  /** The StreamingContext this stream belongs to (Spark's `DStream.context`). */
  get context(): StreamingContext {
    return this.node.ctx.owner as StreamingContext
  }

  /** The slide duration in milliseconds (the batch duration, unless windowed). */
  get slideDuration(): number {
    return this.node.slideMs()
  }

  /**
   * Spark's `rememberDuration` (ms): how long this stream keeps its batches' RDDs; set when the
   * context starts (`undefined` before). Parents of windows keep theirs longer by the window.
   */
  get rememberDuration(): number | undefined {
    return this.node.rememberMs
  }

  /** Spark's `checkpointDuration` (ms), `undefined` when this stream does not checkpoint. */
  get checkpointDuration(): number | undefined {
    return this.node.checkpointMs
  }

  /** Spark's `windowDuration` (ms) of a windowed stream; `undefined` for other streams. */
  get windowDuration(): number | undefined {
    const w = (this.node as { readonly windowMs?: unknown }).windowMs
    return typeof w === "number" ? w : undefined
  }

  /**
   * Spark's `generatedRDDs`: the RDDs this stream computed and still remembers, by batch time
   * (older ones are dropped after each batch, per `rememberDuration`; BasicOperationsSuite "rdd
   * cleanup" cases).
   */
  get generatedRDDs(): ReadonlyMap<number, RDD<T>> {
    return this.node.generated
  }

  /** Spark's `dependencies`: the streams this one is computed from. */
  get dependencies(): ReadonlyArray<DStream<unknown>> {
    return this.node.dependencies.map((d) => new DStream<unknown>(d))
  }

  /** Spark's `DStream.validateAtInit`: no new operations once the context started or stopped. */
  protected initError(): IllegalStateError | undefined {
    switch (this.ctx.status()) {
      case "INITIALIZED":
        return undefined
      case "ACTIVE":
        return new IllegalStateError({
          message: "Adding new inputs, transformations, and output operations after starting a context is not supported"
        })
      case "STOPPED":
        return new IllegalStateError({
          message: "Adding new inputs, transformations, and output operations after stopping a context is not supported"
        })
    }
  }

  /** @internal Builds a derived stream, or one carrying the first build error on the way. */
  derive<U>(
    make: () => DStreamNode<U>,
    check?: () => string | undefined,
    others: ReadonlyArray<DStream<any>> = []
  ): DStream<U> {
    const inherited = this.buildError ?? others.find((o) => o.buildError !== undefined)?.buildError
    if (inherited !== undefined) return new DStream<U>(this.node as unknown as DStreamNode<U>, inherited)
    const error =
      this.initError() ??
      (check === undefined
        ? undefined
        : ((m) => (m === undefined ? undefined : new IllegalStateError({ message: m })))(check()))
    if (error !== undefined) {
      this.ctx.recordBuildError(error)
      return new DStream<U>(this.node as unknown as DStreamNode<U>, error)
    }
    return new DStream(make())
  }

  protected mapped<U>(name: string, f: (rdd: RDD<T>) => RDD<U>): DStream<U> {
    return this.derive(() => new MappedDStream(name, this.node, f))
  }

  /** A bad duration argument, as a build error message. */
  protected static badDuration(what: string, d: unknown): string {
    return `Invalid ${what} duration: ${String(d)} (use e.g. "2 seconds" or milliseconds)`
  }

  map<U>(f: (t: T) => U): DStream<U> {
    return this.mapped("MappedDStream", (rdd) => rdd.map(f))
  }

  flatMap<U>(f: (t: T) => Iterable<U>): DStream<U> {
    return this.mapped("FlatMappedDStream", (rdd) => rdd.flatMap(f))
  }

  filter(f: (t: T) => boolean): DStream<T> {
    return this.mapped("FilteredDStream", (rdd) => rdd.filter(f))
  }

  /** Each partition of each batch as one array. */
  glom(): DStream<Array<T>> {
    return this.mapped("GlommedDStream", (rdd) => rdd.glom())
  }

  mapPartitions<U>(f: (partition: ReadonlyArray<T>) => Iterable<U>): DStream<U> {
    return this.mapped("MapPartitionedDStream", (rdd) => rdd.mapPartitions(f))
  }

  /** Each batch reduced to one element (nothing for an empty batch), as Spark's `reduce`. */
  reduce(f: (a: T, b: T) => T): DStream<T> {
    return this.mapped("ShuffledDStream", (rdd) => {
      const parts = rdd.partitions
      let has = false
      let acc: T | undefined
      for (const p of parts) {
        for (let i = 0; i < p.length; i++) {
          acc = has ? f(acc as T, p[i]) : p[i]
          has = true
        }
      }
      return new RDD(has ? [[acc as T]] : [[]])
    })
  }

  /** The number of elements of each batch (0 for an empty batch). */
  count(): DStream<number> {
    return this.mapped("ShuffledDStream", (rdd) => new RDD([[rdd.count()]]))
  }

  /** `[element, count]` for each distinct element of each batch. */
  countByValue(): DStream<readonly [T, number]> {
    return this.mapped("ShuffledDStream", (rdd) => new RDD([Pairs.countByValue(rdd.collect())]))
  }

  /** Round-robin into `numPartitions` partitions. */
  repartition(numPartitions: number): DStream<T> {
    return this.mapped("MappedDStream", (rdd) => rdd.repartition(numPartitions))
  }

  /** Any RDD-to-RDD function, per batch (`time` is the batch time in ms). */
  transform<U>(f: (rdd: RDD<T>, time: number) => RDD<U>): DStream<U> {
    return this.derive(() => new TransformedDStream<U>([this.node], (rdds, time) => f(rdds[0] as RDD<T>, time)))
  }

  /** A function of this stream's and another's batches of the same time. */
  transformWith<U, W>(other: DStream<U>, f: (a: RDD<T>, b: RDD<U>, time: number) => RDD<W>): DStream<W> {
    return this.derive(
      () =>
        new TransformedDStream<W>([this.node, other.node], (rdds, time) =>
          f(rdds[0] as RDD<T>, rdds[1] as RDD<U>, time)
        ),
      () => sameSlide([this, other]),
      [other]
    )
  }

  /** The batches of both streams together (same slide duration). */
  union(other: DStream<T>): DStream<T> {
    return this.derive(
      () => new UnionDStream([this.node, other.node]),
      () => sameSlide([this, other]),
      [other]
    )
  }

  /**
   * Every batch in the last `windowDuration`, every `slideDuration` (default: this stream's
   * slide). Both must be multiples of this stream's slide duration.
   */
  window(windowDuration: DurationInput, slideDuration?: DurationInput): DStream<T> {
    const w = durationMs(windowDuration)
    const s = slideDuration === undefined ? this.node.slideMs() : durationMs(slideDuration)
    return this.derive(
      () => new WindowedDStream(this.node, w as number, s as number),
      () =>
        w === undefined
          ? DStream.badDuration("window", windowDuration)
          : s === undefined
            ? DStream.badDuration("slide", slideDuration)
            : checkWindow("windowed DStream", w, s, this.node.slideMs())
    )
  }

  /**
   * One value per window: with only `f`, the batches are reduced, windowed and reduced again;
   * with an inverse function, through Spark's incremental `reduceByKeyAndWindow`.
   */
  reduceByWindow(f: (a: T, b: T) => T, windowDuration: DurationInput, slideDuration: DurationInput): DStream<T>
  reduceByWindow(
    f: (a: T, b: T) => T,
    invF: (a: T, b: T) => T,
    windowDuration: DurationInput,
    slideDuration: DurationInput
  ): DStream<T>
  reduceByWindow(f: (a: T, b: T) => T, a: any, b: any, c?: any): DStream<T> {
    if (typeof a === "function") {
      return this.map((x) => [1, x] as const)
        .reduceByKeyAndWindow(f as any, a, b, c)
        .map(([, v]) => v as T)
    }
    return this.reduce(f).window(a, b).reduce(f)
  }

  /** The number of elements in each window (incremental: needs a checkpoint directory, as in Spark). */
  countByWindow(windowDuration: DurationInput, slideDuration: DurationInput): DStream<number> {
    return this.map(() => 1).reduceByWindow(
      (a, b) => a + b,
      (a, b) => a - b,
      windowDuration,
      slideDuration
    )
  }

  /** `[element, count]` per window, keys whose count drops to 0 removed (Spark's filter). */
  countByValueAndWindow(windowDuration: DurationInput, slideDuration?: DurationInput): DStream<readonly [T, number]> {
    return this.map((x) => [x, 1] as const).reduceByKeyAndWindow(
      (a, b) => a + b,
      (a, b) => a - b,
      windowDuration,
      slideDuration ?? this.node.slideMs(),
      ([, n]) => n !== 0
    )
  }

  /**
   * Runs `f` on every batch's RDD, in the order output operations were registered. `f` may
   * return nothing, a Promise or an Effect; a failure fails the batch (and `awaitTermination`).
   */
  foreachRDD(f: (rdd: RDD<T>, time: number) => OutputReturn): void {
    this.output(f, "foreachRDD")
  }

  /**
   * Prints the first `num` elements of every batch through Effect's `Console`, in Spark's
   * format: a `Time: <ms> ms` header between dashed lines, the elements, `...` when there are
   * more, and an empty line.
   */
  print(num = 10): void {
    this.output(
      (rdd, time) =>
        Effect.gen(function* () {
          const first = rdd.take(num + 1)
          yield* Console.log("-------------------------------------------")
          yield* Console.log(`Time: ${time} ms`)
          yield* Console.log("-------------------------------------------")
          for (let i = 0; i < Math.min(num, first.length); i++) yield* Console.log(formatElement(first[i]))
          if (first.length > num) yield* Console.log("...")
          yield* Console.log("")
        }),
      "print"
    )
  }

  /**
   * Writes every batch as a folder `prefix-<time>[.suffix]` of `part-NNNNN` text files, one per
   * partition, one element per line, then `_SUCCESS` (Spark's `saveAsTextFiles`).
   */
  saveAsTextFiles(prefix: string, suffix?: string): void {
    this.output(
      (rdd, time) =>
        Effect.promise(async () => {
          const dir = suffix === undefined || suffix === "" ? `${prefix}-${time}` : `${prefix}-${time}.${suffix}`
          await mkdir(dir, { recursive: true })
          for (let i = 0; i < rdd.partitions.length; i++) {
            const lines = rdd.partitions[i].map(formatElement)
            await writeFile(
              join(dir, `part-${String(i).padStart(5, "0")}`),
              lines.length === 0 ? "" : `${lines.join("\n")}\n`
            )
          }
          await writeFile(join(dir, "_SUCCESS"), "")
        }),
      "saveAsTextFiles"
    )
  }

  /** Registers an output operation (or records why it cannot be). */
  protected output(f: (rdd: RDD<T>, time: number) => unknown, description: string): void {
    if (this.buildError !== undefined) return
    const error = this.initError()
    if (error !== undefined) {
      this.ctx.recordBuildError(error)
      return
    }
    this.ctx.registerOutput(new ForEachDStream(this.node, f, description))
  }

  /**
   * The RDDs of this stream between two times (inclusive, floored onto the slide grid), Spark's
   * `slice`. Fails before the context started.
   */
  slice(fromTime: number, toTime: number): Effect.Effect<Array<RDD<T>>, IllegalStateError> {
    return Effect.suspend(() =>
      this.node.zeroTime === undefined
        ? Effect.fail(new IllegalStateError({ message: `${this.node.name} has not been initialized` }))
        : Effect.sync(() => this.node.slice(fromTime, toTime))
    )
  }

  /**
   * Spark's `persist(level)`, `MEMORY_ONLY_SER` by default. Every batch is in memory here; the
   * level is recorded as Spark records it (`storageLevel`; a window passes it to its parent).
   */
  persist(storageLevel = "MEMORY_ONLY_SER"): DStream<T> {
    if (this.node.zeroTime !== undefined) {
      this.ctx.recordBuildError(
        new IllegalStateError({
          message: "Cannot change storage level of a DStream after streaming context has started"
        })
      )
      return this
    }
    this.node.persist(storageLevel)
    return this
  }

  /** Spark's `storageLevel`: `"NONE"` unless persisted (`"MEMORY_ONLY_SER"`, `"MEMORY_ONLY"`, ...). */
  get storageLevel(): string {
    return this.node.storageLevel
  }

  cache(): DStream<T> {
    return this.persist()
  }

  /** Sets how often this stream checkpoints (stateful streams: how often `mapWithState` scans for timeouts). */
  checkpoint(interval: DurationInput): DStream<T> {
    if (this.node.zeroTime !== undefined) {
      this.ctx.recordBuildError(
        new IllegalStateError({
          message: "Cannot change checkpoint interval of a DStream after streaming context has started"
        })
      )
      return this
    }
    const ms = durationMs(interval)
    if (ms === undefined) {
      this.ctx.recordBuildError(new IllegalStateError({ message: DStream.badDuration("checkpoint", interval) }))
      return this
    }
    // Spark's checkpoint(interval) persists (MEMORY_ONLY_SER) the stream that checkpoints:
    // for mapWithState, the internal state stream.
    const target = this.stateNode ?? this.node
    target.persist("MEMORY_ONLY_SER")
    target.checkpointMs = ms
    return this
  }

  /** @internal for `mapWithState` streams: the internal stream that owns checkpointing. */
  protected get stateNode(): DStreamNode<unknown> | undefined {
    return undefined
  }

  // ---- pair operations (Spark's PairDStreamFunctions) ----

  /** The values of each key in each batch. */
  groupByKey<K, V>(this: DStream<readonly [K, V]>): DStream<readonly [K, Array<V>]> {
    return this.mapped("ShuffledDStream", (rdd) => new RDD([Pairs.groupByKey(rdd.collect())]))
  }

  /** Each key's values reduced, per batch. */
  reduceByKey<K, V>(
    this: DStream<readonly [K, V]>,
    f: (a: Widen<V>, b: Widen<V>) => Widen<V>
  ): DStream<readonly [K, Widen<V>]> {
    return (this as DStream<readonly [K, Widen<V>]>).mapped(
      "ShuffledDStream",
      (rdd) => new RDD([Pairs.reduceByKey(rdd.collect(), f)])
    )
  }

  /** Spark's `combineByKey` per batch (the merge of combiners is not needed: a batch is one partition group). */
  combineByKey<K, V, C>(
    this: DStream<readonly [K, V]>,
    createCombiner: (v: V) => C,
    mergeValue: (c: C, v: V) => C,
    _mergeCombiners?: (a: C, b: C) => C
  ): DStream<readonly [K, C]> {
    return this.mapped(
      "ShuffledDStream",
      (rdd) => new RDD([Pairs.combineByKey(rdd.collect(), createCombiner, mergeValue)])
    )
  }

  mapValues<K, V, U>(this: DStream<readonly [K, V]>, f: (v: V) => U): DStream<readonly [K, U]> {
    return this.mapped("MapValuedDStream", (rdd) => rdd.map(([k, v]) => [k, f(v)] as const))
  }

  flatMapValues<K, V, U>(this: DStream<readonly [K, V]>, f: (v: V) => Iterable<U>): DStream<readonly [K, U]> {
    return this.mapped("FlatMapValuedDStream", (rdd) =>
      rdd.flatMap(([k, v]) => Array.from(f(v), (u) => [k, u] as const))
    )
  }

  /** The values of each key over the window. */
  groupByKeyAndWindow<K, V>(
    this: DStream<readonly [K, V]>,
    windowDuration: DurationInput,
    slideDuration?: DurationInput
  ): DStream<readonly [K, Array<V>]> {
    return this.groupByKey()
      .window(windowDuration, slideDuration)
      .combineByKey(
        (vs) => vs.slice(),
        (acc, vs) => {
          for (const v of vs) acc.push(v)
          return acc
        }
      )
  }

  /**
   * Each key's values reduced over the window. Without an inverse function: reduce per batch,
   * window, reduce again. With one (Spark's `ReducedWindowedDStream`): the previous window's
   * value minus the batches that left plus the batches that entered; keys whose window empties
   * stay (at their "zero") unless `filterFunc` drops them. The incremental form keeps state,
   * so it needs `ssc.checkpoint(dir)`.
   */
  reduceByKeyAndWindow<K, V>(
    this: DStream<readonly [K, V]>,
    f: (a: Widen<V>, b: Widen<V>) => Widen<V>,
    windowDuration: DurationInput,
    slideDuration?: DurationInput
  ): DStream<readonly [K, Widen<V>]>
  reduceByKeyAndWindow<K, V>(
    this: DStream<readonly [K, V]>,
    f: (a: Widen<V>, b: Widen<V>) => Widen<V>,
    invF: (a: Widen<V>, b: Widen<V>) => Widen<V>,
    windowDuration: DurationInput,
    slideDuration?: DurationInput,
    filterFunc?: (kv: readonly [K, Widen<V>]) => boolean
  ): DStream<readonly [K, Widen<V>]>
  reduceByKeyAndWindow<K, V>(
    this: DStream<readonly [K, V]>,
    f: any,
    a: any,
    b?: any,
    c?: any,
    d?: any
  ): DStream<readonly [K, any]> {
    const self = this as DStream<readonly [K, any]>
    if (typeof a !== "function") {
      return self.reduceByKey(f).window(a, b).reduceByKey(f)
    }
    const w = durationMs(b)
    const s = c === undefined ? this.node.slideMs() : durationMs(c)
    return self.derive(
      () => new ReducedWindowedDStream<K, any>(self.node, f, a, d, w as number, s as number),
      () =>
        w === undefined
          ? DStream.badDuration("window", b)
          : s === undefined
            ? DStream.badDuration("slide", c)
            : checkWindow("ReducedWindowedDStream", w, s, this.node.slideMs())
    )
  }

  /**
   * Spark's `updateStateByKey`: every batch, the update function runs for every key with state
   * or new values; `undefined` removes the key. The stream is the whole state after each batch.
   * Needs `ssc.checkpoint(dir)`; the state lives in the session's state store.
   *
   * Spark's three forms, told apart as Spark's overloads are:
   * - `(values, state) => state` — the usual form;
   * - `(time, key, values, state) => state` — a function of four parameters also gets the batch
   *   time (ms) and the key;
   * - `(entries) => pairs` with the option `rememberPartitioner` (Spark's iterator overload, which
   *   always takes it): one call per batch over every `[key, values, state]`, returning the new
   *   `[key, state]` pairs.
   */
  updateStateByKey<K, V, S>(
    this: DStream<readonly [K, V]>,
    update: (entries: IterableIterator<readonly [K, Array<V>, S | undefined]>) => Iterable<readonly [K, S]>,
    options: {
      readonly rememberPartitioner: boolean
      readonly initialRDD?: RDD<readonly [K, S]> | Iterable<readonly [K, S]>
      readonly numPartitions?: number
    }
  ): DStream<readonly [K, S]>
  updateStateByKey<K, V, S>(
    this: DStream<readonly [K, V]>,
    update: (values: Array<V>, state: S | undefined) => S | undefined,
    options?: {
      readonly initialRDD?: RDD<readonly [K, S]> | Iterable<readonly [K, S]>
      readonly numPartitions?: number
    }
  ): DStream<readonly [K, S]>
  updateStateByKey<K, V, S>(
    this: DStream<readonly [K, V]>,
    update: (time: number, key: K, values: Array<V>, state: S | undefined) => S | undefined,
    options?: {
      readonly rememberPartitioner?: boolean
      readonly initialRDD?: RDD<readonly [K, S]> | Iterable<readonly [K, S]>
      readonly numPartitions?: number
    }
  ): DStream<readonly [K, S]>
  updateStateByKey<K, V, S>(
    this: DStream<readonly [K, V]>,
    update: (...args: Array<any>) => any,
    options?: {
      readonly rememberPartitioner?: boolean
      readonly initialRDD?: RDD<readonly [K, S]> | Iterable<readonly [K, S]>
      readonly numPartitions?: number
    }
  ): DStream<readonly [K, S]> {
    const init = options?.initialRDD
    const initial = init === undefined ? undefined : init instanceof RDD ? init.collect() : Array.from(init)
    const fn: UpdateFunction<K, V, S> =
      update.length >= 4
        ? { _tag: "timed", f: update }
        : options?.rememberPartitioner !== undefined
          ? { _tag: "iterator", f: update }
          : { _tag: "simple", f: update }
    return this.derive(() => new StateDStream<K, V, S>(this.node, fn, initial))
  }

  /**
   * Spark's `mapWithState`: the spec's function runs for each record with its key's state, and
   * for keys timing out; the stream is the function's results, `stateSnapshots()` the state.
   * Needs `ssc.checkpoint(dir)`; the state lives in the session's state store.
   */
  mapWithState<K, V, S, U>(
    this: DStream<readonly [K, V]>,
    spec: StateSpec<K, V, S, U>
  ): MapWithStateDStream<K, V, S, U> {
    const built = this.derive(
      () => new InternalMapWithStateDStream<K, V, S, U>(this.node, spec),
      () => (spec.invalidTimeout !== undefined ? DStream.badDuration("timeout", spec.invalidTimeout) : undefined)
    )
    return MapWithStateDStream.of(built as unknown as DStream<unknown>)
  }

  /** Batches joined by key (inner). */
  join<K, V, W>(
    this: DStream<readonly [K, V]>,
    other: DStream<readonly [K, W]>
  ): DStream<readonly [K, readonly [V, W]]> {
    return this.pairJoin(other, "inner") as any
  }

  leftOuterJoin<K, V, W>(
    this: DStream<readonly [K, V]>,
    other: DStream<readonly [K, W]>
  ): DStream<readonly [K, readonly [V, W | undefined]]> {
    return this.pairJoin(other, "left") as any
  }

  rightOuterJoin<K, V, W>(
    this: DStream<readonly [K, V]>,
    other: DStream<readonly [K, W]>
  ): DStream<readonly [K, readonly [V | undefined, W]]> {
    return this.pairJoin(other, "right") as any
  }

  fullOuterJoin<K, V, W>(
    this: DStream<readonly [K, V]>,
    other: DStream<readonly [K, W]>
  ): DStream<readonly [K, readonly [V | undefined, W | undefined]]> {
    return this.pairJoin(other, "full")
  }

  /** Each key's values from both streams, per batch. */
  cogroup<K, V, W>(
    this: DStream<readonly [K, V]>,
    other: DStream<readonly [K, W]>
  ): DStream<readonly [K, readonly [Array<V>, Array<W>]]> {
    return this.transformWith(other, (a, b) => new RDD([Pairs.cogroup(a.collect(), b.collect())]))
  }

  protected pairJoin<K, V, W>(
    this: DStream<readonly [K, V]>,
    other: DStream<readonly [K, W]>,
    how: "inner" | "left" | "right" | "full"
  ): DStream<readonly [K, readonly [V | undefined, W | undefined]]> {
    return this.transformWith(other, (a, b) => new RDD([Pairs.join(a.collect(), b.collect(), how)]))
  }
}

/** Spark's `require(parents.map(_.slideDuration).distinct.length == 1, ...)`. */
export const sameSlide = (streams: ReadonlyArray<DStream<any>>): string | undefined => {
  const slides = new Set(streams.map((s) => s.node.slideMs()))
  if (slides.size > 1) return "Some of the DStreams have different slide durations"
  const ctxs = new Set(streams.map((s) => s.node.ctx))
  if (ctxs.size > 1) return "Some of the DStreams have different contexts"
  return undefined
}

/**
 * The stream `mapWithState` returns: the mapping function's results, plus `stateSnapshots()`.
 *
 * @since 0.1.0
 */
export class MapWithStateDStream<K, V, S, U> extends DStream<U> {
  /** Type-only: the input value type (Spark's `MapWithStateDStream[K, V, S, U]`). */
  declare readonly valueType?: V
  readonly #internal: DStream<unknown>

  private constructor(node: DStreamNode<U>, internal: DStream<unknown>, error: IllegalStateError | undefined) {
    super(node, error)
    this.#internal = internal
  }

  /** @internal */
  static of<K, V, S, U>(internal: DStream<unknown>): MapWithStateDStream<K, V, S, U> {
    if (internal.buildError !== undefined) {
      return new MapWithStateDStream<K, V, S, U>(internal.node as DStreamNode<U>, internal, internal.buildError)
    }
    const node = new MappedDStream<any, U>("MapWithStateDStream", internal.node, (rdd) => {
      const record = rdd.partitions[0]?.[0] as { mapped: ReadonlyArray<U> } | undefined
      return new RDD([record === undefined ? [] : record.mapped.slice()])
    })
    return new MapWithStateDStream<K, V, S, U>(node, internal, undefined)
  }

  protected override get stateNode(): DStreamNode<unknown> | undefined {
    return this.#internal.node
  }

  /** Every key's state after each batch, as `[key, state]` pairs. */
  stateSnapshots(): DStream<readonly [K, S]> {
    return this.#internal.derive(
      () =>
        new MappedDStream<any, readonly [K, S]>("MapWithStateDStream", this.#internal.node, (rdd) => {
          const record = rdd.partitions[0]?.[0] as { map: ReadonlyMap<unknown, { k: K; s: S }> } | undefined
          const out: Array<readonly [K, S]> = []
          if (record !== undefined) for (const e of record.map.values()) out.push([e.k, e.s])
          return new RDD([out])
        })
    )
  }
}
