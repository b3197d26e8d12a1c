import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ioError } from "../../../connectors/files/FileListing.ts"
import { duckLiteralPath, readFailure } from "../../../connectors/files/ParquetFormat.ts"
import { LineRanges, splitLines } from "../../../connectors/files/TextFiles.ts"

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
