import { describe, expect, it } from "vitest"
import { CsvTokenizer, type CsvTokenizerConfig } from "../../../connectors/files/CsvParser.ts"

const spark: CsvTokenizerConfig = {
  delimiter: ",",
  quote: 34,
  escape: 92,
  escapeEscape: 92,
  ignoreLeadingWhiteSpace: false,
  ignoreTrailingWhiteSpace: false,
  nullValue: "",
  emptyValue: ""
}
const line = (text: string, cfg: Partial<CsvTokenizerConfig> = {}): Array<string> =>
  new CsvTokenizer({ ...spark, ...cfg }).parseLine(text)

describe("CsvTokenizer (univocity's behaviour under Spark's settings)", () => {
  it("splits on the delimiter; an empty field or a trailing delimiter gives nullValue", () => {
    expect(line("a,b")).toEqual(["a", "b"])
    expect(line("a,", { nullValue: "N" })).toEqual(["a", "N"])
    expect(line(",", { nullValue: "N" })).toEqual(["N", "N"])
    expect(line("a,,b", { nullValue: "N" })).toEqual(["a", "N", "b"])
  })

  it("reads quoted values with delimiters and escaped quotes", () => {
    expect(line('"a,b",c')).toEqual(["a,b", "c"])
    expect(line('"a\\"b"')).toEqual(['a"b'])
    expect(line('"a\\\\"')).toEqual(["a\\"])
    expect(line('"a\\nb"')).toEqual(["a\\nb"])
  })

  it("keeps a doubled quote raw unless the escape is the quote", () => {
    expect(line('"a""b",c')).toEqual(['"a""b"', "c"])
    expect(line('"a""b",c', { escape: 34, escapeEscape: -1 })).toEqual(['a"b', "c"])
  })

  it("handles text after a closing quote as STOP_AT_DELIMITER", () => {
    expect(line('"ab"c,d')).toEqual(['"ab"c', "d"])
    expect(line('"ab"  ,d')).toEqual(["ab", "d"])
    expect(line('"ab" x,d')).toEqual(['"ab" x', "d"])
  })

  it("keeps what was read of an unterminated quoted value", () => {
    expect(line('a,"bc')).toEqual(["a", "bc"])
  })

  it("gives emptyValue for an empty quoted value", () => {
    expect(line('"",x', { emptyValue: "E" })).toEqual(["E", "x"])
    expect(line('x,""', { emptyValue: "E" })).toEqual(["x", "E"])
  })

  it("opens quotes only at the start of a field, after optional ignored leading whitespace", () => {
    expect(line(' "a",b')).toEqual([' "a"', "b"])
    expect(line(' "a", b ', { ignoreLeadingWhiteSpace: true })).toEqual(["a", "b "])
    expect(line(" a , b ", { ignoreTrailingWhiteSpace: true })).toEqual([" a", " b"])
    expect(line('a"b,c')).toEqual(['a"b', "c"])
  })

  it("treats quotes as data when quoting is off, and supports multi-character delimiters", () => {
    expect(line('"a,b"', { quote: -1 })).toEqual(['"a', 'b"'])
    expect(line("a||b|c||", { delimiter: "||" })).toEqual(["a", "b|c", ""])
  })

  it("parses multi-line records, skipping blank and comment lines", () => {
    const text = 'a,"x\ny"\r\n\n   \n#skip\nb,c\n"d'
    const recs = new CsvTokenizer(spark).parseAll(text, "#")
    expect(recs.map((r) => r.tokens)).toEqual([["a", "x\ny"], ["b", "c"], ["d"]])
    expect(recs.map((r) => text.slice(r.start, r.end))).toEqual(['a,"x\ny"', "b,c", '"d'])
  })
})
