/**
 * Spark's 64-bit xxHash (`XXH64` with the hashing of `InterpretedHashFunction`): the hash behind
 * `xxhash64(...)` and `approx_count_distinct`. Values hash exactly as Spark hashes their internal
 * form, so a HyperLogLog++ sketch built here holds the same registers as Spark's for the same
 * values (verified against Spark 4.0 in `test/core/functions/XxHash64.test.ts`):
 *
 * - `integer`, `date` (days) and `boolean` (1/0) as 4-byte ints; `long` as an 8-byte long;
 *   `timestamp` as the long number of **microseconds** (tributary keeps milliseconds, Spark
 *   micros); `double` by its IEEE bits with -0.0 hashed as 0 and every NaN as the canonical NaN;
 * - `string` by its UTF-8 bytes, `binary` by its bytes;
 * - arrays, structs and maps element by element, each element's hash the seed of the next (nulls
 *   leave the seed unchanged); an interval as micros, then days, then months.
 *
 * JavaScript has no 64-bit integers short of `BigInt`, which allocates per operation, so the
 * arithmetic works on two unsigned 32-bit halves held in module-level registers: hashing a
 * number allocates nothing.
 *
 * @example
 * ```ts
 * import * as XxHash64 from "./XxHash64.ts"
 * import * as T from "../DataType.ts"
 * XxHash64.xxhash64(1, T.IntegerType) // -6698625589789238999n, as Spark's SELECT xxhash64(1)
 * ```
 * @since 0.1.0
 */
import type { DataType } from "../DataType.ts"
import type { CalendarInterval } from "../Durations.ts"

// The result of the last operation: high and low unsigned 32-bit halves. A typed array, not two
// variables: V8 would box every module-level number above 2^30 into a fresh heap number.
const R = new Uint32Array(2)

const TWO32 = 4294967296

// XXH64's primes as (high, low) halves.
const P1H = 0x9e3779b1
const P1L = 0x85ebca87
const P2H = 0xc2b2ae3d
const P2L = 0x27d4eb4f
const P3H = 0x165667b1
const P3L = 0x9e3779f9
const P4H = 0x85ebca77
const P4L = 0xc2b2ae63
const P5H = 0x27d4eb2f
const P5L = 0x165667c5
// 2^64 - P1 (P1's low half is not zero, so no borrow reaches the high half).
const NEG_P1H = ~P1H >>> 0
const NEG_P1L = (~P1L + 1) >>> 0

/** (ah, al) * (bh, bl) mod 2^64 into R; every intermediate stays below 2^53, so exact. */
const mul = (ah: number, al: number, bh: number, bl: number): void => {
  const a0 = al & 0xffff
  const a1 = al >>> 16
  const b0 = bl & 0xffff
  const b1 = bl >>> 16
  const m1 = a1 * b0
  const m2 = a0 * b1
  const low = a0 * b0 + ((m1 & 0xffff) + (m2 & 0xffff)) * 65536
  R[1] = low
  R[0] = a1 * b1 + (m1 >>> 16) + (m2 >>> 16) + Math.floor(low / TWO32) + Math.imul(ah, bl) + Math.imul(al, bh)
}

/** (ah, al) + (bh, bl) mod 2^64 into R[0]/R[1]. */
const add = (ah: number, al: number, bh: number, bl: number): void => {
  const lo = al + bl
  R[1] = lo >>> 0
  R[0] = (ah + bh + (lo >= TWO32 ? 1 : 0)) >>> 0
}

/** Rotate left by 0 < r < 32 into R[0]/R[1]. */
const rotl = (h: number, l: number, r: number): void => {
  R[0] = ((h << r) | (l >>> (32 - r))) >>> 0
  R[1] = ((l << r) | (h >>> (32 - r))) >>> 0
}

/** XXH64's avalanche (`fmix`) of (h, l) into R[0]/R[1]. */
const fmix = (h: number, l: number): void => {
  l = (l ^ (h >>> 1)) >>> 0 // ^= >>> 33
  mul(h, l, P2H, P2L)
  h = R[0]
  l = R[1]
  const sl = ((l >>> 29) | (h << 3)) >>> 0 // >>> 29
  h = (h ^ (h >>> 29)) >>> 0
  l = (l ^ sl) >>> 0
  mul(h, l, P3H, P3L)
  R[1] = (R[1] ^ R[0]) >>> 0 // ^= >>> 32
}

/** One 8-byte round: hash ^= rotl(k * P2, 31) * P1; hash = rotl(hash, 27) * P1 + P4. */
const roundLong = (hh: number, hl: number, kh: number, kl: number): void => {
  mul(kh, kl, P2H, P2L)
  rotl(R[0], R[1], 31)
  mul(R[0], R[1], P1H, P1L)
  rotl((hh ^ R[0]) >>> 0, (hl ^ R[1]) >>> 0, 27)
  mul(R[0], R[1], P1H, P1L)
  add(R[0], R[1], P4H, P4L)
}

/** One 4-byte round: hash ^= (k & 0xffffffff) * P1; hash = rotl(hash, 23) * P2 + P3. */
const roundInt = (hh: number, hl: number, k: number): void => {
  mul(0, k >>> 0, P1H, P1L)
  rotl((hh ^ R[0]) >>> 0, (hl ^ R[1]) >>> 0, 23)
  mul(R[0], R[1], P2H, P2L)
  add(R[0], R[1], P3H, P3L)
}

/** Spark's `XXH64.hashInt` of a 32-bit int; the result is in R[0]/R[1]. */
export const hashIntInto = (v: number, seedH: number, seedL: number): void => {
  add(seedH, seedL, P5H, P5L)
  add(R[0], R[1], 0, 4)
  roundInt(R[0], R[1], v)
  fmix(R[0], R[1])
}

/** Spark's `XXH64.hashLong` of a long given as halves; the result is in R[0]/R[1]. */
export const hashLongHalvesInto = (vh: number, vl: number, seedH: number, seedL: number): void => {
  add(seedH, seedL, P5H, P5L)
  add(R[0], R[1], 0, 8)
  roundLong(R[0], R[1], vh, vl)
  fmix(R[0], R[1])
}

/** `XXH64.hashLong` of an integral JavaScript number (two's complement, as a Java long). */
export const hashLongInto = (v: number | bigint, seedH: number, seedL: number): void => {
  if (typeof v === "bigint") {
    const b = BigInt.asUintN(64, v)
    hashLongHalvesInto(Number(b >> 32n), Number(b & 0xffffffffn), seedH, seedL)
    return
  }
  const hi = Math.floor(v / TWO32)
  hashLongHalvesInto(hi >>> 0, (v - hi * TWO32) >>> 0, seedH, seedL)
}

const f64 = new Float64Array(1)
const u32 = new Uint32Array(f64.buffer)
// Float64Array shares the platform's byte order; on every engine we run on that is little endian.
const LITTLE = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1
const LO = LITTLE ? 0 : 1
const HI = LITTLE ? 1 : 0

/** A double as Spark hashes it: -0.0 as 0, NaN as the canonical NaN bits. */
export const hashDoubleInto = (v: number, seedH: number, seedL: number): void => {
  if (v === 0) hashLongHalvesInto(0, 0, seedH, seedL)
  else if (v !== v) hashLongHalvesInto(0x7ff80000, 0, seedH, seedL)
  else {
    f64[0] = v
    hashLongHalvesInto(u32[HI], u32[LO], seedH, seedL)
  }
}

/** XXH64's merge of one accumulator: hash ^= rotl(v * P2, 31) * P1; hash = hash * P1 + P4. */
const mergeRound = (hh: number, hl: number, vh: number, vl: number): void => {
  mul(vh, vl, P2H, P2L)
  rotl(R[0], R[1], 31)
  mul(R[0], R[1], P1H, P1L)
  mul((hh ^ R[0]) >>> 0, (hl ^ R[1]) >>> 0, P1H, P1L)
  add(R[0], R[1], P4H, P4L)
}

const readInt = (b: Uint8Array, o: number): number =>
  (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0

/** Spark's `XXH64.hashUnsafeBytes` of `bytes[0, length)`; the result is in R[0]/R[1]. */
export const hashBytesInto = (bytes: Uint8Array, length: number, seedH: number, seedL: number): void => {
  let o = 0
  let hh: number
  let hl: number
  if (length >= 32) {
    add(seedH, seedL, P1H, P1L)
    add(R[0], R[1], P2H, P2L)
    let v1h = R[0]
    let v1l = R[1]
    add(seedH, seedL, P2H, P2L)
    let v2h = R[0]
    let v2l = R[1]
    let v3h = seedH
    let v3l = seedL
    // seed - P1 = seed + (2^64 - P1)
    add(seedH, seedL, NEG_P1H, NEG_P1L)
    let v4h = R[0]
    let v4l = R[1]
    const limit = length - 32
    do {
      mul(readInt(bytes, o + 4), readInt(bytes, o), P2H, P2L)
      add(v1h, v1l, R[0], R[1])
      rotl(R[0], R[1], 31)
      mul(R[0], R[1], P1H, P1L)
      v1h = R[0]
      v1l = R[1]
      mul(readInt(bytes, o + 12), readInt(bytes, o + 8), P2H, P2L)
      add(v2h, v2l, R[0], R[1])
      rotl(R[0], R[1], 31)
      mul(R[0], R[1], P1H, P1L)
      v2h = R[0]
      v2l = R[1]
      mul(readInt(bytes, o + 20), readInt(bytes, o + 16), P2H, P2L)
      add(v3h, v3l, R[0], R[1])
      rotl(R[0], R[1], 31)
      mul(R[0], R[1], P1H, P1L)
      v3h = R[0]
      v3l = R[1]
      mul(readInt(bytes, o + 28), readInt(bytes, o + 24), P2H, P2L)
      add(v4h, v4l, R[0], R[1])
      rotl(R[0], R[1], 31)
      mul(R[0], R[1], P1H, P1L)
      v4h = R[0]
      v4l = R[1]
      o += 32
    } while (o <= limit)
    rotl(v1h, v1l, 1)
    hh = R[0]
    hl = R[1]
    rotl(v2h, v2l, 7)
    add(hh, hl, R[0], R[1])
    hh = R[0]
    hl = R[1]
    rotl(v3h, v3l, 12)
    add(hh, hl, R[0], R[1])
    hh = R[0]
    hl = R[1]
    rotl(v4h, v4l, 18)
    add(hh, hl, R[0], R[1])
    hh = R[0]
    hl = R[1]
    mergeRound(hh, hl, v1h, v1l)
    mergeRound(R[0], R[1], v2h, v2l)
    mergeRound(R[0], R[1], v3h, v3l)
    mergeRound(R[0], R[1], v4h, v4l)
    hh = R[0]
    hl = R[1]
  } else {
    add(seedH, seedL, P5H, P5L)
    hh = R[0]
    hl = R[1]
  }
  add(hh, hl, Math.floor(length / TWO32), length >>> 0)
  hh = R[0]
  hl = R[1]
  while (o <= length - 8) {
    roundLong(hh, hl, readInt(bytes, o + 4), readInt(bytes, o))
    hh = R[0]
    hl = R[1]
    o += 8
  }
  if (o + 4 <= length) {
    roundInt(hh, hl, readInt(bytes, o))
    hh = R[0]
    hl = R[1]
    o += 4
  }
  while (o < length) {
    mul(0, bytes[o], P5H, P5L)
    rotl((hh ^ R[0]) >>> 0, (hl ^ R[1]) >>> 0, 11)
    mul(R[0], R[1], P1H, P1L)
    hh = R[0]
    hl = R[1]
    o++
  }
  fmix(hh, hl)
}

let scratch = new Uint8Array(256)

/**
 * Writes the UTF-8 bytes of `s` into `scratch` (grown when needed) and returns their count. A
 * hand loop: `TextEncoder.encodeInto` costs more per call than short strings take to encode.
 * Unpaired surrogates become U+FFFD, as `TextEncoder` does.
 */
const utf8 = (s: string): number => {
  const n = s.length
  if (scratch.length < n * 3) scratch = new Uint8Array(Math.max(n * 3, scratch.length * 2))
  const b = scratch
  let o = 0
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i)
    if (c < 0x80) b[o++] = c
    else if (c < 0x800) {
      b[o++] = 0xc0 | (c >> 6)
      b[o++] = 0x80 | (c & 0x3f)
    } else {
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = i + 1 < n ? s.charCodeAt(i + 1) : 0
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00)
          i++
          b[o++] = 0xf0 | (c >> 18)
          b[o++] = 0x80 | ((c >> 12) & 0x3f)
          b[o++] = 0x80 | ((c >> 6) & 0x3f)
          b[o++] = 0x80 | (c & 0x3f)
          continue
        }
        c = 0xfffd
      }
      b[o++] = 0xe0 | (c >> 12)
      b[o++] = 0x80 | ((c >> 6) & 0x3f)
      b[o++] = 0x80 | (c & 0x3f)
    }
  }
  return o
}

/** A string by its UTF-8 bytes, encoded into a reused buffer (no allocation once it is big enough). */
export const hashStringInto = (s: string, seedH: number, seedL: number): void => {
  const n = utf8(s)
  hashBytesInto(scratch, n, seedH, seedL)
}

/**
 * A hasher for internal values of `t`: `(value, seedH, seedL)` leaves Spark's
 * `XxHash64Function.hash(value, t, seed)` in the result registers (read them with `resultHigh`
 * and `resultLow`). A null leaves the seed, as Spark does.
 */
export type Hasher = (value: unknown, seedH: number, seedL: number) => void

/** Builds the hasher for `t` once; it runs per value without allocating for primitives. */
export const hasher = (t: DataType): Hasher => {
  const withNull =
    (h: Hasher): Hasher =>
    (v, sh, sl) => {
      if (v === null || v === undefined) {
        R[0] = sh >>> 0
        R[1] = sl >>> 0
      } else h(v, sh, sl)
    }
  switch (t._tag) {
    case "null":
      return (_v, sh, sl) => {
        R[0] = sh >>> 0
        R[1] = sl >>> 0
      }
    case "boolean":
      return withNull((v, sh, sl) => hashIntInto(v ? 1 : 0, sh, sl))
    case "integer":
    case "date":
      return withNull((v, sh, sl) => hashIntInto(v as number, sh, sl))
    case "long":
      return withNull((v, sh, sl) => hashLongInto(v as number | bigint, sh, sl))
    case "timestamp":
      // Spark keeps timestamps in microseconds.
      return withNull((v, sh, sl) => hashLongInto(Math.round((v as number) * 1000), sh, sl))
    case "double":
      return withNull((v, sh, sl) => hashDoubleInto(v as number, sh, sl))
    case "string":
      return withNull((v, sh, sl) => hashStringInto(v as string, sh, sl))
    case "binary":
      return withNull((v, sh, sl) => hashBytesInto(v as Uint8Array, (v as Uint8Array).length, sh, sl))
    case "calendarInterval":
      return withNull((v, sh, sl) => {
        const i = v as CalendarInterval
        hashLongInto(i.micros, sh, sl)
        hashIntInto(i.days, R[0], R[1])
        hashIntInto(i.months, R[0], R[1])
      })
    case "array": {
      const elem = hasher(t.elementType)
      return withNull((v, sh, sl) => {
        const a = v as ReadonlyArray<unknown>
        let h = sh >>> 0
        let l = sl >>> 0
        for (let i = 0; i < a.length; i++) {
          elem(a[i], h, l)
          h = R[0]
          l = R[1]
        }
        R[0] = h
        R[1] = l
      })
    }
    case "struct": {
      const fields = t.fields.map((f) => hasher(f.dataType))
      return withNull((v, sh, sl) => {
        const a = v as ReadonlyArray<unknown>
        let h = sh >>> 0
        let l = sl >>> 0
        for (let i = 0; i < fields.length; i++) {
          fields[i](a[i], h, l)
          h = R[0]
          l = R[1]
        }
        R[0] = h
        R[1] = l
      })
    }
    case "map": {
      const kh = hasher(t.keyType)
      const vh = hasher(t.valueType)
      return withNull((v, sh, sl) => {
        let h = sh >>> 0
        let l = sl >>> 0
        for (const [k, x] of v as Map<unknown, unknown>) {
          kh(k, h, l)
          vh(x, R[0], R[1])
          h = R[0]
          l = R[1]
        }
        R[0] = h
        R[1] = l
      })
    }
  }
}

/** High unsigned 32 bits of the last hash. */
export const resultHigh = (): number => R[0]

/** Low unsigned 32 bits of the last hash. */
export const resultLow = (): number => R[1]

/** Spark's default seed for `xxhash64` and HyperLogLog++. */
export const SEED = 42

/**
 * `xxhash64(value)` as Spark computes it for an internal value of `t` (seed 42 unless given), as
 * a signed 64-bit `bigint`. Convenient, not fast: hot loops use `hasher`.
 */
export const xxhash64 = (value: unknown, t: DataType, seed: bigint = 42n): bigint => {
  const s = BigInt.asUintN(64, seed)
  hasher(t)(value, Number(s >> 32n), Number(s & 0xffffffffn))
  return BigInt.asIntN(64, (BigInt(R[0]) << 32n) | BigInt(R[1]))
}
