// Expected values are the `examples` of Spark's ExpressionDescription annotations
// (sql/catalyst/.../expressions/stringExpressions.scala, regexpExpressions.scala) unless noted.
import { describe, expect, it } from "vitest"
import * as T from "../../../core/DataType.ts"
import { arr, call, dbl, fn, lit, resolveError, str, typeOf } from "./support.ts"

const bytes = (s: string) => new TextEncoder().encode(s)

describe("case and length", () => {
  it("upper, lower, initcap", () => {
    expect(fn("upper", lit("SparkSql"))).toBe("SPARKSQL")
    expect(fn("lower", lit("SparkSql"))).toBe("sparksql")
    expect(fn("ucase", lit("SparkSql"))).toBe("SPARKSQL")
    expect(fn("initcap", lit("sPark sql"))).toBe("Spark Sql")
    expect(fn("upper", str(null))).toBe(null)
  })

  // issue #21 deviation 2: Spark's UTF8String.toTitleCase uses the titlecase mapping
  it("initcap title-cases a word's first letter: initcap('ßa b') is 'Ssa B' as in Spark", () => {
    expect(fn("initcap", lit("ß"))).toBe("Ss")
    expect(fn("initcap", lit("ßa b"))).toBe("Ssa B")
    expect(fn("initcap", lit("ﬁne ǆungla"))).toBe("Fine ǅungla")
    expect(fn("initcap", lit("ᾳ ᾀ"))).toBe("ᾼ ᾈ")
    expect(fn("initcap", lit("éCOLE 😀x"))).toBe("École 😀x")
  })

  it("length counts characters (code points), bytes for binary", () => {
    expect(fn("length", lit("Spark SQL "))).toBe(10)
    expect(fn("char_length", lit("Spark SQL "))).toBe(10)
    expect(fn("length", lit("a😀b"))).toBe(3)
    expect(fn("length", lit(bytes("ab")))).toBe(2)
    expect(fn("octet_length", lit("Spark SQL"))).toBe(9)
    expect(fn("octet_length", lit("é"))).toBe(2)
    expect(fn("bit_length", lit("Spark SQL"))).toBe(72)
    expect(typeOf("length", lit("x"))).toBe("int")
  })

  it("numbers are implicitly cast to string", () => {
    expect(fn("length", lit(12345))).toBe(5)
    expect(fn("upper", dbl(1.5))).toBe("1.5")
    expect(fn("length", lit(true))).toBe(4)
  })

  it("non-string complex arguments are rejected at analysis", () => {
    expect(resolveError("upper", arr(T.IntegerType, [1]))).toMatch(
      /DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE.*The first parameter requires the "STRING" type/
    )
    expect(resolveError("upper", lit("a"), lit("b"))).toMatch(
      /WRONG_NUM_ARGS.*requires 1 parameters but the actual number is 2/
    )
  })
})

describe("trim and pad", () => {
  it("trim removes spaces only (or the given characters)", () => {
    expect(fn("trim", lit("    SparkSQL   "))).toBe("SparkSQL")
    expect(fn("trim", lit("\tSparkSQL "))).toBe("\tSparkSQL")
    expect(fn("ltrim", lit("    SparkSQL   "))).toBe("SparkSQL   ")
    expect(fn("rtrim", lit("    SparkSQL   "))).toBe("    SparkSQL")
    expect(fn("trim", lit("SSparkSQLS"), lit("SL"))).toBe("parkSQ")
    expect(fn("ltrim", lit("SSparkSQLS"), lit("SL"))).toBe("parkSQLS")
    expect(fn("rtrim", lit("SSparkSQLS"), lit("SL"))).toBe("SSparkSQ")
  })

  it("lpad and rpad", () => {
    expect(fn("lpad", lit("hi"), lit(5), lit("??"))).toBe("???hi")
    expect(fn("lpad", lit("hi"), lit(1), lit("??"))).toBe("h")
    expect(fn("lpad", lit("hi"), lit(5))).toBe("   hi")
    expect(fn("rpad", lit("hi"), lit(5), lit("??"))).toBe("hi???")
    expect(fn("rpad", lit("hi"), lit(1), lit("??"))).toBe("h")
    expect(fn("rpad", lit("hi"), lit(5))).toBe("hi   ")
    expect(fn("lpad", lit("hi"), lit(-1), lit("?"))).toBe("")
    expect(fn("lpad", lit("hi"), lit(5), lit(""))).toBe("hi")
  })
})

describe("substrings and positions", () => {
  it("substring is 1-based with Spark's negative positions", () => {
    expect(fn("substring", lit("Spark SQL"), lit(5))).toBe("k SQL")
    expect(fn("substring", lit("Spark SQL"), lit(-3))).toBe("SQL")
    expect(fn("substring", lit("Spark SQL"), lit(5), lit(1))).toBe("k")
    expect(fn("substring", lit("Spark SQL"), lit(0), lit(2))).toBe("Sp")
    // the end is computed before the start is clamped: -11 + 13 = 2
    expect(fn("substring", lit("Spark SQL"), lit(-20), lit(13))).toBe("Sp")
    expect(fn("substring", lit("Spark SQL"), lit(20), lit(2))).toBe("")
    expect(fn("substr", lit("Spark SQL"), lit(1), lit(5))).toBe("Spark")
    expect(fn("substring", lit("😀ab"), lit(2), lit(1))).toBe("a")
  })

  it("left and right", () => {
    expect(fn("left", lit("Spark SQL"), lit(3))).toBe("Spa")
    expect(fn("right", lit("Spark SQL"), lit(3))).toBe("SQL")
    expect(fn("right", lit("Spark SQL"), lit(0))).toBe("")
  })

  it("instr and locate", () => {
    expect(fn("instr", lit("SparkSQL"), lit("SQL"))).toBe(6)
    expect(fn("instr", lit("SparkSQL"), lit("x"))).toBe(0)
    expect(fn("locate", lit("bar"), lit("foobarbar"))).toBe(4)
    expect(fn("locate", lit("bar"), lit("foobarbar"), lit(5))).toBe(7)
    expect(fn("locate", lit("bar"), lit("foobarbar"), lit(0))).toBe(0)
    // Hive: a null start position gives 0, not null
    expect(fn("locate", lit("bar"), lit("foobarbar"), literalNullInt())).toBe(0)
    expect(fn("locate", str(null), lit("foobarbar"))).toBe(null)
  })

  it("substring_index", () => {
    expect(fn("substring_index", lit("www.apache.org"), lit("."), lit(2))).toBe("www.apache")
    expect(fn("substring_index", lit("www.apache.org"), lit("."), lit(-2))).toBe("apache.org")
    expect(fn("substring_index", lit("www.apache.org"), lit("."), lit(0))).toBe("")
    expect(fn("substring_index", lit("www.apache.org"), lit("."), lit(5))).toBe("www.apache.org")
  })
})

const literalNullInt = () => ({ _tag: "Literal", value: null, dataType: T.IntegerType }) as const

describe("building strings", () => {
  it("concat is null when any argument is null", () => {
    expect(fn("concat", lit("Spark"), lit("SQL"))).toBe("SparkSQL")
    expect(fn("concat", lit("a"), str(null), lit("b"))).toBe(null)
    expect(fn("concat", lit("a"), lit(1), lit(true))).toBe("a1true")
    expect(fn("concat")).toBe("")
  })

  it("concat of arrays", () => {
    expect(fn("concat", arr(T.IntegerType, [1, 2, 3]), arr(T.IntegerType, [4, 5]), arr(T.IntegerType, [6]))).toEqual([
      1, 2, 3, 4, 5, 6
    ])
    expect(typeOf("concat", arr(T.IntegerType, [1]), arr(T.LongType, [2]))).toBe("array<bigint>")
  })

  it("concat_ws skips nulls and takes arrays", () => {
    expect(fn("concat_ws", lit(" "), lit("Spark"), lit("SQL"))).toBe("Spark SQL")
    expect(fn("concat_ws", lit("s"))).toBe("")
    expect(fn("concat_ws", lit("/"), lit("foo"), str(null), lit("bar"))).toBe("foo/bar")
    expect(fn("concat_ws", str(null), lit("Spark"), lit("SQL"))).toBe(null)
    expect(fn("concat_ws", lit(","), arr(T.StringType, ["a", null, "b"]), lit("c"))).toBe("a,b,c")
    expect(fn("concat_ws", lit(","), arr(T.IntegerType, [1, 2]))).toBe("1,2")
  })

  it("repeat, reverse, translate", () => {
    expect(fn("repeat", lit("123"), lit(2))).toBe("123123")
    expect(fn("repeat", lit("123"), lit(-1))).toBe("")
    expect(fn("reverse", lit("Spark SQL"))).toBe("LQS krapS")
    expect(fn("reverse", arr(T.IntegerType, [2, 1, 4, 3]))).toEqual([3, 4, 1, 2])
    expect(fn("translate", lit("AaBbCc"), lit("abc"), lit("123"))).toBe("A1B2C3")
    expect(fn("translate", lit("AaBbCc"), lit("abc"), lit("1"))).toBe("A1BC")
  })

  it("ascii, chr, hex, base64", () => {
    expect(fn("ascii", lit("222"))).toBe(50)
    expect(fn("ascii", lit(2))).toBe(50)
    expect(fn("ascii", lit(""))).toBe(0)
    expect(fn("chr", lit(65))).toBe("A")
    expect(fn("char", lit(321))).toBe("A")
    expect(fn("chr", lit(-1))).toBe("")
    expect(fn("hex", lit(17))).toBe("11")
    expect(fn("hex", lit(-1))).toBe("FFFFFFFFFFFFFFFF")
    expect(fn("hex", lit("Spark SQL"))).toBe("537061726B2053514C")
    expect(fn("unhex", lit("537061726B2053514C"))).toEqual(bytes("Spark SQL"))
    expect(fn("unhex", lit("GG"))).toBe(null)
    expect(fn("base64", lit("Spark SQL"))).toBe("U3BhcmsgU1FM")
    expect(fn("unbase64", lit("U3BhcmsgU1FM"))).toEqual(bytes("Spark SQL"))
    expect(fn("levenshtein", lit("kitten"), lit("sitting"))).toBe(3)
  })
})

describe("predicates", () => {
  it("startswith, endswith, contains", () => {
    expect(fn("startswith", lit("Spark SQL"), lit("Spark"))).toBe(true)
    expect(fn("startswith", lit("Spark SQL"), lit("SQL"))).toBe(false)
    expect(fn("startswith", lit("Spark SQL"), str(null))).toBe(null)
    expect(fn("endswith", lit("Spark SQL"), lit("SQL"))).toBe(true)
    expect(fn("contains", lit("Spark SQL"), lit("Spark"))).toBe(true)
    expect(fn("contains", lit("Spark SQL"), lit("SPARK"))).toBe(false)
    expect(fn("startswith", lit(bytes("Spark")), lit(bytes("Sp")))).toBe(true)
  })

  it("like and ilike", () => {
    expect(fn("like", lit("Spark"), lit("_park"))).toBe(true)
    expect(fn("like", lit("Spark"), lit("_PARK"))).toBe(false)
    expect(fn("ilike", lit("Spark"), lit("_Park"))).toBe(true)
    expect(fn("like", lit("%SystemDrive%\\Users\\John"), lit("\\%SystemDrive\\%\\\\Users%"))).toBe(true)
    expect(fn("like", lit("a\nb"), lit("a%b"))).toBe(true)
    expect(fn("like", lit("a.b"), lit("a_b"))).toBe(true)
    expect(fn("like", lit("axb"), lit("a.b"))).toBe(false)
    expect(fn("like", lit("50%"), lit("50/%"), lit("/"))).toBe(true)
    expect(resolveError("like", lit("x"), lit("a\\b"))).toMatch(/escape character/)
  })

  it("rlike finds a match anywhere (Java regex)", () => {
    expect(fn("rlike", lit("%SystemDrive%\\Users\\John"), lit("%SystemDrive%\\\\Users.*"))).toBe(true)
    expect(fn("rlike", lit("abc"), lit("b"))).toBe(true)
    expect(fn("rlike", lit("abc"), lit("^b"))).toBe(false)
    expect(fn("regexp_like", lit("Steven"), lit("(?i)^ste"))).toBe(true)
    expect(resolveError("rlike", lit("x"), lit("(unclosed"))).toMatch(/INVALID_PARAMETER_VALUE.PATTERN/)
  })
})

describe("regular expressions", () => {
  it("split keeps trailing empty strings; limit caps the parts", () => {
    expect(fn("split", lit("oneAtwoBthreeC"), lit("[ABC]"))).toEqual(["one", "two", "three", ""])
    expect(fn("split", lit("oneAtwoBthreeC"), lit("[ABC]"), lit(-1))).toEqual(["one", "two", "three", ""])
    expect(fn("split", lit("oneAtwoBthreeC"), lit("[ABC]"), lit(2))).toEqual(["one", "twoBthreeC"])
    expect(fn("split", lit("a,b,,c"), lit(","), lit(0))).toEqual(["a", "b", "", "c"])
    expect(fn("split", lit("abc"), lit(""))).toEqual(["a", "b", "c"])
    expect(fn("split", lit(""), lit(","))).toEqual([""])
    expect(fn("split", lit("no match"), lit(","))).toEqual(["no match"])
    expect(fn("split", lit("a1b22c"), lit("\\d+"))).toEqual(["a", "b", "c"])
    expect(typeOf("split", lit("a"), lit(","))).toBe("array<string>")
  })

  it("regexp_replace with Java group references", () => {
    expect(fn("regexp_replace", lit("100-200"), lit("(\\d+)"), lit("num"))).toBe("num-num")
    expect(fn("regexp_replace", lit("100-200"), lit("(\\d+)-(\\d+)"), lit("$2-$1"))).toBe("200-100")
    expect(fn("regexp_replace", lit("a.b"), lit("\\."), lit("\\$"))).toBe("a$b")
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Java replacement syntax, not a template
    expect(fn("regexp_replace", lit("John Smith"), lit("(?<first>\\w+) (?<last>\\w+)"), lit("${last}, ${first}"))).toBe(
      "Smith, John"
    )
    expect(fn("regexp_replace", lit("aaa"), lit("a"), lit("b"), lit(2))).toBe("abb")
    expect(fn("regexp_replace", lit("abc"), lit("x*"), lit("-"))).toBe("-a-b-c-")
  })

  it("RegexReplace (RegexpExpressionsSuite): a reference to a missing group leaves s where nothing matches, fails INVALID_REGEXP_REPLACE at a match", () => {
    expect(fn("regexp_replace", lit("abc"), lit("^\\s+"), lit("$1"))).toBe("abc")
    let thrown: unknown
    try {
      fn("regexp_replace", lit("  abc"), lit("^\\s+"), lit("$1"))
    } catch (e) {
      thrown = e
    }
    expect(thrown).toMatchObject({
      _tag: "ConnectorError",
      errorClass: "INVALID_REGEXP_REPLACE",
      sqlState: "22023"
    })
    expect((thrown as Error).message).toBe(
      '[INVALID_REGEXP_REPLACE] Could not perform regexp_replace for source = "  abc", pattern = "^\\s+", replacement = "$1" and position = 1. SQLSTATE: 22023'
    )
  })

  it("regexp_extract and regexp_extract_all", () => {
    expect(fn("regexp_extract", lit("100-200"), lit("(\\d+)-(\\d+)"), lit(1))).toBe("100")
    expect(fn("regexp_extract", lit("100-200"), lit("(\\d+)-(\\d+)"), lit(0))).toBe("100-200")
    expect(fn("regexp_extract", lit("foo"), lit("(\\d+)"), lit(1))).toBe("")
    expect(fn("regexp_extract", lit("ab"), lit("(a)|(b)"), lit(2))).toBe("")
    expect(fn("regexp_extract_all", lit("100-200, 300-400"), lit("(\\d+)-(\\d+)"), lit(1))).toEqual(["100", "300"])
    expect(resolveError("regexp_extract", lit("x"), lit("(a)"), lit(2))).toMatch(/REGEX_GROUP_INDEX/)
  })

  it("Java-only syntax is translated", () => {
    expect(fn("rlike", lit("a+b"), lit("\\Qa+b\\E"))).toBe(true)
    expect(fn("rlike", lit("abc"), lit("\\p{Alpha}+"))).toBe(true)
    expect(fn("rlike", lit("123"), lit("^\\p{Digit}++$"))).toBe(true)
    expect(fn("rlike", lit("ÀB"), lit("^\\p{L}+$"))).toBe(true)
    expect(fn("rlike", lit("abc"), lit("\\Aabc\\z"))).toBe(true)
    expect(fn("rlike", lit("x,y"), lit("[\\p{Punct}]"))).toBe(true)
  })
})

describe("resolution", () => {
  it("arguments are cast as Spark's ImplicitCastInputTypes", () => {
    const e = call("lpad", lit(7), lit("3"), lit(0))
    expect(e._tag === "ScalarFunction" && e.args.map((a) => a._tag)).toEqual(["Cast", "Cast", "Cast"])
    expect(fn("lpad", lit(7), lit("3"), lit(0))).toBe("007")
  })
})
