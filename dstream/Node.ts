/**
 * The graph under the DStream API: one node per DStream, after Spark's `DStream` internals
 * (`zeroTime`, `rememberDuration`, `checkpointDuration`, `generatedRDDs`, `isTimeValid`,
 * `getOrCompute`, `slice`, `clearMetadata`, `validateAtStart`). Each operator is a small
 * subclass that names its dependencies, its slide duration and how it computes the RDD of one
 * batch time. Computing is synchronous over in-memory arrays; inputs that need I/O (files)
 * do it in `prepare` before the batch's RDDs are generated.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import type { CheckpointError, ConnectorError } from "../core/Errors.ts"
import type { SessionShape } from "../structured/api/Session.ts"
import type { RDD } from "./RDD.ts"

/** The context as its nodes see it. */
export interface ContextCore {
  /** The StreamingContext (typed by `DStream.context`). */
  readonly owner: unknown
  readonly batchMs: number
  readonly session: SessionShape
  readonly status: () => "INITIALIZED" | "ACTIVE" | "STOPPED"
  readonly checkpointDir: () => string | undefined
  /** A stable id for a stateful node (its state-store operator id): creation order. */
  readonly nextOperatorId: () => number
  readonly registerInput: (node: InputNode<unknown>) => void
  readonly registerOutput: (node: DStreamNode<unknown>) => void
}

/** Spark's `Duration.toString`. */
export const ms = (d: number): string => `${d} ms`

/** What a stateful node writes to its state store after a batch. */
export interface StateChanges {
  readonly puts: Array<readonly [string, unknown]>
  readonly removes: Array<string>
}

/**
 * A node whose state lives in the session's state store (updateStateByKey, mapWithState,
 * windowed reduce with an inverse function).
 */
export interface StatefulNode {
  readonly operatorId: number
  /** The changes of the batch at `time` (just run) since the last call, then forgets them. */
  readonly drainChanges: (time: number) => StateChanges
  /** Rebuilds the in-memory state from a committed store version (restart from a checkpoint). */
  readonly restore: (entries: ReadonlyArray<readonly [string, unknown]>, lastBatchTime: number) => void
}

/**
 * One DStream's node.
 *
 * @since 0.1.0
 */
export abstract class DStreamNode<T> {
  readonly ctx: ContextCore
  /** Spark's class name, for messages. */
  abstract readonly name: string
  abstract readonly dependencies: ReadonlyArray<DStreamNode<any>>
  zeroTime: number | undefined = undefined
  rememberMs: number | undefined = undefined
  checkpointMs: number | undefined = undefined
  mustCheckpoint = false
  /** Spark's `storageLevel` (`"NONE"` until persisted; every batch is in memory here either way). */
  storageLevel = "NONE"
  readonly generated: Map<number, RDD<T>> = new Map<number, RDD<T>>()

  constructor(ctx: ContextCore) {
    this.ctx = ctx
  }

  abstract slideMs(): number
  /** The RDD of batch time `time` (a valid time), or `undefined` for none. */
  abstract compute(time: number): RDD<T> | undefined

  /** How long parents must remember their RDDs for this node (windows add their length). */
  parentRememberMs(): number {
    return this.rememberMs ?? 0
  }

  /** Spark's `DStream.persist(level)`; windows override it to persist their parent instead. */
  persist(level: string): void {
    this.storageLevel = level
  }

  /** This node as a stateful one, if it keeps state in the store. */
  stateful(): StatefulNode | undefined {
    return undefined
  }

  /** Spark's `DStream.initialize`: zero time, default checkpoint interval, minimum remember duration. */
  initialize(zeroTime: number): void {
    if (this.zeroTime !== undefined && this.zeroTime === zeroTime) return
    this.zeroTime = zeroTime
    const slide = this.slideMs()
    if (this.mustCheckpoint && this.checkpointMs === undefined) {
      // Spark: the slide duration or 10 seconds, whichever is larger (a multiple of the slide).
      this.checkpointMs = slide * Math.ceil(10_000 / slide)
    }
    let minRemember = slide
    // Spark keeps twice the checkpoint interval "to be sure that the latest checkpoint is not forgotten".
    if (this.checkpointMs !== undefined && minRemember <= this.checkpointMs) minRemember = this.checkpointMs * 2
    if (this.rememberMs === undefined || this.rememberMs < minRemember) this.rememberMs = minRemember
    for (const d of this.dependencies) d.initialize(zeroTime)
  }

  /** Spark's `DStream.remember`: only ever lengthens, and asks parents for what this node needs. */
  remember(duration: number | undefined): void {
    if (duration !== undefined && (this.rememberMs === undefined || duration > this.rememberMs)) {
      this.rememberMs = duration
    }
    for (const d of this.dependencies) d.remember(this.parentRememberMs())
  }

  /** Spark's `DStream.validateAtStart`; the first failed requirement's message, or `undefined`. */
  validateAtStart(): string | undefined {
    const slide = this.slideMs()
    const cp = this.checkpointMs
    if (this.mustCheckpoint && cp === undefined) {
      return `The checkpoint interval for ${this.name} has not been set. Please use DStream.checkpoint() to set the interval.`
    }
    if (cp !== undefined && this.ctx.checkpointDir() === undefined) {
      return "The checkpoint directory has not been set. Please set it by StreamingContext.checkpoint()."
    }
    if (cp !== undefined && cp < slide) {
      return `The checkpoint interval for ${this.name} has been set to ${ms(cp)} which is lower than its slide time (${ms(slide)}). Please set it to at least ${ms(slide)}.`
    }
    if (cp !== undefined && cp % slide !== 0) {
      return `The checkpoint interval for ${this.name} has been set to  ${ms(cp)} which not a multiple of its slide time (${ms(slide)}). Please set it to a multiple of ${ms(slide)}.`
    }
    if (cp !== undefined && (this.rememberMs ?? 0) <= cp) {
      // Spark 4's text, double space included ("has been set to " + s" $rememberDuration ...").
      return `The remember duration for ${this.name} has been set to  ${ms(this.rememberMs ?? 0)} which is not more than the checkpoint interval (${ms(cp)}). Please set it to a value higher than ${ms(cp)}.`
    }
    for (const d of this.dependencies) {
      const m = d.validateAtStart()
      if (m !== undefined) return m
    }
    return undefined
  }

  /** Spark's `isTimeValid`: after the zero time, on this node's slide grid. */
  isTimeValid(time: number): boolean {
    const zero = this.zeroTime
    if (zero === undefined) throw new Error(`${this.name} has not been initialized`)
    return time > zero && (time - zero) % this.slideMs() === 0
  }

  /** Spark's `getOrCompute`: the remembered RDD of `time`, or a newly computed one on valid times. */
  getOrCompute(time: number): RDD<T> | undefined {
    const cached = this.generated.get(time)
    if (cached !== undefined) return cached
    if (!this.isTimeValid(time)) return undefined
    const rdd = this.compute(time)
    if (rdd === undefined) return undefined
    const attached = rdd.withSession(this.ctx.session)
    this.generated.set(time, attached)
    return attached
  }

  /** Whether the RDD of `time` is one Spark would checkpoint (time on the checkpoint grid). */
  isCheckpointTime(time: number): boolean {
    return (
      this.checkpointMs !== undefined && this.zeroTime !== undefined && (time - this.zeroTime) % this.checkpointMs === 0
    )
  }

  /**
   * Spark's `slice(fromTime, toTime)`: the RDDs of every slide-grid time in the interval, the
   * ends floored onto the grid.
   */
  slice(fromTime: number, toTime: number): Array<RDD<T>> {
    const zero = this.zeroTime
    if (zero === undefined) throw new Error(`${this.name} has not been initialized`)
    const slide = this.slideMs()
    const floor = (t: number) => ((t - zero) % slide === 0 ? t : zero + Math.floor((t - zero) / slide) * slide)
    const out: Array<RDD<T>> = []
    for (let t = floor(fromTime); t <= floor(toTime); t += slide) {
      if (t >= zero) {
        const rdd = this.getOrCompute(t)
        if (rdd !== undefined) out.push(rdd)
      }
    }
    return out
  }

  /** Spark's `clearMetadata`: forgets RDDs older than the remember duration, then the parents'. */
  clearMetadata(time: number): void {
    const remember = this.rememberMs ?? 0
    for (const t of this.generated.keys()) if (t <= time - remember) this.generated.delete(t)
    for (const d of this.dependencies) d.clearMetadata(time)
  }
}

/**
 * An input: its slide is the batch duration. `prepare` runs before a batch's RDDs are
 * generated (file listing and reading, assigning received blocks to the batch).
 */
export abstract class InputNode<T> extends DStreamNode<T> {
  readonly dependencies: ReadonlyArray<DStreamNode<any>> = []
  /** The id Spark gives input streams (`streamIdToInputInfo`). */
  id = -1

  slideMs(): number {
    return this.ctx.batchMs
  }

  prepare(_time: number): Effect.Effect<void, ConnectorError | CheckpointError> | undefined {
    return undefined
  }

  /** Called when the context starts (receivers start here) and stops. */
  start(): Effect.Effect<void> | undefined {
    return undefined
  }

  stop(_graceful: boolean): Effect.Effect<void> | undefined {
    return undefined
  }

  /** Records the batch `time` got (for `BatchInfo.numRecords`). */
  numRecords(time: number): number {
    return this.generated.get(time)?.count() ?? 0
  }
}
