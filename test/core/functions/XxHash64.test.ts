/**
 * XxHash64 against Spark 4.0.0: every expected value below is what `SELECT xxhash64(...)` printed
 * in a local Spark 4.0.0 session (spark-sql_2.13 from Maven Central, UTC, ANSI off).
 */
import { describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import * as XxHash64 from "../../../core/functions/XxHash64.ts"

const h = (v: unknown, t: T.DataType): string => XxHash64.xxhash64(v, t).toString()

// A prefix of this string of each length 0..71 exercises every path of XXH64: the 32-byte
// stripes, the 8-byte words, the 4-byte word and the single bytes.
const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ!@#$%^&*()"
// SELECT id, xxhash64(substr(s, 1, CAST(id AS INT))) FROM range(0, 72) ...
const PREFIX_HASHES = [
  "-7444071767201028348",
  "-8582455328737087284",
  "2710560539726725091",
  "1423657621850124518",
  "-6810745876291105281",
  "-990457398947679591",
  "6015085909938183043",
  "3761890393722740389",
  "2470326616177429180",
  "-7093207067522615973",
  "2022022473492580998",
  "-6876501346027965189",
  "3897903351825168219",
  "-3720345996457672580",
  "1183205894746657436",
  "7657402997733166237",
  "3874317801313077707",
  "-8780570604781097062",
  "-5223314228566481531",
  "-8050658673689155985",
  "8917572861163453528",
  "4617420701334322238",
  "5174039034254268189",
  "-3477068685411359464",
  "-6640076789255312451",
  "-5658770379723181953",
  "-3265757659154784300",
  "-5253745695125809394",
  "4881882087089062180",
  "3212525438242432993",
  "-7084104867546922075",
  "-1970086447371095792",
  "221923967055193886",
  "1134088583240772182",
  "-5110865288406611209",
  "-6141723368480803397",
  "2724237963427677065",
  "-6555498869635072181",
  "-8630293146489066018",
  "-7949230879717978153",
  "5903956734475236956",
  "-1979538810071848178",
  "1498839116691236264",
  "6670108270069419518",
  "2083283336357327680",
  "-6008687004448981431",
  "-769660568166318141",
  "-1875538399578929867",
  "-2134736002820759496",
  "-8764118316012353476",
  "-764066608246235242",
  "1122610951975149255",
  "-2504992510779354395",
  "-6981778573726636258",
  "-437673102702589752",
  "6488935646921308137",
  "-1416473399424806456",
  "-8992857951052049229",
  "-3996088505097762313",
  "3425696612468865840",
  "1165840327705210156",
  "4497946345832215851",
  "6963362508556898705",
  "-3411906613661405427",
  "-1985082867782526567",
  "3874113067801910747",
  "-4063024972644250671",
  "4706320555651600426",
  "1641357703495320266",
  "-2112917305382048386",
  "-3155045930415102282",
  "-1217247452258756557"
]

describe("XxHash64 (Spark's xxhash64, seed 42)", () => {
  it("hashes ints as Spark: SELECT xxhash64(0), xxhash64(1), xxhash64(-1), xxhash64(2147483647), xxhash64(-2147483648), xxhash64(42)", () => {
    expect([0, 1, -1, 2147483647, -2147483648, 42].map((v) => h(v, T.IntegerType))).toEqual([
      "3614696996920510707",
      "-6698625589789238999",
      "2017008487422258757",
      "1508894993788531228",
      "2073849959933241805",
      "-387659249110444264"
    ])
  })

  it("hashes longs as Spark, negative and above 2^32 included", () => {
    expect(
      [0, 1, -1, 4294967296, -4294967296, 9007199254740991, -9007199254740991, 1234567890123].map((v) =>
        h(v, T.LongType)
      )
    ).toEqual([
      "-5252525462095825812",
      "-7001672635703045582",
      "3858142552250413010",
      "2573143779600619579",
      "398523326965765587",
      "-2871434063367361288",
      "6260724324080909586",
      "1687537368341330389"
    ])
  })

  it("hashes doubles by their bits, -0.0 as 0.0 and NaN canonical", () => {
    expect(
      [0, -0, 1.5, -2.25, Number.NaN, Infinity, -Infinity, 1e300, 4.9e-324, 0.1].map((v) => h(v, T.DoubleType))
    ).toEqual([
      "-5252525462095825812",
      "-5252525462095825812",
      "7738255526519901366",
      "-8344676507314498009",
      "-3127944061524951246",
      "5810986238603807492",
      "5326262080505358431",
      "-6660537626403695510",
      "-7001672635703045582",
      "-4684694357984311926"
    ])
  })

  it("hashes strings of every length 0..71 as Spark", () => {
    const got = Array.from({ length: 72 }, (_, n) => h(ALPHABET.slice(0, n), T.StringType))
    expect(got).toEqual(PREFIX_HASHES)
  })

  it("hashes strings by their UTF-8 bytes (2-, 3- and 4-byte characters)", () => {
    expect(["héllo", "日本語", "😀", ""].map((v) => h(v, T.StringType))).toEqual([
      "501425390238239234",
      "-619341062884681239",
      "-5869505314936196641",
      "-7444071767201028348"
    ])
  })

  it("hashes binary values by their bytes", () => {
    const bytes = [
      new Uint8Array([]),
      new Uint8Array([0]),
      new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
      new TextEncoder().encode("hello world, this is a longer binary value")
    ]
    expect(bytes.map((v) => h(v, T.BinaryType))).toEqual([
      "-7444071767201028348",
      "-8959994473701255385",
      "-3657294847325691009",
      "-7849245932148581691"
    ])
  })

  it("hashes booleans as ints, dates as days and timestamps as microseconds", () => {
    const day = (iso: string): number => Date.parse(`${iso}T00:00:00Z`) / 86_400_000
    expect([
      h(true, T.BooleanType),
      h(false, T.BooleanType),
      h(day("2024-01-01"), T.DateType),
      h(day("1969-12-31"), T.DateType),
      h(day("1970-01-01"), T.DateType),
      h(Date.parse("2024-01-01T00:00:00.123Z"), T.TimestampType),
      h(Date.parse("1969-12-31T23:59:59.999Z"), T.TimestampType)
    ]).toEqual([
      "-6698625589789238999",
      "3614696996920510707",
      "3242891694566951137",
      "2017008487422258757",
      "3614696996920510707",
      "-127928878325461485",
      "329241093978022261"
    ])
  })

  it("chains the hash through array elements, skipping nulls (nested arrays flatten)", () => {
    const ints = T.array(T.IntegerType)
    expect([
      h([1, 2, 3], ints),
      h([1, null, 3], ints),
      h([], ints),
      h(["a", "bc"], T.array(T.StringType)),
      h([[1], [2, 3]], T.array(ints)),
      h([1.5, Number.NaN], T.array(T.DoubleType))
    ]).toEqual([
      "8592097078962733837",
      "-3383274367486667931",
      "42",
      "714843003905237701",
      "8592097078962733837",
      "-2384088460406687432"
    ])
  })

  it("chains the hash through struct fields; null hashes to the seed", () => {
    expect([
      h([1, "a"], T.struct([T.field("col1", T.IntegerType), T.field("col2", T.StringType)])),
      h([1, null], T.struct([T.field("a", T.IntegerType), T.field("b", T.StringType)])),
      h([1, 2.5], T.struct([T.field("col1", T.LongType), T.field("col2", T.DoubleType)])),
      h(null, T.NullType)
    ]).toEqual(["8205864924878002737", "-6698625589789238999", "-788572162147868298", "42"])
  })

  it("hashes an interval as microseconds, then days, then months", () => {
    // SELECT xxhash64(make_interval(0, 3, 0, 4, 0, 0, 5.000006))
    expect(h({ months: 3, days: 4, micros: 5_000_006 }, T.CalendarIntervalType)).toBe("-7871366329602885195")
  })

  it("takes another seed", () => {
    // hash(1, hash(0, 42)) is the chained seed Spark uses for xxhash64(0, 1)
    const first = XxHash64.xxhash64(0, T.IntegerType)
    expect(XxHash64.xxhash64(1, T.IntegerType, first)).toBe(XxHash64.xxhash64([0, 1], T.array(T.IntegerType)))
  })
})
