/**
 * The statistical aggregates: Spark's `CentralMomentAgg` family (`stddev_samp`, `stddev_pop`,
 * `var_samp`, `var_pop` and their aliases `stddev`, `std`, `variance`), `Covariance`
 * (`covar_samp`, `covar_pop`), `Corr`, the exact `Percentile` (and `median`) and
 * `ApproximatePercentile` (`percentile_approx`, `approx_percentile`).
 *
 * The moments use Spark's one-pass update and merge formulas in the same order of floating-point
 * operations, so sums of squares round as Spark's do and results equal Spark's to the last bit.
 * A division by zero (a sample statistic over one value, `corr` over one pair) is null, as in
 * Spark 4; with `spark.sql.legacy.statisticalAggregate` it is NaN. Buffers are small arrays of
 * doubles; `toJSON`/`fromJSON` keep NaN, ±Infinity and -0.
 *
 * `percentile` keeps a count per distinct value (Spark's `OpenHashMap`; `-0.0` and `0.0` are
 * different keys, NaNs one key) and interpolates as Spark does; `percentile_approx` keeps Spark's
 * `QuantileSummaries` (`QuantileSummaries.ts`) with relative error `1 / accuracy`.
 *
 * @example
 * ```ts
 * import * as Stat from "./StatisticalAggregates.ts"
 * const impl = Stat.centralMoment("stddev_samp", (row) => row[0], false)
 * let buf = impl.init()
 * for (const row of [[1], [2], [3]]) buf = impl.update(buf, row)
 * impl.evaluate(buf) // 1.0, Spark's SELECT stddev_samp(col) FROM VALUES (1), (2), (3)
 * ```
 * @since 0.6.0
 */
import { expressionError } from "./RuntimeErrors.ts"
import * as T from "../DataType.ts"
import type { DataType } from "../DataType.ts"
import type { InternalRow } from "../Row.ts"
import * as QS from "./QuantileSummaries.ts"

type Evaluator = (row: InternalRow) => unknown

/** The shape of `Aggregates.AggregateImpl` (repeated here so that this module imports nothing back). */
export interface StatisticalImpl {
  readonly resultType: DataType
  readonly init: () => unknown
  readonly update: (buffer: unknown, row: InternalRow) => unknown
  readonly merge: (a: unknown, b: unknown) => unknown
  readonly evaluate: (buffer: unknown) => unknown
  readonly toJSON: (buffer: unknown) => unknown
  readonly fromJSON: (json: unknown) => unknown
}

const enc = (n: number): number | string => (Number.isFinite(n) ? (Object.is(n, -0) ? "-0" : n) : String(n))
const dec = (j: unknown): number => (typeof j === "number" ? j : j === "-0" ? -0 : Number(j))

const codecError = (what: string, j: unknown): Error =>
  new Error(`aggregate buffer: cannot decode ${what} from ${JSON.stringify(j)?.slice(0, 80)}`)

const doublesFromJSON = (what: string, n: number, j: unknown): Array<number> => {
  if (!Array.isArray(j) || j.length !== n) throw codecError(what, j)
  return j.map(dec)
}

// ---------------------------------------------------------------------------------------------
// Central moments
// ---------------------------------------------------------------------------------------------

/** The names of the central-moment aggregates (second order). */
export type MomentName = "stddev" | "std" | "stddev_samp" | "stddev_pop" | "variance" | "var_samp" | "var_pop"

/** `[n, avg, m2]`, Spark's `CentralMomentAgg` buffer for the second moment. */
type MomentBuffer = [n: number, avg: number, m2: number]

/**
 * One of the second-order central-moment aggregates over a double argument. `legacy` is Spark's
 * `spark.sql.legacy.statisticalAggregate`: a sample statistic of one value is NaN, not null.
 */
export const centralMoment = (name: MomentName, arg: Evaluator, legacy: boolean): StatisticalImpl => {
  const divideByZero = legacy ? Number.NaN : null
  const evaluate: (b: MomentBuffer) => number | null = (() => {
    switch (name) {
      case "stddev_pop":
        return (b) => (b[0] === 0 ? null : Math.sqrt(b[2] / b[0]))
      case "var_pop":
        return (b) => (b[0] === 0 ? null : b[2] / b[0])
      case "stddev":
      case "std":
      case "stddev_samp":
        return (b) => (b[0] === 0 ? null : b[0] === 1 ? divideByZero : Math.sqrt(b[2] / (b[0] - 1)))
      case "variance":
      case "var_samp":
        return (b) => (b[0] === 0 ? null : b[0] === 1 ? divideByZero : b[2] / (b[0] - 1))
    }
  })()
  return {
    resultType: T.DoubleType,
    init: (): MomentBuffer => [0, 0, 0],
    update: (buf, row) => {
      const v = arg(row)
      if (v === null || v === undefined) return buf
      const b = buf as MomentBuffer
      // Spark's updateExpressions, operation for operation.
      const newN = b[0] + 1
      const delta = (v as number) - b[1]
      const deltaN = delta / newN
      b[1] = b[1] + deltaN
      b[2] = b[2] + delta * (delta - deltaN)
      b[0] = newN
      return buf
    },
    merge: (x, y) => {
      const a = x as MomentBuffer
      const b = y as MomentBuffer
      const n1 = a[0]
      const n2 = b[0]
      const newN = n1 + n2
      const delta = b[1] - a[1]
      const deltaN = newN === 0 ? 0 : delta / newN
      a[1] = a[1] + deltaN * n2
      a[2] = a[2] + b[2] + delta * deltaN * n1 * n2
      a[0] = newN
      return x
    },
    evaluate: (b) => evaluate(b as MomentBuffer),
    toJSON: (b) => (b as MomentBuffer).map(enc),
    fromJSON: (j) => doublesFromJSON("a central-moment buffer", 3, j) as MomentBuffer
  }
}

/** `[n, avg, m2, m3, m4]`, Spark's `CentralMomentAgg` buffer up to the fourth moment. */
type HigherMomentBuffer = [n: number, avg: number, m2: number, m3: number, m4: number]

/**
 * `skewness` (third moment) or `kurtosis` (fourth, excess): Spark's updates and merges of m3 and
 * m4 (Meng's formulas) in Spark's order; null over no values, null (NaN with the legacy flag)
 * when m2 is 0.
 */
export const higherMoment = (name: "skewness" | "kurtosis", arg: Evaluator, legacy: boolean): StatisticalImpl => {
  const divideByZero = legacy ? Number.NaN : null
  const order = name === "skewness" ? 3 : 4
  return {
    resultType: T.DoubleType,
    init: (): HigherMomentBuffer => [0, 0, 0, 0, 0],
    update: (buf, row) => {
      const v = arg(row)
      if (v === null || v === undefined) return buf
      const b = buf as HigherMomentBuffer
      const newN = b[0] + 1
      const delta = (v as number) - b[1]
      const deltaN = delta / newN
      const newAvg = b[1] + deltaN
      const newM2 = b[2] + delta * (delta - deltaN)
      const delta2 = delta * delta
      const deltaN2 = deltaN * deltaN
      const newM3 = b[3] - 3 * deltaN * newM2 + delta * (delta2 - deltaN2)
      const newM4 =
        order >= 4 ? b[4] - 4 * deltaN * newM3 - 6 * deltaN2 * newM2 + delta * (delta * delta2 - deltaN * deltaN2) : 0
      b[0] = newN
      b[1] = newAvg
      b[2] = newM2
      b[3] = newM3
      b[4] = newM4
      return buf
    },
    merge: (x, y) => {
      const a = x as HigherMomentBuffer
      const b = y as HigherMomentBuffer
      const n1 = a[0]
      const n2 = b[0]
      const newN = n1 + n2
      const delta = b[1] - a[1]
      const deltaN = newN === 0 ? 0 : delta / newN
      const newAvg = a[1] + deltaN * n2
      const newM2 = a[2] + b[2] + delta * deltaN * n1 * n2
      const newM3 = a[3] + b[3] + deltaN * deltaN * delta * n1 * n2 * (n1 - n2) + 3 * deltaN * (n1 * b[2] - n2 * a[2])
      const newM4 =
        order >= 4
          ? a[4] +
            b[4] +
            deltaN * deltaN * deltaN * delta * n1 * n2 * (n1 * n1 - n1 * n2 + n2 * n2) +
            6 * deltaN * deltaN * (n1 * n1 * b[2] + n2 * n2 * a[2]) +
            4 * deltaN * (n1 * b[3] - n2 * a[3])
          : 0
      a[0] = newN
      a[1] = newAvg
      a[2] = newM2
      a[3] = newM3
      a[4] = newM4
      return x
    },
    evaluate: (buf) => {
      const [n, , m2, m3, m4] = buf as HigherMomentBuffer
      if (n === 0) return null
      if (m2 === 0) return divideByZero
      return name === "skewness" ? (Math.sqrt(n) * m3) / Math.sqrt(m2 * m2 * m2) : (n * m4) / (m2 * m2) - 3
    },
    toJSON: (b) => (b as HigherMomentBuffer).map(enc),
    fromJSON: (j) => doublesFromJSON("a central-moment buffer", 5, j) as HigherMomentBuffer
  }
}

// ---------------------------------------------------------------------------------------------
// Covariance and correlation
// ---------------------------------------------------------------------------------------------

/** `[n, xAvg, yAvg, ck]`, Spark's `Covariance` buffer. */
type CovarianceBuffer = [n: number, xAvg: number, yAvg: number, ck: number]

/** `covar_pop` / `covar_samp` over two double arguments; pairs with a null are skipped. */
export const covariance = (
  name: "covar_pop" | "covar_samp",
  x: Evaluator,
  y: Evaluator,
  legacy: boolean
): StatisticalImpl => {
  const divideByZero = legacy ? Number.NaN : null
  const evaluate =
    name === "covar_pop"
      ? (b: CovarianceBuffer) => (b[0] === 0 ? null : b[3] / b[0])
      : (b: CovarianceBuffer) => (b[0] === 0 ? null : b[0] === 1 ? divideByZero : b[3] / (b[0] - 1))
  return {
    resultType: T.DoubleType,
    init: (): CovarianceBuffer => [0, 0, 0, 0],
    update: (buf, row) => {
      const xv = x(row)
      if (xv === null || xv === undefined) return buf
      const yv = y(row)
      if (yv === null || yv === undefined) return buf
      const b = buf as CovarianceBuffer
      const newN = b[0] + 1
      const dx = (xv as number) - b[1]
      const dxN = dx / newN
      const newXAvg = b[1] + dxN
      const newYAvg = b[2] + ((yv as number) - b[2]) / newN
      b[3] = b[3] + dx * ((yv as number) - newYAvg)
      b[0] = newN
      b[1] = newXAvg
      b[2] = newYAvg
      return buf
    },
    merge: (p, q) => {
      const a = p as CovarianceBuffer
      const b = q as CovarianceBuffer
      const n1 = a[0]
      const n2 = b[0]
      const newN = n1 + n2
      const dx = b[1] - a[1]
      const dxN = newN === 0 ? 0 : dx / newN
      const dy = b[2] - a[2]
      const dyN = newN === 0 ? 0 : dy / newN
      a[1] = a[1] + dxN * n2
      a[2] = a[2] + dyN * n2
      a[3] = a[3] + b[3] + dx * dyN * n1 * n2
      a[0] = newN
      return p
    },
    evaluate: (b) => evaluate(b as CovarianceBuffer),
    toJSON: (b) => (b as CovarianceBuffer).map(enc),
    fromJSON: (j) => doublesFromJSON("a covariance buffer", 4, j) as CovarianceBuffer
  }
}

/** `[n, xAvg, yAvg, ck, xMk, yMk]`, Spark's `PearsonCorrelation` buffer. */
type CorrBuffer = [n: number, xAvg: number, yAvg: number, ck: number, xMk: number, yMk: number]

/** `corr(x, y)`: Pearson's coefficient; pairs with a null are skipped. */
export const corr = (x: Evaluator, y: Evaluator, legacy: boolean): StatisticalImpl => {
  const divideByZero = legacy ? Number.NaN : null
  return {
    resultType: T.DoubleType,
    init: (): CorrBuffer => [0, 0, 0, 0, 0, 0],
    update: (buf, row) => {
      const xv = x(row)
      if (xv === null || xv === undefined) return buf
      const yv = y(row)
      if (yv === null || yv === undefined) return buf
      const b = buf as CorrBuffer
      const xd = xv as number
      const yd = yv as number
      const newN = b[0] + 1
      const dx = xd - b[1]
      const dxN = dx / newN
      const dy = yd - b[2]
      const dyN = dy / newN
      const newXAvg = b[1] + dxN
      const newYAvg = b[2] + dyN
      b[3] = b[3] + dx * (yd - newYAvg)
      b[4] = b[4] + dx * (xd - newXAvg)
      b[5] = b[5] + dy * (yd - newYAvg)
      b[0] = newN
      b[1] = newXAvg
      b[2] = newYAvg
      return buf
    },
    merge: (p, q) => {
      const a = p as CorrBuffer
      const b = q as CorrBuffer
      const n1 = a[0]
      const n2 = b[0]
      const newN = n1 + n2
      const dx = b[1] - a[1]
      const dxN = newN === 0 ? 0 : dx / newN
      const dy = b[2] - a[2]
      const dyN = newN === 0 ? 0 : dy / newN
      a[1] = a[1] + dxN * n2
      a[2] = a[2] + dyN * n2
      a[3] = a[3] + b[3] + dx * dyN * n1 * n2
      a[4] = a[4] + b[4] + dx * dxN * n1 * n2
      a[5] = a[5] + b[5] + dy * dyN * n1 * n2
      a[0] = newN
      return p
    },
    evaluate: (buf) => {
      const b = buf as CorrBuffer
      if (b[0] === 0) return null
      if (b[0] === 1) return divideByZero
      // Spark's `ck / sqrt(xMk * yMk)` is a `Divide`: null when a variance is 0 (a constant column)
      const d = Math.sqrt(b[4] * b[5])
      return d === 0 ? null : b[3] / d
    },
    toJSON: (b) => (b as CorrBuffer).map(enc),
    fromJSON: (j) => doublesFromJSON("a correlation buffer", 6, j) as CorrBuffer
  }
}

// ---------------------------------------------------------------------------------------------
// Exact percentile
// ---------------------------------------------------------------------------------------------

/** The counts of the distinct values seen; the key tells -0.0 from 0.0 (boxed doubles do in Spark). */
type CountsBuffer = Map<number | string, [value: number, count: number]>

const countKey = (v: number): number | string => (v === 0 && Object.is(v, -0) ? "-0" : v)

/** Java's `Double.compare` (NaN last, -0.0 before 0.0), the order of Spark's `DoubleType.ordering`. */
const compareDouble = (a: number, b: number): number => {
  if (a < b) return -1
  if (a > b) return 1
  const an = Number.isNaN(a)
  const bn = Number.isNaN(b)
  if (an || bn) return an === bn ? 0 : an ? 1 : -1
  const az = Object.is(a, -0)
  const bz = Object.is(b, -0)
  return az === bz ? 0 : az ? -1 : 1
}

/** The first index whose cumulative count reaches `value` (Spark's `binarySearchCount`). */
const lowerBound = (cum: ReadonlyArray<number>, value: number): number => {
  let lo = 0
  let hi = cum.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (cum[mid] < value) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Spark's `PercentileBase.getPercentile` over the sorted distinct values and their cumulative
 * counts: the value at position `(count - 1) * percentage`, interpolated linearly between the
 * two neighbours when the position has a fraction.
 */
const percentileAt = (keys: ReadonlyArray<number>, cum: ReadonlyArray<number>, percentage: number): number => {
  const position = (cum[cum.length - 1] - 1) * percentage
  const lower = Math.floor(position)
  const higher = Math.ceil(position)
  const lowerKey = keys[lowerBound(cum, lower + 1)]
  if (higher === lower) return lowerKey
  const higherKey = keys[lowerBound(cum, higher + 1)]
  if (higherKey === lowerKey) return lowerKey
  return (higher - position) * lowerKey + (position - lower) * higherKey
}

/**
 * `percentile(x, percentages)` (and `median(x)`: the percentage 0.5): the exact percentiles of a
 * numeric argument, a double, or an array of doubles when `asArray`; null over no values.
 */
export const percentile = (
  arg: Evaluator,
  percentages: ReadonlyArray<number>,
  asArray: boolean,
  frequency?: { readonly eval: Evaluator; readonly sql: string }
): StatisticalImpl => {
  const add = (b: CountsBuffer, v: number, count: number): void => {
    const k = countKey(v)
    const e = b.get(k)
    if (e === undefined) b.set(k, [v, count])
    else e[1] += count
  }
  return {
    resultType: asArray ? T.array(T.DoubleType, false) : T.DoubleType,
    init: (): CountsBuffer => new Map(),
    update:
      frequency === undefined
        ? (buf, row) => {
            const v = arg(row)
            if (v !== null && v !== undefined) add(buf as CountsBuffer, v as number, 1)
            return buf
          }
        : (buf, row) => {
            const v = arg(row)
            if (v === null || v === undefined) return buf
            const f = frequency.eval(row)
            if (f === null || f === undefined) return buf
            const n = Number(f)
            if (n > 0) add(buf as CountsBuffer, v as number, n)
            // Spark fails the query (QueryExecutionErrors.negativeValueUnexpectedError).
            else if (n < 0)
              throw expressionError(
                "NEGATIVE_VALUES_IN_FREQUENCY_EXPRESSION",
                "22003",
                `Found the negative value in ${frequency.sql}: ${n}, but expected a positive integral value.`
              )
            return buf
          },
    merge: (a, b) => {
      for (const [v, c] of (b as CountsBuffer).values()) add(a as CountsBuffer, v, c)
      return a
    },
    evaluate: (buf) => {
      const b = buf as CountsBuffer
      if (b.size === 0) return null
      const entries = [...b.values()].sort((x, y) => compareDouble(x[0], y[0]))
      const keys = entries.map((e) => e[0])
      const cum: Array<number> = []
      let total = 0
      for (const e of entries) {
        total += e[1]
        cum.push(total)
      }
      const results = percentages.map((p) => percentileAt(keys, cum, p))
      return asArray ? results : results[0]
    },
    toJSON: (buf) => {
      const out: Array<unknown> = []
      for (const [v, c] of (buf as CountsBuffer).values()) out.push(enc(v), c)
      return out
    },
    fromJSON: (j) => {
      if (!Array.isArray(j) || j.length % 2 !== 0) throw codecError("percentile counts", j)
      const b: CountsBuffer = new Map()
      for (let i = 0; i < j.length; i += 2) add(b, dec(j[i]), Number(j[i + 1]))
      return b
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Approximate percentile
// ---------------------------------------------------------------------------------------------

/**
 * `percentile_approx(x, percentages, accuracy)`: Spark's `ApproximatePercentile` over a numeric,
 * date or timestamp argument `t`; the result has the argument's type (an array of it when
 * `asArray`), null over no values.
 */
export const percentileApprox = (
  t: DataType,
  arg: Evaluator,
  percentages: ReadonlyArray<number>,
  asArray: boolean,
  accuracy: number
): StatisticalImpl => {
  const relativeError = 1 / accuracy
  // Spark converts the double answer back to the input type (`toInt`, `toLong`: truncation).
  const back: (d: number) => number =
    T.isIntegral(t) || t._tag === "date" || t._tag === "timestamp" ? Math.trunc : (d) => d
  return {
    resultType: asArray ? T.array(t, false) : t,
    init: () => QS.make(relativeError),
    update: (buf, row) => {
      const v = arg(row)
      if (v !== null && v !== undefined) QS.insert(buf as QS.Summary, v as number)
      return buf
    },
    merge: (a, b) => {
      QS.merge(a as QS.Summary, b as QS.Summary)
      return a
    },
    evaluate: (buf) => {
      const r = QS.query(buf as QS.Summary, percentages)
      if (r === undefined) return null
      const out = r.map(back)
      return asArray ? out : out[0]
    },
    // Spark serializes the compressed summary (`PercentileDigestSerializer`): the same here.
    toJSON: (buf) => {
      const s = buf as QS.Summary
      if (!s.compressed) QS.compress(s)
      return { e: enc(s.relativeError), n: s.count, v: s.values.map(enc), g: s.g, d: s.delta }
    },
    fromJSON: (j) => {
      const o = j as { e?: unknown; n?: unknown; v?: unknown; g?: unknown; d?: unknown }
      if (
        o === null ||
        typeof o !== "object" ||
        typeof o.n !== "number" ||
        !Array.isArray(o.v) ||
        !Array.isArray(o.g) ||
        !Array.isArray(o.d) ||
        o.v.length !== o.g.length ||
        o.v.length !== o.d.length
      )
        throw codecError("a quantile summary", j)
      const s = QS.make(dec(o.e))
      s.values = o.v.map(dec)
      s.g = (o.g as Array<unknown>).map(Number)
      s.delta = (o.d as Array<unknown>).map(Number)
      s.count = o.n
      s.compressed = true
      return s
    }
  }
}
