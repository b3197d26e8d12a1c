/**
 * Longs are exact over Spark's whole 64-bit range with Java's wrap-around (non-ANSI): a number
 * when safe, a bigint beyond ±(2^53−1) (core/Long.ts), as the Spark Connect client returns them.
 * Expected values are Spark's (Java long arithmetic; `cast` without ANSI mode).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema, type Scope } from "effect"
import * as fc from "fast-check"
import { expect, it as vit } from "vitest"
import { castFunction } from "../../core/Cast.ts"
import * as T from "../../core/DataType.ts"
import * as L from "../../core/Long.ts"
import { F, Session } from "../../mod.ts"

const MAX = 9223372036854775807n
const MIN = -9223372036854775808n
const P53 = 2n ** 53n
const wrap = (b: bigint): bigint => BigInt.asIntN(64, b)
const big = (x: L.Long): bigint => L.toBigInt(x)

const longArb = fc.oneof(
  fc.bigInt({ min: MIN, max: MAX }),
  fc.bigInt({ min: -(P53 + 10n), max: P53 + 10n }),
  fc.integer().map(BigInt),
  fc.constantFrom(MIN, MAX, 0n, -1n, 1n, P53, -P53, P53 - 1n, 1n - P53)
)

/** A long in the canonical representation, and its properties: a number exactly when safe. */
const canonical = (x: L.Long): boolean =>
  typeof x === "number" ? Number.isSafeInteger(x) && !Object.is(x, -0) : L.isLong(x)

describe("core/Long against a BigInt model (asIntN(64))", () => {
  vit("add, subtract, multiply, divide, remainder, pmod, negate, abs", () => {
    fc.assert(
      fc.property(longArb, longArb, (a, b) => {
        const x = L.fromBigInt(a)
        const y = L.fromBigInt(b)
        const ops: Array<[L.Long, bigint]> = [
          [L.add(x, y), wrap(a + b)],
          [L.subtract(x, y), wrap(a - b)],
          [L.multiply(x, y), wrap(a * b)],
          [L.negate(x), wrap(-a)],
          [L.abs(x), wrap(a < 0n ? -a : a)],
          [L.and(x, y), a & b],
          [L.or(x, y), a | b],
          [L.xor(x, y), a ^ b],
          [L.not(x), ~a]
        ]
        if (b !== 0n) {
          const r = a % b
          ops.push(
            [L.divide(x, y), wrap(a / b)],
            [L.remainder(x, y), r],
            [L.pmod(x, y), r < 0n ? wrap(wrap(r + b) % b) : r]
          )
        }
        for (const [got, want] of ops) {
          expect(big(got)).toBe(want)
          expect(canonical(got)).toBe(true)
        }
        expect(L.compare(x, y)).toBe(a < b ? -1 : a > b ? 1 : 0)
        expect(x === y).toBe(a === b)
      }),
      { numRuns: 2000 }
    )
  })

  vit("shifts take the distance modulo 64", () => {
    fc.assert(
      fc.property(longArb, fc.integer({ min: -200, max: 200 }), (a, n) => {
        const x = L.fromBigInt(a)
        const s = BigInt(n & 63)
        expect(big(L.shiftLeft(x, n))).toBe(wrap(a << s))
        expect(big(L.shiftRight(x, n))).toBe(a >> s)
        expect(big(L.shiftRightUnsigned(x, n))).toBe(wrap(BigInt.asUintN(64, a) >> s))
      })
    )
  })

  vit("Spark's numbers", () => {
    expect(L.multiply(L.fromBigInt(MAX), -50)).toBe(50)
    expect(L.subtract(L.fromBigInt(MIN), 1)).toBe(MAX)
    expect(L.add(L.fromBigInt(MAX), 1)).toBe(MIN)
    expect(L.negate(L.fromBigInt(MIN))).toBe(MIN)
    expect(L.divide(L.fromBigInt(MIN), -1)).toBe(MIN)
    expect(L.add(Number.MAX_SAFE_INTEGER, 2)).toBe(P53 + 1n)
    expect(L.fromDouble(1e300)).toBe(MAX)
    expect(L.fromDouble(-1e300)).toBe(MIN)
    expect(L.fromDouble(Number.NaN)).toBe(0)
    expect(L.fromDouble(2 ** 60)).toBe(2n ** 60n)
    expect(L.toInt(L.fromBigInt(MAX))).toBe(-1)
  })
})

describe("casts", () => {
  vit("string to long is exact over Java's range and null beyond (non-ANSI)", () => {
    const c = castFunction(T.StringType, T.LongType)
    expect(c("9223372036854775807")).toBe(MAX)
    expect(c("-9223372036854775808")).toBe(MIN)
    expect(c("9223372036854775808")).toBeNull()
    expect(c(" 9007199254740993 ")).toBe(P53 + 1n)
    expect(c("9007199254740993.7")).toBe(P53 + 1n)
    expect(c("12")).toBe(12)
    expect(castFunction(T.LongType, T.StringType)(P53 + 1n)).toBe("9007199254740993")
    expect(castFunction(T.LongType, T.IntegerType)(MAX)).toBe(-1)
    expect(castFunction(T.LongType, T.DoubleType)(P53 + 1n)).toBe(2 ** 53)
    expect(castFunction(T.DoubleType, T.LongType)(1e19)).toBe(MAX)
  })
})

const tempDir = (): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "tributary-longs-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

const Row = Schema.Struct({ k: Schema.BigInt, v: Schema.BigInt })
const BEYOND = P53 + 1n
const rows = [
  { k: BEYOND, v: MAX },
  { k: P53, v: 1n },
  { k: BEYOND, v: 1n },
  { k: 5n, v: 7n }
]

describe("longs in queries", () => {
  it.effect("arithmetic, aggregates, grouping keys, sort and collect are exact", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame(rows, Row)
      const out = yield* df
        .groupBy("k")
        .agg(F.sum("v").alias("s"), F.count("v").alias("n"), F.max("v").alias("m"), F.avg("v").alias("a"))
        .orderBy("k")
        .collect()
      // 2^53 and 2^53+1 are different keys; MAX + 1 wraps to MIN in non-ANSI sum
      assert.deepStrictEqual(out as ReadonlyArray<unknown>, [
        { k: 5, s: 7, n: 1, m: 7, a: 7 },
        { k: P53, s: 1, n: 1, m: 1, a: 1 },
        { k: BEYOND, s: MIN, n: 2, m: MAX, a: (2 ** 63 + 1) / 2 }
      ])
      const arith = yield* df
        .select(
          F.col("v").multiply(F.lit(-50).cast("bigint")).alias("m"),
          F.col("k").plus(F.lit(1)).alias("p"),
          F.col("v").cast("string").alias("s"),
          F.xxhash64(F.lit("Spark")).alias("h")
        )
        .limit(1)
        .collect()
      assert.deepStrictEqual(arith as ReadonlyArray<unknown>, [
        { m: 50, p: P53 + 2n, s: "9223372036854775807", h: -4294468057691064905n }
      ])
      const casts = yield* spark
        .createDataFrame(
          [{ s: "9223372036854775807" }, { s: "9223372036854775808" }],
          Schema.Struct({ s: Schema.String })
        )
        .select(F.col("s").cast("bigint").alias("l"))
        .collect()
      assert.deepStrictEqual(casts as ReadonlyArray<unknown>, [{ l: MAX }, { l: null }])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("2^53+1 survives JSON, CSV and Parquet round trips", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const df = spark.createDataFrame(rows, Row)
      const want = rows.map((r) => ({ k: L.fromBigInt(r.k), v: L.fromBigInt(r.v) }))
      const sorted = (rs: ReadonlyArray<Record<string, unknown>>) =>
        [...rs].sort((a, b) => L.compare(a.k as L.Long, b.k as L.Long) || L.compare(a.v as L.Long, b.v as L.Long))
      yield* df.write.json(path.join(dir, "j"))
      yield* df.write.option("header", "true").csv(path.join(dir, "c"))
      yield* df.write.parquet(path.join(dir, "p"))
      const j = yield* (yield* spark.read.json(path.join(dir, "j"))).select("k", "v").collect()
      const c = yield* (yield* spark.read
        .option("header", "true")
        .option("inferSchema", "true")
        .csv(path.join(dir, "c"))).collect()
      const p = yield* (yield* spark.read.parquet(path.join(dir, "p"))).collect()
      assert.deepStrictEqual(sorted(j), sorted(want))
      assert.deepStrictEqual(sorted(c), sorted(want))
      assert.deepStrictEqual(sorted(p), sorted(want))
    }).pipe(Effect.provide(Session.layer()))
  )
})
