/**
 * `from_json` over Kafka-like values, fuzzed (issue #20 item 3): fast-check generates binary
 * values — JSON objects with quotes, escapes, huge strings and deep nesting, and broken ones
 * (truncated, an unbalanced quote, invalid UTF-8, a top-level array, a scalar, `null`, ints out
 * of range, values of the wrong type) — cast to a string and parsed with
 * `from_json(value, "a INT, b STRING, c ARRAY<INT>, _corrupt_record STRING")`. The oracle is
 * Spark's rules (`JsonToStructs`, `JacksonParser`, `FailureSafeParser`), stated per generated
 * value:
 *
 * - a null value gives null; blank text gives null (no token);
 * - `CAST(binary AS STRING)` keeps the bytes and `from_json` decodes them with a replacing
 *   reader, so invalid UTF-8 inside a string is U+FFFD in the value (not malformed), and outside
 *   a string it is a character no JSON token starts with (malformed);
 * - malformed (a syntax error; an array, a scalar or `null` at the top: `allowArrayAsStructs` is
 *   off for `from_json`; a field that does not convert): PERMISSIVE gives a struct whose fields
 *   are null except those that converted (partial results), `_corrupt_record` the text; FAILFAST
 *   fails the query with `MALFORMED_RECORD_IN_PARSING` naming the record;
 * - DROPMALFORMED is refused at analysis with `PARSE_MODE_UNSUPPORTED`.
 *
 * 10,000 values: 20 batches of 500, each parsed in PERMISSIVE and in FAILFAST.
 */
import { Effect, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as T from "../../core/DataType.ts"
import { F, Session } from "../../mod.ts"

const SCHEMA = "a INT, b STRING, c ARRAY<INT>, _corrupt_record STRING"

type Cell = { readonly json: string | undefined; readonly value: unknown; readonly bad: boolean }

interface Rec {
  readonly bytes: Uint8Array | null
  /** Spark's struct in PERMISSIVE mode (null for a null result), and whether it is malformed. */
  readonly expected: { a: unknown; b: unknown; c: unknown; _corrupt_record: unknown } | null
  readonly bad: boolean
}

const INT_MIN = -2147483648
const INT_MAX = 2147483647

const aCell: fc.Arbitrary<Cell> = fc.oneof(
  fc.integer({ min: INT_MIN, max: INT_MAX }).map((n) => ({ json: String(n), value: n, bad: false })),
  fc.constant({ json: "null", value: null, bad: false }),
  fc.constant({ json: undefined, value: null, bad: false }),
  fc
    .oneof(fc.bigInt({ min: 2147483648n, max: 10n ** 30n }), fc.bigInt({ min: -(10n ** 30n), max: -2147483649n }))
    .map((n) => ({ json: String(n), value: null, bad: true })),
  fc.constantFrom('"12"', "true", "1.5", "{}", "[1]").map((json) => ({ json, value: null, bad: true }))
)

const nested = (depth: number, n: number): string => `${"[".repeat(depth)}${n}${"]".repeat(depth)}`

const bCell: fc.Arbitrary<Cell> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 30 }).map((s) => ({ json: JSON.stringify(s), value: s, bad: false })),
  fc.string({ unit: fc.constantFrom('"', "\\", "'", ";", "--", "DROP TABLE t", "é", "\u0000"), maxLength: 10 }).map((s) => ({
    json: JSON.stringify(s),
    value: s,
    bad: false
  })),
  fc.integer({ min: 10_000, max: 100_000 }).map((n) => ({ json: JSON.stringify("x".repeat(n)), value: "x".repeat(n), bad: false })),
  fc.tuple(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 0, max: 9 })).map(([d, n]) => ({ json: nested(d, n), value: nested(d, n), bad: false })),
  fc.constantFrom("true", "12", "-3").map((s) => ({ json: s, value: s, bad: false })),
  fc.constant({ json: undefined, value: null, bad: false })
)

const cCell: fc.Arbitrary<Cell> = fc.oneof(
  fc.array(fc.integer({ min: INT_MIN, max: INT_MAX }), { maxLength: 4 }).map((xs) => ({ json: JSON.stringify(xs), value: xs, bad: false })),
  fc.constant({ json: undefined, value: null, bad: false }),
  fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 3 }).map((xs) => ({ json: JSON.stringify([...xs, "x"]), value: null, bad: true })),
  fc.constantFrom("5", '"x"', "{}").map((json) => ({ json, value: null, bad: true }))
)

const invalidUtf8 = fc.constantFrom([0x80], [0xbf], [0xfe], [0xff], [0xc3, 0x78], [0xe2, 0x82])

const encoder = new TextEncoder()
const decoder = new TextDecoder("utf-8")

const objectText = (cells: ReadonlyArray<readonly [string, Cell]>): string =>
  `{${cells
    .filter(([, c]) => c.json !== undefined)
    .map(([k, c]) => `"${k}": ${c.json}`)
    .join(", ")}}`

const nulls = (text: string) => ({ a: null, b: null, c: null, _corrupt_record: text })

const record: fc.Arbitrary<Rec> = fc
  .tuple(aCell, bCell, cCell, fc.integer({ min: 0, max: 13 }), fc.nat(), invalidUtf8)
  .map(([a, b, c, damage, at, badBytes]): Rec => {
    const text = objectText([
      ["a", a],
      ["b", b],
      ["c", c]
    ])
    switch (damage) {
      case 0: {
        const cut = text.slice(0, 1 + (at % (text.length - 1)))
        const bytes = encoder.encode(cut)
        return { bytes, expected: nulls(decoder.decode(bytes)), bad: true }
      }
      case 1: {
        const line = `{"b": "open${at % 100}}`
        return { bytes: encoder.encode(line), expected: nulls(line), bad: true }
      }
      case 2: {
        // invalid UTF-8 inside a string: U+FFFD in the value
        const bytes = Buffer.concat([encoder.encode('{"b": "x'), new Uint8Array(badBytes), encoder.encode('y", "a": 7}')])
        const s = decoder.decode(bytes)
        return { bytes, expected: { a: 7, b: JSON.parse(s).b, c: null, _corrupt_record: null }, bad: false }
      }
      case 3: {
        // invalid UTF-8 between tokens: no JSON token starts with U+FFFD
        const bytes = Buffer.concat([encoder.encode('{"a": 1, '), new Uint8Array(badBytes), encoder.encode('"b": "x"}')])
        return { bytes, expected: nulls(decoder.decode(bytes)), bad: true }
      }
      case 4: {
        const line = `[${text}]`
        return { bytes: encoder.encode(line), expected: nulls(line), bad: true }
      }
      case 5: {
        const line = ["5", '"x"', "null", "true"][at % 4]
        return { bytes: encoder.encode(line), expected: nulls(line), bad: true }
      }
      case 6:
        return at % 2 === 0 ? { bytes: null, expected: null, bad: false } : { bytes: encoder.encode("  "), expected: null, bad: false }
      default: {
        const bad = a.bad || b.bad || c.bad
        return {
          bytes: encoder.encode(text),
          expected: { a: a.value, b: b.value, c: c.value, _corrupt_record: bad ? text : null },
          bad
        }
      }
    }
  })

const parse = (values: ReadonlyArray<Uint8Array | null>, options?: Record<string, string>) =>
  Effect.runPromise(
    Effect.result(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = spark.createDataFrame(
          values.map((value) => ({ value })),
          Schema.Struct({ value: Schema.NullOr(Schema.Uint8Array) })
        )
        return yield* df.select(F.from_json(F.col("value").cast("string"), SCHEMA, options).as("j")).collect()
      }).pipe(Effect.provide(Session.layer()))
    )
  )

const short = (v: unknown): string => {
  const t = JSON.stringify(v) ?? String(v)
  return t.length > 300 ? `${t.slice(0, 300)}…(${t.length} chars)` : t
}

describe("from_json over Kafka-like values, fuzzed (10,000 values)", () => {
  it("PERMISSIVE and FAILFAST give Spark's structs and errors", { timeout: 300_000 }, async () => {
    let values = 0
    await fc.assert(
      fc.asyncProperty(fc.array(record, { minLength: 500, maxLength: 500 }), async (recs) => {
        values += recs.length
        const permissive = await parse(recs.map((r) => r.bytes))
        if (permissive._tag === "Failure") throw new Error(`PERMISSIVE failed: ${short(String(permissive.failure))}`)
        const rows = permissive.success as ReadonlyArray<{ j: unknown }>
        expect(rows.length).toBe(recs.length)
        for (let i = 0; i < recs.length; i++) {
          const got = JSON.stringify(rows[i].j)
          const want = JSON.stringify(recs[i].expected)
          if (got !== want) throw new Error(`row ${i}: expected ${short(recs[i].expected)}, got ${short(rows[i].j)}`)
        }
        const failfast = await parse(
          recs.map((r) => r.bytes),
          { mode: "FAILFAST" }
        )
        const firstBad = recs.find((r) => r.bad)
        if (firstBad === undefined) expect(failfast._tag).toBe("Success")
        else {
          expect(failfast._tag).toBe("Failure")
          if (failfast._tag === "Failure") {
            const e = failfast.failure as { _tag: string; domain: string; message: string }
            expect(e._tag).toBe("ConnectorError")
            expect(e.domain).toBe("user")
            expect(e.message).toContain("[MALFORMED_RECORD_IN_PARSING.WITHOUT_SUGGESTION]")
            expect(e.message).toContain(decoder.decode(firstBad.bytes ?? new Uint8Array()).slice(0, 60))
          }
        }
      }),
      { numRuns: 20, seed: 20, endOnFailure: true }
    )
    expect(values).toBe(10_000)
  })

  it("refuses DROPMALFORMED at analysis, as Spark's from_json does; reads an unknown mode as PERMISSIVE", async () => {
    const r = await parse([encoder.encode("{")], { mode: "DROPMALFORMED" })
    expect(r._tag).toBe("Failure")
    if (r._tag === "Failure") {
      const e = r.failure as { _tag: string; message: string }
      expect(e._tag).toBe("AnalysisError")
      expect(e.message).toBe(
        "[PARSE_MODE_UNSUPPORTED] The function `from_json` doesn't support the DROPMALFORMED mode. Acceptable modes are PERMISSIVE and FAILFAST."
      )
    }
    const other = await parse([encoder.encode("{")], { mode: "LENIENT" })
    expect(other._tag).toBe("Success")
    if (other._tag === "Success") expect(other.success).toEqual([{ j: { a: null, b: null, c: null, _corrupt_record: "{" } }])
  })
})

describe("from_json's analysis", () => {
  const run = <A>(f: (spark: Session["Service"]) => Effect.Effect<A, unknown>) =>
    Effect.runPromise(Effect.result(Effect.gen(function* () {
      const spark = yield* Session
      return yield* f(spark)
    }).pipe(Effect.provide(Session.layer()))))
  const values = (spark: Session["Service"]) =>
    spark.createDataFrame([{ value: encoder.encode('{"id": 3, "tag": "k"}') }], Schema.Struct({ value: Schema.Uint8Array }))

  it("takes a StructType, names the column as Spark does, and refuses a binary value without a cast", async () => {
    const ok = await run((spark) => {
      const df = values(spark).select(
        F.from_json(F.col("value").cast("string"), T.struct([T.field("id", T.LongType, false), T.field("tag", T.StringType, true)]))
      )
      return Effect.map(df.collect(), (rows) => ({ columns: df.columns, rows }))
    })
    expect(ok._tag).toBe("Success")
    if (ok._tag === "Success") {
      expect(ok.success.columns).toEqual(["from_json(CAST(value AS STRING))"])
      expect(ok.success.rows).toEqual([{ "from_json(CAST(value AS STRING))": { id: 3, tag: "k" } }])
    }
    const binary = await run((spark) => values(spark).select(F.from_json("value", "id INT")).collect())
    expect(binary._tag).toBe("Failure")
    if (binary._tag === "Failure") {
      expect(String((binary.failure as Error).message)).toContain(
        '[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve "from_json(value)" due to data type mismatch: The first parameter requires the "STRING" type, however "value" has the type "BINARY".'
      )
    }
  })

  it("refuses a schema that does not parse and a corrupt-record field that is not a string", async () => {
    const bad = await run((spark) => values(spark).select(F.from_json(F.col("value").cast("string"), "id INTEGRAL")).collect())
    expect(bad._tag).toBe("Failure")
    if (bad._tag === "Failure") expect((bad.failure as Error).message).toContain("[INVALID_SCHEMA.PARSE_ERROR]")
    const corrupt = await run((spark) =>
      values(spark).select(F.from_json(F.col("value").cast("string"), "id INT, _corrupt_record INT")).collect()
    )
    expect(corrupt._tag).toBe("Failure")
    if (corrupt._tag === "Failure") expect((corrupt.failure as Error).message).toContain("[INVALID_CORRUPT_RECORD_TYPE]")
  })

  it("fills columnNameOfCorruptRecord when the schema has that field", async () => {
    const r = await run((spark) =>
      spark
        .createDataFrame([{ s: '{"id": "x"}' }], Schema.Struct({ s: Schema.String }))
        .select(F.from_json("s", "id INT, bad STRING", { columnNameOfCorruptRecord: "bad" }).as("j"))
        .collect()
    )
    expect(r._tag).toBe("Success")
    if (r._tag === "Success") expect(r.success).toEqual([{ j: { id: null, bad: '{"id": "x"}' } }])
  })
})
