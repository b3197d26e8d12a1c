/**
 * `java.util.Random`, bit for bit: the 48-bit linear congruential generator of the JDK
 * (`seed = seed * 0x5DEECE66D + 0xB mod 2^48`) with the JDK's `setSeed` scrambling and its
 * `nextInt`, `nextInt(bound)`, `nextLong` and `nextDouble`. The Nexmark reference generator (Apache
 * Beam's `Generator`) seeds one `java.util.Random` per event with the event id, so reproducing its
 * events means reproducing this generator exactly.
 *
 * The 48-bit state is kept as two 24-bit halves in plain numbers: every product and sum below
 * stays under 2^53, so it is exact in double arithmetic and needs no `BigInt` on the hot path
 * (only `nextLong`, which the generator calls for ranges of 2^31 and more, uses one).
 *
 * @since 0.1.0
 */

const TWO_24 = 16_777_216
/** The low and high 24 bits of the JDK's multiplier `0x5DEECE66D`. */
const MUL_LO = 0xece66d
const MUL_HI = 0x5de
const ADDEND = 0xb
/** `2^-24`: multiplying by it is exact, like dividing by `2^24`, and cheaper. */
const INV_TWO_24 = 1 / TWO_24
const TWO_31 = 2_147_483_648
const TWO_53 = 9_007_199_254_740_992

/**
 * A `java.util.Random`. Not thread-safe, not shared: one per generator loop, re-seeded per event.
 *
 * @example
 * ```ts
 * import { JavaRandom } from "./JavaRandom.ts"
 * const r = new JavaRandom()
 * r.setSeed(42, 0)
 * r.nextInt(10) // 0, as `new java.util.Random(42).nextInt(10)`
 * ```
 * @since 0.1.0
 */
export class JavaRandom {
  /** Bits 0–23 of the state. */
  private lo = 0
  /** Bits 24–47 of the state. */
  private hi = 0

  /**
   * `setSeed(seed)` for a seed given as its bits 0–23 (`lo24`) and 24–47 (`hi24`); the JDK ignores
   * the bits above 47. `(seed ^ 0x5DEECE66D) & (2^48 - 1)`, as `Random(long)` does.
   */
  setSeed(lo24: number, hi24: number): void {
    this.lo = (lo24 ^ MUL_LO) & 0xffffff
    this.hi = (hi24 ^ MUL_HI) & 0xffffff
  }

  /** `setSeed` for a non-negative safe integer (bits above 47 are dropped, as in the JDK). */
  setSeedNumber(seed: number): void {
    const lo = seed % TWO_24
    this.setSeed(lo, Math.floor(seed / TWO_24) % TWO_24)
  }

  /** `setSeed` for any Java long given as a `bigint`. */
  setSeedBigInt(seed: bigint): void {
    const s = BigInt.asUintN(48, seed)
    this.setSeed(Number(s & 0xffffffn), Number(s >> 24n))
  }

  /** Advances the state: `seed = (seed * 0x5DEECE66D + 0xB) & ((1L << 48) - 1)`. */
  private advance(): void {
    const lo = this.lo
    // The low half's product is below 2^48, exact in a double; its carry feeds the high half,
    // which only needs its value mod 2^24, so 32-bit integer products do (2^24 divides 2^32).
    const p = lo * MUL_LO + ADDEND
    const carry = Math.floor(p * INV_TWO_24)
    this.lo = p - carry * TWO_24
    this.hi = (Math.imul(this.hi, MUL_LO) + Math.imul(lo, MUL_HI) + carry) & 0xffffff
  }

  /** `next(31)`: a non-negative int below 2^31. */
  next31(): number {
    this.advance()
    return this.hi * 128 + (this.lo >>> 17)
  }

  /** `nextInt()`: `next(32)`, a signed 32-bit int. */
  nextInt(): number {
    this.advance()
    return (this.hi * 256 + (this.lo >>> 16)) | 0
  }

  /** `nextInt(bound)` for `0 < bound < 2^31`: uniform in `[0, bound)`, with the JDK's rejection loop. */
  nextIntBounded(bound: number): number {
    let r = this.next31()
    const m = bound - 1
    // A power of two: the high bits (`(int)((bound * (long)r) >> 31)`); exact, as `bound * r` is `r` shifted.
    if ((bound & m) === 0) return Math.floor((bound * r) / TWO_31)
    // `for (int u = r; u - (r = u % bound) + m < 0; u = next(31))`: the int sum overflows exactly
    // when it passes 2^31 - 1, which rejects the incomplete last block of `bound` values.
    let u = r
    for (r = u % bound; u - r + m > 2_147_483_647; r = u % bound) u = this.next31()
    return r
  }

  /** `nextLong()`: `((long) next(32) << 32) + next(32)`. */
  nextLong(): bigint {
    const a = this.nextInt()
    const b = this.nextInt()
    return BigInt.asIntN(64, (BigInt(a) << 32n) + BigInt(b))
  }

  /** `nextDouble()`: `(((long) next(26) << 27) + next(27)) * 0x1.0p-53`. */
  nextDouble(): number {
    this.advance()
    const a = this.hi * 4 + (this.lo >>> 22)
    this.advance()
    const b = this.hi * 8 + (this.lo >>> 21)
    return (a * 134_217_728 + b) / TWO_53
  }
}
