/**
 * HyperLogLog++ as Spark's `HyperLogLogPlusPlusHelper` computes it: the dense sketch behind
 * `approx_count_distinct`. Same precision from the requested relative standard deviation, same
 * 64-bit hash (`XxHash64.ts`, seed 42), same register update, same estimator (linear counting
 * below Spark's thresholds, k-nearest-neighbour bias correction from the HLL++ appendix tables
 * below 5m), so estimates equal Spark's for the same values, not just statistically close.
 *
 * Registers are one byte each in a `Uint8Array` (Spark packs ten 6-bit registers in a long; the
 * estimate is the same, and byte access is faster in JavaScript).
 *
 * @example
 * ```ts
 * import * as HLL from "./HyperLogLogPlusPlus.ts"
 * import * as T from "../DataType.ts"
 * const hll = HLL.make(0.05) // p = 9, 512 registers
 * const add = HLL.adder(hll, T.LongType)
 * const registers = hll.init()
 * for (let i = 0; i < 1000; i++) add(registers, i)
 * hll.query(registers) // Spark's approx_count_distinct(id) over range(1000)
 * ```
 * @since 0.1.0
 */
import type { DataType } from "../DataType.ts"
import { BIAS_DATA, RAW_ESTIMATE_DATA, THRESHOLDS } from "./HyperLogLogPlusPlusData.ts"
import * as XxHash64 from "./XxHash64.ts"

/**
 * The largest precision tributary accepts (2^25 one-byte registers, 32 MiB per sketch). Spark has
 * no upper bound, but an rsd below about 0.0002 asks for hundreds of MiB per group.
 */
export const MAX_PRECISION = 25

/** Spark's `p` for a relative standard deviation: `ceil(2 log2(1.106 / rsd))`. */
export const precisionFor = (relativeSD: number): number =>
  Math.ceil((2.0 * Math.log(1.106 / relativeSD)) / Math.log(2.0))

/**
 * Why `relativeSD` cannot be used, or `undefined` when it can. The first message is Spark's own
 * (`HyperLogLogPlusPlusHelper`'s requirement); the others guard what Spark would fail on later.
 */
export const validateRelativeSD = (relativeSD: number): string | undefined => {
  if (typeof relativeSD !== "number" || !(relativeSD > 0) || !Number.isFinite(relativeSD))
    return `requirement failed: the relative standard deviation of approx_count_distinct must be a positive number, got ${String(relativeSD)}.`
  const p = precisionFor(relativeSD)
  if (p < 4) return "requirement failed: HLL++ requires at least 4 bits for addressing. Use a lower error, at most 39%."
  if (p > MAX_PRECISION)
    return `approx_count_distinct with relativeSD ${relativeSD} needs 2^${p} registers per group; tributary supports at most 2^${MAX_PRECISION} (relativeSD >= ${(1.106 / 2 ** (MAX_PRECISION / 2)).toPrecision(3)}).`
  return undefined
}

/** One HLL++ configuration (a precision): builds, updates, merges and queries register arrays. */
export interface HyperLogLogPlusPlus {
  readonly relativeSD: number
  /** Bits of the hash used to pick a register. */
  readonly p: number
  /** Number of registers, `2^p`. */
  readonly m: number
  /** Fresh, empty registers. */
  readonly init: () => Uint8Array
  /** Adds one 64-bit hash given as unsigned 32-bit halves. */
  readonly addHash: (registers: Uint8Array, hashHigh: number, hashLow: number) => void
  /** Register-wise maximum of `b` into `a`; returns `a`. */
  readonly merge: (a: Uint8Array, b: Uint8Array) => Uint8Array
  /** The cardinality estimate, rounded as Spark rounds it. */
  readonly query: (registers: Uint8Array) => number
  /** The rsd this precision actually guarantees: `1.04 / sqrt(m)`. */
  readonly trueRsd: number
}

// 2^-k for every register value, so the estimator sums exactly what Spark sums.
const INVERSE_POWERS: ReadonlyArray<number> = Array.from({ length: 65 }, (_, k) => 2 ** -k)

const K = 6

/** Java's `Arrays.binarySearch(double[], key)`, including its answer on unsorted stretches. */
const binarySearch = (a: ReadonlyArray<number>, key: number): number => {
  let low = 0
  let high = a.length - 1
  while (low <= high) {
    const mid = (low + high) >>> 1
    const v = a[mid]
    if (v < key) low = mid + 1
    else if (v > key) high = mid - 1
    else if (Object.is(v, key)) return mid
    else if (Object.is(v, -0) || Number.isNaN(key)) low = mid + 1
    else high = mid - 1
  }
  return -(low + 1)
}

/**
 * Builds the HLL++ configuration for `relativeSD`. Call `validateRelativeSD` first: this assumes
 * a valid value.
 */
export const make = (relativeSD: number): HyperLogLogPlusPlus => {
  const p = precisionFor(relativeSD)
  const m = 2 ** p
  const idxShift = 32 - p // applied to the high half of the hash (p <= 25 < 32)
  const wPadding = 2 ** (p - 1) // lands in the low half
  const alphaM2 =
    p === 4 ? 0.673 * m * m : p === 5 ? 0.697 * m * m : p === 6 ? 0.709 * m * m : (0.7213 / (1.0 + 1.079 / m)) * m * m
  const threshold = p < 19 ? THRESHOLDS[p - 4] : -1
  const estimates = p < 19 ? RAW_ESTIMATE_DATA[p - 4] : []
  const biases = p < 19 ? BIAS_DATA[p - 4] : []

  const addHash = (registers: Uint8Array, hi: number, lo: number): void => {
    const idx = hi >>> idxShift
    // Leading zeros of (x << p) | wPadding, plus one.
    const sh = ((hi << p) | (lo >>> (32 - p))) >>> 0
    const sl = ((lo << p) | wPadding) >>> 0
    const pw = (sh !== 0 ? Math.clz32(sh) : 32 + Math.clz32(sl)) + 1
    if (pw > registers[idx]) registers[idx] = pw
  }

  const merge = (a: Uint8Array, b: Uint8Array): Uint8Array => {
    for (let i = 0; i < m; i++) if (b[i] > a[i]) a[i] = b[i]
    return a
  }

  const estimateBias = (e: number): number => {
    const n = estimates.length
    const ix = binarySearch(estimates, e)
    const nearest = ix < 0 ? -(ix + 1) : ix
    const distance = (i: number): number => {
      const d = e - estimates[i]
      return d * d
    }
    let low = Math.max(nearest - K + 1, 0)
    let high = Math.min(low + K, n)
    while (high < n && distance(high) < distance(low)) {
      low++
      high++
    }
    let sum = 0.0
    for (let i = low; i < high; i++) sum += biases[i]
    return sum / (high - low)
  }

  const query = (registers: Uint8Array): number => {
    let zInverse = 0.0
    let v = 0.0
    for (let i = 0; i < m; i++) {
      const r = registers[i]
      zInverse += INVERSE_POWERS[r]
      if (r === 0) v += 1.0
    }
    const e = alphaM2 / zInverse
    const biasCorrected = (): number => (p < 19 && e < 5.0 * m ? e - estimateBias(e) : e)
    let estimate: number
    if (v > 0) {
      // Linear counting for small cardinalities; 2.5m is the original HLL's bound, which Spark
      // also uses when p >= 19 has no HLL++ threshold.
      const h = m * Math.log(m / v)
      estimate = (p < 19 && h <= threshold) || e <= 2.5 * m ? h : biasCorrected()
    } else estimate = biasCorrected()
    return Math.round(estimate)
  }

  return {
    relativeSD,
    p,
    m,
    init: () => new Uint8Array(m),
    addHash,
    merge,
    query,
    trueRsd: 1.04 / Math.sqrt(m)
  }
}

/**
 * The per-value update for internal values of `t`: hashes the value as Spark does
 * (`XxHash64Function.hash(value, t, 42)`) and adds it. Nulls are skipped, as Spark skips them.
 * Allocates nothing for numbers, booleans and strings.
 */
export const adder = (hll: HyperLogLogPlusPlus, t: DataType): ((registers: Uint8Array, value: unknown) => void) => {
  const hash = XxHash64.hasher(t)
  const addHash = hll.addHash
  return (registers, value) => {
    if (value === null || value === undefined) return
    hash(value, 0, XxHash64.SEED)
    addHash(registers, XxHash64.resultHigh(), XxHash64.resultLow())
  }
}
