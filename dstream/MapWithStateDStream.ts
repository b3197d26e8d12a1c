/**
 * Spark's `InternalMapWithStateDStream` and `MapWithStateRDDRecord.updateRecordWithData`: the
 * mapping function runs once per record of the batch (not per key), with the key's state;
 * `state.update` stores the new value stamped with the batch time, `state.remove` drops it.
 * With a timeout, keys whose state was last touched before `batchTime - timeout` are called once
 * more with `value === undefined` and `isTimingOut() === true`, then dropped — on the batches
 * where Spark checkpoints the state (a full scan; every 10 batches unless `checkpoint(interval)`
 * says otherwise).
 *
 * Each batch's RDD holds one record: the state map after the batch and the mapped values. The
 * state lives in the session's state store (one entry per key, written when it changed).
 *
 * @since 0.1.0
 */
import { RDD } from "./RDD.ts"
import { DStreamNode, type StateChanges, type StatefulNode } from "./Node.ts"
import * as Pairs from "./PairFunctions.ts"
import { type StateSpec, StateImpl } from "./State.ts"

const TIME_KEY = "#time"

/** One key's state and when it was last updated. */
export interface StateEntry<K, S> {
  readonly k: K
  readonly s: S
  readonly t: number
}

export interface MapWithStateRecord<K, S, U> {
  readonly map: ReadonlyMap<unknown, StateEntry<K, S>>
  readonly mapped: ReadonlyArray<U>
}

export class InternalMapWithStateDStream<K, V, S, U>
  extends DStreamNode<MapWithStateRecord<K, S, U>>
  implements StatefulNode
{
  readonly name = "InternalMapWithStateDStream"
  readonly dependencies: ReadonlyArray<DStreamNode<any>>
  readonly operatorId: number
  readonly #parent: DStreamNode<readonly [K, V]>
  readonly #spec: StateSpec<K, V, S, U>
  /** Keys changed since the last drain: store key -> entry, or undefined for removed. */
  #dirty = new Map<string, StateEntry<K, S> | undefined>()

  constructor(parent: DStreamNode<readonly [K, V]>, spec: StateSpec<K, V, S, U>) {
    super(parent.ctx)
    this.#parent = parent
    this.#spec = spec
    this.dependencies = [parent]
    this.mustCheckpoint = true
    this.storageLevel = "MEMORY_ONLY"
    this.operatorId = parent.ctx.nextOperatorId()
  }

  slideMs(): number {
    return this.#parent.slideMs()
  }

  override stateful(): StatefulNode {
    return this
  }

  /** Spark's `InternalMapWithStateDStream.initialize`: the default checkpoint interval is 10 batches. */
  override initialize(zeroTime: number): void {
    if (this.checkpointMs === undefined) this.checkpointMs = this.slideMs() * 10
    super.initialize(zeroTime)
  }

  compute(time: number): RDD<MapWithStateRecord<K, S, U>> | undefined {
    const prev = this.getOrCompute(time - this.slideMs())
    let map: Map<unknown, StateEntry<K, S>>
    if (prev !== undefined) {
      // A copy: the previous batch's record stays as it was (its snapshot may be read later).
      map = new Map(prev.partitions[0][0].map)
    } else {
      map = new Map()
      for (const [k, s] of this.#spec.initialStatePairs ?? []) {
        const e = { k, s, t: time }
        map.set(Pairs.hashKey(k), e)
        this.#dirty.set(Pairs.storeKey(k), e)
      }
    }
    const data = this.#parent.getOrCompute(time)
    const timeout = this.#spec.timeoutMs
    const threshold = timeout === undefined ? undefined : time - timeout
    const f = this.#spec.mappingFunction
    // The full form's `undefined` is Scala's `None`: nothing is emitted (`mappedData ++= returned`).
    const keepAll = !this.#spec.timed
    const state = new StateImpl<S>()
    const mapped: Array<U> = []
    if (data !== undefined) {
      for (const part of data.partitions) {
        for (let i = 0; i < part.length; i++) {
          const [k, v] = part[i]
          const h = Pairs.hashKey(k)
          const current = map.get(h)
          state.wrap(current)
          const out = f(time, k, v, state)
          if (state.isRemoved()) {
            if (current !== undefined) {
              map.delete(h)
              this.#dirty.set(Pairs.storeKey(k), undefined)
            }
          } else if (state.isUpdated() || (state.exists() && threshold !== undefined)) {
            const e = { k, s: state.get(), t: time }
            map.set(h, e)
            this.#dirty.set(Pairs.storeKey(k), e)
          }
          if (keepAll || out !== undefined) mapped.push(out as U)
        }
      }
    }
    if (threshold !== undefined && this.isCheckpointTime(time)) {
      for (const [h, e] of map) {
        if (e.t < threshold) {
          state.wrapTimingOutState(e.s)
          const out = f(time, e.k, undefined, state)
          if (keepAll || out !== undefined) mapped.push(out as U)
          map.delete(h)
          this.#dirty.set(Pairs.storeKey(e.k), undefined)
        }
      }
    }
    return new RDD([[{ map, mapped }]])
  }

  drainChanges(time: number): StateChanges {
    const puts: Array<readonly [string, unknown]> = []
    const removes: Array<string> = []
    for (const [key, e] of this.#dirty) {
      if (e === undefined) removes.push(key)
      else puts.push([key, [e.k, e.s, e.t]])
    }
    this.#dirty = new Map()
    if (this.generated.has(time)) puts.push([TIME_KEY, time])
    return { puts, removes }
  }

  restore(entries: ReadonlyArray<readonly [string, unknown]>, _lastBatchTime: number): void {
    let time: number | undefined
    const map = new Map<unknown, StateEntry<K, S>>()
    for (const [key, value] of entries) {
      if (key === TIME_KEY) time = value as number
      else {
        const [k, s, t] = value as [K, S, number]
        map.set(Pairs.hashKey(k), { k, s, t })
      }
    }
    if (time !== undefined) this.generated.set(time, new RDD([[{ map, mapped: [] }]]))
  }
}
