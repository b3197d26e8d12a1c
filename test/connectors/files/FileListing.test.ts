import { Effect } from "effect"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import { AnalysisError } from "../../../core/Errors.ts"
import { globToRegExp, listFiles } from "../../../connectors/files/FileListing.ts"
import { JsonFormat } from "../../../connectors/files/JsonFormat.ts"
import { TextFormat } from "../../../connectors/files/TextFormat.ts"
import { describeSchema, failure, load, removeDir, tempDir, writeFiles } from "./helpers.ts"

let dir = ""
const p = (rel: string): string => path.join(dir, rel)
const DAY = 86_400_000

const names = async (paths: ReadonlyArray<string>, options: Record<string, string> = {}): Promise<Array<string>> => {
  const index = await Effect.runPromise(listFiles("text", paths, options, undefined))
  return index.files.map((f) => path.relative(dir, f.path))
}

beforeAll(async () => {
  dir = await tempDir()
  await writeFiles(dir, {
    "flat/a.txt": "a",
    "flat/b.csv": "b",
    "flat/_SUCCESS": "",
    "flat/.a.txt.crc": "crc",
    "flat/_tmp/x.txt": "tmp",
    "flat/sub/nested.txt": "nested",
    "flat/part.txt._COPYING_": "copying",
    "globs/x1.txt": "1",
    "globs/x2.txt": "2",
    "globs/y1.txt": "3",
    "globs/d1/in.txt": "d1",
    "globs/d2/in.txt": "d2",
    "t/year=2020/month=1/f.txt": "a",
    "t/year=2020/month=2/f.txt": "b",
    "t/year=2021/month=1/f.txt": "c",
    "t/_SUCCESS": "",
    "t/stray.txt": "stray",
    "long/a=1/f.txt": "x",
    "long/a=3000000000/f.txt": "x",
    "dbl/a=1/f.txt": "x",
    "dbl/a=1.5/f.txt": "x",
    "longdbl/a=3000000000/f.txt": "x",
    "longdbl/a=1.5/f.txt": "x",
    "str/a=1/f.txt": "x",
    "str/a=x/f.txt": "x",
    "dates/d=2020-01-01/t=2020-01-01 10%3A00%3A00/f.txt": "x",
    "nulls/a=__HIVE_DEFAULT_PARTITION__/f.txt": "x",
    "nulls/a=7/f.txt": "x",
    "esc/s=hello%20world/f.txt": "x",
    "under/_c=1/f.txt": "x",
    "names/a=1/f.txt": "x",
    "names/b=2/f.txt": "x",
    "layout/a=1/f.txt": "x",
    "layout/other/f.txt": "x",
    "jsonpart/k=1/f.json": '{"v": 1, "k": "data"}\n'
  })
})

afterAll(() => removeDir(dir))

describe("paths", () => {
  it("reads the files directly inside a directory, skipping _ and . names and ._COPYING_", async () => {
    expect(await names([p("flat")])).toEqual(["flat/a.txt", "flat/b.csv"])
  })

  it("reads nested directories with recursiveFileLookup", async () => {
    expect(await names([p("flat")], { recursiveFileLookup: "true" })).toEqual([
      "flat/a.txt",
      "flat/b.csv",
      "flat/sub/nested.txt"
    ])
  })

  it("filters file names with pathGlobFilter", async () => {
    expect(await names([p("flat")], { pathGlobFilter: "*.txt" })).toEqual(["flat/a.txt"])
  })

  it("expands globs in the last and in inner segments", async () => {
    expect(await names([p("globs/x*.txt")])).toEqual(["globs/x1.txt", "globs/x2.txt"])
    expect(await names([p("globs/?1.txt")])).toEqual(["globs/x1.txt", "globs/y1.txt"])
    expect(await names([p("globs/[xy]2.txt")])).toEqual(["globs/x2.txt"])
    expect(await names([p("globs/{x1,y1}.txt")])).toEqual(["globs/x1.txt", "globs/y1.txt"])
    expect(await names([p("globs/d*/in.txt")])).toEqual(["globs/d1/in.txt", "globs/d2/in.txt"])
    // a glob matching directories reads the files inside them
    expect(await names([p("globs/d*")])).toEqual(["globs/d1/in.txt", "globs/d2/in.txt"])
  })

  it("reads several paths, a single file, a file: URI and a relative path", async () => {
    expect(await names([p("globs/x1.txt"), p("globs/y1.txt")])).toEqual(["globs/x1.txt", "globs/y1.txt"])
    expect(await names([`file:${p("globs/x2.txt")}`])).toEqual(["globs/x2.txt"])
    expect(await names([path.relative(process.cwd(), p("globs/x2.txt"))])).toEqual(["globs/x2.txt"])
    expect(await names([], { path: p("globs/y1.txt") })).toEqual(["globs/y1.txt"])
  })

  it("fails with PATH_NOT_FOUND for a missing path and for a glob that matches nothing", async () => {
    const missing = await failure(listFiles("json", [p("flat"), p("nope")], {}, undefined))
    expect(missing).toBeInstanceOf(AnalysisError)
    expect((missing as AnalysisError).reason).toBe("PathNotFound")
    expect(missing.message).toBe(`[PATH_NOT_FOUND] Path does not exist: file:${p("nope")}.`)
    const glob = await failure(listFiles("json", [p("globs/*.parquet")], {}, undefined))
    expect(glob.message).toBe(`[PATH_NOT_FOUND] Path does not exist: file:${p("globs/*.parquet")}.`)
  })

  it("refuses other file systems", async () => {
    const e = await failure(listFiles("json", ["s3://bucket/x"], {}, undefined))
    expect((e as AnalysisError).reason).toBe("InvalidArgument")
  })

  it("compiles Hadoop globs", () => {
    expect(globToRegExp("*.json")!.test("a.json")).toBe(true)
    expect(globToRegExp("*.json")!.test("a.jsonl")).toBe(false)
    expect(globToRegExp("[!a]*")!.test("abc")).toBe(false)
    expect(globToRegExp("[!a]*")!.test("bcd")).toBe(true)
    expect(globToRegExp("a\\*b")!.test("a*b")).toBe(true)
    expect(globToRegExp("a\\*b")!.test("axb")).toBe(false)
    expect(globToRegExp("{a")).toBeUndefined()
  })
})

describe("partition discovery", () => {
  it("appends key=value directories as typed columns and ignores files outside partitions", async () => {
    const { schema, rows } = await load(TextFormat, [p("t")])
    expect(describeSchema(schema)).toEqual(["value: string", "year: integer", "month: integer"])
    expect(rows).toEqual([
      ["a", 2020, 1],
      ["b", 2020, 2],
      ["c", 2021, 1]
    ])
  })

  it("widens types across directories like Spark: int+long long, int+double double, long+double string", async () => {
    const typeOf = async (rel: string): Promise<string> => describeSchema((await load(TextFormat, [p(rel)])).schema)[1]
    expect(await typeOf("long")).toBe("a: long")
    expect(await typeOf("dbl")).toBe("a: double")
    expect(await typeOf("longdbl")).toBe("a: string")
    expect(await typeOf("str")).toBe("a: string")
  })

  it("infers dates and timestamps, unescapes values and reads the default partition name as null", async () => {
    const dates = await load(TextFormat, [p("dates")])
    expect(describeSchema(dates.schema)).toEqual(["value: string", "d: date", "t: timestamp"])
    expect(dates.rows).toEqual([["x", Date.UTC(2020, 0, 1) / DAY, Date.UTC(2020, 0, 1, 10)]])
    const nulls = await load(TextFormat, [p("nulls")])
    expect(describeSchema(nulls.schema)).toEqual(["value: string", "a: integer"])
    expect(nulls.rows).toEqual([
      ["x", 7],
      ["x", null]
    ])
    expect((await load(TextFormat, [p("esc")])).rows).toEqual([["x", "hello world"]])
    expect(describeSchema((await load(TextFormat, [p("under")])).schema)).toEqual(["value: string", "_c: integer"])
  })

  it("uses the user schema's type for a partition column", async () => {
    const user = T.struct([T.field("value", T.StringType), T.field("YEAR", T.StringType)])
    const { schema, rows } = await load(TextFormat, [p("t")], {}, user)
    expect(describeSchema(schema)).toEqual(["value: string", "YEAR: string", "month: integer"])
    expect(rows[0]).toEqual(["a", "2020", 1])
  })

  it("fails when a partition value does not fit the user's type", async () => {
    const e = await failure(
      TextFormat.resolveSchema([p("str")], T.struct([T.field("value", T.StringType), T.field("a", T.IntegerType)]), {})
    )
    expect(e.message).toContain("Failed to cast value `x` to `int` for partition column `a`")
  })

  it("does not discover partitions above the given path, unless basePath says so", async () => {
    expect(describeSchema((await load(TextFormat, [p("t/year=2020")])).schema)).toEqual([
      "value: string",
      "month: integer"
    ])
    // each globbed directory is its own base path: Spark's "Conflicting directory structures"
    const globbed = await failure(TextFormat.resolveSchema([p("t/year=*")], undefined, {}))
    expect(globbed.message).toContain("Conflicting directory structures detected")
    expect(globbed.message).toContain("basePath")
    // globbed leaf directories have nothing to discover
    const leaves = await load(TextFormat, [p("t/year=2020/month=*")])
    expect(describeSchema(leaves.schema)).toEqual(["value: string"])
    expect(leaves.rows).toEqual([["a"], ["b"]])
    const based = await load(TextFormat, [p("t/year=*")], { basePath: p("t") })
    expect(describeSchema(based.schema)).toEqual(["value: string", "year: integer", "month: integer"])
    const wrong = await failure(TextFormat.resolveSchema([p("t")], undefined, { basePath: p("flat") }))
    expect(wrong.message).toContain("Wrong basePath")
  })

  it("turns partition discovery off with recursiveFileLookup", async () => {
    const { schema, rows } = await load(TextFormat, [p("t")], { recursiveFileLookup: "true" })
    expect(describeSchema(schema)).toEqual(["value: string"])
    expect(rows).toEqual([["stray"], ["a"], ["b"], ["c"]])
  })

  it("fails on conflicting partition column names and directory layouts", async () => {
    const cols = await failure(TextFormat.resolveSchema([p("names")], undefined, {}))
    expect(cols.message).toContain("Conflicting partition column names detected")
    const layout = await failure(TextFormat.resolveSchema([p("layout")], undefined, {}))
    expect(layout.message).toContain("Conflicting directory structures detected")
  })

  it("lets a partition column replace a data column of the same name in place", async () => {
    const { schema, rows } = await load(JsonFormat, [p("jsonpart")])
    expect(describeSchema(schema)).toEqual(["k: integer", "v: long"])
    expect(rows).toEqual([[1, 1]])
  })
})
