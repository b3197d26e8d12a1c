/**
 * `df.write` cross-checked with Spark 4.2 (through Spark Connect, on this machine's files):
 * tributary writes each format, partitioned, and Spark reads the same rows; Spark writes (the
 * remote session's `df.write`, Spark Connect's `WriteOperation`) and tributary reads the same
 * rows; both produce the same layout (partition folders, part-file extensions, `_SUCCESS`) and
 * the same answer to each save mode.
 */
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Session } from "../../mod.ts"
import { type Engines, layout, normalize, useEngines } from "./interop.ts"
// the global setup starts the Spark Connect server for files that name remoteAddress
import "./remote.ts"

const engines = useEngines()

const Sale = Schema.Struct({
  id: Schema.Int,
  name: Schema.NullOr(Schema.String),
  amount: Schema.NullOr(Schema.Number),
  ts: Schema.NullOr(Schema.Date),
  flag: Schema.Boolean,
  day: Schema.NullOr(Schema.String)
})
const SCHEMA = "id BIGINT, name STRING, amount DOUBLE, ts TIMESTAMP, flag BOOLEAN, day STRING"
const sales = [
  { id: 1, name: "a", amount: 1.5, ts: new Date("2024-05-01T10:00:00.123Z"), flag: true, day: "2024-05-01" },
  { id: 2, name: "b,\"q\"", amount: -2, ts: new Date("2024-05-01T11:00:00Z"), flag: false, day: "2024-05-01" },
  { id: 3, name: null, amount: null, ts: null, flag: true, day: "2024-05-02" },
  { id: 4, name: "d", amount: 4.25, ts: new Date("2024-05-03T00:00:00Z"), flag: false, day: "a/b:c" },
  { id: 5, name: "e", amount: 0, ts: new Date("2024-05-03T00:00:00Z"), flag: true, day: null }
]

const FORMATS = ["parquet", "json", "csv", "avro"] as const

const readRows = async (which: "local" | "remote", format: string, dir: string) => {
  const { local, remote } = engines()
  const session = which === "local" ? local : remote
  return session.run(
    Effect.gen(function* () {
      const spark = yield* Session
      let reader = spark.read.format(format).schema(SCHEMA)
      if (format === "csv") reader = reader.option("header", true)
      const df = yield* reader.load(dir)
      return (yield* df.collect()) as ReadonlyArray<Record<string, unknown>>
    })
  )
}

const write = async (which: "local" | "remote", format: string, dir: string, partitioned: boolean) => {
  const { local, remote } = engines()
  const session = which === "local" ? local : remote
  await session.run(
    Effect.gen(function* () {
      const spark = yield* Session
      let w = spark.createDataFrame(sales, Sale).write.format(format)
      if (format === "csv") w = w.option("header", true)
      if (partitioned) w = w.partitionBy("day")
      yield* w.save(dir)
    })
  )
}

describe("df.write against Spark", () => {
  for (const format of FORMATS) {
    it(`${format}: tributary writes partitioned, Spark reads the same rows`, async () => {
      const dir = engines().dir(`t-${format}`)
      await write("local", format, dir, true)
      const spark = await readRows("remote", format, dir)
      const ours = await readRows("local", format, dir)
      expect(normalize(spark)).toEqual(normalize(ours))
      expect(normalize(ours)).toEqual(normalize(sales))
    })

    it(`${format}: Spark writes partitioned, tributary reads the same rows, in the same layout`, async () => {
      const sparkDir = engines().dir(`s-${format}`)
      const ourDir = engines().dir(`o-${format}`)
      await write("remote", format, sparkDir, true)
      await write("local", format, ourDir, true)
      const ours = await readRows("local", format, sparkDir)
      expect(normalize(ours)).toEqual(normalize(sales))
      // the same partition folders, part-file extensions and _SUCCESS
      expect(layout(ourDir)).toEqual(layout(sparkDir))
    })
  }

  it("text: both engines write and read each other's lines", async () => {
      const lines = [{ value: "x" }, { value: "" }, { value: "z z" }]
    const TextRow = Schema.Struct({ value: Schema.String })
    const sparkDir = engines().dir("s-text")
    const ourDir = engines().dir("o-text")
    const save = (s: Engines, which: "local" | "remote", dir: string) =>
      (which === "local" ? s.local : s.remote).run(
        Effect.flatMap(Session, (spark) => spark.createDataFrame(lines, TextRow).write.text(dir))
      )
    await save(engines(), "remote", sparkDir)
    await save(engines(), "local", ourDir)
    const readText = (which: "local" | "remote", dir: string) =>
      (which === "local" ? engines().local : engines().remote).run(
        Effect.flatMap(Effect.flatMap(Session, (spark) => spark.read.text(dir)), (df) => df.collect())
      )
    expect(normalize(await readText("local", sparkDir))).toEqual(normalize(lines))
    expect(normalize(await readText("remote", ourDir))).toEqual(normalize(lines))
    expect(layout(ourDir)).toEqual(layout(sparkDir))
  })

  it("the save modes answer as Spark's: error, append, overwrite, ignore", async () => {
      const counts: Record<string, Array<unknown>> = {}
    for (const which of ["local", "remote"] as const) {
      const dir = engines().dir(`modes-${which}`)
      const session = which === "local" ? engines().local : engines().remote
      const out = await session.run(
        Effect.gen(function* () {
          const spark = yield* Session
          const df = spark.createDataFrame(sales, Sale)
          const count = Effect.flatMap(spark.read.schema(SCHEMA).json(dir), (d) => d.count())
          yield* df.write.json(dir)
          const error = yield* Effect.flip(df.write.json(dir))
          const afterError = yield* count
          yield* df.write.mode("append").json(dir)
          const afterAppend = yield* count
          yield* df.limit(2).write.mode("overwrite").json(dir)
          const afterOverwrite = yield* count
          yield* df.write.mode("ignore").json(dir)
          const afterIgnore = yield* count
          return [error.message.match(/\[PATH_ALREADY_EXISTS\] Path file:\S+ already exists\./)?.[0]?.replace(dir, "<dir>"), afterError, afterAppend, afterOverwrite, afterIgnore]
        })
      )
      counts[which] = out
    }
    expect(counts.local).toEqual(counts.remote)
    expect(counts.local).toEqual(["[PATH_ALREADY_EXISTS] Path file:<dir> already exists.", 5, 10, 2, 2])
  })
})
