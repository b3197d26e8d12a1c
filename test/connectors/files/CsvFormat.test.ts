import { Effect } from "effect"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../../core/Errors.ts"
import { CsvFormat } from "../../../connectors/files/CsvFormat.ts"
import { describeSchema, failure, load, removeDir, tempDir, writeFiles } from "./helpers.ts"

let dir = ""
const p = (rel: string): string => path.join(dir, rel)
const DAY = 86_400_000

beforeAll(async () => {
  dir = await tempDir()
  await writeFiles(dir, {
    "plain.csv": "a,b\n1,2\n",
    "people.csv":
      "name,age,score,ok,day,ts\n" +
      "alice,30,1.5,true,2020-01-01,2020-01-01 10:00:00\n" +
      "bob,,2,false,2020-01-02,2020-01-02\n",
    "widen.csv":
      "i,l,d,s,bs,dt,big,nan\n1,1,1,1,true,2020-01-01,12345678901234567890,NaN\n2,3000000000,1.5,x,1,2020-01-01 10:00:00,1,Inf\n",
    "quotes.csv": '"a,b","say ""hi""","c\\"d",x"y\n',
    "bad.csv": "1,2\n3\n4,5,6\nx,7\n",
    "nulls.csv": 'NA,"",\n',
    "comment.csv": "#skip,me\na,b\n\n   \n#also\nc,d\n",
    "semi.csv": "a;b\n1;2\n",
    "tabs.csv": "a\tb\n1\t2\n",
    "multi.csv": "a||b||c\n",
    "spaces.csv": " a , b \n",
    "dupheader.csv": "a,A,,b\n1,2,3,4\n",
    "quoted-newline.csv": 'a,"line1\nline2"\nb,c\n',
    "h1/one.csv": "x,y\n1,2\n",
    "h1/two.csv": "x,y\n3,4.5\n",
    "empty/e.csv": "",
    "crlf.csv": "a,b\r\n1,2\r\n",
    "escape-quote.csv": '"say ""hi"""\n'
  })
})

afterAll(() => removeDir(dir))

describe("csv without options", () => {
  it("names columns _c0, _c1, … and reads every value as a string", async () => {
    const { schema, rows } = await load(CsvFormat, [p("plain.csv")])
    expect(describeSchema(schema)).toEqual(["_c0: string", "_c1: string"])
    expect(rows).toEqual([
      ["a", "b"],
      ["1", "2"]
    ])
  })

  it("splits on \\r\\n", async () => {
    expect((await load(CsvFormat, [p("crlf.csv")])).rows).toEqual([
      ["a", "b"],
      ["1", "2"]
    ])
  })
})

describe("csv header and inferSchema", () => {
  it("takes names from the header and infers int, double, boolean, date and timestamp", async () => {
    const { schema, rows } = await load(CsvFormat, [p("people.csv")], { header: "true", inferSchema: "true" })
    expect(describeSchema(schema)).toEqual([
      "name: string",
      "age: integer",
      "score: double",
      "ok: boolean",
      "day: date",
      "ts: timestamp"
    ])
    expect(rows).toEqual([
      ["alice", 30, 1.5, true, Date.UTC(2020, 0, 1) / DAY, Date.UTC(2020, 0, 1, 10)],
      ["bob", null, 2, false, Date.UTC(2020, 0, 2) / DAY, Date.UTC(2020, 0, 2)]
    ])
  })

  it("reads every column as a string without inferSchema", async () => {
    const { schema, rows } = await load(CsvFormat, [p("people.csv")], { header: "true" })
    expect(schema.fields.every((f) => f.dataType._tag === "string")).toBe(true)
    expect(rows[1]).toEqual(["bob", null, "2", "false", "2020-01-02", "2020-01-02"])
  })

  it("widens int to long and double, and anything mixed with a string to string", async () => {
    const { schema, rows } = await load(CsvFormat, [p("widen.csv")], { header: "true", inferSchema: "true" })
    expect(describeSchema(schema)).toEqual([
      "i: integer",
      "l: long",
      "d: double",
      "s: string",
      // boolean then "1": no common type but string
      "bs: string",
      // a date column meeting a timestamp becomes timestamp
      "dt: timestamp",
      // Spark infers decimal(20,0); tributary has no decimal type
      "big: double",
      "nan: double"
    ])
    expect(rows[0].slice(0, 7)).toEqual([1, 1, 1, "1", "true", Date.UTC(2020, 0, 1), Number("12345678901234567890")])
    expect(Number.isNaN(rows[0][7])).toBe(true)
    expect(rows[1]).toEqual([2, 3000000000, 1.5, "x", "1", Date.UTC(2020, 0, 1, 10), 1, Infinity])
  })

  it("makes header names safe: positions for empty names and case-insensitive duplicates", async () => {
    const { schema } = await load(CsvFormat, [p("dupheader.csv")], { header: "true" })
    expect(describeSchema(schema)).toEqual(["a0: string", "A1: string", "_c2: string", "b: string"])
  })

  it("drops each file's header when reading several files", async () => {
    const { schema, rows } = await load(CsvFormat, [p("h1")], { header: "true", inferSchema: "true" })
    expect(describeSchema(schema)).toEqual(["x: integer", "y: double"])
    expect(rows).toEqual([
      [1, 2],
      [3, 4.5]
    ])
  })

  it("infers an empty schema from empty files", async () => {
    const schema = await Effect.runPromise(CsvFormat.resolveSchema([p("empty")], undefined, { header: "true" }))
    expect(schema.fields).toEqual([])
  })
})

describe("csv parsing options", () => {
  it('handles quotes like Spark: delimiters inside quotes, \\" escapes, doubled quotes kept raw', async () => {
    const { rows } = await load(CsvFormat, [p("quotes.csv")])
    expect(rows).toEqual([["a,b", '"say ""hi"""', 'c"d', 'x"y']])
  })

  it("reads doubled quotes as one quote when escape is the quote character", async () => {
    const { rows } = await load(CsvFormat, [p("escape-quote.csv")], { escape: '"' })
    expect(rows).toEqual([['say "hi"']])
  })

  it("turns nullValue and empty unquoted values into null, an empty quoted value into emptyValue", async () => {
    const { rows } = await load(CsvFormat, [p("nulls.csv")], { nullValue: "NA" })
    expect(rows).toEqual([[null, "", null]])
    const withEmpty = await load(CsvFormat, [p("nulls.csv")], { nullValue: "NA", emptyValue: "EMPTY" })
    expect(withEmpty.rows).toEqual([[null, "EMPTY", null]])
  })

  it("skips comment lines and blank lines", async () => {
    const { rows } = await load(CsvFormat, [p("comment.csv")], { comment: "#" })
    expect(rows).toEqual([
      ["a", "b"],
      ["c", "d"]
    ])
  })

  it("uses sep / delimiter, including escaped and multi-character separators", async () => {
    expect((await load(CsvFormat, [p("semi.csv")], { sep: ";" })).rows).toEqual([
      ["a", "b"],
      ["1", "2"]
    ])
    expect((await load(CsvFormat, [p("tabs.csv")], { delimiter: "\\t" })).rows).toEqual([
      ["a", "b"],
      ["1", "2"]
    ])
    expect((await load(CsvFormat, [p("multi.csv")], { sep: "||" })).rows).toEqual([["a", "b", "c"]])
  })

  it("keeps surrounding whitespace unless ignoreLeading/TrailingWhiteSpace", async () => {
    expect((await load(CsvFormat, [p("spaces.csv")])).rows).toEqual([[" a ", " b "]])
    const trimmed = await load(CsvFormat, [p("spaces.csv")], {
      ignoreLeadingWhiteSpace: "true",
      ignoreTrailingWhiteSpace: "true"
    })
    expect(trimmed.rows).toEqual([["a", "b"]])
  })

  it("reads quoted line breaks with multiLine, and line by line without it", async () => {
    const multi = await load(CsvFormat, [p("quoted-newline.csv")], { multiLine: "true" })
    expect(multi.rows).toEqual([
      ["a", "line1\nline2"],
      ["b", "c"]
    ])
    const lines = await load(CsvFormat, [p("quoted-newline.csv")])
    expect(lines.rows).toEqual([
      ["a", "line1"],
      ['line2"', null],
      ["b", "c"]
    ])
  })
})

describe("csv malformed records", () => {
  const ab = T.struct([T.field("a", T.IntegerType), T.field("b", T.IntegerType)])
  const abCorrupt = T.struct([...ab.fields, T.field("_corrupt_record", T.StringType)])

  it("PERMISSIVE: missing fields null, extra dropped, bad values null, the line in the corrupt column", async () => {
    const { rows } = await load(CsvFormat, [p("bad.csv")], {}, abCorrupt)
    expect(rows).toEqual([
      [1, 2, null],
      [3, null, "3"],
      [4, 5, "4,5,6"],
      [null, 7, "x,7"]
    ])
  })

  it("PERMISSIVE without a corrupt column keeps the partial rows", async () => {
    const { rows } = await load(CsvFormat, [p("bad.csv")], {}, ab)
    expect(rows).toEqual([
      [1, 2],
      [3, null],
      [4, 5],
      [null, 7]
    ])
  })

  it("DROPMALFORMED keeps only well-formed records", async () => {
    const { rows } = await load(CsvFormat, [p("bad.csv")], { mode: "DROPMALFORMED" }, ab)
    expect(rows).toEqual([[1, 2]])
  })

  it("FAILFAST fails with a user error naming the file and the record", async () => {
    const e = await failure(CsvFormat.read([p("bad.csv")], ab, { mode: "FAILFAST" }))
    expect(e).toBeInstanceOf(ConnectorError)
    expect(e.domain).toBe("user")
    expect(e.message).toContain(`file:${p("bad.csv")}`)
    expect(e.message).toContain("Malformed records are detected in record parsing: 3.")
  })

  it("with enforceSchema=false, fails when the header does not match the schema", async () => {
    const schema = T.struct([T.field("x", T.IntegerType), T.field("z", T.IntegerType)])
    const e = await failure(CsvFormat.read([p("h1/one.csv")], schema, { header: "true", enforceSchema: "false" }))
    expect(e.message).toContain("CSV header does not conform to the schema")
    expect(e.message).toContain("Expected: z but found: y")
    const ok = await Effect.runPromise(CsvFormat.read([p("h1/one.csv")], schema, { header: "true" }))
    expect(ok).toEqual([[1, 2]])
  })
})

describe("csv option validation", () => {
  const bad = async (options: Record<string, string>, key: string): Promise<void> => {
    const e = await failure(CsvFormat.resolveSchema([p("plain.csv")], undefined, options))
    expect(e).toBeInstanceOf(AnalysisError)
    expect((e as AnalysisError).reason).toBe("InvalidArgument")
    expect(e.message).toContain(`'${key}'`)
  }

  it("rejects non-boolean flags, multi-character quotes, empty separators and unknown modes", async () => {
    await bad({ header: "yes" }, "header")
    await bad({ inferSchema: "1" }, "inferSchema")
    await bad({ quote: "ab" }, "quote")
    await bad({ sep: "" }, "sep")
    await bad({ delimiter: "\\" }, "delimiter")
    await bad({ mode: "LENIENT" }, "mode")
  })

  it("rejects columns of types CSV cannot hold", async () => {
    const e = await failure(
      CsvFormat.resolveSchema([p("plain.csv")], T.struct([T.field("s", T.struct([T.field("x", T.IntegerType)]))]), {})
    )
    expect(e.message).toBe(
      '[UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE] The CSV datasource doesn\'t support the column `s` of the type "STRUCT<x: INT>".'
    )
  })
})
