/**
 * Spark's `QuantileSummaries` (Greenwald–Khanna with a head buffer), behind
 * `percentile_approx` / `approx_percentile`. Same constants (head buffer of 50 000 values,
 * compression threshold 10 000), same insertion, compression, merge and query steps, in the same
 * order, so that answers equal Spark's: for fewer values than `accuracy` the summary keeps every
 * value and the answer is exact on the sample (the smallest value whose rank reaches
 * `ceil(percentage * count)`).
 *
 * A summary is mutable (Spark's returns new objects or itself; the observable results are the
 * same). Values are doubles sorted as Java's `Double.compare` sorts them (`-0.0` before `0.0`,
 * NaN last), which is what a `Float64Array` sort does.
 *
 * @example
 * ```ts
 * import * as QS from "./QuantileSummaries.ts"
 * const s = QS.make(1 / 10000)
 * for (const x of [0, 6, 7, 9, 10]) QS.insert(s, x)
 * QS.query(s, [0.5]) // [7]: Spark's percentile_approx(col, 0.5, 100) over (0), (6), (7), (9), (10)
 * ```
 * @since 0.6.0
 */

/** Spark's `QuantileSummaries.defaultCompressThreshold`. */
export const DEFAULT_COMPRESS_THRESHOLD = 10000
/** Spark's `QuantileSummaries.defaultHeadSize`. */
export const DEFAULT_HEAD_SIZE = 50000

/** A summary: the sampled statistics `(value, g, delta)` in parallel arrays, and the head buffer. */
export interface Summary {
  readonly compressThreshold: number
  relativeError: number
  values: Array<number>
  g: Array<number>
  delta: Array<number>
  /** The values inserted into `values` (the head buffer not counted), as Spark's `count`. */
  count: number
  head: Array<number>
  compressed: boolean
}

/** An empty summary with Spark's default compression threshold (Spark's `PercentileDigest(relativeError)`). */
export const make = (relativeError: number, compressThreshold = DEFAULT_COMPRESS_THRESHOLD): Summary => ({
  compressThreshold,
  relativeError,
  values: [],
  g: [],
  delta: [],
  count: 0,
  head: [],
  compressed: true
})

/** Spark's `insert`: into the head buffer, folded into the samples when the buffer is full. */
export const insert = (s: Summary, x: number): void => {
  s.head.push(x)
  s.compressed = false
  if (s.head.length >= DEFAULT_HEAD_SIZE) {
    withHeadBufferInserted(s)
    if (s.values.length >= s.compressThreshold) compress(s)
  }
}

/** Spark's `withHeadBufferInserted`: the sorted head buffer merged into the samples. */
const withHeadBufferInserted = (s: Summary): void => {
  if (s.head.length === 0) return
  let currentCount = s.count
  const sorted = Float64Array.from(s.head).sort()
  const values: Array<number> = []
  const g: Array<number> = []
  const delta: Array<number> = []
  const n = s.values.length
  let sampleIdx = 0
  for (let opsIdx = 0; opsIdx < sorted.length; opsIdx++) {
    const current = sorted[opsIdx]
    while (sampleIdx < n && s.values[sampleIdx] <= current) {
      values.push(s.values[sampleIdx])
      g.push(s.g[sampleIdx])
      delta.push(s.delta[sampleIdx])
      sampleIdx++
    }
    currentCount++
    // The first and the last value are exact (delta 0).
    const d =
      values.length === 0 || (sampleIdx === n && opsIdx === sorted.length - 1)
        ? 0
        : Math.floor(2 * s.relativeError * currentCount)
    values.push(current)
    g.push(1)
    delta.push(d)
  }
  while (sampleIdx < n) {
    values.push(s.values[sampleIdx])
    g.push(s.g[sampleIdx])
    delta.push(s.delta[sampleIdx])
    sampleIdx++
  }
  s.values = values
  s.g = g
  s.delta = delta
  s.count = currentCount
  s.head = []
  s.compressed = false
}

/** Spark's `compressImmut`: merges neighbours whose combined span stays under `mergeThreshold`. */
const compressSamples = (s: Summary, mergeThreshold: number): void => {
  const n = s.values.length
  if (n === 0) return
  // Built from the end, then reversed (Spark prepends to a list).
  const rv: Array<number> = []
  const rg: Array<number> = []
  const rd: Array<number> = []
  let hv = s.values[n - 1]
  let hg = s.g[n - 1]
  let hd = s.delta[n - 1]
  for (let i = n - 2; i >= 1; i--) {
    if (s.g[i] + hg + hd < mergeThreshold) hg += s.g[i]
    else {
      rv.push(hv)
      rg.push(hg)
      rd.push(hd)
      hv = s.values[i]
      hg = s.g[i]
      hd = s.delta[i]
    }
  }
  rv.push(hv)
  rg.push(hg)
  rd.push(hd)
  // The minimum is kept unless the summary holds a single sample.
  if (s.values[0] <= hv && n > 1) {
    rv.push(s.values[0])
    rg.push(s.g[0])
    rd.push(s.delta[0])
  }
  s.values = rv.reverse()
  s.g = rg.reverse()
  s.delta = rd.reverse()
}

/** Spark's `compress`: the head buffer inserted, then the samples compressed. */
export const compress = (s: Summary): void => {
  withHeadBufferInserted(s)
  compressSamples(s, 2 * s.relativeError * s.count)
  s.compressed = true
}

/** A copy that shares nothing mutable with `s`. */
export const copy = (s: Summary): Summary => ({
  compressThreshold: s.compressThreshold,
  relativeError: s.relativeError,
  values: s.values.slice(),
  g: s.g.slice(),
  delta: s.delta.slice(),
  count: s.count,
  head: s.head.slice(),
  compressed: s.compressed
})

/**
 * Spark's `PercentileDigest.merge`: `a` compressed, then merged with a compressed `b` (Spark's
 * `QuantileSummaries.merge`). `a` is changed; `b` is not (it is compressed on a copy).
 */
export const merge = (a: Summary, b: Summary): void => {
  if (!a.compressed) compress(a)
  let o = b
  if (!b.compressed) {
    o = copy(b)
    compress(o)
  }
  if (o.count === 0) return
  if (a.count === 0) {
    a.relativeError = o.relativeError
    a.values = o.values.slice()
    a.g = o.g.slice()
    a.delta = o.delta.slice()
    a.count = o.count
    a.compressed = true
    return
  }
  const mergedRelativeError = Math.max(a.relativeError, o.relativeError)
  const mergedCount = a.count + o.count
  const additionalSelfDelta = Math.floor(2 * o.relativeError * o.count)
  const additionalOtherDelta = Math.floor(2 * a.relativeError * a.count)
  const values: Array<number> = []
  const g: Array<number> = []
  const delta: Array<number> = []
  let i = 0
  let j = 0
  const n = a.values.length
  const m = o.values.length
  while (i < n && j < m) {
    if (a.values[i] < o.values[j]) {
      values.push(a.values[i])
      g.push(a.g[i])
      delta.push(a.delta[i] + (j > 0 ? additionalSelfDelta : 0))
      i++
    } else {
      values.push(o.values[j])
      g.push(o.g[j])
      delta.push(o.delta[j] + (i > 0 ? additionalOtherDelta : 0))
      j++
    }
  }
  for (; i < n; i++) {
    values.push(a.values[i])
    g.push(a.g[i])
    delta.push(a.delta[i])
  }
  for (; j < m; j++) {
    values.push(o.values[j])
    g.push(o.g[j])
    delta.push(o.delta[j])
  }
  a.values = values
  a.g = g
  a.delta = delta
  a.count = mergedCount
  a.relativeError = mergedRelativeError
  compressSamples(a, 2 * mergedRelativeError * mergedCount)
  a.compressed = true
}

/**
 * Spark's `query(percentiles)` on the compressed summary (compressing `s` first, as Spark's
 * `PercentileDigest.getPercentiles` does): one value per percentage, in the given order, or
 * `undefined` when the summary is empty.
 */
export const query = (s: Summary, percentages: ReadonlyArray<number>): Array<number> | undefined => {
  if (!s.compressed) compress(s)
  const n = s.values.length
  if (s.count === 0 || n === 0 || percentages.length === 0) return undefined
  let maxSpan = Number.NEGATIVE_INFINITY
  for (let i = 0; i < n; i++) maxSpan = Math.max(maxSpan, s.delta[i] + s.g[i])
  // Spark divides a Long by 2: integer division.
  const targetError = Math.floor(maxSpan / 2)
  let index = 0
  let minRank = s.g[0]
  const order = percentages.map((_, i) => i).sort((x, y) => percentages[x] - percentages[y])
  const result = new Array<number>(percentages.length).fill(0)
  for (const pos of order) {
    const p = percentages[pos]
    if (p <= s.relativeError) result[pos] = s.values[0]
    else if (p >= 1 - s.relativeError) result[pos] = s.values[n - 1]
    else {
      // Spark's findApproxQuantile, resuming from the previous percentage's position.
      const rank = Math.ceil(p * s.count)
      let i = index
      let rankAt = minRank
      let found: number | undefined
      while (i < n - 1) {
        const maxRank = rankAt + s.delta[i]
        if (maxRank - targetError <= rank && rank <= rankAt + targetError) {
          found = s.values[i]
          break
        }
        i++
        rankAt += s.g[i]
      }
      if (found === undefined) {
        index = n - 1
        minRank = 0
        result[pos] = s.values[n - 1]
      } else {
        index = i
        minRank = rankAt
        result[pos] = found
      }
    }
  }
  return result
}
