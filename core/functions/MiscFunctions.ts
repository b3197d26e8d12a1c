/**
 * Null handling and hashing: `coalesce`, `nvl`, `ifnull`, `nvl2`, `nullif`, `isnull`,
 * `isnotnull`, Spark's Murmur3 `hash` (seed 42, bit-exact with Spark), `xxhash64`, `crc32`, and
 * `typeof`.
 *
 * @since 0.1.0
 */
import { castFunction } from "../Cast.ts"
import { nullableOf } from "../Compile.ts"
import * as T from "../DataType.ts"
import * as O from "../Ordering.ts"
import { callName, commonTypeOf, dataDiffTypes, define, invalid, wrongNumArgs } from "./Define.ts"
import { register, type ScalarFunctionDef } from "./Registry.ts"
import * as XxHash64 from "./XxHash64.ts"

// ---------------------------------------------------------------------------------------------
// Murmur3 (Spark's Murmur3_x86_32 and InterpretedHashFunction)
// ---------------------------------------------------------------------------------------------

const mixK1 = (k: number): number => {
  let k1 = Math.imul(k, 0xcc9e2d51)
  k1 = (k1 << 15) | (k1 >>> 17)
  return Math.imul(k1, 0x1b873593)
}

const mixH1 = (h: number, k1: number): number => {
  let h1 = h ^ k1
  h1 = (h1 << 13) | (h1 >>> 19)
  return (Math.imul(h1, 5) + 0xe6546b64) | 0
}

const fmix = (h: number, length: number): number => {
  let h1 = h ^ length
  h1 ^= h1 >>> 16
  h1 = Math.imul(h1, 0x85ebca6b)
  h1 ^= h1 >>> 13
  h1 = Math.imul(h1, 0xc2b2ae35)
  h1 ^= h1 >>> 16
  return h1 | 0
}

/** `Murmur3_x86_32.hashInt`. */
export const murmur3Int = (v: number, seed: number): number => fmix(mixH1(seed, mixK1(v | 0)), 4)

/** `Murmur3_x86_32.hashLong` of a long given as its two 32-bit halves. */
const murmur3LongHalves = (high: number, low: number, seed: number): number =>
  fmix(mixH1(mixH1(seed, mixK1(low)), mixK1(high)), 8)

/** `Murmur3_x86_32.hashLong` of an integral JS number. */
export const murmur3Long = (v: number | bigint, seed: number): number => {
  if (typeof v === "bigint") {
    const b = BigInt.asUintN(64, v)
    return murmur3LongHalves(Number(b >> 32n) | 0, Number(b & 0xffffffffn) | 0, seed)
  }
  if (Number.isSafeInteger(v)) {
    const high = Math.floor(v / 4294967296)
    return murmur3LongHalves(high | 0, (v - high * 4294967296) | 0, seed)
  }
  const b = BigInt.asUintN(64, BigInt(Math.trunc(v)))
  return murmur3LongHalves(Number(b >> 32n) | 0, Number(b & 0xffffffffn) | 0, seed)
}

const doubleView = new DataView(new ArrayBuffer(8))

/** `hashLong(Double.doubleToLongBits(d))`, with -0.0 hashed as 0 and NaN canonical, as Spark does. */
const murmur3Double = (d: number, seed: number): number => {
  if (d === 0) return murmur3LongHalves(0, 0, seed)
  if (d !== d) return murmur3LongHalves(0x7ff80000, 0, seed)
  doubleView.setFloat64(0, d)
  return murmur3LongHalves(doubleView.getInt32(0), doubleView.getInt32(4), seed)
}

/**
 * `Murmur3_x86_32.hashUnsafeBytes`: little-endian 4-byte words, then each remaining byte
 * (sign-extended) mixed on its own — Spark's historical variant, not standard Murmur3.
 */
export const murmur3Bytes = (b: Uint8Array, length: number, seed: number): number => {
  const aligned = length - (length % 4)
  let h1 = seed
  for (let i = 0; i < aligned; i += 4) {
    const word = b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)
    h1 = mixH1(h1, mixK1(word))
  }
  for (let i = aligned; i < length; i++) h1 = mixH1(h1, mixK1((b[i] << 24) >> 24))
  return fmix(h1, length)
}

const encoder = new TextEncoder()
let scratch = new Uint8Array(256)

const murmur3String = (s: string, seed: number): number => {
  if (scratch.length < s.length * 3) scratch = new Uint8Array(Math.max(s.length * 3, scratch.length * 2))
  const { written } = encoder.encodeInto(s, scratch)
  return murmur3Bytes(scratch, written, seed)
}

type Murmur3Hasher = (v: unknown, seed: number) => number

/** Spark's `Murmur3HashFunction.hash` for values of `t`, built once; a null leaves the seed. */
export const murmur3Hasher = (t: T.DataType): Murmur3Hasher => {
  const h = nonNullHasher(t)
  return (v, seed) => (v === null || v === undefined ? seed : h(v, seed))
}

const nonNullHasher = (t: T.DataType): Murmur3Hasher => {
  switch (t._tag) {
    case "null":
      return (_, seed) => seed
    case "boolean":
      return (v, seed) => murmur3Int(v ? 1 : 0, seed)
    case "integer":
    case "date":
      return (v, seed) => murmur3Int(v as number, seed)
    case "long":
      return (v, seed) => murmur3Long(v as number | bigint, seed)
    case "timestamp":
      // Spark hashes timestamps as microseconds
      return (v, seed) => murmur3Long((v as number) * 1000, seed)
    case "double":
      return (v, seed) => murmur3Double(v as number, seed)
    case "string":
      return (v, seed) => murmur3String(v as string, seed)
    case "binary":
      return (v, seed) => murmur3Bytes(v as Uint8Array, (v as Uint8Array).length, seed)
    case "calendarInterval":
      return (_, seed) => seed
    case "array": {
      const elem = murmur3Hasher(t.elementType)
      return (v, seed) => {
        const a = v as ReadonlyArray<unknown>
        let h = seed
        for (let i = 0; i < a.length; i++) h = elem(a[i], h)
        return h
      }
    }
    case "struct": {
      const fields = t.fields.map((f) => murmur3Hasher(f.dataType))
      return (v, seed) => {
        const a = v as ReadonlyArray<unknown>
        let h = seed
        for (let i = 0; i < fields.length; i++) h = fields[i](a[i], h)
        return h
      }
    }
    case "map": {
      const k = murmur3Hasher(t.keyType)
      const val = murmur3Hasher(t.valueType)
      return (v, seed) => {
        let h = seed
        for (const [a, b] of v as Map<unknown, unknown>) h = val(b, k(a, h))
        return h
      }
    }
  }
}

const hasMap = (t: T.DataType): boolean =>
  t._tag === "map" ||
  (t._tag === "array" && hasMap(t.elementType)) ||
  (t._tag === "struct" && t.fields.some((f) => hasMap(f.dataType)))

const hashResolve =
  (name: string, resultType: T.DataType): ScalarFunctionDef["resolve"] =>
  (argTypes, args) => {
    if (argTypes.length < 1) return wrongNumArgs(name, "> 0", 0)
    // Spark: spark.sql.legacy.allowHashOnMapType is false by default
    if (argTypes.some(hasMap)) {
      return invalid(
        `[DATATYPE_MISMATCH.HASH_MAP_TYPE] Cannot resolve "${callName(name, args)}" due to data type mismatch: Input to the function \`${name}\` cannot contain elements of the "MAP" type. In Spark, same maps may have different hashcode, thus hash expressions are prohibited on "MAP" elements. To restore previous behavior set "spark.sql.legacy.allowHashOnMapType" to "true".`
      )
    }
    return { _tag: "Resolved", resultType, nullable: false, castArgsTo: argTypes.map(() => undefined) }
  }

/** `hash(a, b, …)`: Spark's Murmur3 hash with seed 42, each argument's hash the seed of the next. */
const hash: ScalarFunctionDef = {
  name: "hash",
  resolve: hashResolve("hash", T.IntegerType),
  compile: (args, argTypes) => {
    const hashers = argTypes.map(murmur3Hasher)
    const n = args.length
    return (row) => {
      let h = 42
      for (let i = 0; i < n; i++) h = hashers[i](args[i](row), h)
      return h
    }
  }
}

/** `xxhash64(a, b, …)`: Spark's 64-bit xxHash with seed 42, an exact long (`core/Long.ts`). */
const xxhash64: ScalarFunctionDef = {
  name: "xxhash64",
  resolve: hashResolve("xxhash64", T.LongType),
  compile: (args, argTypes) => {
    const hashers = argTypes.map(XxHash64.hasher)
    const n = args.length
    return (row) => {
      let h = 0
      let l = XxHash64.SEED
      for (let i = 0; i < n; i++) {
        hashers[i](args[i](row), h, l)
        h = XxHash64.resultHigh()
        l = XxHash64.resultLow()
      }
      // exact when the long is safe (a multiple of 2^32 plus a 32-bit value); a bigint beyond
      const r = (h | 0) * 4294967296 + l
      return r <= Number.MAX_SAFE_INTEGER && r >= Number.MIN_SAFE_INTEGER ? r : (BigInt(h | 0) << 32n) + BigInt(l)
    }
  }
}

const CRC_TABLE = (() => {
  const t = new Int32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    t[n] = c
  }
  return t
})()

/** `java.util.zip.CRC32` of the bytes, as an unsigned value. */
export const crc32 = (b: Uint8Array): number => {
  let c = -1
  for (let i = 0; i < b.length; i++) c = CRC_TABLE[(c ^ b[i]) & 255] ^ (c >>> 8)
  return (c ^ -1) >>> 0
}

/** `coalesce(a, b, …)`: the first non-null argument, all cast to their common type. */
const coalesceLike = (name: string, minArgs: number, maxArgs: number): ScalarFunctionDef => ({
  name,
  resolve: (argTypes, args) => {
    if (argTypes.length < minArgs || argTypes.length > maxArgs) {
      return wrongNumArgs(name, maxArgs === Infinity ? `> ${minArgs - 1}` : String(minArgs), argTypes.length)
    }
    const common = commonTypeOf(argTypes)
    if (common === undefined) return dataDiffTypes(name, args, argTypes)
    return {
      _tag: "Resolved",
      resultType: common,
      nullable: args.every(nullableOf),
      castArgsTo: argTypes.map((t) => (T.sameType(t, common) ? undefined : common))
    }
  },
  compile: (args) => {
    const n = args.length
    if (n === 2) {
      const [a, b] = args
      return (row) => {
        const x = a(row)
        return x == null ? b(row) : x
      }
    }
    return (row) => {
      for (let i = 0; i < n; i++) {
        const v = args[i](row)
        if (v != null) return v
      }
      return null
    }
  }
})

/** `nvl2(a, b, c)`: `b` when `a` is not null, else `c`. */
const nvl2: ScalarFunctionDef = {
  name: "nvl2",
  resolve: (argTypes, args) => {
    if (argTypes.length !== 3) return wrongNumArgs("nvl2", "3", argTypes.length)
    const common = commonTypeOf(argTypes.slice(1))
    if (common === undefined) return dataDiffTypes("nvl2", args.slice(1), argTypes.slice(1))
    return {
      _tag: "Resolved",
      resultType: common,
      nullable: nullableOf(args[1]) || nullableOf(args[2]),
      castArgsTo: argTypes.map((t, i) => (i === 0 || T.sameType(t, common) ? undefined : common))
    }
  },
  compile: (args) => {
    const [a, b, c] = args
    return (row) => (a(row) != null ? b(row) : c(row))
  }
}

/** `nullif(a, b)`: null when `a = b`, else `a` (compared in their common type; the result keeps `a`'s type). */
const nullif: ScalarFunctionDef = {
  name: "nullif",
  resolve: (argTypes, args) => {
    if (argTypes.length !== 2) return wrongNumArgs("nullif", "2", argTypes.length)
    if (commonTypeOf(argTypes) === undefined) return dataDiffTypes("nullif", args, argTypes)
    return { _tag: "Resolved", resultType: argTypes[0], nullable: true, castArgsTo: [undefined, undefined] }
  },
  compile: (args, argTypes) => {
    const common = commonTypeOf(argTypes) ?? argTypes[0]
    const ca = castFunction(argTypes[0], common)
    const cb = castFunction(argTypes[1], common)
    const eq = O.equality(common)
    const [a, b] = args
    return (row) => {
      const x = a(row)
      if (x == null) return null
      const y = b(row)
      if (y == null) return x
      const cx = ca(x)
      const cy = cb(y)
      return cx != null && cy != null && eq(cx, cy) ? null : x
    }
  }
}

register(
  coalesceLike("coalesce", 1, Infinity),
  coalesceLike("nvl", 2, 2),
  coalesceLike("ifnull", 2, 2),
  nvl2,
  nullif,
  define({
    name: "isnull",
    inputs: ["any"],
    result: T.BooleanType,
    nullable: "never",
    compile: (args) => {
      const a = args[0]
      return (row) => a(row) == null
    }
  }),
  define({
    name: "isnotnull",
    inputs: ["any"],
    result: T.BooleanType,
    nullable: "never",
    compile: (args) => {
      const a = args[0]
      return (row) => a(row) != null
    }
  }),
  hash,
  xxhash64,
  define({
    name: "crc32",
    inputs: [T.BinaryType],
    result: T.LongType,
    strict: () => crc32
  }),
  define({
    name: "typeof",
    inputs: ["any"],
    result: T.StringType,
    nullable: "never",
    compile: (_args, info) => {
      const name = T.simpleString(info.argTypes[0])
      return () => name
    }
  })
)

/**
 * Spark's `MonotonicallyIncreasingID`: the partition index shifted left by 33 bits plus the row's
 * position in its partition. The local engine runs a batch as one partition (docs/differences.md),
 * so the ids are 0, 1, 2, … in the order of the rows; the counter restarts with each run of the
 * plan (each action), as Spark's restarts per task. Streaming queries refuse it (Spark's
 * UnsupportedOperationChecker).
 */
const SINGLE_PARTITION_INDEX = 0

const monotonicallyIncreasingId: ScalarFunctionDef = {
  name: "monotonically_increasing_id",
  deterministic: false,
  resolve: (argTypes) =>
    argTypes.length === 0
      ? { _tag: "Resolved", resultType: T.LongType, nullable: false, castArgsTo: [] }
      : wrongNumArgs("monotonically_increasing_id", "0", argTypes.length),
  compile: () => {
    // the single partition's index, shifted as Spark shifts it (partitionIndex << 33)
    const base = SINGLE_PARTITION_INDEX * 2 ** 33
    let count = 0
    return () => base + count++
  }
}

register(monotonicallyIncreasingId)
