import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { BinaryValueCodec, MalformedValue } from "../../state/StateCodec.ts"
import {
  applyStateFile,
  BinaryFrameWriter,
  encodeBinaryDelta,
  encodeBinarySnapshot
} from "../../state/StateFileFormat.ts"
import { StateStoreError } from "../../core/Errors.ts"

const { encode, decode } = BinaryValueCodec

/** Every value the codec keeps exactly: JSON's values plus NaN, ±Infinity, -0, bigint and bytes. */
const leaf = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.maxSafeInteger(),
  fc.double(), // NaN, ±Infinity, -0 included
  fc.constantFrom(Number.NaN, -0, 0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 2 ** 52, -(2 ** 52), 2 ** 53),
  fc.string(),
  fc.string({ unit: "binary", maxLength: 40 }), // any code point, surrogate pairs included
  fc.string({ minLength: 1000, maxLength: 5000 }),
  fc.bigInt(),
  fc.uint8Array({ maxLength: 50 })
)
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: "small" }, leaf, tie("array"), tie("object")),
  array: fc.array(tie("v"), { maxLength: 6 }),
  object: fc.dictionary(fc.string({ unit: "binary", maxLength: 8 }), tie("v"), { maxKeys: 5, noNullPrototype: true })
})).v

describe("StateCodec (binary values)", () => {
  it("decode(encode(x)) equals x for every supported value, nested arrays and objects included", () => {
    fc.assert(
      fc.property(value, (x) => {
        const bytes = encode(x)
        expect(bytes).toBeTypeOf("string")
        // a binary string: one byte per character
        for (let i = 0; i < bytes!.length; i++) expect(bytes!.charCodeAt(i)).toBeLessThan(256)
        expect(decode(bytes!)).toStrictEqual(x)
      }),
      { numRuns: 500 }
    )
  })

  it("keeps NaN, -0 and the infinities, which JSON loses", () => {
    for (const x of [Number.NaN, -0, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(Object.is(decode(encode(x)!), x)).toBe(true)
    }
    expect(decode(encode([-0, Number.NaN])!)).toStrictEqual([-0, Number.NaN])
  })

  it("encodes equal values to equal bytes (the stores compare encodings to skip unchanged puts)", () => {
    fc.assert(
      fc.property(value, (x) => {
        expect(encode(structuredClone(x))).toBe(encode(x))
      }),
      { numRuns: 200 }
    )
  })

  it("does what JSON does with undefined, functions and toJSON", () => {
    const date = new Date(1_700_000_000_000)
    const x = { a: undefined, b: [undefined, () => 1], c: date, d: 1 }
    expect(decode(encode(x)!)).toStrictEqual(JSON.parse(JSON.stringify(x)))
    expect(encode(undefined)).toBeUndefined()
    expect(encode(() => 1)).toBeUndefined()
    expect(encode(Symbol("s"))).toBeUndefined()
    const cyclic: Array<unknown> = []
    cyclic.push(cyclic)
    expect(encode(cyclic)).toBeUndefined()
  })

  it("an own __proto__ key stays a plain property, as JSON.parse makes it", () => {
    const x = JSON.parse('{"__proto__":{"polluted":1}}')
    const back = decode(encode(x)!) as Record<string, unknown>
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype)
    expect(Object.keys(back)).toEqual(["__proto__"])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it("small integers take two bytes; the windowed aggregation's value is compact", () => {
    expect(encode(5)).toBe("\u0003\u000a")
    expect(encode(-1)).toBe("\u0003\u0001")
    const v = [["u1", 1_700_000_000_000], 3, [12.5, 1, null]]
    expect(encode(v)!.length).toBeLessThan(JSON.stringify(v).length)
  })

  it("refuses bytes that are not an encoded value", () => {
    for (const bad of ["", "\u0063", "\u0007\u0005", "\u0004\u0000", `${encode(1)}x`]) {
      expect(() => decode(bad)).toThrow(MalformedValue)
    }
  })
})

describe("StateFileFormat format 2 (binary)", () => {
  const entries = fc.array(
    fc.tuple(
      fc.string({ unit: "binary", maxLength: 30 }),
      fc.option(
        value.map((x) => encode(x)!),
        { nil: null }
      )
    ),
    { maxLength: 40 }
  )

  it("a delta applied over a map gives the model's map", () => {
    fc.assert(
      fc.property(entries, (changes) => {
        const model = new Map<string, string>([["pre", encode(1)!]])
        const target = new Map(model)
        for (const [k, v] of changes) {
          if (v === null) model.delete(k)
          else model.set(k, v)
        }
        const n = applyStateFile("delta", encodeBinaryDelta(changes), "x.delta", target, () => "")
        expect(n).toBe(changes.length)
        expect(target).toEqual(model)
      }),
      { numRuns: 200 }
    )
  })

  it("a snapshot in several chunks reads back whole", () => {
    const w = new BinaryFrameWriter("snapshot")
    const model = new Map<string, string>()
    for (let i = 0; i < 60_000; i++) {
      const v = encode([`user-${i}`, i, "x".repeat(i % 50)])!
      w.add(`k${i}`, v)
      model.set(`k${i}`, v)
    }
    const target = new Map<string, string>()
    expect(applyStateFile("snapshot", w.finish(), "s", target, () => "")).toBe(60_000)
    expect(target).toEqual(model)
  })

  it("every truncation and every flipped bit is a Corrupt error naming the file", () => {
    const file = encodeBinarySnapshot([
      ["a", encode([1, "x"])!],
      ["b", encode(null)!]
    ])
    for (let at = 0; at < file.length; at++) {
      const r = applyStateFile("snapshot", file.subarray(0, at), "/cp/3.snapshot", new Map(), () => "")
      expect(r).toBeInstanceOf(StateStoreError)
      expect((r as StateStoreError).reason).toBe("Corrupt")
      expect((r as StateStoreError).message).toContain("/cp/3.snapshot")
    }
    for (let at = 0; at < file.length; at++) {
      for (let bit = 0; bit < 8; bit++) {
        const damaged = Buffer.from(file)
        damaged[at] ^= 1 << bit
        const r = applyStateFile("snapshot", damaged, "/cp/3.snapshot", new Map(), () => "")
        expect(r).toBeInstanceOf(StateStoreError)
        expect((r as StateStoreError).message).toContain("/cp/3.snapshot")
      }
    }
  })

  it("a file of a later format or of another kind is refused by name", () => {
    const delta = encodeBinaryDelta([["a", null]])
    const r = applyStateFile("snapshot", delta, "/cp/1.delta", new Map(), () => "")
    expect((r as StateStoreError).message).toContain("/cp/1.delta")
    const future = Buffer.concat([Buffer.from("tributary-state delta 3\n"), delta.subarray(24)])
    const f = applyStateFile("delta", future, "/cp/1.delta", new Map(), () => "")
    expect((f as StateStoreError).reason).toBe("Corrupt")
    expect((f as StateStoreError).message).toMatch(/format 3.*later version/)
    expect((f as StateStoreError).message).toContain("/cp/1.delta")
  })
})
