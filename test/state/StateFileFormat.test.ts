/**
 * The file provider's file format: exact bytes, round trips of awkward keys and values, and
 * detection of every kind of damage (changed byte, truncation anywhere, wrong kind, wrong count).
 */
import { describe, expect, it } from "vitest"
import { StateStoreError } from "../../core/Errors.ts"
import { applyFile, encodeDelta, encodeSnapshot, frame, unframe } from "../../state/StateFileFormat.ts"

describe("StateFileFormat", () => {
  it("writes a header, one line per entry and a checksummed footer", () => {
    const text = encodeDelta([
      ["a", "1"],
      ["b", null]
    ])
    expect(text.split("\n").slice(0, 3)).toEqual(["tributary-state delta 1", '+"a"\t1', '-"b"'])
    expect(text).toMatch(/\n#2\t[0-9a-f]{64}\n$/)
    expect(frame("delta", [])).toMatch(/^tributary-state delta 1\n#0\t[0-9a-f]{64}\n$/)
    expect(unframe("delta", frame("delta", []), "x")).toEqual([])
  })

  it("round-trips keys and values with tabs, newlines, quotes and non-ASCII", () => {
    const keys = ["tab\tkey", "new\nline", 'q"uote', "üñí", "", "#1\tfake footer"]
    const values = [JSON.stringify("v\tv"), JSON.stringify({ a: [1, null, "x\ny"] }), "null", "3.5", '"\\u0000"', "[]"]
    const map = new Map<string, string>([["stale", "0"]])
    const n = applyFile(
      "delta",
      encodeDelta([...keys.map((k, i) => [k, values[i]] as const), ["stale", null]]),
      "f",
      map
    )
    expect(n).toBe(7)
    expect([...map]).toEqual(keys.map((k, i) => [k, values[i]]))
    const again = new Map<string, string>()
    applyFile("snapshot", encodeSnapshot(map), "g", again)
    expect(again).toEqual(map)
  })

  it("detects a changed byte, a truncation at any length, a wrong kind and names the file", () => {
    const text = encodeDelta(Array.from({ length: 20 }, (_, i) => [`key-${i}`, `{"n":${i}}`] as const))
    const flipped = text.slice(0, 40) + (text[40] === "a" ? "b" : "a") + text.slice(41)
    const err = unframe("delta", flipped, "/cp/state/0/0/7.delta")
    expect(err).toBeInstanceOf(StateStoreError)
    expect((err as StateStoreError).reason).toBe("Corrupt")
    expect((err as StateStoreError).message).toContain("/cp/state/0/0/7.delta")
    expect((err as StateStoreError).message).toContain("checksum")
    for (let len = 0; len < text.length; len++) {
      expect(unframe("delta", text.slice(0, len), "t")).toBeInstanceOf(StateStoreError)
    }
    expect(unframe("snapshot", text, "t")).toBeInstanceOf(StateStoreError)
    // A snapshot may not hold removals even with a valid checksum.
    expect(applyFile("snapshot", frame("snapshot", ['-"a"']), "s", new Map())).toBeInstanceOf(StateStoreError)
    expect(applyFile("delta", frame("delta", ['+"a"']), "s", new Map())).toBeInstanceOf(StateStoreError)
    expect(applyFile("delta", frame("delta", ["+a\t1"]), "s", new Map())).toBeInstanceOf(StateStoreError)
  })
})
