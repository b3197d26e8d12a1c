/**
 * ORC under Deno: the writer and reader with every codec (zstd through Deno's node:zlib), and
 * `spark.read.orc` through the session.
 */
import assert from "node:assert/strict"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { F, Session } from "../../mod.ts"
import { hasZstd } from "../../connectors/files/orc/Compression.ts"
import { Compression } from "../../connectors/files/orc/OrcProto.ts"
import { readOrc } from "../../connectors/files/orc/OrcReader.ts"
import type { OrcType } from "../../connectors/files/orc/OrcType.ts"
import { writeOrc } from "../../connectors/files/orc/OrcWriter.ts"

const TYPE: OrcType = {
  kind: "struct",
  fields: [
    { name: "id", type: { kind: "bigint" } },
    { name: "name", type: { kind: "string" } },
    { name: "ts", type: { kind: "timestamp" } },
    { name: "tags", type: { kind: "array", element: { kind: "string" } } }
  ]
}
const ROWS = Array.from({ length: 500 }, (_, i) => [
  i,
  i % 4 === 0 ? null : `n${i % 7}`,
  1_700_000_000_000 + i,
  [`t${i}`]
])

Deno.test("Deno's node:zlib has zstd, so ORC's ZSTD codec works", () => {
  assert.equal(hasZstd(), true)
})

Deno.test("ORC files round-trip with every codec", () => {
  for (const c of [Compression.NONE, Compression.ZLIB, Compression.SNAPPY, Compression.LZ4, Compression.ZSTD]) {
    const bytes = writeOrc(TYPE, ROWS, { compression: c, stripeRows: 200 })
    assert.deepEqual(readOrc(bytes).rows, ROWS)
  }
})

Deno.test("spark.read.orc reads a file tributary wrote", async () => {
  const dir = await mkdtemp(join(tmpdir(), "tributary-deno-orc-"))
  try {
    await writeFile(join(dir, "part-0.zstd.orc"), writeOrc(TYPE, ROWS, { compression: Compression.ZSTD }))
    const rows = await Effect.runPromise(
      Effect.gen(function* () {
        const spark = yield* Session
        const df = yield* spark.read.orc(dir)
        return yield* df.where(F.col("id").lt(3)).select("id", "name").orderBy("id").collect()
      }).pipe(Effect.provide(Session.layer()))
    )
    assert.deepEqual(rows, [
      { id: 0, name: null },
      { id: 1, name: "n1" },
      { id: 2, name: "n2" }
    ])
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
})
