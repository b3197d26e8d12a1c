/**
 * `df.write` (Spark's `DataFrameWriter` and `InsertIntoHadoopFsRelationCommand`): Spark's output
 * layout, the four save modes, partitioning, options, and the commit protocol — a failed write
 * leaves nothing a reader sees, and `overwrite` replaces the old files only once the new ones are
 * all written.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Schema, type Scope } from "effect"
import { fileBatchWriteFormat } from "../../../connectors/files/FileBatchWriter.ts"
import { JsonWriterFormat } from "../../../connectors/files/FileWriters.ts"
import { ConnectorError } from "../../../core/Errors.ts"
import { lookupBatchWriteFormat, registerBatchWriteFormat } from "../../../core/Formats.ts"
import { MemoryStream, Session } from "../../../mod.ts"

const tempDir = (): Effect.Effect<string, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "tributary-write-"))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

const tree = (dir: string): Array<string> =>
  (fs.readdirSync(dir, { recursive: true }) as Array<string>).map((p) => p.split(path.sep).join("/")).sort()

const files = (dir: string): Array<string> => tree(dir).filter((p) => fs.statSync(path.join(dir, p)).isFile())

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
const part = (ext: string, counter = "000"): RegExp =>
  new RegExp(`^part-00000-${UUID}[.-]c${counter}${ext.replace(/\./g, "\\.")}$`)

const Sale = Schema.Struct({ day: Schema.NullOr(Schema.String), shop: Schema.String, amount: Schema.Int })
const sales = [
  { day: "2024-05-01", shop: "a", amount: 3 },
  { day: "2024-05-01", shop: "b", amount: 5 },
  { day: "2024-05-02", shop: "a", amount: 4 },
  { day: null, shop: "c", amount: 1 }
]

const byShopAmount = (rows: ReadonlyArray<Record<string, unknown>>) =>
  [...rows].sort((a, b) => `${a.shop}${a.amount}`.localeCompare(`${b.shop}${b.amount}`))

describe("DataFrameWriter", () => {
  it.effect("parquet: one part file in Spark's name, _SUCCESS, no _temporary, the same rows read back", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = path.join(yield* tempDir(), "sales")
      yield* spark.createDataFrame(sales, Sale).write.parquet(out)
      const names = files(out)
      assert.strictEqual(names.length, 2)
      assert.include(names, "_SUCCESS")
      assert.match(names.find((n) => n !== "_SUCCESS")!, part(".snappy.parquet"))
      assert.strictEqual(fs.readFileSync(path.join(out, "_SUCCESS"), "utf8"), "")
      assert.isFalse(fs.existsSync(path.join(out, "_temporary")))
      const back = yield* (yield* spark.read.parquet(out)).collect()
      assert.deepStrictEqual(byShopAmount(back), byShopAmount(sales))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("json, csv and text shorthands write Spark's extensions and read back", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const root = yield* tempDir()
      const df = spark.createDataFrame(sales, Sale)
      yield* df.write.json(path.join(root, "j"))
      yield* df.write.option("header", true).csv(path.join(root, "c"))
      yield* df.select("shop").write.text(path.join(root, "t"))
      yield* df.write.format("json").option("compression", "gzip").save(path.join(root, "g"))
      assert.match(files(path.join(root, "j")).find((n) => n !== "_SUCCESS")!, part(".json"))
      assert.match(files(path.join(root, "c")).find((n) => n !== "_SUCCESS")!, part(".csv"))
      assert.match(files(path.join(root, "t")).find((n) => n !== "_SUCCESS")!, part(".txt"))
      assert.match(files(path.join(root, "g")).find((n) => n !== "_SUCCESS")!, part(".json.gz"))
      const json = yield* (yield* spark.read.schema(Sale).json(path.join(root, "j"))).collect()
      assert.deepStrictEqual(byShopAmount(json), byShopAmount(sales))
      const csv = yield* (yield* spark.read.schema(Sale).option("header", true).csv(path.join(root, "c"))).collect()
      assert.deepStrictEqual(byShopAmount(csv), byShopAmount(sales))
      const text = yield* (yield* spark.read.text(path.join(root, "t"))).collect()
      assert.deepStrictEqual(text.map((r) => r.value).sort(), ["a", "a", "b", "c"])
      const gz = yield* (yield* spark.read.schema(Sale).json(path.join(root, "g"))).count()
      assert.strictEqual(gz, 4)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("mode error (the default) refuses an existing path with PATH_ALREADY_EXISTS and touches nothing", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = path.join(yield* tempDir(), "o")
      const df = spark.createDataFrame(sales, Sale)
      yield* df.write.json(out)
      const before = tree(out)
      for (const w of [df.write, df.write.mode("error"), df.write.mode("errorifexists")]) {
        const e = yield* Effect.flip(w.json(out))
        assert.strictEqual(e._tag, "AnalysisError")
        if (e._tag === "AnalysisError") assert.strictEqual(e.errorClass, "PATH_ALREADY_EXISTS")
        assert.strictEqual(
          e.message,
          `[PATH_ALREADY_EXISTS] Path file:${out} already exists. Set mode as "overwrite" to overwrite the existing path.`
        )
      }
      assert.deepStrictEqual(tree(out), before)
      // an empty folder exists too (Spark's `fs.exists`)
      const empty = path.join(path.dirname(out), "empty")
      fs.mkdirSync(empty)
      const e = yield* Effect.flip(df.write.json(empty))
      assert.include(e.message, "PATH_ALREADY_EXISTS")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("append adds files, overwrite replaces them, ignore leaves an existing path alone", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = path.join(yield* tempDir(), "o")
      const df = spark.createDataFrame(sales, Sale)
      const count = Effect.flatMap(spark.read.schema(Sale).json(out), (d) => d.count())
      yield* df.write.mode("append").json(out) // append to a missing path creates it
      yield* df.write.mode("append").json(out)
      assert.strictEqual(yield* count, 8)
      assert.strictEqual(files(out).filter((n) => n.endsWith(".json")).length, 2)
      const old = files(out).filter((n) => n.endsWith(".json"))
      yield* df.limit(1).write.mode("overwrite").json(out)
      assert.strictEqual(yield* count, 1)
      const now = files(out).filter((n) => n.endsWith(".json"))
      assert.strictEqual(now.length, 1)
      assert.notInclude(old, now[0])
      yield* df.write.mode("ignore").json(out)
      assert.strictEqual(yield* count, 1)
      const fresh = path.join(path.dirname(out), "fresh")
      yield* df.write.mode("ignore").json(fresh)
      assert.strictEqual(yield* Effect.flatMap(spark.read.schema(Sale).json(fresh), (d) => d.count()), 4)
      // Spark accepts any letter case and "default"
      yield* df.write.mode("OVERWRITE" as never).json(out)
      assert.strictEqual(yield* count, 4)
      const e = yield* Effect.flip(df.write.mode("default" as never).json(out))
      assert.include(e.message, "PATH_ALREADY_EXISTS")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("an unknown mode fails save with INVALID_SAVE_MODE", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = path.join(yield* tempDir(), "o")
      const e = yield* Effect.flip(spark.createDataFrame(sales, Sale).write.mode("replace" as never).json(out))
      assert.strictEqual(
        e.message,
        `[INVALID_SAVE_MODE] The specified save mode 'replace' is invalid. Valid save modes include "append", "overwrite", "ignore", "error", "errorifexists", and "default".`
      )
      assert.isFalse(fs.existsSync(out))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("partitionBy writes key=value folders (escaped, null as __HIVE_DEFAULT_PARTITION__) that read back", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = path.join(yield* tempDir(), "p")
      const rows = [...sales, { day: "a/b:c", shop: "d", amount: 9 }, { day: "", shop: "e", amount: 2 }]
      yield* spark.createDataFrame(rows, Sale).write.partitionBy("DAY" as never).parquet(out)
      const dirs = tree(out).filter((p) => !p.includes("/") && p !== "_SUCCESS")
      assert.deepStrictEqual(dirs, [
        "day=2024-05-01",
        "day=2024-05-02",
        "day=__HIVE_DEFAULT_PARTITION__",
        "day=a%2Fb%3Ac"
      ])
      assert.strictEqual(files(path.join(out, "day=2024-05-01")).length, 1)
      // one job: every part file carries the job's UUID, as Spark's HadoopMapReduceCommitProtocol names them
      const uuids = new Set(files(out).filter((n) => n.includes("part-")).map((n) => /part-00000-([0-9a-f-]{36})/.exec(n)![1]))
      assert.strictEqual(uuids.size, 1)
      assert.match(files(path.join(out, "day=2024-05-01"))[0], part(".snappy.parquet"))
      const back = yield* (yield* spark.read.parquet(out)).collect()
      // partition columns come last; the null and empty values read back as null
      assert.deepStrictEqual(Object.keys(back[0]), ["shop", "amount", "day"])
      const expected = rows.map((r) => ({ shop: r.shop, amount: r.amount, day: r.day === "" ? null : r.day }))
      assert.deepStrictEqual(byShopAmount(back), byShopAmount(expected))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("partition columns are checked as Spark checks them", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const root = yield* tempDir()
      const df = spark.createDataFrame(sales, Sale)
      const missing = yield* Effect.flip(df.write.partitionBy("month" as never).json(path.join(root, "a")))
      assert.strictEqual(
        missing.message,
        "Partition column `month` not found in schema struct<day:string,shop:string,amount:bigint>."
      )
      const all = yield* Effect.flip(df.write.partitionBy("day", "shop", "amount").json(path.join(root, "b")))
      assert.strictEqual(all.message, "[ALL_PARTITION_COLUMNS_NOT_ALLOWED] Cannot use all columns for partition columns.")
      const nested = spark.createDataFrame(
        [{ k: [1], v: 1 }],
        Schema.Struct({ k: Schema.Array(Schema.Int), v: Schema.Int })
      )
      const typed = yield* Effect.flip(nested.write.partitionBy("k").json(path.join(root, "c")))
      assert.strictEqual(
        typed.message,
        '[INVALID_PARTITION_COLUMN_DATA_TYPE] Cannot use "ARRAY<BIGINT>" for partition column.'
      )
      for (const d of ["a", "b", "c"]) assert.isFalse(fs.existsSync(path.join(root, d)))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("dynamic partition overwrite replaces only the partitions written", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = path.join(yield* tempDir(), "p")
      const df = spark.createDataFrame(sales, Sale)
      yield* df.write.partitionBy("day").json(out)
      const update = spark.createDataFrame([{ day: "2024-05-02", shop: "z", amount: 7 }], Sale)
      yield* update.write.mode("overwrite").option("partitionOverwriteMode", "dynamic").partitionBy("day").json(out)
      // partition discovery infers `day` as a date
      const label = (d: unknown) => (d instanceof Date ? d.toISOString().slice(0, 10) : String(d))
      const read = Effect.map(
        Effect.flatMap(spark.read.json(out), (d) => d.collect()),
        (rows) => rows.map((r) => `${label(r.day)}:${r.shop}`).sort()
      )
      const back = yield* read
      assert.deepStrictEqual(back, ["2024-05-01:a", "2024-05-01:b", "2024-05-02:z", "null:c"])
      // static (the default) replaces everything
      yield* update.write.mode("overwrite").partitionBy("day").json(out)
      assert.deepStrictEqual(yield* read, ["2024-05-02:z"])
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.sources.partitionOverwriteMode": "static" } })))
  )

  it.effect("maxRecordsPerFile splits the output into c000, c001, … files", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = path.join(yield* tempDir(), "m")
      yield* spark.createDataFrame(sales, Sale).write.option("maxRecordsPerFile", 3).json(out)
      const names = files(out).filter((n) => n.endsWith(".json"))
      assert.strictEqual(names.length, 2)
      assert.isTrue(names.some((n) => part(".json", "000").test(n)))
      assert.isTrue(names.some((n) => part(".json", "001").test(n)))
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("an empty DataFrame writes one empty part file and _SUCCESS", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = path.join(yield* tempDir(), "e")
      yield* spark.createDataFrame([], Sale).write.json(out)
      const names = files(out)
      assert.strictEqual(names.length, 2)
      assert.strictEqual(fs.statSync(path.join(out, names.find((n) => n !== "_SUCCESS")!)).size, 0)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a write that fails half-way leaves nothing visible and no _temporary; an old folder stays as it was", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const root = yield* tempDir()
      // a JSON writer that fails on its third file, after two were written
      let filesWritten = 0
      registerBatchWriteFormat(
        fileBatchWriteFormat({
          name: "json-failing-third-file",
          prepare: (schema, options) =>
            Effect.map(JsonWriterFormat.prepare(schema, options), (w) => ({
              extension: w.extension,
              write: (p, rows) =>
                ++filesWritten === 3
                  ? Effect.fail(new ConnectorError({ connector: "test", domain: "external", retryable: true, message: "disk full" }))
                  : w.write(p, rows)
            }))
        })
      )
      const df = spark.createDataFrame(sales, Sale)
      const fresh = path.join(root, "fresh")
      const e = yield* Effect.flip(df.write.format("json-failing-third-file").partitionBy("day").save(fresh))
      assert.strictEqual(e.message, "disk full")
      assert.strictEqual(filesWritten, 3)
      assert.isFalse(fs.existsSync(fresh))

      const old = path.join(root, "old")
      yield* df.write.json(old)
      const before = tree(old)
      filesWritten = 0
      const failed = yield* Effect.exit(
        df.write.format("json-failing-third-file").mode("overwrite").partitionBy("day").save(old)
      )
      assert.isTrue(Exit.isFailure(failed))
      assert.deepStrictEqual(tree(old), before)
      assert.strictEqual(yield* Effect.flatMap(spark.read.schema(Sale).json(old), (d) => d.count()), 4)
      filesWritten = 0
      const appended = yield* Effect.exit(
        df.write.format("json-failing-third-file").mode("append").partitionBy("day").save(old)
      )
      assert.isTrue(Exit.isFailure(appended))
      assert.deepStrictEqual(tree(old), before)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("a query that fails does not replace the old files of an overwrite", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const root = yield* tempDir()
      const old = path.join(root, "old")
      yield* spark.createDataFrame(sales, Sale).write.json(old)
      const before = tree(old)
      // the source folder goes away between load and the write, so the query fails when it runs
      fs.mkdirSync(path.join(root, "source"))
      fs.writeFileSync(path.join(root, "source", "x.json"), "{}\n")
      const broken = yield* spark.read.schema(Sale).json(path.join(root, "source"))
      fs.rmSync(path.join(root, "source"), { recursive: true })
      const r = yield* Effect.exit(broken.write.mode("overwrite").json(old))
      assert.isTrue(Exit.isFailure(r))
      assert.deepStrictEqual(tree(old), before)
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("save(path) with a path option set fails as Spark's (SPARK-32516); save() uses the option", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = path.join(yield* tempDir(), "o")
      const df = spark.createDataFrame(sales, Sale)
      const e = yield* Effect.flip(df.write.option("path", out).json(out))
      assert.include(e.message, "There is a 'path' option set and save() is called with a path parameter.")
      yield* df.write.format("json").option("path", out).save()
      assert.strictEqual(yield* Effect.flatMap(spark.read.schema(Sale).json(out), (d) => d.count()), 4)
      const none = yield* Effect.flip(df.write.format("json").save())
      assert.strictEqual(none.message, "'path' is not specified")
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("the format defaults to spark.sql.sources.default", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = path.join(yield* tempDir(), "o")
      yield* spark.createDataFrame(sales, Sale).write.save(out)
      assert.match(files(out).find((n) => n !== "_SUCCESS")!, part(".json"))
    }).pipe(Effect.provide(Session.layer({ conf: { "spark.sql.sources.default": "json" } })))
  )

  it.effect("a streaming DataFrame cannot be written with write", () =>
    Effect.gen(function* () {
      const input = yield* MemoryStream.make(Schema.Struct({ v: Schema.Int }))
      const out = path.join(yield* tempDir(), "o")
      const e = yield* Effect.flip(input.toDF().write.json(out))
      assert.strictEqual(
        e.message,
        "[CALL_ON_STREAMING_DATASET_UNSUPPORTED] The method `write` can not be called on streaming Dataset/DataFrame."
      )
    }).pipe(Effect.provide(Session.layer()))
  )

  it.effect("an unknown format fails with DATA_SOURCE_NOT_FOUND; orc goes through the registry", () =>
    Effect.gen(function* () {
      const spark = yield* Session
      const out = path.join(yield* tempDir(), "o")
      const df = spark.createDataFrame(sales, Sale)
      const e = yield* Effect.flip(df.write.format("nope").save(out))
      assert.strictEqual(e._tag, "AnalysisError")
      assert.match(e.message, /^\[DATA_SOURCE_NOT_FOUND\] Failed to find the data source: nope\./)
      if (lookupBatchWriteFormat("orc") === undefined) {
        const orc = yield* Effect.flip(df.write.orc(out))
        assert.match(orc.message, /^\[DATA_SOURCE_NOT_FOUND\] Failed to find the data source: orc\./)
        assert.isFalse(fs.existsSync(out))
      } else {
        yield* df.write.orc(out)
        assert.strictEqual(yield* Effect.flatMap(spark.read.format("orc").load(out), (d) => d.count()), 4)
      }
    }).pipe(Effect.provide(Session.layer()))
  )
})
