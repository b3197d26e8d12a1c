import { describe, expect, it } from "vitest"
import * as T from "../../core/DataType.ts"
import { comparator } from "../../core/Ordering.ts"

describe("comparator", () => {
  it("orders strings by code point (Spark's UTF-8 byte order), not by UTF-16 code unit", () => {
    const cmp = comparator(T.StringType)
    // U+1F642 is above U+FF01, though its first UTF-16 unit (0xD83D) is below 0xFF01 (found by
    // the differential suite against Spark: max("🙂 smile", "！bang") is the emoji there)
    expect(cmp("🙂 smile", "\uff01bang")).toBe(1)
    expect(cmp("\uff01bang", "🙂 smile")).toBe(-1)
    expect(["b", "🙂", "\uff01", "a", "ab", "", "\ue000", "日"].sort(cmp)).toEqual([
      "",
      "a",
      "ab",
      "b",
      "日",
      "\ue000",
      "\uff01",
      "🙂"
    ])
    expect(cmp("🙂a", "🙂b")).toBe(-1)
    expect(cmp("same", "same")).toBe(0)
    expect(cmp("abc", "ab")).toBe(1)
  })

  it("orders arrays of strings by the same rule", () => {
    const cmp = comparator(T.array(T.StringType))
    expect(cmp(["x", "🙂"], ["x", "\uff01"])).toBe(1)
  })
})
