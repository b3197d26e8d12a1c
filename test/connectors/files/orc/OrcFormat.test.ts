/**
 * The `orc` format end to end on real files: every ORC type and codec through the writer and
 * the reader, Spark's schema rules (inference, `mergeSchema`, case-insensitive and positional
 * matching, widening, partitions), random schemas and rows as fast-check properties, corrupt
 * files (truncated, bad magic, bit flips) failing with a `ConnectorError` that names the file,
 * and the streaming file sink and source through a session.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, expect, it as vit } from "vitest"
import { MemoryStream, Session } from "../../../../mod.ts"
import * as T from "../../../../core/DataType.ts"
import { ConnectorError } from "../../../../core/Errors.ts"
import { OrcFormat, OrcWriterFormat, orcWriterSettings } from "../../../../connectors/files/orc/OrcFormat.ts"
import { Compression } from "../../../../connectors/files/orc/OrcProto.ts"
import { readOrc } from "../../../../connectors/files/orc/OrcReader.ts"
import type { OrcType } from "../../../../connectors/files/orc/OrcType.ts"
import { writeOrc } from "../../../../connectors/files/orc/OrcWriter.ts"
import { describeSchema, failure, load, removeDir, tempDir } from "../helpers.ts"

let dir = ""
const p = (rel: string): string => path.join(dir, rel)
const put = (rel: string, bytes: Uint8Array): string => {
  fs.mkdirSync(path.dirname(p(rel)), { recursive: true })
  fs.writeFileSync(p(rel), bytes)
  return p(rel)
}

beforeAll(async () => {
  dir = await tempDir()
})
afterAll(() => removeDir(dir))

const ALL: OrcType = {
  kind: "struct",
  fields: [
    { name: "b", type: { kind: "boolean" } },
    { name: "t", type: { kind: "tinyint" } },
    { name: "sm", type: { kind: "smallint" } },
    { name: "i", type: { kind: "int" } },
    { name: "l", type: { kind: "bigint" } },
    { name: "f", type: { kind: "float" } },
    { name: "d", type: { kind: "double" } },
    { name: "s", type: { kind: "string" } },
    { name: "vc", type: { kind: "varchar", maxLength: 10 } },
    { name: "bin", type: { kind: "binary" } },
    { name: "dt", type: { kind: "date" } },
    { name: "ts", type: { kind: "timestamp" } },
    { name: "dec", type: { kind: "decimal", precision: 10, scale: 2 } },
    { name: "st", type: { kind: "struct", fields: [{ name: "x", type: { kind: "int" } }] } },
    { name: "arr", type: { kind: "array", element: { kind: "string" } } },
    { name: "m", type: { kind: "map", key: { kind: "string" }, value: { kind: "bigint" } } }
  ]
}

const allRow = (i: number): Array<unknown> => [
  i % 2 === 0,
  (i % 256) - 128,
  i * 3 - 30000,
  i * 100_003,
  i * 2 ** 40,
  Math.fround(i / 3),
  i / 7,
  `s${i % 13}`,
  `v${i}`,
  new Uint8Array([i & 255, (i >> 8) & 255]),
  -800 + i,
  Date.UTC(1969, 11, 31, 23, 0, 0) + i * 1_234_567,
  Math.round(i * 12.5) / 100,
  [i],
  [`a${i}`, `b${i}`],
  new Map([[`k${i}`, i]])
]

/** Rows with nulls sprinkled in (every column null on some rows). */
const rowsWithNulls = (n: number): Array<Array<unknown>> =>
  Array.from({ length: n }, (_, i) => allRow(i).map((v, c) => ((i + c) % 9 === 0 ? null : v)))

describe("reading and writing every type", () => {
  for (const [name, compression] of Object.entries(Compression).filter(([n]) => n !== "LZO")) {
    vit(`${name}: what the writer writes, the reader reads back (several stripes, nulls)`, () => {
      const rows = rowsWithNulls(2500)
      const bytes = writeOrc(ALL, rows, { compression, stripeRows: 1000, blockSize: 4096 })
      const back = readOrc(bytes)
      expect(back.tail.footer.stripes.length).toBe(3)
      expect(back.rows).toEqual(rows)
    })
  }

  vit("RLE v1 (orc.write.format 0.11) reads back the same", () => {
    const rows = rowsWithNulls(700)
    const bytes = writeOrc(ALL, rows, { format: "0.11", compression: Compression.ZLIB })
    expect(readOrc(bytes).rows).toEqual(rows)
  })

  vit("strings with few distinct values use a sorted dictionary, many distinct values direct", () => {
    const type: OrcType = { kind: "struct", fields: [{ name: "s", type: { kind: "string" } }] }
    const few = Array.from({ length: 100 }, (_, i) => [["z", "ä", "a", "日本"][i % 4]])
    const many = Array.from({ length: 100 }, (_, i) => [`v${i}`])
    expect(readOrc(writeOrc(type, few)).rows).toEqual(few)
    expect(readOrc(writeOrc(type, many)).rows).toEqual(many)
  })

  it.effect("the format maps ORC's types to tributary's and reads every column as nullable", () =>
    Effect.gen(function* () {
      const file = put("all/part-0.orc", writeOrc(ALL, rowsWithNulls(50), { compression: Compression.SNAPPY }))
      const schema = yield* OrcFormat.resolveSchema([path.dirname(file)], undefined, {})
      assert.deepStrictEqual(describeSchema(schema), [
        "b: boolean",
        "t: integer",
        "sm: integer",
        "i: integer",
        "l: long",
        "f: double",
        "d: double",
        "s: string",
        "vc: string",
        "bin: binary",
        "dt: date",
        "ts: timestamp",
        "dec: double",
        "st: struct<x:integer>",
        "arr: array<string>",
        "m: map<string,long>"
      ])
      const rows = yield* OrcFormat.read([path.dirname(file)], schema, {})
      assert.deepStrictEqual(rows, rowsWithNulls(50))
    })
  )
})

describe("Spark's schema rules", () => {
  const one = (name: string, kind: "int" | "bigint" | "string"): OrcType => ({
    kind: "struct",
    fields: [{ name, type: { kind } }]
  })

  vit("mergeSchema unions the files' columns; without it the first file's schema is used", async () => {
    put("merge/a.orc", writeOrc(one("a", "int"), [[1]]))
    put("merge/b.orc", writeOrc({ kind: "struct", fields: [{ name: "c", type: { kind: "double" } }] }, [[2.5]]))
    const merged = await load(OrcFormat, [p("merge")], { mergeSchema: "true" })
    expect(describeSchema(merged.schema)).toEqual(["a: integer", "c: double"])
    expect(merged.rows.map((r) => JSON.stringify(r)).sort()).toEqual(["[1,null]", "[null,2.5]"])
    const first = await load(OrcFormat, [p("merge")])
    expect(describeSchema(first.schema)).toEqual(["a: integer"])
  })

  vit("incompatible types fail mergeSchema with CANNOT_MERGE_SCHEMAS", async () => {
    put("conflict/a.orc", writeOrc(one("a", "int"), [[1]]))
    put("conflict/b.orc", writeOrc(one("a", "string"), [["x"]]))
    const e = await failure(OrcFormat.resolveSchema([p("conflict")], undefined, { mergeSchema: "true" }))
    expect(e.message).toContain("[CANNOT_MERGE_SCHEMAS]")
  })

  vit("columns match case-insensitively, missing ones are null, int widens to long and double", async () => {
    put("match/a.orc", writeOrc(one("Id", "int"), [[7]]))
    const schema = T.struct([T.field("id", T.LongType), T.field("other", T.StringType), T.field("ID2", T.DoubleType)])
    const { rows } = await load(OrcFormat, [p("match")], {}, schema)
    expect(rows).toEqual([[7, null, null]])
    const asDouble = await load(OrcFormat, [p("match")], {}, T.struct([T.field("ID", T.DoubleType)]))
    expect(asDouble.rows).toEqual([[7]])
  })

  vit("a column read as a type it cannot become fails the read, naming the file and the types", async () => {
    const file = put("mismatch/a.orc", writeOrc(one("a", "string"), [["x"]]))
    const e = await failure(OrcFormat.read([p("mismatch")], T.struct([T.field("a", T.IntegerType)]), {}))
    expect(e).toBeInstanceOf(ConnectorError)
    expect(e.message).toContain(`file:${file}`)
    expect(e.message).toContain("from file type string (column `a`) to reader type INT")
  })

  vit("two file columns matching one name in case-insensitive mode fail the read", async () => {
    put(
      "dup/a.orc",
      writeOrc(
        {
          kind: "struct",
          fields: [
            { name: "a", type: { kind: "int" } },
            { name: "A", type: { kind: "int" } }
          ]
        },
        [[1, 2]]
      )
    )
    const e = await failure(OrcFormat.read([p("dup")], T.struct([T.field("a", T.IntegerType)]), {}))
    expect(e.message).toContain('Found duplicate field(s) "a": [a, A] in case-insensitive mode')
  })

  vit("Hive's _colN files are matched by position", async () => {
    put(
      "hive/a.orc",
      writeOrc(
        {
          kind: "struct",
          fields: [
            { name: "_col0", type: { kind: "int" } },
            { name: "_col1", type: { kind: "string" } }
          ]
        },
        [[1, "x"]]
      )
    )
    const { rows } = await load(
      OrcFormat,
      [p("hive")],
      {},
      T.struct([T.field("id", T.IntegerType), T.field("name", T.StringType)])
    )
    expect(rows).toEqual([[1, "x"]])
  })

  vit("partition folders become columns; empty files and files without rows give no rows", async () => {
    put("table/year=2020/a.orc", writeOrc(one("id", "int"), [[1]]))
    put("table/year=2021/a.orc", writeOrc(one("id", "int"), [[2]]))
    put("table/year=2021/empty.orc", writeOrc(one("id", "int"), []))
    put("table/year=2021/zero.orc", new Uint8Array(0))
    const { schema, rows } = await load(OrcFormat, [p("table")])
    expect(describeSchema(schema)).toEqual(["id: integer", "year: integer"])
    expect(rows.map((r) => JSON.stringify(r)).sort()).toEqual(["[1,2020]", "[2,2021]"])
  })

  vit("no files with a schema fail with UNABLE_TO_INFER_SCHEMA", async () => {
    put("nothing/zero.orc", new Uint8Array(0))
    const e = await failure(OrcFormat.resolveSchema([p("nothing")], undefined, {}))
    expect(e.message).toContain("[UNABLE_TO_INFER_SCHEMA] Unable to infer schema for ORC")
  })
})

describe("corrupt files fail with a ConnectorError naming the file, never a crash", () => {
  const good = (): Uint8Array => writeOrc(ALL, rowsWithNulls(300), { compression: Compression.ZLIB, stripeRows: 100 })

  const readFile = (bytes: Uint8Array, name: string) => {
    const file = put(`corrupt/${name}/x.orc`, bytes)
    const schema = T.struct(OrcFormatSchema)
    return { file, effect: OrcFormat.read([path.dirname(file)], schema, {}) }
  }
  const OrcFormatSchema = [
    T.field("b", T.BooleanType),
    T.field("i", T.IntegerType),
    T.field("s", T.StringType),
    T.field("ts", T.TimestampType),
    T.field("m", T.map(T.StringType, T.LongType))
  ]

  vit("a truncated footer", async () => {
    const bytes = good()
    for (const cut of [1, 10, 100, bytes.length - 3]) {
      const { file, effect } = readFile(bytes.subarray(0, bytes.length - cut), `cut-${cut}`)
      const e = await failure(effect)
      expect(e).toBeInstanceOf(ConnectorError)
      expect(e.message).toContain(`file:${file}`)
      expect(e.domain).toBe("user")
    }
  })

  vit("a postscript without the ORC magic", async () => {
    const bytes = good().slice()
    // the magic is the postscript's last field, just before the final length byte
    bytes[bytes.length - 2] = "X".charCodeAt(0)
    const { file, effect } = readFile(bytes, "magic")
    const e = await failure(effect)
    expect(e.message).toContain(`file:${file}`)
    expect(e.message).toMatch(/not a valid ORC file|ORC magic/)
    const schemaError = await failure(OrcFormat.resolveSchema([path.dirname(file)], undefined, {}))
    expect(schemaError.message).toContain(`[CANNOT_READ_FILE_FOOTER] Could not read footer for file: file:${file}`)
  })

  vit("random bit flips: every read either gives rows or a ConnectorError", async () => {
    const bytes = good()
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat({ max: bytes.length * 8 - 1 }), { minLength: 1, maxLength: 4 }),
        async (bits) => {
          const copy = bytes.slice()
          for (const b of bits) copy[b >>> 3] ^= 1 << (b & 7)
          const { effect } = readFile(copy, "flips")
          const exit = await Effect.runPromiseExit(effect)
          if (Exit.isFailure(exit)) {
            const e = exit.cause.reasons[0]
            expect(e._tag).toBe("Fail")
            if (e._tag === "Fail") expect(e.error).toBeInstanceOf(ConnectorError)
          }
        }
      ),
      { numRuns: 300 }
    )
  })
})

describe("random schemas and rows", () => {
  /** A random ORC type with a generator of its values (nulls included). */
  const leaf: fc.Arbitrary<readonly [OrcType, fc.Arbitrary<unknown>]> = fc.constantFrom<
    readonly [OrcType, fc.Arbitrary<unknown>]
  >(
    [{ kind: "boolean" }, fc.boolean()],
    [{ kind: "tinyint" }, fc.integer({ min: -128, max: 127 })],
    [{ kind: "smallint" }, fc.integer({ min: -32768, max: 32767 })],
    [{ kind: "int" }, fc.integer()],
    [{ kind: "bigint" }, fc.oneof(fc.maxSafeInteger(), fc.integer({ min: -5, max: 5 }))],
    [{ kind: "float" }, fc.float({ noNaN: true }).map((x) => Math.fround(x))],
    [{ kind: "double" }, fc.double({ noNaN: true })],
    [{ kind: "string" }, fc.oneof(fc.string(), fc.constantFrom("a", "b"))],
    [{ kind: "binary" }, fc.uint8Array({ maxLength: 8 })],
    [{ kind: "date" }, fc.integer({ min: -100_000, max: 100_000 })],
    [
      { kind: "timestamp" },
      fc
        .integer({ min: -2_000_000_000_000, max: 4_000_000_000_000 })
        .filter((ms) => ms >= 0 || ms <= -1000 || ms % 1000 === 0)
    ]
  )
  const typed: fc.Arbitrary<readonly [OrcType, fc.Arbitrary<unknown>]> = fc.letrec<{
    node: readonly [OrcType, fc.Arbitrary<unknown>]
  }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc
        .array(tie("node"), { minLength: 1, maxLength: 3 })
        .map((children): readonly [OrcType, fc.Arbitrary<unknown>] => [
          { kind: "struct", fields: children.map(([t], i) => ({ name: `f${i}`, type: t })) },
          fc.tuple(...children.map(([, v]) => fc.option(v, { nil: null })))
        ]),
      tie("node").map(([t, v]): readonly [OrcType, fc.Arbitrary<unknown>] => [
        { kind: "array", element: t },
        fc.array(fc.option(v, { nil: null }), { maxLength: 4 })
      ]),
      tie("node").map(([t, v]): readonly [OrcType, fc.Arbitrary<unknown>] => [
        { kind: "map", key: { kind: "string" }, value: t },
        fc
          .uniqueArray(fc.tuple(fc.string({ maxLength: 3 }), fc.option(v, { nil: null })), {
            maxLength: 3,
            selector: ([k]) => k
          })
          .map((es) => new Map(es))
      ])
    )
  })).node

  vit("read(write(rows)) is rows, for every codec, format and stripe size", () => {
    fc.assert(
      fc.property(
        fc
          .array(typed, { minLength: 1, maxLength: 4 })
          .chain((cols) =>
            fc.tuple(
              fc.constant(cols.map(([t]) => t)),
              fc.array(fc.tuple(...cols.map(([, v]) => fc.option(v, { nil: null }))), { maxLength: 60 }),
              fc.constantFrom(
                Compression.NONE,
                Compression.ZLIB,
                Compression.SNAPPY,
                Compression.LZ4,
                Compression.ZSTD
              ),
              fc.constantFrom<"0.11" | "0.12">("0.11", "0.12"),
              fc.integer({ min: 1, max: 70 })
            )
          ),
        ([types, rows, compression, format, stripeRows]) => {
          const root: OrcType = { kind: "struct", fields: types.map((t, i) => ({ name: `c${i}`, type: t })) }
          const bytes = writeOrc(root, rows, { compression, format, stripeRows, blockSize: 1024 })
          expect(readOrc(bytes).rows).toEqual(rows)
        }
      ),
      { numRuns: 200 }
    )
  })
})

describe("writer options", () => {
  it.effect("compression names, Spark's extensions and zstd by default", () =>
    Effect.gen(function* () {
      const schema = T.struct([T.field("a", T.IntegerType)])
      const ext = (o: Record<string, string>) => Effect.map(orcWriterSettings(schema, o), (s) => s.extension)
      assert.strictEqual(yield* ext({}), ".zstd.orc")
      assert.strictEqual(yield* ext({ compression: "SNAPPY" }), ".snappy.orc")
      assert.strictEqual(yield* ext({ "orc.compress": "zlib" }), ".zlib.orc")
      assert.strictEqual(yield* ext({ compression: "none", "orc.compress": "zlib" }), ".orc")
      assert.strictEqual(yield* ext({ compression: "lz4" }), ".lz4.orc")
      const bad = yield* Effect.flip(orcWriterSettings(schema, { compression: "gzip" }))
      assert.include(bad.message, "Codec [gzip] is not available")
      const interval = yield* Effect.flip(OrcWriterFormat.prepare(T.struct([T.field("i", T.CalendarIntervalType)]), {}))
      assert.include(interval.message, "[UNSUPPORTED_DATA_TYPE_FOR_DATASOURCE] The ORC datasource doesn't support")
    })
  )
})

describe("streaming", () => {
  const Event = Schema.Struct({ id: Schema.Int, name: Schema.NullOr(Schema.String) })

  it.effect("the file sink writes Spark-named ORC files that the batch and streaming readers read back", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = p("sink-out")
      const chk = p("sink-chk")
      const input = yield* MemoryStream.make(Event)
      const q = yield* input
        .toDF()
        .writeStream.format("orc")
        .option("compression", "snappy")
        .option("checkpointLocation", chk)
        .start(out)
      yield* input.addData([
        { id: 1, name: "a" },
        { id: 2, name: null }
      ])
      yield* q.processAllAvailable()
      yield* input.addData([{ id: 3, name: "c" }])
      yield* q.processAllAvailable()
      yield* q.stop()
      const files = fs.readdirSync(out).filter((f) => f.endsWith(".orc"))
      assert.strictEqual(files.length, 2)
      for (const f of files) assert.match(f, /^part-00000-[0-9a-f-]{36}-c000\.snappy\.orc$/)
      const batch = yield* spark.read.orc(out)
      const rows = yield* batch.orderBy("id").collect()
      assert.deepStrictEqual(rows, [
        { id: 1, name: "a" },
        { id: 2, name: null },
        { id: 3, name: "c" }
      ])
      const stream = spark.readStream.schema("id INT, name STRING").orc(out)
      const q2 = yield* stream.writeStream
        .format("memory")
        .queryName("orc_stream")
        .option("checkpointLocation", p("src-chk"))
        .start()
      yield* q2.processAllAvailable()
      yield* q2.stop()
      const got = yield* spark.table("orc_stream").orderBy("id").collect()
      assert.deepStrictEqual(got, rows)
    }).pipe(Effect.provide(Session.layer()))
  )
})
