import { Effect } from "effect"
import * as path from "node:path"
import { gzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../../core/Errors.ts"
import { JsonFormat } from "../../../connectors/files/JsonFormat.ts"
import { describeSchema, failure, load, removeDir, tempDir, writeFiles } from "./helpers.ts"

let dir = ""
const p = (rel: string): string => path.join(dir, rel)

beforeAll(async () => {
  dir = await tempDir()
  await writeFiles(dir, {
    "basic.json":
      '{"name":"a","age":30,"score":1.5,"ok":true,"tags":["x","y"],"addr":{"zip":"1","city":"c"},"n":null}\n' +
      '{"name":"b","age":40,"score":2,"ok":false,"tags":[],"addr":{"city":"d"},"n":null,"extra":5}\n',
    "conflict.json": '{"a": 1}\n{"a": "x"}\n{"a": {"b": 1}}\n{"a": 1.50}\n',
    "numbers.json": '{"i": 1, "d": 1.0, "e": 1e2, "big": 12345678901234567890, "nan": NaN}\n',
    "malformed.json": '{"a":1}\n{"a":\n5\n\n   \n{"a":2}\n',
    "typed.json": '{"a": 1, "b": "x"}\n{"a": "oops", "b": "y"}\n{"a": 3, "b": 4}\n',
    "nested.json": '{"s": {"x": 1, "y": "bad"}, "arr": [1, 2]}\n{"s": {"x": 2, "y": 3}, "arr": [1, "x"]}\n',
    "multi.json": '[\n  {"a": 1, "b": "x"},\n  {"a": 2}\n]\n',
    "one.json": '{\n  "a": 1,\n  "b": {"c": [true, false]}\n}\n',
    "toparray.json": '[{"a": 1}, {"a": 2}]\n{"a": 3}\n',
    "case.json": '{"A": 1, "a": 2}\n',
    "times.json": '{"ts": "2020-01-01T00:00:00Z", "d": "2020-02-03"}\n{"ts": 1, "d": "2020-02-03 10:00:00"}\n',
    "quotes.json": "{'a': 'single', \"b\": Infinity, \"c\": -INF}\n",
    "nulls.json": '{"a": null, "b": 1, "c": ""}\n{"a": null, "b": 2, "c": ""}\n',
    "empty-obj.json": '{"a": {}, "b": [{}], "c": [], "d": 1}\n',
    "dup.json": '{"a": 1, "a": 2}\n',
    "crlf.json": '{"a": 1}\r\n{"a": 2}\r{"a": 3}',
    "sep.json": '{"a": 1}|{"a": 2}|',
    "allbad.json": "not json\nalso not\n",
    "zipped.json.gz": gzipSync('{"a": 1}\n{"a": 2}\n'),
    "broken.json.gz": "not gzip",
    // invalid UTF-8 (a lone 0xFF) inside a string, after the value, and a genuine U+FFFD
    "utf8.json": Buffer.concat([
      Buffer.from('{"a": 1, "s": "x'),
      Buffer.from([0xff]),
      Buffer.from('y"}\n{"a": 2} '),
      Buffer.from([0xff]),
      Buffer.from('\n{"a": 3, "s": "\uFFFD"}\n')
    ]),
    "maps.json": '{"m": {"k": 1, "j": null}, "b": "AQI="}\n{"m": {"k": "x"}, "b": "***"}\n'
  })
})

afterAll(() => removeDir(dir))

describe("json inference", () => {
  it("infers long, double, boolean, string, arrays and structs with fields sorted by name", async () => {
    const { schema, rows } = await load(JsonFormat, [p("basic.json")])
    expect(describeSchema(schema)).toEqual([
      "addr: struct<city:string,zip:string>",
      "age: long",
      "extra: long",
      "n: string",
      "name: string",
      "ok: boolean",
      "score: double",
      "tags: array<string>"
    ])
    expect(schema.fields.every((f) => f.nullable)).toBe(true)
    expect(rows).toEqual([
      [["c", "1"], 30, null, null, "a", true, 1.5, ["x", "y"]],
      [["d", null], 40, 5, null, "b", false, 2, []]
    ])
  })

  it("widens conflicting types to string and keeps the exact source text of non-strings", async () => {
    const { schema, rows } = await load(JsonFormat, [p("conflict.json")])
    expect(describeSchema(schema)).toEqual(["a: string"])
    expect(rows).toEqual([["1"], ["x"], ['{"b": 1}'], ["1.50"]])
  })

  it("types integers as long, fractions and exponents as double, beyond-long integers as double", async () => {
    const { schema, rows } = await load(JsonFormat, [p("numbers.json")])
    expect(describeSchema(schema)).toEqual(["big: double", "d: double", "e: double", "i: long", "nan: double"])
    expect(rows[0][0]).toBe(Number("12345678901234567890"))
    expect(rows[0].slice(1, 4)).toEqual([1, 100, 1])
    expect(Number.isNaN(rows[0][4])).toBe(true)
  })

  it("adds _corrupt_record for malformed lines in PERMISSIVE mode and skips blank lines", async () => {
    const { schema, rows } = await load(JsonFormat, [p("malformed.json")])
    expect(describeSchema(schema)).toEqual(["_corrupt_record: string", "a: long"])
    expect(rows).toEqual([
      [null, 1],
      ['{"a":', null],
      ["5", null],
      [null, 2]
    ])
  })

  it("treats invalid UTF-8 before the end of a record's value as malformed, in inference and in reads", async () => {
    const { schema, rows } = await load(JsonFormat, [p("utf8.json")])
    // Jackson rejects the 0xFF inside the string; it never reads the one after `{"a": 2}`
    expect(describeSchema(schema)).toEqual(["_corrupt_record: string", "a: long", "s: string"])
    expect(rows).toEqual([
      ['{"a": 1, "s": "x\uFFFDy"}', null, null],
      [null, 2, null],
      [null, 3, "\uFFFD"]
    ])
    const dropped = await load(JsonFormat, [p("utf8.json")], { mode: "DROPMALFORMED" })
    expect(dropped.rows).toEqual([
      [2, null],
      [3, "\uFFFD"]
    ])
    const e = await failure(JsonFormat.resolveSchema([p("utf8.json")], undefined, { mode: "FAILFAST" }))
    expect(e.message).toContain("MALFORMED_RECORD_IN_SCHEMA_INFERENCE")
    expect(e.message).toContain('{"a": 1, "s": "x\uFFFDy"}')
  })

  it("with an explicit encoding, invalid UTF-8 anywhere in the record is malformed (a strict decoder reads it first)", async () => {
    const schema = T.struct([T.field("a", T.LongType, true), T.field("_corrupt_record", T.StringType, true)])
    const rows = await Effect.runPromise(JsonFormat.read([p("utf8.json")], schema, { encoding: "UTF-8" }))
    expect(rows).toEqual([
      [null, '{"a": 1, "s": "x\uFFFDy"}'],
      [null, '{"a": 2} \uFFFD'],
      [3, null]
    ])
  })

  it("uses columnNameOfCorruptRecord for the corrupt column", async () => {
    const { schema, rows } = await load(JsonFormat, [p("malformed.json")], { columnNameOfCorruptRecord: "bad" })
    expect(describeSchema(schema)).toEqual(["a: long", "bad: string"])
    expect(rows[1]).toEqual([null, '{"a":'])
  })

  it("drops malformed lines in DROPMALFORMED mode", async () => {
    const { schema, rows } = await load(JsonFormat, [p("malformed.json")], { mode: "dropmalformed" })
    expect(describeSchema(schema)).toEqual(["a: long"])
    expect(rows).toEqual([[1], [2]])
  })

  it("fails inference in FAILFAST mode, naming the file and the record", async () => {
    const e = await failure(JsonFormat.resolveSchema([p("malformed.json")], undefined, { mode: "FAILFAST" }))
    expect(e).toBeInstanceOf(ConnectorError)
    const ce = e as ConnectorError
    expect(ce.domain).toBe("user")
    expect(ce.message).toContain("MALFORMED_RECORD_IN_SCHEMA_INFERENCE")
    expect(ce.message).toContain(`file:${p("malformed.json")}`)
    expect(ce.message).toContain('{"a":')
  })

  it("infers only the corrupt column when every line is malformed", async () => {
    const { schema, rows } = await load(JsonFormat, [p("allbad.json")])
    expect(describeSchema(schema)).toEqual(["_corrupt_record: string"])
    expect(rows).toEqual([["not json"], ["also not"]])
  })

  it("reads each element of a top-level array as a row", async () => {
    const { schema, rows } = await load(JsonFormat, [p("toparray.json")])
    expect(describeSchema(schema)).toEqual(["a: long"])
    expect(rows).toEqual([[1], [2], [3]])
  })

  it("reads multiLine documents: an array of objects, or one object", async () => {
    const multi = await load(JsonFormat, [p("multi.json")], { multiLine: "true" })
    expect(describeSchema(multi.schema)).toEqual(["a: long", "b: string"])
    expect(multi.rows).toEqual([
      [1, "x"],
      [2, null]
    ])
    const one = await load(JsonFormat, [p("one.json")], { multiline: "TRUE" })
    expect(describeSchema(one.schema)).toEqual(["a: long", "b: struct<c:array<boolean>>"])
    expect(one.rows).toEqual([[1, [[true, false]]]])
  })

  it("reads a pretty-printed document without multiLine as corrupt lines", async () => {
    const { schema, rows } = await load(JsonFormat, [p("one.json")])
    expect(describeSchema(schema)).toEqual(["_corrupt_record: string"])
    expect(rows).toEqual([["{"], ['  "a": 1,'], ['  "b": {"c": [true, false]}'], ["}"]])
  })

  it("types all-null and empty-string fields as string, or drops them with dropFieldIfAllNull", async () => {
    const { schema, rows } = await load(JsonFormat, [p("nulls.json")])
    expect(describeSchema(schema)).toEqual(["a: string", "b: long", "c: string"])
    expect(rows).toEqual([
      [null, 1, ""],
      [null, 2, ""]
    ])
    const dropped = await load(JsonFormat, [p("nulls.json")], { dropFieldIfAllNull: "true" })
    expect(describeSchema(dropped.schema)).toEqual(["b: long"])
    expect(dropped.rows).toEqual([[1], [2]])
  })

  it("drops empty structs and arrays of empty structs, types empty arrays array<string>", async () => {
    const { schema } = await load(JsonFormat, [p("empty-obj.json")])
    expect(describeSchema(schema)).toEqual(["c: array<string>", "d: long"])
  })

  it("infers primitives as strings with primitivesAsString", async () => {
    const { schema, rows } = await load(JsonFormat, [p("basic.json")], { primitivesAsString: "true" })
    expect(describeSchema(schema)).toContain("age: string")
    expect(describeSchema(schema)).toContain("ok: string")
    expect(describeSchema(schema)).toContain("score: string")
    expect(rows[1][1]).toBe("40")
    expect(rows[1][6]).toBe("2")
  })

  it("accepts single quotes and non-numeric numbers by default, and refuses them when turned off", async () => {
    const { schema, rows } = await load(JsonFormat, [p("quotes.json")])
    expect(describeSchema(schema)).toEqual(["a: string", "b: double", "c: double"])
    expect(rows).toEqual([["single", Infinity, -Infinity]])
    const strict = await load(JsonFormat, [p("quotes.json")], { allowSingleQuotes: "false" })
    expect(describeSchema(strict.schema)).toEqual(["_corrupt_record: string"])
  })

  it("matches field names case-sensitively", async () => {
    const { schema, rows } = await load(JsonFormat, [p("case.json")])
    expect(describeSchema(schema)).toEqual(["A: long", "a: long"])
    expect(rows).toEqual([[1, 2]])
  })

  it("infers timestamps only with inferTimestamp", async () => {
    const plain = await load(JsonFormat, [p("times.json")])
    expect(describeSchema(plain.schema)).toEqual(["d: string", "ts: string"])
    const ts = await JsonFormat.resolveSchema([p("times.json")], undefined, { inferTimestamp: "true" }).pipe(
      Effect.runPromise
    )
    // "1" is a long: long and timestamp have no common type but string
    expect(describeSchema(ts)).toEqual(["d: timestamp", "ts: string"])
  })

  it("splits records on \\n, \\r\\n and \\r, or on lineSep", async () => {
    expect((await load(JsonFormat, [p("crlf.json")])).rows).toEqual([[1], [2], [3]])
    expect((await load(JsonFormat, [p("sep.json")], { lineSep: "|" })).rows).toEqual([[1], [2]])
  })

  it("decompresses .gz files, and reports a broken one as a user error naming it", async () => {
    expect((await load(JsonFormat, [p("zipped.json.gz")])).rows).toEqual([[1], [2]])
    const e = await failure(JsonFormat.resolveSchema([p("broken.json.gz")], undefined, {}))
    expect(e).toBeInstanceOf(ConnectorError)
    expect((e as ConnectorError).domain).toBe("user")
    expect(e.message).toContain(`file:${p("broken.json.gz")}`)
  })

  it("merges a key repeated within an object into one column", async () => {
    const { schema, rows } = await load(JsonFormat, [p("dup.json")])
    expect(describeSchema(schema)).toEqual(["a: long"])
    expect(rows).toEqual([[2]])
  })
})

describe("json with a user schema", () => {
  const ab = T.struct([T.field("a", T.LongType), T.field("b", T.StringType)])
  const abCorrupt = T.struct([...ab.fields, T.field("_corrupt_record", T.StringType)])

  it("keeps the fields that convert and nulls the others (partial results), marking the record corrupt", async () => {
    const { schema, rows } = await load(JsonFormat, [p("typed.json")], {}, abCorrupt)
    expect(describeSchema(schema)).toEqual(["a: long", "b: string", "_corrupt_record: string"])
    expect(rows).toEqual([
      [1, "x", null],
      [null, "y", '{"a": "oops", "b": "y"}'],
      [3, "4", null]
    ])
  })

  it("without a corrupt column PERMISSIVE still returns the partial row", async () => {
    const { rows } = await load(JsonFormat, [p("typed.json")], {}, ab)
    expect(rows).toEqual([
      [1, "x"],
      [null, "y"],
      [3, "4"]
    ])
  })

  it("drops records that do not fit in DROPMALFORMED mode", async () => {
    const { rows } = await load(JsonFormat, [p("typed.json")], { mode: "DROPMALFORMED" }, ab)
    expect(rows).toEqual([
      [1, "x"],
      [3, "4"]
    ])
  })

  it("fails the read in FAILFAST mode with a user error naming the file and the record", async () => {
    const e = await failure(JsonFormat.read([p("typed.json")], ab, { mode: "FAILFAST" }))
    expect(e._tag).toBe("ConnectorError")
    expect(e.domain).toBe("user")
    expect(e.message).toContain("MALFORMED_RECORD_IN_PARSING")
    expect(e.message).toContain(`file:${p("typed.json")}`)
    expect(e.message).toContain('{"a": "oops", "b": "y"}')
  })

  it("keeps partial nested structs but nulls an array with an element that does not fit", async () => {
    const schema = T.struct([
      T.field("s", T.struct([T.field("x", T.LongType), T.field("y", T.LongType)])),
      T.field("arr", T.array(T.LongType)),
      T.field("_corrupt_record", T.StringType)
    ])
    const { rows } = await load(JsonFormat, [p("nested.json")], {}, schema)
    expect(rows).toEqual([
      [[1, null], [1, 2], '{"s": {"x": 1, "y": "bad"}, "arr": [1, 2]}'],
      [[2, 3], null, '{"s": {"x": 2, "y": 3}, "arr": [1, "x"]}']
    ])
  })

  it("reads objects as maps and base64 strings as binary; a bad value fails the whole map", async () => {
    const schema = T.struct([T.field("m", T.map(T.StringType, T.LongType)), T.field("b", T.BinaryType)])
    const { rows } = await load(JsonFormat, [p("maps.json")], {}, schema)
    expect(rows).toEqual([
      [
        new Map<string, number | null>([
          ["k", 1],
          ["j", null]
        ]),
        new Uint8Array([1, 2])
      ],
      [null, null]
    ])
  })

  it("matches fields case-sensitively and ignores fields the schema lacks", async () => {
    const { rows } = await load(JsonFormat, [p("case.json")], {}, T.struct([T.field("a", T.IntegerType)]))
    expect(rows).toEqual([[2]])
  })

  it("reads the number -0 as the integer 0 (found by the differential suite against Spark)", async () => {
    await writeFiles(dir, { "negzero.json": '{"i": -0, "l": -0, "d": -0.0}\n' })
    const schema = T.struct([T.field("i", T.IntegerType), T.field("l", T.LongType), T.field("d", T.DoubleType)])
    const { rows } = await load(JsonFormat, [p("negzero.json")], {}, schema)
    expect(Object.is(rows[0][0], 0)).toBe(true)
    expect(Object.is(rows[0][1], 0)).toBe(true)
    expect(Object.is(rows[0][2], -0)).toBe(true)
  })

  it("converts strings to timestamps and dates, and integers to timestamps as seconds", async () => {
    const schema = T.struct([T.field("ts", T.TimestampType), T.field("d", T.DateType)])
    const { rows } = await load(JsonFormat, [p("times.json")], {}, schema)
    expect(rows).toEqual([
      [Date.UTC(2020, 0, 1), Date.UTC(2020, 1, 3) / 86_400_000],
      [1000, Date.UTC(2020, 1, 3) / 86_400_000]
    ])
  })

  it("makes every column nullable whatever the user's schema says", async () => {
    const schema = await Effect.runPromise(
      JsonFormat.resolveSchema([p("typed.json")], T.struct([T.field("a", T.LongType, false)]), {})
    )
    expect(schema).toEqual(T.struct([T.field("a", T.LongType, true)]))
  })

  it("rejects a corrupt-record column that is not a string", async () => {
    const e = await failure(
      JsonFormat.resolveSchema([p("typed.json")], T.struct([T.field("_corrupt_record", T.LongType)]), {})
    )
    expect(e).toBeInstanceOf(AnalysisError)
    expect(e.message).toContain("INVALID_CORRUPT_RECORD_TYPE")
  })

  it("rejects interval columns", async () => {
    const e = await failure(
      JsonFormat.resolveSchema([p("typed.json")], T.struct([T.field("i", T.CalendarIntervalType)]), {})
    )
    expect(e.message).toContain("UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE")
  })
})

describe("json options", () => {
  it("rejects an unknown mode and a non-boolean flag, naming the option and the value", async () => {
    const mode = await failure(JsonFormat.resolveSchema([p("basic.json")], undefined, { mode: "STRICT" }))
    expect(mode).toBeInstanceOf(AnalysisError)
    expect((mode as AnalysisError).reason).toBe("InvalidArgument")
    expect(mode.message).toContain("'mode'")
    expect(mode.message).toContain("STRICT")
    const flag = await failure(JsonFormat.resolveSchema([p("basic.json")], undefined, { multiLine: "yes" }))
    expect((flag as AnalysisError).reason).toBe("InvalidArgument")
    expect(flag.message).toContain("'multiLine'")
  })

  it("fails with PATH_NOT_FOUND for a missing path", async () => {
    const e = await failure(JsonFormat.resolveSchema([p("nope.json")], undefined, {}))
    expect(e).toBeInstanceOf(AnalysisError)
    expect((e as AnalysisError).reason).toBe("PathNotFound")
    expect(e.message).toBe(`[PATH_NOT_FOUND] Path does not exist: file:${p("nope.json")}.`)
  })
})
