import { describe, expect, it } from "vitest"
import {
  defaultFeatures,
  type JsonFeatures,
  JsonReader,
  JsonSyntaxError,
  parseJson
} from "../../../connectors/files/JsonSyntax.ts"

const parse = (text: string, features: Partial<JsonFeatures> = {}) =>
  parseJson(text, 0, text.length, { ...defaultFeatures, ...features })

describe("parseJson (Jackson's behaviour under Spark's options)", () => {
  it("keeps integer and floating-point tokens apart", () => {
    expect(parse("1")).toMatchObject({ k: "int", text: "1" })
    expect(parse("-12345678901234567890")).toMatchObject({ k: "int", text: "-12345678901234567890" })
    expect(parse("1.0")).toMatchObject({ k: "float", v: 1 })
    expect(parse("1e2")).toMatchObject({ k: "float", v: 100 })
  })

  it("records the source span of every value", () => {
    const text = '{"a": [1, {"b": 2}]}'
    const v = parse(text)
    if (v === undefined || v instanceof JsonSyntaxError || v.k !== "obj") throw new Error("not an object")
    expect(text.slice(v.values[0].start, v.values[0].end)).toBe('[1, {"b": 2}]')
  })

  it("returns undefined for whitespace and ignores what follows the first value", () => {
    expect(parse("   \t")).toBeUndefined()
    expect(parse('{"a":1} trailing')).toMatchObject({ k: "obj", keys: ["a"] })
  })

  it("rejects what Jackson rejects by default", () => {
    for (const bad of [
      "{",
      '{"a" 1}',
      "[1,]",
      "01",
      "1.",
      ".5",
      "+1",
      "tru",
      "'a",
      '{"a":1,}',
      '"a\u0001"',
      '"\\x"',
      "nul"
    ]) {
      expect(parse(bad), bad).toBeInstanceOf(JsonSyntaxError)
    }
  })

  it("accepts single quotes, NaN and infinities by default", () => {
    expect(parse("{'a': 'b'}")).toMatchObject({ k: "obj", keys: ["a"], values: [{ k: "str", v: "b" }] })
    expect(parse("NaN")).toMatchObject({ k: "float" })
    expect(parse("-INF")).toMatchObject({ k: "float", v: -Infinity })
    expect(parse("+Infinity")).toMatchObject({ k: "float", v: Infinity })
    expect(parse("'it\\'s'")).toMatchObject({ k: "str", v: "it's" })
  })

  it("follows the feature flags", () => {
    expect(parse("NaN", { allowNonNumericNumbers: false })).toBeInstanceOf(JsonSyntaxError)
    expect(parse("{a: 1}")).toBeInstanceOf(JsonSyntaxError)
    expect(parse("{a: 1}", { allowUnquotedFieldNames: true })).toMatchObject({ k: "obj", keys: ["a"] })
    expect(parse("/* c */ 1")).toBeInstanceOf(JsonSyntaxError)
    expect(parse("/* c */ [1, // x\n 2]", { allowComments: true })).toMatchObject({ k: "arr" })
    expect(parse("007", { allowNumericLeadingZeros: true })).toMatchObject({ k: "int", text: "7" })
    expect(parse('"\\q"', { allowBackslashEscapingAnyCharacter: true })).toMatchObject({ k: "str", v: "q" })
    expect(parse('"a\tb"', { allowUnquotedControlChars: true })).toMatchObject({ k: "str", v: "a\tb" })
  })

  it("reads field names the same through one reader across records, escaped or not", () => {
    const reader = new JsonReader(defaultFeatures)
    const text = '{"user":1,"a\\u0062":2}\n{"user":3,"a\\"b":4}\n{"us\ter":5}\n{"user":6,\'q\':7}'
    const lines = text.split("\n")
    let at = 0
    const out: Array<unknown> = []
    for (const line of lines) {
      const v = reader.parse(text, at, at + line.length)
      out.push(v instanceof JsonSyntaxError ? "error" : v !== undefined && v.k === "obj" ? v.keys : v)
      at += line.length + 1
    }
    expect(out).toEqual([["user", "ab"], ["user", 'a"b'], "error", ["user", "q"]])
  })

  it("decodes escapes and surrogate pairs", () => {
    expect(parse('"\\u00e9\\n\\ud83d\\ude00\\/"')).toMatchObject({ k: "str", v: "é\n😀/" })
  })

  it("refuses nesting deeper than Jackson's limit instead of overflowing the stack", () => {
    expect(parse("[".repeat(5000))).toBeInstanceOf(JsonSyntaxError)
  })
})
