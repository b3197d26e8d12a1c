/** The DuckDB provider's hot-key cache: LRU order, the byte budget, and when it is complete. */
import { describe, expect, it } from "vitest"
import { entryBytes, KeyCache } from "../../state/KeyCache.ts"

describe("KeyCache", () => {
  it("evicts least recently used entries beyond the budget and stops being complete", () => {
    const per = entryBytes("k0", "v0")
    const cache = new KeyCache(per * 4)
    cache.reset(3, true)
    for (let i = 0; i < 4; i++) cache.set(`k${i}`, `v${i}`)
    expect(cache.complete).toBe(true)
    expect(cache.bytes).toBe(per * 4)
    expect(cache.touch("k0")).toBe("v0")
    cache.set("k4", "v4")
    expect(cache.complete).toBe(false)
    // Evicted down to 90% of the budget: k1 and k2 (least recently used) went, k0 was touched.
    expect([...cache.entries.keys()]).toEqual(["k3", "k0", "k4"])
    expect(cache.bytes).toBe(per * 3)
    expect(cache.peek("k1")).toBeUndefined()
  })

  it("a complete cache drops absent keys; an incomplete one remembers them", () => {
    const cache = new KeyCache(10_000)
    cache.reset(0, true)
    cache.set("a", "1")
    cache.set("a", null)
    expect(cache.entries.size).toBe(0)
    expect(cache.bytes).toBe(0)
    cache.reset(0, false)
    cache.set("b", null)
    expect(cache.peek("b")).toBeNull()
    expect(cache.bytes).toBe(entryBytes("b", null))
  })

  it("while complete an update keeps its place (no reinsertion), so the first overflow evicts the oldest inserted", () => {
    const per = entryBytes("k0", "v0")
    const cache = new KeyCache(per * 4)
    cache.reset(1, true)
    for (let i = 0; i < 4; i++) cache.set(`k${i}`, `v${i}`)
    cache.set("k0", "w0")
    expect([...cache.entries.keys()]).toEqual(["k0", "k1", "k2", "k3"])
    expect(cache.bytes).toBe(per * 4)
    cache.set("k4", "v4")
    expect(cache.complete).toBe(false)
    expect([...cache.entries.keys()]).toEqual(["k2", "k3", "k4"])
    // No longer complete: LRU again.
    cache.set("k2", "w2")
    expect([...cache.entries.keys()]).toEqual(["k3", "k4", "k2"])
  })

  it("replace, given the committed value, does what set does; an incomplete cache falls back to set", () => {
    const a = new KeyCache(10_000)
    const b = new KeyCache(10_000)
    for (const c of [a, b]) {
      c.reset(2, true)
      c.set("x", "1")
      c.set("y", "2")
    }
    a.set("x", "10")
    b.replace("x", "1", "10")
    a.set("y", null)
    b.replace("y", "2", null)
    a.set("z", "3")
    b.replace("z", undefined, "3")
    expect([...b.entries]).toEqual([...a.entries])
    expect(b.bytes).toBe(a.bytes)
    b.reset(3, false)
    b.replace("q", undefined, null)
    expect(b.peek("q")).toBeNull()
  })
})
