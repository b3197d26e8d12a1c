/**
 * Hadoop's checksum files (`core/Checksum.ts`): CRC-32 as `java.util.zip.CRC32`, the `.crc`
 * layout of `ChecksumFileSystem` (`crc\0`, bytes per checksum, one CRC per 512-byte chunk), and
 * the checks: a flipped bit, a cut (also at a chunk boundary, which Hadoop misses), a foreign
 * checksum file.
 */
import * as zlib from "node:zlib"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { checksumFile, checksumFileName, crc32, isChecksumFileName, verifyChecksumFile } from "../../core/Checksum.ts"

const bytes = (s: string) => new TextEncoder().encode(s)

describe("Hadoop checksum files", () => {
  it("CRC-32 of the standard check string, and Hadoop's layout", () => {
    expect(crc32(bytes("123456789"))).toBe(0xcbf43926)
    expect([...checksumFile(new Uint8Array(0))]).toEqual([0x63, 0x72, 0x63, 0, 0, 0, 2, 0])
    const data = new Uint8Array(1025).map((_, i) => i % 251)
    const crc = checksumFile(data)
    expect(crc.length).toBe(8 + 4 * 3)
    const view = new DataView(crc.buffer)
    expect(view.getUint32(8)).toBe(crc32(data, 0, 512))
    expect(view.getUint32(16)).toBe(crc32(data, 1024, 1025))
    expect(checksumFileName("0")).toBe(".0.crc")
    expect(isChecksumFileName(".0.compact.crc")).toBe(true)
    expect(isChecksumFileName("0.compact")).toBe(false)
  })

  it("detects a flipped bit, a truncation at any offset and a foreign checksum file", () => {
    const data = bytes('v1\n{"batchWatermarkMs":0}\n'.repeat(40))
    const crc = checksumFile(data)
    expect(verifyChecksumFile(data, crc)).toBeUndefined()
    for (let i = 0; i < data.length; i += 97) {
      const flipped = data.slice()
      flipped[i] ^= 4
      expect(verifyChecksumFile(flipped, crc)).toMatch(/does not match/)
    }
    for (const at of [0, 1, 511, 512, 513, data.length - 1]) {
      expect(verifyChecksumFile(data.slice(0, at), crc)).toBeDefined()
    }
    expect(verifyChecksumFile(data, bytes("not a checksum file"))).toMatch(/header/)
  })

  it("node:zlib's CRC-32, which the Node checkpoint file system uses, gives the portable one's values", () => {
    const native = (zlib as { crc32?: (b: Uint8Array) => number }).crc32
    expect(typeof native).toBe("function")
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), fc.nat(3000), (data, cut) => {
        const to = Math.min(cut, data.length)
        expect(native!(data.subarray(0, to))).toBe(crc32(data, 0, to))
        const viaNative = checksumFile(data, 512, (b, from, end) => native!(b.subarray(from, end)))
        expect([...viaNative]).toEqual([...checksumFile(data)])
        expect(verifyChecksumFile(data, viaNative)).toBeUndefined()
      })
    )
  })
})
