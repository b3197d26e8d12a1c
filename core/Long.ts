/**
 * Spark's `LongType` values: exact signed 64-bit integers with Java's wrap-around (non-ANSI).
 *
 * A long is a JavaScript `number` when it is a safe integer (within ±(2^53−1)) and a `bigint`
 * otherwise: the representation the Spark Connect client returns, so rows of both engines compare
 * equal, and ordinary longs stay plain numbers. The representation is unique (a `bigint` is never
 * within the safe range), so `===`, `Map`/`Set` keys and `String` keep working on longs, and
 * JavaScript's `<` compares a `number` with a `bigint` exactly.
 *
 * Every operation takes the number path when its operands and its result are safe (no `bigint`
 * is allocated there: these run in the hot loops); only a result that leaves the safe range is
 * computed with `BigInt` and wrapped modulo 2^64 (`BigInt.asIntN(64, …)`), as Java's `long` does.
 *
 * @since 0.1.0
 */

/** A Spark long: a safe-integer `number`, or a `bigint` beyond ±(2^53−1) within the 64-bit range. */
export type Long = number | bigint

const MAX_SAFE = Number.MAX_SAFE_INTEGER
const MIN_SAFE = Number.MIN_SAFE_INTEGER
const MAX_SAFE_BIG = BigInt(MAX_SAFE)
const MIN_SAFE_BIG = BigInt(MIN_SAFE)

/** `Long.MAX_VALUE`, 2^63 − 1. */
export const MAX_VALUE: bigint = 9223372036854775807n
/** `Long.MIN_VALUE`, −2^63. */
export const MIN_VALUE: bigint = -9223372036854775808n

/** The long of an exact integer already within the 64-bit range (no wrap). */
const fromBigIntInRange = (b: bigint): Long => (b >= MIN_SAFE_BIG && b <= MAX_SAFE_BIG ? Number(b) : b)

/** The long of any integer as a `bigint`, wrapped modulo 2^64 as Java's `long` arithmetic does. */
export const fromBigInt = (b: bigint): Long => {
  if (b >= MIN_SAFE_BIG && b <= MAX_SAFE_BIG) return Number(b)
  return fromBigIntInRange(BigInt.asIntN(64, b))
}

/** The `bigint` of a long. */
export const toBigInt = (x: Long): bigint => (typeof x === "bigint" ? x : BigInt(x))

/** Java's `(double)` of a long: the nearest double. */
export const toDouble = (x: Long): number => (typeof x === "number" ? x : Number(x))

/** Whether a value is a long in the canonical representation (a safe integer or a big one in range). */
export const isLong = (v: unknown): v is Long =>
  typeof v === "number"
    ? Number.isSafeInteger(v)
    : typeof v === "bigint" && v >= MIN_VALUE && v <= MAX_VALUE && (v < MIN_SAFE_BIG || v > MAX_SAFE_BIG)

/**
 * A user's value for a long column in the canonical representation: a `bigint` within the safe
 * range becomes a number, one beyond 64 bits wraps; numbers are kept (an unsafe or fractional
 * number is left as it is: its exact value is already lost).
 */
export const normalize = (v: unknown): unknown => (typeof v === "bigint" ? fromBigInt(v) : v)

/** `x + y` with Java's wrap-around. */
export const add = (x: Long, y: Long): Long => {
  if (typeof x === "number" && typeof y === "number") {
    // both safe: the double sum is exact when the true sum is safe, and unsafe when it is not
    const r = x + y
    if (r <= MAX_SAFE && r >= MIN_SAFE) return r
  }
  return fromBigInt(toBigInt(x) + toBigInt(y))
}

/** `x - y` with Java's wrap-around. */
export const subtract = (x: Long, y: Long): Long => {
  if (typeof x === "number" && typeof y === "number") {
    const r = x - y
    if (r <= MAX_SAFE && r >= MIN_SAFE) return r + 0
  }
  return fromBigInt(toBigInt(x) - toBigInt(y))
}

/** `x * y` with Java's wrap-around (`Long.MAX_VALUE * -50` is 50). */
export const multiply = (x: Long, y: Long): Long => {
  if (typeof x === "number" && typeof y === "number") {
    const r = x * y
    // + 0: a negative long times zero is 0 in Java, -0 in JavaScript
    if (r <= MAX_SAFE && r >= MIN_SAFE) return r + 0
  }
  return fromBigInt(toBigInt(x) * toBigInt(y))
}

/** `-x` with Java's wrap-around (`-Long.MIN_VALUE` is `Long.MIN_VALUE`). */
export const negate = (x: Long): Long => (typeof x === "number" ? 0 - x : fromBigInt(-x))

/** Java's `Math.abs` of a long (`abs(Long.MIN_VALUE)` is `Long.MIN_VALUE`). */
export const abs = (x: Long): Long => (typeof x === "number" ? Math.abs(x) : x < 0n ? fromBigInt(-x) : x)

/** Java's `x / y` of longs: truncated toward zero; `y` must not be 0 (`MIN_VALUE / -1` is `MIN_VALUE`). */
export const divide = (x: Long, y: Long): Long => {
  if (typeof x === "number" && typeof y === "number") return Math.trunc(x / y) + 0
  return fromBigInt(toBigInt(x) / toBigInt(y))
}

/** Java's `x % y` of longs: the sign of the dividend; `y` must not be 0. */
export const remainder = (x: Long, y: Long): Long => {
  if (typeof x === "number" && typeof y === "number") return (x % y) + 0
  return fromBigIntInRange(toBigInt(x) % toBigInt(y))
}

/** Spark's `pmod` of longs: `((x % y) + y) % y` when `x % y` is negative; `y` must not be 0. */
export const pmod = (x: Long, y: Long): Long => {
  const r = remainder(x, y)
  return r < 0 ? remainder(add(r, y), y) : r
}

/** Whether a long is 0. */
export const isZero = (x: Long): boolean => x === 0

/** The comparison of two longs: negative, 0 or positive. */
export const compare = (x: Long, y: Long): number => (x < y ? -1 : x > y ? 1 : 0)

/** Equality of two longs (the representation is unique, so `===`). */
export const equals = (x: Long, y: Long): boolean => x === y

// Bitwise: within 32 bits JavaScript's operators would truncate, so only the `int`-sized fast path
// uses them; anything wider goes through BigInt (exact for two's complement)
const isInt32 = (x: Long): x is number => typeof x === "number" && (x | 0) === x

/** `x & y`. */
export const and = (x: Long, y: Long): Long =>
  isInt32(x) && isInt32(y) ? x & y : fromBigIntInRange(toBigInt(x) & toBigInt(y))

/** `x | y`. */
export const or = (x: Long, y: Long): Long =>
  isInt32(x) && isInt32(y) ? x | y : fromBigIntInRange(toBigInt(x) | toBigInt(y))

/** `x ^ y`. */
export const xor = (x: Long, y: Long): Long =>
  isInt32(x) && isInt32(y) ? x ^ y : fromBigIntInRange(toBigInt(x) ^ toBigInt(y))

/** `~x`. */
export const not = (x: Long): Long => (isInt32(x) ? ~x : fromBigIntInRange(~toBigInt(x)))

/** Java's `x << n` of a long: the shift distance is taken modulo 64. */
export const shiftLeft = (x: Long, n: number): Long => fromBigInt(toBigInt(x) << BigInt(n & 63))

/** Java's `x >> n` of a long (arithmetic): the shift distance is taken modulo 64. */
export const shiftRight = (x: Long, n: number): Long => {
  const s = n & 63
  if (isInt32(x)) return s >= 32 ? (x < 0 ? -1 : 0) : x >> s
  return fromBigIntInRange(toBigInt(x) >> BigInt(s))
}

/** Java's `x >>> n` of a long (logical): the shift distance is taken modulo 64. */
export const shiftRightUnsigned = (x: Long, n: number): Long =>
  fromBigInt(BigInt.asUintN(64, toBigInt(x)) >> BigInt(n & 63))

/** The number of one bits in the 64-bit two's complement of a long (Java's `Long.bitCount`). */
export const bitCount = (x: Long): number => {
  let b = BigInt.asUintN(64, toBigInt(x))
  let n = 0
  while (b !== 0n) {
    n += Number(b & 1n)
    b >>= 1n
  }
  return n
}

const TWO_63 = 2 ** 63

/** Java's `(long)` of a double: truncation toward zero, saturating at the long range, NaN to 0. */
export const fromDouble = (d: number): Long => {
  if (d !== d) return 0
  if (d >= TWO_63) return MAX_VALUE
  if (d <= -TWO_63) return MIN_VALUE
  const t = Math.trunc(d) + 0
  return t <= MAX_SAFE && t >= MIN_SAFE ? t : BigInt(t)
}

/** Java's `(int)` of a long: the low 32 bits. */
export const toInt = (x: Long): number => {
  if (typeof x === "number") {
    if (x >= -2147483648 && x <= 2147483647) return x | 0
    return Number(BigInt.asIntN(32, BigInt(x)))
  }
  return Number(BigInt.asIntN(32, x))
}

/** Java's `Long.toString`. */
export const format = (x: Long): string => String(x)

/**
 * Java's `Long.parseLong` of a string of an optional sign and decimal digits, or `null` when it
 * is not one or is outside the long range. Callers trim and check the characters first.
 */
export const parseDigits = (s: string): Long | null => {
  if (s.length <= 16) {
    const n = Number(s)
    if (Number.isSafeInteger(n)) return n + 0
  }
  let b: bigint
  try {
    b = BigInt(s)
  } catch {
    return null
  }
  return b < MIN_VALUE || b > MAX_VALUE ? null : fromBigIntInRange(b)
}
