import { Effect } from "effect"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import { AnalysisError, ConnectorError } from "../../../core/Errors.ts"
import { ParquetFormat } from "../../../connectors/files/ParquetFormat.ts"
import * as DuckDB from "../../../state/DuckDB.ts"
import { describeSchema, failure, load, removeDir, tempDir, writeFiles } from "./helpers.ts"

let dir = ""
const p = (rel: string): string => path.join(dir, rel)
const DAY = 86_400_000

/** Writes a Parquet file with DuckDB from a SELECT. */
const writeParquet = (rel: string, select: string): Promise<void> =>
  Effect.runPromise(DuckDB.withMemory((c) => c.execute(`COPY (${select}) TO ? (FORMAT parquet)`, [p(rel)])))

beforeAll(async () => {
  dir = await tempDir()
  await writeFiles(dir, {
    "merge/.keep": "",
    "globby/.keep": "",
    "conflict/.keep": "",
    "table/year=2020/.keep": "",
    "table/year=2021/.keep": "",
    "bad/x.parquet": "not a parquet file",
    "none/_SUCCESS": ""
  })
  await writeParquet(
    "all.parquet",
    `SELECT 1::INTEGER AS i, 3000000000::BIGINT AS l, 'x' AS s, 1.5::DOUBLE AS d, true AS b,
       DATE '2020-01-02' AS dt, TIMESTAMP '2020-01-01 10:00:00' AS ts, [1, 2]::INTEGER[] AS arr,
       {'x': 7, 'y': 'why'}::STRUCT(x INTEGER, y VARCHAR) AS st, MAP {'k': 1} AS m, '\\x01\\x02'::BLOB AS bin
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL`
  )
  await writeParquet("merge/a.parquet", "SELECT 1::INTEGER AS a, 'b1' AS b")
  await writeParquet("merge/b.parquet", "SELECT 2::INTEGER AS a, 2.5::DOUBLE AS c")
  await writeParquet("globby/y*.parquet", "SELECT 1::INTEGER AS a")
  await writeParquet("globby/yz.parquet", "SELECT 2::INTEGER AS a")
  await writeParquet("conflict/a.parquet", "SELECT 1::INTEGER AS a")
  await writeParquet("conflict/b.parquet", "SELECT 'x' AS a")
  await writeParquet("table/year=2020/part-0.parquet", "SELECT 1::INTEGER AS id")
  await writeParquet("table/year=2021/part-0.parquet", "SELECT 2::INTEGER AS id")
})

afterAll(() => removeDir(dir))

describe("parquet", () => {
  it("maps DuckDB's types to Spark's and reads every column as nullable", async () => {
    const { schema, rows } = await load(ParquetFormat, [p("all.parquet")])
    expect(describeSchema(schema)).toEqual([
      "i: integer",
      "l: long",
      "s: string",
      "d: double",
      "b: boolean",
      "dt: date",
      "ts: timestamp",
      "arr: array<integer>",
      "st: struct<x:integer,y:string>",
      "m: map<string,integer>",
      "bin: binary"
    ])
    expect(schema.fields.every((f) => f.nullable)).toBe(true)
    expect(rows[0]).toEqual([
      1,
      3000000000,
      "x",
      1.5,
      true,
      Date.UTC(2020, 0, 2) / DAY,
      Date.UTC(2020, 0, 1, 10),
      [1, 2],
      [7, "why"],
      new Map([["k", 1]]),
      new Uint8Array([1, 2])
    ])
    expect(rows[1]).toEqual(new Array(11).fill(null))
  })

  it("selects a user schema's columns by name, case-insensitively; missing columns are null", async () => {
    const schema = T.struct([
      T.field("S", T.StringType),
      T.field("missing", T.LongType),
      T.field("i", T.LongType),
      T.field("st", T.struct([T.field("Y", T.StringType), T.field("z", T.IntegerType)]))
    ])
    const { schema: resolved, rows } = await load(ParquetFormat, [p("all.parquet")], {}, schema)
    expect(describeSchema(resolved)).toEqual([
      "S: string",
      "missing: long",
      "i: long",
      "st: struct<Y:string,z:integer>"
    ])
    expect(rows[0]).toEqual(["x", null, 1, ["why", null]])
  })

  it("fails the read when a column's type does not match the user schema", async () => {
    const e = await failure(ParquetFormat.read([p("all.parquet")], T.struct([T.field("s", T.IntegerType)]), {}))
    expect(e).toBeInstanceOf(ConnectorError)
    expect(e.domain).toBe("user")
    expect(e.message).toBe(
      `[FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH] Error while reading file file:${p("all.parquet")}. Data type mismatches when reading Parquet column \`s\`. Expected Spark type "INT", actual type "STRING".`
    )
  })

  it("takes the schema of the first file, or of all files with mergeSchema", async () => {
    const first = await load(ParquetFormat, [p("merge")])
    expect(describeSchema(first.schema)).toEqual(["a: integer", "b: string"])
    expect(first.rows).toEqual([
      [1, "b1"],
      [2, null]
    ])
    const merged = await load(ParquetFormat, [p("merge")], { mergeSchema: "true" })
    expect(describeSchema(merged.schema)).toEqual(["a: integer", "b: string", "c: double"])
    expect(merged.rows).toEqual([
      [1, "b1", null],
      [2, null, 2.5]
    ])
  })

  it("reads a file whose name holds a glob character as itself", async () => {
    expect((await load(ParquetFormat, [p("globby")])).rows).toEqual([[1], [2]])
  })

  it("fails mergeSchema on incompatible types", async () => {
    const e = await failure(ParquetFormat.resolveSchema([p("conflict")], undefined, { mergeSchema: "true" }))
    expect(e).toBeInstanceOf(ConnectorError)
    expect(e.message).toContain('incompatible data types "INT" and "STRING"')
  })

  it("appends partition columns discovered from directories", async () => {
    const { schema, rows } = await load(ParquetFormat, [p("table")])
    expect(describeSchema(schema)).toEqual(["id: integer", "year: integer"])
    expect(rows).toEqual([
      [1, 2020],
      [2, 2021]
    ])
  })

  it("reports a corrupt file as a user error naming it", async () => {
    const e = await failure(ParquetFormat.resolveSchema([p("bad")], undefined, {}))
    expect(e).toBeInstanceOf(ConnectorError)
    expect((e as ConnectorError).domain).toBe("user")
    expect(e.message).toContain(`file:${p("bad/x.parquet")}`)
  })

  it("cannot infer a schema without files", async () => {
    const e = await failure(ParquetFormat.resolveSchema([p("none")], undefined, {}))
    expect(e).toBeInstanceOf(AnalysisError)
    expect((e as AnalysisError).reason).toBe("SchemaRequired")
    expect(e.message).toBe(
      "[UNABLE_TO_INFER_SCHEMA] Unable to infer schema for Parquet. It must be specified manually."
    )
  })
})
