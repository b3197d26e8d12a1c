/**
 * `JavaRandom` against the JDK's `java.util.Random`: values printed by OpenJDK 17 for a fixed call
 * sequence (golden, below), and a fast-check property against a `BigInt` model of the JDK's
 * algorithm (`Random.next(bits)`, `nextInt(bound)` with its rejection loop, `nextLong`,
 * `nextDouble`) for random seeds and bounds.
 */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { JavaRandom } from "../../../connectors/nexmark/JavaRandom.ts"

/**
 * `new java.util.Random(seed)`, then `nextInt()`, `nextInt(b)` for each of `BOUNDS`,
 * `nextDouble()`, `nextInt(1 << 30)`, `nextInt(1000000007)` (the array), then `nextLong()`.
 * Printed by OpenJDK 17.0.15.
 */
const BOUNDS = [1, 2, 3, 7, 10, 13, 16, 26, 100, 1000, 10000, 1 << 30, 2147483647, 1000000007]
const GOLDEN: ReadonlyArray<readonly [string, ReadonlyArray<number>, string]> = [
  [
    "0",
    [
      -1155484576, 0, 0, 2, 4, 3, 7, 1, 3, 54, 77, 2677, 413593736, 1316484262, 888030077, 0.023081853110331063,
      188953660, 590459143
    ],
    "5772649832669734744"
  ],
  [
    "1",
    [
      -1155869325, 0, 0, 0, 6, 4, 7, 10, 22, 48, 569, 8473, 1034770158, 342691263, 189861227, 0.9471949176631939,
      1006184298, 46012182
    ],
    "7326573195622447256"
  ],
  [
    "-1",
    [
      1155099827, 0, 0, 2, 6, 8, 11, 6, 9, 31, 808, 512, 60977158, 149520196, 176890342, 0.6900971043546824, 969176986,
      201094679
    ],
    "-4952432241328847918"
  ],
  [
    "42",
    [
      -1170105035, 0, 1, 2, 5, 5, 0, 11, 3, 93, 182, 7502, 395977638, 819572292, 592164476, 0.6904257605024213,
      818288085, 681268736
    ],
    "-33599001222115087"
  ],
  [
    "140737488355328",
    [
      991999072, 0, 1, 1, 3, 7, 8, 9, 17, 30, 901, 4501, 950464648, 242742438, 41189264, 0.48281951813671764, 561654849,
      947575417
    ],
    "-5977172872888360433"
  ],
  [
    "-9223372036854775808",
    [
      -1155484576, 0, 0, 2, 4, 3, 7, 1, 3, 54, 77, 2677, 413593736, 1316484262, 888030077, 0.023081853110331063,
      188953660, 590459143
    ],
    "5772649832669734744"
  ],
  [
    "123456789012345",
    [
      -1421006947, 0, 1, 1, 0, 8, 10, 14, 1, 84, 823, 31, 782342578, 146958768, 600863488, 0.6717225711692552,
      248207014, 442016220
    ],
    "4115769166200297615"
  ],
  [
    "9223372036854775807",
    [
      1155099827, 0, 0, 2, 6, 8, 11, 6, 9, 31, 808, 512, 60977158, 149520196, 176890342, 0.6900971043546824, 969176986,
      201094679
    ],
    "-4952432241328847918"
  ]
]

const sequence = (r: JavaRandom): ReadonlyArray<number> => [
  r.nextInt(),
  ...BOUNDS.map((b) => r.nextIntBounded(b)),
  r.nextDouble(),
  r.nextIntBounded(1 << 30),
  r.nextIntBounded(1000000007)
]

/** The JDK's algorithm in `BigInt`, as its source reads. */
class BigIntRandom {
  private seed: bigint
  constructor(seed: bigint) {
    this.seed = (BigInt.asUintN(64, seed) ^ 0x5deece66dn) & ((1n << 48n) - 1n)
  }
  next(bits: number): number {
    this.seed = (this.seed * 0x5deece66dn + 0xbn) & ((1n << 48n) - 1n)
    return Number(BigInt.asIntN(32, this.seed >> BigInt(48 - bits)))
  }
  nextInt(bound?: number): number {
    if (bound === undefined) return this.next(32)
    let r = this.next(31)
    const m = bound - 1
    if ((bound & m) === 0) return Number((BigInt(bound) * BigInt(r)) >> 31n)
    // `u - (r = u % bound) + m < 0` in int arithmetic: the sum overflows past 2^31 - 1
    let u = r
    r = u % bound
    while (u - r + m > 2147483647) {
      u = this.next(31)
      r = u % bound
    }
    return r
  }
  nextLong(): bigint {
    return BigInt.asIntN(64, (BigInt(this.next(32)) << 32n) + BigInt(this.next(32)))
  }
  nextDouble(): number {
    return Number((BigInt(this.next(26)) << 27n) + BigInt(this.next(27))) * 2 ** -53
  }
}

describe("JavaRandom", () => {
  it("gives java.util.Random's values (OpenJDK 17)", () => {
    for (const [seed, values, long] of GOLDEN) {
      const r = new JavaRandom()
      r.setSeedBigInt(BigInt(seed))
      expect(sequence(r), `seed ${seed}`).toEqual(values)
      expect(String(r.nextLong()), `seed ${seed}`).toBe(long)
    }
  })

  it("seeds the same from a number, its 24-bit halves and a bigint", () => {
    const a = new JavaRandom()
    const b = new JavaRandom()
    const c = new JavaRandom()
    const seed = 2 ** 40 + 12345
    a.setSeedNumber(seed)
    b.setSeed(seed % 2 ** 24, Math.floor(seed / 2 ** 24))
    c.setSeedBigInt(BigInt(seed))
    const xs = [a.nextInt(), a.nextIntBounded(1000), a.nextDouble()]
    expect([b.nextInt(), b.nextIntBounded(1000), b.nextDouble()]).toEqual(xs)
    expect([c.nextInt(), c.nextIntBounded(1000), c.nextDouble()]).toEqual(xs)
  })

  it("matches the JDK's algorithm for any seed and bound", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
        fc.array(fc.oneof(fc.integer({ min: 1, max: 2147483647 }), fc.constantFrom(1, 2, 64, 1 << 30, 13, 26)), {
          minLength: 1,
          maxLength: 40
        }),
        (seed, bounds) => {
          const r = new JavaRandom()
          r.setSeedBigInt(seed)
          const model = new BigIntRandom(seed)
          for (const b of bounds) expect(r.nextIntBounded(b)).toBe(model.nextInt(b))
          expect(r.nextInt()).toBe(model.nextInt())
          expect(r.nextDouble()).toBe(model.nextDouble())
          expect(r.nextLong()).toBe(model.nextLong())
        }
      ),
      { numRuns: 300 }
    )
  })
})
