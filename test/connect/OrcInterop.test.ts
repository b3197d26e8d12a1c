/**
 * ORC against the real Spark 4.2 (the Spark Connect server of test/connect/globalSetup.ts, which
 * shares this machine's file system): Spark writes ORC files with each codec, with every type
 * tributary reads, in two stripes' worth of rows and in the 0.11 format (RLE v1), and tributary
 * reads the same rows; tributary writes ORC files with each codec and Spark reads the same rows,
 * with and without a pushed-down filter.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import "../../mod.ts"
import { rowsToExternal } from "../../core/Row.ts"
import { Compression } from "../../connectors/files/orc/OrcProto.ts"
import type { OrcType } from "../../connectors/files/orc/OrcType.ts"
import { writeOrc } from "../../connectors/files/orc/OrcWriter.ts"
import type { DataFrame } from "../../structured/api/DataFrame.ts"
import { type OpenSession, Session } from "../../structured/api/Session.ts"
import { SESSION_CONF } from "./differential.ts"
import { remoteAddress } from "./remote.ts"

let local: OpenSession
let remote: OpenSession
let root = ""

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "tributary-orc-interop-"))
  ;[local, remote] = await Promise.all([
    Session.open({ conf: SESSION_CONF }),
    Session.open({ remote: remoteAddress(), conf: SESSION_CONF })
  ])
}, 120_000)

afterAll(async () => {
  await Promise.allSettled([local?.close(), remote?.close()])
  fs.rmSync(root, { recursive: true, force: true })
})

/** A DataFrame's rows in a comparable form, sorted by `id`. */
const collect = async (
  s: OpenSession,
  df: Effect.Effect<DataFrame<any>, any, any>
): Promise<ReadonlyArray<unknown>> => {
  const result = await s.run(Effect.flatMap(df, (d) => d.orderBy("id").execute()))
  return rowsToExternal(result.schema, result.rows).map((r) => JSON.stringify(r, plain))
}

const plain = (_: string, v: unknown): unknown =>
  v instanceof Map
    ? { map: [...v] }
    : v instanceof Uint8Array
      ? { bytes: [...v] }
      : typeof v === "bigint"
        ? Number(v)
        : v

/** Spark SQL for rows of every type tributary reads, with nulls, negative and pre-1970 values. */
const SPARK_ROWS = (n: number) => `SELECT id,
  CASE WHEN id % 7 = 0 THEN NULL ELSE id % 3 = 0 END AS b,
  cast(id % 256 - 128 AS tinyint) AS t, cast(id * 7 - 30000 AS smallint) AS sm, cast(id * 100003 AS int) AS i,
  CASE WHEN id % 11 = 0 THEN NULL ELSE id * 1099511627776 - 5 END AS l,
  cast(id / 3 AS float) AS f, id / 7 - 20 AS d,
  CASE WHEN id % 5 = 0 THEN NULL ELSE concat('s', id % 13, CASE WHEN id % 4 = 0 THEN '日本' ELSE '' END) END AS s,
  CASE WHEN id % 6 = 0 THEN NULL ELSE concat('unique-', id) END AS u,
  cast(concat('bin', id) AS binary) AS bin,
  date_add(DATE'1969-12-01', cast(id AS int)) AS dt,
  timestamp_micros(-86400000000 + id * 1234567891) AS ts,
  cast(id * 1.25 - 100 AS decimal(10,2)) AS dec, cast(id * 1000 + 0.125 AS decimal(38,6)) AS bigdec,
  CASE WHEN id % 9 = 0 THEN NULL ELSE named_struct('x', id, 'y', concat('y', id)) END AS st,
  CASE WHEN id % 8 = 0 THEN NULL ELSE array(id, id + 1, NULL) END AS arr,
  map(concat('k', id), CASE WHEN id % 2 = 0 THEN NULL ELSE id END) AS m,
  timestamp_ntz'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id) AS ntz
  FROM range(0, ${n})`

/** Spark's own read of the same rows (its values narrowed by Spark Connect as tributary's types). */
const sparkRead = (dir: string) => remote.read.format("orc").load(dir)

describe("Spark writes, tributary reads", () => {
  for (const codec of ["none", "zlib", "snappy", "zstd", "lz4"]) {
    it(`codec ${codec}: every type, the same rows`, async () => {
      const dir = path.join(root, `spark-${codec}`)
      await remote.run(
        Effect.flatMap(
          remote.sql(
            `INSERT OVERWRITE DIRECTORY '${dir}' USING orc OPTIONS (compression '${codec}') ${SPARK_ROWS(3000)}`
          ),
          (df) => df.collect()
        )
      )
      const ext = codec === "none" ? "" : `.${codec}`
      expect(fs.readdirSync(dir).some((f) => f.endsWith(`${ext}.orc`))).toBe(true)
      const [mine, theirs] = await Promise.all([collect(local, local.read.orc(dir)), collect(remote, sparkRead(dir))])
      expect(mine.length).toBe(3000)
      expect(mine).toEqual(theirs)
      // the schema tributary infers from the footers is Spark's, narrowed to tributary's types
      const schema = await local.run(Effect.map(local.read.orc(dir), (df) => df.schema))
      expect(schema.fields.map((f) => `${f.name}:${f.dataType._tag}`).join(",")).toBe(
        "id:long,b:boolean,t:integer,sm:integer,i:integer,l:long,f:double,d:double,s:string,u:string,bin:binary,dt:date,ts:timestamp,dec:double,bigdec:double,st:struct,arr:array,m:map,ntz:timestamp"
      )
    }, 240_000)
  }

  it("many stripes and row groups (small stripes), and the 0.11 format's RLE v1", async () => {
    for (const [name, extra] of [
      ["stripes", "'orc.stripe.size' '65536', 'orc.row.index.stride' '1000'"],
      ["v011", "'orc.write.format' '0.11'"]
    ] as const) {
      const dir = path.join(root, `spark-${name}`)
      await remote.run(
        Effect.flatMap(
          remote.sql(
            `INSERT OVERWRITE DIRECTORY '${dir}' USING orc OPTIONS (compression 'zlib', ${extra}) ${SPARK_ROWS(25000)}`
          ),
          (df) => df.collect()
        )
      )
      const [mine, theirs] = await Promise.all([collect(local, local.read.orc(dir)), collect(remote, sparkRead(dir))])
      expect(mine.length).toBe(25000)
      expect(mine).toEqual(theirs)
    }
  }, 240_000)

  it("dates and timestamps before 1582 in Spark's hybrid calendar read as Spark reads them", async () => {
    const dir = path.join(root, "spark-ancient")
    await remote.run(
      Effect.flatMap(
        remote.sql(
          `INSERT OVERWRITE DIRECTORY '${dir}' USING orc SELECT 1 AS id, DATE'1000-01-01' AS d, TIMESTAMP'0800-03-01 12:30:00' AS ts, DATE'1582-10-15' AS d2`
        ),
        (df) => df.collect()
      )
    )
    const [mine, theirs] = await Promise.all([collect(local, local.read.orc(dir)), collect(remote, sparkRead(dir))])
    expect(mine).toEqual(theirs)
    // and Spark reads tributary's proleptic Gregorian files right
    const out = path.join(root, "mine-ancient")
    fs.mkdirSync(out, { recursive: true })
    const day = Math.floor(Date.UTC(1000, 0, 1) / 86_400_000)
    fs.writeFileSync(
      path.join(out, "a.orc"),
      writeOrc(
        {
          kind: "struct",
          fields: [
            { name: "id", type: { kind: "int" } },
            { name: "d", type: { kind: "date" } }
          ]
        },
        [[1, day]]
      )
    )
    expect(await collect(remote, sparkRead(out))).toEqual([JSON.stringify({ id: 1, d: "1000-01-01T00:00:00.000Z" })])
  }, 240_000)

  it("the streaming file source reads Spark's ORC files", async () => {
    const dir = path.join(root, "spark-stream")
    await remote.run(
      Effect.flatMap(
        remote.sql(
          `INSERT OVERWRITE DIRECTORY '${dir}' USING orc SELECT id, concat('n', id) AS name FROM range(0, 50)`
        ),
        (df) => df.collect()
      )
    )
    const rows = await local.run(
      Effect.gen(function* () {
        const q = yield* local.readStream
          .schema("id BIGINT, name STRING")
          .orc(dir)
          .writeStream.format("memory")
          .queryName("orc_interop_stream")
          .option("checkpointLocation", path.join(root, "stream-chk"))
          .start()
        yield* q.processAllAvailable()
        yield* q.stop()
        return yield* local.table("orc_interop_stream").orderBy("id").collect()
      })
    )
    expect(rows.length).toBe(50)
    expect(rows[49]).toEqual({ id: 49, name: "n49" })
  }, 240_000)
})

describe("tributary writes, Spark reads", () => {
  const TYPE: OrcType = {
    kind: "struct",
    fields: [
      { name: "id", type: { kind: "bigint" } },
      { name: "b", type: { kind: "boolean" } },
      { name: "t", type: { kind: "tinyint" } },
      { name: "sm", type: { kind: "smallint" } },
      { name: "i", type: { kind: "int" } },
      { name: "l", type: { kind: "bigint" } },
      { name: "f", type: { kind: "float" } },
      { name: "d", type: { kind: "double" } },
      { name: "s", type: { kind: "string" } },
      { name: "u", type: { kind: "string" } },
      { name: "bin", type: { kind: "binary" } },
      { name: "dt", type: { kind: "date" } },
      { name: "ts", type: { kind: "timestamp" } },
      { name: "dec", type: { kind: "decimal", precision: 10, scale: 2 } },
      {
        name: "st",
        type: {
          kind: "struct",
          fields: [
            { name: "x", type: { kind: "bigint" } },
            { name: "y", type: { kind: "string" } }
          ]
        }
      },
      { name: "arr", type: { kind: "array", element: { kind: "bigint" } } },
      { name: "m", type: { kind: "map", key: { kind: "string" }, value: { kind: "bigint" } } }
    ]
  }
  const rows = Array.from({ length: 5000 }, (_, id) => [
    id,
    id % 7 === 0 ? null : id % 3 === 0,
    (id % 256) - 128,
    id * 7 - 30000,
    id * 100003,
    id % 11 === 0 ? null : id * 1099511627776 - 5,
    Math.fround(id / 3),
    id / 7 - 20,
    id % 5 === 0 ? null : `s${id % 13}${id % 4 === 0 ? "日本" : ""}`,
    id % 6 === 0 ? null : `unique-${id}`,
    new TextEncoder().encode(`bin${id}`),
    -31 + id,
    -86_400_000 + id * 1_234_567,
    Math.round(id * 125 - 10000) / 100,
    id % 9 === 0 ? null : [id, `y${id}`],
    id % 8 === 0 ? null : [id, id + 1, null],
    new Map([[`k${id}`, id % 2 === 0 ? null : id]])
  ])

  for (const [codec, kind] of [
    ["none", Compression.NONE],
    ["zlib", Compression.ZLIB],
    ["snappy", Compression.SNAPPY],
    ["zstd", Compression.ZSTD],
    ["lz4", Compression.LZ4]
  ] as const) {
    it(`codec ${codec}: Spark reads the rows tributary wrote (two stripes, RLE v2 and v1)`, async () => {
      for (const format of ["0.12", "0.11"] as const) {
        const dir = path.join(root, `mine-${codec}-${format}`)
        fs.mkdirSync(dir, { recursive: true })
        fs.writeFileSync(
          path.join(dir, `part-0${codec === "none" ? "" : `.${codec}`}.orc`),
          writeOrc(TYPE, rows, { compression: kind, stripeRows: 3000, format })
        )
        const [mine, theirs] = await Promise.all([collect(local, local.read.orc(dir)), collect(remote, sparkRead(dir))])
        expect(theirs.length).toBe(5000)
        expect(theirs).toEqual(mine)
        // a filter Spark pushes into its ORC reader, and Spark's own view of the types
        const filtered = await remote.run(
          Effect.flatMap(
            remote.sql(
              `SELECT count(*) AS n, sum(t) AS t, sum(sm) AS sm, sum(dec) AS dec, max(f) AS f FROM orc.\`${dir}\` WHERE id >= 2500 AND s IS NOT NULL`
            ),
            (df) => df.collect()
          )
        )
        const expected = rows.filter((r) => (r[0] as number) >= 2500 && r[8] !== null)
        expect(filtered[0]).toMatchObject({
          n: expected.length,
          t: expected.reduce((a, r) => a + (r[2] as number), 0),
          sm: expected.reduce((a, r) => a + (r[3] as number), 0)
        })
      }
    }, 240_000)
  }

  it("the file sink's ORC output is read by Spark", async () => {
    const out = path.join(root, "sink")
    await local.run(
      Effect.gen(function* () {
        fs.mkdirSync(path.join(root, "sink-in"), { recursive: true })
        fs.writeFileSync(
          path.join(root, "sink-in", "a.json"),
          Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: i, name: i % 3 === 0 ? null : `n${i}` })).join("\n")
        )
        const df = local.readStream.schema("id BIGINT, name STRING").json(path.join(root, "sink-in"))
        const q = yield* df.writeStream
          .format("orc")
          .option("checkpointLocation", path.join(root, "sink-chk"))
          .start(out)
        yield* q.processAllAvailable()
        yield* q.stop()
      })
    )
    expect(fs.readdirSync(out).some((f) => f.endsWith(".zstd.orc"))).toBe(true)
    const theirs = await collect(remote, sparkRead(out))
    expect(theirs).toEqual(
      Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: i, name: i % 3 === 0 ? null : `n${i}` }))
    )
  }, 240_000)
})
