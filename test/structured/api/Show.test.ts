/**
 * `show`, `showString`, `printSchema`, `explain`, `columns` and `dtypes`, byte for byte as
 * Apache Spark 4 prints them (Dataset.showString, StructType.treeString). Console output is
 * captured through Effect's `Console` service.
 *
 * The pure `showString` cases mirror Spark's DataFrameShowSuite.
 */
import { assert, describe, it } from "@effect/vitest"
import { Console, Effect, Schema } from "effect"
import * as T from "../../../core/DataType.ts"
import { F, Session } from "../../../mod.ts"
import { showString } from "../../../core/ShowString.ts"

const run = <A, Err>(self: Effect.Effect<A, Err, Session>) => self.pipe(Effect.provide(Session.layer()))

/** Runs `self` with a Console that records what `log` prints, one entry per call. */
const captured = <A, Err, R>(self: Effect.Effect<A, Err, R>) =>
  Effect.suspend(() => {
    const lines: Array<string> = []
    const console: Console.Console = {
      ...globalThis.console,
      log: (...a: ReadonlyArray<unknown>) => lines.push(a.join(" "))
    }
    return self.pipe(
      Effect.map((result) => ({ result, lines })),
      Effect.provideService(Console.Console, console)
    )
  })

const table = (...lines: ReadonlyArray<string>): string => `${lines.join("\n")}\n`

const Note = Schema.Struct({
  name: Schema.NullOr(Schema.String),
  n: Schema.Int,
  score: Schema.Number,
  note: Schema.NullOr(Schema.String)
})
const noteRows = [
  { name: "ann", n: 1, score: 1.0, note: "hi" },
  { name: "bob", n: 22, score: 0.5, note: "this note is longer than twenty" },
  { name: null, n: 3, score: 100.0, note: null }
]
const notes = Session.useSync((spark) => spark.createDataFrame(noteRows, Note))

describe("show", () => {
  it.effect("right-aligns and cuts cells at 20 characters (17 + ...) by default; null prints NULL", () =>
    run(
      Effect.gen(function* () {
        const df = yield* notes
        const { lines } = yield* captured(df.show())
        assert.deepStrictEqual(lines, [
          table(
            "+----+---+-----+--------------------+",
            "|name|  n|score|                note|",
            "+----+---+-----+--------------------+",
            "| ann|  1|  1.0|                  hi|",
            "| bob| 22|  0.5|this note is long...|",
            "|NULL|  3|100.0|                NULL|",
            "+----+---+-----+--------------------+"
          )
        ])
      })
    )
  )

  it.effect("truncate=false left-aligns and keeps whole cells", () =>
    run(
      Effect.gen(function* () {
        const df = yield* notes
        const { lines } = yield* captured(df.show(20, false))
        assert.deepStrictEqual(lines, [
          table(
            "+----+---+-----+-------------------------------+",
            "|name|n  |score|note                           |",
            "+----+---+-----+-------------------------------+",
            "|ann |1  |1.0  |hi                             |",
            "|bob |22 |0.5  |this note is longer than twenty|",
            "|NULL|3  |100.0|NULL                           |",
            "+----+---+-----+-------------------------------+"
          )
        ])
      })
    )
  )

  it.effect("a numeric truncate cuts to that width", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* notes).select("note")
        const text = yield* df.showString(20, 10)
        assert.strictEqual(
          text,
          table(
            "+----------+",
            "|      note|",
            "+----------+",
            "|        hi|",
            "|this no...|",
            "|      NULL|",
            "+----------+"
          )
        )
      })
    )
  )

  it.effect("prints the footer when there are more rows", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* notes).select("name", "n")
        const { lines } = yield* captured(df.show(2))
        assert.deepStrictEqual(lines, [
          table(
            "+----+---+",
            "|name|  n|",
            "+----+---+",
            "| ann|  1|",
            "| bob| 22|",
            "+----+---+",
            "only showing top 2 rows"
          )
        ])
        const one = yield* df.showString(1)
        assert.strictEqual(
          one,
          table("+----+---+", "|name|  n|", "+----+---+", "| ann|  1|", "+----+---+", "only showing top 1 row")
        )
        // exactly n rows: no footer
        const three = yield* df.showString(3)
        assert.ok(!three.includes("only showing"))
        const none = yield* df.showString(0)
        assert.strictEqual(
          none,
          table("+----+---+", "|name|  n|", "+----+---+", "+----+---+", "only showing top 0 rows")
        )
      })
    )
  )

  it.effect("an empty DataFrame prints only the header", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* notes).where(F.col("n").gt(100)).select("name", "n")
        assert.strictEqual(yield* df.showString(), table("+----+---+", "|name|  n|", "+----+---+", "+----+---+"))
      })
    )
  )

  it.effect("formats doubles, timestamps, structs and arrays as Spark 4 does", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark.createDataFrame(
          [
            {
              ts: new Date("2024-01-01T00:00:00Z"),
              pair: { a: "a", b: 1 },
              xs: [1, 2],
              ys: [1, null],
              d: 10000000
            },
            {
              ts: new Date("2024-06-30T12:34:56Z"),
              pair: { a: "b", b: 2 },
              xs: [],
              ys: null,
              d: 0.25
            }
          ],
          Schema.Struct({
            ts: Schema.Date,
            pair: Schema.Struct({ a: Schema.String, b: Schema.Int }),
            xs: Schema.Array(Schema.Int),
            ys: Schema.NullOr(Schema.Array(Schema.NullOr(Schema.Int))),
            d: Schema.Number
          })
        )
        const { lines } = yield* captured(df.show())
        assert.deepStrictEqual(lines, [
          table(
            "+-------------------+------+------+---------+-----+",
            "|                 ts|  pair|    xs|       ys|    d|",
            "+-------------------+------+------+---------+-----+",
            "|2024-01-01 00:00:00|{a, 1}|[1, 2]|[1, NULL]|1.0E7|",
            "|2024-06-30 12:34:56|{b, 2}|    []|     NULL| 0.25|",
            "+-------------------+------+------+---------+-----+"
          )
        ])
        // fractions of a second print without trailing zeros; 21 characters are cut when truncating
        const ms = spark.createDataFrame(
          [{ ts: new Date("2024-06-30T12:34:56.500Z") }],
          Schema.Struct({ ts: Schema.Date })
        )
        assert.strictEqual(
          yield* ms.showString(20, false),
          table(
            "+---------------------+",
            "|ts                   |",
            "+---------------------+",
            "|2024-06-30 12:34:56.5|",
            "+---------------------+"
          )
        )
        assert.strictEqual(
          yield* ms.showString(),
          table(
            "+--------------------+",
            "|                  ts|",
            "+--------------------+",
            "|2024-06-30 12:34:...|",
            "+--------------------+"
          )
        )
      })
    )
  )

  it.effect("a window column prints as a struct of timestamps", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark
          .createDataFrame([{ ts: new Date("2024-01-01T00:00:03Z") }], Schema.Struct({ ts: Schema.Date }))
          .groupBy(F.window("ts", "10 seconds"))
          .count()
        assert.strictEqual(
          yield* df.showString(20, false),
          table(
            "+------------------------------------------+-----+",
            "|window                                    |count|",
            "+------------------------------------------+-----+",
            "|{2024-01-01 00:00:00, 2024-01-01 00:00:10}|1    |",
            "+------------------------------------------+-----+"
          )
        )
      })
    )
  )

  it.effect("vertical mode prints one block per row", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* notes).select("name", "n")
        const { lines } = yield* captured(df.show(20, true, true))
        // name column 4 wide, value column 4 wide ("NULL"): headers are padded to 4 + 4 + 5
        assert.deepStrictEqual(lines, [
          "-RECORD 0----\n" +
            " name | ann  \n" +
            " n    | 1    \n" +
            "-RECORD 1----\n" +
            " name | bob  \n" +
            " n    | 22   \n" +
            "-RECORD 2----\n" +
            " name | NULL \n" +
            " n    | 3    \n"
        ])
      })
    )
  )

  it.effect("vertical mode with truncation, a footer, and no rows", () =>
    run(
      Effect.gen(function* () {
        const all = yield* notes
        const df = all.select("note")
        assert.strictEqual(
          yield* df.showString(2, true, true),
          `-RECORD 0${"-".repeat(20)}\n` +
            ` note | ${"hi".padEnd(20)} \n` +
            `-RECORD 1${"-".repeat(20)}\n` +
            " note | this note is long... \n" +
            "only showing top 2 rows\n"
        )
        assert.strictEqual(yield* all.where(F.col("n").gt(100)).select("note").showString(20, true, true), "(0 rows)\n")
      })
    )
  )
})

describe("showString (pure, Spark's DataFrameShowSuite)", () => {
  const value = T.struct([T.field("value", T.StringType)])
  const long = "1".repeat(21)

  it("truncate = 0 and 20", () => {
    assert.strictEqual(
      showString(value, [["1"], [long]], 10, 0),
      table(
        "+---------------------+",
        "|value                |",
        "+---------------------+",
        "|1                    |",
        "|111111111111111111111|",
        "+---------------------+"
      )
    )
    assert.strictEqual(
      showString(value, [["1"], [long]], 10, 20),
      table(
        "+--------------------+",
        "|               value|",
        "+--------------------+",
        "|                   1|",
        "|11111111111111111...|",
        "+--------------------+"
      )
    )
  })

  it("truncate = 0 and 20, vertical", () => {
    assert.strictEqual(
      showString(value, [["1"], [long]], 10, 0, true),
      "-RECORD 0----------------------\n" +
        " value | 1                     \n" +
        "-RECORD 1----------------------\n" +
        " value | 111111111111111111111 \n"
    )
    assert.strictEqual(
      showString(value, [["1"], [long]], 10, 20, true),
      "-RECORD 0---------------------\n" +
        " value | 1                    \n" +
        "-RECORD 1---------------------\n" +
        " value | 11111111111111111... \n"
    )
  })

  it("minimum column width, vertical", () => {
    const ints = T.struct([T.field("_1", T.IntegerType), T.field("_2", T.IntegerType)])
    assert.strictEqual(
      showString(
        ints,
        [
          [1, 1],
          [2, 2]
        ],
        10,
        20
      ),
      table("+---+---+", "| _1| _2|", "+---+---+", "|  1|  1|", "|  2|  2|", "+---+---+")
    )
    assert.strictEqual(
      showString(
        ints,
        [
          [1, 1],
          [2, 2]
        ],
        10,
        20,
        true
      ),
      "-RECORD 0--\n" + " _1  | 1   \n" + " _2  | 1   \n" + "-RECORD 1--\n" + " _1  | 2   \n" + " _2  | 2   \n"
    )
  })

  it("footer in vertical mode", () => {
    const kv = T.struct([T.field("key", T.IntegerType), T.field("value", T.StringType)])
    assert.strictEqual(
      showString(
        kv,
        [
          [1, "1"],
          [2, "2"]
        ],
        1,
        20,
        true
      ),
      "-RECORD 0----\n" + " key   | 1   \n" + " value | 1   \n" + "only showing top 1 row\n"
    )
  })

  it("maps, nested nulls and binary", () => {
    const t = T.struct([T.field("m", T.map(T.IntegerType, T.StringType)), T.field("b", T.BinaryType)])
    assert.strictEqual(
      showString(
        t,
        [
          [
            new Map<unknown, unknown>([
              [1, "a"],
              [2, null]
            ]),
            new Uint8Array([0x31, 0x32])
          ]
        ],
        10,
        20
      ),
      table(
        "+-------------------+-------+",
        "|                  m|      b|",
        "+-------------------+-------+",
        "|{1 -> a, 2 -> NULL}|[31 32]|",
        "+-------------------+-------+"
      )
    )
  })

  it("escapes meta-characters (SPARK-33690)", () => {
    const t = T.struct([T.field("s", T.StringType)])
    assert.strictEqual(
      showString(t, [["aaa\nbbb\tccc"]], 1, 0),
      table("+-------------+", "|s            |", "+-------------+", "|aaa\\nbbb\\tccc|", "+-------------+")
    )
  })
})

describe("printSchema, explain, columns, dtypes", () => {
  const Nested = Schema.Struct({
    name: Schema.NullOr(Schema.String),
    age: Schema.Int,
    tags: Schema.Array(Schema.String),
    info: Schema.Struct({ x: Schema.Number, at: Schema.NullOr(Schema.Date) }),
    scores: Schema.Record(Schema.String, Schema.Number)
  })
  const nested = Session.useSync((spark) => spark.createDataFrame([], Nested))

  it.effect("printSchema prints Spark's tree", () =>
    run(
      Effect.gen(function* () {
        const df = yield* nested
        const expected =
          "root\n" +
          " |-- name: string (nullable = true)\n" +
          " |-- age: long (nullable = false)\n" +
          " |-- tags: array (nullable = false)\n" +
          " |    |-- element: string (containsNull = false)\n" +
          " |-- info: struct (nullable = false)\n" +
          " |    |-- x: double (nullable = false)\n" +
          " |    |-- at: timestamp (nullable = true)\n" +
          " |-- scores: map (nullable = false)\n" +
          " |    |-- key: string\n" +
          " |    |-- value: double (valueContainsNull = false)\n"
        const { result, lines } = yield* captured(df.printSchema())
        assert.strictEqual(result, expected)
        assert.deepStrictEqual(lines, [expected])
      })
    )
  )

  it.effect("printSchema after transformations shows the analyzed types", () =>
    run(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark
          .createDataFrame([{ k: "a", v: 1 }], "k string, v int")
          .groupBy("k")
          .agg(F.sum("v"), F.avg("v"), F.count("*").as("n"))
        const { result } = yield* captured(df.printSchema())
        assert.strictEqual(
          result,
          "root\n" +
            " |-- k: string (nullable = true)\n" +
            " |-- sum(v): long (nullable = true)\n" +
            " |-- avg(v): double (nullable = true)\n" +
            " |-- n: long (nullable = false)\n"
        )
      })
    )
  )

  it.effect("explain(true) prints the four plans under Spark's headings, in order", () =>
    run(
      Effect.gen(function* () {
        const df = (yield* notes).where(F.col("n").gt(1)).select("name")
        const { result, lines } = yield* captured(df.explain(true))
        assert.deepStrictEqual(lines, [result])
        const headings = [
          "== Parsed Logical Plan ==",
          "== Analyzed Logical Plan ==",
          "== Optimized Logical Plan ==",
          "== Physical Plan =="
        ]
        const at = headings.map((h) => result.indexOf(h))
        assert.ok(
          at.every((i) => i >= 0),
          `missing a heading in:\n${result}`
        )
        assert.deepStrictEqual(
          [...at].sort((a, b) => a - b),
          at
        )
        // the analyzed plan starts with its schema line, as Spark's
        assert.ok(result.includes("== Analyzed Logical Plan ==\nname: string\n"), result)
        const simple = yield* df.explain()
        assert.ok(simple.startsWith("== Physical Plan ==\n"), simple)
        assert.ok(!simple.includes("Logical Plan"))
      })
    )
  )

  it.effect("columns and dtypes follow the analyzed schema", () =>
    run(
      Effect.gen(function* () {
        const df = yield* nested
        assert.deepStrictEqual(df.columns, ["name", "age", "tags", "info", "scores"])
        assert.deepStrictEqual(df.dtypes, [
          ["name", "string"],
          ["age", "bigint"],
          ["tags", "array<string>"],
          ["info", "struct<x:double,at:timestamp>"],
          ["scores", "map<string,double>"]
        ])
        const spark = yield* Session
        const agg = spark
          .createDataFrame([], "shop string, amount int, price double")
          .groupBy("shop")
          .agg(F.sum("amount"), F.avg("amount"), F.count("*"), F.max("price"))
        assert.deepStrictEqual(agg.dtypes, [
          ["shop", "string"],
          ["sum(amount)", "bigint"],
          ["avg(amount)", "double"],
          ["count(1)", "bigint"],
          ["max(price)", "double"]
        ])
      })
    )
  )
})
