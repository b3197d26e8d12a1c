import { describe, expect, it } from "vitest"
import { groupCount, javaRegex, javaReplacement, javaSplit } from "../../../core/functions/JavaRegex.ts"

describe("Java regex translation", () => {
  it.each<[string, string, boolean]>([
    ["(?i)abc", "xABCx", true],
    ["\\Qa.b\\E", "a.b", true],
    ["\\Qa.b\\E", "axb", false],
    ["[\\p{Upper}]+", "ABC", true],
    ["^\\p{Lower}+$", "abC", false],
    ["\\P{Digit}", "1a", true],
    ["\\h", "a\tb", true],
    ["(?>a+)b", "aab", true],
    ["a*+b", "aab", true],
    ["[]a]", "]", true],
    ["\\p{IsLatin}", "é", true]
  ])("%s on %s is %s", (pattern, input, expected) => {
    const re = javaRegex(pattern)
    expect(re).toBeDefined()
    expect(re?.test(input)).toBe(expected)
  })

  it("rejects what it cannot translate or what does not compile", () => {
    expect(javaRegex("[a-z&&[^aeiou]]")).toBe(undefined)
    expect(javaRegex("(unclosed")).toBe(undefined)
    expect(javaRegex("(?x) a b")).toBe(undefined)
  })

  it("counts groups", () => {
    expect(groupCount(javaRegex("(a)(b(c))") as RegExp)).toBe(3)
    expect(groupCount(javaRegex("a") as RegExp)).toBe(0)
  })

  it("replacement strings", () => {
    const r = javaReplacement("$2-$1 \\$ $10", 2)
    expect(r?.(["ab", "a", "b"], undefined)).toBe("b-a $ a0")
    expect(javaReplacement("$3", 2)).toBe(undefined)
    expect(javaReplacement("x\\", 0)).toBe(undefined)
  })

  it("split as java.util.regex.Pattern.split with a negative limit", () => {
    const re = javaRegex(",", "g") as RegExp
    expect(javaSplit("a,b,,", re, -1)).toEqual(["a", "b", "", ""])
    expect(javaSplit(",a", re, -1)).toEqual(["", "a"])
    expect(javaSplit("a,b,c", re, 2)).toEqual(["a", "b,c"])
    expect(javaSplit("abc", javaRegex("(?=b)", "g") as RegExp, -1)).toEqual(["a", "bc"])
    expect(javaSplit("abc", javaRegex("", "g") as RegExp, -1)).toEqual(["a", "b", "c", ""])
  })
})
