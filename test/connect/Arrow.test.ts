/**
 * The Arrow codec (connect/Arrow.ts): round trips through `encodeRows`/`decodeBatches`, Arrow
 * data as Spark writes it (micros, Decimal128, Int8/Int16/Float32, durations), and the real
 * Spark Connect server: query results of every Spark type decoded exactly, and `LocalRelation`s
 * built with `encodeRows` + `toDDL` read back unchanged and interpreted by Spark as meant.
 */
import * as arrow from "apache-arrow"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { type Decoded, decodeBatches, encodeRows } from "../../connect/Arrow.ts"
import { fromSparkSchema, toDDL } from "../../connect/Types.ts"
import * as T from "../../core/DataType.ts"
import type { InternalRow } from "../../core/Row.ts"
import { execute, localRelation, rawClient, selectExpr, sparkRemote, sqlRelation } from "./rawClient.ts"

const ok = <A, E>(r: Result.Result<A, E>): A => {
  if (Result.isFailure(r)) throw new Error(`expected success, got ${String(r.failure)}`)
  return r.success
}

const roundTrip = (schema: T.StructType, rows: ReadonlyArray<InternalRow>): Decoded =>
  ok(decodeBatches([encodeRows(schema, rows)], undefined))

/** One Arrow IPC stream holding a single column of the given Data. */
const ipcOf = (name: string, data: arrow.Data, nullable = true): Uint8Array => {
  const field = new arrow.Field(name, data.type, nullable)
  const schema = new arrow.Schema([field])
  const batch = new arrow.RecordBatch(
    schema,
    arrow.makeData({ type: new arrow.Struct([field]), length: data.length, nullCount: 0, children: [data] })
  )
  return arrow.tableToIPC(new arrow.Table(schema, [batch]), "stream")
}

const int64s = (values: ReadonlyArray<bigint>): BigInt64Array => BigInt64Array.from(values)

const ALL = T.struct([
  T.field("i", T.IntegerType),
  T.field("l", T.LongType, false),
  T.field("d", T.DoubleType),
  T.field("s", T.StringType),
  T.field("b", T.BinaryType),
  T.field("bo", T.BooleanType),
  T.field("ts", T.TimestampType),
  T.field("dt", T.DateType),
  T.field("iv", T.CalendarIntervalType),
  T.field("n", T.NullType),
  T.field("st", T.struct([T.field("x", T.LongType, false), T.field("my y", T.array(T.StringType))])),
  T.field("ar", T.array(T.array(T.IntegerType, false))),
  T.field("m", T.map(T.StringType, T.struct([T.field("a", T.DateType)]))),
  T.field("mi", T.map(T.IntegerType, T.DoubleType, false), false)
])

const ALL_ROWS: ReadonlyArray<InternalRow> = [
  [
    1,
    42,
    1.5,
    "hé ✓",
    new Uint8Array([1, 2, 255]),
    true,
    -1,
    -3653,
    { months: 1, days: 2, micros: 3 },
    null,
    [5, ["a", null, "ü"]],
    [[1], null, []],
    new Map<unknown, unknown>([
      ["k", [19000]],
      ["z", null],
      ["y", [null]]
    ]),
    new Map([[1, 0.5]])
  ],
  [null, 9007199254740993n, null, null, null, null, null, null, null, null, null, [], null, new Map()],
  [
    -7,
    -9223372036854775808n,
    -0.25,
    "",
    new Uint8Array([]),
    false,
    253402300799999,
    2932896,
    { months: -1, days: -2, micros: -3000 },
    null,
    [-9007199254740991, []],
    [[7, 3]],
    new Map(),
    new Map([
      [-1, 1e308],
      [2, Number.NaN]
    ])
  ]
]

describe("encodeRows / decodeBatches round trip", () => {
  it("keeps every type, nulls and nesting, and reads the schema back from the Arrow schema", () => {
    const d = roundTrip(ALL, ALL_ROWS)
    expect(d.schema).toEqual(ALL)
    expect(d.rows).toEqual(ALL_ROWS)
  })

  it("keeps longs as numbers within ±(2^53−1) and as bigints beyond", () => {
    const schema = T.struct([T.field("l", T.LongType)])
    const values = [
      0,
      -1,
      2 ** 32,
      -(2 ** 32),
      2 ** 32 - 1,
      Number.MAX_SAFE_INTEGER,
      Number.MIN_SAFE_INTEGER,
      2n ** 53n,
      -(2n ** 53n),
      2n ** 63n - 1n,
      -(2n ** 63n),
      123456789012345678n
    ]
    const d = roundTrip(
      schema,
      values.map((v) => [v])
    )
    expect(d.rows.map((r) => r[0])).toEqual(values)
    // A number beyond 2^53 (already rounded by JS) comes back as the exact bigint of that number.
    expect(roundTrip(schema, [[2 ** 60]]).rows).toEqual([[2n ** 60n]])
  })

  it("keeps timestamps (ms) before 1970 and at the ends of Spark's range, and dates before 1970", () => {
    const schema = T.struct([T.field("t", T.TimestampType), T.field("d", T.DateType)])
    const rows = [
      [-1, -1],
      [-86_400_001, -719162],
      [-62135596800000, -719162], // 0001-01-01
      [253402300799999, 2932896], // 9999-12-31 23:59:59.999
      [0, 0],
      [1_700_000_000_123, 19675]
    ]
    expect(roundTrip(schema, rows).rows).toEqual(rows)
  })

  it("keeps strings mixing ASCII and non-ASCII, empty strings and nulls", () => {
    const schema = T.struct([T.field("s", T.StringType)])
    const ascii = [["abc"], [""], [null], ["xyz"]]
    const mixed = [["abc"], ["日本語"], [null], [""], ["😀 emoji"], ["z"]]
    expect(roundTrip(schema, ascii).rows).toEqual(ascii)
    expect(roundTrip(schema, mixed).rows).toEqual(mixed)
  })

  it("writes the Arrow types Spark's ArrowUtils expects", () => {
    const t = arrow.tableFromIPC(encodeRows(ALL, ALL_ROWS))
    expect(t.schema.fields.map((f) => `${f.name}:${String(f.type)}:${f.nullable}`)).toEqual([
      "i:Int32:true",
      "l:Int64:false",
      "d:Float64:true",
      "s:Utf8:true",
      "b:Binary:true",
      "bo:Bool:true",
      "ts:Timestamp<MICROSECOND, UTC>:true",
      "dt:Date32<DAY>:true",
      "iv:Interval<MONTH_DAY_NANO>:true",
      "n:Null:true",
      "st:Struct<{x:Int64, my y:List<Utf8>}>:true",
      "ar:List<List<Int32>>:true",
      "m:Map<{key:Utf8, value:Struct<{a:Date32<DAY>}>}>:true",
      "mi:Map<{key:Int32, value:Float64}>:false"
    ])
    // Timestamps travel as micros.
    expect(t.getChild("ts")?.data[0].values[0]).toBe(-1000n)
  })

  it("encodes zero rows as a schema and an empty batch", () => {
    const d = roundTrip(ALL, [])
    expect(d.schema).toEqual(ALL)
    expect(d.rows).toEqual([])
  })
})

describe("decodeBatches on Arrow data as Spark writes it", () => {
  it("floor-divides negative micros with sub-millisecond parts", () => {
    const micros = [
      -1n,
      -999n,
      -1000n,
      -1001n,
      1999n,
      -62135596800000000n, // 0001-01-01, beyond 2^53 micros
      -62135596800000001n,
      253402300799999999n // 9999-12-31 23:59:59.999999
    ]
    const data = arrow.makeData({
      type: new arrow.TimestampMicrosecond("America/Los_Angeles"),
      length: micros.length,
      data: int64s(micros)
    })
    const d = ok(decodeBatches([ipcOf("t", data)], undefined))
    expect(d.schema).toEqual(T.struct([T.field("t", T.TimestampType)]))
    expect(d.rows.map((r) => r[0])).toEqual([-1, -1, -1, -2, 1, -62135596800000, -62135596800001, 253402300799999])
  })

  it("reads Decimal128 as the nearest double, at every scale and magnitude", () => {
    const unscaled = [150n, -150n, 0n, 10n ** 30n, -(10n ** 37n) - 7n, 12345678901234567890123n, -1n, 2n ** 60n]
    const words = new Uint32Array(unscaled.length * 4)
    unscaled.forEach((v, i) => {
      const u = BigInt.asUintN(128, v)
      for (let k = 0; k < 4; k++) words[4 * i + k] = Number((u >> BigInt(32 * k)) & 0xffffffffn)
    })
    const asDouble = (v: bigint, scale: number): number => {
      const neg = v < 0n
      const digits = (neg ? -v : v).toString().padStart(scale + 1, "0")
      return Number(`${neg ? "-" : ""}${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`)
    }
    for (const scale of [0, 2, 18, 30, 38]) {
      const data = arrow.makeData({ type: new arrow.Decimal(scale, 38, 128), length: unscaled.length, data: words })
      const d = ok(decodeBatches([ipcOf("x", data)], undefined))
      expect(d.rows.map((r) => r[0])).toEqual(unscaled.map((v) => asDouble(v, scale)))
    }
    const d2 = ok(
      decodeBatches(
        [ipcOf("x", arrow.makeData({ type: new arrow.Decimal(2, 10, 128), length: 2, data: words }))],
        undefined
      )
    )
    expect(d2.rows).toEqual([[1.5], [-1.5]])
  })

  it("widens Int8, Int16 and Float32, and reads durations and year-month intervals", () => {
    const i8 = arrow.makeData({ type: new arrow.Int8(), length: 2, data: Int8Array.from([-128, 127]) })
    const i16 = arrow.makeData({ type: new arrow.Int16(), length: 2, data: Int16Array.from([-32768, 5]) })
    const f32 = arrow.makeData({ type: new arrow.Float32(), length: 2, data: Float32Array.from([1.1, -0]) })
    const dur = arrow.makeData({
      type: new arrow.DurationMicrosecond(),
      length: 4,
      data: int64s([-90_000_000_001n, 9223372036854775807n, 8639999999999999n, -8639999999999999n])
    })
    const ym = arrow.makeData({ type: new arrow.IntervalYearMonth(), length: 2, data: Int32Array.from([38, -1]) })
    const rows = [i8, i16, f32, dur, ym].map((data, k) => ok(decodeBatches([ipcOf(`c${k}`, data)], undefined)))
    expect(rows.map((d) => d.schema.fields[0].dataType)).toEqual([
      T.IntegerType,
      T.IntegerType,
      T.DoubleType,
      T.CalendarIntervalType,
      T.CalendarIntervalType
    ])
    expect(rows.map((d) => d.rows.map((r) => r[0]))).toEqual([
      [-128, 127],
      [-32768, 5],
      [Math.fround(1.1), -0],
      [
        { months: 0, days: -1, micros: -3_600_000_001 },
        { months: 0, days: 106751991, micros: 14_454_775_807 },
        { months: 0, days: 99999, micros: 86_399_999_999 },
        { months: 0, days: -99999, micros: -86_399_999_999 }
      ],
      [
        { months: 38, days: 0, micros: 0 },
        { months: -1, days: 0, micros: 0 }
      ]
    ])
  })

  it("concatenates the rows of several chunks in order", () => {
    const schema = T.struct([T.field("id", T.LongType), T.field("s", T.StringType)])
    const a = encodeRows(schema, [
      [1, "a"],
      [2, "b"]
    ])
    const b = encodeRows(schema, [[3, null]])
    const d = ok(decodeBatches([a, encodeRows(schema, []), b], schema))
    expect(d.schema).toBe(schema)
    expect(d.rows).toEqual([
      [1, "a"],
      [2, "b"],
      [3, null]
    ])
  })

  it("gives zero rows with the given schema when there are no chunks", () => {
    const schema = T.struct([T.field("id", T.LongType)])
    expect(ok(decodeBatches([], schema))).toEqual({ schema, rows: [] })
    expect(ok(decodeBatches([], undefined))).toEqual({ schema: T.struct([]), rows: [] })
  })

  it("fails with a ConnectorError on bytes that are not Arrow, and on a column count mismatch", () => {
    const bad = decodeBatches([new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9])], undefined)
    expect(Result.isFailure(bad) && bad.failure._tag).toBe("ConnectorError")
    const mismatch = decodeBatches(
      [encodeRows(T.struct([T.field("a", T.IntegerType)]), [[1]])],
      T.struct([T.field("a", T.IntegerType), T.field("b", T.IntegerType)])
    )
    expect(Result.isFailure(mismatch) && mismatch.failure._tag).toBe("AnalysisError")
  })

  it("fails naming the column on an Arrow type tributary cannot hold", () => {
    const time = arrow.makeData({ type: new arrow.TimeMicrosecond(), length: 1, data: int64s([1n]) })
    const r = decodeBatches([ipcOf("clock", time)], undefined)
    expect(Result.isFailure(r)).toBe(true)
    if (Result.isFailure(r)) {
      expect(r.failure._tag).toBe("AnalysisError")
      expect(r.failure.message).toContain("`clock`")
      expect(r.failure.message).toContain("Time")
    }
  })
})

describe("against a real Spark Connect server", () => {
  const client = () => rawClient(sparkRemote())

  const run = async (query: string): Promise<Decoded> => {
    const r = await execute(client(), sqlRelation(query))
    expect(r.schema).toBeDefined()
    return ok(decodeBatches(r.chunks, ok(fromSparkSchema(r.schema!))))
  }

  it("decodes a result with every Spark type exactly", async () => {
    const d = await run(
      `select cast(1 as tinyint) a, cast(-2 as smallint) b, 3 c, 9007199254740993L d,
        cast(1.1 as float) e, 2.5d f, cast('1.55' as decimal(10,2)) g, cast('-12345678901234567890.5' as decimal(38,1)) g2,
        'hé' h, cast('ab' as binary) i, true j,
        timestamp'1969-12-31 23:59:59.999999' k, timestamp'0001-01-01 00:00:00' k2, date'1960-01-01' l,
        array(1, null, 3) m, map('a', 1, 'b', null) n, named_struct('x', 1L, 'y', 'z', 'w', array(named_struct('q', date'1970-01-02'))) o,
        null p, -9007199254740991L q, interval '1 2:03:04.5' day to second r, interval '-3-2' year to month s,
        make_interval(1, 2, 3, 4, 5, 6, 7.5) t, timestamp_ntz'2024-01-01 00:00:00.0015' u, cast('x' as varchar(3)) v,
        cast(null as bigint) w, array() x, map() y`
    )
    expect(d.schema).toEqual(
      T.struct([
        T.field("a", T.IntegerType, false),
        T.field("b", T.IntegerType, false),
        T.field("c", T.IntegerType, false),
        T.field("d", T.LongType, false),
        T.field("e", T.DoubleType, false),
        T.field("f", T.DoubleType, false),
        T.field("g", T.DoubleType, true),
        T.field("g2", T.DoubleType, true),
        T.field("h", T.StringType, false),
        T.field("i", T.BinaryType, false),
        T.field("j", T.BooleanType, false),
        T.field("k", T.TimestampType, false),
        T.field("k2", T.TimestampType, false),
        T.field("l", T.DateType, false),
        T.field("m", T.array(T.IntegerType, true), false),
        T.field("n", T.map(T.StringType, T.IntegerType, true), false),
        T.field(
          "o",
          T.struct([
            T.field("x", T.LongType, false),
            T.field("y", T.StringType, false),
            T.field("w", T.array(T.struct([T.field("q", T.DateType, false)]), false), false)
          ]),
          false
        ),
        T.field("p", T.NullType, true),
        T.field("q", T.LongType, false),
        T.field("r", T.CalendarIntervalType, false),
        T.field("s", T.CalendarIntervalType, false),
        T.field("t", T.CalendarIntervalType, false),
        T.field("u", T.TimestampType, false),
        T.field("v", T.StringType, false),
        T.field("w", T.LongType, true),
        T.field("x", T.array(T.NullType, false), false),
        T.field("y", T.map(T.NullType, T.NullType, false), false)
      ])
    )
    expect(d.rows).toEqual([
      [
        1,
        -2,
        3,
        9007199254740993n,
        Math.fround(1.1),
        2.5,
        1.55,
        Number("-12345678901234567890.5"), // the nearest double
        "hé",
        new Uint8Array([97, 98]),
        true,
        -1,
        -62135596800000,
        -3653,
        [1, null, 3],
        new Map<unknown, unknown>([
          ["a", 1],
          ["b", null]
        ]),
        [1, "z", [[1]]],
        null,
        -9007199254740991,
        { months: 0, days: 1, micros: 7_384_500_000 },
        { months: -38, days: 0, micros: 0 },
        { months: 14, days: 25, micros: 18_367_500_000 },
        1704067200001,
        "x",
        null,
        [],
        new Map()
      ]
    ])
  })

  it("decodes many rows split over several chunks", async () => {
    const r = await execute(
      client(),
      sqlRelation("select id, id * 1000000007 big, cast(id as string) s from range(0, 300000)")
    )
    expect(r.chunks.length).toBeGreaterThan(1)
    const d = ok(decodeBatches(r.chunks, ok(fromSparkSchema(r.schema!))))
    expect(d.rows.length).toBe(300000)
    for (const i of [0, 1, 150000, 299999]) expect(d.rows[i]).toEqual([i, i * 1000000007, String(i)])
  })

  it("decodes an empty result to zero rows with the schema", async () => {
    const d = await run("select 1L a, 'x' b where false")
    expect(d.schema).toEqual(T.struct([T.field("a", T.LongType, false), T.field("b", T.StringType, false)]))
    expect(d.rows).toEqual([])
  })

  it("reads a LocalRelation of encodeRows + toDDL back unchanged", async () => {
    const c = client()
    const r = await execute(c, localRelation(encodeRows(ALL, ALL_ROWS), toDDL(ALL)))
    const schema = ok(fromSparkSchema(r.schema!))
    const d = ok(decodeBatches(r.chunks, schema))
    expect(d.rows).toEqual(ALL_ROWS)
    // DDL cannot carry containsNull/valueContainsNull = false: Spark reads them as nullable.
    expect(schema).toEqual(
      T.struct(
        ALL.fields.map((f) =>
          f.name === "ar"
            ? T.field("ar", T.array(T.array(T.IntegerType, true), true))
            : f.name === "mi"
              ? T.field("mi", T.map(T.IntegerType, T.DoubleType, true), false)
              : f
        )
      )
    )
  })

  it("sends values Spark interprets as meant (micros, days, UTF-8, nested)", async () => {
    const schema = T.struct([
      T.field("ts", T.TimestampType),
      T.field("d", T.DateType),
      T.field("s", T.StringType),
      T.field("l", T.LongType),
      T.field("m", T.map(T.StringType, T.array(T.IntegerType))),
      T.field("st", T.struct([T.field("a b", T.DoubleType)]))
    ])
    const rows = [
      [-1, -1, "日本", 9007199254740993n, new Map([["k", [1, null]]]), [0.5]],
      [1_700_000_000_123, 19675, "a", -5, new Map(), null]
    ]
    const c = client()
    const rel = selectExpr(
      localRelation(encodeRows(schema, rows), toDDL(schema)),
      "cast(ts as string)",
      "cast(d as string)",
      "length(s)",
      "cast(l as string)",
      "to_json(m)",
      "st.`a b` * 2"
    )
    const r = await execute(c, rel)
    const d = ok(decodeBatches(r.chunks, ok(fromSparkSchema(r.schema!))))
    expect(d.rows).toEqual([
      ["1969-12-31 23:59:59.999", "1969-12-31", 2, "9007199254740993", '{"k":[1,null]}', 1],
      ["2023-11-14 22:13:20.123", "2023-11-14", 1, "-5", "{}", null]
    ])
  })
})
