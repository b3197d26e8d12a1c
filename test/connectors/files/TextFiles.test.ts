import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ioError } from "../../../connectors/files/FileListing.ts"
import { duckLiteralPath, readFailure } from "../../../connectors/files/ParquetFormat.ts"
import { decodeMarked, invalidIn, LineRanges, splitLines } from "../../../connectors/files/TextFiles.ts"

describe("splitLines (Hadoop's LineRecordReader)", () => {
  it("ends records at \\n, \\r\\n and \\r; a final separator adds no record", () => {
    expect(splitLines("a\nb\r\nc\rd", undefined)).toEqual(["a", "b", "c", "d"])
    expect(splitLines("a\n\nb\n", undefined)).toEqual(["a", "", "b"])
    expect(splitLines("", undefined)).toEqual([])
    expect(splitLines("\n", undefined)).toEqual([""])
  })

  it("splits on an exact lineSep", () => {
    expect(splitLines("a\r\nb\r\n", "\r\n")).toEqual(["a", "b"])
    expect(splitLines("a\nb|c", "|")).toEqual(["a\nb", "c"])
  })
})

describe("errors naming the file", () => {
  it("classifies DuckDB read failures: I/O and permissions are external, bad data is the user's", () => {
    const denied = readFailure(
      "/d/x.parquet",
      new Error('IO Error: Cannot open file "/d/x.parquet": Permission denied')
    )
    expect(denied.domain).toBe("external")
    expect(denied.message).toContain("file:/d/x.parquet")
    const corrupt = readFailure("/d/x.parquet", new Error("Invalid Input Error: too small to be a Parquet file"))
    expect(corrupt.domain).toBe("user")
    expect(corrupt.retryable).toBe(false)
  })

  it("reports listing failures as external, retryable unless it is a permission or a missing file", () => {
    const eacces = ioError("csv", "/d", Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" }))
    expect(eacces.domain).toBe("external")
    expect(eacces.retryable).toBe(false)
    expect(eacces.message).toContain("file:/d")
    expect(ioError("csv", "/d", Object.assign(new Error("EIO"), { code: "EIO" })).retryable).toBe(true)
  })

  it("escapes DuckDB glob characters so a path names exactly one file", () => {
    expect(duckLiteralPath("/a/x[1]*?.json")).toBe("/a/x[[]1][*][?].json")
    expect(duckLiteralPath("/a/plain.json")).toBe("/a/plain.json")
  })
})

describe("LineRanges", () => {
  const ranges = (text: string, lineSep: string | undefined, whole = false): Array<string> => {
    const r = new LineRanges(text, lineSep, whole)
    const out: Array<string> = []
    while (r.next()) out.push(text.slice(r.start, r.end))
    return out
  }

  it("bounds the records splitLines returns", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("a", "bc", "\n", "\r", "\r\n", "||", "|", " ")).map((xs) => xs.join("")),
        fc.constantFrom(undefined, "||", "\n"),
        (text, lineSep) => {
          expect(ranges(text, lineSep)).toEqual(splitLines(text, lineSep))
        }
      ),
      { numRuns: 2000 }
    )
  })

  it("is one record of the whole text with multiLine, none for an empty text", () => {
    expect(ranges("a\nb\n", undefined, true)).toEqual(["a\nb\n"])
    expect(ranges("", undefined, true)).toEqual([])
  })
})

describe("decodeMarked (where invalid UTF-8 was replaced)", () => {
  /** A piece of input: its bytes, and the UTF-16 units it decodes to with which are replacements. */
  type Piece = { readonly bytes: ReadonlyArray<number>; readonly units: number; readonly invalid: ReadonlyArray<number> }
  const valid: fc.Arbitrary<Piece> = fc
    .constantFrom("a", "\n", "é", "€", "\uFFFD", "😀", "\u0000")
    .map((s) => ({ bytes: [...new TextEncoder().encode(s)], units: s.length, invalid: [] }))
  // WHATWG: one U+FFFD per maximal invalid subpart
  const bad: fc.Arbitrary<Piece> = fc.constantFrom<Piece>(
    { bytes: [0x80], units: 1, invalid: [0] },
    { bytes: [0xff], units: 1, invalid: [0] },
    { bytes: [0xc0, 0x80], units: 2, invalid: [0, 1] },
    { bytes: [0xe2, 0x82], units: 1, invalid: [0] },
    { bytes: [0xf0, 0x9f, 0x98], units: 1, invalid: [0] },
    { bytes: [0xed, 0xa0, 0x80], units: 3, invalid: [0, 1, 2] },
    { bytes: [0xf4, 0x90, 0x80, 0x80], units: 4, invalid: [0, 1, 2, 3] }
  )

  it("decodes as TextDecoder does and lists exactly the replacements of invalid sequences", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(valid, bad), { maxLength: 30 }), (pieces) => {
        // an ASCII byte after each piece, so a cut sequence never joins the next piece
        const bytes = new Uint8Array(pieces.flatMap((p) => [...p.bytes, 0x2e]))
        const expected: Array<number> = []
        let at = 0
        for (const p of pieces) {
          for (const i of p.invalid) expected.push(at + i)
          at += p.units + 1
        }
        const { text, invalid } = decodeMarked(bytes)
        expect(text).toBe(new TextDecoder().decode(bytes))
        expect(invalid === undefined ? [] : [...invalid]).toEqual(expected)
        expect(invalid === undefined).toBe(expected.length === 0)
      }),
      { numRuns: 500, seed: 20 }
    )
  })

  it("keeps offsets right after a byte-order mark, and answers range queries", () => {
    const { text, invalid } = decodeMarked(new Uint8Array([0xef, 0xbb, 0xbf, 0x61, 0xff, 0x62]))
    expect(text).toBe("a\uFFFDb")
    expect([...(invalid ?? [])]).toEqual([1])
    expect(invalidIn(invalid, 0, 1)).toBe(false)
    expect(invalidIn(invalid, 0, 2)).toBe(true)
    expect(invalidIn(invalid, 2, 3)).toBe(false)
    expect(invalidIn(undefined, 0, 3)).toBe(false)
  })
})
