/**
 * Spark's math functions: `abs`, `round`/`bround` (HALF_UP / HALF_EVEN on the decimal value, as
 * Spark's `BigDecimal(d).setScale`), `floor`/`ceil` (to bigint), `sqrt`, `exp`, `log` (null
 * outside the domain), `pow`, trigonometry, `signum`, `pmod`, `isnan`, `nanvl`, `greatest`,
 * `least`, with Spark's result types: arguments of the double functions are implicitly cast to
 * double (strings included), integral functions keep their input type.
 *
 * @since 0.1.0
 */
import { doubleToLong } from "../Cast.ts"
import * as Long from "../Long.ts"
import { nullableOf } from "../Compile.ts"
import * as T from "../DataType.ts"
import type { Expression } from "../Expression.ts"
import * as O from "../Ordering.ts"
import { callName, commonTypeOf, dataDiffTypes, define, invalid, isFoldableLiteral, wrongNumArgs } from "./Define.ts"
import { register, type ScalarFunctionDef } from "./Registry.ts"

const D = T.DoubleType

/** A function of one double giving a double (Spark's `UnaryMathExpression`, which is always nullable). */
/** 2^28 and 2^-28, fdlibm's thresholds. */
const TWO_28 = 268435456
const TWO_M28 = 1 / TWO_28

/** Spark 4.2's `Asinh` (fdlibm's s_asinh.c): exact for large |x|, where log(x + sqrt(x*x + 1)) cancels or overflows. */
const asinh = (x: number): number => {
  const ax = Math.abs(x)
  let w: number
  if (!Number.isFinite(ax) || ax < TWO_M28) w = ax
  else if (ax > TWO_28) w = Math.log(ax) + Math.log(2)
  else if (ax > 2) w = Math.log(2 * ax + 1 / (Math.sqrt(x * x + 1) + ax))
  else {
    const t = x * x
    w = Math.log1p(ax + t / (1 + Math.sqrt(1 + t)))
  }
  return x < 0 || Object.is(x, -0) ? -w : w
}

/** Spark 4.2's `Acosh` (fdlibm's e_acosh.c): NaN below 1. */
const acosh = (x: number): number => {
  if (x < 1) return Number.NaN
  if (x >= TWO_28) return Math.log(x) + Math.log(2)
  if (x === 1) return 0
  if (x > 2) return Math.log(2 * x - 1 / (x + Math.sqrt(x * x - 1)))
  const t = x - 1
  return Math.log1p(t + Math.sqrt(2 * t + t * t))
}

const unaryDouble = (name: string, f: (x: number) => number): ScalarFunctionDef =>
  define({ name, inputs: [D], result: D, nullable: "always", strict: () => f })

/** Spark's `UnaryLogExpression`: null at or below the asymptote instead of -Infinity/NaN. */
const unaryLog = (name: string, asymptote: number, f: (x: number) => number): ScalarFunctionDef =>
  define({
    name,
    inputs: [D],
    result: D,
    nullable: "always",
    strict: () => (x: number) => (x <= asymptote ? null : f(x))
  })

// Spark's Log2 is ln(x) / ln(2), not a dedicated log2
const LN2 = Math.log(2)

// ---- fdlibm's cbrt and hypot, as java.lang.StrictMath computes them -------------------------
// Java's Math.cbrt and Math.hypot delegate to StrictMath (fdlibm 5.3); V8's Math.cbrt/Math.hypot
// round differently in the last bit for many inputs (hypot(134, 101) is 167.80047675736802 in
// Spark, 167.800476757368 with Math.hypot). These follow fdlibm's algorithms step by step, on the
// two 32-bit halves of a double.

const bits = new Float64Array(1)
const words = new Int32Array(bits.buffer)
// The high word is the second on little-endian platforms.
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0
const LO = 1 - HI
const highWord = (x: number): number => {
  bits[0] = x
  return words[HI]
}
const setHigh = (x: number, high: number): number => {
  bits[0] = x
  words[HI] = high
  return bits[0]
}
const setLow = (x: number, low: number): number => {
  bits[0] = x
  words[LO] = low
  return bits[0]
}
const MIN_NORMAL = 2.2250738585072014e-308

/** fdlibm's `cbrt`: a 5-bit first guess from the exponent, a rational refinement, one Newton step. */
export const fdlibmCbrt = (value: number): number => {
  if (value === 0 || !Number.isFinite(value)) return value
  const sign = value < 0 ? -1 : 1
  const x = Math.abs(value)
  let t: number
  if (x < MIN_NORMAL) {
    t = 2 ** 54 * x
    t = setHigh(t, ((highWord(t) / 3) | 0) + 696219795)
  } else {
    t = setHigh(0, ((highWord(x) / 3) | 0) + 715094163)
  }
  // fdlibm's constants 19/35, 5/14, 45/28, 99/70 and -864/1225, as doubles
  let r = (t * t) / x
  let s = 0.5428571428571428 + r * t
  t *= 0.35714285714285715 + 1.6071428571428572 / (s + 1.4142857142857144 + -0.7053061224489796 / s)
  // chopped to 20 bits and made larger than cbrt(x)
  t = setLow(t, 0)
  t = setHigh(t, highWord(t) + 1)
  s = t * t
  r = x / s
  const w = t + t
  r = (r - t) / (w + r)
  return sign * (t + t * r)
}

/** fdlibm's `hypot`: sqrt(x² + y²) with the squares split into exact high and low parts, scaled away from overflow. */
export const fdlibmHypot = (x: number, y: number): number => {
  let a = Math.abs(x)
  let b = Math.abs(y)
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === Infinity || b === Infinity ? Infinity : a + b
  if (b > a) {
    const tmp = a
    a = b
    b = tmp
  }
  let ha = highWord(a)
  let hb = highWord(b)
  if (ha - hb > 0x3c00000) return a + b // a / b > 2**60
  let k = 0
  if (a > (1 + 0xffffffff * 2 ** -52) * 2 ** 500) {
    ha = (ha - 0x25800000) | 0
    hb = (hb - 0x25800000) | 0
    a *= 2 ** -600
    b *= 2 ** -600
    k += 600
  }
  if (b < 2 ** -500) {
    if (b < MIN_NORMAL) {
      if (b === 0) return a
      // fdlibm leaves ha and hb as they were here
      b *= 2 ** 1022
      a *= 2 ** 1022
      k -= 1022
    } else {
      ha = (ha + 0x25800000) | 0
      hb = (hb + 0x25800000) | 0
      a *= 2 ** 600
      b *= 2 ** 600
      k -= 600
    }
  }
  let w = a - b
  if (w > b) {
    const t1 = setHigh(0, ha)
    const t2 = a - t1
    w = Math.sqrt(t1 * t1 - (b * -b - t2 * (a + t1)))
  } else {
    a = a + a
    const y1 = setHigh(0, hb)
    const y2 = b - y1
    const t1 = setHigh(0, (ha + 0x00100000) | 0)
    const t2 = a - t1
    w = Math.sqrt(t1 * y1 - (w * -w - (t1 * y2 + t2 * b)))
  }
  return k !== 0 ? 2 ** k * w : w
}

type RoundingMode = "HALF_UP" | "HALF_EVEN"

/**
 * Rounds the decimal digits of `d` (its shortest representation, which is what Scala's
 * `BigDecimal(d)` uses) to `scale` places: `round(2.675, 2)` is 2.68 in Spark, not 2.67.
 */
export const roundDouble = (d: number, scale: number, mode: RoundingMode): number => {
  if (!Number.isFinite(d)) return d
  // BigDecimal has no negative zero
  if (d === 0) return 0
  const neg = d < 0
  const [mant, expText] = Math.abs(d).toExponential().split("e")
  const digits = mant.replace(".", "")
  const exp = Number(expText)
  // value = 0.digits * 10^(exp + 1); keep `exp + 1 + scale` digits
  const keep = exp + 1 + scale
  if (keep >= digits.length) return d
  let result: number
  if (keep < 0) result = 0
  else {
    const kept = digits.slice(0, keep)
    const first = digits.charCodeAt(keep) - 48
    const rest = digits.slice(keep + 1)
    let up: boolean
    if (first > 5) up = true
    else if (first < 5) up = false
    else if (/[1-9]/.test(rest)) up = true
    else if (mode === "HALF_UP") up = true
    else {
      const last = kept.length === 0 ? 0 : kept.charCodeAt(kept.length - 1) - 48
      up = last % 2 === 1
    }
    let n = kept.length === 0 ? 0n : BigInt(kept)
    if (up) n += 1n
    // n * 10^(exp + 1 - keep) = n * 10^(-scale)
    result = Number(`${n}e${-scale}`)
  }
  return neg && result !== 0 ? -result : result
}

/** Rounds an integral value to a negative scale (positive scales leave it unchanged). */
const roundIntegral = (x: number, scale: number, mode: RoundingMode): number => {
  if (scale >= 0) return x
  if (-scale > 18) return 0
  const factor = 10 ** -scale
  const q = Math.trunc(x / factor)
  const r = x - q * factor
  const twice = Math.abs(r) * 2
  let up: boolean
  if (twice > factor) up = true
  else if (twice < factor) up = false
  else up = mode === "HALF_UP" || Math.abs(q) % 2 === 1
  const m = up ? q + Math.sign(x) : q
  return m * factor + 0
}

/** Rounds a long to a negative scale exactly (Spark rounds a BigDecimal and takes `longValue`). */
const roundLong = (x: Long.Long, scale: number, mode: RoundingMode): Long.Long => {
  if (scale >= 0) return x
  if (typeof x === "number" && Math.abs(x) < 2 ** 52 && -scale <= 15) return roundIntegral(x, scale, mode)
  if (-scale > 18) return 0
  const b = Long.toBigInt(x)
  const factor = 10n ** BigInt(-scale)
  const q = b / factor
  const r = b - q * factor
  const twice = (r < 0n ? -r : r) * 2n
  let up: boolean
  if (twice > factor) up = true
  else if (twice < factor) up = false
  else up = mode === "HALF_UP" || (q < 0n ? -q : q) % 2n === 1n
  const m = up ? q + (b < 0n ? -1n : 1n) : q
  return Long.fromBigInt(m * factor)
}

const roundFunction = (name: string, mode: RoundingMode): ScalarFunctionDef => {
  const def = define({
    name,
    inputs: ["numeric", T.IntegerType],
    minArgs: 1,
    result: (types) => types[0],
    // Spark's RoundBase is always nullable
    nullable: "always",
    strict: (info) => {
      const t = info.argTypes[0]
      switch (t._tag) {
        case "integer":
          return (x: number, scale = 0) => roundIntegral(x, scale, mode) | 0
        case "long":
          return (x: Long.Long, scale = 0) => roundLong(x, scale, mode)
        default:
          return (x: number, scale = 0) => roundDouble(x, scale, mode)
      }
    }
  })
  return {
    ...def,
    resolve: (argTypes, args) => {
      // Spark requires a constant scale ("The second parameter requires a foldable expression")
      if (args.length === 2 && !isFoldableLiteral(args[1])) {
        return invalid(
          `[DATATYPE_MISMATCH.NON_FOLDABLE_INPUT] Cannot resolve "${callName(name, args)}" due to data type mismatch: the input \`scale\` should be a foldable "INT" expression; however, got "${callName("", [args[1]]).slice(1, -1)}".`
        )
      }
      return def.resolve(argTypes, args)
    }
  }
}

/** Math.round with ties to even (Java's `Math.rint`). */
const rint = (x: number): number => {
  if (!Number.isFinite(x)) return x
  const f = Math.floor(x)
  const diff = x - f
  if (diff < 0.5) return f
  if (diff > 0.5) return f + 1
  return f % 2 === 0 ? f : f + 1
}

const floorCeil = (name: string, f: (x: number) => number): ScalarFunctionDef =>
  define({
    name,
    inputs: [[D, T.LongType, T.IntegerType]],
    result: T.LongType,
    strict: (info) => (info.argTypes[0]._tag === "double" ? (x: number) => doubleToLong(f(x)) : (x: number) => x)
  })

/** `greatest`/`least`: the common type of all arguments, nulls skipped, null only when all are null. */
const extremum = (name: string, greatest: boolean): ScalarFunctionDef => ({
  name,
  resolve: (argTypes, args) => {
    if (argTypes.length < 2) return wrongNumArgs(name, "> 1", argTypes.length)
    const common = commonTypeOf(argTypes)
    if (common === undefined) return dataDiffTypes(name, args, argTypes)
    return {
      _tag: "Resolved",
      resultType: common,
      nullable: args.every(nullableOf),
      castArgsTo: argTypes.map((t) => (T.sameType(t, common) ? undefined : common))
    }
  },
  compile: (args, _argTypes, resultType) => {
    const cmp = O.comparator(resultType)
    const n = args.length
    return (row) => {
      let best: unknown = null
      for (let i = 0; i < n; i++) {
        const v = args[i](row)
        if (v == null) continue
        if (best === null) best = v
        else {
          const c = cmp(v, best)
          if (greatest ? c > 0 : c < 0) best = v
        }
      }
      return best
    }
  }
})

// exact: 19! and 20! are beyond 2^53
const FACTORIALS: Array<Long.Long> = [1]
for (let i = 1, f = 1n; i <= 20; i++) {
  f *= BigInt(i)
  FACTORIALS.push(Long.fromBigInt(f))
}

const numericResult = (types: ReadonlyArray<T.DataType>): T.DataType => types[0]

const pmodInputs = (argTypes: ReadonlyArray<T.DataType>, args: ReadonlyArray<Expression>) => {
  const common = commonTypeOf(argTypes)
  if (common === undefined || !(T.isNumeric(common) || common._tag === "null" || common._tag === "string")) {
    return dataDiffTypes("pmod", args, argTypes)
  }
  const target = T.isNumeric(common) ? common : D
  return [target, target]
}

register(
  define({
    name: "abs",
    inputs: ["numeric"],
    result: numericResult,
    strict: (info) =>
      info.argTypes[0]._tag === "integer"
        ? // Java: Math.abs(Int.MinValue) is Int.MinValue
          (x: number) => Math.abs(x) | 0
        : info.argTypes[0]._tag === "long"
          ? Long.abs
          : (x: number) => Math.abs(x)
  }),
  define({
    name: "negative",
    inputs: ["numeric"],
    result: numericResult,
    strict: (info) =>
      info.argTypes[0]._tag === "integer"
        ? (x: number) => -x | 0
        : info.argTypes[0]._tag === "long"
          ? Long.negate
          : (x: number) => 0 - x
  }),
  define({ name: "positive", inputs: ["numeric"], result: numericResult, strict: () => (x: number) => x }),
  roundFunction("round", "HALF_UP"),
  roundFunction("bround", "HALF_EVEN"),
  floorCeil("floor", Math.floor),
  floorCeil("ceil", Math.ceil),
  floorCeil("ceiling", Math.ceil),
  unaryDouble("rint", rint),
  unaryDouble("sqrt", Math.sqrt),
  unaryDouble("cbrt", fdlibmCbrt),
  unaryDouble("exp", Math.exp),
  unaryDouble("expm1", Math.expm1),
  unaryLog("ln", 0, Math.log),
  unaryLog("log10", 0, Math.log10),
  unaryLog("log2", 0, (x) => Math.log(x) / LN2),
  unaryLog("log1p", -1, Math.log1p),
  define({
    name: "log",
    inputs: [D, D],
    minArgs: 1,
    result: D,
    nullable: "always",
    strict: (info) =>
      info.argTypes.length === 1
        ? (x: number) => (x <= 0 ? null : Math.log(x))
        : (base: number, x: number) => (base <= 0 || x <= 0 ? null : Math.log(x) / Math.log(base))
  }),
  define({ name: "pow", inputs: [D, D], result: D, strict: () => Math.pow }),
  define({ name: "power", inputs: [D, D], result: D, strict: () => Math.pow }),
  unaryDouble("sin", Math.sin),
  unaryDouble("cos", Math.cos),
  unaryDouble("tan", Math.tan),
  unaryDouble("asin", Math.asin),
  unaryDouble("acos", Math.acos),
  unaryDouble("atan", Math.atan),
  unaryDouble("sinh", Math.sinh),
  unaryDouble("cosh", Math.cosh),
  unaryDouble("tanh", Math.tanh),
  // Spark computes the inverse hyperbolic functions with these formulas, not java.lang.Math
  // (Spark 4.2's Asinh / Acosh follow fdlibm's s_asinh.c / e_acosh.c, operation for operation;
  // StrictMath.log/log1p are fdlibm's, as V8's Math.log/log1p)
  unaryDouble("asinh", asinh),
  unaryDouble("acosh", acosh),
  unaryDouble("atanh", (x) => 0.5 * (Math.log1p(x) - Math.log1p(-x))),
  unaryDouble("cot", (x) => 1 / Math.tan(x)),
  unaryDouble("sec", (x) => 1 / Math.cos(x)),
  unaryDouble("csc", (x) => 1 / Math.sin(x)),
  // java.lang.Math.toDegrees/toRadians (JDK 9+) multiply by one precomputed constant; computing
  // x * 180 / PI rounds differently in the last bit (degrees(241.77) is 13852.400612877915 in Spark)
  unaryDouble("degrees", (x) => x * 57.29577951308232),
  unaryDouble("radians", (x) => x * 0.017453292519943295),
  // Spark adds 0.0 to both sides so that -0.0 and 0.0 give the same angle
  define({
    name: "atan2",
    inputs: [D, D],
    result: D,
    strict: () => (y: number, x: number) => Math.atan2(y + 0, x + 0)
  }),
  define({ name: "hypot", inputs: [D, D], result: D, strict: () => fdlibmHypot }),
  unaryDouble("signum", (x) => (x !== x ? x : Math.sign(x))),
  unaryDouble("sign", (x) => (x !== x ? x : Math.sign(x))),
  define({ name: "e", inputs: [], result: D, nullable: "never", strict: () => () => Math.E }),
  define({ name: "pi", inputs: [], result: D, nullable: "never", strict: () => () => Math.PI }),
  define({
    name: "factorial",
    inputs: [T.IntegerType],
    result: T.LongType,
    nullable: "always",
    strict: () => (n: number) => (n < 0 || n > 20 ? null : FACTORIALS[n])
  }),
  define({
    name: "bin",
    inputs: [T.LongType],
    result: T.StringType,
    strict: () => (n: Long.Long) => BigInt.asUintN(64, Long.toBigInt(n)).toString(2)
  }),
  define({
    name: "pmod",
    inputs: pmodInputs,
    minArgs: 2,
    maxArgs: 2,
    result: (types) => types[0],
    nullable: "always",
    strict: (info) => {
      // Spark's Pmod keeps a double remainder's sign: pmod(-3.0, 1.5) is -0.0 (issue #21,
      // deviation 9); integral results have no -0.
      const t = info.argTypes[0]._tag
      if (t === "long") return (a: Long.Long, n: Long.Long) => (n === 0 ? null : Long.pmod(a, n))
      const wrap = t === "integer" ? (v: number) => v | 0 : t === "double" ? (v: number) => v : (v: number) => v + 0
      return (a: number, n: number) => {
        if (n === 0) return null
        const r = a % n
        return wrap(r < 0 ? (r + n) % n : r)
      }
    }
  }),
  define({
    name: "isnan",
    inputs: [D],
    result: T.BooleanType,
    nullable: "never",
    // Spark: isnan(null) is false, never null
    compile: (args) => {
      const a = args[0]
      return (row) => {
        const x = a(row)
        return x != null && x !== x
      }
    }
  }),
  define({
    name: "nanvl",
    inputs: [D, D],
    result: D,
    compile: (args) => {
      const [a, b] = args
      return (row) => {
        const x = a(row)
        if (x == null) return null
        return x !== x ? b(row) : x
      }
    }
  }),
  extremum("greatest", true),
  extremum("least", false)
)
