import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import { AnalysisError } from "../../../core/Errors.ts"
import { TextFormat } from "../../../connectors/files/TextFormat.ts"
import { describeSchema, failure, load, removeDir, tempDir, writeFiles } from "./helpers.ts"

let dir = ""
const p = (rel: string): string => path.join(dir, rel)

beforeAll(async () => {
  dir = await tempDir()
  await writeFiles(dir, {
    "lines.txt": "first\n\nthird\r\nfourth\rfifth",
    "trailing.txt": "a\nb\n",
    "sep.txt": "a;b;;c;",
    "empty/e.txt": "",
    "many/1.txt": "one\n",
    "many/2.txt": "two\nthree\n",
    "bom.txt": new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69, 0x0a]),
    "latin1.txt": new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]),
    "globby/x[1].txt": "bracket\n",
    "globby/x1.txt": "plain\n",
    "globby/y*.txt": "star\n",
    "globby/yz.txt": "zed\n"
  })
})

afterAll(() => removeDir(dir))

describe("text", () => {
  it("reads one row per line into a single value column, keeping empty lines", async () => {
    const { schema, rows } = await load(TextFormat, [p("lines.txt")])
    expect(describeSchema(schema)).toEqual(["value: string"])
    expect(rows).toEqual([["first"], [""], ["third"], ["fourth"], ["fifth"]])
  })

  it("does not add a row for a final line break", async () => {
    expect((await load(TextFormat, [p("trailing.txt")])).rows).toEqual([["a"], ["b"]])
  })

  it("splits on lineSep", async () => {
    expect((await load(TextFormat, [p("sep.txt")], { lineSep: ";" })).rows).toEqual([["a"], ["b"], [""], ["c"]])
  })

  it("reads a whole file per row with wholetext, skipping empty files", async () => {
    const { rows } = await load(TextFormat, [p("many"), p("empty")], { wholetext: "true" })
    expect(rows).toEqual([["one\n"], ["two\nthree\n"]])
  })

  it("reads the files of a directory in path order", async () => {
    expect((await load(TextFormat, [p("many")])).rows).toEqual([["one"], ["two"], ["three"]])
  })

  it("has a schema even for a directory without files", async () => {
    const { schema, rows } = await load(TextFormat, [p("empty")])
    expect(describeSchema(schema)).toEqual(["value: string"])
    expect(rows).toEqual([])
  })

  it("drops a UTF-8 byte order mark and decodes other encodings", async () => {
    expect((await load(TextFormat, [p("bom.txt")])).rows).toEqual([["hi"]])
    expect((await load(TextFormat, [p("latin1.txt")], { encoding: "ISO-8859-1" })).rows).toEqual([["café"]])
  })

  it("reads files whose names hold glob characters as themselves", async () => {
    expect((await load(TextFormat, [p("globby")])).rows).toEqual([["plain"], ["bracket"], ["star"], ["zed"]])
    // a path is a Hadoop glob: escaped characters name the file itself
    expect((await load(TextFormat, [p("globby/x\\[1\\].txt")])).rows).toEqual([["bracket"]])
    expect((await load(TextFormat, [p("globby/x[1].txt")])).rows).toEqual([["plain"]])
  })

  it("accepts a one-column string schema under another name", async () => {
    const { schema, rows } = await load(TextFormat, [p("trailing.txt")], {}, T.struct([T.field("line", T.StringType)]))
    expect(describeSchema(schema)).toEqual(["line: string"])
    expect(rows).toEqual([["a"], ["b"]])
  })

  it("rejects schemas with several columns or a non-string column", async () => {
    const two = await failure(
      TextFormat.resolveSchema([p("lines.txt")], T.struct([T.field("a", T.StringType), T.field("b", T.StringType)]), {})
    )
    expect(two.message).toBe("Text data source supports only a single column, and you have 2 columns.")
    const int = await failure(TextFormat.resolveSchema([p("lines.txt")], T.struct([T.field("a", T.IntegerType)]), {}))
    expect(int).toBeInstanceOf(AnalysisError)
    expect(int.message).toContain('doesn\'t support the column `a` of the type "INT"')
  })

  it("rejects an unknown encoding and a non-boolean wholetext", async () => {
    const enc = await failure(TextFormat.resolveSchema([p("lines.txt")], undefined, { encoding: "klingon" }))
    expect((enc as AnalysisError).reason).toBe("InvalidArgument")
    const whole = await failure(TextFormat.read([p("lines.txt")], T.struct([]), { wholetext: "maybe" }))
    expect(whole.message).toContain("'wholetext'")
  })
})
