/**
 * The `avro` format (Spark's `spark-avro`, cases from `AvroSuite`): Spark's type mapping in both
 * directions, the codecs, the options, the streaming source and sink, and `from_avro` /
 * `to_avro` with their modes.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { blockCodecs } from "../../../../connectors/files/avro/AvroCodecs.ts"
import { decodeContainer, encodeContainer, readHeader } from "../../../../connectors/files/avro/AvroContainer.ts"
import { rebaseJulianToGregorianDays } from "../../../../connectors/files/avro/AvroDeserializer.ts"
import { parseSchema, toAvroSchema, toSqlType } from "../../../../connectors/files/avro/AvroSchema.ts"
import * as T from "../../../../core/DataType.ts"
import { F, MemoryStream, Session } from "../../../../mod.ts"
import { listTree, tempDir } from "../streamHelpers.ts"

const codecs = blockCodecs({ deflate: -1, zstandard: 3 })

/** Writes an Avro container file with `schema` and `records` (avsc values) to `file`. */
const writeAvro = (file: string, schema: unknown, records: ReadonlyArray<unknown>, codec = "null", meta = {}) =>
  Effect.promise(async () => {
    const bytes = await encodeContainer(parseSchema(schema), JSON.stringify(schema), records, codec, codecs, meta)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, bytes)
  })

const record = (fields: ReadonlyArray<readonly [string, unknown]>) => ({
  type: "record",
  name: "topLevelRecord",
  fields: fields.map(([name, type]) => ({ name, type }))
})

describe("Avro schemas (Spark's SchemaConverters)", () => {
  it("maps Avro types to Spark types as Spark does, within tributary's types", () => {
    const schema = record([
      ["b", "boolean"],
      ["i", "int"],
      ["l", "long"],
      ["f", "float"],
      ["d", "double"],
      ["s", "string"],
      ["by", "bytes"],
      ["fx", { type: "fixed", name: "F4", size: 4 }],
      ["e", { type: "enum", name: "E", symbols: ["A", "B"] }],
      ["day", { type: "int", logicalType: "date" }],
      ["tsm", { type: "long", logicalType: "timestamp-millis" }],
      ["tsu", { type: "long", logicalType: "timestamp-micros" }],
      ["lts", { type: "long", logicalType: "local-timestamp-micros" }],
      ["dec", { type: "bytes", logicalType: "decimal", precision: 10, scale: 2 }],
      ["decf", { type: "fixed", name: "D8", size: 8, logicalType: "decimal", precision: 18, scale: 3 }],
      ["opt", ["null", "string"]],
      ["opt2", ["string", "null"]],
      ["il", ["int", "long"]],
      ["fd", ["float", "double"]],
      ["u", ["int", "string", "null"]],
      ["arr", { type: "array", items: ["null", "int"] }],
      ["m", { type: "map", values: "long" }],
      ["r", { type: "record", name: "Inner", fields: [{ name: "x", type: "int" }] }]
    ])
    const st = toSqlType(parseSchema(schema)).dataType as T.StructType
    const got = st.fields.map((f) => `${f.name}:${T.simpleString(f.dataType)}:${f.nullable}`)
    assert.deepStrictEqual(got, [
      "b:boolean:false",
      "i:int:false",
      "l:bigint:false",
      "f:double:false",
      "d:double:false",
      "s:string:false",
      "by:binary:false",
      "fx:binary:false",
      "e:string:false",
      "day:date:false",
      "tsm:timestamp:false",
      "tsu:timestamp:false",
      "lts:timestamp:false",
      "dec:double:false",
      "decf:double:false",
      "opt:string:true",
      "opt2:string:true",
      "il:bigint:false",
      "fd:double:false",
      "u:struct<member0:int,member1:string>:true",
      "arr:array<int>:false",
      "m:map<string,bigint>:false",
      "r:struct<x:int>:false"
    ])
    const arr = st.fields.find((f) => f.name === "arr")!.dataType as T.ArrayType
    assert.isTrue(arr.containsNull)
  })

  it("an invalid decimal falls back to its underlying type (Avro's rule)", () => {
    const t = parseSchema({ type: "fixed", name: "F1", size: 1, logicalType: "decimal", precision: 5, scale: 2 })
    assert.strictEqual(T.simpleString(toSqlType(t).dataType), "binary")
  })

  it("refuses recursive records as Spark does", () => {
    const schema = { type: "record", name: "Node", fields: [{ name: "next", type: ["null", "Node"] }] }
    assert.throws(() => toSqlType(parseSchema(schema)), /Found recursive reference in Avro schema/)
  })

  it("writes Spark's schema for Spark types (toAvroType)", () => {
    const st = T.struct([
      T.field("a", T.IntegerType, false),
      T.field("ts", T.TimestampType, true),
      T.field("d", T.DateType, true),
      T.field("n", T.struct([T.field("x", T.StringType, true)]), true),
      T.field("m", T.map(T.StringType, T.BinaryType, false), false)
    ])
    assert.deepStrictEqual(toAvroSchema(st, false, "topLevelRecord", ""), {
      type: "record",
      name: "topLevelRecord",
      fields: [
        { name: "a", type: "int" },
        { name: "ts", type: [{ type: "long", logicalType: "timestamp-micros" }, "null"] },
        { name: "d", type: [{ type: "int", logicalType: "date" }, "null"] },
        {
          name: "n",
          type: [{ type: "record", name: "n", namespace: "topLevelRecord", fields: [{ name: "x", type: ["string", "null"] }] }, "null"]
        },
        { name: "m", type: { type: "map", values: "bytes" } }
      ]
    })
  })

  it("rebases Julian dates as Spark's RebaseDateTime does", () => {
    // the day Spark 2 wrote for the Julian date 1000-01-01 is the proleptic Gregorian 1000-01-06:
    // rebased, it reads as 1000-01-01 again
    const day = (y: number, m: number, d: number) => Math.round(Date.UTC(y, m, d) / 86_400_000)
    assert.strictEqual(rebaseJulianToGregorianDays(day(1000, 0, 6)), day(1000, 0, 1))
    assert.strictEqual(rebaseJulianToGregorianDays(day(1582, 9, 15)), day(1582, 9, 15))
    assert.strictEqual(rebaseJulianToGregorianDays(0), 0)
  })
})

describe("the avro format", () => {
  const Row = Schema.Struct({
    id: Schema.Int,
    name: Schema.NullOr(Schema.String),
    ts: Schema.NullOr(Schema.Date),
    tags: Schema.Array(Schema.String),
    ok: Schema.Boolean,
    score: Schema.Number
  })
  const rows = [
    { id: 1, name: "a", ts: new Date(Date.UTC(2024, 4, 1, 12)), tags: ["x", "y"], ok: true, score: 1.5 },
    { id: 2, name: null, ts: null, tags: [], ok: false, score: -0.25 }
  ]

  for (const compression of ["uncompressed", "deflate", "snappy", "zstandard"]) {
    it.effect(`df.write.avro with ${compression} reads back the same rows`, () =>
      Effect.gen(function* () {
        const spark = yield* Session
        const out = path.join(yield* tempDir(), "o")
        yield* spark.createDataFrame(rows, Row).write.option("compression", compression).avro(out)
        const file = listTree(out).find((p) => p.endsWith(".avro"))!
        const ext = compression === "uncompressed" ? ".avro" : `.${compression}.avro`
        assert.match(file, new RegExp(`^part-00000-[0-9a-f-]{36}-c000${ext.replace(/\./g, "\\.")}$`))
        const header = readHeader(path.join(out, file))
        assert.strictEqual(header.meta["avro.codec"], compression === "uncompressed" ? "null" : compression)
        assert.strictEqual(header.meta["org.apache.spark.version"], "4.2.0")
        const back = yield* (yield* spark.read.format("avro").load(out)).orderBy("id").collect()
        assert.deepStrictEqual(back, rows)
      }).pipe(Effect.provide(Session.layer()))
    )
  }

  it.effect("snappy is the default codec (spark.sql.avro.compression.codec), and bad codecs are refused", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const root = yield* tempDir()
      const df = spark.createDataFrame(rows, Row)
      yield* df.write.avro(path.join(root, "a"))
      const file = listTree(path.join(root, "a")).find((p) => p.endsWith(".avro"))!
      assert.strictEqual(readHeader(path.join(root, "a", file)).meta["avro.codec"], "snappy")
      const bad = yield* Effect.flip(df.write.option("compression", "lz4").avro(path.join(root, "b")))
      assert.strictEqual(bad.message, "[CODEC_SHORT_NAME_NOT_FOUND] Cannot find a short name for the codec lz4.")
      const bz = yield* Effect.flip(df.write.option("compression", "bzip2").avro(path.join(root, "c")))
      assert.include(bz.message, "tributary writes uncompressed, deflate, snappy or zstandard")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("reads every Avro type Spark reads, with logical types, unions, enums and fixed", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const schema = record([
        ["i", "int"],
        ["l", "long"],
        ["f", "float"],
        ["by", "bytes"],
        ["fx", { type: "fixed", name: "F2", size: 2 }],
        ["e", { type: "enum", name: "E", symbols: ["A", "B"] }],
        ["day", { type: "int", logicalType: "date" }],
        ["tsm", { type: "long", logicalType: "timestamp-millis" }],
        ["tsu", { type: "long", logicalType: "timestamp-micros" }],
        ["lts", { type: "long", logicalType: "local-timestamp-millis" }],
        ["dec", { type: "bytes", logicalType: "decimal", precision: 10, scale: 2 }],
        ["decf", { type: "fixed", name: "D4", size: 4, logicalType: "decimal", precision: 9, scale: 3 }],
        ["opt", ["null", "string"]],
        ["il", ["int", "long"]],
        ["u", ["int", "string"]],
        ["m", { type: "map", values: ["null", "long"] }],
        ["r", { type: "record", name: "Inner", fields: [{ name: "x", type: "int" }] }]
      ])
      yield* writeAvro(path.join(dir, "a.avro"), schema, [
        {
          i: 7,
          l: 2 ** 60,
          f: 0.5,
          by: Buffer.from([1, 2]),
          fx: Buffer.from([3, 4]),
          e: "B",
          day: 19844,
          tsm: 1714564800123,
          tsu: 1714564800123456,
          lts: 5,
          dec: Buffer.from([0xfb, 0x2e]), // -1234 -> -12.34
          decf: Buffer.from([0, 0, 0x30, 0x39]), // 12345 -> 12.345
          opt: { string: "s" },
          il: { int: 3 },
          u: { string: "t" },
          m: { k: { long: 1 }, n: null },
          r: { x: 1 }
        }
      ])
      const df = yield* spark.read.format("avro").load(dir)
      const [row] = yield* df.collect()
      assert.deepStrictEqual(row, {
        i: 7,
        // beyond 2^53: a bigint, never rounded
        l: 2n ** 60n,
        f: 0.5,
        by: new Uint8Array([1, 2]),
        fx: new Uint8Array([3, 4]),
        e: "B",
        day: new Date(Date.UTC(2024, 4, 1)),
        tsm: new Date(1714564800123),
        tsu: new Date(1714564800123),
        lts: new Date(5),
        dec: -12.34,
        decf: 12.345,
        opt: "s",
        il: 3,
        u: { member0: null, member1: "t" },
        m: new Map<string, unknown>([
          ["k", 1],
          ["n", null]
        ]),
        r: { x: 1 }
      })
      // microseconds are kept inside: the value is 123456 µs past the second
      const micros = yield* df.select(F.col("tsu").cast("double").as("s")).collect()
      assert.closeTo(micros[0].s as number, 1714564800.123456, 1e-6)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("avroSchema reads with an evolved schema (a new field with its default) and writes enums", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      yield* writeAvro(path.join(dir, "a.avro"), record([["a", "int"]]), [{ a: 1 }, { a: 2 }])
      const evolved = JSON.stringify({
        type: "record",
        name: "topLevelRecord",
        fields: [
          { name: "a", type: "long" },
          { name: "b", type: "string", default: "none" }
        ]
      })
      const df = yield* spark.read.format("avro").option("avroSchema", evolved).load(dir)
      assert.deepStrictEqual(df.columns, ["a", "b"])
      assert.deepStrictEqual(yield* df.orderBy("a").collect(), [
        { a: 1, b: "none" },
        { a: 2, b: "none" }
      ])
      const out = path.join(dir, "enum")
      const enumSchema = JSON.stringify(record([["s", { type: "enum", name: "S", symbols: ["X", "Y"] }]]))
      const strings = spark.createDataFrame([{ s: "X" }], Schema.Struct({ s: Schema.String }))
      yield* strings.write.option("avroSchema", enumSchema).avro(out)
      const file = listTree(out).find((p) => p.endsWith(".avro"))!
      assert.deepStrictEqual(readHeader(path.join(out, file)).writerSchema, JSON.parse(enumSchema))
      assert.deepStrictEqual(yield* (yield* spark.read.format("avro").load(out)).collect(), [{ s: "X" }])
      const bad = yield* Effect.exit(
        spark.createDataFrame([{ s: "Z" }], Schema.Struct({ s: Schema.String })).write.option("avroSchema", enumSchema).avro(path.join(dir, "bad"))
      )
      assert.isTrue(Exit.isFailure(bad))
      assert.include(String(Exit.isFailure(bad) ? bad.cause : ""), `"Z" cannot be written since it's not defined in enum "X", "Y"`)
      assert.isFalse(fs.existsSync(path.join(dir, "bad")))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("ignoreExtension false skips files without .avro; positionalFieldMatching matches by position", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      yield* writeAvro(path.join(dir, "a.avro"), record([["a", "int"]]), [{ a: 1 }])
      yield* writeAvro(path.join(dir, "b.data"), record([["a", "int"]]), [{ a: 2 }])
      assert.strictEqual(yield* Effect.flatMap(spark.read.format("avro").load(dir), (d) => d.count()), 2)
      const only = yield* spark.read.format("avro").option("ignoreExtension", false).load(dir)
      assert.deepStrictEqual(yield* only.collect(), [{ a: 1 }])
      const none = path.join(dir, "none")
      yield* writeAvro(path.join(none, "b.data"), record([["a", "int"]]), [{ a: 2 }])
      const e = yield* Effect.flip(spark.read.format("avro").option("ignoreExtension", false).load(none))
      assert.strictEqual(e.message, "No Avro files found. If files don't have .avro extension, set ignoreExtension to true")
      const positional = yield* spark.read
        .format("avro")
        .schema("z INT")
        .option("positionalFieldMatching", true)
        .load(path.join(dir, "a.avro"))
      assert.deepStrictEqual(yield* positional.collect(), [{ z: 1 }])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a user schema that does not match the file fails with Spark's message", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      yield* writeAvro(path.join(dir, "a.avro"), record([["a", "string"]]), [{ a: "x" }])
      const df = yield* spark.read.format("avro").schema("a INT").load(dir)
      const e = yield* Effect.flip(df.collect())
      assert.include(e.message, "Cannot convert Avro field 'a' to SQL field 'a' because schema is incompatible")
      const dates = yield* spark.read.format("avro").schema("a DATE").load(dir)
      assert.include((yield* Effect.flip(dates.collect())).message, "schema is incompatible")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("ancient dates fail by default in files no Spark 3 wrote, and read with CORRECTED or LEGACY", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const day = Math.round(Date.UTC(1000, 0, 1) / 86_400_000)
      yield* writeAvro(path.join(dir, "a.avro"), record([["d", { type: "int", logicalType: "date" }]]), [{ d: day }])
      const e = yield* Effect.flip(Effect.flatMap(spark.read.format("avro").load(dir), (d) => d.collect()))
      assert.include(e.message, "INCONSISTENT_BEHAVIOR_CROSS_VERSION.READ_ANCIENT_DATETIME")
      const corrected = yield* Effect.flatMap(
        spark.read.format("avro").option("datetimeRebaseMode", "CORRECTED").load(dir),
        (d) => d.collect()
      )
      assert.deepStrictEqual(corrected, [{ d: new Date(Date.UTC(1000, 0, 1)) }])
      const legacy = yield* Effect.flatMap(spark.read.format("avro").option("datetimeRebaseMode", "LEGACY").load(dir), (d) =>
        d.collect()
      )
      assert.deepStrictEqual(legacy, [{ d: new Date(Date.UTC(999, 11, 27)) }])
      // a file Spark 3+ wrote is read as written
      yield* writeAvro(path.join(dir, "s", "a.avro"), record([["d", { type: "int", logicalType: "date" }]]), [{ d: day }], "null", {
        "org.apache.spark.version": "3.5.0"
      })
      const spark3 = yield* Effect.flatMap(spark.read.format("avro").load(path.join(dir, "s")), (d) => d.collect())
      assert.deepStrictEqual(spark3, [{ d: new Date(Date.UTC(1000, 0, 1)) }])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("writes refuse column names Avro cannot hold and null into a non-null Avro field", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const spaced = spark.createDataFrame([{ "a b": 1 }], Schema.Struct({ "a b": Schema.Int }))
      const e = yield* Effect.flip(spaced.write.avro(path.join(dir, "a")))
      assert.strictEqual(e._tag, "AnalysisError")
      assert.include(e.message, "INVALID_COLUMN_NAME_AS_PATH")
      const strict = JSON.stringify(record([["s", "string"]]))
      const nulls = spark.createDataFrame([{ s: null }], Schema.Struct({ s: Schema.NullOr(Schema.String) }))
      const n = yield* Effect.flip(nulls.write.option("avroSchema", strict).avro(path.join(dir, "b")))
      assert.include(n.message, "[AVRO_CANNOT_WRITE_NULL_FIELD] Cannot write null value for field `s`")
      assert.isFalse(fs.existsSync(path.join(dir, "b")))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a corrupt file fails the read with a ConnectorError naming it", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      yield* writeAvro(path.join(dir, "a.avro"), record([["a", "int"]]), Array.from({ length: 100 }, (_, a) => ({ a })), "snappy")
      const df = yield* spark.read.format("avro").load(dir)
      const file = path.join(dir, "a.avro")
      const bytes = fs.readFileSync(file)
      bytes[bytes.length - 20] ^= 0xff
      fs.writeFileSync(file, bytes)
      const e = yield* Effect.flip(df.collect())
      assert.strictEqual(e._tag, "ConnectorError")
      assert.include(e.message, `Encountered error while reading file file:${file}`)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("streams: the file source reads new Avro files and the file sink writes Avro", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const dir = yield* tempDir()
      const src = path.join(dir, "in")
      const sink = path.join(dir, "out")
      fs.mkdirSync(src)
      yield* writeAvro(path.join(src, "a.avro"), record([["v", "long"]]), [{ v: 1 }, { v: 2 }])
      const q = yield* spark.readStream
        .format("avro")
        .schema("v BIGINT")
        .load(src)
        .writeStream.format("avro")
        .option("checkpointLocation", path.join(dir, "chk"))
        .start(sink)
      yield* q.processAllAvailable()
      yield* writeAvro(path.join(src, "b.avro"), record([["v", "long"]]), [{ v: 3 }])
      yield* q.processAllAvailable()
      yield* q.stop()
      const back = yield* Effect.flatMap(spark.read.format("avro").load(sink), (d) => d.orderBy("v").collect())
      assert.deepStrictEqual(back, [{ v: 1 }, { v: 2 }, { v: 3 }])
      assert.isTrue(listTree(sink).some((p) => /^part-00000-.*-c000\.snappy\.avro$/.test(p)))
    }).pipe(Effect.provide(Session.layer()))
  )
})

describe("from_avro and to_avro", () => {
  const userSchema = JSON.stringify({
    type: "record",
    name: "User",
    fields: [
      { name: "name", type: "string" },
      { name: "age", type: ["null", "int"] }
    ]
  })

  it.effect("to_avro then from_avro gives the struct back; a Kafka-style value column decodes", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame(
        [{ name: "ann", age: 31 }, { name: "bob", age: null }],
        Schema.Struct({ name: Schema.String, age: Schema.NullOr(Schema.Int) })
      )
      const encoded = df.select(F.to_avro(F.struct("name", F.col("age").cast("int").as("age")), userSchema).as("value"))
      assert.deepStrictEqual(encoded.columns, ["value"])
      const decoded = encoded.select(F.from_avro("value", userSchema).as("user"))
      assert.deepStrictEqual(yield* decoded.collect(), [
        { user: { name: "ann", age: 31 } },
        { user: { name: "bob", age: null } }
      ])
      const named = encoded.select(F.from_avro("value", userSchema))
      assert.deepStrictEqual(named.columns, ["from_avro(value)"])
      // the bytes are Avro's binary encoding of the datum (no header)
      const [first] = yield* encoded.collect()
      const direct = parseSchema(userSchema).decode(Buffer.from(first.value as Uint8Array), 0)
      assert.deepStrictEqual(JSON.parse(JSON.stringify(direct.value)), { name: "ann", age: { int: 31 } })
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("FAILFAST (the default) fails the query on a malformed value; PERMISSIVE reads it as nulls", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame([{ value: new Uint8Array([0xff, 0xff, 0xff]) }], Schema.Struct({ value: Schema.Uint8Array }))
      const e = yield* Effect.flip(df.select(F.from_avro("value", userSchema).as("u")).collect())
      assert.strictEqual(e._tag, "ConnectorError")
      assert.strictEqual(
        e.message,
        "Malformed records are detected in record parsing. Current parse Mode: FAILFAST. To process malformed records as null result, try setting the option 'mode' as 'PERMISSIVE'."
      )
      const lenient = yield* df.select(F.from_avro("value", userSchema, { mode: "PERMISSIVE" }).as("u")).collect()
      assert.deepStrictEqual(lenient, [{ u: { name: null, age: null } }])
      const drop = yield* Effect.flip(df.select(F.from_avro("value", userSchema, { mode: "DROPMALFORMED" })).collect())
      assert.strictEqual(
        drop.message,
        "[PARSE_MODE_UNSUPPORTED] The function `from_avro` doesn't support the DROPMALFORMED mode. Acceptable modes are PERMISSIVE and FAILFAST."
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("to_avro without a schema uses Spark's: a nullable column is the union [type, null]", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const df = spark.createDataFrame([{ n: 5 }], Schema.Struct({ n: Schema.NullOr(Schema.Int) }))
      const [row] = yield* df.select(F.to_avro("n").as("v")).collect()
      // union index 0 (zig-zag 0x00), then the long 5 (zig-zag 0x0a)
      assert.deepStrictEqual(Array.from(row.v as Uint8Array), [0x00, 0x0a])
      const back = yield* df
        .select(F.to_avro("n").as("v"))
        .select(F.from_avro("v", JSON.stringify(["long", "null"])).as("n"))
        .collect()
      assert.deepStrictEqual(back, [{ n: 5 }])
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a streaming query over Avro values fails with the typed error in FAILFAST mode", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ value: Schema.Uint8Array }))
      const q = yield* input
        .toDF()
        .select(F.from_avro("value", userSchema).as("u"))
        .writeStream.format("memory")
        .queryName("avro_values")
        .start()
      yield* input.addData([{ value: new Uint8Array([0xff]) }])
      const e = yield* Effect.flip(q.processAllAvailable())
      assert.include(e.message, "Malformed records are detected in record parsing")
    }).pipe(Effect.provide(Session.layer()))
  )

  it("container decoding rejects a file that is not Avro", async () => {
    await assertRejects(decodeContainer(new Uint8Array([1, 2, 3, 4]), codecs, undefined))
  })
})

const assertRejects = async (p: Promise<unknown>): Promise<void> => {
  let failed = false
  await p.catch(() => {
    failed = true
  })
  assert.isTrue(failed)
}
