/**
 * Backpressure (Spark's `spark.streaming.backpressure.*`): a `RateEstimator` turns each
 * completed batch's records and delays into a new ingestion rate, and a `RateController` per
 * receiver stream feeds it from `onBatchCompleted` and publishes the rate, which then caps the
 * records of the stream's next batches together with `spark.streaming.receiver.maxRate`.
 *
 * `PIDRateEstimator` is Spark's proportional-integral-derivative controller with the same
 * arithmetic: the error is the last rate minus the measured processing rate, the integral term
 * is the scheduling delay expressed as overflowing records per second, and the first batch
 * only seeds the controller (no estimate).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { PIDRateEstimator } from "tributary-streaming/dstream"
 *
 * const pid = Effect.runSync(PIDRateEstimator.make(20, 1, 0, 0, 10))
 * pid.compute(0, 10, 10, 0) // undefined: the first batch only seeds the estimator
 * pid.compute(10, 10, 10, 0) // 1000 records per second
 * ```
 * @since 0.1.0
 */
import { Effect } from "effect"
import { IllegalStateError } from "../core/Errors.ts"
import type { BatchInfo } from "./StreamingListener.ts"

/** Spark's `RateEstimator`: the new rate (records per second) after a batch, if any. */
export interface RateEstimator {
  readonly compute: (
    time: number,
    numElements: number,
    processingDelay: number,
    schedulingDelay: number
  ) => number | undefined
}

const requirement = (message: string) => new IllegalStateError({ message: `requirement failed: ${message}` })

/**
 * Spark's `PIDRateEstimator`.
 *
 * @since 0.1.0
 */
export class PIDRateEstimator implements RateEstimator {
  readonly batchIntervalMs: number
  readonly proportional: number
  readonly integral: number
  readonly derivative: number
  readonly minRate: number
  #firstRun = true
  #latestTime = -1
  #latestRate = -1
  #latestError = -1

  private constructor(batchIntervalMs: number, proportional: number, integral: number, derivative: number, minRate: number) {
    this.batchIntervalMs = batchIntervalMs
    this.proportional = proportional
    this.integral = integral
    this.derivative = derivative
    this.minRate = minRate
  }

  /**
   * A new estimator; fails with `IllegalStateError` carrying Spark's `require` messages when the
   * batch interval is not positive, a gain is negative or the minimum rate is not positive.
   */
  static make(
    batchIntervalMs: number,
    proportional: number,
    integral: number,
    derivative: number,
    minRate: number
  ): Effect.Effect<PIDRateEstimator, IllegalStateError> {
    return Effect.suspend(() => {
      if (!(batchIntervalMs > 0))
        return Effect.fail(requirement(`Specified batch interval ${batchIntervalMs} in PIDRateEstimator is invalid.`))
      if (!(proportional >= 0))
        return Effect.fail(requirement(`Proportional term ${proportional} in PIDRateEstimator should be >= 0.`))
      if (!(integral >= 0))
        return Effect.fail(requirement(`Integral term ${integral} in PIDRateEstimator should be >= 0.`))
      if (!(derivative >= 0))
        return Effect.fail(requirement(`Derivative term ${derivative} in PIDRateEstimator should be >= 0.`))
      if (!(minRate > 0)) return Effect.fail(requirement("Minimum rate in PIDRateEstimator should be > 0"))
      return Effect.succeed(new PIDRateEstimator(batchIntervalMs, proportional, integral, derivative, minRate))
    })
  }

  /**
   * Spark's `compute(time, numElements, processingDelay, schedulingDelay)` (times in ms): no
   * estimate unless time moved forward and the batch had records and a positive processing
   * delay; the first such batch only records the processing rate.
   */
  compute(time: number, numElements: number, processingDelay: number, schedulingDelay: number): number | undefined {
    if (!(time > this.#latestTime && numElements > 0 && processingDelay > 0)) return undefined
    const delaySinceUpdate = (time - this.#latestTime) / 1000
    const processingRate = (numElements / processingDelay) * 1000
    const error = this.#latestRate - processingRate
    // Scheduling delay as the rate of records that overflowed earlier batches (Spark's integral term).
    const historicalError = (schedulingDelay * processingRate) / this.batchIntervalMs
    const dError = (error - this.#latestError) / delaySinceUpdate
    const newRate = Math.max(
      this.#latestRate - this.proportional * error - this.integral * historicalError - this.derivative * dError,
      this.minRate
    )
    this.#latestTime = time
    if (this.#firstRun) {
      this.#latestRate = processingRate
      this.#latestError = 0
      this.#firstRun = false
      return undefined
    }
    this.#latestRate = newRate
    this.#latestError = error
    return newRate
  }
}

const confNumber = (conf: ReadonlyMap<string, string>, key: string, fallback: number): number => {
  const v = conf.get(key)
  if (v === undefined) return fallback
  const n = Number(v)
  return Number.isFinite(n) ? n : fallback
}

/** Spark's `RateController.isBackPressureEnabled`: `spark.streaming.backpressure.enabled`. */
export const isBackPressureEnabled = (conf: ReadonlyMap<string, string>): boolean =>
  (conf.get("spark.streaming.backpressure.enabled") ?? "false").trim().toLowerCase() === "true"

/**
 * Spark's `RateEstimator.create`: `spark.streaming.backpressure.rateEstimator` (only `pid`)
 * with the gains `spark.streaming.backpressure.pid.proportional` (1.0), `.integral` (0.2),
 * `.derived` (0.0) and `.minRate` (100).
 */
export const createRateEstimator = (
  conf: ReadonlyMap<string, string>,
  batchIntervalMs: number
): Effect.Effect<RateEstimator, IllegalStateError> => {
  const name = conf.get("spark.streaming.backpressure.rateEstimator") ?? "pid"
  if (name !== "pid") return Effect.fail(new IllegalStateError({ message: `Unknown rate estimator: ${name}` }))
  return PIDRateEstimator.make(
    batchIntervalMs,
    confNumber(conf, "spark.streaming.backpressure.pid.proportional", 1.0),
    confNumber(conf, "spark.streaming.backpressure.pid.integral", 0.2),
    confNumber(conf, "spark.streaming.backpressure.pid.derived", 0.0),
    confNumber(conf, "spark.streaming.backpressure.pid.minRate", 100)
  )
}

/**
 * Spark's `ReceiverRateController`: after each completed batch, estimates the stream's rate from
 * the batch's processing end, its records for this stream and its processing and scheduling
 * delays, and publishes it (truncated to whole records per second, as Spark's `AtomicLong`).
 * Spark computes in a background future; here it runs at once, so the next batch sees it.
 */
export class RateController {
  readonly streamId: number
  readonly estimator: RateEstimator
  readonly #publish: (rate: number) => void
  #latest = -1

  constructor(streamId: number, estimator: RateEstimator, publish: (rate: number) => void) {
    this.streamId = streamId
    this.estimator = estimator
    this.#publish = publish
  }

  /** The last published rate, -1 before the first estimate (Spark's `getLatestRate`). */
  getLatestRate(): number {
    return this.#latest
  }

  onBatchCompleted(info: BatchInfo): void {
    const end = info.processingEndTime
    const work = info.processingDelay
    const wait = info.schedulingDelay
    const elems = info.streamIdToInputInfo.get(this.streamId)?.numRecords
    if (end === undefined || work === undefined || wait === undefined || elems === undefined) return
    const rate = this.estimator.compute(end, elems, work, wait)
    if (rate === undefined) return
    this.#latest = Math.trunc(rate)
    this.#publish(this.#latest)
  }
}

/**
 * Spark's receiver `RateLimiter` limits: `spark.streaming.receiver.maxRate` (0 or unset: none),
 * the starting rate `spark.streaming.backpressure.initialRate` (at most maxRate), and
 * `updateRate`, which takes a positive published rate capped by maxRate.
 */
export class ReceiverRateLimit {
  readonly maxRate: number
  #rate: number

  constructor(conf: ReadonlyMap<string, string>) {
    const max = confNumber(conf, "spark.streaming.receiver.maxRate", 0)
    this.maxRate = max > 0 ? max : Number.POSITIVE_INFINITY
    const initial = confNumber(conf, "spark.streaming.backpressure.initialRate", this.maxRate)
    this.#rate = Math.min(initial > 0 ? initial : this.maxRate, this.maxRate)
  }

  /** The current records-per-second limit (`Infinity`: none). */
  get rate(): number {
    return this.#rate
  }

  updateRate(newRate: number): void {
    if (newRate > 0) this.#rate = Math.min(newRate, this.maxRate)
  }

  /** The records one batch of `batchMs` may take (at least one), or `undefined` for no limit. */
  perBatch(batchMs: number): number | undefined {
    if (!Number.isFinite(this.#rate)) return undefined
    return Math.max(1, Math.floor((this.#rate * batchMs) / 1000))
  }
}
